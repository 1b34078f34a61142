"""Quick checks of the extension's primitives against NumPy (the package's differential
suite lives in tests/python/)."""

import gc

import numpy as np
import pytest
from hassium import _hassium as hs
from hassium._native import UFUNC_NAMES

DTYPES = [
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
]
# The ufuncs that are one opcode each: the package's own list.
UFUNCS = UFUNC_NAMES


def h(x, dtype=None):
    return hs.asarray(np.asarray(x, dtype=dtype))


def same(a, b):
    a = np.asarray(a)
    assert a.dtype == np.asarray(b).dtype, (a.dtype, np.asarray(b).dtype)
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", UFUNCS)
def test_loop_resolution_matches_numpy_for_every_dtype(name):
    uf = getattr(np, name)
    for d in DTYPES:
        dt = np.dtype(d)
        try:
            want = uf.resolve_dtypes((dt,) * uf.nin + (None,))
        except TypeError:
            with pytest.raises(TypeError):
                hs._resolve(name, [dt] * uf.nin)
            continue
        try:
            got = hs._resolve(name, [dt] * uf.nin)
        except hs.UnsupportedError:
            continue  # NumPy has the loop, the opcode set does not: the package falls back
        assert (got[0], got[1]) == (want[0], want[-1]), (name, d)


def test_casting_rules_match_numpy():
    for a in DTYPES:
        for b in DTYPES:
            for rule in ["no", "safe", "same_kind", "unsafe"]:
                assert hs._can_cast(a, b, rule) == np.can_cast(a, b, rule), (a, b, rule)


@pytest.mark.parametrize(
    "dtype", ["int8", "uint16", "int64", "float32", "float64", "complex64"]
)
def test_binary_operators_match_numpy(dtype):
    x = np.arange(1, 7, dtype=dtype).reshape(2, 3)
    y = np.arange(3, dtype=dtype) + 1
    a, b = h(x), h(y)
    same(a + b, x + y)
    same(a - b, x - y)
    same(a * b, x * y)
    same(a / b, x / y)
    same(2 * a, 2 * x)
    same(a**2, x**2)
    same(a == b, x == y)
    same(-a, -x)
    if np.dtype(dtype).kind != "c":
        same(a // b, x // y)
        same(a % b, x % y)
        same(a < 3, x < 3)


def test_python_scalars_promote_weakly_and_overflow_like_numpy():
    u = h([1, 2, 3], "uint8")
    same(u + 1, np.array([1, 2, 3], "uint8") + 1)
    same(u + 1.5, np.array([1, 2, 3], "uint8") + 1.5)
    same(h([1.0], "float32") * 2.0, np.array([1.0], "float32") * 2.0)
    same(u < -1, np.array([1, 2, 3], "uint8") < -1)
    with pytest.raises(OverflowError):
        u + 300
    same(h([True, False]) + True, np.array([True, False]) + True)
    with pytest.raises(TypeError):
        h([True]) - h([True])
    same(h([1, 2], "int8") + np.float32(1), np.array([1, 2], "int8") + np.float32(1))


def test_inplace_ops_cast_same_kind_and_handle_overlap():
    x = np.arange(10.0)
    a = h(x)
    a[1:] += a[:-1]
    x[1:] += x[:-1].copy()
    same(a, x)
    i = h([1, 2, 3])
    with pytest.raises(TypeError):
        i += 1.5
    with pytest.raises(TypeError):
        hs.ufunc("add", h([1.0]), h([2.0]), out=h([0], "int64"))
    o = h([0.0, 0.0], "float32")
    hs.ufunc("add", h([1, 2]), 1, out=o)
    same(o, np.array([2, 3], "float32"))


def test_basic_indexing_makes_writable_views():
    x = np.arange(24).reshape(2, 3, 4)
    a = h(x)
    for key in [
        1,
        (1, 2),
        (slice(None), 1),
        (Ellipsis, -1),
        (None, 0),
        slice(None, None, -1),
        (slice(1, None), slice(None, None, -2), None),
    ]:
        same(a[key], x[key])
    v = a[:, 1]
    v[...] = 0
    x[:, 1] = 0
    same(a, x)
    assert v.base is not None and a.base is None
    with pytest.raises(IndexError):
        a[2]
    with pytest.raises(IndexError):
        a[0, 0, 0, 0]


def test_advanced_indexing_gathers_and_scatters():
    x = np.arange(12.0).reshape(3, 4)
    a = h(x)
    same(a[[2, 0]], x[[2, 0]])
    same(a[:, [3, -1, 0]], x[:, [3, -1, 0]])
    same(a[[0, 2], [1, 3]], x[[0, 2], [1, 3]])
    same(a[x > 5], x[x > 5])
    same(a[a > 5], x[x > 5])
    with pytest.raises(IndexError):
        a[[0, 3]]
    a[a > 5] = -1.0
    x[x > 5] = -1.0
    same(a, x)
    a[[0, 1], [0, 0]] = h([7.0, 8.0])
    x[[0, 1], [0, 0]] = [7.0, 8.0]
    same(a, x)
    one = h(np.arange(5.0))
    same(one[h([4, 0, 1])], np.arange(5.0)[[4, 0, 1]])


def test_lazy_out_of_range_gather_raises_index_error_and_runtime_survives():
    a = h(np.arange(5.0))
    bad = hs.take_flat(a, h([7]))
    hs.flush()  # the failure makes `bad` invalid; the flush itself goes on
    for _ in range(2):
        with pytest.raises(IndexError, match="out of bounds"):
            np.asarray(bad)
    del bad
    same(a + 1, np.arange(5.0) + 1)
    with pytest.raises(IndexError):
        hs.take_flat(a, [7])


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint32", "float32", "float64"])
def test_reductions_match_numpy(dtype):
    x = (np.arange(24) % 7).astype(dtype).reshape(2, 3, 4)
    a = h(x)
    same(a.sum(), x.sum())
    same(a.sum(axis=1), x.sum(axis=1))
    same(a.sum(axis=(0, 2), keepdims=True), x.sum(axis=(0, 2), keepdims=True))
    same(a.prod(axis=-1), x.prod(axis=-1))
    same(a.max(axis=0), x.max(axis=0))
    same(a.min(), x.min())
    same(a.argmax(), x.argmax())
    same(a.argmin(axis=1), x.argmin(axis=1))
    same(a.any(axis=2), x.any(axis=2))
    same(a.all(), x.all())
    np.testing.assert_allclose(np.asarray(a.mean(axis=1)), x.mean(axis=1), rtol=1e-3)
    assert a.mean(axis=1).dtype == x.mean(axis=1).dtype
    if dtype != "bool":
        np.testing.assert_allclose(
            np.asarray(a.var(axis=0, ddof=1)), x.var(axis=0, ddof=1), rtol=1e-3
        )
        np.testing.assert_allclose(np.asarray(a.std()), x.std(), rtol=1e-3)
        same(a.cumsum(axis=1), x.cumsum(axis=1))
        same(a.max(initial=100), x.max(initial=100))


def test_bad_reductions_raise_at_the_call_site():
    with pytest.raises(ValueError):
        h(np.zeros((0, 3))).max(axis=0)
    with pytest.raises(np.exceptions.AxisError):
        h(np.zeros((2, 3))).sum(axis=2)
    same(h(np.zeros((0, 3))).sum(axis=0), np.zeros((0, 3)).sum(axis=0))


def test_creation_primitives():
    same(hs.arange(5), np.arange(5))
    same(hs.arange(1, 2, 0.25), np.arange(1, 2, 0.25))
    same(hs.arange(10, 0, -3), np.arange(10, 0, -3))
    same(hs.full((2, 2), 7, "int16"), np.full((2, 2), 7, "int16"))
    same(hs.full(3, 1.5), np.full(3, 1.5))
    assert hs.empty((2, 3), np.float32).shape == (2, 3)
    r1 = np.asarray(hs.random_bits((4,), 42, 0))
    r2 = np.asarray(hs.random_bits((4,), 42, 0))
    assert r1.dtype == np.uint64 and (r1 == r2).all() and len(set(r1)) == 4


def test_numpy_sees_the_same_memory():
    a = h(np.arange(6.0).reshape(2, 3))
    n = np.asarray(a)
    assert not n.flags.owndata
    n[0, 0] = 100.0
    assert float(a.sum()) == 115.0
    t = np.asarray(a.T[::-1])
    same(t, np.array([[2.0, 5.0], [1.0, 4.0], [100.0, 3.0]]))
    assert repr(hs.arange(3)) == repr(np.arange(3))
    assert str(h([1.5, 2.0])) == str(np.array([1.5, 2.0]))
    assert a.strides == (24, 8) and a.T.strides == (8, 24)
    assert a.flags["C_CONTIGUOUS"] and a.T.flags.f_contiguous


def test_python_conversions_and_protocols():
    a = h([[1, 2], [3, 4]])
    assert len(a) == 2
    assert [r.tolist() for r in a] == [[1, 2], [3, 4]]
    assert list(a[0]) == [1, 2]
    assert int(a[1, 1]) == 4 and float(a[0, 0]) == 1.0 and a.item(3) == 4
    assert bool(a[0, 1]) and a.tolist() == [[1, 2], [3, 4]]
    assert f"{a.sum():d}" == "10"
    with pytest.raises(ValueError):
        bool(a)
    with pytest.raises(TypeError):
        hash(a)
    assert 3 in a


def test_matmul_matches_numpy():
    x = np.arange(6.0).reshape(2, 3)
    y = np.arange(12.0).reshape(3, 4)
    same(h(x) @ h(y), x @ y)
    same(hs.matmul(h(x), np.arange(3.0)), x @ np.arange(3.0))
    s = np.arange(24.0).reshape(2, 3, 4)
    same(h(s) @ h(y.T), s @ y.T)
    with pytest.raises(ValueError):
        h(x) @ h(x)


def test_where_copyto_and_flat_access():
    c = np.array([True, False, True])
    same(hs.where(h(c), h([1, 2, 3]), 0.5), np.where(c, [1, 2, 3], 0.5))
    d = h(np.zeros((2, 3)))
    hs.copyto(d, h([1, 2, 3]))
    same(d, np.tile([1.0, 2.0, 3.0], (2, 1)))
    same(hs.take_flat(d, [5, 0]), np.array([3.0, 1.0]))
    hs.put_flat(d, [0, 0], [1.0, 2.0], accumulate=True)
    assert float(d[0, 0]) == 4.0
    same(hs.nonzero(h([0, 3, 0, 4]))[0], np.nonzero([0, 3, 0, 4])[0])


def test_dropping_the_last_reference_frees_the_base():
    hs.flush()
    before = hs.stats()["instrs_recorded"]
    a = hs.arange(10)
    b = a[2:]
    del a
    gc.collect()
    after_view = hs.stats()["instrs_recorded"]
    del b
    gc.collect()
    after = hs.stats()["instrs_recorded"]
    assert after_view == before + 1  # the Range only: the view keeps the base alive
    assert after == after_view + 1  # the FREE


def test_stats_info_and_stacks_describe_the_runtime():
    s = hs.stats()
    assert {"instrs_recorded", "flushes", "kernels", "stack"} <= set(s)
    i = hs.info()
    assert i["stack"] in i["stacks"] and i["config_source"]
    assert i["stack"] in hs.stacks()


def test_array_ufunc_is_forwarded_to_the_registered_dispatcher():
    seen = []

    def ufunc_hook(ufunc, method, *inputs, **kwargs):
        seen.append((ufunc.__name__, method))
        return hs.ufunc(ufunc.__name__, *inputs, **kwargs)

    def function_hook(func, types, args, kwargs):
        return NotImplemented

    hs._set_dispatch(ufunc_hook, function_hook)
    r = np.add(h([1, 2]), 1)
    assert isinstance(r, hs.ndarray) and seen == [("add", "__call__")]
    r = np.arange(2) + h([1, 2])
    assert isinstance(r, hs.ndarray)


def test_zero_d_inputs_stay_zero_d():
    for v in [3.5, 7, True, np.float32(2.0), np.array(4)]:
        a = hs.asarray(v)
        assert a.shape == () and a.item() == np.asarray(v).item()
    assert hs.asarray(np.float32(2.0)).dtype == np.float32
