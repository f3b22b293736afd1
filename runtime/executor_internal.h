/* The executor's internal structures, shared by plan.c (creation), storage.c,
 * transfer.c and executor.c (runs). */
#ifndef HGR_EXECUTOR_INTERNAL_H_
#define HGR_EXECUTOR_INTERNAL_H_

#include "graph_internal.h"
#include "hgr/executor.h"
#include "internal.h"
#include "ops.h"

/* An event and the executor queue it was enqueued on (or the queue whose context
 * it belongs to, for user events). */
typedef struct hgr__tracked_event_t {
  cl_event event; /* borrowed from executor->commands (see there); NULL when none */
  uint32_t queue;
  uint64_t seq;   /* its position on queue: once the queue's retired_seq reaches it,
                     it has completed and its reference may be gone, so it is ignored */
} hgr__tracked_event_t;

/* One in-order command queue of one device. */
typedef struct hgr__queue_t {
  cl_command_queue queue;
  size_t device_index; /* instance device */
  size_t context_group;
  cl_context context;  /* borrowed from the instance */
  uint32_t unflushed;  /* commands enqueued since the last clFlush */
  uint64_t seq;        /* commands enqueued so far */
  bool host_driven;    /* the device runs commands only while the host waits on them */
  bool fragile_failed_user_events; /* see hgr__device_t */
  uint64_t retired_seq; /* commands up to this position have completed and their
                          kept events were released (see retire in executor.c) */
  cl_event last;       /* the newest command's event (borrowed, like the storages'
                          trackers); in order, it covers all; NULL once retired */
} hgr__queue_t;

/* One storage id: the buffer and who touched it last, for ordering. */
typedef struct hgr__storage_t {
  bool used;           /* some entry refers to it */
  size_t device_index;
  uint64_t bytes;
  cl_mem mem;          /* what the kernels use: own_mem, or a caller's buffer bound to it */
  cl_mem own_mem;      /* the executor's allocation, or the source executor's (retained) */
  bool params;         /* holds a param: set by load_params and not since by set_input
                          or a binding, or borrowed (share_params_from) */
  bool shared;         /* lent to or borrowed from another executor: read-only */
  bool borrowed;       /* own_mem is the source executor's, not allocated here */
  hgr__tracked_event_t writer;   /* last writer */
  hgr__tracked_event_t* readers; /* readers since the last write, at most one per queue */
  uint32_t reader_count;
} hgr__storage_t;

/* Per used device: its queues. The compute queues are compute_queue to
 * compute_queue + compute_queue_count - 1 (kernel nodes, spread by dependency level);
 * the transfer queue takes copies into the device, inputs and outputs. A host-driven
 * device has one queue, which is all of them. */
typedef struct hgr__exec_device_t {
  size_t device_index;
  uint32_t compute_queue;       /* the first */
  uint32_t compute_queue_count;
  uint32_t transfer_queue;
  hgr_device_usage_t usage;
} hgr__exec_device_t;

typedef enum hgr__step_kind_t {
  HGR__STEP_KERNEL,
  HGR__STEP_COPY,
  HGR__STEP_NOP,
} hgr__step_kind_t;

typedef enum hgr__copy_path_t {
  HGR__COPY_DIRECT, /* same queue or same context: clEnqueueCopyBuffer */
  HGR__COPY_STAGED, /* read into host staging, bridge, write */
  HGR__COPY_MAPPED, /* map the source (in chunks), bridge, write, bridge back, unmap */
  HGR__COPY_MAPPED_DESTINATION, /* map the destination for writing (in chunks), bridge,
                                   read into it, bridge back, unmap */
} hgr__copy_path_t;

/* A program of one executor device and one kernel source. */
typedef struct hgr__program_t {
  size_t device_slot;
  const char* source; /* kernels/<source>.cl, or a user op's source name */
  cl_program program;
  char* key;          /* its program cache key */
  bool from_source;   /* compiled here (so worth storing once its kernels ran) */
  bool stored;        /* storing was tried */
} hgr__program_t;

/* A command of the last run, for profiling. */
typedef struct hgr__profiled_t {
  cl_event event; /* retained */
  uint32_t queue;
  uint32_t node_id;
  uint64_t host_ns;
} hgr__profiled_t;

/* One bound kernel launch of a step. */
typedef struct hgr__kernel_launch_t {
  cl_kernel kernel;
  cl_mem meta;            /* the launch's read-only shapes and strides, or NULL */
  hgr__launch_t launch;
  /* Which arguments are storages, to set them again when a buffer is bound. */
  uint32_t* storage_args; /* pairs: argument index, storage id */
  uint32_t storage_arg_count;
} hgr__kernel_launch_t;

/* One op node, bound once at creation. */
typedef struct hgr__step_t {
  uint32_t node_id;
  hgr__step_kind_t kind;
  size_t device_index;     /* where it runs (its outputs' device) */
  uint32_t queue;          /* the queue of its (last) command */
  uint32_t* in_storages;   /* storage id per input */
  uint32_t in_count;
  uint32_t* out_storages;  /* storage id per output */
  uint32_t out_count;
  /* kernels: the op's plan until bound, then its launches, enqueued in order */
  hgr__op_ctx_t plan;
  hgr__kernel_launch_t* launches;
  uint32_t launch_count;
  /* copies */
  hgr_pair_class_t pair_class;
  hgr__copy_path_t path;
  uint64_t copy_bytes;
  uint32_t src_queue;      /* staged/mapped: where the source is read or mapped */
  void* staging;           /* staged: host buffer (64-byte aligned) */
  uint64_t chunk_bytes;    /* mapped: bytes per chunk */
  uint32_t chunk_count;
  cl_event staging_free;   /* staged/mapped: user event in the source context, set when the
                              previous run's write has consumed the staging (or mapping) */
  /* the events that complete the step in this run (retained), to report failures:
   * one per step, or one per chunk of a mapped copy */
  cl_event* done;
  uint32_t done_count;
} hgr__step_t;

/* A cross-context dependency: a user event in the context of to_queue, set from
 * the source command's callback (or at once, if the source had completed). */
/* For a bridge into a host-driven device, the driver's callback only records the
 * source's status here and the host thread sets the user event: Oclgrind's objects
 * are not safe to touch from another thread (its reference counts are not atomic). */
typedef struct hgr__bridge_signal_t {
  atomic_int status; /* CL_RUNNING until the source completes */
  atomic_int refs;   /* the callback's and the bridge record's */
} hgr__bridge_signal_t;

typedef struct hgr__bridge_t {
  cl_event event;       /* the user event, retained */
  hgr__bridge_signal_t* signal; /* NULL unless to_queue is host-driven */
  cl_event source;      /* retained while the source's device is host-driven */
  uint32_t from_queue;
  uint32_t to_queue;
  uint64_t source_seq;  /* position of the source on from_queue */
  uint64_t needed_seq;  /* position on to_queue from which commands may wait on it */
  bool passes_failure;  /* a failed source fails it (see fragile_failed_user_events) */
} hgr__bridge_t;

/* A caller's memory or buffer bound to a graph input or output (executor.h). */
typedef enum hgr__bind_kind_t {
  HGR__BIND_NONE,
  HGR__BIND_BUFFER,         /* the caller's cl_mem replaces the storage's buffer */
  HGR__BIND_HOST_ZERO_COPY, /* a CL_MEM_USE_HOST_PTR buffer over the caller's memory
                               replaces it; each run maps and unmaps it to sync */
  HGR__BIND_HOST_COPY,      /* each run writes the caller's memory into the storage
                               (input) or reads the storage into it (output) */
} hgr__bind_kind_t;

typedef struct hgr__io_binding_t {
  hgr__bind_kind_t kind;
  void* host;     /* HOST_*: the caller's memory */
  size_t bytes;   /* the tensor's size */
  cl_mem mem;     /* BUFFER: the caller's (retained); ZERO_COPY: ours over host */
  uint32_t storage;
} hgr__io_binding_t;

/* Host memory that a non-blocking write reads from (set_input's copy of the
 * caller's data), freed once the write's queue has retired it. */
typedef struct hgr__held_host_t {
  void* memory;
  uint32_t queue;
  uint64_t seq;
} hgr__held_host_t;

/* One run, as hgr_fence_t: what completes it, and the outputs it still holds. */
struct hgr_fence_s {
  hgr_executor_t* executor; /* NULL once the executor was released */
  uint32_t refs;            /* the executor's until retired, and the caller's */
  uint64_t run;             /* 1 for the executor's first run */
  cl_event* events;         /* each used queue's last command of the run (retained) */
  uint32_t event_count;
  uint64_t* queue_seq;      /* per executor queue: the position of that command */
  uint64_t command_end;     /* absolute index just past the run's kept commands */
  bool retired;             /* completed, and its commands released */
  hgr_status_t failure;     /* owned; why it did not complete, or HGR_OK */
  cl_mem* snapshots;        /* per output: its values, copied before a later write
                               reused the storage; NULL while the storage holds them */
  bool exported;            /* snapshots were handed out: never pooled */
  hgr_fence_t* next;        /* the executor's fences, oldest first */
};

struct hgr_executor_s {
  hgr_instance_t* instance;
  hgr_graph_t* graph;
  bool plan_only;
  bool profiling;
  hgr_key_binding_t* keys;
  size_t key_count;
  hgr__exec_device_t* devices;
  size_t device_count;
  hgr__queue_t* queues;
  uint32_t queue_count;
  hgr__storage_t* storages; /* graph->storage_count */
  hgr__step_t* steps;
  uint32_t step_count;
  size_t* entry_device;     /* instance device index per entry */
  bool* input_set;          /* per input index */
  void** output_staging;    /* per output: host memory the driver reads into */
  void* entry_staging;      /* the same for hgr_executor_read_entry */
  size_t entry_staging_bytes;
  char** unused_params;     /* names of params that matched no input (last load) */
  size_t unused_param_count;
  hgr_copy_summary_t copies;
  bool run_in_flight;
  uint64_t run_count;
  hgr_fence_t* fences;      /* every run not yet retired, and fences the caller holds */
  hgr_fence_t** output_holder; /* per output: the fence whose values the storage holds
                                  while its caller may still read them, or NULL */
  cl_mem** snapshot_pool;   /* per output: spare snapshot buffers */
  uint32_t* snapshot_pool_count;
  hgr__held_host_t* held_host;
  uint32_t held_host_count, held_host_capacity;
  hgr__io_binding_t* input_bindings;  /* per input */
  hgr__io_binding_t* output_bindings; /* per output */
  /* Scratch wait list, large enough for any one command: per storage it touches, its
   * writer and at most one reader per queue, plus two bridges. */
  cl_event* wait;
  uint32_t wait_capacity;
  /* Bridges made since every queue was last idle: a failure fails the unset ones so
   * nothing waits on them forever, host-driven queues are driven only as far as
   * their incoming bridges allow, and their events are released once idle. */
  hgr__bridge_t* bridges;
  uint32_t bridge_count, bridge_capacity;
  /* Every command event since every queue was last idle, retained: PoCL 3.1 frees a
   * command that a failed dependency terminated while commands after it on the
   * queue still refer to it, unless the application holds a reference. These are
   * also the references that the storages' writer and readers and each queue's last
   * event borrow (taking and dropping one per access cost about 8 driver calls per
   * node), so those are cleared whenever these are dropped. Room for a whole run is
   * reserved before it enqueues anything (hgr__commands_reserve), so keeping never
   * fails halfway and nothing borrows an event that is not kept. */
  cl_event* commands;
  uint32_t* command_steps;  /* per kept event: the step that enqueued it, or UINT32_MAX */
  uint32_t command_count, command_capacity;
  uint64_t commands_base;   /* absolute index of commands[0]: runs in flight retire
                               their commands from the front (see retire) */
  uint64_t scan_from;       /* absolute index: commands before it completed well */
  uint32_t enqueue_step;    /* the step being enqueued; UINT32_MAX outside */
  uint32_t commands_per_run; /* an upper bound on what one run keeps; 0 until known */
  /* Set once a command failed on a device: OpenCL leaves the queues of that context
   * undefined (some drivers never complete commands that waited on a failed one), so
   * the executor refuses further work and its release waits for nothing. */
  hgr_status_t failure;
  /* Test hook (hgr__executor_fail_node): the node whose next command is made to fail
   * on the device with fail_code, by a user event in its wait list. */
  uint32_t fail_node;
  cl_int fail_code;
  cl_event injected; /* the last injected failure, retained */
  /* profiling: every command of the last run (retained), and each step's host
   * enqueue window (2 per step) */
  hgr__profiled_t* profiled;
  uint32_t profiled_count, profiled_capacity;
  bool profile_complete;   /* the recorded run was waited for */
  bool stepping;           /* inside hgr_executor_run_stepwise */
  uint64_t* step_host_ns;
  /* programs built for this executor: one per (device, kernel source) used */
  hgr__program_t* programs;
  size_t program_count, program_capacity;
  hgr_program_cache_t program_cache;
  hgr_kernel_library_t* kernels; /* the user's ops (retained), or NULL */
  hgr_program_stats_t program_stats;
  hgr_log_fn log;
  void* log_user;
};

/* Makes node_id's command fail on the device with code (negative) in every later
 * run, through a user event set to that status; UINT32_MAX switches it off. For
 * tests of failure propagation. */
void hgr__executor_fail_node(hgr_executor_t* executor, uint32_t node_id, cl_int code);

/* The executor's record of instance device device_index (plan.c); NULL when the
 * executor does not use that device. */
hgr__exec_device_t* hgr__exec_device(hgr_executor_t* executor, size_t device_index);

/* ---- profile.c ---- */
uint64_t hgr__monotonic_ns(void);
/* Records a command just enqueued on queue (with profiling, during a run). */
hgr_status_t hgr__profile_command(hgr_executor_t* executor, uint32_t queue, cl_event event);
/* Releases the recorded commands (at the start of a run and at release). */
void hgr__profile_reset(hgr_executor_t* executor);

/* ---- storage.c ---- */

/* Owners and sizes of the storages, and per device what they take. With source
 * (options.share_params_from; may be NULL), first checks that it runs the same
 * graph and chooses the storages to borrow from it (the log says what is shared and
 * what not, and why); those count as shared_bytes, not storage_bytes. */
hgr_status_t hgr__storage_plan(hgr_executor_t* executor, const hgr_executor_t* source);
/* One cl_mem per storage: the source's, retained, for a borrowed one (after
 * waiting for the source's work in flight), else a new one. */
hgr_status_t hgr__storage_allocate(hgr_executor_t* executor, hgr_executor_t* source);
/* Once the executor is complete: its borrowed storages become read-only in the
 * source too. */
void hgr__storage_lend(hgr_executor_t* executor, hgr_executor_t* source);
void hgr__storage_release(hgr_executor_t* executor);

/* ---- params (executor.c) ---- */

/* hgr_executor_load_params; skip_shared passes over inputs whose buffer is shared
 * (creation, where they hold the source's params already) instead of refusing. */
hgr_status_t hgr__executor_load_params(hgr_executor_t* executor, const hgr_params_t* params, bool skip_shared,
                                       size_t* out_unused_count);

/* ---- ordering (executor.c) ---- */

/* Appends to executor->wait (at *wait_count) the events a command on `queue` must
 * wait for to access storage: its last writer (always) and, when `writing`, its
 * readers. Events on `queue` itself are skipped (in-order), duplicates dropped, and
 * producer queues with unflushed work are flushed. */
hgr_status_t hgr__order_storage(hgr_executor_t* executor, uint32_t storage_id, bool writing,
                                uint32_t queue, uint32_t* wait_count);
/* Records that `event` (on queue) read or wrote storage_id. Borrows event, which
 * must be the command that hgr__queue_enqueued noted last on queue. */
void hgr__record_access(hgr_executor_t* executor, uint32_t storage_id, bool writing,
                        cl_event event, uint32_t queue);
/* Makes room in executor->commands for `extra` more events, so that keeping them
 * cannot fail. */
hgr_status_t hgr__commands_reserve(hgr_executor_t* executor, uint32_t extra);
/* Keeps a reference to event until every queue is idle (see commands above). */
hgr_status_t hgr__keep_event(hgr_executor_t* executor, cl_event event);
/* Notes a command enqueued on queue with event (kept, as above); flushes every few
 * commands. */
hgr_status_t hgr__queue_enqueued(hgr_executor_t* executor, uint32_t queue, cl_event event);
/* Flushes queue if it has unflushed commands. */
hgr_status_t hgr__queue_flush(hgr_executor_t* executor, uint32_t queue);

/* ---- plan.c ---- */

/* Sets again the kernel arguments that name storage_id (after its mem changed). */
hgr_status_t hgr__storage_rebind(hgr_executor_t* executor, uint32_t storage_id);
/* Releases a step's kernels, their meta buffers and any plan not yet bound. */
void hgr__step_release_kernels(hgr__step_t* step);

/* ---- program_cache.c ---- */
/* Builds (or loads from the program cache) every program the planned steps use,
 * concurrently across devices. */
hgr_status_t hgr__programs_build(hgr_executor_t* executor);
/* The program of kernels/<source_name>.cl for executor device device_slot (built now
 * if hgr__programs_build did not). */
hgr_status_t hgr__program_get(hgr_executor_t* executor, size_t device_slot, const char* source_name,
                              cl_program* out_program);
/* Stores the binaries of programs compiled from source, once (after a run). */
void hgr__programs_store(hgr_executor_t* executor);
void hgr__programs_release(hgr_executor_t* executor);

/* ---- transfer.c ---- */

/* Chooses the path and allocates staging for a copy step (at creation). */
hgr_status_t hgr__transfer_plan(hgr_executor_t* executor, hgr__step_t* step);
/* Enqueues one copy step of a run. */
hgr_status_t hgr__transfer_enqueue(hgr_executor_t* executor, hgr__step_t* step);
/* Frees a copy step's staging and events (at release, after all work finished). */
void hgr__transfer_release(hgr__step_t* step);

/* The event's execution status; CL_QUEUED (pending) when it cannot be queried. */
cl_int hgr__event_status(cl_event event);

/* Makes a user event in the context of queue `to_queue` that completes (or fails,
 * with the same negative status) when `source`, just enqueued on `from_queue`,
 * completes: from the source's event callback, or at once if it already has. The
 * next command enqueued on to_queue may wait on it. *out_bridge is retained for
 * the caller. */
hgr_status_t hgr__bridge_event(hgr_executor_t* executor, cl_event source, uint32_t from_queue,
                               uint32_t to_queue, const char* what, cl_event* out_bridge);
/* Fails every bridge that is not set yet (after a device failure), so that no
 * command waits on one forever. */
void hgr__bridges_fail_unset(hgr_executor_t* executor);
/* Drops the executor's records of its bridges (at release), releasing their events
 * when release_events is set, which the caller does once every command that waits
 * on them has completed: PoCL 3.1 and Oclgrind do not retain the user events their
 * commands wait on (pocl/pocl#1431), so releasing one earlier can free it under them.
 * Without release_events the events are left to the driver. */
void hgr__bridges_forget(hgr_executor_t* executor, bool release_events);
/* Drops the records of set bridges whose waiting command has retired (see retire in
 * executor.c), releasing their events. */
void hgr__bridges_retire(hgr_executor_t* executor);
/* Makes host-driven queues run as far as their incoming bridges allow: up to each
 * source of an outgoing bridge in turn, then to their last command. Never blocks on
 * a command that waits for an unset bridge. */
hgr_status_t hgr__bridges_drive(hgr_executor_t* executor);

#endif /* HGR_EXECUTOR_INTERNAL_H_ */
