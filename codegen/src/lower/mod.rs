//! Lowering: from a kernel's instructions over strided views to one loop nest.
//!
//! The result, [`Lowered`], holds everything the renderer needs and nothing of the batch
//! it came from, so its [`Lowered::signature`] (a hash of that structure) decides whether
//! two kernels render to the same source. In `Fixed` mode extents, strides and offsets are
//! literals and part of the signature; in `Dynamic` mode they are slots of a runtime
//! `meta` array, except strides of 0 and 1, which stay literal because they decide
//! whether the inner loop is unit-stride (vectorisable) or a broadcast.
//!
//! The parts, in the order a kernel goes through them: this file holds [`lower`] itself
//! (checks, operands onto views, the collapse, the choice of structure and plan);
//! `builder.rs` registers buffer slots, views and runtime numbers as operands are met;
//! `held_back.rs` finds the stores a `Lagged` plan must hold back; `lowered.rs` is the
//! result, [`Lowered`], and the loop-nest vocabulary it is made of.

mod builder;
mod held_back;
mod lowered;

pub use lowered::{
    vector_math, Binding, Lowered, Plan, Specialize, ALIGN, BLOCK, CHUNK, LANES, WIDE,
};
pub(crate) use lowered::{
    Arg, LInstr, LView, Num, RandomAccess, Site, Space, Structure, ViewKind, ROW_PARTIALS_COLUMNS,
};

use crate::traffic::Traffic;
use crate::{Error, Result};
use builder::{contiguous, empty, random_access, unsupported, view_in, Builder};
use hassium_core::{Batch, DType, Kernel, OpClass, Opcode, Operand, View};
use held_back::held_back;
use lowered::row_chunk;
use rustc_hash::FxHashMap;

/// Lowers `kernel` of `batch` to a loop nest specialised as `spec`.
/// Whether every view in memory (`in_memory(view)`; a contracted temporary is a
/// register) that varies along the reduced loop (strides `reduced`, per view) steps
/// further through memory along it than along the kept loop (`kept`), and some view
/// varies along both: the matrix being reduced is stored with the kept axis innermost.
fn columns_in_memory(kept: &[isize], reduced: &[isize], in_memory: impl Fn(usize) -> bool) -> bool {
    let varying = || {
        (0..kept.len())
            .filter(|&vi| in_memory(vi) && reduced[vi] != 0)
            .map(|vi| (kept[vi], reduced[vi]))
    };
    varying().all(|(k, r)| r.unsigned_abs() > k.unsigned_abs()) && varying().any(|(k, _)| k != 0)
}

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
        // Complex reductions and scans stay interpreted: were they rendered, a product's
        // step would have to be the textbook `hs_cmul` (NumPy's reduce loop), not the
        // fused `hs_cmulf` an elementwise multiply renders to.
        let complex = i.out.dtype.is_complex() || i.ins.iter().any(|o| o.dtype().is_complex());
        if complex && !crate::ops::complex_renders(i.op) {
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
    // A reduction's body runs inside the loop over its axis and the epilogue after it, so
    // body instructions come first even where the fuser joined one that follows an
    // epilogue instruction in program order (the next loop iteration's elementwise work
    // after a mean's division). Moving it is sound: the epilogue reads only the
    // reductions' results and the body never reads a value of the reduced shape, so the
    // two share no value (any such pair is a partial overlap, which the fuser keeps
    // apart).
    let epilogue_op = |k: usize| {
        let i = &batch.instrs[k];
        has_reduce && i.op.class() != OpClass::Reduce && i.out.shape.as_slice() != shape.as_slice()
    };
    let pairs = instrs.iter().copied().zip(at.iter().copied());
    let mut order: Vec<(usize, usize)> = pairs.clone().filter(|&(k, _)| !epilogue_op(k)).collect();
    order.extend(pairs.filter(|&(k, _)| epilogue_op(k)));
    let (instrs, at): (Vec<usize>, Vec<usize>) = order.into_iter().unzip();
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
    // A kernel that stores nothing (each of its results a temporary freed unread, as a
    // loop's last update of a variable the program then drops) has no effect, unless an
    // instruction of it can fail.
    let stores_nothing =
        kernel.writes.is_empty() && !instrs.iter().any(|&k| batch.instrs[k].can_fail_when_run());
    if out_elems == 0 || (!has_reduce && raw_elems == 0) || stores_nothing {
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
    let mut axis_loop = axis_group.map(|g| nloops - 1 - g);

    let is_arg = linstrs.iter().any(|i| i.op.is_arg_reduction());
    let is_f16_reduce = linstrs
        .iter()
        .any(|i| i.op.is_reduction() && i.in_dtype == DType::Float16);
    let is_scatter = linstrs.iter().any(|i| i.target.is_some());
    // A reduction along the last logical axis of views laid out the other way round (the
    // rows of `X.T`, which are columns of `X`: `X.T @ v`, `(a.T * b).sum(1)`) walks memory
    // in steps of a row on every reduced element, streaming the whole matrix once per
    // output. Reduced along the outer loop instead it streams it once, as a column sum.
    if has_reduce
        && !has_scan
        && nloops == 2
        && axis_loop == Some(1)
        && lag.is_none()
        && !is_scatter
        && !is_arg
        && !is_f16_reduce
        && randoms.is_empty()
        && columns_in_memory(&groups[0].1, &groups[1].1, |vi| {
            !matches!(b.raw[vi].0, ViewKind::Data { slot: None })
        })
    {
        groups.swap(0, 1);
        axis_loop = Some(0);
    }
    let ext: Vec<usize> = groups.iter().map(|g| g.0).collect();
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
        // The ring of held-back rows is laid out in 8-byte slots (`render::lag`).
        if lagged.iter().any(|&j| b.raw[j].1.size() > 8) {
            return unsupported("held-back writes of 16-byte (complex128) elements");
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
