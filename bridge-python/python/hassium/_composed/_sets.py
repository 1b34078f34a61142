"""Set operations on flattened arrays -- ``isin``, ``intersect1d``, ``setdiff1d``,
``union1d``, ``setxor1d`` -- from ``unique``, joins, one stable sort and masks, as NumPy
composes them.

``isin`` looks every element up in the sorted distinct test elements (``searchsorted``)
and compares it with the value found there: membership is equality, so NaN is in
nothing, as NumPy's comparison loop and sort path both have it. NumPy's ``table`` kind
only changes how integers are looked up, not the answer.
"""

import numpy as np

from .. import _hassium as _ext
from .. import _native as _n
from ._sorting import _unique_flat, unique


def _membership(ar1, ar2, invert):
    """Whether each element of ``ar1`` equals some element of ``ar2`` (both arrays),
    shaped as ``ar1``."""
    if ar2.size == 0:
        return _ext.full(ar1.shape, bool(invert), np.dtype(bool))
    test = _unique_flat(ar2, False, False, False, True)[0]
    pos = _ext.searchsorted(test, ar1, False)
    found = _n.equal(test[_n.minimum(pos, test.shape[0] - 1)], ar1)
    return _n.logical_not(found) if invert else found


def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    if kind not in (None, "sort", "table"):
        raise ValueError(f"Invalid kind: '{kind}'. Please use None, 'sort' or 'table'.")
    ar1, ar2 = _n._arr(element), _n._arr(test_elements)
    if ar1.dtype.kind not in "biufc" or ar2.dtype.kind not in "biufc":
        raise _n._Unsupported
    if kind == "table" and not all(a.dtype.kind in "biu" for a in (ar1, ar2)):
        raise ValueError(
            "The 'table' method is only supported for boolean or integer arrays. "
            "Please select 'sort' or None for kind."
        )
    if kind == "table" and ar2.size:
        _check_table_range(ar2)
    return _membership(ar1, ar2, invert)


def _check_table_range(ar2):
    """NumPy's table method indexes a table of ``max - min + 1`` bools by ``ar2 - min``
    in ``ar2``'s dtype (uint8 for bools): a range beyond that dtype's maximum is its
    RuntimeError, a table longer than an intp its ValueError."""
    dtype = np.dtype(np.uint8) if ar2.dtype == np.bool_ else ar2.dtype
    lo, hi = _n.min(ar2), _n.max(ar2)  # both recorded before the one flush
    span = int(hi) - int(lo)
    if span > np.iinfo(dtype).max:
        raise RuntimeError(
            "You have specified kind='table', but the range of values in `ar2` or "
            "`ar1` exceed the maximum integer of the datatype. Please set `kind` to "
            "None or 'sort'."
        )
    if span + 1 > np.iinfo(np.intp).max:
        raise ValueError("Maximum allowed dimension exceeded")


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False):
    ar1, ar2 = _n._arr(ar1), _n._arr(ar2)
    if not assume_unique:
        if return_indices:
            ar1, ind1 = unique(ar1, return_index=True)
            ar2, ind2 = unique(ar2, return_index=True)
        else:
            ar1, ar2 = unique(ar1), unique(ar2)
    else:
        ar1, ar2 = ar1.reshape(-1), ar2.reshape(-1)
    aux = _n.concatenate((ar1, ar2))
    if return_indices:
        order = _ext.sort(aux, 0, True)
        aux = aux[order]
    else:
        aux = _ext.sort(aux, 0, False)
    mask = _n.equal(aux[1:], aux[:-1])
    common = aux[:-1][mask]
    if not return_indices:
        return common
    ind_a = order[:-1][mask]
    ind_b = _n.subtract(order[1:][mask], ar1.size)
    if not assume_unique:
        ind_a, ind_b = ind1[ind_a], ind2[ind_b]
    return common, ind_a, ind_b


def setxor1d(ar1, ar2, assume_unique=False):
    if not assume_unique:
        ar1, ar2 = unique(ar1), unique(ar2)
    aux = _n.concatenate((ar1, ar2), axis=None)  # NumPy's: Python numbers weak
    if aux.size == 0:
        return aux
    aux = _ext.sort(aux, 0, False)
    true = _n.ones(1, dtype=bool)
    flag = _n.concatenate((true, _n.not_equal(aux[1:], aux[:-1]), true))
    return aux[_n.logical_and(flag[1:], flag[:-1])]


def union1d(ar1, ar2):
    return unique(_n.concatenate((ar1, ar2), axis=None))


def setdiff1d(ar1, ar2, assume_unique=False):
    if assume_unique:
        ar1 = _n._arr(ar1).reshape(-1)
    else:
        ar1, ar2 = unique(ar1), unique(ar2)
    return ar1[_membership(ar1, _n._arr(ar2).reshape(-1), True)]
