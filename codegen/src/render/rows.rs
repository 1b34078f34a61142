//! `RowPartials`: a chunk of rows summed into one accumulator per column, left as the
//! chunk's partials for `row_fin`.

use super::groups::STRIP_LOOP_PRAGMA;
use super::out::num;
use super::renderer::{Acc, Renderer};
use crate::dialect::IndexRange;
use crate::lower::{BLOCK, ROW_PARTIALS_COLUMNS, WIDE};
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
        if self.d.index_range == IndexRange::GlobalId && self.l.group_row_partials() {
            return self.group_row_partials(rows);
        }
        if self.d.index_range == IndexRange::GlobalId && self.l.item_per_column() {
            return self.item_per_column(rows);
        }
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

    /// A `RowPartials` kernel for a device: one work-group per chunk (see
    /// [`Lowered::group_row_partials`]). For each block of up to `get_local_size(0)`
    /// columns, rounds of as many whole rows as fit in the group: item `lid` computes row
    /// `lid / width`, column `lid % width` of the round into the local buffers `t<n>`,
    /// then item `c < width` adds the round's column `c` into its accumulator row by row,
    /// which is the one-item form's order (each column's rows in turn).
    ///
    /// [`Lowered::group_row_partials`]: crate::Lowered::group_row_partials
    fn group_row_partials(&mut self, rows: usize) -> Result<()> {
        let reductions = self.reductions();
        let q = num(self.l.extents[1]);
        let nred = self.l.nreductions;
        let g = self.d.global;
        // OpenCL C 1.2 allows local variables only at kernel function scope.
        for &n in &reductions {
            let ct = self.d.compute(self.l.instrs[n].in_dtype);
            self.out.line(format!("__local {ct} t{n}[{WIDE}];"));
        }
        self.open_chunk_group(rows);
        self.out.line(STRIP_LOOP_PRAGMA);
        self.out
            .open(format!("for (int64_t qb = 0; qb < {q}; qb += wide)"));
        self.out.line(format!(
            "const int64_t width = {q} - qb < wide ? {q} - qb : wide;"
        ));
        self.out.line("const int64_t per = wide / width;");
        self.init_accs(Some(1), false)?;
        self.out.line(STRIP_LOOP_PRAGMA);
        self.out.open("for (int64_t rb = c0; rb < c1; rb += per)");
        self.out
            .line("const int64_t rn = c1 - rb < per ? c1 - rb : per;");
        self.out.open("if (lid < rn * width)");
        self.out.line("const int64_t i0 = rb + lid / width;");
        self.out.line("const int64_t i1 = qb + lid % width;");
        self.body(Acc::Buffer("lid"))?;
        self.out.close();
        self.out.line(self.d.barrier);
        self.out.open("if (lid < width)");
        self.out.line(STRIP_LOOP_PRAGMA);
        self.out.open("for (int64_t k = 0; k < rn; k++)");
        self.fold(&reductions, "0", "k * width + lid")?;
        self.out.close();
        self.out.close();
        // The next round overwrites `t<n>` only once the columns have read it.
        self.out.line(self.d.barrier);
        self.out.close();
        self.out.open("if (lid < width)");
        for (r, &n) in reductions.iter().enumerate() {
            let ct = self.d.compute(self.l.instrs[n].in_dtype);
            self.out.line(format!(
                "*({g}{ct} *)(part + (((c0 / {rows}) * {nred} + {r}) * {q} + qb + lid) * 16) = acc{n}[0];"
            ));
        }
        self.out.close();
        self.out.close();
        self.out.close();
        Ok(())
    }

    /// A `RowPartials` kernel of more than `BLOCK` columns for a device: a work-item per
    /// chunk and column (see [`Lowered::item_per_column`]) adds up its column's rows of
    /// the chunk in order, as the one-item form does, into a scalar accumulator.
    ///
    /// [`Lowered::item_per_column`]: crate::Lowered::item_per_column
    fn item_per_column(&mut self, rows: usize) -> Result<()> {
        let q = num(self.l.extents[1]);
        let nred = self.l.nreductions;
        let g = self.d.global;
        self.out.open("");
        self.out
            .line("const int64_t g = (int64_t)get_global_id(0);");
        self.out.line(format!("const int64_t i1 = g % {q};"));
        self.out
            .line(format!("const int64_t c0 = begin + (g / {q}) * {rows};"));
        self.out.line("if (c0 >= end) return;");
        self.out.line(format!(
            "const int64_t c1 = c0 + {rows} < end ? c0 + {rows} : end;"
        ));
        self.init_accs(None, false)?;
        self.out.open("for (int64_t i0 = c0; i0 < c1; i0++)");
        self.body(Acc::Scalar)?;
        self.out.close();
        for (r, n) in self.reductions().into_iter().enumerate() {
            let ct = self.d.compute(self.l.instrs[n].in_dtype);
            self.out.line(format!(
                "*({g}{ct} *)(part + (((c0 / {rows}) * {nred} + {r}) * {q} + i1) * 16) = acc{n};"
            ));
        }
        self.out.close();
        Ok(())
    }
}
