//! One C expression per elementwise opcode and dtype, with NumPy's semantics.
//!
//! Operands arrive as expressions of their compute type (float16 values as float); the
//! result is an expression of the output's compute type. Float16 results are rounded to
//! half after every operation (`HS_F16R`), as NumPy computes float16 ufuncs in float and
//! stores half: keeping the rounding makes fused chains agree with NumPy's unfused ones.

use crate::{Dialect, Error, Result};
use hassium_core::{DType, Identity, Opcode};

/// The helper-name suffix of a dtype's prelude functions (float16 uses float32's).
fn hname(t: DType) -> &'static str {
    if t == DType::Float16 {
        "float32"
    } else {
        t.name()
    }
}

/// The unsigned type integer arithmetic wraps in: signed overflow is undefined in C, and
/// 8/16-bit operands would otherwise promote to (signed) int.
fn wrap_type(t: DType) -> &'static str {
    if t.size() == 8 {
        "uint64_t"
    } else {
        "uint32_t"
    }
}

fn f16_round(t: DType, e: String) -> String {
    if t == DType::Float16 {
        format!("HS_F16R({e})")
    } else {
        e
    }
}

/// The expression of `op` applied to `a` (input dtype `t`, output dtype `out`).
pub fn elementwise(d: &Dialect, op: Opcode, t: DType, out: DType, a: &[String]) -> Result<String> {
    use Opcode::*;
    if t.is_complex() || out.is_complex() {
        return complex(d, op, t, out, a);
    }
    let ct = d.compute(t);
    let x = || a[0].clone();
    let y = || a[1].clone();
    let is_b = t == DType::Bool;
    let is_f = t.is_float();
    let is_i = t.is_integer();
    let m = |base: &str| d.math(base, t);
    let wrap2 = |sym: &str| {
        format!(
            "(({ct})(({w})({}) {sym} ({w})({})))",
            a[0],
            a[1],
            w = wrap_type(t)
        )
    };
    let e = match op {
        Add if is_b => format!("({} | {})", x(), y()),
        Multiply if is_b => format!("({} & {})", x(), y()),
        Add | Subtract | Multiply if is_i => wrap2(match op {
            Add => "+",
            Subtract => "-",
            _ => "*",
        }),
        Add => f16_round(t, format!("({} + {})", x(), y())),
        Subtract => f16_round(t, format!("({} - {})", x(), y())),
        Multiply => f16_round(t, format!("({} * {})", x(), y())),
        Divide => f16_round(t, format!("({} / {})", x(), y())),
        FloorDivide => f16_round(t, format!("hs_floordiv_{}({}, {})", hname(t), x(), y())),
        Remainder => f16_round(t, format!("hs_mod_{}({}, {})", hname(t), x(), y())),
        Power if is_i => format!("hs_pow_{}({}, {})", hname(t), x(), y()),
        Power => f16_round(t, format!("{}({}, {})", m("pow"), x(), y())),
        Negative if is_i => format!("(({ct})(-({})({})))", wrap_type(t), x()),
        Negative => format!("(-{})", x()),
        Positive | Conj | Real => x(),
        Imag => format!("(({ct})0)"),
        Absolute if is_b || t.is_unsigned_integer() => x(),
        Absolute if is_i => format!(
            "({v} < 0 ? (({ct})(-({w})({v}))) : {v})",
            v = x(),
            w = wrap_type(t)
        ),
        Absolute => format!("{}({})", m("fabs"), x()),
        Sign if is_i => format!("(({ct})(({v} > 0) - ({v} < 0)))", v = x()),
        Sign => format!("hs_sign_{}({})", hname(t), x()),
        Maximum | Fmax if is_b => format!("({} | {})", x(), y()),
        Minimum | Fmin if is_b => format!("({} & {})", x(), y()),
        Maximum | Fmax if is_i => format!("({a} >= {b} ? {a} : {b})", a = x(), b = y()),
        Minimum | Fmin if is_i => format!("({a} <= {b} ? {a} : {b})", a = x(), b = y()),
        Maximum => format!("hs_max_{}({}, {})", hname(t), x(), y()),
        Minimum => format!("hs_min_{}({}, {})", hname(t), x(), y()),
        Fmax => format!("{}({}, {})", m("fmax"), x(), y()),
        Fmin => format!("{}({}, {})", m("fmin"), x(), y()),
        Equal => format!("({} == {})", x(), y()),
        NotEqual => format!("({} != {})", x(), y()),
        Less => format!("({} < {})", x(), y()),
        LessEqual => format!("({} <= {})", x(), y()),
        Greater => format!("({} > {})", x(), y()),
        GreaterEqual => format!("({} >= {})", x(), y()),
        LogicalAnd => format!("(({} != 0) & ({} != 0))", x(), y()),
        LogicalOr => format!("(({} != 0) | ({} != 0))", x(), y()),
        LogicalXor => format!("(({} != 0) ^ ({} != 0))", x(), y()),
        LogicalNot => format!("({} == 0)", x()),
        BitwiseAnd => format!("(({ct})({} & {}))", x(), y()),
        BitwiseOr => format!("(({ct})({} | {}))", x(), y()),
        BitwiseXor => format!("(({ct})({} ^ {}))", x(), y()),
        Invert if is_b => format!("({} ^ 1)", x()),
        Invert => format!("(({ct})~{})", x()),
        LeftShift => format!("hs_shl_{}({}, {})", hname(t), x(), y()),
        RightShift => format!("hs_shr_{}({}, {})", hname(t), x(), y()),
        Square if is_i => format!(
            "(({ct})(({w})({v}) * ({w})({v})))",
            v = x(),
            w = wrap_type(t)
        ),
        Square if is_b => format!("({v} & {v})", v = x()),
        Square => f16_round(t, format!("({v} * {v})", v = x())),
        Reciprocal if is_i || is_b => format!("({v} == 0 ? ({ct})0 : ({ct})(1 / {v}))", v = x()),
        Reciprocal => f16_round(t, format!("(({ct})1 / {})", x())),
        Floor | Ceil | Trunc if !is_f => x(),
        Sqrt | Cbrt | Exp | Exp2 | Expm1 | Log | Log2 | Log10 | Log1p | Sin | Cos | Tan
        | Arcsin | Arccos | Arctan | Sinh | Cosh | Tanh | Arcsinh | Arccosh | Arctanh | Floor
        | Ceil | Trunc | Rint => f16_round(t, format!("{}({})", m(libm_name(op)), x())),
        Arctan2 => f16_round(t, format!("{}({}, {})", m("atan2"), x(), y())),
        Hypot => f16_round(t, format!("{}({}, {})", m("hypot"), x(), y())),
        // Exact in float for float16 operands: the result is a float16 value already.
        Fmod => f16_round(t, format!("hs_fmod_{}({}, {})", hname(t), x(), y())),
        Copysign => f16_round(t, format!("{}({}, {})", m("copysign"), x(), y())),
        // A float16 neighbour is not a float one rounded: the prelude steps in float16.
        Nextafter if t == DType::Float16 => format!("hs_nextafter_float16({}, {})", x(), y()),
        Nextafter => format!("{}({}, {})", m("nextafter"), x(), y()),
        // The exponent, an integer carried in the float type, clamped as the table says
        // (fmax/fmin drop a NaN, so it reads as the lower bound) before C's int.
        Ldexp => f16_round(
            t,
            format!(
                "{}({}, (int){}({}({}, -10000), 10000))",
                m("ldexp"),
                x(),
                m("fmin"),
                m("fmax"),
                y()
            ),
        ),
        FrexpExponent => format!("hs_frexp_exp_{}({})", hname(t), x()),
        Gcd => format!("hs_gcd_{}({}, {})", hname(t), x(), y()),
        Lcm => format!("hs_lcm_{}({}, {})", hname(t), x(), y()),
        Signbit if is_f => format!("(signbit({}) != 0)", x()),
        IsNan if is_f => format!("(isnan({}) != 0)", x()),
        IsInf if is_f => format!("(isinf({}) != 0)", x()),
        IsFinite if is_f => format!("(isfinite({}) != 0)", x()),
        IsNan | IsInf => "0".into(),
        IsFinite => "1".into(),
        Identity => return Ok(cast(d, t, out, &a[0])),
        Where => format!("({} ? {} : {})", a[0], a[1], a[2]),
        _ => {
            return Err(Error::Unsupported(format!(
                "{} as an elementwise operation",
                op.name()
            )))
        }
    };
    Ok(e)
}

/// Whether the C dialect renders `op` on complex operands ([`complex`]); the lowering
/// sends kernels with any other complex operation to the interpreter.
pub fn complex_renders(op: Opcode) -> bool {
    use Opcode::*;
    matches!(
        op,
        Add | Subtract
            | Multiply
            | Divide
            | Power
            | Negative
            | Positive
            | Conj
            | Real
            | Imag
            | Absolute
            | Square
            | Equal
            | NotEqual
            | IsNan
            | IsInf
            | IsFinite
            | Identity
            | Where
            | Gather
            | Scatter
            | CondScatter
            | ScatterAdd
    )
}

/// `op` with a complex input or output (`t`, `out`), with the reference engine's
/// formulas: componentwise sums and negation, NumPy's fused product, Smith's quotient,
/// NumPy's power and magnitude, both parts for the tests.
fn complex(d: &Dialect, op: Opcode, t: DType, out: DType, a: &[String]) -> Result<String> {
    use Opcode::*;
    if !d.complex || !complex_renders(op) {
        return Err(Error::Unsupported(format!(
            "complex {} ({}) in {}",
            op.name(),
            t.name(),
            d.name
        )));
    }
    let n = t.name();
    let (x, y) = (|| a[0].clone(), || a[1].clone());
    let parts = |v: String| (format!("__real__ ({v})"), format!("__imag__ ({v})"));
    Ok(match op {
        Identity => cast(d, t, out, &a[0]),
        Where => format!("({} ? {} : {})", a[0], a[1], a[2]),
        Add => format!("({} + {})", x(), y()),
        Subtract => format!("({} - {})", x(), y()),
        Multiply => format!("hs_cmulf_{n}({}, {})", x(), y()),
        Square => format!("hs_cmulf_{n}({v}, {v})", v = x()),
        Divide => format!("hs_cdiv_{n}({}, {})", x(), y()),
        Power => format!("hs_cpow_{n}({}, {})", x(), y()),
        Negative => format!("(-{})", x()),
        Positive => x(),
        Conj => format!("hs_conj_{n}({})", x()),
        Real => parts(x()).0,
        Imag => parts(x()).1,
        Absolute => {
            let (re, im) = parts(x());
            format!("hs_cabs_{n}({re}, {im})")
        }
        Equal => format!("({} == {})", x(), y()),
        NotEqual => format!("({} != {})", x(), y()),
        IsNan | IsInf | IsFinite => {
            let (re, im) = parts(x());
            match op {
                IsNan => format!("((isnan({re}) | isnan({im})) != 0)"),
                IsInf => format!("((isinf({re}) | isinf({im})) != 0)"),
                _ => format!("((isfinite({re}) != 0) & (isfinite({im}) != 0))"),
            }
        }
        _ => unreachable!("complex_renders lists the operations rendered here"),
    })
}

/// libm's name for a one-argument math opcode.
fn libm_name(op: Opcode) -> &'static str {
    use Opcode::*;
    match op {
        Arcsin => "asin",
        Arccos => "acos",
        Arctan => "atan",
        Arcsinh => "asinh",
        Arccosh => "acosh",
        Arctanh => "atanh",
        _ => op.name(),
    }
}

/// NumPy `astype` from compute-type expression `v` of dtype `from` to `to`'s compute type.
pub fn cast(d: &Dialect, from: DType, to: DType, v: &str) -> String {
    if from == to {
        return v.to_string();
    }
    let ct = d.compute(to);
    if to == DType::Bool {
        // A complex value is true when either part is nonzero, as C's `!= 0` says.
        return format!("({v} != 0)");
    }
    if from.is_complex() && !to.is_complex() {
        // The imaginary part is dropped (NumPy warns), then the real part converts.
        return cast(d, from.real(), to, &format!("__real__ ({v})"));
    }
    if to == DType::Float16 {
        return format!("HS_F16R({v})");
    }
    if from == DType::Bool && to.is_float() {
        // A select, not a conversion: a boolean register is as wide as the kernel's
        // widest lane (int64_t among doubles), and x86 converts int64 to double in
        // vectors only from AVX-512DQ on, so `(double)r` kept a Black-Scholes written with
        // `w * ~mask + (1.0 - w) * mask` scalar on AVX2 (`exp` and `log` as scalar calls).
        return format!("({v} ? ({ct})1 : ({ct})0)");
    }
    if d.split_wide_int_to_double {
        match (from, to) {
            (DType::Int64, DType::Float64) => return format!("hs_i64_f64({v})"),
            (DType::UInt64, DType::Float64) => return format!("hs_u64_f64({v})"),
            (DType::Int64, DType::Float32) => return format!("hs_i64_f32({v})"),
            (DType::UInt64, DType::Float32) => return format!("hs_u64_f32({v})"),
            _ => {}
        }
    }
    if from.is_float() && to.is_integer() {
        // C leaves out-of-range float→int conversions undefined; the prelude's helpers
        // give NumPy's x86-64 results for every value (hassium_core::float_to_int).
        let n = hname(from);
        return match to {
            DType::Int64 => format!("hs_f2i64_{n}({v})"),
            DType::UInt64 => format!("hs_f2u64_{n}({v})"),
            DType::UInt32 => format!("hs_f2u32_{n}({v})"),
            _ => format!("(({ct})hs_f2i32_{n}({v}))"),
        };
    }
    format!("(({ct})({v}))")
}

/// The literal a reduction's accumulator starts from, in the compute type of `t`.
pub fn identity(d: &Dialect, op: Opcode, t: DType) -> Result<String> {
    let ct = d.compute(t);
    let info = op.info();
    let combine = info.combine.unwrap_or(op);
    Ok(match info.identity {
        Identity::Zero => format!("(({ct})0)"),
        Identity::One => format!("(({ct})1)"),
        Identity::AllOnes if t == DType::Bool => "((uint8_t)1)".into(),
        Identity::AllOnes => format!("(({ct})~({ct})0)"),
        Identity::None => {
            let is_max = matches!(
                combine,
                Opcode::Maximum | Opcode::Fmax | Opcode::ArgmaxReduce
            );
            match t {
                DType::Bool => (if is_max {
                    "((uint8_t)0)"
                } else {
                    "((uint8_t)1)"
                })
                .into(),
                t if t.is_float() => {
                    if is_max {
                        format!("(({ct})-INFINITY)")
                    } else {
                        format!("(({ct})INFINITY)")
                    }
                }
                t => {
                    let n = t.name().to_uppercase();
                    let lim = if is_max { "MIN" } else { "MAX" };
                    if t.is_unsigned_integer() && is_max {
                        format!("(({ct})0)")
                    } else {
                        format!("{n}_{lim}")
                    }
                }
            }
        }
    })
}
