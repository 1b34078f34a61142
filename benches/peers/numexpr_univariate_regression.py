"""univariate_regression for numexpr: every mean and sum one fused reduction."""

# numexpr reads the arrays an expression names from the caller's local variables.
# ruff: noqa: F841

import argparse

import numexpr as ne
import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=10_000_000)
    args = parser.parse_args()
    n = args.n

    i = np.arange(n, dtype=np.float64)
    x = ne.evaluate("i * (10.0 / n)")
    y = ne.evaluate("3.0 * x + 2.0 + 0.5 * sin(x * 37.0)")

    x_mean = float(ne.evaluate("sum(x)")) / n
    y_mean = float(ne.evaluate("sum(y)")) / n
    cov = float(ne.evaluate("sum((x - x_mean) * (y - y_mean))")) / n
    var = float(ne.evaluate("sum((x - x_mean) ** 2)")) / n
    slope = cov / var
    intercept = y_mean - slope * x_mean
    rss = float(ne.evaluate("sum((y - (slope * x + intercept)) ** 2)"))
    print(f"checksum: {slope + intercept + rss / n!r}")


if __name__ == "__main__":
    main()
