"""Many operations on small arrays: 100 damped oscillators advanced by 20000 explicit
steps. Each step is a handful of NumPy calls on 100 elements, so per-call overhead
dominates, not arithmetic."""

import argparse

import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=100, help="number of oscillators")
    parser.add_argument("--steps", type=int, default=20_000, help="time steps")
    args = parser.parse_args()

    stiffness = 1.0 + np.arange(args.n, dtype=np.float64) * (4.0 / args.n)
    damping = 0.05
    dt = 0.001
    x = np.cos(np.arange(args.n, dtype=np.float64))
    v = np.zeros(args.n)

    for _ in range(args.steps):
        a = -stiffness * x - damping * v
        v = v + dt * a
        x = x + dt * v

    checksum = np.sum(x * x) + np.sum(v * v)
    print(f"checksum: {float(checksum)!r}")


if __name__ == "__main__":
    main()
