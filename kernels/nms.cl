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
 *       is 0), any local size L; `corners` holds 4 L floats, `words` 2 L + 2 uints.
 *       The group (1) writes its candidates' keys (score > score_threshold with
 *       NMS_SCORE_THRESHOLD, else every score but NaN) to its row of keys, each
 *       work-item those of its slice of the scores from its slot (a count, then a
 *       scan); (2) sorts them ascending in global memory: runs of NMS_RUN by
 *       insertion (one run when there are at most NMS_SMALL), then merge rounds
 *       between the row's two halves, each work-item merging its slice of the output
 *       (at least NMS_SLICE keys) from where its merge path crosses it (a binary
 *       search), O(M log M) for M candidates; a key is the score's bits made to order
 *       descending, then the box index, so that equal scores take the lower index
 *       first; (3) walks the sorted candidates in blocks of L: each work-item tests
 *       its candidate against the boxes already selected, and work-item 0 takes the
 *       block's survivors in order, each unless a box it took earlier in the block
 *       suppresses it, until K are taken. It ends writing its count. PoCL runs a
 *       work-group's items one after another between barriers, so the group does
 *       little per barrier and per idle work-item (the plan keeps L small).
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
#define NMS_RUN 8u             /* keys sorted by insertion before the merge rounds */
#define NMS_SMALL 64u          /* up to this many keys: one run, no merge rounds */
#define NMS_SLICE 32u          /* the fewest keys a work-item merges in a round */
#define NMS_NO_KEY 0xffffffffffffffffUL /* above every key */

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

/* Whether a box scoring `score` is a candidate. */
uint hgr_nms_candidate(float score, uint flags, float score_threshold) {
  return (flags & NMS_SCORE_THRESHOLD) ? score > score_threshold : !isnan(score);
}

#if HGR_WANTED(hgr_nms_select)
__kernel void hgr_nms_select(__global const float* boxes, __global const float* scores, __global float* scratch,
                             __local float* corners, __local uint* words, uint batch, uint classes, uint box_count,
                             uint keep, uint flags, float iou_threshold, float score_threshold) {
  uint groups = batch * classes, group = get_group_id(0), lid = get_local_id(0), size = get_local_size(0);
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
  __local uint* suppressed = words;  /* [L] */
  __local uint* before = words + size; /* [L + 1]: candidates of the work-items before each, then the count */
  __local uint* shared = before + size + 1u; /* the selected count */

  /* Collect: each work-item counts the candidates of its slice of the scores, a
   * scan gives it its first slot, and it writes their keys there. Slices, not a
   * stride: on PoCL, which runs a work-item's loop at a time, a stride reads the
   * scores L times over. No atomic counter: PoCL runs them one by one. */
  uint chunk = (n + size - 1u) / size, scan_from = min(lid * chunk, n), scan_to = min(scan_from + chunk, n);
  uint mine = 0u;
  for (uint i = scan_from; i < scan_to; ++i) mine += hgr_nms_candidate(group_scores[i], flags, score_threshold);
  before[lid] = mine;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid == 0u) {
    uint sum = 0u;
    for (uint w = 0u; w < size; ++w) {
      uint items = before[w];
      before[w] = sum;
      sum += items;
    }
    before[size] = sum;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  uint slot = before[lid], count = before[size];
  for (uint i = scan_from; i < scan_to; ++i) {
    float score = group_scores[i];
    if (hgr_nms_candidate(score, flags, score_threshold)) keys[slot++] = hgr_nms_key(score, i);
  }
  barrier(CLK_GLOBAL_MEM_FENCE);
  /* Sort: runs by insertion, one per work-item at a time, then rounds that merge
   * pairs of runs into the other half of the row, each work-item writing its slice
   * of the merged keys from where its merge path starts. Up to NMS_SMALL keys are
   * one run, sorted by work-item 0 without merge rounds: on PoCL a round costs more
   * than the insertion it saves (the detector case: ~60 keys a class), and on a GPU
   * such a run is still short. */
  uint run_length = count <= NMS_SMALL ? NMS_SMALL : NMS_RUN;
  for (uint run = lid; run * run_length < count; run += size) {
    uint first = run * run_length, last = min(first + run_length, count);
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
  /* At least NMS_SLICE keys per work-item (the rest idle): on PoCL a work-item's
   * merge path search costs more than merging a few keys. */
  uint slice = max((count + size - 1u) / size, NMS_SLICE);
  for (uint width = run_length; width < count; width <<= 1) {
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
      /* The heads of both runs in registers, NMS_NO_KEY past a run's end (above
       * every key: only a NaN score has such bits, and it is never a candidate);
       * keys are distinct, so one head is below the other. */
      uint i = a + low, j = b + d - low, stop = min(end, b_end);
      ulong head_a = i < b ? sorted[i] : NMS_NO_KEY, head_b = j < b_end ? sorted[j] : NMS_NO_KEY;
      for (; out < stop; ++out) {
        if (head_a < head_b) {
          other[out] = head_a;
          head_a = ++i < b ? sorted[i] : NMS_NO_KEY;
        } else {
          other[out] = head_b;
          head_b = ++j < b_end ? sorted[j] : NMS_NO_KEY;
        }
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
    barrier(CLK_LOCAL_MEM_FENCE);
    /* Work-item 0 takes the block's survivors in order, each unless a box taken
     * earlier in this block suppresses it. */
    if (lid == 0u) {
      uint now = taken;
      for (uint q = 0u; q < size && now < limit; ++q) {
        if (suppressed[q]) continue;
        float4 candidate = vload4(q, corners);
        int hit = 0;
        for (uint s = taken; s < now && !hit; ++s)
          hit = hgr_nms_suppresses(candidate, vload4(s, chosen_corners), iou_threshold);
        if (hit) continue;
        chosen_index[now] = (uint)sorted[first + q];
        vstore4(candidate, now, chosen_corners);
        ++now;
      }
      shared[0] = now;
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    taken = shared[0];
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
