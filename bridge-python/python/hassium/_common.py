"""What every part of ``_native`` shares: the extension's array type, the marker of
what is not native, and small helpers on shapes, dtypes and Python scalars.

Part of ``_native`` (see its docstring for the rules every part keeps)."""

import builtins
import operator

import numpy as np

from . import _fallback
from . import _hassium as _ext

ndarray = _ext.ndarray


class _Unsupported(Exception):
    """Raised inside a native function to hand the call to the fallback path."""


#: What a native raises to say "not natively": ours, and the extension's
#: ``UnsupportedError`` (a ``TypeError`` subclass for an argument combination it does not
#: record, such as ``where=`` or an unsupported dtype).
UNSUPPORTED = (_Unsupported, getattr(_ext, "UnsupportedError", _Unsupported))
_bool = builtins.bool
_NoValue = np._NoValue
#: Python's number types: with NumPy scalars, what a ufunc of scalars alone takes.
_PY_SCALARS = frozenset({builtins.bool, builtins.int, builtins.float, builtins.complex})
_np_generic = np.generic


def _all_scalars(args):
    for a in args:
        if type(a) not in _PY_SCALARS and not isinstance(a, _np_generic):
            return False
    return True


def _arr(x):
    """``x`` as a Hassium array (no copy when it already is one)."""
    return x if type(x) is ndarray else _ext.asarray(x)


def _dtype(dtype):
    return None if dtype is None else np.dtype(dtype)


def _shape_tuple(shape):
    try:
        return (operator.index(shape),)
    except TypeError:
        return tuple(operator.index(s) for s in shape)


def _shape_of(x):
    """The shape of an array-like without converting Hassium arrays."""
    if isinstance(x, ndarray):
        return x.shape
    return np.shape(x)


def _dtype_of(x):
    """The dtype of an array-like without converting Hassium arrays (NumPy's for lists)."""
    if isinstance(x, ndarray):
        return x.dtype
    return np.asarray(x).dtype


def _is_python_scalar(x):
    return type(x) in (int, float, complex, _bool)


def _result_type(*xs):
    """``np.result_type`` over array-likes, Python scalars weak (NEP 50)."""
    return np.result_type(
        *(
            x
            if _is_python_scalar(x)
            else x.dtype
            if hasattr(x, "dtype")
            else np.asarray(x)
            for x in xs
        )
    )


def _sum_dtype(dt):
    """The accumulator dtype ``np.sum``/``np.prod``/``cumsum`` choose: small ints widen."""
    if dt.kind == "b" or (dt.kind == "i" and dt.itemsize < 8):
        return np.dtype(np.int64)
    if dt.kind == "u" and dt.itemsize < 8:
        return np.dtype(np.uint64)
    return None


def _fallback_np(name, args, kwargs):
    return _fallback.call(getattr(np, name), name, args, kwargs)
