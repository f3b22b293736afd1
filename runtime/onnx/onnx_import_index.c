/* ONNX's ArgMax, ArgMin, TopK, CumSum on hgr's argmax/argmin, topk and cumsum.
 * hgr gives indices as int32, which is how ONNX's int64 runs (onnx_internal.h);
 * ArgMax/ArgMin also fold on constants (shape arithmetic in exported models). TopK's
 * k and CumSum's axis must be known at load: hgr's ops take them as attrs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_internal.h"

/* ---- ArgMax, ArgMin -------------------------------------------------------------------- */

typedef struct arg_attrs_t {
  bool max;
  int32_t axis;
  bool keepdims;
  bool select_last;
} arg_attrs_t;

static hgr_status_t read_arg(const hgr__onnx_node_t* node, const hgr__onnx_value_t* x, arg_attrs_t* a) {
  HGR_RETURN_IF_ERROR(
      hgr__onnx_check_attrs(node, node->opset < 12 ? "axis keepdims" : "axis keepdims select_last_index"));
  int64_t axis, keepdims, select_last;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "axis", 0, &axis));
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "keepdims", 1, &keepdims));
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "select_last_index", 0, &select_last));
  if (x->ndim < 1) return HGR__ONNX_INVALID(node, "input '%s' is a scalar; the op needs an axis", x->name);
  HGR_RETURN_IF_ERROR(hgr__onnx_axis(node, "attr 'axis'", axis, x->ndim, &a->axis));
  if (x->shape[a->axis] == 0) return HGR__ONNX_INVALID(node, "axis %d of input '%s' is empty", (int)a->axis, x->name);
  a->max = !strcmp(node->proto->op_type, "ArgMax");
  a->keepdims = keepdims != 0;
  a->select_last = select_last != 0;
  return HGR_OK;
}

/* Whether candidate beats best: NaN is the extreme (NumPy's, as hgr's kernel). */
static bool arg_better(double candidate, double best, bool max, bool select_last) {
  if (isnan(best)) return false;
  if (isnan(candidate)) return true;
  if (candidate == best) return select_last;
  return max ? candidate > best : candidate < best;
}

static hgr_status_t fold_arg(hgr__onnx_node_t* node) {
  hgr__onnx_value_t* x;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  arg_attrs_t a;
  HGR_RETURN_IF_ERROR(read_arg(node, x, &a));
  const hgr__onnx_tensor_t* t = x->constant;
  int64_t shape[HGR_MAX_DIMS];
  int32_t ndim = 0;
  uint64_t outer = 1, inner = 1, extent = (uint64_t)t->shape[a.axis];
  for (int32_t d = 0; d < t->ndim; ++d) {
    if (d < a.axis) outer *= (uint64_t)t->shape[d];
    if (d > a.axis) inner *= (uint64_t)t->shape[d];
    if (d != a.axis || a.keepdims) shape[ndim++] = d == a.axis ? 1 : t->shape[d];
  }
  hgr__onnx_tensor_t* out = NULL;
  HGR_RETURN_IF_ERROR(hgr__onnx_tensor_new(node->loader->allocator, HGR__ONNX_INT64, shape, ndim, node->label, &out));
  for (uint64_t o = 0; o < outer; ++o)
    for (uint64_t i = 0; i < inner; ++i) {
      uint64_t best = 0;
      double best_value = hgr__onnx_tensor_f64(t, o * extent * inner + i);
      for (uint64_t e = 1; e < extent; ++e) {
        double v = hgr__onnx_tensor_f64(t, (o * extent + e) * inner + i);
        if (arg_better(v, best_value, a.max, a.select_last)) {
          best = e;
          best_value = v;
        }
      }
      hgr__onnx_tensor_set_i64(out, o * inner + i, (int64_t)best);
    }
  ++node->loader->report.folded;
  return hgr__onnx_set_constant(node, 0, out);
}

static hgr_status_t import_arg(hgr__onnx_node_t* node) {
  hgr__onnx_value_t* x;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  arg_attrs_t a;
  HGR_RETURN_IF_ERROR(read_arg(node, x, &a));
  if (x->onnx_type != HGR__ONNX_FLOAT && x->onnx_type != HGR__ONNX_INT32 && x->onnx_type != HGR__ONNX_INT64)
    return HGR__ONNX_UNSUPPORTED(node, "input '%s' is %s; hgr's %s takes float, int32 and int64", x->name,
                                 hgr__onnx_type_name(x->onnx_type), a.max ? "argmax" : "argmin");
  hgr_value_t in;
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, x, &in));
  hgr_attrs_t* attrs = NULL;
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  hgr_status_t status = hgr_attrs_set_int(attrs, "axis", a.axis);
  if (!status) status = hgr_attrs_set_int(attrs, "keepdims", a.keepdims);
  if (!status) status = hgr_attrs_set_int(attrs, "select_last_index", a.select_last);
  return hgr__onnx_finish_op(node, status, attrs, a.max ? "argmax" : "argmin", &in, 1, 0, HGR__ONNX_INT64);
}

/* ---- TopK ---------------------------------------------------------------------------- */

/* hgr's topk always returns its k elements sorted (ties by lower index first, as
 * ONNX requires); with sorted = 0 ONNX leaves the order open, so sorted output is
 * one of the answers it allows. */
static hgr_status_t import_topk(hgr__onnx_node_t* node) {
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, node->opset < 10   ? "axis k"
                                                  : node->opset < 11 ? "axis"
                                                                     : "axis largest sorted"));
  hgr__onnx_value_t* x;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  int64_t axis, largest, k;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "axis", -1, &axis));
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "largest", 1, &largest));
  if (node->opset < 10) {
    HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "k", -1, &k));
    if (k < 0) return HGR__ONNX_INVALID(node, "attr 'k' is required (>= 0)");
  } else {
    hgr__onnx_tensor_t* kt = NULL;
    HGR_RETURN_IF_ERROR(hgr__onnx_constant_input(node, 1, &kt));
    if (!kt) return HGR__ONNX_INVALID(node, "input 1 (K) is required");
    if (kt->count != 1 || hgr__onnx_type_is_float(kt->onnx_type))
      return HGR__ONNX_INVALID(node, "input 1 (K) must hold one integer");
    k = hgr__onnx_tensor_i64(kt, 0);
  }
  if (x->ndim < 1) return HGR__ONNX_INVALID(node, "input '%s' is a scalar; the op needs an axis", x->name);
  int32_t a;
  HGR_RETURN_IF_ERROR(hgr__onnx_axis(node, "attr 'axis'", axis, x->ndim, &a));
  if (k < 0 || k > x->shape[a])
    return HGR__ONNX_INVALID(node, "k = %lld, but axis %d has %lld elements", (long long)k, (int)a,
                             (long long)x->shape[a]);
  if (x->onnx_type != HGR__ONNX_FLOAT && x->onnx_type != HGR__ONNX_INT32 && x->onnx_type != HGR__ONNX_INT64)
    return HGR__ONNX_UNSUPPORTED(node, "input '%s' is %s; hgr's topk takes float, int32 and int64", x->name,
                                 hgr__onnx_type_name(x->onnx_type));
  hgr_value_t in, out[2];
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, x, &in));
  hgr_attrs_t* attrs = NULL;
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  hgr_status_t status = hgr_attrs_set_int(attrs, "k", k);
  if (!status) status = hgr_attrs_set_int(attrs, "axis", a);
  if (!status) status = hgr_attrs_set_string(attrs, "ret_type", "both");
  if (!status) status = hgr_attrs_set_int(attrs, "is_ascend", largest == 0);
  if (!status) status = hgr_attrs_set_string(attrs, "dtype", "int32");
  if (!status) status = hgr__onnx_add_op(node, "topk", &in, 1, attrs, 2, out);
  hgr_attrs_release(attrs);
  HGR_RETURN_IF_ERROR(status);
  HGR_RETURN_IF_ERROR(hgr__onnx_set_runtime(node, 0, out[0], x->onnx_type));
  return hgr__onnx_set_runtime(node, 1, out[1], HGR__ONNX_INT64);
}

/* ---- CumSum --------------------------------------------------------------------------- */

static hgr_status_t import_cumsum(hgr__onnx_node_t* node) {
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, "exclusive reverse"));
  hgr__onnx_value_t* x;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  int64_t exclusive, reverse;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "exclusive", 0, &exclusive));
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "reverse", 0, &reverse));
  hgr__onnx_tensor_t* axis_tensor = NULL;
  HGR_RETURN_IF_ERROR(hgr__onnx_constant_input(node, 1, &axis_tensor));
  if (!axis_tensor) return HGR__ONNX_INVALID(node, "input 1 (axis) is required");
  if (axis_tensor->count != 1 || axis_tensor->ndim > 1 || hgr__onnx_type_is_float(axis_tensor->onnx_type))
    return HGR__ONNX_INVALID(node, "input 1 (axis) must hold one integer");
  if (x->ndim < 1) return HGR__ONNX_INVALID(node, "input '%s' is a scalar; the op needs an axis", x->name);
  int32_t a;
  HGR_RETURN_IF_ERROR(hgr__onnx_axis(node, "input 1 (axis)", hgr__onnx_tensor_i64(axis_tensor, 0), x->ndim, &a));
  if (x->onnx_type != HGR__ONNX_FLOAT && x->onnx_type != HGR__ONNX_INT32 && x->onnx_type != HGR__ONNX_INT64)
    return HGR__ONNX_UNSUPPORTED(node, "input '%s' is %s; hgr's cumsum takes float, int32 and int64", x->name,
                                 hgr__onnx_type_name(x->onnx_type));
  hgr_value_t in;
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, x, &in));
  hgr_attrs_t* attrs = NULL;
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  hgr_status_t status = hgr_attrs_set_int(attrs, "axis", a);
  if (!status) status = hgr_attrs_set_int(attrs, "exclusive", exclusive != 0);
  if (!status) status = hgr_attrs_set_int(attrs, "reverse", reverse != 0);
  return hgr__onnx_finish_op(node, status, attrs, "cumsum", &in, 1, 0, x->onnx_type);
}

const hgr__onnx_op_t hgr__onnx_ops_index[] = {
    {"ArgMax", import_arg, fold_arg, 1},
    {"ArgMin", import_arg, fold_arg, 1},
    {"TopK", import_topk, NULL, 2},
    {"CumSum", import_cumsum, NULL, 2},
    {.name = NULL},
};
