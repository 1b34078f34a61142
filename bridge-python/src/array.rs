//! The Hassium array type: a view of a base plus shared ownership of the base.

use crate::convert::{host_int64, to_arg, to_arr};
use crate::index::{self, IndexArray, Item};
use crate::ops::{self, Arg, Dest, ReduceSpec, Weak};
use crate::py::{self, UnsupportedError};
use crate::rt::{with_rt, Arr, OrPy, Write};
use crate::types::int_fits;
use hassium_core::{BaseId, DType, Opcode, View};
use pyo3::exceptions::{
    PyAttributeError, PyBufferError, PyIndexError, PyKeyError, PyRuntimeError, PyTypeError,
    PyValueError,
};
use pyo3::prelude::*;
use pyo3::pyclass::CompareOp;
use pyo3::types::{PyBytes, PyDict, PyEllipsis, PyList, PySlice, PyString, PyTuple};
use std::ffi::{c_int, CStr};

/// A Hassium array. Not an `np.ndarray` subclass: NumPy sees it through the buffer
/// protocol, `__array__`, `__array_ufunc__` and `__array_function__`.
#[pyclass(name = "ndarray", module = "hassium", weakref)]
pub struct PyNdArray {
    pub arr: Arr,
    /// The array this one is a view of (NumPy's `.base`), None for owners.
    pub parent: Option<Py<PyAny>>,
}

/// Python callables the package registers: `__array_ufunc__` and `__array_function__`
/// are forwarded to them, since the package owns the namespace.
static DISPATCH: pyo3::sync::GILOnceCell<(Py<PyAny>, Py<PyAny>)> = pyo3::sync::GILOnceCell::new();
static DISPATCH_SET: parking_lot::Mutex<Option<(Py<PyAny>, Py<PyAny>)>> =
    parking_lot::Mutex::new(None);

pub fn set_dispatch(ufunc: Py<PyAny>, function: Py<PyAny>) {
    *DISPATCH_SET.lock() = Some((ufunc, function));
}

fn dispatch(py: Python<'_>) -> Option<(Py<PyAny>, Py<PyAny>)> {
    let _ = &DISPATCH;
    DISPATCH_SET
        .lock()
        .as_ref()
        .map(|(a, b)| (a.clone_ref(py), b.clone_ref(py)))
}

/// Wraps an array result as a new Python object.
pub fn wrap(py: Python<'_>, arr: Arr) -> PyResult<PyObject> {
    Ok(Py::new(py, PyNdArray { arr, parent: None })?.into_any())
}

/// The element at a 0-d `view` of `slf`'s base as a NumPy scalar: what NumPy returns when
/// integers alone index every dimension (`x[3]`, `m[i, j]`, `z[()]`). Reading the value
/// needs it computed, so this syncs the base.
fn scalar_at(slf: &Bound<'_, PyNdArray>, view: View) -> PyResult<PyObject> {
    let py = slf.py();
    let element = to_numpy_arr(py, &arr_of(slf).with_view(view))?;
    Ok(element.get_item(PyTuple::empty(py))?.unbind())
}

/// Wraps a view of `slf`'s base, recording `slf` (or its own base object) as `.base`.
fn wrap_view(slf: &Bound<'_, PyNdArray>, view: View) -> PyResult<PyObject> {
    let py = slf.py();
    let me = slf.borrow();
    let parent = match &me.parent {
        Some(p) => p.clone_ref(py),
        None => slf.clone().into_any().unbind(),
    };
    Ok(Py::new(
        py,
        PyNdArray {
            arr: me.arr.with_view(view),
            parent: Some(parent),
        },
    )?
    .into_any())
}

/// A read-only view of `slf` (NumPy's `broadcast_to` and `diagonal` give these).
fn wrap_read_only_view(slf: &Bound<'_, PyNdArray>, view: View) -> PyResult<PyObject> {
    let b = wrap_view(slf, view)?;
    b.bind(slf.py())
        .downcast::<PyNdArray>()?
        .borrow_mut()
        .arr
        .writeable = false;
    Ok(b)
}

/// The value of `a[key] = value` for an array of dtype `t` (`basic`: indexed by integers
/// and slices only), converted as NumPy's setitem converts items: scalars are checked by
/// `ops::check_item`, and a list, tuple or string is built in `t` directly, so
/// `[1.0, nan]` into an integer array is NumPy's `ValueError` rather than a float array
/// cast silently, and `"5"` is parsed.
fn item_value(value: &Bound<'_, PyAny>, t: DType, basic: bool) -> PyResult<Arg> {
    if value.is_exact_instance_of::<PyList>()
        || value.is_exact_instance_of::<PyTuple>()
        || value.is_exact_instance_of::<PyString>()
    {
        return Ok(Arg::Array(to_arr(value, Some(t))?));
    }
    let v = to_arg(value)?;
    // NumPy converts a NumPy scalar as an item through basic indexing, and casts it as an
    // array through advanced indexing.
    if basic || !matches!(v, Arg::Typed(_)) {
        ops::check_item(&v, t)?;
    }
    Ok(v)
}

/// The order a reshape, ravel or flatten reads elements in.
enum Order {
    C,
    /// C order over the axes taken in this order.
    Perm(Vec<usize>),
}

/// NumPy's `order` argument for reading `v`: "C"; "F" (the axes reversed); "A" (F when
/// `v` is Fortran- and not C-contiguous); and, where `k_allowed`, "K" (memory order: the
/// axes by decreasing stride magnitude).
fn order_perm(v: &View, order: &str, k_allowed: bool) -> PyResult<Order> {
    let nd = v.ndim();
    let reversed = || Order::Perm((0..nd).rev().collect());
    Ok(match order {
        "C" => Order::C,
        "F" => reversed(),
        "A" if v.reversed_axes().is_contiguous() && !v.is_contiguous() => reversed(),
        "A" => Order::C,
        "K" if k_allowed => {
            let mut p: Vec<usize> = (0..nd).collect();
            p.sort_by_key(|&i| std::cmp::Reverse(v.strides[i].unsigned_abs()));
            Order::Perm(p)
        }
        "K" => {
            return Err(PyValueError::new_err(
                "order 'K' is not permitted for reshaping",
            ))
        }
        _ => {
            return Err(PyValueError::new_err(format!(
                "order must be one of 'C', 'F', 'A', or 'K' (got '{order}')"
            )))
        }
    })
}

/// `a` with its axes permuted so that a C-order read visits its elements in `order`
/// (ravel's and flatten's orders, "K" included).
fn in_read_order(a: &Arr, order: &str) -> PyResult<Arr> {
    Ok(match order_perm(&a.view, order, true)? {
        Order::C => a.clone(),
        Order::Perm(p) => a.with_view(a.view.transpose(&p).py()?),
    })
}

fn arr_of(slf: &Bound<'_, PyNdArray>) -> Arr {
    slf.borrow().arr.clone()
}

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
    let me = Arg::Array(arr_of(slf));
    let arg = match to_arg(other) {
        Ok(a) => a,
        // `a == None`, `a != "text"`: NumPy compares element by element, and no element
        // equals an object that is not a number.
        Err(e)
            if matches!(op, Opcode::Equal | Opcode::NotEqual)
                && (e.is_instance_of::<PyTypeError>(py)
                    || e.is_instance_of::<PyValueError>(py)) =>
        {
            let all = hassium_core::Scalar::Bool(op == Opcode::NotEqual);
            let shape = slf.borrow().arr.view.shape.clone();
            return wrap(py, ops::full(&shape, all.into(), DType::Bool)?);
        }
        // `a < "text"`: NumPy makes a string array and has no loop for it; its error.
        Err(_) if other.is_instance_of::<PyString>() || other.is_instance_of::<PyBytes>() => {
            let t = slf.borrow().arr.dtype();
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
    match ops::elementwise(py, op, &args, &Dest::NEW, None) {
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

/// `a op= b`: writes into `a`'s view under casting rule "same_kind".
fn inplace(slf: &Bound<'_, PyNdArray>, other: &Bound<'_, PyAny>, op: Opcode) -> PyResult<()> {
    let py = slf.py();
    let me = arr_of(slf);
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

fn unary(slf: &Bound<'_, PyNdArray>, op: Opcode) -> PyResult<PyObject> {
    let py = slf.py();
    wrap(
        py,
        ops::elementwise(py, op, &[Arg::Array(arr_of(slf))], &Dest::NEW, None)?,
    )
}

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
    let mut out = Vec::with_capacity(raw.len());
    for a in raw {
        let n = ndim as isize;
        let b = if a < 0 { a + n } else { a };
        if b < 0 || b >= n {
            return Err(py::axis_error(&format!(
                "axis {a} is out of bounds for array of dimension {ndim}"
            )));
        }
        if out.contains(&(b as usize)) {
            return Err(PyValueError::new_err("duplicate value in 'axis'"));
        }
        out.push(b as usize);
    }
    Ok(Some(out))
}

/// `parse_axes` for ufunc reductions and scans, which NumPy lets name axis 0 or -1 of a
/// 0-d array as a plain integer (a legacy rule it keeps): that reduces over nothing.
fn parse_reduce_axes(axis: Option<&Bound<'_, PyAny>>, ndim: usize) -> PyResult<Option<Vec<usize>>> {
    if ndim == 0 {
        if let Some(x) = axis.filter(|a| !a.is_none() && !a.is_instance_of::<PyTuple>()) {
            if matches!(x.extract::<isize>(), Ok(0 | -1)) {
                return Ok(Some(Vec::new()));
            }
        }
    }
    parse_axes(axis, ndim)
}

fn opt_weak(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Weak>> {
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
                    let a = a.borrow().arr.clone();
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
    if arg {
        if axes.as_ref().is_some_and(|x| x.len() != 1) {
            return Err(PyTypeError::new_err(
                "'tuple' object cannot be interpreted as an integer",
            ));
        }
        if axes.is_none() {
            // argmin/argmax without an axis index the flattened array.
            let n = a.view.nelem();
            a = ops::reshape(&a, &[n])?;
            axes = Some(vec![0]);
        }
    }
    let spec = ReduceSpec {
        name,
        axes,
        dtype: py::opt_dtype(dtype)?,
        keepdims: keepdims && !(arg && axis.is_none_or(|x| x.is_none())),
        initial: opt_weak(initial)?,
    };
    let out = opt_out(out)?;
    ops::reduce(py, &a, &spec, out.as_ref())
}

/// One parsed advanced index.
enum Adv {
    /// An integer index array on the host.
    Host(IndexArray),
    /// A boolean mask on the host (row-major values and shape).
    Mask(Vec<bool>, Vec<usize>),
    /// A lazy Hassium integer or boolean array.
    Lazy(Arr),
}

/// Parses an indexing key into items and advanced indices.
fn parse_key(key: &Bound<'_, PyAny>) -> PyResult<(Vec<Item>, Vec<Adv>)> {
    let mut items = Vec::new();
    let mut advs = Vec::new();
    let parts: Vec<Bound<'_, PyAny>> = match key.downcast::<PyTuple>() {
        Ok(t) => t.iter().collect(),
        Err(_) => vec![key.clone()],
    };
    for k in parts {
        items.push(parse_item(&k, &mut advs)?);
    }
    Ok((items, advs))
}

/// A slice bound (`None`, or anything with `__index__`), clamped into `isize` as Python's
/// `PySlice_Unpack` clamps it: `a[10**20:]` is an empty slice, not an error.
fn opt_isize(o: &Bound<'_, PyAny>) -> PyResult<Option<isize>> {
    if o.is_none() {
        return Ok(None);
    }
    let i = o.call_method0("__index__").map_err(|_| {
        PyTypeError::new_err("slice indices must be integers or None or have an __index__ method")
    })?;
    Ok(Some(match i.extract::<isize>() {
        Ok(v) => v,
        Err(_) if i.lt(0)? => isize::MIN,
        Err(_) => isize::MAX,
    }))
}

const ONLY_VALID_INDICES: &str = "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or boolean arrays are valid indices";

/// A Python int used as an index, refused as NumPy refuses one beyond `intp`: one that
/// fits in uint64 is NumPy's `OverflowError` (it tries it as a uint64 index array and
/// cannot cast that), anything larger or below `-2**63` NumPy's `IndexError`.
fn int_index(i: &Bound<'_, PyAny>) -> PyResult<isize> {
    match i.extract::<isize>() {
        Ok(v) => Ok(v),
        Err(_) => Err(index_too_wide(i.extract::<u64>().is_ok())),
    }
}

/// NumPy's error for an integer index beyond `isize` (see [`int_index`]).
fn index_too_wide(fits_u64: bool) -> PyErr {
    if fits_u64 {
        pyo3::exceptions::PyOverflowError::new_err("Python int too large to convert to C long")
    } else {
        PyIndexError::new_err(ONLY_VALID_INDICES)
    }
}

fn parse_item(k: &Bound<'_, PyAny>, advs: &mut Vec<Adv>) -> PyResult<Item> {
    let py = k.py();
    if k.is_none() {
        return Ok(Item::NewAxis);
    }
    if let Ok(s) = k.downcast::<PySlice>() {
        return Ok(Item::Slice(
            opt_isize(&s.getattr("start")?)?,
            opt_isize(&s.getattr("stop")?)?,
            opt_isize(&s.getattr("step")?)?,
        ));
    }
    if k.is(PyEllipsis::get(py)) {
        return Ok(Item::Ellipsis);
    }
    if k.is_instance_of::<pyo3::types::PyBool>() {
        advs.push(Adv::Mask(vec![k.extract()?], Vec::new()));
        return Ok(Item::Array(advs.len() - 1));
    }
    if k.is_instance_of::<pyo3::types::PyInt>() {
        return Ok(Item::Int(int_index(k)?));
    }
    if let Ok(a) = k.downcast::<PyNdArray>() {
        let arr = a.borrow().arr.clone();
        if arr.view.ndim() == 0 && arr.dtype().is_integer() {
            // Every integer dtype's value is an i128; a uint64 beyond `isize` is NumPy's
            // OverflowError.
            let v = ops::read_scalar(&arr)?.as_i128().unwrap_or(0);
            let i = isize::try_from(v).map_err(|_| index_too_wide(u64::try_from(v).is_ok()))?;
            return Ok(Item::Int(i));
        }
        if !(arr.dtype().is_integer() || arr.dtype().is_bool()) {
            return Err(PyIndexError::new_err(
                "arrays used as indices must be of integer (or boolean) type",
            ));
        }
        advs.push(Adv::Lazy(arr));
        return Ok(Item::Array(advs.len() - 1));
    }
    // NumPy integer scalars and anything else with __index__ that is not a sequence.
    let np = py::numpy(py)?;
    if k.is_instance(&np.getattr("bool_")?)? {
        advs.push(Adv::Mask(vec![k.is_truthy()?], Vec::new()));
        return Ok(Item::Array(advs.len() - 1));
    }
    let is_ndarray = k.is_instance(&np.getattr("ndarray")?)?;
    if !is_ndarray && !k.is_instance_of::<PyList>() && !k.is_instance_of::<PyTuple>() {
        if let Ok(i) = k.call_method0("__index__") {
            return Ok(Item::Int(int_index(&i)?));
        }
        return Err(PyIndexError::new_err(ONLY_VALID_INDICES));
    }
    let a = np.call_method1("asarray", (k,))?;
    let kind: String = a.getattr("dtype")?.getattr("kind")?.extract()?;
    let size: usize = a.getattr("size")?.extract()?;
    match kind.as_str() {
        "b" => {
            let shape: Vec<usize> = a.getattr("shape")?.extract()?;
            let (vals, _) = host_int64(&a)?;
            advs.push(Adv::Mask(vals.into_iter().map(|v| v != 0).collect(), shape));
        }
        "i" | "u" => {
            let (data, shape) = host_int64(&a)?;
            advs.push(Adv::Host(IndexArray { data, shape }));
        }
        _ if size == 0 => {
            let shape: Vec<usize> = a.getattr("shape")?.extract()?;
            advs.push(Adv::Host(IndexArray {
                data: vec![],
                shape,
            }));
        }
        _ => {
            return Err(PyIndexError::new_err(
                "arrays used as indices must be of integer (or boolean) type",
            ))
        }
    }
    Ok(Item::Array(advs.len() - 1))
}

/// The value of a 0-d boolean index (`True`, `np.bool_(False)`, a 0-d mask array), or
/// `None` for any other advanced index.
fn scalar_truth(adv: &Adv) -> PyResult<Option<bool>> {
    Ok(match adv {
        Adv::Mask(v, s) if s.is_empty() => Some(v[0]),
        Adv::Lazy(x) if x.dtype().is_bool() && x.view.ndim() == 0 => {
            Some(ops::read_scalar(x)?.as_f64() != 0.0)
        }
        _ => None,
    })
}

/// A key whose only advanced index is one 0-d boolean (`a[True]`, `a[..., mask0d]`)
/// rewritten as basic indexing: NumPy gives that index a new dimension of length 1 when
/// true and 0 when false. Returns the view it selects (a copy is the caller's business:
/// NumPy copies, as for any advanced index), or `None` when the key is not of that form
/// (several 0-d booleans, or one beside index arrays, go through [`expand_scalar_bools`]).
fn scalar_bool_key(a: &Arr, items: &[Item], advs: &[Adv]) -> PyResult<Option<View>> {
    let [adv] = advs else {
        return Ok(None);
    };
    let Some(t) = scalar_truth(adv)? else {
        return Ok(None);
    };
    // The new dimension's position in the result: the dimensions the items before it make.
    let consumed = items
        .iter()
        .filter(|i| matches!(i, Item::Int(_) | Item::Slice(..)))
        .count();
    let mut at = 0usize;
    let mut rewritten = Vec::with_capacity(items.len());
    let mut seen = false;
    for item in items {
        match item {
            // The lone advanced item (`advs` has one entry, index 0).
            Item::Array(0) => {
                seen = true;
                rewritten.push(Item::NewAxis);
                continue;
            }
            _ if seen => {}
            Item::Slice(..) | Item::NewAxis => at += 1,
            Item::Ellipsis => at += a.view.ndim().saturating_sub(consumed),
            Item::Int(_) | Item::Array(_) => {}
        }
        rewritten.push(item.clone());
    }
    let mut v = index::apply_basic(&a.view, &rewritten)
        .map_err(index_err)?
        .view;
    // Beside an advanced index, integers are advanced too; when they and the boolean are
    // not adjacent in the key, the new dimension goes first, as for index arrays.
    let group: Vec<usize> = (items.iter().enumerate())
        .filter(|(_, i)| matches!(i, Item::Int(_) | Item::Array(_)))
        .map(|(n, _)| n)
        .collect();
    if group.windows(2).any(|w| w[1] != w[0] + 1) && at > 0 {
        let mut perm: Vec<usize> = (0..v.ndim()).collect();
        perm.remove(at);
        perm.insert(0, at);
        v = v.transpose(&perm).py()?;
        at = 0;
    }
    Ok(Some(if t { v } else { v.slice(at, 0, 0, 1).py()? }))
}

fn index_err(e: index::IndexError) -> PyErr {
    match e {
        index::IndexError::OutOfBounds(m) => PyIndexError::new_err(m),
        index::IndexError::Value(m) => PyValueError::new_err(m),
    }
}

/// The dimensions of the indexed array a key item consumes (a mask its rank, a 0-d
/// boolean none); an Ellipsis counts none here and takes the rest.
fn width(item: &Item, advs: &[Adv]) -> usize {
    match item {
        Item::Int(_) | Item::Slice(..) => 1,
        Item::Array(k) => match &advs[*k] {
            Adv::Mask(_, s) => s.len(),
            Adv::Lazy(x) if x.dtype().is_bool() => x.view.ndim(),
            _ => 1,
        },
        Item::NewAxis | Item::Ellipsis => 0,
    }
}

/// How NumPy reads 0-d booleans beside other advanced indices: each is a new axis of
/// length 1 where it stands in the key, indexed by `[0]` when true and by `[]` when
/// false, so it broadcasts with the other index arrays (`a[True, [0, 1]]` picks two
/// rows, `a[False, [0, 1]]` is a shape mismatch, `a[False, [[0], [1]]]` is empty).
/// Returns `a` with those axes inserted and the booleans replaced by such index arrays.
fn expand_scalar_bools(a: &Arr, items: &[Item], advs: Vec<Adv>) -> PyResult<(Arr, Vec<Adv>)> {
    let truths = advs
        .iter()
        .map(scalar_truth)
        .collect::<PyResult<Vec<_>>>()?;
    if truths.iter().all(Option::is_none) {
        return Ok((a.clone(), advs));
    }
    let rest = a
        .view
        .ndim()
        .saturating_sub(items.iter().map(|i| width(i, &advs)).sum::<usize>());
    let all = Item::Slice(None, None, None);
    let mut insert = Vec::new();
    for item in items {
        match item {
            Item::Array(k) if truths[*k].is_some() => insert.push(Item::NewAxis),
            Item::Ellipsis => insert.extend(std::iter::repeat_n(all.clone(), rest)),
            _ => insert.extend(std::iter::repeat_n(all.clone(), width(item, &advs))),
        }
    }
    let view = index::apply_basic(&a.view, &insert)
        .map_err(index_err)?
        .view;
    let advs = advs
        .into_iter()
        .zip(truths)
        .map(|(adv, t)| match t {
            Some(t) => Adv::Host(IndexArray {
                data: if t { vec![0] } else { vec![] },
                shape: vec![usize::from(t)],
            }),
            None => adv,
        })
        .collect();
    Ok((a.with_view(view), advs))
}

/// Host index arrays for every advanced index (masks become one array per dimension).
/// Returns the rewritten key.
fn materialize(
    py: Python<'_>,
    a: &Arr,
    items: &[Item],
    advs: Vec<Adv>,
) -> PyResult<(Vec<Item>, Vec<IndexArray>)> {
    let mut out_items = Vec::new();
    let mut arrays = Vec::new();
    let ndim = a.view.ndim();
    let consumed: usize = items.iter().map(|i| width(i, &advs)).sum();
    let mut dim = 0usize;
    let mut advs: Vec<Option<Adv>> = advs.into_iter().map(Some).collect();
    for item in items {
        match item {
            Item::Array(k) => {
                let adv = advs[*k].take().expect("each index array is used once");
                let adv = match adv {
                    Adv::Lazy(x) => {
                        let host =
                            py::numpy(py)?.call_method1("asarray", (wrap(py, x.clone())?,))?;
                        if x.dtype().is_bool() {
                            let (vals, _) = host_int64(&host)?;
                            Adv::Mask(
                                vals.into_iter().map(|v| v != 0).collect(),
                                x.shape().to_vec(),
                            )
                        } else {
                            let (data, shape) = host_int64(&host)?;
                            Adv::Host(IndexArray { data, shape })
                        }
                    }
                    other => other,
                };
                match adv {
                    Adv::Host(ia) => {
                        arrays.push(ia);
                        out_items.push(Item::Array(arrays.len() - 1));
                        dim += 1;
                    }
                    Adv::Mask(_, shape) if shape.is_empty() => {
                        // `expand_scalar_bools` turns 0-d masks into index arrays first.
                        return Err(PyRuntimeError::new_err(
                            "hassium: internal error: a 0-d boolean index was not expanded",
                        ));
                    }
                    Adv::Mask(vals, shape) => {
                        for (j, &n) in shape.iter().enumerate() {
                            let have = a.view.shape.get(dim + j).copied();
                            if have != Some(n) {
                                return Err(PyIndexError::new_err(format!(
                                    "boolean index did not match indexed array along axis {}; size of axis is {} but size of corresponding boolean axis is {n}",
                                    dim + j,
                                    have.unwrap_or(0)
                                )));
                            }
                        }
                        // np.nonzero in row-major order: one coordinate array per dimension.
                        let strides =
                            hassium_core::View::contiguous(BaseId(0), DType::Bool, &shape).strides;
                        let hits: Vec<usize> = vals
                            .iter()
                            .enumerate()
                            .filter(|(_, &v)| v)
                            .map(|(i, _)| i)
                            .collect();
                        for j in 0..shape.len() {
                            let data = hits
                                .iter()
                                .map(|&i| ((i as isize / strides[j]) as usize % shape[j]) as i64)
                                .collect();
                            arrays.push(IndexArray {
                                data,
                                shape: vec![hits.len()],
                            });
                            out_items.push(Item::Array(arrays.len() - 1));
                        }
                        dim += shape.len();
                    }
                    Adv::Lazy(_) => unreachable!("lazy indices were brought to the host above"),
                }
            }
            Item::Ellipsis => {
                dim += ndim.saturating_sub(consumed);
                out_items.push(item.clone());
            }
            Item::Int(_) | Item::Slice(..) => {
                dim += 1;
                out_items.push(item.clone());
            }
            Item::NewAxis => out_items.push(item.clone()),
        }
    }
    Ok((out_items, arrays))
}

/// The int64 offsets (as a fresh array) and the full-base view that advanced indexing
/// of `a` by `key` addresses.
fn advanced(py: Python<'_>, a: &Arr, items: &[Item], advs: Vec<Adv>) -> PyResult<(Arr, View)> {
    let (a, advs) = expand_scalar_bools(a, items, advs)?;
    let a = &a;
    let (items, mut arrays) = materialize(py, a, items, advs)?;
    let basic = index::apply_basic(&a.view, &items).map_err(index_err)?;
    // NumPy checks the index values it visits: when the index arrays broadcast to nothing
    // (`a[[5], []]`), none is visited and none is out of bounds. A 0-d index is an integer
    // to NumPy, checked always.
    let shapes: Vec<&[usize]> = arrays.iter().map(|x| x.shape.as_slice()).collect();
    let visited = index::broadcast_all(&shapes).map_err(index_err)?;
    let none_visited = visited.iter().product::<usize>() == 0;
    for &(dim, k) in &basic.arrays {
        if !none_visited || arrays[k].shape.is_empty() {
            index::normalize_indices(&mut arrays[k], dim, basic.view.shape[dim])
                .map_err(index_err)?;
        }
    }
    let (shape, offsets) = index::advanced_offsets(&basic, &arrays).map_err(index_err)?;
    let bytes: Vec<u8> = offsets.iter().flat_map(|o| o.to_le_bytes()).collect();
    let idx = ops::from_bytes(&bytes, DType::Int64, &shape)?;
    let nelem = with_rt(|rt| {
        rt.base(a.view.base)
            .map(|b| b.nelem)
            .ok_or_else(|| PyValueError::new_err("array's base was freed"))
    })?;
    Ok((idx, View::contiguous(a.view.base, a.dtype(), &[nelem])))
}

#[pymethods]
// NumPy's reduction signatures have this many arguments.
#[allow(clippy::too_many_arguments)]
impl PyNdArray {
    // --- attributes ---------------------------------------------------------------------
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.arr.view.shape.iter())
    }
    #[setter(shape)]
    fn set_shape(&mut self, shape: &Bound<'_, PyAny>) -> PyResult<()> {
        let req = py::dims_arg(shape)?;
        let s = ops::resolve_shape(self.arr.view.nelem(), &req)?;
        let v = self.arr.view.reshape(&s).ok_or_else(|| {
            PyAttributeError::new_err(
                "Incompatible shape for in-place modification. Use `.reshape()` to make a copy with the desired shape.",
            )
        })?;
        self.arr.view = v;
        Ok(())
    }
    #[getter]
    fn ndim(&self) -> usize {
        self.arr.view.ndim()
    }
    #[getter]
    fn size(&self) -> usize {
        self.arr.view.nelem()
    }
    #[getter]
    fn dtype<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        py::dtype_obj(py, self.arr.dtype())
    }
    #[getter]
    fn itemsize(&self) -> usize {
        self.arr.dtype().size()
    }
    #[getter]
    fn nbytes(&self) -> usize {
        self.arr.view.nelem() * self.arr.dtype().size()
    }
    #[getter]
    fn strides<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let sz = self.arr.dtype().size() as isize;
        PyTuple::new(py, self.arr.view.strides.iter().map(|s| s * sz))
    }
    #[getter(T)]
    fn t(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        let v = slf.borrow().arr.view.reversed_axes();
        wrap_view(slf, v)
    }
    #[getter]
    fn flags(slf: &Bound<'_, Self>) -> Flags {
        let me = slf.borrow();
        let v = &me.arr.view;
        Flags {
            array: slf.clone().unbind(),
            c_contiguous: v.is_contiguous(),
            f_contiguous: v.reversed_axes().is_contiguous(),
            owndata: me.parent.is_none(),
        }
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
        let a = arr_of(slf);
        if a.dtype().is_complex() {
            unary(slf, Opcode::Real)
        } else {
            wrap_view(slf, a.view.clone())
        }
    }
    #[getter]
    fn imag(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        let a = arr_of(slf);
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
    #[classattr]
    fn __array_priority__() -> f64 {
        100.0
    }

    // --- arithmetic ----------------------------------------------------------------------
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
        wrap(py, ops::matmul(py, &arr_of(slf), &b, None)?)
    }
    fn __rmatmul__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        let py = slf.py();
        let b = match to_arr(o, None) {
            Ok(b) => b,
            Err(_) => return Ok(py.NotImplemented()),
        };
        wrap(py, ops::matmul(py, &b, &arr_of(slf), None)?)
    }
    /// `a @= b` writes into `a` (views of it see the product, as in NumPy); the product
    /// must have `a`'s shape and cast to its dtype under "same_kind".
    fn __imatmul__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = slf.py();
        let a = arr_of(slf);
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

    // --- conversion to Python ----------------------------------------------------------
    fn __len__(&self) -> PyResult<usize> {
        self.arr
            .view
            .shape
            .first()
            .copied()
            .ok_or_else(|| PyTypeError::new_err("len() of unsized object"))
    }
    fn __iter__(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        let py = slf.py();
        let a = arr_of(slf);
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
        to_numpy(slf)?.is_truthy()
    }
    fn __float__(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        Ok(to_numpy(slf)?.call_method0("__float__")?.unbind())
    }
    fn __int__(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        Ok(to_numpy(slf)?.call_method0("__int__")?.unbind())
    }
    fn __complex__(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        let py = slf.py();
        Ok(py
            .get_type::<pyo3::types::PyComplex>()
            .call1((to_numpy(slf)?,))?
            .unbind())
    }
    fn __index__(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        Ok(to_numpy(slf)?.call_method0("__index__")?.unbind())
    }
    /// `round(x, n)` on a 0-d array: what NumPy gives for the scalar NumPy would have
    /// returned in its place (reductions and scalar indexing give 0-d arrays here), so
    /// `round(np.mean(x), 2)` works unmodified. Like NumPy's ndarray, other ranks have no
    /// `round()`.
    #[pyo3(signature = (ndigits=None))]
    fn __round__(slf: &Bound<'_, Self>, ndigits: Option<&Bound<'_, PyAny>>) -> PyResult<PyObject> {
        let py = slf.py();
        if slf.borrow().arr.view.ndim() != 0 {
            return Err(PyTypeError::new_err(
                "type hassium.ndarray doesn't define __round__ method",
            ));
        }
        let scalar = to_numpy(slf)?.get_item(pyo3::types::PyTuple::empty(py))?;
        let round = py.import("builtins")?.getattr("round")?;
        Ok(match ndigits {
            Some(n) => round.call1((scalar, n))?,
            None => round.call1((scalar,))?,
        }
        .unbind())
    }
    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        to_numpy(slf)?.repr()?.extract()
    }
    fn __str__(slf: &Bound<'_, Self>) -> PyResult<String> {
        to_numpy(slf)?.str()?.extract()
    }
    fn __format__(slf: &Bound<'_, Self>, spec: &str) -> PyResult<PyObject> {
        Ok(to_numpy(slf)?.call_method1("__format__", (spec,))?.unbind())
    }
    fn __contains__(slf: &Bound<'_, Self>, value: &Bound<'_, PyAny>) -> PyResult<bool> {
        let py = slf.py();
        let eq = ops::elementwise(
            py,
            Opcode::Equal,
            &[Arg::Array(arr_of(slf)), to_arg(value)?],
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
        Ok(to_numpy(slf)?.call_method1("item", args)?.unbind())
    }
    fn tolist(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        Ok(to_numpy(slf)?.call_method0("tolist")?.unbind())
    }
    #[pyo3(signature = (dtype=None, copy=None))]
    fn __array__<'py>(
        slf: &Bound<'py, Self>,
        dtype: Option<&Bound<'py, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let a = to_numpy(slf)?;
        let want = py::opt_dtype(dtype)?;
        let a = match want {
            Some(d) if d != arr_of(slf).dtype() => {
                if copy == Some(false) {
                    return Err(PyValueError::new_err(
                        "Unable to avoid copy while creating an array as requested.",
                    ));
                }
                return a.call_method1("astype", (py::dtype_obj(slf.py(), d)?,));
            }
            _ => a,
        };
        if copy == Some(true) {
            a.call_method0("copy")
        } else {
            Ok(a)
        }
    }
    #[pyo3(signature = (ufunc, method, *inputs, **kwargs))]
    fn __array_ufunc__(
        &self,
        py: Python<'_>,
        ufunc: &Bound<'_, PyAny>,
        method: &Bound<'_, PyAny>,
        inputs: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyObject> {
        let Some((f, _)) = dispatch(py) else {
            return Ok(py.NotImplemented());
        };
        let mut args = vec![ufunc.clone(), method.clone()];
        args.extend(inputs.iter());
        Ok(f.bind(py).call(PyTuple::new(py, args)?, kwargs)?.unbind())
    }
    fn __array_function__(
        &self,
        py: Python<'_>,
        func: &Bound<'_, PyAny>,
        types: &Bound<'_, PyAny>,
        args: &Bound<'_, PyAny>,
        kwargs: &Bound<'_, PyAny>,
    ) -> PyResult<PyObject> {
        let Some((_, f)) = dispatch(py) else {
            return Ok(py.NotImplemented());
        };
        Ok(f.bind(py).call1((func, types, args, kwargs))?.unbind())
    }
    #[pyo3(signature = (api_version=None))]
    fn __array_namespace__(
        &self,
        py: Python<'_>,
        api_version: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyObject> {
        let _ = api_version;
        Ok(PyModule::import(py, "hassium")?.into_any().unbind())
    }
    #[pyo3(signature = (**kwargs))]
    fn __dlpack__(slf: &Bound<'_, Self>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<PyObject> {
        Ok(to_numpy(slf)?
            .call_method("__dlpack__", (), kwargs)?
            .unbind())
    }
    fn __dlpack_device__(&self) -> (i32, i32) {
        (1, 0)
    }
    fn __copy__(&self) -> PyResult<PyNdArray> {
        Ok(PyNdArray {
            arr: ops::cast_copy(&self.arr, self.arr.dtype())?,
            parent: None,
        })
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

    // --- the buffer protocol ------------------------------------------------------------
    unsafe fn __getbuffer__(
        slf: Bound<'_, Self>,
        view: *mut pyo3::ffi::Py_buffer,
        flags: c_int,
    ) -> PyResult<()> {
        if view.is_null() {
            return Err(PyBufferError::new_err("View is null"));
        }
        let a = slf.borrow().arr.clone();
        if !a.writeable && flags & pyo3::ffi::PyBUF_WRITABLE == pyo3::ffi::PyBUF_WRITABLE {
            return Err(PyBufferError::new_err("buffer source array is read-only"));
        }
        let v = &a.view;
        let contiguous = v.is_contiguous();
        let want_strides = flags & pyo3::ffi::PyBUF_STRIDES == pyo3::ffi::PyBUF_STRIDES;
        if !want_strides && !contiguous {
            return Err(PyBufferError::new_err(
                "hassium array view is not C-contiguous",
            ));
        }
        if flags & pyo3::ffi::PyBUF_F_CONTIGUOUS == pyo3::ffi::PyBUF_F_CONTIGUOUS
            && flags & pyo3::ffi::PyBUF_ANY_CONTIGUOUS != pyo3::ffi::PyBUF_ANY_CONTIGUOUS
            && !v.reversed_axes().is_contiguous()
        {
            return Err(PyBufferError::new_err(
                "hassium array view is not Fortran-contiguous",
            ));
        }
        let ptr = ops::sync_ptr_for_buffer(&a)?;
        let item = v.dtype.size() as isize;
        // Shape and strides live in one allocation owned by the buffer until release,
        // followed by the base's id, which the release reports (see `host_view_opened`).
        let meta: Box<[isize]> = v
            .shape
            .iter()
            .map(|&d| d as isize)
            .chain(v.strides.iter().map(|&s| s * item))
            .chain(std::iter::once(v.base.0 as isize))
            .collect();
        let meta = Box::into_raw(meta);
        let nd = v.ndim();
        // SAFETY: `view` is a valid Py_buffer the caller lets us fill; `meta` stays alive
        // until __releasebuffer__ frees it; `obj` holds a reference to this array, which
        // keeps the base (and so `ptr`) alive.
        unsafe {
            (*view).buf = ptr as *mut std::ffi::c_void;
            pyo3::ffi::Py_INCREF(slf.as_ptr());
            (*view).obj = slf.as_ptr();
            (*view).len = (v.nelem() as isize) * item;
            (*view).readonly = c_int::from(!a.writeable);
            (*view).itemsize = item;
            (*view).format = if flags & pyo3::ffi::PyBUF_FORMAT == pyo3::ffi::PyBUF_FORMAT {
                format_of(v.dtype).as_ptr() as *mut _
            } else {
                std::ptr::null_mut()
            };
            (*view).ndim = nd as c_int;
            let base = meta as *mut isize;
            (*view).shape = if flags & pyo3::ffi::PyBUF_ND == pyo3::ffi::PyBUF_ND {
                base
            } else {
                std::ptr::null_mut()
            };
            (*view).strides = if want_strides {
                base.add(nd)
            } else {
                std::ptr::null_mut()
            };
            (*view).suboffsets = std::ptr::null_mut();
            (*view).internal = meta as *mut std::ffi::c_void;
        }
        // From here until the release, the base is shown in host memory: instructions on
        // it run as they are recorded (see `rt::with_rt`).
        crate::rt::host_view_opened(v.base);
        Ok(())
    }
    unsafe fn __releasebuffer__(&self, view: *mut pyo3::ffi::Py_buffer) {
        // SAFETY: `internal` is the Box<[isize]> leaked by __getbuffer__ (2*ndim + 1
        // long, the base's id last).
        unsafe {
            let nd = (*view).ndim as usize;
            let p = (*view).internal as *mut isize;
            if !p.is_null() {
                let meta = Box::from_raw(std::ptr::slice_from_raw_parts_mut(p, 2 * nd + 1));
                crate::rt::host_view_closed(BaseId(meta[2 * nd] as u64));
                drop(meta);
                (*view).internal = std::ptr::null_mut();
            }
        }
    }

    // --- indexing ----------------------------------------------------------------------
    fn __getitem__(slf: &Bound<'_, Self>, key: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        let py = slf.py();
        let a = arr_of(slf);
        // Fast paths: one int or one slice.
        if key.is_exact_instance_of::<pyo3::types::PyInt>() {
            let i = int_index(key)?;
            if a.view.ndim() == 0 {
                return Err(PyIndexError::new_err(
                    "too many indices for array: array is 0-dimensional, but 1 were indexed",
                ));
            }
            let b = index::apply_basic(&a.view, &[Item::Int(i)]).map_err(index_err)?;
            if b.view.ndim() == 0 {
                return scalar_at(slf, b.view);
            }
            return wrap_view(slf, b.view);
        }
        let (items, advs) = parse_key(key)?;
        if advs.is_empty() {
            let b = index::apply_basic(&a.view, &items).map_err(index_err)?;
            if b.view.ndim() == 0 && items.iter().all(|i| matches!(i, Item::Int(_))) {
                return scalar_at(slf, b.view);
            }
            return wrap_view(slf, b.view);
        }
        // A lazy integer array indexing a 1-D array: one gather, no flush.
        if let ([Item::Array(0)], [Adv::Lazy(idx)]) = (items.as_slice(), advs.as_slice()) {
            if a.view.ndim() == 1 && idx.dtype().is_integer() {
                let iv = ops::cast_copy(idx, DType::Int64)?;
                return wrap(py, ops::gather(&a.view, &iv.view)?);
            }
        }
        if let Some(v) = scalar_bool_key(&a, &items, &advs)? {
            return wrap(py, ops::cast_copy(&a.with_view(v), a.dtype())?);
        }
        let (idx, src) = advanced(py, &a, &items, advs)?;
        wrap(py, ops::gather(&src, &idx.view)?)
    }
    fn __setitem__(
        slf: &Bound<'_, Self>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let py = slf.py();
        let a = arr_of(slf);
        let (items, advs) = parse_key(key)?;
        let val = item_value(value, a.dtype(), advs.is_empty())?;
        if advs.is_empty() {
            let b = index::apply_basic(&a.view, &items).map_err(index_err)?;
            return ops::assign(py, &a.with_view(b.view), &val, "unsafe");
        }
        // A boolean mask over the whole array with a scalar: an in-place select, lazily.
        if let ([Item::Array(0)], [Adv::Lazy(m)]) = (items.as_slice(), advs.as_slice()) {
            let scalar_like =
                !matches!(val, Arg::Array(ref v) if v.view.nelem() != 1 || v.view.ndim() > 0);
            if m.dtype().is_bool() && m.shape() == a.shape() && scalar_like {
                return ops::masked_fill(&a, m, &val);
            }
            if a.view.ndim() == 1 && m.dtype().is_integer() {
                let iv = ops::cast_copy(m, DType::Int64)?;
                return ops::scatter(&a, &iv.view, &val, false);
            }
        }
        if let Some(v) = scalar_bool_key(&a, &items, &advs)? {
            return ops::assign(py, &a.with_view(v), &val, "unsafe");
        }
        let (idx, full) = advanced(py, &a, &items, advs)?;
        ops::scatter(&a.with_view(full), &idx.view, &val, false)
    }

    // --- shape methods -----------------------------------------------------------------
    #[pyo3(signature = (*shape, order="C"))]
    fn reshape(
        slf: &Bound<'_, Self>,
        shape: &Bound<'_, PyTuple>,
        order: &str,
    ) -> PyResult<PyObject> {
        let a = arr_of(slf);
        let req = if shape.len() == 1 {
            py::dims_arg(&shape.get_item(0)?)?
        } else {
            py::dims_arg(shape)?
        };
        let s = ops::resolve_shape(a.view.nelem(), &req)?;
        // Fortran order reads and writes the last axis slowest: a C-order reshape of the
        // reversed axes to the reversed shape, reversed back.
        let fortran = match order_perm(&a.view, order, false)? {
            Order::C => false,
            Order::Perm(_) => true,
        };
        let r = if fortran {
            let rev: Vec<usize> = s.iter().rev().copied().collect();
            let r = ops::reshape(&a.with_view(a.view.reversed_axes()), &rev)?;
            let v = r.view.reversed_axes();
            r.with_view(v)
        } else {
            ops::reshape(&a, &s)?
        };
        if r.owner.id == a.owner.id {
            wrap_view(slf, r.view)
        } else {
            wrap(slf.py(), r)
        }
    }
    #[pyo3(signature = (order="C"))]
    fn ravel(slf: &Bound<'_, Self>, order: &str) -> PyResult<PyObject> {
        let a = arr_of(slf);
        let r = ops::reshape(&in_read_order(&a, order)?, &[a.view.nelem()])?;
        if r.owner.id == a.owner.id {
            wrap_view(slf, r.view)
        } else {
            wrap(slf.py(), r)
        }
    }
    #[pyo3(signature = (order="C"))]
    fn flatten(&self, py: Python<'_>, order: &str) -> PyResult<PyObject> {
        let a = &self.arr;
        let c = ops::cast_copy(&in_read_order(a, order)?, a.dtype())?;
        wrap(py, ops::reshape(&c, &[a.view.nelem()])?)
    }
    #[pyo3(signature = (*axes))]
    fn transpose(slf: &Bound<'_, Self>, axes: &Bound<'_, PyTuple>) -> PyResult<PyObject> {
        let a = arr_of(slf);
        let nd = a.view.ndim();
        let perm: Option<Vec<isize>> = match axes.len() {
            0 => None,
            1 if axes.get_item(0)?.is_none() => None,
            1 if axes.get_item(0)?.downcast::<PyTuple>().is_ok()
                || axes.get_item(0)?.downcast::<PyList>().is_ok() =>
            {
                Some(py::dims_arg(&axes.get_item(0)?)?)
            }
            // NumPy reads the axes as it reads a shape (an int beyond `intp` is its
            // "Maximum allowed dimension exceeded").
            _ => Some(py::dims_arg(axes)?),
        };
        let v = match perm {
            None => a.view.reversed_axes(),
            Some(p) => {
                if p.len() != nd {
                    return Err(PyValueError::new_err("axes don't match array"));
                }
                let mut q = Vec::with_capacity(nd);
                for x in p {
                    let y = if x < 0 { x + nd as isize } else { x };
                    if y < 0 || y >= nd as isize {
                        return Err(py::axis_error(&format!(
                            "axis {x} is out of bounds for array of dimension {nd}"
                        )));
                    }
                    q.push(y as usize);
                }
                a.view
                    .transpose(&q)
                    .map_err(|_| PyValueError::new_err("repeated axis in transpose"))?
            }
        };
        wrap_view(slf, v)
    }
    fn swapaxes(slf: &Bound<'_, Self>, axis1: isize, axis2: isize) -> PyResult<PyObject> {
        let a = arr_of(slf);
        let nd = a.view.ndim();
        let norm = |x: isize| -> PyResult<usize> {
            let y = if x < 0 { x + nd as isize } else { x };
            if y < 0 || y >= nd as isize {
                return Err(py::axis_error(&format!(
                    "axis {x} is out of bounds for array of dimension {nd}"
                )));
            }
            Ok(y as usize)
        };
        let (i, j) = (norm(axis1)?, norm(axis2)?);
        let mut perm: Vec<usize> = (0..nd).collect();
        perm.swap(i, j);
        wrap_view(slf, a.view.transpose(&perm).py()?)
    }
    #[pyo3(signature = (axis=None))]
    fn squeeze(slf: &Bound<'_, Self>, axis: Option<&Bound<'_, PyAny>>) -> PyResult<PyObject> {
        let a = arr_of(slf);
        let v = match parse_axes(axis, a.view.ndim())? {
            None => a.view.squeeze(),
            Some(axes) => {
                if axes.iter().any(|&i| a.view.shape[i] != 1) {
                    return Err(PyValueError::new_err(
                        "cannot select an axis to squeeze out which has size not equal to one",
                    ));
                }
                let keep: Vec<usize> = (0..a.view.ndim()).filter(|i| !axes.contains(i)).collect();
                View {
                    shape: keep.iter().map(|&i| a.view.shape[i]).collect(),
                    strides: keep.iter().map(|&i| a.view.strides[i]).collect(),
                    ..a.view.clone()
                }
            }
        };
        wrap_view(slf, v)
    }
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
        let a = arr_of(slf);
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
        wrap(py, ops::cast_copy(&self.arr, self.arr.dtype())?)
    }
    /// Stores one value everywhere; a value with dimensions is NumPy's `ValueError`.
    fn fill(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let v = item_value(value, self.arr.dtype(), true)?;
        if matches!(&v, Arg::Array(a) if a.view.ndim() > 0) {
            return Err(PyValueError::new_err(
                "setting an array element with a sequence.",
            ));
        }
        ops::assign(py, &self.arr, &v, "unsafe")
    }
    #[pyo3(signature = (dtype=None, r#type=None))]
    fn view(
        slf: &Bound<'_, Self>,
        dtype: Option<&Bound<'_, PyAny>>,
        r#type: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyObject> {
        let _ = r#type;
        let a = arr_of(slf);
        match py::opt_dtype(dtype)? {
            None => wrap_view(slf, a.view.clone()),
            Some(d) if d == a.dtype() => wrap_view(slf, a.view.clone()),
            Some(_) => Err(UnsupportedError::new_err(
                "hassium cannot reinterpret a base as another dtype",
            )),
        }
    }

    // --- reductions --------------------------------------------------------------------
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
        no_where(r#where)?;
        wrap(
            py,
            reduce_any(py, &self.arr, "add", axis, dtype, out, keepdims, initial)?,
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
        no_where(r#where)?;
        wrap(
            py,
            reduce_any(
                py, &self.arr, "multiply", axis, dtype, out, keepdims, initial,
            )?,
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
        no_where(r#where)?;
        wrap(
            py,
            reduce_any(py, &self.arr, "minimum", axis, None, out, keepdims, initial)?,
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
        no_where(r#where)?;
        wrap(
            py,
            reduce_any(py, &self.arr, "maximum", axis, None, out, keepdims, initial)?,
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
        no_where(r#where)?;
        wrap(
            py,
            reduce_any(py, &self.arr, "logical_or", axis, None, out, keepdims, None)?,
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
        no_where(r#where)?;
        wrap(
            py,
            reduce_any(
                py,
                &self.arr,
                "logical_and",
                axis,
                None,
                out,
                keepdims,
                None,
            )?,
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
        wrap(
            py,
            reduce_any(py, &self.arr, "argmin", axis, None, out, keepdims, None)?,
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
        wrap(
            py,
            reduce_any(py, &self.arr, "argmax", axis, None, out, keepdims, None)?,
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
        wrap(py, accumulate_any(py, &self.arr, "add", axis, dtype, out)?)
    }
    #[pyo3(signature = (axis=None, dtype=None, out=None))]
    fn cumprod(
        &self,
        py: Python<'_>,
        axis: Option<isize>,
        dtype: Option<&Bound<'_, PyAny>>,
        out: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyObject> {
        wrap(
            py,
            accumulate_any(py, &self.arr, "multiply", axis, dtype, out)?,
        )
    }

    // --- other methods ---------------------------------------------------------------------
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
        let t = self.arr.dtype();
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
                let x = cur.take().unwrap_or_else(|| self.arr.clone());
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
            None => ops::cast_copy(&self.arr, t)?,
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
        let r = round(py, &self.arr, decimals)?;
        finish_out(py, r, out)
    }
    fn nonzero(&self, py: Python<'_>) -> PyResult<PyObject> {
        nonzero(py, &self.arr)
    }
    fn conj(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        unary(slf, Opcode::Conj)
    }
    fn conjugate(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        unary(slf, Opcode::Conj)
    }
}

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
fn finish_out(py: Python<'_>, r: Arr, out: Option<&Bound<'_, PyAny>>) -> PyResult<PyObject> {
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

/// `np.nonzero(a)`: needs the values, so it syncs and computes the coordinates on the host.
pub fn nonzero(py: Python<'_>, a: &Arr) -> PyResult<PyObject> {
    let host = to_numpy_arr(py, a)?;
    let np = py::numpy(py)?;
    let coords = np.call_method1("nonzero", (host,))?;
    let mut out = Vec::new();
    for c in coords.try_iter()? {
        out.push(wrap(
            py,
            crate::convert::from_host(&c?, Some(DType::Int64))?,
        )?);
    }
    Ok(PyTuple::new(py, out)?.into_any().unbind())
}

/// A NumPy array sharing `slf`'s memory after a sync (the buffer protocol does the work).
pub fn to_numpy<'py>(slf: &Bound<'py, PyNdArray>) -> PyResult<Bound<'py, PyAny>> {
    let py = slf.py();
    let arr = slf.borrow().arr.clone();
    if let Some(e) = ops::take_failed_sync(&arr) {
        return Err(e); // NumPy's retry through `__array__` after a failed buffer export
    }
    let mv = pyo3::types::PyMemoryView::from(slf.as_any()).inspect_err(|_| {
        // Raised here, to the program: not again at its next read.
        ops::forget_failed_sync(&arr);
    })?;
    py::numpy(py)?.call_method1("asarray", (mv,))
}

fn to_numpy_arr<'py>(py: Python<'py>, a: &Arr) -> PyResult<Bound<'py, PyAny>> {
    let obj = Py::new(
        py,
        PyNdArray {
            arr: a.clone(),
            parent: None,
        },
    )?;
    to_numpy(obj.bind(py))
}

const LONG_IS_64: bool = std::mem::size_of::<std::ffi::c_long>() == 8;

/// The PEP 3118 format code of a dtype.
fn format_of(d: DType) -> &'static CStr {
    match d {
        DType::Bool => c"?",
        DType::Int8 => c"b",
        DType::Int16 => c"h",
        DType::Int32 => c"i",
        // NumPy's default integer is C `long` ('l'); 'q' would import as `longlong`, a
        // distinct dtype that prints `dtype=int64` in reprs.
        DType::Int64 if LONG_IS_64 => c"l",
        DType::Int64 => c"q",
        DType::UInt8 => c"B",
        DType::UInt16 => c"H",
        DType::UInt32 => c"I",
        DType::UInt64 if LONG_IS_64 => c"L",
        DType::UInt64 => c"Q",
        DType::Float16 => c"e",
        DType::Float32 => c"f",
        DType::Float64 => c"d",
        DType::Complex64 => c"Zf",
        DType::Complex128 => c"Zd",
    }
}

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
        self.array.borrow(py).arr.writeable
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

/// `np.broadcast_to(a, shape)` once the shapes are checked: a read-only view of `a`
/// with a stride of 0 along each broadcast axis, as NumPy's.
pub fn broadcast_to(a: &Bound<'_, PyNdArray>, shape: &[usize]) -> PyResult<PyObject> {
    let view = a.borrow().arr.view.broadcast_to(shape).py()?;
    wrap_read_only_view(a, view)
}

/// NumPy's `a.diagonal(offset, axis1, axis2)`: a read-only view, so later writes into
/// `a` show through it, with the other axes first and the diagonal last. The axes are
/// normalised and distinct (the package checks them with NumPy's errors).
pub fn diagonal(
    a: &Bound<'_, PyNdArray>,
    offset: isize,
    axis1: usize,
    axis2: usize,
) -> PyResult<PyObject> {
    let v = a.borrow().arr.view.clone();
    if axis1 >= v.ndim() || axis2 >= v.ndim() || axis1 == axis2 {
        return Err(PyValueError::new_err(format!(
            "diagonal: axes {axis1} and {axis2} are not two distinct axes of a \
             {}-dimensional array",
            v.ndim()
        )));
    }
    let (rows, cols) = (v.shape[axis1] as isize, v.shape[axis2] as isize);
    let (s1, s2) = (v.strides[axis1], v.strides[axis2]);
    let n = (rows - (-offset).max(0)).min(cols - offset.max(0)).max(0);
    let mut d = v.clone();
    d.shape.clear();
    d.strides.clear();
    for k in (0..v.ndim()).filter(|&k| k != axis1 && k != axis2) {
        d.shape.push(v.shape[k]);
        d.strides.push(v.strides[k]);
    }
    d.shape.push(n as usize);
    d.strides.push(s1 + s2);
    if n > 0 {
        d.offset += if offset >= 0 {
            offset * s2
        } else {
            -offset * s1
        };
    }
    wrap_read_only_view(a, d)
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
        let v = &me.arr.view;
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
                .is_ok_and(|p| !p.borrow().arr.writeable)
        });
        if parent_read_only {
            return Err(PyValueError::new_err(
                "cannot set WRITEABLE flag to True of this array",
            ));
        }
    }
    a.borrow_mut().arr.writeable = value;
    Ok(())
}

/// Reads any array-like into an index view for `take_flat`/`put_flat`: Hassium arrays stay
/// lazy (range errors surface at the flush), host data is checked here.
pub fn flat_index(obj: &Bound<'_, PyAny>, n: usize) -> PyResult<Arr> {
    if let Ok(a) = obj.downcast::<PyNdArray>() {
        let a = a.borrow().arr.clone();
        if !a.dtype().is_integer() {
            return Err(PyIndexError::new_err(
                "arrays used as indices must be of integer (or boolean) type",
            ));
        }
        return if a.dtype() == DType::Int64 {
            Ok(a)
        } else {
            ops::cast_copy(&a, DType::Int64)
        };
    }
    let (mut data, shape) = host_int64(obj)?;
    let mut ia = IndexArray {
        data: std::mem::take(&mut data),
        shape,
    };
    index::normalize_indices(&mut ia, 0, n).map_err(index_err)?;
    let bytes: Vec<u8> = ia.data.iter().flat_map(|o| o.to_le_bytes()).collect();
    ops::from_bytes(&bytes, DType::Int64, &ia.shape)
}
