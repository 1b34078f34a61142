//! `RowPartials`: a chunk of rows summed into one accumulator per column, left as the
//! chunk's partials for `row_fin`.

use super::out::num;
use super::renderer::{Acc, Renderer};
use crate::dialect::IndexRange;
use crate::lower::{BLOCK, ROW_PARTIALS_COLUMNS};
use crate::Result;

impl Renderer<'_> {
    /// A `RowPartials` kernel: chunks of `rows` rows, each summing its rows into one
    /// accumulator per column (the simd loop runs along the row, as `ReduceOuter`'s
    /// does) and leaving them as its partials, at `((chunk * reductions + r) * columns +
    /// column) * 16` bytes into `part`. More than `BLOCK` columns (`wide`) take
    /// accumulators for `ROW_PARTIALS_COLUMNS` on a CPU (one pass over the rows streams
    /// at about twice the rate of a pass per block of columns), and a pass per block of
    /// `BLOCK` columns on a device, whose work-items' private arrays must stay small:
    /// the same sums in the same order either way.
    pub(super) fn row_partials(&mut self, rows: usize, wide: bool) -> Result<()> {
        let q = num(self.l.extents[1]);
        self.open_par("c0", &rows.to_string());
        self.out.line(format!(
            "const int64_t c1 = c0 + {rows} < end ? c0 + {rows} : end;"
        ));
        let blocks = wide && self.d.index_range == IndexRange::GlobalId;
        let (lo, hi, ix) = if blocks {
            self.open_blocks("0", &q);
            ("qb", "qe".to_string(), "i1 - qb")
        } else {
            ("0", q.clone(), "i1")
        };
        let count = if wide && !blocks {
            ROW_PARTIALS_COLUMNS
        } else {
            BLOCK
        };
        self.init_accs(Some(count), false)?;
        self.out.open("for (int64_t i0 = c0; i0 < c1; i0++)");
        self.simd();
        self.out
            .open(format!("for (int64_t i1 = {lo}; i1 < {hi}; i1++)"));
        self.body(Acc::Indexed(ix))?;
        self.out.close();
        self.out.close();
        let nred = self.l.nreductions;
        for (r, n) in self.reductions().into_iter().enumerate() {
            let ct = self.d.compute(self.l.instrs[n].in_dtype);
            let g = self.d.global;
            self.out
                .open(format!("for (int64_t i1 = {lo}; i1 < {hi}; i1++)"));
            self.out.line(format!(
                "*({g}{ct} *)(part + (((c0 / {rows}) * {nred} + {r}) * {q} + i1) * 16) = acc{n}[{ix}];"
            ));
            self.out.close();
        }
        if blocks {
            self.out.close();
        }
        self.out.close();
        Ok(())
    }
}
