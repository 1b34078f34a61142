//! Whether two views touch the same memory, decided exactly where it can be.
//!
//! Two views of one base share an element when `off_a + Σ sa·i = off_b + Σ sb·j` has a
//! solution with every index inside its extent: a bounded linear Diophantine problem. We
//! solve it by depth-first search over the dimensions from the largest stride down,
//! pruning with the reach of the remaining dimensions. For the layouts programs make
//! (nested strides, as in every slice of a row-major array) each level has at most two
//! candidates, so the search is exact and fast; a budget guards the general case, and
//! when it runs out the answer is the conservative `Partial`.

use crate::View;

/// How two views' memory accesses relate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overlap {
    /// No element in common.
    Disjoint,
    /// The same elements in the same iteration order.
    Identical,
    /// Some elements in common (or not provably disjoint).
    Partial,
}

/// Exactly classifies the overlap of `a` and `b`, conservatively `Partial` only when
/// the search budget runs out.
pub fn overlap(a: &View, b: &View) -> Overlap {
    if a.base != b.base || a.is_empty() || b.is_empty() {
        return Overlap::Disjoint;
    }
    if same_access(a, b) {
        return Overlap::Identical;
    }
    let (Some((alo, ahi)), Some((blo, bhi))) = (a.extent(), b.extent()) else {
        return Overlap::Disjoint;
    };
    if ahi < blo || bhi < alo {
        return Overlap::Disjoint;
    }
    // Σ sa·i − Σ sb·j = off_b − off_a
    let mut terms: Vec<(i128, i128, i128)> = Vec::new();
    let mut push = |s: isize, lo: i128, hi: i128| {
        if s == 0 || lo == hi && lo == 0 {
            return;
        }
        let (s, lo, hi) = if s < 0 {
            (-(s as i128), -hi, -lo)
        } else {
            (s as i128, lo, hi)
        };
        if let Some(t) = terms.iter_mut().find(|t| t.0 == s) {
            t.1 += lo;
            t.2 += hi;
        } else {
            terms.push((s, lo, hi));
        }
    };
    for (&n, &s) in a.shape.iter().zip(&a.strides) {
        push(s, 0, n as i128 - 1);
    }
    for (&n, &s) in b.shape.iter().zip(&b.strides) {
        push(s, -(n as i128 - 1), 0);
    }
    terms.sort_by_key(|t| std::cmp::Reverse(t.0));
    let mut reach = vec![0i128; terms.len() + 1];
    for i in (0..terms.len()).rev() {
        let (s, lo, hi) = terms[i];
        reach[i] = reach[i + 1] + s * lo.abs().max(hi.abs());
    }
    let d = (b.offset - a.offset) as i128;
    let mut budget = 20_000u32;
    match solve(&terms, &reach, 0, d, &mut budget) {
        Some(true) => Overlap::Partial,
        Some(false) => Overlap::Disjoint,
        None => Overlap::Partial,
    }
}

/// True when the two views visit the same offsets in the same order.
fn same_access(a: &View, b: &View) -> bool {
    if a.offset != b.offset || a.shape != b.shape {
        return false;
    }
    a.shape
        .iter()
        .zip(a.strides.iter().zip(&b.strides))
        .all(|(&n, (&sa, &sb))| n <= 1 || sa == sb)
}

/// Is `d = Σ s_k·x_k` solvable for k ≥ i with `lo_k ≤ x_k ≤ hi_k`? `None` = budget spent.
fn solve(
    terms: &[(i128, i128, i128)],
    reach: &[i128],
    i: usize,
    d: i128,
    budget: &mut u32,
) -> Option<bool> {
    if i == terms.len() {
        return Some(d == 0);
    }
    if *budget == 0 {
        return None;
    }
    *budget -= 1;
    let (s, lo, hi) = terms[i];
    let r = reach[i + 1];
    let kmin = (d - r).div_euclid(s) + i128::from((d - r).rem_euclid(s) != 0);
    let kmax = (d + r).div_euclid(s);
    let (kmin, kmax) = (kmin.max(lo), kmax.min(hi));
    let mut k = kmin;
    while k <= kmax {
        match solve(terms, reach, i + 1, d - k * s, budget) {
            Some(false) => {}
            other => return other,
        }
        k += 1;
    }
    Some(false)
}

/// True when two points of `v` may name one element (a view made with `as_strided`, say):
/// writing through it, the last write of an element wins, so a later read of that element
/// through the same view must not be served the value of its own point. Conservative:
/// dimensions sorted by stride must each step past everything the smaller ones span,
/// which every view slicing and transposing make satisfies.
pub fn self_overlaps(v: &View) -> bool {
    if v.shape.contains(&0) {
        return false;
    }
    let mut dims: smallvec::SmallVec<[(usize, usize); 4]> = v
        .shape
        .iter()
        .zip(&v.strides)
        .filter(|&(&n, _)| n > 1)
        .map(|(&n, &s)| (s.unsigned_abs(), n))
        .collect();
    dims.sort_unstable();
    let mut span = 0usize;
    for (stride, n) in dims {
        if stride <= span {
            return true;
        }
        span += stride * (n - 1);
    }
    false
}

/// Most rows of dimension 0 a write may be held back (see [`lag_rows`]).
pub const LAG_MAX_ROWS: usize = 4;
/// Most bytes one call's held-back rows may take (`2k + 1` rows at 8 bytes an element).
pub const LAG_MAX_BYTES: usize = 4 << 20;

/// How many rows of dimension 0 a write of `write` must be held back so that `read`, made
/// before it in program order, still sees every old value: the read and the write must
/// have one shape and one set of strides, so element `(i, …)` of the read lies within
/// `k` rows of the write's element `(i, …)`. `None` when no small `k` exists.
pub fn lag_rows(read: &View, write: &View) -> Option<usize> {
    if write.ndim() < 2 || read.shape != write.shape || read.strides != write.strides {
        return None;
    }
    let s0 = write.strides[0].unsigned_abs();
    if s0 == 0 || write.shape[0] < 2 {
        return None;
    }
    // The distance between two elements of one row, at most.
    let span: usize = write.shape[1..]
        .iter()
        .zip(&write.strides[1..])
        .map(|(&n, &s)| n.saturating_sub(1) * s.unsigned_abs())
        .sum();
    let k = ((read.offset - write.offset).unsigned_abs() + span) / s0;
    let row: usize = write.shape[1..].iter().product();
    (k <= LAG_MAX_ROWS && (2 * k + 1) * row * 8 <= LAG_MAX_BYTES).then_some(k)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BaseId, DType, Shape, Strides};

    fn grid(n: usize) -> View {
        View::contiguous(BaseId(7), DType::Float64, &[n, n])
    }

    fn brute(a: &View, b: &View) -> bool {
        let sa: std::collections::HashSet<isize> = a.offsets().collect();
        b.offsets().any(|o| sa.contains(&o))
    }

    #[test]
    fn views_that_name_an_element_twice_self_overlap() {
        let g = grid(10);
        assert!(!self_overlaps(&g));
        assert!(!self_overlaps(
            &g.slice(0, 9, 0, -2).unwrap().transpose(&[1, 0]).unwrap()
        ));
        let bcast = View {
            strides: Strides::from_slice(&[0, 1]),
            ..grid(3)
        };
        assert!(self_overlaps(&bcast));
        // Rows of 2 that start 3 apart, stepping back: element 34 is points (0,0) and (1,1).
        let strided = View {
            offset: 34,
            shape: Shape::from_slice(&[3, 2]),
            strides: Strides::from_slice(&[-3, 3]),
            ..grid(10)
        };
        assert!(self_overlaps(&strided));
        let brute = |v: &View| {
            let mut offs: Vec<isize> = v.offsets().collect();
            let n = offs.len();
            offs.sort_unstable();
            offs.dedup();
            offs.len() < n
        };
        assert!(brute(&strided) && brute(&bcast) && !brute(&g));
        // Empty views name nothing twice.
        assert!(!self_overlaps(&View {
            shape: Shape::from_slice(&[0, 4]),
            strides: Strides::from_slice(&[0, 0]),
            ..grid(3)
        }));
    }

    #[test]
    fn shifted_stencil_views_overlap() {
        let g = grid(10);
        let inner = g.slice(0, 1, 9, 1).unwrap().slice(1, 1, 9, 1).unwrap();
        let up = g.slice(0, 0, 8, 1).unwrap().slice(1, 1, 9, 1).unwrap();
        assert_eq!(overlap(&inner, &up), Overlap::Partial);
        assert_eq!(overlap(&inner, &inner.clone()), Overlap::Identical);
    }

    #[test]
    fn interleaved_views_are_disjoint() {
        let a = View::contiguous(BaseId(1), DType::Int32, &[100]);
        let even = a.slice(0, 0, 100, 2).unwrap();
        let odd = a.slice(0, 1, 100, 2).unwrap();
        assert_eq!(overlap(&even, &odd), Overlap::Disjoint);
        // Interior columns vs the first column of a grid: ranges intersect, elements do not.
        let g = grid(10);
        let col0 = g.slice(1, 0, 1, 1).unwrap();
        let inner = g.slice(1, 1, 10, 1).unwrap();
        assert_eq!(overlap(&col0, &inner), Overlap::Disjoint);
    }

    #[test]
    fn agrees_with_brute_force_on_many_slices() {
        let g = View::contiguous(BaseId(1), DType::Int8, &[6, 7]);
        let mut views = Vec::new();
        for (r0, r1, rs) in [(0, 6, 1), (1, 6, 2), (5, -1, -1), (0, 3, 1)] {
            for (c0, c1, cs) in [(0, 7, 1), (1, 7, 3), (6, 0, -2), (2, 4, 1)] {
                let v = g
                    .slice(0, r0, r1, rs)
                    .unwrap()
                    .slice(1, c0, c1, cs)
                    .unwrap();
                views.push(v.clone());
                views.push(v.reversed_axes());
            }
        }
        for a in &views {
            for b in &views {
                let o = overlap(a, b);
                assert_eq!(o != Overlap::Disjoint, brute(a, b), "{a:?} {b:?}");
            }
        }
    }

    fn grid_view(offset: isize, shape: &[usize], strides: &[isize]) -> View {
        View {
            base: crate::BaseId(1),
            dtype: crate::DType::Float64,
            offset,
            shape: shape.into(),
            strides: strides.into(),
        }
    }

    #[test]
    fn a_five_point_stencil_holds_its_write_back_one_row() {
        // grid of 6x7, interior 4x5 at offset 8; neighbours shifted by a row or a column.
        let w = grid_view(8, &[4, 5], &[7, 1]);
        for (off, k) in [(8, 0), (1, 1), (15, 1), (7, 0), (9, 0)] {
            assert_eq!(
                lag_rows(&grid_view(off, &[4, 5], &[7, 1]), &w),
                Some(k),
                "{off}"
            );
        }
        // Two rows away, and reversed rows.
        assert_eq!(lag_rows(&grid_view(22, &[4, 5], &[7, 1]), &w), Some(2));
        let wr = grid_view(29, &[4, 5], &[-7, 1]);
        assert_eq!(lag_rows(&grid_view(36, &[4, 5], &[-7, 1]), &wr), Some(1));
    }

    #[test]
    fn other_strides_shapes_or_far_rows_are_not_held_back() {
        let w = grid_view(8, &[4, 5], &[7, 1]);
        assert_eq!(lag_rows(&grid_view(8, &[5, 4], &[1, 7]), &w), None);
        assert_eq!(lag_rows(&grid_view(8, &[4, 4], &[7, 1]), &w), None);
        assert_eq!(lag_rows(&grid_view(8, &[4, 5], &[7, 2]), &w), None);
        let far = 8 + 7 * (LAG_MAX_ROWS as isize + 1);
        assert_eq!(lag_rows(&grid_view(far, &[4, 5], &[7, 1]), &w), None);
        // 1-d views and broadcast rows have no rows to hold back.
        let line = grid_view(1, &[5], &[1]);
        assert_eq!(lag_rows(&grid_view(2, &[5], &[1]), &line), None);
        let bcast = grid_view(1, &[4, 5], &[0, 1]);
        assert_eq!(lag_rows(&grid_view(2, &[4, 5], &[0, 1]), &bcast), None);
    }
}
