//! Fused partitions kept as files, so a program's next run skips fusion (see
//! `hassium_fuser::PartitionStore`). They live in `<cache_dir>/fuse-<version>/`, next to
//! the engine's kernels: one small file per batch structure, written atomically (a
//! temporary file renamed into place), so processes sharing the directory never see half
//! an entry; a damaged entry fails its checksum and is fused and written again.
//!
//! Entries are keyed by the fusion sources' digest as well (see the fuser), so a rebuilt
//! fuser leaves its predecessor's entries behind, never read again. Opening the store
//! therefore tidies in the background: other versions' `fuse-*` directories go as other
//! builds' kernels do (`hassium_engine_abi::prune_other_builds`), and at most hourly the
//! least recently used entries beyond [`MAX_BYTES`] (a hit refreshes an entry's time).

use hassium_engine_abi::{
    create_private_dir, mark_used, open_cache_root, read_regular, tidy, touch, CacheLocation,
};
use hassium_fuser::PartitionStore;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Most bytes of partitions kept: entries are a few kilobytes, so thousands of batch
/// structures fit.
pub const MAX_BYTES: u64 = 64 << 20;
/// How often the directory's size is checked.
const TRIM_EVERY: Duration = Duration::from_secs(3600);

pub struct PartitionFiles {
    dir: PathBuf,
    /// Set after the first failed write: the directory is not writable, so later
    /// partitions are not tried (nor warned about) again.
    failed: bool,
}

/// A partition is a few kilobytes: a file much longer is not one.
const MAX_ENTRY_BYTES: u64 = 16 << 20;

impl PartitionFiles {
    /// Partitions under the cache directory `location` (an engine's `cache_dir`), when
    /// it can be used: it passes the checks of `hassium_engine_abi::open_cache_root`
    /// (private, owned by the user) and outlives the process.
    pub fn open(location: &CacheLocation) -> Option<PartitionFiles> {
        let root = open_cache_root(location).filter(|r| r.persistent)?;
        Some(PartitionFiles::new(&root.path))
    }

    /// Partitions under `cache_dir`, a directory already checked.
    pub fn new(cache_dir: &Path) -> PartitionFiles {
        let dir = cache_dir.join(format!("fuse-{}", env!("CARGO_PKG_VERSION")));
        if dir.is_dir() {
            let _ = mark_used(&dir);
            let (root, ours) = (cache_dir.to_path_buf(), dir.clone());
            let _ = std::thread::Builder::new()
                .name("hassium-fuse-tidy".into())
                .spawn(move || tidy_partitions(&root, &ours, MAX_BYTES));
        }
        PartitionFiles { dir, failed: false }
    }

    fn path(&self, key: u128) -> PathBuf {
        self.dir.join(format!("{key:032x}.part"))
    }

    fn write(&self, key: u128, bytes: &[u8]) -> std::io::Result<()> {
        create_private_dir(&self.dir)?;
        hassium_engine_abi::write_atomic(&self.path(key), bytes)
    }
}

/// Removes other versions' partition directories under `root` that are no longer
/// wanted and, when due, trims `ours` to `max_bytes`.
fn tidy_partitions(root: &Path, ours: &Path, max_bytes: u64) {
    let gone = tidy(root, "fuse-", ours, (max_bytes, TRIM_EVERY), |n| {
        n.ends_with(".part")
    });
    if !gone.is_empty() {
        tracing::debug!(
            "partition store over {max_bytes} bytes: removed {}",
            gone.len()
        );
    }
}

impl PartitionStore for PartitionFiles {
    fn load(&mut self, key: u128) -> Option<Vec<u8>> {
        let path = self.path(key);
        // Without blocking, regular files only: a FIFO here would hang every run. A
        // file that is not one is removed (the fuser checks the content's checksum and
        // writes a damaged entry again).
        match read_regular(&path, MAX_ENTRY_BYTES) {
            Ok(bytes) => {
                touch(&path);
                Some(bytes)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                tracing::warn!(
                    "fused partition {} is damaged ({e}); fusing again",
                    path.display()
                );
                if std::fs::remove_file(&path).is_err() {
                    let _ = std::fs::remove_dir(&path);
                }
                None
            }
        }
    }

    fn save(&mut self, key: u128, bytes: &[u8]) {
        if self.failed {
            return;
        }
        if let Err(e) = self.write(key, bytes) {
            self.failed = true;
            tracing::warn!(
                "fused partitions are not kept in {}: {e}",
                self.dir.display()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::SystemTime;

    #[test]
    fn a_saved_partition_reads_back_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let mut files = PartitionFiles::new(dir.path());
        assert_eq!(files.load(1), None);
        files.save(1, b"first");
        files.save(1, b"second");
        files.save(2, b"other");
        assert_eq!(files.load(1).as_deref(), Some(&b"second"[..]));
        assert_eq!(files.load(2).as_deref(), Some(&b"other"[..]));
        let names: Vec<String> = std::fs::read_dir(&files.dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
        assert!(names.iter().all(|n| n.ends_with(".part")), "{names:?}");
    }

    /// Tidying keeps the entry a load just used, trims the older one, and retires a
    /// month-old other version's directory; opening a store does it in the background.
    #[test]
    fn tidying_trims_unused_entries_and_retires_other_versions() {
        let root = tempfile::tempdir().unwrap();
        let mut files = PartitionFiles::new(root.path());
        files.save(1, &[1; 3000]);
        files.save(2, &[2; 3000]);
        let ago = |h: u64| SystemTime::now() - Duration::from_secs(h * 3600);
        for (key, hours) in [(1, 3), (2, 2)] {
            let f = std::fs::File::options()
                .write(true)
                .open(files.path(key))
                .unwrap();
            f.set_modified(ago(hours)).unwrap();
        }
        assert!(files.load(1).is_some());
        let old = root.path().join("fuse-0.0.1");
        std::fs::create_dir_all(&old).unwrap();
        std::fs::File::open(&old)
            .unwrap()
            .set_modified(ago(40 * 24))
            .unwrap();
        tidy_partitions(root.path(), &files.dir, 5000);
        assert!(files.load(1).is_some(), "the entry just used went");
        assert!(
            files.load(2).is_none(),
            "the least recently used entry stayed"
        );
        assert!(!old.exists(), "the old version's directory stayed");
        // Opening a store with a directory in place tidies on a background thread.
        std::fs::create_dir_all(&old).unwrap();
        std::fs::File::open(&old)
            .unwrap()
            .set_modified(ago(40 * 24))
            .unwrap();
        let _again = PartitionFiles::new(root.path());
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while old.exists() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(!old.exists(), "opening the store did not tidy");
    }

    /// A FIFO, a link loop or a directory in an entry's place is a miss, not a hang,
    /// and is removed so that the entry can be written again.
    #[test]
    fn an_entry_that_is_not_a_regular_file_is_a_miss_and_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let mut files = PartitionFiles::new(dir.path());
        files.save(1, b"first");
        let path = files.path(1);
        use hassium_engine_abi::faults::{make_directory, make_fifo, make_link_loop};
        let faults: [fn(&Path); 3] = [make_fifo, make_link_loop, make_directory];
        for fault in faults {
            fault(&path);
            assert_eq!(files.load(1), None);
            assert!(std::fs::symlink_metadata(&path).is_err());
            files.save(1, b"again");
            assert_eq!(files.load(1).as_deref(), Some(&b"again"[..]));
        }
    }

    /// A world-writable or foreign cache directory keeps no partitions (they decide
    /// which code runs).
    #[test]
    fn partitions_are_not_kept_in_a_directory_others_can_write() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let at = CacheLocation::At(dir.path().to_path_buf());
        assert!(PartitionFiles::open(&at).is_some());
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(PartitionFiles::open(&at).is_none());
        assert!(PartitionFiles::open(&CacheLocation::Off).is_none());
    }

    #[test]
    fn a_cache_dir_that_cannot_be_made_only_stops_saving() {
        let dir = tempfile::tempdir().unwrap();
        let blocker = dir.path().join("a-file");
        std::fs::write(&blocker, b"not a directory").unwrap();
        let mut files = PartitionFiles::new(&blocker);
        files.save(1, b"lost");
        assert!(files.failed);
        assert_eq!(files.load(1), None);
    }
}
