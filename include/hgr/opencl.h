/* hgr — interoperation with the caller's own OpenCL objects.
 *
 * The instance's platforms, devices and contexts, an executor's inputs and outputs
 * bound to the caller's cl_mem, and outputs handed out as device buffers with an
 * event that says when their values are there, so the caller's OpenCL code or
 * another executor reads them without a trip through host memory.
 *
 * Not included by hgr.h: it needs the OpenCL headers. Include it after defining
 * CL_TARGET_OPENCL_VERSION if you want another version than 1.2.
 *
 * Thread safety: hgr_instance_device_opencl is thread-safe like the instance.
 * hgr_executor_bind_buffer and hgr_executor_output_buffer are calls on the
 * executor, and hgr_fence_output_buffer on the fence's executor
 * (thread-compatible: one thread at a time, see hgr/executor.h and hgr/fence.h).
 * The structs are plain values owned by the caller; hgr_device_buffer_release is
 * confined to the thread that owns the struct. The OpenCL objects in them follow
 * OpenCL's own rules (cl_mem, cl_event and contexts may be used from any thread),
 * but the ordering rules below are the caller's to keep whatever thread it uses. */
#ifndef HGR_OPENCL_H_
#define HGR_OPENCL_H_

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include "hgr/executor.h"
#include "hgr/fence.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The OpenCL objects behind instance device i (borrowed: valid while the instance
 * lives). Devices of one platform share the context unless the instance was created
 * with a context per device. */
typedef struct hgr_opencl_device_t {
  cl_platform_id platform;
  cl_device_id device;
  cl_context context;
} hgr_opencl_device_t;
HGR_API hgr_status_t hgr_instance_device_opencl(const hgr_instance_t* instance, size_t i,
                                                hgr_opencl_device_t* out_device);

/* Binds input or output `index` to the caller's buffer (retained until unbound,
 * rebound or the executor's release), which then is the storage every entry of
 * that storage id uses (executor.h, "caller-owned memory"). It must belong to the
 * context of the storage's device and hold at least the storage's bytes (which may
 * exceed the tensor's when the graph's storage plan shares the storage with a
 * larger entry); INVALID_ARGUMENT names what differs. The caller's own commands on
 * the buffer must have completed before a run that uses it is started, and the
 * runs' before the caller uses it again (hgr_executor_wait or the fence). */
HGR_API hgr_status_t hgr_executor_bind_buffer(hgr_executor_t* executor, hgr_io_t io, size_t index, cl_mem buffer);

/* An output as a device buffer, for the caller's OpenCL code or another executor
 * (hgr_executor_bind_buffer) without a trip through host memory. */
typedef struct hgr_device_buffer_t {
  cl_mem mem;          /* retained for the caller */
  size_t bytes;        /* the output's bytes, from offset 0 */
  size_t device_index; /* the instance device that holds it */
  cl_device_id device;
  cl_context context;
  cl_event ready;      /* retained; in mem's context: complete once the values are there */
} hgr_device_buffer_t;

/* The output's storage itself: no copy. It holds the latest run's values until the
 * executor writes that storage again (the next run, or set_input of an input sharing
 * it); the caller's commands reading it must have completed by then. */
HGR_API hgr_status_t hgr_executor_output_buffer(hgr_executor_t* executor, size_t index,
                                                hgr_device_buffer_t* out_buffer);

/* The fence's run's output in a buffer that nothing of the executor's writes again
 * (the storage's values are copied into it on the device, once, if the fence does
 * not hold such a copy yet). */
HGR_API hgr_status_t hgr_fence_output_buffer(hgr_fence_t* fence, size_t index, hgr_device_buffer_t* out_buffer);

/* Releases mem and ready, and clears the struct. */
HGR_API void hgr_device_buffer_release(hgr_device_buffer_t* buffer);

#ifdef __cplusplus
}
#endif

#endif /* HGR_OPENCL_H_ */
