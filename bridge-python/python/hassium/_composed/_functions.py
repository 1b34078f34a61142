"""Small NumPy functions that are a few ufuncs or a view: ``fix``, ``sinc``, ``select``,
``polyval``, ``vander``, ``logspace``, ``geomspace``, ``rollaxis``,
``ascontiguousarray``, ``isreal``, ``iscomplex``, ``real_if_close`` and ``i0`` (NumPy's
Chebyshev series); ``packbits`` and ``unpackbits`` (shifts, masks and sums); the
products ``cross`` and ``kron``; and ``interp``, a search of ``xp`` and gathers. Each records the
operations NumPy's own version performs, in the same order, so results agree to the
last place where the ufuncs do (``geomspace``'s inner points are powers, as close to
NumPy's as the engine's ``power``). The window functions (``hanning``, ``hamming``,
``blackman``, ``bartlett``) take only a length: NumPy's values, made on the host,
become a new array."""

import builtins
import operator

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from .. import _hassium as _ext
from .. import _native as _n
from ._helpers import _warn

ndarray = _ext.ndarray


def fix(x, out=None):
    return _n.trunc(x, out=out)


def sinc(x):
    x = _n._arr(x)
    x = _n.multiply(np.pi, x)
    # A zero becomes the dtype's epsilon (1e-20 for types without one), as in NumPy.
    eps = np.finfo(x.dtype).eps if x.dtype.kind == "f" else 1e-20
    y = _n.where(x, x, eps)
    return _n.divide(_n.sin(y), y)


def select(condlist, choicelist, default=0):
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if len(condlist) == 0:
        raise ValueError("select with an empty condition list is not possible")
    # Python numbers stay weak in the result type, as NumPy keeps them (NEP 50).
    weak = (int, float, complex)
    choices = [c if type(c) in weak else _n._arr(c) for c in choicelist]
    choices.append(default if type(default) in weak else _n._arr(default))
    try:
        dtype = np.result_type(
            *(c if type(c) in weak else np.empty(0, c.dtype) for c in choices)
        )
    except TypeError as e:
        raise TypeError(
            f"Choicelist and default value do not have a common dtype: {e}"
        ) from None
    conds = _n.broadcast_arrays(*[_n._arr(c) for c in condlist])
    for i, cond in enumerate(conds):
        if cond.dtype != np.bool_:
            raise TypeError(f"invalid entry {i} in condlist: should be boolean ndarray")
    arrays = [c for c in choices if type(c) not in weak]
    shape = _n.broadcast_shapes(conds[0].shape, *(a.shape for a in arrays))
    result = _n.empty(shape, dtype=dtype)
    _n.copyto(result, choices[-1], casting="unsafe")  # as NumPy's `full` fills
    # The first matching condition wins: later choices are written first.
    for choice, cond in zip(choices[-2::-1], conds[::-1]):
        _n.copyto(result, choice, where=cond)
    return result


def polyval(p, x):
    if isinstance(p, np.poly1d) or isinstance(x, np.poly1d):
        raise _n._Unsupported
    p = _n._arr(p)
    x = _n._arr(x)
    if p.ndim == 0:
        raise TypeError("iteration over a 0-d array")
    # Horner's rule from zeros, as NumPy runs it (so a 0-length p gives zeros).
    y = _n.zeros_like(x)
    for k in range(p.shape[0]):
        y = _n.add(_n.multiply(y, x), p[k])
    return y


def vander(x, N=None, increasing=False):
    x = _n._arr(x)
    if x.ndim != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    if N is None:
        N = x.shape[0]
    N = operator.index(N)
    v = _n.empty((x.shape[0], N), dtype=np.promote_types(x.dtype, int))
    tmp = v if increasing else v[:, ::-1]
    if N > 0:
        tmp[:, 0] = 1
    if N > 1:
        tmp[:, 1:] = x[:, None]
        tmp[:, 1:] = _n.cumprod(tmp[:, 1:], axis=1)
    return v


def hanning(M):
    # The window functions take a length, not an array: NumPy computes them on the host
    # and the values come in as a new array. Recorded, their `cos` would be the vector
    # math library's, a few ulps off NumPy's, and the end points of a Hann window would
    # not be exactly 0.
    return _n.asarray(np.hanning(M))


def hamming(M):
    return _n.asarray(np.hamming(M))


def blackman(M):
    return _n.asarray(np.blackman(M))


def bartlett(M):
    return _n.asarray(np.bartlett(M))


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    if not isinstance(base, (float, int)) and np.ndim(base):
        raise _n._Unsupported  # an array of bases broadcasts against the axis
    y = _n.linspace(start, stop, num=num, endpoint=endpoint, axis=axis)
    result = _n.power(base, y)
    return result if dtype is None else result.astype(dtype, copy=False)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    if _n._shape_of(start) != () or _n._shape_of(stop) != ():
        raise _n._Unsupported  # end points along an axis: the native linspace's limit
    # The end points are scalars: NumPy's steps on them run on the host, as its ufuncs
    # of scalars alone do; the sequence itself is `logspace`, recorded.
    start, stop = np.asarray(start), np.asarray(stop)
    if start == 0 or stop == 0:
        raise ValueError("Geometric sequence cannot include zero")
    # As arrays the end points are not weak: an int start makes the result float64.
    dt = np.result_type(start, stop, float(num), np.zeros((), dtype))
    dtype = dt if dtype is None else np.dtype(dtype)
    start, stop = start.astype(dt), stop.astype(dt)
    # Negative (or, complex, rotated) end points: the sequence of their magnitudes,
    # turned back at the end.
    out_sign = np.sign(start)
    start, stop = start / out_sign, stop / out_sign
    result = logspace(
        np.log10(start), np.log10(stop), num=num, endpoint=endpoint, dtype=dt
    )
    # The end points exactly, not as powers of their logarithms.
    if num > 0:
        result[0] = start[()]
        if num > 1 and endpoint:
            result[-1] = stop[()]
    result = _n.multiply(result, out_sign[()])
    if axis != 0:
        result = _n.moveaxis(result, 0, axis)
    return result.astype(dtype, copy=False)


def rollaxis(a, axis, start=0):
    a = _n._arr(a)
    n = a.ndim
    axis = normalize_axis_index(axis, n)
    if start < 0:
        start += n
    if not 0 <= start < n + 1:
        raise np.exceptions.AxisError(
            f"'start' arg requires {-n} <= start < {n + 1}, but {start} was passed in"
        )
    if axis < start:
        start -= 1
    if axis == start:
        return a[...]
    axes = [d for d in range(n) if d != axis]
    axes.insert(start, axis)
    return a.transpose(axes)


def ascontiguousarray(a, dtype=None, *, like=None):
    if like is not None:
        raise _n._Unsupported
    a = _n.asarray(a, dtype=dtype)
    if a.ndim == 0:
        a = a.reshape(1)
    return a if a.flags.c_contiguous else a.copy()


def isreal(x):
    return _n.equal(_n.imag(x), 0)


def iscomplex(x):
    ax = _n._arr(x)
    if ax.dtype.kind == "c":
        return _n.not_equal(ax.imag, 0)
    return _n.zeros(ax.shape, bool)[()]


def real_if_close(a, tol=100):
    a = _n._arr(a)
    if a.dtype.kind != "c":
        return a
    if tol > 1:
        tol = np.finfo(a.dtype).eps * tol
    if builtins.bool(_n.all(_n.less(_n.absolute(a.imag), tol))):
        a = a.real
    return a


def _i0_tables():
    """The coefficients of NumPy's ``i0`` (from Cephes) on [0, 8] and past 8: NumPy's
    own tables, so the series are its series to the last bit. They are private to NumPy:
    a NumPy without them runs its own ``i0`` (the fallback)."""
    try:
        from numpy.lib._function_base_impl import _i0A, _i0B
    except ImportError:
        raise _n._Unsupported from None
    return _i0A, _i0B


def _chebyshev(x, coefficients):
    """NumPy's ``_chbevl``: the Chebyshev series at ``x`` by Clenshaw's recurrence, in
    its order of operations (Python floats stay weak, so ``x``'s dtype is kept)."""
    b0, b1 = coefficients[0], 0.0
    for c in coefficients[1:]:
        b2, b1 = b1, b0
        b0 = x * b1 - b2 + c
    return 0.5 * (b0 - b2)


def i0(x):
    """NumPy's Cephes series: one Chebyshev series up to 8 and another past it, both
    evaluated everywhere and chosen by ``where`` (NumPy's ``piecewise`` evaluates each
    on its part; every element sees the same operations)."""
    near_table, far_table = _i0_tables()
    x = _n._arr(x)
    if x.dtype.kind == "c":
        raise TypeError("i0 not supported for complex values")
    if x.dtype.kind != "f":
        x = x.astype(np.float64)
    x = _n.absolute(x)
    near = _n.exp(x) * _chebyshev(x / 2.0 - 2, near_table)
    far = _n.exp(x) * _chebyshev(32.0 / x - 2.0, far_table) / _n.sqrt(x)
    return _n.where(x <= 8.0, near, far)


# --------------------------------------------------------------------------- bits


def _bits_axis(a, axis):
    """``a`` and the axis packing or unpacking runs along, as NumPy's ``CheckAxis``
    gives them: flattened for None, a 0-d array as 1-d."""
    if axis is None:
        return a.reshape(-1), 0
    if a.ndim == 0:
        a = a.reshape(1)
    return a, normalize_axis_index(axis, a.ndim)


def _string_argument(value, function, position):
    """NumPy's parsing of a ``bitorder`` argument, which must be a ``str``."""
    if not isinstance(value, str):
        name = "None" if value is None else type(value).__name__
        raise TypeError(f"{function}() argument {position} must be str, not {name}")
    return value


def _bit_shifts(ndim, axis, little):
    """The shift of each of 8 bits in a byte, in the order they are packed, shaped to
    broadcast along the axis after ``axis``."""
    shifts = np.arange(8, dtype=np.uint8) if little else np.arange(7, -1, -1, np.uint8)
    shape = [1] * (ndim + 1)
    shape[axis + 1] = 8
    return shifts.reshape(shape)


def packbits(a, /, axis=None, bitorder="big"):
    """Every 8 elements along the axis (zeros appended to fill the last 8), each
    nonzero one a bit, summed as their bit values: one uint8 per group."""
    axis = None if axis is None else operator.index(axis)
    bitorder = _string_argument(bitorder, "pack", 3)
    if bitorder.startswith("little"):
        little = True
    elif bitorder.startswith("big"):
        little = False
    else:
        raise ValueError("'order' must be either 'little' or 'big'")
    a = _n._arr(a)
    if a.dtype.kind not in "biu":
        raise TypeError("Expected an input array of integer or boolean data type")
    a, axis = _bits_axis(a, axis)
    n = a.shape[axis]
    bits = _ext.ufunc("not_equal", a, 0).astype(np.uint8)
    if n % 8:
        fill = list(a.shape)
        fill[axis] = 8 - n % 8
        bits = _n.concatenate((bits, _ext.full(tuple(fill), 0, bits.dtype)), axis)
    groups = -(-n // 8)
    shape = a.shape[:axis] + (groups, 8) + a.shape[axis + 1 :]
    values = _ext.ufunc(
        "left_shift",
        bits.reshape(shape),
        _ext.asarray(_bit_shifts(a.ndim, axis, little)),
    )
    return _n.sum(values, axis=axis + 1, dtype=np.uint8)


def unpackbits(a, /, axis=None, count=None, bitorder="big"):
    """Each uint8 along the axis as its 8 bits (a shift and a mask), the result cut to
    ``count`` or padded with zeros to it."""
    axis = None if axis is None else operator.index(axis)
    bitorder = _string_argument(bitorder, "unpack", 4)
    if bitorder[:1] not in ("l", "b"):
        raise ValueError("'order' must begin with 'l' or 'b'")
    a = _n._arr(a)
    if a.dtype != np.uint8:
        raise TypeError("Expected an input array of unsigned byte data type")
    a, axis = _bits_axis(a, axis)
    n = a.shape[axis] * 8
    if count is None:
        count = n
    else:
        count = operator.index(count)
        if count < 0:
            count += n
            if count < 0:
                raise ValueError("-count larger than number of elements")
    spread = a.shape[: axis + 1] + (1,) + a.shape[axis + 1 :]
    shifts = _ext.asarray(_bit_shifts(a.ndim, axis, bitorder[0] == "l"))
    bits = _ext.ufunc(
        "bitwise_and", _ext.ufunc("right_shift", a.reshape(spread), shifts), 1
    )
    shape = list(a.shape)
    shape[axis] = n
    bits = bits.reshape(tuple(shape))
    if count <= n:
        return bits[(slice(None),) * axis + (slice(0, count),)]
    shape[axis] = count - n
    return _n.concatenate((bits, _ext.full(tuple(shape), 0, bits.dtype)), axis)


# --------------------------------------------------------------------------- products


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = _n._arr(a), _n._arr(b)
    if a.ndim < 1 or b.ndim < 1:
        raise ValueError("At least one array has zero dimension")
    axisa = normalize_axis_index(axisa, a.ndim, msg_prefix="axisa")
    axisb = normalize_axis_index(axisb, b.ndim, msg_prefix="axisb")
    a, b = _n.moveaxis(a, axisa, -1), _n.moveaxis(b, axisb, -1)
    na, nb = a.shape[-1], b.shape[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError(
            "incompatible dimensions for cross product\n(dimension must be 2 or 3)"
        )
    if na == 2 or nb == 2:
        _warn(
            "Arrays of 2-dimensional vectors are deprecated. Use arrays of "
            "3-dimensional vectors instead. (deprecated in NumPy 2.0)",
            DeprecationWarning,
        )
    shape = _n.broadcast_shapes(a.shape[:-1], b.shape[:-1])
    if na == 3 or nb == 3:
        axisc = normalize_axis_index(axisc, len(shape) + 1, msg_prefix="axisc")
    dtype = np.promote_types(a.dtype, b.dtype)
    a, b = a.astype(dtype, copy=False), b.astype(dtype, copy=False)
    mul, sub = _n.multiply, _n.subtract
    a0, a1, b0, b1 = a[..., 0], a[..., 1], b[..., 0], b[..., 1]
    # NumPy's products and differences, component by component; a missing third
    # component is zero, so its terms drop out (a negation is what is left of `0 - p`).
    third = sub(mul(a0, b1), mul(a1, b0))
    if na == 2 and nb == 2:
        return third
    if na == 2:
        b2 = b[..., 2]
        first, second = mul(a1, b2), _n.negative(mul(a0, b2))
    elif nb == 2:
        a2 = a[..., 2]
        first, second = _n.negative(mul(a2, b1)), mul(a2, b0)
    else:
        a2, b2 = a[..., 2], b[..., 2]
        first = sub(mul(a1, b2), mul(a2, b1))
        second = sub(mul(a2, b0), mul(a0, b2))
    return _n.moveaxis(_n.stack([first, second, third], axis=-1), -1, axisc)


def kron(a, b):
    if isinstance(a, np.matrix) or isinstance(b, np.matrix):
        raise _n._Unsupported  # a matrix result
    b = _n._arr(b)
    a = _n._arr(a)
    if a.ndim < b.ndim:  # NumPy's `ndmin`: leading length-1 axes
        a = a.reshape((1,) * (b.ndim - a.ndim) + a.shape)
    if a.ndim == 0 or b.ndim == 0:
        return _n.multiply(a, b)
    nd = builtins.max(a.ndim, b.ndim)
    sa = (1,) * (nd - a.ndim) + a.shape
    sb = (1,) * (nd - b.ndim) + b.shape
    # One broadcast product: a as (a0, 1, a1, 1, ...) times b as (1, b0, 1, b1, ...),
    # whose axes pair up into the blocks of the result.
    spread_a = a.reshape(tuple(x for s in sa for x in (s, 1)))
    spread_b = b.reshape(tuple(x for s in sb for x in (1, s)))
    return _n.multiply(spread_a, spread_b).reshape(tuple(x * y for x, y in zip(sa, sb)))


# --------------------------------------------------------------------------- interp


def _float64_points(x, ndim=None):
    """``x`` as float64, cast under 'safe' as NumPy's ``interp`` takes its arguments."""
    x = _n._arr(x)
    if ndim == 1 and x.ndim > 1:
        raise ValueError("object too deep for desired array")
    if ndim == 1 and x.ndim < 1:
        raise ValueError("object of too small depth for desired array")
    f64 = np.dtype(np.float64)
    if x.dtype != f64 and not np.can_cast(x.dtype, f64, "safe"):
        raise TypeError(
            f"Cannot cast array data from {x.dtype!r} to {f64!r} according to the rule "
            "'safe'"
        )
    return x.astype(f64, copy=False)


def _end_value(value, default):
    """``left`` or ``right``: a Python float (NumPy's ``PyFloat_AsDouble``), or the
    end of ``fp`` when None."""
    if value is None:
        return default
    if isinstance(value, (str, bytes)):
        raise TypeError(f"must be real number, not {type(value).__name__}")
    return float(value)


def interp(x, xp, fp, left=None, right=None, period=None):
    """NumPy's C loop as array operations: the interval of each ``x`` by a search in
    ``xp``, its end points gathered, and the loop's formula and special cases (an end
    point hit exactly, a NaN from infinite values, NaN ``x``) as selections. ``xp``
    is taken as increasing, as NumPy requires and does not check."""
    if period is not None:
        raise _n._Unsupported  # NumPy first sorts xp modulo the period
    if _n._dtype_of(fp).kind == "c":
        raise _n._Unsupported  # NumPy's complex loop has a formula of its own
    fp = _float64_points(fp, 1)
    xp = _float64_points(xp, 1)
    x = _float64_points(x)
    n = xp.shape[0]
    if n == 0:
        raise ValueError("array of sample points is empty")
    if fp.shape[0] != n:
        raise ValueError("fp and xp are not of the same length.")
    # The end points as 0-d views (an integer index alone would read a scalar: a flush).
    x0, x_last, f0, f_last = xp[0, ...], xp[n - 1, ...], fp[0, ...], fp[n - 1, ...]
    lval = _end_value(left, f0)
    rval = _end_value(right, f_last)
    where = _n.where
    if n == 1:
        # One point: NumPy compares and takes no interval (a NaN x gives fp[0]).
        return where(_n.less(x, x0), lval, where(_n.greater(x, x0), rval, f0))
    # j with xp[j] <= x < xp[j + 1], kept inside so that every gather is in bounds;
    # the x it does not fit are selected away below.
    j = _n.subtract(_ext.searchsorted(xp, x, True), 1)
    j = _n.clip(j, 0, n - 2)
    k = _n.add(j, 1)
    xj, xk, fj, fk = xp[j], xp[k], fp[j], fp[k]
    slope = _n.divide(_n.subtract(fk, fj), _n.subtract(xk, xj))
    res = _n.add(_n.multiply(slope, _n.subtract(x, xj)), fj)
    # NumPy's repairs of a NaN from infinite values: from the other end, then the
    # value of a flat interval.
    res = where(_n.isnan(res), _n.add(_n.multiply(slope, _n.subtract(x, xk)), fk), res)
    res = where(_n.logical_and(_n.isnan(res), _n.equal(fj, fk)), fj, res)
    res = where(_n.equal(x, xj), fj, res)
    # In NumPy's order of precedence, lowest first: the last point, below the first,
    # beyond the last, NaN.
    res = where(_n.greater_equal(x, x_last), f_last, res)
    res = where(_n.less(x, x0), lval, res)
    res = where(_n.greater(x, x_last), rval, res)
    return where(_n.isnan(x), x, res)
