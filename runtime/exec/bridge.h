/* Cross-context dependencies ("bridges"): a user event in the waiting queue's context
 * completed (or failed, with the same negative status) when a command of another
 * context completes, so that an event never enters another context's wait list. The
 * executor keeps a record of every bridge until the commands waiting on it retired:
 * PoCL 3.1 and Oclgrind 21.10 do not retain the events of a wait list
 * (pocl/pocl#1431). Bridges into a host-driven device (Oclgrind) are set by the host
 * thread, which also drives such devices only as far as their bridges allow. Sits
 * on queue.h; used by the copies (transfer.c) and the waits (wait.c). */
#ifndef HGR_BRIDGE_H_
#define HGR_BRIDGE_H_

#include <stdatomic.h>

#include "queue.h"

/* For a bridge into a host-driven device, the driver's callback only records the
 * source's status here and the host thread sets the user event: Oclgrind's objects
 * are not safe to touch from another thread (its reference counts are not atomic). */
typedef struct hgr__bridge_signal_t {
  atomic_int status; /* CL_RUNNING until the source completes */
  atomic_int refs;   /* the callback's and the bridge record's */
  hgr_allocator_t allocator; /* it was allocated with (the last reference frees it,
                                maybe on a driver thread) */
} hgr__bridge_signal_t;

/* A user event in the context of to_queue, set from the source command's callback
 * (or at once, if the source had completed). */
typedef struct hgr__bridge_t {
  cl_event event;       /* the user event, retained */
  hgr__bridge_signal_t* signal; /* NULL unless to_queue is host-driven */
  cl_event source;      /* retained while the source's device is host-driven */
  uint32_t from_queue;
  uint32_t to_queue;
  uint64_t source_seq;  /* position of the source on from_queue */
  uint64_t needed_seq;  /* position on to_queue from which commands may wait on it */
  bool passes_failure;  /* a failed source fails it (see fragile_failed_user_events) */
} hgr__bridge_t;

/* The bridges made since every queue was last idle: a failure fails the unset ones
 * so nothing waits on them forever, host-driven queues are driven only as far as
 * their incoming bridges allow, and their events are released once idle. */
typedef struct hgr__bridge_set_t {
  hgr_allocator_t allocator; /* the executor's: the records and signals */
  hgr__bridge_t* bridges;
  uint32_t count, capacity;
} hgr__bridge_set_t;

/* Makes a user event in the context of queue `to_queue` that completes (or fails,
 * with the same negative status) when `source`, just enqueued on `from_queue`,
 * completes: from the source's event callback, or at once if it already has. The
 * next command enqueued on to_queue may wait on it. *out_bridge is retained for
 * the caller. */
hgr_status_t hgr__bridge_event(hgr__bridge_set_t* set, const hgr__queue_set_t* queues, cl_event source,
                               uint32_t from_queue, uint32_t to_queue, const char* what, cl_event* out_bridge);
/* The same for a source enqueued earlier, at position source_seq of from_queue. */
hgr_status_t hgr__bridge_event_at(hgr__bridge_set_t* set, const hgr__queue_set_t* queues, cl_event source,
                                  uint32_t from_queue, uint64_t source_seq, uint32_t to_queue, const char* what,
                                  cl_event* out_bridge);
/* The same for a source that is none of the executor's commands (a caller's event,
 * another executor's): from_queue is UINT32_MAX, so nothing drives toward it. A
 * source on a host-driven device must have completed already (hgr's exported
 * buffers' events have: readback.c), since nothing here would drive it. */
hgr_status_t hgr__bridge_foreign(hgr__bridge_set_t* set, const hgr__queue_set_t* queues, cl_event source,
                                 uint32_t to_queue, const char* what, cl_event* out_bridge);
/* Fails every bridge that is not set yet (after a device failure), so that no
 * command waits on one forever. */
void hgr__bridges_fail_unset(hgr__bridge_set_t* set);
/* Drops the records of every bridge, releasing their events when release_events is
 * set, which the caller does once every command that waits on them has completed
 * (see above); without it the events are left to the driver. */
void hgr__bridges_forget(hgr__bridge_set_t* set, bool release_events);
/* Drops the records of set bridges whose waiting command has retired, releasing
 * their events. */
void hgr__bridges_retire(hgr__bridge_set_t* set, const hgr__queue_set_t* queues);
/* Makes host-driven queues run as far as their incoming bridges allow: up to each
 * source of an outgoing bridge in turn, then to their last command. Never blocks on
 * a command that waits for an unset bridge. */
hgr_status_t hgr__bridges_drive(hgr__bridge_set_t* set, const hgr__queue_set_t* queues);

#endif /* HGR_BRIDGE_H_ */
