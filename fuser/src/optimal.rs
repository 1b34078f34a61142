use crate::greedy::{candidate_edges, greedy_partition};
use crate::legality::Graph;
use crate::partition::{emit, Partition};
use crate::serial::serial_groups;
use crate::{Fuser, Result};
use hassium_core::{Batch, Capabilities, Kernel};

/// Branch and bound over the same cost as `greedy`, started from greedy's (or serial's,
/// when cheaper) partition as the bound to beat.
///
/// The search walks the candidate edges heaviest first; at each legal edge it branches
/// into "merge the two blocks" and "keep them apart forever" (the pair becomes
/// fuse-preventing). A branch is cut when its lower bound cannot beat the best partition
/// found: every base pays at least its largest view in some kernel unless it can still be
/// contracted (contractible and not yet split between blocks kept apart). After
/// `budget` search nodes it returns the best partition found so far. Each search node
/// copies the partition state (O(n²) bits), so the budget is also a time limit.
pub struct Optimal {
    pub budget: u64,
}

/// Search nodes `optimal` visits when the configuration does not say.
pub const DEFAULT_OPTIMAL_BUDGET: u64 = 10_000;

struct Search<'g, 'b> {
    g: &'g Graph<'b>,
    edges: Vec<(u32, u32)>,
    best_cost: u64,
    best: Vec<Vec<u32>>,
    visited: u64,
    budget: u64,
}

impl Search<'_, '_> {
    fn lower_bound(&self, p: &Partition) -> u64 {
        let mut lb = 0;
        for info in &self.g.bases {
            if info.contractible && !self.split(p, &info.nodes) {
                continue;
            }
            lb += info.floor;
        }
        lb
    }

    /// True when two blocks holding `nodes` were kept apart, so they never share a kernel.
    /// Widely shared bases are assumed unsplit (optimistic, so the bound stays valid) to
    /// keep the bound linear.
    fn split(&self, p: &Partition, nodes: &[u32]) -> bool {
        if nodes.len() > 16 {
            return false;
        }
        nodes.iter().any(|&x| {
            let bx = p.block(p.owner[x as usize]);
            nodes.iter().any(|&y| bx.prevent.contains(y as usize))
        })
    }

    fn dfs(&mut self, mut p: Partition, mut next: usize) {
        loop {
            if self.visited >= self.budget {
                return;
            }
            self.visited += 1;
            if self.lower_bound(&p) >= self.best_cost {
                return;
            }
            let found = loop {
                let Some(&(u, v)) = self.edges.get(next) else {
                    break None;
                };
                next += 1;
                let (a, b) = (p.owner[u as usize], p.owner[v as usize]);
                if a == b || p.would_cycle(a, b) {
                    continue;
                }
                if let Some(m) = self.g.check(p.block(a), p.block(b)) {
                    break Some((a, b, m));
                }
            };
            let Some((a, b, m)) = found else {
                let cost = p.cost();
                if cost < self.best_cost {
                    self.best_cost = cost;
                    self.best = p.groups();
                }
                return;
            };
            let mut joined = p.clone();
            joined.merge(self.g, a, b, m);
            self.dfs(joined, next);
            // The other branch: a and b never share a kernel.
            let members_b = p.block(b).members.clone();
            let members_a = p.block(a).members.clone();
            if let Some(block) = p.blocks[a as usize].as_mut() {
                block.prevent.union_with(&members_b);
            }
            if let Some(block) = p.blocks[b as usize].as_mut() {
                block.prevent.union_with(&members_a);
            }
        }
    }
}

impl Fuser for Optimal {
    fn fuse(&mut self, batch: &Batch, caps: &Capabilities) -> Result<Vec<Kernel>> {
        let g = Graph::new(batch, caps);
        let greedy = greedy_partition(&g);
        let (serial, serial_cost) = serial_groups(&g);
        let (best, best_cost) = if serial_cost < greedy.cost() {
            (serial, serial_cost)
        } else {
            (greedy.groups(), greedy.cost())
        };
        let mut edges = candidate_edges(&g);
        // Heaviest first, as greedy: good partitions are found early and bound the rest.
        let single = Partition::singletons(&g);
        let weight = |&(u, v): &(u32, u32)| {
            let (a, b) = (single.block(u), single.block(v));
            g.try_merge(a, b)
                .map_or(0, |m| (a.cost + b.cost).saturating_sub(m.cost))
        };
        edges.sort_by_cached_key(|e| std::cmp::Reverse(weight(e)));
        let mut search = Search {
            g: &g,
            edges,
            best_cost,
            best,
            visited: 0,
            budget: self.budget,
        };
        search.dfs(single, 0);
        tracing::debug!(
            visited = search.visited,
            cost = search.best_cost,
            "optimal fusion"
        );
        Ok(emit(&g, search.best))
    }
}
