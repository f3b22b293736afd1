/* Elementwise fusion (fuse.h): find the groups, write each as a fused_elementwise
 * expression, and rebuild the graph with one node per group.
 *
 * The rebuilt graph is appended node by node in the old order (graph_edit.c); a
 * group's node goes where its last member was, which is after every input of every
 * member, so the order stays topological. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuse.h"
#include "ops.h"
#include "text.h"

#define NONE UINT32_MAX

/* A float attr of a fusable op as written into the expression: the node's value, or
 * the op's default; false when it is absent without a default or does not parse
 * (the node is then left to its op, which reports it). */
static bool param_value(const hgr__node_t* node, const hgr__fusable_t* op, uint32_t k, float* out) {
  const char* text = hgr__node_attr(node, op->params[k]);
  double value = op->defaults[k];
  if (text) {
    char* end = NULL;
    value = strtod(text, &end);
    if (end == text || *end) return false;
  } else if (isnan(value)) {
    return false;
  }
  *out = value > 3.4028234663852886e38 ? INFINITY : value < -3.4028234663852886e38 ? -INFINITY : (float)value;
  return !isnan(*out);
}

/* Whether node n can be a group member: a fusable op on float32 values, one output,
 * only attrs it writes as literals, valid ones. */
static bool fusable(const hgr_graph_t* graph, uint32_t n) {
  const hgr__node_t* node = &graph->nodes[n];
  if (!node->is_op || node->num_outputs != 1) return false;
  const hgr__fusable_t* op = hgr__fusable_op(node->func_name);
  if (!op || node->input_count != op->operands) return false;
  if (!hgr__dtype_same(graph->entries[graph->node_row_ptr[n]].dtype, (hgr_dtype_t){HGR_DTYPE_FLOAT, 32, 1}))
    return false;
  for (uint32_t i = 0; i < node->input_count; ++i)
    if (!hgr__dtype_same(graph->entries[hgr__graph_entry_id(graph, node->inputs[i])].dtype,
                         (hgr_dtype_t){HGR_DTYPE_FLOAT, 32, 1}))
      return false;
  for (uint32_t a = 0; a < node->attr_count; ++a) {
    const char* key = node->attrs[a].key;
    bool known = !strcmp(key, "hash") || (op->params[0] && !strcmp(key, op->params[0])) ||
                 (op->params[1] && !strcmp(key, op->params[1]));
    if (!known) return false;
  }
  float params[2] = {0, 0};
  for (uint32_t k = 0; k < 2 && op->params[k]; ++k)
    if (!param_value(node, op, k, &params[k])) return false;
  if (!strcmp(op->name, "clip") && params[0] > params[1]) return false;
  return true;
}

typedef struct fuser_t {
  const hgr_graph_t* graph;
  uint32_t* uses;           /* per entry: input references to it, plus 1 per head */
  bool* head;               /* per entry */
  uint32_t* consumer_start; /* per entry + 1: the consumers' range in consumers */
  uint32_t* consumers;      /* node ids, one per input reference */
  bool* candidate;          /* per node: fusable */
  uint32_t* group;          /* per node: the group's last node, or NONE */
  uint32_t* members;        /* each group's members, ascending, at member_start[last node] */
  uint32_t* member_start;   /* per node (a group's last node): where its members start */
  uint32_t* member_count;   /* per node (a group's last node): 0 when it is no group */
  char** expr;              /* per node (a group's last node): its expression */
  uint32_t** inputs;        /* per node (a group's last node): its input entries */
  uint32_t* input_count;
} fuser_t;

static void fuser_free(fuser_t* f, uint32_t node_count) {
  for (uint32_t n = 0; f->expr && n < node_count; ++n) free(f->expr[n]);
  for (uint32_t n = 0; f->inputs && n < node_count; ++n) free(f->inputs[n]);
  free(f->uses);
  free(f->head);
  free(f->consumer_start);
  free(f->consumers);
  free(f->candidate);
  free(f->group);
  free(f->members);
  free(f->member_start);
  free(f->member_count);
  free(f->expr);
  free(f->inputs);
  free(f->input_count);
}

static hgr_status_t fuser_init(fuser_t* f, const hgr_graph_t* graph) {
  memset(f, 0, sizeof(*f));
  f->graph = graph;
  uint32_t nodes = graph->node_count, entries = graph->entry_count, references = 0;
  for (uint32_t n = 0; n < nodes; ++n) references += graph->nodes[n].input_count;
  f->uses = calloc(entries + 1, sizeof(*f->uses));
  f->head = calloc(entries + 1, sizeof(*f->head));
  f->consumer_start = calloc(entries + 2, sizeof(*f->consumer_start));
  f->consumers = calloc(references + 1, sizeof(*f->consumers));
  f->candidate = calloc(nodes + 1, sizeof(*f->candidate));
  f->group = malloc((nodes + 1) * sizeof(*f->group));
  f->members = calloc(nodes + 1, sizeof(*f->members));
  f->member_start = calloc(nodes + 1, sizeof(*f->member_start));
  f->member_count = calloc(nodes + 1, sizeof(*f->member_count));
  f->expr = calloc(nodes + 1, sizeof(*f->expr));
  f->inputs = calloc(nodes + 1, sizeof(*f->inputs));
  f->input_count = calloc(nodes + 1, sizeof(*f->input_count));
  if (!f->uses || !f->head || !f->consumer_start || !f->consumers || !f->candidate || !f->group || !f->members ||
      !f->member_start || !f->member_count || !f->expr || !f->inputs || !f->input_count)
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for fusing a graph of %u nodes", nodes);
  for (uint32_t n = 0; n < nodes; ++n) {
    f->group[n] = NONE;
    f->candidate[n] = fusable(graph, n);
    for (uint32_t i = 0; i < graph->nodes[n].input_count; ++i)
      f->uses[hgr__graph_entry_id(graph, graph->nodes[n].inputs[i])]++;
  }
  for (uint32_t h = 0; h < graph->head_count; ++h) {
    uint32_t e = hgr__graph_entry_id(graph, graph->heads[h]);
    f->head[e] = true;
    f->uses[e]++;
  }
  /* Consumers per entry, counting sort style. */
  for (uint32_t n = 0; n < nodes; ++n)
    for (uint32_t i = 0; i < graph->nodes[n].input_count; ++i)
      f->consumer_start[hgr__graph_entry_id(graph, graph->nodes[n].inputs[i]) + 1]++;
  for (uint32_t e = 0; e < entries; ++e) f->consumer_start[e + 1] += f->consumer_start[e];
  uint32_t* fill = calloc(entries + 1, sizeof(*fill));
  if (!fill) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for fusing a graph");
  for (uint32_t n = 0; n < nodes; ++n)
    for (uint32_t i = 0; i < graph->nodes[n].input_count; ++i) {
      uint32_t e = hgr__graph_entry_id(graph, graph->nodes[n].inputs[i]);
      f->consumers[f->consumer_start[e] + fill[e]++] = n;
    }
  free(fill);
  return HGR_OK;
}

/* Whether every consumer of entry e is in group g (and e is no graph output). */
static bool consumed_inside(const fuser_t* f, uint32_t e, uint32_t g) {
  if (f->head[e]) return false;
  for (uint32_t k = f->consumer_start[e]; k < f->consumer_start[e + 1]; ++k)
    if (f->group[f->consumers[k]] != g) return false;
  return true;
}

static int compare_ids(const void* a, const void* b) {
  uint32_t x = *(const uint32_t*)a, y = *(const uint32_t*)b;
  return x < y ? -1 : x > y;
}

/* Grows the group whose last node is `last` backwards: a producer joins once all
 * consumers of its output are members. Members go to f->members from *used on. */
static void grow(fuser_t* f, uint32_t last, uint32_t* used) {
  const hgr_graph_t* graph = f->graph;
  uint32_t start = *used, count = 0;
  f->group[last] = last;
  f->members[start + count++] = last;
  for (uint32_t next = 0; next < count && count < HGR__FUSED_MAX_STATEMENTS; ++next) {
    const hgr__node_t* node = &graph->nodes[f->members[start + next]];
    for (uint32_t i = 0; i < node->input_count && count < HGR__FUSED_MAX_STATEMENTS; ++i) {
      uint32_t p = node->inputs[i].node_id;
      if (!f->candidate[p] || f->group[p] != NONE) continue;
      if (!consumed_inside(f, hgr__graph_entry_id(graph, node->inputs[i]), last)) continue;
      f->group[p] = last;
      f->members[start + count++] = p;
    }
  }
  qsort(&f->members[start], count, sizeof(uint32_t), compare_ids);
  f->member_start[last] = start;
  f->member_count[last] = count;
  *used += count;
}

/* The group's expression and input entries; false (nothing kept) when it has too
 * many inputs, RESOURCE_EXHAUSTED when memory runs out. */
static hgr_status_t write_group(fuser_t* f, uint32_t last, bool* out_kept) {
  const hgr_graph_t* graph = f->graph;
  const uint32_t* members = &f->members[f->member_start[last]];
  uint32_t count = f->member_count[last];
  uint32_t inputs[HGR__FUSED_MAX_INPUTS], input_count = 0;
  hgr__text_t text = {0};
  *out_kept = false;
  for (uint32_t s = 0; s < count; ++s) {
    const hgr__node_t* node = &graph->nodes[members[s]];
    const hgr__fusable_t* op = hgr__fusable_op(node->func_name);
    hgr__text_appendf(&text, "%s%s", s ? "; " : "", op->name);
    for (uint32_t i = 0; i < node->input_count; ++i) {
      uint32_t p = node->inputs[i].node_id;
      if (f->group[p] == last) { /* a member: its statement */
        const uint32_t* at = bsearch(&p, members, count, sizeof(uint32_t), compare_ids);
        hgr__text_appendf(&text, " v%u", (uint32_t)(at - members));
        continue;
      }
      uint32_t e = hgr__graph_entry_id(graph, node->inputs[i]), k = 0;
      while (k < input_count && inputs[k] != e) ++k;
      if (k == input_count) {
        if (input_count == HGR__FUSED_MAX_INPUTS) {
          free(hgr__text_take(&text));
          return HGR_OK;
        }
        inputs[input_count++] = e;
      }
      hgr__text_appendf(&text, " i%u", k);
    }
    for (uint32_t k = 0; k < 2 && op->params[k]; ++k) {
      float value = 0;
      param_value(node, op, k, &value); /* checked by fusable() */
      hgr__text_appendf(&text, " %.9g", value);
    }
  }
  char* expr = hgr__text_take(&text);
  f->inputs[last] = malloc((input_count + 1) * sizeof(uint32_t));
  if (!expr || !f->inputs[last]) {
    free(expr);
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for a fused expression");
  }
  memcpy(f->inputs[last], inputs, input_count * sizeof(uint32_t));
  f->input_count[last] = input_count;
  f->expr[last] = expr;
  *out_kept = true;
  return HGR_OK;
}

/* Finds the groups; groups of one node, or with too many inputs, are dissolved. */
static hgr_status_t find_groups(fuser_t* f, hgr__fuse_report_t* report) {
  uint32_t used = 0;
  for (uint32_t n = f->graph->node_count; n-- > 0;)
    if (f->candidate[n] && f->group[n] == NONE) grow(f, n, &used);
  for (uint32_t n = 0; n < f->graph->node_count; ++n) {
    if (f->group[n] != n) continue;
    bool kept = false;
    if (f->member_count[n] >= 2) HGR_RETURN_IF_ERROR(write_group(f, n, &kept));
    if (kept) {
      report->groups++;
      report->fused_nodes += f->member_count[n];
      continue;
    }
    for (uint32_t k = 0; k < f->member_count[n]; ++k) f->group[f->members[f->member_start[n] + k]] = NONE;
    f->member_count[n] = 0;
  }
  return HGR_OK;
}

/* Checks the fused node's output against the last member's, through the op's own
 * inference: a difference is a bug of the pass. */
static hgr_status_t check_fused(const hgr_graph_t* graph, hgr_graph_t* fused, uint32_t node_id, uint32_t last) {
  hgr__entry_t inferred;
  hgr_status_t status = hgr__op_infer(fused, node_id, NULL, &inferred);
  if (status) {
    hgr_status_t internal = HGR_STATUS(HGR_STATUS_INTERNAL, "fusing elementwise nodes: the fused node fails its "
                                       "inference: %s", hgr_status_message(status));
    hgr_status_free(status);
    return internal;
  }
  const hgr__entry_t* want = &graph->entries[graph->node_row_ptr[last]];
  bool same = hgr__dtype_same(inferred.dtype, want->dtype) && inferred.ndim == want->ndim;
  for (int32_t d = 0; same && d < want->ndim; ++d) same = inferred.shape[d] == want->shape[d];
  if (same) return HGR_OK;
  char label[HGR__LABEL_CAPACITY], got[160], expected[160];
  return HGR_STATUS(HGR_STATUS_INTERNAL, "fusing elementwise nodes: the node fusing up to %s infers %s, not %s",
                    hgr__graph_node_label(graph, last, label, sizeof(label)),
                    hgr__entry_shape(&inferred, got, sizeof(got)), hgr__entry_shape(want, expected, sizeof(expected)));
}

/* Appends every node of f->graph to fused, a group as one node at its last member. */
static hgr_status_t rebuild(const fuser_t* f, hgr_graph_t* fused) {
  const hgr_graph_t* graph = f->graph;
  uint32_t most_inputs = HGR__FUSED_MAX_INPUTS;
  for (uint32_t n = 0; n < graph->node_count; ++n)
    if (graph->nodes[n].input_count > most_inputs) most_inputs = graph->nodes[n].input_count;
  uint32_t* new_id = malloc((graph->node_count + 1) * sizeof(*new_id));
  hgr__entry_ref_t* refs = malloc(((size_t)most_inputs + 1) * sizeof(*refs));
  hgr_status_t status = new_id && refs ? HGR_OK : HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  for (uint32_t n = 0; !status && n < graph->node_count; ++n) {
    const hgr__node_t* node = &graph->nodes[n];
    new_id[n] = NONE;
    if (f->group[n] != NONE && f->group[n] != n) continue; /* an inner member */
    if (f->group[n] == n) {
      for (uint32_t k = 0; k < f->input_count[n]; ++k) {
        const hgr__entry_t* in = &graph->entries[f->inputs[n][k]];
        refs[k] = (hgr__entry_ref_t){new_id[in->node_id], f->inputs[n][k] - graph->node_row_ptr[in->node_id]};
      }
      hgr__attr_t attr = {"expr", f->expr[n]};
      status = hgr__graph_edit_append(fused, node->name, "fused_elementwise", refs, f->input_count[n], &attr, 1,
                                      &graph->entries[graph->node_row_ptr[n]], 1, &new_id[n]);
      if (!status) status = check_fused(graph, fused, new_id[n], n);
      continue;
    }
    for (uint32_t i = 0; i < node->input_count; ++i)
      refs[i] = (hgr__entry_ref_t){new_id[node->inputs[i].node_id], node->inputs[i].index};
    status = hgr__graph_edit_append(fused, node->name, node->is_op ? node->func_name : NULL, refs, node->input_count,
                                    node->attrs, node->attr_count, &graph->entries[graph->node_row_ptr[n]],
                                    node->num_outputs, &new_id[n]);
    if (!status) {
      fused->nodes[new_id[n]].flatten_data = node->flatten_data;
      fused->nodes[new_id[n]].declared_num_inputs = node->declared_num_inputs;
    }
  }
  for (uint32_t h = 0; !status && h < graph->head_count; ++h)
    status = hgr__graph_edit_add_head(fused, (hgr__entry_ref_t){new_id[graph->heads[h].node_id], graph->heads[h].index});
  if (!status) {
    hgr__graph_edit_order_inputs(fused, graph);
    for (uint32_t e = 0; e < fused->entry_count; ++e) fused->entries[e].storage_id = e;
    status = hgr__graph_edit_finish(fused);
  }
  free(new_id);
  free(refs);
  return status;
}

hgr_status_t hgr__fuse_elementwise(const hgr_graph_t* graph, hgr_graph_t** out_graph, hgr__fuse_report_t* out_report) {
  hgr__fuse_report_t report = {0, 0};
  if (out_report) *out_report = report;
  if (!graph || !out_graph) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "fusing elementwise nodes: NULL argument");
  *out_graph = NULL;
  if (graph->has_device_index)
    return HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION,
                      "fusing elementwise nodes: the graph is placed (it has device keys); fuse before placement");
  for (uint32_t n = 0; n < graph->node_count; ++n)
    if (graph->nodes[n].is_op && !strcmp(graph->nodes[n].func_name, "__copy")) {
      char label[HGR__LABEL_CAPACITY];
      return HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION,
                        "fusing elementwise nodes: %s is a __copy (the graph is placed); fuse before placement",
                        hgr__graph_node_label(graph, n, label, sizeof(label)));
    }
  fuser_t f;
  hgr_graph_t* fused = NULL;
  hgr_status_t status = fuser_init(&f, graph);
  if (!status) status = find_groups(&f, &report);
  if (!status && report.groups == 0) {
    fuser_free(&f, graph->node_count);
    *out_graph = hgr_graph_retain((hgr_graph_t*)graph);
    return HGR_OK;
  }
  if (!status) status = hgr__graph_edit_new(&fused);
  if (!status) status = rebuild(&f, fused);
  fuser_free(&f, graph->node_count);
  if (status) {
    hgr_graph_release(fused);
    return status;
  }
  if (out_report) *out_report = report;
  *out_graph = fused;
  return HGR_OK;
}
