//! Canonical form and 128-bit keys of batches and kernels.
//!
//! Bases are renumbered by first appearance and scalar values are left out (only their
//! dtypes count; the values travel as arguments), so a loop that records the same
//! operations each iteration — on fresh temporaries, with a changing time step — hashes
//! to the same key every iteration.

use crate::{BaseId, Batch, IdMap, Instr, Kernel, Operand, Scalar, View};
use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::xxh3_128;

/// A 128-bit structural hash (xxh3-128) of a canonical batch or kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct KernelKey(pub u128);

impl std::fmt::Display for KernelKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:032x}", self.0)
    }
}

/// What a key specialises on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum KeyMode {
    /// Shapes, strides and offsets are part of the key (code with them baked in).
    Fixed,
    /// Only ranks, dtypes and the aliasing structure count (code that takes them as
    /// arguments and is reused across sizes).
    Dynamic,
}

/// Collects the canonical form as bytes and hashes them once at the end: one xxh3 call
/// over a buffer is several times faster than streaming many 1-8 byte updates, and a
/// fuse-cache hit is mostly this hashing.
struct Canon {
    h: Buf,
    ids: Ids,
    /// Where in the batch's bases the next fresh base is looked for first.
    next_base: usize,
    mode: KeyMode,
}

/// Canonical numbers of bases by first appearance. A loop body names consecutive fresh
/// ids, so a direct-mapped table indexed by the id's low bits answers almost every lookup
/// with one load and compare; a collision goes to a hash map. Slots carry the number of
/// the key that filled them, so starting a new key clears nothing.
struct Ids {
    next: u32,
    stamp: u32,
    slots: Vec<IdSlot>,
    overflow: IdMap<u32>,
}

const ID_SLOTS: usize = 1024;

#[derive(Clone, Copy, Default)]
struct IdSlot {
    id: u64,
    idx: u32,
    stamp: u32,
}

impl Ids {
    fn new() -> Ids {
        Ids {
            next: 0,
            stamp: 1,
            slots: vec![IdSlot::default(); ID_SLOTS],
            overflow: IdMap::default(),
        }
    }

    /// Forgets every number (for the next key).
    fn reset(&mut self) {
        self.next = 0;
        self.overflow.clear();
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            // Wrapped: old stamps could look current, so clear them once.
            self.slots.fill(IdSlot::default());
            self.stamp = 1;
        }
    }

    /// The canonical number of `id`, and whether this is its first appearance.
    #[inline]
    fn number(&mut self, id: BaseId) -> (u32, bool) {
        let next = self.next;
        let slot = &mut self.slots[id.0 as usize % ID_SLOTS];
        if slot.stamp != self.stamp {
            *slot = IdSlot {
                id: id.0,
                idx: next,
                stamp: self.stamp,
            };
            self.next += 1;
            return (next, true);
        }
        if slot.id == id.0 {
            return (slot.idx, false);
        }
        let mut fresh = false;
        let idx = *self.overflow.entry(id).or_insert_with(|| {
            fresh = true;
            next
        });
        if fresh {
            self.next += 1;
        }
        (idx, fresh)
    }

    /// The number of a base seen already.
    fn get(&self, id: BaseId) -> Option<u32> {
        let slot = self.slots[id.0 as usize % ID_SLOTS];
        if slot.stamp == self.stamp && slot.id == id.0 {
            Some(slot.idx)
        } else {
            self.overflow.get(&id).copied()
        }
    }
}

struct Buf(Vec<u8>);

impl Buf {
    #[inline]
    fn update(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
    }
}

impl Canon {
    fn new(mode: KeyMode) -> Canon {
        // Reuse this thread's buffers from the previous key: a loop hashes a batch per
        // iteration, and allocating (and growing) them each time is a good part of a hit.
        let (mut bytes, mut ids) = SCRATCH
            .with(|s| s.take())
            .unwrap_or_else(|| (Vec::with_capacity(4096), Ids::new()));
        bytes.clear();
        ids.reset();
        let mut h = Buf(bytes);
        h.update(&[mode as u8, 2]); // mode, canonical-form version
        Canon {
            h,
            ids,
            next_base: 0,
            mode,
        }
    }

    fn base(&mut self, id: BaseId, batch: &Batch) {
        let (idx, fresh) = self.ids.number(id);
        self.h.update(&idx.to_le_bytes());
        if fresh && self.mode == KeyMode::Fixed {
            // Size and dtype: with the views, everything `verify` checks, so an engine
            // may skip verifying a kernel whose fixed key it verified before.
            let (n, dtype) = (batch.bases)
                .get_after(id, &mut self.next_base)
                .map_or((0, 255), |b| (b.nelem, b.dtype as u8));
            self.h.update(&(n as u64).to_le_bytes());
            self.h.update(&[dtype]);
        }
    }

    fn view(&mut self, v: &View, batch: &Batch) {
        self.base(v.base, batch);
        self.h.update(&[v.dtype as u8, v.ndim() as u8]);
        if self.mode == KeyMode::Fixed {
            self.h.update(&(v.offset as i64).to_le_bytes());
            for (&n, &s) in v.shape.iter().zip(&v.strides) {
                self.h.update(&(n as u64).to_le_bytes());
                self.h.update(&(s as i64).to_le_bytes());
            }
        } else {
            // Dynamic code still depends on which dimensions broadcast.
            for &s in &v.strides {
                self.h.update(&[(s == 0) as u8]);
            }
        }
    }

    fn instr(&mut self, i: &Instr, batch: &Batch) {
        self.h.update(&(i.op as u16).to_le_bytes());
        if i.op == crate::Opcode::Free {
            // A free names a whole base; its view adds nothing. Loop bodies are about
            // half frees, so this is a good part of a fuse-cache hit.
            self.base(i.out.base, batch);
            return;
        }
        self.h
            .update(&[i.axis.map_or(255, |a| a as u8), i.ins.len() as u8]);
        if let Some(m) = &i.method {
            self.h.update(m.as_bytes());
            self.h.update(&[0]);
        }
        self.view(&i.out, batch);
        for op in &i.ins {
            match op {
                Operand::View(v) => {
                    self.h.update(b"v");
                    self.view(v, batch);
                }
                Operand::Scalar(s) => self.h.update(&[b's', s.dtype() as u8]),
            }
        }
    }

    fn finish(self) -> KernelKey {
        let key = KernelKey(xxh3_128(&self.h.0));
        SCRATCH.with(|s| s.set(Some((self.h.0, self.ids))));
        key
    }
}

type Scratch = (Vec<u8>, Ids);

thread_local! {
    static SCRATCH: std::cell::Cell<Option<Scratch>> = const { std::cell::Cell::new(None) };
}

/// The key of a whole batch (fixed mode): the fuse cache's key.
pub fn batch_key(batch: &Batch) -> KernelKey {
    let mut c = Canon::new(KeyMode::Fixed);
    for i in &batch.instrs {
        c.instr(i, batch);
    }
    c.h.update(b"sync");
    for &b in &batch.sync {
        c.base(b, batch);
    }
    c.finish()
}

/// The key of one kernel of a batch: its instructions in canonical form plus which of its
/// bases are contracted. Two kernels with equal keys can share compiled code.
pub fn kernel_key(batch: &Batch, kernel: &Kernel, mode: KeyMode) -> KernelKey {
    let mut c = Canon::new(mode);
    for &k in &kernel.instrs {
        c.instr(&batch.instrs[k], batch);
    }
    c.h.update(b"contracted");
    let mut contracted: Vec<u32> = kernel
        .contracted
        .iter()
        .filter_map(|&b| c.ids.get(b))
        .collect();
    contracted.sort_unstable();
    for x in contracted {
        c.h.update(&x.to_le_bytes());
    }
    c.finish()
}

/// The scalar constants of the given instructions in canonical (slot) order.
pub fn scalars_of(batch: &Batch, instrs: &[usize]) -> Vec<Scalar> {
    instrs
        .iter()
        .flat_map(|&k| {
            batch.instrs[k]
                .ins
                .iter()
                .filter_map(Operand::as_scalar)
                .copied()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Base, DType, Opcode};

    /// One iteration of `x = x * dt + 1` on fresh temporaries starting at `first_id`.
    fn iteration(first_id: u64, dt: f64, dtype: DType) -> Batch {
        let mut b = Batch::default();
        let x = BaseId(1);
        let t = BaseId(first_id);
        for id in [x, t] {
            b.bases.insert(
                id,
                Base {
                    id,
                    dtype,
                    nelem: 100,
                },
            );
        }
        let vx = View::contiguous(x, dtype, &[100]);
        let vt = View::contiguous(t, dtype, &[100]);
        let s = |v: f64| Operand::Scalar(Scalar::Float64(v).cast(dtype));
        b.instrs.push(Instr::new(
            Opcode::Multiply,
            vt.clone(),
            [vx.clone().into(), s(dt)],
        ));
        b.instrs
            .push(Instr::new(Opcode::Add, vx, [vt.into(), s(1.0)]));
        b.instrs
            .push(Instr::system(Opcode::Free, &b.bases[&t].clone()));
        b
    }

    #[test]
    fn same_loop_body_gives_the_same_key() {
        assert_eq!(
            batch_key(&iteration(10, 0.1, DType::Float64)),
            batch_key(&iteration(20, 0.2, DType::Float64))
        );
    }

    #[test]
    fn different_dtype_or_opcode_gives_a_different_key() {
        let a = iteration(10, 0.1, DType::Float64);
        assert_ne!(
            batch_key(&a),
            batch_key(&iteration(10, 0.1, DType::Float32))
        );
        let mut b = a.clone();
        b.instrs[1].op = Opcode::Subtract;
        assert_ne!(batch_key(&a), batch_key(&b));
    }

    #[test]
    fn dynamic_keys_ignore_sizes() {
        let a = iteration(10, 0.1, DType::Float64);
        let mut b = a.clone();
        for i in &mut b.instrs {
            i.out.shape[0] = 50;
            for o in &mut i.ins {
                if let Operand::View(v) = o {
                    v.shape[0] = 50;
                }
            }
        }
        let k = Kernel {
            instrs: crate::KernelInstrs::from_slice(&[0, 1]),
            ..Default::default()
        };
        assert_eq!(
            kernel_key(&a, &k, KeyMode::Dynamic),
            kernel_key(&b, &k, KeyMode::Dynamic)
        );
        assert_ne!(
            kernel_key(&a, &k, KeyMode::Fixed),
            kernel_key(&b, &k, KeyMode::Fixed)
        );
    }

    /// `x = a + b; y = x * a; free(x)` on the given four bases, all of 8 float64 values.
    fn three_bases(ids: [u64; 4]) -> Batch {
        let mut b = Batch::default();
        for &id in &ids {
            b.bases.insert(
                BaseId(id),
                Base {
                    id: BaseId(id),
                    dtype: DType::Float64,
                    nelem: 8,
                },
            );
        }
        let v = |k: usize| View::contiguous(BaseId(ids[k]), DType::Float64, &[8]);
        b.instrs
            .push(Instr::new(Opcode::Add, v(2), [v(0).into(), v(1).into()]));
        b.instrs.push(Instr::new(
            Opcode::Multiply,
            v(3),
            [v(2).into(), v(0).into()],
        ));
        b.instrs.push(Instr::system(
            Opcode::Free,
            &b.bases[&BaseId(ids[2])].clone(),
        ));
        b
    }

    #[test]
    fn renumbering_is_exact_when_ids_share_a_table_slot() {
        // 1, 1025, 2049 and 3073 fall into the same slot of the direct-mapped id table.
        let spread = three_bases([1, 1025, 2049, 3073]);
        assert_eq!(batch_key(&spread), batch_key(&three_bases([7, 8, 9, 10])));
        // Aliasing must still count: reading a base twice is another batch.
        assert_ne!(
            batch_key(&spread),
            batch_key(&three_bases([1, 1025, 2049, 1025]))
        );
        assert_ne!(
            batch_key(&spread),
            batch_key(&three_bases([1, 1, 2049, 3073]))
        );
    }

    #[test]
    fn which_base_a_free_releases_is_part_of_the_key() {
        let a = three_bases([1, 2, 3, 4]);
        let mut b = a.clone();
        b.instrs[2] = Instr::system(Opcode::Free, &b.bases[&BaseId(4)].clone());
        assert_ne!(batch_key(&a), batch_key(&b));
    }
}
