//! Operands as they are met: buffer slots (bases in order of first appearance, contracted
//! ones excluded), views before collapsing, random-access views, runtime `meta` numbers.

use super::{Lowered, Num, Plan, Site, Specialize, Structure, ViewKind};
use crate::traffic::Traffic;
use crate::{Error, Result};
use hassium_core::{BaseId, Batch, DType, Instr, Kernel, Operand, Scalar, View};
use rustc_hash::FxHashMap;

pub(super) struct Builder<'a> {
    pub(super) kernel: &'a Kernel,
    pub(super) spec: Specialize,
    pub(super) meta: Vec<i64>,
    pub(super) slots: Vec<BaseId>,
    pub(super) view_ids: FxHashMap<(View, bool), usize>,
    /// Views before collapsing: strides over the iteration shape's dimensions.
    pub(super) raw: Vec<(ViewKind, DType, isize, Vec<isize>)>,
    pub(super) traffic: Traffic,
    /// The operand being registered, and where each slot's base was first seen.
    pub(super) site: Site,
    pub(super) slot_sites: Vec<Site>,
}

impl Builder<'_> {
    pub(super) fn num(&mut self, v: i64, keep_small: bool) -> Num {
        if self.spec == Specialize::Fixed || (keep_small && (v == 0 || v == 1)) {
            Num::Lit(v)
        } else {
            self.meta.push(v);
            Num::Meta(self.meta.len() - 1)
        }
    }

    pub(super) fn slot(&mut self, base: BaseId) -> Option<usize> {
        if self.kernel.contracts(base) {
            return None;
        }
        Some(match self.slots.iter().position(|b| *b == base) {
            Some(s) => s,
            None => {
                self.slots.push(base);
                self.slot_sites.push(self.site);
                self.slots.len() - 1
            }
        })
    }

    /// Registers a loop-indexed view; `strides` are over the iteration shape's dims.
    pub(super) fn view(&mut self, v: &View, strides: Vec<isize>, linear: bool) -> usize {
        let key = (v.clone(), linear);
        if let Some(&id) = self.view_ids.get(&key) {
            return id;
        }
        let kind = if linear {
            ViewKind::Linear
        } else {
            ViewKind::Data {
                slot: self.slot(v.base),
            }
        };
        self.raw
            .push((kind, v.dtype, if linear { 0 } else { v.offset }, strides));
        let id = self.raw.len() - 1;
        self.view_ids.insert(key, id);
        id
    }
}

pub(super) fn contiguous(shape: &[usize]) -> Vec<isize> {
    let mut s = vec![0isize; shape.len()];
    let mut acc = 1isize;
    for i in (0..shape.len()).rev() {
        s[i] = acc;
        acc *= shape[i].max(1) as isize;
    }
    s
}

pub(super) fn unsupported<T>(what: impl Into<String>) -> Result<T> {
    Err(Error::Unsupported(what.into()))
}

pub(super) fn view_in(i: &Instr, n: usize) -> Result<&View> {
    i.ins
        .get(n)
        .and_then(Operand::as_view)
        .ok_or_else(|| Error::Malformed(format!("{} input {n} is not a view", i.op.name())))
}

pub(super) fn random_access(
    b: &mut Builder<'_>,
    randoms: &mut Vec<(usize, DType, isize, isize, usize)>,
    v: &View,
) -> Result<usize> {
    if v.ndim() != 1 {
        return unsupported(format!("a {}-d gather source or scatter target", v.ndim()));
    }
    let slot = b
        .slot(v.base)
        .ok_or_else(|| Error::Unsupported("indexing into a contracted base".into()))?;
    b.traffic.random(v);
    randoms.push((slot, v.dtype, v.offset, v.strides[0], v.shape[0]));
    Ok(randoms.len() - 1)
}

pub(super) fn empty(
    spec: Specialize,
    b: Builder<'_>,
    batch: &Batch,
    scalars: Vec<Scalar>,
    scalar_sites: Vec<Site>,
) -> Lowered {
    let slots = b.slots;
    let slot_dtypes = slots
        .iter()
        .map(|id| batch.base(*id).map_or(DType::UInt8, |x| x.dtype))
        .collect();
    Lowered {
        spec,
        plan: Plan::Empty,
        slots,
        slot_dtypes,
        scalars,
        meta: Vec::new(),
        bytes: 0,
        elements: 0,
        structure: Structure::Elementwise,
        extents: Vec::new(),
        views: Vec::new(),
        randoms: Vec::new(),
        instrs: Vec::new(),
        nreductions: 0,
        lagged: Vec::new(),
        slot_sites: b.slot_sites,
        scalar_sites,
    }
}
