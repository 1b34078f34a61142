//! Where engine libraries are looked for.

use std::path::PathBuf;

/// The directory of the shared object (or executable) this code was loaded from: the
/// Python extension, the C library, or a test binary. Engines installed next to the
/// runtime are found there.
fn own_dir() -> Option<PathBuf> {
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    let addr = own_dir as *const libc::c_void;
    // SAFETY: dladdr only reads the address and fills `info`.
    if unsafe { libc::dladdr(addr, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dladdr returned a NUL-terminated path.
    let path = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) };
    let p = PathBuf::from(path.to_string_lossy().into_owned());
    std::fs::canonicalize(&p)
        .unwrap_or(p)
        .parent()
        .map(|d| d.to_path_buf())
}

/// Directories searched for engine libraries after `$HASSIUM_ENGINE_PATH`: next to the
/// runtime, next to the executable, then this checkout's build directories (so tests and
/// examples find freshly built engines).
pub fn engine_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    dirs.extend(own_dir());
    if let Ok(exe) = std::env::current_exe() {
        if let Some(d) = exe.parent() {
            dirs.push(d.to_path_buf());
            if let Some(up) = d.parent() {
                dirs.push(up.to_path_buf()); // target/<profile>/deps -> target/<profile>
            }
        }
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    for target in [
        option_env!("CARGO_TARGET_DIR").map(PathBuf::from),
        Some(root.join("target")),
    ]
    .into_iter()
    .flatten()
    {
        dirs.push(target.join("release"));
        dirs.push(target.join("debug"));
    }
    dirs.dedup();
    dirs
}
