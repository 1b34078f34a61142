//! Loop bodies in a batch: a batch recorded from a Python loop is the loop body repeated,
//! and fusing all its iterations into one kernel makes that kernel as long as the loop.
//! Its compile time then grows with the iteration count (Black-Scholes with 10 steps:
//! one 2 200-instruction kernel, 2.5 s of `cc`; 100-element oscillators: a 1 800-node
//! kernel per batch, never compiled before the program ended), and no iteration's code
//! is ever reused.
//!
//! [`segments`] finds a repeating tail of the batch and cuts it at iteration boundaries,
//! a whole number of iterations per segment, as many as fit in [`SEGMENT_NODES`]; fusers
//! never merge across a cut (see `Graph::check`), so the segments become the same
//! kernels, compiled once and cached by key. A short body still fuses several iterations
//! (saving passes over memory); a repeating tail that fits in one segment is not cut.
//!
//! An instruction's *signature* is its structure without its identity: opcode, axis,
//! method, the dtype, offset, shape and strides of every view, the dtype of every scalar
//! (not its value, which changes between iterations), and for every view the distance
//! back to the last instruction that touched the same base (so data flow between
//! instructions is part of the shape of the loop, and base numbers are not). The period
//! is the one whose repetition, counted back from the end of the batch, covers the most
//! instructions. Among its rotations, the cut goes where the fewest bases are accessed
//! on both sides through views of one shape (only those could have stayed in a kernel's
//! registers), then where the fewest bases are accessed on both sides at all, which puts
//! it between iterations rather than inside an expression.

use hassium_core::{Batch, Instr, Operand, View};
use rustc_hash::FxHashMap;

/// The most nodes (non-system instructions) a segment of whole iterations spans, unless
/// one iteration is longer.
pub const SEGMENT_NODES: usize = 192;

/// Nodes after a batch's repeating part looked past in steps of 16 to find it (and
/// beyond, in powers of two up to a quarter of the batch).
pub const TAIL_NODES: usize = 512;

/// The segment of each node (non-system instruction, program order); `None` when the
/// batch has no long repeating tail (everything is one segment).
pub(crate) fn segments(batch: &Batch, nodes: &[usize]) -> Option<Vec<u32>> {
    let n = nodes.len();
    if n <= SEGMENT_NODES {
        return None;
    }
    let sig = signatures(batch, nodes);
    let (end, period, covered) = periodic_part(&sig)?;
    let region = covered + period;
    let start = end - region;
    let len = period * (SEGMENT_NODES / period).max(1);
    let phase = cut_phase(batch, &nodes[..end], period);
    // Cuts are `end - period + phase + k * len`; one more before `start` catches the
    // beginning of the first iteration, which differs from the rest only in what it reads
    // from before the loop. After `end` (the last iteration, whose results outlive the
    // batch, and what follows the loop) the cuts go on at the same distance.
    let mut cuts = Vec::new();
    let mut x = (end - period + phase + len) as isize;
    while (x as usize) < n {
        x += len as isize;
    }
    x -= len as isize;
    while x > 0 && x as usize + period > start {
        if (x as usize) < n {
            cuts.push(x as usize);
        }
        x -= len as isize;
    }
    cuts.reverse();
    let mut seg = vec![0u32; n];
    let mut s = 0u32;
    let mut next = cuts.iter().peekable();
    for (k, slot) in seg.iter_mut().enumerate() {
        while next.peek().is_some_and(|&&c| c <= k) {
            next.next();
            s += 1;
        }
        *slot = s;
    }
    Some(seg)
}

/// `(end, period, covered)`: the repeating part of the batch, ending at node `end`. That
/// is the batch's end, or up to [`TAIL_NODES`] or a quarter of the batch before it: a
/// loop's last iteration differs from the others (its results outlive the batch), and
/// a program's final computation may follow it. `None` when no repetition spans more
/// than [`SEGMENT_NODES`].
fn periodic_part(sig: &[u64]) -> Option<(usize, usize, usize)> {
    let n = sig.len();
    let mut tails: Vec<usize> = (0..=TAIL_NODES.min(n / 2)).step_by(16).collect();
    tails.extend((10..).map(|k| 1usize << k).take_while(|&t| t <= n / 4));
    tails.into_iter().find_map(|tail| {
        let end = n - tail;
        best_period(&sig[..end])
            .filter(|&(p, c)| c + p > SEGMENT_NODES)
            .map(|(p, c)| (end, p, c))
    })
}

/// One hash per node; see the module docs for what it covers.
fn signatures(batch: &Batch, nodes: &[usize]) -> Vec<u64> {
    let mut last_touch: FxHashMap<u64, usize> = FxHashMap::default();
    let mut out = Vec::with_capacity(nodes.len());
    for (node, &k) in nodes.iter().enumerate() {
        let i: &Instr = &batch.instrs[k];
        let mut h = Mix::new();
        h.add(i.op as u64);
        h.add(i.axis.map_or(u64::MAX, |a| a as u64));
        if let Some(m) = &i.method {
            for b in m.bytes() {
                h.add(b as u64);
            }
        }
        let mut view = |h: &mut Mix, v: &View| {
            h.add(v.dtype as u64);
            h.add(v.offset as u64);
            h.add(v.shape.len() as u64);
            for (&d, &s) in v.shape.iter().zip(&v.strides) {
                h.add(d as u64);
                h.add(s as u64);
            }
            let prev = last_touch.insert(v.base.0, node);
            h.add(prev.map_or(u64::MAX, |p| (node - p) as u64));
        };
        for o in &i.ins {
            match o {
                Operand::View(v) => view(&mut h, v),
                Operand::Scalar(s) => h.add(0x5ca1a7 ^ ((s.dtype() as u64) << 32)),
            }
        }
        view(&mut h, &i.out);
        out.push(h.finish());
    }
    out
}

/// `(period, covered)`: the period whose repetition back from the end covers the most
/// nodes (`covered` nodes equal the node `period` before them), at least one whole
/// period; the shortest on ties (a body repeated is also periodic with every multiple of
/// its length, which covers less).
fn best_period(sig: &[u64]) -> Option<(usize, usize)> {
    let n = sig.len();
    let last = sig[n - 1];
    let mut best: Option<(usize, usize)> = None;
    for p in 1..=n / 2 {
        // Period p covers at most n - p nodes: nothing longer can beat the best.
        if best.is_some_and(|(_, c)| n - p <= c) {
            break;
        }
        if sig[n - 1 - p] != last {
            continue;
        }
        let covered = (0..n - p)
            .take_while(|&t| sig[n - 1 - t] == sig[n - 1 - t - p])
            .count();
        if covered >= p && best.is_none_or(|(_, c)| covered > c) {
            best = Some((p, covered));
        }
    }
    best
}

/// An access shape of one base and the first and last node touching it so.
type ShapeSpan<'a> = (&'a [usize], usize, usize);

/// Where within a period to cut, as an offset from `n - period`: the position with the
/// fewest bases accessed both before and after it through views of one shape (within the
/// last two periods), preferring the rotation of the batch's end on ties. Accesses of
/// different shapes never share a kernel (a kernel is one loop nest), so a base crossing
/// the cut only so (a lattice-Boltzmann distribution written whole, then read by the
/// pieces of its `np.roll`) goes through memory wherever the cut is; counted, it drew the
/// cut into the middle of the iteration, between the moments and the collision, which
/// then wrote and re-read the density and velocities (2 MB arrays, 154 → 98 MB a step).
fn cut_phase(batch: &Batch, nodes: &[usize], period: usize) -> usize {
    let n = nodes.len();
    let lo = n - 2 * period;
    // Per base and access shape: first and last node (relative to `lo`) in the window.
    let mut spans: FxHashMap<u64, Vec<ShapeSpan>> = FxHashMap::default();
    for (r, &k) in nodes[lo..].iter().enumerate() {
        let i = &batch.instrs[k];
        for v in std::iter::once(&i.out).chain(i.input_views()) {
            let per_shape = spans.entry(v.base.0).or_default();
            match per_shape.iter_mut().find(|s| s.0 == &v.shape[..]) {
                Some(s) => s.2 = r,
                None => per_shape.push((&v.shape[..], r, r)),
            }
        }
    }
    // For a cut before relative node x: `fusable[x]`, the bases with, for some shape,
    // first < x <= last; `any[x]`, the bases accessed on both sides at all (the tie
    // breaker: among cuts crossing as few fusable bases, the one crossing fewest bases).
    let mut fusable = vec![0i64; 2 * period + 1];
    let mut any = vec![0i64; 2 * period + 1];
    for per_shape in spans.values() {
        let mut spans: Vec<(usize, usize)> = (per_shape.iter())
            .filter(|s| s.2 > s.1)
            .map(|s| (s.1, s.2))
            .collect();
        spans.sort_unstable();
        // The union of the shapes' spans: each base counts once at any cut.
        let mut merged: Vec<(usize, usize)> = Vec::new();
        for (first, last) in spans {
            match merged.last_mut() {
                Some(m) if first <= m.1 => m.1 = m.1.max(last),
                _ => merged.push((first, last)),
            }
        }
        for (first, last) in merged {
            fusable[first + 1] += 1;
            fusable[last + 1] -= 1;
        }
        let first = per_shape.iter().map(|s| s.1).min().unwrap_or(0);
        let last = per_shape.iter().map(|s| s.2).max().unwrap_or(0);
        if last > first {
            any[first + 1] += 1;
            any[last + 1] -= 1;
        }
    }
    let mut live = vec![(0i64, 0i64); 2 * period + 1];
    let mut acc = (0, 0);
    for x in 0..=2 * period {
        acc = (acc.0 + fusable[x], acc.1 + any[x]);
        live[x] = acc;
    }
    // Cuts are weighed in the middle of the window, at least half a period from either
    // end, so that what lies beyond the batch's end does not look dead. The cut before
    // relative node `period` is phase 0 (the rotation of the batch's end).
    let mut best = (live[period], period);
    for (x, &l) in live
        .iter()
        .enumerate()
        .take(period + period / 2)
        .skip(period / 2)
    {
        if l < best.0 {
            best = (l, x);
        }
    }
    best.1 % period
}

/// A small, fast, deterministic hash (the multiply-xorshift of the fuse cache's id map).
struct Mix(u64);

impl Mix {
    fn new() -> Mix {
        Mix(0x9E37_79B9_7F4A_7C15)
    }
    fn add(&mut self, x: u64) {
        self.0 = (self.0 ^ x).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        self.0 ^= self.0 >> 31;
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hassium_core::{Base, BaseId, DType, Opcode, Scalar};

    fn v(b: u64, n: usize) -> View {
        View::contiguous(BaseId(b), DType::Float64, &[n])
    }

    /// A prefix writing base 1, then `iters` iterations of a `body`-instruction chain
    /// reading base 1 and a per-iteration scalar, each on fresh temporaries.
    fn looped(body: usize, iters: usize) -> Batch {
        let mut b = Batch::default();
        let n = 100;
        let mut next = 10;
        add_base(&mut b, 1, n);
        b.instrs.push(Instr::new(
            Opcode::Identity,
            v(1, n),
            vec![Operand::Scalar(Scalar::Float64(1.0))],
        ));
        for it in 0..iters {
            let mut prev = v(1, n);
            for _ in 0..body {
                next += 1;
                add_base(&mut b, next, n);
                let out = v(next, n);
                b.instrs.push(Instr::new(
                    Opcode::Add,
                    out.clone(),
                    vec![
                        Operand::View(prev),
                        Operand::Scalar(Scalar::Float64(it as f64)),
                    ],
                ));
                prev = out;
            }
        }
        b
    }

    fn add_base(b: &mut Batch, id: u64, nelem: usize) {
        let base = Base {
            id: BaseId(id),
            dtype: DType::Float64,
            nelem,
        };
        b.bases.insert(base.id, base);
    }

    /// Instruction k adds the results of instructions k-1 and k/2: no two alike.
    fn chain_without_repeats(len: usize) -> Batch {
        let mut b = Batch::default();
        let n = 8;
        add_base(&mut b, 1, n);
        b.instrs.push(Instr::new(
            Opcode::Identity,
            v(1, n),
            vec![Operand::Scalar(Scalar::Float64(1.0))],
        ));
        for k in 1..len {
            add_base(&mut b, 1 + k as u64, n);
            b.instrs.push(Instr::new(
                Opcode::Add,
                v(1 + k as u64, n),
                vec![
                    Operand::View(v(k as u64, n)),
                    Operand::View(v(1 + (k / 2) as u64, n)),
                ],
            ));
        }
        b
    }

    fn nodes(b: &Batch) -> Vec<usize> {
        (0..b.instrs.len()).collect()
    }

    /// A lattice-Boltzmann-like loop: each iteration streams four arrays into fresh ones
    /// by two half-copies each (views of another shape than the arrays'), sums the copies
    /// into `rho` and `u` (the moments), and makes the next four arrays from `rho` and `u`
    /// alone (the collision). 21 nodes an iteration, the first of them a copy.
    fn streamed(iters: usize) -> Batch {
        let mut b = Batch::default();
        let n = 64;
        let mut next = 0u64;
        let mut fresh = |b: &mut Batch| {
            next += 1;
            add_base(b, next, n);
            v(next, n)
        };
        let mut f: Vec<View> = (0..4).map(|_| fresh(&mut b)).collect();
        let half = |x: &View, k: isize| x.slice(0, 32 * k, 32 * k + 32, 1).unwrap();
        let ins = |xs: &[&View]| {
            xs.iter()
                .map(|x| Operand::View((*x).clone()))
                .collect::<Vec<_>>()
        };
        for _ in 0..iters {
            let g: Vec<View> = (0..4).map(|_| fresh(&mut b)).collect();
            for (fj, gj) in f.iter().zip(&g) {
                for k in 0..2 {
                    b.instrs.push(Instr::new(
                        Opcode::Identity,
                        half(gj, k),
                        ins(&[&half(fj, 1 - k)]),
                    ));
                }
            }
            let (s1, s2, rho) = (fresh(&mut b), fresh(&mut b), fresh(&mut b));
            b.instrs
                .push(Instr::new(Opcode::Add, s1.clone(), ins(&[&g[0], &g[1]])));
            b.instrs
                .push(Instr::new(Opcode::Add, s2.clone(), ins(&[&s1, &g[2]])));
            b.instrs
                .push(Instr::new(Opcode::Add, rho.clone(), ins(&[&s2, &g[3]])));
            let (d, u) = (fresh(&mut b), fresh(&mut b));
            b.instrs.push(Instr::new(
                Opcode::Subtract,
                d.clone(),
                ins(&[&g[1], &g[3]]),
            ));
            b.instrs
                .push(Instr::new(Opcode::Divide, u.clone(), ins(&[&d, &rho])));
            f = (0..4)
                .map(|j| {
                    let (t, out) = (fresh(&mut b), fresh(&mut b));
                    let w = Operand::Scalar(Scalar::Float64(0.25 * j as f64));
                    b.instrs.push(Instr::new(
                        Opcode::Multiply,
                        t.clone(),
                        vec![Operand::View(rho.clone()), w],
                    ));
                    b.instrs
                        .push(Instr::new(Opcode::Add, out.clone(), ins(&[&t, &u])));
                    out
                })
                .collect();
        }
        b
    }

    #[test]
    fn a_loop_is_cut_where_only_data_no_kernel_could_share_crosses() {
        // Two bases (`rho`, `u`) cross between the moments and the collision, four (the
        // arrays) before the copies; but the copies read them through other shapes, so
        // no kernel could keep them in registers there anyway.
        let b = streamed(40);
        let seg = segments(&b, &nodes(&b)).expect("periodic");
        let cuts: Vec<usize> = (1..seg.len()).filter(|&k| seg[k] != seg[k - 1]).collect();
        assert!(!cuts.is_empty());
        for k in cuts {
            assert_eq!(k % 21, 0, "cut inside an iteration at node {k}");
        }
    }

    #[test]
    fn a_long_loop_body_is_cut_at_each_iteration() {
        let b = looped(120, 5);
        let seg = segments(&b, &nodes(&b)).expect("periodic");
        // Node 0 is the prefix; iteration k is nodes 1 + 120k .. 121 + 120k.
        for it in 0..5 {
            let s = seg[1 + 120 * it];
            assert!(
                (1 + 120 * it..121 + 120 * it).all(|k| seg[k] == s),
                "iteration {it}"
            );
            if it > 0 {
                assert_eq!(s, seg[120 * it] + 1, "cut before iteration {it}");
            }
        }
    }

    #[test]
    fn a_short_body_keeps_whole_iterations_together_up_to_the_segment_size() {
        let b = looped(10, 100);
        let seg = segments(&b, &nodes(&b)).expect("periodic");
        let per = SEGMENT_NODES / 10;
        // Every cut falls between iterations, and full segments hold `per` of them.
        let mut sizes = std::collections::BTreeMap::new();
        for k in 1..b.instrs.len() {
            if seg[k] != seg[k - 1] {
                assert_eq!((k - 1) % 10, 0, "cut inside an iteration at node {k}");
            }
            *sizes.entry(seg[k]).or_insert(0usize) += 1;
        }
        let full = sizes.values().filter(|&&c| c == per * 10).count();
        assert!(full >= 100 / per - 1, "{sizes:?}");
        assert!(sizes.values().all(|&c| c <= per * 10 + 1), "{sizes:?}");
    }

    #[test]
    fn batches_that_fit_one_segment_or_do_not_repeat_stay_whole() {
        let b = looped(10, 15);
        assert!(segments(&b, &nodes(&b)).is_none());
        // One long chain whose steps differ (each reads a different earlier result).
        let r = chain_without_repeats(300);
        assert!(segments(&r, &nodes(&r)).is_none());
    }

    #[test]
    fn a_loop_followed_by_something_else_is_still_cut_at_each_iteration() {
        // The loop's last iteration, then a program's final computation (a chain unlike
        // the body) in the same batch.
        let mut b = looped(120, 5);
        let tail = chain_without_repeats(40);
        let base = 10_000;
        for i in &tail.instrs {
            let mut i = i.clone();
            let shift = |v: &mut View| v.base = BaseId(v.base.0 + base);
            shift(&mut i.out);
            for o in i.ins.iter_mut() {
                if let Operand::View(v) = o {
                    shift(v);
                }
            }
            add_base(&mut b, i.out.base.0, 8);
            b.instrs.push(i);
        }
        let seg = segments(&b, &nodes(&b)).expect("periodic before its tail");
        for it in 1..5 {
            assert_eq!(
                seg[1 + 120 * it],
                seg[120 * it] + 1,
                "cut before iteration {it}"
            );
        }
        let last = *seg.last().unwrap();
        assert!(seg[b.instrs.len() - 40..].iter().all(|&s| s == last));
    }
}
