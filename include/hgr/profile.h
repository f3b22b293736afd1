/* hgr — looking inside an executor: placement, memory, programs, and the last
 * run's profile, with reports written from them.
 *
 * Two kinds of answers. What creation decided, valid for the executor's life:
 * which device each device key is bound to, what each device holds and runs, how
 * copies move their bytes, what happened to the programs. And, for an executor
 * created with options.profiling, what the last run cost: every command it
 * enqueued with its OpenCL timestamps, the host time spent enqueuing each node, the
 * executor's queues, and how to put device clocks on the host's. The reports at
 * the end (a summary table, the same as JSON, a Chrome trace) are written from
 * these getters alone, so a program that embeds hgr prints what `hgr run
 * --profile`, `--profile-json` and `--trace` print.
 *
 * Thread safety: every function here that takes an executor is a call on it
 * (thread-compatible, see hgr/executor.h): one thread at a time per executor, and
 * not while another thread runs or waits on it. hgr_command_kind_name,
 * hgr_command_profile_has_duration and hgr_profile_summary_options_init are pure.
 * The structs are plain values; their string fields (role, path, method) are static
 * strings, valid forever. */
#ifndef HGR_PROFILE_H_
#define HGR_PROFILE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hgr/device.h"
#include "hgr/executor.h"
#include "hgr/export.h"
#include "hgr/graph.h"
#include "hgr/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- programs ---- */

/* What happened to the executor's programs (one per device and kernel source). */
typedef struct hgr_program_stats_t {
  uint32_t programs;       /* built or loaded */
  uint32_t from_cache;     /* loaded from a cached binary */
  uint32_t from_source;    /* compiled from source (cache off, miss or rejected entry) */
  uint32_t rejected;       /* cache entries found unusable (and rebuilt) */
  uint32_t stored;         /* binaries stored (after the warm-up, else after the first run) */
  double build_ms;         /* wall time of building or loading them (concurrently per device) */
  uint32_t warm_launches;  /* steps launched by the warm-up at creation (hgr_warm_up_t) */
  double warm_ms;          /* wall time of that warm-up (launches and waiting) */
  double store_ms;         /* wall time of storing binaries at creation, after the warm-up */
  uint32_t from_pool;      /* taken from the program pool (options.program_pool), built by another executor */
  uint32_t left_to_driver; /* not stored: the driver keeps what it compiled itself, and exporting a
                              binary would compile every kernel of the program (PoCL, with its
                              kernel cache on; files mode without store_always) */
} hgr_program_stats_t;
HGR_API hgr_program_stats_t hgr_executor_program_stats(const hgr_executor_t* executor);

/* ---- placement and memory summary ---- */

/* A device key and the device it is bound to. */
typedef struct hgr_key_binding_t {
  int32_t key;         /* -1 when the graph has no device_index column */
  size_t device_index; /* into the instance's devices; SIZE_MAX for another rank's device */
  bool explicit_binding;
  int rank;            /* the rank whose device it is (hgr/transport.h); -1 without a transport */
  const char* spec;    /* the device's spec ("pocl:0", "r1/pocl:0"), owned by the executor */
} hgr_key_binding_t;

/* The graph's device keys (1 when it has no device_index column) and key i's
 * binding; i must be below the count (out of range: a record with device_index SIZE_MAX). */
HGR_API size_t hgr_executor_key_count(const hgr_executor_t* executor);
HGR_API hgr_key_binding_t hgr_executor_key_binding(const hgr_executor_t* executor, size_t i);

/* What one device does for this executor. */
typedef struct hgr_device_usage_t {
  size_t device_index;
  uint32_t kernel_nodes;  /* op nodes that launch a kernel on it */
  uint32_t storage_count; /* storage ids it owns */
  uint64_t storage_bytes; /* device memory of those storages */
  uint64_t staging_bytes; /* host staging for copies into or out of it */
  uint64_t scratch_bytes; /* device memory of its kernels' scratch buffers (a few ops'
                             multi-launch plans, e.g. stride-2 convolutions) */
  /* Storage ids whose buffer is another executor's (options.share_params_from),
   * and their bytes: not in storage_count or storage_bytes, nor held against the
   * memory budget, since the source executor already counts them. */
  uint32_t shared_count;
  uint64_t shared_bytes;
} hgr_device_usage_t;

/* Devices that own storage or run nodes, in instance order; i must be below the
 * count (out of range: a zeroed record with device_index SIZE_MAX). */
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

/* Whether the driver gave the command a duration to use: a start stamp, an end not
 * before it, and for a kernel more than 1 ns (rusticl 22.3 stamps kernels with
 * zeros or with end = start + 1 ns). */
HGR_API bool hgr_command_profile_has_duration(const hgr_command_profile_t* profile);

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
  const char* path;   /* "direct", "staged", "mapped source", "mapped destination", or between ranks
                         (hgr/transport.h) "sent to a rank" or "received from a rank" */
  uint32_t chunks;    /* 1, or the chunks of a mapped copy or of a copy between ranks */
} hgr_copy_info_t;
HGR_API hgr_status_t hgr_executor_copy_info(const hgr_executor_t* executor, uint32_t node_id,
                                            hgr_copy_info_t* out_info);

/* What crossed between the host and the device for input or output `index`,
 * counted over the executor's life whether or not it profiles, so that a program
 * can check that a value it keeps on the device (a streaming model's state,
 * hgr_executor_bind_device_buffer) never went through host memory. */
typedef struct hgr_io_traffic_t {
  /* Copies between host memory and the device, and their bytes. An input: writes
   * by hgr_executor_set_input (and load_params), of a host binding copied at a
   * run's start, and reads and writes of a device buffer of another context staged
   * through the host at a run's start. An output: reads by hgr_executor_get_output
   * and hgr_fence_get_output, and of a host binding copied at a run's end. */
  uint64_t host_copies;
  uint64_t host_bytes;
  /* Maps of a host binding used in place (HGR_BINDING_HOST_ZERO_COPY): each run
   * maps and unmaps it, which copies nothing where the device shares host memory. */
  uint64_t host_maps;
  /* Copies on the device: an input copied from a device buffer
   * (HGR_BINDING_DEVICE_COPY); an output copied into a buffer of a fence's, before
   * a later write or for hgr_fence_output_buffer. */
  uint64_t device_copies;
  /* An input: runs that took it from a device buffer (hgr_executor_bind_device_buffer),
   * and of those the ones that waited for the buffer's ready event on the device.
   * An output: device buffers handed out (hgr_executor_output_buffer,
   * hgr_fence_output_buffer). */
  uint64_t device_buffers;
  uint64_t device_waits;
} hgr_io_traffic_t;

/* Errors: INVALID_ARGUMENT for a NULL executor or io other than HGR_INPUT or
 * HGR_OUTPUT, OUT_OF_RANGE for index. */
HGR_API hgr_status_t hgr_executor_io_traffic(const hgr_executor_t* executor, hgr_io_t io, size_t index,
                                             hgr_io_traffic_t* out_traffic);

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

/* ---- reports of the last run ----
 *
 * Each writer reads the last run through the getters above (so the executor must
 * have been created with options.profiling and its last run waited for, else
 * FAILED_PRECONDITION) and writes text to out, which it does not close; a NULL
 * executor or out is INVALID_ARGUMENT. Device timestamps are put on the host's CLOCK_MONOTONIC with
 * hgr_executor_clock_offset, measured anew by each call, so commands of different
 * devices line up; a device whose driver gives no usable timestamps (rusticl 22.3)
 * has its commands placed at their host enqueue time with a duration of 0, and
 * says so. A failed write to out is UNAVAILABLE. */

typedef struct hgr_profile_summary_options_t {
  /* Rows of the per-node table, most device time first; 0: every node. */
  size_t top_nodes;
} hgr_profile_summary_options_t;

/* Fills options with defaults: top_nodes 20 (what `hgr run --profile` shows
 * without --verbose). */
HGR_API void hgr_profile_summary_options_init(hgr_profile_summary_options_t* options);

/* Writes the profile as text tables: the totals (commands, nodes, device span,
 * device time, host enqueue time), then per device (commands, device time, share,
 * clock method), per op (nodes, device time, mean, share), per node (the
 * options->top_nodes with most device time) and per copy node (path, chunks, bytes,
 * span, GB/s). options may be NULL for the defaults. */
HGR_API hgr_status_t hgr_profile_write_summary(hgr_executor_t* executor, const hgr_profile_summary_options_t* options,
                                               FILE* out);

/* The same as one JSON object, every node: {"run": {...totals}, "devices": [...],
 * "ops": [...], "nodes": [...]}, times in nanoseconds; a node's start_ns and end_ns
 * count from the first command's start. */
HGR_API hgr_status_t hgr_profile_write_json(hgr_executor_t* executor, FILE* out);

/* A Chrome trace-event JSON file (Perfetto, chrome://tracing): a track per queue
 * that ran commands and one for the host's enqueueing, a slice per command (and per
 * node on the host track), flow arrows for dependencies across queues; times in
 * microseconds since the first event. */
HGR_API hgr_status_t hgr_profile_write_trace(hgr_executor_t* executor, FILE* out);

#ifdef __cplusplus
}
#endif

#endif /* HGR_PROFILE_H_ */
