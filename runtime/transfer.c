/* Copy nodes, per device pair (DESIGN.md, "Device-pair matrix"):
 *   same queue or same context   clEnqueueCopyBuffer on the destination's queue
 *                                for copies (plan.c assign_queues), ordered by event
 *                                wait lists within the one context;
 *   different contexts, < 1 MiB  read into host staging on the producer's side, then
 *                                write on the consumer's side (fewest commands);
 *   different contexts, larger   map the source and write straight from the mapped
 *                                pointer (one copy, about twice the bandwidth here),
 *                                in chunks of 16 MiB so the legs overlap; where the
 *                                source cannot be mapped asynchronously (rusticl,
 *                                Oclgrind),
 *                                map the destination and read into it instead, and
 *                                where neither can, stage as for small copies.
 * An event never crosses contexts: each cross-context dependency is a user event in
 * the waiting context, completed from the producing event's callback with the same
 * status, so a failure terminates the consumer instead of hanging it. The thresholds
 * come from ../shared/reference/opencl-test-bed.md section 3. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include <time.h>

#include "executor_internal.h"

#define HGR_STAGED_LIMIT (1u << 20)   /* below this, two-copy staging wins */
#define HGR_CHUNK_BYTES (16u << 20)   /* mapped copies move at most this per chunk */

/* Runs on a driver thread: only sets the user event and drops its reference. */
static void release_signal(hgr__bridge_signal_t* signal) {
  if (signal && atomic_fetch_sub(&signal->refs, 1) == 1) free(signal);
}

/* Runs on a driver thread: records the status for the host thread to apply. */
static void CL_CALLBACK signal_bridge(cl_event source, cl_int status, void* user_data) {
  (void)source;
  hgr__bridge_signal_t* signal = user_data;
  atomic_store(&signal->status, status < 0 ? status : CL_COMPLETE);
  release_signal(signal);
}

static void CL_CALLBACK complete_bridge(cl_event source, cl_int status, void* user_data) {
  (void)source;
  cl_event bridge = (cl_event)user_data;
  clSetUserEventStatus(bridge, status < 0 ? status : CL_COMPLETE);
  clReleaseEvent(bridge);
}

/* The same for a context where failed user events are unsafe: always completes. */
static void CL_CALLBACK complete_bridge_normally(cl_event source, cl_int status, void* user_data) {
  (void)source;
  (void)status;
  cl_event bridge = (cl_event)user_data;
  clSetUserEventStatus(bridge, CL_COMPLETE);
  clReleaseEvent(bridge);
}

/* Keeps a record of an unset bridge in executor->bridges. */
static hgr_status_t remember_bridge(hgr_executor_t* executor, const hgr__bridge_t* bridge) {
  if (executor->bridge_count == executor->bridge_capacity) {
    uint32_t capacity = executor->bridge_capacity ? executor->bridge_capacity * 2 : 64;
    hgr__bridge_t* grown = realloc(executor->bridges, capacity * sizeof(*grown));
    if (!grown) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    executor->bridges = grown;
    executor->bridge_capacity = capacity;
  }
  clRetainEvent(bridge->event);
  if (bridge->source) clRetainEvent(bridge->source);
  if (bridge->signal) atomic_fetch_add(&bridge->signal->refs, 1);
  executor->bridges[executor->bridge_count++] = *bridge;
  return HGR_OK;
}

/* Sets, on the host thread, the user events whose sources have reported. A bridge
 * whose event could not be set keeps its signal, to be tried again: dropped, its
 * consumer would wait forever. Returns the first such error. */
static cl_int apply_signals(hgr_executor_t* executor) {
  cl_int first_error = CL_SUCCESS;
  for (uint32_t b = 0; b < executor->bridge_count; ++b) {
    hgr__bridge_t* bridge = &executor->bridges[b];
    if (!bridge->signal) continue;
    int status = atomic_load(&bridge->signal->status);
    if (status <= CL_COMPLETE) {
      cl_int error = clSetUserEventStatus(bridge->event, status);
      if (error != CL_SUCCESS) {
        if (first_error == CL_SUCCESS) first_error = error;
        continue;
      }
      release_signal(bridge->signal);
      bridge->signal = NULL;
    }
  }
  return first_error;
}

/* An event whose status cannot be queried counts as pending: taken for complete, it
 * would set a bridge (or drive a queue into one) before its producer finished. */
cl_int hgr__event_status(cl_event event) {
  cl_int execution = CL_COMPLETE;
  if (clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(execution), &execution, NULL) != CL_SUCCESS)
    return CL_QUEUED;
  return execution;
}

void hgr__bridges_fail_unset(hgr_executor_t* executor) {
  apply_signals(executor);
  for (uint32_t b = 0; b < executor->bridge_count; ++b) {
    hgr__bridge_t* bridge = &executor->bridges[b];
    if (hgr__event_status(bridge->event) <= CL_COMPLETE) continue;
    /* A callback may set it at the same moment; whichever comes second is refused
     * with CL_INVALID_OPERATION, which changes nothing. */
    clSetUserEventStatus(bridge->event, bridge->passes_failure ? CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
                                                               : CL_COMPLETE);
    if (bridge->signal) {
      release_signal(bridge->signal);
      bridge->signal = NULL;
    }
  }
}

/* Drops one bridge record: its references (unless they are left to the driver) and
 * its share of the signal. A callback still to run holds references of its own. */
static void drop_bridge(hgr__bridge_t* bridge, bool release_events) {
  if (release_events) {
    clReleaseEvent(bridge->event);
    if (bridge->source) clReleaseEvent(bridge->source);
  }
  release_signal(bridge->signal);
}

void hgr__bridges_forget(hgr_executor_t* executor, bool release_events) {
  apply_signals(executor);
  for (uint32_t b = 0; b < executor->bridge_count; ++b) drop_bridge(&executor->bridges[b], release_events);
  executor->bridge_count = 0;
}

void hgr__bridges_retire(hgr_executor_t* executor) {
  apply_signals(executor);
  uint32_t kept = 0;
  for (uint32_t b = 0; b < executor->bridge_count; ++b) {
    hgr__bridge_t* bridge = &executor->bridges[b];
    const hgr__queue_t* to = &executor->queues[bridge->to_queue];
    /* Set, and the command waiting on it retired, or nothing left on its queue that
     * could (a staging bridge's consumer in the next run keeps it itself). */
    bool consumed = bridge->needed_seq <= to->retired_seq || to->retired_seq >= to->seq;
    if (!consumed || hgr__event_status(bridge->event) > CL_COMPLETE) {
      executor->bridges[kept++] = *bridge;
      continue;
    }
    drop_bridge(bridge, true);
  }
  executor->bridge_count = kept;
}

/* True when every unset bridge into queue that commands up to position seq may wait
 * on has been set. */
static bool incoming_set_up_to(const hgr_executor_t* executor, uint32_t queue, uint64_t seq) {
  for (uint32_t b = 0; b < executor->bridge_count; ++b) {
    const hgr__bridge_t* bridge = &executor->bridges[b];
    if (bridge->to_queue == queue && bridge->needed_seq <= seq && hgr__event_status(bridge->event) > CL_COMPLETE)
      return false;
  }
  return true;
}

hgr_status_t hgr__bridges_drive(hgr_executor_t* executor) {
  cl_int error = apply_signals(executor);
  if (error != CL_SUCCESS) return HGR_CL_STATUS(error, "clSetUserEventStatus (a bridge into a host-driven device)");
  for (uint32_t q = 0; q < executor->queue_count; ++q) {
    hgr__queue_t* queue = &executor->queues[q];
    if (!queue->host_driven || !queue->last) continue;
    bool blocked = false;
    for (uint32_t b = 0; b < executor->bridge_count && !blocked; ++b) {
      hgr__bridge_t* bridge = &executor->bridges[b];
      if (bridge->from_queue != q || hgr__event_status(bridge->source) <= CL_COMPLETE) continue;
      if (!incoming_set_up_to(executor, q, bridge->source_seq)) {
        blocked = true;
        break;
      }
      /* Runs the queue up to the source only; its callback then sets the bridge. */
      clWaitForEvents(1, &bridge->source);
    }
    if (!blocked && hgr__event_status(queue->last) > CL_COMPLETE && incoming_set_up_to(executor, q, queue->seq))
      clWaitForEvents(1, &queue->last);
  }
  return HGR_OK;
}

hgr_status_t hgr__bridge_event(hgr_executor_t* executor, cl_event source, uint32_t from_queue,
                               uint32_t to_queue, const char* what, cl_event* out_bridge) {
  *out_bridge = NULL;
  cl_int error = CL_SUCCESS;
  cl_event event = clCreateUserEvent(executor->queues[to_queue].context, &error);
  if (error != CL_SUCCESS || !event) return HGR_CL_STATUS(error, "clCreateUserEvent for %s", what);
  bool passes_failure = !executor->queues[to_queue].fragile_failed_user_events;
  hgr__bridge_t bridge = {event, NULL, executor->queues[from_queue].host_driven ? source : NULL, from_queue,
                          to_queue, executor->queues[from_queue].seq, executor->queues[to_queue].seq + 1,
                          passes_failure};
  /* Every bridge is recorded, set or not, so that it outlives the commands waiting
   * on it: neither PoCL 3.1 nor Oclgrind 21.10 retains the events of a wait list. */
  hgr_status_t status = HGR_OK;
  cl_int execution = hgr__event_status(source);
  if (execution <= CL_COMPLETE) {
    /* Already done: set it now (Oclgrind 21.10 never calls a callback registered on
     * a completed event). */
    error = clSetUserEventStatus(event, execution < 0 && passes_failure ? execution : CL_COMPLETE);
    if (error != CL_SUCCESS) { /* unset, it would hold its consumer forever; nothing waits on it yet */
      clReleaseEvent(event);
      return HGR_CL_STATUS(error, "clSetUserEventStatus for %s", what);
    }
    if ((status = remember_bridge(executor, &bridge))) {
      clReleaseEvent(event);
      return status;
    }
    *out_bridge = event;
    return HGR_OK;
  }
  if (executor->queues[to_queue].host_driven) {
    bridge.signal = malloc(sizeof(*bridge.signal));
    if (!bridge.signal) {
      clSetUserEventStatus(event, CL_OUT_OF_HOST_MEMORY);
      clReleaseEvent(event);
      return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    }
    atomic_init(&bridge.signal->status, CL_RUNNING);
    atomic_init(&bridge.signal->refs, 1); /* the callback's */
  }
  status = remember_bridge(executor, &bridge);
  if (status) {
    free(bridge.signal);
    clSetUserEventStatus(event, CL_OUT_OF_HOST_MEMORY);
    clReleaseEvent(event);
    return status;
  }
  if (bridge.signal) {
    error = clSetEventCallback(source, CL_COMPLETE, signal_bridge, bridge.signal);
    if (error != CL_SUCCESS) {
      atomic_store(&bridge.signal->status, error < 0 ? error : CL_INVALID_OPERATION);
      release_signal(bridge.signal); /* the callback's reference: it will never run */
      clReleaseEvent(event);         /* ours; the bridge record keeps one until it is set */
      return HGR_CL_STATUS(error, "clSetEventCallback for %s", what);
    }
    *out_bridge = event;
    return HGR_OK;
  }
  clRetainEvent(event); /* the callback's reference */
  error = clSetEventCallback(source, CL_COMPLETE, passes_failure ? complete_bridge : complete_bridge_normally, event);
  if (error != CL_SUCCESS) {
    /* The callback will never run: fail the bridge so nothing waits on it forever. */
    clSetUserEventStatus(event, passes_failure ? (error < 0 ? error : CL_INVALID_OPERATION) : CL_COMPLETE);
    clReleaseEvent(event);
    clReleaseEvent(event);
    return HGR_CL_STATUS(error, "clSetEventCallback for %s", what);
  }
  *out_bridge = event;
  return HGR_OK;
}

static const char* spec_of(const hgr_executor_t* executor, size_t device_index) {
  return hgr_instance_device(executor->instance, device_index)->spec;
}

hgr_status_t hgr__transfer_plan(hgr_executor_t* executor, hgr__step_t* step) {
  const hgr__storage_t* source = &executor->storages[step->in_storages[0]];
  size_t src_device = source->device_index;
  step->pair_class = hgr_instance_pair_class(executor->instance, src_device, step->device_index);
  executor->copies.count[step->pair_class]++;
  executor->copies.bytes[step->pair_class] += step->copy_bytes;
  if (step->pair_class == HGR_PAIR_SAME_QUEUE || step->pair_class == HGR_PAIR_SAME_CONTEXT) {
    step->path = HGR__COPY_DIRECT;
    return HGR_OK;
  }
  step->src_queue = hgr__exec_device(executor, src_device)->transfer_queue;
  bool source_mappable = hgr__device_maps_async(&executor->instance->devices[src_device]);
  bool destination_mappable = hgr__device_maps_async(&executor->instance->devices[step->device_index]);
  if (step->copy_bytes < HGR_STAGED_LIMIT || (!source_mappable && !destination_mappable)) {
    step->path = HGR__COPY_STAGED;
    executor->copies.staged_small++;
    size_t bytes = (size_t)((step->copy_bytes + 63) / 64 * 64);
    if (bytes == 0) bytes = 64;
    if (!executor->plan_only) {
      step->staging = aligned_alloc(64, bytes);
      if (!step->staging)
        return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for %zu bytes of staging",
                          bytes);
    }
    hgr__exec_device(executor, step->device_index)->usage.staging_bytes += bytes;
  } else {
    step->path = source_mappable ? HGR__COPY_MAPPED : HGR__COPY_MAPPED_DESTINATION;
    step->chunk_bytes = HGR_CHUNK_BYTES;
    step->chunk_count = (uint32_t)((step->copy_bytes + HGR_CHUNK_BYTES - 1) / HGR_CHUNK_BYTES);
    executor->copies.staged_mapped++;
    executor->copies.staged_chunks += step->chunk_count;
  }
  step->done_count = step->path == HGR__COPY_STAGED ? 1 : step->chunk_count;
  return HGR_OK;
}

static void set_done(hgr__step_t* step, uint32_t index, cl_event event) {
  if (step->done[index]) clReleaseEvent(step->done[index]);
  clRetainEvent(event);
  step->done[index] = event;
}

static hgr_status_t enqueue_direct(hgr_executor_t* executor, hgr__step_t* step, const char* label) {
  cl_event* wait = executor->wait;
  uint32_t wait_count = 0;
  uint32_t src = step->in_storages[0], dst = step->out_storages[0];
  HGR_RETURN_IF_ERROR(hgr__order_storage(executor, src, false, step->queue, &wait_count));
  HGR_RETURN_IF_ERROR(hgr__order_storage(executor, dst, true, step->queue, &wait_count));
  cl_command_queue queue = executor->queues[step->queue].queue;
  cl_event event = NULL;
  cl_int error;
  if (step->copy_bytes == 0)
    error = clEnqueueMarkerWithWaitList(queue, wait_count, wait_count ? wait : NULL, &event);
  else
    error = clEnqueueCopyBuffer(queue, executor->storages[src].mem, executor->storages[dst].mem, 0,
                                0, (size_t)step->copy_bytes, wait_count, wait_count ? wait : NULL,
                                &event);
  if (error != CL_SUCCESS)
    return HGR_CL_STATUS(error, "clEnqueueCopyBuffer(%s) on %s", label,
                         spec_of(executor, step->device_index));
  set_done(step, 0, event);
  hgr_status_t status = hgr__queue_enqueued(executor, step->queue, event);
  if (!status) {
    hgr__record_access(executor, src, false, event, step->queue);
    hgr__record_access(executor, dst, true, event, step->queue);
  }
  clReleaseEvent(event);
  return status;
}

static hgr_status_t enqueue_staged(hgr_executor_t* executor, hgr__step_t* step, const char* label) {
  cl_event* wait = executor->wait;
  uint32_t wait_count = 0;
  uint32_t src = step->in_storages[0], dst = step->out_storages[0];
  size_t bytes = (size_t)step->copy_bytes;
  const char* src_spec = spec_of(executor, executor->storages[src].device_index);
  const char* dst_spec = spec_of(executor, step->device_index);
  hgr_status_t status = HGR_OK;
  cl_event read = NULL, arrived = NULL, write = NULL, freed = NULL;
  cl_int error;

  /* Producer side: the read waits for the source's writer and for the previous run's
   * write to have consumed the staging buffer. */
  HGR_RETURN_IF_ERROR(hgr__order_storage(executor, src, false, step->src_queue, &wait_count));
  if (step->staging_free) wait[wait_count++] = step->staging_free;
  cl_command_queue src_queue = executor->queues[step->src_queue].queue;
  if (bytes == 0)
    error = clEnqueueMarkerWithWaitList(src_queue, wait_count, wait_count ? wait : NULL, &read);
  else
    error = clEnqueueReadBuffer(src_queue, executor->storages[src].mem, CL_FALSE, 0, bytes,
                                step->staging, wait_count, wait_count ? wait : NULL, &read);
  if (error != CL_SUCCESS)
    return HGR_CL_STATUS(error, "clEnqueueReadBuffer(%s) on %s", label, src_spec);
  if (step->staging_free) {
    /* The read waits on it: keep it until the queues are idle (wait lists are not
     * retained by every driver). */
    hgr_status_t kept = hgr__keep_event(executor, step->staging_free);
    clReleaseEvent(step->staging_free);
    step->staging_free = NULL;
    if (kept) {
      clReleaseEvent(read);
      return kept;
    }
  }
  if ((status = hgr__queue_enqueued(executor, step->src_queue, read))) goto cleanup;
  hgr__record_access(executor, src, false, read, step->src_queue);
  if ((status = hgr__queue_flush(executor, step->src_queue)) ||
      (status = hgr__bridge_event(executor, read, step->src_queue, step->queue, label, &arrived)))
    goto cleanup;

  /* Consumer side. */
  wait_count = 0;
  wait[wait_count++] = arrived;
  if ((status = hgr__order_storage(executor, dst, true, step->queue, &wait_count)))
    goto cleanup;
  cl_command_queue queue = executor->queues[step->queue].queue;
  if (bytes == 0)
    error = clEnqueueMarkerWithWaitList(queue, wait_count, wait, &write);
  else
    error = clEnqueueWriteBuffer(queue, executor->storages[dst].mem, CL_FALSE, 0, bytes,
                                 step->staging, wait_count, wait, &write);
  if (error != CL_SUCCESS) {
    status = HGR_CL_STATUS(error, "clEnqueueWriteBuffer(%s) on %s", label, dst_spec);
    goto cleanup;
  }
  set_done(step, 0, write);
  if ((status = hgr__queue_enqueued(executor, step->queue, write))) goto cleanup;
  hgr__record_access(executor, dst, true, write, step->queue);
  if ((status = hgr__queue_flush(executor, step->queue)) ||
      (status = hgr__bridge_event(executor, write, step->queue, step->src_queue, label, &freed)))
    goto cleanup;
  step->staging_free = freed;

cleanup:
  if (read) clReleaseEvent(read);
  if (write) clReleaseEvent(write);
  if (arrived) {
    /* If the write was never enqueued, nothing waits on the bridge; it completes
     * from its callback and goes away with its last reference. */
    clReleaseEvent(arrived);
  }
  return status;
}

/* A copy across contexts through a mapping, chunk by chunk. One side maps each
 * chunk (the source for reading, or, where the source cannot be mapped
 * asynchronously, the destination for writing); the other side writes from or reads
 * into the mapped pointer once a bridge says the map is done; the mapping side
 * unmaps once a bridge says that transfer is done. Every chunk is mapped first, so
 * the mapping queue is not blocked behind an unmap while the other side moves the
 * previous chunk. */
static hgr_status_t enqueue_mapped(hgr_executor_t* executor, hgr__step_t* step, const char* label,
                                   bool map_source) {
  cl_event* wait = executor->wait;
  uint32_t wait_count = 0;
  uint32_t src = step->in_storages[0], dst = step->out_storages[0];
  /* The mapping side and the transferring side: queue, storage, whether it writes. */
  uint32_t map_queue = map_source ? step->src_queue : step->queue;
  uint32_t move_queue = map_source ? step->queue : step->src_queue;
  uint32_t map_storage = map_source ? src : dst, move_storage = map_source ? dst : src;
  cl_mem map_mem = executor->storages[map_storage].mem, move_mem = executor->storages[move_storage].mem;
  const char* map_spec = spec_of(executor, executor->queues[map_queue].device_index);
  const char* move_spec = spec_of(executor, executor->queues[move_queue].device_index);
  uint32_t chunks = step->chunk_count;
  hgr_status_t status = HGR_OK;
  cl_int error = CL_SUCCESS;

  cl_event* maps = calloc(chunks, sizeof(cl_event));
  cl_event* moves = calloc(chunks, sizeof(cl_event));
  void** pointers = calloc(chunks, sizeof(void*));
  if (!maps || !moves || !pointers) {
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    goto cleanup;
  }

  if ((status = hgr__order_storage(executor, map_storage, !map_source, map_queue, &wait_count))) goto cleanup;
  for (uint32_t k = 0; k < chunks; ++k) {
    uint64_t offset = (uint64_t)k * step->chunk_bytes;
    uint64_t length = step->copy_bytes - offset < step->chunk_bytes ? step->copy_bytes - offset : step->chunk_bytes;
    pointers[k] = clEnqueueMapBuffer(executor->queues[map_queue].queue, map_mem, CL_FALSE,
                                     map_source ? CL_MAP_READ : CL_MAP_WRITE_INVALIDATE_REGION, (size_t)offset,
                                     (size_t)length, k ? 0 : wait_count, (k || !wait_count) ? NULL : wait, &maps[k],
                                     &error);
    if (error != CL_SUCCESS) {
      status = HGR_CL_STATUS(error, "clEnqueueMapBuffer(%s, chunk %u) on %s", label, k, map_spec);
      goto cleanup;
    }
    if ((status = hgr__queue_enqueued(executor, map_queue, maps[k]))) goto cleanup;
  }
  if ((status = hgr__queue_flush(executor, map_queue))) goto cleanup;

  for (uint32_t k = 0; k < chunks; ++k) {
    uint64_t offset = (uint64_t)k * step->chunk_bytes;
    uint64_t length = step->copy_bytes - offset < step->chunk_bytes ? step->copy_bytes - offset : step->chunk_bytes;
    cl_event mapped = NULL;
    if ((status = hgr__bridge_event(executor, maps[k], map_queue, move_queue, label, &mapped))) goto cleanup;
    wait_count = 0;
    wait[wait_count++] = mapped;
    if (k == 0 && (status = hgr__order_storage(executor, move_storage, map_source, move_queue, &wait_count))) {
      clReleaseEvent(mapped);
      goto cleanup;
    }
    cl_command_queue queue = executor->queues[move_queue].queue;
    if (map_source)
      error = clEnqueueWriteBuffer(queue, move_mem, CL_FALSE, (size_t)offset, (size_t)length, pointers[k],
                                   wait_count, wait, &moves[k]);
    else
      error = clEnqueueReadBuffer(queue, move_mem, CL_FALSE, (size_t)offset, (size_t)length, pointers[k],
                                  wait_count, wait, &moves[k]);
    clReleaseEvent(mapped);
    if (error != CL_SUCCESS) {
      status = HGR_CL_STATUS(error, "%s(%s, chunk %u) on %s", map_source ? "clEnqueueWriteBuffer" : "clEnqueueReadBuffer",
                             label, k, move_spec);
      goto cleanup;
    }
    if (map_source) set_done(step, k, moves[k]);
    if ((status = hgr__queue_enqueued(executor, move_queue, moves[k]))) goto cleanup;
  }
  hgr__record_access(executor, move_storage, map_source, moves[chunks - 1], move_queue);
  if ((status = hgr__queue_flush(executor, move_queue))) goto cleanup;

  for (uint32_t k = 0; k < chunks; ++k) {
    cl_event moved = NULL, unmapped = NULL;
    if ((status = hgr__bridge_event(executor, moves[k], move_queue, map_queue, label, &moved))) goto cleanup;
    error = clEnqueueUnmapMemObject(executor->queues[map_queue].queue, map_mem, pointers[k], 1, &moved, &unmapped);
    clReleaseEvent(moved);
    if (error != CL_SUCCESS) {
      status = HGR_CL_STATUS(error, "clEnqueueUnmapMemObject(%s, chunk %u) on %s", label, k, map_spec);
      goto cleanup;
    }
    pointers[k] = NULL;
    if (!map_source) set_done(step, k, unmapped);
    status = hgr__queue_enqueued(executor, map_queue, unmapped);
    if (!status && k == chunks - 1) hgr__record_access(executor, map_storage, !map_source, unmapped, map_queue);
    clReleaseEvent(unmapped);
    if (status) goto cleanup;
  }
  status = hgr__queue_flush(executor, map_queue);

cleanup:
  for (uint32_t k = 0; maps && k < chunks; ++k) {
    if (pointers && pointers[k] && maps[k]) {
      /* A chunk mapped but never handed to an unmap (an error stopped us): wait for
       * the transfer using it, if any, then unmap it after its map. Polled, driving
       * host-driven queues, never blocking in clWaitForEvents: the transfer waits on
       * a bridge that this thread may have to set (into a host-driven device), or it
       * runs only while its host-driven queue is driven. */
      if (moves[k]) {
        hgr_status_free(hgr__queue_flush(executor, move_queue));
        struct timespec pause = {0, 50000};
        while (hgr__event_status(moves[k]) > CL_COMPLETE) {
          hgr_status_free(hgr__bridges_drive(executor));
          nanosleep(&pause, NULL);
        }
      }
      cl_event unmapped = NULL;
      if (clEnqueueUnmapMemObject(executor->queues[map_queue].queue, map_mem, pointers[k], 1, &maps[k],
                                  &unmapped) == CL_SUCCESS) {
        hgr_status_free(hgr__queue_enqueued(executor, map_queue, unmapped));
        clReleaseEvent(unmapped);
      }
    }
    if (maps[k]) clReleaseEvent(maps[k]);
    if (moves && moves[k]) clReleaseEvent(moves[k]);
  }
  free(maps);
  free(moves);
  free(pointers);
  return status;
}

hgr_status_t hgr__transfer_enqueue(hgr_executor_t* executor, hgr__step_t* step) {
  char label[160];
  hgr__node_label(executor->graph, step->node_id, label, sizeof(label));
  switch (step->path) {
    case HGR__COPY_DIRECT: return enqueue_direct(executor, step, label);
    case HGR__COPY_STAGED: return enqueue_staged(executor, step, label);
    case HGR__COPY_MAPPED: return enqueue_mapped(executor, step, label, true);
    case HGR__COPY_MAPPED_DESTINATION: return enqueue_mapped(executor, step, label, false);
  }
  return HGR_STATUS(HGR_STATUS_INTERNAL, "%s: unknown copy path", label);
}

void hgr__transfer_release(hgr__step_t* step) {
  free(step->staging);
  step->staging = NULL;
  if (step->staging_free) clReleaseEvent(step->staging_free);
  step->staging_free = NULL;
}
