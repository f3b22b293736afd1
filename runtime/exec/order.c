/* Ordering and command keeping (order.h). */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "order.h"

hgr_status_t hgr__order_prepare(hgr__order_t* order, uint32_t storage_count, uint32_t max_storages) {
  order->wait_capacity = (max_storages ? max_storages : 1) * (order->queues.count + 1) + 2;
  order->wait = hgr__calloc(order->allocator, order->wait_capacity, sizeof(cl_event));
  order->storages = hgr__calloc(order->allocator, storage_count + 1, sizeof(*order->storages));
  if (!order->wait || !order->storages) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  order->storage_count = storage_count;
  for (uint32_t s = 0; s < storage_count; ++s) {
    order->storages[s].readers = hgr__calloc(order->allocator, order->queues.count + 1, sizeof(hgr__tracked_event_t));
    if (!order->storages[s].readers) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  }
  return HGR_OK;
}

/* Releases the kept events and clears the trackers that borrowed them: the storages'
 * writer and readers, and each queue's last event. */
static void forget_commands(hgr__order_t* order, bool release_events) {
  for (uint32_t s = 0; order->storages && s < order->storage_count; ++s) {
    order->storages[s].writer = (hgr__tracked_event_t){NULL, 0, 0};
    order->storages[s].reader_count = 0;
  }
  for (uint32_t q = 0; q < order->queues.count; ++q) order->queues.queues[q].last = NULL;
  for (uint32_t c = 0; release_events && c < order->command_count; ++c) clReleaseEvent(order->commands[c]);
  order->command_count = 0;
}

void hgr__order_forget(hgr__order_t* order, bool release_events) {
  hgr__bridges_forget(&order->bridges, release_events);
  forget_commands(order, release_events);
}

void hgr__order_release(hgr__order_t* order) {
  hgr__order_profile_reset(order);
  hgr__free(order->allocator, order->profiled);
  for (uint32_t h = 0; h < order->held_host_count; ++h) hgr__free(order->allocator, order->held_host[h].memory);
  hgr__free(order->allocator, order->held_host);
  hgr__free(order->allocator, order->bridges.bridges);
  hgr__free(order->allocator, order->commands);
  hgr__free(order->allocator, order->command_steps);
  for (uint32_t s = 0; order->storages && s < order->storage_count; ++s)
    hgr__free(order->allocator, order->storages[s].readers);
  hgr__free(order->allocator, order->storages);
  hgr__free(order->allocator, order->wait);
  hgr__queue_set_release(&order->queues);
  hgr_allocator_t allocator = order->allocator;
  memset(order, 0, sizeof(*order));
  order->allocator = order->queues.allocator = order->bridges.allocator = allocator;
}

hgr_status_t hgr__order_reserve(hgr__order_t* order, uint32_t extra) {
  uint64_t needed = (uint64_t)order->command_count + extra;
  if (needed <= order->command_capacity) return HGR_OK;
  uint64_t capacity = order->command_capacity ? order->command_capacity : 256;
  while (capacity < needed) capacity *= 2;
  if (capacity > UINT32_MAX / 2)
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "more than %u commands in flight", UINT32_MAX / 2);
  cl_event* grown = hgr__realloc(order->allocator, order->commands, (size_t)capacity * sizeof(cl_event));
  if (!grown) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  order->commands = grown;
  uint32_t* steps = hgr__realloc(order->allocator, order->command_steps, (size_t)capacity * sizeof(uint32_t));
  if (!steps) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  order->command_steps = steps;
  order->command_capacity = (uint32_t)capacity;
  return HGR_OK;
}

hgr_status_t hgr__order_keep(hgr__order_t* order, cl_event event) {
  HGR_RETURN_IF_ERROR(hgr__order_reserve(order, 1));
  clRetainEvent(event);
  order->command_steps[order->command_count] = order->enqueue_step;
  order->commands[order->command_count++] = event;
  return HGR_OK;
}

static hgr_status_t record_profiled(hgr__order_t* order, uint32_t queue, cl_event event) {
  if (order->profiled_count == order->profiled_capacity) {
    uint32_t capacity = order->profiled_capacity ? 2 * order->profiled_capacity : 256;
    hgr__profiled_t* grown = hgr__realloc(order->allocator, order->profiled, capacity * sizeof(*grown));
    if (!grown) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    order->profiled = grown;
    order->profiled_capacity = capacity;
  }
  clRetainEvent(event);
  order->profiled[order->profiled_count++] = (hgr__profiled_t){event, queue, order->enqueue_node, hgr__monotonic_ns()};
  return HGR_OK;
}

void hgr__order_profile_reset(hgr__order_t* order) {
  for (uint32_t i = 0; i < order->profiled_count; ++i) clReleaseEvent(order->profiled[i].event);
  order->profiled_count = 0;
}

hgr_status_t hgr__order_enqueued(hgr__order_t* order, uint32_t queue, cl_event event) {
  HGR_RETURN_IF_ERROR(hgr__order_keep(order, event));
  /* Recorded: the nodes' commands of a run (not inputs or outputs). */
  if (order->recording && order->enqueue_step != UINT32_MAX) HGR_RETURN_IF_ERROR(record_profiled(order, queue, event));
  return hgr__queue_note(&order->queues, queue, event);
}

hgr_status_t hgr__order_adopt(hgr__order_t* order, uint32_t queue, cl_event event) {
  hgr_status_t status = hgr__order_reserve(order, 1);
  if (status) {
    clReleaseEvent(event);
    return status;
  }
  order->command_steps[order->command_count] = order->enqueue_step;
  order->commands[order->command_count++] = event;
  if (order->recording && order->enqueue_step != UINT32_MAX) HGR_RETURN_IF_ERROR(record_profiled(order, queue, event));
  return hgr__queue_note(&order->queues, queue, event);
}

static hgr_status_t add_wait(hgr__order_t* order, hgr__tracked_event_t tracked, uint32_t queue, uint32_t* wait_count) {
  cl_event* wait = order->wait;
  const hgr__queue_t* queues = order->queues.queues;
  if (!tracked.event || tracked.queue == queue) return HGR_OK; /* in-order: already ordered */
  if (tracked.seq <= queues[tracked.queue].retired_seq) return HGR_OK; /* completed */
  if (queues[tracked.queue].context != queues[queue].context)
    return HGR_STATUS(HGR_STATUS_INTERNAL, "an event of %s would enter a wait list in another context",
                      queues[tracked.queue].spec);
  for (uint32_t i = 0; i < *wait_count; ++i)
    if (wait[i] == tracked.event) return HGR_OK;
  if (*wait_count + 2 >= order->wait_capacity) /* two places stay free for bridges */
    return HGR_STATUS(HGR_STATUS_INTERNAL, "more than %u events to wait for", order->wait_capacity);
  /* A command may not start before its queue is flushed: flush the producer so the
   * consumer's queue cannot wait forever on it. */
  HGR_RETURN_IF_ERROR(hgr__queue_flush(&order->queues, tracked.queue));
  wait[(*wait_count)++] = tracked.event;
  return HGR_OK;
}

hgr_status_t hgr__order_storage(hgr__order_t* order, uint32_t storage, bool writing, uint32_t queue,
                                uint32_t* wait_count) {
  const hgr__storage_order_t* tracked = &order->storages[storage];
  HGR_RETURN_IF_ERROR(add_wait(order, tracked->writer, queue, wait_count));
  if (writing)
    for (uint32_t r = 0; r < tracked->reader_count; ++r)
      HGR_RETURN_IF_ERROR(add_wait(order, tracked->readers[r], queue, wait_count));
  return HGR_OK;
}

void hgr__order_record(hgr__order_t* order, uint32_t storage, bool writing, cl_event event, uint32_t queue) {
  hgr__storage_order_t* tracked_storage = &order->storages[storage];
  hgr__tracked_event_t tracked = {event, queue, order->queues.queues[queue].seq};
  if (writing) {
    /* Everything since the last write is ordered before this write. */
    tracked_storage->reader_count = 0;
    tracked_storage->writer = tracked;
    return;
  }
  /* One reader per queue: on an in-order queue the newest covers the older ones. */
  for (uint32_t r = 0; r < tracked_storage->reader_count; ++r)
    if (tracked_storage->readers[r].queue == queue) {
      tracked_storage->readers[r] = tracked;
      return;
    }
  tracked_storage->readers[tracked_storage->reader_count++] = tracked;
}

hgr_status_t hgr__order_reserve_held(hgr__order_t* order) {
  if (order->held_host_count < order->held_host_capacity) return HGR_OK;
  uint32_t capacity = order->held_host_capacity ? order->held_host_capacity * 2 : 16;
  hgr__held_host_t* grown = hgr__realloc(order->allocator, order->held_host, capacity * sizeof(*grown));
  if (!grown) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  order->held_host = grown;
  order->held_host_capacity = capacity;
  return HGR_OK;
}

void hgr__order_hold(hgr__order_t* order, void* memory, uint32_t queue) {
  order->held_host[order->held_host_count++] =
      (hgr__held_host_t){memory, queue, order->queues.queues[queue].seq};
}

void hgr__order_retire(hgr__order_t* order, const uint64_t* queue_seq, uint64_t command_end) {
  for (uint32_t q = 0; q < order->queues.count; ++q) {
    hgr__queue_t* queue = &order->queues.queues[q];
    if (queue_seq[q] > queue->retired_seq) queue->retired_seq = queue_seq[q];
    if (queue->retired_seq >= queue->seq) queue->last = NULL;
  }
  uint64_t count = command_end > order->commands_base ? command_end - order->commands_base : 0;
  if (count > order->command_count) count = order->command_count;
  if (count) {
    for (uint64_t c = 0; c < count; ++c) clReleaseEvent(order->commands[c]);
    order->command_count -= (uint32_t)count;
    memmove(order->commands, order->commands + count, order->command_count * sizeof(cl_event));
    memmove(order->command_steps, order->command_steps + count, order->command_count * sizeof(uint32_t));
    order->commands_base += count;
  }
  uint32_t kept = 0;
  for (uint32_t h = 0; h < order->held_host_count; ++h) {
    hgr__held_host_t* held = &order->held_host[h];
    if (held->seq <= order->queues.queues[held->queue].retired_seq) hgr__free(order->allocator, held->memory);
    else order->held_host[kept++] = *held;
  }
  order->held_host_count = kept;
  hgr__bridges_retire(&order->bridges, &order->queues);
}

void hgr__order_retire_all(hgr__order_t* order) {
  uint64_t seq[order->queues.count + 1];
  for (uint32_t q = 0; q < order->queues.count; ++q) seq[q] = order->queues.queues[q].seq;
  hgr__order_retire(order, seq, hgr__order_end(order));
}
