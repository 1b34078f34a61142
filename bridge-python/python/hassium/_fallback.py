"""Running NumPy functions Hassium has no native version of.

A fallback call converts every Hassium array among the arguments (also inside lists,
tuples and dicts) to a NumPy array with ``np.asarray`` -- which syncs the array and then
shares its host memory, so the conversion is free of copies -- calls NumPy, and wraps the
NumPy arrays in the result back into Hassium arrays. The first fallback of each function
name warns with ``HassiumFallbackWarning``; ``HASSIUM_FALLBACK`` chooses the policy:

* ``warn`` (default): warn once per function name, then stay quiet;
* ``silent``: never warn;
* ``error``: raise ``NotImplementedError`` instead of falling back (to find the calls a
  program makes that leave the runtime).

Functions that write into their arguments (``out=``, ``np.put``, ``random.shuffle``, ...)
must not write into host memory behind the runtime's back: those arguments are copied to
NumPy, and the results are copied back into the Hassium arrays with ``copyto``, so the
write is recorded like any other.

``fallback_report()`` counts the fallbacks by function name.
"""

import os
import sys
import warnings

import numpy as np

from . import _hassium as _ext

__all__ = [
    "HassiumFallbackWarning",
    "call",
    "fallback_report",
    "policy",
    "wrap_function",
]


class HassiumFallbackWarning(UserWarning):
    """A NumPy function ran through NumPy instead of being recorded by Hassium."""


#: name -> number of fallback calls; read with ``fallback_report()``.
_counts = {}
_warned = set()

#: Functions that write into an argument that is not ``out=``; the first positional
#: argument is copied back after the call.
MUTATES_FIRST_ARGUMENT = frozenset(
    {
        "fill_diagonal",
        "put",
        "place",
        "putmask",
        "put_along_axis",
        "shuffle",
        "random.shuffle",
        "copyto",
    }
)


def _host_copy(a):
    """A NumPy copy of a Hassium array for NumPy to write into, as writeable as the
    array: NumPy then refuses a read-only one with its own error, and nothing is
    copied back."""
    copy = np.array(a, copy=True)
    copy.flags.writeable = a.flags.writeable
    return copy


_POLICIES = ("warn", "silent", "error")


def policy():
    """The fallback policy in force (read on every call so tests can change it)."""
    value = os.environ.get("HASSIUM_FALLBACK", "warn").strip().lower() or "warn"
    if value not in _POLICIES:
        raise ValueError(
            f"HASSIUM_FALLBACK={value!r} is not one of {', '.join(_POLICIES)}"
        )
    return value


def fallback_report():
    """Which NumPy functions fell back, and how often: ``{name: count}``."""
    return dict(_counts)


def _note(name):
    mode = policy()
    if mode == "error":
        raise NotImplementedError(
            f"hassium has no native {name}() and HASSIUM_FALLBACK=error forbids "
            f"falling back to NumPy"
        )
    _counts[name] = _counts.get(name, 0) + 1
    if mode == "warn" and name not in _warned:
        _warned.add(name)
        warnings.warn(
            f"hassium: {name}() is not native; running it through NumPy "
            f"(set HASSIUM_FALLBACK=silent to hide this, =error to forbid it)",
            HassiumFallbackWarning,
            stacklevel=_outside_the_package(),
        )


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _outside_the_package():
    """The ``stacklevel`` that makes a warning raised by our caller name the program's
    line: the first frame whose code is not in this package (a method, a function and
    the fallback may be several frames deep)."""
    frame, level = sys._getframe(2), 2
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    return level


def _is_hassium(x):
    return isinstance(x, _ext.ndarray)


def to_numpy(obj, copy=False):
    """``obj`` with every Hassium array replaced by a NumPy array (zero-copy unless asked)."""
    if _is_hassium(obj):
        return np.array(obj, copy=True) if copy else np.asarray(obj)
    t = type(obj)
    if t is list or t is tuple:
        if any(_contains_hassium(x) for x in obj):
            return t(to_numpy(x, copy) for x in obj)
        return obj
    if t is dict:
        return {k: to_numpy(v, copy) for k, v in obj.items()}
    return obj


def _contains_hassium(obj):
    if _is_hassium(obj):
        return True
    t = type(obj)
    if t is list or t is tuple:
        return any(_contains_hassium(x) for x in obj)
    if t is dict:
        return any(_contains_hassium(v) for v in obj.values())
    return False


#: The dtypes the runtime holds; arrays of any other dtype (strings, objects, dates, long
#: double) stay NumPy arrays.
DTYPES = frozenset(
    np.dtype(t)
    for t in (
        np.bool_,
        np.int8,
        np.int16,
        np.int32,
        np.int64,
        np.uint8,
        np.uint16,
        np.uint32,
        np.uint64,
        np.float32,
        np.float64,
        np.complex64,
        np.complex128,
        np.float16,
    )
)


def _wrappable(a):
    # A non-native byte order (``frombuffer(b, ">f8")``, ``load`` of a big-endian file)
    # is wrapped too: ``asarray`` converts it to the native dtype.
    dt = a.dtype
    return (dt if dt.isnative else dt.newbyteorder("=")) in DTYPES


def to_hassium(obj):
    """``obj`` with every NumPy array in it wrapped into a Hassium array."""
    if type(obj) is np.ndarray:
        return _ext.asarray(obj) if _wrappable(obj) else obj
    t = type(obj)
    if t is list or t is tuple:
        return t(to_hassium(x) for x in obj)
    if isinstance(obj, tuple) and hasattr(
        obj, "_fields"
    ):  # namedtuple (e.g. linalg.svd)
        return t(*(to_hassium(x) for x in obj))
    return obj


def call(func, name, args, kwargs, mutates=None):
    """Run ``func(*args, **kwargs)`` through NumPy on converted arguments; see the module doc."""
    _note(name)
    if mutates is None:
        mutates = name in MUTATES_FIRST_ARGUMENT
    out = kwargs.get("out") if kwargs else None
    targets = []  # (hassium array, numpy copy) pairs written back after the call
    if out is not None and _contains_hassium(out):
        kwargs = dict(kwargs)
        outs = out if isinstance(out, tuple) else (out,)
        np_outs = []
        for o in outs:
            if _is_hassium(o):
                copy = _host_copy(o)
                targets.append((o, copy))
                np_outs.append(copy)
            else:
                np_outs.append(o)
        kwargs["out"] = tuple(np_outs) if isinstance(out, tuple) else np_outs[0]
    np_args = list(args)
    if mutates and np_args and _is_hassium(np_args[0]):
        copy = _host_copy(np_args[0])
        targets.append((np_args[0], copy))
        np_args[0] = copy
    np_args = [a if isinstance(a, np.ndarray) else to_numpy(a) for a in np_args]
    np_kwargs = to_numpy(kwargs) if kwargs else {}
    result = func(*np_args, **np_kwargs)
    for hs_array, np_copy in targets:
        _ext.copyto(hs_array, np_copy)
    if out is not None and targets:
        return out
    if mutates and targets and result is None:
        return None
    return to_hassium(result)


class FallbackUfunc:
    """A NumPy ufunc run through NumPy, with its methods falling back the same way."""

    def __init__(self, np_ufunc, name=None):
        self._np = np_ufunc
        self.__name__ = name or np_ufunc.__name__
        self.__doc__ = np_ufunc.__doc__
        self.nin = np_ufunc.nin
        self.nout = np_ufunc.nout

    def __call__(self, *args, **kwargs):
        return call(self._np, self.__name__, args, kwargs)

    def _method(self, method, args, kwargs):
        return call(
            getattr(self._np, method),
            f"{self.__name__}.{method}",
            args,
            kwargs,
            mutates=(method == "at"),
        )

    def reduce(self, *args, **kwargs):
        return self._method("reduce", args, kwargs)

    def accumulate(self, *args, **kwargs):
        return self._method("accumulate", args, kwargs)

    def outer(self, *args, **kwargs):
        return self._method("outer", args, kwargs)

    def at(self, *args, **kwargs):
        return self._method("at", args, kwargs)

    def reduceat(self, *args, **kwargs):
        return self._method("reduceat", args, kwargs)

    def __getattr__(self, attr):
        return getattr(self._np, attr)

    def __repr__(self):
        return f"<hassium fallback ufunc '{self.__name__}'>"


def wrap_function(func, name):
    """A callable running NumPy's ``func`` through the fallback path under ``name``."""
    if isinstance(func, np.ufunc):
        return FallbackUfunc(func, name)

    def fallback(*args, **kwargs):
        return call(func, name, args, kwargs)

    fallback.__name__ = getattr(func, "__name__", name)
    fallback.__qualname__ = fallback.__name__
    fallback.__doc__ = getattr(func, "__doc__", None)
    fallback.__wrapped__ = func
    fallback.__hassium_fallback__ = True
    return fallback


def wrap_attribute(module, name, qualified=None):
    """What ``hassium.<name>`` is when Hassium has no native ``name``: NumPy's own object,
    with callables that take arrays wrapped in the fallback path. Types (dtypes, classes,
    exceptions), modules and constants are NumPy's own objects."""
    obj = getattr(module, name)
    if isinstance(obj, np.ufunc):
        return FallbackUfunc(obj, qualified or name)
    if isinstance(obj, type) or not callable(obj):
        return obj
    return wrap_function(obj, qualified or name)
