/* What a test program linked with the OpenCL fault shim (fault_shim.c, linked by
 * hgr_test(... SHIM) in tests/CMakeLists.txt) can ask of it, beyond the environment
 * variables fault_shim.c describes:
 *   - OpenCL object balance: every context, queue, buffer, program, kernel and event
 *     that the program (hgr or the test) created or retained, released again. The
 *     shim counts them on every call; tests take a mark before creating an executor
 *     and check the balance against it after releasing it, and against zero at exit.
 *   - A kernel that fails on the device: every later enqueue of the kernel named by
 *     its OpenCL function name waits on a user event that the shim sets to a
 *     negative status right after the enqueue, so the command (and everything that
 *     waits on it, across contexts too) fails on the device, as a real device
 *     failure would. The library holds no test hook for this.
 * Thread-compatible: call these from the thread that drives the executors. */
#ifndef HGR_TESTS_FAULT_SHIM_H_
#define HGR_TESTS_FAULT_SHIM_H_

#include <stdbool.h>
#include <stddef.h>

#include <CL/cl.h>

/* Live objects per kind (context, queue, buffer, program, kernel, event) at a moment. */
typedef struct hgr_fault_shim_mark_t {
  long live[6];
} hgr_fault_shim_mark_t;

/* The live objects now, once the callbacks running on driver threads have returned
 * (one that sets a user event drops its own reference just after). */
hgr_fault_shim_mark_t hgr_fault_shim_mark(void);

/* True when every kind has as many live objects as at `mark` (NULL: none, as at the
 * program's start). Otherwise false, with the difference per kind written to
 * `message` ("buffer:+1,event:+2 live objects more than at the mark"). Contexts are
 * compared only without a mark: the instance makes one on first use and keeps it
 * until its own release. */
bool hgr_fault_shim_balanced_since(const hgr_fault_shim_mark_t* mark, char* message, size_t size);

/* From now on, each clEnqueueNDRangeKernel of a kernel whose CL_KERNEL_FUNCTION_NAME
 * is `kernel_name` fails on the device with `status` (negative, e.g.
 * CL_OUT_OF_RESOURCES). NULL stops it. */
void hgr_fault_shim_fail_kernel(const char* kernel_name, cl_int status);

/* How many enqueues have been made to fail so far. */
unsigned long hgr_fault_shim_failed_kernel_count(void);

/* Releases the user events that failed those enqueues. They are kept until the
 * executor that enqueued them is released (PoCL 3.1 still touches a failed user
 * event after the call that failed it returns); call this after that. */
void hgr_fault_shim_release_failed_events(void);

/* The same after the release of an executor whose run failed on the device, except
 * for events: hgr_executor_release leaves to the driver the events that commands
 * stuck behind the failed one may still name (PoCL 3.1 never completes them, and
 * does not retain the events of a wait list; see hgr_executor_release). Every other
 * kind must balance, and events may only be more, never fewer; the extra events are
 * printed and then accepted: later marks and the check at exit do not count them. */
bool hgr_fault_shim_balanced_after_failure(const hgr_fault_shim_mark_t* mark, char* message, size_t size);

/* Fails the running cmocka test unless the OpenCL objects balance since `mark`. */
#define ASSERT_OPENCL_BALANCED(mark)                                          \
  do {                                                                        \
    char balance_[256];                                                       \
    if (!hgr_fault_shim_balanced_since((mark), balance_, sizeof(balance_)))   \
      fail_msg("%s:%d: OpenCL objects leaked: %s", __FILE__, __LINE__, balance_); \
  } while (0)

/* The same, after the release of an executor whose run failed on the device. */
#define ASSERT_OPENCL_BALANCED_AFTER_FAILURE(mark)                                  \
  do {                                                                              \
    char balance_[256];                                                             \
    if (!hgr_fault_shim_balanced_after_failure((mark), balance_, sizeof(balance_))) \
      fail_msg("%s:%d: OpenCL objects leaked: %s", __FILE__, __LINE__, balance_);   \
  } while (0)

/* For main(), after the last release: 0 when every OpenCL object is released, else
 * prints what is left and returns 1. */
int hgr_fault_shim_exit_status(const char* program);

#endif /* HGR_TESTS_FAULT_SHIM_H_ */
