/* hgr — loading ONNX models.
 *
 * hgr_onnx_load_file / hgr_onnx_load_memory read an ONNX model (a ModelProto,
 * parsed with protobuf-c from ONNX's own onnx.proto) into an ordinary hgr graph
 * plus params, through the graph builder (hgr/builder.h): every ONNX node becomes
 * built-in ops (docs/onnx.md lists the ONNX ops and attrs hgr supports and what
 * each becomes). At load the model is simplified: every value's shape is inferred,
 * nodes whose inputs are all constants are folded on the host where hgr can
 * evaluate them (the Shape/Gather/Concat/Reshape chains exporters emit,
 * ConstantOfShape, Range, Cast, ...), Identity and Dropout disappear,
 * BatchNormalization folds into a preceding Conv, layer normalization and GELU
 * written out op by op become layer_norm and gelu (hgr/passes.h), a Conv's following
 * per-channel Add and Relu/Clip/LeakyRelu become its epilogue, and the remaining
 * chains of elementwise ops become fused_elementwise nodes (one generated kernel
 * each; hgr_onnx_options_set_fuse_elementwise).
 *
 * Graph inputs are the model's inputs that no initializer gives, in their order;
 * graph outputs are the model's outputs in their order. Compute is float32;
 * int64 values at run time are held as int32 (a graph input of int64 is cast on
 * entry, saturating; an int64 output is cast back on exit) and bool as one byte.
 * A symbolic or unknown dimension (dim_param, no value, a negative value as
 * PaddlePaddle writes, or 0 when a shape is given) takes its size from
 * hgr_onnx_options_set_input_shape. One load is one set of shapes: hgr/model.h loads
 * a model once and runs it at any shape.
 *
 * With options naming a placement (hgr_onnx_options_set_place), the loaded graph is
 * placed (hgr/place.h) and the placed graph is returned.
 *
 * Errors name what and where: INVALID_ARGUMENT for a model that is not valid ONNX
 * (truncated protobuf, a value used before it is defined, a name defined twice,
 * tensor data that does not match its shape, an external data path that leaves
 * the model's folder, ...), UNIMPLEMENTED for a valid model hgr cannot run (an
 * unknown op, another domain, an opset outside 1 to 22, an attr value hgr does not
 * support: naming the node, the op, the opset and what is unsupported, and listing
 * the supported ops), RESOURCE_EXHAUSTED for memory, NOT_FOUND for a missing file.
 *
 * Model files come from strangers, so a load is bounded before the work it does:
 * the file (2 GiB, protobuf's limit, from fstat or while reading a pipe), message
 * and graph nesting (HGR_ONNX_MAX_MESSAGE_DEPTH, HGR_ONNX_MAX_GRAPH_DEPTH, checked
 * on the bytes before they are parsed), every shape's element count and bytes
 * (2^63 - 1 for every partial product of its extents), each host tensor
 * (hgr_onnx_options_set_max_tensor_bytes) and all the host memory the loader holds
 * at once (hgr_onnx_options_set_max_loader_bytes); each limit refused is named in
 * the error (docs/onnx.md, "Hostile files"). */
#ifndef HGR_ONNX_H_
#define HGR_ONNX_H_

#include <stddef.h>
#include <stdint.h>

#include "hgr/device.h"
#include "hgr/export.h"
#include "hgr/graph.h"
#include "hgr/params.h"
#include "hgr/passes.h"
#include "hgr/place.h"
#include "hgr/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hgr_onnx_options_s hgr_onnx_options_t;

/* Options: no input shapes, no placement. Errors: RESOURCE_EXHAUSTED. */
HGR_API hgr_status_t hgr_onnx_options_create(hgr_onnx_options_t** out_options);
HGR_API void hgr_onnx_options_release(hgr_onnx_options_t* options);
/* The shape of graph input name (ndim values), used where the model leaves a
 * dimension symbolic or unknown, and checked against the dims it fixes. Setting a
 * name again replaces the shape. Errors: INVALID_ARGUMENT (empty name, a negative
 * extent, more than HGR_MAX_DIMS dims); RESOURCE_EXHAUSTED. */
HGR_API hgr_status_t hgr_onnx_options_set_input_shape(hgr_onnx_options_t* options, const char* name,
                                                      const int64_t* shape, int32_t ndim);
/* Fixes graph input name to a value at load: the model is specialized to it, as
 * if the input were an initializer. For inputs that decide shapes (Reshape's shape,
 * Slice's starts, Resize's sizes, TopK's k ...), which hgr needs at load. dtype
 * must be the input's element type (int64 inputs given as int64) and the shape
 * must agree with the dims the model fixes; data (bytes, compact row-major, host
 * byte order) is copied. Setting a name again replaces the value. Errors:
 * INVALID_ARGUMENT (empty name, a dtype hgr cannot hold, bytes that do not match
 * dtype and shape); RESOURCE_EXHAUSTED. */
HGR_API hgr_status_t hgr_onnx_options_set_input_value(hgr_onnx_options_t* options, const char* name, hgr_dtype_t dtype,
                                                      const int64_t* shape, int32_t ndim, const void* data,
                                                      size_t bytes);
/* The most bytes one tensor the loader holds on the host may have (a decoded
 * initializer, an external tensor, a folded constant such as ConstantOfShape's
 * output): a larger one is RESOURCE_EXHAUSTED naming it, before it is allocated.
 * Default HGR_ONNX_DEFAULT_MAX_TENSOR_BYTES (4 GiB); 0 restores the default. The
 * total is bounded by the loader budget below. */
#define HGR_ONNX_DEFAULT_MAX_TENSOR_BYTES (4ull << 30)
HGR_API void hgr_onnx_options_set_max_tensor_bytes(hgr_onnx_options_t* options, uint64_t bytes);
/* The loader budget: the most bytes the loader holds on the host at once, all
 * together: decoded initializers, external data, folded constants (ConstantOfShape's
 * output, a Gather on a constant ...) and the copies of constants the graph's
 * params keep. A load that would hold more is RESOURCE_EXHAUSTED naming the tensor
 * that crossed it, before that tensor is allocated, so a small file cannot make
 * the loader allocate without bound. Default (0): HGR_ONNX_LOADER_BYTES_PER_MODEL_BYTE
 * times the model's bytes (its protobuf, and its external data as they are read)
 * plus HGR_ONNX_LOADER_SLACK_BYTES (models whose weights are made by
 * ConstantOfShape at load, as the ONNX model-zoo test models, need that much), at
 * most HGR_ONNX_DEFAULT_MAX_LOADER_BYTES. hgr_onnx_report_t's loader_peak_bytes
 * says what a load held; `hgr ... --loader-budget SIZE` sets it. */
#define HGR_ONNX_LOADER_BYTES_PER_MODEL_BYTE 4ull
#define HGR_ONNX_LOADER_SLACK_BYTES (2ull << 30)
#define HGR_ONNX_DEFAULT_MAX_LOADER_BYTES (8ull << 30)
HGR_API void hgr_onnx_options_set_max_loader_bytes(hgr_onnx_options_t* options, uint64_t bytes);
/* How deep a model may nest protobuf messages (the ModelProto itself is depth 1),
 * and graphs (the main graph is depth 1; each If, Loop or Scan body one more).
 * Checked on the bytes before they are parsed, since the parser recurses per
 * level: deeper models are INVALID_ARGUMENT naming the limit (and, for graphs, the
 * node that holds the graph too deep). The importer, which recurses per graph too,
 * holds to the same graph depth. */
#define HGR_ONNX_MAX_MESSAGE_DEPTH 64
#define HGR_ONNX_MAX_GRAPH_DEPTH 16
/* The most nodes one load imports from subgraphs: If's branch taken, and every
 * iteration's copy of a Loop's or Scan's body, which are unrolled at load
 * (docs/onnx.md, "Control flow"). A Loop or Scan whose iterations times its body's
 * nodes would exceed it is RESOURCE_EXHAUSTED naming the node, both counts and the
 * limit, before any copy is made. */
#define HGR_ONNX_MAX_UNROLLED_NODES 100000
/* Places the loaded graph with hgr_place(instance, graph, place) before returning
 * it. Both are borrowed until the load returns; NULL place: no placement. */
HGR_API void hgr_onnx_options_set_place(hgr_onnx_options_t* options, hgr_instance_t* instance,
                                        const hgr_place_options_t* place);

/* Whether the load fuses chains of float32 elementwise graph nodes (Add, Mul, Clip,
 * Sigmoid, Div, ... as hgr ops, with their per-channel and scalar operands) into
 * fused_elementwise nodes, each one generated kernel (docs/onnx.md, "Elementwise
 * fusion"). On (nonzero) by default. */
HGR_API void hgr_onnx_options_set_fuse_elementwise(hgr_onnx_options_t* options, int enabled);
/* The graph passes the load runs after import (hgr/passes.h), copied, log
 * included (it is called during loads); NULL: hgr_passes_options_init's, all on.
 * Sets what hgr_onnx_options_set_fuse_elementwise sets too (options.elementwise). */
HGR_API void hgr_onnx_options_set_passes(hgr_onnx_options_t* options, const hgr_passes_options_t* passes);

/* What the load did, for `hgr check` and the logs. */
typedef struct hgr_onnx_report_t {
  int64_t ir_version;
  int64_t opset;             /* the default domain's opset */
  uint32_t onnx_nodes;       /* nodes in the model's graph, and in each copy of a subgraph imported */
  uint32_t folded;           /* ONNX nodes computed at load (constant folding, Constant) */
  uint32_t removed;          /* Identity, Dropout and nodes no output needs */
  uint32_t fused;            /* BatchNormalization, Add and activations fused into a Conv */
  uint32_t graph_nodes;      /* op nodes of the loaded graph (after fusion, before placement) */
  uint32_t elementwise_fused; /* elementwise graph nodes merged into fused_elementwise nodes */
  uint32_t elementwise_groups; /* the fused_elementwise nodes they became */
  hgr_passes_report_t passes;  /* what the graph passes did, per pattern (hgr_passes_report_counts) */
  uint64_t loader_peak_bytes; /* the most host bytes the load held at once (its budget's measure) */
} hgr_onnx_report_t;

/* Loads the model at path, read once (a FIFO works) and at most 2 GiB; external
 * data is read relative to path's folder, from regular files only. options and
 * out_report may be NULL. On success *out_graph and *out_params (the
 * constants, by name) belong to the caller. */
HGR_API hgr_status_t hgr_onnx_load_file(const char* path, const hgr_onnx_options_t* options, hgr_graph_t** out_graph,
                                        hgr_params_t** out_params, hgr_onnx_report_t* out_report);
/* Loads a model from memory (bytes are not retained). base_directory is the folder
 * external data is read relative to; NULL refuses a model with external data. */
HGR_API hgr_status_t hgr_onnx_load_memory(const void* bytes, size_t size, const char* base_directory,
                                          const hgr_onnx_options_t* options, hgr_graph_t** out_graph,
                                          hgr_params_t** out_params, hgr_onnx_report_t* out_report);

/* True when path names an ONNX model by its extension (".onnx", any case). */
HGR_API int hgr_onnx_is_model_path(const char* path);

/* Reads a serialized TensorProto (ONNX's test data format: input_0.pb, output_0.pb)
 * as an hgr tensor: *out_dtype, out_shape (HGR_MAX_DIMS values) and *out_ndim, and
 * *out_data (malloc'd, compact row-major, host byte order; free() it) of *out_bytes.
 * *out_name (malloc'd, may be empty; may be NULL to skip) gets the tensor's name.
 * Every numeric ONNX dtype; strings and complex numbers are UNIMPLEMENTED. */
HGR_API hgr_status_t hgr_onnx_read_tensor(const void* bytes, size_t size, hgr_dtype_t* out_dtype,
                                          int64_t* out_shape, int32_t* out_ndim, void** out_data, size_t* out_bytes,
                                          char** out_name);
/* hgr_onnx_read_tensor of the file at path, read once and at most 2 GiB (protobuf's
 * limit; RESOURCE_EXHAUSTED beyond, checked before reading a regular file and while
 * reading a pipe). Errors name the path. */
HGR_API hgr_status_t hgr_onnx_read_tensor_file(const char* path, hgr_dtype_t* out_dtype, int64_t* out_shape,
                                               int32_t* out_ndim, void** out_data, size_t* out_bytes,
                                               char** out_name);

#ifdef __cplusplus
}
#endif

#endif /* HGR_ONNX_H_ */
