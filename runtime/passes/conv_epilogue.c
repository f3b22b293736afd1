/* Conv epilogue fusion (passes.h): find each conv2d's chain, fold its constants
 * into new params, and rebuild the graph with the chain as the conv2d's epilogue.
 *
 * The chain is y = act(conv * scale + shift) per output channel (act a leaky relu and a
 * clamp after it too: leaky_relu_clip; or a sigmoid and the multiply of its input by
 * it: silu, two members), conv = W x + b, so
 * the conv2d that replaces it has weights W * scale (made only when some scale is
 * not 1) and bias b * scale + shift, computed in double and rounded once to float,
 * as the ONNX loader folds a BatchNormalization. The fused conv2d goes at the
 * conv2d's place (every input it reads is there already); its output stands for the
 * chain's last value, so the last member lends it its name and the graph's output
 * names stay. A max pool that tiles the chain's value joins last, as attr
 * pool_size, where ops_conv.c runs the convolution and the pool in one kernel: the
 * fused conv2d then gives the pool's output. With a reshape between, the conv2d keeps its name and the reshape,
 * which now reads the fused conv2d, takes the last member's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "hgr/builder.h"
#include "ops.h"
#include "passes.h"
#include "text.h"

#define NONE HGR__PASS_NONE
#define PASS "fusing conv epilogues"
#define MAX_MEMBERS 16

/* A conv2d's epilogue as found. */
typedef struct epilogue_t {
  uint32_t reshape;               /* NONE, or the reshape between the conv2d and the chain */
  uint32_t members[MAX_MEMBERS];  /* multiply and add nodes, the activation, the max pool, in order */
  uint32_t operands[MAX_MEMBERS]; /* per multiply and add: the param of its constant */
  uint32_t member_count;
  uint32_t affine_count;            /* members that are multiply or add (the first ones) */
  const hgr__fusable_t* activation; /* relu, clip, leaky_relu, sigmoid, hard_swish, silu; NULL: none */
  float activation_params[2];
  bool clamped;    /* a clamp after a leaky_relu joined: activation leaky_relu_clip */
  float clamp[2];  /* its a_min and a_max (infinite where the clamp has no such side) */
  int64_t pool[2]; /* the max pool's window (the last member); {0, 0}: none */
} epilogue_t;

/* A param by name, for bsearch. */
typedef struct param_name_t {
  const char* name;
  uint32_t index;
} param_name_t;

typedef struct finder_t {
  hgr_allocator_t allocator;  /* the graph's: the pass's tables, new names and values */
  const hgr_graph_t* graph;
  const hgr_params_t* params; /* may be NULL */
  param_name_t* param_names;  /* sorted by name */
  uint32_t param_count;
  uint32_t* sole_consumer; /* per entry: the one node reading it once, NONE when it is read otherwise or an output */
  uint32_t* uses;          /* per entry: input references, plus 1 per graph output */
  epilogue_t** epilogue;   /* per node: the conv2d's epilogue, or NULL */
  uint32_t* role;          /* per node: the conv2d whose epilogue it belongs to (members, reshape), or NONE */
} finder_t;

static int compare_param_names(const void* a, const void* b) {
  return strcmp(((const param_name_t*)a)->name, ((const param_name_t*)b)->name);
}

static void finder_free(finder_t* f) {
  for (uint32_t n = 0; f->epilogue && n < f->graph->node_count; ++n) hgr__free(f->allocator, f->epilogue[n]);
  hgr__free(f->allocator, f->param_names);
  hgr__free(f->allocator, f->sole_consumer);
  hgr__free(f->allocator, f->uses);
  hgr__free(f->allocator, f->epilogue);
  hgr__free(f->allocator, f->role);
}

static hgr_status_t finder_init(finder_t* f, const hgr_graph_t* graph, const hgr_params_t* params) {
  memset(f, 0, sizeof(*f));
  f->allocator = hgr__graph_allocator(graph);
  f->graph = graph;
  f->params = params;
  size_t param_count = params ? hgr_params_count(params) : 0;
  if (param_count >= UINT32_MAX)
    return HGR_STATUS(HGR_STATUS_OUT_OF_RANGE, PASS ": %zu params are more than the pass indexes", param_count);
  f->param_count = (uint32_t)param_count;
  f->param_names = hgr__alloc(f->allocator, (param_count + 1) * sizeof(*f->param_names));
  f->sole_consumer = hgr__alloc(f->allocator, (graph->entry_count + 1) * sizeof(*f->sole_consumer));
  f->uses = hgr__calloc(f->allocator, graph->entry_count + 1, sizeof(*f->uses));
  f->epilogue = hgr__calloc(f->allocator, graph->node_count + 1, sizeof(*f->epilogue));
  f->role = hgr__alloc(f->allocator, (graph->node_count + 1) * sizeof(*f->role));
  if (!f->param_names || !f->sole_consumer || !f->uses || !f->epilogue || !f->role)
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, PASS ": out of host memory for a graph of %u nodes",
                      graph->node_count);
  for (uint32_t p = 0; p < f->param_count; ++p) {
    hgr_tensor_info_t info;
    HGR_RETURN_IF_ERROR(hgr_params_get(params, p, &info, NULL));
    f->param_names[p] = (param_name_t){info.name, p};
  }
  qsort(f->param_names, f->param_count, sizeof(*f->param_names), compare_param_names);
  for (uint32_t e = 0; e < graph->entry_count; ++e) f->sole_consumer[e] = NONE;
  for (uint32_t n = 0; n < graph->node_count; ++n) {
    f->role[n] = NONE;
    for (uint32_t i = 0; i < graph->nodes[n].input_count; ++i) {
      uint32_t e = hgr__graph_entry_id(graph, graph->nodes[n].inputs[i]);
      f->sole_consumer[e] = f->uses[e]++ ? NONE : n;
    }
  }
  for (uint32_t h = 0; h < graph->head_count; ++h) {
    uint32_t e = hgr__graph_entry_id(graph, graph->heads[h]);
    f->sole_consumer[e] = NONE;
    f->uses[e]++;
  }
  return HGR_OK;
}

/* The param that graph input node n is, with its data as float32 of `count`
 * elements; NONE when n is no input, not in params, or another dtype or size. */
static uint32_t float_param(const finder_t* f, uint32_t n, uint64_t count, const float** out_data) {
  const hgr__node_t* node = &f->graph->nodes[n];
  if (node->is_op || !f->param_count) return NONE;
  param_name_t key = {node->name, 0};
  const param_name_t* found = bsearch(&key, f->param_names, f->param_count, sizeof(key), compare_param_names);
  hgr_tensor_info_t info;
  const void* data = NULL;
  if (!found || hgr_params_get(f->params, found->index, &info, &data)) return NONE;
  if (!hgr__dtype_same(info.dtype, HGR__DTYPE_F32) || info.bytes != count * sizeof(float)) return NONE;
  if (out_data) *out_data = data;
  return found->index;
}

/* Whether entry `operand` holds one value per channel of a value of rank `rank`
 * whose dim 1 has `channels`: [C], [C, 1], [1, C, 1, 1], ... aligned to the right
 * (NumPy's broadcast), every dim but the channel's 1. */
static bool per_channel(const hgr__entry_t* operand, int32_t rank, int64_t channels) {
  if (rank < 2 || operand->ndim < rank - 1 || operand->ndim > rank) return false;
  int32_t channel_dim = operand->ndim - (rank - 1);
  for (int32_t d = 0; d < operand->ndim; ++d)
    if (operand->shape[d] != (d == channel_dim ? channels : 1)) return false;
  return true;
}

/* The conv2d the pass may give an epilogue: float32, one output, none yet. */
static bool bare_conv2d(const hgr_graph_t* graph, uint32_t n) {
  const hgr__node_t* node = &graph->nodes[n];
  if (!node->is_op || strcmp(node->func_name, "conv2d") || node->num_outputs != 1 || node->input_count < 2 ||
      node->input_count > 3 || !hgr__pass_all_float32(graph, n) || graph->entries[graph->node_row_ptr[n]].ndim != 4)
    return false;
  const char* activation = hgr__node_attr(node, "activation");
  return (!activation || !strcmp(activation, "none")) && !hgr__node_attr(node, "alpha") &&
         !hgr__node_attr(node, "a_min") && !hgr__node_attr(node, "a_max");
}

/* Whether node n is a reshape of entry `from` ([N, C, ...]) that keeps dims 0 and 1. */
static bool channel_reshape(const hgr_graph_t* graph, uint32_t n, uint32_t from) {
  const hgr__node_t* node = &graph->nodes[n];
  if (!node->is_op || strcmp(node->func_name, "reshape") || node->num_outputs != 1 || node->input_count != 1)
    return false;
  const hgr__entry_t* in = &graph->entries[from];
  const hgr__entry_t* out = &graph->entries[graph->node_row_ptr[n]];
  return out->ndim >= 2 && hgr__dtype_same(out->dtype, in->dtype) && out->shape[0] == in->shape[0] &&
         out->shape[1] == in->shape[1];
}

/* Member n reading entry `current`, when it is a multiply or add of a per-channel
 * constant param: *out_param names it. */
static bool affine_member(const finder_t* f, uint32_t n, uint32_t current, int64_t channels, bool can_scale,
                          uint32_t* out_param) {
  const hgr_graph_t* graph = f->graph;
  const hgr__node_t* node = &graph->nodes[n];
  bool multiply = node->is_op && !strcmp(node->func_name, "multiply");
  if (!node->is_op || (!multiply && strcmp(node->func_name, "add")) || node->input_count != 2 ||
      !hgr__pass_only_known_attrs(node, NULL) || !hgr__pass_all_float32(graph, n) || (multiply && !can_scale))
    return false;
  uint32_t a = hgr__graph_entry_id(graph, node->inputs[0]), b = hgr__graph_entry_id(graph, node->inputs[1]);
  if ((a == current) == (b == current)) return false; /* x * x, or not reading current */
  const hgr__entry_t* operand = &graph->entries[a == current ? b : a];
  if (!hgr__pass_same_shape(&graph->entries[graph->node_row_ptr[n]], &graph->entries[current]) ||
      !per_channel(operand, graph->entries[current].ndim, channels))
    return false;
  *out_param = float_param(f, operand->node_id, (uint64_t)channels, NULL);
  return *out_param != NONE;
}

/* The activation n reading entry `current`, or NULL. */
static const hgr__fusable_t* activation_member(const hgr_graph_t* graph, uint32_t n, uint32_t current, float* params) {
  const hgr__node_t* node = &graph->nodes[n];
  if (!node->is_op || (strcmp(node->func_name, "relu") && strcmp(node->func_name, "clip") &&
                        strcmp(node->func_name, "leaky_relu") && strcmp(node->func_name, "sigmoid") &&
                        strcmp(node->func_name, "hard_swish")))
    return NULL;
  const hgr__fusable_t* op = hgr__fusable_op(node->func_name);
  if (!op || node->input_count != 1 || hgr__graph_entry_id(graph, node->inputs[0]) != current ||
      !hgr__pass_only_known_attrs(node, op) || !hgr__pass_all_float32(graph, n) ||
      !hgr__pass_same_shape(&graph->entries[graph->node_row_ptr[n]], &graph->entries[current]))
    return NULL;
  for (uint32_t k = 0; k < 2 && op->params[k]; ++k)
    if (!hgr__pass_fusable_attr(node, op, k, &params[k])) return NULL;
  if (!strcmp(op->name, "clip") && params[0] > params[1]) return NULL; /* the clip op reports it */
  return op;
}

/* The clamp n reading entry `current`: a clip, or a maximum (minimum) of it and a
 * float32 param of one value (a TensorFlow export's Max(LeakyRelu(x), -0.4)); its
 * bounds into clamp. False when n is none. */
static bool clamp_member(const finder_t* f, uint32_t n, uint32_t current, float clamp[2]) {
  const hgr_graph_t* graph = f->graph;
  const hgr__node_t* node = &graph->nodes[n];
  if (!node->is_op || !hgr__pass_all_float32(graph, n) ||
      !hgr__pass_same_shape(&graph->entries[graph->node_row_ptr[n]], &graph->entries[current]))
    return false;
  if (!strcmp(node->func_name, "clip")) return activation_member(graph, n, current, clamp) != NULL;
  bool lower = !strcmp(node->func_name, "maximum");
  if ((!lower && strcmp(node->func_name, "minimum")) || node->input_count != 2) return false;
  for (uint32_t k = 0; k < 2; ++k) {
    const float* value = NULL;
    if (hgr__graph_entry_id(graph, node->inputs[k]) != current ||
        float_param(f, node->inputs[1 - k].node_id, 1, &value) == NONE || isnan(*value))
      continue;
    clamp[0] = lower ? *value : -INFINITY;
    clamp[1] = lower ? INFINITY : *value;
    return true;
  }
  return false;
}

/* Whether node `pool` is a max pool tiling its input that runs in one kernel with
 * conv2d `conv` (hgr__max_pool2d_tiles, hgr__conv2d_pools_in_registers); *window
 * gets its window. */
static bool pool_joins(const hgr_graph_t* graph, uint32_t conv, uint32_t pool, int64_t window[2]) {
  const hgr__node_t* node = &graph->nodes[pool];
  if (!node->is_op || strcmp(node->func_name, "max_pool2d")) return false;
  hgr__op_ctx_t ctx;
  hgr_status_t status = hgr__op_inspect(graph, pool, &ctx);
  bool joins = !status && hgr__max_pool2d_tiles(&ctx, window);
  hgr__op_ctx_free(&ctx);
  hgr_status_free(status);
  if (!joins) return false;
  status = hgr__op_inspect(graph, conv, &ctx);
  joins = !status && hgr__conv2d_pools_in_registers(&ctx, window);
  hgr__op_ctx_free(&ctx);
  hgr_status_free(status);
  return joins;
}

/* Finds conv2d `conv`'s epilogue into e; false when nothing joins. */
static bool find_epilogue(const finder_t* f, uint32_t conv, epilogue_t* e) {
  const hgr_graph_t* graph = f->graph;
  const hgr__node_t* node = &graph->nodes[conv];
  memset(e, 0, sizeof(*e));
  e->reshape = NONE;
  uint32_t current = graph->node_row_ptr[conv];
  int64_t channels = graph->entries[current].shape[1];
  const hgr__entry_t* weight = &graph->entries[hgr__graph_entry_id(graph, node->inputs[1])];
  /* Constants fold only where the bias is a param too (or absent): a bias computed
   * at run time would have to be added to at run time. */
  bool can_shift = node->input_count == 2 || float_param(f, node->inputs[2].node_id, (uint64_t)channels, NULL) != NONE;
  bool can_scale = can_shift && float_param(f, node->inputs[1].node_id, weight->element_count, NULL) != NONE;
  uint32_t next = f->sole_consumer[current];
  if (next != NONE && channel_reshape(graph, next, current)) {
    e->reshape = next;
    current = graph->node_row_ptr[next];
    next = f->sole_consumer[current];
  }
  while (next != NONE && e->member_count < MAX_MEMBERS - 2 && can_shift &&
         affine_member(f, next, current, channels, can_scale, &e->operands[e->member_count])) {
    e->members[e->member_count++] = next;
    current = graph->node_row_ptr[next];
    next = f->sole_consumer[current];
  }
  e->affine_count = e->member_count;
  uint32_t sigmoid, multiply;
  if (next != NONE && (e->activation = activation_member(graph, next, current, e->activation_params)) != NULL) {
    e->members[e->member_count++] = next;
    current = graph->node_row_ptr[next];
    next = f->sole_consumer[current];
  } else if (next == NONE && hgr__pass_silu(graph, graph->entries[current].node_id, current, &sigmoid, &multiply)) {
    e->activation = hgr__fusable_op("silu");
    e->members[e->member_count++] = sigmoid;
    e->members[e->member_count++] = multiply;
    current = graph->node_row_ptr[multiply];
    next = f->sole_consumer[current];
  }
  /* a clamp after a leaky relu: one epilogue, leaky_relu_clip */
  if (next != NONE && e->activation && !strcmp(e->activation->name, "leaky_relu") &&
      (e->clamped = clamp_member(f, next, current, e->clamp))) {
    e->members[e->member_count++] = next;
    current = graph->node_row_ptr[next];
    next = f->sole_consumer[current];
  }
  /* a max pool tiling the result, where one kernel runs the conv and the pool */
  int64_t window[2];
  if (next != NONE && e->reshape == NONE && hgr__graph_entry_id(graph, graph->nodes[next].inputs[0]) == current &&
      pool_joins(graph, conv, next, window)) {
    e->members[e->member_count++] = next;
    memcpy(e->pool, window, sizeof(window));
  }
  return e->member_count > 0;
}

static hgr_status_t find_epilogues(finder_t* f, hgr__fuse_report_t* report) {
  for (uint32_t n = 0; n < f->graph->node_count; ++n) {
    if (!bare_conv2d(f->graph, n)) continue;
    epilogue_t e;
    if (!find_epilogue(f, n, &e)) continue;
    f->epilogue[n] = hgr__alloc(f->allocator, sizeof(e));
    if (!f->epilogue[n]) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, PASS ": out of host memory");
    *f->epilogue[n] = e;
    if (e.reshape != NONE) f->role[e.reshape] = n;
    for (uint32_t m = 0; m < e.member_count; ++m) f->role[e.members[m]] = n;
    report->groups++;
    report->fused_nodes += e.member_count;
  }
  return HGR_OK;
}

/* ---- the new params ------------------------------------------------------------------ */

/* The params a fused conv2d reads instead of its weights and bias, and its name. */
typedef struct folded_t {
  char* name;        /* the fused node's name */
  char* weight_name; /* NULL: the weights stay */
  float* weight;
  char* bias_name; /* NULL: the bias stays (or there is none) */
  float* bias;
  int64_t channels;
} folded_t;

static void folded_free(hgr_allocator_t allocator, folded_t* folded) {
  hgr__free(allocator, folded->name);
  hgr__free(allocator, folded->weight_name);
  hgr__free(allocator, folded->weight);
  hgr__free(allocator, folded->bias_name);
  hgr__free(allocator, folded->bias);
}

/* The state name_taken reads: the finder and the new params' names so far. */
typedef struct naming_t {
  const finder_t* f;
  const folded_t* folded; /* per node */
} naming_t;

/* Whether name is a node's or a param's, or a new param's (hgr__pass_taken_fn of a
 * naming_t; the params through f's sorted names). */
static bool name_taken(const void* user, const char* name) {
  const naming_t* naming = user;
  const finder_t* f = naming->f;
  for (uint32_t n = 0; n < f->graph->node_count; ++n)
    if (!strcmp(f->graph->nodes[n].name, name) ||
        (naming->folded[n].weight_name && !strcmp(naming->folded[n].weight_name, name)) ||
        (naming->folded[n].bias_name && !strcmp(naming->folded[n].bias_name, name)))
      return true;
  param_name_t key = {name, 0};
  return f->param_count && bsearch(&key, f->param_names, f->param_count, sizeof(key), compare_param_names);
}

/* Folds conv's affine members into new weights (when scaled) and bias, in
 * folded[conv]. */
static hgr_status_t fold(const finder_t* f, uint32_t conv, folded_t* folded) {
  folded_t* out = &folded[conv];
  const hgr_graph_t* graph = f->graph;
  const hgr__node_t* node = &graph->nodes[conv];
  const epilogue_t* e = f->epilogue[conv];
  int64_t channels = graph->entries[graph->node_row_ptr[conv]].shape[1];
  out->channels = channels;
  if (!e->affine_count) return HGR_OK;
  double* scale = hgr__alloc(f->allocator, 2 * (size_t)channels * sizeof(double) + 1);
  if (!scale) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, PASS ": out of host memory");
  double* shift = scale + channels;
  for (int64_t k = 0; k < channels; ++k) scale[k] = 1, shift[k] = 0;
  for (uint32_t m = 0; m < e->affine_count; ++m) {
    const hgr__node_t* member = &graph->nodes[e->members[m]];
    hgr_tensor_info_t info;
    const void* data = NULL;
    hgr_status_t status = hgr_params_get(f->params, e->operands[m], &info, &data);
    if (status) {
      hgr__free(f->allocator, scale);
      return status;
    }
    const float* c = data;
    bool multiply = !strcmp(member->func_name, "multiply");
    for (int64_t k = 0; k < channels; ++k) {
      if (multiply) {
        scale[k] *= c[k];
        shift[k] *= c[k];
      } else {
        shift[k] += c[k];
      }
    }
  }
  const hgr__entry_t* w = &graph->entries[hgr__graph_entry_id(graph, node->inputs[1])];
  const float* weight = NULL;
  const float* bias = NULL;
  float_param(f, node->inputs[1].node_id, w->element_count, &weight); /* found by find_epilogue when it scales */
  if (node->input_count == 3) float_param(f, node->inputs[2].node_id, (uint64_t)channels, &bias);
  bool scaled = false;
  for (int64_t k = 0; k < channels; ++k) scaled = scaled || scale[k] != 1;
  out->bias = hgr__alloc(f->allocator, (size_t)channels * sizeof(float) + 1);
  /* "<conv>.bias", or "<conv>.bias#2" ... where it is taken (likewise the weight) */
  const naming_t naming = {f, folded};
  out->bias_name = hgr__pass_unique_name(f->allocator, node->name, "bias", name_taken, &naming);
  if (scaled) {
    out->weight = hgr__alloc(f->allocator, w->element_count * sizeof(float) + 1);
    out->weight_name = hgr__pass_unique_name(f->allocator, node->name, "weight", name_taken, &naming);
  }
  hgr_status_t status = HGR_OK;
  if (!out->bias || !out->bias_name || (scaled && (!out->weight || !out->weight_name)))
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, PASS ": out of host memory for the params of %s", node->name);
  for (int64_t k = 0; !status && k < channels; ++k)
    out->bias[k] = (float)((bias ? bias[k] : 0.0) * scale[k] + shift[k]);
  uint64_t per = channels ? w->element_count / (uint64_t)channels : 0;
  for (uint64_t i = 0; !status && scaled && i < w->element_count; ++i)
    out->weight[i] = (float)(weight[i] * scale[i / per]);
  hgr__free(f->allocator, scale);
  return status;
}

/* ---- the rebuilt graph ---------------------------------------------------------------- */

/* Appends a float32 input node for a new param. */
static hgr_status_t append_param(hgr__pass_rebuild_t* r, const char* name, const hgr__entry_t* like, uint32_t* out_id) {
  hgr__entry_t entry = *like;
  entry.device_key = -1;
  return hgr__graph_edit_append(r->out, name, NULL, NULL, 0, NULL, 0, &entry, 1, out_id);
}

/* The fused conv2d's attrs: the conv2d's own (but its activation), then the
 * activation's and the pool's, whose values come from allocator. */
static hgr_status_t epilogue_attrs(hgr_allocator_t allocator, const hgr__node_t* conv, const epilogue_t* e,
                                   hgr__attr_t** out_attrs, uint32_t* out_count) {
  hgr__attr_t* attrs = hgr__calloc(allocator, conv->attr_count + 6, sizeof(*attrs));
  if (!attrs) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, PASS ": out of host memory");
  uint32_t count = 0;
  for (uint32_t a = 0; a < conv->attr_count; ++a)
    if (strcmp(conv->attrs[a].key, "activation")) attrs[count++] = conv->attrs[a];
  uint32_t own = count;
  if (e->activation) {
    attrs[count++] = (hgr__attr_t){"activation", hgr__format_in(allocator, "%s%s", e->activation->name,
                                                                 e->clamped ? "_clip" : "")};
    for (uint32_t k = 0; k < 2 && e->activation->params[k]; ++k)
      attrs[count++] = (hgr__attr_t){(char*)e->activation->params[k],
                                     hgr__format_in(allocator, "%.9g", e->activation_params[k])};
    for (uint32_t k = 0; k < 2 && e->clamped; ++k)
      attrs[count++] = (hgr__attr_t){k ? "a_max" : "a_min", hgr__format_in(allocator, "%.9g", e->clamp[k])};
  }
  if (e->pool[0])
    attrs[count++] = (hgr__attr_t){"pool_size", hgr__format_in(allocator, "[%lld, %lld]", (long long)e->pool[0],
                                                                (long long)e->pool[1])};
  *out_attrs = attrs;
  *out_count = count;
  for (uint32_t a = own; a < count; ++a)
    if (!attrs[a].value) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, PASS ": out of host memory");
  return HGR_OK;
}

static void free_epilogue_attrs(hgr_allocator_t allocator, const hgr__node_t* conv, hgr__attr_t* attrs,
                                uint32_t count) {
  uint32_t own = 0;
  for (uint32_t a = 0; a < conv->attr_count; ++a) own += strcmp(conv->attrs[a].key, "activation") != 0;
  for (uint32_t a = own; a < count; ++a) hgr__free(allocator, attrs[a].value); /* the epilogue's */
  hgr__free(allocator, attrs);
}

/* Appends the fused conv2d (after its new params) and maps the chain's value to it. */
static hgr_status_t append_fused(const finder_t* f, hgr__pass_rebuild_t* r, uint32_t conv, const folded_t* folded) {
  const hgr_graph_t* graph = f->graph;
  const hgr__node_t* node = &graph->nodes[conv];
  const epilogue_t* e = f->epilogue[conv];
  uint32_t last = e->members[e->member_count - 1];
  hgr__entry_ref_t inputs[3];
  memcpy(inputs, hgr__pass_map_inputs(r, node->inputs, node->input_count), node->input_count * sizeof(*inputs));
  uint32_t input_count = node->input_count;
  if (folded->weight_name) {
    uint32_t id;
    HGR_RETURN_IF_ERROR(
        append_param(r, folded->weight_name, &graph->entries[hgr__graph_entry_id(graph, node->inputs[1])], &id));
    inputs[1] = (hgr__entry_ref_t){id, 0};
  }
  if (folded->bias_name) {
    hgr__entry_t bias = {.dtype = HGR__DTYPE_F32, .ndim = 1, .shape = {folded->channels}};
    uint32_t id;
    HGR_RETURN_IF_ERROR(append_param(r, folded->bias_name, &bias, &id));
    inputs[2] = (hgr__entry_ref_t){id, 0};
    input_count = 3;
  }
  hgr__attr_t* attrs = NULL;
  uint32_t attr_count = 0;
  hgr_status_t status = epilogue_attrs(f->allocator, node, e, &attrs, &attr_count);
  const char* name = e->reshape != NONE ? node->name : graph->nodes[last].name;
  uint32_t like = e->pool[0] ? last : conv; /* the node whose output the fused one gives */
  if (!status)
    status = hgr__graph_edit_append(r->out, name, "conv2d", inputs, input_count, attrs, attr_count,
                                    &graph->entries[graph->node_row_ptr[like]], 1, &r->new_id[conv]);
  if (attrs) free_epilogue_attrs(f->allocator, node, attrs, attr_count);
  HGR_RETURN_IF_ERROR(status);
  HGR_RETURN_IF_ERROR(hgr__pass_check_inferred(r, r->new_id[conv], like, PASS));
  if (e->reshape == NONE) r->new_id[last] = r->new_id[conv];
  return HGR_OK;
}

/* Per node of graph: whether it is an input only folded constants read, which
 * leaves the graph (and params) with them. */
static bool* find_dropped(const finder_t* f, const folded_t* folded) {
  const hgr_graph_t* graph = f->graph;
  uint32_t* uses = hgr__alloc(f->allocator, (graph->entry_count + 1) * sizeof(*uses));
  bool* dropped = hgr__calloc(f->allocator, graph->node_count + 1, sizeof(*dropped));
  if (!uses || !dropped) {
    hgr__free(f->allocator, uses);
    hgr__free(f->allocator, dropped);
    return NULL;
  }
  memcpy(uses, f->uses, graph->entry_count * sizeof(*uses));
  for (uint32_t n = 0; n < graph->node_count; ++n) {
    const epilogue_t* e = f->epilogue[n];
    if (!e) continue;
    const hgr__node_t* node = &graph->nodes[n];
    for (uint32_t m = 0; m < e->affine_count; ++m) {
      const hgr__node_t* member = &graph->nodes[e->members[m]];
      for (uint32_t i = 0; i < 2; ++i) uses[hgr__graph_entry_id(graph, member->inputs[i])]--; /* one is the chain */
    }
    if (e->clamped) { /* the clamp follows the activation; a maximum's or minimum's constant goes with it */
      const hgr__node_t* member = &graph->nodes[e->members[e->affine_count + 1]];
      for (uint32_t i = 0; i < member->input_count; ++i) uses[hgr__graph_entry_id(graph, member->inputs[i])]--;
    }
    if (folded[n].weight_name) uses[hgr__graph_entry_id(graph, node->inputs[1])]--;
    if (folded[n].bias_name && node->input_count == 3) uses[hgr__graph_entry_id(graph, node->inputs[2])]--;
  }
  for (uint32_t n = 0; n < graph->node_count; ++n) {
    uint32_t e = graph->node_row_ptr[n];
    dropped[n] = !graph->nodes[n].is_op && f->uses[e] && !uses[e] &&
                 float_param(f, n, graph->entries[e].element_count, NULL) != NONE;
  }
  hgr__free(f->allocator, uses);
  return dropped;
}

/* Reports conv2d `conv`'s fusion through log: the conv2d and its epilogue's members. */
static void log_fused(const finder_t* f, uint32_t conv, const hgr__pass_log_t* log) {
  const epilogue_t* e = f->epilogue[conv];
  uint32_t replaced[MAX_MEMBERS + 1] = {conv};
  memcpy(&replaced[1], e->members, e->member_count * sizeof(e->members[0]));
  uint32_t named = e->reshape != NONE ? conv : e->members[e->member_count - 1]; /* the name the fused conv2d takes */
  hgr__pass_log_fused(log, f->graph, "conv2d", named, replaced, e->member_count + 1);
}

static hgr_status_t rebuild(const finder_t* f, const folded_t* folded, const bool* dropped, hgr__pass_rebuild_t* r,
                            const hgr__pass_log_t* log) {
  const hgr_graph_t* graph = f->graph;
  hgr_status_t status = HGR_OK;
  for (uint32_t n = 0; !status && n < graph->node_count; ++n) {
    if (dropped[n]) continue;
    if (f->epilogue[n]) {
      status = append_fused(f, r, n, &folded[n]);
      if (!status) log_fused(f, n, log);
    } else if (f->role[n] != NONE && f->epilogue[f->role[n]]->reshape == n) {
      const epilogue_t* e = f->epilogue[f->role[n]];
      uint32_t last = e->members[e->member_count - 1];
      status = hgr__pass_copy_node(r, n, graph->nodes[last].name);
      if (!status) r->new_id[last] = r->new_id[n];
    } else if (f->role[n] == NONE) {
      status = hgr__pass_copy_node(r, n, NULL);
    } /* else a member */
  }
  return status;
}

/* The new params, in a params object of their own (NULL when there are none), with
 * the allocator of f's params (hgr__params_take moves them there). */
static hgr_status_t make_params(const finder_t* f, const folded_t* folded, hgr_params_t** out_made) {
  const hgr_graph_t* graph = f->graph;
  hgr_params_t* made = NULL;
  HGR_RETURN_IF_ERROR(hgr__params_create_in(f->params ? hgr__params_allocator(f->params) : f->allocator, &made));
  hgr_status_t status = HGR_OK;
  for (uint32_t n = 0; !status && n < graph->node_count; ++n) {
    const folded_t* folds = &folded[n];
    if (folds->weight_name) {
      const hgr__entry_t* w = &graph->entries[hgr__graph_entry_id(graph, graph->nodes[n].inputs[1])];
      status = hgr_params_add(made, folds->weight_name, HGR__DTYPE_F32, w->ndim, w->shape, folds->weight,
                              w->element_count * sizeof(float));
    }
    if (!status && folds->bias_name)
      status = hgr_params_add(made, folds->bias_name, HGR__DTYPE_F32, 1, &folds->channels, folds->bias,
                              (size_t)folds->channels * sizeof(float));
  }
  if (status || !hgr_params_count(made)) {
    hgr_params_release(made);
    return status;
  }
  *out_made = made;
  return HGR_OK;
}

hgr_status_t hgr__fuse_conv_epilogue(const hgr_graph_t* graph, const hgr_params_t* params, const hgr__pass_log_t* log,
                                     hgr_graph_t** out_graph, hgr_params_t** out_made, hgr__fuse_report_t* out_report) {
  hgr__fuse_report_t report = {0, 0};
  if (out_report) *out_report = report;
  if (!graph || !out_graph || !out_made) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, PASS ": NULL argument");
  *out_graph = NULL;
  *out_made = NULL;
  HGR_RETURN_IF_ERROR(hgr__pass_check_unplaced(graph, PASS));
  finder_t f;
  hgr_status_t status = finder_init(&f, graph, params);
  if (!status) status = find_epilogues(&f, &report);
  if (!status && report.groups == 0) {
    finder_free(&f);
    *out_graph = hgr_graph_retain((hgr_graph_t*)graph);
    return HGR_OK;
  }
  folded_t* folded = status ? NULL : hgr__calloc(f.allocator, graph->node_count + 1, sizeof(*folded));
  if (!status && !folded) status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, PASS ": out of host memory");
  for (uint32_t n = 0; !status && n < graph->node_count; ++n)
    if (f.epilogue[n]) status = fold(&f, n, folded);
  bool* dropped = status ? NULL : find_dropped(&f, folded);
  if (!status && !dropped) status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, PASS ": out of host memory");
  hgr_graph_t* fused = NULL;
  hgr__pass_rebuild_t r;
  if (!status) status = hgr__pass_rebuild_init(graph, &r);
  if (!status) {
    status = rebuild(&f, folded, dropped, &r, log);
    if (!status) status = hgr__pass_rebuild_finish(&r, &fused);
    hgr__pass_rebuild_free(&r);
  }
  hgr_params_t* made = NULL;
  if (!status) status = make_params(&f, folded, &made);
  for (uint32_t n = 0; folded && n < graph->node_count; ++n) folded_free(f.allocator, &folded[n]);
  hgr__free(f.allocator, folded);
  hgr__free(f.allocator, dropped);
  finder_free(&f);
  if (status) {
    hgr_graph_release(fused);
    return status;
  }
  if (out_report) *out_report = report;
  *out_graph = fused;
  *out_made = made;
  return HGR_OK;
}
