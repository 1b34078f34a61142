//! Every elementwise opcode × dtype over several view layouts, and scalar operands.

use super::{Spec, Subject};
use crate::*;
use hassium_core::{BaseId, Batch, DType, Instr, Kernel, Opcode, Operand, View};

#[derive(Clone, Copy, Debug)]
enum Layout {
    Contiguous,
    Strided,
    Negative,
    Broadcast,
    ZeroD,
    ScalarOperand,
}

const SHAPE: [usize; 2] = [5, 13];

/// An input view of `dtype` in `layout` (a fresh base), the base filled later.
fn input(b: &mut Batch, dtype: DType, layout: Layout, k: usize) -> View {
    match layout {
        Layout::Contiguous | Layout::ScalarOperand => {
            View::contiguous(base(b, dtype, 65), dtype, &SHAPE)
        }
        Layout::Strided => {
            let v = View::contiguous(base(b, dtype, 130), dtype, &[5, 26]);
            v.slice(1, 1, 26, 2).unwrap()
        }
        Layout::Negative => {
            let v = View::contiguous(base(b, dtype, 65), dtype, &SHAPE);
            v.slice(0, 4, -1, -1).unwrap().slice(1, 12, -1, -1).unwrap()
        }
        Layout::Broadcast if k == 0 => View::contiguous(base(b, dtype, 13), dtype, &[13])
            .broadcast_to(&SHAPE)
            .unwrap(),
        Layout::Broadcast => {
            let v = View::contiguous(base(b, dtype, 5), dtype, &[5, 1]);
            v.broadcast_to(&SHAPE).unwrap()
        }
        Layout::ZeroD => View::contiguous(base(b, dtype, 1), dtype, &[]),
    }
}

fn out_shape(layout: Layout) -> Vec<usize> {
    match layout {
        Layout::ZeroD => vec![],
        _ => SHAPE.to_vec(),
    }
}

/// Whether input `k` of `op` should hold small non-negative integers.
fn small(op: Opcode, k: usize) -> bool {
    k == 1 && matches!(op, Opcode::LeftShift | Opcode::RightShift | Opcode::Power)
}

fn elementwise_batch(layout: Layout, rng: &mut Rng) -> (Batch, Arrays, Vec<BaseId>) {
    let mut b = Batch::default();
    let mut fills = Vec::new();
    let mut outs = Vec::new();
    for &op in Opcode::ALL {
        if !op.is_elementwise() || matches!(op, Opcode::Identity | Opcode::Where) {
            continue;
        }
        for t in op.info().types.iter() {
            if t.is_complex() {
                continue;
            }
            let od = op.out_dtype(t).unwrap();
            let mut ins: Vec<Operand> = Vec::new();
            for k in 0..op.nin() {
                if matches!(layout, Layout::ScalarOperand) && k == 1 {
                    ins.push(Operand::Scalar(value(t, rng, small(op, k))));
                    continue;
                }
                let v = input(&mut b, t, layout, k);
                fills.push((v.base, small(op, k)));
                ins.push(v.into());
            }
            let shape = out_shape(layout);
            let o = base(&mut b, od, shape.iter().product());
            outs.push(o);
            b.instrs
                .push(Instr::new(op, View::contiguous(o, od, &shape), ins));
        }
    }
    // Casts between every pair of real dtypes, and `where` for every dtype.
    for from in DType::ALL.into_iter().filter(|d| !d.is_complex()) {
        for to in DType::ALL.into_iter().filter(|d| !d.is_complex()) {
            let v = input(&mut b, from, layout, 0);
            fills.push((v.base, true));
            let shape = out_shape(layout);
            let o = base(&mut b, to, shape.iter().product());
            outs.push(o);
            b.instrs.push(Instr::new(
                Opcode::Identity,
                View::contiguous(o, to, &shape),
                [v.into()],
            ));
        }
        let m = input(&mut b, DType::Bool, layout, 0);
        let x = input(&mut b, from, layout, 1);
        let y = input(&mut b, from, layout, 0);
        fills.extend([(m.base, false), (x.base, false), (y.base, false)]);
        let shape = out_shape(layout);
        let o = base(&mut b, from, shape.iter().product());
        outs.push(o);
        b.instrs.push(Instr::new(
            Opcode::Where,
            View::contiguous(o, from, &shape),
            [m.into(), x.into(), y.into()],
        ));
    }
    let mut arrays = Arrays::new(&b);
    for (id, s) in fills {
        arrays.fill(id, rng, s);
    }
    (b, arrays, outs)
}

/// The instructions of `b` in kernels of up to `size` instructions each, in program
/// order. An instruction the engine would run off its native path alone (by
/// [`Subject::expected_not_native`]) shares a kernel only with others of its kind, so
/// grouping never takes an instruction off the native path.
fn groups(sub: &dyn Subject, b: &Batch, size: usize) -> Vec<Kernel> {
    let one = singletons(b);
    if size <= 1 {
        return one;
    }
    let mut open: [Vec<usize>; 2] = [Vec::new(), Vec::new()];
    let mut kernels = Vec::new();
    for k in one {
        let apart = usize::from(sub.expected_not_native(b, std::slice::from_ref(&k)) > 0);
        open[apart].extend(k.instrs.iter().copied());
        if open[apart].len() >= size {
            let instrs = std::mem::take(&mut open[apart]);
            kernels.push(hassium_fuser::finish_kernel(b, instrs, |_| true));
        }
    }
    for instrs in open.into_iter().filter(|g| !g.is_empty()) {
        kernels.push(hassium_fuser::finish_kernel(b, instrs, |_| true));
    }
    kernels
}

fn check_elementwise(sub: &dyn Subject, layout: Layout, threads: usize, spec: Spec) {
    let dir = tempfile::tempdir().unwrap();
    let mut e = sub.engine(threads, spec, dir.path());
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ layout as u64);
    let (b, arrays, outs) = elementwise_batch(layout, &mut rng);
    let kernels = groups(sub, &b, sub.elementwise_per_kernel());
    let (want, got) = run_both(&b, &kernels, &arrays, e.as_mut());
    if let Some(d) = diff(&want, &got, &outs) {
        let k = outs
            .iter()
            .position(|o| d.starts_with(&format!("base {} ", o.0)))
            .unwrap_or(0);
        panic!(
            "{layout:?}: {} ({:?}): {d}",
            b.instrs[k].op.name(),
            b.instrs[k].ins[0].dtype()
        );
    }
    let s = e.stats();
    assert!(
        s.kernels_compiled > 0 && sub.not_native(&s) == sub.expected_not_native(&b, &kernels),
        "{s:?}"
    );
}

pub fn every_elementwise_op_and_dtype_matches_on_contiguous_views(sub: &dyn Subject) {
    check_elementwise(sub, Layout::Contiguous, 1, Spec::Fixed);
}

pub fn every_elementwise_op_and_dtype_matches_on_strided_views(sub: &dyn Subject) {
    check_elementwise(sub, Layout::Strided, 2, Spec::Dynamic);
}

pub fn every_elementwise_op_and_dtype_matches_on_negative_stride_views(sub: &dyn Subject) {
    check_elementwise(sub, Layout::Negative, 2, Spec::Fixed);
}

pub fn every_elementwise_op_and_dtype_matches_on_broadcast_views(sub: &dyn Subject) {
    check_elementwise(sub, Layout::Broadcast, 1, Spec::Dynamic);
}

pub fn every_elementwise_op_and_dtype_matches_on_zero_d_views(sub: &dyn Subject) {
    check_elementwise(sub, Layout::ZeroD, 1, Spec::Both);
}

pub fn every_elementwise_op_and_dtype_matches_with_scalar_operands(sub: &dyn Subject) {
    check_elementwise(sub, Layout::ScalarOperand, 2, Spec::Both);
}
