//! How NumPy sees a Hassium array: the buffer protocol (`to_numpy`), `__array__`,
//! DLPack, and `__array_ufunc__` / `__array_function__` forwarded to the package.

use super::{arr_of, PyNdArray};
use crate::ops::{self};
use crate::py::{self};
use crate::rt::Arr;
use hassium_core::{BaseId, DType};
use pyo3::exceptions::{PyBufferError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use std::ffi::{c_int, CStr};

/// Python callables the package registers: `__array_ufunc__` and `__array_function__`
/// are forwarded to them, since the package owns the namespace.
static DISPATCH: pyo3::sync::GILOnceCell<(Py<PyAny>, Py<PyAny>)> = pyo3::sync::GILOnceCell::new();

static DISPATCH_SET: parking_lot::Mutex<Option<(Py<PyAny>, Py<PyAny>)>> =
    parking_lot::Mutex::new(None);

pub fn set_dispatch(ufunc: Py<PyAny>, function: Py<PyAny>) {
    *DISPATCH_SET.lock() = Some((ufunc, function));
}

fn dispatch(py: Python<'_>) -> Option<(Py<PyAny>, Py<PyAny>)> {
    let _ = &DISPATCH;
    DISPATCH_SET
        .lock()
        .as_ref()
        .map(|(a, b)| (a.clone_ref(py), b.clone_ref(py)))
}

/// A NumPy array sharing `slf`'s memory after a sync (the buffer protocol does the work).
pub fn to_numpy<'py>(slf: &Bound<'py, PyNdArray>) -> PyResult<Bound<'py, PyAny>> {
    let py = slf.py();
    let arr = slf.borrow().arr()?.clone();
    if let Some(e) = ops::take_failed_sync(&arr) {
        return Err(e); // NumPy's retry through `__array__` after a failed buffer export
    }
    let mv = pyo3::types::PyMemoryView::from(slf.as_any()).inspect_err(|_| {
        // Raised here, to the program: not again at its next read.
        ops::forget_failed_sync(&arr);
    })?;
    py::numpy(py)?.call_method1("asarray", (mv,))
}

/// [`to_numpy`] for what reads one value (`float(x)`, `x.item()`, `bool(x)`, a 0-d
/// array's repr): a one-element array comes back as a read-only NumPy copy of that
/// element alone (see `ops::read_element`); any other through [`to_numpy`].
pub fn to_numpy_value<'py>(slf: &Bound<'py, PyNdArray>) -> PyResult<Bound<'py, PyAny>> {
    let arr = slf.borrow().arr()?.clone();
    if arr.view.nelem() != 1 {
        return to_numpy(slf);
    }
    element_numpy(slf.py(), &arr)
}

/// A one-element array `arr` as a read-only NumPy array of that element alone.
pub(super) fn element_numpy<'py>(py: Python<'py>, arr: &Arr) -> PyResult<Bound<'py, PyAny>> {
    let bytes = pyo3::types::PyBytes::new(py, &ops::read_element(arr)?);
    let shape = pyo3::types::PyTuple::new(py, arr.view.shape.iter())?;
    py::numpy(py)?
        .call_method1("frombuffer", (bytes, arr.dtype().name()))?
        .call_method1("reshape", (shape,))
}

pub(super) fn to_numpy_arr<'py>(py: Python<'py>, a: &Arr) -> PyResult<Bound<'py, PyAny>> {
    let obj = Py::new(py, PyNdArray::new(a.clone(), None))?;
    to_numpy(obj.bind(py))
}

const LONG_IS_64: bool = std::mem::size_of::<std::ffi::c_long>() == 8;

/// The PEP 3118 format code of a dtype.
fn format_of(d: DType) -> &'static CStr {
    match d {
        DType::Bool => c"?",
        DType::Int8 => c"b",
        DType::Int16 => c"h",
        DType::Int32 => c"i",
        // NumPy's default integer is C `long` ('l'); 'q' would import as `longlong`, a
        // distinct dtype that prints `dtype=int64` in reprs.
        DType::Int64 if LONG_IS_64 => c"l",
        DType::Int64 => c"q",
        DType::UInt8 => c"B",
        DType::UInt16 => c"H",
        DType::UInt32 => c"I",
        DType::UInt64 if LONG_IS_64 => c"L",
        DType::UInt64 => c"Q",
        DType::Float16 => c"e",
        DType::Float32 => c"f",
        DType::Float64 => c"d",
        DType::Complex64 => c"Zf",
        DType::Complex128 => c"Zd",
    }
}

#[pymethods]
impl PyNdArray {
    #[pyo3(signature = (dtype=None, copy=None))]
    fn __array__<'py>(
        slf: &Bound<'py, Self>,
        dtype: Option<&Bound<'py, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let a = to_numpy(slf)?;
        let want = py::opt_dtype(dtype)?;
        let a = match want {
            Some(d) if d != arr_of(slf)?.dtype() => {
                if copy == Some(false) {
                    return Err(PyValueError::new_err(
                        "Unable to avoid copy while creating an array as requested.",
                    ));
                }
                return a.call_method1("astype", (py::dtype_obj(slf.py(), d)?,));
            }
            _ => a,
        };
        if copy == Some(true) {
            a.call_method0("copy")
        } else {
            Ok(a)
        }
    }
    #[pyo3(signature = (ufunc, method, *inputs, **kwargs))]
    fn __array_ufunc__(
        &self,
        py: Python<'_>,
        ufunc: &Bound<'_, PyAny>,
        method: &Bound<'_, PyAny>,
        inputs: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyObject> {
        let Some((f, _)) = dispatch(py) else {
            return Ok(py.NotImplemented());
        };
        let mut args = vec![ufunc.clone(), method.clone()];
        args.extend(inputs.iter());
        Ok(f.bind(py).call(PyTuple::new(py, args)?, kwargs)?.unbind())
    }
    fn __array_function__(
        &self,
        py: Python<'_>,
        func: &Bound<'_, PyAny>,
        types: &Bound<'_, PyAny>,
        args: &Bound<'_, PyAny>,
        kwargs: &Bound<'_, PyAny>,
    ) -> PyResult<PyObject> {
        let Some((_, f)) = dispatch(py) else {
            return Ok(py.NotImplemented());
        };
        Ok(f.bind(py).call1((func, types, args, kwargs))?.unbind())
    }
    #[pyo3(signature = (api_version=None))]
    fn __array_namespace__(
        &self,
        py: Python<'_>,
        api_version: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyObject> {
        let _ = api_version;
        Ok(PyModule::import(py, "hassium")?.into_any().unbind())
    }
    /// The Array API's DLPack export, through the NumPy view of the host copy. Only the
    /// arguments given are passed on, so a NumPy that predates one still answers.
    #[pyo3(signature = (*, stream=None, max_version=None, dl_device=None, copy=None))]
    fn __dlpack__(
        slf: &Bound<'_, Self>,
        stream: Option<&Bound<'_, PyAny>>,
        max_version: Option<&Bound<'_, PyAny>>,
        dl_device: Option<&Bound<'_, PyAny>>,
        copy: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyObject> {
        let kwargs = PyDict::new(slf.py());
        for (name, value) in [
            ("stream", stream),
            ("max_version", max_version),
            ("dl_device", dl_device),
            ("copy", copy),
        ] {
            if let Some(v) = value {
                kwargs.set_item(name, v)?;
            }
        }
        Ok(to_numpy(slf)?
            .call_method("__dlpack__", (), Some(&kwargs))?
            .unbind())
    }
    fn __dlpack_device__(&self) -> (i32, i32) {
        (1, 0)
    }
    unsafe fn __getbuffer__(
        slf: Bound<'_, Self>,
        view: *mut pyo3::ffi::Py_buffer,
        flags: c_int,
    ) -> PyResult<()> {
        if view.is_null() {
            return Err(PyBufferError::new_err("View is null"));
        }
        let a = slf.borrow().arr()?.clone();
        if !a.writeable && flags & pyo3::ffi::PyBUF_WRITABLE == pyo3::ffi::PyBUF_WRITABLE {
            return Err(PyBufferError::new_err("buffer source array is read-only"));
        }
        let v = &a.view;
        let contiguous = v.is_contiguous();
        let want_strides = flags & pyo3::ffi::PyBUF_STRIDES == pyo3::ffi::PyBUF_STRIDES;
        if !want_strides && !contiguous {
            return Err(PyBufferError::new_err(
                "hassium array view is not C-contiguous",
            ));
        }
        if flags & pyo3::ffi::PyBUF_F_CONTIGUOUS == pyo3::ffi::PyBUF_F_CONTIGUOUS
            && flags & pyo3::ffi::PyBUF_ANY_CONTIGUOUS != pyo3::ffi::PyBUF_ANY_CONTIGUOUS
            && !v.reversed_axes().is_contiguous()
        {
            return Err(PyBufferError::new_err(
                "hassium array view is not Fortran-contiguous",
            ));
        }
        let ptr = ops::sync_ptr_for_buffer(&a)?;
        let item = v.dtype.size() as isize;
        // Shape and strides live in one allocation owned by the buffer until release,
        // followed by the base's id, which the release reports (see `host_view_opened`).
        let meta: Box<[isize]> = v
            .shape
            .iter()
            .map(|&d| d as isize)
            .chain(v.strides.iter().map(|&s| s * item))
            .chain(std::iter::once(v.base.0 as isize))
            .collect();
        let meta = Box::into_raw(meta);
        let nd = v.ndim();
        // SAFETY: `view` is a valid Py_buffer the caller lets us fill; `meta` stays alive
        // until __releasebuffer__ frees it; `obj` holds a reference to this array, which
        // keeps the base (and so `ptr`) alive.
        unsafe {
            (*view).buf = ptr as *mut std::ffi::c_void;
            pyo3::ffi::Py_INCREF(slf.as_ptr());
            (*view).obj = slf.as_ptr();
            (*view).len = (v.nelem() as isize) * item;
            (*view).readonly = c_int::from(!a.writeable);
            (*view).itemsize = item;
            (*view).format = if flags & pyo3::ffi::PyBUF_FORMAT == pyo3::ffi::PyBUF_FORMAT {
                format_of(v.dtype).as_ptr() as *mut _
            } else {
                std::ptr::null_mut()
            };
            (*view).ndim = nd as c_int;
            let base = meta as *mut isize;
            (*view).shape = if flags & pyo3::ffi::PyBUF_ND == pyo3::ffi::PyBUF_ND {
                base
            } else {
                std::ptr::null_mut()
            };
            (*view).strides = if want_strides {
                base.add(nd)
            } else {
                std::ptr::null_mut()
            };
            (*view).suboffsets = std::ptr::null_mut();
            (*view).internal = meta as *mut std::ffi::c_void;
        }
        // From here until the release, the base is shown in host memory: instructions on
        // it run as they are recorded (see `rt::with_rt`).
        crate::rt::host_view_opened(v.base);
        Ok(())
    }
    unsafe fn __releasebuffer__(&self, view: *mut pyo3::ffi::Py_buffer) {
        // SAFETY: `internal` is the Box<[isize]> leaked by __getbuffer__ (2*ndim + 1
        // long, the base's id last).
        unsafe {
            let nd = (*view).ndim as usize;
            let p = (*view).internal as *mut isize;
            if !p.is_null() {
                let meta = Box::from_raw(std::ptr::slice_from_raw_parts_mut(p, 2 * nd + 1));
                crate::rt::host_view_closed(BaseId(meta[2 * nd] as u64));
                drop(meta);
                (*view).internal = std::ptr::null_mut();
            }
        }
    }
}
