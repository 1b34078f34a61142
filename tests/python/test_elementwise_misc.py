"""where, clip, abs, round, nonzero, isclose, allclose, array_equal, copyto and indexing
against NumPy."""

import numpy as np
import pytest
from conftest import DTYPES, LAYOUTS, assert_same, both, sample
from test_ufuncs import batched, check


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_where_matches_numpy_with_broadcasting(hs, dtype):
    h, n = both(hs, sample(dtype))
    h2, n2 = both(hs, sample(dtype, seed=1))
    hc, nc = both(hs, sample("bool", seed=2))
    check(hs.where, np.where, (hc, h, h2), (nc, n, n2), "where")
    check(hs.where, np.where, (hc[0], h[1], 0), (nc[0], n[1], 0), "where with a scalar")
    check(
        hs.where,
        np.where,
        (hc[:, :1], h[::-1], h2[0]),
        (nc[:, :1], n[::-1], n2[0]),
        "where broadcast",
    )
    check(hs.where, np.where, (h,), (n,), "where(cond) is nonzero")


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@batched
def test_clip_and_abs_match_numpy(hs, dtype):
    h, n = both(hs, sample(dtype))
    for layout, view in LAYOUTS.items():
        check(hs.abs, np.abs, (view(h),), (view(n),), f"abs {layout}")
        if dtype.kind != "c":
            check(hs.clip, np.clip, (view(h), 1, 5), (view(n), 1, 5), f"clip {layout}")
    if dtype.kind not in "bc":
        check(hs.clip, np.clip, (h, None, 3), (n, None, 3), "clip upper only")
        check(hs.clip, np.clip, (h, h[0], None), (n, n[0], None), "clip array bound")
        check(hs.clip, np.clip, (h, 0.5, 2.5), (n, 0.5, 2.5), "clip float bounds")


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int64", "uint64", "float32"])
def test_clip_drops_python_int_bounds_beyond_the_dtype(hs, dtype):
    h, n = both(hs, sample(dtype))
    bounds = [
        (-5, 300),
        (-(2**70), 3),
        (1, 2**64),
        (None, 300),
        (-300, None),
        (300, 400),
    ]
    bounds += [(-5, -1), (2.5, 300), (np.int64(-5), 5)]
    for lo, hi in bounds:
        check(hs.clip, np.clip, (h, lo, hi), (n, lo, hi), f"clip({lo}, {hi})")
        check(
            lambda a, lo, hi: a.clip(lo, hi),
            lambda a, lo, hi: a.clip(lo, hi),
            (h, lo, hi),
            (n, lo, hi),
            f"a.clip({lo}, {hi})",
        )


def test_clip_copies_and_returns_out_itself(hs):
    a = hs.arange(3)
    for c in (a.clip(), hs.clip(a, None, None)):
        c[0] = 9
    assert_same(a, np.arange(3))
    x = hs.arange(5.0)
    out = hs.zeros(5)
    assert hs.clip(x, 1, 3, out=out) is out
    assert x.clip(1, 3, out=out) is out
    assert x.round(out=out) is out
    assert_same(out, np.arange(5.0))


def test_a_value_with_extra_leading_unit_dimensions_is_stored(hs):
    h, n = both(hs, sample("float64", shape=(3, 4)))
    r, nr = both(hs, sample("float64", shape=(1, 1, 4), seed=1))
    for key in [1, (slice(None), slice(None)), [0, 2]]:
        h[key] = r
        n[key] = nr
        assert_same(h, n, what=f"a[{key!r}] = (1, 1, 4)")
    hs.copyto(h[0], r)
    np.copyto(n[0], nr)
    assert_same(h, n)
    with pytest.raises(ValueError):
        h[1] = hs.ones((2, 4))


def test_a_0d_boolean_index_adds_a_dimension_of_length_1_or_0(hs):
    h, n = both(hs, sample("int32", shape=(2, 3, 4)))
    for flag in (True, False):
        for wrap in (lambda b: b, np.bool_, np.array, hs.asarray):
            for key in [
                (),
                (0,),
                (slice(None), 1),
                (Ellipsis,),
                (1, slice(None)),
                (0, slice(None), 1),
            ]:
                k = key + (wrap(flag),)
                assert_same(h[k], n[k], what=f"a[{k!r}]")
            k = (1, Ellipsis, wrap(flag), None)
            assert_same(h[k], n[k], what=f"a[{k!r}]")
    # The result is a copy, and stores write through.
    c = h[True]
    c[0, 0, 0, 0] = -5
    assert_same(h, n)
    for key, value in [
        (True, 7),
        ((0, True), 8),
        ((Ellipsis, False), 9),
        ((1, slice(None), True, 2), -1),
    ]:
        h[key] = value
        n[key] = value
        assert_same(h, n, what=f"a[{key!r}] = {value}")


def _random_item(rng):
    """One item of an indexing key: every kind NumPy takes, in and out of range."""
    r = rng.random()
    if r < 0.25:
        return int(rng.integers(-4, 4))
    if r < 0.5:
        bound = lambda: None if rng.random() < 0.4 else int(rng.integers(-5, 5))
        step = [None, None, 1, 2, -1, -2, 3][rng.integers(7)]
        return slice(bound(), bound(), step)
    if r < 0.58:
        return None
    if r < 0.64:
        return Ellipsis
    if r < 0.78:
        return [int(x) for x in rng.integers(-3, 3, size=rng.integers(0, 4))]
    if r < 0.86:
        return rng.random(rng.integers(1, 5)) < 0.5
    if r < 0.92:
        return np.array(rng.integers(-2, 2))
    if r < 0.96:
        return bool(rng.random() < 0.5)
    return rng.integers(-2, 2, size=(rng.integers(1, 3), rng.integers(1, 3)))


def _read_and_store_like_numpy(hs, base, key, hkey, what):
    """Reads `base[key]`, and stores -7 into a copy through it, under NumPy and (with
    `hkey`) under Hassium: the same result, or the same exception type."""
    for store in (False, True):
        n, h = base.copy(), hs.asarray(base.copy())
        label = f"{'store' if store else 'read'} {what}"
        try:
            want, error = (n.__setitem__(key, -7) if store else n[key]), None
        except Exception as e:  # noqa: BLE001 - the type is what is compared
            want, error = None, type(e)
        try:
            # A lazy index array is checked when the store runs: observe it here.
            got = np.asarray(h.__setitem__(hkey, -7) or h if store else h[hkey])
        except Exception as e:  # noqa: BLE001
            assert error is not None and isinstance(e, error), f"{label}: {e!r}"
            continue
        assert error is None, f"{label}: NumPy raised {error.__name__}"
        assert_same(h if store else got, n if store else want, what=label)


@pytest.mark.parametrize("seed", range(4))
def test_random_keys_read_and_store_like_numpy(hs, seed):
    """Random keys (ints, slices, None, ..., lists, masks, 0-d arrays, bools, 2-D index
    arrays; in and out of range) on small arrays of rank 0 to 2: the same result, or the
    same exception type, for reading and for storing."""
    rng = np.random.default_rng(seed)
    for _ in range(300):
        shape = tuple(int(d) for d in rng.integers(1, 4, size=rng.integers(0, 3)))
        base = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
        key = tuple(_random_item(rng) for _ in range(rng.integers(1, 3)))
        as_hs = rng.random(len(key)) < 0.5  # index arrays as Hassium arrays, or NumPy's
        hkey = tuple(
            hs.asarray(k) if isinstance(k, np.ndarray) and h else k
            for k, h in zip(key, as_hs)
        )
        _read_and_store_like_numpy(hs, base, key, hkey, f"{shape} {key!r}")


ZERO_D_BOOL_KEYS = [
    "True, [0, 1]",
    "False, [0, 1]",
    "[0, 1], True",
    "True, True",
    "True, False",
    "False, False",
    "True, :, [0, 1]",
    "[0, 2], True, [1, 3]",
    "True, [[0], [1]], [0, 1]",
    "..., True, [0, 1]",
    "T, M",
    "M, True",
    "True, 1",
    "1, True, [0, 1]",
    "False, [[0], [1]]",
    "None, True, [2], None",
    "True, ..., False",
    "T, T, [1]",
    "True, [5]",
    "True, 0, 0, 0",
]


@pytest.mark.parametrize("key", ZERO_D_BOOL_KEYS)
def test_zero_d_booleans_beside_other_advanced_indices(hs, key):
    """A 0-d boolean beside index arrays, masks or another 0-d boolean: NumPy reads it as a
    new axis of length one indexed by [0] (True) or [] (False), which broadcasts with the
    other index arrays. Reading and storing, with the booleans and masks as NumPy's and as
    Hassium's arrays."""
    base = np.arange(12.0).reshape(3, 4)
    for lazy in (False, True):
        wrap = hs.asarray if lazy else np.asarray
        env = {"T": np.array(True), "M": np.array([True, False, True])}
        nkey = eval(f"np.s_[{key},]", {"np": np}, env)
        hkey = eval(f"np.s_[{key},]", {"np": np}, {k: wrap(v) for k, v in env.items()})
        _read_and_store_like_numpy(hs, base, nkey, hkey, f"[{key}] lazy={lazy}")


def test_index_values_nothing_visits_are_not_bounds_checked(hs):
    h, n = both(hs, sample("float64", shape=(3, 4)))
    assert_same(h[[7], []], n[[7], []])
    with pytest.raises(IndexError):
        h[np.array(7), []]  # a 0-d index is an integer: always checked


def test_equality_with_a_non_number_is_elementwise(hs):
    h, n = both(hs, sample("float64"))
    for other in (None, "text", object()):
        assert_same(h == other, n == other, what=f"== {other!r}")
        assert_same(h != other, n != other, what=f"!= {other!r}")
        assert_same(other == h, other == n, what=f"{other!r} ==")
    assert_same(hs.zeros((0, 2)) == None, np.zeros((0, 2)) == None)
    with pytest.raises(TypeError):
        _ = h < "text"


#: Values stored into arrays: NumPy converts Python floats to integers through int()
#: (NaN and inf fail, out-of-range values overflow), NumPy float scalars likewise into
#: signed integers through basic indexing, and refuses Python complex for real arrays.
ITEMS = [
    float("nan"),
    float("inf"),
    -float("inf"),
    1e30,
    1000.0,
    -1.0,
    3.7,
    -2.5,
    2.0**63,
    1e19,
    -(2.0**63),
    1 + 0j,
    2.5 + 1j,
    np.float64("nan"),
    np.float64(-1),
    np.float64(300.7),
    np.float32(-3.5),
    np.complex128(1 + 2j),
    300,
    -1,
    True,
    [1.0, float("nan"), 2.0],
    [1000.0, 1, 2],
    (1.5, 2, 3),
    "5",
]

STORES = {
    "a[1] = v": lambda a, m, v: a.__setitem__(1, v),
    "a[:] = v": lambda a, m, v: a.__setitem__(slice(None), v),
    "a[1:2] = v": lambda a, m, v: a.__setitem__(slice(1, 2), v),
    "a[...] = v": lambda a, m, v: a.__setitem__(Ellipsis, v),
    "a[[0, 2]] = v": lambda a, m, v: a.__setitem__([0, 2], v),
    "a[mask] = v": lambda a, m, v: a.__setitem__(m, v),
    "a.fill(v)": lambda a, m, v: a.fill(v),
}


@pytest.mark.parametrize(
    "dtype", ["bool", "int8", "int64", "uint8", "uint64", "float32", "complex128"]
)
def test_storing_an_item_converts_it_as_numpy_does(hs, dtype):
    import warnings

    for v in ITEMS:
        for form, store in STORES.items():
            if isinstance(v, (list, tuple)) and form in ("a[1] = v", "a.fill(v)"):
                continue  # a sequence into one element: NumPy's error varies by dtype
            what = f"{form} with v={v!r} into {dtype}"
            n = np.zeros(3, dtype=dtype)
            h = hs.zeros(3, dtype=dtype)
            mask = np.array([True, False, True])
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    store(n, mask, v)
                except Exception as e:  # noqa: BLE001 - the type is what is compared
                    with pytest.raises(type(e)):
                        store(h, hs.asarray(mask), v)
                        np.asarray(h)
                    continue
                store(h, hs.asarray(mask), v)
            assert_same(h, n, what=what)


@pytest.mark.parametrize("decimals", [0, 1, 2, -1])
@pytest.mark.parametrize("dtype", ["int32", "float16", "float32", "float64"])
def test_round_matches_numpy(hs, dtype, decimals):
    data = (sample("float64") * 37.123).astype(dtype)
    h, n = both(hs, data)
    check(hs.round, np.round, (h,), (n,), "round", decimals=decimals)
    check(hs.around, np.around, (h[::-1],), (n[::-1],), "around", decimals=decimals)


@pytest.mark.parametrize("dtype", ["bool", "int8", "float32", "complex128"])
def test_nonzero_and_flatnonzero_match_numpy(hs, dtype):
    h, n = both(hs, sample(dtype))
    for layout, view in LAYOUTS.items():
        if layout == "zero_d":
            continue  # NumPy 2 deprecates nonzero on 0-d arrays
        check(hs.nonzero, np.nonzero, (view(h),), (view(n),), f"nonzero {layout}")


@pytest.mark.parametrize("dtype", ["int32", "float32", "float64", "complex128"])
def test_isclose_allclose_and_array_equal_match_numpy(hs, dtype):
    h, n = both(hs, sample(dtype))
    h2, n2 = both(
        hs,
        (sample(dtype) * 1.000001).astype(dtype) if dtype != "int32" else sample(dtype),
    )
    check(hs.isclose, np.isclose, (h, h2), (n, n2), "isclose")
    check(hs.isclose, np.isclose, (h, h2), (n, n2), "isclose tight", rtol=1e-9, atol=0)
    check(
        hs.isclose,
        np.isclose,
        (h[0, 0, 0, ...], 1),
        (n[0, 0, 0, ...], 1),
        "isclose 0-d",
    )
    assert_same(hs.allclose(h, h2), np.allclose(n, n2))
    assert_same(hs.allclose(h, h2, rtol=0, atol=0), np.allclose(n, n2, rtol=0, atol=0))
    assert_same(hs.array_equal(h, h), np.array_equal(n, n))
    assert_same(hs.array_equal(h, h2), np.array_equal(n, n2))
    assert_same(hs.array_equal(h, h[0]), np.array_equal(n, n[0]))


def test_nan_aware_comparisons_match_numpy(hs):
    data = np.array([1.0, np.nan, np.inf, -np.inf])
    h, n = both(hs, data)
    check(hs.isclose, np.isclose, (h, h), (n, n), "isclose")
    check(hs.isclose, np.isclose, (h, h), (n, n), "isclose equal_nan", equal_nan=True)
    assert_same(hs.array_equal(h, h), np.array_equal(n, n))
    assert_same(
        hs.array_equal(h, h, equal_nan=True), np.array_equal(n, n, equal_nan=True)
    )
    assert_same(hs.allclose(h, h, equal_nan=True), np.allclose(n, n, equal_nan=True))


def test_copyto_broadcasts_casts_and_honours_where(hs):
    h, n = both(hs, np.zeros((3, 4)))
    hs.copyto(h, hs.arange(4))
    np.copyto(n, np.arange(4))
    assert_same(h, n)
    hs.copyto(h[:, ::-2], 7.5)
    np.copyto(n[:, ::-2], 7.5)
    assert_same(h, n)
    mask = np.arange(12).reshape(3, 4) % 3 == 0
    hs.copyto(h, -1.0, where=hs.asarray(mask))
    np.copyto(n, -1.0, where=mask)
    assert_same(h, n)
    with pytest.raises(TypeError):
        hs.copyto(hs.zeros(3, dtype=np.int32), hs.ones(3))


def test_basic_indexing_and_assignment_through_views_match_numpy(hs):
    h, n = both(hs, sample("float64"))
    keys = [
        1,
        -1,
        (1, 2),
        (slice(None), 2),
        (Ellipsis, 1),
        (None, 1),
        slice(None, None, -2),
        (slice(1, None, 2), None, slice(None, None, -1)),
    ]
    for key in keys:
        assert_same(h[key], n[key], what=f"getitem {key!r}")
    h[1, ::2] = 9.0
    n[1, ::2] = 9.0
    h[..., -1] = h[..., 0]
    n[..., -1] = n[..., 0]
    assert_same(h, n)


@pytest.mark.parametrize("dtype", ["float64", "int32", "bool", "complex64"])
def test_integers_indexing_every_dimension_give_numpys_scalar(hs, dtype):
    h, n = both(hs, sample(dtype, shape=(3, 4)))
    for key in [(1, 2), (-1, 0)]:
        got, want = h[key], n[key]
        assert type(got) is type(want), f"{key!r}: {type(got)} vs {type(want)}"
        assert got == want and hash(got) == hash(want)
    row_h, row_n = h[2], n[2]
    got, want = row_h[3], row_n[3]
    assert type(got) is type(want) and got == want
    # Indices that are not all integers keep a 0-d array, in NumPy too.
    for key in [(1, 2, Ellipsis), (1, 2, None)]:
        assert_same(h[key], n[key], what=f"getitem {key!r}")
    zero_h, zero_n = hs.asarray(n[1, 2]), np.asarray(n[1, 2])
    assert type(zero_h[()]) is type(zero_n[()]) and zero_h[()] == zero_n[()]
    # The scalar sees the writes recorded before it was read.
    h[1, 2] = h[0, 0]
    n[1, 2] = n[0, 0]
    assert h[1, 2] == n[1, 2]


def test_integer_and_boolean_indexing_match_numpy(hs):
    h, n = both(hs, sample("int32"))
    idx = np.array([2, 0, -1, 0])
    assert_same(h[hs.asarray(idx)], n[idx])
    assert_same(h[1, hs.asarray(idx)], n[1, idx])
    mask = n > 0
    assert_same(h[hs.asarray(mask)], n[mask])
    h[hs.asarray(mask)] = 0
    n[mask] = 0
    assert_same(h, n)
    flat = hs.asarray(np.arange(10))
    flat[hs.asarray(np.array([1, 3]))] = hs.asarray(np.array([7, 8]))
    expected = np.arange(10)
    expected[[1, 3]] = [7, 8]
    assert_same(flat, expected)


def test_index_out_of_bounds_raises_index_error(hs):
    h = hs.ones((3, 4))
    with pytest.raises(IndexError):
        h[3]
    with pytest.raises(IndexError):
        h[0, -5]
    with pytest.raises(IndexError):
        np.asarray(h[hs.asarray(np.array([0, 3]))])


@pytest.mark.parametrize("dtype", ["int64", "uint64"])
def test_wide_integers_become_float64_rounded_as_numpy_rounds_them(hs, dtype):
    # The cpu engine converts 64-bit integers in two 32-bit halves (AVX2 has no vector
    # instruction for it); every value must still round exactly as C's cast does.
    info = np.iinfo(dtype)
    edges = [info.min, info.max, info.min + 1, info.max - 1, 0, 1, 2**31, 2**32 - 1]
    edges += [
        2**32,
        2**53 - 1,
        2**53 + 1,
        2**53 + 3,
        2**62 + 2**9 + 1,
        2**63 - 2**10 - 1,
    ]
    edges += [2**63 - 2**10, 2**63 - 2**9 - 1] + (
        [-(2**53) - 1, -(2**31) - 1] * (info.min < 0)
    )
    rng = np.random.default_rng(7)
    bits = rng.integers(0, 2**64, size=997, dtype=np.uint64) >> rng.integers(
        0, 64, size=997, dtype=np.uint64
    )
    n = np.concatenate([np.array(edges, dtype=dtype), bits.view(dtype)])
    h = hs.asarray(n)
    nan = np.full(n.shape, np.nan)
    for got, expected in [
        (h.astype(np.float64), n.astype(np.float64)),
        (h[::-1].astype(np.float64) * 1.0, n[::-1].astype(np.float64) * 1.0),
        (h + 0.5, n + 0.5),
        # abs(int64 min) stays negative, so its root is NaN in both.
        (hs.sqrt(hs.abs(h)), np.sqrt(np.abs(n), where=np.abs(n) >= 0, out=nan.copy())),
    ]:
        got = np.asarray(got)
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("dtype", ["int64", "uint64"])
def test_wide_integers_become_float32_rounded_once_as_numpy_rounds_them(hs, dtype):
    # Without AVX-512 the cpu engine sums the two halves in double and rounds that to
    # float: twice rounded, wrong where the double lands on a float midpoint the integer
    # is not on (2**60 - 2**35 - 1 gave 2**60, not 2**60 - 2**36), unless corrected.
    info = np.iinfo(dtype)
    edges = [info.min, info.max, info.min + 1, info.max - 1, 0, 1, 2**24 + 1, 2**31]
    for k in range(25, 64):
        half = 2 ** (k - 24)  # half a float spacing above 2**k
        for odd in (1, 3, 2**23 - 1):
            mid = 2**k + half * odd
            edges += [mid - 1, mid, mid + 1]
    edges = [e for e in edges if info.min <= e <= info.max]
    if info.min < 0:
        edges += [-e for e in edges if info.min <= -e <= info.max]
    rng = np.random.default_rng(11)
    bits = rng.integers(0, 2**64, size=1999, dtype=np.uint64) >> rng.integers(
        0, 64, size=1999, dtype=np.uint64
    )
    n = np.concatenate([np.array(edges, dtype=dtype), bits.view(dtype)])
    h = hs.asarray(n)
    one = np.float32(1)
    for got, expected in [
        (h.astype(np.float32), n.astype(np.float32)),
        (h[::-1].astype(np.float32) * one, n[::-1].astype(np.float32) * one),
    ]:
        got = np.asarray(got)
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)


def test_float_aranges_fused_into_math_match_numpy_to_the_last_bit(hs):
    for dtype in (np.float64, np.float32, np.float16):
        n = 3001
        got = hs.sin(hs.arange(n, dtype=dtype) * dtype(0.37))
        expected = np.sin(np.arange(n, dtype=dtype) * dtype(0.37))
        assert_same(got, expected)
        np.testing.assert_array_equal(
            np.asarray(hs.arange(n, dtype=dtype) + 0), np.arange(n, dtype=dtype) + 0
        )


INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_integer_division_by_scalars_matches_numpy_for_every_divisor(hs, dtype):
    # The cpu engine runs a kernel whose scalar divisors are all positive powers of two
    # through shifts and masks, all positive and small (below 2^21 for 64-bit types)
    # through floating-point division, and any other through the exact integer rules:
    # three loop nests. Each, fused with other arithmetic, over the whole range of
    # values, with divisors at the edges of each nest.
    info = np.iinfo(dtype)
    values = np.linspace(info.min, info.max, 997, dtype=np.float64).astype(dtype)
    values[:6] = [info.min, info.max, 0, 1, info.max - 1, info.min + 1]
    values[6:12] = np.array(info.max, dtype) - np.arange(6, dtype=dtype) * 7
    h, n = both(hs, values)
    divisors = [1, 2, 4, 8, 64, 3, 6, 7, 10, 127, 0, 255, 1000, 65535]
    divisors += [1_000_003, 2**21 - 1, 2**21, 2**21 + 1, 2**31 - 1, 2**40 + 1, 2**62]
    if info.min < 0:
        divisors += [-1, -2, -8, -3, -128, -1_000_003, -(2**62)]
    divisors = [d for d in divisors if info.min <= d <= info.max]
    for d in divisors:
        d = np.array(d, dtype=dtype)[()]  # a NumPy scalar of the array's type
        with np.errstate(divide="ignore", over="ignore"):
            assert_same(h % d, n % d, what=f"% {d}")
            assert_same(h // d, n // d, what=f"// {d}")
            # Fused into a reduction and a scan (the kernel's other loop structures).
            assert_same((h % d).sum(), (n % d).sum(), what=f"sum of % {d}")
            assert_same(np.cumsum(h // d), np.cumsum(n // d), what=f"cumsum of // {d}")
            assert_same(
                (h[::-1] + 3) % d + h // d,
                (n[::-1] + 3) % d + n // d,
                what=f"fused with % {d} and // {d}",
            )
    # Random dividends over the whole range, random divisors below 2^21.
    rng = np.random.default_rng(7)
    hr, nr = both(
        hs, rng.integers(info.min, info.max, 5000, dtype=dtype, endpoint=True)
    )
    for d in rng.integers(1, min(2**21, info.max), 12, dtype=dtype, endpoint=True):
        assert_same(hr % d + hr // d, nr % d + nr // d, what=f"random, divisor {d}")
    two, three = np.array(2, dtype=dtype)[()], np.array(3, dtype=dtype)[()]
    with np.errstate(divide="ignore", over="ignore"):
        # One divisor that is a power of two and one that is not, in one kernel.
        assert_same(h % two + h // three, n % two + n // three, what="mixed divisors")
        # Broadcast, strided and 2-D views.
        h2, n2 = both(hs, values[:990].reshape(33, 30))
        assert_same(
            h2[:, ::-2] % (two * two) + h2[:1, 1::2] // two,
            n2[:, ::-2] % (two * two) + n2[:1, 1::2] // two,
            what="2-D views",
        )


@pytest.mark.parametrize(
    "left,right", [("float64", "bool"), ("float32", "int16"), ("int64", "uint8")]
)
def test_operands_cast_and_broadcast_match_numpy(hs, left, right):
    """An operand of another dtype that the loop broadcasts (a column against a matrix,
    a row against a stack) is cast at the loop's shape when that is a few times its own,
    else at its own: the same values either way."""
    x, nx = both(hs, sample(left, (300, 4)))
    col, ncol = both(hs, sample(right, (300,), seed=1))
    row, nrow = both(hs, sample(right, (4,), seed=2))
    assert_same(x * col[:, None], nx * ncol[:, None])
    assert_same(col[:, None] - x, ncol[:, None] - nx)
    assert_same(x + row, nx + nrow)
    assert_same(
        hs.maximum(x[::-2], col[::-2, None]), np.maximum(nx[::-2], ncol[::-2, None])
    )


def test_a_cast_of_a_broadcast_operand_fuses_into_its_loop(hs):
    """Structure, not time: `points * mask[:, None]` (float64 times bool) moves the
    points, the mask and the result once each. The mask cast to float64 first, at its
    own shape, was a kernel of its own writing and reading 8 more bytes per row."""
    if getattr(hs, "stats", None) is None or hs.stats().get("stack") != "cpu":
        pytest.skip("the cpu stack counts the bytes its kernels move")
    n = 1_000_000
    points = hs.asarray(sample("float64", (n, 2), seed=3))
    mask = hs.asarray(sample("bool", (n,), seed=4))
    float(points[0, 0]) + float(mask[0])
    before = hs.stats()["engine"]["bytes_moved"]
    r = points * mask[:, None]
    float(r[0, 0])
    moved = hs.stats()["engine"]["bytes_moved"] - before
    assert moved < 40 * n, f"{moved / n:.1f} bytes per row"


def test_a_generated_array_read_across_reductions_is_recomputed_not_stored(hs):
    """Structure, not time: a least-squares fit over `x = arange(n) * h` reads `x` in
    three passes separated by reductions. The `rematerialize` filter recomputes `x` in
    each pass, so only `y` is written and read back; stored, `x` moved 24 more bytes per
    element (written once, read twice). Results equal NumPy's up to the order of the
    sums."""
    n = 1_000_000
    y_host = sample("float64", (n,), seed=7)

    def fit(xp):
        x = xp.arange(n, dtype=np.float64) * (10.0 / n)
        y = xp.asarray(y_host) + 0.5 * x
        xm = xp.mean(x)
        slope = xp.sum((x - xm) * y) / xp.sum((x - xm) ** 2)
        rss = xp.sum((y - slope * x) ** 2)
        return float(slope), float(rss)

    want = fit(np)
    if getattr(hs, "stats", None) is None or hs.stats().get("stack") != "cpu":
        np.testing.assert_allclose(fit(hs), want, rtol=1e-12)
        return
    before = hs.stats()["engine"]["bytes_moved"]
    got = fit(hs)
    moved = hs.stats()["engine"]["bytes_moved"] - before
    np.testing.assert_allclose(got, want, rtol=1e-12)
    # y_host in (8), y written (8) and read twice (16): 32 bytes per element.
    assert moved < 40 * n, f"{moved / n:.1f} bytes per element"
