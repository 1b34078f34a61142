"""pi by the Leibniz series 4 * (1 - 1/3 + 1/5 - ...), summed in chunks of pairs of terms
so the temporaries stay far below 2 GB whatever the number of terms."""

import argparse

import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=100_000_000, help="number of terms")
    parser.add_argument("--chunk", type=int, default=10_000_000, help="terms per chunk")
    args = parser.parse_args()

    pairs = args.n // 2  # term 2k is +1/(4k+1), term 2k+1 is -1/(4k+3)
    step = max(args.chunk // 2, 1)
    total = 0.0
    for start in range(0, pairs, step):
        k = np.arange(start, min(start + step, pairs), dtype=np.float64)
        total = total + np.sum(1.0 / (4.0 * k + 1.0) - 1.0 / (4.0 * k + 3.0))
    print(f"checksum: {float(4.0 * total)!r}")


if __name__ == "__main__":
    main()
