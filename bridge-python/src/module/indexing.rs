//! Reading and writing elements by position: `copyto`, `a.flat[...]`, `nonzero`; and
//! putting them in order: `sort`, `argsort`, `searchsorted`.

use crate::array::{self, wrap, PyNdArray};
use crate::convert::{to_arg, to_arr};
use crate::ops;
use crate::ops::Arg;
use pyo3::prelude::*;

/// `np.copyto(dst, src, casting)`: broadcasting assignment (copies when views overlap).
#[pyfunction]
#[pyo3(signature = (dst, src, casting="same_kind"))]
pub(crate) fn copyto(
    py: Python<'_>,
    dst: &Bound<'_, PyNdArray>,
    src: &Bound<'_, PyAny>,
    casting: &str,
) -> PyResult<()> {
    let d = dst.borrow().arr()?.clone();
    ops::assign(py, &d, &to_arg(src)?, casting)
}

/// `a.flat[flat_index]` as a new array (a gather on the flattened array).
#[pyfunction]
pub(crate) fn take_flat(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    flat_index: &Bound<'_, PyAny>,
) -> PyResult<PyObject> {
    let a = to_arr(a, None)?;
    let n = a.view.nelem();
    let flat = ops::reshape(&ops::contiguous(&a)?, &[n])?;
    let idx = array::flat_index(flat_index, n)?;
    wrap(py, ops::gather(&flat.view, &idx.view)?)
}

/// `a.flat[flat_index] = values` (`np.add.at` with `accumulate=True`).
#[pyfunction]
#[pyo3(signature = (a, flat_index, values, accumulate=false))]
pub(crate) fn put_flat(
    py: Python<'_>,
    a: &Bound<'_, PyNdArray>,
    flat_index: &Bound<'_, PyAny>,
    values: &Bound<'_, PyAny>,
    accumulate: bool,
) -> PyResult<()> {
    let target = a.borrow().arr()?.clone();
    let n = target.view.nelem();
    let idx = array::flat_index(flat_index, n)?;
    let vals = to_arg(values)?;
    if let Some(flat) = target.view.reshape(&[n]) {
        return ops::scatter(&target.with_view(flat), &idx.view, &vals, accumulate);
    }
    // A non-contiguous target: scatter into a contiguous copy, then copy back.
    let c = ops::cast_copy(&target, target.dtype())?;
    let flat = c
        .view
        .reshape(&[n])
        .expect("a fresh contiguous copy reshapes");
    ops::scatter(&c.with_view(flat), &idx.view, &vals, accumulate)?;
    ops::assign(py, &target, &Arg::Array(c), "unsafe")
}

#[pyfunction]
pub(crate) fn nonzero(py: Python<'_>, a: &Bound<'_, PyAny>) -> PyResult<PyObject> {
    array::nonzero(py, &to_arr(a, None)?)
}

/// `sort(a, axis, indices)`: a sorted copy of `a` along `axis` (normalised, `0..ndim`),
/// stable with NaN last, or with `indices` the int64 order that sorts it.
#[pyfunction]
#[pyo3(signature = (a, axis, indices=false))]
pub(crate) fn sort(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    axis: usize,
    indices: bool,
) -> PyResult<PyObject> {
    wrap(py, ops::sort(py, &to_arr(a, None)?, axis, indices)?)
}

/// `argpartition(a, axis, k)`: the int64 positions along `axis` (normalised) of the
/// `k + 1` smallest elements in stable order, then of the others in increasing order.
#[pyfunction]
pub(crate) fn argpartition(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    axis: usize,
    k: usize,
) -> PyResult<PyObject> {
    wrap(py, ops::argpartition(py, &to_arr(a, None)?, axis, k)?)
}

/// `sort_in_place(a, axis)`: `a.sort(axis)`.
#[pyfunction]
pub(crate) fn sort_in_place(py: Python<'_>, a: &Bound<'_, PyNdArray>, axis: usize) -> PyResult<()> {
    let a = a.borrow().arr()?.clone();
    ops::sort_in_place(py, &a, axis)
}

/// `searchsorted(hay, needles, right)`: int64 positions of `needles` in the sorted 1-D
/// `hay`, before equal elements or (`right`) after them.
#[pyfunction]
#[pyo3(signature = (hay, needles, right=false))]
pub(crate) fn searchsorted(
    py: Python<'_>,
    hay: &Bound<'_, PyAny>,
    needles: &Bound<'_, PyAny>,
    right: bool,
) -> PyResult<PyObject> {
    let (h, n) = (to_arr(hay, None)?, to_arr(needles, None)?);
    wrap(py, ops::searchsorted(py, &h, &n, right)?)
}
