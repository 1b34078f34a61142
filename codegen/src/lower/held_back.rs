//! Held-back writes: which stores of a kernel that reads the array it writes must wait
//! until no later row reads the old values (`Plan::Lagged`, see `codegen/README.md`).

use super::{Arg, Builder, LInstr, Space, ViewKind};
use crate::{Error, Result};
use hassium_core::{lag_rows, overlap, Overlap, View};
use rustc_hash::FxHashMap;

/// The views whose stores must be held back, and by how many rows: a view stored in the
/// body whose base the kernel also reads, before the store, through another view that
/// overlaps it (the fuser allows that only as [`hassium_core::lag_rows`] describes).
pub(super) fn held_back(b: &Builder<'_>, instrs: &[LInstr]) -> Result<(Vec<usize>, Option<usize>)> {
    let slot = |id: usize| match b.raw[id].0 {
        ViewKind::Data { slot } => slot,
        ViewKind::Linear => None,
    };
    // Stores per slot, then the reads of a stored slot through some other view: almost
    // every kernel has none, and this stays linear in its size.
    let mut stores: FxHashMap<usize, Vec<(usize, usize)>> = FxHashMap::default();
    for (pos, i) in instrs.iter().enumerate() {
        if let Some((w, s)) = i.out.and_then(|w| Some((w, slot(w)?))) {
            stores.entry(s).or_default().push((pos, w));
        }
    }
    let mut reads: Vec<(usize, usize, usize)> = Vec::new();
    for (pos, i) in instrs.iter().enumerate() {
        for a in &i.args {
            let Arg::View(r) = *a else { continue };
            let Some(s) = slot(r) else { continue };
            if stores
                .get(&s)
                .is_some_and(|ws| ws.iter().any(|&(_, w)| w != r))
            {
                reads.push((s, pos, r));
            }
        }
    }
    if reads.is_empty() {
        return Ok((Vec::new(), None));
    }
    let mut original: Vec<Option<&View>> = vec![None; b.raw.len()];
    for ((v, linear), &id) in &b.view_ids {
        if !linear {
            original[id] = Some(v);
        }
    }
    let (mut lagged, mut lag) = (Vec::new(), None);
    for (&s, ws) in &stores {
        for &(pos, w) in ws {
            let (Some(wv), false) = (original[w], lagged.contains(&w)) else {
                continue;
            };
            let mut k_w = None;
            for &(_, rpos, r) in reads.iter().filter(|x| x.0 == s && x.2 != w) {
                let Some(rv) = original[r] else { continue };
                if overlap(rv, wv) == Overlap::Disjoint {
                    continue;
                }
                let k = lag_rows(rv, wv)
                    .filter(|_| rpos < pos && instrs[pos].space == Space::Body)
                    .ok_or_else(|| {
                        Error::Unsupported("a read overlapping a write it cannot precede".into())
                    })?;
                k_w = Some(k_w.unwrap_or(0).max(k));
            }
            if let Some(k) = k_w {
                // The write's own rows: a row is complete only when all of it is computed.
                let own = lag_rows(wv, wv)
                    .ok_or_else(|| Error::Unsupported("held-back write without rows".into()))?;
                lagged.push(w);
                lag = Some(lag.unwrap_or(0).max(k).max(own));
            }
        }
    }
    // Part-buffer order must not depend on hash order.
    lagged.sort_unstable();
    Ok((lagged, lag))
}
