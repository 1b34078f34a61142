//! The Hassium array type: a view of a base plus shared ownership of the base.
//!
//! This file holds the type and the helpers that wrap results as Python objects; its
//! methods live in one room per responsibility:
//!
//! - `attributes`: shape, dtype, strides, flags (the `Flags` object), `T`, `real`, ...
//! - `operators`: arithmetic, bitwise and comparison operators
//! - `conversion`: Python's protocols that need the values (`len`, `iter`, `float`,
//!   `repr`, `item`, `tolist`, copying and pickling)
//! - `interop`: how NumPy sees the array (buffer protocol, `__array__`, DLPack, the
//!   `__array_ufunc__` / `__array_function__` dispatch to the package)
//! - `indexing`: `a[key]`, `a[key] = v`, the key's parsing, `nonzero`, flat indices
//! - `advanced`: the planning of advanced (integer and boolean array) indexing
//! - `views`: reshape, ravel, transpose, squeeze, view, broadcast_to, diagonal
//! - `elementwise`: casts, copies, fill, clip, round, conj
//! - `reductions`: sum ... cumprod, and the `axis=` / `out=` arguments they share
//!
//! Each room has its own `#[pymethods] impl PyNdArray` block, which pyo3 allows with its
//! `multiple-pymethods` feature (the `inventory` crate collects the blocks when the type
//! is first used). The alternative, one block whose methods each forward to a room,
//! would repeat every signature, `#[pyo3(signature)]` and doc comment twice for about a
//! hundred methods; the feature costs a dependency and works where `inventory` does
//! (Linux, macOS, Windows; not WebAssembly), which covers where Hassium is built.

mod advanced;
mod attributes;
mod conversion;
mod elementwise;
mod indexing;
mod interop;
mod operators;
mod reductions;
mod selection;
mod views;

pub use attributes::Flags;
pub use elementwise::round;
pub use indexing::{flat_index, nonzero};
pub use interop::set_dispatch;
pub use reductions::{accumulate_any, opt_out, reduce_any};
pub use selection::{lifted_ufunc, reduce_selection};
pub use views::{broadcast_to, diagonal};

use crate::deferred::Selection;
use crate::rt::Arr;
use hassium_core::View;
use once_cell::sync::OnceCell;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use std::sync::Arc;

/// A Hassium array. Not an `np.ndarray` subclass: NumPy sees it through the buffer
/// protocol, `__array__`, `__array_ufunc__` and `__array_function__`.
///
/// Its array is read through [`PyNdArray::arr`]. An array made by a boolean mask
/// (`x[m]`) starts as a *selection* (`crate::deferred`): its shape needs the mask's
/// count, which only a flush gives, so it is kept as the whole arrays it selects from
/// until something needs it as an array; elementwise operators on it and its assignment
/// through the same mask (`x[m] = 2 - x[m]`) never need it (see `selection`).
#[pyclass(name = "ndarray", module = "hassium", weakref)]
pub struct PyNdArray {
    /// The array; empty only while a selection is not yet compacted.
    arr: OnceCell<Arr>,
    /// What the array selects, while it is a selection not yet compacted.
    selection: Option<Arc<Selection>>,
    /// The array this one is a view of (NumPy's `.base`), None for owners.
    pub parent: Option<Py<PyAny>>,
}

impl PyNdArray {
    /// An array object for `arr`, a view of `parent`'s (None for owners).
    pub fn new(arr: Arr, parent: Option<Py<PyAny>>) -> PyNdArray {
        PyNdArray {
            // Made full: no one-time initialisation runs (a `std` `OnceLock` made
            // with `from` goes through its `Once`, ~3% of a small array's operation).
            arr: OnceCell::with_value(arr),
            selection: None,
            parent,
        }
    }

    /// The array. A selection is compacted first (which reads its mask's count).
    pub fn arr(&self) -> PyResult<&Arr> {
        if let Some(a) = self.arr.get() {
            return Ok(a);
        }
        let sel = self
            .selection
            .as_ref()
            .expect("an array object holds an array or a selection");
        let a = sel.compact()?;
        Ok(self.arr.get_or_init(|| a))
    }

    /// The array, to change its view or flags.
    pub fn arr_mut(&mut self) -> PyResult<&mut Arr> {
        self.arr()?;
        Ok(self.arr.get_mut().expect("compacted just above"))
    }

    /// What this array selects, while it is a selection not yet compacted.
    pub fn parts(&self) -> Option<crate::deferred::Parts> {
        self.selection().and_then(|s| s.parts())
    }

    /// The selection this array still is, if it has not been compacted.
    pub fn selection(&self) -> Option<&Arc<Selection>> {
        match self.arr.get() {
            Some(_) => None,
            None => self.selection.as_ref(),
        }
    }
}

/// Wraps an array result as a new Python object.
pub fn wrap(py: Python<'_>, arr: Arr) -> PyResult<PyObject> {
    Ok(Py::new(py, PyNdArray::new(arr, None))?.into_any())
}

/// Wraps a selection (see `crate::deferred`) as a new Python object.
pub fn wrap_selection(py: Python<'_>, sel: Arc<Selection>) -> PyResult<PyObject> {
    let obj = PyNdArray {
        arr: OnceCell::new(),
        selection: Some(sel),
        parent: None,
    };
    Ok(Py::new(py, obj)?.into_any())
}

/// The element at a 0-d `view` of `slf`'s base as a NumPy scalar: what NumPy returns when
/// integers alone index every dimension (`x[3]`, `m[i, j]`, `z[()]`). Reading the value
/// needs it computed, so this syncs that element (see `ops::read_element`).
pub(super) fn scalar_at(slf: &Bound<'_, PyNdArray>, view: View) -> PyResult<PyObject> {
    let py = slf.py();
    let element = interop::element_numpy(py, &arr_of(slf)?.with_view(view))?;
    Ok(element.get_item(PyTuple::empty(py))?.unbind())
}

/// Wraps a view of `slf`'s base, recording `slf` (or its own base object) as `.base`.
pub(super) fn wrap_view(slf: &Bound<'_, PyNdArray>, view: View) -> PyResult<PyObject> {
    let py = slf.py();
    let me = slf.borrow();
    let parent = match &me.parent {
        Some(p) => p.clone_ref(py),
        None => slf.clone().into_any().unbind(),
    };
    Ok(Py::new(py, PyNdArray::new(me.arr()?.with_view(view), Some(parent)))?.into_any())
}

/// A read-only view of `slf` (NumPy's `broadcast_to` and `diagonal` give these).
pub(super) fn wrap_read_only_view(slf: &Bound<'_, PyNdArray>, view: View) -> PyResult<PyObject> {
    let b = wrap_view(slf, view)?;
    b.bind(slf.py())
        .downcast::<PyNdArray>()?
        .borrow_mut()
        .arr_mut()?
        .writeable = false;
    Ok(b)
}

pub(super) fn arr_of(slf: &Bound<'_, PyNdArray>) -> PyResult<Arr> {
    Ok(slf.borrow().arr()?.clone())
}
