"""Host memory in any byte order and alignment, against NumPy.

Hassium arrays are in native byte order. Every way host data enters -- ``asarray``,
``array``, assignment, ufunc operands, ``copyto``, index arrays, functions that fall back
to NumPy (``frombuffer``, ``load``), objects with ``__array_interface__`` or the buffer
protocol -- converts a big-endian (or little-endian, on a big-endian machine) array to
the native dtype with the same values, and copies unaligned memory (a field of a
structured array, ``frombuffer`` at an odd offset) without reading it through a
misaligned typed pointer."""

import io
import sys
import warnings

import numpy as np
import pytest
from conftest import AGAINST_NUMPY, DTYPES, assert_same, sample

# NumPy keeps a foreign byte order where Hassium converts: these tests check Hassium's
# documented difference, so they have nothing to check against NumPy itself.
pytestmark = pytest.mark.skipif(
    AGAINST_NUMPY, reason="Hassium converts to native order"
)

SWAPPED = "<" if sys.byteorder == "big" else ">"


def _values(dtype):
    """Values of ``dtype`` whose bytes are not palindromes (so a missed swap shows)."""
    return sample(dtype, shape=(2, 3), seed=3)


def _swapped(a):
    """``a`` with the same values in the other byte order."""
    return a.astype(a.dtype.newbyteorder(SWAPPED))


def _unaligned(a):
    """``a`` with the same values, in memory one byte off the dtype's alignment."""
    raw = np.zeros(a.nbytes + 1, np.uint8)
    raw[1:] = np.frombuffer(np.ascontiguousarray(a).tobytes(), np.uint8)
    return np.frombuffer(raw.data, dtype=a.dtype, offset=1).reshape(a.shape)


# (name, make the host array from a native one)
HOST_FORMS = [
    ("swapped", _swapped),
    ("unaligned", _unaligned),
    ("swapped unaligned", lambda a: _unaligned(_swapped(a))),
    ("swapped strided", lambda a: _swapped(np.repeat(a, 2, axis=-1))[..., ::2]),
]


@pytest.mark.parametrize(
    "form", [f for _, f in HOST_FORMS], ids=[n for n, _ in HOST_FORMS]
)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_asarray_of_foreign_memory_has_numpys_values(hs, dtype, form):
    native = _values(dtype)
    host = form(native)
    assert np.array_equal(host, native)  # the test's own premise
    for got in (hs.asarray(host), hs.array(host), hs.asarray(host, dtype=dtype)):
        # The native dtype, whatever the host array's byte order.
        assert_same(got, native)
        assert got.dtype == dtype and got.dtype.isnative


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_big_endian_zero_d_and_empty_arrays_convert(hs, dtype):
    for native in (np.array(_values(dtype)[1, 2]), _values(dtype)[:, :0]):
        assert_same(hs.asarray(_swapped(native)), native)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_foreign_memory_as_an_operand_is_read_by_value(hs, dtype):
    native = _values(dtype)
    h = hs.asarray(native)
    all_true = np.ones(native.shape, dtype=bool)
    for name, form in HOST_FORMS:
        host = form(native)
        # A NumPy operand of an operator, of a ufunc, and assigned into a view.
        assert_same(h == host, all_true, what=name)
        assert_same(hs.equal(host, h), all_true, what=name)
        target = hs.zeros((2, 3), dtype=dtype)
        target[...] = host
        assert_same(target, native, what=name)
        target = hs.zeros((2, 3), dtype=dtype)
        hs.copyto(target, host)
        assert_same(target, native, what=name)
        target = hs.zeros((2, 3), dtype=dtype)
        target[1] = host[1]
        assert_same(target[1], native[1], what=name)


def test_arithmetic_on_big_endian_operands_matches_numpy(hs):
    x = (np.arange(6).reshape(2, 3) / 4).astype(">f8")
    y = (np.arange(6).reshape(2, 3) - 2).astype(">i2")
    assert (
        not x.dtype.isnative and not y.dtype.isnative
    )  # (NumPy's arithmetic is native)
    h = hs.asarray(np.ones((2, 3)))
    assert_same(h + x, np.ones((2, 3)) + x)
    assert_same(hs.multiply(x, y), np.multiply(x, y))
    assert_same(hs.add(h, y, out=hs.empty((2, 3))), np.ones((2, 3)) + y)
    assert_same(hs.sum(x), np.sum(x))


def test_issue_example_big_endian_arange(hs):
    got = hs.asarray(np.arange(4, dtype=">f8"))
    assert got.dtype == np.float64
    assert_same(got, np.arange(4, dtype=np.float64))


def test_index_arrays_in_foreign_memory_index_by_value(hs):
    data = np.arange(10.0) * 3
    h = hs.asarray(data)
    idx = np.array([7, 2, 9, 0])
    for name, form in HOST_FORMS:
        host_idx = form(idx)
        assert_same(h[host_idx], data[host_idx], what=name)
        mask = form(data > 10)
        assert_same(h[mask], data[mask], what=name)
        target = hs.zeros(10)
        expected = np.zeros(10)
        target[host_idx] = 5.0
        expected[host_idx] = 5.0
        assert_same(target, expected, what=name)


def test_structured_field_views_are_copied_unaligned(hs):
    rec = np.zeros(5, dtype=[("tag", "u1"), ("x", ">f8"), ("n", "<i4"), ("z", ">c8")])
    rec["x"] = np.linspace(-1, 1, 5)
    rec["n"] = np.arange(5) - 2
    rec["z"] = np.arange(5) * (1 - 2j)
    for field in ("x", "n", "z"):
        view = rec[field]
        assert not view.flags.aligned
        got = hs.asarray(view)
        assert_same(got, view.astype(view.dtype.newbyteorder("=")))


def test_frombuffer_and_load_of_big_endian_data(hs):
    # Both run through NumPy (the fallback warns once); their results are wrapped.
    warnings.simplefilter("ignore", getattr(hs, "HassiumFallbackWarning", Warning))
    payload = np.arange(5, dtype=">i4").tobytes()
    assert_same(
        hs.frombuffer(payload, dtype=">i4"),
        np.frombuffer(payload, dtype=">i4").astype("=i4"),
    )
    odd = b"\x00" + np.arange(3, dtype=">f8").tobytes()
    assert_same(
        hs.frombuffer(odd, dtype=">f8", offset=1), np.arange(3, dtype=np.float64)
    )
    f = io.BytesIO()
    np.save(f, np.arange(6, dtype=">c16").reshape(2, 3) * 1j)
    f.seek(0)
    assert_same(hs.load(f), np.arange(6, dtype=np.complex128).reshape(2, 3) * 1j)


class _Interface:
    """A foreign object exposing big-endian memory through ``__array_interface__``."""

    def __init__(self, a):
        self._a = a
        self.__array_interface__ = a.__array_interface__


def test_array_interface_and_buffer_protocol_inputs(hs):
    be = (np.arange(4) + 0.5).astype(">f8")
    assert_same(hs.asarray(_Interface(be)), be.astype(np.float64))
    assert_same(hs.asarray(memoryview(be)), be.astype(np.float64))
    assert_same(hs.asarray([1.0, 2.0]) + _Interface(be[:2]), np.array([1.5, 3.5]))


def test_read_only_big_endian_array_converts_to_a_writeable_copy(hs):
    be = np.arange(3, dtype=">i8")
    be.flags.writeable = False
    got = hs.asarray(be)
    assert got.flags.writeable
    got[0] = 7
    assert be[0] == 0
    assert_same(got, np.array([7, 1, 2]))


def test_big_endian_numpy_out_receives_numpys_values(hs):
    # A NumPy ``out=`` runs through NumPy, which writes its own array in its own order.
    warnings.simplefilter("ignore", getattr(hs, "HassiumFallbackWarning", Warning))
    h = hs.asarray(np.arange(4.0))
    out = np.zeros(4, dtype=">f8")
    hs.add(h, 1, out=out)
    np.testing.assert_array_equal(out, np.arange(4.0) + 1)
    out2 = np.zeros(2, dtype=">f8")
    hs.sum(h.reshape(2, 2), axis=0, out=out2)
    np.testing.assert_array_equal(out2, [2.0, 4.0])
