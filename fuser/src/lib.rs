//! Fusion: cutting a batch into kernels (blocks of instructions that run as one loop nest).
//!
//! The formulation is Bohrium's weighted subroutine partitioning; see DESIGN.md §5.
//! Each algorithm is one file, registered by its TOML name in [`REGISTRY`].

mod error;
mod fuser;
mod kernel_info;
mod singleton;

pub use error::{Error, Result};
pub use fuser::{create, Fuser, FuserOptions, REGISTRY};
pub use kernel_info::finish_kernel;
pub use singleton::Singleton;
