//! Fused partitions kept as files, so a program's next run skips fusion (see
//! `hassium_fuser::PartitionStore`). They live in `<cache_dir>/fuse-<version>/`, next to
//! the engine's kernels: one small file per batch structure, written atomically (a
//! temporary file renamed into place), so processes sharing the directory never see half
//! an entry; a damaged entry fails its checksum and is fused and written again.

use hassium_fuser::PartitionStore;
use std::path::{Path, PathBuf};

pub struct PartitionFiles {
    dir: PathBuf,
    /// Set after the first failed write: the directory is not writable, so later
    /// partitions are not tried (nor warned about) again.
    failed: bool,
}

impl PartitionFiles {
    /// Partitions under `cache_dir` (an engine's configured `cache_dir`).
    pub fn new(cache_dir: &Path) -> PartitionFiles {
        PartitionFiles {
            dir: cache_dir.join(format!("fuse-{}", env!("CARGO_PKG_VERSION"))),
            failed: false,
        }
    }

    fn path(&self, key: u128) -> PathBuf {
        self.dir.join(format!("{key:032x}.part"))
    }

    fn write(&self, key: u128, bytes: &[u8]) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        hassium_engine_abi::write_atomic(&self.path(key), bytes)
    }
}

impl PartitionStore for PartitionFiles {
    fn load(&mut self, key: u128) -> Option<Vec<u8>> {
        std::fs::read(self.path(key)).ok()
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
