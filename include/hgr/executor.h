/* hgr — the executor: a graph bound to devices, and its runs.
 *
 * This header holds what a program needs to run a graph: creating an executor
 * (options, device bindings, the program cache), its inputs and outputs, params,
 * runs and waiting, binding inputs and outputs to the caller's memory, and running
 * one node at a time for debugging. Two concepts built on it have their own
 * headers, included from here so that a program including only this one sees
 * them: hgr/fence.h (one run as an object: wait for it, query it, read its
 * outputs) and hgr/profile.h (what the executor placed where, and what the last
 * run cost, with reports written from that). hgr/opencl.h adds the caller's own
 * OpenCL buffers.
 *
 * An executor binds a loaded graph to devices: every device key of the graph's
 * device_index column is bound to one device of the instance (explicitly, or by
 * TVM's defaults: key 1 -> a CPU device, key 4 -> a GPU or accelerator if there is
 * one, else a device other than key 1's; any other key -> the next unused device;
 * no column -> everything on one device). Default choices prefer real devices to
 * the Oclgrind simulator, which is picked only when nothing else fits or when it
 * is named.
 *
 * Creation does all the work once: it checks every node's op against the op
 * registry, allocates one buffer per storage id on its owning device (the size is
 * the largest entry using it), builds only the programs the graph uses, and binds
 * every node to a device, a queue and a kernel with its arguments set. A run then
 * only enqueues: kernels in node order; copy nodes as direct clEnqueueCopyBuffer
 * within one context, or as host-staged transfers across contexts whose ordering is
 * carried by user events completed from event callbacks; a failure travels on as a
 * negative status where the consumer's driver handles that safely (not PoCL 3.1,
 * whose consumers are completed normally), and is always reported from the failed
 * command itself, never by hanging the consumer. Nothing blocks between nodes.
 *
 * Runs are asynchronous: hgr_executor_run returns once everything is enqueued, and
 * hgr_executor_run_async (hgr/fence.h) also returns a fence for that run. Several
 * runs may be in flight. hgr_executor_wait waits for all of them; hgr_fence_wait
 * for one run; reading an output waits only for the work it depends on. Ordering
 * is kept per storage id on the device, with events: a write (a later run, or
 * setting an input while runs are in flight) waits for the storage's readers and
 * writer before it, and nothing waits on the host. Outputs stay in device memory
 * until read.
 *
 * Executors of one graph can share their parameters (TVM's share_params): with
 * options.share_params_from, a new executor uses the source executor's buffers for
 * the inputs the source got from params, instead of allocating and filling its own,
 * so serving several streams does not multiply weight memory. Those buffers are
 * read-only in both from then on (see hgr_executor_options_t).
 *
 * After a command fails on a device, the wait (or output read) that finds it
 * returns DEVICE_FAILURE naming the node; the executor then refuses further work
 * with FAILED_PRECONDITION, since OpenCL leaves a context's queues undefined after
 * a failed command. Release it and create a new one.
 *
 * Thread safety: an executor is thread-compatible: the caller makes sure that at
 * most one thread at a time calls any function taking it, const getters included
 * (hgr takes no lock of its own for it). Calls on its fences (hgr/fence.h) and the
 * getters and reports of hgr/profile.h count as calls on it. It may move between
 * threads between calls. Several executors may share one instance,
 * its devices and a graph from different threads at once (tests/test_threads.c
 * checks this under ThreadSanitizer); programs of one platform are built one at a
 * time process-wide, since PoCL 3.1's compiler races on its own state otherwise.
 * Exception: Oclgrind, a simulator that is not thread-safe, must be used by one
 * thread at a time in the whole process. Log and program-cache callbacks run on
 * the thread that calls hgr. The option structs are plain values. */
#ifndef HGR_EXECUTOR_H_
#define HGR_EXECUTOR_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hgr/device.h"
#include "hgr/export.h"
#include "hgr/graph.h"
#include "hgr/kernels.h"
#include "hgr/params.h"
#include "hgr/status.h"
#include "hgr/tensor.h"
#include "hgr/transport.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hgr_executor_s hgr_executor_t;

/* Binds graph device key `key` to the device named by `spec` (see device.h). */
typedef struct hgr_device_binding_t {
  int32_t key;
  const char* spec;
} hgr_device_binding_t;

/* Where compiled kernel programs are kept between processes. An executor builds,
 * per device, one program of hgr's kernels holding just those its graph launches
 * there (kernels/select.h), and one per user kernel source. A program is stored
 * once its kernels were launched (PoCL generates most of its code at the first
 * launch): at creation, after the kernel warm-up (hgr_warm_up_t), else after the
 * first run; and loaded with clCreateProgramWithBinary next time. An entry is
 * keyed by platform name, device name, device version, driver version, build
 * options and a hash of the source; a truncated, corrupt or rejected entry is
 * reported through the log and rebuilt from source. */
typedef enum hgr_program_cache_mode_t {
  HGR_PROGRAM_CACHE_FILES = 0, /* files in `directory` (the default) */
  HGR_PROGRAM_CACHE_OFF,       /* always build from source */
  HGR_PROGRAM_CACHE_CALLBACKS, /* the embedder keeps the blobs (load/store below) */
} hgr_program_cache_mode_t;

typedef struct hgr_program_cache_t {
  hgr_program_cache_mode_t mode;
  /* FILES: NULL means $HGR_CACHE_DIR, else $XDG_CACHE_HOME/hgr, else ~/.cache/hgr;
   * created when missing. Files are written to a temporary name and renamed, so
   * concurrent processes never read half a file. */
  const char* directory;
  /* CALLBACKS: load returns true with a blob allocated by malloc (hgr frees it)
   * when it has one for key; store receives a blob to keep under key. Both may be
   * called from the thread that creates or runs the executor. */
  bool (*load)(void* user, const char* key, void** out_blob, size_t* out_size);
  void (*store)(void* user, const char* key, const void* blob, size_t size);
  void* user;
  /* FILES: also store the binaries of a driver that keeps what it compiles itself
   * (PoCL with its kernel cache on), which are otherwise left to it: taking one
   * compiles each kernel of the program again, for a generic work-group size. */
  bool store_always;
} hgr_program_cache_t;

/* Kernel warm-up at creation (hgr_executor_options_t.warm_up). Drivers compile
 * code at a kernel's first launch (PoCL: each kernel's work-group function, per
 * local size; rusticl: each kernel), seconds for a CNN, which otherwise lands in
 * the first run. Warming launches each distinct kernel launch of the graph once at
 * creation, on the executor's own buffers with the run's arguments and geometry
 * (results are overwritten by the first run), waits for them, and then stores the
 * programs it compiled in the program cache, which would otherwise happen after the
 * first run. Creation then takes longer by what the first run saves. Copies, the
 * user's kernels (kernels.h) and host-driven devices (Oclgrind) are not warmed. */
typedef enum hgr_warm_up_t {
  HGR_WARM_UP_AUTO = 0, /* the default: warm the kernels of programs compiled from
                           source at this creation (a program cache miss, or the
                           cache off); loaded binaries are assumed warm already */
  HGR_WARM_UP_ALL,      /* warm every kernel, loaded programs' too */
  HGR_WARM_UP_OFF,      /* warm nothing: the first run compiles */
} hgr_warm_up_t;

/* Receives one line about what the executor does that a user may want to see
 * (program cache hits, misses and rejected entries). */
typedef void (*hgr_log_fn)(void* user, const char* message);

/* Where nodes whose op offers tile candidates take their tile from (hgr/tune.h). */
typedef enum hgr_tuning_mode_t {
  HGR_TUNING_FILE = 0,  /* the tuning file's records where it has one, else the limits (the default) */
  HGR_TUNING_OFF,       /* the op's rule over the device's limits only */
  HGR_TUNING_CANDIDATE, /* candidate tuning_candidate wherever it fits, else the limits (hgr_tune_graph) */
} hgr_tuning_mode_t;

/* The most compute queues per device (hgr_executor_options_t.compute_queues). */
#define HGR_MAX_COMPUTE_QUEUES 16

/* Programs shared between executors of one instance: an executor with a pool takes
 * each kernel from a program another executor of the pool built on the same device
 * (a user source's program: the same device and source) instead of building or
 * loading it, builds only kernels none has, and adds what it builds or loads. The pool holds them
 * until it is released; it may be used by executors on several threads. The model
 * object (hgr/model.h) gives one to all its specializations. */
typedef struct hgr_program_pool_s hgr_program_pool_t;
HGR_API hgr_status_t hgr_program_pool_create(hgr_program_pool_t** out_pool);
/* Releases the pool's programs (executors keep their own references). NULL: no-op. */
HGR_API void hgr_program_pool_release(hgr_program_pool_t* pool);

typedef struct hgr_executor_options_t {
  /* Explicit key -> device bindings; may be NULL. With none (binding_count 0), the
   * bindings the graph records (hgr_graph_binding, written by `hgr place`) apply;
   * any explicit binding replaces all of them. */
  const hgr_device_binding_t* bindings;
  size_t binding_count;
  const hgr_params_t* params; /* loaded into the matching inputs at creation; may be NULL */
  bool profiling;             /* create queues with CL_QUEUE_PROFILING_ENABLE */
  bool plan_only;             /* validate and bind, but allocate and build nothing
                                 (what `hgr check` does); such an executor cannot run */
  hgr_program_cache_t program_cache; /* zeroed: files in the default directory */
  hgr_program_pool_t* program_pool;  /* borrowed for creation; NULL: none */
  hgr_kernel_library_t* kernels; /* the user's ops (kernels.h), retained; may be NULL */
  /* Per device: storage, host staging for copies into it and its kernels' scratch
   * buffers must fit, else creation fails with RESOURCE_EXHAUSTED naming the
   * device. 0: no budget (the device's own limits still apply). */
  uint64_t memory_budget_bytes;
  /* In-order compute queues per device, 1 to HGR_MAX_COMPUTE_QUEUES (0 means 1;
   * other values are INVALID_ARGUMENT). Independent nodes are spread over them by
   * dependency level so that a device that runs queues concurrently overlaps them;
   * every dependency between queues is an event. Host-driven devices (Oclgrind)
   * keep a single queue whatever the value. */
  uint32_t compute_queues;
  hgr_log_fn log;             /* may be NULL */
  void* log_user;
  /* Shares parameter buffers with an executor of the same graph (TVM's
   * share_params); may be NULL. Creation fails with INVALID_ARGUMENT naming the
   * first difference unless the source was created from this graph or one equal to
   * it. The new executor uses the source's buffer (retained) for every input that
   *   - the source holds from params (hgr_executor_load_params or options.params,
   *     not overwritten by hgr_executor_set_input since, or itself shared),
   *   - no other entry of the graph uses the storage id of (no node writes it or
   *     aliases it), and
   *   - lives on the same device of the same instance in both executors;
   * such an input counts as set, and options.params fills only the other inputs.
   * Inputs bound to other devices are simply not shared (the log says which and
   * why). Creation first waits for the source's work in flight
   * (hgr_executor_wait), so the source must not be in use by another thread
   * meanwhile; it is borrowed, not retained, and either executor may be released
   * first. From then on both executors refuse hgr_executor_set_input and
   * hgr_executor_load_params on a shared input with FAILED_PRECONDITION: the buffer
   * is read-only for the source's lifetime, whether or not a sharer remains. Shared
   * buffers count in the new executor's hgr_device_usage_t.shared_bytes, not in its
   * storage_bytes nor against its memory budget. */
  hgr_executor_t* share_params_from;
  /* With share_params_from: when not NULL, the source may run another graph, and
   * only the inputs named here are shared, each with the source's input of the same
   * name and bytes (other differences are logged and not shared). The caller vouches
   * that the params of these names hold the same values in both (the model object,
   * hgr/model.h, shares a model's weights between its shapes so). */
  const char* const* share_param_names;
  size_t share_param_name_count;
  /* Tile choices (hgr/tune.h): the tuning file in the program cache directory
   * (HGR_TUNING_FILE, the default), none (HGR_TUNING_OFF), or one candidate for
   * every node (HGR_TUNING_CANDIDATE, candidate index tuning_candidate). */
  hgr_tuning_mode_t tuning;
  uint32_t tuning_candidate;
  /* Kernel warm-up at creation (hgr_warm_up_t); zeroed: HGR_WARM_UP_AUTO. A
   * kernel that fails on the device while warming fails creation with
   * DEVICE_FAILURE naming its node. */
  hgr_warm_up_t warm_up;
  /* Devices of other processes (hgr/transport.h): bindings may then name ranks
   * ("r1/pocl:0"); this executor creates only this rank's storages and runs only the
   * nodes on its devices, and copies between ranks go through the transport. NULL:
   * one process (a spec naming a rank other than 0 is INVALID_ARGUMENT). Borrowed:
   * it must outlive the executor. */
  const hgr_transport_t* transport;
} hgr_executor_options_t;

/* Fills options with defaults (no bindings, no params, no profiling, one compute
 * queue per device, warm-up of the kernels compiled at creation). */
HGR_API void hgr_executor_options_init(hgr_executor_options_t* options);

/* Creates an executor. Retains graph; borrows instance (which must outlive the
 * executor) and options (copied). Errors name what failed and where:
 * INVALID_ARGUMENT (unknown func_name listing the known ones, a node's shapes or
 * dtypes its op does not accept, a node's output sharing an input's storage id
 * where its op cannot run in place (docs/ops.md, "In place"), a binding that names
 * no device, a param whose size or dtype does not match, a share_params_from
 * executor of another graph), RESOURCE_EXHAUSTED (a storage larger than the
 * device's max allocation or memory, naming the storage id and the device), and
 * OpenCL failures naming the call, the object and the device. */
HGR_API hgr_status_t hgr_executor_create(hgr_instance_t* instance, hgr_graph_t* graph,
                                         const hgr_executor_options_t* options,
                                         hgr_executor_t** out_executor);

/* Waits for work in flight, then frees every buffer, kernel, queue and event.
 * NULL is a no-op. */
HGR_API void hgr_executor_release(hgr_executor_t* executor);

/* The graph and the instance the executor was created with: borrowed, valid while
 * the executor lives (it retains the graph). NULL for a NULL executor. */
HGR_API hgr_graph_t* hgr_executor_graph(const hgr_executor_t* executor);
HGR_API hgr_instance_t* hgr_executor_instance(const hgr_executor_t* executor);

/* ---- inputs and outputs (indices as in the graph: inputs are arg_nodes in order,
 *      outputs are heads in order; shapes and dtypes come from the entry ids) ---- */
HGR_API size_t hgr_executor_input_count(const hgr_executor_t* executor);
HGR_API size_t hgr_executor_output_count(const hgr_executor_t* executor);
HGR_API hgr_status_t hgr_executor_input_info(const hgr_executor_t* executor, size_t index,
                                             hgr_tensor_info_t* out_info);
HGR_API hgr_status_t hgr_executor_output_info(const hgr_executor_t* executor, size_t index,
                                              hgr_tensor_info_t* out_info);
/* Index of the input called name; NOT_FOUND (listing the inputs) for an unknown name
 * (TVM ignores unknown names silently; hgr does not). */
HGR_API hgr_status_t hgr_executor_input_index(const hgr_executor_t* executor, const char* name,
                                              size_t* out_index);

/* The rank whose device holds input or output `index` (hgr/transport.h): only that
 * rank sets or reads it. 0 without a transport; -1 for an index out of range. */
HGR_API int hgr_executor_input_rank(const hgr_executor_t* executor, size_t index);
HGR_API int hgr_executor_output_rank(const hgr_executor_t* executor, size_t index);

/* Copies `bytes` bytes from host memory into input `index`; bytes must equal the
 * input's size. Returns once data may be reused, without waiting for runs in
 * flight: when they may still use the input's storage, data is copied into the
 * executor's host memory and the write is ordered after them on the device.
 * FAILED_PRECONDITION for an input whose buffer is shared with another executor
 * (options.share_params_from) or bound to the caller's memory. */
HGR_API hgr_status_t hgr_executor_set_input(hgr_executor_t* executor, size_t index,
                                            const void* data, size_t bytes);
HGR_API hgr_status_t hgr_executor_set_input_by_name(hgr_executor_t* executor, const char* name,
                                                    const void* data, size_t bytes);

/* Sets every input whose name is in params. *out_unused_count (may be NULL)
 * receives how many params name no input; hgr_executor_unused_param lists them.
 * A param whose dtype or size differs from its input is INVALID_ARGUMENT naming
 * both; one for a shared input (options.share_params_from) is FAILED_PRECONDITION.
 * Inputs set this way are the ones another executor may share. */
HGR_API hgr_status_t hgr_executor_load_params(hgr_executor_t* executor, const hgr_params_t* params,
                                              size_t* out_unused_count);

/* Name of unused param i from the last load (i < *out_unused_count), or NULL.
 * Borrowed until the next load or release. */
HGR_API const char* hgr_executor_unused_param(const hgr_executor_t* executor, size_t i);

/* Enqueues one run of the whole graph and returns without waiting. Every input
 * must have been set (FAILED_PRECONDITION names the first that was not). */
HGR_API hgr_status_t hgr_executor_run(hgr_executor_t* executor);

/* Waits for everything enqueued so far. A command that failed on a device is
 * DEVICE_FAILURE naming the node, its op and device, and the OpenCL status. */
HGR_API hgr_status_t hgr_executor_wait(hgr_executor_t* executor);

/* Copies output `index` into host memory (bytes must equal its size), waiting only
 * for the work it depends on: the latest run's value (its transfer only, not the
 * whole run). */
HGR_API hgr_status_t hgr_executor_get_output(hgr_executor_t* executor, size_t index, void* data,
                                             size_t bytes);

/* The fewest bytes a host binding takes zero copy (below). Zero copy makes a buffer
 * over the caller's memory at each new binding and maps and unmaps it at each run, two
 * commands where a copy is one: on PoCL's pthread device, Silero VAD's session call
 * (two outputs of 4 bytes and 1 KiB, bound anew at each call) went 359-371 -> 338-340
 * us with them copied, where a copy of 64 KiB costs a few microseconds. */
#define HGR_ZERO_COPY_MIN_BYTES ((size_t)64 * 1024)

/* ---- caller-owned memory (zero copy) ----
 *
 * An input or output can be bound to the caller's host memory (here) or OpenCL
 * buffer (hgr/opencl.h). The binding belongs to the storage id: it follows every
 * entry sharing it, including `__nop` aliases and an input that is also an output.
 *
 * Host memory (data of exactly the tensor's bytes, kept valid and unchanged by the
 * caller from a run's start until it completes): used directly as the device's
 * buffer through CL_MEM_USE_HOST_PTR when the device shares host memory
 * (CL_DEVICE_HOST_UNIFIED_MEMORY), data is aligned to CL_DEVICE_MEM_BASE_ADDR_ALIGN,
 * the tensor has at least HGR_ZERO_COPY_MIN_BYTES (a smaller one costs less copied
 * than mapped) and the storage is no larger than the tensor; each run then maps and
 * unmaps it so
 * the device and the host agree. Otherwise each run copies: the input from data at
 * its start, the output into data at its end. Either way an input binding makes the
 * input set, and a bound output's data holds the run's values once the run
 * completed (hgr_executor_wait or its fence). An output whose storage holds a graph
 * input or a param (an ONNX model's constant output, an input that is also an
 * output) is never rebound, since no run writes that storage: each run copies it
 * into the caller's memory (HGR_BINDING_HOST_COPY) or, on the device, into the
 * caller's buffer (hgr/opencl.h; HGR_BINDING_DEVICE_COPY). hgr_executor_binding_kind
 * says which path was taken. Binding again replaces the binding; runs in flight keep what they
 * were started with. */
typedef enum hgr_io_t { HGR_INPUT = 0, HGR_OUTPUT = 1 } hgr_io_t;

typedef enum hgr_binding_kind_t {
  HGR_BINDING_NONE = 0,
  HGR_BINDING_BUFFER,         /* the caller's cl_mem is the storage */
  HGR_BINDING_HOST_ZERO_COPY, /* the caller's memory is the storage */
  HGR_BINDING_HOST_COPY,      /* copied to or from the caller's memory every run */
  HGR_BINDING_DEVICE_COPY,    /* an input copied on the device from the caller's device
                                 buffer every run (hgr/opencl.h, hgr_executor_bind_device_buffer),
                                 or an output that is an input or a param copied into the
                                 caller's buffer every run */
  HGR_BINDING_STAGED_COPY,    /* an input copied from a device buffer of another context
                                 through host staging every run (the same) */
} hgr_binding_kind_t;

HGR_API hgr_status_t hgr_executor_bind_host(hgr_executor_t* executor, hgr_io_t io, size_t index, void* data,
                                            size_t bytes);
/* Returns the storage to the executor's own buffer; an unbound input must be set
 * again before the next run. Once it returns (and once binding again returns), the
 * executor no longer uses the caller's memory: a fence still holding an output there
 * (an input that is also an output) has its own copy. */
HGR_API hgr_status_t hgr_executor_unbind(hgr_executor_t* executor, hgr_io_t io, size_t index);
HGR_API hgr_binding_kind_t hgr_executor_binding_kind(const hgr_executor_t* executor, hgr_io_t io, size_t index);

/* ---- stepping, for finding the node where a result goes wrong ---- */

/* Called with each graph input, then with each op node (in graph order) once its
 * commands have completed; return false to stop. */
typedef bool (*hgr_node_visitor_t)(hgr_executor_t* executor, uint32_t node_id, void* user);

/* Runs the graph one node at a time: enqueues a node, waits for it, and calls visit,
 * which may read the node's outputs with hgr_executor_read_entry before a later node
 * reuses their storage. Slow (nothing overlaps); for debugging. Inputs must be set.
 * Stopping early leaves the later nodes unrun; the executor stays usable. */
HGR_API hgr_status_t hgr_executor_run_stepwise(hgr_executor_t* executor, hgr_node_visitor_t visit, void* user);

/* Copies output `index` of node node_id (bytes must equal its size) into data, as the
 * executor's storage holds it now: right after the node ran in hgr_executor_run_stepwise,
 * its value. Errors: OUT_OF_RANGE, INVALID_ARGUMENT for a wrong size. */
HGR_API hgr_status_t hgr_executor_read_entry(hgr_executor_t* executor, uint32_t node_id, uint32_t index, void* data,
                                             size_t bytes);

#ifdef __cplusplus
}
#endif

/* Fences and the profile: their own headers, included here so that code written
 * when this header held them still compiles. Each includes this header first. */
#include "hgr/fence.h"
#include "hgr/profile.h"

#endif /* HGR_EXECUTOR_H_ */
