/* What the passes share (passes.h): the check that a graph is not placed yet, the
 * attrs of fusable ops as the ops read them, and rebuilding a graph node by node
 * (graph_edit.c) with each kept node's inputs mapped to their new producers. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "ops.h"
#include "passes.h"
#include "text.h"

hgr_status_t hgr__pass_check_unplaced(const hgr_graph_t* graph, const char* pass) {
  if (graph->has_device_index)
    return HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION,
                      "%s: the graph is placed (it has device keys); fuse before placement", pass);
  for (uint32_t n = 0; n < graph->node_count; ++n)
    if (graph->nodes[n].is_op && !strcmp(graph->nodes[n].func_name, "__copy")) {
      char label[HGR__LABEL_CAPACITY];
      return HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION,
                        "%s: %s is a __copy (the graph is placed); fuse before placement", pass,
                        hgr__graph_node_label(graph, n, label, sizeof(label)));
    }
  return HGR_OK;
}

bool hgr__pass_fusable_attr(const hgr__node_t* node, const hgr__fusable_t* op, uint32_t k, float* out) {
  const char* text = hgr__node_attr(node, op->params[k]);
  double value = op->defaults[k];
  if (text) {
    char* end = NULL;
    value = strtod(text, &end);
    if (end == text || *end) return false;
  } else if (isnan(value)) {
    return false;
  }
  *out = value > FLT_MAX ? INFINITY : value < -FLT_MAX ? -INFINITY : (float)value;
  return !isnan(*out);
}

bool hgr__pass_all_float32(const hgr_graph_t* graph, uint32_t n) {
  const hgr__node_t* node = &graph->nodes[n];
  if (!hgr__dtype_same(graph->entries[graph->node_row_ptr[n]].dtype, HGR__DTYPE_F32)) return false;
  for (uint32_t i = 0; i < node->input_count; ++i)
    if (!hgr__dtype_same(graph->entries[hgr__graph_entry_id(graph, node->inputs[i])].dtype, HGR__DTYPE_F32))
      return false;
  return true;
}

void hgr__pass_count_uses(const hgr_graph_t* graph, uint32_t* uses, bool* head) {
  for (uint32_t n = 0; n < graph->node_count; ++n)
    for (uint32_t i = 0; i < graph->nodes[n].input_count; ++i)
      uses[hgr__graph_entry_id(graph, graph->nodes[n].inputs[i])]++;
  for (uint32_t h = 0; h < graph->head_count; ++h) {
    uint32_t e = hgr__graph_entry_id(graph, graph->heads[h]);
    head[e] = true;
    uses[e]++;
  }
}

uint32_t* hgr__pass_sole_consumers(const hgr_graph_t* graph) {
  hgr_allocator_t allocator = hgr__graph_allocator(graph);
  uint32_t* uses = hgr__calloc(allocator, graph->entry_count + 1, sizeof(*uses));
  bool* head = hgr__calloc(allocator, graph->entry_count + 1, sizeof(*head));
  uint32_t* consumer = hgr__alloc(allocator, (graph->entry_count + 1) * sizeof(*consumer));
  if (uses && head && consumer) {
    hgr__pass_count_uses(graph, uses, head);
    for (uint32_t e = 0; e < graph->entry_count; ++e) consumer[e] = HGR__PASS_NONE;
    for (uint32_t n = 0; n < graph->node_count; ++n)
      for (uint32_t i = 0; i < graph->nodes[n].input_count; ++i) {
        uint32_t e = hgr__graph_entry_id(graph, graph->nodes[n].inputs[i]);
        if (uses[e] == 1 && !head[e]) consumer[e] = n;
      }
  } else {
    hgr__free(allocator, consumer);
    consumer = NULL;
  }
  hgr__free(allocator, uses);
  hgr__free(allocator, head);
  return consumer;
}

const void* hgr__pass_param_data(const hgr_graph_t* graph, const hgr_params_t* params, uint32_t n, hgr_dtype_t dtype,
                                 uint64_t bytes) {
  const hgr__node_t* node = &graph->nodes[n];
  size_t index = 0;
  if (node->is_op || !params) return NULL;
  hgr_status_t status = hgr_params_find(params, node->name, &index);
  hgr_tensor_info_t info;
  const void* data = NULL;
  if (!status) status = hgr_params_get(params, index, &info, &data);
  bool found = !status && hgr__dtype_same(info.dtype, dtype) && info.bytes == bytes;
  hgr_status_free(status);
  return found ? data : NULL;
}

char* hgr__pass_unique_name(hgr_allocator_t allocator, const char* base, const char* suffix, hgr__pass_taken_fn taken,
                            const void* user) {
  char* name = hgr__format_in(allocator, "%s.%s", base, suffix);
  for (uint32_t k = 2; name && taken(user, name); ++k) {
    hgr__free(allocator, name);
    name = hgr__format_in(allocator, "%s.%s#%u", base, suffix, k);
  }
  return name;
}

bool hgr__pass_name_in_use(const hgr_graph_t* graph, const hgr_params_t* params, const hgr_params_t* made,
                           const char* name) {
  for (uint32_t n = 0; n < graph->node_count; ++n)
    if (!strcmp(graph->nodes[n].name, name)) return true;
  const hgr_params_t* sets[2] = {params, made};
  for (int s = 0; s < 2; ++s) {
    size_t index;
    if (!sets[s]) continue;
    hgr_status_t status = hgr_params_find(sets[s], name, &index);
    hgr_status_free(status);
    if (!status) return true;
  }
  return false;
}

bool hgr__pass_same_shape(const hgr__entry_t* a, const hgr__entry_t* b) {
  if (a->ndim != b->ndim) return false;
  for (int32_t d = 0; d < a->ndim; ++d)
    if (a->shape[d] != b->shape[d]) return false;
  return true;
}

bool hgr__pass_only_known_attrs(const hgr__node_t* node, const hgr__fusable_t* op) {
  if (!node->is_op || node->num_outputs != 1) return false;
  for (uint32_t a = 0; a < node->attr_count; ++a) {
    const char* key = node->attrs[a].key;
    bool known = !strcmp(key, "hash");
    for (uint32_t k = 0; op && k < 2 && !known; ++k) known = op->params[k] && !strcmp(key, op->params[k]);
    if (!known) return false;
  }
  return true;
}

/* Whether node n is op `name` with one output, known attrs only, float32 throughout
 * and its output shaped as entry `like`. */
static bool plain_op_like(const hgr_graph_t* graph, uint32_t n, const char* name, uint32_t like) {
  const hgr__node_t* node = &graph->nodes[n];
  return node->is_op && !strcmp(node->func_name, name) && hgr__pass_only_known_attrs(node, NULL) &&
         hgr__pass_all_float32(graph, n) &&
         hgr__pass_same_shape(&graph->entries[graph->node_row_ptr[n]], &graph->entries[like]);
}

bool hgr__pass_silu(const hgr_graph_t* graph, uint32_t producer, uint32_t current, uint32_t* sigmoid,
                    uint32_t* multiply) {
  for (uint32_t h = 0; h < graph->head_count; ++h)
    if (hgr__graph_entry_id(graph, graph->heads[h]) == current) return false;
  uint32_t readers[2], reader_count = 0, references = 0;
  for (uint32_t n = producer + 1; n < graph->node_count; ++n) {
    const hgr__node_t* node = &graph->nodes[n];
    bool reads = false;
    for (uint32_t i = 0; i < node->input_count; ++i)
      if (hgr__graph_entry_id(graph, node->inputs[i]) == current) reads = true, ++references;
    if (reads && reader_count++ < 2) readers[reader_count - 1] = n;
  }
  if (reader_count != 2 || references != 2) return false; /* the sigmoid's input and one of the multiply's */
  uint32_t s = readers[0], m = readers[1]; /* the sigmoid comes first: the multiply reads its value */
  if (!plain_op_like(graph, s, "sigmoid", current) || graph->nodes[s].input_count != 1 ||
      !plain_op_like(graph, m, "multiply", current) || graph->nodes[m].input_count != 2)
    return false;
  uint32_t value = graph->node_row_ptr[s];
  uint32_t a = hgr__graph_entry_id(graph, graph->nodes[m].inputs[0]);
  uint32_t b = hgr__graph_entry_id(graph, graph->nodes[m].inputs[1]);
  if (!((a == current && b == value) || (a == value && b == current))) return false;
  for (uint32_t h = 0; h < graph->head_count; ++h)
    if (hgr__graph_entry_id(graph, graph->heads[h]) == value) return false;
  for (uint32_t n = s + 1; n < graph->node_count; ++n)
    for (uint32_t i = 0; n != m && i < graph->nodes[n].input_count; ++i)
      if (hgr__graph_entry_id(graph, graph->nodes[n].inputs[i]) == value) return false;
  *sigmoid = s;
  *multiply = m;
  return true;
}

int hgr__pass_compare_ids(const void* a, const void* b) {
  uint32_t x = *(const uint32_t*)a, y = *(const uint32_t*)b;
  return x < y ? -1 : x > y;
}

hgr_status_t hgr__pass_rebuild_init(const hgr_graph_t* graph, hgr__pass_rebuild_t* out_rebuild) {
  memset(out_rebuild, 0, sizeof(*out_rebuild));
  out_rebuild->allocator = hgr__graph_allocator(graph);
  out_rebuild->graph = graph;
  uint32_t most_inputs = HGR__FUSED_MAX_INPUTS;
  for (uint32_t n = 0; n < graph->node_count; ++n)
    if (graph->nodes[n].input_count > most_inputs) most_inputs = graph->nodes[n].input_count;
  out_rebuild->new_id = hgr__alloc(out_rebuild->allocator, (graph->node_count + 1) * sizeof(*out_rebuild->new_id));
  out_rebuild->index_shift = hgr__calloc(out_rebuild->allocator, graph->node_count + 1, sizeof(uint32_t));
  out_rebuild->refs = hgr__alloc(out_rebuild->allocator, ((size_t)most_inputs + 1) * sizeof(*out_rebuild->refs));
  hgr_status_t status = HGR_OK;
  if (!out_rebuild->new_id || !out_rebuild->index_shift || !out_rebuild->refs)
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for a graph of %u nodes", graph->node_count);
  for (uint32_t n = 0; !status && n < graph->node_count; ++n) out_rebuild->new_id[n] = HGR__PASS_NONE;
  if (!status) status = hgr__graph_edit_new(out_rebuild->allocator, &out_rebuild->out);
  if (status) hgr__pass_rebuild_free(out_rebuild);
  return status;
}

void hgr__pass_rebuild_free(hgr__pass_rebuild_t* rebuild) {
  hgr_graph_release(rebuild->out);
  hgr__free(rebuild->allocator, rebuild->new_id);
  hgr__free(rebuild->allocator, rebuild->index_shift);
  hgr__free(rebuild->allocator, rebuild->refs);
  memset(rebuild, 0, sizeof(*rebuild));
}

const hgr__entry_ref_t* hgr__pass_map_inputs(hgr__pass_rebuild_t* rebuild, const hgr__entry_ref_t* inputs,
                                             uint32_t count) {
  for (uint32_t i = 0; i < count; ++i)
    rebuild->refs[i] = (hgr__entry_ref_t){rebuild->new_id[inputs[i].node_id],
                                          inputs[i].index + rebuild->index_shift[inputs[i].node_id]};
  return rebuild->refs;
}

hgr_status_t hgr__pass_copy_node(hgr__pass_rebuild_t* rebuild, uint32_t n, const char* name) {
  const hgr_graph_t* graph = rebuild->graph;
  const hgr__node_t* node = &graph->nodes[n];
  uint32_t node_id = HGR__PASS_NONE;
  HGR_RETURN_IF_ERROR(hgr__graph_edit_append(
      rebuild->out, name ? name : node->name, node->is_op ? node->func_name : NULL,
      hgr__pass_map_inputs(rebuild, node->inputs, node->input_count), node->input_count, node->attrs, node->attr_count,
      &graph->entries[graph->node_row_ptr[n]], node->num_outputs, &node_id));
  rebuild->out->nodes[node_id].flatten_data = node->flatten_data;
  rebuild->out->nodes[node_id].declared_num_inputs = node->declared_num_inputs;
  rebuild->new_id[n] = node_id;
  return HGR_OK;
}

hgr_status_t hgr__pass_check_inferred(const hgr__pass_rebuild_t* rebuild, uint32_t node_id, uint32_t like,
                                      const char* pass) {
  return hgr__pass_check_inferred_output(rebuild, node_id, 0, like, pass);
}

hgr_status_t hgr__pass_check_inferred_output(const hgr__pass_rebuild_t* rebuild, uint32_t node_id, uint32_t output,
                                             uint32_t like, const char* pass) {
  const hgr_graph_t* graph = rebuild->graph;
  char label[HGR__LABEL_CAPACITY];
  hgr__graph_node_label(graph, like, label, sizeof(label));
  /* a fused node's: layer_norm's sum the second, a GEMM's segments */
  hgr__entry_t outputs[HGR__OUT_LAYOUT_OUTPUTS];
  uint32_t count = rebuild->out->nodes[node_id].num_outputs;
  if (count > HGR__OUT_LAYOUT_OUTPUTS || output >= count)
    return HGR_STATUS(HGR_STATUS_INTERNAL, "%s: the node replacing %s has %u outputs (output %u asked)", pass, label,
                      count, output);
  hgr_status_t status = hgr__op_infer(rebuild->out, node_id, NULL, outputs);
  const hgr__entry_t inferred = outputs[output];
  if (status && hgr_status_code(status) == HGR_STATUS_RESOURCE_EXHAUSTED)
    return hgr_status_annotate(status, "%s: %s", pass, label); /* not a bug of the pass */
  if (status) {
    hgr_status_t internal = HGR_STATUS(HGR_STATUS_INTERNAL, "%s: the node replacing %s fails its inference: %s", pass,
                                       label, hgr_status_message(status));
    hgr_status_free(status);
    return internal;
  }
  const hgr__entry_t* want = &graph->entries[graph->node_row_ptr[like]];
  bool same = hgr__dtype_same(inferred.dtype, want->dtype) && inferred.ndim == want->ndim;
  for (int32_t d = 0; same && d < want->ndim; ++d) same = inferred.shape[d] == want->shape[d];
  if (same) return HGR_OK;
  char got[160], expected[160];
  return HGR_STATUS(HGR_STATUS_INTERNAL, "%s: the node replacing %s infers %s, not %s", pass, label,
                    hgr__entry_shape(&inferred, got, sizeof(got)), hgr__entry_shape(want, expected, sizeof(expected)));
}

hgr_status_t hgr__pass_rebuild_finish(hgr__pass_rebuild_t* rebuild, hgr_graph_t** out_graph) {
  const hgr_graph_t* graph = rebuild->graph;
  hgr_graph_t* out = rebuild->out;
  for (uint32_t h = 0; h < graph->head_count; ++h) {
    uint32_t n = graph->heads[h].node_id;
    HGR_RETURN_IF_ERROR(hgr__graph_edit_add_head(
        out, (hgr__entry_ref_t){rebuild->new_id[n], graph->heads[h].index + rebuild->index_shift[n]}));
  }
  HGR_RETURN_IF_ERROR(hgr__graph_edit_order_inputs(out, graph));
  for (uint32_t e = 0; e < out->entry_count; ++e) out->entries[e].storage_id = e;
  HGR_RETURN_IF_ERROR(hgr__graph_edit_finish(out));
  *out_graph = out;
  rebuild->out = NULL;
  return HGR_OK;
}

hgr_status_t hgr__pass_rebuild(const hgr_graph_t* graph, hgr__pass_append_fn append, const void* pass,
                               const hgr__pass_log_t* log, hgr_graph_t** out_graph) {
  hgr__pass_rebuild_t r;
  HGR_RETURN_IF_ERROR(hgr__pass_rebuild_init(graph, &r));
  hgr_status_t status = append(pass, log, &r);
  if (!status) status = hgr__pass_rebuild_finish(&r, out_graph);
  hgr__pass_rebuild_free(&r);
  return status;
}

/* At most this many names per line: an elementwise group may hold dozens. */
#define LOG_NAMES 12

void hgr__pass_log_fused(const hgr__pass_log_t* log, const hgr_graph_t* graph, const char* func, uint32_t made,
                         const uint32_t* members, uint32_t count) {
  if (!log || !log->fn) return;
  char line[1024];
  size_t used = (size_t)snprintf(line, sizeof(line), "%s '%s' <- %u nodes:", func, graph->nodes[made].name, count);
  for (uint32_t k = 0; k < count && k < LOG_NAMES && used < sizeof(line); ++k)
    used += (size_t)snprintf(line + used, sizeof(line) - used, "%s '%s'", k ? "," : "", graph->nodes[members[k]].name);
  if (count > LOG_NAMES && used < sizeof(line))
    snprintf(line + used, sizeof(line) - used, ", ... (%u more)", count - LOG_NAMES);
  log->fn(log->user, line);
}
