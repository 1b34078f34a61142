"""Black-Scholes prices of European call and put options over a range of expiry times,
with the cumulative normal's sign choice written as boolean arithmetic (``w * ~neg +
(1 - w) * neg``) instead of ``np.where``: the same computation in another common style.

Inputs are deterministic (no random numbers) so every runtime sees the same options.
The cumulative normal distribution uses the Abramowitz & Stegun 26.2.17 polynomial.
"""

import argparse

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
    # The selection written as boolean arithmetic, as often as with np.where.
    negative = x < 0.0
    return w * ~negative + (1.0 - w) * negative


def black_scholes(s, x, t, r, v):
    sqrt_t = np.sqrt(t)
    d1 = (np.log(s / x) + (r + 0.5 * v * v) * t) / (v * sqrt_t)
    d2 = d1 - v * sqrt_t
    discount = x * np.exp(-r * t)
    call = s * cnd(d1) - discount * cnd(d2)
    put = discount * cnd(-d2) - s * cnd(-d1)
    return call, put


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=1_000_000, help="number of options")
    parser.add_argument("--steps", type=int, default=10, help="expiry times priced")
    args = parser.parse_args()

    i = np.arange(args.n, dtype=np.float64)
    spot = 80.0 + 40.0 * (0.5 + 0.5 * np.sin(i * 0.37))  # 80 .. 120
    strike = 90.0 + 20.0 * (0.5 + 0.5 * np.cos(i * 0.11))  # 90 .. 110
    rate, volatility = 0.02, 0.30

    total = 0.0
    for step in range(args.steps):
        t = 0.25 + 0.25 * step  # years to expiry
        call, put = black_scholes(spot, strike, t, rate, volatility)
        total = total + np.mean(call) + 0.5 * np.mean(put)
    print(f"checksum: {float(total)!r}")


if __name__ == "__main__":
    main()
