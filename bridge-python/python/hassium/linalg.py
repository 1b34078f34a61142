"""``numpy.linalg`` for Hassium arrays: ``norm`` of vectors and the Frobenius norm, and
``matrix_power`` to non-negative powers, are recorded natively; every other function
(solve, inv, eig, svd, ...) runs through NumPy's LAPACK wrappers via the fallback path."""

import operator as _operator

import numpy as _np

from . import _fallback
from . import _hassium as _ext
from ._native import _arr
from ._native import matmul as _matmul

LinAlgError = _np.linalg.LinAlgError


def norm(x, ord=None, axis=None, keepdims=False):
    """The 2-norm along ``axis`` (or of everything): ``sqrt(sum(|x|**2))``, as NumPy
    computes it for ``ord=None`` (vectors, the Frobenius norm of matrices) and ``ord=2``
    on one axis. Other orders run through NumPy."""
    x = _arr(x)
    native = ord is None or (ord == 2 and (x.ndim == 1 or isinstance(axis, int)))
    native = native or (
        ord == "fro" and (x.ndim == 2 or (isinstance(axis, tuple) and len(axis) == 2))
    )
    if not native or (axis is not None and not isinstance(axis, (int, tuple))):
        return _fallback.call(
            _np.linalg.norm,
            "linalg.norm",
            (x,),
            {"ord": ord, "axis": axis, "keepdims": keepdims},
        )
    if x.dtype.kind not in "fc":
        x = x.astype(_np.float64)
    if x.dtype.kind == "c":
        sq = _ext.ufunc(
            "add", _ext.ufunc("square", x.real), _ext.ufunc("square", x.imag)
        )
    else:
        sq = _ext.ufunc("multiply", x, x)
    total = _ext.reduce("add", sq, axis=axis, keepdims=bool(keepdims))
    return _ext.ufunc("sqrt", total)


def matrix_power(a, n):
    """Square matrices (or stacks of them) to a non-negative integer power, by NumPy's
    sequence of products (so results agree to the last place); negative powers need the
    inverse and go through NumPy."""
    a = _arr(a)
    if a.ndim < 2:
        raise LinAlgError(
            f"{a.ndim}-dimensional array given. Array must be at least two-dimensional"
        )
    if a.shape[-1] != a.shape[-2]:
        raise LinAlgError("Last 2 dimensions of the array must be square")
    try:
        n = _operator.index(n)
    except TypeError as e:
        raise TypeError("exponent must be an integer") from e
    if n < 0:
        return _fallback.call(
            _np.linalg.matrix_power, "linalg.matrix_power", (a, n), {}
        )
    if n == 0:
        eye = _ext.ufunc(
            "equal",
            _ext.arange(0, a.shape[-1], 1, _np.dtype(_np.intp)).reshape(-1, 1),
            _ext.arange(0, a.shape[-1], 1, _np.dtype(_np.intp)).reshape(1, -1),
        )
        out = _ext.empty(a.shape, a.dtype)
        _ext.copyto(out, eye, casting="unsafe")
        return out
    if n == 1:
        return a
    if n == 2:
        return _matmul(a, a)
    if n == 3:
        return _matmul(_matmul(a, a), a)
    # Squarings, and the product of those the binary digits of n select, in NumPy's order.
    z = result = None
    while n > 0:
        z = a if z is None else _matmul(z, z)
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else _matmul(result, z)
    return result


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _fallback.wrap_attribute(_np.linalg, name, f"linalg.{name}")


FUNCTIONS = {"norm": norm, "matrix_power": matrix_power}
