/* Waiting: for events, never in a blocking clWaitForEvents (after a failure some
 * drivers never complete what waited on the failed command; rusticl's clFinish after
 * clFlush returns early), with a scan of every node's events that names the node
 * whose command failed on the device. */
#include <errno.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc.h"
#include "executor_internal.h"
#include "hgr/opencl.h"

static hgr_status_t step_failure(const hgr_executor_t* executor, const hgr__step_t* step, cl_int code) {
  char label[160];
  hgr__graph_node_label(executor->graph, step->node_id, label, sizeof(label));
  const hgr__node_t* node = &executor->graph->nodes[step->node_id];
  const char* spec = hgr__device_spec(executor->instance, step->device_index);
  if (step->remote)
    return HGR_STATUS(HGR_STATUS_DEVICE_FAILURE, "%s (__copy %s rank %d, %s, on %s) failed on the device: %s", label,
                      step->remote->sending ? "to" : "from", step->remote->peer, hgr_pair_class_name(step->pair_class),
                      spec, hgr_opencl_error_name(code));
  if (step->kind == HGR__STEP_COPY) {
    const char* from = hgr__device_spec(executor->instance, executor->pool.storages[step->in_storages[0]].device_index);
    return HGR_STATUS(HGR_STATUS_DEVICE_FAILURE, "%s (__copy %s -> %s, %s) failed on the device: %s",
                      label, from, spec, hgr_pair_class_name(step->pair_class), hgr_opencl_error_name(code));
  }
  return HGR_STATUS(HGR_STATUS_DEVICE_FAILURE, "%s (%s on %s) failed on the device: %s", label,
                    node->func_name, spec, hgr_opencl_error_name(code));
}

/* The first kept command (in enqueue order, so runs in order and each run's nodes
 * in graph order) before absolute index limit that ended with a negative status,
 * named by its step. Commands before scan_from are known to have completed well
 * and are skipped, so polling a long graph does not query every event each time. */
hgr_status_t hgr__find_failure(hgr_executor_t* executor, uint64_t limit) {
  uint64_t base = executor->order.commands_base;
  uint64_t end = base + executor->order.command_count < limit ? base + executor->order.command_count : limit;
  bool completed_prefix = true;
  for (uint64_t c = executor->order.scan_from > base ? executor->order.scan_from : base; c < end; ++c) {
    cl_int execution = CL_COMPLETE;
    cl_int error = clGetEventInfo(executor->order.commands[c - base], CL_EVENT_COMMAND_EXECUTION_STATUS,
                                  sizeof(execution), &execution, NULL);
    if (error != CL_SUCCESS) return HGR_CL_STATUS(error, "clGetEventInfo(execution status)");
    if (execution < 0) {
      uint32_t s = executor->order.command_steps[c - base];
      if (s < executor->step_count) return step_failure(executor, &executor->steps[s], execution);
      return HGR_STATUS(HGR_STATUS_DEVICE_FAILURE, "an input, output or binding transfer failed on the device: %s",
                        hgr_opencl_error_name(execution));
    }
    completed_prefix &= execution == CL_COMPLETE;
    if (completed_prefix) executor->order.scan_from = c + 1;
  }
  return executor->transport ? hgr__remote_failure(executor) : HGR_OK;
}

/* Makes the executor refuse further work after a device failure (see
 * executor_internal.h), failing every unset bridge so no consumer waits forever. */
hgr_status_t hgr__fail_executor(hgr_executor_t* executor, hgr_status_t failure) {
  hgr__bridges_fail_unset(&executor->order.bridges);
  if (!executor->failure) {
    char* text = hgr_status_to_string(failure);
    executor->failure = HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION,
                                   "an earlier run failed on the device (%s); OpenCL leaves the queues of a "
                                   "context undefined after a failed command, so release this executor and "
                                   "create a new one",
                                   text ? text : hgr_status_message(failure));
    hgr__free(hgr_allocator_system(), text); /* hgr_status_to_string's: free()'d */
  }
  return failure;
}

hgr_status_t hgr__check_usable(const hgr_executor_t* executor) {
  if (!executor->failure) return HGR_OK;
  return HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION, "%s", hgr_status_message(executor->failure));
}

/* A semaphore that event callbacks post to wake the host thread waiting in
 * await_events. It is reference-counted, because a callback can run after the wait
 * has ended (the wait also ends on a failure or on another event), and one
 * registered on a command stuck behind a failed command never runs at all: that
 * waiter is then left to the driver, like such commands' events. */
typedef struct waker_t {
  sem_t sem;
  atomic_int refs;
} waker_t;

/* The waker's memory is the system allocator's, not the executor's: its last
 * reference may be a callback's that runs after the wait returned (the driver sets an
 * event's status before it calls the callbacks), when the caller may already have
 * released the executor and its allocator (include/hgr/allocator.h). Waiting for the
 * callbacks instead, yielding until they had dropped their references, cost a run of
 * 3 small kernels on PoCL's pthread device 58-70 against 21-36 us (bench/notes.md). */
static void release_waker(waker_t* waker) {
  if (waker && atomic_fetch_sub(&waker->refs, 1) == 1) {
    sem_destroy(&waker->sem);
    hgr__free(hgr_allocator_system(), waker);
  }
}

/* Runs on a driver thread: sem_post only counts and wakes, it never blocks. */
static void CL_CALLBACK wake_waiter(cl_event event, cl_int status, void* user_data) {
  (void)event;
  (void)status;
  waker_t* waker = user_data;
  /* Pairs with the increment in watch_event: what the waiting thread wrote before
   * registering the callback is visible here, whatever the driver synchronizes with
   * (ThreadSanitizer does not see the drivers' own locks). */
  (void)atomic_load_explicit(&waker->refs, memory_order_acquire);
  sem_post(&waker->sem);
  release_waker(waker);
}

/* Has waker posted once event completes; false when the callback cannot be set. */
static bool watch_event(waker_t* waker, cl_event event) {
  atomic_fetch_add(&waker->refs, 1); /* the callback's */
  if (clSetEventCallback(event, CL_COMPLETE, wake_waiter, waker) == CL_SUCCESS) return true;
  atomic_fetch_sub(&waker->refs, 1);
  return false;
}

/* Sleeps on waker for at most timeout_ns (a post ends it early). */
static void wait_for_waker(waker_t* waker, long timeout_ns) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_nsec += timeout_ns;
  until.tv_sec += until.tv_nsec / 1000000000L;
  until.tv_nsec %= 1000000000L;
  while (sem_timedwait(&waker->sem, &until) != 0 && errno == EINTR) {
  }
}

#define HGR_FAILURE_SCAN_NS 1000000L /* scan every node's events at most this often */
/* The longest sleep on the waker before the events are looked at (and scanned for a
 * failure) again: what finds a failure whose commands never complete, so no callback
 * comes. Not 1 ms: on the 2-vCPU VM, a semaphore wait with a 1 ms deadline made a run
 * of 3 small kernels on PoCL's pthread device take 97-115 us where an untimed wait
 * took 57-68 us (host CPU 15-16 against 6 us a node); from a 50 ms deadline on it
 * costs what an untimed wait does (bench/notes.md, "The per-run floor"). */
#define HGR_WAKER_TIMEOUT_NS 100000000L

/* Waits until every event in events has completed, or until a node's command has
 * failed. It never blocks in clWaitForEvents, because after a failure some drivers
 * (PoCL 3.1) never complete the commands that waited on the failed one: a blocking
 * wait on them would never return. Instead it sleeps on a semaphore that a callback
 * on the first pending event posts (waking as fast as clWaitForEvents does, where a
 * sleep-and-poll loop woke tens of microseconds late on small copies), at most
 * HGR_WAKER_TIMEOUT_NS at a time, and scans every node's events for a failure at most
 * every millisecond and once at the end (only commands kept before absolute index limit:
 * a later run's failure is not this wait's; a scan queries each event, which on a long
 * graph cost more host time than the nodes themselves). Executors with host-driven
 * queues (Oclgrind, which runs commands only while the host waits on them, and does
 * not call callbacks registered on completed events) drive them on the way and poll
 * instead, sleeping from 5 us, doubling to at most 100 us. */
hgr_status_t hgr__await_events(hgr_executor_t* executor, const cl_event* events, uint32_t count, uint64_t limit) {
  bool host_driven = hgr__queue_set_host_driven(&executor->order.queues);
  long sleep_ns = 5000;
  uint64_t last_scan = hgr__monotonic_ns();
  waker_t* waker = NULL;
  cl_event watched = NULL; /* the event waker's latest callback is on */
  hgr_status_t status = HGR_OK;
  for (;;) {
    if ((status = hgr__bridges_drive(&executor->order.bridges, &executor->order.queues))) break;
    cl_event pending = NULL;
    for (uint32_t i = 0; i < count && !pending && !status; ++i) {
      cl_int execution = CL_COMPLETE;
      cl_int error = clGetEventInfo(events[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(execution), &execution, NULL);
      if (error != CL_SUCCESS) status = HGR_CL_STATUS(error, "clGetEventInfo(execution status)");
      else if (execution > CL_COMPLETE) pending = events[i];
    }
    if (status) break;
    uint64_t now = hgr__monotonic_ns();
    if (!pending || now - last_scan >= (uint64_t)HGR_FAILURE_SCAN_NS) {
      hgr_status_t failure = hgr__find_failure(executor, limit);
      if (failure) {
        status = hgr__fail_executor(executor, failure);
        break;
      }
      last_scan = now;
    }
    if (!pending) break;
    if (!host_driven && !waker) {
      waker = hgr__alloc(hgr_allocator_system(), sizeof(*waker));
      if (waker && sem_init(&waker->sem, 0, 0) != 0) {
        hgr__free(hgr_allocator_system(), waker);
        waker = NULL;
      }
      if (waker) atomic_init(&waker->refs, 1); /* ours */
    }
    if (waker && (pending == watched || watch_event(waker, pending))) {
      watched = pending;
      wait_for_waker(waker, HGR_WAKER_TIMEOUT_NS);
      continue;
    }
    struct timespec pause = {0, sleep_ns};
    nanosleep(&pause, NULL);
    if (sleep_ns < 100000) sleep_ns *= 2;
  }
  release_waker(waker);
  return status;
}

/* After a device failure: gives the commands that can still finish (those not
 * waiting on a failed command; every bridge is failed by now) up to a second to do
 * so before their host memory is freed. Commands that waited on a failed command
 * never run on PoCL; other drivers terminate them. True when every queue drained. */
bool hgr__drain_after_failure(hgr_executor_t* executor) {
  struct timespec pause = {0, 1000000};
  for (int attempt = 0; attempt < 1000; ++attempt) {
    hgr_status_free(hgr__bridges_drive(&executor->order.bridges, &executor->order.queues));
    bool pending = false;
    for (uint32_t q = 0; q < executor->order.queues.count && !pending; ++q) {
      cl_int execution = CL_COMPLETE;
      if (executor->order.queues.queues[q].last)
        clGetEventInfo(executor->order.queues.queues[q].last, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(execution),
                       &execution, NULL);
      pending = execution > CL_COMPLETE;
    }
    if (!pending) return true;
    nanosleep(&pause, NULL);
  }
  return false;
}
