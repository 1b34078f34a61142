//! Reductions and scans over every axis of non-contiguous 3-D views, for every allowed
//! dtype, against folds computed here; plus identities, NaN rules and pairwise sums.

mod common;
use common::*;
use hassium_core::{DType, Instr, Opcode, TypeSet, View};

/// A (2, 3, 4) view with strides (24, 8, 2) (every other element of a (2, 3, 8) base),
/// and its transpose (4, 3, 2).
fn views(h: &mut Harness, t: DType) -> (Vec<f64>, Vec<View>) {
    let signed = t.is_signed_integer() || t.is_float();
    let vals: Vec<f64> = (0..48)
        .map(|k| {
            let v = ((k * 7) % 5) as f64;
            if t.is_bool() {
                (k % 3 == 0) as u8 as f64
            } else if signed {
                v - 1.0
            } else {
                v
            }
        })
        .collect();
    let base = h.put_f64(t, &vals);
    let strided = View::contiguous(base.base, t, &[2, 3, 8])
        .slice(2, 0, 8, 2)
        .unwrap();
    let transposed = strided.transpose(&[2, 1, 0]).unwrap();
    (vals, vec![strided, transposed])
}

/// The values of `view` along `axis` for each output position, from the test's own
/// offsets.
fn lanes(vals: &[f64], view: &View, axis: usize) -> Vec<Vec<f64>> {
    let mut outer = view.clone();
    outer.shape.remove(axis);
    outer.strides.remove(axis);
    offsets(&outer)
        .into_iter()
        .map(|o| {
            (0..view.shape[axis])
                .map(|j| vals[(o + j as isize * view.strides[axis]) as usize])
                .collect()
        })
        .collect()
}

fn fold(op: Opcode, t: DType, lane: &[f64]) -> f64 {
    let ints = |f: fn(i64, i64) -> i64| lane.iter().map(|&v| v as i64).reduce(f).unwrap() as f64;
    let first_of = |better: fn(f64, f64) -> bool| {
        let mut at = 0;
        for (j, &v) in lane.iter().enumerate() {
            if better(v, lane[at]) {
                at = j;
            }
        }
        at as f64
    };
    match op {
        Opcode::AddReduce if t.is_bool() => lane.iter().any(|&v| v != 0.0) as u8 as f64,
        Opcode::MultiplyReduce if t.is_bool() => lane.iter().all(|&v| v != 0.0) as u8 as f64,
        Opcode::AddReduce => lane.iter().sum(),
        Opcode::MultiplyReduce => lane.iter().product(),
        Opcode::MinimumReduce => lane.iter().copied().fold(f64::INFINITY, f64::min),
        Opcode::MaximumReduce => lane.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        Opcode::LogicalAndReduce => lane.iter().all(|&v| v != 0.0) as u8 as f64,
        Opcode::LogicalOrReduce => lane.iter().any(|&v| v != 0.0) as u8 as f64,
        Opcode::LogicalXorReduce => (lane.iter().filter(|&&v| v != 0.0).count() % 2) as f64,
        Opcode::BitwiseAndReduce if t.is_bool() => lane.iter().all(|&v| v != 0.0) as u8 as f64,
        Opcode::BitwiseOrReduce if t.is_bool() => lane.iter().any(|&v| v != 0.0) as u8 as f64,
        Opcode::BitwiseXorReduce if t.is_bool() => {
            (lane.iter().filter(|&&v| v != 0.0).count() % 2) as f64
        }
        Opcode::BitwiseAndReduce => ints(|a, b| a & b),
        Opcode::BitwiseOrReduce => ints(|a, b| a | b),
        Opcode::BitwiseXorReduce => ints(|a, b| a ^ b),
        Opcode::ArgminReduce => first_of(|v, best| v < best),
        Opcode::ArgmaxReduce => first_of(|v, best| v > best),
        other => panic!("no fold for {other:?}"),
    }
}

#[test]
fn every_reduction_over_every_axis_of_strided_and_transposed_views_matches_a_fold() {
    let mut checked = 0;
    for &op in Opcode::ALL.iter().filter(|o| o.is_reduction()) {
        for t in op.info().types.without(TypeSet::COMPLEX).iter() {
            let mut h = Harness::new();
            let (vals, vs) = views(&mut h, t);
            let out_t = op.out_dtype(t).unwrap();
            let mut jobs = vec![];
            for v in &vs {
                for axis in 0..3 {
                    let mut shape = v.shape.clone();
                    shape.remove(axis);
                    let out = h.zeros(out_t, &shape);
                    h.push(Instr::new(op, out.clone(), [v.clone().into()]).with_axis(axis));
                    jobs.push((v.clone(), axis, out));
                }
            }
            h.ok();
            for (v, axis, out) in jobs {
                let want: Vec<f64> = lanes(&vals, &v, axis)
                    .iter()
                    .map(|l| round_to(out_t, fold(op, t, l)))
                    .collect();
                assert_close(
                    &h.get_f64(&out),
                    &want,
                    tolerance(out_t),
                    &format!("{} {} axis {axis}", op.name(), t.name()),
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 300, "{checked}");
}

#[test]
fn scans_over_every_axis_match_running_folds() {
    for op in [
        Opcode::AddAccumulate,
        Opcode::MultiplyAccumulate,
        Opcode::MinimumAccumulate,
        Opcode::MaximumAccumulate,
    ] {
        for t in op.info().types.without(TypeSet::COMPLEX).iter() {
            let mut h = Harness::new();
            let (vals, vs) = views(&mut h, t);
            let mut jobs = vec![];
            for v in &vs {
                for axis in 0..3 {
                    // Write the scan into a transposed output to exercise its strides too.
                    let out = h.zeros(t, &v.shape);
                    h.push(Instr::new(op, out.clone(), [v.clone().into()]).with_axis(axis));
                    jobs.push((v.clone(), axis, out));
                }
            }
            h.ok();
            for (v, axis, out) in jobs {
                let got = h.get_f64(&out);
                // Rebuild the expected array in the output's row-major order.
                let mut want = vec![0.0; got.len()];
                let mut outer = out.clone();
                outer.shape.remove(axis);
                outer.strides.remove(axis);
                for (lane, o) in lanes(&vals, &v, axis).iter().zip(offsets(&outer)) {
                    let mut acc: Option<f64> = None;
                    for (j, &x) in lane.iter().enumerate() {
                        let next = match acc {
                            None => x,
                            Some(a) => match op {
                                Opcode::AddAccumulate => round_to(t, a + x),
                                Opcode::MultiplyAccumulate => round_to(t, a * x),
                                Opcode::MinimumAccumulate => a.min(x),
                                _ => a.max(x),
                            },
                        };
                        acc = Some(next);
                        want[(o + j as isize * out.strides[axis]) as usize] = next;
                    }
                }
                assert_close(
                    &got,
                    &want,
                    tolerance(t),
                    &format!("{} {} axis {axis}", op.name(), t.name()),
                );
            }
        }
    }
}

#[test]
fn scans_run_in_place_on_the_identical_view() {
    let mut h = Harness::new();
    let a = h.put(DType::Int32, &[1i32, 2, 3, 4]);
    h.push(Instr::new(Opcode::AddAccumulate, a.clone(), [a.clone().into()]).with_axis(0));
    h.ok();
    assert_eq!(h.get::<i32>(&a), [1, 3, 6, 10]);
}

#[test]
fn empty_axes_reduce_to_the_identity() {
    let mut h = Harness::new();
    let cases = [
        (Opcode::AddReduce, DType::Float64, 0.0),
        (Opcode::MultiplyReduce, DType::Int16, 1.0),
        (Opcode::BitwiseAndReduce, DType::Int32, -1.0),
        (Opcode::BitwiseAndReduce, DType::UInt8, 255.0),
        (Opcode::BitwiseOrReduce, DType::UInt8, 0.0),
        (Opcode::LogicalAndReduce, DType::Bool, 1.0),
        (Opcode::LogicalOrReduce, DType::Bool, 0.0),
    ];
    let mut outs = vec![];
    for (op, t, _) in cases {
        let src = h.zeros(t, &[1]);
        let empty = View::contiguous(src.base, t, &[3, 0]);
        let out = h.put_f64(t, &[7.0, 7.0, 7.0]);
        h.push(Instr::new(op, out.clone(), [empty.into()]).with_axis(1));
        outs.push(out);
    }
    h.ok();
    for ((op, t, want), out) in cases.iter().zip(outs) {
        assert_same(
            &h.get_f64(&out),
            &[*want; 3],
            &format!("{} {}", op.name(), t.name()),
        );
    }
}

#[test]
fn min_and_max_of_an_empty_axis_are_errors() {
    let mut h = Harness::new();
    let src = h.zeros(DType::Float32, &[1]);
    let empty = View::contiguous(src.base, DType::Float32, &[0]);
    let out = h.zeros(DType::Float32, &[1]).index(0, 0).unwrap();
    h.push(Instr::new(Opcode::MaximumReduce, out, [empty.into()]).with_axis(0));
    let e = h.run().unwrap_err().to_string();
    assert!(
        e.contains("zero-size array to reduction operation maximum which has no identity"),
        "{e}"
    );
}

#[test]
fn nan_propagates_through_min_max_and_wins_argmin_argmax() {
    let nan = f64::NAN;
    let mut h = Harness::new();
    let a = h.put(DType::Float64, &[1.0f64, nan, 5.0, nan, -3.0]);
    let b = h.put(DType::Float64, &[2.0f64, 9.0, 9.0, -1.0]);
    let fo: Vec<View> = (0..4)
        .map(|_| h.zeros(DType::Int64, &[1]).index(0, 0).unwrap())
        .collect();
    let mx = h.zeros(DType::Float64, &[1]).index(0, 0).unwrap();
    let mn = h.zeros(DType::Float64, &[1]).index(0, 0).unwrap();
    h.push(Instr::new(Opcode::ArgmaxReduce, fo[0].clone(), [a.clone().into()]).with_axis(0));
    h.push(Instr::new(Opcode::ArgminReduce, fo[1].clone(), [a.clone().into()]).with_axis(0));
    h.push(Instr::new(Opcode::ArgmaxReduce, fo[2].clone(), [b.clone().into()]).with_axis(0));
    h.push(Instr::new(Opcode::ArgminReduce, fo[3].clone(), [b.clone().into()]).with_axis(0));
    h.push(Instr::new(Opcode::MaximumReduce, mx.clone(), [a.clone().into()]).with_axis(0));
    h.push(Instr::new(Opcode::MinimumReduce, mn.clone(), [a.into()]).with_axis(0));
    h.ok();
    let idx: Vec<i64> = fo.iter().map(|o| h.get::<i64>(o)[0]).collect();
    assert_eq!(
        idx,
        [1, 1, 1, 3],
        "first NaN wins; first of repeated maxima"
    );
    assert!(h.get::<f64>(&mx)[0].is_nan() && h.get::<f64>(&mn)[0].is_nan());
}

#[test]
fn float_sums_are_pairwise_like_numpy() {
    let mut h = Harness::new();
    let n = 100_000;
    let a = h.put(DType::Float32, &vec![0.1f32; n]);
    let out = h.zeros(DType::Float32, &[1]).index(0, 0).unwrap();
    h.push(Instr::new(Opcode::AddReduce, out.clone(), [a.into()]).with_axis(0));
    let halves = h.put(DType::Float16, &vec![half::f16::ONE; 3000]);
    let hout = h.zeros(DType::Float16, &[1]).index(0, 0).unwrap();
    h.push(Instr::new(Opcode::AddReduce, hout.clone(), [halves.into()]).with_axis(0));
    h.ok();
    let naive = (0..n).fold(0f32, |acc, _| acc + 0.1);
    let got = h.get::<f32>(&out)[0];
    assert!(
        (naive - 10000.0).abs() > 1.0,
        "naive summation drifts: {naive}"
    );
    assert!((got - 10000.0).abs() < 0.01, "pairwise sum {got}");
    // float16 sums accumulate in f32 (a float16 accumulator would stop at 2048).
    assert_eq!(h.get::<half::f16>(&hout)[0], half::f16::from_f32(3000.0));
}

#[test]
fn a_sum_of_negative_zeros_is_positive_zero_like_numpy() {
    let mut h = Harness::new();
    let a = h.put(DType::Float64, &[-0.0f64, -0.0]);
    let out = h.zeros(DType::Float64, &[1]).index(0, 0).unwrap();
    let cum = h.zeros(DType::Float64, &[2]);
    h.push(Instr::new(Opcode::AddReduce, out.clone(), [a.clone().into()]).with_axis(0));
    h.push(Instr::new(Opcode::AddAccumulate, cum.clone(), [a.into()]).with_axis(0));
    h.ok();
    assert_same(&h.get_f64(&out), &[0.0], "sum");
    assert_same(&h.get_f64(&cum), &[-0.0, -0.0], "cumsum");
}

#[test]
fn complex_reductions_and_scans_combine_both_parts() {
    let mut h = Harness::new();
    let z = h.put_c64(DType::Complex128, &[(1.0, 1.0), (2.0, -1.0), (0.0, 3.0)]);
    let s = h.zeros(DType::Complex128, &[1]).index(0, 0).unwrap();
    let p = h.zeros(DType::Complex128, &[1]).index(0, 0).unwrap();
    let cp = h.zeros(DType::Complex64, &[3]);
    let z64 = h.put_c64(DType::Complex64, &[(1.0, 1.0), (2.0, -1.0), (0.0, 3.0)]);
    h.push(Instr::new(Opcode::AddReduce, s.clone(), [z.clone().into()]).with_axis(0));
    h.push(Instr::new(Opcode::MultiplyReduce, p.clone(), [z.into()]).with_axis(0));
    h.push(Instr::new(Opcode::MultiplyAccumulate, cp.clone(), [z64.into()]).with_axis(0));
    h.ok();
    assert_eq!(h.get_c64(&s), [(3.0, 3.0)]);
    // (1+i)(2-i) = 3+i; (3+i)(3i) = -3+9i
    assert_eq!(h.get_c64(&p), [(-3.0, 9.0)]);
    assert_eq!(h.get_c64(&cp), [(1.0, 1.0), (3.0, 1.0), (-3.0, 9.0)]);
}
