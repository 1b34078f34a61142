//! Python objects → operands and arrays; arrays → Python objects.

use crate::array::PyNdArray;
use crate::ops::{self, Arg, Weak};
use crate::py::{self, UnsupportedError};
use crate::rt::Arr;
use hassium_core::{DType, Scalar};
use pyo3::buffer::PyBuffer;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyComplex, PyFloat, PyInt};

/// A Python scalar's weak value, if `obj` is exactly a Python bool/int/float/complex.
pub fn weak_of(obj: &Bound<'_, PyAny>) -> PyResult<Option<Weak>> {
    Ok(Some(if obj.is_exact_instance_of::<PyBool>() {
        Weak::Bool(obj.extract()?)
    } else if obj.is_exact_instance_of::<PyFloat>() {
        Weak::Float(obj.extract()?)
    } else if obj.is_exact_instance_of::<PyInt>() {
        match obj.extract::<i128>() {
            Ok(v) => Weak::Int(v),
            // Beyond 128 bits: out of range of every integer dtype, and a float elsewhere.
            Err(_) => {
                let f: f64 = obj.extract()?;
                Weak::Int(if f > 0.0 { i128::MAX } else { i128::MIN })
            }
        }
    } else if obj.is_exact_instance_of::<PyComplex>() {
        let c = obj.downcast::<PyComplex>()?;
        Weak::Complex(c.real(), c.imag())
    } else {
        return Ok(None);
    }))
}

/// A NumPy scalar (`np.float32(1)`) as a typed constant.
pub(crate) fn numpy_scalar(obj: &Bound<'_, PyAny>) -> PyResult<Option<Scalar>> {
    let py = obj.py();
    let generic = py::numpy(py)?.getattr(pyo3::intern!(py, "generic"))?;
    if !obj.is_instance(&generic)? {
        return Ok(None);
    }
    let dt = py::to_dtype(&obj.getattr(pyo3::intern!(py, "dtype"))?)?;
    let item = obj.call_method0(pyo3::intern!(py, "item"))?;
    let w = weak_of(&item)?.ok_or_else(|| UnsupportedError::new_err("unsupported NumPy scalar"))?;
    Ok(Some(w.to_scalar(dt)))
}

/// Any operand: a Hassium array, a Python or NumPy scalar, or an array-like (copied in).
pub fn to_arg(obj: &Bound<'_, PyAny>) -> PyResult<Arg> {
    if let Ok(a) = obj.downcast::<PyNdArray>() {
        return Ok(Arg::Array(a.borrow().arr()?.clone()));
    }
    if let Some(w) = weak_of(obj)? {
        return Ok(Arg::Weak(w));
    }
    if let Some(s) = numpy_scalar(obj)? {
        return Ok(Arg::Typed(s));
    }
    if obj.is_instance_of::<PyBool>() {
        return Ok(Arg::Weak(Weak::Bool(obj.extract()?)));
    }
    if obj.is_instance_of::<PyInt>() {
        return Ok(Arg::Weak(Weak::Int(obj.extract()?)));
    }
    if obj.is_instance_of::<PyFloat>() {
        return Ok(Arg::Weak(Weak::Float(obj.extract()?)));
    }
    Ok(Arg::Array(from_host(obj, None)?))
}

/// An array-like as a Hassium array (Hassium arrays pass through, cast when `dtype` says).
pub fn to_arr(obj: &Bound<'_, PyAny>, dtype: Option<DType>) -> PyResult<Arr> {
    if let Ok(a) = obj.downcast::<PyNdArray>() {
        let arr = a.borrow().arr()?.clone();
        return match dtype {
            Some(d) if d != arr.dtype() => ops::cast_copy(&arr, d),
            _ => Ok(arr),
        };
    }
    from_host(obj, dtype)
}

/// Copies host data (NumPy array, nested sequence, scalar) into a fresh base, using NumPy
/// to build the C-contiguous array.
pub fn from_host(obj: &Bound<'_, PyAny>, dtype: Option<DType>) -> PyResult<Arr> {
    let py = obj.py();
    let np = py::numpy(py)?;
    let kwargs = pyo3::types::PyDict::new(py);
    if let Some(d) = dtype {
        kwargs.set_item("dtype", py::dtype_obj(py, d)?)?;
    }
    // `asarray(order="C")`, not `ascontiguousarray`: the latter turns 0-d into 1-d.
    kwargs.set_item("order", "C")?;
    let mut a = np.call_method("asarray", (obj,), Some(&kwargs))?;
    let mut dt_obj = a.getattr(pyo3::intern!(py, "dtype"))?;
    // Hassium arrays are in native byte order: a big-endian array (`np.load` of a `>f8`
    // file, network data) becomes the native dtype with the same values. `dtype=` above
    // names a native dtype already, so this only runs without one.
    if !dt_obj
        .getattr(pyo3::intern!(py, "isnative"))?
        .extract::<bool>()?
    {
        dt_obj = dt_obj.call_method1(pyo3::intern!(py, "newbyteorder"), ("=",))?;
        a = a.call_method1(pyo3::intern!(py, "astype"), (&dt_obj,))?;
    }
    let d = match py::to_dtype(&dt_obj) {
        Ok(d) => d,
        Err(_) => {
            let name: String = dt_obj.getattr("name")?.extract()?;
            return Err(UnsupportedError::new_err(format!(
                "hassium does not support dtype {name}"
            )));
        }
    };
    let shape: Vec<usize> = a.getattr(pyo3::intern!(py, "shape"))?.extract()?;
    with_host_bytes(&a, |bytes| ops::from_bytes(bytes, d, &shape))
}

/// Calls `f` with the bytes of a C-contiguous NumPy array. They are read as bytes, never
/// through a typed pointer: a host array need not be aligned for its dtype
/// (`np.frombuffer(b, offset=1)`, a field of a structured array), and reading such memory
/// as `f64`/`i64` would be undefined behaviour.
fn with_host_bytes<R>(a: &Bound<'_, PyAny>, f: impl FnOnce(&[u8]) -> PyResult<R>) -> PyResult<R> {
    let flat = a
        .call_method1("reshape", (-1,))?
        .call_method1("view", ("u1",))?;
    let buf: PyBuffer<u8> = PyBuffer::get(&flat)?;
    if buf.len_bytes() == 0 {
        return f(&[]);
    }
    // SAFETY: the buffer is C-contiguous uint8 (alignment 1) of len_bytes bytes, non-empty
    // so its pointer is not dangling, and stays alive (we hold `buf`) while `f` reads it.
    let bytes = unsafe { std::slice::from_raw_parts(buf.buf_ptr() as *const u8, buf.len_bytes()) };
    f(bytes)
}

/// Reads an int64 index array from host data (bounds are checked by the caller).
pub fn host_int64(obj: &Bound<'_, PyAny>) -> PyResult<(Vec<i64>, Vec<usize>)> {
    let py = obj.py();
    let np = py::numpy(py)?;
    let a = np.call_method1("asarray", (obj, "int64", "C"))?;
    let shape: Vec<usize> = a.getattr("shape")?.extract()?;
    // Copied out as bytes: the array may be unaligned (NumPy's `asarray` returns an
    // unaligned int64 array as it is), which a typed buffer refuses.
    let data = with_host_bytes(&a, |bytes| {
        Ok(bytes
            .chunks_exact(8)
            .map(|c| i64::from_ne_bytes(c.try_into().expect("chunks of 8 bytes")))
            .collect())
    })?;
    Ok((data, shape))
}
