/* The storage pool: storage id -> owning device, size (the largest entry using it)
 * and one cl_mem, allocated once per executor, or borrowed from another executor
 * of the same graph for read-only params (share_params_from). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "storage.h"

/* ---- sharing params ------------------------------------------------------------------ */

/* What sharing left out, for one log line. */
typedef struct share_report_t {
  uint32_t shared, not_shared;
  uint64_t shared_bytes;
  char reasons[512]; /* the first few inputs not shared, and why */
  size_t used;
} share_report_t;

static void note_not_shared(share_report_t* report, const char* format, ...) HGR_PRINTF(2, 3);
static void note_not_shared(share_report_t* report, const char* format, ...) {
  if (report->not_shared++ >= 3) return;
  if (report->used >= sizeof(report->reasons)) return;
  report->used += (size_t)snprintf(report->reasons + report->used, sizeof(report->reasons) - report->used, "%s",
                                   report->not_shared > 1 ? "; " : "");
  if (report->used >= sizeof(report->reasons)) return;
  va_list args;
  va_start(args, format);
  report->used +=
      (size_t)vsnprintf(report->reasons + report->used, sizeof(report->reasons) - report->used, format, args);
  va_end(args);
}

/* Marks the storages to borrow from source: those of inputs the source holds from
 * params, that no other entry uses (so no node writes them in either executor,
 * which run the same graph), on the same device of the same instance. */
/* Per storage slot of graph: how many entries use it (from allocator; NULL when out of
 * memory). */
static uint32_t* storage_users(hgr_allocator_t allocator, const hgr_graph_t* graph) {
  uint32_t* users = hgr__calloc(allocator, graph->storage_count + 1, sizeof(uint32_t));
  for (uint32_t e = 0; users && e < graph->entry_count; ++e) users[graph->entries[e].storage_slot]++;
  return users;
}

/* The storage slot of the source's input called name that only that input uses, or
 * UINT32_MAX. */
static uint32_t source_input_slot(const hgr__storage_source_t* source, const uint32_t* source_users,
                                  const char* name) {
  const hgr_graph_t* graph = source->graph;
  for (uint32_t i = 0; i < graph->arg_count; ++i) {
    uint32_t node_id = graph->arg_nodes[i];
    if (strcmp(graph->nodes[node_id].name, name)) continue;
    uint32_t slot = graph->entries[graph->node_row_ptr[node_id]].storage_slot;
    return source_users[slot] == 1 ? slot : UINT32_MAX;
  }
  return UINT32_MAX;
}

static bool named(const hgr__storage_source_t* source, const char* name) {
  for (size_t k = 0; k < source->name_count; ++k)
    if (source->names[k] && !strcmp(source->names[k], name)) return true;
  return false;
}

static hgr_status_t choose_shared(hgr__storage_pool_t* pool, const hgr_instance_t* instance, const hgr_graph_t* graph,
                                  const hgr__storage_source_t* source, hgr_log_fn log, void* log_user) {
  char difference[256];
  bool by_name = source->names != NULL;
  if (!by_name && !hgr__graph_same(graph, source->graph, difference, sizeof(difference)))
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT,
                      "share_params_from: the source executor runs another graph (%s); only executors of the same "
                      "graph share params (or share_param_names names the inputs to share)",
                      difference);
  uint32_t* users = storage_users(pool->allocator, graph); /* entries per storage id */
  uint32_t* source_users = by_name ? storage_users(pool->allocator, source->graph) : NULL;
  if (!users || (by_name && !source_users)) {
    hgr__free(pool->allocator, users);
    hgr__free(pool->allocator, source_users);
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  }
  share_report_t report = {0};
  hgr_status_t status = HGR_OK;
  for (uint32_t i = 0; i < graph->arg_count && !status; ++i) {
    uint32_t node_id = graph->arg_nodes[i];
    uint32_t storage_slot = graph->entries[graph->node_row_ptr[node_id]].storage_slot;
    const char* name = graph->nodes[node_id].name;
    uint32_t from_slot = storage_slot;
    if (by_name && (!named(source, name) || (from_slot = source_input_slot(source, source_users, name)) == UINT32_MAX))
      continue;
    const hgr__storage_t* from = &source->pool->storages[from_slot];
    hgr__storage_t* storage = &pool->storages[storage_slot];
    if (!from->params || !from->used || !storage->used) continue;
    if (users[storage_slot] != 1) {
      note_not_shared(&report, "input %u '%.64s': storage %u is used by %u entries, so it is not read-only", i, name,
                      hgr__graph_storage_id(graph, storage_slot), users[storage_slot]);
    } else if (source->instance != instance) {
      note_not_shared(&report, "input %u '%.64s': the source executor has another instance", i, name);
    } else if (from->device_index != storage->device_index) {
      note_not_shared(&report, "input %u '%.64s' is on %s here but on %s in the source", i, name,
                      hgr__device_spec(instance, storage->device_index),
                      hgr__device_spec(instance, from->device_index));
    } else if (from->bytes != storage->bytes && by_name) {
      note_not_shared(&report, "input %u '%.64s' has %llu bytes here and %llu in the source", i, name,
                      (unsigned long long)storage->bytes, (unsigned long long)from->bytes);
    } else if (from->bytes != storage->bytes) { /* the graphs are the same */
      status = HGR_STATUS(HGR_STATUS_INTERNAL,
                          "share_params_from: storage %u has %llu bytes here and %llu in the "
                          "source",
                          hgr__graph_storage_id(graph, storage_slot), (unsigned long long)storage->bytes,
                          (unsigned long long)from->bytes);
    } else {
      storage->borrowed = storage->shared = storage->params = true;
      storage->source_slot = from_slot;
      report.shared++;
      report.shared_bytes += storage->bytes;
    }
  }
  hgr__free(pool->allocator, users);
  hgr__free(pool->allocator, source_users);
  if (!status && log) {
    char line[768];
    int length = snprintf(line, sizeof(line), "share_params_from: %u parameter buffer%s (%llu bytes) shared",
                          report.shared, report.shared == 1 ? "" : "s", (unsigned long long)report.shared_bytes);
    if (report.not_shared && length > 0 && (size_t)length < sizeof(line))
      snprintf(line + length, sizeof(line) - (size_t)length, ", %u not: %s%s", report.not_shared, report.reasons,
               report.not_shared > 3 ? "; ..." : "");
    log(log_user, line);
  }
  return status;
}

void hgr__storage_lend(const hgr__storage_pool_t* pool, hgr__storage_pool_t* source) {
  for (uint32_t s = 0; source && s < pool->count; ++s)
    if (pool->storages[s].borrowed) source->storages[pool->storages[s].source_slot].shared = true;
}

/* ---- plan, allocation, release ------------------------------------------------------- */

hgr_status_t hgr__storage_plan(hgr__storage_pool_t* pool, const hgr_instance_t* instance, const hgr_graph_t* graph,
                               hgr__device_keys_t* device_keys, const hgr__storage_source_t* source, hgr_log_fn log,
                               void* log_user) {
  pool->storages = hgr__calloc(pool->allocator, graph->storage_count + 1, sizeof(*pool->storages));
  if (!pool->storages) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  pool->count = graph->storage_count;
  for (uint32_t e = 0; e < graph->entry_count; ++e) {
    const hgr__entry_t* entry = &graph->entries[e];
    hgr__storage_t* storage = &pool->storages[entry->storage_slot];
    size_t device = device_keys->entry_device[e];
    if (device == HGR__REMOTE_DEVICE) continue; /* another rank's: not allocated here */
    if (storage->used && storage->device_index != device) {
      /* The graph checks one key per storage; two keys bound to one device are fine,
       * so this only fires if that invariant broke. */
      return HGR_STATUS(HGR_STATUS_INTERNAL, "storage %u is on %s and, through entry %u, on %s",
                        entry->storage_id, hgr__device_spec(instance, storage->device_index),
                        e, hgr__device_spec(instance, device));
    }
    storage->used = true;
    storage->device_index = device;
    if (entry->bytes > storage->bytes) storage->bytes = entry->bytes;
  }
  if (source) HGR_RETURN_IF_ERROR(choose_shared(pool, instance, graph, source, log, log_user));
  for (uint32_t s = 0; s < graph->storage_count; ++s) {
    hgr__storage_t* storage = &pool->storages[s];
    if (!storage->used) continue;
    const hgr_device_info_t* device = hgr_instance_device(instance, storage->device_index);
    hgr_device_usage_t* usage = &hgr__device_keys_device(device_keys, storage->device_index)->usage;
    if (storage->borrowed) { /* the source counts it */
      usage->shared_count++;
      usage->shared_bytes += storage->bytes;
      continue;
    }
    char size[32];
    snprintf(size, sizeof(size), "%llu bytes", (unsigned long long)storage->bytes);
    /* Byte counts are 64-bit throughout; here they become the size_t of
     * clCreateBuffer and of every copy of this storage's entries (rounded up to 4
     * bytes), which on a 32-bit host holds less than 4 GiB. */
    if (storage->bytes > (uint64_t)SIZE_MAX - 3)
      return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED,
                        "storage %u needs %s, more than this host's size_t can address (%zu bytes: a 32-bit "
                        "host)",
                        hgr__graph_storage_id(graph, s), size, (size_t)SIZE_MAX);
    if (storage->bytes > device->max_alloc_bytes)
      return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED,
                        "storage %u needs %s, more than the largest allocation %s allows "
                        "(%llu bytes)",
                        hgr__graph_storage_id(graph, s), size, device->spec,
                        (unsigned long long)device->max_alloc_bytes);
    usage->storage_count++;
    usage->storage_bytes += storage->bytes;
    if (usage->storage_bytes > device->global_mem_bytes)
      return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED,
                        "storage %u (%s) brings %s past its global memory: %llu of %llu bytes",
                        hgr__graph_storage_id(graph, s),
                        size, device->spec, (unsigned long long)usage->storage_bytes,
                        (unsigned long long)device->global_mem_bytes);
  }
  return HGR_OK;
}

bool hgr__storage_borrows(const hgr__storage_pool_t* pool) {
  for (uint32_t s = 0; s < pool->count; ++s)
    if (pool->storages[s].borrowed) return true;
  return false;
}

hgr_status_t hgr__storage_allocate(hgr__storage_pool_t* pool, hgr_instance_t* instance, const hgr_graph_t* graph,
                                   const hgr__storage_pool_t* source) {
  for (uint32_t s = 0; s < pool->count; ++s) {
    hgr__storage_t* storage = &pool->storages[s];
    if (!storage->used) continue;
    if (storage->borrowed) {
      cl_mem from = source->storages[storage->source_slot].own_mem;
      cl_int error = clRetainMemObject(from);
      if (error != CL_SUCCESS) return HGR_CL_STATUS(error, "clRetainMemObject(storage %u of the source executor)",
                                                  hgr__graph_storage_id(graph, s));
      storage->mem = storage->own_mem = from;
      continue;
    }
    cl_context context;
    HGR_RETURN_IF_ERROR(hgr__instance_context(instance, storage->device_index, &context));
    /* OpenCL refuses empty buffers; TVM rounds pools up to 4 bytes as well. */
    size_t bytes = (size_t)((storage->bytes + 3) / 4 * 4);
    if (bytes == 0) bytes = 4;
    cl_int error = CL_SUCCESS;
    storage->own_mem = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, NULL, &error);
    storage->mem = storage->own_mem;
    if (error != CL_SUCCESS || !storage->mem) {
      storage->mem = storage->own_mem = NULL;
      return HGR_CL_STATUS(error, "clCreateBuffer(storage %u, %zu bytes) on %s", hgr__graph_storage_id(graph, s), bytes,
                           hgr__device_spec(instance, storage->device_index));
    }
  }
  return HGR_OK;
}

void hgr__storage_release(hgr__storage_pool_t* pool) {
  for (uint32_t s = 0; pool->storages && s < pool->count; ++s) {
    hgr__storage_t* storage = &pool->storages[s];
    hgr__free(pool->allocator, storage->args);
    if (storage->own_mem) clReleaseMemObject(storage->own_mem); /* bindings release theirs */
  }
  hgr__free(pool->allocator, pool->storages);
  hgr_allocator_t allocator = pool->allocator;
  memset(pool, 0, sizeof(*pool));
  pool->allocator = allocator;
}

/* ---- kernel arguments and rebinding --------------------------------------------------- */

hgr_status_t hgr__storage_add_arg(hgr__storage_pool_t* pool, uint32_t storage, cl_kernel kernel, cl_uint index) {
  hgr__storage_t* record = &pool->storages[storage];
  if (record->arg_count == record->arg_capacity) {
    uint32_t capacity = record->arg_capacity ? 2 * record->arg_capacity : 4;
    hgr__storage_arg_t* grown = hgr__realloc(pool->allocator, record->args, capacity * sizeof(*grown));
    if (!grown) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    record->args = grown;
    record->arg_capacity = capacity;
  }
  record->args[record->arg_count++] = (hgr__storage_arg_t){kernel, index};
  return HGR_OK;
}

void hgr__storage_clear_args(hgr__storage_pool_t* pool) {
  for (uint32_t s = 0; pool->storages && s < pool->count; ++s) pool->storages[s].arg_count = 0;
}

hgr_status_t hgr__storage_use(hgr__storage_pool_t* pool, const hgr_graph_t* graph, uint32_t storage, cl_mem mem) {
  hgr__storage_t* record = &pool->storages[storage];
  if (record->mem == mem) return HGR_OK;
  record->mem = mem;
  for (uint32_t a = 0; a < record->arg_count; ++a) {
    cl_int error = clSetKernelArg(record->args[a].kernel, record->args[a].index, sizeof(cl_mem), &record->mem);
    if (error != CL_SUCCESS)
      return HGR_CL_STATUS(error, "clSetKernelArg(arg %u), binding storage %u", record->args[a].index,
                           hgr__graph_storage_id(graph, storage));
  }
  return HGR_OK;
}
