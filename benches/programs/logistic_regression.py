"""Logistic regression by batch gradient descent, written the usual way: the scores
``X @ w``, the sigmoid, the gradient ``X.T @ (p - y) / n``, and the loss recorded every
ten iterations. ``X.T @`` reduces along the columns of the row-major data matrix."""

import argparse

import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=200_000, help="samples")
    parser.add_argument("--d", type=int, default=20, help="features")
    parser.add_argument("--iters", type=int, default=30, help="gradient steps")
    args = parser.parse_args()
    n, d = args.n, args.d

    # Deterministic features and labels from a known weight vector plus a wobble.
    i = np.arange(n * d, dtype=np.float64).reshape(n, d)
    X = np.sin(i * 0.37) + 0.1 * np.cos(i * 0.011)
    w_true = np.linspace(-1.0, 1.0, d)
    y = (X @ w_true + 0.3 * np.sin(np.arange(n)) > 0).astype(np.float64)

    w = np.zeros(d)
    lr = 0.5
    losses = []
    for it in range(args.iters):
        p = 1.0 / (1.0 + np.exp(-(X @ w)))
        grad = X.T @ (p - y) / n
        w -= lr * grad
        if it % 10 == 0:
            loss = -np.mean(y * np.log(p + 1e-12) + (1 - y) * np.log(1 - p + 1e-12))
            losses.append(float(loss))
    print(f"checksum: {float(np.sum(losses) + np.sum(w * w))!r}")


if __name__ == "__main__":
    main()
