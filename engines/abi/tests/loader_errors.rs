//! The loader names the file and the problem for every library that is not a usable engine.

use hassium_engine_abi::{engine_path, Error, LoadedEngine, ABI_VERSION};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Compiles a small C shared library into `dir`.
fn c_library(dir: &Path, name: &str, source: &str) -> PathBuf {
    let src = dir.join(format!("{name}.c"));
    let lib = dir.join(format!("lib{name}.so"));
    std::fs::write(&src, source).unwrap();
    let status = Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&lib)
        .arg(&src)
        .status()
        .expect("a C compiler (cc) is installed by scripts/setup.sh");
    assert!(status.success());
    lib
}

fn open(path: &Path) -> Error {
    match LoadedEngine::open(path, &toml::Table::new(), None) {
        Ok(_) => panic!("{} must not load", path.display()),
        Err(e) => e,
    }
}

#[test]
fn a_library_of_another_abi_version_is_refused_naming_both_versions() {
    let dir = tempfile::tempdir().unwrap();
    let wrong = ABI_VERSION + 41;
    let lib = c_library(
        dir.path(),
        "old_engine",
        &format!(
            "struct table {{ unsigned version; }};\n\
             static struct table t = {{ {wrong}u }};\n\
             const struct table *hassium_engine_entry(void) {{ return &t; }}\n"
        ),
    );
    let e = open(&lib);
    let msg = e.to_string();
    assert!(matches!(e, Error::VersionMismatch { .. }), "{msg}");
    assert!(
        msg.contains("libold_engine.so") && msg.contains(&wrong.to_string()),
        "{msg}"
    );
}

#[test]
fn a_library_without_the_entry_symbol_is_not_an_engine() {
    let dir = tempfile::tempdir().unwrap();
    let lib = c_library(dir.path(), "plain", "int answer(void) { return 42; }\n");
    let msg = open(&lib).to_string();
    assert!(
        msg.contains("libplain.so") && msg.contains("hassium_engine_entry"),
        "{msg}"
    );
}

#[test]
fn a_file_that_is_no_library_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let lib = dir.path().join("libtext.so");
    std::fs::write(&lib, "not an ELF file").unwrap();
    let msg = open(&lib).to_string();
    assert!(
        msg.contains("libtext.so") && msg.contains("not a Hassium engine"),
        "{msg}"
    );
}

#[test]
fn a_missing_library_lists_where_it_was_looked_for() {
    let msg = engine_path(
        "libhassium_engine_nowhere.so",
        &[PathBuf::from("/nonexistent/dir")],
    )
    .unwrap_err()
    .to_string();
    assert!(
        msg.contains("libhassium_engine_nowhere.so") && msg.contains("/nonexistent/dir"),
        "{msg}"
    );
}
