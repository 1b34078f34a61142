use crate::{DType, Instr, View};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;

/// Identifies a base buffer for the life of a runtime; never reused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct BaseId(pub u64);

/// A contiguous 1-D buffer of `nelem` elements; its memory is allocated on first write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Base {
    pub id: BaseId,
    pub dtype: DType,
    pub nelem: usize,
}

impl Base {
    /// The contiguous 1-D view spanning the whole base.
    pub fn full_view(&self) -> View {
        View::contiguous(self.id, self.dtype, &[self.nelem])
    }
    pub fn nbytes(&self) -> usize {
        self.nelem * self.dtype.size()
    }
}

/// The bases of a batch, by id: a vector sorted by id. A flush builds it from ids it has
/// sorted already and a template rebinds it every replay, so one allocation and a binary
/// search serve better here than a tree's nodes. Reads like a `BTreeMap<BaseId, Base>`
/// (and serialises as one); `get_mut` must not change a base's id.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Bases(Vec<Base>);

impl Bases {
    /// From bases sorted by id with no id twice (checked in debug builds).
    pub fn from_sorted(bases: Vec<Base>) -> Bases {
        debug_assert!(bases.windows(2).all(|w| w[0].id < w[1].id));
        Bases(bases)
    }

    fn find(&self, id: BaseId) -> std::result::Result<usize, usize> {
        self.0.binary_search_by_key(&id, |b| b.id)
    }

    pub fn get(&self, id: &BaseId) -> Option<&Base> {
        self.find(*id).ok().map(|k| &self.0[k])
    }

    /// [`Bases::get`] for a walk that meets bases mostly in id order (fresh temporaries
    /// of a loop body): tries the base at `*hint` first, then searches, and leaves
    /// `*hint` just past the base found.
    #[inline]
    pub fn get_after(&self, id: BaseId, hint: &mut usize) -> Option<&Base> {
        let k = match self.0.get(*hint) {
            Some(b) if b.id == id => *hint,
            _ => self.find(id).ok()?,
        };
        *hint = k + 1;
        Some(&self.0[k])
    }

    pub fn get_mut(&mut self, id: &BaseId) -> Option<&mut Base> {
        self.find(*id).ok().map(|k| &mut self.0[k])
    }

    pub fn contains_key(&self, id: &BaseId) -> bool {
        self.find(*id).is_ok()
    }

    /// Adds or replaces the base `id` (which must be `base.id`); the old one if replaced.
    pub fn insert(&mut self, id: BaseId, base: Base) -> Option<Base> {
        debug_assert_eq!(id, base.id);
        match self.find(id) {
            Ok(k) => Some(std::mem::replace(&mut self.0[k], base)),
            Err(k) => {
                self.0.insert(k, base);
                None
            }
        }
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `(id, base)` in id order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&BaseId, &Base)> + ExactSizeIterator {
        self.0.iter().map(|b| (&b.id, b))
    }

    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &BaseId> + ExactSizeIterator {
        self.0.iter().map(|b| &b.id)
    }

    pub fn values(&self) -> std::slice::Iter<'_, Base> {
        self.0.iter()
    }
}

impl std::ops::Index<&BaseId> for Bases {
    type Output = Base;
    fn index(&self, id: &BaseId) -> &Base {
        self.get(id)
            .unwrap_or_else(|| panic!("base {} is not in the batch", id.0))
    }
}

/// Collected in id order; where an id comes twice the later base wins, as with a map.
impl FromIterator<(BaseId, Base)> for Bases {
    fn from_iter<I: IntoIterator<Item = (BaseId, Base)>>(iter: I) -> Bases {
        let mut v: Vec<(usize, Base)> = iter
            .into_iter()
            .map(|(id, b)| {
                debug_assert_eq!(id, b.id);
                b
            })
            .enumerate()
            .collect();
        // Stable on (id, arrival): a sorted input costs one pass.
        v.sort_by_key(|&(k, b)| (b.id, k));
        let mut out: Vec<Base> = Vec::with_capacity(v.len());
        for (_, b) in v {
            match out.last_mut() {
                Some(last) if last.id == b.id => *last = b,
                _ => out.push(b),
            }
        }
        Bases(out)
    }
}

impl<'a> IntoIterator for &'a Bases {
    type Item = (&'a BaseId, &'a Base);
    type IntoIter =
        std::iter::Map<std::slice::Iter<'a, Base>, fn(&'a Base) -> (&'a BaseId, &'a Base)>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().map(|b| (&b.id, b))
    }
}

impl Serialize for Bases {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_map(self.iter())
    }
}

impl<'de> Deserialize<'de> for Bases {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Bases, D::Error> {
        let map = BTreeMap::<BaseId, Base>::deserialize(d)?;
        if let Some((id, b)) = map.iter().find(|(id, b)| **id != b.id) {
            return Err(serde::de::Error::custom(format!(
                "base {} is keyed as base {}",
                b.id.0, id.0
            )));
        }
        Ok(Bases(map.into_values().collect()))
    }
}

/// What one flush hands down the stack: instructions in program order, the metadata of
/// every base they name, and the bases whose values must reach host memory.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Batch {
    pub bases: Bases,
    pub instrs: Vec<Instr>,
    pub sync: Vec<BaseId>,
    /// The first base id nothing in the process holds yet, from which [`Batch::new_temp`]
    /// takes ids for a filter's temporaries; 0 when the batch has none to give (one not
    /// made by the runtime, or a part of one). Not part of the wire form.
    #[serde(skip)]
    pub next_id: u64,
    /// Bases written by index instructions whose indices the recorder built in range and
    /// distinct (a compaction's ranks): such a write cannot fail, so `dead_code` may
    /// remove it when nothing reads the result, and no two of its updates touch one
    /// element, so the cpu engine may run its rows on several threads (it travels to
    /// engines with the batch).
    pub in_range: Vec<BaseId>,
}

impl Batch {
    /// A fresh base for a temporary a filter adds, or `None` when the batch has no ids to
    /// give. The filter must free it later in the batch; the runtime then accepts it and
    /// gives it memory if the fuser does not keep it in registers.
    pub fn new_temp(&mut self, dtype: crate::DType, nelem: usize) -> Option<Base> {
        if self.next_id == 0 {
            return None;
        }
        let id = BaseId(self.next_id);
        self.next_id += 1;
        let base = Base { id, dtype, nelem };
        self.bases.insert(id, base);
        Some(base)
    }

    pub fn base(&self, id: BaseId) -> Option<&Base> {
        self.bases.get(&id)
    }

    pub fn is_empty(&self) -> bool {
        self.instrs.is_empty() && self.sync.is_empty()
    }

    /// Bases freed by a `Free` instruction inside this batch.
    pub fn freed(&self) -> impl Iterator<Item = BaseId> + '_ {
        self.instrs
            .iter()
            .filter(|i| i.op == crate::Opcode::Free)
            .map(|i| i.out.base)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base(id: u64, nelem: usize) -> Base {
        Base {
            id: BaseId(id),
            dtype: DType::Float64,
            nelem,
        }
    }

    #[test]
    fn bases_keep_id_order_and_replace_like_a_map() {
        let mut b: Bases = [(BaseId(5), base(5, 1)), (BaseId(2), base(2, 1))]
            .into_iter()
            .collect();
        assert_eq!(b.insert(BaseId(3), base(3, 7)), None);
        assert_eq!(b.insert(BaseId(5), base(5, 9)), Some(base(5, 1)));
        assert_eq!(b.keys().map(|k| k.0).collect::<Vec<_>>(), [2, 3, 5]);
        assert_eq!(b[&BaseId(5)].nelem, 9);
        assert!(b.get(&BaseId(4)).is_none() && !b.contains_key(&BaseId(1)));
        let mut hint = 0;
        for (id, at) in [(2, 1), (3, 2), (5, 3), (2, 1), (4, 1), (9, 1)] {
            let found = b.get_after(BaseId(id), &mut hint).map(|b| b.id);
            assert_eq!(found, b.get(&BaseId(id)).map(|b| b.id), "base {id}");
            assert_eq!(hint, at, "after base {id}");
        }
        b.get_mut(&BaseId(3)).unwrap().nelem = 8;
        assert_eq!(b.values().map(|v| v.nelem).collect::<Vec<_>>(), [1, 8, 9]);
        // Collected with an id twice: the later base wins, as inserting into a map would.
        let twice: Bases = [(BaseId(4), base(4, 1)), (BaseId(4), base(4, 2))]
            .into_iter()
            .collect();
        assert_eq!(twice.len(), 1);
        assert_eq!(twice[&BaseId(4)].nelem, 2);
    }

    #[test]
    fn bases_serialise_as_a_map_by_id() {
        let b: Bases = [(BaseId(9), base(9, 3)), (BaseId(1), base(1, 4))]
            .into_iter()
            .collect();
        let json = serde_json::to_string(&b).unwrap();
        let as_map: BTreeMap<BaseId, Base> = serde_json::from_str(&json).unwrap();
        assert_eq!(as_map.len(), 2);
        assert_eq!(as_map[&BaseId(9)], base(9, 3));
        let back: Bases = serde_json::from_str(&json).unwrap();
        assert_eq!(back, b);
    }
}
