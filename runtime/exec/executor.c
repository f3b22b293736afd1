/* The executor's life: creation (every part built once, in layer order), runs (every
 * step enqueued, waits only where the caller asks), stepping, waiting for everything,
 * and release. The parts live in their own files (executor_internal.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "executor_internal.h"

void hgr_executor_options_init(hgr_executor_options_t* options) {
  memset(options, 0, sizeof(*options));
}

/* ---- creation ------------------------------------------------------------------------- */

static hgr_status_t allocate_parts(hgr_executor_t* executor) {
  const hgr_graph_t* graph = executor->graph;
  HGR_RETURN_IF_ERROR(hgr__host_io_create(executor));
  HGR_RETURN_IF_ERROR(hgr__traffic_create(executor));
  executor->staging.outputs = hgr__calloc(executor->allocator, graph->head_count + 1, sizeof(void*));
  executor->fences.output_holder = hgr__calloc(executor->allocator, graph->head_count + 1, sizeof(hgr_fence_t*));
  executor->fences.snapshot_pool = hgr__calloc(executor->allocator, graph->head_count + 1, sizeof(cl_mem*));
  executor->fences.snapshot_pool_count = hgr__calloc(executor->allocator, graph->head_count + 1, sizeof(uint32_t));
  for (uint32_t n = 0; n < graph->node_count; ++n) executor->step_count += graph->nodes[n].is_op;
  executor->steps = hgr__calloc(executor->allocator, executor->step_count + 1, sizeof(hgr__step_t));
  if (executor->profile.enabled)
    executor->profile.step_host_ns =
        hgr__calloc(executor->allocator, 2 * (size_t)executor->step_count + 1, sizeof(uint64_t));
  if (!executor->staging.outputs || !executor->fences.output_holder || !executor->fences.snapshot_pool ||
      !executor->fences.snapshot_pool_count || !executor->steps ||
      (executor->profile.enabled && !executor->profile.step_host_ns))
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  return HGR_OK;
}

/* The largest number of storages one step touches: the wait list's size. */
static uint32_t most_storages_per_step(const hgr_executor_t* executor) {
  uint32_t most = 1;
  for (uint32_t s = 0; s < executor->step_count; ++s) {
    uint32_t touched = executor->steps[s].in_count + executor->steps[s].out_count;
    if (touched > most) most = touched;
  }
  return most;
}

hgr_status_t hgr_executor_create(hgr_instance_t* instance, hgr_graph_t* graph,
                                 const hgr_executor_options_t* options, hgr_executor_t** out_executor) {
  *out_executor = NULL;
  if (!instance || !graph)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "hgr_executor_create needs an instance and a graph");
  hgr_executor_options_t defaults;
  if (!options) {
    hgr_executor_options_init(&defaults);
    options = &defaults;
  }
  hgr_allocator_t allocator = hgr__instance_allocator(instance);
  hgr_executor_t* executor = hgr__calloc(allocator, 1, sizeof(*executor));
  if (!executor) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  executor->allocator = allocator;
  executor->device_keys.allocator = allocator;
  executor->order.allocator = executor->order.queues.allocator = executor->order.bridges.allocator = allocator;
  executor->pool.allocator = allocator;
  executor->programs.allocator = allocator;
  executor->instance = instance;
  executor->graph = hgr_graph_retain(graph);
  executor->plan_only = options->plan_only;
  executor->profile.enabled = options->profiling;
  executor->order.enqueue_step = executor->order.enqueue_node = UINT32_MAX;
  executor->programs.cache = options->program_cache;
  executor->programs.pool = options->program_pool; /* borrowed for creation only */
  executor->programs.kernels = hgr_kernel_library_retain(options->kernels);
  executor->log = options->log;
  executor->log_user = options->log_user;
  executor->transport = options->transport;
  atomic_init(&executor->remote_pending, 0);
  hgr_executor_t* source = options->share_params_from;

  hgr_status_t status = allocate_parts(executor);
  if (!status)
    status = hgr__device_keys_bind(&executor->device_keys, instance, graph, options->bindings, options->binding_count,
                                   options->transport);
  if (!status) status = hgr__steps_plan(executor, options);
  if (status || executor->plan_only) goto cleanup;

  if ((status = hgr__order_prepare(&executor->order, graph->storage_count, most_storages_per_step(executor))))
    goto cleanup;
  /* The source's writes into what is shared (its params) must be complete before
   * this executor reads them: it has no event of the source's to wait on. */
  if (hgr__storage_borrows(&executor->pool) &&
      (status = hgr_status_annotate(hgr_executor_wait(source), "share_params_from: waiting for the source executor")))
    goto cleanup;
  if ((status = hgr__storage_allocate(&executor->pool, instance, graph, source ? &source->pool : NULL)) ||
      (status = hgr__programs_build(executor)) || (status = hgr__steps_bind(executor)) ||
      (status = hgr__steps_schedule(executor)))
    goto cleanup;
  hgr__host_io_mark_shared_inputs(executor);
  /* Shared inputs hold the source's params already. */
  if (options->params) status = hgr__host_io_load_params(executor, options->params, true, NULL);
  if (!status) hgr__storage_lend(&executor->pool, source ? &source->pool : NULL);
  if (!status) status = hgr__kernels_warm(executor, options->warm_up);

cleanup:
  executor->programs.pool = NULL;
  if (status) {
    hgr_executor_release(executor);
    return status;
  }
  *out_executor = executor;
  return HGR_OK;
}

hgr_graph_t* hgr_executor_graph(const hgr_executor_t* executor) { return executor ? executor->graph : NULL; }

hgr_instance_t* hgr_executor_instance(const hgr_executor_t* executor) {
  return executor ? executor->instance : NULL;
}

/* ---- runs ------------------------------------------------------------------------------- */

/* Enqueues one run; with out_fence, returns its fence, which holds the outputs. */
static hgr_status_t start_run(hgr_executor_t* executor, hgr_fence_t** out_fence) {
  if (out_fence) *out_fence = NULL;
  if (!executor) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "executor is NULL");
  if (executor->plan_only)
    return HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION, "this executor was created plan-only and cannot run");
  HGR_RETURN_IF_ERROR(hgr__check_usable(executor));
  HGR_RETURN_IF_ERROR(hgr__host_io_check_inputs_set(executor));
  hgr__fences_retire_completed(executor);
  HGR_RETURN_IF_ERROR(hgr__fences_release_holders(executor, UINT32_MAX));
  HGR_RETURN_IF_ERROR(hgr__order_reserve(&executor->order, hgr__commands_per_run(executor)));
  bool profiling = executor->profile.enabled;
  if (profiling) hgr__order_profile_reset(&executor->order);
  executor->order.recording = profiling;
  executor->profile.complete = false;
  executor->run_count++;
  hgr_status_t status = hgr__host_io_sync_bindings(executor, true);
  for (uint32_t s = 0; s < executor->step_count && !status; ++s) {
    if (profiling) executor->profile.step_host_ns[2 * s] = hgr__monotonic_ns();
    status = hgr__step_enqueue(executor, s);
    if (profiling) executor->profile.step_host_ns[2 * s + 1] = hgr__monotonic_ns();
  }
  if (!status) status = hgr__host_io_sync_bindings(executor, false);
  for (uint32_t q = 0; q < executor->order.queues.count; ++q)
    status = hgr_status_join(status, hgr__queue_flush(&executor->order.queues, q));
  executor->run_in_flight = true;
  /* Plain runs retire at hgr_executor_wait (or with a later fence's run). */
  if (!out_fence) return hgr_status_annotate(status, "run");
  hgr_fence_t* fence = NULL;
  if (!status) status = hgr__fence_create(executor, &fence);
  if (!status) {
    fence->refs++; /* the caller's */
    hgr__fences_hold_outputs(executor, fence);
    *out_fence = fence;
  }
  return hgr_status_annotate(status, "run");
}

hgr_status_t hgr_executor_run(hgr_executor_t* executor) { return start_run(executor, NULL); }

hgr_status_t hgr_executor_run_async(hgr_executor_t* executor, hgr_fence_t** out_fence) {
  if (!out_fence) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "out_fence is NULL");
  return start_run(executor, out_fence);
}

/* The latest run's sends to other ranks (remote.c): complete once the transport is
 * done with their staging. Then whether a transfer between ranks failed. */
static hgr_status_t await_sends(hgr_executor_t* executor) {
  hgr_status_t status = HGR_OK;
  for (uint32_t s = 0; s < executor->step_count && !status; ++s) {
    hgr__remote_copy_t* copy = executor->steps[s].remote;
    for (uint32_t k = 0; copy && copy->sending && k < copy->chunk_count && !status; ++k)
      if (copy->chunks[k].user)
        status = hgr__await_events(executor, &copy->chunks[k].user, 1, hgr__order_end(&executor->order));
  }
  if (!status && executor->transport) status = hgr__remote_failure(executor);
  if (status && !executor->failure) status = hgr__fail_executor(executor, status);
  return status;
}

hgr_status_t hgr_executor_wait(hgr_executor_t* executor) {
  if (!executor) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "executor is NULL");
  HGR_RETURN_IF_ERROR(hgr__check_usable(executor));
  hgr__order_t* order = &executor->order;
  hgr_status_t status = HGR_OK;
  cl_event* events = order->wait; /* holds more than one event per queue */
  uint32_t count = 0;
  for (uint32_t q = 0; q < order->queues.count && !status; ++q) {
    if (!order->queues.queues[q].last) continue;
    status = hgr__queue_flush(&order->queues, q);
    events[count++] = order->queues.queues[q].last;
  }
  if (!status && count) status = hgr__await_events(executor, events, count, hgr__order_end(order));
  if (!status) status = await_sends(executor);
  if (!status) { /* every queue is idle */
    hgr__order_retire_all(order);
    hgr__fences_retire(executor, NULL);
  }
  executor->run_in_flight = false;
  return status;
}

/* ---- stepping (debugging) ------------------------------------------------------------ */

hgr_status_t hgr_executor_run_stepwise(hgr_executor_t* executor, hgr_node_visitor_t visit, void* user) {
  if (!executor || !visit) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "executor and visit are needed");
  HGR_RETURN_IF_ERROR(hgr_executor_wait(executor)); /* also refuses plan-only and failed executors */
  const hgr_graph_t* graph = executor->graph;
  HGR_RETURN_IF_ERROR(hgr__host_io_check_inputs_set(executor));
  for (uint32_t i = 0; i < graph->arg_count; ++i)
    if (!visit(executor, graph->arg_nodes[i], user)) return HGR_OK;
  if (executor->profile.enabled) hgr__order_profile_reset(&executor->order);
  executor->order.recording = false; /* not a profiled run */
  executor->profile.complete = false;
  HGR_RETURN_IF_ERROR(hgr__fences_release_holders(executor, UINT32_MAX));
  HGR_RETURN_IF_ERROR(hgr__order_reserve(&executor->order, hgr__commands_per_run(executor)));
  HGR_RETURN_IF_ERROR(hgr__host_io_sync_bindings(executor, true));
  for (uint32_t s = 0; s < executor->step_count; ++s) {
    const hgr__step_t* step = &executor->steps[s];
    executor->stepping = true;
    hgr_status_t status = hgr__step_enqueue(executor, s);
    executor->run_in_flight = true;
    if (!status) status = hgr_executor_wait(executor);
    executor->stepping = false;
    if (status) return hgr_status_annotate(status, "stepping %s", graph->nodes[step->node_id].name);
    if (!visit(executor, step->node_id, user)) return HGR_OK;
  }
  HGR_RETURN_IF_ERROR(hgr__host_io_sync_bindings(executor, false));
  return hgr_executor_wait(executor);
}

/* ---- release ----------------------------------------------------------------------------- */

void hgr_executor_release(hgr_executor_t* executor) {
  if (!executor) return;
  /* Every bridge must be set before anything it touches goes away. After a device
   * failure nothing is waited for (it may never complete); the bridges are failed. */
  bool idle = true;
  if (executor->order.queues.count && !executor->failure) hgr_status_free(hgr_executor_wait(executor));
  if (executor->failure || executor->order.bridges.count || executor->order.command_count) {
    hgr__bridges_fail_unset(&executor->order.bridges);
    idle = hgr__drain_after_failure(executor);
  }
  /* Commands stuck behind a failed one may still name the bridges: those are left
   * to the driver rather than freed under it. */
  /* The transport may still write into a receive's staging: wait until it holds no
   * transfer of ours (each ends within its timeout), else leave the staging be. */
  if (!hgr__remote_settle(executor))
    for (uint32_t s = 0; s < executor->step_count; ++s) hgr__remote_release(&executor->steps[s], false);
  hgr__order_forget(&executor->order, idle);
  hgr__fences_detach(executor);
  hgr__host_io_release(executor);
  hgr__traffic_release(executor);
  for (uint32_t o = 0; executor->staging.outputs && o < executor->graph->head_count; ++o)
    hgr__free(executor->allocator, executor->staging.outputs[o]);
  hgr__free(executor->allocator, executor->staging.outputs);
  hgr__free(executor->allocator, executor->staging.entry);
  hgr__free(executor->allocator, executor->profile.step_host_ns);
  hgr_status_free(executor->failure);
  hgr__steps_release(executor);
  hgr__storage_release(&executor->pool);
  hgr__programs_release(&executor->programs);
  hgr__order_release(&executor->order);
  hgr__device_keys_release(&executor->device_keys);
  hgr_graph_release(executor->graph);
  hgr__free(executor->allocator, executor);
}
