"""NumPy functions that are compositions of the natives: views, joins and arithmetic.

Flips and splits are views of the argument (writing through them writes it, as in
NumPy); the rest record ufuncs, reductions and copies, so a program calling ``np.diff``,
``np.gradient`` or ``np.tile`` stays lazy and its work fuses with what surrounds it,
where the fallback path would flush, copy to NumPy and back, and warn.

Semantics (results, dtypes, views or copies, exception types) follow NumPy's functions of
the same name; what an argument combination here cannot express raises ``_Unsupported``
and goes through NumPy like any other fallback. The rules of ``_native`` apply: no NumPy
function is called on a Hassium array.

The functions live in one module per topic: ``_arranging`` (flips, splits, joins and
``block``, tiling, ``resize``, ``delete``, ``insert``, taking and putting along an axis,
``repeat``), ``_differences`` (``diff``, ``gradient``, ``trapezoid``, ``unwrap``),
``_functions`` (``select``, ``polyval``, ``vander``, window functions, ``logspace``,
``geomspace``, ``cross``, ``kron``, ``interp``, ``i0``, ``packbits``/``unpackbits`` and
other small compositions), ``_indices`` (index grids, triangles, diagonals,
``unravel_index``, ``ravel_multi_index``), ``_nan`` (the NaN-skipping functions),
``_padding`` (``pad``), ``_statistics`` (averages, order statistics, counts,
covariances, convolution, histograms of one and more dimensions), ``_selecting`` (by
mask, flat index, ``choose`` or diagonal; ``trim_zeros``; the cumulative sums), ``_sorting`` (the Array API's keywords
over NumPy's sort; ``lexsort``, ``digitize``) and ``_sets`` (``isin`` and the ``*1d``
set operations), on the shared ``_helpers``. This package gathers them into
``FUNCTIONS``.
"""

from . import (
    _arranging,
    _differences,
    _functions,
    _indices,
    _nan,
    _padding,
    _selecting,
    _sets,
    _sorting,
    _statistics,
)

_SECTIONS = (
    _arranging,
    _differences,
    _functions,
    _indices,
    _nan,
    _padding,
    _selecting,
    _sets,
    _sorting,
    _statistics,
)

#: Natives by name, merged into ``_native.FUNCTIONS``.
FUNCTIONS = {
    name: obj
    for section in _SECTIONS
    for name, obj in list(vars(section).items())
    if callable(obj)
    and not name.startswith("_")
    and getattr(obj, "__module__", None) == section.__name__
}
globals().update(FUNCTIONS)
