"""Conway's Game of Life on a periodic int8 board, the neighbour count summed from
np.roll of the board in the eight directions."""

import argparse

import numpy as np


def life_step(board):
    neighbours = sum(
        np.roll(np.roll(board, dy, axis=0), dx, axis=1)
        for dy in (-1, 0, 1)
        for dx in (-1, 0, 1)
        if (dy, dx) != (0, 0)
    )
    return ((neighbours == 3) | (board & (neighbours == 2))).astype(np.int8)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=2000, help="board side")
    parser.add_argument("--steps", type=int, default=20, help="generations")
    args = parser.parse_args()
    n = args.n

    # a deterministic pseudo-random start with about 30% live cells
    i = np.arange(n, dtype=np.int64)[:, np.newaxis]
    j = np.arange(n, dtype=np.int64)[np.newaxis, :]
    board = ((((i * 7919 + j * 104729) * 2654435761) >> 13) % 10 < 3).astype(np.int8)

    for _ in range(args.steps):
        board = life_step(board)

    print(f"checksum: {float(np.sum(board))!r}")


if __name__ == "__main__":
    main()
