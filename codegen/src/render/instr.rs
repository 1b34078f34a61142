//! One instruction of the kernel as C statements: reductions and scans updating their
//! accumulators, generators, gathers and scatters, and every elementwise opcode
//! (through `ops`).

use super::renderer::{Acc, Divisors, Renderer};
use crate::lower::{Arg, LInstr, Structure, ViewKind};
use crate::{ops, Result};
use hassium_core::{status, DType, Opcode};

/// Whether `i` is a signed integer power with an exponent loaded from memory, which the
/// kernel checks for a negative value (NumPy raises; a scalar exponent was checked when
/// recorded). Such a loop has an early exit, so it takes no simd pragma; the power's own
/// loop does not vectorise anyway.
pub(super) fn checks_power(i: &LInstr) -> bool {
    i.op == Opcode::Power
        && i.in_dtype.is_signed_integer()
        && matches!(i.args.get(1), Some(Arg::View(_)))
}

/// Whether operand `k` of `op` would be read only under a condition in the C that renders
/// it: `where`'s values (`c ? x : y`) and a masked scatter's index and value (inside
/// `if (m)`). The renderer reads such operands first, unconditionally ([`Renderer::operand`]);
/// no memory read in generated C is conditional unless its address is (a gather's or a
/// scatter's checked index, read after the check). A read in a conditional is one the
/// compiler may turn into a masked load, and GCC 12.2 miscompiled one with 512-bit vectors
/// in a row loop vectorised across rows (garbage in a reduce nest's other output; campaign
/// seed 636543). Every element a kernel's view names is in bounds, so reading it whatever
/// the condition is allowed — and NumPy computes both of `where`'s values anyway. Operands
/// that also appear in their condition (integer `maximum`, `absolute`) are read anyway.
/// `tests/conditional_reads.rs` renders every opcode and checks the rule on the text.
fn reads_conditionally(op: Opcode, k: usize) -> bool {
    match op {
        Opcode::Where => k >= 1,
        Opcode::CondScatter => k <= 1,
        _ => false,
    }
}

impl Renderer<'_> {
    /// Renders instruction `n` (body or epilogue); `acc` says how reductions update.
    pub(super) fn instr(&mut self, n: usize, acc: Acc<'_>) -> Result<()> {
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
            self.store(n, out, &format!("r{n}"));
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
                let (idx, val) = if reads_conditionally(i.op, 0) {
                    (
                        self.operand(n, 0, &i.args[0])?,
                        self.operand(n, 1, &i.args[1])?,
                    )
                } else {
                    (self.arg(&i.args[0])?, self.arg(&i.args[1])?)
                };
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
                let args = (i.args.iter().enumerate())
                    .map(|(k, a)| {
                        if reads_conditionally(op, k) {
                            self.operand(n, k, a)
                        } else {
                            self.arg(a)
                        }
                    })
                    .collect::<Result<Vec<_>>>()?;
                if checks_power(i) {
                    let fail = self.fail_later(status::NEGATIVE_POWER);
                    self.out.line(format!("if ({} < 0) {fail}", args[1]));
                }
                let divisor = match (op, i.args.get(1)) {
                    (Opcode::FloorDivide | Opcode::Remainder, Some(Arg::Scalar(j)))
                        if t.is_integer() =>
                    {
                        Some(*j)
                    }
                    _ => None,
                };
                let (x, tn) = (&args[0], t.name());
                match (divisor, self.divisors, op) {
                    (Some(j), Divisors::PowerOfTwo, Opcode::FloorDivide) => {
                        format!("(({ct})({x} >> sh{j}))")
                    }
                    (Some(j), Divisors::PowerOfTwo, _) => format!("(({ct})({x} & (s{j} - 1)))"),
                    (Some(j), Divisors::Small, Opcode::FloorDivide) => {
                        format!("hs_sdiv_{tn}({x}, s{j}, inv{j})")
                    }
                    (Some(j), Divisors::Small, _) => format!("hs_smod_{tn}({x}, s{j}, inv{j})"),
                    _ => ops::elementwise(d, op, t, ot, &args)?,
                }
            }
        };
        let rt = if ot == DType::Bool {
            self.bool_register()
        } else {
            oct
        };
        self.out.line(format!("const {rt} r{n} = {expr};"));
        if let Some(out) = i.out {
            self.store(n, out, &format!("r{n}"));
        }
        Ok(())
    }

    /// Operand `k` of instruction `n` as a C expression with no memory read in it: a
    /// value in memory is first read into a constant of its own, `x{n}_{k}`. See
    /// [`reads_conditionally`] for where this is needed.
    pub(super) fn operand(&mut self, n: usize, k: usize, a: &Arg) -> Result<String> {
        let e = self.arg(a)?;
        let Arg::View(id) = *a else { return Ok(e) };
        let v = &self.l.views[id];
        if self.regs.contains_key(&id) || !matches!(v.kind, ViewKind::Data { .. }) {
            return Ok(e);
        }
        let ct = self.d.compute(v.dtype);
        self.out.line(format!("const {ct} x{n}_{k} = {e};"));
        Ok(format!("x{n}_{k}"))
    }

    /// The C type of a boolean register (a comparison's or logical operation's result
    /// in a kernel): an integer as wide as the kernel's widest element, holding 0 or 1.
    /// A `uint8_t` register among `double`s leaves the loop with lanes of two widths, and
    /// GCC 12 then does not vectorise it at all ("no vectype for stmt"): a Black-Scholes
    /// written with `w * ~mask + (1.0 - w) * mask` ran its `exp` and `log` as scalar calls
    /// at 5× the time of the `np.where` form. Stored booleans stay bytes.
    pub(super) fn bool_register(&self) -> &'static str {
        let widest = (self.l.slot_dtypes.iter().copied())
            .chain(self.l.instrs.iter().flat_map(|i| [i.in_dtype, i.out_dtype]))
            .map(DType::size)
            .max()
            .unwrap_or(1);
        match widest {
            8.. => "int64_t",
            4 => "int32_t",
            2 => "int16_t",
            _ => self.d.compute(DType::Bool),
        }
    }

    /// Reduction (or scan) `n`'s combining operation on the accumulator `acc` and `value`.
    pub(super) fn combine(&self, n: usize, acc: &str, value: String) -> Result<String> {
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
}
