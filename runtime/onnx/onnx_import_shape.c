/* ONNX's shape and layout ops: Reshape, Flatten, Squeeze, Unsqueeze, Transpose,
 * Concat, Gather, Shape, Size, Constant, ConstantOfShape, Range. Each folds on
 * constants (the shape chains exporters emit); at run time they become hgr's
 * reshape (an alias where the executor can), transpose, concatenate and take. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "onnx_internal.h"

/* ---- reshape-likes: the output shape, then a reshape or a relabelled constant ---- */

/* Output 0 is input 0's data with shape (ndim values). */
static hgr_status_t reshaped(hgr__onnx_node_t* node, hgr__onnx_value_t* x, const int64_t* shape, int32_t ndim) {
  uint64_t count = 0, in_count = 0;
  if (!hgr__shape_size(shape, ndim, 0, &count, NULL))
    return HGR__ONNX_INVALID(node, "the output shape's element count exceeds 2^63 - 1");
  if (!hgr__shape_size(x->shape, x->ndim, 0, &in_count, NULL))
    return HGR_STATUS(HGR_STATUS_INTERNAL, "%s: input '%s' has an uncountable shape", node->label, x->name);
  if (count != in_count)
    return HGR__ONNX_INVALID(node, "cannot reshape %llu elements into %llu", (unsigned long long)in_count,
                             (unsigned long long)count);
  if (x->constant) {
    hgr__onnx_tensor_t* t = NULL;
    HGR_RETURN_IF_ERROR(hgr__onnx_tensor_copy(node->loader->allocator, x->constant, &t));
    hgr_status_t status = hgr__onnx_tensor_reshape(t, shape, ndim, node->label);
    if (status) {
      hgr__onnx_tensor_free(t);
      return status;
    }
    ++node->loader->report.folded;
    return hgr__onnx_set_constant(node, 0, t);
  }
  hgr_value_t in, out;
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, x, &in));
  HGR_RETURN_IF_ERROR(hgr__onnx_add_reshape(node, in, shape, ndim, &out));
  return hgr__onnx_set_runtime(node, 0, out, x->onnx_type);
}

static hgr_status_t import_reshape(hgr__onnx_node_t* node) {
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, node->opset < 5 ? "shape" : "allowzero"));
  hgr__onnx_value_t* x;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  int64_t want[HGR_MAX_DIMS];
  uint32_t count = 0;
  hgr__onnx_tensor_t* s = NULL;
  HGR_RETURN_IF_ERROR(hgr__onnx_constant_input(node, 1, &s));
  if (!s) return HGR__ONNX_INVALID(node, "input 1 (the shape) is required");
  if (s->ndim != 1 || s->count > HGR_MAX_DIMS)
    return HGR__ONNX_INVALID(node, "the shape must be 1-D with at most %d values", HGR_MAX_DIMS);
  count = (uint32_t)s->count;
  for (uint32_t i = 0; i < count; ++i) want[i] = hgr__onnx_tensor_i64(s, i);
  int64_t allowzero;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "allowzero", 0, &allowzero));
  uint64_t known = 1;
  int32_t infer = -1;
  for (uint32_t i = 0; i < count; ++i) {
    if (want[i] == 0 && !allowzero) {
      if ((int32_t)i >= x->ndim) return HGR__ONNX_INVALID(node, "shape[%u] = 0 copies a dim the input lacks", i);
      want[i] = x->shape[i];
    }
    if (want[i] == -1) {
      if (infer >= 0) return HGR__ONNX_INVALID(node, "the shape has more than one -1");
      infer = (int32_t)i;
    } else if (want[i] < 0) {
      return HGR__ONNX_INVALID(node, "shape[%u] = %lld", i, (long long)want[i]);
    } else if (!hgr__mul_u64(known, (uint64_t)want[i], &known) || known > HGR__SHAPE_MAX) {
      return HGR__ONNX_INVALID(node, "the shape's element count exceeds 2^63 - 1 at shape[%u] = %lld", i,
                               (long long)want[i]);
    }
  }
  if (infer >= 0) {
    uint64_t total = 0;
    if (!hgr__shape_size(x->shape, x->ndim, 0, &total, NULL))
      return HGR_STATUS(HGR_STATUS_INTERNAL, "%s: input '%s' has an uncountable shape", node->label, x->name);
    if (!known || total % known)
      return HGR__ONNX_INVALID(node, "cannot infer the -1 of the shape: %llu elements over %llu",
                               (unsigned long long)total, (unsigned long long)known);
    want[infer] = (int64_t)(total / known);
  }
  return reshaped(node, x, want, (int32_t)count);
}

static hgr_status_t import_flatten(hgr__onnx_node_t* node) {
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, "axis"));
  hgr__onnx_value_t* x;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  int64_t axis;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "axis", 1, &axis));
  if (axis < -(int64_t)x->ndim || axis > x->ndim)
    return HGR__ONNX_INVALID(node, "attr 'axis' = %lld is outside [-%d, %d]", (long long)axis, (int)x->ndim,
                             (int)x->ndim);
  if (axis < 0) axis += x->ndim;
  int64_t shape[2] = {1, 1};
  for (int32_t d = 0; d < x->ndim; ++d) shape[d < axis ? 0 : 1] *= x->shape[d];
  return reshaped(node, x, shape, 2);
}

/* Squeeze/Unsqueeze axes: the attr before opset 13, input 1 from 13. */
static hgr_status_t read_axes(const hgr__onnx_node_t* node, int64_t* axes, uint32_t* count, bool* present) {
  if (node->opset < 13) {
    HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, "axes"));
    return hgr__onnx_attr_ints(node, "axes", axes, HGR_MAX_DIMS, count, present);
  }
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, ""));
  hgr__onnx_tensor_t* t = NULL;
  HGR_RETURN_IF_ERROR(hgr__onnx_constant_input(node, 1, &t));
  *present = t != NULL;
  *count = 0;
  if (!t) return HGR_OK;
  if (t->count > HGR_MAX_DIMS) return HGR__ONNX_INVALID(node, "more than %d axes", HGR_MAX_DIMS);
  for (uint64_t i = 0; i < t->count; ++i) axes[i] = hgr__onnx_tensor_i64(t, i);
  *count = (uint32_t)t->count;
  return HGR_OK;
}

static hgr_status_t import_squeeze(hgr__onnx_node_t* node) {
  hgr__onnx_value_t* x;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  int64_t axes[HGR_MAX_DIMS];
  uint32_t count;
  bool present;
  HGR_RETURN_IF_ERROR(read_axes(node, axes, &count, &present));
  bool drop[HGR_MAX_DIMS] = {false};
  for (uint32_t i = 0; i < count; ++i) {
    int32_t a;
    HGR_RETURN_IF_ERROR(hgr__onnx_axis(node, "axes", axes[i], x->ndim, &a));
    if (x->shape[a] != 1) return HGR__ONNX_INVALID(node, "axis %d has extent %lld, not 1", (int)a, (long long)x->shape[a]);
    drop[a] = true;
  }
  int64_t shape[HGR_MAX_DIMS];
  int32_t ndim = 0;
  for (int32_t d = 0; d < x->ndim; ++d)
    if (!(present ? drop[d] : x->shape[d] == 1)) shape[ndim++] = x->shape[d];
  return reshaped(node, x, shape, ndim);
}

static hgr_status_t import_unsqueeze(hgr__onnx_node_t* node) {
  hgr__onnx_value_t* x;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  int64_t axes[HGR_MAX_DIMS];
  uint32_t count;
  bool present;
  HGR_RETURN_IF_ERROR(read_axes(node, axes, &count, &present));
  if (!present) return HGR__ONNX_INVALID(node, "axes are required");
  int32_t ndim = x->ndim + (int32_t)count;
  if (ndim > HGR_MAX_DIMS) return HGR__ONNX_UNSUPPORTED(node, "%d dimensions; hgr holds %d", (int)ndim, HGR_MAX_DIMS);
  bool added[HGR_MAX_DIMS] = {false};
  for (uint32_t i = 0; i < count; ++i) {
    int32_t a;
    HGR_RETURN_IF_ERROR(hgr__onnx_axis(node, "axes", axes[i], ndim, &a));
    if (added[a]) return HGR__ONNX_INVALID(node, "axis %d is listed twice", (int)a);
    added[a] = true;
  }
  int64_t shape[HGR_MAX_DIMS];
  for (int32_t d = 0, from = 0; d < ndim; ++d) shape[d] = added[d] ? 1 : x->shape[from++];
  return reshaped(node, x, shape, ndim);
}

/* ---- Transpose ------------------------------------------------------------------------ */

static hgr_status_t read_perm(const hgr__onnx_node_t* node, int32_t ndim, int64_t* perm) {
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, "perm"));
  uint32_t count;
  bool present;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_ints(node, "perm", perm, HGR_MAX_DIMS, &count, &present));
  if (!present) {
    for (int32_t d = 0; d < ndim; ++d) perm[d] = ndim - 1 - d;
    return HGR_OK;
  }
  bool seen[HGR_MAX_DIMS] = {false};
  if ((int32_t)count != ndim) return HGR__ONNX_INVALID(node, "attr 'perm' has %u values for rank %d", count, (int)ndim);
  for (int32_t d = 0; d < ndim; ++d) {
    if (perm[d] < 0 || perm[d] >= ndim || seen[perm[d]])
      return HGR__ONNX_INVALID(node, "attr 'perm' is not a permutation of 0..%d", (int)ndim - 1);
    seen[perm[d]] = true;
  }
  return HGR_OK;
}

static hgr_status_t fold_transpose(hgr__onnx_node_t* node) {
  hgr__onnx_value_t* x;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  int64_t perm[HGR_MAX_DIMS], shape[HGR_MAX_DIMS];
  HGR_RETURN_IF_ERROR(read_perm(node, x->ndim, perm));
  const hgr__onnx_tensor_t* t = x->constant;
  for (int32_t d = 0; d < t->ndim; ++d) shape[d] = t->shape[perm[d]];
  hgr__onnx_tensor_t* out = NULL;
  HGR_RETURN_IF_ERROR(hgr__onnx_tensor_new(node->loader->allocator, t->onnx_type, shape, t->ndim, node->label, &out));
  size_t element = hgr__onnx_type_bytes(t->onnx_type);
  uint64_t in_stride[HGR_MAX_DIMS];
  hgr__onnx_tensor_strides(t, in_stride);
  for (uint64_t i = 0; i < out->count; ++i) {
    uint64_t rest = i, from = 0;
    for (int32_t d = t->ndim - 1; d >= 0; --d) {
      uint64_t c = rest % (uint64_t)shape[d];
      rest /= (uint64_t)shape[d];
      from += c * in_stride[perm[d]];
    }
    memcpy((char*)out->data + i * element, (const char*)t->data + from * element, element);
  }
  return hgr__onnx_set_constant(node, 0, out);
}

static hgr_status_t import_transpose(hgr__onnx_node_t* node) {
  hgr__onnx_value_t* x;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  int64_t perm[HGR_MAX_DIMS];
  HGR_RETURN_IF_ERROR(read_perm(node, x->ndim, perm));
  hgr_value_t in;
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, x, &in));
  hgr_attrs_t* attrs = NULL;
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  hgr_status_t status = hgr_attrs_set_ints(attrs, "axes", perm, (size_t)x->ndim);
  return hgr__onnx_finish_op(node, status, attrs, "transpose", &in, 1, 0, x->onnx_type);
}

/* ---- Concat -------------------------------------------------------------------------- */

static hgr_status_t concat_axis(const hgr__onnx_node_t* node, int32_t* out_axis) {
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, "axis"));
  if (!node->input_count || !node->inputs[0]) return HGR__ONNX_INVALID(node, "takes at least one input");
  int64_t axis;
  const hgr__onnx_value_t* first = node->inputs[0];
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "axis", node->opset < 4 ? 1 : INT64_MIN, &axis));
  if (axis == INT64_MIN) return HGR__ONNX_INVALID(node, "attr 'axis' is required");
  HGR_RETURN_IF_ERROR(hgr__onnx_axis(node, "attr 'axis'", axis, first->ndim, out_axis));
  for (uint32_t i = 1; i < node->input_count; ++i) {
    const hgr__onnx_value_t* v = node->inputs[i];
    if (!v) return HGR__ONNX_INVALID(node, "input %u is omitted", i);
    bool ok = v->ndim == first->ndim && v->onnx_type == first->onnx_type;
    for (int32_t d = 0; ok && d < v->ndim; ++d) ok = d == *out_axis || v->shape[d] == first->shape[d];
    if (!ok) return HGR__ONNX_INVALID(node, "input %u ('%s') does not match input 0's type and shape off the axis", i,
                                      v->name);
  }
  return HGR_OK;
}

static hgr_status_t fold_concat(hgr__onnx_node_t* node) {
  int32_t axis;
  HGR_RETURN_IF_ERROR(concat_axis(node, &axis));
  const hgr__onnx_tensor_t* first = node->inputs[0]->constant;
  int64_t shape[HGR_MAX_DIMS];
  memcpy(shape, first->shape, sizeof(shape));
  uint64_t joined = 0;
  for (uint32_t i = 0; i < node->input_count; ++i)
    if (!hgr__add_u64(joined, (uint64_t)node->inputs[i]->constant->shape[axis], &joined) || joined > HGR__SHAPE_MAX)
      return HGR__ONNX_INVALID(node, "the inputs join to more than 2^63 - 1 along axis %d", (int)axis);
  shape[axis] = (int64_t)joined;
  hgr__onnx_tensor_t* out = NULL;
  HGR_RETURN_IF_ERROR(
      hgr__onnx_tensor_new(node->loader->allocator, first->onnx_type, shape, first->ndim, node->label, &out));
  size_t element = hgr__onnx_type_bytes(first->onnx_type);
  uint64_t outer = 1, inner = element;
  for (int32_t d = 0; d < axis; ++d) outer *= (uint64_t)shape[d];
  for (int32_t d = axis + 1; d < first->ndim; ++d) inner *= (uint64_t)shape[d];
  uint64_t offset = 0, row = (uint64_t)shape[axis] * inner;
  for (uint32_t i = 0; i < node->input_count; ++i) {
    const hgr__onnx_tensor_t* t = node->inputs[i]->constant;
    uint64_t piece = (uint64_t)t->shape[axis] * inner;
    for (uint64_t o = 0; o < outer; ++o)
      memcpy((char*)out->data + o * row + offset, (const char*)t->data + o * piece, (size_t)piece);
    offset += piece;
  }
  return hgr__onnx_set_constant(node, 0, out);
}

static hgr_status_t import_concat(hgr__onnx_node_t* node) {
  int32_t axis;
  HGR_RETURN_IF_ERROR(concat_axis(node, &axis));
  hgr_value_t* in = hgr__calloc(node->loader->allocator, node->input_count, sizeof(*in));
  if (!in) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  hgr_status_t status = HGR_OK;
  for (uint32_t i = 0; !status && i < node->input_count; ++i) status = hgr__onnx_runtime(node, node->inputs[i], &in[i]);
  hgr_attrs_t* attrs = NULL;
  hgr_value_t out;
  if (!status) status = hgr_attrs_create(&attrs);
  if (!status) status = hgr_attrs_set_int(attrs, "axis", axis);
  if (!status) status = hgr__onnx_add_op(node, "concatenate", in, node->input_count, attrs, 1, &out);
  hgr_attrs_release(attrs);
  hgr__free(node->loader->allocator, in);
  HGR_RETURN_IF_ERROR(status);
  return hgr__onnx_set_runtime(node, 0, out, node->inputs[0]->onnx_type);
}

/* ---- Gather ------------------------------------------------------------------------ */

/* Gather's data, indices and axis. */
static hgr_status_t gather_args(const hgr__onnx_node_t* node, hgr__onnx_value_t** x, hgr__onnx_value_t** iv,
                                int32_t* axis) {
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, "axis"));
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, x));
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 1, iv));
  int64_t axis_attr;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "axis", 0, &axis_attr));
  return hgr__onnx_axis(node, "attr 'axis'", axis_attr, (*x)->ndim, axis);
}

static hgr_status_t fold_gather(hgr__onnx_node_t* node) {
  hgr__onnx_value_t *x, *iv;
  int32_t axis;
  HGR_RETURN_IF_ERROR(gather_args(node, &x, &iv, &axis));
  const hgr__onnx_tensor_t *t = x->constant, *idx = iv->constant;
  int32_t ndim = t->ndim - 1 + idx->ndim;
  if (ndim > HGR_MAX_DIMS) return HGR__ONNX_UNSUPPORTED(node, "result of rank %d", (int)ndim);
  int64_t shape[HGR_MAX_DIMS];
  int32_t n = 0;
  for (int32_t d = 0; d < axis; ++d) shape[n++] = t->shape[d];
  for (int32_t d = 0; d < idx->ndim; ++d) shape[n++] = idx->shape[d];
  for (int32_t d = axis + 1; d < t->ndim; ++d) shape[n++] = t->shape[d];
  hgr__onnx_tensor_t* out = NULL;
  HGR_RETURN_IF_ERROR(hgr__onnx_tensor_new(node->loader->allocator, t->onnx_type, shape, ndim, node->label, &out));
  size_t element = hgr__onnx_type_bytes(t->onnx_type);
  uint64_t outer = 1, inner = element, extent = (uint64_t)t->shape[axis];
  for (int32_t d = 0; d < axis; ++d) outer *= (uint64_t)t->shape[d];
  for (int32_t d = axis + 1; d < t->ndim; ++d) inner *= (uint64_t)t->shape[d];
  for (uint64_t j = 0; j < idx->count; ++j) {
    int64_t k = hgr__onnx_tensor_i64(idx, j);
    if (k < -(int64_t)extent || k >= (int64_t)extent) {
      hgr__onnx_tensor_free(out);
      return HGR__ONNX_INVALID(node, "index %lld at position %llu is outside [-%llu, %llu)", (long long)k,
                               (unsigned long long)j, (unsigned long long)extent, (unsigned long long)extent);
    }
    if (k < 0) k += (int64_t)extent;
    for (uint64_t o = 0; o < outer; ++o)
      memcpy((char*)out->data + (o * idx->count + j) * inner, (const char*)t->data + (o * extent + (uint64_t)k) * inner,
             (size_t)inner);
  }
  return hgr__onnx_set_constant(node, 0, out);
}

static hgr_status_t import_gather(hgr__onnx_node_t* node) {
  hgr__onnx_value_t *x, *iv;
  int32_t axis;
  HGR_RETURN_IF_ERROR(gather_args(node, &x, &iv, &axis));
  hgr_value_t in[2];
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, x, &in[0]));
  HGR_RETURN_IF_ERROR(hgr__onnx_index_input(node, iv, x->shape[axis], &in[1])); /* negative constants fixed */
  hgr_attrs_t* attrs = NULL;
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  hgr_status_t status = hgr_attrs_set_int(attrs, "axis", axis);
  if (!status) status = hgr_attrs_set_string(attrs, "mode", iv->constant ? "clip" : "wrap");
  return hgr__onnx_finish_op(node, status, attrs, "take", in, 2, 0, x->onnx_type);
}

/* ---- Shape, Size, Constant, ConstantOfShape, Range: always at load ------------------- */

static hgr_status_t import_shape(hgr__onnx_node_t* node) {
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, "start end"));
  hgr__onnx_value_t* x;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  int64_t start, end;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "start", 0, &start));
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "end", x->ndim, &end));
  if (start < 0) start += x->ndim;
  if (end < 0) end += x->ndim;
  start = start < 0 ? 0 : start > x->ndim ? x->ndim : start;
  end = end < 0 ? 0 : end > x->ndim ? x->ndim : end;
  int64_t count = end > start ? end - start : 0;
  hgr__onnx_tensor_t* out = NULL;
  HGR_RETURN_IF_ERROR(hgr__onnx_tensor_new(node->loader->allocator, HGR__ONNX_INT64, &count, 1, node->label, &out));
  for (int64_t i = 0; i < count; ++i) hgr__onnx_tensor_set_i64(out, (uint64_t)i, x->shape[start + i]);
  ++node->loader->report.folded;
  return hgr__onnx_set_constant(node, 0, out);
}

static hgr_status_t import_size(hgr__onnx_node_t* node) {
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, ""));
  hgr__onnx_value_t* x;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  hgr__onnx_tensor_t* out = NULL;
  HGR_RETURN_IF_ERROR(hgr__onnx_tensor_new(node->loader->allocator, HGR__ONNX_INT64, NULL, 0, node->label, &out));
  int64_t count = 1;
  for (int32_t d = 0; d < x->ndim; ++d) count *= x->shape[d];
  hgr__onnx_tensor_set_i64(out, 0, count);
  ++node->loader->report.folded;
  return hgr__onnx_set_constant(node, 0, out);
}

static hgr_status_t import_constant(hgr__onnx_node_t* node) {
  if (node->proto->n_attribute != 1)
    return HGR__ONNX_INVALID(node, "takes exactly one attr (value, value_float, value_floats, value_int, "
                             "value_ints), the node has %zu", node->proto->n_attribute);
  const Onnx__AttributeProto* a = node->proto->attribute[0];
  hgr__onnx_tensor_t* out = NULL;
  const char* name = a->name ? a->name : "";
  if (!strcmp(name, "value") && a->t) {
    HGR_RETURN_IF_ERROR(
        hgr__onnx_tensor_decode(node->loader->allocator, a->t, &node->loader->external, node->label, &out));
  } else if (!strcmp(name, "value_float") || !strcmp(name, "value_int")) {
    bool f = name[6] == 'f';
    HGR_RETURN_IF_ERROR(hgr__onnx_tensor_new(node->loader->allocator, f ? HGR__ONNX_FLOAT : HGR__ONNX_INT64, NULL, 0,
                                             node->label, &out));
    if (f) hgr__onnx_tensor_set_f64(out, 0, a->f);
    else hgr__onnx_tensor_set_i64(out, 0, a->i);
  } else if (!strcmp(name, "value_floats") || !strcmp(name, "value_ints")) {
    bool f = name[6] == 'f';
    int64_t n = (int64_t)(f ? a->n_floats : a->n_ints);
    HGR_RETURN_IF_ERROR(
        hgr__onnx_tensor_new(node->loader->allocator, f ? HGR__ONNX_FLOAT : HGR__ONNX_INT64, &n, 1, node->label, &out));
    for (int64_t i = 0; i < n; ++i) {
      if (f) hgr__onnx_tensor_set_f64(out, (uint64_t)i, a->floats[i]);
      else hgr__onnx_tensor_set_i64(out, (uint64_t)i, a->ints[i]);
    }
  } else {
    return HGR__ONNX_UNSUPPORTED(node, "attr '%s' is not supported (sparse and string constants are not)", name);
  }
  ++node->loader->report.folded;
  return hgr__onnx_set_constant(node, 0, out);
}

static hgr_status_t import_constant_of_shape(hgr__onnx_node_t* node) {
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, "value"));
  hgr__onnx_tensor_t *s = NULL, *value = NULL, *out = NULL;
  HGR_RETURN_IF_ERROR(hgr__onnx_constant_input(node, 0, &s));
  if (!s) return HGR__ONNX_INVALID(node, "input 0 (the shape) is required");
  if (s->ndim != 1 || s->count > HGR_MAX_DIMS)
    return HGR__ONNX_INVALID(node, "the shape must be 1-D with at most %d values", HGR_MAX_DIMS);
  int64_t shape[HGR_MAX_DIMS];
  for (uint64_t i = 0; i < s->count; ++i) shape[i] = hgr__onnx_tensor_i64(s, i);
  const Onnx__AttributeProto* a = hgr__onnx_attr(node, "value");
  if (a && a->t) {
    HGR_RETURN_IF_ERROR(hgr__onnx_tensor_decode(node->loader->allocator, a->t, NULL, node->label, &value));
    if (value->count != 1) {
      hgr__onnx_tensor_free(value);
      return HGR__ONNX_INVALID(node, "attr 'value' must hold one element");
    }
  }
  hgr_status_t status = hgr__onnx_tensor_new(node->loader->allocator, value ? value->onnx_type : HGR__ONNX_FLOAT,
                                             shape, (int32_t)s->count, node->label, &out);
  if (!status && value && out->count) {
    /* the value once, then what is filled copied after itself: a few large copies,
     * not one per element (VGG-19's weights in the test models are 548 MB of these) */
    size_t filled = hgr__onnx_type_bytes(value->onnx_type), bytes = filled * (size_t)out->count;
    memcpy(out->data, value->data, filled);
    for (; filled < bytes; filled *= 2)
      memcpy((char*)out->data + filled, out->data, filled < bytes - filled ? filled : bytes - filled);
  }
  hgr__onnx_tensor_free(value);
  HGR_RETURN_IF_ERROR(status);
  ++node->loader->report.folded;
  return hgr__onnx_set_constant(node, 0, out);
}

/* The most elements a Range folds to (its values are made at load). */
#define RANGE_MAX_ELEMENTS 1e9

static hgr_status_t import_range(hgr__onnx_node_t* node) {
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, ""));
  hgr__onnx_tensor_t* t[3];
  for (uint32_t i = 0; i < 3; ++i) {
    HGR_RETURN_IF_ERROR(hgr__onnx_constant_input(node, i, &t[i]));
    if (!t[i] || t[i]->count != 1) return HGR__ONNX_INVALID(node, "input %u must be a scalar", i);
  }
  int32_t type = t[0]->onnx_type;
  hgr__onnx_tensor_t* out = NULL;
  if (hgr__onnx_type_is_float(type)) {
    double start = hgr__onnx_tensor_f64(t[0], 0), limit = hgr__onnx_tensor_f64(t[1], 0),
           delta = hgr__onnx_tensor_f64(t[2], 0);
    if (delta == 0) return HGR__ONNX_INVALID(node, "delta is 0");
    double n = ceil((limit - start) / delta);
    /* checked as a double, NaN and infinities included, before it becomes an integer */
    if (!(n <= RANGE_MAX_ELEMENTS))
      return HGR__ONNX_UNSUPPORTED(node, "a range of %g elements (start %g, limit %g, delta %g); hgr folds at "
                                   "most %.0f", n, start, limit, delta, RANGE_MAX_ELEMENTS);
    int64_t count = n > 0 ? (int64_t)n : 0;
    HGR_RETURN_IF_ERROR(hgr__onnx_tensor_new(node->loader->allocator, type, &count, 1, node->label, &out));
    for (int64_t i = 0; i < count; ++i) hgr__onnx_tensor_set_f64(out, (uint64_t)i, start + (double)i * delta);
  } else {
    int64_t start = hgr__onnx_tensor_i64(t[0], 0), limit = hgr__onnx_tensor_i64(t[1], 0),
            delta = hgr__onnx_tensor_i64(t[2], 0);
    if (delta == 0) return HGR__ONNX_INVALID(node, "delta is 0");
    /* Exact, in unsigned arithmetic: the distance to cover and the step, both as
     * magnitudes, so no value of start, limit and delta overflows. */
    bool up = delta > 0;
    uint64_t distance = up ? (limit > start ? (uint64_t)limit - (uint64_t)start : 0)
                           : (start > limit ? (uint64_t)start - (uint64_t)limit : 0);
    uint64_t step = up ? (uint64_t)delta : 0 - (uint64_t)delta;
    uint64_t n = distance / step + (distance % step != 0);
    if (n > (uint64_t)RANGE_MAX_ELEMENTS)
      return HGR__ONNX_UNSUPPORTED(node, "a range of %llu elements (start %lld, limit %lld, delta %lld); hgr folds at "
                                   "most %.0f", (unsigned long long)n, (long long)start, (long long)limit,
                                   (long long)delta, RANGE_MAX_ELEMENTS);
    int64_t count = (int64_t)n;
    HGR_RETURN_IF_ERROR(hgr__onnx_tensor_new(node->loader->allocator, type, &count, 1, node->label, &out));
    /* start + i * delta lies between start and limit; computed modulo 2^64 */
    for (int64_t i = 0; i < count; ++i)
      hgr__onnx_tensor_set_i64(out, (uint64_t)i, (int64_t)((uint64_t)start + (uint64_t)i * (uint64_t)delta));
  }
  ++node->loader->report.folded;
  return hgr__onnx_set_constant(node, 0, out);
}

const hgr__onnx_op_t hgr__onnx_ops_shape[] = {
    {"Reshape", import_reshape, NULL, 1},
    {"Flatten", import_flatten, NULL, 1},
    {"Squeeze", import_squeeze, NULL, 1},
    {"Unsqueeze", import_unsqueeze, NULL, 1},
    {"Transpose", import_transpose, fold_transpose, 1},
    {"Concat", import_concat, fold_concat, HGR__ONNX_EVERY_INPUT},
    {"Gather", import_gather, fold_gather, 2},
    {"Shape", import_shape, NULL, 1},
    {"Size", import_size, NULL, 1},
    {"Constant", import_constant, NULL, 0},
    {"ConstantOfShape", import_constant_of_shape, NULL, 1},
    {"Range", import_range, NULL, 3},
    {.name = NULL},
};
