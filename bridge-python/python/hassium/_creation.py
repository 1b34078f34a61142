"""Array creation: ``asarray``, ``zeros``, ``arange``, ``linspace``, ``eye``, ...

Part of ``_native`` (see its docstring for the rules every part keeps)."""

import builtins
import operator

import numpy as np

from . import _hassium as _ext
from ._common import (
    _arr,
    _dtype,
    _dtype_of,
    _fallback_np,
    _result_type,
    _shape_of,
    _shape_tuple,
    ndarray,
)
from ._shapes import broadcast_arrays

#: NumPy's error for ``copy=False`` where a copy is needed.
_COPY_NEEDED = (
    "Unable to avoid copy while creating an array as requested.\n"
    "If using `np.array(obj, copy=False)` replace it with `np.asarray(obj)` to allow a "
    "copy when needed (no behavior change in NumPy 1.x).\n"
    "For more details, see https://numpy.org/devdocs/numpy_2_0_migration_guide.html"
    "#adapting-to-changes-in-the-copy-keyword."
)


def _copy_flag(a, copy):
    """``copy=`` as NumPy reads it (None: copy if needed; otherwise its truth), with
    NumPy's ValueError for ``copy=False`` where a copy cannot be avoided: of anything but
    a Hassium array. Hassium copies host data (a NumPy array too) into memory of its own
    runtime, which cannot adopt NumPy's: instructions recorded on a view of it could run
    after the program wrote it through NumPy, and see other values. (Hassium arrays are
    checked natively: a cast copies.)"""
    if copy is None:
        return None
    if isinstance(copy, str):
        raise ValueError(  # noqa: TRY004 -- NumPy's error
            "strings are not allowed for 'copy' keyword. Use True/False/None instead."
        )
    copy = builtins.bool(copy)
    if not copy and not isinstance(a, ndarray):
        raise ValueError(_COPY_NEEDED)
    return copy


def asarray(a, dtype=None, order=None, *, device=None, copy=None, like=None):
    if order not in (None, "C", "K", "A") or like is not None:
        return _fallback_np(
            "asarray",
            (a,),
            {"dtype": dtype, "order": order, "copy": copy, "like": like},
        )
    copy = _copy_flag(a, copy)
    if type(a) is ndarray and dtype is None and not copy:
        return a
    return _ext.asarray(a, dtype=_dtype(dtype), copy=copy)


def asanyarray(a, dtype=None, order=None, *, device=None, copy=None, like=None):
    return asarray(a, dtype=dtype, order=order, copy=copy)


def array(object, dtype=None, *, copy=True, order="K", subok=False, ndmin=0, like=None):
    if order not in (None, "C", "K", "A") or like is not None:
        return _fallback_np(
            "array",
            (object,),
            {"dtype": dtype, "copy": copy, "order": order, "ndmin": ndmin},
        )
    copy = _copy_flag(object, copy)
    result = _ext.asarray(object, dtype=_dtype(dtype), copy=True if copy else copy)
    if result.ndim < ndmin:
        result = result.reshape((1,) * (ndmin - result.ndim) + result.shape)
    return result


def _creation_order(order):
    """``'C'`` or ``'F'`` from a creation function's ``order`` as NumPy reads it (any case,
    bytes too, None for C), with NumPy's errors for the rest."""
    if order is None:
        return "C"
    if isinstance(order, bytes):
        order = order.decode("latin-1")
    if not isinstance(order, str):
        raise TypeError(f"order must be str, not {type(order).__name__}")
    upper = order.upper()
    if upper not in ("C", "F", "A", "K"):
        raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")
    if upper not in ("C", "F"):
        raise ValueError("only 'C' or 'F' order is permitted")
    return upper


def _laid_out(make, shape, order):
    """``make(shape)`` in C order, or for ``order='F'`` the transpose of the array of the
    reversed shape: the same values with Fortran strides, as NumPy lays it out."""
    if _creation_order(order) == "F" and len(shape) > 1:
        return make(shape[::-1]).T
    return make(shape)


def empty(shape, dtype=float, order="C", *, device=None, like=None):
    dtype = np.dtype(dtype)
    return _laid_out(lambda s: _ext.empty(s, dtype), _shape_tuple(shape), order)


def full(shape, fill_value, dtype=None, order="C", *, device=None, like=None):
    shape = _shape_tuple(shape)
    if dtype is None:
        dtype = _dtype_of(fill_value)
    dtype = np.dtype(dtype)
    if dtype == np.bool_ and type(fill_value) is int:
        fill_value = fill_value != 0  # NumPy's bool of any Python int: no range check
    if _shape_of(fill_value) == ():
        return _laid_out(lambda s: _ext.full(s, fill_value, dtype), shape, order)
    result = empty(shape, dtype, order)
    _ext.copyto(result, fill_value, casting="unsafe")  # like np.full
    return result


def zeros(shape, dtype=float, order="C", *, device=None, like=None):
    dtype = np.dtype(dtype)
    return _laid_out(lambda s: _ext.full(s, 0, dtype), _shape_tuple(shape), order)


def ones(shape, dtype=None, order="C", *, device=None, like=None):
    dtype = np.dtype(float if dtype is None else dtype)
    return _laid_out(lambda s: _ext.full(s, 1, dtype), _shape_tuple(shape), order)


def _like_args(a, dtype, order, shape):
    """Shape, dtype and layout order of an array made like ``a``: 'A' keeps the Fortran
    layout of a Fortran-contiguous prototype, 'K' too when the new shape has as many
    dimensions (as NumPy does)."""
    a_shape = _shape_of(a)
    if isinstance(order, str) and order.upper() in ("K", "A"):
        flags = getattr(a, "flags", None)
        fortran = flags is not None and flags.f_contiguous and not flags.c_contiguous
        same_ndim = shape is None or len(_shape_tuple(shape)) == len(a_shape)
        order = "F" if fortran and (order.upper() == "A" or same_ndim) else "C"
    return (
        a_shape if shape is None else _shape_tuple(shape),
        _dtype_of(a) if dtype is None else np.dtype(dtype),
        order,
    )


def empty_like(
    prototype, dtype=None, order="K", subok=True, shape=None, *, device=None
):
    return empty(*_like_args(prototype, dtype, order, shape))


def zeros_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    return zeros(*_like_args(a, dtype, order, shape))


def ones_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    return ones(*_like_args(a, dtype, order, shape))


def full_like(
    a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None
):
    shape, dtype, order = _like_args(a, dtype, order, shape)
    return full(shape, fill_value, dtype, order)


def _arange_bound(x):
    """A bound or step of ``arange`` as NumPy reads it: a 0-d array (what a reduction
    such as ``prod(shape)`` returns here) is its scalar; a bigger array is an error."""
    if not isinstance(x, (ndarray, np.ndarray)):
        return x
    if x.ndim == 0:
        return x[()]
    if x.size == 1:
        raise TypeError("only 0-dimensional arrays can be converted to Python scalars")
    raise ValueError(
        "The truth value of an array with more than one element is ambiguous. "
        "Use a.any() or a.all()"
    )


def arange(start_or_stop, stop=None, step=None, dtype=None, *, device=None, like=None):
    if stop is None:
        start, stop = 0, start_or_stop
    else:
        start = start_or_stop
    if step is None:
        step = 1
    start, stop, step = (_arange_bound(x) for x in (start, stop, step))
    if builtins.any(
        isinstance(x, (complex, np.complexfloating))
        or (type(x) is int and not -(2**63) <= x < 2**64)
        for x in (start, stop, step)
    ):
        # A complex range, or ints NumPy holds as objects: NumPy's own.
        return _fallback_np("arange", (start, stop, step), {"dtype": dtype})
    got = _ext.arange(start, stop, step, _dtype(dtype))
    if got.dtype == np.bool_ and got.shape[0] > 2:
        raise TypeError(
            "arange() is only supported for booleans when the result has at most length 2."
        )
    return got


def linspace(
    start,
    stop,
    num=50,
    endpoint=True,
    retstep=False,
    dtype=None,
    axis=0,
    *,
    device=None,
):
    if _shape_of(start) != () or _shape_of(stop) != ():
        return _fallback_np(
            "linspace",
            (start, stop, num),
            {"endpoint": endpoint, "retstep": retstep, "dtype": dtype, "axis": axis},
        )
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    if axis != 0:
        # The result is 1-D: NumPy's moveaxis(y, 0, axis) changes nothing or raises.
        np.moveaxis(np.empty(0), 0, axis)
    div = (num - 1) if endpoint else num
    # NumPy's algorithm, step for step, so the values agree to the last bit. Python
    # scalars are weak in the result type (NEP 50: a float32 start and an int stop give
    # float32), which is inexact; the difference is taken in it.
    dt = _result_type(start, stop, 1.0)
    start_s, stop_s = np.asarray(start), np.asarray(stop)
    dtype = dt if dtype is None else np.dtype(dtype)
    delta = np.subtract(stop_s, start_s, dtype=dt)
    y = _ext.arange(0, num, 1, dt)
    step = delta / div if div > 0 else np.nan
    if div > 0:
        if np.all(step == 0):
            y = y / div
            y = y * delta[()]
        else:
            y = y * step[()]
    else:
        y = y * delta[()]
    y = y + start_s[()]
    if y.dtype != dt:
        y = y.astype(dt)  # NumPy adds `start` in place: rounded to `dt` before any cast
    if endpoint and num > 1:
        y[-1] = stop_s[()]
    if dtype.kind in "iu":
        y = _ext.ufunc("floor", y)
    if y.dtype != dtype:
        y = y.astype(dtype)
    if retstep:
        return y, step
    return y


def eye(N, M=None, k=0, dtype=float, order="C", *, device=None, like=None):
    N = operator.index(N)
    M = N if M is None else operator.index(M)
    k = operator.index(k)
    if _creation_order(order) == "F":
        return eye(M, N, -k, dtype).T
    result = _ext.full((N, M), 0, np.dtype(dtype))
    length = builtins.min(N, M - k) if k >= 0 else builtins.min(N + k, M)
    if length > 0:
        first = k if k >= 0 else -k * M
        flat = result.reshape(-1)
        flat[first : first + length * (M + 1) : M + 1] = 1
    return result


def identity(n, dtype=None, *, like=None):
    return eye(n, dtype=float if dtype is None else dtype)


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    ndim = len(xi)
    s0 = (1,) * ndim
    output = [_arr(x).reshape(s0[:i] + (-1,) + s0[i + 1 :]) for i, x in enumerate(xi)]
    if indexing == "xy" and ndim > 1:
        output[0] = output[0].reshape((1, -1) + s0[2:])
        output[1] = output[1].reshape((-1, 1) + s0[2:])
    if not sparse:
        output = broadcast_arrays(*output)
    if copy:
        output = [x.copy() for x in output]
    return tuple(output)


def copy(a, order="K", subok=False):
    return _arr(a).copy()
