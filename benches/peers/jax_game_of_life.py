"""game_of_life for JAX: int8 board, shifted-slice neighbour count, lax.fori_loop."""

import argparse
from functools import partial

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp


def generation(_, b):
    neighbours = (
        b[:-2, :-2] + b[:-2, 1:-1] + b[:-2, 2:]
        + b[1:-1, :-2] + b[1:-1, 2:]
        + b[2:, :-2] + b[2:, 1:-1] + b[2:, 2:]
    )  # fmt: skip
    alive = b[1:-1, 1:-1] == 1
    new = (neighbours == 3) | (alive & (neighbours == 2))
    return b.at[1:-1, 1:-1].set(new.astype(jnp.int8))


@partial(jax.jit, static_argnums=(0, 1))
def simulate(n, steps):
    i = jnp.arange(n + 2, dtype=jnp.int64)[:, None]
    j = jnp.arange(n + 2, dtype=jnp.int64)[None, :]
    board = ((((i * 7919 + j * 104729) * 2654435761) >> 13) % 10 < 3).astype(jnp.int8)
    board = board.at[0, :].set(0).at[-1, :].set(0).at[:, 0].set(0).at[:, -1].set(0)
    board = jax.lax.fori_loop(0, steps, generation, board)
    return jnp.sum(board, dtype=jnp.int64)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()
    print(f"checksum: {float(simulate(args.n, args.steps).block_until_ready())!r}")


if __name__ == "__main__":
    main()
