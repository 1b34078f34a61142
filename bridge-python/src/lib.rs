//! `hassium._hassium`: the Hassium array type and the recorder, as a Python extension.
//!
//! Everything on the hot path of recording an operation lives here, in Rust: promotion,
//! broadcasting, view arithmetic, verification and recording. The `hassium` package
//! builds NumPy's namespace on these primitives; `docs/python-bridge.md` is the contract
//! between the two halves.

mod array;
mod convert;
mod index;
mod ops;
mod py;
mod rt;
mod types;

use array::{wrap, PyNdArray};
use convert::{to_arg, to_arr};
use hassium_core::DType;
use ops::{Arg, Dest, Weak};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use rt::{with_existing_rt, with_rt};

/// A shape argument: an int or a sequence of ints.
fn shape_arg(obj: &Bound<'_, PyAny>) -> PyResult<Vec<usize>> {
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

/// NumPy's ufuncs Hassium has as opcodes, from the opcode table: `(name, nin, aliases)`
/// in opcode order. `hassium` makes its ufunc objects from this list.
#[pyfunction]
fn ufuncs() -> Vec<(&'static str, usize, Vec<&'static str>)> {
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
fn ufunc(
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
    let args: Vec<Arg> = inputs.iter().map(|i| to_arg(&i)).collect::<PyResult<_>>()?;
    let out = array::opt_out(out)?;
    let dest = Dest {
        out: out.as_ref(),
        casting,
    };
    let r = ops::elementwise(py, op, &args, &dest, py::opt_dtype(dtype)?)?;
    wrap(py, r)
}

/// `np.<name>.reduce` (and argmin/argmax) with NumPy's axis/dtype/keepdims/initial rules.
#[pyfunction]
#[pyo3(signature = (name, a, axis=None, dtype=None, out=None, keepdims=false, initial=None))]
#[allow(clippy::too_many_arguments)]
fn reduce(
    py: Python<'_>,
    name: &str,
    a: &Bound<'_, PyAny>,
    axis: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    out: Option<&Bound<'_, PyAny>>,
    keepdims: bool,
    initial: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyObject> {
    let a = to_arr(a, None)?;
    wrap(
        py,
        array::reduce_any(py, &a, name, axis, dtype, out, keepdims, initial)?,
    )
}

/// `np.<name>.accumulate` along one axis (None: the flattened array).
#[pyfunction]
#[pyo3(signature = (name, a, axis=Some(0), dtype=None, out=None))]
fn accumulate(
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
#[pyo3(signature = (shape, dtype=None))]
fn empty(
    py: Python<'_>,
    shape: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyObject> {
    let d = py::opt_dtype(dtype)?.unwrap_or(DType::Float64);
    wrap(py, ops::empty(&shape_arg(shape)?, d)?)
}

#[pyfunction]
#[pyo3(signature = (shape, value, dtype=None))]
fn full(
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
fn arange(
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
fn asarray(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    copy: Option<bool>,
) -> PyResult<PyObject> {
    let d = py::opt_dtype(dtype)?;
    if let Ok(a) = obj.downcast::<PyNdArray>() {
        let arr = a.borrow().arr.clone();
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
fn random_bits(
    py: Python<'_>,
    shape: &Bound<'_, PyAny>,
    seed: u64,
    stream: u64,
) -> PyResult<PyObject> {
    wrap(py, ops::random_bits(&shape_arg(shape)?, seed, stream)?)
}

/// `np.copyto(dst, src, casting)`: broadcasting assignment (copies when views overlap).
#[pyfunction]
#[pyo3(signature = (dst, src, casting="same_kind"))]
fn copyto(
    py: Python<'_>,
    dst: &Bound<'_, PyNdArray>,
    src: &Bound<'_, PyAny>,
    casting: &str,
) -> PyResult<()> {
    let d = dst.borrow().arr.clone();
    ops::assign(py, &d, &to_arg(src)?, casting)
}

/// `np.broadcast_to(a, shape)`: a read-only view (the caller checks the shapes).
#[pyfunction]
fn broadcast_to(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    shape: &Bound<'_, PyAny>,
) -> PyResult<PyObject> {
    let shape = shape_arg(shape)?;
    view_of(py, a, |a| array::broadcast_to(a, &shape))
}

/// `f` applied to `a` as a Hassium array: `a` itself, or an array made from it (a NumPy
/// array, a list), which the view `f` makes then keeps alive as its parent.
fn view_of(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    f: impl FnOnce(&Bound<'_, PyNdArray>) -> PyResult<PyObject>,
) -> PyResult<PyObject> {
    match a.downcast::<PyNdArray>() {
        Ok(a) => f(a),
        Err(_) => {
            let owner = wrap(py, to_arr(a, None)?)?;
            f(owner.bind(py).downcast::<PyNdArray>()?)
        }
    }
}

/// `a.diagonal(offset, axis1, axis2)` as NumPy's read-only view (axes normalised).
#[pyfunction]
fn diagonal(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    offset: isize,
    axis1: usize,
    axis2: usize,
) -> PyResult<PyObject> {
    view_of(py, a, |a| array::diagonal(a, offset, axis1, axis2))
}

/// `a.flat[flat_index]` as a new array (a gather on the flattened array).
#[pyfunction]
fn take_flat(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    flat_index: &Bound<'_, PyAny>,
) -> PyResult<PyObject> {
    let a = to_arr(a, None)?;
    let n = a.view.nelem();
    let flat = ops::reshape(&ops::contiguous(&a)?, &[n])?;
    let idx = array::flat_index(flat_index, n)?;
    wrap(py, ops::gather(&flat.view, &idx.view)?)
}

/// `a.flat[flat_index] = values` (`np.add.at` with `accumulate=True`).
#[pyfunction]
#[pyo3(signature = (a, flat_index, values, accumulate=false))]
fn put_flat(
    py: Python<'_>,
    a: &Bound<'_, PyNdArray>,
    flat_index: &Bound<'_, PyAny>,
    values: &Bound<'_, PyAny>,
    accumulate: bool,
) -> PyResult<()> {
    let target = a.borrow().arr.clone();
    let n = target.view.nelem();
    let idx = array::flat_index(flat_index, n)?;
    let vals = to_arg(values)?;
    if let Some(flat) = target.view.reshape(&[n]) {
        return ops::scatter(&target.with_view(flat), &idx.view, &vals, accumulate);
    }
    // A non-contiguous target: scatter into a contiguous copy, then copy back.
    let c = ops::cast_copy(&target, target.dtype())?;
    let flat = c
        .view
        .reshape(&[n])
        .expect("a fresh contiguous copy reshapes");
    ops::scatter(&c.with_view(flat), &idx.view, &vals, accumulate)?;
    ops::assign(py, &target, &Arg::Array(c), "unsafe")
}

#[pyfunction]
#[pyo3(signature = (a, b, out=None))]
fn matmul(
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
fn where_(
    py: Python<'_>,
    cond: &Bound<'_, PyAny>,
    x: &Bound<'_, PyAny>,
    y: &Bound<'_, PyAny>,
) -> PyResult<PyObject> {
    let c = to_arg(cond)?;
    wrap(py, ops::where_(py, &c, &to_arg(x)?, &to_arg(y)?)?)
}

#[pyfunction]
fn nonzero(py: Python<'_>, a: &Bound<'_, PyAny>) -> PyResult<PyObject> {
    array::nonzero(py, &to_arr(a, None)?)
}

#[pyfunction]
#[pyo3(signature = (a, decimals=0))]
fn round(py: Python<'_>, a: &Bound<'_, PyAny>, decimals: i32) -> PyResult<PyObject> {
    wrap(py, array::round(py, &to_arr(a, None)?, decimals)?)
}

/// Runs everything recorded so far down the stack.
#[pyfunction]
fn flush() -> PyResult<()> {
    ops::flush()
}

fn json_to_py(py: Python<'_>, text: &str) -> PyResult<PyObject> {
    Ok(PyModule::import(py, "json")?
        .call_method1("loads", (text,))?
        .unbind())
}

/// The runtime's counters (instructions, flushes, kernels, caches, times, bytes).
#[pyfunction]
fn stats(py: Python<'_>) -> PyResult<PyObject> {
    let text = with_rt(|rt| {
        let mut v =
            serde_json::to_value(rt.stats()).map_err(|e| PyValueError::new_err(e.to_string()))?;
        if let Some(o) = v.as_object_mut() {
            let s = rt.stats();
            o.insert("fuse_cache_hit_rate".into(), s.fuse_cache_hit_rate().into());
            o.insert("gbps".into(), s.gbps().into());
            o.insert("queued".into(), rt.queued().into());
        }
        Ok(v.to_string())
    })?;
    json_to_py(py, &text)
}

/// The configuration in force: its source, the stack in force, every stack and engine
/// (and whether each engine's library is found), and the cache directories (see
/// `hassium_vem::info`).
#[pyfunction]
fn info(py: Python<'_>) -> PyResult<PyObject> {
    let err = |e: hassium_vem::Error| pyo3::exceptions::PyRuntimeError::new_err(e.to_string());
    let report = match with_existing_rt(|rt| hassium_vem::info(Some(rt))) {
        Some(r) => r,
        None => hassium_vem::info(None),
    }
    .map_err(err)?;
    json_to_py(py, &report.to_string())
}

/// The stacks whose engine libraries can be found (so `HASSIUM_STACK=name` would work).
#[pyfunction]
fn stacks() -> PyResult<Vec<String>> {
    hassium_vem::available_stacks()
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))
}

/// Registers the package's `__array_ufunc__` and `__array_function__` implementations.
#[pyfunction]
#[pyo3(name = "_set_dispatch")]
fn set_dispatch(array_ufunc: PyObject, array_function: PyObject) {
    array::set_dispatch(array_ufunc, array_function);
}

/// The loop dtype and output dtype NumPy would use for ufunc `name` on `dtypes` (for
/// tests against `ufunc.resolve_dtypes`); raises like the ufunc would.
#[pyfunction]
#[pyo3(name = "_resolve")]
fn resolve(
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
    let l = types::resolve_loop(op, t).map_err(|e| match e {
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
fn can_cast(from: &Bound<'_, PyAny>, to: &Bound<'_, PyAny>, casting: &str) -> PyResult<bool> {
    types::can_cast(py::to_dtype(from)?, py::to_dtype(to)?, casting)
        .ok_or_else(|| PyValueError::new_err(format!("unknown casting rule '{casting}'")))
}

/// Registered with `atexit`: flushes what is pending and prints the statistics when
/// `HASSIUM_STATS=1`.
#[pyfunction]
#[pyo3(name = "_atexit")]
fn at_exit() {
    let show = std::env::var_os("HASSIUM_STATS").is_some_and(|v| v != "0" && !v.is_empty());
    let _ = with_existing_rt(|rt| {
        if let Err(e) = rt.flush() {
            eprintln!("hassium: flush at exit failed: {e}");
        }
        if show {
            eprintln!("{}", rt.stats());
        }
    });
}

#[pymodule]
fn _hassium(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<PyNdArray>()?;
    m.add_class::<array::Flags>()?;
    m.add("UnsupportedError", py.get_type::<py::UnsupportedError>())?;
    m.add_function(wrap_pyfunction!(ufunc, m)?)?;
    m.add_function(wrap_pyfunction!(ufuncs, m)?)?;
    m.add_function(wrap_pyfunction!(reduce, m)?)?;
    m.add_function(wrap_pyfunction!(accumulate, m)?)?;
    m.add_function(wrap_pyfunction!(empty, m)?)?;
    m.add_function(wrap_pyfunction!(full, m)?)?;
    m.add_function(wrap_pyfunction!(arange, m)?)?;
    m.add_function(wrap_pyfunction!(asarray, m)?)?;
    m.add_function(wrap_pyfunction!(random_bits, m)?)?;
    m.add_function(wrap_pyfunction!(copyto, m)?)?;
    m.add_function(wrap_pyfunction!(broadcast_to, m)?)?;
    m.add_function(wrap_pyfunction!(diagonal, m)?)?;
    m.add_function(wrap_pyfunction!(take_flat, m)?)?;
    m.add_function(wrap_pyfunction!(put_flat, m)?)?;
    m.add_function(wrap_pyfunction!(matmul, m)?)?;
    m.add_function(wrap_pyfunction!(where_, m)?)?;
    m.add_function(wrap_pyfunction!(nonzero, m)?)?;
    m.add_function(wrap_pyfunction!(round, m)?)?;
    m.add_function(wrap_pyfunction!(flush, m)?)?;
    m.add_function(wrap_pyfunction!(stats, m)?)?;
    m.add_function(wrap_pyfunction!(info, m)?)?;
    m.add_function(wrap_pyfunction!(stacks, m)?)?;
    m.add_function(wrap_pyfunction!(set_dispatch, m)?)?;
    m.add_function(wrap_pyfunction!(resolve, m)?)?;
    m.add_function(wrap_pyfunction!(can_cast, m)?)?;
    m.add_function(wrap_pyfunction!(at_exit, m)?)?;
    PyModule::import(py, "atexit")?.call_method1("register", (m.getattr("_atexit")?,))?;
    Ok(())
}
