/* quantize and dequantize (runtime/ops/ops_quantize.c): ONNX QuantizeLinear and
 * DequantizeLinear, per tensor, per axis and in blocks along the axis.
 *
 * Every work-item does HGR_QUANT_WIDTH (16) elements, with vload16 and vstore16
 * where they fit: stored one by one, bytes cost PoCL eight times as much.
 *
 * Per axis and in blocks, x is viewed as [outer, extent, inner] around the axis and
 * launched in three dimensions (inner / 16, rounded up: each item stops at inner;
 * extent; outer), so that no work-item divides to find its place (three integer
 * divisions per element made the weights' DequantizeLinear of a QDQ resnet50 cost
 * more than its convolutions on PoCL). Per the last axis (inner 1: a MatMul's
 * weights per column) the plan passes [outer, 1, extent] with so_in 1 instead, so
 * that items run along the row. Element (outer, d, in)'s scale and zero
 * point are element
 *   outer * so_outer + (d / block) * so_d + in * so_in
 * of theirs: so_d 1 and block 1 per axis; the scale's own row-major strides in
 * blocks.
 *
 *   hgr_dequantize_<t>(__global const T* x, __global const float* scale,
 *                      __global const T* zero, __global float* y, int inner,
 *                      int block, int so_outer, int so_d, int so_in)
 *       y = (x - zero) * scale, the difference exact, the product rounded once;
 *       t in i8, u8, i16, u16, i32.
 *   hgr_quantize_<t>(__global const float* x, __global const float* scale,
 *                    __global const T* zero, __global T* y, int inner, ...)
 *       y = saturate(rint(x / scale) + zero): x / scale (correctly rounded) rounded
 *       half to even,
 *       then clamped to T's range (NaN gives T's largest); t in i8, u8, i16, u16.
 *   hgr_dequantize_<t>_tensor, hgr_quantize_<t>_tensor(x, scale, zero, y, int n)
 *       the same with one scale and zero point (per tensor), 1-D (n / 16 items,
 *       rounded up: each stops at n), the scale's reciprocal once per item.
 */

#include "select.h"

#define HGR_QUANT_WIDTH 16 /* elements per work-item (vload16 and vstore16 where they fit) */

/* Per axis, an item's 16 elements: along inner from in0 = 16 * id(0), of row d =
 * id(1) and outer = id(2): x's elements row + in, scale and zero point elements
 * s0 + in * so_in. */
#define HGR_QUANT_ITEM                                                                                    \
  int in0 = (int)get_global_id(0) * HGR_QUANT_WIDTH;                                                      \
  int d = (int)get_global_id(1), outer = (int)get_global_id(2);                                           \
  int row = (outer * (int)get_global_size(1) + d) * inner;                                                \
  int s0 = outer * so_outer + (block == 1 ? d : d / block) * so_d;                                        \
  int end = min(in0 + HGR_QUANT_WIDTH, inner)

/* x / d correctly rounded: OpenCL lets '/' be 2.5 ulp off (NVIDIA's is), which
 * moves a quotient halfway between two integers off its tie; the residual, exact
 * by fma, corrects it. */
static inline float hgr_quant_divide(float x, float d) {
  float q = x / d;
  return isfinite(q) ? q + fma(-q, d, x) / d : q;
}

/* The same from d's reciprocal r: q = x r is a few ulps off x / d, the residual
 * x - q d is exact by fma, and r carries it to within a tiny fraction of an ulp, so
 * the sum rounds as x / d does, ties (halves) included. */
static inline float hgr_quant_divide_by(float x, float d, float r) {
  float q = x * r, corrected = q + fma(-q, d, x) * r;
  return isfinite(corrected) ? corrected : q; /* a select, no branch: work-items vectorize */
}


#define HGR_QUANT_ARGS int inner, int block, int so_outer, int so_d, int so_in

/* D: a type that holds x - zero exactly (int for 8 and 16 bits, long for 32). */
#define HGR_DEQUANTIZE(t, T, D)                                                                           \
  HGR_KERNEL_IF(hgr_dequantize_##t,                                                                      \
  __kernel void hgr_dequantize_##t(__global const T* x, __global const float* scale,                    \
                                   __global const T* zero, __global float* y, HGR_QUANT_ARGS) {          \
    HGR_QUANT_ITEM;                                                                                       \
    if (!so_in && end == in0 + HGR_QUANT_WIDTH) { /* one scale for the 16 */                              \
      D##16 v = convert_##D##16(vload16(0, x + row + in0)) - (D)zero[s0];                                 \
      vstore16(convert_float16(v) * scale[s0], 0, y + row + in0);                                         \
      return;                                                                                             \
    }                                                                                                     \
    if (so_in == 1 && end == in0 + HGR_QUANT_WIDTH) { /* a scale each: per last axis */                   \
      D##16 v = convert_##D##16(vload16(0, x + row + in0)) - convert_##D##16(vload16(0, zero + s0 + in0));  \
      vstore16(convert_float16(v) * vload16(0, scale + s0 + in0), 0, y + row + in0);                      \
      return;                                                                                             \
    }                                                                                                     \
    for (int in = in0; in < end; ++in)                                                                    \
      y[row + in] = convert_float((D)x[row + in] - (D)zero[s0 + in * so_in]) * scale[s0 + in * so_in];    \
  })                                                                                                      \
  HGR_KERNEL_IF(hgr_dequantize_##t##_tensor,                                                             \
  __kernel void hgr_dequantize_##t##_tensor(__global const T* x, __global const float* scale,           \
                                            __global const T* zero, __global float* y, int n) {          \
    int first = (int)get_global_id(0) * HGR_QUANT_WIDTH;                                                  \
    if (first + HGR_QUANT_WIDTH <= n) {                                                                   \
      D##16 v = convert_##D##16(vload16(0, x + first)) - (D)zero[0];                                      \
      vstore16(convert_float16(v) * scale[0], 0, y + first);                                              \
      return;                                                                                             \
    }                                                                                                     \
    for (int i = first; i < n; ++i) y[i] = convert_float((D)x[i] - (D)zero[0]) * scale[0];                \
  })

#define HGR_QUANTIZE(t, T, lowest, highest)                                                               \
  HGR_KERNEL_IF(hgr_quantize_##t,                                                                        \
  __kernel void hgr_quantize_##t(__global const float* x, __global const float* scale,                  \
                                 __global const T* zero, __global T* y, HGR_QUANT_ARGS) {                \
    HGR_QUANT_ITEM;                                                                                       \
    for (int in = in0; in < end; ++in) {                                                                  \
      int s = s0 + in * so_in;                                                                            \
      float q = rint(hgr_quant_divide(x[row + in], scale[s])) + (float)zero[s];                           \
      y[row + in] = (T)convert_int(fmax(fmin(q, (float)(highest)), (float)(lowest)));                    \
    }                                                                                                     \
  })                                                                                                      \
  HGR_KERNEL_IF(hgr_quantize_##t##_tensor,                                                               \
  __kernel void hgr_quantize_##t##_tensor(__global const float* x, __global const float* scale,         \
                                          __global const T* zero, __global T* y, int n) {                \
    int first = (int)get_global_id(0) * HGR_QUANT_WIDTH;                                                  \
    float d = scale[0], r = 1.0f / d, z = (float)zero[0];                                                 \
    if (first + HGR_QUANT_WIDTH <= n) { /* byte stores one by one cost PoCL 8x */                         \
      float16 v = vload16(0, x + first), q = v * r;                                                       \
      float16 corrected = q + fma(-q, (float16)d, v) * r; /* hgr_quant_divide_by's, 16 at once */        \
      q = rint(select(q, corrected, isfinite(corrected))) + z;                                            \
      q = fmax(fmin(q, (float)(highest)), (float)(lowest));                                               \
      vstore16(convert_##T##16(convert_int16(q)), 0, y + first);                                          \
      return;                                                                                             \
    }                                                                                                     \
    for (int i = first; i < n; ++i) {                                                                     \
      float q = rint(hgr_quant_divide_by(x[i], d, r)) + z;                                                \
      y[i] = (T)convert_int(fmax(fmin(q, (float)(highest)), (float)(lowest)));                           \
    }                                                                                                     \
  })

HGR_DEQUANTIZE(i8, char, int)
HGR_DEQUANTIZE(u8, uchar, int)
HGR_DEQUANTIZE(i16, short, int)
HGR_DEQUANTIZE(u16, ushort, int)
HGR_DEQUANTIZE(i32, int, long)
HGR_QUANTIZE(i8, char, -128, 127)
HGR_QUANTIZE(u8, uchar, 0, 255)
HGR_QUANTIZE(i16, short, -32768, 32767)
HGR_QUANTIZE(u16, ushort, 0, 65535)

/* hgr_quantize_params(__global const float* x, __global float* scale,
 *                     __global uchar* zero, int n, __local float* lows,
 *                     __local float* highs)
 * ONNX DynamicQuantizeLinear's scale and zero point of x's n elements, in one
 * work-group (its size a power of two; lows and highs one float per item): the
 * range [min(x, 0), max(x, 0)], scale = range / 255 (1 for an all-zero x, as ONNX
 * Runtime gives it), zero = round(-min / scale) held in [0, 255], the divisions
 * correctly rounded and the round half to even. Each
 * item takes 16 consecutive elements at a time (vload16), the group's items
 * consecutive runs of them, then the items' ranges are halved together in local
 * memory. One launch where the reductions had taken four. */
#if HGR_WANTED(hgr_quantize_params)
__kernel void hgr_quantize_params(__global const float* x, __global float* scale, __global uchar* zero, int n,
                                  __local float* lows, __local float* highs) {
  const int item = (int)get_local_id(0), items = (int)get_local_size(0);
  float16 lo = (float16)(0.0f), hi = (float16)(0.0f);
  int i = item * HGR_QUANT_WIDTH;
  for (; i + HGR_QUANT_WIDTH <= n; i += items * HGR_QUANT_WIDTH) {
    const float16 v = vload16(0, x + i);
    lo = fmin(lo, v);
    hi = fmax(hi, v);
  }
  float low = 0.0f, high = 0.0f;
  for (int e = i; e < min(i + HGR_QUANT_WIDTH, n); ++e) {
    low = fmin(low, x[e]);
    high = fmax(high, x[e]);
  }
  /* the vectors' lanes through private memory (Oclgrind mistakes narrowing shuffles) */
  float part[2 * HGR_QUANT_WIDTH];
  vstore16(lo, 0, part);
  vstore16(hi, 1, part);
  for (int e = 0; e < HGR_QUANT_WIDTH; ++e) {
    low = fmin(low, part[e]);
    high = fmax(high, part[HGR_QUANT_WIDTH + e]);
  }
  lows[item] = low;
  highs[item] = high;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int width = items / 2; width > 0; width /= 2) {
    if (item < width) {
      lows[item] = fmin(lows[item], lows[item + width]);
      highs[item] = fmax(highs[item], highs[item + width]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (item == 0) {
    const float range = highs[0] - lows[0], s = range == 0.0f ? 1.0f : hgr_quant_divide(range, 255.0f);
    scale[0] = s;
    zero[0] = (uchar)convert_int(fmax(fmin(rint(-hgr_quant_divide(lows[0], s)), 255.0f), 0.0f));
  }
}
#endif
