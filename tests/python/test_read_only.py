"""Read-only arrays (NumPy's WRITEABLE flag) against NumPy: `broadcast_to`'s views, arrays
locked with `setflags(write=False)` and those made from read-only NumPy arrays refuse every
write with NumPy's own error, keep their values, and read like any other array."""

import ctypes

import numpy as np
import pytest
from conftest import assert_same, both, sample


def _locked(xp, data):
    a = xp.asarray(data).copy()
    a.setflags(write=False)
    return a


# Every way a program writes into an array it names, as (name, write(xp, target)).
WRITES = [
    ("setitem", lambda xp, a: a.__setitem__(0, 7)),
    ("setitem slice", lambda xp, a: a.__setitem__((slice(None), 1), 7)),
    ("setitem ellipsis", lambda xp, a: a.__setitem__(Ellipsis, xp.ones(4))),
    ("setitem fancy", lambda xp, a: a.__setitem__(([0, 2], [1, 3]), 7)),
    ("setitem mask", lambda xp, a: a.__setitem__(a > 3, 0)),
    ("flat setitem", lambda xp, a: a.flat.__setitem__(3, 7)),
    ("fill", lambda xp, a: a.fill(0)),
    ("copyto", lambda xp, a: xp.copyto(a, 1.0)),
    ("put", lambda xp, a: xp.put(a, [0, 5], [1.0, 2.0])),
    ("iadd", lambda xp, a: a.__iadd__(1)),
    ("imul array", lambda xp, a: a.__imul__(xp.ones(4))),
    ("ufunc out", lambda xp, a: xp.add(xp.ones((3, 4)), 1, out=a)),
    ("ufunc out tuple", lambda xp, a: xp.sqrt(xp.ones((3, 4)), out=(a,))),
    ("sum out", lambda xp, a: xp.sum(xp.ones((2, 3, 4)), axis=0, out=a)),
    ("max out", lambda xp, a: xp.maximum.reduce(xp.ones((2, 3, 4)), axis=0, out=a)),
    ("cumsum out", lambda xp, a: xp.cumsum(xp.ones((3, 4)), axis=1, out=a)),
    ("matmul out", lambda xp, a: xp.matmul(xp.ones((3, 2)), xp.ones((2, 4)), out=a)),
    ("dot out", lambda xp, a: xp.dot(xp.ones((3, 2)), xp.ones((2, 4)), out=a)),
    ("clip out", lambda xp, a: xp.clip(xp.ones((3, 4)), 0, 1, out=a)),
    ("mean out", lambda xp, a: xp.mean(xp.ones((2, 3, 4)), axis=0, out=a)),
    ("concatenate out", lambda xp, a: xp.concatenate([xp.ones((1, 4))] * 3, out=a)),
    ("sort", lambda xp, a: a.sort()),
    ("partition", lambda xp, a: a.partition(1)),
    ("random out", lambda xp, a: xp.random.default_rng(0).random((3, 4), out=a)),
    ("putmask", lambda xp, a: xp.putmask(a, a > 3, 0.0)),
    ("place", lambda xp, a: xp.place(a, a > 3, [0.0])),
    ("fill_diagonal", lambda xp, a: xp.fill_diagonal(a, 0.0)),
]


def _error(write, xp, target):
    with pytest.raises(Exception) as info:
        write(xp, target)
    return type(info.value), str(info.value)


@pytest.mark.parametrize("name,write", WRITES, ids=[w[0] for w in WRITES])
@pytest.mark.parametrize("how", ["setflags", "flags attribute", "numpy input", "view"])
def test_every_write_into_a_read_only_array_raises_numpys_error(hs, name, write, how):
    data = sample("float64", shape=(3, 4))
    arrays = {}
    for xp in (hs, np):
        if how == "setflags":
            a = _locked(xp, data)
        elif how == "flags attribute":
            a = xp.asarray(data).copy()
            a.flags.writeable = False
        elif how == "numpy input":
            host = data.copy()
            host.flags.writeable = False
            a = xp.asarray(host)
        else:  # a view made after the owner was locked is read-only too
            a = _locked(xp, sample("float64", shape=(3, 8)))[:, ::2]
        arrays[xp] = a
    before = np.array(arrays[np])
    assert not arrays[hs].flags.writeable and not arrays[hs].flags["WRITEABLE"]
    want = _error(write, np, arrays[np])
    got = _error(write, hs, arrays[hs])
    assert got == want, name
    # Nothing was written, nothing lost.
    assert_same(arrays[hs], before)


def test_add_at_refuses_a_read_only_array(hs):
    # NumPy 2.4 writes into a read-only array here (a NumPy bug); Hassium refuses as
    # every other output does.
    a = _locked(hs, sample("float64", shape=(3, 4)))
    with pytest.raises(ValueError, match="^output array is read-only$"):
        hs.add.at(a, ([0, 1], [2, 3]), 1.0)
    assert_same(a, sample("float64", shape=(3, 4)))


def test_dot_takes_only_an_exact_out_as_numpy_does(hs):
    x, y = sample("float64", shape=(3, 2)), sample("float64", shape=(2, 4), seed=1)
    bad = [
        lambda xp: xp.ones((1, 3, 4)),
        lambda xp: xp.ones((3, 4), dtype=np.float32),
        lambda xp: xp.ones((3, 4), order="F"),
        lambda xp: xp.ones((3, 8))[:, ::2],
        lambda xp: _locked(xp, np.ones((3, 4))),
    ]
    for make in bad:
        want = _error(
            lambda xp, o: xp.dot(xp.asarray(x), xp.asarray(y), out=o), np, make(np)
        )
        got = _error(
            lambda xp, o: xp.dot(xp.asarray(x), xp.asarray(y), out=o), hs, make(hs)
        )
        assert got == want
    # Vectors: the scalar result goes into a 0-d out only, not a (1,)-shaped one.
    v, w = sample("float64", shape=(5,)), sample("float64", shape=(5,), seed=2)
    for xp in (hs, np):
        with pytest.raises(ValueError, match="not acceptable"):
            xp.dot(xp.asarray(v), xp.asarray(w), out=xp.zeros(1))
    for method in (False, True):
        out_h, out_n = hs.zeros(()), np.zeros(())
        if method:
            r = hs.asarray(v).dot(hs.asarray(w), out=out_h)
        else:
            r = hs.dot(hs.asarray(v), hs.asarray(w), out=out_h)
        np.dot(v, w, out=out_n)
        assert r is out_h
        assert_same(out_h, out_n)
    # A scalar operand multiplies, and `out` is then a ufunc's: broadcast and cast.
    ints = sample("int32", shape=(3, 4))
    out_h, out_n = hs.zeros((3, 4)), np.zeros((3, 4))
    hs.dot(hs.asarray(ints), 2, out=out_h)
    np.dot(ints, 2, out=out_n)
    assert_same(out_h, out_n)


def test_random_out_is_checked_and_filled_as_numpy_does(hs):
    gen = hs.random.default_rng(0)
    out = hs.zeros((3, 4))
    assert gen.random(out=out) is out
    # Without `size` the draw fills `out` (not one value broadcast into it).
    values = np.asarray(out).ravel()
    assert (
        len(set(values.tolist())) == values.size
        and ((0 <= values) & (values < 1)).all()
    )
    cases = [
        (5, hs.zeros(4), np.zeros(4)),
        (None, hs.zeros(4, np.float32), np.zeros(4, np.float32)),
        (None, hs.zeros(8)[::2], np.zeros(8)[::2]),
    ]
    for size, h, n in cases:

        def draw(xp, o, size=size):
            return xp.random.default_rng(0).random(size, out=o)

        assert _error(draw, hs, h) == _error(draw, np, n)


def test_broadcast_to_is_a_read_only_view_that_reads_as_numpys(hs):
    h, n = both(hs, sample("int32", shape=(3, 1, 4)))
    got, want = hs.broadcast_to(h, (2, 3, 5, 4)), np.broadcast_to(n, (2, 3, 5, 4))
    assert_same(got, want)
    assert not got.flags.writeable and got.base is not None
    assert got.strides == want.strides
    # Later writes into the source show through the view, as in NumPy.
    h[1, 0, 2] = 99
    n[1, 0, 2] = 99
    assert_same(got, want)
    # Reading it works like any array; results are fresh and writeable.
    total = got * 2 + 1
    assert_same(total, want * 2 + 1)
    assert total.flags.writeable
    assert_same(got[1, :, 2:].sum(axis=0), want[1, :, 2:].sum(axis=0))
    for write, _ in [(lambda xp, a: a.__setitem__(0, 1), None)]:
        assert _error(write, hs, got) == _error(write, np, want)


def test_broadcast_to_a_huge_shape_costs_no_memory(hs):
    # 8 TB if materialised; NumPy's view takes none, and neither does Hassium's.
    shape = (1_000_000, 1_000_000, 3)
    got = hs.broadcast_to(hs.arange(3.0), shape)
    want = np.broadcast_to(np.arange(3.0), shape)
    assert got.shape == shape
    assert_same(got[123_456, 654_321], want[123_456, 654_321])
    assert_same(got[:5, -3:].sum(axis=1), want[:5, -3:].sum(axis=1))


def test_broadcast_to_of_host_data_and_scalars(hs):
    assert_same(hs.broadcast_to([1, 2, 3], (2, 3)), np.broadcast_to([1, 2, 3], (2, 3)))
    assert_same(hs.broadcast_to(5.0, (2, 2)), np.broadcast_to(5.0, (2, 2)))
    assert_same(hs.broadcast_to(hs.ones(3), 3), np.broadcast_to(np.ones(3), 3))


def test_setflags_write_true_follows_numpys_rules(hs):
    for xp in (hs, np):
        owner = xp.arange(6.0)
        owner.setflags(write=False)
        view = owner[::2]
        with pytest.raises(ValueError, match="cannot set WRITEABLE flag to True"):
            view.setflags(write=True)
        owner.setflags(write=True)  # an owner unlocks itself
        owner[0] = 5
        assert owner[0] == 5
        assert not view.flags.writeable  # views made while locked stay read-only
        unlocked_view = owner[1:]
        assert unlocked_view.flags.writeable
        with pytest.raises(ValueError, match="WRITEBACKIFCOPY"):
            owner.setflags(uic=True)


def test_a_broadcast_view_cannot_be_made_writeable(hs):
    # NumPy allows it (writes then land in every aliased element); Hassium refuses
    # clearly, since a kernel writing all of such a view would race with itself.
    b = hs.broadcast_to(hs.arange(3.0), (4, 3))
    with pytest.raises(hs._hassium.UnsupportedError, match="broadcast view writeable"):
        b.setflags(write=True)
    with pytest.raises(hs._hassium.UnsupportedError, match="broadcast view writeable"):
        b.flags.writeable = True
    assert not b.flags.writeable
    # Without aliasing (nothing broadcast) it is a plain view of a writeable array.
    same = hs.broadcast_to(hs.arange(3.0), (3,))
    same.setflags(write=True)
    same[0] = 5
    assert_same(same, np.array([5.0, 1.0, 2.0]))


def test_copies_of_read_only_arrays_are_writeable(hs):
    data = sample("float32", shape=(4,))
    host = data.copy()
    host.flags.writeable = False
    for xp in (hs, np):
        ro = xp.asarray(host)
        assert not ro.flags.writeable
        assert not xp.asarray(ro).flags.writeable  # no copy: the same array
        for copy in (
            ro.copy(),
            xp.array(ro),
            xp.array(host),
            xp.asarray(host, dtype=np.float64),
            xp.asarray(host, copy=True),
            ro.astype(np.float64),
            ro + 0,
        ):
            assert copy.flags.writeable
            copy[0] = 1  # and writing into it leaves the original alone
        assert_same(ro, data)


def test_numpy_sees_a_read_only_array_as_read_only(hs):
    a = hs.arange(5.0)
    a.setflags(write=False)
    host = np.asarray(a)
    assert not host.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        host[0] = 1
    assert memoryview(a).readonly
    with pytest.raises(TypeError):  # ctypes asks for a writable buffer
        (ctypes.c_double * 5).from_buffer(a)
    assert_same(a, np.arange(5.0))
    # Unlocked again, NumPy writes through it.
    a.setflags(write=True)
    np.asarray(a)[0] = 9
    assert float(a[0]) == 9.0


def test_broadcast_arrays_results_stay_writeable_copies(hs):
    # NumPy's broadcast_arrays views are writeable (with a warning on write); Hassium
    # gives copies, which a program can write into as well.
    a, b = hs.broadcast_arrays(hs.ones((3, 1)), hs.arange(4.0))
    assert a.flags.writeable and b.flags.writeable
    a[0, 0] = 5
    assert_same(a[:, 0], np.array([5.0, 1.0, 1.0]))
