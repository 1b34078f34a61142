"""Flips, splits, differences, tiling, triangles and small statistics (hassium._composed)
against NumPy: every dtype and layout, NumPy's errors, views where NumPy gives views, and
no fallback (HASSIUM_FALLBACK=error turns one into a failure)."""

import re
import warnings

import numpy as np
import pytest
from conftest import DTYPES, LAYOUTS, assert_same, both, sample
from test_ufuncs import F16_PRODUCT_RTOL, check


@pytest.fixture(autouse=True)
def natives_only(monkeypatch):
    monkeypatch.setenv("HASSIUM_FALLBACK", "error")


def run_cases(hs, h, n, cases, what):
    # Float16 sums and products round to half precision as they go, so their order moves
    # the last places (see F16_PRODUCT_RTOL).
    tol = F16_PRODUCT_RTOL if h.dtype == np.float16 else None
    for name, args, kwargs in cases:
        check(
            getattr(hs, name),
            getattr(np, name),
            (h, *args),
            (n, *args),
            f"{name}{args}{kwargs} on {what}",
            tol=tol,
            **kwargs,
        )


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_flips_splits_and_joins_match_numpy_on_every_layout(hs, dtype):
    h, n = both(hs, sample(dtype))
    cases = [
        ("flip", (), {}),
        ("flip", (0,), {}),
        ("flip", ((0, -1),), {}),
        ("flip", (3,), {}),
        ("fliplr", (), {}),
        ("flipud", (), {}),
        ("rot90", (), {}),
        ("rot90", (2,), {}),
        ("rot90", (-1, (0, -1)), {}),
        ("rot90", (1, (1, 1)), {}),
        ("array_split", (2,), {}),
        ("array_split", ([1, 2], -1), {}),
        ("array_split", (0,), {}),
        ("split", (2,), {}),
        ("split", (3,), {}),
        ("hsplit", ([1],), {}),
        ("vsplit", (1,), {}),
        ("dsplit", ([0, 3],), {}),
        ("tile", ((2, 1),), {}),
        ("tile", (0,), {}),
        ("tile", ((1, 2, 1, 1),), {}),
        ("append", ([1],), {}),
    ]
    for layout, view in LAYOUTS.items():
        run_cases(hs, view(h), view(n), cases, layout)
        check(
            hs.column_stack,
            np.column_stack,
            ([view(h), view(h)],),
            ([view(n), view(n)],),
            f"column_stack {layout}",
        )
        check(
            hs.dstack,
            np.dstack,
            ([view(h), view(h)],),
            ([view(n), view(n)],),
            f"dstack {layout}",
        )


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_differences_match_numpy_on_every_layout(hs, dtype):
    h, n = both(hs, sample(dtype))
    cases = [
        ("diff", (), {}),
        ("diff", (2,), {"axis": 0}),
        ("diff", (1,), {"axis": 1, "prepend": 0}),
        ("diff", (1,), {"append": 1}),
        ("diff", (7,), {}),
        ("ediff1d", (), {}),
        ("ediff1d", (), {"to_begin": 1, "to_end": [2, 3]}),
        ("trapezoid", (), {}),
        ("average", (), {}),
        ("average", (), {"axis": 0, "returned": True}),
        ("argwhere", (), {}),
    ]
    if dtype != np.float16:
        # A float16 sum that cancels differs in its last place with the order of adding
        # (NumPy itself adds in float32 along a contiguous axis and in float16 across).
        cases += [("trapezoid", (), {"dx": 0.5, "axis": 0})]
    if dtype.kind != "c":  # the maximum of complex numbers is not native
        cases += [("ptp", (), {}), ("ptp", (), {"axis": 1, "keepdims": True})]
    if dtype.kind != "b":  # NumPy's gradient of booleans is its own TypeError
        cases += [
            ("gradient", (), {}),
            ("gradient", (0.5,), {"axis": -1, "edge_order": 2}),
        ]
    for layout, view in LAYOUTS.items():
        run_cases(hs, view(h), view(n), cases, layout)


@pytest.mark.parametrize("dtype", ["int32", "float32", "float64", "complex128"])
def test_gradient_on_uneven_coordinates_matches_numpy(hs, dtype):
    h, n = both(hs, sample(dtype, shape=(4, 6)))
    ys = np.array([0.0, 0.5, 2.0, 2.5])
    xs = np.array([0.0, 1.0, 1.5, 3.5, 4.0, 6.0])
    for edge in (1, 2):
        check(
            hs.gradient,
            np.gradient,
            (h, hs.asarray(ys), hs.asarray(xs)),
            (n, ys, xs),
            f"gradient uneven, edge_order={edge}",
            edge_order=edge,
        )
        # Evenly spaced coordinates take the uniform formulas, in NumPy and here.
        even = np.arange(6) * 2
        check(
            hs.gradient,
            np.gradient,
            (h, hs.asarray(even)),
            (n, even),
            "gradient even coordinates",
            axis=1,
            edge_order=edge,
        )
    check(hs.gradient, np.gradient, (h, 1, 2, 3), (n, 1, 2, 3), "too many spacings")
    check(hs.gradient, np.gradient, (h[:1],), (n[:1],), "one row", edge_order=1)
    check(hs.gradient, np.gradient, (h,), (n,), "edge_order 3", edge_order=3)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_triangles_match_numpy(hs, dtype):
    h, n = both(hs, sample(dtype, shape=(2, 4, 3)))
    for k in (-2, 0, 1, 5):
        for name in ("tril", "triu"):
            check(getattr(hs, name), getattr(np, name), (h, k), (n, k), f"{name} k={k}")
            check(
                getattr(hs, name),
                getattr(np, name),
                (h[0, :, 0], k),
                (n[0, :, 0], k),
                f"{name} of 1-D, k={k}",
            )
        check(hs.tri, np.tri, (3, 5, k), (3, 5, k), f"tri k={k}", dtype=dtype)


def _on_hassium(hs, kwargs):
    return {
        k: hs.asarray(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()
    }


def test_bincount_matches_numpy(hs):
    keys = np.array([0, 3, 3, 1, 7, 3, 0])
    h = hs.asarray(keys)
    for kwargs in ({}, {"minlength": 10}, {"minlength": 2}, {"weights": keys * 0.5}):
        got = hs.bincount(h, **_on_hassium(hs, kwargs))
        assert_same(got, np.bincount(keys, **kwargs), what=str(kwargs))
    assert_same(hs.bincount(h[::-2]), np.bincount(keys[::-2]))
    assert_same(hs.bincount(h.astype(np.uint64)), np.bincount(keys.astype(np.uint64)))
    assert_same(hs.bincount([], minlength=3), np.bincount([], minlength=3))
    # Empty with weights: NumPy's integer zeros, not float ones (found by the fuzzing).
    empty = np.array([], dtype=np.int64)
    for kwargs in (
        {"weights": np.array([])},
        {"weights": np.array([]), "minlength": 3},
    ):
        got = hs.bincount(hs.asarray(empty), **_on_hassium(hs, kwargs))
        assert_same(got, np.bincount(empty, **kwargs), what=f"empty {kwargs}")
    for bad, kwargs in [
        (np.array([0, -1]), {}),
        (np.array([0.0, 1.0]), {}),
        (np.array([[0, 1]]), {}),
        (np.array(1), {}),
        (keys, {"minlength": -1}),
        (keys, {"weights": np.ones(3)}),
        (keys, {"weights": keys * 1j}),
    ]:
        _same_error(hs.bincount, np.bincount, hs, bad, kwargs)
    # Weights of the right size but not 1-d: NumPy's depth errors, not a length error.
    for weights, says in [(np.ones((2, 2)), "too deep"), (np.array(1.0), "too small")]:
        with pytest.raises(ValueError, match=says):
            np.bincount(np.arange(4), weights=weights)
        with pytest.raises(ValueError, match=says):
            hs.bincount(hs.arange(4), weights=hs.asarray(weights))


def test_weighted_average_matches_numpy(hs):
    a = np.arange(6.0).reshape(2, 3)
    w = np.array([1.0, 2.0, 3.0])
    for kwargs in [
        {"weights": w, "axis": 1, "returned": True},
        {"weights": a + 1},
        {"weights": np.arange(24.0).reshape(4, 3, 2)[0].T, "axis": (1, 0)},
        {"weights": w},  # shapes differ and no axis: TypeError
        {"weights": w, "axis": 0},  # wrong length along the axis: ValueError
        {"weights": np.array([1.0, -1.0]), "axis": 0},  # sums to zero
    ]:
        try:
            expected = np.average(a, **kwargs)
        except Exception as e:  # noqa: BLE001 - NumPy's type is the expectation
            _same_error(hs.average, np.average, hs, a, kwargs, type(e))
            continue
        got = hs.average(hs.asarray(a), **_on_hassium(hs, kwargs))
        assert_same(got, expected, what=str(kwargs))


def _same_error(hs_func, np_func, hs, arg, kwargs, error=None):
    """``hs_func`` raises what ``np_func`` raises for ``arg`` and ``kwargs``."""
    if error is None:
        with pytest.raises(Exception) as caught:
            np_func(arg, **kwargs)
        error = caught.type
    with pytest.raises(error):
        np.asarray(hs_func(hs.asarray(arg), **_on_hassium(hs, kwargs)))


def test_flips_and_splits_are_views_and_diff_tile_are_copies(hs):
    h, n = both(hs, np.arange(12).reshape(3, 4))
    for name, args in [("flip", ()), ("fliplr", ()), ("flipud", ()), ("rot90", (1,))]:
        getattr(hs, name)(h, *args)[0, 0] = -1
        getattr(np, name)(n, *args)[0, 0] = -1
        assert_same(h, n, what=name)
    hs.split(h, 2, axis=1)[1][0, 0] = -2
    np.split(n, 2, axis=1)[1][0, 0] = -2
    hs.array_split(h, [1])[1][1, 1] = -3
    np.array_split(n, [1])[1][1, 1] = -3
    assert_same(h, n, what="splits")
    for name, args in [("tile", (1,)), ("diff", ()), ("append", ([1],))]:
        out = getattr(hs, name)(h, *args)
        out.reshape(-1)[0] = 99
        assert_same(h, n, what=f"{name} wrote into its argument")


def test_composed_functions_record_lazily(hs):
    if not hasattr(hs, "stats"):
        pytest.skip("NumPy has no runtime to count flushes of")
    a = hs.arange(1000.0) ** 2
    before = hs.stats()["flushes"]
    g = hs.gradient(a, 0.5, edge_order=2)
    d = hs.diff(hs.flip(a), 2)
    t = hs.trapezoid(hs.tile(a, 2))
    parts = hs.split(hs.rot90(a.reshape(10, 100)), 5, axis=1)
    assert hs.stats()["flushes"] == before, "recording them flushed"
    n = np.arange(1000.0) ** 2
    assert_same(g, np.gradient(n, 0.5, edge_order=2))
    assert_same(d, np.diff(np.flip(n), 2))
    assert_same(t, np.trapezoid(np.tile(n, 2)))
    assert_same(parts, np.split(np.rot90(n.reshape(10, 100)), 5, axis=1))


def test_print_options_are_numpys_and_apply_to_hassium_arrays(hs):
    h, n = both(hs, np.arange(5.0) / 3)
    with hs.printoptions(precision=2, suppress=True):
        assert str(h) == str(n)
        assert hs.get_printoptions()["precision"] == 2
    assert str(h) == str(n)
    assert hs.format_float_positional(np.float64(1.5)) == "1.5"


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_diagonals_match_numpy_on_every_layout(hs, dtype):
    h, n = both(hs, sample(dtype, kind=positive_for_half(dtype)))
    cases = [
        ("diagonal", (), {}),
        ("diagonal", (1,), {}),
        ("diagonal", (-2, 2, 0), {}),
        ("diagonal", (0, -1, -2), {}),
        ("diagonal", (9,), {}),
        ("trace", (), {}),
        ("trace", (1, 1, 2), {}),
        ("diag", (), {}),
        ("diag", (-1,), {}),
    ]
    for layout, view in LAYOUTS.items():
        run_cases(hs, view(h), view(n), cases, layout)
    check(hs.diag, np.diag, (h[1, 2], 2), (n[1, 2], 2), "diag of 1-D")


def test_diagonal_is_a_read_only_view_that_sees_later_writes(hs):
    """NumPy's diagonal is a read-only view: a write into it raises, a later write into
    its array shows through it, and once made writeable it writes into the array."""
    for xp_case in [
        lambda xp: (xp.arange(12.0).reshape(3, 4), (1,)),
        lambda xp: (xp.arange(60.0).reshape(3, 4, 5)[::-1, :, ::2], (-1, 2, 0)),
        lambda xp: (xp.arange(12).reshape(3, 4).T * 2, (0,)),
    ]:
        arrays = {}
        for xp in (hs, np):
            a, args = xp_case(xp)
            d = a.diagonal(*args)
            assert not d.flags.writeable
            with pytest.raises(
                ValueError, match="^assignment destination is read-only$"
            ):
                d[...] = 0
            a[...] = a * 3 + 1  # the view sees it
            seen = np.array(d)
            d.setflags(write=True)
            d[...] = -7  # and now writes through
            arrays[xp] = (a, d, seen)
        for got, want in zip(arrays[hs], arrays[np]):
            assert_same(got, want)
    a = hs.ones((3, 3))
    with pytest.raises(ValueError):
        hs._hassium.diagonal(a, 0, 0, 2)  # the primitive checks its axes too


def positive_for_half(dtype):
    """Float16 data without cancellation: a float16 sum rounds as it goes, and a sum that
    cancels keeps only its rounding errors, which differ with the order of adding."""
    return "positive" if dtype == np.float16 else "mixed"


def with_nans(dtype, shape=(3, 4, 5)):
    data = sample(dtype, shape=shape, kind=positive_for_half(dtype))
    if dtype.kind in "fc":
        flat = data.reshape(-1)
        flat[::3] = np.nan
        data[:, 1, :] = np.nan  # whole NaN slices along the last two axes
        if dtype.kind == "f":
            flat[4::7] = np.inf
            flat[5::11] = -np.inf
    return data


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_nan_skipping_functions_match_numpy_on_every_layout(hs, dtype):
    h, n = both(hs, with_nans(dtype))
    cases = [
        ("nansum", (), {}),
        ("nansum", (), {"axis": 1, "keepdims": True}),
        ("nancumsum", (), {"axis": -1}),
        ("nanmean", (), {"axis": 0}),
        ("nanmean", (), {"axis": (0, 2)}),
        ("nanvar", (), {"axis": -1, "ddof": 1}),
        ("nanstd", (), {"axis": 2}),
        ("nan_to_num", (), {}),
        ("nan_to_num", (), {"nan": -1.0, "posinf": 7.0, "neginf": -7.0}),
        ("angle", (), {}),
    ]
    if dtype != np.float16:  # a float16 product's rounding depends on its order
        cases += [("nanprod", (), {"axis": 2}), ("nancumprod", (), {"axis": 0})]
    if dtype.kind != "c":  # complex order is NumPy's own
        cases += [
            ("nanmax", (), {"axis": 1}),
            ("nanmin", (), {}),
            ("nanargmax", (), {"axis": 0}),
            ("nanargmin", (), {"axis": -1}),
        ]
    else:
        cases = [c for c in cases if c[0] != "nan_to_num"]
    for layout, view in LAYOUTS.items():
        run_cases(hs, view(h), view(n), cases, layout)


def test_nan_skipping_functions_warn_and_raise_like_numpy(hs):
    data = np.array([[1.0, np.nan], [np.nan, np.nan]])
    h = hs.asarray(data)
    for name, kwargs, message in [
        ("nanmean", {"axis": 1}, "Mean of empty slice"),
        ("nanmax", {"axis": 1}, "All-NaN slice encountered"),
        ("nanmin", {"axis": 0}, "All-NaN slice encountered"),
        ("nanvar", {"axis": 1, "ddof": 1}, "Degrees of freedom <= 0"),
    ]:
        with pytest.warns(RuntimeWarning, match=message):
            got = getattr(hs, name)(h, **kwargs)
        with pytest.warns(RuntimeWarning, match=message):
            expected = getattr(np, name)(data, **kwargs)
        assert_same(got, expected, what=name)
    for name in ("nanargmax", "nanargmin"):
        with pytest.raises(ValueError, match="All-NaN slice"):
            getattr(hs, name)(h, axis=1)
    a = hs.asarray(np.array([1.0, np.nan, np.inf]))
    assert hs.nan_to_num(a, copy=False) is a
    assert_same(a, np.nan_to_num(np.array([1.0, np.nan, np.inf])))


@pytest.mark.parametrize("dtype", ["int16", "int64", "float16", "float32", "float64"])
def test_histogram_with_equal_bins_matches_numpy_exactly(hs, dtype):
    """Counts exactly, edges bit for bit: the bin of a value within an ulp of an edge is
    where NumPy puts it."""
    rng = np.random.default_rng(7)
    for trial in range(40):
        n = int(rng.integers(0, 2000))
        scale = float(rng.choice([1e-3, 1.0, 1e3]))
        data = rng.standard_normal(n) * scale
        if trial % 3 == 0:
            data = np.round(data)
        data = data.astype(dtype)
        bins = int(rng.integers(1, 50))
        kwargs = {}
        if trial % 4 == 1:
            lo = float(rng.standard_normal() * scale)
            kwargs["range"] = (
                lo,
                lo + abs(float(rng.standard_normal() * scale)) + 1e-3,
            )
        if trial % 5 == 2:
            kwargs["weights"] = rng.random(n)
        if trial % 7 == 3:
            kwargs["density"] = True
        got = hs.histogram(hs.asarray(data), bins, **_on_hassium(hs, kwargs))
        assert_same(
            got, np.histogram(data, bins, **kwargs), what=f"{dtype} {trial} {kwargs}"
        )
    h, n = both(hs, sample(dtype))
    for layout, view in LAYOUTS.items():
        run_cases(hs, view(h), view(n), [("histogram", (7,), {})], layout)
    for bad in [{"bins": 0}, {"bins": 2.5}, {"range": (3, 1)}, {"range": (0, np.inf)}]:
        _same_error(hs.histogram, np.histogram, hs, np.arange(5.0), bad)
    _same_error(hs.histogram, np.histogram, hs, np.array([1.0, np.nan]), {})


@pytest.mark.parametrize("dtype", ["int32", "float32", "float64"])
def test_covariance_correlation_and_convolution_match_numpy(hs, dtype):
    h, n = both(hs, sample(dtype, shape=(3, 8)))
    for layout, view in [
        ("contiguous", lambda a: a),
        ("reversed", lambda a: a[::-1, ::-2]),
    ]:
        hv, nv = view(h), view(n)
        cases = [
            ("cov", (), {}),
            ("cov", (), {"rowvar": False}),
            ("cov", (), {"bias": True}),
            ("cov", (), {"ddof": 2}),
            ("corrcoef", (), {}),
            ("corrcoef", (), {"rowvar": False}),
        ]
        run_cases(hs, hv, nv, cases, layout)
        check(hs.cov, np.cov, (hv[0], hv[1]), (nv[0], nv[1]), f"cov(x, y) {layout}")
        check(
            hs.corrcoef,
            np.corrcoef,
            (hv[0], hv[2]),
            (nv[0], nv[2]),
            f"corrcoef {layout}",
        )
        for mode in ("full", "same", "valid"):
            for k in (1, 2, 5):
                check(
                    hs.convolve,
                    np.convolve,
                    (hv[0], hv[1, :k]),
                    (nv[0], nv[1, :k]),
                    f"convolve k={k} {mode} {layout}",
                    mode=mode,
                )
                check(
                    hs.convolve,
                    np.convolve,
                    (hv[1, :k], hv[0]),
                    (nv[1, :k], nv[0]),
                    f"convolve swapped k={k} {mode} {layout}",
                    mode=mode,
                )
    for args in [(np.zeros(0), np.ones(2)), (np.ones(2), np.zeros(0))]:
        _convolve_error(hs, *args)
    _convolve_error(hs, np.ones(3), np.ones(2), mode="bogus")


def _convolve_error(hs, a, v, **kwargs):
    with pytest.raises(Exception) as caught:
        np.convolve(a, v, **kwargs)
    with pytest.raises(caught.type):
        np.asarray(hs.convolve(hs.asarray(a), hs.asarray(v), **kwargs))


@pytest.mark.parametrize("dtype", ["int64", "float64", "complex128"])
def test_matrix_power_matches_numpy(hs, dtype):
    h, n = both(hs, sample(dtype, shape=(2, 3, 3)) / (1 if dtype == "int64" else 4))
    for power in (0, 1, 2, 3, 6, 11):
        check(
            hs.linalg.matrix_power,
            np.linalg.matrix_power,
            (h, power),
            (n, power),
            str(power),
        )
        check(
            hs.linalg.matrix_power,
            np.linalg.matrix_power,
            (h[0].T, power),
            (n[0].T, power),
            f"{power} of a transposed matrix",
        )
    for bad in [(h[0, 0], 2), (h[:, :2], 2), (h, 1.5)]:
        nbad = (np.asarray(bad[0]), bad[1])
        check(
            hs.linalg.matrix_power, np.linalg.matrix_power, bad, nbad, f"bad {bad[1]}"
        )


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_take_take_along_axis_and_repeat_match_numpy_on_every_layout(hs, dtype):
    h, n = both(hs, sample(dtype))
    cases = [
        ("take", ([0, -1, 2],), {}),
        ("take", ([[1, 0], [2, 2]],), {"axis": -1}),
        ("take", (1,), {"axis": 0}),
        ("take", ([7, -9],), {"axis": 1, "mode": "wrap"}),
        ("take", ([7, -9],), {"axis": 1, "mode": "clip"}),
        ("take", ([99],), {}),
        ("repeat", (2,), {}),
        ("repeat", (3,), {"axis": 1}),
        ("repeat", (0,), {"axis": -1}),
    ]
    for layout, view in LAYOUTS.items():
        hv, nv = view(h), view(n)
        run_cases(hs, hv, nv, cases, layout)
        if nv.ndim:
            idx = (np.arange(nv.size).reshape(nv.shape) * 7) % max(nv.shape[-1], 1)
            check(
                hs.take_along_axis,
                np.take_along_axis,
                (hv, hs.asarray(idx), -1),
                (nv, idx, -1),
                f"take_along_axis {layout}",
            )


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_pad_matches_numpy_on_every_layout(hs, dtype):
    """``pad`` in the five copying modes, borders up to the array's extent (the widest
    ``reflect`` allows), per-axis widths and constants; corners as NumPy fills them."""
    for layout, view in LAYOUTS.items():
        h, n = (view(x) for x in both(hs, sample(dtype, shape=(4, 5, 6))))
        empty = 0 in n.shape
        for mode in ["constant", "edge", "reflect", "symmetric", "wrap"]:
            if empty and mode != "constant":
                continue  # NumPy raises: nothing to extend (through NumPy here)
            widths = [1, (0, 2), [(1, 0)] * n.ndim]
            if not empty and n.ndim:
                widths.append([(d - 1, d - 1) for d in n.shape])
            for w in widths:
                check(
                    hs.pad, np.pad, (h, w), (n, w), f"{mode} {w} on {layout}", mode=mode
                )
        if n.ndim:
            cv = [(2, 3)] * n.ndim
            check(
                hs.pad,
                np.pad,
                (h, 2),
                (n, 2),
                f"constant_values on {layout}",
                constant_values=np.array(cv, dtype=n.dtype),
            )


def test_pad_records_lazily_and_wider_borders_go_through_numpy(hs, monkeypatch):
    if not hasattr(hs, "stats"):
        pytest.skip("NumPy has no runtime to count flushes of")
    a = hs.arange(12.0).reshape(3, 4) * 2
    before = hs.stats()["flushes"]
    p = hs.pad(a, ((1, 2), (2, 1)), mode="reflect")
    q = hs.pad(p, 1, mode="edge") + 1
    assert hs.stats()["flushes"] == before, "recording the pads flushed"
    n = np.arange(12.0).reshape(3, 4) * 2
    assert_same(
        q, np.pad(np.pad(n, ((1, 2), (2, 1)), mode="reflect"), 1, mode="edge") + 1
    )
    # Borders wider than the array (NumPy reflects repeatedly) and the statistic modes
    # are NumPy's: a fallback, with NumPy's values.
    monkeypatch.setenv("HASSIUM_FALLBACK", "silent")
    assert_same(hs.pad(a, 5, mode="reflect"), np.pad(n, 5, mode="reflect"))
    assert_same(hs.pad(a, 2, mode="mean"), np.pad(n, 2, mode="mean"))
    with pytest.raises(ValueError):
        hs.pad(a, -1)


SMALL_FUNCTION_DTYPES = ["int8", "uint16", "int64", "float32", "float64", "complex128"]


@pytest.mark.parametrize("dtype", SMALL_FUNCTION_DTYPES)
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_small_functions_match_numpy_on_every_layout(hs, dtype, layout):
    """fix, sinc, isreal, iscomplex, real_if_close, polyval, rollaxis and
    ascontiguousarray record NumPy's own operations (they used to fall back)."""
    h, n = both(hs, sample(dtype))
    h, n = LAYOUTS[layout](h), LAYOUTS[layout](n)
    real = np.dtype(dtype).kind != "c"
    cases = [("isreal", (), {}), ("iscomplex", (), {}), ("real_if_close", (), {})]
    cases += [("ascontiguousarray", (), {})]
    if real:
        cases += [("fix", (), {}), ("polyval", (), {})]
    if n.dtype.kind == "f":
        cases += [("sinc", (), {})]
    if n.ndim:
        cases += [("rollaxis", (n.ndim - 1,), {}), ("rollaxis", (0, n.ndim), {})]
    for name, args, kwargs in cases:
        if name == "polyval":
            # polyval(p, x): the coefficients first.
            check(
                hs.polyval,
                np.polyval,
                ([2, -1, 3], h),
                ([2, -1, 3], n),
                f"polyval {layout}",
            )
            continue
        check(
            getattr(hs, name),
            getattr(np, name),
            (h, *args),
            (n, *args),
            f"{name} {layout}",
            **kwargs,
        )
    got = hs.ascontiguousarray(h)
    assert got.flags.c_contiguous and got.ndim == max(n.ndim, 1)


def test_select_vander_windows_and_logspace_match_numpy(hs):
    h, n = both(hs, sample("float64", shape=(4, 5)))
    check(
        hs.select,
        np.select,
        ([h > 0.5, h < -0.5], [h, -h * 2], 7),
        ([n > 0.5, n < -0.5], [n, -n * 2], 7),
        "select",
    )
    check(
        hs.select,
        np.select,
        ([h > 0], [1], np.int8(3)),
        ([n > 0], [1], np.int8(3)),
        "select ints",
    )
    check(
        hs.select,
        np.select,
        ([h > 0, True], [h[0], 2.5]),
        ([n > 0, True], [n[0], 2.5]),
        "select broadcast",
    )
    for p in ([1.5], [], [[1, 2], [3, 4]], [3, 0, -2, 0.5]):
        x, nx = both(hs, sample("float32", shape=(2,)))
        check(hs.polyval, np.polyval, (p, x), (p, nx), f"polyval {p}")
    for x in ([1, 2, 3], [0.5, -1.5, 2.0, 3.0], []):
        for N, inc in [(None, False), (2, True), (0, False), (5, True)]:
            check(
                hs.vander, np.vander, (x,), (x,), f"vander {x} {N}", N=N, increasing=inc
            )
    for name in ["hanning", "hamming", "blackman", "bartlett"]:
        for M in [-1, 0, 1, 2, 7, 12, 3.0]:
            assert_same(
                getattr(hs, name)(M), getattr(np, name)(M), rtol=0, what=f"{name}({M})"
            )
    check(hs.logspace, np.logspace, (0, 2, 7), (0, 2, 7), "logspace")
    check(
        hs.logspace,
        np.logspace,
        (-1, 3),
        (-1, 3),
        "logspace base 2",
        num=9,
        base=2,
        dtype=np.float32,
    )
    check(
        hs.logspace,
        np.logspace,
        (0, 1),
        (0, 1),
        "logspace no endpoint",
        num=4,
        endpoint=False,
    )


def test_small_function_errors_match_numpy(hs):
    a = hs.ones((2, 3))
    for call in [
        lambda m: m.select([], []),
        lambda m: m.select([m.ones(2) > 0], []),
        lambda m: m.select([m.ones(2)], [m.ones(2)]),  # a condition that is not boolean
        lambda m: m.vander(m.ones((2, 2))),
        lambda m: m.rollaxis(m.ones((2, 3)), 0, 4),
        lambda m: m.rollaxis(m.ones((2, 3)), 3),
        lambda m: m.polyval(2.0, m.ones(3)),
    ]:
        with pytest.raises(Exception) as expected:
            call(np)
        with pytest.raises(type(expected.value)):
            call(hs)
    assert a.shape == (2, 3)


@pytest.mark.parametrize("dtype", ["bool", "int16", "float64", "complex64"])
@pytest.mark.parametrize(
    "layout", ["contiguous", "negative_stride", "non_contiguous", "one_d"]
)
def test_delete_and_insert_match_numpy(hs, dtype, layout):
    h, n = both(hs, sample(dtype))
    h, n = LAYOUTS[layout](h), LAYOUTS[layout](n)
    last = n.ndim - 1
    size = n.shape[last]
    for obj, axis in [
        (1, None),
        (-1, last),
        (0, 0),
        (slice(1, 3), last),
        (slice(None, None, 2), 0),
        ([0, size - 1], last),
        (np.arange(size) % 2 == 0, last),
        ([], 0),
        (list(range(0, n.size, 2)), None),  # many runs: one gather
    ]:
        check(
            hs.delete, np.delete, (h, obj), (n, obj), f"delete {obj} {axis}", axis=axis
        )
    for obj, values, axis in [
        (0, 1, None),
        (2, [1, 0], None),
        (size, 1, last),
        (-1, n.take([0], axis=last), last),
        (1, [[1]], 0),
    ]:
        v = values if not isinstance(values, np.ndarray) else hs.asarray(values)
        check(
            hs.insert,
            np.insert,
            (h, obj, v),
            (n, obj, values),
            f"insert {obj} {axis}",
            axis=axis,
        )


def test_delete_and_insert_errors_match_numpy(hs):
    n = np.ones((2, 3))
    for call in [
        lambda m, x: m.delete(x, 3, axis=1),
        lambda m, x: m.delete(x, [True, False], axis=1),
        lambda m, x: m.delete(x, 0, axis=2),
        lambda m, x: m.insert(x, 4, 1.0, axis=1),
        lambda m, x: m.insert(x, -4, 1.0, axis=1),
    ]:
        with pytest.raises(Exception) as expected:
            call(np, n)
        with pytest.raises(type(expected.value), match=str(expected.value)[:20]):
            call(hs, hs.asarray(n))


@pytest.mark.parametrize("dtype", [*SMALL_FUNCTION_DTYPES, "bool", "float16"])
def test_cross_kron_unwrap_and_resize_match_numpy_on_every_layout(hs, dtype):
    h, n = both(hs, sample(dtype))
    h2, n2 = both(hs, sample(dtype, seed=1))
    small, nsmall = both(hs, sample(dtype, shape=(2, 3), seed=2))
    for layout, view in LAYOUTS.items():
        w, nw = view(h2), view(n2)
        # Vectors along axis 0 (3 long, or a length NumPy rejects), then along axis 1
        # (2 long where the layout makes it so) against them.
        cases = [
            ("cross", (w,), {"axis": 0}),
            ("cross", (w,), {"axisa": 0, "axisb": 0, "axisc": -1}),
            ("kron", (small,), {}),
            ("unwrap", (), {}),
            ("unwrap", (1.0,), {"axis": 0}),
            ("unwrap", (), {"period": 4}),
            ("unwrap", (), {"period": 5, "axis": 0}),
            ("resize", ((4, 7),), {}),
            ("resize", (3,), {}),
            ("resize", ((2, 0),), {}),
        ]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # 2-vectors
            run_cases(hs, view(h), view(n), cases, layout)
            for name, args, kwargs in cases[:2]:  # the other way round
                check(
                    getattr(hs, name),
                    getattr(np, name),
                    (w[:2] if w.ndim else w, view(h), *args),
                    (nw[:2] if nw.ndim else nw, view(n), *args),
                    f"{name} 2 against 3 {kwargs} on {layout}",
                    **kwargs,
                )
        check(hs.kron, np.kron, (small, view(h)), (nsmall, view(n)), f"kron {layout}")


def test_cross_broadcasts_and_warns_of_2_vectors_like_numpy(hs):
    h, n = both(hs, sample("float64", shape=(4, 1, 3)))
    h2, n2 = both(hs, sample("float64", shape=(5, 3), seed=1))
    check(hs.cross, np.cross, (h, h2), (n, n2), "broadcast")
    check(hs.cross, np.cross, (h[..., :2], h2), (n[..., :2], n2), "2 and 3")
    check(hs.cross, np.cross, (h, h2[:, 1:]), (n, n2[:, 1:]), "3 and 2")
    check(hs.cross, np.cross, (h[0, 0, :2], h2[0, :2]), (n[0, 0, :2], n2[0, :2]), "0-d")
    check(hs.cross, np.cross, (h, h2), (n, n2), "axisc", axisc=0)
    with pytest.warns(DeprecationWarning, match="2-dimensional vectors"):
        hs.cross(h[..., :2], h2[..., :2])
    check(hs.kron, np.kron, (h, 3), (n, 3), "kron by a scalar")
    check(hs.kron, np.kron, ([1, 2], h2), ([1, 2], n2), "kron of a list")


def test_interp_matches_numpy(hs):
    """NumPy's C loop, step for step: the cpu and reference engines agree with it to the
    last bit; the test allows NumPy's float64 tolerance, for engines that contract a
    product and a sum into one rounding."""
    xp = [0.0, 1.0, 1.5, 1.5, 3.0, 4.0]  # a repeated point: a jump
    fp = [1.0, -2.0, 0.5, 3.0, np.inf, 7.0]  # an infinity: NumPy's repairs of NaN
    x = np.array([-1, 0, 0.3, 1, 1.2, 1.5, 2, 3, 3.5, 4, 5, np.nan, -np.inf, np.inf])
    hx, nx = both(hs, x)
    hxp, nxp = both(hs, np.array(xp))
    check(hs.interp, np.interp, (hx, hxp, fp), (nx, nxp, fp), "special points")
    check(hs.interp, np.interp, (hx, xp, fp), (nx, xp, fp), "ends", left=-7, right=9.5)
    h, n = both(hs, sample("float64") * 2)
    points = np.sort(sample("float64", shape=(25,), seed=1) * 2)
    values = sample("float32", shape=(25,), seed=2)
    for layout, view in LAYOUTS.items():
        check(
            hs.interp,
            np.interp,
            (view(h), hs.asarray(points), hs.asarray(values)),
            (view(n), points, values),
            f"interp on {layout}",
        )
    check(
        hs.interp,
        np.interp,
        (2.5, [1, 2, 3], [3, 4, 5]),
        (2.5, [1, 2, 3], [3, 4, 5]),
        "0-d",
    )
    ints, nints = both(hs, np.arange(-1, 6, dtype=np.int16))
    check(
        hs.interp,
        np.interp,
        (ints, [1, 2, 4], [3, 4, 5]),
        (nints, [1, 2, 4], [3, 4, 5]),
        "ints",
    )
    check(
        hs.interp,
        np.interp,
        (hx, [1.0], [5.0]),
        (nx, [1.0], [5.0]),
        "one point",
        left=0,
    )
    check(hs.interp, np.interp, (hx[:0], xp, fp), (nx[:0], xp, fp), "no x")


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "float32", "complex128"])
@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
def test_choose_matches_numpy(hs, dtype, mode):
    choices = [sample(dtype, shape=(4, 5), seed=s) for s in range(3)]
    hc = [hs.asarray(c) for c in choices]
    i, ni = both(hs, (sample("int64", shape=(4, 5)) % 3))
    check(hs.choose, np.choose, (i, hc), (ni, choices), "choose", mode=mode)
    j, nj = both(hs, sample("int64", shape=(4, 5)) - 2)  # out of range
    check(hs.choose, np.choose, (j, hc), (nj, choices), "outside", mode=mode)
    check(
        hs.choose,
        np.choose,
        (i[::-1, :1], [hc[0][0], hc[1][::-1, ::-2].T.T, 2]),
        (ni[::-1, :1], [choices[0][0], choices[1][::-1, ::-2].T.T, 2]),
        "broadcast, a Python scalar",
        mode=mode,
    )
    check(hs.choose, np.choose, (i, hs.stack(hc)), (ni, np.stack(choices)), "one array")
    check(hs.choose, np.choose, (1, [1, 2]), (1, [1, 2]), "0-d", mode=mode)
    check(hs.choose, np.choose, (i[:0], hc), (ni[:0], choices), "empty", mode=mode)


def test_choose_converts_like_numpy_and_writes_out(hs):
    small = [hs.asarray(np.int8([1, 2])), 300]  # a Python int wraps into int8
    check(
        hs.choose, np.choose, ([0, 1], small), ([0, 1], [np.int8([1, 2]), 300]), "wrap"
    )
    mixed = [np.float32([1, 2]), np.int64(3)]  # a NumPy scalar is strong
    check(hs.choose, np.choose, ([0, 1], mixed), ([0, 1], mixed), "strong scalar")
    out, nout = both(hs, np.zeros(2, np.int64))
    assert hs.choose([0, 1], [[1.5, 2], [3, 4]], out=out) is out
    np.choose([0, 1], [[1.5, 2], [3, 4]], out=nout)
    assert_same(out, nout, what="out=")


@pytest.mark.parametrize("order", ["C", "F"])
def test_unravel_and_ravel_multi_index_match_numpy(hs, order):
    for idx in [
        np.array([7, 3, 0, 11]),
        np.array([[7, 3]], np.int16),
        np.array([], np.intp),
        np.array([True, False]),
        np.array(5),
    ]:
        for shape in [(3, 4), 12, (2, 3, 2)]:
            h, n = both(hs, idx)
            check(
                hs.unravel_index,
                np.unravel_index,
                (h, shape),
                (n, shape),
                f"unravel_index {idx} {shape}",
                order=order,
            )
    h, n = both(hs, np.arange(12))
    check(
        hs.unravel_index,
        np.unravel_index,
        (h[::-3], (3, 4)),
        (n[::-3], (3, 4)),
        "view",
        order=order,
    )
    check(
        hs.unravel_index,
        np.unravel_index,
        (7, (3, 4)),
        (7, (3, 4)),
        "scalar",
        order=order,
    )
    rows, nrows = both(hs, np.array([[4], [-1], [1]]))
    cols, ncols = both(hs, np.array([-1, 5, 2, 0]))
    for mode in ["raise", "wrap", "clip", ("clip", "wrap")]:
        check(
            hs.ravel_multi_index,
            np.ravel_multi_index,
            ((rows, cols), (3, 4)),
            ((nrows, ncols), (3, 4)),
            f"ravel_multi_index {mode}",
            mode=mode,
            order=order,
        )
        check(
            hs.ravel_multi_index,
            np.ravel_multi_index,
            ((rows[2:], cols[2:]), (3, 4)),
            ((nrows[2:], ncols[2:]), (3, 4)),
            f"ravel_multi_index in range {mode}",
            mode=mode,
            order=order,
        )
    grid, ngrid = both(hs, np.array([[1, 2], [0, 3], [1, 1]]))
    check(
        hs.ravel_multi_index,
        np.ravel_multi_index,
        (grid, (2, 4, 5)),
        (ngrid, (2, 4, 5)),
        "array",
        order=order,
    )
    check(
        hs.ravel_multi_index,
        np.ravel_multi_index,
        ((1, 2), (3, 4)),
        ((1, 2), (3, 4)),
        "scalars",
        order=order,
    )


@pytest.mark.parametrize("dtype", ["bool", "int32", "float64", "complex64"])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_put_along_axis_matches_numpy(hs, dtype, axis):
    data = sample(dtype)
    rng = np.random.default_rng(3)
    order = np.argsort(rng.uniform(size=data.shape), axis=axis)
    idx = np.take(order, [0, 2], axis=axis)  # distinct positions along the axis
    values = sample(dtype, shape=idx.shape, seed=4)
    for what, vals, nvals in [
        ("values", hs.asarray(values), values),
        ("a scalar", 7, 7),
        ("broadcast", hs.asarray(values[:1]), values[:1]),
    ]:
        h, n = both(hs, data)
        hs.put_along_axis(h, hs.asarray(idx), vals, axis)
        np.put_along_axis(n, idx, nvals, axis)
        assert_same(h, n, what=f"put_along_axis {what}")
    # Through a transposed view, into its base.
    h, n = both(hs, data)
    tidx = np.take(np.argsort(rng.uniform(size=(5, 3, 4)), axis=axis), [1], axis=axis)
    hs.put_along_axis(h.transpose(2, 0, 1), hs.asarray(tidx), 9, axis)
    np.put_along_axis(n.transpose(2, 0, 1), tidx, 9, axis)
    assert_same(h, n, what="put_along_axis into a view")


def test_geomspace_matches_numpy(hs):
    """The end points are exact and NumPy's; the points between are powers, as close
    to NumPy's as the engine's `power` is."""
    for args, kwargs in [
        ((1, 1000, 4), {}),
        ((-1, -1000, 5), {}),
        ((1, 256, 9), {"endpoint": False}),
        ((2, 3, 0), {}),
        ((2, 3, 1), {}),
        ((1 + 1j, 1000 + 1000j, 4), {}),
        ((1, 1e6, 61), {"dtype": int}),
        ((np.float32(2), np.float32(50), 7), {"dtype": np.float32}),
        ((1, 1000, 4), {"axis": -1}),
    ]:
        check(hs.geomspace, np.geomspace, args, args, f"geomspace{args}", **kwargs)


def test_errors_of_cross_interp_choose_and_indices_match_numpy(hs):
    for call in [
        lambda m: m.cross(m.ones(4), m.ones(3)),
        lambda m: m.cross(m.ones(()), m.ones(3)),
        lambda m: m.cross(m.ones(3), m.ones(3), axisc=2),
        lambda m: m.cross(m.ones(3), m.ones(3), axisa=1),
        lambda m: m.cross(m.ones((2, 3)), m.ones((3, 3))),
        lambda m: m.cross(m.ones(3, bool), m.ones(3, bool)),
        lambda m: m.interp(m.asarray([1 + 1j]), [1, 2], [3, 4]),
        lambda m: m.interp(m.ones(1), m.ones((1, 2)), [3, 4]),
        lambda m: m.interp(m.ones(1), 1.0, [3, 4]),
        lambda m: m.interp(m.ones(1), [], []),
        lambda m: m.interp(m.ones(1), [1, 2], [3, 4, 5]),
        lambda m: m.interp(m.ones(1), [1, 2], [3, 4], left="a"),
        lambda m: m.unwrap(m.ones(())),
        lambda m: m.unwrap(m.ones(3), axis=1),
        lambda m: m.geomspace(0, 3, 4),
        lambda m: m.geomspace(1, 3, 4, axis=1),
        lambda m: m.choose(m.asarray([0.0, 1.0]), [[1, 2], [3, 4]]),
        lambda m: m.choose(m.asarray(np.array([0, 1], np.uint64)), [[1, 2], [3, 4]]),
        lambda m: m.choose(m.asarray([0, 2]), [[1, 2], [3, 4]]),
        lambda m: m.choose(m.asarray([0, -1]), [[1, 2], [3, 4]]),
        lambda m: m.choose(m.asarray([0, 1]), [[1, 2], [3, 4]], mode="bad"),
        lambda m: m.choose(m.asarray([0, 1]), []),
        lambda m: m.choose(m.asarray([0, 1]), [[1, 2, 3], [3, 4]]),
        lambda m: m.choose(m.asarray([0, 1]), [[1, 2], [3, 4]], out=m.zeros(3, int)),
        lambda m: m.resize(m.ones(3), (2, -1)),
        lambda m: m.unravel_index(m.asarray([1.0]), (3,)),
        lambda m: m.unravel_index(m.asarray([5]), (3,)),
        lambda m: m.unravel_index(m.asarray([1, -1]), (3,)),
        lambda m: m.unravel_index(m.asarray([1]), (3, 0)),
        lambda m: m.unravel_index(m.asarray([1]), (3,), order="A"),
        lambda m: m.unravel_index(m.asarray([1]), (3,), order="X"),
        lambda m: m.unravel_index(m.asarray([3]), (2, 2**62)),
        lambda m: m.ravel_multi_index((m.asarray([1, 2]),), (3, 4)),
        lambda m: m.ravel_multi_index((m.asarray([1.0]), m.asarray([1])), (3, 4)),
        lambda m: m.ravel_multi_index((m.asarray([1]), m.asarray([4])), (3, 4)),
        lambda m: m.ravel_multi_index(
            (m.asarray([1]), m.asarray([1])), (3, 4), mode="x"
        ),
        lambda m: m.ravel_multi_index(
            (m.asarray([1]), m.asarray([1])), (3, 4), mode=("clip",)
        ),
        lambda m: m.ravel_multi_index((m.asarray([0]), m.asarray([0])), (3, 0)),
        lambda m: m.ravel_multi_index((m.asarray([1]), m.asarray([2])), (2**40, 2**40)),
        lambda m: m.put_along_axis(m.zeros((2, 3)), m.asarray([[0.5]]), 1, 1),
        lambda m: m.put_along_axis(m.zeros((2, 3)), m.asarray([0]), 1, 1),
        lambda m: m.put_along_axis(m.zeros((2, 3)), m.asarray([[5]]), 1, 1),
        lambda m: m.put_along_axis(m.zeros((2, 3)), m.asarray([[0]]), 1, 2),
    ]:
        with pytest.raises(Exception) as expected:
            call(np)
        with pytest.raises(
            type(expected.value), match=re.escape(str(expected.value)[:20])
        ):
            np.asarray(call(hs))
    # A length that is not an integer: NumPy's TypeError comes from deep in its code.
    with pytest.raises(TypeError):
        hs.resize(hs.ones(3), (2.0, 2))


def test_cross_kron_interp_unwrap_resize_and_choose_record_lazily(hs):
    """Nothing of these waits for data; `choose` checks its indices (a flush) only in
    its default mode, 'raise', where NumPy raises for one out of range."""
    if not hasattr(hs, "stats"):
        pytest.skip("NumPy has no runtime to count flushes of")
    a = hs.arange(30.0).reshape(10, 3) ** 2
    n = np.arange(30.0).reshape(10, 3) ** 2
    i = hs.arange(10) % 3
    before = hs.stats()["flushes"]
    results = [
        hs.cross(a, a[::-1]),
        hs.kron(a, a[:2]),
        hs.interp(a, hs.arange(0.0, 900.0, 90.0), hs.arange(10.0)),
        hs.unwrap(a, axis=0),
        hs.resize(a, (7, 7)),
        hs.choose(i, [a[:, 0], a[:, 1], 5.0], mode="wrap"),
    ]
    assert hs.stats()["flushes"] == before, "recording them flushed"
    expected = [
        np.cross(n, n[::-1]),
        np.kron(n, n[:2]),
        np.interp(n, np.arange(0.0, 900.0, 90.0), np.arange(10.0)),
        np.unwrap(n, axis=0),
        np.resize(n, (7, 7)),
        np.choose(np.arange(10) % 3, [n[:, 0], n[:, 1], 5.0], mode="wrap"),
    ]
    assert_same(results, expected)


def _error_matches_numpy(call):
    """``call(hs)`` raises NumPy's exception for ``call(np)``, its message begun alike."""
    with pytest.raises(Exception) as expected:
        call(np)
    return type(expected.value), re.escape(str(expected.value)[:20])


def _raise_like_numpy(hs, calls):
    for call in calls:
        error, message = _error_matches_numpy(call)
        with pytest.raises(error, match=message):
            np.asarray(call(hs))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_repeat_with_a_count_per_element_matches_numpy_on_every_layout(hs, dtype):
    h, n = both(hs, sample(dtype))
    for layout, view in LAYOUTS.items():
        hv, nv = view(h), view(n)
        for axis in [None, 0, -1] if nv.ndim else [None, 0]:
            length = nv.size if axis is None or nv.ndim == 0 else nv.shape[axis]
            counts = np.arange(length) % 3  # zeros among them, and at the end
            for given in (counts, list(counts), hs.asarray(counts)):
                check(
                    hs.repeat,
                    np.repeat,
                    (hv, given),
                    (nv, counts),
                    f"repeat {layout} axis={axis} {type(given).__name__}",
                    axis=axis,
                )
        if nv.ndim:
            counts = [2] * nv.shape[0]
            check(
                lambda a, c: a.repeat(c, axis=0),
                lambda a, c: a.repeat(c, axis=0),
                (hv, hs.asarray(counts)),
                (nv, counts),
                f"ndarray.repeat {layout}",
            )


def test_repeat_reads_counts_once_and_host_counts_not_at_all(hs):
    if not hasattr(hs, "stats"):
        pytest.skip("NumPy has no runtime to count flushes of")
    a, n = both(hs, np.arange(6.0).reshape(2, 3))
    before = hs.stats()["flushes"]
    got = hs.repeat(a * 2, [3, 0, 1], axis=1)
    assert hs.stats()["flushes"] == before, "host counts flushed"
    counts = hs.asarray([1, 4])
    got_ours = hs.repeat(a, counts + 0, axis=0)
    assert hs.stats()["flushes"] == before + 1, "the total is one flush"
    assert_same(got, np.repeat(n * 2, [3, 0, 1], axis=1))
    assert_same(got_ours, np.repeat(n, [1, 4], axis=0))


def test_errors_of_repeat_match_numpy(hs):
    _raise_like_numpy(
        hs,
        [
            lambda m: m.repeat(m.arange(3), -1),
            lambda m: m.repeat(m.arange(3), [-1]),
            lambda m: m.repeat(m.arange(3), [1, -2, 1]),
            lambda m: m.repeat(m.arange(3), m.asarray([1, -2, 1])),
            lambda m: m.repeat(m.arange(3), [1, 2]),
            lambda m: m.repeat(m.arange(3), m.asarray([1, 2])),
            lambda m: m.repeat(m.arange(3), [[1, 2, 3]]),
            lambda m: m.repeat(m.arange(3), m.asarray([[1], [2], [3]])),
            lambda m: m.repeat(m.arange(3), m.asarray([1.0, 2.0, 3.0])),
            lambda m: m.repeat(m.arange(3), np.array([1, 2, 3], np.uint64)),
            lambda m: m.repeat(m.arange(3), m.asarray(2.5)),
            lambda m: m.repeat(m.arange(3), [1, 2, 3, 4], axis=1),
            lambda m: m.repeat(m.ones((2, 3)), [1, 2]),
        ],
    )
    # A negative count of nothing is nothing, as in NumPy.
    assert_same(hs.repeat(hs.ones(0), -1), np.repeat(np.ones(0), -1))


@pytest.mark.parametrize("dtype", ["bool", "int16", "float64", "complex64"])
@pytest.mark.parametrize(
    "layout", ["contiguous", "negative_stride", "non_contiguous", "one_d", "empty"]
)
def test_insert_at_several_positions_matches_numpy(hs, dtype, layout):
    h, n = both(hs, sample(dtype))
    h, n = LAYOUTS[layout](h), LAYOUTS[layout](n)
    last = n.ndim - 1
    size = n.shape[last]
    for obj, values, axis in [
        ([size, 0, -1, 0], 1, last),  # NumPy's stable order for equal positions
        ([2, 2, 0], [7, 0, 1], None),
        (np.array([1, 0]), n.take([0, 0], axis=last), last),
        (slice(0, size, 2), 5, last),
        (slice(None, None, -1), 0, last),
        ([0], [[1], [0]], 0),  # a sequence of one: values not moved to the axis
        (np.arange(size + 1) % 2 == 1, 1, last),
        ([], 1, last),
    ]:
        v = hs.asarray(values) if isinstance(values, np.ndarray) else values
        for o in (obj, hs.asarray(obj)) if isinstance(obj, np.ndarray) else (obj,):
            check(
                hs.insert,
                np.insert,
                (h, o, v),
                (n, obj, values),
                f"insert {obj} {values} axis={axis}",
                axis=axis,
            )


def test_errors_of_insert_at_several_positions_match_numpy(hs):
    _raise_like_numpy(
        hs,
        [
            lambda m: m.insert(m.ones((2, 3)), [0, 4], 1.0, axis=1),
            lambda m: m.insert(m.ones((2, 3)), [0, 1], [1.0, 2.0, 3.0], axis=1),
            lambda m: m.insert(m.ones((2, 3)), [0, 1], m.ones((2, 1, 3)), axis=1),
            lambda m: m.insert(m.ones((2, 3)), 1, m.ones((2, 1, 3)), axis=1),
            lambda m: m.insert(m.ones((2, 3)), [1], m.ones((1, 2, 5)), axis=1),
            lambda m: m.insert(m.ones((2, 3)), [[0, 1]], 1.0, axis=1),
            lambda m: m.insert(m.ones((2, 3)), np.ones((2, 2), bool), 1.0, axis=1),
            lambda m: m.insert(m.ones((2, 3)), [0.5, 1], 1.0, axis=1),
            lambda m: m.insert(m.ones((2, 3)), np.array([], float), 1.0, axis=1),
            lambda m: m.insert(m.ones((2, 3)), [0, 1], 1.0, axis=2),
            lambda m: m.insert(m.ones((2, 3)), [1], 1.0, axis=-3),
        ],
    )


def test_block_matches_numpy(hs):
    a, na = both(hs, sample("int16", shape=(2, 2)))
    b, nb = both(hs, sample("float32", shape=(2, 3)))
    c, nc = both(hs, sample("bool", shape=(5,)))
    for build in [
        lambda m, a, b, c: m.block([[a, b], [m.ones((1, 5), m.float32)]]),
        lambda m, a, b, c: m.block([c, 3, a[0]]),
        lambda m, a, b, c: m.block([[a[::-1], a.T]]),
        lambda m, a, b, c: m.block([[[a]], [[a]]]),
        lambda m, a, b, c: m.block([[a[:, :0]], [b[:, :0]]]),
        lambda m, a, b, c: m.block([a[0, 0], c[4]]),
        lambda m, a, b, c: m.block(a),
        lambda m, a, b, c: m.block(5),
        lambda m, a, b, c: m.block([[1, 2], [3, 4]]),
    ]:
        got = build(hs, a, b, c)
        assert_same(got, build(np, na, nb, nc))
    got = hs.block(a)
    got[0, 0] = 99
    assert_same(a, na)  # block of one array copies it


def test_errors_of_block_match_numpy(hs):
    a = np.ones((2, 2))
    _raise_like_numpy(
        hs,
        [
            lambda m: m.block([(m.asarray(a),)]),
            lambda m: m.block((m.asarray(a),)),
            lambda m: m.block([]),
            lambda m: m.block([[], [1]]),
            lambda m: m.block([[1], []]),
            lambda m: m.block([[1], 2]),
            lambda m: m.block([1, [2]]),
            lambda m: m.block([[m.asarray(a)], [m.ones((2, 3))]]),
            lambda m: m.block([m.asarray(a), m.ones((3, 3))]),
        ],
    )


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint32", "float64", "complex64"])
def test_trim_zeros_matches_numpy(hs, dtype):
    data = np.zeros((5, 6), dtype)
    data[1, 2] = data[3, 1] = data[2, 4] = 1
    h, n = both(hs, data)
    for view in [lambda a: a, lambda a: a[::-1, ::-2], lambda a: a[2], lambda a: a[0]]:
        for kwargs in [{}, {"trim": "f"}, {"trim": "B"}, {"axis": 1}, {"axis": (-2,)}]:
            hv, nv = view(h), view(n)
            if nv.ndim == 1 and "axis" in kwargs:
                continue
            check(hs.trim_zeros, np.trim_zeros, (hv,), (nv,), f"{kwargs}", **kwargs)
    assert_same(hs.trim_zeros(h[:0]), np.trim_zeros(n[:0]))
    assert_same(hs.trim_zeros(h[0, 0]), np.trim_zeros(n[0, 0]))
    # A list stays a list; an array's result is a view of it.
    assert hs.trim_zeros([0, 1, 0]) == [1]
    view = hs.trim_zeros(h[1])
    view[0] = 0
    assert not np.asarray(h[1]).any()
    _raise_like_numpy(
        hs,
        [
            lambda m: m.trim_zeros(m.asarray([0, 1]), "x"),
            lambda m: m.trim_zeros(m.ones((2, 2)), axis=2),
        ],
    )


@pytest.mark.parametrize(
    "dtype", ["bool", "int32", "uint8", "float16", "float32", "float64"]
)
def test_i0_matches_numpy(hs, dtype):
    """NumPy's series in its order: the sums agree bit for bit, the exponential to the
    engine's ``exp``."""
    rng = np.random.default_rng(11)
    data = (rng.standard_normal(500) * 12).astype(dtype)
    if dtype.startswith("float"):
        data[:5] = [np.nan, np.inf, -np.inf, 0.0, 8.0]
    h, n = both(hs, data)
    with np.errstate(all="ignore"):
        for view in [lambda a: a, lambda a: a[::-3], lambda a: a[7], lambda a: a[:0]]:
            check(hs.i0, np.i0, (view(h),), (view(n),), dtype)
    _raise_like_numpy(hs, [lambda m: m.i0(m.asarray([1j]))])


@pytest.mark.parametrize(
    "dtype", ["bool", "int8", "uint8", "float16", "float32", "float64"]
)
def test_histogramdd_and_histogram2d_with_equal_bins_match_numpy_exactly(hs, dtype):
    """NumPy's edges and its searchsorted rule: counts and edges bit for bit."""
    rng = np.random.default_rng(5)
    for trial in range(8):
        points = int(rng.integers(0, 400))
        data = rng.standard_normal((points, 3)) * [1.0, 10.0, 1000.0]
        if trial % 2:
            data = np.round(data)
        data = data.astype(dtype)
        kwargs = {}
        if trial == 2:
            kwargs["range"] = [(-1, 1), None, (0, 100)]
        if trial == 3:
            kwargs["weights"] = rng.random(points)
        if trial in (4, 7):
            kwargs["density"] = True
        bins = [int(b) for b in rng.integers(1, 12, 3)] if trial % 3 else 5
        h = hs.asarray(data)
        got = hs.histogramdd(h, bins, **_on_hassium(hs, kwargs))
        what = f"histogramdd {dtype} {trial} {kwargs}"
        assert_same(got, np.histogramdd(data, bins, **kwargs), rtol=0, what=what)
        if "range" in kwargs:
            kwargs["range"] = kwargs["range"][::2]
        bins2 = bins if trial % 3 == 0 else bins[:2]
        got = hs.histogram2d(h[:, 0], h[::-1, 2], bins2, **_on_hassium(hs, kwargs))
        expected = np.histogram2d(data[:, 0], data[::-1, 2], bins2, **kwargs)
        assert_same(got, expected, rtol=0, what=f"histogram2d {dtype} {trial}")
    # A sample of one dimension, and a list of coordinates; NaN is an outlier.
    x = np.array([0.0, 1.0, 2.0, np.nan, 3.0])
    assert_same(
        hs.histogramdd(hs.asarray(x), 2, range=[(0, 3)]),
        np.histogramdd(x, 2, range=[(0, 3)]),
    )
    assert_same(
        hs.histogramdd([[1, 2, 3], [4, 5, 6.5]], 2),
        np.histogramdd([[1, 2, 3], [4, 5, 6.5]], 2),
    )


def test_errors_of_histogramdd_match_numpy(hs):
    _raise_like_numpy(
        hs,
        [
            lambda m: m.histogramdd(m.ones((3, 2)), [2, 0]),
            lambda m: m.histogramdd(m.ones((3, 2)), [2, 2.5]),
            lambda m: m.histogramdd(m.ones((3, 2)), [2, 2, 2]),
            lambda m: m.histogramdd(m.ones((3, 2)), 2, range=[(0, 1)]),
            lambda m: m.histogramdd(m.ones((3, 2)), 2, range=[(0, 1), (2, 1)]),
            lambda m: m.histogramdd(m.ones((3, 2)), 2, range=[(0, np.inf), (0, 1)]),
            lambda m: m.histogramdd(m.asarray([[1.0, np.inf]]), 2),
            lambda m: m.histogramdd(m.ones((3, 2)), 2, weights=m.ones(2)),
            lambda m: m.histogramdd(m.ones((3, 2)), 2, weights=m.ones((3, 1))),
            lambda m: m.histogramdd(m.ones((3, 2)), 2, weights=m.ones(3, complex)),
            lambda m: m.histogram2d(m.ones(3), m.ones(3), 0),
        ],
    )


@pytest.mark.parametrize("dtype", ["bool", "int8", "int64", "uint8", "uint64"])
def test_packbits_and_unpackbits_match_numpy(hs, dtype):
    data = sample(dtype, shape=(3, 13, 5)) % 3
    if dtype == "int64":
        data[0, 0, 0], data[0, 1, 0] = -1, 256  # any nonzero is a set bit
    h, n = both(hs, data)
    for layout, view in LAYOUTS.items():
        hv, nv = view(h), view(n)
        for axis in [None, 0, -1] if nv.ndim else [None, 0]:
            for order in ("big", "little"):
                check(
                    hs.packbits,
                    np.packbits,
                    (hv,),
                    (nv,),
                    f"packbits {layout} {axis} {order}",
                    axis=axis,
                    bitorder=order,
                )
    h, n = both(hs, sample("uint8", shape=(3, 4, 5)) * 25)
    for layout, view in LAYOUTS.items():
        hv, nv = view(h), view(n)
        for axis in [None, -1] if nv.ndim else [None, 0]:
            for count in (None, 0, 3, 17, -3, 100):
                if nv.size == 0 and count and count > 0:
                    # NumPy leaves the padding of an empty input unwritten (whatever
                    # memory held); Hassium's is zeros, as NumPy documents.
                    continue
                check(
                    hs.unpackbits,
                    np.unpackbits,
                    (hv,),
                    (nv,),
                    f"unpackbits {layout} {axis} {count}",
                    axis=axis,
                    count=count,
                    bitorder="l" if count == 3 else "big",
                )


def test_errors_of_packbits_and_unpackbits_match_numpy(hs):
    _raise_like_numpy(
        hs,
        [
            lambda m: m.packbits(m.ones(3)),
            lambda m: m.packbits(m.ones(3), bitorder="x"),
            lambda m: m.packbits(m.ones(3, int), bitorder="L"),
            lambda m: m.packbits(m.ones(3, int), bitorder=None),
            lambda m: m.packbits(m.ones(3), axis=2.5),
            lambda m: m.packbits(m.ones(3, int), axis=1),
            lambda m: m.packbits(m.asarray(5), axis=1),
            lambda m: m.unpackbits(m.ones(3)),
            lambda m: m.unpackbits(m.ones(3), bitorder="x"),
            lambda m: m.unpackbits(m.ones(3, m.uint8), bitorder=5),
            lambda m: m.unpackbits(m.ones(3, m.uint8), count=2.5),
            lambda m: m.unpackbits(m.ones(3, m.uint8), axis=4, count=2.5),
            lambda m: m.unpackbits(m.ones(3, m.uint8), count=-25),
        ],
    )


def test_repeat_insert_block_i0_and_bits_record_lazily(hs):
    """Nothing of these waits for data where the result's shape does not: counts and
    positions on the host are read there."""
    if not hasattr(hs, "stats"):
        pytest.skip("NumPy has no runtime to count flushes of")
    a = hs.arange(12.0).reshape(3, 4) / 3
    n = np.arange(12.0).reshape(3, 4) / 3
    before = hs.stats()["flushes"]
    results = [
        hs.repeat(a, [1, 0, 2, 3], axis=1),
        hs.insert(a, [3, 0, 3], [7.0, 8.0, 9.0], axis=1),
        hs.block([[a, a], [a, a]]),
        hs.i0(a),
        hs.packbits(a > 1, axis=1),
        hs.unpackbits(a.astype(hs.uint8), count=-5),
    ]
    assert hs.stats()["flushes"] == before, "recording them flushed"
    expected = [
        np.repeat(n, [1, 0, 2, 3], axis=1),
        np.insert(n, [3, 0, 3], [7.0, 8.0, 9.0], axis=1),
        np.block([[n, n], [n, n]]),
        np.i0(n),
        np.packbits(n > 1, axis=1),
        np.unpackbits(n.astype(np.uint8), count=-5),
    ]
    assert_same(results, expected)
