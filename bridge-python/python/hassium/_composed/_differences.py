"""Differences, integrals and gradients along an axis, and ``unwrap`` (a correction of
the differences, summed back)."""

import builtins

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from .. import _hassium as _ext
from .. import _native as _n
from ._helpers import _along

_NoValue = np._NoValue


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


def unwrap(p, discont=None, axis=-1, *, period=2 * np.pi):
    if not isinstance(period, (int, float, np.integer, np.floating)):
        raise _n._Unsupported  # an array of periods broadcasts against the differences
    p = _n._arr(p)
    dd = diff(p, axis=axis)
    if discont is None:
        discont = period / 2
    later = _along(p.ndim, axis, slice(1, None))
    # NumPy's type: the differences' with the period's (a Python period is weak).
    dtype = _n._result_type(dd, period)
    if dtype.kind in "iu":
        # Integer periods: an odd one has no difference half way round to settle.
        high, rem = divmod(period, 2)
        boundary_ambiguous = rem == 0
    else:
        high, boundary_ambiguous = period / 2, True
    low = -high
    # Each difference brought into [low, high), then the corrections it needs, summed
    # along the axis and added to every element after the first.
    ddmod = _n.add(_n.mod(_n.subtract(dd, low), period), low)
    if boundary_ambiguous:
        # Half way round: the direction of the difference decides, as in NumPy.
        at_low = _n.logical_and(_n.equal(ddmod, low), _n.greater(dd, 0))
        _n.copyto(ddmod, high, where=at_low)
    correction = _n.subtract(ddmod, dd)
    _n.copyto(correction, 0, where=_n.less(_n.absolute(dd), discont))
    up = p.astype(dtype)
    up[later] = _n.add(p[later], _n.cumsum(correction, axis=axis))
    return up


def trapezoid(y, x=None, dx=1.0, axis=-1):
    # NumPy's order of steps, so that bad input fails where it fails there: the
    # spacing first (`diff(x, axis=axis)` checks the axis against x), then the axis
    # used as a list index into y's dimensions (an IndexError, not an AxisError).
    y = _n._arr(y)
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
    upper = [slice(None)] * y.ndim
    lower = [slice(None)] * y.ndim
    upper[axis] = slice(1, None)
    lower[axis] = slice(None, -1)
    pairs = _ext.ufunc("add", y[tuple(upper)], y[tuple(lower)])
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
    if not steps.shape[0]:
        # NumPy compares the steps with the first: fewer than two coordinates have none.
        raise IndexError("index 0 is out of bounds for axis 0 with size 0")
    # Evenly spaced coordinates take the uniform formulas, as in NumPy (one flush).
    if builtins.bool(_n.all(_ext.ufunc("equal", steps, steps[:1]))):
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
