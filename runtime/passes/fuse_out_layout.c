/* Output layout fusion (passes.h): a transpose after a GEMM or attention becomes the
 * producer's output layout, so that the producer's kernel stores its result where the
 * transpose would have put it:
 *
 *   producer                     dense, matmul, batch_matmul, attention or strided_slice,
 *                                float32
 *   [reshape ...]                any number, the last giving the view of rank <= 4
 *   transpose                    the view's axes permuted
 *   [transpose]                  a second one composes with the first
 *
 * becomes the producer with attrs out_shape (the view) and out_axes (the composed
 * permutation) (ops.h, hgr__out_layout_t), at the last transpose's place and name.
 * Exports of transformers write the heads this way: q, k and v split into heads
 * after their projections ([B, S, H, D] -> [B, H, S, D], keys once more to
 * [B, H, D, S]) and the heads joined again after attention ([B, H, S, D] -> [B, S,
 * H, D]): each a launch and a pass over the tensor, five per layer of an encoder.
 * Attention takes only layouts that keep the view's last axis last with a multiple
 * of its head size there (each output row one run: the heads' join); a strided_slice
 * only views that split its dims (hgr__view_splits: q, k and v sliced out of one
 * fused projection, as ONNX Runtime's optimized exports have them, each slice then
 * one gather straight into the heads' layout). Every value
 * inside the chain must have that one consumer and be no graph output; a producer
 * that has a layout already is left alone. The conditions are on structure and
 * attrs, never on extents alone, so every shape of a model fuses the same nodes.
 *
 * After the GEMM epilogue fusion (whose chain the layout's reshape would otherwise
 * hide) and the attention fusion (which makes the attention nodes). */
#include <string.h>

#include "alloc.h"
#include "passes.h"

#define PASS "fusing transposes into output layouts"
#define NONE HGR__PASS_NONE

/* A producer's chain as found. */
typedef struct chain_t {
  uint32_t members[8]; /* the reshapes and transposes, in order */
  uint32_t member_count;
  int64_t view[4];     /* the first transpose's input shape */
  int64_t axes[4];     /* the transposes' composed permutation of the view's axes */
  int32_t rank;
  char view_text[96], axes_text[64];
} chain_t;

typedef struct finder_t {
  hgr_allocator_t allocator;
  const hgr_graph_t* graph;
  uint32_t* sole_consumer; /* per entry: the one node reading it once, NONE when read otherwise or an output */
  chain_t** chain;         /* per producer node: its chain, or NULL */
  uint32_t* fused_at;      /* per node: the producer whose chain it ends, or NONE */
  bool* member;            /* per node: a producer with a chain, or a member of one */
} finder_t;

static void finder_free(finder_t* f) {
  for (uint32_t n = 0; f->chain && n < f->graph->node_count; ++n) hgr__free(f->allocator, f->chain[n]);
  hgr__free(f->allocator, f->sole_consumer);
  hgr__free(f->allocator, f->chain);
  hgr__free(f->allocator, f->fused_at);
  hgr__free(f->allocator, f->member);
}

static hgr_status_t finder_init(finder_t* f, const hgr_graph_t* graph) {
  memset(f, 0, sizeof(*f));
  f->allocator = hgr__graph_allocator(graph);
  f->graph = graph;
  f->sole_consumer = hgr__pass_sole_consumers(graph);
  f->chain = hgr__calloc(f->allocator, graph->node_count + 1, sizeof(*f->chain));
  f->fused_at = hgr__alloc(f->allocator, (graph->node_count + 1) * sizeof(*f->fused_at));
  f->member = hgr__calloc(f->allocator, graph->node_count + 1, sizeof(*f->member));
  if (!f->sole_consumer || !f->chain || !f->fused_at || !f->member)
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, PASS ": out of host memory for a graph of %u nodes",
                      graph->node_count);
  for (uint32_t n = 0; n < graph->node_count; ++n) f->fused_at[n] = NONE;
  return HGR_OK;
}

static bool is_op(const hgr__node_t* node, const char* op) { return node->is_op && !strcmp(node->func_name, op); }

/* A producer the pass may give a layout: one float32 output, no layout yet. */
static bool producer(const hgr_graph_t* graph, uint32_t n) {
  const hgr__node_t* node = &graph->nodes[n];
  return (is_op(node, "dense") || is_op(node, "matmul") || is_op(node, "batch_matmul") ||
          is_op(node, "attention") || is_op(node, "strided_slice")) &&
         node->num_outputs == 1 && hgr__pass_all_float32(graph, n) && !hgr__node_attr(node, "out_shape") &&
         !hgr__node_attr(node, "out_axes");
}

/* Node n's output, when it is a transpose or reshape of one input with one output. */
static const hgr__entry_t* single_output(const hgr_graph_t* graph, uint32_t n, const char* op) {
  const hgr__node_t* node = &graph->nodes[n];
  if (!is_op(node, op) || node->input_count != 1 || node->num_outputs != 1) return NULL;
  return &graph->entries[graph->node_row_ptr[n]];
}

/* Transpose n's permutation of its rank-`rank` input (attr axes; absent: reversed). */
static bool transpose_axes(const hgr_graph_t* graph, uint32_t n, int32_t rank, int64_t* axes) {
  hgr__op_ctx_t ctx;
  hgr_status_t status = hgr__op_inspect(graph, n, &ctx);
  uint32_t count = 0;
  bool present = false;
  if (!status) {
    status = hgr__attr_ints(&ctx, "axes", axes, 4, &count, &present);
    hgr__op_ctx_free(&ctx);
  }
  bool ok = !status;
  hgr_status_free(status);
  if (!ok) return false;
  if (!present)
    for (int32_t a = 0; a < rank; ++a) axes[a] = rank - 1 - a;
  else if (count != (uint32_t)rank)
    return false;
  bool seen[4] = {false, false, false, false};
  for (int32_t a = 0; a < rank; ++a) {
    if (axes[a] < -rank || axes[a] >= rank) return false;
    if (axes[a] < 0) axes[a] += rank;
    if (seen[axes[a]]) return false;
    seen[axes[a]] = true;
  }
  return true;
}

/* Whether attention's result rows (dv floats) stay whole runs in the chain's layout. */
static bool attention_rows_kept(const hgr_graph_t* graph, uint32_t n, const chain_t* c) {
  const hgr__entry_t* out = &graph->entries[graph->node_row_ptr[n]];
  int64_t dv = out->shape[out->ndim - 1];
  return c->axes[c->rank - 1] == c->rank - 1 && dv > 0 && c->view[c->rank - 1] % dv == 0;
}

/* Finds producer n's chain into c; false when there is none. */
static bool find_chain(const finder_t* f, uint32_t n, chain_t* c) {
  const hgr_graph_t* graph = f->graph;
  memset(c, 0, sizeof(*c));
  uint32_t current = graph->node_row_ptr[n];
  uint32_t next = f->sole_consumer[current];
  while (next != NONE && c->member_count < 6 && single_output(graph, next, "reshape")) {
    c->members[c->member_count++] = next;
    current = graph->node_row_ptr[next];
    next = f->sole_consumer[current];
  }
  const hgr__entry_t* view = &graph->entries[current];
  if (next == NONE || !single_output(graph, next, "transpose") || view->ndim < 1 || view->ndim > 4) return false;
  c->rank = view->ndim;
  memcpy(c->view, view->shape, (size_t)c->rank * sizeof(int64_t));
  if (!transpose_axes(graph, next, c->rank, c->axes)) return false;
  c->members[c->member_count++] = next;
  /* a second transpose: out[i] = first[second[i]] = view[axes[second[i]]] */
  uint32_t after = f->sole_consumer[graph->node_row_ptr[next]];
  int64_t second[4];
  if (after != NONE && single_output(graph, after, "transpose") && transpose_axes(graph, after, c->rank, second)) {
    int64_t composed[4];
    for (int32_t a = 0; a < c->rank; ++a) composed[a] = c->axes[second[a]];
    memcpy(c->axes, composed, sizeof(composed));
    c->members[c->member_count++] = after;
  }
  if (is_op(&graph->nodes[n], "attention") && !attention_rows_kept(graph, n, c)) return false;
  const hgr__entry_t* sliced = &graph->entries[graph->node_row_ptr[n]];
  if (is_op(&graph->nodes[n], "strided_slice") &&
      !hgr__view_splits(sliced->shape, sliced->ndim, c->view, c->rank, NULL, NULL))
    return false;
  size_t vu = 0, au = 0;
  vu += (size_t)snprintf(c->view_text + vu, sizeof(c->view_text) - vu, "[");
  au += (size_t)snprintf(c->axes_text + au, sizeof(c->axes_text) - au, "[");
  for (int32_t a = 0; a < c->rank; ++a) {
    vu += (size_t)snprintf(c->view_text + vu, sizeof(c->view_text) - vu, "%s%lld", a ? ", " : "",
                           (long long)c->view[a]);
    au += (size_t)snprintf(c->axes_text + au, sizeof(c->axes_text) - au, "%s%lld", a ? ", " : "",
                           (long long)c->axes[a]);
  }
  snprintf(c->view_text + vu, sizeof(c->view_text) - vu, "]");
  snprintf(c->axes_text + au, sizeof(c->axes_text) - au, "]");
  return true;
}

static hgr_status_t find_chains(finder_t* f, hgr__fuse_report_t* report) {
  for (uint32_t n = 0; n < f->graph->node_count; ++n) {
    if (!producer(f->graph, n)) continue;
    chain_t c;
    if (!find_chain(f, n, &c)) continue;
    f->chain[n] = hgr__alloc(f->allocator, sizeof(c));
    if (!f->chain[n]) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, PASS ": out of host memory");
    *f->chain[n] = c;
    f->member[n] = true;
    for (uint32_t m = 0; m < c.member_count; ++m) f->member[c.members[m]] = true;
    f->fused_at[c.members[c.member_count - 1]] = n;
    report->groups++;
    report->fused_nodes += c.member_count;
  }
  return HGR_OK;
}

/* Appends producer n with its layout at its chain's last node, under that node's name. */
static hgr_status_t append_fused(const finder_t* f, const hgr__pass_log_t* log, hgr__pass_rebuild_t* r, uint32_t n) {
  const hgr_graph_t* graph = f->graph;
  const hgr__node_t* node = &graph->nodes[n];
  const chain_t* c = f->chain[n];
  uint32_t last = c->members[c->member_count - 1];
  hgr__attr_t* attrs = hgr__alloc(f->allocator, ((size_t)node->attr_count + 2) * sizeof(*attrs));
  if (!attrs) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, PASS ": out of host memory");
  memcpy(attrs, node->attrs, node->attr_count * sizeof(*attrs));
  uint32_t attr_count = node->attr_count;
  attrs[attr_count++] = (hgr__attr_t){"out_shape", (char*)c->view_text};
  attrs[attr_count++] = (hgr__attr_t){"out_axes", (char*)c->axes_text};
  hgr_status_t status =
      hgr__graph_edit_append(r->out, graph->nodes[last].name, node->func_name,
                             hgr__pass_map_inputs(r, node->inputs, node->input_count), node->input_count, attrs,
                             attr_count, &graph->entries[graph->node_row_ptr[last]], 1, &r->new_id[n]);
  hgr__free(f->allocator, attrs);
  HGR_RETURN_IF_ERROR(status);
  HGR_RETURN_IF_ERROR(hgr__pass_check_inferred(r, r->new_id[n], last, PASS));
  r->new_id[last] = r->new_id[n];
  hgr__pass_log_fused(log, graph, node->func_name, last, c->members, c->member_count);
  return HGR_OK;
}

/* Appends every node of f->graph to r->out: each producer with a chain at its
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

hgr_status_t hgr__fuse_out_layout(const hgr_graph_t* graph, const hgr__pass_log_t* log, hgr_graph_t** out_graph,
                                  hgr__fuse_report_t* out_report) {
  hgr__fuse_report_t report = {0, 0};
  if (out_report) *out_report = report;
  if (!graph || !out_graph) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, PASS ": NULL argument");
  *out_graph = NULL;
  HGR_RETURN_IF_ERROR(hgr__pass_check_unplaced(graph, PASS));
  finder_t f;
  hgr_status_t status = finder_init(&f, graph);
  if (!status) status = find_chains(&f, &report);
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
