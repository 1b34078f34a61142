//! Removes instructions whose results nobody can observe: the output base is freed in
//! the batch, not synced, and no later instruction reads any part of it. One backward
//! pass suffices: whether a write is dead depends only on the instructions after it, and
//! removing a dead reader is seen before its producers are visited. An instruction that
//! can fail on its values (a gather's index out of range, a negative integer power) is
//! kept even when its result is dead: NumPy raises there, and so must Hassium (vem's
//! `poison` raises a failure nothing reads at the next read), unless the recorder built
//! its indices in range (`Batch::in_range`: a compaction's ranks).

use crate::facts::temporaries;
use crate::{Filter, Result};
use hassium_core::Batch;
use hassium_core::IdSet;

pub struct DeadCode;

impl Filter for DeadCode {
    fn apply(&mut self, batch: &mut Batch) -> Result<()> {
        let temps = temporaries(batch);
        if temps.is_empty() {
            return Ok(());
        }
        let mut read_later = IdSet::default();
        let mut removed = Vec::new();
        for (k, instr) in batch.instrs.iter().enumerate().rev() {
            if instr.op.is_system() {
                continue;
            }
            if temps.contains(&instr.out.base)
                && !read_later.contains(&instr.out.base)
                && (!instr.can_fail_when_run() || batch.in_range.contains(&instr.out.base))
            {
                removed.push(k);
                continue;
            }
            read_later.extend(instr.input_views().map(|v| v.base));
            if instr.reads_output() {
                read_later.insert(instr.out.base);
            }
        }
        crate::facts::remove_indices(batch, &removed);
        Ok(())
    }
}
