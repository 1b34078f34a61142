"""Lattice Boltzmann (D2Q9, BGK collision) of a decaying shear wave in a periodic box:
nine distributions streamed with np.roll, then relaxed towards equilibrium."""

import argparse

import numpy as np

CX = [0, 0, 1, 1, 1, 0, -1, -1, -1]
CY = [0, 1, 1, 0, -1, -1, -1, 0, 1]
W = [4 / 9, 1 / 9, 1 / 36, 1 / 9, 1 / 36, 1 / 9, 1 / 36, 1 / 9, 1 / 36]
TAU = 0.6


def equilibrium(rho, ux, uy):
    usq = 1.5 * (ux * ux + uy * uy)
    feq = []
    for cx, cy, w in zip(CX, CY, W):
        cu = 3.0 * (cx * ux + cy * uy)
        feq.append(rho * w * (1.0 + cu + 0.5 * cu * cu - usq))
    return feq


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=500, help="grid side")
    parser.add_argument("--steps", type=int, default=20, help="time steps")
    args = parser.parse_args()
    n = args.n

    y = np.arange(n, dtype=np.float64)[:, np.newaxis] * (2.0 * np.pi / n)
    x = np.arange(n, dtype=np.float64)[np.newaxis, :] * (2.0 * np.pi / n)
    rho = 1.0 + 0.01 * np.cos(x) * np.cos(y)
    ux = np.zeros((n, n)) + 0.05 * np.sin(y)
    uy = np.zeros((n, n)) + 0.02 * np.sin(x)
    f = equilibrium(rho, ux, uy)

    for _ in range(args.steps):
        # streaming: each distribution moves one cell along its velocity
        f = [np.roll(fi, (cy, cx), axis=(0, 1)) for fi, cx, cy in zip(f, CX, CY)]
        rho = sum(f)
        ux = sum(fi * cx for fi, cx in zip(f, CX) if cx != 0) / rho
        uy = sum(fi * cy for fi, cy in zip(f, CY) if cy != 0) / rho
        feq = equilibrium(rho, ux, uy)
        f = [fi - (fi - fe) / TAU for fi, fe in zip(f, feq)]

    energy = np.sum(rho * (ux * ux + uy * uy))
    print(f"checksum: {float(energy)!r}")


if __name__ == "__main__":
    main()
