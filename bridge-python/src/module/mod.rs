//! The module's functions (`hassium._hassium.<name>`), by what they do. Each wraps
//! the array type or the runtime; `lib.rs` registers them.

pub(crate) mod creation;
pub(crate) mod indexing;
pub(crate) mod runtime;
pub(crate) mod ufuncs;
pub(crate) mod views;
