/* libFuzzer target: graph JSON loading and validation (hgr_graph_load_json), then
 * every accessor of a graph that loaded, writing it back (hgr_graph_write_json,
 * which must load as the same graph), and the attr parsers the ops share
 * (runtime/ops/op_context.c) on every attr of every op node. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "fuzz.h"
#include "graph_internal.h"
#include "ops.h"

static void check_info(const hgr_tensor_info_t* info) {
  FUZZ_CHECK(info->name);
  FUZZ_CHECK(info->ndim >= 0 && info->ndim <= HGR_MAX_DIMS);
  FUZZ_CHECK(info->ndim == 0 || info->shape);
  FUZZ_CHECK(hgr_dtype_validate(info->dtype) == HGR_OK);
  uint64_t count = 1;
  for (int32_t d = 0; d < info->ndim; ++d) {
    FUZZ_CHECK(info->shape[d] >= 0);
    count *= (uint64_t)info->shape[d]; /* the loader checked that this fits */
  }
  FUZZ_CHECK(info->bytes == count * hgr_dtype_element_bytes(info->dtype));
}

/* Every attr parser on every attr, as the ops would call them. */
static void parse_attrs(const hgr_graph_t* graph, uint32_t node_id) {
  const hgr__node_t* node = &graph->nodes[node_id];
  hgr__op_ctx_t ctx;
  memset(&ctx, 0, sizeof(ctx));
  ctx.graph = graph;
  ctx.node_id = node_id;
  ctx.node = node;
  hgr__graph_node_label(graph, node_id, ctx.label, sizeof(ctx.label));
  for (uint32_t a = 0; a < node->attr_count; ++a) {
    const char* key = node->attrs[a].key;
    FUZZ_CHECK(hgr__attr_string(&ctx, key, NULL) == hgr__node_attr(node, key));
    int64_t integer;
    double number;
    bool flag, present;
    int64_t values[HGR_MAX_DIMS];
    uint32_t count = 0;
    fuzz_consume_status(hgr__attr_int(&ctx, key, 0, &integer));
    fuzz_consume_status(hgr__attr_float(&ctx, key, 0, &number));
    fuzz_consume_status(hgr__attr_bool(&ctx, key, false, &flag));
    if (!fuzz_consume_status(hgr__attr_ints(&ctx, key, values, HGR_MAX_DIMS, &count, &present)))
      FUZZ_CHECK(count <= HGR_MAX_DIMS);
    int32_t axis;
    if (!fuzz_consume_status(hgr__attr_int(&ctx, key, 0, &integer)))
      fuzz_consume_status(hgr__op_axis(&ctx, key, integer, 4, &axis));
  }
}

/* Storage ids are dense slots: storage_ids ascend strictly (so they are distinct
 * ids below 2^31), every slot has an entry, and there are no more slots than
 * entries, whatever ids the JSON gave. */
static void check_storage_slots(const hgr_graph_t* graph) {
  FUZZ_CHECK(graph->storage_count <= graph->entry_count);
  FUZZ_CHECK(graph->entry_count == 0 || graph->storage_count > 0);
  for (uint32_t slot = 0; slot < graph->storage_count; ++slot) {
    FUZZ_CHECK(hgr__graph_storage_id(graph, slot) <= INT32_MAX);
    if (slot > 0) FUZZ_CHECK(hgr__graph_storage_id(graph, slot - 1) < hgr__graph_storage_id(graph, slot));
  }
  bool* used = calloc((size_t)graph->storage_count + 1, sizeof(bool));
  FUZZ_CHECK(used);
  for (uint32_t e = 0; e < graph->entry_count; ++e) {
    FUZZ_CHECK(graph->entries[e].storage_slot < graph->storage_count);
    used[graph->entries[e].storage_slot] = true;
  }
  for (uint32_t slot = 0; slot < graph->storage_count; ++slot) FUZZ_CHECK(used[slot]);
  free(used);
}

/* What validation promises, checked again from the loaded structure: arg_nodes
 * lists every null node once and nothing else; one device key per storage id (with
 * a device_index column); __copy keeps the byte size and __nop the storage id. */
static void check_structure(const hgr_graph_t* graph) {
  for (uint32_t node_id = 0; node_id < graph->node_count; ++node_id) {
    uint32_t listed = 0;
    for (uint32_t i = 0; i < graph->arg_count; ++i) listed += graph->arg_nodes[i] == node_id;
    FUZZ_CHECK(listed == (graph->nodes[node_id].is_op ? 0u : 1u));
    const hgr__node_t* node = &graph->nodes[node_id];
    if (!node->is_op) continue;
    bool is_copy = !strcmp(node->func_name, "__copy"), is_nop = !strcmp(node->func_name, "__nop");
    if (!is_copy && !is_nop) continue;
    FUZZ_CHECK(node->input_count == 1 && node->num_outputs == 1);
    const hgr__entry_t* in = &graph->entries[hgr__graph_entry_id(graph, node->inputs[0])];
    const hgr__entry_t* out = &graph->entries[graph->node_row_ptr[node_id]];
    if (is_copy) FUZZ_CHECK(in->bytes == out->bytes);
    if (is_nop) FUZZ_CHECK(in->storage_slot == out->storage_slot);
  }
  FUZZ_CHECK(graph->node_row_ptr[graph->node_count] == graph->entry_count);
  check_storage_slots(graph);
  for (uint32_t a = 0; a < graph->entry_count; ++a) {
    if (!graph->has_device_index) {
      FUZZ_CHECK(graph->entries[a].device_key == -1);
      continue;
    }
    for (uint32_t b = a + 1; b < graph->entry_count && b < a + 64; ++b)
      if (graph->entries[a].storage_slot == graph->entries[b].storage_slot)
        FUZZ_CHECK(graph->entries[a].device_key == graph->entries[b].device_key);
  }
}

/* A graph that loaded, written as JSON (hgr_graph_write_json), loads back as the same
 * graph. */
static void check_round_trip(const hgr_graph_t* graph) {
  char* text = NULL;
  size_t length = 0;
  FILE* out = open_memstream(&text, &length);
  FUZZ_CHECK(out);
  hgr_status_t status = hgr_graph_write_json(graph, out);
  FUZZ_CHECK(fclose(out) == 0);
  if (!status) {
    hgr_graph_t* again = NULL;
    FUZZ_CHECK(hgr_graph_load_json(text, length, &again) == HGR_OK);
    char difference[256];
    FUZZ_CHECK(hgr__graph_same(graph, again, difference, sizeof(difference)));
    hgr_graph_release(again);
  } else {
    FUZZ_CHECK(hgr_status_code(status) == HGR_STATUS_RESOURCE_EXHAUSTED);
    fuzz_consume_status(status);
  }
  free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  hgr_graph_t* graph = (hgr_graph_t*)&graph; /* must be overwritten with NULL */
  hgr_status_t status = hgr_graph_load_json((const char*)data, size, &graph);
  if (status) {
    hgr_status_code_t code = hgr_status_code(status);
    FUZZ_CHECK(code == HGR_STATUS_INVALID_ARGUMENT || code == HGR_STATUS_RESOURCE_EXHAUSTED);
    FUZZ_CHECK(graph == NULL);
    fuzz_consume_status(status);
    return 0;
  }
  FUZZ_CHECK(graph);
  check_structure(graph);
  check_round_trip(graph);
  hgr_tensor_info_t info;
  size_t node_count = hgr_graph_node_count(graph);
  for (size_t i = 0; i < hgr_graph_input_count(graph); ++i) {
    FUZZ_CHECK(hgr_graph_input_info(graph, i, &info) == HGR_OK);
    check_info(&info);
    size_t index = SIZE_MAX;
    FUZZ_CHECK(hgr_graph_input_index(graph, info.name, &index) == HGR_OK);
    FUZZ_CHECK(index <= i);
  }
  fuzz_consume_status(hgr_graph_input_index(graph, "no such input \x01", &(size_t){0}));
  for (size_t i = 0; i < hgr_graph_output_count(graph); ++i) {
    FUZZ_CHECK(hgr_graph_output_info(graph, i, &info) == HGR_OK);
    check_info(&info);
  }
  FUZZ_CHECK(fuzz_consume_status(hgr_graph_input_info(graph, hgr_graph_input_count(graph), &info)));
  FUZZ_CHECK(fuzz_consume_status(hgr_graph_output_info(graph, hgr_graph_output_count(graph), &info)));
  size_t entries = 0;
  for (size_t node_id = 0; node_id < node_count; ++node_id) {
    hgr_node_info_t node;
    FUZZ_CHECK(hgr_graph_node_info(graph, node_id, &node) == HGR_OK);
    FUZZ_CHECK(node.name && node.output_count >= 1);
    for (uint32_t i = 0; i < node.input_count; ++i) {
      uint32_t producer, index;
      FUZZ_CHECK(hgr_graph_node_input(graph, node_id, i, &producer, &index) == HGR_OK);
      FUZZ_CHECK(producer < node_id); /* topological order */
    }
    for (uint32_t k = 0; k < node.output_count; ++k) {
      FUZZ_CHECK(hgr_graph_entry_info(graph, node_id, k, &info) == HGR_OK);
      check_info(&info);
    }
    FUZZ_CHECK(fuzz_consume_status(hgr_graph_entry_info(graph, node_id, node.output_count, &info)));
    entries += node.output_count;
    if (node.func_name) parse_attrs(graph, (uint32_t)node_id);
  }
  FUZZ_CHECK(entries == hgr_graph_entry_count(graph));
  FUZZ_CHECK(fuzz_consume_status(hgr_graph_node_info(graph, node_count, &(hgr_node_info_t){0})));
  /* A shared graph outlives its first release. */
  hgr_graph_t* again = hgr_graph_retain(graph);
  hgr_graph_release(graph);
  FUZZ_CHECK(hgr_graph_node_count(again) == node_count);
  hgr_graph_release(again);
  return 0;
}
