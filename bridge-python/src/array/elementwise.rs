//! Methods computed element by element: casts and copies (`astype`, `copy`, `fill`),
//! `clip`, `round` and `conj`.

use super::{
    arr_of, indexing::item_value, operators::unary, reductions::finish_out, wrap, PyNdArray,
};
use crate::convert::to_arg;
use crate::ops::{self, Arg, Dest, Weak};
use crate::py::{self, UnsupportedError};
use crate::rt::Arr;
use crate::types::int_fits;
use hassium_core::Opcode;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

/// NumPy's `round`: round half to even at `decimals` places.
pub fn round(py: Python<'_>, a: &Arr, decimals: i32) -> PyResult<Arr> {
    let t = a.dtype();
    if t.is_complex() {
        return Err(UnsupportedError::new_err(
            "hassium does not round complex numbers",
        ));
    }
    if !t.is_float() {
        if decimals >= 0 {
            return ops::cast_copy(a, t);
        }
        return Err(UnsupportedError::new_err(
            "hassium does not round integers to negative decimals",
        ));
    }
    if decimals == 0 {
        return ops::elementwise(py, Opcode::Rint, &[Arg::Array(a.clone())], &Dest::NEW, None);
    }
    let f = 10f64.powi(decimals.abs());
    let (mul, div) = if decimals > 0 {
        (Opcode::Multiply, Opcode::Divide)
    } else {
        (Opcode::Divide, Opcode::Multiply)
    };
    let s = ops::elementwise(
        py,
        mul,
        &[Arg::Array(a.clone()), Arg::Weak(Weak::Float(f))],
        &Dest::NEW,
        None,
    )?;
    let r = ops::elementwise(py, Opcode::Rint, &[Arg::Array(s)], &Dest::NEW, None)?;
    ops::elementwise(
        py,
        div,
        &[Arg::Array(r), Arg::Weak(Weak::Float(f))],
        &Dest::NEW,
        None,
    )
}

#[pymethods]
impl PyNdArray {
    #[pyo3(signature = (dtype, order="K", casting="unsafe", subok=true, copy=true))]
    fn astype(
        slf: &Bound<'_, Self>,
        dtype: &Bound<'_, PyAny>,
        order: &str,
        casting: &str,
        subok: bool,
        copy: bool,
    ) -> PyResult<PyObject> {
        let _ = (order, subok);
        let a = arr_of(slf)?;
        let d = py::to_dtype(dtype)?;
        if crate::types::can_cast(a.dtype(), d, casting) == Some(false) {
            return Err(PyTypeError::new_err(format!(
                "Cannot cast array data from dtype('{}') to dtype('{}') according to the rule '{casting}'",
                a.dtype().name(),
                d.name()
            )));
        }
        if !copy && d == a.dtype() {
            return Ok(slf.clone().into_any().unbind());
        }
        wrap(slf.py(), ops::cast_copy(&a, d)?)
    }
    #[pyo3(signature = (order="C"))]
    fn copy(&self, py: Python<'_>, order: &str) -> PyResult<PyObject> {
        let _ = order;
        wrap(py, ops::cast_copy(self.arr()?, self.arr()?.dtype())?)
    }
    /// Stores one value everywhere; a value with dimensions is NumPy's `ValueError`.
    fn fill(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let v = item_value(value, self.arr()?.dtype(), true)?;
        if matches!(&v, Arg::Array(a) if a.view.ndim() > 0) {
            return Err(PyValueError::new_err(
                "setting an array element with a sequence.",
            ));
        }
        ops::assign(py, self.arr()?, &v, "unsafe")
    }
    /// `maximum` by the lower bound, then `minimum` by the upper; without bounds, a copy.
    /// A Python int bound on the far side of what the dtype holds clips nothing, and NumPy
    /// 2 drops it (`clip(uint8s, -5, 300)` is a copy); on the near side it fails as any
    /// out-of-range Python int does.
    #[pyo3(signature = (min=None, max=None, out=None))]
    fn clip(
        &self,
        py: Python<'_>,
        min: Option<&Bound<'_, PyAny>>,
        max: Option<&Bound<'_, PyAny>>,
        out: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyObject> {
        let t = self.arr()?.dtype();
        let bound = |b: Option<&Bound<'_, PyAny>>, lower: bool| -> PyResult<Option<Arg>> {
            let Some(b) = b.filter(|b| !b.is_none()) else {
                return Ok(None);
            };
            Ok(match to_arg(b)? {
                Arg::Weak(Weak::Int(v))
                    if t.is_integer() && !int_fits(v, t) && (v < 0) == lower =>
                {
                    None
                }
                a => Some(a),
            })
        };
        let bounds = [
            (Opcode::Maximum, bound(min, true)?),
            (Opcode::Minimum, bound(max, false)?),
        ];
        let mut cur = None;
        for (op, b) in bounds {
            if let Some(b) = b {
                let x = match cur.take() {
                    Some(c) => c,
                    None => self.arr()?.clone(),
                };
                cur = Some(ops::elementwise(
                    py,
                    op,
                    &[Arg::Array(x), b],
                    &Dest::NEW,
                    None,
                )?);
            }
        }
        let cur = match cur {
            Some(c) => c,
            None => ops::cast_copy(self.arr()?, t)?,
        };
        finish_out(py, cur, out)
    }
    #[pyo3(signature = (decimals=0, out=None))]
    fn round(
        &self,
        py: Python<'_>,
        decimals: i32,
        out: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyObject> {
        let r = round(py, self.arr()?, decimals)?;
        finish_out(py, r, out)
    }
    fn conj(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        unary(slf, Opcode::Conj)
    }
    fn conjugate(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        unary(slf, Opcode::Conj)
    }
}
