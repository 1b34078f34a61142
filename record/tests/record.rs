//! The recorder end to end on the reference stack: what both bridges now share, checked
//! by the values a flush computes.

use hassium_core::{BaseId, DType, Opcode, View};
use hassium_record::{self as record, Arg, Dest, ReduceSpec, Weak};
use hassium_vem::{Config, Runtime, DEFAULT_CONFIG};

fn runtime() -> Runtime {
    let env = vec![("HASSIUM_STACK".to_string(), "reference".to_string())];
    Runtime::with_config(Config::from_toml(DEFAULT_CONFIG, "default", env).unwrap()).unwrap()
}

fn read<T: Copy>(rt: &mut Runtime, v: &View) -> Vec<T> {
    assert_eq!(v.dtype.size(), std::mem::size_of::<T>());
    let c = record::cast_copy(rt, v, v.dtype).unwrap();
    rt.sync(c.base).unwrap();
    let p = rt.host_ptr(c.base).unwrap() as *const T;
    // SAFETY: `c` is a fresh contiguous base of `nelem` elements of T, synced above.
    let out = unsafe { std::slice::from_raw_parts(p, c.nelem()) }.to_vec();
    rt.free(c.base).unwrap();
    out
}

fn f64s(rt: &mut Runtime, shape: &[usize], values: &[f64]) -> View {
    let b = rt.new_base(DType::Float64, values.len());
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    rt.write_host(b.id, &bytes).unwrap();
    View::contiguous(b.id, DType::Float64, shape)
}

#[test]
fn weak_scalars_keep_the_arrays_dtype() {
    let mut rt = runtime();
    let a = f64s(&mut rt, &[3], &[1.0, 2.0, 3.0]);
    let a32 = record::cast_copy(&mut rt, &a, DType::Float32).unwrap();
    let args = [Arg::Array(a32), Arg::Weak(Weak::Float(0.5))];
    let r = record::elementwise(&mut rt, Opcode::Multiply, &args, &Dest::NEW, None).unwrap();
    assert_eq!(r.dtype, DType::Float32);
    assert_eq!(read::<f32>(&mut rt, &r), vec![0.5, 1.0, 1.5]);
    // An integer scalar the array's type cannot hold: refused, but compared exactly.
    let i8s = record::cast_copy(&mut rt, &a, DType::Int8).unwrap();
    let big = [Arg::Array(i8s), Arg::Weak(Weak::Int(300))];
    assert!(matches!(
        record::elementwise(&mut rt, Opcode::Add, &big, &Dest::NEW, None),
        Err(record::Error::IntOutOfBounds {
            value: 300,
            dtype: DType::Int8
        })
    ));
    let less = record::elementwise(&mut rt, Opcode::Less, &big, &Dest::NEW, None).unwrap();
    assert_eq!(read::<u8>(&mut rt, &less), vec![1, 1, 1]);
}

#[test]
fn argmin_over_all_axes_indexes_the_flattened_array() {
    let mut rt = runtime();
    let a = f64s(&mut rt, &[2, 3], &[5.0, 4.0, 9.0, 7.0, 1.0, 8.0]);
    // Transposed (not contiguous): the flattened order is a copy's C order.
    let t = a.transpose(&[1, 0]).unwrap();
    let spec = ReduceSpec {
        op: Opcode::ArgminReduce,
        name: "argmin",
        axes: None,
        dtype: None,
        keepdims: false,
        initial: None,
    };
    let r = record::reduce(&mut rt, &t, &spec, None).unwrap();
    assert_eq!(r.shape.len(), 0);
    // t is [[5, 7], [4, 1], [9, 8]]: the minimum 1 is at flat index 3.
    assert_eq!(read::<i64>(&mut rt, &r), vec![3]);
}

#[test]
fn a_scatter_of_values_read_from_its_target_reads_them_before_writing() {
    let mut rt = runtime();
    let t = f64s(&mut rt, &[4], &[1.0, 2.0, 3.0, 4.0]);
    let idx = record::arange(&mut rt, Weak::Int(0), Weak::Int(1), 4, DType::Int64).unwrap();
    let reversed = t.transpose(&[0]).unwrap();
    let reversed = View {
        offset: 3,
        strides: reversed.strides.iter().map(|s| -s).collect(),
        ..reversed
    };
    let (i, v) = (Arg::Array(idx), Arg::Array(reversed));
    record::scatter(&mut rt, Opcode::Scatter, &t, &i, &v, None).unwrap();
    assert_eq!(read::<f64>(&mut rt, &t), vec![4.0, 3.0, 2.0, 1.0]);
}

#[test]
fn a_reduction_into_part_of_its_input_sees_the_input_unchanged() {
    let mut rt = runtime();
    let a = f64s(&mut rt, &[2, 2], &[1.0, 2.0, 3.0, 4.0]);
    let row = a.index(0, 0).unwrap();
    let spec = ReduceSpec {
        op: Opcode::AddReduce,
        name: "add",
        axes: Some(vec![0]),
        dtype: None,
        keepdims: false,
        initial: None,
    };
    let r = record::reduce(&mut rt, &a, &spec, Some(&row)).unwrap();
    assert_eq!(r, row);
    assert_eq!(read::<f64>(&mut rt, &a), vec![4.0, 6.0, 3.0, 4.0]);
}

#[test]
fn stacked_matrix_vector_products_match_the_plain_sum() {
    let mut rt = runtime();
    let (b, n, k) = (2, 3, 4);
    let av: Vec<f64> = (0..b * n * k).map(|i| (i % 7) as f64 - 3.0).collect();
    let xv: Vec<f64> = (0..b * k).map(|i| i as f64 * 0.5).collect();
    let a = f64s(&mut rt, &[b, n, k], &av);
    let x = f64s(&mut rt, &[b, k, 1], &xv);
    let r = record::matmul(&mut rt, &a, &x, None).unwrap();
    assert_eq!(&r.shape[..], &[b, n, 1]);
    let want: Vec<f64> = (0..b * n)
        .map(|bi_n| {
            let (bi, i) = (bi_n / n, bi_n % n);
            (0..k)
                .map(|j| av[(bi * n + i) * k + j] * xv[bi * k + j])
                .sum()
        })
        .collect();
    assert_eq!(read::<f64>(&mut rt, &r), want);
}

#[test]
fn a_refused_operation_leaves_no_base_behind() {
    let mut rt = runtime();
    let a = f64s(&mut rt, &[3], &[1.0, 2.0, 3.0]);
    let first = rt.new_base(DType::Float64, 1).id;
    // Refused after it made a base: the float32 input is cast into a temporary, and the
    // cast is refused because the input's base does not exist.
    let ghost = View::contiguous(BaseId(first.0 + 1000), DType::Float32, &[3]);
    let args = [Arg::Array(ghost), Arg::Array(a)];
    assert!(record::elementwise(&mut rt, Opcode::Add, &args, &Dest::NEW, None).is_err());
    rt.flush().unwrap();
    let last = rt.new_base(DType::Float64, 1).id;
    assert!(
        last.0 > first.0 + 1,
        "the operation made no base: the test checks nothing"
    );
    for id in first.0 + 1..last.0 {
        assert!(rt.base(BaseId(id)).is_none(), "base {id} was left behind");
    }
}
