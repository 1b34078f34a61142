"""Arrays assembled from copies (``np.roll``, ``concatenate``, a copy) read through their
pieces by the ``piecewise`` filter: the consumer reads the sources directly, cut into
cells where a read spans pieces. The arrays here are large enough for the filter to act
(it skips small batches, and cuts only where the copies outweigh the added instructions);
every result must equal NumPy's exactly, including when a source changes after the copy
or the consumer writes the source."""

import numpy as np
import pytest
from conftest import sample

N = 1100  # 1100² float64 is 9.7 MB: big enough to cut, quick enough to run


def exact(got, want):
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def data(dtype=np.float64, shape=(N, N), seed=0):
    return sample(dtype, shape, seed=seed)


@pytest.mark.parametrize("shift,axis", [(1, 0), (-1, 0), (3, 1), (-1, 1), (N - 1, 0)])
def test_a_rolled_array_read_once(hs, shift, axis):
    x = data()

    def prog(xp, x):
        return xp.roll(x, shift, axis=axis) * 2.0 + x

    exact(prog(hs, hs.asarray(x)), prog(np, x))


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.float32])
def test_a_periodic_neighbour_sum(hs, dtype):
    board = (data(np.float64, (1500, 1500), seed=3) > 0).astype(dtype)

    def step(xp, b):
        n = sum(
            xp.roll(xp.roll(b, dy, axis=0), dx, axis=1)
            for dy in (-1, 0, 1)
            for dx in (-1, 0, 1)
            if (dy, dx) != (0, 0)
        )
        return ((n == 3) | ((b != 0) & (n == 2))).astype(dtype)

    got, want = hs.asarray(board), board
    for _ in range(3):
        got, want = step(hs, got), step(np, want)
    exact(got, want)


def test_a_source_changed_after_the_roll_keeps_the_old_values(hs):
    def prog(xp, x):
        r = xp.roll(x, 1, axis=0)
        x += 1.0
        return r * x, x

    x = data()
    got, want = prog(hs, hs.array(x)), prog(np, x.copy())
    exact(got[0], want[0])
    exact(got[1], want[1])


def test_a_roll_assigned_into_its_source(hs):
    def prog(xp, x):
        x[...] = xp.roll(x, 2, axis=1) + 1.0
        x[:, :] = xp.roll(x, -1, axis=0) * x
        return x

    x = data()
    exact(prog(hs, hs.array(x)), prog(np, x.copy()))


def test_the_source_of_a_roll_freed_before_the_roll_is_read(hs):
    def prog(xp, x):
        t = x * 3.0
        r = xp.roll(t, 5, axis=0)
        del t
        return xp.sqrt(xp.abs(r)) - x

    x = data()
    exact(prog(hs, hs.asarray(x)), prog(np, x))


def test_concatenated_arrays_and_a_copy(hs):
    a, b = data(seed=1)[:600], data(seed=2)[:500]

    def prog(xp, a, b):
        c = xp.concatenate([a, b])
        d = xp.concatenate([b, a], axis=0)
        e = a.copy()
        return c * 2.0 - d, e + a

    got = prog(hs, hs.asarray(a), hs.asarray(b))
    want = prog(np, a, b)
    exact(got[0], want[0])
    exact(got[1], want[1])


def test_reductions_over_a_rolled_array(hs):
    x = data()

    def prog(xp, x):
        r = xp.roll(x, 7, axis=0)
        return xp.sum(r, axis=0), xp.sum(r[10:], axis=1), xp.max(r[:5])

    got, want = prog(hs, hs.asarray(x)), prog(np, x)
    for g, w in zip(got, want):
        # Row sums of values that cancel: summation order shows near zero.
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-12, atol=1e-10)


def test_a_lattice_boltzmann_step_stream_and_collide(hs):
    cx = [0, 0, 1, 1, 1, 0, -1, -1, -1]
    cy = [0, 1, 1, 0, -1, -1, -1, 0, 1]
    w = [4 / 9, 1 / 9, 1 / 36, 1 / 9, 1 / 36, 1 / 9, 1 / 36, 1 / 9, 1 / 36]

    def run(xp, f):
        for _ in range(3):
            f = [xp.roll(fi, (y, x), axis=(0, 1)) for fi, x, y in zip(f, cx, cy)]
            rho = sum(f)
            ux = sum(fi * x for fi, x in zip(f, cx) if x) / rho
            uy = sum(fi * y for fi, y in zip(f, cy) if y) / rho
            usq = 1.5 * (ux * ux + uy * uy)
            feq = []
            for x, y, wi in zip(cx, cy, w):
                cu = 3.0 * (x * ux + y * uy)
                feq.append(rho * wi * (1.0 + cu + 0.5 * cu * cu - usq))
            f = [fi - (fi - fe) / 0.6 for fi, fe in zip(f, feq)]
        return f

    f0 = [1.0 + 0.01 * data(np.float64, (700, 700), seed=s) for s in range(9)]
    got = run(hs, [hs.asarray(fi) for fi in f0])
    want = run(np, f0)
    for g, wnt in zip(got, want):
        exact(g, wnt)


def test_a_rolled_neighbour_sum_moves_no_copies(hs):
    """Structure, not time: the engine's bytes moved for a Game of Life step on a 2000²
    int8 board stay near one read and one write of the board. Its sixteen rolls as
    copies moved over 16 boards more per step."""
    if getattr(hs, "stats", None) is None or hs.stats().get("stack") != "cpu":
        pytest.skip("the cpu stack counts the bytes its kernels move")
    n = 2000
    board = hs.asarray((data(np.float64, (n, n), seed=5) > 0.5).astype(np.int8))

    def step(b):
        s = sum(
            hs.roll(hs.roll(b, dy, axis=0), dx, axis=1)
            for dy in (-1, 0, 1)
            for dx in (-1, 0, 1)
            if (dy, dx) != (0, 0)
        )
        return ((s == 3) | (b & (s == 2))).astype(np.int8)

    board = step(board)
    float(board[0, 0])
    before = hs.stats()["engine"]["bytes_moved"]
    for _ in range(3):
        board = step(board)
    float(board[0, 0])
    moved = hs.stats()["engine"]["bytes_moved"] - before
    assert moved < 3 * 4 * n * n, f"{moved / (3 * n * n):.1f} boards per step"


def test_filled_arrays_reduced_and_multiplied(hs):
    """A fill is a copy of a scalar: a product may read the scalar, a sum must not."""

    def prog(xp, x):
        ones = xp.ones(x.shape)
        full = xp.full(x.shape, 2.5)
        return xp.sum(ones), xp.sum(full, axis=0), ones * x + full

    x = data()
    got, want = prog(hs, hs.asarray(x)), prog(np, x)
    assert float(got[0]) == float(want[0])
    exact(got[1], want[1])
    exact(got[2], want[2])


# In-place updates of overlapping slices of one array (the `update_cells` filter): cut at
# the slices' edges, each cell's updates share a kernel. The arrays are large enough for
# the cut to pay.


def laplacian(xp, u):
    out = 4.0 * u
    out[1:, :] -= u[:-1, :]
    out[:-1, :] -= u[1:, :]
    out[:, 1:] -= u[:, :-1]
    out[:, :-1] -= u[:, 1:]
    return out


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_a_laplacian_of_shifted_slice_updates(hs, dtype):
    u = data(dtype, (700, 900), seed=7)
    exact(laplacian(hs, hs.asarray(u)), laplacian(np, u))
    # A view as the operand, reversed and strided: the updates' other inputs shift.
    v = data(dtype, (1400, 1800), seed=8)[::-2, ::2]
    exact(laplacian(hs, hs.asarray(v)), laplacian(np, v))


def test_flux_differences_accumulated_in_place(hs):
    def prog(xp, u, f):
        d = xp.zeros_like(u)
        d[:-1] -= f
        d[1:] += f
        u += 0.1 * d
        d[2:-3] *= 2.0  # a box inside both
        return u, d

    u, f = data(shape=(2_000_000,), seed=9), data(shape=(1_999_999,), seed=10)
    got, want = prog(hs, hs.asarray(u), hs.asarray(f)), prog(np, u.copy(), f)
    exact(got[0], want[0])
    exact(got[1], want[1])


def test_slice_updates_whose_operand_changes_between_them(hs):
    """An operand written between two updates keeps them apart (each reads it as it is
    then), and a later read of the array sees every update."""

    def prog(xp, x, y):
        x[1:, :] += y[:-1, :]
        y *= 3.0
        x[:-1, :] -= y[1:, :]
        x[:, 1:] *= x[:, 1:]
        return x.sum(axis=0), y

    x, y = data(seed=11), data(seed=12)
    got, want = prog(hs, hs.asarray(x), hs.asarray(y)), prog(np, x.copy(), y.copy())
    np.testing.assert_allclose(np.asarray(got[0]), want[0], rtol=1e-12)
    exact(got[1], want[1])


def test_a_laplacian_moves_the_grid_about_once(hs):
    """Structure, not time: the cut Laplacian's bytes moved stay near one read of `u` and
    one write of the result; as five kernels it moved about five times that."""
    if getattr(hs, "stats", None) is None or hs.stats().get("stack") != "cpu":
        pytest.skip("the cpu stack counts the bytes its kernels move")
    u = hs.asarray(data(seed=13))
    float(u[0, 0])
    before = hs.stats()["engine"]["bytes_moved"]
    out = laplacian(hs, u)
    float(out[0, 0])
    moved = hs.stats()["engine"]["bytes_moved"] - before
    grid = N * N * 8
    assert moved < 3 * grid, f"{moved / grid:.1f} grids"
