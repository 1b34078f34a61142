"""Small NumPy functions that are a few ufuncs or a view: ``fix``, ``sinc``, ``select``,
``polyval``, ``vander``, ``logspace``, ``rollaxis``, ``ascontiguousarray``, ``isreal``,
``iscomplex`` and ``real_if_close``. Each records the operations NumPy's own version
performs, in the same order, so results agree to the last place where the ufuncs do.
The window functions (``hanning``, ``hamming``, ``blackman``, ``bartlett``) take only a
length: NumPy's values, made on the host, become a new array."""

import builtins
import operator

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from .. import _hassium as _ext
from .. import _native as _n

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
