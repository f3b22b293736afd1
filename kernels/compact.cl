/* Ops whose output size depends on the data (runtime/ops/ops_compact.c): nonzero,
 * compress and unique. Each writes its data-dependent outputs compactly, as the
 * tensor of the actual shape would lie row-major, in the first elements of a buffer
 * declared at a capacity shape, zeros over the rest; the count n goes to the op's
 * last output (int32, shape []).
 *
 * The node's scratch holds ints: [0] is n, then lists the launches hand on (below).
 * Single-group kernels (NDRange 1-D, global = local = L, any L the plan takes from
 * the device's limits) loop over their input in chunks of L, with a work-group
 * prefix sum per chunk in `tmp` (__local uint[L]); every work-item runs every chunk
 * (no early return: every barrier is reached by the whole group). The other kernels
 * take one work-item per element, NDRange 1-D, global >= the count they are given.
 *
 *   hgr_compact_select_u32(__global const uint* in, uint mask, uint length,
 *                          __global int* scratch, __global int* count, __local uint* tmp)
 *   hgr_compact_select_u8(__global const uchar* in, ...)
 *       Single group. Element k < length is selected when in[k] & mask is not 0
 *       (float32: mask 0x7fffffff, so -0.0 is zero and NaN is not; int32 ~0; bool
 *       0xff). scratch[1 + j] = the j-th selected k, in order; scratch[0] and
 *       count[0] = n.
 *   hgr_compact_nonzero_coords(__global const int* scratch, __global int* out,
 *                              __global const int* meta, int rank, uint total)
 *       out [rank, cap] (total = rank * cap elements): element e = r * n + i < rank * n
 *       is coordinate r of the flat index scratch[1 + i]; the rest 0. meta = {strides
 *       [rank], shape[rank]} of the input.
 *   hgr_compact_compress_u32(__global const uint* x, __global const int* scratch,
 *                            __global uint* out, uint outer, uint extent, uint inner,
 *                            uint total)
 *   hgr_compact_compress_u8(__global const uchar* x, ..., __global uchar* out, ...)
 *       x viewed [outer, extent, inner], out [outer, cap, inner] (total elements):
 *       the first outer * n * inner are [outer, n, inner] with slice j = x's slice
 *       scratch[1 + j]; the rest 0.
 *
 * unique: x [outer, extent, inner] (flattened: [1, count, 1]) is `extent` items,
 * each a slice of `slice` = outer * inner values, compared in row-major order of the
 * slice by keys (int32: the bits with the sign flipped; float32: -0.0 as +0.0, every
 * NaN as one value above +inf, then the IEEE total-order map) so that uints order as
 * the values do. Ties between equal items go by index, so the sort is stable. The
 * scratch lists, at the offsets given (the plan's layout): perm [P] (P = the power
 * of two >= extent), group [extent] (each item's group: its rank among the distinct
 * items in ascending order), start [extent + 1] (group g's first position in perm;
 * start[n] = extent), final [extent] (group g's output position), group_of [extent]
 * (output position j's group).
 *   hgr_compact_unique_init(__global int* scratch, uint perm, uint padded)
 *       perm[i] = i for i < P (padded).
 *   hgr_compact_unique_sort(__global const uint* x, int is_float, uint extent,
 *                           uint inner, uint slice, __global int* scratch, uint perm,
 *                           uint block, uint stride, uint pairs)
 *       One bitonic merge step over perm (pairs = P / 2 work-items): items past the
 *       extent sort last.
 *   hgr_compact_unique_groups(x, is_float, extent, inner, slice, scratch, uint perm,
 *                             uint group, uint start, __global int* count, __local uint* tmp)
 *       Single group. Groups of equal neighbours in perm: group and start, n.
 *   hgr_compact_unique_order(__global int* scratch, uint extent, uint perm, uint group,
 *                            uint start, uint final, uint group_of, int sorted,
 *                            __local uint* tmp)
 *       Single group. An item is its group's first occurrence when it heads the
 *       group in perm (the sort is stable); output position j = the group (sorted) or
 *       the number of first occurrences before it (by first occurrence).
 *   hgr_compact_unique_write(x, scratch, __global uint* y, __global int* indices,
 *                            __global int* inverse, __global int* counts, uint outer,
 *                            uint extent, uint inner, uint cap, uint y_total, uint n_total,
 *                            uint perm, uint group, uint start, uint final, uint group_of)
 *       Element e < n_total: y (y_total elements, [outer, cap, inner], compact as
 *       [outer, n, inner]), indices and counts (cap, compact n), inverse (extent).
 *
 * A remainder is written x - (x / y) * y (LLVM's `freeze` after x % y next to x / y
 * stops Oclgrind 21.10's uninitialized-value checker).
 */

#include "select.h"

/* The inclusive prefix sum of value over the work-group, and the group's total in
 * *out_total. Every work-item of the group must call it (barriers); tmp: __local
 * uint[local size]. */
uint hgr_compact_group_scan(__local uint* tmp, uint value, uint* out_total) {
  uint lid = get_local_id(0), size = get_local_size(0);
  tmp[lid] = value;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint offset = 1; offset < size; offset <<= 1) {
    uint add = lid >= offset ? tmp[lid - offset] : 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    tmp[lid] += add;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  uint inclusive = tmp[lid];
  *out_total = tmp[size - 1];
  /* everyone has read tmp before the next call overwrites it */
  barrier(CLK_LOCAL_MEM_FENCE);
  return inclusive;
}

#define HGR_COMPACT_SELECT(name, type)                                                                       \
  HGR_KERNEL_IF(name, __kernel void name(__global const type* in, uint mask, uint length, __global int* scratch, \
                                         __global int* count, __local uint* tmp) {                          \
    uint lid = get_local_id(0), size = get_local_size(0), running = 0u;                                     \
    for (uint base = 0u; base < length; base += size) {                                                     \
      uint k = base + lid;                                                                                  \
      uint selected = 0u;                                                                                   \
      if (k < length) selected = (((uint)in[k]) & mask) != 0u ? 1u : 0u;                                    \
      uint total;                                                                                           \
      uint inclusive = hgr_compact_group_scan(tmp, selected, &total);                                       \
      if (selected) scratch[running + inclusive] = (int)k; /* 1 + (running + inclusive - 1) */              \
      running += total;                                                                                     \
    }                                                                                                       \
    if (lid == 0u) {                                                                                        \
      scratch[0] = (int)running;                                                                            \
      count[0] = (int)running;                                                                              \
    }                                                                                                       \
  })

HGR_COMPACT_SELECT(hgr_compact_select_u32, uint)
HGR_COMPACT_SELECT(hgr_compact_select_u8, uchar)

#if HGR_WANTED(hgr_compact_nonzero_coords)
__kernel void hgr_compact_nonzero_coords(__global const int* scratch, __global int* out, __global const int* meta,
                                         int rank, uint total) {
  uint e = (uint)get_global_id(0);
  if (e >= total) return;
  uint n = (uint)scratch[0];
  int value = 0;
  if (e < (uint)rank * n) {
    uint r = e / n, i = e - r * n;
    int flat = scratch[1 + i];
    int coordinate = flat / meta[r];
    value = coordinate - (coordinate / meta[rank + r]) * meta[rank + r];
  }
  out[e] = value;
}
#endif

#define HGR_COMPACT_COMPRESS(name, type)                                                                   \
  HGR_KERNEL_IF(name, __kernel void name(__global const type* x, __global const int* scratch,              \
                                         __global type* out, uint outer, uint extent, uint inner,         \
                                         uint total) {                                                    \
    uint e = (uint)get_global_id(0);                                                                      \
    if (e >= total) return;                                                                               \
    uint n = (uint)scratch[0];                                                                            \
    type value = (type)0;                                                                                 \
    uint row = n * inner;                                                                                 \
    if (row > 0u) {                                                                                       \
      uint o = e / row;                                                                                   \
      if (o < outer) {                                                                                    \
        uint rest = e - o * row;                                                                          \
        uint j = rest / inner, r = rest - j * inner;                                                      \
        value = x[(o * extent + (uint)scratch[1 + j]) * inner + r];                                       \
      }                                                                                                   \
    }                                                                                                     \
    out[e] = value;                                                                                       \
  })

HGR_COMPACT_COMPRESS(hgr_compact_compress_u32, uint)
HGR_COMPACT_COMPRESS(hgr_compact_compress_u8, uchar)

/* ---- unique ---------------------------------------------------------------------------- */

/* A value's key: uints order as the values do (above). */
uint hgr_compact_key(uint bits, int is_float) {
  if (!is_float) return bits ^ 0x80000000u;
  uint magnitude = bits & 0x7fffffffu;
  if (magnitude == 0u) bits = 0u;                       /* -0.0 is 0.0 */
  else if (magnitude > 0x7f800000u) bits = 0x7fc00000u; /* one NaN, above +inf */
  return (bits & 0x80000000u) ? ~bits : bits ^ 0x80000000u;
}

/* Item a against item b: -1, 0 or 1. */
int hgr_compact_compare(__global const uint* x, int is_float, uint extent, uint inner, uint slice, uint a, uint b) {
  for (uint s = 0u; s < slice; ++s) {
    uint o = s / inner, r = s - o * inner;
    uint ka = hgr_compact_key(x[(o * extent + a) * inner + r], is_float);
    uint kb = hgr_compact_key(x[(o * extent + b) * inner + r], is_float);
    if (ka != kb) return ka < kb ? -1 : 1;
  }
  return 0;
}

#if HGR_WANTED(hgr_compact_unique_init)
__kernel void hgr_compact_unique_init(__global int* scratch, uint perm, uint padded) {
  uint i = (uint)get_global_id(0);
  if (i < padded) scratch[perm + i] = (int)i;
}
#endif

#if HGR_WANTED(hgr_compact_unique_sort)
__kernel void hgr_compact_unique_sort(__global const uint* x, int is_float, uint extent, uint inner, uint slice,
                                      __global int* scratch, uint perm, uint block, uint stride, uint pairs) {
  uint t = (uint)get_global_id(0);
  if (t >= pairs) return;
  uint pair = t / stride;
  uint i = pair * 2u * stride + (t - pair * stride), l = i + stride;
  bool ascending = (i & block) == 0u;
  uint a = (uint)scratch[perm + i], b = (uint)scratch[perm + l];
  /* b before a? Items past the extent (padding) come last; ties by index */
  bool b_first = b < a;
  if (a < extent && b < extent) {
    int order = hgr_compact_compare(x, is_float, extent, inner, slice, b, a);
    if (order) b_first = order < 0;
  }
  if (b_first == ascending) {
    scratch[perm + i] = (int)b;
    scratch[perm + l] = (int)a;
  }
}
#endif

#if HGR_WANTED(hgr_compact_unique_groups)
__kernel void hgr_compact_unique_groups(__global const uint* x, int is_float, uint extent, uint inner, uint slice,
                                        __global int* scratch, uint perm, uint group, uint start,
                                        __global int* count, __local uint* tmp) {
  uint lid = get_local_id(0), size = get_local_size(0), running = 0u;
  for (uint base = 0u; base < extent; base += size) {
    uint p = base + lid;
    uint heads = 0u, item = 0u;
    if (p < extent) {
      item = (uint)scratch[perm + p];
      heads = p == 0u || hgr_compact_compare(x, is_float, extent, inner, slice, (uint)scratch[perm + p - 1u],
                                             item) != 0 ? 1u : 0u;
    }
    uint total;
    uint inclusive = hgr_compact_group_scan(tmp, heads, &total);
    if (p < extent) {
      uint g = running + inclusive - 1u;
      scratch[group + item] = (int)g;
      if (heads) scratch[start + g] = (int)p;
    }
    running += total;
  }
  if (lid == 0u) {
    scratch[start + running] = (int)extent;
    scratch[0] = (int)running;
    count[0] = (int)running;
  }
}
#endif

#if HGR_WANTED(hgr_compact_unique_order)
__kernel void hgr_compact_unique_order(__global int* scratch, uint extent, uint perm, uint group, uint start,
                                       uint final, uint group_of, int sorted, __local uint* tmp) {
  uint lid = get_local_id(0), size = get_local_size(0), running = 0u;
  for (uint base = 0u; base < extent; base += size) {
    uint k = base + lid;
    uint first = 0u, g = 0u;
    if (k < extent) {
      g = (uint)scratch[group + k];
      first = (uint)scratch[perm + (uint)scratch[start + g]] == k ? 1u : 0u;
    }
    uint total;
    uint inclusive = hgr_compact_group_scan(tmp, first, &total);
    if (first) {
      uint j = sorted ? g : running + inclusive - 1u;
      scratch[final + g] = (int)j;
      scratch[group_of + j] = (int)g;
    }
    running += total;
  }
}
#endif

#if HGR_WANTED(hgr_compact_unique_write)
__kernel void hgr_compact_unique_write(__global const uint* x, __global const int* scratch, __global uint* y,
                                       __global int* indices, __global int* inverse, __global int* counts,
                                       uint outer, uint extent, uint inner, uint cap, uint y_total, uint n_total,
                                       uint perm, uint group, uint start, uint final, uint group_of) {
  uint e = (uint)get_global_id(0);
  if (e >= n_total) return;
  uint n = (uint)scratch[0];
  if (e < y_total) {
    uint value = 0u, row = n * inner;
    if (row > 0u) {
      uint o = e / row;
      if (o < outer) {
        uint rest = e - o * row;
        uint j = rest / inner, r = rest - j * inner;
        uint g = (uint)scratch[group_of + j];
        uint item = (uint)scratch[perm + (uint)scratch[start + g]];
        value = x[(o * extent + item) * inner + r];
      }
    }
    y[e] = value;
  }
  if (e < cap) {
    int first = 0, members = 0;
    if (e < n) {
      uint g = (uint)scratch[group_of + e];
      first = scratch[perm + (uint)scratch[start + g]];
      members = scratch[start + g + 1u] - scratch[start + g];
    }
    indices[e] = first;
    counts[e] = members;
  }
  if (e < extent) inverse[e] = scratch[final + (uint)scratch[group + e]];
}
#endif
