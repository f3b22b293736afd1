/* ONNX's Gemm and MatMul on hgr's dense, matmul and batch_matmul: Gemm's
 * transposes, alpha and beta, a constant B transposed at load for dense; MatMul with
 * NumPy's rules (1-D operands, N-D batches broadcast with broadcast_to); and
 * com.microsoft's FusedMatMul, a MatMul of transposed operands, scaled. A B that a
 * QDQ model's DequantizeLinear folded at load from 8-bit weights is read in 8 bits
 * (dequantize_matmul). */
#include <stdlib.h>
#include <string.h>

#include "onnx_internal.h"

/* a times b, where b is a constant folded at load from 8-bit weights (a QDQ model's
 * DequantizeLinear): the 8-bit weights, dequantized in the product's loads
 * (hgr__onnx_weights_product), with the bias c (NULL: none), b being [K, N] or,
 * transposed, [N, K]. *out_fits false where b is no such fold, or its scale runs
 * along K: the caller takes the float32 weights. */
static hgr_status_t folded_weights_product(hgr__onnx_node_t* node, hgr__onnx_value_t* a, const hgr__onnx_value_t* b,
                                           bool transposed, hgr__onnx_value_t* c, hgr__onnx_value_t* out,
                                           bool* out_fits) {
  hgr__onnx_value_t *q, *scale, *zero;
  int64_t axis;
  *out_fits = false;
  if (b->ndim != 2 || !hgr__onnx_folded_weights(node, b, &q, &scale, &zero, &axis) ||
      (hgr__onnx_element_count(scale) != 1 && axis != (transposed ? 0 : 1)))
    return HGR_OK;
  return hgr__onnx_weights_product(node, a, q, transposed, scale, zero, c, out, out_fits);
}

static hgr_status_t import_gemm(hgr__onnx_node_t* node) {
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, "alpha beta transA transB broadcast"));
  double alpha, beta;
  int64_t trans_a, trans_b;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_float(node, "alpha", 1.0, &alpha));
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_float(node, "beta", 1.0, &beta));
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "transA", 0, &trans_a));
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "transB", 0, &trans_b));
  hgr__onnx_value_t *a, *b, *c = hgr__onnx_input(node, 2);
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &a));
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 1, &b));
  if (a->ndim != 2 || b->ndim != 2)
    return HGR__ONNX_INVALID(node, "A and B must be 2-D (they have rank %d and %d)", (int)a->ndim, (int)b->ndim);
  int64_t n = trans_b ? b->shape[0] : b->shape[1];
  hgr_value_t va, vb = {0, 0}, out;
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, a, &va));
  /* dense computes A B' + bias: B as [N, K], bias [N] when C is a per-column constant. */
  bool c_is_bias = c && c->constant && beta == 1.0 && (c->constant->count == (uint64_t)n) &&
                   (c->ndim == 1 || (c->ndim == 2 && c->shape[0] == 1));
  if (!trans_a && alpha == 1.0 && (!c || c_is_bias)) {
    hgr__onnx_value_t y;
    bool fits;
    HGR_RETURN_IF_ERROR(folded_weights_product(node, a, b, trans_b != 0, c, &y, &fits));
    if (fits) return hgr__onnx_set_runtime(node, 0, y.value, HGR__ONNX_FLOAT);
  }
  hgr_status_t status = HGR_OK;
  if (!trans_a && alpha == 1.0 && (trans_b || b->constant)) {
    if (trans_b) {
      status = hgr__onnx_runtime(node, b, &vb);
    } else { /* transpose the constant [K, N] to [N, K] at load */
      hgr__onnx_tensor_t* t = NULL;
      status = hgr__onnx_tensor_cast(node->loader->allocator, b->constant, HGR__ONNX_FLOAT, node->label, &t);
      if (!status) {
        hgr__onnx_tensor_t* tt = NULL;
        int64_t shape[2] = {b->shape[1], b->shape[0]};
        status = hgr__onnx_tensor_new(node->loader->allocator, HGR__ONNX_FLOAT, shape, 2, node->label, &tt);
        for (int64_t i = 0; !status && i < b->shape[0]; ++i)
          for (int64_t j = 0; j < b->shape[1]; ++j)
            memcpy((float*)tt->data + j * b->shape[0] + i, (float*)t->data + i * b->shape[1] + j, 4);
        if (!status) status = hgr__onnx_add_float_constant(node, b->name, tt, &vb);
        hgr__onnx_tensor_free(tt);
      }
      hgr__onnx_tensor_free(t);
    }
    hgr_value_t inputs[3] = {va, vb};
    uint32_t count = 2;
    if (!status && c_is_bias) {
      hgr__onnx_tensor_t* flat = NULL;
      status = hgr__onnx_tensor_cast(node->loader->allocator, c->constant, HGR__ONNX_FLOAT, node->label, &flat);
      int64_t flat_shape[1] = {n};
      if (!status) status = hgr__onnx_tensor_reshape(flat, flat_shape, 1, node->label);
      if (!status) {
        status = hgr__onnx_add_float_constant(node, NULL, flat, &inputs[2]);
        count = 3;
      }
      hgr__onnx_tensor_free(flat);
    }
    if (!status) status = hgr__onnx_add_op(node, "dense", inputs, count, NULL, 1, &out);
  } else {
    HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, b, &vb));
    hgr_attrs_t* attrs = NULL;
    HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
    hgr_value_t pair[2] = {va, vb};
    status = hgr_attrs_set_int(attrs, "transpose_a", trans_a != 0);
    if (!status) status = hgr_attrs_set_int(attrs, "transpose_b", trans_b != 0);
    if (!status) status = hgr__onnx_add_op(node, "matmul", pair, 2, attrs, 1, &out);
    hgr_attrs_release(attrs);
    hgr_value_t s;
    if (!status && alpha != 1.0) status = hgr__onnx_add_scalar(node, alpha, &s);
    if (!status && alpha != 1.0) status = hgr__onnx_add_binary(node, "multiply", out, s, &out);
    c_is_bias = false;
  }
  HGR_RETURN_IF_ERROR(status);
  if (c && !c_is_bias && beta != 0.0) {
    hgr_value_t vc, s;
    HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, c, &vc));
    if (beta != 1.0) {
      HGR_RETURN_IF_ERROR(hgr__onnx_add_scalar(node, beta, &s));
      HGR_RETURN_IF_ERROR(hgr__onnx_add_binary(node, "multiply", vc, s, &vc));
    }
    HGR_RETURN_IF_ERROR(hgr__onnx_add_binary(node, "add", out, vc, &out));
  }
  return hgr__onnx_set_runtime(node, 0, out, HGR__ONNX_FLOAT);
}

/* a times b with NumPy's rules, in *out: 1-D operands get a dim of 1 (removed
 * after), 2-D x 2-D is matmul, N-D batches (broadcast) run as batch_matmul. */
static hgr_status_t matmul_of(hgr__onnx_node_t* node, hgr__onnx_value_t* a, hgr__onnx_value_t* b, hgr_value_t* result) {
  if (a->onnx_type != HGR__ONNX_FLOAT || b->onnx_type != HGR__ONNX_FLOAT)
    return HGR__ONNX_UNSUPPORTED(node, "inputs are %s and %s; hgr multiplies float", hgr__onnx_type_name(a->onnx_type),
                                 hgr__onnx_type_name(b->onnx_type));
  if (!a->ndim || !b->ndim) return HGR__ONNX_INVALID(node, "MatMul of a scalar");
  hgr_value_t va, vb, out;
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, a, &va));
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, b, &vb));
  int64_t as[HGR_MAX_DIMS + 1], bs[HGR_MAX_DIMS + 1];
  int32_t an = a->ndim, bn = b->ndim;
  memcpy(as, a->shape, sizeof(int64_t) * (size_t)an);
  memcpy(bs, b->shape, sizeof(int64_t) * (size_t)bn);
  if (an == 1) { /* [K] -> [1, K] */
    as[1] = as[0];
    as[0] = 1;
    an = 2;
  }
  if (bn == 1) { /* [K] -> [K, 1] */
    bs[1] = 1;
    bn = 2;
  }
  int64_t m = as[an - 2], k = as[an - 1], n = bs[bn - 1];
  if (bs[bn - 2] != k)
    return HGR__ONNX_INVALID(node, "inner dimensions differ: %lld and %lld", (long long)k, (long long)bs[bn - 2]);
  int64_t batch[HGR_MAX_DIMS];
  int32_t batch_ndim = 0;
  HGR_RETURN_IF_ERROR(hgr__onnx_broadcast(node, as, an - 2, bs, bn - 2, batch, &batch_ndim));
  int64_t batch_count = 1;
  for (int32_t d = 0; d < batch_ndim; ++d) batch_count *= batch[d];
  /* the result's ONNX shape */
  int64_t shape[HGR_MAX_DIMS + 2];
  int32_t ndim = 0;
  for (int32_t d = 0; d < batch_ndim; ++d) shape[ndim++] = batch[d];
  if (a->ndim > 1) shape[ndim++] = m;
  if (b->ndim > 1) shape[ndim++] = n;
  if (bn == 2 && a->ndim >= 1) { /* [..., M, K] x [K, N]: matmul over the flattened rows */
    int64_t a2[2] = {batch_count * m, k};
    if (a->ndim != 2) HGR_RETURN_IF_ERROR(hgr__onnx_add_reshape(node, va, a2, 2, &va));
    if (b->ndim == 1) HGR_RETURN_IF_ERROR(hgr__onnx_add_reshape(node, vb, bs, 2, &vb));
    HGR_RETURN_IF_ERROR(hgr__onnx_add_binary(node, "matmul", va, vb, &out));
  } else {
    /* batch_matmul: [B, M, K] x [B, K, N] (transpose_b False); a batch of 1 broadcasts */
    int64_t a_batch = 1, b_batch = 1;
    for (int32_t d = 0; d < an - 2; ++d) a_batch *= as[d];
    for (int32_t d = 0; d < bn - 2; ++d) b_batch *= bs[d];
    hgr_value_t* sides[2] = {&va, &vb};
    int64_t* side_shapes[2] = {as, bs};
    int32_t side_ndim[2] = {an, bn};
    int64_t side_batch[2] = {a_batch, b_batch};
    for (int s = 0; s < 2; ++s) {
      if (side_batch[s] != batch_count && side_batch[s] != 1) { /* broadcast to the full batch */
        int64_t target[HGR_MAX_DIMS + 2];
        for (int32_t d = 0; d < batch_ndim; ++d) target[d] = batch[d];
        target[batch_ndim] = side_shapes[s][side_ndim[s] - 2];
        target[batch_ndim + 1] = side_shapes[s][side_ndim[s] - 1];
        hgr_attrs_t* attrs = NULL;
        HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
        hgr_value_t in = *sides[s];
        hgr_status_t status = HGR_OK;
        if (side_ndim[s] != batch_ndim + 2) { /* align ranks first */
          int64_t aligned[HGR_MAX_DIMS + 2];
          int32_t pad = batch_ndim + 2 - side_ndim[s];
          for (int32_t d = 0; d < batch_ndim + 2; ++d) aligned[d] = d < pad ? 1 : side_shapes[s][d - pad];
          status = hgr__onnx_add_reshape(node, in, aligned, batch_ndim + 2, &in);
        }
        if (!status) status = hgr_attrs_set_ints(attrs, "shape", target, (size_t)batch_ndim + 2);
        if (!status) status = hgr__onnx_add_op(node, "broadcast_to", &in, 1, attrs, 1, sides[s]);
        hgr_attrs_release(attrs);
        HGR_RETURN_IF_ERROR(status);
        side_batch[s] = batch_count;
      }
      int64_t three[3] = {side_batch[s], side_shapes[s][side_ndim[s] - 2], side_shapes[s][side_ndim[s] - 1]};
      HGR_RETURN_IF_ERROR(hgr__onnx_add_reshape(node, *sides[s], three, 3, sides[s]));
    }
    hgr_attrs_t* attrs = NULL;
    HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
    hgr_value_t pair[2] = {va, vb};
    hgr_status_t status = hgr_attrs_set_int(attrs, "transpose_b", 0);
    if (!status) status = hgr__onnx_add_op(node, "batch_matmul", pair, 2, attrs, 1, &out);
    hgr_attrs_release(attrs);
    HGR_RETURN_IF_ERROR(status);
  }
  hgr_tensor_info_t info;
  HGR_RETURN_IF_ERROR(hgr__onnx_value_info(node, out, &info));
  bool same = info.ndim == ndim;
  for (int32_t d = 0; same && d < ndim; ++d) same = info.shape[d] == shape[d];
  if (!same) HGR_RETURN_IF_ERROR(hgr__onnx_add_reshape(node, out, shape, ndim, &out));
  *result = out;
  return HGR_OK;
}

static hgr_status_t import_matmul(hgr__onnx_node_t* node) {
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, ""));
  hgr__onnx_value_t *a, *b;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &a));
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 1, &b));
  hgr__onnx_value_t y;
  bool fits;
  HGR_RETURN_IF_ERROR(folded_weights_product(node, a, b, false, NULL, &y, &fits));
  if (fits) return hgr__onnx_set_runtime(node, 0, y.value, HGR__ONNX_FLOAT);
  hgr_value_t out;
  HGR_RETURN_IF_ERROR(matmul_of(node, a, b, &out));
  return hgr__onnx_set_runtime(node, 0, out, HGR__ONNX_FLOAT);
}

/* Input i, or where flag asks, its transpose in the last two axes (held in
 * *transposed, a value of the node's own): *out points at the one to use. */
static hgr_status_t matmul_operand(hgr__onnx_node_t* node, uint32_t i, const char* flag,
                                   hgr__onnx_value_t* transposed, hgr__onnx_value_t** out) {
  hgr__onnx_value_t* v;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, i, &v));
  int64_t transpose;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, flag, 0, &transpose));
  *out = v;
  if (!transpose || v->ndim < 2) return HGR_OK;
  int64_t axes[HGR_MAX_DIMS];
  for (int32_t d = 0; d < v->ndim; ++d) axes[d] = d;
  axes[v->ndim - 2] = v->ndim - 1;
  axes[v->ndim - 1] = v->ndim - 2;
  hgr_value_t value;
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, v, &value));
  hgr_attrs_t* attrs = NULL;
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  hgr_status_t status = hgr_attrs_set_ints(attrs, "axes", axes, (size_t)v->ndim);
  if (!status) status = hgr__onnx_add_op(node, "transpose", &value, 1, attrs, 1, &value);
  hgr_attrs_release(attrs);
  HGR_RETURN_IF_ERROR(status);
  *transposed = hgr__onnx_runtime_value(node, value, v->onnx_type);
  *out = transposed;
  return HGR_OK;
}

static hgr_status_t import_fused_matmul(hgr__onnx_node_t* node) {
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, "alpha transA transB transBatchA transBatchB"));
  static const char* const batch_flags[2] = {"transBatchA", "transBatchB"};
  for (int k = 0; k < 2; ++k) {
    int64_t value;
    HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, batch_flags[k], 0, &value));
    if (value) return HGR__ONNX_UNSUPPORTED(node, "attr '%s' = %lld; hgr takes 0", batch_flags[k], (long long)value);
  }
  double alpha;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_float(node, "alpha", 1.0, &alpha));
  hgr__onnx_value_t transposed[2];
  hgr__onnx_value_t* inputs[2];
  HGR_RETURN_IF_ERROR(matmul_operand(node, 0, "transA", &transposed[0], &inputs[0]));
  HGR_RETURN_IF_ERROR(matmul_operand(node, 1, "transB", &transposed[1], &inputs[1]));
  hgr_value_t out;
  HGR_RETURN_IF_ERROR(matmul_of(node, inputs[0], inputs[1], &out));
  if (alpha != 1.0) {
    hgr_value_t scalar;
    HGR_RETURN_IF_ERROR(hgr__onnx_add_scalar(node, alpha, &scalar));
    HGR_RETURN_IF_ERROR(hgr__onnx_add_binary(node, "multiply", out, scalar, &out));
  }
  return hgr__onnx_set_runtime(node, 0, out, HGR__ONNX_FLOAT);
}

const hgr__onnx_op_t hgr__onnx_ops_matmul[] = {
    {"Gemm", import_gemm, NULL, 2},
    {"MatMul", import_matmul, NULL, 2},
    {.name = NULL},
};

/* com.microsoft's FusedMatMul (ONNX Runtime's optimizer writes it for a MatMul
 * behind a Transpose or a scaling): alpha * MatMul(A, B), each transposed in its
 * last two axes where transA or transB asks; transBatchA and transBatchB, which
 * move the batch axes, are refused. */
const hgr__onnx_op_t hgr__onnx_ops_matmul_contrib[] = {
    {"FusedMatMul", import_fused_matmul, NULL, 2},
    {.name = NULL},
};
