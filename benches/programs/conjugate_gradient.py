"""Conjugate gradient on the 2-D Poisson equation, matrix-free, written the usual way:
the 5-point Laplacian is four times the grid minus its neighbours, each subtracted in
place through a shifted slice (``out[1:, :] -= u[:-1, :]``), and every iteration takes
two dot products, a step along the search direction and a convergence test."""

import argparse

import numpy as np


def laplacian(u):
    """-Δu on a grid with zero Dirichlet boundary (h = 1)."""
    out = 4.0 * u
    out[1:, :] -= u[:-1, :]
    out[:-1, :] -= u[1:, :]
    out[:, 1:] -= u[:, :-1]
    out[:, :-1] -= u[:, 1:]
    return out


def conjugate_gradient(b, tol, maxiter):
    x = np.zeros_like(b)
    r = b - laplacian(x)
    p = r.copy()
    rs = np.sum(r * r)
    for _ in range(maxiter):
        ap = laplacian(p)
        alpha = rs / np.sum(p * ap)
        x += alpha * p
        r -= alpha * ap
        rs_new = np.sum(r * r)
        if np.sqrt(rs_new) < tol:
            break
        p = r + (rs_new / rs) * p
        rs = rs_new
    return x


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=1000, help="grid side")
    parser.add_argument("--iters", type=int, default=100, help="iterations at most")
    args = parser.parse_args()
    n = args.n
    i = np.arange(n, dtype=np.float64)[:, np.newaxis]
    j = np.arange(n, dtype=np.float64)[np.newaxis, :]
    b = np.sin(np.pi * (i + 1) / (n + 1)) * np.sin(2 * np.pi * (j + 1) / (n + 1))
    b += 0.1 * np.cos(0.37 * i * j / n)
    x = conjugate_gradient(b, tol=1e-10, maxiter=args.iters)
    residual = b - laplacian(x)
    print(f"checksum: {float(np.sum(x) + np.sum(residual * residual))!r}")


if __name__ == "__main__":
    main()
