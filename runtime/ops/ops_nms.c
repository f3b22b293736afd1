/* ONNX's NonMaxSuppression (kernels/nms.cl): non_max_suppression selects, for every
 * (batch, class), boxes in descending order of score (equal scores: the lower box
 * index first), skipping each whose IoU with a box already selected for that batch
 * and class exceeds iou_threshold, until max_output_boxes_per_class are selected;
 * with a score threshold only boxes scoring above it are candidates. The semantics
 * are ONNX Runtime's CPU kernel's, to the float (its SuppressByIOU: a box of zero
 * area suppresses nothing).
 *
 * How many boxes it selects depends on the data: the op writes them into an output
 * of a fixed capacity and their count into a second output, which the ONNX importer
 * reads on the host to continue with the exact shape.
 *
 * Inputs (B batches, N boxes, C classes):
 *   0 boxes   float32 [B, N, 4]: [y1, x1, y2, x2], any diagonal pair of corners
 *             (center_point_box 0), or [x_center, y_center, width, height] (1)
 *   1 scores  float32 [B, C, N]
 * Outputs:
 *   0 selected  int32 [cap, 3], cap = max(1, B C min(max_output_boxes_per_class, N)):
 *               rows (batch, class, box index) in ONNX Runtime's order (batch, then
 *               class, then the order of selection), the rest of the capacity zeros
 *   1 count     int32 [] (ndim 0): the rows selected
 * Attrs: center_point_box (0, 1), max_output_boxes_per_class (>= 0; 0 selects
 * nothing), iou_threshold (in [0, 1], ONNX Runtime's check), score_threshold with
 * has_score_threshold (0: every box is a candidate; NaN scores never are).
 *
 * Three launches share the node's scratch: hgr_nms_select, one work-group per
 * (batch, class), sorts that class's candidates and selects among them;
 * hgr_nms_offsets, one work-group, sums the counts; hgr_nms_gather writes every
 * row of the output (selected boxes, then zeros) and nothing reads undefined
 * bytes. The work-group sizes come from the device's and the kernels' limits. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ops.h"

/* kernels/nms.cl's flags. */
#define NMS_CENTER_POINT 1u
#define NMS_SCORE_THRESHOLD 2u

/* hgr_nms_select's work-groups: PoCL runs a group's work-items one after another
 * between barriers, so every work-item costs each barrier something even when it
 * has nothing to do, and a class has few candidates after a score threshold (the
 * detector case of bench/recurrent.py: ~60). On pocl:0 256 took 1.2 ms there, 64
 * 0.3 ms, 16 0.24 ms (bench/notes.md); 64 still fills a GPU's warp or two. */
#define SELECT_GROUP_MAX 64
#define OFFSETS_GROUP_MAX 256

typedef struct nms_t {
  uint32_t batch, classes, boxes;
  uint32_t keep;   /* min(max_output_boxes_per_class, N) */
  uint64_t rows;   /* the output's capacity, max(1, B C keep) */
  uint32_t flags;
  float iou_threshold, score_threshold;
} nms_t;

/* A float attr that must be a finite float32 (score_threshold) or within [0, 1]
 * (iou_threshold). */
static hgr_status_t attr_threshold(const hgr__op_ctx_t* ctx, const char* key, bool unit_range, float* out) {
  double value;
  HGR_RETURN_IF_ERROR(hgr__attr_float(ctx, key, 0, &value));
  if (unit_range && !(value >= 0 && value <= 1))
    return HGR__OP_ERROR(ctx, "attr '%s' = %g must be in [0, 1]", key, value);
  if (!(fabs(value) <= FLT_MAX))
    return HGR__OP_ERROR(ctx, "attr '%s' = %g must be a finite float32 value", key, value);
  *out = (float)value;
  return HGR_OK;
}

static hgr_status_t parse_nms(const hgr__op_ctx_t* ctx, nms_t* p) {
  memset(p, 0, sizeof(*p));
  const hgr__entry_t* boxes = hgr__op_input(ctx, 0);
  const hgr__entry_t* scores = hgr__op_input(ctx, 1);
  HGR_RETURN_IF_ERROR(hgr__op_check_dtype(ctx, 0, -1, false));
  HGR_RETURN_IF_ERROR(hgr__op_check_dtype(ctx, 1, -1, false));
  char shape[160];
  if (boxes->ndim != 3 || boxes->shape[2] != 4)
    return HGR__OP_ERROR(ctx, "input 0 'boxes' is shaped %s; it must be [batch, boxes, 4]",
                         hgr__entry_shape(boxes, shape, sizeof(shape)));
  if (scores->ndim != 3 || scores->shape[0] != boxes->shape[0] || scores->shape[2] != boxes->shape[1])
    return HGR__OP_ERROR(ctx, "input 1 'scores' is shaped %s; it must be [%lld, classes, %lld] (batch, classes, "
                              "boxes of input 0 'boxes')",
                         hgr__entry_shape(scores, shape, sizeof(shape)), (long long)boxes->shape[0],
                         (long long)boxes->shape[1]);
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "input 0 'boxes''s element count", boxes->element_count, INT32_MAX));
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "input 1 'scores''s element count", scores->element_count, INT32_MAX));
  p->batch = (uint32_t)boxes->shape[0];
  p->boxes = (uint32_t)boxes->shape[1];
  p->classes = (uint32_t)scores->shape[1];
  int64_t center_point_box, max_output;
  bool has_score_threshold;
  HGR_RETURN_IF_ERROR(hgr__attr_int(ctx, "center_point_box", 0, &center_point_box));
  if (center_point_box != 0 && center_point_box != 1)
    return HGR__OP_ERROR(ctx, "attr 'center_point_box' = %lld must be 0 ([y1, x1, y2, x2]) or 1 ([x_center, "
                              "y_center, width, height])", (long long)center_point_box);
  if (center_point_box) p->flags |= NMS_CENTER_POINT;
  HGR_RETURN_IF_ERROR(hgr__attr_int(ctx, "max_output_boxes_per_class", 0, &max_output));
  if (max_output < 0)
    return HGR__OP_ERROR(ctx, "attr 'max_output_boxes_per_class' = %lld must be at least 0", (long long)max_output);
  p->keep = max_output < p->boxes ? (uint32_t)max_output : p->boxes;
  HGR_RETURN_IF_ERROR(attr_threshold(ctx, "iou_threshold", true, &p->iou_threshold));
  HGR_RETURN_IF_ERROR(hgr__attr_bool(ctx, "has_score_threshold", false, &has_score_threshold));
  if (has_score_threshold) {
    p->flags |= NMS_SCORE_THRESHOLD;
    HGR_RETURN_IF_ERROR(attr_threshold(ctx, "score_threshold", false, &p->score_threshold));
  } else if (hgr__attr_string(ctx, "score_threshold", NULL)) {
    return HGR__OP_ERROR(ctx, "attr 'score_threshold' is given but 'has_score_threshold' is not set");
  }
  uint64_t groups = (uint64_t)p->batch * p->classes;
  p->rows = groups * p->keep;
  if (p->rows == 0) p->rows = 1;
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "output 0's element count (3 x batch x classes x "
                                          "min(max_output_boxes_per_class, boxes))",
                                          hgr__mul_saturating(p->rows, 3), INT32_MAX));
  return HGR_OK;
}

static hgr_status_t infer_nms(hgr__op_ctx_t* ctx, hgr__entry_t* outputs) {
  nms_t p;
  HGR_RETURN_IF_ERROR(parse_nms(ctx, &p));
  int64_t selected[2] = {(int64_t)p.rows, 3};
  hgr__op_set_output(&outputs[0], HGR__DTYPE_I32, selected, 2);
  hgr__op_set_output(&outputs[1], HGR__DTYPE_I32, NULL, 0);
  return HGR_OK;
}

/* A power of two within the device's limits, at most cap, whose local memory
 * (bytes_per_item each, plus fixed) fits; 0 when not even one work-item's does. */
static size_t group_size(const hgr__op_ctx_t* ctx, size_t cap, size_t bytes_per_item, size_t fixed) {
  if (ctx->limits.max_work_group < cap) cap = ctx->limits.max_work_group;
  if (ctx->limits.max_work_item[0] && ctx->limits.max_work_item[0] < cap) cap = ctx->limits.max_work_item[0];
  size_t size = 0;
  for (size_t next = 1; next <= cap && fixed + next * bytes_per_item <= ctx->limits.local_mem_bytes; next *= 2)
    size = next;
  return size;
}

/* hgr_nms_select's local memory: corners (4 floats), a suppressed flag and a slot
 * per work-item, the candidate count and the selected count. */
static size_t select_local_bytes(size_t size) {
  return size * (4 * sizeof(float) + 2 * sizeof(uint32_t)) + 2 * sizeof(uint32_t);
}

static hgr_status_t plan_nms(hgr__op_ctx_t* ctx) {
  nms_t p;
  HGR_RETURN_IF_ERROR(parse_nms(ctx, &p));
  uint64_t groups = (uint64_t)p.batch * p.classes;
  /* keys [G, 2, N] (2 floats each), corners [G, K] (4), index [G, K], counts [G], offsets [G + 1] */
  uint64_t scratch_floats = hgr__mul_saturating(groups, 4 * (uint64_t)p.boxes + 5 * (uint64_t)p.keep + 2) + 1;
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "the scratch's floats (batch x classes x (4 x boxes + 5 x "
                                          "min(max_output_boxes_per_class, boxes) + 2))",
                                          scratch_floats, INT32_MAX));
  uint64_t scratch = scratch_floats * sizeof(float);
  size_t select_group = group_size(ctx, SELECT_GROUP_MAX, 4 * sizeof(float) + 2 * sizeof(uint32_t),
                                   2 * sizeof(uint32_t));
  size_t offsets_group = group_size(ctx, OFFSETS_GROUP_MAX, sizeof(uint32_t), 0);
  if (!select_group || !offsets_group)
    return HGR__OP_ERROR(ctx, "the device's %llu bytes of local memory hold no work-group of hgr_nms_select",
                         (unsigned long long)ctx->limits.local_mem_bytes);

  hgr__launch_plan_t* l = hgr__op_launch(ctx, "hgr_nms_select");
  hgr__launch_input(ctx, l, 0);
  hgr__launch_input(ctx, l, 1);
  hgr__launch_scratch(ctx, l, scratch);
  hgr__launch_local(ctx, l, select_group * 4 * sizeof(float));
  hgr__launch_local(ctx, l, select_local_bytes(select_group) - select_group * 4 * sizeof(float));
  hgr__launch_uint(ctx, l, p.batch);
  hgr__launch_uint(ctx, l, p.classes);
  hgr__launch_uint(ctx, l, p.boxes);
  hgr__launch_uint(ctx, l, p.keep);
  hgr__launch_uint(ctx, l, p.flags);
  hgr__launch_float(ctx, l, p.iou_threshold);
  hgr__launch_float(ctx, l, p.score_threshold);
  size_t global[1] = {(size_t)groups * select_group}, local[1] = {select_group};
  hgr__launch_nd(l, 1, global, local);

  l = hgr__op_launch(ctx, "hgr_nms_offsets");
  hgr__launch_scratch(ctx, l, scratch);
  hgr__launch_output(ctx, l, 1);
  hgr__launch_local(ctx, l, offsets_group * sizeof(uint32_t));
  hgr__launch_uint(ctx, l, p.batch);
  hgr__launch_uint(ctx, l, p.classes);
  hgr__launch_uint(ctx, l, p.boxes);
  hgr__launch_uint(ctx, l, p.keep);
  global[0] = local[0] = offsets_group;
  hgr__launch_nd(l, 1, global, local);

  l = hgr__op_launch(ctx, "hgr_nms_gather");
  hgr__launch_scratch(ctx, l, scratch);
  hgr__launch_output(ctx, l, 0);
  hgr__launch_uint(ctx, l, p.batch);
  hgr__launch_uint(ctx, l, p.classes);
  hgr__launch_uint(ctx, l, p.boxes);
  hgr__launch_uint(ctx, l, p.keep);
  hgr__launch_uint(ctx, l, (uint32_t)p.rows);
  hgr__launch_1d(ctx, l, p.rows);
  return HGR_OK;
}

#define NMS_ATTRS \
  "center_point_box max_output_boxes_per_class iou_threshold score_threshold has_score_threshold"

const hgr__op_t hgr__ops_nms[] = {
    {"non_max_suppression", "nms", 2, 2, 2, 2, NMS_ATTRS, plan_nms, 0, HGR__IN_PLACE_REFUSED, infer_nms},
    {.name = NULL},
};
