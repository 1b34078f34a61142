"""nbody for numexpr: pairwise terms on (n, n) broadcast coordinates, row sums by
numexpr's sum(..., axis=1)."""

# numexpr reads the arrays an expression names from the caller's local variables.
# ruff: noqa: F841

import argparse

import numexpr as ne
import numpy as np


def accelerations(pos, mass, softening=0.1):
    xi, yi, zi = (pos[:, c : c + 1] for c in range(3))  # column vectors (n, 1)
    xj, yj, zj = (pos[np.newaxis, :, c] for c in range(3))  # row vectors (1, n)
    m = mass[np.newaxis, :]
    eps2 = softening * softening
    w = ne.evaluate("m * ((xj-xi)**2 + (yj-yi)**2 + (zj-zi)**2 + eps2) ** -1.5")
    pairs = [(xj, xi), (yj, yi), (zj, zi)]
    return np.stack(
        [
            ne.evaluate("sum((pj - pi) * w, axis=1)", {"pj": pj, "pi": pi, "w": w})
            for pj, pi in pairs
        ],
        axis=1,
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()

    i = np.arange(args.n, dtype=np.float64)
    radius = 1.0 + 0.5 * np.sin(i * 0.7)
    angle = i * 2.399963
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

    print(f"checksum: {float(np.sum(np.abs(pos)) + np.sum(np.abs(vel)))!r}")


if __name__ == "__main__":
    main()
