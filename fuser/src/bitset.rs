//! A bit set: the fusers keep fuse-preventing sets, block memberships and block
//! reachability as bit sets so that a legality check is a few word operations. A set grows
//! as bits are inserted, so the many sets that stay empty cost nothing.

#[derive(Clone, Debug, Default)]
pub(crate) struct BitSet {
    words: Vec<u64>,
}

impl BitSet {
    pub fn new(n: usize) -> BitSet {
        BitSet {
            words: vec![0; n.div_ceil(64)],
        }
    }

    pub fn insert(&mut self, i: usize) {
        if i / 64 >= self.words.len() {
            self.words.resize(i / 64 + 1, 0);
        }
        self.words[i / 64] |= 1 << (i % 64);
    }

    pub fn remove(&mut self, i: usize) {
        if let Some(w) = self.words.get_mut(i / 64) {
            *w &= !(1 << (i % 64));
        }
    }

    pub fn contains(&self, i: usize) -> bool {
        self.words
            .get(i / 64)
            .is_some_and(|w| w & (1 << (i % 64)) != 0)
    }

    pub fn union_with(&mut self, other: &BitSet) {
        if other.words.len() > self.words.len() {
            self.words.resize(other.words.len(), 0);
        }
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a |= b;
        }
    }

    pub fn intersects(&self, other: &BitSet) -> bool {
        self.words.iter().zip(&other.words).any(|(a, b)| a & b != 0)
    }

    pub fn clear(&mut self) {
        self.words.iter_mut().for_each(|w| *w = 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_operations_work_across_word_boundaries() {
        let mut a = BitSet::new(130);
        a.insert(0);
        a.insert(64);
        a.insert(129);
        assert!(a.contains(64) && !a.contains(63));
        let mut b = BitSet::new(130);
        b.insert(129);
        assert!(a.intersects(&b));
        a.remove(129);
        assert!(!a.intersects(&b));
        a.union_with(&b);
        assert!(a.contains(129));
    }

    #[test]
    fn an_empty_set_grows_as_bits_arrive() {
        let mut a = BitSet::default();
        assert!(!a.contains(1000));
        a.remove(1000);
        a.insert(1000);
        assert!(a.contains(1000) && !a.contains(999));
        let mut b = BitSet::new(10);
        assert!(!b.intersects(&a));
        b.union_with(&a);
        assert!(b.contains(1000) && b.intersects(&a));
    }
}
