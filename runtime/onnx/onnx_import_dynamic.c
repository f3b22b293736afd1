/* ONNX's ops whose output extents follow from their data: NonZero, Compress, Unique
 * and NonMaxSuppression, on hgr's nonzero, compress, unique (ops_compact.c) and
 * non_max_suppression (ops_nms.c). Each hgr op writes its results at a capacity (an
 * extent known from the input shapes) and their count; the op ends a stage
 * (onnx_stage.c): the model object reads the count on the host, and the next stage
 * takes the results at their actual extents, on the device, as its inputs. Outputs
 * that ONNX gives as int64 are int32 inside, as every index (onnx_internal.h).
 *
 * NonZero of a constant folds on the host (masks in shape computations); the others
 * run on the device whatever their inputs. */
#include <stdio.h>
#include <string.h>

#include "onnx_internal.h"

#define NO_AXIS INT64_MIN

static const hgr_dtype_t INDEX_DTYPE = {HGR_DTYPE_INT, 32, 1};

/* Output k (when the node has it) from payload k of the stage before, at shape. */
static hgr_status_t take_payload(hgr__onnx_node_t* node, uint32_t k, hgr_dtype_t dtype, const int64_t* shape,
                                 int32_t ndim, int32_t onnx_type) {
  hgr_value_t value;
  HGR_RETURN_IF_ERROR(hgr__onnx_stage_payload(node, k, dtype, shape, ndim, &value));
  return hgr__onnx_set_runtime(node, k, value, onnx_type);
}

/* The run-time dtype of a value of onnx_type (float32, int32 for both integer types,
 * bool): the next stage no longer holds the input itself. */
static hgr_status_t run_time_dtype(const hgr__onnx_node_t* node, const hgr__onnx_value_t* v, hgr_dtype_t* out_dtype) {
  if (v->onnx_type == HGR__ONNX_INT64 || v->onnx_type == HGR__ONNX_INT32) {
    *out_dtype = INDEX_DTYPE;
    return HGR_OK;
  }
  if (v->onnx_type != HGR__ONNX_FLOAT && v->onnx_type != HGR__ONNX_BOOL)
    return HGR__ONNX_UNSUPPORTED(node, "input '%s' is %s; hgr takes float, int32, int64 and bool here", v->name,
                                 hgr__onnx_type_name(v->onnx_type));
  return hgr__onnx_type_dtype(v->onnx_type, out_dtype);
}

/* Adds op on inputs with attrs (released) and ends the stage: its last output is the
 * count, the others (output_count - 1) its payloads. */
static hgr_status_t run_and_cut(hgr__onnx_node_t* node, hgr_status_t status, hgr_attrs_t* attrs, const char* op,
                                const hgr_value_t* inputs, uint32_t input_count, uint32_t output_count) {
  hgr_value_t outputs[8];
  if (!status) status = hgr__onnx_add_op(node, op, inputs, input_count, attrs, output_count, outputs);
  hgr_attrs_release(attrs);
  HGR_RETURN_IF_ERROR(status);
  return hgr__onnx_stage_after(node, outputs[output_count - 1], outputs, output_count - 1);
}

/* ---- NonZero --------------------------------------------------------------------------- */

static hgr_status_t check_nonzero(const hgr__onnx_node_t* node, const hgr__onnx_value_t* x) {
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, ""));
  if (x->ndim < 1)
    return HGR__ONNX_UNSUPPORTED(node, "input '%s' is a scalar; hgr takes NonZero of rank 1 and up", x->name);
  return HGR_OK;
}

static hgr_status_t fold_nonzero(hgr__onnx_node_t* node) {
  hgr__onnx_value_t* x;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  HGR_RETURN_IF_ERROR(check_nonzero(node, x));
  const hgr__onnx_tensor_t* t = x->constant;
  uint64_t count = 0;
  for (uint64_t i = 0; i < t->count; ++i) count += hgr__onnx_tensor_f64(t, i) != 0;
  int64_t shape[2] = {t->ndim, (int64_t)count};
  hgr__onnx_tensor_t* out = NULL;
  HGR_RETURN_IF_ERROR(hgr__onnx_tensor_new(node->loader->allocator, HGR__ONNX_INT64, shape, 2, node->label, &out));
  uint64_t strides[HGR_MAX_DIMS];
  hgr__onnx_tensor_strides(t, strides);
  for (uint64_t i = 0, j = 0; i < t->count; ++i) {
    if (hgr__onnx_tensor_f64(t, i) == 0) continue;
    for (int32_t d = 0; d < t->ndim; ++d)
      hgr__onnx_tensor_set_i64(out, (uint64_t)d * count + j, (int64_t)(i / strides[d] % (uint64_t)t->shape[d]));
    ++j;
  }
  return hgr__onnx_set_constant(node, 0, out);
}

static hgr_status_t import_nonzero(hgr__onnx_node_t* node) {
  hgr__onnx_value_t* x;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  HGR_RETURN_IF_ERROR(check_nonzero(node, x));
  int64_t count;
  HGR_RETURN_IF_ERROR(hgr__onnx_stage_count(node, &count));
  if (count >= 0) return take_payload(node, 0, INDEX_DTYPE, (int64_t[]){x->ndim, count}, 2, HGR__ONNX_INT64);
  hgr_value_t input;
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, x, &input));
  return run_and_cut(node, HGR_OK, NULL, "nonzero", &input, 1, 2);
}

/* ---- Compress -------------------------------------------------------------------------- */

/* axis (NO_AXIS: the input flattened) and the extent the condition selects along. */
static hgr_status_t read_compress(const hgr__onnx_node_t* node, const hgr__onnx_value_t* x,
                                  const hgr__onnx_value_t* cond, int64_t* out_axis, int64_t* out_extent) {
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, "axis"));
  bool present = hgr__onnx_attr(node, "axis") != NULL;
  int64_t axis = 0;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "axis", 0, &axis));
  if (cond->ndim != 1)
    return HGR__ONNX_INVALID(node, "its condition '%s' has rank %d; Compress takes a 1-D condition", cond->name,
                             (int)cond->ndim);
  uint64_t extent = 1;
  if (present) {
    int32_t normalized;
    HGR_RETURN_IF_ERROR(hgr__onnx_axis(node, "attr 'axis'", axis, x->ndim, &normalized));
    *out_axis = normalized;
    extent = (uint64_t)x->shape[normalized];
  } else {
    *out_axis = NO_AXIS;
    for (int32_t d = 0; d < x->ndim; ++d) extent *= (uint64_t)x->shape[d];
  }
  if ((uint64_t)cond->shape[0] > extent)
    return HGR__ONNX_INVALID(node, "its condition '%s' holds %lld flags; the input has %llu along the %s", cond->name,
                             (long long)cond->shape[0], (unsigned long long)extent,
                             present ? "axis" : "flattened input");
  *out_extent = (int64_t)extent;
  return HGR_OK;
}

static hgr_status_t import_compress(hgr__onnx_node_t* node) {
  hgr__onnx_value_t *x, *cond;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 1, &cond));
  int64_t axis = NO_AXIS, extent = 0;
  HGR_RETURN_IF_ERROR(read_compress(node, x, cond, &axis, &extent));
  int64_t count;
  HGR_RETURN_IF_ERROR(hgr__onnx_stage_count(node, &count));
  if (count >= 0) {
    int64_t shape[HGR_MAX_DIMS] = {count};
    int32_t ndim = 1;
    if (axis != NO_AXIS) {
      ndim = x->ndim;
      memcpy(shape, x->shape, sizeof(int64_t) * (size_t)ndim);
      shape[axis] = count;
    }
    hgr_dtype_t dtype;
    HGR_RETURN_IF_ERROR(run_time_dtype(node, x, &dtype));
    return take_payload(node, 0, dtype, shape, ndim, x->onnx_type);
  }
  hgr_value_t inputs[2];
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime_inputs(node, 0, 2, inputs));
  hgr_attrs_t* attrs = NULL;
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  hgr_status_t status = axis == NO_AXIS ? HGR_OK : hgr_attrs_set_int(attrs, "axis", axis);
  return run_and_cut(node, status, attrs, "compress", inputs, 2, 2);
}

/* ---- Unique ---------------------------------------------------------------------------- */

static hgr_status_t import_unique(hgr__onnx_node_t* node) {
  hgr__onnx_value_t* x;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, "axis sorted"));
  bool present = hgr__onnx_attr(node, "axis") != NULL;
  int64_t axis_attr = 0, sorted = 1;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "axis", 0, &axis_attr));
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "sorted", 1, &sorted));
  if (x->ndim < 1) return HGR__ONNX_UNSUPPORTED(node, "input '%s' is a scalar; hgr takes Unique of rank 1 and up", x->name);
  int32_t axis = 0;
  if (present) HGR_RETURN_IF_ERROR(hgr__onnx_axis(node, "attr 'axis'", axis_attr, x->ndim, &axis));
  int64_t count;
  HGR_RETURN_IF_ERROR(hgr__onnx_stage_count(node, &count));
  if (count >= 0) {
    hgr_dtype_t dtype;
    HGR_RETURN_IF_ERROR(run_time_dtype(node, x, &dtype));
    int64_t shape[HGR_MAX_DIMS] = {count}, inverse = 1;
    int32_t ndim = 1;
    for (int32_t d = 0; d < x->ndim; ++d) inverse *= x->shape[d];
    if (present) {
      ndim = x->ndim;
      memcpy(shape, x->shape, sizeof(int64_t) * (size_t)ndim);
      shape[axis] = count;
      inverse = x->shape[axis];
    }
    HGR_RETURN_IF_ERROR(take_payload(node, 0, dtype, shape, ndim, x->onnx_type));
    HGR_RETURN_IF_ERROR(take_payload(node, 1, INDEX_DTYPE, &count, 1, HGR__ONNX_INT64));
    HGR_RETURN_IF_ERROR(take_payload(node, 2, INDEX_DTYPE, &inverse, 1, HGR__ONNX_INT64));
    return take_payload(node, 3, INDEX_DTYPE, &count, 1, HGR__ONNX_INT64);
  }
  hgr_value_t input;
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, x, &input));
  hgr_attrs_t* attrs = NULL;
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  hgr_status_t status = hgr_attrs_set_int(attrs, "sorted", sorted != 0);
  if (!status && present) status = hgr_attrs_set_int(attrs, "axis", axis);
  return run_and_cut(node, status, attrs, "unique", &input, 1, 5);
}

/* ---- NonMaxSuppression ----------------------------------------------------------------- */

/* Scalar input i as a double (fallback when omitted); a value computed at run time
 * is a decision (hgr__onnx_constant_input). */
static hgr_status_t scalar_input(const hgr__onnx_node_t* node, uint32_t i, double fallback, bool* out_present,
                                 double* out) {
  hgr__onnx_tensor_t* t = NULL;
  HGR_RETURN_IF_ERROR(hgr__onnx_constant_input(node, i, &t));
  *out = fallback;
  if (out_present) *out_present = t != NULL;
  if (!t) return HGR_OK;
  if (t->count != 1)
    return HGR__ONNX_INVALID(node, "input %u holds %llu values; NonMaxSuppression takes one", i,
                             (unsigned long long)t->count);
  *out = hgr__onnx_tensor_f64(t, 0);
  return HGR_OK;
}

static hgr_status_t import_nms(hgr__onnx_node_t* node) {
  hgr__onnx_value_t *boxes, *scores;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &boxes));
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 1, &scores));
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, "center_point_box"));
  int64_t center = 0;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "center_point_box", 0, &center));
  if (center != 0 && center != 1)
    return HGR__ONNX_INVALID(node, "attr 'center_point_box' is %lld; it takes 0 or 1", (long long)center);
  if (boxes->ndim != 3 || boxes->shape[2] != 4 || scores->ndim != 3 || scores->shape[0] != boxes->shape[0] ||
      scores->shape[2] != boxes->shape[1])
    return HGR__ONNX_INVALID(node, "boxes '%s' must be [B, N, 4] and scores '%s' [B, C, N] of the same B and N",
                             boxes->name, scores->name);
  /* The thresholds first: a value computed at run time ends the stage before the op. */
  double max_output, iou, score;
  bool has_score = false;
  HGR_RETURN_IF_ERROR(scalar_input(node, 2, 0, NULL, &max_output));
  HGR_RETURN_IF_ERROR(scalar_input(node, 3, 0, NULL, &iou));
  HGR_RETURN_IF_ERROR(scalar_input(node, 4, 0, &has_score, &score));
  if (max_output < 0) max_output = 0;
  if (max_output > (double)boxes->shape[1]) max_output = (double)boxes->shape[1];
  int64_t count;
  HGR_RETURN_IF_ERROR(hgr__onnx_stage_count(node, &count));
  if (count >= 0) return take_payload(node, 0, INDEX_DTYPE, (int64_t[]){count, 3}, 2, HGR__ONNX_INT64);
  hgr_value_t inputs[2];
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime_inputs(node, 0, 2, inputs));
  hgr_attrs_t* attrs = NULL;
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  hgr_status_t status = hgr_attrs_set_int(attrs, "center_point_box", center);
  if (!status) status = hgr_attrs_set_int(attrs, "max_output_boxes_per_class", (int64_t)max_output);
  if (!status) status = hgr_attrs_set_float(attrs, "iou_threshold", iou);
  if (!status && has_score) status = hgr_attrs_set_float(attrs, "score_threshold", score);
  if (!status) status = hgr_attrs_set_int(attrs, "has_score_threshold", has_score);
  return run_and_cut(node, status, attrs, "non_max_suppression", inputs, 2, 2);
}

const hgr__onnx_op_t hgr__onnx_ops_dynamic[] = {
    {"NonZero", import_nonzero, fold_nonzero, 1},
    {"Compress", import_compress, NULL, 2},
    {"Unique", import_unique, NULL, 1},
    {"NonMaxSuppression", import_nms, NULL, 2},
    {NULL, NULL, NULL, 0},
};
