use crate::{BaseId, Shape};
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
}
