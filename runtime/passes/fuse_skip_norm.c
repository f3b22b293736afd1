/* Skip layer norm fusion (passes.h): the residual add before a layer norm becomes the
 * layer norm's skip input, as ONNX Runtime's SkipLayerNormalization computes it:
 *
 *   sum = add(a, b)              a and b shaped as sum (no broadcast), float32
 *   layer_norm(sum, gamma, beta) -> layer_norm(a, gamma, beta, b)
 *
 * (ops_norm.c: input 3 is added to input 0 inside the kernel), at the layer norm's
 * place and name. Where the layer norm reads the sum alone (and it is no graph
 * output): a transformer's post-norm residuals (BERT's h = LN(x + sublayer(x))) and
 * the adds the importer writes for SkipLayerNormalization. Where others read the sum
 * too, or it is a graph output, the fused layer norm also gives the sum, as its
 * output 1 (written by the same kernel), which those readers then read: a pre-norm
 * transformer's residual stream (ViT's and GPT-2's x = x + sublayer(LN(x)), whose
 * next layer norm and next residual add both read it). Then every other reader must
 * come after the layer norm in the graph's order, where the fused node stands. One
 * launch and a pass over the sum fewer per residual. After the patterns (which make
 * layer_norm nodes of the written-out form) and before elementwise fusion (which
 * would take the add). */
#include <string.h>

#include "alloc.h"
#include "passes.h"

#define PASS "fusing residual adds into layer norms"
#define NONE HGR__PASS_NONE

static bool is_op(const hgr__node_t* node, const char* op) { return node->is_op && !strcmp(node->func_name, op); }

/* The add node whose value layer_norm n reads as its data, whose operands are both
 * shaped as that value, and whose other readers (if any) come after n (n its first
 * reader: first_reader); NONE otherwise. */
static uint32_t residual_add(const hgr_graph_t* graph, const uint32_t* first_reader, uint32_t n) {
  const hgr__node_t* norm = &graph->nodes[n];
  if (!is_op(norm, "layer_norm") || norm->input_count != 3 || norm->num_outputs != 1) return NONE;
  uint32_t sum = hgr__graph_entry_id(graph, norm->inputs[0]);
  uint32_t a = graph->entries[sum].node_id;
  const hgr__node_t* add = &graph->nodes[a];
  if (first_reader[sum] != n || !is_op(add, "add") || add->input_count != 2 || add->num_outputs != 1 ||
      !hgr__pass_only_known_attrs(add, NULL) || !hgr__pass_all_float32(graph, a))
    return NONE;
  for (uint32_t i = 0; i < 2; ++i)
    if (!hgr__pass_same_shape(&graph->entries[hgr__graph_entry_id(graph, add->inputs[i])], &graph->entries[sum]))
      return NONE;
  return a;
}

typedef struct finder_t {
  const hgr_graph_t* graph;
  uint32_t* add_of; /* per layer_norm node: its residual add, or NONE */
  bool* member;     /* per node: an add that joins a layer norm */
  /* per entry: its one reader (hgr__pass_sole_consumers); a fused layer norm that is
   * not its sum's gives the sum as its output 1 */
  const uint32_t* sole_consumer;
} finder_t;

static hgr_status_t append_fused(const finder_t* f, const hgr__pass_log_t* log, hgr__pass_rebuild_t* r, uint32_t n) {
  const hgr_graph_t* graph = f->graph;
  const hgr__node_t* norm = &graph->nodes[n];
  const hgr__node_t* add = &graph->nodes[f->add_of[n]];
  hgr__entry_ref_t inputs[4] = {add->inputs[0], norm->inputs[1], norm->inputs[2], add->inputs[1]};
  const hgr__entry_t outputs[2] = {graph->entries[graph->node_row_ptr[n]],
                                   graph->entries[graph->node_row_ptr[f->add_of[n]]]};
  const bool keeps_sum = f->sole_consumer[hgr__graph_entry_id(graph, norm->inputs[0])] != n;
  hgr_status_t status = hgr__graph_edit_append(r->out, norm->name, "layer_norm", hgr__pass_map_inputs(r, inputs, 4),
                                               4, norm->attrs, norm->attr_count, outputs, keeps_sum ? 2 : 1,
                                               &r->new_id[n]);
  HGR_RETURN_IF_ERROR(status);
  HGR_RETURN_IF_ERROR(hgr__pass_check_inferred(r, r->new_id[n], n, PASS));
  if (keeps_sum) { /* the sum's readers, all after n, read output 1 */
    r->new_id[f->add_of[n]] = r->new_id[n];
    r->index_shift[f->add_of[n]] = 1;
  }
  uint32_t replaced[2] = {f->add_of[n], n};
  hgr__pass_log_fused(log, graph, "layer_norm", n, replaced, 2);
  return HGR_OK;
}

/* Appends every node of f->graph to r->out: each layer norm with a residual add
 * taking it as its skip input, the adds left out. */
static hgr_status_t rebuild(const void* pass, const hgr__pass_log_t* log, hgr__pass_rebuild_t* r) {
  const finder_t* f = pass;
  hgr_status_t status = HGR_OK;
  for (uint32_t n = 0; !status && n < f->graph->node_count; ++n) {
    if (f->add_of[n] != NONE) status = append_fused(f, log, r, n);
    else if (!f->member[n]) status = hgr__pass_copy_node(r, n, NULL);
  }
  return status;
}

hgr_status_t hgr__fuse_skip_norm(const hgr_graph_t* graph, const hgr__pass_log_t* log, hgr_graph_t** out_graph,
                                 hgr__fuse_report_t* out_report) {
  hgr__fuse_report_t report = {0, 0};
  if (out_report) *out_report = report;
  if (!graph || !out_graph) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, PASS ": NULL argument");
  *out_graph = NULL;
  HGR_RETURN_IF_ERROR(hgr__pass_check_unplaced(graph, PASS));
  hgr_allocator_t allocator = hgr__graph_allocator(graph);
  uint32_t* sole_consumer = hgr__pass_sole_consumers(graph);
  uint32_t* first_reader = hgr__alloc(allocator, ((size_t)graph->entry_count + 1) * sizeof(uint32_t));
  finder_t f = {graph, hgr__alloc(allocator, (graph->node_count + 1) * sizeof(uint32_t)),
                hgr__calloc(allocator, graph->node_count + 1, sizeof(bool)), sole_consumer};
  hgr_status_t status = HGR_OK;
  if (!sole_consumer || !first_reader || !f.add_of || !f.member)
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, PASS ": out of host memory for a graph of %u nodes",
                        graph->node_count);
  for (uint32_t e = 0; !status && e < graph->entry_count; ++e) first_reader[e] = NONE;
  for (uint32_t n = 0; !status && n < graph->node_count; ++n)
    for (uint32_t i = 0; i < graph->nodes[n].input_count; ++i) {
      uint32_t e = hgr__graph_entry_id(graph, graph->nodes[n].inputs[i]);
      if (first_reader[e] == NONE) first_reader[e] = n;
    }
  for (uint32_t n = 0; !status && n < graph->node_count; ++n) {
    f.add_of[n] = residual_add(graph, first_reader, n);
    if (f.add_of[n] == NONE) continue;
    f.member[f.add_of[n]] = true;
    report.groups++;
    report.fused_nodes++;
  }
  hgr_graph_t* fused = NULL;
  if (!status && report.groups) status = hgr__pass_rebuild(graph, rebuild, &f, log, &fused);
  else if (!status) fused = hgr_graph_retain((hgr_graph_t*)graph);
  hgr__free(allocator, sole_consumer);
  hgr__free(allocator, first_reader);
  hgr__free(allocator, f.add_of);
  hgr__free(allocator, f.member);
  if (status) return status;
  if (out_report) *out_report = report;
  *out_graph = fused;
  return HGR_OK;
}
