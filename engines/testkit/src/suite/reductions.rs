//! Reductions along each axis, long and column reductions, NaN propagation, partials
//! that do not depend on threads or specialisation, and scans.

use super::{fill_positive, Spec, Subject};
use crate::*;
use hassium_core::{Batch, DType, Instr, Opcode, Scalar, View};

fn check_reductions(
    sub: &dyn Subject,
    shape: &[usize],
    dtypes: &[DType],
    threads: usize,
    spec: Spec,
    nans: bool,
) {
    let dir = tempfile::tempdir().unwrap();
    let mut e = sub.engine(threads, spec, dir.path());
    let mut rng = Rng(42);
    let mut b = Batch::default();
    let mut outs = Vec::new();
    let mut ins = Vec::new();
    let n: usize = shape.iter().product();
    for &op in Opcode::ALL.iter().filter(|op| op.is_reduction()) {
        for &t in dtypes {
            if !op.info().types.contains(t)
                || (op == Opcode::MultiplyReduce && t.is_float() && n > 1000)
            {
                continue;
            }
            for axis in 0..shape.len() {
                let x = base(&mut b, t, n);
                ins.push(x);
                let oshape: Vec<usize> = shape
                    .iter()
                    .enumerate()
                    .filter(|&(d, _)| d != axis)
                    .map(|(_, &s)| s)
                    .collect();
                let od = op.out_dtype(t).unwrap();
                let o = base(&mut b, od, oshape.iter().product());
                outs.push(o);
                b.instrs.push(
                    Instr::new(
                        op,
                        View::contiguous(o, od, &oshape),
                        [View::contiguous(x, t, shape).into()],
                    )
                    .with_axis(axis),
                );
            }
        }
    }
    let mut arrays = Arrays::new(&b);
    for id in ins {
        fill_positive(&mut arrays, id, &mut rng, nans);
    }
    let kernels = singletons(&b);
    let (want, got) = run_both(&b, &kernels, &arrays, e.as_mut());
    if let Some(d) = diff(&want, &got, &outs) {
        let k = outs
            .iter()
            .position(|o| d.starts_with(&format!("base {} ", o.0)))
            .unwrap_or(0);
        panic!("{} axis {:?}: {d}", b.instrs[k].op.name(), b.instrs[k].axis);
    }
}

pub fn reductions_along_each_axis_of_a_3d_array_match(sub: &dyn Subject) {
    let dtypes = [
        DType::Float64,
        DType::Float32,
        DType::Int32,
        DType::UInt8,
        DType::Int64,
        DType::Bool,
    ];
    check_reductions(sub, &[6, 7, 40], &dtypes, 1, Spec::Fixed, false);
    check_reductions(sub, &[6, 7, 40], &dtypes, 2, Spec::Dynamic, false);
}

pub fn long_reductions_split_into_partials_match(sub: &dyn Subject) {
    let dtypes = [DType::Float64, DType::Float32, DType::Int64];
    check_reductions(sub, &[100_003], &dtypes, 1, Spec::Fixed, false);
    check_reductions(sub, &[100_003], &dtypes, 2, Spec::Both, false);
    check_reductions(sub, &[300, 301], &dtypes, 2, Spec::Dynamic, false);
}

/// Tall matrices, whose column reductions run in chunks of rows (the last one short): a
/// few columns, one block of them, more than one block.
pub fn column_reductions_of_tall_matrices_match(sub: &dyn Subject) {
    let dtypes = [DType::Float64, DType::Float32, DType::Int64];
    let more = [DType::Float64, DType::Int32, DType::UInt8, DType::Bool];
    check_reductions(sub, &[3001, 40], &more, 2, Spec::Fixed, false);
    check_reductions(sub, &[70_001, 3], &dtypes, 2, Spec::Dynamic, false);
    check_reductions(sub, &[600, 256], &dtypes, 1, Spec::Both, false);
    check_reductions(sub, &[300, 700], &dtypes, 2, Spec::Fixed, false);
}

pub fn nan_propagates_through_min_max_and_argmin_argmax_reductions(sub: &dyn Subject) {
    check_reductions(
        sub,
        &[50, 64],
        &[DType::Float64, DType::Float32],
        2,
        Spec::Fixed,
        true,
    );
    check_reductions(sub, &[20_000], &[DType::Float64], 2, Spec::Fixed, true);
    check_reductions(sub, &[5000, 20], &[DType::Float32], 2, Spec::Dynamic, true);
}

pub fn partial_sums_are_identical_for_any_thread_count_and_specialisation(sub: &dyn Subject) {
    // A whole-array sum, and the column sums of a tall matrix (chunks of rows).
    let mut b = Batch::default();
    let t = DType::Float64;
    let x = base(&mut b, t, 200_000);
    let o = base(&mut b, t, 1);
    let c = base(&mut b, t, 20);
    b.instrs.push(
        Instr::new(
            Opcode::AddReduce,
            View::contiguous(o, t, &[]),
            [View::contiguous(x, t, &[200_000]).into()],
        )
        .with_axis(0),
    );
    b.instrs.push(
        Instr::new(
            Opcode::AddReduce,
            View::contiguous(c, t, &[20]),
            [View::contiguous(x, t, &[10_000, 20]).into()],
        )
        .with_axis(0),
    );
    let mut a = Arrays::new(&b);
    let mut rng = Rng(7);
    for i in 0..200_000 {
        a.set(x, i, Scalar::Float64((rng.f64() - 0.5) * 1e6));
    }
    let kernels = singletons(&b);
    let mut results = Vec::new();
    for (threads, spec) in [(1, Spec::Fixed), (2, Spec::Dynamic), (3, Spec::Both)] {
        let dir = tempfile::tempdir().unwrap();
        let mut e = sub.engine(threads, spec, dir.path());
        let mut got = a.clone();
        e.execute(&b, &kernels, &got.buffers(&[])).unwrap();
        sync_all(e.as_mut(), &mut got, &[]);
        let mut bits = vec![got.get(o, 0).as_f64().to_bits()];
        bits.extend((0..20).map(|j| got.get(c, j).as_f64().to_bits()));
        results.push(bits);
    }
    assert!(results.windows(2).all(|w| w[0] == w[1]), "{results:?}");
}

pub fn scans_along_each_axis_match(sub: &dyn Subject) {
    let dir = tempfile::tempdir().unwrap();
    // Along axis 0 of [3, 700]: running sums of 700 columns, three blocks of them.
    for (shape, threads, spec) in [
        (&[4, 5, 30][..], 1, Spec::Fixed),
        (&[4, 5, 30][..], 2, Spec::Dynamic),
        (&[3, 700][..], 2, Spec::Fixed),
    ] {
        let mut e = sub.engine(threads, spec, dir.path());
        let mut rng = Rng(3);
        let mut b = Batch::default();
        let n: usize = shape.iter().product();
        let mut outs = Vec::new();
        let mut ins = Vec::new();
        for op in [
            Opcode::AddAccumulate,
            Opcode::MultiplyAccumulate,
            Opcode::MinimumAccumulate,
            Opcode::MaximumAccumulate,
        ] {
            for t in [DType::Float64, DType::Float32, DType::Int32, DType::UInt16] {
                for axis in 0..shape.len() {
                    let x = base(&mut b, t, n);
                    let o = base(&mut b, t, n);
                    ins.push(x);
                    outs.push(o);
                    b.instrs.push(
                        Instr::new(
                            op,
                            View::contiguous(o, t, shape),
                            [View::contiguous(x, t, shape).into()],
                        )
                        .with_axis(axis),
                    );
                }
            }
        }
        let mut a = Arrays::new(&b);
        for id in ins {
            fill_positive(&mut a, id, &mut rng, false);
        }
        let (want, got) = run_both(&b, &singletons(&b), &a, e.as_mut());
        assert_eq!(diff(&want, &got, &outs), None, "{shape:?}");
    }
}
