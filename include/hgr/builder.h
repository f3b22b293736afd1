/* hgr — building a graph in C, without TVM.
 *
 * A builder makes an hgr_graph_t node by node: graph inputs (name, dtype, shape),
 * constants (which become params), op nodes, and the values marked as outputs. An
 * op node names an op of the registry (docs/ops.md) or of the kernel library the
 * builder was created with, takes earlier values as inputs, and takes attrs set
 * through typed setters on an hgr_attrs_t. The op's own shape inference (the same
 * code that checks a node when an executor plans it) gives the node's output dtypes
 * and shapes at once, so a bad op, attr, dtype or shape fails at the add call,
 * naming the node, the op and the input or attr at fault, and the builder stays
 * usable (the node is not added). A value is output `index` of node `node`; it may
 * be used by any number of later nodes. Nodes refer only to values that exist, so a
 * graph with a cycle cannot be built.
 *
 * hgr_builder_finish returns an ordinary graph: every entry has its own storage id,
 * there is no device_index column (placement, hgr/place.h, assigns devices and
 * plans storage), and it runs on an executor as is (on one device) or after
 * hgr_place. hgr_graph_write_json writes it as TVM graph JSON.
 *
 *   hgr_builder_t* b;  hgr_builder_create(NULL, &b);
 *   hgr_value_t x, w, y;
 *   hgr_builder_add_input(b, "x", f32, (int64_t[]){1, 64}, 2, &x);
 *   hgr_builder_add_constant(b, "w", f32, (int64_t[]){10, 64}, 2, data, bytes, &w);
 *   hgr_builder_add_op(b, "fc", "dense", (hgr_value_t[]){x, w}, 2, NULL, 0, &y);
 *   hgr_builder_mark_output(b, y);
 *   hgr_builder_finish(b, &graph, &params);  hgr_builder_release(b);
 *
 * Thread safety: a builder and an attrs object are thread-compatible (one thread at
 * a time); distinct builders are independent. */
#ifndef HGR_BUILDER_H_
#define HGR_BUILDER_H_

#include <stddef.h>
#include <stdint.h>

#include "hgr/export.h"
#include "hgr/graph.h"
#include "hgr/kernels.h"
#include "hgr/params.h"
#include "hgr/status.h"
#include "hgr/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- attrs --------------------------------------------------------------------- */

/* A node's attrs: key -> value, kept as the strings TVM's graph JSON holds ("3",
 * "[1, 2]", "0.5"). Setting a key again replaces its value; the order of first
 * setting is the order in the graph. */
typedef struct hgr_attrs_s hgr_attrs_t;

HGR_API hgr_status_t hgr_attrs_create(hgr_attrs_t** out_attrs);
HGR_API void hgr_attrs_release(hgr_attrs_t* attrs);

/* The setters copy key and value. key must be non-empty and not one of the
 * attributes every node has (func_name, num_inputs, num_outputs, flatten_data);
 * whether the op knows it is checked when the node is added. Values are written:
 * an int as "3", a float with 9 significant digits ("0.5", "1e-05"; round-trips a
 * float32; "inf" and "-inf" allowed, NaN is not), a string as is, lists as "[1, 2]"
 * and "[0.5, 1]" (n may be 0: "[]"). Errors: INVALID_ARGUMENT naming the key;
 * RESOURCE_EXHAUSTED. */
HGR_API hgr_status_t hgr_attrs_set_int(hgr_attrs_t* attrs, const char* key, int64_t value);
HGR_API hgr_status_t hgr_attrs_set_float(hgr_attrs_t* attrs, const char* key, double value);
HGR_API hgr_status_t hgr_attrs_set_string(hgr_attrs_t* attrs, const char* key, const char* value);
HGR_API hgr_status_t hgr_attrs_set_ints(hgr_attrs_t* attrs, const char* key, const int64_t* values, size_t count);
HGR_API hgr_status_t hgr_attrs_set_floats(hgr_attrs_t* attrs, const char* key, const double* values,
                                          size_t count);

/* How many attrs are set, and attr i's key and value string (borrowed, valid until
 * the attrs change or are released). Errors: OUT_OF_RANGE. */
HGR_API size_t hgr_attrs_count(const hgr_attrs_t* attrs);
HGR_API hgr_status_t hgr_attrs_get(const hgr_attrs_t* attrs, size_t i, const char** out_key,
                                   const char** out_value);

/* ---- the builder --------------------------------------------------------------- */

typedef struct hgr_builder_s hgr_builder_t;

/* Output `index` of node `node` of the graph being built. */
typedef struct hgr_value_t {
  uint32_t node;
  uint32_t index;
} hgr_value_t;

/* Creates an empty builder. kernels (may be NULL) adds the ops of a kernel library
 * (kernels.h) to the built-in ones; it is retained until the builder is released.
 * Errors: RESOURCE_EXHAUSTED. */
HGR_API hgr_status_t hgr_builder_create(hgr_kernel_library_t* kernels, hgr_builder_t** out_builder);
/* Releases the builder and the graph it has not handed out; NULL is a no-op. */
HGR_API void hgr_builder_release(hgr_builder_t* builder);

/* Adds a graph input called name, of dtype and shape (ndim values; shape may be
 * NULL when ndim is 0), and writes its value to *out_value (may be NULL). Names are
 * unique among all nodes. Errors: INVALID_ARGUMENT for an empty or taken name
 * (naming the node that has it), a dtype hgr cannot hold, more than HGR_MAX_DIMS
 * dimensions, a negative extent or a byte size beyond 64 bits;
 * FAILED_PRECONDITION after hgr_builder_finish. */
HGR_API hgr_status_t hgr_builder_add_input(hgr_builder_t* builder, const char* name, hgr_dtype_t dtype,
                                           const int64_t* shape, int32_t ndim, hgr_value_t* out_value);

/* Adds a constant: an input as above whose value, `bytes` bytes of compact
 * row-major data, is copied into the params hgr_builder_finish returns (under
 * name). Errors as hgr_builder_add_input's, and INVALID_ARGUMENT when bytes does
 * not match dtype and shape or the dtype has lanes (the params format cannot hold
 * them). */
HGR_API hgr_status_t hgr_builder_add_constant(hgr_builder_t* builder, const char* name, hgr_dtype_t dtype,
                                              const int64_t* shape, int32_t ndim, const void* data, size_t bytes,
                                              hgr_value_t* out_value);

/* Adds a node running op on inputs (input_count earlier values) with attrs (may be
 * NULL; copied). name may be NULL for "<op>_<node id>". output_count is the
 * node's number of outputs, 0 for the op's minimum. The outputs' dtypes and shapes
 * come from the op's inference; out_outputs (may be NULL) receives output_count
 * values (the op's minimum when output_count is 0; size it for that). On failure
 * the node is not added. Errors: INVALID_ARGUMENT naming the node and the op, and:
 * an input that refers to a node that does not exist yet or to an output its node
 * does not have; a taken name (naming the node that has it); an unknown op (listing
 * the known ones), `__copy` or `__nop` (placement inserts those); a wrong number of
 * inputs or outputs; an attr the op does not know or whose value it refuses; an
 * input dtype or shape the op refuses (naming the input). FAILED_PRECONDITION after
 * hgr_builder_finish. */
HGR_API hgr_status_t hgr_builder_add_op(hgr_builder_t* builder, const char* name, const char* op,
                                        const hgr_value_t* inputs, uint32_t input_count, const hgr_attrs_t* attrs,
                                        uint32_t output_count, hgr_value_t* out_outputs);

/* The name (the node's; borrowed, valid while the builder lives), dtype, shape
 * (borrowed likewise) and byte size of a value. Errors: INVALID_ARGUMENT for a
 * value that does not exist. */
HGR_API hgr_status_t hgr_builder_value_info(const hgr_builder_t* builder, hgr_value_t value,
                                            hgr_tensor_info_t* out_info);

/* Marks value as the graph's next output (output i is the i-th marked; a value may
 * be marked twice). Errors: INVALID_ARGUMENT for a value that does not exist;
 * FAILED_PRECONDITION after hgr_builder_finish. */
HGR_API hgr_status_t hgr_builder_mark_output(hgr_builder_t* builder, hgr_value_t value);

/* Finishes the graph: every entry gets its own storage id, and the graph is
 * validated as a loaded one would be. *out_graph receives it (the caller owns it)
 * and *out_params (may be NULL: then the constants' values are dropped) a params
 * object holding every constant, empty when there are none. Afterwards the builder
 * only answers hgr_builder_value_info and can be released. Errors:
 * INVALID_ARGUMENT when no output is marked (the builder stays usable);
 * FAILED_PRECONDITION when called twice; RESOURCE_EXHAUSTED. */
HGR_API hgr_status_t hgr_builder_finish(hgr_builder_t* builder, hgr_graph_t** out_graph,
                                        hgr_params_t** out_params);

#ifdef __cplusplus
}
#endif

#endif /* HGR_BUILDER_H_ */
