"""Calls the API fuzzing (test_api_fuzz.py) found Hassium answering unlike NumPy, pinned
one by one: the same result (dtype, shape, values) or the same exception type. Cases
that belong with a function's own tests are there; these are the edge arguments."""

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
            r = getattr(mod, name)(*args, **kwargs)
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
