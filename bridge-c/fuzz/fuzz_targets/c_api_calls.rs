//! Sequences of C API calls with random handles, shapes, lengths and opcodes.
//!
//! The fuzzer's bytes decode (through `arbitrary`) into a list of [`Call`]s, which run
//! through the real `extern "C"` functions of `hassium-bridge-c`. Handles are picked by
//! index from a table of live ones, so a sequence can build on what earlier calls made and
//! reach deep states (views of views, pending instructions, freed bases still queued); a
//! handle may also be NULL, stale (freed, possibly double freed), a made-up number or the
//! address of unrelated memory. After every call the harness checks the C API's contract:
//!
//! - a failure is a known status, `hs_last_status()` agrees with it, and `hs_last_error()`
//!   names the failing function and says something (never a panic turned into
//!   "internal error");
//! - a new handle answers `hs_ndim`, `hs_shape`, `hs_strides`, `hs_size`, `hs_dtype_of`
//!   consistently, with at most 16 dimensions;
//! - `hs_data` points to memory that holds every element its shape and strides advertise
//!   (all of them are read, and sometimes written, so ASan sees any overrun), aligned for
//!   its dtype; `hs_copy_to` writes exactly the bytes it accepts;
//! - arrays too large to exist are refused at the call, not when they are computed;
//! - after the sequence, freeing every handle leaves no live handle behind.
//!
//! Work is bounded so that one input runs in milliseconds: arrays the harness makes hold
//! at most [`MAX_ELEMS`] elements, and calls whose operands or result would exceed
//! [`MAX_WORK`] elements are skipped (the runtime would only be slow, not wrong).
#![no_main]

use hassium::*;
use libfuzzer_sys::fuzz_target;

#[path = "c_api_calls/checks.rs"]
mod checks;
#[path = "c_api_calls/harness.rs"]
mod harness;
#[path = "c_api_calls/input.rs"]
mod input;

use harness::Harness;
use input::Call;

/// Most elements of an array the harness creates with data.
const MAX_ELEMS: usize = 1 << 10;
/// Most elements an operation may read or write before the harness skips it.
const MAX_WORK: usize = 1 << 16;
/// Most live handles kept in the table (further new handles are freed at once).
const MAX_LIVE: usize = 48;
/// Arrays with more elements than this are refused by every creation function.
const TOO_LARGE: usize = isize::MAX as usize / 16;

fuzz_target!(|calls: Vec<Call>| {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // The reference engine: the cpu one compiles every new kernel with cc.
        std::env::set_var("HASSIUM_STACK", "reference");
    });
    // A flush error left over from the previous input (a deferred gather error, say)
    // belongs to that input: it must not fail this one's first call.
    let _ = hs_flush();
    let mut h = Harness::new();
    for c in calls.iter().take(200) {
        h.run(c);
    }
    h.finish();
});
