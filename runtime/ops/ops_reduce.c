/* Reductions sum, mean, max, min, prod (kernels/reduce.cl), with Relay's attrs: axis (an
 * int or a list, negatives from the end; absent, "None" or "[]" reduce every axis,
 * whatever exclude says, as Relay's GetReduceAxes does), keepdims (keep reduced axes
 * as extents of 1) and exclude (reduce the axes NOT listed). An axis listed twice or
 * out of range is an error. float32; int32 too for sum, max, min and prod (sums and
 * products wrap). prod over zero elements is 1.
 *
 * argmax and argmin (Relay's; ONNX ArgMax / ArgMin) reduce one axis to the int32
 * index of its largest / smallest element: attrs axis (one int; absent: every
 * element, flattened), keepdims (False), exclude (False; True is refused),
 * select_last_index (False: the first of equal extremes; True: the last). float32 or
 * int32 data; a NaN counts as the extreme (NumPy's: the first NaN, or the last with
 * select_last_index). The axis must not be empty.
 *
 * topk (Relay's; ONNX TopK): the k largest (is_ascend False) or smallest (True)
 * elements along axis (-1), sorted, as two outputs: values (the data's dtype,
 * float32 or int32) and int32 indices, shaped like the data with k along the axis.
 * Equal values come in index order (lower first); NaN sorts above every number.
 * Attrs k (required, 0 <= k <= the axis' extent), axis (-1), ret_type ("both"
 * only), is_ascend (False), dtype ("int32" only). One work-item per input element
 * counts the elements ranked before it and, when that rank is below k, writes itself
 * there (O(len) per element: rows are short in models).
 *
 * Dimensions of extent 1 are dropped and adjacent kept or reduced ones merged, so
 * the common cases (one axis, trailing axes, all axes) become one reduced block:
 * [outer, len, inner]. With inner 1 and a long enough block, a work-group reduces
 * each row in local memory; otherwise a work-item loops over each output's block.
 * Anything else (reduced blocks separated by kept ones) goes to a kernel that
 * decodes the layout from a meta buffer. */
#include <stdio.h>
#include <string.h>

#include "ops.h"

enum { SUM, MEAN, MAX, MIN, PROD };
static const char* const op_names[] = {"sum", "mean", "max", "min", "prod"};

/* Rows at least this long get a work-group each; shorter ones a work-item each. */
#define ROW_KERNEL_MIN_LEN 32
/* The row kernel's work-group, whatever the row's length (a local size that
 * followed the length made PoCL compile a work-group function at a new sequence
 * length): wider ones only add tree levels, and rows of 32 leave half idle. */
#define ROW_GROUP_MAX 64


/* A run of adjacent dimensions, all kept or all reduced. */
typedef struct block_t {
  bool reduced;
  uint64_t extent;
  uint64_t stride; /* of its innermost dimension, in elements */
} block_t;

/* The power-of-two work-group size of the row kernel for rows of len elements, or 0
 * when the column kernel should run instead: within the device's limits and
 * ROW_GROUP_MAX, its scratch (4 bytes per work-item) in half the local memory. */
static size_t row_group_size(const hgr__op_ctx_t* ctx, uint64_t len) {
  if (len < ROW_KERNEL_MIN_LEN) return 0;
  size_t cap = ctx->limits.max_work_group;
  if (ctx->limits.max_work_item[0] < cap) cap = ctx->limits.max_work_item[0];
  if (cap > ROW_GROUP_MAX) cap = ROW_GROUP_MAX;
  uint64_t local_items = ctx->limits.local_mem_bytes / 2 / 4;
  if (local_items == 0) return 0;
  size_t size = 1;
  while (size * 2 <= cap && size * 2 <= local_items) size *= 2;
  return size;
}

/* Which axes to reduce, from the attrs. */
static hgr_status_t reduced_axes(const hgr__op_ctx_t* ctx, int32_t ndim, bool* reduced) {
  int64_t axes[2 * HGR_MAX_DIMS];
  uint32_t count;
  bool present, exclude;
  HGR_RETURN_IF_ERROR(hgr__attr_ints(ctx, "axis", axes, 2 * HGR_MAX_DIMS, &count, &present));
  HGR_RETURN_IF_ERROR(hgr__attr_bool(ctx, "exclude", false, &exclude));
  if (!present || count == 0) {
    for (int32_t d = 0; d < ndim; ++d) reduced[d] = true;
    return HGR_OK;
  }
  bool listed[HGR_MAX_DIMS] = {false};
  for (uint32_t k = 0; k < count; ++k) {
    int32_t axis;
    HGR_RETURN_IF_ERROR(hgr__op_axis(ctx, "axis", axes[k], ndim, &axis));
    if (listed[axis])
      return HGR__OP_ERROR(ctx, "attr 'axis' = \"%s\" names axis %d twice", hgr__attr_string(ctx, "axis", ""),
                           axis);
    listed[axis] = true;
  }
  for (int32_t d = 0; d < ndim; ++d) reduced[d] = exclude ? !listed[d] : listed[d];
  return HGR_OK;
}

/* The kernel name for this op, layout (rows, cols, general) and dtype. */
static void kernel_name(const hgr__op_ctx_t* ctx, const char* layout, bool is_int, char* buffer, size_t capacity) {
  snprintf(buffer, capacity, "hgr_reduce_%s_%s_%s", layout, op_names[ctx->op->variant], is_int ? "i32" : "f32");
}

/* Names the reduction's kernels of the other layouts as l's siblings: which one a
 * reduction takes follows the sizes of its blocks (rows where the reduced block is
 * innermost and long, general where dims of 1 do not merge the blocks). */
static void add_siblings(hgr__op_ctx_t* ctx, hgr__launch_plan_t* l, bool is_int) {
  static const char* const layouts[] = {"rows", "cols", "general"};
  for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); ++i) {
    char kernel[64];
    kernel_name(ctx, layouts[i], is_int, kernel, sizeof(kernel));
    hgr__launch_sibling(ctx, l, kernel);
  }
}

/* What a reduction computes: which axes it reduces, the output's shape, and the
 * element counts of the output and of each reduced block. */
typedef struct reduction_t {
  bool reduced[HGR_MAX_DIMS];
  int64_t shape[HGR_MAX_DIMS];
  int32_t ndim;
  uint64_t out_count, reduced_count;
} reduction_t;

static hgr_status_t parse_reduce(const hgr__op_ctx_t* ctx, reduction_t* r) {
  const hgr__entry_t* data = hgr__op_input(ctx, 0);
  HGR_RETURN_IF_ERROR(hgr__op_check_dtype(ctx, 0, -1, ctx->op->variant != MEAN));
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "the data's element count", data->element_count, INT32_MAX));
  bool keepdims;
  HGR_RETURN_IF_ERROR(reduced_axes(ctx, data->ndim, r->reduced));
  HGR_RETURN_IF_ERROR(hgr__attr_bool(ctx, "keepdims", false, &keepdims));
  r->ndim = 0;
  r->out_count = r->reduced_count = 1;
  for (int32_t d = 0; d < data->ndim; ++d) {
    if (!r->reduced[d]) r->shape[r->ndim++] = data->shape[d];
    else if (keepdims) r->shape[r->ndim++] = 1;
    if (r->reduced[d]) r->reduced_count = hgr__mul_saturating(r->reduced_count, (uint64_t)data->shape[d]);
    else r->out_count = hgr__mul_saturating(r->out_count, (uint64_t)data->shape[d]);
  }
  /* With a zero extent, the other product is not bounded by the element count. */
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "the number of reduced elements", r->reduced_count, INT32_MAX));
  return hgr__op_check_range(ctx, "the output's element count", r->out_count, INT32_MAX);
}

static hgr_status_t infer_reduce(hgr__op_ctx_t* ctx, hgr__entry_t* outputs) {
  reduction_t r;
  HGR_RETURN_IF_ERROR(parse_reduce(ctx, &r));
  hgr__op_set_output(&outputs[0], hgr__op_input(ctx, 0)->dtype, r.shape, r.ndim);
  return HGR_OK;
}

static hgr_status_t plan_reduce(hgr__op_ctx_t* ctx) {
  const hgr__entry_t* data = hgr__op_input(ctx, 0);
  reduction_t r;
  HGR_RETURN_IF_ERROR(parse_reduce(ctx, &r));
  bool is_int = hgr__dtype_is_i32(data->dtype);
  const bool* reduced = r.reduced;
  uint64_t out_count = r.out_count, reduced_count = r.reduced_count;

  /* Blocks, outermost first, built from the innermost dimension out, so a block's
   * stride is that of the dimension that started it, its innermost. Extents of 1
   * change no offset, so they are left out (and their neighbours may merge). */
  block_t blocks[HGR_MAX_DIMS];
  int32_t block_count = 0, reduced_blocks = 0;
  uint64_t stride = 1;
  for (int32_t d = data->ndim - 1; d >= 0; --d) {
    uint64_t extent = (uint64_t)data->shape[d];
    if (extent != 1) {
      if (block_count && blocks[0].reduced == reduced[d]) {
        blocks[0].extent = hgr__mul_saturating(blocks[0].extent, extent);
      } else {
        memmove(blocks + 1, blocks, (size_t)block_count * sizeof(block_t));
        blocks[0] = (block_t){reduced[d], extent, stride};
        ++block_count;
        reduced_blocks += reduced[d];
      }
    }
    stride *= extent;
  }

  char kernel[64];
  if (reduced_blocks <= 1) {
    uint64_t outer = 1, len = 1, inner = 1;
    bool after = false;
    for (int32_t b = 0; b < block_count; ++b) {
      if (blocks[b].reduced) {
        len = blocks[b].extent;
        after = true;
      } else if (after) {
        inner *= blocks[b].extent;
      } else {
        outer *= blocks[b].extent;
      }
    }
    size_t group = inner == 1 ? row_group_size(ctx, len) : 0;
    kernel_name(ctx, group ? "rows" : "cols", is_int, kernel, sizeof(kernel));
    hgr__launch_plan_t* l = hgr__op_launch(ctx, kernel);
    add_siblings(ctx, l, is_int);
    hgr__launch_input(ctx, l, 0);
    hgr__launch_output(ctx, l, 0);
    hgr__launch_uint(ctx, l, (uint32_t)outer);
    hgr__launch_uint(ctx, l, (uint32_t)len);
    if (group) {
      hgr__launch_local(ctx, l, group * 4);
      size_t global[1] = {(size_t)outer * group}, local[1] = {group};
      hgr__launch_nd(l, 1, global, local);
    } else {
      hgr__launch_uint(ctx, l, (uint32_t)inner);
      hgr__launch_1d(ctx, l, out_count);
    }
    return HGR_OK;
  }

  kernel_name(ctx, "general", is_int, kernel, sizeof(kernel));
  hgr__launch_plan_t* l = hgr__op_launch(ctx, kernel);
  add_siblings(ctx, l, is_int);
  hgr__launch_input(ctx, l, 0);
  hgr__launch_output(ctx, l, 0);
  hgr__launch_uint(ctx, l, (uint32_t)out_count);
  hgr__launch_uint(ctx, l, (uint32_t)reduced_count);
  hgr__launch_meta_arg(ctx, l);
  hgr__launch_meta1(ctx, l, block_count - reduced_blocks);
  hgr__launch_meta1(ctx, l, reduced_blocks);
  for (int pass = 0; pass < 2; ++pass)
    for (int32_t b = block_count - 1; b >= 0; --b) {
      if (blocks[b].reduced != (pass == 1)) continue;
      int32_t pair[2] = {(int32_t)blocks[b].extent, (int32_t)blocks[b].stride};
      hgr__launch_meta(ctx, l, pair, 2);
    }
  hgr__launch_1d(ctx, l, out_count);
  return HGR_OK;
}

/* ---- argmax, argmin, topk ------------------------------------------------------------ */

/* The data viewed as [outer, len, inner] around one axis. */
typedef struct axis_view_t {
  uint64_t outer, len, inner;
} axis_view_t;

static void view_around(const hgr__entry_t* data, int32_t axis, axis_view_t* v) {
  v->outer = v->inner = 1;
  for (int32_t d = 0; d < axis; ++d) v->outer = hgr__mul_saturating(v->outer, (uint64_t)data->shape[d]);
  for (int32_t d = axis + 1; d < data->ndim; ++d) v->inner = hgr__mul_saturating(v->inner, (uint64_t)data->shape[d]);
  v->len = (uint64_t)data->shape[axis];
}

static hgr_status_t check_view(const hgr__op_ctx_t* ctx, const axis_view_t* v) {
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "the extent before the axis", v->outer, INT32_MAX));
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "the extent after the axis", v->inner, INT32_MAX));
  return hgr__op_check_range(ctx, "the axis' extent", v->len, INT32_MAX);
}

typedef struct arg_reduce_t {
  axis_view_t view;
  bool select_last;
  int64_t shape[HGR_MAX_DIMS];
  int32_t ndim;
} arg_reduce_t;

static hgr_status_t parse_arg_reduce(const hgr__op_ctx_t* ctx, arg_reduce_t* r) {
  const hgr__entry_t* data = hgr__op_input(ctx, 0);
  HGR_RETURN_IF_ERROR(hgr__op_check_dtype(ctx, 0, -1, true));
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "the data's element count", data->element_count, INT32_MAX));
  int64_t axes[2];
  uint32_t count;
  bool present, keepdims, exclude;
  HGR_RETURN_IF_ERROR(hgr__attr_ints(ctx, "axis", axes, 2, &count, &present));
  if (present && count > 1)
    return HGR__OP_ERROR(ctx, "attr 'axis' = \"%s\" names %u axes; %s takes one", hgr__attr_string(ctx, "axis", ""),
                         count, ctx->op->name);
  HGR_RETURN_IF_ERROR(hgr__attr_bool(ctx, "keepdims", false, &keepdims));
  HGR_RETURN_IF_ERROR(hgr__attr_bool(ctx, "exclude", false, &exclude));
  if (exclude) return HGR__OP_ERROR(ctx, "attr 'exclude' = \"%s\" is not supported; hgr takes False",
                                    hgr__attr_string(ctx, "exclude", ""));
  HGR_RETURN_IF_ERROR(hgr__attr_bool(ctx, "select_last_index", false, &r->select_last));
  r->ndim = 0;
  if (present && count == 1) {
    int32_t axis;
    HGR_RETURN_IF_ERROR(hgr__op_axis(ctx, "axis", axes[0], data->ndim, &axis));
    view_around(data, axis, &r->view);
    for (int32_t d = 0; d < data->ndim; ++d)
      if (d != axis) r->shape[r->ndim++] = data->shape[d];
      else if (keepdims) r->shape[r->ndim++] = 1;
  } else {
    /* every element, flattened */
    r->view = (axis_view_t){1, data->element_count, 1};
    for (int32_t d = 0; keepdims && d < data->ndim; ++d) r->shape[r->ndim++] = 1;
  }
  HGR_RETURN_IF_ERROR(check_view(ctx, &r->view));
  if (r->view.len == 0) {
    char shape[160];
    return HGR__OP_ERROR(ctx, "the data %s is empty along the reduced axis; %s needs at least one element",
                         hgr__entry_shape(data, shape, sizeof(shape)), ctx->op->name);
  }
  return HGR_OK;
}

static hgr_status_t infer_arg_reduce(hgr__op_ctx_t* ctx, hgr__entry_t* outputs) {
  arg_reduce_t r;
  HGR_RETURN_IF_ERROR(parse_arg_reduce(ctx, &r));
  hgr__op_set_output(&outputs[0], HGR__DTYPE_I32, r.shape, r.ndim);
  return HGR_OK;
}

static hgr_status_t plan_arg_reduce(hgr__op_ctx_t* ctx) {
  arg_reduce_t r;
  HGR_RETURN_IF_ERROR(parse_arg_reduce(ctx, &r));
  char kernel[64];
  snprintf(kernel, sizeof(kernel), "hgr_%s_%s", ctx->op->name,
           hgr__dtype_is_i32(hgr__op_input(ctx, 0)->dtype) ? "i32" : "f32");
  hgr__launch_plan_t* l = hgr__op_launch(ctx, kernel);
  hgr__launch_input(ctx, l, 0);
  hgr__launch_output(ctx, l, 0);
  hgr__launch_uint(ctx, l, (uint32_t)r.view.outer);
  hgr__launch_uint(ctx, l, (uint32_t)r.view.len);
  hgr__launch_uint(ctx, l, (uint32_t)r.view.inner);
  hgr__launch_int(ctx, l, r.select_last);
  hgr__launch_1d(ctx, l, r.view.outer * r.view.inner);
  return HGR_OK;
}

typedef struct topk_t {
  axis_view_t view;
  int32_t axis;
  int64_t k;
  bool ascend;
} topk_t;

static hgr_status_t parse_topk(const hgr__op_ctx_t* ctx, topk_t* p) {
  static const char* const ret_types[] = {"both", NULL};
  static const char* const dtypes[] = {"int32", NULL};
  const hgr__entry_t* data = hgr__op_input(ctx, 0);
  HGR_RETURN_IF_ERROR(hgr__op_check_dtype(ctx, 0, -1, true));
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "the data's element count", data->element_count, INT32_MAX));
  const char* choice;
  HGR_RETURN_IF_ERROR(hgr__attr_choice(ctx, "ret_type", "both", ret_types, &choice));
  HGR_RETURN_IF_ERROR(hgr__attr_choice(ctx, "dtype", "int32", dtypes, &choice));
  if (hgr__op_output_count(ctx) != 2)
    return HGR__OP_ERROR(ctx, "has 2 outputs (values and indices, ret_type \"both\"), the node has %u",
                         hgr__op_output_count(ctx));
  HGR_RETURN_IF_ERROR(hgr__attr_bool(ctx, "is_ascend", false, &p->ascend));
  int64_t axis;
  HGR_RETURN_IF_ERROR(hgr__attr_int(ctx, "axis", -1, &axis));
  HGR_RETURN_IF_ERROR(hgr__op_axis(ctx, "axis", axis, data->ndim, &p->axis));
  view_around(data, p->axis, &p->view);
  HGR_RETURN_IF_ERROR(check_view(ctx, &p->view));
  if (!hgr__attr_string(ctx, "k", NULL)) return HGR__OP_ERROR(ctx, "attr 'k' is required");
  HGR_RETURN_IF_ERROR(hgr__attr_int(ctx, "k", 1, &p->k));
  if (p->k < 0 || (uint64_t)p->k > p->view.len)
    return HGR__OP_ERROR(ctx, "attr 'k' = %lld is out of range: axis %d has %llu elements", (long long)p->k,
                         p->axis, (unsigned long long)p->view.len);
  return HGR_OK;
}

static hgr_status_t infer_topk(hgr__op_ctx_t* ctx, hgr__entry_t* outputs) {
  topk_t p;
  HGR_RETURN_IF_ERROR(parse_topk(ctx, &p));
  const hgr__entry_t* data = hgr__op_input(ctx, 0);
  int64_t shape[HGR_MAX_DIMS];
  memcpy(shape, data->shape, (size_t)data->ndim * sizeof(int64_t));
  shape[p.axis] = p.k;
  hgr__op_set_output(&outputs[0], data->dtype, shape, data->ndim);
  hgr__op_set_output(&outputs[1], HGR__DTYPE_I32, shape, data->ndim);
  return HGR_OK;
}

static hgr_status_t plan_topk(hgr__op_ctx_t* ctx) {
  topk_t p;
  HGR_RETURN_IF_ERROR(parse_topk(ctx, &p));
  const hgr__entry_t* data = hgr__op_input(ctx, 0);
  hgr__launch_plan_t* l = hgr__op_launch(ctx, hgr__dtype_is_i32(data->dtype) ? "hgr_topk_i32" : "hgr_topk_f32");
  hgr__launch_input(ctx, l, 0);
  hgr__launch_output(ctx, l, 0);
  hgr__launch_output(ctx, l, 1);
  hgr__launch_uint(ctx, l, (uint32_t)p.view.outer);
  hgr__launch_uint(ctx, l, (uint32_t)p.view.len);
  hgr__launch_uint(ctx, l, (uint32_t)p.view.inner);
  hgr__launch_uint(ctx, l, (uint32_t)p.k);
  hgr__launch_int(ctx, l, p.ascend);
  hgr__launch_1d(ctx, l, data->element_count);
  return HGR_OK;
}

#define REDUCE(name, variant) \
  {#name, "reduce", 1, 1, 1, 1, "axis keepdims exclude", plan_reduce, variant, HGR__IN_PLACE_REFUSED, infer_reduce}

const hgr__op_t hgr__ops_reduce[] = {
    REDUCE(sum, SUM),
    REDUCE(mean, MEAN),
    REDUCE(max, MAX),
    REDUCE(min, MIN),
    REDUCE(prod, PROD),
    {"argmax", "reduce", 1, 1, 1, 1, "axis keepdims exclude select_last_index", plan_arg_reduce, 0,
     HGR__IN_PLACE_REFUSED, infer_arg_reduce},
    {"argmin", "reduce", 1, 1, 1, 1, "axis keepdims exclude select_last_index", plan_arg_reduce, 0,
     HGR__IN_PLACE_REFUSED, infer_arg_reduce},
    {"topk", "reduce", 1, 1, 1, 2, "k axis ret_type is_ascend dtype", plan_topk, 0, HGR__IN_PLACE_REFUSED,
     infer_topk},
    {.name = NULL},
};
