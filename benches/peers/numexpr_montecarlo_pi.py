"""montecarlo_pi for numexpr: NumPy's generator (same seed), the test and count fused."""

# numexpr reads the arrays an expression names from the caller's local variables.
# ruff: noqa: F841

import argparse

import numexpr as ne
import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--batches", type=int, default=10)
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    inside = 0
    for _ in range(args.batches):
        x = rng.random(args.n)
        y = rng.random(args.n)
        inside += int(ne.evaluate("sum(where(x * x + y * y <= 1.0, 1, 0))"))
    print(f"checksum: {float(4.0 * inside / (args.n * args.batches))!r}")


if __name__ == "__main__":
    main()
