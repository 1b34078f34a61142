"""Small statistics: ranges, averages, counts, covariances, convolution, histograms."""

import builtins
import operator

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from .. import _hassium as _ext
from .. import _native as _n
from ._differences import diff
from ._helpers import _warn
from ._indices import diagonal

ndarray = _ext.ndarray

_NoValue = np._NoValue


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


# --------------------------------------------------------------------------- counts


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
