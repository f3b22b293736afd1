/* Attention fusion (passes.h): the attention block as exporters write it becomes one
 * attention node (ops_attention.c), whose kernel never stores the scores:
 *
 *   scores = batch_matmul(q [G, M, dk], k)      k [G, N, dk] (transpose_b) or kᵀ [G, dk, N]
 *   [reshape to [B, H, M, N]]                   the heads' view (B * H = G)
 *   [where(causal, scores, fill)]               before or after the scale: GPT-2's mask
 *   [multiply by a scalar, or divide by one]    the scale: a float32 param of one element
 *   [add a mask]                                float32, broadcasting to the scores
 *   softmax over the last axis
 *   [reshape to [G, M, N]]
 *   out = batch_matmul(probabilities, v [G, N, dv])
 *
 * becomes attention(q, k, v[, mask]) with attrs scale, transpose_k, heads (H of the
 * scores' 4-D view, G when they stay 3-D) and causal, at the place and name of the
 * last batch_matmul. The causal where's condition must be a bool param [1, ..., M,
 * N] true exactly where n <= m + N - M (N >= M: a slice of a lower triangle, as
 * GPT-2 exports take it), its fill a param of -1e30 or below (a masked score then
 * weighs nothing, as a key the kernel leaves out). Every value inside the chain
 * must have that one consumer and be no graph output; the mask must not widen the
 * scores (their shape is the add's output); q, k and v must hold all G matrices (no
 * batch of 1 that broadcasts); head sizes up to 128 (the op's). The conditions are
 * on structure, attrs and constants, never on extents alone, so every shape of a
 * model fuses the same blocks. The params only the fused nodes read (the scale, the
 * causal mask and its fill) leave the graph and the params. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "passes.h"

#define PASS "fusing attention blocks"
#define NONE HGR__PASS_NONE

typedef struct block_t {
  uint32_t q, k, v, mask;  /* entries (mask NONE: none) */
  uint32_t scale_node;     /* the scale's param input node, or NONE */
  double scale;
  bool transpose_k, causal;
  int64_t heads;
  uint32_t members[8]; /* the nodes it replaces besides its last batch_matmul */
  uint32_t member_count;
} block_t;

typedef struct finder_t {
  hgr_allocator_t allocator;
  const hgr_graph_t* graph;
  const hgr_params_t* params;
  uint32_t* uses;   /* per entry: input references, plus 1 per graph output */
  bool* head;       /* per entry: a graph output */
  block_t** block;  /* per node: the block whose last batch_matmul it is, or NULL */
  bool* member;     /* per node: inside a block (not its last batch_matmul) */
} finder_t;

static const hgr__entry_t* entry_of(const hgr_graph_t* graph, hgr__entry_ref_t ref) {
  return &graph->entries[hgr__graph_entry_id(graph, ref)];
}

static bool is_op(const hgr_graph_t* graph, uint32_t n, const char* op) {
  return graph->nodes[n].is_op && !strcmp(graph->nodes[n].func_name, op);
}

/* Whether entry e is read once, by its one consumer, and is no graph output. */
static bool sole_use(const finder_t* f, uint32_t e) {
  return f->uses[e] == 1;
}

/* Node n's bool or int attr as its op reads it; false when the op does not take it. */
static bool node_int_attr(const hgr_graph_t* graph, uint32_t n, const char* key, int64_t fallback, int64_t* out) {
  hgr__op_ctx_t ctx;
  hgr_status_t status = hgr__op_inspect(graph, n, &ctx);
  if (!status) {
    bool flag;
    status = strcmp(key, "axis") ? hgr__attr_bool(&ctx, key, fallback != 0, &flag)
                                 : hgr__attr_int(&ctx, key, fallback, out);
    if (!status && strcmp(key, "axis")) *out = flag;
    hgr__op_ctx_free(&ctx);
  }
  bool ok = !status;
  hgr_status_free(status);
  return ok;
}

/* The node producing input i of node n, when that value has n as its only use. */
static uint32_t sole_producer(const finder_t* f, uint32_t n, uint32_t i) {
  hgr__entry_ref_t ref = f->graph->nodes[n].inputs[i];
  if (!sole_use(f, hgr__graph_entry_id(f->graph, ref))) return NONE;
  return ref.node_id;
}

/* A batch_matmul without transpose_a; *transpose_b gets its attr. */
static bool plain_batch_matmul(const hgr_graph_t* graph, uint32_t n, bool* transpose_b) {
  int64_t ta, tb;
  if (!is_op(graph, n, "batch_matmul") || !node_int_attr(graph, n, "transpose_a", 0, &ta) || ta ||
      !node_int_attr(graph, n, "transpose_b", 1, &tb))
    return false;
  *transpose_b = tb != 0;
  return true;
}

/* The value of the float32 param of one element that input node n is. */
static bool scalar_param(const finder_t* f, uint32_t n, double* out) {
  const void* data = hgr__pass_param_data(f->graph, f->params, n, HGR__DTYPE_F32, sizeof(float));
  if (!data) return false;
  float value;
  memcpy(&value, data, sizeof(value));
  *out = value;
  return isfinite(value) || value == -INFINITY;
}

/* Whether input node n is a bool param [1, ..., M, N] holding a causal mask: true
 * exactly where n <= m + N - M (a GPT-2 export's slice of its lower triangle), with
 * N >= M, so that every row keeps a key. */
static bool causal_param(const finder_t* f, uint32_t n, int64_t m_rows, int64_t n_keys) {
  const hgr__entry_t* e = &f->graph->entries[f->graph->node_row_ptr[n]];
  if (e->ndim < 2 || e->shape[e->ndim - 2] != m_rows || e->shape[e->ndim - 1] != n_keys || n_keys < m_rows)
    return false;
  if (e->element_count != (uint64_t)(m_rows * n_keys)) return false;
  const hgr_dtype_t bool_dtype = {HGR_DTYPE_UINT, 1, 1};
  const uint8_t* keep = hgr__pass_param_data(f->graph, f->params, n, bool_dtype, e->element_count);
  if (!keep) return false;
  for (int64_t m = 0; m < m_rows; ++m)
    for (int64_t k = 0; k < n_keys; ++k)
      if ((keep[m * n_keys + k] != 0) != (k <= m + n_keys - m_rows)) return false;
  return true;
}

/* The steps of a block between its softmax and its scores, walking back: each
 * takes node *n when it is that step (its chain input read by it alone), records
 * it in b and members, and moves *n to the chain's producer. */
typedef struct walk_t {
  finder_t* f;
  block_t* b;
  uint32_t members[8];
  uint32_t count;
} walk_t;

static void take(walk_t* w, uint32_t* n, uint32_t chain_input) {
  w->members[w->count++] = *n;
  *n = w->f->graph->nodes[*n].inputs[chain_input].node_id;
}

/* add(scores, mask): a float32 mask of rank up to 4 that does not widen the scores. */
static void mask_step(walk_t* w, uint32_t* n) {
  const hgr_graph_t* graph = w->f->graph;
  if (*n == NONE || !is_op(graph, *n, "add") || graph->nodes[*n].input_count != 2) return;
  const hgr__node_t* add = &graph->nodes[*n];
  const hgr__entry_t* out = &graph->entries[graph->node_row_ptr[*n]];
  for (uint32_t i = 0; i < 2; ++i) {
    const hgr__entry_t* in = entry_of(graph, add->inputs[i]);
    const hgr__entry_t* other = entry_of(graph, add->inputs[1 - i]);
    bool same = in->ndim == out->ndim;
    for (int32_t d = 0; same && d < out->ndim; ++d) same = in->shape[d] == out->shape[d];
    if (same && other->ndim <= 4 && hgr__dtype_same(other->dtype, HGR__DTYPE_F32) &&
        sole_use(w->f, hgr__graph_entry_id(graph, add->inputs[i]))) {
      w->b->mask = hgr__graph_entry_id(graph, add->inputs[1 - i]);
      take(w, n, i);
      return;
    }
  }
}

/* where(causal, scores, fill): a causal bool param, a fill of -1e30 or below (a
 * masked score then weighs exp(fill - max) = 0, as the kernel's left-out key). */
static void causal_step(walk_t* w, uint32_t* n) {
  const hgr_graph_t* graph = w->f->graph;
  if (w->b->causal || *n == NONE || !is_op(graph, *n, "where") || graph->nodes[*n].input_count != 3) return;
  const hgr__node_t* where = &graph->nodes[*n];
  const hgr__entry_t* out = &graph->entries[graph->node_row_ptr[*n]];
  double fill;
  if (out->ndim < 2 || !sole_use(w->f, hgr__graph_entry_id(graph, where->inputs[1])) ||
      !scalar_param(w->f, where->inputs[2].node_id, &fill) || fill > -1e30 ||
      !causal_param(w->f, where->inputs[0].node_id, out->shape[out->ndim - 2], out->shape[out->ndim - 1]))
    return;
  const hgr__entry_t* in = entry_of(graph, where->inputs[1]);
  bool same = in->ndim == out->ndim;
  for (int32_t d = 0; same && d < out->ndim; ++d) same = in->shape[d] == out->shape[d];
  if (!same) return;
  w->b->causal = true;
  take(w, n, 1);
}

/* multiply(scores, scalar) either way round, or divide(scores, scalar). */
static void scale_step(walk_t* w, uint32_t* n) {
  const hgr_graph_t* graph = w->f->graph;
  if (*n == NONE || w->b->scale_node != NONE || graph->nodes[*n].input_count != 2) return;
  bool divide = is_op(graph, *n, "divide");
  if (!divide && !is_op(graph, *n, "multiply")) return;
  const hgr__node_t* scaling = &graph->nodes[*n];
  for (uint32_t i = 0; i < (divide ? 1u : 2u); ++i) {
    double value = 0;
    if (scalar_param(w->f, scaling->inputs[1 - i].node_id, &value) && isfinite(value) && (!divide || value != 0) &&
        sole_use(w->f, hgr__graph_entry_id(graph, scaling->inputs[i]))) {
      w->b->scale = divide ? 1.0 / value : value;
      w->b->scale_node = scaling->inputs[1 - i].node_id;
      take(w, n, i);
      return;
    }
  }
}

/* Walks back from batch_matmul `last` (probabilities x v) to the scores'
 * batch_matmul, marking the members; false when the chain is not an attention block. */
static bool find_block(finder_t* f, uint32_t last, block_t* b) {
  const hgr_graph_t* graph = f->graph;
  bool transpose_v;
  if (!plain_batch_matmul(graph, last, &transpose_v) || transpose_v) return false;
  walk_t w = {f, b, {0}, 0};
  b->mask = NONE;
  b->scale = 1.0;
  b->scale_node = NONE;
  b->causal = false;
  uint32_t n = sole_producer(f, last, 0);
  if (n != NONE && is_op(graph, n, "reshape")) take(&w, &n, 0);
  if (n == NONE || !sole_use(f, graph->node_row_ptr[n])) return false;
  int64_t axis;
  if (!is_op(graph, n, "softmax") || !node_int_attr(graph, n, "axis", -1, &axis)) return false;
  const hgr__entry_t* scores = entry_of(graph, graph->nodes[n].inputs[0]);
  if ((scores->ndim != 3 && scores->ndim != 4) || (axis != -1 && axis != scores->ndim - 1)) return false;
  take(&w, &n, 0);
  /* the orders exporters write: [add mask] [where causal] [scale] [where causal] */
  mask_step(&w, &n);
  causal_step(&w, &n);
  scale_step(&w, &n);
  causal_step(&w, &n);
  if (n != NONE && is_op(graph, n, "reshape") && sole_use(f, hgr__graph_entry_id(graph, graph->nodes[n].inputs[0])))
    take(&w, &n, 0);
  bool transpose_k;
  if (n == NONE || !plain_batch_matmul(graph, n, &transpose_k) || !sole_use(f, graph->node_row_ptr[n])) return false;
  w.members[w.count++] = n;
  const hgr__entry_t* q = entry_of(graph, graph->nodes[n].inputs[0]);
  const hgr__entry_t* k = entry_of(graph, graph->nodes[n].inputs[1]);
  const hgr__entry_t* v = entry_of(graph, graph->nodes[last].inputs[1]);
  int64_t g = q->shape[0];
  if (k->shape[0] != g || v->shape[0] != g || q->shape[2] > 128 || v->shape[2] > 128) return false;
  b->q = hgr__graph_entry_id(graph, graph->nodes[n].inputs[0]);
  b->k = hgr__graph_entry_id(graph, graph->nodes[n].inputs[1]);
  b->v = hgr__graph_entry_id(graph, graph->nodes[last].inputs[1]);
  b->transpose_k = transpose_k;
  b->heads = scores->ndim == 4 ? scores->shape[1] : scores->shape[0];
  for (uint32_t i = 0; i < w.count; ++i)
    if (f->block[w.members[i]]) return false; /* the last node of an earlier block */
  for (uint32_t i = 0; i < w.count; ++i) f->member[w.members[i]] = true;
  memcpy(b->members, w.members, sizeof(w.members));
  b->member_count = w.count;
  return true;
}

static void finder_free(finder_t* f) {
  for (uint32_t n = 0; f->block && n < f->graph->node_count; ++n) hgr__free(f->allocator, f->block[n]);
  hgr__free(f->allocator, f->uses);
  hgr__free(f->allocator, f->head);
  hgr__free(f->allocator, f->block);
  hgr__free(f->allocator, f->member);
}

static hgr_status_t find_blocks(finder_t* f, const hgr_graph_t* graph, const hgr_params_t* params,
                                hgr__fuse_report_t* report) {
  memset(f, 0, sizeof(*f));
  f->allocator = hgr__graph_allocator(graph);
  f->graph = graph;
  f->params = params;
  f->uses = hgr__calloc(f->allocator, graph->entry_count + 1, sizeof(*f->uses));
  f->head = hgr__calloc(f->allocator, graph->entry_count + 1, sizeof(*f->head));
  f->block = hgr__calloc(f->allocator, graph->node_count + 1, sizeof(*f->block));
  f->member = hgr__calloc(f->allocator, graph->node_count + 1, sizeof(*f->member));
  if (!f->uses || !f->head || !f->block || !f->member)
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, PASS ": out of host memory for a graph of %u nodes",
                      graph->node_count);
  hgr__pass_count_uses(graph, f->uses, f->head);
  for (uint32_t n = 0; n < graph->node_count; ++n) {
    block_t b;
    if (f->member[n] || !find_block(f, n, &b)) continue;
    f->block[n] = hgr__alloc(f->allocator, sizeof(b));
    if (!f->block[n]) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, PASS ": out of host memory");
    *f->block[n] = b;
    report->groups++;
    report->fused_nodes += 1;
  }
  for (uint32_t n = 0; n < graph->node_count; ++n) report->fused_nodes += f->member[n];
  return HGR_OK;
}

/* Whether input node n is a param (a scale, a causal mask, its fill) that only
 * the fused blocks' members read and no fused node takes as its input (a constant
 * mask, q, k or v): it leaves the graph, and hgr_passes_apply drops its param. */
static bool param_dropped(const finder_t* f, uint32_t n) {
  const hgr_graph_t* graph = f->graph;
  size_t index;
  hgr_status_t missing = f->params ? hgr_params_find(f->params, graph->nodes[n].name, &index) : NULL;
  hgr_status_free(missing);
  if (!f->params || missing) return false;
  for (uint32_t b = 0; b < graph->node_count; ++b) { /* a fused node's own input stays */
    const block_t* block = f->block[b];
    for (uint32_t i = 0; block && i < 4; ++i) {
      uint32_t e = i == 0 ? block->q : i == 1 ? block->k : i == 2 ? block->v : block->mask;
      if (e != NONE && graph->entries[e].node_id == n) return false;
    }
  }
  uint32_t member_reads = 0;
  for (uint32_t c = 0; c < graph->node_count; ++c)
    for (uint32_t i = 0; f->member[c] && i < graph->nodes[c].input_count; ++i)
      member_reads += graph->nodes[c].inputs[i].node_id == n;
  return member_reads && member_reads == f->uses[graph->node_row_ptr[n]];
}

static hgr_status_t append_attention(const finder_t* f, const hgr__pass_log_t* log, hgr__pass_rebuild_t* r,
                                     uint32_t n) {
  const hgr_graph_t* graph = f->graph;
  const block_t* b = f->block[n];
  uint32_t entries[4] = {b->q, b->k, b->v, b->mask};
  uint32_t count = b->mask == NONE ? 3 : 4;
  for (uint32_t i = 0; i < count; ++i) {
    const hgr__entry_t* in = &graph->entries[entries[i]];
    r->refs[i] = (hgr__entry_ref_t){r->new_id[in->node_id], entries[i] - graph->node_row_ptr[in->node_id]};
  }
  char scale[32], heads[24];
  snprintf(scale, sizeof(scale), "%.9g", b->scale);
  snprintf(heads, sizeof(heads), "%lld", (long long)b->heads);
  hgr__attr_t attrs[4] = {{"scale", scale},
                           {"transpose_k", b->transpose_k ? "1" : "0"},
                           {"heads", heads},
                           {"causal", "1"}};
  HGR_RETURN_IF_ERROR(hgr__graph_edit_append(r->out, graph->nodes[n].name, "attention", r->refs, count, attrs,
                                             b->causal ? 4 : 3,
                                             &graph->entries[graph->node_row_ptr[n]], 1, &r->new_id[n]));
  HGR_RETURN_IF_ERROR(hgr__pass_check_inferred(r, r->new_id[n], n, PASS));
  hgr__pass_log_fused(log, graph, "attention", n, b->members, b->member_count);
  return HGR_OK;
}

/* Appends every node of f->graph to r->out: a block as its attention node at its
 * last batch_matmul, its members and the params only they read left out. */
static hgr_status_t rebuild(const void* pass, const hgr__pass_log_t* log, hgr__pass_rebuild_t* r) {
  const finder_t* f = pass;
  const hgr_graph_t* graph = f->graph;
  hgr_status_t status = HGR_OK;
  for (uint32_t n = 0; !status && n < graph->node_count; ++n) {
    if (f->block[n])
      status = append_attention(f, log, r, n);
    else if (!f->member[n] && !(!graph->nodes[n].is_op && param_dropped(f, n)))
      status = hgr__pass_copy_node(r, n, NULL);
  }
  return status;
}

hgr_status_t hgr__fuse_attention(const hgr_graph_t* graph, const hgr_params_t* params, const hgr__pass_log_t* log,
                                 hgr_graph_t** out_graph, hgr__fuse_report_t* out_report) {
  hgr__fuse_report_t report = {0, 0};
  if (out_report) *out_report = report;
  if (!graph || !out_graph) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, PASS ": NULL argument");
  *out_graph = NULL;
  HGR_RETURN_IF_ERROR(hgr__pass_check_unplaced(graph, PASS));
  finder_t f;
  hgr_status_t status = find_blocks(&f, graph, params, &report);
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
