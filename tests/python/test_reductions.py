"""Reductions and scans against NumPy: every dtype, axis None/int/negative/tuple,
keepdims, dtype=, strided inputs, empty inputs and NumPy's errors."""

import numpy as np
import pytest
from conftest import DTYPES, assert_same, both, sample
from test_ufuncs import F16_PRODUCT_RTOL, batched, check, same

REDUCTIONS = [
    "sum",
    "prod",
    "min",
    "max",
    "amin",
    "amax",
    "mean",
    "var",
    "std",
    "any",
    "all",
]
AXES = [None, 0, 1, -1, (0, 2), ()]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", REDUCTIONS)
@batched
def test_reduction_matches_numpy_for_every_axis_and_keepdims(hs, name, dtype):
    h, n = both(hs, sample(dtype))
    hf, nf = getattr(hs, name), getattr(np, name)
    tol = (
        F16_PRODUCT_RTOL if (name in ("prod", "sum") and dtype == np.float16) else None
    )
    for axis in AXES:
        for keepdims in (False, True):
            check(
                hf,
                nf,
                (h,),
                (n,),
                f"{name} axis={axis} keepdims={keepdims}",
                tol=tol,
                axis=axis,
                keepdims=keepdims,
            )
    check(
        hf,
        nf,
        (h[::-1, ::2, 1:],),
        (n[::-1, ::2, 1:],),
        f"{name} strided",
        tol=tol,
        axis=1,
    )
    check(hf, nf, (h[1, 2, 3, ...],), (n[1, 2, 3, ...],), f"{name} 0-d")


@pytest.mark.parametrize("name", ["sum", "prod", "mean", "any", "all"])
def test_reduction_of_an_empty_array_matches_numpy(hs, name):
    h, n = both(hs, np.zeros((0, 3)))
    for axis in (None, 0, 1):
        check(
            getattr(hs, name),
            getattr(np, name),
            (h,),
            (n,),
            f"{name} empty axis={axis}",
            axis=axis,
        )


@pytest.mark.parametrize("name", ["min", "max", "argmin", "argmax"])
def test_reduction_without_identity_of_empty_raises_value_error(hs, name):
    with pytest.raises(ValueError):
        np.asarray(getattr(hs, name)(hs.zeros((0, 3)), axis=0))


@pytest.mark.parametrize("name", ["sum", "prod", "cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int32", "float16"])
def test_sum_and_prod_widen_small_integers_like_numpy(hs, name, dtype):
    h, n = both(hs, sample(dtype))
    check(getattr(hs, name), getattr(np, name), (h,), (n,), name, axis=0)
    check(
        getattr(hs, name),
        getattr(np, name),
        (h,),
        (n,),
        name + " dtype=f4",
        axis=1,
        dtype=np.float32,
    )


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", ["argmin", "argmax", "cumsum", "cumprod"])
def test_arg_reductions_and_scans_match_numpy(hs, name, dtype):
    h, n = both(hs, sample(dtype))
    hf, nf = getattr(hs, name), getattr(np, name)
    for axis in (None, 0, 1, -1):
        check(hf, nf, (h,), (n,), f"{name} axis={axis}", axis=axis)
    check(hf, nf, (h[:, ::-1],), (n[:, ::-1],), f"{name} reversed", axis=1)


def test_argmax_takes_the_first_occurrence_and_nan_wins(hs):
    data = np.array([[1.0, 3.0, 3.0, np.nan], [2.0, 2.0, np.nan, 5.0]])
    h, n = both(hs, data)
    for name in ("argmin", "argmax"):
        for axis in (None, 0, 1):
            check(getattr(hs, name), getattr(np, name), (h,), (n,), name, axis=axis)
    check(hs.argmax, np.argmax, (h,), (n,), "argmax keepdims", axis=1, keepdims=True)


@pytest.mark.parametrize("ddof", [0, 1])
def test_var_and_std_honour_ddof(hs, ddof):
    for dtype in ("int32", "float32", "complex128"):
        h, n = both(hs, sample(dtype))
        check(hs.var, np.var, (h,), (n,), "var", axis=1, ddof=ddof)
        check(hs.std, np.std, (h,), (n,), "std", axis=(0, 2), ddof=ddof)


def test_nan_propagates_through_min_max_and_sum(hs):
    h, n = both(hs, np.array([1.0, np.nan, 3.0]))
    for name in ("min", "max", "sum", "mean"):
        check(getattr(hs, name), getattr(np, name), (h,), (n,), name)


@pytest.mark.parametrize("name", REDUCTIONS + ["argmin", "argmax", "cumsum"])
def test_bad_axis_raises_axis_error(hs, name):
    with pytest.raises(np.exceptions.AxisError):
        np.asarray(getattr(hs, name)(hs.ones((2, 3)), axis=2))


def test_ufunc_reductions_of_a_0d_array_accept_axis_0_and_minus_1(hs):
    # NumPy's legacy rule: an integer axis 0 or -1 of a 0-d array, for ufunc reductions,
    # argmin/argmax and scans; mean/var/std, tuples and other axes are AxisErrors.
    h, n = both(hs, np.array(3.0))
    calls = [
        ("sum", {}),
        ("prod", {}),
        ("max", {}),
        ("min", {}),
        ("any", {}),
        ("all", {}),
        ("argmax", {}),
        ("argmin", {}),
        ("cumsum", {}),
        ("cumprod", {}),
        ("mean", {}),
        ("std", {}),
        ("sum", {"keepdims": True}),
    ]
    for name, kw in calls:
        for axis in (0, -1, 1, (0,)):
            check(
                getattr(hs, name),
                getattr(np, name),
                (h,),
                (n,),
                f"{name} axis={axis}",
                axis=axis,
                **kw,
            )
            check(
                lambda a, name=name, **k: getattr(a, name)(**k),
                lambda a, name=name, **k: getattr(a, name)(**k),
                (h,),
                (n,),
                f"a.{name} axis={axis}",
                axis=axis,
                **kw,
            )
    check(hs.add.reduce, np.add.reduce, (h,), (n,), "add.reduce", axis=0)
    for axis in (0, None):
        check(
            hs.add.accumulate,
            np.add.accumulate,
            (h,),
            (n,),
            "add.accumulate",
            axis=axis,
        )


def test_a_reduction_into_out_casts_its_result_unsafely(hs):
    # NumPy reduces as without out= and casts the result into out, whatever its dtype.
    for data, dtype in [
        (np.arange(6.0), np.int8),
        (np.arange(300), np.int8),
        (np.arange(1, 6.0), np.int16),
    ]:
        h, n = both(hs, data)
        for name in ["sum", "prod", "max"]:
            got, want = hs.zeros((), dtype=dtype), np.zeros((), dtype=dtype)
            getattr(hs, name)(h, out=got)
            getattr(np, name)(n, out=want)
            assert_same(got, want, what=f"np.{name} out={dtype}")
            got = hs.zeros((), dtype=dtype)
            getattr(h, name)(out=got)
            assert_same(got, want, what=f"a.{name} out={dtype}")


def test_mean_with_an_integer_dtype_or_out_truncates_like_numpy(hs):
    h, n = both(hs, np.arange(6.0).reshape(2, 3) * 1.5)
    for kw in [{"dtype": np.int64}, {"dtype": np.int8, "axis": 1}, {"dtype": bool}]:
        assert_same(hs.mean(h, **kw), np.mean(n, **kw), what=str(kw))
        assert_same(h.mean(**kw), n.mean(**kw), what=f"method {kw}")
    got, want = hs.zeros((), dtype=np.int64), np.zeros((), dtype=np.int64)
    hs.mean(h, out=got)
    np.mean(n, out=want)
    assert_same(got, want)


def test_duplicate_axis_raises_value_error(hs):
    with pytest.raises(ValueError):
        hs.sum(hs.ones((2, 3)), axis=(0, 0))


def test_reductions_accept_out(hs):
    h, n = both(hs, sample("float64"))
    ho = hs.zeros((3, 5))
    no = np.zeros((3, 5))
    r = hs.sum(h, axis=1, out=ho)
    np.sum(n, axis=1, out=no)
    assert r is ho
    assert_same(ho, no)


def test_initial_is_honoured(hs):
    h, n = both(hs, sample("int32"))
    check(hs.max, np.max, (h,), (n,), "max initial", axis=0, initial=100)
    check(hs.sum, np.sum, (h,), (n,), "sum initial", axis=None, initial=5)


def test_count_nonzero_matches_numpy(hs):
    for dtype in ("bool", "int8", "float64", "complex64"):
        h, n = both(hs, sample(dtype))
        assert_same(hs.count_nonzero(h), np.count_nonzero(n))
        for axis in (0, (1, 2)):
            check(
                hs.count_nonzero,
                np.count_nonzero,
                (h,),
                (n,),
                "count_nonzero",
                axis=axis,
            )


@pytest.mark.parametrize("ndigits", [None, 0, 2, -1])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "uint8"])
def test_round_of_a_reduction_result_is_numpys_round_of_its_scalar(hs, dtype, ndigits):
    # NumPy returns scalars from reductions, and `round(np.mean(x), 2)` is common in
    # scripts; Hassium's 0-d result must round the same way, to the same type.
    values = np.array([1.2345, 2.5, 7.75, 3.125]).astype(dtype)
    for name in ["mean", "sum", "max"]:
        want = getattr(np, name)(values)
        got = getattr(hs, name)(hs.asarray(values))
        w = round(want) if ndigits is None else round(want, ndigits)
        g = round(got) if ndigits is None else round(got, ndigits)
        assert type(g) is type(w), (name, type(g), type(w))
        assert g == w, (name, g, w)


def test_a_reduction_result_is_a_dict_key_as_numpys_scalar_is(hs):
    # NumPy returns scalars from reductions and scalar indexing, and scripts key dicts
    # and sets by them (`counts[np.argmax(p)] += 1`); Hassium's 0-d results hash as
    # those scalars do, so the keys meet NumPy's and Python's own.
    probs = np.array([[0.1, 0.7, 0.2], [0.5, 0.3, 0.2], [0.2, 0.1, 0.7]])
    counts, want = {}, {}
    for row in range(3):
        k = hs.argmax(hs.asarray(probs[row]))
        counts[k] = counts.get(k, 0) + 1
        w = np.argmax(probs[row])
        want[w] = want.get(w, 0) + 1
    assert {int(k): v for k, v in counts.items()} == {
        int(k): v for k, v in want.items()
    }
    assert counts[1] == 1 and counts[np.int64(2)] == 1
    assert hash(hs.sum(hs.asarray([1.5, 2.0]))) == hash(3.5)
    assert hs.asarray(7)[()] in {7}
    with pytest.raises(TypeError, match="unhashable"):
        hash(hs.ones(3))
    with pytest.raises(TypeError, match="unhashable"):
        hash(np.ones(3))


def test_round_of_an_array_with_dimensions_is_a_type_error_like_numpy(hs):
    with pytest.raises(TypeError, match="__round__"):
        round(np.ones(3))
    with pytest.raises(TypeError, match="__round__"):
        round(hs.ones(3))


@pytest.mark.parametrize("length", [1, 2, 3, 7, 8, 9])
def test_a_reduction_over_a_short_last_axis_fused_with_its_terms_matches_numpy(
    hs, length
):
    """The n-body pattern: pairwise differences kept as an array and their squared sum
    over a short last axis (vectorised across the rows on the cpu engine), with -0.0,
    infinities and NaN among the values, for every reduction whose lanes keep identities."""
    base = sample(np.float64, (6, length), seed=length)
    base[0, 0] = -0.0
    base[1, -1] = np.inf
    base[2, 0] = np.nan
    base[3, :] = -0.0
    h, n = both(hs, base)
    hd = h[np.newaxis, :, :] - h[:, np.newaxis, :]
    nd = n[np.newaxis, :, :] - n[:, np.newaxis, :]
    for name in ("add", "multiply", "maximum", "minimum"):
        got = getattr(hs, name).reduce(hd * hd, axis=2) + 0.5
        want = getattr(np, name).reduce(nd * nd, axis=2) + 0.5
        assert_same(got, want, what=f"{name}.reduce over {length}")
    assert_same(hs.any(hd > 1.0, axis=2), np.any(nd > 1.0, axis=2), what="any")
    assert_same(hd, nd, what="the differences kept")
    assert_same(hs.sum(h, axis=1), np.sum(n, axis=1), what="a plain row sum")


@pytest.mark.parametrize(
    "dtype", ["float64", "float32", "int64", "uint8", "bool", "complex128"], ids=str
)
@batched
def test_column_reductions_of_tall_matrices_match_numpy(hs, dtype):
    """Reductions along axis 0 of matrices with many rows and 2 to 4096 columns, which
    the cpu engine splits into chunks of rows combined in order (5000 columns go by
    blocks of columns instead): plain, fused with the terms before and the division
    after (`mean`), over strided, reversed and transposed views, with keepdims, and next
    to an elementwise result of the same kernel."""
    # Positive values: sums without cancellation, which float32 would amplify into
    # differences of summation order. NumPy adds a column's rows one after another, in
    # float32 too: its sum of the 70 001-row column is 1.2e-5 off the exact one (ours,
    # in chunks, 1.3e-7), so float32 sums get 1e-4.
    tol = 1e-4 if dtype == "float32" else None
    for shape in [
        (70_001, 2),
        (20_003, 8),
        (3001, 40),
        (600, 256),
        (700, 257),
        (300, 1500),
        (5000, 4, 6),
        (300, 5000),
    ]:
        h, n = both(hs, sample(dtype, shape=shape, kind="positive", seed=shape[1]))
        for name in ("sum", "mean", "max", "min", "any"):
            check(
                getattr(hs, name),
                getattr(np, name),
                (h,),
                (n,),
                f"{name} {shape}",
                tol=tol,
                axis=0,
            )
        check(
            hs.sum, np.sum, (h,), (n,), f"keepdims {shape}", tol, axis=0, keepdims=True
        )
        if dtype != "bool":
            check(
                hs.mean,
                np.mean,
                (h * 2 + 1,),
                (n * 2 + 1,),
                f"fused {shape}",
                tol,
                axis=0,
            )
    h, n = both(hs, sample(dtype, shape=(6000, 24), kind="positive", seed=3))
    for what, hv, nv in [
        ("reversed rows", h[::-1], n[::-1]),
        ("every other row and column", h[::2, ::2], n[::2, ::2]),
        ("reversed columns", h[:, ::-1], n[:, ::-1]),
        ("transposed", h[:24, :].T.copy().T, n[:24, :]),
        ("column block", h[:, 3:9], n[:, 3:9]),
    ]:
        check(hs.max, np.max, (hv,), (nv,), what, axis=0)
        check(hs.sum, np.sum, (hv,), (nv,), what, tol, axis=0)
    if dtype not in ("bool", "uint8"):
        squares, nsquares = h * h, n * n
        same(squares.sum(axis=0), nsquares.sum(axis=0), tol, "squares summed")
        same(squares, nsquares, what="squares kept")


def test_column_sums_of_a_tall_matrix_propagate_nan_and_infinity(hs):
    base = sample(np.float64, (9000, 5), seed=9)
    base[4321, 1] = np.nan
    base[8999, 2] = np.inf
    base[0, 3] = -np.inf
    base[100, 4], base[7000, 4] = np.inf, -np.inf
    h, n = both(hs, base)
    for name in ("sum", "max", "min", "prod"):
        check(getattr(hs, name), getattr(np, name), (h,), (n,), name, axis=0)


@pytest.mark.parametrize(
    "dtype", ["float64", "float32", "int32", "uint8", "bool"], ids=str
)
def test_scans_along_an_axis_with_a_row_after_it_match_numpy(hs, dtype):
    """Scans along axis 0 of matrices (and axis 1 of 3-D arrays), which the cpu engine runs
    as rows of running accumulators, a block of columns per task: one block, several
    blocks, strided and reversed views, `cumprod` and the running extremes."""
    tol = 1e-4 if dtype == "float32" else None  # long float32 running sums: see above
    for shape, axis in [
        ((3000, 40), 0),
        ((4, 700), 0),
        ((50, 3, 30), 1),
        ((6, 5, 4), 0),
    ]:
        h, n = both(hs, sample(dtype, shape=shape, kind="positive", seed=len(shape)))
        check(hs.cumsum, np.cumsum, (h,), (n,), f"cumsum {shape}", tol, axis=axis)
        check(
            hs.cumsum,
            np.cumsum,
            (h[::-1],),
            (n[::-1],),
            f"reversed {shape}",
            tol,
            axis=axis,
        )
        check(
            hs.cumsum,
            np.cumsum,
            (h[::2, ..., ::3],),
            (n[::2, ..., ::3],),
            "strided",
            tol,
            axis=axis,
        )
        if dtype != "bool":
            for name in ("maximum", "minimum"):
                ours, theirs = (
                    getattr(hs, name).accumulate,
                    getattr(np, name).accumulate,
                )
                check(ours, theirs, (h,), (n,), f"{name}.accumulate {shape}", axis=axis)
            small = (h[:6] > 1) + 1 if dtype != "float32" else h[:6]
            nsmall = (n[:6] > 1) + 1 if dtype != "float32" else n[:6]
            check(
                hs.cumprod,
                np.cumprod,
                (small,),
                (nsmall,),
                f"cumprod {shape}",
                axis=axis,
            )


@pytest.mark.parametrize("name", ["var", "std"])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@batched
def test_var_and_std_with_where_and_mean_match_numpy_natively(
    hs, name, dtype, monkeypatch
):
    """``where=`` (a mask broadcast to the input: masked elements leave the sums and the
    count, an all-masked slice is NaN) and ``mean=`` (the mean given with keepdims'
    shape, summed against in x's own dtype), with ddof, correction, dtype=, keepdims and
    every axis, on strided and reversed views, natively."""
    monkeypatch.setenv("HASSIUM_FALLBACK", "error")
    data = sample(dtype)
    mask = sample("float64", seed=3) > -1.0
    mask[1] = False  # a slice with nothing in it along axes 1 and 2
    hf, nf = getattr(hs, name), getattr(np, name)
    tol = F16_PRODUCT_RTOL if data.dtype == np.float16 else None
    for what, view in [
        ("contiguous", lambda a: a),
        ("strided, reversed", lambda a: a[::-1, :, ::2]),
    ]:
        h, n = both(hs, view(data))
        m = view(mask)
        hm = hs.asarray(m)
        for axis in [None, -1, (0, 2)]:
            for kwargs in [
                {"where": m},
                {"where": hm},
                {"where": m[:1, :1, :], "ddof": 1},
                {"where": hm, "keepdims": True, "correction": 1},
                {"where": True, "ddof": 2},
            ]:
                np_kw = dict(
                    kwargs, where=m if kwargs["where"] is hm else kwargs["where"]
                )
                check(
                    hf,
                    nf,
                    (h,),
                    (n,),
                    f"{name} {what} {axis} {kwargs}",
                    tol=tol,
                    axis=axis,
                    **{k: v for k, v in np_kw.items()},
                )
            mean = np.mean(n, axis=axis, keepdims=True)
            for kwargs in [
                {},
                {"ddof": 1},
                {"where": m, "keepdims": True},
            ]:
                want = nf(n, axis=axis, mean=mean, **kwargs)
                got = hf(h, axis=axis, mean=hs.asarray(mean), **kwargs)
                same(got, want, rtol=tol, what=f"{name} mean= {axis} {kwargs}")
                got = hf(
                    h, axis=axis, mean=hs.mean(h, axis=axis, keepdims=True), **kwargs
                )
                same(got, want, rtol=tol, what=f"{name} hs.mean {axis} {kwargs}")
    if data.dtype.kind in "biu":
        h, n = both(hs, data)
        for dtype_kw in ("float32", "float64"):
            check(
                hf,
                nf,
                (h,),
                (n,),
                f"{name} dtype={dtype_kw}",
                axis=1,
                where=mask,
                dtype=dtype_kw,
            )


def test_var_and_std_with_where_and_mean_take_0d_empty_out_and_numpys_errors(
    hs, monkeypatch
):
    monkeypatch.setenv("HASSIUM_FALLBACK", "error")
    h, n = both(hs, sample("float64"))
    mask = sample("float64", seed=4) > 0
    out_n, out_h = np.zeros(4), hs.zeros(4)
    np.var(n, axis=(0, 2), where=mask, out=out_n)
    hs.var(h, axis=(0, 2), where=hs.asarray(mask), out=out_h)
    assert_same(out_h, out_n)
    # A 0-d input, an empty one, a mean broadcast from a scalar.
    for hv, nv, kwargs in [
        (h[1, 2, 3], n[1, 2, 3], {"where": np.True_}),
        (h[1, 2, 3], n[1, 2, 3], {"mean": 0.5}),
        (h[:, :0], n[:, :0], {"where": mask[:, :0], "axis": 1}),
        (h, n, {"mean": 1.0, "axis": 2}),
    ]:
        with (
            np.errstate(all="ignore"),
            pytest.warns(RuntimeWarning) if (nv.size == 0) else _no_warning(),
        ):
            want = np.std(nv, **kwargs)
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            assert_same(hs.std(hv, **kwargs), want, what=str(kwargs))
    # A mask that does not broadcast; ddof together with correction.
    with pytest.raises(ValueError):
        hs.var(h, where=hs.asarray(mask[:2]))
    with pytest.raises(ValueError):
        hs.std(h, ddof=1, correction=1)
    with pytest.warns(RuntimeWarning, match="Degrees of freedom"):
        hs.var(h, axis=0, where=hs.asarray(mask), ddof=3)


def _no_warning():
    import contextlib

    return contextlib.nullcontext()


@pytest.mark.parametrize("dtype", ["int32", "float32", "float64"])
@pytest.mark.parametrize(
    "rows,cols", [(20, 5000), (3, 7), (1, 9), (64, 64), (17, 4099)]
)
@batched
def test_reductions_along_columns_of_a_stored_matrix_match_numpy(hs, dtype, rows, cols):
    """The row sums of a transposed matrix (``X.T @ v``, ``(a.T * b).sum(1)``) are lowered
    as column sums of the stored matrix; every orientation and step agrees with NumPy."""
    # Float32 sums of mixed signs cancel, and NumPy adds these in other orders (pairwise
    # along a materialised product, BLAS for the product): positive values keep the
    # comparison about the layouts, not about rounding.
    kind = "positive" if dtype == "float32" else "mixed"
    x, nx = both(hs, sample(dtype, shape=(cols, rows), kind=kind))
    v, nv = both(hs, sample(dtype, shape=(cols,), seed=1, kind=kind))
    for sl in [np.s_[:, :], np.s_[::-1, :], np.s_[:, ::-1], np.s_[::2, 1:]]:
        h, n = x[sl].T, nx[sl].T
        w, nw = v[sl[0]], nv[sl[0]]
        same(h @ w, n @ nw, what=f"{sl} matvec")
        same((h * w).sum(axis=1), (n * nw).sum(axis=1), what=f"{sl} product sum")
        same(h.sum(axis=-1), n.sum(axis=-1), what=f"{sl} sum")
        same(h.max(axis=1), n.max(axis=1), what=f"{sl} max")
        same(hs.mean(h, axis=1) + 1, np.mean(n, axis=1) + 1, what=f"{sl} mean")
