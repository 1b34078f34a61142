//! Recording for Python: the operations of `hassium_record`, which both bridges share,
//! called with the runtime lock taken, their operands' arrays kept alive, their fresh
//! results wrapped as arrays, and their errors raised as NumPy raises them (outside the
//! lock: making NumPy's exception objects calls into Python).

use crate::py::{self, UnsupportedError};
use crate::rt::{self, with_rt, Arr, OrPy, Write};
use crate::types;
use hassium_core::{BaseId, DType, Instr, Opcode, Operand, Scalar, View};
use hassium_record::{self as record, Target};
use hassium_vem::Runtime;
use pyo3::exceptions::{PyIndexError, PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;

pub use hassium_record::Weak;

/// An operand as it arrives from Python: arrays are held (so their bases live) while
/// the recorder works on their views.
#[derive(Clone, Debug)]
pub enum Arg {
    Array(Arr),
    /// A NumPy scalar: typed, promotes like a 0-d array.
    Typed(Scalar),
    Weak(Weak),
}

impl Arg {
    /// The operand as the recorder takes it (the caller keeps `self` alive meanwhile).
    pub fn rec(&self) -> record::Arg {
        match self {
            Arg::Array(a) => record::Arg::Array(a.view.clone()),
            Arg::Typed(s) => record::Arg::Typed(*s),
            Arg::Weak(w) => record::Arg::Weak(*w),
        }
    }
}

fn recs(args: &[Arg]) -> smallvec::SmallVec<[record::Arg; 3]> {
    args.iter().map(Arg::rec).collect()
}

/// The runtime as the recorder's target: every instruction goes through [`rt::record`],
/// which watches bases with live host views.
struct Watched<'a>(&'a mut Runtime);

impl Target for Watched<'_> {
    fn runtime(&mut self) -> &mut Runtime {
        self.0
    }

    #[inline] // an instruction is a few hundred bytes: each call that is not inlined copies it
    fn record(&mut self, instr: Instr) -> record::Result<()> {
        Ok(rt::record(self.0, instr)?)
    }
}

/// Runs one recorder call under the runtime lock; its error is raised after the lock
/// is released.
fn recorded<R>(f: impl FnOnce(&mut Watched<'_>) -> record::Result<R>) -> PyResult<R> {
    with_rt(|rt| Ok(f(&mut Watched(rt))))?.map_err(|e| Python::with_gil(|py| raise(py, e)))
}

/// [`recorded`] for callers that hold the GIL's token.
fn recorded_in<R>(
    py: Python<'_>,
    f: impl FnOnce(&mut Watched<'_>) -> record::Result<R>,
) -> PyResult<R> {
    with_rt(|rt| Ok(f(&mut Watched(rt))))?.map_err(|e| raise(py, e))
}

/// The exception NumPy raises for what the recorder refused.
pub fn raise(py: Python<'_>, e: record::Error) -> PyErr {
    use record::Error as E;
    match e {
        E::Runtime(e) => rt::rt_err(e),
        E::Bytecode(e) => rt::core_err(&e),
        E::IntOutOfBounds { value, dtype } => PyOverflowError::new_err(format!(
            "Python integer {value} out of bounds for {}",
            dtype.name()
        )),
        E::Overflow(m) => PyOverflowError::new_err(m),
        E::Type(m) => PyTypeError::new_err(m),
        E::Shape(m) | E::Value(m) => PyValueError::new_err(m),
        E::Index(m) => PyIndexError::new_err(m),
        E::NoLoop { ufunc, types, call } => py::no_loop_error(py, ufunc, &types, call),
        E::Casting {
            ufunc,
            input,
            from,
            to,
            casting,
        } => py::casting_error(py, ufunc, input, from, to, &casting),
        E::Unsupported(m) => UnsupportedError::new_err(m),
        e @ E::TooBig => PyValueError::new_err(e.to_string()),
        E::NoMemory { dtype, shape } => py::array_memory_error(py, dtype, &shape),
    }
}

/// Checks a scalar about to be stored as an item of a `t` array (see
/// [`hassium_record::check_item`]).
pub fn check_item(value: &Arg, t: DType) -> PyResult<()> {
    record::check_item(&value.rec(), t).map_err(|e| Python::with_gil(|py| raise(py, e)))
}

/// Where a result goes: a fresh array, or an existing one (`out=`, in-place operators).
pub struct Dest<'a> {
    pub out: Option<&'a Arr>,
    /// NumPy's `casting=` for the output ("same_kind" unless told).
    pub casting: &'a str,
}

impl Dest<'static> {
    pub const NEW: Dest<'static> = Dest {
        out: None,
        casting: "same_kind",
    };
}

/// The array a recorder result is: `out` when one was given, else the fresh array.
fn result(view: View, out: Option<&Arr>) -> Arr {
    match out {
        Some(o) => o.clone(),
        None => Arr::adopt(view),
    }
}

/// Applies the elementwise opcode `op` with NumPy's type resolution and broadcasting.
pub fn elementwise(
    py: Python<'_>,
    op: Opcode,
    args: &[Arg],
    dest: &Dest<'_>,
    dtype: Option<DType>,
) -> PyResult<Arr> {
    elementwise_of(py, op, &recs(args), dest, dtype)
}

/// [`elementwise`] of operands already in the recorder's terms, whose bases the caller
/// keeps alive (an operator's own arrays): no array is cloned to hold them.
pub fn elementwise_of(
    py: Python<'_>,
    op: Opcode,
    ins: &[record::Arg],
    dest: &Dest<'_>,
    dtype: Option<DType>,
) -> PyResult<Arr> {
    let d = record::Dest::into(dest.out.map(|a| &a.view), dest.casting);
    let v = recorded_in(py, |t| record::elementwise(t, op, ins, &d, dtype))?;
    Ok(result(v, dest.out))
}

/// `np.where(cond, x, y)`.
pub fn where_(py: Python<'_>, cond: &Arg, x: &Arg, y: &Arg) -> PyResult<Arr> {
    let args = [cond.clone(), x.clone(), y.clone()];
    elementwise(py, Opcode::Where, &args, &Dest::NEW, None)
}

/// `dst[...] = src` with broadcasting and casting (NumPy's `copyto`).
pub fn assign(py: Python<'_>, dst: &Arr, src: &Arg, casting: &str) -> PyResult<()> {
    dst.check_writeable(Write::Assign)?;
    let src = src.rec();
    recorded_in(py, |t| record::assign(t, &dst.view, &src, casting))
}

/// A copy of `a` as a fresh contiguous array of dtype `t` (`astype`, `copy`).
pub fn cast_copy(a: &Arr, t: DType) -> PyResult<Arr> {
    recorded(|r| record::cast_copy(r, &a.view, t)).map(Arr::adopt)
}

/// `a` as a contiguous array: itself when it already is, else a copy.
pub fn contiguous(a: &Arr) -> PyResult<Arr> {
    if a.view.is_contiguous() {
        Ok(a.clone())
    } else {
        cast_copy(a, a.dtype())
    }
}

/// `a.reshape(shape)` (C order): a view when the strides allow, else a copy.
pub fn reshape(a: &Arr, shape: &[usize]) -> PyResult<Arr> {
    let v = recorded(|t| record::reshape(t, &a.view, shape))?;
    Ok(if v.base == a.view.base {
        a.with_view(v)
    } else {
        Arr::adopt(v)
    })
}

/// Resolves the unknown dimension in a requested shape, as NumPy's reshape does.
pub fn resolve_shape(size: usize, req: &[isize]) -> PyResult<Vec<usize>> {
    let req: Vec<i64> = req.iter().map(|&d| d as i64).collect();
    record::resolve_shape(size, &req).map_err(|e| Python::with_gil(|py| raise(py, e)))
}

/// `np.arange`: `start + i*step` for i in 0..n as `dtype`.
pub fn arange(start: Weak, step: Weak, n: usize, dtype: DType) -> PyResult<Arr> {
    recorded(|t| record::arange(t, start, step, n, dtype)).map(Arr::adopt)
}

/// `np.full(shape, value, dtype)`.
pub fn full(shape: &[usize], value: Operand, dtype: DType) -> PyResult<Arr> {
    recorded(|t| record::full(t, shape, value, dtype)).map(Arr::adopt)
}

/// `np.empty(shape, dtype)`: a base with no instruction yet.
pub fn empty(shape: &[usize], dtype: DType) -> PyResult<Arr> {
    with_rt(|rt| Arr::new(rt, dtype, shape))
}

/// uint64 random bits from the counter-based Philox opcode.
pub fn random_bits(shape: &[usize], seed: u64, stream: u64) -> PyResult<Arr> {
    recorded(|t| record::random_bits(t, shape, seed, stream)).map(Arr::adopt)
}

/// A fresh array holding a copy of host bytes (C order, `dtype`), written directly into
/// the new base's memory: a new base has no pending instruction, so no flush is needed.
pub fn from_bytes(bytes: &[u8], dtype: DType, shape: &[usize]) -> PyResult<Arr> {
    with_rt(|rt| {
        let res = Arr::new(rt, dtype, shape)?;
        if !bytes.is_empty() {
            let ptr = rt.host_ptr(res.view.base).py()?;
            // SAFETY: the base holds exactly nelem*itemsize bytes == bytes.len() (the
            // caller passes a C-contiguous buffer of `shape` and `dtype`), freshly
            // allocated, so it cannot overlap `bytes`.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), ptr, bytes.len()) };
            rt.mark_host_written(res.view.base);
        }
        Ok(res)
    })
}

/// The error of the last failed sync, by base. NumPy's `asarray` swallows an error raised
/// by the buffer protocol and retries through `__array__`; by then the failed batch is
/// gone, so `__array__` re-raises the remembered error instead of exposing stale memory.
static FAILED_SYNC: parking_lot::Mutex<Option<(BaseId, PyErr)>> = parking_lot::Mutex::new(None);

/// Takes the remembered sync error of `a`'s base, if its last sync failed.
pub fn take_failed_sync(a: &Arr) -> Option<PyErr> {
    let mut g = FAILED_SYNC.lock();
    match g.take() {
        Some((id, e)) if id == a.view.base => Some(e),
        other => {
            *g = other;
            None
        }
    }
}

/// Forgets a remembered sync error of `a`'s base: its caller raises the error itself, so
/// nothing may raise it again later (the array is readable after a failed batch).
pub fn forget_failed_sync(a: &Arr) {
    let _ = take_failed_sync(a);
}

/// Makes `a`'s base readable on the host and returns a pointer to its first element (of
/// the view). The pointer stays valid while `a` is alive.
pub fn sync_ptr(a: &Arr) -> PyResult<*mut u8> {
    let result = with_rt(|rt| {
        // The host may write the memory from now on: selections reading it copy it first.
        if crate::deferred::watched(a.view.base) {
            crate::deferred::protect(rt, a.view.base, true).py()?;
        }
        rt.sync(a.view.base).py()?;
        let p = rt.host_ptr(a.view.base).py()?;
        // The exported memory may be written through the buffer: tell device engines.
        rt.mark_host_written(a.view.base);
        rt::forget_mask(a.view.base);
        Ok(p.wrapping_offset(a.view.offset * a.dtype().size() as isize))
    });
    if result.is_ok() {
        *FAILED_SYNC.lock() = None;
    }
    result
}

/// [`sync_ptr`] for the buffer protocol: a failure is also remembered for the
/// `__array__` retry NumPy makes after swallowing it (see [`FAILED_SYNC`]).
pub fn sync_ptr_for_buffer(a: &Arr) -> PyResult<*mut u8> {
    let result = sync_ptr(a);
    if let Err(e) = &result {
        Python::with_gil(|py| *FAILED_SYNC.lock() = Some((a.view.base, e.clone_ref(py))));
    }
    result
}

/// The bytes of the single element of a size-1 view. Only that element is made current on
/// the host (`Runtime::sync_extent`: the cluster engine brings one block home, not the
/// array), and nothing is exported, so the base is not marked written by the host.
pub fn read_element(a: &Arr) -> PyResult<Vec<u8>> {
    let n = a.dtype().size();
    if a.view.nelem() != 1 {
        return Err(PyValueError::new_err(
            "can only convert an array of size 1 to a Python scalar",
        ));
    }
    let at = a.view.offset as u64;
    with_rt(|rt| {
        rt.sync_extent(a.view.base, at, at + 1).py()?;
        let p = rt.host_ptr(a.view.base).py()?;
        // SAFETY: the view's one element lies inside the base (verified when the view
        // was made) and is current after the sync.
        let bytes = unsafe { std::slice::from_raw_parts(p.add(at as usize * n), n) };
        Ok(bytes.to_vec())
    })
}

/// Reads the single element of a size-1 view.
pub fn read_scalar(a: &Arr) -> PyResult<Scalar> {
    let bytes = read_element(a)?;
    Scalar::from_le_bytes(a.dtype(), &bytes).ok_or_else(|| PyValueError::new_err("short element"))
}

/// One reduction specification after argument parsing.
pub struct ReduceSpec<'a> {
    pub name: &'a str,
    pub axes: Option<Vec<usize>>,
    pub dtype: Option<DType>,
    pub keepdims: bool,
    pub initial: Option<Weak>,
}

/// `np.<ufunc>.reduce` / `sum`/`prod`/`min`/`max`/`any`/`all`/`argmin`/`argmax` along
/// `axes` (None: all), as successive single-axis reductions from the last axis down.
pub fn reduce(py: Python<'_>, a: &Arr, spec: &ReduceSpec<'_>, out: Option<&Arr>) -> PyResult<Arr> {
    let op = types::reduce_opcode(spec.name).ok_or_else(|| {
        UnsupportedError::new_err(format!("hassium cannot reduce with '{}'", spec.name))
    })?;
    if let Some(o) = out {
        o.check_writeable(Write::Assign)?;
    }
    let spec = record::ReduceSpec {
        op,
        name: spec.name,
        axes: spec.axes.clone(),
        dtype: spec.dtype,
        keepdims: spec.keepdims,
        initial: spec.initial,
    };
    let o = out.map(|o| &o.view);
    let v = recorded_in(py, |t| record::reduce(t, &a.view, &spec, o))?;
    Ok(result(v, out))
}

/// `np.<ufunc>.accumulate` along one axis (`cumsum`, `cumprod`, running extremes).
pub fn accumulate(
    py: Python<'_>,
    a: &Arr,
    name: &str,
    axis: usize,
    dtype: Option<DType>,
    out: Option<&Arr>,
) -> PyResult<Arr> {
    let op = types::accumulate_opcode(name).ok_or_else(|| {
        UnsupportedError::new_err(format!("hassium cannot accumulate with '{name}'"))
    })?;
    if let Some(o) = out {
        o.check_writeable(Write::Assign)?;
    }
    let o = out.map(|o| &o.view);
    let v = recorded_in(py, |t| record::scan(t, op, &a.view, Some(axis), dtype, o))?;
    Ok(result(v, out))
}

/// `out = src_flat[idx]` where `src` is a 1-D view and `idx` an int64 view of out's shape.
pub fn gather(src: &View, idx: &View) -> PyResult<Arr> {
    let idx = record::Arg::Array(idx.clone());
    recorded(|t| record::gather(t, src, &idx, None)).map(Arr::adopt)
}

/// `target_1d[idx] = values` (or `+=` with `accumulate`), values cast to the target dtype
/// and broadcast to the index shape; values sharing the target's base are copied first.
pub fn scatter(target: &Arr, idx: &View, values: &Arg, accumulate: bool) -> PyResult<()> {
    // `np.add.at` writes as an output (NumPy 2.4 itself writes into a read-only array).
    target.check_writeable(if accumulate {
        Write::Output
    } else {
        Write::Assign
    })?;
    let op = if accumulate {
        Opcode::ScatterAdd
    } else {
        Opcode::Scatter
    };
    let (idx, values) = (record::Arg::Array(idx.clone()), values.rec());
    recorded(|t| record::scatter(t, op, &target.view, &idx, &values, None))
}

/// How many entries of `mask` are true ([`record::mask_count`]): one element read back,
/// the mask stays on the engine. Remembered until the mask's base may be written.
pub fn mask_count(py: Python<'_>, mask: &Arr) -> PyResult<usize> {
    if let Some(known) = rt::remembered_mask(&mask.view) {
        return Ok(known);
    }
    let total = Arr::adopt(recorded_in(py, |t| record::mask_count(t, &mask.view))?);
    let count = read_scalar(&total)?.as_i128().unwrap_or(0) as usize;
    rt::remember_mask(rt::MaskCount {
        mask: mask.view.clone(),
        count,
    });
    Ok(count)
}

/// NumPy's `IndexError` unless `mask` matches `a`'s leading dimensions.
pub fn check_mask(py: Python<'_>, a: &Arr, mask: &Arr) -> PyResult<()> {
    recorded_in(py, |_| record::check_mask(&a.view, &mask.view))
}

/// Whether two arrays hold the same values as far as the queue shows
/// ([`record::same_values`]): how selections by masks spelled twice pair up.
pub fn same_values(a: &Arr, b: &Arr) -> PyResult<bool> {
    recorded(|t| Ok(record::same_values(t, &a.view, &b.view)))
}

/// `a[mask] = whole[mask]` for a `whole` of `a`'s shape ([`record::mask_assign_whole`]).
pub fn mask_assign_whole(py: Python<'_>, a: &Arr, mask: &Arr, whole: &Arr) -> PyResult<()> {
    recorded_in(py, |t| {
        record::mask_assign_whole(t, &a.view, &mask.view, &whole.view)
    })
}

/// `a[mask]` for a boolean mask over `a`'s leading dimensions, compacted on the engine.
pub fn compress(py: Python<'_>, a: &Arr, mask: &Arr) -> PyResult<Arr> {
    recorded_in(py, |_| record::check_mask(&a.view, &mask.view))?;
    let count = mask_count(py, mask)?;
    let v = recorded_in(py, |t| record::compress(t, &a.view, &mask.view, count))?;
    Ok(Arr::adopt(v))
}

/// `a[mask] = values` for a boolean mask over `a`'s leading dimensions, on the engine;
/// the mask's count is read back only when the values need checking against it.
pub fn mask_assign(py: Python<'_>, a: &Arr, mask: &Arr, values: &Arg) -> PyResult<()> {
    a.check_writeable(Write::Assign)?;
    let values = values.rec();
    recorded_in(py, |_| record::check_mask(&a.view, &mask.view))?;
    let count = if record::mask_assign_needs_count(&a.view, &mask.view, &values) {
        Some(mask_count(py, mask)?)
    } else {
        None
    };
    recorded_in(py, |t| {
        record::mask_assign(t, &a.view, &mask.view, count, &values)
    })
}

/// `a @ b` with NumPy's `matmul` rules, into `out` or a fresh array.
pub fn matmul(py: Python<'_>, a: &Arr, b: &Arr, out: Option<&Arr>) -> PyResult<Arr> {
    if let Some(o) = out {
        o.check_writeable(Write::Assign)?;
    }
    let o = out.map(|o| &o.view);
    let v = recorded_in(py, |t| record::matmul(t, &a.view, &b.view, o))?;
    Ok(result(v, out))
}

/// A sorted copy of `a` along `axis`, or (`indices`) the stable order that sorts it.
pub fn sort(py: Python<'_>, a: &Arr, axis: usize, indices: bool) -> PyResult<Arr> {
    let v = recorded_in(py, |t| record::sort(t, &a.view, axis, indices))?;
    Ok(Arr::adopt(v))
}

/// The int64 positions along `axis` of the `k + 1` smallest elements of `a` in stable
/// order, then of the others in increasing order (`argpartition` for every `kth <= k`).
pub fn argpartition(py: Python<'_>, a: &Arr, axis: usize, k: usize) -> PyResult<Arr> {
    let v = recorded_in(py, |t| record::argpartition(t, &a.view, axis, k))?;
    Ok(Arr::adopt(v))
}

/// Sorts `a` in place along `axis` (`ndarray.sort`).
pub fn sort_in_place(py: Python<'_>, a: &Arr, axis: usize) -> PyResult<()> {
    a.check_writeable(Write::Assign)?;
    recorded_in(py, |t| record::sort_in_place(t, &a.view, axis))
}

/// Where `needles` go in the sorted 1-D `hay`, as int64 positions.
pub fn searchsorted(py: Python<'_>, hay: &Arr, needles: &Arr, right: bool) -> PyResult<Arr> {
    let v = recorded_in(py, |t| {
        record::searchsorted(t, &hay.view, &needles.view, right)
    })?;
    Ok(Arr::adopt(v))
}

/// Flushes everything recorded so far.
pub fn flush() -> PyResult<()> {
    with_rt(|rt| rt.flush().py())
}
