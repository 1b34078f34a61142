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

The functions live in one module per kind, in the order they build on each other:
``_common`` (shared helpers), ``_shapes``, ``_ufuncs``, ``_creation``, ``_products``,
``_reductions``, ``_elementwise``, ``_joining``. This module gathers them into one
namespace (``_composed``, ``linalg`` and ``random`` build on it) and makes ``FUNCTIONS``.
"""

import numpy as np

from . import (
    _common,
    _creation,
    _elementwise,
    _fallback,
    _joining,
    _products,
    _reductions,
    _shapes,
    _ufuncs,
)
from . import _hassium as _ext

_SECTIONS = (
    _common,
    _shapes,
    _ufuncs,
    _creation,
    _products,
    _reductions,
    _elementwise,
    _joining,
)
_SECTION_NAMES = frozenset(m.__name__ for m in _SECTIONS)
for _m in _SECTIONS:
    globals().update({k: v for k, v in vars(_m).items() if not k.startswith("__")})
ufunc = _ufuncs.ufunc
UFUNCS = _ufuncs.UFUNCS
_native_or_fallback = _reductions._native_or_fallback


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
    and getattr(obj, "__module__", None) in _SECTION_NAMES
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
