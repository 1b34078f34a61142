//! The caller's side of the boundary: opens an engine library and drives its table.

use crate::export::into_engine_ref;
use crate::table::{STATUS_OK, STATUS_UNKNOWN, WROTE_NOTHING};
use crate::wire::{encode_call_compact, encode_replay, held_instrs};
use crate::{
    Bindings, Buffers, Engine, EngineApi, EngineRef, EngineStats, Error, HostBuffer, Result,
    ABI_VERSION, ENTRY_SYMBOL,
};
use hassium_core::{BaseId, Batch, Capabilities, Kernel};
use rustc_hash::FxHashSet;
use std::ffi::{c_char, CStr};
use std::path::{Path, PathBuf};

/// An engine reached through its C table (from a loaded library or lent in-process).
pub struct LoadedEngine {
    api: &'static EngineApi,
    handle: *mut std::ffi::c_void,
    name: String,
    /// Template keys the engine was sent whole (it may have dropped some since).
    templates: FxHashSet<u128>,
}

/// Most template keys remembered; past it they are forgotten and sent whole once more.
const MAX_TEMPLATES: usize = 4096;

// SAFETY: engines are `Send` by the `Engine` trait's contract, and the handle is only used
// through `&mut self`.
unsafe impl Send for LoadedEngine {}

/// Finds an engine library: an absolute or relative path that exists is taken as is;
/// otherwise each directory of `$HASSIUM_ENGINE_PATH`, then each of `dirs`, is tried.
pub fn engine_path(library: &str, dirs: &[PathBuf]) -> Result<PathBuf> {
    let direct = Path::new(library);
    if (direct.is_absolute() || library.contains('/')) && direct.exists() {
        return Ok(direct.to_path_buf());
    }
    let mut tried = Vec::new();
    let env_dirs: Vec<PathBuf> = std::env::var_os("HASSIUM_ENGINE_PATH")
        .map(|v| std::env::split_paths(&v).collect())
        .unwrap_or_default();
    for dir in env_dirs.iter().chain(dirs) {
        let p = dir.join(library);
        if p.exists() {
            return Ok(p);
        }
        tried.push(dir.display().to_string());
    }
    Err(Error::NotAnEngine {
        path: library.to_string(),
        reason: format!(
            "library not found (looked in $HASSIUM_ENGINE_PATH and: {})",
            if tried.is_empty() {
                "nowhere".to_string()
            } else {
                tried.join(", ")
            }
        ),
    })
}

fn c_message(p: *const c_char) -> String {
    if p.is_null() {
        return "(no message)".into();
    }
    // SAFETY: engines return NUL-terminated strings that live until their next call.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// The optional symbol an engine library may export to describe the devices it can
/// drive (`extern "C" fn() -> *const c_char`, a static NUL-terminated text), for
/// `python -m hassium --info`.
pub const DESCRIBE_SYMBOL: &str = "hassium_engine_describe";

/// The device description an engine library offers through [`DESCRIBE_SYMBOL`], if any.
pub fn describe(path: &Path) -> Option<String> {
    if crate::elf::library_problem(path).is_some() {
        return None;
    }
    // SAFETY: loading an engine library runs its initialisers; it is never unloaded.
    let lib = unsafe { libloading::Library::new(path) }.ok()?;
    let lib: &'static libloading::Library = Box::leak(Box::new(lib));
    // SAFETY: the symbol's type is fixed by the ABI.
    let f: libloading::Symbol<unsafe extern "C" fn() -> *const c_char> =
        unsafe { lib.get(DESCRIBE_SYMBOL.as_bytes()) }.ok()?;
    // SAFETY: the engine returns a static NUL-terminated string or null.
    let p = unsafe { f() };
    (!p.is_null()).then(|| c_message(p))
}

impl LoadedEngine {
    /// Loads the library at `path` (never unloaded: dlclose of a Rust cdylib with
    /// thread-locals crashes at thread exit), checks its ABI version and creates an engine
    /// from `config`, handing it `child`.
    pub fn open(
        path: &Path,
        config: &toml::Table,
        child: Option<Box<dyn Engine>>,
    ) -> Result<LoadedEngine> {
        let shown = path.display().to_string();
        let not_engine = |reason: String| Error::NotAnEngine {
            path: shown.clone(),
            reason,
        };
        // A library cut short would crash the loader (SIGBUS) instead of failing.
        if let Some(why) = crate::elf::library_problem(path) {
            return Err(not_engine(why));
        }
        // SAFETY: loading a library runs its initialisers; engine libraries are ours.
        let lib =
            unsafe { libloading::Library::new(path) }.map_err(|e| not_engine(e.to_string()))?;
        let lib: &'static libloading::Library = Box::leak(Box::new(lib));
        // SAFETY: the symbol's type is fixed by the ABI.
        let entry: libloading::Symbol<unsafe extern "C" fn() -> *const EngineApi> =
            unsafe { lib.get(ENTRY_SYMBOL.as_bytes()) }
                .map_err(|_| not_engine(format!("it does not export `{ENTRY_SYMBOL}`")))?;
        // SAFETY: calling the exported entry point; it returns a pointer to a static table.
        let api = unsafe { entry() };
        if api.is_null() {
            return Err(not_engine("its entry point returned null".into()));
        }
        // SAFETY: the version field is first and read before anything else of the table.
        let found = unsafe { (*api).abi_version };
        if found != ABI_VERSION {
            return Err(Error::VersionMismatch {
                path: shown,
                found,
                expected: ABI_VERSION,
            });
        }
        // SAFETY: same version, so the table layout is ours; it is static in the library.
        let api: &'static EngineApi = unsafe { &*api };
        let text = toml::to_string(config).map_err(|e| Error::Other(e.to_string()))?;
        let child = child.map(into_engine_ref).unwrap_or_else(EngineRef::null);
        // SAFETY: text is valid for its length; child ownership passes to the engine.
        let handle = unsafe { (api.create)(text.as_ptr(), text.len(), child) };
        let name = c_message(api.name);
        if handle.is_null() {
            // SAFETY: table function, no arguments.
            let msg = c_message(unsafe { (api.create_error)() });
            return Err(Error::Engine {
                engine: format!("{name} ({shown})"),
                message: msg,
            });
        }
        Ok(LoadedEngine {
            api,
            handle,
            name,
            templates: FxHashSet::default(),
        })
    }

    /// Takes ownership of an engine lent across the boundary.
    ///
    /// # Safety
    /// `r` must be a live engine not owned by anyone else.
    pub unsafe fn from_ref(r: EngineRef, name: &str) -> Result<LoadedEngine> {
        if r.is_null() {
            return Err(Error::Other("null engine reference".into()));
        }
        // SAFETY: caller guarantees a live table, which is static.
        let api: &'static EngineApi = unsafe { &*r.api };
        if api.abi_version != ABI_VERSION {
            return Err(Error::VersionMismatch {
                path: name.into(),
                found: api.abi_version,
                expected: ABI_VERSION,
            });
        }
        let name = if name == "child" {
            c_message(api.name)
        } else {
            name.to_string()
        };
        Ok(LoadedEngine {
            api,
            handle: r.handle,
            name,
            templates: FxHashSet::default(),
        })
    }

    /// [`LoadedEngine::check`] for a call that ran `batch`: an instruction that failed
    /// while it ran comes back as `hassium_core::Error::Failed`, so the runtime can
    /// complete the rest of the batch.
    ///
    /// The engine names the failed instruction by its number in the call; `held` maps
    /// that to the batch (see [`encode_call_compact`]).
    fn check_run(
        &self,
        status: i32,
        batch: &Batch,
        held: impl FnOnce() -> Vec<usize>,
    ) -> Result<()> {
        if status == STATUS_OK {
            return Ok(());
        }
        let (mut index, mut kind) = (0u64, 0u32);
        // SAFETY: live handle; both locations are writable.
        let root = unsafe { (self.api.last_failure)(self.handle, &mut index, &mut kind) };
        let index = usize::try_from(index)
            .ok()
            .and_then(|i| held().get(i).copied());
        let instr = index.and_then(|i| Some((i, batch.instrs.get(i)?)));
        match instr {
            Some((index, instr)) if !root.is_null() => {
                Err(Error::Bytecode(hassium_core::Error::Failed {
                    index,
                    op: instr.op.name(),
                    source: Box::new(hassium_core::Error::from_kind(
                        kind & !WROTE_NOTHING,
                        c_message(root),
                    )),
                    wrote_nothing: kind & WROTE_NOTHING != 0,
                }))
            }
            _ => self.check(status),
        }
    }

    fn check(&self, status: i32) -> Result<()> {
        if status == STATUS_OK {
            return Ok(());
        }
        // SAFETY: live handle.
        let msg = c_message(unsafe { (self.api.last_error)(self.handle) });
        Err(Error::Engine {
            engine: self.name.clone(),
            message: msg,
        })
    }
}

impl Engine for LoadedEngine {
    fn name(&self) -> &str {
        &self.name
    }

    fn capabilities(&self) -> Capabilities {
        // SAFETY: live handle.
        let p = unsafe { (self.api.capabilities)(self.handle) };
        if p.is_null() {
            return Capabilities {
                opcodes: vec![],
                ..Capabilities::all()
            };
        }
        serde_json::from_str(&c_message(p)).unwrap_or_else(|_| Capabilities {
            opcodes: vec![],
            ..Capabilities::all()
        })
    }

    fn execute(&mut self, batch: &Batch, kernels: &[Kernel], buffers: &Buffers) -> Result<()> {
        let (call, held) = encode_call_compact(batch, kernels)?;
        let list = buffers.to_vec();
        // SAFETY: pointers valid for the call's duration.
        let status = unsafe {
            (self.api.execute)(
                self.handle,
                call.as_ptr(),
                call.len(),
                list.as_ptr(),
                list.len(),
            )
        };
        self.check_run(status, batch, || held)
    }

    /// The key's bindings when the engine holds the template, else the whole call.
    fn execute_keyed(
        &mut self,
        key: u128,
        batch: &Batch,
        kernels: &[Kernel],
        buffers: &Buffers,
    ) -> Result<()> {
        let list = buffers.to_vec();
        if self.templates.contains(&key) {
            let call = encode_replay(key, &Bindings::of(batch, kernels));
            // SAFETY: pointers valid for the call's duration.
            let status = unsafe {
                (self.api.replay)(
                    self.handle,
                    call.as_ptr(),
                    call.len(),
                    list.as_ptr(),
                    list.len(),
                )
            };
            if status != STATUS_UNKNOWN {
                // The template was encoded from a call of this structure: numbered alike.
                return self.check_run(status, batch, || held_instrs(batch, kernels));
            }
            self.templates.remove(&key);
        }
        let (call, held) = encode_call_compact(batch, kernels)?;
        // SAFETY: pointers valid for the call's duration.
        let status = unsafe {
            (self.api.execute_keyed)(
                self.handle,
                key as u64,
                (key >> 64) as u64,
                call.as_ptr(),
                call.len(),
                list.as_ptr(),
                list.len(),
            )
        };
        self.check_run(status, batch, || held)?;
        if self.templates.len() >= MAX_TEMPLATES {
            self.templates.clear();
        }
        self.templates.insert(key);
        Ok(())
    }

    fn sync(&mut self, base: BaseId, host: &HostBuffer) -> Result<()> {
        // SAFETY: live handle, valid record.
        let status = unsafe { (self.api.sync)(self.handle, base.0, host) };
        self.check(status)
    }

    fn sync_extent(&mut self, base: BaseId, host: &HostBuffer, lo: u64, hi: u64) -> Result<()> {
        // SAFETY: live handle, valid record.
        let status = unsafe { (self.api.sync_extent)(self.handle, base.0, host, lo, hi) };
        self.check(status)
    }

    fn free(&mut self, base: BaseId) -> Result<()> {
        // SAFETY: live handle.
        let status = unsafe { (self.api.free)(self.handle, base.0) };
        self.check(status)
    }

    fn stats(&self) -> EngineStats {
        // SAFETY: live handle.
        let p = unsafe { (self.api.stats)(self.handle) };
        if p.is_null() {
            return EngineStats::default();
        }
        serde_json::from_str(&c_message(p)).unwrap_or_default()
    }
}

impl Drop for LoadedEngine {
    fn drop(&mut self) {
        // SAFETY: the handle is live and destroyed exactly once here.
        unsafe { (self.api.destroy)(self.handle) }
    }
}
