//! The cost model and the legality check of a whole partition, for tests and tools: the
//! fusers use the same [`Graph`] internally, so what they optimise is what is measured here.

use crate::legality::{merge_uses, Graph};
use crate::partition::kernel_for;
use crate::{Error, Result};
use hassium_core::{Batch, Capabilities, Kernel};

/// The cost of a partition: over its kernels, the bytes of distinct array data each one
/// touches in memory. A base counts, per kernel, the bytes of the distinct views the
/// kernel uses (stride-0 dimensions once), capped at the base's size; a contracted base
/// (all its accesses inside the kernel, freed, not synced, every read served by an
/// identical earlier write) costs nothing.
pub fn cost(batch: &Batch, kernels: &[Kernel]) -> u64 {
    let g = Graph::new(batch, &Capabilities::all());
    let node_of = node_index(&g, batch);
    kernels
        .iter()
        .map(|k| {
            let uses = k
                .instrs
                .iter()
                .filter_map(|&i| node_of.get(i).copied().flatten())
                .fold(Vec::new(), |acc, n| merge_uses(&acc, &g.uses[n as usize]));
            g.use_cost(&uses).0
        })
        .sum()
}

fn node_index(g: &Graph, batch: &Batch) -> Vec<Option<u32>> {
    let mut node_of = vec![None; batch.instrs.len()];
    for (n, &i) in g.nodes.iter().enumerate() {
        node_of[i] = Some(n as u32);
    }
    node_of
}

/// Checks that `kernels` is a legal partition of `batch` in a legal order: every
/// non-system instruction in exactly one kernel (in program order inside it), no
/// fuse-preventing pair and one loop nest per kernel (see `legality.rs`), kernels in a
/// topological order of the dependencies (so the block graph is acyclic), and each
/// kernel's shape, contracted, read and written bases as `finish_kernel` derives them.
pub fn check_partition(batch: &Batch, kernels: &[Kernel]) -> Result<()> {
    let bad = |m: String| Err(Error::IllegalPartition(m));
    let g = Graph::new(batch, &Capabilities::all());
    let node_of = node_index(&g, batch);
    let mut pos = vec![usize::MAX; g.len()];
    for (k, kernel) in kernels.iter().enumerate() {
        if kernel.instrs.is_empty() {
            return bad(format!("kernel {k} is empty"));
        }
        if kernel.instrs.windows(2).any(|w| w[0] >= w[1]) {
            return bad(format!(
                "kernel {k} lists its instructions out of program order"
            ));
        }
        let mut block = None;
        for &i in &kernel.instrs {
            let Some(n) = node_of.get(i).copied().flatten() else {
                return bad(format!(
                    "kernel {k} holds instruction {i}, which is a system instruction or missing"
                ));
            };
            if pos[n as usize] != usize::MAX {
                return bad(format!(
                    "instruction {i} is in kernels {} and {k}",
                    pos[n as usize]
                ));
            }
            pos[n as usize] = k;
            let single = g.singleton(n);
            block = Some(match block {
                None => single,
                Some(b) => match g.try_merge(&b, &single) {
                    Some(m) => m,
                    None => {
                        return bad(format!(
                            "kernel {k}: instruction {i} may not join the instructions before it"
                        ))
                    }
                },
            });
        }
        if let Some(shape) = block.as_ref().and_then(|b| b.nest.shape()) {
            if *shape != kernel.shape {
                return bad(format!(
                    "kernel {k} has shape {:?}, its loop nest {:?}",
                    kernel.shape, shape
                ));
            }
        }
    }
    if let Some(n) = pos.iter().position(|&p| p == usize::MAX) {
        return bad(format!("instruction {} is in no kernel", g.nodes[n]));
    }
    for (a, s) in g.succ.iter().enumerate() {
        for &b in s {
            if pos[a] > pos[b as usize] {
                return bad(format!(
                    "instruction {} (kernel {}) depends on instruction {} which runs later (kernel {})",
                    g.nodes[b as usize], pos[b as usize], g.nodes[a], pos[a]
                ));
            }
        }
    }
    let groups: Vec<Vec<u32>> = kernels
        .iter()
        .map(|k| k.instrs.iter().filter_map(|&i| node_of[i]).collect())
        .collect();
    for (k, (grp, got)) in groups.iter().zip(kernels).enumerate() {
        let want = kernel_for(&g, grp);
        if want != *got {
            return bad(format!(
                "kernel {k} records {got:?} but its instructions give {want:?}"
            ));
        }
    }
    Ok(())
}
