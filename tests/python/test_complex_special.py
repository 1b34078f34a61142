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
