/* quantize and dequantize (runtime/ops/ops_quantize.c): ONNX QuantizeLinear and
 * DequantizeLinear, per tensor, per axis and in blocks along the axis. 1-D, one
 * work-item per element of x, global size n rounded up (each checks i < n).
 *
 * Element i of x lies at (outer, d, in) of x viewed as [outer, extent, inner]
 * around the axis; its scale and zero point are element
 *   outer * so_outer + (d / block) * so_d + in * so_in
 * of theirs: all strides 0 per tensor; so_d 1 and block 1 per axis; the scale's
 * own row-major strides in blocks.
 *
 *   hgr_dequantize_<t>(__global const T* x, __global const float* scale,
 *                      __global const T* zero, __global float* y, int n, int inner,
 *                      int extent, int block, int so_outer, int so_d, int so_in)
 *       y = (x - zero) * scale, the difference exact, the product rounded once;
 *       t in i8, u8, i16, u16, i32.
 *   hgr_quantize_<t>(__global const float* x, __global const float* scale,
 *                    __global const T* zero, __global T* y, int n, ...)
 *       y = saturate(rint(x / scale) + zero): x / scale (correctly rounded) rounded
 *       half to even,
 *       then clamped to T's range (NaN gives T's largest); t in i8, u8, i16, u16.
 *
 * A remainder is written as x - (x / e) * e (layout.cl says why).
 */

#include "select.h"

/* The scale's and zero point's element for element i of x. */
static inline int hgr_quant_param(int i, int inner, int extent, int block, int so_outer, int so_d, int so_in) {
  int t = i / inner;
  int in = i - t * inner;
  int outer = t / extent;
  int d = t - outer * extent;
  return outer * so_outer + (d / block) * so_d + in * so_in;
}

/* x / d correctly rounded: OpenCL lets '/' be 2.5 ulp off (NVIDIA's is), which
 * moves a quotient halfway between two integers off its tie; the residual, exact
 * by fma, corrects it. */
static inline float hgr_quant_divide(float x, float d) {
  float q = x / d;
  return isfinite(q) ? q + fma(-q, d, x) / d : q;
}

#define HGR_QUANT_ARGS int n, int inner, int extent, int block, int so_outer, int so_d, int so_in

#define HGR_DEQUANTIZE(t, T)                                                                              \
  HGR_KERNEL_IF(hgr_dequantize_##t,                                                                      \
  __kernel void hgr_dequantize_##t(__global const T* x, __global const float* scale,                    \
                                   __global const T* zero, __global float* y, HGR_QUANT_ARGS) {          \
    int i = (int)get_global_id(0);                                                                        \
    if (i >= n) return;                                                                                   \
    int s = hgr_quant_param(i, inner, extent, block, so_outer, so_d, so_in);                             \
    y[i] = convert_float((long)x[i] - (long)zero[s]) * scale[s];                                         \
  })

#define HGR_QUANTIZE(t, T, lowest, highest)                                                               \
  HGR_KERNEL_IF(hgr_quantize_##t,                                                                        \
  __kernel void hgr_quantize_##t(__global const float* x, __global const float* scale,                  \
                                 __global const T* zero, __global T* y, HGR_QUANT_ARGS) {                \
    int i = (int)get_global_id(0);                                                                        \
    if (i >= n) return;                                                                                   \
    int s = hgr_quant_param(i, inner, extent, block, so_outer, so_d, so_in);                             \
    float q = rint(hgr_quant_divide(x[i], scale[s])) + (float)zero[s];                                    \
    y[i] = (T)convert_int(fmax(fmin(q, (float)(highest)), (float)(lowest)));                             \
  })

HGR_DEQUANTIZE(i8, char)
HGR_DEQUANTIZE(u8, uchar)
HGR_DEQUANTIZE(i16, short)
HGR_DEQUANTIZE(u16, ushort)
HGR_DEQUANTIZE(i32, int)
HGR_QUANTIZE(i8, char, -128, 127)
HGR_QUANTIZE(u8, uchar, 0, 255)
HGR_QUANTIZE(i16, short, -32768, 32767)
HGR_QUANTIZE(u16, ushort, 0, 65535)
