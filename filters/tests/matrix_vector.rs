//! `matrix_vector`: which matrix products it rewrites into a multiply and a sum, that the
//! temporary it adds is fresh and freed, and that the values stay the extension's (exact
//! for integers, which wrap alike in any order; within rounding for floats).

#[path = "../../fuser/tests/exec/mod.rs"]
mod exec;

use hassium_core::{verify, Batch, DType, Instr, Opcode, View};
use hassium_filters::create;
use hassium_fuser::recorder::Recorder;

/// `out = a @ b` as the recorder writes it: one extension over the stacked operands.
fn product(dtype: DType, a_shape: &[usize], b_shape: &[usize]) -> (Batch, View) {
    let mut r = Recorder::new();
    let a = r.array(dtype, a_shape);
    let b = r.array(dtype, b_shape);
    let nd = a_shape.len();
    let mut o_shape = a_shape.to_vec();
    o_shape[nd - 1] = b_shape[nd - 1];
    let out = r.array(dtype, &o_shape);
    r.push(Instr::extension(
        "matmul",
        out.clone(),
        [a.into(), b.into()],
    ));
    r.sync(&out);
    (r.finish(), out)
}

fn filtered(before: &Batch) -> Batch {
    let mut after = before.clone();
    create("matrix_vector").unwrap().apply(&mut after).unwrap();
    verify(&after).unwrap_or_else(|e| panic!("matrix_vector broke verify: {e}"));
    after
}

fn ops(batch: &Batch) -> Vec<Opcode> {
    batch.instrs.iter().map(|i| i.op).collect()
}

fn results(batch: &Batch, out: &View, seed: u64) -> Vec<u8> {
    let all = exec::observe(batch, &exec::unfused(batch), seed, false).unwrap();
    all[&out.base].clone()
}

#[test]
fn a_matrix_times_a_column_becomes_a_fused_multiply_and_sum_with_the_same_integers() {
    for (a, b) in [
        (vec![7, 5], vec![5, 1]),
        (vec![1, 9], vec![9, 1]),
        (vec![2, 3, 4, 6], vec![2, 3, 6, 1]),
        (vec![3, 1, 4], vec![3, 4, 1]),
    ] {
        for dtype in [DType::Int64, DType::Int8, DType::UInt16, DType::Int32] {
            let (before, out) = product(dtype, &a, &b);
            let after = filtered(&before);
            assert_eq!(
                ops(&after),
                [Opcode::Multiply, Opcode::AddReduce, Opcode::Free],
                "{a:?} @ {b:?}"
            );
            for seed in 0..3 {
                assert_eq!(
                    results(&after, &out, seed),
                    results(&before, &out, seed),
                    "{dtype:?} {a:?} @ {b:?} seed {seed}"
                );
            }
        }
    }
}

#[test]
fn float_products_stay_within_rounding_of_the_extension() {
    for dtype in [DType::Float64, DType::Float32] {
        let (before, out) = product(dtype, &[4, 6, 300], &[4, 300, 1]);
        let after = filtered(&before);
        assert_eq!(count(&after, Opcode::Extension), 0);
        let (want, got) = (results(&before, &out, 1), results(&after, &out, 1));
        let size = dtype.size();
        for (w, g) in want.chunks(size).zip(got.chunks(size)) {
            let (w, g) = if size == 8 {
                (
                    f64::from_le_bytes(w.try_into().unwrap()),
                    f64::from_le_bytes(g.try_into().unwrap()),
                )
            } else {
                (
                    f32::from_le_bytes(w.try_into().unwrap()) as f64,
                    f32::from_le_bytes(g.try_into().unwrap()) as f64,
                )
            };
            // 300 terms of magnitude below 16: each order's error is far below 1e-3
            // in float32 and 1e-10 in float64.
            let tol = if size == 8 { 1e-10 } else { 1e-3 };
            assert!((w - g).abs() <= tol, "{dtype:?}: {w} vs {g}");
        }
    }
}

fn count(batch: &Batch, op: Opcode) -> usize {
    batch.instrs.iter().filter(|i| i.op == op).count()
}

#[test]
fn the_temporary_is_fresh_and_freed() {
    let (before, _) = product(DType::Float64, &[50, 40], &[40, 1]);
    let after = filtered(&before);
    let temp = after.instrs[0].out.base;
    assert!(!before.bases.contains_key(&temp));
    assert!(temp.0 >= before.next_id);
    assert_eq!(after.next_id, temp.0 + 1);
    assert_eq!(after.bases[&temp].nelem, 50 * 40);
    assert_eq!(after.freed().collect::<Vec<_>>(), [temp]);
    // Two products in one batch get two temporaries.
    let mut two = before.clone();
    two.instrs.push(before.instrs[0].clone());
    let after = filtered(&two);
    let temps: Vec<_> = after.freed().collect();
    assert_eq!(temps.len(), 2);
    assert_ne!(temps[0], temps[1]);
}

#[test]
fn other_products_are_left_to_the_extension() {
    // Two columns, a row times a matrix, float16 (NumPy accumulates it in float32) and
    // an empty inner dimension.
    for (dtype, a, b) in [
        (DType::Float64, vec![5, 4], vec![4, 2]),
        (DType::Float64, vec![1, 4], vec![4, 3]),
        (DType::Float16, vec![5, 4], vec![4, 1]),
        (DType::Float64, vec![5, 0], vec![0, 1]),
    ] {
        let (before, _) = product(dtype, &a, &b);
        assert_eq!(filtered(&before), before, "{dtype:?} {a:?} @ {b:?}");
    }
    // A batch with no ids to give (not made by the runtime) keeps its product.
    let (mut before, _) = product(DType::Float64, &[5, 4], &[4, 1]);
    before.next_id = 0;
    assert_eq!(filtered(&before), before);
}
