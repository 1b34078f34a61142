//! Hassium's cluster engine: one program on many machines through MPI.
//!
//! Rank 0 runs the program; the other ranks answer its messages from the moment the
//! engine is created (see `engine`). Bases are block-distributed along their first axis
//! or, when small, kept whole on every rank ([`layout`]); every rank derives from each
//! flush the same [`plan`] of what it computes and which pieces it sends and receives,
//! and [`comm`] moves them. Each rank's part runs on the child engine (`child = "cpu"`).

pub mod comm;
pub mod config;
mod engine;
mod fold;
pub mod layout;
pub mod plan;
mod pool;

pub use config::ClusterConfig;
pub use engine::ClusterEngine;

hassium_engine_abi::export_engine!("cluster", ClusterEngine::create);

/// A digest of this library's file, equal on every rank started from one build.
pub fn build_id() -> u64 {
    static ID: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *ID.get_or_init(|| {
        let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
        // SAFETY: dladdr only reads the address and fills `info`.
        let found = unsafe { libc::dladdr(build_id as *const libc::c_void, &mut info) } != 0;
        let path = (found && !info.dli_fname.is_null())
            // SAFETY: dladdr returned a NUL-terminated file name.
            .then(|| unsafe { std::ffi::CStr::from_ptr(info.dli_fname) })
            .and_then(|p| p.to_str().ok().map(std::path::PathBuf::from));
        let bytes = path.and_then(|p| std::fs::read(p).ok()).unwrap_or_default();
        xxhash_rust::xxh3::xxh3_64(&bytes)
    })
}

/// Ranks and hosts for `python -m hassium --info`.
#[no_mangle]
pub extern "C" fn hassium_engine_describe() -> *const std::ffi::c_char {
    static TEXT: std::sync::OnceLock<std::ffi::CString> = std::sync::OnceLock::new();
    TEXT.get_or_init(|| {
        let text = match comm::hosts() {
            Some(h) => {
                let mut hosts: Vec<&str> = h.iter().map(String::as_str).collect();
                let ranks = hosts.len();
                hosts.dedup();
                format!(
                    "MPI: {ranks} ranks on {} ({})",
                    plural(hosts.len()),
                    hosts.join(", ")
                )
            }
            None => "MPI: not started (the engine starts MPI when the runtime starts)".into(),
        };
        std::ffi::CString::new(text.replace('\0', " ")).unwrap_or_default()
    })
    .as_ptr()
}

fn plural(n: usize) -> String {
    if n == 1 {
        "1 host".into()
    } else {
        format!("{n} hosts")
    }
}
