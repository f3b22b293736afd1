/* The graph builder (hgr/builder.h): graph_edit.c appends the nodes, the op
 * registry's inference (hgr__op_infer, the code that also checks a node at
 * planning) gives each op node its outputs, and a node that fails inference is
 * removed again, so the builder stays usable after an error. Names are kept in a
 * hash table, since the builder, unlike TVM's JSON, refuses duplicate names and
 * random graphs for tests and fuzzing have thousands of nodes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "attrs.h"
#include "builder_internal.h"
#include "graph_internal.h"
#include "hgr/builder.h"
#include "internal.h"
#include "ops.h"
#include "text.h"

#define INVALID(...) HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, __VA_ARGS__)
#define OUT_OF_MEMORY(what) HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for %s", what)
#define NO_NODE UINT32_MAX

struct hgr_builder_s {
  hgr_allocator_t allocator;     /* of the builder, its graph and its params */
  hgr_graph_t* graph;            /* under construction; after finish, shared with the caller */
  hgr_kernel_library_t* kernels; /* retained; may be NULL */
  hgr_params_t* params;          /* the constants; handed out by finish */
  uint32_t* name_slots;          /* open addressing: node ids, NO_NODE where empty */
  size_t name_capacity;          /* a power of two, at least twice the node count */
  bool finished;
};

/* ---- names ----------------------------------------------------------------------- */

static uint64_t hash_name(const char* name) { return hgr__fnv1a(name, strlen(name), HGR__FNV1A_START); }

/* The node called name, or NO_NODE. */
static uint32_t find_name(const hgr_builder_t* builder, const char* name) {
  size_t mask = builder->name_capacity - 1;
  for (size_t slot = hash_name(name) & mask;; slot = (slot + 1) & mask) {
    uint32_t node_id = builder->name_slots[slot];
    if (node_id == NO_NODE || !strcmp(builder->graph->nodes[node_id].name, name)) return node_id;
  }
}

static void place_name(uint32_t* slots, size_t capacity, const char* name, uint32_t node_id) {
  size_t mask = capacity - 1;
  size_t slot = hash_name(name) & mask;
  while (slots[slot] != NO_NODE) slot = (slot + 1) & mask;
  slots[slot] = node_id;
}

/* Records the name of node node_id (the last one), growing the table to keep it at
 * most half full. */
static hgr_status_t add_name(hgr_builder_t* builder, uint32_t node_id) {
  size_t needed = ((size_t)node_id + 1) * 2;
  if (needed > builder->name_capacity) {
    size_t capacity = builder->name_capacity * 2;
    while (capacity < needed) capacity *= 2;
    uint32_t* slots = hgr__calloc(builder->allocator, capacity, sizeof(*slots));
    if (!slots) return OUT_OF_MEMORY("node names");
    memset(slots, 0xff, capacity * sizeof(*slots)); /* NO_NODE */
    for (uint32_t n = 0; n < node_id; ++n) place_name(slots, capacity, builder->graph->nodes[n].name, n);
    hgr__free(builder->allocator, builder->name_slots);
    builder->name_slots = slots;
    builder->name_capacity = capacity;
  }
  place_name(builder->name_slots, builder->name_capacity, builder->graph->nodes[node_id].name, node_id);
  return HGR_OK;
}

/* "node 3 'x' (an input)" or "node 5 'fc' (dense)": what the messages call a node. */
static const char* describe_node(const hgr_graph_t* graph, uint32_t node_id, char* buffer, size_t capacity) {
  const hgr__node_t* node = &graph->nodes[node_id];
  snprintf(buffer, capacity, "node %u '%.120s' (%.40s)", node_id, node->name,
           node->is_op ? node->func_name : "an input");
  return buffer;
}

/* label: the new node, "node 5 'fc' (dense)". */
static hgr_status_t check_name(const hgr_builder_t* builder, const char* name, const char* label) {
  if (!name || !*name) return INVALID("%s: a node needs a non-empty name", label);
  uint32_t other = find_name(builder, name);
  if (other == NO_NODE) return HGR_OK;
  char other_label[HGR__LABEL_CAPACITY];
  return INVALID("%s: the name '%.120s' is taken by %s; names must be unique", label, name,
                 describe_node(builder->graph, other, other_label, sizeof(other_label)));
}

static hgr_status_t check_open(const hgr_builder_t* builder) {
  if (!builder) return INVALID("no builder");
  if (builder->finished)
    return HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION, "the builder has finished its graph; create another builder");
  return HGR_OK;
}

/* ---- lifetime ----------------------------------------------------------------------- */

hgr_status_t hgr__builder_create_in(hgr_allocator_t allocator, hgr_kernel_library_t* kernels,
                                    hgr_builder_t** out_builder) {
  *out_builder = NULL;
  hgr_builder_t* builder = hgr__calloc(allocator, 1, sizeof(*builder));
  if (!builder) return OUT_OF_MEMORY("a builder");
  builder->allocator = allocator;
  hgr_status_t status = hgr__graph_edit_new(allocator, &builder->graph);
  if (!status) status = hgr__params_create_in(allocator, &builder->params);
  if (!status) {
    builder->name_capacity = 16;
    builder->name_slots = hgr__alloc(allocator, builder->name_capacity * sizeof(*builder->name_slots));
    if (builder->name_slots)
      memset(builder->name_slots, 0xff, builder->name_capacity * sizeof(*builder->name_slots));
    else
      status = OUT_OF_MEMORY("node names");
  }
  if (status) {
    hgr_builder_release(builder);
    return status;
  }
  builder->kernels = kernels ? hgr_kernel_library_retain(kernels) : NULL;
  *out_builder = builder;
  return HGR_OK;
}

hgr_status_t hgr_builder_create(hgr_kernel_library_t* kernels, hgr_builder_t** out_builder) {
  return hgr__builder_create_in(hgr_allocator_system(), kernels, out_builder);
}

void hgr_builder_release(hgr_builder_t* builder) {
  if (!builder) return;
  hgr_graph_release(builder->graph);
  hgr_params_release(builder->params);
  hgr_kernel_library_release(builder->kernels);
  hgr__free(builder->allocator, builder->name_slots);
  hgr__free(builder->allocator, builder);
}

/* ---- inputs and constants -------------------------------------------------------------- */

static hgr_status_t add_input(hgr_builder_t* builder, const char* name, hgr_dtype_t dtype, const int64_t* shape,
                              int32_t ndim, const char* kind, uint32_t* out_node_id) {
  HGR_RETURN_IF_ERROR(check_open(builder));
  uint32_t node_id = builder->graph->node_count;
  char label[HGR__LABEL_CAPACITY];
  snprintf(label, sizeof(label), "node %u '%.120s' (%s)", node_id, name ? name : "", kind);
  HGR_RETURN_IF_ERROR(check_name(builder, name, label));
  HGR_RETURN_IF_ERROR(hgr_status_annotate(hgr_dtype_validate(dtype), "%s", label));
  if (ndim < 0 || ndim > HGR_MAX_DIMS)
    return INVALID("%s: %d dimensions; hgr supports 0 to %d", label, ndim, HGR_MAX_DIMS);
  if (ndim > 0 && !shape) return INVALID("%s: %d dimensions but no shape", label, ndim);
  hgr__entry_t entry;
  memset(&entry, 0, sizeof(entry));
  entry.dtype = dtype;
  entry.ndim = ndim;
  entry.device_key = -1;
  for (int32_t d = 0; d < ndim; ++d) {
    if (shape[d] < 0) return INVALID("%s: dimension %d is %lld; extents are 0 or more", label, d, (long long)shape[d]);
    entry.shape[d] = shape[d];
  }
  if (!hgr__shape_size(shape, ndim, hgr_dtype_element_bytes(dtype), NULL, NULL)) {
    char text[HGR_MAX_DIMS * 22 + 4], dtype_name[32];
    return INVALID("%s: shape %s of %s is more elements or bytes than 2^63 - 1", label,
                   hgr__entry_shape(&entry, text, sizeof(text)), hgr_dtype_format(dtype, dtype_name, sizeof(dtype_name)));
  }
  uint32_t appended = NO_NODE;
  hgr_status_t status = hgr__graph_edit_append(builder->graph, name, NULL, NULL, 0, NULL, 0, &entry, 1, &appended);
  if (status) return hgr_status_annotate(status, "%s", kind);
  status = add_name(builder, appended);
  if (status) {
    hgr_status_free(hgr__graph_edit_remove_last(builder->graph)); /* cannot fail: it has no head */
    return status;
  }
  *out_node_id = appended;
  return HGR_OK;
}

hgr_status_t hgr_builder_add_input(hgr_builder_t* builder, const char* name, hgr_dtype_t dtype, const int64_t* shape,
                                   int32_t ndim, hgr_value_t* out_value) {
  uint32_t node_id = NO_NODE;
  HGR_RETURN_IF_ERROR(add_input(builder, name, dtype, shape, ndim, "an input", &node_id));
  if (out_value) *out_value = (hgr_value_t){node_id, 0};
  return HGR_OK;
}

hgr_status_t hgr_builder_add_constant(hgr_builder_t* builder, const char* name, hgr_dtype_t dtype,
                                      const int64_t* shape, int32_t ndim, const void* data, size_t bytes,
                                      hgr_value_t* out_value) {
  uint32_t node_id = NO_NODE;
  HGR_RETURN_IF_ERROR(add_input(builder, name, dtype, shape, ndim, "a constant", &node_id));
  const hgr__entry_t* entry = &builder->graph->entries[builder->graph->node_row_ptr[node_id]];
  char label[HGR__LABEL_CAPACITY];
  snprintf(label, sizeof(label), "node %u '%.120s' (a constant)", node_id, name);
  hgr_status_t status = HGR_OK;
  if (dtype.lanes != 1)
    status = INVALID("%s: a constant cannot have %u lanes; the params format keeps one lane per element", label,
                     dtype.lanes);
  else if ((uint64_t)bytes != entry->bytes)
    status = INVALID("%s: %zu bytes of data, but its dtype and shape make %llu", label, bytes,
                     (unsigned long long)entry->bytes);
  else if (bytes && !data)
    status = INVALID("%s: %zu bytes but no data", label, bytes);
  if (!status)
    status = hgr_status_annotate(hgr_params_add(builder->params, name, dtype, ndim, shape, data, bytes), "%s", label);
  if (status) {
    hgr_status_free(hgr__graph_edit_remove_last(builder->graph)); /* cannot fail: it has no head */
    return status;
  }
  if (out_value) *out_value = (hgr_value_t){node_id, 0};
  return HGR_OK;
}

/* ---- op nodes ---------------------------------------------------------------------- */

/* What the graph's own checks would say later, said now in the builder's terms. */
static hgr_status_t check_inputs(const hgr_builder_t* builder, const char* label, const hgr_value_t* inputs,
                                 uint32_t input_count) {
  const hgr_graph_t* graph = builder->graph;
  if (input_count && !inputs) return INVALID("%s: %u inputs but no input array", label, input_count);
  for (uint32_t i = 0; i < input_count; ++i) {
    hgr_value_t value = inputs[i];
    char target[HGR__LABEL_CAPACITY];
    if (value.node >= graph->node_count)
      return INVALID("%s: input %u refers to node %u, which does not exist yet (the graph has %u nodes)", label, i,
                     value.node, graph->node_count);
    uint32_t outputs = graph->nodes[value.node].num_outputs;
    if (value.index >= outputs)
      return INVALID("%s: input %u refers to output %u of %s, which has %u output%s", label, i, value.index,
                     describe_node(graph, value.node, target, sizeof(target)), outputs, outputs == 1 ? "" : "s");
  }
  return HGR_OK;
}

hgr_status_t hgr_builder_add_op(hgr_builder_t* builder, const char* name, const char* op, const hgr_value_t* inputs,
                                uint32_t input_count, const hgr_attrs_t* attrs, uint32_t output_count,
                                hgr_value_t* out_outputs) {
  HGR_RETURN_IF_ERROR(check_open(builder));
  hgr_graph_t* graph = builder->graph;
  uint32_t node_id = graph->node_count;
  if (!op || !*op) return INVALID("node %u '%.120s': no op named", node_id, name ? name : "");
  char generated[HGR__LABEL_CAPACITY];
  if (!name) {
    snprintf(generated, sizeof(generated), "%.120s_%u", op, node_id);
    name = generated;
  }
  char label[HGR__LABEL_CAPACITY + 64];
  snprintf(label, sizeof(label), "node %u '%.120s' (%.60s)", node_id, name, op);
  if (!strcmp(op, "__copy") || !strcmp(op, "__nop"))
    return INVALID("%s: %s is the runtime's own op; placement inserts copies and aliases, a graph built here "
                   "does not name them",
                   label, op);
  HGR_RETURN_IF_ERROR(check_name(builder, name, label));
  HGR_RETURN_IF_ERROR(check_inputs(builder, label, inputs, input_count));
  if (output_count == 0) {
    const hgr__op_t* found = hgr__op_lookup(op, builder->kernels);
    output_count = found && found->min_outputs ? found->min_outputs : 1; /* unknown: inference names it */
  }
  uint32_t attr_count = 0;
  const hgr__attr_t* attr_entries = hgr__attrs_entries(attrs, &attr_count);
  /* hgr_value_t and hgr__entry_ref_t are both {node, index}. */
  hgr__entry_ref_t* refs = hgr__calloc(builder->allocator, (size_t)input_count + 1, sizeof(*refs));
  hgr__entry_t* inferred = hgr__calloc(builder->allocator, output_count, sizeof(*inferred));
  hgr_status_t status = refs && inferred ? HGR_OK : OUT_OF_MEMORY("a node");
  for (uint32_t i = 0; !status && i < input_count; ++i) refs[i] = (hgr__entry_ref_t){inputs[i].node, inputs[i].index};
  uint32_t appended = NO_NODE;
  if (!status)
    status = hgr__graph_edit_append(graph, name, op, refs, input_count, attr_entries, attr_count, NULL, output_count,
                                    &appended);
  if (!status) {
    status = hgr__op_infer(graph, appended, builder->kernels, inferred);
    for (uint32_t k = 0; !status && k < output_count; ++k) {
      hgr__entry_t* entry = &graph->entries[graph->node_row_ptr[appended] + k];
      entry->dtype = inferred[k].dtype;
      entry->ndim = inferred[k].ndim;
      memcpy(entry->shape, inferred[k].shape, sizeof(entry->shape));
      entry->element_count = inferred[k].element_count;
      entry->bytes = inferred[k].bytes;
    }
    if (!status) status = add_name(builder, appended);
    if (status) hgr_status_free(hgr__graph_edit_remove_last(graph)); /* cannot fail: it has no head yet */
  }
  hgr__free(builder->allocator, refs);
  hgr__free(builder->allocator, inferred);
  if (status) return status;
  for (uint32_t k = 0; out_outputs && k < output_count; ++k) out_outputs[k] = (hgr_value_t){appended, k};
  return HGR_OK;
}

/* ---- outputs and the result -------------------------------------------------------------- */

static hgr_status_t check_value(const hgr_builder_t* builder, hgr_value_t value, const char* what) {
  const hgr_graph_t* graph = builder->graph;
  if (value.node >= graph->node_count)
    return INVALID("%s: node %u does not exist (the graph has %u nodes)", what, value.node, graph->node_count);
  if (value.index >= graph->nodes[value.node].num_outputs) {
    char label[HGR__LABEL_CAPACITY];
    return INVALID("%s: %s has no output %u (it has %u)", what,
                   describe_node(graph, value.node, label, sizeof(label)), value.index,
                   graph->nodes[value.node].num_outputs);
  }
  return HGR_OK;
}

hgr_status_t hgr_builder_value_info(const hgr_builder_t* builder, hgr_value_t value, hgr_tensor_info_t* out_info) {
  memset(out_info, 0, sizeof(*out_info));
  if (!builder) return INVALID("no builder");
  HGR_RETURN_IF_ERROR(check_value(builder, value, "value info"));
  const hgr_graph_t* graph = builder->graph;
  const hgr__entry_t* entry = &graph->entries[graph->node_row_ptr[value.node] + value.index];
  out_info->name = graph->nodes[value.node].name;
  out_info->dtype = entry->dtype;
  out_info->ndim = entry->ndim;
  out_info->shape = entry->shape;
  out_info->bytes = entry->bytes;
  return HGR_OK;
}

hgr_status_t hgr_builder_mark_output(hgr_builder_t* builder, hgr_value_t value) {
  HGR_RETURN_IF_ERROR(check_open(builder));
  char what[64];
  snprintf(what, sizeof(what), "output %u", builder->graph->head_count);
  HGR_RETURN_IF_ERROR(check_value(builder, value, what));
  return hgr__graph_edit_add_head(builder->graph, (hgr__entry_ref_t){value.node, value.index});
}

const char* hgr__builder_node_name(const hgr_builder_t* builder, uint32_t node_id, bool* out_is_op) {
  if (node_id >= builder->graph->node_count) return NULL;
  *out_is_op = builder->graph->nodes[node_id].is_op;
  return builder->graph->nodes[node_id].name;
}

bool hgr__builder_has_name(const hgr_builder_t* builder, const char* name) {
  return find_name(builder, name) != NO_NODE;
}

hgr_status_t hgr__builder_rename(hgr_builder_t* builder, uint32_t node_id, const char* name) {
  HGR_RETURN_IF_ERROR(check_open(builder));
  if (node_id >= builder->graph->node_count) return INVALID("rename: node %u of %u", node_id, builder->graph->node_count);
  char label[200];
  snprintf(label, sizeof(label), "renaming node %u", node_id);
  HGR_RETURN_IF_ERROR(check_name(builder, name, label));
  char* copy = NULL;
  hgr_allocator_t allocator = hgr__graph_allocator(builder->graph); /* the node's name is the graph's */
  HGR_RETURN_IF_ERROR(hgr__strdup(allocator, name, &copy));
  hgr__node_t* node = &builder->graph->nodes[node_id];
  hgr__free(allocator, node->name);
  node->name = copy;
  /* Open addressing cannot drop one key: the table is made again. */
  memset(builder->name_slots, 0xff, builder->name_capacity * sizeof(*builder->name_slots));
  for (uint32_t n = 0; n < builder->graph->node_count; ++n)
    place_name(builder->name_slots, builder->name_capacity, builder->graph->nodes[n].name, n);
  return HGR_OK;
}

hgr_status_t hgr_builder_finish(hgr_builder_t* builder, hgr_graph_t** out_graph, hgr_params_t** out_params) {
  *out_graph = NULL;
  if (out_params) *out_params = NULL;
  HGR_RETURN_IF_ERROR(check_open(builder));
  hgr_graph_t* graph = builder->graph;
  if (graph->head_count == 0)
    return INVALID("the graph has no outputs (%u nodes); mark at least one with hgr_builder_mark_output",
                   graph->node_count);
  if (graph->entry_count > (uint32_t)INT32_MAX + 1)
    return INVALID("the graph has %u entries; storage ids end at 2147483647", graph->entry_count);
  /* Each entry its own storage: placement plans sharing per device later. */
  for (uint32_t e = 0; e < graph->entry_count; ++e) graph->entries[e].storage_id = e;
  builder->finished = true; /* a graph that failed to finish is unusable (graph_internal.h) */
  HGR_RETURN_IF_ERROR(hgr_status_annotate(hgr__graph_edit_finish(graph), "finishing the built graph"));
  *out_graph = hgr_graph_retain(graph);
  if (out_params) {
    *out_params = builder->params;
    builder->params = NULL;
  }
  return HGR_OK;
}
