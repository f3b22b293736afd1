/* The executor: its parts, each owned by one file, and the functions the executor's
 * own files call on each other. Layers, lowest first; a file calls only files of its
 * own or a lower layer:
 *
 *   queue.c       the command queues, flushing, event status
 *   bridge.c      cross-context user events (bridge.h)
 *   order.c       ordering by storage and keeping command events (order.h)
 *   device_keys.c  device keys -> devices, the executor's devices (device_keys.h)
 *   storage.c     the storage pool and rebinding of kernel arguments (storage.h)
 *   program_cache.c  the programs the steps use, built or loaded from the cache
 *   tune_store.c  the tuning file's records (tune_store.h), through the store (base/store.h)
 *   remote.c      copies between ranks: this rank's half, through the transport
 *   transfer.c    copy steps per device pair
 *   plan.c        steps: each node bound to a device, a queue and its kernels, and
 *                 the schedule (which accesses look at the order's trackers)
 *   launch.c      enqueueing one step
 *   wait.c        waiting for events, the failure scan
 *   warm.c        kernel warm-up at creation
 *   readback.c    reading or exporting one storage to the host, traffic counters
 *   fence.c       runs as fences, output snapshots (public hgr_fence_*)
 *   host_io.c     inputs, outputs, caller-memory and device-buffer bindings, params
 *   profile.c     profiling and inspection getters (reads only)
 *   executor.c    create, run, stepping, wait, release
 *   profile_report.c  the reports of hgr/profile.h, through the public API alone
 *   tune.c        tile choices of the nodes, and the tuning pass (hgr/tune.h)
 *
 * The lower five take only their own parts; the rest take the executor.
 * scripts/layers.py checks this order (CTest runtime_calls_go_one_way). */
#ifndef HGR_EXECUTOR_INTERNAL_H_
#define HGR_EXECUTOR_INTERNAL_H_

#include <stdatomic.h>

#include "graph_internal.h"
#include "hgr/executor.h"
#include "hgr/opencl.h"
#include "internal.h"
#include "ops.h"
#include "order.h"
#include "device_keys.h"
#include "storage.h"

/* ---- steps (plan.c, transfer.c, launch.c) ---------------------------------------- */

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
  HGR__COPY_REMOTE, /* between ranks: this rank's half, step->remote (remote.c) */
} hgr__copy_path_t;

/* One bound kernel launch of a step. */
typedef struct hgr__kernel_launch_t {
  cl_kernel kernel;
  cl_mem meta;            /* the launch's read-only shapes and strides, or NULL */
  hgr__launch_t launch;
} hgr__kernel_launch_t;

/* A copy between ranks, this rank's half (remote.c). */
typedef struct hgr__remote_chunk_t {
  cl_event user;     /* the latest run's user event: sent (sending) or arrived (receiving) */
  cl_event written;  /* receiving: the latest run's write of the chunk */
  void* mapping;     /* mapped: the latest run's mapping of the chunk */
} hgr__remote_chunk_t;

typedef struct hgr__remote_copy_t {
  hgr_allocator_t allocator; /* the executor's: the copy, its staging and chunks, and
                                its transfer records (freed on driver and transport
                                threads, maybe after the executor went) */
  const hgr_transport_t* transport;
  int peer;                 /* the other rank */
  bool sending;             /* this rank holds the source */
  bool mapped;              /* through mappings of the buffer, no staging (remote.c) */
  uint32_t tag_base;        /* chunk k travels under tag_base + k */
  char* staging;            /* host staging, the whole value; NULL when mapped */
  uint64_t bytes, chunk_bytes;
  uint32_t chunk_count;
  hgr__remote_chunk_t* chunks;
  atomic_int* pending;      /* the executor's count of transfers in flight */
  atomic_int failed;        /* a transfer of this copy failed */
} hgr__remote_copy_t;

/* One op node, bound once at creation. */
typedef struct hgr__step_t {
  uint32_t node_id;
  hgr__step_kind_t kind;
  size_t device_index;     /* where it runs (its outputs' device) */
  uint32_t queue;          /* the queue of its (last) command */
  uint32_t* in_storages;   /* storage slot per input */
  uint32_t in_count;
  uint32_t* out_storages;  /* storage slot per output */
  uint32_t out_count;
  /* kernels: the op's plan until bound, then its launches, enqueued in order */
  hgr__op_ctx_t plan;
  hgr__kernel_launch_t* launches;
  uint32_t launch_count;
  cl_mem scratch;          /* the node's scratch buffer (HGR__ARG_SCRATCH), or NULL */
  hgr_tile_choice_t tile;  /* the plan's tile choice (hgr/tune.h), kept once the plan is freed */
  /* copies */
  hgr_pair_class_t pair_class;
  hgr__copy_path_t path;
  uint64_t copy_bytes;
  uint32_t src_queue;      /* staged/mapped: where the source is read or mapped */
  void* staging;           /* staged: host buffer (the executor allocator's) */
  uint64_t chunk_bytes;    /* mapped: bytes per chunk */
  uint32_t chunk_count;
  cl_event staging_write;  /* staged: the previous run's write from the staging (retained) */
  hgr__remote_copy_t* remote; /* a copy between ranks: this rank's half; NULL otherwise */
  uint64_t staging_write_seq; /* its position on its queue */
  /* the events that complete the step in this run (retained), for profiles and copy
   * paths: one per launch (profiling) or chunk of a mapped copy; kernel steps of a
   * run without profiling leave them NULL (their kept event is the order's) */
  cl_event* done;
  uint32_t done_count;
  /* The schedule (plan.c, hgr__steps_schedule), the same for every run: */
  bool tracked;            /* its accesses go into the trackers (order.h): a step off
                              its queue, or something after the run, waits for it */
  uint32_t* checks;        /* the accesses whose trackers may hold another queue's
                              command: storage slot << 1 | writing */
  uint32_t check_count;
} hgr__step_t;

/* ---- the program pool (program_pool.c) --------------------------------------------- */

/* hgr_program_pool_create with allocator for the pool, its table and its keys (the
 * model object's pool takes its instance's); hgr_program_pool_release frees with it. */
hgr_status_t hgr__program_pool_create_in(hgr_allocator_t allocator, hgr_program_pool_t** out_pool);

/* The pooled program of key on an instance device (retained for the caller), or NULL
 * (also for a NULL pool). */
cl_program hgr__program_pool_find(hgr_program_pool_t* pool, const hgr_instance_t* instance, size_t device_index,
                                  const char* key);
/* Whether kernels (names, each followed by ';'; NULL: none) has kernel. */
bool hgr__kernels_have(const char* kernels, const char* kernel);
/* The pooled program of hgr's kernels on an instance device that has kernel
 * (retained for the caller; *out_kernels, from allocator, its kernels as
 * hgr__program_t.kernels lists them), or NULL (also for a NULL pool or out of memory). */
cl_program hgr__program_pool_find_kernel(hgr_program_pool_t* pool, const hgr_instance_t* instance,
                                         size_t device_index, const char* kernel, hgr_allocator_t allocator,
                                         char** out_kernels);
/* Keeps program (retained) under key, with kernels (hgr's kernels: as
 * hgr__program_t.kernels; NULL for a user's program) and the options it was built
 * with, unless one is kept already. */
void hgr__program_pool_keep(hgr_program_pool_t* pool, const hgr_instance_t* instance, size_t device_index,
                            const char* key, const char* kernels, const char* options, cl_program program);
/* Whether the pool holds a program of hgr's kernels for an instance device. */
bool hgr__program_pool_has_device(hgr_program_pool_t* pool, const hgr_instance_t* instance, size_t device_index);
/* Whether new programs of hgr's kernels for executors of the pool also hold each
 * launch's siblings (hgr__launch_plan_t.siblings: the kernels its op picks at other
 * shapes): set by a model object whose shapes vary, so that a new shape builds
 * nothing. Off by default and for a NULL pool. */
void hgr__program_pool_set_siblings(hgr_program_pool_t* pool, bool siblings);
bool hgr__program_pool_siblings(hgr_program_pool_t* pool);
/* Calls fn for each pooled program of hgr's kernels on instance's devices (the pool
 * locked meanwhile), until fn fails. */
typedef hgr_status_t (*hgr__pooled_program_fn_t)(void* user, size_t device_index, const char* key,
                                                 const char* kernels, const char* options, cl_program program);
hgr_status_t hgr__program_pool_each(hgr_program_pool_t* pool, const hgr_instance_t* instance,
                                   hgr__pooled_program_fn_t fn, void* user);

/* ---- programs (program_cache.c) --------------------------------------------------- */

/* A program of one executor device. hgr's own (the library's: kernels of the
 * embedded kernels/<name>.cl sources and generated ones, fused_elementwise's) is one
 * program of the kernels the executor's launches use there that no program of the
 * executor's pool had, the sources' other kernels left out (kernels/select.h), or a
 * pooled one; a user op's source is a program of its own, built whole. */
typedef struct hgr__program_t {
  size_t device_slot;
  const char* source; /* a user op's source name; NULL for the library's */
  char* kernels;      /* the library's: its kernels' names, each followed by ';' */
  char* text;         /* the library's, until built here: its sources' texts and generated kernels */
  char* options;      /* the library's, until built here: the options selecting its kernels */
  char* origin;       /* the library's: what it holds, for messages ("kernels/conv.cl, kernels/pool.cl
                         and 2 generated kernels: 5 kernels") */
  cl_program program;
  char* key;          /* its program cache key */
  bool from_source;   /* compiled here (so worth storing once its kernels ran) */
  bool stored;        /* storing was tried */
} hgr__program_t;

typedef struct hgr__programs_t {
  hgr_allocator_t allocator;      /* the executor's: the table, its keys and texts */
  hgr__program_t* programs; /* per device: the library's (one built here, those of the
                               pool), each user source's, and one per kernel a re-plan
                               took beyond those */
  size_t count, capacity;
  hgr_program_cache_t cache;
  hgr_program_pool_t* pool;      /* options.program_pool (borrowed), or NULL */
  hgr_kernel_library_t* kernels; /* the user's ops (retained), or NULL */
  hgr_program_stats_t stats;
} hgr__programs_t;

/* ---- host I/O (host_io.c) ------------------------------------------------------------ */

/* A caller's memory or buffer bound to a graph input or output (executor.h). */
typedef enum hgr__bind_kind_t {
  HGR__BIND_NONE,
  HGR__BIND_BUFFER,         /* the caller's cl_mem replaces the storage's buffer */
  HGR__BIND_HOST_ZERO_COPY, /* a CL_MEM_USE_HOST_PTR buffer over the caller's memory
                               replaces it; each run maps and unmaps it to sync */
  HGR__BIND_HOST_COPY,      /* each run writes the caller's memory into the storage
                               (input) or reads the storage into it (output) */
  HGR__BIND_DEVICE_COPY,    /* an input: each run copies the caller's device buffer
                               (source, the storage's context) into the storage; an
                               output whose storage holds an input or a param: each
                               run copies the storage into the caller's buffer (source) */
  HGR__BIND_STAGED_COPY,    /* an input: each run reads the caller's device buffer
                               (source, another context) into host staging on
                               source_queue, and writes that into the storage after a
                               bridge */
} hgr__bind_kind_t;

typedef struct hgr__io_binding_t {
  hgr__bind_kind_t kind;
  void* host;     /* HOST_*: the caller's memory */
  size_t bytes;   /* the tensor's size */
  cl_mem mem;     /* BUFFER: the caller's (retained); ZERO_COPY: ours over host */
  uint32_t storage;
  /* A device buffer (hgr_executor_bind_device_buffer): */
  cl_event ready;   /* what the next run's first access waits for (retained); NULL
                       once a run took it */
  cl_mem source;    /* DEVICE_COPY, STAGED_COPY: the caller's buffer (retained; an output's destination) */
  cl_command_queue source_queue; /* STAGED_COPY: a queue in source's context (ours) */
  bool source_host_driven;       /* STAGED_COPY: source_queue runs only while waited on */
  bool device;      /* bound to a device buffer (any of the kinds above) */
} hgr__io_binding_t;

typedef struct hgr__host_io_t {
  bool* input_set;                    /* per input index */
  hgr__io_binding_t* input_bindings;  /* per input */
  hgr__io_binding_t* output_bindings; /* per output */
  char** unused_params;               /* names of params that matched no input (last load) */
  size_t unused_param_count;
} hgr__host_io_t;

/* What crossed between host and device per input and output (hgr_io_traffic_t),
 * counted by readback.c's hgr__traffic and read by profile.c. */
typedef struct hgr__traffic_t {
  hgr_io_traffic_t* inputs;  /* per input */
  hgr_io_traffic_t* outputs; /* per output */
} hgr__traffic_t;

/* Host memory the driver reads into (readback.c): never the caller's memory, since
 * after a device failure a read may stay pending when the call returns. */
typedef struct hgr__staging_t {
  void** outputs;        /* per output */
  void* entry;           /* for hgr_executor_read_entry */
  size_t entry_bytes;
} hgr__staging_t;

/* ---- fences (fence.c) -------------------------------------------------------------- */

/* One run, as hgr_fence_t: what completes it, and the outputs it still holds. */
struct hgr_fence_s {
  hgr_allocator_t allocator; /* the executor's, kept: a fence may outlive it */
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
  bool* exported;           /* per output: its snapshot was handed out
                               (hgr_fence_output_buffer), so it is never pooled */
  hgr_fence_t* next;        /* the executor's fences, oldest first */
};

typedef struct hgr__fence_list_t {
  hgr_fence_t* first;           /* every run not yet retired, and fences the caller holds */
  hgr_fence_t** output_holder;  /* per output: the fence whose values the storage holds
                                   while its caller may still read them, or NULL */
  cl_mem** snapshot_pool;       /* per output: spare snapshot buffers */
  uint32_t* snapshot_pool_count;
} hgr__fence_list_t;

/* ---- profiling (profile.c reads it) -------------------------------------------------- */

typedef struct hgr__profile_t {
  bool enabled;          /* options.profiling */
  bool complete;         /* the recorded run was waited for */
  uint64_t* step_host_ns; /* per step, its host enqueue window (2 per step) */
} hgr__profile_t;

struct hgr_executor_s {
  hgr_allocator_t allocator; /* the instance's: the executor and everything it owns */
  hgr_instance_t* instance;
  hgr_graph_t* graph;
  bool plan_only;
  hgr__device_keys_t device_keys;
  hgr__order_t order;
  hgr__storage_pool_t pool;
  hgr__step_t* steps;
  uint32_t step_count;
  hgr_copy_summary_t copies;
  uint32_t commands_per_run; /* an upper bound on what one run keeps; 0 until known */
  hgr__programs_t programs;
  hgr__tune_table_t tuning;  /* the tuning file's records (tune_store.h), empty when off */
  hgr_tuning_mode_t tuning_mode;
  uint32_t tuning_candidate;
  hgr__host_io_t io;
  hgr__traffic_t traffic;
  hgr__staging_t staging;
  hgr__fence_list_t fences;
  hgr__profile_t profile;
  const hgr_transport_t* transport; /* options.transport, or NULL */
  atomic_int remote_pending; /* transfers between ranks the transport holds */
  bool run_in_flight;
  bool stepping;             /* inside hgr_executor_run_stepwise */
  uint64_t run_count;
  /* Set once a command failed on a device: OpenCL leaves the queues of that context
   * undefined (some drivers never complete commands that waited on a failed one), so
   * the executor refuses further work and its release waits for nothing. */
  hgr_status_t failure;
  hgr_log_fn log;
  void* log_user;
};

/* ---- program_cache.c ---- */
/* Builds (or loads from the program cache) every program the planned steps use,
 * concurrently across devices. */
hgr_status_t hgr__programs_build(hgr_executor_t* executor);
/* The program with the kernel of launch plan (of op's source unless the plan names
 * one) for executor device device_slot: one hgr__programs_build collected, else
 * built now (a program of that kernel alone, or the user source's). */
hgr_status_t hgr__program_get(hgr_executor_t* executor, size_t device_slot, const hgr__op_t* op,
                              const hgr__launch_plan_t* plan, cl_program* out_program);
/* A hash of the embedded kernel library (every kernels/<name>.cl, as embedded):
 * what a bundle's programs were built from (hgr/model.h). */
uint64_t hgr__kernel_library_hash(void);
/* Program cache entries (base/store.h: the binary behind a header with key and a
 * checksum), as the cache and bundles (hgr/model.h) keep them. hgr__program_entry:
 * program's binary (built for one device) as an entry (*out_entry from allocator).
 * hgr__program_from_entry: the program of an entry for device, built with options;
 * errors say why the entry is unusable (not an entry, another key, a corrupt one,
 * one the driver refuses). */
hgr_status_t hgr__program_entry(hgr_allocator_t allocator, cl_program program, const char* key,
                                unsigned char** out_entry, size_t* out_size);
hgr_status_t hgr__program_from_entry(const hgr__device_t* device, cl_context context, const void* entry,
                                     size_t size, const char* key, const char* options, cl_program* out_program);
/* Stores the binaries of programs compiled from source, once (after a run). */
void hgr__programs_store(hgr_executor_t* executor);
void hgr__programs_release(hgr__programs_t* programs);

/* ---- plan.c ---- */
/* Creates the queues, plans every step (device, storages, the op's launches), assigns
 * queues, plans the copies and checks the memory budget. */
hgr_status_t hgr__steps_plan(hgr_executor_t* executor, const hgr_executor_options_t* options);
/* Creates every kernel step's kernels and sets their arguments. */
hgr_status_t hgr__steps_bind(hgr_executor_t* executor);
/* Computes the schedule of every step (hgr__step_t): which steps' accesses go into
 * the trackers and which accesses need a look at them, by replaying one run's
 * accesses over the steps' queues (after hgr__steps_bind). */
hgr_status_t hgr__steps_schedule(hgr_executor_t* executor);
/* Releases every step's kernels, events and copy resources, and the steps. */
void hgr__steps_release(hgr_executor_t* executor);

/* ---- transfer.c ---- */
/* Chooses the path and allocates staging for a copy step (at creation). */
hgr_status_t hgr__transfer_plan(hgr_executor_t* executor, hgr__step_t* step);
/* Enqueues one copy step of a run. */
hgr_status_t hgr__transfer_enqueue(hgr_executor_t* executor, hgr__step_t* step);
/* Frees a copy step's staging (from the executor's allocator) and events (at release,
 * after all work finished). */
void hgr__transfer_release(const hgr_executor_t* executor, hgr__step_t* step);

/* ---- remote.c ---- */
/* Plans step's half of a copy between this rank and rank peer: staging, chunks. */
hgr_status_t hgr__remote_plan(hgr_executor_t* executor, hgr__step_t* step, int peer, bool sending);
/* Enqueues it for one run. */
hgr_status_t hgr__remote_enqueue(hgr_executor_t* executor, hgr__step_t* step, const char* label);
/* DEVICE_FAILURE naming the first copy between ranks whose transfer failed. */
hgr_status_t hgr__remote_failure(const hgr_executor_t* executor);
/* Waits (bounded) until the transport holds no transfer of this executor; false if
 * some never ended. */
bool hgr__remote_settle(hgr_executor_t* executor);
/* Frees a step's half of a copy between ranks; with settled false, leaves it (a
 * transfer may still write into its staging). */
void hgr__remote_release(hgr__step_t* step, bool settled);

/* ---- launch.c ---- */
/* Enqueues step s of a run: its kernels, or its copy. */
hgr_status_t hgr__step_enqueue(hgr_executor_t* executor, uint32_t s);
/* An upper bound on the events one run keeps. */
uint32_t hgr__commands_per_run(hgr_executor_t* executor);

/* ---- wait.c ---- */
/* Waits until every event in events has completed, or until a node's command (kept
 * before absolute index limit) has failed; see wait.c. */
hgr_status_t hgr__await_events(hgr_executor_t* executor, const cl_event* events, uint32_t count, uint64_t limit);
/* The first kept command before absolute index limit that failed, named by its step. */
hgr_status_t hgr__find_failure(hgr_executor_t* executor, uint64_t limit);
/* Makes the executor refuse further work after a device failure, failing every unset
 * bridge so no consumer waits forever; returns failure. */
hgr_status_t hgr__fail_executor(hgr_executor_t* executor, hgr_status_t failure);
/* FAILED_PRECONDITION after a device failure. */
hgr_status_t hgr__check_usable(const hgr_executor_t* executor);
/* After a device failure: gives the commands that can still finish up to a second to
 * do so. True when every queue drained. */
bool hgr__drain_after_failure(hgr_executor_t* executor);

/* ---- warm.c ---- */
/* Launches each distinct kernel launch once (per mode, hgr_warm_up_t) and waits for
 * them, then stores the programs compiled at this creation; see warm.c. */
hgr_status_t hgr__kernels_warm(hgr_executor_t* executor, hgr_warm_up_t mode);

/* ---- readback.c ---- */
/* FAILED_PRECONDITION when entry_id (what, index 'name': "input 0 'x'") lives on
 * another rank's device. */
hgr_status_t hgr__check_here(const hgr_executor_t* executor, uint32_t entry_id, const char* what, size_t index,
                             const char* name);
/* The storage slot of output index. */
uint32_t hgr__output_storage(const hgr_executor_t* executor, size_t index);
/* The transfer queue of the device that owns storage. */
uint32_t hgr__transfer_queue_of(const hgr_executor_t* executor, uint32_t storage);
/* The host memory output index is read through. */
hgr_status_t hgr__output_staging(hgr_executor_t* executor, size_t index, size_t bytes, void** out_staging);
/* Reads bytes of mem (storage's buffer, or a copy of it on the same device) into data
 * through staging; when ordered, after storage's writer. `what` names the tensor. */
hgr_status_t hgr__read_into(hgr_executor_t* executor, uint32_t storage, cl_mem mem, bool ordered, void* staging,
                            void* data, size_t bytes, const char* what);
/* Fills out with mem and a marker on storage's transfer queue that completes once
 * the commands before it there (and, when ordered, storage's writer) have. */
hgr_status_t hgr__export_buffer(hgr_executor_t* executor, uint32_t storage, cl_mem mem, bool ordered, size_t bytes,
                                hgr_device_buffer_t* out_buffer);
/* FAILED_PRECONDITION for a plan-only executor (no buffers) or after a device
 * failure. */
hgr_status_t hgr__check_buffers(const hgr_executor_t* executor);
/* The traffic record of input or output index (hgr_io_traffic_t), for the caller to
 * count into; a record nobody reads when the tables are missing (creation ran out
 * of memory) or index is out of range. */
hgr_io_traffic_t* hgr__traffic(hgr_executor_t* executor, hgr_io_t io, size_t index);
/* Allocates the tables (at creation) and frees them (at release). */
hgr_status_t hgr__traffic_create(hgr_executor_t* executor);
void hgr__traffic_release(hgr_executor_t* executor);
/* Checks a host transfer of input or output index ("what") of info's tensor. */
hgr_status_t hgr__check_io(const hgr_executor_t* executor, const hgr_tensor_info_t* info, const char* what,
                           size_t index, const void* data, size_t bytes);

/* ---- fence.c ---- */
/* A fence for the run just enqueued; the executor holds one reference until it
 * retires the run. */
hgr_status_t hgr__fence_create(hgr_executor_t* executor, hgr_fence_t** out_fence);
/* Retires the runs up to and including `through` (NULL: every run), whose commands
 * have all completed, oldest first; then the commands they cover. */
void hgr__fences_retire(hgr_executor_t* executor, hgr_fence_t* through);
/* Retires the oldest runs that completed without a failure, without waiting. */
void hgr__fences_retire_completed(hgr_executor_t* executor);
/* Before storage (UINT32_MAX: every storage) is written: the fences holding an
 * output in it get their own copy. */
hgr_status_t hgr__fences_release_holders(hgr_executor_t* executor, uint32_t storage);
/* Makes fence the holder of every output (a fenced run was just enqueued). */
void hgr__fences_hold_outputs(hgr_executor_t* executor, hgr_fence_t* fence);
/* At executor release: fences outlive it with what they know; their copies go. */
void hgr__fences_detach(hgr_executor_t* executor);

/* ---- host_io.c ---- */
hgr_status_t hgr__host_io_create(hgr_executor_t* executor);
/* A host binding's transfer of one run (inputs before, outputs after its steps). */
hgr_status_t hgr__host_io_sync_bindings(hgr_executor_t* executor, bool inputs);
/* FAILED_PRECONDITION naming the first input never set. */
hgr_status_t hgr__host_io_check_inputs_set(const hgr_executor_t* executor);
/* hgr_executor_load_params; skip_shared passes over inputs whose buffer is shared
 * (creation, where they hold the source's params already) instead of refusing. */
hgr_status_t hgr__host_io_load_params(hgr_executor_t* executor, const hgr_params_t* params, bool skip_shared,
                                      size_t* out_unused_count);
/* Marks the inputs whose storage is borrowed (share_params_from) as set. */
void hgr__host_io_mark_shared_inputs(hgr_executor_t* executor);
void hgr__host_io_release(hgr_executor_t* executor);

#endif /* HGR_EXECUTOR_INTERNAL_H_ */
