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

/// Complex arithmetic the C codegen renders (sums, NumPy's product, Smith's quotient,
/// NumPy's power for integer and other exponents, negation, conjugate, magnitude, parts,
/// tests, comparisons and casts) gives the reference's values on inputs with zeros of
/// both signs, infinities and NaN in either part, for both complex dtypes, each operation
/// alone and a chain of them fused.
pub fn complex_arithmetic_matches_the_reference_with_special_values(sub: &dyn Subject) {
    use hassium_core::{Operand, Scalar};
    let specials = [
        0.0,
        -0.0,
        1.5,
        -2.25,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
    ];
    for t in [DType::Complex128, DType::Complex64] {
        let rt = t.real();
        let n = specials.len() * specials.len() + 24;
        let mut b = Batch::default();
        let (x, y) = (base(&mut b, t, n), base(&mut b, t, n));
        let v = |id, d| View::contiguous(id, d, &[n]);
        let mut outs = Vec::new();
        let mut push = |b: &mut Batch, op: Opcode, d: DType, ins: Vec<Operand>| {
            let o = base(b, d, n);
            b.instrs.push(Instr::new(op, v(o, d), ins));
            outs.push(o);
        };
        let (xo, yo) = (|| v(x, t).into(), || v(y, t).into());
        for op in [
            Opcode::Add,
            Opcode::Subtract,
            Opcode::Multiply,
            Opcode::Divide,
            Opcode::Power,
        ] {
            push(&mut b, op, t, vec![xo(), yo()]);
        }
        for (re, im) in [(2.0, 0.0), (3.0, 0.0), (-2.0, 0.0), (7.0, 0.0), (0.5, 0.25)] {
            let e = Scalar::Complex128(re, im).cast(t);
            push(&mut b, Opcode::Power, t, vec![xo(), Operand::Scalar(e)]);
        }
        for op in [Opcode::Negative, Opcode::Conj, Opcode::Square] {
            push(&mut b, op, t, vec![xo()]);
        }
        for op in [Opcode::Absolute, Opcode::Real, Opcode::Imag] {
            push(&mut b, op, rt, vec![xo()]);
        }
        for op in [Opcode::IsNan, Opcode::IsInf, Opcode::IsFinite] {
            push(&mut b, op, DType::Bool, vec![xo()]);
        }
        for op in [Opcode::Equal, Opcode::NotEqual] {
            push(&mut b, op, DType::Bool, vec![xo(), yo()]);
        }
        for to in [
            DType::Complex64,
            DType::Complex128,
            DType::Float64,
            DType::Float32,
            DType::Int64,
            DType::Int8,
            DType::Bool,
        ] {
            push(&mut b, Opcode::Identity, to, vec![xo()]);
        }
        let f = base(&mut b, DType::Float64, n);
        push(
            &mut b,
            Opcode::Identity,
            t,
            vec![v(f, DType::Float64).into()],
        );
        let mut a = Arrays::new(&b);
        let mut rng = Rng(5);
        a.fill(f, &mut rng, false);
        for i in 0..n {
            let (xr, xi) = if i < specials.len() * specials.len() {
                (specials[i / specials.len()], specials[i % specials.len()])
            } else {
                ((rng.f64() - 0.5) * 6.0, (rng.f64() - 0.5) * 6.0)
            };
            a.set(x, i, Scalar::Complex128(xr, xi));
            let k = (i * 5 + 3) % (specials.len() * specials.len());
            let (yr, yi) = if i % 3 == 0 {
                (specials[k / specials.len()], specials[k % specials.len()])
            } else {
                ((rng.f64() - 0.5) * 4.0, (rng.f64() - 0.5) * 4.0)
            };
            a.set(y, i, Scalar::Complex128(yr, yi));
        }
        for (kernels, how) in [(singletons(&b), "alone"), (fused(&b), "fused")] {
            let dir = tempfile::tempdir().unwrap();
            let mut e = sub.engine(1, Spec::Fixed, dir.path());
            let (want, got) = run_both(&b, &kernels, &a, e.as_mut());
            assert_eq!(diff(&want, &got, &outs), None, "{t:?}, {how}");
            assert_eq!(
                sub.not_native(&e.stats()),
                sub.expected_not_native(&b, &kernels),
                "{t:?}, {how}"
            );
        }
    }
}
