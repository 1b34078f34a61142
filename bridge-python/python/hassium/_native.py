"""NumPy's functions, recorded as Hassium bytecode.

Everything here is built on the primitives of the extension ``hassium._hassium``
(docs/python-bridge.md): ``ufunc``, ``reduce``, ``accumulate``, ``copyto``, ``where``,
``matmul``, the creation functions and the array's own view methods. Nothing here touches
data: each function records instructions and returns lazy arrays, so a whole function
(``var``, ``einsum``, ``roll``) ends up in one batch the fuser can see at once.

Two rules keep this module honest:

* never call a NumPy *function* on a Hassium array here -- it would dispatch back into
  Hassium (``__array_function__``) and loop; NumPy is used only for dtype arithmetic
  (``np.result_type``, ``np.dtype``), for shapes, and for ufuncs of scalars alone (no
  array is involved, and NumPy's answer, a NumPy scalar, is what the program expects);
* what the primitives cannot express goes through ``_fallback.call`` explicitly, so it is
  counted and warned about like any other fallback.
"""

import builtins
import math
import operator

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

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


# --------------------------------------------------------------------------- helpers


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


# --------------------------------------------------------------------------- ufuncs


# Which ufuncs the opcode set reduces and scans natively (DESIGN.md §3).
_REDUCIBLE = frozenset(
    {
        "add",
        "multiply",
        "minimum",
        "maximum",
        "logical_and",
        "logical_or",
        "logical_xor",
        "bitwise_and",
        "bitwise_or",
        "bitwise_xor",
    }
)
_ACCUMULABLE = frozenset({"add", "multiply", "minimum", "maximum"})


class ufunc:
    """A NumPy ufunc recorded as one elementwise opcode.

    Supports the subset of NumPy's interface the opcode set can express natively --
    ``__call__`` with ``out=`` and ``dtype=``, ``reduce``/``accumulate`` for the reducible
    ufuncs, ``outer`` for binary ones, ``at`` for ``add`` with integer indices (one array,
    or one per axis) -- and runs the rest (``where=``, ``casting=``, ``reduceat``, other
    ufuncs' ``accumulate``) through NumPy.
    """

    __slots__ = ("__name__", "_np", "identity", "nargs", "nin", "nout")

    def __init__(self, np_ufunc):
        self._np = np_ufunc
        self.__name__ = np_ufunc.__name__
        self.nin = np_ufunc.nin
        self.nout = np_ufunc.nout
        self.nargs = np_ufunc.nargs
        self.identity = np_ufunc.identity
        # docs: NumPy's ufunc docstring is reachable through help(np.<name>)

    def __repr__(self):
        return f"<hassium ufunc '{self.__name__}'>"

    def _fallback(self, method, args, kwargs):
        func = self._np if method == "__call__" else getattr(self._np, method)
        name = self.__name__ if method == "__call__" else f"{self.__name__}.{method}"
        return _fallback.call(func, name, args, kwargs, mutates=(method == "at"))

    def _inputs_and_out(self, args, out):
        """Splits ``f(*inputs, *outs)`` as NumPy's ufuncs read it: outputs given after
        the inputs are ``out`` (the array for one output, a tuple for more)."""
        nin, nout = self.nin, self.nout
        if len(args) == nin + nout and out is None:
            args, out = args[:nin], (args[nin] if nout == 1 else args[nin:])
        if len(args) != nin:
            raise TypeError(
                f"{self.__name__}() takes from {nin} to {nin + nout} positional "
                f"arguments but {len(args)} were given"
            )
        return args, out

    def __call__(self, *args, out=None, dtype=None, where=True, **kwargs):
        args, out = self._inputs_and_out(args, out)
        if out is not None and type(out) is tuple:
            if len(out) != 1:
                raise ValueError(
                    "The 'out' tuple must have exactly one entry per ufunc output"
                )
            out = out[0]
        if out is None and _all_scalars(args):
            # `np.sqrt(0.5)`: nothing to record. NumPy computes it and returns a NumPy
            # scalar (a `float` subclass for float64), as the program expects, where a
            # lazy 0-d array would be neither a float nor free to make.
            if dtype is not None:
                kwargs["dtype"] = dtype
            if where is not True:
                kwargs["where"] = where
            return self._np(*args, **kwargs)
        if (
            kwargs
            or where is not True
            or (out is not None and not isinstance(out, ndarray))
        ):
            kwargs.update(out=out, dtype=dtype)
            if where is not True:
                kwargs["where"] = where
            return self._fallback("__call__", args, kwargs)
        try:
            result = _ext.ufunc(self.__name__, *args, out=out, dtype=_dtype(dtype))
        except UNSUPPORTED:
            return self._fallback("__call__", args, {"out": out, "dtype": dtype})
        return result if out is None else out  # NumPy returns the very out object

    def reduce(
        self,
        array,
        axis=0,
        dtype=None,
        out=None,
        keepdims=False,
        initial=_NoValue,
        where=True,
    ):
        if self.__name__ not in _REDUCIBLE or where is not True:
            kwargs = {"axis": axis, "dtype": dtype, "out": out, "keepdims": keepdims}
            if initial is not _NoValue:
                kwargs["initial"] = initial
            if where is not True:
                kwargs["where"] = where
            return self._fallback("reduce", (array,), kwargs)
        if type(out) is tuple:
            (out,) = out
        try:
            result = _ext.reduce(
                self.__name__,
                _arr(array),
                axis=axis,
                dtype=_dtype(dtype),
                out=out,
                keepdims=keepdims,
                initial=None if initial is _NoValue else initial,
            )
        except UNSUPPORTED:
            kwargs = {"axis": axis, "dtype": dtype, "out": out, "keepdims": keepdims}
            if initial is not _NoValue:
                kwargs["initial"] = initial
            return self._fallback("reduce", (array,), kwargs)
        return result if out is None else out

    def accumulate(self, array, axis=0, dtype=None, out=None):
        if self.__name__ not in _ACCUMULABLE:
            return self._fallback(
                "accumulate", (array,), {"axis": axis, "dtype": dtype, "out": out}
            )
        if type(out) is tuple:
            (out,) = out
        if len(_shape_of(array)) == 0:
            raise TypeError("cannot accumulate on a scalar")
        if axis is None and len(_shape_of(array)) > 1:
            raise ValueError("accumulate does not allow multiple axes")
        try:
            result = _ext.accumulate(
                self.__name__, _arr(array), axis=axis, dtype=_dtype(dtype), out=out
            )
        except UNSUPPORTED:
            return self._fallback(
                "accumulate", (array,), {"axis": axis, "dtype": dtype, "out": out}
            )
        return result if out is None else out

    def outer(self, A, B, /, **kwargs):
        if self.nin != 2:
            raise ValueError("outer product only supported for binary functions")
        a, b = _arr(A), _arr(B)
        return self(a.reshape(a.shape + (1,) * b.ndim), b, **kwargs)

    def at(self, a, indices, b=None, /):
        # np.add.at is the ScatterAdd opcode on flat indices: one integer array into a 1-D
        # target, or one per axis (a tuple) into a target of any shape.
        if self.__name__ == "add" and isinstance(a, ndarray) and b is not None:
            if a.ndim == 1 and not isinstance(indices, (tuple, slice)):
                idx = _arr(indices)
                flat = idx if idx.dtype.kind in "iu" else None
            else:
                flat = _flat_positions(a, indices)
            if flat is not None:
                if flat.dtype != np.int64:
                    flat = flat.astype(np.int64)
                values = (
                    broadcast_to(_arr(b).astype(a.dtype), flat.shape)
                    if _shape_of(b) != flat.shape
                    else _arr(b)
                )
                _ext.put_flat(a, flat, values, accumulate=True)
                return None
        args = (a, indices) if b is None else (a, indices, b)
        return self._fallback("at", args, {})

    def reduceat(self, *args, **kwargs):
        return self._fallback("reduceat", args, kwargs)


def _flat_positions(a, indices):
    """The flat (C-order) positions ``a[indices]`` selects when ``indices`` is a tuple of
    one integer array (or int) per axis, or None for any other index. A position out of
    range on its axis becomes ``a.size``, so the scatter raises NumPy's ``IndexError``
    (naming the flat index, not the axis) before writing anything."""
    if not isinstance(indices, tuple) or len(indices) != a.ndim or a.ndim == 0:
        return None
    arrays = []
    for x in indices:
        if isinstance(x, (slice, type(None), type(Ellipsis), _bool)):
            return None
        x = _arr(x)
        if x.dtype.kind not in "iu":
            return None
        arrays.append(x.astype(np.int64) if x.dtype != np.int64 else x)
    flat, bad, stride = None, None, 1
    for x, n in reversed(list(zip(arrays, a.shape))):
        x = _ext.where(_ext.ufunc("less", x, 0), _ext.ufunc("add", x, n), x)
        out = _ext.ufunc(
            "logical_or", _ext.ufunc("less", x, 0), _ext.ufunc("greater_equal", x, n)
        )
        term = _ext.ufunc("multiply", x, stride)
        flat = term if flat is None else _ext.ufunc("add", flat, term)
        bad = out if bad is None else _ext.ufunc("logical_or", bad, out)
        stride *= n
    return _ext.where(bad, a.size, flat)


# NumPy's names of the ufuncs that are one elementwise opcode each, from the opcode table
# (core/src/opcode.rs); aliases share the object like in NumPy (np.abs is np.absolute),
# where this NumPy has them (NumPy 2's array-API names: np.acos is np.arccos).
UFUNC_NAMES = [name for name, _, _ in _ext.ufuncs()]
UFUNC_ALIASES = {
    alias: name
    for name, _, aliases in _ext.ufuncs()
    for alias in aliases
    if getattr(np, alias, None) is getattr(np, name)
}

UFUNCS = {name: ufunc(getattr(np, name)) for name in UFUNC_NAMES}
for _alias, _target in UFUNC_ALIASES.items():
    UFUNCS[_alias] = UFUNCS[_target]
globals().update(UFUNCS)


def _loop_type(a):
    """What ``resolve_dtypes`` takes for an operand: Python's int, float and complex
    as themselves (weak, NEP 50), a bool as NumPy's bool (it has no weak form)."""
    if type(a) is _bool:
        return np.dtype(np.bool_)
    return type(a) if _is_python_scalar(a) else a.dtype


class composed_ufunc(ufunc):
    """A NumPy ufunc without an opcode of its own, recorded as a few opcodes over its
    inputs cast to the loop dtypes NumPy picks (``resolve_dtypes``); half-precision loops
    compute in float32 and round once, as NumPy's do. A call with ``out=`` (a Hassium
    array the result casts and broadcasts into) or without is native; ``dtype=``,
    ``where=``, other keywords and methods but ``outer`` go through NumPy, and inputs
    NumPy has no loop for raise NumPy's own error."""

    __slots__ = ("_compute",)

    def __init__(self, np_ufunc, compute):
        super().__init__(np_ufunc)
        self._compute = compute

    def __call__(self, *args, out=None, dtype=None, where=True, **kwargs):
        nin, nout = self.nin, self.nout
        args, out = self._inputs_and_out(args, out)
        if dtype is not None:
            kwargs["dtype"] = dtype
        if where is not True:
            kwargs["where"] = where
        if out is None and _all_scalars(args):
            return self._np(*args, **kwargs)  # a NumPy scalar, as NumPy returns
        outs = () if out is None else out if type(out) is tuple else (out,)
        if kwargs or (
            outs
            and (
                len(outs) != nout or not builtins.all(type(o) is ndarray for o in outs)
            )
        ):
            return self._fallback("__call__", args, dict(kwargs, out=out))
        operands = [a if _is_python_scalar(a) else _arr(a) for a in args]
        try:
            loop = self._np.resolve_dtypes(
                tuple(_loop_type(a) for a in operands) + (None,) * nout
            )
        except TypeError:
            with np.errstate(all="ignore"):  # NumPy's own error for these inputs
                self._np(
                    *[
                        np.ones((), a.dtype) if type(a) is ndarray else a
                        for a in operands
                    ]
                )
            return self._fallback("__call__", args, {} if out is None else {"out": out})
        work = [np.dtype(np.float32) if t == np.float16 else t for t in loop[:nin]]
        results = self._compute(
            *[_ext.asarray(a, dtype=t) for a, t in zip(operands, work)]
        )
        if nout == 1:
            results = (results,)
        results = tuple(
            r if r.dtype == t else r.astype(t) for r, t in zip(results, loop[nin:])
        )
        if not outs:
            return results[0] if nout == 1 else results
        for o, r in zip(outs, results):
            if not (
                o.flags.writeable
                and np.can_cast(r.dtype, o.dtype, "same_kind")
                and np.broadcast_shapes(r.shape, o.shape) == o.shape
            ):
                self._raise_out_error(operands, out)
                return self._fallback(
                    "__call__", args, {} if out is None else {"out": out}
                )
        for o, r in zip(outs, results):
            _ext.copyto(o, r, casting="same_kind")
        return out if type(out) is tuple or nout > 1 else outs[0]

    def _raise_out_error(self, operands, out):
        """Raises NumPy's error for an ``out=`` it refuses (read-only, uncastable,
        another shape): NumPy's ufunc is called on stand-ins of the same dtypes, shapes
        and flags (inputs broadcast from one zero, unfilled outputs), and fails before
        computing anything."""
        probe = [
            np.broadcast_to(np.zeros((), a.dtype), a.shape) if type(a) is ndarray else a
            for a in operands
        ]
        outs = out if type(out) is tuple else (out,)
        stand_ins = []
        for o in outs:
            s = np.empty(o.shape, o.dtype)
            s.flags.writeable = o.flags.writeable
            stand_ins.append(s)
        with np.errstate(all="ignore"):
            self._np(
                *probe, out=tuple(stand_ins) if type(out) is tuple else stand_ins[0]
            )


def _scaled(num, den):
    """``x * (num / den)``, the factor computed in x's dtype as NumPy's degree loops do
    (float32's 180/pi is 57.295776, not float64's 57.29577951... rounded)."""

    def compute(x):
        t = x.dtype.type
        return _ext.ufunc("multiply", x, t(num) / t(den))

    return compute


def _logaddexp(log1p_exp, same):
    """NumPy's logaddexp(2): ``x + same`` where x == y (equal infinities), else the
    larger plus ``log1p_exp(-|x - y|)``."""

    def compute(x, y):
        tail = log1p_exp(
            _ext.ufunc("negative", _ext.ufunc("absolute", _ext.ufunc("subtract", x, y)))
        )
        spread = _ext.ufunc("add", _ext.ufunc("maximum", x, y), tail)
        return _ext.where(
            _ext.ufunc("equal", x, y), _ext.ufunc("add", x, x.dtype.type(same)), spread
        )

    return compute


def _heaviside(x, h0):
    # NaN stays NaN, 0 takes h0, negatives 0 and positives 1.
    t = x.dtype.type
    sign = _ext.where(_ext.ufunc("less", x, t(0)), t(0), t(1))
    at_zero = _ext.where(_ext.ufunc("equal", x, t(0)), h0, sign)
    return _ext.where(_ext.ufunc("isnan", x), x, at_zero)


def _modf(x):
    # C's modf: the fraction takes x's sign (-0.0 for -3.0), 0 for infinities; x minus
    # its truncation is exact.
    whole = _ext.ufunc("trunc", x)
    frac = _ext.where(
        _ext.ufunc("isinf", x), x.dtype.type(0), _ext.ufunc("subtract", x, whole)
    )
    return _ext.ufunc("copysign", frac, x), whole


_LN2 = 0.693147180559945309417232121458176568
_LOG2E = 1.442695040888963407359924681001892137

COMPOSED_UFUNCS = {
    "degrees": _scaled(180.0, math.pi),
    "rad2deg": _scaled(180.0, math.pi),
    "radians": _scaled(math.pi, 180.0),
    "deg2rad": _scaled(math.pi, 180.0),
    "fabs": lambda x: _ext.ufunc("absolute", x),
    "logaddexp": _logaddexp(lambda v: _ext.ufunc("log1p", _ext.ufunc("exp", v)), _LN2),
    "logaddexp2": _logaddexp(
        lambda v: _ext.ufunc(
            "multiply", _ext.ufunc("log1p", _ext.ufunc("exp2", v)), v.dtype.type(_LOG2E)
        ),
        1.0,
    ),
    "float_power": lambda a, b: _ext.ufunc("power", a, b),
    "heaviside": _heaviside,
    "divmod": lambda a, b: (
        _ext.ufunc("floor_divide", a, b),
        _ext.ufunc("remainder", a, b),
    ),
    "modf": _modf,
}


for _name, _compute in COMPOSED_UFUNCS.items():
    if hasattr(np, _name):
        UFUNCS[_name] = composed_ufunc(getattr(np, _name), _compute)
        globals()[_name] = UFUNCS[_name]


def real(val):
    """The real part, as a view for complex arrays (like NumPy)."""
    return _arr(val).real


def imag(val):
    return _arr(val).imag


# --------------------------------------------------------------------------- creation


def asarray(a, dtype=None, order=None, *, device=None, copy=None, like=None):
    if order not in (None, "C", "K", "A") or like is not None:
        return _fallback_np(
            "asarray",
            (a,),
            {"dtype": dtype, "order": order, "copy": copy, "like": like},
        )
    if type(a) is ndarray and dtype is None and not copy:
        return a
    return _ext.asarray(a, dtype=_dtype(dtype), copy=copy)


def asanyarray(a, dtype=None, order=None, *, device=None, copy=None, like=None):
    return asarray(a, dtype=dtype, order=order, copy=copy)


def array(object, dtype=None, *, copy=True, order="K", subok=False, ndmin=0, like=None):
    if order not in (None, "C", "K", "A") or like is not None:
        return _fallback_np(
            "array",
            (object,),
            {"dtype": dtype, "copy": copy, "order": order, "ndmin": ndmin},
        )
    result = _ext.asarray(object, dtype=_dtype(dtype), copy=True if copy else copy)
    if result.ndim < ndmin:
        result = result.reshape((1,) * (ndmin - result.ndim) + result.shape)
    return result


def _creation_order(order):
    """``'C'`` or ``'F'`` from a creation function's ``order`` as NumPy reads it (any case,
    bytes too, None for C), with NumPy's errors for the rest."""
    if order is None:
        return "C"
    if isinstance(order, bytes):
        order = order.decode("latin-1")
    if not isinstance(order, str):
        raise TypeError(f"order must be str, not {type(order).__name__}")
    upper = order.upper()
    if upper not in ("C", "F", "A", "K"):
        raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")
    if upper not in ("C", "F"):
        raise ValueError("only 'C' or 'F' order is permitted")
    return upper


def _laid_out(make, shape, order):
    """``make(shape)`` in C order, or for ``order='F'`` the transpose of the array of the
    reversed shape: the same values with Fortran strides, as NumPy lays it out."""
    if _creation_order(order) == "F" and len(shape) > 1:
        return make(shape[::-1]).T
    return make(shape)


def empty(shape, dtype=float, order="C", *, device=None, like=None):
    dtype = np.dtype(dtype)
    return _laid_out(lambda s: _ext.empty(s, dtype), _shape_tuple(shape), order)


def full(shape, fill_value, dtype=None, order="C", *, device=None, like=None):
    shape = _shape_tuple(shape)
    if dtype is None:
        dtype = _dtype_of(fill_value)
    dtype = np.dtype(dtype)
    if _shape_of(fill_value) == ():
        return _laid_out(lambda s: _ext.full(s, fill_value, dtype), shape, order)
    result = empty(shape, dtype, order)
    _ext.copyto(result, fill_value, casting="unsafe")  # like np.full
    return result


def zeros(shape, dtype=float, order="C", *, device=None, like=None):
    dtype = np.dtype(dtype)
    return _laid_out(lambda s: _ext.full(s, 0, dtype), _shape_tuple(shape), order)


def ones(shape, dtype=None, order="C", *, device=None, like=None):
    dtype = np.dtype(float if dtype is None else dtype)
    return _laid_out(lambda s: _ext.full(s, 1, dtype), _shape_tuple(shape), order)


def _like_args(a, dtype, order, shape):
    """Shape, dtype and layout order of an array made like ``a``: 'A' keeps the Fortran
    layout of a Fortran-contiguous prototype, 'K' too when the new shape has as many
    dimensions (as NumPy does)."""
    a_shape = _shape_of(a)
    if isinstance(order, str) and order.upper() in ("K", "A"):
        flags = getattr(a, "flags", None)
        fortran = flags is not None and flags.f_contiguous and not flags.c_contiguous
        same_ndim = shape is None or len(_shape_tuple(shape)) == len(a_shape)
        order = "F" if fortran and (order.upper() == "A" or same_ndim) else "C"
    return (
        a_shape if shape is None else _shape_tuple(shape),
        _dtype_of(a) if dtype is None else np.dtype(dtype),
        order,
    )


def empty_like(
    prototype, dtype=None, order="K", subok=True, shape=None, *, device=None
):
    return empty(*_like_args(prototype, dtype, order, shape))


def zeros_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    return zeros(*_like_args(a, dtype, order, shape))


def ones_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    return ones(*_like_args(a, dtype, order, shape))


def full_like(
    a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None
):
    shape, dtype, order = _like_args(a, dtype, order, shape)
    return full(shape, fill_value, dtype, order)


def arange(start_or_stop, stop=None, step=None, dtype=None, *, device=None, like=None):
    if stop is None:
        start, stop = 0, start_or_stop
    else:
        start = start_or_stop
    if step is None:
        step = 1
    return _ext.arange(start, stop, step, _dtype(dtype))


def linspace(
    start,
    stop,
    num=50,
    endpoint=True,
    retstep=False,
    dtype=None,
    axis=0,
    *,
    device=None,
):
    if _shape_of(start) != () or _shape_of(stop) != ():
        return _fallback_np(
            "linspace",
            (start, stop, num),
            {"endpoint": endpoint, "retstep": retstep, "dtype": dtype, "axis": axis},
        )
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    div = (num - 1) if endpoint else num
    # NumPy's algorithm, step for step, so the values agree to the last bit.
    start_s = np.asarray(start) * 1.0
    stop_s = np.asarray(stop) * 1.0
    dt = np.result_type(start_s, stop_s, float(num))
    dtype = dt if dtype is None else np.dtype(dtype)
    delta = stop_s - start_s
    y = _ext.arange(0, num, 1, dt)
    step = delta / div if div > 0 else np.nan
    if div > 0:
        if np.all(step == 0):
            y = y / div
            y = y * delta[()]
        else:
            y = y * step[()]
    else:
        y = y * delta[()]
    y = y + start_s[()]
    if endpoint and num > 1:
        y[-1] = stop_s[()]
    if dtype.kind in "iu":
        y = _ext.ufunc("floor", y)
    if y.dtype != dtype:
        y = y.astype(dtype)
    if retstep:
        return y, step
    return y


def eye(N, M=None, k=0, dtype=float, order="C", *, device=None, like=None):
    N = operator.index(N)
    M = N if M is None else operator.index(M)
    k = operator.index(k)
    if _creation_order(order) == "F":
        return eye(M, N, -k, dtype).T
    result = _ext.full((N, M), 0, np.dtype(dtype))
    length = builtins.min(N, M - k) if k >= 0 else builtins.min(N + k, M)
    if length > 0:
        first = k if k >= 0 else -k * M
        flat = result.reshape(-1)
        flat[first : first + length * (M + 1) : M + 1] = 1
    return result


def identity(n, dtype=None, *, like=None):
    return eye(n, dtype=float if dtype is None else dtype)


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    ndim = len(xi)
    s0 = (1,) * ndim
    output = [_arr(x).reshape(s0[:i] + (-1,) + s0[i + 1 :]) for i, x in enumerate(xi)]
    if indexing == "xy" and ndim > 1:
        output[0] = output[0].reshape((1, -1) + s0[2:])
        output[1] = output[1].reshape((-1, 1) + s0[2:])
    if not sparse:
        output = broadcast_arrays(*output)
    if copy:
        output = [x.copy() for x in output]
    return tuple(output)


def copy(a, order="K", subok=False):
    return _arr(a).copy()


# --------------------------------------------------------------------------- reductions


def _reduce(name, a, axis, dtype, out, keepdims, initial=_NoValue, where=True):
    if where is not True:
        raise _Unsupported
    result = _ext.reduce(
        name,
        _arr(a),
        axis=axis,
        dtype=_dtype(dtype),
        out=out,
        keepdims=_bool(keepdims),
        initial=None if initial is _NoValue else initial,
    )
    return result if out is None else out


def _native_or_fallback(func):
    """Run ``func``; when it raises ``_Unsupported`` run NumPy's function of the same name."""

    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except UNSUPPORTED:
            return _fallback_np(func.__name__, args, kwargs)

    wrapper.__name__ = func.__name__
    wrapper.__qualname__ = func.__name__
    wrapper.__doc__ = func.__doc__ or getattr(
        getattr(np, func.__name__, None), "__doc__", None
    )
    wrapper.__wrapped__ = func
    return wrapper


@_native_or_fallback
def sum(
    a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue, where=True
):
    a = _arr(a)
    if dtype is None:
        dtype = _sum_dtype(a.dtype)
    return _reduce("add", a, axis, dtype, out, keepdims, initial, where)


@_native_or_fallback
def prod(
    a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue, where=True
):
    a = _arr(a)
    if dtype is None:
        dtype = _sum_dtype(a.dtype)
    return _reduce("multiply", a, axis, dtype, out, keepdims, initial, where)


@_native_or_fallback
def max(a, axis=None, out=None, keepdims=False, initial=_NoValue, where=True):
    return _reduce("maximum", a, axis, None, out, keepdims, initial, where)


@_native_or_fallback
def min(a, axis=None, out=None, keepdims=False, initial=_NoValue, where=True):
    return _reduce("minimum", a, axis, None, out, keepdims, initial, where)


amax = max
amin = min


@_native_or_fallback
def any(a, axis=None, out=None, keepdims=False, *, where=True):
    return _reduce("logical_or", a, axis, np.bool_, out, keepdims, where=where)


@_native_or_fallback
def all(a, axis=None, out=None, keepdims=False, *, where=True):
    return _reduce("logical_and", a, axis, np.bool_, out, keepdims, where=where)


def _arg_reduce(name, a, axis, out, keepdims):
    a = _arr(a)
    if axis is None:
        result = _ext.reduce(name, a.reshape(-1), axis=0)
        if keepdims:
            result = result.reshape((1,) * a.ndim)
    else:
        result = _ext.reduce(name, a, axis=axis, keepdims=_bool(keepdims))
    if out is not None:
        _into(out, result)
        return out
    return result


def argmax(a, axis=None, out=None, *, keepdims=False):
    return _arg_reduce("argmax", a, axis, out, keepdims)


def argmin(a, axis=None, out=None, *, keepdims=False):
    return _arg_reduce("argmin", a, axis, out, keepdims)


def _scan(name, a, axis, dtype, out):
    a = _arr(a)
    if dtype is None:
        dtype = _sum_dtype(a.dtype)
    if axis is None:
        a = a.reshape(-1)
        axis = 0
    result = _ext.accumulate(name, a, axis=axis, dtype=_dtype(dtype), out=out)
    return result if out is None else out


def cumsum(a, axis=None, dtype=None, out=None):
    return _scan("add", a, axis, dtype, out)


def cumprod(a, axis=None, dtype=None, out=None):
    return _scan("multiply", a, axis, dtype, out)


def _count(a, axis):
    """How many elements a reduction over ``axis`` combines."""
    if axis is None:
        return a.size
    axes = normalize_axis_tuple(axis, a.ndim)
    n = 1
    for ax in axes:
        n *= a.shape[ax]
    return n


def _mean_dtypes(a, dtype):
    """(accumulator dtype, result dtype) of np.mean/np.var, like numpy/_core/_methods.py."""
    kind = a.dtype.kind
    if dtype is not None:
        dtype = np.dtype(dtype)
        return dtype, dtype
    if kind in "biu":
        return np.dtype(np.float64), np.dtype(np.float64)
    if a.dtype == np.float16:
        return np.dtype(np.float32), np.dtype(np.float16)
    return a.dtype, a.dtype


@_native_or_fallback
def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    a = _arr(a)
    acc, res = _mean_dtypes(a, dtype)
    total = _reduce("add", a, axis, acc, None, keepdims, where=where)
    n = _count(a, axis)
    if n == 0:
        import warnings

        warnings.warn("Mean of empty slice.", RuntimeWarning, stacklevel=2)
    # An integer dtype= (NumPy sums in it, divides in float64, then truncates).
    exact = total.dtype.kind not in "biu"
    result = _ext.ufunc("divide", total, n, dtype=total.dtype if exact else None)
    if result.dtype != res:
        result = result.astype(res)
    if out is not None:
        _into(out, result, casting="unsafe")  # NumPy divides into out unsafely
        return out
    return result


@_native_or_fallback
def var(
    a,
    axis=None,
    dtype=None,
    out=None,
    ddof=0,
    keepdims=False,
    *,
    where=True,
    mean=_NoValue,
    correction=_NoValue,
):
    if mean is not _NoValue or correction is not _NoValue:
        raise _Unsupported
    a = _arr(a)
    acc, res = _mean_dtypes(a, dtype)
    n = _count(a, axis)
    arrmean = _reduce("add", a, axis, acc, None, True, where=where)
    arrmean = _ext.ufunc("divide", arrmean, n, dtype=arrmean.dtype)
    x = _ext.ufunc("subtract", a, arrmean)
    if x.dtype.kind == "c":
        x = _ext.ufunc("multiply", x, _ext.ufunc("conjugate", x)).real
    else:
        x = _ext.ufunc("multiply", x, x)
    total = _reduce("add", x, axis, acc if acc.kind != "c" else x.dtype, None, keepdims)
    rcount = builtins.max(n - ddof, 0)
    if rcount == 0:
        import warnings

        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=2)
    result = _ext.ufunc("divide", total, rcount, dtype=total.dtype)
    if res.kind == "c":
        res = np.finfo(res).dtype  # the variance of complex numbers is real
    if result.dtype != res:
        result = result.astype(res)
    if out is not None:
        _into(out, result)
        return out
    return result


@_native_or_fallback
def std(
    a,
    axis=None,
    dtype=None,
    out=None,
    ddof=0,
    keepdims=False,
    *,
    where=True,
    mean=_NoValue,
    correction=_NoValue,
):
    if mean is not _NoValue or correction is not _NoValue:
        raise _Unsupported
    v = var.__wrapped__(
        a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, where=where
    )
    result = _ext.ufunc("sqrt", v)
    if out is not None:
        _into(out, result)
        return out
    return result


def count_nonzero(a, axis=None, *, keepdims=False):
    a = _arr(a)
    mask = a if a.dtype == np.bool_ else _ext.ufunc("not_equal", a, 0)
    result = _ext.reduce(
        "add", mask, axis=axis, dtype=np.dtype(np.intp), keepdims=_bool(keepdims)
    )
    if axis is None and not keepdims:
        return int(result)
    return result


# --------------------------------------------------------------------------- elementwise helpers


def where(condition, x=_NoValue, y=_NoValue, /):
    if x is _NoValue and y is _NoValue:
        return nonzero(condition)
    if x is _NoValue or y is _NoValue:
        raise ValueError("either both or neither of x and y should be given")
    return _ext.where(condition, x, y)


def clip(
    a, a_min=_NoValue, a_max=_NoValue, out=None, *, min=_NoValue, max=_NoValue, **kwargs
):
    if kwargs:
        return _fallback_np("clip", (a, a_min, a_max), dict(kwargs, out=out))
    if min is not _NoValue:
        if a_min is not _NoValue:
            raise ValueError("Passed more than one argument for the lower bound")
        a_min = min
    if max is not _NoValue:
        if a_max is not _NoValue:
            raise ValueError("Passed more than one argument for the upper bound")
        a_max = max
    lo = None if a_min is _NoValue else a_min
    hi = None if a_max is _NoValue else a_max
    return _arr(a).clip(lo, hi, out=out)


def round(a, decimals=0, out=None):
    a = _arr(a)
    kind = a.dtype.kind
    if kind == "c" or (kind in "biu" and decimals < 0):
        return _fallback_np("round", (a,), {"decimals": decimals, "out": out})
    if kind in "biu":
        result = a.copy()
    elif decimals == 0:
        result = _ext.ufunc("rint", a)
    elif decimals > 0:
        f = 10.0**decimals
        result = _ext.ufunc(
            "divide", _ext.ufunc("rint", _ext.ufunc("multiply", a, f)), f
        )
    else:
        f = 10.0 ** (-decimals)
        result = _ext.ufunc(
            "multiply", _ext.ufunc("rint", _ext.ufunc("divide", a, f)), f
        )
    if out is not None:
        _into(out, result)
        return out
    return result


around = round


def isclose(a, b, rtol=1.0e-5, atol=1.0e-8, equal_nan=False):
    # numpy/_core/numeric.py, operation for operation.
    x = a if _is_python_scalar(a) else _arr(a)
    y = b if _is_python_scalar(b) else _arr(b)
    if isinstance(y, ndarray):
        dt = np.result_type(y.dtype, 1.0)
        if y.dtype != dt:
            y = y.astype(dt)
    elif isinstance(y, int):
        y = float(y)
    ufn = _ext.ufunc
    diff = ufn("absolute", ufn("subtract", x, y))
    if _is_python_scalar(y) and _is_python_scalar(atol) and _is_python_scalar(rtol):
        bound = atol + rtol * abs(y)  # a Python float: weak, like NumPy's
    else:
        bound = ufn("add", atol, ufn("multiply", rtol, ufn("absolute", y)))
    result = ufn(
        "logical_or",
        ufn("logical_and", ufn("less_equal", diff, bound), ufn("isfinite", y)),
        ufn("equal", x, y),
    )
    if equal_nan:
        result = ufn(
            "logical_or", result, ufn("logical_and", ufn("isnan", x), ufn("isnan", y))
        )
    if isinstance(result, ndarray) and result.ndim == 0:
        return result[()]
    return result


def allclose(a, b, rtol=1.0e-5, atol=1.0e-8, equal_nan=False):
    res = all(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))
    return _bool(res)


def array_equal(a1, a2, equal_nan=False):
    a1 = _arr(a1)
    a2 = _arr(a2)
    if a1.shape != a2.shape:
        return False
    if not equal_nan:
        return _bool(all(_ext.ufunc("equal", a1, a2)))
    if a1.dtype.kind not in "fc" and a2.dtype.kind not in "fc":
        return _bool(all(_ext.ufunc("equal", a1, a2)))
    n1 = _ext.ufunc("isnan", a1)
    n2 = _ext.ufunc("isnan", a2)
    if not _bool(all(_ext.ufunc("equal", n1, n2))):
        return False
    same = _ext.ufunc("logical_or", _ext.ufunc("equal", a1, a2), n1)
    return _bool(all(same))


def copyto(dst, src, casting="same_kind", where=True):
    if not isinstance(dst, ndarray):
        return _fallback_np("copyto", (dst, src), {"casting": casting, "where": where})
    if not _is_python_scalar(src):
        src_dtype = _dtype_of(src)
        if not np.can_cast(src_dtype, dst.dtype, casting):
            raise TypeError(
                f"Cannot cast array data from {src_dtype!r} to {dst.dtype!r} "
                f"according to the rule {casting!r}"
            )
    if where is not True:
        src = _ext.where(where, src, dst)
    _ext.copyto(dst, src, casting="unsafe")  # checked above, with NumPy's rule


# --------------------------------------------------------------------------- products


def _matmul(a, b):
    """``a @ b`` on the extension's matrix product, which takes NumPy's rules for 1-D
    operands (a vector is promoted to a matrix and the added axis removed again); a 0-d
    operand is refused here, naming which one as NumPy does."""
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(
            f"matmul: Input operand {0 if a.ndim == 0 else 1} does not have enough "
            f"dimensions (has 0, gufunc core with signature (n?,k),(k,m?)->(n?,m?) "
            f"requires 1)"
        )
    return _ext.matmul(a, b)


def matmul(x1, x2, /, out=None, **kwargs):
    if kwargs:
        return _fallback_np("matmul", (x1, x2), dict(kwargs, out=out))
    result = _matmul(_arr(x1), _arr(x2))
    if out is not None:
        _into(out, result)
        return out
    return result


def _into(out, result, casting="same_kind"):
    """Stores a result into a function's ``out=`` array, refused as NumPy refuses a
    read-only one."""
    if not out.flags.writeable:
        raise ValueError("output array is read-only")
    _ext.copyto(out, result, casting=casting)


def _strong(x):
    """An operand of dot/inner as NumPy takes it: a Python scalar becomes a 0-d array of
    its default dtype (not a weak scalar: ``np.dot(int8_array, 2)`` is int64)."""
    if _is_python_scalar(x):
        return _ext.full((), x, np.asarray(x).dtype)
    return _arr(x)


def dot(a, b, out=None):
    a = _strong(a)
    b = _strong(b)
    if a.ndim == 0 or b.ndim == 0:
        # NumPy multiplies: `out` as a ufunc's (broadcast, cast under same_kind).
        return _ext.ufunc("multiply", a, b, out=out)
    if a.ndim <= 2 and b.ndim <= 2:
        result = _matmul(a, b)
    else:
        result = tensordot(a, b, axes=([-1], [b.ndim - 2 if b.ndim > 1 else 0]))
    if out is None:
        return result
    # Otherwise NumPy's dot writes into `out` directly and takes only one of the result's
    # exact dtype and shape, C-contiguous and writeable: nothing broadcasts or casts.
    if not (
        isinstance(out, ndarray)
        and out.dtype == result.dtype
        and out.shape == result.shape
        and out.flags.c_contiguous
        and out.flags.writeable
    ):
        raise ValueError(
            "output array is not acceptable (must have the right datatype, number of "
            "dimensions, and be a C-Array)"
        )
    _ext.copyto(out, result)
    return out


def vdot(a, b, /):
    a = _arr(a).reshape(-1)
    b = _arr(b).reshape(-1)
    if a.shape != b.shape:
        raise ValueError("cannot reshape array: vdot of vectors of different sizes")
    if a.dtype.kind == "c":
        a = _ext.ufunc("conjugate", a)
    return _matmul(a, b)


def inner(a, b, /):
    a = _strong(a)
    b = _strong(b)
    if a.ndim == 0 or b.ndim == 0:
        return _ext.ufunc("multiply", a, b)
    return tensordot(a, b, axes=([-1], [-1]))


def outer(a, b, out=None):
    a = _arr(a).reshape(-1)
    b = _arr(b).reshape(-1)
    result = _ext.ufunc("multiply", a.reshape(-1, 1), b.reshape(1, -1))
    if out is not None:
        _into(out, result)
        return out
    return result


def tensordot(a, b, axes=2):
    # numpy/_core/numeric.py's algorithm: move the summed axes together, make both
    # operands 2-D, one matmul, reshape back.
    a = _arr(a)
    b = _arr(b)
    try:
        iter(axes)
    except TypeError:
        n = operator.index(axes)
        axes_a = list(range(-n, 0))
        axes_b = list(range(n))
    else:
        axes_a, axes_b = axes
    try:
        axes_a = list(axes_a)
    except TypeError:
        axes_a = [axes_a]
    try:
        axes_b = list(axes_b)
    except TypeError:
        axes_b = [axes_b]
    na, nb = len(axes_a), len(axes_b)
    as_, nda = a.shape, a.ndim
    bs, ndb = b.shape, b.ndim
    equal = na == nb
    if equal:
        for k in range(na):
            if as_[axes_a[k]] != bs[axes_b[k]]:
                equal = False
                break
            if axes_a[k] < 0:
                axes_a[k] += nda
            if axes_b[k] < 0:
                axes_b[k] += ndb
    if not equal:
        raise ValueError("shape-mismatch for sum")
    notin = [k for k in range(nda) if k not in axes_a]
    newaxes_a = notin + axes_a
    n2 = math.prod(as_[ax] for ax in axes_a)
    newshape_a = (math.prod(as_[ax] for ax in notin), n2)
    olda = [as_[axis] for axis in notin]
    notin = [k for k in range(ndb) if k not in axes_b]
    newaxes_b = axes_b + notin
    newshape_b = (n2, math.prod(bs[ax] for ax in notin))
    oldb = [bs[axis] for axis in notin]
    at = a.transpose(newaxes_a).reshape(newshape_a)
    bt = b.transpose(newaxes_b).reshape(newshape_b)
    res = _matmul(at, bt)
    return res.reshape(tuple(olda + oldb))


def einsum(*operands, out=None, dtype=None, order="K", casting="safe", optimize=False):
    """Einstein summation as transposes, broadcast multiplies and sum reductions.

    Handles explicit (``ij,jk->ik``) and implicit (``ij,jk``) output and any number of
    operands; subscripts with ``...``, an index repeated within one operand (traces,
    diagonals) and the interleaved operand form run through NumPy.
    """
    kwargs = {
        "out": out,
        "dtype": dtype,
        "order": order,
        "casting": casting,
        "optimize": optimize,
    }
    if not operands or not isinstance(operands[0], str):
        return _fallback_np("einsum", operands, kwargs)
    subscripts = operands[0].replace(" ", "")
    arrays = [_arr(x) for x in operands[1:]]
    if "." in subscripts or casting != "safe" or order not in ("K", "C", "A"):
        return _fallback_np("einsum", operands, kwargs)
    if "->" in subscripts:
        inputs, output = subscripts.split("->")
    else:
        inputs, output = subscripts, None
    terms = inputs.split(",")
    if len(terms) != len(arrays):
        raise ValueError(
            "more operands provided to einstein sum function than specified in the subscripts string"
            if len(arrays) > len(terms)
            else "fewer operands provided to einstein sum function than specified in the subscripts string"
        )
    for term, x in zip(terms, arrays):
        if not term.isalpha() and term != "":
            raise ValueError(
                f"invalid subscript '{term}' in einstein sum subscripts string"
            )
        if len(set(term)) != len(term):
            return _fallback_np("einsum", operands, kwargs)
        if len(term) != x.ndim:
            raise ValueError(
                "operand has more dimensions than subscripts given in einstein sum, but "
                "no '...' ellipsis provided to broadcast the extra dimensions."
                if x.ndim > len(term)
                else "einstein sum subscripts string contains too many subscripts for operand"
            )
    counts = {}
    for term in terms:
        for c in term:
            counts[c] = counts.get(c, 0) + 1
    if output is None:
        output = "".join(sorted(c for c, n in counts.items() if n == 1))
    for c in output:
        if c not in counts:
            raise ValueError(
                f"einstein sum subscripts string included output subscript '{c}' which "
                f"never appeared in an input"
            )
    sizes = {}
    for term, x in zip(terms, arrays):
        for c, n in zip(term, x.shape):
            if c in sizes and sizes[c] != n and n != 1 and sizes[c] != 1:
                raise ValueError(
                    "operands could not be broadcast together with remapped shapes"
                )
            if c not in sizes or sizes[c] == 1:
                sizes[c] = n
    result_dtype = (
        np.result_type(*(x.dtype for x in arrays)) if dtype is None else np.dtype(dtype)
    )
    # One axis order for everything: output letters first, summed letters after.
    letters = list(output) + sorted(c for c in counts if c not in output)
    product = None
    for term, x in zip(terms, arrays):
        # Sum away letters only this operand has (and the output lacks) before multiplying.
        own = [i for i, c in enumerate(term) if counts[c] == 1 and c not in output]
        if own:
            x = _ext.reduce(
                "add",
                x.astype(result_dtype) if x.dtype != result_dtype else x,
                axis=tuple(own),
                dtype=result_dtype,
            )
            term = "".join(c for i, c in enumerate(term) if i not in own)
        elif x.dtype != result_dtype:
            x = x.astype(result_dtype)
        present = [c for c in letters if c in term]
        x = x.transpose([term.index(c) for c in present]) if present else x
        shape = tuple(x.shape[present.index(c)] if c in present else 1 for c in letters)
        x = x.reshape(shape)
        product = x if product is None else _ext.ufunc("multiply", product, x)
    summed = tuple(range(len(output), product.ndim))
    # Letters summed away per operand left size-1 axes; those reduce as well.
    if summed:
        product = _ext.reduce("add", product, axis=summed, dtype=result_dtype)
    out_shape = tuple(sizes[c] for c in output)
    if product.shape != out_shape:
        product = _broadcast_copy(product, out_shape)
    if builtins.any(product is x for x in arrays):
        product = product.copy()
    if out is not None:
        _into(out, product)
        return out
    return product


# --------------------------------------------------------------------------- joining


def _check_join(arrays, where):
    if len(arrays) == 0:
        raise ValueError(f"need at least one array to {where}")


def concatenate(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    arrays = [_arr(x) for x in arrays]
    _check_join(arrays, "concatenate")
    if axis is None:
        arrays = [x.reshape(-1) for x in arrays]
        axis = 0
    first = arrays[0]
    if first.ndim == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    axis = normalize_axis_index(axis, first.ndim)
    for i, x in enumerate(arrays[1:], 1):
        if x.ndim != first.ndim:
            raise ValueError(
                f"all the input arrays must have same number of dimensions, but the "
                f"array at index 0 has {first.ndim} dimension(s) and the array at index "
                f"{i} has {x.ndim} dimension(s)"
            )
        for d in range(first.ndim):
            if d != axis and x.shape[d] != first.shape[d]:
                raise ValueError(
                    f"all the input array dimensions except for the concatenation axis "
                    f"must match exactly, but along dimension {d}, the array at index 0 "
                    f"has size {first.shape[d]} and the array at index {i} has size "
                    f"{x.shape[d]}"
                )
    if dtype is not None and out is not None:
        raise TypeError(
            "concatenate() only takes `out` or `dtype` as an argument, but both were "
            "provided."
        )
    if out is not None:
        dtype = out.dtype  # the inputs are cast to it under `casting`, as in NumPy
    elif dtype is None:
        dtype = np.result_type(*(x.dtype for x in arrays))
    else:
        dtype = np.dtype(dtype)
    for x in arrays:
        if not np.can_cast(x.dtype, dtype, casting):
            raise TypeError(
                f"Cannot cast array data from {x.dtype!r} to {dtype!r} according to the "
                f"rule {casting!r}"
            )
    shape = list(first.shape)
    shape[axis] = builtins.sum(x.shape[axis] for x in arrays)
    if out is None:
        out = _ext.empty(tuple(shape), dtype)
    elif out.shape != tuple(shape):
        raise ValueError("Output array is the wrong shape")
    prefix = (slice(None),) * axis
    at = 0
    for x in arrays:
        n = x.shape[axis]
        if n:
            _ext.copyto(out[prefix + (slice(at, at + n),)], x, casting="unsafe")
        at += n
    return out


def stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    arrays = [_arr(x) for x in arrays]
    _check_join(arrays, "stack")
    shape = arrays[0].shape
    if builtins.any(x.shape != shape for x in arrays):
        raise ValueError("all input arrays must have the same shape")
    axis = normalize_axis_index(axis, len(shape) + 1)
    new_shape = shape[:axis] + (1,) + shape[axis:]
    return concatenate(
        [x.reshape(new_shape) for x in arrays],
        axis=axis,
        out=out,
        dtype=dtype,
        casting=casting,
    )


def atleast_1d(*arys):
    res = [(_arr(a).reshape(1) if _arr(a).ndim == 0 else _arr(a)) for a in arys]
    return res[0] if len(res) == 1 else tuple(res)


def atleast_2d(*arys):
    res = []
    for a in arys:
        a = _arr(a)
        if a.ndim == 0:
            a = a.reshape(1, 1)
        elif a.ndim == 1:
            a = a.reshape(1, -1) if a.size else a.reshape(1, 0)
        res.append(a)
    return res[0] if len(res) == 1 else tuple(res)


def atleast_3d(*arys):
    res = []
    for a in arys:
        a = _arr(a)
        if a.ndim == 0:
            a = a.reshape(1, 1, 1)
        elif a.ndim == 1:
            a = a.reshape((1,) + a.shape + (1,))
        elif a.ndim == 2:
            a = a.reshape(a.shape + (1,))
        res.append(a)
    return res[0] if len(res) == 1 else tuple(res)


def hstack(tup, *, dtype=None, casting="same_kind"):
    arrs = [atleast_1d(x) for x in tup]
    _check_join(arrs, "concatenate")
    axis = 0 if arrs[0].ndim == 1 else 1
    return concatenate(arrs, axis, dtype=dtype, casting=casting)


def vstack(tup, *, dtype=None, casting="same_kind"):
    arrs = [atleast_2d(x) for x in tup]
    _check_join(arrs, "concatenate")
    return concatenate(arrs, 0, dtype=dtype, casting=casting)


row_stack = vstack


def roll(a, shift, axis=None):
    a = _arr(a)
    if axis is None:
        return roll(a.reshape(-1), shift, 0).reshape(a.shape)
    axes = normalize_axis_tuple(axis, a.ndim, allow_duplicate=True)
    shifts = _shape_of(shift)
    broadcast = np.broadcast(np.asarray(shift), np.asarray(axes))
    if broadcast.ndim > 1:
        raise ValueError("'shift' and 'axis' should be scalars or 1D sequences")
    total = {ax: 0 for ax in range(a.ndim)}
    for sh, ax in broadcast:
        total[int(ax)] += int(sh)
    result = a
    for ax, sh in total.items():
        n = result.shape[ax]
        if n == 0 or sh % n == 0:
            continue
        sh %= n
        rolled = _ext.empty(result.shape, result.dtype)
        pre = (slice(None),) * ax
        # Two view copies: the tail moves to the front, the head to the back.
        _ext.copyto(
            rolled[pre + (slice(sh, None),)], result[pre + (slice(None, n - sh),)]
        )
        _ext.copyto(
            rolled[pre + (slice(None, sh),)], result[pre + (slice(n - sh, None),)]
        )
        result = rolled
    if result is a:
        result = a.copy()
    del shifts
    return result


# --------------------------------------------------------------------------- shapes


def reshape(a, /, shape=None, order="C", *, newshape=None, copy=None):
    if shape is None:
        shape = newshape
    if copy is not None:
        return _fallback_np("reshape", (a, shape), {"order": order, "copy": copy})
    return _arr(a).reshape(shape, order=order)


def ravel(a, order="C"):
    return _arr(a).ravel(order)


def transpose(a, axes=None):
    a = _arr(a)
    return a.transpose() if axes is None else a.transpose(axes)


def permute_dims(a, axes=None):
    return transpose(a, axes)


def moveaxis(a, source, destination):
    a = _arr(a)
    source = normalize_axis_tuple(source, a.ndim, "source")
    destination = normalize_axis_tuple(destination, a.ndim, "destination")
    if len(source) != len(destination):
        raise ValueError(
            "`source` and `destination` arguments must have the same number of elements"
        )
    order = [n for n in range(a.ndim) if n not in source]
    for dest, src in sorted(zip(destination, source)):
        order.insert(dest, src)
    return a.transpose(order)


def swapaxes(a, axis1, axis2):
    return _arr(a).swapaxes(axis1, axis2)


def expand_dims(a, axis):
    a = _arr(a)
    if type(axis) not in (tuple, list):
        axis = (axis,)
    out_ndim = len(axis) + a.ndim
    axis = normalize_axis_tuple(axis, out_ndim)
    shape_it = iter(a.shape)
    shape = tuple(1 if ax in axis else next(shape_it) for ax in range(out_ndim))
    return a.reshape(shape)


def squeeze(a, axis=None):
    a = _arr(a)
    return a.squeeze() if axis is None else a.squeeze(axis)


def _check_broadcast_to(array, shape):
    if builtins.any(s < 0 for s in shape):
        raise ValueError("all elements of broadcast shape must be non-negative")
    if np.broadcast_shapes(array.shape, shape) != shape:  # NumPy's ValueError if apart
        raise ValueError(
            f"operands could not be broadcast together with remapped shapes "
            f"[original->remapped]: {array.shape} and requested shape {shape}"
        )


def broadcast_to(array, shape, subok=False):
    """A read-only view, as NumPy's: writing into it raises NumPy's ValueError."""
    array = _arr(array)
    shape = _shape_tuple(shape)
    _check_broadcast_to(array, shape)
    return _ext.broadcast_to(array, shape)


def broadcast_shapes(*args):
    return np.broadcast_shapes(*args)


def broadcast_arrays(*args, subok=False):
    arrays = [_arr(x) for x in args]
    shape = np.broadcast_shapes(*(x.shape for x in arrays))
    # Copies where NumPy gives views: NumPy's views are writeable (writing warns, and
    # lands in every aliased element), which a read-only view would refuse.
    return tuple(x if x.shape == shape else _broadcast_copy(x, shape) for x in arrays)


def _broadcast_copy(x, shape):
    result = _ext.empty(shape, x.dtype)
    _ext.copyto(result, x)
    return result


def nonzero(a):
    return _ext.nonzero(_arr(a))


def flatnonzero(a):
    return _ext.nonzero(_arr(a).reshape(-1))[0]


def shape(a):
    return _shape_of(a)


def ndim(a):
    return len(_shape_of(a))


def size(a, axis=None):
    s = _shape_of(a)
    return math.prod(s) if axis is None else s[normalize_axis_index(axis, len(s))]


# --------------------------------------------------------------------------- runtime


def flush():
    """Run everything recorded so far."""
    _ext.flush()


def stats():
    """The runtime's counters (instructions recorded, kernels, cache hits, timings, ...)."""
    return _ext.stats()


def info():
    """The configuration in force: config source, stacks, engines found, cache directory."""
    return _ext.info()


fallback_report = _fallback.fallback_report

#: Natives by name, for ``__init__`` (the namespace) and for ``__array_function__``
#: dispatch (NumPy's function object -> ours).
FUNCTIONS = {
    name: obj
    for name, obj in list(globals().items())
    if callable(obj)
    and not name.startswith("_")
    and not isinstance(obj, (type, ufunc))
    and getattr(obj, "__module__", None) == __name__
}
from . import _composed  # after the natives above, which it is composed of

FUNCTIONS.update(_composed.FUNCTIONS)
FUNCTIONS["amax"] = max
FUNCTIONS["amin"] = min
for _n, _f in list(FUNCTIONS.items()):
    if not hasattr(_f, "__wrapped__") and hasattr(np, _n):
        FUNCTIONS[_n] = _native_or_fallback(_f)
for _n in ("flush", "stats", "info", "fallback_report"):
    FUNCTIONS.pop(_n, None)
