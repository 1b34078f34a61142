"""heat_equation for JAX: the Jacobi loop as lax.fori_loop under jax.jit, in float64."""

import argparse
from functools import partial

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp


@partial(jax.jit, static_argnums=(0, 1))
def solve(n, iters):
    grid = jnp.zeros((n + 2, n + 2))
    grid = grid.at[0, :].set(100.0).at[-1, :].set(-40.0)
    grid = grid.at[:, 0].set(20.0).at[:, -1].set(60.0)

    def body(_, carry):
        grid, deltas = carry
        centre = grid[1:-1, 1:-1]
        new = 0.2 * (
            centre + grid[:-2, 1:-1] + grid[2:, 1:-1] + grid[1:-1, :-2] + grid[1:-1, 2:]
        )
        deltas = deltas + jnp.sum(jnp.abs(new - centre))
        return grid.at[1:-1, 1:-1].set(new), deltas

    grid, deltas = jax.lax.fori_loop(0, iters, body, (grid, jnp.float64(0.0)))
    return jnp.sum(grid) + deltas


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--iters", type=int, default=50)
    args = parser.parse_args()
    print(f"checksum: {float(solve(args.n, args.iters).block_until_ready())!r}")


if __name__ == "__main__":
    main()
