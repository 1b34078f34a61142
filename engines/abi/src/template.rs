//! Templates: running a call again without sending it again.
//!
//! A loop body recorded many times flushes batches of one structure (one fuse-cache key):
//! only the bases (fresh temporaries every iteration) and the scalar values differ. The
//! first call of a structure crosses the boundary whole, marked with a key, and the engine
//! side keeps it decoded. Later calls of that key send only their [`Bindings`] (the call's
//! bases in order of first appearance, its scalars in order, the synced bases), and the
//! engine side patches its copy instead of decoding a few thousand instructions again and
//! re-deriving what it knew about them. An engine side that no longer holds the key says
//! so (`STATUS_UNKNOWN`) and gets the whole call.
//!
//! Both sides number bases with the same walk, [`walk`]: over the instructions the call's
//! kernels name, in batch order, each output view and then each operand.

use crate::{Buffers, Error, Result};
use hassium_core::{Base, BaseId, Bases, Batch, DType, Kernel, Operand, Scalar};
use rustc_hash::FxHashMap;

/// What an engine keeps from one execution of a template for the next
/// (see [`crate::Engine::execute_again`]).
pub type Memo = Option<Box<dyn std::any::Any + Send>>;

/// What varies between calls of one template.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Bindings {
    /// The call's bases by canonical number.
    pub ids: Vec<BaseId>,
    /// The call's scalar operands in walk order.
    pub scalars: Vec<Scalar>,
    /// The batch's synced bases.
    pub sync: Vec<BaseId>,
}

/// The instructions a call carries: those its kernels name, in batch order.
fn call_instrs(kernels: &[Kernel]) -> Vec<usize> {
    let mut instrs: Vec<usize> = kernels
        .iter()
        .flat_map(|k| k.instrs.iter().copied())
        .collect();
    instrs.sort_unstable();
    instrs.dedup();
    instrs
}

/// Visits the call's operands in canonical order: for each of `instrs`, the output's base,
/// then each operand's base or scalar.
fn walk(
    batch: &Batch,
    instrs: &[usize],
    mut base: impl FnMut(BaseId),
    mut scalar: impl FnMut(&Scalar),
) {
    for &k in instrs {
        let i = &batch.instrs[k];
        base(i.out.base);
        for o in &i.ins {
            match o {
                Operand::View(v) => base(v.base),
                Operand::Scalar(s) => scalar(s),
            }
        }
    }
}

impl Bindings {
    /// The bindings of the call that runs `kernels` of `batch`.
    pub fn of(batch: &Batch, kernels: &[Kernel]) -> Bindings {
        let instrs = call_instrs(kernels);
        let mut numbers: FxHashMap<BaseId, u32> =
            FxHashMap::with_capacity_and_hasher(2 * instrs.len(), Default::default());
        let mut b = Bindings {
            ids: Vec::with_capacity(2 * instrs.len()),
            scalars: Vec::with_capacity(instrs.len()),
            sync: batch.sync.clone(),
        };
        walk(
            batch,
            &instrs,
            |id| {
                let next = numbers.len() as u32;
                if *numbers.entry(id).or_insert(next) == next {
                    b.ids.push(id);
                }
            },
            |s| b.scalars.push(*s),
        );
        b
    }
}

/// A call kept decoded on the engine side, with where each base and scalar sits in it.
pub struct Template {
    pub batch: Batch,
    pub kernels: Vec<Kernel>,
    instrs: Vec<usize>,
    /// Canonical number of the base of every view, in walk order.
    views: Vec<u32>,
    /// Canonical numbers of every kernel's contracted, read and written bases, in order.
    kernel_bases: Vec<u32>,
    /// Each base by canonical number, as last bound.
    bases: Vec<Base>,
    scalar_dtypes: Vec<DType>,
    /// What the engine keeps between executions of this template.
    pub memo: Memo,
}

impl Template {
    /// Keeps a decoded call. The call comes back when a kernel names a base its
    /// instructions do not or the base table lacks one (never so for a call the runtime
    /// encoded): such a call is just not kept.
    pub fn new(
        batch: Batch,
        kernels: Vec<Kernel>,
    ) -> std::result::Result<Template, Box<(Batch, Vec<Kernel>)>> {
        match Template::layout(&batch, &kernels) {
            Some(l) => Ok(Template {
                batch,
                kernels,
                ..l
            }),
            None => Err(Box::new((batch, kernels))),
        }
    }

    /// Everything but the call itself (left empty).
    fn layout(batch: &Batch, kernels: &[Kernel]) -> Option<Template> {
        let instrs = call_instrs(kernels);
        if instrs.last().is_some_and(|&k| k >= batch.instrs.len()) {
            return None;
        }
        let mut numbers: FxHashMap<BaseId, u32> = FxHashMap::default();
        let mut views = Vec::new();
        let mut scalar_dtypes = Vec::new();
        walk(
            batch,
            &instrs,
            |id| {
                let next = numbers.len() as u32;
                views.push(*numbers.entry(id).or_insert(next));
            },
            |s| scalar_dtypes.push(s.dtype()),
        );
        let kernel_bases = (kernels.iter())
            .flat_map(|k| k.contracted.iter().chain(&k.reads).chain(&k.writes))
            .map(|id| numbers.get(id).copied())
            .collect::<Option<Vec<u32>>>()?;
        let mut bases = vec![None; numbers.len()];
        for (id, &n) in &numbers {
            bases[n as usize] = Some(*batch.base(*id)?);
        }
        Some(Template {
            bases: bases.into_iter().collect::<Option<Vec<Base>>>()?,
            batch: Batch::default(),
            kernels: Vec::new(),
            instrs,
            views,
            kernel_bases,
            scalar_dtypes,
            memo: None,
        })
    }

    /// Instructions the template holds, placeholders for those of other calls included
    /// (what a cache of templates is bounded by).
    pub fn size(&self) -> usize {
        self.batch.instrs.len()
    }

    /// Rebinds the kept call to `b`, checked first against the template and the host
    /// buffers, so that bindings which do not fit (a runtime bug) are an error and never
    /// a kernel run over the wrong memory.
    pub fn rebind(&mut self, b: &Bindings, buffers: &Buffers) -> Result<()> {
        let unfit = |what: &str| Err(Error::Other(format!("replaying a call: {what}")));
        if b.ids.len() != self.bases.len() {
            return unfit("the bindings name another number of bases");
        }
        if b.scalars.len() != self.scalar_dtypes.len()
            || (b.scalars.iter().zip(&self.scalar_dtypes)).any(|(s, &d)| s.dtype() != d)
        {
            return unfit("the scalars differ in number or dtype");
        }
        // The batch's bases under their new ids, sorted as `Bases` keeps them; a
        // duplicate id then sits next to its twin.
        let mut sorted: Vec<Base> = (self.bases.iter().zip(&b.ids))
            .map(|(base, &id)| Base { id, ..*base })
            .collect();
        sorted.sort_unstable_by_key(|b| b.id);
        if sorted.windows(2).any(|w| w[0].id == w[1].id) {
            return unfit("a base is bound twice");
        }
        for (id, base) in b.ids.iter().zip(&self.bases) {
            if let Some(h) = buffers.get(*id) {
                if h.nelem != base.nelem as u64 || h.dtype != base.dtype as u8 {
                    return unfit(&format!("base {} differs in size or dtype", id.0));
                }
            }
        }
        let (mut v, mut s) = (self.views.iter(), b.scalars.iter());
        for &k in &self.instrs {
            let i = &mut self.batch.instrs[k];
            // Lengths match `walk`'s on this same batch: the iterators cannot run dry.
            i.out.base = b.ids[*v.next().unwrap_or(&0) as usize];
            for o in &mut i.ins {
                match o {
                    Operand::View(view) => view.base = b.ids[*v.next().unwrap_or(&0) as usize],
                    Operand::Scalar(x) => *x = *s.next().unwrap_or(x),
                }
            }
        }
        let mut n = self.kernel_bases.iter();
        for k in &mut self.kernels {
            for id in k
                .contracted
                .iter_mut()
                .chain(&mut k.reads)
                .chain(&mut k.writes)
            {
                *id = b.ids[*n.next().unwrap_or(&0) as usize];
            }
            // Sorted, as the fuser and the fuse cache leave them.
            k.contracted.sort_unstable();
            k.reads.sort_unstable();
            k.writes.sort_unstable();
        }
        self.batch.bases = Bases::from_sorted(sorted);
        self.batch.sync.clone_from(&b.sync);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::HostBuffer;
    use hassium_core::{Instr, Opcode, View};

    /// `t = x * dt; x = t + 1; free t` over base ids `x` and `t`, as one kernel.
    fn call(x: u64, t: u64, dt: f64) -> (Batch, Vec<Kernel>) {
        let mut b = Batch::default();
        for id in [x, t] {
            let id = BaseId(id);
            b.bases.insert(
                id,
                Base {
                    id,
                    dtype: DType::Float64,
                    nelem: 10,
                },
            );
        }
        let vx = View::contiguous(BaseId(x), DType::Float64, &[10]);
        let vt = View::contiguous(BaseId(t), DType::Float64, &[10]);
        let s = |v: f64| Operand::Scalar(Scalar::Float64(v));
        b.instrs.push(Instr::new(
            Opcode::Multiply,
            vt.clone(),
            [vx.clone().into(), s(dt)],
        ));
        b.instrs
            .push(Instr::new(Opcode::Add, vx, [vt.into(), s(1.0)]));
        b.instrs
            .push(Instr::system(Opcode::Free, &b.bases[&BaseId(t)].clone()));
        let k = Kernel {
            instrs: [0, 1].into_iter().collect(),
            shape: [10].into_iter().collect(),
            contracted: [BaseId(t)].into_iter().collect(),
            reads: [BaseId(x)].into_iter().collect(),
            writes: [BaseId(x)].into_iter().collect(),
        };
        (b, vec![k])
    }

    fn buffers(ids: &[(u64, u64)]) -> Buffers {
        let mut b = Buffers::default();
        for &(id, nelem) in ids {
            b.insert(HostBuffer {
                base: id,
                data: std::ptr::null_mut(),
                nelem,
                dtype: DType::Float64 as u8,
                host_dirty: 0,
            });
        }
        b
    }

    #[test]
    fn rebinding_a_template_gives_the_call_it_was_bound_to() {
        let (batch, kernels) = call(7, 8, 0.1);
        let mut t = Template::new(batch, kernels).ok().unwrap();
        let (want, want_k) = call(3, 20, 0.25);
        let b = Bindings::of(&want, &want_k);
        assert_eq!(b.ids, vec![BaseId(20), BaseId(3)]);
        assert_eq!(b.scalars, vec![Scalar::Float64(0.25), Scalar::Float64(1.0)]);
        // The free is no part of the call but still held (as a placeholder): it counts.
        assert_eq!(t.size(), 3);
        t.rebind(&b, &buffers(&[(3, 10)])).unwrap();
        // The free is not part of the call, so it keeps the template's base.
        assert_eq!(t.batch.instrs[..2], want.instrs[..2]);
        assert_eq!(t.batch.bases, want.bases);
        assert_eq!(t.kernels, want_k);
    }

    #[test]
    fn bindings_that_do_not_fit_are_refused() {
        let (batch, kernels) = call(7, 8, 0.1);
        let mut t = Template::new(batch, kernels).ok().unwrap();
        let (other, other_k) = call(3, 20, 0.25);
        let good = Bindings::of(&other, &other_k);
        let mut twice = good.clone();
        twice.ids[1] = twice.ids[0];
        let mut short = good.clone();
        short.scalars.pop();
        let mut int = good.clone();
        int.scalars[0] = Scalar::Int64(1);
        for bad in [twice, short, int] {
            assert!(t.rebind(&bad, &buffers(&[(3, 10)])).is_err(), "{bad:?}");
        }
        let err = t.rebind(&good, &buffers(&[(3, 11)])).unwrap_err();
        assert!(err.to_string().contains("size or dtype"), "{err}");
        t.rebind(&good, &buffers(&[(3, 10)])).unwrap();
    }
}
