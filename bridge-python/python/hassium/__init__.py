"""Hassium: a lazy vector-bytecode runtime for NumPy programs.

``import hassium as np`` gives NumPy's namespace: array operations are recorded as
bytecode and run, fused and compiled, when a result is observed. What Hassium does not
implement natively runs through NumPy (see ``hassium._fallback``); dtypes, constants and
exception types are NumPy's own objects.

Layout: ``_hassium`` (the compiled extension: the array type and the recorder),
``_native`` (NumPy's functions on the extension's primitives), ``_fallback`` (everything
else, through NumPy), ``_methods`` (ndarray methods the array type does not define, on
those functions), ``_dispatch`` (NumPy calls on Hassium arrays come back here),
``random``, ``linalg``, and ``__main__`` (``python -m hassium prog.py``).
"""

import os as _os

# Hassium's engines run the array work on their own threads. NumPy's OpenBLAS, loaded with
# NumPy, busy-waits on every core for about 2^28 cycles after start-up and after each BLAS
# call before its threads sleep; on a small machine that spin takes cores from the
# engine. A short timeout keeps BLAS threads (used only by NumPy fallbacks) but lets them
# sleep at once. Only a default: an explicit setting wins, and it only takes effect when
# Hassium is imported before NumPy (as under `python -m hassium`).
_os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

import sys as _sys

try:
    from . import _hassium
except ImportError as _err:  # pragma: no cover - only without a build
    raise ImportError(
        "hassium's compiled extension hassium._hassium is missing; build it with "
        "`maturin develop -m bridge-python/Cargo.toml` (scripts/setup.sh does)"
    ) from _err


def _run_as_runner(argv):
    """True when `argv` (the interpreter's own, ``sys.orig_argv``) is ``python [options]
    -m hassium [--stats] program ...``: a run that will use the runtime, with its
    configuration final (the environment is not changed after this point)."""
    i = 1
    while i < len(argv):
        a = argv[i]
        if a == "-m":
            rest = argv[i + 2 :] if argv[i + 1 : i + 2] == ["hassium"] else []
            while rest[:1] == ["--stats"]:
                rest = rest[1:]
            # (`bool` is NumPy's dtype in this module's namespace.)
            return rest[:1] in (["-c"], ["-m"]) or (
                len(rest) > 0 and rest[0][:1] != "-"
            )
        if a in ("-X", "-W"):
            i += 2
            continue
        if not a.startswith("-") or a.startswith("-c"):
            return False
        i += 1
    return False


# Started by mpirun: the runtime starts now, so that on the cluster stack every rank but 0
# enters the engine's worker loop here, before the program runs any code of its own.
if _os.environ.get("OMPI_COMM_WORLD_SIZE") or _os.environ.get("PMI_SIZE"):
    _hassium.start()
elif _os.environ.get("HASSIUM_PRESTART", "1") != "0" and _run_as_runner(
    getattr(_sys, "orig_argv", [])
):
    # `python -m hassium prog.py`: the engine starts on a thread of its own while NumPy
    # and Hassium are imported (a GPU driver's start-up takes a quarter of a second).
    # Joined before the program runs, before a fork and at exit (see prestart in
    # bridge-python/src/rt.rs). A device engine started so cannot run in a process forked
    # from this one, even before the first operation: HASSIUM_PRESTART=0 starts it at the
    # first operation.
    import atexit as _atexit

    # glibc's environment must not be written while another thread reads it, and the
    # engine's start reads it. NumPy's import writes OPENBLAS_MAIN_FREE (putenv, then
    # unsetenv) unless it is set: set here, before the thread exists, NumPy leaves it
    # alone, and the runner removes it once the thread is joined (NumPy's net effect).
    # The runner joins before the program runs, which may write the environment too.
    _main_free_added = "OPENBLAS_MAIN_FREE" not in _os.environ
    if _main_free_added:
        _os.environ["OPENBLAS_MAIN_FREE"] = "1"

    # A stack that starts MPI (the cluster engine without mpirun) starts here instead,
    # before the imports: MPI sets environment variables, which they read.
    _prestarted = _hassium.prestart()
    _os.register_at_fork(before=_hassium.prestart_join)
    _atexit.register(_hassium.prestart_join)

# A batch of small arrays may be running on the runtime's flush thread, which a forked
# child would not have: fork waits for it.
_os.register_at_fork(before=_hassium.quiesce)

import numpy as _np

from . import _fallback as _fallback
from . import _native as _native
from ._fallback import HassiumFallbackWarning as HassiumFallbackWarning
from ._fallback import fallback_report as fallback_report
from ._native import FUNCTIONS as _FUNCTIONS
from ._native import UFUNCS as _UFUNCS
from ._native import flush as flush
from ._native import info as info
from ._native import stats as stats
from ._native import ufunc as ufunc

ndarray = _hassium.ndarray
globals().update(_FUNCTIONS)
globals().update(_UFUNCS)

# NumPy's own types and constants: a dtype here IS NumPy's dtype object.
for _name in [
    "bool",
    "bool_",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
    "intp",
    "uintp",
    "byte",
    "ubyte",
    "short",
    "ushort",
    "intc",
    "uintc",
    "int_",
    "uint",
    "long",
    "ulong",
    "longlong",
    "ulonglong",
    "half",
    "single",
    "double",
    "longdouble",
    "csingle",
    "cdouble",
    "clongdouble",
    "float_",
    "complex_",
    "number",
    "integer",
    "signedinteger",
    "unsignedinteger",
    "floating",
    "complexfloating",
    "inexact",
    "generic",
    "dtype",
    "finfo",
    "iinfo",
    "pi",
    "e",
    "euler_gamma",
    "inf",
    "nan",
    "newaxis",
    "little_endian",
    "errstate",
    "seterr",
    "geterr",
    "result_type",
    "promote_types",
    "can_cast",
    "issubdtype",
    "isdtype",
    "exceptions",
    # Printing options and helpers that take no arrays: NumPy's own, not fallbacks (a
    # Hassium array prints through NumPy's formatting, so these options apply to it).
    "printoptions",
    "set_printoptions",
    "get_printoptions",
    "format_float_positional",
    "format_float_scientific",
    "isscalar",
    "ndindex",
]:
    if hasattr(_np, _name):
        globals()[_name] = getattr(_np, _name)

AxisError = _np.exceptions.AxisError
# Programs (and compiled libraries such as pybind11) read ``numpy.__version__`` to pick
# code paths; under ``python -m hassium`` this module is ``numpy``, so it reports the
# NumPy it mirrors. Hassium's own version is ``hassium_version``.
__version__ = _np.__version__
hassium_version = getattr(_hassium, "__version__", "0.1.0")

from . import _dispatch
from . import linalg as linalg
from . import random as random
from ._inspection import __array_namespace_info__ as __array_namespace_info__

# The Array API standard this namespace follows (its inspection API included).
__array_api_version__ = "2024.12"

_dispatch.install()


def __getattr__(name):
    """NumPy's other names: functions through the fallback path, the rest as they are."""
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        value = _fallback.wrap_attribute(_np, name)
    except AttributeError:
        raise AttributeError(f"module 'hassium' has no attribute {name!r}") from None
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__():
    return sorted(set(globals()) | set(dir(_np)))


def _at_exit():
    """Run what is still recorded, and print the counters when HASSIUM_STATS=1 (for an
    extension that does not register its own exit hook)."""
    import os
    import sys

    try:
        _hassium.flush()
    except Exception as err:  # noqa: BLE001 - reported; the interpreter is ending
        print(f"hassium: the final flush failed: {err}", file=sys.stderr)
    if os.environ.get("HASSIUM_STATS", "") not in ("", "0"):
        from ._report import format_stats

        print(format_stats(_hassium.stats()), file=sys.stderr)


if not hasattr(_hassium, "_atexit"):  # the extension flushes and reports at exit itself
    import atexit as _atexit

    _atexit.register(_at_exit)
