//! Fusion: cutting a batch into kernels (blocks of instructions that run as one loop nest).
//!
//! The formulation is Bohrium's weighted subroutine partitioning; see DESIGN.md §5 and
//! `legality.rs` for the exact rules. Each algorithm is one file, registered by its TOML
//! name in [`REGISTRY`]; [`FuseCache`] remembers partitions by canonical batch key.

mod bitset;
mod cache;
mod cost;
mod error;
mod fuser;
mod greedy;
mod kernel_info;
mod legality;
mod optimal;
mod partition;
mod period;
pub mod recorder;
mod serial;
mod singleton;
mod stats;

pub use cache::{FuseCache, Fused, PartitionStore, DEFAULT_CAPACITY};
pub use cost::{check_partition, cost};
pub use error::{Error, Result};
pub use fuser::{create, Fuser, FuserOptions, REGISTRY};
pub use greedy::Greedy;
pub use kernel_info::finish_kernel;
pub use optimal::{Optimal, DEFAULT_OPTIMAL_BUDGET};
pub use period::SEGMENT_NODES;
pub use serial::Serial;
pub use singleton::Singleton;
pub use stats::FuseStats;
