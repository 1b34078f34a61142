"""Heat equation on a square plate: Jacobi iteration of the 5-point stencil.

An unmodified NumPy program: run it with `python heat_equation.py 500 50` under NumPy or
`python -m hassium heat_equation.py 500 50` under Hassium. It prints a checksum (the sum
of the final grid plus the sum of every iteration's change) that both must agree on.
"""

import sys

import numpy as np


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    iters = int(sys.argv[2]) if len(sys.argv) > 2 else 50

    grid = np.zeros((n + 2, n + 2))
    grid[0, :] = 100.0  # hot top edge
    grid[-1, :] = -40.0  # cold bottom edge
    grid[:, 0] = 20.0
    grid[:, -1] = 60.0

    deltas = 0.0
    for _ in range(iters):
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
