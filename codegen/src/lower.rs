//! Lowering: from a kernel's instructions over strided views to one loop nest.
//!
//! The result, [`Lowered`], holds everything the renderer needs and nothing of the batch
//! it came from, so its [`Lowered::signature`] (a hash of that structure) decides whether
//! two kernels render to the same source. In `Fixed` mode extents, strides and offsets are
//! literals and part of the signature; in `Dynamic` mode they are slots of a runtime
//! `meta` array, except strides of 0 and 1, which stay literal because they decide
//! whether the inner loop is unit-stride (vectorisable) or a broadcast.

use crate::traffic::Traffic;
use crate::{Error, Result};
use hassium_core::{lag_rows, overlap, Overlap};
use hassium_core::{BaseId, Batch, DType, Instr, Kernel, OpClass, Opcode, Operand, Scalar, View};
use rustc_hash::FxHashMap;

/// Elements of the reduction axis one partial covers. Fixed, so partials — and the order
/// they are combined in — do not depend on the number of threads.
pub const CHUNK: usize = 8192;
/// Independent accumulators of an inner-loop reduction: they let the compiler vectorise a
/// float reduction without reassociating it, and are combined in a fixed order.
pub const LANES: usize = 8;
/// Outputs handled together by a reduction along an outer axis (accumulator array size).
pub const BLOCK: usize = 256;

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
fn row_chunk(columns: usize) -> usize {
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
    at: usize,
    operand: usize,
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
    /// for work-groups of `LANES` work-items per chunk: item `l` accumulates lane `l`, the
    /// lanes meet in local memory and item 0 folds them in lane order, so the result is
    /// bit-for-bit the one-item-per-chunk (and CPU) result with `LANES` times the
    /// parallelism. A device engine then launches `chunks * LANES` items in groups of
    /// `LANES`. Kernels with checked gathers keep one item per chunk: an item that stops
    /// at an index error must not leave its group waiting at the barrier.
    pub fn group_partials(&self) -> bool {
        self.structure == Structure::Partials && self.randoms.is_empty()
    }

    /// True when a device dialect renders this row reduction (`ReduceInner` with lanes)
    /// for work-groups of `LANES` items per row, with the same lane assignment and fold
    /// order as one item per row (see [`Lowered::group_partials`]). A device engine then
    /// launches `extent * LANES` items in groups of `LANES`.
    pub fn group_rows(&self) -> bool {
        matches!(self.structure, Structure::ReduceInner { lanes: true, .. })
            && matches!(self.plan, Plan::Parallel { .. })
            && self.randoms.is_empty()
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

    /// The slots and scalars [`lower`] would give `kernel`, read from the places where it
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

struct Builder<'a> {
    kernel: &'a Kernel,
    spec: Specialize,
    meta: Vec<i64>,
    slots: Vec<BaseId>,
    view_ids: FxHashMap<(View, bool), usize>,
    /// Views before collapsing: strides over the iteration shape's dimensions.
    raw: Vec<(ViewKind, DType, isize, Vec<isize>)>,
    traffic: Traffic,
    /// The operand being registered, and where each slot's base was first seen.
    site: Site,
    slot_sites: Vec<Site>,
}

impl Builder<'_> {
    fn num(&mut self, v: i64, keep_small: bool) -> Num {
        if self.spec == Specialize::Fixed || (keep_small && (v == 0 || v == 1)) {
            Num::Lit(v)
        } else {
            self.meta.push(v);
            Num::Meta(self.meta.len() - 1)
        }
    }

    fn slot(&mut self, base: BaseId) -> Option<usize> {
        if self.kernel.contracts(base) {
            return None;
        }
        Some(match self.slots.iter().position(|b| *b == base) {
            Some(s) => s,
            None => {
                self.slots.push(base);
                self.slot_sites.push(self.site);
                self.slots.len() - 1
            }
        })
    }

    /// Registers a loop-indexed view; `strides` are over the iteration shape's dims.
    fn view(&mut self, v: &View, strides: Vec<isize>, linear: bool) -> usize {
        let key = (v.clone(), linear);
        if let Some(&id) = self.view_ids.get(&key) {
            return id;
        }
        let kind = if linear {
            ViewKind::Linear
        } else {
            ViewKind::Data {
                slot: self.slot(v.base),
            }
        };
        self.raw
            .push((kind, v.dtype, if linear { 0 } else { v.offset }, strides));
        let id = self.raw.len() - 1;
        self.view_ids.insert(key, id);
        id
    }
}

fn contiguous(shape: &[usize]) -> Vec<isize> {
    let mut s = vec![0isize; shape.len()];
    let mut acc = 1isize;
    for i in (0..shape.len()).rev() {
        s[i] = acc;
        acc *= shape[i].max(1) as isize;
    }
    s
}

fn unsupported<T>(what: impl Into<String>) -> Result<T> {
    Err(Error::Unsupported(what.into()))
}

/// Lowers `kernel` of `batch` to a loop nest specialised as `spec`.
pub fn lower(batch: &Batch, kernel: &Kernel, spec: Specialize) -> Result<Lowered> {
    // Positions in `kernel.instrs` of the instructions that compute (not Free/Sync).
    let at: Vec<usize> = (0..kernel.instrs.len())
        .filter(|&p| !batch.instrs[kernel.instrs[p]].op.is_system())
        .collect();
    let instrs: Vec<usize> = at.iter().map(|&p| kernel.instrs[p]).collect();
    let Some(&first) = instrs.first() else {
        return Err(Error::Malformed("kernel has no instructions".into()));
    };
    for &k in &instrs {
        let i = &batch.instrs[k];
        if i.op == Opcode::Extension {
            return unsupported(format!(
                "extension method {}",
                i.method.as_deref().unwrap_or("?")
            ));
        }
        if i.out.dtype.is_complex() || i.ins.iter().any(|o| o.dtype().is_complex()) {
            return unsupported(format!("complex dtypes ({})", i.op.name()));
        }
        if matches!(
            i.op,
            Opcode::Scatter | Opcode::CondScatter | Opcode::ScatterAdd
        ) && instrs.len() > 1
        {
            return unsupported("a scatter fused with other instructions");
        }
    }
    // The iteration shape and the reduction/scan axis.
    let fi = &batch.instrs[first];
    let shape: Vec<usize> = match fi.op.class() {
        OpClass::Reduce | OpClass::Scan => view_in(fi, 0)?.shape.to_vec(),
        OpClass::Index if fi.op != Opcode::Gather => view_in(fi, 0)?.shape.to_vec(),
        _ => fi.out.shape.to_vec(),
    };
    let mut axis = None;
    let (mut has_reduce, mut has_scan) = (false, false);
    for &k in &instrs {
        let i = &batch.instrs[k];
        if i.op.is_reduction() || i.op.is_scan() {
            has_reduce |= i.op.is_reduction();
            has_scan |= i.op.is_scan();
            let a = i
                .axis
                .ok_or_else(|| Error::Malformed(format!("{} without an axis", i.op.name())))?;
            if axis.is_some_and(|x| x != a) {
                return unsupported("reductions along different axes in one kernel");
            }
            axis = Some(a);
            if view_in(i, 0)?.shape.as_slice() != shape.as_slice() {
                return Err(Error::Malformed(format!(
                    "{} input does not have the kernel's shape",
                    i.op.name()
                )));
            }
        }
    }
    if has_reduce && has_scan {
        return unsupported("a reduction and a scan in one kernel");
    }
    if let Some(a) = axis {
        if a >= shape.len() {
            return Err(Error::Malformed(format!(
                "axis {a} of a {}-d kernel",
                shape.len()
            )));
        }
    }
    let reduced: Vec<usize> = match axis {
        Some(a) if has_reduce => shape
            .iter()
            .enumerate()
            .filter(|&(d, _)| d != a)
            .map(|(_, &n)| n)
            .collect(),
        _ => shape.clone(),
    };
    let nd = shape.len();
    let mut b = Builder {
        kernel,
        spec,
        meta: Vec::new(),
        slots: Vec::new(),
        view_ids: FxHashMap::default(),
        raw: Vec::new(),
        traffic: Traffic::default(),
        site: Site { at: 0, operand: 0 },
        slot_sites: Vec::new(),
    };
    // Strides of a view over the iteration dims, for a view of the full or reduced shape.
    let full_strides = |v: &View| -> Result<Vec<isize>> {
        if v.shape.as_slice() != shape.as_slice() {
            return Err(Error::Malformed(format!(
                "a view of shape {:?} in a kernel over {:?}",
                v.shape, shape
            )));
        }
        Ok(v.strides.to_vec())
    };
    let reduced_strides = |v: &View| -> Result<Vec<isize>> {
        if v.shape.as_slice() != reduced.as_slice() {
            return Err(Error::Malformed(format!(
                "a view of shape {:?} after a reduction to {:?}",
                v.shape, reduced
            )));
        }
        let mut s = v.strides.to_vec();
        if let Some(a) = axis {
            s.insert(a, 0);
        }
        Ok(s)
    };
    let mut scalars = Vec::new();
    let mut scalar_sites = Vec::new();
    let mut randoms: Vec<(usize, DType, isize, isize, usize)> = Vec::new();
    let mut linstrs = Vec::new();
    let mut seen_epilogue = false;
    for (&k, &at) in instrs.iter().zip(&at) {
        let i = &batch.instrs[k];
        b.site = Site { at, operand: 0 };
        let class = i.op.class();
        let out_full = i.out.shape.as_slice() == shape.as_slice();
        let space = match class {
            OpClass::Reduce => Space::Body,
            _ if has_reduce && !out_full => Space::Epilogue,
            _ => Space::Body,
        };
        if space == Space::Epilogue {
            seen_epilogue = true;
        } else if seen_epilogue {
            return unsupported("a full-shape instruction after a reduction's epilogue");
        }
        let strides_of = |v: &View| {
            if space == Space::Body {
                full_strides(v)
            } else {
                reduced_strides(v)
            }
        };
        let mut args = Vec::new();
        let mut target = None;
        let out = match i.op {
            Opcode::Scatter | Opcode::CondScatter | Opcode::ScatterAdd => {
                target = Some(random_access(&mut b, &mut randoms, &i.out)?);
                None
            }
            _ if class == OpClass::Reduce => Some(b.view(&i.out, reduced_strides(&i.out)?, false)),
            _ => Some(b.view(&i.out, strides_of(&i.out)?, false)),
        };
        if matches!(i.op, Opcode::Range | Opcode::Random) {
            let lin = match space {
                Space::Body => contiguous(&shape),
                Space::Epilogue => {
                    let mut s = contiguous(&reduced);
                    if let Some(a) = axis {
                        s.insert(a, 0);
                    }
                    s
                }
            };
            args.push(Arg::View(b.view(&i.out, lin, true)));
        }
        for (n, op) in i.ins.iter().enumerate() {
            b.site = Site { at, operand: n + 1 };
            match op {
                Operand::Scalar(s) => {
                    scalars.push(*s);
                    scalar_sites.push(b.site);
                    args.push(Arg::Scalar(scalars.len() - 1));
                }
                Operand::View(v) if i.op == Opcode::Gather && n == 0 => {
                    args.push(Arg::Random(random_access(&mut b, &mut randoms, v)?));
                }
                Operand::View(v) => {
                    let st = if class == OpClass::Reduce || class == OpClass::Scan {
                        full_strides(v)?
                    } else {
                        strides_of(v)?
                    };
                    args.push(Arg::View(b.view(v, st, false)));
                    if !kernel.contracts(v.base) {
                        b.traffic.read(v);
                    }
                }
            }
        }
        if out.is_some() && !kernel.contracts(i.out.base) {
            b.traffic.write(&i.out);
        }
        let in_dtype = match i.op {
            Opcode::Where => i.ins[1].dtype(),
            Opcode::Gather => i.ins[0].dtype(),
            Opcode::Scatter | Opcode::CondScatter | Opcode::ScatterAdd => i.ins[1].dtype(),
            Opcode::Range | Opcode::Random => i.out.dtype,
            _ => i.ins.first().map_or(i.out.dtype, |o| o.dtype()),
        };
        linstrs.push(LInstr {
            op: i.op,
            space,
            out,
            out_dtype: i.out.dtype,
            in_dtype,
            args,
            target,
        });
    }
    let nreductions = linstrs.iter().filter(|i| i.op.is_reduction()).count();
    let (lagged, lag) = held_back(&b, &linstrs)?;

    // Empty output space: nothing to do. An empty reduction axis is fine unless some
    // reduction has no identity, which NumPy reports as an error.
    let out_elems: usize = reduced.iter().product();
    let raw_elems: usize = shape.iter().product();
    if has_reduce && shape[axis.unwrap_or(0)] == 0 && out_elems > 0 {
        if let Some(i) = linstrs
            .iter()
            .find(|i| i.op.is_reduction() && i.op.info().identity == hassium_core::Identity::None)
        {
            return Err(Error::Value(format!(
                "zero-size array to reduction operation {} which has no identity",
                i.op.name().trim_end_matches(".reduce")
            )));
        }
    }
    if out_elems == 0 || (!has_reduce && raw_elems == 0) {
        return Ok(empty(spec, b, batch, scalars, scalar_sites));
    }

    // Collapse: drop extent-1 dims (never the axis), then merge neighbours across which
    // every view is contiguous, so the inner loop is as long as possible. Held-back rows
    // are rows of dimension 0 (`lag_rows` counts them so): that dimension stays a loop.
    let dims: Vec<usize> = (0..nd)
        .filter(|&d| shape[d] != 1 || Some(d) == axis)
        .collect();
    let mut groups: Vec<(usize, Vec<isize>)> = Vec::new(); // innermost first: (extent, stride per view)
    let mut axis_group = None;
    for &d in dims.iter().rev() {
        let strides: Vec<isize> = b.raw.iter().map(|v| v.3[d]).collect();
        let last = groups.len().checked_sub(1);
        if let Some((ext, inner)) = groups.last_mut() {
            let mergeable = Some(d) != axis
                && !(lag.is_some() && d == 0)
                && axis_group != last
                && strides
                    .iter()
                    .zip(inner.iter())
                    .all(|(&s, &si)| s == si * *ext as isize);
            if mergeable {
                *ext *= shape[d];
                continue;
            }
        }
        if Some(d) == axis {
            axis_group = Some(groups.len());
        }
        groups.push((shape[d], strides));
    }
    groups.reverse();
    let nloops = groups.len();
    let axis_loop = axis_group.map(|g| nloops - 1 - g);
    let ext: Vec<usize> = groups.iter().map(|g| g.0).collect();

    let is_arg = linstrs.iter().any(|i| i.op.is_arg_reduction());
    let is_f16_reduce = linstrs
        .iter()
        .any(|i| i.op.is_reduction() && i.in_dtype == DType::Float16);
    let is_scatter = linstrs.iter().any(|i| i.target.is_some());
    let structure = match (axis_loop, has_reduce) {
        (Some(a), false) if lag.is_none() && !is_scatter && a + 2 == nloops && ext[a + 1] >= 2 => {
            Structure::ScanOuter { axis: a }
        }
        (Some(a), false) => Structure::Scan { axis: a },
        (Some(a), true) if nloops == 1 && !is_arg && !is_f16_reduce => {
            let _ = a;
            Structure::Partials
        }
        (Some(0), true)
            if !is_arg
                && !is_f16_reduce
                && lag.is_none()
                && !is_scatter
                && nloops == 2
                && ext[1] <= ROW_PARTIALS_COLUMNS
                && ext[0] >= 2 * row_chunk(ext[1]) =>
        {
            Structure::RowPartials {
                rows: row_chunk(ext[1]),
                wide: ext[1] > BLOCK,
            }
        }
        (Some(a), true)
            if !is_arg && lag.is_none() && a + 2 == nloops && ext[a + 1] >= 2 * LANES =>
        {
            Structure::ReduceOuter { axis: a }
        }
        (Some(a), true) => Structure::ReduceInner {
            axis: a,
            lanes: !is_arg,
        },
        (None, _) => Structure::Elementwise,
    };
    let elements: usize = ext.iter().product();
    let par_loop = match structure {
        Structure::Elementwise => (nloops > 0).then_some(0),
        Structure::Scan { axis } | Structure::ReduceInner { axis, .. } => {
            (0..nloops).find(|&d| d != axis)
        }
        Structure::ReduceOuter { axis } | Structure::ScanOuter { axis } => {
            Some(if axis > 0 { 0 } else { axis + 1 })
        }
        Structure::Partials | Structure::RowPartials { .. } => None,
    };
    let plan = if let Some(lag) = lag {
        // The fuser holds writes back only where the rows of dimension 0 are the parallel
        // loop; anything else is a kernel this renderer does not know how to run.
        let rows_parallel = matches!(
            structure,
            Structure::Elementwise | Structure::ReduceInner { .. }
        ) && par_loop == Some(0)
            && nloops >= 2
            && shape[0] == ext[0];
        if !rows_parallel || is_scatter {
            return unsupported("held-back writes outside a loop over rows");
        }
        let row = elements / ext[0];
        Plan::Lagged {
            extent: ext[0],
            inner: row,
            lag,
            edge: (lagged.len() * (2 * lag + 1) * row * 8).next_multiple_of(16),
        }
    } else {
        match (structure, par_loop) {
            _ if is_scatter => Plan::Serial {
                extent: par_loop.map_or(1, |p| ext[p]),
            },
            (Structure::Partials, _) => Plan::Partials {
                extent: ext[0],
                chunks: ext[0].div_ceil(CHUNK),
                slots: nreductions,
                chunk: CHUNK,
                inner: 1,
            },
            (Structure::RowPartials { rows, .. }, _) => Plan::Partials {
                extent: ext[0],
                chunks: ext[0].div_ceil(rows),
                slots: nreductions * ext[1],
                chunk: rows,
                inner: ext[1],
            },
            (_, Some(p)) => Plan::Parallel {
                extent: ext[p],
                inner: elements / ext[p].max(1),
            },
            (_, None) => Plan::Serial { extent: 1 },
        }
    };

    // Numbers: extents, then per view offset and strides, then random-access views.
    let extents: Vec<Num> = ext.iter().map(|&e| b.num(e as i64, false)).collect();
    let raw = std::mem::take(&mut b.raw);
    let mut views = Vec::with_capacity(raw.len());
    for (vi, (kind, dtype, offset, _)) in raw.into_iter().enumerate() {
        let offset = b.num(offset as i64, true);
        let strides = groups.iter().map(|g| g.1[vi]).collect::<Vec<_>>();
        let strides = strides.into_iter().map(|s| b.num(s as i64, true)).collect();
        views.push(LView {
            kind,
            dtype,
            offset,
            strides,
        });
    }
    let randoms = randoms
        .into_iter()
        .map(|(slot, dtype, off, stride, len)| RandomAccess {
            slot,
            dtype,
            offset: b.num(off as i64, true),
            stride: b.num(stride as i64, true),
            len: b.num(len as i64, false),
        })
        .collect();
    let slot_dtypes = b
        .slots
        .iter()
        .map(|id| batch.base(*id).map_or(DType::UInt8, |x| x.dtype))
        .collect();
    Ok(Lowered {
        spec,
        plan,
        slots: b.slots,
        slot_dtypes,
        scalars,
        meta: b.meta,
        bytes: b.traffic.bytes(),
        elements,
        structure,
        extents,
        views,
        randoms,
        instrs: linstrs,
        nreductions,
        lagged,
        slot_sites: b.slot_sites,
        scalar_sites,
    })
}

/// The views whose stores must be held back, and by how many rows: a view stored in the
/// body whose base the kernel also reads, before the store, through another view that
/// overlaps it (the fuser allows that only as [`hassium_core::lag_rows`] describes).
fn held_back(b: &Builder<'_>, instrs: &[LInstr]) -> Result<(Vec<usize>, Option<usize>)> {
    let slot = |id: usize| match b.raw[id].0 {
        ViewKind::Data { slot } => slot,
        ViewKind::Linear => None,
    };
    // Stores per slot, then the reads of a stored slot through some other view: almost
    // every kernel has none, and this stays linear in its size.
    let mut stores: FxHashMap<usize, Vec<(usize, usize)>> = FxHashMap::default();
    for (pos, i) in instrs.iter().enumerate() {
        if let Some((w, s)) = i.out.and_then(|w| Some((w, slot(w)?))) {
            stores.entry(s).or_default().push((pos, w));
        }
    }
    let mut reads: Vec<(usize, usize, usize)> = Vec::new();
    for (pos, i) in instrs.iter().enumerate() {
        for a in &i.args {
            let Arg::View(r) = *a else { continue };
            let Some(s) = slot(r) else { continue };
            if stores
                .get(&s)
                .is_some_and(|ws| ws.iter().any(|&(_, w)| w != r))
            {
                reads.push((s, pos, r));
            }
        }
    }
    if reads.is_empty() {
        return Ok((Vec::new(), None));
    }
    let mut original: Vec<Option<&View>> = vec![None; b.raw.len()];
    for ((v, linear), &id) in &b.view_ids {
        if !linear {
            original[id] = Some(v);
        }
    }
    let (mut lagged, mut lag) = (Vec::new(), None);
    for (&s, ws) in &stores {
        for &(pos, w) in ws {
            let (Some(wv), false) = (original[w], lagged.contains(&w)) else {
                continue;
            };
            let mut k_w = None;
            for &(_, rpos, r) in reads.iter().filter(|x| x.0 == s && x.2 != w) {
                let Some(rv) = original[r] else { continue };
                if overlap(rv, wv) == Overlap::Disjoint {
                    continue;
                }
                let k = lag_rows(rv, wv)
                    .filter(|_| rpos < pos && instrs[pos].space == Space::Body)
                    .ok_or_else(|| {
                        Error::Unsupported("a read overlapping a write it cannot precede".into())
                    })?;
                k_w = Some(k_w.unwrap_or(0).max(k));
            }
            if let Some(k) = k_w {
                // The write's own rows: a row is complete only when all of it is computed.
                let own = lag_rows(wv, wv)
                    .ok_or_else(|| Error::Unsupported("held-back write without rows".into()))?;
                lagged.push(w);
                lag = Some(lag.unwrap_or(0).max(k).max(own));
            }
        }
    }
    // Part-buffer order must not depend on hash order.
    lagged.sort_unstable();
    Ok((lagged, lag))
}

fn view_in(i: &Instr, n: usize) -> Result<&View> {
    i.ins
        .get(n)
        .and_then(Operand::as_view)
        .ok_or_else(|| Error::Malformed(format!("{} input {n} is not a view", i.op.name())))
}

fn random_access(
    b: &mut Builder<'_>,
    randoms: &mut Vec<(usize, DType, isize, isize, usize)>,
    v: &View,
) -> Result<usize> {
    if v.ndim() != 1 {
        return unsupported(format!("a {}-d gather source or scatter target", v.ndim()));
    }
    let slot = b
        .slot(v.base)
        .ok_or_else(|| Error::Unsupported("indexing into a contracted base".into()))?;
    b.traffic.random(v);
    randoms.push((slot, v.dtype, v.offset, v.strides[0], v.shape[0]));
    Ok(randoms.len() - 1)
}

fn empty(
    spec: Specialize,
    b: Builder<'_>,
    batch: &Batch,
    scalars: Vec<Scalar>,
    scalar_sites: Vec<Site>,
) -> Lowered {
    let slots = b.slots;
    let slot_dtypes = slots
        .iter()
        .map(|id| batch.base(*id).map_or(DType::UInt8, |x| x.dtype))
        .collect();
    Lowered {
        spec,
        plan: Plan::Empty,
        slots,
        slot_dtypes,
        scalars,
        meta: Vec::new(),
        bytes: 0,
        elements: 0,
        structure: Structure::Elementwise,
        extents: Vec::new(),
        views: Vec::new(),
        randoms: Vec::new(),
        instrs: Vec::new(),
        nreductions: 0,
        lagged: Vec::new(),
        slot_sites: b.slot_sites,
        scalar_sites,
    }
}
