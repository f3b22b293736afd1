/* The plan verifier (place_internal.h, hgr__place_verify): checks a placed, planned
 * graph on its own terms, without trusting the planner: it recomputes lifetimes from
 * the nodes, accepts only the sharing that the ops allow (aliases, elementwise ops
 * over an input that dies at them), and plans every op node. */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "ops.h"
#include "place_internal.h"

#define INVALID(...) HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, __VA_ARGS__)

static bool is_func(const hgr__node_t* node, const char* name) {
  return node->is_op && node->func_name && !strcmp(node->func_name, name);
}

static uint32_t find(uint32_t* parent, uint32_t e) {
  while (parent[e] != e) {
    parent[e] = parent[parent[e]];
    e = parent[e];
  }
  return e;
}

/* Every op node's inputs on its own device; a node's outputs on one device; a
 * storage on one device. */
static hgr_status_t check_devices(const hgr_graph_t* graph) {
  char label[HGR__LABEL_CAPACITY], entry_label[HGR__LABEL_CAPACITY], other_label[HGR__LABEL_CAPACITY];
  for (uint32_t n = 0; n < graph->node_count; ++n) {
    const hgr__node_t* node = &graph->nodes[n];
    uint32_t first = graph->node_row_ptr[n];
    int32_t key = graph->entries[first].device_key;
    for (uint32_t k = 1; k < node->num_outputs; ++k)
      if (graph->entries[first + k].device_key != key)
        return INVALID("%s has outputs on device keys %d and %d; a node runs on one device",
                       hgr__graph_node_label(graph, n, label, sizeof(label)), key, graph->entries[first + k].device_key);
    if (!node->is_op || is_func(node, "__copy")) continue;
    for (uint32_t i = 0; i < node->input_count; ++i) {
      uint32_t e = hgr__graph_entry_id(graph, node->inputs[i]);
      if (graph->entries[e].device_key != key)
        return INVALID("%s runs on device key %d but its input %u, %s, is on device key %d; only a __copy reads "
                       "from another device",
                       hgr__graph_node_label(graph, n, label, sizeof(label)), key, i,
                       hgr__graph_entry_label(graph, e, entry_label, sizeof(entry_label)), graph->entries[e].device_key);
    }
  }
  /* Validation checks this too when the graph has device keys; the verifier does
   * not rely on it. */
  hgr_allocator_t allocator = hgr__graph_allocator(graph);
  int32_t* storage_key = hgr__alloc(allocator, ((size_t)graph->storage_count + 1) * sizeof(*storage_key));
  uint32_t* storage_entry = hgr__alloc(allocator, ((size_t)graph->storage_count + 1) * sizeof(*storage_entry));
  hgr_status_t status = HGR_OK;
  if (!storage_key || !storage_entry) status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  for (uint32_t s = 0; s < graph->storage_count && !status; ++s) storage_entry[s] = UINT32_MAX;
  for (uint32_t e = 0; e < graph->entry_count && !status; ++e) {
    uint32_t slot = graph->entries[e].storage_slot;
    if (storage_entry[slot] == UINT32_MAX) {
      storage_entry[slot] = e;
      storage_key[slot] = graph->entries[e].device_key;
    } else if (storage_key[slot] != graph->entries[e].device_key) {
      status = INVALID("storage %u holds %s on device key %d and %s on device key %d",
                       hgr__graph_storage_id(graph, slot),
                       hgr__graph_entry_label(graph, storage_entry[slot], entry_label, sizeof(entry_label)),
                       storage_key[slot], hgr__graph_entry_label(graph, e, other_label, sizeof(other_label)),
                       graph->entries[e].device_key);
    }
  }
  hgr__free(allocator, storage_key);
  hgr__free(allocator, storage_entry);
  return status;
}

typedef struct interval_t {
  uint32_t slot, start, end, entry; /* entry: a member, for messages */
} interval_t;

static int compare_intervals(const void* a, const void* b) {
  const interval_t *x = a, *y = b;
  if (x->slot != y->slot) return x->slot < y->slot ? -1 : 1;
  if (x->start != y->start) return x->start < y->start ? -1 : 1;
  return (x->end > y->end) - (x->end < y->end);
}

/* Values alive at the same time share a storage only as an allowed pair. */
static hgr_status_t check_sharing(const hgr_graph_t* graph, const hgr_kernel_library_t* kernels) {
  uint32_t entry_count = graph->entry_count, steps = graph->node_count;
  hgr_allocator_t allocator = hgr__graph_allocator(graph);
  uint32_t* parent = hgr__alloc(allocator, ((size_t)entry_count + 1) * sizeof(*parent));
  uint32_t* last = hgr__alloc(allocator, ((size_t)entry_count + 1) * sizeof(*last));
  uint32_t* group_start = hgr__alloc(allocator, ((size_t)entry_count + 1) * sizeof(*group_start));
  uint32_t* group_end = hgr__alloc(allocator, ((size_t)entry_count + 1) * sizeof(*group_end));
  bool* pinned = hgr__calloc(allocator, (size_t)entry_count + 1, sizeof(*pinned));
  bool* group_pinned = hgr__calloc(allocator, (size_t)entry_count + 1, sizeof(*group_pinned));
  interval_t* intervals = hgr__alloc(allocator, ((size_t)entry_count + 1) * sizeof(*intervals));
  hgr_status_t status = HGR_OK;
  if (!parent || !last || !group_start || !group_end || !pinned || !group_pinned || !intervals) {
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for %u entries", entry_count);
    goto cleanup;
  }
  for (uint32_t e = 0; e < entry_count; ++e) {
    parent[e] = e;
    last[e] = graph->entries[e].node_id;
    pinned[e] = !graph->nodes[graph->entries[e].node_id].is_op;
  }
  for (uint32_t h = 0; h < graph->head_count; ++h) pinned[hgr__graph_entry_id(graph, graph->heads[h])] = true;
  for (uint32_t n = 0; n < steps; ++n)
    for (uint32_t i = 0; i < graph->nodes[n].input_count; ++i) {
      uint32_t e = hgr__graph_entry_id(graph, graph->nodes[n].inputs[i]);
      if (n > last[e]) last[e] = n;
    }
  /* Aliases: output 0 of a __nop or reshape-like in its input 0's storage. */
  for (uint32_t n = 0; n < steps; ++n) {
    const hgr__node_t* node = &graph->nodes[n];
    if (!node->is_op || node->input_count == 0 || is_func(node, "__copy")) continue;
    const hgr__op_t* op = is_func(node, "__nop") ? NULL : hgr__op_lookup(node->func_name, kernels);
    if (!is_func(node, "__nop") && (!op || op->in_place != HGR__IN_PLACE_ALIAS)) continue;
    uint32_t out = graph->node_row_ptr[n], in = hgr__graph_entry_id(graph, node->inputs[0]);
    if (graph->entries[out].storage_slot != graph->entries[in].storage_slot) continue;
    uint32_t a = find(parent, out), b = find(parent, in);
    if (a != b) parent[a] = b;
  }
  for (uint32_t e = 0; e < entry_count; ++e) {
    group_end[e] = 0;
    group_pinned[e] = false;
  }
  for (uint32_t e = 0; e < entry_count; ++e) {
    uint32_t r = find(parent, e);
    if (last[e] > group_end[r]) group_end[r] = last[e];
    group_pinned[r] |= pinned[e];
  }
  /* In place: an elementwise op's output over an input of its element count and
   * size whose values (with their aliases) are last read by this node. */
  for (uint32_t n = 0; n < steps; ++n) {
    const hgr__node_t* node = &graph->nodes[n];
    if (!node->is_op || is_func(node, "__nop") || is_func(node, "__copy")) continue;
    const hgr__op_t* op = hgr__op_lookup(node->func_name, kernels);
    if (!op || op->in_place != HGR__IN_PLACE_ELEMENTWISE) continue;
    for (uint32_t k = 0; k < node->num_outputs; ++k) {
      uint32_t out = graph->node_row_ptr[n] + k, out_root = find(parent, out);
      const hgr__entry_t* output = &graph->entries[out];
      if (group_pinned[out_root]) continue;
      for (uint32_t i = 0; i < node->input_count; ++i) {
        uint32_t in = hgr__graph_entry_id(graph, node->inputs[i]), root = find(parent, in);
        const hgr__entry_t* input = &graph->entries[in];
        if (root == out_root || input->storage_slot != output->storage_slot || group_pinned[root] ||
            group_end[root] != n || input->element_count != output->element_count ||
            hgr_dtype_element_bytes(input->dtype) != hgr_dtype_element_bytes(output->dtype))
          continue;
        parent[out_root] = root;
        if (group_end[out_root] > group_end[root]) group_end[root] = group_end[out_root];
        break;
      }
    }
  }
  /* One interval per group; groups in one storage must not overlap. */
  for (uint32_t e = 0; e < entry_count; ++e) {
    group_start[e] = UINT32_MAX;
    group_end[e] = 0;
    group_pinned[e] = false;
  }
  for (uint32_t e = 0; e < entry_count; ++e) {
    uint32_t r = find(parent, e);
    if (graph->entries[e].node_id < group_start[r]) group_start[r] = graph->entries[e].node_id;
    if (last[e] > group_end[r]) group_end[r] = last[e];
    group_pinned[r] |= pinned[e];
  }
  uint32_t interval_count = 0;
  for (uint32_t e = 0; e < entry_count; ++e) {
    if (find(parent, e) != e) continue;
    intervals[interval_count++] = (interval_t){graph->entries[e].storage_slot, group_pinned[e] ? 0 : group_start[e],
                                               group_pinned[e] ? steps : group_end[e], e};
  }
  qsort(intervals, interval_count, sizeof(*intervals), compare_intervals);
  for (uint32_t i = 1, widest = 0; i < interval_count; ++i) {
    if (intervals[i].slot != intervals[i - 1].slot) {
      widest = i;
      continue;
    }
    if (intervals[i].start <= intervals[widest].end) {
      char a[HGR__LABEL_CAPACITY], b[HGR__LABEL_CAPACITY];
      const interval_t *x = &intervals[widest], *y = &intervals[i];
      status = INVALID("storage %u is shared by %s (alive from node %u to %u%s) and %s (alive from node %u to %u%s), "
                       "which are alive at the same time and neither aliases nor is computed in place over the other",
                       hgr__graph_storage_id(graph, y->slot), hgr__graph_entry_label(graph, x->entry, a, sizeof(a)),
                       x->start, x->end, group_pinned[x->entry] ? ", an input or output" : "",
                       hgr__graph_entry_label(graph, y->entry, b, sizeof(b)), y->start, y->end,
                       group_pinned[y->entry] ? ", an input or output" : "");
      break;
    }
    if (intervals[i].end > intervals[widest].end) widest = i;
  }

cleanup:
  hgr__free(allocator, parent);
  hgr__free(allocator, last);
  hgr__free(allocator, group_start);
  hgr__free(allocator, group_end);
  hgr__free(allocator, pinned);
  hgr__free(allocator, group_pinned);
  hgr__free(allocator, intervals);
  return status;
}

hgr_status_t hgr__place_verify(const hgr_graph_t* placed, const hgr_kernel_library_t* kernels) {
  HGR_RETURN_IF_ERROR(check_devices(placed));
  HGR_RETURN_IF_ERROR(check_sharing(placed, kernels));
  /* What the executor will ask of every op node, with no device's limits. */
  hgr__limits_t limits = {1024, {1024, 1024, 1024}, (uint64_t)1 << 30, 0};
  for (uint32_t n = 0; n < placed->node_count; ++n) {
    const hgr__node_t* node = &placed->nodes[n];
    if (!node->is_op || is_func(node, "__nop") || is_func(node, "__copy")) continue;
    hgr__op_ctx_t ctx;
    HGR_RETURN_IF_ERROR(hgr__op_plan(hgr__graph_allocator(placed), placed, n, kernels, &limits, &ctx));
    hgr__op_ctx_free(&ctx);
  }
  return HGR_OK;
}
