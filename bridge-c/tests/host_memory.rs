//! Host memory the C API reads or writes may be unaligned (a field of a packed struct, an
//! offset into a byte buffer): every such pointer is read and written byte-wise or with
//! unaligned accesses, with the values a C program expects. (In a debug build, a slice
//! over a misaligned pointer aborts on Rust's precondition check: these tests catch it.)
//! Sizes beyond what a view can address are refused with a message that says so.

mod common;
use common::*;
use hassium::*;

/// `values` laid out one byte past an 8-byte boundary, as `T`s: the returned buffer owns
/// the bytes, the pointer is into it.
fn unaligned<T: Copy>(values: &[T]) -> (Vec<u64>, *const T) {
    let size = std::mem::size_of_val(values);
    let mut store = vec![0u64; size / 8 + 2];
    // SAFETY: `store` holds size + 8 bytes or more; byte 1 onwards takes `size` bytes.
    let p = unsafe { (store.as_mut_ptr() as *mut u8).add(1) };
    // SAFETY: source and destination hold `size` bytes and do not overlap.
    unsafe { std::ptr::copy_nonoverlapping(values.as_ptr() as *const u8, p, size) };
    (store, p as *const T)
}

#[test]
fn misaligned_shapes_and_data_are_read_by_value() {
    setup();
    let (_s, shape) = unaligned(&[2usize, 3]);
    let data: Vec<f64> = (0..6).map(|i| i as f64 * 1.5).collect();
    let (_d, ptr) = unaligned(&data);
    // SAFETY: both pointers address the stated number of elements, unaligned.
    let a = unsafe { hs_from_buffer(HS_FLOAT64, 2, shape, ptr.cast()) };
    assert!(!a.is_null(), "{}", last_error());
    assert_eq!(values(a), data);
    assert_eq!(common::shape(a), vec![2, 3]);
    // SAFETY: as above.
    let z = unsafe { hs_zeros(HS_INT16, 2, shape) };
    assert_eq!(common::shape(z), vec![2, 3]);
    let (_r, req) = unaligned(&[3i64, -1]);
    // SAFETY: as above.
    let r = unsafe { hs_reshape(a, 2, req) };
    assert!(!r.is_null(), "{}", last_error());
    assert_eq!(common::shape(r), vec![3, 2]);
    let (_p, perm) = unaligned(&[1i64, 0]);
    // SAFETY: as above.
    let t = unsafe { hs_transpose(a, perm) };
    assert_eq!(common::shape(t), vec![3, 2]);
    let (_b, bshape) = unaligned(&[4usize, 2, 3]);
    // SAFETY: as above.
    let b = unsafe { hs_broadcast_to(a, 3, bshape) };
    assert_eq!(common::shape(b), vec![4, 2, 3]);
    free(&[a, z, r, t, b]);
}

#[test]
fn misaligned_operand_arrays_are_read_by_value() {
    setup();
    let a = f64s(&[3], &[1.0, 2.0, 3.0]);
    let out = f64s(&[3], &[0.0; 3]);
    let (_o, ins) = unaligned(&[hs_arr(a), hs_float(10.0)]);
    // SAFETY: `ins` addresses two operands, unaligned.
    let st = unsafe { hs_op(HS_OP_ADD, out, ins, 2, 0) };
    assert_eq!(st, hs_status::HS_OK, "{}", last_error());
    assert_eq!(values(out), vec![11.0, 12.0, 13.0]);
    // SAFETY: as above.
    let n = unsafe { hs_op_new(HS_OP_ADD, ins, 2, 0) };
    assert!(!n.is_null(), "{}", last_error());
    assert_eq!(values(n), vec![11.0, 12.0, 13.0]);
    free(&[a, out, n]);
}

#[test]
fn results_are_written_to_misaligned_memory_by_value() {
    setup();
    let a = f64s(&[3], &[0.25, -2.0, 8.0]);
    let mut store = vec![0u64; 5];
    // SAFETY: one byte into a buffer of 40 bytes: 24 bytes (three doubles) fit.
    let p = unsafe { (store.as_mut_ptr() as *mut u8).add(1) };
    // SAFETY: `p` addresses 24 writable bytes.
    let st = unsafe { hs_copy_to(a, p.cast(), 24) };
    assert_eq!(st, hs_status::HS_OK, "{}", last_error());
    let read = |k: usize| {
        // SAFETY: element k < 3 lies inside the 24 bytes written.
        unsafe { (p as *const f64).add(k).read_unaligned() }
    };
    assert_eq!([read(0), read(1), read(2)], [0.25, -2.0, 8.0]);
    let one = hs_index(a, 0, 2);
    // SAFETY: `p` addresses 8 writable bytes.
    let st = unsafe { hs_item(one, p as *mut f64) };
    assert_eq!(st, hs_status::HS_OK, "{}", last_error());
    assert_eq!(read(0), 8.0);
    free(&[a, one]);
}

#[test]
fn range_beyond_addressable_size_says_so() {
    setup();
    for n in [usize::MAX, usize::MAX / 2, isize::MAX as usize] {
        assert!(hs_range(HS_FLOAT64, 0.0, 1.0, n).is_null());
        expect_error(hs_status::HS_ERR_NOMEM, "hs_range: an array of shape");
        assert!(last_error().contains("is too large"), "{}", last_error());
        assert!(!last_error().contains("-2"), "{}", last_error());
    }
    // The runtime stays usable, and a sane range works.
    let r = hs_range(HS_INT64, 1.0, 2.0, 4);
    assert_eq!(values(r), vec![1.0, 3.0, 5.0, 7.0]);
    free(&[r]);
}

#[test]
fn every_shape_beyond_the_dimension_limit_names_the_limit() {
    setup();
    let shape = [1usize; 17];
    let req = [1i64; 17];
    let limit = "17 dimensions requested; at most 16 are allowed";
    // SAFETY: both arrays hold 17 elements.
    assert!(unsafe { hs_zeros(HS_FLOAT64, 17, shape.as_ptr()) }.is_null());
    expect_error(hs_status::HS_ERR_SHAPE, &format!("hs_zeros: {limit}"));
    let a = f64s(&[1], &[1.0]);
    // SAFETY: as above.
    assert!(unsafe { hs_reshape(a, 17, req.as_ptr()) }.is_null());
    expect_error(hs_status::HS_ERR_SHAPE, &format!("hs_reshape: {limit}"));
    let two_unknown = [-1i64; 17];
    // SAFETY: as above.
    assert!(unsafe { hs_reshape(a, 17, two_unknown.as_ptr()) }.is_null());
    expect_error(hs_status::HS_ERR_SHAPE, &format!("hs_reshape: {limit}"));
    // SAFETY: as above.
    assert!(unsafe { hs_broadcast_to(a, 17, shape.as_ptr()) }.is_null());
    expect_error(
        hs_status::HS_ERR_SHAPE,
        &format!("hs_broadcast_to: {limit}"),
    );
    free(&[a]);
}
