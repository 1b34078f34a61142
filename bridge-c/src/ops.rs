//! Operations: the generic `hs_op` entry point for every opcode, and typed helpers for the
//! everyday families. Helpers return a new array (NULL on error); `hs_op` writes into an
//! existing one, broadcasting the inputs to it and casting the result to its dtype.

use crate::args::{opcode_arg, operand_arg, operands_arg, slice_arg};
use crate::create::new_handle;
use crate::ctypes::*;
use crate::error::guard_status;
use crate::record::{self, Arg};
use crate::state::with_state;
use hassium_core::Opcode;

/// An operand holding an array.
#[no_mangle]
pub extern "C" fn hs_arr(a: *const hs_array) -> hs_operand {
    hs_operand {
        kind: HS_OPERAND_ARRAY,
        array: a,
        int_value: 0,
        real: 0.0,
        imag: 0.0,
    }
}

/// An integer scalar operand (weak: it takes the other operands' integer type).
#[no_mangle]
pub extern "C" fn hs_int(v: i64) -> hs_operand {
    hs_operand {
        kind: HS_OPERAND_INT,
        array: std::ptr::null(),
        int_value: v,
        real: 0.0,
        imag: 0.0,
    }
}

/// A floating-point scalar operand (weak: a float32 array stays float32).
#[no_mangle]
pub extern "C" fn hs_float(v: f64) -> hs_operand {
    hs_operand {
        kind: HS_OPERAND_FLOAT,
        array: std::ptr::null(),
        int_value: 0,
        real: v,
        imag: 0.0,
    }
}

/// A complex scalar operand.
#[no_mangle]
pub extern "C" fn hs_complex(real: f64, imag: f64) -> hs_operand {
    hs_operand {
        kind: HS_OPERAND_COMPLEX,
        array: std::ptr::null(),
        int_value: 0,
        real,
        imag,
    }
}

/// Applies any opcode, writing into `out` (which must exist; `hs_op_new` makes a new
/// one). Elementwise inputs are promoted as NumPy 2 does, broadcast to `out`'s shape, and
/// the result is cast to `out`'s dtype. `axis` is the input's axis for reductions and scans
/// (negative counts from the end, `HS_AXIS_ALL` for all); other opcodes ignore it.
/// Generators (`HS_OP_RANGE`, `HS_OP_RANDOM` with integer seed and stream operands) fill
/// `out`; gather and scatters take int64-castable index arrays.
///
/// # Safety
/// `ins` points to `nin` operands (NULL when `nin` is 0).
#[no_mangle]
pub unsafe extern "C" fn hs_op(
    op: hs_opcode,
    out: *mut hs_array,
    ins: *const hs_operand,
    nin: usize,
    axis: i64,
) -> hs_status {
    guard_status("hs_op", || {
        let op = opcode_arg(op)?;
        // SAFETY: the caller's contract above.
        let ins = unsafe { slice_arg(ins, nin, "ins") }?;
        with_state(|st| {
            let out = st.view(out, "out")?;
            let args = operands_arg(st, &ins)?;
            record::other(st, op, &args, Some(&out), axis).map(drop)
        })
    })
}

/// Applies an opcode into a new array of the promoted dtype and broadcast shape (for
/// reductions: the input's shape without `axis`). Generators and scatters need an output:
/// use `hs_op` for them.
///
/// # Safety
/// As [`hs_op`].
#[no_mangle]
pub unsafe extern "C" fn hs_op_new(
    op: hs_opcode,
    ins: *const hs_operand,
    nin: usize,
    axis: i64,
) -> *mut hs_array {
    new_handle("hs_op_new", |st| {
        let op = opcode_arg(op)?;
        // SAFETY: the caller's contract above.
        let ins = unsafe { slice_arg(ins, nin, "ins") }?;
        let args = operands_arg(st, &ins)?;
        record::other(st, op, &args, None, axis)
    })
}

/// `dst[...] = src`: copies (broadcasting and casting) an array or scalar into `dst`,
/// which may be a view — this is how a C program updates part of an array in place.
#[no_mangle]
pub extern "C" fn hs_assign(dst: *mut hs_array, src: hs_operand) -> hs_status {
    guard_status("hs_assign", || {
        with_state(|st| {
            let out = st.view(dst, "dst")?;
            let arg = operand_arg(st, &src, "src")?;
            record::elementwise(st, Opcode::Identity, &[arg], Some(&out)).map(drop)
        })
    })
}

fn unary(name: &str, op: Opcode, a: *const hs_array) -> *mut hs_array {
    new_handle(name, |st| {
        let v = st.view(a, "the array")?;
        record::elementwise(st, op, &[Arg::Array(v)], None)
    })
}

fn binary(name: &str, op: Opcode, a: hs_operand, b: hs_operand) -> *mut hs_array {
    new_handle(name, |st| {
        let args = [
            operand_arg(st, &a, "operand 0")?,
            operand_arg(st, &b, "operand 1")?,
        ];
        record::elementwise(st, op, &args, None)
    })
}

fn reduction(name: &str, op: Opcode, a: *const hs_array, axis: i64) -> *mut hs_array {
    new_handle(name, |st| {
        let v = st.view(a, "the array")?;
        record::reduce(st, op, &v, axis, None)
    })
}

fn accumulation(name: &str, op: Opcode, a: *const hs_array, axis: i64) -> *mut hs_array {
    new_handle(name, |st| {
        let v = st.view(a, "the array")?;
        record::scan(st, op, &v, axis, None)
    })
}

// --- arithmetic ------------------------------------------------------------------------

/// `a + b`
#[no_mangle]
pub extern "C" fn hs_add(a: hs_operand, b: hs_operand) -> *mut hs_array {
    binary("hs_add", Opcode::Add, a, b)
}
/// `a - b`
#[no_mangle]
pub extern "C" fn hs_subtract(a: hs_operand, b: hs_operand) -> *mut hs_array {
    binary("hs_subtract", Opcode::Subtract, a, b)
}
/// `a * b`
#[no_mangle]
pub extern "C" fn hs_multiply(a: hs_operand, b: hs_operand) -> *mut hs_array {
    binary("hs_multiply", Opcode::Multiply, a, b)
}
/// `a / b` (true division: integers divide in float64)
#[no_mangle]
pub extern "C" fn hs_divide(a: hs_operand, b: hs_operand) -> *mut hs_array {
    binary("hs_divide", Opcode::Divide, a, b)
}
/// `a // b` (NumPy's floor division)
#[no_mangle]
pub extern "C" fn hs_floor_divide(a: hs_operand, b: hs_operand) -> *mut hs_array {
    binary("hs_floor_divide", Opcode::FloorDivide, a, b)
}
/// `a % b` (the result takes the divisor's sign, as in Python)
#[no_mangle]
pub extern "C" fn hs_remainder(a: hs_operand, b: hs_operand) -> *mut hs_array {
    binary("hs_remainder", Opcode::Remainder, a, b)
}
/// `a ** b`
#[no_mangle]
pub extern "C" fn hs_power(a: hs_operand, b: hs_operand) -> *mut hs_array {
    binary("hs_power", Opcode::Power, a, b)
}
/// Elementwise maximum (NaN wins, as `np.maximum`)
#[no_mangle]
pub extern "C" fn hs_maximum(a: hs_operand, b: hs_operand) -> *mut hs_array {
    binary("hs_maximum", Opcode::Maximum, a, b)
}
/// Elementwise minimum (NaN wins, as `np.minimum`)
#[no_mangle]
pub extern "C" fn hs_minimum(a: hs_operand, b: hs_operand) -> *mut hs_array {
    binary("hs_minimum", Opcode::Minimum, a, b)
}

// --- comparisons (bool results) --------------------------------------------------------

/// `a == b`
#[no_mangle]
pub extern "C" fn hs_equal(a: hs_operand, b: hs_operand) -> *mut hs_array {
    binary("hs_equal", Opcode::Equal, a, b)
}
/// `a != b`
#[no_mangle]
pub extern "C" fn hs_not_equal(a: hs_operand, b: hs_operand) -> *mut hs_array {
    binary("hs_not_equal", Opcode::NotEqual, a, b)
}
/// `a < b`
#[no_mangle]
pub extern "C" fn hs_less(a: hs_operand, b: hs_operand) -> *mut hs_array {
    binary("hs_less", Opcode::Less, a, b)
}
/// `a <= b`
#[no_mangle]
pub extern "C" fn hs_less_equal(a: hs_operand, b: hs_operand) -> *mut hs_array {
    binary("hs_less_equal", Opcode::LessEqual, a, b)
}
/// `a > b`
#[no_mangle]
pub extern "C" fn hs_greater(a: hs_operand, b: hs_operand) -> *mut hs_array {
    binary("hs_greater", Opcode::Greater, a, b)
}
/// `a >= b`
#[no_mangle]
pub extern "C" fn hs_greater_equal(a: hs_operand, b: hs_operand) -> *mut hs_array {
    binary("hs_greater_equal", Opcode::GreaterEqual, a, b)
}

// --- math (integers are computed in the smallest float that holds them) -----------------

/// `-a`
#[no_mangle]
pub extern "C" fn hs_negative(a: *const hs_array) -> *mut hs_array {
    unary("hs_negative", Opcode::Negative, a)
}
/// `|a|` (complex gives its magnitude as a real array)
#[no_mangle]
pub extern "C" fn hs_abs(a: *const hs_array) -> *mut hs_array {
    unary("hs_abs", Opcode::Absolute, a)
}
/// `√a`
#[no_mangle]
pub extern "C" fn hs_sqrt(a: *const hs_array) -> *mut hs_array {
    unary("hs_sqrt", Opcode::Sqrt, a)
}
/// `a²`
#[no_mangle]
pub extern "C" fn hs_square(a: *const hs_array) -> *mut hs_array {
    unary("hs_square", Opcode::Square, a)
}
/// `eᵃ`
#[no_mangle]
pub extern "C" fn hs_exp(a: *const hs_array) -> *mut hs_array {
    unary("hs_exp", Opcode::Exp, a)
}
/// Natural logarithm
#[no_mangle]
pub extern "C" fn hs_log(a: *const hs_array) -> *mut hs_array {
    unary("hs_log", Opcode::Log, a)
}
/// Sine
#[no_mangle]
pub extern "C" fn hs_sin(a: *const hs_array) -> *mut hs_array {
    unary("hs_sin", Opcode::Sin, a)
}
/// Cosine
#[no_mangle]
pub extern "C" fn hs_cos(a: *const hs_array) -> *mut hs_array {
    unary("hs_cos", Opcode::Cos, a)
}
/// Hyperbolic tangent
#[no_mangle]
pub extern "C" fn hs_tanh(a: *const hs_array) -> *mut hs_array {
    unary("hs_tanh", Opcode::Tanh, a)
}
/// Round toward −∞
#[no_mangle]
pub extern "C" fn hs_floor(a: *const hs_array) -> *mut hs_array {
    unary("hs_floor", Opcode::Floor, a)
}
/// Round toward +∞
#[no_mangle]
pub extern "C" fn hs_ceil(a: *const hs_array) -> *mut hs_array {
    unary("hs_ceil", Opcode::Ceil, a)
}

// --- selection and linear algebra --------------------------------------------------------

/// `np.where(cond, x, y)`: `x` where `cond` is true (nonzero), else `y`.
#[no_mangle]
pub extern "C" fn hs_where(cond: hs_operand, x: hs_operand, y: hs_operand) -> *mut hs_array {
    new_handle("hs_where", |st| {
        let args = [
            operand_arg(st, &cond, "cond")?,
            operand_arg(st, &x, "x")?,
            operand_arg(st, &y, "y")?,
        ];
        record::elementwise(st, Opcode::Where, &args, None)
    })
}

/// `a @ b` with NumPy's `matmul` rules: 1-D operands count as a row (left) or a column
/// (right), more dimensions are stacks of matrices that broadcast, in the promoted dtype.
#[no_mangle]
pub extern "C" fn hs_matmul(a: *const hs_array, b: *const hs_array) -> *mut hs_array {
    new_handle("hs_matmul", |st| {
        let (x, y) = (st.view(a, "a")?, st.view(b, "b")?);
        record::matmul(st, &x, &y, None)
    })
}

/// A sorted copy of `a` along `axis` (negative counts from the end; `HS_AXIS_ALL` sorts
/// the flattened array): ascending, NaN last, equal elements in their order (stable).
#[no_mangle]
pub extern "C" fn hs_sort(a: *const hs_array, axis: i64) -> *mut hs_array {
    new_handle("hs_sort", |st| {
        let v = st.view(a, "the array")?;
        record::sort(st, &v, axis, false)
    })
}

/// The int64 positions that sort `a` along `axis`, as `hs_sort` orders it (stable).
#[no_mangle]
pub extern "C" fn hs_argsort(a: *const hs_array, axis: i64) -> *mut hs_array {
    new_handle("hs_argsort", |st| {
        let v = st.view(a, "the array")?;
        record::sort(st, &v, axis, true)
    })
}

/// For each element of `needles`, the int64 position where it goes in the sorted 1-D
/// `hay`: before equal elements, or after them when `right` is nonzero (NumPy's
/// `searchsorted`, both compared in their promoted dtype).
#[no_mangle]
pub extern "C" fn hs_searchsorted(
    hay: *const hs_array,
    needles: *const hs_array,
    right: i32,
) -> *mut hs_array {
    new_handle("hs_searchsorted", |st| {
        let (h, n) = (st.view(hay, "hay")?, st.view(needles, "needles")?);
        record::searchsorted(st, &h, &n, right != 0)
    })
}

// --- reductions and scans: `axis` counts from the end when negative; HS_AXIS_ALL reduces
// --- every axis (a 0-d result) and scans the flattened array --------------------------------

/// Sum along `axis` (bool and small integers accumulate in 64 bits, as NumPy's `sum`)
#[no_mangle]
pub extern "C" fn hs_sum(a: *const hs_array, axis: i64) -> *mut hs_array {
    reduction("hs_sum", Opcode::AddReduce, a, axis)
}
/// Product along `axis`
#[no_mangle]
pub extern "C" fn hs_prod(a: *const hs_array, axis: i64) -> *mut hs_array {
    reduction("hs_prod", Opcode::MultiplyReduce, a, axis)
}
/// Minimum along `axis` (an empty axis is an error: there is no identity)
#[no_mangle]
pub extern "C" fn hs_min(a: *const hs_array, axis: i64) -> *mut hs_array {
    reduction("hs_min", Opcode::MinimumReduce, a, axis)
}
/// Maximum along `axis`
#[no_mangle]
pub extern "C" fn hs_max(a: *const hs_array, axis: i64) -> *mut hs_array {
    reduction("hs_max", Opcode::MaximumReduce, a, axis)
}
/// Index (int64) of the first minimum along `axis`; over HS_AXIS_ALL, into the flattened array
#[no_mangle]
pub extern "C" fn hs_argmin(a: *const hs_array, axis: i64) -> *mut hs_array {
    reduction("hs_argmin", Opcode::ArgminReduce, a, axis)
}
/// Index (int64) of the first maximum along `axis`; over HS_AXIS_ALL, into the flattened array
#[no_mangle]
pub extern "C" fn hs_argmax(a: *const hs_array, axis: i64) -> *mut hs_array {
    reduction("hs_argmax", Opcode::ArgmaxReduce, a, axis)
}
/// Cumulative sum along `axis`
#[no_mangle]
pub extern "C" fn hs_cumsum(a: *const hs_array, axis: i64) -> *mut hs_array {
    accumulation("hs_cumsum", Opcode::AddAccumulate, a, axis)
}
/// Cumulative product along `axis`
#[no_mangle]
pub extern "C" fn hs_cumprod(a: *const hs_array, axis: i64) -> *mut hs_array {
    accumulation("hs_cumprod", Opcode::MultiplyAccumulate, a, axis)
}
