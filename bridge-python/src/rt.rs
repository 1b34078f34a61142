//! The one runtime this process records into, the ownership of bases, and the mapping of
//! runtime errors onto NumPy's exception types.

use crate::py;
use hassium_core::{BaseId, DType, Instr, View};
use hassium_vem::{Error, Runtime};
use parking_lot::Mutex;
use pyo3::exceptions::{PyIndexError, PyMemoryError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

/// The process-wide runtime, created on first use. Callers hold the lock only for Rust
/// work: never while calling into Python, which could drop an array and re-enter.
static RUNTIME: Mutex<Option<Runtime>> = Mutex::new(None);

/// Bases whose last reference dropped while the runtime lock was taken (by this thread
/// re-entrantly, or by another): their `FREE` is recorded at the next lock.
static PENDING_FREES: Mutex<Vec<BaseId>> = Mutex::new(Vec::new());

/// Set after a push to `PENDING_FREES`, so that the common call, with nothing pending,
/// takes one lock instead of two. A push sets it after pushing, so a free pushed while
/// the list is being taken is seen at the next lock at the latest.
static HAS_PENDING: AtomicBool = AtomicBool::new(false);

/// The thread creating the runtime ahead of its first use (see [`prestart`]).
static PRESTART: Mutex<Option<std::thread::JoinHandle<()>>> = Mutex::new(None);

/// Starts creating the runtime on a thread of its own, so that a device engine's start-up
/// (a quarter of a second for NVIDIA's OpenCL driver) overlaps the program's imports
/// instead of stalling its first operation. The first operation waits for it under the
/// runtime lock. An error is not kept: the first operation, finding no runtime, creates
/// it again and raises that error. Callers join the thread before a fork and at exit
/// ([`prestart_join`]): a child must not inherit the lock held by a thread it lacks, and
/// the process must not unload a driver a thread is still inside.
///
/// A stack that starts MPI (the cluster engine, run without `mpirun`) is created here, on
/// the calling thread, instead: MPI sets environment variables as it starts, and the
/// imports that follow read them (NumPy's OpenBLAS crashed in `getenv` so, and a compiler
/// spawn failed with EFAULT).
///
/// Returns whether the runtime is (or was) being created on a thread.
pub fn prestart() -> bool {
    let mut slot = PRESTART.lock();
    if slot.is_some() {
        return true;
    }
    if hassium_vem::Config::load().is_ok_and(|c| c.stack_starts_mpi()) {
        let mut guard = RUNTIME.lock();
        if guard.is_none() {
            // An error is not kept, as on the thread below: the first operation raises it.
            if let Ok(rt) = Runtime::new() {
                *guard = Some(rt);
            }
        }
        return false;
    }
    let spawned = std::thread::Builder::new()
        .name("hassium-start".into())
        .spawn(|| {
            let mut guard = RUNTIME.lock();
            if guard.is_none() {
                if let Ok(rt) = Runtime::new() {
                    *guard = Some(rt);
                }
            }
        });
    *slot = spawned.ok();
    slot.is_some()
}

/// Waits for the thread [`prestart`] started, if any.
pub fn prestart_join() {
    let handle = PRESTART.lock().take();
    if let Some(h) = handle {
        let _ = h.join();
    }
}

/// Waits for the batch the runtime runs on its flush thread, if any (see
/// `Runtime::quiesce`); nothing when there is no runtime yet.
pub fn quiesce() {
    if let Some(rt) = RUNTIME.lock().as_mut() {
        rt.quiesce();
    }
}

/// Runs `f` on the runtime, creating it on first use.
///
/// While a host view of some base is alive (see [`HostViews`]), the bases it shows are
/// kept coherent with it here: before `f`, the runtime is told their host copies may
/// have been written through the view; after `f`, those that `f` recorded an
/// instruction on are synced, which runs the instruction and brings its result home.
pub fn with_rt<R>(f: impl FnOnce(&mut Runtime) -> PyResult<R>) -> PyResult<R> {
    let mut guard = RUNTIME.lock();
    if guard.is_none() {
        let rt = Runtime::new().map_err(|e| PyRuntimeError::new_err(format!("hassium: {e}")))?;
        *guard = Some(rt);
    }
    // Checked just above: the option is filled.
    let rt = guard.as_mut().expect("runtime created above");
    if HAS_PENDING.swap(false, Ordering::AcqRel) {
        let pending = std::mem::take(&mut *PENDING_FREES.lock());
        for id in pending {
            let _ = rt.free(id);
        }
    }
    if HOST_VIEWS_LIVE.load(Ordering::Acquire) == 0 {
        return f(rt);
    }
    for id in HOST_VIEWS.lock().exported() {
        rt.mark_host_written(id);
    }
    let result = f(rt);
    let touched = std::mem::take(&mut HOST_VIEWS.lock().touched);
    let mut synced = Ok(());
    for id in touched {
        if rt.base(id).is_some() {
            synced = synced.and(rt.sync(id).py());
        }
    }
    // The call's own error first: a failed sync of what it recorded follows from it.
    let value = result?;
    synced.map(|()| value)
}

/// Records one instruction. Every instruction the bridge records goes through here, so
/// that one naming a base with a live host view is noted for [`with_rt`] to run at once.
#[inline]
pub fn record(rt: &mut Runtime, instr: Instr) -> hassium_vem::Result<()> {
    forget_mask(instr.out.base);
    if crate::deferred::watched(instr.out.base) && !instr.op.is_system() {
        crate::deferred::protect(rt, instr.out.base, false)?;
    }
    if HOST_VIEWS_LIVE.load(Ordering::Acquire) != 0 {
        let mut views = HOST_VIEWS.lock();
        let bases: Vec<BaseId> = std::iter::once(instr.out.base)
            .chain(instr.ins.iter().filter_map(|o| o.base()))
            .filter(|id| views.live.contains_key(id))
            .collect();
        views.touched.extend(bases);
    }
    rt.record(instr)
}

/// The last boolean mask whose count was read for `a[mask]` (see `ops::mask_count`),
/// with that count: `z[m]`, `c[m]` and `z[m] = v` in a row share one read. Forgotten as
/// soon as anything may write the mask's base: an instruction recorded into it, or a
/// pointer to its memory handed to the host.
/// Base ids are never reused, so the view alone names the mask.
pub struct MaskCount {
    pub mask: View,
    pub count: usize,
}

static MASK_COUNT: Mutex<Option<MaskCount>> = Mutex::new(None);

/// The base of the mask in [`MASK_COUNT`] (`u64::MAX` when none): the one check every
/// recorded instruction makes.
static MASK_COUNT_BASE: AtomicU64 = AtomicU64::new(u64::MAX);

/// Forgets the remembered mask if it is `id`'s: something may write that base.
pub fn forget_mask(id: BaseId) {
    if MASK_COUNT_BASE.load(Ordering::Acquire) == id.0 {
        MASK_COUNT_BASE.store(u64::MAX, Ordering::Release);
    }
}

/// The count remembered for exactly `mask`'s view, unless its base may have been
/// written since or has a host view open (writable behind the runtime).
pub fn remembered_mask(mask: &View) -> Option<usize> {
    if MASK_COUNT_BASE.load(Ordering::Acquire) != mask.base.0
        || HOST_VIEWS.lock().live.contains_key(&mask.base)
    {
        return None;
    }
    let cache = MASK_COUNT.lock();
    let c = cache.as_ref()?;
    (c.mask == *mask).then_some(c.count)
}

/// Remembers `mask`'s count (see [`MaskCount`]).
pub fn remember_mask(entry: MaskCount) {
    let mut cache = MASK_COUNT.lock();
    MASK_COUNT_BASE.store(entry.mask.base.0, Ordering::Release);
    *cache = Some(entry);
}

/// The bases that host memory views (NumPy arrays made by `np.asarray(h)`, memoryviews,
/// DLPack capsules: every one goes through the buffer protocol's export) currently show,
/// with how many views each; and those an instruction was recorded on since the last
/// [`with_rt`] call ended.
#[derive(Default)]
struct HostViews {
    live: BTreeMap<BaseId, usize>,
    touched: Vec<BaseId>,
}

impl HostViews {
    fn exported(&self) -> Vec<BaseId> {
        self.live.keys().copied().collect()
    }
}

/// Never held while taking `RUNTIME` (a buffer is released, and so this lock taken,
/// whenever Python drops a view, which may happen inside a runtime call).
static HOST_VIEWS: Mutex<HostViews> = Mutex::new(HostViews {
    live: BTreeMap::new(),
    touched: Vec::new(),
});

/// The number of live host views of all bases: the fast path's one check.
static HOST_VIEWS_LIVE: AtomicUsize = AtomicUsize::new(0);

/// A host view of `id`'s memory was handed out (the base is synced already).
pub fn host_view_opened(id: BaseId) {
    *HOST_VIEWS.lock().live.entry(id).or_insert(0) += 1;
    HOST_VIEWS_LIVE.fetch_add(1, Ordering::AcqRel);
}

/// Whether a host view of `id`'s memory is open (the host may write it at any time).
pub fn host_viewed(id: BaseId) -> bool {
    HOST_VIEWS_LIVE.load(Ordering::Acquire) != 0 && HOST_VIEWS.lock().live.contains_key(&id)
}

/// A host view of `id`'s memory was released.
pub fn host_view_closed(id: BaseId) {
    let mut views = HOST_VIEWS.lock();
    if let Some(n) = views.live.get_mut(&id) {
        *n -= 1;
        if *n == 0 {
            views.live.remove(&id);
        }
        HOST_VIEWS_LIVE.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Runs `f` only when the runtime exists (used at exit, where creating one is pointless).
pub fn with_existing_rt<R>(f: impl FnOnce(&mut Runtime) -> R) -> Option<R> {
    let mut guard = RUNTIME.lock();
    guard.as_mut().map(f)
}

/// Owns one base: when the last array (view) of it is dropped, the base's `FREE` is
/// recorded. Dropping never blocks and never calls Python, so it is safe during
/// interpreter shutdown and from inside a runtime call.
#[derive(Debug)]
pub struct BaseOwner {
    pub id: BaseId,
}

impl Drop for BaseOwner {
    fn drop(&mut self) {
        match RUNTIME.try_lock() {
            Some(mut g) => {
                if let Some(rt) = g.as_mut() {
                    let _ = rt.free(self.id);
                }
            }
            None => {
                PENDING_FREES.lock().push(self.id);
                HAS_PENDING.store(true, Ordering::Release);
            }
        }
    }
}

/// The element count of a new array of `shape`, refused as NumPy refuses it at creation
/// (see [`hassium_record::checked_nelem`]).
pub fn checked_nelem(dtype: DType, shape: &[usize]) -> PyResult<usize> {
    hassium_record::checked_nelem(dtype, shape)
        .map_err(|e| Python::with_gil(|py| crate::ops::raise(py, e)))
}

/// A view together with the ownership of its base: what every Hassium array is.
#[derive(Clone, Debug)]
pub struct Arr {
    pub view: View,
    pub owner: Arc<BaseOwner>,
    /// NumPy's `WRITEABLE` flag: false for `broadcast_to`'s views, arrays made from
    /// read-only NumPy arrays and those a program locks with `setflags(write=False)`.
    /// Views inherit it; every write into the array checks it (`check_writeable`).
    pub writeable: bool,
}

/// What a write into an array is, as NumPy words its refusal of a read-only one.
#[derive(Clone, Copy)]
pub enum Write {
    /// `a[...] = v`, `np.copyto`, `fill`, `put`.
    Assign,
    /// `out=` of a ufunc, reduction or product, and in-place operators.
    Output,
}

impl Arr {
    /// A fresh contiguous array of `shape` in a new base (no memory until written).
    pub fn new(rt: &mut Runtime, dtype: DType, shape: &[usize]) -> PyResult<Arr> {
        let n = checked_nelem(dtype, shape)?;
        let base = rt.new_base(dtype, n);
        Ok(Arr {
            view: View::contiguous(base.id, dtype, shape),
            owner: Arc::new(BaseOwner { id: base.id }),
            writeable: true,
        })
    }

    /// The array of a fresh base the recorder made: its ownership passes to the array.
    pub fn adopt(view: View) -> Arr {
        Arr {
            owner: Arc::new(BaseOwner { id: view.base }),
            view,
            writeable: true,
        }
    }

    /// Another view of the same base, as writeable as this one.
    pub fn with_view(&self, view: View) -> Arr {
        Arr {
            view,
            owner: self.owner.clone(),
            writeable: self.writeable,
        }
    }

    /// NumPy's `ValueError` when the array is read-only.
    pub fn check_writeable(&self, write: Write) -> PyResult<()> {
        if self.writeable {
            return Ok(());
        }
        Err(PyValueError::new_err(match write {
            Write::Assign => "assignment destination is read-only",
            Write::Output => "output array is read-only",
        }))
    }

    pub fn dtype(&self) -> DType {
        self.view.dtype
    }

    pub fn shape(&self) -> &[usize] {
        &self.view.shape
    }
}

/// Maps a bytecode error onto the exception NumPy raises for the same mistake.
pub fn core_err(e: &hassium_core::Error) -> PyErr {
    use hassium_core::Error as E;
    let root = e.root();
    let msg = root.to_string();
    match root {
        E::OutOfBounds(_) => PyIndexError::new_err(msg),
        E::DTypeNotAllowed(_) => PyTypeError::new_err(msg),
        E::BadAxis(_) => py::axis_error(&msg),
        _ => PyValueError::new_err(msg),
    }
}

/// Maps a runtime error onto a Python exception. Errors from a flush name the failing
/// operation in their message; gather/scatter range errors become `IndexError` and a
/// negative integer power `ValueError`, as in NumPy.
pub fn rt_err(e: Error) -> PyErr {
    match &e {
        Error::Bytecode(c) => core_err(c),
        Error::OutOfMemory(m) => PyMemoryError::new_err(m.clone()),
        _ => {
            let msg = e.to_string();
            if msg.contains("is out of bounds") {
                PyIndexError::new_err(msg)
            } else if msg.ends_with(hassium_core::NEGATIVE_POWER) {
                PyValueError::new_err(msg)
            } else {
                PyRuntimeError::new_err(format!("hassium: {msg}"))
            }
        }
    }
}

/// `?`-friendly conversion of runtime results.
pub trait OrPy<T> {
    fn py(self) -> PyResult<T>;
}

impl<T> OrPy<T> for hassium_vem::Result<T> {
    fn py(self) -> PyResult<T> {
        self.map_err(rt_err)
    }
}

impl<T> OrPy<T> for hassium_core::Result<T> {
    fn py(self) -> PyResult<T> {
        self.map_err(|e| core_err(&e))
    }
}
