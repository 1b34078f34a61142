//! Writes each batch as text and Graphviz into `$HASSIUM_DUMP` (`batch-<n>.txt`,
//! `batch-<n>.dot`); the runtime writes the kernels with the same `n` through
//! [`write_kernels`]`(dir, hassium_core::dump::dump_index(), …)`. Without
//! `HASSIUM_DUMP` it does nothing. It never changes the batch; put it last in the filter
//! list to see what the fuser sees.

use crate::{Error, Filter, Result};
use hassium_core::dump::{batch_dot, batch_text, kernels_dot, kernels_text};
use hassium_core::{Batch, Kernel};
use std::path::{Path, PathBuf};

pub struct Dump {
    dir: Option<PathBuf>,
}

impl Dump {
    /// Dumps into `$HASSIUM_DUMP` (read once, when the stack is built).
    pub fn from_env() -> Dump {
        Dump {
            dir: std::env::var_os("HASSIUM_DUMP").map(PathBuf::from),
        }
    }

    /// Dumps into `dir`.
    pub fn to_dir(dir: impl Into<PathBuf>) -> Dump {
        Dump {
            dir: Some(dir.into()),
        }
    }
}

impl Filter for Dump {
    fn apply(&mut self, batch: &mut Batch) -> Result<()> {
        let Some(dir) = &self.dir else {
            return Ok(());
        };
        let n = hassium_core::dump::next_dump_index();
        std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
        write(&dir.join(format!("batch-{n}.txt")), &batch_text(batch))?;
        write(&dir.join(format!("batch-{n}.dot")), &batch_dot(batch))
    }
}

/// Writes `kernels-<n>.txt` and `kernels-<n>.dot` into `dir` (created if missing).
pub fn write_kernels(dir: &Path, n: u64, batch: &Batch, kernels: &[Kernel]) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    write(
        &dir.join(format!("kernels-{n}.txt")),
        &kernels_text(batch, kernels),
    )?;
    write(
        &dir.join(format!("kernels-{n}.dot")),
        &kernels_dot(batch, kernels),
    )
}

fn write(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).map_err(|e| io(path, e))
}

fn io(path: &Path, e: std::io::Error) -> Error {
    Error::Io(format!("{}: {e}", path.display()))
}
