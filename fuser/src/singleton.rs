use crate::legality::Graph;
use crate::partition::emit;
use crate::{Fuser, Result};
use hassium_core::{Batch, Capabilities, Kernel};

/// One kernel per instruction: no fusion. The baseline every other fuser is measured
/// against, and the safe choice for debugging an engine.
pub struct Singleton;

impl Fuser for Singleton {
    fn fuse(&mut self, batch: &Batch, caps: &Capabilities) -> Result<Vec<Kernel>> {
        let g = Graph::new(batch, caps);
        Ok(emit(&g, (0..g.len() as u32).map(|n| vec![n]).collect()))
    }
}
