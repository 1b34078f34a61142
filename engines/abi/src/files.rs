//! Files of the on-disk caches that engines and the runtime keep under `cache_dir`.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

/// Opens `path` for reading without blocking and only when it is a regular file (not a
/// symbolic link, FIFO, socket or device): a FIFO put in place of a cache file or a
/// config would block the `open` or the read forever, and a device could feed anything.
/// Symbolic links are refused too (`O_NOFOLLOW`; also what a link loop gives): no cache
/// file is ever one.
pub fn open_regular(path: &Path) -> std::io::Result<(File, u64)> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => std::io::Error::other("it is a symbolic link"),
            _ => e,
        })?;
    let meta = f.metadata()?;
    let kind = meta.file_type();
    if !kind.is_file() {
        let what = if kind.is_fifo() {
            "a FIFO"
        } else if kind.is_socket() {
            "a socket"
        } else if kind.is_char_device() || kind.is_block_device() {
            "a device"
        } else if kind.is_dir() {
            "a directory"
        } else {
            "not a regular file"
        };
        return Err(std::io::Error::other(format!(
            "it is {what}, not a regular file"
        )));
    }
    Ok((f, meta.len()))
}

/// The whole of the regular file `path` (see [`open_regular`]), refused when it is longer
/// than `max` bytes or changes length while read.
pub fn read_regular(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    let (f, len) = open_regular(path)?;
    if len > max {
        return Err(std::io::Error::other(format!(
            "it is {len} bytes long, more than the {max} expected"
        )));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    f.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 != len {
        return Err(std::io::Error::other("it changed while it was read"));
    }
    Ok(bytes)
}

/// Opens `path` for writing (creating it) without blocking on a FIFO (`ENXIO` instead)
/// or following a symbolic link: for stamp files in cache directories.
fn open_write_nonblocking(path: &Path) -> std::io::Result<File> {
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

/// The file `program` names, found on `PATH` as a shell would (a name with a `/` is a
/// path), links followed.
pub fn find_program(program: &str) -> Option<PathBuf> {
    let found = if program.contains('/') {
        Some(PathBuf::from(program))
    } else {
        std::env::split_paths(&std::env::var_os("PATH")?)
            .map(|d| d.join(program))
            .find(|p| p.is_file())
    }?;
    std::fs::canonicalize(found).ok()
}

/// A line saying which C compiler `program` is, for `python -m hassium --info`: its path
/// and the first line of its `--version`, or that it is missing (kernels then run
/// interpreted).
pub fn describe_compiler(program: &str) -> String {
    let Some(path) = find_program(program) else {
        return format!("`{program}` not found: kernels run interpreted (slow)");
    };
    let version = std::process::Command::new(&path)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output();
    match version {
        Ok(out) if out.status.success() => {
            let text = String::from_utf8_lossy(&out.stdout);
            format!(
                "{} ({})",
                path.display(),
                text.lines().next().unwrap_or("").trim()
            )
        }
        _ => format!(
            "{}: `--version` fails; it may not compile kernels (then they run interpreted)",
            path.display()
        ),
    }
}

/// With `HASSIUM_DUMP=dir` set, keeps a generated source as `dir/name` for reading and
/// building by hand (the runtime writes each batch's kernels there too); otherwise, and
/// when the directory cannot be written, does nothing.
pub fn dump_source(name: &str, source: &str) {
    if let Some(dir) = std::env::var_os("HASSIUM_DUMP") {
        let dir = PathBuf::from(dir);
        if std::fs::create_dir_all(&dir).is_ok() {
            let _ = std::fs::write(dir.join(name), source);
        }
    }
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
    open_write_nonblocking(&dir.join(STAMP))?.set_modified(SystemTime::now())
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

/// Keeps a build's cache directory within `limit` bytes: when its files add up to more,
/// removes the least recently modified files that `evictable` accepts (by file name)
/// until what is left fits in four fifths of `limit`, so the next trims are not due at
/// once. Without it one build's directory only grows: every new kernel shape adds a
/// library (a test suite leaves hundreds of megabytes). Callers refresh a file's time
/// when they use it, which makes this least recently used. Returns the files removed;
/// one that cannot be removed is skipped.
pub fn trim_to_size(dir: &Path, limit: u64, evictable: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut total = 0u64;
    let mut candidates: Vec<(SystemTime, u64, PathBuf)> = Vec::new();
    for e in entries.flatten() {
        let Ok(meta) = e.metadata() else { continue };
        if !meta.is_file() {
            continue;
        }
        total += meta.len();
        if evictable(&e.file_name().to_string_lossy()) {
            let time = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            candidates.push((time, meta.len(), e.path()));
        }
    }
    if total <= limit {
        return Vec::new();
    }
    candidates.sort();
    let target = limit / 5 * 4;
    let mut removed = Vec::new();
    for (_, len, path) in candidates {
        if total <= target {
            break;
        }
        if std::fs::remove_file(&path).is_ok() {
            total = total.saturating_sub(len);
            removed.push(path);
        }
    }
    removed
}

/// Whether a periodic job recorded by the stamp file `stamp` is due: the stamp is
/// missing or older than `every`. A due job's stamp is renewed at once, so processes
/// that start later within the period skip it (two starting at the same instant may
/// both do it, which is harmless). Not due when the stamp cannot be written.
pub fn due(stamp: &Path, every: Duration) -> bool {
    let last = std::fs::metadata(stamp).and_then(|m| m.modified());
    let due = match last {
        Ok(t) => t.elapsed().map_or(true, |age| age >= every),
        Err(_) => true,
    };
    due && open_write_nonblocking(stamp)
        .and_then(|f| f.set_modified(SystemTime::now()))
        .is_ok()
}

/// Records that the cache file `path` was used now, so that [`trim_to_size`] removes
/// files used less recently first. A failure (a read-only cache) changes nothing else.
pub fn touch(path: &Path) {
    let _ = std::fs::File::options()
        .write(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .and_then(|f| f.set_modified(SystemTime::now()));
}

/// The housekeeping of a versioned cache directory `ours` (named `<prefix>…` under
/// `root`), for a background thread when the cache opens: other versions' directories go
/// ([`prune_other_builds`]), and at most every `every` `ours` is trimmed to `max_bytes`
/// (0 = no limit) over the files `evictable` accepts ([`trim_to_size`]). Returns the
/// files trimmed. The caller marks `ours` used first ([`mark_used`]).
pub fn tidy(
    root: &Path,
    prefix: &str,
    ours: &Path,
    (max_bytes, every): (u64, Duration),
    evictable: impl Fn(&str) -> bool,
) -> Vec<PathBuf> {
    prune_other_builds(root, prefix, ours, Retention::DEFAULT);
    if max_bytes > 0 && due(&ours.join("last-trimmed"), every) {
        trim_to_size(ours, max_bytes, evictable)
    } else {
        Vec::new()
    }
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
        aged_file(&dir, STAMP, 0, ago);
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

    /// Writes `name` of `len` bytes under `dir`, last modified `ago` before now.
    fn aged_file(dir: &Path, name: &str, len: usize, ago: Duration) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, vec![0u8; len]).unwrap();
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(SystemTime::now() - ago)
            .unwrap();
        path
    }

    #[test]
    fn trimming_removes_the_oldest_evictable_files_down_to_four_fifths_of_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let hour = Duration::from_secs(3600);
        let oldest = aged_file(dir.path(), "k-1.so", 400, 3 * hour);
        let middle = aged_file(dir.path(), "k-2.so", 400, 2 * hour);
        let newest = aged_file(dir.path(), "k-3.so", 400, hour);
        // Older than every library, but not evictable.
        let entry = aged_file(dir.path(), "a.entry", 100, 9 * hour);
        let is_lib = |n: &str| n.ends_with(".so");
        // 1300 bytes fit a limit of 1300: nothing goes.
        assert!(trim_to_size(dir.path(), 1300, is_lib).is_empty());
        // Over 1000: down to 800, which takes the two oldest libraries.
        assert_eq!(trim_to_size(dir.path(), 1000, is_lib), vec![oldest, middle]);
        assert!(newest.exists() && entry.exists());
        // Under a tiny limit the last library goes; the entry stays, over the limit.
        assert_eq!(trim_to_size(dir.path(), 100, is_lib).len(), 1);
        assert!(entry.exists());
        assert!(trim_to_size(&dir.path().join("missing"), 1, is_lib).is_empty());
    }

    #[test]
    fn a_periodic_job_is_due_once_per_period() {
        let dir = tempfile::tempdir().unwrap();
        let stamp = dir.path().join("last-trimmed");
        let hour = Duration::from_secs(3600);
        assert!(due(&stamp, hour), "no stamp yet");
        assert!(!due(&stamp, hour), "stamped just now");
        aged_file(dir.path(), "last-trimmed", 0, 2 * hour);
        assert!(due(&stamp, hour), "stamped two hours ago");
        assert!(
            !due(&dir.path().join("no-such-dir/stamp"), hour),
            "cannot stamp"
        );
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
