"""LU decomposition without pivoting of a diagonally dominant matrix, written the way a
textbook does it: one column at a time, with shrinking slices (``a[k+1:, k+1:] -= ...``).
Every step works on a smaller block, so no two steps have the same shapes."""

import argparse

import numpy as np


def lu_inplace(a):
    """Overwrites ``a`` with L (below the diagonal, unit diagonal implied) and U."""
    n = a.shape[0]
    for k in range(n - 1):
        a[k + 1 :, k] /= a[k, k]
        a[k + 1 :, k + 1 :] -= a[k + 1 :, k][:, np.newaxis] * a[k, k + 1 :]
    return a


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=600, help="matrix side")
    args = parser.parse_args()
    n = args.n

    i = np.arange(n, dtype=np.float64)[:, np.newaxis]
    j = np.arange(n, dtype=np.float64)[np.newaxis, :]
    a = np.sin(0.3 * i + 0.7 * j) + np.cos(0.11 * i * j / n)
    a = a + 2.0 * n * np.eye(n)  # diagonally dominant: no pivoting needed

    lu = lu_inplace(a.copy())
    # The checksum: the log-determinant (the sum of log |U_kk|) and a residual-free
    # summary of the factors.
    logdet = np.sum(np.log(np.abs(np.diagonal(lu))))
    print(f"checksum: {float(logdet + np.mean(lu))!r}")


if __name__ == "__main__":
    main()
