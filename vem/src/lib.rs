//! The virtual engine manager: the runtime every bridge records into.
//!
//! It owns the host memory of every base, queues recorded instructions, and at each flush
//! hands the batch down the stack chosen in the TOML configuration (filters → fuser →
//! engine). See DESIGN.md §4.

mod config;
mod error;
mod flush_point;
mod info;
mod memory;
mod partitions;
mod paths;
mod runtime;
mod stack;
mod stats;

pub use config::{
    Config, EngineConfig, RuntimeConfig, StackConfig, DEFAULT_CONFIG, SMALL_ARRAY_ELEMENTS,
};
pub use error::{Error, Result};
pub use info::{available_stacks, info};
pub use memory::HostMemory;
pub use paths::engine_dirs;
pub use runtime::Runtime;
pub use stack::Stack;
pub use stats::RuntimeStats;

pub use hassium_core as core;
