//! Hassium's reference engine: a plain scalar interpreter of every opcode.
//!
//! It is the correctness oracle every other engine is tested against and the last-resort
//! fallback for what no other engine can do, so it favours the obvious over the fast:
//! instructions run one at a time, one element at a time, through bounds-checked strided
//! accesses, with NumPy's semantics for every dtype (integer division signs, NaN handling,
//! shifts, casts, complex branches). Fusion structure is ignored.
//!
//! Layout: [`engine`] is the `Engine` implementation and the per-instruction entry point;
//! [`memory`] maps bases to raw buffers and walks strided views; `element` is the one
//! generic trait over the 14 element types (with `dispatch` choosing a type from a dtype);
//! `elementwise`, `cast`, `reduce`, `index`, `generators`, `matmul` and `sort` interpret
//! each class of opcode.

#[macro_use]
mod dispatch;
mod cast;
mod element;
mod elementwise;
mod engine;
mod generators;
mod index;
mod matmul;
pub mod memory;
mod reduce;
mod sort;

pub use engine::{execute_instr, execute_kernel, ReferenceEngine};
pub use memory::Memory;
