"""A 5×5 Gaussian blur of an image, repeated, written as a weighted sum of shifted slices
of an edge-padded copy (``np.pad`` each pass), as image-processing code often is."""

import argparse

import numpy as np

# The separable binomial kernel (1 4 6 4 1) / 16, as its 5×5 outer product.
_W = np.array([1.0, 4.0, 6.0, 4.0, 1.0]) / 16.0
WEIGHTS = [[float(_W[a] * _W[b]) for b in range(5)] for a in range(5)]


def blur(img):
    n, m = img.shape
    p = np.pad(img, 2, mode="edge")
    out = np.zeros_like(img)
    for a in range(5):
        for b in range(5):
            out += WEIGHTS[a][b] * p[a : a + n, b : b + m]
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=1000, help="image side")
    parser.add_argument("--passes", type=int, default=10, help="blur passes")
    args = parser.parse_args()
    n = args.n

    y = np.arange(n, dtype=np.float64)[:, np.newaxis]
    x = np.arange(n, dtype=np.float64)[np.newaxis, :]
    img = 0.5 + 0.5 * np.sin(x * 0.05) * np.cos(y * 0.03) + 0.1 * np.sin(x * y * 0.001)

    for _ in range(args.passes):
        img = blur(img)
    print(f"checksum: {float(np.sum(img) + img[n // 3, n // 2])!r}")


if __name__ == "__main__":
    main()
