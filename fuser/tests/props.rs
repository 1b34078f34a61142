//! Property tests over random batches: random shapes, overlapping and disjoint views of a
//! few bases (shifted, strided, reversed, broadcast), reductions, scans and frees.

mod exec;

use hassium_core::{
    lag_rows, overlap, self_overlaps, verify_instr, Batch, Capabilities, DType, Instr, Opcode,
    Operand, Overlap, Scalar, View,
};
use hassium_fuser::recorder::Recorder;
use hassium_fuser::{check_partition, cost, create, FuserOptions};
use proptest::prelude::*;

use exec::Rng;

const NELEM: usize = 48;
const SHAPES: &[&[usize]] = &[&[6], &[2, 3], &[3, 2], &[2], &[3]];

/// A random view of `shape` inside a base of NELEM elements.
fn random_view(rng: &mut Rng, base: &View, shape: &[usize], broadcast: bool) -> View {
    let strides: Vec<isize> = shape
        .iter()
        .enumerate()
        .map(|(k, _)| {
            let choices: &[isize] = if broadcast {
                &[0, 1, 3]
            } else if k == 0 && shape.len() > 1 {
                &[3, 6, -3, 1, 12]
            } else {
                &[1, 2, -1, 3]
            };
            *rng.pick(choices)
        })
        .collect();
    let mut v = View {
        base: base.base,
        dtype: base.dtype,
        offset: 0,
        shape: shape.into(),
        strides: strides.into(),
    };
    let (lo, hi) = v.extent().unwrap();
    let room = (NELEM as isize - 1 - hi) + lo; // offsets keeping [lo, hi] inside
    v.offset = -lo + rng.below(room.max(0) as usize + 1) as isize;
    v
}

fn random_batch(seed: u64) -> Batch {
    let mut rng = Rng(seed);
    let mut r = Recorder::new();
    let persistent: Vec<View> = (0..3).map(|_| r.array(DType::Float64, &[NELEM])).collect();
    let mut live: Vec<View> = Vec::new();
    let steps = 3 + rng.below(14);
    for _ in 0..steps {
        let action = rng.below(10);
        if action == 9 && !live.is_empty() {
            let t = live.remove(rng.below(live.len()));
            r.free(&t);
            continue;
        }
        let (op, in_shape): (Opcode, Vec<usize>) = match action {
            0..=4 => (
                *rng.pick(&[
                    Opcode::Add,
                    Opcode::Subtract,
                    Opcode::Multiply,
                    Opcode::Maximum,
                    Opcode::Divide,
                ]),
                rng.pick(SHAPES).to_vec(),
            ),
            5 | 6 => (
                *rng.pick(&[
                    Opcode::Negative,
                    Opcode::Absolute,
                    Opcode::Sqrt,
                    Opcode::Identity,
                ]),
                rng.pick(SHAPES).to_vec(),
            ),
            7 => (
                *rng.pick(&[
                    Opcode::AddReduce,
                    Opcode::MaximumReduce,
                    Opcode::MultiplyReduce,
                ]),
                rng.pick(&SHAPES[..3]).to_vec(),
            ),
            _ => (Opcode::AddAccumulate, rng.pick(&SHAPES[..3]).to_vec()),
        };
        let axis = rng.below(in_shape.len());
        let mut out_shape = in_shape.clone();
        if op.is_reduction() {
            out_shape.remove(axis);
        }
        let operand = |rng: &mut Rng, r: &Recorder, allow_scalar: bool| -> Operand {
            let same: Vec<&View> = live
                .iter()
                .filter(|t| t.shape.as_slice() == in_shape.as_slice())
                .collect();
            match rng.below(if allow_scalar { 5 } else { 4 }) {
                0 if !same.is_empty() => (*rng.pick(&same)).clone().into(),
                1 => {
                    let base = rng_pick_base(rng, &persistent);
                    random_view(rng, base, &in_shape, true).into()
                }
                4 => Scalar::Float64(rng.below(5) as f64 - 1.5).into(),
                _ => {
                    let _ = r;
                    let base = rng_pick_base(rng, &persistent);
                    random_view(rng, base, &in_shape, false).into()
                }
            }
        };
        let ins: Vec<Operand> = match op.nin() {
            1 => vec![operand(&mut rng, &r, false)],
            _ => vec![operand(&mut rng, &r, true), operand(&mut rng, &r, true)],
        };
        if ins.iter().all(|o| o.as_view().is_none()) {
            continue;
        }
        let out = if rng.below(2) == 0 {
            let t = r.array(DType::Float64, &out_shape);
            live.push(t.clone());
            t
        } else {
            let base = rng_pick_base(&mut rng, &persistent);
            random_view(&mut rng, base, &out_shape, false)
        };
        let mut instr = Instr::new(op, out, ins);
        if op.is_reduction() || op.is_scan() {
            instr.axis = Some(axis);
        }
        if verify_instr(&instr, |id| r.batch().base(id).copied()).is_ok() {
            r.push(instr);
        }
    }
    for t in live.drain(..).filter(|_| rng.below(3) > 0) {
        r.free(&t);
    }
    r.sync(&persistent[rng.below(3)]);
    r.finish()
}

fn rng_pick_base<'a>(rng: &mut Rng, bases: &'a [View]) -> &'a View {
    rng.pick(bases)
}

/// A float64 memory for the lockstep simulator.
type Mem = std::collections::HashMap<hassium_core::BaseId, Vec<f64>>;

fn index_of(shape: &[usize], mut k: usize) -> Vec<usize> {
    let mut idx = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        idx[d] = k % shape[d].max(1);
        k /= shape[d].max(1);
    }
    idx
}

fn load(mem: &Mem, o: &Operand, idx: &[usize]) -> f64 {
    match o {
        Operand::View(v) => mem[&v.base][v.offset_of(idx) as usize],
        Operand::Scalar(s) => s.as_f64(),
    }
}

fn apply(op: Opcode, a: f64, b: f64) -> f64 {
    match op {
        Opcode::Add | Opcode::AddReduce | Opcode::AddAccumulate => a + b,
        Opcode::Subtract => a - b,
        Opcode::Multiply | Opcode::MultiplyReduce => a * b,
        Opcode::Divide => a / b,
        Opcode::Maximum | Opcode::MaximumReduce => {
            if a.is_nan() || a >= b {
                a
            } else {
                b
            }
        }
        Opcode::Negative => -a,
        Opcode::Absolute => a.abs(),
        Opcode::Sqrt => a.sqrt(),
        Opcode::Identity => a,
        other => panic!("lockstep simulator lacks {other:?}"),
    }
}

/// One elementwise instruction at one point of its loop.
fn step(mem: &mut Mem, i: &Instr, idx: &[usize]) {
    let a = load(mem, &i.ins[0], idx);
    let b = i.ins.get(1).map_or(0.0, |o| load(mem, o, idx));
    let off = i.out.offset_of(idx) as usize;
    mem.get_mut(&i.out.base).unwrap()[off] = apply(i.op, a, b);
}

/// A whole instruction, on its own.
fn whole(mem: &mut Mem, i: &Instr) {
    if i.op.is_elementwise() {
        for k in 0..i.out.nelem() {
            step(mem, i, &index_of(&i.out.shape, k));
        }
        return;
    }
    let x = i.ins[0].as_view().unwrap();
    let axis = i.axis.unwrap();
    let n = x.shape[axis];
    let outer: Vec<usize> = x
        .shape
        .iter()
        .enumerate()
        .filter(|&(d, _)| d != axis)
        .map(|(_, &e)| e)
        .collect();
    for k in 0..outer.iter().product::<usize>() {
        let mut idx = index_of(&outer, k);
        idx.insert(axis, 0);
        let mut acc: Option<f64> = None;
        for j in 0..n {
            idx[axis] = j;
            let v = load(mem, &i.ins[0], &idx);
            let next = acc.map_or(v, |a| apply(i.op, a, v));
            acc = Some(next);
            if i.op.is_scan() {
                let off = i.out.offset_of(&idx) as usize;
                mem.get_mut(&i.out.base).unwrap()[off] = next;
            }
        }
        if i.op.is_reduction() {
            idx.remove(axis);
            let off = i.out.offset_of(&idx) as usize;
            mem.get_mut(&i.out.base).unwrap()[off] =
                acc.unwrap_or(if i.op == Opcode::MultiplyReduce {
                    1.0
                } else {
                    0.0
                });
        }
    }
}

/// The output views of an elementwise kernel's instructions that compiled code holds back
/// (codegen's `held_back`): each one a base is read through, earlier in the kernel, by
/// another view that overlaps it. Also the rows they wait: the most any such read needs
/// ([`lag_rows`]), and at least the write's own row span.
fn held_back<'a>(instrs: &[&'a Instr]) -> (Vec<&'a View>, usize) {
    let (mut held, mut lag) = (Vec::new(), 0);
    for (pos, w) in instrs.iter().enumerate() {
        for r in instrs[..pos].iter().flat_map(|i| i.input_views()) {
            if r.base == w.out.base && *r != w.out && overlap(r, &w.out) != Overlap::Disjoint {
                // No lag: a hard conflict the fuser should have kept apart; run it
                // unlagged so the comparison shows the damage.
                if let (Some(k), Some(own)) = (lag_rows(r, &w.out), lag_rows(&w.out, &w.out)) {
                    held.push(&w.out);
                    lag = lag.max(k).max(own);
                }
            }
        }
    }
    (held, lag)
}

/// [`step`] in a kernel that holds writes through `held` views back: such a write is
/// returned (base, offset, value) instead of made, and read back at this point only, as
/// compiled code keeps it in a register, by identical views (`here`).
fn step_held<'a>(
    mem: &mut Mem,
    i: &'a Instr,
    idx: &[usize],
    held: &[&View],
    here: &mut Vec<(&'a View, f64)>,
) -> Option<(hassium_core::BaseId, usize, f64)> {
    let load_here = |o: &Operand| match o {
        Operand::View(v) => here.iter().rev().find(|(w, _)| *w == v).map(|&(_, x)| x),
        Operand::Scalar(_) => None,
    };
    let a = load_here(&i.ins[0]).unwrap_or_else(|| load(mem, &i.ins[0], idx));
    let b = i
        .ins
        .get(1)
        .map_or(0.0, |o| load_here(o).unwrap_or_else(|| load(mem, o, idx)));
    let value = apply(i.op, a, b);
    let off = i.out.offset_of(idx) as usize;
    if held.contains(&&i.out) {
        here.push((&i.out, value));
        Some((i.out.base, off, value))
    } else {
        mem.get_mut(&i.out.base).unwrap()[off] = value;
        None
    }
}

/// Runs each kernel as one loop nest when it is purely elementwise (every instruction at
/// point k before any at point k+1, as compiled code does, holding back writes the way
/// the engines do for a soft pair), else instruction by instruction. A partition that
/// fused a partially overlapping pair reads values of the wrong iteration here, where the
/// reference engine would not notice.
fn lockstep(
    batch: &Batch,
    kernels: &[hassium_core::Kernel],
    seed: u64,
) -> Vec<(hassium_core::BaseId, Vec<u64>)> {
    let mut mem: Mem = batch
        .bases
        .values()
        .map(|b| (b.id, exec::f64s(&exec::initial(b, seed, false))))
        .collect();
    for k in kernels {
        let instrs: Vec<&Instr> = k.instrs.iter().map(|&i| &batch.instrs[i]).collect();
        if instrs.iter().all(|i| i.op.is_elementwise()) {
            let (held, lag) = held_back(&instrs);
            let row: usize = k.shape.iter().skip(1).product();
            // Held writes by row, committed once `lag` more rows have run.
            let mut pending: Vec<Vec<(hassium_core::BaseId, usize, f64)>> = Vec::new();
            let commit = |mem: &mut Mem, writes: Vec<(hassium_core::BaseId, usize, f64)>| {
                for (b, off, x) in writes {
                    mem.get_mut(&b).unwrap()[off] = x;
                }
            };
            for p in 0..k.shape.iter().product::<usize>() {
                let idx = index_of(&k.shape, p);
                if held.is_empty() {
                    for i in &instrs {
                        step(&mut mem, i, &idx);
                    }
                    continue;
                }
                let r = p / row.max(1);
                if pending.len() <= r {
                    pending.push(Vec::new());
                }
                let mut here = Vec::new();
                for i in &instrs {
                    if let Some(w) = step_held(&mut mem, i, &idx, &held, &mut here) {
                        pending[r].push(w);
                    }
                }
                if (p + 1) % row.max(1) == 0 && r >= lag {
                    commit(&mut mem, std::mem::take(&mut pending[r - lag]));
                }
            }
            for writes in pending {
                commit(&mut mem, writes);
            }
        } else {
            for i in instrs {
                whole(&mut mem, i);
            }
        }
    }
    let keep = exec::observable(batch);
    let mut out: Vec<_> = mem
        .into_iter()
        .filter(|(b, _)| keep.contains(b))
        .map(|(b, v)| {
            (
                b,
                v.iter()
                    .map(|x| if x.is_nan() { u64::MAX } else { x.to_bits() })
                    .collect(),
            )
        })
        .collect();
    out.sort();
    out
}

/// Every fuser on the random batch of `seed`: a legal partition, the unfused results,
/// and the same values when each kernel runs as one loop nest; costs ordered from the
/// optimal fuser to the singleton one.
fn fusers_agree(seed: u64) -> Result<(), TestCaseError> {
    let batch = random_batch(seed);
    hassium_core::verify(&batch).unwrap();
    let want = exec::observe(&batch, &exec::unfused(&batch), seed, true).unwrap();
    let mut costs = Vec::new();
    for name in ["optimal", "greedy", "serial", "singleton"] {
        let kernels = create(name, &FuserOptions::default())
            .unwrap()
            .fuse(&batch, &Capabilities::all())
            .unwrap();
        if let Err(e) = check_partition(&batch, &kernels) {
            panic!(
                "{name}: {e}\n{}",
                hassium_core::dump::kernels_text(&batch, &kernels)
            );
        }
        let got = exec::observe(&batch, &kernels, seed, true).unwrap();
        prop_assert!(
            got == want,
            "{name} changed the results\n{}",
            hassium_core::dump::kernels_text(&batch, &kernels)
        );
        prop_assert!(
            lockstep(&batch, &kernels, seed) == lockstep(&batch, &exec::unfused(&batch), seed),
            "{name}'s kernels compute other values when run as loop nests\n{}",
            hassium_core::dump::kernels_text(&batch, &kernels)
        );
        costs.push(cost(&batch, &kernels));
    }
    prop_assert!(
        costs[0] <= costs[1] && costs[1] <= costs[2] && costs[2] <= costs[3],
        "{costs:?}"
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn every_fuser_builds_legal_ordered_partitions_that_compute_the_same_bytes(seed in any::<u64>()) {
        fusers_agree(seed)?;
    }
}

/// Seeds that once failed: a read then a write of the same base a row apart, which the
/// engines run with the write held back; and a write through a view naming an element
/// twice, then a read through that view, which no fuser may serve from the write.
#[test]
fn seeds_that_failed_once_pass() {
    for seed in [15530882873867330192, 5025116393449072630] {
        fusers_agree(seed).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
    }
}

#[test]
fn random_batches_are_varied() {
    let (mut fused_somewhere, mut reductions, mut partial) = (0, 0, 0);
    for seed in 0..200 {
        let batch = random_batch(seed);
        let kernels = create("greedy", &FuserOptions::default())
            .unwrap()
            .fuse(&batch, &Capabilities::all())
            .unwrap();
        fused_somewhere += kernels.iter().any(|k| k.instrs.len() > 1) as usize;
        reductions += batch.instrs.iter().any(|i| i.op.is_reduction()) as usize;
        let n = batch.instrs.iter().filter(|i| !i.op.is_system()).count();
        partial += (kernels.len() > 1 && kernels.len() < n) as usize;
    }
    assert!(
        fused_somewhere > 100 && reductions > 50 && partial > 30,
        "{fused_somewhere} {reductions} {partial}"
    );
}

/// An operand of a loop body: a temporary made earlier in the same iteration, a view of
/// one of the loop's arrays, or a scalar.
#[derive(Clone)]
enum Slot {
    Temp(usize),
    Persistent(View),
    Scalar(f64),
}

/// One instruction of a loop body: opcode, shape, output (None: a new temporary), inputs.
type Step = (Opcode, Vec<usize>, Option<View>, Vec<Slot>);

/// A random loop body over three arrays, recorded `iterations` times with fresh
/// temporaries each time (freed at the end of the iteration), then synced: long enough
/// for `period.rs` to cut it into segments, inside which the fusers keep reachability.
fn looped_batch(seed: u64, iterations: usize) -> Batch {
    let mut rng = Rng(seed);
    let mut r = Recorder::new();
    let persistent: Vec<View> = (0..3).map(|_| r.array(DType::Float64, &[NELEM])).collect();
    let mut body: Vec<Step> = Vec::new();
    let mut temps: Vec<Vec<usize>> = Vec::new();
    for _ in 0..3 + rng.below(6) {
        let op = *rng.pick(&[
            Opcode::Add,
            Opcode::Subtract,
            Opcode::Multiply,
            Opcode::Maximum,
        ]);
        let shape = rng.pick(SHAPES).to_vec();
        let mut ins = Vec::new();
        for _ in 0..2 {
            let same: Vec<usize> = (0..temps.len()).filter(|&t| temps[t] == shape).collect();
            ins.push(match rng.below(4) {
                0 if !same.is_empty() => Slot::Temp(*rng.pick(&same)),
                1 => Slot::Scalar(rng.below(5) as f64 - 1.5),
                _ => {
                    let base = rng_pick_base(&mut rng, &persistent);
                    let broadcast = rng.below(4) == 0;
                    Slot::Persistent(random_view(&mut rng, base, &shape, broadcast))
                }
            });
        }
        let out = if rng.below(2) == 0 {
            None
        } else {
            let base = rng_pick_base(&mut rng, &persistent);
            let o = random_view(&mut rng, base, &shape, false);
            // What verification would refuse: a view naming an element twice written,
            // or written while another view of its elements is read.
            let clash = |s: &Slot| match s {
                Slot::Persistent(v) => overlap(&o, v) == Overlap::Partial,
                _ => false,
            };
            if self_overlaps(&o) || ins.iter().any(clash) {
                continue;
            }
            Some(o)
        };
        if out.is_none() {
            temps.push(shape.clone());
        }
        body.push((op, shape, out, ins));
    }
    for _ in 0..iterations {
        let mut made: Vec<View> = Vec::new();
        for (op, shape, out, ins) in &body {
            let ins: Vec<Operand> = ins
                .iter()
                .map(|s| match s {
                    Slot::Temp(t) => made[*t].clone().into(),
                    Slot::Persistent(v) => v.clone().into(),
                    Slot::Scalar(x) => Scalar::Float64(*x).into(),
                })
                .collect();
            let out = out.clone().unwrap_or_else(|| {
                let t = r.array(DType::Float64, shape);
                made.push(t.clone());
                t
            });
            r.push(Instr::new(*op, out, ins));
        }
        for t in &made {
            r.free(t);
        }
    }
    for p in &persistent {
        r.sync(p);
    }
    r.finish()
}

#[test]
fn loops_cut_into_segments_fuse_into_legal_partitions_that_compute_the_same_bytes() {
    for seed in 0..24 {
        let batch = looped_batch(seed, 60);
        hassium_core::verify(&batch).unwrap();
        let want = exec::observe(&batch, &exec::unfused(&batch), seed, true).unwrap();
        for name in ["greedy", "optimal"] {
            let kernels = create(name, &FuserOptions::default())
                .unwrap()
                .fuse(&batch, &Capabilities::all())
                .unwrap();
            if let Err(e) = check_partition(&batch, &kernels) {
                panic!("seed {seed}, {name}: {e}");
            }
            let got = exec::observe(&batch, &kernels, seed, true).unwrap();
            assert!(got == want, "seed {seed}: {name} changed the results");
        }
    }
}
