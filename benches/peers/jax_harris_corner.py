"""harris_corner for JAX: float32 image, slicing gradients and box filter, under jax.jit."""

import argparse
from functools import partial

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp


def box3(a):
    total = (
        a[:-2, :-2] + a[:-2, 1:-1] + a[:-2, 2:]
        + a[1:-1, :-2] + a[1:-1, 1:-1] + a[1:-1, 2:]
        + a[2:, :-2] + a[2:, 1:-1] + a[2:, 2:]
    )  # fmt: skip
    return total * jnp.float32(1.0 / 9.0)


@partial(jax.jit, static_argnums=(0,))
def harris(n):
    i = jnp.arange(n, dtype=jnp.int64)[:, None]
    j = jnp.arange(n, dtype=jnp.int64)[None, :]
    squares = ((i // 40 + j // 40) % 2).astype(jnp.float32)
    ramp = ((i + 2 * j) % 256).astype(jnp.float32) * jnp.float32(1.0 / 1024.0)
    image = squares + ramp
    ix = (image[1:-1, 2:] - image[1:-1, :-2]) * jnp.float32(0.5)
    iy = (image[2:, 1:-1] - image[:-2, 1:-1]) * jnp.float32(0.5)
    sxx, syy, sxy = box3(ix * ix), box3(iy * iy), box3(ix * iy)
    response = sxx * syy - sxy * sxy - jnp.float32(0.05) * (sxx + syy) ** 2
    return jnp.sum(jnp.abs(response).astype(jnp.float64))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=2400)
    args = parser.parse_args()
    print(f"checksum: {float(harris(args.n).block_until_ready())!r}")


if __name__ == "__main__":
    main()
