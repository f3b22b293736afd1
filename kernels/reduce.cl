/* Reductions sum, mean, max, min, prod of float32 tensors, and sum, max, min, prod of
 * int32 (runtime/ops_reduce.c); argmax, argmin and topk at the end. <op> is sum_f32,
 * mean_f32, max_f32, min_f32, prod_f32, sum_i32, max_i32, min_i32 or prod_i32; T is
 * float or int; indices are uint (the plan checks every
 * count against INT32_MAX).
 *
 * The plan merges adjacent dimensions that are both kept or both reduced and drops
 * extents of 1, which leaves one of three shapes:
 *
 * One reduced block with nothing after it: [rows, len]. One work-group per row,
 * each work-item folds a strided slice, then a tree in local memory. NDRange 1-D,
 * local size L (a power of two; 1 works), global = rows * L (one group when rows is
 * 0); scratch is __local ACC[L] (ACC: float, or uint for sum_i32, int for max/min).
 *   hgr_reduce_rows_<op>(__global const T* x, __global T* y, uint rows, uint len, __local ACC* scratch)
 *
 * One reduced block: [outer, len, inner]. One work-item per (o, i) output, looping
 * over the block with stride inner. NDRange 1-D, global >= outer * inner.
 *   hgr_reduce_cols_<op>(__global const T* x, __global T* y, uint outer, uint len, uint inner)
 *
 * Several reduced blocks: one work-item per output, any layout. meta holds
 * kept_blocks, reduced_blocks, then (extent, input stride) of each kept block from
 * the innermost out, then of each reduced block from the innermost out; reduced is
 * the number of elements folded into each output. NDRange 1-D, global >= count.
 *   hgr_reduce_general_<op>(__global const T* x, __global T* y, uint count, uint reduced,
 *                           __global const int* meta)
 *
 * Over zero elements: sum 0, prod 1, mean NaN (0 / 0), max -inf (INT_MIN), min +inf
 * (INT_MAX). Float max and min propagate NaN, as NumPy does. int32 products wrap. Float sums are
 * compensated (Kahan) within each work-item; an infinite partial sum resets the
 * compensation instead of turning into NaN. int32 sums wrap modulo 2^32.
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

/* max and min that return NaN when either side is NaN. */
float hgr_reduce_max_nan(float a, float b) { return (a > b || isnan(a)) ? a : b; }
float hgr_reduce_min_nan(float a, float b) { return (a < b || isnan(a)) ? a : b; }

/* Per op: INIT declares the accumulator acc, ADD(v) folds one element into it,
 * PARTIAL is what a work-item contributes, MERGE(a, b) combines two contributions and
 * FINISH(v, n) makes the output from the combined v of n elements. */
#define HGR_sum_f32_INIT float acc = 0.0f, comp = 0.0f
#define HGR_sum_f32_ADD(v) HGR_KAHAN_ADD(acc, comp, (v))
#define HGR_sum_f32_PARTIAL (acc - comp)
#define HGR_sum_f32_MERGE(a, b) ((a) + (b))
#define HGR_sum_f32_FINISH(v, n) (v)

#define HGR_mean_f32_INIT HGR_sum_f32_INIT
#define HGR_mean_f32_ADD HGR_sum_f32_ADD
#define HGR_mean_f32_PARTIAL HGR_sum_f32_PARTIAL
#define HGR_mean_f32_MERGE HGR_sum_f32_MERGE
#define HGR_mean_f32_FINISH(v, n) ((v) / (float)(n))

#define HGR_max_f32_INIT float acc = -INFINITY
#define HGR_max_f32_ADD(v) acc = hgr_reduce_max_nan(acc, (v))
#define HGR_max_f32_PARTIAL acc
#define HGR_max_f32_MERGE(a, b) hgr_reduce_max_nan((a), (b))
#define HGR_max_f32_FINISH(v, n) (v)

#define HGR_min_f32_INIT float acc = INFINITY
#define HGR_min_f32_ADD(v) acc = hgr_reduce_min_nan(acc, (v))
#define HGR_min_f32_PARTIAL acc
#define HGR_min_f32_MERGE(a, b) hgr_reduce_min_nan((a), (b))
#define HGR_min_f32_FINISH(v, n) (v)

#define HGR_prod_f32_INIT float acc = 1.0f
#define HGR_prod_f32_ADD(v) acc *= (v)
#define HGR_prod_f32_PARTIAL acc
#define HGR_prod_f32_MERGE(a, b) ((a) * (b))
#define HGR_prod_f32_FINISH(v, n) (v)

#define HGR_prod_i32_INIT uint acc = 1u
#define HGR_prod_i32_ADD(v) acc *= as_uint(v)
#define HGR_prod_i32_PARTIAL acc
#define HGR_prod_i32_MERGE(a, b) ((a) * (b))
#define HGR_prod_i32_FINISH(v, n) as_int(v)

/* Unsigned: wrapping is defined for uint, not for int. */
#define HGR_sum_i32_INIT uint acc = 0u
#define HGR_sum_i32_ADD(v) acc += as_uint(v)
#define HGR_sum_i32_PARTIAL acc
#define HGR_sum_i32_MERGE(a, b) ((a) + (b))
#define HGR_sum_i32_FINISH(v, n) as_int(v)

#define HGR_max_i32_INIT int acc = INT_MIN
#define HGR_max_i32_ADD(v) acc = max(acc, (v))
#define HGR_max_i32_PARTIAL acc
#define HGR_max_i32_MERGE(a, b) max((a), (b))
#define HGR_max_i32_FINISH(v, n) (v)

#define HGR_min_i32_INIT int acc = INT_MAX
#define HGR_min_i32_ADD(v) acc = min(acc, (v))
#define HGR_min_i32_PARTIAL acc
#define HGR_min_i32_MERGE(a, b) min((a), (b))
#define HGR_min_i32_FINISH(v, n) (v)

#define HGR_REDUCE_KERNELS(NAME, T, ACC)                                                                  \
  HGR_KERNEL_IF(hgr_reduce_rows_##NAME, \
  __kernel void hgr_reduce_rows_##NAME(__global const T* x, __global T* y, uint rows, uint len,            \
                                       __local ACC* scratch) {                                             \
    uint row = get_group_id(0), lid = get_local_id(0), size = get_local_size(0);                          \
    bool active = row < rows;                                                                              \
    uint base = active ? row * len : 0;                                                                    \
    HGR_##NAME##_INIT;                                                                                     \
    if (active)                                                                                            \
      for (uint j = lid; j < len; j += size) HGR_##NAME##_ADD(x[base + j]);                                \
    /* Every work-item reaches every barrier. */                                                           \
    scratch[lid] = HGR_##NAME##_PARTIAL;                                                                   \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                          \
    for (uint s = size / 2; s > 0; s >>= 1) {                                                              \
      if (lid < s) scratch[lid] = HGR_##NAME##_MERGE(scratch[lid], scratch[lid + s]);                      \
      barrier(CLK_LOCAL_MEM_FENCE);                                                                        \
    }                                                                                                      \
    if (active && lid == 0) y[row] = HGR_##NAME##_FINISH(scratch[0], len);                                 \
  }) \
                                                                                                           \
  HGR_KERNEL_IF(hgr_reduce_cols_##NAME, \
  __kernel void hgr_reduce_cols_##NAME(__global const T* x, __global T* y, uint outer, uint len,           \
                                       uint inner) {                                                       \
    size_t item = get_global_id(0);                                                                        \
    if (item >= (size_t)outer * inner) return;                                                             \
    uint o = (uint)item / inner, i = (uint)item - o * inner;                                                   \
    uint base = o * len * inner + i;                                                                       \
    HGR_##NAME##_INIT;                                                                                     \
    for (uint j = 0; j < len; ++j) HGR_##NAME##_ADD(x[base + j * inner]);                                  \
    y[item] = HGR_##NAME##_FINISH(HGR_##NAME##_PARTIAL, len);                                              \
  }) \
                                                                                                           \
  HGR_KERNEL_IF(hgr_reduce_general_##NAME, \
  __kernel void hgr_reduce_general_##NAME(__global const T* x, __global T* y, uint count, uint reduced,    \
                                          __global const int* meta) {                                      \
    size_t item = get_global_id(0);                                                                        \
    if (item >= count) return;                                                                             \
    uint kept_blocks = (uint)meta[0], reduced_blocks = (uint)meta[1];                                      \
    uint rest = (uint)item, base = 0;                                                                      \
    for (uint k = 0; k < kept_blocks; ++k) {                                                               \
      uint extent = (uint)meta[2 + 2 * k], stride = (uint)meta[3 + 2 * k];                                 \
      uint quotient = rest / extent;                                                                       \
      base += (rest - quotient * extent) * stride;                                                         \
      rest = quotient;                                                                                     \
    }                                                                                                      \
    __global const int* blocks = meta + 2 + 2 * kept_blocks;                                               \
    uint inner_len = (uint)blocks[0], inner_stride = (uint)blocks[1];                                      \
    /* The innermost reduced block runs as a plain loop; the others are decoded. */                        \
    uint outer_count = reduced ? reduced / inner_len : 0;                                                  \
    HGR_##NAME##_INIT;                                                                                     \
    for (uint g = 0; g < outer_count; ++g) {                                                               \
      uint rest_g = g, offset = base;                                                                      \
      for (uint k = 1; k < reduced_blocks; ++k) {                                                          \
        uint extent = (uint)blocks[2 * k], stride = (uint)blocks[2 * k + 1];                               \
        uint quotient = rest_g / extent;                                                                   \
        offset += (rest_g - quotient * extent) * stride;                                                   \
        rest_g = quotient;                                                                                 \
      }                                                                                                    \
      for (uint j = 0; j < inner_len; ++j) HGR_##NAME##_ADD(x[offset + j * inner_stride]);                 \
    }                                                                                                      \
    y[item] = HGR_##NAME##_FINISH(HGR_##NAME##_PARTIAL, reduced);                                          \
  })

HGR_REDUCE_KERNELS(sum_f32, float, float)
HGR_REDUCE_KERNELS(mean_f32, float, float)
HGR_REDUCE_KERNELS(max_f32, float, float)
HGR_REDUCE_KERNELS(min_f32, float, float)
HGR_REDUCE_KERNELS(sum_i32, int, uint)
HGR_REDUCE_KERNELS(max_i32, int, int)
HGR_REDUCE_KERNELS(min_i32, int, int)
HGR_REDUCE_KERNELS(prod_f32, float, float)
HGR_REDUCE_KERNELS(prod_i32, int, uint)

/* argmax / argmin over [outer, len, inner] (len >= 1): one work-item per (o, i)
 * output, NDRange 1-D, global >= outer * inner; y gets the int32 index along the
 * axis. Ties: the first index, or the last with select_last. NaN (v != v, never
 * true for int) counts as the extreme: the first NaN, or the last with select_last.
 *   hgr_arg<max|min>_<f32|i32>(__global const T* x, __global int* y, uint outer, uint len, uint inner,
 *                              int select_last) */
#define HGR_ARG_KERNEL(NAME, T, BEYOND)                                                                \
  HGR_KERNEL_IF(NAME, \
  __kernel void NAME(__global const T* x, __global int* y, uint outer, uint len, uint inner,            \
                     int select_last) {                                                                 \
    size_t item = get_global_id(0);                                                                     \
    if (item >= (size_t)outer * inner) return;                                                          \
    uint o = (uint)item / inner, i = (uint)item - o * inner;                                             \
    __global const T* row = x + (size_t)o * len * inner + i;                                            \
    T best = row[0];                                                                                    \
    uint at = 0;                                                                                        \
    for (uint j = 1; j < len; ++j) {                                                                    \
      T v = row[(size_t)j * inner];                                                                     \
      bool take = select_last ? (v != v) || (best == best && (BEYOND(v, best) || v == best))           \
                              : best == best && ((v != v) || BEYOND(v, best));                          \
      if (take) {                                                                                       \
        best = v;                                                                                       \
        at = j;                                                                                         \
      }                                                                                                 \
    }                                                                                                   \
    y[item] = (int)at;                                                                                  \
  })
#define HGR_ABOVE(a, b) ((a) > (b))
#define HGR_BELOW(a, b) ((a) < (b))
HGR_ARG_KERNEL(hgr_argmax_f32, float, HGR_ABOVE)
HGR_ARG_KERNEL(hgr_argmin_f32, float, HGR_BELOW)
HGR_ARG_KERNEL(hgr_argmax_i32, int, HGR_ABOVE)
HGR_ARG_KERNEL(hgr_argmin_i32, int, HGR_BELOW)

/* topk over [outer, len, inner]: one work-item per input element (o, j, i), NDRange
 * 1-D, global >= outer * len * inner. The element's rank is the number of elements
 * of its row ordered before it: larger (smaller with ascend), or equal with a lower
 * index; NaN is above every number and equal to NaN, so the order is total and the
 * ranks a permutation. Ranks below k write values and indices at (o, rank, i) of
 * the [outer, k, inner] outputs.
 *   hgr_topk_<f32|i32>(__global const T* x, __global T* values, __global int* indices, uint outer,
 *                      uint len, uint inner, uint k, int ascend) */
#define HGR_TOPK_KERNEL(NAME, T)                                                                        \
  HGR_KERNEL_IF(NAME, \
  __kernel void NAME(__global const T* x, __global T* values, __global int* indices, uint outer,         \
                     uint len, uint inner, uint k, int ascend) {                                         \
    size_t item = get_global_id(0);                                                                     \
    if (item >= (size_t)outer * len * inner) return;                                                    \
    uint row_index = (uint)item / inner, i = (uint)item - row_index * inner;                             \
    uint o = row_index / len, j = row_index - o * len;                                                  \
    __global const T* row = x + (size_t)o * len * inner + i;                                            \
    const T v = row[(size_t)j * inner];                                                                 \
    const bool v_nan = v != v;                                                                          \
    uint rank = 0;                                                                                      \
    for (uint m = 0; m < len && rank < k; ++m) {                                                        \
      const T u = row[(size_t)m * inner];                                                               \
      const bool u_nan = u != u;                                                                        \
      const bool equal = (u_nan && v_nan) || u == v;                                                    \
      const bool above = (u_nan && !v_nan) || u > v, below = (!u_nan && v_nan) || u < v;                \
      if ((ascend ? below : above) || (equal && m < j)) ++rank;                                         \
    }                                                                                                   \
    if (rank < k) {                                                                                     \
      size_t at = ((size_t)o * k + rank) * inner + i;                                                   \
      values[at] = v;                                                                                   \
      indices[at] = (int)j;                                                                             \
    }                                                                                                   \
  })
HGR_TOPK_KERNEL(hgr_topk_f32, float)
HGR_TOPK_KERNEL(hgr_topk_i32, int)
