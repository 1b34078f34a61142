//! A chain of two reductions of one associative operation along adjacent axes, the
//! first into a temporary, becomes one reduction over a view that merges the two axes:
//! `s = x.sum(axis=1).sum(axis=0)` reads `x` once and never materialises the row sums.
//!
//! Conditions: the same reduction opcode (associative and commutative, not arg-min/max);
//! the intermediate is a temporary written only by the first reduction through its full
//! view and read only by the second through the identical view; `x`'s axes are adjacent
//! and its view can merge them without a copy (`View::reshape`); no extent is zero; and
//! nothing in between writes `x`. Applied repeatedly, longer chains collapse.
//!
//! Not applied when `x` is written earlier in the batch: a producer of `x` would fuse
//! with the first reduction (same loop nest), and the merged view has another shape, so
//! the rewrite would cost that fusion and materialise `x`.
//!
//! Reassociation caveat: for integer, boolean, min/max, logical and bitwise reductions the
//! result is bit-identical. Float `add`/`multiply` reductions are summed in another order
//! and may differ in the last bits, as NumPy's own `x.sum()` differs from
//! `x.sum(1).sum(0)`; put this filter in a stack only where that is acceptable.

use crate::facts::{temporaries, touches, writes_into};
use crate::{Filter, Result};
use hassium_core::{Batch, IdSet, Instr, Opcode, Operand};

pub struct ContractReductions;

fn contractible_op(op: Opcode) -> bool {
    op.is_reduction() && op.is_associative() && op.is_commutative() && !op.is_arg_reduction()
}

/// Tries to fold reduction `i` into the later reduction that consumes it.
fn contract_one(batch: &mut Batch, i: usize, temps: &IdSet) -> bool {
    let first = &batch.instrs[i];
    if !contractible_op(first.op) {
        return false;
    }
    let (Some(Operand::View(x)), Some(a1)) = (first.ins.first(), first.axis) else {
        return false;
    };
    let t = &first.out;
    let Some(base) = batch.base(t.base) else {
        return false;
    };
    if !temps.contains(&t.base) || !t.is_contiguous() || t.offset != 0 || t.nelem() != base.nelem {
        return false;
    }
    if x.shape.contains(&0)
        || batch.instrs[..i]
            .iter()
            .any(|w| touches(w, t.base) || writes_into(w, x))
    {
        return false;
    }
    // The single consumer: every later non-system use of t.
    let users: Vec<usize> = (i + 1..batch.instrs.len())
        .filter(|&k| !batch.instrs[k].op.is_system() && touches(&batch.instrs[k], t.base))
        .collect();
    let [j] = users[..] else {
        return false;
    };
    let second = &batch.instrs[j];
    let (Some(Operand::View(v2)), Some(a2)) = (second.ins.first(), second.axis) else {
        return false;
    };
    if second.op != first.op || v2 != t || second.out.base == t.base {
        return false;
    }
    if batch.instrs[i + 1..j].iter().any(|w| writes_into(w, x)) {
        return false;
    }
    // Axis a2 of t is axis b of x.
    let b = if a2 < a1 { a2 } else { a2 + 1 };
    if a1.abs_diff(b) != 1 {
        return false;
    }
    let lo = a1.min(b);
    let mut shape = x.shape.clone();
    let merged = shape[lo] * shape[lo + 1];
    shape.remove(lo + 1);
    shape[lo] = merged;
    let Some(xv) = x.reshape(&shape) else {
        return false;
    };
    let new = Instr::new(first.op, second.out.clone(), [xv.into()]).with_axis(lo);
    batch.instrs[j] = new;
    batch.instrs.remove(i);
    true
}

impl Filter for ContractReductions {
    fn apply(&mut self, batch: &mut Batch) -> Result<()> {
        let temps = temporaries(batch);
        let mut k = 0;
        while k < batch.instrs.len() {
            if !contract_one(batch, k, &temps) {
                k += 1;
            }
        }
        Ok(())
    }
}
