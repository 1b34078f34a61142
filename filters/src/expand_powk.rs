//! `x ** k` for a small non-negative integer scalar `k` → multiplications.
//!
//! What is rewritten and why it is safe:
//! - integer dtypes, `k` in `0..=16`: NumPy's integer power is repeated multiplication
//!   that wraps modulo 2^bits; multiplication modulo 2^bits is associative, so any order
//!   of multiplications gives exactly NumPy's result, overflow included (`int8(3)**5` is
//!   `-13` both ways). `0**0 == 1` as in NumPy. Negative exponents are left alone (NumPy
//!   raises for them, and the engine must too).
//! - float dtypes: `k == 0` → 1 (IEEE `pow(x, 0)` is 1 even for NaN), `k == 1` → copy
//!   (exact), `k == 2` → `x*x` (what NumPy's own `x**2` does, via `square`), and `k` in
//!   `3..=16` → left-to-right binary powering. The last case is *not* bit-exact with
//!   libm's `pow` (each multiplication rounds; up to about `log2(k)+popcount(k)` rounding
//!   steps instead of one), the same trade Bohrium made; engines compiled with FMA
//!   contraction are not bit-exact either.
//! - complex dtypes are left alone: NumPy's complex power has its own special cases
//!   (`npy_cpow`), and copying `x` is not even exact for `x*(1+0j)` with infinities.
//! - fractional exponents are left alone: `x**0.5 → sqrt(x)` differs from `pow` at `-0.0`
//!   and `-inf` (`pow(-inf, 0.5)` is `inf`, `sqrt(-inf)` is NaN).
//!
//! In place (`x **= k`), powers of two are expanded as `x = x*x` repeated; the other
//! exponents need `x` after `x` was overwritten, so they are computed into a temporary
//! (`Batch::new_temp`, which the fuser keeps in registers) and copied back, or left
//! alone in a batch with no ids to give.

use crate::facts::copy;
use crate::{Filter, Result};
use hassium_core::{overlap, Batch, Instr, Opcode, Overlap, Scalar, View};

pub struct ExpandPowk;

/// The largest exponent expanded.
pub const MAX_EXPONENT: u32 = 16;

fn exponent(s: &Scalar) -> Option<u32> {
    if s.dtype().is_complex() {
        return None;
    }
    match s.as_i128() {
        Some(i) => (0..=MAX_EXPONENT as i128).contains(&i).then_some(i as u32),
        None => {
            let v = s.as_f64();
            (v.fract() == 0.0 && (0.0..=MAX_EXPONENT as f64).contains(&v)).then_some(v as u32)
        }
    }
}

fn mul(out: &View, a: &View, b: &View) -> Instr {
    Instr::new(
        Opcode::Multiply,
        out.clone(),
        [a.clone().into(), b.clone().into()],
    )
}

/// The multiplications computing `x ** k` (k ≥ 2) into `out`, which may be `x` itself
/// only for a power of two (squares only): left to right over the bits below the leading one, squaring, then multiplying by
/// `x` where the bit is set. The accumulator is `out` after the first step.
fn powering(out: &View, x: &View, k: u32) -> Vec<Instr> {
    let mut seq = Vec::new();
    let mut acc = x;
    for bit in (0..31 - k.leading_zeros()).rev() {
        seq.push(mul(out, acc, acc));
        acc = out;
        if k >> bit & 1 == 1 {
            seq.push(mul(out, out, x));
        }
    }
    seq
}

/// The instructions replacing `instr`, or `None` to keep it.
fn expand(batch: &mut Batch, instr: &Instr) -> Option<Vec<Instr>> {
    if instr.op != Opcode::Power {
        return None;
    }
    let x = instr.ins.first()?.as_view()?;
    if x.dtype.is_complex() {
        return None;
    }
    let k = exponent(instr.ins.get(1)?.as_scalar()?)?;
    let out = &instr.out;
    let in_place = overlap(out, x) == Overlap::Identical;
    Some(match k {
        0 => vec![copy(out, Scalar::one(out.dtype).into())],
        1 if in_place => vec![],
        1 => vec![copy(out, x.clone().into())],
        _ if in_place && !k.is_power_of_two() => {
            let temp = batch.new_temp(out.dtype, out.nelem())?;
            let t = View::contiguous(temp.id, out.dtype, &out.shape);
            let mut seq = powering(&t, x, k);
            seq.push(copy(out, t.into()));
            seq.push(Instr::system(Opcode::Free, &temp));
            seq
        }
        // x is only read (or, in place, each square reads the element it overwrites).
        _ => powering(out, x, k),
    })
}

impl Filter for ExpandPowk {
    fn apply(&mut self, batch: &mut Batch) -> Result<()> {
        if !batch.instrs.iter().any(|i| i.op == Opcode::Power) {
            return Ok(());
        }
        let mut out = Vec::with_capacity(batch.instrs.len());
        for instr in std::mem::take(&mut batch.instrs) {
            match expand(batch, &instr) {
                Some(seq) => out.extend(seq),
                None => out.push(instr),
            }
        }
        batch.instrs = out;
        Ok(())
    }
}
