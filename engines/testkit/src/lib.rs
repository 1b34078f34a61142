//! Test support shared by the engines' differential suites: deterministic inputs,
//! batches built by hand, and host arrays to run them on. Every engine's tests compare it
//! against the reference engine through these same helpers.

pub mod suite;

use hassium_core::{Base, BaseId, Batch, DType, Instr, Kernel, Opcode, Scalar};
use hassium_engine_abi::{Buffers, Engine, HostBuffer};
use hassium_engine_reference::ReferenceEngine;
use std::collections::BTreeMap;

/// Deterministic xorshift generator.
pub struct Rng(pub u64);
// A plain method, not Iterator: the generator never ends and callers want a u64.
#[allow(clippy::should_implement_trait)]
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    pub fn f64(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Host memory for every base of a batch (u64 words keep all dtypes aligned).
#[derive(Clone)]
pub struct Arrays(pub BTreeMap<BaseId, (DType, usize, Vec<u64>)>);

impl Arrays {
    pub fn new(batch: &Batch) -> Arrays {
        Arrays(
            batch
                .bases
                .values()
                .map(|b| (b.id, (b.dtype, b.nelem, vec![0u64; (b.nbytes() + 8) / 8])))
                .collect(),
        )
    }

    pub fn buffers(&mut self, skip: &[BaseId]) -> Buffers {
        let list: Vec<HostBuffer> = self
            .0
            .iter_mut()
            .filter(|(id, _)| !skip.contains(id))
            .map(|(id, (d, n, v))| HostBuffer {
                base: id.0,
                data: v.as_mut_ptr() as *mut u8,
                nelem: *n as u64,
                dtype: *d as u8,
                host_dirty: 0,
            })
            .collect();
        Buffers::new(&list)
    }

    pub fn get(&self, id: BaseId, i: usize) -> Scalar {
        let (d, _, v) = &self.0[&id];
        let bytes: &[u8] =
            unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, v.len() * 8) };
        Scalar::from_le_bytes(*d, &bytes[i * d.size()..]).unwrap()
    }

    pub fn set(&mut self, id: BaseId, i: usize, s: Scalar) {
        let (d, _, v) = self.0.get_mut(&id).unwrap();
        let s = s.cast(*d);
        let bytes: &mut [u8] =
            unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr() as *mut u8, v.len() * 8) };
        let sz = d.size();
        bytes[i * sz..(i + 1) * sz].copy_from_slice(&s.to_le_bytes()[..sz]);
    }

    /// Fills a base with values that exercise NumPy's edge rules for its dtype.
    pub fn fill(&mut self, id: BaseId, rng: &mut Rng, small: bool) {
        let (d, n, _) = self.0[&id].clone();
        for i in 0..n {
            let s = value(d, rng, small);
            self.set(id, i, s);
        }
    }
}

/// A random value of `d`; `small` keeps integers in 0..8 (shift counts, exponents).
pub fn value(d: DType, rng: &mut Rng, small: bool) -> Scalar {
    let r = rng.below(100);
    match d {
        DType::Bool => Scalar::Bool(rng.below(2) == 1),
        d if d.is_float() && small => Scalar::Float64(rng.f64() * 100.0).cast(d),
        d if d.is_float() => {
            let x = match r {
                0 => f64::NAN,
                1 => f64::INFINITY,
                2 => f64::NEG_INFINITY,
                3 => -0.0,
                4 => 0.0,
                5..=40 => (rng.f64() - 0.5) * 8.0,
                _ => rng.f64() * 3.0 + 0.05,
            };
            Scalar::Float64(x).cast(d)
        }
        d if d.is_complex() => {
            Scalar::Complex128((rng.f64() - 0.5) * 4.0, (rng.f64() - 0.5) * 4.0).cast(d)
        }
        d => {
            if small {
                return Scalar::Int64(rng.below(9) as i64).cast(d);
            }
            let v: i64 = match r {
                0 => 0,
                1 => -1,
                2 => i64::MIN,
                3 => i64::MAX,
                4..=30 => rng.below(7) as i64 - 3,
                _ => rng.next() as i64,
            };
            Scalar::Int64(v).cast(d)
        }
    }
}

pub fn base(b: &mut Batch, dtype: DType, n: usize) -> BaseId {
    let id = BaseId(b.bases.keys().last().map_or(1, |k| k.0 + 1));
    b.bases.insert(
        id,
        Base {
            id,
            dtype,
            nelem: n,
        },
    );
    id
}

pub fn free(b: &mut Batch, id: BaseId) {
    let base = b.bases[&id];
    b.instrs.push(Instr::system(Opcode::Free, &base));
}

pub fn singletons(b: &Batch) -> Vec<Kernel> {
    b.instrs
        .iter()
        .enumerate()
        .filter(|(_, i)| !i.op.is_system())
        .map(|(k, _)| hassium_fuser::finish_kernel(b, vec![k], |_| true))
        .collect()
}

/// Greedy-fused kernels of a batch, as the runtime would hand them down.
pub fn fused(b: &Batch) -> Vec<Kernel> {
    let mut f = hassium_fuser::create("greedy", &Default::default()).expect("greedy fuser");
    f.fuse(b, &hassium_core::Capabilities::all())
        .expect("fusion")
}

/// Makes every base's engine values visible in `arrays` (device engines keep their own
/// copies until synced; for a host engine this changes nothing).
pub fn sync_all(engine: &mut dyn Engine, arrays: &mut Arrays, skip: &[BaseId]) {
    let bufs = arrays.buffers(skip);
    for hb in bufs.iter() {
        engine.sync(BaseId(hb.base), hb).expect("sync");
    }
}

/// Runs `kernels` on the reference engine and on `engine` from the same inputs, and
/// syncs every result back from `engine`.
pub fn run_both(
    batch: &Batch,
    kernels: &[Kernel],
    inputs: &Arrays,
    engine: &mut dyn Engine,
) -> (Arrays, Arrays) {
    let contracted: Vec<BaseId> = kernels
        .iter()
        .flat_map(|k| k.contracted.iter().copied())
        .collect();
    let mut want = inputs.clone();
    ReferenceEngine::new()
        .execute(batch, kernels, &want.buffers(&contracted))
        .expect("reference engine");
    let mut got = inputs.clone();
    let name = engine.name().to_string();
    engine
        .execute(batch, kernels, &got.buffers(&contracted))
        .unwrap_or_else(|e| panic!("{name} engine: {e}"));
    sync_all(engine, &mut got, &contracted);
    (want, got)
}

/// The differential suite's relative tolerance: the CPU engine's contract with NumPy
/// (float64 1e-12, float32 1e-5).
fn tol(d: DType) -> f64 {
    match d {
        DType::Float64 | DType::Complex128 => 1e-12,
        DType::Float32 | DType::Complex64 => 1e-5,
        _ => 2e-3,
    }
}

fn close(d: DType, a: f64, b: f64) -> bool {
    if a.is_nan() || b.is_nan() {
        return a.is_nan() && b.is_nan();
    }
    if a.is_infinite() || b.is_infinite() {
        return a == b;
    }
    (a - b).abs()
        <= tol(d)
            * a.abs()
                .max(b.abs())
                .max(if d == DType::Float16 { 1e-3 } else { 1e-300 })
}

/// Compares every element of `bases`; returns a description of the first difference.
pub fn diff(want: &Arrays, got: &Arrays, bases: &[BaseId]) -> Option<String> {
    for &id in bases {
        let (d, n, _) = want.0[&id];
        for i in 0..n {
            let (w, g) = (want.get(id, i), got.get(id, i));
            let ok = match (w.as_i128(), g.as_i128()) {
                (Some(a), Some(b)) => a == b,
                _ => {
                    let ((wr, wi), (gr, gi)) = (w.as_c128(), g.as_c128());
                    close(d, wr, gr) && close(d, wi, gi)
                }
            };
            if !ok {
                return Some(format!(
                    "base {} ({}) element {i}: reference {w:?}, engine under test {g:?}",
                    id.0,
                    d.name()
                ));
            }
        }
    }
    None
}
