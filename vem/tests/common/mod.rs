//! What the runtime's integration tests share: a runtime on the reference stack, and
//! float64 arrays in and out of it.
#![allow(dead_code)] // each test crate uses its own part

use hassium_core::{BaseId, DType, Instr, Opcode, Scalar, View};
use hassium_vem::{Config, Runtime, DEFAULT_CONFIG};

pub fn reference_runtime(extra_env: &[(&str, &str)]) -> Runtime {
    let mut env: Vec<(String, String)> = vec![("HASSIUM_STACK".into(), "reference".into())];
    env.extend(
        extra_env
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string())),
    );
    Runtime::with_config(Config::from_toml(DEFAULT_CONFIG, "default", env).unwrap()).unwrap()
}

pub fn read_f64(rt: &mut Runtime, id: BaseId, n: usize) -> Vec<f64> {
    rt.sync(id).unwrap();
    let p = rt.host_ptr(id).unwrap() as *const f64;
    // SAFETY: the base holds n float64 values, synced above.
    unsafe { std::slice::from_raw_parts(p, n) }.to_vec()
}

pub fn from_f64(rt: &mut Runtime, values: &[f64]) -> View {
    let b = rt.new_base(DType::Float64, values.len());
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    rt.write_host(b.id, &bytes).unwrap();
    View::contiguous(b.id, DType::Float64, &[values.len()])
}

/// Host memory the runtime has allocated so far is at most `bytes`: what a recipe never
/// needed shows here.
pub fn assert_allocated_at_most(rt: &mut Runtime, bytes: u64) {
    let stats = rt.stats();
    assert!(
        stats.host_bytes_allocated <= bytes,
        "more than {bytes} bytes: {stats}"
    );
}

pub fn fusing_runtime() -> Runtime {
    reference_runtime(&[("HASSIUM_STACKS_REFERENCE_FUSER", "greedy")])
}

/// A new float64 base of `n` elements filled by `Range`, then `steps` (in place, each
/// with one scalar): how the bridges record `arange(start, stop, step)`.
pub fn arange(rt: &mut Runtime, n: usize, steps: &[(Opcode, f64)]) -> View {
    let b = rt.new_base(DType::Float64, n);
    let v = View::contiguous(b.id, DType::Float64, &[n]);
    rt.record(Instr::new(Opcode::Range, v.clone(), [])).unwrap();
    for &(op, s) in steps {
        rt.record(Instr::new(
            op,
            v.clone(),
            [v.clone().into(), Scalar::Float64(s).into()],
        ))
        .unwrap();
    }
    v
}

pub fn unary(rt: &mut Runtime, op: Opcode, a: &View, s: f64) -> View {
    let b = rt.new_base(DType::Float64, a.nelem());
    let v = View::contiguous(b.id, DType::Float64, &a.shape);
    rt.record(Instr::new(
        op,
        v.clone(),
        [a.clone().into(), Scalar::Float64(s).into()],
    ))
    .unwrap();
    v
}
