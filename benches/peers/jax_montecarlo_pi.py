"""montecarlo_pi for JAX: jax.random (threefry), so the estimate differs from NumPy's by
sampling noise only."""

import argparse
from functools import partial

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp


@partial(jax.jit, static_argnums=(0, 1))
def estimate(n, batches, seed):
    key = jax.random.PRNGKey(seed)

    def body(b, inside):
        kx, ky = jax.random.split(jax.random.fold_in(key, b))
        x = jax.random.uniform(kx, (n,), dtype=jnp.float64)
        y = jax.random.uniform(ky, (n,), dtype=jnp.float64)
        return inside + jnp.sum(x * x + y * y <= 1.0)

    inside = jax.lax.fori_loop(0, batches, body, jnp.int64(0))
    return 4.0 * inside / (n * batches)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--batches", type=int, default=10)
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()
    pi = estimate(args.n, args.batches, args.seed).block_until_ready()
    print(f"checksum: {float(pi)!r}")


if __name__ == "__main__":
    main()
