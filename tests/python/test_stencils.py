"""Programs that update an array from shifted views of itself: Jacobi steps assigning into
their own grid's interior, shifts along rows and columns, reversed and strided grids, and
ufuncs with ``out=`` overlapping their inputs. NumPy evaluates the right-hand side before
it assigns; on engines with held-back writes (``Capabilities::lagged_writes``) the cpu
stack fuses the assignment into the loop that reads the old values, holding each row
back until no later row needs it, so these must still equal NumPy's results exactly."""

import numpy as np
import pytest
from conftest import sample


def jacobi(xp, grid, iters, flush_every=None):
    """The heat equation's step: 5-point average into the interior, with the change."""
    deltas = []
    for it in range(iters):
        centre = grid[1:-1, 1:-1]
        new = 0.25 * (
            grid[:-2, 1:-1] + grid[2:, 1:-1] + grid[1:-1, :-2] + grid[1:-1, 2:]
        )
        deltas.append(xp.sum(xp.abs(new - centre), axis=1))
        grid[1:-1, 1:-1] = new
        if flush_every and it % flush_every == flush_every - 1:
            float(grid[0, 0])
    return grid, deltas


@pytest.mark.parametrize(
    "shape", [(3, 3), (4, 5), (5, 4), (3, 40), (40, 3), (67, 129), (300, 70)]
)
def test_jacobi_into_its_own_grid_matches(hs, same, shape):
    data = sample(np.float64, shape, seed=1) * 10.0
    want = jacobi(np, data.copy(), 4)
    got = jacobi(hs, hs.array(data), 4)
    same(got, want)


@pytest.mark.parametrize(
    "dtype",
    [
        np.float16,
        np.float32,
        np.float64,
        np.int8,
        np.uint16,
        np.int32,
        np.int64,
        np.complex128,
    ],
)
def test_jacobi_keeps_every_dtype(hs, same, dtype):
    data = sample(dtype, (23, 17), seed=2)

    def step(xp, g):
        for _ in range(3):
            g[1:-1, 1:-1] = g[:-2, 1:-1] + g[2:, 1:-1] - g[1:-1, :-2] * g[1:-1, 2:]
        return g

    same(step(hs, hs.array(data)), step(np, data.copy()))


def test_jacobi_iterations_in_one_flush_and_across_flushes_match(hs, same):
    data = sample(np.float64, (50, 60), seed=3)
    for flush_every in (None, 1, 7):
        want = jacobi(np, data.copy(), 20, flush_every)
        got = jacobi(hs, hs.array(data), 20, flush_every)
        same(got, want, what=f"flush every {flush_every}")


@pytest.mark.parametrize(
    "name",
    [
        "down_one_row",
        "up_one_row",
        "down_two_rows",
        "left_one_column",
        "right_two_columns",
        "diagonal",
        "reversed_rows",
        "strided_columns",
        "transposed",
        "three_d_planes",
    ],
)
def test_shifted_self_assignment_matches(hs, same, name):
    def run(xp, a):
        if name == "down_one_row":
            a[1:] = a[:-1] * 2 + 1
        elif name == "up_one_row":
            a[:-1] = a[1:] - a[:-1]
        elif name == "down_two_rows":
            a[2:] = a[:-2] + a[1:-1]
        elif name == "left_one_column":
            a[:, :-1] = a[:, 1:] * 3
        elif name == "right_two_columns":
            a[:, 2:] = a[:, :-2] - a[:, 1:-1]
        elif name == "diagonal":
            a[1:, 1:] = a[:-1, :-1] + a[1:, :-1]
        elif name == "reversed_rows":
            r = a[::-1]
            r[1:-1] = r[:-2] + r[2:] + r[1:-1]
        elif name == "strided_columns":
            s = a[:, ::2]
            s[1:, 1:] = s[:-1, :-1] * 0.5 + s[1:, 1:]
        elif name == "transposed":
            t = a.T
            t[1:] = t[:-1] + 1
        elif name == "three_d_planes":
            c = a.reshape(6, 5, 8)
            c[1:-1, 1:-1] = c[:-2, 1:-1] + c[2:, 1:-1] + c[1:-1, :-2]
            return c
        return a

    data = sample(np.float64, (30, 8), seed=4)
    same(run(hs, hs.array(data)), run(np, data.copy()))


def test_a_read_after_the_shifted_write_sees_the_new_values(hs, same):
    def run(xp, a):
        a[1:] = a[:-1] + 1
        b = a[:-1] * 2  # reads rows the assignment just wrote
        a[1:] = a[:-1] + b
        return a, b

    data = sample(np.float64, (12, 9), seed=5)
    same(run(hs, hs.array(data)), run(np, data.copy()))


def test_ufunc_out_overlapping_its_inputs_matches(hs, same):
    def run(xp, a):
        xp.add(a[:-2], a[2:], out=a[1:-1])
        xp.multiply(a[:, 1:], 2.0, out=a[:, :-1])
        return a

    data = sample(np.float64, (9, 7), seed=6)
    same(run(hs, hs.array(data)), run(np, data.copy()))


def test_empty_and_single_row_interiors_match(hs, same):
    for shape in [(2, 5), (3, 2), (2, 2), (1, 6)]:
        data = sample(np.float64, shape, seed=7)
        want = jacobi(np, data.copy(), 2)
        got = jacobi(hs, hs.array(data), 2)
        same(got, want, what=str(shape))
