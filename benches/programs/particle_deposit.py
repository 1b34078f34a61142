"""A particle-in-cell step on a 1-D periodic grid: particles deposit their charge on the
two nearest cells with ``np.add.at`` (cloud-in-cell weights), the field is the gradient
of the smoothed density, and particles are pushed by the field they gather back."""

import argparse

import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=1_000_000, help="particles")
    parser.add_argument("--cells", type=int, default=4096, help="grid cells")
    parser.add_argument("--steps", type=int, default=10, help="time steps")
    args = parser.parse_args()
    n, cells = args.n, args.cells

    i = np.arange(n, dtype=np.float64)
    x = cells * (0.5 + 0.5 * np.sin(i * 0.7071)) % cells  # positions in [0, cells)
    v = 0.1 * np.cos(i * 0.3)
    dt = 0.1

    for _ in range(args.steps):
        left = np.floor(x).astype(np.int64)
        frac = x - left
        right = (left + 1) % cells
        rho = np.zeros(cells)
        np.add.at(rho, left, 1.0 - frac)
        np.add.at(rho, right, frac)
        rho = rho / (n / cells) - 1.0
        smooth = 0.25 * np.roll(rho, 1) + 0.5 * rho + 0.25 * np.roll(rho, -1)
        field = 0.5 * (np.roll(smooth, -1) - np.roll(smooth, 1))
        e = (1.0 - frac) * field[left] + frac * field[right]
        v = v + dt * e
        x = (x + dt * v) % cells

    print(f"checksum: {float(np.sum(v * v) + np.mean(x))!r}")


if __name__ == "__main__":
    main()
