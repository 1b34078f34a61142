use crate::legality::Graph;
use crate::partition::emit;
use crate::{Fuser, Result};
use hassium_core::{Batch, Capabilities, Kernel};

/// Fuses in program order: each instruction joins the current kernel when that is legal,
/// else starts a new one. Kernels are runs of consecutive instructions, so they can never
/// form a cycle. Cheap (linear in the batch) and a good baseline for `greedy`.
pub struct Serial;

/// The serial partition's blocks (node lists) and its cost.
pub(crate) fn serial_groups(g: &Graph) -> (Vec<Vec<u32>>, u64) {
    let mut groups = Vec::new();
    let mut cost = 0;
    let mut current = None;
    for n in 0..g.len() as u32 {
        let single = g.singleton(n);
        current = Some(match current.take() {
            None => single,
            Some(mut block) => match g.check(&block, &single) {
                Some(m) => {
                    g.absorb(&mut block, single, m);
                    block
                }
                None => {
                    cost += block.cost;
                    groups.push(block.nodes);
                    single
                }
            },
        });
    }
    if let Some(block) = current {
        cost += block.cost;
        groups.push(block.nodes);
    }
    (groups, cost)
}

impl Fuser for Serial {
    fn fuse(&mut self, batch: &Batch, caps: &Capabilities) -> Result<Vec<Kernel>> {
        let g = Graph::new(batch, caps);
        Ok(emit(&g, serial_groups(&g).0))
    }
}
