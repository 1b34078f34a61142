//! The fuse cache: a loop that records the same operations every iteration (on fresh
//! temporaries) produces batches with the same canonical key, so it pays for fusion once
//! and afterwards only for hashing and a lookup.

use crate::{FuseStats, Fuser, Result};
use hassium_core::IdMap;
use hassium_core::{
    batch_key, BaseId, Batch, Capabilities, Kernel, KernelBases, KernelInstrs, KernelKey, Shape,
};
use rustc_hash::FxHashMap;
use std::time::Instant;
use xxhash_rust::xxh3::xxh3_128;

/// Somewhere partitions outlive the process (the runtime keeps them as files next to the
/// engine's kernel cache), so a program's next run skips fusion as its loops' later
/// iterations do. Keys already name the fuser, its options and the capabilities.
pub trait PartitionStore: Send {
    /// The bytes saved under `key`, if any (they may be damaged: they are checked).
    fn load(&mut self, key: u128) -> Option<Vec<u8>>;
    /// Saves `bytes` under `key`; failing quietly is allowed (the next run fuses again).
    fn save(&mut self, key: u128, bytes: &[u8]);
}

/// Fusions quicker than this are not saved: reading the entry back would cost about as
/// much, and programs that make many small distinct batches would fill the store.
const SAVE_MIN_SECONDS: f64 = 0.0005;

/// Batches of fewer instructions fuse in tens of microseconds, about what looking for
/// their file costs, and are almost never slow enough to be saved: the store is not asked
/// for them (unless every fusion is saved, `save_min_seconds == 0`). A loop whose shapes
/// change every iteration (LU's shrinking slices) misses the cache on every flush.
const LOAD_MIN_INSTRS: usize = 32;

/// Where a base first appears in a batch: instruction `instr`, operand `operand` (0 is
/// the output, `k` is input `k - 1`). Canonical renumbering maps bases by first
/// appearance, so the same place in another batch with the same key holds the base
/// playing the same role there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Slot {
    instr: u32,
    operand: u8,
}

/// A kernel in canonical form: instruction indices (batch-independent) and bases as slots.
#[derive(Clone, Debug)]
struct CanonKernel {
    instrs: Vec<usize>,
    shape: Shape,
    contracted: Vec<Slot>,
    reads: Vec<Slot>,
    writes: Vec<Slot>,
}

/// Partitions by canonical batch key. Entries are only valid for the capabilities they
/// were fused under; when those change the cache starts over.
pub struct FuseCache {
    /// Partitions by batch key, each with the serial number of the fusion that made it.
    map: FxHashMap<KernelKey, (u64, Vec<CanonKernel>)>,
    /// Fusions so far.
    serial: u64,
    caps: Option<Capabilities>,
    capacity: usize,
    stats: FuseStats,
    /// The store, and what distinguishes its keys besides the batch: the fuser and its
    /// options (given with the store), then the capabilities (hashed when they change).
    store: Option<Box<dyn PartitionStore>>,
    store_salt: u128,
    /// Fusions quicker than this are not saved (see [`SAVE_MIN_SECONDS`]).
    save_min_seconds: f64,
    caps_digest: u128,
}

impl Default for FuseCache {
    fn default() -> Self {
        FuseCache::new()
    }
}

/// Entries kept before the cache is cleared: a program that keeps producing new batch
/// shapes must not grow memory without bound, and a loop refills its entry on the next
/// iteration.
pub const DEFAULT_CAPACITY: usize = 4096;

impl FuseCache {
    pub fn new() -> FuseCache {
        FuseCache::with_capacity(DEFAULT_CAPACITY)
    }

    pub fn with_capacity(capacity: usize) -> FuseCache {
        FuseCache {
            map: FxHashMap::default(),
            serial: 0,
            caps: None,
            capacity: capacity.max(1),
            stats: FuseStats::default(),
            store: None,
            store_salt: 0,
            save_min_seconds: SAVE_MIN_SECONDS,
            caps_digest: 0,
        }
    }

    /// Keeps partitions in `store` too; `fuser` names the fuser and its options, since a
    /// partition is only valid for the fuser that made it. Keys also name this build's
    /// fusion sources (`build.rs`), so a changed rule never reads an older build's cuts.
    pub fn set_store(&mut self, store: Box<dyn PartitionStore>, fuser: &str) {
        self.store = Some(store);
        let id = format!("{fuser}\n{}", env!("HASSIUM_FUSER_SOURCES"));
        self.store_salt = xxh3_128(id.as_bytes());
    }

    /// Saves only fusions that took at least `seconds` (0 saves every one).
    pub fn set_save_min_seconds(&mut self, seconds: f64) {
        self.save_min_seconds = seconds;
    }

    fn store_key(&self, key: KernelKey) -> u128 {
        let mut bytes = [0u8; 48];
        bytes[..16].copy_from_slice(&key.0.to_le_bytes());
        bytes[16..32].copy_from_slice(&self.store_salt.to_le_bytes());
        bytes[32..].copy_from_slice(&self.caps_digest.to_le_bytes());
        xxh3_128(&bytes)
    }

    pub fn stats(&self) -> FuseStats {
        self.stats
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    pub fn clear(&mut self) {
        self.map.clear();
    }

    /// The kernels of `batch`: from the cache when a batch with the same canonical key was
    /// fused before (`true`), else from `fuser` (`false`), remembered for next time.
    pub fn get_or_fuse(
        &mut self,
        batch: &Batch,
        caps: &Capabilities,
        fuser: &mut dyn Fuser,
    ) -> Result<(Vec<Kernel>, bool)> {
        let f = self.get_or_fuse_keyed(batch, caps, fuser)?;
        Ok((f.kernels, f.hit))
    }

    /// [`FuseCache::get_or_fuse`], also naming the partition it returns.
    pub fn get_or_fuse_keyed(
        &mut self,
        batch: &Batch,
        caps: &Capabilities,
        fuser: &mut dyn Fuser,
    ) -> Result<Fused> {
        let start = Instant::now();
        if self.caps.as_ref() != Some(caps) {
            self.map.clear();
            self.caps = Some(caps.clone());
            self.caps_digest = xxh3_128(format!("{caps:?}").as_bytes());
        }
        let key = batch_key(batch);
        let cached = (self.map.get(&key)).and_then(|(n, c)| Some((*n, from_canon(batch, c)?)));
        let (kernels, hit, serial, from_store) = match cached {
            Some((serial, kernels)) => (kernels, true, serial, false),
            None => {
                let stored = self.load(key, batch);
                let from_store = matches!(stored, Stored::Sound(..));
                let (canon, kernels) = match stored {
                    Stored::Sound(canon, kernels) => (canon, kernels),
                    Stored::Absent | Stored::Damaged => {
                        let t = Instant::now();
                        let kernels = fuser.fuse(batch, caps)?;
                        let canon = to_canon(batch, &kernels);
                        // A damaged entry is replaced whatever the fusion took.
                        let slow = t.elapsed().as_secs_f64() >= self.save_min_seconds;
                        if slow || matches!(stored, Stored::Damaged) {
                            self.save(key, &canon);
                        }
                        (canon, kernels)
                    }
                };
                if self.map.len() >= self.capacity {
                    self.map.clear();
                }
                self.serial += 1;
                self.map.insert(key, (self.serial, canon));
                (kernels, from_store, self.serial, from_store)
            }
        };
        let s = &mut self.stats;
        s.batches += 1;
        s.instrs_seen += batch.instrs.len() as u64;
        s.kernels += kernels.len() as u64;
        s.contracted += kernels
            .iter()
            .map(|k| k.contracted.len() as u64)
            .sum::<u64>();
        if from_store {
            s.store_hits += 1;
        }
        if hit {
            s.cache_hits += 1;
        } else {
            s.cache_misses += 1;
        }
        s.fuse_seconds += start.elapsed().as_secs_f64();
        Ok(Fused {
            kernels,
            hit,
            from_store,
            key,
            serial,
        })
    }

    /// What the store holds for `batch`.
    fn load(&mut self, key: KernelKey, batch: &Batch) -> Stored {
        let small = batch.instrs.len() < LOAD_MIN_INSTRS && self.save_min_seconds > 0.0;
        if self.store.is_none() || small {
            return Stored::Absent;
        }
        let skey = self.store_key(key);
        let Some(bytes) = self.store.as_mut().and_then(|s| s.load(skey)) else {
            return Stored::Absent;
        };
        let sound = decode(&bytes, skey).and_then(|canon| {
            let kernels = from_canon(batch, &canon)?;
            covers(batch, &kernels).then_some((canon, kernels))
        });
        match sound {
            Some((canon, kernels)) => Stored::Sound(canon, kernels),
            None => {
                tracing::debug!("stored partition {skey:032x} is damaged; fusing again");
                Stored::Damaged
            }
        }
    }

    fn save(&mut self, key: KernelKey, canon: &[CanonKernel]) {
        let skey = self.store_key(key);
        if let Some(store) = self.store.as_mut() {
            store.save(skey, &encode(canon, skey));
        }
    }
}

/// What a [`PartitionStore`] holds for a batch.
enum Stored {
    Absent,
    /// An entry that fails its checksum or does not cut the batch.
    Damaged,
    Sound(Vec<CanonKernel>, Vec<Kernel>),
}

/// Whether `kernels` cut `batch` as a fresh fusion would at least: each kernel non-empty,
/// in program order, with no system instruction, and every other instruction in exactly
/// one kernel. (A stored entry passed its checksum; this guards against a key collision.)
fn covers(batch: &Batch, kernels: &[Kernel]) -> bool {
    let mut seen = vec![false; batch.instrs.len()];
    for k in kernels {
        if k.instrs.is_empty() || k.instrs.windows(2).any(|w| w[0] >= w[1]) {
            return false;
        }
        for &i in k.instrs.iter() {
            // `from_canon` checked every index against the batch.
            if batch.instrs[i].op.is_system() || std::mem::replace(&mut seen[i], true) {
                return false;
            }
        }
    }
    (batch.instrs.iter().zip(&seen)).all(|(i, &s)| s || i.op.is_system())
}

/// First bytes of a stored partition; the digit is the format's version.
const MAGIC: &[u8; 8] = b"HSFUSE1\n";

/// A partition as bytes: the magic, the store key, the xxh3-128 of the body, then the
/// body (little-endian: kernel count; per kernel its instructions, shape, and contracted,
/// read and written slots).
fn encode(canon: &[CanonKernel], skey: u128) -> Vec<u8> {
    let mut body = Vec::new();
    let mut put = |v: u64| body.extend_from_slice(&v.to_le_bytes());
    put(canon.len() as u64);
    for k in canon {
        put(k.instrs.len() as u64);
        k.instrs.iter().for_each(|&i| put(i as u64));
        put(k.shape.len() as u64);
        k.shape.iter().for_each(|&d| put(d as u64));
        for slots in [&k.contracted, &k.reads, &k.writes] {
            put(slots.len() as u64);
            slots
                .iter()
                .for_each(|s| put(u64::from(s.instr) << 8 | u64::from(s.operand)));
        }
    }
    let mut out = Vec::with_capacity(40 + body.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&skey.to_le_bytes());
    out.extend_from_slice(&xxh3_128(&body).to_le_bytes());
    out.extend_from_slice(&body);
    out
}

/// The partition in `bytes`, or `None` when they are not one saved under `skey` intact.
fn decode(bytes: &[u8], skey: u128) -> Option<Vec<CanonKernel>> {
    let body = bytes.strip_prefix(MAGIC.as_slice())?;
    let (key, body) = body.split_at_checked(16)?;
    let (sum, body) = body.split_at_checked(16)?;
    if key != skey.to_le_bytes() || sum != xxh3_128(body).to_le_bytes() {
        return None;
    }
    let mut words = body
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")));
    // Counts are bounded by the bytes left, so a bad count cannot allocate wildly.
    let limit = body.len() / 8;
    let count = |words: &mut dyn Iterator<Item = u64>| {
        let n = usize::try_from(words.next()?).ok()?;
        (n <= limit).then_some(n)
    };
    let n = count(&mut words)?;
    let mut canon = Vec::with_capacity(n);
    for _ in 0..n {
        let m = count(&mut words)?;
        let instrs = (0..m)
            .map(|_| usize::try_from(words.next()?).ok())
            .collect::<Option<Vec<_>>>()?;
        let d = count(&mut words)?;
        let shape = (0..d)
            .map(|_| usize::try_from(words.next()?).ok())
            .collect::<Option<Shape>>()?;
        let mut lists = [Vec::new(), Vec::new(), Vec::new()];
        for list in &mut lists {
            let m = count(&mut words)?;
            for _ in 0..m {
                let w = words.next()?;
                let instr = u32::try_from(w >> 8).ok()?;
                list.push(Slot {
                    instr,
                    operand: (w & 0xff) as u8,
                });
            }
        }
        let [contracted, reads, writes] = lists;
        canon.push(CanonKernel {
            instrs,
            shape,
            contracted,
            reads,
            writes,
        });
    }
    words.next().is_none().then_some(canon)
}

/// What [`FuseCache::get_or_fuse_keyed`] returns.
pub struct Fused {
    pub kernels: Vec<Kernel>,
    /// Whether the partition came from the cache (from the store included).
    pub hit: bool,
    /// Whether it came from the [`PartitionStore`] (a previous process fused it).
    pub from_store: bool,
    /// The batch's canonical key.
    pub key: KernelKey,
    /// Which fusion made the partition (one cache counts them). Two batches with equal
    /// `key` and `serial` have one structure and were cut into the same kernels.
    pub serial: u64,
}

fn to_canon(batch: &Batch, kernels: &[Kernel]) -> Vec<CanonKernel> {
    let mut first: IdMap<Slot> = IdMap::default();
    for (k, i) in batch.instrs.iter().enumerate() {
        let bases = std::iter::once(Some(i.out.base)).chain(i.ins.iter().map(|o| o.base()));
        for (operand, b) in bases.enumerate() {
            if let Some(b) = b {
                first.entry(b).or_insert(Slot {
                    instr: k as u32,
                    operand: operand as u8,
                });
            }
        }
    }
    // Every base a kernel names is an operand of one of its instructions.
    let slots = |bs: &[BaseId]| bs.iter().filter_map(|b| first.get(b).copied()).collect();
    kernels
        .iter()
        .map(|k| CanonKernel {
            instrs: k.instrs.to_vec(),
            shape: k.shape.clone(),
            contracted: slots(&k.contracted),
            reads: slots(&k.reads),
            writes: slots(&k.writes),
        })
        .collect()
}

/// Translates a cached partition to `batch`'s bases; `None` if the entry does not fit
/// (a key collision, in practice never).
fn from_canon(batch: &Batch, canon: &[CanonKernel]) -> Option<Vec<Kernel>> {
    let base = |s: &Slot| -> Option<BaseId> {
        let i = batch.instrs.get(s.instr as usize)?;
        match s.operand {
            0 => Some(i.out.base),
            k => i.ins.get(k as usize - 1)?.base(),
        }
    };
    let bases = |ss: &[Slot]| -> Option<KernelBases> {
        let mut v = ss.iter().map(base).collect::<Option<KernelBases>>()?;
        v.sort_unstable();
        Some(v)
    };
    canon
        .iter()
        .map(|c| {
            if c.instrs.iter().any(|&i| i >= batch.instrs.len()) {
                return None;
            }
            Some(Kernel {
                instrs: KernelInstrs::from_slice(&c.instrs),
                shape: c.shape.clone(),
                contracted: bases(&c.contracted)?,
                reads: bases(&c.reads)?,
                writes: bases(&c.writes)?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recorder::Recorder;
    use hassium_core::{DType, Opcode, Scalar};

    /// `y = sqrt(x) * 2` with `y` synced: two instructions, one kernel.
    fn batch(n: usize) -> Batch {
        let mut r = Recorder::new();
        let x = r.array(DType::Float64, &[n]);
        let t = r.unary(Opcode::Sqrt, &x);
        let y = r.binary(Opcode::Multiply, t.clone(), Scalar::Float64(2.0));
        r.free(&t);
        r.sync(&y);
        r.finish()
    }

    fn greedy(b: &Batch) -> Vec<Kernel> {
        let mut fuser = crate::create("greedy", &Default::default()).unwrap();
        fuser.fuse(b, &Capabilities::all()).unwrap()
    }

    #[test]
    fn a_partition_survives_its_bytes_and_nothing_else_decodes() {
        let b = batch(64);
        let kernels = greedy(&b);
        let canon = to_canon(&b, &kernels);
        let bytes = encode(&canon, 7);
        let back = decode(&bytes, 7).unwrap();
        assert_eq!(from_canon(&b, &back).unwrap(), kernels);
        assert!(decode(&bytes, 8).is_none(), "saved under another key");
        for cut in [0, 8, 24, 40, bytes.len() - 1] {
            assert!(decode(&bytes[..cut], 7).is_none(), "cut at {cut}");
        }
        let mut flipped = bytes.clone();
        flipped[45] ^= 0x10;
        assert!(decode(&flipped, 7).is_none());
    }

    #[test]
    fn a_partition_that_does_not_cut_the_batch_is_refused() {
        let b = batch(64);
        let fused = greedy(&b);
        assert!(covers(&b, &fused));
        let mut missing = fused.clone();
        missing[0].instrs = KernelInstrs::from_slice(&missing[0].instrs[..1]);
        assert!(!covers(&b, &missing), "an instruction in no kernel");
        let mut twice = fused.clone();
        twice.push(twice[0].clone());
        assert!(!covers(&b, &twice), "an instruction in two kernels");
        let mut backwards = fused.clone();
        backwards[0].instrs = KernelInstrs::from_slice(&[1, 0]);
        assert!(!covers(&b, &backwards), "out of program order");
        let free = b.instrs.iter().position(|i| i.op.is_system()).unwrap();
        let mut system = fused;
        system.push(system[0].clone());
        system[1].instrs = KernelInstrs::from_slice(&[free]);
        system[0].instrs = KernelInstrs::from_slice(&[0, 1]);
        assert!(!covers(&b, &system), "a free inside a kernel");
    }
}
