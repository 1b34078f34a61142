//! The extension methods (`Opcode::Extension` with `Instr::method`): operations that are
//! not loops over elements, each one whole-array step an engine implements natively. The
//! reference engine implements every one (the oracle); the others may take any subset
//! and say which in their [`Capabilities`](crate::Capabilities).
//!
//! - `matmul`: `out = ins[0] @ ins[1]`, matrices or one stack of them (`crate::matrices`).
//! - `sort`: `out` = `ins[0]` sorted along its last axis, ascending, NaN last (complex:
//!   see [`SORT`]); may write in place (`out` identical to the input).
//! - `argsort`: int64 `out` = the stable order that sorts `ins[0]` along its last axis.
//! - `argpartition`: int64 `out` along the last axis of `ins[0]`: the first `k + 1`
//!   positions of the stable order that sorts it (`k`: the int64 scalar `ins[1]`,
//!   `0 <= k <` the axis' length), then every other position in increasing order.
//! - `searchsorted_left` / `searchsorted_right`: int64 `out[k]` = where `ins[1][k]` goes
//!   in the sorted 1-D `ins[0]`, before (left) or after (right) equal elements.

/// `a @ b`.
pub const MATMUL: &str = "matmul";
/// Ascending along the last axis, in NumPy's order: NaN after every number; complex
/// lexicographically (real part, then imaginary), with the values that hold a NaN after
/// all others, in the classes `[R + Rj, R + nanj, nan + Rj, nan + nanj]`. Equal elements
/// (`-0.0` and `0.0`) keep their order: the sort is stable.
pub const SORT: &str = "sort";
/// The indices a stable [`SORT`] moves each element from.
pub const ARGSORT: &str = "argsort";
/// The positions of the `k + 1` smallest elements in the stable order of [`ARGSORT`],
/// then the others in increasing order: NumPy's `argpartition` for every `kth <= k`
/// (each such position holds what a sort puts there, smaller elements before it and
/// larger after), and the same on every engine, unlike an introselect's order.
pub const ARGPARTITION: &str = "argpartition";
/// The first index `i` where `!(hay[i] < v)` in the order of [`SORT`].
pub const SEARCHSORTED_LEFT: &str = "searchsorted_left";
/// The first index `i` where `v < hay[i]` in the order of [`SORT`].
pub const SEARCHSORTED_RIGHT: &str = "searchsorted_right";

/// Every extension method, in the order engines list them.
pub const ALL: &[&str] = &[
    MATMUL,
    SORT,
    ARGSORT,
    ARGPARTITION,
    SEARCHSORTED_LEFT,
    SEARCHSORTED_RIGHT,
];
