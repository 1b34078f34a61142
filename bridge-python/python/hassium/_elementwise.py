"""Elementwise functions that are not a single ufunc: ``where``, ``clip``, ``round``,
``isclose``, ``copyto``, ...

Part of ``_native`` (see its docstring for the rules every part keeps)."""

import numpy as np

from . import _hassium as _ext
from ._common import (
    _arr,
    _bool,
    _dtype_of,
    _fallback_np,
    _is_python_scalar,
    _NoValue,
    _shape_of,
    ndarray,
)
from ._products import _into
from ._reductions import all
from ._shapes import nonzero
from ._ufuncs import abs


def where(condition, x=_NoValue, y=_NoValue, /):
    if x is _NoValue and y is _NoValue:
        return nonzero(condition)
    if x is _NoValue or y is _NoValue:
        raise ValueError("either both or neither of x and y should be given")
    return _ext.where(condition, x, y)


def clip(
    a, a_min=_NoValue, a_max=_NoValue, out=None, *, min=_NoValue, max=_NoValue, **kwargs
):
    if kwargs:
        return _fallback_np("clip", (a, a_min, a_max), dict(kwargs, out=out))
    if min is not _NoValue:
        if a_min is not _NoValue:
            raise ValueError("Passed more than one argument for the lower bound")
        a_min = min
    if max is not _NoValue:
        if a_max is not _NoValue:
            raise ValueError("Passed more than one argument for the upper bound")
        a_max = max
    lo = None if a_min is _NoValue else a_min
    hi = None if a_max is _NoValue else a_max
    return _arr(a).clip(lo, hi, out=out)


def round(a, decimals=0, out=None):
    a = _arr(a)
    kind = a.dtype.kind
    # NumPy rounds a bool as `rint` does (float16) and, with decimals, scales it into a
    # bool array (its casting error): only integers are returned as they are.
    if kind == "c" or (kind in "biu" and decimals < 0) or (kind == "b" and decimals):
        return _fallback_np("round", (a,), {"decimals": decimals, "out": out})
    if kind in "iu":
        result = a.copy()
    elif decimals == 0:
        result = _ext.ufunc("rint", a)
    elif decimals > 0:
        f = 10.0**decimals
        result = _ext.ufunc(
            "divide", _ext.ufunc("rint", _ext.ufunc("multiply", a, f)), f
        )
    else:
        f = 10.0 ** (-decimals)
        result = _ext.ufunc(
            "multiply", _ext.ufunc("rint", _ext.ufunc("divide", a, f)), f
        )
    if out is not None:
        _into(out, result)
        return out
    return result


around = round


def isclose(a, b, rtol=1.0e-5, atol=1.0e-8, equal_nan=False):
    # numpy/_core/numeric.py, operation for operation.
    x = a if _is_python_scalar(a) else _arr(a)
    y = b if _is_python_scalar(b) else _arr(b)
    if isinstance(y, ndarray):
        dt = np.result_type(y.dtype, 1.0)
        if y.dtype != dt:
            y = y.astype(dt)
    elif isinstance(y, int):
        y = float(y)
    ufn = _ext.ufunc
    diff = ufn("absolute", ufn("subtract", x, y))
    if _is_python_scalar(y) and _is_python_scalar(atol) and _is_python_scalar(rtol):
        bound = atol + rtol * abs(y)  # a Python float: weak, like NumPy's
    else:
        bound = ufn("add", atol, ufn("multiply", rtol, ufn("absolute", y)))
    result = ufn(
        "logical_or",
        ufn("logical_and", ufn("less_equal", diff, bound), ufn("isfinite", y)),
        ufn("equal", x, y),
    )
    if equal_nan:
        result = ufn(
            "logical_or", result, ufn("logical_and", ufn("isnan", x), ufn("isnan", y))
        )
    if isinstance(result, ndarray) and result.ndim == 0:
        return result[()]
    return result


def allclose(a, b, rtol=1.0e-5, atol=1.0e-8, equal_nan=False):
    res = all(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))
    return _bool(res)


def array_equal(a1, a2, equal_nan=False):
    a1 = _arr(a1)
    a2 = _arr(a2)
    if a1.shape != a2.shape:
        return False
    if not equal_nan:
        return _bool(all(_ext.ufunc("equal", a1, a2)))
    if a1.dtype.kind not in "fc" and a2.dtype.kind not in "fc":
        return _bool(all(_ext.ufunc("equal", a1, a2)))
    n1 = _ext.ufunc("isnan", a1)
    n2 = _ext.ufunc("isnan", a2)
    if not _bool(all(_ext.ufunc("equal", n1, n2))):
        return False
    same = _ext.ufunc("logical_or", _ext.ufunc("equal", a1, a2), n1)
    return _bool(all(same))


def _check_copy_cast(src, dtype, casting):
    """NumPy's casting check of ``copyto``. A Python int, float or complex is weak (NEP
    50): it takes the dtype it shares with ``dtype`` (a bool and an int share int64, so
    an int into a bool array is refused but for 'unsafe'), and under 'equiv' it must
    keep its own default dtype."""
    if type(src) in (int, float, complex):
        src_dtype = np.result_type(src, dtype)
        if casting == "equiv" and src_dtype != _dtype_of(src):
            raise TypeError(
                f"cannot cast Python {type(src).__name__} to {src_dtype} under the "
                "casting rule 'equiv'"
            )
    else:
        src_dtype = _dtype_of(src)
    if not np.can_cast(src_dtype, dtype, casting):
        what = "scalar" if _shape_of(src) == () else "array data"
        raise TypeError(
            f"Cannot cast {what} from {src_dtype!r} to {dtype!r} "
            f"according to the rule {casting!r}"
        )


def copyto(dst, src, casting="same_kind", where=True):
    if not isinstance(dst, ndarray):
        return _fallback_np("copyto", (dst, src), {"casting": casting, "where": where})
    _check_copy_cast(src, dst.dtype, casting)
    if where is not True:
        src = _ext.where(where, src, dst)
    _ext.copyto(dst, src, casting="unsafe")  # checked above, with NumPy's rule
