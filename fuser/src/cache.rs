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
        }
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
        }
        let key = batch_key(batch);
        let cached = (self.map.get(&key)).and_then(|(n, c)| Some((*n, from_canon(batch, c)?)));
        let (kernels, hit, serial) = match cached {
            Some((serial, kernels)) => (kernels, true, serial),
            None => {
                let kernels = fuser.fuse(batch, caps)?;
                if self.map.len() >= self.capacity {
                    self.map.clear();
                }
                self.serial += 1;
                self.map
                    .insert(key, (self.serial, to_canon(batch, &kernels)));
                (kernels, false, self.serial)
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
        if hit {
            s.cache_hits += 1;
        } else {
            s.cache_misses += 1;
        }
        s.fuse_seconds += start.elapsed().as_secs_f64();
        Ok(Fused {
            kernels,
            hit,
            key,
            serial,
        })
    }
}

/// What [`FuseCache::get_or_fuse_keyed`] returns.
pub struct Fused {
    pub kernels: Vec<Kernel>,
    /// Whether the partition came from the cache.
    pub hit: bool,
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
