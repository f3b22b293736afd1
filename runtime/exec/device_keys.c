/* Device-key binding (device_keys.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "device_keys.h"
#include "text.h"

/* Default choices rank real devices before the Oclgrind simulator. */
static bool is_simulator(const hgr_device_info_t* info) {
  return !strcmp(info->platform_short, "oclgrind");
}

typedef struct key_plan_t {
  hgr_instance_t* instance;
  size_t* ranked; /* device indices, preferred first */
  size_t device_count;
  bool* used;
} key_plan_t;

static size_t first_of_type(const key_plan_t* plan, hgr_device_type_t type) {
  for (size_t r = 0; r < plan->device_count; ++r)
    if (hgr_instance_device(plan->instance, plan->ranked[r])->type == type) return plan->ranked[r];
  return SIZE_MAX;
}

/* Instance devices, real ones before the simulator, into ranked (device_count values). */
static void rank_devices(const hgr_instance_t* instance, size_t* ranked) {
  size_t count = hgr_instance_device_count(instance), at = 0;
  for (int pass = 0; pass < 2; ++pass)
    for (size_t d = 0; d < count; ++d)
      if (is_simulator(hgr_instance_device(instance, d)) == (pass == 1)) ranked[at++] = d;
}

static size_t first_unused_except(const key_plan_t* plan, size_t except) {
  for (size_t r = 0; r < plan->device_count; ++r)
    if (!plan->used[plan->ranked[r]] && plan->ranked[r] != except) return plan->ranked[r];
  for (size_t r = 0; r < plan->device_count; ++r)
    if (plan->ranked[r] != except) return plan->ranked[r];
  return plan->ranked[0];
}

/* Whether key slot k is bound to another rank's device. */
static bool is_remote(const hgr__device_keys_t* device_keys, size_t k) {
  return device_keys->keys[k].rank >= 0 && device_keys->keys[k].rank != device_keys->rank;
}

/* Not bound yet: TVM's defaults choose its device. */
static bool unbound(const hgr__device_keys_t* device_keys, size_t k) {
  return device_keys->keys[k].device_index == SIZE_MAX && !is_remote(device_keys, k);
}

/* The rank a binding's spec names (-1: none), checked against the transport. */
static hgr_status_t binding_rank(const hgr_device_binding_t* binding, const hgr_transport_t* transport,
                                 bool recorded, int* out_rank) {
  const char* local = NULL;
  const char* spec = binding->spec ? binding->spec : "(null)";
  const char* where = recorded ? " (recorded in the graph's metadata)" : "";
  if (!binding->spec) return HGR_OK; /* hgr_instance_find_device says what is wrong */
  if (!hgr_spec_rank(binding->spec, out_rank, &local))
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT,
                      "device binding %d=%s%s: a rank prefix is 'r' and a rank number then '/', as in r1/pocl:0",
                      binding->key, spec, where);
  if (*out_rank < 0) return HGR_OK;
  if (!transport && *out_rank != 0)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT,
                      "device binding %d=%s%s names rank %d, but this executor has no transport to other "
                      "processes (run under mpirun: hgr_mpi_executor_create, docs/distributed.md)",
                      binding->key, spec, where, *out_rank);
  if (transport && *out_rank >= transport->rank_count)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "device binding %d=%s%s names rank %d, but only %d rank%s take part",
                      binding->key, spec, where, *out_rank, transport->rank_count,
                      transport->rank_count == 1 ? "" : "s");
  return HGR_OK;
}

static hgr_status_t find_key(const hgr__device_keys_t* device_keys, int32_t key, size_t* out_slot) {
  for (size_t k = 0; k < device_keys->key_count; ++k)
    if (device_keys->keys[k].key == key) {
      *out_slot = k;
      return HGR_OK;
    }
  char keys[256] = "";
  size_t used = 0;
  for (size_t k = 0; k < device_keys->key_count && used < sizeof(keys); ++k)
    used += (size_t)snprintf(keys + used, sizeof(keys) - used, "%s%d", k ? ", " : "", device_keys->keys[k].key);
  return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT,
                    "device binding for key %d, but the graph's device keys are %s", key,
                    device_keys->key_count && device_keys->keys[0].key >= 0 ? keys : "absent (no device_index column)");
}

hgr_status_t hgr__device_keys_bind(hgr__device_keys_t* device_keys, hgr_instance_t* instance, const hgr_graph_t* graph,
                                   const hgr_device_binding_t* bindings, size_t binding_count,
                                   const hgr_transport_t* transport) {
  size_t device_count = hgr_instance_device_count(instance);
  if (device_count == 0)
    return hgr__instance_explain_skipped(
        instance,
        HGR_STATUS(HGR_STATUS_UNAVAILABLE, "no OpenCL device found (`hgr devices` lists what the ICD loader reports)"));

  /* The distinct keys, ascending; one pseudo key -1 without a device_index column. */
  int here = transport ? transport->rank : 0;
  device_keys->rank = here;
  device_keys->allocator = hgr__instance_allocator(instance);
  device_keys->keys = hgr__calloc(device_keys->allocator, graph->entry_count + 1, sizeof(*device_keys->keys));
  device_keys->entry_device = hgr__calloc(device_keys->allocator, graph->entry_count + 1, sizeof(size_t));
  device_keys->entry_rank = hgr__calloc(device_keys->allocator, graph->entry_count + 1, sizeof(int));
  device_keys->entry_spec = hgr__calloc(device_keys->allocator, graph->entry_count + 1, sizeof(char*));
  key_plan_t plan = {instance, hgr__calloc(device_keys->allocator, device_count, sizeof(size_t)), device_count,
                     hgr__calloc(device_keys->allocator, device_count, sizeof(bool))};
  hgr_status_t status = HGR_OK;
  hgr_device_binding_t* recorded_bindings = NULL;
  if (!device_keys->keys || !device_keys->entry_device || !device_keys->entry_rank || !device_keys->entry_spec ||
      !plan.ranked || !plan.used) {
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    goto cleanup;
  }
  for (uint32_t e = 0; e < graph->entry_count; ++e) {
    int32_t key = graph->entries[e].device_key;
    size_t at = 0;
    while (at < device_keys->key_count && device_keys->keys[at].key < key) ++at;
    if (at < device_keys->key_count && device_keys->keys[at].key == key) continue;
    memmove(&device_keys->keys[at + 1], &device_keys->keys[at],
            (device_keys->key_count - at) * sizeof(*device_keys->keys));
    device_keys->keys[at] = (hgr_key_binding_t){key, SIZE_MAX, false, -1, NULL};
    device_keys->key_count++;
  }
  if (device_keys->key_count == 0)
    device_keys->keys[device_keys->key_count++] = (hgr_key_binding_t){-1, SIZE_MAX, false, -1, NULL};

  /* A caller that binds nothing gets the bindings the graph file records (`hgr
   * place` writes them), so a placed graph runs where it was placed. */
  bool recorded = binding_count == 0 && graph->binding_count > 0;
  if (recorded) {
    recorded_bindings = hgr__calloc(device_keys->allocator, graph->binding_count, sizeof(*recorded_bindings));
    if (!recorded_bindings) {
      status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
      goto cleanup;
    }
    for (uint32_t b = 0; b < graph->binding_count; ++b)
      recorded_bindings[b] = (hgr_device_binding_t){graph->binding_keys[b], graph->binding_specs[b]};
    bindings = recorded_bindings;
    binding_count = graph->binding_count;
  }

  rank_devices(instance, plan.ranked);

  /* Explicit bindings first. Without a device_index column the first binding names
   * the device for everything. */
  for (size_t b = 0; b < binding_count; ++b) {
    const hgr_device_binding_t* binding = &bindings[b];
    size_t device = SIZE_MAX, slot = 0;
    int rank = -1;
    if ((status = binding_rank(binding, transport, recorded, &rank))) goto cleanup;
    bool remote = rank >= 0 && rank != here;
    const char* local = binding->spec;
    if (rank >= 0) local = strchr(binding->spec, '/') + 1;
    status = remote ? HGR_OK : hgr_instance_find_device(instance, local, &device);
    if (status) {
      status = hgr_status_annotate(status, "device binding %d=%s%s", binding->key,
                                   binding->spec ? binding->spec : "(null)",
                                   recorded ? " (recorded in the graph's metadata; bind the key to override it)" : "");
      goto cleanup;
    }
    int key_rank = transport ? (remote ? rank : here) : -1;
    if (device_keys->keys[0].key == -1) {
      if (b == 0) {
        device_keys->keys[0] = (hgr_key_binding_t){-1, device, true, key_rank, NULL};
        if (remote &&
            (status = hgr__strdup(device_keys->allocator, binding->spec, (char**)&device_keys->keys[0].spec)))
          goto cleanup;
      }
      continue;
    }
    if ((status = find_key(device_keys, binding->key, &slot))) goto cleanup;
    if (device_keys->keys[slot].explicit_binding) {
      status = HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "device key %d is bound twice", binding->key);
      goto cleanup;
    }
    device_keys->keys[slot] = (hgr_key_binding_t){binding->key, device, true, key_rank, NULL};
    if (remote) {
      if ((status = hgr__strdup(device_keys->allocator, binding->spec, (char**)&device_keys->keys[slot].spec)))
        goto cleanup;
    } else {
      plan.used[device] = true;
    }
  }

  /* TVM's defaults for the rest: 1 is a CPU, 4 a GPU or accelerator (else a device
   * other than key 1's), any other key the next unused device. */
  size_t key1_device = SIZE_MAX;
  for (size_t k = 0; k < device_keys->key_count; ++k)
    if (device_keys->keys[k].key == 1) {
      if (unbound(device_keys, k)) {
        size_t cpu = first_of_type(&plan, HGR_DEVICE_TYPE_CPU);
        device_keys->keys[k].device_index = cpu != SIZE_MAX ? cpu : first_unused_except(&plan, SIZE_MAX);
        plan.used[device_keys->keys[k].device_index] = true;
      }
      key1_device = device_keys->keys[k].device_index;
    }
  for (size_t k = 0; k < device_keys->key_count; ++k)
    if (device_keys->keys[k].key == 4 && unbound(device_keys, k)) {
      size_t device = first_of_type(&plan, HGR_DEVICE_TYPE_GPU);
      if (device == SIZE_MAX) device = first_of_type(&plan, HGR_DEVICE_TYPE_ACCELERATOR);
      if (device == SIZE_MAX) device = first_unused_except(&plan, key1_device);
      device_keys->keys[k].device_index = device;
      plan.used[device] = true;
    }
  for (size_t k = 0; k < device_keys->key_count; ++k)
    if (unbound(device_keys, k)) {
      size_t device = device_keys->keys[k].key == -1 ? plan.ranked[0] : first_unused_except(&plan, SIZE_MAX);
      device_keys->keys[k].device_index = device;
      plan.used[device] = true;
    }

  for (uint32_t e = 0; e < graph->entry_count; ++e) {
    size_t slot = 0;
    for (size_t k = 0; k < device_keys->key_count; ++k)
      if (device_keys->keys[k].key == graph->entries[e].device_key) slot = k;
    device_keys->entry_device[e] = device_keys->keys[slot].device_index;
    device_keys->entry_rank[e] = is_remote(device_keys, slot) ? device_keys->keys[slot].rank : here;
  }

  /* Every key's spec: a remote one's was kept above; a local one's is its device's,
   * with the rank when there is a transport. */
  for (size_t k = 0; k < device_keys->key_count && !status; ++k) {
    if (device_keys->keys[k].spec) continue;
    const char* spec = hgr__device_spec(instance, device_keys->keys[k].device_index);
    char* text = transport ? hgr__format_in(device_keys->allocator, "r%d/%s", here, spec) : NULL;
    if (transport && !text) status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    else if (!transport) status = hgr__strdup(device_keys->allocator, spec, &text);
    device_keys->keys[k].spec = text;
  }
  if (status) goto cleanup;
  for (uint32_t e = 0; e < graph->entry_count; ++e)
    for (size_t k = 0; k < device_keys->key_count; ++k)
      if (device_keys->keys[k].key == graph->entries[e].device_key)
        device_keys->entry_spec[e] = device_keys->keys[k].spec;
  if (graph->entry_count && device_keys->keys[0].key == -1)
    for (uint32_t e = 0; e < graph->entry_count; ++e) device_keys->entry_spec[e] = device_keys->keys[0].spec;

  /* The executor's devices: those some key is bound to, in instance order. */
  device_keys->devices = hgr__calloc(device_keys->allocator, device_keys->key_count, sizeof(*device_keys->devices));
  if (!device_keys->devices) {
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    goto cleanup;
  }
  for (size_t d = 0; d < device_count; ++d) {
    bool bound = false;
    for (size_t k = 0; k < device_keys->key_count; ++k) bound |= device_keys->keys[k].device_index == d;
    if (!bound) continue;
    hgr__exec_device_t* device = &device_keys->devices[device_keys->device_count++];
    device->device_index = d;
    device->usage.device_index = d;
  }

cleanup:
  hgr__free(device_keys->allocator, recorded_bindings);
  hgr__free(device_keys->allocator, plan.ranked);
  hgr__free(device_keys->allocator, plan.used);
  return status;
}

hgr_status_t hgr__device_keys_default_device(hgr_instance_t* instance, size_t* out_device_index) {
  size_t device_count = hgr_instance_device_count(instance);
  if (device_count == 0)
    return hgr__instance_explain_skipped(
        instance,
        HGR_STATUS(HGR_STATUS_UNAVAILABLE, "no OpenCL device found (`hgr devices` lists what the ICD loader reports)"));
  hgr_allocator_t allocator = hgr__instance_allocator(instance);
  key_plan_t plan = {instance, hgr__calloc(allocator, device_count, sizeof(size_t)), device_count, NULL};
  if (!plan.ranked) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  rank_devices(instance, plan.ranked);
  size_t cpu = first_of_type(&plan, HGR_DEVICE_TYPE_CPU);
  *out_device_index = cpu != SIZE_MAX ? cpu : plan.ranked[0];
  hgr__free(allocator, plan.ranked);
  return HGR_OK;
}

hgr__exec_device_t* hgr__device_keys_device(const hgr__device_keys_t* device_keys, size_t device_index) {
  for (size_t d = 0; d < device_keys->device_count; ++d)
    if (device_keys->devices[d].device_index == device_index) return &device_keys->devices[d];
  return NULL;
}

size_t hgr__device_keys_slot(const hgr__device_keys_t* device_keys, size_t device_index) {
  return (size_t)(hgr__device_keys_device(device_keys, device_index) - device_keys->devices);
}

const char* hgr__device_keys_describe_entry(const hgr__device_keys_t* device_keys, const hgr_instance_t* instance,
                                            const hgr_graph_t* graph, uint32_t entry_id, char* buffer,
                                            size_t capacity) {
  (void)instance;
  int32_t key = graph->entries[entry_id].device_key;
  const char* spec = device_keys->entry_spec[entry_id];
  if (key < 0) snprintf(buffer, capacity, "%s", spec);
  else snprintf(buffer, capacity, "key %d (%s)", key, spec);
  return buffer;
}

void hgr__device_keys_release(hgr__device_keys_t* device_keys) {
  for (size_t k = 0; device_keys->keys && k < device_keys->key_count; ++k)
    hgr__free(device_keys->allocator, (char*)device_keys->keys[k].spec);
  hgr__free(device_keys->allocator, device_keys->keys);
  hgr__free(device_keys->allocator, device_keys->entry_rank);
  hgr__free(device_keys->allocator, device_keys->entry_spec);
  hgr__free(device_keys->allocator, device_keys->devices);
  hgr__free(device_keys->allocator, device_keys->entry_device);
  memset(device_keys, 0, sizeof(*device_keys));
}
