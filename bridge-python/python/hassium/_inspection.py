"""The Array API's inspection namespace (``hassium.__array_namespace_info__()``): what
this library can do, on which devices, with which dtypes.

Hassium's arrays live in host memory as far as the program sees them, whatever engine
runs the kernels (an OpenCL engine keeps device copies of its own), so the one device
is ``"cpu"``, as ``ndarray.device`` says.
"""

import numpy as _np

from . import _hassium

_KINDS = {
    "bool": ("bool",),
    "signed integer": ("int8", "int16", "int32", "int64"),
    "unsigned integer": ("uint8", "uint16", "uint32", "uint64"),
    "real floating": ("float32", "float64"),
    "complex floating": ("complex64", "complex128"),
}
_KINDS["integral"] = _KINDS["signed integer"] + _KINDS["unsigned integer"]
_KINDS["numeric"] = (
    _KINDS["integral"] + _KINDS["real floating"] + _KINDS["complex floating"]
)
_ALL = _KINDS["bool"] + _KINDS["numeric"]


def _check_device(device):
    if device not in (None, "cpu"):
        raise ValueError(f"unsupported device {device!r}; hassium has 'cpu' only")


class _Info:
    """What ``__array_namespace_info__()`` returns."""

    __module__ = "hassium"

    def capabilities(self):
        return {
            "boolean indexing": True,
            "data-dependent shapes": True,
            "max dimensions": int(_hassium.MAX_DIMS),
        }

    def default_device(self):
        return "cpu"

    def devices(self):
        return ["cpu"]

    def default_dtypes(self, *, device=None):
        _check_device(device)
        return {
            "real floating": _np.dtype(_np.float64),
            "complex floating": _np.dtype(_np.complex128),
            "integral": _np.dtype(_np.int64),
            "indexing": _np.dtype(_np.int64),
        }

    def dtypes(self, *, device=None, kind=None):
        _check_device(device)
        if kind is None:
            names = _ALL
        else:
            kinds = kind if isinstance(kind, tuple) else (kind,)
            names = ()
            for k in kinds:
                if k not in _KINDS:
                    raise ValueError(
                        f"unsupported dtype kind {k!r}; expected one of {sorted(_KINDS)}"
                    )
                names += tuple(n for n in _KINDS[k] if n not in names)
        return {n: _np.dtype(n) for n in names}


def __array_namespace_info__():
    return _Info()
