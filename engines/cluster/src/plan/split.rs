//! A kernel of independent parts (a grid's walls, written by different ranks) as those
//! parts, so that each can be cut on its own.

use hassium_core::{BaseId, Batch, Kernel};

/// An elementwise kernel as its independent parts: instructions joined by the registers
/// (contracted bases) one produces and another consumes, in kernel order. `None` when
/// it has one part, or when a part writes memory another part touches (running the parts
/// one after another could then change what a read sees).
pub fn split_by_output(batch: &Batch, k: &Kernel) -> Option<Vec<Kernel>> {
    let n = k.instrs.len();
    if n < 2
        || k.instrs
            .iter()
            .any(|&i| !batch.instrs[i].op.is_elementwise())
    {
        return None;
    }
    // Union-find over positions in the kernel.
    let mut parent: Vec<usize> = (0..n).collect();
    fn find(p: &mut [usize], x: usize) -> usize {
        let mut r = x;
        while p[r] != r {
            r = p[r];
        }
        p[x] = r;
        r
    }
    for (a, &ia) in k.instrs.iter().enumerate() {
        let out = batch.instrs[ia].out.base;
        if !k.contracted.contains(&out) {
            continue;
        }
        for (b, &ib) in k.instrs.iter().enumerate() {
            let x = &batch.instrs[ib];
            if x.out.base == out || x.ins.iter().any(|o| o.base() == Some(out)) {
                let (ra, rb) = (find(&mut parent, a), find(&mut parent, b));
                parent[ra] = rb;
            }
        }
    }
    let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
    for (a, &i) in k.instrs.iter().enumerate() {
        let root = find(&mut parent, a);
        match groups.iter_mut().find(|(r, _)| *r == root) {
            Some((_, g)) => g.push(i),
            None => groups.push((root, vec![i])),
        }
    }
    if groups.len() < 2 {
        return None;
    }
    // Memory each part writes must not meet memory another part reads or writes.
    let spans = |g: &[usize], writes: bool| -> Vec<(BaseId, isize, isize)> {
        let mut v = Vec::new();
        for &i in g {
            let x = &batch.instrs[i];
            let views = std::iter::once(&x.out)
                .chain(x.ins.iter().filter_map(|o| o.as_view()).filter(|_| !writes));
            for view in views {
                if !k.contracted.contains(&view.base) {
                    if let Some((lo, hi)) = view.extent() {
                        v.push((view.base, lo, hi));
                    }
                }
            }
        }
        v
    };
    for (a, (_, ga)) in groups.iter().enumerate() {
        let written = spans(ga, true);
        for (b, (_, gb)) in groups.iter().enumerate() {
            if a == b {
                continue;
            }
            let touched = spans(gb, false);
            let meet = written.iter().any(|&(base, lo, hi)| {
                touched
                    .iter()
                    .any(|&(b2, lo2, hi2)| b2 == base && lo <= hi2 && lo2 <= hi)
            });
            if meet {
                return None;
            }
        }
    }
    Some(
        groups
            .into_iter()
            .map(|(_, g)| {
                let mut reads = Vec::new();
                let mut writes = Vec::new();
                let mut contracted = Vec::new();
                for &i in &g {
                    let x = &batch.instrs[i];
                    let o = x.out.base;
                    if k.contracted.contains(&o) {
                        contracted.push(o);
                    } else {
                        writes.push(o);
                    }
                    for b in x.ins.iter().filter_map(|o| o.base()) {
                        if !k.contracted.contains(&b) {
                            reads.push(b);
                        }
                    }
                }
                for v in [&mut reads, &mut writes, &mut contracted] {
                    v.sort_unstable();
                    v.dedup();
                }
                Kernel {
                    instrs: g.into_iter().collect(),
                    shape: k.shape.clone(),
                    contracted: contracted.into_iter().collect(),
                    reads: reads.into_iter().collect(),
                    writes: writes.into_iter().collect(),
                }
            })
            .collect(),
    )
}
