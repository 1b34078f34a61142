"""NumPy functions that are compositions of the natives: views, joins and arithmetic.

Flips and splits are views of the argument (writing through them writes it, as in
NumPy); the rest record ufuncs, reductions and copies, so a program calling ``np.diff``,
``np.gradient`` or ``np.tile`` stays lazy and its work fuses with what surrounds it,
where the fallback path would flush, copy to NumPy and back, and warn.

Semantics (results, dtypes, views or copies, exception types) follow NumPy's functions of
the same name; what an argument combination here cannot express raises ``_Unsupported``
and goes through NumPy like any other fallback. The rules of ``_native`` apply: no NumPy
function is called on a Hassium array.
"""

import builtins
import itertools
import operator

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from . import _hassium as _ext
from . import _native as _n

ndarray = _ext.ndarray

_NoValue = np._NoValue


def _into(out, result):
    """``result``, or ``out`` holding it (cast unsafely, as NumPy's functions write out=)."""
    if out is None:
        return result
    _ext.copyto(out, result, casting="unsafe")
    return out


def _along(ndim, axis, index):
    """A key taking ``index`` (a slice or an int) on ``axis`` and everything elsewhere."""
    key = [slice(None)] * ndim
    key[axis] = index
    return tuple(key)


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
    ary = _n._arr(ary)
    total = ary.shape[axis]  # IndexError for an axis out of range, as in NumPy
    axis %= ary.ndim
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
    return [
        ary[_along(ary.ndim, axis, slice(lo, hi))]
        for lo, hi in itertools.pairwise(bounds)
    ]


def split(ary, indices_or_sections, axis=0):
    ary = _n._arr(ary)
    try:
        len(indices_or_sections)
    except TypeError:
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


# --------------------------------------------------------------------------- differences


def diff(a, n=1, axis=-1, prepend=_NoValue, append=_NoValue):
    if n == 0:
        return a
    if n < 0:
        raise ValueError("order must be non-negative but got " + repr(n))
    a = _n._arr(a)
    if a.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    axis = normalize_axis_index(axis, a.ndim)
    parts = []
    for extra in (prepend, None, append):
        if extra is None:
            parts.append(a)
        elif extra is not _NoValue:
            extra = _n._arr(extra)
            if extra.ndim == 0:
                shape = list(a.shape)
                shape[axis] = 1
                extra = _n.broadcast_to(extra, tuple(shape))
            parts.append(extra)
    if len(parts) > 1:
        a = _n.concatenate(parts, axis)
    op = "not_equal" if a.dtype == np.bool_ else "subtract"
    later, earlier = (
        _along(a.ndim, axis, slice(1, None)),
        _along(a.ndim, axis, slice(None, -1)),
    )
    for _ in range(n):
        a = _ext.ufunc(op, a[later], a[earlier])
    return a


def ediff1d(ary, to_end=None, to_begin=None):
    ary = _n._arr(ary).reshape(-1)
    dtype = ary.dtype
    pieces = []
    for name, extra in (("to_begin", to_begin), (None, None), ("to_end", to_end)):
        if name is None:
            pieces.append(_ext.ufunc("subtract", ary[1:], ary[:-1]))
        elif extra is not None:
            extra = _n._arr(extra)
            if not np.can_cast(extra.dtype, dtype, casting="same_kind"):
                raise TypeError(
                    f"dtype of `{name}` must be compatible with input `ary` under the "
                    "`same_kind` rule."
                )
            pieces.append(extra.reshape(-1))
    if len(pieces) == 1:
        return pieces[0]
    out = _ext.empty((builtins.sum(p.shape[0] for p in pieces),), dtype)
    at = 0
    for p in pieces:
        if p.shape[0]:
            _ext.copyto(out[at : at + p.shape[0]], p, casting="unsafe")
        at += p.shape[0]
    return out


def trapezoid(y, x=None, dx=1.0, axis=-1):
    y = _n._arr(y)
    axis = normalize_axis_index(axis, y.ndim)
    if x is None:
        d = dx
    else:
        x = _n._arr(x)
        if x.ndim == 1:
            d = diff(x)
            shape = [1] * y.ndim
            shape[axis] = d.shape[0]
            d = d.reshape(tuple(shape))
        else:
            d = diff(x, axis=axis)
    pairs = _ext.ufunc(
        "add",
        y[_along(y.ndim, axis, slice(1, None))],
        y[_along(y.ndim, axis, slice(None, -1))],
    )
    areas = _ext.ufunc("divide", _ext.ufunc("multiply", d, pairs), 2.0)
    return _n.sum(areas, axis)


def _spacing(h, axis_len):
    """One axis's spacing for ``gradient``: a scalar, or the differences of coordinates."""
    if _n.ndim(h) == 0:
        return h
    h = _n._arr(h)
    if h.ndim != 1:
        raise ValueError("distances must be either scalars or 1d")
    if h.shape[0] != axis_len:
        raise ValueError(
            "when 1d, distances must match the length of the corresponding dimension"
        )
    if h.dtype.kind in "iu":
        h = h.astype(np.float64)
    steps = diff(h)
    # Evenly spaced coordinates take the uniform formulas, as in NumPy (one flush).
    if steps.shape[0] and builtins.bool(_n.all(_ext.ufunc("equal", steps, steps[:1]))):
        return steps[0]
    return steps


def gradient(f, *varargs, axis=None, edge_order=1):
    f = _n._arr(f)
    axes = tuple(range(f.ndim)) if axis is None else normalize_axis_tuple(axis, f.ndim)
    if len(varargs) == 0:
        spacings = [1.0] * len(axes)
    elif len(varargs) == 1 and _n.ndim(varargs[0]) == 0:
        spacings = [varargs[0]] * len(axes)
    elif len(varargs) == len(axes):
        spacings = [_spacing(h, f.shape[ax]) for h, ax in zip(varargs, axes)]
    else:
        raise TypeError("invalid number of arguments")
    if edge_order > 2:
        raise ValueError("'edge_order' greater than 2 not supported")
    if f.dtype.kind not in "iufc":
        raise _n._Unsupported  # bool and datetimes: NumPy's own errors and rules
    if f.dtype.kind in "iu":
        f = f.astype(np.float64)
    results = [_gradient_along(f, ax, h, edge_order) for ax, h in zip(axes, spacings)]
    return results[0] if len(axes) == 1 else tuple(results)


def _one(k):
    """Element ``k`` (from either end) as a slice of length one, so nothing is synced."""
    return slice(k, k + 1 if k != -1 else None)


def _gradient_along(f, axis, h, edge_order):
    """NumPy's finite differences along one axis: central (second order, also on uneven
    steps) inside, one-sided of order ``edge_order`` at the two ends."""
    if f.shape[axis] < edge_order + 1:
        raise ValueError(
            "Shape of array too small to calculate a numerical gradient, at least "
            "(edge_order + 1) elements are required."
        )
    ndim = f.ndim

    def u(name, *args):
        return _ext.ufunc(name, *args)

    def at(index):
        return f[_along(ndim, axis, index)]

    def weighted(terms):
        """a*fa + b*fb + c*fc, added left to right."""
        (ca, fa), (cb, fb), (cc, fc) = terms
        ab = u("add", u("multiply", ca, fa), u("multiply", cb, fb))
        return u("add", ab, u("multiply", cc, fc))

    def step(k):
        return h[_one(k)]

    out = _ext.empty(f.shape, f.dtype)
    uniform = _n.ndim(h) == 0
    if uniform:
        inner = u(
            "divide", u("subtract", at(slice(2, None)), at(slice(None, -2))), 2.0 * h
        )
    else:
        h1, h2 = h[:-1], h[1:]
        shape = [1] * ndim
        shape[axis] = -1
        shape = tuple(shape)
        a = u("negative", u("divide", h2, u("multiply", h1, u("add", h1, h2))))
        b = u("divide", u("subtract", h2, h1), u("multiply", h1, h2))
        c = u("divide", h1, u("multiply", h2, u("add", h1, h2)))
        inner = weighted(
            [
                (a.reshape(shape), at(slice(None, -2))),
                (b.reshape(shape), at(slice(1, -1))),
                (c.reshape(shape), at(slice(2, None))),
            ]
        )
    _ext.copyto(out[_along(ndim, axis, slice(1, -1))], inner, casting="unsafe")
    if edge_order == 1:
        first = u(
            "divide", u("subtract", at(_one(1)), at(_one(0))), h if uniform else step(0)
        )
        last = u(
            "divide",
            u("subtract", at(_one(-1)), at(_one(-2))),
            h if uniform else step(-1),
        )
    else:
        if uniform:
            head = (-1.5 / h, 2.0 / h, -0.5 / h)
            tail = (0.5 / h, -2.0 / h, 1.5 / h)
        else:
            d1, d2 = step(0), step(1)
            span = u("add", d1, d2)
            head = (
                u(
                    "negative",
                    u(
                        "divide",
                        u("add", u("multiply", 2.0, d1), d2),
                        u("multiply", d1, span),
                    ),
                ),
                u("divide", span, u("multiply", d1, d2)),
                u("negative", u("divide", d1, u("multiply", d2, span))),
            )
            d1, d2 = step(-2), step(-1)
            span = u("add", d1, d2)
            tail = (
                u("divide", d2, u("multiply", d1, span)),
                u("negative", u("divide", u("add", d2, d1), u("multiply", d1, d2))),
                u(
                    "divide",
                    u("add", u("multiply", 2.0, d2), d1),
                    u("multiply", d2, span),
                ),
            )
        first = weighted(zip(head, (at(_one(0)), at(_one(1)), at(_one(2)))))
        last = weighted(zip(tail, (at(_one(-3)), at(_one(-2)), at(_one(-1)))))
    _ext.copyto(out[_along(ndim, axis, _one(0))], first, casting="unsafe")
    _ext.copyto(out[_along(ndim, axis, _one(-1))], last, casting="unsafe")
    return out


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
    dtype = np.dtype(dtype)
    n = len(dimensions)
    axes = []
    for i, d in enumerate(dimensions):
        along = _ext.arange(0, d, 1, dtype).reshape(
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


# --------------------------------------------------------------------------- statistics


def ptp(a, axis=None, out=None, keepdims=False):
    a = _n._arr(a)
    hi = _n.max(a, axis=axis, keepdims=keepdims)
    lo = _n.min(a, axis=axis, keepdims=keepdims)
    return _n.subtract(hi, lo, out=out)


def average(a, axis=None, weights=None, returned=False, *, keepdims=_NoValue):
    a = _n._arr(a)
    keep = False if keepdims is _NoValue else builtins.bool(keepdims)
    if weights is None:
        avg = _n.mean(a, axis=axis, keepdims=keep)
        scale = _ext.full((), a.size / avg.size, avg.dtype)
    else:
        w = _n._arr(weights)
        if a.dtype.kind in "biu":
            dtype = np.result_type(a.dtype, w.dtype, "f8")
        else:
            dtype = np.result_type(a.dtype, w.dtype)
        if a.shape != w.shape:
            if axis is None:
                raise TypeError(
                    "Axis must be specified when shapes of a and weights differ."
                )
            axes = normalize_axis_tuple(axis, a.ndim, argname="axis")
            if w.shape != tuple(a.shape[ax] for ax in axes):
                raise ValueError(
                    "Shape of weights must be consistent with shape of a along specified "
                    "axis."
                )
            # The weights' axes in a's order, the others of length 1.
            w = w.transpose(sorted(range(len(axes)), key=lambda i: axes[i]))
            shape = [1] * a.ndim
            for ax in sorted(axes):
                shape[ax] = a.shape[ax]
            w = w.reshape(tuple(shape))
        scale = _n.sum(w, axis=axis, dtype=dtype, keepdims=keep)
        if builtins.bool(_n.any(_ext.ufunc("equal", scale, 0.0))):
            raise ZeroDivisionError("Weights sum to zero, can't be normalized")
        weighted = _n.sum(
            _ext.ufunc("multiply", a, w, dtype=dtype), axis=axis, keepdims=keep
        )
        avg = _ext.ufunc("divide", weighted, scale)
    if not returned:
        return avg
    avg, scale = _n._arr(avg), _n._arr(scale)
    if scale.shape != avg.shape:
        scale = _n.broadcast_to(scale, avg.shape).copy()
    return avg, scale


# --------------------------------------------------------------------------- indices


def argwhere(a):
    a = _n._arr(a)
    if a.ndim == 0:
        return argwhere(a.reshape(1))[:, :0]
    return _n.stack(_n.nonzero(a), axis=1)


def bincount(x, weights=None, minlength=0):
    if isinstance(x, (list, tuple)) and len(x) == 0:
        x = _ext.empty((0,), np.dtype(np.intp))  # NumPy reads a sequence as intp
    given = isinstance(x, ndarray)
    x = _n._arr(x)
    if not given and (x.ndim != 1 or x.dtype.kind not in "biu"):
        raise _n._Unsupported  # NumPy's conversion of sequences (floats truncate)
    if x.ndim != 1:
        raise ValueError(
            "object too deep for desired array"
            if x.ndim > 1
            else "object of too small depth for desired array"
        )
    if x.dtype.kind not in "biu":
        raise TypeError(
            f"Cannot cast array data from {x.dtype!r} to dtype('int64') according to "
            "the rule 'safe'"
        )
    minlength = operator.index(minlength)
    if minlength < 0:
        raise ValueError("'minlength' must not be negative")
    if weights is not None:
        w = _n._arr(weights)
        if w.dtype.kind == "c":
            raise TypeError(
                f"Cannot cast array data from {w.dtype!r} to dtype('float64') according "
                "to the rule 'safe'"
            )
        if w.dtype.kind not in "biuf":
            raise _n._Unsupported
        if w.shape != x.shape:
            raise ValueError("The weights and list don't have the same length.")
        w = w.astype(np.float64)
    # uint64 converts as NumPy converts it: values from 2**63 up turn negative.
    idx = x if x.dtype == np.int64 else x.astype(np.int64)
    n = minlength
    if idx.shape[0]:
        least, most = _n.min(idx), _n.max(idx)  # both recorded before the one flush
        lo, hi = int(least), int(most)
        if lo < 0:
            raise ValueError("'list' argument must have no negative elements")
        n = builtins.max(n, hi + 1)
    counts = _ext.full((n,), 0, np.dtype(np.intp if weights is None else np.float64))
    if idx.shape[0]:
        values = _ext.full(idx.shape, 1, counts.dtype) if weights is None else w
        _ext.put_flat(counts, idx, values, accumulate=True)
    return counts


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


# --------------------------------------------------------------------------- NaN-skipping


def _without_nan(a, value):
    """``a`` with NaNs replaced by ``value``, and the NaN mask (None for exact dtypes)."""
    a = _n._arr(a)
    if a.dtype.kind not in "fc":
        return a, None
    mask = _ext.ufunc("isnan", a)
    return _ext.where(mask, value, a), mask


def nansum(
    a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue, where=True
):
    a, _ = _without_nan(a, 0)
    return _n.sum(
        a,
        axis=axis,
        dtype=dtype,
        out=out,
        keepdims=keepdims,
        initial=initial,
        where=where,
    )


def nanprod(
    a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue, where=True
):
    a, _ = _without_nan(a, 1)
    return _n.prod(
        a,
        axis=axis,
        dtype=dtype,
        out=out,
        keepdims=keepdims,
        initial=initial,
        where=where,
    )


def nancumsum(a, axis=None, dtype=None, out=None):
    a, _ = _without_nan(a, 0)
    return _n.cumsum(a, axis=axis, dtype=dtype, out=out)


def nancumprod(a, axis=None, dtype=None, out=None):
    a, _ = _without_nan(a, 1)
    return _n.cumprod(a, axis=axis, dtype=dtype, out=out)


def _warn(message):
    import warnings

    from ._fallback import _outside_the_package

    warnings.warn(message, RuntimeWarning, stacklevel=_outside_the_package())


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    arr, mask = _without_nan(a, 0)
    if mask is None:
        return _n.mean(
            arr, axis=axis, dtype=dtype, out=out, keepdims=keepdims, where=where
        )
    if where is not True:
        raise _n._Unsupported
    count = _n.sum(
        _ext.ufunc("logical_not", mask), axis=axis, dtype=np.intp, keepdims=keepdims
    )
    total = _n.sum(arr, axis=axis, dtype=dtype, keepdims=keepdims)
    avg = _ext.ufunc(
        "divide", total, count, dtype=total.dtype if total.dtype.kind in "fc" else None
    )
    if builtins.bool(_n.any(_ext.ufunc("equal", count, 0))):
        _warn("Mean of empty slice")
    return _into(out, avg)


def nanvar(
    a,
    axis=None,
    dtype=None,
    out=None,
    ddof=0,
    keepdims=False,
    *,
    where=True,
    mean=_NoValue,
    correction=_NoValue,
):
    arr, mask = _without_nan(a, 0)
    if mask is None:
        return _n.var(
            arr,
            axis=axis,
            dtype=dtype,
            out=out,
            ddof=ddof,
            keepdims=keepdims,
            where=where,
            mean=mean,
            correction=correction,
        )
    if where is not True or mean is not _NoValue or correction is not _NoValue:
        raise _n._Unsupported
    u = _ext.ufunc
    count = _n.sum(u("logical_not", mask), axis=axis, dtype=np.intp, keepdims=True)
    total = _n.sum(arr, axis=axis, dtype=dtype, keepdims=True)
    avg = u("divide", total, count, dtype=total.dtype)
    dev = _ext.where(mask, 0, u("subtract", arr, avg))
    if dev.dtype.kind == "c":
        sq = u("multiply", dev, u("conjugate", dev)).real
    else:
        sq = u("multiply", dev, dev)
    ss = _n.sum(sq, axis=axis, dtype=dtype, keepdims=keepdims)
    if not keepdims:
        count = count.reshape(ss.shape)
    dof = u("subtract", count, ddof)
    var = u("divide", ss, dof, dtype=ss.dtype)
    bad = u("less_equal", dof, 0)
    if builtins.bool(_n.any(bad)):
        _warn("Degrees of freedom <= 0 for slice.")
        var = _ext.where(bad, np.nan, var)
    return _into(out, var)


def nanstd(
    a,
    axis=None,
    dtype=None,
    out=None,
    ddof=0,
    keepdims=False,
    *,
    where=True,
    mean=_NoValue,
    correction=_NoValue,
):
    var = nanvar(
        a,
        axis=axis,
        dtype=dtype,
        ddof=ddof,
        keepdims=keepdims,
        where=where,
        mean=mean,
        correction=correction,
    )
    std = _ext.ufunc("sqrt", var)
    return _into(out, std)


def _nan_extreme(a, axis, out, keepdims, fill, reduce_name):
    a = _n._arr(a)
    if a.dtype.kind == "c":
        raise _n._Unsupported  # NumPy orders complex numbers; the opcodes do not
    if a.dtype.kind != "f":
        return _n._reduce(reduce_name, a, axis, None, out, keepdims)
    nan = _ext.ufunc("isnan", a)
    res = _n._reduce(reduce_name, _ext.where(nan, fill, a), axis, None, None, keepdims)
    all_nan = _n._reduce("logical_and", nan, axis, None, None, keepdims)
    res = _ext.where(all_nan, np.nan, res)
    if builtins.bool(_n.any(all_nan)):
        _warn("All-NaN slice encountered")
    return _into(out, res)


def nanmax(a, axis=None, out=None, keepdims=False, initial=_NoValue, where=True):
    if initial is not _NoValue or where is not True:
        raise _n._Unsupported
    return _nan_extreme(a, axis, out, keepdims, -np.inf, "maximum")


def nanmin(a, axis=None, out=None, keepdims=False, initial=_NoValue, where=True):
    if initial is not _NoValue or where is not True:
        raise _n._Unsupported
    return _nan_extreme(a, axis, out, keepdims, np.inf, "minimum")


def _nan_arg(a, axis, out, keepdims, fill, name):
    a = _n._arr(a)
    if a.dtype.kind not in "fc":
        return getattr(_n, name)(a, axis=axis, out=out, keepdims=keepdims)
    if a.dtype.kind == "c":
        raise _n._Unsupported
    nan = _ext.ufunc("isnan", a)
    all_nan = _n._reduce("logical_and", nan, axis, None, None, False)
    res = getattr(_n, name)(
        _ext.where(nan, fill, a), axis=axis, out=out, keepdims=keepdims
    )
    if builtins.bool(_n.any(all_nan)):
        raise ValueError("All-NaN slice encountered")
    return res


def nanargmax(a, axis=None, out=None, *, keepdims=False):
    return _nan_arg(a, axis, out, keepdims, -np.inf, "argmax")


def nanargmin(a, axis=None, out=None, *, keepdims=False):
    return _nan_arg(a, axis, out, keepdims, np.inf, "argmin")


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    given = x
    x = _n._arr(x)
    if x.dtype.kind == "c":
        raise _n._Unsupported  # real and imaginary parts separately: NumPy's
    if x.dtype.kind != "f":
        res = x.copy() if copy else x
        return res[()] if res.ndim == 0 else res
    info = np.finfo(x.dtype)
    hi = info.max if posinf is None else posinf
    lo = info.min if neginf is None else neginf
    u = _ext.ufunc
    res = _ext.where(u("isnan", x), nan, x)
    res = _ext.where(u("equal", x, np.inf), hi, res)
    res = _ext.where(u("equal", x, -np.inf), lo, res)
    if res.dtype != x.dtype:
        res = res.astype(x.dtype)
    if not copy and isinstance(given, ndarray):
        _ext.copyto(given, res, casting="unsafe")
        res = given
    return res[()] if res.ndim == 0 else res


def angle(z, deg=False):
    z = _n._arr(z)
    if z.dtype.kind == "c":
        a = _ext.ufunc("arctan2", z.imag, z.real)
    else:
        a = _ext.ufunc("arctan2", 0, z)
    if deg:
        a = _ext.ufunc("multiply", a, 180 / np.pi)
    return a


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
    a = _n._arr(a)
    if axis is None or (a.ndim == 0 and axis in (0, -1)):  # NumPy's 0-d as 1-d
        a, axis = a.reshape(-1), 0
    axis = normalize_axis_index(axis, a.ndim)
    idx = _index_array(indices)
    n = a.shape[axis]
    if mode in ("wrap", "clip"):
        if n == 0:
            raise IndexError("cannot do a non-empty take from an empty axes.")
        if mode == "wrap":
            idx = idx % n if isinstance(idx, int) else _ext.ufunc("remainder", idx, n)
        elif isinstance(idx, int):
            idx = builtins.min(builtins.max(idx, 0), n - 1)
        else:
            idx = _n.clip(idx, 0, n - 1)
    elif mode != "raise":
        raise ValueError(
            f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})"
        )
    res = a[(slice(None),) * axis + (idx,)]
    if isinstance(idx, int) and not isinstance(res, ndarray):
        res = _ext.asarray(res)  # a 0-d result, as NumPy's take returns an array
    return _into(out, res)


def take_along_axis(arr, indices, axis=-1):
    arr = _n._arr(arr)
    idx = _n._arr(indices)
    if axis is None:
        if idx.ndim != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        return take(arr, idx)
    if idx.dtype.kind not in "iu":
        raise IndexError("`indices` must be an integer array")
    axis = normalize_axis_index(axis, arr.ndim)
    if idx.ndim != arr.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    # Every other axis indexed by its own range, shaped to broadcast against `indices`.
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
    return arr[tuple(key)]


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


# --------------------------------------------------------------------------- correlations


def _as_rows(m, rowvar):
    x = _n._arr(m)
    if x.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    if x.ndim < 2:
        x = x.reshape(1, -1)
    if not rowvar and x.shape[0] != 1:
        x = x.T
    return x


def cov(
    m,
    y=None,
    rowvar=True,
    bias=False,
    ddof=None,
    fweights=None,
    aweights=None,
    *,
    dtype=None,
):
    """Without weights: the centred rows' product with their transpose, divided by the
    observation count less ``ddof``. Weighted covariances go through NumPy."""
    if fweights is not None or aweights is not None:
        raise _n._Unsupported
    if ddof is not None and ddof != int(ddof):
        raise ValueError("ddof must be integer")
    x = _as_rows(m, rowvar)
    if x.dtype.kind == "c" or (y is not None and _n._arr(y).dtype.kind == "c"):
        raise _n._Unsupported  # the conjugate transpose: NumPy's
    if dtype is None:
        dtype = np.result_type(x.dtype, np.float64)
    if y is not None:
        x = _n.concatenate((x, _as_rows(y, rowvar)), axis=0)
    x = x.astype(dtype)
    if ddof is None:
        ddof = 0 if bias else 1
    observations = x.shape[1]
    fact = builtins.max(observations - ddof, 0)
    if fact == 0:
        _warn("Degrees of freedom <= 0 for slice")
    centred = _ext.ufunc("subtract", x, _n.mean(x, axis=1, keepdims=True))
    c = _n.matmul(centred, centred.T)
    with np.errstate(divide="ignore"):
        factor = np.true_divide(1, fact)  # a float64 scalar, as in NumPy (inf for 0)
    c = _ext.ufunc("multiply", c, factor).astype(dtype)
    return _n.squeeze(c)


def corrcoef(x, y=None, rowvar=True, bias=_NoValue, ddof=_NoValue, *, dtype=None):
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return _ext.ufunc("divide", c, c)  # NaN for a constant, 1 otherwise, as NumPy
    stddev = _ext.ufunc("sqrt", diagonal(c))
    c = _ext.ufunc("divide", c, stddev.reshape(-1, 1))
    c = _ext.ufunc("divide", c, stddev.reshape(1, -1))
    return _n.clip(c, -1, 1)


def convolve(a, v, mode="full"):
    """The discrete convolution as a sum of shifted, scaled copies of the longer input:
    one step per element of the shorter one (at most 64 here; longer kernels go through
    NumPy)."""
    a, v = _n._arr(a), _n._arr(v)
    if a.ndim != 1 or v.ndim != 1:
        raise _n._Unsupported  # NumPy's own errors for other shapes
    if a.shape[0] < v.shape[0]:
        a, v = v, a
    if a.shape[0] == 0:
        raise ValueError("a cannot be empty")
    if v.shape[0] == 0:
        raise ValueError("v cannot be empty")
    if v.shape[0] > 64 or a.dtype.kind not in "biufc" or v.dtype.kind not in "biufc":
        raise _n._Unsupported
    n, k = a.shape[0], v.shape[0]
    dtype = np.result_type(a.dtype, v.dtype)
    if dtype == np.bool_:
        raise _n._Unsupported
    full = n + k - 1
    out = _ext.full((full,), 0, dtype)
    for j in builtins.range(k):
        # out[j : j + n] += v[j] * a
        part = out[j : j + n]
        _ext.copyto(
            part, _ext.ufunc("add", part, _ext.ufunc("multiply", a, v[j : j + 1]))
        )
    if mode == "full":
        return out
    if mode == "same":
        start = (k - 1) // 2
        return out[start : start + n]
    if mode == "valid":
        return out[k - 1 : n]
    raise ValueError(f"mode must be one of 'valid', 'same', or 'full' (got {mode!r})")


# --------------------------------------------------------------------------- histogram


def _span(last, first):
    """``last - first`` as NumPy's histogram takes it: signed integers subtracted as
    their unsigned type (the span of an int8 range may not fit int8). Scalars only."""
    dt = np.result_type(last, first)
    if dt.kind == "i":
        unsigned = np.dtype(f"u{dt.itemsize}")
        return np.subtract(
            np.asarray(last, dt),
            np.asarray(first, dt),
            casting="unsafe",
            dtype=unsigned,
        )
    return np.subtract(last, first, dtype=dt)


def histogram(a, bins=10, range=None, density=None, weights=None):
    """Equal-width bins, as NumPy computes them: the bin of each value from its offset
    scaled to the bin count, corrected by comparing with the edges (the scaling may be an
    ulp off there), the last bin closed. Other bin specifications go through NumPy."""
    a = _n._arr(a).reshape(-1)
    if isinstance(bins, str) or _n.ndim(bins) != 0 or a.dtype.kind not in "if":
        raise _n._Unsupported  # edges given, estimators, and unsigned/bool/complex data
    try:
        nbins = operator.index(bins)
    except TypeError:
        raise TypeError("`bins` must be an integer, a string, or an array") from None
    if nbins < 1:
        raise ValueError("`bins` must be positive, when an integer")
    w = None
    if weights is not None:
        w = _n._arr(weights).reshape(-1)
        if w.shape != a.shape:
            raise ValueError("weights should have the same shape as a.")
        if w.dtype.kind not in "biuf":
            raise _n._Unsupported
    if range is not None:
        first, last = range
        if first > last:
            raise ValueError("max must be larger than min in range parameter.")
        if not (np.isfinite(first) and np.isfinite(last)):
            raise ValueError(f"supplied range of [{first}, {last}] is not finite")
    elif a.size == 0:
        first, last = 0, 1
    else:
        lo, hi = _n.min(a), _n.max(a)  # both recorded before the one flush
        first, last = np.asarray(lo)[()], np.asarray(hi)[()]
        if not (np.isfinite(first) and np.isfinite(last)):
            raise ValueError(f"autodetected range of [{first}, {last}] is not finite")
    if first == last:
        first, last = first - 0.5, last + 0.5
    edge_type = np.result_type(first, last, a.dtype)
    if edge_type.kind in "iu":
        edge_type = np.result_type(edge_type, float)
    # The edges are NumPy's own (from scalars: nothing to flush), checked as NumPy does.
    host_edges = np.linspace(first, last, nbins + 1, endpoint=True, dtype=edge_type)
    if np.any(host_edges[:-1] >= host_edges[1:]):
        raise ValueError(
            f"Too many bins for data range. Cannot create {nbins} finite-sized bins."
        )
    edges = _ext.asarray(host_edges)
    u = _ext.ufunc
    keep = u("logical_and", u("greater_equal", a, first), u("less_equal", a, last))
    x = a if a.dtype == edge_type else a.astype(edge_type)
    scaled = u(
        "multiply", u("divide", u("subtract", x, first), _span(last, first)), nbins
    )
    idx = scaled.astype(np.intp)
    idx = _ext.where(u("equal", idx, nbins), u("subtract", idx, 1), idx)
    # Values outside the range are dropped below; their index only has to be valid.
    idx = _ext.where(keep, u("minimum", u("maximum", idx, 0), nbins - 1), 0)
    idx = _ext.where(u("less", x, edges[idx]), u("subtract", idx, 1), idx)
    idx = u("maximum", idx, 0)
    up = u(
        "logical_and",
        u("greater_equal", x, edges[u("add", idx, 1)]),
        u("not_equal", idx, nbins - 1),
    )
    idx = _ext.where(up, u("add", idx, 1), idx)
    idx = _ext.where(keep, idx, 0)
    count_type = np.dtype(np.intp) if w is None else w.dtype
    # NumPy counts with bincount: in intp, or summing the weights in float64.
    ones = (
        _ext.full(a.shape, 1, np.dtype(np.intp)) if w is None else w.astype(np.float64)
    )
    added = _ext.where(keep, ones, _ext.full((), 0, ones.dtype))
    counts = _ext.full((nbins,), 0, ones.dtype)
    if a.size:
        _ext.put_flat(counts, idx.astype(np.int64), added, accumulate=True)
    if counts.dtype != count_type:
        counts = counts.astype(count_type)
    if density:
        widths = diff(edges).astype(np.float64)
        counts = u("divide", u("divide", counts, widths), _n.sum(counts))
    return counts, edges


#: Natives by name, merged into ``_native.FUNCTIONS``.
FUNCTIONS = {
    name: obj
    for name, obj in list(globals().items())
    if callable(obj)
    and not name.startswith("_")
    and getattr(obj, "__module__", None) == __name__
}
