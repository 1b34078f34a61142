//! Hassium's CPU engine.
//!
//! Each kernel is lowered and rendered to C by `hassium-codegen`, the new kernels of one
//! execute call are compiled together by the system C compiler into one shared object,
//! loaded with `libloading` (unloaded when no kernel kept in memory uses it) and cached
//! in memory and on disk. Kernels take a `[begin, end)` range of their outermost
//! parallel loop. A call is split into pieces only when the kernel's own earlier calls
//! show it would take longer on one thread than waking the pool costs
//! (`min_parallel_seconds`); the calling thread then takes pieces itself and the pool's
//! threads join as they wake, so a split never waits on a wake-up.
//! What codegen does not render (complex dtypes, unusual fusion shapes) runs on the
//! reference interpreter over the same buffers, and so does everything when no compiler
//! is installed.
//!
//! Layout: [`config`] parses the TOML table; [`compiler`] runs `cc`; [`cache`] is the
//! memory and disk kernel cache; [`run`] calls compiled kernels on the pool; [`tiered`]
//! is the background compile thread; [`vectorised`] reads which loops the compiler
//! vectorised; [`matmul`] the GEMM extension; [`sort`] the sorting extensions (radix
//! sorts on the engine's threads); [`engine`] ties them.

mod cache;
mod compiler;
mod config;
mod engine;
mod error;
mod matmul;
mod run;
mod sort;
mod tiered;
mod vectorised;

pub use compiler::LIBMVEC_DECLS;
pub use config::{CpuConfig, SpecializePolicy};
pub use engine::CpuEngine;
pub use error::Error;

hassium_engine_abi::export_engine!("cpu", CpuEngine::create);
