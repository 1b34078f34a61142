//! Complex arithmetic and functions against explicit formulas and NumPy's results.

mod common;
use common::*;
use hassium_core::{DType, Instr, Opcode, Operand, TypeSet};

type C = (f64, f64);

fn eval(op: Opcode, t: DType, ins: &[&[C]]) -> Vec<C> {
    let mut h = Harness::new();
    let views: Vec<Operand> = ins.iter().map(|v| h.put_c64(t, v).into()).collect();
    let out = h.zeros(op.out_dtype(t).unwrap(), &[ins[0].len()]);
    h.push(Instr::new(op, out.clone(), views));
    h.ok();
    h.get_c64(&out)
}

#[track_caller]
fn check(got: &[C], want: &[C], t: DType, what: &str) {
    let tol = tolerance(t) * 10.0;
    let (gr, gi): (Vec<f64>, Vec<f64>) = got.iter().copied().unzip();
    let (wr, wi): (Vec<f64>, Vec<f64>) = want.iter().copied().unzip();
    assert_close(&gr, &wr, tol, &format!("{what} ({}) real", t.name()));
    assert_close(&gi, &wi, tol, &format!("{what} ({}) imag", t.name()));
}

fn cmul(a: C, b: C) -> C {
    (a.0 * b.0 - a.1 * b.1, a.0 * b.1 + a.1 * b.0)
}
fn cdiv(a: C, b: C) -> C {
    let d = b.0 * b.0 + b.1 * b.1;
    ((a.0 * b.0 + a.1 * b.1) / d, (a.1 * b.0 - a.0 * b.1) / d)
}
fn cexp(z: C) -> C {
    (z.0.exp() * z.1.cos(), z.0.exp() * z.1.sin())
}
fn clog(z: C) -> C {
    (z.0.hypot(z.1).ln(), z.1.atan2(z.0))
}

const ZS: [C; 4] = [(0.5, 0.25), (-0.75, 0.5), (0.3, -0.6), (-0.2, -0.4)];

#[test]
fn complex_arithmetic_matches_textbook_formulas() {
    let a = [(1.0, 2.0), (-3.0, 0.5), (0.0, 1.0)];
    let b = [(3.0, -4.0), (2.0, 2.0), (0.0, 1.0)];
    for t in TypeSet::COMPLEX.iter() {
        let z = |f: fn(C, C) -> C| a.iter().zip(&b).map(|(&x, &y)| f(x, y)).collect::<Vec<_>>();
        check(
            &eval(Opcode::Add, t, &[&a, &b]),
            &z(|x, y| (x.0 + y.0, x.1 + y.1)),
            t,
            "add",
        );
        check(
            &eval(Opcode::Subtract, t, &[&a, &b]),
            &z(|x, y| (x.0 - y.0, x.1 - y.1)),
            t,
            "subtract",
        );
        check(
            &eval(Opcode::Multiply, t, &[&a, &b]),
            &z(cmul),
            t,
            "multiply",
        );
        check(&eval(Opcode::Divide, t, &[&a, &b]), &z(cdiv), t, "divide");
        check(
            &eval(Opcode::Divide, t, &[&[(1.0, 2.0)], &[(3.0, -4.0)]]),
            &[(-0.2, 0.4)],
            t,
            "divide",
        );
        check(
            &eval(Opcode::Square, t, &[&a]),
            &a.map(|x| cmul(x, x)),
            t,
            "square",
        );
        check(
            &eval(Opcode::Reciprocal, t, &[&a]),
            &a.map(|x| cdiv((1.0, 0.0), x)),
            t,
            "reciprocal",
        );
        check(
            &eval(Opcode::Negative, t, &[&a]),
            &a.map(|x| (-x.0, -x.1)),
            t,
            "negative",
        );
        check(&eval(Opcode::Positive, t, &[&a]), &a, t, "positive");
        check(
            &eval(Opcode::Conj, t, &[&a]),
            &a.map(|x| (x.0, -x.1)),
            t,
            "conj",
        );
    }
}

#[test]
fn complex_division_by_zero_gives_infinities_or_nan() {
    let got = eval(
        Opcode::Divide,
        DType::Complex128,
        &[&[(1.0, 0.0), (0.0, 0.0)], &[(0.0, 0.0), (0.0, 0.0)]],
    );
    assert!(got[0].0.is_infinite() && got[0].1.is_nan(), "{got:?}");
    assert!(got[1].0.is_nan() && got[1].1.is_nan(), "{got:?}");
    // Smith's algorithm does not overflow where the textbook formula would.
    let big = eval(
        Opcode::Divide,
        DType::Complex128,
        &[&[(1e300, 1e300)], &[(1e300, 1e300)]],
    );
    assert_eq!(big, [(1.0, 0.0)]);
}

#[test]
fn complex_power_follows_numpy_special_cases() {
    let nan = f64::NAN;
    for t in TypeSet::COMPLEX.iter() {
        let a = [
            (1.0, 1.0),
            (1.0, 1.0),
            (2.0, 0.0),
            (0.0, 0.0),
            (0.0, 0.0),
            (0.0, 0.0),
            (1.5, -0.5),
            (0.5, 0.5),
        ];
        let b = [
            (2.0, 0.0),
            (-1.0, 0.0),
            (0.5, 0.0),
            (0.0, 0.0),
            (2.0, 0.0),
            (-1.0, 0.0),
            (5.0, 0.0),
            (0.3, 0.2),
        ];
        let p5 = (0..5).fold((1.0, 0.0), |acc, _| cmul(acc, (1.5, -0.5)));
        let general = cexp(cmul((0.3, 0.2), clog((0.5, 0.5))));
        let want = [
            (0.0, 2.0),
            (0.5, -0.5),
            (2f64.sqrt(), 0.0),
            (1.0, 0.0),
            (0.0, 0.0),
            (nan, nan),
            p5,
            general,
        ];
        check(&eval(Opcode::Power, t, &[&a, &b]), &want, t, "power");
    }
}

#[test]
fn absolute_is_the_real_magnitude_and_sign_is_z_over_abs() {
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    for t in TypeSet::COMPLEX.iter() {
        let mut h = Harness::new();
        let z = h.put_c64(t, &[(3.0, 4.0), (-inf, 1.0), (0.0, 0.0), (nan, 1.0)]);
        let out = h.zeros(t.real(), &[4]);
        h.push(Instr::new(Opcode::Absolute, out.clone(), [z.into()]));
        h.ok();
        assert_same(&h.get_f64(&out), &[5.0, inf, 0.0, nan], "absolute");
        let z = [
            (3.0, 4.0),
            (inf, 1.0),
            (1.0, -inf),
            (0.0, 0.0),
            (inf, inf),
            (nan, 0.0),
            (-2.0, 0.0),
        ];
        let want = [
            (0.6, 0.8),
            (1.0, 0.0),
            (0.0, -1.0),
            (0.0, 0.0),
            (nan, nan),
            (nan, nan),
            (-1.0, 0.0),
        ];
        check(&eval(Opcode::Sign, t, &[&z]), &want, t, "sign");
    }
}

#[test]
fn complex_exponentials_and_logarithms_match_their_definitions() {
    for t in TypeSet::COMPLEX.iter() {
        let ln2 = std::f64::consts::LN_2;
        let ln10 = std::f64::consts::LN_10;
        check(&eval(Opcode::Exp, t, &[&ZS]), &ZS.map(cexp), t, "exp");
        check(&eval(Opcode::Log, t, &[&ZS]), &ZS.map(clog), t, "log");
        check(
            &eval(Opcode::Exp2, t, &[&ZS]),
            &ZS.map(|z| cexp((z.0 * ln2, z.1 * ln2))),
            t,
            "exp2",
        );
        check(
            &eval(Opcode::Log2, t, &[&ZS]),
            &ZS.map(|z| (clog(z).0 / ln2, clog(z).1 / ln2)),
            t,
            "log2",
        );
        check(
            &eval(Opcode::Log10, t, &[&ZS]),
            &ZS.map(|z| (clog(z).0 / ln10, clog(z).1 / ln10)),
            t,
            "log10",
        );
        check(
            &eval(Opcode::Expm1, t, &[&ZS]),
            &ZS.map(|z| (cexp(z).0 - 1.0, cexp(z).1)),
            t,
            "expm1",
        );
        check(
            &eval(Opcode::Log1p, t, &[&ZS]),
            &ZS.map(|z| clog((1.0 + z.0, z.1))),
            t,
            "log1p",
        );
        // Principal square roots, including the negative real axis.
        let s = [(-4.0, 0.0), (3.0, 4.0), (0.0, 2.0), (-3.0, -4.0)];
        check(
            &eval(Opcode::Sqrt, t, &[&s]),
            &[(0.0, 2.0), (2.0, 1.0), (1.0, 1.0), (1.0, -2.0)],
            t,
            "sqrt",
        );
        check(
            &eval(Opcode::Log, t, &[&[(-1.0, 0.0)]]),
            &[(0.0, std::f64::consts::PI)],
            t,
            "log(-1)",
        );
    }
}

#[test]
fn complex_trigonometry_matches_its_definitions() {
    let sin = |z: C| (z.0.sin() * z.1.cosh(), z.0.cos() * z.1.sinh());
    let cos = |z: C| (z.0.cos() * z.1.cosh(), -z.0.sin() * z.1.sinh());
    let sinh = |z: C| (z.0.sinh() * z.1.cos(), z.0.cosh() * z.1.sin());
    let cosh = |z: C| (z.0.cosh() * z.1.cos(), z.0.sinh() * z.1.sin());
    for t in TypeSet::COMPLEX.iter() {
        check(&eval(Opcode::Sin, t, &[&ZS]), &ZS.map(sin), t, "sin");
        check(&eval(Opcode::Cos, t, &[&ZS]), &ZS.map(cos), t, "cos");
        check(
            &eval(Opcode::Tan, t, &[&ZS]),
            &ZS.map(|z| cdiv(sin(z), cos(z))),
            t,
            "tan",
        );
        check(&eval(Opcode::Sinh, t, &[&ZS]), &ZS.map(sinh), t, "sinh");
        check(&eval(Opcode::Cosh, t, &[&ZS]), &ZS.map(cosh), t, "cosh");
        check(
            &eval(Opcode::Tanh, t, &[&ZS]),
            &ZS.map(|z| cdiv(sinh(z), cosh(z))),
            t,
            "tanh",
        );
        // Inverses: applying the forward function gives the input back (principal
        // branches keep these small inputs in range).
        for (inv, fwd) in [
            (Opcode::Arcsin, Opcode::Sin),
            (Opcode::Arccos, Opcode::Cos),
            (Opcode::Arctan, Opcode::Tan),
            (Opcode::Arcsinh, Opcode::Sinh),
            (Opcode::Arccosh, Opcode::Cosh),
            (Opcode::Arctanh, Opcode::Tanh),
        ] {
            let w = eval(inv, t, &[&ZS]);
            check(&eval(fwd, t, &[&w]), &ZS, t, inv.name());
        }
    }
}

#[test]
fn inverse_functions_take_numpys_side_of_each_branch_cut() {
    let (h, p, q, r) = (
        std::f64::consts::FRAC_PI_2,
        std::f64::consts::PI,
        1.3169578969248166,
        1.4436354751788103,
    );
    let (s, u) = (0.5493061443340549, 1.1071487177940904);
    let z = [(2.0, 0.0), (-2.0, 0.0), (0.0, 2.0), (0.0, -2.0)];
    // np.arcsin(z) etc. under NumPy 2 (C99 branch conventions).
    let table: [(Opcode, [C; 4]); 6] = [
        (Opcode::Arcsin, [(h, q), (-h, q), (0.0, r), (0.0, -r)]),
        (Opcode::Arccos, [(0.0, -q), (p, -q), (h, -r), (h, r)]),
        (Opcode::Arctan, [(u, 0.0), (-u, 0.0), (h, s), (h, -s)]),
        (Opcode::Arcsinh, [(r, 0.0), (-r, 0.0), (q, h), (q, -h)]),
        (Opcode::Arccosh, [(q, 0.0), (q, p), (r, h), (r, -h)]),
        (Opcode::Arctanh, [(s, h), (-s, h), (0.0, u), (0.0, -u)]),
    ];
    for t in TypeSet::COMPLEX.iter() {
        for (op, want) in &table {
            check(&eval(*op, t, &[&z]), want, t, op.name());
        }
        // Away from the cuts, against the values NumPy prints for 0.5+0.25j.
        let w = [
            (Opcode::Arcsin, (0.50160885, 0.28139606)),
            (Opcode::Arccos, (1.06918747, -0.28139606)),
            (Opcode::Arctan, (0.48425449, 0.20058662)),
            (Opcode::Arcsinh, (0.49267568, 0.22432845)),
            (Opcode::Arccosh, (0.28139606, 1.06918747)),
            (Opcode::Arctanh, (0.50037, 0.31439814)),
        ];
        for (op, want) in w {
            let got = eval(op, t, &[&[(0.5, 0.25)]])[0];
            assert!(
                (got.0 - want.0).abs() < 1e-6 && (got.1 - want.1).abs() < 1e-6,
                "{} {got:?}",
                op.name()
            );
        }
    }
}

#[test]
fn complex_classification_parts_and_equality() {
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    for t in TypeSet::COMPLEX.iter() {
        let z = [(1.0, nan), (inf, 0.0), (1.0, 2.0)];
        let flags = |op| eval(op, t, &[&z]).iter().map(|c| c.0).collect::<Vec<_>>();
        assert_same(&flags(Opcode::IsNan), &[1.0, 0.0, 0.0], "isnan");
        assert_same(&flags(Opcode::IsInf), &[0.0, 1.0, 0.0], "isinf");
        assert_same(&flags(Opcode::IsFinite), &[0.0, 0.0, 1.0], "isfinite");
        let z = [(1.5, -2.5)];
        check(&eval(Opcode::Real, t, &[&z]), &[(1.5, 0.0)], t, "real");
        check(&eval(Opcode::Imag, t, &[&z]), &[(-2.5, 0.0)], t, "imag");
        check(
            &eval(Opcode::Rint, t, &[&[(2.5, 3.5)]]),
            &[(2.0, 4.0)],
            t,
            "rint",
        );
        let a = [(1.0, 2.0), (1.0, 2.0), (0.0, -0.0)];
        let b = [(1.0, 2.0), (1.0, -2.0), (-0.0, 0.0)];
        let eq: Vec<f64> = eval(Opcode::Equal, t, &[&a, &b])
            .iter()
            .map(|c| c.0)
            .collect();
        assert_same(&eq, &[1.0, 0.0, 1.0], "equal");
        let ne: Vec<f64> = eval(Opcode::NotEqual, t, &[&a, &b])
            .iter()
            .map(|c| c.0)
            .collect();
        assert_same(&ne, &[0.0, 1.0, 0.0], "not_equal");
        let truth: Vec<f64> = eval(Opcode::LogicalNot, t, &[&[(0.0, 1.0), (0.0, 0.0)]])
            .iter()
            .map(|c| c.0)
            .collect();
        assert_same(&truth, &[0.0, 1.0], "logical_not");
    }
}
