//! Elementwise operations over every kind of view: 0-d, empty, negative strides,
//! stride-0 broadcasts, transposes, in place, and contracted scratch bases.

mod common;
use common::*;
use hassium_core::{DType, Instr, Opcode, Scalar, View};
use hassium_engine_abi::Engine;

const F: DType = DType::Float64;

#[test]
fn zero_d_views_compute_one_element() {
    let mut h = Harness::new();
    let a = h.put(F, &[10.0f64, 20.0, 30.0]);
    let out = h.zeros(F, &[2]);
    let scalar_in = a.index(0, 1).unwrap();
    let scalar_out = out.index(0, 1).unwrap();
    assert_eq!(scalar_in.ndim(), 0);
    h.push(Instr::new(
        Opcode::Add,
        scalar_out,
        [scalar_in.into(), Scalar::Float64(0.5).into()],
    ));
    h.ok();
    assert_eq!(h.get::<f64>(&out), [0.0, 20.5]);
}

#[test]
fn empty_views_touch_nothing() {
    let mut h = Harness::new();
    let a = h.put(F, &[1.0f64, 2.0, 3.0, 4.0]);
    let out = h.put(F, &[-1.0f64; 4]);
    let empty_in = View::contiguous(a.base, F, &[2, 0]);
    let empty_out = View::contiguous(out.base, F, &[2, 0]);
    h.push(Instr::new(Opcode::Sqrt, empty_out, [empty_in.into()]));
    let e_in = a.slice(0, 2, 2, 1).unwrap();
    let e_out = out.slice(0, 3, 3, 1).unwrap();
    h.push(Instr::new(Opcode::Negative, e_out, [e_in.into()]));
    h.ok();
    assert_eq!(h.get::<f64>(&out), [-1.0; 4]);
}

#[test]
fn negative_strides_read_and_write_in_reverse() {
    let mut h = Harness::new();
    let a = h.put(DType::Int32, &[1i32, 2, 3, 4, 5]);
    let out = h.zeros(DType::Int32, &[5]);
    let rev = a.slice(0, 4, -1, -1).unwrap();
    let out_rev_evens = out.slice(0, 4, -1, -2).unwrap();
    let a_head = a.slice(0, 0, 3, 1).unwrap();
    h.push(Instr::new(
        Opcode::Multiply,
        out_rev_evens,
        [a_head.into(), Scalar::Int32(10).into()],
    ));
    let out2 = h.zeros(DType::Int32, &[5]);
    h.push(Instr::new(
        Opcode::Subtract,
        out2.clone(),
        [rev.into(), a.into()],
    ));
    h.ok();
    assert_eq!(h.get::<i32>(&out), [30, 0, 20, 0, 10]);
    assert_eq!(h.get::<i32>(&out2), [4, 2, 0, -2, -4]);
}

#[test]
fn stride_zero_broadcasts_repeat_elements() {
    let mut h = Harness::new();
    let col = h.put(F, &[1.0f64, 2.0, 3.0]);
    let row = h.put(F, &[10.0f64, 20.0, 30.0, 40.0]);
    let col_b = View::contiguous(col.base, F, &[3, 1])
        .broadcast_to(&[3, 4])
        .unwrap();
    let row_b = row.broadcast_to(&[3, 4]).unwrap();
    assert_eq!(col_b.strides.as_slice(), &[1, 0]);
    let out = h.zeros(F, &[3, 4]);
    h.push(Instr::new(
        Opcode::Add,
        out.clone(),
        [col_b.into(), row_b.into()],
    ));
    h.ok();
    let want: Vec<f64> = (1..=3)
        .flat_map(|c| (1..=4).map(move |r| c as f64 + 10.0 * r as f64))
        .collect();
    assert_eq!(h.get::<f64>(&out), want);
}

#[test]
fn transposed_inputs_are_read_in_the_output_order() {
    let mut h = Harness::new();
    let a = h.put(F, &[1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let at = View::contiguous(a.base, F, &[2, 3]).reversed_axes();
    let b = h.put(F, &[100.0f64, 200.0, 300.0, 400.0, 500.0, 600.0]);
    let b32 = View::contiguous(b.base, F, &[3, 2]);
    let out = h.zeros(F, &[3, 2]);
    let out_t = View::contiguous(out.base, F, &[2, 3]).reversed_axes();
    h.push(Instr::new(Opcode::Add, out_t, [at.into(), b32.into()]));
    h.ok();
    // out_t[i,j] = a[j,i] + b[i,j]; out is stored as out_t transposed.
    assert_eq!(
        h.get::<f64>(&View::contiguous(out.base, F, &[6])),
        [101.0, 302.0, 503.0, 204.0, 405.0, 606.0]
    );
}

#[test]
fn in_place_updates_use_each_old_value() {
    let mut h = Harness::new();
    let a = h.put(DType::Int64, &[1i64, 2, 3, 4]);
    let evens = a.slice(0, 0, 4, 2).unwrap();
    h.push(Instr::new(
        Opcode::Multiply,
        evens.clone(),
        [evens.clone().into(), evens.into()],
    ));
    h.push(Instr::new(
        Opcode::Add,
        a.clone(),
        [a.clone().into(), Scalar::Int64(1).into()],
    ));
    h.ok();
    assert_eq!(h.get::<i64>(&a), [2, 3, 10, 5]);
}

#[test]
fn contracted_bases_live_in_zeroed_scratch() {
    let mut h = Harness::new();
    let a = h.put(F, &[1.0f64, 2.0, 3.0]);
    let t = h.contracted(F, &[3]);
    let out = h.zeros(F, &[3]);
    h.push(Instr::new(
        Opcode::Multiply,
        t.clone(),
        [a.clone().into(), a.into()],
    ));
    h.push(Instr::new(
        Opcode::Add,
        out.clone(),
        [t.clone().into(), Scalar::Float64(1.0).into()],
    ));
    h.run_contracting(vec![t.base]).unwrap();
    assert_eq!(h.get::<f64>(&out), [2.0, 5.0, 10.0]);
}

#[test]
fn a_base_without_buffer_that_is_not_contracted_is_an_error() {
    let mut h = Harness::new();
    let t = h.contracted(F, &[3]);
    let out = h.zeros(F, &[3]);
    h.push(Instr::new(Opcode::Negative, out, [t.into()]));
    let e = h.run().unwrap_err().to_string();
    assert!(
        e.contains("instruction 0 (negative)") && e.contains("no buffer"),
        "{e}"
    );
}

#[test]
fn stats_count_kernels_and_time() {
    let mut h = Harness::new();
    let a = h.put(F, &[1.0f64]);
    h.push(Instr::new(Opcode::Negative, a.clone(), [a.into()]));
    h.ok();
    h.ok();
    let s = h.engine.stats();
    assert_eq!(s.kernels_run, 2);
    assert!(s.execute_seconds > 0.0);
    assert_eq!(h.engine.name(), "reference");
    assert!(h
        .engine
        .capabilities()
        .methods
        .iter()
        .any(|m| m == "matmul"));
}
