//! The differential suite every engine runs: the engine under test against the reference
//! interpreter on every elementwise opcode × dtype over several view layouts, reductions
//! along each axis, scans, fused chains with contracted temporaries, indexing, generators,
//! complex numbers, matmul and sorting, over thread counts and specialisation modes. An engine's
//! `tests/differential.rs` describes it as a [`Subject`] and instantiates the tests with
//! [`differential_suite!`](crate::differential_suite).

use crate::{Arrays, Rng};
use hassium_core::{BaseId, Batch, DType, Kernel, Scalar};
use hassium_engine_abi::{Engine, EngineStats};
use std::path::Path;

mod complex;
mod elementwise;
mod errors;
mod fusion;
mod generators;
mod indexing;
mod matmul;
mod reductions;
mod sort;

pub use complex::*;
pub use elementwise::*;
pub use errors::*;
pub use fusion::*;
pub use generators::*;
pub use indexing::*;
pub use matmul::*;
pub use reductions::*;
pub use sort::*;

/// Specialisation mode, as each engine's own policy enum spells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spec {
    Fixed,
    Dynamic,
    Both,
}

/// An engine under test.
pub trait Subject {
    /// A fresh engine with its caches in `cache`. `threads` is for engines with a thread
    /// pool; others ignore it.
    fn engine(&self, threads: usize, spec: Spec, cache: &Path) -> Box<dyn Engine>;
    /// How many kernels the statistics say ran off the native path (interpreted, or
    /// handed to a child engine).
    fn not_native(&self, stats: &EngineStats) -> u64;
    /// How many of `kernels` the engine is expected to run off its native path.
    fn expected_not_native(&self, batch: &Batch, kernels: &[Kernel]) -> u64;
    /// How many independent elementwise instructions the elementwise tests put into one
    /// kernel. One (the default) tests each as its own kernel. An engine whose driver
    /// pays a large fixed cost per kernel (PoCL generates and links a work-group
    /// function per kernel at its first launch) tests the same instructions, views and
    /// values in fewer, larger kernels.
    fn elementwise_per_kernel(&self) -> usize {
        1
    }
}

/// The kernels of `batch` that touch a value of a dtype `pred` picks.
pub fn kernels_touching(batch: &Batch, kernels: &[Kernel], pred: impl Fn(DType) -> bool) -> u64 {
    kernels
        .iter()
        .filter(|k| {
            k.instrs.iter().any(|&i| {
                let i = &batch.instrs[i];
                pred(i.out.dtype) || i.ins.iter().any(|o| pred(o.dtype()))
            })
        })
        .count() as u64
}

/// Instantiates every test of the suite for a [`Subject`] expression.
#[macro_export]
macro_rules! differential_suite {
    ($subject:expr) => {
        $crate::differential_suite!(@tests $subject;
            every_elementwise_op_and_dtype_matches_on_contiguous_views,
            every_elementwise_op_and_dtype_matches_on_strided_views,
            every_elementwise_op_and_dtype_matches_on_negative_stride_views,
            every_elementwise_op_and_dtype_matches_on_broadcast_views,
            every_elementwise_op_and_dtype_matches_on_zero_d_views,
            every_elementwise_op_and_dtype_matches_with_scalar_operands,
            reductions_along_each_axis_of_a_3d_array_match,
            long_reductions_split_into_partials_match,
            column_reductions_of_tall_matrices_match,
            nan_propagates_through_min_max_and_argmin_argmax_reductions,
            partial_sums_are_identical_for_any_thread_count_and_specialisation,
            scans_along_each_axis_match,
            fused_reduction_with_prologue_and_epilogue_matches,
            fused_stencil_with_contracted_temporaries_matches,
            stencils_updating_their_own_grid_match,
            gather_scatter_and_scatter_add_match_including_negative_indices,
            a_compactions_scatter_to_distinct_ranks_matches_for_any_thread_count,
            out_of_bounds_gather_reports_numpys_message,
            negative_integer_power_reports_numpys_message,
            a_refused_masked_scatter_writes_nothing,
            range_and_random_match_the_reference_bit_for_bit,
            complex_kernels_leave_the_native_path_and_are_counted,
            complex_arithmetic_matches_the_reference_with_special_values,
            matmul_matches_for_float_and_int_dtypes,
            sort_argsort_and_searchsorted_match_for_every_dtype
        );
    };
    (@tests $subject:expr; $($name:ident),*) => {
        $(
            #[test]
            fn $name() {
                $crate::suite::$name(&$subject)
            }
        )*
    };
}

/// Positive values (no cancellation, so reordered sums stay within tolerance), with NaN
/// sprinkled in when asked.
fn fill_positive(a: &mut Arrays, id: BaseId, rng: &mut Rng, nans: bool) {
    let (d, n, _) = a.0[&id].clone();
    for i in 0..n {
        let s = if d.is_float() {
            if nans && rng.below(500) == 0 {
                Scalar::Float64(f64::NAN)
            } else {
                Scalar::Float64(rng.f64() + 0.5)
            }
        } else if d == DType::Bool {
            Scalar::Bool(rng.below(8) != 0)
        } else {
            Scalar::Int64(rng.below(200) as i64 - 50)
        };
        a.set(id, i, s.cast(d));
    }
}
