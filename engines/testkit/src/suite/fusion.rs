//! Fused kernels: a reduction with prologue and epilogue, stencils with contracted
//! temporaries, and stencils that update their own grid (held-back writes).

use super::fill_positive;
use super::{Spec, Subject};
use crate::*;
use hassium_core::{BaseId, Batch, DType, Instr, Opcode, Operand, Scalar, View};

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
