/* A graph's own placement discarded (place_internal.h, hgr__place_unplace): what
 * placement starts from, for builder graphs and TVM graphs alike. Storage ids are
 * made unique so that the op registry's in-place checks see no sharing the new plan
 * will not keep; only a `__nop` keeps its alias, which validation requires. */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "place_internal.h"

static bool is_runtime_op(const hgr__node_t* node, const char* name) {
  return node->is_op && node->func_name && !strcmp(node->func_name, name);
}

hgr_status_t hgr__place_unplace(const hgr_graph_t* graph, hgr_graph_t** out_graph, uint32_t** out_source_node) {
  *out_graph = NULL;
  *out_source_node = NULL;
  hgr_graph_t* result = NULL;
  hgr_allocator_t allocator = hgr__graph_allocator(graph);
  /* Per original entry: the reference that replaces it in the new graph. */
  hgr__entry_ref_t* mapped = hgr__alloc(allocator, ((size_t)graph->entry_count + 1) * sizeof(*mapped));
  uint32_t* source = hgr__alloc(allocator, ((size_t)graph->node_count + 1) * sizeof(*source));
  hgr__entry_ref_t* inputs = NULL;
  hgr__entry_t* outputs = NULL;
  uint32_t next_storage = 0;
  hgr_status_t status = HGR_OK;
  if (!mapped || !source) {
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    goto cleanup;
  }
  if ((status = hgr__graph_edit_scratch(graph, &inputs, &outputs)) ||
      (status = hgr__graph_edit_new(allocator, &result)))
    goto cleanup;
  for (uint32_t node_id = 0; node_id < graph->node_count && !status; ++node_id) {
    const hgr__node_t* node = &graph->nodes[node_id];
    uint32_t first_entry = graph->node_row_ptr[node_id];
    if (is_runtime_op(node, "__copy")) {
      mapped[first_entry] = mapped[hgr__graph_entry_id(graph, node->inputs[0])];
      continue;
    }
    for (uint32_t i = 0; i < node->input_count; ++i) inputs[i] = mapped[hgr__graph_entry_id(graph, node->inputs[i])];
    for (uint32_t k = 0; k < node->num_outputs; ++k) {
      outputs[k] = graph->entries[first_entry + k];
      outputs[k].device_key = -1;
      outputs[k].storage_id = next_storage++;
    }
    if (is_runtime_op(node, "__nop")) {
      const hgr__entry_ref_t in = inputs[0];
      outputs[0].storage_id = result->entries[hgr__graph_entry_id(result, in)].storage_id;
    }
    uint32_t new_id = 0;
    status = hgr__graph_edit_append(result, node->name, node->is_op ? node->func_name : NULL, inputs, node->input_count,
                                    node->attrs, node->attr_count, outputs, node->num_outputs, &new_id);
    if (status) break;
    source[new_id] = node_id;
    for (uint32_t k = 0; k < node->num_outputs; ++k) mapped[first_entry + k] = (hgr__entry_ref_t){new_id, k};
  }
  for (uint32_t h = 0; h < graph->head_count && !status; ++h)
    status = hgr__graph_edit_add_head(result, mapped[hgr__graph_entry_id(graph, graph->heads[h])]);
  if (!status) status = hgr__graph_edit_order_inputs(result, graph);
  if (!status) status = hgr__graph_edit_finish(result);
  if (status) {
    status = hgr_status_annotate(status, "discarding the graph's own placement");
    goto cleanup;
  }
  *out_graph = result;
  *out_source_node = source;
  result = NULL;
  source = NULL;

cleanup:
  hgr_graph_release(result);
  hgr__free(allocator, mapped);
  hgr__free(allocator, source);
  hgr__free(allocator, inputs); /* hgr__graph_edit_scratch: graph's allocator */
  hgr__free(allocator, outputs);
  return status;
}
