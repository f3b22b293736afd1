/* Elementwise ops: binary ops with NumPy broadcasting, unary float32 ops, cast.
 *
 * Every kernel runs one work-item per output element on a 1-D NDRange whose global
 * size is the element count n rounded up to the work-group size, so each work-item
 * first checks its index against n (an int: the plan keeps counts <= INT32_MAX).
 *
 * Binary, for <op>_<t> in add, subtract, multiply, divide, maximum, minimum, power
 * (t = f32) and add, subtract, multiply, maximum, minimum (t = i32), T = float/int:
 *   hgr_<op>_<t>(__global const T* a, __global const T* b, __global T* out, int n)
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
 *
 * Unary float32, x -> y, both n elements:
 *   hgr_<op>_f32(__global const float* x, __global float* y, int n)
 *       for op in relu, sigmoid, tanh, exp, log, sqrt, rsqrt, abs, negative, erf, gelu
 *       (relu is fmax(x, 0): NaN gives 0)
 *   hgr_leaky_relu_f32(x, y, int n, float alpha)     x > 0 ? x : x * alpha
 *   hgr_clip_f32(x, y, int n, float a_min, float a_max)  fmax(fmin(x, a_max), a_min)
 *       (NaN gives a_max)
 *
 * Cast, x -> y, both n 32-bit elements:
 *   hgr_cast_f32_i32(__global const float* x, __global int* y, int n)
 *       truncation toward zero; out-of-range values saturate and NaN gives 0
 *   hgr_cast_i32_f32(__global const int* x, __global float* y, int n)
 *       round to nearest even
 *   hgr_cast_copy_32(__global const uint* x, __global uint* y, int n)
 *       identity casts, bit for bit
 */

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

#define HGR_BINARY(name, T, expr)                                                                  \
  __kernel void hgr_##name(__global const T* a, __global const T* b, __global T* out, int n) {    \
    HGR_GUARD(n)                                                                                   \
    T x = a[i], y = b[i];                                                                          \
    out[i] = (expr);                                                                               \
  }                                                                                                \
  __kernel void hgr_##name##_scalar_a(__global const T* a, __global const T* b, __global T* out,  \
                                      int n) {                                                     \
    HGR_GUARD(n)                                                                                   \
    T x = a[0], y = b[i];                                                                          \
    out[i] = (expr);                                                                               \
  }                                                                                                \
  __kernel void hgr_##name##_scalar_b(__global const T* a, __global const T* b, __global T* out,  \
                                      int n) {                                                     \
    HGR_GUARD(n)                                                                                   \
    T x = a[i], y = b[0];                                                                          \
    out[i] = (expr);                                                                               \
  }                                                                                                \
  __kernel void hgr_##name##_broadcast(__global const T* a, __global const T* b, __global T* out, \
                                       int n, __global const int* meta) {                          \
    HGR_GUARD(n)                                                                                   \
    int ia, ib;                                                                                    \
    hgr_broadcast_offsets(meta, i, &ia, &ib);                                                      \
    T x = a[ia], y = b[ib];                                                                        \
    out[i] = (expr);                                                                               \
  }

HGR_BINARY(add_f32, float, x + y)
HGR_BINARY(subtract_f32, float, x - y)
HGR_BINARY(multiply_f32, float, x * y)
HGR_BINARY(divide_f32, float, x / y)
HGR_BINARY(maximum_f32, float, fmax(x, y))
HGR_BINARY(minimum_f32, float, fmin(x, y))
HGR_BINARY(power_f32, float, pow(x, y))

HGR_BINARY(add_i32, int, as_int(as_uint(x) + as_uint(y)))
HGR_BINARY(subtract_i32, int, as_int(as_uint(x) - as_uint(y)))
HGR_BINARY(multiply_i32, int, as_int(as_uint(x) * as_uint(y)))
HGR_BINARY(maximum_i32, int, max(x, y))
HGR_BINARY(minimum_i32, int, min(x, y))

#define HGR_UNARY(name, expr)                                                      \
  __kernel void hgr_##name##_f32(__global const float* in, __global float* out, int n) { \
    HGR_GUARD(n)                                                                   \
    float x = in[i];                                                               \
    out[i] = (expr);                                                               \
  }

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
/* 0.5 x (1 + erf(x / sqrt 2)) written with erfc(-z) = 1 + erf(z), which keeps its
 * relative accuracy where erf(z) is near -1 (x well below 0) instead of cancelling. */
HGR_UNARY(gelu, 0.5f * x * erfc(-x * M_SQRT1_2_F))

__kernel void hgr_leaky_relu_f32(__global const float* in, __global float* out, int n, float alpha) {
  HGR_GUARD(n)
  float x = in[i];
  out[i] = x > 0.0f ? x : x * alpha;
}

__kernel void hgr_clip_f32(__global const float* in, __global float* out, int n, float a_min, float a_max) {
  HGR_GUARD(n)
  out[i] = fmax(fmin(in[i], a_max), a_min);
}

/* OpenCL says convert_int_sat_rtz(NaN) is 0; Oclgrind 21.10 gives INT_MIN, so NaN is
 * tested first. */
__kernel void hgr_cast_f32_i32(__global const float* in, __global int* out, int n) {
  HGR_GUARD(n)
  float x = in[i];
  out[i] = isnan(x) ? 0 : convert_int_sat_rtz(x);
}

__kernel void hgr_cast_i32_f32(__global const int* in, __global float* out, int n) {
  HGR_GUARD(n)
  out[i] = convert_float_rte(in[i]);
}

__kernel void hgr_cast_copy_32(__global const uint* in, __global uint* out, int n) {
  HGR_GUARD(n)
  out[i] = in[i];
}
