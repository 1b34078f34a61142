use crate::{finish_kernel, Fuser, Result};
use hassium_core::{Batch, Capabilities, Kernel};

/// One kernel per instruction: no fusion. The baseline every other fuser is measured
/// against, and the safe choice for debugging an engine.
pub struct Singleton;

impl Fuser for Singleton {
    fn fuse(&mut self, batch: &Batch, _caps: &Capabilities) -> Result<Vec<Kernel>> {
        Ok(batch
            .instrs
            .iter()
            .enumerate()
            .filter(|(_, i)| !i.op.is_system())
            .map(|(k, _)| finish_kernel(batch, vec![k], |_| true))
            .collect())
    }
}
