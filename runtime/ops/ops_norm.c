/* Normalizations of float32 tensors (kernels/norm.cl): softmax and log_softmax
 * (axis), layer_norm (axis, epsilon, center, scale; inputs data, gamma, beta and an
 * optional skip shaped as data, a residual added to data first, as ONNX Runtime's
 * SkipLayerNormalization: passes/fuse_skip_norm.c gives it; with a skip, an optional
 * output 1, data + skip, as SkipLayerNormalization's input_skip_bias_sum) and
 * batch_norm for inference
 * (axis, epsilon, center, scale; one output, or three as Relay's tuple, the last two
 * copies of moving_mean and moving_var).
 *
 * lrn (Relay's nn.lrn with ONNX LRN's window): attrs size (required, >= 1, odd or
 * even), axis (1), alpha (1e-4), beta (0.75), bias (1.0); y = x / (bias + alpha /
 * size * s)^beta with s the sum of squares over the channels [c - floor((size - 1) /
 * 2), c + ceil((size - 1) / 2)] that exist. One work-item per element.
 *
 * instance_norm (Relay's nn.instance_norm, ONNX InstanceNormalization): data [N, C,
 * ...] (at least 2 dimensions), gamma and beta [C] (C the extent of axis); each
 * (n, c) is normalized over every axis but 0 and axis with its own mean and biased
 * variance: (x - mean) / sqrt(var + epsilon) * gamma[c] (scale) + beta[c] (center).
 * Attrs axis (1; any axis but 0), epsilon (1e-5), center (True), scale (True). One
 * work-group per (n, c), its size as the row kernels'.
 *
 * softmax and layer_norm view the data as [outer, len, inner] around the axis. When
 * inner is 1: on PoCL's CPU drivers a work-item takes each row 16 elements at a time
 * (rows_in_vectors); elsewhere, when the rows are long enough to share out, one
 * work-group reduces each row in local memory. Otherwise one work-item loops over
 * each (outer, inner) column. */
#include <float.h>
#include <stdio.h>

#include "ops.h"

enum { SOFTMAX, LOG_SOFTMAX };

/* Rows at least this long get a work-group each; shorter ones a work-item each. */
#define ROW_KERNEL_MIN_LEN 32
/* The row kernel's work-group, whatever the row's length (a local size that
 * followed the length made PoCL compile a work-group function at a new sequence
 * length): wider ones only add tree levels, and rows of 32 leave half idle. */
#define ROW_GROUP_MAX 64


typedef struct axis_view_t {
  uint32_t outer, len, inner;
} axis_view_t;

/* Input 0 (float32) viewed around the attr "axis" (default fallback); checks that
 * every count fits the kernels' 32-bit indices. */
static hgr_status_t view_axis(const hgr__op_ctx_t* ctx, int64_t fallback, int32_t* out_axis, axis_view_t* out) {
  const hgr__entry_t* data = hgr__op_input(ctx, 0);
  int64_t axis;
  HGR_RETURN_IF_ERROR(hgr__attr_int(ctx, "axis", fallback, &axis));
  HGR_RETURN_IF_ERROR(hgr__op_axis(ctx, "axis", axis, data->ndim, out_axis));
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "the data's element count", data->element_count, INT32_MAX));
  uint64_t outer = 1, inner = 1;
  for (int32_t d = 0; d < *out_axis; ++d) outer = hgr__mul_saturating(outer, (uint64_t)data->shape[d]);
  for (int32_t d = *out_axis + 1; d < data->ndim; ++d) inner = hgr__mul_saturating(inner, (uint64_t)data->shape[d]);
  /* With a zero extent somewhere, the others are not bounded by the element count. */
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "the extent before the axis", outer, INT32_MAX));
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "the extent after the axis", inner, INT32_MAX));
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "the axis' extent", (uint64_t)data->shape[*out_axis], INT32_MAX));
  out->outer = (uint32_t)outer;
  out->len = (uint32_t)data->shape[*out_axis];
  out->inner = (uint32_t)inner;
  return HGR_OK;
}

/* The work-group size of a row kernel, or 0 when rows of len elements go to the
 * column kernel: a power of two within the device's limits and ROW_GROUP_MAX, with
 * its float per work-item in half the local memory. */
static size_t row_group_size(const hgr__op_ctx_t* ctx, const axis_view_t* view) {
  if (view->inner != 1 || view->len < ROW_KERNEL_MIN_LEN) return 0;
  size_t cap = ctx->limits.max_work_group;
  if (ctx->limits.max_work_item[0] < cap) cap = ctx->limits.max_work_item[0];
  if (cap > ROW_GROUP_MAX) cap = ROW_GROUP_MAX;
  uint64_t local_items = ctx->limits.local_mem_bytes / 2 / sizeof(float);
  if (local_items == 0) return 0;
  size_t size = 1;
  while (size * 2 <= cap && size * 2 <= local_items) size *= 2;
  return size;
}

static void launch_rows(hgr__launch_plan_t* l, uint32_t rows, size_t group) {
  size_t global[1] = {(size_t)rows * group}, local[1] = {group};
  hgr__launch_nd(l, 1, global, local);
}

static hgr_status_t check_float_inputs(const hgr__op_ctx_t* ctx) {
  for (uint32_t i = 0; i < hgr__op_input_count(ctx); ++i)
    HGR_RETURN_IF_ERROR(hgr__op_check_dtype(ctx, (int)i, -1, false));
  return HGR_OK;
}

/* Output 0 like the data (float32, checked); outputs 1 and 2 (batch_norm's
 * moving_mean and moving_var), when present, [len]. */
static void set_outputs(const hgr__op_ctx_t* ctx, hgr__entry_t* outputs, uint32_t len) {
  const hgr__entry_t* data = hgr__op_input(ctx, 0);
  hgr__op_set_output(&outputs[0], HGR__DTYPE_F32, data->shape, data->ndim);
  int64_t channels[1] = {len};
  for (uint32_t k = 1; k < hgr__op_output_count(ctx); ++k) hgr__op_set_output(&outputs[k], HGR__DTYPE_F32, channels, 1);
}

/* The attrs layer_norm and batch_norm share: epsilon, center and scale. */
static hgr_status_t norm_attrs(const hgr__op_ctx_t* ctx, float* out_epsilon, bool* out_center, bool* out_scale) {
  double epsilon;
  HGR_RETURN_IF_ERROR(hgr__attr_float(ctx, "epsilon", 1e-5, &epsilon));
  /* Negative would take the square root of a negative variance; inf zeroes all. */
  if (!(epsilon >= 0 && epsilon <= FLT_MAX))
    return HGR__OP_ERROR(ctx, "attr 'epsilon' = \"%s\" must be a finite number >= 0",
                         hgr__attr_string(ctx, "epsilon", ""));
  *out_epsilon = (float)epsilon;
  HGR_RETURN_IF_ERROR(hgr__attr_bool(ctx, "center", true, out_center));
  return hgr__attr_bool(ctx, "scale", true, out_scale);
}

/* A [len] parameter input (gamma, beta, moving_mean, moving_var). */
static hgr_status_t check_vector(const hgr__op_ctx_t* ctx, uint32_t input, const char* name, uint32_t len,
                                 const char* axis_text) {
  const hgr__entry_t* entry = hgr__op_input(ctx, input);
  int64_t shape[1] = {len};
  if (entry->ndim == 1 && entry->shape[0] == len) return HGR_OK;
  char what[96];
  snprintf(what, sizeof(what), "input %u '%s' (one value per %s)", input, name, axis_text);
  return hgr__op_check_shape(ctx, entry, what, shape, 1);
}

static hgr_status_t softmax_view(const hgr__op_ctx_t* ctx, axis_view_t* view) {
  HGR_RETURN_IF_ERROR(check_float_inputs(ctx));
  int32_t axis;
  return view_axis(ctx, -1, &axis, view);
}

static hgr_status_t infer_softmax(hgr__op_ctx_t* ctx, hgr__entry_t* outputs) {
  axis_view_t view;
  HGR_RETURN_IF_ERROR(softmax_view(ctx, &view));
  set_outputs(ctx, outputs, view.len);
  return HGR_OK;
}

/* Rows (inner 1) of softmax and layer_norm in the vector kernels, a work-item per
 * row 16 elements at a time: the rule's choice on devices that loop over work-items
 * (PoCL's CPU drivers), where the column kernel's work-items read rows len apart
 * and the row kernels' barriers split the loop. Two tile candidates, so that the
 * tests run both kernels on every device. Measured on PoCL (2 cores, load 9, one
 * after the other, hgr run --profile): softmax [1536, 128] 2.6 -> 0.23 ms,
 * [40, 6625] (a CTC head's, 40 rows: one group of the column kernel, one core)
 * 4.75 -> 0.30 ms, layer_norm [128, 384] 0.19 -> 0.05 ms. Groups of 4 rows leave
 * both cores work with few rows. */
#define VECTOR_ROWS_GROUP 4
static bool rows_in_vectors(hgr__op_ctx_t* ctx, const axis_view_t* view) {
  if (view->inner != 1) return false;
  static const char* const names[] = {"groups_or_columns", "vectors"};
  const bool fits[2] = {true, true};
  char key[64]; /* a record for one row length: a short row's choice says nothing of a long one's */
  snprintf(key, sizeof(key), "%s rows of %u", ctx->op->name, view->len);
  return hgr__op_choose_tile(ctx, key, names, fits, 2, hgr__op_loops_work_items(ctx) ? 1 : 0) == 1;
}

/* Other than in vectors, softmax's rows stay with the column kernel, a work-item
 * each, on devices that pay for each work-item in a group's loop
 * (hgr__op_loops_work_items): on PoCL (2 cores, loaded) [64, 37] ran in 24 us
 * against 63 by rows of 64 work-items, [1536, 128] in 0.88 ms against 2.2. */
static hgr_status_t plan_softmax(hgr__op_ctx_t* ctx) {
  axis_view_t view;
  HGR_RETURN_IF_ERROR(softmax_view(ctx, &view));
  int32_t log_output = ctx->op->variant == LOG_SOFTMAX;
  bool vectors = rows_in_vectors(ctx, &view);
  size_t group = vectors || hgr__op_loops_work_items(ctx) ? 0 : row_group_size(ctx, &view);
  if (vectors || group) { /* the vector and row kernels take the same arguments */
    hgr__launch_plan_t* l = hgr__op_launch(ctx, vectors ? "hgr_softmax_vec_f32" : "hgr_softmax_rows_f32");
    hgr__launch_sibling(ctx, l, "hgr_softmax_f32");
    hgr__launch_input(ctx, l, 0);
    hgr__launch_output(ctx, l, 0);
    hgr__launch_uint(ctx, l, view.outer);
    hgr__launch_uint(ctx, l, view.len);
    hgr__launch_int(ctx, l, log_output);
    if (vectors) {
      hgr__launch_1d_groups(ctx, l, view.outer, VECTOR_ROWS_GROUP);
    } else {
      hgr__launch_local(ctx, l, group * sizeof(float));
      launch_rows(l, view.outer, group);
    }
  } else {
    hgr__launch_plan_t* l = hgr__op_launch(ctx, "hgr_softmax_f32");
    hgr__launch_sibling(ctx, l, "hgr_softmax_rows_f32");
    if (hgr__op_loops_work_items(ctx)) hgr__launch_sibling(ctx, l, "hgr_softmax_vec_f32");
    hgr__launch_input(ctx, l, 0);
    hgr__launch_output(ctx, l, 0);
    hgr__launch_uint(ctx, l, view.outer);
    hgr__launch_uint(ctx, l, view.len);
    hgr__launch_uint(ctx, l, view.inner);
    hgr__launch_int(ctx, l, log_output);
    hgr__launch_1d(ctx, l, (uint64_t)view.outer * view.inner);
  }
  return HGR_OK;
}

/* layer_norm's and batch_norm's data view and attrs. */
typedef struct norm_t {
  axis_view_t view;
  float epsilon;
  bool center, scale;
} norm_t;

static hgr_status_t parse_layer_norm(const hgr__op_ctx_t* ctx, norm_t* p) {
  HGR_RETURN_IF_ERROR(check_float_inputs(ctx));
  int32_t axis;
  HGR_RETURN_IF_ERROR(view_axis(ctx, -1, &axis, &p->view));
  HGR_RETURN_IF_ERROR(norm_attrs(ctx, &p->epsilon, &p->center, &p->scale));
  char axis_text[48];
  snprintf(axis_text, sizeof(axis_text), "position along axis %d", axis);
  /* Relay types gamma and beta even when the flags leave them unused. */
  HGR_RETURN_IF_ERROR(check_vector(ctx, 1, "gamma", p->view.len, axis_text));
  HGR_RETURN_IF_ERROR(check_vector(ctx, 2, "beta", p->view.len, axis_text));
  if (hgr__op_input_count(ctx) < 4) {
    if (hgr__op_output_count(ctx) > 1)
      return HGR__OP_ERROR(ctx, "has 2 outputs, but output 1 (the sum of data and skip) needs input 3 (skip)");
    return HGR_OK;
  }
  return hgr__op_check_shape(ctx, hgr__op_input(ctx, 3), "input 3 (skip)", hgr__op_input(ctx, 0)->shape,
                             hgr__op_input(ctx, 0)->ndim);
}

/* Output 0, and output 1 (data + skip) when there is one, shaped as the data. */
static hgr_status_t infer_layer_norm(hgr__op_ctx_t* ctx, hgr__entry_t* outputs) {
  norm_t p;
  HGR_RETURN_IF_ERROR(parse_layer_norm(ctx, &p));
  const hgr__entry_t* data = hgr__op_input(ctx, 0);
  for (uint32_t k = 0; k < hgr__op_output_count(ctx); ++k)
    hgr__op_set_output(&outputs[k], HGR__DTYPE_F32, data->shape, data->ndim);
  return HGR_OK;
}

static hgr_status_t plan_layer_norm(hgr__op_ctx_t* ctx) {
  norm_t p;
  HGR_RETURN_IF_ERROR(parse_layer_norm(ctx, &p));
  const axis_view_t view = p.view;
  bool vectors = rows_in_vectors(ctx, &view);
  size_t group = vectors ? 0 : row_group_size(ctx, &view);
  bool columns = !vectors && !group;
  hgr__launch_plan_t* l = hgr__op_launch(ctx, vectors ? "hgr_layer_norm_vec_f32"
                                              : group ? "hgr_layer_norm_rows_f32"
                                                      : "hgr_layer_norm_f32");
  hgr__launch_sibling(ctx, l, columns ? "hgr_layer_norm_rows_f32" : "hgr_layer_norm_f32");
  if (columns && hgr__op_loops_work_items(ctx)) hgr__launch_sibling(ctx, l, "hgr_layer_norm_vec_f32");
  for (uint32_t i = 0; i < 3; ++i) hgr__launch_input(ctx, l, i);
  bool skip = hgr__op_input_count(ctx) > 3, skip_sum = hgr__op_output_count(ctx) > 1;
  hgr__launch_input(ctx, l, skip ? 3 : 0); /* unread without a skip */
  hgr__launch_int(ctx, l, skip_sum ? 2 : skip);
  hgr__launch_output(ctx, l, skip_sum ? 1 : 0); /* unwritten without the sum */
  hgr__launch_output(ctx, l, 0);
  hgr__launch_uint(ctx, l, view.outer);
  hgr__launch_uint(ctx, l, view.len);
  if (columns) hgr__launch_uint(ctx, l, view.inner);
  hgr__launch_float(ctx, l, p.epsilon);
  hgr__launch_int(ctx, l, p.center);
  hgr__launch_int(ctx, l, p.scale);
  if (vectors) {
    hgr__launch_1d_groups(ctx, l, view.outer, VECTOR_ROWS_GROUP);
  } else if (group) {
    hgr__launch_local(ctx, l, group * sizeof(float));
    launch_rows(l, view.outer, group);
  } else {
    hgr__launch_1d(ctx, l, (uint64_t)view.outer * view.inner);
  }
  return HGR_OK;
}

static hgr_status_t parse_batch_norm(const hgr__op_ctx_t* ctx, norm_t* p) {
  static const char* const names[5] = {"data", "gamma", "beta", "moving_mean", "moving_var"};
  if (hgr__op_output_count(ctx) == 2)
    return HGR__OP_ERROR(ctx, "has 1 output (the normalized data) or 3 (with moving_mean and moving_var), "
                              "the node has 2");
  HGR_RETURN_IF_ERROR(check_float_inputs(ctx));
  int32_t axis;
  HGR_RETURN_IF_ERROR(view_axis(ctx, 1, &axis, &p->view));
  HGR_RETURN_IF_ERROR(norm_attrs(ctx, &p->epsilon, &p->center, &p->scale));
  char axis_text[48];
  snprintf(axis_text, sizeof(axis_text), "channel, along axis %d", axis);
  for (uint32_t i = 1; i < 5; ++i) HGR_RETURN_IF_ERROR(check_vector(ctx, i, names[i], p->view.len, axis_text));
  return HGR_OK;
}

static hgr_status_t infer_batch_norm(hgr__op_ctx_t* ctx, hgr__entry_t* outputs) {
  norm_t p;
  HGR_RETURN_IF_ERROR(parse_batch_norm(ctx, &p));
  set_outputs(ctx, outputs, p.view.len);
  return HGR_OK;
}

static hgr_status_t plan_batch_norm(hgr__op_ctx_t* ctx) {
  const hgr__entry_t* data = hgr__op_input(ctx, 0);
  uint32_t outputs = hgr__op_output_count(ctx);
  norm_t p;
  HGR_RETURN_IF_ERROR(parse_batch_norm(ctx, &p));
  const axis_view_t view = p.view;
  float epsilon = p.epsilon;
  bool center = p.center, scale = p.scale;

  hgr__launch_plan_t* l = hgr__op_launch(ctx, "hgr_batch_norm_f32");
  for (uint32_t i = 0; i < 5; ++i) hgr__launch_input(ctx, l, i);
  hgr__launch_output(ctx, l, 0);
  hgr__launch_uint(ctx, l, (uint32_t)data->element_count);
  hgr__launch_uint(ctx, l, view.len);
  hgr__launch_uint(ctx, l, view.inner);
  hgr__launch_float(ctx, l, epsilon);
  hgr__launch_int(ctx, l, center);
  hgr__launch_int(ctx, l, scale);
  hgr__launch_1d(ctx, l, data->element_count);
  /* Inference passes the running statistics through. */
  for (uint32_t k = 1; k < outputs; ++k) {
    l = hgr__op_launch(ctx, "hgr_norm_copy_f32");
    hgr__launch_input(ctx, l, 2 + k);
    hgr__launch_output(ctx, l, k);
    hgr__launch_uint(ctx, l, view.len);
    hgr__launch_1d(ctx, l, view.len);
  }
  return HGR_OK;
}

/* ---- lrn ------------------------------------------------------------------------------ */

/* Fewest columns (outer x inner) for which lrn walks channels by column. */
#define LRN_MIN_COLUMNS 1024

typedef struct lrn_t {
  axis_view_t view;
  int64_t size;
  float alpha, beta, bias;
} lrn_t;

/* A finite float attr. */
static hgr_status_t finite_attr(const hgr__op_ctx_t* ctx, const char* key, double fallback, float* out) {
  double value;
  HGR_RETURN_IF_ERROR(hgr__attr_float(ctx, key, fallback, &value));
  if (!(value >= -FLT_MAX && value <= FLT_MAX))
    return HGR__OP_ERROR(ctx, "attr '%s' = \"%s\" must be a finite number", key, hgr__attr_string(ctx, key, ""));
  *out = (float)value;
  return HGR_OK;
}

static hgr_status_t parse_lrn(const hgr__op_ctx_t* ctx, lrn_t* p) {
  HGR_RETURN_IF_ERROR(check_float_inputs(ctx));
  int32_t axis;
  HGR_RETURN_IF_ERROR(view_axis(ctx, 1, &axis, &p->view));
  if (!hgr__attr_string(ctx, "size", NULL)) return HGR__OP_ERROR(ctx, "attr 'size' is required");
  HGR_RETURN_IF_ERROR(hgr__attr_int(ctx, "size", 1, &p->size));
  if (p->size < 1 || p->size > INT32_MAX)
    return HGR__OP_ERROR(ctx, "attr 'size' = %lld must be at least 1", (long long)p->size);
  HGR_RETURN_IF_ERROR(finite_attr(ctx, "alpha", 1e-4, &p->alpha));
  HGR_RETURN_IF_ERROR(finite_attr(ctx, "beta", 0.75, &p->beta));
  return finite_attr(ctx, "bias", 1.0, &p->bias);
}

static hgr_status_t infer_lrn(hgr__op_ctx_t* ctx, hgr__entry_t* outputs) {
  lrn_t p;
  HGR_RETURN_IF_ERROR(parse_lrn(ctx, &p));
  set_outputs(ctx, outputs, p.view.len);
  return HGR_OK;
}

static hgr_status_t plan_lrn(hgr__op_ctx_t* ctx) {
  lrn_t p;
  HGR_RETURN_IF_ERROR(parse_lrn(ctx, &p));
  /* By columns when there are enough of them to fill the device; else one work-item
   * per element (e.g. [N, C] data, whose columns are its N rows). */
  uint64_t columns = (uint64_t)p.view.outer * p.view.inner;
  bool by_columns = columns >= LRN_MIN_COLUMNS;
  hgr__launch_plan_t* l = hgr__op_launch(ctx, by_columns ? "hgr_lrn_columns_f32" : "hgr_lrn_f32");
  hgr__launch_sibling(ctx, l, by_columns ? "hgr_lrn_f32" : "hgr_lrn_columns_f32");
  hgr__launch_input(ctx, l, 0);
  hgr__launch_output(ctx, l, 0);
  hgr__launch_uint(ctx, l, (uint32_t)(by_columns ? columns : hgr__op_input(ctx, 0)->element_count));
  hgr__launch_uint(ctx, l, p.view.len);
  hgr__launch_uint(ctx, l, p.view.inner);
  hgr__launch_int(ctx, l, (int32_t)((p.size - 1) / 2));
  hgr__launch_int(ctx, l, (int32_t)(p.size / 2));
  hgr__launch_float(ctx, l, (float)((double)p.alpha / (double)p.size));
  hgr__launch_float(ctx, l, p.beta);
  hgr__launch_float(ctx, l, p.bias);
  hgr__launch_1d(ctx, l, by_columns ? columns : hgr__op_input(ctx, 0)->element_count);
  return HGR_OK;
}

/* ---- instance_norm ---------------------------------------------------------------------- */

/* The data as [batch, before, channels, after] around the channel axis. */
typedef struct instance_t {
  uint64_t batch, before, channels, after;
  float epsilon;
  bool center, scale;
} instance_t;

static hgr_status_t parse_instance_norm(const hgr__op_ctx_t* ctx, instance_t* p) {
  HGR_RETURN_IF_ERROR(check_float_inputs(ctx));
  const hgr__entry_t* data = hgr__op_input(ctx, 0);
  if (data->ndim < 2) {
    char shape[160];
    return HGR__OP_ERROR(ctx, "input 0 'data' is shaped %s; it must have at least 2 dimensions ([N, C, ...])",
                         hgr__entry_shape(data, shape, sizeof(shape)));
  }
  int32_t axis;
  axis_view_t view;
  HGR_RETURN_IF_ERROR(view_axis(ctx, 1, &axis, &view));
  if (axis == 0)
    return HGR__OP_ERROR(ctx, "attr 'axis' = \"%s\" names the batch axis; the channel axis must be another",
                         hgr__attr_string(ctx, "axis", ""));
  HGR_RETURN_IF_ERROR(norm_attrs(ctx, &p->epsilon, &p->center, &p->scale));
  p->batch = (uint64_t)data->shape[0];
  p->before = view.outer / (p->batch ? p->batch : 1);
  if (!p->batch) p->before = 0;
  p->channels = view.len;
  p->after = view.inner;
  char axis_text[48];
  snprintf(axis_text, sizeof(axis_text), "channel, along axis %d", axis);
  HGR_RETURN_IF_ERROR(check_vector(ctx, 1, "gamma", view.len, axis_text));
  return check_vector(ctx, 2, "beta", view.len, axis_text);
}

static hgr_status_t infer_instance_norm(hgr__op_ctx_t* ctx, hgr__entry_t* outputs) {
  instance_t p;
  HGR_RETURN_IF_ERROR(parse_instance_norm(ctx, &p));
  set_outputs(ctx, outputs, (uint32_t)p.channels);
  return HGR_OK;
}

static hgr_status_t plan_instance_norm(hgr__op_ctx_t* ctx) {
  instance_t p;
  HGR_RETURN_IF_ERROR(parse_instance_norm(ctx, &p));
  /* The element count bounds every product here (view_axis checked it). */
  uint64_t rows = p.batch * p.channels, len = p.before * p.after;
  axis_view_t rows_view = {(uint32_t)rows, (uint32_t)len, 1};
  size_t group = row_group_size(ctx, &rows_view);
  if (!group) group = 1; /* a work-item per row, still through the group sums */
  hgr__launch_plan_t* l = hgr__op_launch(ctx, "hgr_instance_norm_f32");
  for (uint32_t i = 0; i < 3; ++i) hgr__launch_input(ctx, l, i);
  hgr__launch_output(ctx, l, 0);
  hgr__launch_uint(ctx, l, (uint32_t)rows);
  hgr__launch_uint(ctx, l, (uint32_t)p.before);
  hgr__launch_uint(ctx, l, (uint32_t)p.channels);
  hgr__launch_uint(ctx, l, (uint32_t)p.after);
  hgr__launch_float(ctx, l, p.epsilon);
  hgr__launch_int(ctx, l, p.center);
  hgr__launch_int(ctx, l, p.scale);
  hgr__launch_local(ctx, l, group * sizeof(float));
  launch_rows(l, (uint32_t)rows, group);
  return HGR_OK;
}

const hgr__op_t hgr__ops_norm[] = {
    {"softmax", "norm", 1, 1, 1, 1, "axis", plan_softmax, SOFTMAX, HGR__IN_PLACE_REFUSED, infer_softmax},
    {"log_softmax", "norm", 1, 1, 1, 1, "axis", plan_softmax, LOG_SOFTMAX, HGR__IN_PLACE_REFUSED, infer_softmax},
    {"layer_norm", "norm", 3, 4, 1, 2, "axis epsilon center scale", plan_layer_norm, 0, HGR__IN_PLACE_REFUSED, infer_layer_norm},
    {"batch_norm", "norm", 5, 5, 1, 3, "axis epsilon center scale", plan_batch_norm, 0, HGR__IN_PLACE_REFUSED, infer_batch_norm},
    {"lrn", "norm", 1, 1, 1, 1, "size axis alpha beta bias", plan_lrn, 0, HGR__IN_PLACE_REFUSED, infer_lrn},
    {"instance_norm", "norm", 3, 3, 1, 1, "axis epsilon center scale", plan_instance_norm, 0, HGR__IN_PLACE_REFUSED,
     infer_instance_norm},
    {.name = NULL},
};
