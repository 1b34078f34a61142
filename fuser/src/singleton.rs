use crate::kernel_info::finish_kernel_in;
use crate::{Fuser, Result};
use hassium_core::{Batch, Capabilities, IdMap, IdSet, Kernel};
use smallvec::{smallvec, SmallVec};

/// One kernel per instruction: no fusion. The baseline every other fuser is measured
/// against, and the safe choice for debugging an engine.
///
/// Program order respects every dependency, so no dependency graph is built; a base is
/// contracted only when its one instruction is all that touches it.
pub struct Singleton;

impl Fuser for Singleton {
    fn fuse(&mut self, batch: &Batch, _caps: &Capabilities) -> Result<Vec<Kernel>> {
        let compute = || {
            batch
                .instrs
                .iter()
                .enumerate()
                .filter(|(_, i)| !i.op.is_system())
        };
        let mut touchers: IdMap<u32> =
            IdMap::with_capacity_and_hasher(batch.bases.len(), Default::default());
        for (_, i) in compute() {
            let mut bases: SmallVec<[_; 4]> = SmallVec::new();
            for b in std::iter::once(i.out.base).chain(i.ins.iter().filter_map(|o| o.base())) {
                if !bases.contains(&b) {
                    bases.push(b);
                    *touchers.entry(b).or_default() += 1;
                }
            }
        }
        let freed: IdSet = batch.freed().collect();
        let mut kernels = Vec::with_capacity(batch.instrs.len());
        kernels.extend(compute().map(|(k, _)| {
            finish_kernel_in(
                batch,
                smallvec![k],
                |b| touchers[&b] > 1,
                |b| freed.contains(&b),
            )
        }));
        Ok(kernels)
    }

    /// Cutting a batch this way costs less than looking its key up.
    fn worth_caching(&self) -> bool {
        false
    }
}
