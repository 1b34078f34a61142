//! Kernel → C-dialect source.
//!
//! A fused [`hassium_core::Kernel`] is first *lowered* ([`lower`]): its instructions are
//! classified (body over the iteration shape, reduction/scan, epilogue over the reduced
//! shape), its views are mapped onto one loop nest whose dimensions are collapsed where
//! every operand is contiguous across them, and an execution [`Plan`] is chosen (how the
//! engine may split the outermost parallel dimension across threads). The [`Lowered`]
//! form is then *rendered* ([`render`]) through a [`Dialect`]: a table of the few things
//! that differ between C99 and OpenCL C (type names, qualifiers, math-function suffixes,
//! how the kernel entry and its index range look). Everything else — the loop nest,
//! contracted temporaries as locals, accumulators, NumPy's integer and NaN rules — is one
//! piece of code shared by both.
//!
//! See `codegen/README.md` for the generated function's calling convention.

mod dialect;
mod error;
mod lower;
mod ops;
mod prelude;
mod render;
mod traffic;

pub use dialect::{Dialect, C99, OPENCL};
pub use error::{Error, Result};
pub use lower::{
    lower, vector_math, Binding, Lowered, Plan, Specialize, ALIGN, CHUNK, LANES, WIDE,
};
pub use ops::complex_renders;
pub use prelude::prelude;
pub use render::{render, render_unit};
