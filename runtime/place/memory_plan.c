/* Memory planning per device (place_internal.h, hgr__memory_plan). The schedule is
 * node order. Values that must share bytes (aliases, in-place pairs) become one
 * group with the union of their lifetimes; groups then share storages when their
 * lifetimes do not overlap. A storage is one buffer used from offset 0 by every value
 * in it (TVM's format has no offsets), so its size is its largest value's.
 *
 * Sharing is safe across runs in flight too: the executor orders every command on a
 * storage after the last writer and readers it recorded for it (exec/order.c), so a
 * pipelined run cannot overwrite what an earlier run still reads. */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "ops.h"
#include "place_internal.h"

typedef struct group_t {
  uint32_t root;     /* the union-find root entry */
  int32_t key;       /* device key */
  uint64_t bytes;    /* the largest member's */
  uint32_t start, end; /* first and last step alive, inclusive */
  bool pinned;       /* an input or a head: its own storage, alive the whole run */
  uint32_t storage;  /* planned storage (index within its device) */
} group_t;

typedef struct lifetimes_t {
  uint32_t* parent;  /* union-find over entries */
  uint32_t* last;    /* per entry: its last step (its producer's when unused) */
  bool* pinned;      /* per entry */
} lifetimes_t;

static uint32_t find(uint32_t* parent, uint32_t e) {
  while (parent[e] != e) {
    parent[e] = parent[parent[e]];
    e = parent[e];
  }
  return e;
}

static bool is_func(const hgr__node_t* node, const char* name) {
  return node->is_op && node->func_name && !strcmp(node->func_name, name);
}

/* Per group root: the last step and whether it is pinned, over its members. */
static void group_extent(const hgr_graph_t* graph, lifetimes_t* life, uint32_t* group_last, bool* group_pinned) {
  for (uint32_t e = 0; e < graph->entry_count; ++e) {
    group_last[e] = 0;
    group_pinned[e] = false;
  }
  for (uint32_t e = 0; e < graph->entry_count; ++e) {
    uint32_t r = find(life->parent, e);
    if (life->last[e] > group_last[r]) group_last[r] = life->last[e];
    group_pinned[r] |= life->pinned[e];
  }
}

/* Unions the alias pairs (__nop and reshape-likes: output 0 with input 0 of the same
 * bytes on the same device). */
static void union_aliases(const hgr_graph_t* graph, const hgr_kernel_library_t* kernels, uint32_t* parent) {
  for (uint32_t n = 0; n < graph->node_count; ++n) {
    const hgr__node_t* node = &graph->nodes[n];
    if (!node->is_op || node->input_count == 0 || is_func(node, "__copy")) continue;
    const hgr__op_t* op = is_func(node, "__nop") ? NULL : hgr__op_lookup(node->func_name, kernels);
    if (!is_func(node, "__nop") && (!op || op->in_place != HGR__IN_PLACE_ALIAS)) continue;
    uint32_t out = graph->node_row_ptr[n], in = hgr__graph_entry_id(graph, node->inputs[0]);
    if (graph->entries[out].bytes != graph->entries[in].bytes ||
        graph->entries[out].device_key != graph->entries[in].device_key)
      continue;
    uint32_t a = find(parent, out), b = find(parent, in);
    if (a != b) parent[a] = b;
  }
}

/* Unions each elementwise op's output 0 with an input that dies at it (same element
 * count and size, same device, neither pinned). */
static hgr_status_t union_in_place(const hgr_graph_t* graph, const hgr_kernel_library_t* kernels, lifetimes_t* life) {
  hgr_allocator_t allocator = hgr__graph_allocator(graph);
  uint32_t* group_last = hgr__alloc(allocator, ((size_t)graph->entry_count + 1) * sizeof(*group_last));
  bool* group_pinned = hgr__alloc(allocator, ((size_t)graph->entry_count + 1) * sizeof(*group_pinned));
  if (!group_last || !group_pinned) {
    hgr__free(allocator, group_last);
    hgr__free(allocator, group_pinned);
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  }
  group_extent(graph, life, group_last, group_pinned);
  for (uint32_t n = 0; n < graph->node_count; ++n) {
    const hgr__node_t* node = &graph->nodes[n];
    if (!node->is_op || node->num_outputs == 0 || is_func(node, "__nop") || is_func(node, "__copy")) continue;
    const hgr__op_t* op = hgr__op_lookup(node->func_name, kernels);
    if (!op || op->in_place != HGR__IN_PLACE_ELEMENTWISE) continue;
    uint32_t out = graph->node_row_ptr[n], out_root = find(life->parent, out);
    const hgr__entry_t* output = &graph->entries[out];
    if (group_pinned[out_root]) continue;
    for (uint32_t i = 0; i < node->input_count; ++i) {
      uint32_t in = hgr__graph_entry_id(graph, node->inputs[i]), root = find(life->parent, in);
      const hgr__entry_t* input = &graph->entries[in];
      if (root == out_root || group_pinned[root] || group_last[root] != n || input->device_key != output->device_key ||
          input->element_count != output->element_count ||
          hgr_dtype_element_bytes(input->dtype) != hgr_dtype_element_bytes(output->dtype))
        continue;
      life->parent[out_root] = root;
      if (group_last[out_root] > group_last[root]) group_last[root] = group_last[out_root];
      break;
    }
  }
  hgr__free(allocator, group_last);
  hgr__free(allocator, group_pinned);
  return HGR_OK;
}

/* ---- storages --------------------------------------------------------------------- */

typedef struct storage_t {
  uint64_t bytes;
  uint32_t* members;  /* group indices */
  uint32_t member_count, member_capacity;
} storage_t;

typedef enum order_t { ORDER_SIZE, ORDER_START, ORDER_LENGTH, ORDER_COUNT } order_t;

/* A group's position in one packing order: keys compared in turn, smaller first
 * (qsort has no context argument, so the keys are computed up front). */
typedef struct sort_key_t {
  uint64_t key[3];
  uint32_t group;
} sort_key_t;

static int compare_sort_keys(const void* a, const void* b) {
  const sort_key_t *x = a, *y = b;
  for (int k = 0; k < 3; ++k)
    if (x->key[k] != y->key[k]) return x->key[k] < y->key[k] ? -1 : 1;
  return (x->group > y->group) - (x->group < y->group);
}

/* Sorts order (count group indices) into packing order o. */
static void sort_groups(const group_t* groups, order_t o, uint32_t* order, uint32_t count, sort_key_t* keys) {
  for (uint32_t i = 0; i < count; ++i) {
    const group_t* group = &groups[order[i]];
    uint64_t larger_first = UINT64_MAX - group->bytes, longer_first = UINT64_MAX - (group->end - group->start);
    keys[i].group = order[i];
    keys[i].key[0] = o == ORDER_START ? group->start : o == ORDER_LENGTH ? longer_first : larger_first;
    keys[i].key[1] = o == ORDER_SIZE ? group->start : larger_first;
    keys[i].key[2] = o == ORDER_START ? 0 : group->start;
  }
  qsort(keys, count, sizeof(*keys), compare_sort_keys);
  for (uint32_t i = 0; i < count; ++i) order[i] = keys[i].group;
}

static bool storage_free(const storage_t* storage, const group_t* groups, const group_t* group) {
  for (uint32_t m = 0; m < storage->member_count; ++m) {
    const group_t* other = &groups[storage->members[m]];
    if (other->start <= group->end && group->start <= other->end) return false;
  }
  return true;
}

static void free_storages(hgr_allocator_t allocator, storage_t* storages, uint32_t count) {
  for (uint32_t s = 0; s < count; ++s) hgr__free(allocator, storages[s].members);
  hgr__free(allocator, storages);
}

/* Local search after packing: a storage's largest value moves to another storage
 * free for its lifetime whenever that lowers the total (the storage it leaves
 * shrinks to its next largest value, or disappears), until no move does. Storages
 * left empty are dropped and the rest renumbered. Returns the total bytes, or
 * UINT64_MAX when out of memory. */
static uint64_t improve(hgr_allocator_t allocator, const group_t* groups, const uint32_t* order, uint32_t count,
                        uint32_t* storage_of, uint32_t* storage_count) {
  uint32_t storages = *storage_count;
  uint64_t* largest = hgr__calloc(allocator, (size_t)storages + 1, sizeof(*largest));
  uint64_t* second = hgr__calloc(allocator, (size_t)storages + 1, sizeof(*second));
  uint32_t* largest_at = hgr__alloc(allocator, ((size_t)storages + 1) * sizeof(*largest_at));
  uint32_t* renumber = hgr__alloc(allocator, ((size_t)storages + 1) * sizeof(*renumber));
  if (!largest || !second || !largest_at || !renumber) {
    hgr__free(allocator, largest);
    hgr__free(allocator, second);
    hgr__free(allocator, largest_at);
    hgr__free(allocator, renumber);
    return UINT64_MAX;
  }
  /* A move costs up to storages^2 x count steps: only plans of moderate size get
   * them, so that placement stays fast on graphs of thousands of nodes. */
  uint32_t moves_left = (uint64_t)count * storages * storages <= 50000000 ? count + 16 : 0;
  bool moved = true;
  while (moved && moves_left-- > 0) {
    moved = false;
    for (uint32_t t = 0; t < storages; ++t) {
      largest[t] = second[t] = 0;
      largest_at[t] = UINT32_MAX;
    }
    for (uint32_t i = 0; i < count; ++i) {
      uint32_t t = storage_of[i];
      uint64_t bytes = groups[order[i]].bytes;
      if (largest_at[t] == UINT32_MAX || bytes > largest[t]) {
        second[t] = largest_at[t] == UINT32_MAX ? 0 : largest[t];
        largest[t] = bytes;
        largest_at[t] = i;
      } else if (bytes > second[t]) {
        second[t] = bytes;
      }
    }
    int64_t best_delta = 0;
    uint32_t best_from = UINT32_MAX, best_to = UINT32_MAX;
    for (uint32_t from = 0; from < storages; ++from) {
      if (largest_at[from] == UINT32_MAX || second[from] == largest[from]) continue;
      const group_t* group = &groups[order[largest_at[from]]];
      for (uint32_t to = 0; to < storages; ++to) {
        if (to == from || largest_at[to] == UINT32_MAX) continue;
        uint64_t grown = largest[to] > group->bytes ? largest[to] : group->bytes;
        int64_t delta = (int64_t)(grown - largest[to]) - (int64_t)(largest[from] - second[from]);
        if (delta >= best_delta) continue;
        bool free_there = true;
        for (uint32_t i = 0; i < count && free_there; ++i) {
          const group_t* other = &groups[order[i]];
          free_there = storage_of[i] != to || other->start > group->end || group->start > other->end;
        }
        if (free_there) {
          best_delta = delta;
          best_from = from;
          best_to = to;
        }
      }
    }
    if (best_from != UINT32_MAX) {
      storage_of[largest_at[best_from]] = best_to;
      moved = true;
    }
  }
  /* Drop the storages left empty. */
  for (uint32_t t = 0; t < storages; ++t) renumber[t] = UINT32_MAX;
  uint32_t kept = 0;
  for (uint32_t i = 0; i < count; ++i)
    if (renumber[storage_of[i]] == UINT32_MAX) renumber[storage_of[i]] = kept++;
  for (uint32_t t = 0; t < storages; ++t) largest[t] = 0;
  for (uint32_t i = 0; i < count; ++i) {
    storage_of[i] = renumber[storage_of[i]];
    if (groups[order[i]].bytes > largest[storage_of[i]]) largest[storage_of[i]] = groups[order[i]].bytes;
  }
  uint64_t total = 0;
  for (uint32_t t = 0; t < kept; ++t) total += largest[t];
  *storage_count = kept;
  hgr__free(allocator, largest);
  hgr__free(allocator, second);
  hgr__free(allocator, largest_at);
  hgr__free(allocator, renumber);
  return total;
}

/* Packs the groups listed in order (count of them, one device, none pinned) into
 * storages: each into the free storage whose size it fits with the least waste, else
 * the free one that grows least, else a new one. *out_storage per listed group;
 * returns the total bytes, or UINT64_MAX when out of memory. */
static uint64_t pack(hgr_allocator_t allocator, group_t* groups, const uint32_t* order, uint32_t count,
                     uint32_t* out_storage, uint32_t* out_storage_count) {
  storage_t* storages = hgr__calloc(allocator, (size_t)count + 1, sizeof(*storages));
  uint32_t storage_count = 0;
  if (!storages) return UINT64_MAX;
  for (uint32_t i = 0; i < count; ++i) {
    group_t* group = &groups[order[i]];
    uint32_t best = UINT32_MAX;
    uint64_t best_cost = UINT64_MAX;
    for (uint32_t s = 0; s < storage_count; ++s) {
      if (!storage_free(&storages[s], groups, group)) continue;
      /* Waste when it fits; otherwise growth, ranked after every fit. */
      uint64_t cost = storages[s].bytes >= group->bytes ? storages[s].bytes - group->bytes
                                                        : (UINT64_MAX / 2) + (group->bytes - storages[s].bytes);
      if (cost < best_cost) {
        best_cost = cost;
        best = s;
      }
    }
    if (best == UINT32_MAX) best = storage_count++;
    storage_t* storage = &storages[best];
    if (storage->member_count == storage->member_capacity) {
      uint32_t capacity = storage->member_capacity ? storage->member_capacity * 2 : 4;
      uint32_t* members = hgr__realloc(allocator, storage->members, (size_t)capacity * sizeof(*members));
      if (!members) {
        free_storages(allocator, storages, storage_count);
        return UINT64_MAX;
      }
      storage->members = members;
      storage->member_capacity = capacity;
    }
    storage->members[storage->member_count++] = order[i];
    if (group->bytes > storage->bytes) storage->bytes = group->bytes;
    out_storage[i] = best;
  }
  free_storages(allocator, storages, storage_count);
  uint64_t total = improve(allocator, groups, order, count, out_storage, &storage_count);
  *out_storage_count = storage_count;
  return total;
}

/* Plans one device's groups (indices in members, count of them): pinned groups get
 * a storage each; the rest are packed in the order that needs the fewest bytes.
 * Fills groups[].storage (0-based within the device) and the device's numbers. */
static hgr_status_t plan_device(hgr_allocator_t allocator, group_t* groups, uint32_t* members, uint32_t count,
                                hgr__memory_device_t* device) {
  uint32_t* order = hgr__alloc(allocator, ((size_t)count + 1) * sizeof(*order));
  uint32_t* storage = hgr__alloc(allocator, ((size_t)count + 1) * sizeof(*storage));
  uint32_t* best_storage = hgr__alloc(allocator, ((size_t)count + 1) * sizeof(*best_storage));
  uint32_t* best_order = hgr__alloc(allocator, ((size_t)count + 1) * sizeof(*best_order));
  sort_key_t* keys = hgr__alloc(allocator, ((size_t)count + 1) * sizeof(*keys));
  hgr_status_t status = HGR_OK;
  if (!order || !storage || !best_storage || !best_order || !keys) {
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    goto cleanup;
  }
  uint32_t pinned = 0, shared = 0;
  uint64_t pinned_bytes = 0;
  for (uint32_t i = 0; i < count; ++i) {
    group_t* group = &groups[members[i]];
    if (group->pinned) {
      group->storage = pinned++;
      pinned_bytes += group->bytes;
    } else {
      order[shared++] = members[i];
    }
  }
  uint64_t best = UINT64_MAX;
  uint32_t best_count = 0;
  for (int o = 0; o < ORDER_COUNT; ++o) {
    sort_groups(groups, (order_t)o, order, shared, keys);
    uint32_t storage_count = 0;
    uint64_t total = pack(allocator, groups, order, shared, storage, &storage_count);
    if (total == UINT64_MAX) {
      status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
      goto cleanup;
    }
    if (total < best) {
      best = total;
      best_count = storage_count;
      memcpy(best_storage, storage, (size_t)shared * sizeof(*storage));
      memcpy(best_order, order, (size_t)shared * sizeof(*order));
    }
  }
  for (uint32_t i = 0; i < shared; ++i) groups[best_order[i]].storage = pinned + best_storage[i];
  device->planned_bytes = pinned_bytes + (shared ? best : 0);
  device->storage_count = pinned + best_count;

cleanup:
  hgr__free(allocator, order);
  hgr__free(allocator, storage);
  hgr__free(allocator, best_storage);
  hgr__free(allocator, best_order);
  hgr__free(allocator, keys);
  return status;
}

/* The most bytes alive at one step: pinned groups at every step, the rest from
 * start to end. */
static hgr_status_t lower_bound(hgr_allocator_t allocator, const group_t* groups, const uint32_t* members,
                                uint32_t count, uint32_t steps, uint64_t* out_bytes) {
  int64_t* delta = hgr__calloc(allocator, (size_t)steps + 2, sizeof(*delta));
  if (!delta) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  for (uint32_t i = 0; i < count; ++i) {
    const group_t* group = &groups[members[i]];
    uint32_t start = group->pinned ? 0 : group->start, end = group->pinned ? steps : group->end;
    delta[start] += (int64_t)group->bytes;
    delta[end + 1] -= (int64_t)group->bytes;
  }
  int64_t alive = 0, most = 0;
  for (uint32_t step = 0; step <= steps; ++step) {
    alive += delta[step];
    if (alive > most) most = alive;
  }
  hgr__free(allocator, delta);
  *out_bytes = (uint64_t)most;
  return HGR_OK;
}

static int compare_bytes_descending(const void* a, const void* b) {
  uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return (x < y) - (x > y);
}

/* What any plan with one buffer per storage id needs at least: at every step the
 * j-th largest value alive sits in a storage no smaller than the j-th largest
 * storage (the j largest values alive use j distinct storages), so the sum over j of
 * the largest j-th value at any step bounds the total. The byte bound may be lower:
 * it lets values of different sizes share bytes, which storages at offset 0 cannot. */
static hgr_status_t storage_bound(hgr_allocator_t allocator, const group_t* groups, const uint32_t* members,
                                  uint32_t count, uint32_t steps, uint64_t* out_bytes) {
  uint64_t* alive = hgr__alloc(allocator, ((size_t)count + 1) * sizeof(*alive));
  uint64_t* best = hgr__calloc(allocator, (size_t)count + 1, sizeof(*best));
  if (!alive || !best) {
    hgr__free(allocator, alive);
    hgr__free(allocator, best);
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  }
  for (uint32_t step = 0; step < steps; ++step) {
    uint32_t alive_count = 0;
    for (uint32_t i = 0; i < count; ++i) {
      const group_t* group = &groups[members[i]];
      if (group->pinned || (group->start <= step && step <= group->end)) alive[alive_count++] = group->bytes;
    }
    qsort(alive, alive_count, sizeof(*alive), compare_bytes_descending);
    for (uint32_t j = 0; j < alive_count; ++j)
      if (alive[j] > best[j]) best[j] = alive[j];
  }
  uint64_t total = 0;
  for (uint32_t j = 0; j < count; ++j) total += best[j];
  hgr__free(allocator, alive);
  hgr__free(allocator, best);
  *out_bytes = total;
  return HGR_OK;
}

static int compare_keys(const void* a, const void* b) {
  int32_t x = *(const int32_t*)a, y = *(const int32_t*)b;
  return (x > y) - (x < y);
}

hgr_status_t hgr__memory_plan(const hgr_graph_t* graph, const hgr_kernel_library_t* kernels,
                              hgr__memory_plan_t* out_plan) {
  memset(out_plan, 0, sizeof(*out_plan));
  hgr_allocator_t allocator = hgr__graph_allocator(graph);
  uint32_t entry_count = graph->entry_count;
  lifetimes_t life = {hgr__alloc(allocator, ((size_t)entry_count + 1) * sizeof(uint32_t)),
                      hgr__alloc(allocator, ((size_t)entry_count + 1) * sizeof(uint32_t)),
                      hgr__calloc(allocator, (size_t)entry_count + 1, sizeof(bool))};
  uint32_t* group_of = hgr__alloc(allocator, ((size_t)entry_count + 1) * sizeof(*group_of));
  uint32_t* alias_root = hgr__alloc(allocator, ((size_t)entry_count + 1) * sizeof(*alias_root));
  group_t* groups = hgr__calloc(allocator, (size_t)entry_count + 1, sizeof(*groups));
  uint32_t* members = hgr__alloc(allocator, ((size_t)entry_count + 1) * sizeof(*members));
  int32_t* keys = hgr__alloc(allocator, ((size_t)entry_count + 1) * sizeof(*keys));
  uint64_t* alias_bytes = hgr__calloc(allocator, (size_t)entry_count + 1, sizeof(*alias_bytes));
  hgr_status_t status = HGR_OK;
  hgr__memory_plan_t plan = {0};
  plan.allocator = allocator;
  if (!life.parent || !life.last || !life.pinned || !group_of || !alias_root || !groups || !members || !keys ||
      !alias_bytes) {
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for %u entries", entry_count);
    goto cleanup;
  }
  for (uint32_t e = 0; e < entry_count; ++e) {
    life.parent[e] = e;
    life.last[e] = graph->entries[e].node_id;
    life.pinned[e] = !graph->nodes[graph->entries[e].node_id].is_op;
  }
  for (uint32_t h = 0; h < graph->head_count; ++h) life.pinned[hgr__graph_entry_id(graph, graph->heads[h])] = true;
  for (uint32_t n = 0; n < graph->node_count; ++n)
    for (uint32_t i = 0; i < graph->nodes[n].input_count; ++i) {
      uint32_t e = hgr__graph_entry_id(graph, graph->nodes[n].inputs[i]);
      if (n > life.last[e]) life.last[e] = n;
    }

  union_aliases(graph, kernels, life.parent);
  /* No reuse: one storage per alias group, its largest member's size. */
  for (uint32_t e = 0; e < entry_count; ++e) {
    alias_root[e] = find(life.parent, e);
    if (graph->entries[e].bytes > alias_bytes[alias_root[e]]) alias_bytes[alias_root[e]] = graph->entries[e].bytes;
  }
  if ((status = union_in_place(graph, kernels, &life))) goto cleanup;

  /* Groups, and the device keys. */
  uint32_t group_count = 0, key_count = 0;
  for (uint32_t e = 0; e < entry_count; ++e) group_of[e] = UINT32_MAX;
  for (uint32_t e = 0; e < entry_count; ++e) {
    uint32_t r = find(life.parent, e);
    if (group_of[r] == UINT32_MAX) {
      group_of[r] = group_count;
      groups[group_count] = (group_t){r, graph->entries[e].device_key, 0, UINT32_MAX, 0, false, 0};
      group_count++;
    }
    group_t* group = &groups[group_of[r]];
    const hgr__entry_t* entry = &graph->entries[e];
    if (entry->bytes > group->bytes) group->bytes = entry->bytes;
    if (entry->node_id < group->start) group->start = entry->node_id;
    if (life.last[e] > group->end) group->end = life.last[e];
    group->pinned |= life.pinned[e];
    keys[key_count++] = entry->device_key;
  }
  qsort(keys, key_count, sizeof(*keys), compare_keys);
  uint32_t distinct = 0;
  for (uint32_t k = 0; k < key_count; ++k)
    if (k == 0 || keys[k] != keys[k - 1]) keys[distinct++] = keys[k];

  plan.storage_ids = hgr__alloc(allocator, ((size_t)entry_count + 1) * sizeof(*plan.storage_ids));
  plan.devices = hgr__calloc(allocator, (size_t)distinct + 1, sizeof(*plan.devices));
  if (!plan.storage_ids || !plan.devices) {
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    goto cleanup;
  }
  plan.device_count = distinct;
  uint32_t first_id = 0;
  for (uint32_t d = 0; d < distinct; ++d) {
    hgr__memory_device_t* device = &plan.devices[d];
    device->key = keys[d];
    uint32_t count = 0;
    for (uint32_t g = 0; g < group_count; ++g)
      if (groups[g].key == device->key) members[count++] = g;
    if ((status = plan_device(allocator, groups, members, count, device)) ||
        (status = lower_bound(allocator, groups, members, count, graph->node_count, &device->lower_bound_bytes)) ||
        (status = storage_bound(allocator, groups, members, count, graph->node_count,
                                &device->storage_bound_bytes)))
      goto cleanup;
    for (uint32_t e = 0; e < entry_count; ++e)
      if (alias_root[e] == e && graph->entries[e].device_key == device->key) device->no_reuse_bytes += alias_bytes[e];
    for (uint32_t i = 0; i < count; ++i) groups[members[i]].storage += first_id;
    first_id += device->storage_count;
  }
  for (uint32_t e = 0; e < entry_count; ++e) plan.storage_ids[e] = groups[group_of[find(life.parent, e)]].storage;
  *out_plan = plan;
  plan = (hgr__memory_plan_t){.allocator = allocator};

cleanup:
  hgr__memory_plan_free(&plan);
  hgr__free(allocator, life.parent);
  hgr__free(allocator, life.last);
  hgr__free(allocator, life.pinned);
  hgr__free(allocator, group_of);
  hgr__free(allocator, alias_root);
  hgr__free(allocator, groups);
  hgr__free(allocator, members);
  hgr__free(allocator, keys);
  hgr__free(allocator, alias_bytes);
  return status;
}

void hgr__memory_plan_free(hgr__memory_plan_t* plan) {
  hgr__free(plan->allocator, plan->storage_ids);
  hgr__free(plan->allocator, plan->devices);
  memset(plan, 0, sizeof(*plan));
}
