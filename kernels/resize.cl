/* Resizing: image.resize2d (runtime/ops/ops_resize.c) on float32 NCHW data.
 *
 *   hgr_resize2d(__global const float* in, __global float* out, __global const int* meta,
 *                int in_h, int in_w, int out_h, int out_w, int taps,
 *                float extrapolation, uint rows)
 *       1-D, one work-item per output row (rows = N * C * out_h; global rounded up
 *       to the work-group size, so each checks its id < rows first), so that the
 *       row's plane, its row entry and their divisions are made once per row, not per
 *       element (a detector's 2x nearest upsamplings took 29 ms a call element by
 *       element on PoCL, bench/notes.md).
 *       meta holds out_h row entries, then out_w column entries, each 1 + 2 * taps
 *       ints: a flag (1: the output is `extrapolation`), taps input indices (already
 *       clamped into the input) and taps weights (float bits). The plan computed
 *       them with ONNX Resize's formulas; here out = sum_i wh_i * sum_j ww_j *
 *       in[plane, row_i, col_j], the inner sum over a row first as ONNX does.
 *       taps 0: the plan found every sample on its own pixel (a resize to the same
 *       size at scale 1): out = in, meta unread.
 *
 *   hgr_resize2d_repeat2(__global const float* in, __global float* out, int in_w, uint rows)
 *       Each pixel twice along both axes (the plan found every output pixel (y, x) on
 *       input pixel (y / 2, x / 2) whole: a nearest 2x upsampling): 1-D, one work-item
 *       per input row (rows = N * C * in_h), which it writes into output rows 2r and
 *       2r + 1, 8 inputs at a time as a float16 of pairs.
 *
 * A remainder is written as x - (x / e) * e: for x % e next to x / e, LLVM emits a
 * `freeze` that Oclgrind 21.10's uninitialized-value checker cannot run.
 */

#include "select.h"

#if HGR_WANTED(hgr_resize2d)
__kernel void hgr_resize2d(__global const float* in, __global float* out, __global const int* meta, int in_h,
                           int in_w, int out_h, int out_w, int taps, float extrapolation, uint rows) {
  /* in the kernel, not the file: a program holds other sources' kernels too */
#pragma OPENCL FP_CONTRACT OFF
  size_t r = get_global_id(0);
  if (r >= rows) return;
  __global float* o = out + r * (size_t)out_w;
  if (taps == 0) {
    __global const float* same = in + r * (size_t)out_w;
    for (int x = 0; x < out_w; ++x) o[x] = same[x];
    return;
  }
  int plane = (int)r / out_h;
  int y = (int)r - plane * out_h;
  int entry = 1 + 2 * taps;
  __global const int* row = meta + y * entry;
  __global const float* source = in + (size_t)plane * (size_t)in_h * (size_t)in_w;
  for (int x = 0; x < out_w; ++x) {
    __global const int* column = meta + (out_h + x) * entry;
    if (row[0] || column[0]) {
      o[x] = extrapolation;
      continue;
    }
    float sum = 0.0f;
    for (int a = 0; a < taps; ++a) {
      __global const float* line = source + (size_t)row[1 + a] * (size_t)in_w;
      float across = 0.0f;
      for (int b = 0; b < taps; ++b) across += as_float(column[1 + taps + b]) * line[column[1 + b]];
      sum += as_float(row[1 + taps + a]) * across;
    }
    o[x] = sum;
  }
}
#endif

#if HGR_WANTED(hgr_resize2d_repeat2)
__kernel void hgr_resize2d_repeat2(__global const float* in, __global float* out, int in_w, uint rows) {
  size_t r = get_global_id(0);
  if (r >= rows) return;
  __global const float* i = in + r * (size_t)in_w;
  __global float* top = out + 2 * r * (size_t)(2 * in_w);
  __global float* bottom = top + 2 * (size_t)in_w;
  int x = 0;
  for (; x + 8 <= in_w; x += 8) {
    const float8 v = vload8(0, i + x);
    const float16 pairs = (float16)(v.s0, v.s0, v.s1, v.s1, v.s2, v.s2, v.s3, v.s3, v.s4, v.s4, v.s5, v.s5, v.s6, v.s6,
                                    v.s7, v.s7);
    vstore16(pairs, 0, top + 2 * x);
    vstore16(pairs, 0, bottom + 2 * x);
  }
  for (; x < in_w; ++x) {
    const float v = i[x];
    top[2 * x] = top[2 * x + 1] = bottom[2 * x] = bottom[2 * x + 1] = v;
  }
}
#endif
