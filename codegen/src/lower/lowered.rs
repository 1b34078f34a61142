//! The lowered form: [`Lowered`], what the renderer needs of a kernel and nothing of its
//! batch, and the loop-nest vocabulary it is made of (structures, plans, views mapped onto
//! loops, runtime numbers).

use hassium_core::{BaseId, Batch, DType, Instr, Kernel, Opcode, Scalar};

/// Elements of the reduction axis one partial covers. Fixed, so partials — and the order
/// they are combined in — do not depend on the number of threads.
pub const CHUNK: usize = 8192;
/// Independent accumulators of an inner-loop reduction: they let the compiler vectorise a
/// float reduction without reassociating it, and are combined in a fixed order.
pub const LANES: usize = 8;
/// Outputs handled together by a reduction along an outer axis (accumulator array size).
pub const BLOCK: usize = 256;
/// Most work-items of a device work-group that reduces one chunk (`Partials`) or
/// combines the partials (`_fin`): the size of the local arrays they share. A device
/// engine launches such groups with any multiple of `LANES` up to this; the result does
/// not depend on which.
pub const WIDE: usize = 256;

/// Elements: a host engine splits a one-loop elementwise kernel across threads (and the
/// cluster engine across ranks) only at multiples of this, so that every element takes the
/// same path, a full vector or the scalar remainder at the end, whatever the split. The
/// paths round alike except in math functions, whose vector variants (glibc's libmvec)
/// may differ from the scalar ones by a few ulp.
pub const ALIGN: usize = 64;

const _: () = assert!(WIDE.is_multiple_of(LANES) && CHUNK.is_multiple_of(WIDE));
const _: () = assert!(CHUNK.is_multiple_of(ALIGN));

/// How shapes, strides and offsets reach the code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Specialize {
    /// Baked in as literals: the best code, one compile per shape.
    Fixed,
    /// Passed in the `meta` array: one compile serves every size with the same structure.
    Dynamic,
}

/// How the engine may call a rendered kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plan {
    /// Nothing to compute (an empty output).
    Empty,
    /// Any split of `[0, extent)` of the outermost loop across calls is valid; calls are
    /// independent. `inner` elements are computed per unit of the range.
    Parallel { extent: usize, inner: usize },
    /// A reduction split into chunks of `chunk` units of `[0, extent)`: calls must cover
    /// `chunk`-aligned ranges; each chunk leaves its partials in `part` (`slots` of 16
    /// bytes per chunk) and the `<name>_fin` function, called once over `[0, chunks)`,
    /// combines them in chunk order.
    Partials {
        extent: usize,
        chunks: usize,
        slots: usize,
        /// Units of `[0, extent)` per chunk: `CHUNK` elements, or a `RowPartials`
        /// kernel's rows.
        chunk: usize,
        /// Elements computed per unit of the range (a row's columns; 1 otherwise).
        inner: usize,
    },
    /// One call over `[0, extent)` (scatters, arg-reductions of a whole axis, 0-d kernels).
    Serial { extent: usize },
    /// Like `Parallel`, for a kernel that writes rows of an array it also reads at rows up
    /// to `lag` away (a stencil updating its own grid). Each call computes its rows into a
    /// ring of `lag + 1` rows in `part` and writes a row back `lag` rows late, so every
    /// read sees old values; a call's first and last `lag` rows stay in `part` (`edge`
    /// bytes per call, a multiple of 16), and `<name>_fin`, called with each call's range
    /// and `part` once every call has finished, writes them. Calls may split
    /// `[0, extent)` any way, but `_fin` must see the same split.
    Lagged {
        extent: usize,
        inner: usize,
        lag: usize,
        edge: usize,
    },
}

/// A size or offset: a literal, or slot `i` of the `meta` array.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Num {
    Lit(i64),
    Meta(usize),
}

/// Where an instruction runs in the loop nest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Space {
    /// Over the iteration shape, inside the innermost loop.
    Body,
    /// Over the reduced shape, after the reduction loop.
    Epilogue,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum ViewKind {
    /// Memory (buffer `slot`) or, with no slot, a contracted base living in registers.
    Data { slot: Option<usize> },
    /// The row-major linear index within an output (Range, Random).
    Linear,
}

/// A view mapped onto the loop nest: offset plus one stride per loop.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct LView {
    pub kind: ViewKind,
    pub dtype: DType,
    pub offset: Num,
    pub strides: Vec<Num>,
}

/// A 1-D view addressed by computed indices (a gather's source, a scatter's target).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct RandomAccess {
    pub slot: usize,
    pub dtype: DType,
    pub offset: Num,
    pub stride: Num,
    pub len: Num,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Arg {
    View(usize),
    Scalar(usize),
    Random(usize),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct LInstr {
    pub op: Opcode,
    pub space: Space,
    /// The loop-indexed output view (none for scatters, whose target is random access).
    pub out: Option<usize>,
    pub out_dtype: DType,
    /// The dtype the operation computes in (its inputs' common dtype).
    pub in_dtype: DType,
    pub args: Vec<Arg>,
    /// For scatters: the random-access target.
    pub target: Option<usize>,
}

/// The loop-nest shape of a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Structure {
    /// Every loop, in order; the first is parallel.
    Elementwise,
    /// Non-axis loops (first parallel), then the scan axis with a running accumulator.
    Scan { axis: usize },
    /// A scan with exactly one (collapsed) loop after its axis: loops before the axis,
    /// then blocks of `BLOCK` of the trailing loop, the axis, and the trailing loop with
    /// an array of running accumulators, so a column scan (`cumsum(axis=0)`) streams
    /// whole rows instead of walking each column down its stride.
    ScanOuter { axis: usize },
    /// Non-axis loops (first parallel), then the reduction along `axis` innermost.
    ReduceInner { axis: usize, lanes: bool },
    /// Loops before `axis`, then blocks of the one trailing loop `axis + 1`, then the axis,
    /// then the trailing loop with an accumulator array (a column sum streams rows).
    ReduceOuter { axis: usize },
    /// The single loop is the reduction axis, split into partials.
    Partials,
    /// Loop 0 of two is the reduction axis and loop 1 at most `ROW_PARTIALS_COLUMNS`
    /// columns (a tall matrix's column sums): chunks of `rows` rows each leave a partial
    /// per reduction and column, and `_fin` combines them per column in chunk order,
    /// then runs the epilogue. `wide`: more than `BLOCK` columns (see the renderer's
    /// `row_partials`). A `ReduceOuter` kernel splits only the columns between tasks:
    /// one task for up to `BLOCK` of them.
    RowPartials { rows: usize, wide: bool },
}

/// Most columns a `RowPartials` kernel takes.
pub(crate) const ROW_PARTIALS_COLUMNS: usize = 4096;

/// Elements a `RowPartials` chunk covers about: its rows are this over the columns
/// rounded up to a power of two, so one compiled kernel serves nearby widths.
const ROW_CHUNK_ELEMENTS: usize = 8 * CHUNK;

/// Rows of one `RowPartials` chunk for `columns` columns: at least 64, so that the
/// partials (16 bytes a column) stay a small fraction of what the chunk reads.
pub(super) fn row_chunk(columns: usize) -> usize {
    (ROW_CHUNK_ELEMENTS / columns.max(1).next_power_of_two()).max(64)
}

/// A kernel lowered to one loop nest, ready to render and to call.
#[derive(Clone, Debug)]
pub struct Lowered {
    pub spec: Specialize,
    pub plan: Plan,
    /// Buffer slot → base (contracted bases have no slot).
    pub slots: Vec<BaseId>,
    pub slot_dtypes: Vec<DType>,
    /// Scalar argument slots, in instruction order.
    pub scalars: Vec<Scalar>,
    /// The `meta` array of a `Dynamic` kernel (empty for `Fixed`).
    pub meta: Vec<i64>,
    /// Bytes the kernel must read and write in memory at least, for GB/s (see `traffic`).
    pub bytes: u64,
    /// Elements of the iteration space.
    pub elements: usize,
    pub(crate) structure: Structure,
    pub(crate) extents: Vec<Num>,
    pub(crate) views: Vec<LView>,
    pub(crate) randoms: Vec<RandomAccess>,
    pub(crate) instrs: Vec<LInstr>,
    /// Instruction position → reduction number (for accumulator and partial layout).
    pub(crate) nreductions: usize,
    /// Views whose stores are held back (a `Lagged` plan), in part-buffer order.
    pub(crate) lagged: Vec<usize>,
    /// Where each buffer slot's base and each scalar slot's value was found in the kernel
    /// (see [`Lowered::rebind`]).
    pub(crate) slot_sites: Vec<Site>,
    pub(crate) scalar_sites: Vec<Site>,
}

/// A place in a kernel: position in `Kernel::instrs`, then operand (0 = the output,
/// `n + 1` = input `n`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Site {
    pub(super) at: usize,
    pub(super) operand: usize,
}

/// What differs between kernels of one structure: the bases behind the buffer slots and
/// the scalar values (see [`Lowered::rebind`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Binding {
    pub slots: Vec<BaseId>,
    pub scalars: Vec<Scalar>,
}

impl Lowered {
    /// A hash of everything the source depends on: equal signatures render equal code.
    pub fn signature(&self) -> u128 {
        use std::hash::Hash;
        // Hashed field by field (this runs for every kernel of every batch; formatting the
        // structure as text first cost more than the rest of planning).
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        self.spec.hash(&mut h);
        self.structure.hash(&mut h);
        self.extents.hash(&mut h);
        self.views.hash(&mut h);
        self.randoms.hash(&mut h);
        self.instrs.hash(&mut h);
        self.slot_dtypes.hash(&mut h);
        self.lagged.hash(&mut h);
        if let Plan::Lagged { lag, .. } = self.plan {
            lag.hash(&mut h);
        }
        for sc in &self.scalars {
            sc.dtype().hash(&mut h);
        }
        h.digest128()
    }

    /// True when a device dialect (`GlobalId` index range) renders this `Partials` kernel
    /// for one work-group per chunk: the group's items compute the chunk's values a round
    /// of `get_local_size(0)` elements at a time into local memory, where `LANES` items
    /// fold them into the lanes in exactly the order of the one-item form (element
    /// `c0 + l + k * LANES` into lane `l`, the tail into lane 0), and item 0 folds the
    /// lanes in lane order. The result is bit-for-bit the CPU engine's, for any group size
    /// that is a multiple of `LANES` up to [`WIDE`], while the arithmetic before the
    /// reduction runs on every item. A device engine launches `chunks` such groups.
    /// Kernels with checked gathers keep one item per chunk: an item that stops at an
    /// index error must not leave its group waiting at the barrier.
    pub fn group_partials(&self) -> bool {
        self.structure == Structure::Partials && self.randoms.is_empty()
    }

    /// True when a device dialect renders this row reduction (`ReduceInner` with lanes)
    /// for one work-group per row, with the lane assignment and fold order of one item
    /// per row (see [`Lowered::group_partials`]), for any group size that is a multiple
    /// of `LANES` up to [`WIDE`]. A device engine launches `extent` such groups.
    ///
    /// Not for rows known to be shorter than `LANES` (a `Fixed` kernel's literal extent):
    /// their elements all go to lane 0, in order, so one item per row gives the same
    /// bits, without a group of mostly idle items meeting at barriers for every row
    /// (k-means' squared distances summed over 2 coordinates, 8 rows per point).
    pub fn group_rows(&self) -> bool {
        let short = match self.structure {
            Structure::ReduceInner { axis, .. } => {
                matches!(self.extents.get(axis), Some(&Num::Lit(e)) if (e as usize) < LANES)
            }
            _ => false,
        };
        matches!(self.structure, Structure::ReduceInner { lanes: true, .. })
            && matches!(self.plan, Plan::Parallel { .. })
            && self.randoms.is_empty()
            && !short
    }

    /// True when a device dialect renders this elementwise kernel of two or more loops
    /// with rows of the parallel loop tiled over work-groups: the items of a group take
    /// neighbouring elements of the innermost loop, so their loads and stores coalesce,
    /// where one item per row would walk its row alone, a row away from its neighbours.
    /// A group of `local` items (a power of two) covers [`Self::tile_rows`] rows; its
    /// items stride each row by the power of two at or above the row's length, at most
    /// `local`, and walk the loops between in order. A device engine launches
    /// `extent.div_ceil(tile_rows) * local` items.
    pub fn tiled_rows(&self) -> bool {
        self.structure == Structure::Elementwise
            && self.extents.len() >= 2
            && matches!(self.plan, Plan::Parallel { .. })
    }

    /// Rows of the parallel loop one work-group of `local` items (a power of two) covers
    /// in the [`Self::tiled_rows`] form: `local` over the stride of its rows (the
    /// kernel's prologue computes the same stride).
    pub fn tile_rows(&self, local: usize) -> usize {
        let row = self.extents.last().map_or(1, |&n| self.value(n)).max(1);
        let mut stride = 1;
        while stride < row && stride < local {
            stride <<= 1;
        }
        (local / stride).max(1)
    }

    /// The value of a number of the code: a literal, or its entry of `meta`.
    fn value(&self, n: Num) -> usize {
        let v = match n {
            Num::Lit(v) => v,
            Num::Meta(i) => self.meta.get(i).copied().unwrap_or(0),
        };
        usize::try_from(v).unwrap_or(0)
    }

    /// True when a device dialect renders this `RowPartials` kernel for one work-group
    /// per chunk of rows, whose items compute a round of whole rows into local memory
    /// and whose first items, one per column, add them up in the one-item form's order
    /// (each column's rows in turn), for any group size up to [`WIDE`]. A device engine
    /// launches `chunks` groups. Only up to `BLOCK` columns (more take
    /// [`Lowered::item_per_column`]), and not with checked gathers (see
    /// [`Lowered::group_partials`]).
    pub fn group_row_partials(&self) -> bool {
        matches!(self.structure, Structure::RowPartials { wide: false, .. })
            && self.randoms.is_empty()
    }

    /// True when a device dialect renders this `RowPartials` kernel with a work-item
    /// per chunk and column (more than `BLOCK` columns): item `g` adds up column
    /// `g % columns` of chunk `g / columns` row by row, the one-item form's order, and
    /// neighbouring items read neighbouring columns. A device engine launches
    /// `chunks * columns` items ([`Lowered::fin_columns`] is the column count).
    pub fn item_per_column(&self) -> bool {
        matches!(self.structure, Structure::RowPartials { wide: true, .. })
    }

    /// Columns a `RowPartials` kernel's `_fin` combines: on a device, one work-item each
    /// (0 for other kernels).
    pub fn fin_columns(&self) -> usize {
        match (self.structure, self.plan) {
            (Structure::RowPartials { .. }, Plan::Partials { inner, .. }) => inner,
            _ => 0,
        }
    }

    /// True when a device dialect renders this kernel's `_fin` for one work-group (of up
    /// to [`WIDE`] items, any number): the items load the partials into local memory a
    /// round at a time and item 0 combines them in chunk order, so the loads overlap
    /// instead of one item waiting on each in turn. A device engine launches one group.
    pub fn group_fin(&self) -> bool {
        self.structure == Structure::Partials
    }

    /// True when the kernel's compiled code may round differently from the reference
    /// interpreter: an add or multiply reduction of an inexact dtype (compiled code folds
    /// in the documented chunk and lane order, the interpreter pairwise), or a math
    /// function of an inexact dtype that compiled loops call through glibc's vector
    /// variants (within 4 ulp of the scalar ones the interpreter calls).
    pub fn order_sensitive(&self) -> bool {
        self.instrs.iter().any(|i| {
            i.in_dtype.is_inexact()
                && (matches!(i.op, Opcode::AddReduce | Opcode::MultiplyReduce) || vector_math(i.op))
        })
    }

    /// True when the plan needs the `_fin` function.
    pub fn has_fin(&self) -> bool {
        matches!(self.plan, Plan::Partials { .. } | Plan::Lagged { .. })
    }

    /// True when the kernel holds writes back (a `Lagged` plan): it needs a pass after
    /// all of its calls, which a single device launch does not have.
    pub fn is_lagged(&self) -> bool {
        matches!(self.plan, Plan::Lagged { .. })
    }

    /// True when a device dialect renders this reduction or scan along axis 0 of two
    /// loops (`ReduceOuter`/`ScanOuter`, a column sum of a matrix too wide for
    /// `RowPartials`) with a work-item per column, each walking its column's rows in
    /// order into a scalar accumulator: the loop form's order, without its accumulator
    /// array of `BLOCK` columns, which would live in slow memory on a GPU. A device
    /// engine then launches one item per unit of the range, not per [`Self::parallel_step`].
    pub fn outer_item_per_column(&self) -> bool {
        matches!(
            self.structure,
            Structure::ReduceOuter { axis: 0 } | Structure::ScanOuter { axis: 0 }
        )
    }

    /// Units of `[0, extent)` a host engine's split of a `Parallel` plan must keep together:
    /// [`ALIGN`] when the parallel loop is the only, vectorised, loop; else
    /// [`Self::parallel_step`].
    pub fn split_step(&self) -> usize {
        if self.structure == Structure::Elementwise && self.extents.len() == 1 {
            ALIGN.max(self.parallel_step())
        } else {
            self.parallel_step()
        }
    }

    /// Units of a `Parallel` plan's `[begin, end)` range one iteration of the parallel
    /// loop covers (one work-item, with the `GlobalId` index range): 1, except for a
    /// reduction or scan along axis 0 that streams rows, whose parallel loop walks
    /// blocks of `BLOCK` columns. A device engine launches `extent.div_ceil(step)` work-items.
    pub fn parallel_step(&self) -> usize {
        match self.structure {
            Structure::ReduceOuter { axis: 0 } | Structure::ScanOuter { axis: 0 } => BLOCK,
            _ => 1,
        }
    }

    /// The slots and scalars [`lower`](super::lower) would give `kernel`, read from the places where it
    /// found them in the kernel this was lowered from, so a batch's many kernels of one
    /// structure are lowered once. `kernel` must have the same fixed-mode
    /// `hassium_core::kernel_key` as that kernel (over verified instructions): then it is
    /// the same kernel over renamed bases with other scalar values, and lowering it again
    /// would give this result with only `slots` and `scalars` changed. `None` where
    /// `kernel` plainly does not fit (a site that is missing or of another kind or dtype).
    pub fn rebind(&self, batch: &Batch, kernel: &Kernel) -> Option<Binding> {
        let instr = |s: &Site| -> Option<&Instr> { batch.instrs.get(*kernel.instrs.get(s.at)?) };
        // Filled in loops: collecting into `Option<Vec<_>>` knows no length and regrows.
        let mut slots = Vec::with_capacity(self.slot_sites.len());
        for (s, &dtype) in self.slot_sites.iter().zip(&self.slot_dtypes) {
            let i = instr(s)?;
            let v = match s.operand {
                0 => &i.out,
                n => i.ins.get(n - 1)?.as_view()?,
            };
            if v.dtype != dtype {
                return None;
            }
            slots.push(v.base);
        }
        let mut scalars = Vec::with_capacity(self.scalar_sites.len());
        for (s, was) in self.scalar_sites.iter().zip(&self.scalars) {
            let now = instr(s)?.ins.get(s.operand.checked_sub(1)?)?.as_scalar()?;
            if now.dtype() != was.dtype() {
                return None;
            }
            scalars.push(*now);
        }
        Some(Binding { slots, scalars })
    }
}

/// Opcodes whose compiled code calls a libm function that glibc also provides in vector
/// form (the compiler's `LIBMVEC_DECLS`), so a vectorised loop may round differently
/// from a scalar call.
pub fn vector_math(op: Opcode) -> bool {
    use Opcode::*;
    matches!(
        op,
        Exp | Log
            | Sin
            | Cos
            | Power
            | Exp2
            | Expm1
            | Log2
            | Log10
            | Log1p
            | Tan
            | Arcsin
            | Arccos
            | Arctan
            | Arctan2
            | Sinh
            | Cosh
            | Tanh
            | Arcsinh
            | Arccosh
            | Arctanh
            | Cbrt
            | Hypot
    )
}
