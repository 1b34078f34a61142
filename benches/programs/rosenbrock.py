"""Value and gradient of the n-dimensional Rosenbrock function, as an optimiser calls it."""

import argparse

import numpy as np


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def rosenbrock_gradient(x):
    grad = np.zeros_like(x)
    xm, xm_m1, xm_p1 = x[1:-1], x[:-2], x[2:]
    grad[1:-1] = (
        200.0 * (xm - xm_m1**2) - 400.0 * (xm_p1 - xm**2) * xm - 2.0 * (1.0 - xm)
    )
    grad[0] = -400.0 * x[0] * (x[1] - x[0] ** 2) - 2.0 * (1.0 - x[0])
    grad[-1] = 200.0 * (x[-1] - x[-2] ** 2)
    return grad


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=10_000_000, help="dimensions")
    args = parser.parse_args()

    x = 1.0 + 0.5 * np.sin(np.arange(args.n, dtype=np.float64) * 0.001)
    value = rosenbrock(x)
    grad = rosenbrock_gradient(x)
    checksum = value + np.sum(np.abs(grad))
    print(f"checksum: {float(checksum)!r}")


if __name__ == "__main__":
    main()
