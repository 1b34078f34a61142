//! Status codes, the thread-local last-error message, and the guard every exported
//! function runs inside so that nothing — not even a panic — crosses into C.

use crate::ctypes::hs_status;
use std::cell::RefCell;
use std::ffi::{c_char, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// A failed call: the status C sees and the message `hs_last_error()` returns.
#[derive(Debug, Clone, PartialEq)]
pub struct Fail {
    pub status: hs_status,
    pub msg: String,
}

impl Fail {
    pub fn new(status: hs_status, msg: impl Into<String>) -> Fail {
        Fail {
            status,
            msg: msg.into(),
        }
    }
    pub fn shape(msg: impl Into<String>) -> Fail {
        Fail::new(hs_status::HS_ERR_SHAPE, msg)
    }
    pub fn dtype(msg: impl Into<String>) -> Fail {
        Fail::new(hs_status::HS_ERR_DTYPE, msg)
    }
    pub fn invalid(msg: impl Into<String>) -> Fail {
        Fail::new(hs_status::HS_ERR_INVALID, msg)
    }
}

pub type Result<T, E = Fail> = std::result::Result<T, E>;

impl From<hassium_core::Error> for Fail {
    fn from(e: hassium_core::Error) -> Fail {
        use hassium_core::Error as E;
        let status = match e.root() {
            E::ShapeMismatch(_) => hs_status::HS_ERR_SHAPE,
            E::OutOfBounds(_) => hs_status::HS_ERR_BOUNDS,
            E::DTypeNotAllowed(_) => hs_status::HS_ERR_DTYPE,
            E::BadAxis(_) => hs_status::HS_ERR_AXIS,
            E::Overlap(_) => hs_status::HS_ERR_OVERLAP,
            _ => hs_status::HS_ERR_INVALID,
        };
        Fail::new(status, e.to_string())
    }
}

impl From<hassium_vem::Error> for Fail {
    fn from(e: hassium_vem::Error) -> Fail {
        use hassium_vem::Error as E;
        match e {
            E::Bytecode(b) => b.into(),
            E::Config(m) => Fail::new(hs_status::HS_ERR_CONFIG, m),
            E::UnknownBase(m) => Fail::new(hs_status::HS_ERR_FREED, m),
            E::OutOfMemory(m) => Fail::new(hs_status::HS_ERR_NOMEM, m),
            other => Fail::new(hs_status::HS_ERR_ENGINE, other.to_string()),
        }
    }
}

thread_local! {
    /// The last failure on this thread; `hs_last_error()` hands out a pointer into it.
    static LAST: RefCell<(hs_status, CString)> = RefCell::new((hs_status::HS_OK, CString::default()));
}

fn set_last(status: hs_status, msg: String) {
    // Interior NULs would truncate the message in C; replace them rather than lose it.
    let c = CString::new(msg.replace('\0', "\\0")).unwrap_or_default();
    LAST.with(|l| *l.borrow_mut() = (status, c));
}

/// The message of the most recent failed call on this thread ("" when none failed).
pub fn last_error_ptr() -> *const c_char {
    LAST.with(|l| l.borrow().1.as_ptr())
}

/// The status of the most recent failed call on this thread (`HS_OK` when none failed).
pub fn last_status() -> hs_status {
    LAST.with(|l| l.borrow().0)
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".into()
    }
}

/// Runs the body of exported function `name`. A failure (or a panic, which would be a bug
/// in Hassium) is recorded as the thread's last error, prefixed with `name` so the message
/// says where, and its status is returned.
fn run<T>(name: &str, body: impl FnOnce() -> Result<T>) -> Result<T, hs_status> {
    let fail = match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(v)) => return Ok(v),
        Ok(Err(f)) => f,
        Err(p) => Fail::new(
            hs_status::HS_ERR_ENGINE,
            format!(
                "internal error (a bug in hassium): {}",
                panic_message(p.as_ref())
            ),
        ),
    };
    set_last(fail.status, format!("{name}: {}", fail.msg));
    Err(fail.status)
}

/// [`run`] for functions that return a value: `on_error` (NULL, 0) stands for failure.
pub fn guard<T>(name: &str, on_error: T, body: impl FnOnce() -> Result<T>) -> T {
    run(name, body).unwrap_or(on_error)
}

/// [`run`] for functions that return a status.
pub fn guard_status(name: &str, body: impl FnOnce() -> Result<()>) -> hs_status {
    match run(name, body) {
        Ok(()) => hs_status::HS_OK,
        Err(s) => s,
    }
}
