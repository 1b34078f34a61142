"""pi by Monte Carlo: the fraction of uniform random points of the unit square that fall
inside the quarter circle. The only benchmark with random inputs; its checksum is compared
with a statistical tolerance because other runtimes use other generators."""

import argparse

import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=10_000_000, help="points per batch")
    parser.add_argument("--batches", type=int, default=10, help="number of batches")
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    inside = 0
    for _ in range(args.batches):
        x = rng.random(args.n)
        y = rng.random(args.n)
        inside = inside + np.sum(x * x + y * y <= 1.0)
    pi = 4.0 * inside / (args.n * args.batches)
    print(f"checksum: {float(pi)!r}")


if __name__ == "__main__":
    main()
