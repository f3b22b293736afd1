/* Platform and device discovery, contexts, queues and the device-pair matrix. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "device_internal.h"
#include "hgr/opencl.h"

void hgr_instance_options_init(hgr_instance_options_t* options) {
  memset(options, 0, sizeof(*options));
}

static hgr_status_t add_skipped(hgr_instance_t* instance, const char* name, const char* reason) {
  hgr_allocator_t allocator = instance->options.allocator;
  hgr_skipped_platform_t* grown =
      hgr__realloc_array(allocator, instance->skipped, instance->skipped_count + 1, sizeof(*grown));
  if (!grown) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  instance->skipped = grown;
  hgr_skipped_platform_t* entry = &grown[instance->skipped_count];
  char *name_copy = NULL, *reason_copy = NULL;
  hgr_status_t status = hgr__strdup(allocator, name, &name_copy);
  if (!status) status = hgr__strdup(allocator, reason, &reason_copy);
  if (status) {
    hgr__free(allocator, name_copy);
    return status;
  }
  entry->name = name_copy;
  entry->reason = reason_copy;
  instance->skipped_count++;
  return HGR_OK;
}

/* Adds the devices of one platform, or records why the platform is skipped. Only
 * host memory exhaustion is returned as an error. */
static hgr_status_t discover_platform(hgr_instance_t* instance, cl_platform_id platform,
                                      size_t platform_index) {
  char name[256];
  cl_int error = clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof(name), name, NULL);
  if (error != CL_SUCCESS) {
    char label[64], reason[128];
    snprintf(label, sizeof(label), "platform %zu", platform_index);
    snprintf(reason, sizeof(reason), "clGetPlatformInfo(CL_PLATFORM_NAME) failed: %s",
             hgr_opencl_error_name(error));
    return add_skipped(instance, label, reason);
  }
  name[sizeof(name) - 1] = 0;

  cl_uint device_count = 0;
  error = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, NULL, &device_count);
  if (error != CL_SUCCESS || device_count == 0) {
    char reason[160];
    /* Mesa's rusticl shows no device unless told which drivers to expose. */
    bool rusticl = !strcmp(name, "rusticl") && !getenv("RUSTICL_ENABLE");
    snprintf(reason, sizeof(reason), "reports no devices (clGetDeviceIDs: %s)%s",
             error != CL_SUCCESS ? hgr_opencl_error_name(error) : "0 devices",
             rusticl ? "; set RUSTICL_ENABLE=llvmpipe for its CPU device" : "");
    return add_skipped(instance, name, reason);
  }
  hgr_allocator_t allocator = instance->options.allocator;
  cl_device_id* ids = hgr__calloc(allocator, device_count, sizeof(*ids));
  hgr__device_t* grown =
      hgr__realloc_array(allocator, instance->devices, instance->device_count + device_count, sizeof(*grown));
  if (grown) instance->devices = grown;
  if (!ids || !grown) {
    hgr__free(allocator, ids);
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  }
  error = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, device_count, ids, NULL);
  if (error != CL_SUCCESS) {
    hgr__free(allocator, ids);
    char reason[160];
    snprintf(reason, sizeof(reason), "clGetDeviceIDs failed: %s", hgr_opencl_error_name(error));
    return add_skipped(instance, name, reason);
  }

  /* Query every device first so that a platform with a failing device is skipped
   * whole rather than half-listed. */
  hgr__device_t* first = &instance->devices[instance->device_count];
  hgr_status_t status = HGR_OK;
  cl_uint queried = 0;
  for (; queried < device_count; ++queried) {
    hgr__device_t* device = &first[queried];
    memset(device, 0, sizeof(*device));
    status = hgr__device_query(allocator, platform, ids[queried], &device->info);
    if (status) break;
    device->platform = platform;
    device->device = ids[queried];
    device->info.platform_index = platform_index;
    device->info.index_in_platform = queried;
    device->host_driven = !strcmp(device->info.platform_short, "oclgrind");
    device->late_map_registration = !strcmp(device->info.platform_short, "rusticl");
    device->fragile_failed_user_events = !strcmp(device->info.platform_short, "pocl");
  }
  hgr__free(allocator, ids);
  if (status) {
    for (cl_uint i = 0; i < queried; ++i) hgr__device_info_free(allocator, &first[i].info);
    /* Host memory that ran out is the caller's failure, not the platform's. */
    if (hgr_status_code(status) == HGR_STATUS_RESOURCE_EXHAUSTED) return status;
    char reason[512];
    snprintf(reason, sizeof(reason), "device %u: %s", queried, hgr_status_message(status));
    hgr_status_free(status);
    return add_skipped(instance, name, reason);
  }
  instance->device_count += device_count;
  return HGR_OK;
}

hgr_status_t hgr_instance_create(const hgr_instance_options_t* options,
                                 hgr_instance_t** out_instance) {
  *out_instance = NULL;
  hgr_allocator_t allocator = options ? options->allocator : hgr_allocator_system();
  hgr_instance_t* instance = hgr__calloc(allocator, 1, sizeof(*instance));
  if (!instance) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  if (options) instance->options = *options;
  else hgr_instance_options_init(&instance->options);
  pthread_mutex_init(&instance->mutex, NULL);

  hgr_status_t status = HGR_OK;
  cl_platform_id* platforms = NULL;
  cl_uint platform_count = 0;
  cl_int error = clGetPlatformIDs(0, NULL, &platform_count);
  if (error == CL_SUCCESS && platform_count > 0) {
    platforms = hgr__calloc(allocator, platform_count, sizeof(*platforms));
    if (!platforms) {
      status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
      goto cleanup;
    }
    error = clGetPlatformIDs(platform_count, platforms, NULL);
  }
  if (error != CL_SUCCESS) {
    /* No ICD at all (CL_PLATFORM_NOT_FOUND_KHR) is an empty machine, not a failure. */
    char reason[128];
    snprintf(reason, sizeof(reason), "clGetPlatformIDs failed: %s", hgr_opencl_error_name(error));
    status = add_skipped(instance, "OpenCL ICD loader", reason);
    platform_count = 0;
    if (status) goto cleanup;
  }
  for (cl_uint p = 0; p < platform_count; ++p)
    if ((status = discover_platform(instance, platforms[p], p))) goto cleanup;

  /* Context groups: one per platform, or one per device. */
  instance->contexts =
      hgr__calloc(allocator, instance->device_count ? instance->device_count : 1, sizeof(*instance->contexts));
  instance->infos =
      hgr__calloc(allocator, instance->device_count ? instance->device_count : 1, sizeof(*instance->infos));
  if (!instance->contexts || !instance->infos) {
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    goto cleanup;
  }
  for (size_t i = 0; i < instance->device_count; ++i) {
    hgr__device_t* device = &instance->devices[i];
    device->info.index = i;
    instance->infos[i] = &device->info;
    if (instance->options.context_per_device || i == 0 ||
        instance->devices[i - 1].platform != device->platform)
      device->context_group = instance->context_count++;
    else
      device->context_group = instance->devices[i - 1].context_group;
  }
  status = hgr__device_assign_specs(allocator, instance->infos, instance->device_count);

cleanup:
  hgr__free(allocator, platforms);
  if (status) {
    hgr_instance_release(instance);
    return status;
  }
  *out_instance = instance;
  return HGR_OK;
}

void hgr_instance_release(hgr_instance_t* instance) {
  if (!instance) return;
  hgr_allocator_t allocator = instance->options.allocator;
  for (size_t i = 0; i < instance->context_count; ++i)
    if (instance->contexts[i]) clReleaseContext(instance->contexts[i]);
  hgr__free(allocator, instance->contexts);
  for (size_t i = 0; i < instance->device_count; ++i) hgr__device_info_free(allocator, &instance->devices[i].info);
  hgr__free(allocator, instance->devices);
  hgr__free(allocator, instance->infos);
  for (size_t i = 0; i < instance->skipped_count; ++i) {
    hgr__free(allocator, (char*)instance->skipped[i].name);
    hgr__free(allocator, (char*)instance->skipped[i].reason);
  }
  hgr__free(allocator, instance->skipped);
  pthread_mutex_destroy(&instance->mutex);
  hgr__free(allocator, instance);
}

size_t hgr_instance_device_count(const hgr_instance_t* instance) {
  return instance ? instance->device_count : 0;
}

const hgr_device_info_t* hgr_instance_device(const hgr_instance_t* instance, size_t i) {
  return (instance && i < instance->device_count) ? &instance->devices[i].info : NULL;
}

const char* hgr__device_spec(const hgr_instance_t* instance, size_t device_index) {
  const hgr_device_info_t* info = hgr_instance_device(instance, device_index);
  return info ? info->spec : "(no device)";
}

size_t hgr_instance_skipped_platform_count(const hgr_instance_t* instance) {
  return instance ? instance->skipped_count : 0;
}

const hgr_skipped_platform_t* hgr_instance_skipped_platform(const hgr_instance_t* instance,
                                                            size_t i) {
  return (instance && i < instance->skipped_count) ? &instance->skipped[i] : NULL;
}

hgr_status_t hgr__instance_explain_skipped(const hgr_instance_t* instance, hgr_status_t status) {
  if (!status || !instance->skipped_count) return status;
  size_t needed = 1;
  for (size_t i = 0; i < instance->skipped_count; ++i)
    needed += strlen(instance->skipped[i].name) + strlen(instance->skipped[i].reason) + 4;
  char* list = hgr__alloc(instance->options.allocator, needed);
  if (!list) return status; /* the status without the list beats none */
  size_t used = 0;
  list[0] = 0;
  for (size_t i = 0; i < instance->skipped_count; ++i)
    used += (size_t)snprintf(list + used, needed - used, "%s%s: %s", i ? "; " : "", instance->skipped[i].name,
                             instance->skipped[i].reason);
  hgr_status_t explained = hgr_status_make(hgr_status_code(status), hgr_status_file(status), hgr_status_line(status),
                                           "%s (skipped platforms: %s)", hgr_status_message(status), list);
  hgr__free(instance->options.allocator, list);
  hgr_status_free(status);
  return explained;
}

hgr_status_t hgr_instance_find_device(const hgr_instance_t* instance, const char* spec,
                                      size_t* out_index) {
  *out_index = SIZE_MAX;
  if (!instance) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "instance is NULL");
  hgr_status_t status = hgr__device_spec_match((const hgr_device_info_t* const*)instance->infos,
                                               instance->device_count, spec, out_index);
  if (status && hgr_status_code(status) == HGR_STATUS_NOT_FOUND)
    status = hgr__instance_explain_skipped(instance, status);
  return status;
}

hgr_pair_class_t hgr_instance_pair_class(const hgr_instance_t* instance, size_t from, size_t to) {
  const hgr__device_t* a = &instance->devices[from];
  const hgr__device_t* b = &instance->devices[to];
  if (from == to) return HGR_PAIR_SAME_QUEUE;
  if (a->context_group == b->context_group) return HGR_PAIR_SAME_CONTEXT;
  if (a->platform == b->platform) return HGR_PAIR_CROSS_CONTEXT;
  return HGR_PAIR_CROSS_PLATFORM;
}

const char* hgr_pair_class_name(hgr_pair_class_t pair_class) {
  switch (pair_class) {
    case HGR_PAIR_SAME_QUEUE: return "same-queue";
    case HGR_PAIR_SAME_CONTEXT: return "same-context";
    case HGR_PAIR_CROSS_CONTEXT: return "cross-context";
    case HGR_PAIR_CROSS_PLATFORM: return "cross-platform";
    case HGR_PAIR_CROSS_HOST: return "cross-host";
  }
  return "unknown";
}

hgr_status_t hgr__instance_context(hgr_instance_t* instance, size_t device_index,
                                   cl_context* out_context) {
  *out_context = NULL;
  const hgr__device_t* device = &instance->devices[device_index];
  size_t group = device->context_group;
  hgr_status_t status = HGR_OK;
  pthread_mutex_lock(&instance->mutex);
  if (!instance->contexts[group]) {
    cl_device_id members[64];
    cl_uint member_count = 0;
    for (size_t i = 0; i < instance->device_count && member_count < 64; ++i)
      if (instance->devices[i].context_group == group) members[member_count++] = instance->devices[i].device;
    cl_context_properties properties[] = {CL_CONTEXT_PLATFORM,
                                          (cl_context_properties)device->platform, 0};
    cl_int error = CL_SUCCESS;
    cl_context context = clCreateContext(properties, member_count, members, NULL, NULL, &error);
    if (error != CL_SUCCESS || !context)
      status = HGR_CL_STATUS(error, "clCreateContext for %s (%u device(s))", device->info.spec,
                             member_count);
    else
      instance->contexts[group] = context;
  }
  *out_context = instance->contexts[group];
  pthread_mutex_unlock(&instance->mutex);
  return status;
}

hgr_status_t hgr__instance_create_queue(hgr_instance_t* instance, size_t device_index,
                                        bool profiling, cl_command_queue* out_queue) {
  *out_queue = NULL;
  cl_context context;
  HGR_RETURN_IF_ERROR(hgr__instance_context(instance, device_index, &context));
  const hgr__device_t* device = &instance->devices[device_index];
  cl_int error = CL_SUCCESS;
  cl_command_queue queue = clCreateCommandQueue(
      context, device->device, profiling ? CL_QUEUE_PROFILING_ENABLE : 0, &error);
  if (error != CL_SUCCESS || !queue)
    return HGR_CL_STATUS(error, "clCreateCommandQueue on %s", device->info.spec);
  *out_queue = queue;
  return HGR_OK;
}

hgr_status_t hgr_instance_device_opencl(const hgr_instance_t* instance, size_t i, hgr_opencl_device_t* out_device) {
  memset(out_device, 0, sizeof(*out_device));
  if (!instance) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "instance is NULL");
  if (i >= instance->device_count)
    return HGR_STATUS(HGR_STATUS_OUT_OF_RANGE, "device %zu of %zu", i, instance->device_count);
  cl_context context = NULL;
  /* Creating the context on first use changes only what the instance's lock guards. */
  HGR_RETURN_IF_ERROR(hgr__instance_context((hgr_instance_t*)instance, i, &context));
  *out_device = (hgr_opencl_device_t){instance->devices[i].platform, instance->devices[i].device, context};
  return HGR_OK;
}

hgr_allocator_t hgr__instance_allocator(const hgr_instance_t* instance) {
  return instance ? instance->options.allocator : hgr_allocator_system();
}
