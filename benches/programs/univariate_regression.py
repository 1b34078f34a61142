"""Least-squares fit of y = a x + b: means, covariance, variance and residuals."""

import argparse

import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=10_000_000, help="number of samples")
    args = parser.parse_args()

    x = np.arange(args.n, dtype=np.float64) * (10.0 / args.n)
    y = 3.0 * x + 2.0 + 0.5 * np.sin(x * 37.0)  # a line plus deterministic "noise"

    x_mean, y_mean = np.mean(x), np.mean(y)
    dx, dy = x - x_mean, y - y_mean
    slope = np.mean(dx * dy) / np.mean(dx * dx)
    intercept = y_mean - slope * x_mean
    rss = np.sum((y - (slope * x + intercept)) ** 2)

    checksum = slope + intercept + rss / args.n
    print(f"checksum: {float(checksum)!r}")


if __name__ == "__main__":
    main()
