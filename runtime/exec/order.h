/* Ordering and command keeping: what every command of the executor must wait for,
 * and the references that keep those commands' events alive.
 *
 * Per storage the executor remembers its last writer and its readers since (one per
 * queue: on an in-order queue the newest covers the older ones); a command touching
 * a storage waits for the writer and, when it writes, the readers, unless they are
 * on its own queue or have retired. Kernel steps look and record only where the
 * executor's schedule (plan.c) says another queue, or what follows the run, may
 * meet them; the trackers may then hold older entries than the newest access,
 * which only adds waits on commands that are ordered before anyway. Every command event since every queue was last
 * idle is kept (retained): PoCL 3.1 frees a command that a failed dependency
 * terminated while commands after it on the queue still refer to it, unless the
 * application holds a reference. The trackers and each queue's last event borrow
 * these references (taking and dropping one per access cost about 8 driver calls
 * per node), so they are cleared whenever the references are dropped. Room for a
 * whole run is reserved before it enqueues anything (hgr__order_reserve), so keeping
 * never fails halfway and nothing borrows an event that is not kept.
 *
 * Owns the queues (queue.h) and the bridges (bridge.h); knows nothing of nodes,
 * storages' buffers or fences. */
#ifndef HGR_ORDER_H_
#define HGR_ORDER_H_

#include "bridge.h"
#include "queue.h"

/* An event and the queue it was enqueued on (or the queue whose context it belongs
 * to, for user events). */
typedef struct hgr__tracked_event_t {
  cl_event event; /* borrowed from the kept commands; NULL when none */
  uint32_t queue;
  uint64_t seq;   /* its position on queue: once the queue's retired_seq reaches it,
                     it has completed and its reference may be gone, so it is ignored */
} hgr__tracked_event_t;

/* Who touched one storage last. */
typedef struct hgr__storage_order_t {
  hgr__tracked_event_t writer;   /* last writer */
  hgr__tracked_event_t* readers; /* readers since the last write, at most one per queue */
  uint32_t reader_count;
} hgr__storage_order_t;

/* Host memory that a non-blocking write reads from, freed once the write's queue
 * has retired it. */
typedef struct hgr__held_host_t {
  void* memory;
  uint32_t queue;
  uint64_t seq;
} hgr__held_host_t;

/* A command of the recorded run, for profiling. */
typedef struct hgr__profiled_t {
  cl_event event; /* retained */
  uint32_t queue;
  uint32_t node_id;
  uint64_t host_ns;
} hgr__profiled_t;

typedef struct hgr__order_t {
  hgr_allocator_t allocator; /* the executor's: everything below (set before use) */
  hgr__queue_set_t queues;
  hgr__bridge_set_t bridges;
  hgr__storage_order_t* storages; /* per storage slot */
  uint32_t storage_count;
  /* Scratch wait list, large enough for any one command: per storage it touches, its
   * writer and at most one reader per queue, plus two bridges. */
  cl_event* wait;
  uint32_t wait_capacity;
  cl_event* commands;       /* kept events, in enqueue order */
  uint32_t* command_steps;  /* per kept event: the step that enqueued it, or UINT32_MAX */
  uint32_t command_count, command_capacity;
  uint64_t commands_base;   /* absolute index of commands[0]: runs in flight retire
                               their commands from the front */
  uint64_t scan_from;       /* absolute index: commands before it completed well */
  uint32_t enqueue_step;    /* the step being enqueued; UINT32_MAX outside */
  uint32_t enqueue_node;    /* its node */
  hgr__held_host_t* held_host;
  uint32_t held_host_count, held_host_capacity;
  /* While recording: every command enqueued inside a step (hgr__order_begin_step),
   * retained, with its node, queue and host time. */
  bool recording;
  hgr__profiled_t* profiled;
  uint32_t profiled_count, profiled_capacity;
} hgr__order_t;

/* Makes the trackers of storage_count storages and a wait list for commands touching
 * at most max_storages storages (after every queue was added). */
hgr_status_t hgr__order_prepare(hgr__order_t* order, uint32_t storage_count, uint32_t max_storages);
/* Drops the kept events and the bridges' records, releasing their events when
 * release_events is set (every command has completed; else they are left to the
 * driver, see bridge.h), and clears the trackers that borrowed them. */
void hgr__order_forget(hgr__order_t* order, bool release_events);
/* Frees what hgr__order_forget left and releases the queues. */
void hgr__order_release(hgr__order_t* order);

/* Makes room for `extra` more kept events, so that keeping them cannot fail. */
hgr_status_t hgr__order_reserve(hgr__order_t* order, uint32_t extra);
/* Keeps a reference to event until its run retires. */
hgr_status_t hgr__order_keep(hgr__order_t* order, cl_event event);
/* Notes a command enqueued on queue with event: kept, recorded while recording,
 * flushed every few commands. */
hgr_status_t hgr__order_enqueued(hgr__order_t* order, uint32_t queue, cl_event event);
/* The same for a command whose event reference passes to the order (kept without a
 * retain of its own); on failure the reference is released. */
hgr_status_t hgr__order_adopt(hgr__order_t* order, uint32_t queue, cl_event event);
/* Commands enqueued from now on belong to step (on node_id); hgr__order_end_step
 * ends that. Inline: once per step. */
static inline void hgr__order_begin_step(hgr__order_t* order, uint32_t step, uint32_t node_id) {
  order->enqueue_step = step;
  order->enqueue_node = node_id;
}
static inline void hgr__order_end_step(hgr__order_t* order) {
  order->enqueue_step = UINT32_MAX;
  order->enqueue_node = UINT32_MAX;
}

/* Appends to order->wait (at *wait_count) the events a command on `queue` must wait
 * for to access storage: its last writer (always) and, when `writing`, its readers.
 * Events on `queue` itself are skipped (in-order), duplicates dropped, and producer
 * queues with unflushed work are flushed. */
hgr_status_t hgr__order_storage(hgr__order_t* order, uint32_t storage, bool writing, uint32_t queue,
                                uint32_t* wait_count);
/* Records that `event` (on queue) read or wrote storage. Borrows event, which must be
 * the command that hgr__order_enqueued noted last on queue. */
void hgr__order_record(hgr__order_t* order, uint32_t storage, bool writing, cl_event event, uint32_t queue);

/* Holds memory (from order->allocator; a non-blocking write on queue, just noted,
 * reads from it) until that write retires; frees it and fails when it cannot be held. Reserve first with
 * hgr__order_reserve_held. */
hgr_status_t hgr__order_reserve_held(hgr__order_t* order);
void hgr__order_hold(hgr__order_t* order, void* memory, uint32_t queue);

/* Releases what the commands up to queue_seq (per queue) and the kept events before
 * absolute index command_end hold, all of which have completed: their kept events
 * (the trackers that borrowed them become stale through retired_seq), the host
 * memory writes read from, and the bridges they waited on. */
void hgr__order_retire(hgr__order_t* order, const uint64_t* queue_seq, uint64_t command_end);
/* Every command enqueued so far has completed: retires them all. */
void hgr__order_retire_all(hgr__order_t* order);
/* The absolute index just past the newest kept command. */
static inline uint64_t hgr__order_end(const hgr__order_t* order) {
  return order->commands_base + order->command_count;
}

/* Releases the recorded commands (at the start of a recorded run and at release). */
void hgr__order_profile_reset(hgr__order_t* order);

#endif /* HGR_ORDER_H_ */
