//! Hassium's C API (`libhassium`, header `include/hassium.h`).
//!
//! A C or C++ program records array operations through opaque `hs_array*` handles; the
//! operations run lazily, fused and compiled by the stack in force, when data is observed
//! (`hs_data`, `hs_copy_to`, `hs_item`), on `hs_flush`, or when the queue fills.
//! Every function returns a status (or NULL / 0) instead of aborting, and
//! `hs_last_error()` says what went wrong and where. See `include/hassium.h` for the
//! API as C sees it and `examples/c/heat_equation.c` for a tour.
#![allow(non_camel_case_types)]

mod args;
mod create;
mod ctypes;
mod error;
mod host;
mod ops;
mod record;
mod state;
mod views;

pub use create::*;
pub use ctypes::*;
pub use host::*;
pub use ops::*;
pub use views::*;

/// Number of live handles in this process (for leak tests; not part of the C API).
pub fn live_handles() -> usize {
    state::with_existing(|st| Ok(st.live_handles()))
        .and_then(Result::ok)
        .unwrap_or(0)
}
