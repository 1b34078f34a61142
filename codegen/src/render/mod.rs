//! Rendering a [`Lowered`](crate::Lowered) kernel as C-dialect source through a
//! [`Dialect`](crate::Dialect) table, one part per file:
//!
//! - `renderer`: the renderer's state, reading and writing operands, the entry points;
//! - `out`: the text and its indentation;
//! - `function`: the kernel's signature, prologue and the loop nest of each structure;
//! - `instr`: one instruction as C statements;
//! - `lanes`: accumulators and lane reductions, folded in lane order;
//! - `rows`: `RowPartials`, a chunk of rows into per-column partials;
//! - `groups`: device reductions by work-groups;
//! - `fin`: the `_fin` functions that combine partials in chunk order;
//! - `lag`: held-back writes (`Plan::Lagged`).

mod fin;
mod function;
mod groups;
mod instr;
mod lag;
mod lanes;
mod out;
mod renderer;
mod rows;

pub use renderer::{render, render_unit};
