//! Reductions on a device: a work-group per chunk (`Partials`) or of `LANES` items per
//! row (`ReduceInner`), the lanes meeting in local memory, and one work-group combining a
//! `Partials` kernel's partials.

use super::out::num;
use super::renderer::{Acc, Finish, Renderer};
use crate::lower::{CHUNK, LANES, WIDE};
use crate::ops;
use crate::Result;

/// Keeps a device compiler from unrolling the strip loop of a work-group reduction
/// (`group_rows`, `group_partials`), whose tail loop follows it. NVIDIA's OpenCL compiler
/// (driver 580, NVVM 7, at every `-cl-nv-opt-level`; `-cl-opt-disable` aside) unrolled
/// that loop by four and then addressed the tail a row away when a row was walked
/// backwards and a second reduction shared the loop: seed 52 of the random programs,
/// reproduced standalone with the engine's kernel source. Without unrolling, the same
/// build gave the right sums.
pub(super) const STRIP_LOOP_PRAGMA: &str = "#pragma unroll 1";

impl Renderer<'_> {
    /// A `Partials` kernel for a device: one work-group per chunk (see
    /// [`Lowered::group_partials`]). Each round, item `lid` computes element `rb + lid`
    /// into the local buffers `t<n>`; then item `lane < LANES` folds elements `lane`,
    /// `lane + LANES`, … of the round's whole strips of `LANES` into its lane and item 0
    /// the round's tail (only the chunk's last round has one), exactly the lane assignment
    /// and order of the one-item form; the lanes are folded in order at the end.
    ///
    /// [`Lowered::group_partials`]: crate::Lowered::group_partials
    pub(super) fn group_partials(&mut self) -> Result<()> {
        let reductions = self.reductions();
        // OpenCL C 1.2 allows local variables only at kernel function scope.
        for &n in &reductions {
            let ct = self.d.compute(self.l.instrs[n].in_dtype);
            self.out.line(format!("__local {ct} t{n}[{WIDE}];"));
            self.out.line(format!("__local {ct} lacc{n}[{LANES}];"));
        }
        self.open_chunk_group(CHUNK);
        self.init_accs(Some(1), false)?;
        self.out.line(STRIP_LOOP_PRAGMA);
        // Every item of the group runs the same rounds, so each reaches every barrier.
        self.out.open("for (int64_t rb = c0; rb < c1; rb += wide)");
        self.out
            .line("const int64_t rn = c1 - rb < wide ? c1 - rb : wide;");
        self.out.open("if (lid < rn)");
        self.out.line("const int64_t i0 = rb + lid;");
        self.body(Acc::Buffer("lid"))?;
        self.out.close();
        self.out.line(self.d.barrier);
        self.lanes_fold_round(&reductions)?;
        // The next round overwrites `t<n>` only once the lanes have read it.
        self.out.line(self.d.barrier);
        self.out.close();
        self.out.open(format!("if (lid < {LANES})"));
        for &n in &reductions {
            self.out.line(format!("lacc{n}[lid] = acc{n}[0];"));
        }
        self.out.close();
        self.out.line(self.d.barrier);
        self.out.open("if (lid == 0)");
        self.store_chunk_partials("lacc")?;
        self.out.close();
        self.out.close();
        Ok(())
    }

    /// Opens the block of a work-group that takes chunk `get_group_id(0)` of `units`
    /// units of `[begin, end)`: `c0` and `c1` bound the chunk, `lid` is the item and
    /// `wide` the group's size. The whole group shares `c0`, so it returns (or not)
    /// together and every item reaches the same barriers.
    pub(super) fn open_chunk_group(&mut self, units: usize) {
        self.out.open("");
        self.out.line(format!(
            "const int64_t c0 = begin + (int64_t)get_group_id(0) * {units};"
        ));
        self.out.line("if (c0 >= end) return;");
        self.out.line(format!(
            "const int64_t c1 = c0 + {units} < end ? c0 + {units} : end;"
        ));
        self.out.line("const int lid = (int)get_local_id(0);");
        self.out
            .line("const int64_t wide = (int64_t)get_local_size(0);");
    }

    /// A `Partials` kernel's `_fin` for a device: one work-group (see
    /// [`Lowered::group_fin`]) loads a round of partials into local memory, item by item,
    /// and item 0 combines the round in chunk order, then runs the epilogue.
    ///
    /// [`Lowered::group_fin`]: crate::Lowered::group_fin
    pub(super) fn group_fin(&mut self) -> Result<()> {
        let nred = self.l.nreductions;
        let reductions = self.reductions();
        let g = self.d.global;
        for &n in &reductions {
            let ct = self.d.compute(self.l.instrs[n].in_dtype);
            self.out.line(format!("__local {ct} t{n}[{WIDE}];"));
        }
        self.out.line("const int lid = (int)get_local_id(0);");
        self.out
            .line("const int64_t wide = (int64_t)get_local_size(0);");
        for &n in &reductions {
            let i = &self.l.instrs[n];
            let ct = self.d.compute(i.in_dtype);
            let id = ops::identity(self.d, i.op, i.in_dtype)?;
            self.out.line(format!("{ct} acc{n} = {id};"));
        }
        self.out.line(STRIP_LOOP_PRAGMA);
        self.out
            .open("for (int64_t cb = begin; cb < end; cb += wide)");
        self.out
            .line("const int64_t cn = end - cb < wide ? end - cb : wide;");
        self.out.open("if (lid < cn)");
        for (r, &n) in reductions.iter().enumerate() {
            let ct = self.d.compute(self.l.instrs[n].in_dtype);
            self.out.line(format!(
                "t{n}[lid] = *({g}const {ct} *)(part + ((cb + lid) * {nred} + {r}) * 16);"
            ));
        }
        self.out.close();
        self.out.line(self.d.barrier);
        self.out.open("if (lid == 0)");
        self.out.open("for (int64_t k = 0; k < cn; k++)");
        for &n in &reductions {
            let c = self.combine(n, &format!("acc{n}"), format!("t{n}[k]"))?;
            self.out.line(format!("acc{n} = {c};"));
        }
        self.out.close();
        self.out.close();
        self.out.line(self.d.barrier);
        self.out.close();
        self.out.open("if (lid == 0)");
        self.finish_accs(Finish::Scalar)?;
        self.epilogue()?;
        self.out.close();
        Ok(())
    }

    /// A row reduction for a device: one work-group per index of the parallel loop (see
    /// [`Lowered::group_rows`]). Each round, item `lid` computes element `rb + lid` of
    /// the row into the local buffers `t<n>`, and the first `LANES` items fold them into
    /// their lanes in the one-item form's order (strips of `LANES`, the tail into lane 0),
    /// as [`Self::group_partials`] does for a chunk; item 0 then folds the lanes in order
    /// and runs the epilogue.
    ///
    /// [`Lowered::group_rows`]: crate::Lowered::group_rows
    pub(super) fn group_rows(&mut self, axis: usize) -> Result<()> {
        let reductions = self.reductions();
        // OpenCL C 1.2 allows local variables only at kernel function scope.
        for &n in &reductions {
            let ct = self.d.compute(self.l.instrs[n].in_dtype);
            self.out.line(format!("__local {ct} t{n}[{WIDE}];"));
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
        self.out.line("const int lid = (int)get_local_id(0);");
        self.out
            .line("const int64_t wide = (int64_t)get_local_size(0);");
        for &d in &outer[1..] {
            self.open_loop(d, false);
        }
        self.init_accs(Some(1), false)?;
        let e = num(self.l.extents[axis]);
        self.out.line(STRIP_LOOP_PRAGMA);
        // Every item of the group runs the same rounds, so each reaches every barrier.
        self.out
            .open(format!("for (int64_t rb = 0; rb < {e}; rb += wide)"));
        self.out.line(format!(
            "const int64_t rn = {e} - rb < wide ? {e} - rb : wide;"
        ));
        self.out.open("if (lid < rn)");
        self.out.line(format!("const int64_t i{axis} = rb + lid;"));
        self.body(Acc::Buffer("lid"))?;
        self.out.close();
        self.out.line(self.d.barrier);
        self.lanes_fold_round(&reductions)?;
        // The next round overwrites `t<n>` only once the lanes have read it.
        self.out.line(self.d.barrier);
        self.out.close();
        self.out.open(format!("if (lid < {LANES})"));
        for &n in &reductions {
            self.out.line(format!("lacc{n}[lid] = acc{n}[0];"));
        }
        self.out.close();
        self.out.line(self.d.barrier);
        self.out.open("if (lid == 0)");
        self.finish_accs(Finish::Fold("lacc"))?;
        self.epilogue()?;
        self.out.close();
        // The next row of the group reuses the local buffers.
        self.out.line(self.d.barrier);
        for _ in &outer[1..] {
            self.out.close();
        }
        self.out.close();
        Ok(())
    }

    /// After a round of `rn` values in `t<n>`: item `lane < LANES` folds the round's
    /// elements `lane`, `lane + LANES`, … of its whole strips into its lane, item 0 the
    /// tail (only a last round has one).
    fn lanes_fold_round(&mut self, reductions: &[usize]) -> Result<()> {
        self.out.open(format!("if (lid < {LANES})"));
        self.out
            .line(format!("const int64_t full = rn - rn % {LANES};"));
        self.out.line(STRIP_LOOP_PRAGMA);
        self.out
            .open(format!("for (int64_t k = lid; k < full; k += {LANES})"));
        self.fold(reductions, "0", "k")?;
        self.out.close();
        self.out.open("if (lid == 0)");
        self.out.open("for (int64_t k = full; k < rn; k++)");
        self.fold(reductions, "0", "k")?;
        self.out.close();
        self.out.close();
        self.out.close();
        Ok(())
    }
}
