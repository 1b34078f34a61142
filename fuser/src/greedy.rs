use crate::legality::{Graph, Nest};
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
/// Weights change as blocks grow, so the heap is lazy: an edge is re-weighed when popped. Zero-weight
/// edges are merged too (fewer kernels, fewer loop passes) but only after every saving
/// one. Finally the result is compared with the serial partition and the cheaper is kept,
/// so greedy never costs more than serial.
pub struct Greedy;

#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Candidate {
    weight: u64,
    /// Earlier edges first among equal weights (deterministic results).
    order: std::cmp::Reverse<(u32, u32)>,
}

/// Node pairs worth weighing: consecutive accesses of each base by fusable nodes. Every
/// dependency and every shared access runs along these chains, so blocks that could
/// save bytes by merging become neighbours as the chains contract.
pub(crate) fn candidate_edges(g: &Graph) -> Vec<(u32, u32)> {
    let mut edges: Vec<(u32, u32)> = Vec::new();
    for info in &g.bases {
        let fusable = info
            .nodes
            .iter()
            .copied()
            .filter(|&n| g.nest[n as usize] != Nest::Alone);
        let mut prev = None;
        for n in fusable {
            if let Some(p) = prev.replace(n) {
                edges.push((p, n));
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
    for (u, v) in candidate_edges(g) {
        let (a, b) = (p.block(u), p.block(v));
        if let Some(m) = g.check(a, b) {
            let weight = (a.cost + b.cost).saturating_sub(m.cost);
            heap.push(Candidate {
                weight,
                order: std::cmp::Reverse((u, v)),
            });
        }
    }
    // Lazy greedy: a popped edge is re-weighed against the blocks as they are now; it is
    // merged if it still beats the next best stored weight, else pushed back. A weight
    // only goes back with a smaller value, so the loop ends.
    while let Some(c) = heap.pop() {
        let std::cmp::Reverse((u, v)) = c.order;
        let (a, b) = (p.owner[u as usize], p.owner[v as usize]);
        if a == b {
            continue;
        }
        let (ba, bb) = (p.block(a), p.block(b));
        let Some(m) = g.check(ba, bb) else {
            continue;
        };
        let weight = (ba.cost + bb.cost).saturating_sub(m.cost);
        if heap.peek().is_some_and(|top| weight < top.weight) {
            heap.push(Candidate {
                weight,
                order: c.order,
            });
            continue;
        }
        if !p.would_cycle(a, b) {
            p.merge(g, a, b, m);
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
