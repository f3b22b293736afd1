/* Enqueueing one step of a run: a kernel step's launches, ordered after the
 * storages it reads and writes, or a copy step (transfer.c). */
#include <stdlib.h>

#include "executor_internal.h"

/* An upper bound on the events one run keeps: every launch, copy command and unmap,
 * the staging user event a staged copy keeps, and a map and unmap per input and
 * output bound to host memory. */
uint32_t hgr__commands_per_run(hgr_executor_t* executor) {
  if (executor->commands_per_run) return executor->commands_per_run;
  uint64_t count = 1 + 2 * ((uint64_t)executor->graph->arg_count + executor->graph->head_count);
  for (uint32_t s = 0; s < executor->step_count; ++s) {
    const hgr__step_t* step = &executor->steps[s];
    if (step->kind == HGR__STEP_KERNEL) count += step->launch_count;
    else if (step->kind == HGR__STEP_COPY && step->path == HGR__COPY_REMOTE) count += 2 * (uint64_t)step->remote->chunk_count;
    else if (step->kind == HGR__STEP_COPY && step->path == HGR__COPY_DIRECT) count += 1;
    else if (step->kind == HGR__STEP_COPY && step->path == HGR__COPY_STAGED) count += 3;
    else if (step->kind == HGR__STEP_COPY) count += 3 * (uint64_t)step->chunk_count;
  }
  executor->commands_per_run = count < UINT32_MAX / 2 ? (uint32_t)count : UINT32_MAX / 2;
  return executor->commands_per_run;
}

/* The waits of a kernel step: the accesses its schedule checks (plan.c), or all of
 * them while stepping (between steps the caller may set inputs or read entries,
 * which the schedule does not replay). */
static hgr_status_t kernel_waits(hgr_executor_t* executor, const hgr__step_t* step, uint32_t* wait_count) {
  hgr__order_t* order = &executor->order;
  if (!executor->stepping) {
    for (uint32_t c = 0; c < step->check_count; ++c)
      HGR_RETURN_IF_ERROR(hgr__order_storage(order, step->checks[c] >> 1, step->checks[c] & 1, step->queue, wait_count));
    return HGR_OK;
  }
  for (uint32_t i = 0; i < step->in_count; ++i)
    HGR_RETURN_IF_ERROR(hgr__order_storage(order, step->in_storages[i], false, step->queue, wait_count));
  for (uint32_t i = 0; i < step->out_count; ++i)
    HGR_RETURN_IF_ERROR(hgr__order_storage(order, step->out_storages[i], true, step->queue, wait_count));
  return HGR_OK;
}

static hgr_status_t enqueue_kernel(hgr_executor_t* executor, hgr__step_t* step) {
  cl_event* wait = executor->order.wait;
  uint32_t wait_count = 0;
  HGR_RETURN_IF_ERROR(kernel_waits(executor, step, &wait_count));
  /* The launches share the in-order queue: the first waits, the last completes the
   * step. Every command keeps its event until its run retires, so that a failure is
   * found and named: neither PoCL 3.1 nor rusticl fails the commands after a failed
   * one on an in-order queue (PoCL does only for those enqueued before the failure),
   * so an event shared by a stretch of commands would miss it. Without profiling
   * the order takes the enqueue's reference; with it, done[k] keeps that one to time
   * launch k and the order takes its own (and records the command for the profile). */
  cl_event event = NULL; /* the last launch's: the step's completion */
  for (uint32_t k = 0; k < step->launch_count; ++k) {
    const hgr__kernel_launch_t* launch = &step->launches[k];
    event = NULL;
    cl_int error = clEnqueueNDRangeKernel(executor->order.queues.queues[step->queue].queue, launch->kernel,
                                          launch->launch.work_dim, NULL, launch->launch.global,
                                          launch->launch.use_local ? launch->launch.local : NULL,
                                          k == 0 ? wait_count : 0, k == 0 && wait_count ? wait : NULL, &event);
    if (error != CL_SUCCESS) {
      char label[160];
      return HGR_CL_STATUS(error, "clEnqueueNDRangeKernel(%s) for %s on %s",
                           executor->graph->nodes[step->node_id].func_name,
                           hgr__graph_node_label(executor->graph, step->node_id, label, sizeof(label)),
                           executor->order.queues.queues[step->queue].spec);
    }
    if (executor->profile.enabled) {
      if (step->done[k]) clReleaseEvent(step->done[k]);
      step->done[k] = event;
      HGR_RETURN_IF_ERROR(hgr__order_enqueued(&executor->order, step->queue, event));
    } else {
      HGR_RETURN_IF_ERROR(hgr__order_adopt(&executor->order, step->queue, event));
    }
  }
  /* The trackers hear only of the steps that something off their queue (or after the
   * run) waits for. */
  if (!step->tracked && !executor->stepping) return HGR_OK;
  for (uint32_t i = 0; i < step->in_count; ++i)
    hgr__order_record(&executor->order, step->in_storages[i], false, event, step->queue);
  for (uint32_t i = 0; i < step->out_count; ++i)
    hgr__order_record(&executor->order, step->out_storages[i], true, event, step->queue);
  return HGR_OK;
}


hgr_status_t hgr__step_enqueue(hgr_executor_t* executor, uint32_t s) {
  hgr__step_t* step = &executor->steps[s];
  if (step->kind == HGR__STEP_NOP) return HGR_OK;
  hgr__order_begin_step(&executor->order, s, step->node_id);
  hgr_status_t status =
      step->kind == HGR__STEP_KERNEL ? enqueue_kernel(executor, step) : hgr__transfer_enqueue(executor, step);
  hgr__order_end_step(&executor->order);
  return status;
}
