//! Recomputes cheap index-generated temporaries where they are read, instead of storing
//! them once and reading them back.
//!
//! `x = np.arange(n) * h` read by three passes separated by reductions (a mean, then the
//! deviations from it, then the residuals) is one temporary of the batch (the runtime keeps
//! `x` itself as a recipe, `vem/src/runtime/generated.rs`), but the fuser must write it to
//! memory in the first kernel and read it back in the other two: 8 bytes written and 16
//! read per element, for values that cost two instructions to make. This filter gives
//! each reader its own copy of the instructions that make the temporary, placed just
//! before it, so the fuser contracts each copy into the reader's kernel; the original
//! goes once nothing reads it.
//!
//! A base is *pure* when its values follow from the element index alone:
//! - the batch frees it and does not sync it, and exactly one instruction writes it,
//!   covering the whole base (offset 0, contiguous, every element), with no instruction
//!   naming it before that write;
//! - that instruction is a generator (`range`) or a cheap elementwise step (a cast, `+`,
//!   `-`, `*`, negation, a right shift) that cannot fail, whose inputs are scalars or
//!   pure bases read through the very views that wrote them, at the same shape;
//! - its chain (the instructions making it and its pure inputs) is at most
//!   [`MAX_CHAIN`] long.
//!
//! A reader gets a copy only where it reads the pure base through the view that wrote
//! it, so the copy has the reader's shape and fuses with it; a reader through any other
//! view (a slice, a broadcast) keeps reading the original. Why this keeps the batch's
//! meaning: the copy's instructions are the original's with fresh temporaries, and their
//! inputs are scalars and copies of pure bases, so each copy holds exactly the values the
//! original holds (no instruction in between can change them: nothing else writes a pure
//! base). Random numbers are left alone: recomputing Philox costs more than a read.
//!
//! The batch grows by at most its own length; a batch with no ids to give
//! (`Batch::new_temp`) is left alone.

use crate::{Filter, Result};
use hassium_core::{Base, BaseId, Batch, IdMap, IdSet, Instr, Opcode, Operand, View};
use std::collections::HashMap;

pub struct Rematerialize;

/// The longest chain of instructions copied for one read.
pub const MAX_CHAIN: usize = 6;

/// Whether `op` costs little next to a memory access and reads nothing but its inputs.
fn is_cheap(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::Range
            | Opcode::Identity
            | Opcode::Add
            | Opcode::Subtract
            | Opcode::Multiply
            | Opcode::Negative
            | Opcode::RightShift
    )
}

/// What the batch does with one base.
#[derive(Default)]
struct Uses {
    writes: u32,
    writer: usize,
    /// The first instruction naming the base (as output or input).
    first: usize,
    freed: bool,
}

/// Renames of bases, old → new.
type Renames = Vec<(BaseId, BaseId)>;

/// What goes before one reader: the copied steps, and how the reader's inputs are renamed.
type Plan = (usize, Vec<Instr>, Renames);

/// A pure base: the view that wrote it and the instructions that make it, in batch order.
struct Pure {
    view: View,
    chain: Vec<usize>,
}

impl Filter for Rematerialize {
    fn apply(&mut self, batch: &mut Batch) -> Result<()> {
        if batch.next_id == 0 {
            return Ok(()); // no ids to give for the copies
        }
        let pure = pure_bases(batch);
        if pure.is_empty() {
            return Ok(());
        }
        // A base read once gains nothing from a copy.
        let mut reads: IdMap<u32> = IdMap::default();
        for instr in &batch.instrs {
            let mut seen: Vec<BaseId> = Vec::new();
            for v in instr.input_views() {
                if pure.contains_key(&v.base) && !seen.contains(&v.base) {
                    seen.push(v.base);
                    *reads.entry(v.base).or_default() += 1;
                }
            }
        }
        let shared = |id: &BaseId| reads.get(id).is_some_and(|&n| n >= 2);
        // The writers of pure bases, by instruction.
        let writer_of: HashMap<usize, BaseId> = pure
            .iter()
            .map(|(&id, p)| (*p.chain.last().expect("a chain ends in its writer"), id))
            .collect();
        // Each read that gets a copy: (instruction, pure bases it reads so).
        let mut copies: Vec<(usize, Vec<BaseId>)> = Vec::new();
        let mut added = 0;
        // Pure bases still read as themselves, by an instruction that gets no copy.
        let mut kept: IdSet = IdSet::default();
        for (k, instr) in batch.instrs.iter().enumerate() {
            if instr.op == Opcode::Free {
                continue;
            }
            if writer_of.contains_key(&k) {
                // A step of another chain: copied with it, or kept with it.
                continue;
            }
            let mut here: Vec<BaseId> = Vec::new();
            for v in instr.input_views() {
                let Some(p) = pure.get(&v.base) else { continue };
                if !shared(&v.base) {
                    kept.insert(v.base);
                } else if *v == p.view && added + p.chain.len() <= batch.instrs.len() {
                    if !here.contains(&v.base) {
                        added += p.chain.len();
                        here.push(v.base);
                    }
                } else {
                    kept.insert(v.base);
                }
            }
            if !here.is_empty() {
                copies.push((k, here));
            }
        }
        if copies.is_empty() {
            return Ok(());
        }
        // An original stays while anything reads it as itself: a reader without a copy,
        // or the next step of a chain that stays. Later writers first, so a chain's
        // steps see whether what they feed stays.
        let mut by_writer: Vec<(usize, BaseId)> =
            writer_of.iter().map(|(&k, &id)| (k, id)).collect();
        by_writer.sort_unstable_by_key(|w| std::cmp::Reverse(w.0));
        let mut stays: IdSet = IdSet::default();
        for &(k, id) in &by_writer {
            if kept.contains(&id) || batch.sync.contains(&id) {
                stays.insert(id);
            }
            if stays.contains(&id) {
                for v in batch.instrs[k].input_views() {
                    if pure.contains_key(&v.base) {
                        stays.insert(v.base);
                    }
                }
            }
        }
        let gone: IdSet = pure
            .keys()
            .filter(|id| !stays.contains(id))
            .copied()
            .collect();
        // Every base a copy needs a fresh one for, made before the batch is rebuilt.
        let mut fresh: Vec<Base> = Vec::new();
        let mut plans: Vec<Plan> = Vec::new();
        for (k, bases) in &copies {
            let mut steps: Vec<Instr> = Vec::new();
            let mut renames: Vec<(BaseId, BaseId)> = Vec::new();
            for id in bases {
                let mut map: Vec<(BaseId, BaseId)> = Vec::new();
                for &c in &pure[id].chain {
                    let mut step = batch.instrs[c].clone();
                    let like = *batch
                        .base(step.out.base)
                        .expect("a batch names only its own bases");
                    let temp = (batch.new_temp(like.dtype, like.nelem))
                        .expect("a batch with ids to give (checked above)");
                    fresh.push(temp);
                    map.push((step.out.base, temp.id));
                    rename(&mut step, &map);
                    steps.push(step);
                }
                let to = map.iter().find(|(from, _)| from == id).map(|m| m.1);
                renames.push((*id, to.expect("a chain writes its base")));
            }
            plans.push((*k, steps, renames));
        }
        let old = std::mem::take(&mut batch.instrs);
        let mut out = Vec::with_capacity(old.len() + added + fresh.len());
        let mut plans = plans.into_iter().peekable();
        for (k, mut instr) in old.into_iter().enumerate() {
            if instr.op != Opcode::Free && gone.contains(&instr.out.base) {
                // A step of an original nothing reads. Its free stays: the runtime ends
                // the base's life by it.
                continue;
            }
            if let Some((_, steps, renames)) = plans.next_if(|p| p.0 == k) {
                out.extend(steps);
                rename_inputs(&mut instr, &renames);
            }
            out.push(instr);
        }
        out.extend(fresh.iter().map(|b| Instr::system(Opcode::Free, b)));
        batch.instrs = out;
        Ok(())
    }
}

/// `step` with its output and every input renamed by `map` (old base → new base).
fn rename(step: &mut Instr, map: &[(BaseId, BaseId)]) {
    if let Some(m) = map.iter().find(|(from, _)| *from == step.out.base) {
        step.out.base = m.1;
    }
    rename_inputs(step, map);
}

/// `instr` with every input view renamed by `map`.
fn rename_inputs(instr: &mut Instr, map: &[(BaseId, BaseId)]) {
    for o in instr.ins.iter_mut() {
        if let Operand::View(v) = o {
            if let Some(m) = map.iter().find(|(from, _)| *from == v.base) {
                v.base = m.1;
            }
        }
    }
}

/// The pure bases of `batch` (see the module docs).
fn pure_bases(batch: &Batch) -> IdMap<Pure> {
    let mut uses: IdMap<Uses> = IdMap::default();
    for (k, instr) in batch.instrs.iter().enumerate() {
        let u = uses.entry(instr.out.base).or_insert(Uses {
            first: k,
            ..Uses::default()
        });
        if instr.op == Opcode::Free {
            u.freed = true;
            continue;
        }
        u.writes += 1;
        u.writer = k;
        for v in instr.input_views() {
            uses.entry(v.base).or_insert(Uses {
                first: k,
                ..Uses::default()
            });
        }
    }
    let mut pure: IdMap<Pure> = IdMap::default();
    for (k, instr) in batch.instrs.iter().enumerate() {
        let id = instr.out.base;
        let u = &uses[&id];
        let whole = batch
            .base(id)
            .is_some_and(|b| instr.out.offset == 0 && instr.out.nelem() == b.nelem && b.nelem > 0)
            && instr.out.is_contiguous();
        if !is_cheap(instr.op)
            || instr.axis.is_some()
            || instr.can_fail_when_run()
            || !(u.freed && u.writes == 1 && u.writer == k && u.first == k && whole)
            || batch.sync.contains(&id)
            || (instr.op == Opcode::Range && instr.input_views().next().is_some())
        {
            continue;
        }
        let mut chain: Vec<usize> = Vec::new();
        let mut ok = true;
        for o in &instr.ins {
            let Operand::View(v) = o else { continue };
            match pure.get(&v.base) {
                Some(p) if p.view == *v && v.shape == instr.out.shape => {
                    for &c in &p.chain {
                        if !chain.contains(&c) {
                            chain.push(c);
                        }
                    }
                }
                _ => ok = false,
            }
        }
        chain.sort_unstable();
        chain.push(k);
        if ok && chain.len() <= MAX_CHAIN {
            pure.insert(
                id,
                Pure {
                    view: instr.out.clone(),
                    chain,
                },
            );
        }
    }
    pure
}
