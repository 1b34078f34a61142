//! Module functions that make read-only views: `broadcast_to`, `diagonal`.

use super::creation::shape_arg;
use crate::array::{self, wrap, PyNdArray};
use crate::convert::to_arr;
use pyo3::prelude::*;

/// `np.broadcast_to(a, shape)`: a read-only view (the caller checks the shapes).
#[pyfunction]
pub(crate) fn broadcast_to(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    shape: &Bound<'_, PyAny>,
) -> PyResult<PyObject> {
    let shape = shape_arg(shape)?;
    view_of(py, a, |a| array::broadcast_to(a, &shape))
}

/// `f` applied to `a` as a Hassium array: `a` itself, or an array made from it (a NumPy
/// array, a list), which the view `f` makes then keeps alive as its parent.
fn view_of(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    f: impl FnOnce(&Bound<'_, PyNdArray>) -> PyResult<PyObject>,
) -> PyResult<PyObject> {
    match a.downcast::<PyNdArray>() {
        Ok(a) => f(a),
        Err(_) => {
            let owner = wrap(py, to_arr(a, None)?)?;
            f(owner.bind(py).downcast::<PyNdArray>()?)
        }
    }
}

/// `a.diagonal(offset, axis1, axis2)` as NumPy's read-only view (axes normalised).
#[pyfunction]
pub(crate) fn diagonal(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    offset: isize,
    axis1: usize,
    axis2: usize,
) -> PyResult<PyObject> {
    view_of(py, a, |a| array::diagonal(a, offset, axis1, axis2))
}
