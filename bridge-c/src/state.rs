//! The one runtime a C program records into, and the registry of live array handles.
//!
//! A handle is not a pointer to memory: it encodes a slot index and the slot's generation
//! (`generation << SLOT_BITS | (slot + 1)`). C never dereferences it, so a null, stale,
//! double-freed or made-up handle is looked up, found wanting, and reported with a status
//! — it can never make Hassium read or write through a dangling pointer.

use crate::ctypes::{hs_array, hs_status};
use crate::error::{Fail, Result};
use hassium_core::{BaseId, DType, View};
use hassium_vem::Runtime;
use parking_lot::Mutex;
use std::collections::HashMap;

const SLOT_BITS: u32 = usize::BITS / 2;
const SLOT_MASK: usize = (1 << SLOT_BITS) - 1;

/// What a live handle holds: its view, plus its shape and strides in the C types that
/// `hs_shape`/`hs_strides` hand out pointers to (boxed, so they stay put while it lives).
pub struct Entry {
    pub view: View,
    shape: Box<[usize]>,
    strides: Box<[isize]>,
}

impl Entry {
    pub fn shape_ptr(&self) -> *const usize {
        self.shape.as_ptr()
    }
    pub fn strides_ptr(&self) -> *const isize {
        self.strides.as_ptr()
    }
}

struct Slot {
    generation: usize,
    entry: Option<Entry>,
}

/// The runtime plus the handles C holds and how many of them share each base.
pub struct State {
    pub rt: Runtime,
    slots: Vec<Slot>,
    vacant: Vec<usize>,
    refs: HashMap<BaseId, usize>,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

/// Runs `f` on the process-wide state, creating the runtime on first use. A configuration
/// or engine-loading error is returned (and creation retried on the next call), so a C
/// program learns about a typo in its `hassium.toml` from a status, not an abort.
pub fn with_state<T>(f: impl FnOnce(&mut State) -> Result<T>) -> Result<T> {
    let mut guard = STATE.lock();
    if guard.is_none() {
        let rt = Runtime::new().map_err(|e| {
            let fail = Fail::from(e);
            let status = match fail.status {
                hs_status::HS_ERR_CONFIG | hs_status::HS_ERR_NOMEM => fail.status,
                _ => hs_status::HS_ERR_ENGINE,
            };
            Fail::new(
                status,
                format!("cannot start the hassium runtime: {}", fail.msg),
            )
        })?;
        WAIT_BEFORE_FORK.call_once(|| {
            // SAFETY: registers a handler that takes only Rust locks and calls no
            // async-signal-unsafe code beyond what the parent may run before fork.
            unsafe { sys::pthread_atfork(Some(quiesce_before_fork), None, None) };
        });
        *guard = Some(State {
            rt,
            slots: Vec::new(),
            vacant: Vec::new(),
            refs: HashMap::new(),
        });
    }
    // Filled just above when it was empty.
    f(guard.as_mut().expect("state created above"))
}

/// cbindgen:ignore
mod sys {
    extern "C" {
        pub fn pthread_atfork(
            prepare: Option<unsafe extern "C" fn()>,
            parent: Option<unsafe extern "C" fn()>,
            child: Option<unsafe extern "C" fn()>,
        ) -> std::ffi::c_int;
    }
}

static WAIT_BEFORE_FORK: std::sync::Once = std::sync::Once::new();

/// Before `fork`: waits for the batch the runtime runs on its flush thread, which the
/// child would not have (see `Runtime::quiesce`).
unsafe extern "C" fn quiesce_before_fork() {
    if let Some(st) = STATE.lock().as_mut() {
        st.rt.quiesce();
    }
}

/// Runs `f` only when the runtime already exists (flush and stats need not start one).
pub fn with_existing<T>(f: impl FnOnce(&mut State) -> Result<T>) -> Option<Result<T>> {
    STATE.lock().as_mut().map(f)
}

fn decode(h: *const hs_array) -> (usize, usize) {
    let v = h as usize;
    ((v & SLOT_MASK).wrapping_sub(1), v >> SLOT_BITS)
}

impl State {
    /// Registers a new handle for `view`, which shares (and keeps alive) its base.
    pub fn new_handle(&mut self, view: View) -> *mut hs_array {
        *self.refs.entry(view.base).or_insert(0) += 1;
        let entry = Entry {
            shape: view.shape.iter().copied().collect(),
            strides: view.strides.iter().copied().collect(),
            view,
        };
        let slot = match self.vacant.pop() {
            Some(s) => s,
            None => {
                self.slots.push(Slot {
                    generation: 1,
                    entry: None,
                });
                self.slots.len() - 1
            }
        };
        let s = &mut self.slots[slot];
        s.entry = Some(entry);
        ((s.generation << SLOT_BITS) | (slot + 1)) as *mut hs_array
    }

    /// A fresh contiguous base that no handle owns yet (callers free or hand it out).
    pub fn new_view(&mut self, dtype: DType, shape: &[usize]) -> View {
        let n: usize = shape.iter().product();
        let base = self.rt.new_base(dtype, n);
        View::contiguous(base.id, dtype, shape)
    }

    /// The entry of a live handle; `what` names the argument in the error message.
    pub fn entry(&self, h: *const hs_array, what: &str) -> Result<&Entry> {
        if h.is_null() {
            return Err(Fail::new(hs_status::HS_ERR_NULL, format!("{what} is NULL")));
        }
        let (slot, generation) = decode(h);
        match self.slots.get(slot) {
            Some(s) if generation == s.generation => s.entry.as_ref().ok_or_else(|| {
                Fail::new(hs_status::HS_ERR_FREED, format!("{what} was already freed"))
            }),
            Some(s) if generation != 0 && generation < s.generation => Err(Fail::new(
                hs_status::HS_ERR_FREED,
                format!("{what} was already freed"),
            )),
            _ => Err(Fail::invalid(format!(
                "{what} is not a hassium array handle"
            ))),
        }
    }

    /// The view of a live handle.
    pub fn view(&self, h: *const hs_array, what: &str) -> Result<View> {
        Ok(self.entry(h, what)?.view.clone())
    }

    /// Drops a handle; when it was the last one of its base, records the base's `FREE`.
    pub fn free_handle(&mut self, h: *const hs_array) -> Result<()> {
        let base = self.entry(h, "the array")?.view.base;
        let (slot, _) = decode(h);
        let s = &mut self.slots[slot];
        s.entry = None;
        s.generation += 1;
        if s.generation <= usize::MAX >> SLOT_BITS {
            self.vacant.push(slot);
        } // else: the slot's generations are used up; retire it rather than reuse a number.
        self.release(base)
    }

    /// Drops one reference to a base, recording `FREE` with the last.
    fn release(&mut self, base: BaseId) -> Result<()> {
        let n = self.refs.get_mut(&base).map(|n| {
            *n -= 1;
            *n
        });
        if n == Some(0) {
            self.refs.remove(&base);
            self.rt.free(base)?;
        }
        Ok(())
    }

    /// Number of live handles (for tests).
    pub fn live_handles(&self) -> usize {
        self.slots.iter().filter(|s| s.entry.is_some()).count()
    }
}
