/* hgr — interoperation with the caller's own OpenCL objects.
 *
 * The instance's platforms, devices and contexts, an executor's inputs and outputs
 * bound to the caller's cl_mem, and outputs handed out as device buffers with an
 * event that says when their values are there, so the caller's OpenCL code or
 * another executor reads them without a trip through host memory; and such device
 * buffers bound as inputs with their event (hgr_executor_bind_device_buffer), so
 * that a streaming model's state goes from one run to the next on the device.
 *
 * Not included by hgr.h: it needs the OpenCL headers. Include it after defining
 * CL_TARGET_OPENCL_VERSION if you want another version than 1.2.
 *
 * Thread safety: hgr_instance_device_opencl is thread-safe like the instance.
 * hgr_executor_bind_buffer, hgr_executor_bind_device_buffer and
 * hgr_executor_output_buffer are calls on the executor, and hgr_fence_output_buffer
 * on the fence's executor (thread-compatible: one thread at a time, see
 * hgr/executor.h and hgr/fence.h).
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

/* ---- device values as inputs: state that stays on the device ----
 *
 * Binds input `index` to a device buffer and the event that says when its values
 * are there (hgr_executor_output_buffer's or hgr_fence_output_buffer's, or the
 * caller's own): the next run's first commands that read the input wait for
 * buffer->ready on the device, so run k's output feeds run k+1 (of this executor
 * or another) without a trip through host memory and without a wait on the host:
 * the run is enqueued at once and starts when the event completes. buffer->bytes
 * must equal the input's bytes, buffer->mem hold at least that many, and
 * buffer->ready (may be NULL: nothing to wait for) belong to mem's context.
 * Nothing in *buffer is taken over: mem and ready are retained for as long as the
 * binding needs them, and the caller releases its struct when it likes
 * (hgr_device_buffer_release), right after this call if it wants.
 *
 * How the values get in (hgr_executor_binding_kind):
 *   - HGR_BINDING_BUFFER: mem belongs to the context of the input storage's device
 *     and holds the storage's bytes: mem is the storage, as with
 *     hgr_executor_bind_buffer, and no copy is made. A node that writes the input's
 *     storage in place (docs/ops.md) writes mem.
 *   - HGR_BINDING_DEVICE_COPY: the same context, but mem is smaller than the
 *     storage (the storage plan shares it with a larger entry): each run copies mem
 *     into the storage on the device (clEnqueueCopyBuffer).
 *   - HGR_BINDING_STAGED_COPY: mem belongs to another context (another platform,
 *     or an instance with a context per device): each run reads mem into host
 *     staging on a queue of buffer->device_index (which must be the instance device
 *     that holds mem) and writes it into the storage, ordered by a bridge event
 *     (runtime/exec/bridge.c), still without a wait on the host. On a host-driven
 *     device (Oclgrind) holding mem, that read blocks: Oclgrind runs only while the
 *     host waits.
 * buffer->ready orders the first run after the binding only; later runs read mem
 * as it is then, so the caller's own commands writing mem must have completed
 * before a later run starts, and the runs' reads before the caller writes mem
 * again (as for hgr_executor_bind_buffer). An event of another context than the
 * storage's is waited for through a bridge. A failed ready event fails the run
 * (DEVICE_FAILURE, "an input, output or binding transfer failed"). Binding again
 * replaces the binding; hgr_executor_unbind ends it.
 *
 * Aliasing: bind the output of a run as an input of the same executor through
 * hgr_fence_output_buffer, whose buffer nothing of the executor writes again (a
 * copy of the output made on the device, once); hgr_executor_output_buffer gives
 * the output's storage itself, which the next run overwrites while it reads it.
 *
 * Errors: INVALID_ARGUMENT for a NULL buffer or mem, a byte count that differs
 * from the input's (naming both), a ready event of another context than mem's, or
 * a device_index that is not mem's device when a staged copy needs it;
 * FAILED_PRECONDITION for an input shared between executors (share_params_from)
 * or on another rank; OpenCL failures naming the call. */
HGR_API hgr_status_t hgr_executor_bind_device_buffer(hgr_executor_t* executor, size_t index,
                                                     const hgr_device_buffer_t* buffer);

#ifdef __cplusplus
}
#endif

#endif /* HGR_OPENCL_H_ */
