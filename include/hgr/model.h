/* hgr — models: load once, run at every input shape the model allows.
 *
 * A model is created from an ONNX model (a file or bytes) or from a graph and its
 * params (a TVM graph, a graph from the builder). It lists its inputs and outputs
 * as the model declares them, symbolic dims included ("batch", "N"; unknown dims
 * have no name), and runs inputs of any shape the model allows: the outputs have
 * the shapes that follow.
 *
 * The stages (docs/architecture.md): the ONNX model is parsed once at creation
 * (its initializers decoded once); each new combination of input shapes, and of
 * the values of inputs that decide shapes, is a specialization: the model is
 * imported at those shapes (constant folding, fusion passes), placed (options.place),
 * planned and bound to an executor. Inputs that decide shapes (a Reshape's shape, a
 * Slice's starts, Resize's sizes, TopK's k, Expand's shape ...) are found at the
 * first specialization that needs them, and their values are part of the key from
 * then on (hgr_model_io_t.decides_shapes).
 *
 * Specializations are kept per model, keyed by input shapes and those values,
 * bounded by count and by the device bytes of their activations, and evicted least
 * recently used; a specialization still held (hgr_specialization_t, or a run not
 * released) is never freed by eviction. A model's weights are uploaded once: a new
 * specialization borrows, from one that holds them, the device buffers of its params
 * equal to the first specialization's (hgr_executor_options_t.share_param_names),
 * and takes the programs earlier ones built from the model's hgr_program_pool_t.
 *
 * Errors name the input, the dim and both values: a rank or a fixed dim that
 * differs, two dims that share a name but differ, a dtype that is not the input's
 * (INVALID_ARGUMENT).
 *
 * Thread safety: a model is thread-compatible (one call at a time, as an executor),
 * and its specializations' executors and runs count as calls on it. */
#ifndef HGR_MODEL_H_
#define HGR_MODEL_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hgr/device.h"
#include "hgr/executor.h"
#include "hgr/export.h"
#include "hgr/fence.h"
#include "hgr/graph.h"
#include "hgr/onnx.h"
#include "hgr/params.h"
#include "hgr/place.h"
#include "hgr/profile.h"
#include "hgr/status.h"
#include "hgr/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hgr_model_s hgr_model_t;
typedef struct hgr_specialization_s hgr_specialization_t;
typedef struct hgr_model_run_s hgr_model_run_t;

#define HGR_MODEL_DEFAULT_MAX_SPECIALIZATIONS 64
#define HGR_MODEL_DEFAULT_MAX_DEVICE_BYTES (2ull << 30)

typedef struct hgr_model_options_t {
  /* Options of every specialization's executor (bindings, profiling, program
   * cache, warm-up ...). params and share_params_from are the model's own:
   * leave them NULL; program_pool is the model's own too (any given is not used). */
  hgr_executor_options_t executor;
  /* Places every specialization with hgr_place (borrowed for the model's life);
   * NULL: no placement (the graph's device keys bind as the executor's options say). */
  const hgr_place_options_t* place;
  /* ONNX: the loader's limits, fusion and inputs fixed to values (copied at
   * creation); NULL: the defaults. Input shapes set here are ignored: the shapes
   * come from each run. */
  const hgr_onnx_options_t* onnx;
  /* The most specializations kept (0: HGR_MODEL_DEFAULT_MAX_SPECIALIZATIONS) and
   * the most device bytes their activations may take together, weights not counted
   * (0: HGR_MODEL_DEFAULT_MAX_DEVICE_BYTES). The least recently used go first; the
   * one in use stays even when it alone is larger. */
  uint32_t max_specializations;
  uint64_t max_device_bytes;
} hgr_model_options_t;

/* Defaults: executor options from hgr_executor_options_init, no placement. */
HGR_API void hgr_model_options_init(hgr_model_options_t* options);

/* An ONNX model from a file (read once, at most 2 GiB, external data beside it) or
 * from memory (not retained; base_directory as hgr_onnx_load_memory). instance is
 * borrowed for the model's life (NULL: the model only makes graphs, hgr_model_graph);
 * options may be NULL. Errors as hgr_onnx_load_*:
 * the model is parsed and its initializers decoded here; ops are imported at the
 * first specialization. */
HGR_API hgr_status_t hgr_model_create_onnx_file(hgr_instance_t* instance, const char* path,
                                                const hgr_model_options_t* options, hgr_model_t** out_model);
HGR_API hgr_status_t hgr_model_create_onnx_memory(hgr_instance_t* instance, const void* bytes, size_t size,
                                                  const char* base_directory, const hgr_model_options_t* options,
                                                  hgr_model_t** out_model);
/* A graph of fixed shapes (a TVM graph, a builder graph; retained) with its params
 * (copied; may be NULL): inputs named in params are weights, the others the model's
 * inputs, which run at the graph's shapes only. */
HGR_API hgr_status_t hgr_model_create_graph(hgr_instance_t* instance, hgr_graph_t* graph, const hgr_params_t* params,
                                            const hgr_model_options_t* options, hgr_model_t** out_model);
/* Releases the model; specializations and runs still held keep what they need. */
HGR_API void hgr_model_release(hgr_model_t* model);

/* An input or output as the model declares it. ndim -1: no shape declared.
 * dims[d] -1: symbolic or unknown, dim_names[d] its name (NULL: unknown).
 * decides_shapes: the input's values decide shapes (known after a specialization
 * needed them). Strings live as long as the model. */
typedef struct hgr_model_io_t {
  const char* name;
  hgr_dtype_t dtype;
  int32_t ndim;
  int64_t dims[HGR_MAX_DIMS];
  const char* dim_names[HGR_MAX_DIMS];
  bool decides_shapes;
} hgr_model_io_t;

HGR_API size_t hgr_model_input_count(const hgr_model_t* model);
HGR_API size_t hgr_model_output_count(const hgr_model_t* model);
/* Errors: OUT_OF_RANGE. */
HGR_API hgr_status_t hgr_model_input(const hgr_model_t* model, size_t index, hgr_model_io_t* out_io);
HGR_API hgr_status_t hgr_model_output(const hgr_model_t* model, size_t index, hgr_model_io_t* out_io);
/* NOT_FOUND listing the inputs. */
HGR_API hgr_status_t hgr_model_input_index(const hgr_model_t* model, const char* name, size_t* out_index);

/* One input of a run, in the model's input order: dtype and shape, and the data
 * (compact row-major, host byte order; bytes must match). data may be NULL for
 * hgr_model_specialize when the input does not decide shapes, and for an input
 * given as a device value (hgr_model_run_with_buffers). */
typedef struct hgr_model_input_t {
  hgr_dtype_t dtype;
  int32_t ndim;
  const int64_t* shape;
  const void* data;
  size_t bytes;
} hgr_model_input_t;

struct hgr_device_buffer_t; /* hgr/opencl.h */

/* The specialization for these inputs (count: hgr_model_input_count), created
 * when the model has none for their shapes (and the values of inputs that decide
 * shapes), else the one kept; held until hgr_specialization_release. Its executor
 * runs the model at these shapes: set inputs, run, read outputs as with any
 * executor (hgr/executor.h); its input names are the model's. */
/* A model that decides at run time has no one executor for its inputs:
 * FAILED_PRECONDITION naming the node (run it with hgr_model_run). */
HGR_API hgr_status_t hgr_model_specialize(hgr_model_t* model, const hgr_model_input_t* inputs, size_t count,
                                          hgr_specialization_t** out_specialization);
HGR_API hgr_executor_t* hgr_specialization_executor(const hgr_specialization_t* specialization);
HGR_API void hgr_specialization_release(hgr_specialization_t* specialization);

/* The stage before placement: the model's graph and params at these inputs (as
 * hgr_model_specialize keys them; data needed only for inputs that decide shapes),
 * unplaced, for a caller that places and runs it itself (the hgr program). A
 * graph model gives its graph and a copy of its params. Both belong to the caller. */
HGR_API hgr_status_t hgr_model_graph(hgr_model_t* model, const hgr_model_input_t* inputs, size_t count,
                                     hgr_graph_t** out_graph, hgr_params_t** out_params);

/* Specializes, sets every input and starts a run; the run holds its specialization.
 * Output shapes follow from the inputs (hgr_model_run_output_info). Returns once
 * the run is enqueued, without waiting for earlier runs. */
HGR_API hgr_status_t hgr_model_run(hgr_model_t* model, const hgr_model_input_t* inputs, size_t count,
                                   hgr_model_run_t** out_run);

/* hgr_model_run with some inputs given as values on a device: buffers (NULL: none)
 * holds count pointers, buffers[i] NULL for an input given as host data in
 * inputs[i], else an hgr_device_buffer_t (hgr/opencl.h) of the input's bytes,
 * typically an earlier run's output (hgr_model_run_output_buffer); inputs[i] still
 * gives its dtype and shape (data may be NULL). Each is bound to its input
 * (hgr_executor_bind_device_buffer): the run waits for its ready event on the
 * device, not on the host, and its values never pass through host memory (unless
 * it lives in another context than the input's device: then they are staged
 * through the host, still without a wait there). Inputs given as host data are
 * copied, ending an earlier run's device binding of theirs. The model keeps
 * nothing of *buffers[i]: release it once this returned. An input that decides
 * shapes takes host data only (INVALID_ARGUMENT). This is how a streaming model (a
 * voice-activity detector every 32 ms, an LSTM decoder) feeds its state output
 * back as the next run's input:
 *
 *   hgr_device_buffer_t state;                       (run k's state output)
 *   hgr_model_run_output_buffer(run_k, 1, &state);
 *   const hgr_device_buffer_t* buffers[2] = {NULL, &state};
 *   hgr_model_run_with_buffers(model, inputs, 2, buffers, &run_k1);
 *   hgr_device_buffer_release(&state); */
HGR_API hgr_status_t hgr_model_run_with_buffers(hgr_model_t* model, const hgr_model_input_t* inputs, size_t count,
                                                const struct hgr_device_buffer_t* const* buffers,
                                                hgr_model_run_t** out_run);
HGR_API hgr_status_t hgr_model_run_wait(hgr_model_run_t* run);
/* Output index of the run: name, dtype, shape (valid while the run is held). */
HGR_API hgr_status_t hgr_model_run_output_info(const hgr_model_run_t* run, size_t index,
                                               hgr_tensor_info_t* out_info);
/* Waits for what output index needs and copies it (bytes must equal its size). */
HGR_API hgr_status_t hgr_model_run_get_output(hgr_model_run_t* run, size_t index, void* data, size_t bytes);
/* Output index of the run as a device value, without waiting: a buffer that nothing
 * of the model writes again (the output copied on the device once, as
 * hgr_fence_output_buffer does: the next run of the same specialization writes the
 * output's storage while it reads the state given to it, so the storage itself
 * cannot be handed on) and its ready event. Give it to a later run
 * (hgr_model_run_with_buffers) to keep a state on the device; release it with
 * hgr_device_buffer_release (hgr/opencl.h). Errors as hgr_fence_output_buffer. */
HGR_API hgr_status_t hgr_model_run_output_buffer(hgr_model_run_t* run, size_t index,
                                                 struct hgr_device_buffer_t* out_buffer);
HGR_API void hgr_model_run_release(hgr_model_run_t* run);

/* What the model did: specializations kept, made, found and evicted; the device
 * bytes of the activations kept; the last new specialization's host times (the
 * import with its passes, placement, executor creation with program loading and
 * warm-up), its programs (hgr_executor_program_stats: at a shape whose kernels an
 * earlier specialization built, every program from the model's pool, none compiled
 * or loaded) and its ONNX load report. */
typedef struct hgr_model_report_t {
  uint32_t kept;
  uint64_t created, hits, evicted;
  uint64_t device_bytes;
  uint64_t shared_weight_bytes; /* weights the last new specialization shared instead of uploading */
  double import_ms, place_ms, executor_ms;
  hgr_program_stats_t programs;
  hgr_onnx_report_t onnx;
  /* A model that decides at run time (an If on a computed condition, NonZero,
   * NonMaxSuppression ...) runs in stages: each run reads a decision on the host
   * where the model needs it, the run's only waits there, and goes on in the stage
   * that decision selects (specialized, cached and evicted as any other). */
  uint64_t decisions; /* values read on the host mid-run, over all runs */
  uint64_t stage_runs; /* stages run after a decision, over all runs */
} hgr_model_report_t;
HGR_API void hgr_model_report(const hgr_model_t* model, hgr_model_report_t* out_report);

/* ---- bundles: a model with its programs, compiled ahead of time ----
 *
 * A bundle is a directory: manifest.json, the ONNX model file, and the programs of
 * hgr's kernels that the model's specializations built, as binaries for the
 * devices they were built for (program-<n>.bin: program cache entries, base/store.h,
 * each checked against its key and checksum on loading). `hgr compile` makes one.
 *
 * hgr_model_write_bundle: writes model (an ONNX model, made from the file at
 * model_path, which is copied; external data is not) and the programs its
 * specializations built so far into directory (made if missing; files of the same
 * names are replaced). Specialize the model first at the shapes the bundle is for.
 * On PoCL, taking a program's binary compiles each of its kernels for a generic
 * work-group size.
 *
 * hgr_model_create_bundle: the model of a bundle, its programs loaded into the
 * model's program pool so that specializations take their kernels from there (on
 * the devices the bundle was made for, at its shapes, nothing is compiled from
 * source; the driver may still specialize a kernel at its first launch, as PoCL
 * does per work-group size). A bundle made for one device runs on it where options
 * give no bindings and no placement (not the instance's first device). Refused with FAILED_PRECONDITION, naming both sides:
 * a bundle of another hgr version or kernel library, or one made for a device this
 * instance lacks (platform, device, device version and driver version must all be
 * equal); a file missing, unreadable or corrupt is named with why. */
HGR_API hgr_status_t hgr_model_write_bundle(hgr_model_t* model, const char* model_path, const char* directory);
HGR_API hgr_status_t hgr_model_create_bundle(hgr_instance_t* instance, const char* directory,
                                            const hgr_model_options_t* options, hgr_model_t** out_model);

#ifdef __cplusplus
}
#endif

#endif /* HGR_MODEL_H_ */
