/* The placed graph (place_internal.h, hgr__place_emit): the problem graph's nodes on
 * their devices' keys, with a `__copy` wherever a value is consumed on another
 * device. A copy is emitted just before its first consumer, so that the copied value
 * lives on the consuming device no longer than it must; every later consumer on that
 * device reads the same copy. Across ranks, heads produced off rank 0 are read
 * through a copy to rank 0's home slot. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "place_internal.h"

typedef struct emitter_t {
  hgr_allocator_t allocator; /* the problem's: the placed graph's and everything here */
  const hgr__place_problem_t* problem;
  const hgr__node_choice_t* choices;
  const char* const* specs;
  const uint32_t* storage_ids;
  hgr_graph_t* placed;
  uint32_t* source_node;   /* per placed node */
  uint32_t source_capacity;
  uint32_t next_storage;   /* without storage_ids: the next fresh id */
  uint32_t entry_count;    /* entries appended so far */
  /* [problem entry * device_count + slot]: the placed value there; node_id
   * UINT32_MAX where there is none yet. */
  hgr__entry_ref_t* at;
  char** copy_names;       /* names given to copies so far */
  uint32_t copy_count;
} emitter_t;

static bool name_taken(const emitter_t* emitter, const char* name) {
  const hgr_graph_t* graph = emitter->problem->graph;
  for (uint32_t n = 0; n < graph->node_count; ++n)
    if (!strcmp(graph->nodes[n].name, name)) return true;
  for (uint32_t c = 0; c < emitter->copy_count; ++c)
    if (!strcmp(emitter->copy_names[c], name)) return true;
  return false;
}

/* "<node>.to.<spec>" ("<node>.<output>.to.<spec>" for a node of several outputs),
 * with ".2", ".3", ... until no node has it. */
static hgr_status_t copy_name(emitter_t* emitter, uint32_t entry_id, uint32_t slot, char** out_name) {
  const hgr_graph_t* graph = emitter->problem->graph;
  uint32_t node_id = graph->entries[entry_id].node_id, index = entry_id - graph->node_row_ptr[node_id];
  char* base = graph->nodes[node_id].num_outputs > 1
                   ? hgr__format_in(emitter->allocator, "%s.%u.to.%s", graph->nodes[node_id].name, index,
                                    emitter->specs[slot])
                   : hgr__format_in(emitter->allocator, "%s.to.%s", graph->nodes[node_id].name, emitter->specs[slot]);
  char* name = base;
  for (uint32_t suffix = 2; name && name_taken(emitter, name); ++suffix) {
    if (name != base) hgr__free(emitter->allocator, name);
    name = hgr__format_in(emitter->allocator, "%s.%u", base, suffix);
  }
  if (name != base) hgr__free(emitter->allocator, base);
  if (!name) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  char** names =
      hgr__realloc(emitter->allocator, emitter->copy_names, ((size_t)emitter->copy_count + 1) * sizeof(*names));
  if (!names) {
    hgr__free(emitter->allocator, name);
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  }
  emitter->copy_names = names;
  names[emitter->copy_count++] = name;
  *out_name = name;
  return HGR_OK;
}

/* Appends a node, recording its problem node (UINT32_MAX for a copy). Its output
 * entries get storage ids from storage_ids or fresh ones. */
static hgr_status_t append(emitter_t* emitter, const char* name, const char* func_name, const hgr__entry_ref_t* inputs,
                           uint32_t input_count, const hgr__attr_t* attrs, uint32_t attr_count, hgr__entry_t* outputs,
                           uint32_t output_count, uint32_t source, uint32_t* out_node_id) {
  hgr_graph_t* placed = emitter->placed;
  uint32_t first_entry = emitter->entry_count;
  for (uint32_t k = 0; k < output_count; ++k)
    outputs[k].storage_id = emitter->storage_ids ? emitter->storage_ids[first_entry + k] : emitter->next_storage++;
  if (!emitter->storage_ids && func_name && !strcmp(func_name, "__nop"))
    outputs[0].storage_id = placed->entries[hgr__graph_entry_id(placed, inputs[0])].storage_id;
  HGR_RETURN_IF_ERROR(hgr__graph_edit_append(placed, name, func_name, inputs, input_count, attrs, attr_count, outputs,
                                             output_count, out_node_id));
  emitter->entry_count += output_count;
  if (*out_node_id >= emitter->source_capacity) {
    uint32_t capacity = emitter->source_capacity ? emitter->source_capacity * 2 : 64;
    uint32_t* grown = hgr__realloc(emitter->allocator, emitter->source_node, (size_t)capacity * sizeof(*grown));
    if (!grown) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    emitter->source_node = grown;
    emitter->source_capacity = capacity;
  }
  emitter->source_node[*out_node_id] = source;
  return HGR_OK;
}

/* The placed value of problem entry entry_id on slot, copying it there first when
 * it lives elsewhere. */
static hgr_status_t value_on(emitter_t* emitter, uint32_t entry_id, uint32_t slot, hgr__entry_ref_t* out_ref) {
  size_t count = emitter->problem->device_count;
  hgr__entry_ref_t* here = &emitter->at[(size_t)entry_id * count + slot];
  if (here->node_id != UINT32_MAX) {
    *out_ref = *here;
    return HGR_OK;
  }
  const hgr_graph_t* graph = emitter->problem->graph;
  uint32_t home = emitter->choices[graph->entries[entry_id].node_id].slot;
  hgr__entry_ref_t from = emitter->at[(size_t)entry_id * count + home];
  char* name = NULL;
  HGR_RETURN_IF_ERROR(copy_name(emitter, entry_id, slot, &name));
  hgr__entry_t output = graph->entries[entry_id];
  output.device_key = (int32_t)slot + 1;
  uint32_t node_id = 0;
  HGR_RETURN_IF_ERROR(append(emitter, name, "__copy", &from, 1, NULL, 0, &output, 1, UINT32_MAX, &node_id));
  *here = (hgr__entry_ref_t){node_id, 0};
  *out_ref = *here;
  return HGR_OK;
}

static hgr_status_t emit_nodes(emitter_t* emitter) {
  const hgr_graph_t* graph = emitter->problem->graph;
  size_t count = emitter->problem->device_count;
  hgr__entry_ref_t* inputs = NULL;
  hgr__entry_t* outputs = NULL;
  hgr_status_t status = hgr__graph_edit_scratch(graph, &inputs, &outputs);
  for (uint32_t node_id = 0; node_id < graph->node_count && !status; ++node_id) {
    const hgr__node_t* node = &graph->nodes[node_id];
    uint32_t slot = emitter->choices[node_id].slot;
    for (uint32_t i = 0; i < node->input_count && !status; ++i)
      status = value_on(emitter, hgr__graph_entry_id(graph, node->inputs[i]), slot, &inputs[i]);
    if (status) break;
    uint32_t first_entry = graph->node_row_ptr[node_id];
    for (uint32_t k = 0; k < node->num_outputs; ++k) {
      outputs[k] = graph->entries[first_entry + k];
      outputs[k].device_key = (int32_t)slot + 1;
    }
    uint32_t placed_id = 0;
    status = append(emitter, node->name, node->is_op ? node->func_name : NULL, inputs, node->input_count, node->attrs,
                    node->attr_count, outputs, node->num_outputs, node_id, &placed_id);
    for (uint32_t k = 0; k < node->num_outputs && !status; ++k)
      emitter->at[(size_t)(first_entry + k) * count + slot] = (hgr__entry_ref_t){placed_id, k};
  }
  hgr__free(hgr__graph_allocator(graph), inputs); /* hgr__graph_edit_scratch's: graph's allocator */
  hgr__free(hgr__graph_allocator(graph), outputs);
  return status;
}

hgr_status_t hgr__place_emit(const hgr__place_problem_t* problem, const hgr__node_choice_t* choices,
                             const char* const* specs, const uint32_t* storage_ids, hgr_graph_t** out_placed,
                             uint32_t** out_source_node) {
  *out_placed = NULL;
  *out_source_node = NULL;
  const hgr_graph_t* graph = problem->graph;
  size_t count = problem->device_count;
  hgr_allocator_t allocator = problem->allocator;
  emitter_t emitter = {allocator, problem, choices, specs, storage_ids, NULL, NULL, 0, 0, 0, NULL, NULL, 0};
  hgr_status_t status = HGR_OK;
  bool* used = hgr__calloc(allocator, count + 1, sizeof(*used));
  emitter.at = hgr__alloc(allocator, ((size_t)graph->entry_count * count + 1) * sizeof(*emitter.at));
  if (!used || !emitter.at) {
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    goto cleanup;
  }
  for (size_t i = 0; i < (size_t)graph->entry_count * count; ++i) emitter.at[i].node_id = UINT32_MAX;
  if ((status = hgr__graph_edit_new(allocator, &emitter.placed)) || (status = emit_nodes(&emitter))) goto cleanup;
  /* Across ranks rank 0 writes the outputs: a head produced on another rank is read
   * through a copy to home_slot (the one a consumer there already has, else a new
   * one after the nodes). */
  bool head_copied = false;
  for (uint32_t h = 0; h < graph->head_count && !status; ++h) {
    uint32_t entry_id = hgr__graph_entry_id(graph, graph->heads[h]);
    uint32_t home = choices[graph->heads[h].node_id].slot;
    hgr__entry_ref_t ref = emitter.at[(size_t)entry_id * count + home];
    if (problem->distributed && hgr__place_slot_rank(problem, home) != 0) {
      status = value_on(&emitter, entry_id, problem->home_slot, &ref);
      head_copied = true;
    }
    if (!status) status = hgr__graph_edit_add_head(emitter.placed, ref);
  }
  for (uint32_t node_id = 0; node_id < graph->node_count; ++node_id) used[choices[node_id].slot] = true;
  if (head_copied) used[problem->home_slot] = true;
  for (size_t slot = 0; slot < count && !status; ++slot)
    if (used[slot]) status = hgr__graph_edit_add_binding(emitter.placed, (int32_t)slot + 1, specs[slot]);
  if (!status) status = hgr__graph_edit_order_inputs(emitter.placed, graph);
  if (!status) status = hgr__graph_edit_finish(emitter.placed);
  if (status) {
    status = hgr_status_annotate(status, "building the placed graph");
    goto cleanup;
  }
  *out_placed = emitter.placed;
  *out_source_node = emitter.source_node;
  emitter.placed = NULL;
  emitter.source_node = NULL;

cleanup:
  hgr_graph_release(emitter.placed);
  hgr__free(allocator, emitter.source_node);
  hgr__free(allocator, emitter.at);
  for (uint32_t c = 0; c < emitter.copy_count; ++c) hgr__free(allocator, emitter.copy_names[c]);
  hgr__free(allocator, emitter.copy_names);
  hgr__free(allocator, used);
  return status;
}
