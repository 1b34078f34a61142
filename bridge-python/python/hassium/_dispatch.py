"""Keeping NumPy calls on Hassium arrays inside Hassium.

``np.sin(h)``, ``np.concatenate([h, h])`` or ``numpy_array + h`` reach the Hassium array's
``__array_ufunc__`` / ``__array_function__`` (NEP 13, NEP 18). The extension forwards both
to the two handlers registered here with ``_hassium._set_dispatch``: they look the NumPy
function up in Hassium's natives and run the native version, or run NumPy's function
through the fallback path (convert, call, wrap) when there is none. Either way the result
is a Hassium array, so a program mixing ``numpy`` and ``hassium`` stays lazy wherever
Hassium can record the work.
"""

import numpy as np

from . import _fallback, _native
from . import _hassium as _ext

#: NumPy ufunc -> Hassium ufunc (np.add -> hassium.add).
UFUNC_TABLE = {u._np: u for u in _native.UFUNCS.values()}

#: NumPy function -> Hassium native; filled by ``register`` (namespace, random, linalg).
FUNCTION_TABLE = {}


def register(np_module, natives):
    """Route NumPy's ``np_module.<name>`` to ``natives[name]`` for every native name."""
    for name, impl in natives.items():
        np_func = getattr(np_module, name, None)
        if (
            np_func is not None
            and callable(np_func)
            and not isinstance(np_func, np.ufunc)
        ):
            FUNCTION_TABLE[np_func] = impl


def array_ufunc(np_ufunc, method, *inputs, **kwargs):
    """``__array_ufunc__``: the native ufunc's method, or NumPy's through the fallback."""
    impl = UFUNC_TABLE.get(np_ufunc)
    if impl is None:
        impl = _fallback.FallbackUfunc(np_ufunc)
    if method == "__call__":
        return impl(*inputs, **kwargs)
    return getattr(impl, method)(*inputs, **kwargs)


def array_function(func, types, args, kwargs):
    """``__array_function__``: the native function, or NumPy's through the fallback."""
    impl = FUNCTION_TABLE.get(func)
    if impl is not None:
        return impl(*args, **kwargs)
    module = getattr(func, "__module__", "") or ""
    name = getattr(func, "__name__", repr(func))
    for sub in ("linalg", "fft", "random"):
        if module.startswith(f"numpy.{sub}"):
            name = f"{sub}.{name}"
    # NumPy's dispatching wrapper would come straight back here; the implementation
    # behind it takes NumPy arrays, which is what the fallback hands it.
    target = getattr(func, "_implementation", func)
    return _fallback.call(target, name, args, kwargs)


def install():
    from . import linalg

    register(np, _native.FUNCTIONS)
    register(np.linalg, linalg.FUNCTIONS)
    set_dispatch = getattr(_ext, "_set_dispatch", None)
    if set_dispatch is not None:
        set_dispatch(array_ufunc, array_function)
