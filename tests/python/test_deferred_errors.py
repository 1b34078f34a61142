"""Errors found while a batch runs (an index computed out of range, a negative integer
power): raised where the result is needed, and never at the cost of other arrays.

Hassium runs operations later than the program issues them, so a gather whose indices it
computed fails in the middle of a batch. What NumPy's user may rely on (docs/reliability.md,
"Deferred errors"): reading the failed result, or anything computed from it, raises NumPy's
exception every time; every other array holds exactly what NumPy gives; a failure nothing
read is raised once, by the next read. Each test runs under NumPy too
(``HASSIUM_TEST_AGAINST=numpy``), where the error comes at the operation itself:
``lazily`` captures it there, and ``read`` raises it where Hassium would.
"""

import threading

import numpy as np
import pytest
from conftest import AGAINST_NUMPY


def lazily(f):
    """``f()``, or the IndexError/ValueError it raised (NumPy raises at the operation)."""
    try:
        return f()
    except (IndexError, ValueError) as e:
        return e


def read(x):
    """``x`` on the host; raises what an operation that made it failed with."""
    if isinstance(x, Exception):
        raise x
    return np.asarray(x)


def derived(x, f):
    """``f(x)``, or the failure ``x`` already is."""
    return x if isinstance(x, Exception) else f(x)


def test_a_failed_gather_raises_at_every_read_and_other_arrays_are_exact(hs):
    a = hs.arange(5.0)
    acc = hs.zeros(3)
    acc += 1  # queued before the failure
    bad = lazily(lambda: a[hs.arange(2) * 9])
    twice = derived(bad, lambda b: b * 2)
    d = hs.ones(3) * 7
    acc += 1  # and after it
    # The arrays that do not depend on the failure read back exactly, first.
    np.testing.assert_array_equal(read(d), np.full(3, 7.0))
    np.testing.assert_array_equal(read(acc), np.full(3, 2.0))
    for _ in range(2):
        for x in (bad, twice):
            with pytest.raises(IndexError, match="index 9 is out of bounds"):
                read(x)
    # Reading them again changed nothing.
    np.testing.assert_array_equal(read(d), np.full(3, 7.0))
    np.testing.assert_array_equal(read(acc), np.full(3, 2.0))


def test_a_failed_gather_fused_with_other_work_leaves_that_work_exact(hs):
    n = 1000
    x = hs.linspace(0.0, 1.0, n)
    y = x * 3 + 1
    idx = (x * n * 2).astype(np.int64)  # reaches 2n - 1: out of range
    bad = lazily(lambda: (x[idx] + y).sum())
    z = hs.sqrt(y) + x
    total = y.sum()
    expect_x = np.linspace(0.0, 1.0, n)
    np.testing.assert_allclose(read(z), np.sqrt(expect_x * 3 + 1) + expect_x)
    assert float(total) == pytest.approx(float((expect_x * 3 + 1).sum()))
    with pytest.raises(IndexError, match="is out of bounds"):
        read(bad)


def test_a_scatter_with_an_index_out_of_range_writes_nothing_and_raises_once(hs):
    t = hs.zeros(4)
    other = hs.arange(4.0)
    idx = hs.arange(3) * 2  # 0, 2, 4: the last is out of range
    np.asarray(idx)  # the index array is in memory: checked before anything is written

    def scatter():
        t[idx] = 1.0

    err = lazily(scatter)
    later = t + 1
    other += 1
    np.testing.assert_array_equal(read(other), np.arange(4.0) + 1)
    if isinstance(err, Exception):
        assert isinstance(err, IndexError)
    else:
        # Hassium: the next read of the target raises NumPy's error, once.
        with pytest.raises(IndexError, match="index 4 is out of bounds"):
            read(t)
    # As after NumPy's failed assignment: the target holds its old values.
    np.testing.assert_array_equal(read(t), np.zeros(4))
    np.testing.assert_array_equal(read(later), np.ones(4))


def test_a_scatter_whose_index_the_batch_computes_writes_nothing_and_raises_once(hs):
    t = hs.zeros(4)
    other = hs.arange(4.0)
    other += 1
    err = lazily(lambda: t.__setitem__(hs.arange(3) * 2, 1.0))
    # The index is computed in the same batch: the scatter still runs on its own after it,
    # so its indices are checked before it writes.
    np.testing.assert_array_equal(read(other), np.arange(4.0) + 1)
    if isinstance(err, Exception):
        assert isinstance(err, IndexError)
    else:
        with pytest.raises(IndexError, match="index 4 is out of bounds"):
            read(t)
    np.testing.assert_array_equal(read(t), np.zeros(4))


def test_a_failing_power_next_to_an_in_place_update_leaves_the_update_exact(hs):
    # The shape of what the campaign found on the cpu stack: a power that fails on an
    # exponent the batch computes, then an in-place update of an array the power read,
    # with the same loop shape, so the two could share a kernel.
    n = 64
    x = hs.arange(n)
    e = hs.arange(n) - 3
    p = lazily(lambda: x ** (e * 2))
    x += 1
    y = x * 2
    np.testing.assert_array_equal(read(x), np.arange(n) + 1)
    np.testing.assert_array_equal(read(y), (np.arange(n) + 1) * 2)
    with pytest.raises(ValueError, match="negative integer powers"):
        read(p)


def test_a_failing_power_on_an_exponent_in_memory_next_to_an_update_leaves_it_exact(hs):
    n = 64
    x = hs.arange(n)
    e = hs.arange(n) - 3
    np.asarray(e)  # in memory: checked before the kernel that updates x runs
    p = lazily(lambda: x**e)
    x += 1
    np.testing.assert_array_equal(read(x), np.arange(n) + 1)
    with pytest.raises(ValueError, match="negative integer powers"):
        read(p)


def test_a_failing_gather_next_to_an_in_place_update_leaves_the_update_exact(hs):
    n = 64
    src = hs.arange(float(n))
    idx = hs.arange(n) + 1  # n is out of range
    np.asarray(idx)  # in memory: checked before the kernel runs
    acc = hs.ones(n)
    bad = lazily(lambda: src[idx] * acc)
    acc += 1
    np.testing.assert_array_equal(read(acc), np.full(n, 2.0))
    with pytest.raises(IndexError, match="index 64 is out of bounds"):
        read(bad)


def test_two_gathers_in_one_kernel_mark_only_the_failing_one_invalid(hs):
    n = 64
    src = hs.arange(float(n))
    good = lazily(lambda: src[hs.arange(n)[::-1].copy()] * 2)
    bad = lazily(lambda: src[hs.arange(n) * 2] + 1)
    np.testing.assert_array_equal(read(good), np.arange(float(n))[::-1] * 2)
    with pytest.raises(IndexError, match="is out of bounds"):
        read(bad)


def test_a_negative_integer_power_raises_value_error_where_read(hs):
    p = lazily(lambda: hs.arange(1, 4) ** (hs.arange(3) - 1))
    q = hs.arange(1, 4) ** 2
    np.testing.assert_array_equal(read(q), np.array([1, 4, 9]))
    with pytest.raises(ValueError, match="negative integer powers"):
        read(p)
    with pytest.raises(ValueError, match="negative integer powers"):
        read(derived(p, lambda v: v + 1))


def test_a_later_operation_on_a_failed_result_fails_and_others_go_on(hs):
    a = hs.arange(3.0)
    bad = lazily(lambda: a[hs.arange(3) - 5])
    with pytest.raises(IndexError):
        read(bad)
    later = derived(bad, lambda b: b.sum() + 1)
    fine = a.sum() + 1
    assert float(fine) == 4.0
    with pytest.raises(IndexError):
        read(later)


@pytest.mark.skipif(AGAINST_NUMPY, reason="NumPy raises at the operation itself")
def test_a_failure_nothing_reads_is_a_warning_not_an_error_elsewhere(hs, capfd):
    a = hs.arange(4.0)
    for _ in range(3):
        t = a[hs.arange(2) * 7] + 1  # rebound each time: the failed results die unread
    del t
    d = a * 2
    # Nothing needed the failed results: an unrelated read does not fail ...
    np.testing.assert_array_equal(read(d), np.arange(4.0) * 2)
    # ... and stderr says what failed.
    assert "index 7 is out of bounds" in capfd.readouterr().err


def test_a_failure_in_one_thread_does_not_reach_another_threads_arrays(hs):
    a = hs.arange(6.0)
    results = {}

    def failing():
        results["bad"] = lazily(lambda: a[hs.arange(3) * 4])

    def healthy():
        b = hs.ones(6) * 3
        results["good"] = read(b)

    t = threading.Thread(target=failing)
    t.start()
    t.join()
    u = threading.Thread(target=healthy)
    u.start()
    u.join()
    np.testing.assert_array_equal(results["good"], np.full(6, 3.0))
    with pytest.raises(IndexError, match="index 8 is out of bounds"):
        read(results["bad"])
