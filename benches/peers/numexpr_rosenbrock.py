"""rosenbrock for numexpr: value as one fused sum, gradient interior as one evaluation."""

# numexpr reads the arrays an expression names from the caller's local variables.
# ruff: noqa: F841

import argparse

import numexpr as ne
import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=10_000_000)
    args = parser.parse_args()

    i = np.arange(args.n, dtype=np.float64)
    x = ne.evaluate("1.0 + 0.5 * sin(i * 0.001)")
    lo, hi = x[:-1], x[1:]
    value = float(ne.evaluate("sum(100.0 * (hi - lo**2) ** 2 + (1.0 - lo) ** 2)"))

    grad = np.empty_like(x)
    xm, xm_m1, xm_p1 = x[1:-1], x[:-2], x[2:]
    ne.evaluate(
        "200.0 * (xm - xm_m1**2) - 400.0 * (xm_p1 - xm**2) * xm - 2.0 * (1.0 - xm)",
        out=grad[1:-1],
    )
    grad[0] = -400.0 * x[0] * (x[1] - x[0] ** 2) - 2.0 * (1.0 - x[0])
    grad[-1] = 200.0 * (x[-1] - x[-2] ** 2)
    print(f"checksum: {value + float(ne.evaluate('sum(abs(grad))'))!r}")


if __name__ == "__main__":
    main()
