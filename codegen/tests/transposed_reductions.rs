//! A reduction along the last logical axis of a matrix stored the other way round
//! (`X.T @ v` is `(X.T * v).sum(1)`, which walks the columns of `X`) is lowered as a
//! reduction along the outer loop, which streams `X` once, instead of once per output
//! element.

use hassium_codegen::{lower, Plan, Specialize};
use hassium_core::{Batch, DType, Instr, Opcode, View};

mod common;
use common::base;

/// `out = (m * v).sum(axis=1)` over the `rows × cols` view `m` of a base of `rows * cols`
/// float64 elements (strides in elements), `v` a vector of `cols`.
fn row_sums(rows: usize, cols: usize, m_strides: [isize; 2], m_offset: isize) -> Batch {
    let mut b = Batch::default();
    let x = base(&mut b, 1, DType::Float64, rows * cols);
    let v = base(&mut b, 2, DType::Float64, cols);
    let t = base(&mut b, 3, DType::Float64, rows * cols);
    let out = base(&mut b, 4, DType::Float64, rows);
    let mv = View {
        base: x,
        dtype: DType::Float64,
        offset: m_offset,
        shape: [rows, cols].as_slice().into(),
        strides: m_strides.as_slice().into(),
    };
    let vv = View::contiguous(v, DType::Float64, &[cols])
        .broadcast_to(&[rows, cols])
        .expect("broadcasts");
    let tv = View::contiguous(t, DType::Float64, &[rows, cols]);
    let ov = View::contiguous(out, DType::Float64, &[rows]);
    b.instrs.push(Instr::new(
        Opcode::Multiply,
        tv.clone(),
        [mv.into(), vv.into()],
    ));
    b.instrs
        .push(Instr::new(Opcode::AddReduce, ov, [tv.into()]).with_axis(1));
    b.instrs.push(Instr::system(Opcode::Free, &b.bases[&t]));
    b
}

fn plan(b: &Batch, spec: Specialize) -> Plan {
    let k = hassium_fuser::finish_kernel(b, (0..b.instrs.len()).collect::<Vec<_>>(), |_| false);
    assert!(
        k.contracts(hassium_core::BaseId(3)),
        "the product stays in registers"
    );
    lower(b, &k, spec).expect("lowers").plan
}

#[test]
fn rows_of_a_transposed_matrix_are_summed_as_columns() {
    // X is 5000 × 20 row-major; X.T is 20 × 5000 with strides (1, 20).
    for spec in [Specialize::Fixed, Specialize::Dynamic] {
        match plan(&row_sums(20, 5000, [1, 20], 0), spec) {
            Plan::Partials { inner, extent, .. } => assert_eq!((inner, extent), (20, 5000)),
            p => panic!("a transposed matrix's row sums lowered as {p:?}"),
        }
        // Reversed columns of X (a negative step) are still columns.
        assert!(matches!(
            plan(&row_sums(20, 5000, [-1, 20], 19), spec),
            Plan::Partials { inner: 20, .. }
        ));
    }
}

#[test]
fn rows_stored_as_rows_keep_one_output_per_task() {
    for spec in [Specialize::Fixed, Specialize::Dynamic] {
        match plan(&row_sums(20, 5000, [5000, 1], 0), spec) {
            Plan::Parallel { extent, .. } => assert_eq!(extent, 20),
            p => panic!("a row-major matrix's row sums lowered as {p:?}"),
        }
    }
}
