//! The array's attributes (shape, dtype, strides, flags, `T`, `real`, `imag`, ...), the
//! `flags` object, and NumPy's other attributes reached through the package.

use super::{arr_of, operators::unary, selection, wrap, wrap_view, PyNdArray};
use crate::ops::{self};
use crate::py::{self, UnsupportedError};

use hassium_core::Opcode;
use pyo3::exceptions::{PyAttributeError, PyKeyError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};

/// `ndarray.flags`, as NumPy reports them (attribute and item access); `WRITEABLE` is
/// read from the array and set through it (`a.flags.writeable = False`).
#[pyclass(name = "flagsobj", module = "hassium")]
pub struct Flags {
    array: Py<PyNdArray>,
    #[pyo3(get)]
    c_contiguous: bool,
    #[pyo3(get)]
    f_contiguous: bool,
    #[pyo3(get)]
    owndata: bool,
}

#[pymethods]
impl Flags {
    #[getter]
    fn writeable(&self, py: Python<'_>) -> bool {
        self.array.borrow(py).arr().is_ok_and(|a| a.writeable)
    }
    #[setter]
    fn set_writeable(&self, py: Python<'_>, value: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let value =
            value.ok_or_else(|| PyTypeError::new_err("Cannot delete flags writeable attribute"))?;
        set_writeable(self.array.bind(py), value.is_truthy()?)
    }
    #[getter]
    fn aligned(&self) -> bool {
        true
    }
    #[getter]
    fn writebackifcopy(&self) -> bool {
        false
    }
    #[getter]
    fn contiguous(&self) -> bool {
        self.c_contiguous
    }
    fn __getitem__(&self, py: Python<'_>, key: &str) -> PyResult<bool> {
        Ok(match key {
            "C_CONTIGUOUS" | "C" | "CONTIGUOUS" => self.c_contiguous,
            "F_CONTIGUOUS" | "F" | "FORTRAN" => self.f_contiguous,
            "OWNDATA" | "O" => self.owndata,
            "WRITEABLE" | "W" => self.writeable(py),
            "ALIGNED" | "A" => true,
            "WRITEBACKIFCOPY" | "X" => false,
            _ => return Err(PyKeyError::new_err("Unknown flag")),
        })
    }
    fn __setitem__(&self, py: Python<'_>, key: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        match key {
            "WRITEABLE" | "W" => set_writeable(self.array.bind(py), value.is_truthy()?),
            "ALIGNED" | "A" => Ok(()),
            "WRITEBACKIFCOPY" | "X" if !value.is_truthy()? => Ok(()),
            "WRITEBACKIFCOPY" | "X" => Err(PyValueError::new_err(
                "cannot set WRITEBACKIFCOPY flag to True",
            )),
            _ => Err(PyKeyError::new_err("Unknown flag")),
        }
    }
    fn __repr__(&self, py: Python<'_>) -> String {
        let b = |v: bool| if v { "True" } else { "False" };
        format!(
            "  C_CONTIGUOUS : {}\n  F_CONTIGUOUS : {}\n  OWNDATA : {}\n  WRITEABLE : {}\n  ALIGNED : True\n  WRITEBACKIFCOPY : False\n",
            b(self.c_contiguous),
            b(self.f_contiguous),
            b(self.owndata),
            b(self.writeable(py))
        )
    }
}

/// Sets `a`'s `WRITEABLE` flag. Turning it off always works; turning it on is refused
/// with NumPy's error for a view of a read-only array (its owner decides), and with
/// `UnsupportedError` for a view that reaches one element through several indices (a
/// stride of 0 over a longer axis, as `broadcast_to` makes): NumPy lets a program write
/// through those, but a kernel writing every element of one would race with itself.
fn set_writeable(a: &Bound<'_, PyNdArray>, value: bool) -> PyResult<()> {
    let py = a.py();
    if value {
        let me = a.borrow();
        let v = &me.arr()?.view;
        if v.shape
            .iter()
            .zip(&v.strides)
            .any(|(&n, &s)| n > 1 && s == 0)
        {
            return Err(UnsupportedError::new_err(
                "hassium cannot make a broadcast view writeable (a stride of 0 reaches one \
                 element through several indices); write into a copy (`.copy()`) instead",
            ));
        }
        let parent_read_only = me.parent.as_ref().is_some_and(|p| {
            p.bind(py)
                .downcast::<PyNdArray>()
                .is_ok_and(|p| p.borrow().arr().is_ok_and(|a| !a.writeable))
        });
        if parent_read_only {
            return Err(PyValueError::new_err(
                "cannot set WRITEABLE flag to True of this array",
            ));
        }
    }
    a.borrow_mut().arr_mut()?.writeable = value;
    Ok(())
}

#[pymethods]
impl PyNdArray {
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        if let Some(p) = self.parts() {
            return PyTuple::new(py, selection::shape(py, &p)?);
        }
        PyTuple::new(py, self.arr()?.view.shape.iter())
    }
    #[setter(shape)]
    fn set_shape(&mut self, shape: &Bound<'_, PyAny>) -> PyResult<()> {
        let req = py::dims_arg(shape)?;
        let s = ops::resolve_shape(self.arr()?.view.nelem(), &req)?;
        let v = self.arr()?.view.reshape(&s).ok_or_else(|| {
            PyAttributeError::new_err(
                "Incompatible shape for in-place modification. Use `.reshape()` to make a copy with the desired shape.",
            )
        })?;
        self.arr_mut()?.view = v;
        Ok(())
    }
    #[getter]
    fn ndim(&self) -> PyResult<usize> {
        if let Some(p) = self.parts() {
            return Ok(selection::ndim(&p));
        }
        Ok(self.arr()?.view.ndim())
    }
    #[getter]
    fn size(&self, py: Python<'_>) -> PyResult<usize> {
        if let Some(p) = self.parts() {
            return Ok(selection::shape(py, &p)?.iter().product());
        }
        Ok(self.arr()?.view.nelem())
    }
    #[getter]
    fn dtype<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        if let Some(p) = self.parts() {
            return py::dtype_obj(py, p.whole.dtype());
        }
        py::dtype_obj(py, self.arr()?.dtype())
    }
    #[getter]
    fn itemsize(&self) -> PyResult<usize> {
        Ok(self.arr()?.dtype().size())
    }
    #[getter]
    fn nbytes(&self) -> PyResult<usize> {
        let a = self.arr()?;
        Ok(a.view.nelem() * a.dtype().size())
    }
    #[getter]
    fn strides<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let sz = self.arr()?.dtype().size() as isize;
        PyTuple::new(py, self.arr()?.view.strides.iter().map(|s| s * sz))
    }
    /// `a.strides = ...`, with NumPy's checks: one stride per axis, and every element
    /// of the new view inside the base's memory ("strides is not compatible with
    /// available memory"). NumPy 2.4 deprecates it (use `as_strided`), and so warns here.
    /// Hassium's views step by whole elements, so a byte stride that is not a multiple of
    /// the item size is refused with its own message.
    #[setter(strides)]
    fn set_strides(&mut self, py: Python<'_>, strides: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let strides =
            strides.ok_or_else(|| PyAttributeError::new_err("Cannot delete array strides"))?;
        PyErr::warn(
            py,
            &py.get_type::<pyo3::exceptions::PyDeprecationWarning>(),
            c"Setting the strides on a NumPy array has been deprecated in NumPy 2.4.\nAs an alternative, you can create a new view using np.lib.stride_tricks.as_strided.",
            1,
        )?;
        let bytes: Vec<isize> = strides.extract()?;
        let view = self.arr()?.view.clone();
        if bytes.len() != view.ndim() {
            return Err(PyValueError::new_err(format!(
                "strides must be  same length as shape ({})", // NumPy's two spaces
                view.ndim()
            )));
        }
        let size = self.arr()?.dtype().size() as isize;
        if bytes.iter().any(|b| b % size != 0) {
            return Err(PyValueError::new_err(format!(
                "hassium: strides must be multiples of the item size ({size} bytes); hassium's \
                 views step by whole elements"
            )));
        }
        let elems: Vec<isize> = bytes.iter().map(|b| b / size).collect();
        let base_len =
            crate::rt::with_rt(|rt| Ok(rt.base(view.base).map_or(0, |b| b.nelem as isize)))?;
        // The lowest and highest element the new view reaches, relative to its offset.
        let (mut lo, mut hi) = (0isize, 0isize);
        let empty = view.shape.contains(&0);
        for (&n, &s) in view.shape.iter().zip(&elems) {
            let far = (n as isize - 1).saturating_mul(s);
            lo = lo.saturating_add(far.min(0));
            hi = hi.saturating_add(far.max(0));
        }
        let offset = view.offset;
        if !empty && (offset + lo < 0 || offset.saturating_add(hi) >= base_len) {
            return Err(PyValueError::new_err(
                "strides is not compatible with available memory",
            ));
        }
        self.arr_mut()?.view.strides = elems.into();
        Ok(())
    }
    #[getter(T)]
    fn t(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        let v = slf.borrow().arr()?.view.reversed_axes();
        wrap_view(slf, v)
    }
    #[getter]
    fn flags(slf: &Bound<'_, Self>) -> PyResult<Flags> {
        let me = slf.borrow();
        let v = &me.arr()?.view;
        // An empty array is contiguous both ways whatever its strides, as in NumPy.
        let empty = v.is_empty();
        Ok(Flags {
            array: slf.clone().unbind(),
            c_contiguous: empty || v.is_contiguous(),
            f_contiguous: empty || v.reversed_axes().is_contiguous(),
            owndata: me.parent.is_none(),
        })
    }
    /// `a.setflags(write=...)`: see `set_writeable`. Hassium arrays are always aligned
    /// (`align` changes nothing) and never WRITEBACKIFCOPY (`uic=True` is NumPy's error).
    #[pyo3(signature = (write=None, align=None, uic=None))]
    fn setflags(
        slf: &Bound<'_, Self>,
        write: Option<&Bound<'_, PyAny>>,
        align: Option<&Bound<'_, PyAny>>,
        uic: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let _ = align;
        if let Some(u) = uic {
            if u.is_truthy()? {
                return Err(PyValueError::new_err(
                    "cannot set WRITEBACKIFCOPY flag to True",
                ));
            }
        }
        match write {
            Some(w) => set_writeable(slf, w.is_truthy()?),
            None => Ok(()),
        }
    }
    #[getter]
    fn base(&self, py: Python<'_>) -> Option<PyObject> {
        self.parent.as_ref().map(|p| p.clone_ref(py))
    }
    #[getter]
    fn real(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        let a = arr_of(slf)?;
        if a.dtype().is_complex() {
            unary(slf, Opcode::Real)
        } else {
            wrap_view(slf, a.view.clone())
        }
    }
    #[getter]
    fn imag(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        let a = arr_of(slf)?;
        if a.dtype().is_complex() {
            unary(slf, Opcode::Imag)
        } else {
            wrap(
                slf.py(),
                ops::full(
                    a.shape(),
                    hassium_core::Scalar::zero(a.dtype()).into(),
                    a.dtype(),
                )?,
            )
        }
    }
    /// NumPy's other methods and attributes (`sort`, `take`, `flat`, ...), from the
    /// package's `_methods`; reached only when normal lookup fails.
    fn __getattr__(slf: &Bound<'_, Self>, name: &Bound<'_, PyString>) -> PyResult<PyObject> {
        let py = slf.py();
        if name.to_str()?.starts_with("__") {
            return Err(PyAttributeError::new_err(format!(
                "'hassium.ndarray' object has no attribute '{name}'"
            )));
        }
        let methods = PyModule::import(py, pyo3::intern!(py, "hassium._methods"))?;
        Ok(methods
            .getattr(pyo3::intern!(py, "attribute"))?
            .call1((slf, name))?
            .unbind())
    }
}
