/* Copy nodes, per device pair (DESIGN.md, "Device-pair matrix"):
 *   same queue or same context   clEnqueueCopyBuffer on the destination's queue
 *                                for copies (plan.c assign_queues), ordered by event
 *                                wait lists within the one context;
 *   different contexts, < 1 MiB  read into host staging on the producer's side, then
 *                                write on the consumer's side (fewest commands);
 *   different contexts, larger   map the source and write straight from the mapped
 *                                pointer (one copy, about twice the bandwidth here),
 *                                in one command; where the source cannot be mapped
 *                                asynchronously (rusticl, Oclgrind), map the
 *                                destination and read into it instead, in chunks of
 *                                16 MiB, and where neither can, stage as for small
 *                                copies.
 * The chunk sizes follow the drivers' memcpy, since every copy on these CPU drivers
 * is one: glibc copies with streaming (non-temporal) stores above its
 * x86_non_temporal_threshold (192 MiB on the 2-vCPU test machine). A write into a
 * buffer from the mapped source gains by that (a single 256 MiB write into rusticl
 * ran at 1.6-1.8 x the speed of 16 MiB chunks), so it stays whole; a read out of
 * rusticl loses (its streaming loop ran at a third of the speed of 16 MiB chunks),
 * so it is chunked. Mapping a PoCL buffer copies nothing, so the chunks gain no
 * overlap worth having (at 64 MiB, one write and four chunks measured the same).
 * An event never crosses contexts: each cross-context dependency is a user event in
 * the waiting context, completed from the producing event's callback with the same
 * status, so a failure terminates the consumer instead of hanging it. The thresholds
 * come from ../shared/reference/opencl-test-bed.md section 3. A copy between ranks
 * (another process's device) is remote.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc.h"
#include "executor_internal.h"

#define HGR_STAGED_LIMIT (1u << 20)   /* below this, two-copy staging wins */
#define HGR_READ_CHUNK_BYTES (16u << 20)  /* reads into a mapped destination move at most this per command */
#define HGR_WRITE_CHUNK_BYTES (1u << 30)  /* writes from a mapped source: a bound on one mapping only */

hgr_status_t hgr__transfer_plan(hgr_executor_t* executor, hgr__step_t* step) {
  /* Between ranks: remote.c has this rank's half. */
  const hgr_graph_t* graph = executor->graph;
  const hgr__device_keys_t* device_keys = &executor->device_keys;
  int source_rank = device_keys->entry_rank[hgr__graph_entry_id(graph, graph->nodes[step->node_id].inputs[0])];
  int destination_rank = device_keys->entry_rank[graph->node_row_ptr[step->node_id]];
  if (source_rank != destination_rank)
    return hgr__remote_plan(executor, step, source_rank == device_keys->rank ? destination_rank : source_rank,
                            source_rank == device_keys->rank);
  const hgr__storage_t* source = &executor->pool.storages[step->in_storages[0]];
  size_t src_device = source->device_index;
  step->pair_class = hgr_instance_pair_class(executor->instance, src_device, step->device_index);
  executor->copies.count[step->pair_class]++;
  executor->copies.bytes[step->pair_class] += step->copy_bytes;
  if (step->pair_class == HGR_PAIR_SAME_QUEUE || step->pair_class == HGR_PAIR_SAME_CONTEXT) {
    step->path = HGR__COPY_DIRECT;
    return HGR_OK;
  }
  step->src_queue = hgr__device_keys_device(&executor->device_keys, src_device)->transfer_queue;
  bool source_mappable = hgr__device_maps_async(&executor->instance->devices[src_device]);
  bool destination_mappable = hgr__device_maps_async(&executor->instance->devices[step->device_index]);
  if (step->copy_bytes < HGR_STAGED_LIMIT || (!source_mappable && !destination_mappable)) {
    step->path = HGR__COPY_STAGED;
    executor->copies.staged_small++;
    size_t bytes = (size_t)((step->copy_bytes + 63) / 64 * 64);
    if (bytes == 0) bytes = 64;
    if (!executor->plan_only) {
      step->staging = hgr__alloc(executor->allocator, bytes);
      if (!step->staging)
        return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for %zu bytes of staging",
                          bytes);
    }
    hgr__device_keys_device(&executor->device_keys, step->device_index)->usage.staging_bytes += bytes;
  } else {
    step->path = source_mappable ? HGR__COPY_MAPPED : HGR__COPY_MAPPED_DESTINATION;
    step->chunk_bytes = source_mappable ? HGR_WRITE_CHUNK_BYTES : HGR_READ_CHUNK_BYTES;
    step->chunk_count = (uint32_t)((step->copy_bytes + step->chunk_bytes - 1) / step->chunk_bytes);
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

static hgr_status_t enqueue_direct(hgr_executor_t* executor, hgr__step_t* step, char* label, size_t label_capacity) {
  cl_event* wait = executor->order.wait;
  uint32_t wait_count = 0;
  uint32_t src = step->in_storages[0], dst = step->out_storages[0];
  HGR_RETURN_IF_ERROR(hgr__order_storage(&executor->order, src, false, step->queue, &wait_count));
  HGR_RETURN_IF_ERROR(hgr__order_storage(&executor->order, dst, true, step->queue, &wait_count));
  cl_command_queue queue = executor->order.queues.queues[step->queue].queue;
  cl_event event = NULL;
  cl_int error;
  if (step->copy_bytes == 0)
    error = clEnqueueMarkerWithWaitList(queue, wait_count, wait_count ? wait : NULL, &event);
  else
    error = clEnqueueCopyBuffer(queue, executor->pool.storages[src].mem, executor->pool.storages[dst].mem, 0,
                                0, (size_t)step->copy_bytes, wait_count, wait_count ? wait : NULL,
                                &event);
  if (error != CL_SUCCESS)
    return HGR_CL_STATUS(error, "clEnqueueCopyBuffer(%s) on %s",
                         hgr__graph_node_label(executor->graph, step->node_id, label, label_capacity),
                         hgr__device_spec(executor->instance, step->device_index));
  set_done(step, 0, event);
  hgr_status_t status = hgr__order_enqueued(&executor->order, step->queue, event);
  if (!status) {
    hgr__order_record(&executor->order, src, false, event, step->queue);
    hgr__order_record(&executor->order, dst, true, event, step->queue);
  }
  clReleaseEvent(event);
  return status;
}

static hgr_status_t enqueue_staged(hgr_executor_t* executor, hgr__step_t* step, const char* label) {
  cl_event* wait = executor->order.wait;
  uint32_t wait_count = 0;
  uint32_t src = step->in_storages[0], dst = step->out_storages[0];
  size_t bytes = (size_t)step->copy_bytes;
  const char* src_spec = hgr__device_spec(executor->instance, executor->pool.storages[src].device_index);
  const char* dst_spec = hgr__device_spec(executor->instance, step->device_index);
  hgr_status_t status = HGR_OK;
  cl_event freed = NULL, read = NULL, arrived = NULL, write = NULL;
  cl_int error;

  /* Producer side: the read waits for the source's writer and for the previous run's
   * write to have consumed the staging buffer. That write is bridged only if it is
   * still pending now: a run that was waited for (the usual case) needs no bridge,
   * which saves a user event, a callback and, on 2 vCPUs, a driver thread's wake-up
   * racing this copy (about a tenth of a small copy's time). */
  HGR_RETURN_IF_ERROR(hgr__order_storage(&executor->order, src, false, step->src_queue, &wait_count));
  if (step->staging_write && hgr__event_status(step->staging_write) > CL_COMPLETE) {
    HGR_RETURN_IF_ERROR(hgr__bridge_event_at(&executor->order.bridges, &executor->order.queues, step->staging_write,
                                             step->queue, step->staging_write_seq, step->src_queue, label, &freed));
    wait[wait_count++] = freed;
  }
  cl_command_queue src_queue = executor->order.queues.queues[step->src_queue].queue;
  if (bytes == 0)
    error = clEnqueueMarkerWithWaitList(src_queue, wait_count, wait_count ? wait : NULL, &read);
  else
    error = clEnqueueReadBuffer(src_queue, executor->pool.storages[src].mem, CL_FALSE, 0, bytes,
                                step->staging, wait_count, wait_count ? wait : NULL, &read);
  if (error != CL_SUCCESS) {
    status = HGR_CL_STATUS(error, "clEnqueueReadBuffer(%s) on %s", label, src_spec);
    goto cleanup;
  }
  if ((status = hgr__order_enqueued(&executor->order, step->src_queue, read))) goto cleanup;
  hgr__order_record(&executor->order, src, false, read, step->src_queue);
  if ((status = hgr__queue_flush(&executor->order.queues, step->src_queue)) ||
      (status = hgr__bridge_event(&executor->order.bridges, &executor->order.queues, read, step->src_queue, step->queue,
                                  label, &arrived)))
    goto cleanup;

  /* Consumer side. */
  wait_count = 0;
  wait[wait_count++] = arrived;
  if ((status = hgr__order_storage(&executor->order, dst, true, step->queue, &wait_count)))
    goto cleanup;
  cl_command_queue queue = executor->order.queues.queues[step->queue].queue;
  if (bytes == 0)
    error = clEnqueueMarkerWithWaitList(queue, wait_count, wait, &write);
  else
    error = clEnqueueWriteBuffer(queue, executor->pool.storages[dst].mem, CL_FALSE, 0, bytes,
                                 step->staging, wait_count, wait, &write);
  if (error != CL_SUCCESS) {
    status = HGR_CL_STATUS(error, "clEnqueueWriteBuffer(%s) on %s", label, dst_spec);
    goto cleanup;
  }
  set_done(step, 0, write);
  if ((status = hgr__order_enqueued(&executor->order, step->queue, write))) goto cleanup;
  hgr__order_record(&executor->order, dst, true, write, step->queue);
  if (step->staging_write) clReleaseEvent(step->staging_write);
  clRetainEvent(write);
  step->staging_write = write;
  step->staging_write_seq = executor->order.queues.queues[step->queue].seq;
  status = hgr__queue_flush(&executor->order.queues, step->queue);

cleanup:
  /* The bridges' records keep them until the commands waiting on them retired (wait
   * lists are not retained by every driver); if the command was never enqueued,
   * nothing waits on them, and they complete from their callbacks. */
  if (freed) clReleaseEvent(freed);
  if (read) clReleaseEvent(read);
  if (write) clReleaseEvent(write);
  if (arrived) clReleaseEvent(arrived);
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
  cl_event* wait = executor->order.wait;
  uint32_t wait_count = 0;
  uint32_t src = step->in_storages[0], dst = step->out_storages[0];
  /* The mapping side and the transferring side: queue, storage, whether it writes. */
  uint32_t map_queue = map_source ? step->src_queue : step->queue;
  uint32_t move_queue = map_source ? step->queue : step->src_queue;
  uint32_t map_storage = map_source ? src : dst, move_storage = map_source ? dst : src;
  cl_mem map_mem = executor->pool.storages[map_storage].mem, move_mem = executor->pool.storages[move_storage].mem;
  const char* map_spec = executor->order.queues.queues[map_queue].spec;
  const char* move_spec = executor->order.queues.queues[move_queue].spec;
  uint32_t chunks = step->chunk_count;
  hgr_status_t status = HGR_OK;
  cl_int error = CL_SUCCESS;

  cl_event* maps = hgr__calloc(executor->allocator, chunks, sizeof(cl_event));
  cl_event* moves = hgr__calloc(executor->allocator, chunks, sizeof(cl_event));
  void** pointers = hgr__calloc(executor->allocator, chunks, sizeof(void*));
  if (!maps || !moves || !pointers) {
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    goto cleanup;
  }

  if ((status = hgr__order_storage(&executor->order, map_storage, !map_source, map_queue, &wait_count))) goto cleanup;
  for (uint32_t k = 0; k < chunks; ++k) {
    uint64_t offset = (uint64_t)k * step->chunk_bytes;
    uint64_t length = step->copy_bytes - offset < step->chunk_bytes ? step->copy_bytes - offset : step->chunk_bytes;
    pointers[k] = clEnqueueMapBuffer(executor->order.queues.queues[map_queue].queue, map_mem, CL_FALSE,
                                     map_source ? CL_MAP_READ : CL_MAP_WRITE_INVALIDATE_REGION, (size_t)offset,
                                     (size_t)length, k ? 0 : wait_count, (k || !wait_count) ? NULL : wait, &maps[k],
                                     &error);
    if (error != CL_SUCCESS) {
      status = HGR_CL_STATUS(error, "clEnqueueMapBuffer(%s, chunk %u) on %s", label, k, map_spec);
      goto cleanup;
    }
    if ((status = hgr__order_enqueued(&executor->order, map_queue, maps[k]))) goto cleanup;
  }
  if ((status = hgr__queue_flush(&executor->order.queues, map_queue))) goto cleanup;

  for (uint32_t k = 0; k < chunks; ++k) {
    uint64_t offset = (uint64_t)k * step->chunk_bytes;
    uint64_t length = step->copy_bytes - offset < step->chunk_bytes ? step->copy_bytes - offset : step->chunk_bytes;
    cl_event mapped = NULL;
    if ((status = hgr__bridge_event(&executor->order.bridges, &executor->order.queues, maps[k], map_queue, move_queue,
                                    label, &mapped)))
      goto cleanup;
    wait_count = 0;
    wait[wait_count++] = mapped;
    if (k == 0 && (status = hgr__order_storage(&executor->order, move_storage, map_source, move_queue, &wait_count))) {
      clReleaseEvent(mapped);
      goto cleanup;
    }
    cl_command_queue queue = executor->order.queues.queues[move_queue].queue;
    if (map_source)
      error = clEnqueueWriteBuffer(queue, move_mem, CL_FALSE, (size_t)offset, (size_t)length, pointers[k],
                                   wait_count, wait, &moves[k]);
    else
      error = clEnqueueReadBuffer(queue, move_mem, CL_FALSE, (size_t)offset, (size_t)length, pointers[k],
                                  wait_count, wait, &moves[k]);
    clReleaseEvent(mapped);
    if (error != CL_SUCCESS) {
      status = HGR_CL_STATUS(error, "%s(%s, chunk %u) on %s",
                             map_source ? "clEnqueueWriteBuffer" : "clEnqueueReadBuffer", label, k, move_spec);
      goto cleanup;
    }
    if (map_source) set_done(step, k, moves[k]);
    if ((status = hgr__order_enqueued(&executor->order, move_queue, moves[k]))) goto cleanup;
  }
  hgr__order_record(&executor->order, move_storage, map_source, moves[chunks - 1], move_queue);

  for (uint32_t k = 0; k < chunks; ++k) {
    cl_event moved = NULL, unmapped = NULL;
    if ((status = hgr__bridge_event(&executor->order.bridges, &executor->order.queues, moves[k], move_queue, map_queue,
                                    label, &moved)))
      goto cleanup;
    error = clEnqueueUnmapMemObject(executor->order.queues.queues[map_queue].queue, map_mem, pointers[k], 1, &moved,
                                    &unmapped);
    clReleaseEvent(moved);
    if (error != CL_SUCCESS) {
      status = HGR_CL_STATUS(error, "clEnqueueUnmapMemObject(%s, chunk %u) on %s", label, k, map_spec);
      goto cleanup;
    }
    pointers[k] = NULL;
    if (!map_source) set_done(step, k, unmapped);
    status = hgr__order_enqueued(&executor->order, map_queue, unmapped);
    if (!status && k == chunks - 1) hgr__order_record(&executor->order, map_storage, !map_source, unmapped, map_queue);
    clReleaseEvent(unmapped);
    if (status) goto cleanup;
  }
  /* The moving side is flushed last: its first command starts a copy of up to the
   * whole buffer, and the driver thread doing it took the CPU from this thread on 2
   * vCPUs (tens of milliseconds inside hgr_executor_run for 256 MiB) when the
   * unmaps were still to be enqueued. */
  if (!(status = hgr__queue_flush(&executor->order.queues, map_queue)))
    status = hgr__queue_flush(&executor->order.queues, move_queue);

cleanup:
  for (uint32_t k = 0; maps && k < chunks; ++k) {
    if (pointers && pointers[k] && maps[k]) {
      /* A chunk mapped but never handed to an unmap (an error stopped us): wait for
       * the transfer using it, if any, then unmap it after its map. Polled, driving
       * host-driven queues, never blocking in clWaitForEvents: the transfer waits on
       * a bridge that this thread may have to set (into a host-driven device), or it
       * runs only while its host-driven queue is driven. */
      if (moves[k]) {
        status = hgr_status_join(status, hgr__queue_flush(&executor->order.queues, move_queue));
        struct timespec pause = {0, 50000};
        bool drive_failed = false;
        while (hgr__event_status(moves[k]) > CL_COMPLETE) {
          hgr_status_t driven = hgr__bridges_drive(&executor->order.bridges, &executor->order.queues);
          if (driven && !drive_failed) status = hgr_status_join(status, driven); /* once, not per poll */
          else hgr_status_free(driven);
          drive_failed |= driven != HGR_OK;
          nanosleep(&pause, NULL);
        }
      }
      cl_event unmapped = NULL;
      cl_int unmap_error = clEnqueueUnmapMemObject(executor->order.queues.queues[map_queue].queue, map_mem,
                                                   pointers[k], 1, &maps[k], &unmapped);
      if (unmap_error != CL_SUCCESS) {
        status = hgr_status_join(status, HGR_CL_STATUS(unmap_error, "clEnqueueUnmapMemObject(%s, chunk %u, after a "
                                                               "failure) on %s",
                                                       label, k, map_spec));
      } else {
        status = hgr_status_join(status, hgr__order_enqueued(&executor->order, map_queue, unmapped));
        clReleaseEvent(unmapped);
      }
    }
    if (maps[k]) clReleaseEvent(maps[k]);
    if (moves && moves[k]) clReleaseEvent(moves[k]);
  }
  hgr__free(executor->allocator, maps);
  hgr__free(executor->allocator, moves);
  hgr__free(executor->allocator, pointers);
  return status;
}

hgr_status_t hgr__transfer_enqueue(hgr_executor_t* executor, hgr__step_t* step) {
  char label[160];
  /* A direct copy names its node only when it fails: formatting the label cost a
   * noticeable share of a small copy's host time. */
  if (step->path == HGR__COPY_DIRECT) return enqueue_direct(executor, step, label, sizeof(label));
  hgr__graph_node_label(executor->graph, step->node_id, label, sizeof(label));
  switch (step->path) {
    case HGR__COPY_DIRECT: break;
    case HGR__COPY_REMOTE: return hgr__remote_enqueue(executor, step, label);
    case HGR__COPY_STAGED: return enqueue_staged(executor, step, label);
    case HGR__COPY_MAPPED: return enqueue_mapped(executor, step, label, true);
    case HGR__COPY_MAPPED_DESTINATION: return enqueue_mapped(executor, step, label, false);
  }
  return HGR_STATUS(HGR_STATUS_INTERNAL, "%s: unknown copy path", label);
}

void hgr__transfer_release(const hgr_executor_t* executor, hgr__step_t* step) {
  hgr__remote_release(step, true);
  hgr__free(executor->allocator, step->staging);
  step->staging = NULL;
  if (step->staging_write) clReleaseEvent(step->staging_write);
  step->staging_write = NULL;
}
