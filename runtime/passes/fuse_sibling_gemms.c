/* Sibling GEMM fusion (passes.h): matmuls that read the same value as their A, each
 * with constant weights in panels (pack_gemm_weights.c), become one matmul of as many
 * outputs (2 or 3) over the weights side by side: the op splits its columns evenly,
 * output s the columns of member s, each through the member's own output layout
 * (ops_linalg.c; kernels/linalg.cl's HGR_GEMM_SEG_PARAMS). A transformer layer's q, k
 * and v projections are three such matmuls, each a launch whose work-groups leave a
 * thread of a CPU driver idle at its start and end; as one they are one launch of
 * three times the columns.
 *
 * The members: matmul nodes with one float32 output and only the attrs below; tensor_b
 * a param in panels (attr b_panel P, units N a multiple of 32 and of P, so that no
 * panel is padded and the panels side by side are the columns side by side), the same
 * K, N, P and, where present, the same transpose_a, out_dtype, activation (alpha,
 * a_min, a_max) and out_shape; out_axes of the same rank; a bias param [N] on every
 * member or on none. Up to 3 members in node order form a group; a fourth starts
 * another. The group's matmul stands at its first member's place, under its name,
 * reading two new params, "<weight>.siblings" (the panels side by side) and
 * "<bias>.siblings"; params only the members read leave the graph. The conditions
 * are on structure and attrs, never on the value's extents, so every shape of a model
 * fuses the same nodes.
 *
 * The other form, a product split by slices: a matmul (one float32 output, no layout)
 * whose result, directly or through one reshape that keeps its last axis, only 2 or 3
 * strided_slices read, which split its last axis into equal consecutive parts (begin,
 * end and strides of every dim, strides 1, the other dims whole) of a multiple of 32
 * columns each, every slice with the same out_shape (its layout, or its own shape
 * with the identity permutation): the matmul gives the slices' values as its outputs,
 * in the order of their columns, at its place and under its name (ONNX
 * Runtime's optimized exports project q, k and v as one matmul, then slice it). No
 * params are made for this form.
 *
 * After the weight packing and the output layout fusion, whose results it joins; the
 * packed params are read from made (the pipeline's params so far) before params. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "passes.h"
#include "text.h"

#define PASS "fusing sibling GEMMs"
#define NONE HGR__PASS_NONE
#define MAX_MEMBERS HGR__OUT_LAYOUT_OUTPUTS

/* The attrs that must agree between members (absent agreeing with absent). */
static const char* const same_attrs[] = {"b_panel", "units", "transpose_a", "out_dtype", "activation",
                                         "alpha",   "a_min", "a_max",       "out_shape"};

typedef struct group_t {
  uint32_t members[MAX_MEMBERS]; /* the matmuls; or, split, the slices in column order */
  uint32_t count;
  uint32_t split;      /* the split matmul, or NONE: siblings */
  uint32_t reshape;    /* the split matmul's reshape before the slices, or NONE */
  uint32_t a_entry;    /* the value the members read as A, through reshapes */
  uint32_t a_input;    /* the entry the first member reads */
  int64_t k, n, panel; /* each member's */
  bool bias;
  char* weight_name; /* the new params' names, from the finder's allocator */
  char* bias_name;
} group_t;

typedef struct finder_t {
  hgr_allocator_t allocator;
  const hgr_graph_t* graph;
  const hgr_params_t* params;
  const hgr_params_t* made;
  group_t* groups;
  uint32_t group_count;
  uint32_t* group_of; /* per node: the group a member belongs to, or NONE */
  bool* dropped;      /* per node: a param only members read, a reshape only a later member reads, or a
                         split matmul's reshape */
  uint32_t* sole_consumer; /* per entry (hgr__pass_sole_consumers) */
} finder_t;

static void finder_free(finder_t* f) {
  for (uint32_t g = 0; f->groups && g < f->group_count; ++g) {
    hgr__free(f->allocator, f->groups[g].weight_name);
    hgr__free(f->allocator, f->groups[g].bias_name);
  }
  hgr__free(f->allocator, f->groups);
  hgr__free(f->allocator, f->group_of);
  hgr__free(f->allocator, f->dropped);
  hgr__free(f->allocator, f->sole_consumer);
}

/* A param's data, from made (the params earlier passes made) or params. */
static const float* param_data(const finder_t* f, uint32_t n, uint64_t count) {
  const void* data = hgr__pass_param_data(f->graph, f->made, n, HGR__DTYPE_F32, count * sizeof(float));
  if (!data) data = hgr__pass_param_data(f->graph, f->params, n, HGR__DTYPE_F32, count * sizeof(float));
  return data;
}

static bool int_attr(const hgr__node_t* node, const char* key, int64_t* out) {
  const char* value = hgr__node_attr(node, key);
  char* end = NULL;
  if (!value) return false;
  long long parsed = strtoll(value, &end, 10);
  if (end == value || *end) return false;
  *out = parsed;
  return true;
}

/* The number of ints in a list attr such as "[0, 2, 1, 3]" (its commas plus one). */
static uint32_t list_count(const char* value) {
  uint32_t count = 1;
  for (const char* c = value; *c; ++c) count += *c == ',';
  return count;
}

/* The value `ref` is, through reshapes (an ONNX MatMul of a 3-D input reads its own
 * reshape to rows), as an entry id. */
static uint32_t through_reshapes(const hgr_graph_t* graph, hgr__entry_ref_t ref) {
  for (uint32_t depth = 0; depth < 8; ++depth) {
    const hgr__node_t* node = &graph->nodes[ref.node_id];
    if (!node->is_op || strcmp(node->func_name, "reshape") || node->input_count != 1) break;
    ref = node->inputs[0];
  }
  return hgr__graph_entry_id(graph, ref);
}

/* Whether node n can join a group; sets its group's fields but members and names. */
static bool member(const finder_t* f, uint32_t n, group_t* out) {
  static const char* const known[] = {"units", "out_dtype", "transpose_a", "transpose_b", "b_panel", "activation",
                                      "alpha", "a_min",     "a_max",       "out_shape",   "out_axes", "hash"};
  const hgr_graph_t* graph = f->graph;
  const hgr__node_t* node = &graph->nodes[n];
  if (!node->is_op || strcmp(node->func_name, "matmul") || node->num_outputs != 1 || node->input_count < 2 ||
      !hgr__pass_all_float32(graph, n))
    return false;
  for (uint32_t a = 0; a < node->attr_count; ++a) {
    bool found = false;
    for (size_t k = 0; k < sizeof(known) / sizeof(known[0]) && !found; ++k) found = !strcmp(node->attrs[a].key, known[k]);
    if (!found) return false;
  }
  const char* transpose_b = hgr__node_attr(node, "transpose_b");
  if (transpose_b && strcmp(transpose_b, "0") && strcmp(transpose_b, "false") && strcmp(transpose_b, "False"))
    return false;
  int64_t panel, units;
  if (!int_attr(node, "b_panel", &panel) || !int_attr(node, "units", &units) || panel < 4 || units < 32 ||
      units % 32 || units % panel || units > INT32_MAX)
    return false;
  const hgr__entry_t* b = &graph->entries[hgr__graph_entry_id(graph, node->inputs[1])];
  if (b->ndim != 3 || b->shape[0] != units / panel || b->shape[2] != panel || b->shape[1] < 1 ||
      !param_data(f, node->inputs[1].node_id, b->element_count))
    return false;
  bool bias = node->input_count == 3;
  if (bias) {
    const hgr__entry_t* c = &graph->entries[hgr__graph_entry_id(graph, node->inputs[2])];
    if (c->ndim != 1 || c->shape[0] != units || !param_data(f, node->inputs[2].node_id, (uint64_t)units)) return false;
  }
  const char* shape = hgr__node_attr(node, "out_shape");
  const char* axes = hgr__node_attr(node, "out_axes");
  if ((shape == NULL) != (axes == NULL) || (shape && list_count(shape) != list_count(axes))) return false;
  uint32_t a = hgr__graph_entry_id(graph, node->inputs[0]);
  *out = (group_t){{0}, 0, NONE, NONE, through_reshapes(graph, node->inputs[0]), a, b->shape[1], units, panel, bias,
                   NULL, NULL};
  return true;
}

/* Whether node n (a member) joins group g, whose first member sets the attrs. */
static bool joins(const finder_t* f, const group_t* g, const group_t* candidate, uint32_t n) {
  if (g->count == MAX_MEMBERS || g->a_entry != candidate->a_entry || g->k != candidate->k || g->n != candidate->n ||
      g->panel != candidate->panel || g->bias != candidate->bias ||
      !hgr__pass_same_shape(&f->graph->entries[g->a_input], &f->graph->entries[candidate->a_input]))
    return false;
  const hgr__node_t* first = &f->graph->nodes[g->members[0]];
  const hgr__node_t* node = &f->graph->nodes[n];
  for (size_t a = 0; a < sizeof(same_attrs) / sizeof(same_attrs[0]); ++a) {
    const char* x = hgr__node_attr(first, same_attrs[a]);
    const char* y = hgr__node_attr(node, same_attrs[a]);
    if ((x == NULL) != (y == NULL) || (x && strcmp(x, y))) return false;
  }
  return true;
}

/* Whether name is a node's, a param's (of params or made) or an earlier group's
 * (hgr__pass_taken_fn). */
static bool name_taken(const void* finder, const char* name) {
  const finder_t* f = finder;
  for (uint32_t g = 0; g < f->group_count; ++g)
    if ((f->groups[g].weight_name && !strcmp(f->groups[g].weight_name, name)) ||
        (f->groups[g].bias_name && !strcmp(f->groups[g].bias_name, name)))
      return true;
  return hgr__pass_name_in_use(f->graph, f->params, f->made, name);
}

/* The int list attr key of node n (count values at most) into values; false when
 * absent or not a list of count ints. */
static bool ints_attr(const hgr_graph_t* graph, uint32_t n, const char* key, int64_t* values, uint32_t count) {
  hgr__op_ctx_t ctx;
  hgr_status_t status = hgr__op_inspect(graph, n, &ctx);
  uint32_t got = 0;
  bool present = false;
  if (!status) {
    status = hgr__attr_ints(&ctx, key, values, count, &got, &present);
    hgr__op_ctx_free(&ctx);
  }
  bool ok = !status && present && got == count;
  hgr_status_free(status);
  return ok;
}

/* The first column of strided_slice n of value entry e, when it takes `width`
 * consecutive columns of e's last axis and every other dim whole; -1 otherwise. */
static int64_t slice_column(const finder_t* f, uint32_t n, uint32_t e, int64_t width) {
  static const char* const known[] = {"begin", "end", "strides", "slice_mode", "out_shape", "out_axes", "hash"};
  const hgr_graph_t* graph = f->graph;
  const hgr__node_t* node = &graph->nodes[n];
  const hgr__entry_t* in = &graph->entries[e];
  if (!node->is_op || strcmp(node->func_name, "strided_slice") || node->input_count != 1 || node->num_outputs != 1 ||
      in->ndim < 1 || in->ndim > HGR_MAX_DIMS || !hgr__pass_all_float32(graph, n))
    return -1;
  for (uint32_t a = 0; a < node->attr_count; ++a) {
    bool found = false;
    for (size_t k = 0; k < sizeof(known) / sizeof(known[0]) && !found; ++k) found = !strcmp(node->attrs[a].key, known[k]);
    if (!found) return -1;
  }
  const char* mode = hgr__node_attr(node, "slice_mode");
  if (mode && strcmp(mode, "end")) return -1;
  int64_t begin[HGR_MAX_DIMS], end[HGR_MAX_DIMS], strides[HGR_MAX_DIMS];
  uint32_t rank = (uint32_t)in->ndim;
  if (!ints_attr(graph, n, "begin", begin, rank) || !ints_attr(graph, n, "end", end, rank) ||
      !ints_attr(graph, n, "strides", strides, rank))
    return -1;
  for (uint32_t d = 0; d < rank; ++d) {
    bool last = d + 1 == rank;
    if (strides[d] != 1 || begin[d] < 0 || end[d] < 0) return -1;
    if (!last && (begin[d] != 0 || end[d] < in->shape[d])) return -1;
    if (last && (end[d] - begin[d] != width || end[d] > in->shape[d])) return -1;
  }
  return begin[rank - 1];
}

/* Whether matmul n's result is split by slices (the file's head); fills g. */
static bool split_group(const finder_t* f, uint32_t n, group_t* g) {
  const hgr_graph_t* graph = f->graph;
  const hgr__node_t* node = &graph->nodes[n];
  if (!node->is_op || strcmp(node->func_name, "matmul") || node->num_outputs != 1 || !hgr__pass_all_float32(graph, n) ||
      hgr__node_attr(node, "out_shape") || hgr__node_attr(node, "out_axes"))
    return false;
  uint32_t e = graph->node_row_ptr[n], reshape = NONE;
  const hgr__entry_t* product = &graph->entries[e];
  int64_t columns = product->shape[product->ndim - 1];
  uint32_t next = f->sole_consumer[e];
  if (next != NONE && graph->nodes[next].is_op && !strcmp(graph->nodes[next].func_name, "reshape") &&
      graph->nodes[next].input_count == 1 && graph->nodes[next].num_outputs == 1) {
    const hgr__entry_t* view = &graph->entries[graph->node_row_ptr[next]];
    if (view->ndim < 1 || view->shape[view->ndim - 1] != columns) return false;
    reshape = next;
    e = graph->node_row_ptr[next];
  }
  /* the slices: every reader of e, in node order */
  uint32_t readers[MAX_MEMBERS + 1], count = 0;
  for (uint32_t m = 0; m < graph->node_count && count <= MAX_MEMBERS; ++m) {
    const hgr__node_t* reader = &graph->nodes[m];
    for (uint32_t i = 0; i < reader->input_count; ++i)
      if (hgr__graph_entry_id(graph, reader->inputs[i]) == e) {
        if (count <= MAX_MEMBERS) readers[count] = m;
        ++count;
      }
  }
  for (uint32_t h = 0; h < graph->head_count; ++h)
    if (hgr__graph_entry_id(graph, graph->heads[h]) == e) return false;
  if (count < 2 || count > MAX_MEMBERS || columns % count || columns / count % 32) return false;
  int64_t width = columns / count;
  *g = (group_t){{0}, count, n, reshape, e, e, 0, columns, 0, false, NULL, NULL};
  bool taken[MAX_MEMBERS] = {false, false, false};
  const char* view = NULL;
  for (uint32_t r = 0; r < count; ++r) {
    int64_t column = slice_column(f, readers[r], e, width);
    if (column < 0 || column % width || taken[column / width]) return false;
    taken[column / width] = true;
    g->members[column / width] = readers[r];
    /* every slice's out_shape the same (a slice without one: its own shape) */
    const hgr__node_t* slice = &graph->nodes[readers[r]];
    const char* own = hgr__node_attr(slice, "out_shape");
    if ((own == NULL) != (hgr__node_attr(slice, "out_axes") == NULL)) return false;
    if (r && ((own == NULL) != (view == NULL) || (own && strcmp(own, view)))) return false;
    view = own;
  }
  return true;
}

/* Groups the members, names each group's params, and marks the params only the
 * grouped members read. */
static hgr_status_t find_groups(finder_t* f) {
  const hgr_graph_t* graph = f->graph;
  f->groups = hgr__calloc(f->allocator, graph->node_count + 1, sizeof(*f->groups));
  f->group_of = hgr__alloc(f->allocator, (graph->node_count + 1) * sizeof(*f->group_of));
  f->dropped = hgr__calloc(f->allocator, graph->node_count + 1, sizeof(*f->dropped));
  uint32_t* uses = hgr__calloc(f->allocator, graph->entry_count + 1, sizeof(*uses));
  uint32_t* grouped_uses = hgr__calloc(f->allocator, graph->entry_count + 1, sizeof(*grouped_uses));
  bool* head = hgr__calloc(f->allocator, graph->entry_count + 1, sizeof(*head));
  f->sole_consumer = hgr__pass_sole_consumers(graph);
  hgr_status_t status = HGR_OK;
  if (!f->groups || !f->group_of || !f->dropped || !uses || !grouped_uses || !head || !f->sole_consumer)
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, PASS ": out of host memory for a graph of %u nodes",
                        graph->node_count);
  for (uint32_t n = 0; !status && n < graph->node_count; ++n) f->group_of[n] = NONE;
  /* products split by slices: the matmul, its reshape and its slices */
  uint32_t splits = 0;
  for (uint32_t n = 0; !status && n < graph->node_count; ++n) {
    group_t split;
    if (f->group_of[n] != NONE || !split_group(f, n, &split)) continue;
    f->groups[splits] = split;
    f->group_of[n] = splits;
    for (uint32_t m = 0; m < split.count; ++m) f->group_of[split.members[m]] = splits;
    if (split.reshape != NONE) f->dropped[split.reshape] = true;
    ++splits;
  }
  f->group_count = splits;
  for (uint32_t n = 0; !status && n < graph->node_count; ++n) {
    group_t candidate;
    if (f->group_of[n] != NONE || !member(f, n, &candidate)) continue;
    uint32_t g = splits;
    while (g < f->group_count && !joins(f, &f->groups[g], &candidate, n)) ++g;
    if (g == f->group_count) f->groups[f->group_count++] = candidate;
    f->groups[g].members[f->groups[g].count++] = n;
    f->group_of[n] = g;
  }
  /* groups of one member stay as they are */
  uint32_t kept = splits;
  for (uint32_t g = splits; !status && g < f->group_count; ++g) {
    group_t* group = &f->groups[g];
    for (uint32_t m = 0; m < group->count; ++m) f->group_of[group->members[m]] = group->count > 1 ? kept : NONE;
    if (group->count > 1) f->groups[kept++] = *group;
  }
  f->group_count = splits;
  for (uint32_t g = splits; !status && g < kept; ++g) {
    group_t* group = &f->groups[g];
    const hgr__node_t* first = &graph->nodes[group->members[0]];
    /* "<param>.siblings", or "<param>.siblings#2" ... where it is taken */
    group->weight_name =
        hgr__pass_unique_name(f->allocator, graph->nodes[first->inputs[1].node_id].name, "siblings", name_taken, f);
    ++f->group_count; /* its names now count as taken */
    if (group->weight_name && group->bias)
      group->bias_name =
          hgr__pass_unique_name(f->allocator, graph->nodes[first->inputs[2].node_id].name, "siblings", name_taken, f);
    if (!group->weight_name || (group->bias && !group->bias_name))
      status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, PASS ": out of host memory");
  }
  /* a param whose every reader is a grouped member leaves */
  if (!status) {
    hgr__pass_count_uses(graph, uses, head);
    for (uint32_t n = 0; n < graph->node_count; ++n) {
      if (f->group_of[n] == NONE || f->groups[f->group_of[n]].split != NONE) continue;
      const hgr__node_t* node = &graph->nodes[n];
      for (uint32_t i = 1; i < node->input_count; ++i) grouped_uses[hgr__graph_entry_id(graph, node->inputs[i])]++;
    }
    for (uint32_t n = 0; n < graph->node_count; ++n) {
      if (graph->nodes[n].is_op) continue;
      uint32_t e = graph->node_row_ptr[n];
      f->dropped[n] = grouped_uses[e] > 0 && !head[e] && uses[e] == grouped_uses[e];
    }
    /* a later member's own reshape of A, which nothing else reads (the group reads the
     * first member's) */
    for (uint32_t g = splits; g < f->group_count; ++g)
      for (uint32_t m = 1; m < f->groups[g].count; ++m) {
        const hgr__node_t* node = &graph->nodes[f->groups[g].members[m]];
        uint32_t a = hgr__graph_entry_id(graph, node->inputs[0]), producer = node->inputs[0].node_id;
        if (a != f->groups[g].a_input && graph->nodes[producer].is_op &&
            !strcmp(graph->nodes[producer].func_name, "reshape") && !head[a] && uses[a] == 1)
          f->dropped[producer] = true;
      }
  }
  hgr__free(f->allocator, uses);
  hgr__free(f->allocator, grouped_uses);
  hgr__free(f->allocator, head);
  return status;
}

/* A group's matmul attrs: its first member's (split: the matmul's) without out_shape
 * and out_axes (and, siblings, units), then out_shape (the members', or, for slices without a
 * layout, their own shape) and out_axes (each member's in turn; the identity for a
 * slice without), then units (siblings: the group's columns). made[0 .. *out_made)
 * are the values made from f's allocator, which the caller frees. */
static hgr_status_t group_attrs(const finder_t* f, const group_t* g, hgr__attr_t* attrs, uint32_t* out_count,
                                char** made, uint32_t* out_made) {
  const hgr_graph_t* graph = f->graph;
  const hgr__node_t* base = &graph->nodes[g->split != NONE ? g->split : g->members[0]];
  const hgr__node_t* first = &graph->nodes[g->members[0]];
  uint32_t count = 0, made_count = 0;
  for (uint32_t a = 0; a < base->attr_count; ++a)
    if ((g->split != NONE || strcmp(base->attrs[a].key, "units")) && strcmp(base->attrs[a].key, "out_axes") &&
        strcmp(base->attrs[a].key, "out_shape"))
      attrs[count++] = base->attrs[a];
  const char* shape = hgr__node_attr(first, "out_shape");
  char text[256];
  if (shape || g->split != NONE) {
    const hgr__entry_t* sliced = &graph->entries[graph->node_row_ptr[g->members[0]]];
    int32_t rank = shape ? (int32_t)list_count(shape) : sliced->ndim;
    if (!shape) { /* the slices' own shape */
      size_t used = (size_t)snprintf(text, sizeof(text), "[");
      for (int32_t d = 0; d < rank && used < sizeof(text); ++d)
        used += (size_t)snprintf(text + used, sizeof(text) - used, "%s%lld", d ? ", " : "", (long long)sliced->shape[d]);
      if (used < sizeof(text)) snprintf(text + used, sizeof(text) - used, "]");
      made[made_count] = hgr__format_in(f->allocator, "%s", text);
      shape = made[made_count++];
    }
    attrs[count++] = (hgr__attr_t){"out_shape", (char*)shape};
    size_t used = (size_t)snprintf(text, sizeof(text), "[");
    for (uint32_t m = 0; m < g->count && used < sizeof(text); ++m) {
      const char* own = hgr__node_attr(&graph->nodes[g->members[m]], "out_axes");
      const char* begin = own ? strchr(own, '[') : NULL;
      const char* end = own ? strrchr(own, ']') : NULL;
      if (begin && end && end > begin) /* the list without its brackets */
        used += (size_t)snprintf(text + used, sizeof(text) - used, "%s%.*s", m ? ", " : "", (int)(end - begin - 1),
                                 begin + 1);
      else
        for (int32_t d = 0; d < rank && used < sizeof(text); ++d)
          used += (size_t)snprintf(text + used, sizeof(text) - used, "%s%d", m || d ? ", " : "", (int)d);
    }
    if (used + 1 >= sizeof(text)) return HGR_STATUS(HGR_STATUS_INTERNAL, PASS ": out_axes past %zu characters", sizeof(text));
    snprintf(text + used, sizeof(text) - used, "]");
    made[made_count] = hgr__format_in(f->allocator, "%s", text);
    attrs[count++] = (hgr__attr_t){"out_axes", made[made_count++]};
  }
  if (g->split == NONE) {
    made[made_count] = hgr__format_in(f->allocator, "%lld", (long long)(g->n * g->count));
    attrs[count++] = (hgr__attr_t){"units", made[made_count++]};
  }
  *out_count = count;
  *out_made = made_count;
  for (uint32_t m = 0; m < made_count; ++m)
    if (!made[m]) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, PASS ": out of host memory");
  return HGR_OK;
}

/* Appends group g's matmul of g->count outputs (the members' values) with inputs
 * (input_count of them, mapped), at node `place`'s name, and points the members at
 * its outputs. */
static hgr_status_t append_matmul(const finder_t* f, const hgr__pass_log_t* log, hgr__pass_rebuild_t* r,
                                  const group_t* g, const hgr__entry_ref_t* inputs, uint32_t input_count,
                                  uint32_t place) {
  const hgr_graph_t* graph = f->graph;
  const hgr__node_t* base = &graph->nodes[g->split != NONE ? g->split : g->members[0]];
  hgr__entry_t outputs[MAX_MEMBERS];
  for (uint32_t m = 0; m < g->count; ++m) outputs[m] = graph->entries[graph->node_row_ptr[g->members[m]]];
  hgr__attr_t* attrs = hgr__calloc(f->allocator, base->attr_count + 3, sizeof(*attrs));
  char* made[3] = {NULL, NULL, NULL};
  uint32_t attr_count = 0, made_count = 0;
  hgr_status_t status = attrs ? group_attrs(f, g, attrs, &attr_count, made, &made_count)
                              : HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, PASS ": out of host memory");
  uint32_t id = NONE;
  if (!status)
    status = hgr__graph_edit_append(r->out, graph->nodes[place].name, "matmul", inputs, input_count, attrs, attr_count,
                                    outputs, g->count, &id);
  for (uint32_t m = 0; m < made_count; ++m) hgr__free(f->allocator, made[m]);
  hgr__free(f->allocator, attrs);
  HGR_RETURN_IF_ERROR(status);
  for (uint32_t m = 0; m < g->count; ++m) {
    r->new_id[g->members[m]] = id;
    r->index_shift[g->members[m]] = m;
    HGR_RETURN_IF_ERROR(hgr__pass_check_inferred_output(r, id, m, g->members[m], PASS));
  }
  hgr__pass_log_fused(log, graph, "matmul", place, g->members, g->count);
  return HGR_OK;
}

/* Appends split group g: the matmul as it reads, its slices' values as outputs. */
static hgr_status_t append_split(const finder_t* f, const hgr__pass_log_t* log, hgr__pass_rebuild_t* r, uint32_t g) {
  const hgr__node_t* node = &f->graph->nodes[f->groups[g].split];
  hgr__entry_ref_t inputs[3];
  memcpy(inputs, hgr__pass_map_inputs(r, node->inputs, node->input_count), node->input_count * sizeof(inputs[0]));
  return append_matmul(f, log, r, &f->groups[g], inputs, node->input_count, f->groups[g].split);
}

/* Appends group g's params and matmul at its first member's place. */
static hgr_status_t append_group(const finder_t* f, const hgr__pass_log_t* log, hgr__pass_rebuild_t* r, uint32_t g) {
  const hgr_graph_t* graph = f->graph;
  const group_t* group = &f->groups[g];
  const hgr__node_t* first = &graph->nodes[group->members[0]];
  hgr__entry_ref_t inputs[3];
  memcpy(inputs, hgr__pass_map_inputs(r, first->inputs, 1), sizeof(inputs[0]));
  int64_t panels = group->n / group->panel * group->count;
  hgr__entry_t weight = {.device_key = -1, .dtype = HGR__DTYPE_F32, .ndim = 3, .shape = {panels, group->k, group->panel}};
  weight.element_count = (uint64_t)(panels * group->k * group->panel);
  weight.bytes = weight.element_count * sizeof(float);
  uint32_t id;
  HGR_RETURN_IF_ERROR(hgr__graph_edit_append(r->out, group->weight_name, NULL, NULL, 0, NULL, 0, &weight, 1, &id));
  inputs[1] = (hgr__entry_ref_t){id, 0};
  if (group->bias) {
    hgr__entry_t bias = {.device_key = -1, .dtype = HGR__DTYPE_F32, .ndim = 1, .shape = {group->n * group->count}};
    bias.element_count = (uint64_t)(group->n * group->count);
    bias.bytes = bias.element_count * sizeof(float);
    HGR_RETURN_IF_ERROR(hgr__graph_edit_append(r->out, group->bias_name, NULL, NULL, 0, NULL, 0, &bias, 1, &id));
    inputs[2] = (hgr__entry_ref_t){id, 0};
  }
  return append_matmul(f, log, r, group, inputs, group->bias ? 3 : 2, group->members[0]);
}

static hgr_status_t rebuild(const void* pass, const hgr__pass_log_t* log, hgr__pass_rebuild_t* r) {
  const finder_t* f = pass;
  hgr_status_t status = HGR_OK;
  for (uint32_t n = 0; !status && n < f->graph->node_count; ++n) {
    uint32_t g = f->group_of[n];
    if (g != NONE) {
      if (f->groups[g].split == n) status = append_split(f, log, r, g);
      else if (f->groups[g].split == NONE && f->groups[g].members[0] == n) status = append_group(f, log, r, g);
    } else if (!f->dropped[n]) {
      status = hgr__pass_copy_node(r, n, NULL);
    }
  }
  return status;
}

/* The groups' params side by side, in a params object of their own with the
 * allocator of f's params. */
static hgr_status_t make_params(const finder_t* f, hgr_params_t** out_made) {
  hgr_params_t* made = NULL;
  HGR_RETURN_IF_ERROR(hgr__params_create_in(hgr__params_allocator(f->params), &made));
  hgr_status_t status = HGR_OK;
  for (uint32_t g = 0; !status && g < f->group_count; ++g) {
    const group_t* group = &f->groups[g];
    if (group->split != NONE) continue;
    uint64_t each = (uint64_t)(group->n * group->k), count = each * group->count;
    float* weights = hgr__alloc(f->allocator, count * sizeof(float));
    float* bias = group->bias ? hgr__alloc(f->allocator, (uint64_t)(group->n * group->count) * sizeof(float)) : NULL;
    if (!weights || (group->bias && !bias))
      status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, PASS ": out of host memory for %llu floats",
                          (unsigned long long)count);
    for (uint32_t m = 0; !status && m < group->count; ++m) {
      /* the panels of each member's columns are whole, [N / P, K, P]: side by side
       * they are the columns side by side */
      const hgr__node_t* node = &f->graph->nodes[group->members[m]];
      memcpy(weights + m * each, param_data(f, node->inputs[1].node_id, each), each * sizeof(float));
      if (bias) memcpy(bias + m * group->n, param_data(f, node->inputs[2].node_id, (uint64_t)group->n),
                       (size_t)group->n * sizeof(float));
    }
    int64_t shape[3] = {group->n / group->panel * group->count, group->k, group->panel};
    if (!status) status = hgr_params_add(made, group->weight_name, HGR__DTYPE_F32, 3, shape, weights, count * sizeof(float));
    int64_t bias_shape[1] = {group->n * group->count};
    if (!status && bias)
      status = hgr_params_add(made, group->bias_name, HGR__DTYPE_F32, 1, bias_shape, bias,
                              (uint64_t)bias_shape[0] * sizeof(float));
    hgr__free(f->allocator, weights);
    hgr__free(f->allocator, bias);
  }
  if (status) {
    hgr_params_release(made);
    return status;
  }
  *out_made = made;
  return HGR_OK;
}

hgr_status_t hgr__fuse_sibling_gemms(const hgr_graph_t* graph, const hgr_params_t* params, const hgr_params_t* made,
                                     const hgr__pass_log_t* log, hgr_graph_t** out_graph, hgr_params_t** out_made,
                                     hgr__fuse_report_t* out_report) {
  hgr__fuse_report_t report = {0, 0};
  if (out_report) *out_report = report;
  if (!graph || !out_graph || !out_made) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, PASS ": NULL argument");
  *out_graph = NULL;
  *out_made = NULL;
  HGR_RETURN_IF_ERROR(hgr__pass_check_unplaced(graph, PASS));
  finder_t f = {hgr__graph_allocator(graph), graph, params, made, NULL, 0, NULL, NULL, NULL};
  hgr_status_t status = params ? find_groups(&f) : HGR_OK;
  if (!status && f.group_count == 0) {
    finder_free(&f);
    *out_graph = hgr_graph_retain((hgr_graph_t*)graph);
    return HGR_OK;
  }
  hgr_graph_t* fused = NULL;
  if (!status) status = hgr__pass_rebuild(graph, rebuild, &f, log, &fused);
  hgr_params_t* made_here = NULL;
  if (!status) status = make_params(&f, &made_here);
  report.groups = f.group_count;
  for (uint32_t g = 0; g < f.group_count; ++g) report.fused_nodes += f.groups[g].count;
  finder_free(&f);
  if (status) {
    hgr_graph_release(fused);
    return status;
  }
  if (out_report) *out_report = report;
  *out_graph = fused;
  *out_made = made_here;
  return HGR_OK;
}
