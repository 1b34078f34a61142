//! In-place updates of overlapping boxes of one array, cut into the cells of the boxes'
//! grid so that each cell's updates share a kernel.
//!
//! A matrix-free operator written with shifted slices updates one array several times,
//! each time through another box of it:
//!
//! ```text
//! out = 4.0 * u
//! out[1:, :] -= u[:-1, :]
//! out[:-1, :] -= u[1:, :]
//! out[:, 1:] -= u[:, :-1]
//! out[:, :-1] -= u[:, 1:]
//! ```
//!
//! The boxes overlap without being equal, so no two of these may share a loop nest (an
//! iteration of one would meet another's element at another iteration) and each runs as
//! a kernel of its own: five passes over `out`. Cut at every box edge, the array falls
//! into cells (nine here) that each box either holds whole or misses; the updates of one
//! cell then write the same view one after another, which the fuser puts in one kernel.
//! The interior cell, nearly all of the array, is written once.
//!
//! **What is cut.** A run of instructions that are, in the batch, every access of a base
//! `B` from the first to the last of them, where each one
//! - is elementwise, cannot fail (a failure part-way would leave other cells written),
//!   and writes a box of `B` (unit steps through the row-major frame all of the run's
//!   views of `B` share),
//! - reads `B`, if at all, through exactly the view it writes (`out[s] -= x`),
//! - reads other bases only through views of its own shape that nothing in the run
//!   writes, and which no instruction between the run's first and last writes or frees.
//!
//! Each instruction then becomes one instruction per cell of its box, and all of them are
//! put where the last one was, cell by cell (the instructions of a cell in program
//! order). That order computes the same values: an element of `B` sees the same updates
//! in the same order, and what else the run reads holds still while it runs. A run cut
//! into more than [`MAX_CELLS`] cells is left alone, and so is one whose saved passes move
//! fewer bytes than [`crate::piecewise::BYTES_PER_INSTR`] per instruction the cells add.

use crate::piecewise::{cells_of, cuttable, dims_from_strides, span_of, sub_view, Span};
use crate::{Filter, Result};
use hassium_core::{BaseId, Batch, IdMap, IdSet, Instr, Operand, Shape};

pub struct UpdateCells {
    /// Bytes of saved traffic one added instruction must buy (see the module docs).
    pub bytes_per_instr: usize,
}

impl Default for UpdateCells {
    fn default() -> UpdateCells {
        UpdateCells {
            bytes_per_instr: crate::piecewise::BYTES_PER_INSTR,
        }
    }
}

/// Cells of one run at most: a 3-D seven-point stencil has 27.
pub const MAX_CELLS: usize = 27;

/// A run to cut: its instructions (batch order), the box each writes, and the cells.
struct Run {
    members: Vec<usize>,
    spans: Vec<Span>,
    cells: Vec<Span>,
}

/// The members' box of `B` in frame `dims`, when `i` may be a member of a run on `b`.
fn member_span(i: &Instr, b: BaseId, nelem: usize, dims: &mut Option<Shape>) -> Option<Span> {
    if i.out.base != b || !cuttable(i) {
        return None;
    }
    // Reads of `B` are of the written view itself (cuttable allows disjoint ones too).
    if i.input_views().any(|v| v.base == b && *v != i.out) {
        return None;
    }
    let frame = dims_from_strides(&i.out, nelem)?;
    if dims.get_or_insert_with(|| frame.clone()) != &frame {
        return None;
    }
    span_of(&i.out, &frame)
}

/// The runs of `batch`, each at most once per instruction, in no particular order.
fn runs(batch: &Batch, bytes_per_instr: usize) -> Vec<Run> {
    // Every access of each base, system instructions (frees) included.
    let mut touching: IdMap<Vec<usize>> = IdMap::default();
    for (k, i) in batch.instrs.iter().enumerate() {
        let bases = std::iter::once(i.out.base).chain(i.ins.iter().filter_map(|o| o.base()));
        for b in bases {
            let l = touching.entry(b).or_default();
            if l.last() != Some(&k) {
                l.push(k);
            }
        }
    }
    let mut taken = vec![false; batch.instrs.len()];
    let mut found = Vec::new();
    for (&b, accesses) in &touching {
        let Some(base) = batch.base(b) else { continue };
        let mut start = 0;
        while start < accesses.len() {
            // The longest run of members from `start`.
            let mut dims = None;
            let mut members = Vec::new();
            let mut spans = Vec::new();
            for &k in &accesses[start..] {
                match member_span(&batch.instrs[k], b, base.nelem, &mut dims) {
                    Some(s) if !taken[k] => {
                        members.push(k);
                        spans.push(s);
                    }
                    _ => break,
                }
            }
            start += members.len().max(1);
            if let Some(run) = worth_cutting(batch, members, spans, bytes_per_instr) {
                for &k in &run.members {
                    taken[k] = true;
                }
                found.push(run);
            }
        }
    }
    found
}

/// The run of `members` (writing `spans`), if it may be cut and cutting pays.
fn worth_cutting(
    batch: &Batch,
    members: Vec<usize>,
    spans: Vec<Span>,
    bytes_per_instr: usize,
) -> Option<Run> {
    if members.len() < 2 {
        return None;
    }
    // Some pair must overlap partly: otherwise the fuser already joins what it can.
    let partly = spans.iter().enumerate().any(|(x, a)| {
        spans[x + 1..]
            .iter()
            .any(|s| a.meets(s) && !(s.contains(a) && a.contains(s)))
    });
    if !partly {
        return None;
    }
    // What the run reads besides `B` must hold still from its first to its last member.
    let out_base = batch.instrs[members[0]].out.base;
    let read: IdSet = members
        .iter()
        .flat_map(|&k| batch.instrs[k].input_views().map(|v| v.base))
        .filter(|&r| r != out_base)
        .collect();
    let (first, last) = (members[0], *members.last()?);
    let between = (first..=last).filter(|k| members.binary_search(k).is_err());
    for k in between {
        let i = &batch.instrs[k];
        if read.contains(&i.out.base) {
            return None; // written or freed in between
        }
    }
    // The grid: every box edge, along every axis.
    let ndim = spans[0].lo.len();
    let mut cuts: Vec<Vec<usize>> = vec![Vec::new(); ndim];
    for s in &spans {
        for (d, c) in cuts.iter_mut().enumerate() {
            c.push(s.lo[d]);
            c.push(s.lo[d] + s.len[d]);
        }
    }
    for c in cuts.iter_mut() {
        c.sort_unstable();
        c.dedup();
    }
    // Cells of the hull's grid, most of them perhaps in no box: bounded before they are made.
    let grid = cuts.iter().map(|c| c.len().saturating_sub(1).max(1));
    if grid.fold(1usize, usize::saturating_mul) > 4 * MAX_CELLS {
        return None;
    }
    let mut hull = spans[0].clone();
    for s in &spans[1..] {
        for d in 0..ndim {
            let hi = (hull.lo[d] + hull.len[d]).max(s.lo[d] + s.len[d]);
            hull.lo[d] = hull.lo[d].min(s.lo[d]);
            hull.len[d] = hi - hull.lo[d];
        }
    }
    let hull_cuts: Vec<Vec<usize>> = (0..ndim)
        .map(|d| cuts[d].iter().map(|&c| c - hull.lo[d]).collect())
        .collect();
    let cells: Vec<Span> = cells_of(&hull.len, &hull_cuts)
        .into_iter()
        .map(|mut c| {
            for d in 0..ndim {
                c.lo[d] += hull.lo[d];
            }
            c
        })
        .filter(|c| spans.iter().any(|s| s.contains(c)))
        .collect();
    if cells.len() > MAX_CELLS {
        return None;
    }
    let pieces: usize = spans
        .iter()
        .map(|s| cells.iter().filter(|c| s.contains(c)).count())
        .sum();
    // Each member after the first no longer makes a pass of its own over its box:
    // a read and a write of it.
    let itemsize = batch.instrs[first].out.dtype.size();
    let saved: usize = spans[1..].iter().map(|s| 2 * s.volume() * itemsize).sum();
    let added = pieces - members.len();
    (saved >= added.saturating_mul(bytes_per_instr)).then_some(Run {
        members,
        spans,
        cells,
    })
}

/// Member `i` (writing `span`) restricted to `cell`, a cell inside `span`.
fn piece(i: &Instr, span: &Span, cell: &Span) -> Instr {
    let rel = Span {
        lo: (0..span.lo.len())
            .map(|d| cell.lo[d] - span.lo[d])
            .collect(),
        len: cell.len.clone(),
    };
    let mut p = i.clone();
    p.out = sub_view(&i.out, &rel);
    for o in p.ins.iter_mut() {
        if let Operand::View(v) = o {
            *v = sub_view(v, &rel);
        }
    }
    p
}

impl Filter for UpdateCells {
    fn apply(&mut self, batch: &mut Batch) -> Result<()> {
        let found = runs(batch, self.bytes_per_instr);
        if found.is_empty() {
            return Ok(());
        }
        // The run each member belongs to: its cells go where the run's last member was.
        let mut run_of: Vec<Option<usize>> = vec![None; batch.instrs.len()];
        for (r, run) in found.iter().enumerate() {
            for &k in &run.members {
                run_of[k] = Some(r);
            }
        }
        let old = std::mem::take(&mut batch.instrs);
        let mut instrs = Vec::with_capacity(old.len() + found.len() * MAX_CELLS);
        for (k, i) in old.iter().enumerate() {
            let Some(r) = run_of[k] else {
                instrs.push(i.clone());
                continue;
            };
            let run = &found[r];
            if run.members.last() != Some(&k) {
                continue;
            }
            for cell in &run.cells {
                for (&m, span) in run.members.iter().zip(&run.spans) {
                    if span.contains(cell) {
                        instrs.push(piece(&old[m], span, cell));
                    }
                }
            }
        }
        batch.instrs = instrs;
        Ok(())
    }
}
