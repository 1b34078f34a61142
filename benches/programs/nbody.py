"""Gravitational N-body simulation: all-pairs forces with broadcasting, leapfrog steps."""

import argparse

import numpy as np


def accelerations(pos, mass, softening=0.1):
    d = pos[np.newaxis, :, :] - pos[:, np.newaxis, :]  # d[i, j] = pos[j] - pos[i]
    r2 = np.sum(d * d, axis=2) + softening * softening
    inv_r3 = r2**-1.5
    return np.sum(d * (inv_r3 * mass[np.newaxis, :])[:, :, np.newaxis], axis=1)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=1000, help="number of bodies")
    parser.add_argument("--steps", type=int, default=10, help="time steps")
    args = parser.parse_args()

    i = np.arange(args.n, dtype=np.float64)
    radius = 1.0 + 0.5 * np.sin(i * 0.7)
    angle = i * 2.399963  # golden angle: bodies spread evenly on a disk
    pos = np.stack(
        [radius * np.cos(angle), radius * np.sin(angle), 0.1 * np.cos(i * 1.3)], 1
    )
    vel = np.stack([-0.3 * np.sin(angle), 0.3 * np.cos(angle), np.zeros(args.n)], 1)
    mass = (1.0 + 0.5 * np.cos(i * 0.3)) / args.n
    dt = 0.01

    acc = accelerations(pos, mass)
    for _ in range(args.steps):
        vel += 0.5 * dt * acc
        pos += dt * vel
        acc = accelerations(pos, mass)
        vel += 0.5 * dt * acc

    checksum = np.sum(np.abs(pos)) + np.sum(np.abs(vel))
    print(f"checksum: {float(checksum)!r}")


if __name__ == "__main__":
    main()
