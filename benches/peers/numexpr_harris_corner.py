"""harris_corner for numexpr: float32 image; gradients, box filters and the response as
evaluations over slices."""

# numexpr reads the arrays an expression names from the caller's local variables.
# ruff: noqa: F841

import argparse

import numexpr as ne
import numpy as np

BOX = "(a00 + a01 + a02 + a10 + a11 + a12 + a20 + a21 + a22) * ninth"


def box3(a):
    names = {
        f"a{r}{c}": a[r : a.shape[0] - 2 + r, c : a.shape[1] - 2 + c]
        for r in range(3)
        for c in range(3)
    }
    return ne.evaluate(BOX, local_dict={**names, "ninth": np.float32(1.0 / 9.0)})


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=2400)
    args = parser.parse_args()
    n = args.n

    i = np.arange(n, dtype=np.int64)[:, np.newaxis]
    j = np.arange(n, dtype=np.int64)[np.newaxis, :]
    squares = ((i // 40 + j // 40) % 2).astype(np.float32)
    ramp = ((i + 2 * j) % 256).astype(np.float32) * np.float32(1.0 / 1024.0)
    image = squares + ramp

    half = np.float32(0.5)
    right, left = image[1:-1, 2:], image[1:-1, :-2]
    down, up = image[2:, 1:-1], image[:-2, 1:-1]
    ix = ne.evaluate("(right - left) * half")
    iy = ne.evaluate("(down - up) * half")
    sxx = box3(ne.evaluate("ix * ix"))
    syy = box3(ne.evaluate("iy * iy"))
    sxy = box3(ne.evaluate("ix * iy"))
    k = np.float32(0.05)
    response = ne.evaluate("sxx * syy - sxy * sxy - k * (sxx + syy) ** 2")
    print(f"checksum: {float(np.sum(np.abs(response).astype(np.float64)))!r}")


if __name__ == "__main__":
    main()
