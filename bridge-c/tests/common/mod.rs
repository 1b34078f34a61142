//! Shared by the integration tests: a runtime on the reference stack (unless the caller's
//! environment picks one), and readable access to the last error.
#![allow(dead_code)]

use hassium::*;
use std::ffi::CStr;
use std::sync::Once;

/// Picks the reference stack unless the environment names a stack or a config, so the
/// tests need no compiled engine. Every test calls it before its first hs_* call; the
/// `Once` makes the one environment write happen before any thread reads it.
pub fn setup() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        if std::env::var_os("HASSIUM_STACK").is_none()
            && std::env::var_os("HASSIUM_CONFIG").is_none()
        {
            std::env::set_var("HASSIUM_STACK", "reference");
        }
    });
}

pub fn last_error() -> String {
    // SAFETY: hs_last_error always returns a valid NUL-terminated string.
    unsafe { CStr::from_ptr(hs_last_error()) }
        .to_string_lossy()
        .into_owned()
}

/// Asserts that the last call failed with `status` and a message containing `needle`.
pub fn expect_error(status: hs_status, needle: &str) {
    let msg = last_error();
    assert_eq!(hs_last_status(), status, "message: {msg}");
    assert!(msg.contains(needle), "expected `{needle}` in `{msg}`");
}

/// A new float64 array from values.
pub fn f64s(shape: &[usize], values: &[f64]) -> *mut hs_array {
    assert_eq!(shape.iter().product::<usize>(), values.len());
    // SAFETY: shape and values are live slices of the stated lengths.
    let a = unsafe {
        hs_from_buffer(
            HS_FLOAT64,
            shape.len(),
            shape.as_ptr(),
            values.as_ptr().cast(),
        )
    };
    assert!(!a.is_null(), "{}", last_error());
    a
}

/// The elements of any array, converted to f64, in C order.
pub fn values(a: *const hs_array) -> Vec<f64> {
    let n = hs_size(a);
    let d = hs_dtype_of(a);
    let conv = hs_astype(a, HS_FLOAT64);
    assert!(!conv.is_null(), "{} (dtype {})", last_error(), d.0);
    let mut out = vec![0.0f64; n];
    // SAFETY: `out` holds n doubles, exactly what the call is told.
    let st = unsafe { hs_copy_to(conv, out.as_mut_ptr().cast(), n * 8) };
    assert_eq!(st, hs_status::HS_OK, "{}", last_error());
    assert_eq!(hs_free(conv), hs_status::HS_OK);
    out
}

pub fn shape(a: *const hs_array) -> Vec<usize> {
    let n = hs_ndim(a);
    let p = hs_shape(a);
    assert!(!p.is_null(), "{}", last_error());
    // SAFETY: hs_shape points to hs_ndim extents while the handle lives.
    unsafe { std::slice::from_raw_parts(p, n) }.to_vec()
}

pub fn free(arrays: &[*mut hs_array]) {
    for &a in arrays {
        assert_eq!(hs_free(a), hs_status::HS_OK, "{}", last_error());
    }
}
