//! Bases kept as the generator that fills them, not as memory.
//!
//! `i = np.arange(n)` is read by the expressions that follow it and often kept alive to
//! the end of the program, so the fuser must write it out: n fresh elements of memory,
//! their first-touch page faults, and a pass over them, for values that are a function
//! of their own index. A base that a batch fills with `Range` (then at most a few cheap
//! elementwise steps with constants, as `arange(start, stop, step)` is recorded) and does
//! not free is instead kept as that recipe:
//! - in the batch that made it, the recipe writes a temporary in its place, freed at the
//!   end of the batch, so the fuser contracts it into the kernels that read it;
//! - a later batch that reads the base gets its own such temporary, computed in
//!   registers again where it fuses;
//! - a batch that writes the base or syncs it, or a host pointer asked for, materialises
//!   it: the recipe writes the base itself, first in the batch, and the base becomes
//!   ordinary memory (what every reader sees then is what NumPy's arange would hold).

use super::{BaseState, Runtime};
use hassium_core::{Base, BaseId, Instr, Opcode, Operand, View};
use rustc_hash::FxHashMap;

/// Most instructions of a recipe: `Range` and the casts, scaling and shift after it.
const MAX_STEPS: usize = 4;

/// Whether `op` may follow `Range` in a recipe: cheap next to a memory access, so
/// recomputing the base where it is read costs less than reading it.
fn is_cheap_step(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::Identity | Opcode::Add | Opcode::Subtract | Opcode::Multiply | Opcode::Negative
    )
}

/// The whole base, contiguous, in any shape: `Range` over such a view numbers the
/// elements of the base in order, whatever view later reads them.
fn is_whole(v: &View, base: &Base) -> bool {
    v.offset == 0 && v.nelem() == base.nelem && v.nelem() > 0 && v.is_contiguous()
}

/// `instr` with every view of `from` naming `to` instead (geometry unchanged).
fn rename(instr: &mut Instr, from: BaseId, to: BaseId) {
    if instr.out.base == from {
        instr.out.base = to;
    }
    for o in instr.ins.iter_mut() {
        if let Operand::View(v) = o {
            if v.base == from {
                v.base = to;
            }
        }
    }
}

/// A base filled by `Range` in this batch, while it may still become a recipe.
struct Candidate {
    /// The whole-base view `Range` wrote.
    view: View,
    /// Indices of the recipe's instructions in the batch.
    steps: Vec<usize>,
    /// Whether more steps may join: no other instruction has read the base yet.
    open: bool,
    rejected: bool,
}

impl Candidate {
    /// Whether `instr`, which writes this candidate's base, is one more recipe step.
    fn takes(&self, instr: &Instr) -> bool {
        self.open
            && self.steps.len() < MAX_STEPS
            && is_cheap_step(instr.op)
            && instr.out == self.view
            && instr.ins.iter().all(|o| match o {
                Operand::Scalar(_) => true,
                Operand::View(v) => *v == self.view,
            })
    }
}

impl Runtime {
    /// Rewrites a batch about to be flushed: reads of recipe bases become reads of
    /// temporaries the recipe fills, recipes that must become memory are written out, and
    /// bases the batch fills by a generator become recipes. Returns the bases
    /// materialised, whose recipes `restore_recipes` puts back if the batch fails.
    pub(super) fn rewrite_generated(
        &mut self,
        instrs: &mut Vec<Instr>,
        sync: &[BaseId],
    ) -> Vec<(BaseId, Vec<Instr>)> {
        let materialised = if self.recipes > 0 {
            self.expand_recipes(instrs, sync)
        } else {
            Vec::new()
        };
        if self.queue_has_range {
            self.adopt_recipes(instrs, sync);
        }
        materialised
    }

    /// Puts back the recipes of bases a failed batch was to materialise: their values
    /// are still the recipe's.
    pub(super) fn restore_recipes(&mut self, materialised: Vec<(BaseId, Vec<Instr>)>) {
        for (id, recipe) in materialised {
            if let Some(s) = self.bases.get_mut(&id) {
                if s.recipe.is_none() {
                    s.recipe = Some(recipe);
                    self.recipes += 1;
                }
            }
        }
    }

    /// Forgets a base's recipe (it is being overwritten whole, or has died).
    pub(super) fn drop_recipe(&mut self, id: BaseId) {
        if let Some(s) = self.bases.get_mut(&id) {
            if s.recipe.take().is_some() {
                self.recipes -= 1;
            }
        }
    }

    /// A base for a recipe's temporary inside the batch being flushed; the caller
    /// queues its `Free` at the end of that batch.
    fn recipe_temp(&mut self, like: &Base) -> Base {
        self.insert_base(like.dtype, like.nelem, true)
    }

    /// Phase one: the recipe bases this batch names.
    fn expand_recipes(
        &mut self,
        instrs: &mut Vec<Instr>,
        sync: &[BaseId],
    ) -> Vec<(BaseId, Vec<Instr>)> {
        // Recipe base → (first instruction reading it, whether it must be materialised).
        let mut named: FxHashMap<BaseId, (Option<usize>, bool)> = FxHashMap::default();
        let has_recipe = |bases: &hassium_core::IdMap<BaseState>, id: &BaseId| {
            bases.get(id).is_some_and(|s| s.recipe.is_some())
        };
        for (k, instr) in instrs.iter().enumerate() {
            if instr.op != Opcode::Free && has_recipe(&self.bases, &instr.out.base) {
                named.entry(instr.out.base).or_default().1 = true;
            }
            for v in instr.input_views() {
                if has_recipe(&self.bases, &v.base) {
                    let e = named.entry(v.base).or_default();
                    e.0.get_or_insert(k);
                }
            }
        }
        for id in sync {
            if has_recipe(&self.bases, id) {
                named.entry(*id).or_default().1 = true;
            }
        }
        if named.is_empty() {
            return Vec::new();
        }
        let mut materialised = Vec::new();
        let mut head: Vec<Instr> = Vec::new();
        // (first reader, recipe renamed onto its temporary, the base, the temporary).
        let mut inserts: Vec<(usize, Vec<Instr>, BaseId, BaseId)> = Vec::new();
        let mut named: Vec<_> = named.into_iter().collect();
        named.sort_unstable_by_key(|(id, _)| *id);
        for (id, (first_read, materialise)) in named {
            let state = &self.bases[&id];
            let recipe = state.recipe.clone().unwrap_or_default();
            if materialise {
                head.extend(recipe.iter().cloned());
                self.drop_recipe(id);
                materialised.push((id, recipe));
            } else if let Some(at) = first_read {
                let like = state.base;
                let temp = self.recipe_temp(&like);
                let mut steps = recipe;
                for s in &mut steps {
                    rename(s, id, temp.id);
                }
                inserts.push((at, steps, id, temp.id));
            }
        }
        inserts.sort_unstable_by_key(|i| i.0);
        let old = std::mem::take(instrs);
        instrs.reserve(old.len() + head.len() + 4 * inserts.len());
        instrs.extend(head);
        let mut next = 0;
        for (k, mut instr) in old.into_iter().enumerate() {
            while next < inserts.len() && inserts[next].0 == k {
                instrs.append(&mut inserts[next].1);
                next += 1;
            }
            for &(_, _, from, to) in &inserts {
                if instr.op != Opcode::Free {
                    rename(&mut instr, from, to);
                }
            }
            instrs.push(instr);
        }
        for &(_, _, _, temp) in &inserts {
            let base = self.bases[&temp].base;
            instrs.push(Instr::system(Opcode::Free, &base));
        }
        materialised
    }

    /// Phase two: bases this batch fills with a generator and keeps become recipes.
    fn adopt_recipes(&mut self, instrs: &mut Vec<Instr>, sync: &[BaseId]) {
        // In the order found, so temporaries are numbered alike on every flush of a loop
        // (the fuse cache and the engine's templates see the same batch again).
        let mut cands: Vec<(BaseId, Candidate)> = Vec::new();
        let mut index: FxHashMap<BaseId, usize> = FxHashMap::default();
        for (k, instr) in instrs.iter().enumerate() {
            if cands.is_empty() && instr.op != Opcode::Range {
                continue;
            }
            let out = instr.out.base;
            let writes_candidate = index.get(&out).copied();
            if instr.op == Opcode::Free {
                if let Some(c) = writes_candidate {
                    cands[c].1.rejected = true;
                }
                continue;
            }
            match writes_candidate {
                Some(c) => {
                    let cand = &mut cands[c].1;
                    if cand.takes(instr) {
                        cand.steps.push(k);
                    } else {
                        cand.rejected = true;
                    }
                }
                None if instr.op == Opcode::Range => {
                    let fresh = self.bases.get(&out).is_some_and(|s| {
                        s.block.is_none()
                            && s.recipe.is_none()
                            && !s.freed
                            && is_whole(&instr.out, &s.base)
                    });
                    if fresh && !sync.contains(&out) {
                        index.insert(out, cands.len());
                        cands.push((
                            out,
                            Candidate {
                                view: instr.out.clone(),
                                steps: vec![k],
                                open: true,
                                rejected: false,
                            },
                        ));
                    }
                }
                None => {}
            }
            for v in instr.input_views() {
                if v.base == out && writes_candidate.is_some() {
                    continue;
                }
                if let Some(&c) = index.get(&v.base) {
                    cands[c].1.open = false;
                }
            }
        }
        for (id, cand) in cands {
            if cand.rejected {
                continue;
            }
            let like = self.bases[&id].base;
            let temp = self.recipe_temp(&like);
            let recipe: Vec<Instr> = cand.steps.iter().map(|&k| instrs[k].clone()).collect();
            for instr in &mut instrs[cand.steps[0]..] {
                rename(instr, id, temp.id);
            }
            instrs.push(Instr::system(Opcode::Free, &temp));
            let s = self.bases.get_mut(&id).expect("a candidate is a live base");
            s.recipe = Some(recipe);
            self.recipes += 1;
            self.stats.bases_generated += 1;
        }
    }
}
