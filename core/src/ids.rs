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

/// Sorts `ids` and removes repeats, for the lists of bases a batch names (thousands of
/// mentions, each base several times).
///
/// Ids are handed out in increasing order and a batch mostly names bases made since the
/// previous flush, so most mentions fall in a dense range just below the largest: those
/// are marked in a bitmap over that range and read back in order, and only the few older
/// ones are sorted. Linear in the mentions where a comparison sort is not.
pub fn sort_dedup(ids: &mut Vec<BaseId>) {
    let Some(max) = ids.iter().map(|b| b.0).max() else {
        return;
    };
    // The range covered by the bitmap: a few bits per mention, so the bitmap costs no
    // more to scan than the mentions cost to mark.
    let span = (4 * ids.len() as u64).max(64);
    let lo = max.saturating_sub(span - 1);
    let mut bits = vec![0u64; ((max - lo) / 64 + 1) as usize];
    ids.retain(|b| {
        if b.0 < lo {
            return true;
        }
        let i = b.0 - lo;
        bits[(i / 64) as usize] |= 1 << (i % 64);
        false
    });
    ids.sort_unstable();
    ids.dedup();
    for (w, &word) in bits.iter().enumerate() {
        let mut word = word;
        while word != 0 {
            let bit = word.trailing_zeros() as u64;
            ids.push(BaseId(lo + w as u64 * 64 + bit));
            word &= word - 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(ids: &[u64]) -> Vec<BaseId> {
        let mut v: Vec<BaseId> = ids.iter().map(|&i| BaseId(i)).collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    #[test]
    fn sort_dedup_matches_a_plain_sort_on_recent_and_old_ids() {
        let cases: Vec<Vec<u64>> = vec![
            vec![],
            vec![7],
            vec![3, 3, 3],
            vec![u64::MAX, 0, u64::MAX - 1, 5],
            (0..1000).map(|i| (i * 7919) % 613).collect(),
            // A loop's batch: a few long-lived bases and many recent ones, out of order.
            (0..3000)
                .map(|i| {
                    if i % 10 == 0 {
                        2 + i % 3
                    } else {
                        100_000 + (i * 31) % 2000
                    }
                })
                .collect(),
        ];
        for ids in cases {
            let mut got: Vec<BaseId> = ids.iter().map(|&i| BaseId(i)).collect();
            sort_dedup(&mut got);
            assert_eq!(got, reference(&ids), "ids {ids:?}");
        }
    }
}
