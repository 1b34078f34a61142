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
//! instructions. Among its rotations, the cut goes where the fewest bases are live across
//! it, which puts it between iterations rather than inside an expression.

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

/// Where within a period to cut, as an offset from `n - period`: the position with the
/// fewest bases accessed both before and after it (within the last two periods),
/// preferring the rotation of the batch's end on ties.
fn cut_phase(batch: &Batch, nodes: &[usize], period: usize) -> usize {
    let n = nodes.len();
    let lo = n - 2 * period;
    // Per base: first and last node (relative to `lo`) touching it in the window.
    let mut span: FxHashMap<u64, (usize, usize)> = FxHashMap::default();
    for (r, &k) in nodes[lo..].iter().enumerate() {
        let i = &batch.instrs[k];
        for v in std::iter::once(&i.out).chain(i.input_views()) {
            let e = span.entry(v.base.0).or_insert((r, r));
            e.1 = r;
        }
    }
    // live[x] = bases with first < x <= last, for a cut before relative node x.
    let mut diff = vec![0i64; 2 * period + 1];
    for &(first, last) in span.values() {
        if last > first {
            diff[first + 1] += 1;
            diff[last + 1] -= 1;
        }
    }
    let mut live = vec![0i64; 2 * period + 1];
    let mut acc = 0;
    for x in 0..=2 * period {
        acc += diff[x];
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
