"""``numpy.linalg`` for Hassium arrays: ``norm`` (every vector order, and the matrix
norms that need no singular values) and ``matrix_power`` to non-negative powers are
recorded natively; every other function (solve, inv, eig, svd, ...) runs through NumPy's
LAPACK wrappers via the fallback path."""

import operator as _operator

import numpy as _np

from . import _fallback
from . import _hassium as _ext
from ._native import _arr
from ._native import matmul as _matmul

LinAlgError = _np.linalg.LinAlgError


def _normalize_axes(axis, ndim):
    """``axis`` of ``norm`` as a tuple of distinct non-negative axes, with NumPy's errors."""
    if isinstance(axis, tuple):
        axes = axis
    else:
        try:
            axes = (int(axis),)  # NumPy's own conversion: 1.5 is axis 1
        except (TypeError, ValueError):
            raise TypeError(
                "'axis' must be None, an integer or a tuple of integers"
            ) from None
    out = []
    for a in axes:
        a = _operator.index(a)
        if not -ndim <= a < ndim:
            raise _np.exceptions.AxisError(a, ndim)
        out.append(a % ndim)
    if len(out) == 2 and out[0] == out[1]:
        raise ValueError("Duplicate axes given.")
    return tuple(out)


def _abs(x):
    return _ext.ufunc("absolute", x)


def _squares(x):
    """``|x|**2`` element by element, in the input's real dtype, as NumPy forms it:
    ``(x.conj() * x).real`` (for complex values one fused multiply-add per element)."""
    if x.dtype.kind == "c":
        return _ext.ufunc("multiply", _ext.ufunc("conjugate", x), x).real
    return _ext.ufunc("multiply", x, x)


def norm(x, ord=None, axis=None, keepdims=False):
    """NumPy's ``linalg.norm``, recorded: every vector order (``inf``, ``-inf``, 0, 1,
    2, any other power), and the matrix norms ``fro``, 1, -1, ``inf`` and ``-inf``, as
    NumPy's own formulas of sums, maxima and powers. The matrix norms that need singular
    values (``2``, ``-2``, ``nuc``) run through NumPy."""
    x = _arr(x)
    if x.dtype.kind not in "fc":
        x = x.astype(_np.float64)
    nd = x.ndim
    keepdims = bool(keepdims)
    if axis is None:
        if ord is None or (ord in ("f", "fro") and nd == 2) or (ord == 2 and nd == 1):
            total = _ext.reduce("add", _squares(x), axis=None, keepdims=keepdims)
            return _ext.ufunc("sqrt", total)
        if nd not in (1, 2):
            raise ValueError("Improper number of dimensions to norm.")
        axes = tuple(range(nd))
    else:
        axes = _normalize_axes(axis, nd)
    if len(axes) == 1:
        if isinstance(ord, str):
            raise ValueError(f"Invalid norm order '{ord}' for vectors")
        ax = axes[0]
        if ord == _np.inf:
            # `initial=0`, as NumPy: the norm of nothing is 0.
            return _ext.reduce(
                "maximum", _abs(x), axis=ax, keepdims=keepdims, initial=0
            )
        if ord == -_np.inf:
            return _ext.reduce("minimum", _abs(x), axis=ax, keepdims=keepdims)
        if ord == 0:
            nonzero = _ext.ufunc("not_equal", x, 0).astype(x.real.dtype)
            return _ext.reduce("add", nonzero, axis=ax, keepdims=keepdims)
        if ord == 1:
            return _ext.reduce("add", _abs(x), axis=ax, keepdims=keepdims)
        if ord is None or ord == 2:
            total = _ext.reduce("add", _squares(x), axis=ax, keepdims=keepdims)
            return _ext.ufunc("sqrt", total)
        try:
            float(ord)
        except TypeError:
            raise TypeError("Invalid norm order for vectors.") from None
        # NumPy: |x| ** ord summed, then to the power 1 / ord in the result's dtype.
        absx = _abs(x)
        powered = _ext.ufunc("power", absx, _np.asarray(ord, dtype=absx.dtype)[()])
        total = _ext.reduce("add", powered, axis=ax, keepdims=keepdims)
        inv = _np.reciprocal(_np.asarray(ord, dtype=total.dtype))
        return _ext.ufunc("power", total, inv[()])
    if len(axes) == 2:
        row, col = axes
        if ord in (2, -2, "nuc"):
            return _fallback.call(
                _np.linalg.norm,
                "linalg.norm",
                (x,),
                {"ord": ord, "axis": axis, "keepdims": keepdims},
            )
        if ord in (1, -1, _np.inf, -_np.inf):
            # Column sums (1) or row sums (inf), then their largest or smallest; the
            # largest of none is 0, as NumPy's `initial=0` makes it.
            summed, other = (row, col) if ord in (1, -1) else (col, row)
            sums = _ext.reduce("add", _abs(x), axis=summed, keepdims=False)
            after = other - 1 if other > summed else other
            if ord in (1, _np.inf):
                ret = _ext.reduce("maximum", sums, axis=after, initial=0)
            else:
                ret = _ext.reduce("minimum", sums, axis=after)
        elif ord in (None, "fro", "f"):
            total = _ext.reduce("add", _squares(x), axis=axes, keepdims=False)
            ret = _ext.ufunc("sqrt", total)
        else:
            raise ValueError("Invalid norm order for matrices.")
        if keepdims:
            shape = list(x.shape)
            shape[row] = 1
            shape[col] = 1
            ret = ret.reshape(tuple(shape))
        return ret
    raise ValueError("Improper number of dimensions to norm.")


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
