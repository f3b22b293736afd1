/* Elementwise fusion (passes.h): find the groups, write each as a fused_elementwise
 * expression, and rebuild the graph with one node per group.
 *
 * The rebuilt graph is appended node by node in the old order (graph_edit.c); a
 * group's node goes where its last member was, which is after every input of every
 * member, so the order stays topological. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "alloc.h"
#include "ops.h"
#include "passes.h"
#include "text.h"

#define NONE HGR__PASS_NONE

/* A bool attr as hgr__attr_bool reads it; false when it does not parse. */
static bool bool_attr(const hgr__node_t* node, const char* key, bool fallback, bool* out) {
  const char* text = hgr__node_attr(node, key);
  *out = fallback;
  if (!text) return true;
  if (!strcasecmp(text, "1") || !strcasecmp(text, "true")) *out = true;
  else if (!strcasecmp(text, "0") || !strcasecmp(text, "false")) *out = false;
  else return false;
  return true;
}

/* batch_norm for inference as fused statements: its attrs (parsed as ops_norm.c
 * does) and whether the node is one the pass can write (one output, float32, [C]
 * parameters along a valid axis, no other attrs). */
typedef struct batch_norm_t {
  int32_t axis; /* non-negative */
  float epsilon;
  bool center, scale;
} batch_norm_t;

static bool batch_norm_of(const hgr_graph_t* graph, uint32_t n, batch_norm_t* out) {
  const hgr__node_t* node = &graph->nodes[n];
  if (!node->is_op || strcmp(node->func_name, "batch_norm") || node->num_outputs != 1 || node->input_count != 5 ||
      !hgr__pass_all_float32(graph, n))
    return false;
  for (uint32_t a = 0; a < node->attr_count; ++a) {
    const char* key = node->attrs[a].key;
    if (strcmp(key, "hash") && strcmp(key, "axis") && strcmp(key, "epsilon") && strcmp(key, "center") &&
        strcmp(key, "scale"))
      return false;
  }
  const hgr__entry_t* data = &graph->entries[hgr__graph_entry_id(graph, node->inputs[0])];
  const char* axis_text = hgr__node_attr(node, "axis");
  const char* epsilon_text = hgr__node_attr(node, "epsilon");
  char* end = NULL;
  long axis = axis_text ? strtol(axis_text, &end, 10) : 1;
  if ((axis_text && (end == axis_text || *end)) || axis < -data->ndim || axis >= data->ndim) return false;
  if (axis < 0) axis += data->ndim;
  double epsilon = epsilon_text ? strtod(epsilon_text, &end) : 1e-5;
  if ((epsilon_text && (end == epsilon_text || *end)) || !(epsilon >= 0 && epsilon <= FLT_MAX))
    return false;
  for (uint32_t i = 1; i < 5; ++i) {
    const hgr__entry_t* vector = &graph->entries[hgr__graph_entry_id(graph, node->inputs[i])];
    if (vector->ndim != 1 || vector->shape[0] != data->shape[axis]) return false;
  }
  out->axis = (int32_t)axis;
  out->epsilon = (float)epsilon;
  return bool_attr(node, "center", true, &out->center) && bool_attr(node, "scale", true, &out->scale);
}

/* Statements a member becomes (batch_norm: up to 6). */
#define BATCH_NORM_STATEMENTS 6
static uint32_t statement_weight(const hgr_graph_t* graph, uint32_t n) {
  return strcmp(graph->nodes[n].func_name, "batch_norm") ? 1 : BATCH_NORM_STATEMENTS;
}

/* Whether node n can be a group member: a fusable op on float32 values, one output,
 * only attrs it writes as literals, valid ones; or a batch_norm batch_norm_of takes. */
static bool fusable(const hgr_graph_t* graph, uint32_t n) {
  const hgr__node_t* node = &graph->nodes[n];
  batch_norm_t batch_norm;
  if (batch_norm_of(graph, n, &batch_norm)) return true;
  if (!node->is_op || node->num_outputs != 1) return false;
  const hgr__fusable_t* op = hgr__fusable_op(node->func_name);
  if (!op || node->input_count != op->operands || !hgr__pass_all_float32(graph, n)) return false;
  for (uint32_t a = 0; a < node->attr_count; ++a) {
    const char* key = node->attrs[a].key;
    bool known = !strcmp(key, "hash") || (op->params[0] && !strcmp(key, op->params[0])) ||
                 (op->params[1] && !strcmp(key, op->params[1]));
    if (!known) return false;
  }
  float params[2] = {0, 0};
  for (uint32_t k = 0; k < 2 && op->params[k]; ++k)
    if (!hgr__pass_fusable_attr(node, op, k, &params[k])) return false;
  if (!strcmp(op->name, "clip") && params[0] > params[1]) return false;
  return true;
}

typedef struct fuser_t {
  hgr_allocator_t allocator; /* the graph's: the fuser's tables and texts */
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
  char** axes;              /* per node (a group's last node): its attr "axes", or NULL (all -1) */
  uint32_t** inputs;        /* per node (a group's last node): its input entries */
  uint32_t* input_count;
} fuser_t;

static void fuser_free(fuser_t* f, uint32_t node_count) {
  for (uint32_t n = 0; f->expr && n < node_count; ++n) hgr__free(f->allocator, f->expr[n]);
  for (uint32_t n = 0; f->axes && n < node_count; ++n) hgr__free(f->allocator, f->axes[n]);
  for (uint32_t n = 0; f->inputs && n < node_count; ++n) hgr__free(f->allocator, f->inputs[n]);
  hgr__free(f->allocator, f->uses);
  hgr__free(f->allocator, f->head);
  hgr__free(f->allocator, f->consumer_start);
  hgr__free(f->allocator, f->consumers);
  hgr__free(f->allocator, f->candidate);
  hgr__free(f->allocator, f->group);
  hgr__free(f->allocator, f->members);
  hgr__free(f->allocator, f->member_start);
  hgr__free(f->allocator, f->member_count);
  hgr__free(f->allocator, f->expr);
  hgr__free(f->allocator, f->axes);
  hgr__free(f->allocator, f->inputs);
  hgr__free(f->allocator, f->input_count);
}

static hgr_status_t fuser_init(fuser_t* f, const hgr_graph_t* graph) {
  memset(f, 0, sizeof(*f));
  f->allocator = hgr__graph_allocator(graph);
  f->graph = graph;
  uint32_t nodes = graph->node_count, entries = graph->entry_count, references = 0;
  for (uint32_t n = 0; n < nodes; ++n) references += graph->nodes[n].input_count;
  f->uses = hgr__calloc(f->allocator, entries + 1, sizeof(*f->uses));
  f->head = hgr__calloc(f->allocator, entries + 1, sizeof(*f->head));
  f->consumer_start = hgr__calloc(f->allocator, entries + 2, sizeof(*f->consumer_start));
  f->consumers = hgr__calloc(f->allocator, references + 1, sizeof(*f->consumers));
  f->candidate = hgr__calloc(f->allocator, nodes + 1, sizeof(*f->candidate));
  f->group = hgr__alloc(f->allocator, (nodes + 1) * sizeof(*f->group));
  f->members = hgr__calloc(f->allocator, nodes + 1, sizeof(*f->members));
  f->member_start = hgr__calloc(f->allocator, nodes + 1, sizeof(*f->member_start));
  f->member_count = hgr__calloc(f->allocator, nodes + 1, sizeof(*f->member_count));
  f->expr = hgr__calloc(f->allocator, nodes + 1, sizeof(*f->expr));
  f->axes = hgr__calloc(f->allocator, nodes + 1, sizeof(*f->axes));
  f->inputs = hgr__calloc(f->allocator, nodes + 1, sizeof(*f->inputs));
  f->input_count = hgr__calloc(f->allocator, nodes + 1, sizeof(*f->input_count));
  if (!f->uses || !f->head || !f->consumer_start || !f->consumers || !f->candidate || !f->group || !f->members ||
      !f->member_start || !f->member_count || !f->expr || !f->axes || !f->inputs || !f->input_count)
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for fusing a graph of %u nodes", nodes);
  for (uint32_t n = 0; n < nodes; ++n) {
    f->group[n] = NONE;
    f->candidate[n] = fusable(graph, n);
  }
  hgr__pass_count_uses(graph, f->uses, f->head);
  /* Consumers per entry, counting sort style. */
  for (uint32_t n = 0; n < nodes; ++n)
    for (uint32_t i = 0; i < graph->nodes[n].input_count; ++i)
      f->consumer_start[hgr__graph_entry_id(graph, graph->nodes[n].inputs[i]) + 1]++;
  for (uint32_t e = 0; e < entries; ++e) f->consumer_start[e + 1] += f->consumer_start[e];
  uint32_t* fill = hgr__calloc(f->allocator, entries + 1, sizeof(*fill));
  if (!fill) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for fusing a graph");
  for (uint32_t n = 0; n < nodes; ++n)
    for (uint32_t i = 0; i < graph->nodes[n].input_count; ++i) {
      uint32_t e = hgr__graph_entry_id(graph, graph->nodes[n].inputs[i]);
      f->consumers[f->consumer_start[e] + fill[e]++] = n;
    }
  hgr__free(f->allocator, fill);
  return HGR_OK;
}

/* Whether every consumer of entry e is in group g (and e is no graph output). */
static bool consumed_inside(const fuser_t* f, uint32_t e, uint32_t g) {
  if (f->head[e]) return false;
  for (uint32_t k = f->consumer_start[e]; k < f->consumer_start[e + 1]; ++k)
    if (f->group[f->consumers[k]] != g) return false;
  return true;
}

/* Grows the group whose last node is `last` backwards: a producer joins once all
 * consumers of its output are members. Members go to f->members from *used on. */
static void grow(fuser_t* f, uint32_t last, uint32_t* used) {
  const hgr_graph_t* graph = f->graph;
  uint32_t start = *used, count = 0, statements = statement_weight(graph, last);
  f->group[last] = last;
  f->members[start + count++] = last;
  for (uint32_t next = 0; next < count; ++next) {
    const hgr__node_t* node = &graph->nodes[f->members[start + next]];
    for (uint32_t i = 0; i < node->input_count; ++i) {
      uint32_t p = node->inputs[i].node_id;
      if (!f->candidate[p] || f->group[p] != NONE) continue;
      if (statements + statement_weight(graph, p) > HGR__FUSED_MAX_STATEMENTS) continue;
      if (!consumed_inside(f, hgr__graph_entry_id(graph, node->inputs[i]), last)) continue;
      statements += statement_weight(graph, p);
      f->group[p] = last;
      f->members[start + count++] = p;
    }
  }
  qsort(&f->members[start], count, sizeof(uint32_t), hgr__pass_compare_ids);
  f->member_start[last] = start;
  f->member_count[last] = count;
  *used += count;
}

/* A group's expression under construction: its inputs (entry and axis, each once)
 * and statements. */
typedef struct writer_t {
  const fuser_t* f;
  uint32_t last;
  const uint32_t* members;
  uint32_t member_count;
  uint32_t* value_of; /* per member: the statement that gives its value */
  uint32_t inputs[HGR__FUSED_MAX_INPUTS];
  int32_t axes[HGR__FUSED_MAX_INPUTS];
  uint32_t input_count;
  uint32_t statements;
  bool too_many_inputs;
  hgr__text_t text;
} writer_t;

/* Appends " <operand>" for input reference ref placed at axis (-1: to the right):
 * v<k> for a member's value, else i<k> for the group's input. */
static void write_operand(writer_t* w, hgr__entry_ref_t ref, int32_t axis) {
  const hgr_graph_t* graph = w->f->graph;
  uint32_t p = ref.node_id;
  if (w->f->group[p] == w->last) {
    const uint32_t* at = bsearch(&p, w->members, w->member_count, sizeof(uint32_t), hgr__pass_compare_ids);
    hgr__text_appendf(&w->text, " v%u", w->value_of[at - w->members]);
    return;
  }
  uint32_t e = hgr__graph_entry_id(graph, ref), k = 0;
  while (k < w->input_count && !(w->inputs[k] == e && w->axes[k] == axis)) ++k;
  if (k == w->input_count) {
    if (w->input_count == HGR__FUSED_MAX_INPUTS) {
      w->too_many_inputs = true;
      return;
    }
    w->inputs[k] = e;
    w->axes[k] = axis;
    w->input_count++;
  }
  hgr__text_appendf(&w->text, " i%u", k);
}

/* Starts a statement: "; <op>" (no "; " before the first). */
static void begin_statement(writer_t* w, const char* op) {
  hgr__text_appendf(&w->text, "%s%s", w->statements ? "; " : "", op);
  w->statements++;
}

/* batch_norm as ops_norm.c's kernel computes it: (x - mean) / sqrt(var + epsilon),
 * times gamma (scale), plus beta (center); the [C] parameters along its axis. */
static void write_batch_norm(writer_t* w, const hgr__node_t* node, const batch_norm_t* bn) {
  uint32_t first = w->statements;
  begin_statement(w, "subtract");
  write_operand(w, node->inputs[0], -1);
  write_operand(w, node->inputs[3], bn->axis);
  begin_statement(w, "add");
  write_operand(w, node->inputs[4], bn->axis);
  hgr__text_appendf(&w->text, " %.9g", bn->epsilon);
  begin_statement(w, "sqrt");
  hgr__text_appendf(&w->text, " v%u", first + 1);
  begin_statement(w, "divide");
  hgr__text_appendf(&w->text, " v%u v%u", first, first + 2);
  if (bn->scale) {
    begin_statement(w, "multiply");
    hgr__text_appendf(&w->text, " v%u", w->statements - 2);
    write_operand(w, node->inputs[1], bn->axis);
  }
  if (bn->center) {
    begin_statement(w, "add");
    hgr__text_appendf(&w->text, " v%u", w->statements - 2);
    write_operand(w, node->inputs[2], bn->axis);
  }
}

/* The group's expression, input entries and their axes; *out_kept false (nothing
 * kept) when it has too many inputs; RESOURCE_EXHAUSTED when memory runs out. */
static hgr_status_t write_group(fuser_t* f, uint32_t last, bool* out_kept) {
  const hgr_graph_t* graph = f->graph;
  writer_t w;
  memset(&w, 0, sizeof(w));
  w.f = f;
  w.text.allocator = f->allocator;
  w.last = last;
  w.members = &f->members[f->member_start[last]];
  w.member_count = f->member_count[last];
  w.value_of = hgr__calloc(f->allocator, w.member_count, sizeof(uint32_t));
  *out_kept = false;
  if (!w.value_of) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for a fused expression");
  for (uint32_t m = 0; m < w.member_count && !w.too_many_inputs; ++m) {
    uint32_t n = w.members[m];
    const hgr__node_t* node = &graph->nodes[n];
    batch_norm_t bn;
    if (batch_norm_of(graph, n, &bn)) {
      write_batch_norm(&w, node, &bn);
    } else {
      const hgr__fusable_t* op = hgr__fusable_op(node->func_name);
      begin_statement(&w, op->name);
      for (uint32_t i = 0; i < node->input_count; ++i) write_operand(&w, node->inputs[i], -1);
      for (uint32_t k = 0; k < 2 && op->params[k]; ++k) {
        float value = 0;
        hgr__pass_fusable_attr(node, op, k, &value); /* checked by fusable() */
        hgr__text_appendf(&w.text, " %.9g", value);
      }
    }
    w.value_of[m] = w.statements - 1;
  }
  hgr__free(f->allocator, w.value_of);
  char* expr = hgr__text_take(&w.text);
  if (w.too_many_inputs) {
    hgr__free(f->allocator, expr);
    return HGR_OK;
  }
  bool any_axis = false;
  for (uint32_t k = 0; k < w.input_count; ++k) any_axis = any_axis || w.axes[k] >= 0;
  hgr__text_t axes = {.allocator = f->allocator};
  for (uint32_t k = 0; any_axis && k < w.input_count; ++k)
    hgr__text_appendf(&axes, "%s%d%s", k ? ", " : "[", w.axes[k], k + 1 == w.input_count ? "]" : "");
  f->axes[last] = any_axis ? hgr__text_take(&axes) : NULL;
  f->inputs[last] = hgr__alloc(f->allocator, (w.input_count + 1) * sizeof(uint32_t));
  if (!expr || !f->inputs[last] || (any_axis && !f->axes[last])) {
    hgr__free(f->allocator, expr);
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for a fused expression");
  }
  memcpy(f->inputs[last], w.inputs, w.input_count * sizeof(uint32_t));
  f->input_count[last] = w.input_count;
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

#define PASS "fusing elementwise nodes"

/* Appends every node of f->graph to r->out, a group as one node at its last member. */
static hgr_status_t rebuild(const void* pass, const hgr__pass_log_t* log, hgr__pass_rebuild_t* r) {
  const fuser_t* f = pass;
  const hgr_graph_t* graph = f->graph;
  hgr_status_t status = HGR_OK;
  for (uint32_t n = 0; !status && n < graph->node_count; ++n) {
    if (f->group[n] == NONE) {
      status = hgr__pass_copy_node(r, n, NULL);
    } else if (f->group[n] == n) {
      for (uint32_t k = 0; k < f->input_count[n]; ++k) {
        const hgr__entry_t* in = &graph->entries[f->inputs[n][k]];
        r->refs[k] = (hgr__entry_ref_t){r->new_id[in->node_id], f->inputs[n][k] - graph->node_row_ptr[in->node_id]};
      }
      hgr__attr_t attrs[2] = {{"expr", f->expr[n]}, {"axes", f->axes[n]}};
      status = hgr__graph_edit_append(r->out, graph->nodes[n].name, "fused_elementwise", r->refs, f->input_count[n],
                                      attrs, f->axes[n] ? 2 : 1, &graph->entries[graph->node_row_ptr[n]], 1,
                                      &r->new_id[n]);
      if (!status) status = hgr__pass_check_inferred(r, r->new_id[n], n, PASS);
      if (!status)
        hgr__pass_log_fused(log, graph, "fused_elementwise", n, &f->members[f->member_start[n]], f->member_count[n]);
    } /* else an inner member */
  }
  return status;
}

hgr_status_t hgr__fuse_elementwise(const hgr_graph_t* graph, const hgr__pass_log_t* log, hgr_graph_t** out_graph,
                                   hgr__fuse_report_t* out_report) {
  hgr__fuse_report_t report = {0, 0};
  if (out_report) *out_report = report;
  if (!graph || !out_graph) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, PASS ": NULL argument");
  *out_graph = NULL;
  HGR_RETURN_IF_ERROR(hgr__pass_check_unplaced(graph, PASS));
  fuser_t f;
  hgr_graph_t* fused = NULL;
  hgr_status_t status = fuser_init(&f, graph);
  if (!status) status = find_groups(&f, &report);
  if (!status && report.groups == 0) {
    fuser_free(&f, graph->node_count);
    *out_graph = hgr_graph_retain((hgr_graph_t*)graph);
    return HGR_OK;
  }
  if (!status) status = hgr__pass_rebuild(graph, rebuild, &f, log, &fused);
  fuser_free(&f, graph->node_count);
  if (status) return status;
  if (out_report) *out_report = report;
  *out_graph = fused;
  return HGR_OK;
}
