//! gather/scatter family, range, random and matmul.

mod common;
use common::*;
use hassium_core::{philox, DType, Instr, Opcode, Scalar, View};
use num_complex::Complex;

#[test]
fn gather_reads_negative_indices_from_the_end_of_a_strided_source() {
    let mut h = Harness::new();
    let src = h.put(
        DType::Float32,
        &[0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0],
    );
    let odd_rev = src.slice(0, 9, -1, -2).unwrap(); // 9, 7, 5, 3, 1
    let idx = h.put(DType::Int64, &[0i64, -1, 2, -5, 4, 1]);
    let idx2 = View::contiguous(idx.base, DType::Int64, &[2, 3]);
    let out = h.zeros(DType::Float32, &[2, 3]);
    h.push(Instr::new(
        Opcode::Gather,
        out.clone(),
        [odd_rev.into(), idx2.into()],
    ));
    h.ok();
    assert_eq!(h.get::<f32>(&out), [9.0, 1.0, 5.0, 9.0, 1.0, 7.0]);
}

#[test]
fn out_of_range_indices_fail_with_numpys_message_and_write_nothing() {
    for (op, bad) in [
        (Opcode::Gather, 7i64),
        (Opcode::Scatter, -6),
        (Opcode::ScatterAdd, 5),
        (Opcode::CondScatter, 9),
    ] {
        let mut h = Harness::new();
        let data = h.put(DType::Int32, &[1i32, 2, 3, 4, 5]);
        let idx = h.put(DType::Int64, &[0i64, bad]);
        let out = h.put(DType::Int32, &[-1i32, -1]);
        let instr = match op {
            Opcode::Gather => Instr::new(op, out.clone(), [data.clone().into(), idx.into()]),
            Opcode::CondScatter => {
                let mask = h.put(DType::Bool, &[true, true]);
                Instr::new(
                    op,
                    data.clone(),
                    [idx.into(), out.clone().into(), mask.into()],
                )
            }
            _ => Instr::new(op, data.clone(), [idx.into(), out.clone().into()]),
        };
        h.push(instr);
        let e = h.run().unwrap_err().to_string();
        let want = format!("index {bad} is out of bounds for axis 0 with size 5");
        assert!(
            e.contains(&want) && e.contains(&format!("instruction 0 ({})", op.name())),
            "{e}"
        );
        assert_eq!(h.get::<i32>(&data), [1, 2, 3, 4, 5], "{}", op.name());
        assert_eq!(h.get::<i32>(&out), [-1, -1], "{}", op.name());
    }
}

#[test]
fn scatter_writes_in_order_and_the_last_repeated_index_wins() {
    let mut h = Harness::new();
    let target = h.put(DType::Int64, &[0i64; 6]);
    let every_other = target.slice(0, 0, 6, 2).unwrap(); // elements 0, 2, 4
    let idx = h.put(DType::Int64, &[2i64, -3, 2]);
    let val = h.put(DType::Int64, &[10i64, 20, 30]);
    h.push(Instr::new(
        Opcode::Scatter,
        every_other,
        [idx.clone().into(), val.into()],
    ));
    let t2 = h.put(DType::UInt8, &[0u8; 3]);
    h.push(Instr::new(
        Opcode::Scatter,
        t2.clone(),
        [idx.into(), Scalar::UInt8(9).into()],
    ));
    h.ok();
    assert_eq!(h.get::<i64>(&target), [20, 0, 0, 0, 30, 0]);
    assert_eq!(h.get::<u8>(&t2), [9, 0, 9]);
}

#[test]
fn cond_scatter_writes_only_where_the_mask_is_true_and_ignores_masked_out_indices() {
    let mut h = Harness::new();
    let target = h.put(DType::Float64, &[0.0f64; 4]);
    let idx = h.put(DType::Int64, &[0i64, 99, 3]);
    let val = h.put(DType::Float64, &[1.5f64, 2.5, 3.5]);
    let mask = h.put(DType::Bool, &[true, false, true]);
    h.push(Instr::new(
        Opcode::CondScatter,
        target.clone(),
        [idx.into(), val.into(), mask.into()],
    ));
    h.ok();
    assert_eq!(h.get::<f64>(&target), [1.5, 0.0, 0.0, 3.5]);
}

#[test]
fn scatter_add_accumulates_repeated_indices_like_np_add_at() {
    let mut h = Harness::new();
    let target = h.put(DType::Int8, &[1i8, 1, 1]);
    let idx = h.put(DType::Int64, &[0i64, 0, -1, 0]);
    let val = h.put(DType::Int8, &[100i8, 100, 5, 1]);
    h.push(Instr::new(
        Opcode::ScatterAdd,
        target.clone(),
        [idx.clone().into(), val.into()],
    ));
    let b = h.put(DType::Bool, &[false, false, false]);
    h.push(Instr::new(
        Opcode::ScatterAdd,
        b.clone(),
        [idx.into(), Scalar::Bool(true).into()],
    ));
    h.ok();
    assert_eq!(
        h.get::<i8>(&target),
        [
            (1i8).wrapping_add(100).wrapping_add(100).wrapping_add(1),
            1,
            6
        ]
    );
    assert_eq!(h.get::<u8>(&b), [1, 0, 1]);
}

#[test]
fn range_numbers_the_output_in_row_major_order_and_casts() {
    let mut h = Harness::new();
    let f = h.zeros(DType::Float64, &[2, 3]);
    let ft = View::contiguous(f.base, DType::Float64, &[3, 2]).reversed_axes();
    let i8s = h.zeros(DType::Int8, &[130]);
    h.push(Instr::new(Opcode::Range, ft, []));
    h.push(Instr::new(Opcode::Range, i8s.clone(), []));
    h.ok();
    // ft[i, j] = 3 * i + j is stored at f[j * 2 + i].
    assert_eq!(
        h.get::<f64>(&View::contiguous(f.base, DType::Float64, &[6])),
        [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
    );
    let got = h.get::<i8>(&i8s);
    assert_eq!(&got[126..], &[126, 127, -128, -127]);
}

#[test]
fn random_gives_philox_words_by_linear_index_and_stream() {
    let mut h = Harness::new();
    let out = h.zeros(DType::UInt64, &[2, 3]);
    let rev = out.slice(1, 2, -1, -1).unwrap();
    let other = h.zeros(DType::UInt64, &[6]);
    h.push(Instr::new(
        Opcode::Random,
        rev,
        [Scalar::UInt64(42).into(), Scalar::UInt64(7).into()],
    ));
    h.push(Instr::new(
        Opcode::Random,
        other.clone(),
        [Scalar::UInt64(42).into(), Scalar::UInt64(8).into()],
    ));
    h.ok();
    let w = |s, i| philox::random_u64(42, s, i);
    assert_eq!(
        h.get::<u64>(&out),
        [w(7, 2), w(7, 1), w(7, 0), w(7, 5), w(7, 4), w(7, 3)]
    );
    assert_eq!(
        h.get::<u64>(&other),
        (0..6).map(|i| w(8, i)).collect::<Vec<_>>()
    );
    assert_ne!(h.get::<u64>(&other)[0], w(7, 0));
}

#[test]
fn matmul_multiplies_integer_float_and_complex_matrices() {
    let mut h = Harness::new();
    let a = h.put(DType::Int32, &[1i32, 2, 3, 4, 5, 6]);
    let b = h.put(DType::Int32, &[7i32, 8, 9, 10, 11, 12]);
    let (a23, b32) = (
        View::contiguous(a.base, DType::Int32, &[2, 3]),
        View::contiguous(b.base, DType::Int32, &[3, 2]),
    );
    let c = h.zeros(DType::Int32, &[2, 2]);
    h.push(Instr::extension(
        "matmul",
        c.clone(),
        [a23.into(), b32.into()],
    ));
    // A transposed operand: a (2,3) @ (b viewed as (2,3)).T
    let af = h.put(DType::Float64, &[1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let a23f = View::contiguous(af.base, DType::Float64, &[2, 3]);
    let bf = h.put(DType::Float64, &[7.0f64, 8.0, 9.0, 10.0, 11.0, 12.0]);
    let btf = View::contiguous(bf.base, DType::Float64, &[2, 3]).reversed_axes();
    let cf = h.zeros(DType::Float64, &[2, 2]);
    h.push(Instr::extension(
        "matmul",
        cf.clone(),
        [a23f.into(), btf.into()],
    ));
    let i8a = h.put(DType::Int8, &[100i8, 100]);
    let i8b = h.put(DType::Int8, &[2i8, 1]);
    let ci8 = h.zeros(DType::Int8, &[1, 1]);
    h.push(Instr::extension(
        "matmul",
        ci8.clone(),
        [
            View::contiguous(i8a.base, DType::Int8, &[1, 2]).into(),
            View::contiguous(i8b.base, DType::Int8, &[2, 1]).into(),
        ],
    ));
    let za = h.put(
        DType::Complex128,
        &[Complex::new(1.0f64, 1.0), Complex::new(0.0, 2.0)],
    );
    let zb = h.put(
        DType::Complex128,
        &[Complex::new(2.0f64, 0.0), Complex::new(1.0, -1.0)],
    );
    let cz = h.zeros(DType::Complex128, &[1, 1]);
    h.push(Instr::extension(
        "matmul",
        cz.clone(),
        [
            View::contiguous(za.base, DType::Complex128, &[1, 2]).into(),
            View::contiguous(zb.base, DType::Complex128, &[2, 1]).into(),
        ],
    ));
    h.ok();
    assert_eq!(h.get::<i32>(&c), [58, 64, 139, 154]);
    assert_eq!(h.get::<f64>(&cf), [50.0, 68.0, 122.0, 167.0]);
    assert_eq!(h.get::<i8>(&ci8), [(300i32 as i8)]);
    // (1+i)*2 + 2i*(1-i) = 2+2i + 2i+2 = 4+4i
    assert_eq!(h.get::<Complex<f64>>(&cz), [Complex::new(4.0, 4.0)]);
}

#[test]
fn matmul_of_an_empty_inner_dimension_is_zero() {
    let mut h = Harness::new();
    let a = h.zeros(DType::Float32, &[1]);
    let c = h.put(DType::Float32, &[5.0f32; 4]);
    let a20 = View::contiguous(a.base, DType::Float32, &[2, 0]);
    let b02 = View::contiguous(a.base, DType::Float32, &[0, 2]);
    h.push(Instr::extension(
        "matmul",
        View::contiguous(c.base, DType::Float32, &[2, 2]),
        [a20.into(), b02.into()],
    ));
    h.ok();
    assert_eq!(h.get::<f32>(&c), [0.0; 4]);
}
