//! The boundary between the runtime and engines.
//!
//! Rust has no stable ABI, so an engine is a shared object exporting one symbol,
//! [`ENTRY_SYMBOL`], that returns a `#[repr(C)]` [`EngineApi`] table. Only C data crosses:
//! batches and kernels travel as bincode bytes (the format is pinned by [`ABI_VERSION`];
//! decoded by hand, see `wire.rs`),
//! host buffers as [`HostBuffer`] records, errors as C strings. A call of a structure the
//! engine has seen travels as its key and bindings only (`template.rs`).
//!
//! Engine authors implement [`Engine`] and call [`export_engine!`]; the runtime (and a
//! parent engine reaching its child) uses [`LoadedEngine`], which implements [`Engine`]
//! again on the caller's side, so code above never knows whether an engine is in-process.

mod buffers;
mod cache_dir;
mod config;
mod elf;
mod engine;
mod error;
mod export;
pub mod faults;
mod files;
mod loader;
mod log;
pub mod precheck;
mod process;
mod table;
mod template;
mod wire;

pub use buffers::{Buffers, HostBuffer};
pub use config::{read_config, read_value, SpecializePolicy, RUNTIME_KEYS};
pub use engine::{
    slowest_kernels, Engine, EngineContext, EngineStats, KernelStats, MAX_KERNEL_STATS,
};
pub use error::{Error, Result};
pub use export::{into_engine_ref, ExportedEngine};

/// The glue `export_engine!` expands to; not for direct use.
#[doc(hidden)]
pub mod export_glue {
    pub use crate::export::{
        capabilities, create_error, create_with, destroy, execute, execute_keyed, free, last_error,
        last_failure, replay, stats, sync, sync_extent,
    };
}
pub use cache_dir::{
    cache_home, cache_location, config_home, create_private_dir, open_cache_root, private_temp_dir,
    unsafe_dir_reason, CacheLocation, CacheRoot,
};
pub use elf::{elf_problem, library_problem};
pub use files::{
    describe_compiler, due, dump_source, find_program, mark_used, open_regular, prune_other_builds,
    read_regular, temp_path, tidy, touch, trim_to_size, write_atomic, Retention,
};
pub use loader::{describe, engine_path, LoadedEngine, DESCRIBE_SYMBOL};
pub use log::{init_engine_logging, warning_line};
pub use process::process_generation;
pub use table::{EngineApi, EngineRef, ABI_VERSION, ENTRY_SYMBOL};
pub use template::{Bindings, Memo, Template};
pub use wire::{decode_call, decode_replay, encode_call, encode_call_compact, encode_replay};
