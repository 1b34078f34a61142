"""Black-Scholes prices of European call and put options over a range of expiry times.

An unmodified NumPy program: run it with `python black_scholes.py 1000000 10` under
NumPy or `python -m hassium black_scholes.py 1000000 10` under Hassium. Inputs are
deterministic (no random numbers) so both see the same options; it prints a checksum.
The cumulative normal distribution uses the Abramowitz & Stegun 26.2.17 polynomial.
"""

import sys

import numpy as np


def cnd(x):
    """Cumulative normal distribution, |error| < 7.5e-8."""
    a1, a2, a3, a4, a5 = (
        0.31938153,
        -0.356563782,
        1.781477937,
        -1.821255978,
        1.330274429,
    )
    ax = np.abs(x)
    k = 1.0 / (1.0 + 0.2316419 * ax)
    poly = k * (a1 + k * (a2 + k * (a3 + k * (a4 + k * a5))))
    w = 1.0 - 0.3989422804014327 * np.exp(-0.5 * ax * ax) * poly
    return np.where(x < 0.0, 1.0 - w, w)


def black_scholes(s, x, t, r, v):
    sqrt_t = np.sqrt(t)
    d1 = (np.log(s / x) + (r + 0.5 * v * v) * t) / (v * sqrt_t)
    d2 = d1 - v * sqrt_t
    discount = x * np.exp(-r * t)
    call = s * cnd(d1) - discount * cnd(d2)
    put = discount * cnd(-d2) - s * cnd(-d1)
    return call, put


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 10

    i = np.arange(n, dtype=np.float64)
    spot = 80.0 + 40.0 * (0.5 + 0.5 * np.sin(i * 0.37))  # 80 .. 120
    strike = 90.0 + 20.0 * (0.5 + 0.5 * np.cos(i * 0.11))  # 90 .. 110
    rate, volatility = 0.02, 0.30

    total = 0.0
    for step in range(steps):
        t = 0.25 + 0.25 * step  # years to expiry
        call, put = black_scholes(spot, strike, t, rate, volatility)
        total = total + np.mean(call) + 0.5 * np.mean(put)
    print(f"checksum: {float(total)!r}")


if __name__ == "__main__":
    main()
