//! Common-subexpression elimination: an instruction that computes what an earlier one
//! already computed (same opcode, axis, method, output dtype and shape, identical input
//! views and bit-identical scalars) reuses that result.
//!
//! Safe only when the earlier result still holds the value: the earlier instruction did
//! not overwrite its own inputs, and nothing in between wrote its inputs or its output.
//! Then the later instruction becomes a copy of the earlier result, and when its output
//! is a temporary (freed, not synced, written only here, read only through that same
//! view, and the earlier result stays valid and alive until those reads) the reads are
//! renamed to the earlier result and the instruction disappears. Index ops and
//! extensions are left alone.

use crate::facts::{copy, same_operand, temporaries, touches, writes_into};
use crate::{Filter, Result};
use hassium_core::{overlap, Batch, Instr, OpClass, Opcode, Operand, Overlap, View};
use std::collections::HashMap;

pub struct Cse;

/// A cheap key grouping instructions that might compute the same thing: the opcode and
/// the bases its inputs read (so a batch of thousands of multiplies does not compare
/// each against all earlier ones).
type Key = (Opcode, Option<usize>, u8, [Option<u64>; 3]);

fn key(i: &Instr) -> Key {
    let mut bases = [None; 3];
    for (slot, op) in bases.iter_mut().zip(&i.ins) {
        *slot = op.base().map(|b| b.0);
    }
    (i.op, i.axis, i.out.dtype as u8, bases)
}

fn same_computation(a: &Instr, b: &Instr) -> bool {
    a.op == b.op
        && a.axis == b.axis
        && a.method == b.method
        && a.out.dtype == b.out.dtype
        && a.out.shape == b.out.shape
        && a.ins.len() == b.ins.len()
        && a.ins.iter().zip(&b.ins).all(|(x, y)| same_operand(x, y))
}

fn eligible(i: &Instr) -> bool {
    matches!(
        i.op.class(),
        OpClass::Elementwise | OpClass::Reduce | OpClass::Scan | OpClass::Generator
    ) && i
        .input_views()
        .all(|v| overlap(&i.out, v) == Overlap::Disjoint)
}

impl Filter for Cse {
    fn apply(&mut self, batch: &mut Batch) -> Result<()> {
        let temps = temporaries(batch);
        let mut seen: HashMap<Key, Vec<usize>> = HashMap::new();
        let mut removed = Vec::new();
        for j in 0..batch.instrs.len() {
            let ij = &batch.instrs[j];
            if !eligible(ij) {
                continue;
            }
            let found = seen.get(&key(ij)).and_then(|cands| {
                cands.iter().rev().copied().find(|&i| {
                    let ii = &batch.instrs[i];
                    same_computation(ii, ij)
                        && !batch.instrs[i + 1..j].iter().any(|w| {
                            writes_into(w, &ii.out) || ii.input_views().any(|v| writes_into(w, v))
                        })
                })
            });
            let Some(i) = found else {
                seen.entry(key(ij)).or_default().push(j);
                continue;
            };
            let earlier = batch.instrs[i].out.clone();
            let later = ij.out.clone();
            match overlap(&earlier, &later) {
                Overlap::Identical => {
                    removed.push(j);
                    batch.instrs[j].op = Opcode::None;
                    batch.instrs[j].ins.clear();
                }
                Overlap::Partial => {}
                Overlap::Disjoint => {
                    if rename(batch, j, &earlier, &later, &temps) {
                        removed.push(j);
                    } else {
                        batch.instrs[j] = copy(&later, earlier.into());
                    }
                }
            }
        }
        crate::facts::remove_indices(batch, &removed);
        Ok(())
    }
}

/// Renames every later read of `later` (a temporary written only by instruction `j`) to
/// `earlier`, when that is safe; returns whether it did.
fn rename(
    batch: &mut Batch,
    j: usize,
    earlier: &View,
    later: &View,
    temps: &std::collections::HashSet<hassium_core::BaseId>,
) -> bool {
    let b = later.base;
    if !temps.contains(&b) || batch.instrs[..j].iter().any(|w| touches(w, b)) {
        return false;
    }
    let mut last_read = j;
    for (k, w) in batch.instrs.iter().enumerate().skip(j + 1) {
        if w.op.is_system() {
            continue;
        }
        if w.out.base == b {
            return false;
        }
        for v in w.input_views().filter(|v| v.base == b) {
            if v != later {
                return false;
            }
            last_read = k;
        }
    }
    // The earlier result must stay intact and alive until the last renamed read.
    let clobbered = batch.instrs[j + 1..=last_read]
        .iter()
        .any(|w| (w.op == Opcode::Free && w.out.base == earlier.base) || writes_into(w, earlier));
    if clobbered {
        return false;
    }
    for w in &mut batch.instrs[j + 1..=last_read] {
        for o in w.ins.iter_mut() {
            if matches!(o, Operand::View(v) if v == later) {
                *o = Operand::View(earlier.clone());
            }
        }
    }
    batch.instrs[j].op = Opcode::None;
    batch.instrs[j].ins.clear();
    true
}
