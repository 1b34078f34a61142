//! Hassium's recorder, below both bridges: NumPy 2's promotion (NEP 50's weak scalars),
//! broadcasting, casting, `out=` handling and reductions turned into bytecode.
//!
//! The bytecode is strict (every value input of an elementwise instruction has one dtype
//! and the output's shape); NumPy programs and C callers are not. Each operation here
//! bridges the two: it promotes, records `Identity` casts into temporaries, broadcasts
//! with stride-0 views, records its instruction(s) and frees the temporaries, so fusion
//! can keep them in registers. A bridge only converts its language's values into [`Arg`]s
//! and [`View`](hassium_core::View)s, takes the runtime lock, and words [`Error`]s in its
//! language; what an operation means is decided once, here.
//!
//! Results are views of fresh bases that the caller owns (the Python bridge wraps them in
//! an array, the C bridge in a handle), or the `out=` view they were written into. A
//! failed operation frees what it created and records nothing a caller could observe.

mod args;
mod base;
mod create;
mod elementwise;
mod error;
mod index;
mod mask;
mod matmul;
mod reduce;
mod sort;

pub use args::{check_item, check_stored_int, result_type, Arg, Weak};
pub use base::{check_ndim, checked_nelem, new_view, Dest, Target};
pub use create::{arange, cast_copy, full, generate, random_bits, reshape, resolve_shape, uniform};
pub use elementwise::{assign, check_nin, elementwise};
pub use error::{Call, Error, Result};
pub use index::{gather, scatter};
pub use mask::{
    check_mask, compress, mask_assign, mask_assign_needs_count, mask_assign_whole, mask_count,
    same_values,
};
pub use matmul::matmul;
pub use reduce::{reduce, scan, ReduceSpec};
pub use sort::{argpartition, searchsorted, sort, sort_in_place};
