"""What test_api_fuzz.py draws: arrays in every layout, scalars, arguments by
parameter name, and the rules of the functions whose parameters depend on each
other (``SPECIAL``)."""

import inspect
from dataclasses import dataclass

import numpy as np
from conftest import DTYPES
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

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
    # Sorting, selecting and set operations (each invalid choice is NumPy's ValueError).
    "kth": st.one_of(
        st.integers(-4, 4), st.lists(st.integers(-3, 3), max_size=3).map(tuple)
    ),
    "kind": st.sampled_from(
        [None, "stable", "quicksort", "mergesort", "introselect", "sort", "table"]
    ),
    "stable": st.sampled_from([None, True, False]),
    "include_initial": st.booleans(),
    "right": st.booleans(),
    "wrap": st.booleans(),
    "assume_unique": st.booleans(),
    "return_indices": st.booleans(),
    "return_index": st.booleans(),
    "return_inverse": st.booleans(),
    "return_counts": st.booleans(),
    "sorted": st.booleans(),
    "invert": st.booleans(),
    "side": st.sampled_from(["left", "right"]),
    "overwrite_input": st.booleans(),
    # Quantiles: in [0, 1] for quantile, [0, 100] for percentile; out of range raises.
    "q": st.one_of(
        st.sampled_from([0, 0.25, 0.5, 1, 50, 100, -1, 101]),
        st.lists(st.sampled_from([0, 0.5, 1, 25, 75]), min_size=1, max_size=3),
    ),
    "method": st.sampled_from(["linear", "lower", "higher", "midpoint", "nearest"]),
    "pad_width": st.one_of(
        st.integers(0, 2),
        st.tuples(st.integers(0, 2), st.integers(0, 2)),
        st.lists(
            st.tuples(st.integers(0, 2), st.integers(0, 2)), min_size=1, max_size=3
        ),
    ),
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
    "ar",
    "ar1",
    "ar2",
    "element",
    "test_elements",
    "keys",
    "mask",
    "vals",
    "ind",
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
    "sorter",
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


def strategy_for(name):
    return SPECIAL[name] if name in SPECIAL else generic(name)
