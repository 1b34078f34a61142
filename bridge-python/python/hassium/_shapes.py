"""Shapes and views: ``reshape``, ``transpose``, ``moveaxis``, ``broadcast_to``, ...

Part of ``_native`` (see its docstring for the rules every part keeps)."""

import builtins
import math

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from . import _hassium as _ext
from ._common import _arr, _fallback_np, _shape_of, _shape_tuple


def reshape(a, /, shape=None, order="C", *, newshape=None, copy=None):
    if shape is None:
        shape = newshape
    if copy is not None:
        return _fallback_np("reshape", (a, shape), {"order": order, "copy": copy})
    return _arr(a).reshape(shape, order=order)


def ravel(a, order="C"):
    return _arr(a).ravel(order)


def transpose(a, axes=None):
    a = _arr(a)
    return a.transpose() if axes is None else a.transpose(axes)


def permute_dims(a, axes=None):
    return transpose(a, axes)


def moveaxis(a, source, destination):
    a = _arr(a)
    source = normalize_axis_tuple(source, a.ndim, "source")
    destination = normalize_axis_tuple(destination, a.ndim, "destination")
    if len(source) != len(destination):
        raise ValueError(
            "`source` and `destination` arguments must have the same number of elements"
        )
    order = [n for n in range(a.ndim) if n not in source]
    for dest, src in sorted(zip(destination, source)):
        order.insert(dest, src)
    return a.transpose(order)


def swapaxes(a, axis1, axis2):
    return _arr(a).swapaxes(axis1, axis2)


def expand_dims(a, axis):
    a = _arr(a)
    if type(axis) not in (tuple, list):
        axis = (axis,)
    out_ndim = len(axis) + a.ndim
    axis = normalize_axis_tuple(axis, out_ndim)
    shape_it = iter(a.shape)
    shape = tuple(1 if ax in axis else next(shape_it) for ax in range(out_ndim))
    return a.reshape(shape)


def squeeze(a, axis=None):
    a = _arr(a)
    return a.squeeze() if axis is None else a.squeeze(axis)


def _check_broadcast_to(array, shape):
    if builtins.any(s < 0 for s in shape):
        raise ValueError("all elements of broadcast shape must be non-negative")
    if np.broadcast_shapes(array.shape, shape) != shape:  # NumPy's ValueError if apart
        raise ValueError(
            f"operands could not be broadcast together with remapped shapes "
            f"[original->remapped]: {array.shape} and requested shape {shape}"
        )


def broadcast_to(array, shape, subok=False):
    """A read-only view, as NumPy's: writing into it raises NumPy's ValueError."""
    array = _arr(array)
    shape = _shape_tuple(shape)
    _check_broadcast_to(array, shape)
    return _ext.broadcast_to(array, shape)


def broadcast_shapes(*args):
    return np.broadcast_shapes(*args)


def broadcast_arrays(*args, subok=False):
    arrays = [_arr(x) for x in args]
    shape = np.broadcast_shapes(*(x.shape for x in arrays))
    # Copies where NumPy gives views: NumPy's views are writeable (writing warns, and
    # lands in every aliased element), which a read-only view would refuse.
    return tuple(x if x.shape == shape else _broadcast_copy(x, shape) for x in arrays)


def _broadcast_copy(x, shape):
    result = _ext.empty(shape, x.dtype)
    _ext.copyto(result, x)
    return result


def nonzero(a):
    return _ext.nonzero(_arr(a))


def flatnonzero(a):
    return _ext.nonzero(_arr(a).reshape(-1))[0]


def shape(a):
    return _shape_of(a)


def ndim(a):
    return len(_shape_of(a))


def size(a, axis=None):
    """The number of elements, or along an axis or a tuple of axes (NumPy 2.4)."""
    s = _shape_of(a)
    if axis is None:
        return math.prod(s)
    return math.prod(s[ax] for ax in normalize_axis_tuple(axis, len(s)))
