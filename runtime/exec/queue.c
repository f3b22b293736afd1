/* The executor's command queues (queue.h). */
#include <stdlib.h>

#include "alloc.h"
#include "queue.h"

hgr_status_t hgr__queue_set_add(hgr__queue_set_t* set, hgr_instance_t* instance, size_t device_index,
                                bool profiling, bool create, uint32_t* out_queue) {
  if (set->count == set->capacity) {
    uint32_t capacity = set->capacity ? 2 * set->capacity : 8;
    hgr__queue_t* grown = hgr__realloc(set->allocator, set->queues, capacity * sizeof(*grown));
    if (!grown) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    set->queues = grown;
    set->capacity = capacity;
  }
  const hgr__device_t* device = &instance->devices[device_index];
  hgr__queue_t queue = {0};
  queue.device_index = device_index;
  queue.spec = device->info.spec;
  queue.host_driven = device->host_driven;
  queue.fragile_failed_user_events = device->fragile_failed_user_events;
  if (create) {
    HGR_RETURN_IF_ERROR(hgr__instance_context(instance, device_index, &queue.context));
    HGR_RETURN_IF_ERROR(hgr__instance_create_queue(instance, device_index, profiling, &queue.queue));
  }
  *out_queue = set->count;
  set->queues[set->count++] = queue;
  return HGR_OK;
}

void hgr__queue_set_release(hgr__queue_set_t* set) {
  for (uint32_t q = 0; q < set->count; ++q)
    if (set->queues[q].queue) clReleaseCommandQueue(set->queues[q].queue);
  hgr__free(set->allocator, set->queues);
  *set = (hgr__queue_set_t){.allocator = set->allocator};
}

bool hgr__queue_set_host_driven(const hgr__queue_set_t* set) {
  for (uint32_t q = 0; q < set->count; ++q)
    if (set->queues[q].host_driven) return true;
  return false;
}

hgr_status_t hgr__queue_flush(hgr__queue_set_t* set, uint32_t queue) {
  hgr__queue_t* q = &set->queues[queue];
  if (!q->unflushed || q->host_driven) return HGR_OK;
  cl_int error = clFlush(q->queue);
  if (error != CL_SUCCESS) return HGR_CL_STATUS(error, "clFlush on %s", q->spec);
  q->unflushed = 0;
  return HGR_OK;
}

cl_int hgr__event_status(cl_event event) {
  cl_int execution = CL_COMPLETE;
  if (clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(execution), &execution, NULL) != CL_SUCCESS)
    return CL_QUEUED;
  return execution;
}

int hgr__events_complete(const cl_event* events, uint32_t count) {
  int result = 1;
  for (uint32_t e = 0; e < count; ++e) {
    cl_int execution = hgr__event_status(events[e]);
    if (execution < 0) return -1;
    if (execution != CL_COMPLETE) result = 0;
  }
  return result;
}
