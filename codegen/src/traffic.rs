//! The memory traffic a kernel cannot avoid, for the engines' bytes-moved and GB/s
//! statistics.
//!
//! Counting every operand at full size would credit a 5-point stencil with five reads of
//! its grid where the hardware streams it once (the neighbours are cache hits), and a GB/s
//! above the machine's bandwidth. So views of one base with the same shape and strides
//! that differ only in offset count as their union — about one view plus the spread of the
//! offsets — reads and writes are counted apart (an in-place update moves its array
//! twice), and a read of a value the kernel itself wrote earlier costs nothing.

use hassium_core::{BaseId, Shape, Strides, View};
use rustc_hash::{FxHashMap, FxHashSet};

#[derive(Default)]
pub(crate) struct Traffic {
    /// (base, written, element size, shape, strides) → the distinct offsets seen.
    groups: FxHashMap<(BaseId, bool, usize, Shape, Strides), Vec<isize>>,
    written: FxHashSet<View>,
    /// Gathers and scatters: their footprint is the whole indexed view.
    random: u64,
}

impl Traffic {
    pub(crate) fn read(&mut self, v: &View) {
        if !self.written.contains(v) {
            self.add(v, false);
        }
    }

    pub(crate) fn write(&mut self, v: &View) {
        self.written.insert(v.clone());
        self.add(v, true);
    }

    pub(crate) fn random(&mut self, v: &View) {
        self.random += (v.nelem() * v.dtype.size()) as u64;
    }

    fn add(&mut self, v: &View, written: bool) {
        let key = (
            v.base,
            written,
            v.dtype.size(),
            v.shape.clone(),
            v.strides.clone(),
        );
        let offsets = self.groups.entry(key).or_default();
        if !offsets.contains(&v.offset) {
            offsets.push(v.offset);
        }
    }

    pub(crate) fn bytes(&self) -> u64 {
        let views: u64 = self
            .groups
            .iter()
            .map(|((_, _, size, shape, strides), offsets)| {
                if shape.contains(&0) {
                    return 0;
                }
                // Distinct elements: a broadcast (stride-0) dimension repeats them.
                let n: usize = (shape.iter().zip(strides))
                    .filter(|&(_, &s)| s != 0)
                    .map(|(&n, _)| n)
                    .product();
                let lo = offsets.iter().min().copied().unwrap_or(0);
                let hi = offsets.iter().max().copied().unwrap_or(0);
                let union = n.saturating_add(hi.abs_diff(lo));
                (union.min(n.saturating_mul(offsets.len())) * size) as u64
            })
            .sum();
        views + self.random
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hassium_core::DType;

    fn view(base: u64, offset: isize, shape: &[usize], strides: &[isize]) -> View {
        View {
            base: BaseId(base),
            dtype: DType::Float64,
            offset,
            shape: shape.into(),
            strides: strides.into(),
        }
    }

    #[test]
    fn a_stencil_reads_its_grid_about_once() {
        // The interior of a 6×6 grid and its four neighbours, then written back in place.
        let mut t = Traffic::default();
        for off in [7, 1, 13, 6, 8] {
            t.read(&view(0, off, &[4, 4], &[6, 1]));
        }
        t.write(&view(0, 7, &[4, 4], &[6, 1]));
        assert_eq!(t.bytes(), ((16 + 12) + 16) * 8);
    }

    #[test]
    fn disjoint_views_count_in_full_and_values_written_here_are_free_to_read() {
        let mut t = Traffic::default();
        let out = view(2, 0, &[10], &[1]);
        t.read(&view(0, 0, &[10], &[1]));
        t.read(&view(0, 100, &[10], &[1]));
        t.read(&view(1, 0, &[10], &[2]));
        t.write(&out);
        t.read(&out);
        t.random(&view(3, 0, &[5], &[1]));
        // A broadcast scalar and a row repeated down a matrix: read once each.
        t.read(&view(4, 0, &[1000], &[0]));
        t.read(&view(5, 0, &[1000, 3], &[0, 1]));
        assert_eq!(t.bytes(), (20 + 10 + 10 + 5 + 1 + 3) * 8);
    }

    #[test]
    fn empty_views_move_nothing() {
        let mut t = Traffic::default();
        t.read(&view(0, 0, &[0, 3], &[3, 1]));
        t.read(&view(0, 3, &[0, 3], &[3, 1]));
        assert_eq!(t.bytes(), 0);
    }
}
