"""Sorting, searching and uniqueness on the engines' sort methods (``sort``, ``argsort``,
``searchsorted``; ``hassium_core::methods``): ``sort``, ``argsort``, ``partition``,
``argpartition``, ``searchsorted``, ``sort_complex``, ``unique`` and the Array API's
``unique_*``.

Every sort here is stable, the Array API's default: NumPy's own default (quicksort)
promises no order among equal elements, so a stable order is one of its results too. A
partition selects: the ``max(kth) + 1`` smallest elements in sorted order, then the
others in the order they came (one order on every engine, not an introselect's). Descending is a stable
ascending sort of the reversed axis, reversed: equal elements keep their order, as the
standard asks. ``unique`` sorts once, marks where a value differs from the one before it,
and reads back only how many distinct values there are (the size of its result).

What these cannot express (``order=`` on a dtype with fields, ``unique`` along an axis)
raises ``_Unsupported`` and goes through NumPy like any other fallback.
"""

import operator

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from .. import _hassium as _ext
from .. import _native as _n
from ._arranging import flip, take_along_axis

ndarray = _ext.ndarray

try:  # the Array API's result tuples, as NumPy returns them
    from numpy.lib._arraysetops_impl import (
        UniqueAllResult,
        UniqueCountsResult,
        UniqueInverseResult,
    )
except ImportError:  # pragma: no cover - a NumPy without the Array API's unique_*
    UniqueAllResult = UniqueCountsResult = UniqueInverseResult = None


def _check_kind(kind, stable, order):
    if order is not None:
        raise ValueError("Cannot specify order when the array has no fields.")
    if kind is not None and stable is not None:
        raise ValueError(
            "`kind` and keyword parameters can't be provided at the same time. Use only "
            "one of them."
        )
    if kind is not None and (
        not isinstance(kind, str) or kind[:1].lower() not in ("q", "h", "m", "s")
    ):
        raise ValueError(
            f"sort kind must be one of 'quick', 'heap', or 'stable' (got {kind!r})"
        )


def _sorted(a, axis, indices):
    """The stable ascending sort of ``a`` along ``axis`` (None: flattened)."""
    if axis is None:
        a, axis = a.reshape(-1), 0
    axis = normalize_axis_index(operator.index(axis), a.ndim)
    return _ext.sort(a, axis, indices)


def _sort_any(a, axis, kind, order, stable, descending, *, indices):
    a = _n._arr(a)
    if axis is not None:
        operator.index(axis)  # NumPy's TypeError for a non-integer axis comes first
    _check_kind(kind, stable, order)
    if not descending:
        return _sorted(a, axis, indices)
    if axis is None:
        a, axis = a.reshape(-1), 0
    axis = normalize_axis_index(operator.index(axis), a.ndim)
    got = _sorted(flip(a, axis), axis, indices)
    if indices:
        got = _n.subtract(a.shape[axis] - 1, got)
    return flip(got, axis)


def sort(a, axis=-1, kind=None, order=None, *, stable=None, descending=False):
    return _sort_any(a, axis, kind, order, stable, descending, indices=False)


def _one_d_if_scalar(a):
    """NumPy's argsort and argpartition take a 0-d array as one element (sort and
    partition do not: there its axis is out of bounds)."""
    a = _n._arr(a)
    return a.reshape(1) if a.ndim == 0 else a


def argsort(a, axis=-1, kind=None, order=None, *, stable=None, descending=False):
    a = _one_d_if_scalar(a)
    return _sort_any(a, axis, kind, order, stable, descending, indices=True)


def _kth_checked(a, kth, axis, kind, order):
    if axis is not None:
        operator.index(axis)  # NumPy's TypeError for a non-integer axis comes first
    if order is not None:
        raise ValueError("Cannot specify order when the array has no fields.")
    if not isinstance(kind, str):
        raise TypeError(f"select kind must be str, not {type(kind).__name__}")
    if kind != "introselect":
        raise ValueError(f"select kind must be 'introselect' (got {kind!r})")
    if axis is None:
        a, axis = a.reshape(-1), 0
    axis = normalize_axis_index(operator.index(axis), a.ndim)
    n = a.shape[axis]
    kths = np.asarray(kth)
    if kths.dtype == np.bool_:
        raise ValueError("Booleans unacceptable as partition index")
    if kths.dtype.kind not in "iu":
        raise TypeError("Partition index must be integer")
    if a.size == 0:  # NumPy returns an empty array as it is, whatever kth
        return a, axis
    for k in kths.reshape(-1).tolist():
        if not -n <= k < n:
            raise ValueError(f"kth(={k}) out of bounds ({n})")
    return a, axis


def _partition_order(a, kth, axis, kind, order):
    """``a`` and the positions along ``axis`` that ``argpartition`` returns: those of the
    ``max(kth) + 1`` smallest elements in sorted order, then the rest in their own order,
    which puts every ``kth`` where a sort would (the engines' ``argpartition`` method;
    no full sort)."""
    a, axis = _kth_checked(a, kth, axis, kind, order)
    n = a.shape[axis]
    if a.size == 0:
        return a, axis, _ext.empty(a.shape, np.dtype(np.intp))
    ks = [k % n for k in np.asarray(kth).reshape(-1).tolist()]
    if not ks:  # no kth: NumPy leaves the order as it is
        from .. import arange, broadcast_to

        along = [1] * a.ndim
        along[axis] = n
        return a, axis, broadcast_to(arange(n).reshape(along), a.shape).copy()
    return a, axis, _ext.argpartition(a, axis, max(ks))


def partition(a, kth, axis=-1, kind="introselect", order=None):
    a, axis, idx = _partition_order(_n._arr(a), kth, axis, kind, order)
    return take_along_axis(a, idx, axis)


def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    return _partition_order(_one_d_if_scalar(a), kth, axis, kind, order)[2]


def searchsorted(a, v, side="left", sorter=None):
    a = _n._arr(a)
    if side not in ("left", "right"):
        raise ValueError(f"search side must be 'left' or 'right' (got {side!r})")
    if a.ndim != 1:
        raise ValueError("object too deep for desired array")
    if sorter is not None:
        sorter = _n._arr(sorter)
        if sorter.dtype.kind not in "iu":
            raise TypeError("sorter must only contain integers")
        if sorter.shape != a.shape:
            raise ValueError("sorter.size must equal a.size")
        a = a[sorter]
    return _ext.searchsorted(a, _n._arr(v), side == "right")


def sort_complex(a):
    b = sort(a, axis=-1)
    if b.dtype.kind == "c":
        return b
    return b.astype("F" if b.dtype.char in "bhBH" else "D")


def _unique_flat(ar, want_index, want_inverse, want_counts, equal_nan):
    """Sorted distinct values of ``ar`` flattened, with the first index, inverse and
    counts that are asked for."""
    flat = ar.reshape(-1)
    n = flat.size
    perm = _ext.sort(flat, 0, True)
    s = flat[perm]
    if n == 0:
        mask = _n.ones(0, dtype=bool)
    else:
        differs = _n.not_equal(s[1:], s[:-1])
        if equal_nan and s.dtype.kind in "fc":
            # NaNs sort last: keep only the first of them.
            nan = _n.isnan(s)
            differs = _n.logical_and(differs, _n.logical_not(nan[1:] & nan[:-1]))
        mask = _n.concatenate([_n.ones(1, dtype=bool), differs])
    (firsts,) = _n.nonzero(mask)
    out = [s[firsts]]
    if want_index:
        out.append(perm[firsts])
    if want_inverse:
        inverse = _n.empty(n, dtype=np.int64)
        inverse[perm] = _n.subtract(_n.cumsum(mask, dtype=np.int64), 1)
        out.append(inverse.reshape(ar.shape))
    if want_counts:
        ends = _n.concatenate([firsts, _n.full(1, n, dtype=np.int64)])
        out.append(_n.subtract(ends[1:], ends[:-1]))
    return out


def unique(
    ar,
    return_index=False,
    return_inverse=False,
    return_counts=False,
    axis=None,
    *,
    equal_nan=True,
    sorted=True,
):
    if axis is not None:
        raise _n._Unsupported
    got = _unique_flat(
        _n._arr(ar), return_index, return_inverse, return_counts, equal_nan
    )
    return got[0] if len(got) == 1 else tuple(got)


def unique_values(x):
    return _unique_flat(_n._arr(x), False, False, False, False)[0]


def unique_counts(x):
    if UniqueCountsResult is None:
        raise _n._Unsupported
    return UniqueCountsResult(*_unique_flat(_n._arr(x), False, False, True, False))


def unique_inverse(x):
    if UniqueInverseResult is None:
        raise _n._Unsupported
    return UniqueInverseResult(*_unique_flat(_n._arr(x), False, True, False, False))


def unique_all(x):
    if UniqueAllResult is None:
        raise _n._Unsupported
    return UniqueAllResult(*_unique_flat(_n._arr(x), True, True, True, False))


def lexsort(keys, axis=-1):
    """Stable argsorts from the least significant key (the first) to the primary one
    (the last), each sorting the next key as the order so far arranges it."""
    if isinstance(keys, ndarray) or not isinstance(keys, (list, tuple)):
        keys = _n._arr(keys)
        if keys.ndim == 0:
            raise _n._Unsupported  # NumPy's reading of a 0-d key
        keys = [keys[i] for i in range(keys.shape[0])]
    keys = [_n._arr(k) for k in keys]
    if not keys:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    shape = keys[0].shape
    if any(k.shape != shape for k in keys):
        raise ValueError("all keys need to be the same shape")
    if len(shape) == 0:
        raise _n._Unsupported
    axis = normalize_axis_index(operator.index(axis), len(shape))
    keys = [_n.moveaxis(k, axis, -1) for k in keys]
    last = len(shape) - 1
    perm = _ext.sort(keys[0], last, True)
    for k in keys[1:]:
        arranged = take_along_axis(k, perm, axis=-1)
        perm = take_along_axis(perm, _ext.sort(arranged, last, True), axis=-1)
    return _n.moveaxis(perm, -1, axis)


def digitize(x, bins, right=False):
    """NumPy's rule: a search of the bins (reversed when they decrease) with the side
    flipped, ``right`` meaning the bins' right edges are closed."""
    x, bins = _n._arr(x), _n._arr(bins)
    if x.dtype.kind == "c":
        raise TypeError("x may not be complex")
    if bins.ndim != 1:
        raise _n._Unsupported  # NumPy's errors for the depth of bins
    up = down = True
    if bins.shape[0] > 1:
        nan = _n.any(_n.isnan(bins)) if bins.dtype.kind in "fc" else None
        up = _n.all(_n.greater_equal(bins[1:], bins[:-1]))
        down = _n.all(_n.less_equal(bins[1:], bins[:-1]))
        if nan is not None and bool(nan):
            raise _n._Unsupported  # NumPy's monotonicity of NaN bins
        up, down = bool(up), bool(down)
    if not (up or down):
        raise ValueError("bins must be monotonically increasing or decreasing")
    if up:
        return _ext.searchsorted(bins, x, not right)
    found = _ext.searchsorted(flip(bins, 0), x, not right)
    return _n.subtract(bins.shape[0], found)
