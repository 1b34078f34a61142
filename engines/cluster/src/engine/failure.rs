//! Failures across ranks: which kernels can fail on their values, and a failure as it
//! travels between ranks and comes back as the error of the instruction that failed.

use super::chunks::is_epilogue;
use crate::comm;
use hassium_core::{Batch, Kernel};
use hassium_engine_abi::Error;

/// True when `k` can fail on the values it reads: index operations (an index out of
/// range) and integer powers (a negative exponent).
pub(super) fn fallible(batch: &Batch, k: &Kernel) -> bool {
    k.instrs.iter().any(|&i| {
        let x = &batch.instrs[i];
        x.op.class() == hassium_core::OpClass::Index
            || (x.op == hassium_core::Opcode::Power && x.out.dtype.is_integer())
    })
}

/// `e` naming the batch's instruction where it names a copy [`chunk_call`] appended
/// for a chunked reduction's last, short chunk.
pub(super) fn original_instr(e: Error, batch: &Batch, k: &Kernel) -> Error {
    match e {
        Error::Bytecode(hassium_core::Error::Failed {
            index,
            op,
            source,
            wrote_nothing,
        }) if index >= batch.instrs.len() => {
            let copied: Vec<usize> = (k.instrs.iter().copied())
                .filter(|&i| !is_epilogue(&batch.instrs[i]))
                .collect();
            Error::Bytecode(hassium_core::Error::Failed {
                index: copied
                    .get(index - batch.instrs.len())
                    .copied()
                    .unwrap_or(index),
                op,
                source,
                wrote_nothing,
            })
        }
        e => e,
    }
}

/// Bit of a [`comm::FailureInfo`] kind: the failing kernel wrote nothing.
const WROTE_NOTHING: u32 = 1 << 31;

/// What of `e` travels to rank 0.
pub(super) fn failure_info(e: &Error) -> comm::FailureInfo {
    match e {
        Error::Bytecode(c @ hassium_core::Error::Failed { index, source, .. }) => {
            comm::FailureInfo {
                index: *index as u64,
                kind: source.root().kind() | if c.wrote_nothing() { WROTE_NOTHING } else { 0 },
                message: source.root().to_string(),
            }
        }
        e => comm::FailureInfo {
            index: u64::MAX,
            kind: 0,
            message: e.to_string(),
        },
    }
}

/// Rank `who`'s failure `f` as the error rank 0 raises: the failure of an instruction
/// as such (so the runtime completes the batch after it), anything else by its message.
pub(super) fn failure_error(batch: &Batch, who: i32, f: comm::FailureInfo) -> Error {
    match usize::try_from(f.index)
        .ok()
        .and_then(|i| batch.instrs.get(i))
    {
        Some(instr) => Error::Bytecode(hassium_core::Error::Failed {
            index: f.index as usize,
            op: instr.op.name(),
            source: Box::new(hassium_core::Error::from_kind(
                f.kind & !WROTE_NOTHING,
                f.message,
            )),
            wrote_nothing: f.kind & WROTE_NOTHING != 0,
        }),
        None => Error::Engine {
            engine: "cluster".into(),
            message: format!("rank {who}: {}", f.message),
        },
    }
}
