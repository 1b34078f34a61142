//! The renderer's state (the dialect, the lowered kernel, the text, the registers of the
//! values computed so far), how it reads and writes operands, and the entry points.

use super::out::{num, Out};
use crate::lower::{Arg, LView, Num, ViewKind};
use crate::{prelude, Dialect, Lowered, Result};
use hassium_core::{status, DType};
use std::collections::HashMap;
use std::fmt::Write;

/// How a reduction's update and result are written in the current loop structure.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Acc<'a> {
    /// `acc[index]` (lanes or a block of outputs).
    Indexed(&'a str),
    /// A scalar accumulator (scans, arg-reductions).
    Scalar,
    /// No update: the value goes to `t<n>[index]`, a block buffer folded in afterwards.
    Buffer(&'a str),
}

/// Where `finish_accs` takes each reduction's result from.
#[derive(Clone, Copy)]
pub(super) enum Finish<'a> {
    /// The scalar `acc<n>`.
    Scalar,
    /// Element `index` of `acc<n>` (a block of outputs).
    Element(&'a str),
    /// The `LANES` lanes of the array `<array><n>`, folded in lane order.
    Fold(&'a str),
}

pub(super) struct Renderer<'a> {
    pub(super) d: &'a Dialect,
    pub(super) l: &'a Lowered,
    pub(super) out: Out,
    /// View id → the register holding its current value.
    pub(super) regs: HashMap<usize, String>,
    /// Which copy of the loop nest is being rendered, for kernels that divide integers
    /// by scalar slots (see `divisor_slots`).
    pub(super) divisors: Divisors,
    /// Per instruction: its store is superseded (see [`superseded_stores`]).
    pub(super) superseded: Vec<bool>,
}

/// Which instructions' stores a later instruction of the same loop body overwrites: an
/// in-place chain (`x = where(m, f(x), x)` forty times over, an update loop fused whole)
/// writes its array once per instruction, and only the last write can be seen. The
/// earlier ones are left out of the text: the values stay in registers, where every later
/// read of that view takes them (`load`), and GCC gives up vectorising a loop that
/// stores one address several times per iteration. Kept in kernels that hold back
/// stores (a `Lagged` plan reads rows it wrote), that address memory at computed indices,
/// or whose instructions can fail part-way (a kernel stopped part-way is rerun from
/// memory, `Runtime::after_failure`).
pub(super) fn superseded_stores(l: &Lowered) -> Vec<bool> {
    let mut superseded = vec![false; l.instrs.len()];
    let fails = l.instrs.iter().any(|i| {
        i.op.class() == hassium_core::OpClass::Index
            || (i.op == hassium_core::Opcode::Power && i.out_dtype.is_integer())
    });
    if !l.lagged.is_empty() || !l.randoms.is_empty() || fails {
        return superseded;
    }
    for (n, i) in l.instrs.iter().enumerate() {
        let Some(out) = i.out else { continue };
        if i.op.is_reduction() || i.op.is_scan() {
            continue;
        }
        superseded[n] = l.instrs[n + 1..].iter().any(|j| {
            j.space == i.space && j.out == Some(out) && !j.op.is_reduction() && !j.op.is_scan()
        });
    }
    superseded
}

/// The integer divisors in scalar slots that a copy of the loop nest is specialised for.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Divisors {
    /// Any value: NumPy's rules through the prelude's exact helpers.
    Any,
    /// Positive powers of two: floor division is an arithmetic shift (by `sh<j>`), the
    /// remainder a mask (exact for negative dividends in two's complement).
    PowerOfTwo,
    /// Positive and small (below 2^21 for 64-bit types): through floating-point
    /// arithmetic (`hs_sdiv_*`, `hs_smod_*`, with the divisor's reciprocal `inv<j>`).
    Small,
}

impl Renderer<'_> {
    /// The element index of a loop-indexed view at the current loop variables.
    pub(super) fn index(&self, v: &LView) -> String {
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

    pub(super) fn arg(&self, a: &Arg) -> Result<String> {
        match a {
            Arg::View(id) => self.load(*id),
            Arg::Scalar(j) => Ok(format!("s{j}")),
            Arg::Random(_) => Err(crate::Error::Malformed(
                "random-access operand in value position".into(),
            )),
        }
    }

    /// Stores instruction `n`'s value into view `id` (only into its register when a later
    /// instruction overwrites it, see [`superseded_stores`]).
    pub(super) fn store(&mut self, n: usize, id: usize, value: &str) {
        let v = &self.l.views[id];
        if self.superseded.get(n).copied().unwrap_or(false) {
            // Read back from the register only; the later store reaches memory.
        } else if let Some(j) = self.l.lagged.iter().position(|&w| w == id) {
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
    pub(super) fn row_index(&self) -> String {
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
    pub(super) fn fail_later(&self, code: i64) -> String {
        if self.d.entry_returns_status {
            format!("return {code};")
        } else {
            format!("err[2] = {code};")
        }
    }

    /// A checked index into random-access view `r` from int64 expression `idx`.
    pub(super) fn checked(&mut self, n: usize, r: usize, idx: &str) -> String {
        let ra = &self.l.randoms[r];
        let (len, off, stride) = (num(ra.len), num(ra.offset), num(ra.stride));
        // The index as given is kept for the error (read once: not again in the branch).
        self.out
            .line(format!("const int64_t ix{n} = (int64_t)({idx});"));
        self.out.line(format!("int64_t j{n} = ix{n};"));
        self.out.line(format!("if (j{n} < 0) j{n} += {len};"));
        let fail = self.fail(status::OUT_OF_BOUNDS);
        self.out.line(format!(
            "if ((uint64_t)j{n} >= (uint64_t){len}) {{ err[0] = ix{n}; err[1] = {len}; {fail} }}"
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
        divisors: Divisors::Any,
        superseded: superseded_stores(lowered),
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
