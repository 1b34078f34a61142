"""Particles in a box, written with masked updates: positions advance, and those past a
wall are reflected back with their velocity reversed (``v[out] *= -1``,
``x[out] = 2 * wall - x[out]``), with a little damping on each bounce."""

import argparse

import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=1_000_000, help="particles")
    parser.add_argument("--steps", type=int, default=30, help="time steps")
    args = parser.parse_args()
    n = args.n

    i = np.arange(n, dtype=np.float64)
    x = 0.5 + 0.45 * np.sin(i * 0.7071)
    v = 0.3 * np.cos(i * 0.1234)
    dt, damping = 0.05, 0.9

    for _ in range(args.steps):
        x += dt * v
        high = x > 1.0
        x[high] = 2.0 - x[high]
        v[high] *= -damping
        low = x < 0.0
        x[low] = -x[low]
        v[low] *= -damping

    print(f"checksum: {float(np.sum(x) + np.sum(v * v))!r}")


if __name__ == "__main__":
    main()
