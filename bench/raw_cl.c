/* Raw OpenCL helpers for the baselines (raw_cl.h). */
#include "raw_cl.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void raw_check(cl_int error, const char* what, const char* file, int line) {
  if (error == CL_SUCCESS) return;
  fprintf(stderr, "%s:%d: %s failed with OpenCL error %d\n", file, line, what, (int)error);
  exit(1);
}

static bool contains_nocase(const char* haystack, const char* needle, size_t needle_length) {
  size_t length = strlen(haystack);
  for (size_t i = 0; needle_length <= length && i <= length - needle_length; ++i) {
    size_t k = 0;
    while (k < needle_length && tolower((unsigned char)haystack[i + k]) == tolower((unsigned char)needle[k])) ++k;
    if (k == needle_length) return true;
  }
  return false;
}

raw_device_t raw_find_device(const char* spec) {
  const char* colon = strchr(spec, ':');
  if (!colon || colon == spec) {
    fprintf(stderr, "raw: device spec '%s' is not PLATFORM:INDEX\n", spec);
    exit(2);
  }
  size_t name_length = (size_t)(colon - spec);
  cl_uint wanted = (cl_uint)atoi(colon + 1);
  cl_platform_id platforms[16];
  cl_uint platform_count = 0;
  RAW_CHECK(clGetPlatformIDs(16, platforms, &platform_count));
  if (platform_count > 16) platform_count = 16;
  for (cl_uint p = 0; p < platform_count; ++p) {
    raw_device_t found = {platforms[p], NULL, {0}};
    if (clGetPlatformInfo(platforms[p], CL_PLATFORM_NAME, sizeof(found.platform_name) - 1, found.platform_name,
                          NULL) != CL_SUCCESS)
      continue;
    bool match = contains_nocase(found.platform_name, spec, name_length) ||
                 (name_length == 4 && !strncmp(spec, "pocl", 4) &&
                  contains_nocase(found.platform_name, "Portable Computing Language", 27));
    cl_device_id devices[16];
    cl_uint device_count = 0;
    if (!match || clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 16, devices, &device_count) != CL_SUCCESS ||
        wanted >= device_count)
      continue;
    found.device = devices[wanted];
    return found;
  }
  fprintf(stderr, "raw: no OpenCL device matches '%s'\n", spec);
  exit(2);
}

bool raw_same_platform(const raw_device_t* a, const raw_device_t* b) { return a->platform == b->platform; }

cl_context raw_create_context(const raw_device_t* devices, cl_uint count) {
  cl_device_id ids[8];
  for (cl_uint i = 0; i < count && i < 8; ++i) ids[i] = devices[i].device;
  cl_context_properties properties[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)devices[0].platform, 0};
  cl_int error = CL_SUCCESS;
  cl_context context = clCreateContext(properties, count, ids, NULL, NULL, &error);
  RAW_CHECK(error);
  return context;
}

cl_command_queue raw_create_queue(cl_context context, const raw_device_t* device) {
  cl_int error = CL_SUCCESS;
  cl_command_queue queue = clCreateCommandQueue(context, device->device, 0, &error);
  RAW_CHECK(error);
  return queue;
}

cl_program raw_build_file(cl_context context, const raw_device_t* device, const char* path) {
  FILE* file = fopen(path, "rb");
  if (!file) {
    fprintf(stderr, "raw: cannot open kernel file %s\n", path);
    exit(2);
  }
  fseek(file, 0, SEEK_END);
  long length = ftell(file);
  fseek(file, 0, SEEK_SET);
  char* source = malloc((size_t)length + 1);
  if (!source || fread(source, 1, (size_t)length, file) != (size_t)length) {
    fprintf(stderr, "raw: cannot read kernel file %s\n", path);
    exit(2);
  }
  fclose(file);
  source[length] = 0;
  cl_int error = CL_SUCCESS;
  const char* text = source;
  size_t text_length = (size_t)length;
  cl_program program = clCreateProgramWithSource(context, 1, &text, &text_length, &error);
  RAW_CHECK(error);
  /* the kernel files include their headers (select.h ...) from their own folder */
  char options[4200] = "";
  const char* slash = strrchr(path, '/');
  if (slash && (size_t)(slash - path) < sizeof(options) - 8)
    snprintf(options, sizeof(options), "-I %.*s", (int)(slash - path), path);
  error = clBuildProgram(program, 1, &device->device, options, NULL, NULL);
  if (error != CL_SUCCESS) {
    char log[4096] = {0};
    clGetProgramBuildInfo(program, device->device, CL_PROGRAM_BUILD_LOG, sizeof(log) - 1, log, NULL);
    fprintf(stderr, "raw: building %s failed (%d): %s\n", path, (int)error, log);
    exit(1);
  }
  free(source);
  return program;
}

void raw_wait_release(cl_event event) {
  RAW_CHECK(clWaitForEvents(1, &event));
  RAW_CHECK(clReleaseEvent(event));
}
