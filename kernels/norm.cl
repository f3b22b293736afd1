/* Normalizations of float32 tensors (runtime/ops_norm.c).
 *
 * softmax, log_softmax and layer_norm work over one axis of a tensor viewed as
 * [outer, len, inner]; element (o, j, i) is at (o * len + j) * inner + i. Indices are
 * uint (the plan checks every count against INT32_MAX).
 *
 * Row kernels, for inner == 1: one work-group per row of len contiguous elements.
 * NDRange 1-D, local size L (a power of two; 1 works), global = rows * L (one group
 * when rows is 0); scratch is __local float[L]. Each work-item reduces a strided
 * slice of the row, then the group combines the partials in a tree in scratch.
 * Every work-item reaches every barrier (groups past the last row only skip the
 * global reads and writes).
 *   hgr_softmax_rows_f32(__global const float* x, __global float* y, uint rows, uint len,
 *                        int log_output, __local float* scratch)
 *   hgr_layer_norm_rows_f32(__global const float* x, __global const float* gamma,
 *                           __global const float* beta, __global const float* skip, int has_skip,
 *                           __global float* skip_sum, __global float* y, uint rows, uint len, float epsilon, int center,
 *                           int scale, __local float* scratch)
 *
 * Column kernels, for any inner: one work-item per (o, i) pair looping over the axis.
 * NDRange 1-D, global >= outer * inner (work-items past it do nothing).
 *   hgr_softmax_f32(__global const float* x, __global float* y, uint outer, uint len, uint inner,
 *                   int log_output)
 *   hgr_layer_norm_f32(__global const float* x, __global const float* gamma,
 *                      __global const float* beta, __global const float* skip, int has_skip,
 *                      __global float* skip_sum, __global float* y, uint outer, uint len, uint inner, float epsilon,
 *                      int center, int scale)
 * layer_norm normalizes x + skip where has_skip (a residual added first: skip is shaped
 * as x; read only then), else x; with has_skip 2 it also stores x + skip into skip_sum
 * (shaped as x; written only then): the residual stream that a pre-norm transformer
 * goes on adding to.
 *
 * batch_norm (inference), one work-item per element; the channel of element e is
 * (e / inner) % channels. NDRange 1-D, global >= count.
 *   hgr_batch_norm_f32(__global const float* x, __global const float* gamma,
 *                      __global const float* beta, __global const float* moving_mean,
 *                      __global const float* moving_var, __global float* y, uint count,
 *                      uint channels, uint inner, float epsilon, int center, int scale)
 *   hgr_norm_copy_f32(__global const float* x, __global float* y, uint count)
 *       batch_norm's second and third outputs (copies of moving_mean and moving_var)
 *
 * lrn, one work-item per element of x viewed as [outer, channels, inner]; the window
 * of channel c is [c - before, c + after] clipped to the channels. NDRange 1-D,
 * global >= count.
 *   hgr_lrn_f32(__global const float* x, __global float* y, uint count, uint channels, uint inner,
 *               int before, int after, float alpha_over_size, float beta, float bias)
 * lrn by columns: one work-item per column (o, i) of x viewed as [outer, channels,
 * inner], walking its channels (no index divisions per element, and neighbouring
 * work-items read neighbouring floats); the same sums in the same order as
 * hgr_lrn_f32. NDRange 1-D, global >= columns = outer * inner.
 *   hgr_lrn_columns_f32(__global const float* x, __global float* y, uint columns, uint channels,
 *                       uint inner, int before, int after, float alpha_over_size, float beta,
 *                       float bias)
 *
 * instance_norm, one work-group per row (n, c) of x viewed as [batch, before,
 * channels, after]; the row's elements are (n, p, c, q) for every p < before, q <
 * after. NDRange 1-D, local size L (a power of two; 1 works), global = rows * L
 * (one group when rows is 0); scratch is __local float[L].
 *   hgr_instance_norm_f32(__global const float* x, __global const float* gamma,
 *                         __global const float* beta, __global float* y, uint rows, uint before,
 *                         uint channels, uint after, float epsilon, int center, int scale,
 *                         __local float* scratch)
 *
 * Sums are compensated (Kahan), so their error stays within a few ulp of the sum of
 * magnitudes whatever the length; an infinite partial sum resets the compensation
 * instead of turning into NaN.
 * No x % y next to x / y: LLVM then rewrites the remainder with a `freeze`
 * instruction, which Oclgrind 21.10's uninitialized-value checker cannot run
 * (fatal "Unsupported instruction: freeze"); remainders are x - (x / y) * y. */

#include "select.h"

#define HGR_KAHAN_ADD(sum, comp, value)               \
  do {                                                \
    float y_ = (value) - (comp);                      \
    float t_ = (sum) + y_;                            \
    (comp) = isfinite(t_) ? (t_ - (sum)) - y_ : 0.0f; \
    (sum) = t_;                                       \
  } while (0)

/* The sum of value over the work-group; every work-item gets it. Every work-item of
 * the group must call it (it has barriers). scratch: __local float[local size]. */
float hgr_norm_group_sum(__local float* scratch, float value) {
  uint lid = get_local_id(0);
  scratch[lid] = value;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = get_local_size(0) / 2; s > 0; s >>= 1) {
    if (lid < s) scratch[lid] += scratch[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  float result = scratch[0];
  /* Everyone has read scratch[0] before the next call overwrites it. */
  barrier(CLK_LOCAL_MEM_FENCE);
  return result;
}

/* The maximum, the same way (fmax: a NaN partial is ignored; the sum of exp then
 * carries the NaN into every output). */
float hgr_norm_group_max(__local float* scratch, float value) {
  uint lid = get_local_id(0);
  scratch[lid] = value;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = get_local_size(0) / 2; s > 0; s >>= 1) {
    if (lid < s) scratch[lid] = fmax(scratch[lid], scratch[lid + s]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  float result = scratch[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return result;
}

#if HGR_WANTED(hgr_softmax_rows_f32)
__kernel void hgr_softmax_rows_f32(__global const float* x, __global float* y, uint rows, uint len,
                                   int log_output, __local float* scratch) {
  uint row = get_group_id(0), lid = get_local_id(0), size = get_local_size(0);
  bool active = row < rows;
  uint base = active ? row * len : 0;
  float peak = -INFINITY;
  if (active)
    for (uint j = lid; j < len; j += size) peak = fmax(peak, x[base + j]);
  peak = hgr_norm_group_max(scratch, peak);
  float sum = 0.0f, comp = 0.0f;
  if (active)
    for (uint j = lid; j < len; j += size) HGR_KAHAN_ADD(sum, comp, exp(x[base + j] - peak));
  sum = hgr_norm_group_sum(scratch, sum - comp);
  if (active) {
    float log_sum = log(sum);
    for (uint j = lid; j < len; j += size) {
      float shifted = x[base + j] - peak;
      y[base + j] = log_output ? shifted - log_sum : exp(shifted) / sum;
    }
  }
}
#endif

#if HGR_WANTED(hgr_softmax_f32)
__kernel void hgr_softmax_f32(__global const float* x, __global float* y, uint outer, uint len, uint inner,
                              int log_output) {
  size_t item = get_global_id(0);
  if (item >= (size_t)outer * inner) return;
  uint o = (uint)item / inner, i = (uint)item - o * inner;
  uint base = o * len * inner + i;
  float peak = -INFINITY;
  for (uint j = 0; j < len; ++j) peak = fmax(peak, x[base + j * inner]);
  float sum = 0.0f, comp = 0.0f;
  for (uint j = 0; j < len; ++j) HGR_KAHAN_ADD(sum, comp, exp(x[base + j * inner] - peak));
  sum -= comp;
  float log_sum = log(sum);
  for (uint j = 0; j < len; ++j) {
    float shifted = x[base + j * inner] - peak;
    y[base + j * inner] = log_output ? shifted - log_sum : exp(shifted) / sum;
  }
}
#endif

/* layer_norm's input element i of x (plus skip's where has_skip), and chunk c of 16. */
#define HGR_LN_IN(x, skip, i) (has_skip ? (x)[i] + (skip)[i] : (x)[i])
#define HGR_LN_IN16(x, skip, c) (has_skip ? vload16((c), (x)) + vload16((c), (skip)) : vload16((c), (x)))

/* (x - mean) * inv_std, then times gamma[j] and plus beta[j] as the flags say. */
float hgr_layer_norm_value(float x, float mean, float inv_std, __global const float* gamma,
                           __global const float* beta, uint j, int center, int scale) {
  float v = (x - mean) * inv_std;
  if (scale) v *= gamma[j];
  if (center) v += beta[j];
  return v;
}

/* ---- vector rows: one work-item per row (inner == 1), 16 elements at a time ----------
 * For PoCL's CPU drivers, which run a work-group's work-items as a loop and vectorize
 * what a work-item writes in vectors (the column kernels' work-items there read rows
 * len apart, and the row kernels' barriers split the loop). The sums are compensated
 * lane by lane. NDRange 1-D, any local size, global >= rows.
 *   hgr_softmax_vec_f32(__global const float* x, __global float* y, uint rows, uint len,
 *                       int log_output)
 *   hgr_layer_norm_vec_f32(__global const float* x, __global const float* gamma,
 *                          __global const float* beta, __global const float* skip, int has_skip,
 *                          __global float* skip_sum, __global float* y, uint rows, uint len, float epsilon, int center,
 *                          int scale) */

#define HGR_KAHAN_ADD16(sum, comp, value)                                 \
  do {                                                                    \
    float16 y_ = (value) - (comp);                                        \
    float16 t_ = (sum) + y_;                                              \
    (comp) = select((float16)(0.0f), (t_ - (sum)) - y_, isfinite(t_));    \
    (sum) = t_;                                                           \
  } while (0)

/* The compensated lanes' total, lane by lane (Oclgrind 21.10 takes a float16's
 * .lo/.hi halves for uninitialized). */
float hgr_norm_lanes_total(float16 sum, float16 comp) {
  float s[16], c[16];
  vstore16(sum, 0, s);
  vstore16(comp, 0, c);
  float total = 0.0f, total_comp = 0.0f;
  for (int l = 0; l < 16; ++l) HGR_KAHAN_ADD(total, total_comp, s[l] - c[l]);
  return total - total_comp;
}

float hgr_norm_lanes_max(float16 v) {
  float t[16];
  vstore16(v, 0, t);
  float m = t[0];
  for (int l = 1; l < 16; ++l) m = fmax(m, t[l]);
  return m;
}

#if HGR_WANTED(hgr_softmax_vec_f32)
__kernel void hgr_softmax_vec_f32(__global const float* x, __global float* y, uint rows, uint len, int log_output) {
  size_t row = get_global_id(0);
  if (row >= rows) return;
  __global const float* xr = x + row * len;
  __global float* yr = y + row * len;
  uint chunks = len / 16;
  float16 peak16 = (float16)(-INFINITY);
  for (uint c = 0; c < chunks; ++c) peak16 = fmax(peak16, vload16(c, xr));
  float peak = hgr_norm_lanes_max(peak16);
  for (uint j = chunks * 16; j < len; ++j) peak = fmax(peak, xr[j]);
  float16 sum16 = (float16)(0.0f), comp16 = (float16)(0.0f);
  for (uint c = 0; c < chunks; ++c) {
    HGR_KAHAN_ADD16(sum16, comp16, exp(vload16(c, xr) - (float16)(peak)));
  }
  float sum = hgr_norm_lanes_total(sum16, comp16), comp = 0.0f;
  for (uint j = chunks * 16; j < len; ++j) HGR_KAHAN_ADD(sum, comp, exp(xr[j] - peak));
  sum -= comp;
  if (log_output) { /* (x - peak) is exact near the peak (Sterbenz), x - (peak + log) not */
    float log_sum = log(sum);
    for (uint c = 0; c < chunks; ++c) vstore16((vload16(c, xr) - (float16)(peak)) - (float16)(log_sum), c, yr);
    for (uint j = chunks * 16; j < len; ++j) yr[j] = (xr[j] - peak) - log_sum;
  } else {
    /* exp again rather than y read back: Oclgrind 21.10 takes what a kernel stored
     * with vstore16 for uninitialized when it reads it back */
    for (uint c = 0; c < chunks; ++c) vstore16(exp(vload16(c, xr) - (float16)(peak)) / (float16)(sum), c, yr);
    for (uint j = chunks * 16; j < len; ++j) yr[j] = exp(xr[j] - peak) / sum;
  }
}
#endif

#if HGR_WANTED(hgr_layer_norm_vec_f32)
__kernel void hgr_layer_norm_vec_f32(__global const float* x, __global const float* gamma,
                                     __global const float* beta, __global const float* skip, int has_skip,
                                     __global float* skip_sum, __global float* y, uint rows, uint len,
                                     float epsilon, int center, int scale) {
  size_t row = get_global_id(0);
  if (row >= rows) return;
  __global const float* xr = x + row * len;
  __global const float* sr = skip + (has_skip ? row * len : 0);
  __global float* zr = skip_sum + (has_skip == 2 ? row * len : 0);
  __global float* yr = y + row * len;
  uint chunks = len / 16;
  float16 sum16 = (float16)(0.0f), comp16 = (float16)(0.0f);
  for (uint c = 0; c < chunks; ++c) HGR_KAHAN_ADD16(sum16, comp16, HGR_LN_IN16(xr, sr, c));
  float sum = hgr_norm_lanes_total(sum16, comp16), comp = 0.0f;
  for (uint j = chunks * 16; j < len; ++j) HGR_KAHAN_ADD(sum, comp, HGR_LN_IN(xr, sr, j));
  float mean = (sum - comp) / (float)len;
  sum16 = (float16)(0.0f);
  comp16 = (float16)(0.0f);
  for (uint c = 0; c < chunks; ++c) {
    float16 d = HGR_LN_IN16(xr, sr, c) - (float16)(mean);
    HGR_KAHAN_ADD16(sum16, comp16, d * d);
  }
  sum = hgr_norm_lanes_total(sum16, comp16);
  comp = 0.0f;
  for (uint j = chunks * 16; j < len; ++j) {
    float d = HGR_LN_IN(xr, sr, j) - mean;
    HGR_KAHAN_ADD(sum, comp, d * d);
  }
  float inv_std = 1.0f / sqrt((sum - comp) / (float)len + epsilon);
  for (uint c = 0; c < chunks; ++c) {
    const float16 in = HGR_LN_IN16(xr, sr, c);
    if (has_skip == 2) vstore16(in, c, zr);
    float16 v = (in - (float16)(mean)) * (float16)(inv_std);
    if (scale) v *= vload16(c, gamma);
    if (center) v += vload16(c, beta);
    vstore16(v, c, yr);
  }
  for (uint j = chunks * 16; j < len; ++j) {
    const float in = HGR_LN_IN(xr, sr, j);
    if (has_skip == 2) zr[j] = in;
    yr[j] = hgr_layer_norm_value(in, mean, inv_std, gamma, beta, j, center, scale);
  }
}
#endif


#if HGR_WANTED(hgr_layer_norm_rows_f32)
__kernel void hgr_layer_norm_rows_f32(__global const float* x, __global const float* gamma,
                                      __global const float* beta, __global const float* skip, int has_skip,
                                      __global float* skip_sum, __global float* y, uint rows, uint len,
                                      float epsilon, int center, int scale, __local float* scratch) {
  uint row = get_group_id(0), lid = get_local_id(0), size = get_local_size(0);
  bool active = row < rows;
  uint base = active ? row * len : 0;
  float sum = 0.0f, comp = 0.0f;
  if (active)
    for (uint j = lid; j < len; j += size) HGR_KAHAN_ADD(sum, comp, HGR_LN_IN(x, skip, base + j));
  float mean = hgr_norm_group_sum(scratch, sum - comp) / (float)len;
  /* Two passes: the variance of the centered values does not cancel. */
  sum = comp = 0.0f;
  if (active)
    for (uint j = lid; j < len; j += size) {
      float d = HGR_LN_IN(x, skip, base + j) - mean;
      HGR_KAHAN_ADD(sum, comp, d * d);
    }
  float var = hgr_norm_group_sum(scratch, sum - comp) / (float)len;
  float inv_std = 1.0f / sqrt(var + epsilon);
  if (active)
    for (uint j = lid; j < len; j += size) {
      const float in = HGR_LN_IN(x, skip, base + j);
      if (has_skip == 2) skip_sum[base + j] = in;
      y[base + j] = hgr_layer_norm_value(in, mean, inv_std, gamma, beta, j, center, scale);
    }
}
#endif

#if HGR_WANTED(hgr_layer_norm_f32)
__kernel void hgr_layer_norm_f32(__global const float* x, __global const float* gamma, __global const float* beta,
                                 __global const float* skip, int has_skip, __global float* skip_sum,
                                 __global float* y, uint outer, uint len, uint inner, float epsilon, int center,
                                 int scale) {
  size_t item = get_global_id(0);
  if (item >= (size_t)outer * inner) return;
  uint o = (uint)item / inner, i = (uint)item - o * inner;
  uint base = o * len * inner + i;
  float sum = 0.0f, comp = 0.0f;
  for (uint j = 0; j < len; ++j) HGR_KAHAN_ADD(sum, comp, HGR_LN_IN(x, skip, base + j * inner));
  float mean = (sum - comp) / (float)len;
  sum = comp = 0.0f;
  for (uint j = 0; j < len; ++j) {
    float d = HGR_LN_IN(x, skip, base + j * inner) - mean;
    HGR_KAHAN_ADD(sum, comp, d * d);
  }
  float var = (sum - comp) / (float)len;
  float inv_std = 1.0f / sqrt(var + epsilon);
  for (uint j = 0; j < len; ++j) {
    const float in = HGR_LN_IN(x, skip, base + j * inner);
    if (has_skip == 2) skip_sum[base + j * inner] = in;
    y[base + j * inner] = hgr_layer_norm_value(in, mean, inv_std, gamma, beta, j, center, scale);
  }
}
#endif

#if HGR_WANTED(hgr_batch_norm_f32)
__kernel void hgr_batch_norm_f32(__global const float* x, __global const float* gamma, __global const float* beta,
                                 __global const float* moving_mean, __global const float* moving_var,
                                 __global float* y, uint count, uint channels, uint inner, float epsilon,
                                 int center, int scale) {
  size_t e = get_global_id(0);
  if (e >= count) return;
  uint c = (uint)e / inner % channels;
  float v = (x[e] - moving_mean[c]) / sqrt(moving_var[c] + epsilon);
  if (scale) v *= gamma[c];
  if (center) v += beta[c];
  y[e] = v;
}
#endif

#if HGR_WANTED(hgr_norm_copy_f32)
__kernel void hgr_norm_copy_f32(__global const float* x, __global float* y, uint count) {
  size_t e = get_global_id(0);
  if (e < count) y[e] = x[e];
}
#endif

/* x / (bias + alpha_over_size sum)^beta as x * 2^(-beta log2 base): PoCL's pow costs
 * 5x more (LRN was half of inception_v1's time); NaN, 0 and infinite bases come out as
 * pow's do. beta 0.75 (every model-zoo LRN) as rsqrt(base) * sqrt(rsqrt(base)), 4x
 * faster again on PoCL than exp2 and log2. */
inline float hgr_lrn_scale(float x, float sum, float alpha_over_size, float beta, float bias) {
  float base = bias + alpha_over_size * sum;
  if (beta == 0.75f) {
    float r = rsqrt(base);
    return x * r * sqrt(r);
  }
  return x * exp2(-beta * log2(base));
}

#if HGR_WANTED(hgr_lrn_f32)
__kernel void hgr_lrn_f32(__global const float* x, __global float* y, uint count, uint channels, uint inner,
                          int before, int after, float alpha_over_size, float beta, float bias) {
  size_t item = get_global_id(0);
  if (item >= count) return;
  uint row = (uint)item / inner, i = (uint)item - row * inner;
  uint o = row / channels, c = row - o * channels;
  int first = max((int)c - before, 0), last = min((int)c + after, (int)channels - 1);
  __global const float* column = x + (size_t)o * channels * inner + i;
  float sum = 0.0f;
  for (int k = first; k <= last; ++k) {
    float v = column[(size_t)k * inner];
    sum = mad(v, v, sum);
  }
  y[item] = hgr_lrn_scale(x[item], sum, alpha_over_size, beta, bias);
}
#endif

#if HGR_WANTED(hgr_lrn_columns_f32)
__kernel void hgr_lrn_columns_f32(__global const float* x, __global float* y, uint columns, uint channels,
                                  uint inner, int before, int after, float alpha_over_size, float beta,
                                  float bias) {
  size_t item = get_global_id(0);
  if (item >= columns) return;
  uint o = (uint)item / inner, i = (uint)item - o * inner;
  size_t base = (size_t)o * channels * inner + i;
  __global const float* column = x + base;
  __global float* out = y + base;
  for (int c = 0; c < (int)channels; ++c) {
    int first = max(c - before, 0), last = min(c + after, (int)channels - 1);
    float sum = 0.0f;
    for (int k = first; k <= last; ++k) {
      float v = column[(size_t)k * inner];
      sum = mad(v, v, sum);
    }
    out[(size_t)c * inner] = hgr_lrn_scale(column[(size_t)c * inner], sum, alpha_over_size, beta, bias);
  }
}
#endif

/* Offset of element k of row (n, c) in [batch, before, channels, after]. */
inline size_t hgr_instance_offset(uint n, uint c, uint k, uint before, uint channels, uint after) {
  uint p = k / after, q = k - p * after;
  return (((size_t)n * before + p) * channels + c) * after + q;
}

#if HGR_WANTED(hgr_instance_norm_f32)
__kernel void hgr_instance_norm_f32(__global const float* x, __global const float* gamma,
                                    __global const float* beta, __global float* y, uint rows, uint before,
                                    uint channels, uint after, float epsilon, int center, int scale,
                                    __local float* scratch) {
  uint row = get_group_id(0), lid = get_local_id(0), size = get_local_size(0);
  bool active = row < rows;
  uint n = active ? row / channels : 0, c = active ? row - n * channels : 0;
  uint len = active ? before * after : 0;
  float sum = 0.0f, comp = 0.0f;
  for (uint k = lid; k < len; k += size)
    HGR_KAHAN_ADD(sum, comp, x[hgr_instance_offset(n, c, k, before, channels, after)]);
  float mean = hgr_norm_group_sum(scratch, sum - comp) / (float)(before * after);
  /* Two passes: the variance of the centered values does not cancel. */
  sum = comp = 0.0f;
  for (uint k = lid; k < len; k += size) {
    float d = x[hgr_instance_offset(n, c, k, before, channels, after)] - mean;
    HGR_KAHAN_ADD(sum, comp, d * d);
  }
  float var = hgr_norm_group_sum(scratch, sum - comp) / (float)(before * after);
  float inv_std = 1.0f / sqrt(var + epsilon);
  float g = active && scale ? gamma[c] : 1.0f, b = active && center ? beta[c] : 0.0f;
  for (uint k = lid; k < len; k += size) {
    size_t at = hgr_instance_offset(n, c, k, before, channels, after);
    y[at] = (x[at] - mean) * inv_std * g + b;
  }
}
#endif
