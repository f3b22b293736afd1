/* Layout ops (kernels/layout.cl): concatenate, transpose, pad, take, strided_slice,
 * broadcast_to, tile, depth_to_space, space_to_depth, gather_elements (and Relay's
 * name for it, gather), cumsum and the reshape-likes (reshape, flatten,
 * batch_flatten, squeeze, expand_dims).
 *
 * They only move elements (but cumsum, which sums them along lines), so one uint
 * kernel serves float32 and int32 and the output keeps the input's dtype. Every index is an int in the kernels: each tensor
 * is checked to hold at most INT32_MAX elements. Shapes follow Relay's type
 * relations (strided_slice: topi's canonicalization) and the graph's declared
 * output shape must match. A reshape-like whose output shares its input's storage id
 * plans no launch: the executor runs nothing and the output aliases the input. The
 * other layout ops read one place and write another, so they cannot run in place
 * (hgr__op_plan refuses an output sharing an input's storage). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ops.h"

enum { RESHAPE, BATCH_FLATTEN, SQUEEZE, EXPAND_DIMS };

/* ---- shared checks ------------------------------------------------------------------- */

/* a * b for non-negative a and b, saturating at INT64_MAX. */
static int64_t multiply(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > INT64_MAX / b ? INT64_MAX : a * b;
}

/* Every dim fits an int (a tensor with a 0 dim may declare others of any size). */
static hgr_status_t check_dims(const hgr__op_ctx_t* ctx, const hgr__entry_t* entry, const char* name) {
  for (int32_t d = 0; d < entry->ndim; ++d)
    if (entry->shape[d] > INT32_MAX) {
      char have[160];
      return HGR__OP_ERROR(ctx, "%s (entry %u) is shaped %s; the kernels index with 32-bit integers (dims at most %d)",
                           name, hgr__op_entry_id(ctx, entry), hgr__entry_shape(entry, have, sizeof(have)), INT32_MAX);
    }
  return HGR_OK;
}

static bool same_dtype(hgr_dtype_t a, hgr_dtype_t b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

/* entry (called name) has the dtype of like (called like_name). */
static hgr_status_t check_same_dtype(const hgr__op_ctx_t* ctx, const hgr__entry_t* entry, const char* name,
                                     const hgr__entry_t* like, const char* like_name) {
  if (same_dtype(entry->dtype, like->dtype)) return HGR_OK;
  char have[32], want[32];
  return HGR__OP_ERROR(ctx, "%s (entry %u) is %s but %s (entry %u) is %s; the op keeps the dtype", name,
                       hgr__op_entry_id(ctx, entry), hgr_dtype_format(entry->dtype, have, sizeof(have)), like_name,
                       hgr__op_entry_id(ctx, like), hgr_dtype_format(like->dtype, want, sizeof(want)));
}

/* Input 0 is float32 or int32 and fits int indices (the output keeps its dtype). */
static hgr_status_t check_data(const hgr__op_ctx_t* ctx) {
  HGR_RETURN_IF_ERROR(hgr__op_check_dtype(ctx, 0, -1, true));
  HGR_RETURN_IF_ERROR(
      hgr__op_check_range(ctx, "input 0's element count", hgr__op_input(ctx, 0)->element_count, INT32_MAX));
  return check_dims(ctx, hgr__op_input(ctx, 0), "input 0");
}

/* Output 0 (as inferred) fits int indices too. */
static hgr_status_t check_output_fits(const hgr__op_ctx_t* ctx) {
  HGR_RETURN_IF_ERROR(
      hgr__op_check_range(ctx, "the output's element count", hgr__op_output(ctx, 0)->element_count, INT32_MAX));
  return check_dims(ctx, hgr__op_output(ctx, 0), "output 0");
}

/* Output 0 of input 0's dtype and the given shape. */
static void set_output(const hgr__op_ctx_t* ctx, hgr__entry_t* outputs, const int64_t* shape, int32_t ndim) {
  hgr__op_set_output(&outputs[0], hgr__op_input(ctx, 0)->dtype, shape, ndim);
}

/* Exact for a tensor with elements (at most INT32_MAX of them); callers use them
 * only then. */
static void row_major_strides(const int64_t* shape, int32_t ndim, int64_t* strides) {
  int64_t stride = 1;
  for (int32_t d = ndim - 1; d >= 0; --d) {
    strides[d] = stride;
    stride = multiply(stride, shape[d]);
  }
}

/* Plans out[i] = in[offset + sum_d coord_d(i) * strides[d]] over the output's
 * shape. Dims of extent 1 are dropped and neighbours that stay contiguous in the
 * input merged, so the kernel divides less. Every index it forms lies in the input
 * (the caller's box is inside it), so int arithmetic cannot overflow. */
static int32_t merge_dims(const int64_t* shape, const int64_t* strides, int32_t ndim, uint64_t count,
                          int32_t* merged_shape, int32_t* merged_strides) {
  int32_t merged = 0;
  for (int32_t d = 0; d < ndim && count > 0; ++d) {
    if (shape[d] == 1) continue;
    if (merged > 0 && (int64_t)merged_strides[merged - 1] == strides[d] * shape[d]) {
      merged_shape[merged - 1] *= (int32_t)shape[d];
      merged_strides[merged - 1] = (int32_t)strides[d];
    } else {
      merged_shape[merged] = (int32_t)shape[d];
      merged_strides[merged] = (int32_t)strides[d];
      ++merged;
    }
  }
  return merged;
}

/* The gather kernels, each the others' sibling: a new shape may pick another. */
static const char* const gather_kernels[] = {"hgr_layout_gather", "hgr_layout_gather_runs",
                                             "hgr_layout_gather_tiles"};

static hgr__launch_plan_t* launch_gather_kernel(hgr__op_ctx_t* ctx, const char* kernel) {
  hgr__launch_plan_t* l = hgr__op_launch(ctx, kernel);
  for (size_t i = 0; i < sizeof(gather_kernels) / sizeof(gather_kernels[0]); ++i)
    if (strcmp(gather_kernels[i], kernel)) hgr__launch_sibling(ctx, l, gather_kernels[i]);
  return l;
}

/* The output dim before the last that is contiguous in the input (merged strides),
 * when the last is not and both span at least a tile of 4: -1 otherwise. */
static int32_t tile_dim(const int32_t* merged_shape, const int32_t* merged_strides, int32_t merged) {
  if (merged < 2 || merged_strides[merged - 1] == 1 || merged_shape[merged - 1] < 4) return -1;
  for (int32_t d = 0; d + 1 < merged; ++d)
    if (merged_strides[d] == 1 && merged_shape[d] >= 4) return d;
  return -1;
}

/* The gather of shape (ndim) from the input at strides, from offset on (count
 * elements): where the last (merged) dim is contiguous in the input and long, whole
 * runs of it at a time (hgr_layout_gather_runs: transposes that keep the last dim,
 * slices of whole rows, a contiguous slice as one run); where another dim is the
 * input's contiguous one, 4 x 4 tiles (hgr_layout_gather_tiles: transposes that move
 * it); where the last dim steps forward through the input and no dim is contiguous
 * there, runs again, element by element within a run (a stride-2 slice of an image's
 * rows and columns: resnet50's before its strided 1x1 convolutions, 0.1-0.4 ms each
 * on PoCL element by element); else element by element (hgr_layout_gather). */
#define GATHER_MIN_RUN 16
#define GATHER_MIN_STEPPED_RUN 4
/* Elements a work-item of hgr_layout_gather_runs copies: 16, or 64 on devices that
 * pay for each work-item (hgr__op_loops_work_items): on PoCL (2 cores, quiet) a
 * detector's scores, a contiguous 2.7 MB slice, 152 -> 55-60 us, and its boxes'
 * 134 KB slice 21 -> 4 us; 256 lost where it left fewer work-groups than cores. */
#define GATHER_RUN_CHUNK 16
#define GATHER_RUN_CHUNK_LOOPED 64
static void launch_gather(hgr__op_ctx_t* ctx, const int64_t* shape, const int64_t* strides, int32_t ndim,
                          int64_t offset, uint64_t count) {
  int32_t merged_shape[HGR_MAX_DIMS], merged_strides[HGR_MAX_DIMS];
  if (count == 0) offset = 0;
  int32_t merged = merge_dims(shape, strides, ndim, count, merged_shape, merged_strides);
  int32_t inner = tile_dim(merged_shape, merged_strides, merged);
  if (inner >= 0) {
    int32_t rows = merged_shape[inner], cols = merged_shape[merged - 1];
    uint64_t tiles = (uint64_t)((rows + 3) / 4) * (uint64_t)((cols + 3) / 4);
    uint64_t items = count / ((uint64_t)rows * (uint64_t)cols) * tiles;
    hgr__launch_plan_t* l = launch_gather_kernel(ctx, "hgr_layout_gather_tiles");
    hgr__launch_input(ctx, l, 0);
    hgr__launch_output(ctx, l, 0);
    hgr__launch_meta_arg(ctx, l);
    hgr__launch_int(ctx, l, merged);
    hgr__launch_int(ctx, l, inner);
    hgr__launch_uint(ctx, l, (uint32_t)items);
    hgr__launch_meta1(ctx, l, (int32_t)offset);
    hgr__launch_meta(ctx, l, merged_shape, (uint32_t)merged);
    hgr__launch_meta(ctx, l, merged_strides, (uint32_t)merged);
    hgr__launch_1d(ctx, l, items);
    return;
  }
  int32_t step = merged >= 1 ? merged_strides[merged - 1] : 0;
  if (merged >= 1 && step >= 1 && merged_shape[merged - 1] >= (step == 1 ? GATHER_MIN_RUN : GATHER_MIN_STEPPED_RUN)) {
    int32_t chunk = hgr__op_loops_work_items(ctx) ? GATHER_RUN_CHUNK_LOOPED : GATHER_RUN_CHUNK;
    int32_t run = merged_shape[merged - 1], chunks = (run + chunk - 1) / chunk;
    uint64_t items = count / (uint64_t)run * (uint64_t)chunks;
    hgr__launch_plan_t* l = launch_gather_kernel(ctx, "hgr_layout_gather_runs");
    hgr__launch_input(ctx, l, 0);
    hgr__launch_output(ctx, l, 0);
    hgr__launch_meta_arg(ctx, l);
    hgr__launch_int(ctx, l, merged - 1);
    hgr__launch_int(ctx, l, run);
    hgr__launch_int(ctx, l, step);
    hgr__launch_int(ctx, l, chunk);
    hgr__launch_int(ctx, l, chunks);
    hgr__launch_uint(ctx, l, (uint32_t)items);
    hgr__launch_meta1(ctx, l, (int32_t)offset);
    hgr__launch_meta(ctx, l, merged_shape, (uint32_t)(merged - 1));
    hgr__launch_meta(ctx, l, merged_strides, (uint32_t)(merged - 1));
    hgr__launch_1d(ctx, l, items);
    return;
  }
  hgr__launch_plan_t* l = launch_gather_kernel(ctx, "hgr_layout_gather");
  hgr__launch_input(ctx, l, 0);
  hgr__launch_output(ctx, l, 0);
  hgr__launch_meta_arg(ctx, l);
  hgr__launch_int(ctx, l, merged);
  hgr__launch_uint(ctx, l, (uint32_t)count);
  hgr__launch_meta1(ctx, l, (int32_t)offset);
  hgr__launch_meta(ctx, l, merged_shape, (uint32_t)merged);
  hgr__launch_meta(ctx, l, merged_strides, (uint32_t)merged);
  hgr__launch_1d(ctx, l, count);
}

/* ---- concatenate ---------------------------------------------------------------------- */

/* The output shape and the (non-negative) axis. */
static hgr_status_t concatenate_shape(const hgr__op_ctx_t* ctx, int64_t* shape, int32_t* out_axis) {
  HGR_RETURN_IF_ERROR(check_data(ctx));
  const hgr__entry_t* first = hgr__op_input(ctx, 0);
  int32_t ndim = first->ndim;
  if (ndim == 0)
    return HGR__OP_ERROR(ctx, "input 0 (entry %u) is a scalar; concatenate joins tensors of rank 1 or more",
                         hgr__op_entry_id(ctx, first));
  int64_t axis_attr;
  int32_t axis;
  HGR_RETURN_IF_ERROR(hgr__attr_int(ctx, "axis", 0, &axis_attr));
  HGR_RETURN_IF_ERROR(hgr__op_axis(ctx, "axis", axis_attr, ndim, &axis));
  memcpy(shape, first->shape, sizeof(int64_t) * (size_t)ndim);
  shape[axis] = 0;
  uint32_t count = hgr__op_input_count(ctx);
  for (uint32_t i = 0; i < count; ++i) {
    const hgr__entry_t* in = hgr__op_input(ctx, i);
    char name[32];
    snprintf(name, sizeof(name), "input %u", i);
    HGR_RETURN_IF_ERROR(check_same_dtype(ctx, in, name, first, "input 0"));
    bool fits = in->ndim == ndim;
    for (int32_t d = 0; fits && d < ndim; ++d) fits = d == axis || in->shape[d] == first->shape[d];
    if (!fits) {
      char have[160], want[160];
      return HGR__OP_ERROR(ctx, "input %u (entry %u) is shaped %s but input 0 (entry %u) is %s; all dims but axis %d "
                           "must match",
                           i, hgr__op_entry_id(ctx, in), hgr__entry_shape(in, have, sizeof(have)),
                           hgr__op_entry_id(ctx, first),
                           hgr__entry_shape(first, want, sizeof(want)), axis);
    }
    HGR_RETURN_IF_ERROR(check_dims(ctx, in, name));
    shape[axis] += in->shape[axis];
    if (shape[axis] > INT32_MAX)
      return HGR__OP_ERROR(ctx, "inputs 0 to %u join to more than %d along axis %d; the kernels index with 32-bit "
                           "integers", i, INT32_MAX, axis);
  }
  *out_axis = axis;
  return HGR_OK;
}

static hgr_status_t infer_concatenate(hgr__op_ctx_t* ctx, hgr__entry_t* outputs) {
  int64_t shape[HGR_MAX_DIMS];
  int32_t axis;
  HGR_RETURN_IF_ERROR(concatenate_shape(ctx, shape, &axis));
  set_output(ctx, outputs, shape, hgr__op_input(ctx, 0)->ndim);
  return HGR_OK;
}

#define CONCAT_INPUTS 4 /* kernels/layout.cl's */
static hgr_status_t plan_concatenate(hgr__op_ctx_t* ctx) {
  int64_t shape[HGR_MAX_DIMS];
  int32_t axis;
  HGR_RETURN_IF_ERROR(concatenate_shape(ctx, shape, &axis));
  HGR_RETURN_IF_ERROR(check_output_fits(ctx));
  int32_t ndim = hgr__op_input(ctx, 0)->ndim;
  uint32_t count = hgr__op_input_count(ctx);
  /* outer * out_row is the output's element count (at most INT32_MAX) unless
   * outer is 0, when no launch does anything. */
  int64_t outer = 1, inner = 1;
  for (int32_t d = 0; d < axis; ++d) outer = multiply(outer, shape[d]);
  for (int32_t d = axis + 1; d < ndim; ++d) inner = multiply(inner, shape[d]);
  /* One launch per CONCAT_INPUTS inputs, each work-item 16 elements of one input's
   * row (one division per work-item, none per element: a copy at about memory speed;
   * with one work-item per element and a division each, densenet121's 58
   * concatenations took 12 ms, 6x ONNX Runtime's). A launch per input gave a
   * YOLO-style detector's 18 concatenations of 50 inputs 50 commands, each a gap of
   * about 5 us on PoCL: its commands 181 -> 150 (bench/notes.md). */
  int64_t offset = 0;
  for (uint32_t first = 0; first < count; first += CONCAT_INPUTS) {
    uint32_t inputs = count - first < CONCAT_INPUTS ? count - first : CONCAT_INPUTS;
    hgr__launch_plan_t* l = hgr__op_launch(ctx, "hgr_layout_concat");
    for (uint32_t i = 0; i < CONCAT_INPUTS; ++i) hgr__launch_input(ctx, l, first + (i < inputs ? i : 0));
    hgr__launch_output(ctx, l, 0);
    hgr__launch_meta_arg(ctx, l);
    int32_t meta[3 + 2 * CONCAT_INPUTS] = {(int32_t)outer, (int32_t)multiply(shape[axis], inner), (int32_t)inputs};
    uint64_t chunks = 0;
    for (uint32_t i = 0; i < inputs; ++i) {
      int64_t block = outer ? multiply(hgr__op_input(ctx, first + i)->shape[axis], inner) : 0;
      meta[3 + i] = (int32_t)block;
      meta[3 + CONCAT_INPUTS + i] = (int32_t)offset;
      chunks += (uint64_t)(block + 15) / 16;
      offset += block;
    }
    hgr__launch_meta(ctx, l, meta, 3 + 2 * CONCAT_INPUTS);
    hgr__launch_1d(ctx, l, chunks * (uint64_t)outer);
  }
  return HGR_OK;
}

/* ---- transpose ------------------------------------------------------------------------ */

/* Shortest contiguous last dim that transpose copies as runs (shorter ones: one
 * work-item per element). */

/* Output dim d is input dim axes[d]. */
static hgr_status_t transpose_axes(const hgr__op_ctx_t* ctx, int32_t* axes) {
  HGR_RETURN_IF_ERROR(check_data(ctx));
  int32_t ndim = hgr__op_input(ctx, 0)->ndim;
  int64_t axes_attr[HGR_MAX_DIMS];
  uint32_t axes_count;
  HGR_RETURN_IF_ERROR(hgr__attr_ints(ctx, "axes", axes_attr, HGR_MAX_DIMS, &axes_count, NULL));
  const char* text = hgr__attr_string(ctx, "axes", "");
  if (axes_count == 0) {
    for (int32_t d = 0; d < ndim; ++d) axes[d] = ndim - 1 - d; /* Relay's default: reversed */
  } else {
    if (axes_count != (uint32_t)ndim)
      return HGR__OP_ERROR(ctx, "attr 'axes' = \"%s\" has %u values, but input 0 has %d dimension%s", text,
                           axes_count, ndim, ndim == 1 ? "" : "s");
    bool used[HGR_MAX_DIMS] = {false};
    for (int32_t d = 0; d < ndim; ++d) {
      HGR_RETURN_IF_ERROR(hgr__op_axis(ctx, "axes", axes_attr[d], ndim, &axes[d]));
      if (used[axes[d]])
        return HGR__OP_ERROR(ctx, "attr 'axes' = \"%s\" is not a permutation: axis %d appears twice", text, axes[d]);
      used[axes[d]] = true;
    }
  }
  return HGR_OK;
}

static hgr_status_t infer_transpose(hgr__op_ctx_t* ctx, hgr__entry_t* outputs) {
  const hgr__entry_t* in = hgr__op_input(ctx, 0);
  int32_t axes[HGR_MAX_DIMS];
  HGR_RETURN_IF_ERROR(transpose_axes(ctx, axes));
  int64_t shape[HGR_MAX_DIMS];
  for (int32_t d = 0; d < in->ndim; ++d) shape[d] = in->shape[axes[d]];
  set_output(ctx, outputs, shape, in->ndim);
  return HGR_OK;
}

static hgr_status_t plan_transpose(hgr__op_ctx_t* ctx) {
  const hgr__entry_t* in = hgr__op_input(ctx, 0);
  int32_t ndim = in->ndim, axes[HGR_MAX_DIMS];
  HGR_RETURN_IF_ERROR(transpose_axes(ctx, axes));
  HGR_RETURN_IF_ERROR(check_output_fits(ctx));
  int64_t in_strides[HGR_MAX_DIMS], shape[HGR_MAX_DIMS], strides[HGR_MAX_DIMS];
  row_major_strides(in->shape, ndim, in_strides);
  for (int32_t d = 0; d < ndim; ++d) {
    shape[d] = in->shape[axes[d]];
    strides[d] = in_strides[axes[d]];
  }
  launch_gather(ctx, shape, strides, ndim, 0, in->element_count);
  return HGR_OK;
}

/* ---- pad ------------------------------------------------------------------------------ */

/* The pad value's bits for data of dtype like input 0, from attr pad_value. */
static hgr_status_t pad_value_bits(const hgr__op_ctx_t* ctx, uint32_t* out_bits) {
  double value;
  HGR_RETURN_IF_ERROR(hgr__attr_float(ctx, "pad_value", 0.0, &value));
  const char* text = hgr__attr_string(ctx, "pad_value", "0");
  if (hgr__dtype_is_i32(hgr__op_input(ctx, 0)->dtype)) {
    if (value != floor(value) || value < (double)INT32_MIN || value > (double)INT32_MAX)
      return HGR__OP_ERROR(ctx, "attr 'pad_value' = \"%s\" is not an int32 value, and the data is int32", text);
    int32_t integer = (int32_t)value;
    memcpy(out_bits, &integer, sizeof(integer));
    return HGR_OK;
  }
  if (isfinite(value) && fabs(value) > FLT_MAX)
    return HGR__OP_ERROR(ctx, "attr 'pad_value' = \"%s\" is outside float32's range", text);
  float real = (float)value;
  memcpy(out_bits, &real, sizeof(real));
  return HGR_OK;
}

enum { PAD_CONSTANT, PAD_EDGE, PAD_REFLECT };

/* The output shape, the widths ([before, after] per dim), the mode and, without a
 * pad-value input, the pad value's bits. Constant mode takes negative widths (ONNX
 * Pad's cropping: the output keeps in[-before ...]); edge and reflect pad only, and
 * reflect (numpy's: the edge value is not repeated) by at most extent - 1 on a side
 * (ONNX Pad's limit), so one reflection finds every source. */
static hgr_status_t pad_shape(const hgr__op_ctx_t* ctx, int64_t* shape, int64_t* widths, int* out_mode,
                              uint32_t* out_bits) {
  HGR_RETURN_IF_ERROR(check_data(ctx));
  const hgr__entry_t* in = hgr__op_input(ctx, 0);
  int32_t ndim = in->ndim;
  static const char* const modes[] = {"constant", "edge", "reflect", NULL};
  const char* mode_text;
  HGR_RETURN_IF_ERROR(hgr__attr_choice(ctx, "pad_mode", "constant", modes, &mode_text));
  int mode = !strcmp(mode_text, "edge") ? PAD_EDGE : !strcmp(mode_text, "reflect") ? PAD_REFLECT : PAD_CONSTANT;
  *out_mode = mode;
  uint32_t width_count;
  bool present;
  HGR_RETURN_IF_ERROR(hgr__attr_ints(ctx, "pad_width", widths, 2 * HGR_MAX_DIMS, &width_count, &present));
  const char* text = hgr__attr_string(ctx, "pad_width", "");
  if (!present) return HGR__OP_ERROR(ctx, "attr 'pad_width' is required");
  if (width_count != 2 * (uint32_t)ndim)
    return HGR__OP_ERROR(ctx, "attr 'pad_width' = \"%s\" has %u values, but input 0 has %d dimension%s: it needs one "
                         "[before, after] pair per dimension",
                         text, width_count, ndim, ndim == 1 ? "" : "s");
  for (int32_t d = 0; d < ndim; ++d) {
    int64_t extent = in->shape[d];
    for (int side = 0; side < 2; ++side) {
      int64_t width = widths[2 * d + side];
      if (width > INT32_MAX || width < -(int64_t)INT32_MAX)
        return HGR__OP_ERROR(ctx, "attr 'pad_width' = \"%s\" pads dimension %d by %lld; pad widths must be -%d to %d",
                             text, d, (long long)width, INT32_MAX, INT32_MAX);
      if (width < 0 && mode != PAD_CONSTANT)
        return HGR__OP_ERROR(ctx, "attr 'pad_width' = \"%s\" pads dimension %d by %lld; pad_mode \"%s\" takes no "
                             "negative widths (only \"constant\" crops)",
                             text, d, (long long)width, mode_text);
      if (mode == PAD_EDGE && width > 0 && extent == 0)
        return HGR__OP_ERROR(ctx, "attr 'pad_width' = \"%s\" pads dimension %d by %lld, but it is empty: pad_mode "
                             "\"edge\" has no edge to repeat",
                             text, d, (long long)width);
      if (mode == PAD_REFLECT && width > 0 && width > extent - 1)
        return HGR__OP_ERROR(ctx, "attr 'pad_width' = \"%s\" pads dimension %d (extent %lld) by %lld; pad_mode "
                             "\"reflect\" pads by at most the extent - 1",
                             text, d, (long long)extent, (long long)width);
    }
    shape[d] = in->shape[d] + widths[2 * d] + widths[2 * d + 1];
    if (shape[d] < 0)
      return HGR__OP_ERROR(ctx, "attr 'pad_width' = \"%s\" crops dimension %d (extent %lld) by %lld, more than it "
                           "holds",
                           text, d, (long long)in->shape[d], -(long long)(widths[2 * d] + widths[2 * d + 1]));
  }
  /* Relay's newer form passes the pad value as a second (scalar) input. */
  *out_bits = 0;
  if (mode != PAD_CONSTANT && (hgr__op_input_count(ctx) == 2 || hgr__node_attr(ctx->node, "pad_value")))
    return HGR__OP_ERROR(ctx, "a pad value is given, but pad_mode \"%s\" takes none", mode_text);
  if (hgr__op_input_count(ctx) == 2) {
    const hgr__entry_t* value = hgr__op_input(ctx, 1);
    HGR_RETURN_IF_ERROR(check_same_dtype(ctx, value, "input 1 (the pad value)", in, "input 0"));
    if (value->element_count != 1) {
      char have[160];
      return HGR__OP_ERROR(ctx, "input 1 (the pad value, entry %u) is shaped %s; it must hold one element",
                           hgr__op_entry_id(ctx, value), hgr__entry_shape(value, have, sizeof(have)));
    }
    if (hgr__node_attr(ctx->node, "pad_value"))
      return HGR__OP_ERROR(ctx, "attr 'pad_value' and input 1 both give the pad value; give one");
    return HGR_OK;
  }
  return pad_value_bits(ctx, out_bits);
}

static hgr_status_t infer_pad(hgr__op_ctx_t* ctx, hgr__entry_t* outputs) {
  int64_t shape[HGR_MAX_DIMS], widths[2 * HGR_MAX_DIMS];
  uint32_t bits;
  int mode;
  HGR_RETURN_IF_ERROR(pad_shape(ctx, shape, widths, &mode, &bits));
  set_output(ctx, outputs, shape, hgr__op_input(ctx, 0)->ndim);
  return HGR_OK;
}

static hgr_status_t plan_pad(hgr__op_ctx_t* ctx) {
  const hgr__entry_t* in = hgr__op_input(ctx, 0);
  int32_t ndim = in->ndim;
  int64_t shape[HGR_MAX_DIMS], widths[2 * HGR_MAX_DIMS];
  uint32_t bits;
  int mode;
  HGR_RETURN_IF_ERROR(pad_shape(ctx, shape, widths, &mode, &bits));
  HGR_RETURN_IF_ERROR(check_output_fits(ctx));
  bool value_input = hgr__op_input_count(ctx) == 2;
  hgr__launch_plan_t* l = hgr__op_launch(ctx, mode != PAD_CONSTANT ? "hgr_layout_pad_mode"
                                              : value_input        ? "hgr_layout_pad_input"
                                                                   : "hgr_layout_pad");
  hgr__launch_input(ctx, l, 0);
  if (value_input) hgr__launch_input(ctx, l, 1);
  hgr__launch_output(ctx, l, 0);
  hgr__launch_meta_arg(ctx, l);
  if (mode != PAD_CONSTANT) hgr__launch_int(ctx, l, mode == PAD_REFLECT);
  else if (!value_input) hgr__launch_uint(ctx, l, bits);
  uint64_t count = hgr__op_output(ctx, 0)->element_count;
  hgr__launch_uint(ctx, l, (uint32_t)count);
  hgr__launch_meta1(ctx, l, ndim);
  for (int32_t d = 0; d < ndim; ++d) hgr__launch_meta1(ctx, l, (int32_t)shape[d]);
  for (int32_t d = 0; d < ndim; ++d) hgr__launch_meta1(ctx, l, (int32_t)widths[2 * d]);
  for (int32_t d = 0; d < ndim; ++d) hgr__launch_meta1(ctx, l, (int32_t)in->shape[d]);
  hgr__launch_1d(ctx, l, count);
  return HGR_OK;
}

/* ---- take ----------------------------------------------------------------------------- */

/* Whether an attr's value means None. */
static bool is_none(const char* value) {
  while (*value == ' ') ++value;
  return !*value || !strcmp(value, "None") || !strcmp(value, "null");
}

/* What take computes: the output shape, the extent of the axis taken from (over
 * the flattened data without an axis), the elements after the axis, and whether
 * indices wrap (else clip). */
typedef struct take_t {
  int64_t shape[HGR_MAX_DIMS];
  int32_t ndim;
  int64_t axis_dim, inner;
  bool wrap;
} take_t;

static hgr_status_t take_shape(const hgr__op_ctx_t* ctx, take_t* p) {
  HGR_RETURN_IF_ERROR(check_data(ctx));
  const hgr__entry_t* data = hgr__op_input(ctx, 0);
  const hgr__entry_t* indices = hgr__op_input(ctx, 1);
  if (!hgr__dtype_is_i32(indices->dtype)) {
    char have[32];
    return HGR__OP_ERROR(ctx, "input 1 (the indices, entry %u) is %s; take needs int32 indices",
                         hgr__op_entry_id(ctx, indices), hgr_dtype_format(indices->dtype, have, sizeof(have)));
  }
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "input 1's element count", indices->element_count, INT32_MAX));
  HGR_RETURN_IF_ERROR(check_dims(ctx, indices, "input 1"));
  int64_t batch_dims;
  HGR_RETURN_IF_ERROR(hgr__attr_int(ctx, "batch_dims", 0, &batch_dims));
  if (batch_dims != 0)
    return HGR__OP_ERROR(ctx, "attr 'batch_dims' = %lld is not supported; only 0 is", (long long)batch_dims);
  /* "fast" skips Relay's bounds handling; here it clips, so nothing reads out of
   * bounds whatever the indices hold. */
  const char* mode = hgr__attr_string(ctx, "mode", "clip");
  bool wrap = !strcmp(mode, "wrap");
  p->wrap = wrap;
  if (!wrap && strcmp(mode, "clip") != 0 && strcmp(mode, "fast") != 0)
    return HGR__OP_ERROR(ctx, "attr 'mode' = \"%s\" is not \"clip\", \"wrap\" or \"fast\"", mode);

  int64_t* shape = p->shape;
  int32_t ndim = 0;
  int64_t axis_dim, inner = 1;
  const char* axis_text = hgr__attr_string(ctx, "axis", "None");
  if (is_none(axis_text)) { /* from the flattened data */
    axis_dim = (int64_t)data->element_count;
    for (int32_t d = 0; d < indices->ndim; ++d) shape[ndim++] = indices->shape[d];
  } else {
    int64_t axis_attr;
    int32_t axis;
    HGR_RETURN_IF_ERROR(hgr__attr_int(ctx, "axis", 0, &axis_attr));
    HGR_RETURN_IF_ERROR(hgr__op_axis(ctx, "axis", axis_attr, data->ndim, &axis));
    if (data->ndim - 1 + indices->ndim > HGR_MAX_DIMS)
      return HGR__OP_ERROR(ctx, "the output would have %d dimensions, more than %d", data->ndim - 1 + indices->ndim,
                           HGR_MAX_DIMS);
    axis_dim = data->shape[axis];
    for (int32_t d = 0; d < axis; ++d) shape[ndim++] = data->shape[d];
    for (int32_t d = 0; d < indices->ndim; ++d) shape[ndim++] = indices->shape[d];
    for (int32_t d = axis + 1; d < data->ndim; ++d) {
      shape[ndim++] = data->shape[d];
      inner = multiply(inner, data->shape[d]);
    }
  }
  uint64_t out_count = 1;
  for (int32_t d = 0; d < ndim; ++d) out_count = (uint64_t)multiply((int64_t)out_count, shape[d]);
  if (axis_dim == 0 && out_count > 0) {
    char have[160];
    return HGR__OP_ERROR(ctx, "input 0 (entry %u) is shaped %s: the axis to take from is empty",
                         hgr__op_entry_id(ctx, data), hgr__entry_shape(data, have, sizeof(have)));
  }
  p->ndim = ndim;
  p->axis_dim = axis_dim;
  p->inner = inner;
  return HGR_OK;
}

static hgr_status_t infer_take(hgr__op_ctx_t* ctx, hgr__entry_t* outputs) {
  take_t p;
  HGR_RETURN_IF_ERROR(take_shape(ctx, &p));
  set_output(ctx, outputs, p.shape, p.ndim);
  return HGR_OK;
}

static hgr_status_t plan_take(hgr__op_ctx_t* ctx) {
  take_t p;
  HGR_RETURN_IF_ERROR(take_shape(ctx, &p));
  HGR_RETURN_IF_ERROR(check_output_fits(ctx));
  const hgr__entry_t* indices = hgr__op_input(ctx, 1);
  const hgr__entry_t* out = hgr__op_output(ctx, 0);
  hgr__launch_plan_t* l = hgr__op_launch(ctx, "hgr_layout_take");
  hgr__launch_input(ctx, l, 0);
  hgr__launch_input(ctx, l, 1);
  hgr__launch_output(ctx, l, 0);
  hgr__launch_int(ctx, l, (int32_t)p.axis_dim);
  hgr__launch_int(ctx, l, (int32_t)indices->element_count);
  hgr__launch_int(ctx, l, (int32_t)p.inner);
  hgr__launch_int(ctx, l, p.wrap);
  uint64_t rows = (uint64_t)indices->element_count * (uint64_t)p.inner;
  uint64_t outer = rows ? out->element_count / rows : 0;
  hgr__launch_int(ctx, l, (int32_t)outer);
  /* 8 elements of a row per work-item; work-groups along the rows when they are
   * long enough, else along the indices: two fixed shapes, so PoCL compiles one
   * work-group function each. */
  int group_dim = p.inner >= 128 ? 0 : 1;
  size_t group = ctx->limits.max_work_group && ctx->limits.max_work_group < 64 ? ctx->limits.max_work_group : 64;
  if (ctx->limits.max_work_item[group_dim] && group > ctx->limits.max_work_item[group_dim])
    group = ctx->limits.max_work_item[group_dim];
  size_t global[3] = {(size_t)(p.inner + 7) / 8, (size_t)indices->element_count, (size_t)outer};
  size_t local[3] = {1, 1, 1};
  local[group_dim] = group;
  hgr__launch_nd(l, 3, global, local);
  return HGR_OK;
}

/* ---- strided_slice -------------------------------------------------------------------- */

/* topi's CanonicalizeIndex: negative counts from the end, then clamped to what a
 * slice with this stride's sign can start or stop at. */
static int64_t canonical_index(int64_t index, int64_t extent, int64_t stride) {
  int64_t lowest = stride < 0 ? -1 : 0;
  int64_t highest = stride < 0 ? extent - 1 : extent;
  if (index < 0) index += extent;
  return index < lowest ? lowest : index > highest ? highest : index;
}

/* Per input dim: the first index, the step and the extent of the slice (the
 * output's shape). */
static hgr_status_t slice_shape(const hgr__op_ctx_t* ctx, int64_t* start, int64_t* step, int64_t* shape) {
  HGR_RETURN_IF_ERROR(check_data(ctx));
  const hgr__entry_t* in = hgr__op_input(ctx, 0);
  int32_t ndim = in->ndim;
  int64_t begin[HGR_MAX_DIMS], end[HGR_MAX_DIMS], strides[HGR_MAX_DIMS], axes_attr[HGR_MAX_DIMS];
  uint32_t begin_count, end_count, stride_count, axis_count;
  bool begin_present, end_present, axes_present;
  HGR_RETURN_IF_ERROR(hgr__attr_ints(ctx, "begin", begin, HGR_MAX_DIMS, &begin_count, &begin_present));
  HGR_RETURN_IF_ERROR(hgr__attr_ints(ctx, "end", end, HGR_MAX_DIMS, &end_count, &end_present));
  HGR_RETURN_IF_ERROR(hgr__attr_ints(ctx, "strides", strides, HGR_MAX_DIMS, &stride_count, NULL));
  HGR_RETURN_IF_ERROR(hgr__attr_ints(ctx, "axes", axes_attr, HGR_MAX_DIMS, &axis_count, &axes_present));
  if (!begin_present) return HGR__OP_ERROR(ctx, "attr 'begin' is required");
  if (!end_present) return HGR__OP_ERROR(ctx, "attr 'end' is required");
  const char* mode = hgr__attr_string(ctx, "slice_mode", "end");
  bool size_mode = !strcmp(mode, "size");
  if (!size_mode && strcmp(mode, "end") != 0)
    return HGR__OP_ERROR(ctx, "attr 'slice_mode' = \"%s\" is not \"end\" or \"size\"", mode);

  int32_t axes[HGR_MAX_DIMS];
  if (axes_present) {
    /* Relay: axes, begin, end and strides have one value per listed axis. */
    if (begin_count != axis_count || end_count != axis_count || (stride_count && stride_count != axis_count))
      return HGR__OP_ERROR(ctx, "attrs 'begin', 'end' and 'strides' have %u, %u and %u values, but 'axes' = \"%s\" "
                           "lists %u axes; give one value per axis",
                           begin_count, end_count, stride_count, hgr__attr_string(ctx, "axes", ""), axis_count);
    bool used[HGR_MAX_DIMS] = {false};
    for (uint32_t i = 0; i < axis_count; ++i) {
      HGR_RETURN_IF_ERROR(hgr__op_axis(ctx, "axes", axes_attr[i], ndim, &axes[i]));
      if (used[axes[i]])
        return HGR__OP_ERROR(ctx, "attr 'axes' = \"%s\" lists axis %d twice", hgr__attr_string(ctx, "axes", ""),
                             axes[i]);
      used[axes[i]] = true;
    }
    for (uint32_t i = stride_count; i < axis_count; ++i) strides[i] = 1;
  } else {
    /* Missing trailing dims take the full range (topi's strided_slice). */
    const char* names[3] = {"begin", "end", "strides"};
    uint32_t counts[3] = {begin_count, end_count, stride_count};
    for (int k = 0; k < 3; ++k)
      if (counts[k] > (uint32_t)ndim)
        return HGR__OP_ERROR(ctx, "attr '%s' = \"%s\" has %u values, but input 0 has %d dimension%s", names[k],
                             hgr__attr_string(ctx, names[k], ""), counts[k], ndim, ndim == 1 ? "" : "s");
    for (uint32_t i = stride_count; i < (uint32_t)ndim; ++i) strides[i] = 1;
    for (uint32_t i = begin_count; i < (uint32_t)ndim; ++i) begin[i] = strides[i] > 0 ? 0 : INT64_MAX;
    for (uint32_t i = end_count; i < (uint32_t)ndim; ++i) end[i] = strides[i] < 0 ? 0 : INT64_MAX;
    axis_count = (uint32_t)ndim;
    for (int32_t d = 0; d < ndim; ++d) axes[d] = d;
  }

  for (int32_t d = 0; d < ndim; ++d) {
    start[d] = 0;
    step[d] = 1;
    shape[d] = in->shape[d];
  }
  for (uint32_t i = 0; i < axis_count; ++i) {
    int32_t d = axes[i];
    int64_t extent = in->shape[d];
    int64_t stride = size_mode ? 1 : strides[i]; /* "size" ignores strides, as topi does */
    if (stride == 0)
      return HGR__OP_ERROR(ctx, "attr 'strides' = \"%s\" has a 0 stride", hgr__attr_string(ctx, "strides", ""));
    if (stride == INT64_MIN) stride = -INT64_MAX; /* same slice, and negatable */
    int64_t stop = end[i];
    if (size_mode) { /* end is a size; a negative one means to the end */
      if (stop < 0) stop = INT64_MAX;
      else stop = begin[i] > 0 && stop > INT64_MAX - begin[i] ? INT64_MAX : begin[i] + stop;
    }
    int64_t first = canonical_index(begin[i], extent, stride);
    int64_t last = canonical_index(stop, extent, stride);
    if (stride < 0 ? last > first : first > last)
      return HGR__OP_ERROR(ctx, "begin %lld and end %lld (stride %lld) are invalid for axis %d of extent %lld: "
                           "they canonicalize to [%lld, %lld)",
                           (long long)begin[i], (long long)end[i], (long long)stride, d, (long long)extent,
                           (long long)first, (long long)last);
    int64_t interval = stride < 0 ? first - last : last - first;
    int64_t magnitude = stride < 0 ? -stride : stride;
    shape[d] = interval == 0 ? 0 : (interval - 1) / magnitude + 1;
    start[d] = first;
    step[d] = shape[d] > 1 ? stride : 1; /* a huge stride taking one element must not overflow */
  }
  return HGR_OK;
}

/* The slice's shape and its output layout (attrs out_shape and out_axes, ops.h),
 * whose view may only split the slice's dims (hgr__view_splits: a strided gather
 * reads it then); out_shape and *out_ndim get the output's shape, view (4 values) the
 * view out_shape gives. */
static hgr_status_t slice_layout(const hgr__op_ctx_t* ctx, int64_t* start, int64_t* step, int64_t* shape,
                                 int64_t* out_shape, int32_t* out_ndim, hgr__out_layout_t* layout, int64_t* view) {
  HGR_RETURN_IF_ERROR(slice_shape(ctx, start, step, shape));
  *out_ndim = hgr__op_input(ctx, 0)->ndim;
  memcpy(out_shape, shape, sizeof(int64_t) * (size_t)*out_ndim);
  HGR_RETURN_IF_ERROR(hgr__out_layout_parse(ctx, out_shape, out_ndim, layout));
  for (int32_t a = 0; layout->mapped && a < layout->rank; ++a) view[a] = layout->dims[4 - layout->rank + a];
  if (layout->mapped && !hgr__view_splits(shape, hgr__op_input(ctx, 0)->ndim, view, layout->rank, NULL, NULL))
    return HGR__OP_ERROR(ctx, "attr 'out_shape' = \"%s\" does not only split the slice's dims",
                         hgr__attr_string(ctx, "out_shape", ""));
  return HGR_OK;
}

static hgr_status_t infer_strided_slice(hgr__op_ctx_t* ctx, hgr__entry_t* outputs) {
  int64_t start[HGR_MAX_DIMS], step[HGR_MAX_DIMS], shape[HGR_MAX_DIMS], out_shape[HGR_MAX_DIMS];
  int32_t out_ndim;
  int64_t view[4];
  hgr__out_layout_t layout;
  HGR_RETURN_IF_ERROR(slice_layout(ctx, start, step, shape, out_shape, &out_ndim, &layout, view));
  set_output(ctx, outputs, out_shape, out_ndim);
  return HGR_OK;
}

/* With an output layout the slice, the reshape and the transpose after it are one
 * gather: the view's strides into the input (each a split of a slice dim's), in
 * out_axes' order. */
static hgr_status_t plan_strided_slice(hgr__op_ctx_t* ctx) {
  const hgr__entry_t* in = hgr__op_input(ctx, 0);
  int32_t ndim = in->ndim, out_ndim;
  int64_t start[HGR_MAX_DIMS], step[HGR_MAX_DIMS], shape[HGR_MAX_DIMS], out_shape[HGR_MAX_DIMS];
  int64_t view[4], view_strides[4];
  hgr__out_layout_t layout;
  HGR_RETURN_IF_ERROR(slice_layout(ctx, start, step, shape, out_shape, &out_ndim, &layout, view));
  HGR_RETURN_IF_ERROR(check_output_fits(ctx));
  uint64_t count = hgr__op_output(ctx, 0)->element_count;
  int64_t in_strides[HGR_MAX_DIMS], gather_strides[HGR_MAX_DIMS] = {0};
  row_major_strides(in->shape, ndim, in_strides);
  int64_t offset = 0;
  for (int32_t d = 0; d < ndim && count > 0; ++d) { /* exact once the slice is not empty */
    gather_strides[d] = step[d] * in_strides[d];
    offset += start[d] * in_strides[d];
  }
  if (layout.mapped) {
    hgr__view_splits(shape, ndim, view, layout.rank, gather_strides, view_strides); /* checked above */
    for (int32_t k = 0; k < layout.rank; ++k) gather_strides[k] = view_strides[layout.axes[k]];
  }
  launch_gather(ctx, out_shape, gather_strides, out_ndim, offset, count);
  return HGR_OK;
}

/* ---- broadcast_to --------------------------------------------------------------------- */

/* Relay's broadcast_to (ONNX Expand once the loader has broadcast the shapes): attr
 * 'shape' is the output shape, and input 0 must broadcast to it (numpy's rules:
 * dims aligned at the right, each input dim 1 or equal). */
static hgr_status_t broadcast_shape(const hgr__op_ctx_t* ctx, int64_t* shape, int32_t* out_ndim) {
  HGR_RETURN_IF_ERROR(check_data(ctx));
  const hgr__entry_t* in = hgr__op_input(ctx, 0);
  uint32_t count;
  bool present;
  HGR_RETURN_IF_ERROR(hgr__attr_ints(ctx, "shape", shape, HGR_MAX_DIMS, &count, &present));
  const char* text = hgr__attr_string(ctx, "shape", "");
  if (!present) return HGR__OP_ERROR(ctx, "attr 'shape' is required");
  int32_t ndim = (int32_t)count;
  char have[160];
  if (ndim < in->ndim)
    return HGR__OP_ERROR(ctx, "attr 'shape' = \"%s\" has %d dimension%s, fewer than input 0 (entry %u, shaped %s)",
                         text, ndim, ndim == 1 ? "" : "s", hgr__op_entry_id(ctx, in),
                         hgr__entry_shape(in, have, sizeof(have)));
  for (int32_t d = 0; d < ndim; ++d) {
    if (shape[d] < 0)
      return HGR__OP_ERROR(ctx, "attr 'shape' = \"%s\" has the negative dim %lld", text, (long long)shape[d]);
    int32_t source = d - (ndim - in->ndim);
    if (source >= 0 && in->shape[source] != 1 && in->shape[source] != shape[d])
      return HGR__OP_ERROR(ctx, "input 0 (entry %u, shaped %s) does not broadcast to attr 'shape' = \"%s\": its dim "
                           "%d is %lld, not 1 or %lld",
                           hgr__op_entry_id(ctx, in), hgr__entry_shape(in, have, sizeof(have)), text, source,
                           (long long)in->shape[source], (long long)shape[d]);
  }
  *out_ndim = ndim;
  return HGR_OK;
}

static hgr_status_t infer_broadcast_to(hgr__op_ctx_t* ctx, hgr__entry_t* outputs) {
  int64_t shape[HGR_MAX_DIMS];
  int32_t ndim;
  HGR_RETURN_IF_ERROR(broadcast_shape(ctx, shape, &ndim));
  set_output(ctx, outputs, shape, ndim);
  return HGR_OK;
}

static hgr_status_t plan_broadcast_to(hgr__op_ctx_t* ctx) {
  const hgr__entry_t* in = hgr__op_input(ctx, 0);
  int64_t shape[HGR_MAX_DIMS], in_strides[HGR_MAX_DIMS], strides[HGR_MAX_DIMS];
  int32_t ndim;
  HGR_RETURN_IF_ERROR(broadcast_shape(ctx, shape, &ndim));
  HGR_RETURN_IF_ERROR(check_output_fits(ctx));
  row_major_strides(in->shape, in->ndim, in_strides);
  for (int32_t d = 0; d < ndim; ++d) {
    int32_t source = d - (ndim - in->ndim);
    strides[d] = source < 0 || in->shape[source] == 1 ? 0 : in_strides[source]; /* a repeated dim reads one place */
  }
  launch_gather(ctx, shape, strides, ndim, 0, hgr__op_output(ctx, 0)->element_count);
  return HGR_OK;
}

/* ---- tile ----------------------------------------------------------------------------- */

/* Relay's tile: attr 'reps' repeats each dim; with fewer reps than dims the reps
 * gain leading 1s, with more the input gains leading dims of 1. in_shape gets the
 * input's shape at the output's rank. */
static hgr_status_t tile_shape(const hgr__op_ctx_t* ctx, int64_t* shape, int64_t* in_shape, int32_t* out_ndim) {
  HGR_RETURN_IF_ERROR(check_data(ctx));
  const hgr__entry_t* in = hgr__op_input(ctx, 0);
  int64_t reps[HGR_MAX_DIMS];
  uint32_t count;
  bool present;
  HGR_RETURN_IF_ERROR(hgr__attr_ints(ctx, "reps", reps, HGR_MAX_DIMS, &count, &present));
  const char* text = hgr__attr_string(ctx, "reps", "");
  if (!present) return HGR__OP_ERROR(ctx, "attr 'reps' is required");
  int32_t ndim = (int32_t)count > in->ndim ? (int32_t)count : in->ndim;
  for (int32_t d = 0; d < ndim; ++d) {
    int32_t source = d - (ndim - in->ndim), rep = d - (ndim - (int32_t)count);
    in_shape[d] = source < 0 ? 1 : in->shape[source];
    int64_t times = rep < 0 ? 1 : reps[rep];
    if (times < 0 || times > INT32_MAX)
      return HGR__OP_ERROR(ctx, "attr 'reps' = \"%s\" repeats a dim %lld times; reps must be 0 to %d", text,
                           (long long)times, INT32_MAX);
    shape[d] = multiply(in_shape[d], times);
  }
  *out_ndim = ndim;
  return HGR_OK;
}

static hgr_status_t infer_tile(hgr__op_ctx_t* ctx, hgr__entry_t* outputs) {
  int64_t shape[HGR_MAX_DIMS], in_shape[HGR_MAX_DIMS];
  int32_t ndim;
  HGR_RETURN_IF_ERROR(tile_shape(ctx, shape, in_shape, &ndim));
  set_output(ctx, outputs, shape, ndim);
  return HGR_OK;
}

static hgr_status_t plan_tile(hgr__op_ctx_t* ctx) {
  int64_t shape[HGR_MAX_DIMS], in_shape[HGR_MAX_DIMS];
  int32_t ndim;
  HGR_RETURN_IF_ERROR(tile_shape(ctx, shape, in_shape, &ndim));
  HGR_RETURN_IF_ERROR(check_output_fits(ctx));
  uint64_t count = hgr__op_output(ctx, 0)->element_count;
  hgr__launch_plan_t* l = hgr__op_launch(ctx, "hgr_layout_tile");
  hgr__launch_input(ctx, l, 0);
  hgr__launch_output(ctx, l, 0);
  hgr__launch_meta_arg(ctx, l);
  hgr__launch_int(ctx, l, ndim);
  hgr__launch_uint(ctx, l, (uint32_t)count);
  /* An output with elements has every dim at most its count (<= INT32_MAX); an
   * empty one runs nothing. */
  for (int32_t d = 0; d < ndim; ++d) hgr__launch_meta1(ctx, l, count ? (int32_t)shape[d] : 1);
  for (int32_t d = 0; d < ndim; ++d) hgr__launch_meta1(ctx, l, count ? (int32_t)in_shape[d] : 1);
  hgr__launch_1d(ctx, l, count);
  return HGR_OK;
}

/* ---- depth_to_space, space_to_depth --------------------------------------------------- */

enum { DEPTH_TO_SPACE, SPACE_TO_DEPTH };

/* Both are a reshape, a transpose and a reshape of NCHW data: one strided gather
 * over a 6-D view of the output. What they compute, the output shape (4 dims) and
 * the gather's view (6 dims) and input strides. */
typedef struct block_move_t {
  int64_t shape[4];
  int64_t view[6], strides[6];
} block_move_t;

static hgr_status_t block_move_shape(const hgr__op_ctx_t* ctx, block_move_t* p) {
  HGR_RETURN_IF_ERROR(check_data(ctx));
  const hgr__entry_t* in = hgr__op_input(ctx, 0);
  static const char* const layouts[] = {"NCHW", "", NULL};
  static const char* const modes[] = {"DCR", "CRD", NULL};
  const char* layout;
  const char* mode = "DCR";
  HGR_RETURN_IF_ERROR(hgr__attr_choice(ctx, "layout", "NCHW", layouts, &layout));
  if (ctx->op->variant == DEPTH_TO_SPACE) HGR_RETURN_IF_ERROR(hgr__attr_choice(ctx, "mode", "DCR", modes, &mode));
  if (!hgr__node_attr(ctx->node, "block_size")) return HGR__OP_ERROR(ctx, "attr 'block_size' is required");
  int64_t b;
  HGR_RETURN_IF_ERROR(hgr__attr_int(ctx, "block_size", 0, &b));
  if (b < 1 || b > 65535)
    return HGR__OP_ERROR(ctx, "attr 'block_size' = %lld must be 1 to 65535", (long long)b);
  char have[160];
  if (in->ndim != 4)
    return HGR__OP_ERROR(ctx, "input 0 (entry %u) is shaped %s; %s takes NCHW data (4 dimensions)",
                         hgr__op_entry_id(ctx, in), hgr__entry_shape(in, have, sizeof(have)), ctx->op->name);
  int64_t n = in->shape[0], c = in->shape[1], h = in->shape[2], w = in->shape[3];
  int64_t hw = multiply(h, w); /* strides stay below INT32_MAX unless the data is empty (then nothing runs) */
  if (ctx->op->variant == DEPTH_TO_SPACE) {
    if (c % (b * b) != 0)
      return HGR__OP_ERROR(ctx, "input 0 (entry %u) is shaped %s: its %lld channels do not split into blocks of "
                           "block_size^2 = %lld",
                           hgr__op_entry_id(ctx, in), hgr__entry_shape(in, have, sizeof(have)), (long long)c,
                           (long long)(b * b));
    int64_t oc = c / (b * b);
    int64_t shape[4] = {n, oc, multiply(h, b), multiply(w, b)};
    memcpy(p->shape, shape, sizeof(shape));
    /* out[n, c, y * b + i, x * b + j] over the view [n, c, y, i, x, j] reads channel
     * (i * b + j) * oc + c in DCR, c * b * b + i * b + j in CRD. */
    bool dcr = !strcmp(mode, "DCR");
    int64_t view[6] = {n, oc, h, b, w, b};
    int64_t strides[6] = {multiply(c, hw), multiply(dcr ? 1 : b * b, hw), w, multiply(dcr ? b * oc : b, hw), 1,
                          multiply(dcr ? oc : 1, hw)};
    memcpy(p->view, view, sizeof(view));
    memcpy(p->strides, strides, sizeof(strides));
  } else {
    if (h % b != 0 || w % b != 0)
      return HGR__OP_ERROR(ctx, "input 0 (entry %u) is shaped %s: height and width must be multiples of attr "
                           "'block_size' = %lld",
                           hgr__op_entry_id(ctx, in), hgr__entry_shape(in, have, sizeof(have)), (long long)b);
    int64_t oh = h / b, ow = w / b;
    int64_t shape[4] = {n, multiply(c, b * b), oh, ow};
    memcpy(p->shape, shape, sizeof(shape));
    /* out[n, (i * b + j) * c + k, y, x] = in[n, k, y * b + i, x * b + j]: the view is
     * [n, i, j, k, y, x]. */
    int64_t view[6] = {n, b, b, c, oh, ow};
    int64_t strides[6] = {multiply(c, hw), w, 1, hw, multiply(b, w), b};
    memcpy(p->view, view, sizeof(view));
    memcpy(p->strides, strides, sizeof(strides));
  }
  return HGR_OK;
}

static hgr_status_t infer_block_move(hgr__op_ctx_t* ctx, hgr__entry_t* outputs) {
  block_move_t p;
  HGR_RETURN_IF_ERROR(block_move_shape(ctx, &p));
  set_output(ctx, outputs, p.shape, 4);
  return HGR_OK;
}

static hgr_status_t plan_block_move(hgr__op_ctx_t* ctx) {
  block_move_t p;
  HGR_RETURN_IF_ERROR(block_move_shape(ctx, &p));
  HGR_RETURN_IF_ERROR(check_output_fits(ctx));
  launch_gather(ctx, p.view, p.strides, 6, 0, hgr__op_output(ctx, 0)->element_count);
  return HGR_OK;
}

/* ---- gather_elements ------------------------------------------------------------------ */

/* ONNX GatherElements (Relay's gather): out[c] = data[c with c[axis] replaced by
 * indices[c]], the output shaped like the indices, which have the data's rank and
 * in every other dim at most the data's extent. A negative index counts from the
 * end; one still outside the axis is clamped into it (ONNX leaves it undefined;
 * clamping never reads out of bounds). */
static hgr_status_t gather_elements_axis(const hgr__op_ctx_t* ctx, int32_t* out_axis) {
  HGR_RETURN_IF_ERROR(check_data(ctx));
  const hgr__entry_t* data = hgr__op_input(ctx, 0);
  const hgr__entry_t* indices = hgr__op_input(ctx, 1);
  char have[160], want[160];
  if (!hgr__dtype_is_i32(indices->dtype))
    return HGR__OP_ERROR(ctx, "input 1 (the indices, entry %u) is %s; %s needs int32 indices",
                         hgr__op_entry_id(ctx, indices),
                         hgr_dtype_format(indices->dtype, have, sizeof(have)), ctx->op->name);
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "input 1's element count", indices->element_count, INT32_MAX));
  HGR_RETURN_IF_ERROR(check_dims(ctx, indices, "input 1"));
  if (data->ndim == 0)
    return HGR__OP_ERROR(ctx, "input 0 (entry %u) is a scalar; %s needs rank 1 or more", hgr__op_entry_id(ctx, data),
                         ctx->op->name);
  int64_t axis_attr;
  HGR_RETURN_IF_ERROR(hgr__attr_int(ctx, "axis", 0, &axis_attr));
  HGR_RETURN_IF_ERROR(hgr__op_axis(ctx, "axis", axis_attr, data->ndim, out_axis));
  bool fits = indices->ndim == data->ndim;
  for (int32_t d = 0; fits && d < data->ndim; ++d) fits = d == *out_axis || indices->shape[d] <= data->shape[d];
  if (!fits)
    return HGR__OP_ERROR(ctx, "input 1 (the indices, entry %u) is shaped %s but input 0 (entry %u) is %s; the indices "
                         "need the data's rank and, in every dim but axis %d, at most its extent",
                         hgr__op_entry_id(ctx, indices), hgr__entry_shape(indices, have, sizeof(have)),
                         hgr__op_entry_id(ctx, data),
                         hgr__entry_shape(data, want, sizeof(want)), *out_axis);
  if (data->shape[*out_axis] == 0 && indices->element_count > 0)
    return HGR__OP_ERROR(ctx, "input 0 (entry %u) is shaped %s: the axis to gather from is empty",
                         hgr__op_entry_id(ctx, data),
                         hgr__entry_shape(data, have, sizeof(have)));
  return HGR_OK;
}

static hgr_status_t infer_gather_elements(hgr__op_ctx_t* ctx, hgr__entry_t* outputs) {
  int32_t axis;
  HGR_RETURN_IF_ERROR(gather_elements_axis(ctx, &axis));
  const hgr__entry_t* indices = hgr__op_input(ctx, 1);
  set_output(ctx, outputs, indices->shape, indices->ndim);
  return HGR_OK;
}

static hgr_status_t plan_gather_elements(hgr__op_ctx_t* ctx) {
  int32_t axis;
  HGR_RETURN_IF_ERROR(gather_elements_axis(ctx, &axis));
  const hgr__entry_t* data = hgr__op_input(ctx, 0);
  const hgr__entry_t* indices = hgr__op_input(ctx, 1);
  int32_t ndim = data->ndim;
  uint64_t count = indices->element_count;
  int64_t strides[HGR_MAX_DIMS];
  row_major_strides(data->shape, ndim, strides);
  hgr__launch_plan_t* l = hgr__op_launch(ctx, "hgr_layout_gather_elements");
  hgr__launch_input(ctx, l, 0);
  hgr__launch_input(ctx, l, 1);
  hgr__launch_output(ctx, l, 0);
  hgr__launch_meta_arg(ctx, l);
  hgr__launch_int(ctx, l, ndim);
  hgr__launch_int(ctx, l, axis);
  hgr__launch_uint(ctx, l, (uint32_t)count);
  /* With indices, every dim and stride of the data is within int (the data holds at
   * least one element); without, nothing runs. */
  for (int32_t d = 0; d < ndim; ++d) hgr__launch_meta1(ctx, l, count ? (int32_t)indices->shape[d] : 1);
  for (int32_t d = 0; d < ndim; ++d) hgr__launch_meta1(ctx, l, count ? (int32_t)strides[d] : 0);
  hgr__launch_meta1(ctx, l, count ? (int32_t)data->shape[axis] : 1);
  hgr__launch_1d(ctx, l, count);
  return HGR_OK;
}

/* ---- cumsum --------------------------------------------------------------------------- */

/* Relay's cumsum with ONNX CumSum's reverse: sums along attr 'axis' (absent: over
 * the flattened data, the output then 1-D, as Relay does), in order, exclusive
 * leaving out the element itself, reverse from the end. int32 wraps. The line
 * geometry: outer lines of extent length, inner apart. */
typedef struct cumsum_t {
  int64_t outer, length, inner;
  bool exclusive, reverse;
} cumsum_t;

static hgr_status_t cumsum_shape(const hgr__op_ctx_t* ctx, cumsum_t* p, int64_t* shape, int32_t* out_ndim) {
  HGR_RETURN_IF_ERROR(check_data(ctx));
  const hgr__entry_t* in = hgr__op_input(ctx, 0);
  HGR_RETURN_IF_ERROR(hgr__attr_bool(ctx, "exclusive", false, &p->exclusive));
  HGR_RETURN_IF_ERROR(hgr__attr_bool(ctx, "reverse", false, &p->reverse));
  p->outer = p->inner = 1;
  if (is_none(hgr__attr_string(ctx, "axis", "None"))) {
    p->length = (int64_t)in->element_count;
    shape[0] = p->length;
    *out_ndim = 1;
    return HGR_OK;
  }
  if (in->ndim == 0)
    return HGR__OP_ERROR(ctx, "input 0 (entry %u) is a scalar; an 'axis' needs rank 1 or more",
                         hgr__op_entry_id(ctx, in));
  int64_t axis_attr;
  int32_t axis;
  HGR_RETURN_IF_ERROR(hgr__attr_int(ctx, "axis", 0, &axis_attr));
  HGR_RETURN_IF_ERROR(hgr__op_axis(ctx, "axis", axis_attr, in->ndim, &axis));
  for (int32_t d = 0; d < axis; ++d) p->outer = multiply(p->outer, in->shape[d]);
  for (int32_t d = axis + 1; d < in->ndim; ++d) p->inner = multiply(p->inner, in->shape[d]);
  p->length = in->shape[axis];
  memcpy(shape, in->shape, sizeof(int64_t) * (size_t)in->ndim);
  *out_ndim = in->ndim;
  return HGR_OK;
}

static hgr_status_t infer_cumsum(hgr__op_ctx_t* ctx, hgr__entry_t* outputs) {
  cumsum_t p;
  int64_t shape[HGR_MAX_DIMS];
  int32_t ndim;
  HGR_RETURN_IF_ERROR(cumsum_shape(ctx, &p, shape, &ndim));
  set_output(ctx, outputs, shape, ndim);
  return HGR_OK;
}

static hgr_status_t plan_cumsum(hgr__op_ctx_t* ctx) {
  cumsum_t p;
  int64_t shape[HGR_MAX_DIMS];
  int32_t ndim;
  HGR_RETURN_IF_ERROR(cumsum_shape(ctx, &p, shape, &ndim));
  /* An empty tensor runs nothing; otherwise each factor is at most the count. */
  bool empty = hgr__op_input(ctx, 0)->element_count == 0;
  uint64_t lines = empty ? 0 : (uint64_t)(p.outer * p.inner);
  bool is_int = hgr__dtype_is_i32(hgr__op_input(ctx, 0)->dtype);
  hgr__launch_plan_t* l = hgr__op_launch(ctx, is_int ? "hgr_layout_cumsum_i32" : "hgr_layout_cumsum_f32");
  hgr__launch_input(ctx, l, 0);
  hgr__launch_output(ctx, l, 0);
  hgr__launch_int(ctx, l, empty ? 1 : (int32_t)p.length);
  hgr__launch_int(ctx, l, empty ? 1 : (int32_t)p.inner);
  hgr__launch_int(ctx, l, p.exclusive);
  hgr__launch_int(ctx, l, p.reverse);
  hgr__launch_uint(ctx, l, (uint32_t)lines);
  hgr__launch_1d(ctx, l, lines);
  return HGR_OK;
}

/* ---- reshape-likes -------------------------------------------------------------------- */

/* Relay's reshape: newshape values > 0 are dims; 0 copies the input dim at this
 * position (a literal 0 with allowzero); -1 is inferred from the rest; -2 copies the
 * remaining input dims; -3 merges the next two input dims; -4 splits one input dim
 * into the next two values (one may be -1). */
static hgr_status_t reshape_shape(const hgr__op_ctx_t* ctx, int64_t* shape, int32_t* out_ndim) {
  const hgr__entry_t* in = hgr__op_input(ctx, 0);
  int64_t newshape[3 * HGR_MAX_DIMS];
  uint32_t count;
  bool present, allowzero;
  HGR_RETURN_IF_ERROR(hgr__attr_ints(ctx, "newshape", newshape, 3 * HGR_MAX_DIMS, &count, &present));
  HGR_RETURN_IF_ERROR(hgr__attr_bool(ctx, "allowzero", false, &allowzero));
  const char* text = hgr__attr_string(ctx, "newshape", "");
  if (!present) return HGR__OP_ERROR(ctx, "attr 'newshape' is required");
  int32_t ndim = 0, source = 0, inferred = -1;
#define RESHAPE_ERROR(...) HGR__OP_ERROR(ctx, "attr 'newshape' = \"%s\": " __VA_ARGS__)
  for (uint32_t i = 0; i < count; ++i) {
    int64_t value = newshape[i];
    if (ndim == HGR_MAX_DIMS || (value == -4 && ndim + 1 == HGR_MAX_DIMS))
      return RESHAPE_ERROR("more than %d dimensions", text, HGR_MAX_DIMS);
    if (value > 0 || (value == 0 && allowzero)) {
      shape[ndim++] = value;
      ++source;
    } else if (value == 0) {
      if (source >= in->ndim) return RESHAPE_ERROR("0 at position %u has no input dim to copy", text, i);
      shape[ndim++] = in->shape[source++];
    } else if (value == -1) {
      if (inferred >= 0) return RESHAPE_ERROR("more than one -1", text);
      inferred = ndim;
      shape[ndim++] = 1;
      ++source;
    } else if (value == -2) {
      while (source < in->ndim) {
        if (ndim == HGR_MAX_DIMS) return RESHAPE_ERROR("more than %d dimensions", text, HGR_MAX_DIMS);
        shape[ndim++] = in->shape[source++];
      }
    } else if (value == -3) {
      if (source + 1 >= in->ndim) return RESHAPE_ERROR("-3 at position %u has no two input dims to merge", text, i);
      shape[ndim++] = multiply(in->shape[source], in->shape[source + 1]);
      source += 2;
    } else if (value == -4) {
      if (i + 2 >= count || source >= in->ndim)
        return RESHAPE_ERROR("-4 at position %u needs two values after it and an input dim to split", text, i);
      int64_t whole = in->shape[source++], left = newshape[++i], right = newshape[++i];
      if ((left == -1 && right == -1) || left < -1 || right < -1 || (left == -1 && right == 0) ||
          (right == -1 && left == 0))
        return RESHAPE_ERROR("-4 splits %lld into %lld and %lld", text, (long long)whole, (long long)left,
                             (long long)right);
      if (left == -1) left = whole / right;
      if (right == -1) right = whole / left;
      if (multiply(left, right) != whole)
        return RESHAPE_ERROR("-4 cannot split %lld into %lld x %lld", text, (long long)whole, (long long)left,
                             (long long)right);
      shape[ndim++] = left;
      shape[ndim++] = right;
    } else {
      return RESHAPE_ERROR("%lld is not a dim or a special value (0, -1, -2, -3, -4)", text, (long long)value);
    }
  }
  if (inferred >= 0) {
    int64_t known = 1;
    for (int32_t d = 0; d < ndim; ++d)
      if (d != inferred) known = multiply(known, shape[d]);
    if (known == 0 || in->element_count % (uint64_t)known != 0) {
      char have[160];
      return RESHAPE_ERROR("the -1 cannot be inferred for input 0 shaped %s", text,
                           hgr__entry_shape(in, have, sizeof(have)));
    }
    shape[inferred] = (int64_t)(in->element_count / (uint64_t)known);
  }
#undef RESHAPE_ERROR
  *out_ndim = ndim;
  return HGR_OK;
}

/* The output shape the op gives for input 0. */
static hgr_status_t reshape_like_shape(const hgr__op_ctx_t* ctx, int64_t* shape, int32_t* out_ndim) {
  const hgr__entry_t* in = hgr__op_input(ctx, 0);
  int32_t ndim = 0;
  switch (ctx->op->variant) {
    case RESHAPE: return reshape_shape(ctx, shape, out_ndim);
    case BATCH_FLATTEN: {
      if (in->ndim == 0)
        return HGR__OP_ERROR(ctx, "input 0 (entry %u) is a scalar; %s needs rank 1 or more", hgr__op_entry_id(ctx, in),
                             ctx->op->name);
      shape[ndim++] = in->shape[0];
      shape[ndim] = 1;
      for (int32_t d = 1; d < in->ndim; ++d) shape[ndim] = multiply(shape[ndim], in->shape[d]);
      ++ndim;
      break;
    }
    case SQUEEZE: {
      int64_t axes_attr[HGR_MAX_DIMS];
      uint32_t axis_count;
      bool present;
      HGR_RETURN_IF_ERROR(hgr__attr_ints(ctx, "axis", axes_attr, HGR_MAX_DIMS, &axis_count, &present));
      bool drop[HGR_MAX_DIMS] = {false};
      for (int32_t d = 0; d < in->ndim; ++d) drop[d] = !present && in->shape[d] == 1; /* None: every 1 */
      for (uint32_t i = 0; i < axis_count; ++i) {
        int32_t axis;
        HGR_RETURN_IF_ERROR(hgr__op_axis(ctx, "axis", axes_attr[i], in->ndim, &axis));
        if (in->shape[axis] != 1)
          return HGR__OP_ERROR(ctx, "attr 'axis' = \"%s\" names dimension %d of extent %lld; squeeze removes only "
                               "dimensions of extent 1",
                               hgr__attr_string(ctx, "axis", ""), axis, (long long)in->shape[axis]);
        drop[axis] = true;
      }
      for (int32_t d = 0; d < in->ndim; ++d)
        if (!drop[d]) shape[ndim++] = in->shape[d];
      break;
    }
    case EXPAND_DIMS: {
      int64_t axis, new_axes;
      if (!hgr__node_attr(ctx->node, "axis")) return HGR__OP_ERROR(ctx, "attr 'axis' is required");
      HGR_RETURN_IF_ERROR(hgr__attr_int(ctx, "axis", 0, &axis));
      HGR_RETURN_IF_ERROR(hgr__attr_int(ctx, "num_newaxis", 1, &new_axes));
      if (axis < -(int64_t)in->ndim - 1 || axis > in->ndim)
        return HGR__OP_ERROR(ctx, "attr 'axis' = %lld is out of range for %d dimension%s (-%d to %d)",
                             (long long)axis, in->ndim, in->ndim == 1 ? "" : "s", in->ndim + 1, in->ndim);
      if (new_axes < 0 || new_axes > HGR_MAX_DIMS - in->ndim)
        return HGR__OP_ERROR(ctx, "attr 'num_newaxis' = %lld must be 0 to %d for input 0 of %d dimension%s",
                             (long long)new_axes, HGR_MAX_DIMS - in->ndim, in->ndim, in->ndim == 1 ? "" : "s");
      int32_t pivot = (int32_t)(axis < 0 ? axis + in->ndim + 1 : axis);
      for (int32_t d = 0; d < pivot; ++d) shape[ndim++] = in->shape[d];
      for (int64_t k = 0; k < new_axes; ++k) shape[ndim++] = 1;
      for (int32_t d = pivot; d < in->ndim; ++d) shape[ndim++] = in->shape[d];
      break;
    }
  }
  *out_ndim = ndim;
  return HGR_OK;
}

static hgr_status_t infer_reshape_like(hgr__op_ctx_t* ctx, hgr__entry_t* outputs) {
  const hgr__entry_t* in = hgr__op_input(ctx, 0);
  if (in->dtype.lanes != 1) /* any scalar dtype: the op moves bytes */
    return HGR__OP_ERROR(ctx, "input 0 (entry %u) has %u lanes; the op takes scalar dtypes", hgr__op_entry_id(ctx, in),
                         (unsigned)in->dtype.lanes);
  HGR_RETURN_IF_ERROR(check_dims(ctx, in, "input 0"));
  int64_t shape[HGR_MAX_DIMS];
  int32_t ndim;
  HGR_RETURN_IF_ERROR(reshape_like_shape(ctx, shape, &ndim));
  int64_t count = 1;
  for (int32_t d = 0; d < ndim; ++d) count = multiply(count, shape[d]);
  if ((uint64_t)count != in->element_count) {
    hgr__entry_t result = {0};
    hgr__op_set_output(&result, in->dtype, shape, ndim);
    char have[160], want[160], what[96];
    snprintf(what, sizeof(what), "attr 'newshape' = \"%.60s\"", hgr__attr_string(ctx, "newshape", ""));
    return HGR__OP_ERROR(ctx, "%s gives shape %s (%lld elements) but input 0 (entry %u) is shaped %s (%llu "
                         "elements); %s keeps the element count",
                         ctx->op->variant == RESHAPE ? what : "the op", hgr__entry_shape(&result, have, sizeof(have)),
                         (long long)count, hgr__op_entry_id(ctx, in),
                         hgr__entry_shape(in, want, sizeof(want)), (unsigned long long)in->element_count,
                         ctx->op->name);
  }
  set_output(ctx, outputs, shape, ndim);
  return HGR_OK;
}

static hgr_status_t plan_reshape_like(hgr__op_ctx_t* ctx) {
  const hgr__entry_t* in = hgr__op_input(ctx, 0);
  const hgr__entry_t* out = hgr__op_output(ctx, 0); /* infer_reshape_like's */
  if (out->storage_slot == in->storage_slot) return HGR_OK; /* an alias: nothing to run */
  /* words where the size allows (float32, int32, int64), else bytes */
  bool words = out->bytes % 4 == 0;
  uint64_t count = words ? out->bytes / 4 : out->bytes;
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "the output's size", count, UINT32_MAX));
  hgr__launch_plan_t* l = hgr__op_launch(ctx, words ? "hgr_layout_copy" : "hgr_layout_copy_bytes");
  hgr__launch_input(ctx, l, 0);
  hgr__launch_output(ctx, l, 0);
  hgr__launch_uint(ctx, l, (uint32_t)count);
  hgr__launch_1d(ctx, l, count);
  return HGR_OK;
}

#define RESHAPE_LIKE(name, attrs, variant) \
  {name, "layout", 1, 1, 1, 1, attrs, plan_reshape_like, variant, HGR__IN_PLACE_ALIAS, infer_reshape_like}

const hgr__op_t hgr__ops_layout[] = {
    {"concatenate", "layout", 1, UINT32_MAX, 1, 1, "axis", plan_concatenate, 0, HGR__IN_PLACE_REFUSED, infer_concatenate},
    {"transpose", "layout", 1, 1, 1, 1, "axes", plan_transpose, 0, HGR__IN_PLACE_REFUSED, infer_transpose},
    {"pad", "layout", 1, 2, 1, 1, "pad_width pad_value pad_mode", plan_pad, 0, HGR__IN_PLACE_REFUSED, infer_pad},
    {"take", "layout", 2, 2, 1, 1, "axis batch_dims mode", plan_take, 0, HGR__IN_PLACE_REFUSED, infer_take},
    {"strided_slice", "layout", 1, 1, 1, 1, "begin end strides axes slice_mode out_shape out_axes", plan_strided_slice, 0,
     HGR__IN_PLACE_REFUSED, infer_strided_slice},
    {"broadcast_to", "layout", 1, 1, 1, 1, "shape", plan_broadcast_to, 0, HGR__IN_PLACE_REFUSED, infer_broadcast_to},
    {"tile", "layout", 1, 1, 1, 1, "reps", plan_tile, 0, HGR__IN_PLACE_REFUSED, infer_tile},
    {"depth_to_space", "layout", 1, 1, 1, 1, "block_size layout mode", plan_block_move, DEPTH_TO_SPACE,
     HGR__IN_PLACE_REFUSED, infer_block_move},
    {"space_to_depth", "layout", 1, 1, 1, 1, "block_size layout", plan_block_move, SPACE_TO_DEPTH,
     HGR__IN_PLACE_REFUSED, infer_block_move},
    {"gather_elements", "layout", 2, 2, 1, 1, "axis", plan_gather_elements, 0, HGR__IN_PLACE_REFUSED,
     infer_gather_elements},
    {"gather", "layout", 2, 2, 1, 1, "axis", plan_gather_elements, 0, HGR__IN_PLACE_REFUSED, infer_gather_elements},
    {"cumsum", "layout", 1, 1, 1, 1, "axis exclusive reverse", plan_cumsum, 0, HGR__IN_PLACE_REFUSED, infer_cumsum},
    RESHAPE_LIKE("reshape", "newshape allowzero", RESHAPE),
    RESHAPE_LIKE("flatten", "", BATCH_FLATTEN),
    RESHAPE_LIKE("batch_flatten", "", BATCH_FLATTEN),
    RESHAPE_LIKE("squeeze", "axis", SQUEEZE),
    RESHAPE_LIKE("expand_dims", "axis num_newaxis", EXPAND_DIMS),
    {.name = NULL},
};
