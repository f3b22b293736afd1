/* Copies between ranks (hgr/transport.h): a `__copy` whose source or destination is
 * another process's device becomes one step on this rank, its half of the copy.
 *
 *   sending    each chunk is read from the source into host staging; the read's
 *              completion callback hands the chunk to the transport's send; the
 *              send's completion sets a user event ("sent") that the next run's
 *              read of that chunk waits on, so staging is never overwritten while
 *              the transport still reads it.
 *   receiving  each chunk's receive is posted to the transport once the previous
 *              run's write of that chunk has consumed the staging (at once, or from
 *              that write's callback); its completion sets a user event ("arrived")
 *              in the destination's context, which the write into the destination
 *              waits on, and so the consumers after it.
 *
 * Where the device maps buffers asynchronously and the value is 1 MiB or more (PoCL:
 * a mapping is the buffer's own memory), no staging is used: each chunk is mapped,
 * the transport sends from or receives into the mapping, and the unmap waits on the
 * user event above. These copies go to the device's transfer queue, whose unmap then
 * waits for the network without holding up the compute queue.
 *
 * Chunks let the network and the device copies overlap: chunk k travels while chunk
 * k + 1 is read. Nothing blocks the calling thread; the transport's completions and
 * the drivers' callbacks only set user events, count and free their records.
 *
 * A transfer that fails (the peer reported that it could not produce the value, the
 * transport failed or timed out) still sets its user event, with CL_COMPLETE: PoCL
 * 3.1 completes the commands waiting on a failed user event normally anyway (see
 * bridge.c), so the failure is kept in the copy (`failed`) and reported from there by
 * the failure scan (wait.c), naming the node and the peer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc.h"
#include "executor_internal.h"

/* The smallest chunk of a large copy. Staged, chunks overlap the device's copy with
 * the network; mapped, every chunk is handed to the transport at once, and one
 * 256 MiB chunk measured within the noise of 8 MiB ones (bench/notes.md, "Across
 * ranks"). */
#define HGR_REMOTE_CHUNK_BYTES (8u << 20)
#define HGR_REMOTE_MAX_CHUNKS 1024u       /* chunks per copy: the tag's low bits */
#define HGR_REMOTE_MAP_BYTES (1u << 20)   /* from this size, mapped where the device maps asynchronously */

/* One transfer in flight: what its callbacks need, freed by the last of them. */
typedef struct remote_transfer_t {
  hgr__remote_copy_t* copy;
  uint32_t chunk;
  cl_event user;       /* sent / arrived of this run (retained) */
  cl_event previous;   /* the previous run's user event, released once nothing waits on it */
  void* mapping;       /* mapped: the chunk's mapped memory; NULL for staging */
} remote_transfer_t;

static uint64_t chunk_offset(const hgr__remote_copy_t* copy, uint32_t chunk) {
  return (uint64_t)chunk * copy->chunk_bytes;
}

static uint64_t chunk_length(const hgr__remote_copy_t* copy, uint32_t chunk) {
  uint64_t offset = chunk_offset(copy, chunk);
  return copy->bytes - offset < copy->chunk_bytes ? copy->bytes - offset : copy->chunk_bytes;
}

static uint32_t chunk_tag(const hgr__remote_copy_t* copy, uint32_t chunk) {
  return copy->tag_base + chunk;
}

/* Ends a transfer: its user event is set (success or not: see above), the failure
 * noted, the record freed. */
static void finish(remote_transfer_t* transfer, int failed) {
  hgr__remote_copy_t* copy = transfer->copy;
  if (failed) atomic_store(&copy->failed, 1);
  clSetUserEventStatus(transfer->user, CL_COMPLETE);
  clReleaseEvent(transfer->user);
  if (transfer->previous) clReleaseEvent(transfer->previous);
  hgr__free(copy->allocator, transfer);
  atomic_fetch_sub(copy->pending, 1);
}

static void transfer_done(void* user, int failed) { finish(user, failed); }

static void* chunk_memory(const remote_transfer_t* transfer) {
  return transfer->mapping ? transfer->mapping
                           : transfer->copy->staging + chunk_offset(transfer->copy, transfer->chunk);
}

/* The read (or map) of a chunk completed (status < 0: it failed): send it on, telling
 * the peer when the value could not be produced. */
static void CL_CALLBACK chunk_read(cl_event event, cl_int status, void* user) {
  (void)event;
  remote_transfer_t* transfer = user;
  hgr__remote_copy_t* copy = transfer->copy;
  uint32_t k = transfer->chunk;
  /* The previous run's `sent` was in this read's wait list: free to go now. */
  if (transfer->previous) clReleaseEvent(transfer->previous);
  transfer->previous = NULL;
  if (status < 0) atomic_store(&copy->failed, 1);
  if (copy->transport->send(copy->transport->user, copy->peer, chunk_tag(copy, k), chunk_memory(transfer),
                            (size_t)chunk_length(copy, k), status < 0, transfer_done, transfer))
    finish(transfer, 1);
}

static void post_receive(remote_transfer_t* transfer) {
  hgr__remote_copy_t* copy = transfer->copy;
  uint32_t k = transfer->chunk;
  /* The previous run's write of this chunk (which waited on `previous`) is done. */
  if (transfer->previous) clReleaseEvent(transfer->previous);
  transfer->previous = NULL;
  if (copy->transport->receive(copy->transport->user, copy->peer, chunk_tag(copy, k), chunk_memory(transfer),
                               (size_t)chunk_length(copy, k), transfer_done, transfer))
    finish(transfer, 1);
}

/* A chunk of the destination is mapped: receive into it, unless the map failed (its
 * memory is then nobody's to write). */
static void CL_CALLBACK chunk_mapped(cl_event event, cl_int status, void* user) {
  (void)event;
  if (status < 0) finish(user, 1);
  else post_receive(user);
}

static void CL_CALLBACK chunk_written(cl_event event, cl_int status, void* user) {
  (void)event;
  (void)status; /* a failed write fails its run; the message stream stays in step */
  post_receive(user);
}

hgr_status_t hgr__remote_plan(hgr_executor_t* executor, hgr__step_t* step, int peer, bool sending) {
  char label[160];
  hgr__graph_node_label(executor->graph, step->node_id, label, sizeof(label));
  const hgr__device_t* device = &executor->instance->devices[step->device_index];
  if (device->host_driven)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT,
                      "%s: %s is host-driven (a simulator run by the calling thread) and cannot take part in a copy "
                      "between ranks",
                      label, device->info.spec);
  if (!executor->transport)
    return HGR_STATUS(HGR_STATUS_INTERNAL, "%s: a copy between ranks without a transport", label);
  hgr__remote_copy_t* copy = hgr__calloc(executor->allocator, 1, sizeof(*copy));
  if (!copy) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  copy->allocator = executor->allocator;
  step->remote = copy;
  step->path = HGR__COPY_REMOTE;
  step->pair_class = HGR_PAIR_CROSS_HOST;
  executor->copies.count[HGR_PAIR_CROSS_HOST]++;
  executor->copies.bytes[HGR_PAIR_CROSS_HOST] += step->copy_bytes;
  copy->transport = executor->transport;
  copy->peer = peer;
  copy->sending = sending;
  copy->pending = &executor->remote_pending;
  atomic_init(&copy->failed, 0);
  copy->bytes = step->copy_bytes;
  hgr__exec_device_t* used = hgr__device_keys_device(&executor->device_keys, step->device_index);
  copy->mapped = copy->bytes >= HGR_REMOTE_MAP_BYTES && hgr__device_maps_async(device);
  copy->chunk_bytes = HGR_REMOTE_CHUNK_BYTES;
  if (copy->bytes / HGR_REMOTE_MAX_CHUNKS >= copy->chunk_bytes)
    copy->chunk_bytes = (copy->bytes + HGR_REMOTE_MAX_CHUNKS - 1) / HGR_REMOTE_MAX_CHUNKS;
  copy->chunk_count = copy->bytes ? (uint32_t)((copy->bytes + copy->chunk_bytes - 1) / copy->chunk_bytes) : 0;
  if (step->node_id > (UINT32_MAX >> 1) / HGR_REMOTE_MAX_CHUNKS)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s: node id %u is too large for a transfer tag", label,
                      step->node_id);
  copy->tag_base = step->node_id * HGR_REMOTE_MAX_CHUNKS;
  if (copy->mapped) step->queue = used->transfer_queue; /* its unmaps wait for the network */
  size_t bytes = copy->mapped ? 0 : (size_t)((copy->bytes + 63) / 64 * 64);
  used->usage.staging_bytes += bytes;
  if (executor->plan_only || !copy->chunk_count) return HGR_OK;
  copy->staging = bytes ? hgr__alloc(copy->allocator, bytes) : NULL;
  copy->chunks = hgr__calloc(copy->allocator, copy->chunk_count, sizeof(*copy->chunks));
  if ((bytes && !copy->staging) || !copy->chunks)
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for %zu bytes of staging", bytes);
  step->done_count = 1;
  return HGR_OK;
}

/* A transfer record for chunk k of this run, with its user event in the context of
 * the step's queue; the chunk keeps the event as its latest. */
static hgr_status_t new_transfer(hgr_executor_t* executor, hgr__step_t* step, uint32_t k,
                                 remote_transfer_t** out_transfer) {
  hgr__remote_copy_t* copy = step->remote;
  remote_transfer_t* transfer = hgr__calloc(copy->allocator, 1, sizeof(*transfer));
  if (!transfer) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  cl_int error = CL_SUCCESS;
  transfer->user = clCreateUserEvent(executor->order.queues.queues[step->queue].context, &error);
  if (error != CL_SUCCESS) {
    hgr__free(copy->allocator, transfer);
    return HGR_CL_STATUS(error, "clCreateUserEvent(a copy between ranks) on %s",
                         executor->order.queues.queues[step->queue].spec);
  }
  transfer->copy = copy;
  transfer->chunk = k;
  transfer->previous = copy->chunks[k].user; /* the chunk's reference moves here */
  clRetainEvent(transfer->user);
  copy->chunks[k].user = transfer->user;
  atomic_fetch_add(copy->pending, 1);
  *out_transfer = transfer;
  return HGR_OK;
}

static hgr_status_t enqueue_send(hgr_executor_t* executor, hgr__step_t* step, const char* label) {
  hgr__remote_copy_t* copy = step->remote;
  uint32_t src = step->in_storages[0];
  cl_command_queue queue = executor->order.queues.queues[step->queue].queue;
  cl_event read = NULL;
  for (uint32_t k = 0; k < copy->chunk_count; ++k) {
    cl_event* wait = executor->order.wait;
    uint32_t wait_count = 0;
    if (k == 0) HGR_RETURN_IF_ERROR(hgr__order_storage(&executor->order, src, false, step->queue, &wait_count));
    cl_event sent_before = copy->chunks[k].user;
    if (sent_before && hgr__event_status(sent_before) > CL_COMPLETE) wait[wait_count++] = sent_before;
    remote_transfer_t* transfer = NULL;
    HGR_RETURN_IF_ERROR(new_transfer(executor, step, k, &transfer));
    cl_int error = clEnqueueReadBuffer(queue, executor->pool.storages[src].mem, CL_FALSE, (size_t)chunk_offset(copy, k),
                                       (size_t)chunk_length(copy, k), copy->staging + chunk_offset(copy, k),
                                       wait_count, wait_count ? wait : NULL, &read);
    if (error != CL_SUCCESS) {
      finish(transfer, 1);
      return HGR_CL_STATUS(error, "clEnqueueReadBuffer(%s, chunk %u, to rank %d) on %s", label, k, copy->peer,
                           executor->order.queues.queues[step->queue].spec);
    }
    error = clSetEventCallback(read, CL_COMPLETE, chunk_read, transfer);
    if (error != CL_SUCCESS) {
      /* The read is enqueued: wait for it here rather than lose the transfer. */
      clWaitForEvents(1, &read);
      chunk_read(read, hgr__event_status(read), transfer);
    }
    hgr_status_t status = hgr__order_enqueued(&executor->order, step->queue, read);
    if (!status && k + 1 == copy->chunk_count) hgr__order_record(&executor->order, src, false, read, step->queue);
    if (!status && k + 1 == copy->chunk_count) {
      if (step->done[0]) clReleaseEvent(step->done[0]);
      clRetainEvent(read);
      step->done[0] = read;
    }
    clReleaseEvent(read);
    HGR_RETURN_IF_ERROR(status);
  }
  return hgr__queue_flush(&executor->order.queues, step->queue);
}

static hgr_status_t enqueue_receive(hgr_executor_t* executor, hgr__step_t* step, const char* label) {
  hgr__remote_copy_t* copy = step->remote;
  uint32_t dst = step->out_storages[0];
  cl_command_queue queue = executor->order.queues.queues[step->queue].queue;
  for (uint32_t k = 0; k < copy->chunk_count; ++k) {
    remote_transfer_t* transfer = NULL;
    HGR_RETURN_IF_ERROR(new_transfer(executor, step, k, &transfer));
    cl_event arrived = transfer->user; /* the chunk keeps a reference */
    /* Post the receive once the previous run's write of this chunk consumed the
     * staging. */
    cl_event written = copy->chunks[k].written;
    if (!written || hgr__event_status(written) <= CL_COMPLETE ||
        clSetEventCallback(written, CL_COMPLETE, chunk_written, transfer) != CL_SUCCESS) {
      if (written) {
        struct timespec pause = {0, 20000};
        while (hgr__event_status(written) > CL_COMPLETE) nanosleep(&pause, NULL);
      }
      post_receive(transfer);
    }
    cl_event* wait = executor->order.wait;
    uint32_t wait_count = 0;
    wait[wait_count++] = arrived;
    hgr_status_t status = HGR_OK;
    if (k == 0) status = hgr__order_storage(&executor->order, dst, true, step->queue, &wait_count);
    cl_event write = NULL;
    cl_int error = CL_SUCCESS;
    if (!status)
      error = clEnqueueWriteBuffer(queue, executor->pool.storages[dst].mem, CL_FALSE, (size_t)chunk_offset(copy, k),
                                   (size_t)chunk_length(copy, k), copy->staging + chunk_offset(copy, k), wait_count,
                                   wait, &write);
    if (!status && error != CL_SUCCESS)
      status = HGR_CL_STATUS(error, "clEnqueueWriteBuffer(%s, chunk %u, from rank %d) on %s", label, k, copy->peer,
                             executor->order.queues.queues[step->queue].spec);
    /* On failure the receive is posted (or will be) all the same: its arrival sets
     * `arrived`, which nothing waits on then. `arrived` must outlive the write that
     * waits on it (PoCL 3.1 does not retain wait lists): the chunk keeps it until
     * the next run's receive is posted. */
    HGR_RETURN_IF_ERROR(status);
    if (copy->chunks[k].written) clReleaseEvent(copy->chunks[k].written);
    clRetainEvent(write);
    copy->chunks[k].written = write;
    status = hgr__order_enqueued(&executor->order, step->queue, write);
    if (!status && k + 1 == copy->chunk_count) {
      hgr__order_record(&executor->order, dst, true, write, step->queue);
      if (step->done[0]) clReleaseEvent(step->done[0]);
      clRetainEvent(write);
      step->done[0] = write;
    }
    clReleaseEvent(write);
    HGR_RETURN_IF_ERROR(status);
  }
  return hgr__queue_flush(&executor->order.queues, step->queue);
}

/* Mapped: every chunk's map (for reading when sending, for writing when receiving),
 * whose callback starts that chunk's transfer, then every chunk's unmap, each waiting
 * on its transfer's user event; the unmap of the last chunk is the step's access to
 * the storage. All maps come first so that on the in-order queue no chunk's transfer
 * waits for the one before it: the transport has them all at once. */
static hgr_status_t enqueue_mapped(hgr_executor_t* executor, hgr__step_t* step, const char* label) {
  hgr__remote_copy_t* copy = step->remote;
  uint32_t storage = copy->sending ? step->in_storages[0] : step->out_storages[0];
  cl_mem mem = executor->pool.storages[storage].mem;
  const hgr__queue_t* queue = &executor->order.queues.queues[step->queue];
  for (uint32_t k = 0; k < copy->chunk_count; ++k) {
    cl_event* wait = executor->order.wait;
    uint32_t wait_count = 0;
    if (k == 0)
      HGR_RETURN_IF_ERROR(hgr__order_storage(&executor->order, storage, !copy->sending, step->queue, &wait_count));
    remote_transfer_t* transfer = NULL;
    HGR_RETURN_IF_ERROR(new_transfer(executor, step, k, &transfer));
    cl_event map = NULL;
    cl_int error = CL_SUCCESS;
    void* mapping = clEnqueueMapBuffer(queue->queue, mem, CL_FALSE,
                                       copy->sending ? CL_MAP_READ : CL_MAP_WRITE_INVALIDATE_REGION,
                                       (size_t)chunk_offset(copy, k), (size_t)chunk_length(copy, k), wait_count,
                                       wait_count ? wait : NULL, &map, &error);
    if (error != CL_SUCCESS) {
      finish(transfer, 1);
      return HGR_CL_STATUS(error, "clEnqueueMapBuffer(%s, chunk %u, %s rank %d) on %s", label, k,
                           copy->sending ? "to" : "from", copy->peer, queue->spec);
    }
    transfer->mapping = mapping;
    copy->chunks[k].mapping = mapping; /* transfer may end any time now */
    if (clSetEventCallback(map, CL_COMPLETE, copy->sending ? chunk_read : chunk_mapped, transfer) != CL_SUCCESS) {
      clWaitForEvents(1, &map); /* the map is enqueued: start the transfer here rather than lose it */
      if (copy->sending) chunk_read(map, hgr__event_status(map), transfer);
      else chunk_mapped(map, hgr__event_status(map), transfer);
    }
    hgr_status_t status = hgr__order_enqueued(&executor->order, step->queue, map);
    clReleaseEvent(map);
    HGR_RETURN_IF_ERROR(status);
  }
  for (uint32_t k = 0; k < copy->chunk_count; ++k) {
    cl_event unmap = NULL;
    cl_int error =
        clEnqueueUnmapMemObject(queue->queue, mem, copy->chunks[k].mapping, 1, &copy->chunks[k].user, &unmap);
    if (error != CL_SUCCESS)
      return HGR_CL_STATUS(error, "clEnqueueUnmapMemObject(%s, chunk %u, %s rank %d) on %s", label, k,
                           copy->sending ? "to" : "from", copy->peer, queue->spec);
    hgr_status_t status = hgr__order_enqueued(&executor->order, step->queue, unmap);
    if (!status && k + 1 == copy->chunk_count) {
      hgr__order_record(&executor->order, storage, !copy->sending, unmap, step->queue);
      if (step->done[0]) clReleaseEvent(step->done[0]);
      clRetainEvent(unmap);
      step->done[0] = unmap;
    }
    clReleaseEvent(unmap);
    HGR_RETURN_IF_ERROR(status);
  }
  return hgr__queue_flush(&executor->order.queues, step->queue);
}

hgr_status_t hgr__remote_enqueue(hgr_executor_t* executor, hgr__step_t* step, const char* label) {
  if (!step->remote->chunk_count) return HGR_OK; /* nothing moves; the peer sends nothing either */
  if (step->remote->mapped) return enqueue_mapped(executor, step, label);
  return step->remote->sending ? enqueue_send(executor, step, label) : enqueue_receive(executor, step, label);
}

hgr_status_t hgr__remote_failure(const hgr_executor_t* executor) {
  for (uint32_t s = 0; s < executor->step_count; ++s) {
    const hgr__step_t* step = &executor->steps[s];
    if (!step->remote || !atomic_load(&step->remote->failed)) continue;
    char label[160];
    hgr__graph_node_label(executor->graph, step->node_id, label, sizeof(label));
    const hgr_transport_t* transport = step->remote->transport;
    const char* why = transport->failure ? transport->failure(transport->user) : NULL;
    return HGR_STATUS(HGR_STATUS_DEVICE_FAILURE, "%s (__copy %s rank %d, %s) failed%s%s", label,
                      step->remote->sending ? "to" : "from", step->remote->peer,
                      hgr_pair_class_name(HGR_PAIR_CROSS_HOST), why ? ": " : "", why ? why : "");
  }
  return HGR_OK;
}

bool hgr__remote_settle(hgr_executor_t* executor) {
  /* Every transfer the transport holds ends within its timeout; give it that long
   * and a margin. */
  struct timespec pause = {0, 1000000};
  for (int waited_ms = 0; atomic_load(&executor->remote_pending) > 0; ++waited_ms) {
    if (waited_ms > 300000) return false;
    nanosleep(&pause, NULL);
  }
  return true;
}

void hgr__remote_release(hgr__step_t* step, bool settled) {
  hgr__remote_copy_t* copy = step->remote;
  if (!copy) return;
  step->remote = NULL;
  if (!settled) return; /* a transfer may still touch it: left to the process's end */
  for (uint32_t k = 0; copy->chunks && k < copy->chunk_count; ++k) {
    if (copy->chunks[k].user) clReleaseEvent(copy->chunks[k].user);
    if (copy->chunks[k].written) clReleaseEvent(copy->chunks[k].written);
  }
  hgr__free(copy->allocator, copy->chunks);
  hgr__free(copy->allocator, copy->staging);
  hgr__free(copy->allocator, copy);
}
