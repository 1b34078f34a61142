//! The differences between C dialects, as data. A new dialect is a new table, not a new
//! renderer.

use hassium_core::DType;

/// How buffers reach the kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BufferPassing {
    /// One `char *const *bufs` array, unpacked into typed `restrict` pointers (C99).
    Array,
    /// One typed, qualified parameter per buffer (OpenCL C).
    Params,
}

/// How the outermost parallel dimension's `[begin, end)` is walked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexRange {
    /// A `for` loop over `[begin, end)`; the host splits the range across threads.
    Loop,
    /// One work-item per index: `i = begin + get_global_id(0)`, returning when `i >= end`.
    GlobalId,
}

/// One C dialect's table.
#[derive(Clone, Copy, Debug)]
pub struct Dialect {
    pub name: &'static str,
    /// Text placed once at the top of a translation unit (includes, typedefs, the macros
    /// the shared prelude is written against: `HS_INLINE`, `HS_F16`, `HS_SIMD`).
    pub header: &'static str,
    /// Storage type of each dtype, indexed by discriminant.
    pub storage: [&'static str; 14],
    /// Type arithmetic happens in, indexed by discriminant (float16 computes in float).
    pub compute: [&'static str; 14],
    /// Suffix appended to a libm name for each dtype (`expf` vs `exp`), by discriminant.
    pub math_suffix: [&'static str; 14],
    /// Qualifier on pointers that never alias (`restrict`).
    pub restrict: &'static str,
    /// Address-space qualifier on buffer pointers (`__global` in OpenCL, empty in C).
    pub global: &'static str,
    /// Text before a kernel entry's return type (`__kernel` in OpenCL).
    pub entry_qualifier: &'static str,
    /// The entry's return type: C returns an error code, OpenCL writes it to `err`.
    pub entry_returns_status: bool,
    pub buffers: BufferPassing,
    pub index_range: IndexRange,
    /// A work-group barrier statement, for dialects whose reductions use local memory.
    pub barrier: &'static str,
    /// Name of the 64-bit signed integer type used for indices.
    pub index_type: &'static str,
    /// The pragma that lets the compiler vectorise an innermost loop whose iterations are
    /// independent (`#pragma omp simd` under `-fopenmp-simd`). With it, lane reductions
    /// are written so that the loop computing their values vectorises (strips, blocks or
    /// short rows; see `render`). `None` where each work-item is one element anyway
    /// (OpenCL).
    pub simd: Option<&'static str>,
    /// Pragma that unrolls the short loop after it completely (GCC and Clang both read
    /// `#pragma GCC unroll`). At `-O2` GCC does not unroll a 3-trip loop nested in a simd
    /// loop by itself, and without that it does not vectorise the outer loop.
    pub unroll: Option<&'static str>,
    /// Whether int64/uint64 → double conversions go through the prelude's `hs_i64_f64` and
    /// `hs_u64_f64`, which convert the two 32-bit halves (exact, one rounding, like C's
    /// cast). AVX2 has no vector instruction for C's cast, so GCC leaves a whole fused loop
    /// scalar for one `(double)i` of an `arange`; Black-Scholes' first kernel (sin, cos and
    /// log of `i * 0.37`) ran several times slower for it. False where the device converts
    /// natively (OpenCL); on AVX-512 and non-x86 targets the helpers are C's cast.
    pub split_wide_int_to_double: bool,
    /// Whether complex arithmetic renders (C's `_Complex` types, with the prelude's
    /// helpers for NumPy's formulas); OpenCL C has no complex type, so the engines run
    /// complex kernels elsewhere.
    pub complex: bool,
}

const C_TYPES: [&str; 14] = [
    "uint8_t",
    "int8_t",
    "int16_t",
    "int32_t",
    "int64_t",
    "uint8_t",
    "uint16_t",
    "uint32_t",
    "uint64_t",
    "_Float16",
    "float",
    "double",
    "float _Complex",
    "double _Complex",
];
const C_COMPUTE: [&str; 14] = [
    "uint8_t",
    "int8_t",
    "int16_t",
    "int32_t",
    "int64_t",
    "uint8_t",
    "uint16_t",
    "uint32_t",
    "uint64_t",
    "float",
    "float",
    "double",
    "float _Complex",
    "double _Complex",
];
const C_SUFFIX: [&str; 14] = ["", "", "", "", "", "", "", "", "", "f", "f", "", "f", ""];

/// The C99 dialect's header. It declares the libm functions and classification macros
/// the kernels use itself rather than including `<math.h>` and `<string.h>`: glibc's
/// headers are about a fifth of a small kernel's compile (measured: 179 → 152 ms a
/// translation unit, the same machine code), and a cold run compiles thousands. GCC and
/// Clang know these functions as builtins; the declarations give them their prototypes.
/// A kernel calling one not declared here fails to compile
/// (`-Werror=implicit-function-declaration`), never runs with a guessed prototype.
const C99_HEADER: &str = concat!(
    "#include <stdint.h>\n",
    "#define HS_MATH(T, S) \\\n",
    "T acos##S(T); T asin##S(T); T atan##S(T); T atan2##S(T, T); T cos##S(T); \\\n",
    "T sin##S(T); T tan##S(T); T acosh##S(T); T asinh##S(T); T atanh##S(T); \\\n",
    "T cosh##S(T); T sinh##S(T); T tanh##S(T); T exp##S(T); T exp2##S(T); \\\n",
    "T expm1##S(T); T frexp##S(T, int *); int ilogb##S(T); T ldexp##S(T, int); \\\n",
    "T log##S(T); T log10##S(T); T log1p##S(T); T log2##S(T); T logb##S(T); \\\n",
    "T modf##S(T, T *); T scalbn##S(T, int); T cbrt##S(T); T fabs##S(T); \\\n",
    "T hypot##S(T, T); T pow##S(T, T); T sqrt##S(T); T erf##S(T); T erfc##S(T); \\\n",
    "T lgamma##S(T); T tgamma##S(T); T ceil##S(T); T floor##S(T); \\\n",
    "T nearbyint##S(T); T rint##S(T); long lrint##S(T); long long llrint##S(T); \\\n",
    "T round##S(T); long lround##S(T); long long llround##S(T); T trunc##S(T); \\\n",
    "T fmod##S(T, T); T remainder##S(T, T); T remquo##S(T, T, int *); \\\n",
    "T copysign##S(T, T); T nextafter##S(T, T); T fdim##S(T, T); T fmax##S(T, T); \\\n",
    "T fmin##S(T, T); T fma##S(T, T, T);\n",
    "HS_MATH(double, )\n",
    "HS_MATH(float, f)\n",
    "#undef HS_MATH\n",
    "#define NAN __builtin_nanf(\"\")\n",
    "#define INFINITY __builtin_inff()\n",
    "#define isnan(x) __builtin_isnan(x)\n",
    "#define isinf(x) __builtin_isinf_sign(x)\n",
    "#define isfinite(x) __builtin_isfinite(x)\n",
    "#define signbit(x) __builtin_signbit(x)\n",
    "#define isless(x, y) __builtin_isless(x, y)\n",
    "void *memcpy(void *, const void *, __SIZE_TYPE__);\n",
    "void *memset(void *, int, __SIZE_TYPE__);\n",
    "#define HS_INLINE static inline __attribute__((always_inline))\n",
    "#define HS_KERNEL __attribute__((visibility(\"default\")))\n",
);

/// C99 as compiled by the system compiler for the CPU engine.
pub const C99: Dialect = Dialect {
    name: "c99",
    header: C99_HEADER,
    storage: C_TYPES,
    compute: C_COMPUTE,
    math_suffix: C_SUFFIX,
    restrict: "restrict",
    global: "",
    entry_qualifier: "HS_KERNEL ",
    entry_returns_status: true,
    buffers: BufferPassing::Array,
    index_range: IndexRange::Loop,
    barrier: "",
    index_type: "int64_t",
    simd: Some("#pragma omp simd"),
    unroll: Some("#pragma GCC unroll 8"),
    split_wide_int_to_double: true,
    complex: true,
};

/// OpenCL C 1.2: the stdint names and limits the prelude uses are typedef'd and defined,
/// math is overloaded (no suffixes), float16 is `half` (needs cl_khr_fp16). Extensions
/// are enabled only where the device has them, so one source builds on devices without
/// fp64 or fp16 (their kernels go to another engine). FP_CONTRACT is off, as the cpu
/// engine's `-ffp-contract=off`: OpenCL C lets a compiler fuse `a * b + c` into one
/// rounding unless told otherwise, and NVIDIA's fused a column sum's product into its
/// running sum across statements (an ulp from NumPy's and the CPU engine's sums, found
/// on an H200 by `column_sums_have_the_bits_of_the_fixed_order_for_every_work_group_size`).
pub const OPENCL: Dialect = Dialect {
    name: "opencl",
    header: "#pragma OPENCL FP_CONTRACT OFF
typedef char int8_t; typedef short int16_t; typedef int int32_t; typedef long int64_t;\n\
typedef uchar uint8_t; typedef ushort uint16_t; typedef uint uint32_t; typedef ulong uint64_t;\n\
#ifdef cl_khr_fp64\n#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n#endif\n\
#ifdef cl_khr_fp16\n#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n#endif\n\
#define INT8_MIN SCHAR_MIN\n#define INT8_MAX SCHAR_MAX\n#define INT16_MIN SHRT_MIN\n\
#define INT16_MAX SHRT_MAX\n#define INT32_MIN INT_MIN\n#define INT32_MAX INT_MAX\n\
#define INT64_MIN LONG_MIN\n#define INT64_MAX LONG_MAX\n#define UINT8_MAX UCHAR_MAX\n\
#define UINT16_MAX USHRT_MAX\n#define UINT32_MAX UINT_MAX\n#define UINT64_MAX ULONG_MAX\n\
#define HS_INLINE static inline\n\
#define HS_KERNEL\n",
    storage: [
        "uint8_t", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t",
        "uint64_t", "half", "float", "double", "float2", "double2",
    ],
    compute: [
        "uint8_t", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t",
        "uint64_t", "float", "float", "double", "float2", "double2",
    ],
    math_suffix: [""; 14],
    restrict: "restrict",
    global: "__global ",
    entry_qualifier: "__kernel ",
    entry_returns_status: false,
    buffers: BufferPassing::Params,
    index_range: IndexRange::GlobalId,
    barrier: "barrier(CLK_LOCAL_MEM_FENCE);",
    index_type: "int64_t",
    simd: None,
    unroll: None,
    split_wide_int_to_double: false,
    complex: false,
};

impl Dialect {
    pub fn storage(&self, d: DType) -> &'static str {
        self.storage[d as usize]
    }
    pub fn compute(&self, d: DType) -> &'static str {
        self.compute[d as usize]
    }
    /// The libm function `base` (`"exp"`) for dtype `d` in this dialect.
    pub fn math(&self, base: &str, d: DType) -> String {
        format!("{base}{}", self.math_suffix[d as usize])
    }
}
