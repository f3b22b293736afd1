/* What the place layer's files share: the placement problem (an unplaced graph, the
 * candidate devices, what each can run, what rules fixed), the cost model, and the
 * cost-based policies. place.c drives it (hgr/place.h); cost_model.c calibrates and
 * keeps the cost cache; schedule.c has AUTO and STAGES; copies.c inserts copies;
 * memory_plan.c plans storage; verify.c checks a plan. */
#ifndef HGR_PLACE_INTERNAL_H_
#define HGR_PLACE_INTERNAL_H_

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "device_internal.h"
#include "graph_internal.h"
#include "hgr/place.h"
#include "internal.h"

/* No device chosen (yet). */
#define HGR__NO_DEVICE UINT32_MAX

typedef struct hgr__place_problem_t {
  hgr_instance_t* instance;
  /* The unplaced graph: no __copy nodes, no device keys; its nodes in topological
   * order (node ids are what range rules count). */
  const hgr_graph_t* graph;
  const hgr_kernel_library_t* kernels;
  /* Candidate devices in priority order ("slots" 0 to device_count - 1). */
  size_t device_count;
  size_t* devices;     /* instance device index per slot */
  /* [node * device_count + slot]: whether the device can run op node `node`
   * (always true for input nodes), and why not (malloc'd text) where it cannot. */
  bool* can_run;
  char** cannot_reason;
  /* Per node: the slot a rule fixed it to, else HGR__NO_DEVICE. */
  uint32_t* fixed;
} hgr__place_problem_t;

static inline bool hgr__place_can_run(const hgr__place_problem_t* problem, uint32_t node, size_t slot) {
  return problem->can_run[(size_t)node * problem->device_count + slot];
}

/* ---- the cost model (cost_model.c) -------------------------------------------------- */

typedef struct hgr__cost_model_t {
  size_t device_count;      /* = the problem's */
  uint32_t node_count;
  /* [node * device_count + slot]: ms of one run of op node on that device; INFINITY
   * where it cannot run; 0 for input nodes and ops that run nothing (aliases). */
  double* node_ms;
  /* [from * device_count + to]: a copy of b bytes costs latency + b * per_byte;
   * 0 and 0 on the diagonal. */
  double* copy_latency_ms;
  double* copy_ms_per_byte;
  /* [slot]: the timeline the device's work runs on. Devices that share a processor
   * share one (every CPU device runs on the host's cores: two of them are no faster
   * than one), so their nodes do not overlap in the simulation. NULL: each device
   * its own. */
  uint32_t* timeline;
} hgr__cost_model_t;

/* Fills model for problem: looks every (device, op, input shapes and dtypes, attrs)
 * and every device pair up in the cost cache (options->cost_cache_directory; keyed by
 * platform, device, driver version like the program cache), and calibrates what is
 * missing by running it (profiling events; host timing where the driver gives no
 * timestamps), with a progress line through options->log, then stores it. */
hgr_status_t hgr__cost_model_build(const hgr__place_problem_t* problem, const hgr_place_options_t* options,
                                   hgr__cost_model_t* out_model);
void hgr__cost_model_release(hgr__cost_model_t* model);

static inline double hgr__cost_copy_ms(const hgr__cost_model_t* model, size_t from, size_t to, uint64_t bytes) {
  if (from == to) return 0.0;
  size_t at = from * model->device_count + to;
  return model->copy_latency_ms[at] + (double)bytes * model->copy_ms_per_byte[at];
}

/* ---- schedules (schedule.c) ------------------------------------------------------------- */

/* Predicted time of one run when node n runs on slot node_slot[n] (every op node
 * assigned): nodes in graph order, each device runs one node at a time, a value
 * consumed on another device costs one copy per (value, device) as copies.c
 * inserts them. out_device_busy_ms (device_count values) and out_node_ms (node
 * count; per node its own run time) may be NULL. */
double hgr__schedule_predict(const hgr__place_problem_t* problem, const hgr__cost_model_t* model,
                             const uint32_t* node_slot, double* out_device_busy_ms, double* out_node_ms);

/* AUTO: node_slot holds the rules' choices (HGR__NO_DEVICE elsewhere, inputs
 * included); fills the rest by earliest-finish-time list scheduling over devices
 * that can run each node, then compares with every single device that can run all
 * unfixed nodes and keeps the best. *out_best_single_slot / _ms: the best
 * single-device placement (HGR__NO_DEVICE / INFINITY when none). */
hgr_status_t hgr__schedule_auto(const hgr__place_problem_t* problem, const hgr__cost_model_t* model,
                                uint32_t* node_slot, uint32_t* out_best_single_slot, double* out_best_single_ms);

/* STAGES: splits the op nodes, in graph order, into `stages` contiguous stages of
 * balanced predicted cost on slots 0 to stages - 1 (nodes fixed by rules stay;
 * a node stage s's device cannot run falls back as FIRST does, recorded by the
 * caller). INVALID_ARGUMENT when fewer than `stages` devices are listed. */
hgr_status_t hgr__schedule_stages(const hgr__place_problem_t* problem, const hgr__cost_model_t* model,
                                  uint32_t stages, uint32_t* node_slot);

#endif /* HGR_PLACE_INTERNAL_H_ */
