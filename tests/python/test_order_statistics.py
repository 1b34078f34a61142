"""median, percentile, quantile and their nan* forms; lexsort, digitize, isin and the
*1d set operations: native compositions of the sort primitives, equal to NumPy's results
(values bit for bit in the dtypes NumPy gives) over every dtype, odd layouts, axes,
keepdims, out=, scalar and array q, every method and NaN, with NumPy's errors, and
never through the fallback path."""

import warnings

import numpy as np
import pytest
from conftest import AGAINST_NUMPY, DTYPES, assert_same

REAL = [d for d in DTYPES if d.kind != "c"]
METHODS = [
    "linear",
    "lower",
    "higher",
    "nearest",
    "midpoint",
    "hazen",
    "weibull",
    "median_unbiased",
    "normal_unbiased",
    "interpolated_inverted_cdf",
    "inverted_cdf",
    "averaged_inverted_cdf",
    "closest_observation",
]
QS = [0.3, 0.0, 1.0, [0.1, 0.5, 0.99], np.array([[0.25], [0.75]]), np.float32(0.7), 1]


def data(dtype, shape=(4, 7, 6), seed=0, nan=True):
    rng = np.random.default_rng(seed)
    x = np.round(rng.standard_normal(shape) * 3, 1)
    if dtype.kind in "fc" and nan and x.ndim == 3:
        x[1, 2, 3] = np.nan
        x[2, :, 1] = np.nan
        x[3, 1, :] = np.nan
    elif dtype.kind in "fc" and nan:
        x.reshape(-1)[::7] = np.nan
    if dtype.kind == "b":
        return x > 0
    if dtype.kind in "iu":
        x = np.abs(x) if dtype.kind == "u" else x
        return np.round(x).astype(dtype)
    if dtype.kind == "c":
        return (x + 1j * x[::-1]).astype(dtype)
    return x.astype(dtype)


@pytest.fixture
def no_fallback(hs):
    with warnings.catch_warnings():
        if not AGAINST_NUMPY:
            warnings.simplefilter("error", hs.HassiumFallbackWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def same(got, want, what, exact=True):
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (
        f"{what}: {got.dtype}{got.shape} != {want.dtype}{want.shape}"
    )
    if exact:
        np.testing.assert_array_equal(got, want, err_msg=what, strict=True)
    else:
        assert_same(got, want, what=what)


def outcome(f):
    try:
        return f()
    except Exception as e:  # noqa: BLE001 - compared with NumPy's own
        return e


def check(hs, name, x, *args, exact=True, **kw):
    want = outcome(lambda: getattr(np, name)(x, *args, **kw))
    got = outcome(lambda: getattr(hs, name)(hs.asarray(x), *args, **kw))
    what = f"{name}{args} {kw} {x.dtype}{x.shape}"
    if isinstance(want, Exception):
        assert type(got) is type(want), f"{what}: {got!r} is not {want!r}"
        return
    assert not isinstance(got, Exception), f"{what}: {got!r}"
    same(got, want, what, exact)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", ["median", "nanmedian"])
def test_median_equals_numpys(hs, no_fallback, dtype, name):
    if name == "nanmedian" and dtype.kind == "c":
        pytest.skip("complex nanmedian goes through NumPy")
    x = data(dtype)
    for axis in (None, 0, 1, -1, (0, 2), (0, 1, 2)):
        for keepdims in (False, True):
            # nanmedian's ties between -0.0 and 0.0 follow NumPy's unstable sort
            check(hs, name, x, axis=axis, keepdims=keepdims, exact=name == "median")


@pytest.mark.parametrize("dtype", REAL, ids=str)
@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
def test_quantile_every_method_equals_numpys_bits(hs, no_fallback, dtype, name):
    x = data(dtype)
    for method in METHODS:
        for q in QS:
            for axis in (None, 1, -1, (0, 2)):
                if name == "nanquantile" and np.ndim(q) == 2 and axis == (0, 2):
                    continue  # NumPy moves q's axes from the wrong place: fallback
                check(hs, name, x, q, axis=axis, method=method)


@pytest.mark.parametrize("name", ["percentile", "nanpercentile"])
def test_percentile_is_quantile_of_q_over_100(hs, no_fallback, name):
    x = data(np.dtype(np.float64))
    for q in (30, 0, 100, [10, 50, 99.5], np.array([25.0, 75.0], dtype=np.float32)):
        for axis in (None, 0, (1, 2)):
            for keepdims in (False, True):
                check(hs, name, x, q, axis=axis, keepdims=keepdims)
    for q in (101, -1, [50, 200]):
        check(hs, name, x, q)


def test_quantile_layouts_and_keepdims(hs, no_fallback):
    x = data(np.dtype(np.float32), shape=(5, 8, 3), nan=False)
    views = {
        "reversed": lambda a: a[::-1, ::-2],
        "transposed": lambda a: a.transpose(2, 0, 1),
        "length one": lambda a: a[:, :1],
        "1-d": lambda a: a[2, :, 1],
    }
    for view in views.values():
        for axis in (None, 0, -1):
            for name in ("median", "quantile", "nanquantile"):
                args = () if name == "median" else ([0.2, 0.5],)
                want = getattr(np, name)(view(x), *args, axis=axis, keepdims=True)
                h = view(hs.asarray(x))
                got = getattr(hs, name)(h, *args, axis=axis, keepdims=True)
                same(got, want, f"{name} axis={axis}")


def test_zero_d_and_empty(hs, no_fallback):
    for name, args in (("median", ()), ("quantile", (0.5,)), ("nanmedian", ())):
        check(hs, name, np.array(3.0), *args)
        check(hs, name, np.array(3.0), *args, axis=None)
    empty = np.zeros((0, 3))
    for name in ("median", "nanmedian"):
        check(hs, name, empty, axis=0)
        check(hs, name, empty, axis=1)
        check(hs, name, empty)
    check(hs, "nanquantile", empty, [0.5, 0.2], axis=0)
    check(hs, "quantile", empty, 0.5)  # NumPy's IndexError


def test_nan_slices(hs, no_fallback):
    x = np.array([[np.nan, 1.0, 2.0], [np.nan, np.nan, np.nan], [3.0, 1.0, 0.5]])
    for name in ("median", "nanmedian"):
        check(hs, name, x, axis=1)
    for name in ("quantile", "nanquantile"):
        check(hs, name, x, [0.5], axis=1)
        check(hs, name, x, 0.5)
        check(hs, name, x.astype(np.float32), np.float32(0.5))
    check(hs, "quantile", np.array([1.0, np.inf]), 1.0)  # NumPy's NaN from inf - inf


def test_all_nan_slice_warns(hs):
    x = hs.asarray(np.array([[np.nan, np.nan], [1.0, 2.0]]))
    for name, args in (("nanmedian", ()), ("nanquantile", (0.5,))):
        with pytest.warns(RuntimeWarning, match="All-NaN slice encountered"):
            got = getattr(hs, name)(x, *args, axis=1)
        assert np.isnan(np.asarray(got)[0])


def test_out_is_written(hs, no_fallback):
    x = data(np.dtype(np.float64), nan=False)
    want = np.quantile(x, [0.2, 0.8], axis=1)
    out = hs.zeros(want.shape)
    got = hs.quantile(hs.asarray(x), [0.2, 0.8], axis=1, out=out)
    assert got is out
    same(out, want, "quantile out=")
    out = hs.zeros((4, 6))
    assert hs.median(hs.asarray(x), axis=1, out=out) is out
    same(out, np.median(x, axis=1), "median out=")


def test_numpys_errors(hs, no_fallback):
    x = data(np.dtype(np.float64))
    check(hs, "quantile", x, 1.5)
    check(hs, "quantile", x, [-0.1, 0.5])
    check(hs, "quantile", x, 0.5, method="nonsense")
    check(hs, "quantile", x.astype(complex), 0.5)
    check(hs, "quantile", x > 0, 0.5)  # boolean subtract
    check(hs, "quantile", x, np.zeros((2, 2, 2)))
    check(hs, "median", x, axis=3)
    with pytest.raises(ValueError, match=r"Quantiles must be in the range \[0, 1\]"):
        hs.quantile(hs.asarray(x), 2)
    with pytest.raises(ValueError, match=r"Percentiles must be in the range"):
        hs.percentile(hs.asarray(x), 200)


# --------------------------------------------------------------------------- lexsort, digitize


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_lexsort_equals_numpys(hs, no_fallback, dtype):
    a = data(dtype, shape=(3, 20), seed=1)
    b = data(dtype, shape=(3, 20), seed=2)
    small = (data(np.dtype(np.int8), shape=(3, 20), seed=3) % 3).astype(dtype)
    same(
        hs.lexsort([hs.asarray(a[0]), hs.asarray(small[0])]),
        np.lexsort([a[0], small[0]]),
        "1-d",
    )
    for axis in (-1, 0):
        want = np.lexsort((a, b, small), axis=axis)
        got = hs.lexsort((hs.asarray(a), hs.asarray(b), hs.asarray(small)), axis=axis)
        same(got, want, f"axis={axis}")
    same(hs.lexsort(hs.asarray(small)), np.lexsort(small), "2-d array of keys")


def test_lexsort_errors(hs, no_fallback):
    with pytest.raises(TypeError):
        hs.lexsort([])
    with pytest.raises(ValueError):
        hs.lexsort([hs.asarray(np.arange(3)), hs.asarray(np.arange(4))])


@pytest.mark.parametrize("dtype", REAL, ids=str)
def test_digitize_both_directions(hs, no_fallback, dtype):
    x = data(dtype, shape=(5, 6), seed=4, nan=True)
    up = np.unique(data(dtype, shape=(8,), seed=5, nan=False))
    for bins in (up, up[::-1], up[:1], up[:0]):
        for right in (False, True):
            check(hs, "digitize", x, bins, right=right)
    check(
        hs,
        "digitize",
        x,
        np.array([1, 3, 2], dtype=dtype)
        if dtype.kind != "b"
        else np.array([True, False, True]),
    )


def test_digitize_errors(hs, no_fallback):
    check(hs, "digitize", np.array([1 + 1j]), np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match="monotonically"):
        hs.digitize(hs.asarray(np.arange(3.0)), hs.asarray(np.array([0.0, 2.0, 1.0])))


# --------------------------------------------------------------------------- sets


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_isin_equals_numpys(hs, no_fallback, dtype):
    e = data(dtype, shape=(4, 7, 6), seed=6)
    t = data(dtype, shape=(4, 7, 6), seed=7)[0, :3].reshape(-1)
    for test in (
        t,
        t[:0],
        t[:1],
        np.concatenate([t, [np.nan]]).astype(dtype) if dtype.kind in "fc" else t,
    ):
        for invert in (False, True):
            for kind in (None, "sort"):
                check(hs, "isin", e, test, invert=invert, kind=kind)
            check(hs, "isin", e[1, ::-2], test, assume_unique=False, invert=invert)
    check(hs, "isin", np.array(e.reshape(-1)[0]), t)  # 0-d element
    check(hs, "isin", e, t, kind="bogus")
    if dtype.kind not in "biu":
        check(hs, "isin", e, t, kind="table")


def test_isin_mixed_dtypes(hs, no_fallback):
    e = np.arange(-3, 8, dtype=np.int16)
    t = np.array([0.5, 2.0, 7.0, -3.0])
    check(hs, "isin", e, t)
    check(hs, "isin", t, e)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_set_operations_equal_numpys(hs, no_fallback, dtype):
    a = data(dtype, shape=(3, 8), seed=8)
    b = data(dtype, shape=(10,), seed=9)
    ha, hb = hs.asarray(a), hs.asarray(b)
    for name in ("intersect1d", "setdiff1d", "union1d", "setxor1d"):
        same(getattr(hs, name)(ha, hb), getattr(np, name)(a, b), name)
        same(
            getattr(hs, name)(ha[:0], hb), getattr(np, name)(a[:0], b), name + " empty"
        )
    ua, ub = np.unique(a), np.unique(b)
    hua, hub = hs.asarray(ua), hs.asarray(ub)
    for name in ("intersect1d", "setdiff1d", "setxor1d"):
        same(
            getattr(hs, name)(hua, hub, assume_unique=True),
            getattr(np, name)(ua, ub, assume_unique=True),
            name + " assume_unique",
        )
    for assume in (False, True):
        x, y = (ua, ub) if assume else (a, b)
        want = np.intersect1d(x, y, assume_unique=assume, return_indices=True)
        got = hs.intersect1d(
            hs.asarray(x), hs.asarray(y), assume_unique=assume, return_indices=True
        )
        for g, w, part in zip(got, want, ("values", "first", "second")):
            same(g, w, f"intersect1d return_indices {part}")
