/* The example programs' graph-JSON writer (example_graph.h). */
#include "example_graph.h"

#include <stdio.h>
#include <stdlib.h>

int64_t example_element_count(const example_node_t* node) {
  int64_t count = 1;
  for (int d = 0; d < node->ndim; ++d) count *= node->shape[d];
  return count;
}

bool example_write_graph(const example_node_t* nodes, int node_count, const int* heads, int head_count,
                         const char* path) {
  FILE* out = fopen(path, "w");
  if (!out) {
    perror(path);
    return false;
  }
  fprintf(out, "{\n  \"nodes\": [\n");
  for (int i = 0; i < node_count; ++i) {
    const example_node_t* n = &nodes[i];
    const char* comma = i + 1 < node_count ? "," : "";
    if (!n->func_name) {
      fprintf(out, "    {\"op\": \"null\", \"name\": \"%s\", \"inputs\": []}%s\n", n->name, comma);
      continue;
    }
    fprintf(out,
            "    {\"op\": \"tvm_op\", \"name\": \"%s\", \"attrs\": {\"func_name\": \"%s\", \"num_inputs\": \"%d\", "
            "\"num_outputs\": \"1\", \"flatten_data\": \"0\"%s%s}, \"inputs\": [",
            n->name, n->func_name, n->input_count, n->attrs[0] ? ", " : "", n->attrs);
    for (int k = 0; k < n->input_count; ++k) fprintf(out, "%s[%d, 0, 0]", k ? ", " : "", n->inputs[k]);
    fprintf(out, "]}%s\n", comma);
  }
  fprintf(out, "  ],\n  \"arg_nodes\": [");
  for (int i = 0, first = 1; i < node_count; ++i)
    if (!nodes[i].func_name) {
      fprintf(out, "%s%d", first ? "" : ", ", i);
      first = 0;
    }
  fprintf(out, "],\n  \"node_row_ptr\": [");
  for (int i = 0; i <= node_count; ++i) fprintf(out, "%s%d", i ? ", " : "", i);
  fprintf(out, "],\n  \"heads\": [");
  for (int h = 0; h < head_count; ++h) fprintf(out, "%s[%d, 0, 0]", h ? ", " : "", heads[h]);
  fprintf(out, "],\n  \"attrs\": {\n    \"storage_id\": [\"list_int\", [");
  for (int i = 0; i < node_count; ++i) fprintf(out, "%s%d", i ? ", " : "", nodes[i].storage_id);
  fprintf(out, "]],\n    \"device_index\": [\"list_int\", [");
  for (int i = 0; i < node_count; ++i) fprintf(out, "%s%d", i ? ", " : "", nodes[i].key);
  fprintf(out, "]],\n    \"dltype\": [\"list_str\", [");
  for (int i = 0; i < node_count; ++i) fprintf(out, "%s\"float32\"", i ? ", " : "");
  fprintf(out, "]],\n    \"shape\": [\"list_shape\", [");
  for (int i = 0; i < node_count; ++i) {
    fprintf(out, "%s[", i ? ", " : "");
    for (int d = 0; d < nodes[i].ndim; ++d) fprintf(out, "%s%lld", d ? ", " : "", (long long)nodes[i].shape[d]);
    fprintf(out, "]");
  }
  fprintf(out, "]]\n  }\n}\n");
  bool ok = !ferror(out);
  if (fclose(out) != 0) ok = false;
  if (!ok) fprintf(stderr, "%s: write failed\n", path);
  return ok;
}

bool example_report(hgr_status_t status) {
  if (!status) return true;
  char* text = hgr_status_to_string(status);
  fprintf(stderr, "hgr_make_examples: %s\n", text ? text : "out of memory");
  free(text);
  hgr_status_free(status);
  return false;
}
