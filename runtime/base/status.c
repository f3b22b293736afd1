/* Status objects: code, where, message, joined follow-ups; OpenCL error names. */
#include "hgr/status.h"

#include "alloc.h"
#include "internal.h"
#include "text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct hgr_status_s {
  hgr_status_code_t code;
  const char* file;
  int line;
  char* message;
  struct hgr_status_s* next;
};

/* Returned when a status cannot be allocated; never freed. */
static struct hgr_status_s out_of_memory_status = {
    HGR_STATUS_RESOURCE_EXHAUSTED, __FILE__, __LINE__, (char*)"out of host memory", NULL};

hgr_status_t hgr_status_make(hgr_status_code_t code, const char* file, int line,
                             const char* format, ...) {
  if (code == HGR_STATUS_OK) code = HGR_STATUS_INTERNAL; /* a caller bug; still report it */
  struct hgr_status_s* status = calloc(1, sizeof(*status));
  if (!status) return &out_of_memory_status;
  va_list args;
  va_start(args, format);
  status->message = hgr__vformat(format, args);
  va_end(args);
  if (!status->message) {
    free(status);
    return &out_of_memory_status;
  }
  status->code = code;
  status->file = file;
  status->line = line;
  return status;
}

hgr_status_t hgr_status_annotate(hgr_status_t status, const char* format, ...) {
  if (!status || status == &out_of_memory_status) return status;
  va_list args;
  va_start(args, format);
  char* where = hgr__vformat(format, args);
  va_end(args);
  if (!where) return status; /* keep the original message rather than lose it */
  size_t where_len = strlen(where), message_len = strlen(status->message);
  char* joined = malloc(where_len + 2 + message_len + 1);
  if (joined) {
    memcpy(joined, where, where_len);
    memcpy(joined + where_len, ": ", 2);
    memcpy(joined + where_len + 2, status->message, message_len + 1);
    free(status->message);
    status->message = joined;
  }
  free(where);
  return status;
}

hgr_status_t hgr_status_join(hgr_status_t first, hgr_status_t second) {
  if (!first) return second;
  if (!second) return first;
  if (first == &out_of_memory_status) {
    /* The static status cannot carry a chain: keep the more specific one. */
    hgr_status_free(second);
    return first;
  }
  struct hgr_status_s* tail = first;
  while (tail->next) tail = tail->next;
  tail->next = second;
  return first;
}

hgr_status_code_t hgr_status_code(hgr_status_t status) {
  return status ? status->code : HGR_STATUS_OK;
}

const char* hgr_status_message(hgr_status_t status) { return status ? status->message : ""; }
const char* hgr_status_file(hgr_status_t status) { return status ? status->file : NULL; }
int hgr_status_line(hgr_status_t status) { return status ? status->line : 0; }
hgr_status_t hgr_status_next(hgr_status_t status) { return status ? status->next : NULL; }

static const char* base_name(const char* path) {
  const char* slash = path ? strrchr(path, '/') : NULL;
  return slash ? slash + 1 : (path ? path : "?");
}

size_t hgr_status_format(hgr_status_t status, char* buffer, size_t capacity) {
  size_t total = 0;
  if (capacity) buffer[0] = '\0';
  if (!status) {
    int n = snprintf(buffer, capacity, "OK");
    return n > 0 ? (size_t)n : 0;
  }
  for (const struct hgr_status_s* s = status; s; s = s->next) {
    char* at = (total < capacity) ? buffer + total : NULL;
    size_t room = (total < capacity) ? capacity - total : 0;
    int n = snprintf(at, room, "%s%s: %s [%s:%d]", s == status ? "" : "; also: ",
                     hgr_status_code_name(s->code), s->message, base_name(s->file), s->line);
    if (n > 0) total += (size_t)n;
  }
  return total;
}

char* hgr_status_to_string(hgr_status_t status) {
  size_t needed = hgr_status_format(status, NULL, 0);
  char* text = malloc(needed + 1);
  if (text) hgr_status_format(status, text, needed + 1);
  return text;
}

void hgr_status_free(hgr_status_t status) {
  while (status && status != &out_of_memory_status) {
    struct hgr_status_s* next = status->next;
    free(status->message);
    free(status);
    status = next;
  }
}

const char* hgr_status_code_name(hgr_status_code_t code) {
  switch (code) {
    case HGR_STATUS_OK: return "OK";
    case HGR_STATUS_CANCELLED: return "CANCELLED";
    case HGR_STATUS_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case HGR_STATUS_NOT_FOUND: return "NOT_FOUND";
    case HGR_STATUS_OUT_OF_RANGE: return "OUT_OF_RANGE";
    case HGR_STATUS_RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case HGR_STATUS_FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case HGR_STATUS_UNIMPLEMENTED: return "UNIMPLEMENTED";
    case HGR_STATUS_UNAVAILABLE: return "UNAVAILABLE";
    case HGR_STATUS_INTERNAL: return "INTERNAL";
    case HGR_STATUS_DATA_LOSS: return "DATA_LOSS";
    case HGR_STATUS_DEVICE_FAILURE: return "DEVICE_FAILURE";
  }
  return "UNKNOWN";
}

/* Every error code the Khronos headers (opencl-headers 2023.02) define, core and
 * extensions. Where two extensions share a value (-1010..-1013: the KHR and the
 * Intel DX9 sharing codes) the KHR name is given. */
static const struct {
  int32_t code;
  const char* name;
} opencl_errors[] = {
    {0, "CL_SUCCESS"},
    {-1, "CL_DEVICE_NOT_FOUND"},
    {-2, "CL_DEVICE_NOT_AVAILABLE"},
    {-3, "CL_COMPILER_NOT_AVAILABLE"},
    {-4, "CL_MEM_OBJECT_ALLOCATION_FAILURE"},
    {-5, "CL_OUT_OF_RESOURCES"},
    {-6, "CL_OUT_OF_HOST_MEMORY"},
    {-7, "CL_PROFILING_INFO_NOT_AVAILABLE"},
    {-8, "CL_MEM_COPY_OVERLAP"},
    {-9, "CL_IMAGE_FORMAT_MISMATCH"},
    {-10, "CL_IMAGE_FORMAT_NOT_SUPPORTED"},
    {-11, "CL_BUILD_PROGRAM_FAILURE"},
    {-12, "CL_MAP_FAILURE"},
    {-13, "CL_MISALIGNED_SUB_BUFFER_OFFSET"},
    {-14, "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST"},
    {-15, "CL_COMPILE_PROGRAM_FAILURE"},
    {-16, "CL_LINKER_NOT_AVAILABLE"},
    {-17, "CL_LINK_PROGRAM_FAILURE"},
    {-18, "CL_DEVICE_PARTITION_FAILED"},
    {-19, "CL_KERNEL_ARG_INFO_NOT_AVAILABLE"},
    {-30, "CL_INVALID_VALUE"},
    {-31, "CL_INVALID_DEVICE_TYPE"},
    {-32, "CL_INVALID_PLATFORM"},
    {-33, "CL_INVALID_DEVICE"},
    {-34, "CL_INVALID_CONTEXT"},
    {-35, "CL_INVALID_QUEUE_PROPERTIES"},
    {-36, "CL_INVALID_COMMAND_QUEUE"},
    {-37, "CL_INVALID_HOST_PTR"},
    {-38, "CL_INVALID_MEM_OBJECT"},
    {-39, "CL_INVALID_IMAGE_FORMAT_DESCRIPTOR"},
    {-40, "CL_INVALID_IMAGE_SIZE"},
    {-41, "CL_INVALID_SAMPLER"},
    {-42, "CL_INVALID_BINARY"},
    {-43, "CL_INVALID_BUILD_OPTIONS"},
    {-44, "CL_INVALID_PROGRAM"},
    {-45, "CL_INVALID_PROGRAM_EXECUTABLE"},
    {-46, "CL_INVALID_KERNEL_NAME"},
    {-47, "CL_INVALID_KERNEL_DEFINITION"},
    {-48, "CL_INVALID_KERNEL"},
    {-49, "CL_INVALID_ARG_INDEX"},
    {-50, "CL_INVALID_ARG_VALUE"},
    {-51, "CL_INVALID_ARG_SIZE"},
    {-52, "CL_INVALID_KERNEL_ARGS"},
    {-53, "CL_INVALID_WORK_DIMENSION"},
    {-54, "CL_INVALID_WORK_GROUP_SIZE"},
    {-55, "CL_INVALID_WORK_ITEM_SIZE"},
    {-56, "CL_INVALID_GLOBAL_OFFSET"},
    {-57, "CL_INVALID_EVENT_WAIT_LIST"},
    {-58, "CL_INVALID_EVENT"},
    {-59, "CL_INVALID_OPERATION"},
    {-60, "CL_INVALID_GL_OBJECT"},
    {-61, "CL_INVALID_BUFFER_SIZE"},
    {-62, "CL_INVALID_MIP_LEVEL"},
    {-63, "CL_INVALID_GLOBAL_WORK_SIZE"},
    {-64, "CL_INVALID_PROPERTY"},
    {-65, "CL_INVALID_IMAGE_DESCRIPTOR"},
    {-66, "CL_INVALID_COMPILER_OPTIONS"},
    {-67, "CL_INVALID_LINKER_OPTIONS"},
    {-68, "CL_INVALID_DEVICE_PARTITION_COUNT"},
    {-69, "CL_INVALID_PIPE_SIZE"},
    {-70, "CL_INVALID_DEVICE_QUEUE"},
    {-71, "CL_INVALID_SPEC_ID"},
    {-72, "CL_MAX_SIZE_RESTRICTION_EXCEEDED"},
    {-1000, "CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR"},
    {-1001, "CL_PLATFORM_NOT_FOUND_KHR"},
    {-1002, "CL_INVALID_D3D10_DEVICE_KHR"},
    {-1003, "CL_INVALID_D3D10_RESOURCE_KHR"},
    {-1004, "CL_D3D10_RESOURCE_ALREADY_ACQUIRED_KHR"},
    {-1005, "CL_D3D10_RESOURCE_NOT_ACQUIRED_KHR"},
    {-1006, "CL_INVALID_D3D11_DEVICE_KHR"},
    {-1007, "CL_INVALID_D3D11_RESOURCE_KHR"},
    {-1008, "CL_D3D11_RESOURCE_ALREADY_ACQUIRED_KHR"},
    {-1009, "CL_D3D11_RESOURCE_NOT_ACQUIRED_KHR"},
    {-1010, "CL_INVALID_DX9_MEDIA_ADAPTER_KHR"},
    {-1011, "CL_INVALID_DX9_MEDIA_SURFACE_KHR"},
    {-1012, "CL_DX9_MEDIA_SURFACE_ALREADY_ACQUIRED_KHR"},
    {-1013, "CL_DX9_MEDIA_SURFACE_NOT_ACQUIRED_KHR"},
    {-1057, "CL_DEVICE_PARTITION_FAILED_EXT"},
    {-1058, "CL_INVALID_PARTITION_COUNT_EXT"},
    {-1059, "CL_INVALID_PARTITION_NAME_EXT"},
    {-1092, "CL_EGL_RESOURCE_NOT_ACQUIRED_KHR"},
    {-1093, "CL_INVALID_EGL_OBJECT_KHR"},
    {-1094, "CL_INVALID_ACCELERATOR_INTEL"},
    {-1095, "CL_INVALID_ACCELERATOR_TYPE_INTEL"},
    {-1096, "CL_INVALID_ACCELERATOR_DESCRIPTOR_INTEL"},
    {-1097, "CL_ACCELERATOR_TYPE_NOT_SUPPORTED_INTEL"},
    {-1098, "CL_INVALID_VA_API_MEDIA_ADAPTER_INTEL"},
    {-1099, "CL_INVALID_VA_API_MEDIA_SURFACE_INTEL"},
    {-1100, "CL_VA_API_MEDIA_SURFACE_ALREADY_ACQUIRED_INTEL"},
    {-1101, "CL_VA_API_MEDIA_SURFACE_NOT_ACQUIRED_INTEL"},
    {-1108, "CL_COMMAND_TERMINATED_ITSELF_WITH_FAILURE_ARM"},
    {-1121, "CL_CONTEXT_TERMINATED_KHR"},
    {-1138, "CL_INVALID_COMMAND_BUFFER_KHR"},
    {-1139, "CL_INVALID_SYNC_POINT_WAIT_LIST_KHR"},
    {-1140, "CL_INCOMPATIBLE_COMMAND_QUEUE_KHR"},
    {-1141, "CL_INVALID_MUTABLE_COMMAND_KHR"},
    {-1142, "CL_INVALID_SEMAPHORE_KHR"},
};

const char* hgr_opencl_error_name(int32_t error_code) {
  for (size_t i = 0; i < sizeof(opencl_errors) / sizeof(opencl_errors[0]); ++i)
    if (opencl_errors[i].code == error_code) return opencl_errors[i].name;
  return "CL_UNKNOWN_ERROR";
}

hgr_status_code_t hgr__cl_status_code(cl_int error) {
  switch (error) {
    case CL_OUT_OF_HOST_MEMORY:
    case CL_OUT_OF_RESOURCES:
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
      return HGR_STATUS_RESOURCE_EXHAUSTED;
    case CL_DEVICE_NOT_AVAILABLE:
    case CL_COMPILER_NOT_AVAILABLE:
    case CL_LINKER_NOT_AVAILABLE:
    case CL_DEVICE_NOT_FOUND:
      return HGR_STATUS_UNAVAILABLE;
    case CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST:
      return HGR_STATUS_DEVICE_FAILURE;
    case CL_BUILD_PROGRAM_FAILURE:
    case CL_INVALID_BINARY:
    case CL_INVALID_BUFFER_SIZE:
      return HGR_STATUS_INVALID_ARGUMENT;
    default:
      return HGR_STATUS_INTERNAL;
  }
}

hgr_status_t hgr__cl_status(cl_int error, const char* file, int line, const char* what_format,
                            ...) {
  va_list args;
  va_start(args, what_format);
  char* what = hgr__vformat(what_format, args);
  va_end(args);
  hgr_status_t status =
      hgr_status_make(hgr__cl_status_code(error), file, line, "%s failed: %s",
                      what ? what : "OpenCL call", hgr_opencl_error_name(error));
  free(what);
  return status;
}

hgr_status_t hgr__strdup(hgr_allocator_t allocator, const char* text, char** out_copy) {
  *out_copy = NULL;
  size_t length = strlen(text ? text : "");
  char* copy = hgr__alloc(allocator, length + 1);
  if (!copy) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory copying a string");
  memcpy(copy, text ? text : "", length + 1);
  *out_copy = copy;
  return HGR_OK;
}
