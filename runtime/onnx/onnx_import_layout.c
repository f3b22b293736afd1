/* ONNX's Split, Slice, Pad, Resize/Upsample, Expand, Tile, DepthToSpace, SpaceToDepth,
 * GatherElements, Trilu. Each reads its attrs and constant inputs (starts, pads, sizes,
 * repeats: they decide output shapes, so they must be known at load) into plain
 * parameters once; import then maps them onto hgr's strided_slice, pad, resize2d,
 * broadcast_to, tile, depth_to_space, space_to_depth, gather_elements and trilu, and the
 * folds of Split, Slice, Pad, Expand and Tile compute the same parameters' result
 * on the host (exporters feed these ops int64 shape tensors). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "onnx_internal.h"

/* ---- shared -------------------------------------------------------------------------- */

/* The element types these ops move at run time. */
static hgr_status_t check_movable(const hgr__onnx_node_t* node, const hgr__onnx_value_t* x) {
  if (x->onnx_type == HGR__ONNX_FLOAT || x->onnx_type == HGR__ONNX_INT32 || x->onnx_type == HGR__ONNX_INT64)
    return HGR_OK;
  return HGR__ONNX_UNSUPPORTED(node, "input '%s' is %s; at run time hgr's %s takes float, int32 and int64 (held "
                               "as int32)", x->name, hgr__onnx_type_name(x->onnx_type), node->proto->op_type);
}

/* Expand, GatherElements and Resize came after opset 1: a model naming them at an
 * older opset is not valid ONNX. */
static hgr_status_t check_since(const hgr__onnx_node_t* node, int64_t since) {
  if (node->opset >= since) return HGR_OK;
  return HGR__ONNX_INVALID(node, "%s does not exist before opset %lld", node->proto->op_type, (long long)since);
}

/* Constant input i as integers, at most capacity of them (1-D or a scalar).
 * *out_present is false when the node omits it, or where empty_is_absent and it
 * is empty (opset 11's Resize passes empty tensors for unused inputs). */
static hgr_status_t input_ints(const hgr__onnx_node_t* node, uint32_t i, const char* what, int64_t* out,
                               uint32_t capacity, bool empty_is_absent, uint32_t* out_count, bool* out_present) {
  hgr__onnx_tensor_t* t = NULL;
  *out_count = 0;
  *out_present = false;
  HGR_RETURN_IF_ERROR(hgr__onnx_constant_input(node, i, &t));
  if (!t || (empty_is_absent && t->count == 0)) return HGR_OK;
  if (hgr__onnx_type_is_float(t->onnx_type) || t->onnx_type == HGR__ONNX_BOOL)
    return HGR__ONNX_INVALID(node, "input %u (%s) is %s; it takes integers", i, what,
                             hgr__onnx_type_name(t->onnx_type));
  if (t->ndim > 1) return HGR__ONNX_INVALID(node, "input %u (%s) has rank %d; it must be 1-D", i, what, (int)t->ndim);
  if (t->count > capacity)
    return HGR__ONNX_INVALID(node, "input %u (%s) has %llu values; at most %u make sense here", i, what,
                             (unsigned long long)t->count, capacity);
  for (uint64_t j = 0; j < t->count; ++j) out[j] = hgr__onnx_tensor_i64(t, j);
  *out_count = (uint32_t)t->count;
  *out_present = true;
  return HGR_OK;
}

/* The same for float inputs (Resize's roi and scales, Upsample's scales). */
static hgr_status_t input_floats(const hgr__onnx_node_t* node, uint32_t i, const char* what, double* out,
                                 uint32_t capacity, uint32_t* out_count, bool* out_present) {
  hgr__onnx_tensor_t* t = NULL;
  *out_count = 0;
  *out_present = false;
  HGR_RETURN_IF_ERROR(hgr__onnx_constant_input(node, i, &t));
  if (!t || t->count == 0) return HGR_OK;
  if (!hgr__onnx_type_is_float(t->onnx_type))
    return HGR__ONNX_INVALID(node, "input %u (%s) is %s; it takes floats", i, what, hgr__onnx_type_name(t->onnx_type));
  if (t->ndim > 1) return HGR__ONNX_INVALID(node, "input %u (%s) has rank %d; it must be 1-D", i, what, (int)t->ndim);
  if (t->count > capacity)
    return HGR__ONNX_INVALID(node, "input %u (%s) has %llu values; at most %u make sense here", i, what,
                             (unsigned long long)t->count, capacity);
  for (uint64_t j = 0; j < t->count; ++j) out[j] = hgr__onnx_tensor_f64(t, j);
  *out_count = (uint32_t)t->count;
  *out_present = true;
  return HGR_OK;
}

/* ---- Slice ---------------------------------------------------------------------------- */

/* Per dimension: the first index, the step and the count taken (ONNX's clamping). */
typedef struct slice_t {
  int64_t start[HGR_MAX_DIMS];
  int64_t step[HGR_MAX_DIMS];
  int64_t shape[HGR_MAX_DIMS];
  bool whole; /* the slice is all of the input */
} slice_t;

static hgr_status_t read_slice(const hgr__onnx_node_t* node, const hgr__onnx_value_t* x, slice_t* s) {
  int64_t starts[HGR_MAX_DIMS], ends[HGR_MAX_DIMS], axes[HGR_MAX_DIMS], steps[HGR_MAX_DIMS];
  uint32_t n_starts, n_ends, n_axes = 0, n_steps = 0;
  bool has_starts, has_ends, has_axes = false, has_steps = false;
  if (node->opset < 10) {
    HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, "starts ends axes"));
    HGR_RETURN_IF_ERROR(hgr__onnx_attr_ints(node, "starts", starts, HGR_MAX_DIMS, &n_starts, &has_starts));
    HGR_RETURN_IF_ERROR(hgr__onnx_attr_ints(node, "ends", ends, HGR_MAX_DIMS, &n_ends, &has_ends));
    HGR_RETURN_IF_ERROR(hgr__onnx_attr_ints(node, "axes", axes, HGR_MAX_DIMS, &n_axes, &has_axes));
  } else {
    HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, ""));
    HGR_RETURN_IF_ERROR(input_ints(node, 1, "starts", starts, HGR_MAX_DIMS, false, &n_starts, &has_starts));
    HGR_RETURN_IF_ERROR(input_ints(node, 2, "ends", ends, HGR_MAX_DIMS, false, &n_ends, &has_ends));
    HGR_RETURN_IF_ERROR(input_ints(node, 3, "axes", axes, HGR_MAX_DIMS, false, &n_axes, &has_axes));
    HGR_RETURN_IF_ERROR(input_ints(node, 4, "steps", steps, HGR_MAX_DIMS, false, &n_steps, &has_steps));
  }
  if (!has_starts || !has_ends) return HGR__ONNX_INVALID(node, "starts and ends are required");
  if (n_ends != n_starts || (has_axes && n_axes != n_starts) || (has_steps && n_steps != n_starts))
    return HGR__ONNX_INVALID(node, "starts, ends, axes and steps have %u, %u, %u and %u values; they must match",
                             n_starts, n_ends, n_axes, n_steps);
  if (n_starts > (uint32_t)x->ndim)
    return HGR__ONNX_INVALID(node, "%u starts for input '%s' of rank %d", n_starts, x->name, (int)x->ndim);
  bool used[HGR_MAX_DIMS] = {false};
  for (int32_t d = 0; d < x->ndim; ++d) {
    s->start[d] = 0;
    s->step[d] = 1;
    s->shape[d] = x->shape[d];
  }
  for (uint32_t i = 0; i < n_starts; ++i) {
    int32_t d;
    HGR_RETURN_IF_ERROR(hgr__onnx_axis(node, "axes", has_axes ? axes[i] : (int64_t)i, x->ndim, &d));
    if (used[d]) return HGR__ONNX_INVALID(node, "axes list axis %d twice", (int)d);
    used[d] = true;
    int64_t step = has_steps ? steps[i] : 1, extent = x->shape[d];
    if (step == 0) return HGR__ONNX_INVALID(node, "steps[%u] is 0", i);
    int64_t begin = starts[i], end = ends[i], count;
    if (begin < 0) begin += extent;
    if (end < 0) end += extent;
    if (step > 0) {
      begin = begin < 0 ? 0 : begin > extent ? extent : begin;
      end = end < 0 ? 0 : end > extent ? extent : end;
      count = end > begin ? (end - begin - 1) / step + 1 : 0;
    } else {
      begin = begin > extent - 1 ? extent - 1 : begin < 0 ? 0 : begin;
      end = end > extent - 1 ? extent - 1 : end < -1 ? -1 : end;
      int64_t magnitude = step == INT64_MIN ? INT64_MAX : -step;
      /* [0, extent - 1] is no range when extent is 0: nothing is taken */
      count = extent && begin > end ? (begin - end - 1) / magnitude + 1 : 0;
    }
    s->start[d] = count ? begin : 0;
    s->step[d] = count > 1 ? step : 1;
    s->shape[d] = count;
  }
  s->whole = true;
  for (int32_t d = 0; d < x->ndim; ++d)
    if (s->shape[d] != x->shape[d] || s->start[d] != 0 || s->step[d] != 1) s->whole = false;
  return HGR_OK;
}

/* A strided_slice of in (shaped in_shape, ndim) taking s. */
static hgr_status_t slice_value(hgr__onnx_node_t* node, hgr_value_t in, const int64_t* in_shape, int32_t ndim,
                                const slice_t* s, hgr_value_t* out_value) {
  int64_t begin[HGR_MAX_DIMS], end[HGR_MAX_DIMS];
  for (int32_t d = 0; d < ndim; ++d) {
    int64_t last = s->start[d] + (s->shape[d] - 1) * s->step[d];
    begin[d] = s->start[d];
    if (s->shape[d] == 0) end[d] = begin[d];
    else if (s->step[d] > 0) end[d] = last + 1;
    else end[d] = last > 0 ? last - 1 : -(in_shape[d] + 1); /* strided_slice reads -1 as the last element */
  }
  hgr_attrs_t* attrs = NULL;
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  hgr_status_t status = hgr_attrs_set_ints(attrs, "begin", begin, (size_t)ndim);
  if (!status) status = hgr_attrs_set_ints(attrs, "end", end, (size_t)ndim);
  if (!status) status = hgr_attrs_set_ints(attrs, "strides", s->step, (size_t)ndim);
  if (!status) status = hgr__onnx_add_op(node, "strided_slice", &in, 1, attrs, 1, out_value);
  hgr_attrs_release(attrs);
  return status;
}

/* Output k of node: x sliced by s (or x itself). */
static hgr_status_t add_slice(hgr__onnx_node_t* node, hgr__onnx_value_t* x, const slice_t* s, uint32_t k) {
  if (s->whole) return hgr__onnx_set_alias(node, k, x);
  hgr_value_t in, out;
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, x, &in));
  HGR_RETURN_IF_ERROR(slice_value(node, in, x->shape, x->ndim, s, &out));
  return hgr__onnx_set_runtime(node, k, out, x->onnx_type);
}

static hgr_status_t import_slice(hgr__onnx_node_t* node) {
  hgr__onnx_value_t* x;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  HGR_RETURN_IF_ERROR(check_movable(node, x));
  slice_t s;
  HGR_RETURN_IF_ERROR(read_slice(node, x, &s));
  return add_slice(node, x, &s, 0);
}

static hgr_status_t fold_slice(hgr__onnx_node_t* node) {
  hgr__onnx_value_t* x;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  slice_t s;
  HGR_RETURN_IF_ERROR(read_slice(node, x, &s));
  hgr__onnx_source_map_t map = {.kind = HGR__ONNX_MAP_SLICE, .in = x->constant};
  memcpy(map.start, s.start, sizeof(map.start));
  memcpy(map.step, s.step, sizeof(map.step));
  return hgr__onnx_fold_map(node, &map, s.shape, x->ndim, 0);
}

/* ---- Split ---------------------------------------------------------------------------- */

/* The axis and each output's extent along it (sizes: node->output_count values). */
static hgr_status_t read_split(const hgr__onnx_node_t* node, const hgr__onnx_value_t* x, int32_t* out_axis,
                               int64_t* sizes) {
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, node->opset < 13   ? "axis split"
                                                  : node->opset < 18 ? "axis"
                                                                     : "axis num_outputs"));
  int64_t axis_attr;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "axis", 0, &axis_attr));
  HGR_RETURN_IF_ERROR(hgr__onnx_axis(node, "attr 'axis'", axis_attr, x->ndim, out_axis));
  uint32_t n = node->output_count;
  int64_t extent = x->shape[*out_axis];
  if (n == 0) return HGR__ONNX_INVALID(node, "has no outputs");
  const Onnx__AttributeProto* a = node->opset < 13 ? hgr__onnx_attr(node, "split") : NULL;
  hgr__onnx_tensor_t* t = NULL;
  /* the split is an input from opset 13, and in opset 1 (attr or input) */
  if (node->opset >= 13 || node->opset < 2) HGR_RETURN_IF_ERROR(hgr__onnx_constant_input(node, 1, &t));
  if (a && t) return HGR__ONNX_INVALID(node, "gives the split as both attr and input");
  if (a || t) {
    uint64_t count = a ? a->n_ints : t->count;
    if (count != n)
      return HGR__ONNX_INVALID(node, "split has %llu values for %u outputs", (unsigned long long)count, n);
    int64_t sum = 0;
    for (uint32_t k = 0; k < n; ++k) {
      sizes[k] = a ? a->ints[k] : hgr__onnx_tensor_i64(t, k);
      if (sizes[k] < 0 || sizes[k] > extent)
        return HGR__ONNX_INVALID(node, "split[%u] = %lld for an axis of extent %lld", k, (long long)sizes[k],
                                 (long long)extent);
      sum += sizes[k];
    }
    if (sum != extent)
      return HGR__ONNX_INVALID(node, "split sums to %lld; the axis has extent %lld", (long long)sum, (long long)extent);
    return HGR_OK;
  }
  int64_t num_outputs;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "num_outputs", 0, &num_outputs));
  if (num_outputs) { /* opset 18: chunks of ceil(extent / n), the last one smaller */
    if (num_outputs != (int64_t)n)
      return HGR__ONNX_INVALID(node, "attr 'num_outputs' = %lld, but the node has %u outputs", (long long)num_outputs,
                               n);
    int64_t chunk = (extent + (int64_t)n - 1) / (int64_t)n, left = extent;
    for (uint32_t k = 0; k < n; ++k) {
      sizes[k] = left < chunk ? left : chunk;
      left -= sizes[k];
    }
    return HGR_OK;
  }
  if (extent % (int64_t)n)
    return HGR__ONNX_INVALID(node, "an axis of extent %lld does not split into %u equal parts", (long long)extent, n);
  for (uint32_t k = 0; k < n; ++k) sizes[k] = extent / (int64_t)n;
  return HGR_OK;
}

/* Reads the split and makes each output's slice, by import or fold. */
static hgr_status_t split(hgr__onnx_node_t* node, bool fold) {
  hgr__onnx_value_t* x;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  if (!fold) HGR_RETURN_IF_ERROR(check_movable(node, x));
  int64_t* sizes = hgr__calloc(node->loader->allocator, node->output_count ? node->output_count : 1, sizeof(*sizes));
  if (!sizes) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "%s: out of host memory", node->label);
  int32_t axis;
  hgr_status_t status = read_split(node, x, &axis, sizes);
  int64_t offset = 0;
  for (uint32_t k = 0; !status && k < node->output_count; offset += sizes[k], ++k) {
    if (!node->outputs[k]) continue;
    slice_t s = {.whole = sizes[k] == x->shape[axis]};
    for (int32_t d = 0; d < x->ndim; ++d) {
      s.start[d] = d == axis ? offset : 0;
      s.step[d] = 1;
      s.shape[d] = d == axis ? sizes[k] : x->shape[d];
    }
    if (fold) {
      hgr__onnx_source_map_t map = {.kind = HGR__ONNX_MAP_SLICE, .in = x->constant};
      memcpy(map.start, s.start, sizeof(map.start));
      memcpy(map.step, s.step, sizeof(map.step));
      status = hgr__onnx_fold_map(node, &map, s.shape, x->ndim, k);
    } else {
      status = add_slice(node, x, &s, k);
    }
  }
  hgr__free(node->loader->allocator, sizes);
  return status;
}

static hgr_status_t import_split(hgr__onnx_node_t* node) { return split(node, false); }
static hgr_status_t fold_split(hgr__onnx_node_t* node) { return split(node, true); }

/* ---- Pad ------------------------------------------------------------------------------- */

/* Pad's widths. Edge and reflect crop the negative widths first and then pad the
 * cropped input (ONNX Runtime's order: its spec is silent): `crop` says what is
 * kept, and before/after are then the positive widths alone. Constant mode keeps
 * negative widths in before/after (hgr's pad crops itself) and crop is whole. */
typedef struct pad_t {
  slice_t crop;
  int64_t before[HGR_MAX_DIMS];
  int64_t after[HGR_MAX_DIMS];
  int64_t shape[HGR_MAX_DIMS]; /* the output's */
  int kind;                    /* HGR__ONNX_MAP_PAD_CONSTANT, HGR__ONNX_MAP_PAD_EDGE, HGR__ONNX_MAP_PAD_REFLECT */
  const char* mode;            /* hgr's pad_mode */
} pad_t;

static hgr_status_t read_pad(const hgr__onnx_node_t* node, const hgr__onnx_value_t* x, pad_t* p) {
  const char* pads_attr = node->opset < 2 ? "paddings" : "pads"; /* renamed in opset 2 */
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, node->opset < 2    ? "mode paddings value"
                                                  : node->opset < 11 ? "mode pads value"
                                                                     : "mode"));
  char mode[16];
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_string(node, "mode", "constant", mode, sizeof(mode)));
  static const char* const modes[] = {"constant", "edge", "reflect"};
  static const int kinds[] = {HGR__ONNX_MAP_PAD_CONSTANT, HGR__ONNX_MAP_PAD_EDGE, HGR__ONNX_MAP_PAD_REFLECT};
  p->mode = NULL;
  for (int i = 0; i < 3; ++i)
    if (!strcmp(mode, modes[i])) {
      p->mode = modes[i];
      p->kind = kinds[i];
    }
  if (!p->mode && !strcmp(mode, "wrap"))
    return HGR__ONNX_UNSUPPORTED(node, "attr 'mode' = \"wrap\"; hgr pads constant, edge and reflect");
  if (!p->mode) return HGR__ONNX_INVALID(node, "attr 'mode' = \"%s\" is not constant, reflect, edge or wrap", mode);
  int64_t pads[2 * HGR_MAX_DIMS], axes[HGR_MAX_DIMS];
  uint32_t n_pads, n_axes = 0;
  bool has_pads, has_axes = false;
  if (node->opset < 11) {
    HGR_RETURN_IF_ERROR(hgr__onnx_attr_ints(node, pads_attr, pads, 2 * HGR_MAX_DIMS, &n_pads, &has_pads));
  } else {
    HGR_RETURN_IF_ERROR(input_ints(node, 1, "pads", pads, 2 * HGR_MAX_DIMS, false, &n_pads, &has_pads));
    if (node->opset >= 18)
      HGR_RETURN_IF_ERROR(input_ints(node, 3, "axes", axes, HGR_MAX_DIMS, false, &n_axes, &has_axes));
  }
  if (!has_pads) return HGR__ONNX_INVALID(node, "pads are required");
  uint32_t n = has_axes ? n_axes : (uint32_t)x->ndim;
  if (n_pads != 2 * n)
    return HGR__ONNX_INVALID(node, "%u pads for %u axes; it takes two per axis", n_pads, n);
  for (int32_t d = 0; d < x->ndim; ++d) p->before[d] = p->after[d] = 0;
  bool used[HGR_MAX_DIMS] = {false};
  for (uint32_t i = 0; i < n; ++i) {
    int32_t d;
    HGR_RETURN_IF_ERROR(hgr__onnx_axis(node, "axes", has_axes ? axes[i] : (int64_t)i, x->ndim, &d));
    if (used[d]) return HGR__ONNX_INVALID(node, "axes list axis %d twice", (int)d);
    used[d] = true;
    p->before[d] = pads[i];
    p->after[d] = pads[n + i];
  }
  p->crop.whole = true;
  for (int32_t d = 0; d < x->ndim; ++d) {
    int64_t extent = x->shape[d];
    for (int side = 0; side < 2; ++side) {
      int64_t width = side ? p->after[d] : p->before[d];
      if (width > INT32_MAX || width < -(int64_t)INT32_MAX)
        return HGR__ONNX_UNSUPPORTED(node, "a pad of %lld", (long long)width);
    }
    p->crop.start[d] = 0;
    p->crop.step[d] = 1;
    p->crop.shape[d] = extent;
    if (p->kind != HGR__ONNX_MAP_PAD_CONSTANT) {
      int64_t cut_before = p->before[d] < 0 ? -p->before[d] : 0, cut_after = p->after[d] < 0 ? -p->after[d] : 0;
      if (cut_before + cut_after > extent)
        return HGR__ONNX_INVALID(node, "pads crop axis %d of extent %lld by %lld", (int)d, (long long)extent,
                                 (long long)(cut_before + cut_after));
      if (cut_before || cut_after) p->crop.whole = false;
      p->crop.start[d] = cut_before;
      extent -= cut_before + cut_after;
      p->crop.shape[d] = extent;
      p->before[d] -= p->before[d] < 0 ? p->before[d] : 0;
      p->after[d] -= p->after[d] < 0 ? p->after[d] : 0;
    }
    for (int side = 0; side < 2; ++side) {
      int64_t width = side ? p->after[d] : p->before[d];
      if (width > 0 && extent == 0 && p->kind != HGR__ONNX_MAP_PAD_CONSTANT)
        return HGR__ONNX_INVALID(node, "axis %d is empty: mode \"%s\" has nothing to repeat", (int)d, mode);
      if (width > 0 && p->kind == HGR__ONNX_MAP_PAD_REFLECT && width > extent - 1)
        return HGR__ONNX_UNSUPPORTED(node, "a reflect pad of %lld on axis %d of extent %lld; hgr reflects at most "
                                     "extent - 1", (long long)width, (int)d, (long long)extent);
    }
    p->shape[d] = extent + p->before[d] + p->after[d];
    if (p->shape[d] < 0) /* constant mode */
      return HGR__ONNX_INVALID(node, "pads crop axis %d of extent %lld by %lld", (int)d, (long long)extent,
                               -(long long)(p->before[d] + p->after[d]));
  }
  return HGR_OK;
}

/* The constant pad value: the attr before opset 11, input 2 (a scalar) from 11.
 * *out_runtime: the input is a runtime value (NULL value then). */
static hgr_status_t read_pad_value(const hgr__onnx_node_t* node, const hgr__onnx_value_t* x, double* out_value,
                                   hgr__onnx_value_t** out_runtime) {
  *out_value = 0;
  *out_runtime = NULL;
  if (node->opset < 11) return hgr__onnx_attr_float(node, "value", 0.0, out_value);
  hgr__onnx_value_t* v = hgr__onnx_input(node, 2);
  if (!v) return HGR_OK;
  if (v->ndim > 1 || (v->ndim == 1 && v->shape[0] != 1))
    return HGR__ONNX_INVALID(node, "input 2 (constant_value) must hold one value");
  if (v->onnx_type != x->onnx_type)
    return HGR__ONNX_INVALID(node, "input 2 (constant_value) is %s, the data %s", hgr__onnx_type_name(v->onnx_type),
                             hgr__onnx_type_name(x->onnx_type));
  if (!v->constant) {
    *out_runtime = v;
    return HGR_OK;
  }
  *out_value = hgr__onnx_tensor_f64(v->constant, 0);
  return HGR_OK;
}

static hgr_status_t import_pad(hgr__onnx_node_t* node) {
  hgr__onnx_value_t* x;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  HGR_RETURN_IF_ERROR(check_movable(node, x));
  pad_t p;
  HGR_RETURN_IF_ERROR(read_pad(node, x, &p));
  double value = 0;
  hgr__onnx_value_t* runtime_value = NULL;
  if (p.kind == HGR__ONNX_MAP_PAD_CONSTANT) HGR_RETURN_IF_ERROR(read_pad_value(node, x, &value, &runtime_value));
  bool none = p.crop.whole;
  for (int32_t d = 0; d < x->ndim; ++d) none = none && !p.before[d] && !p.after[d];
  if (none) return hgr__onnx_set_alias(node, 0, x);
  int64_t widths[2 * HGR_MAX_DIMS];
  for (int32_t d = 0; d < x->ndim; ++d) {
    widths[2 * d] = p.before[d];
    widths[2 * d + 1] = p.after[d];
  }
  hgr_value_t in[2];
  uint32_t input_count = runtime_value ? 2 : 1;
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, x, &in[0]));
  if (!p.crop.whole) HGR_RETURN_IF_ERROR(slice_value(node, in[0], x->shape, x->ndim, &p.crop, &in[0]));
  bool pads = false;
  for (int32_t d = 0; d < x->ndim; ++d) pads = pads || p.before[d] || p.after[d];
  if (!pads) return hgr__onnx_set_runtime(node, 0, in[0], x->onnx_type);
  if (runtime_value) HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, runtime_value, &in[1])); /* pad's value input */
  if (!runtime_value && !hgr__onnx_type_is_float(x->onnx_type) && (value < INT32_MIN || value > INT32_MAX))
    return HGR__ONNX_UNSUPPORTED(node, "pad value %g; hgr computes int64 as int32", value);
  hgr_attrs_t* attrs = NULL;
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  hgr_status_t status = hgr_attrs_set_ints(attrs, "pad_width", widths, 2 * (size_t)x->ndim);
  if (!status && strcmp(p.mode, "constant")) status = hgr_attrs_set_string(attrs, "pad_mode", p.mode);
  if (!status && !runtime_value && value != 0)
    status = hgr__onnx_type_is_float(x->onnx_type) ? hgr_attrs_set_float(attrs, "pad_value", (float)value)
                                                   : hgr_attrs_set_int(attrs, "pad_value", (int64_t)value);
  return hgr__onnx_finish_op(node, status, attrs, "pad", in, input_count, 0, x->onnx_type);
}

static hgr_status_t fold_pad(hgr__onnx_node_t* node) {
  hgr__onnx_value_t* x;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  pad_t p;
  HGR_RETURN_IF_ERROR(read_pad(node, x, &p));
  hgr__onnx_tensor_t* fill = NULL;
  HGR_RETURN_IF_ERROR(hgr__onnx_tensor_new(node->loader->allocator, x->onnx_type, NULL, 0, node->label, &fill));
  hgr_status_t status = HGR_OK;
  if (p.kind == HGR__ONNX_MAP_PAD_CONSTANT) {
    hgr__onnx_value_t* v = node->opset < 11 ? NULL : hgr__onnx_input(node, 2);
    double value;
    hgr__onnx_value_t* runtime_value;
    status = read_pad_value(node, x, &value, &runtime_value);
    if (!status && v && v->constant && hgr__onnx_type_bytes(v->onnx_type) == hgr__onnx_type_bytes(x->onnx_type))
      memcpy(fill->data, v->constant->data, hgr__onnx_type_bytes(x->onnx_type)); /* exact, even for int64 */
    else if (!status)
      hgr__onnx_tensor_set_f64(fill, 0, value);
  }
  hgr__onnx_tensor_t* cropped = NULL;
  if (!status && !p.crop.whole) {
    hgr__onnx_source_map_t crop = {.kind = HGR__ONNX_MAP_SLICE, .in = x->constant};
    memcpy(crop.start, p.crop.start, sizeof(crop.start));
    memcpy(crop.step, p.crop.step, sizeof(crop.step));
    status = hgr__onnx_map_tensor(node, &crop, p.crop.shape, x->ndim, &cropped);
  }
  hgr__onnx_source_map_t map = {.kind = p.kind, .in = cropped ? cropped : x->constant, .fill = fill->data};
  memcpy(map.start, p.before, sizeof(map.start));
  if (!status) status = hgr__onnx_fold_map(node, &map, p.shape, x->ndim, 0);
  hgr__onnx_tensor_free(cropped);
  hgr__onnx_tensor_free(fill);
  return status;
}

/* ---- Expand, Tile ------------------------------------------------------------------------ */

static hgr_status_t read_expand(const hgr__onnx_node_t* node, const hgr__onnx_value_t* x, int64_t* shape,
                                int32_t* ndim) {
  HGR_RETURN_IF_ERROR(check_since(node, 8));
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, ""));
  int64_t want[HGR_MAX_DIMS];
  uint32_t count;
  bool present;
  HGR_RETURN_IF_ERROR(input_ints(node, 1, "shape", want, HGR_MAX_DIMS, false, &count, &present));
  if (!present) return HGR__ONNX_INVALID(node, "input 1 (the shape) is required");
  for (uint32_t i = 0; i < count; ++i)
    if (want[i] < 0) return HGR__ONNX_INVALID(node, "shape[%u] = %lld", i, (long long)want[i]);
  return hgr__onnx_broadcast(node, x->shape, x->ndim, want, (int32_t)count, shape, ndim);
}

static hgr_status_t import_expand(hgr__onnx_node_t* node) {
  hgr__onnx_value_t* x;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  HGR_RETURN_IF_ERROR(check_movable(node, x));
  int64_t shape[HGR_MAX_DIMS];
  int32_t ndim;
  HGR_RETURN_IF_ERROR(read_expand(node, x, shape, &ndim));
  bool same = ndim == x->ndim;
  for (int32_t d = 0; same && d < ndim; ++d) same = shape[d] == x->shape[d];
  if (same) return hgr__onnx_set_alias(node, 0, x);
  hgr_value_t in;
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, x, &in));
  hgr_attrs_t* attrs = NULL;
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  hgr_status_t status = hgr_attrs_set_ints(attrs, "shape", shape, (size_t)ndim);
  return hgr__onnx_finish_op(node, status, attrs, "broadcast_to", &in, 1, 0, x->onnx_type);
}

static hgr_status_t fold_expand(hgr__onnx_node_t* node) {
  hgr__onnx_value_t* x;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  int64_t shape[HGR_MAX_DIMS];
  int32_t ndim;
  HGR_RETURN_IF_ERROR(read_expand(node, x, shape, &ndim));
  hgr__onnx_source_map_t map = {.kind = HGR__ONNX_MAP_BROADCAST, .in = x->constant};
  return hgr__onnx_fold_map(node, &map, shape, ndim, 0);
}

static hgr_status_t read_tile(const hgr__onnx_node_t* node, const hgr__onnx_value_t* x, int64_t* reps,
                              int64_t* shape) {
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, ""));
  uint32_t count;
  bool present;
  if (node->opset < 6) { /* Tile-1: input 1 the copies along input 2's axis (scalars) */
    int64_t tiles, axis_value;
    int32_t axis;
    HGR_RETURN_IF_ERROR(input_ints(node, 1, "tiles", &tiles, 1, false, &count, &present));
    if (!present || count != 1) return HGR__ONNX_INVALID(node, "input 1 (tiles) must hold one value");
    HGR_RETURN_IF_ERROR(input_ints(node, 2, "axis", &axis_value, 1, false, &count, &present));
    if (!present || count != 1) return HGR__ONNX_INVALID(node, "input 2 (axis) must hold one value");
    HGR_RETURN_IF_ERROR(hgr__onnx_axis(node, "input 2 (axis)", axis_value, x->ndim, &axis));
    for (int32_t d = 0; d < x->ndim; ++d) reps[d] = d == axis ? tiles : 1;
    count = (uint32_t)x->ndim;
  } else {
    HGR_RETURN_IF_ERROR(input_ints(node, 1, "repeats", reps, HGR_MAX_DIMS, false, &count, &present));
    if (!present) return HGR__ONNX_INVALID(node, "input 1 (repeats) is required");
  }
  if ((int32_t)count != x->ndim)
    return HGR__ONNX_INVALID(node, "%u repeats for input '%s' of rank %d", count, x->name, (int)x->ndim);
  for (int32_t d = 0; d < x->ndim; ++d) {
    if (reps[d] < 0) return HGR__ONNX_INVALID(node, "repeats[%d] = %lld", (int)d, (long long)reps[d]);
    if (x->shape[d] && reps[d] > INT32_MAX / x->shape[d])
      return HGR__ONNX_UNSUPPORTED(node, "repeats[%d] = %lld makes the output too large", (int)d, (long long)reps[d]);
    shape[d] = x->shape[d] * reps[d];
  }
  return HGR_OK;
}

static hgr_status_t import_tile(hgr__onnx_node_t* node) {
  hgr__onnx_value_t* x;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  HGR_RETURN_IF_ERROR(check_movable(node, x));
  int64_t reps[HGR_MAX_DIMS], shape[HGR_MAX_DIMS];
  HGR_RETURN_IF_ERROR(read_tile(node, x, reps, shape));
  bool ones = true;
  for (int32_t d = 0; d < x->ndim; ++d) ones = ones && reps[d] == 1;
  if (ones) return hgr__onnx_set_alias(node, 0, x);
  hgr_value_t in;
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, x, &in));
  hgr_attrs_t* attrs = NULL;
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  hgr_status_t status = hgr_attrs_set_ints(attrs, "reps", reps, (size_t)x->ndim);
  return hgr__onnx_finish_op(node, status, attrs, "tile", &in, 1, 0, x->onnx_type);
}

static hgr_status_t fold_tile(hgr__onnx_node_t* node) {
  hgr__onnx_value_t* x;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  int64_t reps[HGR_MAX_DIMS], shape[HGR_MAX_DIMS];
  HGR_RETURN_IF_ERROR(read_tile(node, x, reps, shape));
  hgr__onnx_source_map_t map = {.kind = HGR__ONNX_MAP_TILE, .in = x->constant};
  return hgr__onnx_fold_map(node, &map, shape, x->ndim, 0);
}

/* ---- DepthToSpace, SpaceToDepth ---------------------------------------------------------- */

static hgr_status_t import_block_move(hgr__onnx_node_t* node, bool to_space) {
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, to_space && node->opset >= 11 ? "blocksize mode" : "blocksize"));
  hgr__onnx_value_t* x;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  HGR_RETURN_IF_ERROR(check_movable(node, x));
  if (x->ndim != 4)
    return HGR__ONNX_INVALID(node, "input '%s' has rank %d; the op takes NCHW data", x->name, (int)x->ndim);
  int64_t block;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "blocksize", 0, &block));
  if (block < 1 || block > 65535)
    return HGR__ONNX_INVALID(node, "attr 'blocksize' = %lld (required, at least 1)", (long long)block);
  char mode[8];
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_string(node, "mode", "DCR", mode, sizeof(mode)));
  if (strcmp(mode, "DCR") && strcmp(mode, "CRD"))
    return HGR__ONNX_INVALID(node, "attr 'mode' = \"%s\" is not DCR or CRD", mode);
  if (to_space ? x->shape[1] % (block * block) : x->shape[2] % block || x->shape[3] % block)
    return HGR__ONNX_INVALID(node, "input '%s' of shape [%lld, %lld, %lld, %lld] does not divide into blocks of %lld",
                             x->name, (long long)x->shape[0], (long long)x->shape[1], (long long)x->shape[2],
                             (long long)x->shape[3], (long long)block);
  hgr_value_t in;
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, x, &in));
  hgr_attrs_t* attrs = NULL;
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  hgr_status_t status = hgr_attrs_set_int(attrs, "block_size", block);
  if (!status && to_space) status = hgr_attrs_set_string(attrs, "mode", mode);
  return hgr__onnx_finish_op(node, status, attrs, to_space ? "depth_to_space" : "space_to_depth", &in, 1, 0, x->onnx_type);
}

static hgr_status_t import_depth_to_space(hgr__onnx_node_t* node) { return import_block_move(node, true); }
static hgr_status_t import_space_to_depth(hgr__onnx_node_t* node) { return import_block_move(node, false); }

/* ---- GatherElements ---------------------------------------------------------------------- */

static hgr_status_t import_gather_elements(hgr__onnx_node_t* node) {
  HGR_RETURN_IF_ERROR(check_since(node, 11));
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, "axis"));
  hgr__onnx_value_t *x, *iv;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 1, &iv));
  HGR_RETURN_IF_ERROR(check_movable(node, x));
  if (iv->onnx_type != HGR__ONNX_INT32 && iv->onnx_type != HGR__ONNX_INT64)
    return HGR__ONNX_INVALID(node, "indices '%s' are %s; they must be int32 or int64", iv->name,
                             hgr__onnx_type_name(iv->onnx_type));
  int64_t axis_attr;
  int32_t axis;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "axis", 0, &axis_attr));
  HGR_RETURN_IF_ERROR(hgr__onnx_axis(node, "attr 'axis'", axis_attr, x->ndim, &axis));
  if (iv->ndim != x->ndim)
    return HGR__ONNX_INVALID(node, "indices '%s' have rank %d, the data rank %d", iv->name, (int)iv->ndim,
                             (int)x->ndim);
  hgr_value_t in[2];
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, x, &in[0]));
  /* constants checked and made non-negative at load; the device clamps only runtime indices */
  HGR_RETURN_IF_ERROR(hgr__onnx_index_input(node, iv, x->shape[axis], &in[1]));
  hgr_attrs_t* attrs = NULL;
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  hgr_status_t status = hgr_attrs_set_int(attrs, "axis", axis);
  return hgr__onnx_finish_op(node, status, attrs, "gather_elements", in, 2, 0, x->onnx_type);
}

/* ---- Trilu ------------------------------------------------------------------------------- */

/* k (input 1, optional) must be known at load: a constant, or decided at run time
 * like TopK's k; it becomes trilu's attr. */
/* Trilu's input and its k (input 1, 0 when absent) and upper. */
static hgr_status_t read_trilu(hgr__onnx_node_t* node, hgr__onnx_value_t** out_x, int64_t* out_k, int64_t* out_upper) {
  HGR_RETURN_IF_ERROR(check_since(node, 14));
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, "upper"));
  hgr__onnx_value_t* x;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  if (x->onnx_type != HGR__ONNX_BOOL) HGR_RETURN_IF_ERROR(check_movable(node, x));
  if (x->ndim < 2) return HGR__ONNX_INVALID(node, "input '%s' has rank %d; Trilu needs 2 or more", x->name, (int)x->ndim);
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "upper", 1, out_upper));
  hgr__onnx_tensor_t* kt = NULL;
  HGR_RETURN_IF_ERROR(hgr__onnx_constant_input(node, 1, &kt));
  *out_k = 0;
  if (kt) {
    if (kt->count != 1 || kt->ndim > 1 || hgr__onnx_type_is_float(kt->onnx_type) || kt->onnx_type == HGR__ONNX_BOOL)
      return HGR__ONNX_INVALID(node, "input 1 (k) must hold one integer");
    *out_k = hgr__onnx_tensor_i64(kt, 0);
  }
  *out_x = x;
  return HGR_OK;
}

static hgr_status_t import_trilu(hgr__onnx_node_t* node) {
  hgr__onnx_value_t* x;
  int64_t upper, k;
  HGR_RETURN_IF_ERROR(read_trilu(node, &x, &k, &upper));
  hgr_value_t in;
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, x, &in));
  hgr_attrs_t* attrs = NULL;
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  hgr_status_t status = hgr_attrs_set_int(attrs, "k", k);
  if (!status) status = hgr_attrs_set_int(attrs, "upper", upper != 0);
  return hgr__onnx_finish_op(node, status, attrs, "trilu", &in, 1, 0, x->onnx_type);
}

/* A constant's triangle at load: a causal mask made of ConstantOfShape (at the
 * sequence's length) and Trilu becomes a param, which the attention pass reads. */
static hgr_status_t fold_trilu(hgr__onnx_node_t* node) {
  hgr__onnx_value_t* x;
  int64_t upper, k;
  HGR_RETURN_IF_ERROR(read_trilu(node, &x, &k, &upper));
  static const uint64_t zero = 0; /* the fill: zero of any type up to 8 bytes */
  hgr__onnx_source_map_t map = {.kind = HGR__ONNX_MAP_TRILU, .in = x->constant, .fill = &zero};
  map.start[0] = k;
  map.step[0] = upper != 0;
  return hgr__onnx_fold_map(node, &map, x->shape, x->ndim, 0);
}

/* ---- Resize, Upsample -------------------------------------------------------------------- */

/* resize2d's attrs. */
typedef struct resize_t {
  int64_t size[2];
  bool has_scales;
  double scales[2];
  bool has_roi;
  double roi[4]; /* h_start, w_start, h_end, w_end */
  const char* method;
  const char* transform;
  const char* rounding;
  double cubic_alpha;
  int64_t exclude_outside;
  double extrapolation;
} resize_t;

/* The output extent floor(scale * extent) (ONNX's), INVALID beyond int32. */
static hgr_status_t scaled_extent(const hgr__onnx_node_t* node, double scale, int64_t extent, int32_t axis,
                                  int64_t* out_extent) {
  if (!(scale > 0) || !isfinite(scale)) return HGR__ONNX_INVALID(node, "scale %g for axis %d", scale, (int)axis);
  double size = floor(scale * (double)extent);
  if (size > INT32_MAX)
    return HGR__ONNX_INVALID(node, "scale %g makes axis %d of extent %lld %g long", scale, (int)axis,
                             (long long)extent, size);
  *out_extent = (int64_t)size;
  return HGR_OK;
}

/* A float NCHW input: what resize2d takes. */
static hgr_status_t check_resizable(const hgr__onnx_node_t* node, const hgr__onnx_value_t* x) {
  if (x->onnx_type != HGR__ONNX_FLOAT)
    return HGR__ONNX_UNSUPPORTED(node, "input '%s' is %s; hgr resizes float", x->name,
                                 hgr__onnx_type_name(x->onnx_type));
  if (x->ndim != 4)
    return HGR__ONNX_UNSUPPORTED(node, "input '%s' has rank %d; hgr resizes H and W of 4-D NCHW data", x->name,
                                 (int)x->ndim);
  return HGR_OK;
}

/* Upsample and opset 10's Resize: asymmetric coordinates, nearest taking the floor
 * when upsampling and the ceiling when downsampling (ONNX Runtime's rule for these,
 * whose specs leave it open), and scales (4 values) giving the output size. */
static hgr_status_t upsample_params(const hgr__onnx_node_t* node, const hgr__onnx_value_t* x, const char* mode,
                                    const double* scales, uint32_t count, resize_t* r) {
  if (count != 4) return HGR__ONNX_INVALID(node, "%u scales for input '%s' of rank 4", count, x->name);
  if (scales[0] != 1 || scales[1] != 1)
    return HGR__ONNX_UNSUPPORTED(node, "scales %g and %g for N and C; hgr resizes H and W only", scales[0],
                                 scales[1]);
  if (!strcmp(mode, "nearest")) r->method = "nearest_neighbor";
  else if (!strcmp(mode, "linear") || !strcmp(mode, "bilinear")) r->method = "linear";
  else return HGR__ONNX_INVALID(node, "attr 'mode' = \"%s\" is not nearest or linear", mode);
  bool down[2], up[2];
  for (int a = 0; a < 2; ++a) {
    HGR_RETURN_IF_ERROR(scaled_extent(node, scales[2 + a], x->shape[2 + a], 2 + a, &r->size[a]));
    r->scales[a] = scales[2 + a];
    down[a] = scales[2 + a] < 1;
    up[a] = scales[2 + a] > 1;
  }
  if (!strcmp(r->method, "nearest_neighbor") && ((down[0] && up[1]) || (up[0] && down[1])))
    return HGR__ONNX_UNSUPPORTED(node, "nearest upsampling one axis and downsampling the other (scales %g, %g)",
                                 scales[2], scales[3]);
  r->has_scales = true;
  r->has_roi = false;
  r->transform = "asymmetric";
  r->rounding = down[0] || down[1] ? "ceil" : "floor";
  r->cubic_alpha = -0.75;
  r->exclude_outside = 0;
  r->extrapolation = 0;
  return HGR_OK;
}

static hgr_status_t read_resize(const hgr__onnx_node_t* node, const hgr__onnx_value_t* x, resize_t* r) {
  char mode[16], transform[32], nearest[32], policy[16];
  HGR_RETURN_IF_ERROR(check_since(node, 10));
  if (node->opset < 11) {
    HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, "mode"));
    HGR_RETURN_IF_ERROR(hgr__onnx_attr_string(node, "mode", "nearest", mode, sizeof(mode)));
    double scales[HGR_MAX_DIMS];
    uint32_t count;
    bool present;
    HGR_RETURN_IF_ERROR(input_floats(node, 1, "scales", scales, HGR_MAX_DIMS, &count, &present));
    if (!present) return HGR__ONNX_INVALID(node, "input 1 (scales) is required");
    return upsample_params(node, x, mode, scales, count, r);
  }
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(
      node, node->opset < 18 ? "coordinate_transformation_mode cubic_coeff_a exclude_outside extrapolation_value mode "
                               "nearest_mode"
                             : "antialias axes coordinate_transformation_mode cubic_coeff_a exclude_outside "
                               "extrapolation_value keep_aspect_ratio_policy mode nearest_mode"));
  int64_t antialias;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "antialias", 0, &antialias));
  if (antialias)
    return HGR__ONNX_UNSUPPORTED(node, "attr 'antialias' = %lld; hgr resizes without", (long long)antialias);
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_string(node, "mode", "nearest", mode, sizeof(mode)));
  if (!strcmp(mode, "nearest")) r->method = "nearest_neighbor";
  else if (!strcmp(mode, "linear")) r->method = "linear";
  else if (!strcmp(mode, "cubic")) r->method = "cubic";
  else return HGR__ONNX_INVALID(node, "attr 'mode' = \"%s\" is not nearest, linear or cubic", mode);
  static const char* const transforms[] = {"half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel",
                                           "tf_half_pixel_for_nn", "tf_crop_and_resize", NULL};
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_string(node, "coordinate_transformation_mode", "half_pixel", transform,
                                            sizeof(transform)));
  r->transform = NULL;
  for (int i = 0; transforms[i]; ++i)
    if (!strcmp(transform, transforms[i])) r->transform = transforms[i];
  if (!r->transform)
    return HGR__ONNX_UNSUPPORTED(node, "attr 'coordinate_transformation_mode' = \"%s\"; hgr supports half_pixel, "
                                 "align_corners, asymmetric, pytorch_half_pixel, tf_half_pixel_for_nn and "
                                 "tf_crop_and_resize", transform);
  static const char* const roundings[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil", NULL};
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_string(node, "nearest_mode", "round_prefer_floor", nearest, sizeof(nearest)));
  r->rounding = NULL;
  for (int i = 0; roundings[i]; ++i)
    if (!strcmp(nearest, roundings[i])) r->rounding = roundings[i];
  if (!r->rounding)
    return HGR__ONNX_INVALID(node, "attr 'nearest_mode' = \"%s\" is not round_prefer_floor, round_prefer_ceil, "
                             "floor or ceil", nearest);
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_float(node, "cubic_coeff_a", -0.75, &r->cubic_alpha));
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "exclude_outside", 0, &r->exclude_outside));
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_float(node, "extrapolation_value", 0.0, &r->extrapolation));
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_string(node, "keep_aspect_ratio_policy", "stretch", policy, sizeof(policy)));
  if (strcmp(policy, "stretch") && strcmp(policy, "not_larger") && strcmp(policy, "not_smaller"))
    return HGR__ONNX_INVALID(node, "attr 'keep_aspect_ratio_policy' = \"%s\" is not stretch, not_larger or "
                             "not_smaller", policy);

  /* The axes that scales, sizes and roi list (opset 18), each to its dimension. */
  int64_t axes_attr[HGR_MAX_DIMS];
  int32_t axes[HGR_MAX_DIMS];
  uint32_t n_axes;
  bool has_axes;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_ints(node, "axes", axes_attr, HGR_MAX_DIMS, &n_axes, &has_axes));
  if (!has_axes) n_axes = 4;
  bool used[4] = {false};
  for (uint32_t i = 0; i < n_axes; ++i) {
    HGR_RETURN_IF_ERROR(hgr__onnx_axis(node, "attr 'axes'", has_axes ? axes_attr[i] : (int64_t)i, 4, &axes[i]));
    if (used[axes[i]]) return HGR__ONNX_INVALID(node, "attr 'axes' lists axis %d twice", (int)axes[i]);
    used[axes[i]] = true;
  }

  double roi_in[2 * HGR_MAX_DIMS], scales_in[HGR_MAX_DIMS];
  int64_t sizes_in[HGR_MAX_DIMS];
  uint32_t n_roi, n_scales, n_sizes;
  bool has_roi, has_scales, has_sizes;
  HGR_RETURN_IF_ERROR(input_floats(node, 1, "roi", roi_in, 2 * HGR_MAX_DIMS, &n_roi, &has_roi));
  HGR_RETURN_IF_ERROR(input_floats(node, 2, "scales", scales_in, HGR_MAX_DIMS, &n_scales, &has_scales));
  HGR_RETURN_IF_ERROR(input_ints(node, 3, "sizes", sizes_in, HGR_MAX_DIMS, true, &n_sizes, &has_sizes));
  if (has_scales == has_sizes) return HGR__ONNX_INVALID(node, "takes either scales or sizes (one, not both)");
  if ((has_scales ? n_scales : n_sizes) != n_axes)
    return HGR__ONNX_INVALID(node, "%u %s for %u axes", has_scales ? n_scales : n_sizes,
                             has_scales ? "scales" : "sizes", n_axes);
  double scale[4] = {1, 1, 1, 1};
  int64_t size[4];
  for (int32_t d = 0; d < 4; ++d) size[d] = x->shape[d];
  if (has_scales) {
    for (uint32_t i = 0; i < n_axes; ++i) {
      HGR_RETURN_IF_ERROR(scaled_extent(node, scales_in[i], x->shape[axes[i]], axes[i], &size[axes[i]]));
      scale[axes[i]] = scales_in[i];
    }
  } else {
    for (uint32_t i = 0; i < n_axes; ++i) {
      if (sizes_in[i] < 0 || sizes_in[i] > INT32_MAX)
        return HGR__ONNX_INVALID(node, "sizes[%u] = %lld", i, (long long)sizes_in[i]);
      if (!x->shape[axes[i]]) return HGR__ONNX_INVALID(node, "axis %d is empty", (int)axes[i]);
      scale[axes[i]] = (double)sizes_in[i] / (double)x->shape[axes[i]];
      size[axes[i]] = sizes_in[i];
    }
    if (strcmp(policy, "stretch")) { /* one scale for every listed axis, the output rounded half up */
      bool larger = !strcmp(policy, "not_smaller");
      double one = scale[axes[0]];
      for (uint32_t i = 1; i < n_axes; ++i)
        one = larger ? fmax(one, scale[axes[i]]) : fmin(one, scale[axes[i]]);
      for (uint32_t i = 0; i < n_axes; ++i) {
        scale[axes[i]] = one;
        double extent = one * (double)x->shape[axes[i]] + 0.5; /* checked before it becomes an integer */
        if (!(extent < (double)INT32_MAX + 1))
          return HGR__ONNX_INVALID(node, "keep_aspect_ratio_policy '%s' makes axis %d %g long", policy,
                                   (int)axes[i], extent);
        size[axes[i]] = (int64_t)extent;
      }
    }
  }
  if (size[0] != x->shape[0] || size[1] != x->shape[1])
    return HGR__ONNX_UNSUPPORTED(node, "resizes N or C (to %lld, %lld from %lld, %lld); hgr resizes H and W only",
                                 (long long)size[0], (long long)size[1], (long long)x->shape[0],
                                 (long long)x->shape[1]);
  r->size[0] = size[2];
  r->size[1] = size[3];
  r->has_scales = has_scales || strcmp(policy, "stretch");
  r->scales[0] = scale[2];
  r->scales[1] = scale[3];

  r->has_roi = !strcmp(r->transform, "tf_crop_and_resize");
  if (r->has_roi) {
    if (!has_roi) return HGR__ONNX_INVALID(node, "coordinate_transformation_mode tf_crop_and_resize needs the roi");
    if (n_roi != 2 * n_axes) return HGR__ONNX_INVALID(node, "a roi of %u values for %u axes", n_roi, n_axes);
    double start[4] = {0, 0, 0, 0}, end[4] = {1, 1, 1, 1};
    for (uint32_t i = 0; i < n_axes; ++i) {
      start[axes[i]] = roi_in[i];
      end[axes[i]] = roi_in[n_axes + i];
    }
    if (start[0] != 0 || start[1] != 0 || end[0] != 1 || end[1] != 1)
      return HGR__ONNX_UNSUPPORTED(node, "a roi that crops N or C; hgr crops H and W only");
    r->roi[0] = start[2];
    r->roi[1] = start[3];
    r->roi[2] = end[2];
    r->roi[3] = end[3];
  }
  return HGR_OK;
}

static hgr_status_t add_resize(hgr__onnx_node_t* node, hgr__onnx_value_t* x, const resize_t* r) {
  hgr_value_t in;
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, x, &in));
  hgr_attrs_t* attrs = NULL;
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  double scales[2] = {(float)r->scales[0], (float)r->scales[1]}; /* ONNX's scales are float32 */
  hgr_status_t status = hgr_attrs_set_ints(attrs, "size", r->size, 2);
  if (!status && r->has_scales) status = hgr_attrs_set_floats(attrs, "scales", scales, 2);
  if (!status && r->has_roi) status = hgr_attrs_set_floats(attrs, "roi", r->roi, 4);
  if (!status) status = hgr_attrs_set_string(attrs, "method", r->method);
  if (!status) status = hgr_attrs_set_string(attrs, "coordinate_transformation_mode", r->transform);
  if (!status) status = hgr_attrs_set_string(attrs, "rounding_method", r->rounding);
  if (!status) status = hgr_attrs_set_float(attrs, "cubic_alpha", r->cubic_alpha);
  if (!status) status = hgr_attrs_set_int(attrs, "cubic_exclude", r->exclude_outside ? 1 : 0);
  if (!status) status = hgr_attrs_set_float(attrs, "extrapolation_value", r->extrapolation);
  return hgr__onnx_finish_op(node, status, attrs, "resize2d", &in, 1, 0, x->onnx_type);
}

static hgr_status_t import_resize(hgr__onnx_node_t* node) {
  hgr__onnx_value_t* x;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  HGR_RETURN_IF_ERROR(check_resizable(node, x));
  resize_t r;
  HGR_RETURN_IF_ERROR(read_resize(node, x, &r));
  return add_resize(node, x, &r);
}

static hgr_status_t import_upsample(hgr__onnx_node_t* node) {
  hgr__onnx_value_t* x;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  HGR_RETURN_IF_ERROR(check_resizable(node, x));
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, node->opset < 7   ? "height_scale mode width_scale"
                                                  : node->opset < 9 ? "mode scales"
                                                                    : "mode"));
  char mode[16];
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_string(node, "mode", "nearest", mode, sizeof(mode)));
  double scales[HGR_MAX_DIMS] = {1, 1, 0, 0};
  uint32_t count = 4;
  bool present = true;
  if (node->opset < 7) { /* Upsample-1: H and W scales as two attrs */
    HGR_RETURN_IF_ERROR(hgr__onnx_attr_float(node, "height_scale", NAN, &scales[2]));
    HGR_RETURN_IF_ERROR(hgr__onnx_attr_float(node, "width_scale", NAN, &scales[3]));
    if (isnan(scales[2]) || isnan(scales[3]))
      return HGR__ONNX_INVALID(node, "attrs 'height_scale' and 'width_scale' are required");
  } else if (node->opset < 9)
    HGR_RETURN_IF_ERROR(hgr__onnx_attr_floats(node, "scales", scales, HGR_MAX_DIMS, &count, &present));
  else HGR_RETURN_IF_ERROR(input_floats(node, 1, "scales", scales, HGR_MAX_DIMS, &count, &present));
  if (!present) return HGR__ONNX_INVALID(node, "scales are required");
  resize_t r;
  HGR_RETURN_IF_ERROR(upsample_params(node, x, mode, scales, count, &r));
  return add_resize(node, x, &r);
}

const hgr__onnx_op_t hgr__onnx_ops_layout[] = {
    {"Split", import_split, fold_split, 1},
    {"Slice", import_slice, fold_slice, 1},
    {"Pad", import_pad, fold_pad, 1},
    {"Expand", import_expand, fold_expand, 2},
    {"Tile", import_tile, fold_tile, 2},
    {"DepthToSpace", import_depth_to_space, NULL, 1},
    {"SpaceToDepth", import_space_to_depth, NULL, 1},
    {"GatherElements", import_gather_elements, NULL, 2},
    {"Trilu", import_trilu, fold_trilu, 1},
    {"Resize", import_resize, NULL, 1},
    {"Upsample", import_upsample, NULL, 1},
    {.name = NULL},
};
