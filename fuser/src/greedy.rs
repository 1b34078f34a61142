use crate::legality::Graph;
use crate::partition::{emit, Partition};
use crate::serial::serial_groups;
use crate::{Fuser, Result};
use hassium_core::{Batch, Capabilities, Kernel};
use std::collections::BinaryHeap;

/// Merges the heaviest legal edge first. An edge joins two blocks that depend on each
/// other or share a base (consecutive accesses of each base); its weight is the bytes the
/// merge saves, `cost(A) + cost(B) - cost(A ∪ B)`: a temporary created and freed inside
/// the merged block is contracted, and an array both blocks access is read once.
///
/// Weights change as blocks grow, so the heap is lazy: an entry remembers the sizes of
/// the two blocks it was weighed with and is re-weighed when popped stale. Zero-weight
/// edges are merged too (fewer kernels, fewer loop passes) but only after every saving
/// one. Finally the result is compared with the serial partition and the cheaper is kept,
/// so greedy never costs more than serial.
pub struct Greedy;

#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Candidate {
    weight: u64,
    /// Earlier edges first among equal weights (deterministic results).
    order: std::cmp::Reverse<(u32, u32)>,
    sizes: (usize, usize),
}

/// Node pairs worth weighing: dependency edges and consecutive accesses of each base.
pub(crate) fn candidate_edges(g: &Graph) -> Vec<(u32, u32)> {
    let mut edges: Vec<(u32, u32)> = Vec::new();
    for (a, s) in g.succ.iter().enumerate() {
        edges.extend(s.iter().map(|&b| (a as u32, b)));
    }
    let mut last: Vec<Option<u32>> = vec![None; g.bases.len()];
    for (n, uses) in g.uses.iter().enumerate() {
        for u in uses {
            if let Some(p) = last[u.base as usize].replace(n as u32) {
                edges.push((p, n as u32));
            }
        }
    }
    edges.sort_unstable();
    edges.dedup();
    edges
}

pub(crate) fn greedy_partition(g: &Graph) -> Partition {
    let mut p = Partition::singletons(g);
    let mut heap = BinaryHeap::new();
    let weigh = |p: &Partition, u: u32, v: u32| -> Option<Candidate> {
        let (a, b) = (p.owner[u as usize], p.owner[v as usize]);
        if a == b {
            return None;
        }
        let (ba, bb) = (p.block(a), p.block(b));
        let merged = g.try_merge(ba, bb)?;
        Some(Candidate {
            weight: (ba.cost + bb.cost).saturating_sub(merged.cost),
            order: std::cmp::Reverse((u, v)),
            sizes: (ba.nodes.len(), bb.nodes.len()),
        })
    };
    for (u, v) in candidate_edges(g) {
        heap.extend(weigh(&p, u, v));
    }
    while let Some(c) = heap.pop() {
        let std::cmp::Reverse((u, v)) = c.order;
        let (a, b) = (p.owner[u as usize], p.owner[v as usize]);
        if a == b {
            continue;
        }
        if (p.block(a).nodes.len(), p.block(b).nodes.len()) != c.sizes {
            heap.extend(weigh(&p, u, v));
            continue;
        }
        if p.would_cycle(a, b) {
            continue;
        }
        if let Some(merged) = g.try_merge(p.block(a), p.block(b)) {
            p.merge(a, b, merged);
        }
    }
    p
}

impl Fuser for Greedy {
    fn fuse(&mut self, batch: &Batch, caps: &Capabilities) -> Result<Vec<Kernel>> {
        let g = Graph::new(batch, caps);
        let p = greedy_partition(&g);
        let (serial, serial_cost) = serial_groups(&g);
        let groups = if serial_cost < p.cost() {
            serial
        } else {
            p.groups()
        };
        Ok(emit(&g, groups))
    }
}
