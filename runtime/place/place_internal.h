/* What the place layer's files share: the placement problem (an unplaced graph, the
 * candidate devices, what each can run, what rules fixed), the cost model, and the
 * cost-based policies. place.c drives it (hgr/place.h): unplace.c discards a graph's
 * own placement; capability.c asks each device what it can run; assign.c applies
 * rules, the policy's choices and fallback; cost_model.c calibrates and keeps the
 * cost cache; schedule.c has AUTO and STAGES; copies.c inserts copies;
 * memory_plan.c plans storage; verify.c checks a plan; place_report.c writes the
 * summary and the JSON. */
#ifndef HGR_PLACE_INTERNAL_H_
#define HGR_PLACE_INTERNAL_H_

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "device_internal.h"
#include "graph_internal.h"
#include "hgr/place.h"
#include "internal.h"
#include "text.h"

/* No device chosen (yet). */
#define HGR__NO_DEVICE UINT32_MAX

/* Splits spec's rank prefix (hgr_spec_rank): *out_rank is -1 without one, *out_local
 * the spec past it. INVALID_ARGUMENT for a malformed prefix. */
static inline hgr_status_t hgr__place_split_spec(const char* spec, int* out_rank, const char** out_local) {
  if (hgr_spec_rank(spec, out_rank, out_local)) return HGR_OK;
  return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT,
                    "'%s' has a malformed rank prefix: expected rN/SPEC with N from 0 to 2147483647", spec);
}

/* ---- another rank's devices, as that rank found and measured them (rank_measure.c) ---- */

typedef struct hgr__rank_measure_t {
  hgr_allocator_t allocator;  /* the unplaced graph's: everything below is from it */
  int rank;
  long cores;                 /* the rank's host's online processors */
  /* The listed specs, options' devices then the rules': per position the rank's
   * device index, SIZE_MAX for a spec of another rank. */
  size_t position_count;
  size_t* position_device;
  /* The rank's listed devices, each with its own instance index in .index; the
   * strings are owned. pair_class: [a * device_count + b]. */
  size_t device_count;
  hgr_device_info_t* devices;
  hgr_pair_class_t* pair_class;
  /* AUTO and STAGES: the rank's cost model over its devices (hgr__cost_model_t's
   * meanings: node_ms [node * device_count + d] with the launch overhead in,
   * INFINITY where it cannot run; copies [a * device_count + b]). NULL for FIRST. */
  double* node_ms;
  double* copy_latency_ms;
  double* copy_ms_per_byte;
} hgr__rank_measure_t;

/* Reads the text rank `rank`'s hgr_place_measure_rank gave, for options and the
 * unplaced graph; the measure's memory is from the unplaced graph's allocator
 * (out_measure->allocator). INVALID_ARGUMENT naming the rank and what is wrong (a malformed
 * text, another list of specs, another graph). */
hgr_status_t hgr__rank_measure_parse(const char* text, int rank, const hgr_place_options_t* options,
                                     const hgr_graph_t* unplaced, hgr__rank_measure_t* out_measure);
void hgr__rank_measure_free(hgr__rank_measure_t* measure);
/* The position in measure->devices of the rank's device `index`, or SIZE_MAX. */
static inline size_t hgr__rank_measure_find(const hgr__rank_measure_t* measure, size_t index) {
  for (size_t d = 0; d < measure->device_count; ++d)
    if (measure->devices[d].index == index) return d;
  return SIZE_MAX;
}

typedef struct hgr__place_problem_t {
  /* hgr__graph_allocator(graph) (zero: the system allocator): what the place layer
   * allocates for the problem (its tables, choices, reasons, the cost model, the
   * placed graph) comes from it. */
  hgr_allocator_t allocator;
  hgr_instance_t* instance;
  /* The unplaced graph: no __copy nodes, no device keys; its nodes in topological
   * order (node ids are what range rules count). */
  const hgr_graph_t* graph;
  const hgr_kernel_library_t* kernels;
  /* Candidate devices in priority order ("slots" 0 to device_count - 1). */
  size_t device_count;
  size_t* devices;     /* instance device index per slot (a measured slot's: its
                          rank's index) */
  const hgr_device_info_t* const* infos; /* [slot] */
  /* [slot]: the measure of the slot's rank when options.rank_measures gave one
   * (its devices were found and timed there), else NULL: the slot is the local
   * device of the same spec. */
  const hgr__rank_measure_t* const* measured;
  /* [node * device_count + slot]: whether the device can run op node `node`
   * (always true for input nodes), and why not (text from allocator) where it cannot. */
  bool* can_run;
  char** cannot_reason;
  /* Per node: the slot a rule fixed it to, else HGR__NO_DEVICE. */
  uint32_t* fixed;
  /* Across ranks (docs/placement.md, "Across ranks"); all zero for one process.
   * ranks: [slot] the slot's rank (0 for a spec without one); NULL: every slot on
   * rank 0. A slot is a (rank, local device) pair: two slots may share devices[]. */
  const int* ranks;
  /* The slots span ranks (some slot is not on rank 0): graph inputs that are not
   * weights are read on rank 0 (home_slot unless their first consumer runs on rank
   * 0) and heads produced on another rank are copied to home_slot. */
  bool distributed;
  uint32_t home_slot;  /* the first listed slot of rank 0 */
  /* [node]: a graph input that is a weight (named in the params, loaded by every
   * rank): it stays with its first consumer. NULL: none. */
  const bool* weight;
} hgr__place_problem_t;

static inline bool hgr__place_can_run(const hgr__place_problem_t* problem, uint32_t node, size_t slot) {
  return problem->can_run[(size_t)node * problem->device_count + slot];
}

static inline int hgr__place_slot_rank(const hgr__place_problem_t* problem, size_t slot) {
  return problem->ranks ? problem->ranks[slot] : 0;
}

/* Where graph input `node` lives when its first consumer runs on `consumer_slot`
 * (HGR__NO_DEVICE: nothing consumes it): there, except across ranks, where an input
 * that is not a weight is read on rank 0 (home_slot when the consumer is on
 * another rank). One process: consumer_slot, or slot 0 for no consumer. */
static inline uint32_t hgr__place_input_slot(const hgr__place_problem_t* problem, uint32_t node,
                                             uint32_t consumer_slot) {
  if (!problem->distributed) return consumer_slot == HGR__NO_DEVICE ? 0 : consumer_slot;
  if (consumer_slot == HGR__NO_DEVICE) return problem->home_slot;
  if ((problem->weight && problem->weight[node]) || hgr__place_slot_rank(problem, consumer_slot) == 0)
    return consumer_slot;
  return problem->home_slot;
}

/* ---- the cost model (cost_model.c) -------------------------------------------------- */

typedef struct hgr__cost_model_t {
  hgr_allocator_t allocator; /* the problem's: the arrays below are from it */
  size_t device_count;      /* = the problem's */
  uint32_t node_count;
  /* [node * device_count + slot]: ms of one run of op node on that device; INFINITY
   * where it cannot run; 0 for input nodes and ops that run nothing (aliases). */
  double* node_ms;
  /* [from * device_count + to]: a copy of b bytes costs latency + b * per_byte;
   * 0 and 0 on the diagonal; between slots of two ranks, the options' cross-host
   * costs. */
  double* copy_latency_ms;
  double* copy_ms_per_byte;
  /* [slot]: the timeline the device's work runs on. Devices that share a processor
   * share one (CPU devices of one rank whose compute units together exceed the
   * host's cores: two of them are then no faster than one), so their nodes do not
   * overlap in the simulation. NULL: each device its own. */
  uint32_t* timeline;
} hgr__cost_model_t;

/* Fills model for problem: looks every (device, op, input shapes and dtypes, attrs)
 * and every device pair up in the cost cache (options->cost_cache_directory; keyed by
 * platform, device, driver version like the program cache), and calibrates what is
 * missing by running it (profiling events; host timing where the driver gives no
 * timestamps), with a progress line through options->log, then stores it. Slots of
 * other ranks are measured on their local namesake (once per local device); a pair
 * of slots of two ranks is not measured: it costs options' cross-host latency and
 * per-byte time (hgr__place_cross_host_costs). */
hgr_status_t hgr__cost_model_build(const hgr__place_problem_t* problem, const hgr_place_options_t* options,
                                   hgr__cost_model_t* out_model);
void hgr__cost_model_release(hgr__cost_model_t* model);

/* The cross-host copy costs of options: both 0 means unknown, and the defaults
 * (0.1 ms, 1e-6 ms per byte: 1 GB/s) are used. */
#define HGR__CROSS_HOST_LATENCY_MS 0.1
#define HGR__CROSS_HOST_MS_PER_BYTE 1e-6
static inline void hgr__place_cross_host_costs(const hgr_place_options_t* options, double* out_latency_ms,
                                               double* out_ms_per_byte) {
  bool unknown = options->cross_host_latency_ms == 0.0 && options->cross_host_ms_per_byte == 0.0;
  *out_latency_ms = unknown ? HGR__CROSS_HOST_LATENCY_MS : options->cross_host_latency_ms;
  *out_ms_per_byte = unknown ? HGR__CROSS_HOST_MS_PER_BYTE : options->cross_host_ms_per_byte;
}

static inline double hgr__cost_copy_ms(const hgr__cost_model_t* model, size_t from, size_t to, uint64_t bytes) {
  if (from == to) return 0.0;
  size_t at = from * model->device_count + to;
  return model->copy_latency_ms[at] + (double)bytes * model->copy_ms_per_byte[at];
}

/* ---- schedules (schedule.c) ------------------------------------------------------------- */

/* Predicted time of one run when node n runs on slot node_slot[n] (every op node
 * assigned): nodes in graph order, each device runs one node at a time, a value
 * consumed on another device costs one copy per (value, device) as copies.c
 * inserts them; across ranks, inputs live as hgr__place_input_slot says and heads
 * of other ranks are copied to home_slot at the end. out_device_busy_ms
 * (device_count values) and out_node_ms (node count; per node its own run time)
 * may be NULL. */
double hgr__schedule_predict(const hgr__place_problem_t* problem, const hgr__cost_model_t* model,
                             const uint32_t* node_slot, double* out_device_busy_ms, double* out_node_ms);

/* AUTO keeps the best single device unless a split is predicted faster by more than
 * this fraction: a split adds copies and cross-device waits, which the model
 * predicts less well than one device's queue (on the test bed, two PoCL devices
 * also share one CPU). */
#define HGR__PLACE_SPLIT_MARGIN 0.05

/* AUTO: node_slot holds the rules' choices (HGR__NO_DEVICE elsewhere, inputs
 * included); fills the rest by earliest-finish-time list scheduling over devices
 * that can run each node, then compares with every single device that can run all
 * unfixed nodes and keeps the best. *out_best_single_slot / _ms: the best
 * single-device placement (HGR__NO_DEVICE / INFINITY when none); *out_best_split_ms:
 * the fastest placement over several devices it found, kept or not (INFINITY when
 * none). */
hgr_status_t hgr__schedule_auto(const hgr__place_problem_t* problem, const hgr__cost_model_t* model,
                                uint32_t* node_slot, uint32_t* out_best_single_slot, double* out_best_single_ms,
                                double* out_best_split_ms);

/* STAGES: splits the op nodes, in graph order, into `stages` contiguous stages of
 * balanced predicted cost on slots 0 to stages - 1 (nodes fixed by rules stay;
 * a node stage s's device cannot run falls back as FIRST does, recorded by the
 * caller). INVALID_ARGUMENT when fewer than `stages` devices are listed. */
hgr_status_t hgr__schedule_stages(const hgr__place_problem_t* problem, const hgr__cost_model_t* model,
                                  uint32_t stages, uint32_t* node_slot);

/* ---- the placement pipeline ---------------------------------------------------------
 * After capability.c has asked the devices what they can run, every step works on
 * plain data (the problem, slots, spec strings) and touches no OpenCL, so that tests
 * and fuzz/fuzz_place.c run it over fake devices. */

/* unplace.c: graph with its own placement discarded: `__copy` nodes removed (their
 * consumers read the copy's input), device keys dropped, every entry its own storage
 * id except a `__nop`'s output, which keeps aliasing its input. Node names, attrs,
 * inputs and outputs stay. *out_source_node (new node count values) gives each node's
 * id in graph. Both are from graph's allocator (hgr__graph_allocator). */
hgr_status_t hgr__place_unplace(const hgr_graph_t* graph, hgr_graph_t** out_graph, uint32_t** out_source_node);

/* Whether device can run op node node_id of graph: the op exists there
 * (built-in: the device compiles; the kernel library's: a binary for it, or a source
 * and a compiler), its dtypes are supported (float16, float64) and it plans within
 * the device's limits. *out_reason is NULL when it can, else text from graph's
 * allocator (hgr__graph_allocator) naming the device ("rusticl:0: op 'scale_add' has no kernel for this device ..."). Errors:
 * RESOURCE_EXHAUSTED only. */
hgr_status_t hgr__place_device_can_run(const hgr_graph_t* graph, uint32_t node_id, const hgr_kernel_library_t* kernels,
                                       const hgr_device_info_t* device, char** out_reason);
/* Allocates (from problem->allocator, which must be problem->graph's) and fills
 * problem->can_run, cannot_reason and fixed (all HGR__NO_DEVICE) for problem->graph over the devices problem->infos describes. An op that neither
 * the registry nor the kernel library has is INVALID_ARGUMENT from the registry
 * (listing the known ops). */
hgr_status_t hgr__place_problem_fill(hgr__place_problem_t* problem);
/* Frees what hgr__place_problem_fill allocated (not graph or devices). */
void hgr__place_problem_free(hgr__place_problem_t* problem);

/* assign.c: where each node of the problem graph goes, and why. */
typedef struct hgr__node_choice_t {
  uint32_t slot;
  hgr_place_reason_t reason;
  size_t rule_index;      /* HGR_PLACE_BY_RULE */
  char* fallback;         /* HGR_PLACE_BY_FALLBACK: from the problem's allocator */
} hgr__node_choice_t;
/* Applies rules in order (a later rule wins) to the op nodes: rule_slots[r] is rule
 * r's device slot. Fills problem->fixed and choices (node_count, zeroed by the
 * caller) for the nodes a rule placed. INVALID_ARGUMENT when a rule's device cannot
 * run a node it matches, naming the rule, the node and the device's reason. */
hgr_status_t hgr__place_apply_rules(hgr__place_problem_t* problem, const hgr_place_rule_t* rules,
                                    const uint32_t* rule_slots, size_t rule_count, hgr__node_choice_t* choices);
/* Completes choices for the op nodes no rule placed: policy_slot (per node, may be
 * NULL for FIRST; HGR__NO_DEVICE where the policy left a node) is the policy's
 * choice; a choice that cannot run the node falls back to the next listed device
 * that can (FIRST: the first device that can; a node FIRST places past slot 0 is a
 * fallback, with the reasons of the devices before it). Then every input goes where
 * its first consumer runs (slot 0 when nothing consumes it), across ranks as
 * hgr__place_input_slot says. INVALID_ARGUMENT for a node that no device can run,
 * listing each device's reason. */
hgr_status_t hgr__place_complete(const hgr__place_problem_t* problem, const uint32_t* policy_slot,
                                 hgr__node_choice_t* choices);
/* "op:NAME=SPEC", "node:GLOB=SPEC", "range:A-B=SPEC" into buffer; returns buffer. */
const char* hgr__place_rule_format(const hgr_place_rule_t* rule, char* buffer, size_t capacity);
/* Frees count choices' fallbacks and the array, all from allocator (the problem's). */
void hgr__place_choices_free(hgr_allocator_t allocator, hgr__node_choice_t* choices, uint32_t count);

/* copies.c: the placed graph: the problem graph's nodes in order, each on its slot's
 * device key (1 + slot), one `__copy` per (value, consuming device) shared by every
 * consumer there, emitted before its first consumer and named "<node>.to.<spec>"
 * (made unique); heads read where produced (across ranks, a head produced off rank
 * 0 through a copy to home_slot, appended after the nodes); a binding key ->
 * specs[slot] for every key used. storage_ids (per placed entry) may be NULL: every entry its own id (a
 * `__nop` output its input's). *out_source_node: per placed node its problem node,
 * UINT32_MAX for a copy. Both are from problem->allocator. The pass is deterministic, so a second one with planned
 * storage_ids gives the same nodes and entries. */
hgr_status_t hgr__place_emit(const hgr__place_problem_t* problem, const hgr__node_choice_t* choices,
                             const char* const* specs, const uint32_t* storage_ids, hgr_graph_t** out_placed,
                             uint32_t** out_source_node);

/* memory_plan.c: storage ids per device for a placed graph, in node order. */
typedef struct hgr__memory_device_t {
  int32_t key;                 /* device key (-1: the graph has none) */
  uint64_t planned_bytes;      /* the sum of its storages' sizes */
  uint64_t lower_bound_bytes;  /* the most bytes alive at one step */
  uint64_t no_reuse_bytes;     /* one storage per value, aliases once */
  /* What any plan needs with one buffer per storage id (TVM's format has no
   * offsets): the sum over j of the largest j-th largest value alive at one step;
   * between lower_bound_bytes and planned_bytes. */
  uint64_t storage_bound_bytes;
  uint32_t storage_count;
} hgr__memory_device_t;
typedef struct hgr__memory_plan_t {
  hgr_allocator_t allocator;   /* the placed graph's: the arrays below are from it */
  uint32_t* storage_ids;       /* per entry */
  hgr__memory_device_t* devices; /* per device key, ascending */
  size_t device_count;
} hgr__memory_plan_t;
/* Values live from their producer to their last consumer; inputs and heads keep
 * their own storage for the whole run (bindable); `__nop` and reshape-likes
 * (HGR__IN_PLACE_ALIAS) alias their input; an elementwise op's output 0 takes the
 * storage of an input that dies at it (same element count and size, neither an
 * input nor a head); the rest share storages of their device, largest first, each
 * into the smallest storage free for its lifetime (several orders are tried and the
 * smallest total kept). out_plan's arrays are from placed's allocator
 * (out_plan->allocator), which hgr__memory_plan_free frees them with. */
hgr_status_t hgr__memory_plan(const hgr_graph_t* placed, const hgr_kernel_library_t* kernels,
                              hgr__memory_plan_t* out_plan);
void hgr__memory_plan_free(hgr__memory_plan_t* plan);

/* verify.c: checks a placed, planned graph: no two values alive at the same time
 * share a storage id unless one aliases the other (`__nop`, a reshape-like) or an
 * elementwise op writes over an input that dies at it; inputs and heads share with
 * nothing else; every op node's inputs are on its own device (a `__copy` reads
 * from any); a storage id lives on one device; every op node plans
 * (hgr__op_plan). The graph itself passed validation when it was built or loaded.
 * INVALID_ARGUMENT naming the entries, the storage id or the node. */
hgr_status_t hgr__place_verify(const hgr_graph_t* placed, const hgr_kernel_library_t* kernels);

/* place.c, for place_report.c: what the public accessors do not give. The spec of
 * a device the placement uses, (device_index, rank) as the records give them; the
 * best single device's rank; copies of a pair class; rule rule_index as given
 * (NULL past the end); the policy as --place spells it ("stages:2"). */
const char* hgr__placement_device_spec(const hgr_placement_t* placement, size_t device_index, int rank);
int hgr__placement_best_single_rank(const hgr_placement_t* placement);
/* AUTO: the fastest split over several devices it found, kept or not (< 0: none). */
double hgr__placement_best_split_ms(const hgr_placement_t* placement);
uint32_t hgr__placement_copy_count(const hgr_placement_t* placement, hgr_pair_class_t pair_class);
const hgr_place_rule_t* hgr__placement_rule(const hgr_placement_t* placement, size_t rule_index);
const char* hgr__placement_policy(const hgr_placement_t* placement, char* buffer, size_t capacity);

#endif /* HGR_PLACE_INTERNAL_H_ */
