//! Signed and unsigned integers, one macro for all eight.

use super::{compare_ordered, unsupported, CastVal, Elem};
use hassium_core::{DType, Error, Opcode, Result};

/// |v| as unsigned (NumPy's `a < 0 ? -a : a` read as unsigned: |MIN| is 2**(bits-1)):
/// a negative `v` widens to i64 and negates there, wrapping only for i64::MIN.
fn magnitude<T: TryInto<i64> + TryInto<u64>>(v: T, negative: bool) -> u64 {
    if negative {
        // A negative value of a signed type of at most 64 bits always fits in i64.
        TryInto::<i64>::try_into(v).map_or(0, |i: i64| i.wrapping_neg() as u64)
    } else {
        // A non-negative value of an integer type of at most 64 bits fits in u64.
        TryInto::<u64>::try_into(v).unwrap_or(0)
    }
}

/// NumPy's `npy_gcdu`: Euclid on unsigned magnitudes.
fn gcd_u64(mut a: u64, mut b: u64) -> u64 {
    while a != 0 {
        (a, b) = (b % a, a);
    }
    b
}

/// Integer semantics (two's complement wrapping, Python's floor-division signs, NumPy's
/// shifts). `$neg` tells whether a value is negative (always false for unsigned types).
macro_rules! int_elem {
    ($t:ty, $dt:ident, $cast:ident, $neg:expr) => {
        impl Elem for $t {
            const DTYPE: DType = DType::$dt;
            type Real = $t;

            fn to_cast(self) -> CastVal {
                CastVal::$cast(self as _)
            }
            fn from_cast(v: CastVal) -> $t {
                match v {
                    CastVal::Bool(b) => b as $t,
                    CastVal::Int(i) => i as $t,
                    CastVal::UInt(u) => u as $t,
                    // As NumPy on x86-64, out of range too (see `float_to_int`).
                    CastVal::Float(f) | CastVal::Complex(f, _) => {
                        hassium_core::float_to_int(f, DType::$dt) as $t
                    }
                }
            }
            fn is_nonzero(self) -> bool {
                self != 0
            }
            fn unary(op: Opcode, a: $t) -> Result<$t> {
                let neg: fn($t) -> bool = $neg;
                Ok(match op {
                    Opcode::Negative => a.wrapping_neg(),
                    Opcode::Positive
                    | Opcode::Floor
                    | Opcode::Ceil
                    | Opcode::Trunc
                    | Opcode::Conj => a,
                    Opcode::Sign => ((a > 0) as $t).wrapping_sub(neg(a) as $t),
                    Opcode::Square => a.wrapping_mul(a),
                    // NumPy computes 1.0 / x and truncates: 1 and -1 are their own
                    // reciprocals, everything else (including 0) gives 0.
                    Opcode::Reciprocal => {
                        if a == 1 || (neg(a) && a == !0) {
                            a
                        } else {
                            0
                        }
                    }
                    Opcode::Invert => !a,
                    _ => return unsupported(op, DType::$dt),
                })
            }
            #[inline]
            fn binary(op: Opcode, a: $t, b: $t) -> Result<$t> {
                let neg: fn($t) -> bool = $neg;
                const BITS: u64 = <$t>::BITS as u64;
                Ok(match op {
                    Opcode::Add => a.wrapping_add(b),
                    Opcode::Subtract => a.wrapping_sub(b),
                    Opcode::Multiply => a.wrapping_mul(b),
                    // Division by zero gives 0 (NumPy warns and returns 0).
                    Opcode::FloorDivide => {
                        if b == 0 {
                            0
                        } else {
                            let (q, r) = (a.wrapping_div(b), a.wrapping_rem(b));
                            if r != 0 && neg(r) != neg(b) {
                                q.wrapping_sub(1)
                            } else {
                                q
                            }
                        }
                    }
                    // C's remainder (the dividend's sign); 0 for a zero divisor.
                    Opcode::Fmod => {
                        if b == 0 {
                            0
                        } else {
                            a.wrapping_rem(b)
                        }
                    }
                    // The remainder takes the divisor's sign, as in Python.
                    Opcode::Remainder => {
                        if b == 0 {
                            0
                        } else {
                            let r = a.wrapping_rem(b);
                            if r != 0 && neg(r) != neg(b) {
                                r.wrapping_add(b)
                            } else {
                                r
                            }
                        }
                    }
                    Opcode::Power => {
                        if neg(b) {
                            return Err(Error::Invalid(hassium_core::NEGATIVE_POWER.into()));
                        }
                        let (mut base, mut e, mut acc) = (a, b as u64, 1 as $t);
                        while e > 0 {
                            if e & 1 == 1 {
                                acc = acc.wrapping_mul(base);
                            }
                            base = base.wrapping_mul(base);
                            e >>= 1;
                        }
                        acc
                    }
                    Opcode::Gcd => gcd_u64(magnitude(a, neg(a)), magnitude(b, neg(b))) as $t,
                    Opcode::Lcm => {
                        let (x, y) = (magnitude(a, neg(a)), magnitude(b, neg(b)));
                        match gcd_u64(x, y) {
                            0 => 0,
                            g => (x / g).wrapping_mul(y) as $t,
                        }
                    }
                    Opcode::Maximum | Opcode::Fmax => a.max(b),
                    Opcode::Minimum | Opcode::Fmin => a.min(b),
                    Opcode::BitwiseAnd => a & b,
                    Opcode::BitwiseOr => a | b,
                    Opcode::BitwiseXor => a ^ b,
                    // NumPy (npy_lshift/npy_rshift): a count outside 0..bits (negative
                    // counts read as huge unsigned ones) shifts everything out: 0, or -1
                    // for an arithmetic right shift of a negative value.
                    Opcode::LeftShift => {
                        if (b as u64) < BITS {
                            a.wrapping_shl(b as u32)
                        } else {
                            0
                        }
                    }
                    Opcode::RightShift => {
                        if (b as u64) < BITS {
                            a.wrapping_shr(b as u32)
                        } else if neg(a) {
                            !0
                        } else {
                            0
                        }
                    }
                    _ => return unsupported(op, DType::$dt),
                })
            }
            fn to_real(op: Opcode, a: $t) -> Result<$t> {
                let neg: fn($t) -> bool = $neg;
                match op {
                    // abs(MIN) wraps to MIN, as in NumPy.
                    Opcode::Absolute => Ok(if neg(a) { a.wrapping_neg() } else { a }),
                    Opcode::Real => Ok(a),
                    Opcode::Imag => Ok(0),
                    _ => unsupported(op, DType::$dt),
                }
            }
            fn compare(op: Opcode, a: $t, b: $t) -> Result<bool> {
                compare_ordered(op, a, b, DType::$dt)
            }
        }
    };
}

int_elem!(i8, Int8, Int, |x| x < 0);
int_elem!(i16, Int16, Int, |x| x < 0);
int_elem!(i32, Int32, Int, |x| x < 0);
int_elem!(i64, Int64, Int, |x| x < 0);
int_elem!(u8, UInt8, UInt, |_| false);
int_elem!(u16, UInt16, UInt, |_| false);
int_elem!(u32, UInt32, UInt, |_| false);
int_elem!(u64, UInt64, UInt, |_| false);
