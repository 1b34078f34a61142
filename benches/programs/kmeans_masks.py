"""k-means written the textbook way: distances to every center, the nearest one's
label, then each center moved to the mean of its members, selected with a boolean
mask per cluster (``points[labels == k].mean(axis=0)``); an empty cluster keeps its
center."""

import argparse

import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=500_000, help="points")
    parser.add_argument("--k", type=int, default=8, help="clusters")
    parser.add_argument("--iters", type=int, default=10, help="iterations")
    args = parser.parse_args()
    n, k = args.n, args.k

    t = np.arange(n, dtype=np.float64)
    points = np.stack(
        [np.sin(t * 0.37) * 3 + np.cos(t * 0.011), np.cos(t * 0.53) * 2], 1
    )
    centers = points[:: n // k][:k].copy()

    for _ in range(args.iters):
        d = ((points[:, None, :] - centers[None, :, :]) ** 2).sum(axis=2)
        labels = d.argmin(axis=1)
        for c in range(k):
            members = points[labels == c]
            if len(members):
                centers[c] = members.mean(axis=0)

    inertia = float(((points - centers[labels]) ** 2).sum()) / n
    print(f"checksum: {inertia + float(centers.sum())!r}")


if __name__ == "__main__":
    main()
