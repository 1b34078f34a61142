//! The helper functions every translation unit starts with, written once against the
//! dialect header's macros and stdint names, so C99 and OpenCL C share them.
//!
//! They carry NumPy's rules where C's operators differ: integer floor division and modulo
//! take the divisor's sign (`fmod` the dividend's) and give 0 for division by zero, shifts
//! by the type's width or more give 0 (or -1 for negative values shifted right),
//! `maximum`/`minimum` propagate NaN, float `floor_divide`/`remainder` follow
//! `npy_divmod`, integer `power` squares.

use crate::Dialect;

const INT_OPS: &str = r#"
/* NumPy's npy_gcdu/npy_lcmu on magnitudes: Euclid, and a / gcd * b wrapping (its low
   bits are those of the narrower types' unsigned arithmetic). */
HS_INLINE uint64_t hs_gcd_u64(uint64_t a, uint64_t b) {
  while (a != 0) { uint64_t c = a; a = b % a; b = c; }
  return b; }
HS_INLINE uint64_t hs_lcm_u64(uint64_t a, uint64_t b) {
  uint64_t g = hs_gcd_u64(a, b);
  return g == 0 ? 0 : a / g * b; }
#define HS_SINT(N, T, U, BITS, MIN) \
HS_INLINE uint64_t hs_mag_##N(T a) { \
  return a < 0 ? (uint64_t)0 - (uint64_t)(int64_t)a : (uint64_t)a; } \
HS_INLINE T hs_gcd_##N(T a, T b) { return (T)hs_gcd_u64(hs_mag_##N(a), hs_mag_##N(b)); } \
HS_INLINE T hs_lcm_##N(T a, T b) { return (T)hs_lcm_u64(hs_mag_##N(a), hs_mag_##N(b)); } \
HS_INLINE T hs_floordiv_##N(T a, T b) { \
  if (b == 0) return 0; \
  if (a == MIN && b == -1) return MIN; \
  T q = a / b; \
  if ((a % b != 0) && ((a < 0) != (b < 0))) q--; \
  return q; } \
HS_INLINE T hs_mod_##N(T a, T b) { \
  if (b == 0 || b == -1) return 0; \
  T r = a % b; \
  if (r != 0 && ((r < 0) != (b < 0))) r += b; \
  return r; } \
HS_INLINE T hs_fmod_##N(T a, T b) { return (b == 0 || b == -1) ? 0 : (T)(a % b); } \
HS_INLINE T hs_pow_##N(T a, T b) { \
  if (b < 0) return 0; \
  U r = 1, x = (U)a; \
  while (b) { if (b & 1) r *= x; x *= x; b >>= 1; } \
  return (T)r; } \
HS_INLINE T hs_shl_##N(T a, T b) { \
  return (T)(((U)a << ((U)b & (BITS - 1))) & (U)-(U)((U)b < BITS)); } \
HS_INLINE T hs_shr_##N(T a, T b) { \
  return (T)(a >> (((U)b | (U)-(U)((U)b >= BITS)) & (BITS - 1))); }
#define HS_UINT(N, T, BITS) \
HS_INLINE T hs_gcd_##N(T a, T b) { return (T)hs_gcd_u64(a, b); } \
HS_INLINE T hs_lcm_##N(T a, T b) { return (T)hs_lcm_u64(a, b); } \
HS_INLINE T hs_floordiv_##N(T a, T b) { return b == 0 ? 0 : (T)(a / b); } \
HS_INLINE T hs_mod_##N(T a, T b) { return b == 0 ? 0 : (T)(a % b); } \
HS_INLINE T hs_fmod_##N(T a, T b) { return b == 0 ? 0 : (T)(a % b); } \
HS_INLINE T hs_pow_##N(T a, T b) { \
  T r = 1, x = a; \
  while (b) { if (b & 1) r = (T)(r * x); x = (T)(x * x); b >>= 1; } \
  return r; } \
HS_INLINE T hs_shl_##N(T a, T b) { return (T)((a << (b & (BITS - 1))) & (T)-(T)(b < BITS)); } \
HS_INLINE T hs_shr_##N(T a, T b) { return (T)((a >> (b & (BITS - 1))) & (T)-(T)(b < BITS)); }
HS_SINT(int8, int8_t, uint8_t, 8, INT8_MIN)
HS_SINT(int16, int16_t, uint16_t, 16, INT16_MIN)
HS_SINT(int32, int32_t, uint32_t, 32, INT32_MIN)
HS_SINT(int64, int64_t, uint64_t, 64, INT64_MIN)
HS_UINT(uint8, uint8_t, 8)
HS_UINT(uint16, uint16_t, 16)
HS_UINT(uint32, uint32_t, 32)
HS_UINT(uint64, uint64_t, 64)
"#;

/// Integer floor division and remainder by a positive divisor small enough that
/// floating-point arithmetic finds them exactly, which vectorises where integer division
/// does not (no vector unit divides integers). `inv` is `1 / d` in `F`. The quotient of
/// `x` (an integer below 2^p in magnitude, p = 24 for float and 53 for double) is
/// estimated as `trunc(x * inv)`, at most one from the floor, and corrected by the sign
/// of the remainder it leaves. 64-bit dividends go in two steps: the high 32 bits first
/// (`hi = q_h d + r_h`), then `r_h 2^32 + lo`, exact in a double while `d < 2^21`.
/// The kernels call these only in the loop nest taken when every such divisor is in
/// range.
const SMALL_DIVISOR_OPS: &str = r#"
/* The 32- and 64-bit forms below need the vector conversions of 64-bit integers
   (`HS_WIDE_FCVT`: their quotients pass through int64_t); without them they run scalar,
   slower than the hardware division (on a Zen 3, int64 % 10 over 10^6 elements: 7.8 ms
   against 2.8). The kernels test it before taking them; the 8- and 16-bit forms (float)
   vectorise everywhere. */
/* floor(x / d) for 0 < d, |x| < 2^p: the truncated estimate, one step down where the
   remainder it leaves is negative and one up where it is d or more. */
HS_INLINE int32_t hs_squot_f(int32_t x, int32_t d, float inv) {
  const int32_t q = (int32_t)((float)x * inv), r = x - q * d;
  return q - (int32_t)(r < 0) + (int32_t)(r >= d); }
HS_INLINE int64_t hs_squot_d(int64_t x, int64_t d, double inv) {
  const int64_t q = (int64_t)((double)x * inv), r = x - q * d;
  return q - (int64_t)(r < 0) + (int64_t)(r >= d); }
#define HS_SMALLDIV(N, T, F, Q, SQ) \
HS_INLINE T hs_sdiv_##N(T a, T d, F inv) { return (T)SQ((Q)a, (Q)d, inv); } \
HS_INLINE T hs_smod_##N(T a, T d, F inv) { return (T)((Q)a - SQ((Q)a, (Q)d, inv) * (Q)d); }
HS_SMALLDIV(int8, int8_t, float, int32_t, hs_squot_f)
HS_SMALLDIV(int16, int16_t, float, int32_t, hs_squot_f)
HS_SMALLDIV(int32, int32_t, double, int64_t, hs_squot_d)
HS_SMALLDIV(uint8, uint8_t, float, int32_t, hs_squot_f)
HS_SMALLDIV(uint16, uint16_t, float, int32_t, hs_squot_f)
HS_SMALLDIV(uint32, uint32_t, double, int64_t, hs_squot_d)
#define HS_SMALLDIV64(N, T, HI) \
HS_INLINE int64_t hs_srest_##N(T a, int64_t d, int64_t qh) { const int64_t hi = HI; \
  return (int64_t)((uint64_t)(hi - qh * d) << 32 | ((uint64_t)a & 0xffffffffu)); } \
HS_INLINE T hs_sdiv_##N(T a, T d, double inv) { const int64_t hi = HI; \
  const int64_t qh = hs_squot_d(hi, (int64_t)d, inv); \
  const int64_t rest = hs_srest_##N(a, (int64_t)d, qh); \
  return (T)(((uint64_t)qh << 32) + (uint64_t)hs_squot_d(rest, (int64_t)d, inv)); } \
HS_INLINE T hs_smod_##N(T a, T d, double inv) { const int64_t hi = HI; \
  const int64_t rest = hs_srest_##N(a, (int64_t)d, hs_squot_d(hi, (int64_t)d, inv)); \
  return (T)(rest - hs_squot_d(rest, (int64_t)d, inv) * (int64_t)d); }
HS_SMALLDIV64(int64, int64_t, a >> 32)
HS_SMALLDIV64(uint64, uint64_t, (int64_t)(a >> 32))
"#;

const FLOAT_OPS: &str = r#"
/* floor_divide and remainder are npy_divmod's, written as selects with every call made
   on every path: GCC if-converts that into a simd loop, not branches or a call on some
   paths only. */
#define HS_FLOAT(N, T, S) \
HS_INLINE T hs_max_##N(T a, T b) { return (a >= b || isnan(a)) ? a : b; } \
HS_INLINE T hs_min_##N(T a, T b) { return (a <= b || isnan(a)) ? a : b; } \
HS_INLINE T hs_frexp_exp_##N(T a) { \
  return (a == 0 || !isfinite(a)) ? (T)0 : (T)(ilogb##S(a) + 1); } \
HS_INLINE T hs_sign_##N(T a) { return a > 0 ? (T)1 : (a < 0 ? (T)-1 : (a == 0 ? (T)0 : a)); } \
HS_INLINE T hs_floordiv_##N(T a, T b) { \
  const T mod = hs_fmod_##N(a, b); \
  T div = (a - mod) / b; \
  div = (mod != 0) & ((b < 0) != (mod < 0)) ? div - (T)1 : div; \
  T fl = floor##S(div); \
  fl = div - fl > (T)0.5 ? fl + (T)1 : fl; \
  fl = div != 0 ? fl : copysign##S((T)0, a / b); \
  return b == 0 ? a / b : fl; } \
HS_INLINE T hs_mod_##N(T a, T b) { \
  T mod = hs_fmod_##N(a, b); \
  if (b == 0) return mod; \
  if (mod != 0) { if (isless(b, (T)0) != isless(mod, (T)0)) mod += b; } \
  else mod = copysign##S((T)0, b); \
  return mod; }
"#;

/// C's `fmod` for a vectorised loop. libmvec has no `fmod`, and a loop calling the scalar
/// one stays scalar: a fused kernel with a float `%` (`(x + y) % 64`, a periodic wrap
/// `x % cells`) ran at a fifth of its neighbours' bandwidth. Where the quotient is
/// small the remainder is found exactly with arithmetic that vectorises:
/// `q = trunc(a / b)` is the truncated quotient or one more in magnitude (`a / b` rounds
/// to at most the next integer, and integers up to 2^p are representable), and
/// `a - q b`, one FMA, is then exact: the true remainder, or that less `|b|` with the
/// dividend's sign flipped, a multiple of the smaller operand's ulp no larger than `|b|`
/// (or, where `|a| < |b|` and `a / b` rounded up to 1, `a - b`, exact by Sterbenz). One
/// addition of `copysign(b, a)` corrects the overshoot, and `copysign(r, a)` gives a zero
/// the dividend's sign, as `fmod` does. Lanes with a quotient of 2^(p-1) or more, an
/// infinite divisor, or a NaN take `fmod` itself through `hs_fmod_rare_*`, a function
/// with simd clones (GCC 12 calls no masked clone, so it is called for every lane and
/// picks). Bit for bit `fmod`
/// (`test_float_fmod_remainder_and_floor_divide_are_numpys_bit_for_bit`); without a
/// hardware FMA, `fmod` everywhere.
const C_FMOD: &str = r#"
#if defined(__FMA__) || defined(__aarch64__)
#define HS_FMOD(N, T, S, HALF_RANGE) \
_Pragma("omp declare simd notinbranch") \
__attribute__((noinline)) static T hs_fmod_rare_##N(T a, T b, T r, T ok) { \
  return ok != 0 ? r : fmod##S(a, b); } \
HS_INLINE T hs_fmod_##N(T a, T b) { \
  const T q = trunc##S(a / b); \
  T r = fma##S(-q, b, a); \
  r = ((r < 0) & (a > 0)) | ((r > 0) & (a < 0)) ? r + copysign##S(b, a) : r; \
  const T ok = (T)((fabs##S(q) < HALF_RANGE) & (fabs##S(b) < (T)INFINITY)); \
  return hs_fmod_rare_##N(a, b, copysign##S(r, a), ok); }
#else
"#;

/// C's `fmod` itself: OpenCL's (the device's own, vectorised by its compiler), and C's
/// without a hardware FMA.
const PLAIN_FMOD: &str = r#"#define HS_FMOD(N, T, S, HALF_RANGE) \
HS_INLINE T hs_fmod_##N(T a, T b) { return fmod##S(a, b); }
"#;

const HALF_OPS: &str = r#"
/* NumPy's npy_half_nextafter on float16 values carried as float (C's nextafterf would
   step to a float neighbour): equal operands give a, any NaN the NaN 0x7e00; from a zero
   the smallest subnormal 2^-24 with b's sign; else a moved by the float16 spacing on the
   side it moves to: 2^(e-10) for a of exponent e, 2^(e-11) just below a power of two,
   2^-24 among subnormals, added to or taken from the magnitude (the smallest negative
   subnormal steps to -0.0). The largest finite value steps to infinity and back. */
#define HS_HALF(S) \
HS_INLINE float hs_nextafter_float16(float a, float b) { \
  if (isnan(a) || isnan(b)) return NAN; \
  if (a == b) return a; \
  if (a == 0) return copysign##S(5.9604644775390625e-8f, b); \
  float m = fabs##S(a); \
  int away = (b > a) == (a > 0); \
  if (isinf(a)) return copysign##S(65504.0f, a); \
  if (away && m == 65504.0f) return copysign##S(INFINITY, a); \
  int e = ilogb##S(m); \
  float s = e < -14 ? 5.9604644775390625e-8f \
    : ldexp##S(1.0f, e - 10 - (!away && e > -14 && m == ldexp##S(1.0f, e))); \
  return copysign##S(away ? m + s : m - s, a); }
"#;

const FLOAT_TO_INT: &str = r#"
/* float -> integer as NumPy converts on x86-64, out of range too (hassium_core::float_to_int):
   into int32 (8-32-bit targets, then wrapped) or int64 by truncation, INT_MIN for NaN and
   what does not fit; unsigned 32/64-bit targets take 2^31 (2^63) off values above the
   signed range and set the top bit again. Only in-range values reach a C conversion,
   whose result C leaves undefined otherwise. */
#define HS_F2I(N, T) \
HS_INLINE int32_t hs_f2i32_##N(T x) { \
  return (x > (T)-2147483649.0 && x < (T)2147483648.0) ? (int32_t)x : (int32_t)(-2147483647 - 1); } \
HS_INLINE int64_t hs_f2i64_##N(T x) { \
  return (x >= (T)-9223372036854775808.0 && x < (T)9223372036854775808.0) \
    ? HS_TRUNC_I64(x) : (int64_t)(-9223372036854775807 - 1); } \
HS_INLINE uint32_t hs_f2u32_##N(T x) { \
  return x >= (T)2147483648.0 ? ((uint32_t)hs_f2i32_##N(x - (T)2147483648.0) ^ 0x80000000u) \
    : (uint32_t)hs_f2i32_##N(x); } \
HS_INLINE uint64_t hs_f2u64_##N(T x) { \
  return x >= (T)9223372036854775808.0 \
    ? ((uint64_t)hs_f2i64_##N(x - (T)9223372036854775808.0) ^ ((uint64_t)1 << 63)) \
    : (uint64_t)hs_f2i64_##N(x); }
"#;

/// Philox-4x32-10 in words of type `HS_PW` holding 32-bit values (`HS_LO32` keeps the
/// low half). The C dialect carries them in 64-bit words where the vector unit
/// multiplies 64-bit lanes (AVX-512DQ, other targets): with 32-bit words and 64-bit
/// products GCC narrows and widens vectors in every round (a Monte Carlo kernel drawing
/// two numbers per element ran 2x slower). x86 below AVX-512DQ has no such multiply, and
/// GCC 12 builds each constant product from about 30 shifts and adds; there the words
/// are 32-bit and the products' high halves come from 16-bit halves (`hs_mulhi32`, all
/// in 32-bit lanes): that kernel, 10^7 pairs on one AVX2 core, 170-195 → 135-140 ms.
/// OpenCL keeps 32-bit words, which a GPU multiplies natively.
const PHILOX: &str = r#"
/* Philox-4x32-10, bit-identical to hassium_core::philox::random_u64. The ten rounds
   are written out: GCC at -O2 keeps a loop of ten, and a loop inside the lanes' loop
   stops it vectorising the kernel. */
#ifdef HS_PHILOX_SPLIT
/* The high half of a * k from 16-bit halves, every product and sum fitting 32 bits. */
HS_INLINE uint32_t hs_mulhi32(uint32_t a, uint32_t k) {
  const uint32_t al = a & 0xffffu, ah = a >> 16, kl = k & 0xffffu, kh = k >> 16;
  const uint32_t ll = al * kl, m = ah * kl + (ll >> 16), m2 = al * kh + (m & 0xffffu);
  return ah * kh + (m >> 16) + (m2 >> 16);
}
#define HS_PHILOX_ROUND { \
  const uint32_t h0 = hs_mulhi32(c0, 0xD2511F53u), h1 = hs_mulhi32(c2, 0xCD9E8D57u); \
  const uint32_t l0 = c0 * 0xD2511F53u, l1 = c2 * 0xCD9E8D57u; \
  c0 = h1 ^ c1 ^ k0; c2 = h0 ^ c3 ^ k1; c1 = l1; c3 = l0; }
#else
#define HS_PHILOX_ROUND { \
  const uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2; \
  const HS_PW n0 = HS_LO32((p1 >> 32) ^ c1 ^ k0), n2 = HS_LO32((p0 >> 32) ^ c3 ^ k1); \
  c1 = HS_LO32(p1); c3 = HS_LO32(p0); c0 = n0; c2 = n2; }
#endif
#define HS_PHILOX_BUMP { k0 = HS_LO32(k0 + 0x9E3779B9u); k1 = HS_LO32(k1 + 0xBB67AE85u); }
HS_INLINE uint64_t hs_philox(uint64_t seed, uint64_t stream, uint64_t i) {
  HS_PW c0 = HS_LO32(i), c1 = HS_LO32(i >> 32), c2 = HS_LO32(stream), c3 = HS_LO32(stream >> 32);
  HS_PW k0 = HS_LO32(seed), k1 = HS_LO32(seed >> 32);
  HS_PHILOX_ROUND HS_PHILOX_BUMP HS_PHILOX_ROUND HS_PHILOX_BUMP HS_PHILOX_ROUND HS_PHILOX_BUMP
  HS_PHILOX_ROUND HS_PHILOX_BUMP HS_PHILOX_ROUND HS_PHILOX_BUMP HS_PHILOX_ROUND HS_PHILOX_BUMP
  HS_PHILOX_ROUND HS_PHILOX_BUMP HS_PHILOX_ROUND HS_PHILOX_BUMP HS_PHILOX_ROUND HS_PHILOX_BUMP
  HS_PHILOX_ROUND
  return ((uint64_t)c1 << 32) | c0;
}
"#;

/// Whether the target's vector unit converts between 64-bit integers and double
/// (`HS_WIDE_FCVT`): x86-64 does from AVX-512DQ on. Below that, one such conversion keeps
/// a whole fused kernel scalar, so the C dialect's prelude spells them another way there.
const WIDE_FCVT: &str = r#"
#if defined(__x86_64__) && !defined(__AVX512DQ__)
#define HS_WIDE_FCVT 0
#else
#define HS_WIDE_FCVT 1
#endif
"#;

/// Truncation of an in-range float to int64 (`HS_TRUNC_I64`), for `FLOAT_TO_INT`.
const TRUNC_I64_SPLIT: &str = r#"
/* float -> int64 without the conversion AVX2 lacks (which kept a particle code's whole
   fused kernel scalar for one `astype(np.int64)`): for an integer t, |t| < 2^63, the high
   and low 32-bit parts are exact in double, adding 1.5 * 2^52 to each leaves the part in
   the sum's low mantissa bits (two's complement), and uint64 arithmetic joins them.
   Checked against the C cast on 4.2e8 values of every magnitude, NaN and infinities. */
#if !HS_WIDE_FCVT
HS_INLINE int64_t hs_trunc_i64(double x) {
  const double t = __builtin_trunc(x), hi = __builtin_trunc(t * 0x1p-32), lo = t - hi * 0x1p32;
  const double a = hi + 0x1.8p52, b = lo + 0x1.8p52;
  uint64_t ua, ub; __builtin_memcpy(&ua, &a, 8); __builtin_memcpy(&ub, &b, 8);
  return (int64_t)(((ua - 0x4338000000000000u) << 32) + (ub - 0x4338000000000000u)); }
#define HS_TRUNC_I64(x) hs_trunc_i64((double)(x))
#else
#define HS_TRUNC_I64(x) ((int64_t)(x))
#endif
"#;

const WIDE_INT_TO_DOUBLE: &str = r#"
/* int64/uint64 -> double and float without the 64-bit conversions AVX2 lacks: the high
   half times 2^32 and the low half are both exact, so their sum is rounded once, as the
   C cast rounds. A uint32 converts as int32 plus 2^31, since AVX2 converts only signed. */
#if !HS_WIDE_FCVT
HS_INLINE double hs_u32_f64(uint32_t u) { return (double)(int32_t)(u ^ 0x80000000u) + 2147483648.0; }
HS_INLINE double hs_i64_f64(int64_t x) {
  return (double)(int32_t)(uint32_t)((uint64_t)x >> 32) * 4294967296.0 + hs_u32_f64((uint32_t)x); }
HS_INLINE double hs_u64_f64(uint64_t x) {
  return hs_u32_f64((uint32_t)(x >> 32)) * 4294967296.0 + hs_u32_f64((uint32_t)x); }
/* To float the same halves are summed in double: the sum s is rounded once and its error
   e is exact (two-sum). Rounding s on to float rounds x twice, which differs from
   rounding x once only where s is a float midpoint (its 29 low bits 10...0) and s != x;
   one double ulp towards x then decides it. Checked against the C cast on 8.4e8 values,
   many of them next to midpoints (tests/python/test_elementwise_misc.py holds the edges). */
HS_INLINE float hs_f64pair_f32(double h, double l) {
  const double s = h + l, b = s - h, e = (h - (s - b)) + (l - b);
  uint64_t bits; __builtin_memcpy(&bits, &s, 8);
  const int64_t towards = (e > 0) == (s > 0) ? 1 : -1;
  bits += (uint64_t)((bits & 0x1fffffffu) == 0x10000000u && e != 0 ? towards : 0);
  double t; __builtin_memcpy(&t, &bits, 8);
  return (float)t; }
HS_INLINE float hs_i64_f32(int64_t x) {
  return hs_f64pair_f32((double)(int32_t)(uint32_t)((uint64_t)x >> 32) * 4294967296.0,
                        hs_u32_f64((uint32_t)x)); }
HS_INLINE float hs_u64_f32(uint64_t x) {
  return hs_f64pair_f32(hs_u32_f64((uint32_t)(x >> 32)) * 4294967296.0, hs_u32_f64((uint32_t)x)); }
#else
HS_INLINE double hs_i64_f64(int64_t x) { return (double)x; }
HS_INLINE double hs_u64_f64(uint64_t x) { return (double)x; }
HS_INLINE float hs_i64_f32(int64_t x) { return (float)x; }
HS_INLINE float hs_u64_f32(uint64_t x) { return (float)x; }
#endif
"#;

/// Complex helpers (C only, GCC's and Clang's `__real__`, `__imag__` and
/// `__builtin_complex`): NumPy's formulas, not C's Annex G ones (`*` of two `_Complex`
/// values calls `__muldc3`, which recovers infinities NumPy's loop leaves NaN).
///
/// - The product is NumPy's multiply and square loops' (`hs_cmulf`: each part one fused
///   multiply-add, `fma(ar, br, -(ai * bi))` and `fma(ar, bi, ai * br)`); inside a power
///   it is the schoolbook one (`hs_cmul`), as in NumPy's `npy_cpow`. (Complex reductions
///   are interpreted, with NumPy's reduce-loop product; see `lower`.)
/// - The quotient is Smith's, as NumPy's divide loop.
/// - The magnitude is NumPy's array loop's, `big * sqrt(fma(q, q, 1))` with `q = small /
///   big` and infinity before NaN, not libm's `hypot` (which differs from it in the last
///   bit for about a third of all values and, a vector call, costs more). It works on the
///   parts' bits, where non-negative floats order as integers do (NaN above infinity):
///   the larger and smaller part, `q` clamped to 1 (which turns the NaN of 0/0 and
///   inf/inf into 1, so that 0 and inf come out), and a cap at infinity when the smaller
///   part is infinite (inf beside NaN) are integer minima and maxima. Written as selects
///   on float comparisons it cost GCC's value numbering seconds (Mandelbrot's kernel of 24
///   magnitudes: 12 s to compile, 2 s this way, 0.5 s calling `hypot`), and `isnan(re) |
///   isnan(im)`, an `int` among `double` lanes, kept its loops from vectorising.
/// - A power multiplies for an integer exponent under 100 (NumPy's `npy_cpow`) and is
///   `exp(b * log(a))` otherwise, in the reference engine's order of operations. That
///   `exp` has Annex G's values for infinite and NaN parts, and where `e^x` overflows it
///   scales `cos y` and `sin y` by `e^t` (t = 709, or 88 in float) up to twice before
///   multiplying, as C's `cexp` does, so a zero or tiny imaginary part stays finite:
///   `(2+0j)**32767` is `inf+0j`, as in NumPy (whose power calls C's `cpow` there), not
///   `inf * sin 0 = nan`.
const COMPLEX_OPS: &str = r#"
#define HS_COMPLEX(N, C, R, S, T, MIN, MAX) \
HS_INLINE C hs_cmul_##N(C a, C b) { \
  R ar = __real__ a, ai = __imag__ a, br = __real__ b, bi = __imag__ b; \
  return __builtin_complex((R)(ar * br - ai * bi), (R)(ar * bi + ai * br)); } \
HS_INLINE C hs_cmulf_##N(C a, C b) { \
  R ar = __real__ a, ai = __imag__ a, br = __real__ b, bi = __imag__ b; \
  return __builtin_complex(fma##S(ar, br, -(ai * bi)), fma##S(ar, bi, ai * br)); } \
HS_INLINE C hs_cdiv_##N(C a, C b) { \
  R ar = __real__ a, ai = __imag__ a, br = __real__ b, bi = __imag__ b; \
  R bra = fabs##S(br), bia = fabs##S(bi); \
  if (bra >= bia) { \
    if (bra == 0 && bia == 0) return __builtin_complex((R)(ar / bra), (R)(ai / bra)); \
    R rat = bi / br, scl = (R)1.0 / (br + bi * rat); \
    return __builtin_complex((R)((ar + ai * rat) * scl), (R)((ai - ar * rat) * scl)); } \
  R rat = br / bi, scl = (R)1.0 / (bi + br * rat); \
  return __builtin_complex((R)((ar * rat + ai) * scl), (R)((ai * rat - ar) * scl)); } \
HS_INLINE C hs_conj_##N(C a) { return __builtin_complex((R)__real__ a, (R)-__imag__ a); } \
HS_INLINE C hs_cpow_##N(C a, C b) { \
  R ar = __real__ a, ai = __imag__ a, br = __real__ b, bi = __imag__ b; \
  if (br == 0 && bi == 0) return __builtin_complex((R)1, (R)0); \
  if (ar == 0 && ai == 0) \
    return br > 0 ? __builtin_complex((R)0, (R)0) \
                               : __builtin_complex((R)NAN, (R)NAN); \
  if (bi == 0 && br == trunc##S(br) && fabs##S(br) < 100) { \
    int64_t n = (int64_t)br; \
    if (n == 1) return a; \
    if (n == 2) return hs_cmul_##N(a, a); \
    if (n == 3) return hs_cmul_##N(hs_cmul_##N(a, a), a); \
    uint64_t e = n < 0 ? (uint64_t)-n : (uint64_t)n; \
    C p = a, acc = __builtin_complex((R)1, (R)0); \
    for (;;) { \
      if (e & 1) acc = hs_cmul_##N(acc, p); \
      e >>= 1; \
      if (e == 0) break; \
      p = hs_cmul_##N(p, p); } \
    return n < 0 ? hs_cdiv_##N(__builtin_complex((R)1, (R)0), acc) : acc; } \
  R lr = log##S(hypot##S(ar, ai)), li = atan2##S(ai, ar); \
  R er = br * lr - bi * li, ei = br * li + bi * lr; \
  if (isinf(er)) { \
    if (er < 0) { \
      if (!isfinite(ei)) return __builtin_complex((R)0, (R)0); \
    } else if (ei == 0 || !isfinite(ei)) { \
      return __builtin_complex(er, isinf(ei) ? (R)NAN : ei); } \
  } else if (isnan(er) && ei == 0) { \
    return __builtin_complex(er, ei); } \
  if (!isfinite(er) || !isfinite(ei)) { \
    R m = exp##S(er); \
    return __builtin_complex((R)(m * cos##S(ei)), (R)(m * sin##S(ei))); } \
  R s = ei, c = 1; \
  if (fabs##S(ei) > MIN) { s = sin##S(ei); c = cos##S(ei); } \
  if (er > T) { \
    R et = exp##S((R)T); \
    er -= T; s *= et; c *= et; \
    if (er > T) { er -= T; s *= et; c *= et; } } \
  if (er > T) return __builtin_complex((R)(MAX * c), (R)(MAX * s)); \
  R m = exp##S(er); \
  return __builtin_complex((R)(m * c), (R)(m * s)); }
typedef double hs_v1f64 __attribute__((vector_size(8)));
typedef uint64_t hs_v1u64 __attribute__((vector_size(8)));
typedef float hs_v1f32 __attribute__((vector_size(4)));
typedef uint32_t hs_v1u32 __attribute__((vector_size(4)));
#define HS_CABS(N, R, S, U, VF, VU, INF, ONE, TOP) \
HS_INLINE U hs_bits_##N(R x) { return ((VU)(VF){x})[0]; } \
HS_INLINE R hs_unbits_##N(U x) { return ((VF)(VU){x})[0]; } \
HS_INLINE R hs_cabs_##N(R x, R y) { \
  U rb = hs_bits_##N(x) & TOP, ib = hs_bits_##N(y) & TOP; \
  U bb = rb > ib ? rb : ib, sb = rb > ib ? ib : rb; \
  U qb = hs_bits_##N(hs_unbits_##N(sb) / hs_unbits_##N(bb)); \
  R q = hs_unbits_##N(qb < ONE ? qb : ONE); \
  U hb = hs_bits_##N(sqrt##S(fma##S(q, q, (R)1)) * hs_unbits_##N(bb)); \
  U z = sb ^ INF, cap = INF | ((U)0 - ((z | ((U)0 - z)) >> (sizeof(U) * 8 - 1)) & TOP); \
  return hs_unbits_##N(hb < cap ? hb : cap); }
HS_CABS(complex64, float, f, uint32_t, hs_v1f32, hs_v1u32, 0x7f800000u, 0x3f800000u, 0x7fffffffu)
HS_CABS(complex128, double, , uint64_t, hs_v1f64, hs_v1u64, 0x7ff0000000000000ull,
        0x3ff0000000000000ull, 0x7fffffffffffffffull)
HS_COMPLEX(complex64, float _Complex, float, f, 88, 0x1p-126f, 0x1.fffffep127f)
HS_COMPLEX(complex128, double _Complex, double, , 709, 0x1p-1022, 0x1.fffffffffffffp1023)
"#;

/// The start of a translation unit in `dialect`: its header, then the shared helpers.
pub fn prelude(dialect: &Dialect) -> String {
    let f16 = if dialect.name == "opencl" {
        "half"
    } else {
        "_Float16"
    };
    let mut s = String::from(dialect.header);
    s.push_str(&format!("#define HS_F16R(x) ((float)({f16})(x))\n"));
    if dialect.simd.is_some() || dialect.split_wide_int_to_double {
        s.push_str(WIDE_FCVT);
    }
    s.push_str(INT_OPS);
    if dialect.simd.is_some() {
        s.push_str(C_FMOD);
        s.push_str(PLAIN_FMOD);
        s.push_str("#endif\n");
    } else {
        s.push_str(PLAIN_FMOD);
    }
    s.push_str(FLOAT_OPS);
    s.push_str(HALF_OPS);
    let (sf, sd) = (dialect.math_suffix[10], dialect.math_suffix[11]);
    if dialect.split_wide_int_to_double {
        s.push_str(TRUNC_I64_SPLIT);
    } else {
        s.push_str("#define HS_TRUNC_I64(x) ((int64_t)(x))\n");
    }
    s.push_str(FLOAT_TO_INT);
    s.push_str(&format!(
        "HS_FMOD(float32, float, {sf}, 0x1p23f)\nHS_FLOAT(float32, float, {sf})\n\
         HS_F2I(float32, float)\nHS_HALF({sf})\n"
    ));
    // An OpenCL device without cl_khr_fp64 rejects any use of `double`.
    if dialect.name == "opencl" {
        s.push_str(
            "#ifdef cl_khr_fp64\nHS_FMOD(float64, double, , 0x1p52)\nHS_FLOAT(float64, double, )\n\
             HS_F2I(float64, double)\n#endif\n",
        );
    } else {
        s.push_str(&format!(
            "HS_FMOD(float64, double, {sd}, 0x1p52)\nHS_FLOAT(float64, double, {sd})\n\
             HS_F2I(float64, double)\n"
        ));
    }
    s.push_str(if dialect.simd.is_some() {
        "#if defined(__x86_64__) && !defined(__AVX512DQ__)\n#define HS_PHILOX_SPLIT\n\
         #define HS_PW uint32_t\n#define HS_LO32(x) ((uint32_t)(x))\n#else\n\
         #define HS_PW uint64_t\n#define HS_LO32(x) ((x) & 0xffffffffu)\n#endif\n"
    } else {
        "#define HS_PW uint32_t\n#define HS_LO32(x) ((uint32_t)(x))\n"
    });
    s.push_str(PHILOX);
    if dialect.simd.is_some() {
        s.push_str(SMALL_DIVISOR_OPS);
    }
    if dialect.complex {
        s.push_str(COMPLEX_OPS);
    }
    if dialect.split_wide_int_to_double {
        s.push_str(WIDE_INT_TO_DOUBLE);
    }
    s
}
