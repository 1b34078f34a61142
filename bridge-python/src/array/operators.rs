//! Python's operators: arithmetic, bitwise and comparison, their reflected and
//! in-place forms, each one elementwise opcode.

use super::{arr_of, selection, wrap, PyNdArray};
use crate::convert::{to_arg, to_arr};
use crate::ops::{self, Arg, Dest};
use crate::py::{self, UnsupportedError};
use crate::rt::Write;
use hassium_core::{DType, Opcode};
use hassium_record as record;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::pyclass::CompareOp;
use pyo3::types::{PyBytes, PyString};

/// `a op b` / `b op a`: NotImplemented when `other` is not an operand at all. What the
/// runtime does not record (`complex > 0`) goes, like a call of the ufunc itself, to the
/// package's ufunc, which runs it through NumPy with its fallback warning.
fn binary(
    slf: &Bound<'_, PyNdArray>,
    other: &Bound<'_, PyAny>,
    op: Opcode,
    reflected: bool,
) -> PyResult<PyObject> {
    let py = slf.py();
    // One borrow of `slf` for both questions: is it a selection, and which view is it.
    let me = {
        let r = slf.borrow();
        match r.selection() {
            None => Some(record::Arg::Array(r.arr()?.view.clone())),
            Some(_) => None,
        }
    };
    let me = match me {
        Some(me) => me,
        None => {
            if let Some(done) = selection::lifted(slf, op, Some(other), reflected)? {
                return Ok(done);
            }
            record::Arg::Array(slf.borrow().arr()?.view.clone())
        }
    };
    // The operands go to the recorder as views: `slf` and `other` keep their bases alive
    // for the call, and an array-like copied in is held in `held`.
    let mut held: Option<Arg> = None;
    let arg = match other.downcast::<PyNdArray>() {
        Ok(a) => Ok(record::Arg::Array(a.borrow().arr()?.view.clone())),
        Err(_) => to_arg(other).map(|a| held.insert(a).rec()),
    };
    let arg = match arg {
        Ok(a) => a,
        // `a == None`, `a != "text"`: NumPy compares element by element, and no element
        // equals an object that is not a number.
        Err(e)
            if matches!(op, Opcode::Equal | Opcode::NotEqual)
                && (e.is_instance_of::<PyTypeError>(py)
                    || e.is_instance_of::<PyValueError>(py)) =>
        {
            let all = hassium_core::Scalar::Bool(op == Opcode::NotEqual);
            let shape = slf.borrow().arr()?.view.shape.clone();
            return wrap(py, ops::full(&shape, all.into(), DType::Bool)?);
        }
        // `a < "text"`: NumPy makes a string array and has no loop for it; its error.
        Err(_) if other.is_instance_of::<PyString>() || other.is_instance_of::<PyBytes>() => {
            let t = slf.borrow().arr()?.dtype();
            return match py::numpy_operand_error(py, op.name(), t, other, reflected)? {
                Some(e) => Err(e),
                None => Ok(py.NotImplemented()),
            };
        }
        Err(e) if e.is_instance_of::<PyTypeError>(py) || e.is_instance_of::<PyValueError>(py) => {
            return Ok(py.NotImplemented())
        }
        Err(e) => return Err(e),
    };
    let args = if reflected { [arg, me] } else { [me, arg] };
    let recorded = ops::elementwise_of(py, op, &args, &Dest::NEW, None);
    drop(held);
    match recorded {
        Ok(out) => wrap(py, out),
        Err(e) if e.is_instance_of::<UnsupportedError>(py) => {
            let ufunc = PyModule::import(py, "hassium")?.getattr(op.name())?;
            let (a, b) = if reflected {
                (other.clone(), slf.clone().into_any())
            } else {
                (slf.clone().into_any(), other.clone())
            };
            Ok(ufunc.call1((a, b))?.unbind())
        }
        Err(e) => Err(e),
    }
}

/// NumPy's `a ** scalar` for an inexact `a`: a Python int 2 squares, a Python int -1
/// takes the reciprocal and a Python float 0.5 the square root (the operator, not
/// `np.power`, does this; for complex numbers the results differ from `power`'s).
fn scalar_power(slf: &Bound<'_, PyNdArray>, other: &Bound<'_, PyAny>) -> Option<Opcode> {
    let t = selection::dtype_of(slf).ok()?;
    if !t.is_inexact() {
        return None;
    }
    if other.is_exact_instance_of::<pyo3::types::PyInt>() {
        match other.extract::<i64>().ok()? {
            2 => Some(Opcode::Square),
            -1 => Some(Opcode::Reciprocal),
            _ => None,
        }
    } else if other.is_exact_instance_of::<pyo3::types::PyFloat>() {
        (other.extract::<f64>().ok()? == 0.5).then_some(Opcode::Sqrt)
    } else {
        None
    }
}

/// `a op= b`: writes into `a`'s view under casting rule "same_kind".
fn inplace(slf: &Bound<'_, PyNdArray>, other: &Bound<'_, PyAny>, op: Opcode) -> PyResult<()> {
    if selection::lifted_in_place(slf, op, Some(other))? {
        return Ok(());
    }
    let py = slf.py();
    let me = arr_of(slf)?;
    me.check_writeable(Write::Output)?;
    let other = to_arg(other)?;
    ops::elementwise(
        py,
        op,
        &[Arg::Array(me.clone()), other],
        &Dest {
            out: Some(&me),
            casting: "same_kind",
        },
        None,
    )?;
    Ok(())
}

pub(super) fn unary(slf: &Bound<'_, PyNdArray>, op: Opcode) -> PyResult<PyObject> {
    if slf.borrow().selection().is_some() {
        if let Some(done) = selection::lifted(slf, op, None, false)? {
            return Ok(done);
        }
    }
    let py = slf.py();
    // `slf` keeps its base alive for the call.
    let me = record::Arg::Array(slf.borrow().arr()?.view.clone());
    wrap(py, ops::elementwise_of(py, op, &[me], &Dest::NEW, None)?)
}

#[pymethods]
impl PyNdArray {
    #[classattr]
    fn __array_priority__() -> f64 {
        100.0
    }
    fn __add__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        binary(slf, o, Opcode::Add, false)
    }
    fn __radd__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        binary(slf, o, Opcode::Add, true)
    }
    fn __iadd__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<()> {
        inplace(slf, o, Opcode::Add)
    }
    fn __sub__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        binary(slf, o, Opcode::Subtract, false)
    }
    fn __rsub__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        binary(slf, o, Opcode::Subtract, true)
    }
    fn __isub__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<()> {
        inplace(slf, o, Opcode::Subtract)
    }
    fn __mul__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        binary(slf, o, Opcode::Multiply, false)
    }
    fn __rmul__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        binary(slf, o, Opcode::Multiply, true)
    }
    fn __imul__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<()> {
        inplace(slf, o, Opcode::Multiply)
    }
    fn __truediv__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        binary(slf, o, Opcode::Divide, false)
    }
    fn __rtruediv__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        binary(slf, o, Opcode::Divide, true)
    }
    fn __itruediv__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<()> {
        inplace(slf, o, Opcode::Divide)
    }
    fn __floordiv__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        binary(slf, o, Opcode::FloorDivide, false)
    }
    fn __rfloordiv__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        binary(slf, o, Opcode::FloorDivide, true)
    }
    fn __ifloordiv__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<()> {
        inplace(slf, o, Opcode::FloorDivide)
    }
    fn __mod__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        binary(slf, o, Opcode::Remainder, false)
    }
    fn __rmod__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        binary(slf, o, Opcode::Remainder, true)
    }
    fn __imod__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<()> {
        inplace(slf, o, Opcode::Remainder)
    }
    fn __pow__(
        slf: &Bound<'_, Self>,
        o: &Bound<'_, PyAny>,
        modulo: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyObject> {
        if modulo.is_some_and(|m| !m.is_none()) {
            // NumPy's arrays have no three-argument pow either.
            return Err(PyTypeError::new_err(
                "unsupported operand type(s) for ** or pow(): 'hassium.ndarray', 'int', 'int'",
            ));
        }
        if let Some(op) = scalar_power(slf, o) {
            if let Some(done) = selection::lifted(slf, op, None, false)? {
                return Ok(done);
            }
            let py = slf.py();
            return wrap(
                py,
                ops::elementwise(py, op, &[Arg::Array(arr_of(slf)?)], &Dest::NEW, None)?,
            );
        }
        binary(slf, o, Opcode::Power, false)
    }
    fn __rpow__(
        slf: &Bound<'_, Self>,
        o: &Bound<'_, PyAny>,
        modulo: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyObject> {
        let _ = modulo;
        binary(slf, o, Opcode::Power, true)
    }
    fn __ipow__(
        slf: &Bound<'_, Self>,
        o: &Bound<'_, PyAny>,
        modulo: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let _ = modulo;
        if let Some(op) = scalar_power(slf, o) {
            if selection::lifted_in_place(slf, op, None)? {
                return Ok(());
            }
            let me = arr_of(slf)?;
            me.check_writeable(Write::Output)?;
            let dest = Dest {
                out: Some(&me),
                casting: "same_kind",
            };
            ops::elementwise(slf.py(), op, &[Arg::Array(me.clone())], &dest, None)?;
            return Ok(());
        }
        inplace(slf, o, Opcode::Power)
    }
    fn __and__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        binary(slf, o, Opcode::BitwiseAnd, false)
    }
    fn __rand__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        binary(slf, o, Opcode::BitwiseAnd, true)
    }
    fn __iand__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<()> {
        inplace(slf, o, Opcode::BitwiseAnd)
    }
    fn __or__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        binary(slf, o, Opcode::BitwiseOr, false)
    }
    fn __ror__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        binary(slf, o, Opcode::BitwiseOr, true)
    }
    fn __ior__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<()> {
        inplace(slf, o, Opcode::BitwiseOr)
    }
    fn __xor__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        binary(slf, o, Opcode::BitwiseXor, false)
    }
    fn __rxor__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        binary(slf, o, Opcode::BitwiseXor, true)
    }
    fn __ixor__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<()> {
        inplace(slf, o, Opcode::BitwiseXor)
    }
    fn __lshift__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        binary(slf, o, Opcode::LeftShift, false)
    }
    fn __rlshift__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        binary(slf, o, Opcode::LeftShift, true)
    }
    fn __ilshift__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<()> {
        inplace(slf, o, Opcode::LeftShift)
    }
    fn __rshift__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        binary(slf, o, Opcode::RightShift, false)
    }
    fn __rrshift__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        binary(slf, o, Opcode::RightShift, true)
    }
    fn __irshift__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<()> {
        inplace(slf, o, Opcode::RightShift)
    }
    fn __matmul__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        let py = slf.py();
        let b = match to_arr(o, None) {
            Ok(b) => b,
            Err(_) => return Ok(py.NotImplemented()),
        };
        wrap(py, ops::matmul(py, &arr_of(slf)?, &b, None)?)
    }
    fn __rmatmul__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        let py = slf.py();
        let b = match to_arr(o, None) {
            Ok(b) => b,
            Err(_) => return Ok(py.NotImplemented()),
        };
        wrap(py, ops::matmul(py, &b, &arr_of(slf)?, None)?)
    }
    /// `a @= b` writes into `a` (views of it see the product, as in NumPy); the product
    /// must have `a`'s shape and cast to its dtype under "same_kind".
    fn __imatmul__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = slf.py();
        let a = arr_of(slf)?;
        let b = to_arr(o, None)?;
        if a.view.ndim() < 1 || b.view.ndim() < 2 {
            return Err(PyValueError::new_err(
                "inplace matrix multiplication requires the first operand to have at least one and the second at least two dimensions.",
            ));
        }
        ops::matmul(py, &a, &b, Some(&a))?;
        Ok(())
    }
    fn __divmod__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<(PyObject, PyObject)> {
        Ok((
            binary(slf, o, Opcode::FloorDivide, false)?,
            binary(slf, o, Opcode::Remainder, false)?,
        ))
    }
    fn __rdivmod__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<(PyObject, PyObject)> {
        Ok((
            binary(slf, o, Opcode::FloorDivide, true)?,
            binary(slf, o, Opcode::Remainder, true)?,
        ))
    }
    fn __neg__(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        unary(slf, Opcode::Negative)
    }
    fn __pos__(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        unary(slf, Opcode::Positive)
    }
    fn __abs__(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        unary(slf, Opcode::Absolute)
    }
    fn __invert__(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        unary(slf, Opcode::Invert)
    }
    fn __richcmp__(
        slf: &Bound<'_, Self>,
        o: &Bound<'_, PyAny>,
        op: CompareOp,
    ) -> PyResult<PyObject> {
        let code = match op {
            CompareOp::Lt => Opcode::Less,
            CompareOp::Le => Opcode::LessEqual,
            CompareOp::Eq => Opcode::Equal,
            CompareOp::Ne => Opcode::NotEqual,
            CompareOp::Gt => Opcode::Greater,
            CompareOp::Ge => Opcode::GreaterEqual,
        };
        binary(slf, o, code, false)
    }
}
