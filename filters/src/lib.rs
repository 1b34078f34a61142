//! Filters: bytecode rewrites applied to each batch before fusion. One file per filter;
//! the file name, the struct in snake case, the TOML name and the registry key agree.

mod contract_reductions;
mod cse;
mod dead_code;
mod dump;
mod error;
mod expand_powk;
mod facts;
mod filter;
mod matrix_vector;
mod piecewise;
mod rematerialize;
mod simplify;
mod update_cells;

pub use contract_reductions::ContractReductions;
pub use cse::Cse;
pub use dead_code::DeadCode;
pub use dump::{write_kernels, Dump};
pub use error::{Error, Result};
pub use expand_powk::{ExpandPowk, MAX_EXPONENT};
pub use filter::{create, Filter, REGISTRY};
pub use matrix_vector::MatrixVector;
pub use piecewise::Piecewise;
pub use rematerialize::{Rematerialize, MAX_CHAIN};
pub use simplify::Simplify;
pub use update_cells::UpdateCells;
