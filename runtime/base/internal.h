/* Internal declarations shared between runtime files (never installed).
 *
 * Cross-file functions are named hgr__<module>_<verb>. OpenCL is included here with
 * CL_TARGET_OPENCL_VERSION 120 (set by the build), so the runtime runs on OpenCL 1.2
 * devices and reaches newer features only after checking a device's version. */
#ifndef HGR_INTERNAL_H_
#define HGR_INTERNAL_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#ifndef CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#endif
#include <CL/cl.h>

#include "alloc.h"
#include "hgr/device.h"
#include "hgr/params.h"
#include "hgr/status.h"
#include "shape.h"

/* ---- status helpers ---------------------------------------------------------- */

/* A status for a failed OpenCL call: "<what> failed: CL_ERROR_NAME". what names the
 * function and, where useful, the object and device: "clCreateBuffer(storage 3) on
 * pocl:0". The code is derived from the error (allocation failures are
 * RESOURCE_EXHAUSTED, failed dependencies DEVICE_FAILURE, the rest INTERNAL). */
hgr_status_t hgr__cl_status(cl_int error, const char* file, int line, const char* what_format, ...)
    HGR_PRINTF(4, 5);
#define HGR_CL_STATUS(error, ...) hgr__cl_status((error), __FILE__, __LINE__, __VA_ARGS__)

/* The status code that best describes an OpenCL error. */
hgr_status_code_t hgr__cl_status_code(cl_int error);

#define HGR_RETURN_IF_ERROR(expr)          \
  do {                                     \
    hgr_status_t hgr__status_ = (expr);    \
    if (hgr__status_) return hgr__status_; \
  } while (0)

/* Overflow-checked size arithmetic: return false on overflow. */
static inline bool hgr__mul_u64(uint64_t a, uint64_t b, uint64_t* out) {
  return !__builtin_mul_overflow(a, b, out);
}
static inline bool hgr__add_u64(uint64_t a, uint64_t b, uint64_t* out) {
  return !__builtin_add_overflow(a, b, out);
}

/* CLOCK_MONOTONIC in nanoseconds. */
static inline uint64_t hgr__monotonic_ns(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

/* A copy of text (NULL counts as "") from allocator, failure reported as a status. */
hgr_status_t hgr__strdup(hgr_allocator_t allocator, const char* text, char** out_copy);

/* An empty params list whose memory comes from allocator (hgr_params_create: the
 * system's); the allocator it was made with. */
hgr_status_t hgr__params_create_in(hgr_allocator_t allocator, hgr_params_t** out_params);
hgr_allocator_t hgr__params_allocator(const hgr_params_t* params);
/* hgr_params_load_memory, and a copy of params, into params made with allocator. */
hgr_status_t hgr__params_load_memory_in(hgr_allocator_t allocator, const void* data, size_t length,
                                        hgr_params_t** out_params);
hgr_status_t hgr__params_copy(hgr_allocator_t allocator, const hgr_params_t* params,
                              hgr_params_t** out_copy);

/* For passes that replace some params of a graph (params.c): appends from's params
 * to params without copying their data, leaving from empty (their names must be
 * new to params, and from must have params' allocator: make it with
 * hgr__params_create_in(hgr__params_allocator(params), ...); otherwise INTERNAL;
 * RESOURCE_EXHAUSTED leaves both as they were); removes param i wherever drop[i]
 * (one flag per param), keeping the others in order. */
hgr_status_t hgr__params_take(hgr_params_t* params, hgr_params_t* from);
void hgr__params_drop(hgr_params_t* params, const bool* drop);

#endif /* HGR_INTERNAL_H_ */
