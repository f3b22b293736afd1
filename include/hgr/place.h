/* hgr — placement at load time: which device runs each node, the copies between
 * devices, and the memory plan per device (docs/placement.md).
 *
 * hgr_place takes a graph that carries no placement (from the builder,
 * hgr/builder.h) or a TVM graph whose own device keys and `__copy` nodes are to be
 * discarded, the devices to use in priority order and rules, and returns a new,
 * ordinary TVM graph: every node on one device (a device key per device, with the
 * key -> device bindings recorded in the graph), one `__copy` per (value, consuming
 * device), and storage ids planned per device. hgr_executor_create runs it with no
 * bindings; hgr_graph_write_json writes it so that `hgr run OUT.json` reproduces it.
 *
 * How a node's device is chosen, in order:
 *   1. Rules, applied in order (a later rule wins): every node of an op, node names
 *      matching a shell glob, or a range of node ids. A rule that names a device
 *      that cannot run a node it matches is INVALID_ARGUMENT naming both.
 *   2. The policy for the nodes no rule placed: FIRST, the first listed device that
 *      can run the node; AUTO, cost-based list scheduling (earliest finish time, as
 *      HEFT and StarPU's dmda), never predicted slower than the best single device;
 *      STAGES, N contiguous stages of balanced cost on the first N devices, for
 *      pipelined runs.
 *   3. Fallback: a device "can run" a node when the op exists there (built-in and
 *      the device compiles, or in the kernel library for that device), its dtypes
 *      are supported (fp16, fp64) and its work-group and local-memory needs fit. A
 *      policy's choice that cannot run the node falls back to the next device that
 *      can; every fallback is listed with its reason.
 * AUTO and STAGES use a cost model: the time of each (device, op, shapes, attrs),
 * measured once by a calibration run and kept in a cost cache on disk next to the
 * program cache, and per device pair a copy latency and bandwidth.
 *
 * Across ranks (docs/placement.md, "Across ranks"): a spec may name a device of
 * another process, "r1/pocl:0" (hgr_spec_rank). A device of the list is then a
 * (rank, device) pair: "r0/pocl:0" and "r1/pocl:0" are two devices. A spec without
 * a rank counts as rank 0 when compared with specs that have one. Every rank calls
 * hgr_place with the same inputs and gets the same placement (nothing depends on
 * the rank calling it, but AUTO and STAGES use the times each rank calibrates or
 * finds in its own cost cache: ranks whose times differ can place differently, so
 * `hgr run` under mpirun places on rank 0 and sends the placed graph to the
 * others: hgr_mpi_place in hgr/mpi.h). Capabilities and node times are those of the local device of the same
 * spec (the ranks' devices are assumed alike), unless options.rank_measures gives
 * a rank's own (hgr_place_measure_rank, run on that rank); copies between ranks
 * cost cross_host_latency_ms + bytes x cross_host_ms_per_byte. When the devices
 * span ranks (some device is on a rank other than 0), rank 0 reads the graph's
 * inputs and writes its outputs: an input that is not a weight (named in params)
 * lives on the first listed rank-0 device unless its first consumer runs on rank 0,
 * and an output produced on another rank is copied to that device.
 *
 * Thread safety: hgr_place may be called from several threads with distinct
 * options; a placement is immutable and may be shared. Calibration creates
 * executors on the instance (see hgr/executor.h for Oclgrind's one-thread rule). */
#ifndef HGR_PLACE_H_
#define HGR_PLACE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hgr/device.h"
#include "hgr/executor.h"
#include "hgr/export.h"
#include "hgr/graph.h"
#include "hgr/kernels.h"
#include "hgr/params.h"
#include "hgr/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum hgr_place_rule_kind_t {
  HGR_PLACE_RULE_OP = 0, /* "op:NAME=SPEC": every node whose func_name is NAME */
  HGR_PLACE_RULE_NODE,   /* "node:GLOB=SPEC": node names matching GLOB (fnmatch) */
  HGR_PLACE_RULE_RANGE,  /* "range:A-B=SPEC": node ids A to B, inclusive, counted in the
                            graph without its own __copy nodes (a builder graph's ids) */
} hgr_place_rule_kind_t;

typedef struct hgr_place_rule_t {
  hgr_place_rule_kind_t kind;
  char pattern[128];     /* OP: the op name; NODE: the glob */
  uint32_t first, last;  /* RANGE */
  char spec[64];         /* the device (device.h's spec strings) */
} hgr_place_rule_t;

typedef enum hgr_place_policy_t {
  HGR_PLACE_FIRST = 0, /* the first listed device that can run the node (default) */
  HGR_PLACE_AUTO,      /* cost-based */
  HGR_PLACE_STAGES,    /* `stages` contiguous stages on the first `stages` devices */
} hgr_place_policy_t;

#define HGR_PLACE_MAX_RULES 64

typedef struct hgr_place_options_t {
  /* Device specs in priority order. None: one device, chosen as the executor
   * chooses device key 1's (a CPU, real devices before Oclgrind). */
  const char* const* devices;
  size_t device_count;
  hgr_place_rule_t rules[HGR_PLACE_MAX_RULES];
  size_t rule_count;
  hgr_place_policy_t policy;
  uint32_t stages;                 /* HGR_PLACE_STAGES: the number of stages, >= 1 */
  hgr_kernel_library_t* kernels;   /* the user's ops; may be NULL */
  /* The cost cache (AUTO, STAGES): NULL means the program cache's default
   * directory ($HGR_CACHE_DIR, else $XDG_CACHE_HOME/hgr, else ~/.cache/hgr). */
  const char* cost_cache_directory;
  bool cost_cache_off;             /* calibrate every time, store nothing */
  hgr_program_cache_t program_cache; /* what calibration's executors use */
  hgr_log_fn log;                  /* progress lines while calibrating; may be NULL */
  void* log_user;
  /* Across ranks: a copy between devices of two ranks costs cross_host_latency_ms +
   * bytes x cross_host_ms_per_byte (the CLI measures them with an MPI ping-pong).
   * Both 0: unknown, 0.1 ms and 1e-6 ms per byte (1 GB/s) are used. Finite and
   * >= 0, else INVALID_ARGUMENT. */
  double cross_host_latency_ms;
  double cross_host_ms_per_byte;
  /* The graph's params (borrowed, may be NULL). Across ranks an input named here is
   * a weight, which every rank loads itself: it stays where its first consumer
   * runs instead of being read on rank 0. Ignored when the devices are on one rank. */
  const hgr_params_t* params;
  /* Across ranks whose devices differ: rank_measures[r] (r < rank_measure_count)
   * is what rank r's hgr_place_measure_rank gave, and rank r's listed devices are
   * then the ones it found, with its capabilities and, for AUTO and STAGES, the node
   * and copy times it measured. NULL, "" (what hgr_place_measure_rank gives a rank
   * no listed spec names) or past the count: rank r's devices are taken to be like
   * this process's devices of the same spec. Borrowed. */
  const char* const* rank_measures;
  size_t rank_measure_count;
} hgr_place_options_t;

/* Defaults: no devices listed (the default device), no rules, FIRST, the default
 * cross-host costs, no params. */
HGR_API void hgr_place_options_init(hgr_place_options_t* options);

/* Parses one --place argument into options: a policy ("first", "auto",
 * "stages:N") sets the policy; a rule ("op:NAME=SPEC", "node:GLOB=SPEC",
 * "range:A-B=SPEC") is appended. INVALID_ARGUMENT quoting text for anything else,
 * or when HGR_PLACE_MAX_RULES rules are already there. */
HGR_API hgr_status_t hgr_place_options_parse(hgr_place_options_t* options, const char* text);

typedef struct hgr_placement_s hgr_placement_t;

/* Places, inserts copies and plans memory. Rules apply to op nodes; a device a
 * rule names that the list lacks joins the list after the listed ones. Graph
 * inputs are written where their first consumer runs; the placed graph keeps the
 * names and order of graph's inputs. Device key 1 is the first device of that
 * list, key 2 the second, ...; the placed graph records each key's spec, which
 * hgr_executor_create uses when the caller binds nothing. graph is not retained:
 * the result holds a new graph.
 *
 * Across ranks (the devices span ranks): inputs that are not weights are read on
 * rank 0 (where their first consumer runs when that is on rank 0, else on the first
 * listed rank-0 device, with a `__copy` to the consumers), outputs produced on
 * another rank are copied to the first listed rank-0 device and read there, and the
 * recorded specs carry their rank ("r1/pocl:0"; "r0/" is added to a spec without
 * one).
 *
 * Errors: INVALID_ARGUMENT (a spec naming no device or with a malformed rank
 * prefix; the same device of the same rank listed twice; devices across ranks
 * without one of rank 0; a rule's device that cannot run a node it matches, naming
 * both; a node no listed device can run, with each device's reason; ops the op
 * registry rejects), and what calibration meets (OpenCL failures naming the
 * device). */
HGR_API hgr_status_t hgr_place(hgr_instance_t* instance, hgr_graph_t* graph, const hgr_place_options_t* options,
                               hgr_placement_t** out_placement);

/* Across ranks whose devices differ, on rank `rank`: its own listed devices (the
 * specs of options' devices and rules that name rank `rank`; a spec without a rank
 * is rank 0's), found on instance, and for AUTO and STAGES the cost model over
 * them (calibrated as hgr_place does, with options->log's progress lines), as a
 * text (malloc'd; the caller frees it) for the placing rank's
 * options.rank_measures[rank]. graph and options must be the placing rank's.
 * *out_text is "" when no listed spec names rank `rank`, which hgr_place reads as no
 * measure.
 * Errors: as hgr_place's for a spec, and what calibration meets. */
HGR_API hgr_status_t hgr_place_measure_rank(hgr_instance_t* instance, hgr_graph_t* graph,
                                            const hgr_place_options_t* options, int rank, char** out_text);
HGR_API void hgr_placement_release(hgr_placement_t* placement);

/* The placed graph (borrowed: retain it to keep it beyond the placement). Its
 * device bindings are recorded in it; hgr_executor_create uses them. */
HGR_API hgr_graph_t* hgr_placement_graph(const hgr_placement_t* placement);

/* Why a node is where it is. */
typedef enum hgr_place_reason_t {
  HGR_PLACE_BY_RULE = 0,  /* a rule (rule_index) */
  HGR_PLACE_BY_POLICY,    /* the policy's choice */
  HGR_PLACE_BY_FALLBACK,  /* the policy's choice could not run it */
  HGR_PLACE_BY_INPUT,     /* a graph input: where its first consumer runs */
  HGR_PLACE_BY_COPY,      /* an inserted __copy: on the consuming device */
} hgr_place_reason_t;

/* Node node_id of the placed graph. */
typedef struct hgr_node_placement_t {
  size_t device_index;        /* its device's index: in this instance, or in its rank's
                                 own list when rank_measures described it (see rank) */
  hgr_place_reason_t reason;
  size_t rule_index;          /* HGR_PLACE_BY_RULE */
  const char* fallback;       /* HGR_PLACE_BY_FALLBACK: why the policy's device could not
                                 run it ("rusticl:0: op 'scale_add' has no kernel there") */
  uint32_t source_node;       /* its node id in the graph given to hgr_place;
                                 UINT32_MAX for an inserted __copy */
  double predicted_ms;        /* the cost model's time of one run; < 0 when not known */
  int rank;                   /* the rank of its device (device_index is the local
                                 device of the same spec, or the rank's own index
                                 when options.rank_measures describes that rank; a
                                 spec without a rank is rank 0's); -1 when no spec
                                 given has a rank and the devices are on one rank */
} hgr_node_placement_t;
/* Errors: OUT_OF_RANGE. */
HGR_API hgr_status_t hgr_placement_node(const hgr_placement_t* placement, uint32_t node_id,
                                        hgr_node_placement_t* out_node);

/* Per device used. */
typedef struct hgr_placement_device_t {
  size_t device_index;        /* as hgr_node_placement_t's */
  int32_t key;                /* its device key in the placed graph */
  uint32_t node_count;        /* op nodes (copies included) */
  uint64_t planned_bytes;     /* storage the plan allocates */
  uint64_t lower_bound_bytes; /* the most bytes alive at one point of the schedule */
  uint64_t no_reuse_bytes;    /* one storage per value */
  /* What any plan with one buffer per storage id needs (TVM's format has no
   * offsets, so values of different sizes cannot pack into one buffer): between
   * lower_bound_bytes and planned_bytes; planned_bytes equal to it is optimal for
   * the aliases and in-place pairs chosen. */
  uint64_t storage_bound_bytes;
  double predicted_ms;        /* busy time predicted; < 0 without a cost model */
  int rank;                   /* as hgr_node_placement_t's: (device_index, rank) is
                                 the device */
  const char* spec;           /* its spec as the placed graph records it (borrowed
                                 from the placement) */
} hgr_placement_device_t;
HGR_API size_t hgr_placement_device_count(const hgr_placement_t* placement);
HGR_API hgr_status_t hgr_placement_device(const hgr_placement_t* placement, size_t i,
                                          hgr_placement_device_t* out_device);

/* Predicted time of one run (< 0 without a cost model), and of the best
 * single-device placement AUTO compared itself with. */
HGR_API double hgr_placement_predicted_ms(const hgr_placement_t* placement);
HGR_API double hgr_placement_best_single_ms(const hgr_placement_t* placement, size_t* out_device_index);

/* Reports. The summary: per device the nodes per op and why (rule, policy,
 * fallback), memory planned / lower bound / no reuse, copies per pair class
 * (copies between ranks are HGR_PAIR_CROSS_HOST), every
 * fallback with its reason. The JSON (`hgr check --json`, `--place-report`): the
 * same, plus every node with its device, reason and predicted time. */
HGR_API hgr_status_t hgr_placement_write_summary(const hgr_placement_t* placement, FILE* out);
HGR_API hgr_status_t hgr_placement_write_json(const hgr_placement_t* placement, FILE* out);

#ifdef __cplusplus
}
#endif

#endif /* HGR_PLACE_H_ */
