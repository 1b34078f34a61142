//! Gather, scatter and scatter-add, negative indices included.

use super::{Spec, Subject};
use crate::*;
use hassium_core::{Batch, DType, Instr, Opcode, Scalar, View};

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

/// A compaction as the recorder builds it: a masked scatter of rows to their ranks among
/// the selected rows, `Batch::in_range` naming its target (ranks are in range and
/// distinct, so an engine may share the rows among threads). Rows of 3 elements, about
/// a third selected, with 1, 2 and 3 threads: every selected element lands at its rank.
pub fn a_compactions_scatter_to_distinct_ranks_matches_for_any_thread_count(sub: &dyn Subject) {
    let t = DType::Float64;
    let (rows, inner) = (4099usize, 3usize);
    let mut rng = Rng(17);
    let selected: Vec<bool> = (0..rows).map(|_| rng.below(3) == 0).collect();
    let count = selected.iter().filter(|&&m| m).count();
    for threads in [1, 2, 3] {
        let dir = tempfile::tempdir().unwrap();
        let mut e = sub.engine(threads, Spec::Fixed, dir.path());
        let mut b = Batch::default();
        let src = base(&mut b, t, rows * inner);
        let idx = base(&mut b, DType::Int64, rows * inner);
        let mask = base(&mut b, DType::Bool, rows);
        let out = base(&mut b, t, count * inner);
        let mut m = View::contiguous(mask, DType::Bool, &[rows, inner]);
        m.strides = [1, 0].as_slice().into();
        b.instrs.push(Instr::new(
            Opcode::CondScatter,
            View::contiguous(out, t, &[count * inner]),
            [
                View::contiguous(idx, DType::Int64, &[rows, inner]).into(),
                View::contiguous(src, t, &[rows, inner]).into(),
                m.into(),
            ],
        ));
        b.in_range.push(out);
        let mut a = Arrays::new(&b);
        a.fill(src, &mut rng, false);
        let mut rank = 0i64;
        for (r, &sel) in selected.iter().enumerate() {
            a.set(mask, r, Scalar::Bool(sel));
            rank += i64::from(sel);
            for j in 0..inner {
                // Unselected rows point at the previous selected row's slots, as the
                // running count leaves them; the mask keeps them from writing.
                let at = ((rank - 1).max(0)) * inner as i64 + j as i64;
                a.set(idx, r * inner + j, Scalar::Int64(at));
            }
        }
        let (want, got) = run_both(&b, &singletons(&b), &a, e.as_mut());
        assert_eq!(diff(&want, &got, &[out]), None, "{threads} threads");
    }
}
