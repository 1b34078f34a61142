use crate::{DType, Instr, View};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Identifies a base buffer for the life of a runtime; never reused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct BaseId(pub u64);

/// A contiguous 1-D buffer of `nelem` elements; its memory is allocated on first write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Base {
    pub id: BaseId,
    pub dtype: DType,
    pub nelem: usize,
}

impl Base {
    /// The contiguous 1-D view spanning the whole base.
    pub fn full_view(&self) -> View {
        View::contiguous(self.id, self.dtype, &[self.nelem])
    }
    pub fn nbytes(&self) -> usize {
        self.nelem * self.dtype.size()
    }
}

/// What one flush hands down the stack: instructions in program order, the metadata of
/// every base they name, and the bases whose values must reach host memory.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Batch {
    pub bases: BTreeMap<BaseId, Base>,
    pub instrs: Vec<Instr>,
    pub sync: Vec<BaseId>,
}

impl Batch {
    pub fn base(&self, id: BaseId) -> Option<&Base> {
        self.bases.get(&id)
    }

    pub fn is_empty(&self) -> bool {
        self.instrs.is_empty() && self.sync.is_empty()
    }

    /// Bases freed by a `Free` instruction inside this batch.
    pub fn freed(&self) -> impl Iterator<Item = BaseId> + '_ {
        self.instrs
            .iter()
            .filter(|i| i.op == crate::Opcode::Free)
            .map(|i| i.out.base)
    }
}
