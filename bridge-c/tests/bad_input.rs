//! Every bad input of the C API returns an error status with a message that says what and
//! where, and leaves the runtime usable. Nothing aborts the process.

mod common;
use common::*;
use hassium::*;
use std::process::Command;

fn vec3() -> *mut hs_array {
    f64s(&[3], &[1.0, 2.0, 3.0])
}

#[test]
fn null_handles_are_reported_not_dereferenced() {
    setup();
    assert!(hs_add(hs_arr(std::ptr::null()), hs_float(1.0)).is_null());
    expect_error(hs_status::HS_ERR_NULL, "hs_add: operand 0 is NULL");
    assert!(hs_sum(std::ptr::null(), 0).is_null());
    expect_error(hs_status::HS_ERR_NULL, "hs_sum: the array is NULL");
    assert_eq!(hs_sync(std::ptr::null()), hs_status::HS_ERR_NULL);
    assert!(hs_data(std::ptr::null()).is_null());
    assert_eq!(hs_ndim(std::ptr::null()), 0);
    assert_eq!(hs_dtype_of(std::ptr::null()), HS_DTYPE_INVALID);
    // Like free(NULL), freeing NULL is allowed and does nothing.
    assert_eq!(hs_free(std::ptr::null_mut()), hs_status::HS_OK);
    // A NULL shape with dimensions is caught too.
    // SAFETY: the NULL is what is being tested; nothing is read through it.
    assert!(unsafe { hs_zeros(HS_FLOAT64, 2, std::ptr::null()) }.is_null());
    expect_error(hs_status::HS_ERR_NULL, "hs_zeros: shape is NULL");
}

#[test]
fn freed_and_made_up_handles_are_reported() {
    setup();
    let a = vec3();
    let v = hs_slice(a, 0, 0, 2, 1);
    assert_eq!(hs_free(a), hs_status::HS_OK);
    assert!(hs_negative(a).is_null());
    expect_error(
        hs_status::HS_ERR_FREED,
        "hs_negative: the array was already freed",
    );
    assert_eq!(hs_free(a), hs_status::HS_ERR_FREED);
    expect_error(
        hs_status::HS_ERR_FREED,
        "hs_free: the array was already freed",
    );
    // The slot is reused by a new array; the stale handle still reads as freed.
    let b = vec3();
    assert!(hs_abs(a).is_null());
    assert_eq!(hs_last_status(), hs_status::HS_ERR_FREED);
    // A value that was never a handle.
    let bogus = 0x7fff_0000_dead_usize as *const hs_array;
    assert!(hs_abs(bogus).is_null());
    expect_error(
        hs_status::HS_ERR_INVALID,
        "hs_abs: the array is not a hassium array handle",
    );
    // The view still works: it keeps the freed handle's base alive.
    assert_eq!(values(v), vec![1.0, 2.0]);
    free(&[v, b]);
}

#[test]
fn shapes_that_do_not_broadcast_name_both_shapes() {
    setup();
    let a = vec3();
    let b = f64s(&[4], &[1.0, 2.0, 3.0, 4.0]);
    assert!(hs_add(hs_arr(a), hs_arr(b)).is_null());
    expect_error(
        hs_status::HS_ERR_SHAPE,
        "hs_add: operands could not be broadcast together with shapes (3,) (4,)",
    );
    // An output that the result cannot broadcast into.
    let ins = [hs_arr(a), hs_float(1.0)];
    // SAFETY: ins holds 2 operands.
    assert_eq!(
        unsafe { hs_op(HS_OP_ADD, b, ins.as_ptr(), 2, 0) },
        hs_status::HS_ERR_SHAPE
    );
    expect_error(
        hs_status::HS_ERR_SHAPE,
        "non-broadcastable output operand with shape (4,)",
    );
    let m = f64s(&[2, 2], &[1.0; 4]);
    assert!(hs_matmul(a, m).is_null());
    expect_error(hs_status::HS_ERR_SHAPE, "hs_matmul:");
    let to = [2usize];
    // SAFETY: `to` holds 1 extent.
    assert!(unsafe { hs_broadcast_to(a, 1, to.as_ptr()) }.is_null());
    expect_error(hs_status::HS_ERR_SHAPE, "hs_broadcast_to:");
    let bad = [4i64];
    // SAFETY: `bad` holds 1 value.
    assert!(unsafe { hs_reshape(a, 1, bad.as_ptr()) }.is_null());
    expect_error(
        hs_status::HS_ERR_SHAPE,
        "hs_reshape: cannot reshape array of size 3 into shape (4,)",
    );
    let mut small = [0.0f64; 2];
    // SAFETY: `small` holds 16 bytes, as the call is told.
    assert_eq!(
        unsafe { hs_copy_to(a, small.as_mut_ptr().cast(), 16) },
        hs_status::HS_ERR_SHAPE
    );
    expect_error(
        hs_status::HS_ERR_SHAPE,
        "hs_copy_to: the buffer holds 16 bytes but the array needs 24",
    );
    free(&[a, b, m]);
}

#[test]
fn out_of_range_views_and_indices_are_refused() {
    setup();
    let a = vec3();
    assert!(hs_index(a, 0, 3).is_null());
    expect_error(
        hs_status::HS_ERR_BOUNDS,
        "hs_index: index 3 is out of bounds for axis 0 with size 3",
    );
    assert!(hs_index(a, 0, -4).is_null());
    assert_eq!(hs_last_status(), hs_status::HS_ERR_BOUNDS);
    assert!(hs_slice(a, 0, 0, 3, 0).is_null());
    expect_error(
        hs_status::HS_ERR_INVALID,
        "hs_slice: slice step cannot be zero",
    );
    // A gather whose index is out of range fails when it runs; nothing is read or written
    // outside the base, and the runtime stays usable.
    let idx = hs_range(HS_INT64, 5.0, 1.0, 2);
    let ins = [hs_arr(a), hs_arr(idx)];
    // SAFETY: ins holds 2 operands.
    let g = unsafe { hs_op_new(HS_OP_GATHER, ins.as_ptr(), 2, 0) };
    assert!(!g.is_null(), "{}", last_error());
    assert!(hs_data(g).is_null());
    let msg = last_error();
    assert!(
        msg.contains("hs_data:") && msg.contains("out of bounds"),
        "{msg}"
    );
    assert_eq!(values(a), vec![1.0, 2.0, 3.0]);
    // An integer scalar that does not fit the array's type (NumPy 2 refuses it too).
    let u = hs_astype(a, HS_UINT8);
    assert!(hs_add(hs_arr(u), hs_int(300)).is_null());
    expect_error(
        hs_status::HS_ERR_BOUNDS,
        "hs_add: integer scalar 300 is out of bounds for uint8",
    );
    // ... but comparisons evaluate it exactly.
    let lt = hs_less(hs_arr(u), hs_int(300));
    assert_eq!(values(lt), vec![1.0, 1.0, 1.0]);
    free(&[a, idx, g, u, lt]);
}

#[test]
fn dtypes_an_opcode_does_not_take_are_refused() {
    setup();
    let a = vec3();
    let ins = [hs_arr(a), hs_arr(a)];
    // SAFETY: ins holds 2 operands.
    assert!(unsafe { hs_op_new(HS_OP_BITWISE_AND, ins.as_ptr(), 2, 0) }.is_null());
    expect_error(
        hs_status::HS_ERR_DTYPE,
        "hs_op_new: ufunc 'bitwise_and' not supported for the input types (float64)",
    );
    let b = hs_greater(hs_arr(a), hs_float(1.5));
    assert!(hs_subtract(hs_arr(b), hs_arr(b)).is_null());
    expect_error(
        hs_status::HS_ERR_DTYPE,
        "hs_subtract: numpy boolean subtract, the `-` operator, is not supported",
    );
    let n = [2usize];
    // SAFETY: n holds 1 extent.
    assert!(unsafe { hs_zeros(hs_dtype(99), 1, n.as_ptr()) }.is_null());
    expect_error(hs_status::HS_ERR_DTYPE, "hs_zeros: unknown dtype number 99");
    // SAFETY: ins holds 2 operands.
    assert!(unsafe { hs_op_new(hs_opcode(999), ins.as_ptr(), 2, 0) }.is_null());
    expect_error(
        hs_status::HS_ERR_INVALID,
        "hs_op_new: unknown opcode number 999",
    );
    // SAFETY: ins holds 2 operands (one too many for negative).
    assert!(unsafe { hs_op_new(HS_OP_NEGATIVE, ins.as_ptr(), 2, 0) }.is_null());
    expect_error(hs_status::HS_ERR_INVALID, "negative takes 1 inputs, got 2");
    let bad_kind = hs_operand {
        kind: hs_operand_kind(7),
        ..hs_float(1.0)
    };
    assert!(hs_add(hs_arr(a), bad_kind).is_null());
    expect_error(
        hs_status::HS_ERR_INVALID,
        "hs_add: operand 1 has unknown operand kind 7",
    );
    free(&[a, b]);
}

#[test]
fn a_negative_integer_power_is_refused_at_the_call_or_reported_by_the_flush() {
    setup();
    let a = hs_range(HS_INT64, 1.0, 1.0, 3);
    // A scalar exponent is known when the power is recorded.
    assert!(hs_power(hs_arr(a), hs_int(-2)).is_null());
    expect_error(
        hs_status::HS_ERR_INVALID,
        "hs_power: Integers to negative integer powers are not allowed.",
    );
    // One in an array only when the power runs: the sync that runs it says so, with
    // the same status as at the call, and so does every later read of the result.
    let e = hs_range(HS_INT64, 1.0, -1.0, 3); // 1, 0, -1
    let p = hs_power(hs_arr(a), hs_arr(e));
    assert!(!p.is_null());
    for _ in 0..2 {
        assert_eq!(hs_sync(p), hs_status::HS_ERR_INVALID);
        expect_error(
            hs_status::HS_ERR_INVALID,
            "(power): Integers to negative integer powers are not allowed.",
        );
    }
    // The runtime goes on.
    let q = hs_power(hs_arr(a), hs_int(2));
    assert_eq!(values(q), vec![1.0, 4.0, 9.0]);
    free(&[a, e, p, q]);
}

#[test]
fn axes_out_of_range_are_refused() {
    setup();
    let a = f64s(&[2, 2], &[1.0, 2.0, 3.0, 4.0]);
    assert!(hs_sum(a, 2).is_null());
    expect_error(
        hs_status::HS_ERR_AXIS,
        "hs_sum: axis 2 is out of bounds for array of dimension 2",
    );
    assert!(hs_cumsum(a, -3).is_null());
    expect_error(
        hs_status::HS_ERR_AXIS,
        "hs_cumsum: axis -3 is out of bounds",
    );
    assert!(hs_slice(a, 5, 0, 1, 1).is_null());
    assert_eq!(hs_last_status(), hs_status::HS_ERR_AXIS);
    let perm = [0i64, 0];
    // SAFETY: perm holds ndim values.
    assert!(unsafe { hs_transpose(a, perm.as_ptr()) }.is_null());
    expect_error(
        hs_status::HS_ERR_INVALID,
        "hs_transpose: axes don't match array",
    );
    free(&[a]);
}

#[test]
fn a_reduction_into_its_own_input_gets_numpys_result() {
    setup();
    // NumPy computes `np.add.reduce(a, axis=0, out=a[0])` as if the input were copied
    // first; so does the recorder, which reduces into a temporary and then copies.
    let a = f64s(&[2, 2], &[1.0, 2.0, 3.0, 4.0]);
    let row = hs_index(a, 0, 0);
    let ins = [hs_arr(a)];
    // SAFETY: ins holds 1 operand.
    assert_eq!(
        unsafe { hs_op(HS_OP_ADD_REDUCE, row, ins.as_ptr(), 1, 0) },
        hs_status::HS_OK,
        "{}",
        last_error()
    );
    assert_eq!(values(a), vec![4.0, 6.0, 3.0, 4.0]);
    free(&[a, row]);
}

/// Runs this test binary again with one test selected and `env` set: the runtime is
/// created once per process, so configuration errors need a fresh process.
fn run_child(test: &str, env: &[(&str, &str)]) {
    let exe = std::env::current_exe().expect("the test binary's path");
    let mut cmd = Command::new(exe);
    cmd.args([test, "--exact", "--nocapture", "--test-threads=1"]);
    cmd.env_remove("HASSIUM_STACK")
        .env_remove("HASSIUM_CONFIG")
        .env("HS_TEST_CHILD", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run the child test");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && text.contains("1 passed"),
        "child {test} failed:\n{text}"
    );
}

fn is_child() -> bool {
    std::env::var_os("HS_TEST_CHILD").is_some()
}

#[test]
fn a_config_typo_is_a_config_error_naming_file_and_key() {
    if !is_child() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hassium.toml");
        let text = hassium_vem::DEFAULT_CONFIG.replace("flush_threshold", "flush_treshold");
        std::fs::write(&path, text).unwrap();
        return run_child(
            "a_config_typo_is_a_config_error_naming_file_and_key",
            &[("HASSIUM_CONFIG", path.to_str().unwrap())],
        );
    }
    let n = [3usize];
    // SAFETY: n holds 1 extent.
    assert!(unsafe { hs_zeros(HS_FLOAT64, 1, n.as_ptr()) }.is_null());
    expect_error(
        hs_status::HS_ERR_CONFIG,
        "hs_zeros: cannot start the hassium runtime:",
    );
    expect_error(hs_status::HS_ERR_CONFIG, "hassium.toml");
    expect_error(hs_status::HS_ERR_CONFIG, "flush_treshold");
    // The failure is reported again (not a crash) on the next call.
    assert_eq!(hs_stats_print(), hs_status::HS_ERR_CONFIG);
    // Flushing without a runtime has nothing to do.
    assert_eq!(hs_flush(), hs_status::HS_OK);
}

#[test]
fn a_missing_engine_library_is_an_engine_error_naming_the_library() {
    if !is_child() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hassium.toml");
        let text = "[runtime]\nstack = \"main\"\n\n[stacks.main]\nfuser = \"singleton\"\nengine = \"gone\"\n\n\
                    [engines.gone]\nlibrary = \"libhassium_engine_gone.so\"\n";
        std::fs::write(&path, text).unwrap();
        return run_child(
            "a_missing_engine_library_is_an_engine_error_naming_the_library",
            &[("HASSIUM_CONFIG", path.to_str().unwrap())],
        );
    }
    assert!(hs_range(HS_FLOAT64, 0.0, 1.0, 3).is_null());
    expect_error(
        hs_status::HS_ERR_ENGINE,
        "hs_range: cannot start the hassium runtime:",
    );
    expect_error(hs_status::HS_ERR_ENGINE, "libhassium_engine_gone.so");
}

#[test]
fn a_library_that_is_not_an_engine_is_an_engine_error() {
    if !is_child() {
        let dir = tempfile::tempdir().unwrap();
        let fake = dir.path().join("libhassium_engine_fake.so");
        std::fs::write(&fake, b"not an ELF file").unwrap();
        let path = dir.path().join("hassium.toml");
        let text = format!(
            "[runtime]\nstack = \"main\"\n\n[stacks.main]\nfuser = \"singleton\"\nengine = \"fake\"\n\n\
             [engines.fake]\nlibrary = \"{}\"\n",
            fake.display()
        );
        std::fs::write(&path, text).unwrap();
        return run_child(
            "a_library_that_is_not_an_engine_is_an_engine_error",
            &[("HASSIUM_CONFIG", path.to_str().unwrap())],
        );
    }
    assert!(hs_range(HS_FLOAT64, 0.0, 1.0, 3).is_null());
    expect_error(hs_status::HS_ERR_ENGINE, "libhassium_engine_fake.so");
}

#[test]
fn writing_into_a_broadcast_view_is_refused_and_writes_nothing() {
    setup();
    let a = vec3();
    let to = [4usize, 3];
    // SAFETY: `to` holds 2 extents.
    let b = unsafe { hs_broadcast_to(a, 2, to.as_ptr()) };
    assert!(!b.is_null(), "{}", last_error());
    // Every element of a column is one element of `a`: a write would race with itself.
    assert_eq!(hs_assign(b, hs_float(7.0)), hs_status::HS_ERR_INVALID);
    expect_error(hs_status::HS_ERR_INVALID, "broadcast view");
    let ins = [hs_arr(a), hs_float(1.0)];
    // SAFETY: ins holds 2 operands.
    assert_eq!(
        unsafe { hs_op(HS_OP_ADD, b, ins.as_ptr(), 2, 0) },
        hs_status::HS_ERR_INVALID
    );
    expect_error(hs_status::HS_ERR_INVALID, "read-only");
    // Nothing was written, and reading the view still works.
    assert_eq!(values(a), vec![1.0, 2.0, 3.0]);
    assert_eq!(values(b)[..6], [1.0, 2.0, 3.0, 1.0, 2.0, 3.0]);
    free(&[a, b]);
}

// Regression tests for what fuzzing the C API found (bridge-c/fuzz, docs/reliability.md).

#[test]
fn a_range_too_large_to_exist_is_refused_at_the_call() {
    setup();
    // Found by fuzzing: hs_range(SIZE_MAX) overflowed the byte count of its base (a panic
    // with overflow checks, a wrapped size without), where hs_zeros refuses such shapes.
    for n in [usize::MAX, isize::MAX as usize, 1 << 62] {
        assert!(hs_range(HS_FLOAT64, 0.0, 1.0, n).is_null());
        expect_error(hs_status::HS_ERR_NOMEM, "hs_range: an array of shape");
        expect_error(hs_status::HS_ERR_NOMEM, "is too large");
    }
    let a = hs_range(HS_INT8, 0.0, 1.0, 3);
    assert_eq!(values(a), vec![0.0, 1.0, 2.0]);
    free(&[a]);
}

#[test]
fn an_empty_shape_whose_strides_overflow_is_refused() {
    setup();
    // Found by fuzzing: (0, 2^40, 2^40) holds no elements, so the element count passed
    // the size check, but the strides of a contiguous array (2^80) overflowed. NumPy
    // refuses such shapes too ("array is too big").
    let huge = [0usize, 1 << 40, 1 << 40];
    // SAFETY: `huge` holds 3 extents.
    assert!(unsafe { hs_ones(HS_INT64, 3, huge.as_ptr()) }.is_null());
    expect_error(hs_status::HS_ERR_NOMEM, "hs_ones: an array of shape");
    // SAFETY: as above.
    assert!(unsafe { hs_empty(HS_BOOL, 3, huge.as_ptr()) }.is_null());
    expect_error(hs_status::HS_ERR_NOMEM, "is too large");
    let e = [0usize];
    // SAFETY: `e` holds 1 extent.
    let empty = unsafe { hs_zeros(HS_FLOAT64, 1, e.as_ptr()) };
    assert!(!empty.is_null(), "{}", last_error());
    // SAFETY: as above.
    assert!(unsafe { hs_broadcast_to(empty, 3, huge.as_ptr()) }.is_null());
    expect_error(hs_status::HS_ERR_NOMEM, "hs_broadcast_to:");
    let req = [0i64, 1 << 40, 1 << 40];
    // SAFETY: `req` holds 3 extents.
    assert!(unsafe { hs_reshape(empty, 3, req.as_ptr()) }.is_null());
    expect_error(hs_status::HS_ERR_NOMEM, "hs_reshape: an array of shape");
    // An empty array with modest extents is still fine.
    let ok = [0i64, 1 << 20, 3];
    // SAFETY: `ok` holds 3 extents.
    let r = unsafe { hs_reshape(empty, 3, ok.as_ptr()) };
    assert!(!r.is_null(), "{}", last_error());
    assert_eq!(shape(r), vec![0, 1 << 20, 3]);
    free(&[empty, r]);
}

#[test]
fn a_result_too_large_to_allocate_is_an_error_not_an_abort() {
    setup();
    // Found by fuzzing: summing a (0, 2^40) array over its empty axis makes 2^40 zeros.
    // Recorded lazily, the failure came at the flush, where the reference engine's
    // `vec![0; n]` aborted the process. The recorder now refuses such a result when it is
    // asked for, as NumPy does (`MemoryError: Unable to allocate ...`).
    let shape = [0usize, 1 << 40];
    // SAFETY: `shape` holds 2 extents.
    let a = unsafe { hs_zeros(HS_INT64, 2, shape.as_ptr()) };
    assert!(!a.is_null(), "{}", last_error());
    assert!(hs_sum(a, 0).is_null());
    expect_error(hs_status::HS_ERR_NOMEM, "hs_sum: Unable to allocate");
    assert_eq!(hs_flush(), hs_status::HS_OK, "{}", last_error());
    // The runtime still works.
    let b = vec3();
    assert_eq!(values(b), vec![1.0, 2.0, 3.0]);
    free(&[a, b]);
}

#[test]
fn slices_with_steps_near_the_integer_limits_take_one_element() {
    setup();
    // Found by fuzzing: a step of i64::MIN (HS_NONE as a step) overflowed the length
    // computation, and a huge step overflowed the new stride (stride × step). Python
    // takes any int as a step: a[::-2**63] is the last element, a[::2**63-1] the first.
    let a = f64s(&[5], &[1.0, 2.0, 3.0, 4.0, 5.0]);
    let last = hs_slice(a, 0, HS_NONE, HS_NONE, i64::MIN);
    assert!(!last.is_null(), "{}", last_error());
    assert_eq!(values(last), vec![5.0]);
    let first = hs_slice(a, 0, HS_NONE, HS_NONE, i64::MAX);
    assert!(!first.is_null(), "{}", last_error());
    assert_eq!(values(first), vec![1.0]);
    let one = hs_slice(a, 0, 0, HS_NONE, i64::MIN);
    assert!(!one.is_null(), "{}", last_error());
    assert_eq!(values(one), vec![1.0]);
    let none = hs_slice(a, 0, 0, 0, i64::MIN);
    assert!(!none.is_null(), "{}", last_error());
    assert_eq!(hs_size(none), 0);
    // Rows of 4: stride 4 times a step of 2^62 does not fit an isize.
    let m = f64s(&[3, 4], &(0..12).map(f64::from).collect::<Vec<_>>());
    let row = hs_slice(m, 0, 1, HS_NONE, 1 << 62);
    assert!(!row.is_null(), "{}", last_error());
    assert_eq!(shape(row), vec![1, 4]);
    assert_eq!(values(row), vec![4.0, 5.0, 6.0, 7.0]);
    free(&[a, last, first, one, none, m, row]);
}
