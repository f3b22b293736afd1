/* Quantization ops of the default domain: QuantizeLinear and DequantizeLinear
 * (opsets 10 to 21: per tensor, per axis, in blocks; int8, uint8, int16, uint16,
 * and int32 read by DequantizeLinear) as hgr's quantize and dequantize, and
 * DynamicQuantizeLinear (opset 11) as quantize_params (its scale and zero point, one
 * kernel), then quantize. Quantized values computed at run time stay in their own
 * width on the device (onnx_internal.h, "Run-time dtypes"). A DequantizeLinear of
 * constants folds at load (fold_dequantize), and a matmul reads the 8-bit weights
 * behind such a fold (hgr__onnx_weights_product). float8 and int4 are refused by
 * name. */
#include <string.h>

#include "onnx_internal.h"

/* Whether onnx_type is an integer the quantize and dequantize ops take. */
static bool quantized_type(int32_t onnx_type, bool int32_too) {
  return onnx_type == HGR__ONNX_INT8 || onnx_type == HGR__ONNX_UINT8 || onnx_type == HGR__ONNX_INT16 ||
         onnx_type == HGR__ONNX_UINT16 || (int32_too && onnx_type == HGR__ONNX_INT32);
}

hgr_status_t hgr__onnx_zero_point(hgr__onnx_node_t* node, uint32_t zero_index, const hgr__onnx_value_t* like,
                                  int32_t onnx_type, hgr_value_t* out) {
  hgr__onnx_value_t* given = hgr__onnx_input(node, zero_index);
  if (given) {
    if (given->onnx_type != onnx_type)
      return HGR__ONNX_INVALID(node, "input %u (a zero point) is %s; it must be %s", zero_index,
                               hgr__onnx_type_name(given->onnx_type), hgr__onnx_type_name(onnx_type));
    if (hgr__onnx_element_count(given) != hgr__onnx_element_count(like))
      return HGR__ONNX_INVALID(node, "input %u (a zero point) holds %lld elements, its scale %lld", zero_index,
                               (long long)hgr__onnx_element_count(given), (long long)hgr__onnx_element_count(like));
    HGR_RETURN_IF_ERROR(hgr__onnx_runtime_held(node, given, out));
    bool same = given->ndim == like->ndim && !memcmp(given->shape, like->shape, sizeof(int64_t) * (size_t)like->ndim);
    return same ? HGR_OK : hgr__onnx_add_reshape(node, *out, like->shape, like->ndim, out); /* [] beside [1] */
  }
  hgr__onnx_value_t zeros = {.name = "zero point", .onnx_type = onnx_type, .scoped = true};
  HGR_RETURN_IF_ERROR(
      hgr__onnx_tensor_new(node->loader->allocator, onnx_type, like->shape, like->ndim, node->label, &zeros.constant));
  hgr_status_t status = hgr__onnx_runtime_held(node, &zeros, out);
  hgr__onnx_tensor_free(zeros.constant);
  return status;
}

/* The axis and block_size attrs as the op's. */
static hgr_status_t axis_attrs(const hgr__onnx_node_t* node, hgr_attrs_t** out_attrs) {
  int64_t axis, block;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "axis", 1, &axis));
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "block_size", 0, &block));
  HGR_RETURN_IF_ERROR(hgr_attrs_create(out_attrs));
  hgr_status_t status = hgr_attrs_set_int(*out_attrs, "axis", axis);
  if (!status) status = hgr_attrs_set_int(*out_attrs, "block_size", block);
  return status;
}

static hgr_status_t import_dequantize(hgr__onnx_node_t* node) {
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, node->opset >= 21 ? "axis block_size" : "axis"));
  hgr__onnx_value_t *x, *scale;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 1, &scale));
  if (!quantized_type(x->onnx_type, true))
    return HGR__ONNX_UNSUPPORTED(node, "input 0 is %s; hgr dequantizes int8, uint8, int16, uint16 and int32",
                                 hgr__onnx_type_name(x->onnx_type));
  if (!hgr__onnx_type_is_float(scale->onnx_type) || scale->onnx_type == HGR__ONNX_DOUBLE)
    return HGR__ONNX_UNSUPPORTED(node, "input 1 (the scale) is %s; hgr takes float, float16 and bfloat16 scales",
                                 hgr__onnx_type_name(scale->onnx_type));
  hgr_value_t in[3];
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime_held(node, x, &in[0]));
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, scale, &in[1]));
  HGR_RETURN_IF_ERROR(hgr__onnx_zero_point(node, 2, scale, x->onnx_type, &in[2]));
  hgr_attrs_t* attrs = NULL;
  hgr_status_t status = axis_attrs(node, &attrs);
  /* the output is the scale's type (float before opset 19, when only float scales were allowed) */
  return hgr__onnx_finish_op(node, status, attrs, "dequantize", in, 3, 0, scale->onnx_type);
}

double hgr__onnx_dequantized_element(const hgr__onnx_tensor_t* q, uint64_t i, const hgr__onnx_tensor_t* zero,
                                     uint64_t zero_i, const hgr__onnx_tensor_t* scale, uint64_t scale_i) {
  int64_t difference = hgr__onnx_tensor_i64(q, i) - (zero ? hgr__onnx_tensor_i64(zero, zero_i) : 0);
  float product = (float)difference * (scale ? (float)hgr__onnx_tensor_f64(scale, scale_i) : 1.0f);
  return (double)product;
}

hgr_status_t hgr__onnx_dequantized_tensor(const hgr__onnx_node_t* node, const hgr__onnx_tensor_t* q,
                                          const hgr__onnx_tensor_t* scale, const hgr__onnx_tensor_t* zero,
                                          int64_t axis, hgr__onnx_tensor_t** out) {
  uint64_t inner = 1;
  for (int32_t d = (int32_t)axis + 1; d < q->ndim; ++d) inner *= (uint64_t)q->shape[d];
  uint64_t extent = axis >= 0 && axis < q->ndim ? (uint64_t)q->shape[axis] : 1;
  HGR_RETURN_IF_ERROR(hgr__onnx_tensor_new(node->loader->allocator, HGR__ONNX_FLOAT, q->shape, q->ndim, node->label,
                                           out));
  for (uint64_t i = 0; i < q->count; ++i) {
    uint64_t k = inner && extent ? i / inner % extent : 0;
    hgr__onnx_tensor_set_f64(*out, i,
                             hgr__onnx_dequantized_element(q, i, zero, zero && zero->count != 1 ? k : 0, scale,
                                                           scale && scale->count != 1 ? k : 0));
  }
  return HGR_OK;
}

/* A DequantizeLinear of constants (a QDQ model's weights and biases): folded at
 * load, per tensor or per axis, to what the kernel computes, so that no run
 * dequantizes them and a convolution's bias known at load joins its epilogue. An
 * int32 bias takes no more memory as float32; 8- and 16-bit weights do (4x and 2x):
 * the price of not dequantizing them on every run where the kernel that reads them
 * (a convolution) has no 8-bit form. A MatMul or Gemm whose weights are such a fold
 * of 8-bit ones reads the 8-bit ones instead (hgr__onnx_folded_weights,
 * dequantize_matmul), and the float32 fold never reaches the device. Blocks
 * (block_size) and inputs given at run time: UNIMPLEMENTED, the loader imports the
 * node. */
static hgr_status_t fold_dequantize(hgr__onnx_node_t* node) {
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, node->opset >= 21 ? "axis block_size" : "axis"));
  hgr__onnx_value_t *x = hgr__onnx_input(node, 0), *scale = hgr__onnx_input(node, 1), *zero = hgr__onnx_input(node, 2);
  int64_t axis, block;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "axis", 1, &axis));
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "block_size", 0, &block));
  if (!quantized_type(x->onnx_type, true) || scale->onnx_type != HGR__ONNX_FLOAT || block ||
      (zero && zero->onnx_type != x->onnx_type) || !x->constant || !scale->constant || (zero && !zero->constant))
    return HGR_STATUS(HGR_STATUS_UNIMPLEMENTED, "dequantized on the device");
  const hgr__onnx_tensor_t *q = x->constant, *s = scale->constant, *z = zero ? zero->constant : NULL;
  if (axis < 0) axis += q->ndim;
  bool per_axis = s->count != 1;
  if ((z && z->count != s->count) ||
      (per_axis && (s->ndim != 1 || axis < 0 || axis >= q->ndim || s->shape[0] != q->shape[axis])))
    return HGR_STATUS(HGR_STATUS_UNIMPLEMENTED, "the import names what is wrong");
  hgr__onnx_tensor_t* out = NULL;
  HGR_RETURN_IF_ERROR(hgr__onnx_dequantized_tensor(node, q, s, z, axis, &out));
  return hgr__onnx_set_constant(node, 0, out);
}

bool hgr__onnx_folded_weights(const hgr__onnx_node_t* node, const hgr__onnx_value_t* v, hgr__onnx_value_t** out_q,
                              hgr__onnx_value_t** out_scale, hgr__onnx_value_t** out_zero, int64_t* out_axis) {
  const hgr__onnx_loader_t* loader = node->loader;
  if (!v || !v->constant || v->producer < 0 || (size_t)v->producer >= loader->graph->n_node ||
      hgr__onnx_find_local(loader, v->name) != v)
    return false;
  const Onnx__NodeProto* dq = loader->graph->node[v->producer];
  if (strcmp(dq->op_type, "DequantizeLinear") || !hgr__onnx_domain_is_default(dq->domain) || dq->n_input < 2)
    return false;
  hgr__onnx_value_t* q = hgr__onnx_find_value(loader, dq->input[0]);
  if (!q || !q->constant || (q->onnx_type != HGR__ONNX_INT8 && q->onnx_type != HGR__ONNX_UINT8)) return false;
  *out_q = q;
  *out_scale = hgr__onnx_find_value(loader, dq->input[1]);
  *out_zero = dq->n_input > 2 && dq->input[2] && dq->input[2][0] ? hgr__onnx_find_value(loader, dq->input[2]) : NULL;
  const Onnx__AttributeProto* axis = hgr__onnx_proto_attr(dq, "axis");
  *out_axis = axis ? axis->i : 1;
  if (*out_axis < 0) *out_axis += q->ndim;
  return *out_scale != NULL;
}

/* v holds one element, or n along one axis ([N]). */
static bool per_tensor_or_column(const hgr__onnx_value_t* v, int64_t n) {
  return hgr__onnx_element_count(v) == 1 || (v->ndim == 1 && v->shape[0] == n);
}

/* v's builder value in its width, one element as [] (the ops take [] or [1]). */
static hgr_status_t column_param(hgr__onnx_node_t* node, hgr__onnx_value_t* v, bool held, hgr_value_t* out) {
  HGR_RETURN_IF_ERROR(held ? hgr__onnx_runtime_held(node, v, out) : hgr__onnx_runtime(node, v, out));
  return hgr__onnx_element_count(v) == 1 && v->ndim > 1 ? hgr__onnx_add_reshape(node, *out, NULL, 0, out) : HGR_OK;
}

hgr_status_t hgr__onnx_weights_product(hgr__onnx_node_t* node, hgr__onnx_value_t* a, const hgr__onnx_value_t* w,
                                       bool transposed, hgr__onnx_value_t* scale, hgr__onnx_value_t* zero,
                                       hgr__onnx_value_t* bias, hgr__onnx_value_t* out, bool* out_fits) {
  bool eight_bits = w && (w->onnx_type == HGR__ONNX_INT8 || w->onnx_type == HGR__ONNX_UINT8);
  int64_t k = eight_bits && w->ndim == 2 ? w->shape[transposed ? 1 : 0] : 0;
  int64_t n = eight_bits && w->ndim == 2 ? w->shape[transposed ? 0 : 1] : 0;
  *out_fits = eight_bits && w->constant && w->ndim == 2 && a->onnx_type == HGR__ONNX_FLOAT && a->ndim >= 1 &&
              a->shape[a->ndim - 1] == k && n > 0 &&
              (!scale || (scale->onnx_type == HGR__ONNX_FLOAT && per_tensor_or_column(scale, n))) &&
              (!zero || (zero->onnx_type == w->onnx_type && per_tensor_or_column(zero, n))) &&
              (!bias || (bias->onnx_type == HGR__ONNX_FLOAT && bias->ndim >= 1 &&
                         hgr__onnx_element_count(bias) == n && bias->shape[bias->ndim - 1] == n));
  if (!*out_fits) return HGR_OK;
  /* the weights in panels of 32 columns, [ceil(N / 32), K, 32] (the last padded
   * with zeros): each work-item's strip of them is contiguous */
  hgr__onnx_value_t packed = {.name = w->name, .onnx_type = w->onnx_type, .ndim = 3, .shape = {(n + 31) / 32, k, 32},
                              .defined = true, .producer = -1, .consumer = -1, .scoped = true};
  HGR_RETURN_IF_ERROR(hgr__onnx_tensor_new(node->loader->allocator, w->onnx_type, packed.shape, 3, node->label,
                                           &packed.constant));
  const uint8_t* from = w->constant->data;
  uint8_t* to = packed.constant->data;
  for (int64_t l = 0; l < k; ++l)
    for (int64_t j = 0; j < n; ++j) to[(j / 32 * k + l) * 32 + j % 32] = from[transposed ? j * k + l : l * n + j];
  hgr__onnx_value_t unit = {.ndim = 0};
  hgr_value_t in[5];
  hgr_status_t status = hgr__onnx_runtime(node, a, &in[0]);
  if (!status) status = hgr__onnx_runtime_held(node, &packed, &in[1]);
  hgr__onnx_tensor_free(packed.constant);
  HGR_RETURN_IF_ERROR(status);
  if (zero) HGR_RETURN_IF_ERROR(column_param(node, zero, true, &in[2]));
  else HGR_RETURN_IF_ERROR(hgr__onnx_zero_point(node, UINT32_MAX, &unit, w->onnx_type, &in[2]));
  if (scale) {
    HGR_RETURN_IF_ERROR(column_param(node, scale, false, &in[3]));
  } else {
    HGR_RETURN_IF_ERROR(hgr__onnx_add_scalar(node, 1.0, &in[3]));
  }
  if (bias) {
    HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, bias, &in[4]));
    if (bias->ndim != 1) HGR_RETURN_IF_ERROR(hgr__onnx_add_reshape(node, in[4], &n, 1, &in[4]));
  }
  hgr_attrs_t* attrs = NULL;
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  hgr_value_t product;
  status = hgr_attrs_set_int(attrs, "units", n);
  if (!status) status = hgr__onnx_add_op(node, "dequantize_matmul", in, bias ? 5 : 4, attrs, 1, &product);
  hgr_attrs_release(attrs);
  HGR_RETURN_IF_ERROR(status);
  *out = hgr__onnx_runtime_value(node, product, HGR__ONNX_FLOAT);
  return HGR_OK;
}

/* Input i's name as the node lists it ("" when omitted). */
static const char* input_name(const Onnx__NodeProto* proto, uint32_t i) {
  return i < proto->n_input && proto->input[i] ? proto->input[i] : "";
}

/* A QuantizeLinear (node, of float x, to type `to`) whose output only a
 * DequantizeLinear with the same scale and zero point reads, per tensor (the pair
 * ONNX Runtime's QDQ format puts on every activation): the pair as float
 * arithmetic, round(x / scale) held to the type's range less the zero point, times
 * the scale: y = clip(round(x / s), lo - z, hi - z) * s, which is what the pair
 * gives (the zero point a constant, the difference exact). Three elementwise ops the
 * fusion pass merges with their neighbours (a conv's epilogue among them) where
 * quantize and dequantize were two kernels and a tensor of bytes between them.
 * *out_fused says whether the pair was imported (the DequantizeLinear fused). */
static hgr_status_t fake_quantize(hgr__onnx_node_t* node, hgr_value_t x, int32_t to, uint32_t* out_index,
                                  bool* out_fused) {
  *out_fused = false;
  int64_t block;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "block_size", 0, &block));
  if (block) return HGR_OK;
  const Onnx__NodeProto* next = node->output_count ? hgr__onnx_sole_consumer(node, node->outputs[0], out_index) : NULL;
  if (!next || strcmp(next->op_type, "DequantizeLinear") || !hgr__onnx_domain_is_default(next->domain) ||
      strcmp(input_name(next, 1), input_name(node->proto, 1)) ||
      strcmp(input_name(next, 2), input_name(node->proto, 2)) || next->n_output != 1)
    return HGR_OK;
  for (size_t a = 0; a < next->n_attribute; ++a) { /* an axis is moot for one scale; anything else: its import */
    const Onnx__AttributeProto* attr = next->attribute[a];
    const char* name = attr && attr->name ? attr->name : "";
    if (strcmp(name, "axis") && (strcmp(name, "block_size") || attr->i)) return HGR_OK;
  }
  hgr__onnx_value_t* scale = hgr__onnx_input(node, 1);
  hgr__onnx_value_t* zero = hgr__onnx_input(node, 2);
  if (hgr__onnx_element_count(scale) != 1 || scale->onnx_type != HGR__ONNX_FLOAT ||
      (zero && (!zero->constant || zero->constant->count != 1)))
    return HGR_OK; /* the pair as two ops, whose checks name what is wrong */
  double z = zero ? (double)hgr__onnx_tensor_i64(zero->constant, 0) : 0.0;
  double lowest = to == HGR__ONNX_INT8 ? -128 : to == HGR__ONNX_INT16 ? -32768 : 0;
  double highest = to == HGR__ONNX_INT8 ? 127 : to == HGR__ONNX_UINT8 ? 255 : to == HGR__ONNX_INT16 ? 32767 : 65535;
  hgr_value_t s, v;
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, scale, &s));
  if (scale->ndim) { /* [1]: a scalar, for the ops to broadcast */
    static const int64_t none[1] = {0};
    HGR_RETURN_IF_ERROR(hgr__onnx_add_reshape(node, s, none, 0, &s));
  }
  HGR_RETURN_IF_ERROR(hgr__onnx_add_binary(node, "divide", x, s, &v));
  HGR_RETURN_IF_ERROR(hgr__onnx_add_unary(node, "round", v, &v));
  hgr_attrs_t* attrs = NULL;
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  hgr_status_t status = hgr_attrs_set_float(attrs, "a_min", lowest - z);
  if (!status) status = hgr_attrs_set_float(attrs, "a_max", highest - z);
  if (!status) status = hgr__onnx_add_op(node, "clip", &v, 1, attrs, 1, &v);
  hgr_attrs_release(attrs);
  HGR_RETURN_IF_ERROR(status);
  HGR_RETURN_IF_ERROR(hgr__onnx_add_binary(node, "multiply", v, s, &v));
  hgr__onnx_value_t* in = hgr__onnx_input(node, 0);
  hgr__onnx_value_t result = {.onnx_type = HGR__ONNX_FLOAT, .has_value = true, .value = v, .ndim = in->ndim};
  memcpy(result.shape, in->shape, sizeof(result.shape));
  HGR_RETURN_IF_ERROR(hgr__onnx_fuse_into(node, *out_index, &result));
  *out_fused = true;
  return HGR_OK;
}

static hgr_status_t import_quantize(hgr__onnx_node_t* node) {
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, node->opset >= 21   ? "axis saturate block_size output_dtype"
                                                  : node->opset >= 19 ? "axis saturate"
                                                                      : "axis"));
  hgr__onnx_value_t *x, *scale;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 1, &scale));
  if ((!hgr__onnx_type_is_float(x->onnx_type) && x->onnx_type != HGR__ONNX_INT32) ||
      x->onnx_type == HGR__ONNX_DOUBLE)
    return HGR__ONNX_UNSUPPORTED(node, "input 0 is %s; hgr quantizes float, float16, bfloat16 and int32",
                                 hgr__onnx_type_name(x->onnx_type));
  if (!hgr__onnx_type_is_float(scale->onnx_type) || scale->onnx_type == HGR__ONNX_DOUBLE)
    return HGR__ONNX_UNSUPPORTED(node, "input 1 (the scale) is %s; hgr takes float, float16 and bfloat16 scales",
                                 hgr__onnx_type_name(scale->onnx_type));
  hgr__onnx_value_t* given = hgr__onnx_input(node, 2);
  int64_t to;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "output_dtype", HGR__ONNX_UNDEFINED, &to));
  if (given && to != HGR__ONNX_UNDEFINED && to != given->onnx_type)
    return HGR__ONNX_INVALID(node, "attr 'output_dtype' = %s, but the zero point is %s",
                             hgr__onnx_type_name((int32_t)to), hgr__onnx_type_name(given->onnx_type));
  if (given) to = given->onnx_type;
  if (to == HGR__ONNX_UNDEFINED) to = HGR__ONNX_UINT8;
  if (!quantized_type((int32_t)to, false))
    return HGR__ONNX_UNSUPPORTED(node, "quantizing to %s; hgr quantizes to int8, uint8, int16 and uint16",
                                 hgr__onnx_type_name((int32_t)to));
  hgr_value_t in[3];
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, x, &in[0]));
  uint32_t pair;
  bool fused = false;
  if (x->onnx_type == HGR__ONNX_FLOAT) HGR_RETURN_IF_ERROR(fake_quantize(node, in[0], (int32_t)to, &pair, &fused));
  if (fused) return HGR_OK;
  if (x->onnx_type == HGR__ONNX_INT32)
    HGR_RETURN_IF_ERROR(hgr__onnx_add_cast(node, in[0], (hgr_dtype_t){HGR_DTYPE_FLOAT, 32, 1}, &in[0]));
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, scale, &in[1]));
  HGR_RETURN_IF_ERROR(hgr__onnx_zero_point(node, 2, scale, (int32_t)to, &in[2]));
  hgr_attrs_t* attrs = NULL;
  hgr_status_t status = axis_attrs(node, &attrs);
  return hgr__onnx_finish_op(node, status, attrs, "quantize", in, 3, 0, (int32_t)to);
}

/* ONNX's formulas with qmin 0 and qmax 255: the range of x widened to hold 0, its
 * 255th as the scale, the zero point round(0 - min / scale) held in [0, 255]
 * (quantize_params, one kernel), and x quantized with them (x / scale rounded half
 * to even, plus the zero point, saturated). */
static hgr_status_t import_dynamic_quantize(hgr__onnx_node_t* node) {
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, ""));
  hgr__onnx_value_t* x;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  if (x->onnx_type != HGR__ONNX_FLOAT)
    return HGR__ONNX_UNSUPPORTED(node, "input 0 is %s; the op takes float", hgr__onnx_type_name(x->onnx_type));
  hgr_value_t in, params[2], y;
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, x, &in));
  HGR_RETURN_IF_ERROR(hgr__onnx_add_op(node, "quantize_params", &in, 1, NULL, 2, params));
  hgr_value_t quantize_in[3] = {in, params[0], params[1]};
  HGR_RETURN_IF_ERROR(hgr__onnx_add_op(node, "quantize", quantize_in, 3, NULL, 1, &y));
  HGR_RETURN_IF_ERROR(hgr__onnx_set_runtime(node, 0, y, HGR__ONNX_UINT8));
  HGR_RETURN_IF_ERROR(hgr__onnx_set_runtime(node, 1, params[0], HGR__ONNX_FLOAT));
  return hgr__onnx_set_runtime(node, 2, params[1], HGR__ONNX_UINT8);
}

const hgr__onnx_op_t hgr__onnx_ops_quant[] = {
    {"DequantizeLinear", import_dequantize, fold_dequantize, 2},
    {"QuantizeLinear", import_quantize, NULL, 2},
    {"DynamicQuantizeLinear", import_dynamic_quantize, NULL, 1},
    {.name = NULL},
};
