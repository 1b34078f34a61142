"""Flips and splits (views of the argument), joins, tiling and ``resize``, taking,
putting along an axis and repeating."""

import builtins
import itertools
import math
import operator

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from .. import _hassium as _ext
from .. import _native as _n
from ._helpers import _along, _into

ndarray = _ext.ndarray


# --------------------------------------------------------------------------- flips


def flip(m, axis=None):
    m = _n._arr(m)
    axes = range(m.ndim) if axis is None else normalize_axis_tuple(axis, m.ndim)
    key = [slice(None)] * m.ndim
    for ax in axes:
        key[ax] = slice(None, None, -1)
    return m[tuple(key)]


def fliplr(m):
    m = _n._arr(m)
    if m.ndim < 2:
        raise ValueError("Input must be >= 2-d.")
    return m[:, ::-1]


def flipud(m):
    m = _n._arr(m)
    if m.ndim < 1:
        raise ValueError("Input must be >= 1-d.")
    return m[::-1]


def rot90(m, k=1, axes=(0, 1)):
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    m = _n._arr(m)
    first, second = axes
    if first == second or builtins.abs(first - second) == m.ndim:
        raise ValueError("Axes must be different.")
    if not (-m.ndim <= first < m.ndim and -m.ndim <= second < m.ndim):
        raise ValueError(f"Axes={axes} out of range for array of ndim={m.ndim}.")
    k %= 4  # NumPy takes any number: 1.5 turns like 3
    if k == 0:
        return m[...]
    if k == 2:
        return flip(flip(m, first), second)
    order = list(range(m.ndim))
    order[first], order[second] = order[second], order[first]
    # A quarter turn is a flip and an exchange of the two axes, in one order or the other.
    if k == 1:
        return flip(m, second).transpose(order)
    return flip(m.transpose(order), second)


# --------------------------------------------------------------------------- splits


def array_split(ary, indices_or_sections, axis=0):
    # NumPy's order: the length along the axis (IndexError for an axis out of range),
    # or for what has no shape its len() -- whatever the axis for a list, a TypeError for
    # a Python scalar --, then the sections, then the axis (AxisError).
    total = ary.shape[axis] if hasattr(ary, "shape") else len(ary)
    try:
        len(indices_or_sections)
    except TypeError:
        sections = int(indices_or_sections)
        if sections <= 0:
            raise ValueError("number sections must be larger than 0.") from None
        each, extra = divmod(total, sections)
        bounds = [0]
        for s in range(sections):
            bounds.append(bounds[-1] + each + (1 if s < extra else 0))
    else:
        bounds = [0, *indices_or_sections, total]
    ary = _n._arr(ary)
    axis = normalize_axis_index(axis, ary.ndim)
    return [
        ary[_along(ary.ndim, axis, slice(lo, hi))]
        for lo, hi in itertools.pairwise(bounds)
    ]


def split(ary, indices_or_sections, axis=0):
    try:
        len(indices_or_sections)
    except TypeError:
        # As NumPy: a number of sections reads ary.shape, which a list or a Python
        # scalar lacks (AttributeError).
        if ary.shape[axis] % indices_or_sections:
            raise ValueError(
                "array split does not result in an equal division"
            ) from None
    return array_split(ary, indices_or_sections, axis)


def hsplit(ary, indices_or_sections):
    ary = _n._arr(ary)
    if ary.ndim == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return split(ary, indices_or_sections, 1 if ary.ndim > 1 else 0)


def vsplit(ary, indices_or_sections):
    ary = _n._arr(ary)
    if ary.ndim < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(ary, indices_or_sections, 0)


def dsplit(ary, indices_or_sections):
    ary = _n._arr(ary)
    if ary.ndim < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(ary, indices_or_sections, 2)


# --------------------------------------------------------------------------- joins


def column_stack(tup):
    columns = []
    for v in tup:
        a = _n._arr(v)
        if a.ndim < 2:
            a = a.reshape(-1, 1)
        columns.append(a)
    return _n.concatenate(columns, 1)


def dstack(tup):
    arrs = _n.atleast_3d(*tup)
    if not isinstance(arrs, tuple):
        arrs = (arrs,)
    return _n.concatenate(arrs, 2)


def append(arr, values, axis=None):
    arr = _n._arr(arr)
    values = _n._arr(values)
    if axis is None:
        if arr.ndim != 1:
            arr = arr.reshape(-1)
        values = values.reshape(-1)
        axis = arr.ndim - 1
    return _n.concatenate((arr, values), axis)


def _flat_or_axis(arr, axis):
    """``arr`` and the axis ``delete``/``insert`` work along (flattened when None)."""
    if axis is None:
        return (arr if arr.ndim == 1 else arr.reshape(-1)), 0
    return arr, normalize_axis_index(axis, arr.ndim)


def _along_axis(arr, axis, sl):
    key = [slice(None)] * arr.ndim
    key[axis] = sl
    return arr[tuple(key)]


def delete(arr, obj, axis=None):
    arr = _n._arr(arr)
    arr, axis = _flat_or_axis(arr, axis)
    n = arr.shape[axis]
    if isinstance(obj, ndarray):
        obj = np.asarray(obj)
    # Which positions stay: NumPy's own delete on the positions themselves, so every form
    # of `obj` (index, slice, list, boolean mask) and every error is NumPy's.
    try:
        keep = np.delete(np.arange(n), obj)
    except IndexError as e:
        raise IndexError(str(e).replace("for axis 0 ", f"for axis {axis} ")) from None
    # Runs of consecutive positions are slices: a few become a join of views, which
    # fuses with what reads it; many become one gather.
    breaks = np.flatnonzero(np.diff(keep) != 1) + 1 if keep.size else np.array([], int)
    starts = np.concatenate(([0], breaks)) if keep.size else np.array([], int)
    if keep.size == 0:
        return _along_axis(arr, axis, slice(0, 0)).copy()
    if len(starts) > 8:
        return take(arr, _n.asarray(keep), axis=axis)
    ends = np.concatenate((breaks, [keep.size]))
    pieces = [
        _along_axis(arr, axis, slice(int(keep[a]), int(keep[b - 1]) + 1))
        for a, b in zip(starts, ends)
    ]
    return _n.concatenate(pieces, axis=axis)


def insert(arr, obj, values, axis=None):
    arr = _n._arr(arr)
    arr, axis = _flat_or_axis(arr, axis)
    if isinstance(obj, (bool, np.bool_)) or not isinstance(obj, (int, np.integer)):
        raise _n._Unsupported  # several positions: NumPy's placement rules
    n = arr.shape[axis]
    index = operator.index(obj)
    if index < -n or index > n:
        raise IndexError(f"index {obj} is out of bounds for axis {axis} with size {n}")
    if index < 0:
        index += n
    # NumPy: the values as an array of `arr`'s dtype with at least `arr.ndim` dimensions,
    # their first axis moved to `axis`, broadcast into the inserted block.
    values = _n.asarray(values, dtype=arr.dtype)
    if values.ndim < arr.ndim:
        values = values.reshape((1,) * (arr.ndim - values.ndim) + values.shape)
    values = _n.moveaxis(values, 0, axis)
    shape = list(arr.shape)
    shape[axis] = values.shape[axis]
    # Assigned into the block, as NumPy does, values lose leading length-1 dimensions.
    while values.ndim > arr.ndim and values.shape[0] == 1:
        values = values[0]
    if values.ndim > arr.ndim:
        raise _n._Unsupported  # NumPy's broadcasting error, from its own code
    block = _n.broadcast_to(values, tuple(shape))
    before = _along_axis(arr, axis, slice(None, index))
    after = _along_axis(arr, axis, slice(index, None))
    return _n.concatenate((before, block, after), axis=axis)


def tile(A, reps):
    try:
        reps = tuple(operator.index(r) for r in reps)
    except TypeError:
        reps = (operator.index(reps),)
    A = _n._arr(A)
    if builtins.any(r < 0 for r in reps):
        raise ValueError("negative dimensions are not allowed")
    ndim = builtins.max(len(reps), A.ndim)
    shape = (1,) * (ndim - A.ndim) + A.shape
    reps = (1,) * (ndim - len(reps)) + reps
    # One broadcast copy: A as (1, s0, 1, s1, ...) into (r0, s0, r1, s1, ...).
    spread = tuple(x for s in shape for x in (1, s))
    out = _ext.empty(tuple(x for r, s in zip(reps, shape) for x in (r, s)), A.dtype)
    _ext.copyto(out, A.reshape(spread))
    return out.reshape(tuple(r * s for r, s in zip(reps, shape)))


# --------------------------------------------------------------------------- taking


def _index_array(indices):
    """An integer index array (or a Python int) for ``take``, or ``_Unsupported``."""
    if isinstance(indices, (int, np.integer)) and not isinstance(
        indices, (bool, np.bool_)
    ):
        return int(indices)
    if isinstance(indices, (list, tuple)) and len(indices) == 0:
        return _ext.empty((0,), np.dtype(np.intp))  # NumPy reads a sequence as intp
    idx = _n._arr(indices)
    if idx.dtype.kind not in "iu":
        raise _n._Unsupported  # NumPy's casting errors for float and bool indices
    return idx


def take(a, indices, axis=None, out=None, mode="raise"):
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(
            f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})"
        )
    a = _n._arr(a)
    if axis is None or (a.ndim == 0 and axis in (0, -1)):  # NumPy's 0-d as 1-d
        a, axis = a.reshape(-1), 0
    axis = normalize_axis_index(axis, a.ndim)
    idx = _index_array(indices)
    n = a.shape[axis]
    picked = () if isinstance(idx, int) else idx.shape
    shape = a.shape[:axis] + picked + a.shape[axis + 1 :]
    if n == 0 and math.prod(shape):
        raise IndexError("cannot do a non-empty take from an empty axes.")
    if (
        not math.prod(a.shape[:axis])
        or not math.prod(picked)
        or (mode != "raise" and not math.prod(shape))
    ):
        # NumPy reads each index as it copies, once per element before the axis: with
        # no such element (or no index) it reads none, and any index goes; wrapped or
        # clipped ones never fail, so nothing to take is nothing to check.
        return _into(out, _ext.empty(shape, a.dtype))
    if mode == "wrap":
        idx = idx % n if isinstance(idx, int) else _ext.ufunc("remainder", idx, n)
    elif mode == "clip":
        if isinstance(idx, int):
            idx = builtins.min(builtins.max(idx, 0), n - 1)
        else:
            idx = _n.clip(idx, 0, n - 1)
    res = a[(slice(None),) * axis + (idx,)]
    if isinstance(idx, int) and not isinstance(res, ndarray):
        res = _ext.asarray(res)  # a 0-d result, as NumPy's take returns an array
    return _into(out, res)


def _along_axis_key(arr, idx, axis):
    """The key by which ``take_along_axis`` and ``put_along_axis`` reach ``arr``:
    ``idx`` on ``axis``, every other axis indexed by its own range, shaped to broadcast
    against ``idx``; NumPy's checks of ``idx``, in its order."""
    if idx.dtype.kind not in "iu":
        raise IndexError("`indices` must be an integer array")
    if idx.ndim != arr.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    key = []
    for d in builtins.range(arr.ndim):
        if d == axis:
            key.append(idx)
        else:
            shape = [1] * arr.ndim
            shape[d] = arr.shape[d]
            key.append(
                _ext.arange(0, arr.shape[d], 1, np.dtype(np.intp)).reshape(tuple(shape))
            )
    return tuple(key)


def take_along_axis(arr, indices, axis=-1):
    arr = _n._arr(arr)
    idx = _n._arr(indices)
    if axis is None:
        if idx.ndim != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        return take(arr, idx)
    axis = normalize_axis_index(axis, arr.ndim)
    return arr[_along_axis_key(arr, idx, axis)]


def put_along_axis(arr, indices, values, axis):
    if not isinstance(arr, ndarray) or axis is None:
        # NumPy writes an array that is not ours in place; with axis=None it writes a
        # flattened copy, and only its errors are seen.
        raise _n._Unsupported
    axis = normalize_axis_index(axis, arr.ndim)
    arr[_along_axis_key(arr, _n._arr(indices), axis)] = values


def resize(a, new_shape):
    if isinstance(new_shape, (int, np.integer)):
        new_shape = (new_shape,)
    a = _n._arr(a).reshape(-1)
    new_size = 1
    for length in new_shape:  # NumPy's order: the size, each length checked as it goes
        new_size *= length
        if length < 0:
            raise ValueError("all elements of `new_shape` must be non-negative")
    new_shape = tuple(operator.index(d) for d in new_shape)
    n = a.shape[0]
    if n == 0 or new_size == 0:
        return _ext.full(new_shape, 0, a.dtype)
    # The elements over and over: one broadcast copy of as many whole rounds as reach
    # the new size, cut to it (NumPy joins that many copies).
    rounds = -(-new_size // n)
    out = _ext.empty((rounds, n), a.dtype)
    _ext.copyto(out, a.reshape(1, n))
    return out.reshape(-1)[:new_size].reshape(new_shape)


def repeat(a, repeats, axis=None):
    """One count for every element: a broadcast copy. Counts per element need their
    total before anything is recorded, and go through NumPy."""
    if _n.ndim(repeats) != 0:
        raise _n._Unsupported
    try:
        r = operator.index(repeats)
    except TypeError:
        raise _n._Unsupported from None  # NumPy's casting rules for other numbers
    if r < 0:
        raise ValueError("repeats may not contain negative values.")
    a = _n._arr(a)
    if axis is None or (a.ndim == 0 and axis in (0, -1)):  # NumPy's 0-d as 1-d
        a, axis = a.reshape(-1), 0
    axis = normalize_axis_index(axis, a.ndim)
    spread = a.shape[: axis + 1] + (1,) + a.shape[axis + 1 :]
    wide = a.shape[: axis + 1] + (r,) + a.shape[axis + 1 :]
    out = _ext.empty(wide, a.dtype)
    _ext.copyto(out, a.reshape(spread))
    shape = list(a.shape)
    shape[axis] *= r
    return out.reshape(tuple(shape))
