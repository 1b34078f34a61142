"""Mandelbrot set by escape time, written the usual way: a complex grid, and every
iteration a mask of the points still bounded, which alone are updated
(``z[m] = z[m] ** 2 + c[m]``) and whose escape iteration is recorded."""

import argparse

import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=600, help="grid side")
    parser.add_argument("--iters", type=int, default=40, help="iterations")
    args = parser.parse_args()
    n = args.n

    x = np.linspace(-2.2, 0.8, n)
    y = np.linspace(-1.3, 1.3, n)
    c = x[np.newaxis, :] + 1j * y[:, np.newaxis]
    z = np.zeros_like(c)
    escape = np.full(c.shape, args.iters, dtype=np.int64)

    for i in range(args.iters):
        m = np.abs(z) <= 2.0
        z[m] = z[m] ** 2 + c[m]
        escaped = m & (np.abs(z) > 2.0)
        escape[escaped] = i

    inside = np.sum(escape == args.iters)
    checksum = float(np.sum(escape)) / n**2 + float(inside) / n**2
    print(f"checksum: {checksum!r}")


if __name__ == "__main__":
    main()
