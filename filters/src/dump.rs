//! Writes each batch as text and Graphviz into `$HASSIUM_DUMP` (`batch-<n>.txt`,
//! `batch-<n>.dot`); the runtime writes the kernels with the same `n` through
//! `hassium_fuser::dump_kernels(dir, hassium_fuser::dump::dump_index(), …)`. Without
//! `HASSIUM_DUMP` it does nothing. It never changes the batch; put it last in the filter
//! list to see what the fuser sees.

use crate::{Error, Filter, Result};
use hassium_core::Batch;
use std::path::PathBuf;

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
        let n = hassium_fuser::dump::next_dump_index();
        hassium_fuser::dump::dump_batch(dir, n, batch).map_err(|e| Error::Io(e.to_string()))
    }
}
