//! `range` and `random`, bit for bit.

use super::{Spec, Subject};
use crate::*;
use hassium_core::{Batch, DType, Instr, Opcode, Operand, Scalar, View};

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
