//! Filters: bytecode rewrites applied to each batch before fusion. One file per filter;
//! the file name, the struct in snake case, the TOML name and the registry key agree.

mod error;
mod filter;

pub use error::{Error, Result};
pub use filter::{create, Filter, REGISTRY};
