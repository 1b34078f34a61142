"""Hypothesis draws arguments for every function and ufunc Hassium implements natively
and compares the call with NumPy's: the same values, dtype and shape (floats to a
tolerance), or the same kind of exception.

The names come from the package (``hassium._native.FUNCTIONS`` and ``UFUNCS``), not from
a copy here: a new native function is fuzzed from the day it is added, and one whose
parameters this file cannot draw fails ``test_every_native_function_is_fuzzed`` until it
gets a drawing rule (or a reason in ``NOT_FUZZED``).

Arguments are drawn by parameter name (NumPy's signature of the function): arrays of the
14 dtypes in shapes from 0-d and empty to 3-d, contiguous, reversed (negative strides),
strided or transposed; Python and NumPy scalars; axes in and out of range; ``keepdims``;
``dtype``. A few functions whose parameters depend on each other (``einsum``,
``reshape``, ``take``...) have their own rule in ``SPECIAL``. Arrays passed in are
compared afterwards too, so a function that writes its arguments (``copyto``, ``out=``)
is checked.

``HASSIUM_TEST_FUZZ_EXAMPLES`` sets the examples per function (default small for CI;
a thorough run: ``HASSIUM_TEST_FUZZ_EXAMPLES=500``). Draws are derandomised, so a run is
repeatable and a failure prints the example that shows it.
"""

import inspect
import os
import warnings
from dataclasses import dataclass

import numpy as np
import pytest
from conftest import AGAINST_NUMPY, DTYPES, MODULE, to_numpy
from hassium import _native
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

EXAMPLES = int(os.environ.get("HASSIUM_TEST_FUZZ_EXAMPLES", "3"))

# Opt-in: run alone, this file passes on the reference and cpu stacks, but among the rest
# of the suite (pytest-xdist workers that ran other files first) draws of ``nanmean``,
# ``trapezoid`` and the UNTRIAGED functions below met mismatches that a standalone run does
# not: an order dependence not yet found. Until it is, the fuzzing is a campaign tool, run
# as ``HASSIUM_TEST_FUZZ_EXAMPLES=N pytest tests/python/test_api_fuzz.py``.
pytestmark = pytest.mark.skipif(
    "HASSIUM_TEST_FUZZ_EXAMPLES" not in os.environ,
    reason="API fuzzing is opt-in: set HASSIUM_TEST_FUZZ_EXAMPLES (see the module doc)",
)
FUZZ = settings(
    max_examples=EXAMPLES,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)

#: Tolerance by result dtype: a few ulps of the float type (vector math libraries and
#: half-precision loops computed in float32 may differ from NumPy's by an ulp or two).
RTOL = {
    np.dtype(np.float16): 4e-3,
    np.dtype(np.float32): 2e-5,
    np.dtype(np.complex64): 2e-5,
    np.dtype(np.float64): 1e-12,
    np.dtype(np.complex128): 1e-12,
}
#: The exception kinds compared: the first in this list a raised exception is an
#: instance of (so NumPy's ``_UFuncNoLoopError`` is a TypeError, and ``AxisError`` is
#: told apart from other ValueErrors and IndexErrors).
KINDS = [
    np.exceptions.AxisError,
    IndexError,
    TypeError,
    ValueError,
    OverflowError,
    ZeroDivisionError,
    ArithmeticError,
    MemoryError,
    RuntimeError,
    Exception,
]


def kind(error):
    return next(k for k in KINDS if isinstance(error, k))


# ---------------------------------------------------------------------------- arrays

LAYOUTS = ["contiguous", "contiguous", "reversed", "strided", "transposed"]


@dataclass
class Arr:
    """An array argument: its data and a layout, made into a NumPy or a Hassium array
    (a fresh copy each time, so a call that writes it cannot leak into the other)."""

    data: np.ndarray
    layout: str

    def view(self, x):
        if self.layout == "reversed":
            return x[(slice(None, None, -1),) * x.ndim]
        if self.layout == "strided":
            return x[..., ::2] if x.ndim else x
        if self.layout == "transposed":
            return x.T
        return x

    def make(self, xp):
        data = self.data.copy()
        base = data if xp is np else xp.asarray(data)
        return self.view(base)

    @property
    def shape(self):
        return self.view(self.data).shape

    def __repr__(self):
        values = np.array2string(self.view(self.data), separator=",", threshold=30)
        return f"Arr({self.data.dtype}{list(self.shape)} {self.layout}: {values})"


def elements(dtype):
    """Values of ``dtype``: small ones mostly, the extremes of integer types, and for
    floats signed zeros, infinities and NaN now and then."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return st.booleans()
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        small = st.integers(max(int(info.min), -20), min(int(info.max), 20))
        return st.one_of(small, small, small, st.sampled_from([info.min, info.max]))
    finite = st.one_of(
        st.sampled_from([0.0, -0.0, 0.5, -1.5, 2.0, 3.25, 0.125]),
        st.floats(-100, 100, width=16).map(float),
    )
    special = st.sampled_from([np.inf, -np.inf, np.nan])
    real = st.one_of(finite, finite, finite, special)
    if dtype.kind == "c":
        return st.builds(complex, finite, finite)
    return real


SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)


@st.composite
def arrays(draw, dtypes=None, shape=None, layouts=LAYOUTS, elems=None):
    dtype = draw(st.sampled_from(dtypes or DTYPES))
    shape = draw(SHAPES) if shape is None else tuple(shape)
    layout = draw(st.sampled_from(layouts)) if shape else "contiguous"
    if layout == "strided":
        base = shape[:-1] + (2 * shape[-1],)
    elif layout == "transposed":
        base = shape[::-1]
    else:
        base = shape
    data = draw(
        hnp.arrays(dtype, base, elements=elements(dtype) if elems is None else elems)
    )
    return Arr(data, layout)


def scalars():
    return st.one_of(
        st.booleans(),
        st.integers(-20, 20),
        st.sampled_from([0.5, -1.5, 2.0, 0.0, np.nan, np.inf]),
        st.builds(complex, st.integers(-3, 3), st.integers(-3, 3)),
        st.sampled_from(
            [np.float32(1.5), np.int8(-3), np.uint16(7), np.float16(0.5), np.int64(2)]
        ),
    )


def operands(n, min_dims=0):
    """``n`` arrays of mutually broadcastable shapes (now and then not), some of them
    scalars."""

    @st.composite
    def draw_operands(draw):
        shapes = draw(
            hnp.mutually_broadcastable_shapes(
                num_shapes=n, min_dims=min_dims, max_dims=3, min_side=0, max_side=4
            )
        ).input_shapes
        if n > 1 and draw(st.integers(0, 9)) == 0:
            shapes = (draw(SHAPES),) + shapes[1:]
        out = []
        for shape in shapes:
            if min_dims == 0 and draw(st.integers(0, 5)) == 0:
                out.append(draw(scalars()))
            else:
                out.append(draw(arrays(shape=shape)))
        return out

    return draw_operands()


# ------------------------------------------------------------------------ parameters

DTYPE_ARGS = st.one_of(st.none(), st.sampled_from(DTYPES))
AXES = st.one_of(st.none(), st.integers(-4, 3))
AXIS_TUPLES = st.one_of(AXES, st.lists(st.integers(-3, 2), max_size=3).map(tuple))
SMALL = st.integers(-2, 4)
SHAPE_ARGS = st.one_of(
    st.integers(0, 4), st.lists(st.integers(0, 4), max_size=3).map(tuple)
)


def stack_of(draw):
    """1-3 arrays, of one shape and dtype mostly (then of one of them changed)."""
    first = draw(arrays())
    out = [first]
    for _ in range(draw(st.integers(0, 2))):
        if draw(st.integers(0, 3)):
            out.append(
                draw(arrays(dtypes=[draw(st.sampled_from(DTYPES))], shape=first.shape))
            )
        else:
            out.append(draw(arrays()))
    return out


#: Parameters drawn by name (NumPy's parameter names).
BY_NAME = {
    "axis": AXIS_TUPLES,
    "axis1": st.integers(-4, 3),
    "axis2": st.integers(-4, 3),
    "source": st.integers(-4, 3),
    "destination": st.integers(-4, 3),
    "keepdims": st.booleans(),
    "dtype": DTYPE_ARGS,
    "ddof": st.integers(0, 2),
    "k": SMALL,
    "offset": SMALL,
    "n": st.integers(0, 4),
    "N": st.integers(0, 4),
    "M": st.one_of(st.none(), st.integers(0, 4)),
    "decimals": st.integers(-1, 3),
    "deg": st.booleans(),
    "equal_nan": st.booleans(),
    "rtol": st.sampled_from([1e-5, 0.1, 0.0]),
    "atol": st.sampled_from([1e-8, 0.5, 0.0]),
    "shift": st.one_of(SMALL, st.lists(SMALL, min_size=1, max_size=2).map(tuple)),
    "indices_or_sections": st.one_of(
        st.integers(1, 3), st.lists(st.integers(-1, 5), max_size=3)
    ),
    "repeats": st.integers(0, 3),
    "mode": st.sampled_from(["full", "same", "valid"]),
    "bins": st.integers(1, 5),
    "fill_value": scalars(),
    "num": st.integers(0, 5),
    "endpoint": st.booleans(),
    "retstep": st.booleans(),
    "sparse": st.booleans(),
    "indexing": st.sampled_from(["xy", "ij"]),
    "rowvar": st.booleans(),
    "bias": st.booleans(),
    "edge_order": st.sampled_from([1, 2]),
    "dx": st.sampled_from([1.0, 0.5, 2]),
    "minlength": st.integers(0, 5),
    "shape": SHAPE_ARGS,
    "dimensions": st.lists(st.integers(0, 3), max_size=3).map(tuple),
    "reps": SHAPE_ARGS,
    "copy": st.booleans(),
    "nan": st.sampled_from([0.0, -1.0]),
    "posinf": st.sampled_from([None, 1e3]),
    "neginf": st.sampled_from([None, -1e3]),
    "returned": st.booleans(),
    "ndim": st.integers(1, 3),
}
#: Parameters that are arrays (or scalars) whatever the function.
ARRAY_NAMES = {
    "a",
    "x",
    "arr",
    "ary",
    "array",
    "a1",
    "a2",
    "x1",
    "x2",
    "y",
    "v",
    "b",
    "z",
    "val",
    "f",
    "A",
    "prototype",
    "values",
    "object",
    "weights",
    "to_end",
    "to_begin",
    "prepend",
    "append",
    "condition",
    "m",
    "start",
    "stop",
    "a_min",
    "a_max",
    "dst",
    "src",
}
#: Parameters left to their defaults (layout and interop knobs, or drawn elsewhere).
SKIPPED = {
    "out",
    "where",
    "like",
    "device",
    "subok",
    "order",
    "initial",
    "casting",
    "mean",
    "correction",
    "signature",
    "optimize",
    "axes",
    "min",
    "max",
    "kwargs",
    "range",
    "density",
    "fweights",
    "aweights",
    "ndmax",
    "ndmin",
}


def generic(name):
    """Arguments for NumPy's ``name`` drawn by its signature: required parameters
    always, optional ones half the time."""
    params = list(inspect.signature(getattr(np, name)).parameters.values())

    @st.composite
    def draw_args(draw):
        args, kwargs = [], {}
        positional = True
        for p in params:
            if p.kind is p.VAR_POSITIONAL:
                args.extend(stack_of(draw))
                positional = False
                continue
            if p.kind is p.VAR_KEYWORD or p.name in SKIPPED:
                positional = False
                continue
            required = p.default is p.empty
            if not required and not draw(st.booleans()):
                positional = False
                continue
            if p.name in ("tup", "arrays"):
                value = stack_of(draw)
            elif p.name in ARRAY_NAMES:
                value = draw(st.one_of(arrays(), arrays(), scalars()))
            elif p.name in BY_NAME:
                value = draw(BY_NAME[p.name])
            else:
                raise LookupError(f"no rule draws parameter {p.name!r} of {name}")
            if positional and p.kind is not p.KEYWORD_ONLY:
                args.append(value)
            else:
                kwargs[p.name] = value
        return args, kwargs

    return draw_args()


# ----------------------------------------------------------- functions with own rules


@st.composite
def _reshape(draw):
    a = draw(arrays())
    size = int(np.prod(a.shape))
    shape = draw(
        st.one_of(
            st.just((-1,)),
            st.just((size,)),
            st.just((1, -1)),
            st.just((-1, 1, 1)),
            st.just(a.shape[::-1]),
            SHAPE_ARGS,
        )
    )
    return [a, shape], {}


@st.composite
def _broadcast_to(draw):
    a = draw(arrays())
    prefix = draw(st.lists(st.integers(0, 3), max_size=2).map(tuple))
    shape = draw(st.one_of(st.just(prefix + a.shape), SHAPE_ARGS))
    return [a, shape], {}


@st.composite
def _take(draw):
    a = draw(arrays())
    indices = draw(
        st.one_of(
            st.integers(-5, 5),
            arrays(dtypes=[np.dtype(np.int64), np.dtype(np.int32)]),
            arrays(dtypes=[np.dtype(np.float64)]),
        )
    )
    kwargs = {"axis": draw(AXES)} if draw(st.booleans()) else {}
    return [a, indices], kwargs


@st.composite
def _take_along_axis(draw):
    a = draw(arrays(shape=draw(hnp.array_shapes(min_dims=1, max_dims=3, max_side=4))))
    idx_shape = tuple(draw(st.sampled_from([s, 1, 2])) if s else s for s in a.shape)
    ints = st.integers(-5, 5)
    indices = draw(arrays(dtypes=[np.dtype(np.int64)], shape=idx_shape, elems=ints))
    return [a, indices], {"axis": draw(st.one_of(st.none(), st.integers(-3, 2)))}


@st.composite
def _bincount(draw):
    x = draw(
        st.one_of(
            arrays(
                dtypes=[np.dtype(t) for t in (np.int64, np.uint8, np.int32)],
                shape=draw(st.tuples(st.integers(0, 6))),
                elems=st.integers(0, 8),
            ),
            arrays(),
        )
    )
    kwargs = {}
    if draw(st.booleans()):
        kwargs["weights"] = draw(
            arrays(dtypes=[np.dtype(np.float64), np.dtype(np.int16)], shape=x.shape)
        )
    if draw(st.booleans()):
        kwargs["minlength"] = draw(st.integers(0, 10))
    return [x], kwargs


EINSUM = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("ij->", [(2, 3)]),
    ("i,i->", [(4,), (4,)]),
    ("i,j->ij", [(2,), (3,)]),
    ("ij->ji", [(2, 3)]),
    ("...i,...i->...", [(2, 3), (2, 3)]),
    ("ijk,ik->ij", [(2, 3, 4), (2, 4)]),
    ("ij,ij->i", [(2, 3), (3, 2)]),
]


@st.composite
def _einsum(draw):
    subscripts, shapes = draw(st.sampled_from(EINSUM))
    dtypes = [d for d in DTYPES if d.kind != "b"]
    return [subscripts] + [draw(arrays(dtypes=dtypes, shape=s)) for s in shapes], {}


@st.composite
def _fromfunction(draw):
    shape = draw(st.lists(st.integers(0, 4), min_size=1, max_size=3).map(tuple))
    kwargs = {"dtype": draw(st.sampled_from([float, int, np.float32]))}
    return [_Sum(), shape], kwargs


class _Sum:
    """A picklable, printable function of index grids (what ``fromfunction`` calls)."""

    def __call__(self, *grids):
        total = grids[0] * 2
        for g in grids[1:]:
            total = total + g
        return total

    def __repr__(self):
        return "lambda *i: 2 * i[0] + i[1] + ..."


@st.composite
def _where(draw):
    cond, *rest = draw(operands(3))
    if isinstance(cond, Arr) and draw(st.booleans()):
        cond = Arr(cond.data.astype(bool), cond.layout)
    if draw(st.integers(0, 4)) == 0:
        return [cond], {}
    return [cond, *rest], {}


@st.composite
def _clip(draw):
    a, lo, hi = draw(operands(3))
    which = draw(st.sampled_from(["both", "lo", "hi"]))
    return [a, lo if which != "hi" else None, hi if which != "lo" else None], {}


@st.composite
def _products(draw):
    k = draw(st.integers(0, 3))
    sa = draw(st.lists(st.integers(1, 3), max_size=2).map(tuple))
    sb = draw(st.lists(st.integers(1, 3), max_size=2).map(tuple))
    if draw(st.booleans()):  # contracted dimensions agree
        sa, sb = sa + (k,), (k,) + sb
    else:
        sa, sb = sa + (k,), draw(SHAPES)
    dtypes = [d for d in DTYPES if d.kind != "b"]
    return [
        draw(arrays(dtypes=dtypes, shape=sa)),
        draw(arrays(dtypes=dtypes, shape=sb)),
    ]


def _two():
    return _products().map(lambda args: (args, {}))


@st.composite
def _transpose(draw):
    a = draw(arrays())
    axes = draw(
        st.one_of(
            st.none(),
            st.permutations(range(len(a.shape))).map(tuple),
            st.lists(st.integers(-3, 3), max_size=3).map(tuple),
        )
    )
    return [a], ({} if axes is None else {"axes": axes})


@st.composite
def _rot90(draw):
    a = draw(arrays())
    kwargs = {"k": draw(st.integers(-2, 5))}
    if draw(st.booleans()):
        kwargs["axes"] = draw(st.tuples(st.integers(-3, 2), st.integers(-3, 2)))
    return [a], kwargs


@st.composite
def _tensordot(draw):
    a, b = draw(_products())
    return [a, b], {"axes": draw(st.integers(0, 2))}


@st.composite
def _one_d(draw, name_args=1):
    dtypes = [d for d in DTYPES if d.kind != "b"]
    return [
        draw(arrays(dtypes=dtypes, shape=(draw(st.integers(0, 5)),)))
        for _ in range(name_args)
    ]


@st.composite
def _convolve(draw):
    args = draw(_one_d(2))
    kwargs = {"mode": draw(BY_NAME["mode"])} if draw(st.booleans()) else {}
    return args, kwargs


@st.composite
def _histogram(draw):
    floats = [np.dtype(np.float64), np.dtype(np.float32), np.dtype(np.int32)]
    a = draw(arrays(dtypes=floats, elems=st.integers(-10, 10)))
    kwargs = {"bins": draw(st.integers(1, 6))}
    if draw(st.booleans()):
        kwargs["range"] = draw(st.sampled_from([(0, 5), (-3.5, 2.0), (1, 1)]))
    return [a], kwargs


@st.composite
def _meshgrid(draw):
    xs = [
        draw(arrays(shape=(draw(st.integers(0, 3)),)))
        for _ in range(draw(st.integers(0, 3)))
    ]
    kwargs = {"indexing": draw(BY_NAME["indexing"]), "sparse": draw(st.booleans())}
    return xs, kwargs


@st.composite
def _broadcast_shapes(draw):
    return [draw(SHAPES) for _ in range(draw(st.integers(0, 3)))], {}


@st.composite
def _indices_n(draw):
    kwargs = {}
    if draw(st.booleans()):
        kwargs["k"] = draw(SMALL)
    return [draw(st.integers(0, 4))], kwargs


@st.composite
def _copyto(draw):
    dst, src = draw(operands(2))
    if not isinstance(dst, Arr):
        dst = draw(arrays())
    kwargs = {}
    if draw(st.booleans()):
        kwargs["casting"] = draw(st.sampled_from(["same_kind", "unsafe", "no", "safe"]))
    return [dst, src], kwargs


@st.composite
def _arange(draw):
    n = draw(st.integers(1, 3))
    args = [draw(st.sampled_from([0, 3, -2, 2.5, 7, 0.5])) for _ in range(n)]
    kwargs = {"dtype": draw(DTYPE_ARGS)} if draw(st.booleans()) else {}
    return args, kwargs


SPECIAL = {
    "reshape": _reshape(),
    "broadcast_to": _broadcast_to(),
    "take": _take(),
    "take_along_axis": _take_along_axis(),
    "bincount": _bincount(),
    "einsum": _einsum(),
    "fromfunction": _fromfunction(),
    "where": _where(),
    "clip": _clip(),
    "dot": _two(),
    "vdot": _two(),
    "inner": _two(),
    "outer": _two(),
    "matmul": _two(),
    "tensordot": _tensordot(),
    "transpose": _transpose(),
    "permute_dims": _transpose(),
    "rot90": _rot90(),
    "convolve": _convolve(),
    "histogram": _histogram(),
    "meshgrid": _meshgrid(),
    "broadcast_shapes": _broadcast_shapes(),
    "tril_indices": _indices_n(),
    "triu_indices": _indices_n(),
    "copyto": _copyto(),
    "arange": _arange(),
}

#: Native functions not fuzzed, with why.
NOT_FUZZED = {
    "empty": "values are undefined: shape and dtype are covered by test_creation.py",
    "empty_like": "values are undefined: shape and dtype are covered by test_creation.py",
}


def _ndim(x):
    return len(x.shape) if isinstance(x, Arr) else np.ndim(x)


def _data(x):
    return x.data if isinstance(x, Arr) else x


def _first_is_0d(args, kwargs):
    return bool(args) and _ndim(args[0]) == 0


def _dtype_arg(args, kwargs, position=2):
    d = kwargs.get("dtype", args[position] if len(args) > position else None)
    return None if d is None else np.dtype(d)


def _non_float_dtype(args, kwargs):
    d = _dtype_arg(args, kwargs)
    return d is not None and d.kind != "f"


#: Known mismatches, each reported to the lead (issue 45): function -> (what differs,
#: the arguments it concerns). The fuzzing leaves those arguments out (so the rest of
#: the function is still fuzzed), and `test_known_mismatch` pins one example of each
#: as an xfail.
KNOWN = {
    "round": (
        "round of bool: NumPy gives float16, Hassium bool",
        lambda a, k: (
            np.result_type(a[0].data if isinstance(a[0], Arr) else a[0]) == np.bool_
        ),
        ([True], {}),
    ),
    "array": (
        (
            "array(x, copy=False) of a Python scalar: NumPy raises ValueError (a copy is "
            "needed); Hassium copies (or raises TypeError for a complex)"
        ),
        lambda a, k: k.get("copy") is False,
        ([False], {"copy": False}),
    ),
    "array_split": (
        "a 0-d array or scalar: NumPy TypeError, Hassium IndexError",
        _first_is_0d,
        ([False, 1], {}),
    ),
    "split": (
        "a 0-d array or scalar: NumPy AttributeError/TypeError, Hassium IndexError",
        _first_is_0d,
        ([False, 1], {}),
    ),
    "trapezoid": (
        (
            "a 0-d y: NumPy IndexError, Hassium AxisError; an x of another shape than y "
            "(NumPy's result or error differs)"
        ),
        lambda a, k: _first_is_0d(a, k) or len(a) > 1 or "x" in k,
        ([1.5], {}),
    ),
    "real": (
        "a Python scalar: NumPy returns its .real (a Python number), Hassium a 0-d array",
        lambda a, k: type(a[0]) in (bool, int, float, complex),
        ([False], {}),
    ),
    "imag": (
        "a Python scalar: NumPy returns its .imag (a Python number), Hassium a 0-d array",
        lambda a, k: type(a[0]) in (bool, int, float, complex),
        ([False], {}),
    ),
    "size": (
        "axis as a tuple (NumPy 2.4 takes one): Hassium raises TypeError",
        lambda a, k: isinstance(k.get("axis", a[1] if len(a) > 1 else None), tuple),
        ([Arr(np.zeros((2, 3)), "contiguous"), ()], {}),
    ),
    "cov": (
        "an integer or bool dtype=: NumPy raises UFuncTypeError, Hassium computes",
        lambda a, k: k.get("dtype") is not None and np.dtype(k["dtype"]).kind in "biu",
        ([False], {"dtype": np.dtype(bool)}),
    ),
    "var": (
        (
            "a dtype= that is not float: NumPy computes in it (int8, complex64), Hassium "
            "raises TypeError or gives float"
        ),
        _non_float_dtype,
        ([False], {"dtype": np.dtype(np.int8)}),
    ),
    "std": (
        "a dtype= that is not float: NumPy computes in it, Hassium raises TypeError",
        _non_float_dtype,
        ([0], {"dtype": np.dtype(bool)}),
    ),
    "nanvar": (
        "a dtype= that is not float: NumPy's errors come first or it computes in it",
        _non_float_dtype,
        ([0.5, 1, np.dtype(bool)], {}),
    ),
    "nanstd": (
        (
            "a dtype= that is not float: NumPy's TypeError ('If a is inexact, then dtype "
            "must be inexact') comes before its AxisError, Hassium's the other way round"
        ),
        _non_float_dtype,
        ([0.5, 1, np.dtype(bool)], {}),
    ),
    "accumulate": (
        (
            "ufunc.accumulate of a 0-d array with an axis: NumPy AxisError, Hassium "
            "TypeError ('cannot accumulate on a scalar')"
        ),
        _first_is_0d,
        ([Arr(np.array(False), "contiguous")], {"axis": 1}),
    ),
    "asarray": (
        (
            "asarray(x, copy=False) of a Python scalar: NumPy raises ValueError, Hassium "
            "copies"
        ),
        lambda a, k: k.get("copy") is False,
        ([False], {"copy": False}),
    ),
    "linspace": (
        "axis=None: NumPy raises TypeError, Hassium takes it as 0",
        lambda a, k: "axis" in k and k["axis"] is None,
        ([0, 1], {"axis": None}),
    ),
    "nanargmin": (
        "a 0-d array with keepdims=True: NumPy gives shape (), Hassium (1,)",
        lambda a, k: _first_is_0d(a, k) and bool(k.get("keepdims")),
        ([False, 0], {"keepdims": True}),
    ),
    "power": (
        "a complex power of zero: NumPy gives 0, Hassium nan+nanj",
        lambda a, k: any(np.result_type(_data(x)).kind == "c" for x in a),
        ([Arr(np.array(0.0), "contiguous"), 1 + 1j], {}),
    ),
    "tan": (
        (
            "complex tan with a large imaginary part (45j, complex64): NumPy 0+1j, "
            "Hassium 0+nanj"
        ),
        lambda a, k: any(np.result_type(_data(x)).kind == "c" for x in a),
        ([Arr(np.array([45j], np.complex64), "contiguous")], {}),
    ),
}
KNOWN["tanh"] = (
    (
        "complex tanh with a large real part (-128, dtype=complex64): NumPy -1+0j, "
        "Hassium nan+0j"
    ),
    lambda a, k: (
        any(np.result_type(_data(x)).kind == "c" for x in a)
        or (k.get("dtype") is not None and np.dtype(k["dtype"]).kind == "c")
    ),
    ([Arr(np.array([-128], np.int8), "contiguous")], {"dtype": np.dtype("complex64")}),
)
KNOWN["floor_divide"] = (
    (
        "dtype= with a Python int operand (bool 0-d // 0, dtype=uint8): NumPy casts the "
        "weak int to uint8, Hassium refuses int64 -> uint8 (UFuncTypeError)"
    ),
    lambda a, k: "dtype" in k and any(type(x) is int for x in a),
    ([Arr(np.array(False), "contiguous"), 0], {"dtype": np.dtype("uint8")}),
)
KNOWN["copyto"] = (
    (
        "a Python int src into a bool dst (casting='same_kind'): NumPy raises TypeError, "
        "Hassium copies"
    ),
    lambda a, k: len(a) > 1 and type(a[1]) in (int, float, complex),
    ([Arr(np.array(False), "contiguous"), 0], {}),
)
KNOWN["nan_to_num"] = (
    (
        "nan_to_num(x, copy=False) of a Python scalar: NumPy raises ValueError, Hassium "
        "returns"
    ),
    lambda a, k: k.get("copy", a[1] if len(a) > 1 else True) is False,
    ([False, False], {}),
)
KNOWN["concatenate"] = (
    (
        "axis as a tuple: NumPy raises TypeError, Hassium checks the arrays first "
        "(ValueError for 0-d ones)"
    ),
    lambda a, k: isinstance(k.get("axis", a[1] if len(a) > 1 else 0), tuple),
    ([[Arr(np.array(False), "contiguous")], ()], {}),
)
KNOWN["around"] = KNOWN["round"]
KNOWN["asanyarray"] = KNOWN["asarray"]
KNOWN["nanargmax"] = KNOWN["nanargmin"]


def known(name, args, kwargs):
    return name in KNOWN and KNOWN[name][1](args, kwargs)


def native_functions():
    return sorted(n for n in _native.FUNCTIONS if n not in NOT_FUZZED)


def native_ufuncs():
    """Each ufunc object once, by NumPy's canonical name."""
    seen, names = set(), []
    for name, uf in sorted(_native.UFUNCS.items()):
        canonical = getattr(np, name).__name__
        if canonical not in seen:
            seen.add(canonical)
            names.append(canonical)
    return names


def strategy_for(name):
    return SPECIAL[name] if name in SPECIAL else generic(name)


# ------------------------------------------------------------------------- the check


def materialise(value, xp):
    if isinstance(value, Arr):
        return value.make(xp)
    if isinstance(value, list):
        return [materialise(v, xp) for v in value]
    if isinstance(value, tuple):
        return tuple(materialise(v, xp) for v in value)
    if isinstance(value, dict):
        return {k: materialise(v, xp) for k, v in value.items()}
    return value


def outcome(func, xp, args, kwargs):
    """(result, the arguments as they are after the call) or the exception raised,
    with every array read (a lazy runtime's error surfaces when a result is read)."""
    args, kwargs = materialise(args, xp), materialise(kwargs, xp)
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = func(*args, **kwargs)
            return to_host(result), to_host((args, kwargs))
    except Exception as error:  # noqa: BLE001 -- compared with NumPy's
        return error


def to_host(x):
    if isinstance(x, (list, tuple)):
        return type(x)(to_host(v) for v in x)
    if isinstance(x, dict):
        return {k: to_host(v) for k, v in x.items()}
    if isinstance(x, np.ndarray):
        return x.copy()
    if not AGAINST_NUMPY and isinstance(x, MODULE.ndarray):
        return np.array(to_numpy(x))
    return x


def same(got, want, where):
    """Raises AssertionError naming ``where`` if ``got`` is not NumPy's ``want``."""
    if isinstance(want, (list, tuple)):
        assert isinstance(got, (list, tuple)), f"{where}: {type(got)} is not a sequence"
        assert len(got) == len(want), f"{where}: {len(got)} items, NumPy {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            same(g, w, f"{where}[{i}]")
        return
    if isinstance(want, dict):
        for k in want:
            same(got[k], want[k], f"{where}[{k!r}]")
        return
    if type(want) in (bool, int, float, complex):
        assert type(got) is type(want), f"{where}: {type(got)} is not {type(want)}"
    elif want is None or isinstance(want, (str, type)) or callable(want):
        assert got == want or got is want, f"{where}: {got!r} is not {want!r}"
        return
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype, f"{where}: dtype {g.dtype}, NumPy {w.dtype}"
    assert g.shape == w.shape, f"{where}: shape {g.shape}, NumPy {w.shape}"
    if w.dtype.kind in "biuSUO":
        np.testing.assert_array_equal(g, w, err_msg=where)
        return
    tol = RTOL.get(w.dtype, 1e-12)
    finite = np.abs(w[np.isfinite(w)]) if w.size else np.zeros(0)
    scale = float(finite.max()) if finite.size else 1.0
    np.testing.assert_allclose(
        g, w, rtol=tol, atol=tol * max(scale, 1.0) * 1e-3, equal_nan=True, err_msg=where
    )


def check(func_np, func_hs, args, kwargs):
    want = outcome(func_np, np, args, kwargs)
    got = outcome(func_hs, MODULE, args, kwargs)
    if isinstance(want, Exception):
        assert isinstance(got, Exception), (
            f"NumPy raised {type(want).__name__}: {want}; Hassium returned {got!r}"
        )
        assert kind(got) is kind(want), (
            f"NumPy raised {type(want).__name__}: {want}; "
            f"Hassium raised {type(got).__name__}: {got}"
        )
        return
    if isinstance(got, Exception):
        pytest.fail(
            f"Hassium raised {type(got).__name__}: {got}; NumPy returned {want[0]!r}"
        )
    same(got[0], want[0], "result")
    same(got[1], want[1], "arguments after the call")


# ------------------------------------------------------------------------- the tests


def test_every_native_function_is_fuzzed():
    """Each native function's parameters can be drawn (a new one needs a rule)."""
    missing = [n for n in native_functions() if not hasattr(np, n)]
    assert not missing, f"native but not NumPy's: {missing}"
    for name in native_functions():
        if name in SPECIAL:
            continue
        for p in inspect.signature(getattr(np, name)).parameters.values():
            drawable = (
                p.name in ARRAY_NAMES
                or p.name in BY_NAME
                or p.name in SKIPPED
                or p.name in ("tup", "arrays")
                or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
            )
            if not drawable:
                missing.append(f"{name}({p.name})")
    assert not missing, f"no drawing rule for: {missing}"


#: Functions whose draws met mismatches in the full suite run of 2026-11-27 (reference and
#: cpu stacks) that are not yet narrowed to arguments in KNOWN: ``append``, ``indices``
#: and ``linspace`` (a float64 result where NumPy gives int64), ``floor_divide`` into a bool
#: ``out`` (NumPy's casting error, Hassium's broadcast error), ``arctan``, ``divmod`` and
#: ``remainder`` on some drawn dtypes. Expected to fail, not strictly: each is open work.
UNTRIAGED = frozenset(
    {"append", "indices", "linspace", "arctan", "divmod", "remainder", "floor_divide"}
)


def untriaged(names):
    mark = pytest.mark.xfail(
        reason="mismatch found by the fuzzing, not yet narrowed (see UNTRIAGED)",
        strict=False,
    )
    return [pytest.param(n, marks=mark) if n in UNTRIAGED else n for n in names]


@pytest.mark.parametrize("name", untriaged(native_functions()))
@FUZZ
@given(data=st.data())
def test_function_matches_numpy(hs, name, data):
    args, kwargs = data.draw(strategy_for(name), label="arguments")
    assume(not known(name, args, kwargs))
    check(getattr(np, name), getattr(hs, name), args, kwargs)


@st.composite
def ufunc_call(draw, nin):
    args = draw(operands(nin))
    kwargs = {}
    if draw(st.integers(0, 4)) == 0:
        kwargs["dtype"] = draw(st.sampled_from(DTYPES))
    if draw(st.integers(0, 4)) == 0:
        shapes = [a.shape for a in args if isinstance(a, Arr)]
        try:
            shape = np.broadcast_shapes(*shapes)
        except ValueError:
            shape = draw(SHAPES)
        kwargs["out"] = draw(arrays(shape=shape))
    return args, kwargs


@pytest.mark.parametrize("name", untriaged(native_ufuncs()))
@FUZZ
@given(data=st.data())
def test_ufunc_matches_numpy(hs, name, data):
    uf = getattr(np, name)
    args, kwargs = data.draw(ufunc_call(uf.nin), label="arguments")
    assume(not known(name, args, kwargs))
    check(uf, getattr(hs, name), args, kwargs)


BINARY = [n for n in native_ufuncs() if getattr(np, n).nin == 2]


@pytest.mark.parametrize("method", ["reduce", "accumulate", "outer"])
@pytest.mark.parametrize("name", BINARY)
@FUZZ
@given(data=st.data())
def test_ufunc_method_matches_numpy(hs, name, method, data):
    if method == "outer":
        args, kwargs = data.draw(operands(2, min_dims=0), label="arguments"), {}
    else:
        args = [data.draw(arrays(), label="array")]
        kwargs = {"axis": data.draw(AXES if method == "reduce" else SMALL)}
        if data.draw(st.booleans()):
            kwargs["dtype"] = data.draw(DTYPE_ARGS)
        if method == "reduce" and data.draw(st.booleans()):
            kwargs["keepdims"] = True
    assume(not known(method, args, kwargs))
    check(
        getattr(getattr(np, name), method),
        getattr(getattr(hs, name), method),
        args,
        kwargs,
    )


@pytest.mark.parametrize("name", sorted(KNOWN))
def test_known_mismatch(hs, name):
    """One example of each known mismatch, so the fix shows (as an XPASS)."""
    why, _, (args, kwargs) = KNOWN[name]
    if name == "accumulate":
        func_np, func_hs = np.add.accumulate, hs.add.accumulate
    else:
        func_np, func_hs = getattr(np, name), getattr(hs, name)
    try:
        check(func_np, func_hs, args, kwargs)
    except (AssertionError, pytest.fail.Exception):
        pytest.xfail(f"known: {why}")
