//! Boolean-mask indexing on the engine: `a[mask]` (a compaction) and `a[mask] = v`
//! (an expansion), for a mask over `a`'s leading dimensions.
//!
//! How many elements a mask selects sizes the compaction's result, and NumPy's
//! assignment checks the values against it, so those two need the count: a caller
//! records [`mask_count`] (a sum of the mask, which fuses with whatever computes it),
//! reads that one element, and records the compaction or assignment with it. Nothing
//! else leaves the engine: the mask is never brought to host memory, and no index array
//! is built there. An assignment of a scalar, or of values that broadcast along the
//! selection, needs no count ([`mask_assign_needs_count`]). The compaction's positions
//! (the running count of the mask) are computed with it, so they vanish with it when it
//! turns out dead (see [`lanes`]).
//!
//! The selected element at mask position `r` and inner offset `j` goes to (comes from)
//! result element `(positions[r] - 1) * inner + j`. A masked scatter checks only the
//! indices its mask selects; the gather of an assignment clamps the others to 0.

use crate::args::{check_stored_int, Arg};
use crate::base::{as_dtype, flatten, operand, private_copy, recording, Target, Temps};
use crate::create::generate;
use crate::elementwise::fit_value;
use crate::error::{Error, Result};
use hassium_core::{
    fmt_shape, overlap, BaseId, DType, Instr, OpClass, Opcode, Operand, Overlap, Scalar, View,
};
use std::sync::Mutex;

/// Checks that `mask` indexes `a`'s leading dimensions, with NumPy's error.
pub fn check_mask(a: &View, mask: &View) -> Result<()> {
    if mask.ndim() > a.ndim() {
        return Err(Error::Index(format!(
            "too many indices for array: array is {}-dimensional, but {} were indexed",
            a.ndim(),
            mask.ndim()
        )));
    }
    if let Some(axis) = mask.shape.iter().zip(&a.shape).position(|(m, s)| m != s) {
        return Err(Error::Index(format!(
            "boolean index did not match indexed array along axis {axis}; size of axis is {} but size of corresponding boolean axis is {}",
            a.shape[axis], mask.shape[axis]
        )));
    }
    Ok(())
}

/// How many entries of `mask` are true, as a fresh 0-d int64 array.
pub fn mask_count(t: &mut impl Target, mask: &View) -> Result<View> {
    let spec = crate::reduce::ReduceSpec {
        op: Opcode::AddReduce,
        name: "sum",
        axes: None,
        dtype: Some(DType::Int64),
        keepdims: false,
        initial: None,
    };
    crate::reduce::reduce(t, mask, &spec, None)
}

/// `mask` as a bool operand view (a copy when it may overlap `target`, which the
/// instruction using it writes).
fn mask_operand(
    t: &mut impl Target,
    temps: &mut Temps,
    mask: &View,
    target: Option<&View>,
) -> Result<View> {
    let m = operand(
        t,
        temps,
        &Arg::Array(mask.clone()),
        DType::Bool,
        &mask.shape,
        target,
    )?;
    let Operand::View(m) = m else {
        unreachable!("an array operand stays a view")
    };
    Ok(m)
}

/// The running count of `mask`'s true entries in C order (inclusive), in a temporary
/// int64 array of the mask's shape.
fn positions(t: &mut impl Target, temps: &mut Temps, mask: &View) -> Result<View> {
    let flat = flatten(t, temps, mask)?;
    let pos = temps.view(t, DType::Int64, &[flat.nelem()])?;
    if !pos.is_empty() {
        t.record(Instr::new(Opcode::Identity, pos.clone(), [flat.into()]))?;
        t.record(
            Instr::new(Opcode::AddAccumulate, pos.clone(), [pos.clone().into()]).with_axis(0),
        )?;
    }
    Ok(pos
        .reshape(&mask.shape)
        .expect("a contiguous temporary reshapes to any shape of its size"))
}

/// `v` (whose dimensions are `a`'s leading ones, or `a`'s trailing ones with `lead`
/// leading dimensions missing) broadcast to `a`'s shape with stride-0 dimensions.
fn spread(v: &View, shape: &[usize], lead: usize) -> View {
    let mut w = v.clone();
    let k = v.ndim();
    w.shape = shape.into();
    w.strides = (0..shape.len())
        .map(|d| {
            if d >= lead && d < lead + k {
                v.strides[d - lead]
            } else {
                0
            }
        })
        .collect();
    w
}

/// The int64 result positions of `a`'s elements under the mask (see the module's text),
/// in a temporary of `a`'s shape; below 0 where the mask selects nothing yet unless
/// `clamp`.
fn result_index(
    t: &mut impl Target,
    temps: &mut Temps,
    a: &View,
    pos: &View,
    clamp: bool,
) -> Result<View> {
    let k = pos.ndim();
    let inner: usize = a.shape[k..].iter().product();
    let idx = temps.view(t, DType::Int64, &a.shape)?;
    let p = spread(pos, &a.shape, 0);
    t.record(Instr::new(
        Opcode::Subtract,
        idx.clone(),
        [p.into(), Scalar::Int64(1).into()],
    ))?;
    if clamp {
        t.record(Instr::new(
            Opcode::Maximum,
            idx.clone(),
            [idx.clone().into(), Scalar::Int64(0).into()],
        ))?;
    }
    if inner > 1 {
        t.record(Instr::new(
            Opcode::Multiply,
            idx.clone(),
            [idx.clone().into(), Scalar::Int64(inner as i64).into()],
        ))?;
        let j = temps.view(t, DType::Int64, &a.shape[k..])?;
        generate(t, Opcode::Range, &j, &[])?;
        t.record(Instr::new(
            Opcode::Add,
            idx.clone(),
            [idx.clone().into(), spread(&j, &a.shape, k).into()],
        ))?;
    }
    Ok(idx)
}

/// `a[mask]`: the selected elements (rows, for a mask over fewer dimensions) in C order,
/// as a fresh array of shape `(count,) + a.shape[mask.ndim:]`; `count` is what
/// [`mask_count`] gave.
pub fn compress(t: &mut impl Target, a: &View, mask: &View, count: usize) -> Result<View> {
    check_mask(a, mask)?;
    let k = mask.ndim();
    let mut shape = vec![count];
    shape.extend_from_slice(&a.shape[k..]);
    recording(t, |t, temps| {
        let out = temps.fresh(t, a.dtype, &shape)?;
        if out.is_empty() || a.is_empty() {
            return Ok(out);
        }
        let pos = positions(t, temps, mask)?;
        let idx = result_index(t, temps, a, &pos, false)?;
        let m = mask_operand(t, temps, mask, None)?;
        let flat = out
            .reshape(&[out.nelem()])
            .expect("fresh arrays are contiguous");
        t.record(Instr::new(
            Opcode::CondScatter,
            flat,
            [idx.into(), a.clone().into(), spread(&m, &a.shape, 0).into()],
        ))?;
        // Ranks of the selected elements: in range and distinct whatever the values.
        t.runtime().note_in_range(out.base);
        remember_compaction(Compaction {
            out: out.base,
            source: a.clone(),
            mask: mask.clone(),
        });
        Ok(out)
    })
}

/// A compaction [`compress`] recorded: its result's base, what it selected from, and by
/// which mask.
#[derive(Clone)]
struct Compaction {
    out: BaseId,
    source: View,
    mask: View,
}

/// The last compactions recorded, for [`lanes`] to recognise in the queue. Base ids are
/// never reused, so an entry whose instruction has left the queue names nothing there.
static COMPACTIONS: Mutex<Vec<Compaction>> = Mutex::new(Vec::new());

/// How many compactions [`COMPACTIONS`] keeps.
const REMEMBERED: usize = 16;

fn remember_compaction(c: Compaction) {
    let mut list = COMPACTIONS.lock().unwrap_or_else(|e| e.into_inner());
    if list.len() == REMEMBERED {
        list.remove(0);
    }
    list.push(c);
}

/// An input of a [`Lane`] operation.
enum LaneIn {
    Scalar(Scalar),
    /// A compaction's source: the uncompacted array.
    Source(View),
    /// An earlier operation's result.
    Node(usize),
}

/// An elementwise operation over selections, to recompute over whole arrays.
struct Lane {
    op: Opcode,
    dtype: DType,
    ins: Vec<LaneIn>,
}

/// Most operations [`lanes`] lifts.
const MOST_LANES: usize = 32;

/// What [`lanes`] walks: the queue, the compactions it may find there, the assignment's
/// target and mask, and the selection's shape.
struct Walk<'a> {
    queue: &'a [Instr],
    compactions: Vec<Compaction>,
    target: &'a View,
    mask: &'a View,
    selection: &'a [usize],
    lanes: Vec<Lane>,
}

impl Walk<'_> {
    /// A whole selection-shaped array, as compactions and operations on them make.
    fn whole(&self, v: &View) -> bool {
        *v == View::contiguous(v.base, v.dtype, self.selection)
    }

    /// Whether anything after queue position `k` writes into `v` or frees its base.
    fn written_after(&self, k: usize, v: &View) -> bool {
        self.queue[k + 1..].iter().any(|i| {
            (i.op == Opcode::Free && i.out.base == v.base)
                || (!i.op.is_system() && overlap(&i.out, v) != Overlap::Disjoint)
        })
    }

    /// `base`'s value just before queue position `before`, lifted to whole arrays.
    fn lift(&mut self, base: BaseId, before: usize) -> Option<LaneIn> {
        let w = self.queue[..before]
            .iter()
            .rposition(|i| i.out.base == base)?;
        let instr = &self.queue[w];
        let compaction = (instr.op == Opcode::CondScatter)
            .then(|| self.compactions.iter().find(|c| c.out == base))
            .flatten();
        if let Some(c) = compaction {
            // (A compaction updated in place since, `v[m] *= 2`, is an operation on it.)
            let fits = c.mask == *self.mask
                && c.source.shape == self.target.shape
                && c.source.dtype == instr.out.dtype;
            if !fits || self.written_after(w, &c.source) || self.written_after(w, self.mask) {
                return None;
            }
            return Some(LaneIn::Source(c.source.clone()));
        }
        if instr.op.class() != OpClass::Elementwise
            || instr.can_fail_when_run()
            || !self.whole(&instr.out)
            || self.lanes.len() >= MOST_LANES
        {
            return None;
        }
        let (op, dtype, operands) = (instr.op, instr.out.dtype, instr.ins.clone());
        let mut ins = Vec::with_capacity(operands.len());
        for o in &operands {
            ins.push(match o {
                Operand::Scalar(s) => LaneIn::Scalar(*s),
                Operand::View(v) if self.whole(v) => self.lift(v.base, w)?,
                Operand::View(_) => return None,
            });
        }
        self.lanes.push(Lane { op, dtype, ins });
        Some(LaneIn::Node(self.lanes.len() - 1))
    }
}

/// How `values` (a selection-shaped array in the queue) was computed, lifted to whole
/// arrays. When it is elementwise operations, none that can fail, over compactions of
/// target-shaped arrays by this very `mask` and over scalars, the same operations over
/// the uncompacted arrays give, at every element the mask selects, the value the
/// assignment stores there. So `a[mask] = f(x[mask], y[mask])` becomes
/// `a = where(mask, f(x, y), a)`: no gather, and the compactions, now unread, are dead
/// code (`Batch::in_range`). The elements the mask leaves out compute values nobody
/// stores; they cannot fail or warn (Hassium raises no floating-point warnings).
/// Nothing between a compaction and now may write its source or the mask, or free them.
///
/// Returns the operations in dependency order and the root, or `None` for the general
/// path.
fn lanes(queue: &[Instr], a: &View, mask: &View, values: &View) -> Option<(Vec<Lane>, LaneIn)> {
    let mut walk = Walk {
        queue,
        compactions: COMPACTIONS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone(),
        target: a,
        mask,
        selection: &values.shape,
        lanes: Vec::new(),
    };
    if values.dtype != a.dtype || !walk.whole(values) {
        return None;
    }
    let root = walk.lift(values.base, queue.len())?;
    Some((walk.lanes, root))
}

/// Records `a = where(mask, root, a)` over whole arrays for what [`lanes`] lifted.
fn record_lanes(
    t: &mut impl Target,
    temps: &mut Temps,
    a: &View,
    m: &View,
    lanes: Vec<Lane>,
    root: LaneIn,
) -> Result<()> {
    let mut results: Vec<View> = Vec::with_capacity(lanes.len());
    let operand = |x: &LaneIn, results: &[View]| -> Operand {
        match x {
            LaneIn::Scalar(s) => Operand::Scalar(*s),
            LaneIn::Source(v) => v.clone().into(),
            LaneIn::Node(k) => results[*k].clone().into(),
        }
    };
    for lane in &lanes {
        let out = temps.view(t, lane.dtype, &a.shape)?;
        let ins: Vec<Operand> = lane.ins.iter().map(|x| operand(x, &results)).collect();
        t.record(Instr::new(lane.op, out.clone(), ins))?;
        results.push(out);
    }
    let mut value = operand(&root, &results);
    if let Operand::View(v) = &value {
        if overlap(a, v) == Overlap::Partial {
            value = private_copy(t, temps, v)?.into();
        }
    }
    t.record(Instr::new(
        Opcode::Where,
        a.clone(),
        [spread(m, &a.shape, 0).into(), value, a.clone().into()],
    ))
}

/// How far back [`same_values`] looks for the instructions that computed two arrays, and
/// how deep it follows their operands.
const SAME_VALUES_LOOKBACK: usize = 512;
const SAME_VALUES_DEPTH: usize = 4;

/// Whether views `a` and `b` hold the same values, as far as the queue shows: the same
/// view, or two views each written by the one instruction in the queue's last
/// [`SAME_VALUES_LOOKBACK`] that writes its base, the two instructions equal elementwise
/// operations whose operands are equal scalars, the same views (neither `a` nor `b`,
/// and not written since the first of the instructions involved), or again such pairs.
/// A program that spells one mask twice (`z[~m] = -z[~m]`, `x[abs(x) < 1] =
/// f(x[abs(x) < 1])`) makes two such arrays.
pub fn same_values(t: &mut impl Target, a: &View, b: &View) -> bool {
    if a == b {
        return true;
    }
    let q = t.runtime().queued_instrs();
    let lo = q.len().saturating_sub(SAME_VALUES_LOOKBACK);
    let Some((first, leaves)) = same_pair(q, lo, a, b, SAME_VALUES_DEPTH) else {
        return false;
    };
    leaves.iter().all(|v| {
        v.base != a.base
            && v.base != b.base
            && !q[first..].iter().any(|i| {
                (i.op == Opcode::Free && i.out.base == v.base)
                    || (!i.op.is_system() && overlap(&i.out, v) != Overlap::Disjoint)
            })
    })
}

/// The queue position of the one instruction at or after `lo` writing `v`'s base, when
/// it writes exactly `v`.
fn sole_writer(q: &[Instr], lo: usize, v: &View) -> Option<usize> {
    let mut found = None;
    for (k, i) in q.iter().enumerate().skip(lo) {
        if i.out.base != v.base || i.op.is_system() {
            continue;
        }
        if found.is_some() {
            return None;
        }
        found = Some(k);
    }
    found.filter(|&k| q[k].out == *v)
}

/// For two different views computed alike ([`same_values`]): the earliest instruction
/// involved and the views both read, which must be unwritten since.
fn same_pair(
    q: &[Instr],
    lo: usize,
    a: &View,
    b: &View,
    depth: usize,
) -> Option<(usize, Vec<View>)> {
    if depth == 0 || a.dtype != b.dtype || a.shape != b.shape {
        return None;
    }
    let (ka, kb) = (sole_writer(q, lo, a)?, sole_writer(q, lo, b)?);
    let (ia, ib) = (&q[ka], &q[kb]);
    let alike = ia.op == ib.op
        && ia.op.class() == OpClass::Elementwise
        && ia.axis == ib.axis
        && ia.method.is_none()
        && ib.method.is_none()
        && ia.ins.len() == ib.ins.len();
    if !alike {
        return None;
    }
    let mut first = ka.min(kb);
    let mut leaves = Vec::new();
    for (x, y) in ia.ins.iter().zip(&ib.ins) {
        match (x, y) {
            (Operand::Scalar(s), Operand::Scalar(r)) if s == r => {}
            (Operand::View(u), Operand::View(v)) if u == v => leaves.push(u.clone()),
            (Operand::View(u), Operand::View(v)) => {
                let (f, l) = same_pair(q, lo, u, v, depth - 1)?;
                first = first.min(f);
                leaves.extend(l);
            }
            _ => return None,
        }
    }
    Some((first, leaves))
}

/// `a[mask] = whole[mask]` for a `whole` of `a`'s shape: `a = where(mask, whole, a)`,
/// `whole` cast to `a`'s dtype. No count is needed: the selection and the assignment
/// pair their elements by position in the same mask. The caller keeps `whole` and
/// `mask` as they were when the selection was taken (the Python bridge's selections).
pub fn mask_assign_whole(t: &mut impl Target, a: &View, mask: &View, whole: &View) -> Result<()> {
    check_mask(a, mask)?;
    if whole.shape != a.shape {
        return Err(Error::Value(format!(
            "hassium: internal error: a selection of shape {} assigned into an array of shape {}",
            fmt_shape(&whole.shape),
            fmt_shape(&a.shape)
        )));
    }
    if a.is_empty() {
        return Ok(());
    }
    recording(t, |t, temps| {
        let m = mask_operand(t, temps, mask, Some(a))?;
        let w = as_dtype(t, temps, whole, a.dtype)?;
        record_lanes(t, temps, a, &m, Vec::new(), LaneIn::Source(w))
    })
}

/// The shape `a[mask]` has when `count` elements are selected.
fn selection_shape(a: &View, mask: &View, count: usize) -> Vec<usize> {
    let mut shape = vec![count];
    shape.extend_from_slice(&a.shape[mask.ndim()..]);
    shape
}

/// Whether [`mask_assign`] of `values` needs the mask's count: only when the values
/// have a leading dimension of their own along the selection (not a scalar, and not
/// broadcast along it).
pub fn mask_assign_needs_count(a: &View, mask: &View, values: &Arg) -> bool {
    let ndim = 1 + a.ndim() - mask.ndim().min(a.ndim());
    match fit_value(values, ndim) {
        Arg::Array(v) => v.ndim() == ndim && v.shape[0] != 1,
        _ => false,
    }
}

/// `a[mask] = values`, NumPy's boolean-mask assignment: values cast to `a`'s dtype and
/// broadcast to the selection's shape. `count` is what [`mask_count`] gave, which
/// [`mask_assign_needs_count`] says whether it needs.
pub fn mask_assign(
    t: &mut impl Target,
    a: &View,
    mask: &View,
    count: Option<usize>,
    values: &Arg,
) -> Result<()> {
    check_mask(a, mask)?;
    let k = mask.ndim();
    let res_ndim = 1 + a.ndim() - k;
    let values = fit_value(values, res_ndim);
    check_stored_int(&values, a.dtype)?;
    let gathered = mask_assign_needs_count(a, mask, &values);
    if let Arg::Array(v) = &values {
        // Without a count, the values broadcast along the selection: check the rest.
        let shown = match count {
            Some(c) => c,
            None if gathered => {
                return Err(Error::Value(
                    "hassium: internal error: a boolean-mask assignment needs its count".into(),
                ))
            }
            None => 1,
        };
        let shape = selection_shape(a, mask, shown);
        if v.broadcast_to(&shape).is_err() {
            return Err(if res_ndim == 1 && v.ndim() == 1 {
                Error::Value(format!(
                    "NumPy boolean array indexing assignment cannot assign {} input values to the {shown} output values where the mask is true",
                    v.shape[0]
                ))
            } else {
                Error::Shape(format!(
                    "shape mismatch: value array of shape {} could not be broadcast to indexing result of shape {}",
                    fmt_shape(&v.shape),
                    fmt_shape(&shape)
                ))
            });
        }
    }
    if a.is_empty() || count == Some(0) {
        return Ok(());
    }
    recording(t, |t, temps| {
        let m = mask_operand(t, temps, mask, Some(a))?;
        let v: Operand = match &values {
            Arg::Array(v) if gathered => {
                if let Some((lanes, root)) = lanes(t.runtime().queued_instrs(), a, mask, v) {
                    return record_lanes(t, temps, a, &m, lanes, root);
                }
                let count = count.expect("checked above");
                let shape = selection_shape(a, mask, count);
                let mut src = as_dtype(t, temps, v, a.dtype)?.broadcast_to(&shape)?;
                if src.base == a.base {
                    src = private_copy(t, temps, &src)?;
                }
                let src = flatten(t, temps, &src)?;
                let pos = positions(t, temps, mask)?;
                let idx = result_index(t, temps, a, &pos, true)?;
                let g = temps.view(t, a.dtype, &a.shape)?;
                t.record(Instr::new(
                    Opcode::Gather,
                    g.clone(),
                    [src.into(), idx.into()],
                ))?;
                g.into()
            }
            Arg::Array(v) => {
                // Broadcast along the selection: one row of values for every selected one.
                let row = if v.ndim() == res_ndim {
                    v.index(0, 0)?
                } else {
                    v.clone()
                };
                let mut src = as_dtype(t, temps, &row, a.dtype)?;
                if overlap(a, &src) == Overlap::Partial {
                    src = private_copy(t, temps, &src)?;
                }
                src.broadcast_to(&a.shape)?.into()
            }
            Arg::Typed(s) => Operand::Scalar(s.cast(a.dtype)),
            Arg::Weak(w) => Operand::Scalar(w.to_scalar(a.dtype)),
        };
        t.record(Instr::new(
            Opcode::Where,
            a.clone(),
            [spread(&m, &a.shape, 0).into(), v, a.clone().into()],
        ))
    })
}
