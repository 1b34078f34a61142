//! Reading and writing elements by position: `copyto`, `a.flat[...]`, `nonzero`.

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
    let d = dst.borrow().arr.clone();
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
    let target = a.borrow().arr.clone();
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
