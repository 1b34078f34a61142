"""leibnitz_pi for JAX: one jitted reduction; XLA fuses the range into the sum, so no
chunking is needed to bound memory."""

import argparse
from functools import partial

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp


@partial(jax.jit, static_argnums=(0,))
def leibnitz(pairs):
    k = jnp.arange(pairs, dtype=jnp.float64)
    return 4.0 * jnp.sum(1.0 / (4.0 * k + 1.0) - 1.0 / (4.0 * k + 3.0))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=100_000_000)
    parser.add_argument(
        "--chunk", type=int, default=10_000_000, help="ignored (no chunks)"
    )
    args = parser.parse_args()
    print(f"checksum: {float(leibnitz(args.n // 2).block_until_ready())!r}")


if __name__ == "__main__":
    main()
