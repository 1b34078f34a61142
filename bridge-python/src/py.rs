//! NumPy interop: the cached `numpy` module and dtype objects, dtype arguments, and
//! NumPy's own exception types.

use hassium_core::DType;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{IntoPyDict, PyTuple};

pyo3::create_exception!(
    _hassium,
    UnsupportedError,
    PyTypeError,
    "Raised by a primitive for an input the bytecode cannot express (a dtype outside the \
     14, complex ordering, ...); the package catches it and falls back to NumPy."
);

static NUMPY: GILOnceCell<Py<PyModule>> = GILOnceCell::new();
static DTYPES: GILOnceCell<Vec<Py<PyAny>>> = GILOnceCell::new();

pub fn numpy(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    Ok(NUMPY
        .get_or_try_init(py, || PyModule::import(py, "numpy").map(Bound::unbind))?
        .bind(py))
}

fn dtype_objects(py: Python<'_>) -> PyResult<&Vec<Py<PyAny>>> {
    DTYPES.get_or_try_init(py, || {
        let np = numpy(py)?;
        let f = np.getattr("dtype")?;
        DType::ALL
            .iter()
            .map(|d| Ok(f.call1((d.name(),))?.unbind()))
            .collect()
    })
}

/// NumPy's dtype object for a dtype (cached: the same object every time).
pub fn dtype_obj(py: Python<'_>, d: DType) -> PyResult<Bound<'_, PyAny>> {
    Ok(dtype_objects(py)?[d as usize].bind(py).clone())
}

/// The dtype an argument names (`np.float32`, `"f4"`, `float`, a dtype object, …).
pub fn to_dtype(obj: &Bound<'_, PyAny>) -> PyResult<DType> {
    let py = obj.py();
    let cached = dtype_objects(py)?;
    if let Some(i) = cached.iter().position(|d| d.is(obj)) {
        return Ok(DType::ALL[i]);
    }
    let dt = numpy(py)?.getattr("dtype")?.call1((obj,))?;
    let name: String = dt.getattr("name")?.extract()?;
    DType::from_name(&name)
        .ok_or_else(|| UnsupportedError::new_err(format!("hassium does not support dtype {name}")))
}

/// `dtype=None` or a dtype.
pub fn opt_dtype(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<DType>> {
    match obj {
        None => Ok(None),
        Some(o) if o.is_none() => Ok(None),
        Some(o) => to_dtype(o).map(Some),
    }
}

/// One extent of a shape (`zeros`, `reshape`, `.shape = `): an int, or NumPy's
/// `ValueError` for one beyond `isize` as NumPy words it.
pub fn dim_arg(obj: &Bound<'_, PyAny>) -> PyResult<isize> {
    obj.extract::<isize>().map_err(|e| {
        if e.is_instance_of::<pyo3::exceptions::PyOverflowError>(obj.py()) {
            PyValueError::new_err("Maximum allowed dimension exceeded")
        } else {
            e
        }
    })
}

/// A shape argument: an int or a sequence of them, each read by [`dim_arg`]. Anything
/// else is the error reading it as one int gave.
pub fn dims_arg(obj: &Bound<'_, PyAny>) -> PyResult<Vec<isize>> {
    let one = match dim_arg(obj) {
        Ok(n) => return Ok(vec![n]),
        Err(e) => e,
    };
    if one.is_instance_of::<PyValueError>(obj.py()) {
        return Err(one);
    }
    match obj.extract::<Vec<Bound<'_, PyAny>>>() {
        Ok(items) => items.iter().map(dim_arg).collect(),
        Err(_) => Err(one),
    }
}

/// `numpy.exceptions.AxisError(msg)` (a ValueError and IndexError subclass).
pub fn axis_error(msg: &str) -> PyErr {
    Python::with_gil(|py| {
        let made = numpy(py)
            .and_then(|np| np.getattr("exceptions"))
            .and_then(|ex| ex.getattr("AxisError"))
            .and_then(|cls| cls.call1((msg,)));
        match made {
            Ok(e) => PyErr::from_value(e),
            Err(_) => PyValueError::new_err(msg.to_owned()),
        }
    })
}

/// NumPy's error when an operand of `ufunc` (its output, or `input` i) cannot be cast
/// from `from` to `to` under `casting`: `_UFuncOutputCastingError` or
/// `_UFuncInputCastingError`, both `UFuncTypeError`s.
pub fn casting_error(
    py: Python<'_>,
    ufunc: &str,
    input: Option<usize>,
    from: DType,
    to: DType,
    casting: &str,
) -> PyErr {
    let (class, operand, i) = match input {
        Some(i) => ("_UFuncInputCastingError", format!("input {i}"), i),
        None => ("_UFuncOutputCastingError", "output".to_string(), 0),
    };
    let msg = format!(
        "Cannot cast ufunc '{ufunc}' {operand} from dtype('{}') to dtype('{}') with casting rule '{casting}'",
        from.name(),
        to.name()
    );
    let made = (|| -> PyResult<PyErr> {
        let np = numpy(py)?;
        let cls = PyModule::import(py, "numpy._core._exceptions")?.getattr(class)?;
        let uf = np.getattr(ufunc)?;
        let e = cls.call1((uf, casting, dtype_obj(py, from)?, dtype_obj(py, to)?, i))?;
        Ok(PyErr::from_value(e))
    })();
    made.unwrap_or_else(|_| PyTypeError::new_err(msg))
}

/// NumPy's `MemoryError` for an array it cannot allocate ("Unable to allocate 8.00 TiB for
/// an array with shape (1099511627776,) and data type float64").
pub fn array_memory_error(py: Python<'_>, dtype: DType, shape: &[usize]) -> PyErr {
    let made = (|| -> PyResult<PyErr> {
        let cls = PyModule::import(py, "numpy._core._exceptions")?.getattr("_ArrayMemoryError")?;
        let e = cls.call1((PyTuple::new(py, shape)?, dtype_obj(py, dtype)?))?;
        Ok(PyErr::from_value(e))
    })();
    made.unwrap_or_else(|_| {
        pyo3::exceptions::PyMemoryError::new_err(format!(
            "Unable to allocate an array with shape {shape:?} and data type {}",
            dtype.name()
        ))
    })
}

/// How a ufunc with no loop for some dtypes was called: NumPy words each case its own way.
pub use hassium_record::Call;

/// The error NumPy raises when `ufunc` has no loop for inputs of `types`, called as `call`:
/// NumPy is asked, with 0-d arrays of those dtypes, so the class and message are its own
/// (a plain `TypeError` "not supported for the input types" for numeric dtypes, "No loop
/// matching the specified signature" under `dtype=`). Should NumPy find a loop after all,
/// `_UFuncNoLoopError` is made directly.
pub fn no_loop_error(py: Python<'_>, ufunc: &str, types: &[DType], call: Call) -> PyErr {
    if let Ok(Some(e)) = numpy_no_loop(py, ufunc, types, call) {
        return e;
    }
    let made = (|| -> PyResult<PyErr> {
        let np = numpy(py)?;
        let cls = PyModule::import(py, "numpy._core._exceptions")?.getattr("_UFuncNoLoopError")?;
        let uf = np.getattr(ufunc)?;
        // A reduction's loop takes the input's dtype twice.
        let twice = [types, types].concat();
        let loop_types = if matches!(call, Call::Reduce) {
            &twice
        } else {
            types
        };
        let dts: Vec<Bound<'_, PyAny>> = loop_types
            .iter()
            .map(|&d| dtype_obj(py, d))
            .collect::<PyResult<_>>()?;
        let e = cls.call1((uf, PyTuple::new(py, dts)?))?;
        Ok(PyErr::from_value(e))
    })();
    made.unwrap_or_else(|_| {
        let names: Vec<&str> = types.iter().map(|d| d.name()).collect();
        PyTypeError::new_err(format!(
            "ufunc '{ufunc}' not supported for the input types ({}), and the inputs could not be safely coerced",
            names.join(", ")
        ))
    })
}

/// The `TypeError` NumPy raises for the same call on 0-d arrays (floating-point warnings
/// silenced), or None when NumPy computes it.
fn numpy_no_loop(
    py: Python<'_>,
    ufunc: &str,
    types: &[DType],
    call: Call,
) -> PyResult<Option<PyErr>> {
    let np = numpy(py)?;
    let uf = np.getattr(ufunc)?;
    let shape = match call {
        Call::Reduce => PyTuple::new(py, [1usize])?,
        _ => PyTuple::empty(py),
    };
    let inputs: Vec<Bound<'_, PyAny>> = types
        .iter()
        .map(|&d| np.getattr("ones")?.call1((&shape, dtype_obj(py, d)?)))
        .collect::<PyResult<_>>()?;
    let args = PyTuple::new(py, &inputs)?;
    let kwargs = match call {
        Call::Dtype(t) => Some([("dtype", dtype_obj(py, t)?)].into_py_dict(py)?),
        _ => None,
    };
    let result = quietly(py, || match call {
        Call::Reduce => uf.call_method1("reduce", (&inputs[0],)),
        _ => uf.call(args, kwargs.as_ref()),
    })?;
    Ok(match result {
        Err(e) if e.is_instance_of::<PyTypeError>(py) => Some(e),
        _ => None,
    })
}

/// The `TypeError` NumPy raises for `a op other` (`other op a` when `reflected`), `a`
/// an array of dtype `t` and `other` an operand Hassium does not take (a string): NumPy
/// converts it and finds no loop. None when NumPy computes it or fails otherwise.
pub fn numpy_operand_error(
    py: Python<'_>,
    ufunc: &str,
    t: DType,
    other: &Bound<'_, PyAny>,
    reflected: bool,
) -> PyResult<Option<PyErr>> {
    let np = numpy(py)?;
    let uf = np.getattr(ufunc)?;
    let a = np
        .getattr("ones")?
        .call1((PyTuple::empty(py), dtype_obj(py, t)?))?;
    let args = if reflected {
        PyTuple::new(py, [other.clone(), a])?
    } else {
        PyTuple::new(py, [a, other.clone()])?
    };
    Ok(match quietly(py, || uf.call1(args))? {
        Err(e) if e.is_instance_of::<PyTypeError>(py) => Some(e),
        _ => None,
    })
}

/// Runs `f` under `np.errstate(all="ignore")`: its result, or the error entering or
/// leaving the state raised. Whatever `f` needs that can fail is made before, so
/// nothing leaves the state changed.
fn quietly<'py>(
    py: Python<'py>,
    f: impl FnOnce() -> PyResult<Bound<'py, PyAny>>,
) -> PyResult<PyResult<Bound<'py, PyAny>>> {
    let quiet = numpy(py)?
        .getattr("errstate")?
        .call((), Some(&[("all", "ignore")].into_py_dict(py)?))?;
    quiet.call_method0("__enter__")?;
    let result = f();
    quiet.call_method1("__exit__", (py.None(), py.None(), py.None()))?;
    Ok(result)
}
