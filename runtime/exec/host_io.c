/* Host I/O: inputs and outputs by index or name, the caller's memory or buffers
 * bound in place of the executor's (zero-copy where the device shares host memory),
 * device buffers bound as inputs with the event their values wait for (state kept
 * on the device between runs), outputs handed out as device buffers, reading any
 * entry (stepping), and params. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "executor_internal.h"
#include "hgr/opencl.h"

size_t hgr_executor_input_count(const hgr_executor_t* executor) {
  return hgr_graph_input_count(executor->graph);
}
size_t hgr_executor_output_count(const hgr_executor_t* executor) {
  return hgr_graph_output_count(executor->graph);
}
hgr_status_t hgr_executor_input_info(const hgr_executor_t* executor, size_t index, hgr_tensor_info_t* out_info) {
  return hgr_graph_input_info(executor->graph, index, out_info);
}
hgr_status_t hgr_executor_output_info(const hgr_executor_t* executor, size_t index, hgr_tensor_info_t* out_info) {
  return hgr_graph_output_info(executor->graph, index, out_info);
}
hgr_status_t hgr_executor_input_index(const hgr_executor_t* executor, const char* name, size_t* out_index) {
  return hgr_graph_input_index(executor->graph, name, out_index);
}

static uint32_t input_entry(const hgr_executor_t* executor, size_t index) {
  return executor->graph->node_row_ptr[executor->graph->arg_nodes[index]];
}

static uint32_t output_entry(const hgr_executor_t* executor, size_t index) {
  return hgr__graph_entry_id(executor->graph, executor->graph->heads[index]);
}

int hgr_executor_input_rank(const hgr_executor_t* executor, size_t index) {
  if (!executor || index >= executor->graph->arg_count) return -1;
  return executor->device_keys.entry_rank[input_entry(executor, index)];
}

int hgr_executor_output_rank(const hgr_executor_t* executor, size_t index) {
  if (!executor || index >= executor->graph->head_count) return -1;
  return executor->device_keys.entry_rank[output_entry(executor, index)];
}

hgr_status_t hgr_executor_set_input(hgr_executor_t* executor, size_t index, const void* data, size_t bytes) {
  hgr_tensor_info_t info;
  HGR_RETURN_IF_ERROR(hgr_executor_input_info(executor, index, &info));
  HGR_RETURN_IF_ERROR(hgr__check_io(executor, &info, "input", index, data, bytes));
  HGR_RETURN_IF_ERROR(hgr__check_here(executor, input_entry(executor, index), "input", index, info.name));
  if (executor->io.input_bindings[index].kind != HGR__BIND_NONE)
    return HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION,
                      "input %zu '%s' is bound to the caller's memory: write that, or unbind the input first", index,
                      info.name);
  const hgr_graph_t* graph = executor->graph;
  uint32_t storage_slot = graph->entries[graph->node_row_ptr[graph->arg_nodes[index]]].storage_slot;
  if (executor->pool.storages[storage_slot].shared)
    return HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION,
                      "input %zu '%s' (storage %u) is a parameter buffer shared between executors "
                      "(share_params_from), so it is read-only",
                      index, info.name, hgr__graph_storage_id(executor->graph, storage_slot));
  executor->pool.storages[storage_slot].params = false; /* load_params sets it again */
  if (bytes) {
    HGR_RETURN_IF_ERROR(hgr__fences_release_holders(executor, storage_slot));
    uint32_t queue = hgr__transfer_queue_of(executor, storage_slot);
    hgr__queue_t* q = &executor->order.queues.queues[queue];
    uint32_t wait_count = 0;
    HGR_RETURN_IF_ERROR(hgr__order_storage(&executor->order, storage_slot, true, queue, &wait_count));
    /* Nothing in flight to wait for: a blocking write straight from data. Otherwise
     * data is copied and the write waits on the device for the storage's readers
     * and writer in runs already started. */
    bool idle = !wait_count && (!q->last || hgr__events_complete(&q->last, 1) == 1);
    void* held = NULL;
    if (!idle) {
      HGR_RETURN_IF_ERROR(hgr__order_reserve_held(&executor->order));
      held = hgr__alloc(executor->allocator, (bytes + 63) / 64 * 64);
      if (!held)
        return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for input %zu (%zu bytes)", index, bytes);
      memcpy(held, data, bytes);
    }
    cl_event event = NULL;
    hgr_status_t status = hgr__order_reserve(&executor->order, 1);
    cl_int error = status ? CL_SUCCESS
                          : clEnqueueWriteBuffer(q->queue, executor->pool.storages[storage_slot].mem,
                                                 idle ? CL_TRUE : CL_FALSE, 0, bytes, held ? held : data, wait_count,
                                                 wait_count ? executor->order.wait : NULL, &event);
    if (!status && error != CL_SUCCESS)
      status = HGR_CL_STATUS(error, "clEnqueueWriteBuffer(input %zu '%s', storage %u) on %s", index, info.name,
                             hgr__graph_storage_id(executor->graph, storage_slot), q->spec);
    if (status) {
      hgr__free(executor->allocator, held);
      return status;
    }
    status = hgr__order_enqueued(&executor->order, queue, event);
    if (!status) hgr__order_record(&executor->order, storage_slot, true, event, queue);
    if (held) hgr__order_hold(&executor->order, held, queue);
    if (!status && held) status = hgr__queue_flush(&executor->order.queues, queue);
    clReleaseEvent(event);
    HGR_RETURN_IF_ERROR(status);
    hgr_io_traffic_t* traffic = hgr__traffic(executor, HGR_INPUT, index);
    traffic->host_copies++;
    traffic->host_bytes += bytes;
  }
  executor->io.input_set[index] = true;
  return HGR_OK;
}

hgr_status_t hgr_executor_set_input_by_name(hgr_executor_t* executor, const char* name, const void* data,
                                            size_t bytes) {
  size_t index;
  HGR_RETURN_IF_ERROR(hgr_executor_input_index(executor, name, &index));
  return hgr_executor_set_input(executor, index, data, bytes);
}

hgr_status_t hgr_executor_get_output(hgr_executor_t* executor, size_t index, void* data, size_t bytes) {
  hgr_tensor_info_t info;
  HGR_RETURN_IF_ERROR(hgr_executor_output_info(executor, index, &info));
  HGR_RETURN_IF_ERROR(hgr__check_io(executor, &info, "output", index, data, bytes));
  HGR_RETURN_IF_ERROR(hgr__check_here(executor, output_entry(executor, index), "output", index, info.name));
  if (!bytes) return HGR_OK;
  uint32_t storage_slot = hgr__output_storage(executor, index);
  void* staging = NULL;
  HGR_RETURN_IF_ERROR(hgr__output_staging(executor, index, bytes, &staging));
  char what[256];
  snprintf(what, sizeof(what), "output %zu '%s'", index, info.name);
  hgr_io_traffic_t* traffic = hgr__traffic(executor, HGR_OUTPUT, index);
  traffic->host_copies++;
  traffic->host_bytes += bytes;
  return hgr__read_into(executor, storage_slot, executor->pool.storages[storage_slot].mem, true, staging, data, bytes,
                        what);
}

/* The name of input index, for messages. */
static const char* input_name(const hgr_executor_t* executor, size_t index) {
  const hgr_graph_t* graph = executor->graph;
  return graph->nodes[graph->arg_nodes[index]].name;
}

/* A device buffer's values into input index for a run (hgr_executor_bind_device_buffer):
 * a buffer bound as the storage needs only a marker that waits for its ready event
 * (the first run after binding; later runs nothing), a copy on the device copies it
 * after that event. Either is recorded as the storage's writer, so the run's first
 * readers wait for it on the device. The order keeps the ready event until the run
 * retires: PoCL 3.1 does not retain the events of a wait list. */
static hgr_status_t sync_device_input(hgr_executor_t* executor, hgr__io_binding_t* binding, size_t index) {
  hgr_io_traffic_t* traffic = hgr__traffic(executor, HGR_INPUT, index);
  if (binding->kind == HGR__BIND_BUFFER && !binding->ready) {
    traffic->device_buffers++;
    return HGR_OK;
  }
  hgr__order_t* order = &executor->order;
  uint32_t storage_slot = binding->storage;
  uint32_t queue = hgr__transfer_queue_of(executor, storage_slot);
  hgr__queue_t* q = &order->queues.queues[queue];
  uint32_t wait_count = 0;
  HGR_RETURN_IF_ERROR(hgr__order_storage(order, storage_slot, true, queue, &wait_count));
  if (binding->ready) {
    HGR_RETURN_IF_ERROR(hgr__order_keep(order, binding->ready));
    order->wait[wait_count++] = binding->ready; /* mem's context, which is the storage's (bind checked) */
  }
  HGR_RETURN_IF_ERROR(hgr__order_reserve(order, 1));
  const cl_event* wait = wait_count ? order->wait : NULL;
  bool copy = binding->kind == HGR__BIND_DEVICE_COPY && binding->bytes;
  cl_event event = NULL;
  cl_int error = copy ? clEnqueueCopyBuffer(q->queue, binding->source, executor->pool.storages[storage_slot].mem, 0, 0,
                                            binding->bytes, wait_count, wait, &event)
                      : clEnqueueMarkerWithWaitList(q->queue, wait_count, wait, &event);
  if (error != CL_SUCCESS)
    return HGR_CL_STATUS(error, "%s(input %zu '%s', the device buffer bound to it) on %s",
                         copy ? "clEnqueueCopyBuffer" : "clEnqueueMarkerWithWaitList", index,
                         input_name(executor, index), q->spec);
  hgr_status_t status = hgr__order_enqueued(order, queue, event);
  if (!status) hgr__order_record(order, storage_slot, true, event, queue);
  clReleaseEvent(event);
  HGR_RETURN_IF_ERROR(status);
  traffic->device_buffers++;
  traffic->device_copies += copy;
  if (binding->ready) {
    traffic->device_waits++;
    clReleaseEvent(binding->ready); /* the order keeps it until the run retires */
    binding->ready = NULL;
  }
  return HGR_OK;
}

/* A device buffer of another context into input index for a run: read on a queue of
 * its own context (after its ready event, the first time) into host staging, then
 * written into the storage after a bridge from that read, so that nothing waits on
 * the host (except on a host-driven device holding the buffer, whose read blocks).
 * The staging is held until the write retires; the order keeps the read's event. */
static hgr_status_t stage_device_input(hgr_executor_t* executor, hgr__io_binding_t* binding, size_t index) {
  hgr__order_t* order = &executor->order;
  uint32_t storage_slot = binding->storage;
  uint32_t queue = hgr__transfer_queue_of(executor, storage_slot);
  hgr__queue_t* q = &order->queues.queues[queue];
  size_t bytes = binding->bytes;
  HGR_RETURN_IF_ERROR(hgr__order_reserve_held(order));
  HGR_RETURN_IF_ERROR(hgr__order_reserve(order, 3));
  if (binding->ready) HGR_RETURN_IF_ERROR(hgr__order_keep(order, binding->ready));
  void* staging = hgr__alloc(executor->allocator, bytes ? (bytes + 63) / 64 * 64 : 64);
  if (!staging)
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for input %zu (%zu bytes of staging)", index,
                      bytes);
  char what[300];
  snprintf(what, sizeof(what), "input %zu '%s', from a device buffer of another context", index,
           input_name(executor, index));
  cl_event read = NULL;
  cl_int error = bytes ? clEnqueueReadBuffer(binding->source_queue, binding->source,
                                             binding->source_host_driven ? CL_TRUE : CL_FALSE, 0, bytes, staging,
                                             binding->ready ? 1 : 0, binding->ready ? &binding->ready : NULL, &read)
                       : clEnqueueMarkerWithWaitList(binding->source_queue, binding->ready ? 1 : 0,
                                                     binding->ready ? &binding->ready : NULL, &read);
  if (error != CL_SUCCESS) {
    hgr__free(executor->allocator, staging);
    return HGR_CL_STATUS(error, "clEnqueueReadBuffer(%s)", what);
  }
  hgr_status_t status = HGR_OK;
  if (!binding->source_host_driven && (error = clFlush(binding->source_queue)) != CL_SUCCESS)
    status = HGR_CL_STATUS(error, "clFlush(%s)", what);
  if (!status) status = hgr__order_keep(order, read);
  cl_event bridge = NULL;
  if (!status) status = hgr__bridge_foreign(&order->bridges, &order->queues, read, queue, what, &bridge);
  uint32_t wait_count = 0;
  if (!status) status = hgr__order_storage(order, storage_slot, true, queue, &wait_count);
  cl_event event = NULL;
  if (!status) {
    order->wait[wait_count++] = bridge;
    error = bytes ? clEnqueueWriteBuffer(q->queue, executor->pool.storages[storage_slot].mem, CL_FALSE, 0, bytes,
                                         staging, wait_count, order->wait, &event)
                  : clEnqueueMarkerWithWaitList(q->queue, wait_count, order->wait, &event);
    if (error != CL_SUCCESS) status = HGR_CL_STATUS(error, "clEnqueueWriteBuffer(%s) on %s", what, q->spec);
  }
  if (bridge) clReleaseEvent(bridge); /* its record keeps it until the write retires */
  if (status) {
    /* The read may still write into the staging: let it end first. */
    hgr_status_free(hgr__await_events(executor, &read, 1, hgr__order_end(order)));
    clReleaseEvent(read);
    hgr__free(executor->allocator, staging);
    return status;
  }
  clReleaseEvent(read);
  status = hgr__order_enqueued(order, queue, event);
  hgr__order_hold(order, staging, queue); /* freed once the write retired */
  if (!status) hgr__order_record(order, storage_slot, true, event, queue);
  clReleaseEvent(event);
  HGR_RETURN_IF_ERROR(status);
  hgr_io_traffic_t* traffic = hgr__traffic(executor, HGR_INPUT, index);
  traffic->device_buffers++;
  traffic->host_copies += 2;
  traffic->host_bytes += 2 * (uint64_t)bytes;
  if (binding->ready) {
    traffic->device_waits++;
    clReleaseEvent(binding->ready);
    binding->ready = NULL;
  }
  return HGR_OK;
}

/* An output whose storage no run writes (it holds a graph input or a param), bound
 * to the caller's buffer: the storage is copied into that buffer on the device after
 * the storage's last writer (bind explains why the buffer does not replace it). */
static hgr_status_t copy_out_to_buffer(hgr_executor_t* executor, hgr__io_binding_t* binding, size_t index) {
  if (!binding->bytes) return HGR_OK;
  hgr__order_t* order = &executor->order;
  uint32_t storage_slot = binding->storage;
  uint32_t queue = hgr__transfer_queue_of(executor, storage_slot);
  hgr__queue_t* q = &order->queues.queues[queue];
  uint32_t wait_count = 0;
  HGR_RETURN_IF_ERROR(hgr__order_storage(order, storage_slot, false, queue, &wait_count));
  cl_event event = NULL;
  cl_int error = clEnqueueCopyBuffer(q->queue, executor->pool.storages[storage_slot].mem, binding->source, 0, 0,
                                     binding->bytes, wait_count, wait_count ? order->wait : NULL, &event);
  if (error != CL_SUCCESS)
    return HGR_CL_STATUS(error, "clEnqueueCopyBuffer(output %zu '%s', into the buffer bound to it) on %s", index,
                         executor->graph->head_names[index], q->spec);
  hgr_status_t status = hgr__order_enqueued(order, queue, event);
  if (!status) hgr__order_record(order, storage_slot, false, event, queue);
  clReleaseEvent(event);
  HGR_RETURN_IF_ERROR(status);
  hgr_io_traffic_t* traffic = hgr__traffic(executor, HGR_OUTPUT, index);
  traffic->device_buffers++;
  traffic->device_copies++;
  return HGR_OK;
}

/* A host binding's transfer of one run: the caller's memory into the storage before
 * the run's first reader (inputs), or the storage into it after the last writer
 * (outputs): a copy, or a map and unmap of the buffer over it, which makes the
 * device and the host agree. */
static hgr_status_t sync_binding(hgr_executor_t* executor, hgr__io_binding_t* binding, bool input, size_t index) {
  if (binding->device && input)
    return binding->kind == HGR__BIND_STAGED_COPY ? stage_device_input(executor, binding, index)
                                                  : sync_device_input(executor, binding, index);
  if (!input && binding->kind == HGR__BIND_DEVICE_COPY) return copy_out_to_buffer(executor, binding, index);
  if ((binding->kind != HGR__BIND_HOST_COPY && binding->kind != HGR__BIND_HOST_ZERO_COPY) || !binding->bytes)
    return HGR_OK;
  uint32_t storage_slot = binding->storage;
  uint32_t queue = hgr__transfer_queue_of(executor, storage_slot);
  cl_command_queue command_queue = executor->order.queues.queues[queue].queue;
  cl_mem mem = executor->pool.storages[storage_slot].mem;
  const char* spec = hgr__device_spec(executor->instance, executor->pool.storages[storage_slot].device_index);
  uint32_t wait_count = 0;
  HGR_RETURN_IF_ERROR(hgr__order_storage(&executor->order, storage_slot, input, queue, &wait_count));
  const cl_event* wait = wait_count ? executor->order.wait : NULL;
  cl_event event = NULL;
  cl_int error;
  if (binding->kind == HGR__BIND_HOST_COPY) {
    error = input ? clEnqueueWriteBuffer(command_queue, mem, CL_FALSE, 0, binding->bytes, binding->host, wait_count,
                                         wait, &event)
                  : clEnqueueReadBuffer(command_queue, mem, CL_FALSE, 0, binding->bytes, binding->host, wait_count,
                                        wait, &event);
    if (error != CL_SUCCESS)
      return HGR_CL_STATUS(error, "%s(storage %u, bound to the caller's memory) on %s",
                           input ? "clEnqueueWriteBuffer" : "clEnqueueReadBuffer",
                           hgr__graph_storage_id(executor->graph, storage_slot), spec);
  } else {
    cl_event mapped = NULL;
    void* pointer = clEnqueueMapBuffer(command_queue, binding->mem, CL_FALSE,
                                       input ? CL_MAP_WRITE_INVALIDATE_REGION : CL_MAP_READ, 0, binding->bytes,
                                       wait_count, wait, &mapped, &error);
    if (error != CL_SUCCESS)
      return HGR_CL_STATUS(error, "clEnqueueMapBuffer(storage %u, the caller's memory) on %s",
                           hgr__graph_storage_id(executor->graph, storage_slot), spec);
    hgr_status_t status = hgr__order_enqueued(&executor->order, queue, mapped);
    clReleaseEvent(mapped);
    HGR_RETURN_IF_ERROR(status);
    error = clEnqueueUnmapMemObject(command_queue, binding->mem, pointer, 0, NULL, &event);
    if (error != CL_SUCCESS)
      return HGR_CL_STATUS(error, "clEnqueueUnmapMemObject(storage %u, the caller's memory) on %s",
                           hgr__graph_storage_id(executor->graph, storage_slot), spec);
  }
  hgr_status_t status = hgr__order_enqueued(&executor->order, queue, event);
  if (!status) hgr__order_record(&executor->order, storage_slot, input, event, queue);
  clReleaseEvent(event);
  HGR_RETURN_IF_ERROR(status);
  hgr_io_traffic_t* traffic = hgr__traffic(executor, input ? HGR_INPUT : HGR_OUTPUT, index);
  if (binding->kind == HGR__BIND_HOST_COPY) {
    traffic->host_copies++;
    traffic->host_bytes += binding->bytes;
  } else {
    traffic->host_maps++;
  }
  return HGR_OK;
}

hgr_status_t hgr__host_io_check_inputs_set(const hgr_executor_t* executor) {
  const hgr_graph_t* graph = executor->graph;
  for (uint32_t i = 0; i < graph->arg_count; ++i)
    if (!executor->io.input_set[i] &&
        executor->device_keys.entry_rank[input_entry(executor, i)] == executor->device_keys.rank)
      return HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION,
                        "input %u '%s' was never set (give it with set_input or in the params)", i,
                        graph->nodes[graph->arg_nodes[i]].name);
  return HGR_OK;
}

/* The binding record, tensor and storage of input or output index. */
static hgr_status_t io_lookup(hgr_executor_t* executor, hgr_io_t io, size_t index, hgr_tensor_info_t* out_info,
                              hgr__io_binding_t** out_binding) {
  if (!executor) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "executor is NULL");
  if (io != HGR_INPUT && io != HGR_OUTPUT) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "io is %d", (int)io);
  HGR_RETURN_IF_ERROR(hgr__check_buffers(executor));
  const hgr_graph_t* graph = executor->graph;
  if (io == HGR_INPUT) {
    HGR_RETURN_IF_ERROR(hgr_executor_input_info(executor, index, out_info));
    HGR_RETURN_IF_ERROR(hgr__check_here(executor, input_entry(executor, index), "input", index, out_info->name));
    *out_binding = &executor->io.input_bindings[index];
    (*out_binding)->storage = graph->entries[graph->node_row_ptr[graph->arg_nodes[index]]].storage_slot;
  } else {
    HGR_RETURN_IF_ERROR(hgr_executor_output_info(executor, index, out_info));
    HGR_RETURN_IF_ERROR(hgr__check_here(executor, output_entry(executor, index), "output", index, out_info->name));
    *out_binding = &executor->io.output_bindings[index];
    (*out_binding)->storage = hgr__output_storage(executor, index);
  }
  return HGR_OK;
}

/* The buffer another binding than `except` put in place of storage_slot's, or NULL. */
static const hgr__io_binding_t* storage_binder(const hgr_executor_t* executor, uint32_t storage_slot,
                                               const hgr__io_binding_t* except) {
  const hgr_graph_t* graph = executor->graph;
  for (uint32_t i = 0; i < graph->arg_count + graph->head_count; ++i) {
    const hgr__io_binding_t* binding =
        i < graph->arg_count ? &executor->io.input_bindings[i] : &executor->io.output_bindings[i - graph->arg_count];
    if (binding != except && binding->mem && binding->storage == storage_slot) return binding;
  }
  return NULL;
}

/* Points storage_slot's kernels at mem (its own buffer or a bound one). */
static hgr_status_t use_buffer(hgr_executor_t* executor, uint32_t storage_slot, cl_mem mem) {
  return hgr__storage_use(&executor->pool, executor->graph, storage_slot, mem);
}

/* Ends a binding: the storage goes back to its own buffer unless another binding
 * shares the bound one. */
static hgr_status_t drop_binding(hgr_executor_t* executor, hgr__io_binding_t* binding) {
  hgr_status_t status = HGR_OK;
  if (binding->mem) {
    const hgr__io_binding_t* other = storage_binder(executor, binding->storage, binding);
    status =
        use_buffer(executor, binding->storage, other ? other->mem : executor->pool.storages[binding->storage].own_mem);
    clReleaseMemObject(binding->mem); /* commands in flight keep it alive */
  }
  /* A device buffer's: commands in flight keep what they use; a queue released with
   * commands on it finishes them first. */
  if (binding->ready) clReleaseEvent(binding->ready);
  if (binding->source) clReleaseMemObject(binding->source);
  if (binding->source_queue) clReleaseCommandQueue(binding->source_queue);
  uint32_t storage_slot = binding->storage;
  memset(binding, 0, sizeof(*binding));
  binding->storage = storage_slot;
  return status;
}

/* Ends binding once the fences holding an output in its storage have their own
 * copy. Where the storage is the caller's memory, those copies complete first: the
 * caller may free it as soon as the binding ends (an unbound input of hgr_model_run,
 * freed after the run, was read by a copy still queued). */
static hgr_status_t end_binding(hgr_executor_t* executor, hgr__io_binding_t* binding) {
  uint32_t queue = hgr__transfer_queue_of(executor, binding->storage);
  uint64_t before = executor->order.queues.queues[queue].seq;
  HGR_RETURN_IF_ERROR(hgr__fences_release_holders(executor, binding->storage));
  hgr__queue_t* q = &executor->order.queues.queues[queue];
  if (binding->kind == HGR__BIND_HOST_ZERO_COPY && q->seq != before) {
    HGR_RETURN_IF_ERROR(hgr__queue_flush(&executor->order.queues, queue));
    HGR_RETURN_IF_ERROR(hgr__await_events(executor, &q->last, 1, hgr__order_end(&executor->order)));
  }
  return drop_binding(executor, binding);
}

/* Whether a buffer over data would be the device's own memory (zero-copy). */
static bool device_shares_host_memory(const hgr__device_t* device, const void* data) {
  uint32_t align_bits = device->info.base_address_align_bits;
  uintptr_t align = align_bits >= 8 ? align_bits / 8 : 1;
  return device->info.unified_memory && hgr__device_maps_async(device) && (uintptr_t)data % align == 0;
}

/* Whether storage_slot holds a graph input or a param: its value comes from
 * set_input, the params or an input binding, and no run writes it. */
static bool storage_holds_input(const hgr_executor_t* executor, uint32_t storage_slot) {
  const hgr_graph_t* graph = executor->graph;
  for (uint32_t i = 0; i < graph->arg_count; ++i)
    if (graph->entries[input_entry(executor, i)].storage_slot == storage_slot) return true;
  return false;
}

/* Binds output index, whose storage holds an input or a param (a constant of an
 * ONNX model, an input that is also an output), without touching the storage: the
 * caller's memory or buffer cannot become it, since nothing a run does would put the
 * value there (it lives in the buffer set_input or the params wrote, and params may
 * be shared with other executors). Each run copies the value out instead. */
static hgr_status_t bind_copied_output(hgr_executor_t* executor, size_t index, const hgr_tensor_info_t* info,
                                       hgr__io_binding_t* binding, void* data, size_t bytes, cl_mem buffer) {
  uint32_t storage_slot = binding->storage;
  hgr__io_binding_t next = {.kind = HGR__BIND_HOST_COPY, .host = data, .bytes = info->bytes, .storage = storage_slot};
  if (buffer) {
    const hgr__storage_t* storage = &executor->pool.storages[storage_slot];
    cl_context context = executor->order.queues.queues[hgr__transfer_queue_of(executor, storage_slot)].context;
    cl_context buffer_context = NULL;
    size_t buffer_bytes = 0;
    cl_int error = clGetMemObjectInfo(buffer, CL_MEM_CONTEXT, sizeof(buffer_context), &buffer_context, NULL);
    if (error == CL_SUCCESS) error = clGetMemObjectInfo(buffer, CL_MEM_SIZE, sizeof(buffer_bytes), &buffer_bytes, NULL);
    if (error != CL_SUCCESS)
      return HGR_CL_STATUS(error, "clGetMemObjectInfo(the buffer given for output %zu '%s')", index, info->name);
    if (buffer_context != context)
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT,
                        "output %zu '%s': the buffer belongs to another context than %s's, where storage %u lives",
                        index, info->name, executor->instance->devices[storage->device_index].info.spec,
                        hgr__graph_storage_id(executor->graph, storage_slot));
    if (buffer_bytes < info->bytes)
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "output %zu '%s': the buffer has %zu bytes, but the output has %llu",
                        index, info->name, buffer_bytes, (unsigned long long)info->bytes);
    clRetainMemObject(buffer);
    next.kind = HGR__BIND_DEVICE_COPY;
    next.host = NULL;
    next.source = buffer;
  } else {
    if (bytes != info->bytes)
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "output %zu '%s' has %llu bytes, %zu were given", index,
                        info->name, (unsigned long long)info->bytes, bytes);
    if (!data && bytes)
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "output %zu '%s': data is NULL", index, info->name);
  }
  hgr_status_t status = drop_binding(executor, binding);
  if (status) {
    hgr_status_free(drop_binding(executor, &next)); /* it has no mem: nothing to fail */
    return status;
  }
  *binding = next;
  return HGR_OK;
}

/* Binds host memory (data) or a caller buffer (buffer, when data is NULL). */
static hgr_status_t bind(hgr_executor_t* executor, hgr_io_t io, size_t index, void* data, size_t bytes,
                         cl_mem buffer) {
  hgr_tensor_info_t info;
  hgr__io_binding_t* binding = NULL;
  HGR_RETURN_IF_ERROR(io_lookup(executor, io, index, &info, &binding));
  const char* what = io == HGR_INPUT ? "input" : "output";
  uint32_t storage_slot = binding->storage;
  if (io == HGR_OUTPUT && storage_holds_input(executor, storage_slot))
    return bind_copied_output(executor, index, &info, binding, data, bytes, buffer);
  hgr__storage_t* storage = &executor->pool.storages[storage_slot];
  const hgr__device_t* device = &executor->instance->devices[storage->device_index];
  cl_context context = executor->order.queues.queues[hgr__transfer_queue_of(executor, storage_slot)].context;
  if (storage->shared)
    return HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION,
                      "%s %zu '%s' (storage %u) is a parameter buffer shared between executors "
                      "(share_params_from): it cannot be bound",
                      what, index, info.name, hgr__graph_storage_id(executor->graph, storage_slot));
  const hgr__io_binding_t* other = storage_binder(executor, storage_slot, binding);
  hgr__io_binding_t next = {.kind = HGR__BIND_HOST_COPY, .host = data, .bytes = info.bytes, .storage = storage_slot};
  if (buffer) {
    cl_context buffer_context = NULL;
    size_t buffer_bytes = 0;
    cl_int error = clGetMemObjectInfo(buffer, CL_MEM_CONTEXT, sizeof(buffer_context), &buffer_context, NULL);
    if (error == CL_SUCCESS) error = clGetMemObjectInfo(buffer, CL_MEM_SIZE, sizeof(buffer_bytes), &buffer_bytes, NULL);
    if (error != CL_SUCCESS)
      return HGR_CL_STATUS(error, "clGetMemObjectInfo(the buffer given for %s %zu '%s')", what, index, info.name);
    if (buffer_context != context)
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT,
                        "%s %zu '%s': the buffer belongs to another context than %s's, where storage %u lives", what,
                        index, info.name, device->info.spec, hgr__graph_storage_id(executor->graph, storage_slot));
    if (buffer_bytes < storage->bytes)
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s %zu '%s': the buffer has %zu bytes, but storage %u needs %llu",
                        what, index, info.name, buffer_bytes, hgr__graph_storage_id(executor->graph, storage_slot),
                        (unsigned long long)storage->bytes);
    if (other && other->mem != buffer)
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT,
                        "%s %zu '%s': storage %u is bound to another buffer already (an input and an output sharing "
                        "a storage take one buffer)",
                        what, index, info.name, hgr__graph_storage_id(executor->graph, storage_slot));
    clRetainMemObject(buffer);
    next.kind = HGR__BIND_BUFFER;
    next.host = NULL;
    next.mem = buffer;
  } else {
    if (bytes != info.bytes)
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s %zu '%s' has %llu bytes, %zu were given", what, index,
                        info.name, (unsigned long long)info.bytes, bytes);
    if (!data && bytes)
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s %zu '%s': data is NULL", what, index, info.name);
    if (other && other->kind == HGR__BIND_HOST_ZERO_COPY && other->host == data) {
      clRetainMemObject(other->mem); /* the same memory: the same buffer */
      next.kind = HGR__BIND_HOST_ZERO_COPY;
      next.mem = other->mem;
    } else if (!other && bytes >= HGR_ZERO_COPY_MIN_BYTES && bytes == storage->bytes &&
               device_shares_host_memory(device, data)) {
      cl_int error = CL_SUCCESS;
      next.mem = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes, data, &error);
      if (error == CL_SUCCESS && next.mem) next.kind = HGR__BIND_HOST_ZERO_COPY;
      else next.mem = NULL; /* the driver would not: copy */
    }
  }
  /* Fences of earlier runs keep their values, copied out of the old buffer. */
  hgr_status_t status = end_binding(executor, binding);
  if (!status && next.mem) status = use_buffer(executor, storage_slot, next.mem);
  if (status) {
    if (next.mem) clReleaseMemObject(next.mem);
    return status;
  }
  *binding = next;
  storage->params = false; /* not a param any more: never shared */
  if (io == HGR_INPUT) executor->io.input_set[index] = true;
  return HGR_OK;
}

hgr_status_t hgr_executor_bind_host(hgr_executor_t* executor, hgr_io_t io, size_t index, void* data, size_t bytes) {
  if (!data && bytes) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "data is NULL");
  static char empty;
  return bind(executor, io, index, data ? data : &empty, bytes, NULL);
}

hgr_status_t hgr_executor_bind_buffer(hgr_executor_t* executor, hgr_io_t io, size_t index, cl_mem buffer) {
  if (!buffer) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "buffer is NULL (hgr_executor_unbind ends a binding)");
  return bind(executor, io, index, NULL, 0, buffer);
}

hgr_status_t hgr_executor_bind_device_buffer(hgr_executor_t* executor, size_t index,
                                             const hgr_device_buffer_t* buffer) {
  if (!buffer) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "buffer is NULL (hgr_executor_unbind ends a binding)");
  hgr_tensor_info_t info;
  hgr__io_binding_t* binding = NULL;
  HGR_RETURN_IF_ERROR(io_lookup(executor, HGR_INPUT, index, &info, &binding));
  if (!buffer->mem)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "input %zu '%s': the device buffer's mem is NULL", index, info.name);
  if (buffer->bytes != info.bytes)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "input %zu '%s' has %llu bytes, but the device buffer holds %zu",
                      index, info.name, (unsigned long long)info.bytes, buffer->bytes);
  cl_context mem_context = NULL, ready_context = NULL;
  size_t mem_bytes = 0;
  cl_int error = clGetMemObjectInfo(buffer->mem, CL_MEM_CONTEXT, sizeof(mem_context), &mem_context, NULL);
  if (error == CL_SUCCESS) error = clGetMemObjectInfo(buffer->mem, CL_MEM_SIZE, sizeof(mem_bytes), &mem_bytes, NULL);
  if (error != CL_SUCCESS)
    return HGR_CL_STATUS(error, "clGetMemObjectInfo(the device buffer given for input %zu '%s')", index, info.name);
  if (buffer->ready &&
      (error = clGetEventInfo(buffer->ready, CL_EVENT_CONTEXT, sizeof(ready_context), &ready_context, NULL)) !=
          CL_SUCCESS)
    return HGR_CL_STATUS(error, "clGetEventInfo(the ready event given for input %zu '%s')", index, info.name);
  if (mem_bytes < info.bytes)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "input %zu '%s' has %llu bytes, but the device buffer's mem has %zu",
                      index, info.name, (unsigned long long)info.bytes, mem_bytes);
  if (buffer->ready && ready_context != mem_context)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT,
                      "input %zu '%s': the device buffer's ready event belongs to another context than its mem", index,
                      info.name);
  uint32_t storage_slot = binding->storage;
  hgr__storage_t* storage = &executor->pool.storages[storage_slot];
  if (storage->shared)
    return HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION,
                      "input %zu '%s' (storage %u) is a parameter buffer shared between executors "
                      "(share_params_from): it cannot be bound",
                      index, info.name, hgr__graph_storage_id(executor->graph, storage_slot));
  cl_context context = executor->order.queues.queues[hgr__transfer_queue_of(executor, storage_slot)].context;
  if (mem_context == context && mem_bytes >= storage->bytes) {
    /* The buffer is the storage, as hgr_executor_bind_buffer makes it. */
    HGR_RETURN_IF_ERROR(bind(executor, HGR_INPUT, index, NULL, 0, buffer->mem));
    binding->device = true;
    binding->bytes = info.bytes;
    if (buffer->ready) clRetainEvent(buffer->ready);
    binding->ready = buffer->ready;
    return HGR_OK;
  }
  /* Copied into the storage's own buffer each run. */
  if (storage_binder(executor, storage_slot, binding))
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT,
                      "input %zu '%s': storage %u is bound to a buffer already (an output sharing it), so a device "
                      "buffer %s cannot be copied into it",
                      index, info.name, hgr__graph_storage_id(executor->graph, storage_slot),
                      mem_context == context ? "smaller than the storage" : "of another context");
  hgr__io_binding_t next = {.kind = HGR__BIND_DEVICE_COPY, .bytes = info.bytes, .storage = storage_slot, .device = true};
  if (mem_context != context) {
    cl_context device_context = NULL;
    hgr_status_t found = buffer->device_index < executor->instance->device_count
                             ? hgr__instance_context(executor->instance, buffer->device_index, &device_context)
                             : HGR_OK;
    hgr_status_free(found);
    if (!device_context || device_context != mem_context)
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT,
                        "input %zu '%s': the device buffer belongs to another context than %s's, where storage %u "
                        "lives, and its device_index %zu is not the instance device of its context, which a copy "
                        "between contexts reads it on",
                        index, info.name, hgr__device_spec(executor->instance, storage->device_index),
                        hgr__graph_storage_id(executor->graph, storage_slot), buffer->device_index);
    next.kind = HGR__BIND_STAGED_COPY;
    next.source_host_driven = executor->instance->devices[buffer->device_index].host_driven;
    HGR_RETURN_IF_ERROR(hgr__instance_create_queue(executor->instance, buffer->device_index, false, &next.source_queue));
  }
  clRetainMemObject(buffer->mem);
  next.source = buffer->mem;
  if (buffer->ready) clRetainEvent(buffer->ready);
  next.ready = buffer->ready;
  hgr_status_t status = end_binding(executor, binding);
  if (status) {
    hgr_status_free(drop_binding(executor, &next)); /* it has no mem: nothing to fail */
    return status;
  }
  *binding = next;
  storage->params = false;
  executor->io.input_set[index] = true;
  return HGR_OK;
}

hgr_status_t hgr_executor_unbind(hgr_executor_t* executor, hgr_io_t io, size_t index) {
  hgr_tensor_info_t info;
  hgr__io_binding_t* binding = NULL;
  HGR_RETURN_IF_ERROR(io_lookup(executor, io, index, &info, &binding));
  if (binding->kind == HGR__BIND_NONE) return HGR_OK;
  HGR_RETURN_IF_ERROR(end_binding(executor, binding));
  /* The executor's own buffer may never have seen what the binding held. */
  if (io == HGR_INPUT) executor->io.input_set[index] = false;
  return HGR_OK;
}

hgr_binding_kind_t hgr_executor_binding_kind(const hgr_executor_t* executor, hgr_io_t io, size_t index) {
  if (!executor || !executor->io.input_bindings) return HGR_BINDING_NONE;
  const hgr_graph_t* graph = executor->graph;
  const hgr__io_binding_t* binding = NULL;
  if (io == HGR_INPUT && index < graph->arg_count) binding = &executor->io.input_bindings[index];
  if (io == HGR_OUTPUT && index < graph->head_count) binding = &executor->io.output_bindings[index];
  if (!binding) return HGR_BINDING_NONE;
  switch (binding->kind) {
    case HGR__BIND_NONE: return HGR_BINDING_NONE;
    case HGR__BIND_BUFFER: return HGR_BINDING_BUFFER;
    case HGR__BIND_HOST_ZERO_COPY: return HGR_BINDING_HOST_ZERO_COPY;
    case HGR__BIND_HOST_COPY: return HGR_BINDING_HOST_COPY;
    case HGR__BIND_DEVICE_COPY: return HGR_BINDING_DEVICE_COPY;
    case HGR__BIND_STAGED_COPY: return HGR_BINDING_STAGED_COPY;
  }
  return HGR_BINDING_NONE;
}

hgr_status_t hgr_executor_output_buffer(hgr_executor_t* executor, size_t index, hgr_device_buffer_t* out_buffer) {
  memset(out_buffer, 0, sizeof(*out_buffer));
  hgr_tensor_info_t info;
  hgr__io_binding_t* binding = NULL;
  HGR_RETURN_IF_ERROR(io_lookup(executor, HGR_OUTPUT, index, &info, &binding));
  uint32_t storage_slot = binding->storage;
  HGR_RETURN_IF_ERROR(hgr__export_buffer(executor, storage_slot, executor->pool.storages[storage_slot].mem, true,
                                         info.bytes, out_buffer));
  hgr__traffic(executor, HGR_OUTPUT, index)->device_buffers++;
  return HGR_OK;
}

void hgr_device_buffer_release(hgr_device_buffer_t* buffer) {
  if (!buffer) return;
  if (buffer->mem) clReleaseMemObject(buffer->mem);
  if (buffer->ready) clReleaseEvent(buffer->ready);
  memset(buffer, 0, sizeof(*buffer));
}

hgr_status_t hgr_executor_read_entry(hgr_executor_t* executor, uint32_t node_id, uint32_t index, void* data,
                                     size_t bytes) {
  if (!executor) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "executor is NULL");
  const hgr_graph_t* graph = executor->graph;
  if (node_id >= graph->node_count || index >= graph->nodes[node_id].num_outputs)
    return HGR_STATUS(HGR_STATUS_OUT_OF_RANGE, "output %u of node %u", index, node_id);
  HGR_RETURN_IF_ERROR(hgr__check_buffers(executor));
  HGR_RETURN_IF_ERROR(hgr__check_here(executor, graph->node_row_ptr[node_id] + index, "entry of node", node_id,
                                      graph->nodes[node_id].name));
  const hgr__entry_t* entry = &graph->entries[graph->node_row_ptr[node_id] + index];
  if (bytes != entry->bytes)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "output %u of node %u '%s' has %llu bytes, %zu were given", index,
                      node_id, graph->nodes[node_id].name, (unsigned long long)entry->bytes, bytes);
  if (!bytes) return HGR_OK;
  if (!data) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "data is NULL");
  if (executor->staging.entry_bytes < bytes) {
    void* grown = hgr__alloc(executor->allocator, (bytes + 63) / 64 * 64);
    if (!grown) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory (%zu bytes)", bytes);
    hgr__free(executor->allocator, executor->staging.entry); /* no read is pending on it: the last one completed */
    executor->staging.entry = grown;
    executor->staging.entry_bytes = bytes;
  }
  char what[256];
  snprintf(what, sizeof(what), "output %u of node %u '%s'", index, node_id, graph->nodes[node_id].name);
  return hgr__read_into(executor, entry->storage_slot, executor->pool.storages[entry->storage_slot].mem, true,
                   executor->staging.entry, data, bytes, what);
}

static bool same_shape_info(const hgr_tensor_info_t* a, const hgr_tensor_info_t* b) {
  if (a->ndim != b->ndim) return false;
  for (int32_t d = 0; d < a->ndim; ++d)
    if (a->shape[d] != b->shape[d]) return false;
  return true;
}

hgr_status_t hgr_executor_load_params(hgr_executor_t* executor, const hgr_params_t* params, size_t* out_unused_count) {
  return hgr__host_io_load_params(executor, params, false, out_unused_count);
}

hgr_status_t hgr__host_io_load_params(hgr_executor_t* executor, const hgr_params_t* params, bool skip_shared,
                                       size_t* out_unused_count) {
  if (out_unused_count) *out_unused_count = 0;
  for (size_t i = 0; i < executor->io.unused_param_count; ++i)
    hgr__free(executor->allocator, executor->io.unused_params[i]);
  hgr__free(executor->allocator, executor->io.unused_params);
  executor->io.unused_params = NULL;
  executor->io.unused_param_count = 0;
  size_t count = hgr_params_count(params);
  executor->io.unused_params = hgr__calloc(executor->allocator, count + 1, sizeof(char*));
  if (!executor->io.unused_params) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  for (size_t p = 0; p < count; ++p) {
    hgr_tensor_info_t param, input;
    const void* data = NULL;
    size_t index;
    HGR_RETURN_IF_ERROR(hgr_params_get(params, p, &param, &data));
    hgr_status_t status = hgr_executor_input_index(executor, param.name, &index);
    if (status) {
      hgr_status_free(status);
      HGR_RETURN_IF_ERROR(
          hgr__strdup(executor->allocator, param.name, &executor->io.unused_params[executor->io.unused_param_count]));
      executor->io.unused_param_count++;
      continue;
    }
    HGR_RETURN_IF_ERROR(hgr_executor_input_info(executor, index, &input));
    char want[24], have[24];
    if (!hgr_dtype_equal(param.dtype, input.dtype) || param.bytes != input.bytes || !same_shape_info(&param, &input))
      return HGR_STATUS(
          HGR_STATUS_INVALID_ARGUMENT, "param '%s' is %s with %llu bytes, but input %zu '%s' is %s with %llu bytes%s",
          param.name, hgr_dtype_format(param.dtype, have, sizeof(have)), (unsigned long long)param.bytes, index,
          input.name, hgr_dtype_format(input.dtype, want, sizeof(want)), (unsigned long long)input.bytes,
          param.bytes == input.bytes && hgr_dtype_equal(param.dtype, input.dtype) ? " (shapes differ)" : "");
    const hgr_graph_t* graph = executor->graph;
    uint32_t storage_slot = graph->entries[graph->node_row_ptr[graph->arg_nodes[index]]].storage_slot;
    if (skip_shared && executor->pool.storages[storage_slot].shared) continue;
    /* Another rank's input: that rank loads it from the same params. */
    if (executor->device_keys.entry_rank[input_entry(executor, index)] != executor->device_keys.rank) continue;
    HGR_RETURN_IF_ERROR(hgr_status_annotate(hgr_executor_set_input(executor, index, data, (size_t)param.bytes),
                                            "param '%s'", param.name));
    executor->pool.storages[storage_slot].params = true; /* another executor may share it */
  }
  if (out_unused_count) *out_unused_count = executor->io.unused_param_count;
  return HGR_OK;
}

const char* hgr_executor_unused_param(const hgr_executor_t* executor, size_t i) {
  return i < executor->io.unused_param_count ? executor->io.unused_params[i] : NULL;
}

hgr_status_t hgr__host_io_sync_bindings(hgr_executor_t* executor, bool inputs) {
  const hgr_graph_t* graph = executor->graph;
  uint32_t count = inputs ? graph->arg_count : graph->head_count;
  hgr__io_binding_t* bindings = inputs ? executor->io.input_bindings : executor->io.output_bindings;
  for (uint32_t i = 0; i < count; ++i) HGR_RETURN_IF_ERROR(sync_binding(executor, &bindings[i], inputs, i));
  return HGR_OK;
}

void hgr__host_io_mark_shared_inputs(hgr_executor_t* executor) {
  const hgr_graph_t* graph = executor->graph;
  for (uint32_t i = 0; i < graph->arg_count; ++i) {
    uint32_t storage_slot = graph->entries[graph->node_row_ptr[graph->arg_nodes[i]]].storage_slot;
    if (executor->pool.storages[storage_slot].borrowed) executor->io.input_set[i] = true;
  }
}

hgr_status_t hgr__host_io_create(hgr_executor_t* executor) {
  const hgr_graph_t* graph = executor->graph;
  executor->io.input_set = hgr__calloc(executor->allocator, graph->arg_count + 1, sizeof(bool));
  executor->io.input_bindings = hgr__calloc(executor->allocator, graph->arg_count + 1, sizeof(hgr__io_binding_t));
  executor->io.output_bindings = hgr__calloc(executor->allocator, graph->head_count + 1, sizeof(hgr__io_binding_t));
  if (!executor->io.input_set || !executor->io.input_bindings || !executor->io.output_bindings)
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  return HGR_OK;
}

void hgr__host_io_release(hgr_executor_t* executor) {
  const hgr_graph_t* graph = executor->graph;
  for (uint32_t o = 0; executor->io.output_bindings && o < graph->head_count; ++o)
    hgr_status_free(drop_binding(executor, &executor->io.output_bindings[o]));
  for (uint32_t i = 0; executor->io.input_bindings && i < graph->arg_count; ++i)
    hgr_status_free(drop_binding(executor, &executor->io.input_bindings[i]));
  hgr__free(executor->allocator, executor->io.input_bindings);
  hgr__free(executor->allocator, executor->io.output_bindings);
  for (size_t i = 0; i < executor->io.unused_param_count; ++i)
    hgr__free(executor->allocator, executor->io.unused_params[i]);
  hgr__free(executor->allocator, executor->io.unused_params);
  hgr__free(executor->allocator, executor->io.input_set);
  memset(&executor->io, 0, sizeof(executor->io));
}
