//! `hassium._hassium`: the Hassium array type and the recorder, as a Python extension.
//!
//! Everything on the hot path of recording an operation lives here, in Rust: promotion,
//! broadcasting, view arithmetic, verification and recording. The `hassium` package
//! builds NumPy's namespace on these primitives; `docs/python-bridge.md` is the contract
//! between the two halves.
//!
//! This file only declares: the array type is in `array`, the module's functions in
//! `module`, and `_hassium` below registers them.

mod array;
mod convert;
mod deferred;
mod index;
mod module;
mod ops;
mod py;
mod rt;
mod types;

use array::PyNdArray;
use pyo3::prelude::*;

/// Recording one operation allocates and frees a few small blocks (the array's owner, a
/// view's dimensions beyond four, the batch's vectors), often freed on another thread
/// (the flush pipeline's): mimalloc does each in tens of instructions where glibc's
/// allocator took hundreds (a tenth of a small-array loop's recording).
///
/// Built with `no_thp`: where the system leaves transparent huge pages to `madvise`,
/// mimalloc would advise its whole arena into huge pages, and every 2 MiB it touches
/// first is then zeroed at once. These blocks are small, so that buys nothing, and on a
/// virtual machine a huge page's first touch is slow: the first 20 000 steps of
/// `small_arrays` in a fresh process took 91–121 ms with it and 86–89 ms without (its
/// later passes, 80–86 ms, are the same either way). Large array blocks do not come from
/// here (`vem/src/memory.rs` maps and advises those itself).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[pymodule]
fn _hassium(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<PyNdArray>()?;
    m.add_class::<array::Flags>()?;
    m.add("UnsupportedError", py.get_type::<py::UnsupportedError>())?;
    // The most dimensions an array may have (the Array API's "max dimensions").
    m.add("MAX_DIMS", hassium_core::MAX_DIMS)?;
    m.add_function(wrap_pyfunction!(module::ufuncs::ufunc, m)?)?;
    m.add_function(wrap_pyfunction!(module::ufuncs::ufuncs, m)?)?;
    m.add_function(wrap_pyfunction!(module::ufuncs::reduce, m)?)?;
    m.add_function(wrap_pyfunction!(module::ufuncs::accumulate, m)?)?;
    m.add_function(wrap_pyfunction!(module::creation::empty, m)?)?;
    m.add_function(wrap_pyfunction!(module::creation::full, m)?)?;
    m.add_function(wrap_pyfunction!(module::creation::arange, m)?)?;
    m.add_function(wrap_pyfunction!(module::creation::asarray, m)?)?;
    m.add_function(wrap_pyfunction!(module::creation::random_bits, m)?)?;
    m.add_function(wrap_pyfunction!(module::indexing::copyto, m)?)?;
    m.add_function(wrap_pyfunction!(module::views::broadcast_to, m)?)?;
    m.add_function(wrap_pyfunction!(module::views::diagonal, m)?)?;
    m.add_function(wrap_pyfunction!(module::indexing::take_flat, m)?)?;
    m.add_function(wrap_pyfunction!(module::indexing::put_flat, m)?)?;
    m.add_function(wrap_pyfunction!(module::ufuncs::matmul, m)?)?;
    m.add_function(wrap_pyfunction!(module::ufuncs::where_, m)?)?;
    m.add_function(wrap_pyfunction!(module::indexing::nonzero, m)?)?;
    m.add_function(wrap_pyfunction!(module::indexing::sort, m)?)?;
    m.add_function(wrap_pyfunction!(module::indexing::argpartition, m)?)?;
    m.add_function(wrap_pyfunction!(module::indexing::sort_in_place, m)?)?;
    m.add_function(wrap_pyfunction!(module::indexing::searchsorted, m)?)?;
    m.add_function(wrap_pyfunction!(module::ufuncs::round, m)?)?;
    m.add_function(wrap_pyfunction!(module::runtime::flush, m)?)?;
    m.add_function(wrap_pyfunction!(module::runtime::stats, m)?)?;
    m.add_function(wrap_pyfunction!(module::runtime::start, m)?)?;
    m.add_function(wrap_pyfunction!(module::runtime::prestart, m)?)?;
    m.add_function(wrap_pyfunction!(module::runtime::prestart_join, m)?)?;
    m.add_function(wrap_pyfunction!(module::runtime::quiesce, m)?)?;
    m.add_function(wrap_pyfunction!(module::runtime::info, m)?)?;
    m.add_function(wrap_pyfunction!(module::runtime::stacks, m)?)?;
    m.add_function(wrap_pyfunction!(module::runtime::set_dispatch, m)?)?;
    m.add_function(wrap_pyfunction!(module::ufuncs::resolve, m)?)?;
    m.add_function(wrap_pyfunction!(module::ufuncs::can_cast, m)?)?;
    m.add_function(wrap_pyfunction!(module::runtime::at_exit, m)?)?;
    PyModule::import(py, "atexit")?.call_method1("register", (m.getattr("_atexit")?,))?;
    Ok(())
}
