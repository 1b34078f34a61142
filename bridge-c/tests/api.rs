//! The C API computes what NumPy would, called from Rust through the exported functions.

mod common;
use common::*;
use hassium::*;

#[test]
fn add_broadcasts_a_row_over_a_column_and_promotes_scalars_weakly() {
    setup();
    let col = f64s(&[3, 1], &[1.0, 2.0, 3.0]);
    let row = f64s(&[2], &[10.0, 20.0]);
    let s = hs_add(hs_arr(col), hs_arr(row));
    assert_eq!(shape(s), vec![3, 2]);
    assert_eq!(values(s), vec![11.0, 21.0, 12.0, 22.0, 13.0, 23.0]);
    // A float32 array times a (weak) double stays float32, as in NumPy 2.
    let f = hs_astype(col, HS_FLOAT32);
    let h = hs_multiply(hs_arr(f), hs_float(0.5));
    assert_eq!(hs_dtype_of(h), HS_FLOAT32);
    assert_eq!(values(h), vec![0.5, 1.0, 1.5]);
    // int32 + float32 arrays promote to float64.
    let i = hs_astype(col, HS_INT32);
    let p = hs_add(hs_arr(i), hs_arr(f));
    assert_eq!(hs_dtype_of(p), HS_FLOAT64);
    free(&[col, row, s, f, h, i, p]);
}

#[test]
fn integer_division_and_comparisons_follow_numpy() {
    setup();
    let a = hs_range(HS_INT64, -3.0, 1.0, 6); // -3..3
    let d = hs_divide(hs_arr(a), hs_int(2));
    assert_eq!(hs_dtype_of(d), HS_FLOAT64);
    assert_eq!(values(d), vec![-1.5, -1.0, -0.5, 0.0, 0.5, 1.0]);
    let fd = hs_floor_divide(hs_arr(a), hs_int(2));
    assert_eq!(hs_dtype_of(fd), HS_INT64);
    assert_eq!(values(fd), vec![-2.0, -1.0, -1.0, 0.0, 0.0, 1.0]);
    let r = hs_remainder(hs_arr(a), hs_int(2));
    assert_eq!(values(r), vec![1.0, 0.0, 1.0, 0.0, 1.0, 0.0]);
    let lt = hs_less(hs_arr(a), hs_int(0));
    assert_eq!(hs_dtype_of(lt), HS_BOOL);
    assert_eq!(values(lt), vec![1.0, 1.0, 1.0, 0.0, 0.0, 0.0]);
    let w = hs_where(hs_arr(lt), hs_int(0), hs_arr(a));
    assert_eq!(values(w), vec![0.0, 0.0, 0.0, 0.0, 1.0, 2.0]);
    free(&[a, d, fd, r, lt, w]);
}

#[test]
fn math_on_integers_runs_in_float() {
    setup();
    let a = hs_range(HS_INT32, 0.0, 1.0, 4);
    let s = hs_sqrt(a);
    assert_eq!(hs_dtype_of(s), HS_FLOAT64);
    assert_eq!(values(s), vec![0.0, 1.0, 2f64.sqrt(), 3f64.sqrt()]);
    let e = hs_exp(a);
    assert!((values(e)[2] - 2f64.exp()).abs() < 1e-15);
    free(&[a, s, e]);
}

#[test]
fn reductions_take_an_axis_or_all_and_widen_small_integers() {
    setup();
    let a = f64s(&[2, 3], &[1.0, 5.0, 3.0, 4.0, 2.0, 6.0]);
    let s0 = hs_sum(a, 0);
    assert_eq!(values(s0), vec![5.0, 7.0, 9.0]);
    let s1 = hs_sum(a, -1);
    assert_eq!(values(s1), vec![9.0, 12.0]);
    let all = hs_sum(a, HS_AXIS_ALL);
    assert_eq!(hs_ndim(all), 0);
    let mut total = 0.0;
    // SAFETY: `total` is a live double.
    assert_eq!(unsafe { hs_item(all, &mut total) }, hs_status::HS_OK);
    assert_eq!(total, 21.0);
    let mx = hs_max(a, HS_AXIS_ALL);
    assert_eq!(values(mx), vec![6.0]);
    let mn = hs_min(a, 1);
    assert_eq!(values(mn), vec![1.0, 2.0]);
    let am = hs_argmax(a, HS_AXIS_ALL);
    assert_eq!(hs_dtype_of(am), HS_INT64);
    assert_eq!(values(am), vec![5.0]);
    let am1 = hs_argmin(a, 1);
    assert_eq!(values(am1), vec![0.0, 1.0]);
    let p = hs_prod(a, 0);
    assert_eq!(values(p), vec![4.0, 10.0, 18.0]);
    let b = hs_astype(a, HS_UINT8);
    let bs = hs_sum(b, HS_AXIS_ALL);
    assert_eq!(hs_dtype_of(bs), HS_UINT64);
    free(&[a, s0, s1, all, mx, mn, am, am1, p, b, bs]);
}

#[test]
fn scans_accumulate_along_an_axis_or_the_flattened_array() {
    setup();
    let a = f64s(&[2, 2], &[1.0, 2.0, 3.0, 4.0]);
    let c0 = hs_cumsum(a, 0);
    assert_eq!(values(c0), vec![1.0, 2.0, 4.0, 6.0]);
    let flat = hs_cumprod(a, HS_AXIS_ALL);
    assert_eq!(shape(flat), vec![4]);
    assert_eq!(values(flat), vec![1.0, 2.0, 6.0, 24.0]);
    free(&[a, c0, flat]);
}

#[test]
fn views_slice_index_transpose_reshape_and_broadcast() {
    setup();
    let a = f64s(&[2, 3], &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    let rev = hs_slice(a, 1, HS_NONE, HS_NONE, -1);
    assert_eq!(values(rev), vec![2.0, 1.0, 0.0, 5.0, 4.0, 3.0]);
    let tail = hs_slice(a, -1, -2, HS_NONE, 1);
    assert_eq!(values(tail), vec![1.0, 2.0, 4.0, 5.0]);
    let clamp = hs_slice(a, 0, -100, 100, 1);
    assert_eq!(shape(clamp), vec![2, 3]);
    let row = hs_index(a, 0, -1);
    assert_eq!(values(row), vec![3.0, 4.0, 5.0]);
    // SAFETY: a NULL perm is allowed.
    let t = unsafe { hs_transpose(a, std::ptr::null()) };
    assert_eq!(values(t), vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
    let perm = [1i64, 0];
    // SAFETY: perm holds ndim values.
    let t2 = unsafe { hs_transpose(a, perm.as_ptr()) };
    assert_eq!(values(t2), values(t));
    // A transposed array cannot be reshaped as a view: the API copies.
    let shape6 = [-1i64];
    // SAFETY: shape6 holds 1 value.
    let flat = unsafe { hs_reshape(t, 1, shape6.as_ptr()) };
    assert_eq!(values(flat), vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
    // Any negative extent is the inferred one, as in NumPy.
    let shape32 = [3i64, -2];
    // SAFETY: shape32 holds 2 values.
    let cols = unsafe { hs_reshape(a, 2, shape32.as_ptr()) };
    assert_eq!(shape(cols), vec![3, 2]);
    assert_eq!(values(cols), vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    let to = [4usize, 2, 3];
    // SAFETY: `to` holds 3 extents.
    let b = unsafe { hs_broadcast_to(a, 3, to.as_ptr()) };
    assert_eq!(values(b).len(), 24);
    let strides = hs_strides(b);
    // SAFETY: hs_strides points to ndim strides while b lives.
    assert_eq!(
        unsafe { std::slice::from_raw_parts(strides, 3) },
        &[0, 3, 1]
    );
    free(&[a, rev, tail, clamp, row, t, t2, flat, cols, b]);
}

#[test]
fn assigning_into_a_view_updates_its_base_and_views_outlive_their_parent() {
    setup();
    let z = [5usize];
    // SAFETY: z holds 1 extent.
    let a = unsafe { hs_zeros(HS_FLOAT64, 1, z.as_ptr()) };
    let mid = hs_slice(a, 0, 1, 4, 1);
    assert_eq!(hs_assign(mid, hs_float(7.0)), hs_status::HS_OK);
    // In-place with overlapping (shifted) views: NumPy semantics, the input is read first.
    let head = hs_slice(a, 0, 0, 4, 1);
    let tail = hs_slice(a, 0, 1, 5, 1);
    assert_eq!(hs_assign(tail, hs_arr(head)), hs_status::HS_OK);
    free(&[head, tail]);
    assert_eq!(hs_free(a), hs_status::HS_OK);
    // `mid` still holds the base alive.
    let whole = hs_slice(mid, 0, HS_NONE, HS_NONE, 1);
    assert_eq!(values(whole), vec![0.0, 7.0, 7.0]);
    free(&[mid, whole]);
}

#[test]
fn generic_entry_writes_into_an_existing_array_with_a_cast() {
    setup();
    let a = f64s(&[3], &[1.5, 2.5, 3.5]);
    let n = [3usize];
    // SAFETY: n holds 1 extent.
    let out = unsafe { hs_empty(HS_INT32, 1, n.as_ptr()) };
    let ins = [hs_arr(a), hs_float(1.0)];
    // SAFETY: ins holds 2 operands.
    let st = unsafe { hs_op(HS_OP_ADD, out, ins.as_ptr(), 2, 0) };
    assert_eq!(st, hs_status::HS_OK, "{}", last_error());
    assert_eq!(values(out), vec![2.0, 3.0, 4.0]);
    // Reductions through the generic entry take the axis argument.
    let one = [hs_arr(a)];
    // SAFETY: one holds 1 operand.
    let s = unsafe { hs_op_new(HS_OP_ADD_REDUCE, one.as_ptr(), 1, 0) };
    assert_eq!(values(s), vec![7.5]);
    // Generators fill an existing output.
    // SAFETY: no operands.
    assert_eq!(
        unsafe { hs_op(HS_OP_RANGE, out, std::ptr::null(), 0, 0) },
        hs_status::HS_OK
    );
    assert_eq!(values(out), vec![0.0, 1.0, 2.0]);
    free(&[a, out, s]);
}

#[test]
fn matmul_multiplies_2d_arrays() {
    setup();
    let a = f64s(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let b = f64s(&[3, 2], &[7.0, 8.0, 9.0, 10.0, 11.0, 12.0]);
    let c = hs_matmul(a, b);
    assert_eq!(shape(c), vec![2, 2]);
    assert_eq!(values(c), vec![58.0, 64.0, 139.0, 154.0]);
    free(&[a, b, c]);
}

#[test]
fn sort_argsort_and_searchsorted_follow_numpy() {
    setup();
    let nan = f64::NAN;
    let a = f64s(&[2, 3], &[3.0, nan, 1.0, -0.0, 2.0, -5.0]);
    let s = hs_sort(a, -1);
    let v = values(s);
    assert_eq!(v[..2], [1.0, 3.0]);
    assert!(v[2].is_nan());
    assert_eq!(v[3..], [-5.0, -0.0, 2.0]);
    let i = hs_argsort(a, 0);
    assert_eq!(values(i), vec![1.0, 1.0, 1.0, 0.0, 0.0, 0.0]);
    let flat = hs_sort(a, HS_AXIS_ALL);
    assert_eq!(shape(flat), vec![6]);
    let hay = f64s(&[4], &[1.0, 2.0, 2.0, 3.0]);
    let needles = f64s(&[3], &[2.0, 0.0, 9.0]);
    let (l, r) = (
        hs_searchsorted(hay, needles, 0),
        hs_searchsorted(hay, needles, 1),
    );
    assert_eq!(values(l), vec![1.0, 0.0, 4.0]);
    assert_eq!(values(r), vec![3.0, 0.0, 4.0]);
    assert!(hs_sort(a, 2).is_null());
    assert!(hs_searchsorted(a, needles, 0).is_null());
    free(&[a, s, i, flat, hay, needles, l, r]);
}

#[test]
fn random_is_uniform_in_unit_interval_and_reproducible() {
    setup();
    let n = [1000usize];
    // SAFETY: n holds 1 extent.
    let (r1, r2) = unsafe {
        (
            hs_random(42, 0, 1, n.as_ptr()),
            hs_random(42, 0, 1, n.as_ptr()),
        )
    };
    let (v1, v2) = (values(r1), values(r2));
    assert_eq!(v1, v2);
    assert!(v1.iter().all(|&x| (0.0..1.0).contains(&x)));
    let mean = v1.iter().sum::<f64>() / 1000.0;
    assert!((mean - 0.5).abs() < 0.05, "mean {mean}");
    // SAFETY: as above.
    let r3 = unsafe { hs_random(43, 0, 1, n.as_ptr()) };
    assert_ne!(values(r3), v1);
    free(&[r1, r2, r3]);
}

#[test]
fn data_pointer_reads_and_writes_the_view() {
    setup();
    let a = f64s(&[4], &[1.0, 2.0, 3.0, 4.0]);
    let v = hs_slice(a, 0, 1, 3, 1);
    let p = hs_data(v) as *mut f64;
    assert!(!p.is_null(), "{}", last_error());
    // SAFETY: hs_data points to the view's 2 contiguous doubles.
    unsafe {
        assert_eq!(*p, 2.0);
        *p.add(1) = 30.0;
    }
    let s = hs_sum(a, HS_AXIS_ALL);
    assert_eq!(values(s), vec![37.0]);
    free(&[a, v, s]);
}
