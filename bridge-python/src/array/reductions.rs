//! Reductions and scans (`sum` ... `cumprod`) and the `axis=` / `out=` arguments they
//! share with the module's `reduce` and `accumulate`.

use super::{selection, wrap, PyNdArray};
use crate::convert::to_arg;
use crate::ops::{self, Arg, ReduceSpec, Weak};
use crate::py::{self, UnsupportedError};
use crate::rt::{Arr, Write};
use hassium_core::DType;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

/// NumPy's `axis=` argument: None, an int or a tuple of ints, normalised.
pub fn parse_axes(axis: Option<&Bound<'_, PyAny>>, ndim: usize) -> PyResult<Option<Vec<usize>>> {
    let Some(axis) = axis.filter(|a| !a.is_none()) else {
        return Ok(None);
    };
    let raw: Vec<isize> = if let Ok(t) = axis.downcast::<PyTuple>() {
        t.iter().map(|x| x.extract()).collect::<PyResult<_>>()?
    } else {
        // An int too big for `isize` keeps its OverflowError, as in NumPy.
        vec![axis.extract().map_err(|e: PyErr| {
            if e.is_instance_of::<pyo3::exceptions::PyOverflowError>(axis.py()) {
                e
            } else {
                PyTypeError::new_err("an integer is required for the axis")
            }
        })?]
    };
    // Every axis is checked against the dimensions before any repeat, as NumPy does:
    // `axis=(0, 0, 1)` of a 1-d array is its AxisError.
    let n = ndim as isize;
    let out = (raw.iter())
        .map(|&a| {
            let b = if a < 0 { a + n } else { a };
            if b < 0 || b >= n {
                return Err(py::axis_error(&format!(
                    "axis {a} is out of bounds for array of dimension {ndim}"
                )));
            }
            Ok(b as usize)
        })
        .collect::<PyResult<Vec<usize>>>()?;
    if (1..out.len()).any(|i| out[..i].contains(&out[i])) {
        return Err(PyValueError::new_err("duplicate value in 'axis'"));
    }
    Ok(Some(out))
}

/// `parse_axes` for ufunc reductions and scans, which NumPy lets name axis 0 or -1 of a
/// 0-d array as a plain integer (a legacy rule it keeps): that reduces over nothing.
pub(super) fn parse_reduce_axes(
    axis: Option<&Bound<'_, PyAny>>,
    ndim: usize,
) -> PyResult<Option<Vec<usize>>> {
    if ndim == 0 {
        if let Some(x) = axis.filter(|a| !a.is_none() && !a.is_instance_of::<PyTuple>()) {
            if matches!(x.extract::<isize>(), Ok(0 | -1)) {
                return Ok(Some(Vec::new()));
            }
        }
    }
    parse_axes(axis, ndim)
}

pub(super) fn opt_weak(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Weak>> {
    match obj.filter(|o| !o.is_none()) {
        None => Ok(None),
        Some(o) => match to_arg(o)? {
            Arg::Weak(w) => Ok(Some(w)),
            Arg::Typed(s) => Ok(Some(scalar_weak(s))),
            Arg::Array(_) => Err(UnsupportedError::new_err(
                "hassium takes only scalar initial values",
            )),
        },
    }
}

fn scalar_weak(s: hassium_core::Scalar) -> Weak {
    match s.as_i128() {
        Some(i) if s.dtype() == DType::Bool => Weak::Bool(i != 0),
        Some(i) => Weak::Int(i),
        None if s.dtype().is_complex() => {
            let (r, i) = s.as_c128();
            Weak::Complex(r, i)
        }
        None => Weak::Float(s.as_f64()),
    }
}

/// The array an `out=` argument names (a hassium array, alone or in a 1-tuple), which
/// must be writeable.
pub fn opt_out(out: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Arr>> {
    match out.filter(|o| !o.is_none()) {
        None => Ok(None),
        Some(o) => {
            let o = if let Ok(t) = o.downcast::<PyTuple>() {
                if t.len() != 1 {
                    return Err(PyValueError::new_err("out must be a single array"));
                }
                t.get_item(0)?
            } else {
                o.clone()
            };
            match o.downcast::<PyNdArray>() {
                Ok(a) => {
                    let a = a.borrow().arr()?.clone();
                    a.check_writeable(Write::Output)?;
                    Ok(Some(a))
                }
                Err(_) => Err(UnsupportedError::new_err("out= must be a hassium array")),
            }
        }
    }
}

fn no_where(where_: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
    match where_ {
        Some(w) if !w.is_none() && !w.is_exact_instance_of::<pyo3::types::PyBool>() => Err(
            UnsupportedError::new_err("hassium does not support where= in reductions"),
        ),
        Some(w) if w.is_exact_instance_of::<pyo3::types::PyBool>() && !w.extract::<bool>()? => Err(
            UnsupportedError::new_err("hassium does not support where=False"),
        ),
        _ => Ok(()),
    }
}

/// Reduction entry point shared by the methods and the module's `reduce`.
#[allow(clippy::too_many_arguments)]
pub fn reduce_any(
    py: Python<'_>,
    a: &Arr,
    name: &str,
    axis: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    out: Option<&Bound<'_, PyAny>>,
    keepdims: bool,
    initial: Option<&Bound<'_, PyAny>>,
) -> PyResult<Arr> {
    let arg = matches!(name, "argmin" | "argmax");
    if arg && axis.is_some_and(|x| x.is_instance_of::<PyTuple>()) {
        return Err(PyTypeError::new_err(
            "'tuple' object cannot be interpreted as an integer",
        ));
    }
    let mut a = a.clone();
    let mut axes = parse_reduce_axes(axis, a.view.ndim())?;
    if arg && a.view.ndim() == 0 {
        axes = None; // argmin/argmax of a 0-d array along 0 or -1: of its one element
    }
    // argmin/argmax without an axis index the flattened array; `keepdims` then gives
    // the result one length-1 dimension per dimension of `a` (none for a 0-d array).
    let mut kept = None;
    if arg {
        if axes.as_ref().is_some_and(|x| x.len() != 1) {
            return Err(PyTypeError::new_err(
                "'tuple' object cannot be interpreted as an integer",
            ));
        }
        if axes.is_none() {
            kept = keepdims.then(|| vec![1; a.view.ndim()]);
            let n = a.view.nelem();
            a = ops::reshape(&a, &[n])?;
            axes = Some(vec![0]);
        }
    }
    let spec = ReduceSpec {
        name,
        axes,
        dtype: py::opt_dtype(dtype)?,
        keepdims: keepdims && kept.is_none(),
        initial: opt_weak(initial)?,
    };
    let out = opt_out(out)?;
    let Some(shape) = kept else {
        return ops::reduce(py, &a, &spec, out.as_ref());
    };
    match out {
        // The flat reduction's one element, written through a 0-d view of `out`.
        Some(o) => {
            if o.view.shape.as_ref() != shape.as_slice() {
                return Err(PyValueError::new_err(format!(
                    "output array does not match result of np.{name}."
                )));
            }
            ops::reduce(py, &a, &spec, Some(&ops::reshape(&o, &[])?))?;
            Ok(o)
        }
        None => ops::reshape(&ops::reduce(py, &a, &spec, None)?, &shape),
    }
}

/// What a method with `out=` returns: `out` itself, as NumPy does, or the result.
fn out_or(py: Python<'_>, r: Arr, out: Option<&Bound<'_, PyAny>>) -> PyResult<PyObject> {
    match out.filter(|o| !o.is_none()) {
        Some(o) => Ok(o.clone().unbind()),
        None => wrap(py, r),
    }
}

/// The `out=` of an array method, which NumPy takes as an array only (a ufunc's
/// `reduce` also takes it in a 1-tuple); `message` is NumPy's TypeError otherwise.
fn method_out<'a, 'py>(
    out: Option<&'a Bound<'py, PyAny>>,
    message: &str,
) -> PyResult<Option<&'a Bound<'py, PyAny>>> {
    match out.filter(|o| !o.is_none()) {
        Some(o) if o.is_instance_of::<PyTuple>() => Err(PyTypeError::new_err(message.to_owned())),
        o => Ok(o),
    }
}

/// NumPy's TypeError for an `out=` tuple given to a reduction method.
const REDUCE_OUT: &str = "return arrays must be of ArrayType";
/// NumPy's TypeError for an `out=` tuple given to `argmin`, `argmax` or a scan method.
const INDEX_OUT: &str = "output must be an array";

/// Calls `hassium._reductions.<name>(a, *args, **kwargs)`.
fn moment(
    a: &Bound<'_, PyNdArray>,
    name: &str,
    args: &Bound<'_, PyTuple>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<PyObject> {
    let py = a.py();
    let f = PyModule::import(py, "hassium._reductions")?.getattr(name)?;
    let mut all = vec![a.clone().into_any()];
    all.extend(args.iter());
    Ok(f.call(PyTuple::new(py, all)?, kwargs)?.unbind())
}

/// Copies `r` into `out=` (when given) and returns what NumPy would.
/// `r`, or `r` copied into `out` and `out` itself returned (the same object, as NumPy).
pub(super) fn finish_out(
    py: Python<'_>,
    r: Arr,
    out: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyObject> {
    match opt_out(out)? {
        Some(o) => {
            ops::assign(py, &o, &Arg::Array(r), "unsafe")?;
            let out = out.expect("opt_out found an array");
            Ok(match out.downcast::<PyTuple>() {
                Ok(t) => t.get_item(0)?.unbind(),
                Err(_) => out.clone().unbind(),
            })
        }
        None => wrap(py, r),
    }
}

pub fn accumulate_any(
    py: Python<'_>,
    a: &Arr,
    name: &str,
    axis: Option<isize>,
    dtype: Option<&Bound<'_, PyAny>>,
    out: Option<&Bound<'_, PyAny>>,
) -> PyResult<Arr> {
    // A 0-d array scanned along 0 or -1 is scanned as the 1-element array, as NumPy does.
    let axis = axis.filter(|&x| !(a.view.ndim() == 0 && (x == 0 || x == -1)));
    let (a, ax) = match axis {
        None => (ops::reshape(a, &[a.view.nelem()])?, 0),
        Some(x) => {
            let nd = a.view.ndim() as isize;
            let y = if x < 0 { x + nd } else { x };
            if y < 0 || y >= nd {
                return Err(py::axis_error(&format!(
                    "axis {x} is out of bounds for array of dimension {nd}"
                )));
            }
            (a.clone(), y as usize)
        }
    };
    ops::accumulate(
        py,
        &a,
        name,
        ax,
        py::opt_dtype(dtype)?,
        opt_out(out)?.as_ref(),
    )
}

#[pymethods]
// NumPy's reduction signatures have this many arguments.
#[allow(clippy::too_many_arguments)]
impl PyNdArray {
    #[pyo3(signature = (axis=None, dtype=None, out=None, keepdims=false, initial=None, r#where=None))]
    fn sum(
        &self,
        py: Python<'_>,
        axis: Option<&Bound<'_, PyAny>>,
        dtype: Option<&Bound<'_, PyAny>>,
        out: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
        initial: Option<&Bound<'_, PyAny>>,
        r#where: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyObject> {
        let out = method_out(out, REDUCE_OUT)?;
        no_where(r#where)?;
        if let Some(p) = self.parts() {
            if let Some(r) = selection::reduce(py, &p, "add", axis, dtype, out, keepdims, initial)?
            {
                return wrap(py, r);
            }
        }
        out_or(
            py,
            reduce_any(py, self.arr()?, "add", axis, dtype, out, keepdims, initial)?,
            out,
        )
    }
    #[pyo3(signature = (axis=None, dtype=None, out=None, keepdims=false, initial=None, r#where=None))]
    fn prod(
        &self,
        py: Python<'_>,
        axis: Option<&Bound<'_, PyAny>>,
        dtype: Option<&Bound<'_, PyAny>>,
        out: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
        initial: Option<&Bound<'_, PyAny>>,
        r#where: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyObject> {
        let out = method_out(out, REDUCE_OUT)?;
        no_where(r#where)?;
        if let Some(p) = self.parts() {
            if let Some(r) =
                selection::reduce(py, &p, "multiply", axis, dtype, out, keepdims, initial)?
            {
                return wrap(py, r);
            }
        }
        out_or(
            py,
            reduce_any(
                py,
                self.arr()?,
                "multiply",
                axis,
                dtype,
                out,
                keepdims,
                initial,
            )?,
            out,
        )
    }
    #[pyo3(signature = (axis=None, out=None, keepdims=false, initial=None, r#where=None))]
    fn min(
        &self,
        py: Python<'_>,
        axis: Option<&Bound<'_, PyAny>>,
        out: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
        initial: Option<&Bound<'_, PyAny>>,
        r#where: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyObject> {
        let out = method_out(out, REDUCE_OUT)?;
        no_where(r#where)?;
        out_or(
            py,
            reduce_any(
                py,
                self.arr()?,
                "minimum",
                axis,
                None,
                out,
                keepdims,
                initial,
            )?,
            out,
        )
    }
    #[pyo3(signature = (axis=None, out=None, keepdims=false, initial=None, r#where=None))]
    fn max(
        &self,
        py: Python<'_>,
        axis: Option<&Bound<'_, PyAny>>,
        out: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
        initial: Option<&Bound<'_, PyAny>>,
        r#where: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyObject> {
        let out = method_out(out, REDUCE_OUT)?;
        no_where(r#where)?;
        out_or(
            py,
            reduce_any(
                py,
                self.arr()?,
                "maximum",
                axis,
                None,
                out,
                keepdims,
                initial,
            )?,
            out,
        )
    }
    #[pyo3(signature = (axis=None, out=None, keepdims=false, r#where=None))]
    fn any(
        &self,
        py: Python<'_>,
        axis: Option<&Bound<'_, PyAny>>,
        out: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
        r#where: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyObject> {
        let out = method_out(out, REDUCE_OUT)?;
        no_where(r#where)?;
        if let Some(p) = self.parts() {
            if let Some(r) =
                selection::reduce(py, &p, "logical_or", axis, None, out, keepdims, None)?
            {
                return wrap(py, r);
            }
        }
        out_or(
            py,
            reduce_any(
                py,
                self.arr()?,
                "logical_or",
                axis,
                None,
                out,
                keepdims,
                None,
            )?,
            out,
        )
    }
    #[pyo3(signature = (axis=None, out=None, keepdims=false, r#where=None))]
    fn all(
        &self,
        py: Python<'_>,
        axis: Option<&Bound<'_, PyAny>>,
        out: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
        r#where: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyObject> {
        let out = method_out(out, REDUCE_OUT)?;
        no_where(r#where)?;
        if let Some(p) = self.parts() {
            if let Some(r) =
                selection::reduce(py, &p, "logical_and", axis, None, out, keepdims, None)?
            {
                return wrap(py, r);
            }
        }
        out_or(
            py,
            reduce_any(
                py,
                self.arr()?,
                "logical_and",
                axis,
                None,
                out,
                keepdims,
                None,
            )?,
            out,
        )
    }
    #[pyo3(signature = (axis=None, out=None, *, keepdims=false))]
    fn argmin(
        &self,
        py: Python<'_>,
        axis: Option<&Bound<'_, PyAny>>,
        out: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
    ) -> PyResult<PyObject> {
        let out = method_out(out, INDEX_OUT)?;
        out_or(
            py,
            reduce_any(py, self.arr()?, "argmin", axis, None, out, keepdims, None)?,
            out,
        )
    }
    #[pyo3(signature = (axis=None, out=None, *, keepdims=false))]
    fn argmax(
        &self,
        py: Python<'_>,
        axis: Option<&Bound<'_, PyAny>>,
        out: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
    ) -> PyResult<PyObject> {
        let out = method_out(out, INDEX_OUT)?;
        out_or(
            py,
            reduce_any(py, self.arr()?, "argmax", axis, None, out, keepdims, None)?,
            out,
        )
    }
    /// `a.mean()`, `a.var()`, `a.std()` are the module's functions, as NumPy's are: one
    /// implementation, with its accumulator types, `where=` and warnings.
    #[pyo3(signature = (*args, **kwargs))]
    fn mean(
        slf: &Bound<'_, Self>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyObject> {
        moment(slf, "mean", args, kwargs)
    }
    #[pyo3(signature = (*args, **kwargs))]
    fn var(
        slf: &Bound<'_, Self>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyObject> {
        moment(slf, "var", args, kwargs)
    }
    #[pyo3(signature = (*args, **kwargs))]
    fn std(
        slf: &Bound<'_, Self>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyObject> {
        moment(slf, "std", args, kwargs)
    }
    #[pyo3(signature = (axis=None, dtype=None, out=None))]
    fn cumsum(
        &self,
        py: Python<'_>,
        axis: Option<isize>,
        dtype: Option<&Bound<'_, PyAny>>,
        out: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyObject> {
        let out = method_out(out, INDEX_OUT)?;
        out_or(
            py,
            accumulate_any(py, self.arr()?, "add", axis, dtype, out)?,
            out,
        )
    }
    #[pyo3(signature = (axis=None, dtype=None, out=None))]
    fn cumprod(
        &self,
        py: Python<'_>,
        axis: Option<isize>,
        dtype: Option<&Bound<'_, PyAny>>,
        out: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyObject> {
        let out = method_out(out, INDEX_OUT)?;
        out_or(
            py,
            accumulate_any(py, self.arr()?, "multiply", axis, dtype, out)?,
            out,
        )
    }
}
