//! Temporaries a filter adds (`Batch::new_temp`, here `matrix_vector`'s product): the
//! runtime takes them in, gives them memory when the fuser does not contract them, and
//! never hands their ids out again.

mod common;

use common::{from_f64, read_f64, reference_runtime};
use hassium_core::{DType, Instr};
use hassium_vem::Runtime;

/// `a (n×k) @ v (k×1)` through the runtime, twice with the same shapes (the second
/// flush takes the fuse cache's path), and an array made after each product.
fn products(rt: &mut Runtime) {
    let (n, k) = (5, 7);
    let a_vals: Vec<f64> = (0..n * k).map(|i| (i % 11) as f64 - 3.0).collect();
    for round in 0..2 {
        let v_vals: Vec<f64> = (0..k).map(|i| (i + round) as f64 * 0.5).collect();
        let a = from_f64(rt, &a_vals).reshape(&[n, k]).unwrap();
        let v = from_f64(rt, &v_vals).reshape(&[k, 1]).unwrap();
        let out = rt.new_base(DType::Float64, n);
        let ov = hassium_core::View::contiguous(out.id, DType::Float64, &[n, 1]);
        rt.record(Instr::extension("matmul", ov, [a.into(), v.into()]))
            .unwrap();
        let got = read_f64(rt, out.id, n);
        let want: Vec<f64> = (0..n)
            .map(|i| (0..k).map(|p| a_vals[i * k + p] * v_vals[p]).sum())
            .collect();
        assert_eq!(got, want, "round {round}");
        // A base made after the flush has an id no filter temporary had.
        let after = from_f64(rt, &[1.0, 2.0]);
        assert_eq!(read_f64(rt, after.base, 2), [1.0, 2.0]);
    }
    assert!(rt.stats().flushes >= 2);
}

#[test]
fn a_filter_temporary_gets_memory_when_it_is_not_contracted() {
    // The reference stack's fuser runs one instruction per kernel: the product between
    // the multiply and the sum lives in host memory.
    let mut rt = reference_runtime(&[("HASSIUM_STACKS_REFERENCE_FILTERS", "[\"matrix_vector\"]")]);
    products(&mut rt);
}

#[test]
fn a_filter_temporary_is_contracted_when_fused() {
    let mut rt = reference_runtime(&[
        ("HASSIUM_STACKS_REFERENCE_FILTERS", "[\"matrix_vector\"]"),
        ("HASSIUM_STACKS_REFERENCE_FUSER", "greedy"),
    ]);
    products(&mut rt);
}

#[test]
fn a_filter_temporary_never_takes_the_id_of_a_base_the_flush_made() {
    // A generated array (`arange(n) * 0.5`) becomes memory at the flush that reads it,
    // under an id the runtime gives out during that flush: the filter's temporary must
    // come after it.
    let mut rt = reference_runtime(&[("HASSIUM_STACKS_REFERENCE_FILTERS", "[\"matrix_vector\"]")]);
    let k = 1000;
    for round in 0..3 {
        let u = int_arange_times_half(&mut rt, k);
        let w = from_f64(&mut rt, &vec![1.0; k]);
        let out = rt.new_base(DType::Float64, 1);
        let ov = hassium_core::View::contiguous(out.id, DType::Float64, &[1, 1]);
        let (u, w) = (u.reshape(&[1, k]).unwrap(), w.reshape(&[k, 1]).unwrap());
        rt.record(Instr::extension("matmul", ov, [u.into(), w.into()]))
            .unwrap();
        let want = 0.5 * (k * (k - 1) / 2) as f64;
        assert_eq!(read_f64(&mut rt, out.id, 1), [want], "round {round}");
    }
}

/// `np.arange(k) * 0.5` as the Python bridge records it: an int64 range into a
/// temporary, cast to float64, multiplied, the temporaries freed.
fn int_arange_times_half(rt: &mut Runtime, k: usize) -> hassium_core::View {
    use hassium_core::{Opcode, Scalar, View};
    let a = rt.new_base(DType::Int64, k);
    let av = View::contiguous(a.id, DType::Int64, &[k]);
    rt.record(Instr::new(Opcode::Range, av.clone(), []))
        .unwrap();
    let c = rt.new_base(DType::Float64, k);
    let cv = View::contiguous(c.id, DType::Float64, &[k]);
    rt.record(Instr::new(Opcode::Identity, cv.clone(), [av.into()]))
        .unwrap();
    let u = rt.new_base(DType::Float64, k);
    let uv = View::contiguous(u.id, DType::Float64, &[k]);
    let half = Scalar::Float64(0.5).into();
    rt.record(Instr::new(Opcode::Multiply, uv.clone(), [cv.into(), half]))
        .unwrap();
    rt.free(a.id).unwrap();
    rt.free(c.id).unwrap();
    uv
}
