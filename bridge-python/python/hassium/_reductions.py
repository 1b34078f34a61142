"""Reductions and scans: ``sum``, ``max``, ``argmin``, ``cumsum``, ``mean``, ``var``, ...

Part of ``_native`` (see its docstring for the rules every part keeps)."""

import builtins

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from . import _hassium as _ext
from ._common import (
    UNSUPPORTED,
    _arr,
    _bool,
    _dtype,
    _fallback_np,
    _NoValue,
    _sum_dtype,
    _Unsupported,
)
from ._products import _into
from ._shapes import broadcast_to


def _reduce(name, a, axis, dtype, out, keepdims, initial=_NoValue, where=True):
    if where is not True:
        raise _Unsupported
    result = _ext.reduce(
        name,
        _arr(a),
        axis=axis,
        dtype=_dtype(dtype),
        out=out,
        keepdims=_bool(keepdims),
        initial=None if initial is _NoValue else initial,
    )
    return result if out is None else out


def _native_or_fallback(func):
    """Run ``func``; when it raises ``_Unsupported`` run NumPy's function of the same name."""

    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except UNSUPPORTED:
            return _fallback_np(func.__name__, args, kwargs)

    wrapper.__name__ = func.__name__
    wrapper.__qualname__ = func.__name__
    wrapper.__doc__ = func.__doc__ or getattr(
        getattr(np, func.__name__, None), "__doc__", None
    )
    wrapper.__wrapped__ = func
    return wrapper


@_native_or_fallback
def sum(
    a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue, where=True
):
    a = _arr(a)
    if dtype is None:
        dtype = _sum_dtype(a.dtype)
    return _reduce("add", a, axis, dtype, out, keepdims, initial, where)


@_native_or_fallback
def prod(
    a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue, where=True
):
    a = _arr(a)
    if dtype is None:
        dtype = _sum_dtype(a.dtype)
    return _reduce("multiply", a, axis, dtype, out, keepdims, initial, where)


@_native_or_fallback
def max(a, axis=None, out=None, keepdims=False, initial=_NoValue, where=True):
    return _reduce("maximum", a, axis, None, out, keepdims, initial, where)


@_native_or_fallback
def min(a, axis=None, out=None, keepdims=False, initial=_NoValue, where=True):
    return _reduce("minimum", a, axis, None, out, keepdims, initial, where)


amax = max
amin = min


@_native_or_fallback
def any(a, axis=None, out=None, keepdims=False, *, where=True):
    return _reduce("logical_or", a, axis, np.bool_, out, keepdims, where=where)


@_native_or_fallback
def all(a, axis=None, out=None, keepdims=False, *, where=True):
    return _reduce("logical_and", a, axis, np.bool_, out, keepdims, where=where)


def _arg_reduce(name, a, axis, out, keepdims):
    a = _arr(a)
    if a.ndim == 0 and axis is not None:
        # NumPy takes a 0-d array as one element along axis 0 or -1 (its AxisError names
        # dimension 1), and keepdims keeps its zero dimensions.
        normalize_axis_index(axis, 1)
        axis = None
    if axis is None:
        result = _ext.reduce(name, a.reshape(-1), axis=0)
        if keepdims:
            result = result.reshape((1,) * a.ndim)
    else:
        result = _ext.reduce(name, a, axis=axis, keepdims=_bool(keepdims))
    if out is not None:
        _into(out, result)
        return out
    return result


def argmax(a, axis=None, out=None, *, keepdims=False):
    return _arg_reduce("argmax", a, axis, out, keepdims)


def argmin(a, axis=None, out=None, *, keepdims=False):
    return _arg_reduce("argmin", a, axis, out, keepdims)


def _scan(name, a, axis, dtype, out):
    a = _arr(a)
    if dtype is None:
        dtype = _sum_dtype(a.dtype)
    if axis is None:
        a = a.reshape(-1)
        axis = 0
    result = _ext.accumulate(name, a, axis=axis, dtype=_dtype(dtype), out=out)
    return result if out is None else out


def cumsum(a, axis=None, dtype=None, out=None):
    return _scan("add", a, axis, dtype, out)


def cumprod(a, axis=None, dtype=None, out=None):
    return _scan("multiply", a, axis, dtype, out)


def _count(a, axis):
    """How many elements a reduction over ``axis`` combines."""
    if axis is None:
        return a.size
    axes = normalize_axis_tuple(axis, a.ndim)
    n = 1
    for ax in axes:
        n *= a.shape[ax]
    return n


def _mean_dtypes(a, dtype):
    """(accumulator dtype, result dtype) of np.mean/np.var, like numpy/_core/_methods.py."""
    kind = a.dtype.kind
    if dtype is not None:
        dtype = np.dtype(dtype)
        return dtype, dtype
    if kind in "biu":
        return np.dtype(np.float64), np.dtype(np.float64)
    if a.dtype == np.float16:
        return np.dtype(np.float32), np.dtype(np.float16)
    return a.dtype, a.dtype


@_native_or_fallback
def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    a = _arr(a)
    acc, res = _mean_dtypes(a, dtype)
    total = _reduce("add", a, axis, acc, None, keepdims, where=where)
    n = _count(a, axis)
    if n == 0:
        import warnings

        warnings.warn("Mean of empty slice.", RuntimeWarning, stacklevel=2)
    if out is not None:
        return _divided_into(out, total, np.intp(n))
    # An integer dtype= (NumPy sums in it, divides in float64, then truncates).
    exact = total.dtype.kind not in "biu"
    result = _ext.ufunc("divide", total, n, dtype=total.dtype if exact else None)
    if result.dtype != res:
        result = result.astype(res)
    return result


def _divided_into(out, total, count):
    """``out`` holding ``total / count`` as NumPy's mean and var leave it: the sum
    reduced into ``out`` (cast 'unsafe', as a reduction writes its output), then divided
    there ('unsafe' too). So an integer or bool ``out`` holds the quotient of the
    truncated sum: ``np.var([1.0, 2.0, 4.0, 7.5], out=int_0d)`` is 24 // 4, 6."""
    _into(out, total, casting="unsafe")
    _into(out, _ext.ufunc("divide", out, count), casting="unsafe")
    return out


def _abs2(x):
    """``|x|**2`` as NumPy's var computes it: ``x*x``, or ``(x*conj(x)).real``."""
    if x.dtype.kind == "c":
        return _ext.ufunc("multiply", x, _ext.ufunc("conjugate", x)).real
    return _ext.ufunc("multiply", x, x)


def _mask_of(where, a):
    """``where`` broadcast to ``a``'s shape, or None for True. Any other dtype than bool
    goes to NumPy, whose reduction refuses it with its own error."""
    if where is True:
        return None
    mask = _arr(where)
    if mask.dtype != np.bool_:
        raise _Unsupported
    return broadcast_to(mask, a.shape)


def _masked_sum(x, mask, axis, dtype, keepdims):
    """``np.add.reduce(x, axis, dtype, keepdims=keepdims, where=mask)``: masked elements
    count as the identity, 0."""
    if mask is not None:
        x = _ext.where(mask, x, x.dtype.type(0))
    return _reduce("add", x, axis, dtype, None, keepdims)


def _var_in(a, axis, dtype, ddof, keepdims, n):
    """The variance with a ``dtype=`` that is not a float one, step by step as NumPy's
    ``_var`` takes it: the mean summed in ``dtype`` and divided back into it (truncated
    for integers), the deviations squared in their own dtype (a complex one's as
    ``|x|**2`` unless ``a`` is real), their sum in ``dtype`` divided back into it.
    ``n`` is the count of elements reduced."""
    n = np.intp(n)
    arrmean = _reduce("add", a, axis, dtype, None, True)
    arrmean = _ext.ufunc("divide", arrmean, n).astype(dtype)
    x = _ext.ufunc("subtract", a, arrmean)  # bool - bool: NumPy's TypeError
    x = _abs2(x) if a.dtype.kind not in "iuf" else _ext.ufunc("multiply", x, x)
    total = _reduce("add", x, axis, dtype, None, keepdims)
    rcount = np.maximum(n - ddof, 0)
    return _ext.ufunc("divide", total, rcount).astype(dtype)


def _root(v, out=None):
    """The square root of a variance, as NumPy's ``std`` takes it: into the variance's
    own array (under 'same_kind': an integer or bool ``dtype=`` or ``out=`` is its
    casting error), or of a 0-d one cast back to its dtype. With ``out=``, ``v`` is
    ``out`` and the root goes there."""
    if out is not None:
        _ext.ufunc("sqrt", out, out=out)
        return out
    result = _ext.ufunc("sqrt", v)
    if result.dtype == v.dtype:
        return result
    if v.ndim:
        return _ext.ufunc("sqrt", v, out=v)
    return result.astype(v.dtype)


@_native_or_fallback
def var(
    a,
    axis=None,
    dtype=None,
    out=None,
    ddof=0,
    keepdims=False,
    *,
    where=True,
    mean=_NoValue,
    correction=_NoValue,
):
    # As numpy/_core/_methods.py's _var: the mean (given with keepdims' shape, or the
    # masked sum over the count), the masked sum of |a - mean|**2, over count - ddof.
    if correction is not _NoValue:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        ddof = correction
    a = _arr(a)
    keepdims = _bool(keepdims)
    mask = _mask_of(where, a)
    acc, res = _mean_dtypes(a, dtype)
    if mask is None:
        n = _count(a, axis)
        too_few = ddof >= n
    else:
        n = _reduce("add", mask, axis, np.intp, None, True)
        too_few = builtins.bool(
            _ext.reduce("logical_or", _ext.ufunc("less_equal", n, ddof), axis=None)
        )
    if too_few:
        import warnings

        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=3)
    if dtype is not None and acc.kind != "f":
        if mask is not None or mean is not _NoValue or out is not None:
            raise _Unsupported
        return _var_in(a, axis, acc, ddof, keepdims, n)
    if mean is _NoValue:
        arrmean = _masked_sum(a, mask, axis, acc, True)
        arrmean = _ext.ufunc("divide", arrmean, n, dtype=arrmean.dtype)
        x = _abs2(_ext.ufunc("subtract", a, arrmean))
    else:
        # NumPy sums in x's own dtype here (float64 for integer and bool inputs, or
        # dtype=); float16 accumulates in float32, as mean's does.
        x = _abs2(_ext.ufunc("subtract", a, mean))
        if dtype is None and a.dtype.kind not in "biu":
            res = x.dtype
            acc = np.dtype(np.float32) if res == np.float16 else res
    total = _masked_sum(x, mask, axis, acc if acc.kind != "c" else x.dtype, keepdims)
    if mask is None:
        rcount = builtins.max(n - ddof, 0)
    else:
        rcount = _ext.ufunc("maximum", _ext.ufunc("subtract", n, ddof), 0)
        rcount = rcount.reshape(total.shape)
    if out is not None:
        if dtype is None and res == np.float16:
            total = total.astype(res)  # NumPy sums float16 deviations in float16
        # NumPy's count: an intp array, or scalar (float64 for a float ddof).
        count = np.maximum(np.intp(n) - ddof, 0) if mask is None else rcount
        return _divided_into(out, total, count)
    result = _ext.ufunc("divide", total, rcount, dtype=total.dtype)
    if res.kind == "c":
        res = np.finfo(res).dtype  # the variance of complex numbers is real
    if result.dtype != res:
        result = result.astype(res)
    return result


@_native_or_fallback
def std(
    a,
    axis=None,
    dtype=None,
    out=None,
    ddof=0,
    keepdims=False,
    *,
    where=True,
    mean=_NoValue,
    correction=_NoValue,
):
    v = var.__wrapped__(
        a,
        axis=axis,
        dtype=dtype,
        out=out,  # as NumPy's: the root is then taken in out's dtype
        ddof=ddof,
        keepdims=keepdims,
        where=where,
        mean=mean,
        correction=correction,
    )
    return _root(v, out)


def count_nonzero(a, axis=None, *, keepdims=False):
    """The count as an array, 0-d without an axis, like every other reduction (NumPy
    gives an integer scalar there): it stays lazy until read, and works as an index,
    a ``range`` bound or in a comparison as the scalar does."""
    a = _arr(a)
    mask = a if a.dtype == np.bool_ else _ext.ufunc("not_equal", a, 0)
    return _ext.reduce(
        "add", mask, axis=axis, dtype=np.dtype(np.intp), keepdims=_bool(keepdims)
    )
