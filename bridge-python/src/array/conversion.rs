//! Python's protocols that need the values (`len`, `iter`, `bool`, `float`, `repr`,
//! `in`, `item`, `tolist`), and copying and pickling.

use super::{
    arr_of,
    interop::{to_numpy, to_numpy_value},
    wrap_view, PyNdArray,
};
use crate::convert::to_arg;
use crate::ops::{self, Arg, Dest, ReduceSpec};
use crate::rt::OrPy;
use hassium_core::Opcode;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

#[pymethods]
impl PyNdArray {
    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        if let Some(p) = self.parts() {
            return Ok(super::selection::shape(py, &p)?[0]);
        }
        self.arr()?
            .view
            .shape
            .first()
            .copied()
            .ok_or_else(|| PyTypeError::new_err("len() of unsized object"))
    }
    fn __iter__(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        let py = slf.py();
        let a = arr_of(slf)?;
        match a.view.ndim() {
            0 => Err(PyTypeError::new_err("iteration over a 0-d array")),
            // 1-D: NumPy yields scalars; observing them needs the values (a sync).
            1 => Ok(to_numpy(slf)?.try_iter()?.into_any().unbind()),
            _ => {
                let mut rows = Vec::with_capacity(a.view.shape[0]);
                for i in 0..a.view.shape[0] {
                    rows.push(wrap_view(slf, a.view.index(0, i as isize).py()?)?);
                }
                Ok(PyList::new(py, rows)?.try_iter()?.into_any().unbind())
            }
        }
    }
    fn __bool__(slf: &Bound<'_, Self>) -> PyResult<bool> {
        to_numpy_value(slf)?.is_truthy()
    }
    fn __float__(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        Ok(to_numpy_value(slf)?.call_method0("__float__")?.unbind())
    }
    fn __int__(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        Ok(to_numpy_value(slf)?.call_method0("__int__")?.unbind())
    }
    fn __complex__(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        let py = slf.py();
        Ok(py
            .get_type::<pyo3::types::PyComplex>()
            .call1((to_numpy_value(slf)?,))?
            .unbind())
    }
    fn __index__(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        Ok(to_numpy_value(slf)?.call_method0("__index__")?.unbind())
    }
    /// `round(x, n)` on a 0-d array: what NumPy gives for the scalar NumPy would have
    /// returned in its place (reductions and scalar indexing give 0-d arrays here), so
    /// `round(np.mean(x), 2)` works unmodified. Like NumPy's ndarray, other ranks have no
    /// `round()`.
    #[pyo3(signature = (ndigits=None))]
    fn __round__(slf: &Bound<'_, Self>, ndigits: Option<&Bound<'_, PyAny>>) -> PyResult<PyObject> {
        let py = slf.py();
        if slf.borrow().arr()?.view.ndim() != 0 {
            return Err(PyTypeError::new_err(
                "type hassium.ndarray doesn't define __round__ method",
            ));
        }
        let scalar = to_numpy_value(slf)?.get_item(pyo3::types::PyTuple::empty(py))?;
        let round = py.import("builtins")?.getattr("round")?;
        Ok(match ndigits {
            Some(n) => round.call1((scalar, n))?,
            None => round.call1((scalar,))?,
        }
        .unbind())
    }
    /// `hash(x)` of a 0-d array: the hash of the scalar NumPy would have returned in its
    /// place, so a dict keyed by `np.argmax(x)` or `x[i]` works unmodified and finds the
    /// keys NumPy's scalars and Python's numbers made. Like NumPy's ndarray, arrays with
    /// dimensions are unhashable. (A key mutated in place afterwards is lost, as any
    /// mutable key is.)
    fn __hash__(slf: &Bound<'_, Self>) -> PyResult<isize> {
        if slf.borrow().arr()?.view.ndim() != 0 {
            return Err(PyTypeError::new_err("unhashable type: 'hassium.ndarray'"));
        }
        to_numpy_value(slf)?
            .get_item(PyTuple::empty(slf.py()))?
            .hash()
    }
    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        to_numpy_value(slf)?.repr()?.extract()
    }
    fn __str__(slf: &Bound<'_, Self>) -> PyResult<String> {
        to_numpy_value(slf)?.str()?.extract()
    }
    fn __format__(slf: &Bound<'_, Self>, spec: &str) -> PyResult<PyObject> {
        Ok(to_numpy_value(slf)?
            .call_method1("__format__", (spec,))?
            .unbind())
    }
    fn __contains__(slf: &Bound<'_, Self>, value: &Bound<'_, PyAny>) -> PyResult<bool> {
        let py = slf.py();
        let eq = ops::elementwise(
            py,
            Opcode::Equal,
            &[Arg::Array(arr_of(slf)?), to_arg(value)?],
            &Dest::NEW,
            None,
        )?;
        let spec = ReduceSpec {
            name: "logical_or",
            axes: None,
            dtype: None,
            keepdims: false,
            initial: None,
        };
        let any = ops::reduce(py, &eq, &spec, None)?;
        Ok(ops::read_scalar(&any)?.as_i128() == Some(1))
    }
    #[pyo3(signature = (*args))]
    fn item(slf: &Bound<'_, Self>, args: &Bound<'_, PyTuple>) -> PyResult<PyObject> {
        Ok(to_numpy_value(slf)?.call_method1("item", args)?.unbind())
    }
    fn tolist(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        Ok(to_numpy(slf)?.call_method0("tolist")?.unbind())
    }
    fn __copy__(&self) -> PyResult<PyNdArray> {
        let a = self.arr()?;
        Ok(PyNdArray::new(ops::cast_copy(a, a.dtype())?, None))
    }
    /// Pickles as its values (a NumPy array of them, read once the array is computed);
    /// unpickling makes a Hassium array again.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let rebuild = PyModule::import(py, pyo3::intern!(py, "hassium._methods"))?
            .getattr(pyo3::intern!(py, "rebuild"))?;
        let values = to_numpy(slf)?.call_method0(pyo3::intern!(py, "copy"))?;
        PyTuple::new(py, [rebuild, PyTuple::new(py, [values])?.into_any()])
    }
    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> PyResult<PyNdArray> {
        self.__copy__()
    }
}
