/* ONNX's reductions: ReduceSum/Mean/Max/Min/Prod on hgr's reductions, and
 * ReduceL1/L2/SumSquare/LogSum/LogSumExp composed from elementwise ops and sum.
 * Axes come from the attr, or from input 1 where the opset moved them there
 * (ReduceSum at 13, the others at 18). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static hgr_status_t import_reduce(hgr__onnx_node_t* node) {
  const reduce_t* r = find(node->proto->op_type);
  bool axes_input = node->opset >= r->axes_input;
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, axes_input ? "keepdims noop_with_empty_axes" : "axes keepdims"));
  hgr__onnx_value_t* x;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  int64_t keepdims, noop;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "keepdims", 1, &keepdims));
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "noop_with_empty_axes", 0, &noop));
  int64_t axes[HGR_MAX_DIMS];
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
  if (!present && noop) return hgr__onnx_set_alias(node, 0, x);
  if (!present) { /* every axis */
    for (int32_t d = 0; d < x->ndim; ++d) axes[d] = d;
    count = (uint32_t)x->ndim;
  }
  for (uint32_t i = 0; i < count; ++i) {
    int32_t a;
    HGR_RETURN_IF_ERROR(hgr__onnx_axis(node, "axes", axes[i], x->ndim, &a));
    axes[i] = a;
  }
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

#define REDUCE(name) {name, import_reduce, NULL, 1}
const hgr__onnx_op_t hgr__onnx_ops_reduce[] = {
    REDUCE("ReduceSum"), REDUCE("ReduceMean"), REDUCE("ReduceMax"), REDUCE("ReduceMin"), REDUCE("ReduceProd"),
    REDUCE("ReduceL1"), REDUCE("ReduceL2"), REDUCE("ReduceSumSquare"), REDUCE("ReduceLogSum"),
    REDUCE("ReduceLogSumExp"),
    {.name = NULL},
};
