//! The `Engine` implementation and the per-instruction entry point.

use crate::memory::Memory;
use crate::{elementwise, generators, index, matmul, reduce};
use hassium_core::{BaseId, Batch, Capabilities, Error as CoreError, Instr, Kernel, OpClass};
use hassium_engine_abi::{Buffers, Engine, EngineContext, EngineStats, Error, HostBuffer, Result};
use std::time::Instant;

/// The reference engine. It keeps no state between calls (host buffers are the truth),
/// only the counters `stats()` reports.
#[derive(Debug, Default)]
pub struct ReferenceEngine {
    stats: EngineStats,
    /// Skip verifying the kernels it is handed: see [`ReferenceEngine::trusting`].
    trusting: bool,
}

impl ReferenceEngine {
    /// An engine that verifies every kernel before it runs it, as an engine handed
    /// batches through the ABI must.
    pub fn new() -> Self {
        ReferenceEngine::default()
    }

    /// The runtime's built-in engine. The runtime verifies each instruction when it is
    /// recorded (and again after the filters when `runtime.verify` is set), so verifying
    /// once more here would only repeat that work: on a batch of small arrays it is a
    /// tenth of the flush. Safety does not rest on it: every access is bounds-checked.
    pub fn trusting() -> Self {
        ReferenceEngine {
            trusting: true,
            ..ReferenceEngine::default()
        }
    }

    /// The engine library's constructor. The reference engine has no settings and needs
    /// no child (it is the last resort), so both are ignored.
    pub fn create(_ctx: EngineContext) -> Result<Box<dyn Engine>> {
        Ok(Box::new(ReferenceEngine::new()))
    }
}

impl Engine for ReferenceEngine {
    fn name(&self) -> &str {
        "reference"
    }

    /// Everything: every opcode, every dtype, matmul; no kernel size limits (fusion
    /// structure is ignored, so any kernel is fine).
    fn capabilities(&self) -> Capabilities {
        Capabilities::all()
    }

    fn execute(&mut self, batch: &Batch, kernels: &[Kernel], buffers: &Buffers) -> Result<()> {
        let start = Instant::now();
        let mut mem = Memory::new();
        // SAFETY: the engine ABI guarantees each host buffer's memory for this call.
        unsafe { mem.insert_host(buffers)? };
        for id in kernels.iter().flat_map(|k| &k.contracted) {
            if !mem.contains(*id) {
                let base = batch.base(*id).ok_or_else(|| {
                    Error::Other(format!("contracted base {} is not in the batch", id.0))
                })?;
                mem.insert_scratch(base)?;
            }
        }
        // Against the memory's table, which holds every base a kernel names (host or
        // scratch) and is a hash lookup where the batch's is a tree search; a base without
        // a buffer is looked up in the batch, and running its instruction names the lack.
        if !self.trusting {
            hassium_core::verify_kernels_in(batch, kernels, |id| {
                mem.base(id).or_else(|| batch.base(id).copied())
            })?;
        }
        let result = kernels.iter().try_for_each(|k| {
            hassium_engine_abi::precheck::check(batch, k, buffers)?;
            execute_kernel(batch, k, &mut mem)?;
            self.stats.kernels_run += 1;
            Ok(())
        });
        self.stats.execute_seconds += start.elapsed().as_secs_f64();
        result
    }

    /// Host buffers always hold the current values: nothing to do.
    fn sync(&mut self, _base: BaseId, _host: &HostBuffer) -> Result<()> {
        Ok(())
    }

    /// The engine holds nothing per base: nothing to forget.
    fn free(&mut self, _base: BaseId) -> Result<()> {
        Ok(())
    }

    fn stats(&self) -> EngineStats {
        self.stats.clone()
    }
}

/// Interprets instruction `index` of `batch` over `mem`. System instructions (free, sync,
/// none) do nothing here: they are the runtime's business.
///
/// Callers should have verified the batch (`hassium_core::verify`); every access is
/// bounds-checked regardless, so a malformed instruction yields an error, never a wild
/// write. Errors name the instruction: `instruction 3 (gather): index 7 is out of bounds
/// for axis 0 with size 5`; they are run-time failures (`Error::Failed`): the instructions
/// before it ran, those after it did not.
pub fn execute_instr(batch: &Batch, index: usize, mem: &mut Memory) -> Result<()> {
    let instr = batch.instrs.get(index).ok_or_else(|| {
        Error::Other(format!(
            "instruction {index} does not exist (the batch has {})",
            batch.instrs.len()
        ))
    })?;
    run(instr, mem).map_err(|e| {
        Error::Bytecode(CoreError::Failed {
            index,
            op: instr.op.name(),
            source: Box::new(e),
            wrote_nothing: false,
        })
    })
}

/// Interprets `kernel`'s instructions in order over `mem`. A failure says whether the
/// kernel wrote nothing: the failing instruction is its first and a scatter, which
/// resolves every index before it writes (see `Error::Failed`).
pub fn execute_kernel(batch: &Batch, kernel: &Kernel, mem: &mut Memory) -> Result<()> {
    kernel.instrs.iter().enumerate().try_for_each(|(at, &i)| {
        execute_instr(batch, i, mem).map_err(|e| match e {
            Error::Bytecode(CoreError::Failed {
                index, op, source, ..
            }) => Error::Bytecode(CoreError::Failed {
                index,
                op,
                source,
                wrote_nothing: at == 0 && batch.instrs[i].reads_output(),
            }),
            e => e,
        })
    })
}

fn run(instr: &Instr, mem: &Memory) -> hassium_core::Result<()> {
    match instr.op.class() {
        OpClass::Elementwise => elementwise::run(instr, mem),
        OpClass::Reduce | OpClass::Scan => reduce::run(instr, mem),
        OpClass::Generator => generators::run(instr, mem),
        OpClass::Index => index::run(instr, mem),
        OpClass::Extension => matmul::run(instr, mem),
        OpClass::System => Ok(()),
    }
}
