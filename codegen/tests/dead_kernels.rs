//! A kernel whose every result is a temporary freed unread (a loop's last update of a
//! variable the program then drops) stores nothing, and lowers to no work at all, unless
//! one of its instructions can fail: NumPy would have raised that error.

use hassium_codegen::{lower, Plan, Specialize};
use hassium_core::{Batch, DType, Instr, Opcode, View};

mod common;
use common::base;

/// `t = a <op> b`, then `t` freed: nothing reads or keeps it.
fn dropped(op: Opcode, dtype: DType) -> Batch {
    let mut b = Batch::default();
    let a = base(&mut b, 1, dtype, 64);
    let x = base(&mut b, 2, dtype, 64);
    let t = base(&mut b, 3, dtype, 64);
    let v = |id| View::contiguous(id, dtype, &[64]);
    b.instrs
        .push(Instr::new(op, v(t), [v(a).into(), v(x).into()]));
    b.instrs.push(Instr::system(Opcode::Free, &b.bases[&t]));
    b
}

fn plan(b: &Batch) -> Plan {
    let k = hassium_fuser::finish_kernel(b, (0..b.instrs.len()).collect::<Vec<_>>(), |_| false);
    assert!(k.writes.is_empty(), "the result is contracted");
    lower(b, &k, Specialize::Fixed).expect("lowers").plan
}

#[test]
fn a_kernel_that_stores_nothing_does_nothing() {
    assert!(matches!(
        plan(&dropped(Opcode::Add, DType::Float64)),
        Plan::Empty
    ));
}

#[test]
fn a_kernel_that_stores_nothing_still_runs_what_can_fail() {
    // An integer power raises on a negative exponent, which the engine must still see.
    assert!(!matches!(
        plan(&dropped(Opcode::Power, DType::Int32)),
        Plan::Empty
    ));
}
