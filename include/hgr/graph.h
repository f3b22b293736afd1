/* hgr — a loaded, validated graph.
 *
 * An hgr_graph_t is TVM graph-executor JSON parsed into an immutable structure and
 * validated (see ../shared/reference/tvm-graph-format.md): keys, node entries,
 * attrs columns indexed by entry id (node_row_ptr[nid] + k), dtypes, shapes, byte
 * sizes, topological order, and one device key per storage id. Op-specific checks
 * (does this func_name exist, does it accept these shapes) happen when an executor
 * is created, since they depend on the op registry.
 *
 * Thread safety: a graph is immutable once loaded and may be shared between threads
 * and executors; it is reference counted (hgr_graph_retain/release are atomic). */
#ifndef HGR_GRAPH_H_
#define HGR_GRAPH_H_

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hgr/export.h"
#include "hgr/status.h"
#include "hgr/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hgr_graph_s hgr_graph_t;

/* Parses and validates graph JSON held in memory (json need not be NUL-terminated;
 * length is its size in bytes). *out_graph is NULL on failure. Errors:
 * INVALID_ARGUMENT with a message that names the node id and name, the entry id or
 * the attrs column at fault; RESOURCE_EXHAUSTED. */
HGR_API hgr_status_t hgr_graph_load_json(const char* json, size_t length, hgr_graph_t** out_graph);

/* Reads the file at path and loads it as above. Errors also NOT_FOUND or
 * UNAVAILABLE (with errno text) when the file cannot be read; the path is named. */
HGR_API hgr_status_t hgr_graph_load_file(const char* path, hgr_graph_t** out_graph);

/* Reference counting; release(NULL) is a no-op. */
HGR_API hgr_graph_t* hgr_graph_retain(hgr_graph_t* graph);
HGR_API void hgr_graph_release(hgr_graph_t* graph);

HGR_API size_t hgr_graph_node_count(const hgr_graph_t* graph);
HGR_API size_t hgr_graph_entry_count(const hgr_graph_t* graph);
/* Graph inputs are the "null" nodes listed in arg_nodes (real inputs and weights). */
HGR_API size_t hgr_graph_input_count(const hgr_graph_t* graph);
HGR_API size_t hgr_graph_output_count(const hgr_graph_t* graph);

/* Input i: its name, dtype and shape (from its entry). Errors: OUT_OF_RANGE. */
HGR_API hgr_status_t hgr_graph_input_info(const hgr_graph_t* graph, size_t i,
                                          hgr_tensor_info_t* out_info);
/* Output i (heads[i]): name is "<node name>:<i>" as in TVM. Errors: OUT_OF_RANGE. */
HGR_API hgr_status_t hgr_graph_output_info(const hgr_graph_t* graph, size_t i,
                                           hgr_tensor_info_t* out_info);
/* Node node_id: name, func_name (NULL for an input or weight), inputs and outputs.
 * The strings live as long as the graph. Errors: OUT_OF_RANGE. */
typedef struct hgr_node_info_t {
  const char* name;
  const char* func_name;
  uint32_t input_count;
  uint32_t output_count;
} hgr_node_info_t;
HGR_API hgr_status_t hgr_graph_node_info(const hgr_graph_t* graph, size_t node_id, hgr_node_info_t* out_info);
/* Input i of node node_id is output *out_index of node *out_node. Errors: OUT_OF_RANGE. */
HGR_API hgr_status_t hgr_graph_node_input(const hgr_graph_t* graph, size_t node_id, uint32_t i,
                                          uint32_t* out_node, uint32_t* out_index);

/* Output `index` of node node_id (name: the node's). Errors: OUT_OF_RANGE. */
HGR_API hgr_status_t hgr_graph_entry_info(const hgr_graph_t* graph, size_t node_id, uint32_t index,
                                          hgr_tensor_info_t* out_info);

/* Index of the input called name. Errors: NOT_FOUND listing the input names. */
HGR_API hgr_status_t hgr_graph_input_index(const hgr_graph_t* graph, const char* name,
                                           size_t* out_index);

/* Device-key bindings the graph file records for itself: `hgr place` writes, in the
 * graph JSON's "metadata" (which TVM's loaders skip),
 *   "metadata": {"hgr": {"device_bindings": {"1": "pocl:0", "2": "rusticl:0"}}}
 * so that the placed graph runs where it was placed without flags; an executor uses
 * them when its options bind no key (executor.h). Loading refuses a malformed entry
 * and a binding of a key no entry of the graph has. Bindings are listed by key,
 * ascending; the count is 0 for a graph that records none. hgr_graph_binding
 * writes binding i's key and its spec (which lives as long as the graph). Errors:
 * OUT_OF_RANGE. */
HGR_API size_t hgr_graph_binding_count(const hgr_graph_t* graph);
HGR_API hgr_status_t hgr_graph_binding(const hgr_graph_t* graph, size_t i, int32_t* out_key,
                                       const char** out_spec);

/* Writes graph as TVM graph JSON to out: what hgr_graph_load_json reads back as the
 * same graph, and what TVM's own graph executor loads (node attrs as strings,
 * func_name/num_inputs/num_outputs/flatten_data on every tvm_op node, the columns
 * dltype, storage_id, shape and, when the graph has device keys, device_index). The
 * recorded device bindings go last, into "metadata", where TVM stops reading. One
 * node and one column per line. Nothing is written when memory runs out
 * (RESOURCE_EXHAUSTED); a failed write (checked with ferror after fflush) is
 * UNAVAILABLE with the errno text. The caller opens and closes out. */
HGR_API hgr_status_t hgr_graph_write_json(const hgr_graph_t* graph, FILE* out);

#ifdef __cplusplus
}
#endif

#endif /* HGR_GRAPH_H_ */
