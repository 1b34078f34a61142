"""NumPy views of Hassium arrays stay coherent with them, on every stack.

``n = numpy.asarray(h)`` (or a memoryview, ``__array__``, DLPack) shares ``h``'s host
memory. While such a view is alive, every instruction recorded on ``h``'s base runs before
control returns to the program, and writes made through the view are seen by the next
instruction, also on engines that keep device copies (OpenCL). When the view dies, the
base is lazy again."""

import gc

import numpy as np
import pytest
from conftest import assert_same


def _pair(hs, values):
    data = np.asarray(values, dtype=np.float64)
    h = hs.asarray(data)
    return h, np.asarray(h), data.copy()


def test_inplace_update_is_visible_in_a_live_view(hs):
    h, n, ref = _pair(hs, [1.0, 2.0, 3.0, 4.0])
    h += 1
    ref += 1
    np.testing.assert_array_equal(n, ref)  # no flush, no read of h in between
    h *= 3
    ref *= 3
    np.testing.assert_array_equal(n, ref)
    assert_same(h, ref)


def test_write_through_view_does_not_change_an_earlier_result(hs):
    h, n, ref = _pair(hs, [1.0, 2.0, 3.0, 4.0])
    g = h * 2
    n[1] = 200
    assert_same(g, ref * 2)
    ref[1] = 200
    assert_same(h, ref)


def test_writes_through_the_view_are_read_by_hassium(hs):
    h, n, ref = _pair(hs, np.arange(8.0))
    n[::2] = -1
    ref[::2] = -1
    assert_same(h.sum(), ref.sum())
    assert_same(h + 1, ref + 1)
    n[3] = 100
    ref[3] = 100
    h += n  # the view as an operand of an update of its own base
    ref += ref
    assert_same(h, ref)
    np.testing.assert_array_equal(n, ref)
    # The same, alternating many times (device copies re-read at each step).
    for k in range(5):
        n[k] = k * 10
        ref[k] = k * 10
        h -= 1
        ref -= 1
        np.testing.assert_array_equal(n, ref)
    assert_same(h, ref)


def test_slices_of_the_array_and_of_the_view_stay_coherent(hs):
    h, n, ref = _pair(hs, np.arange(12.0).reshape(3, 4))
    row = h[1]
    row += 5  # a Hassium view of the exported base
    ref[1] += 5
    np.testing.assert_array_equal(n, ref)
    part = n[:, 1:3]  # a NumPy view of the view keeps the export alive
    del n
    gc.collect()
    h[:, 2] = -3
    ref[:, 2] = -3
    np.testing.assert_array_equal(part, ref[:, 1:3])
    part[0, 0] = 99
    ref[0, 1] = 99
    assert_same(h.max(axis=1), ref.max(axis=1))


def test_a_view_of_a_slice_sees_updates_of_the_whole(hs):
    h, _, ref = _pair(hs, np.arange(10.0))
    tail = np.asarray(h[5:])
    h[...] = h * 10
    ref *= 10
    np.testing.assert_array_equal(tail, ref[5:])


def test_memoryview_and_dlpack_are_views_too(hs):
    h, _, ref = _pair(hs, [1.0, 2.0, 3.0])
    m = memoryview(h)
    h += 1
    ref += 1
    assert m.tolist() == ref.tolist()
    m.release()
    d = np.from_dlpack(h)
    h *= 2
    ref *= 2
    np.testing.assert_array_equal(d, ref)
    g = h - 1
    d[0] = 50
    assert_same(g, ref - 1)


def test_after_the_view_dies_the_base_is_lazy_again(hs):
    if hs is np:
        pytest.skip("laziness is Hassium's")
    h, n, ref = _pair(hs, np.arange(4.0))
    del n
    gc.collect()
    hs.flush()
    before = hs.stats()["flushes"]
    for _ in range(3):
        h += 1
        ref += 1
    assert hs.stats()["flushes"] == before  # nothing ran yet
    assert_same(h, ref)


@pytest.mark.parametrize("dtype", [np.int32, np.complex64, np.bool_])
def test_views_of_other_dtypes_stay_coherent(hs, dtype):
    data = np.array([0, 1, 1, 0], dtype=dtype)
    h = hs.asarray(data)
    n = np.asarray(h)
    h[1] = 0
    data[1] = 0
    np.testing.assert_array_equal(n, data)
    n[0] = 1
    data[0] = 1
    assert_same(h * 1, data * 1)
