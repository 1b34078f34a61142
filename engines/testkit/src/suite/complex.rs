//! Complex kernels: off the native path, and counted as such.

use super::{Spec, Subject};
use crate::*;
use hassium_core::{Batch, DType, Instr, Opcode, View};

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
