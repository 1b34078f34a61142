//! Index bounds of scatters, checked before a compiled kernel writes anything.
//!
//! A compiled kernel finds an out-of-range index where it reaches it, in whichever chunk
//! and thread: by then other elements of the target are written, while NumPy raises
//! `IndexError` for `a[idx] = v` or `np.add.at(a, idx, v)` with `a` untouched (so does
//! the reference engine, which resolves every index first). So before a kernel with a
//! `Scatter` or `ScatterAdd` runs, every index array it reads from memory is checked
//! here (an engine keeping device copies makes the host copy current first, see
//! [`index_bases`]); an index array the kernel computes itself is still checked in the
//! kernel.

use crate::Buffers;
use hassium_core::{BaseId, Batch, DType, Error as CoreError, Kernel, Opcode, Operand, View};

/// The index arrays [`check`] reads: those of the kernel's scatters.
pub fn index_bases<'a>(batch: &'a Batch, kernel: &'a Kernel) -> impl Iterator<Item = BaseId> + 'a {
    kernel.instrs.iter().filter_map(|&i| {
        let instr = &batch.instrs[i];
        match (instr.op, instr.ins.first()) {
            (Opcode::Scatter | Opcode::ScatterAdd, Some(Operand::View(idx))) => Some(idx.base),
            _ => None,
        }
    })
}

/// NumPy's error for the first out-of-range index of any scatter of `kernel` whose index
/// array is in host memory and not written by the kernel.
pub fn check(batch: &Batch, kernel: &Kernel, buffers: &Buffers) -> Result<(), CoreError> {
    for (pos, &i) in kernel.instrs.iter().enumerate() {
        let instr = &batch.instrs[i];
        if !matches!(instr.op, Opcode::Scatter | Opcode::ScatterAdd) {
            continue;
        }
        let Some(Operand::View(idx)) = instr.ins.first() else {
            continue;
        };
        let written_before = kernel.instrs[..pos]
            .iter()
            .any(|&j| batch.instrs[j].out.base == idx.base);
        let Some(buf) = buffers.get(idx.base) else {
            continue; // computed in the kernel: the kernel checks it
        };
        if written_before || idx.dtype != DType::Int64 || buf.data.is_null() {
            continue;
        }
        let n = instr.out.shape.first().copied().unwrap_or(0) as i64;
        // SAFETY: the runtime keeps `buf` (`nelem` int64 elements) alive for this call,
        // and `idx` is a verified view of it.
        let values =
            unsafe { std::slice::from_raw_parts(buf.data as *const i64, buf.nelem as usize) };
        if let Some(bad) = first_out_of_range(values, idx, n) {
            return Err(CoreError::OutOfBounds(format!(
                "index {bad} is out of bounds for axis 0 with size {n}"
            )));
        }
    }
    Ok(())
}

/// The first index of `view` (row-major) outside `[-n, n)`.
fn first_out_of_range(values: &[i64], view: &View, n: i64) -> Option<i64> {
    if view.shape.contains(&0) {
        return None;
    }
    let nd = view.shape.len();
    let mut at = vec![0usize; nd];
    loop {
        let off = view.offset
            + (at.iter().zip(&view.strides))
                .map(|(&k, &s)| k as isize * s)
                .sum::<isize>();
        let v = *values.get(usize::try_from(off).ok()?)?;
        if v < -n || v >= n {
            return Some(v);
        }
        // Next element, last axis fastest.
        let mut d = nd;
        loop {
            if d == 0 {
                return None;
            }
            d -= 1;
            at[d] += 1;
            if at[d] < view.shape[d] {
                break;
            }
            at[d] = 0;
        }
    }
}
