"""Flips and splits (views of the argument), joins (``block`` among them), tiling and
``resize``, deleting and inserting, taking, putting along an axis and repeating.

What decides a result's shape is read on the host: positions to insert at are placed
there (they are few); counts to repeat by are summed there, or read in one flush when
they are ours, while the gather's indices are made from them on the device. Gathers
along an axis of an array of several dimensions are flat gathers, whose indices are
recorded, so an index array of ours costs no flush."""

import builtins
import itertools
import math
import operator

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from .. import _hassium as _ext
from .. import _native as _n
from ._helpers import _along, _into, _read_together

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


def _block_place(index):
    """NumPy's name for a place in the nested lists: ``arrays[0][1]``."""
    return "arrays" + "".join(f"[{i}]" for i in index if i is not None)


def _block_depths(arrays, index):
    """NumPy's walk of ``block``'s lists: (the place of the first bottom, the most
    dimensions of a block, the number of elements), refusing tuples and lists of
    uneven depth in its order and words. An empty list's bottom ends in ``None``."""
    if isinstance(arrays, tuple):
        raise TypeError(
            f"{_block_place(index)} is a tuple. Only lists can be used to arrange "
            "blocks, and np.block does not allow implicit conversion from tuple to "
            "ndarray."
        )
    if isinstance(arrays, list):
        if not arrays:
            return [*index, None], 0, 0
        walks = (_block_depths(a, [*index, i]) for i, a in enumerate(arrays))
        first, most, size = next(walks)
        for place, ndim, n in walks:
            size += n
            most = builtins.max(most, ndim)
            if len(place) != len(first):
                raise ValueError(
                    "List depths are mismatched. First element was at depth "
                    f"{len(first)}, but there is an element at depth {len(place)} "
                    f"({_block_place(place)})"
                )
            if place[-1] is None:
                first = place
        return first, most, size
    if isinstance(arrays, ndarray):
        return index, arrays.ndim, arrays.size
    return index, np.ndim(arrays), np.size(arrays)


def _block_join(arrays, depth, ndim):
    """The lists ``depth`` deep joined along the axes from the last back, each block
    with at least ``ndim`` dimensions (NumPy's ``_block``)."""
    if depth == 0:
        a = _n._arr(arrays)
        return a.reshape((1,) * (ndim - a.ndim) + a.shape) if a.ndim < ndim else a
    parts = [_block_join(a, depth - 1, ndim) for a in arrays]
    return _n.concatenate(parts, axis=-depth)


def block(arrays):
    """Concatenations, innermost lists along the last axis, as NumPy's ``block`` joins
    small inputs; large ones it copies into slices of the result, with its own messages
    for shapes that do not fit, which come from NumPy."""
    bottom, most, size = _block_depths(arrays, [])
    depth = len(bottom)
    if bottom and bottom[-1] is None:
        raise ValueError(f"List at {_block_place(bottom)} cannot be empty")
    try:
        result = _block_join(arrays, depth, builtins.max(most, depth))
    except ValueError:
        if depth * size > 2 * 512 * 512:
            raise _n._Unsupported from None
        raise
    return result.copy() if depth == 0 else result


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
    """NumPy's placement: one position (an integer, or a sequence of one) is a join of
    the two halves around the values; several are sorted stably and shifted by the
    values placed before them, on the host (they are few), and the result is one gather
    from the argument joined with the values."""
    arr = _n._arr(arr)
    arr, axis = _flat_or_axis(arr, axis)
    n = arr.shape[axis]
    if isinstance(obj, slice):
        positions = np.arange(*obj.indices(n), dtype=np.intp)
    else:
        positions = np.array(np.asarray(obj) if isinstance(obj, ndarray) else obj)
        if positions.dtype == bool:
            if obj.ndim != 1:
                raise ValueError(
                    "boolean array argument obj to insert must be one dimensional"
                )
            positions = np.flatnonzero(positions)
        elif positions.ndim > 1:
            raise ValueError(
                "index array argument obj to insert must be one dimensional or scalar"
            )
    if positions.size == 1:
        index = positions.item()
        if not isinstance(index, int):
            raise _n._Unsupported  # NumPy's error for a slice of that
        if index < -n or index > n:
            raise IndexError(
                f"index {obj} is out of bounds for axis {axis} with size {n}"
            )
        if index < 0:
            index += n
        values = _values_for(arr, values)
        if positions.ndim == 0:
            # As NumPy: values placed at an integer as if at a slice, their first axis
            # the one inserted along.
            values = _n.moveaxis(values, 0, axis)
        block = _inserted_block(arr, values, axis, values.shape[axis])
        before = _along_axis(arr, axis, slice(None, index))
        after = _along_axis(arr, axis, slice(index, None))
        return _n.concatenate((before, block, after), axis=axis)
    if positions.size == 0 and not isinstance(obj, (np.ndarray, ndarray)):
        positions = positions.astype(np.intp)
    positions[positions < 0] += n
    added = len(positions)
    order = positions.argsort(kind="mergesort")  # stable: equal positions keep order
    positions[order] += np.arange(added)
    # Where each place of the result reads from in `arr` joined with the values: the
    # values' rows at their places (NumPy's errors for a bad position, on the host),
    # the old elements in order everywhere else.
    source = np.empty(n + added, np.intp)
    old = np.ones(n + added, bool)
    old[positions] = False
    if np.count_nonzero(old) != n:
        # Positions before -n wrap twice in NumPy and may meet: its broadcasting error.
        raise _n._Unsupported
    source[positions] = n + np.arange(added)
    source[old] = np.arange(n)
    block = _inserted_block(
        arr, _values_for(arr, values), axis, added, _n._shape_of(values)
    )
    joined = _n.concatenate((arr, block), axis=axis)
    return joined[(slice(None),) * axis + (source,)]  # a host index: no flush


def _values_for(arr, values):
    """NumPy's reading of the values to insert: an array of ``arr``'s dtype with at
    least ``arr.ndim`` dimensions."""
    values = _n.asarray(values, dtype=arr.dtype)
    if values.ndim < arr.ndim:
        values = values.reshape((1,) * (arr.ndim - values.ndim) + values.shape)
    return values


def _inserted_block(arr, values, axis, added, given=None):
    """``values`` broadcast to ``arr``'s shape with ``added`` along ``axis``, as NumPy's
    assignment of them into the inserted places broadcasts them: into a slice, or at an
    index array (``given``: the shape of the values as given, which NumPy assigns
    unconverted there), each with its own words when they do not fit."""
    shape = list(arr.shape)
    shape[axis] = added
    shape = tuple(shape)
    # Assigned, values lose leading length-1 dimensions.
    while values.ndim > arr.ndim and values.shape[0] == 1:
        values = values[0]
    try:
        fits = np.broadcast_shapes(values.shape, shape) == shape
    except ValueError:
        fits = False
    if not fits:
        if given is not None:
            raise ValueError(
                f"shape mismatch: value array of shape {_shape_text(given)} could not "
                f"be broadcast to indexing result of shape {_shape_text(shape)}"
            )
        raise ValueError(
            f"could not broadcast input array from shape {_shape_text(values.shape)} "
            f"into shape {_shape_text(shape)}"
        )
    return _n.broadcast_to(values, shape)


def _shape_text(shape):
    """A shape as NumPy's messages write it: ``(2,3)``, ``(3,)``."""
    return "(" + ",".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


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


def _our_counts(repeats):
    """Counts that are ours as NumPy reads them: ``intp``, cast safely, at most 1-d."""
    if not np.can_cast(repeats.dtype, np.intp, "safe"):
        what = "scalar" if repeats.ndim == 0 else "array data"
        raise TypeError(
            f"Cannot cast {what} from {repeats.dtype!r} to {np.dtype(np.intp)!r} "
            "according to the rule 'safe'"
        )
    if repeats.ndim > 1:
        raise ValueError("object too deep for desired array")
    return repeats.reshape(-1).astype(np.intp)


def repeat(a, repeats, axis=None):
    """One count for every element: a broadcast copy. One count per element: a gather,
    its indices made from the counts on the device (a one scattered at each element's
    first place, summed along the result). The total sizes the result: counts that are
    ours are read for it (a flush), counts on the host are summed there."""
    ours = isinstance(repeats, ndarray)
    if ours:
        repeats = _our_counts(repeats)
    a = _n._arr(a)
    if axis is None or (a.ndim == 0 and axis in (0, -1)):  # NumPy's 0-d as 1-d
        a, axis = a.reshape(-1), 0
    axis = normalize_axis_index(axis, a.ndim)
    n = a.shape[axis]
    if ours:
        counts = repeats
        if counts.shape[0] == 1:
            return _repeat_each(a, int(counts[0]), axis)
        if counts.shape[0] != n:
            raise ValueError(
                "operands could not be broadcast together with shape "
                f"({n},) ({counts.shape[0]},)"
            )
        total, least = 0, 0
        if n:
            total, least = map(int, _read_together(_n.sum(counts), _n.min(counts)))
        if least < 0:
            raise ValueError("repeats may not contain negative values.")
    else:
        # NumPy's own reading of the counts, on a stand-in without elements: its
        # conversions (floats truncated from a list, refused from an array), its checks
        # and its messages, and the total.
        total = np.repeat(np.empty((n, 0), bool), repeats, axis=0).shape[0]
        counts = np.array(repeats, dtype=np.intp, ndmin=1)
        if counts.shape[0] == 1:
            return _repeat_each(a, builtins.max(int(counts[0]), 0), axis)
    shape = a.shape[:axis] + (total,) + a.shape[axis + 1 :]
    if total == 0:
        return _ext.empty(shape, a.dtype)
    counts = _n._arr(counts)
    # Element i fills [starts[i], starts[i] + counts[i]): a one at each start (several
    # where counts are 0), summed along the result, counts the elements begun so far.
    ends = _n.cumsum(counts)
    starts = _ext.ufunc("subtract", ends, counts)
    intp = np.dtype(np.intp)
    begun = _ext.full((total + 1,), 0, intp)
    _ext.put_flat(begun, starts, _ext.full((n,), 1, intp), accumulate=True)
    source = _ext.ufunc("subtract", _n.cumsum(begun[:total]), 1)
    return _gather_along(a, source, axis)


def _gather_along(a, index, axis):
    """``a`` indexed by the lazy 1-d ``index`` (in range) along ``axis``, without the
    flush an index array of ours costs in more than one dimension: one flat gather, its
    flat indices made from the index and the strides of ``a`` in C order."""
    if a.ndim == 1:
        return a[index]
    shape = a.shape[:axis] + index.shape + a.shape[axis + 1 :]
    if not math.prod(shape):
        return _ext.empty(shape, a.dtype)
    intp = np.dtype(np.intp)
    inner = math.prod(a.shape[axis + 1 :])
    outer = math.prod(a.shape[:axis])
    u = _ext.ufunc
    before = u("multiply", _ext.arange(0, outer, 1, intp), a.shape[axis] * inner)
    flat = u(
        "add",
        u(
            "add",
            before.reshape(-1, 1, 1),
            u("multiply", index, inner).reshape(1, -1, 1),
        ),
        _ext.arange(0, inner, 1, intp).reshape(1, 1, -1),
    )
    return _ext.take_flat(a, flat).reshape(shape)


def _repeat_each(a, r, axis):
    """Every element of ``a`` along ``axis`` (normalised) ``r`` times: one broadcast
    copy. A negative count of something is NumPy's negative length."""
    if r < 0:
        if a.shape[axis]:
            raise ValueError("negative dimensions are not allowed")
        r = 0
    spread = a.shape[: axis + 1] + (1,) + a.shape[axis + 1 :]
    wide = a.shape[: axis + 1] + (r,) + a.shape[axis + 1 :]
    out = _ext.empty(wide, a.dtype)
    _ext.copyto(out, a.reshape(spread))
    shape = list(a.shape)
    shape[axis] *= r
    return out.reshape(tuple(shape))
