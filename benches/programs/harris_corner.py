"""Harris corner response of a float32 image: central-difference gradients, their
products, a 3x3 box filter and the response det(M) - k trace(M)^2, all by slicing."""

import argparse

import numpy as np


def box3(a):
    """3x3 mean filter (valid region only)."""
    total = (
        a[:-2, :-2] + a[:-2, 1:-1] + a[:-2, 2:]
        + a[1:-1, :-2] + a[1:-1, 1:-1] + a[1:-1, 2:]
        + a[2:, :-2] + a[2:, 1:-1] + a[2:, 2:]
    )  # fmt: skip
    return total * np.float32(1.0 / 9.0)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=2400, help="image side in pixels")
    args = parser.parse_args()
    n = args.n

    # a checkerboard of 40-pixel squares with a gentle intensity ramp: many corners
    i = np.arange(n, dtype=np.int64)[:, np.newaxis]
    j = np.arange(n, dtype=np.int64)[np.newaxis, :]
    squares = ((i // 40 + j // 40) % 2).astype(np.float32)
    ramp = ((i + 2 * j) % 256).astype(np.float32) * np.float32(1.0 / 1024.0)
    image = squares + ramp

    ix = (image[1:-1, 2:] - image[1:-1, :-2]) * np.float32(0.5)
    iy = (image[2:, 1:-1] - image[:-2, 1:-1]) * np.float32(0.5)
    sxx, syy, sxy = box3(ix * ix), box3(iy * iy), box3(ix * iy)
    k = np.float32(0.05)
    response = sxx * syy - sxy * sxy - k * (sxx + syy) ** 2

    checksum = np.sum(np.abs(response).astype(np.float64))
    print(f"checksum: {float(checksum)!r}")


if __name__ == "__main__":
    main()
