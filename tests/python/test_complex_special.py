"""Complex functions against NumPy on a grid of special and extreme values (issue 46):
every pair of ±0, ±1, 0.5, 2, -3, 45, -400, 710, 1e-300, ±1e300, ±inf and NaN as real
and imaginary parts, in complex128 and complex64. NumPy follows C99 Annex G there (the
Array API standard lists the same cases); the result must match it exactly in the signs
of zeros and infinities, the places of NaNs, and to a few ulps elsewhere (``tanh(45+1j)``
in complex64 once came out ``nan``)."""

import itertools
import warnings

import numpy as np
import pytest

PARTS = [0.0, -0.0, 0.5, -1.0, 1.0, 2.0, -3.0, 45.0, -400.0, 710.0]
PARTS += [1e-300, 1e300, -1e300, np.inf, -np.inf, np.nan]
GRID = np.array([complex(a, b) for a, b in itertools.product(PARTS, PARTS)])

FUNCTIONS = [
    "sqrt",
    "exp",
    "exp2",
    "log",
    "log1p",
    "sin",
    "cos",
    "tan",
    "sinh",
    "cosh",
    "tanh",
    "arcsin",
    "arccos",
    "arctan",
    "arcsinh",
    "arccosh",
    "arctanh",
]


def mismatch(want: complex, got: complex, rtol: float) -> bool:
    for a, b in ((want.real, got.real), (want.imag, got.imag)):
        if np.isnan(a) and np.isnan(b):
            continue
        if a == b and (a != 0 or np.signbit(a) == np.signbit(b)):
            continue
        if (
            np.isfinite(a)
            and np.isfinite(b)
            and abs(a - b) <= rtol * max(abs(a), abs(b))
        ):
            continue
        return True
    return False


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
@pytest.mark.parametrize("name", FUNCTIONS)
def test_complex_functions_match_numpy_on_special_values(hs, name, dtype):
    x = GRID.astype(dtype)
    rtol = 1e-13 if dtype is np.complex128 else 1e-6
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = getattr(np, name)(x)
        got = np.asarray(getattr(hs, name)(hs.asarray(x)))
    bad = [
        (x[i], want[i], got[i])
        for i in range(len(x))
        if mismatch(want[i], got[i], rtol)
    ]
    assert not bad, f"{len(bad)} of {len(x)} differ (input, NumPy, Hassium): {bad[:6]}"


#: Exponents of a zero base: NumPy gives 0 when the real part is positive, whatever the
#: imaginary part, and NaN otherwise.
ZERO_BASE_EXPONENTS = [1 + 1j, 1, 1j, -1j, -1, -1 + 1j, -2, 0.5 - 1j, np.inf, 0, 2, 3]


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_complex_power_of_zero_matches_numpy(hs, dtype):
    """``0 ** (1+1j)`` is 0 in NumPy, not NaN (found by test_api_fuzz.py through
    ``power.outer(False, 1+1j)``); every signed zero as the base, in both the compiled
    and the interpreted kernels (the power fused with an add, and alone)."""
    zeros = [complex(0.0, 0.0), complex(-0.0, 0.0), complex(0.0, -0.0)]
    pairs = list(itertools.product(zeros, ZERO_BASE_EXPONENTS))
    a = np.array([p[0] for p in pairs], dtype=dtype)
    b = np.array([p[1] for p in pairs], dtype=dtype)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        want = np.power(a, b)
        got = np.asarray(hs.power(hs.asarray(a), hs.asarray(b)))
        fused = np.asarray(hs.power(hs.asarray(a), hs.asarray(b)) + 0)
    for result in (got, fused):
        bad = [
            (a[i], b[i], want[i], result[i])
            for i in range(len(a))
            if mismatch(want[i], result[i], 1e-6)
        ]
        assert not bad, f"(base, exponent, NumPy, Hassium): {bad[:6]}"


def views(dtype):
    """Contiguous, strided and (complex128 only) reversed. NumPy's complex64 loops fall
    back to libm's ``hypotf`` and the textbook product on a negative stride, so there
    its results depend on the layout; Hassium's do not."""
    yield lambda a: a
    yield lambda a: a[::3]
    if dtype is np.complex128:
        yield lambda a: a[::-1]


def same_bits(got, want):
    ok = (got == want) | (np.isnan(got) & np.isnan(want))
    return ok if ok.ndim else np.array([ok])


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_complex_magnitude_and_product_are_numpys_bit_for_bit(hs, dtype):
    """``abs`` of a complex array is NumPy's array loop bit for bit: ``big * sqrt(q*q +
    1)`` with ``q = small / big`` and one rounding for ``q*q + 1``, infinity beside a
    NaN. libm's ``hypot``, used before, differed from it in the last bit for about a
    third of the points of a circle, and so flipped ``abs(z) <= 2`` on it (Mandelbrot's
    escape test). A product and a square are NumPy's fused ones (each part one
    multiply-add; the textbook formula differed for two products in five); ``prod``
    and ``cumprod`` keep the textbook product, as NumPy's reduce loop does. On the
    special-value grid, points on and near the circle of radius 2 and a spread of
    magnitudes, alone, fused with a comparison, and iterated as a Mandelbrot step."""
    rng = np.random.default_rng(7)
    t = rng.uniform(0, 2 * np.pi, 3000)
    ring = 2 * np.cos(t) + 2j * np.sin(t)
    near = ring * (1 + rng.uniform(-4e-16, 4e-16, t.size))
    spread = rng.normal(size=3000) * 10.0 ** rng.uniform(-40, 40, 3000)
    spread = spread + 1j * rng.normal(size=3000) * 10.0 ** rng.uniform(-40, 40, 3000)
    with np.errstate(all="ignore"):
        z = np.concatenate([GRID, ring, near, spread]).astype(dtype)
    w = z[::-1].copy()
    for view in views(dtype):
        x, y = view(z), view(w)
        hx, hy = hs.asarray(x), hs.asarray(y)
        with np.errstate(all="ignore"):
            # NumPy's array loop, on a contiguous copy: on AVX-512 builds NumPy runs
            # it for positive strides only, and a reversed view goes to its scalar
            # loop, libm's hypot (a third of this data then differs in the last bit
            # from the same values laid out forwards). Hassium's result does not
            # depend on the layout.
            loop_abs = np.abs(np.ascontiguousarray(x))
            for name, want, got in [
                ("abs", loop_abs, hs.abs(hx)),
                ("abs <= 2", loop_abs <= 2.0, hs.abs(hx) <= 2.0),
                ("multiply", x * y, hx * hy),
                ("square", np.square(x), hs.square(hx)),
                ("** 2", x**2, hx**2),
                ("prod", np.prod(x[3000:3040]), hs.prod(hx[3000:3040])),
                ("cumprod", np.cumprod(x[3000:3040]), hs.cumprod(hx[3000:3040])),
            ]:
                got = np.asarray(got)
                assert got.dtype == want.dtype, name
                ok = same_bits(got, want)
                assert ok.all(), f"{name}: {(~ok).sum()} differ"
    c = ring[:1000].astype(dtype) * 0.6
    zn, zh = np.zeros_like(c), hs.zeros_like(hs.asarray(c))
    for _ in range(6):
        zn = np.where(np.abs(zn) <= 2.0, zn**2 + c, zn)
        zh = hs.where(hs.abs(zh) <= 2.0, zh**2 + hs.asarray(c), zh)
    assert same_bits(np.asarray(zh), zn).all()
