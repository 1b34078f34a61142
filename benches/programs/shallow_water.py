"""Shallow water equations on a square basin: a drop of water falls into a still pool.

Two-step Lax-Wendroff scheme on a staggered grid with reflecting walls, written with
slices (after Cleve Moler's "waterwave").
"""

import argparse

import numpy as np

G, DT, DX, DY = 9.8, 0.02, 1.0, 1.0


def flux_x(h, u, v):
    """Fluxes of height, x momentum and y momentum in x."""
    return u, u * u / h + 0.5 * G * h * h, u * v / h


def flux_y(h, u, v):
    """Fluxes of height, x momentum and y momentum in y."""
    return v, u * v / h, v * v / h + 0.5 * G * h * h


def step(h, u, v):
    # reflecting boundary conditions
    h[:, 0], u[:, 0], v[:, 0] = h[:, 1], u[:, 1], -v[:, 1]
    h[:, -1], u[:, -1], v[:, -1] = h[:, -2], u[:, -2], -v[:, -2]
    h[0, :], u[0, :], v[0, :] = h[1, :], -u[1, :], v[1, :]
    h[-1, :], u[-1, :], v[-1, :] = h[-2, :], -u[-2, :], v[-2, :]

    # first half step, on the cell faces in x and in y
    lo, hi = (slice(None, -1), slice(1, -1)), (slice(1, None), slice(1, -1))
    fl, fh = flux_x(h[lo], u[lo], v[lo]), flux_x(h[hi], u[hi], v[hi])
    hx, ux, vx = (
        0.5 * (q[hi] + q[lo]) - DT / (2 * DX) * (b - a)
        for q, a, b in zip((h, u, v), fl, fh)
    )
    lo, hi = (slice(1, -1), slice(None, -1)), (slice(1, -1), slice(1, None))
    fl, fh = flux_y(h[lo], u[lo], v[lo]), flux_y(h[hi], u[hi], v[hi])
    hy, uy, vy = (
        0.5 * (q[hi] + q[lo]) - DT / (2 * DY) * (b - a)
        for q, a, b in zip((h, u, v), fl, fh)
    )

    # second half step, back on the cell centres
    fx_lo, fx_hi = flux_x(hx[:-1], ux[:-1], vx[:-1]), flux_x(hx[1:], ux[1:], vx[1:])
    fy_lo = flux_y(hy[:, :-1], uy[:, :-1], vy[:, :-1])
    fy_hi = flux_y(hy[:, 1:], uy[:, 1:], vy[:, 1:])
    for q, axl, axh, ayl, ayh in zip((h, u, v), fx_lo, fx_hi, fy_lo, fy_hi):
        q[1:-1, 1:-1] -= DT / DX * (axh - axl) + DT / DY * (ayh - ayl)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=1000, help="grid side")
    parser.add_argument("--steps", type=int, default=20, help="time steps")
    args = parser.parse_args()
    n = args.n

    coord = np.arange(n + 2, dtype=np.float64) - 0.4 * n
    r2 = (coord[:, np.newaxis] ** 2 + coord[np.newaxis, :] ** 2) / (0.05 * n) ** 2
    h = 1.0 + 0.5 * np.exp(-r2)  # still water of depth 1 plus a Gaussian drop
    u = np.zeros((n + 2, n + 2))
    v = np.zeros((n + 2, n + 2))
    for _ in range(args.steps):
        step(h, u, v)

    checksum = np.sum(h * h) + np.sum(u * u + v * v)
    print(f"checksum: {float(checksum)!r}")


if __name__ == "__main__":
    main()
