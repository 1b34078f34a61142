//! Errors raised inside compiled kernels, reported with NumPy's messages.

use super::{Spec, Subject};
use crate::*;
use hassium_core::{Batch, DType, Instr, Opcode, Operand, Scalar, View};

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

/// A masked scatter whose mask selects an out-of-range index fails with NumPy's message
/// and writes nothing, even where the bad index comes after good ones; out-of-range
/// indices its mask leaves out are ignored.
pub fn a_refused_masked_scatter_writes_nothing(sub: &dyn Subject) {
    let dir = tempfile::tempdir().unwrap();
    let mut e = sub.engine(2, Spec::Fixed, dir.path());
    let t = DType::Float64;
    let mut b = Batch::default();
    let dst = base(&mut b, t, 50);
    let idx = base(&mut b, DType::Int64, 40);
    let val = base(&mut b, t, 40);
    let mask = base(&mut b, DType::Bool, 40);
    b.instrs.push(Instr::new(
        Opcode::CondScatter,
        View::contiguous(dst, t, &[50]),
        [
            View::contiguous(idx, DType::Int64, &[40]).into(),
            View::contiguous(val, t, &[40]).into(),
            View::contiguous(mask, DType::Bool, &[40]).into(),
        ],
    ));
    let mut a = Arrays::new(&b);
    for i in 0..50 {
        a.set(dst, i, Scalar::Float64(-(i as f64)));
    }
    for i in 0..40 {
        a.set(idx, i, Scalar::Int64(i as i64));
        a.set(val, i, Scalar::Float64(1000.0 + i as f64));
        a.set(mask, i, Scalar::Bool(true));
    }
    // Out of range but masked out: ignored.
    a.set(idx, 3, Scalar::Int64(500));
    a.set(mask, 3, Scalar::Bool(false));
    let (want, got) = run_both(&b, &singletons(&b), &a, e.as_mut());
    assert_eq!(diff(&want, &got, &[dst]), None);
    // Selected, after 30 good ones.
    a.set(idx, 30, Scalar::Int64(77));
    let before: Vec<f64> = (0..50).map(|i| a.get(dst, i).as_f64()).collect();
    let mut e = sub.engine(2, Spec::Fixed, dir.path());
    let err = e.execute(&b, &singletons(&b), &a.buffers(&[])).unwrap_err();
    assert!(
        err.to_string()
            .contains("index 77 is out of bounds for axis 0 with size 50"),
        "{err}"
    );
    sync_all(e.as_mut(), &mut a, &[]);
    let after: Vec<f64> = (0..50).map(|i| a.get(dst, i).as_f64()).collect();
    assert_eq!(before, after, "the target must be as it was");
}
