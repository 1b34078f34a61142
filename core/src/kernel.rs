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

    /// True when one of the kernel's instructions writes a base that it or an earlier
    /// instruction of the kernel reads (`x += y`, a scatter, a held-back stencil write):
    /// after a run stopped part-way, running its instructions again would read changed
    /// values.
    pub fn overwrites_its_reads(&self, batch: &Batch) -> bool {
        let mut read: SmallVec<[BaseId; 8]> = SmallVec::new();
        self.instrs
            .iter()
            .filter_map(|&i| batch.instrs.get(i))
            .any(|instr| {
                read.extend(instr.input_views().map(|v| v.base));
                if instr.reads_output() {
                    read.push(instr.out.base);
                }
                read.contains(&instr.out.base)
            })
    }

    /// This kernel's run-time error `e`, attributed to the instruction of `batch` the
    /// reference engine would name (the first of the kernel's instructions that can fail
    /// that way, else its first), so that every engine reports the same
    /// `instruction N (op): ...` message. The error is a [`Error::Failed`]: the kernel ran.
    pub fn error_in(&self, batch: &Batch, e: Error) -> Error {
        let negative_power = matches!(&e, Error::Invalid(m) if m == NEGATIVE_POWER);
        let index = self
            .instrs
            .iter()
            .copied()
            .find(|&k| {
                batch.instrs.get(k).is_some_and(|i| {
                    if negative_power {
                        i.raises_on_negative_power()
                    } else {
                        i.op.class() == OpClass::Index
                    }
                })
            })
            .or(self.instrs.first().copied())
            .unwrap_or(0);
        let op = batch.instrs.get(index).map_or("?", |i| i.op.name());
        Error::Failed {
            index,
            op,
            source: Box::new(e),
            wrote_nothing: false,
        }
    }
}

/// NumPy's message (with a `ValueError`) for a signed integer raised to a negative power.
pub const NEGATIVE_POWER: &str = "Integers to negative integer powers are not allowed.";

/// The status words a compiled kernel reports a run-time failure with: codegen writes
/// them (returned by a CPU kernel, stored in `err[2]` by an OpenCL one) and the engines
/// turn them back into errors with [`status_error`].
pub mod status {
    /// A gather or scatter index out of range: `err[0]` holds the index, `err[1]` the size.
    pub const OUT_OF_BOUNDS: i64 = 1;
    /// A signed integer raised to a negative power read from an array (a scalar exponent
    /// is rejected when the instruction is recorded).
    pub const NEGATIVE_POWER: i64 = 2;
}

/// The error a kernel's non-zero status word `code` stands for; `err` is its error buffer.
pub fn status_error(code: i64, err: &[i64]) -> Error {
    match code {
        status::OUT_OF_BOUNDS => Error::OutOfBounds(format!(
            "index {} is out of bounds for axis 0 with size {}",
            err.first().copied().unwrap_or(0),
            err.get(1).copied().unwrap_or(0)
        )),
        status::NEGATIVE_POWER => Error::Invalid(NEGATIVE_POWER.into()),
        s => Error::Invalid(format!("kernel failed with status {s}")),
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
    fn a_kernel_error_names_the_instruction_that_fails_that_way_else_its_first() {
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
        // A negative power is the power's, wherever the kernel's gathers are.
        b.instrs.push(Instr::new(
            Opcode::Power,
            View::contiguous(BaseId(6), DType::Int32, &[4]),
            [
                View::contiguous(BaseId(7), DType::Int32, &[4]).into(),
                View::contiguous(BaseId(8), DType::Int32, &[4]).into(),
            ],
        ));
        let power = status_error(status::NEGATIVE_POWER, &[0, 0]);
        assert_eq!(
            kernel(&[1, 2, 3]).error_in(&b, power).to_string(),
            format!("instruction 3 (power): {NEGATIVE_POWER}")
        );
        assert_eq!(
            kernel(&[1]).error_in(&b, oob()).to_string(),
            "instruction 1 (gather): index 7 is out of bounds"
        );
        assert_eq!(
            status_error(status::OUT_OF_BOUNDS, &[7, 5]).to_string(),
            "index 7 is out of bounds for axis 0 with size 5"
        );
        // The wrapper keeps the error's kind for the bridge's exception mapping.
        assert!(matches!(
            kernel(&[0]).error_in(&b, oob()).root(),
            Error::OutOfBounds(_)
        ));
    }
}
