//! The runtime behind the arrays: flushing, statistics, configuration, the package's
//! dispatch hooks and the exit handler.

use crate::array::{self};
use crate::ops;
use crate::rt::{with_existing_rt, with_rt};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// Runs everything recorded so far down the stack.
#[pyfunction]
pub(crate) fn flush() -> PyResult<()> {
    ops::flush()
}

fn json_to_py(py: Python<'_>, text: &str) -> PyResult<PyObject> {
    Ok(PyModule::import(py, "json")?
        .call_method1("loads", (text,))?
        .unbind())
}

/// Creates the runtime now instead of at the first operation. Under mpirun on the cluster
/// stack this is where every rank but 0 starts serving rank 0 and never returns, before
/// any of the program's own code runs.
#[pyfunction]
pub(crate) fn start() -> PyResult<()> {
    with_rt(|_| Ok(()))
}

/// Starts creating the runtime on a thread of its own (see `rt::prestart`): `python -m
/// hassium` calls this first thing, so the engine starts while NumPy is imported. Returns
/// where it was created: `"thread"`, or `"here"` for a stack that starts MPI.
#[pyfunction]
pub(crate) fn prestart() -> &'static str {
    if crate::rt::prestart() {
        "thread"
    } else {
        "here"
    }
}

/// Waits for the runtime [`prestart`] is creating (before a fork, and at exit).
#[pyfunction]
pub(crate) fn prestart_join(py: Python<'_>) {
    py.allow_threads(crate::rt::prestart_join);
}

/// Waits for the batch the runtime runs on its flush thread, if any: before a fork,
/// whose child would lack that thread. Creates no runtime.
#[pyfunction]
pub(crate) fn quiesce(py: Python<'_>) {
    py.allow_threads(crate::rt::quiesce);
}

/// The runtime's counters (instructions, flushes, kernels, caches, times, bytes).
#[pyfunction]
pub(crate) fn stats(py: Python<'_>) -> PyResult<PyObject> {
    let text = with_rt(|rt| {
        let mut v =
            serde_json::to_value(rt.stats()).map_err(|e| PyValueError::new_err(e.to_string()))?;
        if let Some(o) = v.as_object_mut() {
            let s = rt.stats();
            o.insert("fuse_cache_hit_rate".into(), s.fuse_cache_hit_rate().into());
            o.insert("gbps".into(), s.gbps().into());
            o.insert("queued".into(), rt.queued().into());
        }
        Ok(v.to_string())
    })?;
    json_to_py(py, &text)
}

/// The configuration in force: its source, the stack in force, every stack and engine
/// (and whether each engine's library is found), and the cache directories (see
/// `hassium_vem::info`).
#[pyfunction]
pub(crate) fn info(py: Python<'_>) -> PyResult<PyObject> {
    let err = |e: hassium_vem::Error| pyo3::exceptions::PyRuntimeError::new_err(e.to_string());
    let report = match with_existing_rt(|rt| hassium_vem::info(Some(rt))) {
        Some(r) => r,
        None => hassium_vem::info(None),
    }
    .map_err(err)?;
    json_to_py(py, &report.to_string())
}

/// The stacks whose engine libraries can be found (so `HASSIUM_STACK=name` would work).
#[pyfunction]
pub(crate) fn stacks() -> PyResult<Vec<String>> {
    hassium_vem::available_stacks()
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))
}

/// Registers the package's `__array_ufunc__` and `__array_function__` implementations.
#[pyfunction]
#[pyo3(name = "_set_dispatch")]
pub(crate) fn set_dispatch(array_ufunc: PyObject, array_function: PyObject) {
    array::set_dispatch(array_ufunc, array_function);
}

/// Registered with `atexit`: flushes what is pending and prints the statistics when
/// `HASSIUM_STATS=1`.
#[pyfunction]
#[pyo3(name = "_atexit")]
pub(crate) fn at_exit() {
    let show = std::env::var_os("HASSIUM_STATS").is_some_and(|v| v != "0" && !v.is_empty());
    let _ = with_existing_rt(|rt| {
        if let Err(e) = rt.flush() {
            eprintln!("hassium: flush at exit failed: {e}");
        }
        if show {
            eprintln!("{}", rt.stats());
        }
    });
}
