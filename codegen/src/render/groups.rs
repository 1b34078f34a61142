//! Reductions on a device: a work-group of `LANES` items per chunk (`Partials`) or per
//! row (`ReduceInner`), the lanes meeting in local memory.

use super::out::num;
use super::renderer::{Acc, Finish, Renderer};
use crate::lower::{CHUNK, LANES};
use crate::Result;

/// Keeps a device compiler from unrolling the strip loop of a work-group reduction
/// (`group_rows`, `group_partials`), whose tail loop follows it. NVIDIA's OpenCL compiler
/// (driver 580, NVVM 7, at every `-cl-nv-opt-level`; `-cl-opt-disable` aside) unrolled
/// that loop by four and then addressed the tail a row away when a row was walked
/// backwards and a second reduction shared the loop: seed 52 of the random programs,
/// reproduced standalone with the engine's kernel source. Without unrolling, the same
/// build gave the right sums.
const STRIP_LOOP_PRAGMA: &str = "#pragma unroll 1";

impl Renderer<'_> {
    /// A `Partials` kernel for a device: one work-group of `LANES` items per chunk (see
    /// [`Lowered::group_partials`]). Item `lane` walks elements `c0 + l`, `c0 + l + LANES`, …
    /// of the chunk's whole blocks, item 0 also the tail, exactly the lane assignment of
    /// the one-item form; the lanes are then folded in order through local memory.
    pub(super) fn group_partials(&mut self) -> Result<()> {
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
    pub(super) fn group_rows(&mut self, axis: usize) -> Result<()> {
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
}
