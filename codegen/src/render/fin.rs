//! The `_fin` functions that combine per-chunk partials in chunk order (`Partials`,
//! `RowPartials`).

use super::out::num;
use super::renderer::{Finish, Renderer};
use crate::dialect::IndexRange;
use crate::lower::BLOCK;
use crate::{ops, Result};

impl Renderer<'_> {
    /// Opens `<name>_fin` (the same signature and prologue as the kernel) with no
    /// registers carried over from the kernel's body.
    pub(super) fn open_fin(&mut self, name: &str) {
        self.regs.clear();
        let sig = self.signature(&format!("{name}_fin"));
        self.out.open(sig);
        self.prologue();
    }

    /// The function combining a `Partials` kernel's per-chunk results, in chunk order.
    pub(super) fn fin(&mut self, name: &str) -> Result<()> {
        self.open_fin(name);
        if self.d.index_range == IndexRange::GlobalId && self.l.group_fin() {
            self.group_fin()?;
            self.out.close();
            return Ok(());
        }
        let nred = self.l.nreductions;
        for (r, n) in self.reductions().into_iter().enumerate() {
            let i = &self.l.instrs[n];
            let t = i.in_dtype;
            let ct = self.d.compute(t);
            let id = ops::identity(self.d, i.op, t)?;
            let g = self.d.global;
            self.out.line(format!("{ct} acc{n} = {id};"));
            let p = format!("*({g}const {ct} *)(part + (c * {nred} + {r}) * 16)");
            let c = self.combine(n, &format!("acc{n}"), p)?;
            self.out.line(format!(
                "for (int64_t c = begin; c < end; c++) acc{n} = {c};"
            ));
        }
        self.finish_accs(Finish::Scalar)?;
        self.epilogue()?;
        self.epilogue_return();
        self.out.close();
        Ok(())
    }

    /// The function combining a `RowPartials` kernel's chunks: per block of `BLOCK`
    /// columns, each reduction's partials in chunk order (a chunk's block of partials
    /// is contiguous), then the block's results and epilogue.
    pub(super) fn row_fin(&mut self, name: &str) -> Result<()> {
        self.open_fin(name);
        if self.d.index_range == IndexRange::GlobalId {
            self.group_row_fin()?;
            self.out.close();
            return Ok(());
        }
        let q = num(self.l.extents[1]);
        let nred = self.l.nreductions;
        self.open_blocks("0", &q);
        self.init_accs(Some(BLOCK), false)?;
        self.out.open("for (int64_t c = begin; c < end; c++)");
        for (r, n) in self.reductions().into_iter().enumerate() {
            let ct = self.d.compute(self.l.instrs[n].in_dtype);
            let g = self.d.global;
            let p = format!("*({g}const {ct} *)(part + ((c * {nred} + {r}) * {q} + i1) * 16)");
            let c = self.combine(n, &format!("acc{n}[i1 - qb]"), p)?;
            self.out.line(format!(
                "for (int64_t i1 = qb; i1 < qe; i1++) acc{n}[i1 - qb] = {c};"
            ));
        }
        self.out.close();
        self.out.open("for (int64_t i1 = qb; i1 < qe; i1++)");
        self.finish_accs(Finish::Element("i1 - qb"))?;
        self.epilogue()?;
        self.out.close();
        self.out.close();
        self.epilogue_return();
        self.out.close();
        Ok(())
    }

    /// A `RowPartials` kernel's `_fin` on a device: work-item `i1` combines column `i1`'s
    /// partials in chunk order and runs its epilogue (a private array of a block of
    /// columns, as the loop form keeps, would live in slow memory on a GPU). A device
    /// engine launches at least [`Lowered::fin_columns`] items.
    ///
    /// [`Lowered::fin_columns`]: crate::Lowered::fin_columns
    fn group_row_fin(&mut self) -> Result<()> {
        let q = num(self.l.extents[1]);
        let nred = self.l.nreductions;
        let g = self.d.global;
        self.out.open("");
        self.out
            .line("const int64_t i1 = (int64_t)get_global_id(0);");
        self.out.line(format!("if (i1 >= {q}) return;"));
        for (r, n) in self.reductions().into_iter().enumerate() {
            let i = &self.l.instrs[n];
            let ct = self.d.compute(i.in_dtype);
            let id = ops::identity(self.d, i.op, i.in_dtype)?;
            self.out.line(format!("{ct} acc{n} = {id};"));
            let p = format!("*({g}const {ct} *)(part + ((c * {nred} + {r}) * {q} + i1) * 16)");
            let c = self.combine(n, &format!("acc{n}"), p)?;
            self.out.line(format!(
                "for (int64_t c = begin; c < end; c++) acc{n} = {c};"
            ));
        }
        self.finish_accs(Finish::Scalar)?;
        self.epilogue()?;
        self.out.close();
        Ok(())
    }
}
