//! Files of the on-disk caches that engines and the runtime keep under `cache_dir`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A configured path with a leading `~/` taken as `$HOME` (as a shell would), for the
/// `cache_dir` options of engines and the runtime's partition files beside them.
pub fn expand_home(p: &str) -> PathBuf {
    if let Some(rest) = p.strip_prefix("~/") {
        if let Some(home) = std::env::var_os("HOME") {
            return PathBuf::from(home).join(rest);
        }
    }
    PathBuf::from(p)
}

/// A fresh hidden name in `dir` ending in `.ext`, unique across the processes and
/// threads that share the directory (process id, a counter, the time).
pub fn temp_path(dir: &Path, ext: &str) -> PathBuf {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    dir.join(format!(".tmp-{}-{n}-{t:x}.{ext}", std::process::id()))
}

/// Writes `bytes` to `path` through a temporary file in the same directory renamed into
/// place, so a process reading `path` at the same time sees the old file or the new one,
/// never half of one. The temporary file is removed when the rename fails.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = temp_path(dir, "part");
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_atomic_write_replaces_the_file_and_leaves_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("entry");
        write_atomic(&path, b"first").unwrap();
        write_atomic(&path, b"second").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"second");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        let missing = dir.path().join("no-such-dir").join("entry");
        assert!(write_atomic(&missing, b"lost").is_err());
        assert_ne!(temp_path(dir.path(), "c"), temp_path(dir.path(), "c"));
    }
}
