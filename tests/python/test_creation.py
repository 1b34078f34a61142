"""Array creation against NumPy: values, dtypes and shapes, including 0-d and empty."""

import warnings
from functools import partial

import numpy as np
import pytest
from conftest import (
    AGAINST_NUMPY,
    DTYPES,
    LAYOUTS,
    USE_DOUBLE,
    assert_same,
    both,
    sample,
)
from test_ufuncs import _error_of, check

SHAPES = [(), (0,), (5,), (2, 3), (2, 0, 3), 4]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_zeros_ones_full_and_empty_have_numpys_shape_and_dtype(hs, dtype):
    for shape in SHAPES:
        assert_same(hs.zeros(shape, dtype), np.zeros(shape, dtype))
        assert_same(hs.ones(shape, dtype=dtype), np.ones(shape, dtype=dtype))
        assert_same(hs.full(shape, 1, dtype), np.full(shape, 1, dtype))
        e = hs.empty(shape, dtype)
        assert e.shape == np.empty(shape).shape and e.dtype == dtype


def test_default_dtypes_match_numpy(hs):
    assert_same(hs.zeros(3), np.zeros(3))
    assert_same(hs.ones((2, 2)), np.ones((2, 2)))
    for value in (7, 2.5, True, 1 + 2j, np.float32(1.5), np.uint8(3)):
        assert_same(hs.full((2, 3), value), np.full((2, 3), value))
    assert_same(hs.full((2, 3), [1, 2, 3]), np.full((2, 3), [1, 2, 3]))


@pytest.mark.parametrize("name", ["zeros_like", "ones_like", "empty_like"])
def test_like_functions_follow_the_prototype(hs, name):
    for dtype in ("int16", "float32", "complex128", "bool"):
        n = np.arange(6).reshape(2, 3).astype(dtype)
        h = hs.asarray(n)
        got = getattr(hs, name)(h)
        expected = getattr(np, name)(n)
        if name == "empty_like":
            assert got.shape == expected.shape and got.dtype == expected.dtype
        else:
            assert_same(got, expected)
        got = getattr(hs, name)(h, dtype=np.float64, shape=(4,))
        assert got.shape == (4,) and got.dtype == np.float64
    assert_same(
        hs.full_like(hs.ones((2, 2), dtype=np.int8), 3),
        np.full_like(np.ones((2, 2), np.int8), 3),
    )


@pytest.mark.parametrize(
    "args,kwargs",
    [
        ((5,), {}),
        ((2, 10), {}),
        ((10, 2, -3), {}),
        ((0.5, 3.0, 0.25), {}),
        ((5,), {"dtype": np.float32}),
        ((1, 7, 2), {"dtype": np.uint8}),
        ((0,), {}),
        ((5, 1), {}),
        ((-3.5, 2), {}),
    ],
)
def test_arange_matches_numpy(hs, args, kwargs):
    assert_same(hs.arange(*args, **kwargs), np.arange(*args, **kwargs))


def test_arange_takes_the_0d_arrays_reductions_give(hs):
    """A reduction gives a 0-d array here where NumPy gives a scalar (``prod`` of a
    shape, ``sum`` of a mask), and ``arange`` takes it as NumPy takes either; arrays
    of more elements are NumPy's errors."""
    assert_same(hs.arange(hs.prod(hs.asarray((2, 3)))), np.arange(6))
    assert_same(hs.arange(1, hs.asarray(4), hs.asarray(1.5)), np.arange(1, 4, 1.5))
    assert_same(hs.arange(hs.asarray(True)), np.arange(np.array(True)))
    assert_same(hs.arange(np.array(3, np.uint8)), np.arange(np.array(3, np.uint8)))
    with pytest.raises(TypeError, match="only 0-dimensional"):
        hs.arange(hs.asarray([5]))
    with pytest.raises(ValueError, match="ambiguous"):
        hs.arange(hs.asarray([1, 2]))


@pytest.mark.parametrize(
    "args,kwargs",
    [
        ((0, 1), {}),
        ((0, 1, 7), {}),
        ((2.5, -1, 4), {"endpoint": False}),
        ((0, 10, 5), {"dtype": np.int32}),
        ((0, 1, 1), {}),
        ((0, 1, 0), {}),
        ((1, 1, 4), {}),
        ((np.float32(0), np.float32(1), 5), {}),
        ((0, 1, 6), {"retstep": True}),
    ],
)
def test_linspace_matches_numpy_to_the_last_bit(hs, args, kwargs):
    check(hs.linspace, np.linspace, args, args, "linspace", **kwargs)


#: Python scalars (weak), NumPy scalars and a 0-d array (strong) of several dtypes.
LINSPACE_ENDS = [1, 2.5, -3, np.float32(1.5), np.float16(0.25), np.int8(3), 1 + 2j]


@pytest.mark.parametrize("dtype", [None, np.int32, np.float32, np.float16], ids=str)
def test_linspace_takes_numpys_dtype_and_values_for_mixed_ends(hs, dtype):
    """NumPy 2 takes Python ends as weak (a float32 start with an int stop gives
    float32), takes the difference in that dtype and rounds to it before casting to
    ``dtype=``: dtypes and values equal to the last bit (found by test_api_fuzz.py)."""
    wrong = []
    for a in LINSPACE_ENDS:
        for b in LINSPACE_ENDS + [np.array(2.0, dtype=np.float32)]:
            for num, endpoint in (
                (0, True),
                (1, True),
                (2, False),
                (7, True),
                (7, False),
            ):
                args, kw = (a, b, num), {"endpoint": endpoint, "dtype": dtype}
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    error = _error_of(partial(np.linspace, *args, **kw))
                    if error is not None:  # complex ends into integers: TypeError
                        if _error_of(partial(hs.linspace, *args, **kw)) != error:
                            wrong.append(f"{args} {kw}: not NumPy's {error}")
                        continue
                    want = np.linspace(*args, **kw)
                    got = np.asarray(hs.linspace(*args, **kw))
                if got.dtype != want.dtype or not np.array_equal(got, want):
                    wrong.append(f"{args} {kw}: {got!r}, NumPy {want!r}")
    assert not wrong, "\n".join(wrong[:10])


@pytest.mark.parametrize("axis", [0, -1, 1, (), (0,)], ids=str)
def test_linspace_of_scalar_ends_checks_its_axis_like_numpy(hs, axis):
    want = _error_of(partial(np.linspace, 0, 1, 3, axis=axis))
    assert _error_of(partial(hs.linspace, 0, 1, 3, axis=axis)) == want
    if want is None:
        assert_same(hs.linspace(0, 1, 3, axis=axis), np.linspace(0, 1, 3, axis=axis))


def test_linspace_with_negative_num_raises_value_error(hs):
    with pytest.raises(ValueError):
        hs.linspace(0, 1, -1)


@pytest.mark.parametrize(
    "n,m,k", [(3, None, 0), (3, 5, 1), (4, 2, -1), (3, 3, 5), (0, None, 0), (4, 4, -3)]
)
def test_eye_matches_numpy(hs, n, m, k):
    assert_same(hs.eye(n, m, k), np.eye(n, m, k))
    assert_same(hs.eye(n, m, k, dtype=np.int8), np.eye(n, m, k, dtype=np.int8))


def test_identity_matches_numpy(hs):
    assert_same(hs.identity(4), np.identity(4))
    assert_same(hs.identity(2, dtype=bool), np.identity(2, dtype=bool))


@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("sparse", [False, True])
def test_meshgrid_matches_numpy(hs, indexing, sparse):
    x, y, z = np.arange(3.0), np.arange(4, dtype=np.int32), np.linspace(0, 1, 2)
    assert_same(
        hs.meshgrid(hs.asarray(x), hs.asarray(y), indexing=indexing, sparse=sparse),
        np.meshgrid(x, y, indexing=indexing, sparse=sparse),
    )
    assert_same(
        hs.meshgrid(x, y, z, indexing=indexing, sparse=sparse),
        np.meshgrid(x, y, z, indexing=indexing, sparse=sparse),
    )


@pytest.mark.parametrize(
    "obj",
    [
        [1, 2, 3],
        [[1.5, 2], [3, 4]],
        [True, False],
        [1 + 1j, 2],
        3.5,
        7,
        [],
        [[[]]],
        np.arange(6, dtype=np.uint16).reshape(2, 3)[:, ::-1],
    ],
    ids=repr,
)
def test_array_and_asarray_match_numpy(hs, obj):
    assert_same(hs.array(obj), np.array(obj))
    assert_same(hs.asarray(obj), np.asarray(obj))
    check(hs.array, np.array, (obj,), (obj,), "array dtype=float32", dtype=np.float32)
    assert_same(hs.array(obj, ndmin=3), np.array(obj, ndmin=3))


def test_array_copies_and_asarray_does_not(hs):
    h = hs.arange(4)
    c = hs.array(h)
    same = hs.asarray(h)
    h[0] = 9
    assert int(c[0]) == 0
    assert int(same[0]) == 9


def test_fortran_order_and_like_functions_keep_numpys_layout(hs):
    t = hs.arange(24.0).reshape(2, 3, 4).transpose(2, 1, 0)  # Fortran-contiguous
    nt = np.arange(24.0).reshape(2, 3, 4).transpose(2, 1, 0)
    for name in ["zeros_like", "ones_like", "empty_like"]:
        for order in ["K", "A", "C", "F"]:
            got = getattr(hs, name)(t, order=order)
            want = getattr(np, name)(nt, order=order)
            assert got.shape == want.shape and got.strides == want.strides, (
                name,
                order,
            )
    assert hs.full_like(t, 7).strides == np.full_like(nt, 7).strides
    # With a new shape: 'A' keeps Fortran order, 'K' when the dimensions are as many.
    for shape in [(4, 6), (24,), (2, 3, 4), (2, 2, 3, 2)]:
        for order in ["K", "A", "k"]:
            got = hs.zeros_like(t, order=order, shape=shape)
            want = np.zeros_like(nt, order=order, shape=shape)
            assert got.strides == want.strides, (shape, order)
    for name, args in [("zeros", ()), ("ones", ()), ("empty", ()), ("full", (5,))]:
        got = getattr(hs, name)((2, 3, 4), *args, order="F")
        want = getattr(np, name)((2, 3, 4), *args, order="F")
        assert got.strides == want.strides and got.flags.f_contiguous, name
        if name != "empty":
            assert_same(got, want)
    f = hs.zeros((2, 3), order="F")
    f[1, 2] = 5.0
    assert_same(f, np.array([[0, 0, 0], [0, 0, 5.0]]))
    # NumPy reads the order in any case (and as bytes), None as C.
    for order in ["f", b"F", "c", None]:
        got, want = hs.ones((2, 3), order=order), np.ones((2, 3), order=order)
        assert got.strides == want.strides, order
    for args in [(3,), (3, 4, 1), (4, 3, -2)]:
        got, want = hs.eye(*args, order="F"), np.eye(*args, order="F")
        assert got.strides == want.strides, args
        assert_same(got, want)


@pytest.mark.parametrize("order", ["X", "K", "a", "", "FF", 1])
def test_a_creation_order_numpy_refuses_raises_its_error(hs, order):
    for name, args in [("zeros", ()), ("ones", ()), ("empty", ()), ("full", (5,))]:
        with pytest.raises((TypeError, ValueError)) as expected:
            getattr(np, name)((2, 3), *args, order=order)
        with pytest.raises(expected.type, match=None) as got:
            getattr(hs, name)((2, 3), *args, order=order)
        assert str(got.value) == str(expected.value), (name, order)
    with pytest.raises((TypeError, ValueError)) as expected:
        np.eye(3, order=order)
    with pytest.raises(expected.type):
        hs.eye(3, order=order)


def test_concatenate_into_out_casts_under_the_rule(hs):
    a, na = both(hs, np.ones(2, dtype=np.int8))
    b, nb = both(hs, np.zeros(2))
    with pytest.raises(TypeError):
        hs.concatenate([a, b], out=hs.empty(4, dtype=np.int8))
    out = hs.empty(4, dtype=np.int8)
    hs.concatenate([a, b], out=out, casting="unsafe")
    assert_same(
        out, np.concatenate([na, nb], out=np.empty(4, dtype=np.int8), casting="unsafe")
    )
    with pytest.raises(TypeError):
        hs.concatenate([a, b], out=hs.empty(4), dtype=np.float64)


@pytest.mark.parametrize("dtype", ["bool", "int8", "float64", "complex128"])
def test_arrays_pickle_and_unpickle_as_arrays_of_the_module(hs, dtype):
    import pickle

    for layout, view in LAYOUTS.items():
        h, n = both(hs, sample(dtype))
        for protocol in (2, pickle.HIGHEST_PROTOCOL):
            back = pickle.loads(pickle.dumps(view(h), protocol=protocol))
            assert type(back) is type(h), layout
            assert_same(back, view(n), what=f"{layout} protocol {protocol}")


def test_negative_dimension_raises_value_error(hs):
    with pytest.raises(ValueError):
        hs.zeros((2, -1))


def _overcommits_always():
    try:
        with open("/proc/sys/vm/overcommit_memory") as f:
            return f.read().strip() == "1"
    except OSError:
        return False


# Each fails in NumPy before it touches memory: sizes past `isize`, or more bytes than
# Linux grants (memory and swap under its default overcommit policy; the output of the
# sum of two broadcast views is 32 TiB).
HUGE = [
    ("zeros 2**62", lambda m: m.zeros(2**62), False),
    ("ones 2**40 x 2**40", lambda m: m.ones((2**40, 2**40), dtype=m.int8), False),
    ("empty 8 TiB", lambda m: m.empty(2**40), True),
    ("empty 3 x 2**37 int8", lambda m: m.empty((3, 2**37), dtype=m.int8), True),
    ("arange float too long", lambda m: m.arange(0, 1e20, 1e-5), False),
    ("arange to inf", lambda m: m.arange(0, m.inf), False),
    ("arange to nan", lambda m: m.arange(0, m.nan), False),
    ("arange 2**62 ints", lambda m: m.arange(2**62), False),
    ("linspace 2**62", lambda m: m.linspace(0, 1, 2**62), False),
    ("random 2**62", lambda m: m.random.random(2**62), False),
    ("tile", lambda m: m.tile(m.ones(4), 2**62), False),
    (
        "sum of broadcasts",
        lambda m: (
            m.broadcast_to(m.ones(1), (2**21, 1))
            + m.broadcast_to(m.ones(1), (1, 2**21))
        ),
        True,
    ),
]


@pytest.mark.parametrize("what,make,memory", HUGE, ids=[h[0] for h in HUGE])
def test_an_array_too_big_to_make_raises_numpys_error_at_the_call(
    hs, what, make, memory
):
    # Lazy arrays allocate at first use; the size checks NumPy makes at creation (an
    # `isize` overflow, more bytes than Linux grants) are made at the call all the same.
    if memory and _overcommits_always():
        pytest.skip(
            "vm.overcommit_memory=1: NumPy's allocation succeeds and fills memory"
        )
    with pytest.raises(Exception) as expected:
        make(np)
    with pytest.raises(expected.type) as got:
        make(hs)
    assert type(got.value) is expected.type, what
    assert str(got.value) == str(expected.value), what


def test_dtypes_are_numpys_own_objects(hs):
    assert hs.float64 is np.float64
    assert hs.dtype is np.dtype
    assert hs.zeros(2, dtype=hs.int8).dtype is np.dtype(np.int8)
    assert (
        hs.pi == np.pi and hs.newaxis is None and hs.inf == np.inf and np.isnan(hs.nan)
    )


FLOAT_TO_INT_VALUES = [0.5, -1.7, 3e10, -3e10, np.nan, np.inf, -np.inf, 300.7, -129.5]
FLOAT_TO_INT_VALUES += [
    65536.5,
    2.0**63,
    -(2.0**63),
    2.0**64,
    1e19,
    2.0**31,
    4e9,
    1.5e19,
]
# In int64's range, across the 32-bit halves the cpu engine converts separately where
# the CPU has no vector instruction for it (AVX2); for 64-bit targets only, as NumPy's
# own uint32 results for them differ between its vector loop and its tail.
WIDE_FLOAT_TO_INT_VALUES = [
    4294967295.9,
    -4294967296.5,
    4294967297.0,
    -4294967297.0,
    2.0**52 + 1,
    -(2.0**62) + 2048,
    9.2e18,
    -9.2e18,
    123456789012.7,
    -123456789012.7,
]


@pytest.mark.parametrize("source", ["float64", "float32"])
@pytest.mark.parametrize(
    "target", ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
)
def test_float_to_int_casts_give_numpys_values_out_of_range_too(hs, source, target):
    """NaN, infinities and values outside the target's range convert as NumPy's
    contiguous loops do on x86-64 (which C leaves undefined), in every engine and tier
    alike, whether the cast runs alone, fused after arithmetic or over a reversed view;
    values repeat so that long vector loops and their tails both see them. (NumPy's own
    strided loop differs for uint32, converting through int64: Hassium's result does not
    depend on the layout.)"""
    values = FLOAT_TO_INT_VALUES
    if target in ("int64", "uint64"):
        values = values + WIDE_FLOAT_TO_INT_VALUES
    data = np.array(values * 5, dtype=source)
    with np.errstate(invalid="ignore", over="ignore"):
        expected = data.astype(target)
        h = hs.asarray(data)
        assert_same(h.astype(target), expected, what="astype")
        assert_same((h * 1).astype(target), expected, what="fused after a multiply")
        if not (AGAINST_NUMPY or USE_DOUBLE):  # both run NumPy's loops
            assert_same(h[::-1].astype(target)[::-1], expected, what="reversed")


def _same_arrays(got, want, what):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), what
        for g, w in zip(got, want):
            assert_same(g, w, what=what)
    else:
        assert_same(got, want, what=what)


@pytest.mark.parametrize(
    "dims", [(2, 3), (4,), (), (2, 0, 3), (3, 1, 2, 2), (2, -1)], ids=str
)
def test_indices_match_numpy_natively(hs, dims, monkeypatch):
    monkeypatch.setenv("HASSIUM_FALLBACK", "error")
    for sparse in (False, True):
        # dtype=None: integer grids when sparse, float64 stacked (NumPy's arange, empty).
        for dtype in (int, np.float32, np.uint8, None, np.bool_):
            want = _error_of(partial(np.indices, dims, dtype=dtype, sparse=sparse))
            got = _error_of(partial(hs.indices, dims, dtype=dtype, sparse=sparse))
            assert got == want
            if want is None:
                _same_arrays(
                    hs.indices(dims, dtype=dtype, sparse=sparse),
                    np.indices(dims, dtype=dtype, sparse=sparse),
                    f"indices{dims} {dtype} sparse={sparse}",
                )


def test_fromfunction_calls_the_function_on_lazy_index_grids(hs, monkeypatch):
    monkeypatch.setenv("HASSIUM_FALLBACK", "error")
    seen = []

    def f(i, j, scale=1):
        seen.append(type(i))
        return (i * 10 + j) * scale

    for kwargs in ({}, {"dtype": int}, {"dtype": np.float32, "scale": 3}):
        got = hs.fromfunction(f, (3, 4), **kwargs)
        assert seen.pop() is hs.ndarray  # computed by Hassium, not NumPy
        _same_arrays(
            got, np.fromfunction(f, (3, 4), **kwargs), f"fromfunction {kwargs}"
        )


@pytest.mark.parametrize(
    "args", [(4,), (4, 1), (4, -1), (3, 0, 5), (5, 2, 3), (0,), (4, 10), (-1,)], ids=str
)
def test_triangle_and_diagonal_indices_match_numpy_natively(hs, args, monkeypatch):
    monkeypatch.setenv("HASSIUM_FALLBACK", "error")
    for name in ("tril_indices", "triu_indices"):
        _same_arrays(
            getattr(hs, name)(*args), getattr(np, name)(*args), f"{name}{args}"
        )
    n = max(args[0], 0)
    for ndim in (1, 2, 3):
        _same_arrays(hs.diag_indices(n, ndim), np.diag_indices(n, ndim), "diag_indices")
    # The common use: picking a triangle out of a matrix.
    a = np.arange(float(n * n)).reshape(n, n)
    _same_arrays(
        hs.asarray(a)[hs.triu_indices(n, 1)], a[np.triu_indices(n, 1)], "a[iu]"
    )
