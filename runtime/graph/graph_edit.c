/* Building a graph in memory, node by node (graph_internal.h, "building a graph in
 * memory"): the builder, placement and calibration construct graphs this way
 * instead of writing JSON and parsing it. Appends keep the graph consistent enough
 * for op inference on the last node (nodes, entries, node_row_ptr, arg_nodes,
 * heads); hgr__graph_edit_finish then runs the same validation a loaded graph gets.
 *
 * The graph struct has counts but no capacities, so arrays grow to the next power
 * of two of their count: the capacity is a function of the count, and appends stay
 * amortized O(1) without a field the loader would have to fill. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "graph_internal.h"
#include "internal.h"

#define INVALID(...) HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, __VA_ARGS__)
#define OUT_OF_MEMORY(what) HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for %s", what)

/* The capacity an array of count elements has: 0, or the next power of two. */
static size_t capacity_for(size_t count) {
  if (count == 0) return 0;
  size_t capacity = 1;
  while (capacity < count) capacity *= 2;
  return capacity;
}

/* Makes room for `count + more` elements of `size` bytes in *array (which holds
 * `count`, so capacity_for(count) are allocated from allocator). */
static hgr_status_t reserve(hgr_allocator_t allocator, void** array, size_t count, size_t more, size_t size,
                            const char* what) {
  size_t needed = capacity_for(count + more);
  if (needed <= capacity_for(count) && *array) return HGR_OK;
  if (needed > SIZE_MAX / size) return OUT_OF_MEMORY(what);
  void* grown = hgr__realloc(allocator, *array, needed * size);
  if (!grown) return OUT_OF_MEMORY(what);
  *array = grown;
  return HGR_OK;
}

hgr_status_t hgr__graph_edit_new(hgr_allocator_t allocator, hgr_graph_t** out_graph) {
  *out_graph = NULL;
  hgr_graph_t* graph = hgr__calloc(allocator, 1, sizeof(*graph));
  if (!graph) return OUT_OF_MEMORY("a graph");
  atomic_init(&graph->refcount, 1);
  graph->allocator = allocator;
  graph->node_row_ptr = hgr__calloc(allocator, 1, sizeof(*graph->node_row_ptr)); /* node_count + 1 values */
  if (!graph->node_row_ptr) {
    hgr_graph_release(graph);
    return OUT_OF_MEMORY("node_row_ptr");
  }
  *out_graph = graph;
  return HGR_OK;
}

/* Copies name, func_name, inputs and attrs into *node with allocator; on failure
 * frees what it copied. */
static hgr_status_t copy_node(hgr_allocator_t allocator, hgr__node_t* node, const char* name, const char* func_name,
                              const hgr__entry_ref_t* inputs, uint32_t input_count, const hgr__attr_t* attrs,
                              uint32_t attr_count, uint32_t output_count) {
  memset(node, 0, sizeof(*node));
  node->is_op = func_name != NULL;
  node->num_outputs = output_count;
  node->declared_num_inputs = input_count;
  hgr_status_t status = hgr__strdup(allocator, name, &node->name);
  if (!status && func_name) status = hgr__strdup(allocator, func_name, &node->func_name);
  if (!status) {
    node->inputs = hgr__calloc(allocator, (size_t)input_count + 1, sizeof(*node->inputs));
    node->attrs = hgr__calloc(allocator, (size_t)attr_count + 1, sizeof(*node->attrs));
    if (!node->inputs || !node->attrs) status = OUT_OF_MEMORY("node inputs and attrs");
  }
  if (!status) {
    if (input_count) memcpy(node->inputs, inputs, input_count * sizeof(*inputs));
    node->input_count = input_count;
  }
  for (uint32_t i = 0; i < attr_count && !status; ++i) {
    hgr__attr_t* attr = &node->attrs[i];
    status = hgr__strdup(allocator, attrs[i].key, &attr->key);
    node->attr_count = i + 1; /* counted now so that free_node frees the key */
    if (!status) status = hgr__strdup(allocator, attrs[i].value, &attr->value);
  }
  if (status) hgr__graph_node_free(allocator, node);
  return status;
}

/* What is wrong with a new node's arguments, checked before anything changes. */
static hgr_status_t check_append(const hgr_graph_t* graph, const char* name, const char* func_name,
                                 const hgr__entry_ref_t* inputs, uint32_t input_count, const hgr__attr_t* attrs,
                                 uint32_t attr_count, const hgr__entry_t* outputs, uint32_t output_count) {
  uint32_t node_id = graph->node_count;
  char label[HGR__LABEL_CAPACITY];
  if (!name) return INVALID("node %u: a node needs a name", node_id);
  snprintf(label, sizeof(label), "node %u '%.120s'", node_id, name);
  if (node_id == UINT32_MAX) return INVALID("%s: the graph already has %u nodes", label, node_id);
  if (!func_name && (input_count || attr_count || output_count != 1))
    return INVALID("%s: an input takes no inputs or attrs and has 1 output, not %u inputs, %u attrs, %u outputs",
                   label, input_count, attr_count, output_count);
  if (func_name && output_count == 0) return INVALID("%s (%s): an op needs an output", label, func_name);
  if (output_count > UINT32_MAX - graph->entry_count)
    return INVALID("%s: %u outputs would overflow the graph's %u entries", label, output_count, graph->entry_count);
  if (input_count && !inputs) return INVALID("%s: %u inputs but no input array", label, input_count);
  if (attr_count && !attrs) return INVALID("%s: %u attrs but no attr array", label, attr_count);
  for (uint32_t i = 0; i < input_count; ++i) {
    char target[HGR__LABEL_CAPACITY];
    hgr__entry_ref_t ref = inputs[i];
    if (ref.node_id >= node_id)
      return INVALID("%s: input %u refers to node %u, which does not exist yet (the graph has %u nodes); nodes "
                     "refer only to earlier nodes",
                     label, i, ref.node_id, node_id);
    if (ref.index >= graph->nodes[ref.node_id].num_outputs)
      return INVALID("%s: input %u refers to output %u of %s, which has %u output%s", label, i, ref.index,
                     hgr__graph_node_label(graph, ref.node_id, target, sizeof(target)),
                     graph->nodes[ref.node_id].num_outputs, graph->nodes[ref.node_id].num_outputs == 1 ? "" : "s");
  }
  for (uint32_t i = 0; i < attr_count; ++i)
    if (!attrs[i].key || !attrs[i].value) return INVALID("%s: attr %u has no key or no value", label, i);
  for (uint32_t k = 0; outputs && k < output_count; ++k) {
    const hgr__entry_t* output = &outputs[k];
    if (output->ndim < 0 || output->ndim > HGR_MAX_DIMS)
      return INVALID("%s: output %u has %d dimensions (0 to %d)", label, k, output->ndim, HGR_MAX_DIMS);
    for (int32_t d = 0; d < output->ndim; ++d)
      if (output->shape[d] < 0)
        return INVALID("%s: output %u: dimension %d is %lld", label, k, d, (long long)output->shape[d]);
    if (output->storage_id > INT32_MAX)
      return INVALID("%s: output %u: storage id %u is above 2147483647", label, k, output->storage_id);
  }
  return HGR_OK;
}

/* element_count and bytes of an entry whose dtype and shape are set. */
static hgr_status_t size_entry(const char* label, uint32_t k, hgr__entry_t* entry) {
  uint64_t count = 0, bytes = 0;
  if (!hgr__shape_size(entry->shape, entry->ndim, hgr_dtype_element_bytes(entry->dtype), &count, &bytes))
    return INVALID("%s: output %u is more elements or bytes than 2^63 - 1", label, k);
  entry->element_count = count;
  entry->bytes = bytes;
  return HGR_OK;
}

hgr_status_t hgr__graph_edit_append(hgr_graph_t* graph, const char* name, const char* func_name,
                                    const hgr__entry_ref_t* inputs, uint32_t input_count, const hgr__attr_t* attrs,
                                    uint32_t attr_count, const hgr__entry_t* outputs, uint32_t output_count,
                                    uint32_t* out_node_id) {
  if (out_node_id) *out_node_id = UINT32_MAX;
  HGR_RETURN_IF_ERROR(
      check_append(graph, name, func_name, inputs, input_count, attrs, attr_count, outputs, output_count));
  uint32_t node_id = graph->node_count;
  char label[HGR__LABEL_CAPACITY];
  snprintf(label, sizeof(label), "node %u '%.120s'", node_id, name);

  /* The new entries first, in a scratch array, so that a failure leaves the graph
   * as it was (growing the arrays changes no count). */
  hgr__entry_t* new_entries = hgr__calloc(graph->allocator, output_count, sizeof(*new_entries));
  if (!new_entries) return OUT_OF_MEMORY("entries");
  hgr_status_t status = HGR_OK;
  for (uint32_t k = 0; k < output_count && !status; ++k) {
    hgr__entry_t* entry = &new_entries[k];
    if (outputs) {
      entry->storage_id = outputs[k].storage_id;
      entry->device_key = outputs[k].device_key;
      entry->dtype = outputs[k].dtype;
      entry->ndim = outputs[k].ndim;
      memcpy(entry->shape, outputs[k].shape, sizeof(entry->shape));
    } else {
      entry->device_key = -1;
      entry->dtype = (hgr_dtype_t){HGR_DTYPE_FLOAT, 32, 1};
    }
    entry->node_id = node_id;
    status = size_entry(label, k, entry);
  }
  if (!status) status = reserve(graph->allocator, (void**)&graph->nodes, node_id, 1, sizeof(*graph->nodes), "nodes");
  if (!status)
    status = reserve(graph->allocator, (void**)&graph->node_row_ptr, (size_t)node_id + 1, 1,
                     sizeof(*graph->node_row_ptr), "node_row_ptr");
  if (!status)
    status = reserve(graph->allocator, (void**)&graph->entries, graph->entry_count, output_count,
                     sizeof(*graph->entries), "entries");
  if (!status && !func_name)
    status = reserve(graph->allocator, (void**)&graph->arg_nodes, graph->arg_count, 1, sizeof(*graph->arg_nodes),
                     "arg_nodes");
  hgr__node_t node;
  if (!status)
    status = copy_node(graph->allocator, &node, name, func_name, inputs, input_count, attrs, attr_count, output_count);
  if (!status) {
    graph->nodes[node_id] = node;
    memcpy(&graph->entries[graph->entry_count], new_entries, output_count * sizeof(*new_entries));
    graph->entry_count += output_count;
    graph->node_row_ptr[node_id + 1] = graph->entry_count;
    if (!func_name) graph->arg_nodes[graph->arg_count++] = node_id;
    graph->node_count++;
    if (out_node_id) *out_node_id = node_id;
  }
  hgr__free(graph->allocator, new_entries);
  return status;
}

hgr_status_t hgr__graph_edit_remove_last(hgr_graph_t* graph) {
  if (graph->node_count == 0) return HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION, "the graph has no node to remove");
  uint32_t node_id = graph->node_count - 1;
  for (uint32_t h = 0; h < graph->head_count; ++h)
    if (graph->heads[h].node_id == node_id) {
      char label[HGR__LABEL_CAPACITY];
      return HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION, "%s is output %u of the graph; it cannot be removed",
                        hgr__graph_node_label(graph, node_id, label, sizeof(label)), h);
    }
  if (!graph->nodes[node_id].is_op) graph->arg_count--; /* null nodes are appended to arg_nodes in order */
  graph->entry_count = graph->node_row_ptr[node_id];
  hgr__graph_node_free(graph->allocator, &graph->nodes[node_id]);
  graph->node_count--;
  return HGR_OK;
}

hgr_status_t hgr__graph_edit_add_head(hgr_graph_t* graph, hgr__entry_ref_t head) {
  if (head.node_id >= graph->node_count || head.index >= graph->nodes[head.node_id].num_outputs)
    return INVALID("output %u refers to output %u of node %u, which does not exist (the graph has %u nodes)",
                   graph->head_count, head.index, head.node_id, graph->node_count);
  HGR_RETURN_IF_ERROR(
      reserve(graph->allocator, (void**)&graph->heads, graph->head_count, 1, sizeof(*graph->heads), "heads"));
  graph->heads[graph->head_count++] = head;
  return HGR_OK;
}

hgr_status_t hgr__graph_edit_add_binding(hgr_graph_t* graph, int32_t key, const char* spec) {
  if (key < 0) return INVALID("device key %d cannot be bound; keys are 0 to 2147483647", key);
  if (!spec || !*spec) return INVALID("device key %d: the device spec is empty", key);
  uint32_t at = 0;
  while (at < graph->binding_count && graph->binding_keys[at] < key) ++at;
  if (at < graph->binding_count && graph->binding_keys[at] == key)
    return INVALID("device key %d is bound twice, to '%.80s' and to '%.80s'", key, graph->binding_specs[at], spec);
  char* copy = NULL;
  HGR_RETURN_IF_ERROR(hgr__strdup(graph->allocator, spec, &copy));
  hgr_status_t status = reserve(graph->allocator, (void**)&graph->binding_keys, graph->binding_count, 1,
                                sizeof(*graph->binding_keys), "device bindings");
  if (!status)
    status = reserve(graph->allocator, (void**)&graph->binding_specs, graph->binding_count, 1,
                     sizeof(*graph->binding_specs), "device bindings");
  if (status) {
    hgr__free(graph->allocator, copy);
    return status;
  }
  /* Keys stay ascending. */
  memmove(&graph->binding_keys[at + 1], &graph->binding_keys[at],
          (graph->binding_count - at) * sizeof(*graph->binding_keys));
  memmove(&graph->binding_specs[at + 1], &graph->binding_specs[at],
          (graph->binding_count - at) * sizeof(*graph->binding_specs));
  graph->binding_keys[at] = key;
  graph->binding_specs[at] = copy;
  graph->binding_count++;
  return HGR_OK;
}

hgr_status_t hgr__graph_edit_scratch(const hgr_graph_t* like, hgr__entry_ref_t** out_inputs, hgr__entry_t** out_outputs) {
  uint32_t most_inputs = 0, most_outputs = 0;
  for (uint32_t n = 0; n < like->node_count; ++n) {
    if (like->nodes[n].input_count > most_inputs) most_inputs = like->nodes[n].input_count;
    if (like->nodes[n].num_outputs > most_outputs) most_outputs = like->nodes[n].num_outputs;
  }
  hgr_allocator_t allocator = like->allocator;
  *out_inputs = hgr__calloc(allocator, (size_t)most_inputs + 1, sizeof(**out_inputs));
  *out_outputs = hgr__calloc(allocator, (size_t)most_outputs + 1, sizeof(**out_outputs));
  if (*out_inputs && *out_outputs) return HGR_OK;
  hgr__free(allocator, *out_inputs);
  hgr__free(allocator, *out_outputs);
  *out_inputs = NULL;
  *out_outputs = NULL;
  return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
}

hgr_status_t hgr__graph_edit_order_inputs(hgr_graph_t* graph, const hgr_graph_t* like) {
  /* A stable insertion sort by each input's position in like (arg_count is small). */
  if (graph->arg_count < 2) return HGR_OK;
  uint32_t* rank = hgr__calloc(graph->allocator, graph->arg_count, sizeof(*rank));
  if (!rank) return OUT_OF_MEMORY("ordering the inputs");
  for (uint32_t a = 0; a < graph->arg_count; ++a) {
    rank[a] = UINT32_MAX;
    const char* name = graph->nodes[graph->arg_nodes[a]].name;
    for (uint32_t b = 0; b < like->arg_count && rank[a] == UINT32_MAX; ++b)
      if (!strcmp(like->nodes[like->arg_nodes[b]].name, name)) rank[a] = b;
  }
  for (uint32_t a = 1; a < graph->arg_count; ++a) {
    uint32_t node = graph->arg_nodes[a], key = rank[a], at = a;
    for (; at > 0 && rank[at - 1] > key; --at) {
      graph->arg_nodes[at] = graph->arg_nodes[at - 1];
      rank[at] = rank[at - 1];
    }
    graph->arg_nodes[at] = node;
    rank[at] = key;
  }
  hgr__free(graph->allocator, rank);
  return HGR_OK;
}

hgr_status_t hgr__graph_edit_finish(hgr_graph_t* graph) {
  uint32_t keyed = graph->entry_count; /* the first entry with a device key */
  for (uint32_t e = 0; e < graph->entry_count && keyed == graph->entry_count; ++e)
    if (graph->entries[e].device_key >= 0) keyed = e;
  graph->has_device_index = keyed < graph->entry_count;
  for (uint32_t e = 0; graph->has_device_index && e < graph->entry_count; ++e)
    if (graph->entries[e].device_key < 0) {
      char label[HGR__LABEL_CAPACITY], keyed_label[HGR__LABEL_CAPACITY];
      return INVALID("%s has no device key, but %s has key %d; either every entry has one or none",
                     hgr__graph_entry_label(graph, e, label, sizeof(label)),
                     hgr__graph_entry_label(graph, keyed, keyed_label, sizeof(keyed_label)),
                     graph->entries[keyed].device_key);
    }
  /* Validation derives these; a graph finished again after more edits derives them
   * anew. */
  if (graph->head_names)
    for (uint32_t i = 0; i < graph->head_count; ++i) hgr__free(graph->allocator, graph->head_names[i]);
  hgr__free(graph->allocator, graph->head_names);
  hgr__free(graph->allocator, graph->storage_ids);
  graph->head_names = NULL;
  graph->storage_ids = NULL;
  graph->storage_count = 0;
  return hgr__graph_validate(graph);
}
