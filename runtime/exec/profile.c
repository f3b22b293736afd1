/* Profiling and inspection, read-only: every command of the recorded run with its
 * node and queue (recorded by order.c), per-node enqueue windows, device times, the
 * device-to-host clock offset that puts device timestamps on one timeline, and what
 * the executor is made of (key bindings, devices and their memory, queues, copies). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "executor_internal.h"

static bool profiled(const hgr_executor_t* executor) {
  return executor->profile.enabled && !executor->run_in_flight && executor->profile.complete;
}

static hgr_status_t check_profiled(const hgr_executor_t* executor) {
  if (!profiled(executor))
    return HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION,
                      "profiles need an executor created with profiling and a run that was waited for");
  return HGR_OK;
}

const char* hgr_command_kind_name(hgr_command_kind_t kind) {
  switch (kind) {
    case HGR_COMMAND_KERNEL: return "kernel";
    case HGR_COMMAND_COPY: return "copy";
    case HGR_COMMAND_READ: return "read";
    case HGR_COMMAND_WRITE: return "write";
    case HGR_COMMAND_MAP: return "map";
    case HGR_COMMAND_UNMAP: return "unmap";
    case HGR_COMMAND_MARKER: return "marker";
    case HGR_COMMAND_OTHER: return "other";
  }
  return "other";
}

bool hgr_command_profile_has_duration(const hgr_command_profile_t* profile) {
  if (!profile->start_ns || profile->end_ns < profile->start_ns) return false;
  return profile->kind != HGR_COMMAND_KERNEL || profile->end_ns > profile->start_ns + 1;
}

static hgr_command_kind_t kind_of(cl_command_type type) {
  switch (type) {
    case CL_COMMAND_NDRANGE_KERNEL:
    case CL_COMMAND_TASK: return HGR_COMMAND_KERNEL;
    case CL_COMMAND_COPY_BUFFER: return HGR_COMMAND_COPY;
    case CL_COMMAND_READ_BUFFER: return HGR_COMMAND_READ;
    case CL_COMMAND_WRITE_BUFFER: return HGR_COMMAND_WRITE;
    case CL_COMMAND_MAP_BUFFER: return HGR_COMMAND_MAP;
    case CL_COMMAND_UNMAP_MEM_OBJECT: return HGR_COMMAND_UNMAP;
    case CL_COMMAND_MARKER:
    case CL_COMMAND_BARRIER: return HGR_COMMAND_MARKER;
    default: return HGR_COMMAND_OTHER;
  }
}

size_t hgr_executor_command_count(const hgr_executor_t* executor) {
  return profiled(executor) ? executor->order.profiled_count : 0;
}

hgr_status_t hgr_executor_command_profile(const hgr_executor_t* executor, size_t i, hgr_command_profile_t* out) {
  memset(out, 0, sizeof(*out));
  HGR_RETURN_IF_ERROR(check_profiled(executor));
  if (i >= executor->order.profiled_count)
    return HGR_STATUS(HGR_STATUS_OUT_OF_RANGE, "command %zu of %u", i, executor->order.profiled_count);
  const hgr__profiled_t* record = &executor->order.profiled[i];
  out->node_id = record->node_id;
  out->queue = record->queue;
  out->host_enqueue_ns = record->host_ns;
  cl_command_type type = 0;
  cl_int error = clGetEventInfo(record->event, CL_EVENT_COMMAND_TYPE, sizeof(type), &type, NULL);
  if (error != CL_SUCCESS) return HGR_CL_STATUS(error, "clGetEventInfo(CL_EVENT_COMMAND_TYPE)");
  out->kind = kind_of(type);
  static const cl_profiling_info params[4] = {CL_PROFILING_COMMAND_QUEUED, CL_PROFILING_COMMAND_SUBMIT,
                                              CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END};
  uint64_t* stamps[4] = {&out->queued_ns, &out->submit_ns, &out->start_ns, &out->end_ns};
  for (int k = 0; k < 4; ++k) {
    cl_ulong value = 0;
    /* A driver without timestamps for a command kind leaves them 0. */
    if (clGetEventProfilingInfo(record->event, params[k], sizeof(value), &value, NULL) == CL_SUCCESS)
      *stamps[k] = value;
  }
  return HGR_OK;
}

static const hgr__step_t* step_of(const hgr_executor_t* executor, uint32_t node_id) {
  for (uint32_t s = 0; s < executor->step_count; ++s)
    if (executor->steps[s].node_id == node_id) return &executor->steps[s];
  return NULL;
}

hgr_status_t hgr_executor_node_enqueue_time(const hgr_executor_t* executor, uint32_t node_id,
                                            uint64_t* out_begin_ns, uint64_t* out_end_ns) {
  *out_begin_ns = *out_end_ns = 0;
  HGR_RETURN_IF_ERROR(check_profiled(executor));
  if (node_id >= executor->graph->node_count)
    return HGR_STATUS(HGR_STATUS_OUT_OF_RANGE, "node %u of %u", node_id, executor->graph->node_count);
  const hgr__step_t* step = step_of(executor, node_id);
  if (step && executor->profile.step_host_ns) {
    size_t s = (size_t)(step - executor->steps);
    *out_begin_ns = executor->profile.step_host_ns[2 * s];
    *out_end_ns = executor->profile.step_host_ns[2 * s + 1];
  }
  return HGR_OK;
}

size_t hgr_executor_queue_count(const hgr_executor_t* executor) { return executor->order.queues.count; }

hgr_queue_info_t hgr_executor_queue_info(const hgr_executor_t* executor, size_t i) {
  hgr_queue_info_t info = {0, "compute"};
  if (i >= executor->order.queues.count) return info;
  info.device_index = executor->order.queues.queues[i].device_index;
  const hgr__exec_device_t* device = hgr__device_keys_device(&executor->device_keys, info.device_index);
  if (device && device->compute_queue == i && device->transfer_queue == i) info.role = "compute+transfer";
  else if (device && device->transfer_queue == i) info.role = "transfer";
  return info;
}

hgr_status_t hgr_executor_copy_info(const hgr_executor_t* executor, uint32_t node_id, hgr_copy_info_t* out) {
  memset(out, 0, sizeof(*out));
  const hgr__step_t* step = step_of(executor, node_id);
  if (!step || step->kind != HGR__STEP_COPY)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "node %u is not a __copy node", node_id);
  out->bytes = step->copy_bytes;
  out->pair_class = step->pair_class;
  out->chunks = 1;
  switch (step->path) {
    case HGR__COPY_DIRECT: out->path = "direct"; break;
    case HGR__COPY_STAGED: out->path = "staged"; break;
    case HGR__COPY_MAPPED:
      out->path = "mapped source";
      out->chunks = step->chunk_count;
      break;
    case HGR__COPY_MAPPED_DESTINATION:
      out->path = "mapped destination";
      out->chunks = step->chunk_count;
      break;
    case HGR__COPY_REMOTE:
      out->path = step->remote->sending ? "sent to a rank" : "received from a rank";
      out->chunks = step->remote->chunk_count;
      break;
  }
  return HGR_OK;
}

/* clGetDeviceAndHostTimer and clGetHostTimer are OpenCL 2.1; the headers declare them
 * only for CL_TARGET_OPENCL_VERSION >= 210, the ICD loader exports them. */
#if CL_TARGET_OPENCL_VERSION < 210
extern CL_API_ENTRY cl_int CL_API_CALL clGetDeviceAndHostTimer(cl_device_id device, cl_ulong* device_timestamp,
                                                               cl_ulong* host_timestamp);
extern CL_API_ENTRY cl_int CL_API_CALL clGetHostTimer(cl_device_id device, cl_ulong* host_timestamp);
#endif

/* Device clock and CLOCK_MONOTONIC through the driver's host timer, whose own clock
 * is unspecified: bracket clGetHostTimer between two monotonic readings. */
static bool timer_offset(const hgr__device_t* device, hgr_clock_offset_t* out) {
  if (device->info.opencl_major < 2 || (device->info.opencl_major == 2 && device->info.opencl_minor < 1)) return false;
  cl_ulong device_ts = 0, host_ts = 0, host_ts2 = 0;
  uint64_t before = hgr__monotonic_ns();
  if (clGetHostTimer(device->device, &host_ts2) != CL_SUCCESS) return false;
  uint64_t after = hgr__monotonic_ns();
  if (clGetDeviceAndHostTimer(device->device, &device_ts, &host_ts) != CL_SUCCESS || !device_ts || !host_ts2)
    return false;
  /* host_ts2 (driver host clock) was read at about (before + after) / 2 (monotonic). */
  int64_t host_to_monotonic = (int64_t)((before + after) / 2) - (int64_t)host_ts2;
  out->offset_ns = (int64_t)host_ts + host_to_monotonic - (int64_t)device_ts;
  out->uncertainty_ns = (after - before) / 2;
  out->method = "clGetDeviceAndHostTimer";
  return true;
}

hgr_status_t hgr_executor_clock_offset(hgr_executor_t* executor, size_t device_index, hgr_clock_offset_t* out) {
  memset(out, 0, sizeof(*out));
  if (!executor->profile.enabled || executor->plan_only)
    return HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION, "clock offsets need an executor created with profiling");
  hgr__exec_device_t* used = hgr__device_keys_device(&executor->device_keys, device_index);
  if (!used) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "the executor does not use device %zu", device_index);
  const hgr__device_t* device = &executor->instance->devices[device_index];
  if (timer_offset(device, out)) return HGR_OK;
  /* A marker's end lies between the host readings around its enqueue and completion;
   * the narrowest of a few windows wins. */
  cl_command_queue queue = executor->order.queues.queues[used->compute_queue].queue;
  bool found = false;
  for (int attempt = 0; attempt < 5; ++attempt) {
    cl_event marker = NULL;
    uint64_t before = hgr__monotonic_ns();
    cl_int error = clEnqueueMarkerWithWaitList(queue, 0, NULL, &marker);
    if (error == CL_SUCCESS) error = clWaitForEvents(1, &marker);
    uint64_t after = hgr__monotonic_ns();
    cl_ulong end = 0;
    if (error == CL_SUCCESS)
      error = clGetEventProfilingInfo(marker, CL_PROFILING_COMMAND_END, sizeof(end), &end, NULL);
    if (marker) clReleaseEvent(marker);
    if (error != CL_SUCCESS)
      return HGR_CL_STATUS(error, "a profiled marker on %s", device->info.spec);
    if (!end) continue; /* no timestamps (rusticl) */
    uint64_t half = (after - before) / 2;
    if (!found || half < out->uncertainty_ns) {
      out->offset_ns = (int64_t)(before + half) - (int64_t)end;
      out->uncertainty_ns = half;
      found = true;
    }
  }
  out->method = "marker";
  if (!found)
    return HGR_STATUS(HGR_STATUS_UNAVAILABLE, "%s reports no profiling timestamps", device->info.spec);
  return HGR_OK;
}

/* ---- what the executor is made of ---------------------------------------------- */

size_t hgr_executor_key_count(const hgr_executor_t* executor) { return executor ? executor->device_keys.key_count : 0; }

hgr_key_binding_t hgr_executor_key_binding(const hgr_executor_t* executor, size_t i) {
  if (!executor || i >= executor->device_keys.key_count) return (hgr_key_binding_t){0, SIZE_MAX, false, -1, NULL};
  return executor->device_keys.keys[i];
}

size_t hgr_executor_device_count(const hgr_executor_t* executor) {
  return executor ? executor->device_keys.device_count : 0;
}

hgr_device_usage_t hgr_executor_device_usage(const hgr_executor_t* executor, size_t i) {
  if (!executor || i >= executor->device_keys.device_count) {
    hgr_device_usage_t none = {0};
    none.device_index = SIZE_MAX;
    return none;
  }
  return executor->device_keys.devices[i].usage;
}
hgr_copy_summary_t hgr_executor_copy_summary(const hgr_executor_t* executor) { return executor->copies; }

hgr_status_t hgr_executor_device_time(const hgr_executor_t* executor, size_t i, hgr_device_time_t* out_time) {
  memset(out_time, 0, sizeof(*out_time));
  if (i >= executor->device_keys.device_count)
    return HGR_STATUS(HGR_STATUS_OUT_OF_RANGE, "device %zu of %zu", i, executor->device_keys.device_count);
  if (!executor->profile.enabled || executor->run_in_flight)
    return HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION,
                      "device times need an executor created with profiling and a run that was waited for");
  size_t device = executor->device_keys.devices[i].device_index;
  for (uint32_t s = 0; s < executor->step_count; ++s) {
    const hgr__step_t* step = &executor->steps[s];
    if (step->device_index != device || !step->done) continue;
    for (uint32_t k = 0; k < step->done_count; ++k) {
      if (!step->done[k]) continue;
      cl_ulong start = 0, end = 0;
      cl_int error = clGetEventProfilingInfo(step->done[k], CL_PROFILING_COMMAND_START, sizeof(start), &start, NULL);
      if (error == CL_SUCCESS)
        error = clGetEventProfilingInfo(step->done[k], CL_PROFILING_COMMAND_END, sizeof(end), &end, NULL);
      if (error != CL_SUCCESS) return HGR_CL_STATUS(error, "clGetEventProfilingInfo");
      out_time->commands++;
      if (start && end > start) {
        out_time->timed_commands++;
        out_time->busy_ns += end - start;
      }
    }
  }
  return HGR_OK;
}

hgr_status_t hgr_executor_io_traffic(const hgr_executor_t* executor, hgr_io_t io, size_t index,
                                     hgr_io_traffic_t* out_traffic) {
  if (!out_traffic) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "out_traffic is NULL");
  memset(out_traffic, 0, sizeof(*out_traffic));
  if (!executor) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "executor is NULL");
  if (io != HGR_INPUT && io != HGR_OUTPUT) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "io is %d", (int)io);
  bool input = io == HGR_INPUT;
  size_t count = input ? executor->graph->arg_count : executor->graph->head_count;
  if (index >= count)
    return HGR_STATUS(HGR_STATUS_OUT_OF_RANGE, "%s %zu: the graph has %zu %ss", input ? "input" : "output", index,
                      count, input ? "input" : "output");
  const hgr_io_traffic_t* table = input ? executor->traffic.inputs : executor->traffic.outputs;
  if (table) *out_traffic = table[index];
  return HGR_OK;
}
