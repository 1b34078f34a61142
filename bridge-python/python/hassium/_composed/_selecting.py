"""Selecting and placing elements by a mask, by flat indices, by an index into a list of
choices or along the diagonal (``compress``, ``extract``, ``place``, ``putmask``,
``put``, ``choose``, ``fill_diagonal``), ``trim_zeros`` (a view, its extent read in one
flush), and the
Array API's cumulative sums and products: compositions of the native gathers,
scatters, boolean indexing, ``where`` and scans, with NumPy's rules and messages.

Writing functions write through the array they are given; where that array is not
C-contiguous, its flat view would be a copy, so those cases go through NumPy
(``_Unsupported``), as do arguments NumPy reads in ways not spelled out here.
"""

import builtins
import operator

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from .. import _hassium as _ext
from .. import _native as _n
from ._arranging import take
from ._helpers import _into, _read_together

ndarray = _ext.ndarray


#: NumPy's words for a read-only target, per function.
_READ_ONLY = {
    "put": "put: output array is read-only",
    "putmask": "putmask: output array is read-only",
    "place": "WRITEBACKIFCOPY base is read-only",
    "fill_diagonal": "underlying array is read-only",
}


def _flat_view(a, what):
    """``a`` as a 1-d view that writes through, or ``_Unsupported``."""
    if not isinstance(a, ndarray):
        raise _n._Unsupported
    if not a.flags.writeable:
        raise ValueError(_READ_ONLY[what])
    if not a.flags.c_contiguous:
        raise _n._Unsupported
    return a.reshape(-1)


def _cycled(values, n, dtype):
    """``values`` flattened and repeated to ``n`` elements of ``dtype``."""
    v = _n._arr(values).reshape(-1)
    if v.dtype != dtype:
        v = v.astype(dtype)
    if v.shape[0] == n:
        return v
    return take(v, _ext.arange(0, n, 1, np.dtype(np.intp)), mode="wrap")


def _truth(a):
    """``a`` as booleans (nonzero is true), as NumPy reads a condition or a mask."""
    return a if a.dtype == np.bool_ else _ext.ufunc("not_equal", a, 0)


def _flat_mask(mask, n, what):
    """``mask`` flattened to booleans, which must cover the ``n`` elements of the data."""
    m = _n._arr(mask).reshape(-1)
    if m.shape[0] != n:
        raise ValueError(f"{what}: mask and data must be the same size")
    return _truth(m)


def compress(condition, a, axis=None, out=None):
    if axis is not None:
        operator.index(axis)  # NumPy's TypeError for a non-integer axis comes first
    cond = _n._arr(condition)
    if cond.ndim != 1:
        raise ValueError("condition must be a 1-d array")
    cond = _truth(cond)
    a = _n._arr(a)
    idx = _n.nonzero(cond)[0]
    return take(a, idx, axis=axis, out=out)


def extract(condition, arr):
    cond = _truth(_n._arr(condition).reshape(-1))
    return take(_n._arr(arr).reshape(-1), _n.nonzero(cond)[0])


def _values_in(values, dtype):
    """The values of `putmask` and `place` as NumPy takes them: an array cast under
    'safe' (NumPy's TypeError otherwise), anything else (a Python or NumPy scalar, a
    list) converted to ``dtype`` as an assignment converts it, item by item: a float
    into bools, a NumPy scalar wrapped, a Python int out of range its OverflowError."""
    if isinstance(values, (ndarray, np.ndarray)):
        vd = values.dtype
        if not np.can_cast(vd, dtype, "safe"):
            raise TypeError(
                f"Cannot cast array data from {vd!r} to {dtype!r} according to the rule "
                "'safe'"
            )
        return _n._arr(values)
    return _host_values(values, dtype)


def _host_values(values, dtype):
    """Values that are not an array (a Python or NumPy scalar, a list) converted to
    ``dtype`` as NumPy's assignment converts them (NaN into integers is its ValueError)."""
    with np.errstate(all="ignore"):  # NumPy's cast of a NumPy scalar warns at most
        return _n._arr(np.array(values, dtype=dtype))


def place(arr, mask, vals):
    flat = _flat_view(arr, "place")
    m = _flat_mask(mask, flat.shape[0], "place")
    v = _values_in(vals, flat.dtype).reshape(-1)
    n = int(_n.count_nonzero(m))
    if n == 0:
        return
    if v.shape[0] == 0:
        raise ValueError("Cannot insert from an empty array!")
    flat[m] = _cycled(v, n, flat.dtype)


def putmask(a, mask, values):
    flat = _flat_view(a, "putmask")
    m = _flat_mask(mask, flat.shape[0], "putmask")
    v = _values_in(values, flat.dtype).reshape(-1)
    if v.shape[0] == 0:
        return
    # a.flat[i] = values[i % len(values)] wherever the mask is set: one lazy select.
    flat[...] = _n.where(m, _cycled(v, flat.shape[0], flat.dtype), flat)


def _indices_in(ind):
    """``put``'s indices as NumPy takes them: an array cast to intp under 'safe',
    anything else converted (a float truncated, an int beyond a C long its
    OverflowError)."""
    if not isinstance(ind, (ndarray, np.ndarray)):
        return _host_values(ind, np.dtype(np.intp))
    return _intp_indices(ind)


def _intp_indices(ind):
    """An index array as intp, cast under 'safe' as NumPy casts it (its TypeError for
    uint64 or floats)."""
    idx = _n._arr(ind)
    intp = np.dtype(np.intp)
    if idx.dtype != intp and not np.can_cast(idx.dtype, intp, "safe"):
        what = "scalar" if idx.ndim == 0 else "array data"
        raise TypeError(
            f"Cannot cast {what} from {idx.dtype!r} to {intp!r} according to the rule "
            "'safe'"
        )
    return idx if idx.dtype == intp else idx.astype(intp)


def _check_clipmode(mode):
    if mode not in ("wrap", "clip", "raise"):
        raise ValueError(
            f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})"
        )


def put(a, ind, v, mode="raise"):
    if isinstance(a, ndarray):
        _check_clipmode(mode)  # NumPy reads the mode with the arguments, first
    flat = _flat_view(a, "put")
    idx = _indices_in(ind).reshape(-1)
    if idx.shape[0] and flat.shape[0] == 0:
        raise IndexError("cannot replace elements of an empty array")
    vals = _n._arr(v) if isinstance(v, ndarray) else _host_values(v, flat.dtype)
    vals = vals.reshape(-1)
    if idx.shape[0] == 0 or vals.shape[0] == 0:
        return
    n = flat.shape[0]
    if mode == "wrap":
        idx = _ext.ufunc("remainder", idx, n)
    elif mode == "clip":
        idx = _n.clip(idx, 0, n - 1)
    flat[idx] = _cycled(vals, idx.shape[0], flat.dtype)


def _any_outside(idx, n):
    """Whether an index lies outside ``[0, n)``: a flush, as NumPy's error is raised
    by the call."""
    return builtins.bool(
        _n.any(_n.logical_or(_n.less(idx, 0), _n.greater_equal(idx, n)))
    )


def choose(a, choices, out=None, mode="raise"):
    _check_clipmode(mode)
    if isinstance(choices, (ndarray, np.ndarray)):
        if choices.ndim == 0:
            raise _n._Unsupported  # NumPy's own error for a 0-d sequence
        choices = [choices[i, ...] for i in range(choices.shape[0])]
    choices = list(choices)
    n = len(choices)
    if n == 0:
        raise ValueError("0-length sequence.")
    idx = _intp_indices(a)
    # One dtype for all choices, Python numbers weak (NEP 50), and those cast to it
    # unsafely, as NumPy converts them (a 300 among int8 choices wraps).
    dtype = _n._result_type(*choices)
    arrays = []
    for c in choices:
        if _n._is_python_scalar(c):
            with np.errstate(all="ignore"):
                c = np.asarray(c).astype(dtype)
        arrays.append(_n._arr(c).astype(dtype, copy=False))
    idx, *arrays = _n.broadcast_arrays(idx, *arrays)
    if mode == "raise":
        if _any_outside(idx, n):
            raise ValueError("invalid entry in choice array")
    elif mode == "wrap":
        idx = _n.remainder(idx, n)
    else:
        idx = _n.clip(idx, 0, n - 1)
    # One selection per further choice: the work fuses into one pass over the result.
    res = arrays[0].copy() if n == 1 else arrays[0]
    for k in range(1, n):
        res = _n.where(_n.equal(idx, k), arrays[k], res)
    if out is not None:
        if not isinstance(out, ndarray):
            raise _n._Unsupported
        if out.shape != res.shape:
            raise TypeError("choose: invalid shape for output array.")
    return _into(out, res)


def trim_zeros(filt, trim="fb", axis=None):
    """The extent of the nonzero elements along each axis trimmed, from the first and
    last place along it where any is nonzero, read in one flush; the result is a view
    (for a list, its slice), as NumPy slices."""
    ours = filt if isinstance(filt, ndarray) else None
    if ours is None and isinstance(filt, np.ndarray):
        ours = filt = _n._arr(filt)
    if ours is None:
        ours = _n._arr(filt)
    trim = trim.lower()
    if trim not in {"fb", "bf", "f", "b"}:
        raise ValueError(f"unexpected character(s) in `trim`: {trim!r}")
    if axis is None:
        axes = tuple(builtins.range(ours.ndim))
    else:
        axes = normalize_axis_tuple(axis, ours.ndim, argname="axis")
    if not axes:
        return filt
    nonzero = _truth(ours)
    # Along each trimmed axis, which places hold a nonzero anywhere across the others:
    # the first of them and the first from the end, read with whether there is any
    # nonzero at all in one flush.
    found, ends = False, []
    if ours.size:
        intp = np.dtype(np.intp)
        for ax in axes:
            others = tuple(d for d in builtins.range(ours.ndim) if d != ax)
            held = _n.any(nonzero, axis=others) if others else nonzero
            ends += [_n.argmax(held).astype(intp), _n.argmax(held[::-1]).astype(intp)]
        found, *ends = _read_together(_n.any(nonzero).astype(intp), *ends)
    key = [slice(None)] * ours.ndim
    for k, ax in enumerate(axes):
        if not found:
            key[ax] = slice(0, 0)  # all zero: NumPy's empty slice on every trimmed axis
        else:
            start = int(ends[2 * k]) if "f" in trim else None
            stop = ours.shape[ax] - int(ends[2 * k + 1]) if "b" in trim else None
            key[ax] = slice(start, stop)
    if len(key) == 1:
        return filt[key[0]]  # a list stays a list, as in NumPy
    return filt[tuple(key)]


def fill_diagonal(a, val, wrap=False):
    if not isinstance(a, ndarray):
        raise _n._Unsupported
    if a.ndim < 2:
        raise ValueError("array must be at least 2-d")
    if a.ndim == 2:
        step = a.shape[1] + 1
        end = None if wrap else a.shape[1] * a.shape[1]
    else:
        if any(d != a.shape[0] for d in a.shape):
            raise ValueError("All dimensions of input must be of equal length")
        step = 1 + sum(int(np.prod(a.shape[:k])) for k in range(1, a.ndim))
        end = None
    diag = _flat_view(a, "fill_diagonal")[:end:step]
    if diag.shape[0]:
        diag[...] = _cycled(val, diag.shape[0], a.dtype)


def _cumulative(name, x, axis, dtype, include_initial, identity):
    x = _n._arr(x)
    if x.ndim == 0:  # one element along one axis, as in NumPy
        x = x.reshape(1)
    if isinstance(axis, tuple):  # one axis in a tuple is that axis, as in NumPy
        for ax in axis:  # each in bounds first: NumPy's AxisError before the count
            normalize_axis_index(ax, x.ndim)
        if len(axis) != 1:
            raise ValueError("accumulate does not allow multiple axes")
        if include_initial:
            # NumPy indexes a list of dimensions with the axis to add the initial row.
            raise TypeError("list indices must be integers or slices, not tuple")
        (axis,) = axis
    if axis is None:
        if x.ndim > 1:
            raise ValueError(
                "For arrays which have more than one dimension ``axis`` argument is "
                "required."
            )
        axis = 0
    axis = normalize_axis_index(axis, x.ndim)
    res = getattr(_n, name)(x, axis=axis, dtype=dtype)
    if include_initial:
        shape = list(res.shape)
        shape[axis] = 1
        first = _ext.full(tuple(shape), identity, res.dtype)
        res = _n.concatenate([first, res], axis=axis)
    return res


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False, out=None):
    return _into(out, _cumulative("cumsum", x, axis, dtype, include_initial, 0))


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False, out=None):
    return _into(out, _cumulative("cumprod", x, axis, dtype, include_initial, 1))
