/* Device-key binding (placement.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "placement.h"

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

static hgr_status_t find_key(const hgr__placement_t* placement, int32_t key, size_t* out_slot) {
  for (size_t k = 0; k < placement->key_count; ++k)
    if (placement->keys[k].key == key) {
      *out_slot = k;
      return HGR_OK;
    }
  char keys[256] = "";
  size_t used = 0;
  for (size_t k = 0; k < placement->key_count && used < sizeof(keys); ++k)
    used += (size_t)snprintf(keys + used, sizeof(keys) - used, "%s%d", k ? ", " : "", placement->keys[k].key);
  return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT,
                    "device binding for key %d, but the graph's device keys are %s", key,
                    placement->key_count && placement->keys[0].key >= 0 ? keys : "absent (no device_index column)");
}

hgr_status_t hgr__placement_bind(hgr__placement_t* placement, hgr_instance_t* instance, const hgr_graph_t* graph,
                                 const hgr_device_binding_t* bindings, size_t binding_count) {
  size_t device_count = hgr_instance_device_count(instance);
  if (device_count == 0)
    return hgr__instance_explain_skipped(
        instance,
        HGR_STATUS(HGR_STATUS_UNAVAILABLE, "no OpenCL device found (`hgr devices` lists what the ICD loader reports)"));

  /* The distinct keys, ascending; one pseudo key -1 without a device_index column. */
  placement->keys = calloc(graph->entry_count + 1, sizeof(*placement->keys));
  placement->entry_device = calloc(graph->entry_count + 1, sizeof(size_t));
  key_plan_t plan = {instance, calloc(device_count, sizeof(size_t)), device_count,
                     calloc(device_count, sizeof(bool))};
  hgr_status_t status = HGR_OK;
  hgr_device_binding_t* recorded_bindings = NULL;
  if (!placement->keys || !placement->entry_device || !plan.ranked || !plan.used) {
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    goto cleanup;
  }
  for (uint32_t e = 0; e < graph->entry_count; ++e) {
    int32_t key = graph->entries[e].device_key;
    size_t at = 0;
    while (at < placement->key_count && placement->keys[at].key < key) ++at;
    if (at < placement->key_count && placement->keys[at].key == key) continue;
    memmove(&placement->keys[at + 1], &placement->keys[at], (placement->key_count - at) * sizeof(*placement->keys));
    placement->keys[at] = (hgr_key_binding_t){key, SIZE_MAX, false};
    placement->key_count++;
  }
  if (placement->key_count == 0) placement->keys[placement->key_count++] = (hgr_key_binding_t){-1, SIZE_MAX, false};

  /* A caller that binds nothing gets the bindings the graph file records (`hgr
   * place` writes them), so a placed graph runs where it was placed. */
  bool recorded = binding_count == 0 && graph->binding_count > 0;
  if (recorded) {
    recorded_bindings = calloc(graph->binding_count, sizeof(*recorded_bindings));
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
    status = hgr_instance_find_device(instance, binding->spec, &device);
    if (status) {
      status = hgr_status_annotate(status, "device binding %d=%s%s", binding->key,
                                   binding->spec ? binding->spec : "(null)",
                                   recorded ? " (recorded in the graph's metadata; bind the key to override it)" : "");
      goto cleanup;
    }
    if (placement->keys[0].key == -1) {
      if (b == 0) placement->keys[0] = (hgr_key_binding_t){-1, device, true};
      continue;
    }
    if ((status = find_key(placement, binding->key, &slot))) goto cleanup;
    if (placement->keys[slot].explicit_binding) {
      status = HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "device key %d is bound twice", binding->key);
      goto cleanup;
    }
    placement->keys[slot] = (hgr_key_binding_t){binding->key, device, true};
    plan.used[device] = true;
  }

  /* TVM's defaults for the rest: 1 is a CPU, 4 a GPU or accelerator (else a device
   * other than key 1's), any other key the next unused device. */
  size_t key1_device = SIZE_MAX;
  for (size_t k = 0; k < placement->key_count; ++k)
    if (placement->keys[k].key == 1) {
      if (placement->keys[k].device_index == SIZE_MAX) {
        size_t cpu = first_of_type(&plan, HGR_DEVICE_TYPE_CPU);
        placement->keys[k].device_index = cpu != SIZE_MAX ? cpu : first_unused_except(&plan, SIZE_MAX);
        plan.used[placement->keys[k].device_index] = true;
      }
      key1_device = placement->keys[k].device_index;
    }
  for (size_t k = 0; k < placement->key_count; ++k)
    if (placement->keys[k].key == 4 && placement->keys[k].device_index == SIZE_MAX) {
      size_t device = first_of_type(&plan, HGR_DEVICE_TYPE_GPU);
      if (device == SIZE_MAX) device = first_of_type(&plan, HGR_DEVICE_TYPE_ACCELERATOR);
      if (device == SIZE_MAX) device = first_unused_except(&plan, key1_device);
      placement->keys[k].device_index = device;
      plan.used[device] = true;
    }
  for (size_t k = 0; k < placement->key_count; ++k)
    if (placement->keys[k].device_index == SIZE_MAX) {
      size_t device = placement->keys[k].key == -1 ? plan.ranked[0] : first_unused_except(&plan, SIZE_MAX);
      placement->keys[k].device_index = device;
      plan.used[device] = true;
    }

  for (uint32_t e = 0; e < graph->entry_count; ++e) {
    size_t slot = 0;
    for (size_t k = 0; k < placement->key_count; ++k)
      if (placement->keys[k].key == graph->entries[e].device_key) slot = k;
    placement->entry_device[e] = placement->keys[slot].device_index;
  }

  /* The executor's devices: those some key is bound to, in instance order. */
  placement->devices = calloc(placement->key_count, sizeof(*placement->devices));
  if (!placement->devices) {
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    goto cleanup;
  }
  for (size_t d = 0; d < device_count; ++d) {
    bool bound = false;
    for (size_t k = 0; k < placement->key_count; ++k) bound |= placement->keys[k].device_index == d;
    if (!bound) continue;
    hgr__exec_device_t* device = &placement->devices[placement->device_count++];
    device->device_index = d;
    device->usage.device_index = d;
  }

cleanup:
  free(recorded_bindings);
  free(plan.ranked);
  free(plan.used);
  return status;
}

hgr_status_t hgr__placement_default_device(hgr_instance_t* instance, size_t* out_device_index) {
  size_t device_count = hgr_instance_device_count(instance);
  if (device_count == 0)
    return hgr__instance_explain_skipped(
        instance,
        HGR_STATUS(HGR_STATUS_UNAVAILABLE, "no OpenCL device found (`hgr devices` lists what the ICD loader reports)"));
  key_plan_t plan = {instance, calloc(device_count, sizeof(size_t)), device_count, NULL};
  if (!plan.ranked) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  rank_devices(instance, plan.ranked);
  size_t cpu = first_of_type(&plan, HGR_DEVICE_TYPE_CPU);
  *out_device_index = cpu != SIZE_MAX ? cpu : plan.ranked[0];
  free(plan.ranked);
  return HGR_OK;
}

hgr__exec_device_t* hgr__placement_device(const hgr__placement_t* placement, size_t device_index) {
  for (size_t d = 0; d < placement->device_count; ++d)
    if (placement->devices[d].device_index == device_index) return &placement->devices[d];
  return NULL;
}

size_t hgr__placement_slot(const hgr__placement_t* placement, size_t device_index) {
  return (size_t)(hgr__placement_device(placement, device_index) - placement->devices);
}

const char* hgr__placement_describe_entry(const hgr__placement_t* placement, const hgr_instance_t* instance,
                                          const hgr_graph_t* graph, uint32_t entry_id, char* buffer,
                                          size_t capacity) {
  int32_t key = graph->entries[entry_id].device_key;
  const char* spec = hgr__device_spec(instance, placement->entry_device[entry_id]);
  if (key < 0) snprintf(buffer, capacity, "%s", spec);
  else snprintf(buffer, capacity, "key %d (%s)", key, spec);
  return buffer;
}

void hgr__placement_release(hgr__placement_t* placement) {
  free(placement->keys);
  free(placement->devices);
  free(placement->entry_device);
  memset(placement, 0, sizeof(*placement));
}
