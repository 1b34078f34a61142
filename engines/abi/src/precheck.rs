//! Values that make a kernel fail, checked before the kernel writes anything.
//!
//! A compiled kernel finds an out-of-range index or a negative integer exponent where it
//! reaches it, in whichever chunk and thread: by then other elements are written. NumPy
//! raises with the target untouched (`a[idx] = v`, `np.add.at(a, idx, v)`) and every
//! other array as it was, and the runtime can only give the same when the failing kernel
//! wrote nothing or can run again (see `vem`'s `after_failure`). So before a kernel runs,
//! the operands that can make it fail are checked here, when they are in memory:
//! - every scatter's index (a scatter updates its own target); a masked one's where its
//!   mask selects it, when the mask is in memory too (else the kernel checks);
//! - in a kernel that overwrites what it reads ([`Kernel::overwrites_its_reads`]), every
//!   gather's index and every signed integer power's exponent too.
//!
//! An operand the kernel computes itself is checked in the kernel: the fuser keeps such
//! an instruction out of kernels that overwrite what they read (`hassium_fuser`'s
//! legality rules), so the runtime can run its neighbours again. An engine keeping device
//! copies makes the host copies of [`checked_bases`] current first.

use crate::Buffers;
use hassium_core::{
    BaseId, Batch, DType, Error as CoreError, Instr, Kernel, Opcode, View, NEGATIVE_POWER,
};

/// The kernel's instructions whose failing operand [`check`] reads, with that operand.
fn checked<'a>(batch: &'a Batch, kernel: &'a Kernel) -> impl Iterator<Item = (usize, &'a View)> {
    let all = (kernel.instrs.iter()).any(|&i| {
        let instr = &batch.instrs[i];
        instr.can_fail_when_run() && !instr.reads_output()
    }) && kernel.overwrites_its_reads(batch);
    kernel.instrs.iter().filter_map(move |&i| {
        let instr = &batch.instrs[i];
        if !(instr.reads_output() || all && instr.can_fail_when_run()) {
            return None;
        }
        instr.failing_operand().map(|v| (i, v))
    })
}

/// A masked scatter's mask: only the indices it selects must be in range.
fn mask_of(instr: &Instr) -> Option<&View> {
    (instr.op == Opcode::CondScatter)
        .then(|| instr.ins.get(2).and_then(|o| o.as_view()))
        .flatten()
}

/// The bases [`check`] reads: failing operands, and a masked scatter's mask.
pub fn checked_bases<'a>(
    batch: &'a Batch,
    kernel: &'a Kernel,
) -> impl Iterator<Item = BaseId> + 'a {
    checked(batch, kernel)
        .flat_map(|(i, v)| std::iter::once(v.base).chain(mask_of(&batch.instrs[i]).map(|m| m.base)))
}

/// The failure (as the instruction would report it, having written nothing) of the first
/// instruction of `kernel`, among those [`checked_bases`] covers, whose failing operand
/// is in host memory, not written earlier in the kernel, and holds a value it fails on.
pub fn check(batch: &Batch, kernel: &Kernel, buffers: &Buffers) -> Result<(), CoreError> {
    for (i, view) in checked(batch, kernel) {
        let instr = &batch.instrs[i];
        let pos = kernel.instrs.iter().position(|&j| j == i).unwrap_or(0);
        let written_before = kernel.instrs[..pos]
            .iter()
            .any(|&j| batch.instrs[j].out.base == view.base);
        let Some(buf) = buffers.get(view.base) else {
            continue; // computed in the kernel: the kernel checks it
        };
        if written_before || buf.data.is_null() {
            continue;
        }
        // A masked scatter: the mask must be in host memory too (else the kernel checks).
        let mask = match mask_of(instr) {
            None => None,
            Some(m) => {
                let in_kernel = kernel.instrs[..pos]
                    .iter()
                    .any(|&j| batch.instrs[j].out.base == m.base);
                match buffers.get(m.base) {
                    Some(mb) if !in_kernel && !mb.data.is_null() && m.dtype == DType::Bool => {
                        Some((m, mb))
                    }
                    _ => continue,
                }
            }
        };
        let selected = mask.map(|(m, mb)| {
            // SAFETY: the runtime keeps the mask's buffer (`nelem` bools) alive for this
            // call, and `m` is a verified view of it with the index's shape.
            let bytes =
                unsafe { std::slice::from_raw_parts(mb.data as *const u8, mb.nelem as usize) };
            (m, bytes)
        });
        if let Some(e) = failure(instr, view, buf.data, buf.nelem as usize, selected) {
            return Err(CoreError::Failed {
                index: i,
                op: instr.op.name(),
                source: Box::new(e),
                wrote_nothing: true,
            });
        }
    }
    Ok(())
}

/// What `instr` fails with on the values of its failing operand `view` over `data`; for a
/// masked scatter, only at the elements `mask` (a view of the index's shape over its
/// bytes) selects.
fn failure(
    instr: &Instr,
    view: &View,
    data: *mut u8,
    nelem: usize,
    mask: Option<(&View, &[u8])>,
) -> Option<CoreError> {
    /// The first element of `view` (row-major) over `data` that `bad` accepts.
    fn first<T: Copy>(
        data: *mut u8,
        nelem: usize,
        view: &View,
        bad: impl Fn(T) -> bool,
    ) -> Option<T> {
        // SAFETY: the runtime keeps the buffer (`nelem` elements of the view's dtype)
        // alive for this call, and `view` is a verified view of it.
        let values = unsafe { std::slice::from_raw_parts(data as *const T, nelem) };
        first_in(values, view, bad)
    }
    if instr.op.class() == hassium_core::OpClass::Index {
        if view.dtype != DType::Int64 {
            return None;
        }
        let target = match instr.op {
            Opcode::Gather => instr.ins.first().and_then(|o| o.as_view())?,
            _ => &instr.out,
        };
        let n = target.shape.first().copied().unwrap_or(0) as i64;
        let bad = match mask {
            None => first::<i64>(data, nelem, view, |v| v < -n || v >= n)?,
            Some((m, bytes)) => {
                // SAFETY: as in `first`.
                let values = unsafe { std::slice::from_raw_parts(data as *const i64, nelem) };
                first_selected(values, view, bytes, m, |v| v < -n || v >= n)?
            }
        };
        return Some(CoreError::OutOfBounds(format!(
            "index {bad} is out of bounds for axis 0 with size {n}"
        )));
    }
    let negative = match view.dtype {
        DType::Int8 => first::<i8>(data, nelem, view, |v| v < 0).is_some(),
        DType::Int16 => first::<i16>(data, nelem, view, |v| v < 0).is_some(),
        DType::Int32 => first::<i32>(data, nelem, view, |v| v < 0).is_some(),
        DType::Int64 => first::<i64>(data, nelem, view, |v| v < 0).is_some(),
        _ => false,
    };
    negative.then(|| CoreError::Invalid(NEGATIVE_POWER.into()))
}

/// The first element of `view` (row-major) in `values` whose element of `mask` (a view
/// of the same shape over `bytes`) is true and that `bad` accepts.
fn first_selected<T: Copy>(
    values: &[T],
    view: &View,
    bytes: &[u8],
    mask: &View,
    bad: impl Fn(T) -> bool,
) -> Option<T> {
    if mask.shape != view.shape {
        return None; // not a verified pair: leave it to the kernel
    }
    let mut selected = Vec::with_capacity(view.nelem());
    first_in(bytes, mask, |b| {
        selected.push(b != 0);
        false
    });
    let mut k = 0;
    first_in(values, view, |v| {
        let hit = selected.get(k).copied().unwrap_or(false) && bad(v);
        k += 1;
        hit
    })
}

/// The first element of `view` (row-major) in `values` that `bad` accepts.
fn first_in<T: Copy>(values: &[T], view: &View, mut bad: impl FnMut(T) -> bool) -> Option<T> {
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
        if bad(v) {
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
