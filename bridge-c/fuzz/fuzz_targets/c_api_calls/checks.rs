//! The C API's contract on failures (status and last error) and on a handle's metadata.

use crate::input::count;
use hassium::*;
use std::ffi::CStr;
use std::ptr::null;

pub(crate) fn last_error() -> String {
    // SAFETY: hs_last_error always returns a valid NUL-terminated string.
    unsafe { CStr::from_ptr(hs_last_error()) }
        .to_string_lossy()
        .into_owned()
}

/// Puts a known error in the thread's last-error slot, so that a failing call that forgot
/// to set its own is caught (the sentinel names another function).
pub(crate) fn reset_error() {
    assert_eq!(hs_ndim(null()), 0);
    assert!(last_error().starts_with("hs_ndim:"));
}

/// The contract of a failed call of `name` that returned `status`.
pub(crate) fn check_failure(name: &str, status: hs_status) {
    let msg = last_error();
    assert_ne!(
        status,
        hs_status::HS_OK,
        "{name}: failure reported as HS_OK"
    );
    assert_eq!(
        hs_last_status(),
        status,
        "{name}: hs_last_status disagrees; message: {msg}"
    );
    let prefix = format!("{name}: ");
    assert!(
        msg.starts_with(&prefix) && msg.len() > prefix.len(),
        "{name} failed with {status:?} but hs_last_error() says `{msg}`"
    );
    assert!(
        !msg.contains("internal error"),
        "{name} panicked inside hassium: {msg}"
    );
}

/// Checks the contract of a status-returning call.
pub(crate) fn check_status(name: &str, status: hs_status) -> bool {
    if status != hs_status::HS_OK {
        check_failure(name, status);
        false
    } else {
        true
    }
}

/// What a live handle says about itself, checked for consistency.
pub(crate) struct Meta {
    pub(crate) dtype: hs_dtype,
    pub(crate) shape: Vec<usize>,
    pub(crate) strides: Vec<isize>,
    pub(crate) size: usize,
}

pub(crate) fn meta(a: *const hs_array) -> Option<Meta> {
    reset_error();
    let dtype = hs_dtype_of(a);
    if dtype == HS_DTYPE_INVALID {
        check_failure("hs_dtype_of", hs_last_status());
        return None;
    }
    assert!(dtype.0 <= 13, "hs_dtype_of gave {}", dtype.0);
    let ndim = hs_ndim(a);
    assert!(ndim <= 16, "an array with {ndim} dimensions");
    let sp = hs_shape(a);
    let tp = hs_strides(a);
    assert!(!sp.is_null() && !tp.is_null(), "{}", last_error());
    // SAFETY: both point to hs_ndim values while the handle lives (what is checked here:
    // ASan reports a shorter allocation).
    let (shape, strides) = unsafe {
        (
            std::slice::from_raw_parts(sp, ndim).to_vec(),
            std::slice::from_raw_parts(tp, ndim).to_vec(),
        )
    };
    let size = hs_size(a);
    assert_eq!(Some(size), count(&shape), "hs_size disagrees with hs_shape");
    Some(Meta {
        dtype,
        shape,
        strides,
        size,
    })
}
