//! What the cache-fault tests of every crate put in place of a cache file: a FIFO (a
//! read of it would block), a symbolic link to itself (an open fails with ELOOP) and a
//! directory. Each replaces whatever was at `path`. Always built, though only tests call
//! it: a test-only feature would give `cargo test` other features of this crate than
//! `cargo build`, and so a second build of every crate above it.

use std::path::Path;

/// Makes `path` a FIFO.
pub fn make_fifo(path: &Path) {
    let _ = std::fs::remove_file(path);
    let c = std::ffi::CString::new(path.to_str().expect("a UTF-8 test path"))
        .expect("a path without NUL");
    // SAFETY: `c` is a NUL-terminated path that lives across the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
}

/// Makes `path` a symbolic link to itself.
pub fn make_link_loop(path: &Path) {
    let _ = std::fs::remove_file(path);
    std::os::unix::fs::symlink(path, path).expect("symlink");
}

/// Makes `path` an empty directory.
pub fn make_directory(path: &Path) {
    let _ = std::fs::remove_file(path);
    std::fs::create_dir(path).expect("create_dir");
}
