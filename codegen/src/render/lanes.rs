//! Accumulators and lane reductions: declaring and finishing accumulators, the
//! `LANES`-lane loops (blocked, strips, short rows) and their fold in lane order.

use super::renderer::{Acc, Finish, Renderer};
use crate::lower::{Num, CHUNK, LANES};
use crate::{ops, Result};
use hassium_core::DType;

/// Values of a lane reduction computed per block before they are folded into the lanes
/// (a multiple of `LANES`, and `CHUNK` a multiple of it, so the order of the fold is the
/// unblocked one).
const TILE: usize = 256;

const _: () = assert!(TILE.is_multiple_of(LANES) && CHUNK.is_multiple_of(TILE));

impl Renderer<'_> {
    /// The reduction loop of `var` over `[lo, hi)` into `LANES` accumulators, for
    /// dialects with a simd pragma: a vectorisable loop computes a block of values into
    /// `t<n>` buffers, then they are folded into the lanes in the order the unblocked loop
    /// uses (groups of `LANES` from `lo`, the tail into lane 0). Where the lanes fill a
    /// vector the strips of [`Self::lanes_strips`] are used instead.
    pub(super) fn lanes_blocked(&mut self, var: &str, lo: &str, hi: &str) -> Result<()> {
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
    pub(super) fn short_rows(&self, axis: usize, outer: usize) -> bool {
        self.d.simd.is_some()
            && self.simd_ok()
            && outer > 0
            && axis == self.l.extents.len() - 1
            && matches!(self.l.extents[axis], Num::Lit(e) if (e as usize) < LANES)
            && !matches!(self.l.plan, crate::Plan::Lagged { .. })
    }

    /// Whether every lane reduction accumulates a 64-bit scalar and every buffer holds
    /// 64-bit elements, so that `LANES` lanes fill a 512-bit vector and the lanes can live
    /// in one register (`lanes_strips`).
    /// Narrower types keep the block buffers, whose loop the compiler vectorises at its
    /// full width (16 `float`s) rather than at `LANES`.
    fn lanes_fill_vector(&self) -> bool {
        let wide = |t: DType| matches!(t, DType::Float64 | DType::Int64 | DType::UInt64);
        // A narrower load (a mask's bytes counted into an int64 sum) would be widened
        // inside the 8-lane strip, which GCC 12 does not vectorise ("no vectype for
        // stmt" on the lanes); the blocked form converts a whole tile at full width.
        self.reductions()
            .iter()
            .all(|&n| wide(self.l.instrs[n].in_dtype))
            && self.l.slot_dtypes.iter().all(|&t| wide(t))
    }

    /// The reduction loop of `var` over `[lo, hi)` as strips of `LANES` consecutive
    /// elements, element `l` of a strip updating lane `l` in a simd loop, then the tail
    /// into lane 0: the same order as the blocked loop, without storing each value and
    /// loading it back. Against the blocked form on an AMD EPYC (2 threads): the 5-point
    /// stencil with its convergence sum 10% faster per call, the Leibniz sum (two
    /// divisions per term) 37%.
    pub(super) fn lanes_strips(&mut self, var: &str, lo: &str, hi: &str) -> Result<()> {
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
    pub(super) fn fold(&mut self, reds: &[usize], lane: &str, at: &str) -> Result<()> {
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

    pub(super) fn reductions(&self) -> Vec<usize> {
        (0..self.l.instrs.len())
            .filter(|&n| self.l.instrs[n].op.is_reduction())
            .collect()
    }

    /// Declares accumulators (`count` = None for scalars) at their identity.
    pub(super) fn init_accs(&mut self, count: Option<usize>, scans: bool) -> Result<()> {
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
    pub(super) fn finish_accs(&mut self, from: Finish) -> Result<()> {
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
                self.store(n, out, &format!("r{n}"));
            }
        }
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
    pub(super) fn store_chunk_partials(&mut self, array: &str) -> Result<()> {
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
}
