/* Index-tensor ops: gather_nd, scatter_nd, scatter_elements (runtime/ops/ops_index.c).
 * The moving kernels come in two element sizes, suffix _u32 (float32, int32: moved
 * as uint) and _u8 (bool, uint8, int8: moved as uchar); the reducing ones in _f32
 * and _i32. Indices are int (ONNX's int64 held as int32): a negative index counts
 * from the end of its dim; one still outside the dim is clamped into it by the
 * gather and makes the scatters skip that update (never an access out of bounds).
 * Every count is an int: the plan checks that each tensor has at most INT32_MAX
 * elements. Every kernel is 1-D, global size = n rounded up to the work-group size,
 * each work-item checking i < n first (n may be 0).
 *
 *   hgr_gather_nd_<T>(__global const T* data, __global const int* indices,
 *                     __global T* out, __global const int* meta, int k, int tuples,
 *                     int slice, int batch_size, uint n)
 *       meta = {dim[k], stride[k]}: the k indexed dims after the batch dims and
 *       their strides in a batch's data. out[t * slice + j] = data[(t / tuples) *
 *       batch_size + sum_c index_c * stride_c + j] with index_c = indices[t * k +
 *       c] (t counts tuples over every batch; tuples per batch, batch_size elements
 *       per batch of the data).
 *   hgr_index_copy_<T>(__global const T* in, __global T* out, uint n)
 *       out[i] = in[i]: the scatters copy the data into the output, or with a
 *       reduction into the node's scratch, reduce there and copy it to the output.
 *   hgr_scatter_nd_<T>(__global const T* updates, __global const int* indices,
 *                      __global T* out, __global const int* meta, int k, int slice,
 *                      uint n)
 *       meta = {dim[k], stride[k]}; n = tuples * slice, one work-item per update
 *       element: out[offset(t) + j] = updates[t * slice + j] (reduction none, whose
 *       indices ONNX requires to be distinct).
 *   hgr_scatter_nd_reduce_<R>(updates, indices, __global T* values, meta, int k,
 *                             int slice, int tuples, int reduction, uint n)
 *       n = slice: work-item j applies the updates t = 0, 1, ... in order to
 *       values[offset(t) + j], so duplicates reduce in ONNX's order. reduction: 0
 *       none (the last write wins), 1 add, 2 mul, 3 max, 4 min (NaN wins max and
 *       min, as NumPy's maximum and minimum).
 *   hgr_scatter_elements_<R>(updates, indices, __global T* values, meta, int ndim,
 *                            int axis, int reduction, uint n)
 *       meta = {updates_shape[ndim], values_strides[ndim], axis_dim}; n = the
 *       updates' elements / updates_shape[axis]: work-item i walks one line of the
 *       updates along the axis in order, applying each at its coordinates with
 *       coordinate axis replaced by its index. Lines never meet another line's
 *       targets, so duplicates reduce in ONNX's order without races (and without a
 *       reduction the last write wins). R: f32, i32 (any reduction), u8 (0 only).
 *
 * The reductions read back what they write: they work in the node's scratch, never
 * in an output, since Oclgrind 21.10 takes a read of an output buffer's earlier
 * writes for uninitialized (tests/CMakeLists.txt; the scratch is written whole
 * at creation).
 *
 * A remainder is written as x - (x / e) * e (layout.cl says why).
 */

#include "select.h"

/* Where tuple t's k indices point, from meta = {dim[k], stride[k]}, each clamped
 * into its dim (gather_nd). */
int hgr_index_clamped(__global const int* indices, __global const int* meta, int k, int t) {
  int offset = 0;
  for (int c = 0; c < k; ++c) {
    int dim = meta[c];
    int v = indices[t * k + c];
    if (v < 0) v += dim;
    v = clamp(v, 0, dim - 1);
    offset += v * meta[k + c];
  }
  return offset;
}

/* The same for the scatters, -1 where an index is outside its dim. Branch-free:
 * an early return from the loop leaves LLVM a select it freezes, which Oclgrind
 * 21.10's uninitialized-value checker cannot run. */
int hgr_index_offset(__global const int* indices, __global const int* meta, int k, int t) {
  int offset = 0, inside = 1;
  for (int c = 0; c < k; ++c) {
    int dim = meta[c];
    int v = indices[t * k + c];
    v += v < 0 ? dim : 0;
    inside &= v >= 0 && v < dim;
    offset += v * meta[k + c];
  }
  return inside ? offset : -1;
}

#define HGR_INDEX_MOVES(S, T)                                                                                        \
  HGR_KERNEL_IF(hgr_gather_nd_##S,                                                                                  \
  __kernel void hgr_gather_nd_##S(__global const T* data, __global const int* indices, __global T* out,            \
                                  __global const int* meta, int k, int tuples, int slice, int batch_size, uint n) {  \
    int i = (int)get_global_id(0);                                                                                  \
    if (i >= (int)n) return;                                                                                        \
    int t = i / slice;                                                                                              \
    int j = i - t * slice;                                                                                          \
    int batch = t / tuples;                                                                                         \
    out[i] = data[batch * batch_size + hgr_index_clamped(indices, meta, k, t) + j];                               \
  })                                                                                                                \
  HGR_KERNEL_IF(hgr_index_copy_##S,                                                                                 \
  __kernel void hgr_index_copy_##S(__global const T* in, __global T* out, uint n) {                                \
    size_t i = get_global_id(0);                                                                                    \
    if (i < n) out[i] = in[i];                                                                                      \
  })                                                                                                                \
  HGR_KERNEL_IF(hgr_scatter_nd_##S,                                                                                 \
  __kernel void hgr_scatter_nd_##S(__global const T* updates, __global const int* indices, __global T* out,        \
                                   __global const int* meta, int k, int slice, uint n) {                           \
    int i = (int)get_global_id(0);                                                                                  \
    if (i >= (int)n) return;                                                                                        \
    int t = i / slice;                                                                                              \
    int offset = hgr_index_offset(indices, meta, k, t);                                                          \
    if (offset >= 0) out[offset + i - t * slice] = updates[i];                                                      \
  })

HGR_INDEX_MOVES(u32, uint)
HGR_INDEX_MOVES(u8, uchar)

/* The reductions of the value there x and the update u: 0 none, 1 add, 2 mul, 3
 * max, 4 min. Each kernel branches on the reduction once, outside its loop, into a
 * loop per reduction: with the branch inside, LLVM unswitches the loop and
 * freezes the condition, which Oclgrind 21.10's uninitialized-value checker
 * cannot run. */
#define HGR_FLOAT_ADD(x, u) ((x) + (u))
#define HGR_FLOAT_MUL(x, u) ((x) * (u))
#define HGR_FLOAT_MAX(x, u) (isnan(x) || (x) >= (u) ? (x) : (u))
#define HGR_FLOAT_MIN(x, u) (isnan(x) || (x) <= (u) ? (x) : (u))
/* int32 adds and multiplies as uint: it wraps. */
#define HGR_INT_ADD(x, u) ((int)((uint)(x) + (uint)(u)))
#define HGR_INT_MUL(x, u) ((int)((uint)(x) * (uint)(u)))
#define HGR_INT_MAX(x, u) max((x), (u))
#define HGR_INT_MIN(x, u) min((x), (u))
#define HGR_REPLACE(x, u) (u)

/* The loops, for each reduction F(x, u). */
#define HGR_SCATTER_ND_LOOP(F)                                                 \
  for (int t = 0; t < tuples; ++t) {                                           \
    int offset = hgr_index_offset(indices, meta, k, t);                     \
    if (offset < 0) continue;                                                  \
    out[offset + j] = F(out[offset + j], updates[t * slice + j]);              \
  }
#define HGR_SCATTER_ELEMENTS_LOOP(F)                                           \
  for (int a = 0; a < length; ++a) {                                           \
    int u_index = update_base + a * axis_stride;                               \
    int v = indices[u_index];                                                  \
    if (v < 0) v += axis_dim;                                                  \
    if (v < 0 || v >= axis_dim) continue;                                      \
    int o = base + v * out_stride;                                             \
    out[o] = F(out[o], updates[u_index]);                                      \
  }
#define HGR_BY_REDUCTION(LOOP, ADD, MUL, MAX, MIN) \
  if (reduction == 1) {                            \
    LOOP(ADD)                                      \
  } else if (reduction == 2) {                     \
    LOOP(MUL)                                      \
  } else if (reduction == 3) {                     \
    LOOP(MAX)                                      \
  } else if (reduction == 4) {                     \
    LOOP(MIN)                                      \
  } else {                                         \
    LOOP(HGR_REPLACE)                              \
  }

#define HGR_INDEX_REDUCES(S, T, ADD, MUL, MAX, MIN)                                                                  \
  HGR_KERNEL_IF(hgr_scatter_nd_reduce_##S,                                                                          \
  __kernel void hgr_scatter_nd_reduce_##S(__global const T* updates, __global const int* indices, __global T* out, \
                                          __global const int* meta, int k, int slice, int tuples, int reduction,    \
                                          uint n) {                                                                 \
    int j = (int)get_global_id(0);                                                                                  \
    if (j >= (int)n) return;                                                                                        \
    HGR_BY_REDUCTION(HGR_SCATTER_ND_LOOP, ADD, MUL, MAX, MIN)                                                       \
  })                                                                                                                \
  HGR_KERNEL_IF(hgr_scatter_elements_##S,                                                                           \
  __kernel void hgr_scatter_elements_##S(__global const T* updates, __global const int* indices, __global T* out,  \
                                         __global const int* meta, int ndim, int axis, int reduction, uint n) {    \
    int line = (int)get_global_id(0);                                                                               \
    if (line >= (int)n) return;                                                                                     \
    /* the line's coordinates (axis left out) in the updates, and its base in out */                               \
    int rest = line, base = 0, update_base = 0, update_stride = 1, axis_stride = 1;                                 \
    for (int d = ndim - 1; d >= 0; --d) {                                                                           \
      int extent = meta[d];                                                                                         \
      if (d == axis) {                                                                                              \
        axis_stride = update_stride;                                                                                \
      } else {                                                                                                      \
        int q = rest / extent;                                                                                      \
        int c = rest - q * extent;                                                                                  \
        rest = q;                                                                                                   \
        base += c * meta[ndim + d];                                                                                 \
        update_base += c * update_stride;                                                                           \
      }                                                                                                             \
      update_stride *= extent;                                                                                      \
    }                                                                                                               \
    int axis_dim = meta[2 * ndim], length = meta[axis], out_stride = meta[ndim + axis];                            \
    HGR_BY_REDUCTION(HGR_SCATTER_ELEMENTS_LOOP, ADD, MUL, MAX, MIN)                                                 \
  })

HGR_INDEX_REDUCES(f32, float, HGR_FLOAT_ADD, HGR_FLOAT_MUL, HGR_FLOAT_MAX, HGR_FLOAT_MIN)
HGR_INDEX_REDUCES(i32, int, HGR_INT_ADD, HGR_INT_MUL, HGR_INT_MAX, HGR_INT_MIN)
/* bool, uint8, int8: only reduction 0 reaches them */
HGR_INDEX_REDUCES(u8, uchar, HGR_REPLACE, HGR_REPLACE, HGR_REPLACE, HGR_REPLACE)
