//! Runs a batch on the reference engine from deterministic initial data, so tests can
//! compare the bytes a fused (or filtered) batch leaves with those of the original.
//! Shared with the filters' tests (included there by path).

#![allow(dead_code)]

use hassium_core::{Base, BaseId, Batch, DType, Kernel, Scalar};
use hassium_engine_abi::{Buffers, Engine, HostBuffer};
use hassium_engine_reference::ReferenceEngine;
use std::collections::BTreeMap;

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A small deterministic generator (splitmix64's sequence) for random test programs.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        splitmix(self.0.wrapping_sub(0x9e37_79b9_7f4a_7c15))
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

/// Deterministic initial contents of a base: floats in [-4, 4) with a few special values
/// (0, -0, inf, NaN) when `special`, small integers otherwise.
pub fn initial(base: &Base, seed: u64, special: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(base.nbytes());
    for i in 0..base.nelem {
        let r = splitmix(seed ^ (base.id.0 << 32) ^ i as u64);
        let value = if base.dtype.is_inexact() {
            let f = match (special, r % 16) {
                (true, 0) => 0.0,
                (true, 1) => -0.0,
                (true, 2) => f64::INFINITY,
                (true, 3) => f64::NAN,
                _ => ((r >> 11) as f64 / (1u64 << 53) as f64) * 8.0 - 4.0,
            };
            Scalar::Float64(f).cast(base.dtype)
        } else {
            Scalar::Int64((r % 200) as i64 - 100).cast(base.dtype)
        };
        out.extend_from_slice(&value.to_le_bytes()[..base.dtype.size()]);
    }
    out
}

/// One kernel per non-system instruction, in program order, nothing contracted: the
/// meaning of the batch as written.
pub fn unfused(batch: &Batch) -> Vec<Kernel> {
    (0..batch.instrs.len())
        .filter(|&k| !batch.instrs[k].op.is_system())
        .map(|k| Kernel {
            instrs: [k].into_iter().collect(),
            shape: batch.instrs[k].out.shape.clone(),
            ..Default::default()
        })
        .collect()
}

/// Executes `kernels` and returns the final bytes of every base with a buffer (all but
/// the contracted ones). Initial data depends only on `seed` and the base.
pub fn run(
    batch: &Batch,
    kernels: &[Kernel],
    seed: u64,
    special: bool,
) -> Result<BTreeMap<BaseId, Vec<u8>>, String> {
    let contracted: Vec<BaseId> = kernels.iter().flat_map(|k| k.contracted.clone()).collect();
    let mut data: BTreeMap<BaseId, Vec<u8>> = batch
        .bases
        .values()
        .filter(|b| !contracted.contains(&b.id))
        .map(|b| (b.id, initial(b, seed, special)))
        .collect();
    let list: Vec<HostBuffer> = data
        .iter_mut()
        .map(|(id, bytes)| HostBuffer {
            base: id.0,
            data: bytes.as_mut_ptr(),
            nelem: batch.bases[id].nelem as u64,
            dtype: batch.bases[id].dtype as u8,
            host_dirty: 1,
        })
        .collect();
    let buffers = Buffers::new(&list);
    ReferenceEngine::new()
        .execute(batch, kernels, &buffers)
        .map_err(|e| e.to_string())?;
    Ok(data)
}

/// Bases whose values a program can still see after the batch.
pub fn observable(batch: &Batch) -> Vec<BaseId> {
    let freed: Vec<BaseId> = batch.freed().collect();
    batch
        .bases
        .keys()
        .copied()
        .filter(|b| !freed.contains(b) || batch.sync.contains(b))
        .collect()
}

/// The observable bases' bytes after running `kernels`.
pub fn observe(
    batch: &Batch,
    kernels: &[Kernel],
    seed: u64,
    special: bool,
) -> Result<BTreeMap<BaseId, Vec<u8>>, String> {
    let all = run(batch, kernels, seed, special)?;
    let keep = observable(batch);
    Ok(all.into_iter().filter(|(b, _)| keep.contains(b)).collect())
}

/// Interprets the bytes of a float64 base.
pub fn f64s(bytes: &[u8]) -> Vec<f64> {
    bytes
        .chunks(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

pub fn dtype_of(batch: &Batch, b: BaseId) -> DType {
    batch.bases[&b].dtype
}
