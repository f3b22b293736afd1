/* GEMM weight packing (passes.h): a matmul whose tensor_b is a float32 param [K, N]
 * (or [N, K] with transpose_b) of at least two panels' columns reads it instead as
 * a new param in panels of 32 columns, [ceil(N / 32), K, 32], the last one padded
 * with zeros (ops_linalg.c: attr b_panel 32, attr units N). A GEMM kernel's strip
 * of columns is then one contiguous run of memory per step of K, where in [K, N]
 * it is a few cache lines N floats apart: the hardware prefetchers follow the run,
 * and the weights, which a model reads from memory once per run, stream at the
 * memory's speed (bench/notes.md, "Weights in panels"). ONNX Runtime packs its
 * MatMul weights the same way when a session is made.
 *
 * Matmuls reading the same param the same way share one packed param; the param
 * leaves the graph (and hgr_passes_apply drops it from the params) when nothing
 * else reads it. Whether a matmul is packed depends on its attrs and its weights'
 * shape, never on its other input's, so every shape of a model packs the same
 * nodes. The repacked matmul keeps its place and name. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "alloc.h"
#include "passes.h"
#include "text.h"

#define PASS "packing GEMM weights"
#define NONE HGR__PASS_NONE
#define PANEL 32
#define MIN_COLUMNS (2 * PANEL) /* one panel would be the [K, N] layout itself */

/* A packed param: the param node it is made from, and how the matmuls read it. */
typedef struct pack_t {
  uint32_t param; /* the param's graph input node */
  bool transposed;
  int64_t k, n;
  char* name;       /* the packed param's, from the finder's allocator */
  uint32_t readers; /* matmuls that read it */
} pack_t;

typedef struct finder_t {
  hgr_allocator_t allocator;
  const hgr_graph_t* graph;
  const hgr_params_t* params;
  pack_t* packs;
  uint32_t pack_count;
  uint32_t* pack_of;  /* per node: the pack a matmul reads, or NONE */
  bool* dropped;      /* per node: a param only packed matmuls read */
  uint32_t* new_node; /* per pack: its input node in the rebuilt graph, NONE until appended */
} finder_t;

static void finder_free(finder_t* f) {
  for (uint32_t p = 0; p < f->pack_count; ++p) hgr__free(f->allocator, f->packs[p].name);
  hgr__free(f->allocator, f->packs);
  hgr__free(f->allocator, f->pack_of);
  hgr__free(f->allocator, f->dropped);
  hgr__free(f->allocator, f->new_node);
}

/* A bool attr as ops read it ("1", "0", "true", "false" in any case); false when it
 * does not parse (the node is then left to its op, which reports it). */
static bool bool_attr(const hgr__node_t* node, const char* key, bool fallback, bool* out) {
  const char* value = hgr__node_attr(node, key);
  *out = fallback;
  if (!value) return true;
  if (!strcmp(value, "1") || !strcasecmp(value, "true")) *out = true;
  else if (!strcmp(value, "0") || !strcasecmp(value, "false")) *out = false;
  else return false;
  return true;
}

/* Whether node n is a matmul this pass repacks: attrs it knows (no b_panel yet),
 * tensor_b a float32 param [K, N] (or [N, K] transposed) with N >= MIN_COLUMNS.
 * Sets the param's node, its layout and K, N. */
static bool packable(const finder_t* f, uint32_t n, uint32_t* out_param, bool* out_transposed, int64_t* out_k,
                     int64_t* out_n) {
  static const char* const known[] = {"units",      "out_dtype", "transpose_a", "transpose_b",
                                      "activation", "alpha",     "a_min",       "a_max", "hash"};
  const hgr_graph_t* graph = f->graph;
  const hgr__node_t* node = &graph->nodes[n];
  if (!node->is_op || strcmp(node->func_name, "matmul") || node->num_outputs != 1 || node->input_count < 2)
    return false;
  for (uint32_t a = 0; a < node->attr_count; ++a) {
    bool found = false;
    for (size_t k = 0; k < sizeof(known) / sizeof(known[0]) && !found; ++k)
      found = !strcmp(node->attrs[a].key, known[k]);
    if (!found) return false;
  }
  if (!bool_attr(node, "transpose_b", false, out_transposed)) return false;
  uint32_t param = node->inputs[1].node_id;
  const hgr__entry_t* b = &graph->entries[hgr__graph_entry_id(graph, node->inputs[1])];
  if (graph->nodes[param].is_op || b->ndim != 2 || !hgr__dtype_same(b->dtype, HGR__DTYPE_F32)) return false;
  *out_k = *out_transposed ? b->shape[1] : b->shape[0];
  *out_n = *out_transposed ? b->shape[0] : b->shape[1];
  if (*out_n < MIN_COLUMNS || *out_k < 1 || b->element_count > INT32_MAX) return false;
  if (!hgr__pass_param_data(graph, f->params, param, HGR__DTYPE_F32, b->element_count * sizeof(float))) return false;
  *out_param = param;
  return true;
}

/* Whether name is a node's or a param's, or an earlier pack's (hgr__pass_taken_fn). */
static bool name_taken(const void* finder, const char* name) {
  const finder_t* f = finder;
  for (uint32_t p = 0; p < f->pack_count; ++p)
    if (!strcmp(f->packs[p].name, name)) return true;
  return hgr__pass_name_in_use(f->graph, f->params, NULL, name);
}

/* Finds every packable matmul, its pack (made on first use), and the params only
 * packed matmuls read. */
static hgr_status_t find_packs(finder_t* f) {
  const hgr_graph_t* graph = f->graph;
  f->packs = hgr__calloc(f->allocator, graph->node_count + 1, sizeof(*f->packs));
  f->pack_of = hgr__alloc(f->allocator, (graph->node_count + 1) * sizeof(*f->pack_of));
  f->dropped = hgr__calloc(f->allocator, graph->node_count + 1, sizeof(*f->dropped));
  f->new_node = hgr__alloc(f->allocator, (graph->node_count + 1) * sizeof(*f->new_node));
  uint32_t* uses = hgr__calloc(f->allocator, graph->entry_count + 1, sizeof(*uses));
  bool* head = hgr__calloc(f->allocator, graph->entry_count + 1, sizeof(*head));
  hgr_status_t status = HGR_OK;
  if (!f->packs || !f->pack_of || !f->dropped || !f->new_node || !uses || !head)
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, PASS ": out of host memory for a graph of %u nodes",
                        graph->node_count);
  if (!status) hgr__pass_count_uses(graph, uses, head);
  for (uint32_t n = 0; !status && n < graph->node_count; ++n) {
    f->pack_of[n] = NONE;
    uint32_t param;
    bool transposed;
    int64_t k, columns;
    if (!packable(f, n, &param, &transposed, &k, &columns)) continue;
    uint32_t p = 0;
    while (p < f->pack_count && (f->packs[p].param != param || f->packs[p].transposed != transposed)) ++p;
    if (p == f->pack_count) {
      /* "<param>.panels", or "<param>.panels#2" ... where it is taken */
      char* name = hgr__pass_unique_name(f->allocator, graph->nodes[param].name, "panels", name_taken, f);
      if (!name) {
        status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, PASS ": out of host memory");
        break;
      }
      f->new_node[f->pack_count] = NONE;
      f->packs[f->pack_count++] = (pack_t){param, transposed, k, columns, name, 0};
    }
    f->packs[p].readers++;
    f->pack_of[n] = p;
  }
  /* a param whose every reader is a packed matmul (of one or both layouts) leaves */
  for (uint32_t p = 0; !status && p < f->pack_count; ++p) {
    uint32_t readers = 0;
    for (uint32_t q = 0; q < f->pack_count; ++q)
      if (f->packs[q].param == f->packs[p].param) readers += f->packs[q].readers;
    uint32_t e = graph->node_row_ptr[f->packs[p].param];
    f->dropped[f->packs[p].param] = !head[e] && uses[e] == readers;
  }
  hgr__free(f->allocator, uses);
  hgr__free(f->allocator, head);
  return status;
}

/* The matmul's attrs with transpose_b and units replaced by b_panel and units. */
static hgr_status_t packed_attrs(hgr_allocator_t allocator, const hgr__node_t* node, const pack_t* pack,
                                 hgr__attr_t** out_attrs, uint32_t* out_count) {
  hgr__attr_t* attrs = hgr__calloc(allocator, node->attr_count + 2, sizeof(*attrs));
  if (!attrs) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, PASS ": out of host memory");
  uint32_t count = 0;
  for (uint32_t a = 0; a < node->attr_count; ++a)
    if (strcmp(node->attrs[a].key, "transpose_b") && strcmp(node->attrs[a].key, "units"))
      attrs[count++] = node->attrs[a];
  attrs[count++] = (hgr__attr_t){"b_panel", hgr__format_in(allocator, "%d", PANEL)};
  attrs[count++] = (hgr__attr_t){"units", hgr__format_in(allocator, "%lld", (long long)pack->n)};
  *out_attrs = attrs;
  *out_count = count;
  if (!attrs[count - 2].value || !attrs[count - 1].value)
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, PASS ": out of host memory");
  return HGR_OK;
}

/* Appends matmul n reading its pack (whose param node is appended first, at its
 * first reader). */
static hgr_status_t append_packed(const finder_t* f, hgr__pass_rebuild_t* r, uint32_t n,
                                  const hgr__pass_log_t* log) {
  const hgr__node_t* node = &f->graph->nodes[n];
  const pack_t* pack = &f->packs[f->pack_of[n]];
  uint32_t* param_node = &f->new_node[f->pack_of[n]];
  if (*param_node == NONE) {
    int64_t panels = (pack->n + PANEL - 1) / PANEL;
    hgr__entry_t entry = {.device_key = -1, .dtype = HGR__DTYPE_F32, .ndim = 3, .shape = {panels, pack->k, PANEL}};
    entry.element_count = (uint64_t)(panels * pack->k * PANEL);
    entry.bytes = entry.element_count * sizeof(float);
    HGR_RETURN_IF_ERROR(hgr__graph_edit_append(r->out, pack->name, NULL, NULL, 0, NULL, 0, &entry, 1, param_node));
  }
  hgr__entry_ref_t inputs[3];
  memcpy(inputs, hgr__pass_map_inputs(r, node->inputs, node->input_count), node->input_count * sizeof(*inputs));
  inputs[1] = (hgr__entry_ref_t){*param_node, 0};
  hgr__attr_t* attrs = NULL;
  uint32_t attr_count = 0;
  hgr_status_t status = packed_attrs(f->allocator, node, pack, &attrs, &attr_count);
  if (!status)
    status = hgr__graph_edit_append(r->out, node->name, "matmul", inputs, node->input_count, attrs, attr_count,
                                    &f->graph->entries[f->graph->node_row_ptr[n]], 1, &r->new_id[n]);
  if (attrs) {
    hgr__free(f->allocator, attrs[attr_count - 2].value);
    hgr__free(f->allocator, attrs[attr_count - 1].value);
    hgr__free(f->allocator, attrs);
  }
  HGR_RETURN_IF_ERROR(status);
  HGR_RETURN_IF_ERROR(hgr__pass_check_inferred(r, r->new_id[n], n, PASS));
  if (log && log->fn) {
    char line[512];
    snprintf(line, sizeof(line), "matmul '%s' reads '%s' in panels of %d columns ('%s')", node->name,
             f->graph->nodes[pack->param].name, PANEL, pack->name);
    log->fn(log->user, line);
  }
  return HGR_OK;
}

static hgr_status_t append(const void* pass, const hgr__pass_log_t* log, hgr__pass_rebuild_t* r) {
  const finder_t* f = pass;
  hgr_status_t status = HGR_OK;
  for (uint32_t n = 0; !status && n < f->graph->node_count; ++n) {
    if (f->dropped[n]) continue;
    status = f->pack_of[n] != NONE ? append_packed(f, r, n, log) : hgr__pass_copy_node(r, n, NULL);
  }
  return status;
}

/* The packed params, in a params object of their own with the allocator of f's
 * params (hgr__params_take moves them there). */
static hgr_status_t make_params(const finder_t* f, hgr_params_t** out_made) {
  hgr_params_t* made = NULL;
  HGR_RETURN_IF_ERROR(hgr__params_create_in(hgr__params_allocator(f->params), &made));
  hgr_status_t status = HGR_OK;
  for (uint32_t p = 0; !status && p < f->pack_count; ++p) {
    const pack_t* pack = &f->packs[p];
    int64_t panels = (pack->n + PANEL - 1) / PANEL, k = pack->k, n = pack->n;
    uint64_t count = (uint64_t)(panels * k * PANEL);
    const float* b = hgr__pass_param_data(f->graph, f->params, pack->param, HGR__DTYPE_F32,
                                          (uint64_t)(k * n) * sizeof(float));
    float* packed = hgr__calloc(f->allocator, count, sizeof(float));
    if (!b || !packed) {
      hgr__free(f->allocator, packed);
      status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, PASS ": out of host memory for %llu floats",
                          (unsigned long long)count);
      break;
    }
    /* packed[q][l][c] = B[l][q * PANEL + c]; B[l][j] is b[j * k + l] when transposed */
    for (int64_t q = 0; q < panels; ++q)
      for (int64_t l = 0; l < k; ++l)
        for (int64_t c = 0; c < PANEL && q * PANEL + c < n; ++c) {
          int64_t j = q * PANEL + c;
          packed[(q * k + l) * PANEL + c] = pack->transposed ? b[j * k + l] : b[l * n + j];
        }
    int64_t shape[3] = {panels, k, PANEL};
    status = hgr_params_add(made, pack->name, HGR__DTYPE_F32, 3, shape, packed, count * sizeof(float));
    hgr__free(f->allocator, packed);
  }
  if (status) {
    hgr_params_release(made);
    return status;
  }
  *out_made = made;
  return HGR_OK;
}

hgr_status_t hgr__pack_gemm_weights(const hgr_graph_t* graph, const hgr_params_t* params, const hgr__pass_log_t* log,
                                    hgr_graph_t** out_graph, hgr_params_t** out_made, hgr__fuse_report_t* out_report) {
  hgr__fuse_report_t report = {0, 0};
  if (out_report) *out_report = report;
  if (!graph || !out_graph || !out_made) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, PASS ": NULL argument");
  *out_graph = NULL;
  *out_made = NULL;
  HGR_RETURN_IF_ERROR(hgr__pass_check_unplaced(graph, PASS));
  finder_t f = {hgr__graph_allocator(graph), graph, params, NULL, 0, NULL, NULL, NULL};
  hgr_status_t status = params ? find_packs(&f) : HGR_OK;
  if (!status && f.pack_count == 0) {
    finder_free(&f);
    *out_graph = hgr_graph_retain((hgr_graph_t*)graph);
    return HGR_OK;
  }
  hgr_graph_t* packed = NULL;
  if (!status) status = hgr__pass_rebuild(graph, append, &f, log, &packed);
  hgr_params_t* made = NULL;
  if (!status) status = make_params(&f, &made);
  report.groups = f.pack_count;
  for (uint32_t p = 0; p < f.pack_count; ++p) report.fused_nodes += f.packs[p].readers;
  finder_free(&f);
  if (status) {
    hgr_graph_release(packed);
    return status;
  }
  if (out_report) *out_report = report;
  *out_graph = packed;
  *out_made = made;
  return HGR_OK;
}
