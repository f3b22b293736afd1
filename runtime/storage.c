/* The storage pool: storage id -> owning device, size (the largest entry using it)
 * and one cl_mem, allocated once per executor. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "executor_internal.h"

hgr_status_t hgr__storage_plan(hgr_executor_t* executor) {
  const hgr_graph_t* graph = executor->graph;
  for (uint32_t e = 0; e < graph->entry_count; ++e) {
    const hgr__entry_t* entry = &graph->entries[e];
    hgr__storage_t* storage = &executor->storages[entry->storage_id];
    size_t device = executor->entry_device[e];
    if (storage->used && storage->device_index != device) {
      /* The graph checks one key per storage; two keys bound to one device are fine,
       * so this only fires if that invariant broke. */
      const hgr_device_info_t* a = hgr_instance_device(executor->instance, storage->device_index);
      const hgr_device_info_t* b = hgr_instance_device(executor->instance, device);
      return HGR_STATUS(HGR_STATUS_INTERNAL, "storage %u is on %s and, through entry %u, on %s",
                        entry->storage_id, a->spec, e, b->spec);
    }
    storage->used = true;
    storage->device_index = device;
    if (entry->bytes > storage->bytes) storage->bytes = entry->bytes;
  }
  for (uint32_t s = 0; s < graph->storage_count; ++s) {
    hgr__storage_t* storage = &executor->storages[s];
    if (!storage->used) continue;
    const hgr_device_info_t* device = hgr_instance_device(executor->instance, storage->device_index);
    char size[32];
    snprintf(size, sizeof(size), "%llu bytes", (unsigned long long)storage->bytes);
    if (storage->bytes > device->max_alloc_bytes)
      return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED,
                        "storage %u needs %s, more than the largest allocation %s allows "
                        "(%llu bytes)",
                        s, size, device->spec, (unsigned long long)device->max_alloc_bytes);
    hgr_device_usage_t* usage = &hgr__exec_device(executor, storage->device_index)->usage;
    usage->storage_count++;
    usage->storage_bytes += storage->bytes;
    if (usage->storage_bytes > device->global_mem_bytes)
      return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED,
                        "storage %u (%s) brings %s past its global memory: %llu of %llu bytes", s,
                        size, device->spec, (unsigned long long)usage->storage_bytes,
                        (unsigned long long)device->global_mem_bytes);
  }
  return HGR_OK;
}

hgr_status_t hgr__storage_allocate(hgr_executor_t* executor) {
  for (uint32_t s = 0; s < executor->graph->storage_count; ++s) {
    hgr__storage_t* storage = &executor->storages[s];
    if (!storage->used) continue;
    cl_context context;
    HGR_RETURN_IF_ERROR(hgr__instance_context(executor->instance, storage->device_index, &context));
    /* OpenCL refuses empty buffers; TVM rounds pools up to 4 bytes as well. */
    size_t bytes = (size_t)((storage->bytes + 3) / 4 * 4);
    if (bytes == 0) bytes = 4;
    cl_int error = CL_SUCCESS;
    storage->own_mem = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, NULL, &error);
    storage->mem = storage->own_mem;
    if (error != CL_SUCCESS || !storage->mem) {
      storage->mem = storage->own_mem = NULL;
      return HGR_CL_STATUS(error, "clCreateBuffer(storage %u, %zu bytes) on %s", s, bytes,
                           hgr_instance_device(executor->instance, storage->device_index)->spec);
    }
  }
  return HGR_OK;
}

void hgr__storage_release(hgr_executor_t* executor) {
  if (!executor->storages) return;
  for (uint32_t s = 0; s < executor->graph->storage_count; ++s) {
    hgr__storage_t* storage = &executor->storages[s];
    free(storage->readers); /* their events are borrowed (executor->commands) */
    if (storage->own_mem) clReleaseMemObject(storage->own_mem); /* bindings release theirs */
  }
  free(executor->storages);
  executor->storages = NULL;
}
