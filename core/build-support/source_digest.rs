// Shared by the build scripts (`include!`d) of crates that key on-disk caches by the
// sources that decide what they store: the fuser's partitions, the cpu engine's
// compiled kernels and the OpenCL engine's program binaries. A build whose rules
// changed then never reads an older build's entries, even under the same version number.

/// The `.rs` files under `dir`, recursively.
fn rust_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Sets the compile-time variable `var` to a 128-bit digest (hex) of the paths and
/// contents of the `.rs` files under `dirs` (relative to the crate), and asks cargo to
/// rerun when any of them changes. Directories that do not exist (a packaged crate
/// outside this workspace) are skipped.
fn emit_source_digest(var: &str, dirs: &[&str]) {
    use std::path::PathBuf;
    let here = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let mut paths = Vec::new();
    for d in dirs {
        let d = here.join(d);
        println!("cargo:rerun-if-changed={}", d.display());
        rust_files(&d, &mut paths);
    }
    paths.sort();
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    for p in &paths {
        let rel = p.strip_prefix(&here).unwrap_or(p);
        h.update(rel.to_string_lossy().as_bytes());
        h.update(&std::fs::read(p).unwrap_or_default());
    }
    println!("cargo:rustc-env={var}={:032x}", h.digest128());
}
