//! `identity` casts with NumPy's astype semantics, between every pair of dtypes.

mod common;
use common::*;
use half::f16;
use hassium_core::{DType, Instr, Opcode};
use num_complex::Complex;

fn cast_f64(from: DType, to: DType, values: &[f64]) -> Vec<f64> {
    let mut h = Harness::new();
    let a = h.put_f64(from, values);
    let out = h.zeros(to, &[values.len()]);
    h.push(Instr::new(Opcode::Identity, out.clone(), [a.into()]));
    h.ok();
    h.get_f64(&out)
}

#[test]
fn small_integers_survive_every_cast_pair() {
    for from in DType::ALL {
        for to in DType::ALL {
            let vals: Vec<f64> = if from.is_bool() || to.is_bool() {
                vec![0.0, 1.0]
            } else {
                vec![0.0, 1.0, 7.0, 100.0]
            };
            assert_same(
                &cast_f64(from, to, &vals),
                &vals,
                &format!("{} -> {}", from.name(), to.name()),
            );
        }
    }
}

#[test]
fn float_to_int_truncates_toward_zero_and_wraps_like_numpy() {
    let vals = [-2.7, 2.7, -0.5, 300.0, -1.0, 1e3];
    assert_same(
        &cast_f64(DType::Float64, DType::Int32, &vals),
        &[-2.0, 2.0, 0.0, 300.0, -1.0, 1000.0],
        "i32",
    );
    assert_same(
        &cast_f64(DType::Float64, DType::UInt8, &vals),
        &[254.0, 2.0, 0.0, 44.0, 255.0, 232.0],
        "u8",
    );
    assert_same(
        &cast_f64(DType::Float32, DType::Int8, &[-128.9, 127.9]),
        &[-128.0, 127.0],
        "i8",
    );
    let mut h = Harness::new();
    let a = h.put(DType::Float64, &[-1.0f64, 1e20, f64::NAN, 1.8e19, -1e20]);
    let u = h.zeros(DType::UInt64, &[5]);
    let i = h.zeros(DType::Int64, &[5]);
    h.push(Instr::new(Opcode::Identity, u.clone(), [a.clone().into()]));
    h.push(Instr::new(Opcode::Identity, i.clone(), [a.into()]));
    h.ok();
    // NumPy's values on x86-64: -1.0 wraps; NaN and what int64 cannot hold give INT64_MIN,
    // into uint64 after taking 2^63 off values above int64 (so 1e20 gives 0).
    assert_eq!(
        h.get::<u64>(&u),
        [u64::MAX, 0, 1 << 63, 18_000_000_000_000_000_000, 1 << 63]
    );
    assert_eq!(
        h.get::<i64>(&i),
        [-1, i64::MIN, i64::MIN, i64::MIN, i64::MIN]
    );
}

#[test]
fn integer_casts_wrap_and_bool_is_nonzero() {
    assert_same(
        &cast_f64(DType::Int64, DType::UInt8, &[300.0, -1.0]),
        &[44.0, 255.0],
        "i64->u8",
    );
    assert_same(
        &cast_f64(DType::UInt16, DType::Int8, &[200.0, 65535.0]),
        &[-56.0, -1.0],
        "u16->i8",
    );
    assert_same(
        &cast_f64(DType::Int32, DType::Bool, &[0.0, -5.0, 256.0]),
        &[0.0, 1.0, 1.0],
        "i32->bool",
    );
    assert_same(
        &cast_f64(DType::Float64, DType::Bool, &[0.0, -0.0, f64::NAN, 0.1]),
        &[0.0, 0.0, 1.0, 1.0],
        "f->bool",
    );
    assert_same(
        &cast_f64(DType::Bool, DType::Float64, &[1.0, 0.0]),
        &[1.0, 0.0],
        "bool->f64",
    );
    let mut h = Harness::new();
    let a = h.put(DType::UInt64, &[u64::MAX, 1u64 << 63]);
    let i = h.zeros(DType::Int64, &[2]);
    let f = h.zeros(DType::Float32, &[2]);
    h.push(Instr::new(Opcode::Identity, i.clone(), [a.clone().into()]));
    h.push(Instr::new(Opcode::Identity, f.clone(), [a.into()]));
    h.ok();
    assert_eq!(h.get::<i64>(&i), [-1, i64::MIN]);
    assert_eq!(h.get::<f32>(&f), [u64::MAX as f32, 9.223372e18]);
}

#[test]
fn complex_to_real_drops_the_imaginary_part() {
    let mut h = Harness::new();
    let z = h.put(
        DType::Complex128,
        &[
            Complex::new(1.5f64, 2.0),
            Complex::new(-2.5, 9.0),
            Complex::new(0.0, 3.0),
        ],
    );
    let f = h.zeros(DType::Float32, &[3]);
    let i = h.zeros(DType::Int16, &[3]);
    let b = h.zeros(DType::Bool, &[3]);
    let c = h.zeros(DType::Complex64, &[3]);
    for out in [&f, &i, &b, &c] {
        h.push(Instr::new(
            Opcode::Identity,
            out.clone(),
            [z.clone().into()],
        ));
    }
    h.ok();
    assert_eq!(h.get::<f32>(&f), [1.5, -2.5, 0.0]);
    assert_eq!(h.get::<i16>(&i), [1, -2, 0]);
    assert_eq!(
        h.get::<u8>(&b),
        [1, 1, 1],
        "a nonzero imaginary part is true"
    );
    assert_eq!(
        h.get::<Complex<f32>>(&c),
        [
            Complex::new(1.5, 2.0),
            Complex::new(-2.5, 9.0),
            Complex::new(0.0, 3.0)
        ]
    );
}

#[test]
fn casts_to_float16_round_once_to_nearest_even() {
    let mut h = Harness::new();
    // 2049 is halfway between f16 2048 and 2050: ties to even gives 2048.
    let a = h.put(DType::Int32, &[2049i32, 2051, 70000, -3]);
    let d = h.put(DType::Float64, &[0.1f64, 65520.0, 1e-8]);
    let ha = h.zeros(DType::Float16, &[4]);
    let hd = h.zeros(DType::Float16, &[3]);
    h.push(Instr::new(Opcode::Identity, ha.clone(), [a.into()]));
    h.push(Instr::new(Opcode::Identity, hd.clone(), [d.into()]));
    h.ok();
    let f = f16::from_f32;
    assert_eq!(
        h.get::<f16>(&ha),
        [f(2048.0), f(2052.0), f16::INFINITY, f(-3.0)]
    );
    assert_eq!(
        h.get::<f16>(&hd),
        [f16::from_f64(0.1), f16::INFINITY, f16::from_f64(1e-8)]
    );
}
