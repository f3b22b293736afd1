/* The in-memory form of a loaded graph, shared by graph_json.c (parsing), graph.c
 * (validation and accessors) and the executor. Immutable after hgr_graph_load_*. */
#ifndef HGR_GRAPH_INTERNAL_H_
#define HGR_GRAPH_INTERNAL_H_

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hgr/allocator.h"
#include "hgr/graph.h"
#include "hgr/tensor.h"

/* A reference to output `index` of node `node_id`; entry id = node_row_ptr[node_id] + index. */
typedef struct hgr__entry_ref_t {
  uint32_t node_id;
  uint32_t index;
} hgr__entry_ref_t;

/* One extra string attribute of a tvm_op node (e.g. "hash", layout strings, op params). */
typedef struct hgr__attr_t {
  char* key;
  char* value;
} hgr__attr_t;

typedef struct hgr__node_t {
  char* name;
  bool is_op;              /* "tvm_op"; false for "null" (an input or weight) */
  char* func_name;         /* tvm_op only; "__nop" and "__copy" are the runtime's */
  uint32_t num_outputs;    /* 1 for null nodes */
  uint32_t declared_num_inputs; /* attrs.num_inputs (informational in TVM) */
  bool flatten_data;
  hgr__entry_ref_t* inputs;
  uint32_t input_count;
  hgr__attr_t* attrs;      /* every attrs key except the four standard ones */
  uint32_t attr_count;
} hgr__node_t;

/* Per entry (one output of one node). */
typedef struct hgr__entry_t {
  uint32_t node_id;        /* the node that produces it */
  uint32_t storage_id;     /* as the JSON gives it: any id up to 2^31 - 1, for messages */
  uint32_t storage_slot;   /* dense, 0 to storage_count - 1 (hgr__graph_validate): what
                              the executor indexes its storage pool with */
  int32_t device_key;      /* device_index column value; -1 when the column is absent */
  hgr_dtype_t dtype;
  int32_t ndim;
  int64_t shape[HGR_MAX_DIMS];
  uint64_t element_count;  /* product of shape; 1 for a scalar */
  uint64_t bytes;          /* element bytes x element_count, overflow-checked */
} hgr__entry_t;

struct hgr_graph_s {
  atomic_int refcount;
  hgr_allocator_t allocator; /* of everything the graph holds */
  hgr__node_t* nodes;
  uint32_t node_count;
  uint32_t* arg_nodes;     /* node ids of the inputs; input index = position */
  uint32_t arg_count;
  uint32_t* node_row_ptr;  /* node_count + 1 values */
  hgr__entry_ref_t* heads; /* outputs; output index = position */
  uint32_t head_count;
  char** head_names;       /* "<node name>:<position>" */
  hgr__entry_t* entries;   /* node_row_ptr[node_count] entries */
  uint32_t entry_count;
  uint32_t storage_count;  /* distinct storage ids = storage slots */
  uint32_t* storage_ids;   /* storage_count: the JSON's storage id of each slot, ascending */
  bool has_device_index;
  /* Device-key bindings the file recorded for itself (`hgr place` writes them into
   * "metadata": {"hgr": {"device_bindings": {"KEY": "SPEC", ...}}}, which TVM's
   * loader skips); keys ascending. The executor uses them when the caller binds
   * nothing. */
  int32_t* binding_keys;
  char** binding_specs;
  uint32_t binding_count;
};

static inline uint32_t hgr__graph_entry_id(const hgr_graph_t* graph, hgr__entry_ref_t ref) {
  return graph->node_row_ptr[ref.node_id] + ref.index;
}

/* The storage id the graph JSON gave for storage slot `slot` (< storage_count):
 * what every message names, so that a user finds it in the file. */
static inline uint32_t hgr__graph_storage_id(const hgr_graph_t* graph, uint32_t slot) {
  return graph->storage_ids[slot];
}

/* "[2, 3, 4]" for an entry's shape, into buffer (truncated to capacity); returns
 * buffer. */
const char* hgr__entry_shape(const hgr__entry_t* entry, char* buffer, size_t capacity);

/* Frees what a node owns (name, func_name, inputs, attrs; from allocator, its graph's)
 * and zeroes it. */
void hgr__graph_node_free(hgr_allocator_t allocator, hgr__node_t* node);

/* Value of a node's extra attr, or NULL when absent. */
const char* hgr__node_attr(const hgr__node_t* node, const char* key);

/* ---- loading, shared by graph_json.c and graph.c ------------------------------ */

/* Parses graph JSON into a new graph (refcount 1, its memory from allocator; cJSON's
 * own memory stays cJSON's) and checks what the JSON form itself requires: keys,
 * value types, node attrs, node_row_ptr against num_outputs, column tags and
 * lengths, per-entry values (dtype, ndim, storage id, scope). What relates nodes and
 * entries to each other is left to hgr__graph_validate. */
hgr_status_t hgr__graph_parse_json(hgr_allocator_t allocator, const char* json, size_t length,
                                   hgr_graph_t** out_graph);

/* Checks inputs, heads and arg_nodes against the nodes, shapes and byte sizes,
 * storage ids and their devices, __copy and __nop; fills element_count, bytes and
 * head_names, and maps storage ids to dense slots (storage_count, storage_ids,
 * entries[].storage_slot). */
hgr_status_t hgr__graph_validate(hgr_graph_t* graph);

/* Whether a and b are the same graph: the same nodes (names, ops, attrs, inputs),
 * inputs, outputs and entries (storage ids, device keys, dtypes, shapes). When not,
 * the first difference is written into difference ("node 7 'fc' differs (...)"). */
bool hgr__graph_same(const hgr_graph_t* a, const hgr_graph_t* b, char* difference, size_t capacity);

/* "node 3 'conv1'" and "entry 5 (node 3 'conv1', output 1)" for error messages,
 * written into buffer (names are shortened to fit); return buffer. Entry labels
 * need entries[].node_id. */
#define HGR__LABEL_CAPACITY 192
const char* hgr__graph_node_label(const hgr_graph_t* graph, uint32_t node_id, char* buffer,
                                  size_t capacity);
const char* hgr__graph_entry_label(const hgr_graph_t* graph, uint32_t entry_id, char* buffer,
                                   size_t capacity);

/* ---- building a graph in memory (graph_edit.c) ----------------------------------
 * The builder, placement and calibration construct graphs node by node instead of
 * parsing JSON. Nodes are appended in topological order; hgr__graph_edit_finish
 * then runs hgr__graph_validate, so an edited graph obeys every rule a loaded one
 * does. Until then only nodes, entries, node_row_ptr, arg_nodes and heads are
 * filled (enough for hgr__op_infer on the last node). */

/* A new, empty graph (refcount 1) whose memory comes from allocator. */
hgr_status_t hgr__graph_edit_new(hgr_allocator_t allocator, hgr_graph_t** out_graph);

/* The allocator of everything graph holds; what is made from a graph (a derived
 * graph, a placement, a plan) uses it too unless an instance gives its own. */
static inline hgr_allocator_t hgr__graph_allocator(const hgr_graph_t* graph) {
  return graph->allocator;
}
/* Appends a node. func_name NULL makes an input ("null" node, added to arg_nodes;
 * input_count and attr_count must be 0, output_count 1). inputs must refer to
 * existing nodes' outputs. Strings and arrays are copied. The node's output_count
 * entries take dtype, ndim, shape, storage_id and device_key from outputs[k] (other
 * fields are computed); outputs may be NULL (then entries are zeroed: float32
 * scalars, storage id 0, device key -1, to be filled in by the caller).
 * INVALID_ARGUMENT for a reference to a later node or output; RESOURCE_EXHAUSTED. */
hgr_status_t hgr__graph_edit_append(hgr_graph_t* graph, const char* name, const char* func_name,
                                    const hgr__entry_ref_t* inputs, uint32_t input_count, const hgr__attr_t* attrs,
                                    uint32_t attr_count, const hgr__entry_t* outputs, uint32_t output_count,
                                    uint32_t* out_node_id);
/* Removes the last node appended (and its entries, and its arg_nodes place when it
 * is an input), as if it had never been appended: the builder undoes a node whose
 * op inference failed. FAILED_PRECONDITION when the graph has no node or a head
 * refers to the last one. */
hgr_status_t hgr__graph_edit_remove_last(hgr_graph_t* graph);
/* Room for the inputs and outputs of any node of `like` when copying its nodes into
 * an edited graph: two arrays from like's allocator (the caller frees both with
 * hgr__graph_allocator(like)) as long as the most inputs and the most outputs a node
 * of like has. RESOURCE_EXHAUSTED. */
hgr_status_t hgr__graph_edit_scratch(const hgr_graph_t* like, hgr__entry_ref_t** out_inputs, hgr__entry_t** out_outputs);
/* Appends a head (graph output). */
hgr_status_t hgr__graph_edit_add_head(hgr_graph_t* graph, hgr__entry_ref_t head);
/* Records a device-key binding to write into the file's metadata (copied). */
hgr_status_t hgr__graph_edit_add_binding(hgr_graph_t* graph, int32_t key, const char* spec);
/* Orders the inputs (arg_nodes) like those of `like`, matched by node name, so
 * that a rebuilt graph keeps its source's input indices; inputs `like` lacks keep
 * their order after the others. Appending puts inputs in node order, which a TVM
 * graph's arg_nodes need not follow. RESOURCE_EXHAUSTED leaves the order as it was. */
hgr_status_t hgr__graph_edit_order_inputs(hgr_graph_t* graph, const hgr_graph_t* like);
/* Sets has_device_index (true when any entry's device_key >= 0; then every entry
 * must have one) and validates. On failure the graph is unchanged but unusable. */
hgr_status_t hgr__graph_edit_finish(hgr_graph_t* graph);

#endif /* HGR_GRAPH_INTERNAL_H_ */
