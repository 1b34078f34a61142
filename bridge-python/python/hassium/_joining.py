"""Joining and rearranging arrays: ``concatenate``, ``stack``, ``hstack``, ``roll``, ...

Part of ``_native`` (see its docstring for the rules every part keeps)."""

import builtins
import operator

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from . import _hassium as _ext
from ._common import _arr, _is_python_scalar, _result_type, _shape_of


def _check_join(arrays, where):
    if len(arrays) == 0:
        raise ValueError(f"need at least one array to {where}")


def concatenate(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    given = list(arrays)
    arrays = [_arr(x) for x in given]
    _check_join(arrays, "concatenate")
    if axis is None:
        arrays = [x.reshape(-1) for x in arrays]
        axis = 0
    # NumPy's TypeError for `axis=()`, before any shape check.
    axis = operator.index(axis)
    first = arrays[0]
    if first.ndim == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    axis = normalize_axis_index(axis, first.ndim)
    for i, x in enumerate(arrays[1:], 1):
        if x.ndim != first.ndim:
            raise ValueError(
                f"all the input arrays must have same number of dimensions, but the "
                f"array at index 0 has {first.ndim} dimension(s) and the array at index "
                f"{i} has {x.ndim} dimension(s)"
            )
        for d in range(first.ndim):
            if d != axis and x.shape[d] != first.shape[d]:
                raise ValueError(
                    f"all the input array dimensions except for the concatenation axis "
                    f"must match exactly, but along dimension {d}, the array at index 0 "
                    f"has size {first.shape[d]} and the array at index {i} has size "
                    f"{x.shape[d]}"
                )
    if dtype is not None and out is not None:
        raise TypeError(
            "concatenate() only takes `out` or `dtype` as an argument, but both were "
            "provided."
        )
    if out is not None:
        dtype = out.dtype  # the inputs are cast to it under `casting`, as in NumPy
    elif dtype is None:
        # A Python number among the arrays is weak (NEP 50), as in NumPy:
        # `concatenate((0, float32(1.5)), axis=None)` is float32.
        dtype = _result_type(*given)
    else:
        dtype = np.dtype(dtype)
    for g, x in zip(given, arrays):
        if _is_python_scalar(g):
            continue  # a weak number is cast to the result as NumPy casts it
        if not np.can_cast(x.dtype, dtype, casting):
            raise TypeError(
                f"Cannot cast array data from {x.dtype!r} to {dtype!r} according to the "
                f"rule {casting!r}"
            )
    shape = list(first.shape)
    shape[axis] = builtins.sum(x.shape[axis] for x in arrays)
    if out is None:
        out = _ext.empty(tuple(shape), dtype)
    elif out.shape != tuple(shape):
        raise ValueError("Output array is the wrong shape")
    prefix = (slice(None),) * axis
    at = 0
    for x in arrays:
        n = x.shape[axis]
        if n:
            _ext.copyto(out[prefix + (slice(at, at + n),)], x, casting="unsafe")
        at += n
    return out


def stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    arrays = [_arr(x) for x in arrays]
    _check_join(arrays, "stack")
    shape = arrays[0].shape
    if builtins.any(x.shape != shape for x in arrays):
        raise ValueError("all input arrays must have the same shape")
    axis = normalize_axis_index(axis, len(shape) + 1)
    new_shape = shape[:axis] + (1,) + shape[axis:]
    return concatenate(
        [x.reshape(new_shape) for x in arrays],
        axis=axis,
        out=out,
        dtype=dtype,
        casting=casting,
    )


def atleast_1d(*arys):
    res = [(_arr(a).reshape(1) if _arr(a).ndim == 0 else _arr(a)) for a in arys]
    return res[0] if len(res) == 1 else tuple(res)


def atleast_2d(*arys):
    res = []
    for a in arys:
        a = _arr(a)
        if a.ndim == 0:
            a = a.reshape(1, 1)
        elif a.ndim == 1:
            a = a.reshape(1, -1) if a.size else a.reshape(1, 0)
        res.append(a)
    return res[0] if len(res) == 1 else tuple(res)


def atleast_3d(*arys):
    res = []
    for a in arys:
        a = _arr(a)
        if a.ndim == 0:
            a = a.reshape(1, 1, 1)
        elif a.ndim == 1:
            a = a.reshape((1,) + a.shape + (1,))
        elif a.ndim == 2:
            a = a.reshape(a.shape + (1,))
        res.append(a)
    return res[0] if len(res) == 1 else tuple(res)


def hstack(tup, *, dtype=None, casting="same_kind"):
    arrs = [atleast_1d(x) for x in tup]
    _check_join(arrs, "concatenate")
    axis = 0 if arrs[0].ndim == 1 else 1
    return concatenate(arrs, axis, dtype=dtype, casting=casting)


def vstack(tup, *, dtype=None, casting="same_kind"):
    arrs = [atleast_2d(x) for x in tup]
    _check_join(arrs, "concatenate")
    return concatenate(arrs, 0, dtype=dtype, casting=casting)


row_stack = vstack


def roll(a, shift, axis=None):
    a = _arr(a)
    if axis is None:
        return roll(a.reshape(-1), shift, 0).reshape(a.shape)
    axes = normalize_axis_tuple(axis, a.ndim, allow_duplicate=True)
    if a.ndim == 0:
        # NumPy unpacks one index pair per dimension and has none to unpack here.
        raise ValueError("not enough values to unpack (expected 2, got 0)")
    shifts = _shape_of(shift)
    broadcast = np.broadcast(np.asarray(shift), np.asarray(axes))
    if broadcast.ndim > 1:
        raise ValueError("'shift' and 'axis' should be scalars or 1D sequences")
    total = {ax: 0 for ax in range(a.ndim)}
    for sh, ax in broadcast:
        total[int(ax)] += int(sh)
    result = a
    for ax, sh in total.items():
        n = result.shape[ax]
        if n == 0 or sh % n == 0:
            continue
        sh %= n
        rolled = _ext.empty(result.shape, result.dtype)
        pre = (slice(None),) * ax
        # Two view copies: the tail moves to the front, the head to the back.
        _ext.copyto(
            rolled[pre + (slice(sh, None),)], result[pre + (slice(None, n - sh),)]
        )
        _ext.copyto(
            rolled[pre + (slice(None, sh),)], result[pre + (slice(n - sh, None),)]
        )
        result = rolled
    if result is a:
        result = a.copy()
    del shifts
    return result
