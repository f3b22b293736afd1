/* Ops whose output size depends on the data (kernels/compact.cl): nonzero, compress
 * and unique, ONNX's NonZero, Compress and Unique. hgr runs them in stages: the ONNX
 * importer cuts the graph after such an op, reads the count on the host and goes on
 * with the exact shape. So each data-dependent output is declared at a capacity
 * shape, an upper bound known from the input shapes (each capacity extent at least
 * 1); the kernels write the actual result compactly in its first elements, as the
 * tensor of the actual shape would lie row-major, and zeros over the rest (nothing
 * downstream reads undefined bytes); the op's last output is the count n, int32
 * shape [], the actual extent along the data-dependent axis (0 is legal).
 *
 *   nonzero   X (float32, int32 or bool; rank 1 .. HGR_MAX_DIMS) ->
 *             0 int32 [rank, cap] (cap = X's element count): the [rank, n] indices of
 *             X's nonzero elements in row-major order; 1 n. A float -0.0 is zero, NaN
 *             is not.
 *   compress  X (float32, int32 or bool; rank >= 1), cond (bool, 1-D, L <= the
 *             axis' extent; flattened: <= the element count); attr axis (absent or
 *             None: X flattened) -> 0 X's shape with the axis' extent as L (flattened
 *             [L]): X's slices along the axis where cond is true, in order; 1 n.
 *   unique    X (float32 or int32; flattened: any rank, with an axis rank >= 1);
 *             attrs sorted (1), axis (absent or None: flattened) -> 0 Y: [cap] with
 *             cap = the element count (flattened), else X's shape with the axis'
 *             extent as cap = that extent; 1 indices int32 [cap] (each unique's first
 *             occurrence); 2 inverse_indices int32 [element count] or [extent]
 *             (exact); 3 counts int32 [cap]; 4 n. sorted: ascending (slices compared
 *             lexicographically in their row-major order, as numpy.unique(axis=));
 *             else in order of first occurrence. Floats compare as values: -0.0 ==
 *             0.0 (Y keeps the first occurrence's bits); every NaN is one value,
 *             above +inf (numpy's equal_nan).
 *
 * A capacity that would be 0 is 1. The launches: a single-work-group scan selects
 * (nonzero, compress) or groups (unique) into the node's scratch, then one work-item
 * per element of the outputs writes them, result and zero tail at once. unique sorts
 * the item indices first with a bitonic network over the next power of two, one
 * launch per merge step, log2(P) (log2(P) + 1) / 2 of them (210 for a million
 * items), so it costs O(E log^2 E) slice comparisons. Local sizes come from the
 * device's limits only. Every index is a 32-bit int in the kernels: tensors hold at
 * most INT32_MAX elements. */
#include <stdio.h>
#include <string.h>

#include "ops.h"

enum { NONZERO, COMPRESS, UNIQUE };

/* Work-groups of the single-group scans: wider ones add nothing on CPUs, and GPUs
 * take 256 everywhere. */
#define GROUP_MAX 256

/* kernels/compact.cl's select masks: what counts as nonzero. */
#define MASK_F32 0x7fffffffu /* -0.0 is zero, NaN is not */
#define MASK_I32 0xffffffffu
#define MASK_BOOL 0xffu

static bool is_bool(hgr_dtype_t dtype) { return dtype.code == HGR_DTYPE_UINT && dtype.bits == 1 && dtype.lanes == 1; }

/* Input index (called name) is float32 or int32 (or bool where allowed), has at
 * least min_rank dims and fits int indices. */
static hgr_status_t check_data(const hgr__op_ctx_t* ctx, uint32_t index, const char* name, bool allow_bool,
                               int32_t min_rank) {
  const hgr__entry_t* x = hgr__op_input(ctx, index);
  if (!hgr__dtype_is_f32(x->dtype) && !hgr__dtype_is_i32(x->dtype) && !(allow_bool && is_bool(x->dtype))) {
    char text[32];
    return HGR__OP_ERROR(ctx, "input %u '%s' (entry %u) is %s; the op supports float32, int32%s", index, name,
                         hgr__op_entry_id(ctx, x), hgr_dtype_format(x->dtype, text, sizeof(text)),
                         allow_bool ? " and bool" : "");
  }
  if (x->ndim < min_rank) {
    char shape[160];
    return HGR__OP_ERROR(ctx, "input %u '%s' (entry %u) is shaped %s; the op takes rank %d or more", index, name,
                         hgr__op_entry_id(ctx, x), hgr__entry_shape(x, shape, sizeof(shape)), min_rank);
  }
  char what[64];
  snprintf(what, sizeof(what), "input %u '%s''s element count", index, name);
  return hgr__op_check_range(ctx, what, x->element_count, INT32_MAX);
}

static int64_t at_least_one(int64_t extent) { return extent > 0 ? extent : 1; }

/* Whether an attr's value means None. */
static bool is_none(const char* value) {
  while (*value == ' ') ++value;
  return !*value || !strcmp(value, "None") || !strcmp(value, "null");
}

/* X viewed as [outer, extent, inner] around attr 'axis' (absent or None: flattened,
 * [1, element count, 1], axis -1). */
typedef struct axis_view_t {
  int32_t axis;
  uint32_t outer, extent, inner;
} axis_view_t;

static hgr_status_t axis_view(const hgr__op_ctx_t* ctx, const hgr__entry_t* x, axis_view_t* v) {
  v->axis = -1;
  v->outer = v->inner = 1;
  v->extent = (uint32_t)x->element_count;
  if (is_none(hgr__attr_string(ctx, "axis", "None"))) return HGR_OK;
  int64_t axis;
  HGR_RETURN_IF_ERROR(hgr__attr_int(ctx, "axis", 0, &axis));
  HGR_RETURN_IF_ERROR(hgr__op_axis(ctx, "axis", axis, x->ndim, &v->axis));
  /* each factor is at most the element count, or the count is 0 and the view empty */
  uint64_t outer = 1, inner = 1;
  for (int32_t d = 0; d < v->axis; ++d) outer = hgr__mul_saturating(outer, (uint64_t)x->shape[d]);
  for (int32_t d = v->axis + 1; d < x->ndim; ++d) inner = hgr__mul_saturating(inner, (uint64_t)x->shape[d]);
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "input 0's dims", x->shape[v->axis], INT32_MAX));
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "input 0's dims before the axis", outer, INT32_MAX));
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "input 0's dims after the axis", inner, INT32_MAX));
  v->outer = (uint32_t)outer;
  v->extent = (uint32_t)x->shape[v->axis];
  v->inner = (uint32_t)inner;
  return HGR_OK;
}

/* X's shape with the axis' extent as extent (flattened: [extent]). */
static int32_t shape_along(const hgr__entry_t* x, const axis_view_t* v, int64_t extent, int64_t* shape) {
  if (v->axis < 0) {
    shape[0] = extent;
    return 1;
  }
  memcpy(shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
  shape[v->axis] = extent;
  return x->ndim;
}

static void set_count(hgr__entry_t* output) { hgr__op_set_output(output, HGR__DTYPE_I32, NULL, 0); }

/* The single-group scans' work-group: a power of two within the device's limits. */
static hgr_status_t group_size(const hgr__op_ctx_t* ctx, size_t* out_size) {
  size_t cap = ctx->limits.max_work_group;
  if (ctx->limits.max_work_item[0] && ctx->limits.max_work_item[0] < cap) cap = ctx->limits.max_work_item[0];
  if (cap > GROUP_MAX) cap = GROUP_MAX;
  while (cap > 1 && cap * sizeof(cl_uint) > ctx->limits.local_mem_bytes) cap /= 2;
  if (cap * sizeof(cl_uint) > ctx->limits.local_mem_bytes)
    return HGR__OP_ERROR(ctx, "the device has %llu bytes of local memory; the op's scan needs %zu",
                         (unsigned long long)ctx->limits.local_mem_bytes, sizeof(cl_uint));
  size_t size = 1;
  while (size * 2 <= cap) size *= 2;
  *out_size = size;
  return HGR_OK;
}

/* One single-group launch of kernel: global = local = the group size. */
static hgr__launch_plan_t* scan_launch(hgr__op_ctx_t* ctx, const char* kernel, size_t group) {
  hgr__launch_plan_t* l = hgr__op_launch(ctx, kernel);
  size_t global[1] = {group}, local[1] = {group};
  hgr__launch_nd(l, 1, global, local);
  return l;
}

/* The select launch: input index's nonzero elements into the scratch and output
 * count_output. */
static void plan_select(hgr__op_ctx_t* ctx, uint32_t index, uint32_t count_output, uint64_t scratch, size_t group) {
  const hgr__entry_t* in = hgr__op_input(ctx, index);
  bool bytes = is_bool(in->dtype);
  hgr__launch_plan_t* l = scan_launch(ctx, bytes ? "hgr_compact_select_u8" : "hgr_compact_select_u32", group);
  hgr__launch_input(ctx, l, index);
  hgr__launch_uint(ctx, l, bytes ? MASK_BOOL : hgr__dtype_is_f32(in->dtype) ? MASK_F32 : MASK_I32);
  hgr__launch_uint(ctx, l, (uint32_t)in->element_count);
  hgr__launch_scratch(ctx, l, scratch);
  hgr__launch_output(ctx, l, count_output);
  hgr__launch_local(ctx, l, group * sizeof(cl_uint));
}

/* ---- nonzero --------------------------------------------------------------------------- */

static hgr_status_t infer_nonzero(hgr__op_ctx_t* ctx, hgr__entry_t* outputs) {
  HGR_RETURN_IF_ERROR(check_data(ctx, 0, "x", true, 1));
  const hgr__entry_t* x = hgr__op_input(ctx, 0);
  int64_t shape[2] = {x->ndim, at_least_one((int64_t)x->element_count)};
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "rank x element count", (uint64_t)(shape[0] * shape[1]), INT32_MAX));
  hgr__op_set_output(&outputs[0], HGR__DTYPE_I32, shape, 2);
  set_count(&outputs[1]);
  return HGR_OK;
}

static hgr_status_t plan_nonzero(hgr__op_ctx_t* ctx) {
  const hgr__entry_t* x = hgr__op_input(ctx, 0);
  const hgr__entry_t* out = hgr__op_output(ctx, 0);
  size_t group = 0; /* set by group_size (Release builds cannot tell) */
  HGR_RETURN_IF_ERROR(group_size(ctx, &group));
  uint64_t scratch = (1 + x->element_count) * sizeof(int32_t);
  plan_select(ctx, 0, 1, scratch, group);
  hgr__launch_plan_t* l = hgr__op_launch(ctx, "hgr_compact_nonzero_coords");
  hgr__launch_scratch(ctx, l, scratch);
  hgr__launch_output(ctx, l, 0);
  hgr__launch_meta_arg(ctx, l);
  /* strides, then dims; a stride past an empty dim is never used (n is 0) */
  int64_t stride = 1;
  int32_t strides[HGR_MAX_DIMS];
  for (int32_t d = x->ndim - 1; d >= 0; --d) {
    strides[d] = (int32_t)(stride > INT32_MAX ? INT32_MAX : stride);
    stride *= x->shape[d] > 0 ? x->shape[d] : 1;
    if (stride > INT32_MAX) stride = (int64_t)INT32_MAX + 1;
  }
  hgr__launch_meta(ctx, l, strides, (uint32_t)x->ndim);
  for (int32_t d = 0; d < x->ndim; ++d) hgr__launch_meta1(ctx, l, (int32_t)(x->shape[d] > 0 ? x->shape[d] : 1));
  hgr__launch_int(ctx, l, x->ndim);
  hgr__launch_uint(ctx, l, (uint32_t)out->element_count);
  hgr__launch_1d(ctx, l, out->element_count);
  return HGR_OK;
}

/* ---- compress -------------------------------------------------------------------------- */

static hgr_status_t parse_compress(const hgr__op_ctx_t* ctx, axis_view_t* v) {
  HGR_RETURN_IF_ERROR(check_data(ctx, 0, "x", true, 1));
  const hgr__entry_t* x = hgr__op_input(ctx, 0);
  const hgr__entry_t* cond = hgr__op_input(ctx, 1);
  if (!is_bool(cond->dtype) || cond->ndim != 1) {
    char text[32], shape[160];
    return HGR__OP_ERROR(ctx, "input 1 'condition' (entry %u) is %s %s; the op takes a 1-D bool tensor",
                         hgr__op_entry_id(ctx, cond), hgr_dtype_format(cond->dtype, text, sizeof(text)),
                         hgr__entry_shape(cond, shape, sizeof(shape)));
  }
  HGR_RETURN_IF_ERROR(axis_view(ctx, x, v));
  if ((uint64_t)cond->shape[0] > v->extent) {
    if (v->axis < 0)
      return HGR__OP_ERROR(ctx, "input 1 'condition' has %lld elements, more than the %u of input 0 'x' flattened",
                           (long long)cond->shape[0], v->extent);
    return HGR__OP_ERROR(ctx, "input 1 'condition' has %lld elements, more than the %u of axis %d of input 0 'x'",
                         (long long)cond->shape[0], v->extent, v->axis);
  }
  return HGR_OK;
}

static hgr_status_t infer_compress(hgr__op_ctx_t* ctx, hgr__entry_t* outputs) {
  axis_view_t v;
  HGR_RETURN_IF_ERROR(parse_compress(ctx, &v));
  const hgr__entry_t* x = hgr__op_input(ctx, 0);
  int64_t shape[HGR_MAX_DIMS];
  int32_t ndim = shape_along(x, &v, at_least_one(hgr__op_input(ctx, 1)->shape[0]), shape);
  hgr__op_set_output(&outputs[0], x->dtype, shape, ndim);
  set_count(&outputs[1]);
  return HGR_OK;
}

static hgr_status_t plan_compress(hgr__op_ctx_t* ctx) {
  axis_view_t v;
  HGR_RETURN_IF_ERROR(parse_compress(ctx, &v));
  const hgr__entry_t* out = hgr__op_output(ctx, 0);
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "output 0's element count", out->element_count, INT32_MAX));
  size_t group = 0; /* set by group_size (Release builds cannot tell) */
  HGR_RETURN_IF_ERROR(group_size(ctx, &group));
  uint64_t scratch = (1 + (uint64_t)hgr__op_input(ctx, 1)->shape[0]) * sizeof(int32_t);
  plan_select(ctx, 1, 1, scratch, group);
  bool bytes = is_bool(hgr__op_input(ctx, 0)->dtype);
  hgr__launch_plan_t* l = hgr__op_launch(ctx, bytes ? "hgr_compact_compress_u8" : "hgr_compact_compress_u32");
  hgr__launch_input(ctx, l, 0);
  hgr__launch_scratch(ctx, l, scratch);
  hgr__launch_output(ctx, l, 0);
  hgr__launch_uint(ctx, l, v.outer);
  hgr__launch_uint(ctx, l, v.extent);
  hgr__launch_uint(ctx, l, v.inner);
  hgr__launch_uint(ctx, l, (uint32_t)out->element_count);
  hgr__launch_1d(ctx, l, out->element_count);
  return HGR_OK;
}

/* ---- unique ---------------------------------------------------------------------------- */

/* The scratch's lists (ints; kernels/compact.cl): [0] n, then perm [padded], group
 * [extent], start [extent + 1], final [extent], group_of [extent]. */
typedef struct unique_t {
  axis_view_t view;
  bool sorted;
  uint32_t slice; /* values per item: outer x inner */
  uint64_t padded;
  uint32_t perm, group, start, final, group_of;
  uint64_t scratch_bytes;
} unique_t;

static hgr_status_t parse_unique(const hgr__op_ctx_t* ctx, unique_t* p) {
  memset(p, 0, sizeof(*p));
  HGR_RETURN_IF_ERROR(check_data(ctx, 0, "x", false, 0));
  const hgr__entry_t* x = hgr__op_input(ctx, 0);
  int64_t sorted;
  HGR_RETURN_IF_ERROR(hgr__attr_int(ctx, "sorted", 1, &sorted));
  if (sorted != 0 && sorted != 1)
    return HGR__OP_ERROR(ctx, "attr 'sorted' = %lld must be 0 (order of first occurrence) or 1 (ascending)",
                         (long long)sorted);
  p->sorted = sorted == 1;
  HGR_RETURN_IF_ERROR(axis_view(ctx, x, &p->view));
  p->slice = p->view.outer * p->view.inner; /* at most the element count, or 0 */
  if (x->element_count == 0) p->slice = 0;
  uint64_t extent = p->view.extent;
  p->padded = 1;
  while (p->padded < extent) p->padded *= 2;
  p->perm = 1;
  uint64_t group = p->perm + p->padded, start = group + extent, final = start + extent + 1;
  uint64_t group_of = final + extent, end = group_of + extent;
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "the op's scratch ints (about 6 per item)", end, UINT32_MAX));
  p->group = (uint32_t)group, p->start = (uint32_t)start, p->final = (uint32_t)final;
  p->group_of = (uint32_t)group_of;
  p->scratch_bytes = end * sizeof(int32_t);
  return HGR_OK;
}

static hgr_status_t infer_unique(hgr__op_ctx_t* ctx, hgr__entry_t* outputs) {
  unique_t p;
  HGR_RETURN_IF_ERROR(parse_unique(ctx, &p));
  const hgr__entry_t* x = hgr__op_input(ctx, 0);
  int64_t cap = at_least_one(p.view.extent), shape[HGR_MAX_DIMS], extent = p.view.extent;
  int32_t ndim = shape_along(x, &p.view, cap, shape);
  hgr__op_set_output(&outputs[0], x->dtype, shape, ndim);
  hgr__op_set_output(&outputs[1], HGR__DTYPE_I32, &cap, 1);
  hgr__op_set_output(&outputs[2], HGR__DTYPE_I32, &extent, 1);
  hgr__op_set_output(&outputs[3], HGR__DTYPE_I32, &cap, 1);
  set_count(&outputs[4]);
  return HGR_OK;
}

/* The arguments every unique kernel that compares items takes first. */
static void item_args(hgr__op_ctx_t* ctx, hgr__launch_plan_t* l, const unique_t* p) {
  hgr__launch_input(ctx, l, 0);
  hgr__launch_int(ctx, l, hgr__dtype_is_f32(hgr__op_input(ctx, 0)->dtype));
  hgr__launch_uint(ctx, l, p->view.extent);
  hgr__launch_uint(ctx, l, p->view.inner);
  hgr__launch_uint(ctx, l, p->slice);
  hgr__launch_scratch(ctx, l, p->scratch_bytes);
}

static hgr_status_t plan_unique(hgr__op_ctx_t* ctx) {
  unique_t p;
  HGR_RETURN_IF_ERROR(parse_unique(ctx, &p));
  HGR_RETURN_IF_ERROR(
      hgr__op_check_range(ctx, "output 0's element count", hgr__op_output(ctx, 0)->element_count, INT32_MAX));
  size_t group = 0; /* set by group_size (Release builds cannot tell) */
  HGR_RETURN_IF_ERROR(group_size(ctx, &group));
  hgr__launch_plan_t* l = hgr__op_launch(ctx, "hgr_compact_unique_init");
  hgr__launch_scratch(ctx, l, p.scratch_bytes);
  hgr__launch_uint(ctx, l, p.perm);
  hgr__launch_uint(ctx, l, (uint32_t)p.padded);
  hgr__launch_1d(ctx, l, p.padded);
  /* the bitonic network: merge blocks of 2, 4, ... padded, each in steps of halving stride */
  for (uint64_t block = 2; block <= p.padded; block *= 2)
    for (uint64_t stride = block / 2; stride > 0; stride /= 2) {
      l = hgr__op_launch(ctx, "hgr_compact_unique_sort");
      item_args(ctx, l, &p);
      hgr__launch_uint(ctx, l, p.perm);
      hgr__launch_uint(ctx, l, (uint32_t)block);
      hgr__launch_uint(ctx, l, (uint32_t)stride);
      hgr__launch_uint(ctx, l, (uint32_t)(p.padded / 2));
      hgr__launch_1d(ctx, l, p.padded / 2);
    }
  l = scan_launch(ctx, "hgr_compact_unique_groups", group);
  item_args(ctx, l, &p);
  hgr__launch_uint(ctx, l, p.perm);
  hgr__launch_uint(ctx, l, p.group);
  hgr__launch_uint(ctx, l, p.start);
  hgr__launch_output(ctx, l, 4);
  hgr__launch_local(ctx, l, group * sizeof(cl_uint));
  l = scan_launch(ctx, "hgr_compact_unique_order", group);
  hgr__launch_scratch(ctx, l, p.scratch_bytes);
  hgr__launch_uint(ctx, l, p.view.extent);
  hgr__launch_uint(ctx, l, p.perm);
  hgr__launch_uint(ctx, l, p.group);
  hgr__launch_uint(ctx, l, p.start);
  hgr__launch_uint(ctx, l, p.final);
  hgr__launch_uint(ctx, l, p.group_of);
  hgr__launch_int(ctx, l, p.sorted);
  hgr__launch_local(ctx, l, group * sizeof(cl_uint));
  uint64_t y_total = hgr__op_output(ctx, 0)->element_count, cap = at_least_one(p.view.extent);
  uint64_t n_total = y_total > cap ? y_total : cap;
  l = hgr__op_launch(ctx, "hgr_compact_unique_write");
  hgr__launch_input(ctx, l, 0);
  hgr__launch_scratch(ctx, l, p.scratch_bytes);
  for (uint32_t k = 0; k < 4; ++k) hgr__launch_output(ctx, l, k); /* y, indices, inverse, counts */
  hgr__launch_uint(ctx, l, p.view.outer);
  hgr__launch_uint(ctx, l, p.view.extent);
  hgr__launch_uint(ctx, l, p.view.inner);
  hgr__launch_uint(ctx, l, (uint32_t)cap);
  hgr__launch_uint(ctx, l, (uint32_t)y_total);
  hgr__launch_uint(ctx, l, (uint32_t)n_total);
  hgr__launch_uint(ctx, l, p.perm);
  hgr__launch_uint(ctx, l, p.group);
  hgr__launch_uint(ctx, l, p.start);
  hgr__launch_uint(ctx, l, p.final);
  hgr__launch_uint(ctx, l, p.group_of);
  hgr__launch_1d(ctx, l, n_total);
  return HGR_OK;
}

const hgr__op_t hgr__ops_compact[] = {
    {"nonzero", "compact", 1, 1, 2, 2, "", plan_nonzero, NONZERO, HGR__IN_PLACE_REFUSED, infer_nonzero},
    {"compress", "compact", 2, 2, 2, 2, "axis", plan_compress, COMPRESS, HGR__IN_PLACE_REFUSED, infer_compress},
    {"unique", "compact", 1, 1, 5, 5, "sorted axis", plan_unique, UNIQUE, HGR__IN_PLACE_REFUSED, infer_unique},
    {.name = NULL},
};
