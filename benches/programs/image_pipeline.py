"""An edge-detection pipeline on a grey image: normalise, pad, Sobel gradients by shifted
slices, gradient magnitude, threshold into a mask, and summary statistics of the edges:
each step a separate array, as a script would write it."""

import argparse

import numpy as np


def sobel(img):
    p = np.pad(img, 1, mode="reflect")
    gx = (p[:-2, 2:] + 2.0 * p[1:-1, 2:] + p[2:, 2:]) - (
        p[:-2, :-2] + 2.0 * p[1:-1, :-2] + p[2:, :-2]
    )
    gy = (p[2:, :-2] + 2.0 * p[2:, 1:-1] + p[2:, 2:]) - (
        p[:-2, :-2] + 2.0 * p[:-2, 1:-1] + p[:-2, 2:]
    )
    return gx, gy


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=2000, help="image side")
    parser.add_argument("--frames", type=int, default=5, help="frames processed")
    args = parser.parse_args()
    n = args.n

    y = np.arange(n, dtype=np.float64)[:, np.newaxis]
    x = np.arange(n, dtype=np.float64)[np.newaxis, :]
    total = 0.0
    for frame in range(args.frames):
        raw = 128.0 + 100.0 * np.sin((x + 3.0 * frame) * 0.02) * np.cos(y * 0.015)
        raw = raw + 20.0 * ((x + y) % 64 < 32)  # stripes: sharp edges
        img = (raw - raw.min()) / (raw.max() - raw.min())
        gx, gy = sobel(img)
        magnitude = np.sqrt(gx**2 + gy**2)
        edges = magnitude > 0.5 * magnitude.max()
        count = np.count_nonzero(edges)
        mean_edge = np.sum(magnitude * edges) / max(int(count), 1)
        total += float(count) + float(mean_edge)
    print(f"checksum: {total!r}")


if __name__ == "__main__":
    main()
