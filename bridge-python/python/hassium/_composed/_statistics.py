"""Small statistics: ranges, averages, counts, covariances, convolution, histograms
(``histogram``, ``histogramdd``, ``histogram2d`` with equal-width bins: NumPy's edges,
made on the host from the range or from the data's extremes read in one flush)."""

import builtins
import math
import operator

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from .. import _hassium as _ext
from .. import _native as _n
from ._arranging import take_along_axis
from ._differences import diff
from ._helpers import _into, _read_together, _warn
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
    if axis is not None:
        # First, as NumPy: no reduction's rule for a 0-d array along axis 0 applies.
        axis = normalize_axis_tuple(axis, a.ndim, argname="axis")
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
        w = _bincount_weights(weights, x.shape[0])
    # uint64 converts as NumPy converts it: values from 2**63 up turn negative.
    idx = x if x.dtype == np.int64 else x.astype(np.int64)
    n = minlength
    if idx.shape[0]:
        lo, hi = map(int, _read_together(_n.min(idx), _n.max(idx)))  # one flush
        if lo < 0:
            raise ValueError("'list' argument must have no negative elements")
        n = builtins.max(n, hi + 1)
    # An empty `x` gives integer counts even with weights: NumPy returns its
    # `zeros(minlength, intp)` before looking at them.
    counted = weights is None or not idx.shape[0]
    counts = _ext.full((n,), 0, np.dtype(np.intp if counted else np.float64))
    if idx.shape[0]:
        values = _ext.full(idx.shape, 1, counts.dtype) if weights is None else w
        _ext.put_flat(counts, idx, values, accumulate=True)
    return counts


# --------------------------------------------------------------------------- correlations


def _as_rows(m, rowvar, name="m"):
    """``m`` (or ``y``) as rows of variables. With ``rowvar=False`` NumPy transposes
    ``m`` unless it is 1-d, but ``y`` unless it has one row."""
    x = _n._arr(m)
    if x.ndim > 2:
        raise ValueError(f"{name} has more than 2 dimensions")
    one_d = x.ndim < 2
    if one_d:
        x = x.reshape(1, -1)
    if not rowvar and (x.shape[0] != 1 if name == "y" else not one_d):
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
    if y is not None:
        y = _as_rows(y, rowvar, "y")
    if dtype is None:
        dtype = np.result_type(x.dtype, np.float64)
    if x.shape[0] == 0:
        return _ext.empty((0, 0), np.dtype(np.float64))  # NumPy's, before y is read
    if y is not None:
        x = _n.concatenate((x, y), axis=0)
    x = x.astype(dtype)
    if ddof is None:
        ddof = 0 if bias else 1
    observations = x.shape[1]
    fact = builtins.max(observations - ddof, 0)
    if fact == 0:
        _warn("Degrees of freedom <= 0 for slice")
    # In place, as NumPy centres: a float mean into bool or integer rows (dtype=int)
    # is NumPy's same_kind casting error. `x` is a fresh copy (astype copies).
    centred = x
    _ext.ufunc("subtract", centred, _n.mean(x, axis=1, keepdims=True), out=centred)
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


def _extremes(columns, ranges):
    """For each of ``columns`` (of one dtype), its least and greatest value, read on the
    host where NumPy's ``_get_outer_edges`` reads them -- no range given and the column
    not empty -- else None; all of them in one flush."""
    wanted = [
        i for i, (c, r) in enumerate(zip(columns, ranges)) if r is None and c.size
    ]
    found = [None] * len(columns)
    if wanted:
        values = _read_together(
            *(f(columns[i]) for i in wanted for f in (_n.min, _n.max))
        )
        for k, i in enumerate(wanted):
            found[i] = (values[2 * k], values[2 * k + 1])
    return found


def _outer_edges(range, extremes):
    """NumPy's ``_get_outer_edges``: the range given, checked, or the data's own
    (``extremes``, from ``_extremes``); a range of one value widened by a half either
    way. Host scalars of NumPy's types."""
    if range is not None:
        first, last = range
        if first > last:
            raise ValueError("max must be larger than min in range parameter.")
        if not (np.isfinite(first) and np.isfinite(last)):
            raise ValueError(f"supplied range of [{first}, {last}] is not finite")
    elif extremes is None:
        first, last = 0, 1
    else:
        first, last = extremes
        if not (np.isfinite(first) and np.isfinite(last)):
            raise ValueError(f"autodetected range of [{first}, {last}] is not finite")
    if first == last:
        first, last = first - 0.5, last + 0.5
    return first, last


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
    first, last = _outer_edges(range, _extremes([a], [range])[0])
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


def _sample_columns(sample):
    """The coordinates of ``histogramdd``'s points, one array per dimension, as NumPy
    reads the sample: an array of (N, D) as it is, anything else through
    ``atleast_2d(sample).T`` (a sequence of D coordinate arrays, or N numbers)."""
    if isinstance(sample, (ndarray, np.ndarray)):
        s = _n._arr(sample)
        if s.ndim == 2:
            return [s[:, i] for i in builtins.range(s.shape[1])]
        if s.ndim > 2:
            raise _n._Unsupported  # NumPy's unpacking error
        return [s.reshape(-1)]
    if not isinstance(sample, (list, tuple)):
        return [_n._arr(sample).reshape(-1)]
    rows = [_n._arr(r) for r in sample]
    if builtins.all(r.ndim == 0 for r in rows):
        return [_n._arr(sample)]
    if builtins.any(r.ndim != 1 or r.shape != rows[0].shape for r in rows):
        raise _n._Unsupported  # NumPy's errors for ragged or deeper samples
    dtype = np.result_type(*(r.dtype for r in rows))  # one array in NumPy
    return [r if r.dtype == dtype else r.astype(dtype) for r in rows]


def _bincount_weights(weights, n):
    """``weights`` as NumPy's ``bincount`` reads them: 1-d, ``n`` long, float64."""
    w = _n._arr(weights)
    if w.dtype.kind == "c":
        raise TypeError(
            f"Cannot cast array data from {w.dtype!r} to dtype('float64') according "
            "to the rule 'safe'"
        )
    if w.dtype.kind not in "biuf":
        raise _n._Unsupported
    if w.ndim != 1:
        raise ValueError(
            "object too deep for desired array"
            if w.ndim > 1
            else "object of too small depth for desired array"
        )
    if w.shape[0] != n:
        raise ValueError("The weights and list don't have the same length.")
    return w.astype(np.float64)


def histogramdd(sample, bins=10, range=None, density=None, weights=None):
    """Bins of equal width given as counts, as NumPy bins them: its edges (``linspace``
    on the host from the range or the data's extremes, read in one flush), the bin of
    each coordinate by ``searchsorted`` on the right with the last edge moved into the
    last bin, one flat index per point, and a scatter-add of ones or weights. Edges
    given as arrays go through NumPy."""
    columns = _sample_columns(sample)
    dims = len(columns)
    if dims == 0:
        raise _n._Unsupported  # points of no dimension: NumPy's own answer
    points = columns[0].shape[0]
    if builtins.any(c.dtype.kind not in "biuf" for c in columns):
        raise _n._Unsupported  # complex coordinates, and what is no number
    try:
        if len(bins) != dims:
            raise ValueError(
                "The dimension of bins must be equal to the dimension of the sample x."
            )
    except TypeError:
        bins = dims * [bins]
    if builtins.any(_n.ndim(b) != 0 for b in bins):
        raise _n._Unsupported  # edges given
    if range is None:
        range = (None,) * dims
    elif len(range) != dims:
        raise ValueError("range argument must have one entry per dimension")
    # Every extreme needed is recorded before the first is read: one flush.
    extremes = _extremes(columns, range)
    edges, places = [], []
    for i, (count, column) in enumerate(zip(bins, columns)):
        if count < 1:
            raise ValueError(f"`bins[{i}]` must be positive, when an integer")
        first, last = _outer_edges(range[i], extremes[i])
        try:
            n = operator.index(count)
        except TypeError as e:
            raise TypeError(f"`bins[{i}]` must be an integer, when a scalar") from e
        host = np.linspace(first, last, n + 1)
        edges.append(host)
        place = _ext.searchsorted(_ext.asarray(host), column, True)
        on_last = _ext.ufunc("equal", column, _ext.full((), host[-1], host.dtype))
        places.append(_ext.where(on_last, _ext.ufunc("subtract", place, 1), place))
    # Each dimension has an outlier bin either side of its edges.
    shape = tuple(len(e) + 1 for e in edges)
    size = math.prod(shape)
    if size > np.iinfo(np.intp).max:
        raise _n._Unsupported  # NumPy's error for a histogram too large to index
    w = None if weights is None else _bincount_weights(weights, points)
    intp = np.dtype(np.intp)
    flat = None
    for place, stride in zip(places, _c_strides(shape)):
        term = _ext.ufunc("multiply", place, stride, dtype=intp)
        flat = term if flat is None else _ext.ufunc("add", flat, term)
    counts = _ext.full((size,), 0, intp if w is None or not points else w.dtype)
    if points:
        ones = _ext.full((points,), 1, intp) if w is None else w
        _ext.put_flat(counts, flat, ones, accumulate=True)
    hist = counts.reshape(shape).astype(np.float64)[(slice(1, -1),) * dims]
    if density:
        total = _n.sum(hist)
        for i, e in enumerate(edges):
            widths = np.diff(e).reshape(
                [len(e) - 1 if d == i else 1 for d in builtins.range(dims)]
            )
            hist = _ext.ufunc("divide", hist, _ext.asarray(widths))
        hist = _ext.ufunc("divide", hist, total)
    return hist, [_ext.asarray(e) for e in edges]


def _c_strides(shape):
    """The element strides of a C-ordered array of ``shape``."""
    strides, step = [], 1
    for length in reversed(shape):
        strides.append(step)
        step *= length
    return strides[::-1]


def histogram2d(x, y, bins=10, range=None, density=None, weights=None):
    """``histogramdd`` of the points (x, y), as NumPy's; edges given go through NumPy."""
    try:
        n = len(bins)
    except TypeError:
        n = 1
    if n != 1 and n != 2:
        raise _n._Unsupported  # one array of edges for both
    hist, edges = histogramdd([x, y], bins, range, density, weights)
    return hist, edges[0], edges[1]


# --------------------------------------------------------------------------- order statistics
#
# NumPy partitions and reads order statistics at indices it computes from the sample size
# ``n`` and the quantiles ``q`` (Hyndman and Fan's methods). Here the reduced axes are
# merged last and sorted once (NaN last); the indices are computed on the device from a
# count per slice -- ``n`` itself, or the non-NaN count for the nan* functions, which
# then read only the leading non-NaN values -- in the dtypes NumPy computes them in, and
# the neighbours are interpolated with NumPy's ``_lerp``. The engines neither contract
# ``a * b + c`` nor reassociate, so the results are NumPy's bit for bit.

#: Method -> (how the virtual index is made, alpha, beta) for the continuous ones. NumPy's
#: constants, ints where NumPy's are: with an integer q they keep the index an integer.
_QUANTILE_METHODS = {
    "inverted_cdf": ("inverted_cdf", None, None),
    "averaged_inverted_cdf": ("averaged", None, None),
    "closest_observation": ("closest", None, None),
    "interpolated_inverted_cdf": ("continuous", 0, 1),
    "hazen": ("continuous", 0.5, 0.5),
    "weibull": ("continuous", 0, 0),
    "linear": ("linear", None, None),
    "median_unbiased": ("continuous", 1 / 3.0, 1 / 3.0),
    "normal_unbiased": ("continuous", 3 / 8.0, 3 / 8.0),
    "lower": ("lower", None, None),
    "higher": ("higher", None, None),
    "midpoint": ("midpoint", None, None),
    "nearest": ("nearest", None, None),
}


def _moved_last(a, axis):
    """``a`` with the reduced axes merged into one last axis, the kept shape, and the
    shape ``keepdims`` gives (NumPy's ``_ureduce``)."""
    if axis is None:
        return a.reshape(1, -1)[0], (), (1,) * a.ndim
    axes = normalize_axis_tuple(axis, a.ndim)
    keep = [d for d in builtins.range(a.ndim) if d not in axes]
    kept = tuple(a.shape[d] for d in keep)
    # One axis stays as it is; NumPy merges none or several with a -1, which an empty
    # array refuses (its ValueError) unless nothing is kept.
    width = a.shape[axes[0]] if len(axes) == 1 else -1
    moved = a.transpose(keep + list(axes)).reshape(kept + (width,))
    kept_dims = tuple(1 if d in axes else a.shape[d] for d in builtins.range(a.ndim))
    return moved, kept, kept_dims


def _inexact(x):
    """An integer index as float64, for floor and friends (its values are exact)."""
    return x.astype(np.float64) if x.dtype.kind in "iu" else x


def _floor_int(x):
    return _ext.ufunc("floor", x).astype(np.intp)


def _host_q(q, percent):
    """``q`` on the host as NumPy takes it (divided by 100 for percentiles), checked, and
    whether it promotes weakly (a Python int or float)."""
    weak = type(q) in (int, float)
    if isinstance(q, ndarray):
        q = np.asarray(q)  # a few quantiles read back, as NumPy reads them too
    if percent:
        q = np.true_divide(q, 100, out=...)
    q = np.asanyarray(q)
    if q.dtype.kind not in "biuf" or not (
        q.size == 0 or (q.min() >= 0 and q.max() <= 1)
    ):
        if q.dtype.kind in "biuf" or q.dtype.kind == "c":
            raise ValueError(
                "Percentiles must be in the range [0, 100]"
                if percent
                else "Quantiles must be in the range [0, 1]"
            )
        raise _n._Unsupported
    if q.ndim > 2:
        raise ValueError("q must be a scalar or 1d")
    return q, weak


def _order_statistics(s, count, q, method, weak):
    """The ``q`` quantiles (q flattened, last) of every slice of ``s`` (sorted along its
    last axis) whose first ``count`` (shape ``s.shape[:-1] + (1,)``) values are valid."""
    u = _ext.ufunc
    try:
        how, alpha, beta = _QUANTILE_METHODS[method]
    except KeyError:
        raise ValueError(
            f"{method!r} is not a valid method. Use one of: {_QUANTILE_METHODS.keys()}"
        ) from None
    qd = _ext.asarray(np.ascontiguousarray(q.reshape(-1)))
    last = u("subtract", count, 1)  # the last valid index; NumPy's -1
    if q.dtype.kind in "biu":
        # q is 0 or 1; NumPy computes in q's integer type (a Python int's: int64).
        if q.dtype.kind == "u" or q.dtype.itemsize < 8 and q.dtype.kind == "i":
            raise _n._Unsupported  # n - 1 overflowing a narrow q's type, as NumPy's
        qd = qd.astype(np.int64)
        if how == "linear":  # (n - 1) * q in integers: no interpolation, as NumPy
            how = "lower"
    n = count.astype(qd.dtype)
    gamma = None
    if how == "linear":
        vi = u("multiply", u("subtract", n, 1), qd)
    elif how == "continuous":
        vi = u(
            "subtract",
            u(
                "add",
                u("multiply", n, qd),
                u("add", alpha, u("multiply", qd, 1 - alpha - beta)),
            ),
            1,
        )
    elif how == "averaged":
        vi = u("subtract", u("multiply", n, qd), 1)
    elif how == "midpoint":
        t = _inexact(u("multiply", u("subtract", n, 1), qd))
        vi = u("multiply", 0.5, u("add", u("floor", t), u("ceil", t)))
    if how in ("lower", "higher", "nearest"):
        name = {"lower": "floor", "higher": "ceil", "nearest": "rint"}[how]
        lo = u(name, _inexact(u("multiply", u("subtract", n, 1), qd))).astype(np.intp)
        hi = None
    elif how in ("inverted_cdf", "closest"):
        index = _inexact(u("subtract", u("multiply", n, qd), 1))
        if how == "closest":
            index = u("subtract", index, 0.5)
        prev = u("floor", index)
        at_previous = u("equal", u("subtract", index, prev), 0)
        if how == "closest":
            odd = u("equal", u("remainder", prev, 2), 1)
            at_previous = u("logical_and", at_previous, odd)
        lo = _ext.where(at_previous, prev, u("add", prev, 1)).astype(np.intp)
        lo = u("maximum", lo, 0)
        hi = None
    else:  # interpolation between the neighbours, NumPy's _get_indexes and _get_gamma
        above = u("greater_equal", vi, u("subtract", n, 1))
        below = u("less", vi, 0)
        prev = vi.astype(np.intp) if vi.dtype.kind == "i" else _floor_int(vi)
        nxt = u("add", prev, 1)
        prev = _ext.where(above, -1, _ext.where(below, 0, prev))
        nxt = _ext.where(above, -1, _ext.where(below, 0, nxt))
        gamma = u("subtract", vi, prev).astype(vi.dtype)
        if how == "midpoint":
            gamma = _ext.where(u("equal", u("remainder", vi, 1), 0), 0.0, 0.5)
            gamma = gamma.astype(vi.dtype)
        elif how == "averaged":
            gamma = _ext.where(u("equal", gamma, 0), 0.5, 1.0).astype(vi.dtype)
        lo = _ext.where(u("less", prev, 0), last, prev)
        hi = _ext.where(u("less", nxt, 0), last, nxt)
    width = s.shape[-1]
    lo = u("minimum", u("maximum", lo, 0), width - 1)  # in range where count is 0
    a = take_along_axis(s, lo, axis=-1)
    if hi is None:
        return a
    hi = u("minimum", u("maximum", hi, 0), width - 1)
    b = take_along_axis(s, hi, axis=-1)
    return _lerp(a, b, gamma, weak)


def _lerp(a, b, gamma, weak):
    """NumPy's ``_lerp``: ``a + (b - a) * t``, or ``b - (b - a) * (1 - t)`` from
    ``t >= 0.5``; a weak ``q`` (a Python float) makes ``t`` a Python float there, which
    promotes weakly and whose ``1 - t`` is taken in double precision."""
    u = _ext.ufunc
    diff = u("subtract", b, a)
    if weak:
        weak_type = np.result_type(diff.dtype, 0.0)
        t = gamma.astype(weak_type)
        rest = u("subtract", 1.0, gamma.astype(np.float64)).astype(weak_type)
        half = u("greater_equal", gamma.astype(np.float64), 0.5)
    else:
        t = gamma
        rest = u("subtract", 1, gamma)
        half = u("greater_equal", gamma, 0.5)
    low = u("add", a, u("multiply", diff, t))
    high = u("subtract", b, u("multiply", diff, rest))
    if high.dtype != low.dtype:
        high = high.astype(low.dtype)
    return _ext.where(half, high, low)


def _nan_last(s, result):
    """``result`` with NaN (the last sorted value) where a slice of ``s`` holds a NaN."""
    if s.dtype.kind not in "fc" or s.shape[-1] == 0:
        return result
    end = s[..., -1:]
    return _ext.where(_ext.ufunc("isnan", end), end, result)


def _shaped(r, q, kept, kept_dims, keepdims):
    """``r`` (kept shape + q flattened) as NumPy shapes it: q's axes first."""
    r = r.reshape(kept + q.shape)
    k = len(kept)
    r = r.transpose(tuple(builtins.range(k, k + q.ndim)) + tuple(builtins.range(k)))
    if keepdims:
        r = r.reshape(q.shape + kept_dims)
    return r


def _finish(result, out):
    if out is not None:
        out_arr = _n._arr(out)
        if out_arr.shape != result.shape or out_arr.dtype != result.dtype:
            raise _n._Unsupported  # NumPy's casting rules for out=
        return _into(out, result)
    return result


def _quantile(a, q, axis, out, method, keepdims, weights, percent, skip_nan):
    if weights is not None:
        raise _n._Unsupported
    a = _n._arr(a)
    if a.dtype.kind == "c":
        raise TypeError("a must be an array of real numbers")
    if a.dtype.kind not in "biuf":
        raise _n._Unsupported
    q, weak = _host_q(q, percent)
    keepdims = builtins.bool(keepdims) if keepdims is not _NoValue else False
    moved, kept, kept_dims = _moved_last(a, axis)
    width = moved.shape[-1]
    if width == 0:
        raise IndexError("index -1 is out of bounds for axis 0 with size 0")
    s = _ext.sort(moved, moved.ndim - 1, False)
    if skip_nan and s.dtype.kind == "f":
        valid = _ext.ufunc("logical_not", _ext.ufunc("isnan", s))
        count = _n.sum(valid, axis=-1, dtype=np.int64, keepdims=True)
    else:
        count = _ext.full(kept + (1,), width, np.dtype(np.int64))
    r = _order_statistics(s, count, q, method, weak)
    if skip_nan and s.dtype.kind == "f":
        none = _ext.ufunc("equal", count, 0)
        r = _ext.where(none, np.nan, r)
        if (
            r.dtype != s.dtype
            and len(kept)
            and builtins.bool(none[(0,) * len(kept)][0])
        ):
            r = r.astype(s.dtype)  # apply_along_axis takes the first slice's dtype
        if builtins.bool(_n.any(none)):
            _warn("All-NaN slice encountered")
    else:
        r = _nan_last(s, r)
        # NumPy returns the NaN itself (in the data's dtype) for a 0-d result.
        zero_d = not kept and q.ndim == 0 and out is None
        strong = zero_d and r.dtype != s.dtype and s.dtype.kind == "f"
        if strong and builtins.bool(_ext.ufunc("isnan", s[-1])):
            r = s[-1:]
    return _finish(_shaped(r, q, kept, kept_dims, keepdims), out)


def quantile(
    a,
    q,
    axis=None,
    out=None,
    overwrite_input=False,
    method="linear",
    keepdims=False,
    *,
    weights=None,
    interpolation=None,
):
    if interpolation is not None:
        raise _n._Unsupported  # NumPy's deprecated spelling of method=
    return _quantile(a, q, axis, out, method, keepdims, weights, False, False)


def percentile(
    a,
    q,
    axis=None,
    out=None,
    overwrite_input=False,
    method="linear",
    keepdims=False,
    *,
    weights=None,
    interpolation=None,
):
    if interpolation is not None:
        raise _n._Unsupported
    return _quantile(a, q, axis, out, method, keepdims, weights, True, False)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The mean of the middle one or two sorted values, as NumPy takes it (so its dtype
    is ``mean``'s), NaN where a slice holds one."""
    a = _n._arr(a)
    if a.dtype.kind not in "biufc":
        raise _n._Unsupported
    moved, kept, kept_dims = _moved_last(a, axis)
    s = _ext.sort(moved, moved.ndim - 1, False)
    n = s.shape[-1]
    half = n // 2
    middle = (
        s[..., half : half + 1]
        if n % 2
        else s[..., builtins.max(half - 1, 0) : half + 1]
    )
    r = _nan_last(s, _n.mean(middle, axis=-1, keepdims=True))
    r = r.reshape(kept_dims if keepdims else kept)
    return _finish(r, out)
