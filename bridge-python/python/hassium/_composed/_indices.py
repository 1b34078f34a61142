"""Index grids, triangles, diagonals, the positions of non-zero elements, and flat
indices to and from multi-indices (``unravel_index``, ``ravel_multi_index``: integer
division and sums of products).

An index out of range is NumPy's ValueError, raised by the call: checking it costs a
flush. Python scalars alone are worked out on the host, as NumPy's scalars are what
NumPy returns for them."""

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


# --------------------------------------------------------------------------- flat indices


def _c_or_f(order):
    if order is None or order == "C":
        return "C"
    if order == "F":
        return "F"
    if order in ("A", "K"):
        raise ValueError("only 'C' or 'F' order is permitted")
    raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")


def _dims(shape):
    """A shape as a tuple of ints, or ``_Unsupported`` for what NumPy reads in ways of
    its own (no dimensions, a negative one)."""
    try:
        dims = (operator.index(shape),)
    except TypeError:
        dims = tuple(operator.index(d) for d in shape)
    if not dims or builtins.any(d < 0 for d in dims):
        raise _n._Unsupported
    return dims


def _strides(dims, order):
    """The step of each dimension in a flat index of ``order``, and the size."""
    steps = [0] * len(dims)
    step = 1
    for k in reversed(range(len(dims))) if order == "C" else range(len(dims)):
        steps[k] = step
        step *= dims[k]
    return steps, step


def _int_indices(x):
    """Indices as intp: integer and boolean arrays cast, others NumPy's TypeError."""
    x = _n._arr(x)
    if x.dtype.kind not in "biu":
        raise TypeError("only int indices permitted")
    return x.astype(np.intp, copy=False)


def _host_int(x):
    """Whether ``x`` is one Python or NumPy integer, worked out on the host."""
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def unravel_index(indices, shape, order="C"):
    order = _c_or_f(order)
    dims = _dims(shape)
    if _host_int(indices):
        return np.unravel_index(indices, dims, order)
    idx = _int_indices(indices)
    steps, size = _strides(dims, order)
    if size > np.iinfo(np.intp).max:
        raise ValueError(
            "dimensions are too large; arrays and shapes with a total size greater "
            "than 'intp' are not supported."
        )
    outside = _n.logical_or(_n.less(idx, 0), _n.greater_equal(idx, size))
    if builtins.bool(_n.any(outside)):
        first = idx.reshape(-1)[_n.flatnonzero(outside)[:1]]
        raise ValueError(
            f"index {int(first[0])} is out of bounds for array with size {size}"
        )
    if size == 0:  # no index fits: `idx` is empty (and a step may be 0)
        return tuple(_ext.full(idx.shape, 0, np.dtype(np.intp)) for _ in dims)
    # Each coordinate on its own: how many of its steps fit, within its length.
    return tuple(
        _n.remainder(_n.floor_divide(idx, step), d) for step, d in zip(steps, dims)
    )


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    dims = _dims(dims)
    modes = (mode,) * len(dims) if isinstance(mode, str) else tuple(mode)
    if len(modes) != len(dims):
        raise ValueError(
            f"list of clipmodes has wrong length ({len(modes)} instead of {len(dims)})"
        )
    for m in modes:
        if m not in ("raise", "wrap", "clip"):
            raise ValueError(
                f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {m!r})"
            )
    order = _c_or_f(order)
    if isinstance(multi_index, (_ext.ndarray, np.ndarray)):
        multi_index = [multi_index[k, ...] for k in range(multi_index.shape[0])]
    multi_index = list(multi_index)
    if len(multi_index) != len(dims):
        raise ValueError(
            f"parameter multi_index must be a sequence of length {len(dims)}"
        )
    steps, size = _strides(dims, order)
    if size > np.iinfo(np.intp).max:
        raise ValueError(
            "invalid dims: array size defined by dims is larger than the maximum "
            "possible size."
        )
    if size == 0:
        raise ValueError("cannot unravel if shape has zero entries (is empty).")
    if builtins.all(_host_int(i) for i in multi_index):
        return np.ravel_multi_index(tuple(multi_index), dims, mode, order)
    coords = list(_n.broadcast_arrays(*(_int_indices(i) for i in multi_index)))
    checked = []
    for k, (c, d, m) in enumerate(zip(coords, dims, modes)):
        if m == "wrap":
            coords[k] = _n.remainder(c, d)
        elif m == "clip":
            coords[k] = _n.clip(c, 0, d - 1)
        else:
            checked.append(_n.logical_or(_n.less(c, 0), _n.greater_equal(c, d)))
    if checked:
        outside = checked[0]
        for more in checked[1:]:
            outside = _n.logical_or(outside, more)
        if builtins.bool(_n.any(outside)):
            raise ValueError("invalid entry in coordinates array")
    # The flat index: each coordinate times its step, summed.
    flat = _n.multiply(coords[0], steps[0])
    for c, step in zip(coords[1:], steps[1:]):
        flat = _n.add(flat, _n.multiply(c, step))
    return flat


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
