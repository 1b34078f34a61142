"""heat_equation for numexpr: the stencil and the convergence sum as two evaluations on
slices of the grid."""

# numexpr reads the arrays an expression names from the caller's local variables.
# ruff: noqa: F841

import argparse

import numexpr as ne
import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--iters", type=int, default=50)
    args = parser.parse_args()
    n = args.n

    grid = np.zeros((n + 2, n + 2))
    grid[0, :] = 100.0
    grid[-1, :] = -40.0
    grid[:, 0] = 20.0
    grid[:, -1] = 60.0

    deltas = 0.0
    for _ in range(args.iters):
        c, up, down = grid[1:-1, 1:-1], grid[:-2, 1:-1], grid[2:, 1:-1]
        left, right = grid[1:-1, :-2], grid[1:-1, 2:]
        new = ne.evaluate("0.2 * (c + up + down + left + right)")
        deltas += float(ne.evaluate("sum(abs(new - c))"))
        grid[1:-1, 1:-1] = new

    print(f"checksum: {float(np.sum(grid) + deltas)!r}")


if __name__ == "__main__":
    main()
