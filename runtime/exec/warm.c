/* Kernel warm-up at creation: each distinct kernel launch of the graph runs once
 * before creation returns, so that the driver's per-launch compilation happens
 * there and not in the caller's first run.
 *
 * PoCL compiles a kernel's work-group function at its first launch, specialised
 * per local size (and per whether the global offset is zero and the grid is small),
 * and llvmpipe (rusticl) compiles each kernel at its first launch too: a cold first
 * run of a CNN spends seconds there. A launch is "distinct" by kernel function,
 * program, work dimension, local size (the global size where the driver picks the
 * local size from it) and whether its grid is large (a dimension of 65535 work-items
 * or more), which is what PoCL specialises on (its grid_width_specialization_limit
 * is USHRT_MAX: the first run of examples/large.json took 301 ms against a median of
 * 65 ms while a kernel's small and large grids were one key); the step that first
 * has such a launch is enqueued as a run would enqueue it (its real arguments, its
 * real geometry, ordered by storage like a run), so the compiled code is exactly
 * what the run will use. Its results land in the executor's own storages, which
 * every run writes before reading (inputs are set, params loaded, intermediate
 * values produced); index-reading kernels clamp or wrap their indices, so garbage
 * in not-yet-written storages cannot send them out of bounds.
 *
 * What is not warmed: copy steps (no compilation), host-driven devices (Oclgrind
 * interprets; a launch there is slow and compiles nothing worth keeping), and the
 * user's own kernels (kernels.h: their arguments' meaning is not ours to assume).
 * The generated kernels of fused_elementwise are ours and warmed like the library's.
 *
 * Once every kernel of the programs compiled here was launched, their binaries are
 * stored in the program cache at creation instead of after the first run (PoCL
 * compiles the generic work-group function of every kernel of a program when asked
 * for its binary: seconds per program, which used to land in the first run). */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "executor_internal.h"

/* PoCL compiles a work-group function for grids whose every dimension is narrower
 * than this (its devices' grid_width_specialization_limit), another for the rest. */
#define LARGE_GRID 65535

/* One distinct launch already warmed. */
typedef struct warm_key_t {
  cl_program program;
  char function[64];
  cl_uint work_dim;
  bool use_local;
  size_t extent[3]; /* local size, or global size where the driver picks the local */
  bool large_grid;  /* a dimension of LARGE_GRID work-items or more */
} warm_key_t;

typedef struct warm_set_t {
  hgr_allocator_t allocator; /* the executor's */
  warm_key_t* keys;
  size_t count, capacity;
} warm_set_t;

/* The executor's record of program, or NULL (not one of its programs). */
static const hgr__program_t* program_record(const hgr_executor_t* executor, cl_program program) {
  for (size_t p = 0; p < executor->programs.count; ++p)
    if (executor->programs.programs[p].program == program) return &executor->programs.programs[p];
  return NULL;
}

static bool same_key(const warm_key_t* a, const warm_key_t* b) {
  if (a->program != b->program || a->work_dim != b->work_dim || a->use_local != b->use_local ||
      a->large_grid != b->large_grid ||
      strcmp(a->function, b->function))
    return false;
  for (cl_uint d = 0; d < a->work_dim && d < 3; ++d)
    if (a->extent[d] != b->extent[d]) return false;
  return true;
}

/* Whether launch is new; adds it when it is. */
static hgr_status_t note_launch(warm_set_t* set, const warm_key_t* key, bool* out_new) {
  *out_new = false;
  for (size_t i = 0; i < set->count; ++i)
    if (same_key(&set->keys[i], key)) return HGR_OK;
  if (set->count == set->capacity) {
    size_t capacity = set->capacity ? 2 * set->capacity : 32;
    warm_key_t* grown = hgr__realloc(set->allocator, set->keys, capacity * sizeof(*grown));
    if (!grown) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    set->keys = grown;
    set->capacity = capacity;
  }
  set->keys[set->count++] = *key;
  *out_new = true;
  return HGR_OK;
}

/* Whether step s has a launch to warm: one not seen before, of an op-library or
 * generated (fused_elementwise) program that (unless every program is warmed) was
 * compiled from source here. */
static hgr_status_t step_needs_warming(hgr_executor_t* executor, uint32_t s, bool all, warm_set_t* set,
                                       bool* out_warm, bool* out_skipped) {
  const hgr__step_t* step = &executor->steps[s];
  *out_warm = false;
  for (uint32_t k = 0; k < step->launch_count; ++k) {
    const hgr__kernel_launch_t* launch = &step->launches[k];
    warm_key_t key;
    memset(&key, 0, sizeof(key));
    cl_int error = clGetKernelInfo(launch->kernel, CL_KERNEL_PROGRAM, sizeof(key.program), &key.program, NULL);
    if (error == CL_SUCCESS)
      error = clGetKernelInfo(launch->kernel, CL_KERNEL_FUNCTION_NAME, sizeof(key.function), key.function, NULL);
    if (error != CL_SUCCESS) {
      char label[160];
      return HGR_CL_STATUS(error, "clGetKernelInfo for %s",
                           hgr__graph_node_label(executor->graph, step->node_id, label, sizeof(label)));
    }
    const hgr__program_t* program = program_record(executor, key.program);
    if (!program || program->source) { /* not one of the executor's, or a user's */
      *out_skipped |= program && program->from_source; /* the user's kernels */
      continue;
    }
    if (!all && !program->from_source) continue;
    key.work_dim = launch->launch.work_dim;
    key.use_local = launch->launch.use_local;
    for (cl_uint d = 0; d < key.work_dim && d < 3; ++d)
      key.extent[d] = key.use_local ? launch->launch.local[d] : launch->launch.global[d];
    for (cl_uint d = 0; d < key.work_dim && d < 3; ++d) key.large_grid |= launch->launch.global[d] >= LARGE_GRID;
    bool fresh = false;
    HGR_RETURN_IF_ERROR(note_launch(set, &key, &fresh));
    *out_warm |= fresh;
  }
  return HGR_OK;
}

/* Waits for every queue, as hgr_executor_wait does (a failure names its node and
 * makes the executor refuse further work), and retires what was enqueued. */
static hgr_status_t wait_for_queues(hgr_executor_t* executor) {
  hgr__order_t* order = &executor->order;
  cl_event* events = order->wait;
  uint32_t count = 0;
  for (uint32_t q = 0; q < order->queues.count; ++q) {
    if (!order->queues.queues[q].last) continue;
    HGR_RETURN_IF_ERROR(hgr__queue_flush(&order->queues, q));
    events[count++] = order->queues.queues[q].last;
  }
  if (count) HGR_RETURN_IF_ERROR(hgr__await_events(executor, events, count, hgr__order_end(order)));
  hgr__order_retire_all(order);
  return HGR_OK;
}

hgr_status_t hgr__kernels_warm(hgr_executor_t* executor, hgr_warm_up_t mode) {
  if (mode == HGR_WARM_UP_OFF || executor->plan_only || !executor->step_count) return HGR_OK;
  warm_set_t set = {.allocator = executor->allocator};
  bool skipped = false; /* some kernel of a program compiled here was not launched */
  uint32_t warmed = 0;
  uint64_t start = hgr__monotonic_ns();
  hgr_status_t status = hgr__order_reserve(&executor->order, hgr__commands_per_run(executor));
  for (uint32_t s = 0; s < executor->step_count && !status; ++s) {
    const hgr__step_t* step = &executor->steps[s];
    if (step->kind != HGR__STEP_KERNEL) continue;
    if (executor->order.queues.queues[step->queue].host_driven) {
      skipped = true;
      continue;
    }
    bool warm = false;
    status = step_needs_warming(executor, s, mode == HGR_WARM_UP_ALL, &set, &warm, &skipped);
    if (!status && warm) {
      status = hgr__step_enqueue(executor, s);
      warmed++;
    }
  }
  if (!status && warmed) status = wait_for_queues(executor);
  hgr__free(set.allocator, set.keys);
  executor->programs.stats.warm_launches += warmed;
  executor->programs.stats.warm_ms += (double)(hgr__monotonic_ns() - start) / 1e6;
  if (status) return hgr_status_annotate(status, "warming the kernels up at creation");
  /* Every kernel the graph launches from the programs compiled here has run: their
   * binaries hold what the runs need. */
  if (warmed && !skipped) {
    uint64_t store_start = hgr__monotonic_ns();
    hgr__programs_store(executor);
    executor->programs.stats.store_ms += (double)(hgr__monotonic_ns() - store_start) / 1e6;
  }
  return HGR_OK;
}
