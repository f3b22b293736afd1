/* ONNX's GatherND, ScatterND, ScatterElements and Scatter (ScatterElements' name
 * before opset 11) on hgr's onnx_gather_nd, onnx_scatter_nd and scatter_elements
 * (runtime/ops/ops_index.c). Data may be float, int32, int64 (held as int32) or
 * bool; the reductions take float, int32 and int64. Indices are int32 or int64,
 * held as int32 at run time like every int64 (onnx_internal.h): an index beyond
 * int32 is refused at load where constant, and saturates where computed.
 * Constant indices are checked at load: one outside [-dim, dim) is INVALID_ARGUMENT
 * naming the node, the index and its position. Indices computed at run time count
 * from the end when negative; one still outside its dim is clamped into it by
 * GatherND and drops its update in the scatters (ONNX leaves both undefined; no
 * kernel reads or writes out of bounds). */
#include <stdio.h>
#include <string.h>

#include "onnx_internal.h"

/* Data that the ops move: float, int32, int64 (as int32) and bool. */
static hgr_status_t check_data(const hgr__onnx_node_t* node, const hgr__onnx_value_t* x, bool reduces) {
  int32_t type = x->onnx_type;
  if (type == HGR__ONNX_FLOAT || type == HGR__ONNX_INT32 || type == HGR__ONNX_INT64) return HGR_OK;
  if (type == HGR__ONNX_BOOL && !reduces) return HGR_OK;
  return HGR__ONNX_UNSUPPORTED(node, "input '%s' is %s; at run time hgr's %s takes float, int32, int64 (held as "
                               "int32)%s", x->name, hgr__onnx_type_name(type), node->proto->op_type,
                               reduces ? " with a reduction" : " and bool");
}

static hgr_status_t check_index_type(const hgr__onnx_node_t* node, const hgr__onnx_value_t* iv) {
  if (iv->onnx_type == HGR__ONNX_INT32 || iv->onnx_type == HGR__ONNX_INT64) return HGR_OK;
  return HGR__ONNX_INVALID(node, "indices '%s' are %s; they must be int32 or int64", iv->name,
                           hgr__onnx_type_name(iv->onnx_type));
}

/* Constant indices, checked at load: tuples of k (k 0: each index alone) whose
 * component c indexes dims[c] (k 0: dims[0]). */
static hgr_status_t check_constant_indices(const hgr__onnx_node_t* node, const hgr__onnx_value_t* iv,
                                           const int64_t* dims, int64_t k) {
  const hgr__onnx_tensor_t* t = iv->constant;
  if (!t) return HGR_OK;
  for (uint64_t j = 0; j < t->count; ++j) {
    int64_t extent = dims[k ? j % (uint64_t)k : 0];
    int64_t v = hgr__onnx_tensor_i64(t, j);
    if (v < -extent || v >= extent)
      return HGR__ONNX_INVALID(node, "index %lld at position %llu of '%s' is outside [-%lld, %lld)", (long long)v,
                               (unsigned long long)j, iv->name, (long long)extent, (long long)extent);
  }
  return HGR_OK;
}

/* ---- GatherND ------------------------------------------------------------------------- */

static hgr_status_t import_gather_nd(hgr__onnx_node_t* node) {
  if (node->opset < 11) return HGR__ONNX_INVALID(node, "GatherND does not exist before opset 11");
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, node->opset < 12 ? "" : "batch_dims"));
  hgr__onnx_value_t *x, *iv;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 1, &iv));
  HGR_RETURN_IF_ERROR(check_data(node, x, false));
  if (iv->onnx_type != HGR__ONNX_INT64) /* GatherND's indices are int64 only */
    return HGR__ONNX_INVALID(node, "indices '%s' are %s; GatherND's must be int64", iv->name,
                             hgr__onnx_type_name(iv->onnx_type));
  int64_t batch_dims;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "batch_dims", 0, &batch_dims));
  if (iv->ndim < 1 || x->ndim < 1)
    return HGR__ONNX_INVALID(node, "data '%s' and indices '%s' need rank 1 or more", x->name, iv->name);
  int64_t k = iv->shape[iv->ndim - 1];
  if (batch_dims < 0 || batch_dims >= (x->ndim < iv->ndim ? x->ndim : iv->ndim))
    return HGR__ONNX_INVALID(node, "attr 'batch_dims' = %lld must be at least 0 and below both ranks (%d, %d)",
                             (long long)batch_dims, (int)x->ndim, (int)iv->ndim);
  if (k < 1 || k > x->ndim - batch_dims)
    return HGR__ONNX_INVALID(node, "the last dim of indices '%s' is %lld; it must be 1 to %lld (the data's rank less "
                             "batch_dims)", iv->name, (long long)k, (long long)(x->ndim - batch_dims));
  HGR_RETURN_IF_ERROR(check_constant_indices(node, iv, x->shape + batch_dims, k));
  hgr_value_t in[2];
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, x, &in[0]));
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, iv, &in[1]));
  hgr_attrs_t* attrs = NULL;
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  hgr_status_t status = hgr_attrs_set_int(attrs, "batch_dims", batch_dims);
  return hgr__onnx_finish_op(node, status, attrs, "onnx_gather_nd", in, 2, 0, x->onnx_type);
}

/* ---- ScatterND, ScatterElements, Scatter --------------------------------------------- */

/* Attr 'reduction' (opset 16 on: none, add, mul; 18 on: max, min too). */
static hgr_status_t read_reduction(const hgr__onnx_node_t* node, char* reduction, size_t capacity) {
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_string(node, "reduction", "none", reduction, capacity));
  bool known = !strcmp(reduction, "none") || !strcmp(reduction, "add") || !strcmp(reduction, "mul") ||
               (node->opset >= 18 && (!strcmp(reduction, "max") || !strcmp(reduction, "min")));
  if (!known)
    return HGR__ONNX_INVALID(node, "attr 'reduction' = \"%s\" is not one of none, add, mul%s at opset %lld",
                             reduction, node->opset >= 18 ? ", max, min" : "", (long long)node->opset);
  return HGR_OK;
}

/* What both scatters read first: data, indices and updates (all required), attr
 * reduction, and the data's dtype for it. */
static hgr_status_t scatter_inputs(hgr__onnx_node_t* node, hgr__onnx_value_t** x, hgr__onnx_value_t** iv,
                                   hgr__onnx_value_t** updates, char* reduction, size_t capacity) {
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, x));
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 1, iv));
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 2, updates));
  HGR_RETURN_IF_ERROR(read_reduction(node, reduction, capacity));
  return check_data(node, *x, strcmp(reduction, "none") != 0);
}

static hgr_status_t import_scatter_nd(hgr__onnx_node_t* node) {
  if (node->opset < 11) return HGR__ONNX_INVALID(node, "ScatterND does not exist before opset 11");
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, node->opset < 16 ? "" : "reduction"));
  hgr__onnx_value_t *x, *iv, *updates;
  char reduction[8];
  HGR_RETURN_IF_ERROR(scatter_inputs(node, &x, &iv, &updates, reduction, sizeof(reduction)));
  if (iv->onnx_type != HGR__ONNX_INT64)
    return HGR__ONNX_INVALID(node, "indices '%s' are %s; ScatterND's must be int64", iv->name,
                             hgr__onnx_type_name(iv->onnx_type));
  if (iv->ndim < 1 || x->ndim < 1)
    return HGR__ONNX_INVALID(node, "data '%s' and indices '%s' need rank 1 or more", x->name, iv->name);
  int64_t k = iv->shape[iv->ndim - 1];
  if (k < 1 || k > x->ndim)
    return HGR__ONNX_INVALID(node, "the last dim of indices '%s' is %lld; it must be 1 to %d (the data's rank)",
                             iv->name, (long long)k, (int)x->ndim);
  HGR_RETURN_IF_ERROR(check_constant_indices(node, iv, x->shape, k));
  hgr_value_t in[3];
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, x, &in[0]));
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, iv, &in[1]));
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, updates, &in[2]));
  hgr_attrs_t* attrs = NULL;
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  hgr_status_t status = hgr_attrs_set_string(attrs, "reduction", reduction);
  return hgr__onnx_finish_op(node, status, attrs, "onnx_scatter_nd", in, 3, 0, x->onnx_type);
}

/* ScatterElements, and Scatter (opsets 9 and 10: the same without reduction). */
static hgr_status_t import_scatter_elements(hgr__onnx_node_t* node) {
  bool old_name = !strcmp(node->proto->op_type, "Scatter");
  if (old_name && node->opset >= 11)
    return HGR__ONNX_INVALID(node, "Scatter is deprecated from opset 11 on (ScatterElements replaces it)");
  if (node->opset < (old_name ? 9 : 11))
    return HGR__ONNX_INVALID(node, "%s does not exist before opset %d", node->proto->op_type, old_name ? 9 : 11);
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, node->opset < 16 ? "axis" : "axis reduction"));
  hgr__onnx_value_t *x, *iv, *updates;
  char reduction[8];
  HGR_RETURN_IF_ERROR(scatter_inputs(node, &x, &iv, &updates, reduction, sizeof(reduction)));
  HGR_RETURN_IF_ERROR(check_index_type(node, iv));
  if (x->ndim < 1) return HGR__ONNX_INVALID(node, "data '%s' is a scalar; the op needs an axis", x->name);
  int64_t axis_attr;
  int32_t axis;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "axis", 0, &axis_attr));
  HGR_RETURN_IF_ERROR(hgr__onnx_axis(node, "attr 'axis'", axis_attr, x->ndim, &axis));
  HGR_RETURN_IF_ERROR(check_constant_indices(node, iv, &x->shape[axis], 0));
  hgr_value_t in[3];
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, x, &in[0]));
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, iv, &in[1]));
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, updates, &in[2]));
  hgr_attrs_t* attrs = NULL;
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  hgr_status_t status = hgr_attrs_set_int(attrs, "axis", axis);
  if (!status) status = hgr_attrs_set_string(attrs, "reduction", reduction);
  return hgr__onnx_finish_op(node, status, attrs, "scatter_elements", in, 3, 0, x->onnx_type);
}

const hgr__onnx_op_t hgr__onnx_ops_scatter[] = {
    {"GatherND", import_gather_nd, NULL, 2},
    {"ScatterND", import_scatter_nd, NULL, 3},
    {"ScatterElements", import_scatter_elements, NULL, 3},
    {"Scatter", import_scatter_elements, NULL, 3},
    {.name = NULL},
};
