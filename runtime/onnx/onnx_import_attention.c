/* ONNX Runtime's attention contrib ops (domain com.microsoft), with the semantics of
 * ONNX Runtime's contrib-op documentation, composed of hgr's ops:
 *
 *   Attention(input, weights, bias?, mask_index?, past?, attention_bias?;
 *             num_heads, qkv_hidden_sizes?, unidirectional = 0, scale = 1/sqrt(head size),
 *             mask_filter_value = -10000)
 *       Q, K, V = split(matmul(input, weights) + bias) by qkv_hidden_sizes (equal thirds
 *       by default); then the attention below; output [batch, sequence, v_hidden]
 *   MultiHeadAttention(query, key, value, bias?, key_padding_mask?, attention_bias?;
 *                      num_heads, unidirectional = 0, scale, mask_filter_value)
 *       Q, K, V = query, key, value (+ the thirds of bias), each [batch, sequence,
 *       heads * head size]; the attention below
 *
 * The attention, per head, is one chain that the attention fusion pass recognizes:
 *
 *   scores = batch_matmul(Q [B*N, S, D], Kᵀ [B*N, D, T])
 *            reshaped to [B, N, S, T]; `multiply` by the scale; `add` of the additive
 *            float mask (when there is one); `softmax` over the last axis;
 *   output = batch_matmul(scores reshaped to [B*N, S, T], V [B*N, T, Dv])
 *            then [B, S, N*Dv] by reshape, transpose, reshape.
 *
 * The additive mask sums what applies: the key padding mask (mask_index,
 * key_padding_mask) as [B, 1, 1, T] of 0 and mask_filter_value, from either a
 * [B, T] mask (an element > 0 keeps its key) or [B] lengths (keys at or after the
 * length are masked: right padding); the causal mask of unidirectional, a constant
 * [1, 1, S, T] of 0 and the lowest float (key t is masked for query s when t > s),
 * as ONNX Runtime's CPU kernels write them; and attention_bias, a float
 * [B or 1, N or 1, S, T] added as it is.
 *
 *   RotaryEmbedding(input, position_ids, cos_cache, sin_cache; interleaved = 0, num_heads)
 *       input [B, S, N*D] or [B, N, S, D]; cos and sin = the caches' rows [max position,
 *       D/2] at position_ids [B, S] (or first + 0 .. S - 1 for [1]) by `take`; the
 *       halves (x1, x2) of each head, or its pairs when interleaved, become
 *       (x1 cos - x2 sin, x2 cos + x1 sin) by `strided_slice`s, elementwise ops and a
 *       `concatenate`.
 *
 * Refused by name: a KV cache (past, past_key, past_value, past_sequence_length,
 * cache_indirection, the present and qk outputs when used), rotary embedding inside
 * Attention (do_rotary, rotary_embedding_dim, past_present_share_buffer other than
 * 0), packed Q/K/V or K/V for MultiHeadAttention (a missing key, a 4-D or 5-D key),
 * the other mask forms ([2 B] ends and starts, 3-D and 4-D masks), and for
 * RotaryEmbedding a rotary dimension short of the head size, scale other than 1 and
 * packed batching. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "onnx_internal.h"

/* What one attention node computes: B, S, T, N and the head sizes. */
typedef struct attention_t {
  int64_t batch, q_seq, kv_seq, heads, qk_size, v_size;
  double scale, filter; /* the scores' factor; mask_filter_value */
  bool causal;
} attention_t;

/* ---- small builder steps ----------------------------------------------------------------- */

static hgr_status_t add_with_ints(hgr__onnx_node_t* node, const char* op, const hgr_value_t* inputs, uint32_t count,
                                  const char* key, const int64_t* values, size_t value_count, hgr_value_t* out_value) {
  hgr_attrs_t* attrs = NULL;
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  hgr_status_t status = hgr_attrs_set_ints(attrs, key, values, value_count);
  if (!status) status = hgr__onnx_add_op(node, op, inputs, count, attrs, 1, out_value);
  hgr_attrs_release(attrs);
  return status;
}

/* x[..., begin:end] of x shaped shape (ndim). */
static hgr_status_t slice_last(hgr__onnx_node_t* node, hgr_value_t x, const int64_t* shape, int32_t ndim,
                               int64_t begin, int64_t end, hgr_value_t* out_value) {
  int64_t begins[HGR_MAX_DIMS] = {0}, ends[HGR_MAX_DIMS], strides[HGR_MAX_DIMS];
  for (int32_t d = 0; d < ndim; ++d) {
    ends[d] = shape[d];
    strides[d] = 1;
  }
  begins[ndim - 1] = begin;
  ends[ndim - 1] = end;
  hgr_attrs_t* attrs = NULL;
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  hgr_status_t status = hgr_attrs_set_ints(attrs, "begin", begins, (size_t)ndim);
  if (!status) status = hgr_attrs_set_ints(attrs, "end", ends, (size_t)ndim);
  if (!status) status = hgr_attrs_set_ints(attrs, "strides", strides, (size_t)ndim);
  if (!status) status = hgr__onnx_add_op(node, "strided_slice", &x, 1, attrs, 1, out_value);
  hgr_attrs_release(attrs);
  return status;
}

static hgr_status_t batch_matmul(hgr__onnx_node_t* node, hgr_value_t a, hgr_value_t b, bool transpose_b,
                                 hgr_value_t* out_value) {
  hgr_attrs_t* attrs = NULL;
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  hgr_value_t pair[2] = {a, b};
  hgr_status_t status = hgr_attrs_set_int(attrs, "transpose_b", transpose_b);
  if (!status) status = hgr__onnx_add_op(node, "batch_matmul", pair, 2, attrs, 1, out_value);
  hgr_attrs_release(attrs);
  return status;
}

/* An int32 constant shaped shape (ndim) holding 0, 1, ... in order. */
static hgr_status_t add_range(hgr__onnx_node_t* node, const int64_t* shape, int32_t ndim, hgr_value_t* out_value) {
  hgr__onnx_tensor_t* range = NULL;
  HGR_RETURN_IF_ERROR(hgr__onnx_tensor_new(node->loader->allocator, HGR__ONNX_INT32, shape, ndim, node->label, &range));
  for (uint64_t i = 0; i < range->count; ++i) ((int32_t*)range->data)[i] = (int32_t)i;
  hgr_status_t status = hgr__onnx_add_constant(node, NULL, range, out_value);
  hgr__onnx_tensor_free(range);
  return status;
}

/* [B, L, N*D] to [B*N, L, D]: heads first; with keys, to Kᵀ [B*N, D, L] (the same one
 * transpose), the layout the attention kernels that take several query rows per
 * work-item load 16 keys at a time from (docs/ops.md, "Attention"). */
static hgr_status_t split_heads(hgr__onnx_node_t* node, hgr_value_t x, int64_t batch, int64_t length, int64_t heads,
                                int64_t size, bool keys, hgr_value_t* out_value) {
  static const int64_t swap[4] = {0, 2, 1, 3}, keys_last[4] = {0, 2, 3, 1};
  int64_t four[4] = {batch, length, heads, size}, three[3] = {batch * heads, length, size};
  if (keys) {
    three[1] = size;
    three[2] = length;
  }
  HGR_RETURN_IF_ERROR(hgr__onnx_add_reshape(node, x, four, 4, &x));
  HGR_RETURN_IF_ERROR(add_with_ints(node, "transpose", &x, 1, "axes", keys ? keys_last : swap, 4, &x));
  return hgr__onnx_add_reshape(node, x, three, 3, out_value);
}

/* ---- the attention chain ------------------------------------------------------------------ */

/* q [B*N, S, D], kᵀ [B*N, D, T], v [B*N, T, Dv]; mask (NULL: none) an additive float
 * mask broadcasting to [B, N, S, T]. Output [B, S, N*Dv]. */
static hgr_status_t attend(hgr__onnx_node_t* node, const attention_t* a, hgr_value_t q, hgr_value_t k, hgr_value_t v,
                           const hgr_value_t* mask, hgr_value_t* out_value) {
  static const int64_t swap[4] = {0, 2, 1, 3};
  int64_t scores4[4] = {a->batch, a->heads, a->q_seq, a->kv_seq};
  int64_t scores3[3] = {a->batch * a->heads, a->q_seq, a->kv_seq};
  int64_t heads4[4] = {a->batch, a->heads, a->q_seq, a->v_size};
  int64_t merged[3] = {a->batch, a->q_seq, a->heads * a->v_size};
  hgr_value_t scores, scale, out;
  HGR_RETURN_IF_ERROR(batch_matmul(node, q, k, false, &scores));
  HGR_RETURN_IF_ERROR(hgr__onnx_add_reshape(node, scores, scores4, 4, &scores));
  HGR_RETURN_IF_ERROR(hgr__onnx_add_scalar(node, a->scale, &scale));
  HGR_RETURN_IF_ERROR(hgr__onnx_add_binary(node, "multiply", scores, scale, &scores));
  if (mask) HGR_RETURN_IF_ERROR(hgr__onnx_add_binary(node, "add", scores, *mask, &scores));
  hgr_attrs_t* attrs = NULL;
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  hgr_status_t status = hgr_attrs_set_int(attrs, "axis", -1);
  if (!status) status = hgr__onnx_add_op(node, "softmax", &scores, 1, attrs, 1, &scores);
  hgr_attrs_release(attrs);
  HGR_RETURN_IF_ERROR(status);
  HGR_RETURN_IF_ERROR(hgr__onnx_add_reshape(node, scores, scores3, 3, &scores));
  HGR_RETURN_IF_ERROR(batch_matmul(node, scores, v, false, &out));
  HGR_RETURN_IF_ERROR(hgr__onnx_add_reshape(node, out, heads4, 4, &out));
  HGR_RETURN_IF_ERROR(add_with_ints(node, "transpose", &out, 1, "axes", swap, 4, &out));
  return hgr__onnx_add_reshape(node, out, merged, 3, out_value);
}

/* ---- masks ------------------------------------------------------------------------------- */

/* The additive mask [B, 1, 1, T] of input i (what: its name in ONNX Runtime's
 * documentation), an int32 key padding mask: [B, T] (an element > 0 keeps its key)
 * or [B] lengths (keys from the length on are masked). *out_present false when the
 * node omits it. */
static hgr_status_t padding_mask(hgr__onnx_node_t* node, uint32_t i, const char* what, const attention_t* a,
                                 hgr_value_t* out_mask, bool* out_present) {
  hgr__onnx_value_t* m = hgr__onnx_input(node, i);
  *out_present = m != NULL;
  if (!m) return HGR_OK;
  if (m->onnx_type != HGR__ONNX_INT32)
    return HGR__ONNX_INVALID(node, "input %u '%s' (%s) is %s; it must be int32", i, m->name, what,
                             hgr__onnx_type_name(m->onnx_type));
  bool lengths = m->ndim == 1 && m->shape[0] == a->batch;
  bool keys = m->ndim == 2 && m->shape[0] == a->batch && m->shape[1] == a->kv_seq;
  if (!lengths && !keys)
    return HGR__ONNX_UNSUPPORTED(node, "input %u '%s' (%s) has %d dimensions%s; hgr reads [%lld] (lengths: right "
                                 "padding) and [%lld, %lld] (1 keeps a key, 0 masks it)", i, m->name, what,
                                 (int)m->ndim, m->ndim == 1 ? " and is not [batch]" : "", (long long)a->batch,
                                 (long long)a->batch, (long long)a->kv_seq);
  hgr_value_t mask, keep, zero, filter;
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, m, &mask));
  HGR_RETURN_IF_ERROR(hgr__onnx_add_scalar(node, 0, &zero));
  if (keys) { /* keep = float(mask) > 0 */
    hgr_attrs_t* attrs = NULL;
    HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
    hgr_status_t status = hgr_attrs_set_string(attrs, "dtype", "float32");
    if (!status) status = hgr__onnx_add_op(node, "cast", &mask, 1, attrs, 1, &mask);
    hgr_attrs_release(attrs);
    HGR_RETURN_IF_ERROR(status);
    HGR_RETURN_IF_ERROR(hgr__onnx_add_binary(node, "greater", mask, zero, &keep));
  } else { /* keep = [0, T) < lengths as [B, 1] */
    int64_t row[2] = {1, a->kv_seq}, column[2] = {a->batch, 1};
    HGR_RETURN_IF_ERROR(add_range(node, row, 2, &keep));
    HGR_RETURN_IF_ERROR(hgr__onnx_add_reshape(node, mask, column, 2, &mask));
    HGR_RETURN_IF_ERROR(hgr__onnx_add_binary(node, "less", keep, mask, &keep));
  }
  HGR_RETURN_IF_ERROR(hgr__onnx_add_scalar(node, a->filter, &filter));
  hgr_value_t choices[3] = {keep, zero, filter};
  HGR_RETURN_IF_ERROR(hgr__onnx_add_op(node, "where", choices, 3, NULL, 1, &mask));
  int64_t four[4] = {a->batch, 1, 1, a->kv_seq};
  return hgr__onnx_add_reshape(node, mask, four, 4, out_mask);
}

/* The additive mask of everything that applies to node (see the file's comment):
 * *out_present false when nothing does. mask_input, bias_input: the indexes of the
 * key padding mask and attention_bias. */
static hgr_status_t additive_mask(hgr__onnx_node_t* node, uint32_t mask_input, const char* mask_name,
                                  uint32_t bias_input, const attention_t* a, hgr_value_t* out_mask, bool* out_present) {
  HGR_RETURN_IF_ERROR(padding_mask(node, mask_input, mask_name, a, out_mask, out_present));
  if (a->causal) {
    hgr__onnx_tensor_t* causal = NULL;
    int64_t shape[4] = {1, 1, a->q_seq, a->kv_seq};
    HGR_RETURN_IF_ERROR(hgr__onnx_tensor_new(node->loader->allocator, HGR__ONNX_FLOAT, shape, 4, node->label, &causal));
    for (int64_t s = 0; s < a->q_seq; ++s)
      for (int64_t t = 0; t < a->kv_seq; ++t) ((float*)causal->data)[s * a->kv_seq + t] = t > s ? -FLT_MAX : 0.0f;
    hgr_value_t value;
    hgr_status_t status = hgr__onnx_add_constant(node, NULL, causal, &value);
    hgr__onnx_tensor_free(causal);
    HGR_RETURN_IF_ERROR(status);
    if (*out_present) HGR_RETURN_IF_ERROR(hgr__onnx_add_binary(node, "add", *out_mask, value, out_mask));
    else *out_mask = value;
    *out_present = true;
  }
  hgr__onnx_value_t* bias = hgr__onnx_input(node, bias_input);
  if (bias) {
    int64_t full[4] = {a->batch, a->heads, a->q_seq, a->kv_seq};
    bool fits = bias->ndim == 4 && hgr__onnx_type_is_float(bias->onnx_type);
    for (int32_t d = 0; fits && d < 4; ++d) fits = bias->shape[d] == full[d] || (d < 2 && bias->shape[d] == 1);
    if (!fits)
      return HGR__ONNX_INVALID(node, "input %u '%s' (attention_bias) must be float [%lld or 1, %lld or 1, %lld, %lld]",
                               bias_input, bias->name, (long long)a->batch, (long long)a->heads, (long long)a->q_seq,
                               (long long)a->kv_seq);
    hgr_value_t value;
    HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, bias, &value));
    if (*out_present) HGR_RETURN_IF_ERROR(hgr__onnx_add_binary(node, "add", *out_mask, value, out_mask));
    else *out_mask = value;
    *out_present = true;
  }
  return HGR_OK;
}

/* ---- the attrs and inputs both ops share ------------------------------------------------- */

/* num_heads, unidirectional, mask_filter_value; scale once the head size is known
 * (attention_scale). */
static hgr_status_t attention_attrs(const hgr__onnx_node_t* node, attention_t* a) {
  int64_t causal;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "num_heads", 0, &a->heads));
  if (a->heads < 1) return HGR__ONNX_INVALID(node, "attr 'num_heads' = %lld must be at least 1", (long long)a->heads);
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "unidirectional", 0, &causal));
  if (causal != 0 && causal != 1)
    return HGR__ONNX_INVALID(node, "attr 'unidirectional' = %lld must be 0 or 1", (long long)causal);
  a->causal = causal;
  return hgr__onnx_attr_float(node, "mask_filter_value", -10000.0, &a->filter);
}

/* The scale: attr 'scale', or 1/sqrt(head size) when it is 0 or absent. */
static hgr_status_t attention_scale(const hgr__onnx_node_t* node, attention_t* a) {
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_float(node, "scale", 0.0, &a->scale));
  if (a->scale == 0.0) a->scale = 1.0 / sqrt((double)a->qk_size);
  return HGR_OK;
}

/* Hidden size `hidden` of `what` split into num_heads heads: the head size. */
static hgr_status_t head_size(const hgr__onnx_node_t* node, const char* what, int64_t hidden, const attention_t* a,
                              int64_t* out_size) {
  if (hidden < 1 || hidden % a->heads)
    return HGR__ONNX_INVALID(node, "the hidden size %lld of %s is not a multiple of attr 'num_heads' = %lld",
                             (long long)hidden, what, (long long)a->heads);
  *out_size = hidden / a->heads;
  return HGR_OK;
}

/* An input of the KV cache, by index and name. */
typedef struct cache_input_t {
  uint32_t index;
  const char* name;
} cache_input_t;

/* Refuses the inputs of the KV cache (count of them) when given and outputs 1 ..
 * (outputs: their names) when used: hgr computes attention without a cache. */
static hgr_status_t refuse_cache(const hgr__onnx_node_t* node, const cache_input_t* inputs, size_t count,
                                 const char* const* outputs) {
  for (size_t c = 0; c < count; ++c)
    if (hgr__onnx_input(node, inputs[c].index))
      return HGR__ONNX_UNSUPPORTED(node, "input %u '%s' (%s) is given; hgr computes %s without a KV cache",
                                   inputs[c].index, node->inputs[inputs[c].index]->name, inputs[c].name,
                                   node->proto->op_type);
  for (uint32_t k = 1; k < node->output_count; ++k)
    if (node->outputs[k] && node->outputs[k]->uses)
      return HGR__ONNX_UNSUPPORTED(node, "output %u '%s' (%s) is used; hgr computes only output 0 of %s", k,
                                   node->outputs[k]->name, outputs[k - 1], node->proto->op_type);
  return HGR_OK;
}

/* The node lists at most max_inputs inputs and max_outputs outputs. */
static hgr_status_t check_arity(const hgr__onnx_node_t* node, uint32_t max_inputs, uint32_t max_outputs) {
  if (node->input_count > max_inputs)
    return HGR__ONNX_INVALID(node, "takes at most %u inputs, the node has %u", max_inputs, node->input_count);
  if (node->output_count > max_outputs)
    return HGR__ONNX_INVALID(node, "has at most %u outputs, the node declares %u", max_outputs, node->output_count);
  return HGR_OK;
}

/* Input i must be float of ndim dimensions. */
static hgr_status_t check_input(const hgr__onnx_node_t* node, uint32_t i, const char* what, int32_t ndim) {
  const hgr__onnx_value_t* v = node->inputs[i];
  if (!hgr__onnx_type_is_float(v->onnx_type))
    return HGR__ONNX_UNSUPPORTED(node, "input %u '%s' (%s) is %s; hgr computes %s on float", i, v->name, what,
                                 hgr__onnx_type_name(v->onnx_type), node->proto->op_type);
  if (v->ndim != ndim)
    return HGR__ONNX_UNSUPPORTED(node, "input %u '%s' (%s) has %d dimensions; hgr reads %d", i, v->name, what,
                                 (int)v->ndim, (int)ndim);
  return HGR_OK;
}

/* ---- Attention -------------------------------------------------------------------------- */

static hgr_status_t import_attention(hgr__onnx_node_t* node) {
  static const cache_input_t cache_inputs[] = {{4, "past"}, {6, "past_sequence_length"}};
  static const char* const cache_outputs[] = {"present"};
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, "num_heads qkv_hidden_sizes unidirectional mask_filter_value scale "
                                                  "do_rotary rotary_embedding_dim past_present_share_buffer"));
  HGR_RETURN_IF_ERROR(check_arity(node, 7, 2));
  HGR_RETURN_IF_ERROR(refuse_cache(node, cache_inputs, 2, cache_outputs));
  static const char* const refused_attrs[] = {"do_rotary", "rotary_embedding_dim", "past_present_share_buffer"};
  for (size_t r = 0; r < sizeof(refused_attrs) / sizeof(refused_attrs[0]); ++r) {
    int64_t value;
    HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, refused_attrs[r], 0, &value));
    if (value)
      return HGR__ONNX_UNSUPPORTED(node, "attr '%s' = %lld; hgr reads only 0", refused_attrs[r], (long long)value);
  }
  attention_t a;
  HGR_RETURN_IF_ERROR(attention_attrs(node, &a));
  HGR_RETURN_IF_ERROR(check_input(node, 0, "input", 3));
  HGR_RETURN_IF_ERROR(check_input(node, 1, "weights", 2));
  const hgr__onnx_value_t *input = node->inputs[0], *weights = node->inputs[1];
  if (weights->shape[0] != input->shape[2])
    return HGR__ONNX_INVALID(node, "input 1 '%s' (weights) has %lld rows; input 0 has %lld features", weights->name,
                             (long long)weights->shape[0], (long long)input->shape[2]);
  int64_t sizes[3];
  uint32_t size_count;
  bool given;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_ints(node, "qkv_hidden_sizes", sizes, 3, &size_count, &given));
  if (!given) {
    sizes[0] = sizes[1] = sizes[2] = weights->shape[1] / 3;
    size_count = 3;
  }
  /* each size within the weights' columns before they are added: an attr can be any int64 */
  bool within = size_count == 3;
  for (uint32_t i = 0; within && i < 3; ++i) within = sizes[i] >= 0 && sizes[i] <= weights->shape[1];
  if (!within || sizes[0] != sizes[1] || sizes[0] + sizes[1] + sizes[2] != weights->shape[1])
    return HGR__ONNX_INVALID(node, "the weights' %lld columns are not Q, K and V of %s", (long long)weights->shape[1],
                             given ? "attr 'qkv_hidden_sizes' (3 values, Q's and K's equal)" : "equal thirds");
  a.batch = input->shape[0];
  a.q_seq = a.kv_seq = input->shape[1];
  HGR_RETURN_IF_ERROR(head_size(node, "Q and K", sizes[0], &a, &a.qk_size));
  HGR_RETURN_IF_ERROR(head_size(node, "V", sizes[2], &a, &a.v_size));
  HGR_RETURN_IF_ERROR(attention_scale(node, &a));

  hgr_value_t x, w, qkv, parts[3], mask;
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, node->inputs[0], &x));
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, node->inputs[1], &w));
  HGR_RETURN_IF_ERROR(hgr__onnx_add_binary(node, "matmul", x, w, &qkv));
  hgr__onnx_value_t* bias = hgr__onnx_input(node, 2);
  if (bias) {
    HGR_RETURN_IF_ERROR(check_input(node, 2, "bias", 1));
    if (bias->shape[0] != weights->shape[1])
      return HGR__ONNX_INVALID(node, "input 2 '%s' (bias) has %lld elements; the weights have %lld columns", bias->name,
                               (long long)bias->shape[0], (long long)weights->shape[1]);
    hgr_value_t b;
    HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, bias, &b));
    HGR_RETURN_IF_ERROR(hgr__onnx_add_binary(node, "add", qkv, b, &qkv));
  }
  int64_t qkv_shape[3] = {a.batch, a.q_seq, weights->shape[1]};
  int64_t begin = 0;
  for (int p = 0; p < 3; begin += sizes[p++]) {
    HGR_RETURN_IF_ERROR(slice_last(node, qkv, qkv_shape, 3, begin, begin + sizes[p], &parts[p]));
    int64_t size = p == 2 ? a.v_size : a.qk_size;
    HGR_RETURN_IF_ERROR(split_heads(node, parts[p], a.batch, a.q_seq, a.heads, size, p == 1, &parts[p]));
  }
  bool masked;
  HGR_RETURN_IF_ERROR(additive_mask(node, 3, "mask_index", 5, &a, &mask, &masked));
  hgr_value_t out;
  HGR_RETURN_IF_ERROR(attend(node, &a, parts[0], parts[1], parts[2], masked ? &mask : NULL, &out));
  return hgr__onnx_set_runtime(node, 0, out, input->onnx_type);
}

/* ---- MultiHeadAttention ------------------------------------------------------------------ */

static hgr_status_t import_multi_head_attention(hgr__onnx_node_t* node) {
  static const cache_input_t cache_inputs[] = {
      {6, "past_key"}, {7, "past_value"}, {8, "past_sequence_length"}, {9, "cache_indirection"}};
  static const char* const cache_outputs[] = {"present_key", "present_value", "qk"};
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, "num_heads unidirectional mask_filter_value scale"));
  HGR_RETURN_IF_ERROR(check_arity(node, 10, 4));
  HGR_RETURN_IF_ERROR(refuse_cache(node, cache_inputs, 4, cache_outputs));
  attention_t a;
  HGR_RETURN_IF_ERROR(attention_attrs(node, &a));
  hgr__onnx_value_t *query = node->inputs[0], *key = hgr__onnx_input(node, 1), *value = hgr__onnx_input(node, 2);
  if (!key || !value || query->ndim != 3 || key->ndim != 3)
    return HGR__ONNX_UNSUPPORTED(node, "%s; hgr reads separate query, key and value [batch, sequence, hidden] (not "
                                 "packed QKV or KV, nor a key in [batch, heads, sequence, head size])",
                                 !key ? "input 1 (key) is omitted" : query->ndim != 3 ? "input 0 (query) is not 3-D"
                                 : !value ? "input 2 (value) is omitted" : "input 1 (key) is not 3-D");
  static const char* const names[3] = {"query", "key", "value"};
  for (uint32_t i = 0; i < 3; ++i) HGR_RETURN_IF_ERROR(check_input(node, i, names[i], 3));
  if (key->shape[0] != query->shape[0] || value->shape[0] != query->shape[0] || value->shape[1] != key->shape[1])
    return HGR__ONNX_INVALID(node, "query, key and value must agree in batch, key and value in sequence length");
  a.batch = query->shape[0];
  a.q_seq = query->shape[1];
  a.kv_seq = key->shape[1];
  if (key->shape[2] != query->shape[2])
    return HGR__ONNX_INVALID(node, "input 1 '%s' (key) has hidden size %lld, the query %lld", key->name,
                             (long long)key->shape[2], (long long)query->shape[2]);
  HGR_RETURN_IF_ERROR(head_size(node, "the query", query->shape[2], &a, &a.qk_size));
  HGR_RETURN_IF_ERROR(head_size(node, "the value", value->shape[2], &a, &a.v_size));
  HGR_RETURN_IF_ERROR(attention_scale(node, &a));
  int64_t hidden[3] = {query->shape[2], key->shape[2], value->shape[2]};
  hgr_value_t parts[3], bias, mask;
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime_inputs(node, 0, 3, parts));
  hgr__onnx_value_t* b = hgr__onnx_input(node, 3);
  if (b) {
    HGR_RETURN_IF_ERROR(check_input(node, 3, "bias", 1));
    if (b->shape[0] != hidden[0] + hidden[1] + hidden[2])
      return HGR__ONNX_INVALID(node, "input 3 '%s' (bias) has %lld elements; query, key and value together have %lld",
                               b->name, (long long)b->shape[0], (long long)(hidden[0] + hidden[1] + hidden[2]));
    HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, b, &bias));
  }
  int64_t begin = 0;
  for (int p = 0; p < 3; begin += hidden[p++]) {
    if (b) {
      hgr_value_t third;
      HGR_RETURN_IF_ERROR(slice_last(node, bias, &b->shape[0], 1, begin, begin + hidden[p], &third));
      HGR_RETURN_IF_ERROR(hgr__onnx_add_binary(node, "add", parts[p], third, &parts[p]));
    }
    HGR_RETURN_IF_ERROR(split_heads(node, parts[p], a.batch, p ? a.kv_seq : a.q_seq, a.heads,
                                    p == 2 ? a.v_size : a.qk_size, p == 1, &parts[p]));
  }
  bool masked;
  HGR_RETURN_IF_ERROR(additive_mask(node, 4, "key_padding_mask", 5, &a, &mask, &masked));
  hgr_value_t out;
  HGR_RETURN_IF_ERROR(attend(node, &a, parts[0], parts[1], parts[2], masked ? &mask : NULL, &out));
  return hgr__onnx_set_runtime(node, 0, out, query->onnx_type);
}

/* ---- RotaryEmbedding ---------------------------------------------------------------------- */

/* cos_cache or sin_cache (input i, [max position, half]) at the positions: shaped to
 * broadcast against x viewed as [B, S, N, half] (3-D input) or [B, N, S, half]
 * (4-D), with a trailing 1 when interleaved ([..., half, 1]). */
static hgr_status_t rotary_table(hgr__onnx_node_t* node, uint32_t i, hgr_value_t positions, const int64_t* shape,
                                 int32_t ndim, hgr_value_t* out_value) {
  hgr_value_t table, in[2];
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, node->inputs[i], &table));
  in[0] = table;
  in[1] = positions;
  hgr_attrs_t* attrs = NULL;
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  hgr_status_t status = hgr_attrs_set_int(attrs, "axis", 0);
  if (!status) status = hgr_attrs_set_string(attrs, "mode", "clip");
  if (!status) status = hgr__onnx_add_op(node, "take", in, 2, attrs, 1, &table);
  hgr_attrs_release(attrs);
  HGR_RETURN_IF_ERROR(status);
  return hgr__onnx_add_reshape(node, table, shape, ndim, out_value);
}

static hgr_status_t import_rotary_embedding(hgr__onnx_node_t* node) {
  HGR_RETURN_IF_ERROR(
      hgr__onnx_check_attrs(node, "interleaved num_heads rotary_embedding_dim scale is_packed_batching"));
  HGR_RETURN_IF_ERROR(check_arity(node, 4, 1));
  int64_t interleaved, heads, rotary_dim, packed;
  double scale;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "interleaved", 0, &interleaved));
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "num_heads", 0, &heads));
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "rotary_embedding_dim", 0, &rotary_dim));
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "is_packed_batching", 0, &packed));
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_float(node, "scale", 1.0, &scale));
  if (packed)
    return HGR__ONNX_UNSUPPORTED(node, "attr 'is_packed_batching' = %lld; hgr reads only 0", (long long)packed);
  if (scale != 1.0) return HGR__ONNX_UNSUPPORTED(node, "attr 'scale' = %g; hgr reads only 1", scale);
  if (interleaved != 0 && interleaved != 1)
    return HGR__ONNX_INVALID(node, "attr 'interleaved' = %lld must be 0 or 1", (long long)interleaved);
  const hgr__onnx_value_t *x = node->inputs[0], *ids = node->inputs[1], *cos_cache = node->inputs[2];
  if (x->ndim != 3 && x->ndim != 4)
    return HGR__ONNX_UNSUPPORTED(node, "input 0 '%s' (input) has %d dimensions; hgr reads [batch, sequence, hidden] "
                                 "and [batch, heads, sequence, head size]", x->name, (int)x->ndim);
  HGR_RETURN_IF_ERROR(check_input(node, 0, "input", x->ndim));
  HGR_RETURN_IF_ERROR(check_input(node, 2, "cos_cache", 2));
  HGR_RETURN_IF_ERROR(check_input(node, 3, "sin_cache", 2));
  int64_t batch = x->shape[0], seq = x->ndim == 3 ? x->shape[1] : x->shape[2], half = cos_cache->shape[1];
  int64_t size = x->ndim == 4 ? x->shape[3] : heads > 0 ? x->shape[2] / heads : 2 * half;
  if (x->ndim == 3 && (size < 1 || x->shape[2] % size))
    return HGR__ONNX_INVALID(node, "input 0's hidden size %lld is not a multiple of the head size %lld (%s)",
                             (long long)x->shape[2], (long long)size,
                             heads > 0 ? "attr 'num_heads'" : "from cos_cache");
  if (2 * half != size || (rotary_dim && rotary_dim != size))
    return HGR__ONNX_UNSUPPORTED(node,
                                 "the rotary dimension %lld (%s) is not the head size %lld; hgr rotates whole heads",
                                 (long long)(rotary_dim ? rotary_dim : 2 * half),
                                 rotary_dim ? "attr 'rotary_embedding_dim'" : "twice input 2's last extent",
                                 (long long)size);
  if (node->inputs[3]->shape[0] != cos_cache->shape[0] || node->inputs[3]->shape[1] != half)
    return HGR__ONNX_INVALID(node, "input 3 '%s' (sin_cache) is not shaped as input 2 (cos_cache)",
                             node->inputs[3]->name);
  bool offset = ids->ndim == 1 && ids->shape[0] == 1;
  if ((ids->onnx_type != HGR__ONNX_INT64 && ids->onnx_type != HGR__ONNX_INT32) ||
      (!offset && (ids->ndim != 2 || ids->shape[0] != batch || ids->shape[1] != seq)))
    return HGR__ONNX_INVALID(node,
                             "input 1 '%s' (position_ids) must be int64 [%lld, %lld], or [1] (the first position)",
                             ids->name, (long long)batch, (long long)seq);

  hgr_value_t in, positions, cos, sin;
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, node->inputs[0], &in));
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, node->inputs[1], &positions));
  if (offset) { /* positions first + [0, S) */
    hgr_value_t value;
    HGR_RETURN_IF_ERROR(add_range(node, &seq, 1, &value));
    HGR_RETURN_IF_ERROR(hgr__onnx_add_binary(node, "add", value, positions, &positions));
  }
  /* x as [B, S, N, D] or [B, N, S, D]; interleaved pairs as [..., half, 2] */
  int64_t heads_shape[HGR_MAX_DIMS] = {batch, seq, x->ndim == 3 ? x->shape[2] / size : 0, size, 0};
  if (x->ndim == 4) memcpy(heads_shape, x->shape, 4 * sizeof(int64_t));
  int64_t table_shape[5] = {offset ? 1 : batch, x->ndim == 3 ? seq : 1, x->ndim == 3 ? 1 : seq, half, 1};
  int32_t ndim = 4;
  if (interleaved) {
    heads_shape[3] = half;
    heads_shape[4] = 2;
    ndim = 5;
  }
  HGR_RETURN_IF_ERROR(hgr__onnx_add_reshape(node, in, heads_shape, ndim, &in));
  HGR_RETURN_IF_ERROR(rotary_table(node, 2, positions, table_shape, ndim, &cos));
  HGR_RETURN_IF_ERROR(rotary_table(node, 3, positions, table_shape, ndim, &sin));
  /* (x1, x2) -> (x1 cos - x2 sin, x2 cos + x1 sin): x1, x2 the halves, or the pairs' elements */
  int64_t width = interleaved ? 1 : half;
  hgr_value_t x1, x2, a, b, halves[2];
  HGR_RETURN_IF_ERROR(slice_last(node, in, heads_shape, ndim, 0, width, &x1));
  HGR_RETURN_IF_ERROR(slice_last(node, in, heads_shape, ndim, width, 2 * width, &x2));
  HGR_RETURN_IF_ERROR(hgr__onnx_add_binary(node, "multiply", x1, cos, &a));
  HGR_RETURN_IF_ERROR(hgr__onnx_add_binary(node, "multiply", x2, sin, &b));
  HGR_RETURN_IF_ERROR(hgr__onnx_add_binary(node, "subtract", a, b, &halves[0]));
  HGR_RETURN_IF_ERROR(hgr__onnx_add_binary(node, "multiply", x2, cos, &a));
  HGR_RETURN_IF_ERROR(hgr__onnx_add_binary(node, "multiply", x1, sin, &b));
  HGR_RETURN_IF_ERROR(hgr__onnx_add_binary(node, "add", a, b, &halves[1]));
  hgr_attrs_t* attrs = NULL;
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  hgr_value_t out;
  hgr_status_t status = hgr_attrs_set_int(attrs, "axis", -1);
  if (!status) status = hgr__onnx_add_op(node, "concatenate", halves, 2, attrs, 1, &out);
  hgr_attrs_release(attrs);
  HGR_RETURN_IF_ERROR(status);
  HGR_RETURN_IF_ERROR(hgr__onnx_add_reshape(node, out, x->shape, x->ndim, &out));
  return hgr__onnx_set_runtime(node, 0, out, x->onnx_type);
}

const hgr__onnx_op_t hgr__onnx_ops_attention[] = {
    {"Attention", import_attention, NULL, 2},
    {"MultiHeadAttention", import_multi_head_attention, NULL, 1},
    {"RotaryEmbedding", import_rotary_embedding, NULL, 4},
    {.name = NULL},
};
