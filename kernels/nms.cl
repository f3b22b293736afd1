/* ONNX NonMaxSuppression (runtime/ops/ops_nms.c), as ONNX Runtime's CPU kernel
 * computes it, in three launches.
 *
 * Shapes (B batches, C classes, N boxes, G = B * C groups (batch, class), K =
 * min(max_output_boxes_per_class, N)):
 *   boxes      [B, N, 4] float: [y1, x1, y2, x2] (any diagonal pair of corners) or,
 *              with NMS_CENTER_POINT, [x_center, y_center, width, height]
 *   scores     [B, C, N] float
 *   selected   [rows, 3] int, rows = max(1, G K): (batch, class, box) for the first
 *              n rows, zeros after
 *   count      [] int: n
 *   scratch    the node's (float units, each part's offset from hgr_nms_layout):
 *              keys [G, 2, N] ulong (the sort's, two halves), corners [G, K] float4 (each group's
 *              selected boxes as x_min, y_min, x_max, y_max), index [G, K] uint (their
 *              box indices), counts [G] uint, offsets [G + 1] uint (the exclusive scan
 *              of counts, then n)
 *
 *   hgr_nms_select(__global const float* boxes, __global const float* scores,
 *                  __global float* scratch, __local float* corners, __local uint* words,
 *                  uint batch, uint classes, uint box_count, uint keep,
 *                  uint flags, float iou_threshold, float score_threshold)
 *       One work-group per group g = b * C + c: NDRange 1-D, global = G * L (L when G
 *       is 0), any local size L up to 256; `corners` holds 4 L floats, `words` L (1 +
 *       ceil(L / 32)) + 2 uints. The group (1) writes its candidates' keys (score
 *       > score_threshold with NMS_SCORE_THRESHOLD, else every score but NaN) to
 *       its row of keys, in any order (a local atomic counter); (2) sorts them
 *       ascending in global memory: runs of NMS_RUN by insertion, then merge rounds
 *       between the row's two halves, each work-item merging its slice of the output
 *       from where its merge path crosses it (a binary search), O(M log M) for M
 *       candidates; a key is the score's bits made to order descending, then the
 *       box index, so that equal scores take the lower index first; (3) walks the sorted
 *       candidates in blocks of L: each work-item tests its candidate against the
 *       boxes already selected, then against the earlier candidates of its block
 *       (a bit mask per candidate, in local memory), and work-item 0 takes the block's
 *       candidates in order, each unless suppressed or when K are taken. It ends
 *       writing its count.
 *   hgr_nms_offsets(__global float* scratch, __global int* count, __local uint* sums,
 *                   uint batch, uint classes, uint box_count, uint keep)
 *       One work-group (global = local = L, any L; `sums` holds L uints): the exclusive
 *       scan of the counts into offsets, offsets[G] = n, and count = n.
 *   hgr_nms_gather(__global const float* scratch, __global int* selected, uint batch,
 *                  uint classes, uint box_count, uint keep, uint rows)
 *       One work-item per row of selected (global >= rows): the group whose offsets
 *       hold the row (a binary search) and its box, or zeros past n.
 *
 * Suppression is ONNX Runtime's SuppressByIOU, to the float: the corners of a box
 * ([y1, x1, y2, x2]: min and max of each pair; centers: center -/+ half the extent),
 * its intersection with the other (none when either extent is <= 0), areas, union,
 * and IoU = intersection / union > iou_threshold, false when an area or the union is
 * <= 0. FP_CONTRACT is off in both functions (not file-wide: the sources share one
 * program) so that no product is fused into a sum. Indices are uint
 * (the plan checks the scratch's size against INT32_MAX floats). No x % y beside
 * x / y: LLVM pairs them with a `freeze`, which Oclgrind 21.10's uninitialized-value
 * checker cannot run; a remainder is x - (x / y) * y. No work-item of
 * hgr_nms_select returns early: PoCL 3.1 miscompiles a return before barriers. */

#include "select.h"

#define NMS_CENTER_POINT 1u    /* boxes as [x_center, y_center, width, height] */
#define NMS_SCORE_THRESHOLD 2u /* only scores > score_threshold are candidates */
#define NMS_MASK_WORDS_MAX 8u  /* local sizes up to 256 */
#define NMS_RUN 8u             /* keys sorted by insertion before the merge rounds */

/* Offsets (in floats) of the scratch's parts. */
typedef struct hgr_nms_layout_t {
  uint corners, index, counts, offsets;
} hgr_nms_layout_t;

hgr_nms_layout_t hgr_nms_layout(uint groups, uint box_count, uint keep) {
  hgr_nms_layout_t layout;
  layout.corners = 4u * groups * box_count;
  layout.index = layout.corners + 4u * groups * keep;
  layout.counts = layout.index + groups * keep;
  layout.offsets = layout.counts + groups;
  return layout;
}

/* std::max and std::min as ONNX Runtime calls them (the same answer for NaN). */
float hgr_nms_max(float a, float b) { return a < b ? b : a; }
float hgr_nms_min(float a, float b) { return b < a ? b : a; }

/* A box's x_min, y_min, x_max, y_max, as ONNX Runtime's MaxMin and half extents. */
float4 hgr_nms_corners(__global const float* box, uint flags) {
#pragma OPENCL FP_CONTRACT OFF
  float4 c;
  if (flags & NMS_CENTER_POINT) {
    float half_width = box[2] * 0.5f, half_height = box[3] * 0.5f;
    c = (float4)(box[0] - half_width, box[1] - half_height, box[0] + half_width, box[1] + half_height);
  } else {
    int x_ordered = box[1] >= box[3], y_ordered = box[0] >= box[2];
    c.x = x_ordered ? box[3] : box[1];
    c.z = x_ordered ? box[1] : box[3];
    c.y = y_ordered ? box[2] : box[0];
    c.w = y_ordered ? box[0] : box[2];
  }
  return c;
}

/* Whether the candidate a is suppressed by the selected b (SuppressByIOU). */
int hgr_nms_suppresses(float4 a, float4 b, float iou_threshold) {
#pragma OPENCL FP_CONTRACT OFF
  float x_min = hgr_nms_max(a.x, b.x), x_max = hgr_nms_min(a.z, b.z);
  if (x_max <= x_min) return 0;
  float y_min = hgr_nms_max(a.y, b.y), y_max = hgr_nms_min(a.w, b.w);
  if (y_max <= y_min) return 0;
  float intersection = (x_max - x_min) * (y_max - y_min);
  if (intersection <= 0.0f) return 0;
  float area_a = (a.z - a.x) * (a.w - a.y), area_b = (b.z - b.x) * (b.w - b.y);
  float union_area = area_a + area_b - intersection;
  if (area_a <= 0.0f || area_b <= 0.0f || union_area <= 0.0f) return 0;
  return intersection / union_area > iou_threshold;
}

/* The sort key of box `index` scored `score`: ascending keys give descending scores,
 * equal scores ascending indices (-0 and +0 are one score). */
ulong hgr_nms_key(float score, uint index) {
  uint bits = as_uint(score == 0.0f ? 0.0f : score);
  uint ordered = (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
  return ((ulong)(~ordered) << 32) | (ulong)index;
}

#if HGR_WANTED(hgr_nms_select)
__kernel void hgr_nms_select(__global const float* boxes, __global const float* scores, __global float* scratch,
                             __local float* corners, __local uint* words, uint batch, uint classes, uint box_count,
                             uint keep, uint flags, float iou_threshold, float score_threshold) {
  uint groups = batch * classes, group = get_group_id(0), lid = get_local_id(0), size = get_local_size(0);
  uint mask_words = (size + 31u) / 32u;
  hgr_nms_layout_t layout = hgr_nms_layout(groups, box_count, keep);
  /* A group past the last (only when there are none) has no boxes and takes none. */
  int valid = group < groups;
  uint g = valid ? group : 0u, b = valid ? group / classes : 0u;
  uint n = valid ? box_count : 0u, limit = valid ? keep : 0u;
  __global ulong* keys = (__global ulong*)scratch + g * 2u * box_count;
  __global const float* group_scores = scores + g * box_count;
  __global const float* batch_boxes = boxes + b * box_count * 4u;
  __global float* chosen_corners = scratch + layout.corners + g * keep * 4u;
  __global uint* chosen_index = (__global uint*)(scratch + layout.index) + g * keep;
  __local uint* suppressed = words;                 /* [L] */
  __local uint* masks = words + size;               /* [L][mask_words]: earlier candidates that suppress it */
  __local uint* shared = masks + size * mask_words; /* candidate count, selected count */

  if (lid == 0) shared[0] = shared[1] = 0u;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint i = lid; i < n; i += size) {
    float score = group_scores[i];
    int candidate = (flags & NMS_SCORE_THRESHOLD) ? score > score_threshold : !isnan(score);
    if (candidate) keys[atomic_inc(&shared[0])] = hgr_nms_key(score, i);
  }
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  uint count = shared[0];
  /* Sort: runs of NMS_RUN keys by insertion, one per work-item at a time, then
   * rounds that merge pairs of runs into the other half of the row, each work-item
   * writing its slice of the merged keys from where its merge path starts. */
  for (uint run = lid; run * NMS_RUN < count; run += size) {
    uint first = run * NMS_RUN, last = min(first + NMS_RUN, count);
    for (uint i = first + 1u; i < last; ++i) {
      ulong key = keys[i];
      uint j = i;
      for (; j > first && keys[j - 1u] > key; --j) keys[j] = keys[j - 1u];
      keys[j] = key;
    }
  }
  barrier(CLK_GLOBAL_MEM_FENCE);
  __global ulong* sorted = keys;
  __global ulong* other = keys + box_count;
  uint slice = (count + size - 1u) / size;
  for (uint width = NMS_RUN; width < count; width <<= 1) {
    uint out = min(lid * slice, count), end = min(out + slice, count);
    while (out < end) {
      uint a = out / (2u * width) * (2u * width), b = min(a + width, count), b_end = min(b + width, count);
      /* How many of the first d merged keys come from run a. (Not from max(0, d -
       * (b_end - b)) up: LLVM makes that a llvm.usub.sat, which Oclgrind 21.10 lacks.) */
      uint d = out - a, low = 0u, high = min(d, b - a);
      while (low < high) {
        uint middle = (low + high) >> 1, from_b = d - 1u - middle;
        if (from_b >= b_end - b || sorted[a + middle] < sorted[b + from_b])
          low = middle + 1u;
        else
          high = middle;
      }
      uint i = a + low, j = b + d - low, stop = min(end, b_end);
      for (; out < stop; ++out) {
        int from_a = j >= b_end || (i < b && sorted[i] < sorted[j]);
        other[out] = from_a ? sorted[i++] : sorted[j++];
      }
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
    __global ulong* swap = sorted;
    sorted = other;
    other = swap;
  }

  uint taken = 0u;
  for (uint first = 0u; first < count && taken < limit; first += size) {
    uint j = first + lid;
    int live = j < count;
    float4 box = live ? hgr_nms_corners(batch_boxes + (uint)sorted[j] * 4u, flags) : (float4)(0.0f);
    int out = !live;
    for (uint s = 0u; s < taken && !out; ++s) out = hgr_nms_suppresses(box, vload4(s, chosen_corners), iou_threshold);
    vstore4(box, lid, corners);
    suppressed[lid] = (uint)out;
    for (uint w = 0u; w < mask_words; ++w) masks[lid * mask_words + w] = 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (!out)
      for (uint k = 0u; k < lid; ++k)
        if (!suppressed[k] && hgr_nms_suppresses(box, vload4(k, corners), iou_threshold))
          masks[lid * mask_words + (k >> 5)] |= 1u << (k & 31u);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0u) {
      uint chosen[NMS_MASK_WORDS_MAX] = {0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u};
      uint now = shared[1];
      for (uint q = 0u; q < size && first + q < count && now < limit; ++q) {
        if (suppressed[q]) continue;
        uint hit = 0u;
        for (uint w = 0u; w <= q >> 5; ++w) hit |= masks[q * mask_words + w] & chosen[w];
        if (hit) continue;
        chosen[q >> 5] |= 1u << (q & 31u);
        chosen_index[now] = (uint)sorted[first + q];
        vstore4(vload4(q, corners), now, chosen_corners);
        ++now;
      }
      shared[1] = now;
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    taken = shared[1];
  }
  if (lid == 0u && valid) ((__global uint*)(scratch + layout.counts))[g] = taken;
}
#endif

#if HGR_WANTED(hgr_nms_offsets)
__kernel void hgr_nms_offsets(__global float* scratch, __global int* count, __local uint* sums, uint batch,
                              uint classes, uint box_count, uint keep) {
  uint groups = batch * classes, lid = get_local_id(0), size = get_local_size(0);
  hgr_nms_layout_t layout = hgr_nms_layout(groups, box_count, keep);
  __global const uint* counts = (__global const uint*)(scratch + layout.counts);
  __global uint* offsets = (__global uint*)(scratch + layout.offsets);
  uint carry = 0u;
  for (uint first = 0u; first < groups; first += size) {
    uint value = first + lid < groups ? counts[first + lid] : 0u;
    sums[lid] = value;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint step = 1u; step < size; step <<= 1) { /* inclusive scan (Hillis and Steele) */
      uint add = lid >= step ? sums[lid - step] : 0u;
      barrier(CLK_LOCAL_MEM_FENCE);
      sums[lid] += add;
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (first + lid < groups) offsets[first + lid] = carry + sums[lid] - value;
    carry += sums[size - 1u];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0u) {
    offsets[groups] = carry;
    count[0] = (int)carry;
  }
}
#endif

#if HGR_WANTED(hgr_nms_gather)
__kernel void hgr_nms_gather(__global const float* scratch, __global int* selected, uint batch, uint classes,
                             uint box_count, uint keep, uint rows) {
  uint row = get_global_id(0), groups = batch * classes;
  if (row >= rows) return;
  hgr_nms_layout_t layout = hgr_nms_layout(groups, box_count, keep);
  __global const uint* offsets = (__global const uint*)(scratch + layout.offsets);
  int3 value = (int3)(0);
  if (row < offsets[groups]) {
    uint low = 0u, high = groups; /* the last group whose offset is <= row */
    while (high - low > 1u) {
      uint middle = low + (high - low) / 2u;
      if (offsets[middle] <= row)
        low = middle;
      else
        high = middle;
    }
    uint box = ((__global const uint*)(scratch + layout.index))[low * keep + row - offsets[low]];
    uint b = low / classes;
    value = (int3)((int)b, (int)(low - b * classes), (int)box);
  }
  vstore3(value, row, selected);
}
#endif
