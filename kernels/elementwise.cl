/* Elementwise float32 ops on tensors of identical shape.
 *
 * Kernels (one work-item per element; NDRange: 1-D, global size = element count
 * rounded up to the work-group size, so every kernel checks i < n):
 *   hgr_<op>_f32(__global const float* a, __global const float* b, __global float* out, uint n)
 *       for op in add, subtract, multiply, divide, maximum, minimum
 *   hgr_<op>_f32(__global const float* a, __global float* out, uint n)
 *       for op in negative, relu, exp, sigmoid, tanh
 *   hgr_copy_bytes(__global const uchar* in, __global uchar* out, uint n)
 *       byte copy, used for reshape-like ops whose output has its own storage
 */

#define HGR_BINARY(name, expr)                                                        \
  __kernel void hgr_##name##_f32(__global const float* a, __global const float* b,    \
                                 __global float* out, uint n) {                       \
    size_t i = get_global_id(0);                                                      \
    if (i < n) {                                                                      \
      float x = a[i], y = b[i];                                                       \
      out[i] = (expr);                                                                \
    }                                                                                 \
  }

#define HGR_UNARY(name, expr)                                                         \
  __kernel void hgr_##name##_f32(__global const float* a, __global float* out, uint n) { \
    size_t i = get_global_id(0);                                                      \
    if (i < n) {                                                                      \
      float x = a[i];                                                                 \
      out[i] = (expr);                                                                \
    }                                                                                 \
  }

HGR_BINARY(add, x + y)
HGR_BINARY(subtract, x - y)
HGR_BINARY(multiply, x * y)
HGR_BINARY(divide, x / y)
HGR_BINARY(maximum, fmax(x, y))
HGR_BINARY(minimum, fmin(x, y))

HGR_UNARY(negative, -x)
HGR_UNARY(relu, fmax(x, 0.0f))
HGR_UNARY(exp, exp(x))
HGR_UNARY(sigmoid, 1.0f / (1.0f + exp(-x)))
HGR_UNARY(tanh, tanh(x))

__kernel void hgr_copy_bytes(__global const uchar* in, __global uchar* out, uint n) {
  size_t i = get_global_id(0);
  if (i < n) out[i] = in[i];
}
