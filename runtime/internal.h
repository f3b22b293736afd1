/* Internal declarations shared between runtime files (never installed).
 *
 * Cross-file functions are named hgr__<module>_<verb>. OpenCL is included here with
 * CL_TARGET_OPENCL_VERSION 120 (set by the build), so the runtime runs on OpenCL 1.2
 * devices and reaches newer features only after checking a device's version. */
#ifndef HGR_INTERNAL_H_
#define HGR_INTERNAL_H_

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#ifndef CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#endif
#include <CL/cl.h>

#include "hgr/device.h"
#include "hgr/status.h"

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

/* strdup that reports failure as a status. */
hgr_status_t hgr__strdup(const char* text, char** out_copy);

/* ---- instance and devices ------------------------------------------------------ */

typedef struct hgr__device_t {
  hgr_device_info_t info;
  cl_platform_id platform;
  cl_device_id device;
  size_t context_group; /* index into hgr_instance_s.contexts */
  /* The driver runs commands only while the host waits on them (Oclgrind 21.10
   * ignores clFlush), so an event callback alone never fires: cross-context bridges
   * from this device use a host waiter thread instead. */
  bool host_driven;
  /* An unmap enqueued before its non-blocking map has run is refused with
   * CL_INVALID_VALUE (Mesa rusticl 22.3), so this device's buffers are never mapped
   * asynchronously by hgr. */
  bool late_map_registration;
  /* Setting a user event of this device's context to a negative status, while
   * commands wait on it, frees events those commands still use (PoCL 3.1 aborts in
   * pocl_lock_events_inorder). Bridges into it are completed normally instead; the
   * failure still reaches the caller from the failed command's own event. */
  bool fragile_failed_user_events;
} hgr__device_t;

/* Whether hgr may map this device's buffers with a non-blocking map while other
 * commands are queued. Not on rusticl (late map registration), nor on host-driven
 * Oclgrind, which counts a buffer as mapped from the clEnqueueMapBuffer call and
 * reports kernels enqueued before the map, that run before it, as writing to a
 * mapped buffer. */
static inline bool hgr__device_maps_async(const hgr__device_t* device) {
  return !device->late_map_registration && !device->host_driven;
}

struct hgr_instance_s {
  hgr_instance_options_t options;
  hgr__device_t* devices;
  size_t device_count;
  hgr_device_info_t** infos; /* &devices[i].info, for spec matching */
  hgr_skipped_platform_t* skipped;
  size_t skipped_count;
  cl_context* contexts; /* one per context group, created on first use */
  size_t context_count;
  pthread_mutex_t mutex; /* guards lazy context creation */
};

/* Fills info (all but spec/index fields) and the CL handles for one device. Strings
 * are heap copies freed by hgr__device_info_free. */
hgr_status_t hgr__device_query(cl_platform_id platform, cl_device_id device,
                               hgr_device_info_t* info);
void hgr__device_info_free(hgr_device_info_t* info);

/* The short platform name used in spec strings: "pocl" for PoCL, otherwise the first
 * word of the platform name in lower case. Heap copy. */
hgr_status_t hgr__platform_short_name(const char* platform_name, char** out_short);

/* Pure spec matching over a device list (no OpenCL): used by the instance and by
 * tests with a fake list. Errors as hgr_instance_find_device. */
hgr_status_t hgr__device_spec_match(const hgr_device_info_t* const* devices, size_t count,
                                    const char* spec, size_t* out_index);

/* Gives every device its canonical spec string (name:index when that round-trips
 * through hgr__device_spec_match, else "P.D"). */
hgr_status_t hgr__device_assign_specs(hgr_device_info_t* const* devices, size_t count);

/* The device's context, created on first use (thread-safe). Borrowed from the
 * instance. */
hgr_status_t hgr__instance_context(hgr_instance_t* instance, size_t device_index,
                                   cl_context* out_context);

/* Appends to status (when there is one) the platforms discovery skipped and why:
 * a device that is not found may be on a platform whose OpenCL queries failed. */
hgr_status_t hgr__instance_explain_skipped(const hgr_instance_t* instance, hgr_status_t status);

/* Creates an in-order command queue on the device (clCreateCommandQueue, which
 * every platform has; Oclgrind 21.10 lacks the 2.0 entry point and the ICD loader
 * spins forever calling it). The caller releases it. */
hgr_status_t hgr__instance_create_queue(hgr_instance_t* instance, size_t device_index,
                                        bool profiling, cl_command_queue* out_queue);

#endif /* HGR_INTERNAL_H_ */
