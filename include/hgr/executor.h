/* hgr — executing a graph on the devices of an instance.
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
 * hgr_executor_run_async also returns a fence for that run. Several runs may be in
 * flight. hgr_executor_wait waits for all of them; hgr_fence_wait for one run;
 * reading an output waits only for the work it depends on. Ordering is kept per
 * storage id on the device, with events: a write (a later run, or setting an input
 * while runs are in flight) waits for the storage's readers and writer before it,
 * and nothing waits on the host. Outputs stay in device memory until read.
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
 * Thread safety: an executor is thread-compatible (one thread at a time). Several
 * executors may share one instance, its devices and a graph from different threads
 * at once (tests/test_threads.c checks this under ThreadSanitizer); programs of one
 * platform are built one at a time process-wide, since PoCL 3.1's compiler races
 * on its own state otherwise. Exception: Oclgrind, a simulator that is not
 * thread-safe, must be used by one thread at a time in the whole process. Log and
 * program-cache callbacks run on the thread that calls hgr. */
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

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hgr_executor_s hgr_executor_t;

/* Binds graph device key `key` to the device named by `spec` (see device.h). */
typedef struct hgr_device_binding_t {
  int32_t key;
  const char* spec;
} hgr_device_binding_t;

/* Where compiled kernel programs are kept between processes. A program is stored
 * after the first run that launched its kernels (PoCL generates most of its code at
 * the first launch) and loaded with clCreateProgramWithBinary next time. An entry is
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
} hgr_program_cache_t;

/* Receives one line about what the executor does that a user may want to see
 * (program cache hits, misses and rejected entries). */
typedef void (*hgr_log_fn)(void* user, const char* message);

/* The most compute queues per device (hgr_executor_options_t.compute_queues). */
#define HGR_MAX_COMPUTE_QUEUES 16

typedef struct hgr_executor_options_t {
  const hgr_device_binding_t* bindings; /* explicit key -> device bindings; may be NULL */
  size_t binding_count;
  const hgr_params_t* params; /* loaded into the matching inputs at creation; may be NULL */
  bool profiling;             /* create queues with CL_QUEUE_PROFILING_ENABLE */
  bool plan_only;             /* validate and bind, but allocate and build nothing
                                 (what `hgr check` does); such an executor cannot run */
  hgr_program_cache_t program_cache; /* zeroed: files in the default directory */
  hgr_kernel_library_t* kernels; /* the user's ops (kernels.h), retained; may be NULL */
  /* Per device: storage plus host staging for copies into it must fit, else
   * creation fails with RESOURCE_EXHAUSTED naming the device. 0: no budget (the
   * device's own limits still apply). */
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
} hgr_executor_options_t;

/* Fills options with defaults (no bindings, no params, no profiling, one compute
 * queue per device). */
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

/* ---- runs as fences ----
 *
 * A fence stands for one run: it can be waited for, queried and released, and it
 * reads that run's outputs even after later runs were started. Outputs are
 * double-buffered on demand: while the caller holds the fence of the latest run, a
 * later run (or an input write into an output's storage) first copies that output,
 * on the device, into a buffer of the fence's, ordered after the run's writes and
 * before the new ones; a released fence costs nothing. A failed command fails the
 * fence of its run and of every run not yet complete (and the executor, see
 * above); fences of runs that completed before keep their result. */
typedef struct hgr_fence_s hgr_fence_t;
/* A fence is used like its executor: from one thread at a time, the executor's. */

/* hgr_executor_run, returning the run's fence (release it with hgr_fence_release;
 * holding many unreleased fences holds a copy of the outputs each). */
HGR_API hgr_status_t hgr_executor_run_async(hgr_executor_t* executor, hgr_fence_t** out_fence);

/* Waits until the run completed: HGR_OK, or the DEVICE_FAILURE naming the node.
 * Also completes every earlier run. */
HGR_API hgr_status_t hgr_fence_wait(hgr_fence_t* fence);

/* Whether the run completed, without waiting (a failure is returned as its status).
 * On a host-driven device (Oclgrind) it runs what is ready first. */
HGR_API hgr_status_t hgr_fence_query(hgr_fence_t* fence, bool* out_complete);

/* The run's output `index` (bytes must equal its size), waiting only for the work
 * it depends on; valid whatever was started since. */
HGR_API hgr_status_t hgr_fence_get_output(hgr_fence_t* fence, size_t index, void* data, size_t bytes);

/* Which run it is: 1 for the executor's first. */
HGR_API uint64_t hgr_fence_run(const hgr_fence_t* fence);

/* Releases the fence (the run goes on if it has not completed). Fences may outlive
 * their executor, after which they only answer what they knew. NULL is a no-op. */
HGR_API void hgr_fence_release(hgr_fence_t* fence);

/* ---- caller-owned memory (zero copy) ----
 *
 * An input or output can be bound to the caller's host memory (here) or OpenCL
 * buffer (hgr/opencl.h). The binding belongs to the storage id: it follows every
 * entry sharing it, including `__nop` aliases and an input that is also an output.
 *
 * Host memory (data of exactly the tensor's bytes, kept valid and unchanged by the
 * caller from a run's start until it completes): used directly as the device's
 * buffer through CL_MEM_USE_HOST_PTR when the device shares host memory
 * (CL_DEVICE_HOST_UNIFIED_MEMORY), data is aligned to CL_DEVICE_MEM_BASE_ADDR_ALIGN
 * and the storage is no larger than the tensor; each run then maps and unmaps it so
 * the device and the host agree. Otherwise each run copies: the input from data at
 * its start, the output into data at its end. Either way an input binding makes the
 * input set, and a bound output's data holds the run's values once the run
 * completed (hgr_executor_wait or its fence). hgr_executor_binding_kind says which
 * path was taken. Binding again replaces the binding; runs in flight keep what they
 * were started with. */
typedef enum hgr_io_t { HGR_INPUT = 0, HGR_OUTPUT = 1 } hgr_io_t;

typedef enum hgr_binding_kind_t {
  HGR_BINDING_NONE = 0,
  HGR_BINDING_BUFFER,         /* the caller's cl_mem is the storage */
  HGR_BINDING_HOST_ZERO_COPY, /* the caller's memory is the storage */
  HGR_BINDING_HOST_COPY,      /* copied to or from the caller's memory every run */
} hgr_binding_kind_t;

HGR_API hgr_status_t hgr_executor_bind_host(hgr_executor_t* executor, hgr_io_t io, size_t index, void* data,
                                            size_t bytes);
/* Returns the storage to the executor's own buffer; an unbound input must be set
 * again before the next run. */
HGR_API hgr_status_t hgr_executor_unbind(hgr_executor_t* executor, hgr_io_t io, size_t index);
HGR_API hgr_binding_kind_t hgr_executor_binding_kind(const hgr_executor_t* executor, hgr_io_t io, size_t index);

/* What happened to the executor's programs (one per device and kernel source). */
typedef struct hgr_program_stats_t {
  uint32_t programs;       /* built or loaded */
  uint32_t from_cache;     /* loaded from a cached binary */
  uint32_t from_source;    /* compiled from source (cache off, miss or rejected entry) */
  uint32_t rejected;       /* cache entries found unusable (and rebuilt) */
  uint32_t stored;         /* binaries stored after the first run */
  double build_ms;         /* wall time of building or loading them (concurrently per device) */
} hgr_program_stats_t;
HGR_API hgr_program_stats_t hgr_executor_program_stats(const hgr_executor_t* executor);

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

/* ---- placement and memory summary ---- */

/* A device key and the device it is bound to. */
typedef struct hgr_key_binding_t {
  int32_t key;         /* -1 when the graph has no device_index column */
  size_t device_index; /* into the instance's devices */
  bool explicit_binding;
} hgr_key_binding_t;

HGR_API size_t hgr_executor_key_count(const hgr_executor_t* executor);
HGR_API hgr_key_binding_t hgr_executor_key_binding(const hgr_executor_t* executor, size_t i);

/* What one device does for this executor. */
typedef struct hgr_device_usage_t {
  size_t device_index;
  uint32_t kernel_nodes;  /* op nodes that launch a kernel on it */
  uint32_t storage_count; /* storage ids it owns */
  uint64_t storage_bytes; /* device memory of those storages */
  uint64_t staging_bytes; /* host staging for copies into or out of it */
  /* Storage ids whose buffer is another executor's (options.share_params_from),
   * and their bytes: not in storage_count or storage_bytes, nor held against the
   * memory budget, since the source executor already counts them. */
  uint32_t shared_count;
  uint64_t shared_bytes;
} hgr_device_usage_t;

/* Devices that own storage or run nodes, in instance order. */
HGR_API size_t hgr_executor_device_count(const hgr_executor_t* executor);
HGR_API hgr_device_usage_t hgr_executor_device_usage(const hgr_executor_t* executor, size_t i);

/* Copy nodes per pair class, with the bytes one run moves. */
typedef struct hgr_copy_summary_t {
  uint32_t count[HGR_PAIR_CLASS_COUNT];
  uint64_t bytes[HGR_PAIR_CLASS_COUNT];
  uint32_t staged_small;  /* cross-context copies read into staging, then written */
  uint32_t staged_mapped; /* cross-context copies written from the mapped source */
  uint32_t staged_chunks; /* chunks of the mapped copies (> 1 per copy when chunked) */
} hgr_copy_summary_t;

HGR_API hgr_copy_summary_t hgr_executor_copy_summary(const hgr_executor_t* executor);

/* Device time of the last run on executor device i, from OpenCL profiling events
 * (start to end of each kernel and copy command that completes a node there). */
typedef struct hgr_device_time_t {
  uint32_t commands;       /* commands of the last run on the device */
  uint32_t timed_commands; /* those with a positive duration (rusticl reports zeros) */
  uint64_t busy_ns;        /* sum of their durations */
} hgr_device_time_t;

/* Errors: FAILED_PRECONDITION unless the executor was created with profiling and has
 * completed a run; OUT_OF_RANGE for i. */
HGR_API hgr_status_t hgr_executor_device_time(const hgr_executor_t* executor, size_t i,
                                              hgr_device_time_t* out_time);

/* ---- profiling: the last run, command by command ----
 *
 * With options.profiling every command a run enqueues keeps its OpenCL event until
 * the next run starts, so its timestamps can be read once the run was waited for.
 * The accessors below answer about the last run that hgr_executor_wait completed;
 * FAILED_PRECONDITION otherwise (no profiling, or a run still in flight). */

typedef enum hgr_command_kind_t {
  HGR_COMMAND_KERNEL,
  HGR_COMMAND_COPY,   /* clEnqueueCopyBuffer (same context) */
  HGR_COMMAND_READ,   /* device -> host staging or mapped memory */
  HGR_COMMAND_WRITE,  /* host staging or mapped memory -> device */
  HGR_COMMAND_MAP,
  HGR_COMMAND_UNMAP,
  HGR_COMMAND_MARKER, /* an empty copy or kernel placeholder that only orders */
  HGR_COMMAND_OTHER,
} hgr_command_kind_t;

/* "kernel", "copy", "read", "write", "map", "unmap", "marker", "other". */
HGR_API const char* hgr_command_kind_name(hgr_command_kind_t kind);

typedef struct hgr_command_profile_t {
  uint32_t node_id;       /* the node that enqueued it */
  uint32_t queue;         /* executor queue (hgr_executor_queue_info) */
  hgr_command_kind_t kind;
  /* CL_PROFILING_COMMAND_QUEUED/SUBMIT/START/END on the device's clock; all 0 when
   * the driver reports none (rusticl 22.3 reports zeros). */
  uint64_t queued_ns, submit_ns, start_ns, end_ns;
  uint64_t host_enqueue_ns; /* CLOCK_MONOTONIC just after it was enqueued */
} hgr_command_profile_t;

/* Commands of the last run, in enqueue order. */
HGR_API size_t hgr_executor_command_count(const hgr_executor_t* executor);
HGR_API hgr_status_t hgr_executor_command_profile(const hgr_executor_t* executor, size_t i,
                                                  hgr_command_profile_t* out_profile);

/* Host time (CLOCK_MONOTONIC) spent enqueuing node_id's commands in the last run;
 * 0, 0 for a node that enqueues nothing (inputs, __nop). */
HGR_API hgr_status_t hgr_executor_node_enqueue_time(const hgr_executor_t* executor, uint32_t node_id,
                                                    uint64_t* out_begin_ns, uint64_t* out_end_ns);

/* The executor's command queues: per device, options.compute_queues compute
 * queues (kernels) and one transfer queue (inputs, outputs, and copy nodes when
 * there are several compute queues; with one, they share it); a single
 * queue for everything on host-driven devices. */
typedef struct hgr_queue_info_t {
  size_t device_index; /* into the instance's devices */
  const char* role;    /* "compute", "transfer", or "compute+transfer" */
} hgr_queue_info_t;
HGR_API size_t hgr_executor_queue_count(const hgr_executor_t* executor);
HGR_API hgr_queue_info_t hgr_executor_queue_info(const hgr_executor_t* executor, size_t i);

/* How a __copy node moves its bytes. INVALID_ARGUMENT for a node that is not a copy. */
typedef struct hgr_copy_info_t {
  uint64_t bytes;
  hgr_pair_class_t pair_class;
  const char* path;   /* "direct", "staged", "mapped source" or "mapped destination" */
  uint32_t chunks;    /* 1, or the chunks of a mapped copy */
} hgr_copy_info_t;
HGR_API hgr_status_t hgr_executor_copy_info(const hgr_executor_t* executor, uint32_t node_id,
                                            hgr_copy_info_t* out_info);

/* How to put a device's profiling timestamps on the host's CLOCK_MONOTONIC:
 * host_ns = device_ns + offset_ns, measured now for instance device device_index
 * (one the executor uses) with clGetDeviceAndHostTimer where the device has it
 * (OpenCL 2.1+), else from a marker's end timestamp against host time around it
 * (uncertainty_ns is half that window). Needs an executor created with profiling. */
typedef struct hgr_clock_offset_t {
  int64_t offset_ns;
  uint64_t uncertainty_ns;
  const char* method; /* "clGetDeviceAndHostTimer" or "marker" */
} hgr_clock_offset_t;
HGR_API hgr_status_t hgr_executor_clock_offset(hgr_executor_t* executor, size_t device_index,
                                               hgr_clock_offset_t* out_offset);

#ifdef __cplusplus
}
#endif

#endif /* HGR_EXECUTOR_H_ */
