/* Internal declarations of the device layer (instance.c, device.c): the instance and
 * its devices with their OpenCL handles and driver quirks, spec matching, contexts
 * and queues. */
#ifndef HGR_DEVICE_INTERNAL_H_
#define HGR_DEVICE_INTERNAL_H_

#include <pthread.h>

#include "internal.h"

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

/* The allocator the instance and the objects made from it use; the system
 * allocator for a NULL instance. */
hgr_allocator_t hgr__instance_allocator(const hgr_instance_t* instance);

/* The spec string of instance device device_index ("pocl:0"), for messages; "(no
 * device)" when there is none. */
const char* hgr__device_spec(const hgr_instance_t* instance, size_t device_index);

/* Fills info (all but spec/index fields) and the CL handles for one device. Strings
 * are copies from allocator, freed by hgr__device_info_free with the same allocator
 * (which frees every string of info, spec included). */
hgr_status_t hgr__device_query(hgr_allocator_t allocator, cl_platform_id platform, cl_device_id device,
                               hgr_device_info_t* info);
void hgr__device_info_free(hgr_allocator_t allocator, hgr_device_info_t* info);

/* The short platform name used in spec strings: "pocl" for PoCL, otherwise the first
 * word of the platform name in lower case. A copy from allocator. */
hgr_status_t hgr__platform_short_name(hgr_allocator_t allocator, const char* platform_name, char** out_short);

/* Pure spec matching over a device list (no OpenCL): used by the instance and by
 * tests with a fake list. Errors as hgr_instance_find_device. */
hgr_status_t hgr__device_spec_match(const hgr_device_info_t* const* devices, size_t count,
                                    const char* spec, size_t* out_index);

/* Gives every device its canonical spec string (name:index when that round-trips
 * through hgr__device_spec_match, else "P.D"), a copy from allocator, freeing the
 * spec it had with allocator. */
hgr_status_t hgr__device_assign_specs(hgr_allocator_t allocator, hgr_device_info_t* const* devices, size_t count);

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

#endif /* HGR_DEVICE_INTERNAL_H_ */
