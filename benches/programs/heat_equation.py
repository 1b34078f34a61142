"""Heat equation on a square plate: Jacobi iteration of the 5-point stencil.

The convergence measure (sum of absolute changes) is computed every iteration, as a
solver would, but the iteration count is fixed so every runtime does the same work.
"""

import argparse

import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=2000, help="interior grid side")
    parser.add_argument("--iters", type=int, default=50, help="Jacobi iterations")
    args = parser.parse_args()
    n = args.n

    grid = np.zeros((n + 2, n + 2))
    grid[0, :] = 100.0  # hot top edge
    grid[-1, :] = -40.0  # cold bottom edge
    grid[:, 0] = 20.0
    grid[:, -1] = 60.0

    deltas = 0.0
    for _ in range(args.iters):
        centre = grid[1:-1, 1:-1]
        new = 0.2 * (
            centre + grid[:-2, 1:-1] + grid[2:, 1:-1] + grid[1:-1, :-2] + grid[1:-1, 2:]
        )
        delta = np.sum(np.abs(new - centre))
        grid[1:-1, 1:-1] = new
        deltas = deltas + delta

    checksum = np.sum(grid) + deltas
    print(f"checksum: {float(checksum)!r}")


if __name__ == "__main__":
    main()
