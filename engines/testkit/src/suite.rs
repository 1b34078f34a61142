//! The differential suite every engine runs: the engine under test against the reference
//! interpreter on every elementwise opcode × dtype over several view layouts, reductions
//! along each axis, scans, fused chains with contracted temporaries, indexing, generators,
//! complex numbers and matmul, over thread counts and specialisation modes. An engine's
//! `tests/differential.rs` describes it as a [`Subject`] and instantiates the tests with
//! [`differential_suite!`](crate::differential_suite).

use crate::*;
use hassium_core::{BaseId, Batch, DType, Instr, Kernel, Opcode, Operand, Scalar, View};
use hassium_engine_abi::{Engine, EngineStats};
use std::path::Path;

/// Specialisation mode, as each engine's own policy enum spells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spec {
    Fixed,
    Dynamic,
    Both,
}

/// An engine under test.
pub trait Subject {
    /// A fresh engine with its caches in `cache`. `threads` is for engines with a thread
    /// pool; others ignore it.
    fn engine(&self, threads: usize, spec: Spec, cache: &Path) -> Box<dyn Engine>;
    /// How many kernels the statistics say ran off the native path (interpreted, or
    /// handed to a child engine).
    fn not_native(&self, stats: &EngineStats) -> u64;
    /// How many of `kernels` the engine is expected to run off its native path.
    fn expected_not_native(&self, batch: &Batch, kernels: &[Kernel]) -> u64;
    /// How many independent elementwise instructions the elementwise tests put into one
    /// kernel. One (the default) tests each as its own kernel. An engine whose driver
    /// pays a large fixed cost per kernel (PoCL generates and links a work-group
    /// function per kernel at its first launch) tests the same instructions, views and
    /// values in fewer, larger kernels.
    fn elementwise_per_kernel(&self) -> usize {
        1
    }
}

/// The kernels of `batch` that touch a value of a dtype `pred` picks.
pub fn kernels_touching(batch: &Batch, kernels: &[Kernel], pred: impl Fn(DType) -> bool) -> u64 {
    kernels
        .iter()
        .filter(|k| {
            k.instrs.iter().any(|&i| {
                let i = &batch.instrs[i];
                pred(i.out.dtype) || i.ins.iter().any(|o| pred(o.dtype()))
            })
        })
        .count() as u64
}

/// Instantiates every test of the suite for a [`Subject`] expression.
#[macro_export]
macro_rules! differential_suite {
    ($subject:expr) => {
        $crate::differential_suite!(@tests $subject;
            every_elementwise_op_and_dtype_matches_on_contiguous_views,
            every_elementwise_op_and_dtype_matches_on_strided_views,
            every_elementwise_op_and_dtype_matches_on_negative_stride_views,
            every_elementwise_op_and_dtype_matches_on_broadcast_views,
            every_elementwise_op_and_dtype_matches_on_zero_d_views,
            every_elementwise_op_and_dtype_matches_with_scalar_operands,
            reductions_along_each_axis_of_a_3d_array_match,
            long_reductions_split_into_partials_match,
            column_reductions_of_tall_matrices_match,
            nan_propagates_through_min_max_and_argmin_argmax_reductions,
            partial_sums_are_identical_for_any_thread_count_and_specialisation,
            scans_along_each_axis_match,
            fused_reduction_with_prologue_and_epilogue_matches,
            fused_stencil_with_contracted_temporaries_matches,
            stencils_updating_their_own_grid_match,
            gather_scatter_and_scatter_add_match_including_negative_indices,
            out_of_bounds_gather_reports_numpys_message,
            negative_integer_power_reports_numpys_message,
            range_and_random_match_the_reference_bit_for_bit,
            complex_kernels_leave_the_native_path_and_are_counted,
            matmul_matches_for_float_and_int_dtypes
        );
    };
    (@tests $subject:expr; $($name:ident),*) => {
        $(
            #[test]
            fn $name() {
                $crate::suite::$name(&$subject)
            }
        )*
    };
}

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

/// Positive values (no cancellation, so reordered sums stay within tolerance), with NaN
/// sprinkled in when asked.
fn fill_positive(a: &mut Arrays, id: BaseId, rng: &mut Rng, nans: bool) {
    let (d, n, _) = a.0[&id].clone();
    for i in 0..n {
        let s = if d.is_float() {
            if nans && rng.below(500) == 0 {
                Scalar::Float64(f64::NAN)
            } else {
                Scalar::Float64(rng.f64() + 0.5)
            }
        } else if d == DType::Bool {
            Scalar::Bool(rng.below(8) != 0)
        } else {
            Scalar::Int64(rng.below(200) as i64 - 50)
        };
        a.set(id, i, s.cast(d));
    }
}

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

/// `y = sum((a * b) + 1, axis) * 2` as one kernel: elementwise prologue, reduction,
/// epilogue, temporaries contracted.
pub fn fused_reduction_with_prologue_and_epilogue_matches(sub: &dyn Subject) {
    // [5000, 24] along axis 0: chunks of rows, the epilogue in the combining pass.
    for (shape, axis) in [([64, 300], 0), ([64, 300], 1), ([5000, 24], 0)] {
        for (threads, spec) in [(1, Spec::Fixed), (2, Spec::Dynamic)] {
            let dir = tempfile::tempdir().unwrap();
            let mut e = sub.engine(threads, spec, dir.path());
            let t = DType::Float64;
            let n = shape[0] * shape[1];
            let mut b = Batch::default();
            let (x, y) = (base(&mut b, t, n), base(&mut b, t, n));
            let (t1, t2) = (base(&mut b, t, n), base(&mut b, t, n));
            let osz = shape[1 - axis];
            let (s, o) = (base(&mut b, t, osz), base(&mut b, t, osz));
            let v = |id| View::contiguous(id, t, &shape);
            let r = |id| View::contiguous(id, t, &[osz]);
            b.instrs.push(Instr::new(
                Opcode::Multiply,
                v(t1),
                [v(x).into(), v(y).into()],
            ));
            b.instrs.push(Instr::new(
                Opcode::Add,
                v(t2),
                [v(t1).into(), Operand::Scalar(Scalar::Float64(1.0))],
            ));
            b.instrs
                .push(Instr::new(Opcode::AddReduce, r(s), [v(t2).into()]).with_axis(axis));
            b.instrs.push(Instr::new(
                Opcode::Multiply,
                r(o),
                [r(s).into(), Operand::Scalar(Scalar::Float64(2.0))],
            ));
            for id in [t1, t2, s] {
                free(&mut b, id);
            }
            let k = hassium_fuser::finish_kernel(&b, vec![0, 1, 2, 3], |_| false);
            assert_eq!(k.contracted.len(), 3);
            let mut a = Arrays::new(&b);
            let mut rng = Rng(11);
            fill_positive(&mut a, x, &mut rng, false);
            fill_positive(&mut a, y, &mut rng, false);
            let (want, got) = run_both(&b, std::slice::from_ref(&k), &a, e.as_mut());
            assert_eq!(diff(&want, &got, &[o]), None, "{shape:?} axis {axis}");
            assert_eq!(sub.not_native(&e.stats()), 0);
        }
    }
}

/// Heat-equation style stencil: shifted views of one grid, contracted temporaries.
pub fn fused_stencil_with_contracted_temporaries_matches(sub: &dyn Subject) {
    let dir = tempfile::tempdir().unwrap();
    for spec in [Spec::Fixed, Spec::Dynamic] {
        let mut e = sub.engine(2, spec, dir.path());
        let n = 130;
        let t = DType::Float32;
        let mut b = Batch::default();
        let g = base(&mut b, t, n * n);
        let o = base(&mut b, t, n * n);
        let full = View::contiguous(g, t, &[n, n]);
        let sh = |di: isize, dj: isize| {
            full.slice(0, 1 + di, n as isize - 1 + di, 1)
                .unwrap()
                .slice(1, 1 + dj, n as isize - 1 + dj, 1)
                .unwrap()
        };
        let m = n - 2;
        let ts: Vec<BaseId> = (0..4).map(|_| base(&mut b, t, m * m)).collect();
        let tv = |id| View::contiguous(id, t, &[m, m]);
        let out = View::contiguous(o, t, &[n, n])
            .slice(0, 1, n as isize - 1, 1)
            .unwrap()
            .slice(1, 1, n as isize - 1, 1)
            .unwrap();
        b.instrs.push(Instr::new(
            Opcode::Add,
            tv(ts[0]),
            [sh(0, 0).into(), sh(-1, 0).into()],
        ));
        b.instrs.push(Instr::new(
            Opcode::Add,
            tv(ts[1]),
            [tv(ts[0]).into(), sh(1, 0).into()],
        ));
        b.instrs.push(Instr::new(
            Opcode::Add,
            tv(ts[2]),
            [tv(ts[1]).into(), sh(0, -1).into()],
        ));
        b.instrs.push(Instr::new(
            Opcode::Add,
            tv(ts[3]),
            [tv(ts[2]).into(), sh(0, 1).into()],
        ));
        b.instrs.push(Instr::new(
            Opcode::Multiply,
            out,
            [tv(ts[3]).into(), Operand::Scalar(Scalar::Float32(0.2))],
        ));
        for id in ts {
            free(&mut b, id);
        }
        let k = hassium_fuser::finish_kernel(&b, vec![0, 1, 2, 3, 4], |_| false);
        let mut a = Arrays::new(&b);
        a.fill(g, &mut Rng(5), false);
        let (want, got) = run_both(&b, &[k], &a, e.as_mut());
        assert_eq!(diff(&want, &got, &[o]), None);
    }
}

/// One Jacobi step that updates its own grid, as NumPy programs write it:
/// `d = (c * (up + down + left + right) - centre)`, row sums of `d` (`sum(axis=1)`), then
/// `centre[...] = c * (up + down + left + right)`. The fuser makes it one kernel whose
/// write is held back (`Capabilities::lagged_writes`); `rows` apart says how far the
/// vertical neighbours are, `reversed` walks the grid's rows backwards, `col_step`
/// strides its columns.
fn self_updating_stencil(
    t: DType,
    rows: usize,
    cols: usize,
    apart: isize,
    reversed: bool,
    col_step: isize,
) -> (Batch, BaseId, BaseId) {
    let mut b = Batch::default();
    let (nr, nc) = (rows + 2 * apart as usize, (cols + 2) * col_step as usize);
    let g = base(&mut b, t, nr * nc);
    let mut full = View::contiguous(g, t, &[nr, nc]);
    if reversed {
        full = full.slice(0, nr as isize - 1, -1, -1).unwrap();
    }
    let full = full.slice(1, 0, nc as isize, col_step).unwrap();
    let sh = |di: isize, dj: isize| {
        full.slice(0, apart + di, apart + di + rows as isize, 1)
            .unwrap()
            .slice(1, 1 + dj, 1 + dj + cols as isize, 1)
            .unwrap()
    };
    let tv = |id| View::contiguous(id, t, &[rows, cols]);
    let ts: Vec<BaseId> = (0..6).map(|_| base(&mut b, t, rows * cols)).collect();
    let sums = base(&mut b, t, rows);
    let c = if t.is_float() {
        Scalar::Float64(0.25).cast(t)
    } else {
        Scalar::Int64(3).cast(t)
    };
    let ops: [(Opcode, BaseId, [Operand; 2]); 6] = [
        (
            Opcode::Add,
            ts[0],
            [sh(-apart, 0).into(), sh(apart, 0).into()],
        ),
        (Opcode::Add, ts[1], [tv(ts[0]).into(), sh(0, -1).into()]),
        (Opcode::Add, ts[2], [tv(ts[1]).into(), sh(0, 1).into()]),
        (
            Opcode::Multiply,
            ts[3],
            [tv(ts[2]).into(), Operand::Scalar(c)],
        ),
        (Opcode::Subtract, ts[4], [tv(ts[3]).into(), sh(0, 0).into()]),
        (
            Opcode::Absolute,
            ts[5],
            [tv(ts[4]).into(), Operand::Scalar(c)],
        ),
    ];
    for (op, out, ins) in ops {
        let ins: Vec<Operand> = if op == Opcode::Absolute {
            ins[..1].to_vec()
        } else {
            ins.to_vec()
        };
        b.instrs.push(Instr::new(op, tv(out), ins));
    }
    let mut red = Instr::new(
        Opcode::AddReduce,
        View::contiguous(sums, t, &[rows]),
        [tv(ts[5]).into()],
    );
    red.axis = Some(1);
    b.instrs.push(red);
    b.instrs
        .push(Instr::new(Opcode::Identity, sh(0, 0), [tv(ts[3]).into()]));
    for id in ts {
        free(&mut b, id);
    }
    (b, g, sums)
}

pub fn stencils_updating_their_own_grid_match(sub: &dyn Subject) {
    let dir = tempfile::tempdir().unwrap();
    for (threads, spec) in [(1, Spec::Fixed), (2, Spec::Fixed), (2, Spec::Dynamic)] {
        let mut e = sub.engine(threads, spec, dir.path());
        let mut expected = 0;
        // Fewer rows than calls, rows of one vector or less, and large enough to split.
        for (rows, cols) in [(1, 3), (2, 5), (3, 4), (7, 9), (41, 33), (300, 70)] {
            for t in [DType::Float64, DType::Float32, DType::Int32] {
                for (apart, reversed, col_step) in
                    [(1, false, 1), (2, false, 1), (1, true, 1), (1, false, 3)]
                {
                    let (b, g, sums) =
                        self_updating_stencil(t, rows, cols, apart, reversed, col_step);
                    let kernels = fused(&b);
                    let what = format!(
                        "{rows}x{cols} {} apart {apart} reversed {reversed} step {col_step}, \
                         {threads} threads, {spec:?}",
                        t.name()
                    );
                    let copy = b.instrs.len() - 7;
                    let holder = kernels.iter().find(|k| k.instrs.contains(&copy)).unwrap();
                    // One row has no row to hold back from: the stencil cannot fuse there.
                    if rows > 1 {
                        assert!(holder.instrs.contains(&0), "{what}: the copy stays apart");
                    }
                    expected += sub.expected_not_native(&b, &kernels);
                    let mut a = Arrays::new(&b);
                    a.fill(g, &mut Rng(rows as u64 * 7 + cols as u64), true);
                    let (want, got) = run_both(&b, &kernels, &a, e.as_mut());
                    assert_eq!(diff(&want, &got, &[g, sums]), None, "{what}");
                }
            }
        }
        assert_eq!(
            sub.not_native(&e.stats()),
            expected,
            "{threads} threads {spec:?}"
        );
    }
}

pub fn gather_scatter_and_scatter_add_match_including_negative_indices(sub: &dyn Subject) {
    let dir = tempfile::tempdir().unwrap();
    let mut e = sub.engine(2, Spec::Fixed, dir.path());
    let t = DType::Float64;
    let mut b = Batch::default();
    let src = base(&mut b, t, 50);
    let idx = base(&mut b, DType::Int64, 40);
    let out = base(&mut b, t, 40);
    let val = base(&mut b, t, 40);
    let mask = base(&mut b, DType::Bool, 40);
    let (dst1, dst2, dst3) = (
        base(&mut b, t, 50),
        base(&mut b, t, 50),
        base(&mut b, t, 50),
    );
    let src_v = View::contiguous(src, t, &[50])
        .slice(0, 49, -1, -1)
        .unwrap();
    let idx_v = View::contiguous(idx, DType::Int64, &[4, 10]);
    let v40 = |id, d| View::contiguous(id, d, &[4, 10]);
    b.instrs.push(Instr::new(
        Opcode::Gather,
        v40(out, t),
        [src_v.into(), idx_v.clone().into()],
    ));
    b.instrs.push(Instr::new(
        Opcode::Scatter,
        View::contiguous(dst1, t, &[50]),
        [idx_v.clone().into(), v40(val, t).into()],
    ));
    b.instrs.push(Instr::new(
        Opcode::CondScatter,
        View::contiguous(dst2, t, &[50]),
        [
            idx_v.clone().into(),
            v40(val, t).into(),
            v40(mask, DType::Bool).into(),
        ],
    ));
    b.instrs.push(Instr::new(
        Opcode::ScatterAdd,
        View::contiguous(dst3, t, &[50]),
        [idx_v.into(), v40(val, t).into()],
    ));
    let mut a = Arrays::new(&b);
    let mut rng = Rng(9);
    a.fill(src, &mut rng, false);
    a.fill(val, &mut rng, false);
    a.fill(mask, &mut rng, false);
    for i in 0..40 {
        a.set(idx, i, Scalar::Int64(rng.below(100) as i64 - 50));
    }
    let (want, got) = run_both(&b, &singletons(&b), &a, e.as_mut());
    assert_eq!(diff(&want, &got, &[out, dst1, dst2, dst3]), None);
}

pub fn out_of_bounds_gather_reports_numpys_message(sub: &dyn Subject) {
    let dir = tempfile::tempdir().unwrap();
    let mut e = sub.engine(1, Spec::Fixed, dir.path());
    let mut b = Batch::default();
    let src = base(&mut b, DType::Float32, 5);
    let idx = base(&mut b, DType::Int64, 3);
    let out = base(&mut b, DType::Float32, 3);
    b.instrs.push(Instr::new(
        Opcode::Gather,
        View::contiguous(out, DType::Float32, &[3]),
        [
            View::contiguous(src, DType::Float32, &[5]).into(),
            View::contiguous(idx, DType::Int64, &[3]).into(),
        ],
    ));
    let mut a = Arrays::new(&b);
    a.set(idx, 1, Scalar::Int64(7));
    let err = e.execute(&b, &singletons(&b), &a.buffers(&[])).unwrap_err();
    assert!(
        err.to_string()
            .contains("index 7 is out of bounds for axis 0 with size 5"),
        "{err}"
    );
    assert_eq!(sub.not_native(&e.stats()), 0);
}

/// A signed integer power with a negative exponent in an array fails as NumPy's does, from
/// a compiled kernel too, whichever element holds it (a vector loop's body or its tail, any
/// thread's part), inside a fused reduction as well; a zero exponent is fine.
pub fn negative_integer_power_reports_numpys_message(sub: &dyn Subject) {
    for (threads, spec) in [(1, Spec::Fixed), (2, Spec::Dynamic)] {
        let dir = tempfile::tempdir().unwrap();
        // A fresh engine for every run: the inputs change between runs under the same base
        // ids, which an engine keeping device copies is not told of here.
        let engine = || sub.engine(threads, spec, dir.path());
        let t = DType::Int32;
        let n = 1003;
        let mut b = Batch::default();
        let (x, y, p, q) = (
            base(&mut b, t, n),
            base(&mut b, t, n),
            base(&mut b, t, n),
            base(&mut b, t, n),
        );
        let s = base(&mut b, t, 1);
        let v = |id| View::contiguous(id, t, &[n]);
        // p = x ** y; q = p + 1 (one map kernel); s = sum(x ** y) (one reduction kernel).
        b.instrs
            .push(Instr::new(Opcode::Power, v(p), [v(x).into(), v(y).into()]));
        b.instrs.push(Instr::new(
            Opcode::Add,
            v(q),
            [v(p).into(), Operand::Scalar(Scalar::Int32(1))],
        ));
        let tmp = base(&mut b, t, n);
        b.instrs.push(Instr::new(
            Opcode::Power,
            v(tmp),
            [v(x).into(), v(y).into()],
        ));
        b.instrs.push(
            Instr::new(
                Opcode::AddReduce,
                View::contiguous(s, t, &[]),
                [v(tmp).into()],
            )
            .with_axis(0),
        );
        free(&mut b, tmp);
        let map = hassium_fuser::finish_kernel(&b, vec![0, 1], |_| false);
        let reduce = hassium_fuser::finish_kernel(&b, vec![2, 3], |_| false);
        assert_eq!(reduce.contracted.len(), 1);
        // Exponents 0..3 (zero among them), and -1 at `negative` if given.
        let inputs = |negative: Option<usize>| {
            let mut a = Arrays::new(&b);
            for i in 0..n {
                a.set(x, i, Scalar::Int32(i as i32 % 7 - 3));
                a.set(y, i, Scalar::Int32(i as i32 % 4));
            }
            if let Some(at) = negative {
                a.set(y, at, Scalar::Int32(-1));
            }
            a
        };
        for (kernels, first) in [(vec![map.clone()], 0), (vec![reduce.clone()], 2)] {
            for at in [0, 1, n / 2, n - 2, n - 1] {
                let mut a = inputs(Some(at));
                let mut e = engine();
                let err = e.execute(&b, &kernels, &a.buffers(&[])).unwrap_err();
                let want = format!(
                    "instruction {first} (power): Integers to negative integer powers are not allowed."
                );
                assert!(err.to_string().ends_with(&want), "{err} (at {at})");
            }
            // Non-negative exponents run, and agree with the reference.
            let a = inputs(None);
            let mut e = engine();
            let (want, got) = run_both(&b, &kernels, &a, e.as_mut());
            assert_eq!(diff(&want, &got, &[q, s]), None, "{threads} threads");
            assert_eq!(sub.not_native(&e.stats()), 0);
        }
    }
}

pub fn range_and_random_match_the_reference_bit_for_bit(sub: &dyn Subject) {
    let dir = tempfile::tempdir().unwrap();
    let mut e = sub.engine(2, Spec::Dynamic, dir.path());
    let mut b = Batch::default();
    let r = base(&mut b, DType::Float32, 60);
    let q = base(&mut b, DType::UInt64, 60);
    let strided = View::contiguous(q, DType::UInt64, &[6, 10])
        .slice(1, 9, -1, -1)
        .unwrap();
    b.instrs.push(Instr::new(
        Opcode::Range,
        View::contiguous(r, DType::Float32, &[6, 10]),
        [],
    ));
    b.instrs.push(Instr::new(
        Opcode::Random,
        strided,
        [
            Operand::Scalar(Scalar::UInt64(1234)),
            Operand::Scalar(Scalar::UInt64(1 << 40)),
        ],
    ));
    let a = Arrays::new(&b);
    let (want, got) = run_both(&b, &singletons(&b), &a, e.as_mut());
    assert_eq!(diff(&want, &got, &[r, q]), None);
}

pub fn complex_kernels_leave_the_native_path_and_are_counted(sub: &dyn Subject) {
    let dir = tempfile::tempdir().unwrap();
    let mut e = sub.engine(1, Spec::Fixed, dir.path());
    let mut b = Batch::default();
    let t = DType::Complex128;
    let (x, y) = (base(&mut b, t, 8), base(&mut b, t, 8));
    b.instrs.push(Instr::new(
        Opcode::Exp,
        View::contiguous(y, t, &[8]),
        [View::contiguous(x, t, &[8]).into()],
    ));
    let mut a = Arrays::new(&b);
    a.fill(x, &mut Rng(1), false);
    let kernels = singletons(&b);
    let (want, got) = run_both(&b, &kernels, &a, e.as_mut());
    assert_eq!(diff(&want, &got, &[y]), None);
    assert_eq!(sub.expected_not_native(&b, &kernels), 1);
    assert_eq!(sub.not_native(&e.stats()), 1);
}

pub fn matmul_matches_for_float_and_int_dtypes(sub: &dyn Subject) {
    let dir = tempfile::tempdir().unwrap();
    let mut e = sub.engine(2, Spec::Fixed, dir.path());
    let mut b = Batch::default();
    let mut outs = Vec::new();
    let mut ins = Vec::new();
    for t in [DType::Float64, DType::Float32, DType::Int64, DType::Int32] {
        let (m, k, n) = (70, 90, 50);
        let (x, y, o) = (
            base(&mut b, t, m * k),
            base(&mut b, t, k * n),
            base(&mut b, t, m * n),
        );
        ins.extend([x, y]);
        outs.push(o);
        let yt = View::contiguous(y, t, &[n, k]).reversed_axes();
        b.instrs.push(Instr::extension(
            "matmul",
            View::contiguous(o, t, &[m, n]),
            [View::contiguous(x, t, &[m, k]).into(), yt.into()],
        ));
    }
    let mut a = Arrays::new(&b);
    let mut rng = Rng(77);
    for id in ins {
        fill_positive(&mut a, id, &mut rng, false);
    }
    let kernels = singletons(&b);
    let (want, got) = run_both(&b, &kernels, &a, e.as_mut());
    assert_eq!(diff(&want, &got, &outs), None);
    assert_eq!(
        sub.not_native(&e.stats()),
        sub.expected_not_native(&b, &kernels)
    );
}
