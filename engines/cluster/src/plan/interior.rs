//! The rows of a kernel cut by rows that a rank can compute while its pieces travel.

use super::piece;
use crate::layout::Layout;
use hassium_core::{BaseId, Batch, IdMap, Kernel, View};

/// How far from each end of a rank's rows the first row reading only the rank's own
/// elements is looked for (a stencil's halo is a row or two deep).
const SCAN: usize = 64;

/// Rows `[a, b)` of rank `r`'s rows `[i0, i1)` of kernel `k` (cut by rows, `flat` as
/// its cut) that read no element outside the rank's blocks: they can run while the
/// phase's pieces travel, and the rows before and after them once the pieces are in.
/// `None` when the kernel writes memory it reads (an in-place stencil: every row must
/// see the values from before the kernel, which one call over the rows guarantees and
/// two would not), when it reads nothing distributed, or when no such rows lie within
/// [`SCAN`] rows of each end. For a flat cut (a one-loop kernel with vector math) `a`
/// and `b` are multiples of `ALIGN`, where the cpu engine's own splits lie, so each
/// element is computed as in one call.
pub fn interior(
    batch: &Batch,
    k: &Kernel,
    flat: bool,
    (i0, i1): (usize, usize),
    layouts: &IdMap<Layout>,
    r: u32,
) -> Option<(usize, usize)> {
    if i1 <= i0 {
        return None;
    }
    let mut reads: Vec<BaseId> = Vec::new();
    let mut views: Vec<(&View, (u64, u64))> = Vec::new();
    for &i in &k.instrs {
        for v in batch.instrs[i].ins.iter().filter_map(|o| o.as_view()) {
            if k.contracted.contains(&v.base) {
                continue;
            }
            reads.push(v.base);
            if let Some(l) = layouts.get(&v.base).filter(|l| l.distributed) {
                views.push((v, l.block(r)));
            }
        }
    }
    let in_place = k.instrs.iter().any(|&i| {
        let o = batch.instrs[i].out.base;
        !k.contracted.contains(&o) && reads.contains(&o)
    });
    if in_place || views.is_empty() {
        return None;
    }
    let local = |a: usize, b: usize| {
        views.iter().all(|&(v, (lo, hi))| {
            piece(v, flat, a, b)
                .extent()
                .is_none_or(|(x, y)| x >= lo as isize && y < hi as isize)
        })
    };
    let mut a = i0;
    while a < i1 && a < i0 + SCAN && !local(a, a + 1) {
        a += 1;
    }
    let mut b = i1;
    while b > a && b + SCAN > i1 && !local(b - 1, b) {
        b -= 1;
    }
    if flat {
        let align = hassium_codegen::ALIGN;
        a = a.div_ceil(align) * align;
        b = b / align * align;
    }
    (a < b && local(a, b)).then_some((a, b))
}
