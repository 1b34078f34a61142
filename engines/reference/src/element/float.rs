//! The binary floats `f32` and `f64`, one macro for both.

use super::{compare_ordered, pairwise, unsupported, CastVal, Elem};
use hassium_core::{DType, Opcode, Result};

/// IEEE floats with NumPy's rules where C and NumPy differ (floor_divide/remainder,
/// NaN-propagating maximum/minimum, sign of zero and NaN).
macro_rules! float_elem {
    ($t:ident, $dt:ident) => {
        impl Elem for $t {
            const DTYPE: DType = DType::$dt;
            type Real = $t;

            fn to_cast(self) -> CastVal {
                CastVal::Float(self as f64)
            }
            fn from_cast(v: CastVal) -> $t {
                match v {
                    CastVal::Bool(b) => b as u8 as $t,
                    CastVal::Int(i) => i as $t,
                    CastVal::UInt(u) => u as $t,
                    CastVal::Float(f) | CastVal::Complex(f, _) => f as $t,
                }
            }
            fn is_nonzero(self) -> bool {
                self != 0.0
            }
            fn is_nan(self) -> bool {
                $t::is_nan(self)
            }
            fn unary(op: Opcode, a: $t) -> Result<$t> {
                /// C's `frexp` exponent, from the bits (a subnormal scaled up first).
                fn frexp_exponent(a: $t) -> $t {
                    if a == 0.0 || !a.is_finite() {
                        return 0.0;
                    }
                    let p = <$t>::MANTISSA_DIGITS as i32;
                    let (m, shift) = if a.abs() < <$t>::MIN_POSITIVE {
                        (a.abs() * (2.0 as $t).powi(p), p)
                    } else {
                        (a.abs(), 0)
                    };
                    let biased = (m.to_bits() >> (p - 1)) as i32;
                    (biased - (<$t>::MAX_EXP - 2) - shift) as $t
                }
                Ok(match op {
                    Opcode::FrexpExponent => frexp_exponent(a),
                    Opcode::Negative => -a,
                    Opcode::Positive | Opcode::Conj => a,
                    // NumPy: NaN stays NaN, both zeros give +0.
                    Opcode::Sign => {
                        if a > 0.0 {
                            1.0
                        } else if a < 0.0 {
                            -1.0
                        } else if a == 0.0 {
                            0.0
                        } else {
                            a
                        }
                    }
                    Opcode::Sqrt => a.sqrt(),
                    Opcode::Cbrt => a.cbrt(),
                    Opcode::Square => a * a,
                    Opcode::Reciprocal => 1.0 / a,
                    Opcode::Exp => a.exp(),
                    Opcode::Exp2 => a.exp2(),
                    Opcode::Expm1 => a.exp_m1(),
                    Opcode::Log => a.ln(),
                    Opcode::Log2 => a.log2(),
                    Opcode::Log10 => a.log10(),
                    Opcode::Log1p => a.ln_1p(),
                    Opcode::Sin => a.sin(),
                    Opcode::Cos => a.cos(),
                    Opcode::Tan => a.tan(),
                    Opcode::Arcsin => a.asin(),
                    Opcode::Arccos => a.acos(),
                    Opcode::Arctan => a.atan(),
                    Opcode::Sinh => a.sinh(),
                    Opcode::Cosh => a.cosh(),
                    Opcode::Tanh => a.tanh(),
                    Opcode::Arcsinh => a.asinh(),
                    Opcode::Arccosh => a.acosh(),
                    Opcode::Arctanh => a.atanh(),
                    Opcode::Floor => a.floor(),
                    Opcode::Ceil => a.ceil(),
                    Opcode::Trunc => a.trunc(),
                    Opcode::Rint => a.round_ties_even(),
                    _ => return unsupported(op, DType::$dt),
                })
            }
            #[inline]
            fn binary(op: Opcode, a: $t, b: $t) -> Result<$t> {
                /// NumPy's `npy_divmod`: fmod, then moved to the divisor's sign, with
                /// the quotient snapped to the nearest integer.
                fn divmod(a: $t, b: $t) -> ($t, $t) {
                    let m = a % b;
                    if b == 0.0 {
                        return (a / b, m);
                    }
                    let mut div = (a - m) / b;
                    let mut m = m;
                    if m != 0.0 {
                        if (b < 0.0) != (m < 0.0) {
                            m += b;
                            div -= 1.0;
                        }
                    } else {
                        m = (0.0 as $t).copysign(b);
                    }
                    let floordiv = if div != 0.0 {
                        let f = div.floor();
                        if div - f > 0.5 {
                            f + 1.0
                        } else {
                            f
                        }
                    } else {
                        (0.0 as $t).copysign(a / b)
                    };
                    (floordiv, m)
                }
                /// C's `nextafter` (NumPy's float and double loops call it): `b` when the
                /// two are equal (0.0 towards -0.0 is -0.0), from a zero the smallest
                /// subnormal with `b`'s sign, else the neighbour of `a` towards `b`: one up
                /// in `a`'s magnitude bits away from zero (the largest finite value steps
                /// to infinity), one down towards it. A NaN comes out of `a + b`, as
                /// glibc's, so it keeps the NaN operand's sign.
                fn next_toward(a: $t, b: $t) -> $t {
                    if a.is_nan() || b.is_nan() {
                        return a + b;
                    }
                    if a == b {
                        return b;
                    }
                    if a == 0.0 {
                        return <$t>::from_bits(1).copysign(b);
                    }
                    let bits = a.to_bits();
                    <$t>::from_bits(if (b > a) == (a > 0.0) {
                        bits + 1
                    } else {
                        bits - 1
                    })
                }
                /// musl's `scalbn`: x * 2**n rounded once. Out-of-range n scales in
                /// steps; towards the subnormals the last step is kept below -p so the
                /// one rounding happens there.
                fn scalbn(x: $t, mut n: i32) -> $t {
                    let (emax, emin) = (<$t>::MAX_EXP - 1, <$t>::MIN_EXP - 1);
                    let p = <$t>::MANTISSA_DIGITS as i32;
                    let two = |e: i32| (2.0 as $t).powi(e);
                    let mut y = x;
                    if n > emax {
                        for _ in 0..2 {
                            if n > emax {
                                y *= two(emax);
                                n -= emax;
                            }
                        }
                        n = n.min(emax);
                    } else if n < emin {
                        for _ in 0..2 {
                            if n < emin {
                                y *= two(emin + p);
                                n -= emin + p;
                            }
                        }
                        n = n.max(emin);
                    }
                    y * two(n)
                }
                Ok(match op {
                    // The exponent as the table says: truncated, clamped, NaN as -10000.
                    Opcode::Ldexp => scalbn(a, b.max(-10000.0).min(10000.0) as i32),
                    Opcode::Add => a + b,
                    Opcode::Subtract => a - b,
                    Opcode::Multiply => a * b,
                    Opcode::Divide => a / b,
                    Opcode::FloorDivide => {
                        if b == 0.0 {
                            a / b
                        } else {
                            divmod(a, b).0
                        }
                    }
                    Opcode::Remainder => {
                        if b == 0.0 {
                            a % b
                        } else {
                            divmod(a, b).1
                        }
                    }
                    Opcode::Power => a.powf(b),
                    // maximum/minimum propagate NaN (either side) and give the second
                    // operand on ties (so maximum(-0.0, 0.0) is 0.0, as NumPy); fmax/fmin
                    // ignore NaN and give the first operand on ties (C's fmax).
                    Opcode::Maximum => {
                        if a > b || a.is_nan() {
                            a
                        } else {
                            b
                        }
                    }
                    Opcode::Minimum => {
                        if a < b || a.is_nan() {
                            a
                        } else {
                            b
                        }
                    }
                    Opcode::Fmax => {
                        if b.is_nan() || a >= b {
                            a
                        } else {
                            b
                        }
                    }
                    Opcode::Fmin => {
                        if b.is_nan() || a <= b {
                            a
                        } else {
                            b
                        }
                    }
                    Opcode::Arctan2 => a.atan2(b),
                    Opcode::Hypot => a.hypot(b),
                    // Rust's `%` on floats is C's fmod (exact, NaN for a zero divisor).
                    Opcode::Fmod => a % b,
                    Opcode::Copysign => a.copysign(b),
                    Opcode::Nextafter => next_toward(a, b),
                    _ => return unsupported(op, DType::$dt),
                })
            }
            fn to_real(op: Opcode, a: $t) -> Result<$t> {
                match op {
                    Opcode::Absolute => Ok(a.abs()),
                    Opcode::Real => Ok(a),
                    Opcode::Imag => Ok(0.0),
                    _ => unsupported(op, DType::$dt),
                }
            }
            fn compare(op: Opcode, a: $t, b: $t) -> Result<bool> {
                compare_ordered(op, a, b, DType::$dt)
            }
            fn classify(op: Opcode, a: $t) -> Result<bool> {
                match op {
                    Opcode::IsNan => Ok(a.is_nan()),
                    Opcode::IsInf => Ok(a.is_infinite()),
                    Opcode::IsFinite => Ok(a.is_finite()),
                    Opcode::Signbit => Ok(a.is_sign_negative()),
                    _ => unsupported(op, DType::$dt),
                }
            }
            fn sum(values: &[$t]) -> Result<$t> {
                // NumPy starts from the identity, so a sum of negative zeros is +0.0.
                Ok(if values.is_empty() {
                    0.0
                } else {
                    0.0 + pairwise(values, &|x, y| x + y)
                })
            }
        }
    };
}

float_elem!(f32, Float32);
float_elem!(f64, Float64);
