/* Runs as fences (hgr_fence_t): what completes each run in flight, retiring runs in
 * order, and the outputs a fence still holds, copied aside before a later write
 * reuses their storage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "executor_internal.h"

/* What the latest run's completion allows: its profile can be read, and every kernel
 * has been launched once, so PoCL's binaries are complete and worth storing. */
static void latest_run_completed(hgr_executor_t* executor) {
  if (executor->run_in_flight && !executor->stepping) executor->profile.complete = executor->profile.enabled;
  if (executor->run_in_flight) hgr__programs_store(executor);
  executor->run_in_flight = false;
}

static hgr_status_t copy_status(hgr_status_t status) {
  return HGR_STATUS(hgr_status_code(status), "%s", hgr_status_message(status));
}

/* Frees the fence once neither the executor nor the caller holds it. */
static void fence_unref(hgr_fence_t* fence) {
  if (--fence->refs) return;
  hgr_executor_t* executor = fence->executor;
  if (executor) {
    for (hgr_fence_t** link = &executor->fences.first; *link; link = &(*link)->next)
      if (*link == fence) {
        *link = fence->next;
        break;
      }
  }
  uint32_t outputs = executor ? executor->graph->head_count : 0;
  for (uint32_t o = 0; fence->snapshots && o < outputs; ++o) {
    cl_mem snapshot = fence->snapshots[o];
    if (!snapshot) continue;
    /* Back to the pool, unless the caller was given it (its content must stay). */
    if (!fence->exported[o]) {
      cl_mem* grown =
          hgr__realloc(executor->allocator, executor->fences.snapshot_pool[o],
                       (executor->fences.snapshot_pool_count[o] + 1) * sizeof(cl_mem));
      if (grown) {
        executor->fences.snapshot_pool[o] = grown;
        grown[executor->fences.snapshot_pool_count[o]++] = snapshot;
        continue;
      }
    }
    clReleaseMemObject(snapshot);
  }
  for (uint32_t e = 0; e < fence->event_count; ++e) clReleaseEvent(fence->events[e]);
  hgr_status_free(fence->failure);
  hgr__free(fence->allocator, fence->events);
  hgr__free(fence->allocator, fence->queue_seq);
  hgr__free(fence->allocator, fence->snapshots);
  hgr__free(fence->allocator, fence->exported);
  hgr__free(fence->allocator, fence);
}

/* Retires the runs up to and including `through` (NULL: every run), whose commands
 * have all completed, oldest first; then the commands they cover. */
void hgr__fences_retire(hgr_executor_t* executor, hgr_fence_t* through) {
  if (through) hgr__order_retire(&executor->order, through->queue_seq, through->command_end);
  uint64_t last_run = through ? through->run : executor->run_count;
  if (last_run == executor->run_count) latest_run_completed(executor);
  hgr_fence_t* fence = executor->fences.first;
  while (fence && fence->run <= last_run) {
    hgr_fence_t* next = fence->next;
    if (!fence->retired) {
      fence->retired = true;
      fence_unref(fence); /* the executor's reference */
    }
    fence = next;
  }
}

/* Retires the oldest runs that have completed without a failure, without waiting
 * (at the start of a run, so fenced runs whose fences were released unwaited do not
 * pile up). */
void hgr__fences_retire_completed(hgr_executor_t* executor) {
  hgr_fence_t* done = NULL;
  for (hgr_fence_t* fence = executor->fences.first; fence; fence = fence->next) {
    if (fence->retired) continue;
    if (hgr__events_complete(fence->events, fence->event_count) != 1) break;
    done = fence;
  }
  if (!done) return;
  hgr_status_t failure = hgr__find_failure(executor, done->command_end);
  if (failure) { /* left for a wait to report */
    hgr_status_free(failure);
    return;
  }
  hgr__fences_retire(executor, done);
}

/* A fence for the run just enqueued: each queue's last command, and where the run
 * ends. The executor holds one reference until it retires the run. */
hgr_status_t hgr__fence_create(hgr_executor_t* executor, hgr_fence_t** out_fence) {
  hgr_fence_t* fence = hgr__calloc(executor->allocator, 1, sizeof(*fence));
  if (fence) {
    fence->allocator = executor->allocator;
    fence->events = hgr__calloc(executor->allocator, executor->order.queues.count, sizeof(cl_event));
    fence->queue_seq = hgr__calloc(executor->allocator, executor->order.queues.count, sizeof(uint64_t));
    fence->snapshots = hgr__calloc(executor->allocator, executor->graph->head_count + 1, sizeof(cl_mem));
    fence->exported = hgr__calloc(executor->allocator, executor->graph->head_count + 1, sizeof(bool));
  }
  if (!fence || !fence->events || !fence->queue_seq || !fence->snapshots || !fence->exported) {
    if (fence) {
      hgr__free(executor->allocator, fence->events);
      hgr__free(executor->allocator, fence->queue_seq);
      hgr__free(executor->allocator, fence->snapshots);
      hgr__free(executor->allocator, fence->exported);
      hgr__free(executor->allocator, fence);
    }
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  }
  fence->executor = executor;
  fence->refs = 1;
  fence->run = executor->run_count;
  for (uint32_t q = 0; q < executor->order.queues.count; ++q) {
    const hgr__queue_t* queue = &executor->order.queues.queues[q];
    fence->queue_seq[q] = queue->seq;
    if (queue->last && queue->seq > queue->retired_seq) {
      clRetainEvent(queue->last);
      fence->events[fence->event_count++] = queue->last;
    }
  }
  fence->command_end = hgr__order_end(&executor->order);
  hgr_fence_t** link = &executor->fences.first;
  while (*link) link = &(*link)->next;
  *link = fence;
  *out_fence = fence;
  return HGR_OK;
}

/* Copies output index, as its storage holds it now (after the fence's run wrote it
 * and before anything later writes it: ordered as a reader), into a buffer of the
 * fence's. */
static hgr_status_t snapshot_output(hgr_executor_t* executor, hgr_fence_t* fence, size_t index) {
  if (fence->snapshots[index]) return HGR_OK;
  hgr_tensor_info_t info;
  HGR_RETURN_IF_ERROR(hgr_graph_output_info(executor->graph, index, &info));
  uint32_t storage_slot = hgr__output_storage(executor, index);
  uint32_t queue = hgr__transfer_queue_of(executor, storage_slot);
  const char* spec = hgr__device_spec(executor->instance, executor->pool.storages[storage_slot].device_index);
  cl_mem snapshot = NULL;
  cl_int error = CL_SUCCESS;
  if (executor->fences.snapshot_pool_count[index]) {
    snapshot = executor->fences.snapshot_pool[index][--executor->fences.snapshot_pool_count[index]];
  } else {
    snapshot = clCreateBuffer(executor->order.queues.queues[queue].context, CL_MEM_READ_WRITE,
                              info.bytes ? info.bytes : 4, NULL, &error);
    if (error != CL_SUCCESS || !snapshot)
      return HGR_CL_STATUS(error, "clCreateBuffer(a copy of output %zu '%s', %llu bytes) on %s", index, info.name,
                           (unsigned long long)info.bytes, spec);
  }
  uint32_t wait_count = 0;
  hgr_status_t status = hgr__order_storage(&executor->order, storage_slot, false, queue, &wait_count);
  if (!status) status = hgr__order_reserve(&executor->order, 1);
  cl_event event = NULL;
  if (!status) {
    cl_command_queue command_queue = executor->order.queues.queues[queue].queue;
    const cl_event* wait = wait_count ? executor->order.wait : NULL;
    error = info.bytes ? clEnqueueCopyBuffer(command_queue, executor->pool.storages[storage_slot].mem, snapshot, 0, 0,
                                             info.bytes, wait_count, wait, &event)
                       : clEnqueueMarkerWithWaitList(command_queue, wait_count, wait, &event);
    if (error != CL_SUCCESS)
      status = HGR_CL_STATUS(error, "clEnqueueCopyBuffer(output %zu '%s' into a copy of run %llu's) on %s", index,
                             info.name, (unsigned long long)fence->run, spec);
  }
  if (status) {
    clReleaseMemObject(snapshot);
    return status;
  }
  fence->snapshots[index] = snapshot;
  status = hgr__order_enqueued(&executor->order, queue, event);
  if (!status) hgr__order_record(&executor->order, storage_slot, false, event, queue);
  clReleaseEvent(event);
  hgr__traffic(executor, HGR_OUTPUT, index)->device_copies++;
  return status;
}

/* Before storage_slot (UINT32_MAX: every storage) is written: the fences holding an
 * output in it get their own copy. */
hgr_status_t hgr__fences_release_holders(hgr_executor_t* executor, uint32_t storage_slot) {
  for (uint32_t o = 0; o < executor->graph->head_count; ++o) {
    hgr_fence_t* holder = executor->fences.output_holder[o];
    if (!holder || (storage_slot != UINT32_MAX && hgr__output_storage(executor, o) != storage_slot)) continue;
    HGR_RETURN_IF_ERROR(snapshot_output(executor, holder, o));
    executor->fences.output_holder[o] = NULL;
  }
  return HGR_OK;
}

static hgr_status_t fence_usable(const hgr_fence_t* fence) {
  if (!fence) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "fence is NULL");
  if (fence->failure) return copy_status(fence->failure);
  if (!fence->executor && !fence->retired)
    return HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION, "run %llu's executor was released before it completed",
                      (unsigned long long)fence->run);
  return HGR_OK;
}

/* The executor whose storages and copies hold the fence's outputs. */
static hgr_status_t fence_outputs(hgr_fence_t* fence, hgr_executor_t** out_executor) {
  HGR_RETURN_IF_ERROR(fence_usable(fence));
  if (!fence->executor)
    return HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION, "run %llu's executor was released with its outputs",
                      (unsigned long long)fence->run);
  *out_executor = fence->executor;
  return HGR_OK;
}

hgr_status_t hgr_fence_wait(hgr_fence_t* fence) {
  HGR_RETURN_IF_ERROR(fence_usable(fence));
  if (fence->retired) return HGR_OK;
  hgr_executor_t* executor = fence->executor;
  HGR_RETURN_IF_ERROR(hgr__check_usable(executor));
  hgr_status_t status = HGR_OK;
  for (uint32_t q = 0; q < executor->order.queues.count && !status; ++q)
    status = hgr__queue_flush(&executor->order.queues, q);
  if (!status) status = hgr__await_events(executor, fence->events, fence->event_count, fence->command_end);
  if (!status) hgr__fences_retire(executor, fence);
  return hgr_status_annotate(status, "run %llu", (unsigned long long)fence->run);
}

hgr_status_t hgr_fence_query(hgr_fence_t* fence, bool* out_complete) {
  *out_complete = false;
  HGR_RETURN_IF_ERROR(fence_usable(fence));
  if (fence->retired) {
    *out_complete = true;
    return HGR_OK;
  }
  hgr_executor_t* executor = fence->executor;
  HGR_RETURN_IF_ERROR(hgr__check_usable(executor));
  for (uint32_t q = 0; q < executor->order.queues.count; ++q)
    HGR_RETURN_IF_ERROR(hgr__queue_flush(&executor->order.queues, q));
  HGR_RETURN_IF_ERROR(hgr__bridges_drive(&executor->order.bridges, &executor->order.queues));
  int complete = hgr__events_complete(fence->events, fence->event_count);
  if (complete == 0) return HGR_OK;
  hgr_status_t failure = hgr__find_failure(executor, fence->command_end);
  if (failure)
    return hgr_status_annotate(hgr__fail_executor(executor, failure), "run %llu", (unsigned long long)fence->run);
  if (complete < 0) return HGR_OK; /* failed after a command the scan passed; the next query names it */
  hgr__fences_retire(executor, fence);
  *out_complete = true;
  return HGR_OK;
}

uint64_t hgr_fence_run(const hgr_fence_t* fence) { return fence ? fence->run : 0; }

void hgr_fence_release(hgr_fence_t* fence) {
  if (!fence) return;
  hgr_executor_t* executor = fence->executor;
  for (uint32_t o = 0; executor && o < executor->graph->head_count; ++o)
    if (executor->fences.output_holder[o] == fence) executor->fences.output_holder[o] = NULL;
  fence_unref(fence);
}

hgr_status_t hgr_fence_get_output(hgr_fence_t* fence, size_t index, void* data, size_t bytes) {
  hgr_executor_t* executor = NULL;
  HGR_RETURN_IF_ERROR(fence_outputs(fence, &executor));
  hgr_tensor_info_t info;
  HGR_RETURN_IF_ERROR(hgr_graph_output_info(executor->graph, index, &info));
  HGR_RETURN_IF_ERROR(hgr__check_io(executor, &info, "output", index, data, bytes));
  HGR_RETURN_IF_ERROR(
      hgr__check_here(executor, hgr__graph_entry_id(executor->graph, executor->graph->heads[index]), "output", index,
                      info.name));
  if (!bytes) return HGR_OK;
  char what[256];
  snprintf(what, sizeof(what), "run %llu's output %zu '%s'", (unsigned long long)fence->run, index, info.name);
  uint32_t storage_slot = hgr__output_storage(executor, index);
  void* staging = NULL;
  HGR_RETURN_IF_ERROR(hgr__output_staging(executor, index, bytes, &staging));
  hgr_io_traffic_t* traffic = hgr__traffic(executor, HGR_OUTPUT, index);
  traffic->host_copies++;
  traffic->host_bytes += bytes;
  if (fence->snapshots[index])
    return hgr__read_into(executor, storage_slot, fence->snapshots[index], false, staging, data, bytes, what);
  if (executor->fences.output_holder[index] != fence)
    return HGR_STATUS(HGR_STATUS_INTERNAL, "%s is neither in its storage nor copied", what);
  return hgr__read_into(executor, storage_slot, executor->pool.storages[storage_slot].mem, true, staging, data, bytes,
                        what);
}

hgr_status_t hgr_fence_output_buffer(hgr_fence_t* fence, size_t index, hgr_device_buffer_t* out_buffer) {
  memset(out_buffer, 0, sizeof(*out_buffer));
  hgr_executor_t* executor = NULL;
  HGR_RETURN_IF_ERROR(fence_outputs(fence, &executor));
  HGR_RETURN_IF_ERROR(hgr__check_usable(executor));
  hgr_tensor_info_t info;
  HGR_RETURN_IF_ERROR(hgr_graph_output_info(executor->graph, index, &info));
  HGR_RETURN_IF_ERROR(
      hgr__check_here(executor, hgr__graph_entry_id(executor->graph, executor->graph->heads[index]), "output", index,
                      info.name));
  if (!fence->snapshots[index]) {
    if (executor->fences.output_holder[index] != fence)
      return HGR_STATUS(HGR_STATUS_INTERNAL, "run %llu's output %zu is neither in its storage nor copied",
                        (unsigned long long)fence->run, index);
    HGR_RETURN_IF_ERROR(snapshot_output(executor, fence, index));
    executor->fences.output_holder[index] = NULL;
  }
  fence->exported[index] = true;
  /* The copy was enqueued on the same in-order queue: the marker follows it. */
  HGR_RETURN_IF_ERROR(hgr__export_buffer(executor, hgr__output_storage(executor, index), fence->snapshots[index], false,
                                         info.bytes, out_buffer));
  hgr__traffic(executor, HGR_OUTPUT, index)->device_buffers++;
  return HGR_OK;
}

void hgr__fences_detach(hgr_executor_t* executor) {
  const hgr_graph_t* graph = executor->graph;
  for (hgr_fence_t* fence = executor->fences.first; fence;) {
    hgr_fence_t* next = fence->next;
    for (uint32_t o = 0; o < graph->head_count; ++o)
      if (fence->snapshots[o]) clReleaseMemObject(fence->snapshots[o]);
    memset(fence->snapshots, 0, graph->head_count * sizeof(cl_mem));
    fence->executor = NULL;
    fence->next = NULL;
    if (!fence->retired && !fence->failure)
      fence->failure = executor->failure ? copy_status(executor->failure)
                                         : HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION,
                                                      "run %llu's executor was released before it completed",
                                                      (unsigned long long)fence->run);
    if (!fence->retired) fence_unref(fence); /* the executor's reference */
    fence = next;
  }
  executor->fences.first = NULL;
  for (uint32_t o = 0; executor->fences.snapshot_pool && o < graph->head_count; ++o) {
    /* the counts may be missing when creation ran out of memory (no pool has any then) */
    uint32_t count = executor->fences.snapshot_pool_count ? executor->fences.snapshot_pool_count[o] : 0;
    for (uint32_t k = 0; k < count; ++k)
      clReleaseMemObject(executor->fences.snapshot_pool[o][k]);
    hgr__free(executor->allocator, executor->fences.snapshot_pool[o]);
  }
  hgr__free(executor->allocator, executor->fences.snapshot_pool);
  hgr__free(executor->allocator, executor->fences.snapshot_pool_count);
  hgr__free(executor->allocator, executor->fences.output_holder);
  memset(&executor->fences, 0, sizeof(executor->fences));
}

void hgr__fences_hold_outputs(hgr_executor_t* executor, hgr_fence_t* fence) {
  const hgr_graph_t* graph = executor->graph;
  for (uint32_t o = 0; o < graph->head_count; ++o)
    if (executor->device_keys.entry_rank[hgr__graph_entry_id(graph, graph->heads[o])] == executor->device_keys.rank)
      executor->fences.output_holder[o] = fence; /* another rank's output is not here to hold */
}
