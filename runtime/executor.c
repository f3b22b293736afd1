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

#define HGR_FLUSH_EVERY 16 /* commands a queue may hold unflushed (TVM #16530) */

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
    executor->storages[s].writer = (hgr__tracked_event_t){NULL, 0};
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
  executor->command_capacity = (uint32_t)capacity;
  return HGR_OK;
}

hgr_status_t hgr__keep_event(hgr_executor_t* executor, cl_event event) {
  HGR_RETURN_IF_ERROR(hgr__commands_reserve(executor, 1));
  clRetainEvent(event);
  executor->commands[executor->command_count++] = event;
  return HGR_OK;
}

/* An upper bound on the events one run keeps: every launch, copy command and unmap,
 * and the staging user event a staged copy keeps. */
static uint32_t commands_per_run(hgr_executor_t* executor) {
  if (executor->commands_per_run) return executor->commands_per_run;
  uint64_t count = 1;
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
  if (executor->profile_node != UINT32_MAX) HGR_RETURN_IF_ERROR(hgr__profile_command(executor, queue, event));
  q->last = event;
  q->seq++;
  if (++q->unflushed >= HGR_FLUSH_EVERY) return hgr__queue_flush(executor, queue);
  return HGR_OK;
}

static hgr_status_t add_wait(hgr_executor_t* executor, hgr__tracked_event_t tracked, uint32_t queue,
                             uint32_t* wait_count) {
  cl_event* wait = executor->wait;
  if (!tracked.event || tracked.queue == queue) return HGR_OK; /* in-order: already ordered */
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
  if (writing) {
    /* Everything since the last write is ordered before this write. */
    storage->reader_count = 0;
    storage->writer = (hgr__tracked_event_t){event, queue};
    return;
  }
  /* One reader per queue: on an in-order queue the newest covers the older ones. */
  for (uint32_t r = 0; r < storage->reader_count; ++r)
    if (storage->readers[r].queue == queue) {
      storage->readers[r].event = event;
      return;
    }
  storage->readers[storage->reader_count++] = (hgr__tracked_event_t){event, queue};
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

/* The first step (in node order) whose command ended with a negative status. Steps
 * before scan_from are known to have completed well in this run and are skipped, so
 * polling a long graph does not query every node's events each time. */
static hgr_status_t find_failure(hgr_executor_t* executor) {
  bool completed_prefix = true;
  for (uint32_t s = executor->scan_from; s < executor->step_count; ++s) {
    const hgr__step_t* step = &executor->steps[s];
    bool completed = true;
    for (uint32_t k = 0; k < step->done_count && step->done; ++k) {
      if (!step->done[k]) continue;
      cl_int execution = CL_COMPLETE;
      cl_int error = clGetEventInfo(step->done[k], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(execution),
                                    &execution, NULL);
      if (error != CL_SUCCESS) return HGR_CL_STATUS(error, "clGetEventInfo(execution status)");
      if (execution < 0) return step_failure(executor, step, execution);
      completed &= execution == CL_COMPLETE;
    }
    completed_prefix &= completed;
    if (completed_prefix) executor->scan_from = s + 1;
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
  for (uint32_t i = 0; i < step->in_count; ++i)
    hgr__record_access(executor, step->in_storages[i], false, event, step->queue);
  for (uint32_t i = 0; i < step->out_count; ++i)
    hgr__record_access(executor, step->out_storages[i], true, event, step->queue);
  uint32_t slot = step->done_count - 1; /* the step's completion */
  if (step->done[slot]) clReleaseEvent(step->done[slot]);
  step->done[slot] = event; /* takes the enqueue's reference */
  return hgr__queue_enqueued(executor, step->queue, event);
}

void hgr__executor_fail_node(hgr_executor_t* executor, uint32_t node_id, cl_int code) {
  executor->fail_node = node_id;
  executor->fail_code = code;
}

hgr_status_t hgr_executor_run(hgr_executor_t* executor) {
  if (!executor) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "executor is NULL");
  if (executor->plan_only)
    return HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION, "this executor was created plan-only and cannot run");
  HGR_RETURN_IF_ERROR(check_usable(executor));
  const hgr_graph_t* graph = executor->graph;
  executor->scan_from = 0; /* the steps' events are about to be replaced */
  for (uint32_t i = 0; i < graph->arg_count; ++i)
    if (!executor->input_set[i])
      return HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION,
                        "input %u '%s' was never set (give it with set_input or in the params)", i,
                        graph->nodes[graph->arg_nodes[i]].name);
  HGR_RETURN_IF_ERROR(hgr__commands_reserve(executor, commands_per_run(executor)));
  hgr_status_t status = HGR_OK;
  if (executor->profiling) hgr__profile_reset(executor);
  executor->profile_complete = false;
  for (uint32_t s = 0; s < executor->step_count && !status; ++s) {
    hgr__step_t* step = &executor->steps[s];
    if (executor->profiling) {
      executor->profile_node = step->node_id;
      executor->step_host_ns[2 * s] = hgr__monotonic_ns();
    }
    if (step->kind == HGR__STEP_KERNEL) status = enqueue_kernel(executor, step);
    else if (step->kind == HGR__STEP_COPY) status = hgr__transfer_enqueue(executor, step);
    if (executor->profiling) executor->step_host_ns[2 * s + 1] = hgr__monotonic_ns();
  }
  executor->profile_node = UINT32_MAX;
  for (uint32_t q = 0; q < executor->queue_count; ++q)
    status = hgr_status_join(status, hgr__queue_flush(executor, q));
  executor->run_in_flight = true;
  return hgr_status_annotate(status, "run");
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
 * millisecond and once at the end (a scan queries each node's event, which on a long
 * graph cost more host time than the nodes themselves). Executors with host-driven
 * queues (Oclgrind, which runs commands only while the host waits on them, and does
 * not call callbacks registered on completed events) drive them on the way and poll
 * instead, sleeping from 5 us, doubling to at most 100 us. */
static hgr_status_t await_events(hgr_executor_t* executor, const cl_event* events, uint32_t count) {
  bool host_driven = false;
  for (uint32_t q = 0; q < executor->queue_count; ++q) host_driven |= executor->queues[q].host_driven;
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
      hgr_status_t failure = find_failure(executor);
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
  if (!status && count) status = await_events(executor, events, count);
  if (!status) { /* every queue is idle */
    hgr__bridges_forget(executor, true);
    forget_commands(executor, true);
    if (executor->run_in_flight && !executor->stepping) executor->profile_complete = executor->profiling;
    /* Every kernel has been launched once now: their binaries are complete. */
    if (executor->run_in_flight) hgr__programs_store(executor);
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

hgr_status_t hgr_executor_set_input(hgr_executor_t* executor, size_t index, const void* data, size_t bytes) {
  hgr_tensor_info_t info;
  HGR_RETURN_IF_ERROR(hgr_executor_input_info(executor, index, &info));
  HGR_RETURN_IF_ERROR(check_io(executor, &info, "input", index, data, bytes));
  const hgr_graph_t* graph = executor->graph;
  uint32_t storage_id = graph->entries[graph->node_row_ptr[graph->arg_nodes[index]]].storage_id;
  if (executor->storages[storage_id].shared)
    return HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION,
                      "input %zu '%s' (storage %u) is a parameter buffer shared between executors "
                      "(share_params_from), so it is read-only",
                      index, info.name, storage_id);
  executor->storages[storage_id].params = false; /* load_params sets it again */
  if (bytes) {
    uint32_t queue = transfer_queue_of(executor, storage_id);
    /* The write is blocking, so the host waits for the input's readers and writer
     * first, polling: a blocking call that waited on them could wait forever on a
     * host-driven device or behind a failed command. */
    uint32_t wait_count = 0;
    HGR_RETURN_IF_ERROR(hgr__order_storage(executor, storage_id, true, queue, &wait_count));
    if (executor->queues[queue].last) executor->wait[wait_count++] = executor->queues[queue].last;
    HGR_RETURN_IF_ERROR(await_events(executor, executor->wait, wait_count));
    HGR_RETURN_IF_ERROR(hgr__commands_reserve(executor, 1));
    cl_event event = NULL;
    cl_int error = clEnqueueWriteBuffer(executor->queues[queue].queue, executor->storages[storage_id].mem, CL_TRUE, 0,
                                        bytes, data, 0, NULL, &event);
    if (error != CL_SUCCESS)
      return HGR_CL_STATUS(error, "clEnqueueWriteBuffer(input %zu '%s', storage %u) on %s", index, info.name,
                           storage_id, hgr_instance_device(executor->instance, executor->storages[storage_id].device_index)->spec);
    hgr__record_access(executor, storage_id, true, event, queue);
    hgr_status_t status = hgr__queue_enqueued(executor, queue, event);
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

/* Reads bytes of storage_id into data, ordered after its writer, through *staging
 * (the executor's host memory of at least bytes, 64-byte aligned: the driver reads
 * into it, never into the caller's memory, since after a device failure the read may
 * stay pending when this call returns). `what` names the tensor for errors. */
static hgr_status_t read_storage(hgr_executor_t* executor, uint32_t storage_id, void* staging, void* data,
                                 size_t bytes, const char* what) {
  uint32_t queue = transfer_queue_of(executor, storage_id);
  const char* spec = hgr_instance_device(executor->instance, executor->storages[storage_id].device_index)->spec;
  cl_event* wait = executor->wait;
  uint32_t wait_count = 0;
  HGR_RETURN_IF_ERROR(hgr__order_storage(executor, storage_id, false, queue, &wait_count));
  HGR_RETURN_IF_ERROR(hgr__commands_reserve(executor, 1));
  cl_event event = NULL;
  cl_int error = clEnqueueReadBuffer(executor->queues[queue].queue, executor->storages[storage_id].mem, CL_FALSE, 0,
                                     bytes, staging, wait_count, wait_count ? wait : NULL, &event);
  if (error != CL_SUCCESS)
    return HGR_CL_STATUS(error, "clEnqueueReadBuffer(%s, storage %u) on %s", what, storage_id, spec);
  hgr_status_t status = hgr__queue_enqueued(executor, queue, event);
  if (!status) status = hgr__queue_flush(executor, queue);
  if (!status) status = await_events(executor, &event, 1);
  if (!status) {
    cl_int execution = CL_COMPLETE;
    clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(execution), &execution, NULL);
    if (execution < 0)
      status = HGR_STATUS(HGR_STATUS_DEVICE_FAILURE, "reading %s on %s failed on the device: %s", what, spec,
                          hgr_opencl_error_name(execution));
  }
  if (!status) {
    hgr__record_access(executor, storage_id, false, event, queue);
    memcpy(data, staging, bytes);
  }
  clReleaseEvent(event);
  return status;
}

hgr_status_t hgr_executor_get_output(hgr_executor_t* executor, size_t index, void* data, size_t bytes) {
  hgr_tensor_info_t info;
  HGR_RETURN_IF_ERROR(hgr_executor_output_info(executor, index, &info));
  HGR_RETURN_IF_ERROR(check_io(executor, &info, "output", index, data, bytes));
  if (!bytes) return HGR_OK;
  const hgr_graph_t* graph = executor->graph;
  uint32_t storage_id = graph->entries[hgr__graph_entry_id(graph, graph->heads[index])].storage_id;
  if (!executor->output_staging[index]) {
    executor->output_staging[index] = aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!executor->output_staging[index])
      return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for output %zu (%zu bytes)", index, bytes);
  }
  char what[256];
  snprintf(what, sizeof(what), "output %zu '%s'", index, info.name);
  return read_storage(executor, storage_id, executor->output_staging[index], data, bytes, what);
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
  return read_storage(executor, entry->storage_id, executor->entry_staging, data, bytes, what);
}

hgr_status_t hgr_executor_run_stepwise(hgr_executor_t* executor, hgr_node_visitor_t visit, void* user) {
  if (!executor || !visit) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "executor and visit are needed");
  HGR_RETURN_IF_ERROR(hgr_executor_wait(executor)); /* also refuses plan-only and failed executors */
  const hgr_graph_t* graph = executor->graph;
  for (uint32_t i = 0; i < graph->arg_count; ++i)
    if (!executor->input_set[i])
      return HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION,
                        "input %u '%s' was never set (give it with set_input or in the params)", i,
                        graph->nodes[graph->arg_nodes[i]].name);
  for (uint32_t i = 0; i < graph->arg_count; ++i)
    if (!visit(executor, graph->arg_nodes[i], user)) return HGR_OK;
  if (executor->profiling) hgr__profile_reset(executor);
  executor->profile_complete = false;
  HGR_RETURN_IF_ERROR(hgr__commands_reserve(executor, commands_per_run(executor)));
  for (uint32_t s = 0; s < executor->step_count; ++s) {
    hgr__step_t* step = &executor->steps[s];
    hgr_status_t status = HGR_OK;
    executor->scan_from = 0;
    if (step->kind == HGR__STEP_KERNEL) status = enqueue_kernel(executor, step);
    else if (step->kind == HGR__STEP_COPY) status = hgr__transfer_enqueue(executor, step);
    executor->run_in_flight = true;
    executor->stepping = true; /* not a profiled run */
    if (!status) status = hgr_executor_wait(executor);
    executor->stepping = false;
    if (status) return hgr_status_annotate(status, "stepping %s", graph->nodes[step->node_id].name);
    if (!visit(executor, step->node_id, user)) break;
  }
  return HGR_OK;
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
