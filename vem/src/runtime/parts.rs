//! Running one part of a batch's kernels (one engine call), and what an instruction
//! failing while it runs leaves: the kernels before it ran, its outputs are poisoned,
//! the rest run unless they read a poisoned base (rules in `poison` and
//! `docs/reliability.md`).

use super::core::Core;
use crate::{Error, Result};
use hassium_core::{sort_dedup, Batch, Kernel};
use hassium_engine_abi::{Buffers, Engine};
use std::time::Instant;
use tracing::debug_span;

impl Core {
    /// [`Core::execute_part`], completing the part when one of its instructions fails
    /// while it runs: the engine ran the kernels before the failing one, that kernel's
    /// outputs are poisoned, and the kernels after it run unless they read a poisoned base
    /// (then their outputs are poisoned). See `poison`.
    pub(super) fn run_part(
        &mut self,
        batch: &Batch,
        kernels: &[Kernel],
        on_fallback: bool,
        template: Option<u128>,
    ) -> Result<()> {
        let mut todo: Vec<Kernel> = Vec::new();
        // An invalid array a program keeps must not cost every later flush its template.
        let reads_invalid = !self.poison.is_empty()
            && (kernels.iter()).any(|k| self.poison.first_of(k.reads.iter().copied()).is_some());
        if !reads_invalid {
            match self.execute_part(batch, kernels, on_fallback, template) {
                Ok(()) => return Ok(()),
                Err(e) => self.after_failure(batch, kernels, e, &mut todo)?,
            }
        } else {
            // Kernels of this part may read what an earlier part's failure poisoned.
            todo.extend_from_slice(kernels);
        }
        // After a failure: one engine call per run of kernels that can go, each failure
        // poisoning and skipping as above.
        loop {
            let mut runnable = Vec::with_capacity(todo.len());
            for k in todo.drain(..) {
                match self.poison.first_of(k.reads.iter().copied()) {
                    // Some of its instructions may not depend on the invalid base (an
                    // update fused with a use of the failed result): one by one, only
                    // those that do are skipped.
                    Some(_) if k.instrs.len() > 1 => {
                        for one in singletons(batch, k.instrs.iter().copied()) {
                            match self.poison.first_of(one.reads.iter().copied()) {
                                Some(f) => {
                                    one.writes.iter().for_each(|&id| self.poison.poison(id, f))
                                }
                                None => runnable.push(one),
                            }
                        }
                    }
                    Some(f) => k.writes.iter().for_each(|&id| self.poison.poison(id, f)),
                    None => runnable.push(k),
                }
            }
            if runnable.is_empty() {
                return Ok(());
            }
            // What reads a target owed an error owes it too (raised once in all).
            for k in &runnable {
                if let Some(f) = self.poison.owed_of(k.reads.iter().copied()) {
                    k.writes.iter().for_each(|&id| self.poison.owe(id, f));
                }
            }
            match self.execute_part(batch, &runnable, on_fallback, None) {
                Ok(()) => return Ok(()),
                Err(e) => self.after_failure(batch, &runnable, e, &mut todo)?,
            }
        }
    }

    /// Poisons the outputs of the kernel of `kernels` that failed with `e` and leaves the
    /// kernels after it in `rest`; `e` itself when it is not such a failure. When that
    /// kernel's other instructions can run again, only the failing instruction's output
    /// is poisoned and they go first in `rest`, one kernel each (those reading the poisoned
    /// output are then skipped and poisoned); a scatter refused before the kernel wrote
    /// anything leaves its target's values, and the target is owed the error.
    fn after_failure(
        &mut self,
        batch: &Batch,
        kernels: &[Kernel],
        e: Error,
        rest: &mut Vec<Kernel>,
    ) -> Result<()> {
        let Some(index) = failed_instr(&e) else {
            return Err(e);
        };
        let Some(at) = kernels.iter().position(|k| k.instrs.contains(&index)) else {
            return Err(e);
        };
        let Error::Engine(hassium_engine_abi::Error::Bytecode(error)) = e else {
            return Err(e);
        };
        tracing::debug!("deferred failure, its dependents poisoned: {error}");
        self.stats.failures += 1;
        let wrote_nothing = error.wrote_nothing();
        let failed = &kernels[at];
        // The kernel's instructions can run again, one by one, when what it wrote before
        // it stopped changed nothing they read: it wrote nothing, or none of them
        // overwrites what it or an earlier one reads (the fuser keeps an instruction that
        // can fail on values it computes out of such kernels; engines check the others'
        // operands before running them, see `hassium_engine_abi::precheck`).
        let rerun = wrote_nothing || !failed.overwrites_its_reads(batch);
        // A compiled kernel's status names the kind of failure, not the instruction: with
        // two that can fail so, all run again and the failing one fails again on its own.
        let named = wrote_nothing
            || (failed.instrs.iter())
                .filter(|&&i| batch.instrs[i].can_fail_when_run())
                .count()
                <= 1;
        if rerun && !named {
            tracing::debug!("deferred failure in a kernel of several that can fail: {error}");
            rest.extend(singletons(batch, failed.instrs.iter().copied()));
            rest.extend_from_slice(&kernels[at + 1..]);
            return Ok(());
        }
        let f = self.poison.fail(error);
        match batch.instrs.get(index) {
            Some(instr) if rerun => {
                if wrote_nothing && instr.reads_output() {
                    self.poison.owe(instr.out.base, f);
                } else {
                    self.poison.poison(instr.out.base, f);
                }
                let others = failed.instrs.iter().copied().filter(|&i| i != index);
                rest.extend(singletons(batch, others));
            }
            _ => failed
                .writes
                .iter()
                .for_each(|&id| self.poison.poison(id, f)),
        }
        self.poison.unless_carried(f);
        rest.extend_from_slice(&kernels[at + 1..]);
        Ok(())
    }

    fn execute_part(
        &mut self,
        batch: &Batch,
        kernels: &[Kernel],
        on_fallback: bool,
        template: Option<u128>,
    ) -> Result<()> {
        let _s = debug_span!("execute", kernels = kernels.len()).entered();
        let n = kernels.iter().map(|k| k.reads.len() + k.writes.len()).sum();
        let mut touched = Vec::with_capacity(n);
        for k in kernels {
            touched.extend(k.reads.iter().chain(&k.writes).copied());
            self.stats.bases_contracted += k.contracted.len() as u64;
        }
        sort_dedup(&mut touched);
        let mut buffers = Buffers::with_capacity(touched.len());
        for &id in &touched {
            buffers.insert(self.host_buffer_in(batch, id)?);
        }
        if on_fallback {
            // The reference engine works on host memory: bring inputs home first, and
            // tell the main engine afterwards that the outputs changed there.
            for k in kernels {
                for &id in &k.reads {
                    let host = self.host_buffer_in(batch, id)?;
                    self.stack.engine.sync(id, &host)?;
                }
            }
        }
        let t = Instant::now();
        let engine: &mut dyn Engine = if on_fallback {
            &mut self.stack.fallback
        } else {
            self.stack.engine.as_mut()
        };
        let result = match template {
            Some(key) => engine.execute_keyed(key, batch, kernels, &buffers),
            None => engine.execute(batch, kernels, &buffers),
        };
        self.stats.execute_seconds += t.elapsed().as_secs_f64();
        self.stats.kernels += kernels.len() as u64;
        let result = result.map_err(Error::from);
        // A failure while running leaves the kernels before it run: their outputs are
        // where they would be after a success.
        if result.as_ref().is_err_and(|e| failed_instr(e).is_none()) {
            return result;
        }
        for &id in &touched {
            if let Some(s) = self.storage.get_mut(&id) {
                s.host_dirty = on_fallback;
            }
        }
        result
    }
}

/// The index of the instruction that failed while it ran, when `e` is such a failure.
fn failed_instr(e: &Error) -> Option<usize> {
    match e {
        Error::Engine(hassium_engine_abi::Error::Bytecode(c)) => c.failed_instr(),
        _ => None,
    }
}

/// One kernel per instruction of `instrs` (indices into `batch`): how instructions run
/// when they cannot share a kernel, after a failure or on the fallback engine.
pub(super) fn singletons<'a>(
    batch: &'a Batch,
    instrs: impl IntoIterator<Item = usize> + 'a,
) -> impl Iterator<Item = Kernel> + 'a {
    instrs
        .into_iter()
        .map(|i| hassium_fuser::finish_kernel(batch, [i].as_slice(), |_| true))
}
