/* Index-tensor ops (kernels/index.cl): onnx_gather_nd, onnx_scatter_nd and
 * scatter_elements, with ONNX's GatherND, ScatterND and ScatterElements semantics.
 * (Relay's gather_nd and scatter_nd lay the index tuples along the indices' first
 * dim, ONNX along the last: hence the onnx_ names. Relay's scatter_elements is
 * ONNX's.)
 *
 * Indices are int32 (ONNX's int64 held as int32, as everywhere at run time). A
 * negative index counts from the end of its dim; one still outside it is clamped
 * into it by onnx_gather_nd (as gather_elements and take do) and makes the
 * scatters drop that update: no kernel reads or writes out of bounds, whatever the
 * indices hold. The ONNX loader refuses such indices by name where they are
 * constants. The moves take elements of 4 bytes (float32, int32) or 1 byte (bool,
 * uint8, int8); the scatters' reductions float32 and int32 (int32 wraps). Every
 * tensor has at most INT32_MAX elements (the kernels index with int). The scatters
 * copy the data into the output first (with a reduction: into the node's scratch,
 * where they reduce, then into the output), so they cannot run in place. */
#include <stdio.h>
#include <string.h>

#include "ops.h"

enum { REDUCE_NONE, REDUCE_ADD, REDUCE_MUL, REDUCE_MAX, REDUCE_MIN };

/* The kernel suffix of input i's element size: "u32" or "u8" (the moves); the
 * error names the dtypes taken. */
static hgr_status_t move_suffix(const hgr__op_ctx_t* ctx, uint32_t i, const char** out_suffix) {
  const hgr__entry_t* entry = hgr__op_input(ctx, i);
  uint64_t bytes = hgr_dtype_element_bytes(entry->dtype);
  if (entry->dtype.lanes == 1 && entry->dtype.code != HGR_DTYPE_BFLOAT && (bytes == 4 || bytes == 1)) {
    *out_suffix = bytes == 4 ? "u32" : "u8";
    return HGR_OK;
  }
  char have[32];
  return HGR__OP_ERROR(ctx, "input %u (entry %u) is %s; %s moves 4-byte (float32, int32) and 1-byte (bool, uint8, "
                       "int8) elements", i, hgr__op_entry_id(ctx, entry),
                       hgr_dtype_format(entry->dtype, have, sizeof(have)),
                       ctx->op->name);
}

/* Input i is int32 indices with at most INT32_MAX elements. */
static hgr_status_t check_indices(const hgr__op_ctx_t* ctx, uint32_t i) {
  const hgr__entry_t* indices = hgr__op_input(ctx, i);
  if (!hgr__dtype_is_i32(indices->dtype)) {
    char have[32];
    return HGR__OP_ERROR(ctx, "input %u (the indices, entry %u) is %s; %s needs int32 indices", i,
                         hgr__op_entry_id(ctx, indices), hgr_dtype_format(indices->dtype, have, sizeof(have)),
                         ctx->op->name);
  }
  return hgr__op_check_range(ctx, "the indices' element count", indices->element_count, INT32_MAX);
}

/* Every tensor of the node fits int indexing. */
static hgr_status_t check_counts(const hgr__op_ctx_t* ctx) {
  for (uint32_t i = 0; i < hgr__op_input_count(ctx); ++i) {
    char what[48];
    snprintf(what, sizeof(what), "input %u's element count", i);
    HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, what, hgr__op_input(ctx, i)->element_count, INT32_MAX));
  }
  return HGR_OK;
}

/* Attr 'reduction': "none" (or Relay's "update"), "add", "mul", "max", "min". Only
 * float32 and int32 data reduce. */
static hgr_status_t read_reduction(const hgr__op_ctx_t* ctx, int* out_reduction) {
  static const char* const names[] = {"none", "update", "add", "mul", "max", "min", NULL};
  const char* name;
  HGR_RETURN_IF_ERROR(hgr__attr_choice(ctx, "reduction", "none", names, &name));
  *out_reduction = !strcmp(name, "add")   ? REDUCE_ADD
                   : !strcmp(name, "mul") ? REDUCE_MUL
                   : !strcmp(name, "max") ? REDUCE_MAX
                   : !strcmp(name, "min") ? REDUCE_MIN
                                          : REDUCE_NONE;
  const hgr__entry_t* data = hgr__op_input(ctx, 0);
  if (*out_reduction != REDUCE_NONE && !hgr__dtype_is_f32(data->dtype) && !hgr__dtype_is_i32(data->dtype)) {
    char have[32];
    return HGR__OP_ERROR(ctx, "input 0 (entry %u) is %s; attr 'reduction' = \"%s\" takes float32 and int32",
                         hgr__op_entry_id(ctx, data), hgr_dtype_format(data->dtype, have, sizeof(have)), name);
  }
  return HGR_OK;
}

/* The updates (input 2) have the data's dtype. */
static hgr_status_t check_updates_dtype(const hgr__op_ctx_t* ctx) {
  const hgr__entry_t* data = hgr__op_input(ctx, 0);
  const hgr__entry_t* updates = hgr__op_input(ctx, 2);
  if (hgr__dtype_same(data->dtype, updates->dtype)) return HGR_OK;
  char have[32], want[32];
  return HGR__OP_ERROR(ctx, "input 2 (the updates, entry %u) is %s but input 0 (the data, entry %u) is %s",
                       hgr__op_entry_id(ctx, updates), hgr_dtype_format(updates->dtype, have, sizeof(have)),
                       hgr__op_entry_id(ctx, data), hgr_dtype_format(data->dtype, want, sizeof(want)));
}

/* The k dims that tuples of k indices address, from first on, and their strides in
 * a block of the data from first on: meta = {dim[k], stride[k]}. */
static void launch_tuple_meta(hgr__op_ctx_t* ctx, hgr__launch_plan_t* l, const hgr__entry_t* data, int32_t first,
                              int32_t k) {
  int64_t stride = 1;
  int32_t strides[HGR_MAX_DIMS];
  for (int32_t d = data->ndim - 1; d >= first; --d) {
    if (d < first + k) strides[d - first] = (int32_t)stride;
    stride *= data->shape[d]; /* within the data's count, checked */
  }
  for (int32_t c = 0; c < k; ++c) hgr__launch_meta1(ctx, l, (int32_t)data->shape[first + c]);
  hgr__launch_meta(ctx, l, strides, (uint32_t)k);
}

static int64_t product(const int64_t* shape, int32_t from, int32_t to) {
  int64_t p = 1;
  for (int32_t d = from; d < to; ++d) p *= shape[d]; /* within a checked count */
  return p;
}

/* ---- onnx_gather_nd ---------------------------------------------------------------- */

/* ONNX GatherND: data of rank r, indices of rank q >= 1 whose last dim k (1 to r -
 * batch_dims) is the length of each index tuple, the first batch_dims dims of both
 * equal; the output is shaped indices.shape[:-1] + data.shape[batch_dims + k:]. */
static hgr_status_t gather_nd_shape(const hgr__op_ctx_t* ctx, int32_t* out_batch_dims, int64_t* shape,
                                    int32_t* out_ndim) {
  const char* suffix;
  HGR_RETURN_IF_ERROR(move_suffix(ctx, 0, &suffix));
  HGR_RETURN_IF_ERROR(check_indices(ctx, 1));
  HGR_RETURN_IF_ERROR(check_counts(ctx));
  const hgr__entry_t* data = hgr__op_input(ctx, 0);
  const hgr__entry_t* indices = hgr__op_input(ctx, 1);
  char have[160], want[160];
  int64_t batch_dims;
  HGR_RETURN_IF_ERROR(hgr__attr_int(ctx, "batch_dims", 0, &batch_dims));
  int32_t rank_limit = data->ndim < indices->ndim ? data->ndim : indices->ndim;
  if (batch_dims < 0 || batch_dims >= rank_limit)
    return HGR__OP_ERROR(ctx, "attr 'batch_dims' = %lld must be at least 0 and below both ranks (data %d, indices "
                         "%d)", (long long)batch_dims, (int)data->ndim, (int)indices->ndim);
  int32_t b = (int32_t)batch_dims;
  int64_t k = indices->shape[indices->ndim - 1];
  if (k < 1 || k > data->ndim - b)
    return HGR__OP_ERROR(ctx, "input 1 (the indices, entry %u) is shaped %s: its last dim (the tuple length) must be "
                         "1 to %d for data of rank %d with %d batch dims", hgr__op_entry_id(ctx, indices),
                         hgr__entry_shape(indices, have, sizeof(have)), (int)(data->ndim - b), (int)data->ndim, (int)b);
  for (int32_t d = 0; d < b; ++d)
    if (indices->shape[d] != data->shape[d])
      return HGR__OP_ERROR(ctx, "input 1 (the indices, entry %u) is shaped %s and input 0 (entry %u) %s: their first "
                           "%d (batch) dims must be equal", hgr__op_entry_id(ctx, indices),
                           hgr__entry_shape(indices, have, sizeof(have)), hgr__op_entry_id(ctx, data),
                           hgr__entry_shape(data, want, sizeof(want)), (int)b);
  int32_t ndim = 0;
  for (int32_t d = 0; d < indices->ndim - 1; ++d) shape[ndim++] = indices->shape[d];
  if (ndim + data->ndim - b - (int32_t)k > HGR_MAX_DIMS)
    return HGR__OP_ERROR(ctx, "the output would have %d dimensions, more than %d",
                         (int)(ndim + data->ndim - b - (int32_t)k), HGR_MAX_DIMS);
  for (int32_t d = b + (int32_t)k; d < data->ndim; ++d) shape[ndim++] = data->shape[d];
  /* an empty dim indexed by a tuple: nothing to read (the clamp needs an element) */
  if (indices->element_count > 0)
    for (int32_t d = b; d < b + (int32_t)k; ++d)
      if (data->shape[d] == 0)
        return HGR__OP_ERROR(ctx, "input 0 (entry %u) is shaped %s: dim %d, which the indices address, is empty",
                             hgr__op_entry_id(ctx, data), hgr__entry_shape(data, have, sizeof(have)), (int)d);
  *out_batch_dims = b;
  *out_ndim = ndim;
  return HGR_OK;
}

static hgr_status_t infer_gather_nd(hgr__op_ctx_t* ctx, hgr__entry_t* outputs) {
  int32_t b, ndim;
  int64_t shape[HGR_MAX_DIMS];
  HGR_RETURN_IF_ERROR(gather_nd_shape(ctx, &b, shape, &ndim));
  hgr__op_set_output(&outputs[0], hgr__op_input(ctx, 0)->dtype, shape, ndim);
  return HGR_OK;
}

static hgr_status_t plan_gather_nd(hgr__op_ctx_t* ctx) {
  int32_t b, ndim;
  int64_t shape[HGR_MAX_DIMS];
  HGR_RETURN_IF_ERROR(gather_nd_shape(ctx, &b, shape, &ndim));
  const hgr__entry_t* data = hgr__op_input(ctx, 0);
  const hgr__entry_t* indices = hgr__op_input(ctx, 1);
  const hgr__entry_t* out = hgr__op_output(ctx, 0);
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "the output's element count", out->element_count, INT32_MAX));
  int32_t k = (int32_t)indices->shape[indices->ndim - 1];
  const char* suffix;
  HGR_RETURN_IF_ERROR(move_suffix(ctx, 0, &suffix));
  char kernel[48];
  snprintf(kernel, sizeof(kernel), "hgr_gather_nd_%s", suffix);
  hgr__launch_plan_t* l = hgr__op_launch(ctx, kernel);
  hgr__launch_input(ctx, l, 0);
  hgr__launch_input(ctx, l, 1);
  hgr__launch_output(ctx, l, 0);
  hgr__launch_meta_arg(ctx, l);
  launch_tuple_meta(ctx, l, data, b, k);
  hgr__launch_int(ctx, l, k);
  hgr__launch_int(ctx, l, (int32_t)product(indices->shape, b, indices->ndim - 1)); /* tuples per batch */
  hgr__launch_int(ctx, l, (int32_t)product(data->shape, b + k, data->ndim));        /* slice */
  hgr__launch_int(ctx, l, (int32_t)product(data->shape, b, data->ndim));            /* a batch's elements */
  hgr__launch_uint(ctx, l, (uint32_t)out->element_count);
  hgr__launch_1d(ctx, l, out->element_count);
  return HGR_OK;
}

/* ---- onnx_scatter_nd --------------------------------------------------------------- */

/* The data's elements copied (hgr_index_copy_<suffix>) from input 0, or the node's
 * scratch (from_scratch), into the scratch (to_scratch) or output 0. */
static void launch_copy(hgr__op_ctx_t* ctx, const char* suffix, bool from_scratch, bool to_scratch) {
  const hgr__entry_t* data = hgr__op_input(ctx, 0);
  uint64_t bytes = data->element_count * hgr_dtype_element_bytes(data->dtype);
  char kernel[48];
  snprintf(kernel, sizeof(kernel), "hgr_index_copy_%s", suffix);
  hgr__launch_plan_t* l = hgr__op_launch(ctx, kernel);
  if (from_scratch) hgr__launch_scratch(ctx, l, bytes);
  else hgr__launch_input(ctx, l, 0);
  if (to_scratch) hgr__launch_scratch(ctx, l, bytes);
  else hgr__launch_output(ctx, l, 0);
  hgr__launch_uint(ctx, l, (uint32_t)data->element_count);
  hgr__launch_1d(ctx, l, data->element_count);
}

/* What both scatters check first: the data's dtype, the indices, the updates'
 * dtype, the counts, and attr reduction into *out_reduction. */
static hgr_status_t check_scatter(const hgr__op_ctx_t* ctx, int* out_reduction) {
  const char* suffix;
  HGR_RETURN_IF_ERROR(move_suffix(ctx, 0, &suffix));
  HGR_RETURN_IF_ERROR(check_indices(ctx, 1));
  HGR_RETURN_IF_ERROR(check_updates_dtype(ctx));
  HGR_RETURN_IF_ERROR(check_counts(ctx));
  HGR_RETURN_IF_ERROR(read_reduction(ctx, out_reduction));
  return HGR_OK;
}

/* ONNX ScatterND: the output is the data with the updates written (or reduced) at
 * the index tuples: indices of rank q >= 1 whose last dim k is 1 to r, updates
 * shaped indices.shape[:-1] + data.shape[k:]. */
static hgr_status_t scatter_nd_check(const hgr__op_ctx_t* ctx, int* out_reduction) {
  HGR_RETURN_IF_ERROR(check_scatter(ctx, out_reduction));
  const hgr__entry_t* data = hgr__op_input(ctx, 0);
  const hgr__entry_t* indices = hgr__op_input(ctx, 1);
  const hgr__entry_t* updates = hgr__op_input(ctx, 2);
  char have[160], want[160], data_text[160], expected_text[160];
  if (data->ndim < 1 || indices->ndim < 1)
    return HGR__OP_ERROR(ctx, "input 0 (entry %u) and input 1 (entry %u) need rank 1 or more",
                         hgr__op_entry_id(ctx, data),
                         hgr__op_entry_id(ctx, indices));
  int64_t k = indices->shape[indices->ndim - 1];
  if (k < 1 || k > data->ndim)
    return HGR__OP_ERROR(ctx, "input 1 (the indices, entry %u) is shaped %s: its last dim (the tuple length) must be "
                         "1 to %d, the data's rank", hgr__op_entry_id(ctx, indices),
                         hgr__entry_shape(indices, have, sizeof(have)), (int)data->ndim);
  hgr__entry_t expected = {0};
  expected.ndim = 0;
  for (int32_t d = 0; d < indices->ndim - 1; ++d) expected.shape[expected.ndim++] = indices->shape[d];
  if (expected.ndim + data->ndim - (int32_t)k > HGR_MAX_DIMS)
    return HGR__OP_ERROR(ctx, "the updates would have more than %d dimensions", HGR_MAX_DIMS);
  for (int32_t d = (int32_t)k; d < data->ndim; ++d) expected.shape[expected.ndim++] = data->shape[d];
  bool same = updates->ndim == expected.ndim;
  for (int32_t d = 0; same && d < expected.ndim; ++d) same = updates->shape[d] == expected.shape[d];
  if (!same)
    return HGR__OP_ERROR(ctx, "input 2 (the updates, entry %u) is shaped %s; indices %s into data %s need updates "
                         "shaped %s", hgr__op_entry_id(ctx, updates), hgr__entry_shape(updates, have, sizeof(have)),
                         hgr__entry_shape(indices, want, sizeof(want)), hgr__entry_shape(data, data_text, sizeof(data_text)),
                         hgr__entry_shape(&expected, expected_text, sizeof(expected_text)));
  return HGR_OK;
}

static hgr_status_t plan_scatter_nd(hgr__op_ctx_t* ctx) {
  int reduction;
  HGR_RETURN_IF_ERROR(scatter_nd_check(ctx, &reduction));
  const hgr__entry_t* data = hgr__op_input(ctx, 0);
  const hgr__entry_t* indices = hgr__op_input(ctx, 1);
  const hgr__entry_t* updates = hgr__op_input(ctx, 2);
  int32_t k = (int32_t)indices->shape[indices->ndim - 1];
  int32_t slice = (int32_t)product(data->shape, k, data->ndim);
  int32_t tuples = (int32_t)product(indices->shape, 0, indices->ndim - 1);
  const char* suffix;
  HGR_RETURN_IF_ERROR(move_suffix(ctx, 0, &suffix));
  /* Without a reduction the updates go straight into the output. With one, they
   * reduce in the node's scratch, which then goes to the output: a launch that
   * reads back an output an earlier launch wrote trips Oclgrind 21.10 (index.cl). */
  /* empty data: every index is outside its dim (or the updates are empty too) */
  bool updating = updates->element_count > 0 && data->element_count > 0;
  bool through_scratch = reduction != REDUCE_NONE && updating;
  uint64_t bytes = data->element_count * hgr_dtype_element_bytes(data->dtype);
  launch_copy(ctx, suffix, false, through_scratch);
  if (!updating) return HGR_OK;
  char kernel[48];
  if (reduction == REDUCE_NONE) {
    snprintf(kernel, sizeof(kernel), "hgr_scatter_nd_%s", suffix);
  } else {
    snprintf(kernel, sizeof(kernel), "hgr_scatter_nd_reduce_%s", hgr__dtype_is_f32(data->dtype) ? "f32" : "i32");
  }
  hgr__launch_plan_t* l = hgr__op_launch(ctx, kernel);
  hgr__launch_input(ctx, l, 2);
  hgr__launch_input(ctx, l, 1);
  if (through_scratch) hgr__launch_scratch(ctx, l, bytes);
  else hgr__launch_output(ctx, l, 0);
  hgr__launch_meta_arg(ctx, l);
  launch_tuple_meta(ctx, l, data, 0, k);
  hgr__launch_int(ctx, l, k);
  hgr__launch_int(ctx, l, slice);
  if (!through_scratch) { /* ONNX requires distinct tuples: one work-item per update element */
    hgr__launch_uint(ctx, l, (uint32_t)updates->element_count);
    hgr__launch_1d(ctx, l, updates->element_count);
    return HGR_OK;
  }
  hgr__launch_int(ctx, l, tuples); /* one work-item per slice element, the tuples in order */
  hgr__launch_int(ctx, l, reduction);
  hgr__launch_uint(ctx, l, (uint32_t)slice);
  hgr__launch_1d(ctx, l, (uint64_t)slice);
  launch_copy(ctx, suffix, true, false);
  return HGR_OK;
}

/* ---- scatter_elements -------------------------------------------------------------- */

/* ONNX ScatterElements: indices and updates of one shape, the data's rank and at
 * most its extent in every dim but axis; the update at coordinates c goes to the
 * output at c with c[axis] = indices[c]. */
static hgr_status_t scatter_elements_check(const hgr__op_ctx_t* ctx, int32_t* out_axis, int* out_reduction) {
  HGR_RETURN_IF_ERROR(check_scatter(ctx, out_reduction));
  const hgr__entry_t* data = hgr__op_input(ctx, 0);
  const hgr__entry_t* indices = hgr__op_input(ctx, 1);
  const hgr__entry_t* updates = hgr__op_input(ctx, 2);
  char have[160], want[160];
  if (data->ndim == 0)
    return HGR__OP_ERROR(ctx, "input 0 (entry %u) is a scalar; %s needs rank 1 or more", hgr__op_entry_id(ctx, data),
                         ctx->op->name);
  int64_t axis_attr;
  HGR_RETURN_IF_ERROR(hgr__attr_int(ctx, "axis", 0, &axis_attr));
  HGR_RETURN_IF_ERROR(hgr__op_axis(ctx, "axis", axis_attr, data->ndim, out_axis));
  bool same = indices->ndim == updates->ndim;
  for (int32_t d = 0; same && d < indices->ndim; ++d) same = indices->shape[d] == updates->shape[d];
  if (!same)
    return HGR__OP_ERROR(ctx, "input 2 (the updates, entry %u) is shaped %s but input 1 (the indices, entry %u) %s; "
                         "they must be shaped alike", hgr__op_entry_id(ctx, updates),
                         hgr__entry_shape(updates, have, sizeof(have)), hgr__op_entry_id(ctx, indices),
                         hgr__entry_shape(indices, want, sizeof(want)));
  bool fits = indices->ndim == data->ndim;
  for (int32_t d = 0; fits && d < data->ndim; ++d) fits = d == *out_axis || indices->shape[d] <= data->shape[d];
  if (!fits)
    return HGR__OP_ERROR(ctx, "input 1 (the indices, entry %u) is shaped %s but input 0 (entry %u) is %s; the indices "
                         "need the data's rank and, in every dim but axis %d, at most its extent",
                         hgr__op_entry_id(ctx, indices), hgr__entry_shape(indices, have, sizeof(have)),
                         hgr__op_entry_id(ctx, data),
                         hgr__entry_shape(data, want, sizeof(want)), *out_axis);
  return HGR_OK;
}

static hgr_status_t plan_scatter_elements(hgr__op_ctx_t* ctx) {
  int32_t axis;
  int reduction;
  HGR_RETURN_IF_ERROR(scatter_elements_check(ctx, &axis, &reduction));
  const hgr__entry_t* data = hgr__op_input(ctx, 0);
  const hgr__entry_t* updates = hgr__op_input(ctx, 2);
  const char* suffix;
  HGR_RETURN_IF_ERROR(move_suffix(ctx, 0, &suffix));
  bool updating = updates->element_count > 0 && data->element_count > 0; /* as scatter_nd's */
  bool through_scratch = reduction != REDUCE_NONE && updating;
  uint64_t bytes = data->element_count * hgr_dtype_element_bytes(data->dtype);
  launch_copy(ctx, suffix, false, through_scratch);
  if (!updating) return HGR_OK;
  char kernel[48];
  /* float32 and int32 reduce; other 4-byte dtypes move as int32, 1-byte ones as uchar */
  snprintf(kernel, sizeof(kernel), "hgr_scatter_elements_%s",
           hgr__dtype_is_f32(data->dtype) ? "f32" : !strcmp(suffix, "u8") ? "u8" : "i32");
  int32_t ndim = data->ndim;
  int64_t strides[HGR_MAX_DIMS], stride = 1;
  for (int32_t d = ndim - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= data->shape[d];
  }
  uint64_t lines = updates->element_count / (uint64_t)updates->shape[axis];
  hgr__launch_plan_t* l = hgr__op_launch(ctx, kernel);
  hgr__launch_input(ctx, l, 2);
  hgr__launch_input(ctx, l, 1);
  if (through_scratch) hgr__launch_scratch(ctx, l, bytes);
  else hgr__launch_output(ctx, l, 0);
  hgr__launch_meta_arg(ctx, l);
  hgr__launch_int(ctx, l, ndim);
  hgr__launch_int(ctx, l, axis);
  hgr__launch_int(ctx, l, reduction);
  hgr__launch_uint(ctx, l, (uint32_t)lines);
  for (int32_t d = 0; d < ndim; ++d) hgr__launch_meta1(ctx, l, (int32_t)updates->shape[d]);
  for (int32_t d = 0; d < ndim; ++d) hgr__launch_meta1(ctx, l, (int32_t)strides[d]);
  hgr__launch_meta1(ctx, l, (int32_t)data->shape[axis]);
  hgr__launch_1d(ctx, l, lines);
  if (!through_scratch) return HGR_OK;
  launch_copy(ctx, suffix, true, false);
  return HGR_OK;
}

/* Both scatters: the output is shaped like the data. */
static hgr_status_t infer_scatter_like(hgr__op_ctx_t* ctx, hgr__entry_t* outputs) {
  int reduction;
  int32_t axis;
  if (!strcmp(ctx->op->name, "scatter_elements")) HGR_RETURN_IF_ERROR(scatter_elements_check(ctx, &axis, &reduction));
  else HGR_RETURN_IF_ERROR(scatter_nd_check(ctx, &reduction));
  const hgr__entry_t* data = hgr__op_input(ctx, 0);
  hgr__op_set_output(&outputs[0], data->dtype, data->shape, data->ndim);
  return HGR_OK;
}

const hgr__op_t hgr__ops_index[] = {
    {"onnx_gather_nd", "index", 2, 2, 1, 1, "batch_dims", plan_gather_nd, 0, HGR__IN_PLACE_REFUSED, infer_gather_nd},
    {"onnx_scatter_nd", "index", 3, 3, 1, 1, "reduction", plan_scatter_nd, 0, HGR__IN_PLACE_REFUSED,
     infer_scatter_like},
    {"scatter_elements", "index", 3, 3, 1, 1, "axis reduction", plan_scatter_elements, 0, HGR__IN_PLACE_REFUSED,
     infer_scatter_like},
    {.name = NULL},
};
