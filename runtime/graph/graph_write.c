/* hgr_graph_t -> graph JSON (TVM's graph-executor format), the inverse of
 * graph_json.c: what it writes loads back as the same graph (hgr__graph_same), in
 * hgr and in TVM v0.18's loaders (reference/tvm-graph-format.md, section 1.6).
 *
 * TVM's rules the writer keeps: node attrs are all strings; a tvm_op node carries
 * func_name, num_inputs, num_outputs and flatten_data, a null node no attrs (TVM
 * would require all four); the columns are dltype, storage_id, shape and, only when
 * the graph has device keys, device_index; "metadata" comes last, because the
 * loaders stop reading there, and holds hgr's recorded device bindings. One node,
 * one column per line, as in examples/, so that a placed graph can be read and
 * diffed. Strings go through cJSON, which escapes them. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cJSON's CMake package puts <prefix>/include on the path, its pkg-config file
 * <prefix>/include/cjson. */
#include "alloc.h"
#include "json.h"

#include "graph_internal.h"
#include "internal.h"

#define OUT_OF_MEMORY(what) HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for %s", what)

/* A string attr added to object; false when memory ran out. */
static bool add_string(cJSON* object, const char* key, const char* value) {
  return cJSON_AddStringToObject(object, key, value) != NULL;
}

static bool add_number_string(cJSON* object, const char* key, uint32_t value) {
  char text[16];
  snprintf(text, sizeof(text), "%" PRIu32, value);
  return add_string(object, key, text);
}

/* Node node_id as one compact JSON object (malloc'd by cJSON), or NULL when memory
 * ran out. */
static char* print_node(const hgr_graph_t* graph, uint32_t node_id) {
  const hgr__node_t* node = &graph->nodes[node_id];
  cJSON* object = cJSON_CreateObject();
  bool ok = object && add_string(object, "op", node->is_op ? "tvm_op" : "null") &&
            add_string(object, "name", node->name);
  /* A null node loaded with attrs (TVM allows them when all four standard keys are
   * there) keeps them; one built in memory has none. */
  if (ok && (node->is_op || node->func_name || node->attr_count)) {
    cJSON* attrs = cJSON_AddObjectToObject(object, "attrs");
    ok = attrs && add_string(attrs, "func_name", node->func_name ? node->func_name : "") &&
         add_number_string(attrs, "num_inputs", node->declared_num_inputs) &&
         add_number_string(attrs, "num_outputs", node->num_outputs) &&
         add_string(attrs, "flatten_data", node->flatten_data ? "1" : "0");
    for (uint32_t a = 0; ok && a < node->attr_count; ++a)
      ok = add_string(attrs, node->attrs[a].key, node->attrs[a].value);
  }
  cJSON* inputs = ok ? cJSON_AddArrayToObject(object, "inputs") : NULL;
  ok = ok && inputs;
  for (uint32_t i = 0; ok && i < node->input_count; ++i) {
    const double ref[3] = {node->inputs[i].node_id, node->inputs[i].index, 0};
    cJSON* item = cJSON_CreateDoubleArray(ref, 3);
    ok = item && cJSON_AddItemToArray(inputs, item);
    if (!ok) cJSON_Delete(item);
  }
  char* text = ok ? cJSON_PrintUnformatted(object) : NULL;
  cJSON_Delete(object);
  return text;
}

/* "metadata": {"hgr": {"device_bindings": {...}}} as compact JSON, or NULL when
 * memory ran out. */
static char* print_metadata(const hgr_graph_t* graph) {
  cJSON* metadata = cJSON_CreateObject();
  cJSON* ours = metadata ? cJSON_AddObjectToObject(metadata, "hgr") : NULL;
  cJSON* bindings = ours ? cJSON_AddObjectToObject(ours, "device_bindings") : NULL;
  bool ok = bindings != NULL;
  for (uint32_t b = 0; ok && b < graph->binding_count; ++b) {
    char key[16];
    snprintf(key, sizeof(key), "%" PRId32, graph->binding_keys[b]);
    ok = add_string(bindings, key, graph->binding_specs[b]);
  }
  char* text = ok ? cJSON_PrintUnformatted(metadata) : NULL;
  cJSON_Delete(metadata);
  return text;
}

static void write_u32_list(FILE* out, const uint32_t* values, uint32_t count) {
  fputc('[', out);
  for (uint32_t i = 0; i < count; ++i) fprintf(out, "%s%" PRIu32, i ? ", " : "", values[i]);
  fputc(']', out);
}

static void write_columns(const hgr_graph_t* graph, FILE* out) {
  fputs("  \"attrs\": {\n    \"dltype\": [\"list_str\", [", out);
  for (uint32_t e = 0; e < graph->entry_count; ++e) {
    char dtype[32];
    fprintf(out, "%s\"%s\"", e ? ", " : "", hgr_dtype_format(graph->entries[e].dtype, dtype, sizeof(dtype)));
  }
  fputs("]],\n    \"storage_id\": [\"list_int\", [", out);
  for (uint32_t e = 0; e < graph->entry_count; ++e)
    fprintf(out, "%s%" PRIu32, e ? ", " : "", graph->entries[e].storage_id);
  fputs("]],\n    \"shape\": [\"list_shape\", [", out);
  for (uint32_t e = 0; e < graph->entry_count; ++e) {
    const hgr__entry_t* entry = &graph->entries[e];
    fputs(e ? ", [" : "[", out);
    for (int32_t d = 0; d < entry->ndim; ++d) fprintf(out, "%s%" PRId64, d ? ", " : "", entry->shape[d]);
    fputc(']', out);
  }
  fputs("]]", out);
  if (graph->has_device_index) {
    fputs(",\n    \"device_index\": [\"list_int\", [", out);
    for (uint32_t e = 0; e < graph->entry_count; ++e)
      fprintf(out, "%s%" PRId32, e ? ", " : "", graph->entries[e].device_key);
    fputs("]]", out);
  }
  fputs("\n  }", out);
}

hgr_status_t hgr_graph_write_json(const hgr_graph_t* graph, FILE* out) {
  if (!graph || !out) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "hgr_graph_write_json needs a graph and a file");
  /* Everything that can run out of memory first, so that a failure writes nothing. */
  char** nodes = hgr__calloc(graph->allocator, (size_t)graph->node_count + 1, sizeof(*nodes));
  char* metadata = NULL;
  hgr_status_t status = nodes ? HGR_OK : OUT_OF_MEMORY("the nodes' JSON");
  for (uint32_t n = 0; n < graph->node_count && !status; ++n)
    if (!(nodes[n] = print_node(graph, n))) status = OUT_OF_MEMORY("the nodes' JSON");
  if (!status && graph->binding_count && !(metadata = print_metadata(graph)))
    status = OUT_OF_MEMORY("the metadata's JSON");
  if (status) goto cleanup;

  fputs("{\n  \"nodes\": [\n", out);
  for (uint32_t n = 0; n < graph->node_count; ++n)
    fprintf(out, "    %s%s\n", nodes[n], n + 1 < graph->node_count ? "," : "");
  fputs("  ],\n  \"arg_nodes\": ", out);
  write_u32_list(out, graph->arg_nodes, graph->arg_count);
  fputs(",\n  \"heads\": [", out);
  for (uint32_t h = 0; h < graph->head_count; ++h)
    fprintf(out, "%s[%" PRIu32 ", %" PRIu32 ", 0]", h ? ", " : "", graph->heads[h].node_id, graph->heads[h].index);
  fputs("],\n", out);
  write_columns(graph, out);
  fputs(",\n  \"node_row_ptr\": ", out);
  write_u32_list(out, graph->node_row_ptr, graph->node_count + 1);
  if (metadata) fprintf(out, ",\n  \"metadata\": %s", metadata);
  fputs("\n}\n", out);
  if (fflush(out) != 0 || ferror(out))
    status = HGR_STATUS(HGR_STATUS_UNAVAILABLE, "writing graph JSON failed: %s", strerror(errno));

cleanup:
  for (uint32_t n = 0; nodes && n < graph->node_count; ++n) cJSON_free(nodes[n]);
  hgr__free(graph->allocator, nodes);
  cJSON_free(metadata);
  return status;
}
