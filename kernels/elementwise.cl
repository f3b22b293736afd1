/* Elementwise ops: binary ops with NumPy broadcasting, unary float32 ops,
 * comparisons and logical ops on bool, where, cast.
 *
 * Every kernel runs one work-item per output element on a 1-D NDRange whose global
 * size is the element count n rounded up to the work-group size, so each work-item
 * first checks its index against n (an int: the plan keeps counts <= INT32_MAX).
 * bool is one byte per element (uchar), 0 or 1; inputs read any nonzero byte as true.
 *
 * Binary, for <op>_<t> in add, subtract, multiply, divide, maximum, minimum, power,
 * prelu, mod (t = f32); add, subtract, multiply, maximum, minimum, mod, floor_mod
 * (t = i32); equal, not_equal, less, less_equal, greater, greater_equal (t = f32,
 * i32, i64; R = uchar); logical_and, logical_or, logical_xor (t = bool, T = R = uchar);
 * T = float/int/long, R = T unless said:
 *   hgr_<op>_<t>(__global const T* a, __global const T* b, __global R* out, int n)
 *       a, b and out all have n elements (equal shapes)
 *   hgr_<op>_<t>_scalar_a(a, b, out, int n)   a has one element, b has n
 *   hgr_<op>_<t>_scalar_b(a, b, out, int n)   a has n elements, b has one
 *   hgr_<op>_<t>_broadcast(a, b, out, int n, __global const int* meta)
 *       meta = {ndim, extent[ndim], a_stride[ndim], b_stride[ndim]}: the output's
 *       (collapsed) shape and each input's element strides, 0 along broadcast dims.
 *   int32 arithmetic wraps around (two's complement), as in NumPy and TVM: it is
 *   done on uint, where overflow is defined.
 *   maximum/minimum on float32 are fmax/fmin: when one operand is NaN the result is
 *   the other operand (NaN only when both are); NumPy's maximum would return NaN.
 *   prelu: a < 0 ? b * a : a. mod: C's fmod on float32, C's % on int32 (the sign of
 *   a); floor_mod: the sign of b (Python's %); both give 0 for b = 0.
 *   Comparisons are IEEE's: NaN is unequal to everything (not_equal gives 1).
 *
 * where, for B = 8, 32, 64 bits per element of x, y and out (U = uchar, uint,
 * ulong: any dtype of that size, moved bit for bit), bool condition c:
 *   hgr_where_<B>(__global const uchar* c, __global const U* x, __global const U* y,
 *                 __global U* out, int n)        all n elements
 *   hgr_where_<B>_broadcast(c, x, y, out, int n, __global const int* meta)
 *       meta = {ndim, extent[ndim], c_stride[ndim], x_stride[ndim], y_stride[ndim]}
 *
 * Unary, x -> y, both n elements:
 *   hgr_<op>_f32(__global const float* x, __global float* y, int n)
 *       for op in relu, sigmoid, tanh, exp, log, sqrt, rsqrt, abs, negative, erf, gelu,
 *       gelu_tanh,
 *       softplus, softsign, reciprocal, floor, ceil, round, sign, hard_swish, sin, cos,
 *       tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh
 *       (relu is fmax(x, 0): NaN gives 0; round is half to even; sign(NaN) is NaN)
 *   hgr_leaky_relu_f32(x, y, int n, float alpha)     x > 0 ? x : x * alpha
 *   hgr_clip_f32(x, y, int n, float a_min, float a_max)  fmax(fmin(x, a_max), a_min)
 *       (NaN gives a_max)
 *   hgr_elu_f32(x, y, int n, float alpha)            x < 0 ? alpha * expm1(x) : x
 *   hgr_selu_f32(x, y, int n, float alpha, float gamma)
 *       x > 0 ? gamma * x : gamma * (alpha * expm1(x))
 *   hgr_hard_sigmoid_f32(x, y, int n, float alpha, float beta)
 *       fmax(0, fmin(1, alpha * x + beta)), NaN for NaN
 *   hgr_isnan_f32(__global const float* x, __global uchar* y, int n)
 *   hgr_isinf_f32(x, __global uchar* y, int n, int detect_positive, int detect_negative)
 *   hgr_logical_not_bool(__global const uchar* x, __global uchar* y, int n)
 *
 * Cast, x -> y, both n elements, hgr_cast_<from>_<to>(__global const F* x,
 * __global T* y, int n) for from, to in f32 (float), f16 (half, as storage),
 * bf16 (ushort: bfloat16's bits), i32 (int), i64 (long), u8 (uchar), i8 (char),
 * u16 (ushort), i16 (short), bool (uchar):
 *   float -> integer truncates toward zero; out-of-range values saturate and NaN
 *   gives 0. integer -> int32 saturates, -> int64 is exact, -> the 8- and 16-bit
 *   integers keeps the low bits (ONNX: 200 as int16 -> -56 as int8).
 *   -> float32, float16 and bfloat16 round to nearest even (an integer through
 *   float32). -> bool is x != 0 (NaN gives 1); bool -> is 0 or 1. Same dtype: a copy.
 */

#include "select.h"
#include "gelu.h"

#define HGR_GUARD(n)                  \
  size_t gid = get_global_id(0);      \
  if (gid >= (size_t)(n)) return;     \
  int i = (int)gid;

/* Flat offsets of output element i in a and b (see the meta layout above). The
 * remainder is written as i - (i / e) * e: with `%` beside `/` LLVM pairs them and
 * inserts a `freeze`, which Oclgrind 21.10's uninitialized-value checker rejects. */
void hgr_broadcast_offsets(__global const int* meta, int i, int* out_a, int* out_b) {
  int ndim = meta[0];
  __global const int* extent = meta + 1;
  __global const int* a_stride = extent + ndim;
  __global const int* b_stride = a_stride + ndim;
  int ia = 0, ib = 0;
  for (int d = ndim - 1; d >= 0; --d) {
    int e = extent[d];
    int next = i / e;
    int coord = i - next * e;
    i = next;
    ia += coord * a_stride[d];
    ib += coord * b_stride[d];
  }
  *out_a = ia;
  *out_b = ib;
}

#define HGR_BINARY_TO(name, T, R, expr)                                                            \
  HGR_KERNEL_IF(hgr_##name, \
  __kernel void hgr_##name(__global const T* a, __global const T* b, __global R* out, int n) {    \
    HGR_GUARD(n)                                                                                   \
    T x = a[i], y = b[i];                                                                          \
    out[i] = (expr);                                                                               \
  }) \
  HGR_KERNEL_IF(hgr_##name##_scalar_a, \
  __kernel void hgr_##name##_scalar_a(__global const T* a, __global const T* b, __global R* out,  \
                                      int n) {                                                     \
    HGR_GUARD(n)                                                                                   \
    T x = a[0], y = b[i];                                                                          \
    out[i] = (expr);                                                                               \
  }) \
  HGR_KERNEL_IF(hgr_##name##_scalar_b, \
  __kernel void hgr_##name##_scalar_b(__global const T* a, __global const T* b, __global R* out,  \
                                      int n) {                                                     \
    HGR_GUARD(n)                                                                                   \
    T x = a[i], y = b[0];                                                                          \
    out[i] = (expr);                                                                               \
  }) \
  HGR_KERNEL_IF(hgr_##name##_broadcast, \
  __kernel void hgr_##name##_broadcast(__global const T* a, __global const T* b, __global R* out, \
                                       int n, __global const int* meta) {                          \
    HGR_GUARD(n)                                                                                   \
    int ia, ib;                                                                                    \
    hgr_broadcast_offsets(meta, i, &ia, &ib);                                                      \
    T x = a[ia], y = b[ib];                                                                        \
    out[i] = (expr);                                                                               \
  })

#define HGR_BINARY(name, T, expr) HGR_BINARY_TO(name, T, T, expr)

HGR_BINARY(add_f32, float, x + y)
HGR_BINARY(subtract_f32, float, x - y)
HGR_BINARY(multiply_f32, float, x * y)
HGR_BINARY(divide_f32, float, x / y)
HGR_BINARY(maximum_f32, float, fmax(x, y))
HGR_BINARY(minimum_f32, float, fmin(x, y))
/* x * x is pow(x, 2) correctly rounded; PoCL's pow took 30-90 ns an element (a
 * LayerNorm written out squares every activation) */
HGR_BINARY(power_f32, float, y == 2.0f ? x * x : pow(x, y))

HGR_BINARY(add_i32, int, as_int(as_uint(x) + as_uint(y)))
HGR_BINARY(subtract_i32, int, as_int(as_uint(x) - as_uint(y)))
HGR_BINARY(multiply_i32, int, as_int(as_uint(x) * as_uint(y)))
HGR_BINARY(maximum_i32, int, max(x, y))
HGR_BINARY(minimum_i32, int, min(x, y))
HGR_BINARY(prelu_f32, float, x < 0.0f ? y * x : x)
HGR_BINARY(mod_f32, float, fmod(x, y))
/* C's % is undefined for b = 0 and for INT_MIN % -1 (whose remainder is 0). */
int hgr_remainder_trunc(int x, int y) { return y == 0 || y == -1 ? 0 : x % y; }
int hgr_remainder_floor(int x, int y) {
  int r = hgr_remainder_trunc(x, y);
  return r != 0 && (r < 0) != (y < 0) ? r + y : r;
}
HGR_BINARY(mod_i32, int, hgr_remainder_trunc(x, y))
HGR_BINARY(floor_mod_i32, int, hgr_remainder_floor(x, y))

#define HGR_COMPARE(name, op)                              \
  HGR_BINARY_TO(name##_f32, float, uchar, (uchar)(x op y)) \
  HGR_BINARY_TO(name##_i32, int, uchar, (uchar)(x op y))   \
  HGR_BINARY_TO(name##_i64, long, uchar, (uchar)(x op y))
HGR_COMPARE(equal, ==)
HGR_COMPARE(not_equal, !=)
HGR_COMPARE(less, <)
HGR_COMPARE(less_equal, <=)
HGR_COMPARE(greater, >)
HGR_COMPARE(greater_equal, >=)

HGR_BINARY(logical_and_bool, uchar, (uchar)(x != 0 && y != 0))
HGR_BINARY(logical_or_bool, uchar, (uchar)(x != 0 || y != 0))
HGR_BINARY(logical_xor_bool, uchar, (uchar)((x != 0) != (y != 0)))

/* Flat offsets of output element i in c, x and y: meta = {ndim, extent[ndim],
 * c_stride[ndim], x_stride[ndim], y_stride[ndim]} (remainder as above). */
void hgr_broadcast_offsets3(__global const int* meta, int i, int* out_c, int* out_x, int* out_y) {
  int ndim = meta[0];
  __global const int* extent = meta + 1;
  __global const int* c_stride = extent + ndim;
  __global const int* x_stride = c_stride + ndim;
  __global const int* y_stride = x_stride + ndim;
  int ic = 0, ix = 0, iy = 0;
  for (int d = ndim - 1; d >= 0; --d) {
    int e = extent[d];
    int next = i / e;
    int coord = i - next * e;
    i = next;
    ic += coord * c_stride[d];
    ix += coord * x_stride[d];
    iy += coord * y_stride[d];
  }
  *out_c = ic;
  *out_x = ix;
  *out_y = iy;
}

#define HGR_WHERE(bits, T)                                                                                      \
  HGR_KERNEL_IF(hgr_where_##bits, \
  __kernel void hgr_where_##bits(__global const uchar* c, __global const T* x, __global const T* y, __global T* out, \
                                 int n) {                                                                           \
    HGR_GUARD(n)                                                                                                    \
    out[i] = c[i] ? x[i] : y[i];                                                                                    \
  }) \
  HGR_KERNEL_IF(hgr_where_##bits##_broadcast, \
  __kernel void hgr_where_##bits##_broadcast(__global const uchar* c, __global const T* x, __global const T* y,      \
                                             __global T* out, int n, __global const int* meta) {                    \
    HGR_GUARD(n)                                                                                                    \
    int ic, ix, iy;                                                                                                 \
    hgr_broadcast_offsets3(meta, i, &ic, &ix, &iy);                                                                 \
    out[i] = c[ic] ? x[ix] : y[iy];                                                                                 \
  })
HGR_WHERE(8, uchar)
HGR_WHERE(32, uint)
HGR_WHERE(64, ulong)

#define HGR_UNARY(name, expr)                                                      \
  HGR_KERNEL_IF(hgr_##name##_f32, \
  __kernel void hgr_##name##_f32(__global const float* in, __global float* out, int n) { \
    HGR_GUARD(n)                                                                   \
    float x = in[i];                                                               \
    out[i] = (expr);                                                               \
  })

HGR_UNARY(relu, fmax(x, 0.0f))
HGR_UNARY(sigmoid, 1.0f / (1.0f + exp(-x)))
HGR_UNARY(tanh, tanh(x))
HGR_UNARY(exp, exp(x))
HGR_UNARY(log, log(x))
HGR_UNARY(sqrt, sqrt(x))
HGR_UNARY(rsqrt, rsqrt(x))
HGR_UNARY(abs, fabs(x))
HGR_UNARY(negative, -x)
HGR_UNARY(erf, erf(x))
/* GELU by kernels/gelu.h (the GEMM epilogue's too). */
static inline float hgr_gelu(float x) {
  HGR_GELU(float, x)
  return x;
}
HGR_UNARY(gelu, hgr_gelu(x))
/* GELU's tanh approximation 0.5 x (1 + tanh(z)), z = sqrt(2 / pi) (x + 0.044715 x^3),
 * written as x / (1 + e^(-2z)) (0.5 (1 + tanh z) = sigmoid(2z)): nothing cancels
 * where tanh(z) is near -1, and e^(-2z) overflowing gives -0, the limit. */
HGR_UNARY(gelu_tanh, x / (1.0f + exp(-1.5957691216057308f * (x + 0.044715f * x * x * x))))
/* log(1 + e^x) = max(x, 0) + log1p(e^-|x|): no overflow for large x, and both terms
 * are >= 0, so nothing cancels. */
HGR_UNARY(softplus, fmax(x, 0.0f) + log1p(exp(-fabs(x))))
HGR_UNARY(softsign, x / (1.0f + fabs(x)))
HGR_UNARY(reciprocal, 1.0f / x)
HGR_UNARY(floor, floor(x))
HGR_UNARY(ceil, ceil(x))
HGR_UNARY(round, rint(x))
/* OpenCL's sign gives 0 for NaN; NumPy and ONNX give NaN. Zeros keep their sign. */
HGR_UNARY(sign, x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : x)
HGR_UNARY(hard_swish, x * fmax(0.0f, fmin(1.0f, x / 6.0f + 0.5f)))
HGR_UNARY(sin, sin(x))
HGR_UNARY(cos, cos(x))
HGR_UNARY(tan, tan(x))
HGR_UNARY(asin, asin(x))
HGR_UNARY(acos, acos(x))
HGR_UNARY(atan, atan(x))
HGR_UNARY(sinh, sinh(x))
HGR_UNARY(cosh, cosh(x))
HGR_UNARY(asinh, asinh(x))
HGR_UNARY(acosh, acosh(x))
HGR_UNARY(atanh, atanh(x))

#if HGR_WANTED(hgr_elu_f32)
__kernel void hgr_elu_f32(__global const float* in, __global float* out, int n, float alpha) {
  HGR_GUARD(n)
  float x = in[i];
  out[i] = x < 0.0f ? alpha * expm1(x) : x;
}
#endif

#if HGR_WANTED(hgr_selu_f32)
__kernel void hgr_selu_f32(__global const float* in, __global float* out, int n, float alpha, float gamma) {
  HGR_GUARD(n)
  float x = in[i];
  out[i] = x > 0.0f ? gamma * x : gamma * (alpha * expm1(x));
}
#endif

#if HGR_WANTED(hgr_hard_sigmoid_f32)
__kernel void hgr_hard_sigmoid_f32(__global const float* in, __global float* out, int n, float alpha, float beta) {
  HGR_GUARD(n)
  float v = alpha * in[i] + beta;
  out[i] = isnan(v) ? v : fmax(0.0f, fmin(1.0f, v)); /* NaN stays NaN, as in ONNX */
}
#endif

#if HGR_WANTED(hgr_isnan_f32)
__kernel void hgr_isnan_f32(__global const float* in, __global uchar* out, int n) {
  HGR_GUARD(n)
  out[i] = (uchar)isnan(in[i]);
}
#endif

#if HGR_WANTED(hgr_isinf_f32)
__kernel void hgr_isinf_f32(__global const float* in, __global uchar* out, int n, int detect_positive,
                            int detect_negative) {
  HGR_GUARD(n)
  float x = in[i];
  out[i] = (uchar)((detect_positive && x == INFINITY) || (detect_negative && x == -INFINITY));
}
#endif

#if HGR_WANTED(hgr_logical_not_bool)
__kernel void hgr_logical_not_bool(__global const uchar* in, __global uchar* out, int n) {
  HGR_GUARD(n)
  out[i] = (uchar)(in[i] == 0);
}
#endif

#if HGR_WANTED(hgr_leaky_relu_f32)
__kernel void hgr_leaky_relu_f32(__global const float* in, __global float* out, int n, float alpha) {
  HGR_GUARD(n)
  float x = in[i];
  out[i] = x > 0.0f ? x : x * alpha;
}
#endif

#if HGR_WANTED(hgr_clip_f32)
__kernel void hgr_clip_f32(__global const float* in, __global float* out, int n, float a_min, float a_max) {
  HGR_GUARD(n)
  out[i] = fmax(fmin(in[i], a_max), a_min);
}
#endif

/* Casts: each source is loaded as a float x (float32, float16, bfloat16) or a long x
 * (the integers; bool as 0 or 1), then stored as the target. OpenCL says
 * convert_int_sat_rtz(NaN) is 0; Oclgrind 21.10 gives INT_MIN, so NaN is tested
 * first. float16 goes through vload_half / vstore_half_rte, which need no
 * cl_khr_fp16; bfloat16 is the high 16 bits of a float32. */
#define HGR_CAST(from, F, to, T, load, store)                                            \
  HGR_KERNEL_IF(hgr_cast_##from##_##to,                                                  \
  __kernel void hgr_cast_##from##_##to(__global const F* in, __global T* out, int n) { \
    HGR_GUARD(n)                                                                          \
    load;                                                                                 \
    store;                                                                                \
  })

/* float32 -> bfloat16, rounding to nearest even; NaN stays a (quiet) NaN. */
static inline ushort hgr_bfloat16_of(float f) {
  uint u = as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40u);
  return (ushort)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

/* From a float x, to every dtype. Through int to the narrow integers: rusticl's
 * LLVM 15 (llvmpipe) crashes compiling convert_char_sat_rtz. To bool by the bits,
 * not x != 0: the library's programs flush subnormals (-cl-denorms-are-zero), and
 * a subnormal is true. */
#define HGR_CASTS_FROM_FLOAT(from, F, load)                                                          \
  HGR_CAST(from, F, f32, float, load, out[i] = x)                                                    \
  HGR_CAST(from, F, f16, half, load, vstore_half_rte(x, i, out))                                    \
  HGR_CAST(from, F, bf16, ushort, load, out[i] = hgr_bfloat16_of(x))                                \
  HGR_CAST(from, F, i32, int, load, out[i] = isnan(x) ? 0 : convert_int_sat_rtz(x))                 \
  HGR_CAST(from, F, i64, long, load, out[i] = isnan(x) ? 0 : convert_long_sat_rtz(x))               \
  HGR_CAST(from, F, u8, uchar, load, out[i] = isnan(x) ? 0 : convert_uchar_sat(convert_int_sat_rtz(x))) \
  HGR_CAST(from, F, i8, char, load, out[i] = isnan(x) ? 0 : convert_char_sat(convert_int_sat_rtz(x)))  \
  HGR_CAST(from, F, u16, ushort, load, out[i] = isnan(x) ? 0 : convert_ushort_sat(convert_int_sat_rtz(x))) \
  HGR_CAST(from, F, i16, short, load, out[i] = isnan(x) ? 0 : convert_short_sat(convert_int_sat_rtz(x)))  \
  HGR_CAST(from, F, bool, uchar, load, out[i] = (uchar)((as_uint(x) << 1) != 0))

/* From an integer x (a long), to every dtype: to int32 saturating (int64 is held as
 * int32), to the narrow integers keeping the low bits (ONNX's Cast). */
#define HGR_CASTS_FROM_INT(from, F, load)                                                \
  HGR_CAST(from, F, f32, float, load, out[i] = convert_float_rte(x))                     \
  HGR_CAST(from, F, f16, half, load, vstore_half_rte(convert_float_rte(x), i, out))     \
  HGR_CAST(from, F, bf16, ushort, load, out[i] = hgr_bfloat16_of(convert_float_rte(x))) \
  HGR_CAST(from, F, i32, int, load, out[i] = convert_int_sat(x))                         \
  HGR_CAST(from, F, i64, long, load, out[i] = x)                                         \
  HGR_CAST(from, F, u8, uchar, load, out[i] = (uchar)x)                                  \
  HGR_CAST(from, F, i8, char, load, out[i] = (char)x)                                    \
  HGR_CAST(from, F, u16, ushort, load, out[i] = (ushort)x)                               \
  HGR_CAST(from, F, i16, short, load, out[i] = (short)x)                                 \
  HGR_CAST(from, F, bool, uchar, load, out[i] = (uchar)(x != 0))

HGR_CASTS_FROM_FLOAT(f32, float, float x = in[i])
HGR_CASTS_FROM_FLOAT(f16, half, float x = vload_half(i, in))
HGR_CASTS_FROM_FLOAT(bf16, ushort, float x = as_float((uint)in[i] << 16))
HGR_CASTS_FROM_INT(i32, int, long x = in[i])
HGR_CASTS_FROM_INT(i64, long, long x = in[i])
HGR_CASTS_FROM_INT(u8, uchar, long x = in[i])
HGR_CASTS_FROM_INT(i8, char, long x = in[i])
HGR_CASTS_FROM_INT(u16, ushort, long x = in[i])
HGR_CASTS_FROM_INT(i16, short, long x = in[i])
HGR_CASTS_FROM_INT(bool, uchar, long x = in[i] != 0)
