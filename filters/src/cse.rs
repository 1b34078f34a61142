//! Common-subexpression elimination: an instruction that computes what an earlier one
//! already computed (same opcode, axis, method, output dtype and shape, identical input
//! views and bit-identical scalars) reuses that result.
//!
//! Safe only when the earlier result still holds the value: the earlier instruction did
//! not overwrite its own inputs, and nothing in between wrote its inputs or its output.
//! Then the later instruction becomes a copy of the earlier result, and when its output
//! is a temporary (freed, not synced, written only here, read only through that same
//! view, and the earlier result stays valid and alive until those reads) the reads are
//! renamed to the earlier result and the instruction disappears. Index ops and
//! extensions are left alone.
//!
//! An earlier result freed before the later instruction (a loop recomputing an invariant,
//! `-stiffness` in every step) is reused only through a rename: the later result's free
//! becomes the earlier one's, so the value stays alive exactly as long as it is read.

use crate::facts::{copy, same_operand, temporaries, touches, writes_into};
use crate::{Filter, Result};
use hassium_core::{overlap, BaseId, Batch, Instr, OpClass, Opcode, Operand, Overlap, View};
use hassium_core::{IdMap, IdSet};
use rustc_hash::FxHashMap;
use smallvec::SmallVec;

/// The instructions touching one base. Inline up to four: a loop's temporary is written
/// once, read once or twice and freed, and a heap list per base of a batch of thousands
/// cost more than the elimination itself.
type Touches = SmallVec<[usize; 4]>;

/// The candidates of one key. Most keys occur once (`t * x` with a fresh `t`).
type Candidates = SmallVec<[(usize, usize); 1]>;

#[derive(Default)]
pub struct Cse {
    /// The instruction vector of the batch before last: a rewrite that inserts frees
    /// builds the new sequence here, so a loop's flushes alternate between two buffers
    /// instead of allocating (and page-faulting in) a fresh one of megabytes each time.
    spare: Vec<Instr>,
}

/// A cheap key grouping instructions that might compute the same thing: the opcode and
/// the bases its inputs read (so a batch of thousands of multiplies does not compare
/// each against all earlier ones).
type Key = (Opcode, Option<usize>, u8, [Option<u64>; 3]);

fn key(i: &Instr) -> Key {
    let mut bases = [None; 3];
    for (slot, op) in bases.iter_mut().zip(&i.ins) {
        *slot = op.base().map(|b| b.0);
    }
    (i.op, i.axis, i.out.dtype as u8, bases)
}

fn same_computation(a: &Instr, b: &Instr) -> bool {
    a.op == b.op
        && a.axis == b.axis
        && a.method == b.method
        && a.out.dtype == b.out.dtype
        && a.out.shape == b.out.shape
        && a.ins.len() == b.ins.len()
        && a.ins.iter().zip(&b.ins).all(|(x, y)| same_operand(x, y))
}

fn eligible(i: &Instr) -> bool {
    matches!(
        i.op.class(),
        OpClass::Elementwise | OpClass::Reduce | OpClass::Scan | OpClass::Generator
    ) && i
        .input_views()
        .all(|v| overlap(&i.out, v) == Overlap::Disjoint)
}

/// Instruction indices touching each base (system instructions included), ascending.
/// Built once per batch; renames only ever remove touches of the renamed base, so a
/// stale entry is re-checked where it matters.
fn touch_lists(batch: &Batch) -> IdMap<Touches> {
    let mut t: IdMap<Touches> =
        IdMap::with_capacity_and_hasher(batch.bases.len(), Default::default());
    for (k, i) in batch.instrs.iter().enumerate() {
        t.entry(i.out.base).or_default().push(k);
        for b in i.ins.iter().filter_map(|o| o.base()) {
            if b != i.out.base {
                let l = t.entry(b).or_default();
                if l.last() != Some(&k) {
                    l.push(k);
                }
            }
        }
    }
    t
}

/// Where base `b`'s value dies after instruction `after`: `(k, pending)`, a pending free
/// (moved by an earlier rename) inserted before instruction `k`, or the first actual
/// free at `k`.
fn free_of(
    batch: &Batch,
    touch: &IdMap<Touches>,
    pending: &IdMap<usize>,
    b: BaseId,
    after: usize,
) -> Option<(usize, bool)> {
    if let Some(&k) = pending.get(&b) {
        return Some((k, true));
    }
    touch
        .get(&b)?
        .iter()
        .copied()
        .find(|&k| k > after && batch.instrs[k].op == Opcode::Free && batch.instrs[k].out.base == b)
        .map(|k| (k, false))
}

/// Whether a base whose free is `free` is still alive when instruction `k` runs (a
/// pending free sits just before its position, an actual one at it: both end the value
/// for every instruction from there on).
fn alive_at(free: Option<(usize, bool)>, k: usize) -> bool {
    free.is_none_or(|(f, _)| f > k)
}

impl Filter for Cse {
    fn apply(&mut self, batch: &mut Batch) -> Result<()> {
        let temps = temporaries(batch);
        let touch = touch_lists(batch);
        // Candidates by key: (index, clean_to) where nothing in `index+1..clean_to` wrote
        // the candidate's output or inputs (checked once, extended as `j` advances).
        let mut seen: FxHashMap<Key, Candidates> = FxHashMap::default();
        let mut removed = Vec::new();
        // Frees moved by renames: base → insert its free before this instruction.
        let mut pending: IdMap<usize> = IdMap::default();
        for j in 0..batch.instrs.len() {
            let ij = &batch.instrs[j];
            if !eligible(ij) {
                continue;
            }
            let k = key(ij);
            let mut found = None;
            if let Some(cands) = seen.get_mut(&k) {
                // Newest first; a candidate whose value was overwritten is dropped for good.
                let mut c = cands.len();
                while c > 0 {
                    c -= 1;
                    let (i, clean_to) = cands[c];
                    let ii = &batch.instrs[i];
                    let clobbered = batch.instrs[clean_to.max(i + 1)..j].iter().any(|w| {
                        writes_into(w, &ii.out) || ii.input_views().any(|v| writes_into(w, v))
                    });
                    if clobbered {
                        cands.remove(c);
                        continue;
                    }
                    cands[c].1 = j;
                    if same_computation(ii, &batch.instrs[j]) {
                        found = Some(i);
                        break;
                    }
                }
            }
            let ij = &batch.instrs[j];
            let Some(i) = found else {
                seen.entry(k).or_default().push((j, j + 1));
                continue;
            };
            let earlier = batch.instrs[i].out.clone();
            let later = ij.out.clone();
            // The earlier result may have died since (a loop recomputing an invariant,
            // each step freeing its copy): then only a rename can reuse it, by moving
            // its free to where the later result's was.
            let free = free_of(batch, &touch, &pending, earlier.base, i);
            let alive = alive_at(free, j);
            match overlap(&earlier, &later) {
                Overlap::Identical if alive => {
                    removed.push(j);
                    batch.instrs[j].op = Opcode::None;
                    batch.instrs[j].ins.clear();
                }
                Overlap::Identical | Overlap::Partial => {}
                Overlap::Disjoint => {
                    let renamed = rename(batch, &touch, j, &earlier, &later, &temps);
                    match renamed {
                        Some(r) if alive_at(free, r.last_read) => {
                            r.apply(batch, &earlier);
                            removed.push(j);
                        }
                        Some(r) if r.free_of_later.is_some() => {
                            let fl = r.free_of_later.unwrap_or_default();
                            if let Some((f, false)) = free {
                                batch.instrs[f].op = Opcode::None;
                                removed.push(f);
                            }
                            pending.insert(earlier.base, fl);
                            r.apply(batch, &earlier);
                            removed.push(j);
                        }
                        _ if alive => batch.instrs[j] = copy(&later, earlier.into()),
                        _ => seen
                            .entry(key(&batch.instrs[j]))
                            .or_default()
                            .push((j, j + 1)),
                    }
                }
            }
        }
        let mut inserts: Vec<(usize, BaseId)> = pending.into_iter().map(|(b, k)| (k, b)).collect();
        inserts.sort_unstable();
        if inserts.is_empty() {
            crate::facts::remove_indices(batch, &removed);
        } else {
            // Positions are the original ones: rebuild with both applied at once.
            insert_frees(batch, &removed, &inserts, &mut self.spare);
        }
        Ok(())
    }
}

/// Removes the instructions at `removed` and inserts `Free(base)` before each position of
/// `inserts` (both original indices; `inserts` sorted), building the result in `spare`,
/// which then holds the old vector's buffer for the next call.
fn insert_frees(
    batch: &mut Batch,
    removed: &[usize],
    inserts: &[(usize, BaseId)],
    spare: &mut Vec<Instr>,
) {
    let mut gone = removed.to_vec();
    gone.sort_unstable();
    gone.dedup();
    let mut kept = std::mem::take(&mut batch.instrs);
    let mut out = std::mem::take(spare);
    out.clear();
    out.reserve(kept.len() + inserts.len());
    let (mut g, mut ins) = (0, 0);
    for (k, i) in kept.drain(..).enumerate() {
        while ins < inserts.len() && inserts[ins].0 == k {
            if let Some(base) = batch.base(inserts[ins].1).copied() {
                out.push(Instr::system(Opcode::Free, &base));
            }
            ins += 1;
        }
        if g < gone.len() && gone[g] == k {
            g += 1;
            continue;
        }
        out.push(i);
    }
    for &(_, b) in &inserts[ins..] {
        if let Some(base) = batch.base(b).copied() {
            out.push(Instr::system(Opcode::Free, &base));
        }
    }
    batch.instrs = out;
    *spare = kept;
}

/// A rename found safe: reads of the later result in `reads` become reads of the earlier.
struct Rename {
    j: usize,
    reads: Vec<usize>,
    last_read: usize,
    /// Where the later result is freed, after `last_read`.
    free_of_later: Option<usize>,
    later: View,
}

impl Rename {
    fn apply(self, batch: &mut Batch, earlier: &View) {
        for k in self.reads {
            for o in batch.instrs[k].ins.iter_mut() {
                if matches!(o, Operand::View(v) if *v == self.later) {
                    *o = Operand::View(earlier.clone());
                }
            }
        }
        batch.instrs[self.j].op = Opcode::None;
        batch.instrs[self.j].ins.clear();
    }
}

/// Whether every later read of `later` (a temporary written only by instruction `j`)
/// can read `earlier` instead: `later` is read only through that view, and nothing
/// writes `earlier` until the last read. Whether `earlier` is still alive is the
/// caller's question.
fn rename(
    batch: &Batch,
    touch: &IdMap<Touches>,
    j: usize,
    earlier: &View,
    later: &View,
    temps: &IdSet,
) -> Option<Rename> {
    let b = later.base;
    let uses = touch.get(&b)?;
    if !temps.contains(&b) || uses.iter().any(|&k| k < j && touches(&batch.instrs[k], b)) {
        return None;
    }
    let mut last_read = j;
    let mut reads = Vec::new();
    let mut free_of_later = None;
    for &k in uses.iter().filter(|&&k| k > j) {
        let w = &batch.instrs[k];
        if w.op == Opcode::Free && w.out.base == b {
            free_of_later.get_or_insert(k);
            continue;
        }
        if w.op.is_system() {
            continue;
        }
        if w.out.base == b {
            return None;
        }
        let mut reads_it = false;
        for v in w.input_views().filter(|v| v.base == b) {
            if v != later {
                return None;
            }
            reads_it = true;
        }
        if reads_it {
            reads.push(k);
            last_read = k;
        }
    }
    if batch.instrs[j + 1..=last_read]
        .iter()
        .any(|w| writes_into(w, earlier))
    {
        return None;
    }
    Some(Rename {
        j,
        reads,
        last_read,
        free_of_later: free_of_later.filter(|&f| f > last_read),
        later: later.clone(),
    })
}
