"""``sort`` and ``argsort`` with the Array API's keywords, ``stable`` and ``descending``,
over NumPy's sort, which runs through the fallback path until the engines sort natively
(issue 46).

Without ``kind`` or ``stable`` the sort is stable, the Array API's default. NumPy's own
default (quicksort) promises no order among equal elements, so a stable order is one of
its results too. Descending is a stable ascending sort of the reversed axis, reversed:
equal elements keep their order, as the standard asks.
"""

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from .. import _fallback
from .. import _native as _n
from ._arranging import flip


def _through_numpy(func, name, a, axis, kind, order, stable):
    kwargs = {"axis": axis}
    for key, value in (("kind", kind), ("order", order), ("stable", stable)):
        if value is not None:
            kwargs[key] = value
    return _fallback.call(func, name, (a,), kwargs)


def _descending(func, name, a, axis, kind, order, stable, *, indices):
    if axis is None:
        a, axis = a.reshape(-1), 0
    if a.ndim == 0:
        return _through_numpy(func, name, a, axis, kind, order, stable)
    axis = normalize_axis_index(axis, a.ndim)
    got = _through_numpy(func, name, flip(a, axis), axis, kind, order, stable)
    if indices:
        got = (a.shape[axis] - 1) - got
    return flip(got, axis)


def argsort(a, axis=-1, kind=None, order=None, *, stable=None, descending=False):
    a = _n._arr(a)
    if kind is None and stable is None:
        stable = True
    if descending:
        return _descending(
            np.argsort, "argsort", a, axis, kind, order, stable, indices=True
        )
    return _through_numpy(np.argsort, "argsort", a, axis, kind, order, stable)


def sort(a, axis=-1, kind=None, order=None, *, stable=None, descending=False):
    a = _n._arr(a)
    if kind is None and stable is None:
        stable = True
    if descending:
        return _descending(np.sort, "sort", a, axis, kind, order, stable, indices=False)
    return _through_numpy(np.sort, "sort", a, axis, kind, order, stable)
