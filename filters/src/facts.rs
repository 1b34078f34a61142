//! Facts about a batch that several filters need to decide whether a rewrite is safe.

use hassium_core::IdSet;
use hassium_core::{overlap, BaseId, Batch, Instr, Operand, Overlap, Scalar, View};

/// Bases freed in the batch and not synced: their values are not observable after it.
pub(crate) fn temporaries(batch: &Batch) -> IdSet {
    batch.freed().filter(|b| !batch.sync.contains(b)).collect()
}

/// True when `instr` writes memory that `v` addresses.
pub(crate) fn writes_into(instr: &Instr, v: &View) -> bool {
    !instr.op.is_system() && overlap(&instr.out, v) != Overlap::Disjoint
}

/// True when the instruction touches base `b` in any way (system instructions too).
pub(crate) fn touches(instr: &Instr, b: BaseId) -> bool {
    instr.out.base == b || instr.ins.iter().any(|o| o.base() == Some(b))
}

/// Scalars compared bit for bit: `-0.0` and `0.0` differ, a NaN equals itself.
pub(crate) fn same_scalar(a: &Scalar, b: &Scalar) -> bool {
    a.dtype() == b.dtype() && a.to_le_bytes() == b.to_le_bytes()
}

pub(crate) fn same_operand(a: &Operand, b: &Operand) -> bool {
    match (a, b) {
        (Operand::View(x), Operand::View(y)) => x == y,
        (Operand::Scalar(x), Operand::Scalar(y)) => same_scalar(x, y),
        _ => false,
    }
}

/// `out = identity(src)`, the copy every simplification rewrites into.
pub(crate) fn copy(out: &View, src: Operand) -> Instr {
    Instr::new(hassium_core::Opcode::Identity, out.clone(), [src])
}

/// Removes the instructions at `indices` (any order), keeping the others in order.
pub(crate) fn remove_indices(batch: &mut Batch, indices: &[usize]) {
    if indices.is_empty() {
        return;
    }
    let mut drop = vec![false; batch.instrs.len()];
    for &k in indices {
        drop[k] = true;
    }
    let mut k = 0;
    batch.instrs.retain(|_| {
        k += 1;
        !drop[k - 1]
    });
}
