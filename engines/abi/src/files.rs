//! Files of the on-disk caches that engines and the runtime keep under `cache_dir`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

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

/// The file whose modification time says when a build's cache directory was last used.
const STAMP: &str = "last-used";

/// How long other builds' cache directories are kept (see [`prune_other_builds`]).
#[derive(Clone, Copy, Debug)]
pub struct Retention {
    /// The most recently used other builds kept whatever their age.
    pub keep: usize,
    /// Other builds unused for longer than this are removed even within `keep`.
    pub stale_after: Duration,
    /// Builds used more recently than this are never removed: a process of that build
    /// may be running and compiling into its directory.
    pub in_use: Duration,
}

impl Retention {
    /// Two other builds; a month; ten minutes.
    pub const DEFAULT: Retention = Retention {
        keep: 2,
        stale_after: Duration::from_secs(30 * 24 * 3600),
        in_use: Duration::from_secs(600),
    };
}

/// Records that `dir` (a build's cache directory) is used now.
pub fn mark_used(dir: &Path) -> std::io::Result<()> {
    std::fs::File::create(dir.join(STAMP))?.set_modified(SystemTime::now())
}

/// When the build whose cache directory is `dir` was last used: its stamp, or the
/// directory's own modification time (a file was added) for one without a stamp.
fn last_used(dir: &Path) -> Option<SystemTime> {
    let stamp = std::fs::metadata(dir.join(STAMP)).and_then(|m| m.modified());
    stamp
        .or_else(|_| std::fs::metadata(dir).and_then(|m| m.modified()))
        .ok()
}

/// Removes the cache directories of other builds under `root`, those named
/// `<prefix>…` other than `ours`, that `keep` says are no longer wanted: beyond the
/// `keep.keep` most recently used, or unused for `keep.stale_after`, but never one used
/// within `keep.in_use`. Each build (version, compiler, sources) has its own directory,
/// so without this every upgrade or rebuild would leave its predecessor's kernels on disk
/// for good. Returns the directories removed. Failures only leave a directory behind; a
/// process whose directory is removed under it recreates it when it next writes.
pub fn prune_other_builds(root: &Path, prefix: &str, ours: &Path, keep: Retention) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let now = SystemTime::now();
    let mut others: Vec<(Duration, PathBuf)> = entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .filter(|p| p.file_name() != ours.file_name())
        .filter_map(|p| {
            let age = now.duration_since(last_used(&p)?).unwrap_or_default();
            Some((age, p))
        })
        .collect();
    others.sort();
    let mut removed = Vec::new();
    for (rank, (age, path)) in others.into_iter().enumerate() {
        let unwanted = rank >= keep.keep || age > keep.stale_after;
        // Renamed out of the way first: deleting a large directory takes a while, and a
        // half-deleted one must neither look recently used (removing files changes its
        // time) nor be mistaken for a live build.
        if unwanted && age > keep.in_use && std::fs::rename(&path, temp_path(root, TRASH)).is_ok() {
            removed.push(path);
        }
    }
    empty_trash(root);
    removed
}

/// The extension of directories renamed for removal (see [`prune_other_builds`]).
const TRASH: &str = "trash";

/// Removes the directories under `root` renamed for removal, including those a process
/// stopped before it finished removing.
fn empty_trash(root: &Path) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if name.starts_with(".tmp-") && name.ends_with(&format!(".{TRASH}")) {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A build directory `name` under `root` last used `ago` before now.
    fn build_dir(root: &Path, name: &str, ago: Duration) -> PathBuf {
        let dir = root.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("k-1.so"), b"kernels").unwrap();
        mark_used(&dir).unwrap();
        std::fs::File::options()
            .write(true)
            .open(dir.join(STAMP))
            .unwrap()
            .set_modified(SystemTime::now() - ago)
            .unwrap();
        dir
    }

    #[test]
    fn other_builds_beyond_the_newest_two_or_a_month_old_go_and_nothing_else() {
        let root = tempfile::tempdir().unwrap();
        let min = Duration::from_secs(60);
        let ours = build_dir(root.path(), "cpu-1-a", 90 * 24 * 60 * min);
        let recent = build_dir(root.path(), "cpu-1-b", min);
        let hours = |h: u32| build_dir(root.path(), &format!("cpu-1-h{h}"), min * 60 * h);
        let (two, three, four) = (hours(2), hours(3), hours(4));
        let old = build_dir(root.path(), "cpu-0-old", 40 * 24 * 60 * min);
        let other_kind = build_dir(root.path(), "fuse-0", 40 * 24 * 60 * min);
        std::fs::write(root.path().join("cpu-file"), b"not a directory").unwrap();
        let mut removed = prune_other_builds(root.path(), "cpu-", &ours, Retention::DEFAULT);
        removed.sort();
        let mut want = vec![three, four, old];
        want.sort();
        assert_eq!(removed, want);
        for kept in [&ours, &recent, &two, &other_kind] {
            assert!(
                kept.join("k-1.so").exists(),
                "{} was removed",
                kept.display()
            );
        }
        assert!(root.path().join("cpu-file").exists());
        assert_eq!(
            std::fs::read_dir(root.path()).unwrap().count(),
            5,
            "trash is left"
        );
        // A build in use is kept even beyond the count, and a stale one within it goes.
        let in_use = Retention {
            keep: 0,
            ..Retention::DEFAULT
        };
        assert!(prune_other_builds(root.path(), "cpu-", &ours, in_use) == vec![two]);
        assert!(recent.exists());
    }

    #[test]
    fn a_directory_without_a_stamp_counts_as_used_when_it_last_changed() {
        let root = tempfile::tempdir().unwrap();
        let ours = root.path().join("cpu-new");
        std::fs::create_dir_all(root.path().join("cpu-unstamped")).unwrap();
        // What a process stopped halfway through a removal left.
        let left = root.path().join(".tmp-1-0-0.trash");
        std::fs::create_dir_all(&left).unwrap();
        std::fs::write(left.join("k-1.so"), b"kernels").unwrap();
        assert!(prune_other_builds(root.path(), "cpu-", &ours, Retention::DEFAULT).is_empty());
        assert!(root.path().join("cpu-unstamped").exists());
        assert!(!left.exists(), "the trash is still there");
        let missing = root.path().join("missing");
        assert!(prune_other_builds(&missing, "cpu-", &ours, Retention::DEFAULT).is_empty());
    }

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
