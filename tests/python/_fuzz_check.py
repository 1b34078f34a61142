"""How test_api_fuzz.py compares a call with NumPy's: results, the arguments after
the call, exception kinds, and the mismatches already known (``KNOWN``)."""

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


def _first_is_0d(args, kwargs):
    return bool(args) and _ndim(args[0]) == 0


def _uint32_dtype(args, kwargs):
    d = kwargs.get("dtype", args[2] if len(args) > 2 else None)
    return d is not None and np.dtype(d) == np.uint32


#: Known mismatches, each reported to the lead (issue 45): function -> (what differs,
#: the arguments it concerns). The fuzzing leaves those arguments out (so the rest of
#: the function is still fuzzed), and `test_known_mismatch` pins one example of each
#: as an xfail.
KNOWN = {
    "trapezoid": (
        (
            "a 0-d y: NumPy IndexError, Hassium AxisError; an x of another shape than y "
            "(NumPy's result or error differs)"
        ),
        lambda a, k: _first_is_0d(a, k) or len(a) > 1 or "x" in k,
        ([1.5], {}),
    ),
    "cov": (
        "an integer or bool dtype=: NumPy raises UFuncTypeError, Hassium computes",
        lambda a, k: k.get("dtype") is not None and np.dtype(k["dtype"]).kind in "biu",
        ([False], {"dtype": np.dtype(bool)}),
    ),
    "power": (
        "a complex power of zero: NumPy gives 0, Hassium nan+nanj",
        lambda a, k: any(np.result_type(_data(x)).kind == "c" for x in a),
        ([Arr(np.array(0.0), "contiguous"), 1 + 1j], {}),
    ),
}
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
KNOWN["var"] = (
    (
        "a uint32 dtype= where the variance is NaN (ddof >= n): NumPy's cast of NaN to "
        "uint32 leaves 0 (through int64 on x86), Hassium's 2**31; undefined in C, not "
        "pinned (as reciprocal's)"
    ),
    _uint32_dtype,
    ([False], {"dtype": np.dtype(np.uint32), "ddof": 1}),
)
KNOWN["std"] = KNOWN["nanvar"] = KNOWN["nanstd"] = KNOWN["var"]


def known(name, args, kwargs):
    return name in KNOWN and KNOWN[name][1](args, kwargs)


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
#: for `unique_values`, introselect for partitions): compared in a canonical form of the
#: result and the arguments after the call.
CANONICAL = {
    "unique_values": lambda result, host_args: np.sort(np.asarray(result)),
    "partition": _partition_form,
    "argpartition": _argpartition_form,
}


def check(func_np, func_hs, args, kwargs, name=None):
    want = outcome(func_np, np, args, kwargs)
    got = outcome(func_hs, MODULE, args, kwargs)
    settled = not isinstance(want, Exception) and not isinstance(got, Exception)
    if name in CANONICAL and settled:
        form = CANONICAL[name]
        got = (form(got[0], got[1]), got[1])
        want = (form(want[0], want[1]), want[1])
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
