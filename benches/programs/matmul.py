"""Dense float32 matrix product C = A @ B."""

import argparse

import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=1200, help="matrix side")
    args = parser.parse_args()
    n = args.n

    i = np.arange(n, dtype=np.int64)[:, np.newaxis]
    j = np.arange(n, dtype=np.int64)[np.newaxis, :]
    a = ((i * 3 + j * 5) % 17).astype(np.float32) * np.float32(1.0 / 16.0) - np.float32(
        0.5
    )
    b = ((i * 7 + j * 2) % 13).astype(np.float32) * np.float32(1.0 / 12.0) - np.float32(
        0.25
    )
    c = a @ b

    checksum = np.sum(np.abs(c).astype(np.float64))
    print(f"checksum: {float(checksum)!r}")


if __name__ == "__main__":
    main()
