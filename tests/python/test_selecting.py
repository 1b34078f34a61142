"""compress, extract, place, putmask, put, fill_diagonal and the Array API's
cumulative_sum and cumulative_prod: native compositions (issue 46) that must give
NumPy's results, write through the array they are given, raise NumPy's errors, and
never take the fallback path."""

import warnings

import numpy as np
import pytest
from conftest import AGAINST_NUMPY, assert_same


def outcome(xp, f):
    """What ``f(xp)`` gives: its result as NumPy data, or its exception's type and text."""
    try:
        with warnings.catch_warnings():
            if xp is not np:
                warnings.simplefilter("error", xp.HassiumFallbackWarning)
            return np.asarray(f(xp))
    except (ValueError, IndexError, TypeError) as e:
        return (type(e).__name__, str(e))


def writes(name, *args, size=6, shape=None, **kwargs):
    """A case calling ``xp.<name>(a, *args)`` on a fresh float64 array, giving ``a``."""

    def case(xp):
        a = xp.arange(float(size))
        if shape is not None:
            a = a.reshape(shape)
        getattr(xp, name)(a, *args, **kwargs)
        return a

    return case


CASES = {
    "cumulative_sum": lambda xp: xp.cumulative_sum(xp.arange(4), include_initial=True),
    "cumulative_sum_0d": lambda xp: xp.cumulative_sum(xp.asarray(3.0)),
    "cumulative_sum_2d_needs_axis": lambda xp: xp.cumulative_sum(xp.ones((2, 2))),
    "cumulative_prod": lambda xp: xp.cumulative_prod(
        xp.arange(1, 7).reshape(2, 3), axis=1, include_initial=True, dtype=np.float32
    ),
    "compress_axis": lambda xp: xp.compress(
        [True, False, True], xp.arange(6).reshape(3, 2), axis=0
    ),
    "compress_flat_short": lambda xp: xp.compress([0, 2], xp.arange(6)),
    "compress_too_long": lambda xp: xp.compress(
        [True, False, True, True], xp.arange(3)
    ),
    "compress_2d_condition": lambda xp: xp.compress([[True]], xp.arange(3)),
    "extract": lambda xp: xp.extract(
        xp.arange(6).reshape(2, 3) % 2 == 0, xp.arange(6).reshape(2, 3) * 10
    ),
    "place_cycles": writes("place", np.arange(6) > 2, [7, 8]),
    "place_nothing": writes("place", np.zeros(6, bool), []),
    "place_empty_values": writes("place", np.arange(6) > 2, []),
    "place_sizes": writes("place", [True, False], [1]),
    "putmask_by_flat_index": writes("putmask", np.arange(6) % 2 == 0, [10, 20, 30, 40]),
    "putmask_2d": writes("putmask", np.eye(3, dtype=bool), [5], size=9, shape=(3, 3)),
    "putmask_sizes": writes("putmask", [True], [1]),
    "put_negative_and_repeated": writes("put", [0, 2, -1, 2], [9, 8]),
    "put_out_of_bounds": writes("put", [10], 1),
    "put_wrap": writes("put", [7, -8], [1, 2], mode="wrap"),
    "put_clip": writes("put", [10, -8], [1, 2], mode="clip"),
    "put_2d_flat": writes("put", [4], [99], size=6, shape=(2, 3)),
    "fill_diagonal_tall": writes("fill_diagonal", [1, 2], size=12, shape=(4, 3)),
    "fill_diagonal_wrap": writes("fill_diagonal", 7, size=15, shape=(5, 3), wrap=True),
    "fill_diagonal_cube": writes("fill_diagonal", 5, size=27, shape=(3, 3, 3)),
    "fill_diagonal_1d": writes("fill_diagonal", 5),
    "fill_diagonal_unequal": writes("fill_diagonal", 5, size=12, shape=(2, 2, 3)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_selecting_and_placing_match_numpy(hs, case):
    f = CASES[case]
    want, got = outcome(np, f), outcome(hs, f)
    if isinstance(want, tuple):
        assert got == want
    else:
        assert not isinstance(got, tuple), got
        assert_same(got, want, what=case)


@pytest.mark.skipif(AGAINST_NUMPY, reason="Hassium's write-through")
def test_placing_writes_through_a_view_into_its_base(hs):
    base = hs.zeros((4, 4))
    row = base[1]  # contiguous: written in place
    hs.put(row, [0, 3], [1.0, 2.0])
    hs.putmask(base[2], [True, False, True, False], [5.0])
    hs.place(base[3], [False, True, False, True], [7.0])
    want = np.zeros((4, 4))
    np.put(want[1], [0, 3], [1.0, 2.0])
    np.putmask(want[2], [True, False, True, False], [5.0])
    np.place(want[3], [False, True, False, True], [7.0])
    assert_same(base, want)


@pytest.mark.parametrize(
    "dtype,values",
    [
        ("float32", np.array([1.5])),  # float64 -> float32 is not 'safe': TypeError
        ("float32", 1.5),  # a Python number is assigned as such
        ("int8", 300),  # out of range: OverflowError
        ("int8", np.array([3])),
        ("int8", 3.5),
        ("bool", np.array([1], np.int8)),
        ("float64", np.array([2], np.int32)),
        ("uint8", -1),
    ],
    ids=repr,
)
def test_putmask_casts_values_as_numpy_does(hs, dtype, values):
    """NumPy casts an array of values under 'safe' (found by test_api_fuzz.py)."""
    mask = np.array([True, False, True])
    outcomes = []
    for mod, wrap in ((np, np.asarray), (hs, hs.asarray)):
        a = mod.zeros(3, dtype)
        v = wrap(values) if isinstance(values, np.ndarray) else values
        try:
            mod.putmask(a, wrap(mask), v)
            outcomes.append(np.asarray(a).tolist())
        except Exception as e:  # noqa: BLE001 - the type is what is compared
            outcomes.append(type(e))
    assert outcomes[0] == outcomes[1]


def test_put_checks_its_mode_before_anything_else(hs):
    for mod in (np, hs):
        with pytest.raises(ValueError, match="clipmode"):
            mod.put(mod.zeros(3), mod.asarray(np.array([], np.int64)), 1.0, mode="full")
