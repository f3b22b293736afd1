/* ONNX's recurrent ops, LSTM, GRU and RNN (every attr of opsets 1 to 22), as two
 * builder ops: the input projection of every step and direction at once, one
 * `dense` of X ([T, B, I], layout 1: [B, T, I]) by W ([D, G H, I] viewed as
 * [D G H, I]) plus Wb (B's first half), and the recurrence (lstm_recurrence,
 * gru_recurrence, rnn_recurrence: runtime/ops/ops_rnn.c), which takes the
 * projection, R, Rb (B's second half), sequence_lens, initial_h, initial_c and P,
 * and gives Y, Y_h and Y_c in ONNX's layouts. The
 * activations and their alphas and betas, clip, input_forget and
 * linear_before_reset pass to the recurrence as they are; an omitted output is
 * simply not used. A constant R whose hidden size is a multiple of 16 passes
 * transposed (r_transposed), R^T [D, H, G H + 16], made at load: see
 * transposed_r. */
#include <ctype.h>
#include <string.h>

#include "alloc.h"
#include "onnx_internal.h"
#include "text.h"

typedef struct recurrent_t {
  const char* op;    /* the builder op of the recurrence */
  uint32_t gates;    /* G */
  uint32_t outputs;  /* the recurrence's: Y, Y_h (, Y_c) */
  const char* attrs; /* ONNX's, of every opset (output_sequence: opsets 1 to 6) */
} recurrent_t;

static const recurrent_t lstm = {
    "lstm_recurrence", 4, 3,
    "activation_alpha activation_beta activations clip direction hidden_size input_forget layout output_sequence"};
static const recurrent_t gru = {
    "gru_recurrence", 3, 2,
    "activation_alpha activation_beta activations clip direction hidden_size layout linear_before_reset "
    "output_sequence"};
static const recurrent_t rnn = {
    "rnn_recurrence", 1, 2,
    "activation_alpha activation_beta activations clip direction hidden_size layout output_sequence"};

/* Input i must be float; a constant of another float type is cast at load. */
static hgr_status_t check_float(const hgr__onnx_node_t* node, const hgr__onnx_value_t* v, const char* what) {
  if (v->onnx_type == HGR__ONNX_FLOAT || (v->constant && hgr__onnx_type_is_float(v->onnx_type))) return HGR_OK;
  return HGR__ONNX_UNSUPPORTED(node, "input %s ('%s') is %s; hgr computes float", what, v->name,
                               hgr__onnx_type_name(v->onnx_type));
}

/* v's runtime value, as float32: a constant of another float type cast at load. */
static hgr_status_t float_value(hgr__onnx_node_t* node, hgr__onnx_value_t* v, hgr_value_t* out) {
  if (v->constant && v->onnx_type != HGR__ONNX_FLOAT)
    return hgr__onnx_add_float_constant(node, v->name, v->constant, out);
  return hgr__onnx_runtime(node, v, out);
}

/* v's runtime value, reshaped to shape (ndim): a constant reshaped at load (cast to
 * float), a runtime value through a reshape. */
static hgr_status_t reshaped(hgr__onnx_node_t* node, hgr__onnx_value_t* v, const int64_t* shape, int32_t ndim,
                             hgr_value_t* out) {
  if (!v->constant) {
    HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, v, out));
    return hgr__onnx_add_reshape(node, *out, shape, ndim, out);
  }
  hgr__onnx_tensor_t* t = NULL;
  HGR_RETURN_IF_ERROR(hgr__onnx_tensor_cast(node->loader->allocator, v->constant, HGR__ONNX_FLOAT, node->label, &t));
  hgr_status_t status = hgr__onnx_tensor_reshape(t, shape, ndim, node->label);
  if (!status) status = hgr__onnx_add_float_constant(node, v->name, t, out);
  hgr__onnx_tensor_free(t);
  return status;
}

/* The floats of padding after each row of R^T: as the recurrence pads its own
 * copies (R_T_PAD, runtime/ops/ops_rnn.c), so that rows of a power of two of floats
 * do not put one tile's streams on the same cache sets (an LSTM of 256 on PoCL:
 * 0.73 ms padded, 1.26 ms not). */
#define R_T_PAD 16

/* R [D, G H, H], a constant, as R^T [D, H, G H + R_T_PAD] (the padding zeros): the
 * form the recurrence's layouts columns16 (the rule's on PoCL's CPU drivers, H %
 * 16 == 0) and columns (GPUs, once tuned) read, which would otherwise copy R into
 * it every run (on PoCL a launch of 5 us for an LSTM of 64, 0.17 ms for a
 * bidirectional one of 256); rows, the rule's elsewhere, copies it back instead
 * (rusticl: 32.7 ms against 32.1 ms from R for that LSTM of 256). Another hidden
 * size keeps R, which rows4 (PoCL, H % 4 == 0) and rows read. */
static hgr_status_t transposed_r(hgr__onnx_node_t* node, hgr__onnx_value_t* r, int64_t directions, int64_t gh,
                                 int64_t hidden, hgr_value_t* out) {
  hgr__onnx_tensor_t *t = NULL, *rt = NULL;
  int64_t shape[3] = {directions, hidden, gh + R_T_PAD};
  hgr_status_t status =
      hgr__onnx_tensor_cast(node->loader->allocator, r->constant, HGR__ONNX_FLOAT, node->label, &t);
  if (!status) status = hgr__onnx_tensor_new(node->loader->allocator, HGR__ONNX_FLOAT, shape, 3, node->label, &rt);
  for (int64_t d = 0; !status && d < directions; ++d)
    for (int64_t row = 0; row < gh; ++row)
      for (int64_t k = 0; k < hidden; ++k)
        ((float*)rt->data)[(d * hidden + k) * (gh + R_T_PAD) + row] =
            ((const float*)t->data)[(d * gh + row) * hidden + k];
  if (!status) status = hgr__onnx_add_float_constant(node, r->name, rt, out);
  hgr__onnx_tensor_free(t);
  hgr__onnx_tensor_free(rt);
  return status;
}

/* B [D, 2 G H] split into Wb [D G H] (the projection's bias) and Rb [D, G H] (the
 * recurrence's): at load for a constant, by two strided_slices otherwise. */
static hgr_status_t split_bias(hgr__onnx_node_t* node, hgr__onnx_value_t* bias, int64_t directions, int64_t gh,
                               hgr_value_t* out_wb, hgr_value_t* out_rb) {
  if (bias->constant) {
    hgr__onnx_tensor_t *wb = NULL, *rb = NULL;
    int64_t wb_shape[1] = {directions * gh}, rb_shape[2] = {directions, gh};
    hgr_status_t status =
        hgr__onnx_tensor_new(node->loader->allocator, HGR__ONNX_FLOAT, wb_shape, 1, node->label, &wb);
    if (!status) status = hgr__onnx_tensor_new(node->loader->allocator, HGR__ONNX_FLOAT, rb_shape, 2, node->label, &rb);
    for (int64_t d = 0; !status && d < directions; ++d)
      for (int64_t g = 0; g < gh; ++g) {
        uint64_t from = (uint64_t)(d * 2 * gh + g), to = (uint64_t)(d * gh + g);
        hgr__onnx_tensor_set_f64(wb, to, hgr__onnx_tensor_f64(bias->constant, from));
        hgr__onnx_tensor_set_f64(rb, to, hgr__onnx_tensor_f64(bias->constant, from + (uint64_t)gh));
      }
    if (!status) status = hgr__onnx_add_float_constant(node, bias->name, wb, out_wb);
    if (!status) status = hgr__onnx_add_float_constant(node, bias->name, rb, out_rb);
    hgr__onnx_tensor_free(wb);
    hgr__onnx_tensor_free(rb);
    return status;
  }
  hgr_value_t in;
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, bias, &in));
  hgr_value_t* outs[2] = {out_wb, out_rb};
  for (int half = 0; half < 2; ++half) {
    int64_t begin[2] = {0, half * gh}, end[2] = {directions, (half + 1) * gh}, strides[2] = {1, 1};
    hgr_attrs_t* attrs = NULL;
    HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
    hgr_status_t status = hgr_attrs_set_ints(attrs, "begin", begin, 2);
    if (!status) status = hgr_attrs_set_ints(attrs, "end", end, 2);
    if (!status) status = hgr_attrs_set_ints(attrs, "strides", strides, 2);
    if (!status) status = hgr__onnx_add_op(node, "strided_slice", &in, 1, attrs, 1, outs[half]);
    hgr_attrs_release(attrs);
    HGR_RETURN_IF_ERROR(status);
  }
  int64_t flat[1] = {directions * gh};
  return hgr__onnx_add_reshape(node, *out_wb, flat, 1, out_wb);
}

/* The attr "activations" (a list of strings) as the recurrence's "[Sigmoid, Tanh]";
 * each name must be letters only (the op checks which). NULL text when absent. */
static hgr_status_t activation_list(const hgr__onnx_node_t* node, hgr__text_t* text, bool* out_present) {
  const Onnx__AttributeProto* a = hgr__onnx_attr(node, "activations");
  *out_present = a != NULL;
  if (!a) return HGR_OK;
  if (a->has_type && a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS)
    return HGR__ONNX_INVALID(node, "attr 'activations' is of attribute type %d; the op takes a list of strings",
                             (int)a->type);
  hgr__text_appendf(text, "[");
  for (size_t i = 0; i < a->n_strings; ++i) {
    const ProtobufCBinaryData* name = &a->strings[i];
    bool letters = name->len > 0 && name->len <= 32;
    for (size_t k = 0; letters && k < name->len; ++k) letters = isalpha(name->data[k]) != 0;
    if (!letters)
      return HGR__ONNX_INVALID(node, "attr 'activations' value %zu is not an activation name (letters only, "
                                     "at most 32)", i);
    hgr__text_appendf(text, "%s%.*s", i ? ", " : "", (int)name->len, (const char*)name->data);
  }
  hgr__text_appendf(text, "]");
  return HGR_OK;
}

/* The recurrence's attrs from the node's. */
static hgr_status_t recurrence_attrs(const hgr__onnx_node_t* node, const recurrent_t* kind, int64_t hidden,
                                     const char* direction, int64_t layout, const bool* with, bool r_transposed,
                                     hgr_attrs_t* attrs) {
  hgr_status_t status = hgr_attrs_set_int(attrs, "hidden_size", hidden);
  if (!status && r_transposed) status = hgr_attrs_set_int(attrs, "r_transposed", 1);
  if (!status) status = hgr_attrs_set_string(attrs, "direction", direction);
  if (!status) status = hgr_attrs_set_int(attrs, "layout", layout);
  static const char* const with_names[5] = {"with_bias", "with_sequence_lens", "with_initial_h", "with_initial_c",
                                            "with_peepholes"};
  for (uint32_t k = 0; !status && k < (kind == &lstm ? 5u : 3u); ++k)
    status = hgr_attrs_set_int(attrs, with_names[k], with[k]);
  hgr__text_t names = {0};
  names.allocator = node->loader->allocator;
  bool present = false;
  if (!status) status = activation_list(node, &names, &present);
  char* text = hgr__text_take(&names);
  if (!status && present && !text) status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "%s: out of host memory",
                                                       node->label);
  if (!status && present) status = hgr_attrs_set_string(attrs, "activations", text);
  hgr__free(node->loader->allocator, text);
  const char* lists[2] = {"activation_alpha", "activation_beta"};
  for (int l = 0; !status && l < 2; ++l) {
    double values[16];
    uint32_t count = 0;
    bool given = false;
    status = hgr__onnx_attr_floats(node, lists[l], values, 16, &count, &given);
    if (!status && given) status = hgr_attrs_set_floats(attrs, lists[l], values, count);
  }
  if (!status && hgr__onnx_attr(node, "clip")) {
    double clip;
    status = hgr__onnx_attr_float(node, "clip", 0, &clip);
    if (!status && !(clip > 0))
      status = HGR__ONNX_INVALID(node, "attr 'clip' = %g; the threshold must be greater than 0", clip);
    if (!status) status = hgr_attrs_set_float(attrs, "clip", clip);
  }
  const char* flag = kind == &lstm ? "input_forget" : kind == &gru ? "linear_before_reset" : NULL;
  if (!status && flag) {
    int64_t value;
    status = hgr__onnx_attr_int(node, flag, 0, &value);
    if (!status) status = hgr_attrs_set_int(attrs, flag, value != 0);
  }
  return status;
}

static hgr_status_t import_recurrent(hgr__onnx_node_t* node) {
  const char* op_type = node->proto->op_type;
  const recurrent_t* kind = !strcmp(op_type, "LSTM") ? &lstm : !strcmp(op_type, "GRU") ? &gru : &rnn;
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, kind->attrs));
  hgr__onnx_value_t *x, *w, *r;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 1, &w));
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 2, &r));
  HGR_RETURN_IF_ERROR(check_float(node, x, "0 (X)"));
  HGR_RETURN_IF_ERROR(check_float(node, w, "1 (W)"));
  HGR_RETURN_IF_ERROR(check_float(node, r, "2 (R)"));
  char direction[32];
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_string(node, "direction", "forward", direction, sizeof(direction)));
  if (strcmp(direction, "forward") && strcmp(direction, "reverse") && strcmp(direction, "bidirectional"))
    return HGR__ONNX_INVALID(node, "attr 'direction' = \"%s\"; ONNX defines forward, reverse and bidirectional",
                             direction);
  int64_t directions = strcmp(direction, "bidirectional") ? 1 : 2, layout, hidden;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "layout", 0, &layout));
  if (layout != 0 && layout != 1)
    return HGR__ONNX_INVALID(node, "attr 'layout' = %lld; ONNX defines 0 (time first) and 1 (batch first)",
                             (long long)layout);
  if (x->ndim != 3 || w->ndim != 3 || r->ndim != 3)
    return HGR__ONNX_INVALID(node, "X, W and R must have rank 3 (they have %d, %d and %d)", (int)x->ndim,
                             (int)w->ndim, (int)r->ndim);
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "hidden_size", r->shape[2], &hidden));
  /* bounded before it is multiplied: an attr can be any int64 */
  if (hidden < 1 || hidden > INT32_MAX)
    return HGR__ONNX_INVALID(node, "attr 'hidden_size' = %lld; it must be between 1 and 2^31 - 1", (long long)hidden);
  int64_t gh = (int64_t)kind->gates * hidden, inputs = x->shape[2];
  if (w->shape[0] != directions || w->shape[1] != gh || w->shape[2] != inputs ||
      r->shape[0] != directions || r->shape[1] != gh || r->shape[2] != hidden)
    return HGR__ONNX_INVALID(node, "W is [%lld, %lld, %lld] and R [%lld, %lld, %lld]; with hidden_size %lld, %lld "
                             "direction%s and X's %lld inputs they must be [%lld, %lld, %lld] and [%lld, %lld, %lld]",
                             (long long)w->shape[0], (long long)w->shape[1], (long long)w->shape[2],
                             (long long)r->shape[0], (long long)r->shape[1], (long long)r->shape[2], (long long)hidden,
                             (long long)directions, directions == 2 ? "s" : "", (long long)inputs,
                             (long long)directions, (long long)gh, (long long)inputs, (long long)directions,
                             (long long)gh, (long long)hidden);
  int64_t steps = x->shape[layout ? 1 : 0], batch = x->shape[layout ? 0 : 1];
  /* the optional inputs: B, sequence_lens, initial_h, initial_c, P */
  hgr__onnx_value_t* optional[5] = {hgr__onnx_input(node, 3), hgr__onnx_input(node, 4), hgr__onnx_input(node, 5),
                                    kind == &lstm ? hgr__onnx_input(node, 6) : NULL,
                                    kind == &lstm ? hgr__onnx_input(node, 7) : NULL};
  uint32_t max_inputs = kind == &lstm ? 8 : 6;
  if (node->input_count > max_inputs)
    return HGR__ONNX_INVALID(node, "has %u inputs; %s takes at most %u", node->input_count, op_type, max_inputs);
  bool with[5];
  for (int k = 0; k < 5; ++k) with[k] = optional[k] != NULL;
  static const char* const optional_names[5] = {"3 (B)", "4 (sequence_lens)", "5 (initial_h)", "6 (initial_c)",
                                                "7 (P)"};
  for (int k = 0; k < 5; ++k)
    if (optional[k] && k != 1) HGR_RETURN_IF_ERROR(check_float(node, optional[k], optional_names[k]));
  if (optional[1]) {
    hgr__onnx_value_t* lens = optional[1];
    if (lens->onnx_type != HGR__ONNX_INT32 && lens->onnx_type != HGR__ONNX_INT64)
      return HGR__ONNX_INVALID(node, "input 4 (sequence_lens, '%s') is %s; ONNX takes int32", lens->name,
                               hgr__onnx_type_name(lens->onnx_type));
    if (lens->ndim != 1 || lens->shape[0] != batch)
      return HGR__ONNX_INVALID(node, "input 4 (sequence_lens, '%s') must be [%lld]", lens->name, (long long)batch);
    for (uint64_t i = 0; lens->constant && i < lens->constant->count; ++i) {
      int64_t len = hgr__onnx_tensor_i64(lens->constant, i);
      if (len < 0 || len > steps)
        return HGR__ONNX_INVALID(node, "input 4 (sequence_lens, '%s') holds %lld at %llu; lengths lie in [0, %lld]",
                                 lens->name, (long long)len, (unsigned long long)i, (long long)steps);
    }
  }
  /* the projection of every step and direction: dense(X, W as [D G H, I], Wb) */
  hgr_value_t projection[3], wb, rb;
  uint32_t projection_count = 2;
  HGR_RETURN_IF_ERROR(float_value(node, x, &projection[0]));
  int64_t w_shape[2] = {directions * gh, inputs};
  HGR_RETURN_IF_ERROR(reshaped(node, w, w_shape, 2, &projection[1]));
  if (optional[0]) {
    HGR_RETURN_IF_ERROR(split_bias(node, optional[0], directions, gh, &wb, &rb));
    projection[projection_count++] = wb;
  }
  hgr_value_t gates_x;
  HGR_RETURN_IF_ERROR(hgr__onnx_add_op(node, "dense", projection, projection_count, NULL, 1, &gates_x));
  /* the recurrence */
  hgr_value_t in[7] = {gates_x};
  uint32_t count = 1;
  bool r_transposed = r->constant && hidden % 16 == 0;
  HGR_RETURN_IF_ERROR(r_transposed ? transposed_r(node, r, directions, gh, hidden, &in[count++])
                                   : float_value(node, r, &in[count++]));
  if (optional[0]) in[count++] = rb;
  for (int k = 1; k < 5; ++k)
    if (optional[k])
      HGR_RETURN_IF_ERROR(k == 1 ? hgr__onnx_runtime(node, optional[k], &in[count++])
                                 : float_value(node, optional[k], &in[count++]));
  hgr_attrs_t* attrs = NULL;
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  hgr_value_t out[3];
  hgr_status_t status = recurrence_attrs(node, kind, hidden, direction, layout, with, r_transposed, attrs);
  if (!status) status = hgr__onnx_add_op(node, kind->op, in, count, attrs, kind->outputs, out);
  hgr_attrs_release(attrs);
  for (uint32_t k = 0; !status && k < kind->outputs; ++k)
    status = hgr__onnx_set_runtime(node, k, out[k], HGR__ONNX_FLOAT);
  return status;
}

const hgr__onnx_op_t hgr__onnx_ops_rnn[] = {
    {"LSTM", import_recurrent, NULL, 3},
    {"GRU", import_recurrent, NULL, 3},
    {"RNN", import_recurrent, NULL, 3},
    {.name = NULL},
};
