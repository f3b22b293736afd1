/* trilu (runtime/ops/ops_trilu.c): ONNX Trilu over the last two dims of the data,
 * rows x cols matrices one after another. Element (r, c) of each matrix is kept
 * where c - r >= k (upper) or c - r <= k (lower), else zero. Two element sizes:
 * _u32 (float32, int32: zero is all bits 0 for both) and _u8 (bool, uint8, int8).
 * 1-D, one work-item per element, global size n rounded up (each checks i < n).
 *
 *   hgr_trilu_<T>(__global const T* in, __global T* out, int rows, int cols, int k,
 *                 int upper, uint n)
 *       k is clamped by the plan to [-rows, cols], which decides the same.
 *
 * A remainder is written as x - (x / e) * e (layout.cl says why).
 */

#include "select.h"

#define HGR_TRILU(S, T)                                                                                \
  HGR_KERNEL_IF(hgr_trilu_##S,                                                                        \
  __kernel void hgr_trilu_##S(__global const T* in, __global T* out, int rows, int cols, int k,      \
                              int upper, uint n) {                                                   \
    int i = (int)get_global_id(0);                                                                    \
    if (i >= (int)n) return;                                                                          \
    int line = i / cols;                                                                              \
    int c = i - line * cols;                                                                          \
    int r = line - (line / rows) * rows;                                                              \
    int keep = upper ? c - r >= k : c - r <= k;                                                       \
    out[i] = keep ? in[i] : (T)0;                                                                     \
  })

HGR_TRILU(u32, uint)
HGR_TRILU(u8, uchar)
