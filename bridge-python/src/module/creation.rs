//! Making arrays: `empty`, `full`, `arange`, `asarray`, and random bits.

use crate::array::{wrap, PyNdArray};
use crate::convert::to_arg;
use crate::ops::{Arg, Weak};
use crate::{convert, ops, py, types};
use hassium_core::DType;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

/// A shape argument: an int or a sequence of ints.
pub(super) fn shape_arg(obj: &Bound<'_, PyAny>) -> PyResult<Vec<usize>> {
    let raw = py::dims_arg(obj).map_err(|e| {
        if e.is_instance_of::<PyTypeError>(obj.py()) {
            PyTypeError::new_err("expected a sequence of integers or a single integer")
        } else {
            e
        }
    })?;
    if raw.iter().any(|&d| d < 0) {
        return Err(PyValueError::new_err("negative dimensions are not allowed"));
    }
    Ok(raw.into_iter().map(|d| d as usize).collect())
}

#[pyfunction]
#[pyo3(signature = (shape, dtype=None))]
pub(crate) fn empty(
    py: Python<'_>,
    shape: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyObject> {
    let d = py::opt_dtype(dtype)?.unwrap_or(DType::Float64);
    wrap(py, ops::empty(&shape_arg(shape)?, d)?)
}

#[pyfunction]
#[pyo3(signature = (shape, value, dtype=None))]
pub(crate) fn full(
    py: Python<'_>,
    shape: &Bound<'_, PyAny>,
    value: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyObject> {
    let shape = shape_arg(shape)?;
    let v = to_arg(value)?;
    let d = match (py::opt_dtype(dtype)?, &v) {
        (Some(d), _) => d,
        (None, Arg::Weak(w)) => w.default_dtype(),
        (None, Arg::Typed(s)) => s.dtype(),
        (None, Arg::Array(a)) => a.dtype(),
    };
    match v {
        Arg::Array(a) => {
            let r = ops::empty(&shape, d)?;
            ops::assign(py, &r, &Arg::Array(a), "unsafe")?;
            wrap(py, r)
        }
        Arg::Typed(s) => wrap(py, ops::full(&shape, s.cast(d).into(), d)?),
        Arg::Weak(w) => {
            if let Weak::Int(i) = w {
                if !types::int_fits(i, d) {
                    return Err(pyo3::exceptions::PyOverflowError::new_err(format!(
                        "Python integer {i} out of bounds for {}",
                        d.name()
                    )));
                }
            }
            wrap(py, ops::full(&shape, w.to_scalar(d).into(), d)?)
        }
    }
}

fn weak_arg(obj: &Bound<'_, PyAny>) -> PyResult<Weak> {
    match to_arg(obj)? {
        Arg::Weak(w) => Ok(w),
        Arg::Typed(s) => Ok(match s.as_i128() {
            Some(i) => Weak::Int(i),
            None => Weak::Float(s.as_f64()),
        }),
        Arg::Array(_) => Err(PyTypeError::new_err("arange takes scalar arguments")),
    }
}

/// `np.arange(start, stop, step, dtype)`; `stop=None` means `arange(0, start)`.
#[pyfunction]
#[pyo3(signature = (start, stop=None, step=None, dtype=None))]
pub(crate) fn arange(
    py: Python<'_>,
    start: &Bound<'_, PyAny>,
    stop: Option<&Bound<'_, PyAny>>,
    step: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyObject> {
    let (start, stop) = match stop.filter(|s| !s.is_none()) {
        Some(s) => (weak_arg(start)?, weak_arg(s)?),
        None => (Weak::Int(0), weak_arg(start)?),
    };
    let step = match step.filter(|s| !s.is_none()) {
        Some(s) => weak_arg(s)?,
        None => Weak::Int(1),
    };
    let all_int = [start, stop, step]
        .iter()
        .all(|w| matches!(w, Weak::Int(_) | Weak::Bool(_)));
    let d = match py::opt_dtype(dtype)? {
        Some(d) => d,
        None if all_int => DType::Int64,
        None => DType::Float64,
    };
    let f = |w: Weak| match w {
        Weak::Bool(b) => b as i64 as f64,
        Weak::Int(i) => i as f64,
        Weak::Float(f) => f,
        Weak::Complex(r, _) => r,
    };
    let n = if all_int {
        let g = |w: Weak| match w {
            Weak::Int(i) => i,
            Weak::Bool(b) => b as i128,
            _ => 0,
        };
        let (a, b, s) = (g(start), g(stop), g(step));
        if s == 0 {
            return Err(pyo3::exceptions::PyZeroDivisionError::new_err(
                "division by zero",
            ));
        }
        let len = if s > 0 {
            (b - a + s - 1).div_euclid(s)
        } else {
            (a - b - s - 1).div_euclid(-s)
        };
        if len > isize::MAX as i128 {
            return Err(PyValueError::new_err("Maximum allowed size exceeded"));
        }
        len.max(0) as usize
    } else {
        let s = f(step);
        if s == 0.0 {
            return Err(pyo3::exceptions::PyZeroDivisionError::new_err(
                "division by zero",
            ));
        }
        let len = ((f(stop) - f(start)) / s).ceil();
        if len.is_nan() {
            return Err(PyValueError::new_err("arange: cannot compute length"));
        }
        // `isize::MAX as f64` rounds up to 2^63, itself too many.
        if len >= isize::MAX as f64 {
            return Err(PyValueError::new_err("Maximum allowed size exceeded"));
        }
        len.max(0.0) as usize
    };
    wrap(py, ops::arange(start, step, n, d)?)
}

/// `np.asarray(obj, dtype, copy)`: Hassium arrays pass through; host data is copied in.
#[pyfunction]
#[pyo3(signature = (obj, dtype=None, copy=None))]
pub(crate) fn asarray(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    copy: Option<bool>,
) -> PyResult<PyObject> {
    let d = py::opt_dtype(dtype)?;
    if let Ok(a) = obj.downcast::<PyNdArray>() {
        let arr = a.borrow().arr()?.clone();
        let need_cast = d.is_some_and(|d| d != arr.dtype());
        if need_cast && copy == Some(false) {
            return Err(PyValueError::new_err(
                "Unable to avoid copy while creating an array as requested.",
            ));
        }
        if need_cast || copy == Some(true) {
            return wrap(py, ops::cast_copy(&arr, d.unwrap_or(arr.dtype()))?);
        }
        return Ok(obj.clone().unbind());
    }
    let mut arr = convert::from_host(obj, d)?;
    // Where NumPy would hand back a read-only array itself (no copy asked for, none
    // needed for the dtype), the Hassium array is read-only too.
    if copy != Some(true) && is_read_only_numpy(py, obj, arr.dtype())? {
        arr.writeable = false;
    }
    wrap(py, arr)
}

/// Whether `obj` is a NumPy array of dtype `t` in native byte order whose `WRITEABLE`
/// flag is off. (A non-native array is converted, so the Hassium array is a copy, as
/// `np.asarray(x, dtype=x.dtype.newbyteorder("="))` would be: writeable.)
fn is_read_only_numpy(py: Python<'_>, obj: &Bound<'_, PyAny>, t: DType) -> PyResult<bool> {
    let ndarray = py::numpy(py)?.getattr(pyo3::intern!(py, "ndarray"))?;
    if !obj.is_instance(&ndarray)? {
        return Ok(false);
    }
    let dt = obj.getattr(pyo3::intern!(py, "dtype"))?;
    if !dt
        .getattr(pyo3::intern!(py, "isnative"))?
        .extract::<bool>()?
    {
        return Ok(false);
    }
    let writeable: bool = obj
        .getattr(pyo3::intern!(py, "flags"))?
        .getattr(pyo3::intern!(py, "writeable"))?
        .extract()?;
    Ok(!writeable && py::to_dtype(&obj.getattr(pyo3::intern!(py, "dtype"))?).ok() == Some(t))
}

/// uint64 random bits from the counter-based Philox opcode: identical on every engine.
#[pyfunction]
pub(crate) fn random_bits(
    py: Python<'_>,
    shape: &Bound<'_, PyAny>,
    seed: u64,
    stream: u64,
) -> PyResult<PyObject> {
    wrap(py, ops::random_bits(&shape_arg(shape)?, seed, stream)?)
}
