//! Algebraic simplifications that are exact under NumPy semantics, bit for bit.
//!
//! | pattern                       | dtypes                  | becomes        |
//! |-------------------------------|-------------------------|----------------|
//! | `x + 0`, `0 + x`, `x - 0`     | bool*, integers         | copy of `x`    |
//! | `x + (-0.0)`, `x - (+0.0)`    | floats                  | copy of `x`    |
//! | `x * 1`, `1 * x`              | bool, integers, floats  | copy of `x`    |
//! | `x / 1`, `x ** 1`             | floats (`**`: integers) | copy of `x`    |
//! | `x * 0`, `0 * x`              | bool, integers          | fill with 0    |
//! | `-(-x)`, `~(~x)`              | all they take           | copy of `x`    |
//! | `abs(-x)`                     | floats, signed integers | `abs(x)`       |
//! | `identity` onto its own view  | all                     | removed        |
//! | scalar-only `+ - * /`, `neg`  | integers (wrapping), f32, f64 | fill with the value |
//!
//! (*) `subtract` does not take bool.
//!
//! Left alone on purpose: `x + 0.0` on floats (`-0.0 + 0.0` is `+0.0`, not `x`), `x - (-0.0)`
//! likewise; `x * 0` on floats (`inf * 0` and `NaN * 0` are NaN, `-1 * 0` is `-0.0`);
//! every rule on complex numbers (NumPy's complex multiply and divide turn infinities
//! into NaNs even for `1+0j`); integer division (division by zero is NumPy's business);
//! half-precision folding. Integer folding wraps exactly as NumPy's array arithmetic.
//! A copy whose output is the identical view of its input is dropped outright.

use crate::facts::{copy, writes_into};
use crate::{Filter, Result};
use hassium_core::IdMap;
use hassium_core::{overlap, Batch, DType, Instr, Opcode, Operand, Overlap, Scalar, View};

pub struct Simplify;

fn is_neg_zero(s: &Scalar) -> bool {
    s.is_zero() && s.as_f64().is_sign_negative()
}

fn is_pos_zero(s: &Scalar) -> bool {
    s.is_zero() && s.as_f64().is_sign_positive()
}

/// `(view, scalar)` of a binary instruction with exactly one scalar operand, and whether
/// the scalar is on the left.
fn view_and_scalar(i: &Instr) -> Option<(&View, &Scalar, bool)> {
    match (i.ins.first()?, i.ins.get(1)?) {
        (Operand::View(v), Operand::Scalar(s)) => Some((v, s, false)),
        (Operand::Scalar(s), Operand::View(v)) => Some((v, s, true)),
        _ => None,
    }
}

enum Rewrite {
    Keep,
    Remove,
    Into(Box<Instr>),
}

/// `out = x` as a copy, or nothing when `out` is `x` itself.
fn copy_of(out: &View, x: &View) -> Rewrite {
    if overlap(out, x) == Overlap::Identical && out.dtype == x.dtype {
        Rewrite::Remove
    } else {
        Rewrite::Into(Box::new(copy(out, x.clone().into())))
    }
}

fn fold(op: Opcode, ins: &[Scalar]) -> Option<Scalar> {
    let t = ins.first()?.dtype();
    if t.is_integer() {
        let a = ins[0].as_i128()?;
        let b = ins.get(1).and_then(|s| s.as_i128());
        // i128 arithmetic then a cast to t wraps exactly as t's own arithmetic would.
        let v = match (op, b) {
            (Opcode::Add, Some(b)) => a.wrapping_add(b),
            (Opcode::Subtract, Some(b)) => a.wrapping_sub(b),
            (Opcode::Multiply, Some(b)) => a.wrapping_mul(b),
            (Opcode::Negative, None) => a.wrapping_neg(),
            _ => return None,
        };
        return Some(Scalar::Int64(v as i64).cast(t));
    }
    match ins {
        [Scalar::Float64(a), Scalar::Float64(b)] => Some(Scalar::Float64(match op {
            Opcode::Add => a + b,
            Opcode::Subtract => a - b,
            Opcode::Multiply => a * b,
            Opcode::Divide => a / b,
            _ => return None,
        })),
        [Scalar::Float32(a), Scalar::Float32(b)] => Some(Scalar::Float32(match op {
            Opcode::Add => a + b,
            Opcode::Subtract => a - b,
            Opcode::Multiply => a * b,
            Opcode::Divide => a / b,
            _ => return None,
        })),
        [Scalar::Float64(a)] if op == Opcode::Negative => Some(Scalar::Float64(-a)),
        [Scalar::Float32(a)] if op == Opcode::Negative => Some(Scalar::Float32(-a)),
        _ => None,
    }
}

fn rewrite(batch: &Batch, writers: &Writers, k: usize) -> Rewrite {
    let i = &batch.instrs[k];
    if !i.op.is_elementwise() {
        return Rewrite::Keep;
    }
    if i.op == Opcode::Identity {
        if let Some(Operand::View(x)) = i.ins.first() {
            if x == &i.out {
                return Rewrite::Remove;
            }
        }
        return Rewrite::Keep;
    }
    // Scalar-only arithmetic.
    if i.ins.iter().all(|o| o.as_scalar().is_some()) {
        let scalars: Vec<Scalar> = i
            .ins
            .iter()
            .filter_map(|o| o.as_scalar().copied())
            .collect();
        if let Some(v) = fold(i.op, &scalars) {
            if v.dtype() == i.out.dtype {
                return Rewrite::Into(Box::new(copy(&i.out, v.into())));
            }
        }
        return Rewrite::Keep;
    }
    if matches!(i.op, Opcode::Negative | Opcode::Invert) {
        return double_negation(batch, writers, k);
    }
    if i.op == Opcode::Absolute {
        return abs_of_negation(batch, writers, k);
    }
    let Some((x, s, scalar_left)) = view_and_scalar(i) else {
        return Rewrite::Keep;
    };
    let t: DType = x.dtype;
    let exact = t.is_integer() || t.is_bool();
    let float = t.is_float();
    let identity = match i.op {
        Opcode::Add => (exact && s.is_zero()) || (float && is_neg_zero(s)),
        Opcode::Subtract => !scalar_left && ((exact && s.is_zero()) || (float && is_pos_zero(s))),
        Opcode::Multiply => (exact || float) && s.is_one(),
        Opcode::Divide => !scalar_left && float && s.is_one(),
        Opcode::Power => !scalar_left && (exact || float) && s.is_one(),
        _ => false,
    };
    if identity {
        return copy_of(&i.out, x);
    }
    if i.op == Opcode::Multiply && exact && s.is_zero() {
        return Rewrite::Into(Box::new(copy(&i.out, Scalar::zero(i.out.dtype).into())));
    }
    Rewrite::Keep
}

/// Instruction indices writing each base (outputs of non-system instructions),
/// ascending. Rewrites keep outputs, so the lists stay valid (a removed instruction no
/// longer writes, which `writes_into` sees).
type Writers = IdMap<Vec<usize>>;

fn writers(batch: &Batch) -> Writers {
    let mut w: Writers = Writers::default();
    for (k, i) in batch.instrs.iter().enumerate() {
        if !i.op.is_system() {
            w.entry(i.out.base).or_default().push(k);
        }
    }
    w
}

/// Writers of `v`'s base in `lo..hi`, newest first.
fn writes_between<'a>(
    batch: &'a Batch,
    writers: &'a Writers,
    v: &'a View,
    lo: usize,
    hi: usize,
) -> impl Iterator<Item = usize> + 'a {
    let list = writers.get(&v.base).map_or(&[][..], |l| &l[..]);
    let end = list.partition_point(|&k| k < hi);
    list[..end]
        .iter()
        .rev()
        .copied()
        .take_while(move |&k| k >= lo)
        .filter(move |&k| writes_into(&batch.instrs[k], v))
}

/// For unary instruction `k` reading `t`: when the latest write of `t` was exactly
/// `t = op(x)` (`x` disjoint from `t`), `x` has not changed since, and instruction `k`
/// may write its output from `x` directly, that `x`.
fn unary_source<'a>(batch: &'a Batch, writers: &Writers, k: usize, op: Opcode) -> Option<&'a View> {
    let i = &batch.instrs[k];
    let Some(Operand::View(t)) = i.ins.first() else {
        return None;
    };
    let p = writes_between(batch, writers, t, 0, k).next()?;
    let prod = &batch.instrs[p];
    let Some(Operand::View(x)) = prod.ins.first() else {
        return None;
    };
    if prod.op != op || &prod.out != t || overlap(&prod.out, x) != Overlap::Disjoint {
        return None;
    }
    if writes_between(batch, writers, x, p + 1, k).next().is_some() {
        return None;
    }
    if overlap(&i.out, x) == Overlap::Partial {
        return None;
    }
    Some(x)
}

/// `y = -t` where the latest write of `t` was `t = -x` and neither `t` nor `x` changed
/// since: `y = x`. (Negation and bitwise inversion are involutions, wrapping included.)
fn double_negation(batch: &Batch, writers: &Writers, k: usize) -> Rewrite {
    match unary_source(batch, writers, k, batch.instrs[k].op) {
        Some(x) => copy_of(&batch.instrs[k].out, x),
        None => Rewrite::Keep,
    }
}

/// `y = abs(t)` where `t = -x` (as in [`double_negation`]): `y = abs(x)`, so that `cse`
/// can share it with an `abs(x)` computed elsewhere (`cnd(-d)` next to `cnd(d)`). Exact
/// for floats (only the sign bit differs) and signed integers (`-MIN` wraps to `MIN`,
/// whose absolute value is `MIN` again); not for unsigned ones, whose negation wraps.
fn abs_of_negation(batch: &Batch, writers: &Writers, k: usize) -> Rewrite {
    let i = &batch.instrs[k];
    let t = i.out.dtype;
    if !(t.is_float() || t.is_signed_integer()) {
        return Rewrite::Keep;
    }
    match unary_source(batch, writers, k, Opcode::Negative) {
        Some(x) if x.dtype == t => Rewrite::Into(Box::new(Instr::new(
            Opcode::Absolute,
            i.out.clone(),
            [Operand::View(x.clone())],
        ))),
        _ => Rewrite::Keep,
    }
}

impl Filter for Simplify {
    fn apply(&mut self, batch: &mut Batch) -> Result<()> {
        let mut removed = Vec::new();
        let writers = writers(batch);
        for k in 0..batch.instrs.len() {
            match rewrite(batch, &writers, k) {
                Rewrite::Keep => {}
                Rewrite::Remove => {
                    removed.push(k);
                    // Neutralised in place so later rules see no write here.
                    batch.instrs[k].op = Opcode::None;
                    batch.instrs[k].ins.clear();
                }
                Rewrite::Into(new) => batch.instrs[k] = *new,
            }
        }
        crate::facts::remove_indices(batch, &removed);
        Ok(())
    }
}
