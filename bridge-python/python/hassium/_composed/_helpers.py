"""What several of the composed functions share: writing ``out=``, keys along one
axis, and NumPy's warnings.
"""

from .. import _hassium as _ext


def _into(out, result):
    """``result``, or ``out`` holding it (cast unsafely, as NumPy's functions write out=)."""
    if out is None:
        return result
    _ext.copyto(out, result, casting="unsafe")
    return out


def _along(ndim, axis, index):
    """A key taking ``index`` (a slice or an int) on ``axis`` and everything elsewhere."""
    key = [slice(None)] * ndim
    key[axis] = index
    return tuple(key)


def _warn(message, category=RuntimeWarning):
    import warnings

    from .._fallback import _outside_the_package

    warnings.warn(message, category, stacklevel=_outside_the_package())
