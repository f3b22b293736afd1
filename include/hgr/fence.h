/* hgr — fences: one run of an executor as an object.
 *
 * hgr_executor_run_async starts a run like hgr_executor_run and returns a fence
 * that stands for that run: it can be waited for, queried and released, and it
 * reads that run's outputs even after later runs were started, so a program can
 * keep several runs in flight and collect each one's results in turn.
 *
 * Outputs are double-buffered on demand: while the caller holds the fence of the
 * latest run, a later run (or an input write into an output's storage) first
 * copies that output, on the device, into a buffer of the fence's, ordered after
 * the run's writes and before the new ones; a released fence costs nothing.
 *
 * Failures: a failed command fails the fence of its run and of every run not yet
 * complete (and the executor, see hgr/executor.h); fences of runs that completed
 * before keep their result. A fence may outlive its executor: it then only answers
 * what it knew (its result, its run number) and its outputs are gone.
 *
 * Thread safety: a fence is confined to its executor's thread. Waiting, querying
 * and reading outputs drive the executor's queues and bookkeeping (flushing,
 * retiring runs, copying outputs), and the fence's reference count is not atomic,
 * so every call on a fence, hgr_fence_release included, counts as a call on its
 * executor: make it from the thread that uses the executor, or otherwise make sure
 * that it never overlaps another call on the executor or on any of its fences
 * (hgr_executor_release included). Waiting for one run from a second thread while
 * the first starts the next is not supported; wait for fences on the thread that
 * starts the runs. Once the executor has been released, a fence is a plain object
 * that one thread at a time may query and release. */
#ifndef HGR_FENCE_H_
#define HGR_FENCE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hgr/executor.h"
#include "hgr/export.h"
#include "hgr/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hgr_fence_s hgr_fence_t;

/* hgr_executor_run, returning the run's fence, owned by the caller (release it
 * with hgr_fence_release; holding many unreleased fences holds a copy of the
 * outputs each). *out_fence is NULL on failure. */
HGR_API hgr_status_t hgr_executor_run_async(hgr_executor_t* executor, hgr_fence_t** out_fence);

/* Waits until the run completed: HGR_OK, or the DEVICE_FAILURE naming the node.
 * Also completes every earlier run. FAILED_PRECONDITION when the executor was
 * released before the run completed. */
HGR_API hgr_status_t hgr_fence_wait(hgr_fence_t* fence);

/* Whether the run completed, without waiting (a failure is returned as its status).
 * On a host-driven device (Oclgrind) it runs what is ready first. */
HGR_API hgr_status_t hgr_fence_query(hgr_fence_t* fence, bool* out_complete);

/* The run's output `index` (bytes must equal its size), waiting only for the work
 * it depends on; valid whatever was started since. FAILED_PRECONDITION once the
 * executor was released. */
HGR_API hgr_status_t hgr_fence_get_output(hgr_fence_t* fence, size_t index, void* data, size_t bytes);

/* Which run it is: 1 for the executor's first; 0 for NULL. */
HGR_API uint64_t hgr_fence_run(const hgr_fence_t* fence);

/* Releases the fence (the run goes on if it has not completed). Fences may outlive
 * their executor, after which they only answer what they knew. NULL is a no-op. */
HGR_API void hgr_fence_release(hgr_fence_t* fence);

#ifdef __cplusplus
}
#endif

#endif /* HGR_FENCE_H_ */
