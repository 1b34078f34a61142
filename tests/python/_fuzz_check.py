"""How test_api_fuzz.py compares a call with NumPy's: results, the arguments after
the call, exception kinds, and the mismatches already known (``KNOWN``)."""

import inspect
import math
import warnings

import numpy as np
import pytest
from _fuzz_draws import Arr
from conftest import AGAINST_NUMPY, MODULE, to_numpy

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


def _ndim(x):
    return len(x.shape) if isinstance(x, Arr) else np.ndim(x)


def _data(x):
    return x.data if isinstance(x, Arr) else x


def _uint32_dtype(args, kwargs):
    d = kwargs.get("dtype", args[2] if len(args) > 2 else None)
    return d is not None and np.dtype(d) == np.uint32


#: Known mismatches, each reported to the lead (issue 45): function -> (what differs,
#: the arguments it concerns). The fuzzing leaves those arguments out (so the rest of
#: the function is still fuzzed), and `test_known_mismatch` pins one example of each
#: as an xfail.
KNOWN = {}


KNOWN["reciprocal"] = (
    (
        "integer reciprocal of 0: NumPy gives what C's conversion of 1.0/0 leaves "
        "(INT_MIN for int32 on x86), Hassium 0; undefined in C, not pinned (as in "
        "test_ufuncs.py)"
    ),
    lambda a, k: (
        any(
            np.result_type(_data(x)).kind in "iu" and not np.all(np.asarray(_data(x)))
            for x in a
            if isinstance(x, Arr) or type(x) is int
        )
        or (k.get("dtype") is not None and np.dtype(k["dtype"]).kind in "iu")
    ),
    ([Arr(np.array(0, np.int32), "contiguous")], {}),
)
_NAN_TO_UINT32 = (
    "a uint32 dtype= where the result is NaN (an empty slice, or ddof >= n): NumPy's "
    "cast of NaN to uint32 leaves 0 (through int64 on x86), Hassium's 2**31; undefined "
    "in C, not pinned (as reciprocal's)"
)
KNOWN["var"] = (
    _NAN_TO_UINT32,
    _uint32_dtype,
    ([False], {"dtype": np.dtype(np.uint32), "ddof": 1}),
)
KNOWN["std"] = KNOWN["nanvar"] = KNOWN["nanstd"] = KNOWN["var"]
KNOWN["mean"] = (
    _NAN_TO_UINT32,
    _uint32_dtype,
    ([Arr(np.array([], bool), "contiguous")], {"dtype": np.dtype(np.uint32)}),
)
KNOWN["nanmean"] = KNOWN["mean"]


def _undefined_int_cast(args, kwargs):
    """An inexact array reduced or scanned in an integer ``dtype=`` it does not fit."""
    d = kwargs.get("dtype")
    if d is None or np.dtype(d).kind not in "iu" or not isinstance(args[0], Arr):
        return False
    x = args[0].data
    if x.dtype.kind not in "fc" or not x.size:
        return False
    info = np.iinfo(d)
    with np.errstate(all="ignore"):
        re = x.real.astype(np.float64)
        return not bool(np.all(np.isfinite(re) & (re >= info.min) & (re <= info.max)))


KNOWN["reduce"] = KNOWN["accumulate"] = (
    (
        "a float array with NaN, infinities or values out of range reduced or scanned "
        "in an integer dtype=: the cast of those to the dtype is undefined in C; not "
        "pinned (as reciprocal's)"
    ),
    _undefined_int_cast,
    (
        [Arr(np.array([-np.inf, 0.0], np.float16), "contiguous")],
        {"axis": 0, "dtype": np.dtype(np.uint32)},
    ),
)


def _non_finite(args, kwargs):
    return any(
        not np.all(np.isfinite(d))
        for d in map(_data, (*args, *kwargs.values()))
        if isinstance(d, (np.ndarray, np.inexact, float, complex))
        and np.asarray(d).dtype.kind in "fc"
    )


_NON_FINITE_PRODUCT = (
    "an infinite or NaN operand: NumPy's dot loops and BLAS (OpenBLAS's scal skips a "
    "zero factor, its complex products associate otherwise) give NaN where elementwise "
    "IEEE arithmetic gives inf, or 0 where it gives NaN; NumPy's own complex64 and "
    "complex128 paths differ. Implementation-defined, not pinned"
)
KNOWN["inner"] = (
    _NON_FINITE_PRODUCT,
    _non_finite,
    (
        [
            Arr(np.array([0.0, np.inf], np.float16), "contiguous"),
            Arr(np.array(0.0, np.float32), "contiguous"),
        ],
        {},
    ),
)
KNOWN["matmul"] = (
    _NON_FINITE_PRODUCT,
    _non_finite,
    (
        [
            Arr(np.array([[0.0, np.inf]], np.float16), "contiguous"),
            Arr(np.array([[0, 0], [0, 0.5 + 0.5j]], np.complex64), "contiguous"),
        ],
        {},
    ),
)
KNOWN["convolve"] = (
    _NON_FINITE_PRODUCT,
    _non_finite,
    (
        [
            Arr(np.array([0.5 + 0.5j], np.complex64), "contiguous"),
            Arr(np.array([np.inf], np.float16), "contiguous"),
        ],
        {},
    ),
)


def _holds_int64_max(args, kwargs):
    x = np.asarray(_data(args[0] if args else kwargs.get("x")))
    return x.dtype == np.int64 and bool(np.any(x == np.iinfo(np.int64).max))


def _wraps_an_empty_axis(args, kwargs):
    try:
        bound = inspect.signature(np.take).bind(*args, **kwargs).arguments
        shape = np.shape(_data(bound["a"]))
        axis = bound.get("axis")
        n = math.prod(shape) if axis is None else shape[axis]
    except (TypeError, IndexError):
        return False
    return bound.get("mode") == "wrap" and n == 0


#: Calls NumPy itself mishandles, corrupting its own memory or never returning: they
#: cannot be compared (the NumPy side would abort or hang the process) and are left out
#: like ``KNOWN`` ones, with no example run. Function -> (what NumPy does, the arguments
#: it concerns).
NUMPY_UNSAFE = {
    "take": (
        (
            "mode='wrap' along an empty axis with an index to wrap: NumPy 2.4 subtracts "
            "the axis length, 0, forever (take(zeros((0, 0)), 0, axis=0, mode='wrap')). "
            "Hassium returns the empty result"
        ),
        _wraps_an_empty_axis,
    ),
    "bincount": (
        (
            "an element 2**63 - 1: NumPy 2.4's length, the maximum + 1, overflows; it "
            "returns [] and has written past an allocation (a later free aborts: "
            "munmap_chunk(): invalid pointer). Hassium raises ValueError"
        ),
        _holds_int64_max,
    ),
}


def known(name, args, kwargs):
    """A known mismatch, or a call NumPy cannot run safely."""
    return any(
        name in table and table[name][1](args, kwargs)
        for table in (KNOWN, NUMPY_UNSAFE)
    )


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


def same(got, want, where, loop=None):
    """Raises AssertionError naming ``where`` if ``got`` is not NumPy's ``want``; floats
    to the tolerance of their dtype, or of ``loop``'s, the dtype NumPy computed them in,
    where that is coarser (a float32 loop into a float64 ``out=``)."""
    if isinstance(want, (list, tuple)):
        assert isinstance(got, (list, tuple)), f"{where}: {type(got)} is not a sequence"
        assert len(got) == len(want), f"{where}: {len(got)} items, NumPy {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            same(g, w, f"{where}[{i}]", loop)
        return
    if isinstance(want, dict):
        for k in want:
            same(got[k], want[k], f"{where}[{k!r}]", loop)
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
    tol = max(RTOL.get(w.dtype, 1e-12), RTOL.get(loop, 0.0))
    finite = np.abs(w[np.isfinite(w)]) if w.size else np.zeros(0)
    scale = float(finite.max()) if finite.size else 1.0
    np.testing.assert_allclose(
        g, w, rtol=tol, atol=tol * max(scale, 1.0) * 1e-3, equal_nan=True, err_msg=where
    )


# ------------------------------------------- results whose order NumPy leaves open


def _kth_axis(args, kwargs):
    kth = args[1] if len(args) > 1 else kwargs["kth"]
    axis = args[2] if len(args) > 2 else kwargs.get("axis", -1)
    return kth, axis


def _partitioned(values, kth, axis):
    """What a partition guarantees: the multiset along ``axis`` and the element at each
    ``kth`` (a sort's), not the order of the others."""
    v = np.asarray(values)
    if axis is None:
        v, axis = v.reshape(-1), 0
    if v.size == 0:
        return v
    n = v.shape[axis]
    at = np.asarray(kth).reshape(-1) % n
    return np.sort(v, axis=axis), np.take(v, at, axis=axis)


def _partition_form(result, host_args):
    (args, kwargs) = host_args
    return _partitioned(result, *_kth_axis(args, kwargs))


def _argpartition_form(result, host_args):
    (args, kwargs) = host_args
    kth, axis = _kth_axis(args, kwargs)
    a, idx = np.asarray(args[0] if args else kwargs["a"]), np.asarray(result)
    if a.ndim == 0:
        a = a.reshape(1)
    if axis is None:
        a, axis = a.reshape(-1), 0
    if idx.size == 0:
        return idx
    # Positions: a permutation along the axis; values: partitioned at kth.
    return np.sort(idx, axis=axis), _partitioned(
        np.take_along_axis(a, idx, axis=axis), kth, axis
    )


#: Functions whose result NumPy does not order (or orders by its own algorithm: hashing
#: for `unique_values` and `unique(sorted=False)`, introselect for partitions): compared in a canonical form of the
#: result and the arguments after the call.
def _unique_form(result, host_args):
    """``unique(sorted=False)`` without ``return_*`` is NumPy's hashing order."""
    if host_args[1].get("sorted", True) or isinstance(result, tuple):
        return result
    return np.sort(np.asarray(result))


CANONICAL = {
    "unique_values": lambda result, host_args: np.sort(np.asarray(result)),
    "unique": _unique_form,
    "partition": _partition_form,
    "argpartition": _argpartition_form,
}


#: Functions whose ``overwrite_input=True`` leaves their input undefined after the call
#: (NumPy partitions it in place): the input is compared as its sorted values.
OVERWRITES_INPUT = frozenset(
    {"median", "nanmedian", "quantile", "nanquantile", "percentile", "nanpercentile"}
)


def _sorted_input(host_args):
    args, kwargs = host_args
    if not kwargs.get("overwrite_input") or not isinstance(args[0], np.ndarray):
        return host_args
    return [np.sort(args[0], axis=None), *args[1:]], kwargs


def check(func_np, func_hs, args, kwargs, name=None, loop=None):
    want = outcome(func_np, np, args, kwargs)
    got = outcome(func_hs, MODULE, args, kwargs)
    settled = not isinstance(want, Exception) and not isinstance(got, Exception)
    if name in CANONICAL and settled:
        form = CANONICAL[name]
        got = (form(got[0], got[1]), got[1])
        want = (form(want[0], want[1]), want[1])
    if name in OVERWRITES_INPUT and settled:
        got = (got[0], _sorted_input(got[1]))
        want = (want[0], _sorted_input(want[1]))
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
    same(got[0], want[0], "result", loop)
    same(got[1], want[1], "arguments after the call", loop)
