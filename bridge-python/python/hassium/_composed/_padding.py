"""``np.pad`` as copies of slices: the result is allocated once, the array copied into
its middle, and each axis's borders filled in turn from what is already there, so the
whole pad is a few copy instructions that fuse with the program around them.

NumPy's order is kept: axis by axis, each axis's borders span the earlier axes' padded
extent and the later axes' original extent, so corners come out as NumPy's. Modes
``constant``, ``edge``, ``reflect`` (even), ``symmetric`` and ``wrap`` with borders no
wider than the array (one less for ``reflect``); wider borders, the statistic modes, a
callable mode and ``reflect_type="odd"`` go through NumPy.
"""

import numpy as np

from .. import _native as _n

_MODES = ("constant", "edge", "reflect", "symmetric", "wrap")


def _pairs(value, ndim, what):
    """``value`` as one (before, after) pair per axis, as NumPy broadcasts it."""
    value = np.asarray(value)
    if what == "pad_width" and value.dtype.kind not in "iu":
        raise TypeError("`pad_width` must be of integral type.")
    index = what == "pad_width"
    if value.ndim < 3 and (
        value.size == 1 or (value.size == 2 and value.shape != (2, 1))
    ):
        # One number, or one (before, after) pair: every axis takes it (a 0-d array none).
        flat = value.ravel()
        if index and (flat < 0).any():
            raise ValueError("index can't contain negative values")
        pair = (flat[0], flat[-1])
        pairs = [pair] * ndim
    else:
        if index and value.size and value.min() < 0:
            raise ValueError("index can't contain negative values")
        # Broadcast to (ndim, 2) even for a 0-d array: NumPy's error for (2, 2) there.
        pairs = np.broadcast_to(value, (ndim, 2))
    if index:
        return [(int(b), int(e)) for b, e in pairs]
    return [(b, e) for b, e in pairs]


def _fits(mode, n, before, after):
    """Whether borders ``before`` and ``after`` of an axis of length ``n`` are one copy
    each in ``mode``."""
    if before == after == 0 or mode == "constant":
        return True
    if n == 0:
        return False  # NumPy raises: nothing to extend
    if mode == "edge":
        return True
    if mode == "reflect":
        return n > 1 and before <= n - 1 and after <= n - 1
    return before <= n and after <= n  # symmetric, wrap


def pad(array, pad_width, mode="constant", **kwargs):
    if not isinstance(mode, str) or mode not in _MODES:
        raise _n._Unsupported
    constant_values = kwargs.pop("constant_values", 0)
    reflect_type = kwargs.pop("reflect_type", "even")
    if kwargs or reflect_type != "even":
        raise _n._Unsupported  # NumPy words the error, or pads the odd way
    a = _n._arr(array)
    widths = _pairs(pad_width, a.ndim, "pad_width")
    if not all(_fits(mode, n, b, e) for n, (b, e) in zip(a.shape, widths)):
        raise _n._Unsupported
    shape = tuple(n + b + e for n, (b, e) in zip(a.shape, widths))
    out = _n.empty(shape, dtype=a.dtype)
    middle = tuple(slice(b, b + n) for n, (b, _) in zip(a.shape, widths))
    out[middle] = a
    values = _pairs(constant_values, a.ndim, "constant_values")
    for axis, (n, (b, e)) in enumerate(zip(a.shape, widths)):

        def at(start, stop, step=1, axis=axis):
            """The region [start, stop) of this axis (reversed for step -1), with the
            earlier axes whole and the later ones at their original extent."""
            key = list(middle)
            key[:axis] = [slice(None)] * axis
            if step == 1:
                key[axis] = slice(start, stop)
            else:  # stop - 1 down to start
                key[axis] = slice(stop - 1, start - 1 if start > 0 else None, -1)
            return tuple(key)

        if b:
            if mode == "constant":
                out[at(0, b)] = values[axis][0]
            elif mode == "edge":
                out[at(0, b)] = out[at(b, b + 1)]
            elif mode == "reflect":
                out[at(0, b)] = out[at(b + 1, 2 * b + 1, -1)]
            elif mode == "symmetric":
                out[at(0, b)] = out[at(b, 2 * b, -1)]
            else:  # wrap
                out[at(0, b)] = out[at(b + n - b, b + n)]
        if e:
            end = b + n
            if mode == "constant":
                out[at(end, end + e)] = values[axis][1]
            elif mode == "edge":
                out[at(end, end + e)] = out[at(end - 1, end)]
            elif mode == "reflect":
                out[at(end, end + e)] = out[at(end - 1 - e, end - 1, -1)]
            elif mode == "symmetric":
                out[at(end, end + e)] = out[at(end - e, end, -1)]
            else:  # wrap
                out[at(end, end + e)] = out[at(b, b + e)]
    return out
