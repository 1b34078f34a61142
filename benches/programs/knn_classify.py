"""k-nearest-neighbour classification, written the usual way: squared distances from
every query to every training point by broadcasting, the k nearest found with
``np.argpartition``, their labels gathered, and a vote counted by comparing with each
class. Then the median and a percentile of the k-th neighbour's distance, through a sort
of its own."""

import argparse

import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--train", type=int, default=20_000, help="training points")
    parser.add_argument("--queries", type=int, default=400, help="points to classify")
    parser.add_argument("--k", type=int, default=15, help="neighbours that vote")
    args = parser.parse_args()
    classes, dim = 5, 6

    # Training points scattered deterministically around one centre per class.
    t = np.arange(args.train, dtype=np.float64)
    label = (np.arange(args.train) * 7919) % classes
    axis = np.arange(dim, dtype=np.float64)
    centres = np.cos(np.arange(classes)[:, np.newaxis] * 1.7 + axis * 0.9) * 3.0
    train = centres[label] + np.sin(t[:, np.newaxis] * (1.1 + axis * 0.37)) * 2.0
    q = np.arange(args.queries, dtype=np.float64)
    truth = (np.arange(args.queries) * 31) % classes
    queries = centres[truth] + np.cos(q[:, np.newaxis] * (0.7 + axis * 0.29)) * 2.0

    d2 = np.sum((queries[:, np.newaxis, :] - train[np.newaxis, :, :]) ** 2, axis=2)
    nearest = np.argpartition(d2, args.k, axis=1)[:, : args.k]
    votes = label[nearest]
    counts = np.stack([np.sum(votes == c, axis=1) for c in range(classes)], axis=1)
    predicted = np.argmax(counts, axis=1)
    accuracy = np.mean(predicted == truth)

    kth = np.sort(d2, axis=1)[:, args.k - 1]
    spread = np.percentile(kth, 90) - np.median(kth)
    print(f"checksum: {float(accuracy + spread)!r}")


if __name__ == "__main__":
    main()
