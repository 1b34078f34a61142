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
        // Every value in range over the memory the view spans: then none it (or its mask)
        // selects is out of range.
        // SAFETY: as in `first`.
        let values = unsafe { std::slice::from_raw_parts(data as *const i64, nelem) };
        if n > 0 && none_in_span(values, view, |v| (v.wrapping_add(n) as u64) >= 2 * n as u64) {
            return None;
        }
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
    /// `first`, after a scan of the span that finds nothing in most calls.
    fn first_negative<T: Copy + Default + PartialOrd>(
        data: *mut u8,
        nelem: usize,
        view: &View,
    ) -> Option<T> {
        // SAFETY: as in `first`.
        let values = unsafe { std::slice::from_raw_parts(data as *const T, nelem) };
        if none_in_span(values, view, |v| v < T::default()) {
            return None;
        }
        first_in(values, view, |v| v < T::default())
    }
    let negative = match view.dtype {
        DType::Int8 => first_negative::<i8>(data, nelem, view).is_some(),
        DType::Int16 => first_negative::<i16>(data, nelem, view).is_some(),
        DType::Int32 => first_negative::<i32>(data, nelem, view).is_some(),
        DType::Int64 => first_negative::<i64>(data, nelem, view).is_some(),
        _ => false,
    };
    negative.then(|| CoreError::Invalid(NEGATIVE_POWER.into()))
}

/// How much more memory than elements a view may span for [`none_in_span`] to scan it
/// all: a dense view (every index array the recorder makes, most a user passes) spans
/// exactly its elements.
const SPAN_SLACK: usize = 4;

/// True when `bad` accepts no value anywhere in the memory `view` spans, so none of the
/// view's own elements: one branch-free pass over a slice, where the exact walk
/// ([`first_in`]) goes row by row. False when it finds one (the exact walk then says
/// whether the view holds it), or when the span is much larger than the view or reaches
/// outside `values` (not a verified view: the kernel checks).
fn none_in_span<T: Copy>(values: &[T], view: &View, bad: impl Fn(T) -> bool) -> bool {
    let Some((lo, hi)) = view.extent() else {
        return true;
    };
    let (Ok(lo), Ok(hi)) = (usize::try_from(lo), usize::try_from(hi)) else {
        return false;
    };
    if hi >= values.len() || hi - lo >= SPAN_SLACK * view.nelem() {
        return false;
    }
    // Chunks of a fixed size: the inner fold has no early exit, so it vectorises; a
    // bad value ends the scan at its chunk.
    !values[lo..=hi]
        .chunks(1024)
        .any(|c| c.iter().fold(false, |acc, &v| acc | bad(v)))
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
    let mut found = None;
    rows(view, |r, at, last, n| {
        let vs = slice_of(values, at, last, n)?;
        let m_at = row_start(mask, r);
        let ms = slice_of(bytes, m_at, mask.strides.last().copied().unwrap_or(0), n)?;
        for k in 0..n {
            let v = vs(k);
            if ms(k) != 0 && bad(v) {
                found = Some(v);
                return None;
            }
        }
        Some(())
    });
    found
}

/// The first element of `view` (row-major) in `values` that `bad` accepts.
fn first_in<T: Copy>(values: &[T], view: &View, mut bad: impl FnMut(T) -> bool) -> Option<T> {
    let mut found = None;
    rows(view, |_, at, last, n| {
        let vs = slice_of(values, at, last, n)?;
        for k in 0..n {
            let v = vs(k);
            if bad(v) {
                found = Some(v);
                return None;
            }
        }
        Some(())
    });
    found
}

/// Calls `row(r, offset, stride, len)` for every row `r` (along the last axis) of `view`
/// in row-major order, until it returns `None`. A 0-d view is one row of one element.
fn rows(view: &View, mut row: impl FnMut(usize, isize, isize, usize) -> Option<()>) {
    if view.shape.contains(&0) {
        return;
    }
    let nd = view.shape.len();
    let (n, last) = match nd {
        0 => (1, 0),
        _ => (view.shape[nd - 1], view.strides[nd - 1]),
    };
    let outer = nd.saturating_sub(1);
    let mut at = vec![0usize; outer];
    let mut r = 0;
    loop {
        let off = view.offset
            + (at.iter().zip(&view.strides))
                .map(|(&k, &s)| k as isize * s)
                .sum::<isize>();
        if row(r, off, last, n).is_none() {
            return;
        }
        r += 1;
        // Next row, the last outer axis fastest.
        let mut d = outer;
        loop {
            if d == 0 {
                return;
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

/// The element offset in `mask` of the row `r` (row-major) of its last axis.
fn row_start(mask: &View, r: usize) -> isize {
    let nd = mask.shape.len();
    let mut rest = r;
    let mut off = mask.offset;
    for d in (0..nd.saturating_sub(1)).rev() {
        let n = mask.shape[d];
        off += (rest % n) as isize * mask.strides[d];
        rest /= n;
    }
    off
}

/// The `n` elements from offset `at` by `stride` in `values` as an accessor, or `None`
/// when one of them is outside (not a verified view: the kernel checks).
fn slice_of<T: Copy>(
    values: &[T],
    at: isize,
    stride: isize,
    n: usize,
) -> Option<impl Fn(usize) -> T + '_> {
    let end = at + (n as isize - 1) * stride;
    let ok = |o: isize| usize::try_from(o).is_ok_and(|o| o < values.len());
    if n == 0 || !(ok(at) && ok(end)) {
        return None;
    }
    // SAFETY: both ends are in bounds, and the offsets between them are too (a row is an
    // arithmetic progression).
    Some(move |k: usize| unsafe { *values.get_unchecked((at + k as isize * stride) as usize) })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every element offset of `view`, row-major, by coordinates (the plain definition).
    fn offsets(view: &View) -> Vec<isize> {
        let n = view.nelem();
        (0..n)
            .map(|mut r| {
                let mut off = view.offset;
                for d in (0..view.ndim()).rev() {
                    off += (r % view.shape[d]) as isize * view.strides[d];
                    r /= view.shape[d];
                }
                off
            })
            .collect()
    }

    fn view(offset: isize, shape: &[usize], strides: &[isize]) -> View {
        let mut v = View::contiguous(BaseId(1), DType::Int64, shape);
        v.offset = offset;
        v.strides = strides.into();
        v
    }

    #[test]
    fn rows_visit_every_element_of_odd_views_in_row_major_order() {
        let values: Vec<i64> = (0..64).collect();
        let cases = [
            view(0, &[], &[]),
            view(5, &[7], &[1]),
            view(20, &[7], &[-2]),
            view(3, &[3, 4], &[1, 0]),
            view(63, &[2, 3, 4], &[-16, -4, -1]),
            view(1, &[2, 3, 2], &[30, 2, 9]),
            view(0, &[3, 0, 2], &[1, 1, 1]),
        ];
        for v in &cases {
            let mut seen = Vec::new();
            first_in(&values, v, |x| {
                seen.push(x as isize);
                false
            });
            assert_eq!(seen, offsets(v), "{v:?}");
            // The first element past a point is found, with the ones before passed over.
            if let Some(&last) = offsets(v).last() {
                assert_eq!(
                    first_in(&values, v, |x| x as isize == last),
                    Some(last as i64)
                );
            }
        }
        // A view reaching outside the values is left to the kernel.
        assert_eq!(first_in(&values, &view(60, &[8], &[1]), |_| true), None);
    }

    #[test]
    fn the_span_scan_clears_only_views_whose_whole_span_is_clean() {
        let mut values: Vec<i64> = (0..4096).collect();
        let bad = |v: i64| v < 0;
        // Dense, reversed, broadcast: clean.
        assert!(none_in_span(&values, &view(0, &[4096], &[1]), bad));
        assert!(none_in_span(
            &values,
            &view(4095, &[64, 64], &[-64, -1]),
            bad
        ));
        assert!(none_in_span(&values, &view(7, &[3, 5], &[0, 1]), bad));
        assert!(none_in_span(&values, &view(0, &[0, 3], &[1, 1]), bad));
        // A bad value between a strided view's elements: not cleared, though the view
        // holds none (the exact walk decides), and in every chunk position.
        for at in [1, 1023, 1025, 2048, 4093] {
            values[at] = -1;
            let every_other = view(0, &[2048], &[2]);
            assert!(!none_in_span(&values, &every_other, bad), "{at}");
            assert_eq!(first_in(&values, &every_other, bad).is_some(), at % 2 == 0);
            values[at] = at as i64;
        }
        // A span far larger than the view, or past the values: left to the exact walk.
        assert!(!none_in_span(&values, &view(0, &[2, 2], &[4000, 1]), bad));
        assert!(!none_in_span(&values, &view(4000, &[100], &[1]), bad));
        assert!(!none_in_span(&values, &view(-1, &[2], &[1]), bad));
    }

    #[test]
    fn a_masked_check_reads_only_the_selected_elements_through_the_masks_own_strides() {
        let values: Vec<i64> = (0..12).collect();
        let idx = view(0, &[3, 4], &[4, 1]);
        // The mask laid out transposed: element (i, j) at j * 3 + i.
        let mask = view(0, &[3, 4], &[1, 3]);
        let mut bytes = vec![0u8; 12];
        bytes[2 * 3 + 1] = 1; // selects (1, 2): value 6
        bytes[3 * 3 + 2] = 1; // selects (2, 3): value 11
        assert_eq!(
            first_selected(&values, &idx, &bytes, &mask, |_| true),
            Some(6)
        );
        assert_eq!(
            first_selected(&values, &idx, &bytes, &mask, |v| v > 6),
            Some(11)
        );
        assert_eq!(
            first_selected(&values, &idx, &bytes, &mask, |v| v < 6),
            None
        );
    }
}
