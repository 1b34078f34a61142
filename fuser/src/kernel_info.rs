use hassium_core::{BaseId, Batch, Kernel};
use std::collections::BTreeSet;

/// Fills a kernel's derived fields from its instruction list: the iteration shape (the
/// input shape of a reduction or scan, else the first output's), the bases it contracts
/// (created and freed inside it: written by it, freed in the batch, and touched by no
/// other kernel), and the bases it reads from and writes to memory.
///
/// `touched_elsewhere` says whether a base is used by an instruction outside the kernel.
pub fn finish_kernel(batch: &Batch, instrs: Vec<usize>, touched_elsewhere: impl Fn(BaseId) -> bool) -> Kernel {
    let mut reads = BTreeSet::new();
    let mut writes = BTreeSet::new();
    let mut shape = None;
    for &k in &instrs {
        let i = &batch.instrs[k];
        if shape.is_none() {
            shape = Some(match i.op.class() {
                hassium_core::OpClass::Reduce | hassium_core::OpClass::Scan => {
                    i.ins[0].as_view().map_or(i.out.shape.clone(), |v| v.shape.clone())
                }
                _ => i.out.shape.clone(),
            });
        }
        for v in i.input_views() {
            // A base read after this kernel wrote it is served from registers; anything
            // else is read from memory.
            if !writes.contains(&v.base) {
                reads.insert(v.base);
            }
        }
        if i.reads_output() {
            reads.insert(i.out.base);
        }
        writes.insert(i.out.base);
    }
    let freed: BTreeSet<BaseId> = batch.freed().collect();
    let contracted: Vec<BaseId> = writes
        .iter()
        .copied()
        .filter(|b| freed.contains(b) && !reads.contains(b) && !touched_elsewhere(*b) && !batch.sync.contains(b))
        .collect();
    let writes = writes.into_iter().filter(|b| !contracted.contains(b)).collect();
    Kernel {
        instrs,
        shape: shape.unwrap_or_default(),
        contracted,
        reads: reads.into_iter().collect(),
        writes,
    }
}
