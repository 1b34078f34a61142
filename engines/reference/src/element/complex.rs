//! `complex64` and `complex128`, one macro over `num_complex::Complex<f32|f64>`.

use super::{pairwise, unsupported, CastVal, Elem};
use hassium_core::{DType, Opcode, Result};
use num_complex::Complex;

/// Complex numbers with NumPy's formulas where they are not the textbook ones (Smith's
/// division, `nc_pow`'s integer powers, NumPy 2's `sign`, `expm1`/`log1p`); the
/// transcendental functions are num-complex's principal branches.
macro_rules! complex_elem {
    ($f:ident, $dt:ident, $ops:ident) => {
        /// Complex formulas NumPy spells out itself (`npy_math_complex`, `loops.c.src`).
        mod $ops {
            use num_complex::Complex;

            /// The textbook product, no rescaling (as NumPy).
            pub(super) fn mul(a: Complex<$f>, b: Complex<$f>) -> Complex<$f> {
                Complex::new(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re)
            }

            /// Smith's division, as NumPy's complex divide loop; 0 / 0 gives NaN and
            /// x / 0 a complex infinity.
            pub(super) fn div(a: Complex<$f>, b: Complex<$f>) -> Complex<$f> {
                let (br_abs, bi_abs) = (b.re.abs(), b.im.abs());
                if br_abs >= bi_abs {
                    if br_abs == 0.0 && bi_abs == 0.0 {
                        Complex::new(a.re / br_abs, a.im / br_abs)
                    } else {
                        let rat = b.im / b.re;
                        let scl = 1.0 / (b.re + b.im * rat);
                        Complex::new((a.re + a.im * rat) * scl, (a.im - a.re * rat) * scl)
                    }
                } else {
                    let rat = b.re / b.im;
                    let scl = 1.0 / (b.im + b.re * rat);
                    Complex::new((a.re * rat + a.im) * scl, (a.im * rat - a.re) * scl)
                }
            }

            fn sqrt(re: $f, im: $f) -> Complex<$f> {
                Complex::new(re, im).sqrt()
            }

            // Inverse functions by Kahan's formulas ("Branch cuts for complex elementary
            // functions", 1987). They form 1 - z as (1 - x, -y) rather than by complex
            // subtraction, so the sign of a zero imaginary part picks the side of the
            // branch cut as C99 (and NumPy) do: arcsin(2+0j) = pi/2 + 1.3169579j.

            pub(super) fn asin(z: Complex<$f>) -> Complex<$f> {
                let (x, y) = (z.re, z.im);
                let (s1m, s1p) = (sqrt(1.0 - x, -y), sqrt(1.0 + x, y));
                Complex::new((x / (s1m * s1p).re).atan(), (s1m.conj() * s1p).im.asinh())
            }

            pub(super) fn acos(z: Complex<$f>) -> Complex<$f> {
                let (x, y) = (z.re, z.im);
                let (s1m, s1p) = (sqrt(1.0 - x, -y), sqrt(1.0 + x, y));
                Complex::new(2.0 * s1m.re.atan2(s1p.re), (s1p.conj() * s1m).im.asinh())
            }

            pub(super) fn acosh(z: Complex<$f>) -> Complex<$f> {
                let (x, y) = (z.re, z.im);
                let (sm1, sp1) = (sqrt(x - 1.0, y), sqrt(x + 1.0, y));
                Complex::new((sm1.conj() * sp1).re.asinh(), 2.0 * sm1.im.atan2(sp1.re))
            }

            /// asinh(z) = -i asin(iz).
            pub(super) fn asinh(z: Complex<$f>) -> Complex<$f> {
                let w = asin(Complex::new(-z.im, z.re));
                Complex::new(w.im, -w.re)
            }

            /// atanh(z) = (log1p(4x / ((1-x)^2 + y^2)) / 4, atan2(2y, (1-x)(1+x) - y^2) / 2),
            /// which keeps precision near 0 and the C99 signs on the cuts.
            pub(super) fn atanh(z: Complex<$f>) -> Complex<$f> {
                let (x, y) = (z.re, z.im);
                let d = (1.0 - x) * (1.0 - x) + y * y;
                Complex::new(
                    (4.0 * x / d).ln_1p() / 4.0,
                    (2.0 * y).atan2((1.0 - x) * (1.0 + x) - y * y) / 2.0,
                )
            }

            /// atan(z) = -i atanh(iz).
            pub(super) fn atan(z: Complex<$f>) -> Complex<$f> {
                let w = atanh(Complex::new(-z.im, z.re));
                Complex::new(w.im, -w.re)
            }

            /// NumPy's `nc_pow`: x**0 is 1, 0**x is 0 for real positive x and NaN
            /// otherwise, small integer exponents multiply exactly, the rest is
            /// exp(b ln a).
            pub(super) fn pow(a: Complex<$f>, b: Complex<$f>) -> Complex<$f> {
                let one = Complex::new(1.0, 0.0);
                if b.re == 0.0 && b.im == 0.0 {
                    return one;
                }
                if a.re == 0.0 && a.im == 0.0 {
                    return if b.re > 0.0 && b.im == 0.0 {
                        Complex::new(0.0, 0.0)
                    } else {
                        Complex::new($f::NAN, $f::NAN)
                    };
                }
                if b.im == 0.0 && b.re == b.re.trunc() && b.re.abs() < 100.0 {
                    let n = b.re as i64;
                    match n {
                        1 => return a,
                        2 => return mul(a, a),
                        3 => return mul(mul(a, a), a),
                        _ => {
                            let (mut e, mut p, mut acc) = (n.unsigned_abs(), a, one);
                            loop {
                                if e & 1 == 1 {
                                    acc = mul(acc, p);
                                }
                                e >>= 1;
                                if e == 0 {
                                    break;
                                }
                                p = mul(p, p);
                            }
                            return if n < 0 { div(one, acc) } else { acc };
                        }
                    }
                }
                a.powc(b)
            }
        }

        impl Elem for Complex<$f> {
            const DTYPE: DType = DType::$dt;
            type Real = $f;

            fn to_cast(self) -> CastVal {
                CastVal::Complex(self.re as f64, self.im as f64)
            }
            fn from_cast(v: CastVal) -> Complex<$f> {
                match v {
                    CastVal::Bool(b) => Complex::new(b as u8 as $f, 0.0),
                    CastVal::Int(i) => Complex::new(i as $f, 0.0),
                    CastVal::UInt(u) => Complex::new(u as $f, 0.0),
                    CastVal::Float(f) => Complex::new(f as $f, 0.0),
                    CastVal::Complex(r, i) => Complex::new(r as $f, i as $f),
                }
            }
            fn is_nonzero(self) -> bool {
                self.re != 0.0 || self.im != 0.0
            }
            fn is_nan(self) -> bool {
                self.re.is_nan() || self.im.is_nan()
            }
            fn unary(op: Opcode, a: Complex<$f>) -> Result<Complex<$f>> {
                use std::$f::consts::{LN_2, LOG10_E, LOG2_E};
                let c = Complex::new;
                Ok(match op {
                    Opcode::Negative => -a,
                    Opcode::Positive => a,
                    Opcode::Conj => a.conj(),
                    // NumPy 2: z / |z|, 0 for 0, with its rules for infinities and NaN.
                    Opcode::Sign => {
                        let abs = a.re.hypot(a.im);
                        if abs.is_nan() {
                            c($f::NAN, $f::NAN)
                        } else if abs.is_infinite() {
                            if a.re.is_infinite() {
                                if a.im.is_infinite() {
                                    c($f::NAN, $f::NAN)
                                } else {
                                    c(if a.re > 0.0 { 1.0 } else { -1.0 }, 0.0)
                                }
                            } else {
                                c(0.0, if a.im > 0.0 { 1.0 } else { -1.0 })
                            }
                        } else if abs == 0.0 {
                            c(0.0, 0.0)
                        } else {
                            c(a.re / abs, a.im / abs)
                        }
                    }
                    Opcode::Sqrt => a.sqrt(),
                    Opcode::Square => $ops::mul(a, a),
                    Opcode::Reciprocal => {
                        if a.im.abs() <= a.re.abs() {
                            let r = a.im / a.re;
                            let d = a.re + a.im * r;
                            c(1.0 / d, -r / d)
                        } else {
                            let r = a.re / a.im;
                            let d = a.re * r + a.im;
                            c(r / d, -1.0 / d)
                        }
                    }
                    Opcode::Exp => a.exp(),
                    Opcode::Exp2 => (a * LN_2).exp(),
                    Opcode::Expm1 => {
                        let h = (a.im / 2.0).sin();
                        c(
                            a.re.exp_m1() * a.im.cos() - 2.0 * h * h,
                            a.re.exp() * a.im.sin(),
                        )
                    }
                    Opcode::Log => a.ln(),
                    Opcode::Log2 => a.ln() * LOG2_E,
                    Opcode::Log10 => a.ln() * LOG10_E,
                    Opcode::Log1p => {
                        let l = (a.re + 1.0).hypot(a.im);
                        c(l.ln(), a.im.atan2(a.re + 1.0))
                    }
                    Opcode::Sin => a.sin(),
                    Opcode::Cos => a.cos(),
                    Opcode::Tan => a.tan(),
                    Opcode::Arcsin => $ops::asin(a),
                    Opcode::Arccos => $ops::acos(a),
                    Opcode::Arctan => $ops::atan(a),
                    Opcode::Sinh => a.sinh(),
                    Opcode::Cosh => a.cosh(),
                    Opcode::Tanh => a.tanh(),
                    Opcode::Arcsinh => $ops::asinh(a),
                    Opcode::Arccosh => $ops::acosh(a),
                    Opcode::Arctanh => $ops::atanh(a),
                    Opcode::Rint => c(a.re.round_ties_even(), a.im.round_ties_even()),
                    _ => return unsupported(op, DType::$dt),
                })
            }
            fn binary(op: Opcode, a: Complex<$f>, b: Complex<$f>) -> Result<Complex<$f>> {
                Ok(match op {
                    Opcode::Add => a + b,
                    Opcode::Subtract => a - b,
                    Opcode::Multiply => $ops::mul(a, b),
                    Opcode::Divide => $ops::div(a, b),
                    Opcode::Power => $ops::pow(a, b),
                    _ => return unsupported(op, DType::$dt),
                })
            }
            fn to_real(op: Opcode, a: Complex<$f>) -> Result<$f> {
                match op {
                    Opcode::Absolute => Ok(a.re.hypot(a.im)),
                    Opcode::Real => Ok(a.re),
                    Opcode::Imag => Ok(a.im),
                    _ => unsupported(op, DType::$dt),
                }
            }
            fn compare(op: Opcode, a: Complex<$f>, b: Complex<$f>) -> Result<bool> {
                match op {
                    Opcode::Equal => Ok(a == b),
                    Opcode::NotEqual => Ok(a != b),
                    _ => unsupported(op, DType::$dt),
                }
            }
            fn classify(op: Opcode, a: Complex<$f>) -> Result<bool> {
                match op {
                    Opcode::IsNan => Ok(a.re.is_nan() || a.im.is_nan()),
                    Opcode::IsInf => Ok(a.re.is_infinite() || a.im.is_infinite()),
                    Opcode::IsFinite => Ok(a.re.is_finite() && a.im.is_finite()),
                    _ => unsupported(op, DType::$dt),
                }
            }
            fn sum(values: &[Complex<$f>]) -> Result<Complex<$f>> {
                let zero = Complex::new(0.0, 0.0);
                Ok(if values.is_empty() {
                    zero
                } else {
                    zero + pairwise(values, &|x, y| x + y)
                })
            }
        }
    };
}

complex_elem!(f32, Complex64, complex64_ops);
complex_elem!(f64, Complex128, complex128_ops);
