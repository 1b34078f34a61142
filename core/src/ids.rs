//! Maps and sets keyed by [`BaseId`]: every stage keeps some, on the per-flush hot path.

use crate::BaseId;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, Hasher};

/// A map keyed by base id, hashed by [`BuildIdHasher`].
pub type IdMap<V> = HashMap<BaseId, V, BuildIdHasher>;
/// A set of base ids, hashed by [`BuildIdHasher`].
pub type IdSet = HashSet<BaseId, BuildIdHasher>;

/// Base ids are small distinct integers: a multiplicative hash spreads them well, and
/// SipHash's DoS resistance buys nothing here while costing most of a lookup.
#[derive(Default, Clone, Copy, Debug)]
pub struct BuildIdHasher;

#[derive(Default)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ b as u64).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0 ^ v).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

impl BuildHasher for BuildIdHasher {
    type Hasher = IdHasher;
    fn build_hasher(&self) -> IdHasher {
        IdHasher(0)
    }
}
