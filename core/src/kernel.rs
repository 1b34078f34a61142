use crate::{BaseId, Shape};
use serde::{Deserialize, Serialize};

/// A block of a batch's instructions that run as one loop nest, chosen by the fuser.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Kernel {
    /// Indices into `Batch::instrs`, in program order.
    pub instrs: Vec<usize>,
    /// The iteration shape (for a reduction kernel, the shape of its input).
    pub shape: Shape,
    /// Bases created and freed inside the kernel: they live in registers, never in memory.
    pub contracted: Vec<BaseId>,
    /// Bases read from memory (not contracted), sorted.
    pub reads: Vec<BaseId>,
    /// Bases written to memory (not contracted), sorted.
    pub writes: Vec<BaseId>,
}

impl Kernel {
    /// True when `base` lives only in registers inside this kernel.
    pub fn contracts(&self, base: BaseId) -> bool {
        self.contracted.contains(&base)
    }
}
