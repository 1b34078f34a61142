use crate::{BaseId, Batch, Error, OpClass, Shape};
use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

/// A kernel's instruction indices: most kernels hold a few, and the singleton fuser makes
/// one kernel per instruction, so they live inline rather than on the heap.
pub type KernelInstrs = SmallVec<[usize; 4]>;
/// A kernel's bases of one kind (read, written, contracted), inline for the same reason.
pub type KernelBases = SmallVec<[BaseId; 4]>;

/// A block of a batch's instructions that run as one loop nest, chosen by the fuser.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Kernel {
    /// Indices into `Batch::instrs`, in program order.
    pub instrs: KernelInstrs,
    /// The iteration shape (for a reduction kernel, the shape of its input).
    pub shape: Shape,
    /// Bases created and freed inside the kernel: they live in registers, never in memory.
    pub contracted: KernelBases,
    /// Bases read from memory (not contracted), sorted.
    pub reads: KernelBases,
    /// Bases written to memory (not contracted), sorted.
    pub writes: KernelBases,
}

impl Kernel {
    /// True when `base` lives only in registers inside this kernel.
    pub fn contracts(&self, base: BaseId) -> bool {
        self.contracted.contains(&base)
    }

    /// This kernel's run-time error `e`, attributed to the instruction of `batch` the
    /// reference engine would name (the kernel's indexing instruction, else its first),
    /// so that every engine reports the same `instruction N (op): ...` message.
    pub fn error_in(&self, batch: &Batch, e: Error) -> Error {
        let index = self
            .instrs
            .iter()
            .copied()
            .find(|&k| {
                batch
                    .instrs
                    .get(k)
                    .is_some_and(|i| i.op.class() == OpClass::Index)
            })
            .or(self.instrs.first().copied())
            .unwrap_or(0);
        let op = batch.instrs.get(index).map_or("?", |i| i.op.name());
        Error::InInstr {
            index,
            op,
            source: Box::new(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DType, Instr, Opcode, View};

    fn kernel(instrs: &[usize]) -> Kernel {
        Kernel {
            instrs: instrs.iter().copied().collect(),
            ..Kernel::default()
        }
    }

    #[test]
    fn a_kernel_error_names_its_indexing_instruction_else_its_first() {
        let v = |id| View::contiguous(BaseId(id), DType::Float64, &[4]);
        let mut b = Batch::default();
        b.instrs
            .push(Instr::new(Opcode::Add, v(1), [v(2).into(), v(2).into()]));
        b.instrs
            .push(Instr::new(Opcode::Gather, v(3), [v(1).into(), v(4).into()]));
        b.instrs.push(Instr::new(
            Opcode::Multiply,
            v(5),
            [v(3).into(), v(3).into()],
        ));
        let oob = || Error::OutOfBounds("index 7 is out of bounds".into());
        let msg = |k: Kernel| k.error_in(&b, oob()).to_string();
        assert_eq!(
            msg(kernel(&[0, 1, 2])),
            "instruction 1 (gather): index 7 is out of bounds"
        );
        assert_eq!(
            msg(kernel(&[2])),
            "instruction 2 (multiply): index 7 is out of bounds"
        );
        // The wrapper keeps the error's kind for the bridge's exception mapping.
        assert!(matches!(
            kernel(&[0]).error_in(&b, oob()).root(),
            Error::OutOfBounds(_)
        ));
    }
}
