//! Where each base lives: contiguous, balanced blocks of rows over the ranks, or a full
//! copy on every rank for small bases. Every rank computes the same layout from the base
//! and the rank count alone, so no rank ever asks another where something is.

use hassium_core::{Base, View};

/// One base's distribution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    pub nelem: u64,
    /// Elements per unit of ownership ("row"): the product of all but the first extent of
    /// the first view that covers the whole base in C order; for a base without rows of
    /// at least two of the cpu engine's reduction chunks, `CHUNK` elements, so that
    /// blocks start where the chunks of a whole-array reduction start; else 1. The last
    /// row may be short.
    pub row: u64,
    /// False for a base under the replication threshold: every rank holds all of it.
    pub distributed: bool,
    /// The rank count.
    pub ranks: u32,
    /// Where each rank's rows start (and, last, the row count), when the base was laid
    /// out to match the array it is computed from instead of balanced on its own.
    pub bounds: Option<std::sync::Arc<[u64]>>,
}

impl Layout {
    /// The layout of `base` for `ranks` ranks; `view` is the first view of it the batch
    /// names, `replicate_below` the byte size under which a base is copied everywhere.
    pub fn new(base: &Base, view: Option<&View>, ranks: u32, replicate_below: u64) -> Layout {
        let nelem = base.nelem as u64;
        let row = view
            .filter(|v| v.offset == 0 && v.ndim() >= 2 && v.nelem() == base.nelem)
            .filter(|v| v.is_contiguous())
            .map(|v| v.shape[1..].iter().product::<usize>() as u64)
            .filter(|&r| r > 1 && nelem.is_multiple_of(r))
            .unwrap_or({
                let chunk = hassium_codegen::CHUNK as u64;
                if nelem >= 2 * chunk {
                    chunk
                } else {
                    1
                }
            });
        let bytes = nelem * base.dtype.size() as u64;
        Layout {
            nelem,
            row,
            distributed: ranks > 1 && bytes >= replicate_below && nelem.div_ceil(row) >= 2,
            ranks,
            bounds: None,
        }
    }

    /// A base of `base.nelem` elements in rows of `row`, rank r holding rows
    /// `[bounds[r], bounds[r + 1])`: aligned with the array it is computed from, so that
    /// a temporary's rows live where the rows they come from live.
    pub fn aligned(base: &Base, row: u64, bounds: Vec<u64>) -> Layout {
        Layout {
            nelem: base.nelem as u64,
            row,
            distributed: true,
            ranks: (bounds.len() - 1) as u32,
            bounds: Some(bounds.into()),
        }
    }

    /// The element range `[lo, hi)` rank `r` holds and keeps current: its block of rows
    /// (the first `rows % P` ranks get one more), or everything when replicated.
    pub fn block(&self, r: u32) -> (u64, u64) {
        if !self.distributed {
            return (0, self.nelem);
        }
        if let Some(b) = &self.bounds {
            let r = r as usize;
            return (
                (b[r] * self.row).min(self.nelem),
                (b[r + 1] * self.row).min(self.nelem),
            );
        }
        let rows = self.nelem.div_ceil(self.row);
        let p = u64::from(self.ranks);
        let (q, rem) = (rows / p, rows % p);
        let r = u64::from(r);
        let lo = r * q + r.min(rem);
        let hi = lo + q + u64::from(r < rem);
        (
            (lo * self.row).min(self.nelem),
            (hi * self.row).min(self.nelem),
        )
    }

    /// The rank whose block holds element `e` (of a distributed base).
    pub fn owner(&self, e: u64) -> u32 {
        if let Some(b) = &self.bounds {
            let row = e / self.row;
            // The last rank whose first row is at or before `row` (empty ranks skipped).
            let r = b[1..].partition_point(|&start| start <= row);
            return (r as u32).min(self.ranks - 1);
        }
        let rows = self.nelem.div_ceil(self.row);
        let p = u64::from(self.ranks);
        let (q, rem) = (rows / p, rows % p);
        let row = e / self.row;
        // The first `rem` blocks have q + 1 rows.
        let big = rem * (q + 1);
        let r = if row < big {
            row / (q + 1)
        } else {
            rem + (row - big) / q.max(1)
        };
        r.min(p - 1) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hassium_core::{BaseId, DType};

    fn layout(rows: usize, cols: usize, ranks: u32) -> Layout {
        let base = Base {
            id: BaseId(1),
            dtype: DType::Float64,
            nelem: rows * cols,
        };
        let v = View::contiguous(BaseId(1), DType::Float64, &[rows, cols]);
        Layout::new(&base, Some(&v), ranks, 0)
    }

    #[test]
    fn blocks_are_balanced_rows_and_cover_the_base() {
        for ranks in 1..=9 {
            for rows in [2, 3, 7, 8, 100] {
                let l = layout(rows, 5, ranks);
                let mut next = 0;
                for r in 0..ranks {
                    let (lo, hi) = l.block(r);
                    assert_eq!(lo, next);
                    assert_eq!(lo % 5, 0);
                    let n = (hi - lo) / 5;
                    let expect = rows as u64 / u64::from(ranks)
                        + u64::from(u64::from(r) < rows as u64 % u64::from(ranks));
                    assert_eq!(n, if l.distributed { expect } else { rows as u64 });
                    for e in lo..hi {
                        if l.distributed {
                            assert_eq!(l.owner(e), r, "rows {rows} ranks {ranks} e {e}");
                        }
                    }
                    next = hi;
                    if !l.distributed {
                        break;
                    }
                }
                assert_eq!(next, rows as u64 * 5);
            }
        }
    }

    #[test]
    fn a_long_vector_is_cut_at_chunk_boundaries_with_a_short_last_chunk() {
        let chunk = hassium_codegen::CHUNK as u64;
        let n = 5 * chunk + 17;
        let base = Base {
            id: BaseId(1),
            dtype: DType::Float64,
            nelem: n as usize,
        };
        let l = Layout::new(&base, None, 4, 0);
        assert_eq!(l.row, chunk);
        let blocks: Vec<_> = (0..4).map(|r| l.block(r)).collect();
        assert_eq!(
            blocks,
            vec![
                (0, 2 * chunk),
                (2 * chunk, 4 * chunk),
                (4 * chunk, 5 * chunk),
                (5 * chunk, n)
            ]
        );
        for (r, &(lo, hi)) in blocks.iter().enumerate() {
            assert_eq!(l.owner(lo), r as u32);
            assert_eq!(l.owner(hi - 1), r as u32);
        }
    }

    #[test]
    fn small_bases_are_replicated() {
        let base = Base {
            id: BaseId(1),
            dtype: DType::Float64,
            nelem: 100,
        };
        let l = Layout::new(&base, None, 4, 1024);
        assert!(!l.distributed);
        assert_eq!(l.block(3), (0, 100));
        let l = Layout::new(&base, None, 4, 800);
        assert!(l.distributed);
        assert_eq!(l.row, 1);
        assert_eq!(l.block(0), (0, 25));
    }
}
