//! What may share a kernel: the dependency DAG, the fuse-preventing pairs of DESIGN.md §5,
//! and the loop-nest rules. Every fuser builds one [`Graph`] per batch and grows
//! [`Block`]s with [`Graph::try_merge`]; acyclicity between blocks is the partition's job
//! (see `partition.rs`), because it depends on all blocks, not on two.
//!
//! # The rules
//!
//! Nodes are the batch's non-system instructions. For two nodes `f` before `f'` that touch
//! the same base, with at least one of the two accesses a write:
//! - if the views are not disjoint (decided exactly by [`hassium_core::overlap`]) there is
//!   a dependency edge `f → f'` (read-after-write, write-after-read or write-after-write);
//! - if the views overlap without being identical ([`Overlap::Partial`]), the pair is
//!   *fuse-preventing*: in one loop nest, iteration `k` of `f'` would see an element that
//!   `f` reads or writes in another iteration. Identical views are fine (the same element
//!   at the same iteration) and so are disjoint ones.
//!
//! On top of that, the instructions of one kernel must share one loop nest. A kernel's
//! **iteration shape** `D` (`Kernel::shape`) is one of:
//! - *map* `D`: elementwise ops and generators (`range`, `random`) whose output shape is
//!   `D`; one iteration per element.
//! - *reduce* `D` along `axis`: one or more reductions whose **input** shape is `D`, all
//!   along the same axis; elementwise ops and generators with output shape `D` (the
//!   *body*, producers feeding the reductions, running inside the loop over `axis`); and
//!   elementwise ops and generators with output shape `R = D` without `axis` (the
//!   *epilogue*), each placed in program order after every reduction of the kernel. An
//!   engine runs, for each point of `R`: the body and the accumulation over `axis`, then
//!   the epilogue in program order. The epilogue can only see the reductions' results
//!   (values of shape `D` have another shape, so reading one is a partial overlap).
//! - *scan* `D` along `axis`: scans with shape `D` along the same axis plus body
//!   elementwise ops of shape `D` that feed them. Nothing in the kernel may read or
//!   overwrite a scan's output (a parallel scan finishes its values only at the end).
//!
//! **Held-back writes.** One partial overlap is allowed when the engine has
//! [`Capabilities::lagged_writes`]: a read made *before* a write of the same base, through
//! a view of the write's shape and strides shifted by at most [`hassium_core::LAG_MAX_ROWS`] rows of
//! dimension 0 (see [`hassium_core::lag_rows`]). A stencil updating its own grid is this pair. Such a
//! pair is *soft*: the two may share a kernel whose loop nest iterates the write's shape
//! with dimension 0 as the parallel rows (a map, or a reduction along another axis); the
//! engine then holds each written row back until no later row reads its old value.
//!
//! Reductions and scans never share a kernel, and a reduction's output never feeds another
//! reduction in the same kernel (its shape differs from `D`). Index ops (gather, scatter),
//! extension methods (matmul) and every instruction the engine's [`Capabilities`] do not
//! support stay alone in singleton kernels (the runtime reroutes the unsupported ones).
//! Kernels also respect `max_kernel_instrs` and `max_kernel_operands` (distinct bases a
//! kernel reads or writes in memory; contracted bases are not operands), and never span
//! two iterations of a long loop body (`period.rs`).
//!
//! **Failures.** An instruction that can fail on values the batch computes (a gather or
//! scatter index, a signed integer power's exponent) never shares a kernel with a node
//! that overwrites a base read at or before it (`x += y`), and is alone when it is such a
//! node: the runtime completes a batch whose kernel stopped part-way by running that
//! kernel's other instructions again, which must read what they read the first time.

use crate::bitset::BitSet;
use hassium_core::{
    lag_rows, overlap, self_overlaps, BaseId, Batch, Capabilities, Instr, OpClass, Overlap, Shape,
    View,
};
use hassium_core::{IdMap, IdSet};
use rustc_hash::FxHashMap;
use smallvec::SmallVec;

/// The loop nest of an instruction or of a block of them (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Nest {
    Map(Shape),
    Reduce {
        input: Shape,
        axis: usize,
        output: Shape,
        /// Node index of the block's last reduction.
        last_reduce: u32,
        /// Node index of the block's first epilogue op (`u32::MAX` when none).
        first_epilogue: u32,
    },
    Scan {
        input: Shape,
        axis: usize,
    },
    Alone,
}

impl Nest {
    /// The nest of one instruction (node `node`), `Alone` when it cannot be fused.
    pub fn of(instr: &Instr, node: u32, caps: &Capabilities) -> Nest {
        if !caps.supports(instr) || caps.max_kernel_instrs <= 1 {
            return Nest::Alone;
        }
        match instr.op.class() {
            OpClass::Elementwise | OpClass::Generator => Nest::Map(instr.out.shape.clone()),
            OpClass::Reduce => match (instr.ins.first().and_then(|o| o.as_view()), instr.axis) {
                (Some(v), Some(axis)) => Nest::Reduce {
                    input: v.shape.clone(),
                    axis,
                    output: instr.out.shape.clone(),
                    last_reduce: node,
                    first_epilogue: u32::MAX,
                },
                _ => Nest::Alone,
            },
            OpClass::Scan => match instr.axis {
                Some(axis) => Nest::Scan {
                    input: instr.out.shape.clone(),
                    axis,
                },
                None => Nest::Alone,
            },
            OpClass::Index | OpClass::Extension | OpClass::System => Nest::Alone,
        }
    }

    /// The nest of the union of two blocks, or `None` when they cannot share a loop nest.
    /// `a_first`/`b_first` are the blocks' first node indices (program order).
    pub fn combine(a: &Nest, a_first: u32, b: &Nest, b_first: u32) -> Option<Nest> {
        use Nest::*;
        match (a, b) {
            (Alone, _) | (_, Alone) => None,
            (Map(x), Map(y)) => (x == y).then(|| a.clone()),
            (Map(s), Reduce { .. }) => Self::map_into_reduce(s, a_first, b),
            (Reduce { .. }, Map(s)) => Self::map_into_reduce(s, b_first, a),
            (
                Reduce {
                    input: i1,
                    axis: x1,
                    output,
                    last_reduce: l1,
                    first_epilogue: e1,
                },
                Reduce {
                    input: i2,
                    axis: x2,
                    last_reduce: l2,
                    first_epilogue: e2,
                    ..
                },
            ) => {
                let (last, first) = ((*l1).max(*l2), (*e1).min(*e2));
                (i1 == i2 && x1 == x2 && first > last).then(|| Reduce {
                    input: i1.clone(),
                    axis: *x1,
                    output: output.clone(),
                    last_reduce: last,
                    first_epilogue: first,
                })
            }
            (Map(s), Scan { input, .. }) | (Scan { input, .. }, Map(s)) => {
                (s == input).then(|| {
                    if matches!(a, Scan { .. }) {
                        a.clone()
                    } else {
                        b.clone()
                    }
                })
            }
            (Scan { .. }, Scan { .. }) => (a == b).then(|| a.clone()),
            (Reduce { .. }, Scan { .. }) | (Scan { .. }, Reduce { .. }) => None,
        }
    }

    /// A map block of shape `s` joins a reduce block as body (`s == D`) or as epilogue
    /// (`s == R`, only after every reduction of the block).
    fn map_into_reduce(s: &Shape, map_first: u32, r: &Nest) -> Option<Nest> {
        let Nest::Reduce {
            input,
            axis,
            output,
            last_reduce,
            first_epilogue,
        } = r
        else {
            return None;
        };
        if s == input {
            return Some(r.clone());
        }
        (s == output && map_first > *last_reduce).then(|| Nest::Reduce {
            input: input.clone(),
            axis: *axis,
            output: output.clone(),
            last_reduce: *last_reduce,
            first_epilogue: (*first_epilogue).min(map_first),
        })
    }

    /// True when a write of `shape` may be held back in this nest: it iterates `shape`,
    /// and its parallel loop walks dimension 0 one row at a time.
    pub fn admits_lag(&self, shape: &Shape) -> bool {
        shape.len() >= 2
            && match self {
                Nest::Map(s) => s == shape,
                Nest::Reduce { input, axis, .. } => input == shape && *axis != 0,
                Nest::Scan { .. } | Nest::Alone => false,
            }
    }

    /// The kernel's iteration shape, when the nest decides it.
    pub fn shape(&self) -> Option<&Shape> {
        match self {
            Nest::Map(s) => Some(s),
            Nest::Reduce { input, .. } | Nest::Scan { input, .. } => Some(input),
            Nest::Alone => None,
        }
    }
}

/// A block's (or a node's) use of one base.
#[derive(Clone, Debug)]
pub(crate) struct Use {
    /// Index into [`Graph::bases`].
    pub base: u32,
    /// How many of the block's nodes touch the base.
    pub touchers: u32,
    pub written: bool,
    /// Distinct views (indices into [`Graph::view_bytes`]), sorted.
    pub views: SmallVec<[u32; 4]>,
}

/// What the cost model needs to know about one base.
#[derive(Clone, Debug)]
pub(crate) struct BaseInfo {
    pub id: BaseId,
    pub nbytes: u64,
    /// Freed in the batch, not synced, written, and every read is of a view an earlier
    /// instruction wrote identically: a kernel holding all its touchers keeps it in
    /// registers.
    pub contractible: bool,
    /// Nodes touching the base.
    pub touchers: u32,
    /// The largest single view's bytes, capped at `nbytes`: what any partition pays for
    /// the base at least, unless it is contracted.
    pub floor: u64,
    /// The nodes touching the base, in program order.
    pub nodes: Vec<u32>,
}

/// The dependency DAG and fuse-preventing pairs of one batch.
pub(crate) struct Graph<'a> {
    pub batch: &'a Batch,
    pub caps: Capabilities,
    /// Node → index into `batch.instrs` (non-system instructions, program order).
    pub nodes: Vec<usize>,
    /// Dependency successors of each node (sorted, deduplicated).
    pub succ: Vec<Vec<u32>>,
    pub prevent: Vec<BitSet>,
    /// Soft partners of each node: the other side of a read-then-write pair that may share
    /// a kernel only with the write held back (see the module docs).
    pub soft: Vec<SmallVec<[u32; 2]>>,
    /// The shape of a node's soft pairs (one per node; all its pairs agree on it).
    pub lag_shape: Vec<Option<Shape>>,
    pub nest: Vec<Nest>,
    pub uses: Vec<Vec<Use>>,
    pub bases: Vec<BaseInfo>,
    /// Base id → index into `bases`.
    pub base_ix: IdMap<u32>,
    pub view_bytes: Vec<u64>,
    /// Node → loop-iteration segment ([`crate::period`]); kernels never span two.
    pub segment: Option<Vec<u32>>,
    /// Bases the batch frees.
    pub freed: IdSet,
}

struct Access {
    node: u32,
    view: u32,
    write: bool,
}

/// Fuse-preventing pairs that let the runtime complete a batch one of whose kernels
/// failed part-way (`vem`'s `after_failure`): it runs the kernel's other instructions
/// again, which is sound only when none of them overwrites what it or an earlier one
/// reads. Engines check a failing operand held in memory before the kernel runs
/// (`hassium_engine_abi::precheck`); one computed in the batch is checked only where the
/// kernel reaches it, so such an instruction never shares a kernel with a node that
/// overwrites a base read at or before it, and is alone when it is such a node itself.
fn keep_failures_rerunnable(
    batch: &Batch,
    nodes: &[usize],
    access: &[Vec<Access>],
    base_ix: &IdMap<u32>,
    prevent: &mut [BitSet],
) {
    let n = nodes.len();
    let computed_failure: Vec<u32> = (0..n as u32)
        .filter(|&p| {
            let instr = &batch.instrs[nodes[p as usize]];
            instr.can_fail_when_run()
                && instr
                    .failing_operand()
                    .and_then(|v| base_ix.get(&v.base))
                    .is_some_and(|&b| access[b as usize].iter().any(|a| a.write && a.node < p))
        })
        .collect();
    if computed_failure.is_empty() {
        return;
    }
    let mut overwrites = BitSet::new(n);
    for acc in access {
        let Some(first_read) = acc.iter().filter(|a| !a.write).map(|a| a.node).min() else {
            continue;
        };
        for a in acc.iter().filter(|a| a.write && a.node >= first_read) {
            overwrites.insert(a.node as usize);
        }
    }
    for &p in &computed_failure {
        let alone = overwrites.contains(p as usize);
        for q in (0..n).filter(|&q| q != p as usize && (alone || overwrites.contains(q))) {
            prevent[p as usize].insert(q);
            prevent[q].insert(p as usize);
        }
    }
}

/// Bytes of distinct elements a view addresses (stride-0 dimensions count once).
fn footprint(v: &View) -> u64 {
    if v.is_empty() {
        return 0;
    }
    let n: usize = v
        .shape
        .iter()
        .zip(&v.strides)
        .filter(|(_, &s)| s != 0)
        .map(|(&n, _)| n)
        .product();
    (n * v.dtype.size()) as u64
}

impl<'a> Graph<'a> {
    pub fn new(batch: &'a Batch, caps: &Capabilities) -> Graph<'a> {
        let nodes: Vec<usize> = batch
            .instrs
            .iter()
            .enumerate()
            .filter(|(_, i)| !i.op.is_system())
            .map(|(k, _)| k)
            .collect();
        let n = nodes.len();
        let mut base_ix: IdMap<u32> = IdMap::default();
        let mut bases: Vec<BaseInfo> = Vec::new();
        let mut view_ix: FxHashMap<&View, u32> = FxHashMap::default();
        let mut views: Vec<&View> = Vec::new();
        let mut access: Vec<Vec<Access>> = Vec::new();
        let mut uses = Vec::with_capacity(n);
        let mut nest = Vec::with_capacity(n);
        for (node, &k) in nodes.iter().enumerate() {
            let instr = &batch.instrs[k];
            nest.push(Nest::of(instr, node as u32, caps));
            let mut node_uses: Vec<Use> = Vec::new();
            let out = std::iter::once((&instr.out, true));
            let reads_out = instr.reads_output().then_some((&instr.out, false));
            for (v, write) in out
                .chain(reads_out)
                .chain(instr.input_views().map(|v| (v, false)))
            {
                let b = *base_ix.entry(v.base).or_insert_with(|| {
                    bases.push(BaseInfo {
                        id: v.base,
                        nbytes: batch
                            .base(v.base)
                            .map_or(footprint(v), |b| b.nbytes() as u64),
                        contractible: false,
                        touchers: 0,
                        floor: 0,
                        nodes: Vec::new(),
                    });
                    access.push(Vec::new());
                    bases.len() as u32 - 1
                });
                let vi = *view_ix.entry(v).or_insert_with(|| {
                    views.push(v);
                    views.len() as u32 - 1
                });
                access[b as usize].push(Access {
                    node: node as u32,
                    view: vi,
                    write,
                });
                match node_uses.iter_mut().find(|u| u.base == b) {
                    Some(u) => {
                        u.written |= write;
                        if !u.views.contains(&vi) {
                            u.views.push(vi);
                            u.views.sort_unstable();
                        }
                    }
                    None => {
                        bases[b as usize].touchers += 1;
                        bases[b as usize].nodes.push(node as u32);
                        node_uses.push(Use {
                            base: b,
                            touchers: 1,
                            written: write,
                            views: SmallVec::from_elem(vi, 1),
                        });
                    }
                }
            }
            node_uses.sort_unstable_by_key(|u| u.base);
            uses.push(node_uses);
        }
        let view_bytes: Vec<u64> = views.iter().map(|v| footprint(v)).collect();
        // Views naming an element twice: a read through one is not served by the write of
        // its own point (the element's last write wins), so such a pair never fuses.
        let aliased: Vec<bool> = views.iter().map(|v| self_overlaps(v)).collect();

        let mut edges: Vec<(u32, u32)> = Vec::new();
        // Most nodes prevent nothing: their sets stay unallocated.
        let mut prevent = vec![BitSet::default(); n];
        let mut soft: Vec<SmallVec<[u32; 2]>> = vec![SmallVec::new(); n];
        let mut lag_shape: Vec<Option<Shape>> = vec![None; n];
        let is_scan = |node: u32| {
            nodes
                .get(node as usize)
                .is_some_and(|&k| batch.instrs[k].op.is_scan())
        };
        // Scanning back from each access, an earlier write of the identical view ends the
        // scan: anything before it that conflicts with this access conflicts with that
        // write too, so the dependency follows transitively and so does fuse prevention
        // (the two could only share a kernel together with the write between them). This
        // keeps the edge count linear for arrays written and read many times.
        // A read only needs the writes before it, so reads skip straight between them:
        // a base read by every node of a batch costs linear time, not quadratic.
        let mut writes_before: Vec<usize> = Vec::new();
        for acc in &access {
            writes_before.clear();
            for (q, aq) in acc.iter().enumerate() {
                // Positions in `acc` to look back at, latest first.
                let mut left = if aq.write { q } else { writes_before.len() };
                while left > 0 {
                    left -= 1;
                    let ap = &acc[if aq.write { left } else { writes_before[left] }];
                    if ap.node == aq.node || !(ap.write || aq.write) {
                        continue;
                    }
                    let rel = match (ap.view == aq.view, aliased[ap.view as usize]) {
                        (true, false) => Overlap::Identical,
                        (true, true) => Overlap::Partial,
                        (false, _) => overlap(views[ap.view as usize], views[aq.view as usize]),
                    };
                    if rel == Overlap::Disjoint {
                        continue;
                    }
                    edges.push((ap.node, aq.node));
                    // A scan's output is final only when the scan is done: nothing in its
                    // kernel may read or overwrite it.
                    let scan_out = ap.write && is_scan(ap.node);
                    if scan_out || rel == Overlap::Partial {
                        let (p, q) = (ap.node as usize, aq.node as usize);
                        let (vp, vq) = (views[ap.view as usize], views[aq.view as usize]);
                        // A read then a write of rows nearby: soft, when every pair of
                        // either node agrees on the shape.
                        let held_back = !scan_out
                            && !aliased[ap.view as usize]
                            && !aliased[aq.view as usize]
                            && caps.lagged_writes
                            && !ap.write
                            && aq.write
                            && batch.instrs[nodes[q]].op.class() == OpClass::Elementwise
                            && lag_rows(vp, vq).is_some()
                            && [p, q]
                                .iter()
                                .all(|&x| lag_shape[x].as_ref().is_none_or(|s| *s == vq.shape));
                        if held_back {
                            lag_shape[p] = Some(vq.shape.clone());
                            lag_shape[q] = Some(vq.shape.clone());
                            soft[p].push(q as u32);
                            soft[q].push(p as u32);
                        } else {
                            prevent[p].insert(q);
                            prevent[q].insert(p);
                        }
                    }
                    if ap.write && rel == Overlap::Identical {
                        break;
                    }
                }
                if aq.write {
                    writes_before.push(q);
                }
            }
        }
        keep_failures_rerunnable(batch, &nodes, &access, &base_ix, &mut prevent);
        edges.sort_unstable();
        edges.dedup();
        let mut succ = vec![Vec::new(); n];
        for (a, b) in edges {
            succ[a as usize].push(b);
        }

        let freed: IdSet = batch.freed().collect();
        for (info, acc) in bases.iter_mut().zip(&access) {
            let written = acc.iter().any(|a| a.write);
            let served = acc.iter().filter(|a| !a.write).all(|r| {
                !aliased[r.view as usize]
                    && acc
                        .iter()
                        .any(|w| w.write && w.node < r.node && w.view == r.view)
            });
            info.contractible =
                written && served && freed.contains(&info.id) && !batch.sync.contains(&info.id);
            info.floor = acc
                .iter()
                .map(|a| view_bytes[a.view as usize])
                .max()
                .unwrap_or(0)
                .min(info.nbytes);
        }
        let segment = crate::period::segments(batch, &nodes);
        Graph {
            batch,
            caps: caps.clone(),
            nodes,
            succ,
            prevent,
            soft,
            lag_shape,
            nest,
            uses,
            bases,
            base_ix,
            view_bytes,
            segment,
            freed,
        }
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// The block holding only `node`.
    pub fn singleton(&self, node: u32) -> Block {
        let n = self.len();
        let mut members = BitSet::new(n);
        members.insert(node as usize);
        let uses = self.uses[node as usize].clone();
        let (cost, operands) = self.use_cost(&uses);
        Block {
            nodes: vec![node],
            first: node,
            nest: self.nest[node as usize].clone(),
            uses,
            cost,
            operands,
            members,
            prevent: self.prevent[node as usize].clone(),
            soft: self.soft[node as usize].clone(),
            lag: None,
        }
    }

    /// The held-back write shape of the union of `a` and `b`: every soft pair the union
    /// would hold must agree on one shape, which the union's nest must admit. `None` when
    /// the union may not be formed; `Some(None)` when it holds no soft pair.
    fn union_lag(&self, a: &Block, b: &Block, nest: &Nest) -> Option<Option<Shape>> {
        let mut lag: Option<&Shape> = None;
        let pairs =
            a.lag
                .iter()
                .chain(&b.lag)
                .map(Some)
                .chain([(a, b), (b, a)].into_iter().flat_map(|(x, y)| {
                    x.soft
                        .iter()
                        .filter(|&&n| y.members.contains(n as usize))
                        .map(|&n| self.lag_shape[n as usize].as_ref())
                }));
        for shape in pairs {
            let shape = shape?;
            match lag {
                Some(l) if l != shape => return None,
                _ => lag = Some(shape),
            }
        }
        match lag {
            Some(s) if !nest.admits_lag(s) => None,
            _ => Some(lag.cloned()),
        }
    }

    /// Memory bytes and operand count (0 or 1) of one base use.
    fn base_cost(
        &self,
        base: u32,
        touchers: u32,
        views: impl Iterator<Item = u32>,
    ) -> (u64, usize) {
        let info = &self.bases[base as usize];
        if info.contractible && touchers == info.touchers {
            return (0, 0);
        }
        let bytes: u64 = views.map(|v| self.view_bytes[v as usize]).sum();
        (bytes.min(info.nbytes), 1)
    }

    /// Memory bytes and operand count of a block's base uses.
    pub fn use_cost(&self, uses: &[Use]) -> (u64, usize) {
        uses.iter().fold((0, 0), |(c, o), u| {
            let (c1, o1) = self.base_cost(u.base, u.touchers, u.views.iter().copied());
            (c + c1, o + o1)
        })
    }

    /// Whether two blocks may share a kernel (no fuse-preventing pair, one loop nest,
    /// within the engine's limits), and what their union would cost. Acyclicity is
    /// checked by the caller. Costs only the smaller block's bases (each looked up in
    /// the larger), so growing one big block stays cheap.
    pub fn check(&self, a: &Block, b: &Block) -> Option<Merge> {
        if a.prevent.intersects(&b.members) {
            return None;
        }
        if a.nodes.len() + b.nodes.len() > self.caps.max_kernel_instrs {
            return None;
        }
        if let Some(seg) = &self.segment {
            if seg[a.first as usize] != seg[b.first as usize] {
                return None;
            }
        }
        let nest = Nest::combine(&a.nest, a.first, &b.nest, b.first)?;
        let lag = self.union_lag(a, b, &nest)?;
        let (small, big) = if a.uses.len() <= b.uses.len() {
            (a, b)
        } else {
            (b, a)
        };
        let (mut cost, mut operands) = (a.cost + b.cost, a.operands + b.operands);
        for u in &small.uses {
            let Ok(k) = big.uses.binary_search_by_key(&u.base, |g| g.base) else {
                continue;
            };
            let g = &big.uses[k];
            let (c1, o1) = self.base_cost(u.base, u.touchers, u.views.iter().copied());
            let (c2, o2) = self.base_cost(g.base, g.touchers, g.views.iter().copied());
            let extra = u.views.iter().copied().filter(|v| !g.views.contains(v));
            let (c, o) = self.base_cost(
                u.base,
                u.touchers + g.touchers,
                g.views.iter().copied().chain(extra),
            );
            cost = cost - c1 - c2 + c;
            operands = operands - o1 - o2 + o;
        }
        if operands > self.caps.max_kernel_operands {
            return None;
        }
        Some(Merge {
            nest,
            cost,
            operands,
            lag,
        })
    }

    /// Makes `a` the union of `a` and `b`, as `check` allowed.
    pub fn absorb(&self, a: &mut Block, b: Block, m: Merge) {
        a.uses = if b.uses.len() * 8 < a.uses.len() {
            let mut uses = std::mem::take(&mut a.uses);
            for u in b.uses {
                match uses.binary_search_by_key(&u.base, |g| g.base) {
                    Ok(k) => join_use(&mut uses[k], &u),
                    Err(k) => uses.insert(k, u),
                }
            }
            uses
        } else {
            merge_uses(&a.uses, &b.uses)
        };
        let mut nodes = Vec::with_capacity(a.nodes.len() + b.nodes.len());
        let (mut i, mut j) = (0, 0);
        while i < a.nodes.len() || j < b.nodes.len() {
            if j == b.nodes.len() || (i < a.nodes.len() && a.nodes[i] < b.nodes[j]) {
                nodes.push(a.nodes[i]);
                i += 1;
            } else {
                nodes.push(b.nodes[j]);
                j += 1;
            }
        }
        a.nodes = nodes;
        a.first = a.first.min(b.first);
        a.nest = m.nest;
        a.cost = m.cost;
        a.operands = m.operands;
        a.members.union_with(&b.members);
        a.prevent.union_with(&b.prevent);
        a.soft.extend(b.soft);
        a.soft.sort_unstable();
        a.soft.dedup();
        a.lag = m.lag;
    }

    /// The union of two blocks, when `check` allows it.
    pub fn try_merge(&self, a: &Block, b: &Block) -> Option<Block> {
        let m = self.check(a, b)?;
        let mut union = a.clone();
        self.absorb(&mut union, b.clone(), m);
        Some(union)
    }
}

/// The outcome of a legal merge, computed before doing it.
#[derive(Clone, Debug)]
pub(crate) struct Merge {
    pub nest: Nest,
    pub cost: u64,
    pub operands: usize,
    /// The union's held-back write shape ([`Block::lag`]).
    pub lag: Option<Shape>,
}

fn join_use(u: &mut Use, other: &Use) {
    u.touchers += other.touchers;
    u.written |= other.written;
    for &v in &other.views {
        if let Err(p) = u.views.binary_search(&v) {
            u.views.insert(p, v);
        }
    }
}

/// Merges two base-use lists sorted by base.
pub(crate) fn merge_uses(a: &[Use], b: &[Use]) -> Vec<Use> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if j == b.len() || (i < a.len() && a[i].base < b[j].base) {
            out.push(a[i].clone());
            i += 1;
        } else if i == a.len() || b[j].base < a[i].base {
            out.push(b[j].clone());
            j += 1;
        } else {
            let mut u = a[i].clone();
            join_use(&mut u, &b[j]);
            out.push(u);
            i += 1;
            j += 1;
        }
    }
    out
}

/// A set of nodes that may run as one kernel, with what the cost model and the legality
/// checks need to grow it.
#[derive(Clone, Debug)]
pub(crate) struct Block {
    /// Sorted node indices.
    pub nodes: Vec<u32>,
    pub first: u32,
    pub nest: Nest,
    pub uses: Vec<Use>,
    /// Bytes of distinct array data the block touches in memory.
    pub cost: u64,
    /// Distinct bases read or written in memory.
    pub operands: usize,
    pub members: BitSet,
    /// Nodes that may not share this block's kernel.
    pub prevent: BitSet,
    /// Soft partners of the block's nodes (see [`Graph::soft`]).
    pub soft: SmallVec<[u32; 2]>,
    /// The shape of the writes this block holds back, once it holds a soft pair.
    pub lag: Option<Shape>,
}
