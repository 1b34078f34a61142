//! Bases kept as the generator that fills them, not as memory.
//!
//! `i = np.arange(n)` is read by the expressions that follow it and often kept alive to
//! the end of the program, so the fuser must write it out: n fresh elements of memory,
//! their first-touch page faults, and a pass over them, for values that are a function
//! of their own index. A base that a batch fills with a generator (`Range`, or `Random`,
//! whose counter-based numbers are a function of the index too), then at most a few
//! cheap elementwise steps with constants, and does not free is instead kept as that
//! recipe. The steps may stay in the base (`arange(start, stop, step)` is recorded so) or
//! go through temporaries of the batch (`rng.random(n)` is `Random` into a uint64
//! temporary, a shift, a cast to a float64 temporary, a scaling into the result):
//! - in the batch that made it, the recipe writes a temporary in its place, freed at the
//!   end of the batch, so the fuser contracts it into the kernels that read it;
//! - a later batch that reads the base gets its own such temporary, computed in
//!   registers again where it fuses; a `Random` recipe is written out instead, because
//!   recomputing its numbers costs more than reading memory, and so is a small one (at
//!   most [`SMALL_ARRAY_ELEMENTS`]): its memory would sit in the cache anyway, while
//!   every later batch would splice its steps in again (`small_arrays`' `stiffness`, read
//!   by each of its 600 batches, made its loop ~5% slower);
//! - a batch that writes the base or syncs it, or a host pointer asked for, materialises
//!   it: the recipe writes the base itself, first in the batch, and the base becomes
//!   ordinary memory (what every reader sees then is what NumPy's arange would hold).
//!
//! The recipe names the temporaries its steps went through; each use gives them fresh
//! temporaries of the same dtype and size, freed at the end of that batch.

use super::{BaseState, Runtime};
use crate::config::SMALL_ARRAY_ELEMENTS;
use hassium_core::{Base, BaseId, Instr, Opcode, Operand, View};
use rustc_hash::FxHashMap;

/// Most instructions of a recipe: the generator and the casts, shifts, scaling and
/// offset after it (`uniform(low, high)` takes six).
const MAX_STEPS: usize = 6;

/// Whether `op` starts a recipe: its values are a function of the index and scalars.
pub(super) fn is_generator(op: Opcode) -> bool {
    matches!(op, Opcode::Range | Opcode::Random)
}

/// The instructions that recompute a base, and the temporaries they go through.
#[derive(Clone)]
pub(super) struct Recipe {
    instrs: Vec<Instr>,
    /// Bases of the batch that made it which the steps write before the base itself;
    /// every use renames them to fresh temporaries like them.
    temps: Vec<Base>,
    /// Starts with `Random`: a later batch that reads it writes it out rather than
    /// recomputing it.
    expensive: bool,
}

/// Whether `op` may follow `Range` in a recipe: cheap next to a memory access, so
/// recomputing the base where it is read costs less than reading it.
fn is_cheap_step(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::Identity
            | Opcode::Add
            | Opcode::Subtract
            | Opcode::Multiply
            | Opcode::Negative
            | Opcode::RightShift
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

/// A base filled by a generator in this batch, while it may still become a recipe.
struct Candidate {
    /// The whole-base view the generator or the last step wrote.
    view: View,
    /// Indices of the recipe's instructions in the batch.
    steps: Vec<usize>,
    /// The temporaries the steps went through before this base.
    temps: Vec<BaseId>,
    /// The first step that writes this base: the batch names its temporary from there on
    /// (an earlier instruction naming the base saw what was there before).
    own_first: usize,
    /// Whether more steps may join in place: no other instruction has read the base yet.
    open: bool,
    rejected: bool,
    expensive: bool,
}

impl Candidate {
    /// Whether `instr`, which writes this candidate's base, is one more recipe step.
    fn takes(&self, instr: &Instr) -> bool {
        self.open
            && self.steps.len() < MAX_STEPS
            && is_cheap_step(instr.op)
            && instr.out == self.view
            && self.reads_only_this(instr)
    }

    /// Whether `instr` reads nothing but this candidate's whole view and scalars.
    fn reads_only_this(&self, instr: &Instr) -> bool {
        instr.ins.iter().all(|o| match o {
            Operand::Scalar(_) => true,
            Operand::View(v) => *v == self.view,
        })
    }

    /// The candidate for `instr`'s fresh output when `instr` is one more cheap step
    /// from this one's base into another (a cast, a scaling into a new array).
    fn extended(&self, k: usize, instr: &Instr) -> Option<Candidate> {
        let reads_it = instr.input_views().next().is_some();
        if self.rejected
            || self.steps.len() >= MAX_STEPS
            || !is_cheap_step(instr.op)
            || instr.axis.is_some()
            || !reads_it
            || !self.reads_only_this(instr)
            || instr.out.shape != self.view.shape
        {
            return None;
        }
        let mut steps = self.steps.clone();
        steps.push(k);
        let mut temps = self.temps.clone();
        temps.push(self.view.base);
        Some(Candidate {
            view: instr.out.clone(),
            steps,
            temps,
            own_first: k,
            open: true,
            rejected: false,
            expensive: self.expensive,
        })
    }
}

impl Runtime {
    /// Rewrites a batch about to be flushed: reads of recipe bases become reads of
    /// temporaries the recipe fills, recipes that must become memory are written out, and
    /// bases the batch fills by a generator become recipes. Returns the bases
    /// materialised, whose recipes `restore_recipes` puts back if the batch fails, and
    /// whether a base became a recipe (its steps then write a temporary, which nothing
    /// may read in this batch: see `flush`).
    pub(super) fn rewrite_generated(
        &mut self,
        instrs: &mut Vec<Instr>,
        sync: &[BaseId],
    ) -> (Vec<(BaseId, Recipe)>, bool) {
        let materialised = if self.recipes > 0 {
            self.expand_recipes(instrs, sync)
        } else {
            Vec::new()
        };
        let adopted = self.queue_has_generator && self.adopt_recipes(instrs, sync);
        (materialised, adopted)
    }

    /// Puts back the recipes of bases a failed batch was to materialise: their values
    /// are still the recipe's.
    pub(super) fn restore_recipes(&mut self, materialised: Vec<(BaseId, Recipe)>) {
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

    /// `recipe`'s instructions with its temporaries renamed to fresh ones, which are
    /// pushed on `frees` (the caller frees them at the end of the batch).
    fn instantiate(&mut self, recipe: &Recipe, frees: &mut Vec<Base>) -> Vec<Instr> {
        let mut steps = recipe.instrs.clone();
        for like in &recipe.temps {
            let temp = self.recipe_temp(like);
            for s in &mut steps {
                rename(s, like.id, temp.id);
            }
            frees.push(temp);
        }
        steps
    }

    /// Phase one: the recipe bases this batch names.
    fn expand_recipes(
        &mut self,
        instrs: &mut Vec<Instr>,
        sync: &[BaseId],
    ) -> Vec<(BaseId, Recipe)> {
        // Recipe base → (first instruction reading it, whether it must be materialised,
        // whether the batch frees it).
        let mut named: FxHashMap<BaseId, (Option<usize>, bool, bool)> = FxHashMap::default();
        let has_recipe = |bases: &hassium_core::IdMap<BaseState>, id: &BaseId| {
            bases.get(id).is_some_and(|s| s.recipe.is_some())
        };
        for (k, instr) in instrs.iter().enumerate() {
            if has_recipe(&self.bases, &instr.out.base) {
                let e = named.entry(instr.out.base).or_default();
                if instr.op == Opcode::Free {
                    e.2 = true;
                } else {
                    e.1 = true;
                }
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
        named.retain(|_, (read, materialise, _)| read.is_some() || *materialise);
        if named.is_empty() {
            return Vec::new();
        }
        let mut materialised = Vec::new();
        let mut head: Vec<Instr> = Vec::new();
        let mut frees: Vec<Base> = Vec::new();
        // (first reader, recipe renamed onto its temporary, the base, the temporary).
        let mut inserts: Vec<(usize, Vec<Instr>, BaseId, BaseId)> = Vec::new();
        let mut named: Vec<_> = named.into_iter().collect();
        named.sort_unstable_by_key(|(id, _)| *id);
        for (id, (first_read, materialise, freed)) in named {
            let state = &self.bases[&id];
            let Some(recipe) = state.recipe.clone() else {
                continue;
            };
            let like = state.base;
            // An expensive or small recipe a later batch reads is written out once,
            // unless that batch is its last.
            let write_out = recipe.expensive || like.nelem <= SMALL_ARRAY_ELEMENTS;
            if materialise || (write_out && first_read.is_some() && !freed) {
                let steps = self.instantiate(&recipe, &mut frees);
                head.extend(steps);
                self.drop_recipe(id);
                materialised.push((id, recipe));
            } else if let Some(at) = first_read {
                let mut steps = self.instantiate(&recipe, &mut frees);
                let temp = self.recipe_temp(&like);
                for s in &mut steps {
                    rename(s, id, temp.id);
                }
                frees.push(temp);
                inserts.push((at, steps, id, temp.id));
            }
        }
        inserts.sort_unstable_by_key(|i| i.0);
        let old = std::mem::take(instrs);
        instrs.reserve(old.len() + head.len() + 6 * inserts.len() + frees.len());
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
        for temp in &frees {
            instrs.push(Instr::system(Opcode::Free, temp));
        }
        materialised
    }

    /// Whether `view`, which an instruction of the batch writes whole, may join a recipe:
    /// a base without memory, recipe or sync. One the batch frees serves only as a step
    /// towards another (its `Free` rejects it as a recipe of its own).
    fn is_fresh(&self, view: &View, sync: &[BaseId]) -> bool {
        let core = self
            .core
            .as_deref()
            .expect("a batch is cut with the back half home");
        let fresh = (self.bases.get(&view.base)).is_some_and(|s| {
            !core.has_block(view.base) && s.recipe.is_none() && is_whole(view, &s.base)
        });
        fresh && !sync.contains(&view.base)
    }

    /// Phase two: bases this batch fills with a generator and keeps become recipes.
    /// True when one did.
    fn adopt_recipes(&mut self, instrs: &mut Vec<Instr>, sync: &[BaseId]) -> bool {
        // In the order found, so temporaries are numbered alike on every flush of a loop
        // (the fuse cache and the engine's templates see the same batch again).
        let mut cands: Vec<(BaseId, Candidate)> = Vec::new();
        let mut index: FxHashMap<BaseId, usize> = FxHashMap::default();
        for (k, instr) in instrs.iter().enumerate() {
            if cands.is_empty() && !is_generator(instr.op) {
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
                None if is_generator(instr.op) => {
                    let scalars_only = instr.input_views().next().is_none();
                    if scalars_only && self.is_fresh(&instr.out, sync) {
                        index.insert(out, cands.len());
                        cands.push((
                            out,
                            Candidate {
                                view: instr.out.clone(),
                                steps: vec![k],
                                temps: Vec::new(),
                                own_first: k,
                                open: true,
                                rejected: false,
                                expensive: instr.op == Opcode::Random,
                            },
                        ));
                    }
                }
                None => {
                    // One more step from a candidate's base into a fresh one.
                    let from = instr.input_views().next().and_then(|v| index.get(&v.base));
                    let next = from.and_then(|&c| cands[c].1.extended(k, instr));
                    if let Some(next) = next {
                        if self.is_fresh(&instr.out, sync) {
                            index.insert(out, cands.len());
                            cands.push((out, next));
                        }
                    }
                }
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
        // Every recipe is copied before any base is renamed in the batch: a recipe's
        // steps name the batch's own bases, which its uses rename to fresh ones.
        let mut adopted: Vec<(BaseId, usize, Recipe)> = Vec::new();
        for (id, cand) in &cands {
            if cand.rejected {
                continue;
            }
            let temps: Option<Vec<Base>> = (cand.temps.iter())
                .map(|t| self.bases.get(t).map(|s| s.base))
                .collect();
            let Some(temps) = temps else { continue };
            let recipe = Recipe {
                instrs: cand.steps.iter().map(|&k| instrs[k].clone()).collect(),
                temps,
                expensive: cand.expensive,
            };
            adopted.push((*id, cand.own_first, recipe));
        }
        let any = !adopted.is_empty();
        for (id, first, recipe) in adopted {
            let like = self.bases[&id].base;
            let temp = self.recipe_temp(&like);
            for instr in &mut instrs[first..] {
                rename(instr, id, temp.id);
            }
            instrs.push(Instr::system(Opcode::Free, &temp));
            let s = self.bases.get_mut(&id).expect("a candidate is a live base");
            s.recipe = Some(recipe);
            self.recipes += 1;
            if let Some(core) = self.core.as_deref_mut() {
                core.stats.bases_generated += 1;
            }
        }
        any
    }
}
