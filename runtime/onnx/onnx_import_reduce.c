/* ONNX's reductions: ReduceSum/Mean/Max/Min/Prod on hgr's reductions, and
 * ReduceL1/L2/SumSquare/LogSum/LogSumExp composed from elementwise ops and sum.
 * Axes come from the attr, or from input 1 where the opset moved them there
 * (ReduceSum at 13, the others at 18). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "onnx_internal.h"

typedef struct reduce_t {
  const char* onnx;
  const char* pre;    /* elementwise op before the reduction, or NULL */
  const char* op;     /* hgr's reduction */
  const char* post;   /* elementwise op after, or NULL */
  int64_t axes_input; /* the opset from which axes are input 1 */
} reduce_t;

static const reduce_t reductions[] = {
    {"ReduceSum", NULL, "sum", NULL, 13},
    {"ReduceMean", NULL, "mean", NULL, 18},
    {"ReduceMax", NULL, "max", NULL, 18},
    {"ReduceMin", NULL, "min", NULL, 18},
    {"ReduceProd", NULL, "prod", NULL, 18},
    {"ReduceL1", "abs", "sum", NULL, 18},
    {"ReduceL2", "square", "sum", "sqrt", 18},
    {"ReduceSumSquare", "square", "sum", NULL, 18},
    {"ReduceLogSum", NULL, "sum", "log", 18},
    {"ReduceLogSumExp", "exp", "sum", "log", 18},
};

static const reduce_t* find(const char* name) {
  for (size_t i = 0; i < sizeof(reductions) / sizeof(reductions[0]); ++i)
    if (!strcmp(reductions[i].onnx, name)) return &reductions[i];
  return NULL;
}

/* The node's reduced axes (made non-negative; every axis when none are given) and
 * keepdims; *noop when no axes are given and noop_with_empty_axes says the output is
 * the input. */
static hgr_status_t reduce_axes(hgr__onnx_node_t* node, const reduce_t* r, const hgr__onnx_value_t* x, int64_t* axes,
                                uint32_t* out_count, int64_t* keepdims, bool* noop) {
  bool axes_input = node->opset >= r->axes_input;
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, axes_input ? "keepdims noop_with_empty_axes" : "axes keepdims"));
  int64_t noop_attr;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "keepdims", 1, keepdims));
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "noop_with_empty_axes", 0, &noop_attr));
  uint32_t count = 0;
  bool present = false;
  if (axes_input) {
    hgr__onnx_tensor_t* t = NULL;
    HGR_RETURN_IF_ERROR(hgr__onnx_constant_input(node, 1, &t));
    if (t) {
      if (t->count > HGR_MAX_DIMS) return HGR__ONNX_INVALID(node, "more than %d axes", HGR_MAX_DIMS);
      for (uint64_t i = 0; i < t->count; ++i) axes[i] = hgr__onnx_tensor_i64(t, i);
      count = (uint32_t)t->count;
      present = count > 0;
    }
  } else {
    HGR_RETURN_IF_ERROR(hgr__onnx_attr_ints(node, "axes", axes, HGR_MAX_DIMS, &count, &present));
  }
  *noop = !present && noop_attr;
  if (!present) { /* every axis */
    for (int32_t d = 0; d < x->ndim; ++d) axes[d] = d;
    count = (uint32_t)x->ndim;
  }
  for (uint32_t i = 0; i < count; ++i) {
    int32_t a;
    HGR_RETURN_IF_ERROR(hgr__onnx_axis(node, "axes", axes[i], x->ndim, &a));
    axes[i] = a;
  }
  *out_count = count;
  return HGR_OK;
}

static hgr_status_t import_reduce(hgr__onnx_node_t* node) {
  const reduce_t* r = find(node->proto->op_type);
  hgr__onnx_value_t* x;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  int64_t axes[HGR_MAX_DIMS], keepdims;
  uint32_t count = 0;
  bool noop = false;
  HGR_RETURN_IF_ERROR(reduce_axes(node, r, x, axes, &count, &keepdims, &noop));
  if (noop) return hgr__onnx_set_alias(node, 0, x);
  hgr_value_t value;
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, x, &value));
  if (r->pre && !strcmp(r->pre, "square")) {
    hgr_value_t pair[2] = {value, value};
    HGR_RETURN_IF_ERROR(hgr__onnx_add_op(node, "multiply", pair, 2, NULL, 1, &value));
  } else if (r->pre) {
    HGR_RETURN_IF_ERROR(hgr__onnx_add_unary(node, r->pre, value, &value));
  }
  hgr_attrs_t* attrs = NULL;
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  hgr_status_t status = hgr_attrs_set_ints(attrs, "axis", axes, count);
  if (!status) status = hgr_attrs_set_int(attrs, "keepdims", keepdims != 0);
  if (!status) status = hgr__onnx_add_op(node, r->op, &value, 1, attrs, 1, &value);
  hgr_attrs_release(attrs);
  HGR_RETURN_IF_ERROR(status);
  if (r->post) HGR_RETURN_IF_ERROR(hgr__onnx_add_unary(node, r->post, value, &value));
  return hgr__onnx_set_runtime(node, 0, value, x->onnx_type);
}

/* The most elements a reduction folds at load. */
#define FOLD_MAX_ELEMENTS ((uint64_t)1 << 16)

/* ReduceSum, ReduceProd, ReduceMax and ReduceMin of an integer constant, at load: the
 * shape arithmetic exporters write (tf2onnx's Reshape of attention's heads takes the
 * ReduceProd of a Shape's slice), which would otherwise leave the Reshape's shape to
 * run time and the model to run in stages. Wrapping as two's-complement integers do.
 * Other types, the other reductions and constants of more than FOLD_MAX_ELEMENTS
 * elements go to import (UNIMPLEMENTED). */
static hgr_status_t fold_reduce(hgr__onnx_node_t* node) {
  const reduce_t* r = find(node->proto->op_type);
  hgr__onnx_value_t* x;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  const hgr__onnx_tensor_t* t = x->constant;
  int32_t type = t->onnx_type;
  bool integer = type == ONNX__TENSOR_PROTO__DATA_TYPE__INT64 || type == ONNX__TENSOR_PROTO__DATA_TYPE__INT32;
  bool kind = !r->pre && !r->post && strcmp(r->op, "mean");
  if (!integer || !kind || t->count > FOLD_MAX_ELEMENTS)
    return HGR_STATUS(HGR_STATUS_UNIMPLEMENTED, "reduced at run time");
  int64_t axes[HGR_MAX_DIMS], keepdims;
  uint32_t count = 0;
  bool noop = false;
  HGR_RETURN_IF_ERROR(reduce_axes(node, r, x, axes, &count, &keepdims, &noop));
  bool reduced[HGR_MAX_DIMS] = {false};
  for (uint32_t i = 0; !noop && i < count; ++i) reduced[axes[i]] = true;
  /* the output's shape with the reduced dims kept as 1 (the accumulation's), and as
   * the node gives it */
  int64_t kept[HGR_MAX_DIMS], shape[HGR_MAX_DIMS];
  int32_t ndim = 0;
  for (int32_t d = 0; d < t->ndim; ++d) {
    kept[d] = reduced[d] ? 1 : t->shape[d];
    if (!reduced[d] || keepdims) shape[ndim++] = kept[d];
  }
  hgr__onnx_tensor_t* out = NULL;
  HGR_RETURN_IF_ERROR(hgr__onnx_tensor_new(node->loader->allocator, type, shape, ndim, node->label, &out));
  bool sum = !strcmp(r->op, "sum"), prod = !strcmp(r->op, "prod"), max = !strcmp(r->op, "max");
  uint64_t* acc = hgr__alloc(node->loader->allocator, (out->count ? out->count : 1) * sizeof(*acc));
  if (!acc) {
    hgr__onnx_tensor_free(out);
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  }
  bool* seen = hgr__calloc(node->loader->allocator, out->count ? out->count : 1, sizeof(*seen));
  if (!seen) {
    hgr__free(node->loader->allocator, acc);
    hgr__onnx_tensor_free(out);
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  }
  for (uint64_t o = 0; o < out->count; ++o) acc[o] = sum ? 0 : 1; /* max and min: set by the first element */
  for (uint64_t i = 0; i < t->count; ++i) {
    /* element i's index in the kept shape: its coordinates, the reduced ones 0 */
    uint64_t rest = i, o = 0, stride = 1;
    for (int32_t d = t->ndim - 1; d >= 0; --d) {
      uint64_t coordinate = rest % (uint64_t)t->shape[d];
      rest /= (uint64_t)t->shape[d];
      o += (reduced[d] ? 0 : coordinate) * stride;
      stride *= (uint64_t)kept[d];
    }
    int64_t v = hgr__onnx_tensor_i64(t, i);
    if (sum) acc[o] += (uint64_t)v;
    else if (prod) acc[o] *= (uint64_t)v;
    else if (!seen[o] || (max ? v > (int64_t)acc[o] : v < (int64_t)acc[o])) acc[o] = (uint64_t)v;
    seen[o] = true;
  }
  /* max and min of nothing (a reduced dim of 0): ONNX's identities, the type's lowest and highest */
  for (uint64_t o = 0; o < out->count; ++o) {
    if (!seen[o] && !sum && !prod)
      acc[o] = type == ONNX__TENSOR_PROTO__DATA_TYPE__INT32 ? (uint64_t)(int64_t)(max ? INT32_MIN : INT32_MAX)
                                                            : (uint64_t)(max ? INT64_MIN : INT64_MAX);
    hgr__onnx_tensor_set_i64(out, o, (int64_t)acc[o]);
  }
  hgr__free(node->loader->allocator, acc);
  hgr__free(node->loader->allocator, seen);
  ++node->loader->report.folded;
  return hgr__onnx_set_constant(node, 0, out);
}

#define REDUCE(name) {name, import_reduce, fold_reduce, 1}
const hgr__onnx_op_t hgr__onnx_ops_reduce[] = {
    REDUCE("ReduceSum"), REDUCE("ReduceMean"), REDUCE("ReduceMax"), REDUCE("ReduceMin"), REDUCE("ReduceProd"),
    REDUCE("ReduceL1"), REDUCE("ReduceL2"), REDUCE("ReduceSumSquare"), REDUCE("ReduceLogSum"),
    REDUCE("ReduceLogSumExp"),
    {.name = NULL},
};
