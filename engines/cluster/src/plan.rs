//! What each rank computes of a flush and which pieces travel between ranks.
//!
//! Every rank derives the same plan from the batch, the kernels, the layouts and the rank
//! count, so sends and receives match without any message about them.
//!
//! A kernel of elementwise instructions and ranges (see [`start_ranges_at`]) whose
//! outputs are distributed and cut the same way along the first axis of its iteration
//! space runs *by rows*: each rank computes the rows whose output elements lie in its
//! blocks, after receiving the input elements outside its blocks that those rows read (a
//! stencil's halo). A whole-array reduction of such work runs *by chunks*. Any other
//! kernel (scans, random numbers, index operations, extensions, outputs that are
//! replicated or cut differently) runs *whole* on every rank, after every rank received
//! all the distributed input it reads: correct for any kernel, and counted as gathered.
//!
//! Kernels are grouped into phases: a phase ends before a kernel that needs remote
//! elements of a base an earlier kernel of the phase wrote. All pieces of a phase travel
//! at its start, one message per rank pair.

use crate::layout::Layout;
use hassium_core::{BaseId, Batch, IdMap, Kernel, Opcode, View};

mod interior;
mod ranges;
mod split;

pub use interior::interior;
pub use ranges::{cuttable_range, start_ranges_at, RANGE_TEMPS};
pub use split::split_by_output;

/// How a kernel is cut over the ranks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cut {
    /// Rank r computes rows `[ranges[r].0, ranges[r].1)` of the first axis or, when
    /// `flat`, elements of the kernel's views seen as one loop (see [`flatten`]): ranges
    /// then start and end at multiples of `ALIGN` (or the end), as the cpu engine splits
    /// such a loop, and may overlap at their ends (a rank computes the few elements of
    /// a neighbour's block its aligned range covers, into its own memory only).
    Rows {
        ranges: Vec<(usize, usize)>,
        flat: bool,
    },
    /// A whole-array reduction (with the elementwise work fused before it): rank r
    /// computes the per-chunk partials of elements `[ranges[r].0, ranges[r].1)`, whole
    /// chunks of the cpu engine's `CHUNK` elements; every rank folds all partials in
    /// chunk order (see `fold`).
    Chunks(Vec<(usize, usize)>),
    /// Every rank computes all of it.
    Whole,
}

/// Elements `[lo, hi)` of `base` that rank `dst` needs from rank `src`, its owner.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Need {
    pub dst: u32,
    pub src: u32,
    pub base: BaseId,
    pub lo: u64,
    pub hi: u64,
}

/// Kernels (indices into the flush's kernels) run after one exchange of `needs`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Phase {
    pub kernels: Vec<usize>,
    /// Sorted by (dst, src, base, lo); ranges of one base merged.
    pub needs: Vec<Need>,
}

/// A flush's plan.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    /// The kernels run: the flush's, with some split in independent parts (see
    /// [`split_by_output`]); `cuts`, `phases` and `gathered` index this list.
    pub kernels: Vec<Kernel>,
    pub cuts: Vec<Cut>,
    pub phases: Vec<Phase>,
    /// Kernels run whole that read distributed data from other ranks.
    pub gathered: Vec<usize>,
}

/// The plan of `kernels` over `batch` on `ranks` ranks; `layouts` must hold every base the
/// kernels read or write from memory.
pub fn plan(batch: &Batch, kernels: &[Kernel], layouts: &IdMap<Layout>, ranks: u32) -> Plan {
    let mut out = Plan::default();
    let mut phase = Phase::default();
    let mut written: Vec<BaseId> = Vec::new();
    let mut everywhere: Vec<BaseId> = Vec::new();
    let cut_one = |k: &Kernel| {
        (cut_of(batch, k, layouts, ranks)).or_else(|| chunks_of(batch, k, layouts, ranks))
    };
    for k in kernels {
        // A kernel whose parts write rows of different ranks (a grid's first and last
        // rows) runs as those parts, each by its owner, when each part can be cut.
        let parts: Vec<(Kernel, Cut)> = if ranks == 1 {
            vec![(k.clone(), Cut::Whole)]
        } else if let Some(cut) = cut_one(k) {
            vec![(k.clone(), cut)]
        } else {
            (split_by_output(batch, k))
                .and_then(|parts| {
                    (parts.into_iter())
                        .map(|p| cut_one(&p).map(|c| (p, c)))
                        .collect::<Option<Vec<_>>>()
                })
                .unwrap_or_else(|| vec![(k.clone(), Cut::Whole)])
        };
        for (k, cut) in parts {
            let ki = out.kernels.len();
            let needs = needs_of(batch, &k, &cut, layouts, ranks, &everywhere);
            if cut == Cut::Whole && !needs.is_empty() {
                out.gathered.push(ki);
            }
            if needs.iter().any(|n| written.contains(&n.base)) {
                out.phases.push(std::mem::take(&mut phase));
                written.clear();
            }
            phase.kernels.push(ki);
            phase.needs.extend(needs);
            for &w in &k.writes {
                if !written.contains(&w) {
                    written.push(w);
                }
            }
            // A kernel run whole that writes a whole base leaves it whole on every rank;
            // one cut by rows or chunks leaves each rank only its own block current.
            for &i in &k.instrs {
                let o = &batch.instrs[i].out;
                let full = batch.base(o.base).is_some_and(|b| o.nelem() == b.nelem);
                if cut == Cut::Whole && full && o.is_contiguous() && o.offset == 0 {
                    if !everywhere.contains(&o.base) {
                        everywhere.push(o.base);
                    }
                } else if cut != Cut::Whole {
                    everywhere.retain(|&b| b != o.base);
                }
            }
            out.cuts.push(cut);
            out.kernels.push(k);
        }
    }
    if !phase.kernels.is_empty() {
        out.phases.push(phase);
    }
    for p in &mut out.phases {
        p.needs = merged(std::mem::take(&mut p.needs));
    }
    out
}

/// The rows of each rank when `k` can run by rows.
fn cut_of(batch: &Batch, k: &Kernel, layouts: &IdMap<Layout>, ranks: u32) -> Option<Cut> {
    if k.shape.is_empty() {
        return None;
    }
    let mut rows: Option<Vec<(usize, usize)>> = None;
    let mut first_input: Option<&View> = None;
    for &i in &k.instrs {
        let instr = batch.instrs.get(i)?;
        if instr
            .ins
            .iter()
            .any(|o| o.as_view().is_some_and(|v| v.shape != k.shape))
        {
            return None;
        }
        let shape_ok = if instr.op.is_elementwise() || cuttable_range(instr) {
            instr.out.shape == k.shape
        } else if instr.op.is_reduction() {
            // Along an axis other than the first: each row's result is computed whole
            // by the rank that holds the row.
            let a = instr.axis?;
            a >= 1 && a < k.shape.len() && {
                let mut s = k.shape.clone();
                s.remove(a);
                instr.out.shape == s
            }
        } else {
            false
        };
        if !shape_ok {
            return None;
        }
        for v in instr.ins.iter().filter_map(|o| o.as_view()) {
            let distributed = layouts.get(&v.base).is_some_and(|l| l.distributed);
            if first_input.is_none() && distributed && !k.contracted.contains(&v.base) {
                first_input = Some(v);
            }
        }
        if k.contracted.contains(&instr.out.base) {
            continue;
        }
        let layout = layouts.get(&instr.out.base)?;
        if !layout.distributed {
            continue; // replicated: gathered to every rank after the kernel
        }
        let these = rows_of(&instr.out, layout, ranks)?;
        match &rows {
            Some(r) if *r != these => return None,
            Some(_) => {}
            None => rows = Some(these),
        }
    }
    if rows.is_none() {
        let v = first_input?;
        rows = Some(rows_of(v, layouts.get(&v.base)?, ranks)?);
    }
    let rows = rows?;
    // Aligned ranges matter only where a vector and a scalar call may round apart.
    let math = k.instrs.iter().any(|&i| {
        let op = batch.instrs[i].op;
        hassium_codegen::vector_math(op)
    });
    if !math || !flat_kernel(batch, k) {
        return Some(Cut::Rows {
            ranges: rows,
            flat: false,
        });
    }
    let n: usize = k.shape.iter().product();
    let per_row = n.checked_div(k.shape[0]).unwrap_or(0);
    let align = hassium_codegen::ALIGN;
    let ranges = rows
        .into_iter()
        .map(|(i0, i1)| {
            if i0 == i1 {
                (0, 0)
            } else {
                (
                    i0 * per_row / align * align,
                    (i1 * per_row).div_ceil(align) * align,
                )
                    .min((n, n))
            }
        })
        .map(|(a, b)| (a.min(n), b.min(n)))
        .collect();
    Some(Cut::Rows { ranges, flat: true })
}

/// True when the cpu engine runs elementwise kernel `k` as one loop: every dimension of
/// extent above 1 merges with the next for every view (the lowering's rule), and no
/// output is read through another view of its base (a kernel that updates an array it
/// reads at other rows keeps its rows as a loop).
fn flat_kernel(batch: &Batch, k: &Kernel) -> bool {
    let kept: Vec<usize> = (0..k.shape.len()).filter(|&d| k.shape[d] != 1).collect();
    let mut views = Vec::new();
    for &i in &k.instrs {
        let Some(instr) = batch.instrs.get(i) else {
            return false;
        };
        if !instr.op.is_elementwise() && !cuttable_range(instr) {
            return false;
        }
        views.push(&instr.out);
        views.extend(instr.ins.iter().filter_map(|o| o.as_view()));
    }
    let shifted = k.instrs.iter().any(|&i| {
        let o = &batch.instrs[i].out;
        views
            .iter()
            .any(|v| v.base == o.base && (v.offset != o.offset || v.strides != o.strides))
    });
    !shifted
        && views.iter().all(|v| {
            kept.windows(2)
                .all(|w| v.strides[w[0]] == v.strides[w[1]] * v.shape[w[1]] as isize)
        })
}

/// `v` as the one loop of a [`flat_kernel`]: all its elements, with the stride of its
/// innermost dimension of extent above 1.
pub fn flatten(v: &View) -> View {
    let stride = (0..v.ndim())
        .rev()
        .find(|&d| v.shape[d] != 1)
        .map_or(1, |d| v.strides[d]);
    View {
        base: v.base,
        dtype: v.dtype,
        offset: v.offset,
        shape: [v.nelem()].into_iter().collect(),
        strides: [stride].into_iter().collect(),
    }
}

/// Rank `r`'s piece of view `v` of a kernel cut by rows.
pub fn piece(v: &View, flat: bool, i0: usize, i1: usize) -> View {
    if flat {
        restrict(&flatten(v), i0, i1)
    } else {
        restrict(v, i0, i1)
    }
}

/// For a kernel cut by rows, each replicated base it writes and, per rank, the element
/// range `[lo, hi)` that rank's rows write of it: what every rank sends every other
/// after the kernel, so that the base is whole everywhere again.
pub fn replicated_writes(
    batch: &Batch,
    k: &Kernel,
    rows: &[(usize, usize)],
    flat: bool,
    layouts: &IdMap<Layout>,
) -> Vec<(BaseId, Vec<(u64, u64)>)> {
    let mut out: Vec<(BaseId, Vec<(u64, u64)>)> = Vec::new();
    for &i in &k.instrs {
        let o = &batch.instrs[i].out;
        if k.contracted.contains(&o.base) || layouts.get(&o.base).is_none_or(|l| l.distributed) {
            continue;
        }
        let ranges: Vec<(u64, u64)> = rows
            .iter()
            .map(|&(i0, i1)| match piece(o, flat, i0, i1).extent() {
                Some((lo, hi)) if i1 > i0 => (lo as u64, hi as u64 + 1),
                _ => (0, 0),
            })
            .collect();
        match out.iter_mut().find(|(b, _)| *b == o.base) {
            // Two instructions writing one base: each rank sends the span of both.
            Some((_, have)) => {
                for (h, r) in have.iter_mut().zip(ranges) {
                    *h = match (*h, r) {
                        ((0, 0), r) | (r, (0, 0)) => r,
                        ((a, b), (c, d)) => (a.min(c), b.max(d)),
                    };
                }
            }
            None => out.push((o.base, ranges)),
        }
    }
    out
}

/// The chunk ranges of each rank when `k` is a whole-array reduction of one axis that
/// the cluster can cut: a body of elementwise instructions over the axis, reductions of
/// it to scalars that [`crate::fold::foldable`] combines, and an epilogue of elementwise
/// instructions on those scalars (a mean's division). Chunk `c` goes to the rank holding
/// element `c * CHUNK` of the first distributed operand; the body's outputs kept in
/// memory must be distributed so that each rank's chunks are exactly its block.
fn chunks_of(batch: &Batch, k: &Kernel, layouts: &IdMap<Layout>, ranks: u32) -> Option<Cut> {
    let [n] = k.shape[..] else { return None };
    let mut reductions = 0;
    let mut first: Option<&View> = None;
    let mut body_outs: Vec<&View> = Vec::new();
    // Bases holding a reduction's result, or computed from one.
    let mut reduced: Vec<BaseId> = Vec::new();
    for &i in &k.instrs {
        let instr = batch.instrs.get(i)?;
        let views = || instr.ins.iter().filter_map(|o| o.as_view());
        let kept = !k.contracted.contains(&instr.out.base);
        let after = views().any(|v| reduced.contains(&v.base));
        if after {
            reduced.push(instr.out.base);
        }
        if instr.op.is_reduction() {
            if after {
                return None; // a reduction of what another one gave
            }
            reduced.push(instr.out.base);
            let v = instr.ins.first()?.as_view()?;
            if instr.axis != Some(0)
                || v.shape[..] != [n]
                || !instr.out.shape.is_empty()
                || instr.out.dtype != v.dtype
                || !crate::fold::foldable(instr.op, v.dtype)
                || (kept && layouts.get(&instr.out.base).is_none_or(|l| l.distributed))
            {
                return None;
            }
            reductions += 1;
        } else if (instr.op.is_elementwise() || cuttable_range(instr)) && instr.out.shape[..] == [n]
        {
            // The body runs by chunks before the fold: it cannot read the results (a
            // histogram's counts divided by their sum, broadcast back over them).
            if after || views().any(|v| v.shape[..] != [n]) {
                return None;
            }
            if kept {
                if layouts.get(&instr.out.base).is_none_or(|l| !l.distributed) {
                    return None;
                }
                body_outs.push(&instr.out);
            }
        } else if instr.op.is_elementwise() && instr.out.shape.is_empty() && reductions > 0 {
            // The epilogue: scalars only, run on every rank after the fold.
            if views().any(|v| !v.shape.is_empty())
                || (kept && layouts.get(&instr.out.base).is_none_or(|l| l.distributed))
            {
                return None;
            }
            continue;
        } else {
            return None;
        }
        // The chunks follow the first distributed operand: an input, or a kept output.
        let out = (!instr.op.is_reduction() && kept).then_some(&instr.out);
        for v in views().chain(out) {
            let distributed = layouts.get(&v.base).is_some_and(|l| l.distributed);
            if first.is_none() && distributed && !k.contracted.contains(&v.base) {
                first = Some(v);
            }
        }
    }
    let v = first?;
    if reductions == 0 {
        return None;
    }
    let owned = rows_of(v, layouts.get(&v.base)?, ranks)?;
    let chunk = hassium_codegen::CHUNK;
    let ranges: Vec<(usize, usize)> = owned
        .into_iter()
        .map(|(a, b)| {
            if a == b {
                (0, 0)
            } else {
                (
                    (a.div_ceil(chunk) * chunk).min(n),
                    (b.div_ceil(chunk) * chunk).min(n),
                )
            }
        })
        .collect();
    // Outputs are written by the rank computing the chunk: it must own them.
    for o in body_outs {
        let rows = rows_of(o, layouts.get(&o.base)?, ranks)?;
        let same = rows
            .iter()
            .zip(&ranges)
            .all(|(a, b)| a == b || (a.0 == a.1 && b.0 == b.1));
        if !same {
            return None;
        }
    }
    Some(Cut::Chunks(ranges))
}

/// The layout of a new `base` that kernel `k` first writes through `out`, aligned with
/// the kernel's first distributed input: the rows of `out` go to the rank holding the
/// input rows they are computed from, so a temporary such as a stencil's result lives
/// with the grid rows it comes from and costs no communication of its own. `None` when
/// `out` is not the whole base in order, or no input gives contiguous rank ranges.
pub fn aligned_layout(
    batch: &Batch,
    k: &Kernel,
    out: &View,
    base: &hassium_core::Base,
    layouts: &IdMap<Layout>,
    ranks: u32,
) -> Option<Layout> {
    if out.offset != 0 || out.nelem() != base.nelem || !out.is_contiguous() {
        return None;
    }
    if out.shape != k.shape || k.shape.is_empty() || k.shape[0] < 2 {
        return None;
    }
    let input = k.instrs.iter().find_map(|&i| {
        let instr = batch.instrs.get(i)?;
        if !instr.op.is_elementwise() {
            return None;
        }
        instr.ins.iter().filter_map(|o| o.as_view()).find(|v| {
            v.shape == k.shape
                && !k.contracted.contains(&v.base)
                && layouts.get(&v.base).is_some_and(|l| l.distributed)
        })
    })?;
    let ranges = rows_of(input, layouts.get(&input.base)?, ranks)?;
    let mut bounds = Vec::with_capacity(ranks as usize + 1);
    let mut at = 0usize;
    for (a, b) in ranges {
        if a != b && a != at {
            return None; // not in rank order (a reversed input)
        }
        bounds.push(at as u64);
        at = at.max(b);
    }
    bounds.push(at as u64);
    if at != k.shape[0] {
        return None;
    }
    let row: usize = k.shape[1..].iter().product();
    Some(Layout::aligned(base, row.max(1) as u64, bounds))
}

/// For each rank, the range of first-axis indices of `v` whose elements all lie in that
/// rank's block; `None` when some index's elements straddle two blocks.
fn rows_of(v: &View, layout: &Layout, ranks: u32) -> Option<Vec<(usize, usize)>> {
    let n0 = v.shape[0];
    if n0 == 0 || v.nelem() == 0 {
        return Some(vec![(0, 0); ranks as usize]);
    }
    let s0 = v.strides[0] as i128;
    // The offsets a first-axis index i touches: off + i*s0 + [rest_lo, rest_hi].
    let (mut rest_lo, mut rest_hi) = (0i128, 0i128);
    for (&n, &s) in v.shape[1..].iter().zip(&v.strides[1..]) {
        let span = (n as i128 - 1) * s as i128;
        if span < 0 {
            rest_lo += span;
        } else {
            rest_hi += span;
        }
    }
    let off = v.offset as i128;
    if s0 == 0 && n0 > 1 {
        return None;
    }
    let mut out = Vec::with_capacity(ranks as usize);
    let mut covered = 0usize;
    for r in 0..ranks {
        let (blo, bhi) = layout.block(r);
        let (blo, bhi) = (blo as i128, bhi as i128);
        // i with off + i*s0 + rest_lo >= blo and off + i*s0 + rest_hi <= bhi - 1.
        let (a, b) = (off + rest_lo, off + rest_hi);
        let (first, last) = if s0 > 0 {
            (div_ceil(blo - a, s0), div_floor(bhi - 1 - b, s0))
        } else if s0 < 0 {
            (div_ceil(b - bhi + 1, -s0), div_floor(a - blo, -s0))
        } else if a >= blo && b < bhi {
            (0, 0)
        } else {
            (1, 0)
        };
        let first = first.max(0);
        let last = last.min(n0 as i128 - 1);
        let range = if first <= last {
            (first as usize, last as usize + 1)
        } else {
            (0, 0)
        };
        covered += range.1 - range.0;
        out.push(range);
    }
    (covered == n0).then_some(out)
}

fn div_floor(a: i128, b: i128) -> i128 {
    a.div_euclid(b)
}

fn div_ceil(a: i128, b: i128) -> i128 {
    -(-a).div_euclid(b)
}

/// `v` restricted to first-axis indices `[i0, i1)`.
pub fn restrict(v: &View, i0: usize, i1: usize) -> View {
    let mut r = v.clone();
    r.offset += i0 as isize * v.strides[0];
    r.shape[0] = i1 - i0;
    r
}

/// What each rank must receive before running `k` cut as `cut`.
/// `everywhere`: bases every rank holds whole at this point of the flush (written in
/// full by a kernel every rank ran whole).
fn needs_of(
    batch: &Batch,
    k: &Kernel,
    cut: &Cut,
    layouts: &IdMap<Layout>,
    ranks: u32,
    everywhere: &[BaseId],
) -> Vec<Need> {
    let mut needs = Vec::new();
    if ranks == 1 {
        return needs;
    }
    // A base a kernel run whole wrote in full before reading it, every rank computed.
    let mut written_here: Vec<BaseId> = Vec::new();
    for &i in &k.instrs {
        let Some(instr) = batch.instrs.get(i) else {
            continue;
        };
        // A scatter writes some elements of its target and keeps (or adds to) the rest:
        // it reads the whole target.
        let scatters = matches!(
            instr.op,
            Opcode::Scatter | Opcode::CondScatter | Opcode::ScatterAdd
        );
        let target = scatters.then_some(&instr.out);
        for v in instr.ins.iter().filter_map(|o| o.as_view()).chain(target) {
            if k.contracted.contains(&v.base) || everywhere.contains(&v.base) {
                continue;
            }
            if *cut == Cut::Whole && written_here.contains(&v.base) {
                continue;
            }
            let Some(layout) = layouts.get(&v.base).filter(|l| l.distributed) else {
                continue;
            };
            for r in 0..ranks {
                let read = match cut {
                    Cut::Rows { ranges, flat } => {
                        let (i0, i1) = ranges[r as usize];
                        if i0 == i1 {
                            continue;
                        }
                        piece(v, *flat, i0, i1).extent()
                    }
                    Cut::Chunks(rows) => {
                        let (i0, i1) = rows[r as usize];
                        if i0 == i1 {
                            continue;
                        }
                        restrict(v, i0, i1).extent()
                    }
                    Cut::Whole => v.extent(),
                };
                if let Some((lo, hi)) = read {
                    remote_pieces(layout, v.base, r, lo as u64, hi as u64 + 1, &mut needs);
                }
            }
        }
        let o = &instr.out;
        if batch.base(o.base).is_some_and(|b| o.nelem() == b.nelem)
            && o.is_contiguous()
            && o.offset == 0
        {
            written_here.push(o.base);
        }
    }
    needs
}

/// The parts of `[lo, hi)` outside rank `r`'s block, split by owner.
fn remote_pieces(layout: &Layout, base: BaseId, r: u32, lo: u64, hi: u64, out: &mut Vec<Need>) {
    let (blo, bhi) = layout.block(r);
    for (plo, phi) in [(lo, hi.min(blo)), (lo.max(bhi), hi)] {
        let mut e = plo;
        while e < phi {
            let src = layout.owner(e);
            let end = layout.block(src).1.min(phi);
            out.push(Need {
                dst: r,
                src,
                base,
                lo: e,
                hi: end,
            });
            e = end;
        }
    }
}

/// Sorted, with overlapping or touching ranges of one (dst, src, base) joined.
fn merged(mut needs: Vec<Need>) -> Vec<Need> {
    needs.sort_unstable();
    let mut out: Vec<Need> = Vec::with_capacity(needs.len());
    for n in needs {
        match out.last_mut() {
            Some(l) if (l.dst, l.src, l.base) == (n.dst, n.src, n.base) && n.lo <= l.hi => {
                l.hi = l.hi.max(n.hi);
            }
            _ => out.push(n),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use hassium_core::{Base, Bases, DType, Instr, Opcode, Operand};
    use smallvec::smallvec;

    fn grid(n: usize) -> (Base, View) {
        let b = Base {
            id: BaseId(1),
            dtype: DType::Float64,
            nelem: n * n,
        };
        (b, View::contiguous(BaseId(1), DType::Float64, &[n, n]))
    }

    /// new[1:-1,1:-1] = u[:-2,1:-1] + u[2:,1:-1] on an n×n grid: rows travel as halos.
    fn stencil(n: usize, ranks: u32) -> Plan {
        let (bu, u) = grid(n);
        let bn = Base {
            id: BaseId(2),
            ..bu
        };
        let new = View {
            base: BaseId(2),
            ..u.clone()
        };
        let inner = |v: &View, r0: isize, r1: isize| {
            v.slice(0, r0, r1, 1)
                .unwrap()
                .slice(1, 1, n as isize - 1, 1)
                .unwrap()
        };
        let add = Instr::new(
            Opcode::Add,
            inner(&new, 1, n as isize - 1),
            [
                Operand::View(inner(&u, 0, n as isize - 2)),
                Operand::View(inner(&u, 2, n as isize)),
            ],
        );
        let batch = Batch {
            bases: Bases::from_sorted(vec![bu, bn]),
            instrs: vec![add],
            sync: vec![],
            next_id: 0,
            in_range: Default::default(),
        };
        let k = Kernel {
            instrs: smallvec![0],
            shape: smallvec![n - 2, n - 2],
            contracted: smallvec![],
            reads: smallvec![BaseId(1)],
            writes: smallvec![BaseId(2)],
        };
        let mut layouts = IdMap::default();
        layouts.insert(BaseId(1), Layout::new(&bu, Some(&u), ranks, 0));
        layouts.insert(BaseId(2), Layout::new(&bn, Some(&new), ranks, 0));
        plan(&batch, &[k], &layouts, ranks)
    }

    #[test]
    fn a_stencil_runs_by_rows_and_receives_only_halo_rows() {
        for ranks in 2..=5u32 {
            let n = 11;
            let p = stencil(n, ranks);
            let Cut::Rows { ranges: rows, .. } = &p.cuts[0] else {
                panic!("whole")
            };
            assert_eq!(rows.iter().map(|r| r.1 - r.0).sum::<usize>(), n - 2);
            assert_eq!(p.phases.len(), 1);
            // Each inner boundary costs one row (less its two corner columns... at most n)
            // each way.
            let total: u64 = p.phases[0].needs.iter().map(|n| n.hi - n.lo).sum();
            assert!(total <= 2 * u64::from(ranks - 1) * n as u64, "{total}");
            assert!(
                total >= 2 * u64::from(ranks - 1) * (n as u64 - 2),
                "{total}"
            );
            assert!(p.phases[0].needs.iter().all(|n| n.dst.abs_diff(n.src) == 1));
            assert!(p.gathered.is_empty());
        }
    }

    #[test]
    fn rows_straddling_blocks_are_not_cut() {
        // A transposed view's first axis walks columns: every index touches every block.
        let (b, v) = grid(8);
        let l = Layout::new(&b, Some(&v), 3, 0);
        let t = v.transpose(&[1, 0]).unwrap();
        assert!(rows_of(&t, &l, 3).is_none());
        let r = rows_of(&v, &l, 3).unwrap();
        assert_eq!(r, vec![(0, 3), (3, 6), (6, 8)]);
        // Reversed rows are cut too, in reverse.
        let rev = v.slice(0, 7, -1, -1).unwrap();
        assert_eq!(rows_of(&rev, &l, 3).unwrap(), vec![(5, 8), (2, 5), (0, 2)]);
    }
}
