/* Ops on quantized tensors, as the float ops on their dequantized values: the
 * default domain's QLinearConv, QLinearMatMul, ConvInteger and MatMulInteger, and
 * the com.microsoft ops ONNX Runtime's quantizer writes in its QOperator format
 * (QLinearAdd, QLinearMul, QLinearConcat, QLinearGlobalAveragePool,
 * QLinearAveragePool, QLinearLeakyRelu, QLinearSigmoid, QGemm), what its graph
 * optimizer fuses them to (DynamicQuantizeMatMul, MatMulIntegerToFloat), and its
 * DynamicQuantizeLSTM (an LSTM on weights dequantized at load).
 *
 * Each input is dequantized on the device (dequantize: (x - zero point) * scale,
 * float32), or at load where it is a constant with constant scale and zero point
 * (dequantized_constant) -- except a matmul's constant weight matrix, which stays
 * in its width and is dequantized in the product's loads (dequantize_matmul,
 * weights_product) -- the float op's own importer runs on those values
 * (hgr__onnx_import_as), and the result is quantized with the output's scale and
 * zero point (quantize) or, for the *Integer ops, rounded to int32 (the sums of
 * products of integers are exact in float32 below 2^24). ONNX Runtime computes
 * these in integers and requantizes with a float multiplier: a result that falls
 * within float32's rounding of a half step may land one step away. A bias of
 * int32 (QLinearConv, QGemm) is dequantized with scale x_scale * w_scale and zero
 * point 0, as ONNX Runtime applies it. */
#include <string.h>

#include "onnx_internal.h"

static bool is_quantized(int32_t onnx_type) {
  return onnx_type == HGR__ONNX_INT8 || onnx_type == HGR__ONNX_UINT8;
}

/* A float32 constant of value, shaped like `like` (a scale of 1 beside a zero point). */
static hgr_status_t ones_like(hgr__onnx_node_t* node, const hgr__onnx_value_t* like, hgr_value_t* out) {
  hgr__onnx_tensor_t* t = NULL;
  HGR_RETURN_IF_ERROR(hgr__onnx_tensor_new(node->loader->allocator, HGR__ONNX_FLOAT, like->shape, like->ndim,
                                           node->label, &t));
  for (uint64_t i = 0; i < t->count; ++i) hgr__onnx_tensor_set_f64(t, i, 1.0);
  hgr_status_t status = hgr__onnx_add_constant(node, NULL, t, out);
  hgr__onnx_tensor_free(t);
  return status;
}

/* The scale of input scale_index: a float32 value, one element (per tensor) or a
 * vector of `extent` (per index along an axis). */
static hgr_status_t scale_of(hgr__onnx_node_t* node, uint32_t scale_index, int64_t extent, hgr__onnx_value_t** out) {
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, scale_index, out));
  const hgr__onnx_value_t* s = *out;
  if (s->onnx_type != HGR__ONNX_FLOAT)
    return HGR__ONNX_UNSUPPORTED(node, "input %u (a scale) is %s; hgr takes float scales", scale_index,
                                 hgr__onnx_type_name(s->onnx_type));
  if (hgr__onnx_element_count(s) != 1 && !(s->ndim == 1 && s->shape[0] == extent))
    return HGR__ONNX_UNSUPPORTED(node, "input %u (a scale) holds %lld elements; hgr takes one per tensor or %lld along "
                                 "the axis", scale_index, (long long)hgr__onnx_element_count(s), (long long)extent);
  return HGR_OK;
}

/* dequantize(in[0], in[1], in[2]) along axis, as a float value of the node's own. */
static hgr_status_t add_dequantize(hgr__onnx_node_t* node, const hgr_value_t* in, int64_t axis,
                                   hgr__onnx_value_t* out) {
  hgr_attrs_t* attrs = NULL;
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  hgr_value_t value;
  hgr_status_t status = hgr_attrs_set_int(attrs, "axis", axis);
  if (!status) status = hgr__onnx_add_op(node, "dequantize", in, 3, attrs, 1, &value);
  hgr_attrs_release(attrs);
  HGR_RETURN_IF_ERROR(status);
  *out = hgr__onnx_runtime_value(node, value, HGR__ONNX_FLOAT);
  return HGR_OK;
}

/* Constant x dequantized at load, as the kernel would (hgr__onnx_dequantized_element):
 * (x - zero) * scale (scale NULL: 1; zero NULL: 0), the scale and zero point one
 * element or along axis; *out a value of the node's own, on the device in float32
 * (a constant weight of QLinearConv, ConvInteger, QGemm...: no run dequantizes it,
 * at four times its bytes, as a QDQ model's folded DequantizeLinear). */
static hgr_status_t dequantized_constant(hgr__onnx_node_t* node, const hgr__onnx_value_t* x,
                                         const hgr__onnx_value_t* scale, const hgr__onnx_value_t* zero, int64_t axis,
                                         hgr__onnx_value_t* out) {
  hgr__onnx_value_t folded = {.name = x->name, .onnx_type = HGR__ONNX_FLOAT, .ndim = x->ndim, .defined = true,
                              .producer = -1, .consumer = -1, .scoped = true};
  memcpy(folded.shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
  HGR_RETURN_IF_ERROR(hgr__onnx_dequantized_tensor(node, x->constant, scale ? scale->constant : NULL,
                                                   zero ? zero->constant : NULL, axis, &folded.constant));
  hgr_value_t value;
  hgr_status_t status = hgr__onnx_runtime(node, &folded, &value);
  hgr__onnx_tensor_free(folded.constant);
  HGR_RETURN_IF_ERROR(status);
  *out = hgr__onnx_runtime_value(node, value, HGR__ONNX_FLOAT);
  return HGR_OK;
}

/* Input x_index dequantized: (x - zero point) * scale in float32, the scale input
 * scale_index (-1: a scale of 1, the *Integer ops' x - zero point) and zero point
 * zero_index applying per tensor or, as vectors, along axis (negative from the
 * end). *out: a value of the node's own. */
static hgr_status_t dequantized(hgr__onnx_node_t* node, uint32_t x_index, int32_t scale_index, uint32_t zero_index,
                                int64_t axis, hgr__onnx_value_t* out) {
  hgr__onnx_value_t* x;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, x_index, &x));
  if (!is_quantized(x->onnx_type) && x->onnx_type != HGR__ONNX_INT32)
    return HGR__ONNX_UNSUPPORTED(node, "input %u is %s; hgr takes int8 and uint8 here", x_index,
                                 hgr__onnx_type_name(x->onnx_type));
  if (axis < 0) axis += x->ndim;
  int64_t extent = axis >= 0 && axis < x->ndim ? x->shape[axis] : 1;
  hgr__onnx_value_t *scale = NULL, *zero = hgr__onnx_input(node, zero_index);
  hgr__onnx_value_t unit = {.ndim = 0};
  if (scale_index >= 0) {
    HGR_RETURN_IF_ERROR(scale_of(node, (uint32_t)scale_index, extent, &scale));
  } else {
    if (zero && hgr__onnx_element_count(zero) != 1 && !(zero->ndim == 1 && zero->shape[0] == extent))
      return HGR__ONNX_UNSUPPORTED(node, "input %u (a zero point) holds %lld elements; hgr takes one per tensor or "
                                   "%lld along the axis", zero_index, (long long)hgr__onnx_element_count(zero),
                                   (long long)extent);
    if (zero && hgr__onnx_element_count(zero) != 1) unit = (hgr__onnx_value_t){.ndim = 1, .shape = {extent}};
  }
  if (x->constant && (!scale || scale->constant) && (!zero || zero->constant) &&
      (!zero || (zero->onnx_type == x->onnx_type &&
                 hgr__onnx_element_count(zero) == hgr__onnx_element_count(scale ? scale : &unit))))
    return dequantized_constant(node, x, scale, zero, axis, out);
  hgr_value_t in[3];
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime_held(node, x, &in[0]));
  if (scale) {
    HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, scale, &in[1]));
  } else {
    HGR_RETURN_IF_ERROR(ones_like(node, &unit, &in[1]));
    scale = &unit;
  }
  HGR_RETURN_IF_ERROR(hgr__onnx_zero_point(node, zero_index, scale, x->onnx_type, &in[2]));
  return add_dequantize(node, in, axis, out);
}

/* A bias of int32 as float32: bias * x_scale * w_scale (zero point 0), the scales
 * inputs x_scale_index and w_scale_index, per tensor or per output channel. */
static hgr_status_t dequantized_bias(hgr__onnx_node_t* node, uint32_t bias_index, uint32_t x_scale_index,
                                     uint32_t w_scale_index, hgr__onnx_value_t* out) {
  hgr__onnx_value_t *bias, *xs, *ws;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, bias_index, &bias));
  if (bias->onnx_type != HGR__ONNX_INT32 || bias->ndim != 1)
    return HGR__ONNX_INVALID(node, "input %u (the bias) is %s of rank %d; it must be an int32 vector", bias_index,
                             hgr__onnx_type_name(bias->onnx_type), (int)bias->ndim);
  HGR_RETURN_IF_ERROR(scale_of(node, x_scale_index, 1, &xs));
  HGR_RETURN_IF_ERROR(scale_of(node, w_scale_index, bias->shape[0], &ws));
  hgr_value_t in[3], xv, wv;
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime_held(node, bias, &in[0]));
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, xs, &xv));
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, ws, &wv));
  HGR_RETURN_IF_ERROR(hgr__onnx_add_binary(node, "multiply", xv, wv, &in[1]));
  hgr__onnx_value_t product = hgr__onnx_runtime_value(node, in[1], HGR__ONNX_FLOAT); /* [], [1] or [M] */
  HGR_RETURN_IF_ERROR(hgr__onnx_zero_point(node, UINT32_MAX, &product, HGR__ONNX_INT32, &in[2]));
  return add_dequantize(node, in, 0, out);
}

/* Output 0: result quantized with the scale and zero point inputs scale_index and
 * zero_index (per tensor), in the zero point's type (uint8 when omitted). */
static hgr_status_t quantized_output(hgr__onnx_node_t* node, const hgr__onnx_value_t* result, uint32_t scale_index,
                                     uint32_t zero_index) {
  hgr__onnx_value_t* scale;
  HGR_RETURN_IF_ERROR(scale_of(node, scale_index, 1, &scale));
  hgr__onnx_value_t* given = hgr__onnx_input(node, zero_index);
  int32_t type = given ? given->onnx_type : HGR__ONNX_UINT8;
  if (!is_quantized(type))
    return HGR__ONNX_UNSUPPORTED(node, "input %u (the output's zero point) is %s; hgr quantizes to int8 and uint8",
                                 zero_index, hgr__onnx_type_name(type));
  hgr_value_t in[3] = {result->value}, out;
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, scale, &in[1]));
  HGR_RETURN_IF_ERROR(hgr__onnx_zero_point(node, zero_index, scale, type, &in[2]));
  HGR_RETURN_IF_ERROR(hgr__onnx_add_op(node, "quantize", in, 3, NULL, 1, &out));
  return hgr__onnx_set_runtime(node, 0, out, type);
}

/* Output 0: the integer-valued float result as int32 (rounded, then cast). Where a
 * Cast to float alone reads it (quantize_dynamic's MatMulInteger -> Cast -> Mul),
 * the rounded float is the Cast's output, and that Cast is fused: no round trip
 * through int32, and the round joins the elementwise ops after it. */
static hgr_status_t int32_output(hgr__onnx_node_t* node, const hgr__onnx_value_t* result) {
  hgr_value_t out;
  HGR_RETURN_IF_ERROR(hgr__onnx_add_unary(node, "round", result->value, &out));
  uint32_t index;
  const Onnx__NodeProto* next =
      node->output_count && node->outputs[0] ? hgr__onnx_sole_consumer(node, node->outputs[0], &index) : NULL;
  const Onnx__AttributeProto* to = next ? hgr__onnx_proto_attr(next, "to") : NULL;
  if (next && !strcmp(next->op_type, "Cast") && hgr__onnx_domain_is_default(next->domain) && next->n_output == 1 &&
      next->n_attribute == 1 && to && to->i == HGR__ONNX_FLOAT) {
    hgr__onnx_value_t rounded = hgr__onnx_runtime_value(node, out, HGR__ONNX_FLOAT);
    return hgr__onnx_fuse_into(node, index, &rounded);
  }
  HGR_RETURN_IF_ERROR(hgr__onnx_add_cast(node, out, (hgr_dtype_t){HGR_DTYPE_INT, 32, 1}, &out));
  return hgr__onnx_set_runtime(node, 0, out, HGR__ONNX_INT32);
}

/* hgr__onnx_weights_product with the node's inputs: b_index (the weights [K, N]),
 * scale_index (-1: a scale of 1), zero_index and bias_index (absent or UINT32_MAX:
 * none). */
static hgr_status_t weights_product(hgr__onnx_node_t* node, hgr__onnx_value_t* a, uint32_t b_index,
                                    int32_t scale_index, uint32_t zero_index, uint32_t bias_index,
                                    hgr__onnx_value_t* out, bool* out_fits) {
  hgr__onnx_value_t* scale = scale_index >= 0 ? hgr__onnx_input(node, (uint32_t)scale_index) : NULL;
  *out_fits = false;
  if (scale_index >= 0 && !scale) return HGR_OK; /* the general path names it */
  return hgr__onnx_weights_product(node, a, hgr__onnx_input(node, b_index), false, scale,
                                   hgr__onnx_input(node, zero_index),
                                   bias_index != UINT32_MAX ? hgr__onnx_input(node, bias_index) : NULL, out, out_fits);
}

/* ---- the default domain ------------------------------------------------------------- */

/* x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point [, B] */
static hgr_status_t import_qlinear_conv(hgr__onnx_node_t* node) {
  hgr__onnx_value_t x, w, b, y;
  HGR_RETURN_IF_ERROR(dequantized(node, 0, 1, 2, 1, &x));
  HGR_RETURN_IF_ERROR(dequantized(node, 3, 4, 5, 0, &w));
  bool biased = hgr__onnx_input(node, 8) != NULL;
  if (biased) HGR_RETURN_IF_ERROR(dequantized_bias(node, 8, 1, 4, &b));
  hgr__onnx_value_t* inputs[3] = {&x, &w, &b};
  HGR_RETURN_IF_ERROR(hgr__onnx_import_as(node, "Conv", "", inputs, biased ? 3 : 2, &y));
  return quantized_output(node, &y, 6, 7);
}

/* a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point */
static hgr_status_t import_qlinear_matmul(hgr__onnx_node_t* node) {
  hgr__onnx_value_t a, b, y;
  bool fits;
  HGR_RETURN_IF_ERROR(dequantized(node, 0, 1, 2, -2, &a));
  HGR_RETURN_IF_ERROR(weights_product(node, &a, 3, 4, 5, UINT32_MAX, &y, &fits));
  if (fits) return quantized_output(node, &y, 6, 7);
  HGR_RETURN_IF_ERROR(dequantized(node, 3, 4, 5, -1, &b));
  hgr__onnx_value_t* inputs[2] = {&a, &b};
  HGR_RETURN_IF_ERROR(hgr__onnx_import_as(node, "MatMul", "", inputs, 2, &y));
  return quantized_output(node, &y, 6, 7);
}

/* A, B [, a_zero_point, b_zero_point]: int32 (A - a_zero_point)(B - b_zero_point) */
static hgr_status_t import_matmul_integer(hgr__onnx_node_t* node) {
  hgr__onnx_value_t a, b, y;
  bool fits;
  HGR_RETURN_IF_ERROR(dequantized(node, 0, -1, 2, -2, &a));
  HGR_RETURN_IF_ERROR(weights_product(node, &a, 1, -1, 3, UINT32_MAX, &y, &fits));
  if (fits) return int32_output(node, &y);
  HGR_RETURN_IF_ERROR(dequantized(node, 1, -1, 3, -1, &b));
  hgr__onnx_value_t* inputs[2] = {&a, &b};
  HGR_RETURN_IF_ERROR(hgr__onnx_import_as(node, "MatMul", "", inputs, 2, &y));
  return int32_output(node, &y);
}

/* x, w [, x_zero_point, w_zero_point]: int32 Conv of x - x_zero_point (padded with
 * zeros after the subtraction, as ONNX pads x with its zero point) */
static hgr_status_t import_conv_integer(hgr__onnx_node_t* node) {
  hgr__onnx_value_t x, w, y;
  HGR_RETURN_IF_ERROR(dequantized(node, 0, -1, 2, 1, &x));
  HGR_RETURN_IF_ERROR(dequantized(node, 1, -1, 3, 0, &w));
  hgr__onnx_value_t* inputs[2] = {&x, &w};
  HGR_RETURN_IF_ERROR(hgr__onnx_import_as(node, "Conv", "", inputs, 2, &y));
  return int32_output(node, &y);
}

const hgr__onnx_op_t hgr__onnx_ops_qlinear[] = {
    {"QLinearConv", import_qlinear_conv, NULL, 8},
    {"QLinearMatMul", import_qlinear_matmul, NULL, 8},
    {"MatMulInteger", import_matmul_integer, NULL, 2},
    {"ConvInteger", import_conv_integer, NULL, 2},
    {.name = NULL},
};

/* ---- com.microsoft: ONNX Runtime's QOperator format ----------------------------------- */

/* A, A_scale, A_zero_point, B, B_scale, B_zero_point, C_scale, C_zero_point */
static hgr_status_t import_qlinear_binary(hgr__onnx_node_t* node) {
  hgr__onnx_value_t a, b, y;
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, ""));
  HGR_RETURN_IF_ERROR(dequantized(node, 0, 1, 2, 0, &a));
  HGR_RETURN_IF_ERROR(dequantized(node, 3, 4, 5, 0, &b));
  hgr__onnx_value_t* inputs[2] = {&a, &b};
  bool add = !strcmp(node->proto->op_type, "QLinearAdd");
  HGR_RETURN_IF_ERROR(hgr__onnx_import_as(node, add ? "Add" : "Mul", "", inputs, 2, &y));
  return quantized_output(node, &y, 6, 7);
}

/* X, X_scale, X_zero_point, Y_scale, Y_zero_point: the float op of the same name
 * without "QLinear" (GlobalAveragePool, AveragePool, LeakyRelu, Sigmoid), NCHW. */
static hgr_status_t import_qlinear_unary(hgr__onnx_node_t* node) {
  int64_t channels_last;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "channels_last", 0, &channels_last));
  if (channels_last) return HGR__ONNX_UNSUPPORTED(node, "channels_last = %lld; hgr takes NCHW", (long long)channels_last);
  hgr__onnx_value_t x, y;
  HGR_RETURN_IF_ERROR(dequantized(node, 0, 1, 2, 0, &x));
  hgr__onnx_value_t* inputs[1] = {&x};
  HGR_RETURN_IF_ERROR(
      hgr__onnx_import_as(node, node->proto->op_type + strlen("QLinear"), "channels_last", inputs, 1, &y));
  return quantized_output(node, &y, 3, 4);
}

/* Y_scale, Y_zero_point, then X, X_scale, X_zero_point per input */
static hgr_status_t import_qlinear_concat(hgr__onnx_node_t* node) {
  if (node->input_count < 5 || (node->input_count - 2) % 3)
    return HGR__ONNX_INVALID(node, "%u inputs; the op takes Y_scale, Y_zero_point and three per input",
                             node->input_count);
  uint32_t count = (node->input_count - 2) / 3;
  hgr__onnx_value_t* values = hgr__calloc(node->loader->allocator, count, sizeof(*values));
  hgr__onnx_value_t** inputs = hgr__calloc(node->loader->allocator, count, sizeof(*inputs));
  hgr_status_t status = values && inputs ? HGR_OK : HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  for (uint32_t i = 0; !status && i < count; ++i) {
    status = dequantized(node, 2 + 3 * i, (int32_t)(3 + 3 * i), 4 + 3 * i, 0, &values[i]);
    inputs[i] = &values[i];
  }
  hgr__onnx_value_t y;
  if (!status) status = hgr__onnx_import_as(node, "Concat", "", inputs, count, &y);
  hgr__free(node->loader->allocator, values);
  hgr__free(node->loader->allocator, inputs);
  HGR_RETURN_IF_ERROR(status);
  return quantized_output(node, &y, 0, 1);
}

/* A, a_scale, a_zero_point, B, b_scale, b_zero_point [, C (int32), y_scale,
 * y_zero_point]: Gemm's alpha, transA and transB; without y_scale the output is
 * float. */
static hgr_status_t import_qgemm(hgr__onnx_node_t* node) {
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, "alpha transA transB"));
  int64_t trans_b;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "transB", 0, &trans_b));
  hgr__onnx_value_t a, b, c, y;
  HGR_RETURN_IF_ERROR(dequantized(node, 0, 1, 2, 0, &a));
  HGR_RETURN_IF_ERROR(dequantized(node, 3, 4, 5, trans_b ? 0 : 1, &b)); /* per output column */
  bool biased = hgr__onnx_input(node, 6) != NULL;
  if (biased) HGR_RETURN_IF_ERROR(dequantized_bias(node, 6, 1, 4, &c));
  hgr__onnx_value_t* inputs[3] = {&a, &b, &c};
  HGR_RETURN_IF_ERROR(hgr__onnx_import_as(node, "Gemm", "", inputs, biased ? 3 : 2, &y));
  if (hgr__onnx_input(node, 7)) return quantized_output(node, &y, 7, 8);
  return hgr__onnx_set_runtime(node, 0, y.value, HGR__ONNX_FLOAT);
}

/* Output 0: the float product, plus the float bias input bias_index where given. */
static hgr_status_t float_output(hgr__onnx_node_t* node, hgr__onnx_value_t* product, uint32_t bias_index) {
  hgr__onnx_value_t* bias = hgr__onnx_input(node, bias_index);
  hgr__onnx_value_t y = *product;
  if (bias) {
    hgr__onnx_value_t* inputs[2] = {product, bias};
    HGR_RETURN_IF_ERROR(hgr__onnx_import_as(node, "Add", "", inputs, 2, &y));
  }
  return hgr__onnx_set_runtime(node, 0, y.value, HGR__ONNX_FLOAT);
}

/* A, B, b_scale [, b_zero_point, bias]: A quantized as DynamicQuantizeLinear does
 * (uint8, its own scale and zero point: ONNX Runtime's rounding of A), both sides
 * dequantized, MatMul, plus the float bias. */
static hgr_status_t import_dynamic_quantize_matmul(hgr__onnx_node_t* node) {
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, ""));
  hgr__onnx_value_t* a;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &a));
  hgr__onnx_value_t q[3], a_float, b, y;
  hgr__onnx_value_t* inputs[2] = {a, NULL};
  HGR_RETURN_IF_ERROR(hgr__onnx_import_as_outputs(node, "DynamicQuantizeLinear", "", inputs, 1, q, 3));
  hgr_value_t in[3] = {q[0].value, q[1].value, q[2].value};
  HGR_RETURN_IF_ERROR(add_dequantize(node, in, 0, &a_float));
  bool fits;
  HGR_RETURN_IF_ERROR(weights_product(node, &a_float, 1, 2, 3, 4, &y, &fits));
  if (fits) return hgr__onnx_set_runtime(node, 0, y.value, HGR__ONNX_FLOAT);
  HGR_RETURN_IF_ERROR(dequantized(node, 1, 2, 3, -1, &b));
  inputs[0] = &a_float;
  inputs[1] = &b;
  HGR_RETURN_IF_ERROR(hgr__onnx_import_as(node, "MatMul", "", inputs, 2, &y));
  return float_output(node, &y, 4);
}

/* A, B, a_scale, b_scale [, a_zero_point, b_zero_point, bias]: the float product
 * of A and B dequantized (B per column), plus the float bias. */
static hgr_status_t import_matmul_integer_to_float(hgr__onnx_node_t* node) {
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, ""));
  hgr__onnx_value_t a, b, y;
  bool fits;
  HGR_RETURN_IF_ERROR(dequantized(node, 0, 2, 4, -1, &a));
  HGR_RETURN_IF_ERROR(weights_product(node, &a, 1, 3, 5, 6, &y, &fits));
  if (fits) return hgr__onnx_set_runtime(node, 0, y.value, HGR__ONNX_FLOAT);
  HGR_RETURN_IF_ERROR(dequantized(node, 1, 3, 5, -1, &b));
  hgr__onnx_value_t* inputs[2] = {&a, &b};
  HGR_RETURN_IF_ERROR(hgr__onnx_import_as(node, "MatMul", "", inputs, 2, &y));
  return float_output(node, &y, 6);
}

/* Input w_index of DynamicQuantizeLSTM ([D, rows, 4H] int8 or uint8, a constant)
 * dequantized with its scale and zero point ([D] or [D, 4H]) and transposed to the
 * LSTM's [D, 4H, rows], at load: a float constant of the node's own. */
static hgr_status_t lstm_weight(hgr__onnx_node_t* node, uint32_t w_index, hgr__onnx_tensor_t** out) {
  uint32_t scale_index = 8 + 2 * (w_index - 1), zero_index = scale_index + 1; /* W's: 8, 9; R's: 10, 11 */
  hgr__onnx_tensor_t *w, *scale, *zero = NULL;
  if (!hgr__onnx_input(node, scale_index))
    return HGR__ONNX_INVALID(node, "input %u (%s's scale) is required, but the node omits it", scale_index,
                             w_index == 1 ? "W" : "R");
  HGR_RETURN_IF_ERROR(hgr__onnx_constant_input(node, w_index, &w));
  HGR_RETURN_IF_ERROR(hgr__onnx_constant_input(node, scale_index, &scale));
  if (hgr__onnx_input(node, zero_index)) HGR_RETURN_IF_ERROR(hgr__onnx_constant_input(node, zero_index, &zero));
  if (!is_quantized(w->onnx_type) || w->ndim != 3)
    return HGR__ONNX_INVALID(node, "input %u is %s of rank %d; it must be int8 or uint8 [D, rows, 4H]", w_index,
                             hgr__onnx_type_name(w->onnx_type), (int)w->ndim);
  int64_t d = w->shape[0], rows = w->shape[1], gates = w->shape[2];
  bool per_channel = scale->count == (uint64_t)(d * gates) && gates != 1;
  if (scale->count != (uint64_t)d && !per_channel)
    return HGR__ONNX_INVALID(node, "input %u (W's or R's scale) holds %llu elements; it must hold %lld or %lld",
                             scale_index, (unsigned long long)scale->count, (long long)d, (long long)(d * gates));
  if (zero && zero->count != scale->count)
    return HGR__ONNX_INVALID(node, "input %u (a zero point) holds %llu elements, its scale %llu", zero_index,
                             (unsigned long long)zero->count, (unsigned long long)scale->count);
  int64_t shape[3] = {d, gates, rows};
  HGR_RETURN_IF_ERROR(hgr__onnx_tensor_new(node->loader->allocator, HGR__ONNX_FLOAT, shape, 3, node->label, out));
  for (int64_t k = 0; k < d; ++k)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t g = 0; g < gates; ++g) {
        uint64_t q = per_channel ? (uint64_t)(k * gates + g) : (uint64_t)k;
        hgr__onnx_tensor_set_f64(*out, (uint64_t)((k * gates + g) * rows + r),
                                 hgr__onnx_dequantized_element(w, (uint64_t)((k * rows + r) * gates + g), zero, q,
                                                               scale, q));
      }
  return HGR_OK;
}

/* X, W, R, B, sequence_lens, initial_h, initial_c, P, W_scale, W_zero_point,
 * R_scale, R_zero_point: the LSTM on W and R dequantized at load. ONNX Runtime
 * also quantizes X and the hidden state to uint8 at each step; hgr keeps them in
 * float32, so its results differ from ONNX Runtime's by that rounding. */
static hgr_status_t import_dynamic_quantize_lstm(hgr__onnx_node_t* node) {
  hgr__onnx_tensor_t* weights[2] = {NULL, NULL};
  hgr_status_t status = lstm_weight(node, 1, &weights[0]);
  if (!status) status = lstm_weight(node, 2, &weights[1]);
  hgr__onnx_value_t values[2];
  hgr__onnx_value_t* inputs[8];
  for (uint32_t i = 0; i < 8; ++i) inputs[i] = hgr__onnx_input(node, i);
  for (int k = 0; !status && k < 2; ++k) {
    values[k] = (hgr__onnx_value_t){.name = inputs[1 + k]->name, .onnx_type = HGR__ONNX_FLOAT,
                                    .ndim = weights[k]->ndim, .constant = weights[k], .defined = true,
                                    .producer = -1, .consumer = -1, .scoped = true};
    memcpy(values[k].shape, weights[k]->shape, sizeof(int64_t) * 3);
    inputs[1 + k] = &values[k];
  }
  uint32_t count = 8;
  while (count > 3 && !inputs[count - 1]) --count;
  if (!status) status = hgr__onnx_import_as_outputs(node, "LSTM", "", inputs, count, NULL, 0);
  hgr__onnx_tensor_free(weights[0]);
  hgr__onnx_tensor_free(weights[1]);
  return status;
}

/* Input index (int8 or uint8, a constant) dequantized at load with its scale and
 * zero point per tensor: a float constant value of the node's own in *out, its
 * tensor in *out_tensor (the caller frees it). */
static hgr_status_t dequantized_at_load(hgr__onnx_node_t* node, uint32_t index, uint32_t scale_index,
                                        uint32_t zero_index, hgr__onnx_value_t* out, hgr__onnx_tensor_t** out_tensor) {
  hgr__onnx_tensor_t *q, *scale, *zero = NULL;
  HGR_RETURN_IF_ERROR(hgr__onnx_constant_input(node, index, &q));
  HGR_RETURN_IF_ERROR(hgr__onnx_constant_input(node, scale_index, &scale));
  if (hgr__onnx_input(node, zero_index)) HGR_RETURN_IF_ERROR(hgr__onnx_constant_input(node, zero_index, &zero));
  if (!q || !scale)
    return HGR__ONNX_INVALID(node, "input %u or its scale (input %u) is omitted", index, scale_index);
  if (!is_quantized(q->onnx_type) || scale->count != 1 || (zero && zero->count != 1))
    return HGR__ONNX_UNSUPPORTED(node, "input %u is %s with %llu scales; hgr takes int8 and uint8 per tensor", index,
                                 hgr__onnx_type_name(q->onnx_type), (unsigned long long)scale->count);
  HGR_RETURN_IF_ERROR(hgr__onnx_dequantized_tensor(node, q, scale, zero, 0, out_tensor));
  *out = (hgr__onnx_value_t){.name = node->inputs[index]->name, .onnx_type = HGR__ONNX_FLOAT, .ndim = q->ndim,
                             .constant = *out_tensor, .defined = true, .producer = -1, .consumer = -1, .scoped = true};
  memcpy(out->shape, q->shape, sizeof(int64_t) * (size_t)q->ndim);
  return HGR_OK;
}

/* input_ids, segment_ids, then word_embedding, position_embedding,
 * segment_embedding, gamma, beta (uint8), mask, then their scales and zero points:
 * EmbedLayerNormalization on the tables dequantized at load (ONNX Runtime's
 * kernel dequantizes the rows it gathers: the same values). */
static hgr_status_t import_qembed_layer_norm(hgr__onnx_node_t* node) {
  hgr__onnx_value_t tables[5];
  hgr__onnx_tensor_t* tensors[5] = {NULL};
  hgr__onnx_value_t* inputs[8];
  for (uint32_t i = 0; i < 8; ++i) inputs[i] = hgr__onnx_input(node, i);
  hgr_status_t status = HGR_OK;
  for (uint32_t k = 0; !status && k < 5; ++k) {
    if (!inputs[2 + k]) continue; /* segment_embedding is optional; the others EmbedLayerNormalization requires */
    status = dequantized_at_load(node, 2 + k, 8 + k, 13 + k, &tables[k], &tensors[k]);
    inputs[2 + k] = &tables[k];
  }
  if (!status) status = hgr__onnx_import_as_outputs(node, "EmbedLayerNormalization", "", inputs, 8, NULL, 0);
  for (uint32_t k = 0; k < 5; ++k) hgr__onnx_tensor_free(tensors[k]);
  return status;
}

const hgr__onnx_op_t hgr__onnx_ops_qlinear_contrib[] = {
    {"QLinearAdd", import_qlinear_binary, NULL, 7},
    {"QLinearMul", import_qlinear_binary, NULL, 7},
    {"QLinearConcat", import_qlinear_concat, NULL, 5},
    {"QLinearGlobalAveragePool", import_qlinear_unary, NULL, 4},
    {"QLinearAveragePool", import_qlinear_unary, NULL, 4},
    {"QLinearLeakyRelu", import_qlinear_unary, NULL, 4},
    {"QLinearSigmoid", import_qlinear_unary, NULL, 4},
    {"QGemm", import_qgemm, NULL, 6},
    {"DynamicQuantizeMatMul", import_dynamic_quantize_matmul, NULL, 3},
    {"MatMulIntegerToFloat", import_matmul_integer_to_float, NULL, 4},
    {"DynamicQuantizeLSTM", import_dynamic_quantize_lstm, NULL, 3},
    {"QEmbedLayerNormalization", import_qembed_layer_norm, NULL, 1},
    {.name = NULL},
};
