//! The sorting extension methods (`sort`, `argsort`, `argpartition`, `searchsorted_*`)
//! over every dtype,
//! with NaN, infinities, both zeros and many repeats, along rows, columns (a transposed
//! view) and a reversed axis, and in place: bit for bit the reference's stable order.

use super::{Spec, Subject};
use crate::*;
use hassium_core::methods::{ARGPARTITION, ARGSORT, SEARCHSORTED_LEFT, SEARCHSORTED_RIGHT, SORT};
use hassium_core::{Batch, DType, Instr, Operand, Scalar, View};

pub fn sort_argsort_and_searchsorted_match_for_every_dtype(sub: &dyn Subject) {
    // Short rows (comparison sorts), long ones (radix sorts) and one a cpu engine shares
    // among its threads.
    for (rows, len) in [(13, 37), (3, 3000), (1, 40_000)] {
        sort_rows_of(sub, rows, len);
    }
}

fn sort_rows_of(sub: &dyn Subject, rows: usize, len: usize) {
    let dir = tempfile::tempdir().unwrap();
    let mut e = sub.engine(2, Spec::Both, dir.path());
    let mut b = Batch::default();
    let (mut ins, mut outs) = (Vec::new(), Vec::new());
    let mut small = Vec::new();
    for t in DType::ALL.iter().copied() {
        for repeats in [false, true] {
            let x = base(&mut b, t, rows * len);
            ins.push(x);
            if repeats {
                small.push(x);
            }
            let xv = View::contiguous(x, t, &[rows, len]);
            // Along rows, along columns (transposed), and along a reversed axis.
            let mut rev = xv.clone();
            rev.offset = (len - 1) as isize;
            rev.strides[1] = -1;
            let views = [xv.clone(), xv.reversed_axes(), rev];
            for (k, v) in views.iter().enumerate() {
                let shape = v.shape.clone();
                let s = base(&mut b, t, rows * len);
                let i = base(&mut b, DType::Int64, rows * len);
                outs.extend([s, i]);
                // The output of the transposed case is itself transposed.
                let sv = View::contiguous(s, t, &shape);
                let iv = if k == 1 {
                    View::contiguous(i, DType::Int64, &[shape[1], shape[0]]).reversed_axes()
                } else {
                    View::contiguous(i, DType::Int64, &shape)
                };
                b.instrs
                    .push(Instr::extension(SORT, sv.clone(), [v.clone().into()]));
                b.instrs
                    .push(Instr::extension(ARGSORT, iv, [v.clone().into()]));
                // Partitions at the first, a middle and the last position of the axis
                // (a heap of the few smallest, a selection, everything).
                let axis = shape[1];
                for k in [0, axis / 2, axis - 1] {
                    let p = base(&mut b, DType::Int64, rows * len);
                    outs.push(p);
                    let kth = Operand::Scalar(Scalar::Int64(k as i64));
                    b.instrs.push(Instr::extension(
                        ARGPARTITION,
                        View::contiguous(p, DType::Int64, &shape),
                        [v.clone().into(), kth],
                    ));
                }
                if k == 0 {
                    // Search every element of x in the first sorted row.
                    let hay = View::contiguous(s, t, &[len]);
                    for method in [SEARCHSORTED_LEFT, SEARCHSORTED_RIGHT] {
                        let o = base(&mut b, DType::Int64, rows * len);
                        outs.push(o);
                        b.instrs.push(Instr::extension(
                            method,
                            View::contiguous(o, DType::Int64, &[rows, len]),
                            [hay.clone().into(), xv.clone().into()],
                        ));
                    }
                }
            }
            // In place, on a copy.
            let c = base(&mut b, t, rows * len);
            outs.push(c);
            let cv = View::contiguous(c, t, &[rows, len]);
            b.instrs.push(Instr::new(
                hassium_core::Opcode::Identity,
                cv.clone(),
                [xv.into()],
            ));
            b.instrs
                .push(Instr::extension(SORT, cv.clone(), [cv.into()]));
        }
    }
    let mut a = Arrays::new(&b);
    let mut rng = Rng(4242);
    for &id in &ins {
        a.fill(id, &mut rng, small.contains(&id));
    }
    let kernels = singletons(&b);
    let (want, got) = run_both(&b, &kernels, &a, e.as_mut());
    assert_eq!(diff(&want, &got, &outs), None);
}
