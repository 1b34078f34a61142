"""Calls the API fuzzing (test_api_fuzz.py) found Hassium answering unlike NumPy, pinned
one by one: the same result (dtype, shape, values) or the same exception type. Cases
that belong with a function's own tests are there; these are the edge arguments."""

import functools
import warnings

import numpy as np
import pytest

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
