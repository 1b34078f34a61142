//! `complex64` and `complex128`, one macro over `num_complex::Complex<f32|f64>`.

use super::{pairwise, unsupported, CastVal, Elem};
use hassium_core::{DType, Opcode, Result};
use num_complex::Complex;

/// Complex numbers with NumPy's formulas where they are not the textbook ones (Smith's
/// division, the magnitude, `nc_pow`'s integer powers, NumPy 2's `sign`, `expm1`/`log1p`); the
/// transcendental functions are num-complex's principal branches.
macro_rules! complex_elem {
    ($f:ident, $dt:ident, $ops:ident) => {
        /// Complex formulas NumPy spells out itself (`npy_math_complex`, `loops.c.src`).
        mod $ops {
            use num_complex::Complex;

            /// The magnitude as NumPy's array loop computes it: `big * sqrt(q² + 1)`
            /// with `q = small / big` and one rounding for `q² + 1` (a fused
            /// multiply-add), an infinite part giving infinity even beside a NaN. libm's
            /// `hypot` differs from it in the last bit for about a third of all values.
            pub(super) fn abs(a: Complex<$f>) -> $f {
                let (re, im) = (a.re.abs(), a.im.abs());
                if re.is_infinite() || im.is_infinite() {
                    return $f::INFINITY;
                }
                if re.is_nan() || im.is_nan() {
                    return $f::NAN;
                }
                let (big, small) = if re > im { (re, im) } else { (im, re) };
                if big == 0.0 {
                    return 0.0;
                }
                let q = small / big;
                q.mul_add(q, 1.0).sqrt() * big
            }

            /// The product as NumPy's multiply and square loops compute it: each part
            /// one fused multiply-add, `fma(ar, br, -(ai * bi))` and `fma(ar, bi, ai *
            /// br)` (the textbook formula differs from it in the last bit for about two
            /// products in five).
            pub(super) fn mul_fused(a: Complex<$f>, b: Complex<$f>) -> Complex<$f> {
                Complex::new(
                    a.re.mul_add(b.re, -(a.im * b.im)),
                    a.re.mul_add(b.im, a.im * b.re),
                )
            }

            /// The textbook product, no rescaling, as NumPy's power multiplies.
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
                csqrt(Complex::new(re, im))
            }

            // Inverse functions by Kahan's formulas ("Branch cuts for complex elementary
            // functions", 1987). They form 1 - z as (1 - x, -y) rather than by complex
            // subtraction, so the sign of a zero imaginary part picks the side of the
            // branch cut as C99 (and NumPy) do: arcsin(2+0j) = pi/2 + 1.3169579j.

            pub(super) fn asin(z: Complex<$f>) -> Complex<$f> {
                // asin(z) = -i asinh(iz), whose Annex G values cover infinities and NaN.
                if !(z.re.is_finite() && z.im.is_finite()) {
                    if z.re.is_infinite() && z.im.is_nan() {
                        // NaN ± i*inf: NumPy's sign is +.
                        return Complex::new($f::NAN, $f::INFINITY);
                    }
                    let w = asinh(Complex::new(-z.im, z.re));
                    return Complex::new(w.im, -w.re);
                }
                let (x, y) = (z.re, z.im);
                let (s1m, s1p) = (sqrt(1.0 - x, -y), sqrt(1.0 + x, y));
                Complex::new((x / (s1m * s1p).re).atan(), (s1m.conj() * s1p).im.asinh())
            }

            pub(super) fn acos(z: Complex<$f>) -> Complex<$f> {
                if let Some(r) = inverse_special(b'c', z) {
                    return r;
                }
                let (x, y) = (z.re, z.im);
                let (s1m, s1p) = (sqrt(1.0 - x, -y), sqrt(1.0 + x, y));
                Complex::new(2.0 * s1m.re.atan2(s1p.re), (s1p.conj() * s1m).im.asinh())
            }

            pub(super) fn acosh(z: Complex<$f>) -> Complex<$f> {
                if let Some(r) = inverse_special(b'h', z) {
                    return r;
                }
                let (x, y) = (z.re, z.im);
                let (sm1, sp1) = (sqrt(x - 1.0, y), sqrt(x + 1.0, y));
                Complex::new((sm1.conj() * sp1).re.asinh(), 2.0 * sm1.im.atan2(sp1.re))
            }

            /// asinh(z) = -i asin(iz).
            pub(super) fn asinh(z: Complex<$f>) -> Complex<$f> {
                if let Some(r) = inverse_special(b's', z) {
                    return r;
                }
                let w = asin(Complex::new(-z.im, z.re));
                Complex::new(w.im, -w.re)
            }

            /// atanh(z) = (log1p(4x / ((1-x)^2 + y^2)) / 4, atan2(2y, (1-x)(1+x) - y^2) / 2),
            /// which keeps precision near 0 and the C99 signs on the cuts.
            pub(super) fn atanh(z: Complex<$f>) -> Complex<$f> {
                if let Some(r) = inverse_special(b't', z) {
                    return r;
                }
                let (x, y) = (z.re, z.im);
                // Far from the origin atanh z is 1/z to the last bit: real part x / |z|^2
                // (squared, 1e300 would overflow), imaginary part ±pi/2 by y's sign.
                if x.abs() > 1.0 / $f::EPSILON || y.abs() > 1.0 / $f::EPSILON {
                    let h = x.hypot(y);
                    return Complex::new((x / h) / h, std::$f::consts::FRAC_PI_2.copysign(y));
                }
                // At |x| = 1 with y too small to square, (1+x)^2 + y^2 underflows: the real
                // part is (ln 2 - ln|y|) / 2 (atanh(1 + 1e-300j) = 345.73 + 0.785j).
                if x.abs() == 1.0 && y != 0.0 && y.abs() < $f::MIN_POSITIVE.sqrt() {
                    let re = (std::$f::consts::LN_2 - y.abs().ln()) * 0.5;
                    return Complex::new(
                        re.copysign(x),
                        (2.0 * y).atan2((1.0 - x) * (1.0 + x) - y * y) / 2.0,
                    );
                }
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

            // The hyperbolic functions and the square root, with C99 Annex G's values for
            // infinite and NaN parts (as NumPy's npymath): the textbook formulas give
            // `cosh(inf + 0j) = inf + nanj` (inf * sin 0) where Annex G says `inf + 0j`.
            // Each takes the first quadrant and sets the signs by its symmetry: sinh,
            // tanh, asinh and atanh are odd and conjugate-symmetric, so x's sign is the
            // real part's and y's the imaginary part's; cosh is even, so both flip the
            // imaginary part.

            /// Applies x's sign to `re` and y's to `im` (an odd, conjugate-symmetric
            /// function computed at (|x|, |y|)); NaN signs are left as they are.
            fn odd(x: $f, y: $f, r: Complex<$f>) -> Complex<$f> {
                let flip = |v: $f, by: $f| {
                    if by.is_sign_negative() && !by.is_nan() {
                        -v
                    } else {
                        v
                    }
                };
                Complex::new(flip(r.re, x), flip(r.im, y))
            }

            pub(super) fn sinh(z: Complex<$f>) -> Complex<$f> {
                let (x, y) = (z.re, z.im);
                let (ax, ay) = (x.abs(), y.abs());
                let r = if ax.is_finite() && ay.is_finite() {
                    if ay == 0.0 {
                        Complex::new(ax.sinh(), 0.0)
                    } else {
                        Complex::new(ax.sinh() * ay.cos(), ax.cosh() * ay.sin())
                    }
                } else if ax == 0.0 {
                    Complex::new(0.0, $f::NAN)
                } else if ax.is_infinite() {
                    if ay == 0.0 {
                        Complex::new($f::INFINITY, 0.0)
                    } else if ay.is_finite() {
                        Complex::new($f::INFINITY * ay.cos(), $f::INFINITY * ay.sin())
                    } else {
                        // ±inf + NaN j, the sign unspecified: NumPy's is +.
                        return Complex::new($f::INFINITY, $f::NAN);
                    }
                } else if ax.is_nan() && ay == 0.0 {
                    Complex::new($f::NAN, 0.0)
                } else {
                    Complex::new($f::NAN, $f::NAN)
                };
                odd(x, y, r)
            }

            pub(super) fn cosh(z: Complex<$f>) -> Complex<$f> {
                let (x, y) = (z.re, z.im);
                let (ax, ay) = (x.abs(), y.abs());
                let r = if ax.is_finite() && ay.is_finite() {
                    if ay == 0.0 {
                        Complex::new(ax.cosh(), 0.0)
                    } else {
                        Complex::new(ax.cosh() * ay.cos(), ax.sinh() * ay.sin())
                    }
                } else if ax == 0.0 {
                    Complex::new($f::NAN, 0.0)
                } else if ax.is_infinite() {
                    if ay == 0.0 {
                        Complex::new($f::INFINITY, 0.0)
                    } else if ay.is_finite() {
                        Complex::new($f::INFINITY * ay.cos(), $f::INFINITY * ay.sin())
                    } else {
                        Complex::new($f::INFINITY, $f::NAN)
                    }
                } else if ax.is_nan() && ay == 0.0 {
                    Complex::new($f::NAN, 0.0)
                } else {
                    Complex::new($f::NAN, $f::NAN)
                };
                // Even: the imaginary part flips with either sign.
                let negative = |v: $f| v.is_sign_negative() && !v.is_nan();
                if negative(x) != negative(y) {
                    r.conj()
                } else {
                    r
                }
            }

            /// tanh as FreeBSD's ctanh (Kahan's formula): beyond |x| of 22 (9 in single
            /// precision) tanh x is 1 to the last bit and the imaginary part is
            /// 4 sin y cos y e^-2x, so nothing overflows (the textbook sinh/cosh quotient
            /// gives NaN for `tanh(45+1j)` in complex64).
            pub(super) fn tanh(z: Complex<$f>) -> Complex<$f> {
                let (x, y) = (z.re, z.im);
                let (ax, ay) = (x.abs(), y.abs());
                let big: $f = if std::mem::size_of::<$f>() == 8 {
                    22.0
                } else {
                    9.0
                };
                let r = if ax.is_nan() {
                    if ay == 0.0 {
                        Complex::new($f::NAN, 0.0)
                    } else {
                        Complex::new($f::NAN, $f::NAN)
                    }
                } else if ax.is_infinite() {
                    // 1 + i0 (the Array API's +0 for every y > 0; Annex G leaves the sign to
                    // sin(2y)), the sign of y's by symmetry.
                    Complex::new(1.0, 0.0)
                } else if !ay.is_finite() {
                    // +0 + NaN j at x = 0 (the Array API's value), else NaN + NaN j.
                    Complex::new(if ax == 0.0 { 0.0 } else { $f::NAN }, $f::NAN)
                } else if ax >= big {
                    let e = (-ax).exp();
                    Complex::new(1.0, 4.0 * ay.sin() * ay.cos() * e * e)
                } else {
                    let t = ay.tan();
                    let beta = 1.0 + t * t;
                    let s = ax.sinh();
                    let rho = (1.0 + s * s).sqrt();
                    let denom = 1.0 + beta * s * s;
                    Complex::new(beta * rho * s / denom, t / denom)
                };
                odd(x, y, r)
            }

            /// sqrt with Annex G's values: +inf + i*inf for an infinite imaginary part
            /// (even with a NaN real part), +inf + i0 and +0 + i*inf along the real
            /// infinities; conjugate-symmetric.
            pub(super) fn csqrt(z: Complex<$f>) -> Complex<$f> {
                let (x, y) = (z.re, z.im);
                if y.is_infinite() {
                    return Complex::new($f::INFINITY, y);
                }
                if x.is_nan() {
                    return Complex::new($f::NAN, $f::NAN);
                }
                if x.is_infinite() {
                    return if y.is_nan() {
                        if x > 0.0 {
                            Complex::new($f::INFINITY, $f::NAN)
                        } else {
                            Complex::new($f::NAN, $f::INFINITY)
                        }
                    } else if x > 0.0 {
                        Complex::new($f::INFINITY, (0.0 as $f).copysign(y))
                    } else {
                        Complex::new(0.0, $f::INFINITY.copysign(y))
                    };
                }
                if y.is_nan() {
                    return Complex::new($f::NAN, $f::NAN);
                }
                if x == 0.0 && y == 0.0 {
                    return Complex::new(0.0, y);
                }
                // Near the largest finite values |x| + |z| would overflow: sqrt(z/4) * 2.
                if x.abs() > $f::MAX / 4.0 || y.abs() > $f::MAX / 4.0 {
                    let r = csqrt(Complex::new(x / 4.0, y / 4.0));
                    return Complex::new(r.re * 2.0, r.im * 2.0);
                }
                // t = sqrt((|x| + |z|) / 2) carries the large part; the other is |y| / 2t,
                // exact where the polar form loses it (sqrt(-1 + 1e-300j) has real part
                // 5e-301, not 6e-17).
                let t = ((x.abs() + x.hypot(y)) * 0.5).sqrt();
                if x >= 0.0 {
                    Complex::new(t, y / (2.0 * t))
                } else {
                    Complex::new(y.abs() / (2.0 * t), t.copysign(y))
                }
            }

            /// exp with Annex G's values for infinite and NaN parts, an exact zero
            /// imaginary part kept (`exp(710+0j) = inf+0j`, not `inf * sin 0`), and,
            /// where e^x overflows, cos y and sin y scaled by e^t first (t the largest
            /// whole x with e^x finite, up to twice), as C's `cexp` does: a product that
            /// is finite comes out finite.
            pub(super) fn cexp(z: Complex<$f>) -> Complex<$f> {
                let (x, y) = (z.re, z.im);
                let (nan, inf) = ($f::NAN, $f::INFINITY);
                if x.is_nan() {
                    return Complex::new(nan, if y == 0.0 { y } else { nan });
                }
                if x.is_infinite() {
                    return if y == 0.0 {
                        Complex::new(if x > 0.0 { inf } else { 0.0 }, y)
                    } else if y.is_finite() {
                        let m = if x > 0.0 { inf } else { 0.0 };
                        Complex::new(m * y.cos(), m * y.sin())
                    } else if x > 0.0 {
                        Complex::new(inf, nan)
                    } else {
                        Complex::new(0.0, 0.0)
                    };
                }
                if !y.is_finite() {
                    return Complex::new(nan, nan);
                }
                if y == 0.0 {
                    return Complex::new(x.exp(), y);
                }
                let (mut s, mut c) = if y.abs() > $f::MIN_POSITIVE {
                    y.sin_cos()
                } else {
                    (y, 1.0)
                };
                // 709 for f64, 88 for f32.
                let t = (($f::MAX_EXP - 1) as $f * std::$f::consts::LN_2).trunc();
                let mut x = x;
                for _ in 0..2 {
                    if x > t {
                        let et = t.exp();
                        x -= t;
                        s *= et;
                        c *= et;
                    }
                }
                if x > t {
                    return Complex::new($f::MAX * c, $f::MAX * s);
                }
                let e = x.exp();
                Complex::new(e * c, e * s)
            }

            /// The inverse functions' values for infinite and NaN parts (Annex G), or
            /// `None` for finite ones. `acos` and `acosh` are conjugate-symmetric; `asinh`
            /// and `atanh` odd as well.
            fn inverse_special(op: u8, z: Complex<$f>) -> Option<Complex<$f>> {
                use std::$f::consts::{FRAC_PI_2, FRAC_PI_4, PI};
                let (x, y) = (z.re, z.im);
                if x.is_finite() && y.is_finite() {
                    return None;
                }
                let (nan, inf) = ($f::NAN, $f::INFINITY);
                let c = Complex::new;
                let (ax, ay) = (x.abs(), y.abs());
                let r = match op {
                    // acos, for y >= 0
                    b'c' => {
                        if x.is_nan() {
                            if ay.is_infinite() {
                                c(nan, -inf)
                            } else {
                                c(nan, nan)
                            }
                        } else if ay.is_nan() {
                            if x == 0.0 {
                                c(FRAC_PI_2, nan)
                            } else if ax.is_infinite() {
                                // NaN ± i*inf: NumPy's sign is -.
                                c(nan, -inf)
                            } else {
                                c(nan, nan)
                            }
                        } else if ax.is_infinite() {
                            match (x < 0.0, ay.is_infinite()) {
                                (true, true) => c(3.0 * FRAC_PI_4, -inf),
                                (false, true) => c(FRAC_PI_4, -inf),
                                (true, false) => c(PI, -inf),
                                (false, false) => c(0.0, -inf),
                            }
                        } else {
                            c(FRAC_PI_2, -inf)
                        }
                    }
                    // acosh, for y >= 0
                    b'h' => {
                        if x.is_nan() {
                            if ay.is_infinite() {
                                c(inf, nan)
                            } else {
                                c(nan, nan)
                            }
                        } else if ay.is_nan() {
                            if x == 0.0 {
                                c(nan, FRAC_PI_2)
                            } else if ax.is_infinite() {
                                c(inf, nan)
                            } else {
                                c(nan, nan)
                            }
                        } else if ax.is_infinite() {
                            match (x < 0.0, ay.is_infinite()) {
                                (true, true) => c(inf, 3.0 * FRAC_PI_4),
                                (false, true) => c(inf, FRAC_PI_4),
                                (true, false) => c(inf, PI),
                                (false, false) => c(inf, 0.0),
                            }
                        } else {
                            c(inf, FRAC_PI_2)
                        }
                    }
                    // asinh, for x, y >= 0
                    b's' => {
                        if ax.is_nan() {
                            if ay == 0.0 {
                                c(nan, 0.0)
                            } else if ay.is_infinite() {
                                c(inf, nan)
                            } else {
                                c(nan, nan)
                            }
                        } else if ay.is_nan() {
                            if ax.is_infinite() {
                                c(inf, nan)
                            } else {
                                c(nan, nan)
                            }
                        } else if ax.is_infinite() {
                            if ay.is_infinite() {
                                c(inf, FRAC_PI_4)
                            } else {
                                c(inf, 0.0)
                            }
                        } else {
                            c(inf, FRAC_PI_2)
                        }
                    }
                    // atanh, for x, y >= 0
                    _ => {
                        if ax.is_nan() {
                            if ay.is_infinite() {
                                c(0.0, FRAC_PI_2)
                            } else {
                                c(nan, nan)
                            }
                        } else if ay.is_nan() {
                            if ax == 0.0 {
                                c(0.0, nan)
                            } else if ax.is_infinite() {
                                c(0.0, nan)
                            } else {
                                c(nan, nan)
                            }
                        } else {
                            // an infinite part, the other finite or infinite
                            c(0.0, FRAC_PI_2)
                        }
                    }
                };
                let negative = |v: $f| v.is_sign_negative() && !v.is_nan();
                Some(match op {
                    b'c' | b'h' if negative(y) => r.conj(),
                    b'c' | b'h' => r,
                    _ => odd(x, y, r),
                })
            }

            /// NumPy's `nc_pow`: x**0 is 1, 0**x is 0 when x's real part is positive
            /// (`0 ** (1+1j)` too) and NaN otherwise, small integer exponents multiply
            /// exactly, the rest is exp(b ln a).
            pub(super) fn pow(a: Complex<$f>, b: Complex<$f>) -> Complex<$f> {
                let one = Complex::new(1.0, 0.0);
                if b.re == 0.0 && b.im == 0.0 {
                    return one;
                }
                if a.re == 0.0 && a.im == 0.0 {
                    return if b.re > 0.0 {
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
                // C's cpow, which NumPy calls here: exp(b log a), that exp being cexp.
                cexp(mul(
                    b,
                    Complex::new(a.re.hypot(a.im).ln(), a.im.atan2(a.re)),
                ))
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
            /// NumPy's complex order: by the class `[R + Rj, R + nanj, nan + Rj,
            /// nan + nanj]`, then lexicographically over the parts that are numbers.
            fn sort_less(a: Complex<$f>, b: Complex<$f>) -> bool {
                let class = |z: Complex<$f>| 2 * z.re.is_nan() as u8 + z.im.is_nan() as u8;
                let (ca, cb) = (class(a), class(b));
                if ca != cb {
                    return ca < cb;
                }
                if !a.re.is_nan() && a.re != b.re {
                    return a.re < b.re;
                }
                !a.im.is_nan() && a.im < b.im
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
                    Opcode::Sqrt => $ops::csqrt(a),
                    Opcode::Square => $ops::mul_fused(a, a),
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
                    Opcode::Exp => $ops::cexp(a),
                    Opcode::Exp2 => $ops::cexp(a * LN_2),
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
                    // sin(z) = -i sinh(iz), cos(z) = cosh(iz): Annex G's values with them.
                    Opcode::Sin => {
                        if !a.re.is_finite() && a.im.is_infinite() {
                            // NaN ± i*inf, the sign unspecified: NumPy's is +.
                            c($f::NAN, $f::INFINITY)
                        } else {
                            let w = $ops::sinh(c(-a.im, a.re));
                            c(w.im, -w.re)
                        }
                    }
                    Opcode::Cos => $ops::cosh(c(-a.im, a.re)),
                    // tan(z) = -i tanh(iz)
                    Opcode::Tan => {
                        let w = $ops::tanh(c(-a.im, a.re));
                        c(w.im, -w.re)
                    }
                    Opcode::Arcsin => $ops::asin(a),
                    Opcode::Arccos => $ops::acos(a),
                    Opcode::Arctan => $ops::atan(a),
                    Opcode::Sinh => $ops::sinh(a),
                    Opcode::Cosh => $ops::cosh(a),
                    Opcode::Tanh => $ops::tanh(a),
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
                    Opcode::Multiply => $ops::mul_fused(a, b),
                    Opcode::Divide => $ops::div(a, b),
                    Opcode::Power => $ops::pow(a, b),
                    _ => return unsupported(op, DType::$dt),
                })
            }
            /// NumPy's reduce and accumulate loops multiply by the textbook formula,
            /// its elementwise loop with fused multiply-adds.
            fn combine(op: Opcode, a: Complex<$f>, b: Complex<$f>) -> Result<Complex<$f>> {
                match op {
                    Opcode::Multiply => Ok($ops::mul(a, b)),
                    _ => Self::binary(op, a, b),
                }
            }
            fn to_real(op: Opcode, a: Complex<$f>) -> Result<$f> {
                match op {
                    Opcode::Absolute => Ok($ops::abs(a)),
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
