//! Elementwise opcodes: every opcode on every allowed real dtype against f64 math, plus
//! table-driven cases of results NumPy gives (signs of integer division, NaN handling,
//! shifts, wrapping, float16 rounding).

mod common;
use common::*;
use hassium_core::{DType, Instr, OpClass, Opcode, Operand, Scalar, TypeSet};

/// Runs `op` elementwise on `ins` (arrays of `t`) and returns the output as f64.
fn eval(op: Opcode, t: DType, ins: &[&[f64]]) -> Vec<f64> {
    let mut h = Harness::new();
    let views: Vec<Operand> = ins.iter().map(|v| h.put_f64(t, v).into()).collect();
    let out_t = op.out_dtype(t).expect("allowed dtype");
    let out = h.zeros(out_t, &[ins[0].len()]);
    h.push(Instr::new(op, out.clone(), views));
    h.ok();
    h.get_f64(&out)
}

fn eval_err(op: Opcode, t: DType, ins: &[&[f64]]) -> String {
    let mut h = Harness::new();
    let views: Vec<Operand> = ins.iter().map(|v| h.put_f64(t, v).into()).collect();
    let out = h.zeros(op.out_dtype(t).expect("allowed dtype"), &[ins[0].len()]);
    h.push(Instr::new(op, out, views));
    h.run().expect_err("should fail").to_string()
}

/// The test's model of each elementwise opcode on real values of dtype `t` (exact
/// integer results are wrapped into `t` by the caller).
fn oracle(op: Opcode, t: DType, a: f64, b: f64) -> f64 {
    let (ia, ib) = (a as i64, b as i64);
    let bit = |x: bool| x as u8 as f64;
    let bits = (t.size() * 8) as i64;
    match op {
        Opcode::Add if t.is_bool() => bit(a != 0.0 || b != 0.0),
        Opcode::Multiply if t.is_bool() => bit(a != 0.0 && b != 0.0),
        Opcode::Add => a + b,
        Opcode::Subtract => a - b,
        Opcode::Multiply => a * b,
        Opcode::Divide => a / b,
        Opcode::FloorDivide => (a / b).floor(),
        Opcode::Remainder => a - (a / b).floor() * b,
        Opcode::Fmod => a - (a / b).trunc() * b,
        Opcode::Copysign => a.abs() * if b.is_sign_negative() { -1.0 } else { 1.0 },
        Opcode::Nextafter => next_toward(t, a, b),
        Opcode::Power => a.powf(b),
        Opcode::Negative => -a,
        Opcode::Positive | Opcode::Conj | Opcode::Real => a,
        Opcode::Imag => 0.0,
        Opcode::Absolute => a.abs(),
        Opcode::Sign => {
            if a > 0.0 {
                1.0
            } else if a < 0.0 {
                -1.0
            } else {
                0.0
            }
        }
        Opcode::Maximum | Opcode::Fmax => a.max(b),
        Opcode::Minimum | Opcode::Fmin => a.min(b),
        Opcode::Equal => bit(a == b),
        Opcode::NotEqual => bit(a != b),
        Opcode::Less => bit(a < b),
        Opcode::LessEqual => bit(a <= b),
        Opcode::Greater => bit(a > b),
        Opcode::GreaterEqual => bit(a >= b),
        Opcode::LogicalAnd => bit(a != 0.0 && b != 0.0),
        Opcode::LogicalOr => bit(a != 0.0 || b != 0.0),
        Opcode::LogicalXor => bit((a != 0.0) != (b != 0.0)),
        Opcode::LogicalNot => bit(a == 0.0),
        Opcode::BitwiseAnd => (ia & ib) as f64,
        Opcode::BitwiseOr => (ia | ib) as f64,
        Opcode::BitwiseXor => (ia ^ ib) as f64,
        Opcode::Invert if t.is_bool() => bit(a == 0.0),
        Opcode::Invert => !ia as f64,
        Opcode::LeftShift => {
            if ib < bits {
                ((ia as i128) << ib) as f64
            } else {
                0.0
            }
        }
        Opcode::RightShift => (ia >> ib.min(63)) as f64,
        Opcode::Sqrt => a.sqrt(),
        Opcode::Cbrt => a.cbrt(),
        Opcode::Square => a * a,
        Opcode::Reciprocal if t.is_integer() => {
            if ia == 0 {
                0.0
            } else {
                (1.0 / a).trunc()
            }
        }
        Opcode::Reciprocal => 1.0 / a,
        Opcode::Exp => a.exp(),
        Opcode::Exp2 => 2f64.powf(a),
        Opcode::Expm1 => a.exp() - 1.0,
        Opcode::Log => a.ln(),
        Opcode::Log2 => a.ln() / std::f64::consts::LN_2,
        Opcode::Log10 => a.ln() / std::f64::consts::LN_10,
        Opcode::Log1p => (1.0 + a).ln(),
        Opcode::Sin => a.sin(),
        Opcode::Cos => a.cos(),
        Opcode::Tan => a.sin() / a.cos(),
        Opcode::Arcsin => a.asin(),
        Opcode::Arccos => a.acos(),
        Opcode::Arctan => a.atan(),
        Opcode::Arctan2 => a.atan2(b),
        Opcode::Hypot => (a * a + b * b).sqrt(),
        Opcode::Sinh => (a.exp() - (-a).exp()) / 2.0,
        Opcode::Cosh => (a.exp() + (-a).exp()) / 2.0,
        Opcode::Tanh => (a.exp() - (-a).exp()) / (a.exp() + (-a).exp()),
        Opcode::Arcsinh => (a + (a * a + 1.0).sqrt()).ln(),
        Opcode::Arccosh => (a + (a * a - 1.0).sqrt()).ln(),
        Opcode::Arctanh => 0.5 * ((1.0 + a) / (1.0 - a)).ln(),
        Opcode::Floor => a.floor(),
        Opcode::Ceil => a.ceil(),
        Opcode::Trunc => a.trunc(),
        Opcode::Rint => {
            let r = a.round();
            if (a - a.trunc()).abs() == 0.5 && r % 2.0 != 0.0 {
                r - a.signum()
            } else {
                r
            }
        }
        Opcode::IsNan => bit(a.is_nan()),
        Opcode::IsInf => bit(a.is_infinite()),
        Opcode::IsFinite => bit(a.is_finite()),
        Opcode::Signbit => bit(a < 0.0 || (a == 0.0 && 1.0 / a < 0.0)),
        Opcode::Ldexp => a * 2f64.powi(b.trunc() as i32),
        Opcode::FrexpExponent if a == 0.0 || !a.is_finite() => 0.0,
        Opcode::FrexpExponent => a.abs().log2().floor() + 1.0,
        Opcode::Gcd => gcd(ia.unsigned_abs(), ib.unsigned_abs()) as f64,
        Opcode::Lcm => match gcd(ia.unsigned_abs(), ib.unsigned_abs()) {
            0 => 0.0,
            g => (ia.unsigned_abs() / g * ib.unsigned_abs()) as f64,
        },
        other => panic!("no oracle for {other:?}"),
    }
}

/// Euclid's greatest common divisor (0 for two zeros).
fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The digits (with the implicit bit), least normal exponent and greatest exponent of a
/// float dtype.
fn float_format(t: DType) -> (i32, i32, i32) {
    match t {
        DType::Float16 => (11, -14, 15),
        DType::Float32 => (24, -126, 127),
        _ => (53, -1022, 1023),
    }
}

/// The test's model of `nextafter` in dtype `t`, by arithmetic on the spacing of `t`'s
/// values (the engine steps bits): `a` plus or minus the spacing on the side it moves
/// to. Finite, non-NaN, unequal operands only; the special cases have their own test.
fn next_toward(t: DType, a: f64, b: f64) -> f64 {
    let (digits, emin, _) = float_format(t);
    let tiny = 2f64.powi(emin) * 2f64.powi(1 - digits);
    if a == 0.0 {
        return tiny.copysign(b - a);
    }
    let e = (a.abs().log2().floor() as i32).max(emin);
    let towards_zero = (b > a) != (a > 0.0);
    let e = if towards_zero && a.abs() == 2f64.powi(e) && e > emin {
        e - 1
    } else {
        e
    };
    a + (b - a).signum() * 2f64.powi(e) * 2f64.powi(1 - digits)
}

/// Inputs that are exact in every dtype and inside every function's domain.
fn inputs(op: Opcode, t: DType) -> (Vec<f64>, Vec<f64>) {
    if t.is_bool() {
        return (vec![1.0, 1.0, 0.0, 0.0], vec![1.0, 0.0, 1.0, 0.0]);
    }
    if t.is_float() && op.nin() == 1 {
        let a = match op {
            Opcode::Arccosh => vec![1.25, 1.5, 2.0, 3.0, 1.0],
            Opcode::Rint | Opcode::Floor | Opcode::Ceil | Opcode::Trunc | Opcode::Sign => {
                vec![2.5, -2.5, 1.5, -0.5, 0.75, -1.25, 0.0]
            }
            Opcode::Negative
            | Opcode::Absolute
            | Opcode::Square
            | Opcode::Cbrt
            | Opcode::Reciprocal => {
                vec![2.5, -1.5, 0.125, -4.0, 3.0]
            }
            _ => vec![0.25, 0.5, 0.75, 0.125, 0.625],
        };
        let n = a.len();
        return (a, vec![0.0; n]);
    }
    let a = vec![7.0, 6.0, 5.0, 2.0, 0.0, 3.0];
    let b = vec![2.0, 3.0, 5.0, 1.0, 3.0, 7.0];
    (a, b)
}

#[test]
fn every_elementwise_opcode_matches_f64_math_on_every_real_dtype() {
    let mut checked = 0;
    for &op in Opcode::ALL {
        if op.class() != OpClass::Elementwise || matches!(op, Opcode::Identity | Opcode::Where) {
            continue;
        }
        for t in op.info().types.without(TypeSet::COMPLEX).iter() {
            let (a, b) = inputs(op, t);
            let got = if op.nin() == 1 {
                eval(op, t, &[&a])
            } else {
                eval(op, t, &[&a, &b])
            };
            let out_t = op.out_dtype(t).unwrap();
            let want: Vec<f64> = a
                .iter()
                .zip(&b)
                .map(|(&x, &y)| round_to(out_t, oracle(op, t, x, y)))
                .collect();
            assert_close(
                &got,
                &want,
                tolerance(out_t),
                &format!("{} on {}", op.name(), t.name()),
            );
            checked += 1;
        }
    }
    assert!(checked > 300, "only {checked} opcode/dtype pairs checked");
}

#[test]
fn integer_floor_divide_and_remainder_follow_python_signs() {
    let a = [-7.0, 7.0, -7.0, 7.0, 5.0, -6.0, 0.0];
    let b = [2.0, -2.0, -2.0, 2.0, 0.0, 3.0, -3.0];
    for t in TypeSet::SINT.iter() {
        assert_same(
            &eval(Opcode::FloorDivide, t, &[&a, &b]),
            &[-4.0, -4.0, 3.0, 3.0, 0.0, -2.0, 0.0],
            t.name(),
        );
        assert_same(
            &eval(Opcode::Remainder, t, &[&a, &b]),
            &[1.0, -1.0, -1.0, 1.0, 0.0, 0.0, 0.0],
            t.name(),
        );
        // fmod takes the dividend's sign; a zero divisor gives 0, as NumPy's loop.
        assert_same(
            &eval(Opcode::Fmod, t, &[&a, &b]),
            &[-1.0, 1.0, -1.0, 1.0, 0.0, 0.0, 0.0],
            t.name(),
        );
        let min = -(2f64.powi(t.size() as i32 * 8 - 1));
        assert_same(&eval(Opcode::Fmod, t, &[&[min], &[-1.0]]), &[0.0], t.name());
    }
    for t in TypeSet::UINT.iter() {
        assert_same(
            &eval(Opcode::FloorDivide, t, &[&[7.0, 7.0], &[2.0, 0.0]]),
            &[3.0, 0.0],
            t.name(),
        );
        assert_same(
            &eval(Opcode::Remainder, t, &[&[7.0, 7.0], &[2.0, 0.0]]),
            &[1.0, 0.0],
            t.name(),
        );
    }
}

#[test]
fn integer_floor_divide_of_min_by_minus_one_wraps() {
    let mut h = Harness::new();
    let a = h.put(DType::Int64, &[i64::MIN, i64::MIN]);
    let b = h.put(DType::Int64, &[-1i64, -1]);
    let q = h.zeros(DType::Int64, &[2]);
    let r = h.zeros(DType::Int64, &[2]);
    h.push(Instr::new(
        Opcode::FloorDivide,
        q.clone(),
        [a.clone().into(), b.clone().into()],
    ));
    h.push(Instr::new(
        Opcode::Remainder,
        r.clone(),
        [a.into(), b.into()],
    ));
    h.ok();
    assert_eq!(h.get::<i64>(&q), [i64::MIN, i64::MIN]);
    assert_eq!(h.get::<i64>(&r), [0, 0]);
}

#[test]
fn float_floor_divide_and_remainder_match_numpy() {
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    let a = [
        -7.0, 7.0, -7.0, inf, 1.0, -1.0, 5.0, -5.0, 0.0, nan, -0.0, 7.5,
    ];
    let b = [2.0, -2.0, -2.0, 2.0, inf, inf, 0.0, 0.0, 0.0, 1.0, 3.0, 2.0];
    // np.floor_divide(a, b) and np.remainder(a, b) under NumPy 2.
    let fd = [
        -4.0, -4.0, 3.0, nan, 0.0, -1.0, inf, -inf, nan, nan, -0.0, 3.0,
    ];
    let rem = [1.0, -1.0, -1.0, nan, 1.0, inf, nan, nan, nan, nan, 0.0, 1.5];
    assert_same(
        &eval(Opcode::FloorDivide, DType::Float64, &[&a, &b]),
        &fd,
        "floor_divide f64",
    );
    assert_same(
        &eval(Opcode::Remainder, DType::Float64, &[&a, &b]),
        &rem,
        "remainder f64",
    );
    for t in [DType::Float16, DType::Float32] {
        assert_same(&eval(Opcode::FloorDivide, t, &[&a, &b]), &fd, t.name());
        assert_same(&eval(Opcode::Remainder, t, &[&a, &b]), &rem, t.name());
    }
}

#[test]
fn maximum_and_minimum_propagate_nan_but_fmax_and_fmin_ignore_it() {
    let nan = f64::NAN;
    let a = [nan, 1.0, nan, 3.0, -0.0, 0.0];
    let b = [1.0, nan, nan, 2.0, 0.0, -0.0];
    for t in TypeSet::FLOAT.iter() {
        let n = t.name();
        assert_same(
            &eval(Opcode::Maximum, t, &[&a, &b]),
            &[nan, nan, nan, 3.0, 0.0, -0.0],
            n,
        );
        assert_same(
            &eval(Opcode::Minimum, t, &[&a, &b]),
            &[nan, nan, nan, 2.0, 0.0, -0.0],
            n,
        );
        assert_same(
            &eval(Opcode::Fmax, t, &[&a, &b]),
            &[1.0, 1.0, nan, 3.0, -0.0, 0.0],
            n,
        );
        assert_same(
            &eval(Opcode::Fmin, t, &[&a, &b]),
            &[1.0, 1.0, nan, 2.0, -0.0, 0.0],
            n,
        );
    }
}

#[test]
fn comparisons_with_nan_are_false_except_not_equal() {
    let nan = f64::NAN;
    let a = [nan, 1.0, nan];
    let b = [1.0, nan, nan];
    for t in TypeSet::FLOAT.iter() {
        for op in [
            Opcode::Equal,
            Opcode::Less,
            Opcode::LessEqual,
            Opcode::Greater,
            Opcode::GreaterEqual,
        ] {
            assert_same(&eval(op, t, &[&a, &b]), &[0.0; 3], op.name());
        }
        assert_same(
            &eval(Opcode::NotEqual, t, &[&a, &b]),
            &[1.0; 3],
            "not_equal",
        );
    }
}

#[test]
fn nan_is_true_for_logical_operations() {
    let nan = f64::NAN;
    assert_same(
        &eval(
            Opcode::LogicalAnd,
            DType::Float64,
            &[&[nan, 0.0], &[1.0, nan]],
        ),
        &[1.0, 0.0],
        "and",
    );
    assert_same(
        &eval(Opcode::LogicalNot, DType::Float32, &[&[nan, 0.0, -0.0]]),
        &[0.0, 1.0, 1.0],
        "not",
    );
}

#[test]
fn integer_arithmetic_wraps_in_twos_complement() {
    assert_same(
        &eval(Opcode::Add, DType::Int8, &[&[127.0], &[1.0]]),
        &[-128.0],
        "i8 add",
    );
    assert_same(
        &eval(Opcode::Subtract, DType::UInt8, &[&[0.0], &[1.0]]),
        &[255.0],
        "u8 sub",
    );
    assert_same(
        &eval(Opcode::Multiply, DType::Int16, &[&[300.0], &[300.0]]),
        &[24464.0],
        "i16 mul",
    );
    assert_same(
        &eval(Opcode::Negative, DType::UInt16, &[&[1.0]]),
        &[65535.0],
        "u16 neg",
    );
    assert_same(
        &eval(Opcode::Absolute, DType::Int8, &[&[-128.0, -5.0]]),
        &[-128.0, 5.0],
        "i8 abs",
    );
    assert_same(
        &eval(Opcode::Power, DType::Int8, &[&[2.0, 3.0], &[7.0, 5.0]]),
        &[-128.0, -13.0],
        "i8 pow",
    );
    let mut h = Harness::new();
    let a = h.put(DType::UInt64, &[u64::MAX]);
    let out = h.zeros(DType::UInt64, &[1]);
    h.push(Instr::new(
        Opcode::Add,
        out.clone(),
        [a.into(), Scalar::UInt64(2).into()],
    ));
    h.ok();
    assert_eq!(h.get::<u64>(&out), [1]);
}

#[test]
fn shifts_match_numpy_for_large_and_negative_counts() {
    let t = DType::Int32;
    let l = eval(
        Opcode::LeftShift,
        t,
        &[&[1.0, 1.0, 1.0, 3.0], &[31.0, 32.0, -1.0, 2.0]],
    );
    assert_same(&l, &[-2147483648.0, 0.0, 0.0, 12.0], "left_shift i32");
    let r = eval(
        Opcode::RightShift,
        t,
        &[
            &[-8.0, -8.0, 8.0, -8.0, 8.0],
            &[1.0, 40.0, 40.0, -1.0, -1.0],
        ],
    );
    assert_same(&r, &[-4.0, -1.0, 0.0, -1.0, 0.0], "right_shift i32");
    assert_same(
        &eval(
            Opcode::LeftShift,
            DType::UInt8,
            &[&[1.0, 255.0], &[8.0, 1.0]],
        ),
        &[0.0, 254.0],
        "u8 <<",
    );
    assert_same(
        &eval(
            Opcode::RightShift,
            DType::UInt8,
            &[&[255.0, 255.0], &[9.0, 7.0]],
        ),
        &[0.0, 1.0],
        "u8 >>",
    );
    assert_same(
        &eval(Opcode::RightShift, DType::Int8, &[&[-128.0], &[7.0]]),
        &[-1.0],
        "i8 >>",
    );
}

#[test]
fn integer_power_handles_zero_and_rejects_negative_exponents() {
    for t in TypeSet::INT.iter() {
        assert_same(
            &eval(Opcode::Power, t, &[&[0.0, 3.0, 1.0], &[0.0, 4.0, 100.0]]),
            &[1.0, 81.0, 1.0],
            t.name(),
        );
    }
    for t in TypeSet::SINT.iter() {
        let e = eval_err(Opcode::Power, t, &[&[2.0, 2.0], &[1.0, -1.0]]);
        assert!(
            e.contains("Integers to negative integer powers are not allowed."),
            "{e}"
        );
        assert!(e.contains("instruction 0 (power)"), "{e}");
    }
}

#[test]
fn integer_unary_operations_follow_numpy() {
    for t in TypeSet::SINT.iter() {
        let x = [-3.0, -1.0, 0.0, 1.0, 2.0];
        assert_same(
            &eval(Opcode::Sign, t, &[&x]),
            &[-1.0, -1.0, 0.0, 1.0, 1.0],
            "sign",
        );
        assert_same(
            &eval(Opcode::Reciprocal, t, &[&x]),
            &[0.0, -1.0, 0.0, 1.0, 0.0],
            "reciprocal",
        );
        assert_same(
            &eval(Opcode::Square, t, &[&x]),
            &[9.0, 1.0, 0.0, 1.0, 4.0],
            "square",
        );
        assert_same(
            &eval(Opcode::Invert, t, &[&x]),
            &[2.0, 0.0, -1.0, -2.0, -3.0],
            "invert",
        );
        for op in [
            Opcode::Floor,
            Opcode::Ceil,
            Opcode::Trunc,
            Opcode::Conj,
            Opcode::Real,
        ] {
            assert_same(&eval(op, t, &[&x]), &x, op.name());
        }
        assert_same(&eval(Opcode::IsNan, t, &[&x]), &[0.0; 5], "isnan");
        assert_same(&eval(Opcode::IsInf, t, &[&x]), &[0.0; 5], "isinf");
        assert_same(&eval(Opcode::IsFinite, t, &[&x]), &[1.0; 5], "isfinite");
    }
}

#[test]
fn float_unary_operations_handle_special_values() {
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    for t in TypeSet::FLOAT.iter() {
        let n = t.name();
        assert_same(
            &eval(Opcode::Sign, t, &[&[-0.0, nan, -inf, 2.0]]),
            &[0.0, nan, -1.0, 1.0],
            n,
        );
        assert_same(
            &eval(Opcode::Rint, t, &[&[0.5, 1.5, 2.5, -0.5, -2.5]]),
            &[0.0, 2.0, 2.0, -0.0, -2.0],
            n,
        );
        assert_same(
            &eval(Opcode::Sqrt, t, &[&[-1.0, inf, 4.0]]),
            &[nan, inf, 2.0],
            n,
        );
        assert_same(
            &eval(Opcode::Log, t, &[&[0.0, -1.0, inf]]),
            &[-inf, nan, inf],
            n,
        );
        assert_same(&eval(Opcode::Cbrt, t, &[&[-8.0, 27.0]]), &[-2.0, 3.0], n);
        assert_same(&eval(Opcode::Exp2, t, &[&[3.0, -1.0]]), &[8.0, 0.5], n);
        assert_same(
            &eval(Opcode::Reciprocal, t, &[&[0.0, -0.0, 4.0]]),
            &[inf, -inf, 0.25],
            n,
        );
        assert_same(
            &eval(Opcode::IsNan, t, &[&[nan, inf, 1.0]]),
            &[1.0, 0.0, 0.0],
            n,
        );
        assert_same(
            &eval(Opcode::IsInf, t, &[&[nan, -inf, 1.0]]),
            &[0.0, 1.0, 0.0],
            n,
        );
        assert_same(
            &eval(Opcode::IsFinite, t, &[&[nan, inf, 1.0]]),
            &[0.0, 0.0, 1.0],
            n,
        );
        assert_same(&eval(Opcode::Absolute, t, &[&[-0.0, -inf]]), &[0.0, inf], n);
    }
    // expm1 and log1p keep precision near zero where exp(x) - 1 would not.
    let tiny = 1e-10;
    let e = eval(Opcode::Expm1, DType::Float64, &[&[tiny]]);
    assert_close(&e, &[tiny + tiny * tiny / 2.0], 1e-15, "expm1");
    let l = eval(Opcode::Log1p, DType::Float64, &[&[tiny]]);
    assert_close(&l, &[tiny - tiny * tiny / 2.0], 1e-15, "log1p");
}

#[test]
fn float16_computes_in_f32_and_rounds_once() {
    use half::f16;
    let mut h = Harness::new();
    let vals = [1.0f32, 60000.0, 0.1, 3.0];
    let other = [2f32.powi(-11), 60000.0, 0.2, 7.0];
    let a = h.put(DType::Float16, &vals.map(f16::from_f32));
    let b = h.put(DType::Float16, &other.map(f16::from_f32));
    let sum = h.zeros(DType::Float16, &[4]);
    let quo = h.zeros(DType::Float16, &[4]);
    h.push(Instr::new(
        Opcode::Add,
        sum.clone(),
        [a.clone().into(), b.clone().into()],
    ));
    h.push(Instr::new(
        Opcode::Divide,
        quo.clone(),
        [a.into(), b.into()],
    ));
    h.ok();
    let want = |f: fn(f32, f32) -> f32| -> Vec<f16> {
        vals.iter()
            .zip(&other)
            .map(|(&x, &y)| f16::from_f32(f(f16::from_f32(x).to_f32(), f16::from_f32(y).to_f32())))
            .collect()
    };
    assert_eq!(h.get::<f16>(&sum), want(|x, y| x + y));
    assert_eq!(h.get::<f16>(&sum)[1], f16::INFINITY);
    assert_eq!(h.get::<f16>(&sum)[0], f16::ONE, "1 + 2**-11 rounds to even");
    assert_eq!(h.get::<f16>(&quo), want(|x, y| x / y));
}

#[test]
fn bool_arithmetic_is_logical() {
    let a = [1.0, 1.0, 0.0, 0.0];
    let b = [1.0, 0.0, 1.0, 0.0];
    let t = DType::Bool;
    assert_same(
        &eval(Opcode::Add, t, &[&a, &b]),
        &[1.0, 1.0, 1.0, 0.0],
        "add",
    );
    assert_same(
        &eval(Opcode::Multiply, t, &[&a, &b]),
        &[1.0, 0.0, 0.0, 0.0],
        "multiply",
    );
    assert_same(
        &eval(Opcode::Maximum, t, &[&a, &b]),
        &[1.0, 1.0, 1.0, 0.0],
        "maximum",
    );
    assert_same(
        &eval(Opcode::Minimum, t, &[&a, &b]),
        &[1.0, 0.0, 0.0, 0.0],
        "minimum",
    );
    assert_same(
        &eval(Opcode::Invert, t, &[&a]),
        &[0.0, 0.0, 1.0, 1.0],
        "invert",
    );
    assert_same(
        &eval(Opcode::Less, t, &[&a, &b]),
        &[0.0, 0.0, 1.0, 0.0],
        "less",
    );
}

#[test]
fn bool_buffers_with_any_nonzero_byte_read_as_true() {
    let mut h = Harness::new();
    let a = h.raw(DType::Bool, vec![0, 1, 2, 255]);
    let out = h.zeros(DType::Bool, &[4]);
    h.push(Instr::new(Opcode::LogicalNot, out.clone(), [a.into()]));
    h.ok();
    assert_eq!(h.get::<u8>(&out), [1, 0, 0, 0]);
}

#[test]
fn where_selects_with_array_and_scalar_masks() {
    let mut h = Harness::new();
    let m = h.put(DType::Bool, &[true, false, true]);
    let a = h.put(DType::Int16, &[1i16, 2, 3]);
    let out = h.zeros(DType::Int16, &[3]);
    let out2 = h.zeros(DType::Int16, &[3]);
    h.push(Instr::new(
        Opcode::Where,
        out.clone(),
        [m.into(), a.clone().into(), Scalar::Int16(-9).into()],
    ));
    h.push(Instr::new(
        Opcode::Where,
        out2.clone(),
        [
            Scalar::Bool(false).into(),
            a.into(),
            Scalar::Int16(7).into(),
        ],
    ));
    h.ok();
    assert_eq!(h.get::<i16>(&out), [1, -9, 3]);
    assert_eq!(h.get::<i16>(&out2), [7, 7, 7]);
}

#[test]
fn arctan2_and_hypot_handle_signs_and_infinities() {
    let inf = f64::INFINITY;
    let pi = std::f64::consts::PI;
    for t in TypeSet::FLOAT.iter() {
        let got = eval(
            Opcode::Arctan2,
            t,
            &[&[0.0, -0.0, 1.0, -1.0], &[-1.0, -1.0, 0.0, -inf]],
        );
        let want = [pi, -pi, pi / 2.0, -pi].map(|v| round_to(t, v));
        assert_close(&got, &want, tolerance(t), "arctan2");
        assert_same(
            &eval(Opcode::Hypot, t, &[&[3.0, inf], &[4.0, f64::NAN]]),
            &[5.0, inf],
            "hypot",
        );
    }
}

#[test]
fn nextafter_steps_to_the_neighbouring_float_as_numpy_does() {
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    for t in TypeSet::FLOAT.iter() {
        let (digits, emin, emax) = float_format(t);
        let ulp_one = 2f64.powi(1 - digits);
        let tiny = 2f64.powi(emin) * 2f64.powi(1 - digits);
        let least_normal = 2f64.powi(emin);
        let max = (2.0 - ulp_one) * 2f64.powi(emax);
        // NumPy's float16 loop keeps x1 where the operands are equal; C's nextafter (the
        // float32 and float64 loops) gives x2, so 0.0 towards -0.0 differs in sign.
        let equal_zeros = if t == DType::Float16 {
            [0.0, -0.0]
        } else {
            [-0.0, 0.0]
        };
        let cases = [
            (0.0, -0.0, equal_zeros[0]),
            (-0.0, 0.0, equal_zeros[1]),
            (3.0, 3.0, 3.0),
            (0.0, -1.0, -tiny),
            (-0.0, inf, tiny),
            (1.0, 2.0, 1.0 + ulp_one),
            (1.0, 0.0, 1.0 - ulp_one / 2.0),
            (-1.0, -inf, -1.0 - ulp_one),
            (-2.0, 5.0, -2.0 + ulp_one),
            (tiny, 0.0, 0.0),
            (-tiny, -1.0, -2.0 * tiny),
            (-tiny, 1.0, -0.0),
            (least_normal, 0.0, least_normal - tiny),
            (least_normal - tiny, 1.0, least_normal),
            (max, inf, inf),
            (-max, -inf, -inf),
            (max, 0.0, max - ulp_one * 2f64.powi(emax)),
            (inf, 0.0, max),
            (-inf, 0.0, -max),
            (inf, inf, inf),
            (nan, 1.0, nan),
            (1.0, nan, nan),
        ];
        let a: Vec<f64> = cases.iter().map(|c| c.0).collect();
        let b: Vec<f64> = cases.iter().map(|c| c.1).collect();
        let want: Vec<f64> = cases.iter().map(|c| c.2).collect();
        let got = eval(Opcode::Nextafter, t, &[&a, &b]);
        assert_same(&got, &want, &format!("nextafter on {}", t.name()));
    }
    // NumPy's float16 loop has one NaN, whatever the operands' NaNs are.
    let mut h = Harness::new();
    let nans = [half::f16::from_bits(0xfe01), half::f16::from_bits(0x7c01)];
    let a = h.put(DType::Float16, &nans);
    let out = h.zeros(DType::Float16, &[2]);
    h.push(Instr::new(
        Opcode::Nextafter,
        out.clone(),
        [a.into(), Scalar::Float16(half::f16::ONE).into()],
    ));
    h.ok();
    let bits: Vec<u16> = h
        .get::<half::f16>(&out)
        .iter()
        .map(|v| v.to_bits())
        .collect();
    assert_eq!(bits, [0x7e00, 0x7e00]);
}

#[test]
fn a_verify_failure_is_an_error_naming_the_instruction() {
    let mut h = Harness::new();
    let a = h.put(DType::Int32, &[1i32, 2]);
    let out = h.zeros(DType::Int32, &[2]);
    h.push(Instr::new(Opcode::Sqrt, out, [a.into()]));
    let e = h.run().unwrap_err().to_string();
    assert!(e.contains("instruction 0 (sqrt)"), "{e}");
}
