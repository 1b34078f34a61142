//! NumPy's ufuncs and their methods as opcodes: the table, elementwise calls,
//! `reduce`/`accumulate`, `matmul`, `where`, `round`, and the promotion rules for tests.

use crate::array::{self, wrap};
use crate::convert::{to_arg, to_arr};
use crate::ops::{Arg, Dest};
use crate::{ops, py, types};
use hassium_core::DType;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

/// NumPy's ufuncs Hassium has as opcodes, from the opcode table: `(name, nin, aliases)`
/// in opcode order. `hassium` makes its ufunc objects from this list.
#[pyfunction]
pub(crate) fn ufuncs() -> Vec<(&'static str, usize, Vec<&'static str>)> {
    (hassium_core::Opcode::ALL.iter())
        .map(|op| op.info())
        .filter(|i| i.ufunc)
        .map(|i| (i.name, i.nin as usize, i.aliases.to_vec()))
        .collect()
}

/// Applies the elementwise opcode NumPy calls `name` (NumPy's promotion, broadcasting and
/// casting; `out=` must be castable under `casting`).
#[pyfunction]
#[pyo3(signature = (name, *inputs, out=None, dtype=None, casting="same_kind"))]
pub(crate) fn ufunc(
    py: Python<'_>,
    name: &str,
    inputs: &Bound<'_, PyTuple>,
    out: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    casting: &str,
) -> PyResult<PyObject> {
    let op = types::ufunc_opcode(name)
        .ok_or_else(|| py::UnsupportedError::new_err(format!("hassium has no ufunc '{name}'")))?;
    if inputs.len() != op.nin() {
        return Err(PyTypeError::new_err(format!(
            "{name}() takes from {} to {} positional arguments but {} were given",
            op.nin(),
            op.nin() + 1,
            inputs.len()
        )));
    }
    let dt = py::opt_dtype(dtype)?;
    if out.is_none_or(|o| o.is_none()) {
        if let Some(done) = array::lifted_ufunc(py, op, inputs, dt)? {
            return Ok(done);
        }
    }
    let args: Vec<Arg> = inputs.iter().map(|i| to_arg(&i)).collect::<PyResult<_>>()?;
    let out = array::opt_out(out)?;
    let dest = Dest {
        out: out.as_ref(),
        casting,
    };
    let r = ops::elementwise(py, op, &args, &dest, dt)?;
    wrap(py, r)
}

/// `np.<name>.reduce` (and argmin/argmax) with NumPy's axis/dtype/keepdims/initial rules.
#[pyfunction]
#[pyo3(signature = (name, a, axis=None, dtype=None, out=None, keepdims=false, initial=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn reduce(
    py: Python<'_>,
    name: &str,
    a: &Bound<'_, PyAny>,
    axis: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    out: Option<&Bound<'_, PyAny>>,
    keepdims: bool,
    initial: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyObject> {
    if let Some(r) = array::reduce_selection(py, a, name, axis, dtype, out, keepdims, initial)? {
        return wrap(py, r);
    }
    let a = to_arr(a, None)?;
    wrap(
        py,
        array::reduce_any(py, &a, name, axis, dtype, out, keepdims, initial)?,
    )
}

/// `np.<name>.accumulate` along one axis (None: the flattened array).
#[pyfunction]
#[pyo3(signature = (name, a, axis=Some(0), dtype=None, out=None))]
pub(crate) fn accumulate(
    py: Python<'_>,
    name: &str,
    a: &Bound<'_, PyAny>,
    axis: Option<isize>,
    dtype: Option<&Bound<'_, PyAny>>,
    out: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyObject> {
    let a = to_arr(a, None)?;
    wrap(py, array::accumulate_any(py, &a, name, axis, dtype, out)?)
}

#[pyfunction]
#[pyo3(signature = (a, b, out=None))]
pub(crate) fn matmul(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
    out: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyObject> {
    let (a, b) = (to_arr(a, None)?, to_arr(b, None)?);
    let out = array::opt_out(out)?;
    wrap(py, ops::matmul(py, &a, &b, out.as_ref())?)
}

#[pyfunction]
#[pyo3(name = "where")]
pub(crate) fn where_(
    py: Python<'_>,
    cond: &Bound<'_, PyAny>,
    x: &Bound<'_, PyAny>,
    y: &Bound<'_, PyAny>,
) -> PyResult<PyObject> {
    let c = to_arg(cond)?;
    wrap(py, ops::where_(py, &c, &to_arg(x)?, &to_arg(y)?)?)
}

#[pyfunction]
#[pyo3(signature = (a, decimals=0))]
pub(crate) fn round(py: Python<'_>, a: &Bound<'_, PyAny>, decimals: i32) -> PyResult<PyObject> {
    wrap(py, array::round(py, &to_arr(a, None)?, decimals)?)
}

/// The loop dtype and output dtype NumPy would use for ufunc `name` on `dtypes` (for
/// tests against `ufunc.resolve_dtypes`); raises like the ufunc would.
#[pyfunction]
#[pyo3(name = "_resolve")]
pub(crate) fn resolve(
    py: Python<'_>,
    name: &str,
    dtypes: Vec<Bound<'_, PyAny>>,
) -> PyResult<(PyObject, PyObject)> {
    let op = types::ufunc_opcode(name)
        .ok_or_else(|| PyValueError::new_err(format!("no ufunc '{name}'")))?;
    let ds: Vec<DType> = dtypes.iter().map(py::to_dtype).collect::<PyResult<_>>()?;
    let t = ds
        .iter()
        .copied()
        .reduce(hassium_core::promote)
        .unwrap_or(DType::Float64);
    let l = types::resolve_loop_of(op, t, &ds).map_err(|e| match e {
        types::NoLoop::Message(m) => PyTypeError::new_err(m),
        types::NoLoop::NoNumpyLoop => py::no_loop_error(py, name, &ds, py::Call::Plain),
        types::NoLoop::Unsupported => py::UnsupportedError::new_err(format!("{name} {}", t.name())),
    })?;
    let o = op
        .out_dtype(l)
        .ok_or_else(|| PyTypeError::new_err("no output type"))?;
    Ok((
        py::dtype_obj(py, l)?.unbind(),
        py::dtype_obj(py, o)?.unbind(),
    ))
}

/// NumPy's `can_cast(from, to, casting)` as the bridge applies it.
#[pyfunction]
#[pyo3(name = "_can_cast")]
pub(crate) fn can_cast(
    from: &Bound<'_, PyAny>,
    to: &Bound<'_, PyAny>,
    casting: &str,
) -> PyResult<bool> {
    types::can_cast(py::to_dtype(from)?, py::to_dtype(to)?, casting)
        .ok_or_else(|| PyValueError::new_err(format!("unknown casting rule '{casting}'")))
}
