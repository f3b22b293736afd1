/* ONNX Runtime's contrib ops (domain com.microsoft) that its transformer optimizer
 * writes, with the semantics of ONNX Runtime's contrib-op documentation, each
 * composed of hgr's ops so that the graph passes fuse them with their neighbours:
 *
 *   Gelu(X)                         gelu (the erf form)
 *   FastGelu(X, bias?)              gelu_tanh(X + bias)
 *   BiasGelu(A, B)                  gelu(A + B)
 *   QuickGelu(X; alpha = 1.702)     X * sigmoid(alpha * X)
 *   BiasAdd(X, bias, skip)          X + bias + skip
 *   SkipLayerNormalization(input, skip, gamma, beta?, bias?; epsilon = 1e-12)
 *       sum = input (+ bias) + skip; output = layer_norm(sum) * gamma (+ beta) over
 *       the last axis; outputs output and input_skip_bias_sum (3)
 *   SkipSimplifiedLayerNormalization(input, skip, gamma, bias?; epsilon = 1e-12)
 *       sum as above; output = sum / sqrt(mean(sum^2) + epsilon) * gamma
 *   EmbedLayerNormalization(input_ids, segment_ids?, word_embedding, position_embedding,
 *                           segment_embedding?, gamma, beta, mask?, position_ids?;
 *                           epsilon = 1e-12)
 *       sum = word[input_ids] + position[position_ids, or 0 .. sequence - 1]
 *       (+ segment[segment_ids]) by `take`s and `add`s; outputs layer_norm(sum) *
 *       gamma + beta, mask_index (per batch, how many elements of the mask are 1,
 *       as ONNX Runtime counts; zeros without a mask) and embedding_sum (the sum)
 *
 * Biases, gamma and beta are 1-D over the last axis (hidden); skip is input's shape
 * or broadcasts to it. The training-only outputs mean and inv_std_var are refused by
 * name when something uses them. Ids outside an embedding table are clipped to it
 * (ONNX Runtime fails the run). The attention ops (Attention, MultiHeadAttention,
 * RotaryEmbedding) are in onnx_import_attention.c, FusedMatMul in onnx_import_matmul.c. Every other op of the domain is
 * refused by the loader (onnx_load.c), naming op and domain. */
#include <string.h>

#include "onnx_internal.h"

/* Input i (present) must be float, as the node's input 0. */
static hgr_status_t check_float(const hgr__onnx_node_t* node, uint32_t i) {
  const hgr__onnx_value_t* v = node->inputs[i];
  if (!hgr__onnx_type_is_float(v->onnx_type))
    return HGR__ONNX_UNSUPPORTED(node, "input %u '%s' is %s; hgr computes %s on float", i, v->name,
                                 hgr__onnx_type_name(v->onnx_type), node->proto->op_type);
  return HGR_OK;
}

/* Checks the node's input count (at most max) and attrs, and that input 0 is float
 * and at least 1-D. */
static hgr_status_t check_node(const hgr__onnx_node_t* node, uint32_t max_inputs, const char* attrs) {
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, attrs));
  if (node->input_count > max_inputs)
    return HGR__ONNX_INVALID(node, "takes at most %u inputs, the node has %u", max_inputs, node->input_count);
  HGR_RETURN_IF_ERROR(check_float(node, 0));
  if (node->inputs[0]->ndim < 1) return HGR__ONNX_INVALID(node, "input 0 '%s' is a scalar", node->inputs[0]->name);
  return HGR_OK;
}

/* The builder value of input i (NULL *out_present when omitted and optional), which
 * must be a float [hidden] vector: a bias, gamma or beta over the last axis. */
static hgr_status_t vector_input(hgr__onnx_node_t* node, uint32_t i, const char* what, int64_t hidden,
                                 hgr_value_t* out_value, bool* out_present) {
  hgr__onnx_value_t* v = hgr__onnx_input(node, i);
  *out_present = v != NULL;
  if (!v) return HGR_OK;
  HGR_RETURN_IF_ERROR(check_float(node, i));
  if (v->ndim != 1 || v->shape[0] != hidden)
    return HGR__ONNX_INVALID(node, "input %u '%s' (%s) must be 1-D of the last extent %lld of input 0, but it has %d "
                             "dimensions%s%lld", i, v->name, what, (long long)hidden, (int)v->ndim,
                             v->ndim == 1 ? " and extent " : "", v->ndim == 1 ? (long long)v->shape[0] : 0LL);
  return hgr__onnx_runtime(node, v, out_value);
}

/* The builder value of input i (required), which must be float and broadcast to
 * input 0's shape without changing it (a residual: [batch, sequence, hidden], or
 * [1, sequence, hidden], or [sequence, hidden]). */
static hgr_status_t residual_input(hgr__onnx_node_t* node, uint32_t i, const char* what, hgr_value_t* out_value) {
  const hgr__onnx_value_t* x = node->inputs[0];
  hgr__onnx_value_t* v = node->inputs[i];
  HGR_RETURN_IF_ERROR(check_float(node, i));
  int64_t shape[HGR_MAX_DIMS];
  int32_t ndim;
  HGR_RETURN_IF_ERROR(hgr__onnx_broadcast(node, x->shape, x->ndim, v->shape, v->ndim, shape, &ndim));
  bool same = ndim == x->ndim;
  for (int32_t d = 0; same && d < ndim; ++d) same = shape[d] == x->shape[d];
  if (!same) return HGR__ONNX_INVALID(node, "input %u '%s' (%s) does not broadcast to the shape of input 0", i, v->name, what);
  return hgr__onnx_runtime(node, v, out_value);
}

static int64_t last_extent(const hgr__onnx_node_t* node) { return node->inputs[0]->shape[node->inputs[0]->ndim - 1]; }

/* ---- the GELUs, BiasAdd ----------------------------------------------------------------- */

static hgr_status_t import_gelu(hgr__onnx_node_t* node) {
  HGR_RETURN_IF_ERROR(check_node(node, 1, ""));
  hgr_value_t x;
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, node->inputs[0], &x));
  return hgr__onnx_finish_op(node, HGR_OK, NULL, "gelu", &x, 1, 0, node->inputs[0]->onnx_type);
}

/* FastGelu (bias optional) and BiasGelu (bias required): gelu_tanh or gelu of X + bias. */
static hgr_status_t import_bias_gelu(hgr__onnx_node_t* node) {
  bool fast = !strcmp(node->proto->op_type, "FastGelu");
  HGR_RETURN_IF_ERROR(check_node(node, 2, ""));
  hgr_value_t x, bias;
  bool has_bias;
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, node->inputs[0], &x));
  HGR_RETURN_IF_ERROR(vector_input(node, 1, "bias", last_extent(node), &bias, &has_bias));
  if (has_bias) HGR_RETURN_IF_ERROR(hgr__onnx_add_binary(node, "add", x, bias, &x));
  return hgr__onnx_finish_op(node, HGR_OK, NULL, fast ? "gelu_tanh" : "gelu", &x, 1, 0, node->inputs[0]->onnx_type);
}

static hgr_status_t import_quick_gelu(hgr__onnx_node_t* node) {
  HGR_RETURN_IF_ERROR(check_node(node, 1, "alpha"));
  double alpha;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_float(node, "alpha", 1.702, &alpha));
  hgr_value_t x, scaled, gate, y;
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, node->inputs[0], &x));
  scaled = x;
  if (alpha != 1.0) {
    hgr_value_t factor;
    HGR_RETURN_IF_ERROR(hgr__onnx_add_scalar(node, alpha, &factor));
    HGR_RETURN_IF_ERROR(hgr__onnx_add_binary(node, "multiply", x, factor, &scaled));
  }
  HGR_RETURN_IF_ERROR(hgr__onnx_add_unary(node, "sigmoid", scaled, &gate));
  HGR_RETURN_IF_ERROR(hgr__onnx_add_binary(node, "multiply", x, gate, &y));
  return hgr__onnx_set_runtime(node, 0, y, node->inputs[0]->onnx_type);
}

static hgr_status_t import_bias_add(hgr__onnx_node_t* node) {
  HGR_RETURN_IF_ERROR(check_node(node, 3, ""));
  hgr_value_t x, bias, skip;
  bool has_bias;
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, node->inputs[0], &x));
  HGR_RETURN_IF_ERROR(vector_input(node, 1, "bias", last_extent(node), &bias, &has_bias));
  HGR_RETURN_IF_ERROR(residual_input(node, 2, "skip", &skip));
  HGR_RETURN_IF_ERROR(hgr__onnx_add_binary(node, "add", x, bias, &x));
  HGR_RETURN_IF_ERROR(hgr__onnx_add_binary(node, "add", x, skip, &x));
  return hgr__onnx_set_runtime(node, 0, x, node->inputs[0]->onnx_type);
}

/* ---- SkipLayerNormalization, SkipSimplifiedLayerNormalization ------------------------------ */

/* Refuses outputs 1 (mean) and 2 (inv_std_var) when something uses them: ONNX
 * Runtime writes them for training only. */
static hgr_status_t refuse_statistics(const hgr__onnx_node_t* node) {
  static const char* const names[] = {"mean", "inv_std_var"};
  for (uint32_t k = 1; k <= 2 && k < node->output_count; ++k)
    if (node->outputs[k] && node->outputs[k]->uses)
      return HGR__ONNX_UNSUPPORTED(node, "output %u '%s' (%s) is used; hgr computes only outputs 0 (output) and 3 "
                                   "(input_skip_bias_sum)", k, node->outputs[k]->name, names[k - 1]);
  return HGR_OK;
}

/* layer_norm of sum over the last axis, times gamma plus beta (NULL: none, which
 * layer_norm takes with center off). */
static hgr_status_t layer_norm_last(hgr__onnx_node_t* node, hgr_value_t sum, hgr_value_t gamma,
                                    const hgr_value_t* beta, double epsilon, hgr_value_t* out_value) {
  hgr_value_t in[3] = {sum, gamma, beta ? *beta : gamma}; /* not read when center is 0 */
  hgr_attrs_t* attrs = NULL;
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  hgr_status_t status = hgr_attrs_set_int(attrs, "axis", -1);
  if (!status) status = hgr_attrs_set_float(attrs, "epsilon", epsilon);
  if (!status && !beta) status = hgr_attrs_set_int(attrs, "center", 0);
  if (!status) status = hgr__onnx_add_op(node, "layer_norm", in, 3, attrs, 1, out_value);
  hgr_attrs_release(attrs);
  return status;
}

static hgr_status_t import_skip_layer_norm(hgr__onnx_node_t* node) {
  bool simplified = !strcmp(node->proto->op_type, "SkipSimplifiedLayerNormalization");
  HGR_RETURN_IF_ERROR(check_node(node, simplified ? 4 : 5, "epsilon"));
  if (node->output_count > 4)
    return HGR__ONNX_INVALID(node, "has at most 4 outputs, the node declares %u", node->output_count);
  HGR_RETURN_IF_ERROR(refuse_statistics(node));
  double epsilon;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_float(node, "epsilon", 1e-12, &epsilon));
  if (!(epsilon >= 0)) return HGR__ONNX_INVALID(node, "attr 'epsilon' = %g must be >= 0", epsilon);
  const hgr__onnx_value_t* input = node->inputs[0];
  int64_t hidden = last_extent(node);
  hgr_value_t sum, skip, gamma, beta, bias;
  bool has_gamma, has_beta = false, has_bias; /* gamma is required: has_gamma is true */
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, node->inputs[0], &sum));
  HGR_RETURN_IF_ERROR(residual_input(node, 1, "skip", &skip));
  HGR_RETURN_IF_ERROR(vector_input(node, 2, "gamma", hidden, &gamma, &has_gamma));
  (void)has_gamma;
  if (!simplified) HGR_RETURN_IF_ERROR(vector_input(node, 3, "beta", hidden, &beta, &has_beta));
  HGR_RETURN_IF_ERROR(vector_input(node, simplified ? 3 : 4, "bias", hidden, &bias, &has_bias));
  /* the bias first: a MatMul's output plus the bias is that GEMM's epilogue, and the
   * residual then the layer norm's skip input (hgr/passes.h) */
  if (has_bias) HGR_RETURN_IF_ERROR(hgr__onnx_add_binary(node, "add", sum, bias, &sum));
  HGR_RETURN_IF_ERROR(hgr__onnx_add_binary(node, "add", sum, skip, &sum));
  hgr_value_t out;
  if (!simplified) {
    HGR_RETURN_IF_ERROR(layer_norm_last(node, sum, gamma, has_beta ? &beta : NULL, epsilon, &out));
  } else { /* root mean square: sum * rsqrt(mean(sum^2) + epsilon) * gamma */
    hgr_value_t square, eps;
    hgr_attrs_t* attrs = NULL;
    HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
    hgr_status_t status = hgr_attrs_set_int(attrs, "axis", -1);
    if (!status) status = hgr_attrs_set_int(attrs, "keepdims", 1);
    if (!status) status = hgr__onnx_add_binary(node, "multiply", sum, sum, &square);
    if (!status) status = hgr__onnx_add_op(node, "mean", &square, 1, attrs, 1, &square);
    if (!status) status = hgr__onnx_add_scalar(node, epsilon, &eps);
    if (!status) status = hgr__onnx_add_binary(node, "add", square, eps, &square);
    if (!status) status = hgr__onnx_add_unary(node, "rsqrt", square, &square);
    if (!status) status = hgr__onnx_add_binary(node, "multiply", sum, square, &out);
    if (!status) status = hgr__onnx_add_binary(node, "multiply", out, gamma, &out);
    hgr_attrs_release(attrs);
    HGR_RETURN_IF_ERROR(status);
  }
  HGR_RETURN_IF_ERROR(hgr__onnx_set_runtime(node, 0, out, input->onnx_type));
  if (node->output_count > 3) HGR_RETURN_IF_ERROR(hgr__onnx_set_runtime(node, 3, sum, input->onnx_type));
  return HGR_OK;
}

/* ---- EmbedLayerNormalization ----------------------------------------------------------------- */

/* Input i (present): an int32 (or int64) [batch, sequence] tensor of ids (shape;
 * [1, sequence] too for position_ids, broadcast over the batch). */
static hgr_status_t ids_input(hgr__onnx_node_t* node, uint32_t i, const char* what, const int64_t* shape,
                              bool batch_of_one, hgr_value_t* out_value) {
  hgr__onnx_value_t* v = node->inputs[i];
  bool fits = v->ndim == 2 && v->shape[1] == shape[1] &&
              (v->shape[0] == shape[0] || (batch_of_one && v->shape[0] == 1));
  if ((v->onnx_type != HGR__ONNX_INT32 && v->onnx_type != HGR__ONNX_INT64) || !fits)
    return HGR__ONNX_INVALID(node, "input %u '%s' (%s) must be int32 [%lld, %lld]%s", i, v->name, what,
                             (long long)shape[0], (long long)shape[1], batch_of_one ? " or [1, sequence]" : "");
  return hgr__onnx_runtime(node, v, out_value);
}

/* The rows of table (input i, float [rows, hidden]) at ids: take along axis 0. */
static hgr_status_t embed(hgr__onnx_node_t* node, uint32_t i, const char* what, int64_t hidden, hgr_value_t ids,
                          hgr_value_t* out_value) {
  hgr__onnx_value_t* table = node->inputs[i];
  HGR_RETURN_IF_ERROR(check_float(node, i));
  if (table->ndim != 2 || table->shape[1] != hidden)
    return HGR__ONNX_INVALID(node, "input %u '%s' (%s) must be [rows, %lld] (the word embedding's width)", i,
                             table->name, what, (long long)hidden);
  hgr_value_t in[2];
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, table, &in[0]));
  in[1] = ids;
  hgr_attrs_t* attrs = NULL;
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  hgr_status_t status = hgr_attrs_set_int(attrs, "axis", 0);
  if (!status) status = hgr_attrs_set_string(attrs, "mode", "clip");
  if (!status) status = hgr__onnx_add_op(node, "take", in, 2, attrs, 1, out_value);
  hgr_attrs_release(attrs);
  return status;
}

/* mask_index: per batch, how many elements of the mask are 1 (ONNX Runtime counts
 * them); zeros without a mask. */
static hgr_status_t mask_index(hgr__onnx_node_t* node, const int64_t* shape) {
  if (node->output_count < 2 || !node->outputs[1]) return HGR_OK;
  if (!hgr__onnx_input(node, 7)) {
    hgr__onnx_tensor_t* zeros = NULL;
    HGR_RETURN_IF_ERROR(hgr__onnx_tensor_new(node->loader->allocator, HGR__ONNX_INT32, shape, 1, node->label, &zeros));
    return hgr__onnx_set_constant(node, 1, zeros);
  }
  hgr_value_t mask, one, count;
  HGR_RETURN_IF_ERROR(ids_input(node, 7, "mask", shape, false, &mask));
  hgr__onnx_tensor_t* t = NULL;
  HGR_RETURN_IF_ERROR(hgr__onnx_tensor_new(node->loader->allocator, HGR__ONNX_INT32, NULL, 0, node->label, &t));
  *(int32_t*)t->data = 1;
  hgr_status_t status = hgr__onnx_add_constant(node, NULL, t, &one);
  hgr__onnx_tensor_free(t);
  HGR_RETURN_IF_ERROR(status);
  HGR_RETURN_IF_ERROR(hgr__onnx_add_binary(node, "equal", mask, one, &mask));
  hgr_attrs_t* attrs = NULL;
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  status = hgr_attrs_set_string(attrs, "dtype", "int32");
  if (!status) status = hgr__onnx_add_op(node, "cast", &mask, 1, attrs, 1, &count);
  hgr_attrs_release(attrs);
  HGR_RETURN_IF_ERROR(status);
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  status = hgr_attrs_set_int(attrs, "axis", 1);
  if (!status) status = hgr_attrs_set_int(attrs, "keepdims", 0);
  return hgr__onnx_finish_op(node, status, attrs, "sum", &count, 1, 1, HGR__ONNX_INT32);
}

/* output = layer_norm(word[input_ids] + position[position_ids or 0 ..] (+
 * segment[segment_ids])) * gamma + beta; mask_index; embedding_sum (output 2). */
static hgr_status_t import_embed_layer_norm(hgr__onnx_node_t* node) {
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, "epsilon mask_index_type"));
  if (node->input_count > 9)
    return HGR__ONNX_INVALID(node, "takes at most 9 inputs, the node has %u", node->input_count);
  if (node->output_count > 3)
    return HGR__ONNX_INVALID(node, "has at most 3 outputs, the node declares %u", node->output_count);
  double epsilon;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_float(node, "epsilon", 1e-12, &epsilon));
  if (!(epsilon >= 0)) return HGR__ONNX_INVALID(node, "attr 'epsilon' = %g must be >= 0", epsilon);
  hgr__onnx_value_t* required;
  for (uint32_t i = 2; i <= 6; ++i) /* segment_embedding (4) is optional */
    if (i != 4) HGR_RETURN_IF_ERROR(hgr__onnx_required(node, i, &required));
  const hgr__onnx_value_t* ids = node->inputs[0];
  if (ids->ndim != 2) return HGR__ONNX_INVALID(node, "input 0 '%s' (input_ids) must be [batch, sequence]", ids->name);
  bool has_segment = hgr__onnx_input(node, 1) != NULL;
  if (has_segment != (hgr__onnx_input(node, 4) != NULL))
    return HGR__ONNX_INVALID(node, "inputs 1 (segment_ids) and 4 (segment_embedding) go together; the node gives one");
  int64_t shape[2] = {ids->shape[0], ids->shape[1]};
  int64_t hidden = node->inputs[2]->ndim == 2 ? node->inputs[2]->shape[1] : 0;
  hgr_value_t index, sum, part, gamma, beta;
  bool present;
  HGR_RETURN_IF_ERROR(ids_input(node, 0, "input_ids", shape, false, &index));
  HGR_RETURN_IF_ERROR(embed(node, 2, "word_embedding", hidden, index, &sum));
  if (hgr__onnx_input(node, 8)) {
    HGR_RETURN_IF_ERROR(ids_input(node, 8, "position_ids", shape, true, &index));
  } else { /* positions 0 .. sequence - 1 */
    hgr__onnx_tensor_t* positions = NULL;
    HGR_RETURN_IF_ERROR(hgr__onnx_tensor_new(node->loader->allocator, HGR__ONNX_INT32, &shape[1], 1, node->label,
                                             &positions));
    for (int64_t s = 0; s < shape[1]; ++s) ((int32_t*)positions->data)[s] = (int32_t)s;
    hgr_status_t status = hgr__onnx_add_constant(node, NULL, positions, &index);
    hgr__onnx_tensor_free(positions);
    HGR_RETURN_IF_ERROR(status);
  }
  HGR_RETURN_IF_ERROR(embed(node, 3, "position_embedding", hidden, index, &part));
  HGR_RETURN_IF_ERROR(hgr__onnx_add_binary(node, "add", sum, part, &sum));
  if (has_segment) {
    HGR_RETURN_IF_ERROR(ids_input(node, 1, "segment_ids", shape, false, &index));
    HGR_RETURN_IF_ERROR(embed(node, 4, "segment_embedding", hidden, index, &part));
    HGR_RETURN_IF_ERROR(hgr__onnx_add_binary(node, "add", sum, part, &sum));
  }
  HGR_RETURN_IF_ERROR(vector_input(node, 5, "gamma", hidden, &gamma, &present));
  HGR_RETURN_IF_ERROR(vector_input(node, 6, "beta", hidden, &beta, &present));
  hgr_value_t out;
  HGR_RETURN_IF_ERROR(layer_norm_last(node, sum, gamma, &beta, epsilon, &out));
  HGR_RETURN_IF_ERROR(hgr__onnx_set_runtime(node, 0, out, node->inputs[2]->onnx_type));
  HGR_RETURN_IF_ERROR(mask_index(node, shape));
  if (node->output_count > 2) HGR_RETURN_IF_ERROR(hgr__onnx_set_runtime(node, 2, sum, node->inputs[2]->onnx_type));
  return HGR_OK;
}

const hgr__onnx_op_t hgr__onnx_ops_contrib[] = {
    {"Gelu", import_gelu, NULL, 1},
    {"FastGelu", import_bias_gelu, NULL, 1},
    {"BiasGelu", import_bias_gelu, NULL, 2},
    {"QuickGelu", import_quick_gelu, NULL, 1},
    {"BiasAdd", import_bias_add, NULL, 3},
    {"SkipLayerNormalization", import_skip_layer_norm, NULL, 3},
    {"SkipSimplifiedLayerNormalization", import_skip_layer_norm, NULL, 3},
    {"EmbedLayerNormalization", import_embed_layer_norm, NULL, 1},
    {.name = NULL},
};
