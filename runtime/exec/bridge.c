/* Cross-context dependencies (bridge.h). */
#include <stdlib.h>

#include "alloc.h"
#include "bridge.h"

/* Runs on a driver thread: only sets the user event and drops its reference. */
static void release_signal(hgr__bridge_signal_t* signal) {
  if (signal && atomic_fetch_sub(&signal->refs, 1) == 1) hgr__free(signal->allocator, signal);
}

/* Runs on a driver thread: records the status for the host thread to apply. */
static void CL_CALLBACK signal_bridge(cl_event source, cl_int status, void* user_data) {
  (void)source;
  hgr__bridge_signal_t* signal = user_data;
  atomic_store(&signal->status, status < 0 ? status : CL_COMPLETE);
  release_signal(signal);
}

static void CL_CALLBACK complete_bridge(cl_event source, cl_int status, void* user_data) {
  (void)source;
  cl_event bridge = (cl_event)user_data;
  clSetUserEventStatus(bridge, status < 0 ? status : CL_COMPLETE);
  clReleaseEvent(bridge);
}

/* The same for a context where failed user events are unsafe: always completes. */
static void CL_CALLBACK complete_bridge_normally(cl_event source, cl_int status, void* user_data) {
  (void)source;
  (void)status;
  cl_event bridge = (cl_event)user_data;
  clSetUserEventStatus(bridge, CL_COMPLETE);
  clReleaseEvent(bridge);
}

/* Keeps a record of an unset bridge in set->bridges. */
static hgr_status_t remember_bridge(hgr__bridge_set_t* set, const hgr__bridge_t* bridge) {
  if (set->count == set->capacity) {
    uint32_t capacity = set->capacity ? set->capacity * 2 : 64;
    hgr__bridge_t* grown = hgr__realloc(set->allocator, set->bridges, capacity * sizeof(*grown));
    if (!grown) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    set->bridges = grown;
    set->capacity = capacity;
  }
  clRetainEvent(bridge->event);
  if (bridge->source) clRetainEvent(bridge->source);
  if (bridge->signal) atomic_fetch_add(&bridge->signal->refs, 1);
  set->bridges[set->count++] = *bridge;
  return HGR_OK;
}

/* Sets, on the host thread, the user events whose sources have reported. A bridge
 * whose event could not be set keeps its signal, to be tried again: dropped, its
 * consumer would wait forever. Returns the first such error. */
static cl_int apply_signals(hgr__bridge_set_t* set) {
  cl_int first_error = CL_SUCCESS;
  for (uint32_t b = 0; b < set->count; ++b) {
    hgr__bridge_t* bridge = &set->bridges[b];
    if (!bridge->signal) continue;
    int status = atomic_load(&bridge->signal->status);
    if (status <= CL_COMPLETE) {
      cl_int error = clSetUserEventStatus(bridge->event, status);
      if (error != CL_SUCCESS) {
        if (first_error == CL_SUCCESS) first_error = error;
        continue;
      }
      release_signal(bridge->signal);
      bridge->signal = NULL;
    }
  }
  return first_error;
}

void hgr__bridges_fail_unset(hgr__bridge_set_t* set) {
  apply_signals(set);
  for (uint32_t b = 0; b < set->count; ++b) {
    hgr__bridge_t* bridge = &set->bridges[b];
    if (hgr__event_status(bridge->event) <= CL_COMPLETE) continue;
    /* A callback may set it at the same moment; whichever comes second is refused
     * with CL_INVALID_OPERATION, which changes nothing. */
    clSetUserEventStatus(bridge->event, bridge->passes_failure ? CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
                                                               : CL_COMPLETE);
    if (bridge->signal) {
      release_signal(bridge->signal);
      bridge->signal = NULL;
    }
  }
}

/* Drops one bridge record: its references (unless they are left to the driver) and
 * its share of the signal. A callback still to run holds references of its own. */
static void drop_bridge(hgr__bridge_t* bridge, bool release_events) {
  if (release_events) {
    clReleaseEvent(bridge->event);
    if (bridge->source) clReleaseEvent(bridge->source);
  }
  release_signal(bridge->signal);
}

void hgr__bridges_forget(hgr__bridge_set_t* set, bool release_events) {
  apply_signals(set);
  for (uint32_t b = 0; b < set->count; ++b) drop_bridge(&set->bridges[b], release_events);
  set->count = 0;
}

void hgr__bridges_retire(hgr__bridge_set_t* set, const hgr__queue_set_t* queues) {
  apply_signals(set);
  uint32_t kept = 0;
  for (uint32_t b = 0; b < set->count; ++b) {
    hgr__bridge_t* bridge = &set->bridges[b];
    const hgr__queue_t* to = &queues->queues[bridge->to_queue];
    /* Set, and the command waiting on it retired, or nothing left on its queue that
     * could. */
    bool consumed = bridge->needed_seq <= to->retired_seq || to->retired_seq >= to->seq;
    if (!consumed || hgr__event_status(bridge->event) > CL_COMPLETE) {
      set->bridges[kept++] = *bridge;
      continue;
    }
    drop_bridge(bridge, true);
  }
  set->count = kept;
}

/* True when every unset bridge into queue that commands up to position seq may wait
 * on has been set. */
static bool incoming_set_up_to(const hgr__bridge_set_t* set, uint32_t queue, uint64_t seq) {
  for (uint32_t b = 0; b < set->count; ++b) {
    const hgr__bridge_t* bridge = &set->bridges[b];
    if (bridge->to_queue == queue && bridge->needed_seq <= seq && hgr__event_status(bridge->event) > CL_COMPLETE)
      return false;
  }
  return true;
}

hgr_status_t hgr__bridges_drive(hgr__bridge_set_t* set, const hgr__queue_set_t* queues) {
  cl_int error = apply_signals(set);
  if (error != CL_SUCCESS) return HGR_CL_STATUS(error, "clSetUserEventStatus (a bridge into a host-driven device)");
  for (uint32_t q = 0; q < queues->count; ++q) {
    const hgr__queue_t* queue = &queues->queues[q];
    if (!queue->host_driven || !queue->last) continue;
    bool blocked = false;
    for (uint32_t b = 0; b < set->count && !blocked; ++b) {
      hgr__bridge_t* bridge = &set->bridges[b];
      if (bridge->from_queue != q || hgr__event_status(bridge->source) <= CL_COMPLETE) continue;
      if (!incoming_set_up_to(set, q, bridge->source_seq)) {
        blocked = true;
        break;
      }
      /* Runs the queue up to the source only; its callback then sets the bridge. */
      clWaitForEvents(1, &bridge->source);
    }
    if (!blocked && hgr__event_status(queue->last) > CL_COMPLETE && incoming_set_up_to(set, q, queue->seq))
      clWaitForEvents(1, &queue->last);
  }
  return HGR_OK;
}

static hgr_status_t make_bridge(hgr__bridge_set_t* set, const hgr__queue_set_t* queues, cl_event source,
                                uint32_t from_queue, uint64_t source_seq, bool source_host_driven, uint32_t to_queue,
                                const char* what, cl_event* out_bridge);

hgr_status_t hgr__bridge_event(hgr__bridge_set_t* set, const hgr__queue_set_t* queues, cl_event source,
                               uint32_t from_queue, uint32_t to_queue, const char* what, cl_event* out_bridge) {
  return hgr__bridge_event_at(set, queues, source, from_queue, queues->queues[from_queue].seq, to_queue, what,
                              out_bridge);
}

hgr_status_t hgr__bridge_event_at(hgr__bridge_set_t* set, const hgr__queue_set_t* queues, cl_event source,
                                  uint32_t from_queue, uint64_t source_seq, uint32_t to_queue, const char* what,
                                  cl_event* out_bridge) {
  return make_bridge(set, queues, source, from_queue, source_seq, queues->queues[from_queue].host_driven, to_queue,
                     what, out_bridge);
}

hgr_status_t hgr__bridge_foreign(hgr__bridge_set_t* set, const hgr__queue_set_t* queues, cl_event source,
                                 uint32_t to_queue, const char* what, cl_event* out_bridge) {
  return make_bridge(set, queues, source, UINT32_MAX, 0, false, to_queue, what, out_bridge);
}

static hgr_status_t make_bridge(hgr__bridge_set_t* set, const hgr__queue_set_t* queues, cl_event source,
                                uint32_t from_queue, uint64_t source_seq, bool source_host_driven, uint32_t to_queue,
                                const char* what, cl_event* out_bridge) {
  *out_bridge = NULL;
  cl_int error = CL_SUCCESS;
  cl_event event = clCreateUserEvent(queues->queues[to_queue].context, &error);
  if (error != CL_SUCCESS || !event) return HGR_CL_STATUS(error, "clCreateUserEvent for %s", what);
  bool passes_failure = !queues->queues[to_queue].fragile_failed_user_events;
  hgr__bridge_t bridge = {event, NULL, source_host_driven ? source : NULL, from_queue,
                          to_queue, source_seq, queues->queues[to_queue].seq + 1, passes_failure};
  /* Every bridge is recorded, set or not, so that it outlives the commands waiting
   * on it: neither PoCL 3.1 nor Oclgrind 21.10 retains the events of a wait list. */
  hgr_status_t status = HGR_OK;
  cl_int execution = hgr__event_status(source);
  if (execution <= CL_COMPLETE) {
    /* Already done: set it now (Oclgrind 21.10 never calls a callback registered on
     * a completed event). */
    error = clSetUserEventStatus(event, execution < 0 && passes_failure ? execution : CL_COMPLETE);
    if (error != CL_SUCCESS) { /* unset, it would hold its consumer forever; nothing waits on it yet */
      clReleaseEvent(event);
      return HGR_CL_STATUS(error, "clSetUserEventStatus for %s", what);
    }
    if ((status = remember_bridge(set, &bridge))) {
      clReleaseEvent(event);
      return status;
    }
    *out_bridge = event;
    return HGR_OK;
  }
  if (queues->queues[to_queue].host_driven) {
    bridge.signal = hgr__alloc(set->allocator, sizeof(*bridge.signal));
    if (!bridge.signal) {
      clSetUserEventStatus(event, CL_OUT_OF_HOST_MEMORY);
      clReleaseEvent(event);
      return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    }
    atomic_init(&bridge.signal->status, CL_RUNNING);
    atomic_init(&bridge.signal->refs, 1); /* the callback's */
    bridge.signal->allocator = set->allocator;
  }
  status = remember_bridge(set, &bridge);
  if (status) {
    hgr__free(set->allocator, bridge.signal);
    clSetUserEventStatus(event, CL_OUT_OF_HOST_MEMORY);
    clReleaseEvent(event);
    return status;
  }
  if (bridge.signal) {
    error = clSetEventCallback(source, CL_COMPLETE, signal_bridge, bridge.signal);
    if (error != CL_SUCCESS) {
      atomic_store(&bridge.signal->status, error < 0 ? error : CL_INVALID_OPERATION);
      release_signal(bridge.signal); /* the callback's reference: it will never run */
      clReleaseEvent(event);         /* ours; the bridge record keeps one until it is set */
      return HGR_CL_STATUS(error, "clSetEventCallback for %s", what);
    }
    *out_bridge = event;
    return HGR_OK;
  }
  clRetainEvent(event); /* the callback's reference */
  error = clSetEventCallback(source, CL_COMPLETE, passes_failure ? complete_bridge : complete_bridge_normally, event);
  if (error != CL_SUCCESS) {
    /* The callback will never run: fail the bridge so nothing waits on it forever. */
    clSetUserEventStatus(event, passes_failure ? (error < 0 ? error : CL_INVALID_OPERATION) : CL_COMPLETE);
    clReleaseEvent(event);
    clReleaseEvent(event);
    return HGR_CL_STATUS(error, "clSetEventCallback for %s", what);
  }
  *out_bridge = event;
  return HGR_OK;
}
