/* Layout ops: they only move 4-byte elements (float32 or int32), so every kernel
 * works on uint and serves both dtypes. Indices are int: the plan checks that every
 * tensor has at most INT32_MAX elements.
 *
 * Every kernel is 1-D; all but hgr_layout_concat have one work-item per element of
 * what they write (global size = that count rounded up to the work-group size, so
 * each checks i < n first; n may be 0).
 *
 *   hgr_layout_copy(__global const uint* in, __global uint* out, uint n)
 *       out[i] = in[i]: reshape-likes whose output has its own storage.
 *   hgr_layout_gather(__global const uint* in, __global uint* out,
 *                     __global const int* meta, int ndim, uint n)
 *       meta = {offset, shape[ndim], stride[ndim]}: out[i] = in[offset + sum_d
 *       coord_d(i) * stride_d], coord_d(i) the row-major coordinates of i in shape
 *       (the output's, dims merged where possible); strides may be negative.
 *       transpose and strided_slice.
 *   hgr_layout_gather_runs(__global const uint* in, __global uint* out,
 *                          __global const int* meta, int ndim, int run, int step,
 *                          int chunk, int chunks, uint n)
 *       a gather whose last output dim walks the input at a positive step
 *       (transposes that keep it, slices of whole rows, a contiguous slice, slices
 *       that step along the last dim): see the kernel.
 *   hgr_layout_gather_tiles(__global const uint* in, __global uint* out,
 *                           __global const int* meta, int ndim, int inner, uint n)
 *       a gather whose last output dim is strided in the input and another is its
 *       contiguous one (transposes that move the input's last dim): 4 x 4 tiles.
 *   hgr_layout_concat(__global const uint* in0, in1, in2, in3, __global uint* out,
 *                     __global const int* meta)
 *       Up to CONCAT_INPUTS inputs per launch (unused pointers repeat in0), 1-D over
 *       the rows' chunks of 16: meta = {rows, out_row, inputs, block[4], offset[4]};
 *       input i's row r (block[i] elements) goes to out[r * out_row + offset[i] ...];
 *       work-item r * chunks + c, chunks = sum over i of ceil(block[i] / 16), copies
 *       one chunk of one input's row.
 *   hgr_layout_pad(__global const uint* in, __global uint* out,
 *                  __global const int* meta, uint pad_bits, uint n)
 *   hgr_layout_pad_input(__global const uint* in, __global const uint* pad_value,
 *                        __global uint* out, __global const int* meta, uint n)
 *       meta = {ndim, out_shape[ndim], before[ndim], in_shape[ndim]}; the pad value
 *       is the element's bits, as a scalar or as element 0 of a second input.
 *   hgr_layout_pad_mode(__global const uint* in, __global uint* out,
 *                       __global const int* meta, int reflect, uint n)
 *       meta as hgr_layout_pad's; a coordinate in the padding reads the nearest
 *       edge element (reflect 0) or its mirror image across the edge element
 *       (reflect 1; the plan keeps the widths below the extent).
 *   hgr_layout_tile(__global const uint* in, __global uint* out,
 *                   __global const int* meta, int ndim, uint n)
 *       meta = {out_shape[ndim], in_shape[ndim]}: out at coordinates c reads in at
 *       c_d % in_shape_d.
 *   hgr_layout_gather_elements(__global const uint* data, __global const int* indices,
 *                              __global uint* out, __global const int* meta,
 *                              int ndim, int axis, uint n)
 *       meta = {indices_shape[ndim], data_strides[ndim], axis_dim}: out[i] (shaped
 *       like the indices) reads data at i's coordinates with coordinate axis
 *       replaced by indices[i] (negative: + axis_dim; then clamped into the axis).
 *   hgr_layout_cumsum_f32(__global const float* in, __global float* out, int length,
 *                         int inner, int exclusive, int reverse, uint n)
 *   hgr_layout_cumsum_i32(__global const uint* in, __global uint* out, ...)
 *       One work-item per line (n = outer * inner lines): line (o, r) holds the
 *       elements (o * length + k) * inner + r for k < length, summed in order (from
 *       the end when reverse), each output leaving out its own element when
 *       exclusive. int32 adds as uint, so it wraps.
 *   hgr_layout_take(__global const uint* data, __global const int* indices,
 *                   __global uint* out, int axis_dim, int index_count, int inner,
 *                   int wrap, int outer)
 *       out[(o * index_count + j) * inner + r] = data[(o * axis_dim + k) * inner + r]
 *       with k = indices[j] wrapped (wrap != 0) or clipped into [0, axis_dim);
 *       NDRange 3-D (r / 8, j, o), 8 elements of a row per work-item, so no
 *       work-item divides (two integer divisions an element made an embedding
 *       lookup of 128 x 384 floats take 0.3 ms on PoCL, 0.017 ms now).
 *
 * gather also serves broadcast_to (stride 0 on repeated dims), depth_to_space and
 * space_to_depth (a 6-D view of the output).
 *
 * A remainder is written as x - (x / e) * e: for x % e next to x / e, LLVM emits a
 * `freeze` that Oclgrind 21.10's uninitialized-value checker cannot run.
 */

#include "select.h"

#if HGR_WANTED(hgr_layout_copy)
__kernel void hgr_layout_copy(__global const uint* in, __global uint* out, uint n) {
  size_t i = get_global_id(0);
  if (i < n) out[i] = in[i];
}
#endif

/* The reshape-likes' copy of tensors whose size is not a multiple of 4 bytes
 * (bool, int8, 16-bit types): n bytes. */
#if HGR_WANTED(hgr_layout_copy_bytes)
__kernel void hgr_layout_copy_bytes(__global const uchar* in, __global uchar* out, uint n) {
  size_t i = get_global_id(0);
  if (i < n) out[i] = in[i];
}
#endif

#if HGR_WANTED(hgr_layout_gather)
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
#endif

/* A gather (transpose, strided_slice) where the output's last (merged) dim walks the input
 * at a positive step: rows of `run` elements, each `step` apart in the input (1:
 * contiguous). meta = {offset, shape[ndim], stride[ndim]} of the rows (the output's
 * dims but the last); a work-item copies `chunk` elements of a row (a multiple of 4;
 * chunks per row = ceil(run / chunk), n = rows * chunks), as uint4s where the step
 * is 1. One index computation per chunk instead of one per element: 2-4x the gather
 * on PoCL for shufflenet's channel shuffles at 16, and resnet50's stride-2 slices
 * before its strided 1x1 convolutions (docs/ops.md). */
#if HGR_WANTED(hgr_layout_gather_runs)
__kernel void hgr_layout_gather_runs(__global const uint* in, __global uint* out, __global const int* meta, int ndim,
                                     int run, int step, int chunk, int chunks, uint n) {
  size_t gid = get_global_id(0);
  if (gid >= n) return;
  const int row = (int)gid / chunks, j0 = ((int)gid - row * chunks) * chunk;
  int rest = row;
  int source = meta[0];
  for (int d = ndim - 1; d >= 0; --d) {
    int extent = meta[1 + d];
    int next = rest / extent;
    source += (rest - next * extent) * meta[1 + ndim + d];
    rest = next;
  }
  __global const uint* src = in + source + (size_t)j0 * step;
  __global uint* dst = out + (size_t)row * run + j0;
  const int len = min(chunk, run - j0);
  int j = 0;
  if (step == 1)
    for (; j + 4 <= len; j += 4) vstore4(vload4(0, src + j), 0, dst + j);
  for (; j < len; ++j) dst[j] = src[(size_t)j * step];
}
#endif

/* A gather (transpose) whose last output dim is strided in the input while an earlier
 * output dim, `inner`, is the input's contiguous one: 4 x 4 tiles of (inner, last),
 * each read as four uint4 runs along the input's rows and written as four uint4 runs
 * of the output's, where gather divides per element and reads one float per stride
 * (a detector's [1, 4, 8400] boxes to [1, 8400, 4]: 69 -> 12-18 us on PoCL, docs/ops.md).
 * meta = {offset, shape[ndim], stride[ndim]} of the output's merged dims, stride[inner]
 * 1; n = the tiles (inner and the last dim counted in fours, rounded up). Tiles at the
 * edges copy what they hold element by element. */
#if HGR_WANTED(hgr_layout_gather_tiles)
__kernel void hgr_layout_gather_tiles(__global const uint* in, __global uint* out, __global const int* meta, int ndim,
                                      int inner, uint n) {
  size_t gid = get_global_id(0);
  if (gid >= n) return;
  const int last = ndim - 1;
  int rest = (int)gid, source = meta[0], target = 0, size = 1, inner_step = 0, i0 = 0, j0 = 0;
  for (int d = last; d >= 0; --d) {
    const int extent = meta[1 + d], tiled = d == inner || d == last;
    const int count = tiled ? (extent + 3) / 4 : extent;
    const int next = rest / count;
    const int coord = (rest - next * count) * (tiled ? 4 : 1);
    source += coord * meta[1 + ndim + d];
    target += coord * size;
    if (d == inner) {
      inner_step = size;
      i0 = coord;
    }
    if (d == last) j0 = coord;
    size *= extent;
    rest = next;
  }
  const int step = meta[1 + ndim + last], rows = min(4, meta[1 + inner] - i0), cols = min(4, meta[1 + last] - j0);
  __global const uint* src = in + source;
  __global uint* dst = out + target;
  if (rows == 4 && cols == 4) {
    /* Scalar loads gathered into vectors: Oclgrind 21.10's uninitialized-value
     * checker crashes on shuffles of loaded uint4s (the compiler makes its own). */
    __global const uint *s1 = src + step, *s2 = src + 2 * step, *s3 = src + 3 * step;
    for (int a = 0; a < 4; ++a) vstore4((uint4)(src[a], s1[a], s2[a], s3[a]), 0, dst + a * inner_step);
  } else {
    for (int a = 0; a < rows; ++a)
      for (int b = 0; b < cols; ++b) dst[a * inner_step + b] = src[a + b * step];
  }
}
#endif

#define CONCAT_INPUTS 4
#if HGR_WANTED(hgr_layout_concat)
__kernel void hgr_layout_concat(__global const uint* in0, __global const uint* in1, __global const uint* in2,
                                __global const uint* in3, __global uint* out, __global const int* meta) {
  const uint rows = (uint)meta[0], out_row = (uint)meta[1];
  const int inputs = meta[2];
  __global const int* blocks = meta + 3;
  __global const int* offsets = meta + 3 + CONCAT_INPUTS;
  uint chunks = 0;
  for (int i = 0; i < inputs; ++i) chunks += ((uint)blocks[i] + 15) / 16;
  const size_t item = get_global_id(0);
  if (chunks == 0 || item >= (size_t)chunks * rows) return;
  const uint row = (uint)(item / chunks);
  uint chunk = (uint)(item - (size_t)row * chunks);
  /* the input whose chunks hold this one */
  int i = 0;
  while (chunk >= ((uint)blocks[i] + 15) / 16) chunk -= ((uint)blocks[i++] + 15) / 16;
  __global const uint* in = i == 0 ? in0 : i == 1 ? in1 : i == 2 ? in2 : in3;
  const uint block = (uint)blocks[i], col = chunk * 16;
  __global const uint* from = in + (size_t)row * block + col;
  __global uint* to = out + (size_t)row * out_row + (uint)offsets[i] + col;
  if (block - col >= 16) {
    vstore16(vload16(0, from), 0, to);
    return;
  }
  for (uint k = 0; k < block - col; ++k) to[k] = from[k];
}
#endif

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

#if HGR_WANTED(hgr_layout_pad)
__kernel void hgr_layout_pad(__global const uint* in, __global uint* out, __global const int* meta, uint pad_bits,
                             uint n) {
  size_t gid = get_global_id(0);
  if (gid >= n) return;
  int source = pad_source(meta, (uint)gid);
  out[gid] = source < 0 ? pad_bits : in[source];
}
#endif

#if HGR_WANTED(hgr_layout_pad_input)
__kernel void hgr_layout_pad_input(__global const uint* in, __global const uint* pad_value, __global uint* out,
                                   __global const int* meta, uint n) {
  size_t gid = get_global_id(0);
  if (gid >= n) return;
  int source = pad_source(meta, (uint)gid);
  out[gid] = source < 0 ? pad_value[0] : in[source];
}
#endif

#if HGR_WANTED(hgr_layout_take)
__kernel void hgr_layout_take(__global const uint* data, __global const int* indices, __global uint* out,
                              int axis_dim, int index_count, int inner, int wrap, int outer) {
  int r = (int)get_global_id(0) * 8, j = (int)get_global_id(1), o = (int)get_global_id(2);
  if (r >= inner || j >= index_count || o >= outer) return;
  int k = indices[j];
  if (wrap) {
    k %= axis_dim; /* C's remainder keeps the sign of k */
    if (k < 0) k += axis_dim;
  } else {
    k = clamp(k, 0, axis_dim - 1);
  }
  __global const uint* from = data + ((size_t)o * axis_dim + k) * inner + r;
  __global uint* to = out + ((size_t)o * index_count + j) * inner + r;
  if (r + 8 <= inner) vstore8(vload8(0, from), 0, to);
  else for (int e = 0; e < inner - r; ++e) to[e] = from[e];
}
#endif

#if HGR_WANTED(hgr_layout_pad_mode)
__kernel void hgr_layout_pad_mode(__global const uint* in, __global uint* out, __global const int* meta, int reflect,
                                  uint n) {
  size_t gid = get_global_id(0);
  if (gid >= n) return;
  int ndim = meta[0];
  __global const int* out_shape = meta + 1;
  __global const int* before = meta + 1 + ndim;
  __global const int* in_shape = meta + 1 + 2 * ndim;
  int rest = (int)gid;
  int source = 0, stride = 1;
  for (int d = ndim - 1; d >= 0; --d) {
    int next = rest / out_shape[d];
    int coord = rest - next * out_shape[d] - before[d];
    rest = next;
    int last = in_shape[d] - 1;
    if (reflect) {
      /* One select over three arms: `coord < 0 ? -coord : coord` alone becomes
       * llvm.abs, which Oclgrind 21.10 cannot run. */
      coord = coord < 0 ? -coord : coord > last ? 2 * last - coord : coord;
    } else {
      coord = clamp(coord, 0, last);
    }
    source += coord * stride;
    stride *= in_shape[d];
  }
  out[gid] = in[source];
}
#endif

#if HGR_WANTED(hgr_layout_tile)
__kernel void hgr_layout_tile(__global const uint* in, __global uint* out, __global const int* meta, int ndim,
                              uint n) {
  size_t gid = get_global_id(0);
  if (gid >= n) return;
  int rest = (int)gid;
  int source = 0, stride = 1;
  for (int d = ndim - 1; d >= 0; --d) {
    int extent = meta[d], in_extent = meta[ndim + d];
    int next = rest / extent;
    int coord = rest - next * extent;
    rest = next;
    int wrapped = coord / in_extent;
    source += (coord - wrapped * in_extent) * stride;
    stride *= in_extent;
  }
  out[gid] = in[source];
}
#endif

#if HGR_WANTED(hgr_layout_gather_elements)
__kernel void hgr_layout_gather_elements(__global const uint* data, __global const int* indices, __global uint* out,
                                         __global const int* meta, int ndim, int axis, uint n) {
  size_t gid = get_global_id(0);
  if (gid >= n) return;
  int axis_dim = meta[2 * ndim];
  int k = indices[gid];
  if (k < 0) k += axis_dim;
  k = clamp(k, 0, axis_dim - 1);
  int rest = (int)gid;
  int source = 0;
  for (int d = ndim - 1; d >= 0; --d) {
    int extent = meta[d];
    int next = rest / extent;
    int coord = rest - next * extent;
    rest = next;
    source += (d == axis ? k : coord) * meta[ndim + d];
  }
  out[gid] = data[source];
}
#endif

#if HGR_WANTED(hgr_layout_cumsum_f32)
__kernel void hgr_layout_cumsum_f32(__global const float* in, __global float* out, int length, int inner,
                                    int exclusive, int reverse, uint n) {
  size_t gid = get_global_id(0);
  if (gid >= n) return;
  int line = (int)gid;
  int o = line / inner;
  int r = line - o * inner;
  int base = o * length * inner + r;
  float sum = 0.0f;
  for (int k = 0; k < length; ++k) {
    int at = base + (reverse ? length - 1 - k : k) * inner;
    float value = in[at];
    if (exclusive) {
      out[at] = sum;
      sum += value;
    } else {
      sum += value;
      out[at] = sum;
    }
  }
}
#endif

#if HGR_WANTED(hgr_layout_cumsum_i32)
__kernel void hgr_layout_cumsum_i32(__global const uint* in, __global uint* out, int length, int inner,
                                    int exclusive, int reverse, uint n) {
  size_t gid = get_global_id(0);
  if (gid >= n) return;
  int line = (int)gid;
  int o = line / inner;
  int r = line - o * inner;
  int base = o * length * inner + r;
  uint sum = 0u;
  for (int k = 0; k < length; ++k) {
    int at = base + (reverse ? length - 1 - k : k) * inner;
    uint value = in[at];
    if (exclusive) {
      out[at] = sum;
      sum += value;
    } else {
      sum += value;
      out[at] = sum;
    }
  }
}
#endif
