//! `a[key]` and `a[key] = value`: parsing the key, basic indexing as views, `nonzero`,
//! and flat indices for `a.flat`.

use super::{
    advanced::advanced, advanced::scalar_bool_key, arr_of, interop::to_numpy_arr, scalar_at,
    selection, wrap, wrap_view, PyNdArray,
};
use crate::convert::{host_int64, to_arg, to_arr};
use crate::index::{self, IndexArray, Item};
use crate::ops::{self, Arg};
use crate::py::{self};
use crate::rt::Arr;
use hassium_core::DType;
use pyo3::exceptions::{PyIndexError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyEllipsis, PyList, PySlice, PyString, PyTuple};

/// The value of `a[key] = value` for an array of dtype `t` (`basic`: indexed by integers
/// and slices only), converted as NumPy's setitem converts items: scalars are checked by
/// `ops::check_item`, and a list, tuple or string is built in `t` directly, so
/// `[1.0, nan]` into an integer array is NumPy's `ValueError` rather than a float array
/// cast silently, and `"5"` is parsed.
pub(super) fn item_value(value: &Bound<'_, PyAny>, t: DType, basic: bool) -> PyResult<Arg> {
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

/// One parsed advanced index.
pub(super) enum Adv {
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
    // A Python int is its own index (the common case: no method call).
    let i = if o.is_exact_instance_of::<pyo3::types::PyInt>() {
        o.clone()
    } else {
        o.call_method0(pyo3::intern!(o.py(), "__index__"))
            .map_err(|_| {
                PyTypeError::new_err(
                    "slice indices must be integers or None or have an __index__ method",
                )
            })?
    };
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
            opt_isize(&s.getattr(pyo3::intern!(py, "start"))?)?,
            opt_isize(&s.getattr(pyo3::intern!(py, "stop"))?)?,
            opt_isize(&s.getattr(pyo3::intern!(py, "step"))?)?,
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
        let arr = a.borrow().arr()?.clone();
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

pub(super) fn index_err(e: index::IndexError) -> PyErr {
    match e {
        index::IndexError::OutOfBounds(m) => PyIndexError::new_err(m),
        index::IndexError::Value(m) => PyValueError::new_err(m),
    }
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

/// Reads any array-like into an index view for `take_flat`/`put_flat`: Hassium arrays stay
/// lazy (range errors surface at the flush), host data is checked here.
pub fn flat_index(obj: &Bound<'_, PyAny>, n: usize) -> PyResult<Arr> {
    if let Ok(a) = obj.downcast::<PyNdArray>() {
        let a = a.borrow().arr()?.clone();
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

#[pymethods]
impl PyNdArray {
    fn __getitem__(slf: &Bound<'_, Self>, key: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        let py = slf.py();
        let a = arr_of(slf)?;
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
        // A boolean mask over the leading dimensions: compacted on the engine.
        if let ([Item::Array(0)], [Adv::Lazy(m)]) = (items.as_slice(), advs.as_slice()) {
            if m.dtype().is_bool() && m.view.ndim() > 0 {
                return selection::select(py, &a, m);
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
        let a = arr_of(slf)?;
        let (items, advs) = parse_key(key)?;
        // `x[m] = f(x[m])`: a selection by this mask is assigned without its count.
        if let ([Item::Array(0)], [Adv::Lazy(m)]) = (items.as_slice(), advs.as_slice()) {
            if m.dtype().is_bool() && m.view.ndim() > 0 && selection::assign(py, &a, m, value)? {
                return Ok(());
            }
        }
        let val = item_value(value, a.dtype(), advs.is_empty())?;
        if advs.is_empty() {
            let b = index::apply_basic(&a.view, &items).map_err(index_err)?;
            return ops::assign(py, &a.with_view(b.view), &val, "unsafe");
        }
        // A lazy boolean mask over the leading dimensions: on the engine (a scalar or a
        // broadcast row is one lazy select).
        if let ([Item::Array(0)], [Adv::Lazy(m)]) = (items.as_slice(), advs.as_slice()) {
            if m.dtype().is_bool() && m.view.ndim() > 0 {
                return ops::mask_assign(py, &a, m, &val);
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
    fn nonzero(&self, py: Python<'_>) -> PyResult<PyObject> {
        nonzero(py, self.arr()?)
    }
}
