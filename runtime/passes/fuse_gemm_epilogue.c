/* GEMM epilogue fusion (passes.h): a dense, matmul or batch_matmul followed by the
 * add of a bias per column and an activation becomes that GEMM with the epilogue
 * (ops_linalg.c: bias input 2, attr "activation"), which kernels/linalg.cl applies
 * to each tile of C before storing it: the bias add and the activation then cost
 * neither a launch nor a pass over C in memory.
 *
 *   gemm                                   dense, matmul or batch_matmul, float32
 *   [reshape keeping the last axis]        ONNX MatMul of [B, S, K] runs as a matmul of [B * S, K]
 *   [add a float32 param [N]]              either input order; only when the GEMM has no bias
 *   [relu | leaky_relu | clip | sigmoid | hard_swish | gelu | gelu_tanh | silu]
 *
 * (silu: a sigmoid and the multiply of its input by it, torch.onnx's nn.SiLU)
 *
 * (at least the add or the activation). N is the GEMM's output columns; the bias
 * broadcasts over the last axis, as the GEMM's per-column bias adds it, and the add
 * must not widen its other operand. Adding a per-column vector and applying an
 * elementwise function commute with a reshape that keeps the last axis, so the
 * chain moves before it. Every value inside the chain must have that one consumer
 * and be no graph output. Without params only the activation joins (the bias must be
 * a param: a constant shape, so that every shape of a model fuses the same nodes).
 *
 * The fused GEMM goes at the chain's last node's place (the bias param may come
 * after the GEMM in node order; every node in between reads nothing of the chain)
 * and takes the last node's name, so that output names stay; with a reshape the
 * GEMM keeps its name and the reshape, reading the fused GEMM, takes the last
 * node's. The bias stays a param the fused GEMM reads.
 *
 * It runs after pattern fusion (which makes the gelu nodes out of their written-out
 * forms) and before elementwise fusion (which would take the add and the activation
 * into a fused_elementwise node). */
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "passes.h"

#define PASS "fusing GEMM epilogues"
#define NONE HGR__PASS_NONE

/* A GEMM's epilogue as found. */
typedef struct epilogue_t {
  uint32_t reshape;                 /* NONE, or the reshape between the GEMM and the chain */
  uint32_t add;                     /* NONE, or the add of the bias */
  uint32_t bias;                    /* the bias entry (the add's operand), when add is not NONE */
  uint32_t activation;              /* NONE, or the activation node (silu: the multiply) */
  const hgr__fusable_t* act;        /* the activation's op */
  float act_params[2];              /* its alpha, or a_min and a_max */
  uint32_t members[4];              /* reshape, add, activation (silu: sigmoid, multiply), those present, in order */
  uint32_t member_count;
  uint32_t last;                    /* the last member: its output is the chain's */
} epilogue_t;

typedef struct finder_t {
  hgr_allocator_t allocator;
  const hgr_graph_t* graph;
  const hgr_params_t* params; /* may be NULL */
  uint32_t* sole_consumer;    /* per entry: the one node reading it once, NONE when read otherwise or an output */
  epilogue_t** epilogue;      /* per GEMM node: its epilogue, or NULL */
  uint32_t* fused_at;         /* per node: the GEMM whose chain it ends (appended there), or NONE */
  bool* member;               /* per node: a GEMM with an epilogue, or a member of one (appended elsewhere) */
} finder_t;

static void finder_free(finder_t* f) {
  for (uint32_t n = 0; f->epilogue && n < f->graph->node_count; ++n) hgr__free(f->allocator, f->epilogue[n]);
  hgr__free(f->allocator, f->sole_consumer);
  hgr__free(f->allocator, f->epilogue);
  hgr__free(f->allocator, f->fused_at);
  hgr__free(f->allocator, f->member);
}

static hgr_status_t finder_init(finder_t* f, const hgr_graph_t* graph, const hgr_params_t* params) {
  memset(f, 0, sizeof(*f));
  f->allocator = hgr__graph_allocator(graph);
  f->graph = graph;
  f->params = params;
  f->sole_consumer = hgr__pass_sole_consumers(graph);
  f->epilogue = hgr__calloc(f->allocator, graph->node_count + 1, sizeof(*f->epilogue));
  f->fused_at = hgr__alloc(f->allocator, (graph->node_count + 1) * sizeof(*f->fused_at));
  f->member = hgr__calloc(f->allocator, graph->node_count + 1, sizeof(*f->member));
  if (!f->sole_consumer || !f->epilogue || !f->fused_at || !f->member)
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, PASS ": out of host memory for a graph of %u nodes",
                      graph->node_count);
  for (uint32_t n = 0; n < graph->node_count; ++n) f->fused_at[n] = NONE;
  return HGR_OK;
}

static bool is_op(const hgr__node_t* node, const char* op) { return node->is_op && !strcmp(node->func_name, op); }

/* The GEMM the pass may give an epilogue: float32, one output, no activation yet. */
static bool bare_gemm(const hgr_graph_t* graph, uint32_t n) {
  const hgr__node_t* node = &graph->nodes[n];
  if (!(is_op(node, "dense") || is_op(node, "matmul") || is_op(node, "batch_matmul")) || node->num_outputs != 1 ||
      node->input_count < 2 || node->input_count > 3 || !hgr__pass_all_float32(graph, n) ||
      graph->entries[graph->node_row_ptr[n]].ndim < 1)
    return false;
  const char* activation = hgr__node_attr(node, "activation");
  return (!activation || !strcmp(activation, "none")) && !hgr__node_attr(node, "alpha") &&
         !hgr__node_attr(node, "a_min") && !hgr__node_attr(node, "a_max");
}

/* Whether node n is a reshape of entry `from` that keeps its last axis (`columns`). */
static bool column_reshape(const hgr_graph_t* graph, uint32_t n, uint32_t from, int64_t columns) {
  const hgr__node_t* node = &graph->nodes[n];
  if (!is_op(node, "reshape") || node->num_outputs != 1 || node->input_count != 1) return false;
  const hgr__entry_t* out = &graph->entries[graph->node_row_ptr[n]];
  return out->ndim >= 1 && out->shape[out->ndim - 1] == columns &&
         hgr__dtype_same(out->dtype, graph->entries[from].dtype);
}

/* Whether node n is the add of a float32 param [columns] to entry `current`, the
 * add's output shaped like current; *out_bias gets the param's entry. */
static bool bias_add(const finder_t* f, uint32_t n, uint32_t current, int64_t columns, uint32_t* out_bias) {
  const hgr_graph_t* graph = f->graph;
  const hgr__node_t* node = &graph->nodes[n];
  if (!is_op(node, "add") || node->input_count != 2 || !hgr__pass_only_known_attrs(node, NULL) ||
      !hgr__pass_all_float32(graph, n))
    return false;
  uint32_t a = hgr__graph_entry_id(graph, node->inputs[0]), b = hgr__graph_entry_id(graph, node->inputs[1]);
  if ((a == current) == (b == current)) return false; /* x + x, or not reading current */
  uint32_t bias = a == current ? b : a;
  const hgr__entry_t* operand = &graph->entries[bias];
  if (operand->ndim != 1 || operand->shape[0] != columns ||
      !hgr__pass_same_shape(&graph->entries[graph->node_row_ptr[n]], &graph->entries[current]) ||
      bias != graph->node_row_ptr[operand->node_id] ||
      !hgr__pass_param_data(graph, f->params, operand->node_id, HGR__DTYPE_F32, (uint64_t)columns * sizeof(float)))
    return false;
  *out_bias = bias;
  return true;
}

/* The activation node n reading entry `current` (relu, leaky_relu, clip, sigmoid,
 * hard_swish, gelu, gelu_tanh), with its params in params; NULL when n is none. */
static const hgr__fusable_t* activation(const hgr_graph_t* graph, uint32_t n, uint32_t current, float* params) {
  static const char* const names[] = {"relu", "leaky_relu", "clip", "sigmoid", "hard_swish", "gelu", "gelu_tanh"};
  const hgr__node_t* node = &graph->nodes[n];
  bool known = false;
  for (size_t k = 0; k < sizeof(names) / sizeof(names[0]) && !known; ++k) known = is_op(node, names[k]);
  const hgr__fusable_t* op = known ? hgr__fusable_op(node->func_name) : NULL;
  if (!op || node->input_count != 1 || hgr__graph_entry_id(graph, node->inputs[0]) != current ||
      !hgr__pass_only_known_attrs(node, op) || !hgr__pass_all_float32(graph, n) ||
      !hgr__pass_same_shape(&graph->entries[graph->node_row_ptr[n]], &graph->entries[current]))
    return NULL;
  for (uint32_t k = 0; k < 2 && op->params[k]; ++k)
    if (!hgr__pass_fusable_attr(node, op, k, &params[k])) return NULL;
  if (!strcmp(op->name, "clip") && params[0] > params[1]) return NULL; /* the clip op reports it */
  return op;
}

/* Finds GEMM `gemm`'s epilogue into e; false when nothing joins. */
static bool find_epilogue(const finder_t* f, uint32_t gemm, epilogue_t* e) {
  const hgr_graph_t* graph = f->graph;
  memset(e, 0, sizeof(*e));
  e->reshape = e->add = e->activation = e->bias = NONE;
  uint32_t current = graph->node_row_ptr[gemm];
  const hgr__entry_t* out = &graph->entries[current];
  int64_t columns = out->shape[out->ndim - 1];
  uint32_t next = f->sole_consumer[current];
  if (next != NONE && column_reshape(graph, next, current, columns)) {
    e->reshape = next;
    e->members[e->member_count++] = next;
    current = graph->node_row_ptr[next];
    next = f->sole_consumer[current];
  }
  if (next != NONE && graph->nodes[gemm].input_count == 2 && bias_add(f, next, current, columns, &e->bias)) {
    e->add = next;
    e->members[e->member_count++] = next;
    current = graph->node_row_ptr[next];
    next = f->sole_consumer[current];
  }
  uint32_t sigmoid, multiply;
  if (next != NONE && (e->act = activation(graph, next, current, e->act_params)) != NULL) {
    e->activation = next;
    e->members[e->member_count++] = next;
  } else if (next == NONE && hgr__pass_silu(graph, graph->entries[current].node_id, current, &sigmoid, &multiply)) {
    e->act = hgr__fusable_op("silu");
    e->activation = multiply;
    e->members[e->member_count++] = sigmoid;
    e->members[e->member_count++] = multiply;
  }
  if (e->add == NONE && e->activation == NONE) return false;
  e->last = e->members[e->member_count - 1];
  return true;
}

static hgr_status_t find_epilogues(finder_t* f, hgr__fuse_report_t* report) {
  for (uint32_t n = 0; n < f->graph->node_count; ++n) {
    if (!bare_gemm(f->graph, n)) continue;
    epilogue_t e;
    if (!find_epilogue(f, n, &e)) continue;
    f->epilogue[n] = hgr__alloc(f->allocator, sizeof(e));
    if (!f->epilogue[n]) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, PASS ": out of host memory");
    *f->epilogue[n] = e;
    f->member[n] = true;
    for (uint32_t m = 0; m < e.member_count; ++m) f->member[e.members[m]] = true;
    f->fused_at[e.last] = n;
    report->groups++;
    report->fused_nodes += e.member_count - (e.reshape != NONE); /* the reshape stays */
  }
  return HGR_OK;
}

/* ---- the rebuilt graph ---------------------------------------------------------------- */

/* Appends GEMM `gemm` with its epilogue (and the reshape after it, when the chain
 * had one) at its chain's last node, which the result stands for. */
static hgr_status_t append_fused(const finder_t* f, const hgr__pass_log_t* log, hgr__pass_rebuild_t* r,
                                 uint32_t gemm) {
  const hgr_graph_t* graph = f->graph;
  const hgr__node_t* node = &graph->nodes[gemm];
  const epilogue_t* e = f->epilogue[gemm];
  hgr__entry_ref_t inputs[3];
  memcpy(inputs, hgr__pass_map_inputs(r, node->inputs, node->input_count), node->input_count * sizeof(*inputs));
  uint32_t input_count = node->input_count;
  if (e->add != NONE) {
    const hgr__entry_t* bias = &graph->entries[e->bias];
    inputs[input_count++] = (hgr__entry_ref_t){r->new_id[bias->node_id], e->bias - graph->node_row_ptr[bias->node_id]};
  }
  /* the GEMM's attrs (none is an activation: bare_gemm), then the activation's */
  hgr__attr_t* attrs = hgr__alloc(f->allocator, ((size_t)node->attr_count + 3) * sizeof(*attrs));
  if (!attrs) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, PASS ": out of host memory");
  memcpy(attrs, node->attrs, node->attr_count * sizeof(*attrs));
  uint32_t attr_count = node->attr_count;
  char values[2][32];
  if (e->act) {
    attrs[attr_count++] = (hgr__attr_t){"activation", (char*)e->act->name};
    for (uint32_t k = 0; k < 2 && e->act->params[k]; ++k) {
      snprintf(values[k], sizeof(values[k]), "%.9g", e->act_params[k]);
      attrs[attr_count++] = (hgr__attr_t){(char*)e->act->params[k], values[k]};
    }
  }
  /* with a reshape the GEMM gives its own output, shaped as before */
  uint32_t like = e->reshape != NONE ? gemm : e->last;
  const char* name = e->reshape != NONE ? node->name : graph->nodes[e->last].name;
  hgr_status_t status = hgr__graph_edit_append(r->out, name, node->func_name, inputs, input_count, attrs, attr_count,
                                               &graph->entries[graph->node_row_ptr[like]], 1, &r->new_id[gemm]);
  hgr__free(f->allocator, attrs);
  HGR_RETURN_IF_ERROR(status);
  HGR_RETURN_IF_ERROR(hgr__pass_check_inferred(r, r->new_id[gemm], like, PASS));
  if (e->reshape != NONE) {
    HGR_RETURN_IF_ERROR(hgr__pass_copy_node(r, e->reshape, graph->nodes[e->last].name));
    r->new_id[e->last] = r->new_id[e->reshape];
  } else {
    r->new_id[e->last] = r->new_id[gemm];
  }
  /* the log names the fused node by the name it takes, and every node it replaced */
  uint32_t replaced[4] = {gemm};
  uint32_t count = 1;
  for (uint32_t m = 0; m < e->member_count; ++m)
    if (e->members[m] != e->reshape) replaced[count++] = e->members[m];
  hgr__pass_log_fused(log, graph, node->func_name, e->reshape != NONE ? gemm : e->last, replaced, count);
  return HGR_OK;
}

/* Appends every node of f->graph to r->out: each GEMM with an epilogue at its
 * chain's last node, the chain's members left out. */
static hgr_status_t rebuild(const void* pass, const hgr__pass_log_t* log, hgr__pass_rebuild_t* r) {
  const finder_t* f = pass;
  hgr_status_t status = HGR_OK;
  for (uint32_t n = 0; !status && n < f->graph->node_count; ++n) {
    if (f->fused_at[n] != NONE) status = append_fused(f, log, r, f->fused_at[n]);
    else if (!f->member[n]) status = hgr__pass_copy_node(r, n, NULL);
  }
  return status;
}

hgr_status_t hgr__fuse_gemm_epilogue(const hgr_graph_t* graph, const hgr_params_t* params, const hgr__pass_log_t* log,
                                     hgr_graph_t** out_graph, hgr__fuse_report_t* out_report) {
  hgr__fuse_report_t report = {0, 0};
  if (out_report) *out_report = report;
  if (!graph || !out_graph) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, PASS ": NULL argument");
  *out_graph = NULL;
  HGR_RETURN_IF_ERROR(hgr__pass_check_unplaced(graph, PASS));
  finder_t f;
  hgr_status_t status = finder_init(&f, graph, params);
  if (!status) status = find_epilogues(&f, &report);
  if (!status && report.groups == 0) {
    finder_free(&f);
    *out_graph = hgr_graph_retain((hgr_graph_t*)graph);
    return HGR_OK;
  }
  hgr_graph_t* fused = NULL;
  if (!status) status = hgr__pass_rebuild(graph, rebuild, &f, log, &fused);
  finder_free(&f);
  if (status) return status;
  if (out_report) *out_report = report;
  *out_graph = fused;
  return HGR_OK;
}
