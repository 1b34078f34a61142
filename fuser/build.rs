//! Gives the fuser a digest of its own sources and the core's (`HASSIUM_FUSER_SOURCES`).
//! Partitions kept on disk (`FuseCache::set_store`) are keyed by it, so a build whose
//! fusion rules changed never reads what an older build fused, even under one version.

use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn main() {
    let here = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    // The core defines the views and overlap rules legality is decided by. Outside this
    // workspace (a packaged crate) only the fuser's own sources are found.
    let dirs = [here.join("src"), here.join("../core/src")];
    let mut paths = Vec::new();
    for d in &dirs {
        println!("cargo:rerun-if-changed={}", d.display());
        files(d, &mut paths);
    }
    paths.sort();
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    for p in &paths {
        let rel = p.strip_prefix(&here).unwrap_or(p);
        h.update(rel.to_string_lossy().as_bytes());
        h.update(&std::fs::read(p).unwrap_or_default());
    }
    println!(
        "cargo:rustc-env=HASSIUM_FUSER_SOURCES={:032x}",
        h.digest128()
    );
}
