"""A 1-D smoothing filter written with shifted slices: the output is the sum, over the
taps, of each weight times the signal shifted by its offset (what ``np.convolve`` in
'valid' mode computes), applied repeatedly to a long signal."""

import argparse

import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=4_000_000, help="signal length")
    parser.add_argument("--taps", type=int, default=9, help="filter length")
    parser.add_argument("--passes", type=int, default=8, help="passes")
    args = parser.parse_args()
    n, taps = args.n, args.taps

    t = np.arange(n, dtype=np.float64)
    signal = np.sin(t * 0.001) + 0.3 * np.sin(t * 0.37)
    offsets = np.arange(taps) - taps // 2
    weights = np.exp(-0.5 * (offsets / (taps / 4)) ** 2)
    weights /= weights.sum()

    for _ in range(args.passes):
        out = np.zeros(n - taps + 1)
        for j in range(taps):
            out += weights[j] * signal[j : n - taps + 1 + j]
        signal = np.concatenate([signal[: taps // 2], out, signal[n - taps // 2 :]])

    print(f"checksum: {float(np.sum(signal * signal)) / n!r}")


if __name__ == "__main__":
    main()
