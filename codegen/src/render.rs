//! Rendering a [`Lowered`] kernel as C-dialect source through a [`Dialect`] table.

use crate::dialect::{BufferPassing, IndexRange};
use crate::lower::{
    Arg, LInstr, LView, Num, Space, Structure, ViewKind, BLOCK, CHUNK, LANES, ROW_PARTIALS_COLUMNS,
};
use crate::ops;
use crate::{prelude, Dialect, Lowered, Result};
use hassium_core::{status, DType, Opcode};
use std::collections::HashMap;
use std::fmt::Write;

/// How a reduction's update and result are written in the current loop structure.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Acc<'a> {
    /// `acc[index]` (lanes or a block of outputs).
    Indexed(&'a str),
    /// A scalar accumulator (scans, arg-reductions).
    Scalar,
    /// No update: the value goes to `t<n>[index]`, a block buffer folded in afterwards.
    Buffer(&'a str),
}

/// Where `finish_accs` takes each reduction's result from.
#[derive(Clone, Copy)]
enum Finish<'a> {
    /// The scalar `acc<n>`.
    Scalar,
    /// Element `index` of `acc<n>` (a block of outputs).
    Element(&'a str),
    /// The `LANES` lanes of the array `<array><n>`, folded in lane order.
    Fold(&'a str),
}

/// Values of a lane reduction computed per block before they are folded into the lanes
/// (a multiple of `LANES`, and `CHUNK` a multiple of it, so the order of the fold is the
/// unblocked one).
const TILE: usize = 256;
const _: () = assert!(TILE.is_multiple_of(LANES) && CHUNK.is_multiple_of(TILE));

/// Keeps a device compiler from unrolling the strip loop of a work-group reduction
/// (`group_rows`, `group_partials`), whose tail loop follows it. NVIDIA's OpenCL compiler
/// (driver 580, NVVM 7, at every `-cl-nv-opt-level`; `-cl-opt-disable` aside) unrolled
/// that loop by four and then addressed the tail a row away when a row was walked
/// backwards and a second reduction shared the loop: seed 52 of the random programs,
/// reproduced standalone with the engine's kernel source. Without unrolling, the same
/// build gave the right sums.
const STRIP_LOOP_PRAGMA: &str = "#pragma unroll 1";

struct Out {
    text: String,
    depth: usize,
}

impl Out {
    fn line(&mut self, s: impl AsRef<str>) {
        for _ in 0..self.depth {
            self.text.push_str("  ");
        }
        self.text.push_str(s.as_ref());
        self.text.push('\n');
    }
    fn open(&mut self, s: impl AsRef<str>) {
        self.line(format!("{} {{", s.as_ref()));
        self.depth += 1;
    }
    fn close(&mut self) {
        self.depth -= 1;
        self.line("}");
    }
}

fn num(n: Num) -> String {
    match n {
        Num::Lit(v) => v.to_string(),
        Num::Meta(i) => format!("m{i}"),
    }
}

struct Renderer<'a> {
    d: &'a Dialect,
    l: &'a Lowered,
    out: Out,
    /// View id → the register holding its current value.
    regs: HashMap<usize, String>,
}

impl Renderer<'_> {
    /// The element index of a loop-indexed view at the current loop variables.
    fn index(&self, v: &LView) -> String {
        let mut terms = Vec::new();
        if v.offset != Num::Lit(0) {
            terms.push(num(v.offset));
        }
        for (d, s) in v.strides.iter().enumerate() {
            match s {
                Num::Lit(0) => {}
                Num::Lit(1) => terms.push(format!("i{d}")),
                s => terms.push(format!("i{d} * {}", num(*s))),
            }
        }
        if terms.is_empty() {
            "0".into()
        } else {
            terms.join(" + ")
        }
    }

    fn load(&self, id: usize) -> Result<String> {
        if let Some(r) = self.regs.get(&id) {
            return Ok(r.clone());
        }
        let v = &self.l.views[id];
        match v.kind {
            ViewKind::Linear => Ok(format!("({})", self.index(v))),
            ViewKind::Data { slot: Some(s) } => {
                let e = format!("b{s}[{}]", self.index(v));
                Ok(if v.dtype == DType::Float16 {
                    format!("((float){e})")
                } else {
                    e
                })
            }
            ViewKind::Data { slot: None } => Err(crate::Error::Unsupported(
                "a contracted base read through a view other than the one that wrote it".into(),
            )),
        }
    }

    fn arg(&self, a: &Arg) -> Result<String> {
        match a {
            Arg::View(id) => self.load(*id),
            Arg::Scalar(j) => Ok(format!("s{j}")),
            Arg::Random(_) => Err(crate::Error::Malformed(
                "random-access operand in value position".into(),
            )),
        }
    }

    fn store(&mut self, id: usize, value: &str) {
        let v = &self.l.views[id];
        if let Some(j) = self.l.lagged.iter().position(|&w| w == id) {
            // Into this row's ring slot; the row reaches memory `lag` rows later.
            let st = self.d.storage(v.dtype);
            let at = self.row_index();
            self.out.line(format!("lv{j}[{at}] = ({st}){value};"));
        } else if let ViewKind::Data { slot: Some(s) } = v.kind {
            let st = self.d.storage(v.dtype);
            let idx = self.index(v);
            self.out.line(format!("b{s}[{idx}] = ({st}){value};"));
        }
        self.regs.insert(id, value.to_string());
    }

    /// The position of the current element within its row (loops 1.., row-major).
    fn row_index(&self) -> String {
        let n = self.l.extents.len();
        let mut terms = Vec::new();
        for d in 1..n {
            let mut t = vec![format!("i{d}")];
            t.extend(self.l.extents[d + 1..].iter().map(|&e| num(e)));
            terms.push(t.join(" * "));
        }
        if terms.is_empty() {
            "0".into()
        } else {
            terms.join(" + ")
        }
    }

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
    fn lag_prologue(&mut self) {
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
    fn lag_row_open(&mut self) {
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
    fn lag_row_close(&mut self) {
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
    fn lag_fin(&mut self, name: &str) -> Result<()> {
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

    fn fail(&self, code: i64) -> String {
        if self.d.entry_returns_status {
            format!("return {code};")
        } else {
            format!("{{ err[2] = {code}; return; }}")
        }
    }

    /// Like [`Self::fail`], for a failure inside any kernel, where a work-item must not
    /// leave early (work-groups that reduce together wait for all of their items at each
    /// barrier): an OpenCL item only records the status and runs on; a CPU kernel
    /// returns, as no other call waits for it.
    fn fail_later(&self, code: i64) -> String {
        if self.d.entry_returns_status {
            format!("return {code};")
        } else {
            format!("err[2] = {code};")
        }
    }

    /// A checked index into random-access view `r` from int64 expression `idx`.
    fn checked(&mut self, n: usize, r: usize, idx: &str) -> String {
        let ra = &self.l.randoms[r];
        let (len, off, stride) = (num(ra.len), num(ra.offset), num(ra.stride));
        self.out.line(format!("int64_t j{n} = (int64_t)({idx});"));
        self.out.line(format!("if (j{n} < 0) j{n} += {len};"));
        let fail = self.fail(status::OUT_OF_BOUNDS);
        self.out.line(format!(
            "if ((uint64_t)j{n} >= (uint64_t){len}) {{ err[0] = (int64_t)({idx}); err[1] = {len}; {fail} }}"
        ));
        let mut at = String::new();
        if off != "0" {
            write!(at, "{off} + ").ok();
        }
        if stride == "1" {
            write!(at, "j{n}").ok();
        } else {
            write!(at, "j{n} * {stride}").ok();
        }
        format!("b{}[{at}]", ra.slot)
    }

    /// Renders instruction `n` (body or epilogue); `acc` says how reductions update.
    fn instr(&mut self, n: usize, acc: Acc<'_>) -> Result<()> {
        let i: &LInstr = &self.l.instrs[n];
        let (d, t, ot) = (self.d, i.in_dtype, i.out_dtype);
        let ct = d.compute(t);
        let oct = d.compute(ot);
        if i.op.is_reduction() {
            let v = self.arg(&i.args[0])?;
            self.out.line(format!("const {ct} v{n} = {v};"));
            let v = format!("v{n}");
            match (i.op, acc) {
                (Opcode::ArgminReduce | Opcode::ArgmaxReduce, _) => {
                    let ax = match self.l.structure {
                        Structure::ReduceInner { axis, .. } => axis,
                        _ => 0,
                    };
                    let cmp = if i.op == Opcode::ArgmaxReduce {
                        ">"
                    } else {
                        "<"
                    };
                    let better = if t.is_float() {
                        format!("({v} {cmp} acc{n} || (isnan({v}) && !isnan(acc{n})))")
                    } else {
                        format!("({v} {cmp} acc{n})")
                    };
                    self.out.open(format!("if (i{ax} == 0 || {better})"));
                    self.out.line(format!("acc{n} = {v};"));
                    self.out.line(format!("ai{n} = i{ax};"));
                    self.out.close();
                }
                (_, Acc::Buffer(ix)) => {
                    self.out.line(format!("t{n}[{ix}] = {v};"));
                }
                (_, Acc::Indexed(ix)) => {
                    let c = self.combine(n, &format!("acc{n}[{ix}]"), v)?;
                    self.out.line(format!("acc{n}[{ix}] = {c};"));
                }
                (_, Acc::Scalar) => {
                    let c = self.combine(n, &format!("acc{n}"), v)?;
                    self.out.line(format!("acc{n} = {c};"));
                }
            }
            return Ok(());
        }
        if i.op.is_scan() {
            let v = self.arg(&i.args[0])?;
            let a = match acc {
                Acc::Indexed(ix) => format!("acc{n}[{ix}]"),
                _ => format!("acc{n}"),
            };
            let c = self.combine(n, &a, v)?;
            self.out.line(format!("{a} = {c};"));
            let out = i.out.unwrap_or(0);
            self.out.line(format!("const {oct} r{n} = {a};"));
            self.store(out, &format!("r{n}"));
            return Ok(());
        }
        let expr = match i.op {
            // Through float64 for every float type: an index is below 2^53, so the
            // float64 value is exact and one more rounding is the only one.
            Opcode::Range if ot.is_float() => {
                let wide = ops::cast(d, DType::Int64, DType::Float64, &self.arg(&i.args[0])?);
                ops::cast(d, DType::Float64, ot, &wide)
            }
            Opcode::Range => format!("(({oct}){})", self.arg(&i.args[0])?),
            Opcode::Random => {
                let (lin, seed, stream) = (
                    self.arg(&i.args[0])?,
                    self.arg(&i.args[1])?,
                    self.arg(&i.args[2])?,
                );
                format!("hs_philox({seed}, {stream}, (uint64_t){lin})")
            }
            Opcode::Gather => {
                let Arg::Random(r) = i.args[0] else {
                    return Err(crate::Error::Malformed("gather without a source".into()));
                };
                let idx = self.arg(&i.args[1])?;
                let at = self.checked(n, r, &idx);
                if ot == DType::Float16 {
                    format!("((float){at})")
                } else {
                    at
                }
            }
            Opcode::Scatter | Opcode::CondScatter | Opcode::ScatterAdd => {
                let idx = self.arg(&i.args[0])?;
                let val = self.arg(&i.args[1])?;
                let r = i.target.unwrap_or(0);
                let st = d.storage(ot);
                if i.op == Opcode::CondScatter {
                    let m = self.arg(&i.args[2])?;
                    self.out.open(format!("if ({m})"));
                }
                let at = self.checked(n, r, &idx);
                if i.op == Opcode::ScatterAdd {
                    let old = if ot == DType::Float16 {
                        format!("((float){at})")
                    } else {
                        at.clone()
                    };
                    let sum = ops::elementwise(d, Opcode::Add, ot, ot, &[old, val])?;
                    self.out.line(format!("{at} = ({st}){sum};"));
                } else {
                    self.out.line(format!("{at} = ({st}){val};"));
                }
                if i.op == Opcode::CondScatter {
                    self.out.close();
                }
                return Ok(());
            }
            op => {
                let args = i
                    .args
                    .iter()
                    .map(|a| self.arg(a))
                    .collect::<Result<Vec<_>>>()?;
                if checks_power(i) {
                    let fail = self.fail_later(status::NEGATIVE_POWER);
                    self.out.line(format!("if ({} < 0) {fail}", args[1]));
                }
                ops::elementwise(d, op, t, ot, &args)?
            }
        };
        self.out.line(format!("const {oct} r{n} = {expr};"));
        if let Some(out) = i.out {
            self.store(out, &format!("r{n}"));
        }
        Ok(())
    }

    /// Whether the innermost loop may carry the dialect's simd pragma: iterations are
    /// independent (the fuser only puts identical or disjoint accesses in one kernel) and
    /// the loop has no early exit (bounds-checked gathers and scatters return from it).
    fn simd_ok(&self) -> bool {
        self.d.simd.is_some()
            && self.l.randoms.is_empty()
            && !self.l.instrs.iter().any(checks_power)
            && !matches!(self.l.plan, crate::Plan::Serial { .. })
    }

    /// Emits the simd pragma before the loop opened next, where allowed.
    fn simd(&mut self) {
        if let (true, Some(p)) = (self.simd_ok(), self.d.simd) {
            self.out.line(p);
        }
    }

    /// The reduction loop of `var` over `[lo, hi)` into `LANES` accumulators, for
    /// dialects with a simd pragma: a vectorisable loop computes a block of values into
    /// `t<n>` buffers, then they are folded into the lanes in the order the unblocked loop
    /// uses (groups of `LANES` from `lo`, the tail into lane 0). Where the lanes fill a
    /// vector the strips of [`Self::lanes_strips`] are used instead.
    fn lanes_blocked(&mut self, var: &str, lo: &str, hi: &str) -> Result<()> {
        if self.lanes_fill_vector() {
            return self.lanes_strips(var, lo, hi);
        }
        self.out
            .open(format!("for (int64_t bb = {lo}; bb < {hi}; bb += {TILE})"));
        self.out.line(format!(
            "const int64_t be = bb + {TILE} < {hi} ? bb + {TILE} : {hi};"
        ));
        let reds = self.reductions();
        for &n in &reds {
            let ct = self.d.compute(self.l.instrs[n].in_dtype);
            self.out.line(format!("{ct} t{n}[{TILE}];"));
        }
        self.simd();
        self.out
            .open(format!("for (int64_t {var} = bb; {var} < be; {var}++)"));
        let ix = format!("{var} - bb");
        self.body(Acc::Buffer(&ix))?;
        self.out.close();
        self.out.line("int64_t k = 0;");
        self.out
            .open(format!("for (; k + {LANES} <= be - bb; k += {LANES})"));
        self.out.open(format!("for (int l = 0; l < {LANES}; l++)"));
        self.fold(&reds, "l", "k + l")?;
        self.out.close();
        self.out.close();
        self.out.open("for (; k < be - bb; k++)");
        self.fold(&reds, "0", "k")?;
        self.out.close();
        self.out.close();
        Ok(())
    }

    /// Whether a lane reduction along `axis` is rendered as short rows: one scalar
    /// accumulator per output, the axis loop inside, and the simd pragma on the loop just
    /// outside it, so the compiler vectorises across outputs (an n-body kernel's sums over
    /// 3 coordinates). Only where the axis is innermost, inside at least one other loop
    /// and fixed shorter than `LANES`: then every element falls in lane 0 in order and the
    /// other lanes keep the identity, which combines with anything exactly (`x + 0`
    /// cannot meet `-0.0`, as an accumulator that starts at `+0.0` never holds it), so the
    /// scalar accumulator gives the lanes' bits.
    fn short_rows(&self, axis: usize, outer: usize) -> bool {
        self.d.simd.is_some()
            && self.simd_ok()
            && outer > 0
            && axis == self.l.extents.len() - 1
            && matches!(self.l.extents[axis], Num::Lit(e) if (e as usize) < LANES)
            && !matches!(self.l.plan, crate::Plan::Lagged { .. })
    }

    /// Whether every lane reduction accumulates a 64-bit scalar, so that `LANES` lanes
    /// fill a 512-bit vector and the lanes can live in one register (`lanes_strips`).
    /// Narrower types keep the block buffers, whose loop the compiler vectorises at its
    /// full width (16 `float`s) rather than at `LANES`.
    fn lanes_fill_vector(&self) -> bool {
        self.reductions().iter().all(|&n| {
            matches!(
                self.l.instrs[n].in_dtype,
                DType::Float64 | DType::Int64 | DType::UInt64
            )
        })
    }

    /// The reduction loop of `var` over `[lo, hi)` as strips of `LANES` consecutive
    /// elements, element `l` of a strip updating lane `l` in a simd loop, then the tail
    /// into lane 0: the same order as the blocked loop, without storing each value and
    /// loading it back. Against the blocked form on an AMD EPYC (2 threads): the 5-point
    /// stencil with its convergence sum 10% faster per call, the Leibniz sum (two
    /// divisions per term) 37%.
    fn lanes_strips(&mut self, var: &str, lo: &str, hi: &str) -> Result<()> {
        self.out.line(format!("int64_t ib = {lo};"));
        self.out
            .open(format!("for (; ib + {LANES} <= {hi}; ib += {LANES})"));
        self.simd();
        // A 64-bit counter: with an `int` one GCC sizes the vectors for 8 `int`s and
        // splits the strip into two 256-bit halves.
        self.out
            .open(format!("for (int64_t l = 0; l < {LANES}; l++)"));
        self.out.line(format!("const int64_t {var} = ib + l;"));
        self.body(Acc::Indexed("l"))?;
        self.out.close();
        self.out.close();
        self.out
            .open(format!("for (int64_t {var} = ib; {var} < {hi}; {var}++)"));
        self.body(Acc::Indexed("0"))?;
        self.out.close();
        Ok(())
    }

    /// `acc<n>[lane] = combine(acc<n>[lane], t<n>[at])` for each reduction `n`.
    fn fold(&mut self, reds: &[usize], lane: &str, at: &str) -> Result<()> {
        for &n in reds {
            let i = &self.l.instrs[n];
            let t = i.in_dtype;
            let c = ops::elementwise(
                self.d,
                i.op.info().combine.unwrap_or(i.op),
                t,
                t,
                &[format!("acc{n}[{lane}]"), format!("t{n}[{at}]")],
            )?;
            self.out.line(format!("acc{n}[{lane}] = {c};"));
        }
        Ok(())
    }

    fn body(&mut self, acc: Acc<'_>) -> Result<()> {
        let saved = self.regs.clone();
        for n in 0..self.l.instrs.len() {
            if self.l.instrs[n].space == Space::Body {
                self.instr(n, acc)?;
            }
        }
        self.regs = saved;
        Ok(())
    }

    fn epilogue(&mut self) -> Result<()> {
        for n in 0..self.l.instrs.len() {
            if self.l.instrs[n].space == Space::Epilogue {
                self.instr(n, Acc::Scalar)?;
            }
        }
        Ok(())
    }

    fn reductions(&self) -> Vec<usize> {
        (0..self.l.instrs.len())
            .filter(|&n| self.l.instrs[n].op.is_reduction())
            .collect()
    }

    /// Declares accumulators (`count` = None for scalars) at their identity.
    fn init_accs(&mut self, count: Option<usize>, scans: bool) -> Result<()> {
        for n in 0..self.l.instrs.len() {
            let i = &self.l.instrs[n];
            if !(i.op.is_reduction() || (scans && i.op.is_scan())) {
                continue;
            }
            let ct = self.d.compute(i.in_dtype);
            let id = ops::identity(self.d, i.op, i.in_dtype)?;
            match count {
                Some(c) => {
                    self.out.line(format!("{ct} acc{n}[{c}];"));
                    self.out
                        .line(format!("for (int l = 0; l < {c}; l++) acc{n}[l] = {id};"));
                }
                None => self.out.line(format!("{ct} acc{n} = {id};")),
            }
            if i.op.is_arg_reduction() {
                self.out.line(format!("int64_t ai{n} = 0;"));
            }
        }
        Ok(())
    }

    /// Combines lane accumulators (in lane order) into `r<n>` and stores results.
    fn finish_accs(&mut self, from: Finish) -> Result<()> {
        for n in self.reductions() {
            let i = self.l.instrs[n].clone();
            let oct = self.d.compute(i.out_dtype);
            let value = if i.op.is_arg_reduction() {
                format!("ai{n}")
            } else {
                match from {
                    Finish::Scalar => format!("acc{n}"),
                    Finish::Element(ix) => format!("acc{n}[{ix}]"),
                    Finish::Fold(array) => self.lane_fold(n, array)?,
                }
            };
            self.out.line(format!("const {oct} r{n} = {value};"));
            if let Some(out) = i.out {
                self.store(out, &format!("r{n}"));
            }
        }
        Ok(())
    }

    /// Opens a loop over loop `d`: the parallel one walks `[begin, end)`.
    fn open_loop(&mut self, d: usize, parallel: bool) {
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
    fn open_par(&mut self, var: &str, step: &str) {
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

    fn signature(&self, name: &str) -> String {
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

    fn prologue(&mut self) {
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

    fn epilogue_return(&mut self) {
        if self.d.entry_returns_status {
            self.out.line("return 0;");
        }
    }

    fn function(&mut self, name: &str) -> Result<()> {
        if self.l.is_lagged() && self.d.index_range != IndexRange::Loop {
            return Err(crate::Error::Unsupported(
                "held-back writes need a pass after every work-item".into(),
            ));
        }
        let sig = self.signature(name);
        self.out.open(sig);
        self.prologue();
        let nloops = self.l.extents.len();
        match self.l.structure {
            Structure::Elementwise => {
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
            }
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

    /// A `RowPartials` kernel: chunks of `rows` rows, each summing its rows into one
    /// accumulator per column (the simd loop runs along the row, as `ReduceOuter`'s
    /// does) and leaving them as its partials, at `((chunk * reductions + r) * columns +
    /// column) * 16` bytes into `part`. More than `BLOCK` columns (`wide`) take
    /// accumulators for `ROW_PARTIALS_COLUMNS` on a CPU (one pass over the rows streams
    /// at about twice the rate of a pass per block of columns), and a pass per block of
    /// `BLOCK` columns on a device, whose work-items' private arrays must stay small:
    /// the same sums in the same order either way.
    fn row_partials(&mut self, rows: usize, wide: bool) -> Result<()> {
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

    /// The function combining a `RowPartials` kernel's chunks: per block of `BLOCK`
    /// columns, each reduction's partials in chunk order (a chunk's block of partials
    /// is contiguous), then the block's results and epilogue.
    fn row_fin(&mut self, name: &str) -> Result<()> {
        self.open_fin(name);
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

    /// A `Partials` kernel for a device: one work-group of `LANES` items per chunk (see
    /// [`Lowered::group_partials`]). Item `lane` walks elements `c0 + l`, `c0 + l + LANES`, …
    /// of the chunk's whole blocks, item 0 also the tail, exactly the lane assignment of
    /// the one-item form; the lanes are then folded in order through local memory.
    fn group_partials(&mut self) -> Result<()> {
        let reductions = self.reductions();
        // OpenCL C 1.2 allows local variables only at kernel function scope.
        for &n in &reductions {
            let ct = self.d.compute(self.l.instrs[n].in_dtype);
            self.out.line(format!("__local {ct} lacc{n}[{LANES}];"));
        }
        self.out.open("");
        self.out.line(format!(
            "const int64_t c0 = begin + (int64_t)get_group_id(0) * {CHUNK};"
        ));
        // The whole group shares c0, so it returns (or not) together.
        self.out.line("if (c0 >= end) return;");
        self.out.line(format!(
            "const int64_t c1 = c0 + {CHUNK} < end ? c0 + {CHUNK} : end;"
        ));
        self.out.line("const int lane = (int)get_local_id(0);");
        self.init_accs(Some(1), false)?;
        self.out.line("int64_t ib = c0;");
        self.out.line(STRIP_LOOP_PRAGMA);
        self.out
            .open(format!("for (; ib + {LANES} <= c1; ib += {LANES})"));
        self.out.line("const int64_t i0 = ib + lane;");
        self.body(Acc::Indexed("0"))?;
        self.out.close();
        self.out.open("if (lane == 0)");
        self.out.open("for (int64_t i0 = ib; i0 < c1; i0++)");
        self.body(Acc::Indexed("0"))?;
        self.out.close();
        self.out.close();
        for &n in &reductions {
            self.out.line(format!("lacc{n}[lane] = acc{n}[0];"));
        }
        self.out.line(self.d.barrier);
        self.out.open("if (lane == 0)");
        self.store_chunk_partials("lacc")?;
        self.out.close();
        self.out.close();
        Ok(())
    }

    /// A row reduction for a device: one work-group of `LANES` items per index of the
    /// parallel loop (see [`Lowered::group_rows`]). Item `lane` accumulates lane `lane`
    /// of each row, item 0 also the tail; the lanes meet in local memory and item 0 folds
    /// them in order and runs the epilogue, exactly as one item per row would.
    ///
    /// Each item keeps only its own lane, in `acc<n>[0]`, and item 0 folds the lanes
    /// straight from local memory: a private array of `LANES` indexed by `lane` would
    /// live in (slow) private memory on a GPU, and all but one of its entries went unused.
    fn group_rows(&mut self, axis: usize) -> Result<()> {
        let reductions = self.reductions();
        // OpenCL C 1.2 allows local variables only at kernel function scope.
        for &n in &reductions {
            let ct = self.d.compute(self.l.instrs[n].in_dtype);
            self.out.line(format!("__local {ct} lacc{n}[{LANES}];"));
        }
        let outer: Vec<usize> = (0..self.l.extents.len()).filter(|&d| d != axis).collect();
        let p = outer[0];
        self.out.open("");
        self.out.line(format!(
            "const int64_t i{p} = begin + (int64_t)get_group_id(0);"
        ));
        // The whole group shares the row, so it returns (or not) together.
        self.out.line(format!("if (i{p} >= end) return;"));
        self.out.line("const int lane = (int)get_local_id(0);");
        for &d in &outer[1..] {
            self.open_loop(d, false);
        }
        self.init_accs(Some(1), false)?;
        let e = num(self.l.extents[axis]);
        self.out.line("int64_t ib = 0;");
        self.out.line(STRIP_LOOP_PRAGMA);
        self.out
            .open(format!("for (; ib + {LANES} <= {e}; ib += {LANES})"));
        self.out.line(format!("const int64_t i{axis} = ib + lane;"));
        self.body(Acc::Indexed("0"))?;
        self.out.close();
        self.out.open("if (lane == 0)");
        self.out.open(format!(
            "for (int64_t i{axis} = ib; i{axis} < {e}; i{axis}++)"
        ));
        self.body(Acc::Indexed("0"))?;
        self.out.close();
        self.out.close();
        for &n in &reductions {
            self.out.line(format!("lacc{n}[lane] = acc{n}[0];"));
        }
        self.out.line(self.d.barrier);
        self.out.open("if (lane == 0)");
        self.finish_accs(Finish::Fold("lacc"))?;
        self.epilogue()?;
        self.out.close();
        // The next row of the group reuses the local accumulators.
        self.out.line(self.d.barrier);
        for _ in &outer[1..] {
            self.out.close();
        }
        self.out.close();
        Ok(())
    }

    /// Reduction `n`'s lanes `{array}{n}[0..LANES]` combined in lane order, the one fold
    /// order every form of a lane reduction (and every engine) uses, into the local
    /// `fold<n>`, whose name it returns.
    fn lane_fold(&mut self, n: usize, array: &str) -> Result<String> {
        // One statement per lane: an operation whose rendering names an operand twice
        // (an integer minimum is a conditional) would otherwise nest 2^(LANES-1) copies.
        let i = &self.l.instrs[n];
        let (t, op) = (i.in_dtype, i.op.info().combine.unwrap_or(i.op));
        let fold = format!("fold{n}");
        self.out
            .line(format!("{} {fold} = {array}{n}[0];", self.d.compute(t)));
        for l in 1..LANES {
            let e = ops::elementwise(
                self.d,
                op,
                t,
                t,
                &[fold.clone(), format!("{array}{n}[{l}]")],
            )?;
            self.out.line(format!("{fold} = {e};"));
        }
        Ok(fold)
    }

    /// Folds each reduction's `LANES` lane accumulators (`{array}{n}[0..LANES]`) in lane
    /// order and stores the result as chunk `c0 / CHUNK`'s partial.
    fn store_chunk_partials(&mut self, array: &str) -> Result<()> {
        let nred = self.l.nreductions;
        for (r, n) in self.reductions().into_iter().enumerate() {
            let ct = self.d.compute(self.l.instrs[n].in_dtype);
            let e = self.lane_fold(n, array)?;
            let g = self.d.global;
            self.out.line(format!(
                "*({g}{ct} *)(part + ((c0 / {CHUNK}) * {nred} + {r}) * 16) = {e};"
            ));
        }
        Ok(())
    }

    /// Opens a loop over blocks `[qb, qe)` of `BLOCK` columns of `[lo, hi)`.
    fn open_blocks(&mut self, lo: &str, hi: &str) {
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

    /// Reduction (or scan) `n`'s combining operation on the accumulator `acc` and `value`.
    fn combine(&self, n: usize, acc: &str, value: String) -> Result<String> {
        let i = &self.l.instrs[n];
        let t = i.in_dtype;
        ops::elementwise(
            self.d,
            i.op.info().combine.unwrap_or(i.op),
            t,
            t,
            &[acc.to_string(), value],
        )
    }

    /// Opens `<name>_fin` (the same signature and prologue as the kernel) with no
    /// registers carried over from the kernel's body.
    fn open_fin(&mut self, name: &str) {
        self.regs.clear();
        let sig = self.signature(&format!("{name}_fin"));
        self.out.open(sig);
        self.prologue();
    }

    /// The function combining a `Partials` kernel's per-chunk results, in chunk order.
    fn fin(&mut self, name: &str) -> Result<()> {
        self.open_fin(name);
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
}

/// Renders one kernel as function `name` (plus `name_fin` for a `Partials` plan). The
/// text does not include the prelude; see [`render_unit`].
pub fn render(dialect: &Dialect, lowered: &Lowered, name: &str) -> Result<String> {
    let mut r = Renderer {
        d: dialect,
        l: lowered,
        out: Out {
            text: String::new(),
            depth: 0,
        },
        regs: HashMap::new(),
    };
    r.function(name)?;
    Ok(r.out.text)
}

/// A whole translation unit: the prelude, optional extra declarations, then each kernel.
pub fn render_unit(
    dialect: &Dialect,
    extra: &str,
    kernels: &[(&Lowered, String)],
) -> Result<String> {
    let mut s = prelude(dialect);
    s.push_str(extra);
    for (l, name) in kernels {
        s.push('\n');
        s.push_str(&render(dialect, l, name)?);
    }
    Ok(s)
}

/// Whether `i` is a signed integer power with an exponent loaded from memory, which the
/// kernel checks for a negative value (NumPy raises; a scalar exponent was checked when
/// recorded). Such a loop has an early exit, so it takes no simd pragma; the power's own
/// loop does not vectorise anyway.
fn checks_power(i: &LInstr) -> bool {
    i.op == Opcode::Power
        && i.in_dtype.is_signed_integer()
        && matches!(i.args.get(1), Some(Arg::View(_)))
}
