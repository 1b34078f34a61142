"""black_scholes for numexpr: each formula one ne.evaluate call (multithreaded, blocked)."""

# numexpr reads the arrays an expression names from the caller's local variables.
# ruff: noqa: F841

import argparse

import numexpr as ne
import numpy as np


def cnd(x):
    """Cumulative normal distribution (Abramowitz & Stegun 26.2.17) in two evaluations."""
    k = ne.evaluate("1.0 / (1.0 + 0.2316419 * abs(x))")
    w = ne.evaluate(
        "1.0 - 0.3989422804014327 * exp(-0.5 * x * x) * k * (0.31938153 + k * (-0.356563782"
        " + k * (1.781477937 + k * (-1.821255978 + k * 1.330274429))))"
    )
    return ne.evaluate("where(x < 0.0, 1.0 - w, w)")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()

    i = np.arange(args.n, dtype=np.float64)
    s = ne.evaluate("80.0 + 40.0 * (0.5 + 0.5 * sin(i * 0.37))")
    x = ne.evaluate("90.0 + 20.0 * (0.5 + 0.5 * cos(i * 0.11))")
    r, v = 0.02, 0.30

    total = 0.0
    for step in range(args.steps):
        t = 0.25 + 0.25 * step
        sqrt_t = t**0.5
        d1 = ne.evaluate("(log(s / x) + (r + 0.5 * v * v) * t) / (v * sqrt_t)")
        d2 = ne.evaluate("d1 - v * sqrt_t")
        nd1, nd2, nmd1, nmd2 = cnd(d1), cnd(d2), cnd(-d1), cnd(-d2)
        call = ne.evaluate("sum(s * nd1 - x * exp(-r * t) * nd2)") / args.n
        put = ne.evaluate("sum(x * exp(-r * t) * nmd2 - s * nmd1)") / args.n
        total = total + call + 0.5 * put
    print(f"checksum: {float(total)!r}")


if __name__ == "__main__":
    main()
