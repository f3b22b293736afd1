/* One OpenCL device: its capabilities, spec strings and spec matching. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "device_internal.h"

const char* hgr_device_type_name(hgr_device_type_t type) {
  switch (type) {
    case HGR_DEVICE_TYPE_CPU: return "cpu";
    case HGR_DEVICE_TYPE_GPU: return "gpu";
    case HGR_DEVICE_TYPE_ACCELERATOR: return "accelerator";
    case HGR_DEVICE_TYPE_CUSTOM: return "custom";
    case HGR_DEVICE_TYPE_DEFAULT: return "default";
  }
  return "unknown";
}

static hgr_device_type_t primary_type(cl_device_type type) {
  if (type & CL_DEVICE_TYPE_CPU) return HGR_DEVICE_TYPE_CPU;
  if (type & CL_DEVICE_TYPE_GPU) return HGR_DEVICE_TYPE_GPU;
  if (type & CL_DEVICE_TYPE_ACCELERATOR) return HGR_DEVICE_TYPE_ACCELERATOR;
#ifdef CL_DEVICE_TYPE_CUSTOM
  if (type & CL_DEVICE_TYPE_CUSTOM) return HGR_DEVICE_TYPE_CUSTOM;
#endif
  return HGR_DEVICE_TYPE_DEFAULT;
}

/* clGetDeviceInfo on device, or clGetPlatformInfo on platform when device is NULL. */
static cl_int get_info(cl_platform_id platform, cl_device_id device, cl_uint param, size_t size, void* value,
                       size_t* out_size) {
  return device ? clGetDeviceInfo(device, param, size, value, out_size)
                : clGetPlatformInfo(platform, param, size, value, out_size);
}

/* A string property of device (or, when device is NULL, of platform) as a copy from allocator,
 * trailing spaces trimmed (drivers pad some). */
static hgr_status_t query_string(hgr_allocator_t allocator, cl_platform_id platform, cl_device_id device, cl_uint param,
                                 const char* param_name, char** out_text) {
  *out_text = NULL;
  const char* call = device ? "clGetDeviceInfo" : "clGetPlatformInfo";
  size_t size = 0;
  cl_int error = get_info(platform, device, param, 0, NULL, &size);
  if (error != CL_SUCCESS) return HGR_CL_STATUS(error, "%s(%s)", call, param_name);
  char* text = hgr__calloc(allocator, size + 1, 1);
  if (!text) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  error = get_info(platform, device, param, size, text, NULL);
  if (error != CL_SUCCESS) {
    hgr__free(allocator, text);
    return HGR_CL_STATUS(error, "%s(%s)", call, param_name);
  }
  for (size_t n = strlen(text); n > 0 && isspace((unsigned char)text[n - 1]); --n) text[n - 1] = 0;
  *out_text = text;
  return HGR_OK;
}

#define QUERY_VALUE(device, param, value)                                         \
  do {                                                                            \
    cl_int e_ = clGetDeviceInfo((device), (param), sizeof(value), &(value), NULL); \
    if (e_ != CL_SUCCESS) {                                                       \
      status = HGR_CL_STATUS(e_, "clGetDeviceInfo(" #param ")");                  \
      goto cleanup;                                                               \
    }                                                                             \
  } while (0)

hgr_status_t hgr__device_query(hgr_allocator_t allocator, cl_platform_id platform, cl_device_id device,
                               hgr_device_info_t* info) {
  hgr_status_t status = HGR_OK;
  char *platform_name = NULL, *platform_vendor = NULL, *platform_version = NULL;
  char *name = NULL, *vendor = NULL, *version = NULL, *driver = NULL, *extensions = NULL;
  char* short_name = NULL;
  memset(info, 0, sizeof(*info));

  if ((status = query_string(allocator, platform, NULL, CL_PLATFORM_NAME, "CL_PLATFORM_NAME", &platform_name)) ||
      (status = query_string(allocator, platform, NULL, CL_PLATFORM_VENDOR, "CL_PLATFORM_VENDOR", &platform_vendor)) ||
      (status =
           query_string(allocator, platform, NULL, CL_PLATFORM_VERSION, "CL_PLATFORM_VERSION", &platform_version)) ||
      (status = query_string(allocator, platform, device, CL_DEVICE_NAME, "CL_DEVICE_NAME", &name)) ||
      (status = query_string(allocator, platform, device, CL_DEVICE_VENDOR, "CL_DEVICE_VENDOR", &vendor)) ||
      (status = query_string(allocator, platform, device, CL_DEVICE_VERSION, "CL_DEVICE_VERSION", &version)) ||
      (status = query_string(allocator, platform, device, CL_DRIVER_VERSION, "CL_DRIVER_VERSION", &driver)) ||
      (status = query_string(allocator, platform, device, CL_DEVICE_EXTENSIONS, "CL_DEVICE_EXTENSIONS", &extensions)) ||
      (status = hgr__platform_short_name(allocator, platform_name, &short_name)))
    goto cleanup;

  cl_device_type type = 0;
  cl_uint compute_units = 0, align_bits = 0;
  cl_ulong global_mem = 0, local_mem = 0, max_alloc = 0;
  size_t max_work_group = 0, timer_resolution = 0;
  cl_bool unified = CL_FALSE, compiler = CL_FALSE;
  QUERY_VALUE(device, CL_DEVICE_TYPE, type);
  QUERY_VALUE(device, CL_DEVICE_MAX_COMPUTE_UNITS, compute_units);
  QUERY_VALUE(device, CL_DEVICE_GLOBAL_MEM_SIZE, global_mem);
  QUERY_VALUE(device, CL_DEVICE_LOCAL_MEM_SIZE, local_mem);
  QUERY_VALUE(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, max_alloc);
  QUERY_VALUE(device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, align_bits);
  QUERY_VALUE(device, CL_DEVICE_MAX_WORK_GROUP_SIZE, max_work_group);
  /* Every device has at least 3 dimensions (CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS >= 3). */
  size_t max_items[3] = {0, 0, 0};
  if (clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof(max_items), max_items, NULL) != CL_SUCCESS)
    max_items[0] = max_items[1] = max_items[2] = max_work_group;
  QUERY_VALUE(device, CL_DEVICE_PROFILING_TIMER_RESOLUTION, timer_resolution);
  QUERY_VALUE(device, CL_DEVICE_HOST_UNIFIED_MEMORY, unified);
  QUERY_VALUE(device, CL_DEVICE_COMPILER_AVAILABLE, compiler);
  /* Optional in 1.2: a device without doubles may reject the query. */
  cl_device_fp_config double_config = 0;
  if (clGetDeviceInfo(device, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof(double_config), &double_config,
                      NULL) != CL_SUCCESS)
    double_config = 0;

  /* A hint (kernels vectorize for it), not a limit: unknown (0) where the query fails. */
  cl_uint native_float_width = 0;
  if (clGetDeviceInfo(device, CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT, sizeof(native_float_width), &native_float_width,
                      NULL) != CL_SUCCESS)
    native_float_width = 0;

  int major = 0, minor = 0;
  if (sscanf(version, "OpenCL %d.%d", &major, &minor) != 2) major = minor = 0;

  info->platform_short = short_name;
  info->platform_name = platform_name;
  info->platform_vendor = platform_vendor;
  info->platform_version = platform_version;
  info->name = name;
  info->vendor = vendor;
  info->version = version;
  info->driver_version = driver;
  info->type = primary_type(type);
  info->opencl_major = major;
  info->opencl_minor = minor;
  info->compute_units = compute_units;
  info->global_mem_bytes = global_mem;
  info->local_mem_bytes = local_mem;
  info->max_alloc_bytes = max_alloc;
  info->base_address_align_bits = align_bits;
  info->max_work_group_size = max_work_group;
  for (int d = 0; d < 3; ++d) info->max_work_item_sizes[d] = max_items[d];
  info->timer_resolution_ns = timer_resolution;
  info->compiler_available = compiler == CL_TRUE;
  info->native_float_width = native_float_width;
  info->unified_memory = unified == CL_TRUE;
  info->fp16 = strstr(extensions, "cl_khr_fp16") != NULL;
  info->fp64 = strstr(extensions, "cl_khr_fp64") != NULL || double_config != 0;
  short_name = platform_name = platform_vendor = platform_version = NULL;
  name = vendor = version = driver = NULL;

cleanup:
  hgr__free(allocator, extensions);
  hgr__free(allocator, short_name);
  hgr__free(allocator, platform_name);
  hgr__free(allocator, platform_vendor);
  hgr__free(allocator, platform_version);
  hgr__free(allocator, name);
  hgr__free(allocator, vendor);
  hgr__free(allocator, version);
  hgr__free(allocator, driver);
  return status;
}

void hgr__device_info_free(hgr_allocator_t allocator, hgr_device_info_t* info) {
  if (!info) return;
  hgr__free(allocator, (char*)info->spec);
  hgr__free(allocator, (char*)info->platform_short);
  hgr__free(allocator, (char*)info->platform_name);
  hgr__free(allocator, (char*)info->platform_vendor);
  hgr__free(allocator, (char*)info->platform_version);
  hgr__free(allocator, (char*)info->name);
  hgr__free(allocator, (char*)info->vendor);
  hgr__free(allocator, (char*)info->version);
  hgr__free(allocator, (char*)info->driver_version);
  memset(info, 0, sizeof(*info));
}

static bool contains_ignore_case(const char* haystack, const char* needle) {
  size_t n = strlen(needle);
  if (n == 0) return false;
  for (; *haystack; ++haystack) {
    size_t i = 0;
    while (i < n && haystack[i] &&
           tolower((unsigned char)haystack[i]) == tolower((unsigned char)needle[i]))
      ++i;
    if (i == n) return true;
  }
  return false;
}

hgr_status_t hgr__platform_short_name(hgr_allocator_t allocator, const char* platform_name, char** out_short) {
  if (contains_ignore_case(platform_name, "Portable Computing Language") ||
      contains_ignore_case(platform_name, "pocl"))
    return hgr__strdup(allocator, "pocl", out_short);
  char word[64];
  size_t length = 0;
  const char* p = platform_name;
  while (*p && !isalnum((unsigned char)*p)) ++p;
  while (*p && isalnum((unsigned char)*p) && length < sizeof(word) - 1)
    word[length++] = (char)tolower((unsigned char)*p++);
  word[length] = 0;
  return hgr__strdup(allocator, length ? word : "platform", out_short);
}

/* Platform-name matching for the NAME part of "NAME:INDEX". */
static bool platform_matches(const hgr_device_info_t* info, const char* name) {
  return contains_ignore_case(info->platform_name, name) ||
         contains_ignore_case(info->platform_short, name);
}

static bool parse_index(const char* text, size_t* out_value) {
  if (!*text) return false;
  size_t value = 0;
  for (const char* p = text; *p; ++p) {
    if (!isdigit((unsigned char)*p)) return false;
    if (value > (SIZE_MAX - 9) / 10) return false;
    value = value * 10 + (size_t)(*p - '0');
  }
  *out_value = value;
  return true;
}

static hgr_status_t no_match(const hgr_device_info_t* const* devices, size_t count,
                             const char* spec, const char* why) {
  size_t needed = 1;
  for (size_t i = 0; i < count; ++i)
    needed += strlen(devices[i]->spec ? devices[i]->spec : "?") + strlen(devices[i]->name) + 8;
  /* The system's: a moment's text for a status (the system's too); spec matching is
   * given no allocator. */
  char* list = hgr__alloc(hgr_allocator_system(), needed);
  if (!list) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  size_t used = 0;
  list[0] = 0;
  for (size_t i = 0; i < count; ++i)
    used += (size_t)snprintf(list + used, needed - used, "%s%s (%s)", i ? ", " : "",
                             devices[i]->spec ? devices[i]->spec : "?", devices[i]->name);
  hgr_status_t status = HGR_STATUS(HGR_STATUS_NOT_FOUND, "no device matches '%s': %s; available: %s",
                                   spec, why, count ? list : "none (no OpenCL device found)");
  hgr__free(hgr_allocator_system(), list);
  return status;
}

static const struct {
  const char* word;
  hgr_device_type_t type;
} type_words[] = {{"cpu", HGR_DEVICE_TYPE_CPU},
                  {"gpu", HGR_DEVICE_TYPE_GPU},
                  {"accelerator", HGR_DEVICE_TYPE_ACCELERATOR},
                  {"custom", HGR_DEVICE_TYPE_CUSTOM}};

bool hgr_spec_rank(const char* spec, int* out_rank, const char** out_local) {
  *out_rank = -1;
  *out_local = spec;
  if (!spec || spec[0] != 'r' || spec[1] < '0' || spec[1] > '9') {
    /* "r" followed by something other than a digit is a platform name ("rusticl") */
    return true;
  }
  const char* at = spec + 1;
  int64_t rank = 0;
  while (*at >= '0' && *at <= '9') {
    rank = rank * 10 + (*at - '0');
    if (rank > INT32_MAX) return false;
    ++at;
  }
  if (*at != '/') return false;
  *out_rank = (int)rank;
  *out_local = at + 1;
  return true;
}

hgr_status_t hgr__device_spec_match(const hgr_device_info_t* const* devices, size_t count,
                                    const char* spec, size_t* out_index) {
  *out_index = SIZE_MAX;
  if (!spec || !*spec)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT,
                      "empty device spec (expected NAME:INDEX, TYPE:INDEX or P.D)");
  char buffer[256];
  if (strlen(spec) >= sizeof(buffer))
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "device spec '%.32s...' is too long", spec);
  strcpy(buffer, spec);

  char* dot = strchr(buffer, '.');
  char* colon = strchr(buffer, ':');
  if (dot && !colon) { /* "P.D" */
    *dot = 0;
    size_t platform, device;
    if (!parse_index(buffer, &platform) || !parse_index(dot + 1, &device))
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT,
                        "device spec '%s': expected P.D with two indices, e.g. 0.1", spec);
    for (size_t i = 0; i < count; ++i)
      if (devices[i]->platform_index == platform && devices[i]->index_in_platform == device) {
        *out_index = i;
        return HGR_OK;
      }
    return no_match(devices, count, spec, "no such platform.device pair");
  }
  if (!colon || colon == buffer)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT,
                      "device spec '%s': expected NAME:INDEX (e.g. pocl:0), TYPE:INDEX (e.g. "
                      "gpu:0) or P.D (e.g. 1.0)",
                      spec);
  *colon = 0;
  size_t wanted;
  if (!parse_index(colon + 1, &wanted))
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT,
                      "device spec '%s': '%s' is not a device index", spec, colon + 1);

  const char* name = buffer;
  for (size_t t = 0; t < sizeof(type_words) / sizeof(type_words[0]); ++t) {
    if (strcasecmp(name, type_words[t].word) != 0) continue;
    size_t seen = 0;
    for (size_t i = 0; i < count; ++i)
      if (devices[i]->type == type_words[t].type && seen++ == wanted) {
        *out_index = i;
        return HGR_OK;
      }
    char why[96];
    snprintf(why, sizeof(why), "%zu %s device(s) found", seen, type_words[t].word);
    return no_match(devices, count, spec, why);
  }

  size_t seen = 0;
  for (size_t i = 0; i < count; ++i)
    if (platform_matches(devices[i], name) && seen++ == wanted) {
      *out_index = i;
      return HGR_OK;
    }
  char why[sizeof(buffer) + 64];
  if (seen)
    snprintf(why, sizeof(why), "platforms matching '%s' have %zu device(s)", name, seen);
  else
    snprintf(why, sizeof(why), "no platform name contains '%s'", name);
  return no_match(devices, count, spec, why);
}

hgr_status_t hgr__device_assign_specs(hgr_allocator_t allocator, hgr_device_info_t* const* devices, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    hgr__free(allocator, (char*)devices[i]->spec);
    devices[i]->spec = NULL;
  }
  for (size_t i = 0; i < count; ++i) {
    /* The position among devices whose platform matches this short name. */
    size_t position = 0;
    for (size_t j = 0; j < i; ++j)
      if (platform_matches(devices[j], devices[i]->platform_short)) ++position;
    char candidate[96];
    snprintf(candidate, sizeof(candidate), "%s:%zu", devices[i]->platform_short, position);
    size_t found = SIZE_MAX;
    hgr_status_t status =
        hgr__device_spec_match((const hgr_device_info_t* const*)devices, count, candidate, &found);
    if (status || found != i)
      snprintf(candidate, sizeof(candidate), "%zu.%zu", devices[i]->platform_index,
               devices[i]->index_in_platform);
    hgr_status_free(status);
    char* copy;
    HGR_RETURN_IF_ERROR(hgr__strdup(allocator, candidate, &copy));
    devices[i]->spec = copy;
  }
  return HGR_OK;
}
