/* Runs: ordering by storage (last writer, readers since), enqueueing every node,
 * waiting on events (never clFinish: rusticl's returns early after clFlush), host
 * inputs and outputs, and teardown. */
#include <errno.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "executor_internal.h"
#include "hgr/opencl.h"

#define HGR_FLUSH_EVERY 16 /* commands a queue may hold unflushed (TVM #16530) */

static hgr_status_t await_events(hgr_executor_t* executor, const cl_event* events, uint32_t count, uint64_t limit);
static void retire_fences(hgr_executor_t* executor, hgr_fence_t* through);
static uint32_t transfer_queue_of(hgr_executor_t* executor, uint32_t storage_id);
static hgr_status_t check_io(const hgr_executor_t* executor, const hgr_tensor_info_t* info, const char* what,
                             size_t index, const void* data, size_t bytes);
static hgr_status_t read_into(hgr_executor_t* executor, uint32_t storage_id, cl_mem mem, bool ordered, void* staging,
                              void* data, size_t bytes, const char* what);
static hgr_status_t output_staging(hgr_executor_t* executor, size_t index, size_t bytes, void** out_staging);
static hgr_status_t held_host_reserve(hgr_executor_t* executor);

/* ---- ordering ---------------------------------------------------------------------- */

hgr_status_t hgr__queue_flush(hgr_executor_t* executor, uint32_t queue) {
  hgr__queue_t* q = &executor->queues[queue];
  /* A host-driven queue runs its commands inside clFlush, blocking on any unset
   * bridge: it is driven by hgr__bridges_drive instead, only as far as is safe. */
  if (!q->unflushed || q->host_driven) return HGR_OK;
  cl_int error = clFlush(q->queue);
  if (error != CL_SUCCESS)
    return HGR_CL_STATUS(error, "clFlush on %s", hgr_instance_device(executor->instance, q->device_index)->spec);
  q->unflushed = 0;
  return HGR_OK;
}

/* Releases the command events kept since the queues were last idle, and clears the
 * trackers that borrowed them: the storages' writer and readers, and each queue's
 * last event. Called once every queue is idle (nothing left to order against), or
 * at release. */
static void forget_commands(hgr_executor_t* executor, bool release_events) {
  for (uint32_t s = 0; executor->storages && s < executor->graph->storage_count; ++s) {
    executor->storages[s].writer = (hgr__tracked_event_t){NULL, 0, 0};
    executor->storages[s].reader_count = 0;
  }
  for (uint32_t q = 0; executor->queues && q < executor->queue_count; ++q) executor->queues[q].last = NULL;
  for (uint32_t c = 0; release_events && c < executor->command_count; ++c) clReleaseEvent(executor->commands[c]);
  executor->command_count = 0;
}

hgr_status_t hgr__commands_reserve(hgr_executor_t* executor, uint32_t extra) {
  uint64_t needed = (uint64_t)executor->command_count + extra;
  if (needed <= executor->command_capacity) return HGR_OK;
  uint64_t capacity = executor->command_capacity ? executor->command_capacity : 256;
  while (capacity < needed) capacity *= 2;
  if (capacity > UINT32_MAX / 2)
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "more than %u commands in flight", UINT32_MAX / 2);
  cl_event* grown = realloc(executor->commands, (size_t)capacity * sizeof(cl_event));
  if (!grown) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  executor->commands = grown;
  uint32_t* steps = realloc(executor->command_steps, (size_t)capacity * sizeof(uint32_t));
  if (!steps) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  executor->command_steps = steps;
  executor->command_capacity = (uint32_t)capacity;
  return HGR_OK;
}

hgr_status_t hgr__keep_event(hgr_executor_t* executor, cl_event event) {
  HGR_RETURN_IF_ERROR(hgr__commands_reserve(executor, 1));
  clRetainEvent(event);
  executor->command_steps[executor->command_count] = executor->enqueue_step;
  executor->commands[executor->command_count++] = event;
  return HGR_OK;
}

/* Releases what the commands up to queue_seq (per queue) and the kept events before
 * absolute index command_end hold, all of which have completed: their kept events
 * (the trackers that borrowed them become stale through retired_seq), the host
 * memory writes read from, and the bridges they waited on. */
static void retire(hgr_executor_t* executor, const uint64_t* queue_seq, uint64_t command_end) {
  for (uint32_t q = 0; q < executor->queue_count; ++q) {
    hgr__queue_t* queue = &executor->queues[q];
    if (queue_seq[q] > queue->retired_seq) queue->retired_seq = queue_seq[q];
    if (queue->retired_seq >= queue->seq) queue->last = NULL;
  }
  uint64_t count = command_end > executor->commands_base ? command_end - executor->commands_base : 0;
  if (count > executor->command_count) count = executor->command_count;
  if (count) {
    for (uint64_t c = 0; c < count; ++c) clReleaseEvent(executor->commands[c]);
    executor->command_count -= (uint32_t)count;
    memmove(executor->commands, executor->commands + count, executor->command_count * sizeof(cl_event));
    memmove(executor->command_steps, executor->command_steps + count, executor->command_count * sizeof(uint32_t));
    executor->commands_base += count;
  }
  uint32_t kept = 0;
  for (uint32_t h = 0; h < executor->held_host_count; ++h) {
    hgr__held_host_t* held = &executor->held_host[h];
    if (held->seq <= executor->queues[held->queue].retired_seq) free(held->memory);
    else executor->held_host[kept++] = *held;
  }
  executor->held_host_count = kept;
  hgr__bridges_retire(executor);
}

/* Every command enqueued so far has completed: retires them all. */
static void retire_all(hgr_executor_t* executor) {
  uint64_t seq[executor->queue_count + 1];
  for (uint32_t q = 0; q < executor->queue_count; ++q) seq[q] = executor->queues[q].seq;
  retire(executor, seq, executor->commands_base + executor->command_count);
}

/* An upper bound on the events one run keeps: every launch, copy command and unmap,
 * the staging user event a staged copy keeps, and a map and unmap per input and
 * output bound to host memory. */
static uint32_t commands_per_run(hgr_executor_t* executor) {
  if (executor->commands_per_run) return executor->commands_per_run;
  uint64_t count = 1 + 2 * ((uint64_t)executor->graph->arg_count + executor->graph->head_count);
  for (uint32_t s = 0; s < executor->step_count; ++s) {
    const hgr__step_t* step = &executor->steps[s];
    if (step->kind == HGR__STEP_KERNEL) count += step->launch_count;
    else if (step->kind == HGR__STEP_COPY && step->path == HGR__COPY_DIRECT) count += 1;
    else if (step->kind == HGR__STEP_COPY && step->path == HGR__COPY_STAGED) count += 3;
    else if (step->kind == HGR__STEP_COPY) count += 3 * (uint64_t)step->chunk_count;
  }
  executor->commands_per_run = count < UINT32_MAX / 2 ? (uint32_t)count : UINT32_MAX / 2;
  return executor->commands_per_run;
}

hgr_status_t hgr__queue_enqueued(hgr_executor_t* executor, uint32_t queue, cl_event event) {
  hgr__queue_t* q = &executor->queues[queue];
  HGR_RETURN_IF_ERROR(hgr__keep_event(executor, event));
  /* Profiled: the nodes' commands of a run (not stepping, inputs or outputs). */
  if (executor->profiling && executor->enqueue_step != UINT32_MAX && !executor->stepping)
    HGR_RETURN_IF_ERROR(hgr__profile_command(executor, queue, event));
  q->last = event;
  q->seq++;
  if (++q->unflushed >= HGR_FLUSH_EVERY) return hgr__queue_flush(executor, queue);
  return HGR_OK;
}

static hgr_status_t add_wait(hgr_executor_t* executor, hgr__tracked_event_t tracked, uint32_t queue,
                             uint32_t* wait_count) {
  cl_event* wait = executor->wait;
  if (!tracked.event || tracked.queue == queue) return HGR_OK; /* in-order: already ordered */
  if (tracked.seq <= executor->queues[tracked.queue].retired_seq) return HGR_OK; /* completed */
  if (executor->queues[tracked.queue].context != executor->queues[queue].context)
    return HGR_STATUS(HGR_STATUS_INTERNAL, "an event of %s would enter a wait list in another context",
                      hgr_instance_device(executor->instance, executor->queues[tracked.queue].device_index)->spec);
  for (uint32_t i = 0; i < *wait_count; ++i)
    if (wait[i] == tracked.event) return HGR_OK;
  if (*wait_count + 2 >= executor->wait_capacity) /* two places stay free for bridges */
    return HGR_STATUS(HGR_STATUS_INTERNAL, "more than %u events to wait for", executor->wait_capacity);
  /* A command may not start before its queue is flushed: flush the producer so the
   * consumer's queue cannot wait forever on it. */
  HGR_RETURN_IF_ERROR(hgr__queue_flush(executor, tracked.queue));
  wait[(*wait_count)++] = tracked.event;
  return HGR_OK;
}

hgr_status_t hgr__order_storage(hgr_executor_t* executor, uint32_t storage_id, bool writing,
                                uint32_t queue, uint32_t* wait_count) {
  const hgr__storage_t* storage = &executor->storages[storage_id];
  HGR_RETURN_IF_ERROR(add_wait(executor, storage->writer, queue, wait_count));
  if (writing)
    for (uint32_t r = 0; r < storage->reader_count; ++r)
      HGR_RETURN_IF_ERROR(add_wait(executor, storage->readers[r], queue, wait_count));
  return HGR_OK;
}

void hgr__record_access(hgr_executor_t* executor, uint32_t storage_id, bool writing, cl_event event,
                        uint32_t queue) {
  hgr__storage_t* storage = &executor->storages[storage_id];
  hgr__tracked_event_t tracked = {event, queue, executor->queues[queue].seq};
  if (writing) {
    /* Everything since the last write is ordered before this write. */
    storage->reader_count = 0;
    storage->writer = tracked;
    return;
  }
  /* One reader per queue: on an in-order queue the newest covers the older ones. */
  for (uint32_t r = 0; r < storage->reader_count; ++r)
    if (storage->readers[r].queue == queue) {
      storage->readers[r] = tracked;
      return;
    }
  storage->readers[storage->reader_count++] = tracked;
}

/* ---- failures ------------------------------------------------------------------------ */

static hgr_status_t step_failure(const hgr_executor_t* executor, const hgr__step_t* step, cl_int code) {
  char label[160];
  hgr__node_label(executor->graph, step->node_id, label, sizeof(label));
  const hgr__node_t* node = &executor->graph->nodes[step->node_id];
  const char* spec = hgr_instance_device(executor->instance, step->device_index)->spec;
  if (step->kind == HGR__STEP_COPY) {
    const char* from = hgr_instance_device(executor->instance,
                                           executor->storages[step->in_storages[0]].device_index)->spec;
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
static hgr_status_t find_failure(hgr_executor_t* executor, uint64_t limit) {
  uint64_t base = executor->commands_base;
  uint64_t end = base + executor->command_count < limit ? base + executor->command_count : limit;
  bool completed_prefix = true;
  for (uint64_t c = executor->scan_from > base ? executor->scan_from : base; c < end; ++c) {
    cl_int execution = CL_COMPLETE;
    cl_int error = clGetEventInfo(executor->commands[c - base], CL_EVENT_COMMAND_EXECUTION_STATUS,
                                  sizeof(execution), &execution, NULL);
    if (error != CL_SUCCESS) return HGR_CL_STATUS(error, "clGetEventInfo(execution status)");
    if (execution < 0) {
      uint32_t s = executor->command_steps[c - base];
      if (s < executor->step_count) return step_failure(executor, &executor->steps[s], execution);
      return HGR_STATUS(HGR_STATUS_DEVICE_FAILURE, "an input, output or binding transfer failed on the device: %s",
                        hgr_opencl_error_name(execution));
    }
    completed_prefix &= execution == CL_COMPLETE;
    if (completed_prefix) executor->scan_from = c + 1;
  }
  return HGR_OK;
}

/* Makes the executor refuse further work after a device failure (see
 * executor_internal.h), failing every unset bridge so no consumer waits forever. */
static hgr_status_t fail_executor(hgr_executor_t* executor, hgr_status_t failure) {
  hgr__bridges_fail_unset(executor);
  if (!executor->failure) {
    char* text = hgr_status_to_string(failure);
    executor->failure = HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION,
                                   "an earlier run failed on the device (%s); OpenCL leaves the queues of a "
                                   "context undefined after a failed command, so release this executor and "
                                   "create a new one",
                                   text ? text : hgr_status_message(failure));
    free(text);
  }
  return failure;
}

static hgr_status_t check_usable(const hgr_executor_t* executor) {
  if (!executor->failure) return HGR_OK;
  return HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION, "%s", hgr_status_message(executor->failure));
}

/* ---- runs ------------------------------------------------------------------------------ */

static hgr_status_t enqueue_kernel(hgr_executor_t* executor, hgr__step_t* step) {
  cl_event* wait = executor->wait;
  uint32_t wait_count = 0;
  for (uint32_t i = 0; i < step->in_count; ++i)
    HGR_RETURN_IF_ERROR(hgr__order_storage(executor, step->in_storages[i], false, step->queue, &wait_count));
  for (uint32_t i = 0; i < step->out_count; ++i)
    HGR_RETURN_IF_ERROR(hgr__order_storage(executor, step->out_storages[i], true, step->queue, &wait_count));
  cl_event injected = NULL;
  if (step->node_id == executor->fail_node) {
    cl_int error = CL_SUCCESS;
    injected = clCreateUserEvent(executor->queues[step->queue].context, &error);
    if (error != CL_SUCCESS) return HGR_CL_STATUS(error, "clCreateUserEvent (failure injection)");
    wait[wait_count++] = injected;
  }
  /* The launches share the in-order queue: the first waits, the last completes the
   * step. With profiling every launch keeps its event (done[k]) to be timed. */
  cl_event event = NULL;
  cl_int error = CL_SUCCESS;
  uint32_t last = step->launch_count - 1;
  for (uint32_t k = 0; k <= last && error == CL_SUCCESS; ++k) {
    const hgr__kernel_launch_t* launch = &step->launches[k];
    cl_event timed = NULL;
    bool keep = k == last || step->done_count > 1;
    error = clEnqueueNDRangeKernel(executor->queues[step->queue].queue, launch->kernel, launch->launch.work_dim, NULL,
                                   launch->launch.global, launch->launch.use_local ? launch->launch.local : NULL,
                                   k == 0 ? wait_count : 0, k == 0 && wait_count ? wait : NULL, keep ? &timed : NULL);
    if (k == last) event = timed;
    else if (timed) {
      if (step->done[k]) clReleaseEvent(step->done[k]);
      step->done[k] = timed;
    }
  }
  if (injected) {
    clSetUserEventStatus(injected, executor->fail_code);
    /* Kept until release: PoCL 3.1 still touches a failed user event after the
     * call that failed it returns. */
    if (executor->injected) clReleaseEvent(executor->injected);
    executor->injected = injected;
  }
  if (error != CL_SUCCESS) {
    char label[160];
    return HGR_CL_STATUS(error, "clEnqueueNDRangeKernel(%s) for %s on %s",
                         executor->graph->nodes[step->node_id].func_name,
                         hgr__node_label(executor->graph, step->node_id, label, sizeof(label)),
                         hgr_instance_device(executor->instance, step->device_index)->spec);
  }
  uint32_t slot = step->done_count - 1; /* the step's completion */
  if (step->done[slot]) clReleaseEvent(step->done[slot]);
  step->done[slot] = event; /* takes the enqueue's reference */
  HGR_RETURN_IF_ERROR(hgr__queue_enqueued(executor, step->queue, event));
  for (uint32_t i = 0; i < step->in_count; ++i)
    hgr__record_access(executor, step->in_storages[i], false, event, step->queue);
  for (uint32_t i = 0; i < step->out_count; ++i)
    hgr__record_access(executor, step->out_storages[i], true, event, step->queue);
  return HGR_OK;
}

void hgr__executor_fail_node(hgr_executor_t* executor, uint32_t node_id, cl_int code) {
  executor->fail_node = node_id;
  executor->fail_code = code;
}

/* Whether a queue runs only while the host drives it (Oclgrind). */
static bool has_host_driven_queue(const hgr_executor_t* executor) {
  for (uint32_t q = 0; q < executor->queue_count; ++q)
    if (executor->queues[q].host_driven) return true;
  return false;
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

static void release_waker(waker_t* waker) {
  if (waker && atomic_fetch_sub(&waker->refs, 1) == 1) {
    sem_destroy(&waker->sem);
    free(waker);
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

/* Waits until every event in events has completed, or until a node's command has
 * failed. It never blocks in clWaitForEvents, because after a failure some drivers
 * (PoCL 3.1) never complete the commands that waited on the failed one: a blocking
 * wait on them would never return. Instead it sleeps on a semaphore that a callback
 * on the first pending event posts (waking as fast as clWaitForEvents does, where a
 * sleep-and-poll loop woke tens of microseconds late on small copies), at most a
 * millisecond at a time, and scans every node's events for a failure at most every
 * millisecond and once at the end (only commands kept before absolute index limit:
 * a later run's failure is not this wait's; a scan queries each event, which on a long
 * graph cost more host time than the nodes themselves). Executors with host-driven
 * queues (Oclgrind, which runs commands only while the host waits on them, and does
 * not call callbacks registered on completed events) drive them on the way and poll
 * instead, sleeping from 5 us, doubling to at most 100 us. */
static hgr_status_t await_events(hgr_executor_t* executor, const cl_event* events, uint32_t count, uint64_t limit) {
  bool host_driven = has_host_driven_queue(executor);
  long sleep_ns = 5000;
  uint64_t last_scan = hgr__monotonic_ns();
  waker_t* waker = NULL;
  cl_event watched = NULL; /* the event waker's latest callback is on */
  hgr_status_t status = HGR_OK;
  for (;;) {
    if ((status = hgr__bridges_drive(executor))) break;
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
      hgr_status_t failure = find_failure(executor, limit);
      if (failure) {
        status = fail_executor(executor, failure);
        break;
      }
      last_scan = now;
    }
    if (!pending) break;
    if (!host_driven && !waker) {
      waker = malloc(sizeof(*waker));
      if (waker && sem_init(&waker->sem, 0, 0) != 0) {
        free(waker);
        waker = NULL;
      }
      if (waker) atomic_init(&waker->refs, 1); /* ours */
    }
    if (waker && (pending == watched || watch_event(waker, pending))) {
      watched = pending;
      wait_for_waker(waker, HGR_FAILURE_SCAN_NS);
      continue;
    }
    struct timespec pause = {0, sleep_ns};
    nanosleep(&pause, NULL);
    if (sleep_ns < 100000) sleep_ns *= 2;
  }
  release_waker(waker);
  return status;
}

/* What the latest run's completion allows: its profile can be read, and every kernel
 * has been launched once, so PoCL's binaries are complete and worth storing. */
static void latest_run_completed(hgr_executor_t* executor) {
  if (executor->run_in_flight && !executor->stepping) executor->profile_complete = executor->profiling;
  if (executor->run_in_flight) hgr__programs_store(executor);
  executor->run_in_flight = false;
}

hgr_status_t hgr_executor_wait(hgr_executor_t* executor) {
  if (!executor) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "executor is NULL");
  HGR_RETURN_IF_ERROR(check_usable(executor));
  hgr_status_t status = HGR_OK;
  cl_event* events = executor->wait; /* holds more than one event per queue */
  uint32_t count = 0;
  for (uint32_t q = 0; q < executor->queue_count && !status; ++q) {
    if (!executor->queues[q].last) continue;
    status = hgr__queue_flush(executor, q);
    events[count++] = executor->queues[q].last;
  }
  if (!status && count)
    status = await_events(executor, events, count, executor->commands_base + executor->command_count);
  if (!status) { /* every queue is idle */
    retire_all(executor);
    retire_fences(executor, NULL);
  }
  executor->run_in_flight = false;
  return status;
}

/* ---- inputs and outputs ------------------------------------------------------------------ */

size_t hgr_executor_input_count(const hgr_executor_t* executor) {
  return hgr_graph_input_count(executor->graph);
}
size_t hgr_executor_output_count(const hgr_executor_t* executor) {
  return hgr_graph_output_count(executor->graph);
}
hgr_status_t hgr_executor_input_info(const hgr_executor_t* executor, size_t index, hgr_tensor_info_t* out_info) {
  return hgr_graph_input_info(executor->graph, index, out_info);
}
hgr_status_t hgr_executor_output_info(const hgr_executor_t* executor, size_t index, hgr_tensor_info_t* out_info) {
  return hgr_graph_output_info(executor->graph, index, out_info);
}
hgr_status_t hgr_executor_input_index(const hgr_executor_t* executor, const char* name, size_t* out_index) {
  return hgr_graph_input_index(executor->graph, name, out_index);
}

/* The transfer queue of the device that owns storage_id. */
static uint32_t transfer_queue_of(hgr_executor_t* executor, uint32_t storage_id) {
  return hgr__exec_device(executor, executor->storages[storage_id].device_index)->transfer_queue;
}

static hgr_status_t check_io(const hgr_executor_t* executor, const hgr_tensor_info_t* info, const char* what,
                             size_t index, const void* data, size_t bytes) {
  if (executor->plan_only)
    return HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION, "this executor was created plan-only and has no buffers");
  HGR_RETURN_IF_ERROR(check_usable(executor));
  if (bytes != info->bytes)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s %zu '%s' has %llu bytes, %zu were given", what, index,
                      info->name, (unsigned long long)info->bytes, bytes);
  if (!data && bytes) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s %zu '%s': data is NULL", what, index, info->name);
  return HGR_OK;
}

/* ---- fences ------------------------------------------------------------------------------ */

static hgr_status_t copy_status(hgr_status_t status) {
  return HGR_STATUS(hgr_status_code(status), "%s", hgr_status_message(status));
}

/* Frees the fence once neither the executor nor the caller holds it. */
static void fence_unref(hgr_fence_t* fence) {
  if (--fence->refs) return;
  hgr_executor_t* executor = fence->executor;
  if (executor) {
    for (hgr_fence_t** link = &executor->fences; *link; link = &(*link)->next)
      if (*link == fence) {
        *link = fence->next;
        break;
      }
  }
  uint32_t outputs = executor ? executor->graph->head_count : 0;
  for (uint32_t o = 0; fence->snapshots && o < outputs; ++o) {
    cl_mem snapshot = fence->snapshots[o];
    if (!snapshot) continue;
    /* Back to the pool, unless the caller was given it (its content must stay). */
    if (!fence->exported) {
      cl_mem* grown = realloc(executor->snapshot_pool[o], (executor->snapshot_pool_count[o] + 1) * sizeof(cl_mem));
      if (grown) {
        executor->snapshot_pool[o] = grown;
        grown[executor->snapshot_pool_count[o]++] = snapshot;
        continue;
      }
    }
    clReleaseMemObject(snapshot);
  }
  for (uint32_t e = 0; e < fence->event_count; ++e) clReleaseEvent(fence->events[e]);
  hgr_status_free(fence->failure);
  free(fence->events);
  free(fence->queue_seq);
  free(fence->snapshots);
  free(fence);
}

/* Retires the runs up to and including `through` (NULL: every run), whose commands
 * have all completed, oldest first; then the commands they cover. */
static void retire_fences(hgr_executor_t* executor, hgr_fence_t* through) {
  if (through) retire(executor, through->queue_seq, through->command_end);
  uint64_t last_run = through ? through->run : executor->run_count;
  if (last_run == executor->run_count) latest_run_completed(executor);
  hgr_fence_t* fence = executor->fences;
  while (fence && fence->run <= last_run) {
    hgr_fence_t* next = fence->next;
    if (!fence->retired) {
      fence->retired = true;
      fence_unref(fence); /* the executor's reference */
    }
    fence = next;
  }
}

/* Whether every event completed: 1, one failed: -1, else 0. */
static int events_complete(const cl_event* events, uint32_t count) {
  int result = 1;
  for (uint32_t e = 0; e < count; ++e) {
    cl_int execution = hgr__event_status(events[e]);
    if (execution < 0) return -1;
    if (execution != CL_COMPLETE) result = 0;
  }
  return result;
}

/* Retires the oldest runs that have completed without a failure, without waiting
 * (at the start of a run, so fenced runs whose fences were released unwaited do not
 * pile up). */
static void retire_completed(hgr_executor_t* executor) {
  hgr_fence_t* done = NULL;
  for (hgr_fence_t* fence = executor->fences; fence; fence = fence->next) {
    if (fence->retired) continue;
    if (events_complete(fence->events, fence->event_count) != 1) break;
    done = fence;
  }
  if (!done) return;
  hgr_status_t failure = find_failure(executor, done->command_end);
  if (failure) { /* left for a wait to report */
    hgr_status_free(failure);
    return;
  }
  retire_fences(executor, done);
}

/* A fence for the run just enqueued: each queue's last command, and where the run
 * ends. The executor holds one reference until it retires the run. */
static hgr_status_t make_fence(hgr_executor_t* executor, hgr_fence_t** out_fence) {
  hgr_fence_t* fence = calloc(1, sizeof(*fence));
  if (fence) {
    fence->events = calloc(executor->queue_count, sizeof(cl_event));
    fence->queue_seq = calloc(executor->queue_count, sizeof(uint64_t));
    fence->snapshots = calloc(executor->graph->head_count + 1, sizeof(cl_mem));
  }
  if (!fence || !fence->events || !fence->queue_seq || !fence->snapshots) {
    if (fence) {
      free(fence->events);
      free(fence->queue_seq);
      free(fence->snapshots);
      free(fence);
    }
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  }
  fence->executor = executor;
  fence->refs = 1;
  fence->run = executor->run_count;
  for (uint32_t q = 0; q < executor->queue_count; ++q) {
    const hgr__queue_t* queue = &executor->queues[q];
    fence->queue_seq[q] = queue->seq;
    if (queue->last && queue->seq > queue->retired_seq) {
      clRetainEvent(queue->last);
      fence->events[fence->event_count++] = queue->last;
    }
  }
  fence->command_end = executor->commands_base + executor->command_count;
  hgr_fence_t** link = &executor->fences;
  while (*link) link = &(*link)->next;
  *link = fence;
  *out_fence = fence;
  return HGR_OK;
}

/* The storage id of output index. */
static uint32_t output_storage(const hgr_executor_t* executor, size_t index) {
  const hgr_graph_t* graph = executor->graph;
  return graph->entries[hgr__graph_entry_id(graph, graph->heads[index])].storage_id;
}

/* Copies output index, as its storage holds it now (after the fence's run wrote it
 * and before anything later writes it: ordered as a reader), into a buffer of the
 * fence's. */
static hgr_status_t snapshot_output(hgr_executor_t* executor, hgr_fence_t* fence, size_t index) {
  if (fence->snapshots[index]) return HGR_OK;
  hgr_tensor_info_t info;
  HGR_RETURN_IF_ERROR(hgr_executor_output_info(executor, index, &info));
  uint32_t storage_id = output_storage(executor, index);
  uint32_t queue = transfer_queue_of(executor, storage_id);
  const char* spec = hgr_instance_device(executor->instance, executor->storages[storage_id].device_index)->spec;
  cl_mem snapshot = NULL;
  cl_int error = CL_SUCCESS;
  if (executor->snapshot_pool_count[index]) {
    snapshot = executor->snapshot_pool[index][--executor->snapshot_pool_count[index]];
  } else {
    snapshot = clCreateBuffer(executor->queues[queue].context, CL_MEM_READ_WRITE, info.bytes ? info.bytes : 4, NULL,
                              &error);
    if (error != CL_SUCCESS || !snapshot)
      return HGR_CL_STATUS(error, "clCreateBuffer(a copy of output %zu '%s', %llu bytes) on %s", index, info.name,
                           (unsigned long long)info.bytes, spec);
  }
  uint32_t wait_count = 0;
  hgr_status_t status = hgr__order_storage(executor, storage_id, false, queue, &wait_count);
  if (!status) status = hgr__commands_reserve(executor, 1);
  cl_event event = NULL;
  if (!status) {
    cl_command_queue command_queue = executor->queues[queue].queue;
    const cl_event* wait = wait_count ? executor->wait : NULL;
    error = info.bytes ? clEnqueueCopyBuffer(command_queue, executor->storages[storage_id].mem, snapshot, 0, 0,
                                             info.bytes, wait_count, wait, &event)
                       : clEnqueueMarkerWithWaitList(command_queue, wait_count, wait, &event);
    if (error != CL_SUCCESS)
      status = HGR_CL_STATUS(error, "clEnqueueCopyBuffer(output %zu '%s' into a copy of run %llu's) on %s", index,
                             info.name, (unsigned long long)fence->run, spec);
  }
  if (status) {
    clReleaseMemObject(snapshot);
    return status;
  }
  fence->snapshots[index] = snapshot;
  status = hgr__queue_enqueued(executor, queue, event);
  if (!status) hgr__record_access(executor, storage_id, false, event, queue);
  clReleaseEvent(event);
  return status;
}

/* Before storage_id (UINT32_MAX: every storage) is written: the fences holding an
 * output in it get their own copy. */
static hgr_status_t release_holders(hgr_executor_t* executor, uint32_t storage_id) {
  for (uint32_t o = 0; o < executor->graph->head_count; ++o) {
    hgr_fence_t* holder = executor->output_holder[o];
    if (!holder || (storage_id != UINT32_MAX && output_storage(executor, o) != storage_id)) continue;
    HGR_RETURN_IF_ERROR(snapshot_output(executor, holder, o));
    executor->output_holder[o] = NULL;
  }
  return HGR_OK;
}

static hgr_status_t fence_usable(const hgr_fence_t* fence) {
  if (!fence) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "fence is NULL");
  if (fence->failure) return copy_status(fence->failure);
  if (!fence->executor && !fence->retired)
    return HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION, "run %llu's executor was released before it completed",
                      (unsigned long long)fence->run);
  return HGR_OK;
}

/* The executor whose storages and copies hold the fence's outputs. */
static hgr_status_t fence_outputs(hgr_fence_t* fence, hgr_executor_t** out_executor) {
  HGR_RETURN_IF_ERROR(fence_usable(fence));
  if (!fence->executor)
    return HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION, "run %llu's executor was released with its outputs",
                      (unsigned long long)fence->run);
  *out_executor = fence->executor;
  return HGR_OK;
}

hgr_status_t hgr_fence_wait(hgr_fence_t* fence) {
  HGR_RETURN_IF_ERROR(fence_usable(fence));
  if (fence->retired) return HGR_OK;
  hgr_executor_t* executor = fence->executor;
  HGR_RETURN_IF_ERROR(check_usable(executor));
  hgr_status_t status = HGR_OK;
  for (uint32_t q = 0; q < executor->queue_count && !status; ++q) status = hgr__queue_flush(executor, q);
  if (!status) status = await_events(executor, fence->events, fence->event_count, fence->command_end);
  if (!status) retire_fences(executor, fence);
  return hgr_status_annotate(status, "run %llu", (unsigned long long)fence->run);
}

hgr_status_t hgr_fence_query(hgr_fence_t* fence, bool* out_complete) {
  *out_complete = false;
  HGR_RETURN_IF_ERROR(fence_usable(fence));
  if (fence->retired) {
    *out_complete = true;
    return HGR_OK;
  }
  hgr_executor_t* executor = fence->executor;
  HGR_RETURN_IF_ERROR(check_usable(executor));
  for (uint32_t q = 0; q < executor->queue_count; ++q) HGR_RETURN_IF_ERROR(hgr__queue_flush(executor, q));
  HGR_RETURN_IF_ERROR(hgr__bridges_drive(executor));
  int complete = events_complete(fence->events, fence->event_count);
  if (complete == 0) return HGR_OK;
  hgr_status_t failure = find_failure(executor, fence->command_end);
  if (failure) return hgr_status_annotate(fail_executor(executor, failure), "run %llu", (unsigned long long)fence->run);
  if (complete < 0) return HGR_OK; /* failed after a command the scan passed; the next query names it */
  retire_fences(executor, fence);
  *out_complete = true;
  return HGR_OK;
}

uint64_t hgr_fence_run(const hgr_fence_t* fence) { return fence ? fence->run : 0; }

void hgr_fence_release(hgr_fence_t* fence) {
  if (!fence) return;
  hgr_executor_t* executor = fence->executor;
  for (uint32_t o = 0; executor && o < executor->graph->head_count; ++o)
    if (executor->output_holder[o] == fence) executor->output_holder[o] = NULL;
  fence_unref(fence);
}

hgr_status_t hgr_fence_get_output(hgr_fence_t* fence, size_t index, void* data, size_t bytes) {
  hgr_executor_t* executor = NULL;
  HGR_RETURN_IF_ERROR(fence_outputs(fence, &executor));
  hgr_tensor_info_t info;
  HGR_RETURN_IF_ERROR(hgr_executor_output_info(executor, index, &info));
  HGR_RETURN_IF_ERROR(check_io(executor, &info, "output", index, data, bytes));
  if (!bytes) return HGR_OK;
  char what[256];
  snprintf(what, sizeof(what), "run %llu's output %zu '%s'", (unsigned long long)fence->run, index, info.name);
  uint32_t storage_id = output_storage(executor, index);
  void* staging = NULL;
  HGR_RETURN_IF_ERROR(output_staging(executor, index, bytes, &staging));
  if (fence->snapshots[index])
    return read_into(executor, storage_id, fence->snapshots[index], false, staging, data, bytes, what);
  if (executor->output_holder[index] != fence)
    return HGR_STATUS(HGR_STATUS_INTERNAL, "%s is neither in its storage nor copied", what);
  return read_into(executor, storage_id, executor->storages[storage_id].mem, true, staging, data, bytes, what);
}

hgr_status_t hgr_executor_set_input(hgr_executor_t* executor, size_t index, const void* data, size_t bytes) {
  hgr_tensor_info_t info;
  HGR_RETURN_IF_ERROR(hgr_executor_input_info(executor, index, &info));
  HGR_RETURN_IF_ERROR(check_io(executor, &info, "input", index, data, bytes));
  if (executor->input_bindings[index].kind != HGR__BIND_NONE)
    return HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION,
                      "input %zu '%s' is bound to the caller's memory: write that, or unbind the input first", index,
                      info.name);
  const hgr_graph_t* graph = executor->graph;
  uint32_t storage_id = graph->entries[graph->node_row_ptr[graph->arg_nodes[index]]].storage_id;
  if (executor->storages[storage_id].shared)
    return HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION,
                      "input %zu '%s' (storage %u) is a parameter buffer shared between executors "
                      "(share_params_from), so it is read-only",
                      index, info.name, hgr__graph_storage_id(graph, storage_id));
  executor->storages[storage_id].params = false; /* load_params sets it again */
  if (bytes) {
    HGR_RETURN_IF_ERROR(release_holders(executor, storage_id));
    uint32_t queue = transfer_queue_of(executor, storage_id);
    hgr__queue_t* q = &executor->queues[queue];
    uint32_t wait_count = 0;
    HGR_RETURN_IF_ERROR(hgr__order_storage(executor, storage_id, true, queue, &wait_count));
    /* Nothing in flight to wait for: a blocking write straight from data. Otherwise
     * data is copied and the write waits on the device for the storage's readers
     * and writer in runs already started. */
    bool idle = !wait_count && (!q->last || events_complete(&q->last, 1) == 1);
    void* held = NULL;
    if (!idle) {
      HGR_RETURN_IF_ERROR(held_host_reserve(executor));
      held = aligned_alloc(64, (bytes + 63) / 64 * 64);
      if (!held)
        return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for input %zu (%zu bytes)", index, bytes);
      memcpy(held, data, bytes);
    }
    cl_event event = NULL;
    hgr_status_t status = hgr__commands_reserve(executor, 1);
    cl_int error = status ? CL_SUCCESS
                          : clEnqueueWriteBuffer(q->queue, executor->storages[storage_id].mem, idle ? CL_TRUE : CL_FALSE,
                                                 0, bytes, held ? held : data, wait_count,
                                                 wait_count ? executor->wait : NULL, &event);
    if (!status && error != CL_SUCCESS)
      status = HGR_CL_STATUS(error, "clEnqueueWriteBuffer(input %zu '%s', storage %u) on %s", index, info.name,
                             hgr__graph_storage_id(graph, storage_id), hgr_instance_device(executor->instance, q->device_index)->spec);
    if (status) {
      free(held);
      return status;
    }
    status = hgr__queue_enqueued(executor, queue, event);
    if (!status) hgr__record_access(executor, storage_id, true, event, queue);
    if (held) executor->held_host[executor->held_host_count++] = (hgr__held_host_t){held, queue, q->seq};
    if (!status && held) status = hgr__queue_flush(executor, queue);
    clReleaseEvent(event);
    HGR_RETURN_IF_ERROR(status);
  }
  executor->input_set[index] = true;
  return HGR_OK;
}

hgr_status_t hgr_executor_set_input_by_name(hgr_executor_t* executor, const char* name, const void* data,
                                            size_t bytes) {
  size_t index;
  HGR_RETURN_IF_ERROR(hgr_executor_input_index(executor, name, &index));
  return hgr_executor_set_input(executor, index, data, bytes);
}

/* Reads bytes of mem (storage_id's buffer, or a copy of it on the same device) into
 * data, through staging (the executor's host memory of at least bytes, 64-byte
 * aligned: the driver reads into it, never into the caller's memory, since after a
 * device failure the read may stay pending when this call returns). When ordered,
 * the read waits for storage_id's writer; a copy is ordered by its queue. `what`
 * names the tensor for errors. */
static hgr_status_t read_into(hgr_executor_t* executor, uint32_t storage_id, cl_mem mem, bool ordered, void* staging,
                              void* data, size_t bytes, const char* what) {
  uint32_t queue = transfer_queue_of(executor, storage_id);
  const char* spec = hgr_instance_device(executor->instance, executor->storages[storage_id].device_index)->spec;
  cl_event* wait = executor->wait;
  uint32_t wait_count = 0;
  if (ordered) HGR_RETURN_IF_ERROR(hgr__order_storage(executor, storage_id, false, queue, &wait_count));
  HGR_RETURN_IF_ERROR(hgr__commands_reserve(executor, 1));
  cl_event event = NULL;
  cl_int error = clEnqueueReadBuffer(executor->queues[queue].queue, mem, CL_FALSE, 0, bytes, staging, wait_count,
                                     wait_count ? wait : NULL, &event);
  if (error != CL_SUCCESS) return HGR_CL_STATUS(error, "clEnqueueReadBuffer(%s, storage %u) on %s", what, hgr__graph_storage_id(executor->graph, storage_id), spec);
  hgr_status_t status = hgr__queue_enqueued(executor, queue, event);
  if (!status && ordered) hgr__record_access(executor, storage_id, false, event, queue);
  if (!status) status = hgr__queue_flush(executor, queue);
  if (!status) status = await_events(executor, &event, 1, executor->commands_base + executor->command_count);
  if (!status) {
    cl_int execution = hgr__event_status(event);
    if (execution < 0)
      status = HGR_STATUS(HGR_STATUS_DEVICE_FAILURE, "reading %s on %s failed on the device: %s", what, spec,
                          hgr_opencl_error_name(execution));
  }
  if (!status) memcpy(data, staging, bytes);
  clReleaseEvent(event);
  return status;
}

/* The host memory output index is read through. */
static hgr_status_t output_staging(hgr_executor_t* executor, size_t index, size_t bytes, void** out_staging) {
  if (!executor->output_staging[index]) {
    executor->output_staging[index] = aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!executor->output_staging[index])
      return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for output %zu (%zu bytes)", index, bytes);
  }
  *out_staging = executor->output_staging[index];
  return HGR_OK;
}

hgr_status_t hgr_executor_get_output(hgr_executor_t* executor, size_t index, void* data, size_t bytes) {
  hgr_tensor_info_t info;
  HGR_RETURN_IF_ERROR(hgr_executor_output_info(executor, index, &info));
  HGR_RETURN_IF_ERROR(check_io(executor, &info, "output", index, data, bytes));
  if (!bytes) return HGR_OK;
  uint32_t storage_id = output_storage(executor, index);
  void* staging = NULL;
  HGR_RETURN_IF_ERROR(output_staging(executor, index, bytes, &staging));
  char what[256];
  snprintf(what, sizeof(what), "output %zu '%s'", index, info.name);
  return read_into(executor, storage_id, executor->storages[storage_id].mem, true, staging, data, bytes, what);
}

/* ---- runs ---------------------------------------------------------------------------------- */

/* A host binding's transfer of one run: the caller's memory into the storage before
 * the run's first reader (inputs), or the storage into it after the last writer
 * (outputs): a copy, or a map and unmap of the buffer over it, which makes the
 * device and the host agree. */
static hgr_status_t sync_binding(hgr_executor_t* executor, const hgr__io_binding_t* binding, bool input) {
  if ((binding->kind != HGR__BIND_HOST_COPY && binding->kind != HGR__BIND_HOST_ZERO_COPY) || !binding->bytes)
    return HGR_OK;
  uint32_t storage_id = binding->storage;
  uint32_t queue = transfer_queue_of(executor, storage_id);
  cl_command_queue command_queue = executor->queues[queue].queue;
  cl_mem mem = executor->storages[storage_id].mem;
  const char* spec = hgr_instance_device(executor->instance, executor->storages[storage_id].device_index)->spec;
  uint32_t wait_count = 0;
  HGR_RETURN_IF_ERROR(hgr__order_storage(executor, storage_id, input, queue, &wait_count));
  const cl_event* wait = wait_count ? executor->wait : NULL;
  cl_event event = NULL;
  cl_int error;
  if (binding->kind == HGR__BIND_HOST_COPY) {
    error = input ? clEnqueueWriteBuffer(command_queue, mem, CL_FALSE, 0, binding->bytes, binding->host, wait_count,
                                         wait, &event)
                  : clEnqueueReadBuffer(command_queue, mem, CL_FALSE, 0, binding->bytes, binding->host, wait_count,
                                        wait, &event);
    if (error != CL_SUCCESS)
      return HGR_CL_STATUS(error, "%s(storage %u, bound to the caller's memory) on %s",
                           input ? "clEnqueueWriteBuffer" : "clEnqueueReadBuffer", hgr__graph_storage_id(executor->graph, storage_id), spec);
  } else {
    cl_event mapped = NULL;
    void* pointer = clEnqueueMapBuffer(command_queue, binding->mem, CL_FALSE,
                                       input ? CL_MAP_WRITE_INVALIDATE_REGION : CL_MAP_READ, 0, binding->bytes,
                                       wait_count, wait, &mapped, &error);
    if (error != CL_SUCCESS)
      return HGR_CL_STATUS(error, "clEnqueueMapBuffer(storage %u, the caller's memory) on %s", hgr__graph_storage_id(executor->graph, storage_id), spec);
    hgr_status_t status = hgr__queue_enqueued(executor, queue, mapped);
    clReleaseEvent(mapped);
    HGR_RETURN_IF_ERROR(status);
    error = clEnqueueUnmapMemObject(command_queue, binding->mem, pointer, 0, NULL, &event);
    if (error != CL_SUCCESS)
      return HGR_CL_STATUS(error, "clEnqueueUnmapMemObject(storage %u, the caller's memory) on %s", hgr__graph_storage_id(executor->graph, storage_id), spec);
  }
  hgr_status_t status = hgr__queue_enqueued(executor, queue, event);
  if (!status) hgr__record_access(executor, storage_id, input, event, queue);
  clReleaseEvent(event);
  return status;
}

static hgr_status_t check_inputs_set(const hgr_executor_t* executor) {
  const hgr_graph_t* graph = executor->graph;
  for (uint32_t i = 0; i < graph->arg_count; ++i)
    if (!executor->input_set[i])
      return HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION,
                        "input %u '%s' was never set (give it with set_input or in the params)", i,
                        graph->nodes[graph->arg_nodes[i]].name);
  return HGR_OK;
}

/* Enqueues one run; with out_fence, returns its fence, which holds the outputs. */
static hgr_status_t start_run(hgr_executor_t* executor, hgr_fence_t** out_fence) {
  if (out_fence) *out_fence = NULL;
  if (!executor) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "executor is NULL");
  if (executor->plan_only)
    return HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION, "this executor was created plan-only and cannot run");
  HGR_RETURN_IF_ERROR(check_usable(executor));
  const hgr_graph_t* graph = executor->graph;
  HGR_RETURN_IF_ERROR(check_inputs_set(executor));
  retire_completed(executor);
  HGR_RETURN_IF_ERROR(release_holders(executor, UINT32_MAX));
  HGR_RETURN_IF_ERROR(hgr__commands_reserve(executor, commands_per_run(executor)));
  hgr_status_t status = HGR_OK;
  if (executor->profiling) hgr__profile_reset(executor);
  executor->profile_complete = false;
  executor->run_count++;
  for (uint32_t i = 0; i < graph->arg_count && !status; ++i)
    status = sync_binding(executor, &executor->input_bindings[i], true);
  for (uint32_t s = 0; s < executor->step_count && !status; ++s) {
    hgr__step_t* step = &executor->steps[s];
    executor->enqueue_step = s;
    if (executor->profiling) executor->step_host_ns[2 * s] = hgr__monotonic_ns();
    if (step->kind == HGR__STEP_KERNEL) status = enqueue_kernel(executor, step);
    else if (step->kind == HGR__STEP_COPY) status = hgr__transfer_enqueue(executor, step);
    if (executor->profiling) executor->step_host_ns[2 * s + 1] = hgr__monotonic_ns();
  }
  executor->enqueue_step = UINT32_MAX;
  for (uint32_t o = 0; o < graph->head_count && !status; ++o)
    status = sync_binding(executor, &executor->output_bindings[o], false);
  for (uint32_t q = 0; q < executor->queue_count; ++q)
    status = hgr_status_join(status, hgr__queue_flush(executor, q));
  executor->run_in_flight = true;
  /* Plain runs retire at hgr_executor_wait (or with a later fence's run). */
  if (!out_fence) return hgr_status_annotate(status, "run");
  hgr_fence_t* fence = NULL;
  if (!status) status = make_fence(executor, &fence);
  if (!status) {
    fence->refs++; /* the caller's */
    for (uint32_t o = 0; o < graph->head_count; ++o) executor->output_holder[o] = fence;
    *out_fence = fence;
  }
  return hgr_status_annotate(status, "run");
}

hgr_status_t hgr_executor_run(hgr_executor_t* executor) { return start_run(executor, NULL); }

hgr_status_t hgr_executor_run_async(hgr_executor_t* executor, hgr_fence_t** out_fence) {
  if (!out_fence) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "out_fence is NULL");
  return start_run(executor, out_fence);
}

/* ---- caller-owned memory ------------------------------------------------------------------- */

static hgr_status_t held_host_reserve(hgr_executor_t* executor) {
  if (executor->held_host_count < executor->held_host_capacity) return HGR_OK;
  uint32_t capacity = executor->held_host_capacity ? executor->held_host_capacity * 2 : 16;
  hgr__held_host_t* grown = realloc(executor->held_host, capacity * sizeof(*grown));
  if (!grown) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  executor->held_host = grown;
  executor->held_host_capacity = capacity;
  return HGR_OK;
}

/* The binding record, tensor and storage of input or output index. */
static hgr_status_t io_lookup(hgr_executor_t* executor, hgr_io_t io, size_t index, hgr_tensor_info_t* out_info,
                              hgr__io_binding_t** out_binding) {
  if (!executor) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "executor is NULL");
  if (io != HGR_INPUT && io != HGR_OUTPUT) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "io is %d", (int)io);
  if (executor->plan_only)
    return HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION, "this executor was created plan-only and has no buffers");
  HGR_RETURN_IF_ERROR(check_usable(executor));
  const hgr_graph_t* graph = executor->graph;
  if (io == HGR_INPUT) {
    HGR_RETURN_IF_ERROR(hgr_executor_input_info(executor, index, out_info));
    *out_binding = &executor->input_bindings[index];
    (*out_binding)->storage = graph->entries[graph->node_row_ptr[graph->arg_nodes[index]]].storage_id;
  } else {
    HGR_RETURN_IF_ERROR(hgr_executor_output_info(executor, index, out_info));
    *out_binding = &executor->output_bindings[index];
    (*out_binding)->storage = output_storage(executor, index);
  }
  return HGR_OK;
}

/* The buffer another binding than `except` put in place of storage_id's, or NULL. */
static const hgr__io_binding_t* storage_binder(const hgr_executor_t* executor, uint32_t storage_id,
                                               const hgr__io_binding_t* except) {
  const hgr_graph_t* graph = executor->graph;
  for (uint32_t i = 0; i < graph->arg_count + graph->head_count; ++i) {
    const hgr__io_binding_t* binding =
        i < graph->arg_count ? &executor->input_bindings[i] : &executor->output_bindings[i - graph->arg_count];
    if (binding != except && binding->mem && binding->storage == storage_id) return binding;
  }
  return NULL;
}

/* Points storage_id's kernels at mem (its own buffer or a bound one). */
static hgr_status_t use_buffer(hgr_executor_t* executor, uint32_t storage_id, cl_mem mem) {
  if (executor->storages[storage_id].mem == mem) return HGR_OK;
  executor->storages[storage_id].mem = mem;
  return hgr__storage_rebind(executor, storage_id);
}

/* Ends a binding: the storage goes back to its own buffer unless another binding
 * shares the bound one. */
static hgr_status_t drop_binding(hgr_executor_t* executor, hgr__io_binding_t* binding) {
  hgr_status_t status = HGR_OK;
  if (binding->mem) {
    const hgr__io_binding_t* other = storage_binder(executor, binding->storage, binding);
    status = use_buffer(executor, binding->storage, other ? other->mem : executor->storages[binding->storage].own_mem);
    clReleaseMemObject(binding->mem); /* commands in flight keep it alive */
  }
  uint32_t storage_id = binding->storage;
  memset(binding, 0, sizeof(*binding));
  binding->storage = storage_id;
  return status;
}

static bool device_shares_host_memory(const hgr__device_t* device, const void* data) {
  cl_bool unified = CL_FALSE;
  cl_uint align_bits = 0;
  if (clGetDeviceInfo(device->device, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof(unified), &unified, NULL) != CL_SUCCESS ||
      clGetDeviceInfo(device->device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof(align_bits), &align_bits, NULL) !=
          CL_SUCCESS)
    return false;
  uintptr_t align = align_bits >= 8 ? align_bits / 8 : 1;
  return unified && hgr__device_maps_async(device) && (uintptr_t)data % align == 0;
}

/* Binds host memory (data) or a caller buffer (buffer, when data is NULL). */
static hgr_status_t bind(hgr_executor_t* executor, hgr_io_t io, size_t index, void* data, size_t bytes,
                         cl_mem buffer) {
  hgr_tensor_info_t info;
  hgr__io_binding_t* binding = NULL;
  HGR_RETURN_IF_ERROR(io_lookup(executor, io, index, &info, &binding));
  const char* what = io == HGR_INPUT ? "input" : "output";
  uint32_t storage_id = binding->storage;
  hgr__storage_t* storage = &executor->storages[storage_id];
  const hgr__device_t* device = &executor->instance->devices[storage->device_index];
  cl_context context = executor->queues[transfer_queue_of(executor, storage_id)].context;
  if (storage->shared)
    return HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION,
                      "%s %zu '%s' (storage %u) is a parameter buffer shared between executors "
                      "(share_params_from): it cannot be bound",
                      what, index, info.name, hgr__graph_storage_id(executor->graph, storage_id));
  const hgr__io_binding_t* other = storage_binder(executor, storage_id, binding);
  hgr__io_binding_t next = {HGR__BIND_HOST_COPY, data, info.bytes, NULL, storage_id};
  if (buffer) {
    cl_context buffer_context = NULL;
    size_t buffer_bytes = 0;
    cl_int error = clGetMemObjectInfo(buffer, CL_MEM_CONTEXT, sizeof(buffer_context), &buffer_context, NULL);
    if (error == CL_SUCCESS) error = clGetMemObjectInfo(buffer, CL_MEM_SIZE, sizeof(buffer_bytes), &buffer_bytes, NULL);
    if (error != CL_SUCCESS)
      return HGR_CL_STATUS(error, "clGetMemObjectInfo(the buffer given for %s %zu '%s')", what, index, info.name);
    if (buffer_context != context)
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT,
                        "%s %zu '%s': the buffer belongs to another context than %s's, where storage %u lives", what,
                        index, info.name, device->info.spec, hgr__graph_storage_id(executor->graph, storage_id));
    if (buffer_bytes < storage->bytes)
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT,
                        "%s %zu '%s': the buffer has %zu bytes, but storage %u needs %llu", what, index, info.name,
                        buffer_bytes, hgr__graph_storage_id(executor->graph, storage_id), (unsigned long long)storage->bytes);
    if (other && other->mem != buffer)
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT,
                        "%s %zu '%s': storage %u is bound to another buffer already (an input and an output sharing "
                        "a storage take one buffer)",
                        what, index, info.name, hgr__graph_storage_id(executor->graph, storage_id));
    clRetainMemObject(buffer);
    next.kind = HGR__BIND_BUFFER;
    next.host = NULL;
    next.mem = buffer;
  } else {
    if (bytes != info.bytes)
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s %zu '%s' has %llu bytes, %zu were given", what, index,
                        info.name, (unsigned long long)info.bytes, bytes);
    if (!data && bytes)
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s %zu '%s': data is NULL", what, index, info.name);
    if (other && other->kind == HGR__BIND_HOST_ZERO_COPY && other->host == data) {
      clRetainMemObject(other->mem); /* the same memory: the same buffer */
      next.kind = HGR__BIND_HOST_ZERO_COPY;
      next.mem = other->mem;
    } else if (!other && bytes && bytes == storage->bytes && device_shares_host_memory(device, data)) {
      cl_int error = CL_SUCCESS;
      next.mem = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes, data, &error);
      if (error == CL_SUCCESS && next.mem) next.kind = HGR__BIND_HOST_ZERO_COPY;
      else next.mem = NULL; /* the driver would not: copy */
    }
  }
  /* Fences of earlier runs keep their values, copied out of the old buffer. */
  hgr_status_t status = release_holders(executor, storage_id);
  if (!status) status = drop_binding(executor, binding);
  if (!status && next.mem) status = use_buffer(executor, storage_id, next.mem);
  if (status) {
    if (next.mem) clReleaseMemObject(next.mem);
    return status;
  }
  *binding = next;
  storage->params = false; /* not a param any more: never shared */
  if (io == HGR_INPUT) executor->input_set[index] = true;
  return HGR_OK;
}

hgr_status_t hgr_executor_bind_host(hgr_executor_t* executor, hgr_io_t io, size_t index, void* data, size_t bytes) {
  if (!data && bytes) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "data is NULL");
  static char empty;
  return bind(executor, io, index, data ? data : &empty, bytes, NULL);
}

hgr_status_t hgr_executor_bind_buffer(hgr_executor_t* executor, hgr_io_t io, size_t index, cl_mem buffer) {
  if (!buffer) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "buffer is NULL (hgr_executor_unbind ends a binding)");
  return bind(executor, io, index, NULL, 0, buffer);
}

hgr_status_t hgr_executor_unbind(hgr_executor_t* executor, hgr_io_t io, size_t index) {
  hgr_tensor_info_t info;
  hgr__io_binding_t* binding = NULL;
  HGR_RETURN_IF_ERROR(io_lookup(executor, io, index, &info, &binding));
  if (binding->kind == HGR__BIND_NONE) return HGR_OK;
  HGR_RETURN_IF_ERROR(release_holders(executor, binding->storage));
  HGR_RETURN_IF_ERROR(drop_binding(executor, binding));
  /* The executor's own buffer may never have seen what the binding held. */
  if (io == HGR_INPUT) executor->input_set[index] = false;
  return HGR_OK;
}

hgr_binding_kind_t hgr_executor_binding_kind(const hgr_executor_t* executor, hgr_io_t io, size_t index) {
  if (!executor || !executor->input_bindings) return HGR_BINDING_NONE;
  const hgr_graph_t* graph = executor->graph;
  const hgr__io_binding_t* binding = NULL;
  if (io == HGR_INPUT && index < graph->arg_count) binding = &executor->input_bindings[index];
  if (io == HGR_OUTPUT && index < graph->head_count) binding = &executor->output_bindings[index];
  if (!binding) return HGR_BINDING_NONE;
  switch (binding->kind) {
    case HGR__BIND_NONE: return HGR_BINDING_NONE;
    case HGR__BIND_BUFFER: return HGR_BINDING_BUFFER;
    case HGR__BIND_HOST_ZERO_COPY: return HGR_BINDING_HOST_ZERO_COPY;
    case HGR__BIND_HOST_COPY: return HGR_BINDING_HOST_COPY;
  }
  return HGR_BINDING_NONE;
}

/* ---- outputs as device buffers --------------------------------------------------------------- */

/* Fills out with mem and a marker on storage_id's transfer queue that completes once
 * the commands before it there (and, when ordered, storage_id's writer) have. */
static hgr_status_t export_buffer(hgr_executor_t* executor, uint32_t storage_id, cl_mem mem, bool ordered,
                                  size_t bytes, hgr_device_buffer_t* out_buffer) {
  uint32_t queue = transfer_queue_of(executor, storage_id);
  const hgr__device_t* device = &executor->instance->devices[executor->storages[storage_id].device_index];
  uint32_t wait_count = 0;
  if (ordered) HGR_RETURN_IF_ERROR(hgr__order_storage(executor, storage_id, false, queue, &wait_count));
  HGR_RETURN_IF_ERROR(hgr__commands_reserve(executor, 1));
  cl_event ready = NULL;
  cl_int error = clEnqueueMarkerWithWaitList(executor->queues[queue].queue, wait_count,
                                             wait_count ? executor->wait : NULL, &ready);
  if (error != CL_SUCCESS) return HGR_CL_STATUS(error, "clEnqueueMarkerWithWaitList on %s", device->info.spec);
  hgr_status_t status = hgr__queue_enqueued(executor, queue, ready);
  if (!status) status = hgr__queue_flush(executor, queue);
  /* A host-driven device (Oclgrind) runs only while hgr drives it: the values are
   * made ready here, or the caller's wait on `ready` could never end. */
  if (!status && has_host_driven_queue(executor))
    status = await_events(executor, &ready, 1, executor->commands_base + executor->command_count);
  if (status) {
    clReleaseEvent(ready);
    return status;
  }
  clRetainMemObject(mem);
  *out_buffer = (hgr_device_buffer_t){mem, bytes, executor->storages[storage_id].device_index, device->device,
                                      executor->queues[queue].context, ready};
  return HGR_OK;
}

hgr_status_t hgr_executor_output_buffer(hgr_executor_t* executor, size_t index, hgr_device_buffer_t* out_buffer) {
  memset(out_buffer, 0, sizeof(*out_buffer));
  hgr_tensor_info_t info;
  hgr__io_binding_t* binding = NULL;
  HGR_RETURN_IF_ERROR(io_lookup(executor, HGR_OUTPUT, index, &info, &binding));
  uint32_t storage_id = binding->storage;
  return export_buffer(executor, storage_id, executor->storages[storage_id].mem, true, info.bytes, out_buffer);
}

hgr_status_t hgr_fence_output_buffer(hgr_fence_t* fence, size_t index, hgr_device_buffer_t* out_buffer) {
  memset(out_buffer, 0, sizeof(*out_buffer));
  hgr_executor_t* executor = NULL;
  HGR_RETURN_IF_ERROR(fence_outputs(fence, &executor));
  hgr_tensor_info_t info;
  hgr__io_binding_t* binding = NULL;
  HGR_RETURN_IF_ERROR(io_lookup(executor, HGR_OUTPUT, index, &info, &binding));
  if (!fence->snapshots[index]) {
    if (executor->output_holder[index] != fence)
      return HGR_STATUS(HGR_STATUS_INTERNAL, "run %llu's output %zu is neither in its storage nor copied",
                        (unsigned long long)fence->run, index);
    HGR_RETURN_IF_ERROR(snapshot_output(executor, fence, index));
    executor->output_holder[index] = NULL;
  }
  fence->exported = true;
  /* The copy was enqueued on the same in-order queue: the marker follows it. */
  return export_buffer(executor, binding->storage, fence->snapshots[index], false, info.bytes, out_buffer);
}

void hgr_device_buffer_release(hgr_device_buffer_t* buffer) {
  if (!buffer) return;
  if (buffer->mem) clReleaseMemObject(buffer->mem);
  if (buffer->ready) clReleaseEvent(buffer->ready);
  memset(buffer, 0, sizeof(*buffer));
}

/* ---- stepping (debugging) ------------------------------------------------------------ */

hgr_status_t hgr_executor_read_entry(hgr_executor_t* executor, uint32_t node_id, uint32_t index, void* data,
                                     size_t bytes) {
  if (!executor) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "executor is NULL");
  const hgr_graph_t* graph = executor->graph;
  if (node_id >= graph->node_count || index >= graph->nodes[node_id].num_outputs)
    return HGR_STATUS(HGR_STATUS_OUT_OF_RANGE, "output %u of node %u", index, node_id);
  if (executor->plan_only)
    return HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION, "this executor was created plan-only and has no buffers");
  HGR_RETURN_IF_ERROR(check_usable(executor));
  const hgr__entry_t* entry = &graph->entries[graph->node_row_ptr[node_id] + index];
  if (bytes != entry->bytes)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "output %u of node %u '%s' has %llu bytes, %zu were given", index,
                      node_id, graph->nodes[node_id].name, (unsigned long long)entry->bytes, bytes);
  if (!bytes) return HGR_OK;
  if (!data) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "data is NULL");
  if (executor->entry_staging_bytes < bytes) {
    void* grown = aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!grown) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory (%zu bytes)", bytes);
    free(executor->entry_staging); /* no read is pending on it: the last one completed */
    executor->entry_staging = grown;
    executor->entry_staging_bytes = bytes;
  }
  char what[256];
  snprintf(what, sizeof(what), "output %u of node %u '%s'", index, node_id, graph->nodes[node_id].name);
  return read_into(executor, entry->storage_id, executor->storages[entry->storage_id].mem, true,
                   executor->entry_staging, data, bytes, what);
}

hgr_status_t hgr_executor_run_stepwise(hgr_executor_t* executor, hgr_node_visitor_t visit, void* user) {
  if (!executor || !visit) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "executor and visit are needed");
  HGR_RETURN_IF_ERROR(hgr_executor_wait(executor)); /* also refuses plan-only and failed executors */
  const hgr_graph_t* graph = executor->graph;
  HGR_RETURN_IF_ERROR(check_inputs_set(executor));
  for (uint32_t i = 0; i < graph->arg_count; ++i)
    if (!visit(executor, graph->arg_nodes[i], user)) return HGR_OK;
  if (executor->profiling) hgr__profile_reset(executor);
  executor->profile_complete = false;
  HGR_RETURN_IF_ERROR(release_holders(executor, UINT32_MAX));
  HGR_RETURN_IF_ERROR(hgr__commands_reserve(executor, commands_per_run(executor)));
  for (uint32_t i = 0; i < graph->arg_count; ++i)
    HGR_RETURN_IF_ERROR(sync_binding(executor, &executor->input_bindings[i], true));
  for (uint32_t s = 0; s < executor->step_count; ++s) {
    hgr__step_t* step = &executor->steps[s];
    hgr_status_t status = HGR_OK;
    executor->stepping = true; /* not a profiled run */
    executor->enqueue_step = s;
    if (step->kind == HGR__STEP_KERNEL) status = enqueue_kernel(executor, step);
    else if (step->kind == HGR__STEP_COPY) status = hgr__transfer_enqueue(executor, step);
    executor->enqueue_step = UINT32_MAX;
    executor->run_in_flight = true;
    if (!status) status = hgr_executor_wait(executor);
    executor->stepping = false;
    if (status) return hgr_status_annotate(status, "stepping %s", graph->nodes[step->node_id].name);
    if (!visit(executor, step->node_id, user)) return HGR_OK;
  }
  for (uint32_t o = 0; o < graph->head_count; ++o)
    HGR_RETURN_IF_ERROR(sync_binding(executor, &executor->output_bindings[o], false));
  return hgr_executor_wait(executor);
}

static bool same_shape_info(const hgr_tensor_info_t* a, const hgr_tensor_info_t* b) {
  if (a->ndim != b->ndim) return false;
  for (int32_t d = 0; d < a->ndim; ++d)
    if (a->shape[d] != b->shape[d]) return false;
  return true;
}

hgr_status_t hgr_executor_load_params(hgr_executor_t* executor, const hgr_params_t* params, size_t* out_unused_count) {
  return hgr__executor_load_params(executor, params, false, out_unused_count);
}

hgr_status_t hgr__executor_load_params(hgr_executor_t* executor, const hgr_params_t* params, bool skip_shared,
                                       size_t* out_unused_count) {
  if (out_unused_count) *out_unused_count = 0;
  for (size_t i = 0; i < executor->unused_param_count; ++i) free(executor->unused_params[i]);
  free(executor->unused_params);
  executor->unused_params = NULL;
  executor->unused_param_count = 0;
  size_t count = hgr_params_count(params);
  executor->unused_params = calloc(count + 1, sizeof(char*));
  if (!executor->unused_params) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  for (size_t p = 0; p < count; ++p) {
    hgr_tensor_info_t param, input;
    const void* data = NULL;
    size_t index;
    HGR_RETURN_IF_ERROR(hgr_params_get(params, p, &param, &data));
    hgr_status_t status = hgr_executor_input_index(executor, param.name, &index);
    if (status) {
      hgr_status_free(status);
      HGR_RETURN_IF_ERROR(hgr__strdup(param.name, &executor->unused_params[executor->unused_param_count]));
      executor->unused_param_count++;
      continue;
    }
    HGR_RETURN_IF_ERROR(hgr_executor_input_info(executor, index, &input));
    char want[24], have[24];
    if (!hgr_dtype_equal(param.dtype, input.dtype) || param.bytes != input.bytes || !same_shape_info(&param, &input))
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT,
                        "param '%s' is %s with %llu bytes, but input %zu '%s' is %s with %llu bytes%s", param.name,
                        hgr_dtype_format(param.dtype, have, sizeof(have)), (unsigned long long)param.bytes, index,
                        input.name, hgr_dtype_format(input.dtype, want, sizeof(want)),
                        (unsigned long long)input.bytes,
                        param.bytes == input.bytes && hgr_dtype_equal(param.dtype, input.dtype) ? " (shapes differ)" : "");
    const hgr_graph_t* graph = executor->graph;
    uint32_t storage_id = graph->entries[graph->node_row_ptr[graph->arg_nodes[index]]].storage_id;
    if (skip_shared && executor->storages[storage_id].shared) continue;
    HGR_RETURN_IF_ERROR(hgr_status_annotate(hgr_executor_set_input(executor, index, data, (size_t)param.bytes),
                                            "param '%s'", param.name));
    executor->storages[storage_id].params = true; /* another executor may share it */
  }
  if (out_unused_count) *out_unused_count = executor->unused_param_count;
  return HGR_OK;
}

/* ---- summary ----------------------------------------------------------------------------- */

size_t hgr_executor_key_count(const hgr_executor_t* executor) { return executor->key_count; }
hgr_key_binding_t hgr_executor_key_binding(const hgr_executor_t* executor, size_t i) { return executor->keys[i]; }
size_t hgr_executor_device_count(const hgr_executor_t* executor) { return executor->device_count; }
hgr_device_usage_t hgr_executor_device_usage(const hgr_executor_t* executor, size_t i) {
  return executor->devices[i].usage;
}
hgr_copy_summary_t hgr_executor_copy_summary(const hgr_executor_t* executor) { return executor->copies; }

const char* hgr_executor_unused_param(const hgr_executor_t* executor, size_t i) {
  return i < executor->unused_param_count ? executor->unused_params[i] : NULL;
}

hgr_status_t hgr_executor_device_time(const hgr_executor_t* executor, size_t i, hgr_device_time_t* out_time) {
  memset(out_time, 0, sizeof(*out_time));
  if (i >= executor->device_count)
    return HGR_STATUS(HGR_STATUS_OUT_OF_RANGE, "device %zu of %zu", i, executor->device_count);
  if (!executor->profiling || executor->run_in_flight)
    return HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION,
                      "device times need an executor created with profiling and a run that was waited for");
  size_t device = executor->devices[i].device_index;
  for (uint32_t s = 0; s < executor->step_count; ++s) {
    const hgr__step_t* step = &executor->steps[s];
    if (step->device_index != device || !step->done) continue;
    for (uint32_t k = 0; k < step->done_count; ++k) {
      if (!step->done[k]) continue;
      cl_ulong start = 0, end = 0;
      cl_int error = clGetEventProfilingInfo(step->done[k], CL_PROFILING_COMMAND_START, sizeof(start), &start, NULL);
      if (error == CL_SUCCESS)
        error = clGetEventProfilingInfo(step->done[k], CL_PROFILING_COMMAND_END, sizeof(end), &end, NULL);
      if (error != CL_SUCCESS) return HGR_CL_STATUS(error, "clGetEventProfilingInfo");
      out_time->commands++;
      if (start && end > start) {
        out_time->timed_commands++;
        out_time->busy_ns += end - start;
      }
    }
  }
  return HGR_OK;
}

/* ---- teardown ---------------------------------------------------------------------------- */

/* After a device failure: gives the commands that can still finish (those not
 * waiting on a failed command; every bridge is failed by now) up to a second to do
 * so before their host memory is freed. Commands that waited on a failed command
 * never run on PoCL; other drivers terminate them. True when every queue drained. */
static bool drain_after_failure(hgr_executor_t* executor) {
  struct timespec pause = {0, 1000000};
  for (int attempt = 0; attempt < 1000; ++attempt) {
    hgr_status_free(hgr__bridges_drive(executor));
    bool pending = false;
    for (uint32_t q = 0; q < executor->queue_count && !pending; ++q) {
      cl_int execution = CL_COMPLETE;
      if (executor->queues[q].last)
        clGetEventInfo(executor->queues[q].last, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(execution), &execution,
                       NULL);
      pending = execution > CL_COMPLETE;
    }
    if (!pending) return true;
    nanosleep(&pause, NULL);
  }
  return false;
}

void hgr_executor_release(hgr_executor_t* executor) {
  if (!executor) return;
  /* Every bridge must be set before anything it touches goes away. After a device
   * failure nothing is waited for (it may never complete); the bridges are failed. */
  bool idle = true;
  if (executor->queues && !executor->failure) hgr_status_free(hgr_executor_wait(executor));
  if (executor->failure || executor->bridge_count || executor->command_count) {
    hgr__bridges_fail_unset(executor);
    idle = drain_after_failure(executor);
  }
  /* Commands stuck behind a failed one may still name the bridges: those are left
   * to the driver rather than freed under it. */
  hgr__bridges_forget(executor, idle);
  forget_commands(executor, idle);
  free(executor->bridges);
  free(executor->commands);
  free(executor->command_steps);
  /* Fences outlive the executor with what they know; their copies go now. */
  const hgr_graph_t* graph = executor->graph;
  for (hgr_fence_t* fence = executor->fences; fence;) {
    hgr_fence_t* next = fence->next;
    for (uint32_t o = 0; o < graph->head_count; ++o)
      if (fence->snapshots[o]) clReleaseMemObject(fence->snapshots[o]);
    memset(fence->snapshots, 0, graph->head_count * sizeof(cl_mem));
    fence->executor = NULL;
    fence->next = NULL;
    if (!fence->retired && !fence->failure)
      fence->failure = executor->failure ? copy_status(executor->failure)
                                         : HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION,
                                                      "run %llu's executor was released before it completed",
                                                      (unsigned long long)fence->run);
    if (!fence->retired) fence_unref(fence); /* the executor's reference */
    fence = next;
  }
  for (uint32_t h = 0; h < executor->held_host_count; ++h) free(executor->held_host[h].memory);
  free(executor->held_host);
  for (uint32_t o = 0; executor->output_bindings && o < graph->head_count; ++o)
    hgr_status_free(drop_binding(executor, &executor->output_bindings[o]));
  for (uint32_t i = 0; executor->input_bindings && i < graph->arg_count; ++i)
    hgr_status_free(drop_binding(executor, &executor->input_bindings[i]));
  free(executor->input_bindings);
  free(executor->output_bindings);
  for (uint32_t o = 0; executor->snapshot_pool && o < graph->head_count; ++o) {
    for (uint32_t k = 0; k < executor->snapshot_pool_count[o]; ++k) clReleaseMemObject(executor->snapshot_pool[o][k]);
    free(executor->snapshot_pool[o]);
  }
  free(executor->snapshot_pool);
  free(executor->snapshot_pool_count);
  free(executor->output_holder);
  if (executor->injected) clReleaseEvent(executor->injected);
  hgr__profile_reset(executor);
  free(executor->profiled);
  free(executor->step_host_ns);
  free(executor->entry_staging);
  hgr_status_free(executor->failure);
  for (uint32_t s = 0; executor->steps && s < executor->step_count; ++s) {
    hgr__step_t* step = &executor->steps[s];
    hgr__step_release_kernels(step);
    for (uint32_t k = 0; step->done && k < step->done_count; ++k)
      if (step->done[k]) clReleaseEvent(step->done[k]);
    free(step->done);
    hgr__transfer_release(step);
    free(step->in_storages);
    free(step->out_storages);
  }
  free(executor->steps);
  hgr__storage_release(executor);
  hgr__programs_release(executor);
  hgr_kernel_library_release(executor->kernels);
  for (uint32_t q = 0; executor->queues && q < executor->queue_count; ++q) {
    if (executor->queues[q].queue) clReleaseCommandQueue(executor->queues[q].queue);
  }
  free(executor->queues);
  for (size_t i = 0; i < executor->unused_param_count; ++i) free(executor->unused_params[i]);
  free(executor->unused_params);
  free(executor->keys);
  free(executor->devices);
  free(executor->entry_device);
  free(executor->input_set);
  free(executor->wait);
  for (uint32_t o = 0; executor->output_staging && o < executor->graph->head_count; ++o) free(executor->output_staging[o]);
  free(executor->output_staging);
  hgr_graph_release(executor->graph);
  free(executor);
}
