//! Selections: `x[m]` for a lazy boolean mask, kept as the whole arrays it selects from
//! until something needs its shape.
//!
//! `x[m]`'s shape is the mask's count, which only a flush can give. A loop that updates
//! through a mask (`z[m] = z[m] ** 2 + c[m]`, `v[m] *= -d`) would flush once per
//! selection and never fuse one iteration with the next. So `x[m]` is first a
//! [`Selection`]: the pair (`whole`, `mask`) whose compaction `whole[mask]` it stands for.
//! Elementwise operators on selections of one mask, and with scalars, apply to the whole
//! arrays and give selections again (`array/selection.rs`): at every element the mask
//! selects they compute what the compacted arrays would, and the others compute values
//! nobody reads, which cannot fail (the opcodes allowed cannot fail when run, and Hassium
//! raises no floating-point warnings). Assigning a selection through its own mask is
//! `where(mask, whole, x)`. Its shape reads the mask's count alone, and a sum, product,
//! `any` or `all` over its first axis reduces `where(mask, whole, identity)`. Anything
//! else compacts it first, with the count read once (`PyNdArray::arr`), and from then on
//! it is an ordinary array.
//!
//! A selection reads `whole` and `mask` later than NumPy would, so it must see them as
//! they were when it was taken. Before an instruction writes a base that a live
//! selection reads, [`protect`] (called for every instruction the bridge records) gives
//! that selection a copy, recorded just before the write; selections that shared a view
//! share its copy, so they still pair by mask. A base whose memory the host may write
//! (an exported buffer) is never selected lazily, and one exported later is copied and
//! computed at once. The bases live selections read are counted in [`WATCHED`], behind a
//! 64-bit filter: an instruction writing a base no selection reads costs one atomic load
//! (or, when the filter's bit is set, one lookup), however many selections are alive.

use crate::ops;
use crate::rt::{Arr, BaseOwner};
use hassium_core::IdMap;
use hassium_core::{BaseId, Instr, Opcode, View};
use hassium_vem::Runtime;
use parking_lot::Mutex;
use pyo3::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

/// What a selection stands for: `whole[mask]`, the mask over `whole`'s leading
/// dimensions.
#[derive(Clone)]
pub struct Parts {
    pub whole: Arr,
    pub mask: Arr,
}

/// A boolean-mask selection not yet compacted (see the module docs). Once compacted it
/// holds nothing, and [`protect`] passes it by.
pub struct Selection {
    parts: Mutex<Option<Parts>>,
}

impl Selection {
    /// The selection `whole[mask]`, watched by [`protect`] while it lives.
    pub fn new(whole: Arr, mask: Arr) -> Arc<Selection> {
        watch(whole.view.base);
        watch(mask.view.base);
        let sel = Arc::new(Selection {
            parts: Mutex::new(Some(Parts { whole, mask })),
        });
        let mut live = LIVE.lock();
        prune(&mut live);
        live.push(Arc::downgrade(&sel));
        sel
    }

    /// What the selection stands for; None once compacted.
    pub fn parts(&self) -> Option<Parts> {
        self.parts.lock().clone()
    }

    /// Replaces the whole array (an in-place operator on the selection computed anew).
    pub fn set_whole(&self, whole: Arr) {
        if let Some(p) = self.parts.lock().as_mut() {
            watch(whole.view.base);
            unwatch(p.whole.view.base);
            p.whole = whole;
        }
    }

    /// The compacted array `whole[mask]`: one count read back, then the compaction. The
    /// selection lets go of its arrays afterwards; the caller keeps the result.
    pub fn compact(&self) -> PyResult<Arr> {
        let p = self.parts().ok_or_else(|| {
            pyo3::exceptions::PyRuntimeError::new_err(
                "hassium: internal error: a selection compacted twice",
            )
        })?;
        let a = Python::with_gil(|py| ops::compress(py, &p.whole, &p.mask))?;
        if let Some(q) = self.parts.lock().take() {
            unwatch(q.whole.view.base);
            unwatch(q.mask.view.base);
        }
        prune(&mut LIVE.lock());
        Ok(a)
    }
}

impl Drop for Selection {
    fn drop(&mut self) {
        if let Some(p) = self.parts.get_mut().take() {
            unwatch(p.whole.view.base);
            unwatch(p.mask.view.base);
        }
    }
}

/// The selections that may still be alive.
static LIVE: Mutex<Vec<Weak<Selection>>> = Mutex::new(Vec::new());

/// How many uncompacted selections read each base (as `whole` or `mask`).
static WATCHED: Mutex<Option<IdMap<u32>>> = Mutex::new(None);

/// Bit `id % 64` is set for every base in [`WATCHED`].
static FILTER: AtomicU64 = AtomicU64::new(0);

fn filter_bit(id: BaseId) -> u64 {
    1 << (id.0 % 64)
}

fn watch(id: BaseId) {
    let mut w = WATCHED.lock();
    *w.get_or_insert_with(IdMap::default).entry(id).or_insert(0) += 1;
    FILTER.fetch_or(filter_bit(id), Ordering::AcqRel);
}

fn unwatch(id: BaseId) {
    let mut w = WATCHED.lock();
    let Some(map) = w.as_mut() else { return };
    if let Some(n) = map.get_mut(&id) {
        *n -= 1;
        if *n == 0 {
            map.remove(&id);
            let bits = map.keys().fold(0, |b, &k| b | filter_bit(k));
            FILTER.store(bits, Ordering::Release);
        }
    }
}

/// Drops the entries of selections dropped or compacted.
fn prune(live: &mut Vec<Weak<Selection>>) {
    live.retain(|w| w.upgrade().is_some_and(|s| s.parts.lock().is_some()));
}

/// Whether a live selection reads base `id` (checked before every recorded
/// instruction): the filter first, then, when its bit is set, the count itself.
#[inline]
pub fn watched(id: BaseId) -> bool {
    FILTER.load(Ordering::Acquire) & filter_bit(id) != 0
        && WATCHED.lock().as_ref().is_some_and(|m| m.contains_key(&id))
}

/// Before `id` is written (by the next instruction, or by the host when `computed`):
/// every live selection that reads a view of `id` reads a copy of it from now on. With
/// `computed` the copies are computed at once, since the host's writes do not wait for
/// the queue.
pub fn protect(rt: &mut Runtime, id: BaseId, computed: bool) -> hassium_vem::Result<()> {
    let mut live = LIVE.lock();
    prune(&mut live);
    // One copy per view, so that selections that shared a mask still share one.
    let mut copies: Vec<(View, Arr)> = Vec::new();
    for sel in live.iter().filter_map(Weak::upgrade) {
        let mut parts = sel.parts.lock();
        let Some(Parts { whole, mask }) = parts.as_mut() else {
            continue;
        };
        for arr in [whole, mask] {
            if arr.view.base != id {
                continue;
            }
            if let Some((_, c)) = copies.iter().find(|(v, _)| *v == arr.view) {
                watch(c.view.base);
                unwatch(arr.view.base);
                *arr = c.clone();
                continue;
            }
            let base = rt.new_base(arr.dtype(), arr.view.nelem());
            let copy = Arr {
                view: View::contiguous(base.id, arr.dtype(), &arr.view.shape),
                owner: Arc::new(BaseOwner { id: base.id }),
                writeable: true,
            };
            rt.record(Instr::new(
                Opcode::Identity,
                copy.view.clone(),
                [arr.view.clone().into()],
            ))?;
            if computed {
                rt.sync(base.id)?;
            }
            copies.push((arr.view.clone(), copy.clone()));
            watch(copy.view.base);
            unwatch(arr.view.base);
            // The old array may be the base's last owner: its free is deferred while the
            // runtime is held (`BaseOwner`'s drop), after this copy was recorded.
            *arr = copy;
        }
    }
    Ok(())
}
