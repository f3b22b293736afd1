/* The raw OpenCL baselines' common helpers: finding a device by the same spec
 * strings hgr uses ("pocl:1", "rusticl:0"), contexts, queues, and building a kernel
 * file. Only the OpenCL API is used here and in raw_chain.c and raw_copy.c: the
 * baselines are what a careful hand-written host program costs, with no hgr code in
 * between. They are benchmarks, not a library: an OpenCL error prints the call and
 * the error code and exits. */
#ifndef HGR_BENCH_RAW_CL_H_
#define HGR_BENCH_RAW_CL_H_

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <stdbool.h>
#include <stddef.h>

/* Exits with a message naming the call when error is not CL_SUCCESS. */
#define RAW_CHECK(call) raw_check((call), #call, __FILE__, __LINE__)
void raw_check(cl_int error, const char* what, const char* file, int line);

typedef struct raw_device_t {
  cl_platform_id platform;
  cl_device_id device;
  char platform_name[128];
} raw_device_t;

/* Finds the device named by spec: a case-insensitive substring of the platform name
 * ("pocl" also matches "Portable Computing Language"), a colon, and the index of the
 * device within that platform. Exits when there is none. */
raw_device_t raw_find_device(const char* spec);

/* True when the two devices belong to one platform (the baselines then share one
 * context, as hgr does by default). */
bool raw_same_platform(const raw_device_t* a, const raw_device_t* b);

/* A context holding the count devices (all of one platform). */
cl_context raw_create_context(const raw_device_t* devices, cl_uint count);

/* An in-order queue without profiling. */
cl_command_queue raw_create_queue(cl_context context, const raw_device_t* device);

/* Builds the OpenCL C file at path for device (no build options, as hgr). */
cl_program raw_build_file(cl_context context, const raw_device_t* device, const char* path);

/* Waits for event and releases it (clWaitForEvents, never clFlush + clFinish:
 * rusticl's clFinish returns early after a clFlush). */
void raw_wait_release(cl_event event);

#endif /* HGR_BENCH_RAW_CL_H_ */
