//! matmul over float and integer dtypes.

use super::fill_positive;
use super::{Spec, Subject};
use crate::*;
use hassium_core::{Batch, DType, Instr, View};

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
