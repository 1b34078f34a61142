//! Typed scalar constants carried by instructions.

use crate::DType;
use half::f16;
use serde::{Deserialize, Serialize};

/// A constant operand. Its dtype is part of the canonical key; its value is not (values
/// are lifted into argument slots so a changing time step does not recompile).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum Scalar {
    Bool(bool),
    Int8(i8),
    Int16(i16),
    Int32(i32),
    Int64(i64),
    UInt8(u8),
    UInt16(u16),
    UInt32(u32),
    UInt64(u64),
    Float16(f16),
    Float32(f32),
    Float64(f64),
    Complex64(f32, f32),
    Complex128(f64, f64),
}

impl Scalar {
    pub fn dtype(&self) -> DType {
        match self {
            Scalar::Bool(_) => DType::Bool,
            Scalar::Int8(_) => DType::Int8,
            Scalar::Int16(_) => DType::Int16,
            Scalar::Int32(_) => DType::Int32,
            Scalar::Int64(_) => DType::Int64,
            Scalar::UInt8(_) => DType::UInt8,
            Scalar::UInt16(_) => DType::UInt16,
            Scalar::UInt32(_) => DType::UInt32,
            Scalar::UInt64(_) => DType::UInt64,
            Scalar::Float16(_) => DType::Float16,
            Scalar::Float32(_) => DType::Float32,
            Scalar::Float64(_) => DType::Float64,
            Scalar::Complex64(..) => DType::Complex64,
            Scalar::Complex128(..) => DType::Complex128,
        }
    }

    /// The value as (real, imaginary) doubles; exact for every type except 64-bit integers
    /// beyond 2^53 (use [`Scalar::as_i128`] for those).
    pub fn as_c128(&self) -> (f64, f64) {
        match *self {
            Scalar::Complex64(r, i) => (r as f64, i as f64),
            Scalar::Complex128(r, i) => (r, i),
            Scalar::Float16(v) => (v.to_f64(), 0.0),
            Scalar::Float32(v) => (v as f64, 0.0),
            Scalar::Float64(v) => (v, 0.0),
            _ => (self.as_i128().unwrap_or(0) as f64, 0.0),
        }
    }

    pub fn as_f64(&self) -> f64 {
        self.as_c128().0
    }

    /// The exact integer value of a bool or integer scalar.
    pub fn as_i128(&self) -> Option<i128> {
        Some(match *self {
            Scalar::Bool(v) => v as i128,
            Scalar::Int8(v) => v as i128,
            Scalar::Int16(v) => v as i128,
            Scalar::Int32(v) => v as i128,
            Scalar::Int64(v) => v as i128,
            Scalar::UInt8(v) => v as i128,
            Scalar::UInt16(v) => v as i128,
            Scalar::UInt32(v) => v as i128,
            Scalar::UInt64(v) => v as i128,
            _ => return None,
        })
    }

    /// Converts to another dtype the way NumPy's `astype` does for in-range values:
    /// integers wrap, floats truncate toward zero into integers (saturating where NumPy is
    /// undefined), complex drops the imaginary part into reals, anything nonzero is `true`.
    pub fn cast(&self, to: DType) -> Scalar {
        if self.dtype() == to {
            return *self;
        }
        let int = match self.as_i128() {
            Some(i) => i,
            None => {
                let (r, im) = self.as_c128();
                if to == DType::Bool {
                    return Scalar::Bool(r != 0.0 || im != 0.0);
                }
                match to {
                    DType::Float16 => return Scalar::Float16(f16::from_f64(r)),
                    DType::Float32 => return Scalar::Float32(r as f32),
                    DType::Float64 => return Scalar::Float64(r),
                    DType::Complex64 => return Scalar::Complex64(r as f32, im as f32),
                    DType::Complex128 => return Scalar::Complex128(r, im),
                    // Float → integer: as the kernels convert (see `float_to_int`).
                    _ => float_to_int(r, to),
                }
            }
        };
        match to {
            DType::Bool => Scalar::Bool(int != 0),
            DType::Int8 => Scalar::Int8(int as i8),
            DType::Int16 => Scalar::Int16(int as i16),
            DType::Int32 => Scalar::Int32(int as i32),
            DType::Int64 => Scalar::Int64(int as i64),
            DType::UInt8 => Scalar::UInt8(int as u8),
            DType::UInt16 => Scalar::UInt16(int as u16),
            DType::UInt32 => Scalar::UInt32(int as u32),
            DType::UInt64 => Scalar::UInt64(int as u64),
            DType::Float16 => Scalar::Float16(f16::from_f64(int as f64)),
            DType::Float32 => Scalar::Float32(int as f32),
            DType::Float64 => Scalar::Float64(int as f64),
            DType::Complex64 => Scalar::Complex64(int as f32, 0.0),
            DType::Complex128 => Scalar::Complex128(int as f64, 0.0),
        }
    }

    /// The value's little-endian bytes, exactly `dtype().size()` of them: the form in
    /// which scalars are passed to compiled kernels.
    pub fn to_le_bytes(&self) -> [u8; 16] {
        let mut out = [0u8; 16];
        let mut put = |b: &[u8]| out[..b.len()].copy_from_slice(b);
        match *self {
            Scalar::Bool(v) => put(&[v as u8]),
            Scalar::Int8(v) => put(&v.to_le_bytes()),
            Scalar::Int16(v) => put(&v.to_le_bytes()),
            Scalar::Int32(v) => put(&v.to_le_bytes()),
            Scalar::Int64(v) => put(&v.to_le_bytes()),
            Scalar::UInt8(v) => put(&v.to_le_bytes()),
            Scalar::UInt16(v) => put(&v.to_le_bytes()),
            Scalar::UInt32(v) => put(&v.to_le_bytes()),
            Scalar::UInt64(v) => put(&v.to_le_bytes()),
            Scalar::Float16(v) => put(&v.to_le_bytes()),
            Scalar::Float32(v) => put(&v.to_le_bytes()),
            Scalar::Float64(v) => put(&v.to_le_bytes()),
            Scalar::Complex64(r, i) => {
                put(&r.to_le_bytes());
                out[4..8].copy_from_slice(&i.to_le_bytes());
            }
            Scalar::Complex128(r, i) => {
                put(&r.to_le_bytes());
                out[8..16].copy_from_slice(&i.to_le_bytes());
            }
        }
        out
    }

    /// Reads a scalar of `dtype` from little-endian bytes (at least `dtype.size()` long).
    pub fn from_le_bytes(dtype: DType, b: &[u8]) -> Option<Scalar> {
        if b.len() < dtype.size() {
            return None;
        }
        let a2 = |o: usize| [b[o], b[o + 1]];
        let a4 = |o: usize| [b[o], b[o + 1], b[o + 2], b[o + 3]];
        let a8 = |o: usize| {
            let mut x = [0u8; 8];
            x.copy_from_slice(&b[o..o + 8]);
            x
        };
        Some(match dtype {
            DType::Bool => Scalar::Bool(b[0] != 0),
            DType::Int8 => Scalar::Int8(b[0] as i8),
            DType::Int16 => Scalar::Int16(i16::from_le_bytes(a2(0))),
            DType::Int32 => Scalar::Int32(i32::from_le_bytes(a4(0))),
            DType::Int64 => Scalar::Int64(i64::from_le_bytes(a8(0))),
            DType::UInt8 => Scalar::UInt8(b[0]),
            DType::UInt16 => Scalar::UInt16(u16::from_le_bytes(a2(0))),
            DType::UInt32 => Scalar::UInt32(u32::from_le_bytes(a4(0))),
            DType::UInt64 => Scalar::UInt64(u64::from_le_bytes(a8(0))),
            DType::Float16 => Scalar::Float16(f16::from_le_bytes(a2(0))),
            DType::Float32 => Scalar::Float32(f32::from_le_bytes(a4(0))),
            DType::Float64 => Scalar::Float64(f64::from_le_bytes(a8(0))),
            DType::Complex64 => {
                Scalar::Complex64(f32::from_le_bytes(a4(0)), f32::from_le_bytes(a4(4)))
            }
            DType::Complex128 => {
                Scalar::Complex128(f64::from_le_bytes(a8(0)), f64::from_le_bytes(a8(8)))
            }
        })
    }

    /// Zero of a dtype.
    pub fn zero(dtype: DType) -> Scalar {
        Scalar::Int64(0).cast(dtype)
    }

    /// One of a dtype.
    pub fn one(dtype: DType) -> Scalar {
        Scalar::Int64(1).cast(dtype)
    }

    /// True when the value is exactly zero (for floats, either signed zero).
    pub fn is_zero(&self) -> bool {
        match self.as_i128() {
            Some(i) => i == 0,
            None => self.as_c128() == (0.0, 0.0),
        }
    }

    /// True when the value is exactly one.
    pub fn is_one(&self) -> bool {
        match self.as_i128() {
            Some(i) => i == 1,
            None => self.as_c128() == (1.0, 0.0),
        }
    }
}

/// A float converted to integer dtype `to` as NumPy's loops convert on x86-64, the value
/// returned in `to`'s range. C (and so NumPy) leaves NaN, infinities and values outside
/// the target's range undefined; on x86-64 NumPy gets this, which every engine and tier
/// reproduces so that results do not depend on which of them ran a kernel:
/// - 8, 16 and 32-bit targets: truncation toward zero into int32, then wrapped into the
///   target (`300.7 → int8` is 44); NaN and values outside int32 give INT32_MIN first
///   (`3e10 → int32` is -2147483648, `→ int16` is 0);
/// - int64: truncation, INT64_MIN for NaN and values outside int64;
/// - uint32 and uint64: values at or above 2^31 (2^63) have that subtracted first and the
///   top bit set again after; the rest convert as int32 (int64) and wrap (`-1.0 → uint32`
///   is 2^32-1).
///
/// `to` must be an integer dtype (anything else gives 0).
pub fn float_to_int(x: f64, to: DType) -> i128 {
    const P31: f64 = 2147483648.0;
    const P63: f64 = 9223372036854775808.0;
    let i32_of = |x: f64| -> i32 {
        if x > -P31 - 1.0 && x < P31 {
            x as i32
        } else {
            i32::MIN
        }
    };
    let i64_of = |x: f64| -> i64 {
        if (-P63..P63).contains(&x) {
            x as i64
        } else {
            i64::MIN
        }
    };
    match to {
        DType::Int8 => i32_of(x) as i8 as i128,
        DType::Int16 => i32_of(x) as i16 as i128,
        DType::Int32 => i32_of(x) as i128,
        DType::UInt8 => i32_of(x) as u8 as i128,
        DType::UInt16 => i32_of(x) as u16 as i128,
        DType::Int64 => i64_of(x) as i128,
        DType::UInt32 if x >= P31 => ((i32_of(x - P31) as u32) ^ 0x8000_0000) as i128,
        DType::UInt32 => i32_of(x) as u32 as i128,
        DType::UInt64 if x >= P63 => ((i64_of(x - P63) as u64) ^ (1 << 63)) as i128,
        DType::UInt64 => i64_of(x) as u64 as i128,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_round_trip_for_every_dtype() {
        for d in DType::ALL {
            let s = Scalar::Int64(3).cast(d);
            let b = s.to_le_bytes();
            assert_eq!(Scalar::from_le_bytes(d, &b), Some(s), "{d:?}");
        }
    }

    #[test]
    fn casts_follow_numpy() {
        assert_eq!(Scalar::Int64(300).cast(DType::UInt8), Scalar::UInt8(44));
        assert_eq!(Scalar::Float64(-2.7).cast(DType::Int32), Scalar::Int32(-2));
        assert_eq!(Scalar::Float64(0.5).cast(DType::Bool), Scalar::Bool(true));
        assert_eq!(
            Scalar::Complex128(1.5, 2.0).cast(DType::Float64),
            Scalar::Float64(1.5)
        );
    }

    /// NumPy's results on x86-64 (NumPy 2, AVX2), float64 source: NaN, infinities and
    /// values outside each target's range included.
    #[test]
    fn float_to_int_reproduces_numpy_on_x86_64_out_of_range_too() {
        let p63 = 9223372036854775808.0;
        let xs = [
            0.5,
            -1.7,
            3e10,
            -3e10,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            300.7,
            -129.5,
            65536.5,
            p63,
            -p63,
            2.0 * p63,
            1e19,
            2147483648.0,
            -2147483648.5,
            4294967301.0,
            4e9,
            1.5e19,
            -p63 - 4096.0,
        ];
        let m31 = -2147483648;
        let m63 = i64::MIN as i128;
        let table: [(DType, [i128; 20]); 8] = [
            (
                DType::Int8,
                [
                    0, -1, 0, 0, 0, 0, 0, 44, 127, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                ],
            ),
            (
                DType::Int16,
                [
                    0, -1, 0, 0, 0, 0, 0, 300, -129, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                ],
            ),
            (
                DType::Int32,
                [
                    0, -1, m31, m31, m31, m31, m31, 300, -129, 65536, m31, m31, m31, m31, m31, m31,
                    m31, m31, m31, m31,
                ],
            ),
            (
                DType::Int64,
                [
                    0,
                    -1,
                    30000000000,
                    -30000000000,
                    m63,
                    m63,
                    m63,
                    300,
                    -129,
                    65536,
                    m63,
                    m63,
                    m63,
                    m63,
                    2147483648,
                    -2147483648,
                    4294967301,
                    4000000000,
                    m63,
                    m63,
                ],
            ),
            (
                DType::UInt8,
                [
                    0, 255, 0, 0, 0, 0, 0, 44, 127, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                ],
            ),
            (
                DType::UInt16,
                [
                    0, 65535, 0, 0, 0, 0, 0, 300, 65407, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                ],
            ),
            (
                DType::UInt32,
                [
                    0, 4294967295, 0, 2147483648, 2147483648, 0, 2147483648, 300, 4294967167,
                    65536, 0, 2147483648, 0, 0, 2147483648, 2147483648, 0, 4000000000, 0,
                    2147483648,
                ],
            ),
            (
                DType::UInt64,
                [
                    0,
                    18446744073709551615,
                    30000000000,
                    18446744043709551616,
                    9223372036854775808,
                    0,
                    9223372036854775808,
                    300,
                    18446744073709551487,
                    65536,
                    9223372036854775808,
                    9223372036854775808,
                    0,
                    10000000000000000000,
                    2147483648,
                    18446744071562067968,
                    4294967301,
                    4000000000,
                    15000000000000000000,
                    9223372036854775808,
                ],
            ),
        ];
        for (to, want) in table {
            for (x, w) in xs.iter().zip(want) {
                assert_eq!(float_to_int(*x, to), w, "{x} -> {to:?}");
                assert_eq!(
                    Scalar::Float64(*x).cast(to).as_i128(),
                    Some(w),
                    "{x} -> {to:?}"
                );
            }
        }
    }
}
