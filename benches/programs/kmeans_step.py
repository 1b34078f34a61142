"""Lloyd's k-means iterations on 2-D points: distances to every centroid by broadcasting,
argmin assignment, centroid update with boolean masks."""

import argparse

import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=500_000, help="number of points")
    parser.add_argument("--k", type=int, default=8, help="number of clusters")
    parser.add_argument("--steps", type=int, default=10, help="Lloyd iterations")
    args = parser.parse_args()
    n, k = args.n, args.k

    # k blobs on a circle, points spread around them deterministically
    t = np.arange(n, dtype=np.float64)
    blob = (t % k) * (2.0 * np.pi / k)
    points = np.stack(
        [
            5.0 * np.cos(blob) + 1.5 * np.sin(t * 1.3),
            5.0 * np.sin(blob) + 1.5 * np.cos(t * 2.1),
        ],
        axis=1,
    )
    centroids = points[:k] * 0.5 + 0.1  # start near, not on, the true centres

    for _ in range(args.steps):
        diff = points[:, np.newaxis, :] - centroids[np.newaxis, :, :]  # (n, k, 2)
        dist2 = np.sum(diff * diff, axis=2)
        labels = np.argmin(dist2, axis=1)
        new = []
        for c in range(k):
            mask = labels == c
            count = np.maximum(np.sum(mask), 1)
            new.append(np.sum(points * mask[:, np.newaxis], axis=0) / count)
        centroids = np.stack(new)

    inertia = np.sum(np.min(dist2, axis=1))
    checksum = np.sum(np.abs(centroids)) + inertia / n
    print(f"checksum: {float(checksum)!r}")


if __name__ == "__main__":
    main()
