"""Python ints beyond ``intp`` and shapes beyond the dimension limit, against NumPy: big
slice bounds clamp, big indices raise NumPy's exception types, big extents are NumPy's
``ValueError``, and too many dimensions name the limit wherever an array is made."""

import numpy as np
import pytest
from conftest import assert_same

BIG = [2**63 - 1, 2**63, 2**64 - 1, 2**64, 10**20, 2**100]
BIG += [-b for b in BIG] + [-(2**63)]


def _outcome(f):
    try:
        return f(), None
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return None, type(e)


def _same_outcome(hs, key_of, what):
    data = np.arange(10).reshape(2, 5)
    h = hs.asarray(data)
    got, got_err = _outcome(lambda: h[key_of(h)])
    expected, err = _outcome(lambda: data[key_of(data)])
    assert got_err is err, f"{what}: {got_err} is not NumPy's {err}"
    if err is None:
        assert_same(got, expected, what=what)


@pytest.mark.parametrize("v", BIG)
def test_big_slice_bounds_clamp_like_numpy(hs, v):
    for key in (
        lambda a: (slice(None), slice(v, None)),
        lambda a: (slice(None), slice(None, v)),
        lambda a: (slice(None), slice(None, None, v)),
        lambda a: slice(v, -v, v),
        lambda a: (Ellipsis, slice(-v, v, -v)),
    ):
        _same_outcome(hs, key, f"slice with {v}")


def test_issue_example_slice_from_10_to_the_20(hs):
    a = hs.arange(5)
    assert_same(a[10**20 :], np.arange(5)[10**20 :])


class _Index:
    """Not an int, but usable as one through ``__index__``."""

    def __init__(self, v):
        self.v = v

    def __index__(self):
        return self.v


@pytest.mark.parametrize(
    "bound",
    [
        np.int64(-2),
        np.uint8(3),
        True,
        _Index(1),
        _Index(-(10**20)),
        2.0,
        "1",
        np.float64(1),
    ],
    ids=["int64", "uint8", "bool", "index", "big_index", "float", "str", "float64"],
)
def test_slice_bounds_of_every_kind_of_index(hs, bound):
    """Python ints take a fast path; anything else goes through ``__index__``, and what
    has none is NumPy's TypeError."""
    for key in (
        lambda a: slice(bound, None),
        lambda a: (slice(None), slice(None, bound)),
        lambda a: (0, slice(None, None, bound)),
    ):
        _same_outcome(hs, key, f"slice bound {bound!r}")


@pytest.mark.parametrize("v", BIG)
def test_big_int_indices_raise_numpys_type(hs, v):
    for key in (
        lambda a: (0, v),
        lambda a: (v,),
        lambda a: (Ellipsis, v),
        lambda a: (np.int64(1), v),
        lambda a: (0, np.uint64(v)) if 0 <= v < 2**64 else (0, v),
    ):
        _same_outcome(hs, key, f"index {v}")
    h = hs.arange(5)
    _, got_err = _outcome(lambda: h[v])
    _, err = _outcome(lambda: np.arange(5)[v])
    assert got_err is err, f"a[{v}]: {got_err} is not NumPy's {err}"


def test_issue_example_index_2_to_the_64(hs):
    with pytest.raises(IndexError):
        hs.arange(5)[2**64]
    with pytest.raises(IndexError):
        hs.arange(5)[2**64] = 1
    with pytest.raises(OverflowError):
        hs.arange(5)[2**63]


def test_zero_d_uint64_index_beyond_intp_is_numpys_overflow_error(hs):
    data = np.arange(5)
    for v in (2**63, 2**64 - 1):
        idx = np.array(v, dtype=np.uint64)
        with pytest.raises(OverflowError):
            data[idx]
        with pytest.raises(OverflowError):
            hs.asarray(data)[hs.asarray(idx)]


@pytest.mark.parametrize("extent", [2**63, 2**64, -(2**64), 10**30])
def test_extents_beyond_intp_are_numpys_value_error(hs, extent):
    for make in (
        lambda xp: xp.zeros(extent),
        lambda xp: xp.empty((2, extent)),
        lambda xp: xp.ones([extent]),
        lambda xp: xp.arange(4).reshape(extent),
        lambda xp: xp.arange(4).reshape(1, extent),
        lambda xp: xp.arange(4).reshape((extent, -1)),
    ):
        with pytest.raises(ValueError, match="Maximum allowed dimension exceeded"):
            make(np)
        with pytest.raises(ValueError, match="Maximum allowed dimension exceeded"):
            make(hs)
    h = hs.arange(4)
    with pytest.raises(ValueError, match="Maximum allowed dimension exceeded"):
        h.shape = (extent,)


def test_every_way_to_exceed_the_dimension_limit_names_it(hs):
    if hs is np:
        pytest.skip("Hassium's limit (16) is below NumPy's (64)")
    shape = (1,) * 17
    limit = "maximum supported dimension for an ndarray is currently 16, found 17"
    for make in (
        lambda: hs.zeros(shape),
        lambda: hs.empty(shape),
        lambda: hs.ones(shape),
        lambda: hs.full(shape, 2.0),
        lambda: hs.arange(1).reshape(shape),
        lambda: hs.arange(1).reshape(*shape),
        lambda: hs.zeros(1).reshape((1,) * 16 + (-1,)),
    ):
        with pytest.raises(ValueError, match=limit):
            make()
    h = hs.zeros(1)
    with pytest.raises(ValueError, match=limit):
        h.shape = shape
    # Within the limit, all of them work.
    assert hs.zeros(1).reshape((1,) * 16).shape == (1,) * 16


@pytest.mark.parametrize("v", [2**63, 2**64, -(2**64)])
def test_big_axis_arguments_raise_numpys_type(hs, v):
    data = np.ones((2, 3))
    h = hs.asarray(data)
    for call in (
        lambda a: a.sum(axis=v),
        lambda a: a.sum(axis=(v,)),
        lambda a: a.transpose(v, 0),
        lambda a: a.transpose((0, v)),
    ):
        _, got = _outcome(lambda call=call: call(h))
        _, expected = _outcome(lambda call=call: call(data))
        assert got is expected
