//! Making arrays: `empty`, `full`, `arange`, `asarray`, and random bits.

use crate::array::{wrap, PyNdArray};
use crate::convert::to_arg;
use crate::ops::{Arg, Weak};
use crate::{convert, ops, py, types};
use hassium_core::{DType, Scalar};
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

/// A Python float set as an item of an integer array: through `int()`, so NaN and the
/// infinities are its errors.
fn float_item(x: f64) -> PyResult<i128> {
    if x.is_nan() {
        return Err(PyValueError::new_err("cannot convert float NaN to integer"));
    }
    if x.is_infinite() {
        return Err(pyo3::exceptions::PyOverflowError::new_err(
            "cannot convert float infinity to integer",
        ));
    }
    Ok(x.trunc() as i128)
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
    let (start_o, stop_o) = match stop.filter(|s| !s.is_none()) {
        Some(s) => (start.clone(), s.clone()),
        None => (0i64.into_pyobject(py)?.into_any(), start.clone()),
    };
    let step_o = match step.filter(|s| !s.is_none()) {
        Some(s) => s.clone(),
        None => 1i64.into_pyobject(py)?.into_any(),
    };
    let (start, stop, step) = (weak_arg(&start_o)?, weak_arg(&stop_o)?, weak_arg(&step_o)?);
    let all_int = [start, stop, step]
        .iter()
        .all(|w| matches!(w, Weak::Int(_) | Weak::Bool(_)));
    // NumPy's dtype of ints is int64, float64 once one needs uint64 (int64 with uint64).
    let int64 = |w: &Weak| !matches!(w, Weak::Int(i) if i64::try_from(*i).is_err());
    let d = match py::opt_dtype(dtype)? {
        Some(d) => d,
        None if all_int && [start, stop, step].iter().all(int64) => DType::Int64,
        None => DType::Float64,
    };
    let f = |w: Weak| match w {
        Weak::Bool(b) => b as i64 as f64,
        Weak::Int(i) => i as f64,
        Weak::Float(f) => f,
        Weak::Complex(r, _) => r,
    };
    // NumPy's length: the ceiling of `(stop - start) / step` taken on the Python numbers,
    // a float quotient even of ints (its ZeroDivisionError for a zero step).
    let quotient = stop_o.sub(&start_o)?.div(&step_o)?;
    let len = match quotient.extract::<f64>() {
        Ok(q) => q,
        Err(_) => (f(stop) - f(start)) / f(step), // complex: by the real parts
    }
    .ceil();
    if len.is_nan() {
        return Err(PyValueError::new_err("arange: cannot compute length"));
    }
    // `isize::MAX as f64` rounds up to 2^63, itself too many.
    if len >= isize::MAX as f64 {
        return Err(PyValueError::new_err("Maximum allowed size exceeded"));
    }
    let n = len.max(0.0) as usize;
    // NumPy sets the first two values, `start` and `start + step` (Python's sum), as items
    // of `dtype` and fills the rest as first + i * (second - first) in `dtype`. So an
    // integer range checks both as an assignment does (`arange(-1, 3, dtype=uint8)` is
    // its OverflowError) and steps by their difference: `arange(2.5, 7, 2.5,
    // dtype=int8)` is [2, 5], not [2, 4].
    let second = || weak_arg(&start_o.add(&step_o)?);
    let (start, step) = if d.is_integer() || d.is_bool() {
        let item = |w: Weak| -> PyResult<i128> {
            let v = match w {
                Weak::Int(i) => i,
                Weak::Bool(b) => b as i128,
                _ if d.is_bool() => return Ok((f(w) != 0.0) as i128),
                _ => float_item(f(w))?,
            };
            if d.is_bool() {
                return Ok((v != 0) as i128);
            }
            if !types::int_fits(v, d) {
                return Err(pyo3::exceptions::PyOverflowError::new_err(format!(
                    "Python integer {v} out of bounds for {}",
                    d.name()
                )));
            }
            Ok(v)
        };
        let first = if n > 0 { item(start)? } else { 0 };
        let next = if n > 1 { item(second()?)? } else { first };
        (Weak::Int(first), Weak::Int(next - first))
    } else if d.is_float() && n > 1 {
        // The difference is taken in `dtype` (float32 for float16, as NumPy's fill).
        let (a, b) = (f(start), f(second()?));
        let (first, delta) = match d {
            DType::Float64 => (a, b - a),
            DType::Float32 => (a as f32 as f64, (b as f32 - a as f32) as f64),
            _ => {
                let half = |x: f64| Scalar::Float64(x).cast(d).as_f64() as f32;
                (half(a) as f64, (half(b) - half(a)) as f64)
            }
        };
        (Weak::Float(first), Weak::Float(delta))
    } else {
        (start, step)
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
