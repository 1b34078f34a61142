"""``numpy.linalg`` for Hassium arrays: ``norm`` of vectors and the Frobenius norm are
recorded natively; every other function (solve, inv, eig, svd, ...) runs through NumPy's
LAPACK wrappers via the fallback path."""

import numpy as _np

from . import _fallback
from . import _hassium as _ext
from ._native import _arr

LinAlgError = _np.linalg.LinAlgError


def norm(x, ord=None, axis=None, keepdims=False):
    """The 2-norm along ``axis`` (or of everything): ``sqrt(sum(|x|**2))``, as NumPy
    computes it for ``ord=None`` (vectors, the Frobenius norm of matrices) and ``ord=2``
    on one axis. Other orders run through NumPy."""
    x = _arr(x)
    native = ord is None or (ord == 2 and (x.ndim == 1 or isinstance(axis, int)))
    native = native or (
        ord == "fro" and (x.ndim == 2 or (isinstance(axis, tuple) and len(axis) == 2))
    )
    if not native or (axis is not None and not isinstance(axis, (int, tuple))):
        return _fallback.call(
            _np.linalg.norm,
            "linalg.norm",
            (x,),
            {"ord": ord, "axis": axis, "keepdims": keepdims},
        )
    if x.dtype.kind not in "fc":
        x = x.astype(_np.float64)
    if x.dtype.kind == "c":
        sq = _ext.ufunc(
            "add", _ext.ufunc("square", x.real), _ext.ufunc("square", x.imag)
        )
    else:
        sq = _ext.ufunc("multiply", x, x)
    total = _ext.reduce("add", sq, axis=axis, keepdims=bool(keepdims))
    return _ext.ufunc("sqrt", total)


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _fallback.wrap_attribute(_np.linalg, name, f"linalg.{name}")


FUNCTIONS = {"norm": norm}
