//! Held-back writes (`Plan::Lagged`): the ring of rows, writing a row once no later row
//! of the call reads it, and the `_fin` that writes the rows held back at a call's edges
//! (see `codegen/README.md`).

use super::out::num;
use super::renderer::Renderer;
use crate::lower::ViewKind;
use crate::Result;

impl Renderer<'_> {
    /// The storage type of held-back view `j`.
    fn lag_type(&self, j: usize) -> &'static str {
        self.d.storage(self.l.views[self.l.lagged[j]].dtype)
    }

    /// The ring slot of held-back view `j` that holds row `row` (a C expression).
    fn ring_slot(&self, j: usize, row: &str, lag: usize) -> String {
        format!("lr{j} + (({row} - begin) % {}) * hs_row", lag + 1)
    }

    /// A `Lagged` kernel's `part` layout, per held-back view `j`: a ring of `lag + 1` rows
    /// (`lr{j}`) then `lag` rows of the call's first rows (`lh{j}`), in 8-byte slots.
    pub(super) fn lag_prologue(&mut self) {
        let crate::Plan::Lagged { lag, .. } = self.l.plan else {
            return;
        };
        let row: Vec<String> = self.l.extents[1..].iter().map(|&e| num(e)).collect();
        self.out
            .line(format!("const int64_t hs_row = {};", row.join(" * ")));
        for j in 0..self.l.lagged.len() {
            let st = self.lag_type(j);
            let region = 2 * lag + 1;
            self.out.line(format!(
                "{st} *const lr{j} = ({st} *)(part + {j} * {region} * hs_row * 8);"
            ));
            self.out
                .line(format!("{st} *const lh{j} = lr{j} + {} * hs_row;", lag + 1));
        }
    }

    /// At the top of a `Lagged` kernel's row loop: this row's ring slot.
    pub(super) fn lag_row_open(&mut self) {
        let crate::Plan::Lagged { lag, .. } = self.l.plan else {
            return;
        };
        for j in 0..self.l.lagged.len() {
            let (st, slot) = (self.lag_type(j), self.ring_slot(j, "i0", lag));
            self.out.line(format!("{st} *const lv{j} = {slot};"));
        }
    }

    /// Writes row `hs_w` of each held-back view from `src{j}` to memory.
    fn lag_write_row(&mut self) {
        let n = self.l.extents.len();
        self.out.open("");
        self.out.line("const int64_t i0 = hs_w;");
        for d in 1..n {
            if d + 1 == n {
                self.simd();
            }
            self.open_loop(d, false);
        }
        let at = self.row_index();
        for (j, &w) in self.l.lagged.clone().iter().enumerate() {
            let v = &self.l.views[w];
            if let ViewKind::Data { slot: Some(s) } = v.kind {
                let idx = self.index(v);
                self.out.line(format!("b{s}[{idx}] = src{j}[{at}];"));
            }
        }
        for _ in 0..n {
            self.out.close();
        }
    }

    /// At the bottom of a `Lagged` kernel's row loop: row `i0 - lag` is complete and no
    /// later row of this call reads it; it goes to memory, or, among the call's first
    /// `lag` rows (which the previous call's last rows still read), to `lh`.
    pub(super) fn lag_row_close(&mut self) {
        let crate::Plan::Lagged { lag, .. } = self.l.plan else {
            return;
        };
        self.out.line(format!("const int64_t hs_w = i0 - {lag};"));
        self.out.open("if (hs_w >= begin)");
        for j in 0..self.l.lagged.len() {
            let (st, slot) = (self.lag_type(j), self.ring_slot(j, "hs_w", lag));
            self.out.line(format!("const {st} *const src{j} = {slot};"));
        }
        self.out.open(format!("if (hs_w < begin + {lag})"));
        for j in 0..self.l.lagged.len() {
            self.out.line(format!(
                "for (int64_t k = 0; k < hs_row; k++) lh{j}[(hs_w - begin) * hs_row + k] = src{j}[k];"
            ));
        }
        self.out.close();
        self.out.open("else");
        self.lag_write_row();
        self.out.close();
        self.out.close();
    }

    /// The `_fin` of a `Lagged` kernel: writes the call's first `lag` rows (from `lh`)
    /// and its last `lag` rows (still in the ring), once every call has read its rows.
    pub(super) fn lag_fin(&mut self, name: &str) -> Result<()> {
        let crate::Plan::Lagged { lag, .. } = self.l.plan else {
            return Ok(());
        };
        self.open_fin(name);
        self.out
            .open("for (int64_t hs_w = begin; hs_w < end; hs_w++)");
        for j in 0..self.l.lagged.len() {
            let (st, slot) = (self.lag_type(j), self.ring_slot(j, "hs_w", lag));
            self.out.line(format!(
                "const {st} *const src{j} = hs_w >= end - {lag} ? {slot} : lh{j} + (hs_w - begin) * hs_row;"
            ));
        }
        self.out.line(format!(
            "if (hs_w >= begin + {lag} && hs_w < end - {lag}) continue;"
        ));
        self.lag_write_row();
        self.out.close();
        self.epilogue_return();
        self.out.close();
        Ok(())
    }
}
