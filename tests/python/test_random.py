"""hassium.random: reproducible Philox streams, NumPy's shapes/dtypes/ranges, fresh
numbers on every call. (The numbers are Hassium's own, not NumPy's: values are checked
for range and rough distribution, and against the documented bits-to-value formulas.)"""

import numpy as np
import pytest
from conftest import AGAINST_NUMPY, MODULE, to_numpy

pytestmark = pytest.mark.skipif(
    AGAINST_NUMPY, reason="Philox streams are Hassium's own"
)


def values(x):
    return np.asarray(to_numpy(x))


def test_the_same_seed_gives_the_same_sequence(hs):
    hs.random.seed(1234)
    first = [
        values(hs.random.rand(5)),
        values(hs.random.randn(2, 3)),
        values(hs.random.randint(0, 10, size=4)),
    ]
    hs.random.seed(1234)
    second = [
        values(hs.random.rand(5)),
        values(hs.random.randn(2, 3)),
        values(hs.random.randint(0, 10, size=4)),
    ]
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)


def test_successive_calls_give_fresh_numbers(hs):
    hs.random.seed(7)
    a = values(hs.random.random(100))
    b = values(hs.random.random(100))
    assert not np.array_equal(a, b)
    rng = hs.random.default_rng(7)
    assert not np.array_equal(values(rng.random(10)), values(rng.random(10)))


def test_generators_with_the_same_seed_agree_and_different_seeds_differ(hs):
    a = values(hs.random.default_rng(42).random((3, 4)))
    b = values(hs.random.default_rng(42).random((3, 4)))
    c = values(hs.random.default_rng(43).random((3, 4)))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_uniform_floats_follow_the_documented_bit_formula(hs):
    rng = hs.random.default_rng(99)
    seed, stream = rng._seed, rng._stream
    got = values(rng.random(50))
    bits = values(MODULE._hassium.random_bits((50,), seed, stream))
    np.testing.assert_array_equal(
        got, (bits >> np.uint64(11)).astype(np.float64) * 2.0**-53
    )


_M32 = 0xFFFFFFFF


def philox4x32_10(seed, stream, i):
    """The module doc's Philox-4x32-10, one counter at a time in Python: the engines'
    vectorised kernels are checked against this."""
    c = [i & _M32, i >> 32, stream & _M32, stream >> 32]
    k0, k1 = seed & _M32, seed >> 32
    for _ in range(10):
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [
            ((p1 >> 32) ^ c[1] ^ k0) & _M32,
            p1 & _M32,
            ((p0 >> 32) ^ c[3] ^ k1) & _M32,
            p0 & _M32,
        ]
        k0, k1 = (k0 + 0x9E3779B9) & _M32, (k1 + 0xBB67AE85) & _M32
    return (c[1] << 32) | c[0]


def test_random_bits_are_philox_4x32_10_on_every_engine(hs):
    # Random123's known answer for a zero counter and key: words 0x6627e8d5, 0xe169c58d.
    assert philox4x32_10(0, 0, 0) == 0xE169C58D6627E8D5
    assert values(MODULE._hassium.random_bits((1,), 0, 0))[0] == 0xE169C58D6627E8D5
    # Keys and streams with their high words set, and enough elements for the lanes.
    for seed, stream in [(0x243F6A8885A308D3, 0x13198A2E03707344), (99, 3)]:
        got = values(MODULE._hassium.random_bits((301,), seed, stream))
        want = [philox4x32_10(seed, stream, i) for i in range(301)]
        np.testing.assert_array_equal(got, np.array(want, dtype=np.uint64))


def test_random_arrays_kept_past_a_flush_keep_their_numbers(hs):
    """A live ``rng.random(n)`` no flush has read is kept as its generator (no memory); a
    later read writes it out, and every way of reading or changing it sees the numbers
    of the documented formula."""
    rng = hs.random.default_rng(3)
    seed, stream = rng._seed, rng._stream
    n = 5000
    bits = values(MODULE._hassium.random_bits((n,), seed, stream))
    want = (bits >> np.uint64(11)).astype(np.float64) * 2.0**-53
    before = hs.stats()
    x = rng.random(n)
    total = float(hs.sum(x * 2.0))
    assert total == pytest.approx(2.0 * want.sum(), rel=1e-12)
    if hs.info()["running_engine"] == "cpu":
        grown = hs.stats()["host_bytes_allocated"] - before["host_bytes_allocated"]
        assert hs.stats()["bases_generated"] > before["bases_generated"]
        assert grown < want.nbytes, "a random array no one read was written out"
    np.testing.assert_array_equal(values(x[::-1] + 0.0), want[::-1])
    x[::2] = -1.0
    want[::2] = -1.0
    np.testing.assert_array_equal(values(x), want)
    y = rng.uniform(2.0, 3.0, size=(40, 50))
    z = y.T * 1.0
    np.testing.assert_array_equal(values(z), values(y).T)


def test_shapes_dtypes_and_ranges_match_numpys_interface(hs):
    rng = hs.random.default_rng(0)
    u = values(rng.random((40, 50)))
    assert (
        u.shape == (40, 50) and u.dtype == np.float64 and u.min() >= 0 and u.max() < 1
    )
    f = values(rng.random(1000, dtype=np.float32))
    assert f.dtype == np.float32 and f.min() >= 0 and f.max() < 1
    i = values(rng.integers(-3, 4, size=(1000,)))
    assert i.dtype == np.int64 and i.min() == -3 and i.max() == 3
    e = values(rng.integers(5, size=1000, endpoint=True, dtype=np.uint8))
    assert e.dtype == np.uint8 and e.min() == 0 and e.max() == 5
    x = values(rng.uniform(2.0, 5.0, size=(1000,)))
    assert x.min() >= 2.0 and x.max() < 5.0
    assert isinstance(rng.random(), float)
    assert isinstance(rng.normal(), float)
    assert isinstance(hs.random.rand(), float)
    assert isinstance(hs.random.randint(5), int)
    assert values(hs.random.rand(2, 3)).shape == (2, 3)
    assert values(hs.random.randn(4)).shape == (4,)
    assert values(hs.random.uniform(size=3)).shape == (3,)
    assert values(hs.random.normal(1.0, 2.0, size=(2, 2))).shape == (2, 2)


def test_normal_numbers_have_roughly_the_right_moments(hs):
    z = values(hs.random.default_rng(3).normal(1.0, 2.0, size=20_000))
    assert abs(z.mean() - 1.0) < 0.06
    assert abs(z.std() - 2.0) < 0.06
    s = values(hs.random.default_rng(3).standard_normal(20_000))
    assert abs(s.mean()) < 0.03 and abs(s.std() - 1.0) < 0.03
    assert np.isfinite(s).all()


def test_integers_cover_the_range_evenly(hs):
    i = values(hs.random.default_rng(5).integers(0, 10, size=20_000))
    counts = np.bincount(i, minlength=10)
    assert counts.min() > 1700 and counts.max() < 2300


def test_bad_bounds_raise_value_error(hs):
    with pytest.raises(ValueError):
        hs.random.default_rng(0).integers(5, 5)
    with pytest.raises(ValueError):
        hs.random.randint(3, 1)
    with pytest.raises(ValueError):
        hs.random.default_rng(0).integers(0, 300, dtype=np.uint8)
    with pytest.raises(ValueError):
        hs.random.default_rng(-1)


def test_a_negative_scale_is_refused_and_array_parameters_give_arrays(hs):
    for normal in (hs.random.default_rng(0).normal, hs.random.normal):
        for scale in (-1.0, -0.0, hs.asarray([1.0, -2.0])):
            with pytest.raises(ValueError, match="scale < 0"):
                normal(0.0, scale)
        z = values(normal(0.0, hs.asarray([1.0, np.nan, 0.0])))
        assert z.shape == (3,) and np.isnan(z[1]) and z[2] == 0.0
        assert np.isnan(normal(0.0, np.nan))
    for uniform in (hs.random.default_rng(0).uniform, hs.random.uniform):
        u = values(uniform(hs.zeros((2, 1)), hs.asarray([1.0, 2.0, 3.0])))
        assert u.shape == (2, 3) and (u >= 0).all() and (u < [1.0, 2.0, 3.0]).all()


def test_other_generator_methods_fall_back_reproducibly(hs, monkeypatch):
    monkeypatch.setenv("HASSIUM_FALLBACK", "silent")
    a = values(hs.random.default_rng(11).permutation(10))
    b = values(hs.random.default_rng(11).permutation(10))
    np.testing.assert_array_equal(a, b)
    assert sorted(a.tolist()) == list(range(10))
    hs.random.seed(4)
    c = values(hs.random.choice(5, size=3))
    hs.random.seed(4)
    np.testing.assert_array_equal(c, values(hs.random.choice(5, size=3)))


def test_shuffle_permutes_the_hassium_array_in_place(hs, monkeypatch):
    monkeypatch.setenv("HASSIUM_FALLBACK", "silent")
    x = hs.arange(10)
    hs.random.shuffle(x)
    assert sorted(values(x).tolist()) == list(range(10))
