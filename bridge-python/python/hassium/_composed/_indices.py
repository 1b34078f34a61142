"""Index grids, triangles, diagonals and the positions of non-zero elements."""

import builtins
import operator

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from .. import _hassium as _ext
from .. import _native as _n

# --------------------------------------------------------------------------- triangles


def tri(N, M=None, k=0, dtype=float, *, like=None):
    N = operator.index(N)
    M = N if M is None else operator.index(M)
    k = operator.index(k)
    rows = _ext.arange(0, N, 1, np.dtype(np.intp)).reshape(N, 1)
    cols = _ext.arange(-k, M - k, 1, np.dtype(np.intp)).reshape(1, M)
    mask = _ext.ufunc("greater_equal", rows, cols)
    dtype = np.dtype(dtype)
    return mask if dtype == np.bool_ else mask.astype(dtype)


def indices(dimensions, dtype=int, sparse=False):
    """The grid of each axis's index: one array per axis, an ``arange`` along it (lazy
    broadcasts; NumPy's layout: stacked into ``(N, *dimensions)`` unless ``sparse``)."""
    dimensions = tuple(operator.index(d) for d in dimensions)
    # NumPy's grids are `arange(d, dtype=dtype)`, integers for `dtype=None`, copied into
    # an `empty(..., dtype)`, float64 for `dtype=None`.
    along_dtype = np.dtype(np.intp) if dtype is None else np.dtype(dtype)
    if along_dtype == np.bool_ and builtins.any(d > 2 for d in dimensions):
        raise TypeError(
            "arange() is only supported for booleans when the result has at most length 2."
        )
    dtype = np.dtype(dtype)
    n = len(dimensions)
    axes = []
    for i, d in enumerate(dimensions):
        along = _ext.arange(0, d, 1, along_dtype).reshape(
            (1,) * i + (d,) + (1,) * (n - i - 1)
        )
        axes.append(along)
    if sparse:
        return tuple(axes)
    if builtins.any(d < 0 for d in dimensions):
        raise ValueError("negative dimensions are not allowed")
    res = _ext.empty((n,) + dimensions, dtype)
    for i, along in enumerate(axes):
        _ext.copyto(res[i], along)
    return res


def fromfunction(function, shape, *, dtype=float, like=None, **kwargs):
    if like is not None:
        raise _n._Unsupported
    return function(*indices(shape, dtype=dtype), **kwargs)


def diag_indices(n, ndim=2):
    idx = _ext.arange(0, operator.index(n), 1, np.dtype(np.intp))
    return (idx,) * ndim


def _tri_positions(mask):
    """Row and column indices of a 2-D boolean mask's true elements, in C order."""
    rows, cols = indices(mask.shape, dtype=np.intp, sparse=True)
    return tuple(_n.broadcast_to(x, mask.shape)[mask] for x in (rows, cols))


def tril_indices(n, k=0, m=None):
    return _tri_positions(tri(n, m, k=k, dtype=bool))


def triu_indices(n, k=0, m=None):
    return _tri_positions(
        _ext.ufunc("logical_not", tri(n, m, k=operator.index(k) - 1, dtype=bool))
    )


def _triangle(m, k, keep_lower):
    m = _n._arr(m)
    if m.ndim == 0:
        raise _n._Unsupported  # NumPy's own TypeError
    rows, cols = m.shape[-2:] if m.ndim >= 2 else (m.shape[-1], m.shape[-1])
    k = operator.index(k)
    lower = tri(rows, cols, k if keep_lower else k - 1, dtype=bool)
    zero = _ext.full((), 0, m.dtype)
    if keep_lower:
        return _ext.where(lower, m, zero)
    return _ext.where(lower, zero, m)


def tril(m, k=0):
    return _triangle(m, k, True)


def triu(m, k=0):
    return _triangle(m, k, False)


# --------------------------------------------------------------------------- indices


def argwhere(a):
    a = _n._arr(a)
    if a.ndim == 0:
        return argwhere(a.reshape(1))[:, :0]
    return _n.stack(_n.nonzero(a), axis=1)


# --------------------------------------------------------------------------- diagonals


def diagonal(a, offset=0, axis1=0, axis2=1):
    a = _n._arr(a)
    if a.ndim < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    axis1 = normalize_axis_index(axis1, a.ndim, "axis1")
    axis2 = normalize_axis_index(axis2, a.ndim, "axis2")
    if axis1 == axis2:
        raise ValueError("axis1 and axis2 cannot be the same")
    offset = operator.index(offset)
    return _ext.diagonal(a, offset, axis1, axis2)


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    return _n.sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype, out=out)


def diag(v, k=0):
    v = _n._arr(v)
    k = operator.index(k)
    if v.ndim == 2:
        return diagonal(v, k)
    if v.ndim != 1:
        raise ValueError("Input must be 1- or 2-d.")
    n = v.shape[0] + builtins.abs(k)
    res = _ext.full((n, n), 0, v.dtype)
    if v.shape[0]:
        i = _ext.arange(
            builtins.max(0, -k), builtins.max(0, -k) + v.shape[0], 1, np.dtype(np.intp)
        )
        j = _ext.arange(
            builtins.max(0, k), builtins.max(0, k) + v.shape[0], 1, np.dtype(np.intp)
        )
        res[i, j] = v
    return res
