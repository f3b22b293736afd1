/* Programs of the embedded kernel sources, built per executor device on first use,
 * so only the programs a graph uses are built. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "executor_internal.h"
#include "kernel_sources.h"

/* Slot of (executor device d, source s) in executor->programs. */
static size_t program_slot(size_t device_slot, size_t source_index) {
  return device_slot * hgr__kernel_source_count + source_index;
}

static hgr_status_t build_failure(cl_int error, cl_program program, cl_device_id device,
                                  const char* source_name, const char* spec) {
  char log[2048] = "";
  size_t size = 0;
  if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, sizeof(log) - 1, log, &size) !=
      CL_SUCCESS) {
    /* The log is longer than the buffer: fetch the whole and keep its head. */
    char* whole = NULL;
    if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, NULL, &size) == CL_SUCCESS &&
        (whole = calloc(size + 1, 1)) &&
        clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, whole, NULL) == CL_SUCCESS)
      snprintf(log, sizeof(log), "%s", whole);
    free(whole);
  }
  return HGR_CL_STATUS(error, "clBuildProgram(kernels/%s.cl) on %s; build log: %.1500s", source_name,
                       spec, log[0] ? log : "(empty)");
}


hgr_status_t hgr__program_get(hgr_executor_t* executor, size_t device_slot, const char* source_name,
                              cl_program* out_program) {
  *out_program = NULL;
  size_t source_index = hgr__kernel_source_count;
  for (size_t i = 0; i < hgr__kernel_source_count; ++i)
    if (!strcmp(hgr__kernel_sources[i].name, source_name)) source_index = i;
  if (source_index == hgr__kernel_source_count)
    return HGR_STATUS(HGR_STATUS_INTERNAL, "no embedded kernel source 'kernels/%s.cl'", source_name);
  if (!executor->programs) {
    executor->program_count = executor->device_count * hgr__kernel_source_count;
    executor->programs = calloc(executor->program_count ? executor->program_count : 1, sizeof(cl_program));
    if (!executor->programs) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  }
  cl_program* slot = &executor->programs[program_slot(device_slot, source_index)];
  if (*slot) {
    *out_program = *slot;
    return HGR_OK;
  }
  size_t device_index = executor->devices[device_slot].device_index;
  const hgr__device_t* device = &executor->instance->devices[device_index];
  cl_context context;
  HGR_RETURN_IF_ERROR(hgr__instance_context(executor->instance, device_index, &context));
  const char* text = hgr__kernel_sources[source_index].text;
  size_t length = hgr__kernel_sources[source_index].length;
  cl_int error = CL_SUCCESS;
  cl_program program = clCreateProgramWithSource(context, 1, &text, &length, &error);
  if (error != CL_SUCCESS || !program)
    return HGR_CL_STATUS(error, "clCreateProgramWithSource(kernels/%s.cl) on %s", source_name,
                         device->info.spec);
  error = clBuildProgram(program, 1, &device->device, "", NULL, NULL);
  if (error != CL_SUCCESS) {
    hgr_status_t status = build_failure(error, program, device->device, source_name, device->info.spec);
    clReleaseProgram(program);
    return status;
  }
  *slot = program;
  *out_program = program;
  return HGR_OK;
}
