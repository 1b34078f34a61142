"""matmul for JAX: float32 product under jax.jit at full ("highest") precision."""

import argparse
from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnums=(0,))
def product_checksum(n):
    i = jnp.arange(n, dtype=jnp.int32)[:, None]
    j = jnp.arange(n, dtype=jnp.int32)[None, :]
    a = ((i * 3 + j * 5) % 17).astype(jnp.float32) * jnp.float32(
        1.0 / 16.0
    ) - jnp.float32(0.5)
    b = ((i * 7 + j * 2) % 13).astype(jnp.float32) * jnp.float32(
        1.0 / 12.0
    ) - jnp.float32(0.25)
    c = jnp.matmul(a, b, precision=jax.lax.Precision.HIGHEST)
    return jnp.sum(jnp.abs(c))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=1200)
    args = parser.parse_args()
    print(f"checksum: {float(product_checksum(args.n).block_until_ready())!r}")


if __name__ == "__main__":
    main()
