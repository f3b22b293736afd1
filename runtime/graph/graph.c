/* Graph validation and accessors. graph_json.c has checked the JSON form; this file
 * checks what ties nodes and entries together (topological order, output indices,
 * arg_nodes, sizes, storage ids and their devices, __copy and __nop) and answers
 * questions about a loaded graph. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "graph_internal.h"
#include "internal.h"

#define INVALID(...) HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, __VA_ARGS__)

const char* hgr__graph_node_label(const hgr_graph_t* graph, uint32_t node_id, char* buffer,
                                  size_t capacity) {
  const char* name = node_id < graph->node_count ? graph->nodes[node_id].name : NULL;
  if (name)
    snprintf(buffer, capacity, "node %u '%.120s'", node_id, name);
  else
    snprintf(buffer, capacity, "node %u", node_id);
  return buffer;
}

const char* hgr__graph_entry_label(const hgr_graph_t* graph, uint32_t entry_id, char* buffer,
                                   size_t capacity) {
  uint32_t node_id = graph->entries[entry_id].node_id;
  const char* name = graph->nodes[node_id].name;
  snprintf(buffer, capacity, "entry %u (node %u '%.120s', output %u)", entry_id, node_id,
           name ? name : "", entry_id - graph->node_row_ptr[node_id]);
  return buffer;
}

const char* hgr__node_attr(const hgr__node_t* node, const char* key) {
  for (uint32_t i = 0; i < node->attr_count; ++i)
    if (strcmp(node->attrs[i].key, key) == 0) return node->attrs[i].value;
  return NULL;
}

/* ---- validation ---------------------------------------------------------------- */

/* A reference (node_id, index) made by `what` ("node 7 'conv1': input 2", "head 0"):
 * the node must exist, come before `limit` (topological order; node_count for
 * heads) and have that output. */
static hgr_status_t check_ref(const hgr_graph_t* graph, hgr__entry_ref_t ref, uint32_t limit,
                              const char* what) {
  char label[HGR__LABEL_CAPACITY];
  if (ref.node_id >= graph->node_count)
    return INVALID("%s refers to node %u, but the graph has %u nodes", what, ref.node_id,
                   graph->node_count);
  if (ref.node_id >= limit)
    return INVALID(
        "%s refers to %s, which does not come before it; nodes must be in "
        "topological order",
        what, hgr__graph_node_label(graph, ref.node_id, label, sizeof(label)));
  uint32_t outputs = graph->nodes[ref.node_id].num_outputs;
  if (ref.index >= outputs)
    return INVALID("%s refers to output %u of %s, which has %u output%s (entries %u to %u)", what,
                   ref.index, hgr__graph_node_label(graph, ref.node_id, label, sizeof(label)),
                   outputs, outputs == 1 ? "" : "s", graph->node_row_ptr[ref.node_id],
                   graph->node_row_ptr[ref.node_id + 1] - 1);
  return HGR_OK;
}

static hgr_status_t check_inputs_and_heads(const hgr_graph_t* graph) {
  char what[HGR__LABEL_CAPACITY + 32], label[HGR__LABEL_CAPACITY];
  for (uint32_t node_id = 0; node_id < graph->node_count; ++node_id) {
    const hgr__node_t* node = &graph->nodes[node_id];
    for (uint32_t i = 0; i < node->input_count; ++i) {
      snprintf(what, sizeof(what), "%s: input %u",
               hgr__graph_node_label(graph, node_id, label, sizeof(label)), i);
      HGR_RETURN_IF_ERROR(check_ref(graph, node->inputs[i], node_id, what));
    }
  }
  for (uint32_t i = 0; i < graph->head_count; ++i) {
    snprintf(what, sizeof(what), "head %u", i);
    HGR_RETURN_IF_ERROR(check_ref(graph, graph->heads[i], graph->node_count, what));
  }
  return HGR_OK;
}

/* arg_nodes must list every null node exactly once and nothing else: a null node that
 * is not listed could never be given a value. */
static hgr_status_t check_arg_nodes(const hgr_graph_t* graph) {
  hgr_status_t status = HGR_OK;
  char label[HGR__LABEL_CAPACITY];
  uint32_t* position = hgr__calloc(graph->allocator, (size_t)graph->node_count + 1, sizeof(*position));
  if (!position) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  for (uint32_t node_id = 0; node_id < graph->node_count; ++node_id) position[node_id] = UINT32_MAX;
  for (uint32_t i = 0; i < graph->arg_count && !status; ++i) {
    uint32_t node_id = graph->arg_nodes[i];
    if (node_id >= graph->node_count)
      status =
          INVALID("arg_nodes[%u] is %u, but the graph has %u nodes", i, node_id, graph->node_count);
    else if (graph->nodes[node_id].is_op)
      status = INVALID("arg_nodes[%u] is %s, a tvm_op; inputs must be null nodes", i,
                       hgr__graph_node_label(graph, node_id, label, sizeof(label)));
    else if (position[node_id] != UINT32_MAX)
      status =
          INVALID("arg_nodes[%u] lists %s again (also arg_nodes[%u])", i,
                  hgr__graph_node_label(graph, node_id, label, sizeof(label)), position[node_id]);
    else
      position[node_id] = i;
  }
  for (uint32_t node_id = 0; node_id < graph->node_count && !status; ++node_id)
    if (!graph->nodes[node_id].is_op && position[node_id] == UINT32_MAX)
      status =
          INVALID("%s is a null node, but arg_nodes does not list it, so it could never be set",
                  hgr__graph_node_label(graph, node_id, label, sizeof(label)));
  hgr__free(graph->allocator, position);
  return status;
}

const char* hgr__entry_shape(const hgr__entry_t* entry, char* buffer, size_t capacity) {
  size_t used = (size_t)snprintf(buffer, capacity, "[");
  for (int32_t d = 0; d < entry->ndim && used < capacity; ++d)
    used += (size_t)snprintf(buffer + used, capacity - used, "%s%lld", d ? ", " : "",
                             (long long)entry->shape[d]);
  if (used < capacity) snprintf(buffer + used, capacity - used, "]");
  return buffer;
}

static hgr_status_t compute_sizes(hgr_graph_t* graph) {
  for (uint32_t entry_id = 0; entry_id < graph->entry_count; ++entry_id) {
    hgr__entry_t* entry = &graph->entries[entry_id];
    uint64_t count = 0, bytes = 0;
    if (!hgr__shape_size(entry->shape, entry->ndim, hgr_dtype_element_bytes(entry->dtype), &count, &bytes)) {
      char label[HGR__LABEL_CAPACITY], shape[HGR_MAX_DIMS * 22 + 4], dtype[24];
      return INVALID("%s: shape %s of %s is more elements or bytes than 2^63 - 1",
                     hgr__graph_entry_label(graph, entry_id, label, sizeof(label)),
                     hgr__entry_shape(entry, shape, sizeof(shape)),
                     hgr_dtype_format(entry->dtype, dtype, sizeof(dtype)));
    }
    entry->element_count = count;
    entry->bytes = bytes;
  }
  return HGR_OK;
}

static int compare_u64(const void* a, const void* b) {
  uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return (x > y) - (x < y);
}

/* TVM's storage ids may be sparse (any id from 0 to 2^31 - 1), and the executor
 * keeps one pool entry per storage, so ids become dense slots here: the distinct
 * ids numbered in ascending order (a graph whose ids are 0 to n - 1 keeps slot ==
 * id). Entries are sorted by (storage id, entry id) rather than indexed by storage
 * id, so a sparse id costs what a dense one does. The same pass checks that one
 * storage id lives on one device. */
static hgr_status_t assign_storage_slots(hgr_graph_t* graph) {
  uint32_t entry_count = graph->entry_count;
  uint64_t* keys = hgr__calloc(graph->allocator, (size_t)entry_count + 1, sizeof(*keys));
  if (!keys) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for %u storage ids", entry_count);
  for (uint32_t e = 0; e < entry_count; ++e) keys[e] = (uint64_t)graph->entries[e].storage_id << 32 | e;
  qsort(keys, entry_count, sizeof(*keys), compare_u64);
  uint32_t storage_count = 0;
  for (uint32_t i = 0; i < entry_count; ++i) storage_count += i == 0 || keys[i] >> 32 != keys[i - 1] >> 32;
  graph->storage_ids = hgr__calloc(graph->allocator, (size_t)storage_count + 1, sizeof(*graph->storage_ids));
  if (!graph->storage_ids) {
    hgr__free(graph->allocator, keys);
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for %u storage slots", storage_count);
  }
  graph->storage_count = storage_count;
  hgr_status_t status = HGR_OK;
  uint32_t slot = 0, first = 0; /* first: the lowest entry of the current storage id */
  for (uint32_t i = 0; i < entry_count && !status; ++i) {
    uint32_t storage_id = (uint32_t)(keys[i] >> 32), entry_id = (uint32_t)keys[i];
    if (i == 0 || storage_id != (uint32_t)(keys[i - 1] >> 32)) {
      slot = i == 0 ? 0 : slot + 1;
      graph->storage_ids[slot] = storage_id;
      first = entry_id;
    } else if (graph->has_device_index && graph->entries[entry_id].device_key != graph->entries[first].device_key) {
      char label_first[HGR__LABEL_CAPACITY], label_other[HGR__LABEL_CAPACITY];
      status = INVALID(
          "storage %u is used on device %d by %s and on device %d by %s; one storage "
          "id cannot span two devices",
          storage_id, graph->entries[first].device_key,
          hgr__graph_entry_label(graph, first, label_first, sizeof(label_first)),
          graph->entries[entry_id].device_key,
          hgr__graph_entry_label(graph, entry_id, label_other, sizeof(label_other)));
    }
    graph->entries[entry_id].storage_slot = slot;
  }
  hgr__free(graph->allocator, keys);
  return status;
}

/* __copy and __nop are run by the runtime, so their shape is checked here. */
static hgr_status_t check_runtime_ops(const hgr_graph_t* graph) {
  char label[HGR__LABEL_CAPACITY], in_label[HGR__LABEL_CAPACITY], out_label[HGR__LABEL_CAPACITY];
  for (uint32_t node_id = 0; node_id < graph->node_count; ++node_id) {
    const hgr__node_t* node = &graph->nodes[node_id];
    if (!node->is_op) continue;
    bool is_copy = strcmp(node->func_name, "__copy") == 0;
    bool is_nop = strcmp(node->func_name, "__nop") == 0;
    if (!is_copy && !is_nop) continue;
    hgr__graph_node_label(graph, node_id, label, sizeof(label));
    if (node->input_count != 1 || node->num_outputs != 1)
      return INVALID(
          "%s: %s needs exactly 1 input and 1 output, but it has %u input%s and %u "
          "output%s",
          label, node->func_name, node->input_count, node->input_count == 1 ? "" : "s",
          node->num_outputs, node->num_outputs == 1 ? "" : "s");
    uint32_t in = hgr__graph_entry_id(graph, node->inputs[0]);
    uint32_t out = graph->node_row_ptr[node_id];
    const hgr__entry_t *input = &graph->entries[in], *output = &graph->entries[out];
    if (is_copy && input->bytes != output->bytes)
      return INVALID(
          "%s: __copy reads %llu bytes from %s but writes %llu bytes to %s; the sizes "
          "must match",
          label, (unsigned long long)input->bytes,
          hgr__graph_entry_label(graph, in, in_label, sizeof(in_label)),
          (unsigned long long)output->bytes,
          hgr__graph_entry_label(graph, out, out_label, sizeof(out_label)));
    if (is_nop && input->storage_slot != output->storage_slot)
      return INVALID(
          "%s: __nop output %s has storage id %u, but its input %s has storage id %u; "
          "a __nop output must alias its input",
          label, hgr__graph_entry_label(graph, out, out_label, sizeof(out_label)),
          output->storage_id,
          hgr__graph_entry_label(graph, in, in_label, sizeof(in_label)),
          input->storage_id);
  }
  return HGR_OK;
}

static hgr_status_t make_head_names(hgr_graph_t* graph) {
  graph->head_names = hgr__calloc(graph->allocator, (size_t)graph->head_count + 1, sizeof(*graph->head_names));
  if (!graph->head_names) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  for (uint32_t i = 0; i < graph->head_count; ++i) {
    const char* name = graph->nodes[graph->heads[i].node_id].name;
    size_t capacity = strlen(name) + 12;
    graph->head_names[i] = hgr__alloc(graph->allocator, capacity);
    if (!graph->head_names[i])
      return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    snprintf(graph->head_names[i], capacity, "%s:%u", name, i);
  }
  return HGR_OK;
}

/* A recorded binding of a key no entry has would bind nothing: most likely the file
 * was edited after `hgr place` wrote it, so it is refused rather than ignored. */
static hgr_status_t check_bindings(const hgr_graph_t* graph) {
  for (uint32_t b = 0; b < graph->binding_count; ++b) {
    int32_t key = graph->binding_keys[b];
    if (!graph->has_device_index)
      return INVALID("the graph records a binding of device key %d to '%.80s', but it has no device_index column, "
                     "so it has no device keys",
                     key, graph->binding_specs[b]);
    bool used = false;
    for (uint32_t e = 0; e < graph->entry_count && !used; ++e) used = graph->entries[e].device_key == key;
    if (used) continue;
    char keys[256] = "";
    size_t length = 0;
    for (uint32_t e = 0; e < graph->entry_count && length + 16 < sizeof(keys); ++e) {
      int32_t other = graph->entries[e].device_key;
      bool seen = false;
      for (uint32_t f = 0; f < e && !seen; ++f) seen = graph->entries[f].device_key == other;
      if (!seen) length += (size_t)snprintf(keys + length, sizeof(keys) - length, "%s%d", length ? ", " : "", other);
    }
    return INVALID("the graph records a binding of device key %d to '%.80s', but no entry has device key %d (the "
                   "graph's keys are %s)",
                   key, graph->binding_specs[b], key, keys);
  }
  return HGR_OK;
}

hgr_status_t hgr__graph_validate(hgr_graph_t* graph) {
  HGR_RETURN_IF_ERROR(check_bindings(graph));
  HGR_RETURN_IF_ERROR(check_inputs_and_heads(graph));
  HGR_RETURN_IF_ERROR(check_arg_nodes(graph));
  HGR_RETURN_IF_ERROR(compute_sizes(graph));
  HGR_RETURN_IF_ERROR(assign_storage_slots(graph));
  HGR_RETURN_IF_ERROR(check_runtime_ops(graph));
  return make_head_names(graph);
}

/* ---- comparison ------------------------------------------------------------------ */

static bool same_text(const char* a, const char* b) { return a == b || (a && b && !strcmp(a, b)); }

static bool same_ref(hgr__entry_ref_t a, hgr__entry_ref_t b) { return a.node_id == b.node_id && a.index == b.index; }

static bool same_node(const hgr__node_t* a, const hgr__node_t* b) {
  bool same = same_text(a->name, b->name) && a->is_op == b->is_op && same_text(a->func_name, b->func_name) &&
              a->num_outputs == b->num_outputs && a->flatten_data == b->flatten_data &&
              a->input_count == b->input_count && a->attr_count == b->attr_count;
  for (uint32_t i = 0; same && i < a->input_count; ++i) same = same_ref(a->inputs[i], b->inputs[i]);
  for (uint32_t i = 0; same && i < a->attr_count; ++i)
    same = same_text(a->attrs[i].key, b->attrs[i].key) && same_text(a->attrs[i].value, b->attrs[i].value);
  return same;
}

/* Entries of two graphs: storage ids are compared as the JSON gave them, not as
 * slots (equal ids in equal graphs give equal slots anyway). */
static bool same_entry(const hgr__entry_t* a, const hgr__entry_t* b) {
  bool same = a->storage_id == b->storage_id && a->device_key == b->device_key && hgr_dtype_equal(a->dtype, b->dtype) &&
              a->ndim == b->ndim;
  for (int32_t d = 0; same && d < a->ndim; ++d) same = a->shape[d] == b->shape[d];
  return same;
}

bool hgr__graph_same(const hgr_graph_t* a, const hgr_graph_t* b, char* difference, size_t capacity) {
  char label[HGR__LABEL_CAPACITY];
  if (a == b) return true;
  if (a->node_count != b->node_count || a->arg_count != b->arg_count || a->head_count != b->head_count ||
      a->entry_count != b->entry_count) {
    snprintf(difference, capacity, "%u nodes, %u inputs, %u outputs and %u entries against %u, %u, %u and %u",
             a->node_count, a->arg_count, a->head_count, a->entry_count, b->node_count, b->arg_count, b->head_count,
             b->entry_count);
    return false;
  }
  for (uint32_t n = 0; n < a->node_count; ++n)
    if (!same_node(&a->nodes[n], &b->nodes[n]) || a->node_row_ptr[n] != b->node_row_ptr[n]) {
      snprintf(difference, capacity, "%s differs (name, op, attrs or inputs)",
               hgr__graph_node_label(a, n, label, sizeof(label)));
      return false;
    }
  for (uint32_t i = 0; i < a->arg_count; ++i)
    if (a->arg_nodes[i] != b->arg_nodes[i]) {
      snprintf(difference, capacity, "input %u is node %u against node %u", i, a->arg_nodes[i], b->arg_nodes[i]);
      return false;
    }
  for (uint32_t h = 0; h < a->head_count; ++h)
    if (!same_ref(a->heads[h], b->heads[h])) {
      snprintf(difference, capacity, "output %u differs", h);
      return false;
    }
  for (uint32_t e = 0; e < a->entry_count; ++e)
    if (!same_entry(&a->entries[e], &b->entries[e])) {
      uint32_t id_a = a->entries[e].storage_id;
      uint32_t id_b = b->entries[e].storage_id;
      if (id_a != id_b)
        snprintf(difference, capacity, "%s differs (storage id %u against %u)",
                 hgr__graph_entry_label(a, e, label, sizeof(label)), id_a, id_b);
      else
        snprintf(difference, capacity, "%s differs (device key, dtype or shape)",
                 hgr__graph_entry_label(a, e, label, sizeof(label)));
      return false;
    }
  bool same_bindings = a->binding_count == b->binding_count;
  for (uint32_t i = 0; same_bindings && i < a->binding_count; ++i)
    same_bindings = a->binding_keys[i] == b->binding_keys[i] && same_text(a->binding_specs[i], b->binding_specs[i]);
  if (!same_bindings) {
    snprintf(difference, capacity, "the recorded device bindings differ (%u against %u bindings)", a->binding_count,
             b->binding_count);
    return false;
  }
  return true;
}

/* ---- lifetime ----------------------------------------------------------------- */

hgr_graph_t* hgr_graph_retain(hgr_graph_t* graph) {
  if (graph) atomic_fetch_add_explicit(&graph->refcount, 1, memory_order_relaxed);
  return graph;
}

void hgr__graph_node_free(hgr_allocator_t allocator, hgr__node_t* node) {
  hgr__free(allocator, node->name);
  hgr__free(allocator, node->func_name);
  hgr__free(allocator, node->inputs);
  for (uint32_t i = 0; i < node->attr_count; ++i) {
    hgr__free(allocator, node->attrs[i].key);
    hgr__free(allocator, node->attrs[i].value);
  }
  hgr__free(allocator, node->attrs);
  memset(node, 0, sizeof(*node));
}

void hgr_graph_release(hgr_graph_t* graph) {
  /* acq_rel: the last releaser must see every other thread's use finished. */
  if (!graph || atomic_fetch_sub_explicit(&graph->refcount, 1, memory_order_acq_rel) != 1) return;
  hgr_allocator_t allocator = graph->allocator;
  for (uint32_t node_id = 0; node_id < graph->node_count; ++node_id)
    hgr__graph_node_free(allocator, &graph->nodes[node_id]);
  if (graph->head_names)
    for (uint32_t i = 0; i < graph->head_count; ++i) hgr__free(allocator, graph->head_names[i]);
  hgr__free(allocator, graph->head_names);
  hgr__free(allocator, graph->nodes);
  hgr__free(allocator, graph->arg_nodes);
  hgr__free(allocator, graph->node_row_ptr);
  hgr__free(allocator, graph->heads);
  hgr__free(allocator, graph->entries);
  hgr__free(allocator, graph->storage_ids);
  for (uint32_t i = 0; i < graph->binding_count; ++i) hgr__free(allocator, graph->binding_specs[i]);
  hgr__free(allocator, graph->binding_keys);
  hgr__free(allocator, graph->binding_specs);
  hgr__free(allocator, graph);
}

/* ---- accessors ----------------------------------------------------------------- */

size_t hgr_graph_node_count(const hgr_graph_t* graph) { return graph ? graph->node_count : 0; }
size_t hgr_graph_entry_count(const hgr_graph_t* graph) { return graph ? graph->entry_count : 0; }
size_t hgr_graph_input_count(const hgr_graph_t* graph) { return graph ? graph->arg_count : 0; }
size_t hgr_graph_output_count(const hgr_graph_t* graph) { return graph ? graph->head_count : 0; }

hgr_status_t hgr_graph_node_info(const hgr_graph_t* graph, size_t node_id, hgr_node_info_t* out_info) {
  memset(out_info, 0, sizeof(*out_info));
  if (!graph || node_id >= graph->node_count)
    return HGR_STATUS(HGR_STATUS_OUT_OF_RANGE, "node %zu of %u", node_id, graph ? graph->node_count : 0);
  const hgr__node_t* node = &graph->nodes[node_id];
  out_info->name = node->name;
  out_info->func_name = node->is_op ? node->func_name : NULL;
  out_info->input_count = node->input_count;
  out_info->output_count = node->num_outputs;
  return HGR_OK;
}

hgr_status_t hgr_graph_node_input(const hgr_graph_t* graph, size_t node_id, uint32_t i, uint32_t* out_node,
                                  uint32_t* out_index) {
  *out_node = *out_index = 0;
  if (!graph || node_id >= graph->node_count || i >= graph->nodes[node_id].input_count)
    return HGR_STATUS(HGR_STATUS_OUT_OF_RANGE, "input %u of node %zu", i, node_id);
  *out_node = graph->nodes[node_id].inputs[i].node_id;
  *out_index = graph->nodes[node_id].inputs[i].index;
  return HGR_OK;
}

static void fill_info(const hgr__entry_t* entry, const char* name, hgr_tensor_info_t* out_info) {
  out_info->name = name;
  out_info->dtype = entry->dtype;
  out_info->ndim = entry->ndim;
  out_info->shape = entry->shape;
  out_info->bytes = entry->bytes;
}

hgr_status_t hgr_graph_input_info(const hgr_graph_t* graph, size_t i, hgr_tensor_info_t* out_info) {
  if (i >= graph->arg_count)
    return HGR_STATUS(HGR_STATUS_OUT_OF_RANGE, "input %zu is out of range; the graph has %u inputs",
                      i, graph->arg_count);
  uint32_t node_id = graph->arg_nodes[i];
  fill_info(&graph->entries[graph->node_row_ptr[node_id]], graph->nodes[node_id].name, out_info);
  return HGR_OK;
}

hgr_status_t hgr_graph_output_info(const hgr_graph_t* graph, size_t i,
                                   hgr_tensor_info_t* out_info) {
  if (i >= graph->head_count)
    return HGR_STATUS(HGR_STATUS_OUT_OF_RANGE,
                      "output %zu is out of range; the graph has %u outputs", i, graph->head_count);
  fill_info(&graph->entries[hgr__graph_entry_id(graph, graph->heads[i])], graph->head_names[i],
            out_info);
  return HGR_OK;
}

hgr_status_t hgr_graph_entry_info(const hgr_graph_t* graph, size_t node_id, uint32_t index,
                                  hgr_tensor_info_t* out_info) {
  if (node_id >= graph->node_count || index >= graph->nodes[node_id].num_outputs)
    return HGR_STATUS(HGR_STATUS_OUT_OF_RANGE, "output %u of node %zu is out of range", index, node_id);
  fill_info(&graph->entries[graph->node_row_ptr[node_id] + index], graph->nodes[node_id].name, out_info);
  return HGR_OK;
}

size_t hgr_graph_binding_count(const hgr_graph_t* graph) { return graph ? graph->binding_count : 0; }

hgr_status_t hgr_graph_binding(const hgr_graph_t* graph, size_t i, int32_t* out_key, const char** out_spec) {
  *out_key = -1;
  *out_spec = NULL;
  if (!graph || i >= graph->binding_count)
    return HGR_STATUS(HGR_STATUS_OUT_OF_RANGE, "device binding %zu is out of range; the graph records %u", i,
                      graph ? graph->binding_count : 0);
  *out_key = graph->binding_keys[i];
  *out_spec = graph->binding_specs[i];
  return HGR_OK;
}

hgr_status_t hgr_graph_input_index(const hgr_graph_t* graph, const char* name, size_t* out_index) {
  /* The first match wins, as in TVM's GetInputIndex. */
  for (uint32_t i = 0; i < graph->arg_count; ++i) {
    if (strcmp(graph->nodes[graph->arg_nodes[i]].name, name) == 0) {
      *out_index = i;
      return HGR_OK;
    }
  }
  char names[512];
  size_t used = 0;
  names[0] = 0;
  uint32_t listed = 0;
  for (; listed < graph->arg_count && used + 64 < sizeof(names); ++listed)
    used += (size_t)snprintf(names + used, sizeof(names) - used, "%s'%.48s'", listed ? ", " : "",
                             graph->nodes[graph->arg_nodes[listed]].name);
  if (listed < graph->arg_count)
    snprintf(names + used, sizeof(names) - used, " and %u more", graph->arg_count - listed);
  return HGR_STATUS(HGR_STATUS_NOT_FOUND,
                    "the graph has no input named '%.120s'; its inputs are %s", name,
                    graph->arg_count ? names : "none");
}
