//! Hassium's vector bytecode: the language every stage of the stack speaks.
//!
//! Bridges record [`Instr`]s over strided [`View`]s of [`Base`] buffers into a [`Batch`];
//! filters rewrite it, a fuser cuts it into [`Kernel`]s and an engine executes them.
//! This crate holds only the data and the rules about it (dtypes and promotion, the opcode
//! table, verification, canonical keys); it does no I/O.

mod batch;
mod canon;
mod capabilities;
mod dtype;
pub mod dump;
mod error;
mod ids;
mod instr;
mod kernel;
mod matrices;
pub mod methods;
mod opcode;
mod overlap;
pub mod philox;
pub mod resolve;
mod scalar;
mod verify;
mod view;

pub use batch::{Base, BaseId, Bases, Batch};
pub use canon::{batch_key, kernel_key, scalars_of, KernelKey, KeyMode};
pub use capabilities::{Capabilities, Supports};
pub use dtype::{promote, promote_weak, DType, Kind, ScalarKind, TypeSet};
pub use error::{Error, Result};
pub use ids::{sort_dedup, BuildIdHasher, IdHasher, IdMap, IdSet};
pub use instr::{Instr, Operand, Operands};
pub use kernel::{status, status_error, Kernel, KernelBases, KernelInstrs, NEGATIVE_POWER};
pub use matrices::matrices;
pub use opcode::{opcode_c_name, Identity, OpClass, OpInfo, Opcode, OutRule};
pub use overlap::{lag_rows, overlap, self_overlaps, Overlap, LAG_MAX_BYTES, LAG_MAX_ROWS};
pub use scalar::{float_to_int, Scalar};
pub use verify::{verify, verify_instr, verify_kernels, verify_kernels_in};
pub use view::{
    broadcast_shapes, contiguous_strides, fmt_requested_shape, fmt_shape, same_shape, Shape,
    Strides, View, MAX_DIMS,
};
