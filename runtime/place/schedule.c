/* The cost-based policies (place_internal.h): a simulation of one run for a given
 * assignment (hgr__schedule_predict), AUTO (HEFT-style list scheduling, checked
 * against every single device) and STAGES (a balanced contiguous split). Pure: the
 * graph and the cost model in, slots out; no OpenCL.
 *
 * The simulation follows what the executor does with a placed graph: nodes are
 * enqueued in graph order and each device's in-order queue runs them one at a time;
 * a value consumed on another device gets one copy per (value, consuming device),
 * run on the consuming side just before its first consumer there (where copies.c
 * puts the `__copy` node); graph inputs live where their first consumer runs, and
 * outputs are read where they are produced (across ranks, rank 0 reads the inputs
 * that are not weights and is sent the outputs, as assign.c and copies.c do).
 * Devices that share a processor (the model's timeline) run one node at a time
 * between them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "place_internal.h"

/* ---- the simulation ----------------------------------------------------------------- */

/* What one simulation needs besides the assignment; allocated once, reused. */
typedef struct sim_t {
  const hgr__place_problem_t* problem;
  const hgr__cost_model_t* model;
  double* device_free; /* device_count: when each timeline is free (indexed by timeline) */
  double* busy;        /* device_count: time each device is busy */
  double* finish;      /* node_count: when the node's outputs exist on its device */
  uint32_t* node_dev;  /* node_count: where the node runs (inputs: where they live) */
  double* avail;       /* entry_count * device_count: when a copy of the entry is on a
                          device; < 0: not copied there */
} sim_t;

static void sim_free(sim_t* sim) {
  hgr__free(sim->problem->allocator, sim->device_free);
  hgr__free(sim->problem->allocator, sim->busy);
  hgr__free(sim->problem->allocator, sim->finish);
  hgr__free(sim->problem->allocator, sim->node_dev);
  hgr__free(sim->problem->allocator, sim->avail);
  memset(sim, 0, sizeof(*sim));
}

static bool sim_init(sim_t* sim, const hgr__place_problem_t* problem, const hgr__cost_model_t* model) {
  memset(sim, 0, sizeof(*sim));
  sim->problem = problem;
  sim->model = model;
  size_t devices = problem->device_count ? problem->device_count : 1;
  size_t nodes = problem->graph->node_count ? problem->graph->node_count : 1;
  size_t entries = problem->graph->entry_count ? problem->graph->entry_count : 1;
  sim->device_free = hgr__calloc(problem->allocator, devices, sizeof(double));
  sim->busy = hgr__calloc(problem->allocator, devices, sizeof(double));
  sim->finish = hgr__calloc(problem->allocator, nodes, sizeof(double));
  sim->node_dev = hgr__calloc(problem->allocator, nodes, sizeof(uint32_t));
  sim->avail = entries <= SIZE_MAX / sizeof(double) / devices
                   ? hgr__alloc(problem->allocator, entries * devices * sizeof(double))
                   : NULL;
  if (!sim->device_free || !sim->busy || !sim->finish || !sim->node_dev || !sim->avail) {
    sim_free(sim);
    return false;
  }
  return true;
}

/* Starts a simulation: nothing has run; inputs live where `slots` says, or (when
 * it says HGR__NO_DEVICE) where their first simulated consumer runs. */
static void sim_reset(sim_t* sim, const uint32_t* slots) {
  const hgr_graph_t* graph = sim->problem->graph;
  size_t devices = sim->problem->device_count;
  for (size_t d = 0; d < devices; ++d) sim->device_free[d] = sim->busy[d] = 0.0;
  for (uint32_t n = 0; n < graph->node_count; ++n) {
    sim->finish[n] = 0.0;
    sim->node_dev[n] = slots && !graph->nodes[n].is_op ? slots[n] : HGR__NO_DEVICE;
  }
  for (size_t i = 0; i < (size_t)graph->entry_count * devices; ++i) sim->avail[i] = -1.0;
}

/* When node n could finish on slot d given what was simulated so far, and (when
 * commit) makes it so: its input copies and then the node occupy d. INFINITY when
 * d cannot run it. */
static double sim_place(sim_t* sim, uint32_t n, uint32_t d, bool commit) {
  const hgr_graph_t* graph = sim->problem->graph;
  const hgr__cost_model_t* model = sim->model;
  size_t devices = sim->problem->device_count;
  const hgr__node_t* node = &graph->nodes[n];
  double cost = model->node_ms[(size_t)n * devices + d];
  if (!(cost < INFINITY)) return INFINITY;
  uint32_t timeline = model->timeline ? model->timeline[d] : d;
  double device_free = sim->device_free[timeline];
  double ready = 0.0, copies = 0.0;
  for (uint32_t k = 0; k < node->input_count; ++k) {
    uint32_t producer = node->inputs[k].node_id;
    uint32_t entry = hgr__graph_entry_id(graph, node->inputs[k]);
    uint32_t home = sim->node_dev[producer];
    if (home == HGR__NO_DEVICE) {
      /* a graph input not consumed yet: it will be written here (across ranks, on
       * rank 0 unless a weight) */
      home = hgr__place_input_slot(sim->problem, producer, d);
      if (commit) sim->node_dev[producer] = home;
    }
    if (home == d) {
      if (sim->finish[producer] > ready) ready = sim->finish[producer];
      continue;
    }
    double* avail = &sim->avail[(size_t)entry * devices + d];
    double at = *avail;
    if (at < 0.0) {
      /* the first consumer of this value here: its copy runs on d now */
      double copy = hgr__cost_copy_ms(model, home, d, graph->entries[entry].bytes);
      double start = device_free > sim->finish[producer] ? device_free : sim->finish[producer];
      at = start + copy;
      device_free = at;
      copies += copy;
      if (commit) *avail = at;
    }
    if (at > ready) ready = at;
  }
  double start = device_free > ready ? device_free : ready;
  double end = start + cost;
  if (commit) {
    sim->device_free[timeline] = end;
    sim->busy[d] += copies + cost;
    sim->finish[n] = end;
    sim->node_dev[n] = d;
  }
  return end;
}

/* Simulates the whole assignment in graph order; the makespan, or INFINITY when an
 * op node is unassigned or on a device that cannot run it. */
static double sim_run(sim_t* sim, const uint32_t* slots) {
  const hgr_graph_t* graph = sim->problem->graph;
  sim_reset(sim, slots);
  double makespan = 0.0;
  for (uint32_t n = 0; n < graph->node_count; ++n) {
    if (!graph->nodes[n].is_op) continue;
    if (slots[n] >= sim->problem->device_count) return INFINITY;
    double end = sim_place(sim, n, slots[n], true);
    if (!(end < INFINITY)) return INFINITY;
    if (end > makespan) makespan = end;
  }
  /* Across ranks rank 0 writes the outputs: a head produced elsewhere is copied to
   * home_slot after the nodes (copies.c), on home_slot's side. */
  const hgr__place_problem_t* problem = sim->problem;
  size_t devices = problem->device_count;
  for (uint32_t h = 0; problem->distributed && h < graph->head_count; ++h) {
    uint32_t producer = graph->heads[h].node_id, home = problem->home_slot;
    uint32_t from = sim->node_dev[producer];
    if (from == HGR__NO_DEVICE || hgr__place_slot_rank(problem, from) == 0) continue;
    uint32_t entry = hgr__graph_entry_id(graph, graph->heads[h]);
    double* avail = &sim->avail[(size_t)entry * devices + home];
    if (*avail < 0.0) {
      uint32_t timeline = sim->model->timeline ? sim->model->timeline[home] : home;
      double copy = hgr__cost_copy_ms(sim->model, from, home, graph->entries[entry].bytes);
      double start = sim->device_free[timeline] > sim->finish[producer] ? sim->device_free[timeline]
                                                                         : sim->finish[producer];
      *avail = start + copy;
      sim->device_free[timeline] = *avail;
      sim->busy[home] += copy;
    }
    if (*avail > makespan) makespan = *avail;
  }
  return makespan;
}

/* INFINITY for an unassigned op node or one on a device that cannot run it; NAN
 * when the simulation's arrays cannot be allocated (the declaration returns no
 * status). */
double hgr__schedule_predict(const hgr__place_problem_t* problem, const hgr__cost_model_t* model,
                             const uint32_t* node_slot, double* out_device_busy_ms, double* out_node_ms) {
  sim_t sim;
  if (!sim_init(&sim, problem, model)) return NAN;
  double makespan = sim_run(&sim, node_slot);
  if (out_device_busy_ms)
    for (size_t d = 0; d < problem->device_count; ++d) out_device_busy_ms[d] = sim.busy[d];
  if (out_node_ms)
    for (uint32_t n = 0; n < problem->graph->node_count; ++n) {
      uint32_t d = node_slot[n];
      out_node_ms[n] = problem->graph->nodes[n].is_op && d < problem->device_count
                           ? model->node_ms[(size_t)n * problem->device_count + d]
                           : 0.0;
    }
  sim_free(&sim);
  return makespan;
}

/* ---- AUTO ------------------------------------------------------------------------------ */

static bool runnable(const hgr__place_problem_t* problem, const hgr__cost_model_t* model, uint32_t n, size_t d) {
  return hgr__place_can_run(problem, n, d) && model->node_ms[(size_t)n * problem->device_count + d] < INFINITY;
}

/* HEFT's upward ranks: a node's mean cost over the devices it may go to, plus the
 * longest path of mean copy and node costs from it to an exit. */
static hgr_status_t upward_ranks(const hgr__place_problem_t* problem, const hgr__cost_model_t* model,
                                 const uint32_t* fixed, double* rank) {
  const hgr_graph_t* graph = problem->graph;
  size_t devices = problem->device_count;
  /* the mean of a copy's latency and per-byte time over ordered pairs of devices */
  double latency = 0.0, per_byte = 0.0;
  if (devices > 1) {
    for (size_t a = 0; a < devices; ++a)
      for (size_t b = 0; b < devices; ++b)
        if (a != b) {
          latency += model->copy_latency_ms[a * devices + b];
          per_byte += model->copy_ms_per_byte[a * devices + b];
        }
    double pairs = (double)devices * (double)(devices - 1);
    latency /= pairs;
    per_byte /= pairs;
  }
  for (uint32_t n = 0; n < graph->node_count; ++n) rank[n] = 0.0;
  for (uint32_t n = graph->node_count; n-- > 0;) {
    const hgr__node_t* node = &graph->nodes[n];
    double mean = 0.0;
    if (node->is_op) {
      if (fixed[n] != HGR__NO_DEVICE) {
        mean = model->node_ms[(size_t)n * devices + fixed[n]];
      } else {
        size_t count = 0;
        for (size_t d = 0; d < devices; ++d)
          if (runnable(problem, model, n, d)) {
            mean += model->node_ms[(size_t)n * devices + d];
            ++count;
          }
        if (!count) {
          char label[HGR__LABEL_CAPACITY];
          return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s (%s): none of the %zu listed devices can run it",
                            hgr__graph_node_label(graph, n, label, sizeof(label)), node->func_name, devices);
        }
        mean /= (double)count;
      }
      if (!(mean < INFINITY)) mean = 0.0; /* a rule's device the model has no time for */
    }
    /* rank[n] holds the best successor path found so far (successors come later) */
    rank[n] += mean;
    for (uint32_t k = 0; k < node->input_count; ++k) {
      uint32_t producer = node->inputs[k].node_id;
      uint64_t bytes = graph->entries[hgr__graph_entry_id(graph, node->inputs[k])].bytes;
      double through = (devices > 1 ? latency + (double)bytes * per_byte : 0.0) + rank[n];
      if (through > rank[producer]) rank[producer] = through;
    }
  }
  return HGR_OK;
}

typedef struct ranked_t {
  double rank;
  uint32_t node;
} ranked_t;

static int by_rank(const void* a, const void* b) {
  const ranked_t* x = a;
  const ranked_t* y = b;
  if (x->rank != y->rank) return x->rank > y->rank ? -1 : 1;
  return x->node < y->node ? -1 : x->node > y->node;
}

/* List scheduling: op nodes in `order` (a topological order), each on the device
 * where it finishes earliest (a fixed node on its own); ties go to the device
 * listed first. Writes every op node's slot into slots. */
static void list_schedule(sim_t* sim, const uint32_t* order, uint32_t count, const uint32_t* fixed, uint32_t* slots) {
  const hgr__place_problem_t* problem = sim->problem;
  sim_reset(sim, NULL);
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t n = order[i];
    uint32_t best = fixed[n];
    if (best == HGR__NO_DEVICE) {
      double best_end = INFINITY;
      for (size_t d = 0; d < problem->device_count; ++d) {
        if (!runnable(problem, sim->model, n, d)) continue;
        double end = sim_place(sim, n, (uint32_t)d, false);
        if (end < best_end) {
          best_end = end;
          best = (uint32_t)d;
        }
      }
    }
    slots[n] = best;
    sim_place(sim, n, best, true);
  }
}

hgr_status_t hgr__schedule_auto(const hgr__place_problem_t* problem, const hgr__cost_model_t* model,
                                uint32_t* node_slot, uint32_t* out_best_single_slot, double* out_best_single_ms,
                                double* out_best_split_ms) {
  if (out_best_single_slot) *out_best_single_slot = HGR__NO_DEVICE;
  if (out_best_single_ms) *out_best_single_ms = INFINITY;
  if (out_best_split_ms) *out_best_split_ms = INFINITY;
  const hgr_graph_t* graph = problem->graph;
  uint32_t nodes = graph->node_count;
  if (!problem->device_count)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "auto placement: no devices listed");
  hgr_status_t status = HGR_OK;
  sim_t sim;
  bool have_sim = sim_init(&sim, problem, model);
  size_t words = nodes ? nodes : 1;
  uint32_t* fixed = hgr__alloc(problem->allocator, words * sizeof(uint32_t));
  uint32_t* candidate = hgr__alloc(problem->allocator, words * sizeof(uint32_t));
  uint32_t* best = hgr__alloc(problem->allocator, words * sizeof(uint32_t));
  uint32_t* order = hgr__alloc(problem->allocator, words * sizeof(uint32_t));
  double* rank = hgr__alloc(problem->allocator, words * sizeof(double));
  ranked_t* ranked = hgr__alloc(problem->allocator, words * sizeof(ranked_t));
  if (!have_sim || !fixed || !candidate || !best || !order || !rank || !ranked) {
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "auto placement of %u nodes: out of host memory", nodes);
    goto cleanup;
  }
  for (uint32_t n = 0; n < nodes; ++n) {
    fixed[n] = graph->nodes[n].is_op ? node_slot[n] : HGR__NO_DEVICE;
    if (fixed[n] != HGR__NO_DEVICE && fixed[n] >= problem->device_count) {
      char label[HGR__LABEL_CAPACITY];
      status = HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s: fixed to slot %u, but %zu devices are listed",
                          hgr__graph_node_label(graph, n, label, sizeof(label)), fixed[n], problem->device_count);
      goto cleanup;
    }
  }
  status = upward_ranks(problem, model, fixed, rank);
  if (status) goto cleanup;

  /* Candidates: each single device (no copies), then HEFT's order and graph order
   * (the executor's own), kept only when faster than the best single device by
   * HGR__PLACE_SPLIT_MARGIN. */
  double best_ms = INFINITY;
  for (size_t s = 0; s < problem->device_count; ++s) {
    bool all = true;
    for (uint32_t n = 0; n < nodes && all; ++n) {
      candidate[n] = fixed[n];
      if (graph->nodes[n].is_op && fixed[n] == HGR__NO_DEVICE) {
        all = runnable(problem, model, n, s);
        candidate[n] = (uint32_t)s;
      }
    }
    if (!all) continue;
    double ms = sim_run(&sim, candidate);
    if (out_best_single_ms && ms < *out_best_single_ms) {
      *out_best_single_ms = ms;
      if (out_best_single_slot) *out_best_single_slot = (uint32_t)s;
    }
    if (ms < best_ms) {
      best_ms = ms;
      memcpy(best, candidate, nodes * sizeof(uint32_t));
    }
  }
  double single_ms = best_ms; /* INFINITY when no single device can run them all */
  uint32_t op_count = 0;
  for (uint32_t n = 0; n < nodes; ++n)
    if (graph->nodes[n].is_op) ranked[op_count++] = (ranked_t){rank[n], n};
  qsort(ranked, op_count, sizeof(ranked_t), by_rank);
  for (int pass = 0; pass < 2; ++pass) {
    uint32_t count = 0;
    for (uint32_t n = 0; n < nodes; ++n) {
      candidate[n] = HGR__NO_DEVICE;
      if (graph->nodes[n].is_op) order[count++] = n;
    }
    if (pass == 0)
      for (uint32_t i = 0; i < op_count; ++i) order[i] = ranked[i].node;
    list_schedule(&sim, order, count, fixed, candidate);
    double ms = sim_run(&sim, candidate);
    bool split = false;
    for (uint32_t n = 0; n < nodes && !split; ++n)
      split = graph->nodes[n].is_op && candidate[n] != candidate[order[0]];
    if (split && out_best_split_ms && ms < *out_best_split_ms) *out_best_split_ms = ms;
    if (ms < best_ms && ms < (1.0 - HGR__PLACE_SPLIT_MARGIN) * single_ms) {
      best_ms = ms;
      memcpy(best, candidate, nodes * sizeof(uint32_t));
    }
  }
  if (!(best_ms < INFINITY)) {
    status = HGR_STATUS(HGR_STATUS_INTERNAL, "auto placement found no schedule with a finite predicted time");
    goto cleanup;
  }
  /* inputs stay unassigned: the caller writes them where their first consumer runs */
  for (uint32_t n = 0; n < nodes; ++n)
    if (graph->nodes[n].is_op) node_slot[n] = best[n];

cleanup:
  if (have_sim) sim_free(&sim);
  hgr__free(problem->allocator, fixed);
  hgr__free(problem->allocator, candidate);
  hgr__free(problem->allocator, best);
  hgr__free(problem->allocator, order);
  hgr__free(problem->allocator, rank);
  hgr__free(problem->allocator, ranked);
  return status;
}

/* ---- STAGES ------------------------------------------------------------------------------ */

hgr_status_t hgr__schedule_stages(const hgr__place_problem_t* problem, const hgr__cost_model_t* model,
                                  uint32_t stages, uint32_t* node_slot) {
  const hgr_graph_t* graph = problem->graph;
  size_t devices = problem->device_count;
  if (stages == 0 || stages > devices)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "stages:%u needs %u listed devices, but %zu are listed", stages,
                      stages, devices);
  /* The op nodes no rule fixed, in graph order: the sequence to split. */
  uint32_t count = 0;
  for (uint32_t n = 0; n < graph->node_count; ++n)
    if (graph->nodes[n].is_op && node_slot[n] == HGR__NO_DEVICE) ++count;
  size_t columns = (size_t)count + 1;
  hgr_status_t status = HGR_OK;
  uint32_t* sequence = hgr__alloc(problem->allocator, columns * sizeof(uint32_t));
  double* prefix = columns <= SIZE_MAX / sizeof(double) / stages
                       ? hgr__alloc(problem->allocator, (size_t)stages * columns * sizeof(double))
                       : NULL;
  double* best = columns <= SIZE_MAX / sizeof(double) / stages
                     ? hgr__alloc(problem->allocator, (size_t)stages * columns * sizeof(double))
                     : NULL;
  uint32_t* cut = columns <= SIZE_MAX / sizeof(uint32_t) / stages
                      ? hgr__alloc(problem->allocator, (size_t)stages * columns * sizeof(uint32_t))
                      : NULL;
  if (!sequence || !prefix || !best || !cut) {
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "stages:%u over %u nodes: out of host memory", stages, count);
    goto cleanup;
  }
  count = 0;
  for (uint32_t n = 0; n < graph->node_count; ++n)
    if (graph->nodes[n].is_op && node_slot[n] == HGR__NO_DEVICE) sequence[count++] = n;
  /* prefix[s][i]: the cost of the first i nodes on stage s's device; a node that
   * device cannot run adds nothing there (it falls back elsewhere). */
  for (uint32_t s = 0; s < stages; ++s) {
    double* row = &prefix[(size_t)s * columns];
    row[0] = 0.0;
    for (uint32_t i = 0; i < count; ++i) {
      double cost = model->node_ms[(size_t)sequence[i] * devices + s];
      row[i + 1] = row[i] + (hgr__place_can_run(problem, sequence[i], s) && cost < INFINITY ? cost : 0.0);
    }
  }
  /* best[s][i]: the least bottleneck of splitting the first i nodes into stages 0
   * to s, stage s ending at i; cut[s][i]: where stage s begins then. Every stage
   * gets a node when there are enough: the caller asked for a pipeline over
   * `stages` devices (an empty stage on a slow device would balance better). */
  bool nonempty = count >= stages;
  for (uint32_t i = 0; i <= count; ++i) {
    best[i] = nonempty && i == 0 ? INFINITY : prefix[i];
    cut[i] = 0;
  }
  for (uint32_t s = 1; s < stages; ++s) {
    const double* row = &prefix[(size_t)s * columns];
    for (uint32_t i = 0; i <= count; ++i) {
      double least = INFINITY;
      uint32_t where = 0;
      for (uint32_t j = nonempty ? s : 0; j + (nonempty ? 1 : 0) <= i; ++j) {
        double before = best[(size_t)(s - 1) * columns + j];
        double here = row[i] - row[j];
        double bottleneck = before > here ? before : here;
        if (bottleneck < least) {
          least = bottleneck;
          where = j;
        }
      }
      best[(size_t)s * columns + i] = least;
      cut[(size_t)s * columns + i] = where;
    }
  }
  uint32_t end = count;
  for (uint32_t s = stages; s-- > 0;) {
    uint32_t begin = cut[(size_t)s * columns + end];
    for (uint32_t i = begin; i < end; ++i)
      node_slot[sequence[i]] = hgr__place_can_run(problem, sequence[i], s) ? s : HGR__NO_DEVICE;
    end = begin;
  }

cleanup:
  hgr__free(problem->allocator, sequence);
  hgr__free(problem->allocator, prefix);
  hgr__free(problem->allocator, best);
  hgr__free(problem->allocator, cut);
  return status;
}
