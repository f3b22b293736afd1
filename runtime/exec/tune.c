/* Tile choices as the executor made them (hgr_executor_node_tile), and the tuning
 * pass (hgr_tune_graph), which measures every candidate through the public API: an
 * executor per candidate, with profiling, whose per-node device times pick the
 * winners that tune_store.c writes. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc.h"
#include "executor_internal.h"
#include "tune_store.h"

const char* hgr_tile_source_name(hgr_tile_source_t source) {
  switch (source) {
    case HGR_TILE_NONE: return "none";
    case HGR_TILE_LIMITS: return "limits";
    case HGR_TILE_TUNED: return "tuned";
    case HGR_TILE_CANDIDATE: return "candidate";
  }
  return "unknown";
}

hgr_status_t hgr_executor_node_tile(const hgr_executor_t* executor, uint32_t node_id, hgr_tile_choice_t* out_choice) {
  if (!executor || !out_choice)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "hgr_executor_node_tile: executor and out_choice must not be NULL");
  memset(out_choice, 0, sizeof(*out_choice));
  out_choice->device_index = SIZE_MAX;
  if (node_id >= executor->graph->node_count)
    return HGR_STATUS(HGR_STATUS_OUT_OF_RANGE, "node %u: the graph has %u nodes", node_id, executor->graph->node_count);
  for (uint32_t s = 0; s < executor->step_count; ++s)
    if (executor->steps[s].node_id == node_id) {
      if (executor->steps[s].kind == HGR__STEP_KERNEL) *out_choice = executor->steps[s].tile;
      out_choice->device_index = executor->steps[s].device_index;
      break;
    }
  return HGR_OK;
}

void hgr_tune_options_init(hgr_tune_options_t* options) {
  memset(options, 0, sizeof(*options));
  options->runs = 5;
  options->write = true;
}

/* ---- the tuning pass ----------------------------------------------------------------- */

typedef struct tune_pass_t {
  hgr_allocator_t allocator;  /* the instance's: the pass's tables and the tuning table */
  hgr_instance_t* instance;
  hgr_graph_t* graph;
  hgr_executor_options_t options;
  hgr_tune_options_t tune;
  uint32_t node_count;
  uint32_t candidates;        /* the most any node offers */
  hgr_tile_choice_t* limits;  /* per node: the limits' choice */
  double* ms;                 /* per node and candidate: its fastest run's ms, < 0 unmeasured */
  char (*names)[32];          /* per node and candidate: the tile's name */
} tune_pass_t;

static void progress(const tune_pass_t* pass, const char* format, ...) HGR_PRINTF(2, 3);
static void progress(const tune_pass_t* pass, const char* format, ...) {
  if (!pass->tune.progress) return;
  char line[1024];
  va_list args;
  va_start(args, format);
  vsnprintf(line, sizeof(line), format, args);
  va_end(args);
  pass->tune.progress(pass->tune.progress_user, line);
}

static int compare_doubles(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static bool given_by_params(const hgr_params_t* params, const char* name) {
  for (size_t p = 0; params && p < hgr_params_count(params); ++p) {
    hgr_tensor_info_t info;
    if (!hgr_params_get(params, p, &info, NULL) && info.name && !strcmp(info.name, name)) return true;
  }
  return false;
}

/* Sets every input the params do not give to zeros (the GEMM's time does not
 * depend on the values). */
static hgr_status_t set_zero_inputs(hgr_executor_t* executor, const hgr_params_t* params) {
  for (size_t i = 0; i < hgr_executor_input_count(executor); ++i) {
    hgr_tensor_info_t info;
    HGR_RETURN_IF_ERROR(hgr_executor_input_info(executor, i, &info));
    if (given_by_params(params, info.name)) continue;
    void* zeros = hgr__calloc(executor->allocator, info.bytes ? (size_t)info.bytes : 1, 1);
    if (!zeros) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    hgr_status_t status = hgr_executor_set_input(executor, i, zeros, (size_t)info.bytes);
    hgr__free(executor->allocator, zeros);
    HGR_RETURN_IF_ERROR(status);
  }
  return HGR_OK;
}

/* The limits' choice of every node, from an executor that only plans. */
static hgr_status_t find_candidates(tune_pass_t* pass) {
  hgr_executor_options_t options = pass->options;
  options.plan_only = true;
  options.profiling = false;
  options.tuning = HGR_TUNING_OFF;
  hgr_executor_t* executor = NULL;
  HGR_RETURN_IF_ERROR(hgr_executor_create(pass->instance, pass->graph, &options, &executor));
  hgr_status_t status = HGR_OK;
  for (uint32_t n = 0; n < pass->node_count && !status; ++n) {
    status = hgr_executor_node_tile(executor, n, &pass->limits[n]);
    if (pass->limits[n].candidate_count > pass->candidates) pass->candidates = pass->limits[n].candidate_count;
  }
  hgr_executor_release(executor);
  return status;
}

/* One candidate's executor: the graph with candidate c wherever it fits, and per
 * node whether it took c and its device time in each timed run. */
typedef struct candidate_run_t {
  hgr_executor_t* executor; /* NULL when c fits no node */
  bool* taken;              /* per node */
  double* samples;          /* per node and timed run, ms */
  uint32_t nodes;
  bool stepwise;            /* the device gives no profiling timestamps: host time per node */
} candidate_run_t;

/* Stepwise timing: the host time from the previous node's completion to this
 * node's, which holds its enqueue, its run and the wait (the same for every
 * candidate). */
typedef struct step_clock_t {
  const tune_pass_t* pass;
  candidate_run_t* run;
  uint32_t r, runs;
  uint64_t last_ns;
} step_clock_t;

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static bool clock_node(hgr_executor_t* executor, uint32_t node_id, void* user) {
  (void)executor;
  step_clock_t* clock = user;
  uint64_t now = now_ns();
  if (node_id < clock->pass->node_count && clock->run->taken[node_id])
    clock->run->samples[(size_t)node_id * clock->runs + clock->r] += (double)(now - clock->last_ns) / 1e6;
  clock->last_ns = now;
  return true;
}

static hgr_status_t open_candidate(tune_pass_t* pass, uint32_t c, hgr_executor_t* share_from, uint32_t runs,
                                   candidate_run_t* out_run) {
  hgr_executor_options_t options = pass->options;
  options.plan_only = false;
  options.profiling = true;
  options.tuning = HGR_TUNING_CANDIDATE;
  options.tuning_candidate = c;
  /* the weights once, not once per candidate */
  if (share_from) options.share_params_from = share_from;
  out_run->samples = hgr__calloc(pass->allocator, (size_t)pass->node_count * runs + 1, sizeof(double));
  out_run->taken = hgr__calloc(pass->allocator, pass->node_count + 1, sizeof(bool));
  if (!out_run->samples || !out_run->taken) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  HGR_RETURN_IF_ERROR(hgr_executor_create(pass->instance, pass->graph, &options, &out_run->executor));
  for (uint32_t n = 0; n < pass->node_count; ++n) {
    hgr_tile_choice_t choice;
    HGR_RETURN_IF_ERROR(hgr_executor_node_tile(out_run->executor, n, &choice));
    out_run->taken[n] = choice.source == HGR_TILE_CANDIDATE;
    if (out_run->taken[n]) {
      snprintf(pass->names[(size_t)n * pass->candidates + c], 32, "%s", choice.tile);
      out_run->nodes++;
    }
  }
  if (!out_run->nodes) {
    hgr_executor_release(out_run->executor);
    out_run->executor = NULL;
    return HGR_OK;
  }
  HGR_RETURN_IF_ERROR(set_zero_inputs(out_run->executor, options.params));
  /* untimed: first launches compile kernels and fault pages in */
  HGR_RETURN_IF_ERROR(hgr_executor_run(out_run->executor));
  return hgr_executor_wait(out_run->executor);
}

/* Timed run r of a candidate: each node's kernel time from the profile, or, on a
 * device whose profile has no timestamps (rusticl 22.3), the host time of each
 * node run one at a time. */
static hgr_status_t time_run(const tune_pass_t* pass, candidate_run_t* run, uint32_t r, uint32_t runs) {
  if (run->stepwise) {
    step_clock_t clock = {pass, run, r, runs, now_ns()};
    return hgr_executor_run_stepwise(run->executor, clock_node, &clock);
  }
  HGR_RETURN_IF_ERROR(hgr_executor_run(run->executor));
  HGR_RETURN_IF_ERROR(hgr_executor_wait(run->executor));
  /* Every kernel of the nodes measured needs a duration (rusticl 22.3 gives none). */
  size_t count = hgr_executor_command_count(run->executor);
  bool timed = true;
  for (size_t i = 0; i < count; ++i) {
    hgr_command_profile_t command;
    HGR_RETURN_IF_ERROR(hgr_executor_command_profile(run->executor, i, &command));
    if (command.kind != HGR_COMMAND_KERNEL || command.node_id >= pass->node_count || !run->taken[command.node_id])
      continue;
    if (!hgr_command_profile_has_duration(&command)) timed = false;
    else run->samples[(size_t)command.node_id * runs + r] += (double)(command.end_ns - command.start_ns) / 1e6;
  }
  if (timed) return HGR_OK;
  for (uint32_t n = 0; n < pass->node_count; ++n) run->samples[(size_t)n * runs + r] = 0;
  run->stepwise = true;
  return time_run(pass, run, r, runs);
}

/* Medians into pass->ms, and the candidate's progress line. */
static void close_candidate(tune_pass_t* pass, uint32_t c, candidate_run_t* run, uint32_t runs) {
  double total = 0;
  char tile[32] = "";
  for (uint32_t n = 0; n < pass->node_count && run->executor; ++n) {
    if (!run->taken[n]) continue;
    if (!tile[0]) snprintf(tile, sizeof(tile), "%s", pass->names[(size_t)n * pass->candidates + c]);
    double* node_samples = &run->samples[(size_t)n * runs];
    qsort(node_samples, runs, sizeof(double), compare_doubles);
    /* The fastest run: other load on the machine only ever adds time, and adds more
     * to some tiles than to others (a preempted thread holds up a kernel of few
     * large work-groups longer), so the minimum ranks the tiles as an unloaded
     * machine runs them, where a median ranks them by how they suffer the load. */
    double fastest = node_samples[0];
    /* no timestamps (rusticl 22.3 reports zeros): unmeasured */
    pass->ms[(size_t)n * pass->candidates + c] = fastest > 0 ? fastest : -1;
    total += fastest;
  }
  if (run->executor)
    progress(pass, "candidate %u of %u (%s): %u node%s, %.3f ms per run (%s, fastest of %u)", c + 1, pass->candidates,
             tile, run->nodes, run->nodes == 1 ? "" : "s", total,
             run->stepwise ? "host time node by node: the device gives no profiling timestamps" : "device time",
             runs);
  else
    progress(pass, "candidate %u of %u: fits no node on its device", c + 1, pass->candidates);
}

/* Every candidate's executor at once, their timed runs interleaved (candidate 1,
 * 2, ..., then again), so that the load of a shared machine drifting over the
 * pass weighs on every candidate alike. */
static hgr_status_t measure_candidates(tune_pass_t* pass) {
  uint32_t runs = pass->tune.runs ? pass->tune.runs : 5;
  candidate_run_t* candidate = hgr__calloc(pass->allocator, pass->candidates, sizeof(*candidate));
  if (!candidate) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  hgr_status_t status = HGR_OK;
  hgr_executor_t* first = NULL;
  for (uint32_t c = 0; c < pass->candidates && !status; ++c) {
    status = open_candidate(pass, c, first, runs, &candidate[c]);
    if (status) status = hgr_status_annotate(status, "tuning candidate %u", c + 1);
    else if (!first) first = candidate[c].executor;
  }
  for (uint32_t r = 0; r < runs && !status; ++r)
    for (uint32_t c = 0; c < pass->candidates && !status; ++c)
      if (candidate[c].executor) {
        status = time_run(pass, &candidate[c], r, runs);
        if (status) status = hgr_status_annotate(status, "tuning candidate %u, run %u", c + 1, r + 1);
      }
  for (uint32_t c = 0; c < pass->candidates; ++c) {
    if (!status) close_candidate(pass, c, &candidate[c], runs);
  }
  /* the sharers before the executor whose weights they use */
  for (uint32_t c = pass->candidates; c-- > 0;) {
    hgr_executor_release(candidate[c].executor);
    hgr__free(pass->allocator, candidate[c].taken);
    hgr__free(pass->allocator, candidate[c].samples);
  }
  hgr__free(pass->allocator, candidate);
  return status;
}

/* Per layer (device and key): the candidate whose nodes' times sum least, among
 * those measured on every node of the layer; records the winners in table. */
static hgr_status_t choose_winners(tune_pass_t* pass, hgr__tune_table_t* table, hgr_tune_summary_t* summary) {
  bool* done = hgr__calloc(pass->allocator, pass->node_count + 1, sizeof(bool));
  double* total = hgr__calloc(pass->allocator, pass->candidates + 1, sizeof(double));
  bool* complete = hgr__calloc(pass->allocator, pass->candidates + 1, sizeof(bool));
  hgr_status_t status = done && total && complete ? HGR_OK : HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  for (uint32_t first = 0; first < pass->node_count && !status; ++first) {
    const hgr_tile_choice_t* head = &pass->limits[first];
    if (done[first] || head->source == HGR_TILE_NONE) continue;
    uint32_t nodes = 0;
    for (uint32_t c = 0; c < pass->candidates; ++c) {
      total[c] = 0;
      complete[c] = true;
    }
    for (uint32_t n = first; n < pass->node_count; ++n) {
      const hgr_tile_choice_t* choice = &pass->limits[n];
      if (done[n] || choice->source == HGR_TILE_NONE || choice->device_index != head->device_index ||
          strcmp(choice->key, head->key))
        continue;
      done[n] = true;
      nodes++;
      for (uint32_t c = 0; c < pass->candidates; ++c) {
        double ms = pass->ms[(size_t)n * pass->candidates + c];
        if (ms < 0) complete[c] = false;
        else total[c] += ms;
      }
    }
    uint32_t limits = head->candidate, best = UINT32_MAX;
    for (uint32_t c = 0; c < pass->candidates; ++c)
      if (complete[c] && (best == UINT32_MAX || total[c] < total[best])) best = c;
    if (best == UINT32_MAX || limits >= pass->candidates || !complete[limits]) {
      progress(pass, "%s (%u node%s): not measured on every node; left to the limits", head->key, nodes,
               nodes == 1 ? "" : "s");
      continue;
    }
    const char* winner = pass->names[(size_t)first * pass->candidates + best];
    summary->layers++;
    summary->nodes += nodes;
    summary->limits_ms += total[limits];
    summary->tuned_ms += total[best];
    if (best != limits) summary->changed++;
    const hgr_device_info_t* info = hgr_instance_device(pass->instance, head->device_index);
    if (best == limits)
      progress(pass, "%s on %s (%u node%s): %s %.3f ms, the limits' choice too", head->key, info ? info->spec : "?",
               nodes, nodes == 1 ? "" : "s", winner, total[best]);
    else
      progress(pass, "%s on %s (%u node%s): %s %.3f ms; the limits' %s %.3f ms (%+.0f%%)", head->key,
               info ? info->spec : "?", nodes, nodes == 1 ? "" : "s", winner, total[best], head->tile, total[limits],
               100.0 * (total[best] - total[limits]) / total[limits]);
    if (info) {
      char device[1024];
      status = hgr__tune_table_put(pass->allocator, table, hgr__tune_device_id(info, device, sizeof(device)),
                                   head->key, winner, total[best] * 1000.0 / nodes);
    }
  }
  hgr__free(pass->allocator, done);
  hgr__free(pass->allocator, total);
  hgr__free(pass->allocator, complete);
  return status;
}

hgr_status_t hgr_tune_graph(hgr_instance_t* instance, hgr_graph_t* graph, const hgr_executor_options_t* executor_options,
                            const hgr_tune_options_t* tune_options, hgr_tune_summary_t* out_summary) {
  if (!instance || !graph)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "hgr_tune_graph: instance and graph must not be NULL");
  tune_pass_t pass = {hgr__instance_allocator(instance), instance, graph, {0}, {0},
                      (uint32_t)hgr_graph_node_count(graph), 0, NULL, NULL, NULL};
  if (executor_options) pass.options = *executor_options;
  else hgr_executor_options_init(&pass.options);
  if (tune_options) pass.tune = *tune_options;
  else hgr_tune_options_init(&pass.tune);
  hgr_tune_summary_t summary;
  memset(&summary, 0, sizeof(summary));
  hgr__tune_table_t table = {0};
  char* path = NULL;
  hgr_status_t status = HGR_OK;
  pass.limits = hgr__calloc(pass.allocator, pass.node_count + 1, sizeof(*pass.limits));
  if (!pass.limits) status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  if (!status) status = find_candidates(&pass);
  if (!status && pass.candidates == 0) {
    progress(&pass, "no node has tile candidates: nothing to tune");
    goto cleanup;
  }
  if (!status) {
    size_t cells = (size_t)pass.node_count * pass.candidates;
    pass.ms = hgr__alloc(pass.allocator, cells * sizeof(double));
    pass.names = hgr__calloc(pass.allocator, cells, sizeof(*pass.names));
    if (!pass.ms || !pass.names) status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    for (size_t i = 0; !status && i < cells; ++i) pass.ms[i] = -1;
  }
  if (!status) status = measure_candidates(&pass);
  if (!status && pass.tune.write) {
    path = hgr__tune_path(pass.allocator, pass.options.program_cache.directory);
    if (!path) status = HGR_STATUS(HGR_STATUS_UNAVAILABLE, "no cache directory for the tuning file (set HGR_CACHE_DIR)");
  }
  if (!status && path) {
    hgr_status_t load = hgr__tune_table_load(pass.allocator, path, &table);
    if (load) {
      progress(&pass, "replacing a tuning file that does not parse: %s", hgr_status_message(load));
      hgr_status_free(load);
      hgr__tune_table_free(pass.allocator, &table);
    }
  }
  if (!status) status = choose_winners(&pass, &table, &summary);
  if (!status && path) {
    status = hgr__tune_table_save(pass.allocator, path, &table);
    if (!status) snprintf(summary.path, sizeof(summary.path), "%s", path);
  }

cleanup:
  if (out_summary) *out_summary = summary;
  hgr__tune_table_free(pass.allocator, &table);
  hgr__free(pass.allocator, path);
  hgr__free(pass.allocator, pass.limits);
  hgr__free(pass.allocator, pass.ms);
  hgr__free(pass.allocator, pass.names);
  return status;
}
