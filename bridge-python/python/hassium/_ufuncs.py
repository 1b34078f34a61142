"""NumPy's ufuncs as Hassium objects: one per elementwise opcode of the opcode table
(``_hassium.ufuncs()``), with their methods (``reduce``, ``accumulate``, ``outer``, ``at``),
and the ufuncs composed of several opcodes (``logaddexp``, ``divmod``, ...).

Part of ``_native`` (see its docstring for the rules every part keeps)."""

import builtins
import math
import operator

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from . import _fallback
from . import _hassium as _ext
from ._common import (
    UNSUPPORTED,
    _all_scalars,
    _arr,
    _bool,
    _dtype,
    _dtype_of,
    _is_python_scalar,
    _NoValue,
    _shape_of,
    ndarray,
)
from ._shapes import broadcast_to

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


def _axis_int(axis):
    """One axis as NumPy's ufunc methods read it: an integer, not a bool."""
    if isinstance(axis, (builtins.bool, np.bool_)):
        raise TypeError("an integer is required")
    return operator.index(axis)


def _accumulate_axis(axis, ndim):
    """The one axis of an accumulation, checked in NumPy's order: the axes named against
    the dimensions (AxisError; a 0-d array takes a lone 0 or -1), then a 0-d array
    (TypeError), then how many axes (ValueError)."""
    if axis is None:
        axes = tuple(range(ndim))
    elif isinstance(axis, tuple):
        axes = tuple(normalize_axis_index(_axis_int(ax), ndim) for ax in axis)
    else:
        axis = _axis_int(axis)
        scalar_axis = ndim == 0 and axis in (0, -1)
        axes = () if scalar_axis else (normalize_axis_index(axis, ndim),)
    if ndim == 0:
        raise TypeError("cannot accumulate on a scalar")
    if len(axes) != 1:
        raise ValueError("accumulate does not allow multiple axes")
    return axes[0]


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
        if dtype is not None:
            args = self._ints_in_loop(args, np.dtype(dtype))
        try:
            result = _ext.ufunc(self.__name__, *args, out=out, dtype=_dtype(dtype))
        except UNSUPPORTED:
            return self._fallback("__call__", args, {"out": out, "dtype": dtype})
        return result if out is None else out  # NumPy returns the very out object

    def _ints_in_loop(self, args, dtype):
        """``args`` with each Python int converted to an integer ``dtype=`` where the
        loop NumPy picks takes that dtype in, as NumPy converts a weak int once the
        loop is found (its OverflowError out of range; ``np.add(bools, 3,
        dtype=np.uint8)`` is uint8 arithmetic, where an int64 operand is refused).
        Comparisons, whose loops take an int out of range, keep theirs. A unary ufunc's
        int is no weak scalar in NumPy: an int64, cast to the loop like an array
        (``np.floor(0, dtype=np.uint8)`` is its casting error)."""
        if (
            self.nin == 1
            or dtype.kind not in "iu"
            or not builtins.any(type(x) is int for x in args)
        ):
            return args
        operands = tuple(int if type(x) is int else _dtype_of(x) for x in args)
        try:
            loop = self._np.resolve_dtypes(
                operands + (None,) * self.nout,
                signature=(None,) * self.nin + (dtype,) * self.nout,
                casting="unsafe",  # the casts are checked after, by the call
            )
        except (TypeError, ValueError):
            return args  # no loop: the call raises NumPy's error
        return tuple(
            dtype.type(x) if type(x) is int and loop[i] == dtype else x
            for i, x in enumerate(args)
        )

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
        axis = _accumulate_axis(axis, len(_shape_of(array)))
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


def _widened(a, loop, work):
    """Operand ``a`` of a composed ufunc in its ``work`` dtype. A Python scalar becomes
    the ``loop`` dtype first, as NumPy converts it (70000 is inf in a float16 loop,
    not 70000 in its float32 work)."""
    if loop != work and _is_python_scalar(a):
        with np.errstate(over="ignore"):
            a = loop.type(a)
    return _ext.asarray(a, dtype=work)


class composed_ufunc(ufunc):
    """A NumPy ufunc without an opcode of its own, recorded as a few opcodes over its
    inputs cast to the loop dtypes NumPy picks (``resolve_dtypes``); half-precision loops
    compute in float32 and round once, as NumPy's do. A call with ``out=`` (a Hassium
    array the result casts and broadcasts into) or without is native; ``dtype=``,
    ``where=``, other keywords and methods but ``outer`` go through NumPy, and inputs
    NumPy has no loop for raise NumPy's own error."""

    __slots__ = ("_compute", "_widen_half")

    def __init__(self, np_ufunc, compute, widen_half=True):
        super().__init__(np_ufunc)
        self._compute = compute
        # False where float16 must stay float16 (a float16 neighbour is no float32 one).
        self._widen_half = widen_half

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
            # `out=None` only when given: NumPy refuses it beside `dtype=` for two
            # outputs ("'out' must be a tuple of arrays").
            given = {} if out is None else {"out": out}
            return self._fallback("__call__", args, dict(kwargs, **given))
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
        work = [
            np.dtype(np.float32) if t == np.float16 and self._widen_half else t
            for t in loop[:nin]
        ]
        results = self._compute(
            *[_widened(a, t, w) for a, t, w in zip(operands, loop[:nin], work)]
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


def _ldexp(x, e):
    # The opcode carries the integer exponent in x's dtype (see its table row): exact
    # below 2**24 (2**53), and any larger exponent saturates the result all the same.
    return _ext.ufunc("ldexp", x, e.astype(x.dtype))


def _frexp(x):
    # The exponent (0 for zeros, infinities and NaN) is an opcode; the mantissa is x
    # scaled by its inverse, exact since it lands in [0.5, 1) (-0.0, inf and NaN as x).
    e = _ext.ufunc("frexp_exponent", x)
    return _ext.ufunc("ldexp", x, _ext.ufunc("negative", e)), e


def _spacing(x):
    # npy_spacing: the step from x away from zero (from either zero the least positive
    # subnormal; the largest value steps to inf). npy_half_spacing steps up instead, so
    # a float16 spacing is never negative, and 65504 has inf. inf and NaN give NaN.
    t = x.dtype.type
    if x.dtype == np.float16:
        toward = t(np.inf)
    else:
        toward = _ext.where(_ext.ufunc("less", x, t(0)), t(-np.inf), t(np.inf))
    step = _ext.ufunc("subtract", _ext.ufunc("nextafter", x, toward), x)
    return _ext.where(_ext.ufunc("isinf", x), t(np.nan), step)


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
    "ldexp": _ldexp,
    "frexp": _frexp,
    "spacing": _spacing,
}

# Composed ufuncs that compute float16 in float16 (their opcodes have float16 loops).
_HALF_AS_HALF = frozenset({"spacing"})


for _name, _compute in COMPOSED_UFUNCS.items():
    if hasattr(np, _name):
        UFUNCS[_name] = composed_ufunc(
            getattr(np, _name), _compute, widen_half=_name not in _HALF_AS_HALF
        )
        globals()[_name] = UFUNCS[_name]


def real(val):
    """The real part, as a view for complex arrays (like NumPy); a Python or NumPy
    scalar's own ``.real``, as NumPy returns it (``np.real(False)`` is the int 0)."""
    if _is_python_scalar(val) or isinstance(val, np.generic):
        return val.real
    return _arr(val).real


def imag(val):
    """The imaginary part (see `real`)."""
    if _is_python_scalar(val) or isinstance(val, np.generic):
        return val.imag
    return _arr(val).imag
