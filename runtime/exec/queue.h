/* The executor's in-order command queues: one record per queue with where its
 * commands stand (enqueued, flushed, retired), and the event-status query that every
 * wait builds on. The lowest layer of the executor: it calls only OpenCL. */
#ifndef HGR_QUEUE_H_
#define HGR_QUEUE_H_

#include "device_internal.h"

/* One in-order command queue of one device. */
typedef struct hgr__queue_t {
  cl_command_queue queue;
  size_t device_index;  /* instance device */
  const char* spec;     /* its device's spec string (borrowed from the instance) */
  cl_context context;   /* borrowed from the instance */
  uint32_t unflushed;   /* commands enqueued since the last clFlush */
  uint64_t seq;         /* commands enqueued so far */
  bool host_driven;     /* the device runs commands only while the host waits on them */
  bool fragile_failed_user_events; /* see hgr__device_t */
  uint64_t retired_seq; /* commands up to this position have completed and their
                           kept events were released (hgr__order_retire) */
  cl_event last;        /* the newest command's event (borrowed from the kept
                           commands, order.h); in order, it covers all; NULL once retired */
} hgr__queue_t;

typedef struct hgr__queue_set_t {
  hgr_allocator_t allocator; /* the executor's: the table */
  hgr__queue_t* queues;
  uint32_t count;
  uint32_t capacity;
} hgr__queue_set_t;

/* Adds a queue of instance device device_index (creating the cl_command_queue unless
 * create is false, for plan-only executors); *out_queue is its index. */
hgr_status_t hgr__queue_set_add(hgr__queue_set_t* set, hgr_instance_t* instance, size_t device_index,
                                bool profiling, bool create, uint32_t* out_queue);
/* Releases every cl_command_queue and the records. */
void hgr__queue_set_release(hgr__queue_set_t* set);
/* Whether some queue runs only while the host drives it (Oclgrind). */
bool hgr__queue_set_host_driven(const hgr__queue_set_t* set);

/* Flushes queue if it has unflushed commands (never a host-driven one: it runs its
 * commands inside clFlush, blocking on any unset bridge; bridge.h drives it). */
hgr_status_t hgr__queue_flush(hgr__queue_set_t* set, uint32_t queue);
#define HGR_FLUSH_EVERY 16 /* commands a queue may hold unflushed (TVM #16530) */

/* Notes a command just enqueued on queue with event (borrowed: the caller keeps a
 * reference, order.h); flushes every few commands. Inline: once per command. */
static inline hgr_status_t hgr__queue_note(hgr__queue_set_t* set, uint32_t queue, cl_event event) {
  hgr__queue_t* q = &set->queues[queue];
  q->last = event;
  q->seq++;
  if (++q->unflushed >= HGR_FLUSH_EVERY) return hgr__queue_flush(set, queue);
  return HGR_OK;
}

/* The event's execution status; CL_QUEUED (pending) when it cannot be queried: taken
 * for complete, it would set a bridge (or drive a queue into one) before its producer
 * finished. */
cl_int hgr__event_status(cl_event event);
/* Whether every event completed: 1, one failed: -1, else 0. */
int hgr__events_complete(const cl_event* events, uint32_t count);

#endif /* HGR_QUEUE_H_ */
