//! The engine side of the boundary: wraps an [`Engine`] in the C table.

use crate::table::{STATUS_ERROR, STATUS_OK, STATUS_UNKNOWN, WROTE_NOTHING};
use crate::template::Template;
use crate::wire::{decode_call, decode_replay};
use crate::{
    Buffers, Engine, EngineApi, EngineContext, EngineRef, Error, HostBuffer, LoadedEngine, Result,
};
use hassium_core::BaseId;
use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::ffi::{c_char, c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// An engine behind a C handle, with the strings it has handed out kept alive.
pub struct ExportedEngine {
    engine: Box<dyn Engine>,
    last_error: CString,
    /// The last failure's instruction, kind and innermost message, when it was an
    /// instruction failing while it ran (see `last_failure`).
    last_failure: Option<(u64, u32, CString)>,
    scratch: CString,
    templates: Templates,
}

impl ExportedEngine {
    fn new(engine: Box<dyn Engine>) -> ExportedEngine {
        ExportedEngine {
            engine,
            last_error: CString::default(),
            last_failure: None,
            scratch: CString::default(),
            templates: Templates::default(),
        }
    }
}

/// The templates an engine keeps (see `template.rs`), by key.
#[derive(Default)]
struct Templates {
    map: FxHashMap<u128, Template>,
    /// Instructions the kept templates hold, bounded by [`TEMPLATE_INSTRS`].
    instrs: usize,
    replays: u64,
}

/// A few tens of MB of decoded calls at most; past it every template is dropped (a loop
/// sends its body's whole call once more).
const TEMPLATE_INSTRS: usize = 1 << 16;

impl Templates {
    fn insert(&mut self, key: u128, t: Template) {
        if let Some(old) = self.map.remove(&key) {
            self.instrs -= old.size();
        }
        if self.instrs + t.size() > TEMPLATE_INSTRS {
            self.map.clear();
            self.instrs = 0;
        }
        self.instrs += t.size();
        self.map.insert(key, t);
    }
}

thread_local! {
    static CREATE_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn cstring(s: String) -> CString {
    CString::new(s.replace('\0', " ")).unwrap_or_default()
}

/// Runs `f` on the engine behind `handle`, turning errors and panics into a status code
/// and a stored message. A panic inside an engine must never unwind into the host.
///
/// # Safety
/// `handle` must come from `create` and not be destroyed.
unsafe fn guarded(handle: *mut c_void, f: impl FnOnce(&mut dyn Engine) -> Result<()>) -> i32 {
    // SAFETY: forwarded contract.
    unsafe { guarded_status(handle, |ex| f(ex.engine.as_mut()).map(|()| STATUS_OK)) }
}

/// [`guarded`] over the whole wrapper, for calls with a status of their own.
///
/// # Safety
/// As [`guarded`].
unsafe fn guarded_status(
    handle: *mut c_void,
    f: impl FnOnce(&mut ExportedEngine) -> Result<i32>,
) -> i32 {
    if handle.is_null() {
        return STATUS_ERROR;
    }
    // SAFETY: handle is a live Box<ExportedEngine> per the contract above.
    let ex = unsafe { &mut *(handle as *mut ExportedEngine) };
    match catch_unwind(AssertUnwindSafe(|| f(&mut *ex))) {
        Ok(Ok(status)) => status,
        Ok(Err(e)) => {
            ex.last_error = cstring(e.to_string());
            ex.last_failure = match &e {
                Error::Bytecode(c) => c.failed_instr().map(|i| {
                    let nothing = if c.wrote_nothing() { WROTE_NOTHING } else { 0 };
                    (i as u64, c.kind() | nothing, cstring(c.root().to_string()))
                }),
                _ => None,
            };
            STATUS_ERROR
        }
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            ex.last_error = cstring(format!("engine panicked: {msg}"));
            ex.last_failure = None;
            STATUS_ERROR
        }
    }
}

/// Creates an engine for the table's `create` entry.
///
/// # Safety
/// `config` must point to `len` readable bytes; `child` must be null or a live engine
/// whose ownership passes here.
pub unsafe fn create_with(
    config: *const u8,
    len: usize,
    child: EngineRef,
    make: fn(EngineContext) -> Result<Box<dyn Engine>>,
) -> *mut c_void {
    let result = catch_unwind(AssertUnwindSafe(|| -> Result<*mut c_void> {
        let text = if config.is_null() || len == 0 {
            ""
        } else {
            // SAFETY: caller guarantees `len` readable bytes.
            std::str::from_utf8(unsafe { std::slice::from_raw_parts(config, len) })
                .map_err(|e| Error::Other(format!("engine config is not UTF-8: {e}")))?
        };
        let table: toml::Table = text
            .parse()
            .map_err(|e| Error::Other(format!("engine config: {e}")))?;
        let child: Option<Box<dyn Engine>> = if child.is_null() {
            None
        } else {
            // SAFETY: caller passes ownership of a live engine.
            Some(Box::new(unsafe { LoadedEngine::from_ref(child, "child")? }))
        };
        let engine = make(EngineContext {
            config: table,
            child,
        })?;
        Ok(Box::into_raw(Box::new(ExportedEngine::new(engine))) as *mut c_void)
    }));
    let err = match result {
        Ok(Ok(h)) => return h,
        Ok(Err(e)) => e.to_string(),
        Err(_) => "engine panicked while being created".to_string(),
    };
    CREATE_ERROR.with(|c| *c.borrow_mut() = cstring(err));
    std::ptr::null_mut()
}

/// # Safety
/// Called only through the engine table, with a handle from `create` (see [`EngineApi`]).
pub unsafe extern "C" fn create_error() -> *const c_char {
    CREATE_ERROR.with(|c| c.borrow().as_ptr())
}

/// # Safety
/// Called only through the engine table, with a handle from `create` (see [`EngineApi`]).
pub unsafe extern "C" fn capabilities(handle: *mut c_void) -> *const c_char {
    let mut json = String::new();
    // SAFETY: forwarded contract.
    let status = unsafe {
        guarded(handle, |e| {
            json = serde_json::to_string(&e.capabilities())
                .map_err(|e| Error::Other(e.to_string()))?;
            Ok(())
        })
    };
    if status != STATUS_OK {
        return std::ptr::null();
    }
    // SAFETY: guarded succeeded, so handle is live.
    let ex = unsafe { &mut *(handle as *mut ExportedEngine) };
    ex.scratch = cstring(json);
    ex.scratch.as_ptr()
}

/// # Safety
/// Called only through the engine table, with a handle from `create` (see [`EngineApi`]).
pub unsafe extern "C" fn execute(
    handle: *mut c_void,
    call: *const u8,
    call_len: usize,
    buffers: *const HostBuffer,
    nbuffers: usize,
) -> i32 {
    // SAFETY: forwarded contract: `call` has `call_len` bytes, `buffers` `nbuffers` records.
    unsafe {
        guarded(handle, |e| {
            let (batch, kernels) = decode_call(std::slice::from_raw_parts(call, call_len))?;
            e.execute(&batch, &kernels, &buffer_list(buffers, nbuffers))
        })
    }
}

/// # Safety
/// `buffers` holds `n` records (or is anything when `n` is 0).
unsafe fn buffer_list(buffers: *const HostBuffer, n: usize) -> Buffers {
    if n == 0 {
        return Buffers::default();
    }
    // SAFETY: forwarded contract.
    Buffers::new(unsafe { std::slice::from_raw_parts(buffers, n) })
}

/// # Safety
/// Called only through the engine table, with a handle from `create` (see [`EngineApi`]).
pub unsafe extern "C" fn execute_keyed(
    handle: *mut c_void,
    key_lo: u64,
    key_hi: u64,
    call: *const u8,
    call_len: usize,
    buffers: *const HostBuffer,
    nbuffers: usize,
) -> i32 {
    // SAFETY: forwarded contract, as `execute`.
    unsafe {
        guarded_status(handle, |ex| {
            let (batch, kernels) = decode_call(std::slice::from_raw_parts(call, call_len))?;
            let buffers = buffer_list(buffers, nbuffers);
            let key = (u128::from(key_hi) << 64) | u128::from(key_lo);
            match Template::new(batch, kernels) {
                Ok(mut t) => {
                    ex.engine
                        .execute_again(&t.batch, &t.kernels, &buffers, &mut t.memo)?;
                    ex.templates.insert(key, t);
                }
                Err(call) => ex.engine.execute(&call.0, &call.1, &buffers)?,
            }
            Ok(STATUS_OK)
        })
    }
}

/// # Safety
/// Called only through the engine table, with a handle from `create` (see [`EngineApi`]).
pub unsafe extern "C" fn replay(
    handle: *mut c_void,
    call: *const u8,
    call_len: usize,
    buffers: *const HostBuffer,
    nbuffers: usize,
) -> i32 {
    // SAFETY: forwarded contract, as `execute`.
    unsafe {
        guarded_status(handle, |ex| {
            let (key, bindings) = decode_replay(std::slice::from_raw_parts(call, call_len))?;
            let Some(t) = ex.templates.map.get_mut(&key) else {
                return Ok(STATUS_UNKNOWN);
            };
            let buffers = buffer_list(buffers, nbuffers);
            t.rebind(&bindings, &buffers)?;
            ex.templates.replays += 1;
            ex.engine
                .execute_again(&t.batch, &t.kernels, &buffers, &mut t.memo)?;
            Ok(STATUS_OK)
        })
    }
}

/// # Safety
/// Called only through the engine table, with a handle from `create` (see [`EngineApi`]).
pub unsafe extern "C" fn sync(handle: *mut c_void, base: u64, host: *const HostBuffer) -> i32 {
    // SAFETY: forwarded contract: `host` is a valid record.
    unsafe { guarded(handle, |e| e.sync(BaseId(base), &*host)) }
}

/// # Safety
/// Called only through the engine table, with a handle from `create` (see [`EngineApi`]).
pub unsafe extern "C" fn sync_extent(
    handle: *mut c_void,
    base: u64,
    host: *const HostBuffer,
    lo: u64,
    hi: u64,
) -> i32 {
    // SAFETY: forwarded contract: `host` is a valid record.
    unsafe { guarded(handle, |e| e.sync_extent(BaseId(base), &*host, lo, hi)) }
}

/// # Safety
/// Called only through the engine table, with a handle from `create` (see [`EngineApi`]).
pub unsafe extern "C" fn free(handle: *mut c_void, base: u64) -> i32 {
    // SAFETY: forwarded contract.
    unsafe { guarded(handle, |e| e.free(BaseId(base))) }
}

/// # Safety
/// Called only through the engine table, with a handle from `create` (see [`EngineApi`]).
pub unsafe extern "C" fn stats(handle: *mut c_void) -> *const c_char {
    let mut json = String::new();
    // SAFETY: forwarded contract.
    let status = unsafe {
        guarded_status(handle, |ex| {
            let mut s = ex.engine.stats();
            s.extra
                .insert("calls_replayed".into(), ex.templates.replays as f64);
            json = serde_json::to_string(&s).map_err(|e| Error::Other(e.to_string()))?;
            Ok(STATUS_OK)
        })
    };
    if status != STATUS_OK {
        return std::ptr::null();
    }
    // SAFETY: guarded succeeded, so handle is live.
    let ex = unsafe { &mut *(handle as *mut ExportedEngine) };
    ex.scratch = cstring(json);
    ex.scratch.as_ptr()
}

/// # Safety
/// Called only through the engine table, with a handle from `create` (see [`EngineApi`]).
pub unsafe extern "C" fn last_error(handle: *mut c_void) -> *const c_char {
    if handle.is_null() {
        return c"null engine handle".as_ptr();
    }
    // SAFETY: forwarded contract.
    unsafe { (*(handle as *mut ExportedEngine)).last_error.as_ptr() }
}

/// # Safety
/// Called only through the engine table, with a handle from `create` (see [`EngineApi`]);
/// `index` and `kind` must be writable.
pub unsafe extern "C" fn last_failure(
    handle: *mut c_void,
    index: *mut u64,
    kind: *mut u32,
) -> *const c_char {
    if handle.is_null() || index.is_null() || kind.is_null() {
        return std::ptr::null();
    }
    // SAFETY: forwarded contract.
    match unsafe { &(*(handle as *mut ExportedEngine)).last_failure } {
        Some((i, k, msg)) => {
            // SAFETY: the caller lends writable locations.
            unsafe {
                *index = *i;
                *kind = *k;
            }
            msg.as_ptr()
        }
        None => std::ptr::null(),
    }
}

/// # Safety
/// Called only through the engine table, with a handle from `create` (see [`EngineApi`]).
pub unsafe extern "C" fn destroy(handle: *mut c_void) {
    if !handle.is_null() {
        // SAFETY: handle came from Box::into_raw in create_with and is destroyed once.
        drop(unsafe { Box::from_raw(handle as *mut ExportedEngine) });
    }
}

unsafe extern "C" fn no_create(_: *const u8, _: usize, _: EngineRef) -> *mut c_void {
    CREATE_ERROR
        .with(|c| *c.borrow_mut() = cstring("this table only wraps an existing engine".into()));
    std::ptr::null_mut()
}

static WRAP_API: EngineApi = EngineApi {
    abi_version: crate::ABI_VERSION,
    name: c"in-process".as_ptr(),
    create: no_create,
    create_error,
    capabilities,
    execute,
    execute_keyed,
    replay,
    sync,
    sync_extent,
    free,
    stats,
    last_error,
    last_failure,
    destroy,
};

/// Lends an in-process engine across the boundary (e.g. the built-in reference engine as
/// another engine's child). Ownership passes with the returned reference.
pub fn into_engine_ref(engine: Box<dyn Engine>) -> EngineRef {
    let handle = Box::into_raw(Box::new(ExportedEngine::new(engine))) as *mut c_void;
    EngineRef {
        api: &WRAP_API,
        handle,
    }
}

/// Exports an engine type from a cdylib: `export_engine!("cpu", CpuEngine::create);`
/// where `create: fn(EngineContext) -> Result<Box<dyn Engine>>`.
#[macro_export]
macro_rules! export_engine {
    ($name:literal, $create:path) => {
        unsafe extern "C" fn __hassium_create(
            config: *const u8,
            len: usize,
            child: $crate::EngineRef,
        ) -> *mut ::std::ffi::c_void {
            // SAFETY: forwarded from the table's contract.
            unsafe { $crate::export_glue::create_with(config, len, child, $create) }
        }
        static __HASSIUM_API: $crate::EngineApi = $crate::EngineApi {
            abi_version: $crate::ABI_VERSION,
            name: concat!($name, "\0").as_ptr() as *const ::std::ffi::c_char,
            create: __hassium_create,
            create_error: $crate::export_glue::create_error,
            capabilities: $crate::export_glue::capabilities,
            execute: $crate::export_glue::execute,
            execute_keyed: $crate::export_glue::execute_keyed,
            replay: $crate::export_glue::replay,
            sync: $crate::export_glue::sync,
            sync_extent: $crate::export_glue::sync_extent,
            free: $crate::export_glue::free,
            stats: $crate::export_glue::stats,
            last_error: $crate::export_glue::last_error,
            last_failure: $crate::export_glue::last_failure,
            destroy: $crate::export_glue::destroy,
        };
        /// The engine library's entry point (see hassium-engine-abi).
        #[no_mangle]
        pub extern "C" fn hassium_engine_entry() -> *const $crate::EngineApi {
            &__HASSIUM_API
        }
    };
}
