"""What several of the composed functions share: writing ``out=``, keys along one
axis, NumPy's warnings, and reading several recorded values in one flush.
"""

import numpy as np

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


def _read_together(*values):
    """Recorded 0-d arrays of one dtype read on the host in one flush (each read of
    its own would flush again): NumPy scalars, in order."""
    from .. import _native as _n

    joined = _n.concatenate([v.reshape(1) for v in values])
    return list(np.asarray(joined))
