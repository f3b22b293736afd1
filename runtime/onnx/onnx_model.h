/* An ONNX model parsed once and imported at any input shape (onnx_load.c): what the
 * model object (runtime/model/) builds on. hgr_onnx_load_* is a parse, one import
 * and a free.
 *
 * The parse checks the bytes' nesting, unpacks the ModelProto and decodes every
 * initializer (external data included) once, under the loader's limits
 * (hgr_onnx_options_t's tensor and loader bytes). An import specializes the graph to
 * the input shapes and input values in its options: it folds, imports and fuses as
 * hgr_onnx_load_* does, borrowing the decoded initializers, and says which graph
 * inputs decide shapes: inputs whose values some node needed at load (a Reshape's
 * shape, a Slice's starts ...), so that the caller can import again with their
 * values. */
#ifndef HGR_ONNX_MODEL_H_
#define HGR_ONNX_MODEL_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "file.h"
#include "hgr/onnx.h"

typedef struct hgr__onnx_model_s hgr__onnx_model_t;

/* Parses bytes (not retained) into a model whose memory, and its imports' (the
 * builder, host tensors, the graph and params made), comes from allocator;
 * base_directory is where external data is read (copied; NULL refuses external
 * data). options gives the limits (may be NULL). INVALID_ARGUMENT / UNIMPLEMENTED /
 * RESOURCE_EXHAUSTED as hgr_onnx_load_memory. */
hgr_status_t hgr__onnx_model_parse(hgr_allocator_t allocator, const void* bytes, size_t size,
                                   const char* base_directory, const hgr_onnx_options_t* options,
                                   hgr__onnx_model_t** out_model);
void hgr__onnx_model_free(hgr__onnx_model_t* model);
/* The bytes of the model file at path (mapped, or read once where it is not a
 * regular file; at most 2 GiB: protobuf's limit), released with hgr__file_unmap, and
 * the folder its external data is read from, from allocator (the caller frees it
 * with it). Errors from the read name the path; RESOURCE_EXHAUSTED. */
hgr_status_t hgr__onnx_model_read_file(hgr_allocator_t allocator, const char* path, hgr__file_bytes_t* out_bytes,
                                       char** out_folder);

/* The host bytes the parsed model holds (its decoded initializers). */
uint64_t hgr__onnx_model_held_bytes(const hgr__onnx_model_t* model);

/* A graph input or output as the model declares it. ndim -1: the model gives no
 * shape. dims[d] -1: symbolic or unknown (dim_param, no value, a negative value, or
 * 0 on an input, which exporters write for unknown); dim_names[d]: the dim_param,
 * or NULL. Strings are borrowed from the model. dtype: the element type at the
 * graph's edge (float32, int32, int64, bool); zeroed for a type hgr does not take
 * there, which type_name names (NULL: not a tensor with an element type). */
typedef struct hgr__onnx_io_t {
  const char* name;
  hgr_dtype_t dtype;
  const char* type_name;
  int32_t ndim;
  int64_t dims[HGR_MAX_DIMS];
  const char* dim_names[HGR_MAX_DIMS];
} hgr__onnx_io_t;

/* The graph inputs no initializer gives, in order; the graph outputs, in order. */
size_t hgr__onnx_model_input_count(const hgr__onnx_model_t* model);
size_t hgr__onnx_model_output_count(const hgr__onnx_model_t* model);
/* INVALID_ARGUMENT for an index out of range, or a declared shape of more than
 * HGR_MAX_DIMS dims. */
hgr_status_t hgr__onnx_model_input(const hgr__onnx_model_t* model, size_t index, hgr__onnx_io_t* out_io);
hgr_status_t hgr__onnx_model_output(const hgr__onnx_model_t* model, size_t index, hgr__onnx_io_t* out_io);

/* Checks, without shapes, what can be told before a specialization: the default
 * domain's opset, and that hgr has an op for every node the outputs need
 * (UNIMPLEMENTED naming the node, as an import would). */
hgr_status_t hgr__onnx_model_check_ops(const hgr__onnx_model_t* model);

/* Imports the model at the shapes and values options gives (its input shapes and
 * values; fusion on or off), as hgr_onnx_load_memory does, without placing it.
 * out_deciding (may be NULL; hgr__onnx_model_input_count entries) is set true for
 * each graph input a node needed the value of, also when the import fails for that
 * reason (UNIMPLEMENTED "must be known at load"). The model keeps the folds whose
 * inputs depend on no graph input (weights computed at load), which later imports
 * borrow instead of folding again: an import changes the model (thread-compatible). */
hgr_status_t hgr__onnx_model_import(hgr__onnx_model_t* model, const hgr_onnx_options_t* options,
                                    hgr_graph_t** out_graph, hgr_params_t** out_params, hgr_onnx_report_t* out_report,
                                    bool* out_deciding);

/* ---- stages: decisions at run time (onnx_stage.c; docs/onnx.md, "Decisions at run time") ----
 *
 * A node that needs at load a value the model computes from its data (an If's
 * condition, a TopK's k, a Reshape's shape), or whose output extents follow from
 * its data (NonZero, Compress, Unique, NonMaxSuppression), ends a stage: the
 * import stops there, and the stage's graph computes what the rest needs. Its
 * outputs are, in order: the carried values (every value of the model's graph
 * computed so far that a node not imported yet reads, or a graph output), the
 * decision (the value needed, or the data-dependent op's count), then the op's
 * payloads (its outputs at their capacity, the actual values first). The caller
 * runs the stage, reads the decision on the host and imports again with it: that
 * import goes through the same nodes, deciding what earlier stages decided, and
 * starts its graph where the last stage ended, its inputs the carried values then
 * the payloads at their actual shapes (the same order as the stage's outputs).
 * A decision inside a subgraph, or one taken from a few small graph inputs (which
 * the model object specializes on instead), does not cut. */
typedef struct hgr__onnx_decision_t {
  hgr_dtype_t dtype; /* as the stage's output holds it (int64 values as int32) */
  int32_t ndim;
  int64_t shape[HGR_MAX_DIMS];
  const void* data;
  size_t bytes;
} hgr__onnx_decision_t;

typedef struct hgr__onnx_stage_t {
  /* In: the decisions of the stages before, in the order they were taken (none for
   * the first stage), and where the last of them ended. */
  const hgr__onnx_decision_t* decisions;
  size_t decision_count;
  uint32_t resume;   /* the node the last stage ended at */
  bool resume_after; /* that node ran in the last stage (a data-dependent op) */
  size_t resume_asked; /* decisions taken before that node */
  bool resume_in_loop; /* it ended inside that node, a Loop, after an iteration */
  /* Out: whether this import ended a stage (else its graph is the rest of the model). */
  bool cut;
  uint32_t at;       /* the node it ended at */
  bool after;        /* the node ran in this stage: its payloads follow the decision */
  size_t at_asked;   /* decisions taken before that node */
  bool in_loop;      /* inside that node, a Loop, on an iteration's condition: the Loop's values carried too */
  size_t carried;    /* outputs [0, carried); the decision is output `carried` */
  size_t payloads;
  char label[160];   /* the node, for messages: "node 7 'cond' (If, opset 13)" */
} hgr__onnx_stage_t;

/* hgr__onnx_model_import as one stage of the model (stage in and out, above). */
hgr_status_t hgr__onnx_model_import_stage(hgr__onnx_model_t* model, const hgr_onnx_options_t* options,
                                          hgr__onnx_stage_t* stage, hgr_graph_t** out_graph,
                                          hgr_params_t** out_params, hgr_onnx_report_t* out_report,
                                          bool* out_deciding);

/* A copy of options (NULL: defaults) made with allocator, its values too, to which a
 * specialization adds its shapes and values (made with allocator in turn).
 * RESOURCE_EXHAUSTED. */
hgr_status_t hgr__onnx_options_clone(hgr_allocator_t allocator, const hgr_onnx_options_t* options,
                                     hgr_onnx_options_t** out_copy);
/* Whether options fixes input name to a value (hgr_onnx_options_set_input_value). */
bool hgr__onnx_options_fixes(const hgr_onnx_options_t* options, const char* name);

#endif /* HGR_ONNX_MODEL_H_ */
