//! `f16`: computed in `f32` and rounded once, with its own `nextafter`.

use super::{compare_ordered, unsupported, CastVal, Elem};
use half::f16;
use hassium_core::{DType, Opcode, Result};

/// float16 computes every operation in f32 and rounds the result once, as NumPy's half
/// loops do (reductions and matmul accumulate in f32 and round at the end).
impl Elem for f16 {
    const DTYPE: DType = DType::Float16;
    type Real = f16;

    fn to_cast(self) -> CastVal {
        CastVal::Float(self.to_f64())
    }
    fn from_cast(v: CastVal) -> f16 {
        match v {
            CastVal::Bool(b) => f16::from_f32(b as u8 as f32),
            CastVal::Int(i) => f16::from_f64(i as f64),
            CastVal::UInt(u) => f16::from_f64(u as f64),
            CastVal::Float(f) | CastVal::Complex(f, _) => f16::from_f64(f),
        }
    }
    fn is_nonzero(self) -> bool {
        self.to_f32() != 0.0
    }
    fn is_nan(self) -> bool {
        f16::is_nan(self)
    }
    fn unary(op: Opcode, a: f16) -> Result<f16> {
        match <f32 as Elem>::unary(op, a.to_f32()) {
            Ok(v) => Ok(f16::from_f32(v)),
            Err(_) => unsupported(op, DType::Float16),
        }
    }
    fn binary(op: Opcode, a: f16, b: f16) -> Result<f16> {
        // A float16 neighbour is not a float32 one rounded.
        if op == Opcode::Nextafter {
            return Ok(f16_next_toward(a, b));
        }
        match <f32 as Elem>::binary(op, a.to_f32(), b.to_f32()) {
            Ok(v) => Ok(f16::from_f32(v)),
            Err(_) => unsupported(op, DType::Float16),
        }
    }
    fn to_real(op: Opcode, a: f16) -> Result<f16> {
        match op {
            Opcode::Absolute => Ok(f16::from_f32(a.to_f32().abs())),
            Opcode::Real => Ok(a),
            Opcode::Imag => Ok(f16::ZERO),
            _ => unsupported(op, DType::Float16),
        }
    }
    fn compare(op: Opcode, a: f16, b: f16) -> Result<bool> {
        compare_ordered(op, a.to_f32(), b.to_f32(), DType::Float16)
    }
    fn classify(op: Opcode, a: f16) -> Result<bool> {
        match <f32 as Elem>::classify(op, a.to_f32()) {
            Ok(v) => Ok(v),
            Err(_) => unsupported(op, DType::Float16),
        }
    }
    fn sum(values: &[f16]) -> Result<f16> {
        let wide: Vec<f32> = values.iter().map(|v| v.to_f32()).collect();
        <f32 as Elem>::sum(&wide).map(f16::from_f32)
    }
    fn dot(pairs: &[(f16, f16)]) -> Result<f16> {
        let acc = pairs
            .iter()
            .fold(0.0f32, |acc, (a, b)| acc + a.to_f32() * b.to_f32());
        Ok(f16::from_f32(acc))
    }
}

/// NumPy's `npy_half_nextafter`, which parts from C's `nextafter` (the float and double
/// loops) in two places: equal operands give `a` (0.0 towards -0.0 stays 0.0), and any NaN
/// gives the one NaN it knows, 0x7e00. Otherwise as C: from a zero the smallest subnormal
/// with `b`'s sign, else one step of `a`'s magnitude bits away from or towards zero.
fn f16_next_toward(a: f16, b: f16) -> f16 {
    if a.is_nan() || b.is_nan() {
        return f16::NAN;
    }
    if a == b {
        return a;
    }
    if a.to_f32() == 0.0 {
        return f16::from_bits((b.to_bits() & 0x8000) | 1);
    }
    let bits = a.to_bits();
    f16::from_bits(if (b > a) == (a.to_f32() > 0.0) {
        bits + 1
    } else {
        bits - 1
    })
}
