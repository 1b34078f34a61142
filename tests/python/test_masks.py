"""Boolean-mask indexing with a lazy mask (``a[m]``, ``a[m] = v``), which runs on the
engine: the mask is never brought to host memory, and only the count of what it selects
is read back, once per compaction and only for assignments that need it. Compared with
NumPy on every dtype, masks over the leading dimensions, odd layouts and empty
selections, with NumPy's errors; and ``a ** scalar`` with NumPy's shortcuts."""

import warnings

import numpy as np
import pytest
from conftest import DTYPES, assert_same
from test_ufuncs import batched, same

RNG = np.random.default_rng(42)

#: (array shape, mask dimensions): masks over all or the leading dimensions.
SHAPES = [
    ((9,), 1),
    ((4, 5), 2),
    ((4, 5), 1),
    ((3, 4, 2), 1),
    ((3, 4, 2), 2),
    ((3, 4, 2), 3),
    ((0, 3), 1),
    ((5, 0), 1),
    ((1,), 1),
]


def values_of(dtype, shape):
    n = int(np.prod(shape))
    x = RNG.integers(-50, 50, size=n).reshape(shape)
    if dtype.kind == "c":
        x = x + 1j * RNG.integers(-5, 5, size=n).reshape(shape)
    if dtype.kind == "b":
        return x > 0
    if dtype.kind == "u":
        return np.abs(x).astype(dtype)
    return x.astype(dtype)


def masks(shape, k):
    """All-false, all-true and a random mask over the first k dimensions."""
    ms = shape[:k]
    return [np.zeros(ms, bool), np.ones(ms, bool), RNG.random(ms) < 0.5]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape,k", SHAPES, ids=str)
@batched
def test_mask_reads_and_writes_match_numpy(hs, dtype, shape, k):
    n = values_of(dtype, shape)
    for m in masks(shape, k):
        hm = hs.asarray(m) & True  # computed lazily, as a program's masks are
        same(hs.asarray(n)[hm], n[m])
        sel = n[m]
        # Values of the selection's shape, one row broadcast along it, and a scalar.
        new = values_of(dtype, sel.shape)
        for v in [new, new[:1], new[0] if len(new) and new.ndim > 1 else None, 7]:
            if v is None:
                continue
            e = n.copy()
            e[m] = v
            h = hs.array(n)
            h[hm] = hs.asarray(v) if isinstance(v, np.ndarray) else v
            same(h, e, what=f"a[m] = {v!r}")


def test_masked_update_of_the_selection_itself(hs):
    """``z[m] = f(z[m], c[m])``, the form iterations take, on non-contiguous views."""
    n = np.arange(24.0).reshape(4, 6)[:, ::-1].T  # reversed and transposed
    c = np.linspace(-1, 1, 24).reshape(6, 4)
    h, hc = hs.asarray(np.ascontiguousarray(n)), hs.asarray(c)
    h = h.T.copy().T  # the same values in a non-contiguous layout
    for _ in range(3):
        m = np.abs(n) <= 12
        hm = abs(h) <= 12
        n[m] = n[m] ** 2 + c[m]
        h[hm] = h[hm] ** 2 + hc[hm]
        assert_same(h, n)
    # Values that are a view of the target: copied before they are written over.
    n[n > 100] = n[:1].ravel()[: int((n > 100).sum())]
    sel = int(hs.sum(h > 100))
    h[h > 100] = h[:1].ravel()[:sel]
    assert_same(h, n)


def test_mask_errors_are_numpys(hs):
    a = hs.zeros((4, 2))
    m = hs.asarray(np.array([1, 0, 1, 1], bool)) & True
    with pytest.raises(ValueError, match=r"value array of shape \(2,2\) could not be"):
        a[m] = hs.ones((2, 2))
    with pytest.raises(ValueError, match=r"value array of shape \(3,3\) could not be"):
        a[m] = hs.ones((3, 3))
    b = hs.zeros(5)
    with pytest.raises(
        ValueError, match="cannot assign 3 input values to the 5 output"
    ):
        b[b == 0] = hs.ones(3)
    with pytest.raises(
        ValueError, match="cannot assign 3 input values to the 0 output"
    ):
        b[b == 1] = hs.ones(3)
    with pytest.raises(IndexError, match="size of axis is 5 but size of corresponding"):
        b[hs.ones(4, bool) & True]
    with pytest.raises(IndexError, match="size of axis is 5 but size of corresponding"):
        b[hs.ones(4, bool) & True] = 1.0
    with pytest.raises(IndexError, match="too many indices"):
        b[hs.ones((5, 1), bool) & True]
    assert_same(a, np.zeros((4, 2)), what="a refused assignment wrote")
    assert_same(b, np.zeros(5), what="a refused assignment wrote")


def test_a_mask_stays_on_the_engine(hs):
    """A compaction reads back one count; a scalar or a broadcast row, none."""
    if not hasattr(hs, "stats"):
        pytest.skip("NumPy has no runtime to count flushes of")
    a = hs.arange(1000.0).reshape(250, 4)
    m = a[:, 0] % 3 == 0
    hs.asarray(a).sum()  # nothing pending
    before = hs.stats()["flushes"]
    a[m] = -1.0
    a[m] = hs.asarray([[1.0, 2.0, 3.0, 4.0]])
    assert hs.stats()["flushes"] == before, "an assignment without a count flushed"
    sel = a[m]
    sel *= 2
    a[m] = sel
    assert hs.stats()["flushes"] == before, "a selection assigned back read its count"
    assert sel.shape == (84, 4)
    assert hs.stats()["flushes"] == before + 1, "a compaction flushed more than once"
    m[0] = not bool(m[0])  # a read (flush), then a write
    a[m] = a[m] + 1
    assert hs.stats()["flushes"] == before + 2
    n = np.arange(1000.0).reshape(250, 4)
    nm = n[:, 0] % 3 == 0
    n[nm] = [1.0, 2.0, 3.0, 4.0]
    n[nm] = n[nm] * 2
    nm[0] = not nm[0]
    n[nm] = n[nm] + 1
    assert_same(a, n)


SPECIAL = [-0.0, -np.inf, np.inf, np.nan, -2.0, 3.0, 1e200, 0.25]
COMPLEX = [1 + 2j, 1e200 + 1e200j, complex(-0.0, 0.0), complex(3, -1e-300), 0j, -4j]


@pytest.mark.parametrize("dtype", ["f2", "f4", "f8", "c8", "c16", "i8"])
@pytest.mark.parametrize(
    "e", [2, 2.0, 0.5, -1, -1.0, 1, 0, 3, np.float64(0.5)], ids=repr
)
def test_power_by_a_scalar_takes_numpys_shortcuts(hs, dtype, e):
    """``a ** 2`` squares, ``a ** 0.5`` takes the square root, ``a ** -1`` the
    reciprocal, as NumPy's operator does (and its float loops for ``np.power``): NaN for
    ``(-inf) ** 0.5`` and -0.0 for ``(-0.0) ** 0.5``, where C's ``pow`` differs."""
    dt = np.dtype(dtype)
    if dt.kind == "c":
        n = np.array(COMPLEX, dt)
    elif dt.kind == "i":
        n = np.array([3, -2, 1, 5], dt)
    else:
        n = np.array(SPECIAL, dt)
    if dt.kind == "i" and e == -1 and isinstance(e, int):
        with pytest.raises(ValueError):
            hs.asarray(n) ** e
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected, ufunc = n**e, np.power(n, e)
        got, got_ufunc = hs.asarray(n) ** e, hs.power(hs.asarray(n), e)
        h, m = hs.array(n), n.copy()
        inplace = np.result_type(n, e) == dt
        if inplace:
            h **= e
            m **= e
        shortcuts = {
            (int, 2): hs.square,
            (int, -1): hs.reciprocal,
            (float, 0.5): hs.sqrt,
        }
        short = shortcuts.get((type(e), e))
        if short is not None and dt.kind in "fc":
            # The shortcut itself, bit for bit (NaN and inf patterns included).
            want = np.asarray(short(hs.asarray(n)))
            assert np.asarray(got).tobytes() == want.tobytes()
    fin = np.isfinite(expected) if dt.kind == "c" else np.ones(n.shape, bool)
    # A complex product that overflows has a NaN/inf pattern that depends on whether
    # NumPy's loops use fused multiply-adds: only the finite elements are compared.
    assert_same(np.asarray(got)[fin], expected[fin], what="the operator")
    assert_same(np.asarray(got_ufunc)[fin], ufunc[fin], what="np.power")
    if inplace:
        assert_same(np.asarray(h)[fin], m[fin], what="**=")
    assert np.array_equal(
        np.signbit(np.asarray(got).real), np.signbit(expected.real)
    ), "signs of zeros"


def test_a_mask_written_between_uses_selects_anew(hs):
    """The count of a mask is remembered between ``a[m]`` and ``a[m] = v``: every way of
    writing the mask in between must be seen."""
    n = np.arange(20.0)
    h = hs.asarray(n)
    nm = n % 3 == 0
    hm = h % 3 == 0
    writes = [
        ("in place", lambda m: m.__setitem__(slice(None), m[::-1].copy())),
        ("an operator", lambda m: m.__iand__(np.arange(20) < 10)),
        ("a view", lambda m: m[5:].__setitem__(slice(None), True)),
        (
            "an out=",
            lambda m: (
                np.logical_not(m, out=m)
                if m.__class__ is np.ndarray
                else hs.logical_not(m, out=m)
            ),
        ),
    ]
    for what, write in writes:
        assert_same(h[hm], n[nm], what=what)
        write(nm)
        write(hm)
        assert_same(h[hm], n[nm], what=f"after a write through {what}")
        v = np.arange(int(nm.sum()), dtype=float)
        n[nm] = v
        h[hm] = hs.asarray(v)
        assert_same(h, n, what=what)
    if hs is not np:
        # Through a NumPy view of the mask's memory.
        assert_same(h[hm], n[nm])
        host = np.asarray(hm)
        if host.flags.writeable:
            host[:3] = ~host[:3]
            nm[:3] = ~nm[:3]
            del host
            assert_same(h[hm], n[nm], what="after a write through a host view")


def test_an_update_of_a_selection_reads_the_values_of_its_time(hs):
    """``a[m] = f(a[m])`` is computed over whole arrays under ``where``; a selection
    read earlier keeps its values when its source or the mask changed since, and one
    still held stays readable."""
    n = np.linspace(-3, 3, 30).reshape(5, 6)
    h = hs.asarray(n)
    nm, hm = n > 0, h > 0
    # The source written between the read and the assignment.
    nt, ht = n[nm], h[hm]
    n += 1
    h += 1
    n[nm] = nt * 2
    h[hm] = ht * 2
    assert_same(h, n)
    # The mask written (the same count) between the read and the assignment.
    nt, ht = n[nm] - 1, h[hm] - 1
    nm[0, 0], nm[4, 5] = nm[4, 5], nm[0, 0]
    hm[0, 0], hm[4, 5] = hm[4, 5], hm[0, 0]
    n[nm] = nt
    h[hm] = ht
    assert_same(h, n)
    # A selection still held after the assignment, and one of another array.
    other = np.arange(30.0).reshape(5, 6)
    ho = hs.asarray(other)
    nt, ht = n[nm], h[hm]
    n[nm] = nt * nt + other[nm]
    h[hm] = ht * ht + ho[hm]
    assert_same(h, n)
    assert_same(ht, nt, what="the held selection")
    # Values of another dtype, and a selection of a differently shaped array.
    n[nm] = (other[nm] * 3).astype(np.int32)
    h[hm] = (ho[hm] * 3).astype(np.int32)
    assert_same(h, n)
    # A selection by another mask of the same count (reversed): not the same lanes.
    n[nm] = other[nm[::-1, ::-1]] + 1
    h[hm] = ho[hm[::-1, ::-1]] + 1
    assert_same(h, n)


def test_an_update_of_a_selection_runs_no_compaction(hs, stack):
    """``z[m] = z[m] ** 2 + c[m]`` runs as one kernel over the whole arrays (and the
    running count of the next mask), not as compactions, a gather and a select."""
    if stack != "cpu":
        pytest.skip("kernel counts are the cpu engine's")
    z = hs.zeros((300, 200), complex)
    c = hs.asarray(np.linspace(-2, 1, 60000).reshape(300, 200) + 0.5j)
    for i in range(3):
        m = abs(z) <= 2.0
        before = hs.stats()["engine"]["kernels_run"]
        z[m] = z[m] ** 2 + c[m]
        hs.asarray(z).sum()
        ran = hs.stats()["engine"]["kernels_run"] - before
    assert ran <= 3, f"{ran} kernels for one masked update"


def test_an_in_place_update_of_a_selection_runs_no_compaction(hs, stack):
    """``v[m] *= s`` (a compaction updated in place, then stored) is a ``where`` too."""
    n = np.linspace(-1, 1, 5000)
    h = hs.asarray(n)
    for i in range(3):
        nm, hm = n > 0.3 * i - 0.2, h > 0.3 * i - 0.2
        if stack == "cpu":
            hs.asarray(h).sum()
            before = hs.stats()["engine"]["kernels_run"]
        n[nm] *= -0.9
        h[hm] *= -0.9
        n[nm] += n[nm]
        h[hm] += h[hm]
        assert_same(h, n)
        if stack == "cpu":
            ran = hs.stats()["engine"]["kernels_run"] - before
            assert ran <= 3, f"{ran} kernels for two in-place updates of a selection"


def test_a_masked_update_loop_runs_without_a_flush(hs):
    """``x[m] = 2 - x[m]``, ``v[m] *= -d``, ``z[m] = z[m] ** 2 + c[m]``, ufuncs called
    on selections, with a new mask each step: a selection assigned back through its own
    mask needs no count, so the loop records without a flush and its steps can fuse."""
    n = np.linspace(-0.3, 1.3, 997)
    v = np.cos(np.arange(997.0))
    z = np.zeros(997, complex)
    c = n + 0.5j
    hx, hv, hz, hc = (hs.asarray(a) for a in (n, v, z, c))
    if hasattr(hs, "stats"):
        hs.asarray(hx).sum()
        before = hs.stats()["flushes"]
    for _ in range(6):
        for x, vv, zz, cc, xp in ((n, v, z, c, np), (hx, hv, hz, hc, hs)):
            x += 0.05 * vv
            high = x > 1.0
            x[high] = 2.0 - x[high]
            vv[high] *= -0.9
            vv[high] = xp.minimum(xp.abs(vv[high]), 0.5) * xp.sign(vv[high])
            low = x < 0.0
            x[low] = -x[low]
            vv[low] *= -0.9
            m = xp.abs(zz) <= 2.0
            zz[m] = zz[m] ** 2 + cc[m]
            out = ~m
            zz[out] = zz[out] * 0.5
    if hasattr(hs, "stats"):
        assert hs.stats()["flushes"] == before, "a masked update flushed"
    assert_same(hx, n)
    assert_same(hv, v)
    assert_same(hz, z)


def test_a_selection_is_an_array_when_used_as_one(hs):
    """Whatever needs a selection's shape or values sees NumPy's compacted array."""
    n = np.arange(24.0).reshape(6, 4) - 7
    h = hs.asarray(n)
    nm, hm = n[:, 1] > 0, h[:, 1] > 0
    for f in [
        lambda a, m, xp: a[m].shape,
        lambda a, m, xp: len(a[m]),
        lambda a, m, xp: a[m].sum(axis=0),
        lambda a, m, xp: xp.sum(a[m] * 2, axis=1),
        lambda a, m, xp: a[m][1:, ::2],
        lambda a, m, xp: a[m].T,
        lambda a, m, xp: (a[m] + 1).tolist(),
        lambda a, m, xp: xp.sqrt(a[m]),
        lambda a, m, xp: a[m] @ xp.ones(4),
        lambda a, m, xp: a[m] + a[m][0],
        lambda a, m, xp: a[m][:, 0][a[m][:, 0] > 10],
        lambda a, m, xp: xp.asarray(a[m][a[m] > 10]),
        lambda a, m, xp: repr(a[m]).replace("array", ""),
        lambda a, m, xp: a[m].dtype,
        lambda a, m, xp: a[m].copy(),
        lambda a, m, xp: -(a[m] * a[m]),
        lambda a, m, xp: abs(a[m]) ** 0.5,
        lambda a, m, xp: a[m] > a[m].mean(),
    ]:
        want, got = f(n, nm, np), f(h, hm, hs)
        if isinstance(want, np.ndarray):
            assert_same(got, want)
        else:
            assert got == want, (got, want)


def test_a_selection_keeps_the_values_of_its_time(hs):
    """A selection is a copy: writes to its source or mask after it was taken, by any
    route, do not reach it, and writes to it do not reach its source."""
    n = np.arange(12.0)
    nm = n % 3 != 0
    writes = [
        lambda a, m, xp: a.__iadd__(100),
        lambda a, m, xp: a.__setitem__(slice(2, 8), -1),
        lambda a, m, xp: xp.multiply(a, 3, out=a),
        lambda a, m, xp: a.__setitem__(m, 0.5),
        lambda a, m, xp: m.__setitem__(slice(None), ~m),
        lambda a, m, xp: a.sort(),
        lambda a, m, xp: xp.copyto(a, 7.0),
    ]
    for k, write in enumerate(writes):
        a, m = n.copy(), nm.copy()
        ha, hm = hs.asarray(a.copy()), hs.asarray(m) & True
        taken, htaken = a[m], ha[hm]
        doubled, hdoubled = a[m] * 2, ha[hm] * 2
        write(a, m, np)
        write(ha, hm, hs)
        assert_same(htaken, taken, what=f"write {k}: a held selection")
        assert_same(hdoubled, doubled, what=f"write {k}: an operation on one")
        assert_same(ha, a, what=f"write {k}: the source")
        # Assigned back through the (possibly rewritten) mask.
        a[m] = a[m] + 1
        ha[hm] = ha[hm] + 1
        assert_same(ha, a, what=f"write {k}: an update after it")
    a, ha = n.copy(), hs.asarray(n)
    t, ht = a[nm], ha[hs.asarray(nm) & True]
    t *= 2
    ht *= 2
    t += t
    ht += ht
    assert_same(ht, t)
    assert_same(ha, a, what="an in-place update of a selection wrote its source")


def test_a_selection_through_a_host_view(hs):
    """The host may write memory it holds a view of at any time: a selection of such an
    array is compacted at once, and one taken before a view opened keeps its values."""
    if hs is np:
        pytest.skip("Hassium's host views")
    n = np.arange(10.0)
    h = hs.asarray(n) + 0
    hm = h > 3
    before = h[hm]
    host = np.asarray(h)
    if not host.flags.writeable:
        pytest.skip("read-only host view")
    during = h[hm]
    host[:] = -1
    assert_same(before, n[n > 3])
    assert_same(during, n[n > 3])
    del host


def test_operations_a_selection_cannot_lift_are_numpys(hs):
    """Selections by other masks, broadcasts along the selection, integer powers and
    operands that are no numbers: compacted first, with NumPy's results and errors."""
    n = np.arange(12).reshape(6, 2) - 3
    h = hs.asarray(n)
    m1 = np.array([1, 0, 1, 0, 1, 0], bool)
    m2 = np.array([0, 1, 0, 1, 0, 1], bool)
    h1, h2 = hs.asarray(m1) & True, hs.asarray(m2) & True
    assert_same(h[h1] + h[h2], n[m1] + n[m2])
    assert_same(h[h1] * hs.asarray([10, 20]), n[m1] * np.array([10, 20]))
    assert_same(h[h1][:, 0] ** 2, n[m1][:, 0] ** 2)
    col, hcol = n[:, 0], h[:, 0]
    with pytest.raises(ValueError, match="negative integer powers"):
        hcol[h1] ** -1
    with pytest.raises(ValueError, match="negative integer powers"):
        np.asarray(col[m1] ** -1)
    with pytest.raises(ValueError):
        h[h1] + h[hs.asarray(np.ones(6, bool)) & True]
    with pytest.raises(TypeError):
        h[h1] + "text"
    u = hs.asarray(np.arange(6, dtype=np.uint8))
    with pytest.raises(OverflowError):
        u[h1] + 300
    # A selection of an int array assigned into a float one, and the reverse (unsafe).
    f = np.linspace(0, 1, 6)
    hf = hs.asarray(f)
    f[m1] = col[m1] * 2
    hf[h1] = hcol[h1] * 2
    assert_same(hf, f)
    c, hc = col.copy(), hs.asarray(col.copy())
    c[m2] = f[m2] * 7
    hc[h2] = hf[h2] * 7
    assert_same(hc, c)


@pytest.mark.parametrize("dtype", ["f8", "f4", "i4", "u1", "b1", "c16"])
def test_reductions_of_a_selection_are_numpys(hs, dtype):
    """``x[m].sum()``, ``prod``, ``any``, ``all``, ``mean`` and ``np.sum(x[m], axis)``
    over the selection's first axis reduce the whole array under the mask, with NumPy's
    results (empty selections included) and errors."""
    dt = np.dtype(dtype)
    n = (
        values_of(dt, (7, 3, 2))
        if dt.kind != "f"
        else np.linspace(-2, 2, 42).reshape(7, 3, 2).astype(dt)
    )
    h = hs.asarray(n)
    cases = [
        lambda s, xp: s.sum(),
        lambda s, xp: s.sum(axis=0),
        lambda s, xp: s.sum(axis=(0, 2)),
        lambda s, xp: s.sum(axis=0, keepdims=True),
        lambda s, xp: s.sum(axis=-s.ndim),
        lambda s, xp: s.sum(axis=1),
        lambda s, xp: xp.sum(s, axis=0, dtype=np.float64),
        lambda s, xp: s.sum(initial=5) if dt.kind != "b" else s.sum(),
        lambda s, xp: s.prod(axis=0) if dt.kind != "u" else s.sum(),
        lambda s, xp: s.any(axis=0),
        lambda s, xp: s.all(),
        lambda s, xp: xp.add.reduce(s, axis=0),
        lambda s, xp: (s * 2).sum(axis=0),
    ]
    if dt.kind in "fc":
        cases.append(lambda s, xp: s.mean(axis=0))
    for mk in [
        lambda a: a[:, 0, 0] > 0,
        lambda a: a[:, :, 0] > 0,
        lambda a: a[:, 0, 0] > 99,
    ]:
        nm, hm = (
            mk(n.real if dt.kind == "c" else n),
            mk(h.real if dt.kind == "c" else h),
        )
        if dt.kind == "b":
            nm, hm = n[:, 0, 0], h[:, 0, 0] & True
        for k, f in enumerate(cases):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    want = f(n[nm], np)
                except np.exceptions.AxisError as e:  # axis 2 of a 2-D selection
                    with pytest.raises(type(e)):
                        f(h[hm], hs)
                    continue
                got = f(h[hm], hs)
            assert_same(got, want, what=f"case {k}")
    with pytest.raises(np.exceptions.AxisError):
        h[h.real > 0 if dt.kind == "c" else h != 0].sum(axis=3)


def test_a_selection_reduced_or_measured_is_not_compacted(hs):
    """A sum of a selection records no compaction and reads nothing back; its length
    reads the mask's count and nothing more; a mean reads the count once."""
    if not hasattr(hs, "stats"):
        pytest.skip("NumPy has no runtime to count flushes of")
    pts = hs.asarray(np.linspace(-1, 1, 2000).reshape(1000, 2))
    labels = hs.arange(1000) % 3
    hs.asarray(pts).sum()
    before = hs.stats()["flushes"]
    totals = [pts[labels == c].sum(axis=0) for c in range(3)]
    assert hs.stats()["flushes"] == before, "a sum of a selection flushed"
    members = pts[labels == 1]
    assert len(members) == 333 and members.shape == (333, 2)
    assert hs.stats()["flushes"] == before + 1, "the length read more than the count"
    means = members.mean(axis=0)
    assert hs.stats()["flushes"] == before + 1, "the mean read the count again"
    n = np.linspace(-1, 1, 2000).reshape(1000, 2)
    nl = np.arange(1000) % 3
    assert_same(hs.stack(totals), np.stack([n[nl == c].sum(axis=0) for c in range(3)]))
    assert_same(means, n[nl == 1].mean(axis=0))


def test_a_mask_spelled_twice_pairs_its_selections(hs):
    """``x[x > 1] = 2 - x[x > 1]`` and ``z[~m] = -z[~m]`` compute the mask twice: equal
    comparisons of unchanged inputs pair up without a flush; the same spelling after
    its input changed, or with another constant, does not."""
    n = np.linspace(-1.5, 1.5, 31)
    h = hs.asarray(n)
    if hasattr(hs, "stats"):
        hs.asarray(h).sum()
        before = hs.stats()["flushes"]
    for x, xp in ((n, np), (h, hs)):
        x[x > 1] = 2 - x[x > 1]
        m = x < 0
        x[~m] = -x[~m] * 0.5
        x[xp.abs(x) < 0.25] = xp.abs(x[xp.abs(x) < 0.25]) + 1
    if hasattr(hs, "stats"):
        assert hs.stats()["flushes"] == before, "a mask spelled twice read its count"
    assert_same(h, n)
    # The same spelling after its input changed (different lanes, the same count), and
    # another expression of the same count: no pairing, NumPy's values.
    base = np.array([-1.0, 1, 2, -3, 5])
    got = []
    for xp in (np, hs):
        x = xp.asarray(base.copy())
        y = xp.asarray(np.arange(5.0) * 10)
        t = y[x > 0]
        x[:] = x[::-1].copy()
        y[x > 0] = t * 1
        w = xp.asarray(np.array([1.0, -1, 2, -2]))
        z = xp.asarray(np.arange(4.0))
        z[w > 0] = z[-w > 0] + 100
        got.append((y, z))
    assert_same(got[1][0], got[0][0])
    assert_same(got[1][1], got[0][1])
