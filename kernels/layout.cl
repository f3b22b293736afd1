/* Layout ops: they only move 4-byte elements (float32 or int32), so every kernel
 * works on uint and serves both dtypes. Indices are int: the plan checks that every
 * tensor has at most INT32_MAX elements.
 *
 * Every kernel is 1-D, one work-item per element of what it writes (global size =
 * that count rounded up to the work-group size, so each checks i < n first; n may
 * be 0).
 *
 *   hgr_layout_copy(__global const uint* in, __global uint* out, uint n)
 *       out[i] = in[i]: reshape-likes whose output has its own storage.
 *   hgr_layout_gather(__global const uint* in, __global uint* out,
 *                     __global const int* meta, int ndim, uint n)
 *       meta = {offset, shape[ndim], stride[ndim]}: out[i] = in[offset + sum_d
 *       coord_d(i) * stride_d], coord_d(i) the row-major coordinates of i in shape
 *       (the output's, dims merged where possible); strides may be negative.
 *       transpose and strided_slice.
 *   hgr_layout_concat(__global const uint* in, __global uint* out, uint block,
 *                     uint out_row, uint out_offset, uint n)
 *       One launch per input: input i (n = rows * block elements) goes to
 *       out[(i / block) * out_row + out_offset + i % block].
 *   hgr_layout_pad(__global const uint* in, __global uint* out,
 *                  __global const int* meta, uint pad_bits, uint n)
 *   hgr_layout_pad_input(__global const uint* in, __global const uint* pad_value,
 *                        __global uint* out, __global const int* meta, uint n)
 *       meta = {ndim, out_shape[ndim], before[ndim], in_shape[ndim]}; the pad value
 *       is the element's bits, as a scalar or as element 0 of a second input.
 *   hgr_layout_take(__global const uint* data, __global const int* indices,
 *                   __global uint* out, int axis_dim, int index_count, int inner,
 *                   int wrap, uint n)
 *       out[(o * index_count + j) * inner + r] = data[(o * axis_dim + k) * inner + r]
 *       with k = indices[j] wrapped (wrap != 0) or clipped into [0, axis_dim).
 *
 * A remainder is written as x - (x / e) * e: for x % e next to x / e, LLVM emits a
 * `freeze` that Oclgrind 21.10's uninitialized-value checker cannot run.
 */

__kernel void hgr_layout_copy(__global const uint* in, __global uint* out, uint n) {
  size_t i = get_global_id(0);
  if (i < n) out[i] = in[i];
}

__kernel void hgr_layout_gather(__global const uint* in, __global uint* out, __global const int* meta, int ndim,
                                uint n) {
  size_t gid = get_global_id(0);
  if (gid >= n) return;
  int rest = (int)gid;
  int source = meta[0];
  for (int d = ndim - 1; d >= 0; --d) {
    int extent = meta[1 + d];
    int next = rest / extent;
    source += (rest - next * extent) * meta[1 + ndim + d];
    rest = next;
  }
  out[gid] = in[source];
}

__kernel void hgr_layout_concat(__global const uint* in, __global uint* out, uint block, uint out_row,
                                uint out_offset, uint n) {
  size_t gid = get_global_id(0);
  if (gid >= n) return;
  uint i = (uint)gid;
  uint row = i / block;
  out[row * out_row + out_offset + (i - row * block)] = in[i];
}

/* The input index of output element i, or -1 when i lies in the padding. */
static int pad_source(__global const int* meta, uint i) {
  int ndim = meta[0];
  __global const int* out_shape = meta + 1;
  __global const int* before = meta + 1 + ndim;
  __global const int* in_shape = meta + 1 + 2 * ndim;
  int rest = (int)i;
  int source = 0, stride = 1;
  for (int d = ndim - 1; d >= 0; --d) {
    int next = rest / out_shape[d];
    int coord = rest - next * out_shape[d] - before[d];
    rest = next;
    if (coord < 0 || coord >= in_shape[d]) return -1;
    source += coord * stride;
    stride *= in_shape[d];
  }
  return source;
}

__kernel void hgr_layout_pad(__global const uint* in, __global uint* out, __global const int* meta, uint pad_bits,
                             uint n) {
  size_t gid = get_global_id(0);
  if (gid >= n) return;
  int source = pad_source(meta, (uint)gid);
  out[gid] = source < 0 ? pad_bits : in[source];
}

__kernel void hgr_layout_pad_input(__global const uint* in, __global const uint* pad_value, __global uint* out,
                                   __global const int* meta, uint n) {
  size_t gid = get_global_id(0);
  if (gid >= n) return;
  int source = pad_source(meta, (uint)gid);
  out[gid] = source < 0 ? pad_value[0] : in[source];
}

__kernel void hgr_layout_take(__global const uint* data, __global const int* indices, __global uint* out,
                              int axis_dim, int index_count, int inner, int wrap, uint n) {
  size_t gid = get_global_id(0);
  if (gid >= n) return;
  int i = (int)gid;
  int t = i / inner;
  int r = i - t * inner;
  int o = t / index_count;
  int j = t - o * index_count;
  int k = indices[j];
  if (wrap) {
    k %= axis_dim; /* C's remainder keeps the sign of k */
    if (k < 0) k += axis_dim;
  } else {
    k = clamp(k, 0, axis_dim - 1);
  }
  out[gid] = data[(o * axis_dim + k) * inner + r];
}
