"""sort, argsort, partition, argpartition, searchsorted, sort_complex, unique and the
Array API's unique_* (issue 46): native on every stack (the engines' sort methods), equal
to NumPy's stable results bit for bit over every dtype with NaN, infinities, both zeros
and repeats, on odd layouts (0-d, empty, non-contiguous, reversed, broadcast), with
NumPy's errors, and never through the fallback path."""

import warnings

import numpy as np
import pytest
from conftest import AGAINST_NUMPY, DTYPES, assert_same


def data(dtype, shape=(6, 9), seed=0):
    """Values with repeats, and for floats NaN, infinities and both zeros."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    if dtype.kind == "b":
        x = rng.integers(0, 2, n).astype(dtype)
    elif dtype.kind in "iu":
        info = np.iinfo(dtype)
        pool = np.array([info.min, info.max, 0, 1, 2, 3], dtype=dtype)
        small = rng.integers(0, 5, n).astype(dtype)
        x = np.where(rng.random(n) < 0.2, pool[rng.integers(0, 6, n)], small)
    else:
        real = np.round(rng.standard_normal(n) * 2)
        special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0])
        pick = rng.random(n) < 0.3
        real = np.where(pick, special[rng.integers(0, 5, n)], real)
        if dtype.kind == "c":
            imag = np.where(
                rng.random(n) < 0.2, np.nan, np.round(rng.standard_normal(n))
            )
            x = (real + 1j * imag).astype(dtype)
        else:
            x = real.astype(dtype)
    return x.reshape(shape)


def same_bits(got, want, what):
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape, (
        f"{what}: {got.dtype}{got.shape} != {want.dtype}{want.shape}"
    )
    assert got.tobytes() == want.tobytes(), f"{what}:\n{got}\n!=\n{want}"


@pytest.fixture
def no_fallback(hs):
    with warnings.catch_warnings():
        if not AGAINST_NUMPY:
            warnings.simplefilter("error", hs.HassiumFallbackWarning)
        yield


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_sort_and_argsort_equal_numpys_stable_sort(hs, no_fallback, dtype):
    x = data(dtype)
    h = hs.asarray(x)
    for axis in (0, 1, -1, None):
        want = np.sort(x, axis=axis, kind="stable")
        if not AGAINST_NUMPY:  # Hassium's default is stable; NumPy's promises nothing
            same_bits(hs.sort(h, axis=axis), want, f"sort axis={axis}")
        same_bits(hs.sort(h, axis=axis, stable=True), want, "stable=True")
        want = np.argsort(x, axis=axis, kind="stable")
        same_bits(hs.argsort(h, axis=axis, kind="stable"), want, f"argsort axis={axis}")
    same_bits(h.argsort(kind="stable"), np.argsort(x, kind="stable"), "ndarray.argsort")
    c = hs.asarray(x.copy())
    c.sort(axis=0, kind="stable")
    same_bits(c, np.sort(x, axis=0, kind="stable"), "ndarray.sort in place")


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_descending_keeps_equal_elements_in_order(hs, no_fallback, dtype):
    x = data(dtype, seed=1)
    h = hs.asarray(x)
    if AGAINST_NUMPY:
        pytest.skip("np.sort has no descending keyword")
    rev = np.flip(np.sort(np.flip(x, 1), axis=1, kind="stable"), 1)
    same_bits(hs.sort(h, descending=True), rev, "descending sort")
    order = x.shape[1] - 1 - np.argsort(np.flip(x, 1), axis=1, kind="stable")
    same_bits(hs.argsort(h, descending=True), np.flip(order, 1), "descending argsort")


def test_odd_layouts(hs, no_fallback):
    x = data(np.dtype(np.float64), shape=(5, 8, 3), seed=2)
    h = hs.asarray(x)
    cases = {
        "reversed": lambda xp, a: a[::-1, ::-2],
        "transposed": lambda xp, a: a.transpose(2, 0, 1),
        "broadcast": lambda xp, a: xp.broadcast_to(a[:1], (4, 8, 3)),
        "empty": lambda xp, a: a[:, :0],
        "length one": lambda xp, a: a[:, :1],
        "1-d": lambda xp, a: a[2, :, 1],
    }
    for name, view in cases.items():
        for axis in (0, -1, None):
            v, w = view(hs, h), view(np, x)
            want = np.sort(w, axis=axis, kind="stable")
            same_bits(hs.sort(v, axis=axis, kind="stable"), want, name)
            want = np.argsort(w, axis=axis, kind="stable")
            same_bits(hs.argsort(v, axis=axis, kind="stable"), want, name)
    # 0-d: no axis -1, but axis=None flattens to one element.
    with pytest.raises(np.exceptions.AxisError):
        hs.sort(hs.asarray(3.0))
    same_bits(
        hs.sort(hs.asarray(3.0), axis=None), np.sort(np.array(3.0), axis=None), "0-d"
    )


def test_partition_puts_kth_in_place(hs, no_fallback):
    x = data(np.dtype(np.float64), shape=(7, 11), seed=3)
    h = hs.asarray(x)
    for kth in (0, 5, -1, [1, 4]):
        got = np.asarray(hs.partition(h, kth, axis=1))
        ref = np.sort(x, axis=1)
        for k in np.atleast_1d(kth):
            assert_same(got[:, k], ref[:, k], what=f"partition kth={kth}")
        idx = np.asarray(hs.argpartition(h, kth, axis=1))
        for k in np.atleast_1d(kth):
            assert_same(np.take_along_axis(x, idx, 1)[:, k], ref[:, k])
        assert sorted(idx[0].tolist()) == list(range(11))


def expected_argpartition(x, k, axis):
    """The order ``argpartition`` promises (``hassium_core::methods::ARGPARTITION``):
    the first ``k + 1`` positions of the stable sort, then the others in order."""
    x = np.moveaxis(x, axis, -1)
    rows = x.reshape(-1, x.shape[-1])
    out = np.empty(rows.shape, dtype=np.int64)
    for r, row in enumerate(rows):
        first = np.argsort(row, kind="stable")[: k + 1]
        rest = np.setdiff1d(np.arange(row.size), first)
        out[r] = np.concatenate([first, rest])
    return np.moveaxis(out.reshape(x.shape), -1, axis)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_argpartition_selects_in_one_documented_order(hs, no_fallback, dtype):
    # Rows long beside k (the heap of the few smallest) and not (a selection), with
    # repeats, NaNs and both zeros where the dtype has them; every kth lands where
    # NumPy's sort puts it, in one order on every engine.
    rng = np.random.default_rng(11)
    for shape, axis in (((5, 700), 1), ((700, 3), 0), ((9, 13), 1), ((2, 3, 40), 2)):
        x = data(dtype, shape=shape, seed=5)
        if dtype.kind != "b":
            x.reshape(-1)[rng.integers(0, x.size, x.size // 3)] = x.reshape(-1)[0]
        h = hs.asarray(x)
        n = shape[axis]
        for kth in (0, 3, n // 2, n - 1, -2, [2, n - 4]):
            k = max(int(v) % n for v in np.atleast_1d(kth))
            got = np.asarray(hs.argpartition(h, kth, axis=axis))
            same_bits(got, expected_argpartition(x, k, axis), f"{shape} kth={kth}")
            values = np.asarray(hs.partition(h, kth, axis=axis))
            same_bits(values, np.take_along_axis(x, got, axis), f"{shape} values")
            for kk in np.atleast_1d(kth):
                sort_k = np.take(np.sort(x, axis=axis, kind="stable"), [kk], axis=axis)
                same_bits(
                    np.take(values, [kk], axis=axis), sort_k, f"kth={kk} in place"
                )


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_searchsorted_both_sides(hs, no_fallback, dtype):
    x = data(dtype, seed=4)
    s = np.sort(x.reshape(-1), kind="stable")
    for side in ("left", "right"):
        want = np.searchsorted(s, x, side=side)
        same_bits(hs.searchsorted(hs.asarray(s), hs.asarray(x), side=side), want, side)
    perm = np.argsort(x.reshape(-1), kind="stable")
    want = np.searchsorted(x.reshape(-1), x[0], sorter=perm)
    got = hs.searchsorted(hs.asarray(x.reshape(-1)), hs.asarray(x[0]), sorter=perm)
    same_bits(got, want, "sorter")
    assert int(hs.searchsorted(hs.asarray(s), s[3])) == int(np.searchsorted(s, s[3]))


def test_searchsorted_promotes_to_the_common_dtype(hs, no_fallback):
    a = np.arange(10, dtype=np.int16)
    v = np.array([-0.5, 2.5, 9.0, 30.0])
    same_bits(
        hs.searchsorted(hs.asarray(a), hs.asarray(v)), np.searchsorted(a, v), "mix"
    )
    same_bits(
        hs.searchsorted(hs.asarray(a), [3, 4]), np.searchsorted(a, [3, 4]), "list"
    )


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_unique_with_everything_returned(hs, no_fallback, dtype):
    x = data(dtype, seed=5)
    h = hs.asarray(x)
    for equal_nan in (True, False):
        want = np.unique(
            x,
            return_index=True,
            return_inverse=True,
            return_counts=True,
            equal_nan=equal_nan,
        )
        got = hs.unique(
            h,
            return_index=True,
            return_inverse=True,
            return_counts=True,
            equal_nan=equal_nan,
        )
        for name, g, w in zip(("values", "index", "inverse", "counts"), got, want):
            same_bits(g, w, f"{name} equal_nan={equal_nan}")
    # NumPy's default sort may rewrite a float16 NaN's payload: compare values.
    assert_same(hs.unique(h), np.unique(x), what="values alone")


def test_unique_of_empty_and_0d(hs, no_fallback):
    for x in (np.zeros((0, 3)), np.array(2.5), np.array([7, 7, 7], dtype=np.uint8)):
        want = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
        got = hs.unique(
            hs.asarray(x), return_index=True, return_inverse=True, return_counts=True
        )
        for g, w in zip(got, want):
            same_bits(g, w, f"unique of {x!r}")


def test_array_api_unique_functions(hs, no_fallback):
    x = data(np.dtype(np.float64), seed=6)
    h = hs.asarray(x)
    # NumPy's unique_* keep NaNs apart and need not sort; compare in sorted order.
    order = np.argsort(np.unique_values(x), kind="stable")
    same_bits(hs.unique_values(h), np.unique_values(x)[order], "unique_values")
    got, want = hs.unique_counts(h), np.unique_counts(x)
    same_bits(got.counts, want.counts[order], "unique_counts")
    got, want = hs.unique_all(h), np.unique_all(x)
    assert type(got).__name__ == "UniqueAllResult"
    values = np.asarray(got.values)
    same_bits(got.values, want.values[order], "unique_all values")
    inverse = np.asarray(got.inverse_indices)
    assert inverse.shape == x.shape
    np.testing.assert_array_equal(values[inverse], x)
    got = hs.unique_inverse(h)
    np.testing.assert_array_equal(
        np.asarray(got.values)[np.asarray(got.inverse_indices)], x
    )


def test_sort_complex(hs, no_fallback):
    for dtype in (np.int16, np.float32, np.float64, np.complex64):
        x = data(np.dtype(dtype), shape=(12,), seed=7)
        # NumPy's sort_complex sorts unstably: -0.0 and 0.0 may come in either order.
        assert_same(hs.sort_complex(hs.asarray(x)), np.sort_complex(x), what=str(dtype))


@pytest.mark.parametrize(
    "call",
    [
        lambda xp, a: xp.sort(a, kind="bogus"),
        lambda xp, a: xp.sort(a, order="f"),
        lambda xp, a: xp.sort(a, kind="stable", stable=True),
        lambda xp, a: xp.sort(a, axis=2),
        lambda xp, a: xp.partition(a, 9),
        lambda xp, a: xp.partition(a, True),
        lambda xp, a: xp.partition(a, 1, kind="quick"),
        lambda xp, a: xp.searchsorted(a, 1.0, side="middle"),
        lambda xp, a: xp.searchsorted(a.reshape(2, 3), 1.0),
    ],
)
def test_bad_arguments_raise_numpys_errors(hs, call):
    x = np.arange(6.0)
    with pytest.raises(Exception) as want:
        call(np, x)
    with pytest.raises(type(want.value)) as got:
        call(hs, hs.asarray(x))
    assert str(got.value) == str(want.value)


def test_sorting_a_read_only_array_in_place_is_refused(hs):
    h = hs.asarray(np.arange(4.0))
    h.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        h.sort()


def _outcome(func, *args, **kwargs):
    """The result as (dtype, shape, values), or the exception type."""
    try:
        r = np.asarray(func(*args, **kwargs))
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e)
    return r.dtype, r.shape, r.tolist()


@pytest.mark.parametrize("axis", [-1, 0, 1, None], ids=str)
@pytest.mark.parametrize(
    "data",
    [np.array(3), np.array([], bool), np.zeros((0, 3)), np.zeros((2, 0))],
    ids=repr,
)
def test_sorting_scalars_and_empty_arrays_as_numpy_does(hs, data, axis):
    """argsort and argpartition take a 0-d array as one element (sort and partition
    raise), and an empty array partitions whatever kth; a kind that is not a string is
    a TypeError (found by test_api_fuzz.py)."""
    h = hs.asarray(data)
    for name, extra in [
        ("sort", ()),
        ("argsort", ()),
        ("partition", (0,)),
        ("argpartition", (0,)),
        ("argpartition", (5,)),
    ]:
        want = _outcome(getattr(np, name), data, *extra, axis=axis)
        assert _outcome(getattr(hs, name), h, *extra, axis=axis) == want, name
    for name in ("partition", "argpartition"):
        want = _outcome(getattr(np, name), np.arange(3), 0, kind=None)
        assert _outcome(getattr(hs, name), hs.arange(3), 0, kind=None) == want
