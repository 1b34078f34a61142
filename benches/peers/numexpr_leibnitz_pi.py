"""leibnitz_pi for numexpr: the chunked series, each chunk one fused sum."""

# numexpr reads the arrays an expression names from the caller's local variables.
# ruff: noqa: F841

import argparse

import numexpr as ne
import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=100_000_000)
    parser.add_argument("--chunk", type=int, default=10_000_000)
    args = parser.parse_args()

    pairs = args.n // 2
    step = max(args.chunk // 2, 1)
    total = 0.0
    for start in range(0, pairs, step):
        k = np.arange(start, min(start + step, pairs), dtype=np.float64)
        total += float(
            ne.evaluate("sum(1.0 / (4.0 * k + 1.0) - 1.0 / (4.0 * k + 3.0))")
        )
    print(f"checksum: {float(4.0 * total)!r}")


if __name__ == "__main__":
    main()
