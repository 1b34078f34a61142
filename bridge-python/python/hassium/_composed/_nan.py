"""NaN-skipping reductions and accumulations, and the elementwise ``nan_to_num`` and
``angle``.
"""

import builtins

import numpy as np

from .. import _hassium as _ext
from .. import _native as _n
from ._arranging import take_along_axis
from ._helpers import _into, _warn
from ._statistics import _finish, _host_q, _moved_last, _quantile, median

ndarray = _ext.ndarray

_NoValue = np._NoValue


# --------------------------------------------------------------------------- NaN-skipping


def _without_nan(a, value):
    """``a`` with NaNs replaced by ``value``, and the NaN mask (None for exact dtypes)."""
    a = _n._arr(a)
    if a.dtype.kind not in "fc":
        return a, None
    mask = _ext.ufunc("isnan", a)
    return _ext.where(mask, value, a), mask


def nansum(
    a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue, where=True
):
    a, _ = _without_nan(a, 0)
    return _n.sum(
        a,
        axis=axis,
        dtype=dtype,
        out=out,
        keepdims=keepdims,
        initial=initial,
        where=where,
    )


def nanprod(
    a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue, where=True
):
    a, _ = _without_nan(a, 1)
    return _n.prod(
        a,
        axis=axis,
        dtype=dtype,
        out=out,
        keepdims=keepdims,
        initial=initial,
        where=where,
    )


def nancumsum(a, axis=None, dtype=None, out=None):
    a, _ = _without_nan(a, 0)
    return _n.cumsum(a, axis=axis, dtype=dtype, out=out)


def nancumprod(a, axis=None, dtype=None, out=None):
    a, _ = _without_nan(a, 1)
    return _n.cumprod(a, axis=axis, dtype=dtype, out=out)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    if (
        dtype is not None
        and np.dtype(dtype).kind not in "fc"
        and _n._arr(a).dtype.kind in "fc"
    ):
        raise TypeError("If a is inexact, then dtype must be inexact")
    if out is not None and out.dtype.kind not in "fc" and _n._arr(a).dtype.kind in "fc":
        raise TypeError("If a is inexact, then out must be inexact")
    arr, mask = _without_nan(a, 0)
    if mask is None:
        return _n.mean(
            arr, axis=axis, dtype=dtype, out=out, keepdims=keepdims, where=where
        )
    if where is not True:
        raise _n._Unsupported
    count = _n.sum(
        _ext.ufunc("logical_not", mask), axis=axis, dtype=np.intp, keepdims=keepdims
    )
    total = _n.sum(arr, axis=axis, dtype=dtype, keepdims=keepdims)
    avg = _ext.ufunc(
        "divide", total, count, dtype=total.dtype if total.dtype.kind in "fc" else None
    )
    if builtins.bool(_n.any(_ext.ufunc("equal", count, 0))):
        _warn("Mean of empty slice")
    return _into(out, avg)


def nanvar(
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
    arr, mask = _without_nan(a, 0)
    if mask is None:
        return _n.var(
            arr,
            axis=axis,
            dtype=dtype,
            out=out,
            ddof=ddof,
            keepdims=keepdims,
            where=where,
            mean=mean,
            correction=correction,
        )
    # NumPy's checks of an inexact `a`, before any of the axis.
    if dtype is not None and np.dtype(dtype).kind not in "fc":
        raise TypeError("If a is inexact, then dtype must be inexact")
    if out is not None and out.dtype.kind not in "fc":
        raise TypeError("If a is inexact, then out must be inexact")
    if where is not True or mean is not _NoValue or correction is not _NoValue:
        raise _n._Unsupported
    u = _ext.ufunc
    count = _n.sum(u("logical_not", mask), axis=axis, dtype=np.intp, keepdims=True)
    total = _n.sum(arr, axis=axis, dtype=dtype, keepdims=True)
    avg = u("divide", total, count, dtype=total.dtype)
    sq = _n._abs2(_ext.where(mask, 0, u("subtract", arr, avg)))
    ss = _n.sum(sq, axis=axis, dtype=dtype, keepdims=keepdims)
    if not keepdims:
        count = count.reshape(ss.shape)
    dof = u("subtract", count, ddof)
    var = u("divide", ss, dof, dtype=ss.dtype)
    bad = u("less_equal", dof, 0)
    if builtins.bool(_n.any(bad)):
        _warn("Degrees of freedom <= 0 for slice.")
        var = _ext.where(bad, np.nan, var)
    return _into(out, var)


def nanstd(
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
    var = nanvar(
        a,
        axis=axis,
        dtype=dtype,
        out=out,  # NumPy's checks of out; the root goes into it after
        ddof=ddof,
        keepdims=keepdims,
        where=where,
        mean=mean,
        correction=correction,
    )
    return _n._root(var, out)


def _nan_extreme(a, axis, out, keepdims, fill, reduce_name):
    a = _n._arr(a)
    if a.dtype.kind == "c":
        raise _n._Unsupported  # NumPy orders complex numbers; the opcodes do not
    if a.dtype.kind != "f":
        return _n._reduce(reduce_name, a, axis, None, out, keepdims)
    nan = _ext.ufunc("isnan", a)
    res = _n._reduce(reduce_name, _ext.where(nan, fill, a), axis, None, None, keepdims)
    all_nan = _n._reduce("logical_and", nan, axis, None, None, keepdims)
    res = _ext.where(all_nan, np.nan, res)
    if builtins.bool(_n.any(all_nan)):
        _warn("All-NaN slice encountered")
    return _into(out, res)


def nanmax(a, axis=None, out=None, keepdims=False, initial=_NoValue, where=True):
    if initial is not _NoValue or where is not True:
        raise _n._Unsupported
    return _nan_extreme(a, axis, out, keepdims, -np.inf, "maximum")


def nanmin(a, axis=None, out=None, keepdims=False, initial=_NoValue, where=True):
    if initial is not _NoValue or where is not True:
        raise _n._Unsupported
    return _nan_extreme(a, axis, out, keepdims, np.inf, "minimum")


def _nan_arg(a, axis, out, keepdims, fill, name):
    a = _n._arr(a)
    if a.dtype.kind not in "fc":
        return getattr(_n, name)(a, axis=axis, out=out, keepdims=keepdims)
    if a.dtype.kind == "c":
        raise _n._Unsupported
    nan = _ext.ufunc("isnan", a)
    all_nan = _n._reduce("logical_and", nan, axis, None, None, False)
    res = getattr(_n, name)(
        _ext.where(nan, fill, a), axis=axis, out=out, keepdims=keepdims
    )
    if builtins.bool(_n.any(all_nan)):
        raise ValueError("All-NaN slice encountered")
    return res


def nanargmax(a, axis=None, out=None, *, keepdims=False):
    return _nan_arg(a, axis, out, keepdims, -np.inf, "argmax")


def nanargmin(a, axis=None, out=None, *, keepdims=False):
    return _nan_arg(a, axis, out, keepdims, np.inf, "argmin")


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    given = x
    if not copy and isinstance(x, np.ndarray):
        raise _n._Unsupported  # NumPy's nan_to_num writes into it in place
    # NumPy takes x as `np.array(x, copy=copy)`: copy=False of a scalar or a list is its
    # ValueError (a copy would be needed).
    x = _n._arr(x) if copy else _n.array(x, copy=False)
    if x.dtype.kind == "c":
        raise _n._Unsupported  # real and imaginary parts separately: NumPy's
    if x.dtype.kind != "f":
        res = x.copy() if copy else x
        return res[()] if res.ndim == 0 else res
    info = np.finfo(x.dtype)
    hi = info.max if posinf is None else posinf
    lo = info.min if neginf is None else neginf
    u = _ext.ufunc
    res = _ext.where(u("isnan", x), nan, x)
    res = _ext.where(u("equal", x, np.inf), hi, res)
    res = _ext.where(u("equal", x, -np.inf), lo, res)
    if res.dtype != x.dtype:
        res = res.astype(x.dtype)
    if not copy and isinstance(given, ndarray):
        _ext.copyto(given, res, casting="unsafe")
        res = given
    return res[()] if res.ndim == 0 else res


def angle(z, deg=False):
    z = _n._arr(z)
    if z.dtype.kind == "c":
        a = _ext.ufunc("arctan2", z.imag, z.real)
    else:
        a = _ext.ufunc("arctan2", 0, z)
    if deg:
        a = _ext.ufunc("multiply", a, 180 / np.pi)
    return a


# --------------------------------------------------------------------------- order statistics


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=_NoValue):
    """The median of the non-NaN values (NaNs sort last): the middle one, or the mean of
    the middle two as NumPy's ``median`` of the slice takes it."""
    a = _n._arr(a)
    keep = False if keepdims is _NoValue else builtins.bool(keepdims)
    if a.dtype.kind not in "biuf":
        raise _n._Unsupported  # complex: NumPy's masked median
    if a.size == 0:
        return nanmean(a, axis, out=out, keepdims=keep)
    if a.dtype.kind != "f":
        return median(a, axis=axis, out=out, keepdims=keep)
    u = _ext.ufunc
    moved, kept, kept_dims = _moved_last(a, axis)
    s = _ext.sort(moved, moved.ndim - 1, False)
    count = _n.sum(
        u("logical_not", u("isnan", s)), axis=-1, dtype=np.int64, keepdims=True
    )
    width = s.shape[-1]
    lo_i = u(
        "minimum",
        u("maximum", u("floor_divide", u("subtract", count, 1), 2), 0),
        width - 1,
    )
    hi_i = u("minimum", u("floor_divide", count, 2), width - 1)
    lo = take_along_axis(s, lo_i, axis=-1)
    hi = take_along_axis(s, hi_i, axis=-1)
    mean2 = _n.mean(_n.concatenate([lo, hi], axis=-1), axis=-1, keepdims=True)
    r = _ext.where(
        u("equal", u("remainder", count, 2), 1), lo.astype(mean2.dtype), mean2
    )
    none = u("equal", count, 0)
    r = _ext.where(none, np.nan, r).astype(mean2.dtype)
    if builtins.bool(_n.any(none)):
        _warn("All-NaN slice encountered")
    r = r.reshape(kept_dims if keep else kept)
    return _finish(r, out)


def nanquantile(
    a,
    q,
    axis=None,
    out=None,
    overwrite_input=False,
    method="linear",
    keepdims=_NoValue,
    *,
    weights=None,
    interpolation=None,
):
    if interpolation is not None:
        raise _n._Unsupported  # NumPy's deprecated spelling of method=
    return _nan_quantile(a, q, axis, out, method, keepdims, weights, False)


def nanpercentile(
    a,
    q,
    axis=None,
    out=None,
    overwrite_input=False,
    method="linear",
    keepdims=_NoValue,
    *,
    weights=None,
    interpolation=None,
):
    if interpolation is not None:
        raise _n._Unsupported
    return _nan_quantile(a, q, axis, out, method, keepdims, weights, True)


def _nan_quantile(a, q, axis, out, method, keepdims, weights, percent):
    a = _n._arr(a)
    if weights is None and a.dtype.kind in "biuf" and a.size == 0:
        _host_q(q, percent)  # NumPy checks q first
        keep = False if keepdims is _NoValue else builtins.bool(keepdims)
        return nanmean(a, axis, out=out, keepdims=keep)  # NumPy's answer, q or not
    if (
        axis is not None
        and not isinstance(axis, int)
        and len(tuple(axis)) > 1
        and np.ndim(q) == 2
    ):
        raise _n._Unsupported  # NumPy moves q's axes from the wrong place there
    return _quantile(a, q, axis, out, method, keepdims, weights, percent, True)
