"""Calls the API fuzzing (test_api_fuzz.py) found Hassium answering unlike NumPy, pinned
one by one: the same result (dtype, shape, values) or the same exception type. Cases
that belong with a function's own tests are there; these are the edge arguments."""

import functools
import warnings

import numpy as np
import pytest
from conftest import AGAINST_NUMPY

#: (function name, arguments) -- NumPy arrays become Hassium arrays on Hassium's side.
CASES = [
    # A 0-d array squeezes an integer axis 0 or -1 (not a tuple naming it).
    ("squeeze", (np.array(False), 0)),
    ("squeeze", (np.array(2.5), -1)),
    ("squeeze", (np.array(2.5), (0,))),
    ("squeeze", (np.array(2.5), 1)),
    # arange of booleans past length 2 is NumPy's TypeError.
    ("arange", (3,), {"dtype": bool}),
    ("arange", (2,), {"dtype": bool}),
    # The cumulative functions take a 0-d array as one element whatever the axis, and
    # refuse a tuple of axes with ValueError.
    ("cumulative_sum", (np.array(5),), {"axis": 0}),
    ("cumulative_prod", (np.array(False),), {"axis": -1}),
    ("cumulative_sum", (np.arange(3),), {"axis": ()}),
    ("cumulative_sum", (np.array(5),), {"axis": 1}),  # AxisError: one dimension
    ("cumulative_sum", (np.array(5),), {"axis": (0,)}),  # one axis in a tuple
    ("cumulative_prod", (np.arange(6).reshape(2, 3),), {"axis": (1,)}),
    ("cumulative_sum", (np.array(5),), {"axis": (0, 1)}),  # AxisError before the count
    ("cumulative_sum", (np.arange(6).reshape(2, 3),), {"axis": (0, 5)}),
    ("cumulative_sum", (np.arange(6).reshape(2, 3),), {"axis": (0, 1)}),
    ("cumulative_sum", (np.array([False]),), {"axis": (0,), "include_initial": True}),
    ("put", (np.zeros(2, np.int8), np.array([0]), float("nan"))),
    # A non-integer axis is NumPy's TypeError before any other argument is checked.
    ("argsort", (np.array([2, 1]),), {"axis": (), "kind": "introselect"}),
    ("sort", (np.array([2, 1]),), {"axis": (), "kind": "stable", "stable": True}),
    ("argpartition", (np.array([2, 1]), 0), {"axis": (), "kind": "stable"}),
    ("partition", (np.array([2, 1]), 0), {"axis": 1.5}),
    ("compress", (False, False, ())),
    # Any Python int fills a bool array (nonzero is True), unchecked against a range.
    ("full_like", (False, -1)),
    ("full", (2, 300), {"dtype": bool}),
    # putmask: a NaN or infinite Python float into integers is NumPy's conversion error.
    ("putmask", (np.zeros(2, np.int8), np.array([True, False]), float("nan"))),
    ("putmask", (np.zeros(2, np.int8), np.array([True, False]), float("inf"))),
    # place casts an array of values under 'safe'.
    ("place", (np.zeros(3, bool), np.array([True, False, True]), np.array([0.5]))),
    ("place", (np.zeros(3), np.array([True, False, True]), np.array([2], np.int8))),
    ("place", (np.zeros(3, np.int8), np.array([True, False, True]), 300)),
    # nanmean of floats into an integer or bool dtype.
    ("nanmean", (np.array([0.5, np.nan]),), {"dtype": bool}),
    ("nanmean", (np.array([1, 2]),), {"dtype": np.int32}),
    # A weak Python int joins a uint8 array without a casting error.
    ("setxor1d", (np.array(0, np.uint8), 0, True)),
    ("concatenate", ((np.array([1], np.uint8), 0),), {"axis": None}),
    # cov and corrcoef centre rows in place in dtype=: a float mean into bool or integer
    # rows is NumPy's casting error (Hassium gave NaNs).
    ("corrcoef", (np.array([[1.0, 2, 3], [2, 1, 4]]),), {"dtype": bool}),
    ("cov", (np.array([[1.0, 2, 3], [2, 1, 4]]),), {"dtype": np.int32}),
    ("cov", (np.array([[1.0, 2, 3], [2, 1, 4]]),), {"dtype": np.float16}),
    # pad broadcasts pad_width to (ndim, 2) unless it is one number or one pair: a 0-d
    # array refuses two pairs.
    ("pad", (np.array(False), [(0, 0), (0, 0)])),
    ("pad", (np.array(5), [[1, 2]])),
    ("pad", (np.arange(3), [[1], [2]])),
    ("pad", (np.arange(3), [[-1, 2]])),
    # roll of a 0-d array along an explicit axis: NumPy's unpacking ValueError.
    ("roll", (np.array(False), 0, ())),
    ("roll", (np.array(3), 1)),
    # trapezoid indexes a list with the axis first: IndexError, unless x is n-d.
    ("trapezoid", (np.array([], bool),), {"axis": 1}),
    ("trapezoid", (np.arange(4.0),), {"x": np.arange(4.0), "axis": -2}),
    ("trapezoid", (np.ones((2, 3)),), {"x": np.ones((2, 3)), "axis": 2}),
    # round of bools is rint's (float16); with decimals, NumPy's casting error.
    ("round", (np.array([True, False]),)),
    ("around", (np.array(True),)),
    ("round", (np.array([True]), 1)),
    # copy=False of what NumPy always copies (a scalar, a list) is its ValueError.
    ("array", (False,), {"copy": False}),
    ("asarray", (1j,), {"copy": False, "dtype": np.float32}),
    ("asanyarray", ([1, 2],), {"copy": False}),
    ("asarray", (np.array([1, 2]),), {"copy": False}),
    ("asarray", (3,), {"copy": ""}),
    ("nan_to_num", (float("nan"), False)),
    ("nan_to_num", ([1.0, float("nan")],), {"copy": False}),
    ("nan_to_num", (np.array([1.0, np.nan]),), {"copy": False}),
    # split reads ary.shape, array_split len(ary) for what has none: a Python scalar's
    # AttributeError or TypeError, a list's length whatever the axis.
    ("array_split", (False, 1)),
    ("split", (3, 1)),
    ("split", (2.5, [1])),
    ("array_split", ([1, 2], 2), {"axis": 1}),
    ("array_split", (np.array(3), 1)),
    # NumPy 2.4's size takes a tuple of axes.
    ("size", (np.zeros((2, 3)), (0, 1))),
    ("size", (np.zeros((2, 3)), ())),
    ("size", (np.zeros((2, 3)), (1, -1))),
    ("size", (np.zeros((2, 3)), (2,))),
    # accumulate of a 0-d array checks the axis before refusing the scalar.
    ("add.accumulate", (np.array(False),), {"axis": 1}),
    ("add.accumulate", (np.array(2.5),), {"axis": (0,)}),
    ("add.accumulate", (np.array(2.5),), {"axis": -1}),
    ("multiply.accumulate", (np.arange(3),), {"axis": ()}),
    # argmin of a 0-d array along axis 0 or -1 keeps its zero dimensions.
    ("nanargmin", (np.array(2.5), 0), {"keepdims": True}),
    ("nanargmax", (False, -1), {"keepdims": True}),
    ("argmax", (np.array(3),), {"axis": 0, "keepdims": True}),
    ("argmin", (np.array(3.0),), {"axis": 1}),
    # A Python int is weak in copyto: it shares int64 with a bool dst ('unsafe' only)
    # and converts to an integer one (OverflowError out of range).
    ("copyto", (np.zeros(2, bool), 0)),
    ("copyto", (np.zeros(2, bool), 3), {"casting": "unsafe"}),
    ("copyto", (np.zeros(2, np.int8), 300)),
    ("copyto", (np.zeros(2, np.float16), 1j)),
    ("copyto", (np.zeros(2, np.int8), 1), {"casting": "equiv"}),
    ("copyto", (np.zeros(2, np.int8), np.array(2.5))),
    # var and std compute in any dtype= (integers truncate, complex stays complex); an
    # array's std in an integer dtype is NumPy's casting error.
    ("var", (False,), {"dtype": np.int8}),
    ("var", (np.array([1, 2, 4]),), {"dtype": np.int8}),
    ("var", (np.array([1.0, 2.0, 3.0, 6.0]),), {"dtype": np.complex64}),
    ("std", ([0],), {"dtype": bool}),
    ("std", (np.array([[1, 2], [4, 8]]),), {"dtype": np.int16, "axis": 0}),
    ("var", (np.array([True, False]),), {"dtype": bool}),
    # nanvar of an inexact array refuses a dtype that is not, before the axis.
    ("nanvar", (0.5, 1, bool)),
    ("nanstd", (np.array([1.0, np.nan]),), {"dtype": np.int8}),
    ("nanvar", (np.array([1, 2, 4]),), {"dtype": np.int8}),
    # With dtype=, a Python int converts to the loop's dtype (OverflowError out of
    # range); comparisons take it as it is.
    ("floor_divide", (np.array(False), 0), {"dtype": np.uint8}),
    ("subtract", (3, np.array([True])), {"dtype": np.uint8}),
    ("add", (np.array([1, 2], np.int8), 300), {"dtype": np.int8}),
    ("floor_divide", (np.array([1.5]), 300), {"dtype": np.int8}),
    ("equal", (np.array([1, 2], np.int8), 300), {"dtype": bool}),
    # The logical ufuncs take any input as a bool (their `??->?` loop): a Python int out
    # of the array's range too, once it fits a C long (NumPy's OverflowError beyond).
    ("logical_and", (np.array([1, 0], np.int8), 300)),
    ("logical_or", (-1, np.array([0, 0], np.uint8)), {"dtype": bool}),
    ("logical_xor", (np.array([1, 0], np.int16), 70000)),
    ("logical_and", (np.array([1, 0], np.uint64), 2**63)),
    ("logical_or", (np.array([1.5, 0.0]), -(2**63) - 1)),
    ("logical_xor", (np.array([1, 0], np.int8), 300), {"dtype": np.int8}),
    # A bool array compares with a Python int in int64 (no exact loop as for integers);
    # with dtype=bool an int beyond a C long overflows before the casting is checked.
    ("less", (np.array([True, False]), 2**63)),
    ("equal", (np.array([True, False]), 300)),
    ("add", (np.array([True]), 2**63), {"dtype": bool}),
    ("multiply", (np.array([1.5]), -(2**70)), {"dtype": bool}),
    ("add", (np.array([True]), 300), {"dtype": bool}),
    # `where` casts a Python int to the result as C does, once it is an int64 or uint64.
    ("where", (False, -1, np.array(0, np.uint8))),
    ("where", (np.array([True, False]), 300, np.array([0, 1], np.int8))),
    ("where", (True, 2**64, np.array([0], np.int8))),
    # A unary ufunc's Python int is an int64 (no weak scalar), cast to a dtype= loop.
    ("floor", (0,), {"dtype": np.uint8}),
    ("negative", (-1,), {"dtype": np.uint8}),
    ("square", (300,), {"dtype": np.int8}),
    # Every axis is checked against the dimensions before any repeat.
    ("any", (np.array([], bool),), {"axis": (0, 0, 1)}),
    ("sum", (np.zeros((2, 2)),), {"axis": (0, 0)}),
    # arange sets `start` and `start + step` as items of dtype (range-checked) and steps
    # by their difference; ints past int64 make it float64.
    ("arange", (2.5, 7, 2.5), {"dtype": np.int8}),
    ("arange", (-1, 3), {"dtype": np.uint8}),
    ("arange", (100, 300, 100), {"dtype": np.int8}),
    ("arange", (0, 300, 100), {"dtype": np.int8}),
    ("arange", (-0.5, 2, 1.5), {"dtype": bool}),
    ("arange", (0, 2**63 + 2, 2**62)),
    # average normalises its axis first: a 0-d array has none.
    ("average", (False, 0, 1)),
    ("average", (2.5, (0,))),
    # gradient compares the steps of its coordinates with the first.
    ("gradient", (np.array([], np.int8), np.array([], bool))),
    ("gradient", (np.array([1.0]), np.array([1.0]))),
    # isin's table method: a range past ar2's dtype is NumPy's RuntimeError.
    ("isin", (False, np.array([0, -128], np.int8)), {"kind": "table"}),
    ("isin", (1, np.array([0, 2**64 - 1], np.uint64)), {"kind": "table"}),
    # put reads the mode first, then refuses an empty target, casts index arrays to
    # intp under 'safe' and converts other values as an assignment does.
    ("put", (np.array([], bool), np.array(0, np.int8), False)),
    ("put", (np.array([], bool), np.array(0, np.int8), False, "full")),
    ("put", (np.zeros(3), np.array([0], np.uint64), 1)),
    ("put", (np.zeros(3, np.int8), [0], 300)),
    ("put", (np.zeros(3, np.int8), [0.5], np.int64(300))),
    # putmask and place convert values that are not an array as an assignment does.
    ("place", (np.array(False), np.array(False), np.float32(1.5))),
    ("putmask", (np.zeros(3, np.int8), np.array([True, False, True]), [1.5])),
    ("putmask", (np.zeros(3, np.int8), np.array([True, False, True]), np.int64(300))),
    ("putmask", (np.zeros(3, np.int8), np.array([True, False, True]), [300])),
    ("putmask", (np.zeros(3), np.array([True, False, True]), 2j)),
    # Order statistics merge no or several axes with a -1: an empty array refuses it.
    ("quantile", (np.array([], bool), 0.25, ())),
    ("median", (np.zeros((0, 2, 3)),), {"axis": (1, 2)}),
    ("percentile", (np.arange(3.0), 50, ())),
    # take reads no index where nothing is taken.
    ("take", (np.zeros((0, 0), bool), 0), {"axis": 1}),
    ("take", (np.zeros((0, 3)), 5), {"axis": 1}),
    ("take", (np.zeros((2, 0)), 0), {"axis": 1}),
    ("take", (np.zeros((3, 0, 0)), 5), {"axis": 1}),
    ("take", (np.zeros((0, 0)), 7), {"axis": 1, "mode": "clip"}),
    ("take", (np.zeros((2, 3)), 1), {"axis": 5, "mode": "bad"}),
    # cov with rowvar=False transposes m unless it is 1-d (y unless it has one row), and
    # no variable is NumPy's empty float64 (0, 0), before y is read.
    ("cov", (np.array([[1.0, 2.0, 3.0]]),), {"rowvar": False, "bias": True}),
    (
        "cov",
        (np.array([[1.0, 2.0, 3.0]]), np.array([[1.0, 5.0, 3.0]])),
        {"rowvar": False},
    ),
    ("cov", (np.zeros((1, 0), bool),), {"rowvar": False}),
    ("corrcoef", (np.zeros((0, 0), bool), np.array(False))),
    ("corrcoef", (np.zeros((0, 0), bool), np.zeros(0, bool)), {"dtype": np.float16}),
    # trapezoid takes NumPy's steps in NumPy's order: the spacing from x first (diff's
    # error for a 0-d x, its AxisError), then the axis as a list index into y's
    # dimensions (IndexError), and an x of another shape broadcast as it comes.
    ("trapezoid", (np.array(1.5),), {"x": np.arange(6.0).reshape(2, 3)}),
    ("trapezoid", (np.array(1.5),), {"x": np.array(2.0)}),
    ("trapezoid", (np.arange(6.0).reshape(2, 3),), {"x": np.arange(4.0).reshape(2, 2)}),
    ("trapezoid", (np.arange(6.0).reshape(2, 3),), {"x": np.arange(3.0), "axis": 0}),
    ("trapezoid", (np.arange(6.0).reshape(2, 3), np.ones((2, 3))), {"axis": -3}),
    ("trapezoid", (np.arange(6.0).reshape(2, 3),), {"axis": 2}),
    ("trapezoid", (np.arange(6.0).reshape(2, 3),), {"x": np.ones((2, 2, 3))}),
    # A complex power past NumPy's multiplied-out exponents (under 100) is C's cpow,
    # exp(b log a) with cexp scaling cos and sin before e^x overflows: a zero or tiny
    # imaginary part stays finite.
    ("power", (np.array([2 + 0j], np.complex64), 32767)),
    ("power", (np.array([2 + 0j, 0.5 - 0j]), -32767)),
    ("power", (np.array([2 + 1e-300j]), 1000.5)),
    ("float_power", (np.array([3 + 0j, 1 + 1j]), 1500.0)),
]


def outcome(mod, name, args, kwargs):
    def conv(x):
        if isinstance(x, np.ndarray):
            return x.copy() if mod is np else mod.asarray(x)
        if isinstance(x, tuple):
            return tuple(conv(v) for v in x)
        return x

    args = conv(args)
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            r = functools.reduce(getattr, name.split("."), mod)(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e)
    if r is None:  # in place: the first argument after the call
        r = args[0]
    r = np.asarray(r)
    return r.dtype, r.shape, r.tolist()


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}{c[1:]!r}"[:60])
def test_edge_arguments_answer_as_numpy_does(hs, case):
    name, args, kwargs = (*case, {}) if len(case) == 2 else case
    assert outcome(hs, name, args, kwargs) == outcome(np, name, args, kwargs)


@pytest.mark.parametrize("value", [False, 3, 2.5, 1 + 2j, np.float32(2)])
@pytest.mark.parametrize("name", ["real", "imag"])
def test_real_and_imag_of_a_scalar_are_its_own(hs, name, value):
    """NumPy returns a scalar's own .real/.imag (``np.real(False)`` is the int 0)."""
    got, want = getattr(hs, name)(value), getattr(np, name)(value)
    assert type(got) is type(want)
    assert got == want


def test_composed_ufuncs_round_a_python_scalar_to_their_float16_loop(hs):
    """A composed ufunc computes float16 in float32, but NumPy converts a Python scalar
    to the float16 loop first: 70000 is inf, whose quotient and remainder are NaN."""
    x = np.array([1.0, 3.0], np.float16)
    with np.errstate(all="ignore"):
        want = np.divmod(70000, x)
    for g, w in zip(hs.divmod(70000, hs.asarray(x)), want):
        g = np.asarray(g)
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("name", ["argmin", "argmax"])
@pytest.mark.parametrize(
    "kwargs",
    [{"axis": 0, "keepdims": True}, {"axis": -1, "keepdims": True}, {"keepdims": True}],
)
@pytest.mark.parametrize("shape", [(), (2, 3)])
def test_arg_reduction_methods_keep_dimensions_as_numpy_does(hs, name, kwargs, shape):
    """``a.argmin(keepdims=True)`` without an axis keeps each of ``a``'s dimensions as
    a length-1 one, none for a 0-d array (axis 0 or -1 of one is its only element)."""
    x = np.array([[1.0, 7, 2], [9, 0, 3]]) if shape else np.array(2.5)
    want = getattr(x, name)(**kwargs)
    got = np.asarray(getattr(hs.asarray(x), name)(**kwargs))
    assert (got.dtype, got.shape, got.tolist()) == (
        want.dtype,
        want.shape,
        want.tolist(),
    )


@pytest.mark.parametrize(
    ("name", "out_shape"),
    [("sum", (3,)), ("max", (3,)), ("argmin", (3,)), ("cumsum", (2, 3))],
)
def test_methods_return_their_out_and_refuse_it_in_a_tuple(hs, name, out_shape):
    """An array method's ``out=`` is what it returns (the very object), and only a
    ufunc's ``reduce`` takes it in a 1-tuple: NumPy's TypeError for a method."""
    a = hs.asarray(np.arange(6.0).reshape(2, 3))
    out = hs.zeros(out_shape, np.int64 if name == "argmin" else np.float64)
    assert getattr(a, name)(axis=0, out=out) is out
    assert (
        np.asarray(out).tolist()
        == getattr(np.arange(6.0).reshape(2, 3), name)(axis=0).tolist()
    )
    with pytest.raises(TypeError):
        getattr(a, name)(axis=0, out=(out,))


def test_argmax_without_an_axis_keeps_dims_into_out(hs):
    a = hs.asarray(np.array([[1, 7, 2], [9, 0, 3]]))
    out = hs.zeros((1, 1), np.int64)
    assert a.argmax(keepdims=True, out=out) is out
    assert np.asarray(out).tolist() == [[3]]
    with pytest.raises(ValueError):
        a.argmax(keepdims=True, out=hs.zeros((1,), np.int64))


def _into_out(mod, name, x, out_dtype, kwargs):
    want = getattr(np, name)(x, **kwargs)
    out = np.zeros(np.shape(want), out_dtype)
    if mod is not np:
        x, out = mod.asarray(x), mod.asarray(out)
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            r = getattr(mod, name)(x, out=out, **kwargs)
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return TypeError if isinstance(e, TypeError) else type(e)
    o = np.asarray(out)
    return r is out, o.dtype, o.tolist()


@pytest.mark.parametrize("name", ["var", "std", "mean", "nanvar", "nanstd", "nanmean"])
@pytest.mark.parametrize(
    "out_dtype", [np.int64, np.uint8, bool, np.float16, np.float32, np.complex64]
)
@pytest.mark.parametrize(
    ("x", "kwargs"),
    [
        (np.array([1.0, 2.0, 4.0, 7.5]), {}),
        (np.array([[1, 2, 40], [4, 8, 250]], np.uint8), {"axis": 1}),
        (
            np.array([[1.5, np.nan, 9.0], [3.0, 5.0, 100.0]]),
            {"axis": 0, "keepdims": True},
        ),
        (np.array([True, False, True]), {}),
        (np.array([1.0 + 2j, 3.0 - 1j]), {}),
    ],
    ids=["floats", "uint8s", "with-nan", "bools", "complex"],
)
def test_moments_into_out_sum_into_it_then_divide_as_numpy_does(
    hs, name, out_dtype, x, kwargs
):
    """NumPy's mean and var reduce the sum into ``out`` (unsafely) and divide there: an
    integer or bool ``out`` holds the truncated sum's quotient. std then takes the root
    in place, NumPy's casting error for an integer or bool ``out``; the nan functions
    of an inexact array refuse such an ``out`` first."""
    if name in ("var", "std", "nanvar", "nanstd") and "ddof" not in kwargs:
        kwargs = dict(kwargs, ddof=0)
    got = _into_out(hs, name, x, out_dtype, kwargs)
    want = _into_out(np, name, x, out_dtype, kwargs)
    if isinstance(want, tuple) and np.dtype(out_dtype).kind in "fc":
        assert got[:2] == want[:2]
        np.testing.assert_allclose(got[2], want[2], rtol=2e-3, equal_nan=True)
    else:
        assert got == want


@pytest.mark.skipif(AGAINST_NUMPY, reason="Hassium's own rule: NumPy adopts its own")
@pytest.mark.parametrize("name", ["asarray", "asanyarray", "array"])
@pytest.mark.parametrize(
    "host", [np.arange(3.0), memoryview(b"abc")], ids=["numpy", "buffer"]
)
def test_copy_false_of_host_data_is_numpys_copy_needed_error(hs, name, host):
    """Hassium copies host data, a NumPy array too, into its runtime's own memory (it
    cannot adopt NumPy's: an instruction recorded on such a view could run after the
    program wrote it through NumPy), so ``copy=False`` is NumPy's ValueError where a
    copy cannot be avoided. A Hassium array of the dtype asked for is returned as is."""
    with pytest.raises(ValueError, match="Unable to avoid copy"):
        getattr(hs, name)(host, copy=False)
    a = hs.asarray(np.arange(3.0))
    assert getattr(hs, name)(a, copy=False) is a


def test_ufunc_checks_the_out_cast_before_the_shapes(hs):
    """NumPy resolves the loop and its casts, then broadcasts: an ``out=`` it cannot
    cast into is its casting error even where the inputs do not broadcast."""
    a, b = np.zeros((0, 0), bool), np.zeros((2, 0), bool)
    with pytest.raises(TypeError):
        hs.fmax(
            hs.asarray(a), hs.asarray(b), dtype=np.int8, out=hs.asarray(np.array(False))
        )
    with pytest.raises(ValueError):
        hs.fmax(hs.asarray(a), hs.asarray(b), out=hs.asarray(np.array(False)))


@pytest.mark.skipif(AGAINST_NUMPY, reason="NumPy 2.4 loops forever on it")
def test_take_wrapping_along_an_empty_axis_takes_nothing(hs):
    """``np.take(np.zeros((0, 0)), 0, axis=0, mode="wrap")`` never returns in NumPy
    2.4 (it subtracts the axis length, 0, until the index is in range); the result has
    no element, so Hassium returns it."""
    got = hs.take(hs.asarray(np.zeros((0, 0))), 0, axis=0, mode="wrap")
    assert np.asarray(got).shape == (0,)
