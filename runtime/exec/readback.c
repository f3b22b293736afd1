/* Reading one storage (or a copy of it) back to the host, and handing it out as a
 * device buffer: the primitives under outputs (host_io.c) and fences (fence.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "executor_internal.h"
#include "hgr/opencl.h"

/* The transfer queue of the device that owns storage_slot. */
uint32_t hgr__transfer_queue_of(const hgr_executor_t* executor, uint32_t storage_slot) {
  return hgr__device_keys_device(&executor->device_keys, executor->pool.storages[storage_slot].device_index)
      ->transfer_queue;
}

hgr_status_t hgr__check_buffers(const hgr_executor_t* executor) {
  if (executor->plan_only)
    return HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION, "this executor was created plan-only and has no buffers");
  return hgr__check_usable(executor);
}

hgr_io_traffic_t* hgr__traffic(hgr_executor_t* executor, hgr_io_t io, size_t index) {
  static _Thread_local hgr_io_traffic_t nowhere; /* counted into and never read */
  hgr_io_traffic_t* table = io == HGR_INPUT ? executor->traffic.inputs : executor->traffic.outputs;
  size_t count = io == HGR_INPUT ? executor->graph->arg_count : executor->graph->head_count;
  return table && index < count ? &table[index] : &nowhere;
}

hgr_status_t hgr__traffic_create(hgr_executor_t* executor) {
  executor->traffic.inputs = hgr__calloc(executor->allocator, executor->graph->arg_count + 1, sizeof(hgr_io_traffic_t));
  executor->traffic.outputs =
      hgr__calloc(executor->allocator, executor->graph->head_count + 1, sizeof(hgr_io_traffic_t));
  if (!executor->traffic.inputs || !executor->traffic.outputs)
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  return HGR_OK;
}

void hgr__traffic_release(hgr_executor_t* executor) {
  hgr__free(executor->allocator, executor->traffic.inputs);
  hgr__free(executor->allocator, executor->traffic.outputs);
  memset(&executor->traffic, 0, sizeof(executor->traffic));
}

hgr_status_t hgr__check_io(const hgr_executor_t* executor, const hgr_tensor_info_t* info, const char* what,
                             size_t index, const void* data, size_t bytes) {
  HGR_RETURN_IF_ERROR(hgr__check_buffers(executor));
  if (bytes != info->bytes)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s %zu '%s' has %llu bytes, %zu were given", what, index,
                      info->name, (unsigned long long)info->bytes, bytes);
  if (!data && bytes)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s %zu '%s': data is NULL", what, index, info->name);
  return HGR_OK;
}

hgr_status_t hgr__check_here(const hgr_executor_t* executor, uint32_t entry_id, const char* what, size_t index,
                             const char* name) {
  const hgr__device_keys_t* device_keys = &executor->device_keys;
  if (device_keys->entry_rank[entry_id] == device_keys->rank) return HGR_OK;
  return HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION,
                    "%s %zu '%s' lives on %s, a device of rank %d: only rank %d %s it (this is rank %d)", what, index,
                    name, device_keys->entry_spec[entry_id], device_keys->entry_rank[entry_id],
                    device_keys->entry_rank[entry_id], !strcmp(what, "input") ? "sets" : "reads", device_keys->rank);
}

/* The storage id of output index. */
uint32_t hgr__output_storage(const hgr_executor_t* executor, size_t index) {
  const hgr_graph_t* graph = executor->graph;
  return graph->entries[hgr__graph_entry_id(graph, graph->heads[index])].storage_slot;
}

/* Reads bytes of mem (storage_slot's buffer, or a copy of it on the same device) into
 * data, through staging (the executor's host memory of at least bytes, 64-byte
 * aligned: the driver reads into it, never into the caller's memory, since after a
 * device failure the read may stay pending when this call returns). When ordered,
 * the read waits for storage_slot's writer; a copy is ordered by its queue. `what`
 * names the tensor for errors. */
hgr_status_t hgr__read_into(hgr_executor_t* executor, uint32_t storage_slot, cl_mem mem, bool ordered, void* staging,
                              void* data, size_t bytes, const char* what) {
  uint32_t queue = hgr__transfer_queue_of(executor, storage_slot);
  const char* spec = hgr__device_spec(executor->instance, executor->pool.storages[storage_slot].device_index);
  cl_event* wait = executor->order.wait;
  uint32_t wait_count = 0;
  if (ordered) HGR_RETURN_IF_ERROR(hgr__order_storage(&executor->order, storage_slot, false, queue, &wait_count));
  HGR_RETURN_IF_ERROR(hgr__order_reserve(&executor->order, 1));
  cl_event event = NULL;
  cl_int error = clEnqueueReadBuffer(executor->order.queues.queues[queue].queue, mem, CL_FALSE, 0, bytes, staging,
                                     wait_count, wait_count ? wait : NULL, &event);
  if (error != CL_SUCCESS) return HGR_CL_STATUS(error, "clEnqueueReadBuffer(%s, storage %u) on %s", what,
                                            hgr__graph_storage_id(executor->graph, storage_slot), spec);
  hgr_status_t status = hgr__order_enqueued(&executor->order, queue, event);
  if (!status && ordered) hgr__order_record(&executor->order, storage_slot, false, event, queue);
  if (!status) status = hgr__queue_flush(&executor->order.queues, queue);
  if (!status) status = hgr__await_events(executor, &event, 1, hgr__order_end(&executor->order));
  if (!status) {
    cl_int execution = hgr__event_status(event);
    if (execution < 0)
      status = HGR_STATUS(HGR_STATUS_DEVICE_FAILURE, "reading %s on %s failed on the device: %s", what, spec,
                          hgr_opencl_error_name(execution));
  }
  if (!status) memcpy(data, staging, bytes);
  clReleaseEvent(event);
  return status;
}

/* The host memory output index is read through. */
hgr_status_t hgr__output_staging(hgr_executor_t* executor, size_t index, size_t bytes, void** out_staging) {
  if (!executor->staging.outputs[index]) {
    executor->staging.outputs[index] = hgr__alloc(executor->allocator, (bytes + 63) / 64 * 64);
    if (!executor->staging.outputs[index])
      return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for output %zu (%zu bytes)", index, bytes);
  }
  *out_staging = executor->staging.outputs[index];
  return HGR_OK;
}

/* Fills out with mem and a marker on storage_slot's transfer queue that completes once
 * the commands before it there (and, when ordered, storage_slot's writer) have. */
hgr_status_t hgr__export_buffer(hgr_executor_t* executor, uint32_t storage_slot, cl_mem mem, bool ordered,
                                  size_t bytes, hgr_device_buffer_t* out_buffer) {
  uint32_t queue = hgr__transfer_queue_of(executor, storage_slot);
  const hgr__device_t* device = &executor->instance->devices[executor->pool.storages[storage_slot].device_index];
  uint32_t wait_count = 0;
  if (ordered) HGR_RETURN_IF_ERROR(hgr__order_storage(&executor->order, storage_slot, false, queue, &wait_count));
  HGR_RETURN_IF_ERROR(hgr__order_reserve(&executor->order, 1));
  cl_event ready = NULL;
  cl_int error = clEnqueueMarkerWithWaitList(executor->order.queues.queues[queue].queue, wait_count,
                                             wait_count ? executor->order.wait : NULL, &ready);
  if (error != CL_SUCCESS) return HGR_CL_STATUS(error, "clEnqueueMarkerWithWaitList on %s", device->info.spec);
  hgr_status_t status = hgr__order_enqueued(&executor->order, queue, ready);
  if (!status) status = hgr__queue_flush(&executor->order.queues, queue);
  /* A host-driven device (Oclgrind) runs only while hgr drives it: the values are
   * made ready here, or the caller's wait on `ready` could never end. */
  if (!status && hgr__queue_set_host_driven(&executor->order.queues))
    status = hgr__await_events(executor, &ready, 1, hgr__order_end(&executor->order));
  if (status) {
    clReleaseEvent(ready);
    return status;
  }
  clRetainMemObject(mem);
  *out_buffer = (hgr_device_buffer_t){mem, bytes, executor->pool.storages[storage_slot].device_index, device->device,
                                      executor->order.queues.queues[queue].context, ready};
  return HGR_OK;
}
