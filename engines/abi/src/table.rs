use crate::HostBuffer;
use std::ffi::{c_char, c_void};

/// Bumped whenever the table, the records or the bincode layout of `Batch`/`Kernel`
/// change. The loader refuses a library of another version.
pub const ABI_VERSION: u32 = 8;

/// The one symbol every engine library exports: `extern "C" fn() -> *const EngineApi`.
pub const ENTRY_SYMBOL: &str = "hassium_engine_entry";

/// Status codes returned by the table's functions.
pub const STATUS_OK: i32 = 0;
pub const STATUS_ERROR: i32 = 1;
/// `replay` only: the engine does not hold that template (send the whole call).
pub const STATUS_UNKNOWN: i32 = 2;

/// The bit of `last_failure`'s kind that says the failing kernel wrote nothing
/// (`hassium_core::Error::Failed::wrote_nothing`).
pub const WROTE_NOTHING: u32 = 1 << 31;

/// The function table an engine library hands the runtime. Every function is safe to call
/// with the handle `create` returned until `destroy`; failures return `STATUS_ERROR` and
/// leave a message readable through `last_error`.
#[repr(C)]
pub struct EngineApi {
    pub abi_version: u32,
    /// NUL-terminated engine kind name ("cpu", "opencl", …).
    pub name: *const c_char,
    /// Creates an engine from its TOML section (UTF-8, not NUL-terminated) and an optional
    /// child (a null `api` means none; ownership of the child passes to the new engine).
    /// Returns null on failure, with the message in `create_error`.
    pub create:
        unsafe extern "C" fn(config: *const u8, config_len: usize, child: EngineRef) -> *mut c_void,
    /// The message of the last failed `create` on this thread.
    pub create_error: unsafe extern "C" fn() -> *const c_char,
    /// The engine's `Capabilities` as JSON (valid until the next call on this handle).
    pub capabilities: unsafe extern "C" fn(handle: *mut c_void) -> *const c_char,
    /// Executes a bincode-encoded `(Batch, Vec<Kernel>)` over the given host buffers.
    pub execute: unsafe extern "C" fn(
        handle: *mut c_void,
        call: *const u8,
        call_len: usize,
        buffers: *const HostBuffer,
        nbuffers: usize,
    ) -> i32,
    /// `execute`, and keeps the call as the template `key` (its low and high 64 bits) for
    /// `replay`. The runtime gives one key only to calls of one structure.
    pub execute_keyed: unsafe extern "C" fn(
        handle: *mut c_void,
        key_lo: u64,
        key_hi: u64,
        call: *const u8,
        call_len: usize,
        buffers: *const HostBuffer,
        nbuffers: usize,
    ) -> i32,
    /// Runs a kept template again over other bases and scalars (`wire::encode_replay`);
    /// `STATUS_UNKNOWN` when the engine does not hold that template.
    pub replay: unsafe extern "C" fn(
        handle: *mut c_void,
        call: *const u8,
        call_len: usize,
        buffers: *const HostBuffer,
        nbuffers: usize,
    ) -> i32,
    pub sync: unsafe extern "C" fn(handle: *mut c_void, base: u64, host: *const HostBuffer) -> i32,
    /// `sync` of elements `[lo, hi)` of the base only (`Engine::sync_extent`).
    pub sync_extent: unsafe extern "C" fn(
        handle: *mut c_void,
        base: u64,
        host: *const HostBuffer,
        lo: u64,
        hi: u64,
    ) -> i32,
    pub free: unsafe extern "C" fn(handle: *mut c_void, base: u64) -> i32,
    /// The engine's `EngineStats` as JSON (valid until the next call on this handle).
    pub stats: unsafe extern "C" fn(handle: *mut c_void) -> *const c_char,
    /// The message of the last failure on this handle.
    pub last_error: unsafe extern "C" fn(handle: *mut c_void) -> *const c_char,
    /// When the last failure on this handle was an instruction failing while it ran
    /// (`hassium_core::Error::Failed`): writes the instruction's index and the error's kind
    /// (`Error::kind`) and returns the innermost message; otherwise returns null. The
    /// runtime completes the rest of such a batch (see vem's `poison`).
    pub last_failure:
        unsafe extern "C" fn(handle: *mut c_void, index: *mut u64, kind: *mut u32) -> *const c_char,
    pub destroy: unsafe extern "C" fn(handle: *mut c_void),
}

// SAFETY: the table is immutable static data (function pointers and a static string).
unsafe impl Sync for EngineApi {}
unsafe impl Send for EngineApi {}

/// An engine instance as it crosses the boundary: its table and its handle.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct EngineRef {
    pub api: *const EngineApi,
    pub handle: *mut c_void,
}

impl EngineRef {
    pub fn null() -> EngineRef {
        EngineRef {
            api: std::ptr::null(),
            handle: std::ptr::null_mut(),
        }
    }
    pub fn is_null(&self) -> bool {
        self.api.is_null()
    }
}

#[cfg(test)]
mod pin {
    use hassium_core::Opcode;

    /// FNV-1a of the opcode names in declaration order (stable across Rust releases).
    fn fingerprint() -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for op in Opcode::ALL {
            for b in op.name().bytes().chain([0]) {
                h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
            }
        }
        h
    }

    /// Opcodes cross the ABI as their serde variant index, which is their position in the
    /// enum: a row added, removed or moved renumbers those after it, and an engine built
    /// before would read other opcodes. Such a change must bump `ABI_VERSION`, so that
    /// the loader refuses the old engine; this pin fails until it does.
    #[test]
    fn the_opcode_list_is_pinned_to_the_abi_version() {
        let pinned = (8, 0x74af_75be_b463_ed1e_u64);
        assert_eq!(
            (super::ABI_VERSION, fingerprint()),
            pinned,
            "the opcode list changed: bump ABI_VERSION and update this pin to the new \
             (version, fingerprint)"
        );
    }
}
