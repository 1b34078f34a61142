"""NumPy's ndarray methods and attributes that the extension's array type does not define.

The extension's ``ndarray.__getattr__``, reached only when normal lookup fails, calls
``attribute(a, name)``. Each method here is written on the package's function of the same
name, so it is native where the function is and runs through NumPy (with the same
fallback warning and report) where the function does; methods that work in place record
their write like any assignment. A name NumPy's ndarray does not have either is an
``AttributeError``, as in NumPy.
"""

import operator

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from . import _hassium as _ext


def _package():
    # Imported when first needed: this module is loaded while the package initialises.
    import hassium

    return hassium


def _given(**kwargs):
    """The keyword arguments that were given (not None), so that NumPy's own defaults
    apply and keywords older NumPy versions lack are not passed."""
    return {k: v for k, v in kwargs.items() if v is not None}


def _in_place(a, what):
    """Refuses an in-place method on a read-only array with NumPy's words, before any
    work is done."""
    if not a.flags.writeable:
        raise ValueError(f"{what} is read-only")


def _sort(a, axis=-1, kind=None, order=None, *, stable=None):
    _in_place(a, "sort array")
    from ._composed._sorting import _check_kind

    _check_kind(kind, stable, order)
    _ext.sort_in_place(a, normalize_axis_index(operator.index(axis), a.ndim))


def _argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    return _package().argsort(
        a, axis=axis, **_given(kind=kind, order=order, stable=stable)
    )


def _partition(a, kth, axis=-1, kind="introselect", order=None):
    _in_place(a, "partition array")
    a[...] = _package().partition(a, kth, axis=axis, kind=kind, order=order)


def _argpartition(a, kth, axis=-1, kind="introselect", order=None):
    return _package().argpartition(a, kth, axis=axis, kind=kind, order=order)


def _take(a, indices, axis=None, out=None, mode="raise"):
    return _package().take(a, indices, axis=axis, out=out, mode=mode)


def _put(a, indices, values, mode="raise"):
    _package().put(a, indices, values, mode=mode)


def _repeat(a, repeats, axis=None):
    return _package().repeat(a, repeats, axis=axis)


def _diagonal(a, offset=0, axis1=0, axis2=1):
    return _package().diagonal(a, offset=offset, axis1=axis1, axis2=axis2)


def _trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    return _package().trace(
        a, offset=offset, axis1=axis1, axis2=axis2, dtype=dtype, out=out
    )


def _choose(a, choices, out=None, mode="raise"):
    return _package().choose(a, choices, out=out, mode=mode)


def _compress(a, condition, axis=None, out=None):
    return _package().compress(condition, a, axis=axis, out=out)


def _searchsorted(a, v, side="left", sorter=None):
    return _package().searchsorted(a, v, side=side, sorter=sorter)


def _tobytes(a, order="C"):
    return np.asarray(a).tobytes(order)


def _tofile(a, fid, sep="", format="%s"):
    np.asarray(a).tofile(fid, sep=sep, format=format)


def _dump(a, file):
    np.asarray(a).dump(file)


def _dumps(a):
    return np.asarray(a).dumps()


def _byteswap(a, inplace=False):
    swapped = _ext.asarray(np.asarray(a).byteswap())
    if inplace:
        a[...] = swapped
        return a
    return swapped


def _to_device(a, device, /, *, stream=None):
    if device != "cpu":
        raise ValueError(f'Unsupported device "{device}". Only "cpu" is supported.')
    return a


def _resize(a, *new_shape, refcheck=True):
    raise _ext.UnsupportedError(
        "hassium arrays cannot be resized in place; use hassium.resize(a, new_shape)"
    )


class flatiter:
    """``a.flat``: the array read in C order as if it were 1-D; indexing reads and
    writes the array's elements."""

    def __init__(self, base):
        self.base = base

    def __len__(self):
        return self.base.size

    def __iter__(self):
        return iter(self.base.ravel())

    def __getitem__(self, key):
        return self.base.ravel()[key]

    def __setitem__(self, key, value):
        a = self.base
        _in_place(a, "underlying array")
        if a.flags.c_contiguous:
            a.reshape(-1)[key] = value  # a view: the write lands in `a`
            return
        flat = a.flatten()
        flat[key] = value
        a[...] = flat.reshape(a.shape)

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.base.ravel(), dtype=dtype)

    def copy(self):
        return self.base.flatten()


def _matrix_transpose(a):
    if a.ndim < 2:
        raise ValueError("matrix transpose with ndim < 2 is undefined")
    return a.swapaxes(-1, -2)


def _dot(a, b, out=None):
    return _package().dot(a, b, out=out)


#: Methods: bound to the array on lookup.
_METHODS = {
    "sort": _sort,
    "argsort": _argsort,
    "partition": _partition,
    "argpartition": _argpartition,
    "dot": _dot,
    "take": _take,
    "put": _put,
    "repeat": _repeat,
    "diagonal": _diagonal,
    "trace": _trace,
    "choose": _choose,
    "compress": _compress,
    "searchsorted": _searchsorted,
    "tobytes": _tobytes,
    "tofile": _tofile,
    "dump": _dump,
    "dumps": _dumps,
    "byteswap": _byteswap,
    "to_device": _to_device,
    "resize": _resize,
}

#: Attributes: computed on lookup.
_ATTRIBUTES = {
    "flat": flatiter,
    "mT": _matrix_transpose,
    "device": lambda a: "cpu",
    "data": memoryview,
    "ctypes": lambda a: np.asarray(a).ctypes,
}


def rebuild(values):
    """Unpickles an array: ``ndarray.__reduce__`` pickles its values as a NumPy array."""
    return _ext.asarray(values)


def attribute(a, name):
    """``a.name`` for a name the array type does not define."""
    method = _METHODS.get(name)
    if method is not None:
        return method.__get__(a)
    get = _ATTRIBUTES.get(name)
    if get is not None:
        return get(a)
    raise AttributeError(f"'hassium.ndarray' object has no attribute '{name}'")
