//! One kernel's function: its signature and prologue, and the loop nest of each loop
//! structure (`Structure`), which the other parts fill.

use super::instr::checks_power;
use super::out::num;
use super::renderer::{Acc, Divisors, Finish, Renderer};
use crate::dialect::{BufferPassing, IndexRange};
use crate::lower::{Arg, Space, Structure, BLOCK, CHUNK, LANES};
use crate::Result;
use hassium_core::Opcode;

impl Renderer<'_> {
    pub(super) fn function(&mut self, name: &str) -> Result<()> {
        if self.l.is_lagged() && self.d.index_range != IndexRange::Loop {
            return Err(crate::Error::Unsupported(
                "held-back writes need a pass after every work-item".into(),
            ));
        }
        let sig = self.signature(name);
        self.out.open(sig);
        self.prologue();
        let slots = self.divisor_slots();
        if slots.is_empty() {
            self.structure()?;
        } else {
            self.divided_nests(&slots)?;
        }
        self.epilogue_return();
        self.out.close();
        match self.l.structure {
            Structure::Partials => self.fin(name)?,
            Structure::RowPartials { .. } => self.row_fin(name)?,
            _ => {}
        }
        self.lag_fin(name)?;
        Ok(())
    }

    /// The loops of the kernel's structure (`Structure`), with its accumulators.
    fn structure(&mut self) -> Result<()> {
        let nloops = self.l.extents.len();
        match self.l.structure {
            Structure::Elementwise
                if self.d.index_range == IndexRange::GlobalId && self.l.tiled_rows() =>
            {
                self.tiled_rows()?;
            }
            Structure::Elementwise => self.elementwise_nest(nloops)?,
            Structure::ReduceInner { axis, .. }
                if self.d.index_range == IndexRange::GlobalId && self.l.group_rows() =>
            {
                self.group_rows(axis)?;
            }
            Structure::Scan { axis } | Structure::ReduceInner { axis, .. } => {
                let outer: Vec<usize> = (0..nloops).filter(|&d| d != axis).collect();
                if outer.is_empty() {
                    self.out.open("if (begin < end)");
                }
                let lanes = matches!(self.l.structure, Structure::ReduceInner { lanes: true, .. });
                let is_scan = matches!(self.l.structure, Structure::Scan { .. });
                let short = lanes && self.short_rows(axis, outer.len());
                for (k, &d) in outer.iter().enumerate() {
                    if short && k + 1 == outer.len() {
                        self.simd();
                    }
                    self.open_loop(d, k == 0);
                }
                self.init_accs((lanes && !short).then_some(LANES), is_scan)?;
                let e = num(self.l.extents[axis]);
                if short {
                    if let Some(p) = self.d.unroll {
                        self.out.line(p);
                    }
                    self.out.open(format!(
                        "for (int64_t i{axis} = 0; i{axis} < {e}; i{axis}++)"
                    ));
                    self.body(Acc::Scalar)?;
                    self.out.close();
                    self.finish_accs(Finish::Scalar)?;
                } else if lanes && self.d.simd.is_some() {
                    self.lanes_blocked(&format!("i{axis}"), "0", &e)?;
                    self.finish_accs(Finish::Fold("acc"))?;
                } else if lanes {
                    self.lanes_strips(&format!("i{axis}"), "0", &e)?;
                    self.finish_accs(Finish::Fold("acc"))?;
                } else {
                    self.out.open(format!(
                        "for (int64_t i{axis} = 0; i{axis} < {e}; i{axis}++)"
                    ));
                    self.body(Acc::Scalar)?;
                    self.out.close();
                    if !is_scan {
                        self.finish_accs(Finish::Scalar)?;
                    }
                }
                self.epilogue()?;
                for _ in 1..outer.len().max(1) {
                    self.out.close();
                }
                self.lag_row_close();
                self.out.close();
            }
            Structure::ReduceOuter { .. } | Structure::ScanOuter { .. }
                if self.d.index_range == IndexRange::GlobalId && self.l.outer_item_per_column() =>
            {
                self.outer_item_per_column()?;
            }
            Structure::ReduceOuter { axis } | Structure::ScanOuter { axis } => {
                let scan = matches!(self.l.structure, Structure::ScanOuter { .. });
                let q = axis + 1;
                for d in 0..axis {
                    self.open_loop(d, d == 0);
                }
                let eq = num(self.l.extents[q]);
                let (lo, hi) = if axis == 0 {
                    ("begin", "end")
                } else {
                    ("0", eq.as_str())
                };
                if axis == 0 {
                    self.open_par("qb", &BLOCK.to_string());
                    self.block_end(hi);
                } else {
                    self.open_blocks(lo, hi);
                }
                self.init_accs(Some(BLOCK), scan)?;
                let e = num(self.l.extents[axis]);
                self.out.open(format!(
                    "for (int64_t i{axis} = 0; i{axis} < {e}; i{axis}++)"
                ));
                self.simd();
                self.out
                    .open(format!("for (int64_t i{q} = qb; i{q} < qe; i{q}++)"));
                let ix = format!("i{q} - qb");
                self.body(Acc::Indexed(&ix))?;
                self.out.close();
                self.out.close();
                let epilogue = self.l.instrs.iter().any(|i| i.space == Space::Epilogue);
                if !scan || epilogue {
                    self.out
                        .open(format!("for (int64_t i{q} = qb; i{q} < qe; i{q}++)"));
                    if !scan {
                        self.finish_accs(Finish::Element(&ix))?;
                    }
                    self.epilogue()?;
                    self.out.close();
                }
                self.out.close();
                for _ in 0..axis {
                    self.out.close();
                }
            }
            Structure::RowPartials { rows, wide } => self.row_partials(rows, wide)?,
            Structure::Partials
                if self.d.index_range == IndexRange::GlobalId && self.l.group_partials() =>
            {
                self.group_partials()?;
            }
            Structure::Partials => {
                self.open_par("c0", &CHUNK.to_string());
                self.out.line(format!(
                    "const int64_t c1 = c0 + {CHUNK} < end ? c0 + {CHUNK} : end;"
                ));
                self.init_accs(Some(LANES), false)?;
                if self.d.simd.is_some() {
                    self.lanes_blocked("i0", "c0", "c1")?;
                } else {
                    self.lanes_strips("i0", "c0", "c1")?;
                }
                self.store_chunk_partials("acc")?;
                self.out.close();
            }
        }
        Ok(())
    }

    /// The loop nest of an elementwise kernel over `nloops` loops.
    fn elementwise_nest(&mut self, nloops: usize) -> Result<()> {
        if nloops == 0 {
            self.out.open("if (begin < end)");
        }
        for d in 0..nloops {
            if d + 1 == nloops {
                self.simd();
            }
            self.open_loop(d, d == 0);
        }
        self.body(Acc::Scalar)?;
        for _ in 1..nloops.max(1) {
            self.out.close();
        }
        self.lag_row_close();
        self.out.close();
        Ok(())
    }

    /// The scalar slots an integer floor division or remainder of this kernel divides
    /// by, when the kernel's loops may vectorise (a CPU dialect's simd loops, no
    /// held-back rows), whatever its structure (elementwise, reduction, scan). No vector unit divides integers, so such a loop stays scalar at
    /// one hardware division per element (`(i + 2 * j) % 256` building an image: 70% of
    /// a Harris-corner program's time), and the divisor is a runtime slot, not a literal
    /// the C compiler could reduce. See [`Self::divided_nests`].
    fn divisor_slots(&self) -> Vec<usize> {
        if !self.simd_ok() || self.l.is_lagged() {
            return Vec::new();
        }
        let mut slots: Vec<usize> = (self.l.instrs.iter())
            .filter(|i| {
                matches!(i.op, Opcode::FloorDivide | Opcode::Remainder) && i.in_dtype.is_integer()
            })
            .filter_map(|i| match i.args.get(1) {
                Some(Arg::Scalar(j)) => Some(*j),
                _ => None,
            })
            .collect();
        slots.sort_unstable();
        slots.dedup();
        slots
    }

    /// The kernel's loops three times, chosen once per call by the divisors in `slots`: when
    /// all are positive powers of two, shifts and masks; when all are positive and small
    /// (below 2^21 for 64-bit types), a floating-point estimate of the quotient corrected
    /// by the remainder's sign, exact there (see the prelude's `hs_sdiv_*`); otherwise
    /// NumPy's integer rules. The first two vectorise — the second for 32- and 64-bit
    /// types only where the target converts int64 and double in vectors (`HS_WIDE_FCVT`;
    /// elsewhere the C compiler drops that nest, and the hardware division is faster).
    fn divided_nests(&mut self, slots: &[usize]) -> Result<()> {
        let all = |f: &dyn Fn(usize) -> String| {
            slots.iter().map(|&j| f(j)).collect::<Vec<_>>().join(" && ")
        };
        let pow2 = all(&|j| format!("s{j} > 0 && (s{j} & (s{j} - 1)) == 0"));
        let small = all(&|j| {
            if self.l.scalars[j].dtype().size() == 8 {
                format!("s{j} > 0 && s{j} < 2097152")
            } else {
                format!("s{j} > 0")
            }
        });
        let wide = (slots.iter()).any(|&j| self.l.scalars[j].dtype().size() >= 4);
        let small = if wide {
            format!("HS_WIDE_FCVT && {small}")
        } else {
            small
        };
        self.out.open(format!("if ({pow2})"));
        for &j in slots {
            let divides = self
                .l
                .instrs
                .iter()
                .any(|i| i.op == Opcode::FloorDivide && i.args.get(1) == Some(&Arg::Scalar(j)));
            if divides {
                self.out.line(format!(
                    "const int sh{j} = __builtin_ctzll((uint64_t)s{j});"
                ));
            }
        }
        self.divisors = Divisors::PowerOfTwo;
        self.structure()?;
        self.out.close();
        self.out.open(format!("else if ({small})"));
        for &j in slots {
            let f = if self.l.scalars[j].dtype().size() <= 2 {
                "float"
            } else {
                "double"
            };
            self.out
                .line(format!("const {f} inv{j} = ({f})1 / ({f})s{j};"));
        }
        self.divisors = Divisors::Small;
        self.structure()?;
        self.out.close();
        self.out.open("else");
        self.divisors = Divisors::Any;
        self.structure()?;
        self.out.close();
        Ok(())
    }

    /// An elementwise kernel of two or more loops for a device, rows tiled over
    /// work-groups (see [`Lowered::tiled_rows`]): `s` is the log2 of the stride of a row,
    /// the power of two at or above its length `ek` and at most the group's size; item
    /// `g` of the range takes row `g >> s` and the row's elements `g % 2^s`,
    /// `g % 2^s + 2^s`, …, so neighbouring items touch neighbouring elements.
    ///
    /// [`Lowered::tiled_rows`]: crate::Lowered::tiled_rows
    fn tiled_rows(&mut self) -> Result<()> {
        let last = self.l.extents.len() - 1;
        let ek = num(self.l.extents[last]);
        self.out.open("");
        self.out
            .line("const int64_t lsz = (int64_t)get_local_size(0);");
        self.out.line("int s = 0;");
        self.out.line(format!(
            "while (((int64_t)1 << s) < {ek} && ((int64_t)1 << s) < lsz) s++;"
        ));
        self.out
            .line("const int64_t g = (int64_t)get_global_id(0);");
        self.out.line("const int64_t i0 = begin + (g >> s);");
        let ret = if self.d.entry_returns_status {
            "return 0;"
        } else {
            "return;"
        };
        self.out.line(format!("if (i0 >= end) {ret}"));
        for d in 1..last {
            self.open_loop(d, false);
        }
        self.out.open(format!(
            "for (int64_t i{last} = g & (((int64_t)1 << s) - 1); i{last} < {ek}; i{last} += (int64_t)1 << s)"
        ));
        self.body(Acc::Scalar)?;
        self.out.close();
        for _ in 1..last {
            self.out.close();
        }
        self.out.close();
        Ok(())
    }

    /// A reduction or scan along axis 0 for a device, one work-item per column (see
    /// [`Lowered::outer_item_per_column`]): column `i1` walks its rows in order.
    ///
    /// [`Lowered::outer_item_per_column`]: crate::Lowered::outer_item_per_column
    fn outer_item_per_column(&mut self) -> Result<()> {
        let scan = matches!(self.l.structure, Structure::ScanOuter { .. });
        self.open_par("i1", "1");
        self.init_accs(None, scan)?;
        let e = num(self.l.extents[0]);
        self.out
            .open(format!("for (int64_t i0 = 0; i0 < {e}; i0++)"));
        self.body(Acc::Scalar)?;
        self.out.close();
        if !scan {
            self.finish_accs(Finish::Scalar)?;
        }
        self.epilogue()?;
        self.out.close();
        Ok(())
    }

    pub(super) fn signature(&self, name: &str) -> String {
        let d = self.d;
        let ret = if d.entry_returns_status {
            "int32_t"
        } else {
            "void"
        };
        let g = d.global;
        let bufs = match d.buffers {
            BufferPassing::Array => "char *const *bufs".to_string(),
            BufferPassing::Params => self
                .l
                .slot_dtypes
                .iter()
                .enumerate()
                .map(|(s, t)| format!("{g}{} *{} b{s}", d.storage(*t), d.restrict))
                .collect::<Vec<_>>()
                .join(", "),
        };
        let sep = if bufs.is_empty() { "" } else { ", " };
        format!(
            "{}{ret} {name}(int64_t begin, int64_t end{sep}{bufs}, {g}const char *scal, {g}const int64_t *meta, {g}char *part, {g}int64_t *err)",
            d.entry_qualifier
        )
    }

    pub(super) fn prologue(&mut self) {
        let d = self.d;
        if d.buffers == BufferPassing::Array {
            for (s, t) in self.l.slot_dtypes.iter().enumerate() {
                let st = d.storage(*t);
                self.out
                    .line(format!("{st} *{} b{s} = ({st} *)bufs[{s}];", d.restrict));
            }
        }
        for (j, sc) in self.l.scalars.iter().enumerate() {
            let t = sc.dtype();
            let (st, ct) = (d.storage(t), d.compute(t));
            self.out.line(format!(
                "const {ct} s{j} = ({ct})*({}const {st} *)(scal + {});",
                d.global,
                16 * j
            ));
        }
        for k in 0..self.l.meta.len() {
            self.out.line(format!("const int64_t m{k} = meta[{k}];"));
        }
        self.out
            .line("(void)scal; (void)meta; (void)part; (void)err;");
        self.lag_prologue();
    }

    pub(super) fn epilogue_return(&mut self) {
        if self.d.entry_returns_status {
            self.out.line("return 0;");
        }
    }

    /// Opens a loop over loop `d`: the parallel one walks `[begin, end)`.
    pub(super) fn open_loop(&mut self, d: usize, parallel: bool) {
        let e = num(self.l.extents[d]);
        if parallel {
            self.open_par(&format!("i{d}"), "1");
            self.lag_row_open();
        } else {
            self.out
                .open(format!("for (int64_t i{d} = 0; i{d} < {e}; i{d}++)"));
        }
    }

    /// Opens the parallel loop over `[begin, end)` in steps of `step`.
    pub(super) fn open_par(&mut self, var: &str, step: &str) {
        // A `Serial` plan is one call over its whole range (scatters apply their updates
        // in order): one work-item walks it, whatever the dialect.
        let range = if matches!(self.l.plan, crate::Plan::Serial { .. }) {
            IndexRange::Loop
        } else {
            self.d.index_range
        };
        match range {
            IndexRange::Loop => {
                let inc = if step == "1" {
                    format!("{var}++")
                } else {
                    format!("{var} += {step}")
                };
                self.out
                    .open(format!("for (int64_t {var} = begin; {var} < end; {inc})"));
            }
            IndexRange::GlobalId => {
                self.out.open("");
                let mul = if step == "1" {
                    String::new()
                } else {
                    format!(" * {step}")
                };
                self.out.line(format!(
                    "const int64_t {var} = begin + (int64_t)get_global_id(0){mul};"
                ));
                let ret = if self.d.entry_returns_status {
                    "return 0;"
                } else {
                    "return;"
                };
                self.out.line(format!("if ({var} >= end) {ret}"));
            }
        }
    }

    /// Opens a loop over blocks `[qb, qe)` of `BLOCK` columns of `[lo, hi)`.
    pub(super) fn open_blocks(&mut self, lo: &str, hi: &str) {
        self.out
            .open(format!("for (int64_t qb = {lo}; qb < {hi}; qb += {BLOCK})"));
        self.block_end(hi);
    }

    /// Declares `qe`, the end of the block of `BLOCK` columns starting at `qb`.
    fn block_end(&mut self, hi: &str) {
        self.out.line(format!(
            "const int64_t qe = qb + {BLOCK} < {hi} ? qb + {BLOCK} : {hi};"
        ));
    }

    pub(super) fn body(&mut self, acc: Acc<'_>) -> Result<()> {
        let saved = self.regs.clone();
        for n in 0..self.l.instrs.len() {
            if self.l.instrs[n].space == Space::Body {
                self.instr(n, acc)?;
            }
        }
        self.regs = saved;
        Ok(())
    }

    pub(super) fn epilogue(&mut self) -> Result<()> {
        for n in 0..self.l.instrs.len() {
            if self.l.instrs[n].space == Space::Epilogue {
                self.instr(n, Acc::Scalar)?;
            }
        }
        Ok(())
    }

    /// Whether the innermost loop may carry the dialect's simd pragma: iterations are
    /// independent (the fuser only puts identical or disjoint accesses in one kernel) and
    /// the loop has no early exit (bounds-checked gathers and scatters return from it).
    pub(super) fn simd_ok(&self) -> bool {
        self.d.simd.is_some()
            && self.l.randoms.is_empty()
            && !self.l.instrs.iter().any(checks_power)
            && !matches!(self.l.plan, crate::Plan::Serial { .. })
    }

    /// Emits the simd pragma before the loop opened next, where allowed.
    pub(super) fn simd(&mut self) {
        if let (true, Some(p)) = (self.simd_ok(), self.d.simd) {
            self.out.line(p);
        }
    }
}
