//! Helpers the codegen test files share.

use hassium_core::{Base, BaseId, Batch, DType};

/// Registers base `id` of `n` elements of `dtype` in `b`.
pub fn base(b: &mut Batch, id: u64, dtype: DType, n: usize) -> BaseId {
    let id = BaseId(id);
    b.bases.insert(
        id,
        Base {
            id,
            dtype,
            nelem: n,
        },
    );
    id
}
