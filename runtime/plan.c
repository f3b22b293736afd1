/* Executor creation: bind device keys to devices, check every node against its op,
 * plan and allocate storage, build the programs the graph uses, and bind every node
 * to a device, a queue and a kernel with its arguments set — once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "executor_internal.h"

void hgr_executor_options_init(hgr_executor_options_t* options) {
  memset(options, 0, sizeof(*options));
}

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

static size_t first_unused_except(const key_plan_t* plan, size_t except) {
  for (size_t r = 0; r < plan->device_count; ++r)
    if (!plan->used[plan->ranked[r]] && plan->ranked[r] != except) return plan->ranked[r];
  for (size_t r = 0; r < plan->device_count; ++r)
    if (plan->ranked[r] != except) return plan->ranked[r];
  return plan->ranked[0];
}

static hgr_status_t find_key(const hgr_executor_t* executor, int32_t key, size_t* out_slot) {
  for (size_t k = 0; k < executor->key_count; ++k)
    if (executor->keys[k].key == key) {
      *out_slot = k;
      return HGR_OK;
    }
  char keys[256] = "";
  size_t used = 0;
  for (size_t k = 0; k < executor->key_count && used < sizeof(keys); ++k)
    used += (size_t)snprintf(keys + used, sizeof(keys) - used, "%s%d", k ? ", " : "", executor->keys[k].key);
  return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT,
                    "device binding for key %d, but the graph's device keys are %s", key,
                    executor->key_count && executor->keys[0].key >= 0 ? keys : "absent (no device_index column)");
}

static hgr_status_t bind_keys(hgr_executor_t* executor, const hgr_executor_options_t* options) {
  const hgr_graph_t* graph = executor->graph;
  size_t device_count = hgr_instance_device_count(executor->instance);
  if (device_count == 0)
    return hgr__instance_explain_skipped(
        executor->instance,
        HGR_STATUS(HGR_STATUS_UNAVAILABLE, "no OpenCL device found (`hgr devices` lists what the ICD loader reports)"));

  /* The distinct keys, ascending; one pseudo key -1 without a device_index column. */
  executor->keys = calloc(graph->entry_count + 1, sizeof(*executor->keys));
  key_plan_t plan = {executor->instance, calloc(device_count, sizeof(size_t)), device_count,
                     calloc(device_count, sizeof(bool))};
  hgr_status_t status = HGR_OK;
  if (!executor->keys || !plan.ranked || !plan.used) {
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    goto cleanup;
  }
  for (uint32_t e = 0; e < graph->entry_count; ++e) {
    int32_t key = graph->entries[e].device_key;
    size_t at = 0;
    while (at < executor->key_count && executor->keys[at].key < key) ++at;
    if (at < executor->key_count && executor->keys[at].key == key) continue;
    memmove(&executor->keys[at + 1], &executor->keys[at], (executor->key_count - at) * sizeof(*executor->keys));
    executor->keys[at] = (hgr_key_binding_t){key, SIZE_MAX, false};
    executor->key_count++;
  }
  if (executor->key_count == 0) executor->keys[executor->key_count++] = (hgr_key_binding_t){-1, SIZE_MAX, false};

  size_t ranked = 0;
  for (int pass = 0; pass < 2; ++pass)
    for (size_t d = 0; d < device_count; ++d)
      if (is_simulator(hgr_instance_device(executor->instance, d)) == (pass == 1)) plan.ranked[ranked++] = d;

  /* Explicit bindings first. Without a device_index column the first binding names
   * the device for everything. */
  for (size_t b = 0; b < options->binding_count; ++b) {
    const hgr_device_binding_t* binding = &options->bindings[b];
    size_t device = SIZE_MAX, slot = 0;
    status = hgr_instance_find_device(executor->instance, binding->spec, &device);
    if (status) {
      status = hgr_status_annotate(status, "device binding %d=%s", binding->key,
                                   binding->spec ? binding->spec : "(null)");
      goto cleanup;
    }
    if (executor->keys[0].key == -1) {
      if (b == 0) executor->keys[0] = (hgr_key_binding_t){-1, device, true};
      continue;
    }
    if ((status = find_key(executor, binding->key, &slot))) goto cleanup;
    if (executor->keys[slot].explicit_binding) {
      status = HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "device key %d is bound twice", binding->key);
      goto cleanup;
    }
    executor->keys[slot] = (hgr_key_binding_t){binding->key, device, true};
    plan.used[device] = true;
  }

  /* TVM's defaults for the rest: 1 is a CPU, 4 a GPU or accelerator (else a device
   * other than key 1's), any other key the next unused device. */
  size_t key1_device = SIZE_MAX;
  for (size_t k = 0; k < executor->key_count; ++k)
    if (executor->keys[k].key == 1) {
      if (executor->keys[k].device_index == SIZE_MAX) {
        size_t cpu = first_of_type(&plan, HGR_DEVICE_TYPE_CPU);
        executor->keys[k].device_index = cpu != SIZE_MAX ? cpu : first_unused_except(&plan, SIZE_MAX);
        plan.used[executor->keys[k].device_index] = true;
      }
      key1_device = executor->keys[k].device_index;
    }
  for (size_t k = 0; k < executor->key_count; ++k)
    if (executor->keys[k].key == 4 && executor->keys[k].device_index == SIZE_MAX) {
      size_t device = first_of_type(&plan, HGR_DEVICE_TYPE_GPU);
      if (device == SIZE_MAX) device = first_of_type(&plan, HGR_DEVICE_TYPE_ACCELERATOR);
      if (device == SIZE_MAX) device = first_unused_except(&plan, key1_device);
      executor->keys[k].device_index = device;
      plan.used[device] = true;
    }
  for (size_t k = 0; k < executor->key_count; ++k)
    if (executor->keys[k].device_index == SIZE_MAX) {
      size_t device = executor->keys[k].key == -1 ? plan.ranked[0] : first_unused_except(&plan, SIZE_MAX);
      executor->keys[k].device_index = device;
      plan.used[device] = true;
    }

  for (uint32_t e = 0; e < graph->entry_count; ++e) {
    size_t slot = 0;
    for (size_t k = 0; k < executor->key_count; ++k)
      if (executor->keys[k].key == graph->entries[e].device_key) slot = k;
    executor->entry_device[e] = executor->keys[slot].device_index;
  }

  /* The executor's devices: those some key is bound to, in instance order. */
  executor->devices = calloc(executor->key_count, sizeof(*executor->devices));
  if (!executor->devices) {
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    goto cleanup;
  }
  for (size_t d = 0; d < device_count; ++d) {
    bool bound = false;
    for (size_t k = 0; k < executor->key_count; ++k) bound |= executor->keys[k].device_index == d;
    if (!bound) continue;
    hgr__exec_device_t* device = &executor->devices[executor->device_count++];
    device->device_index = d;
    device->usage.device_index = d;
  }

cleanup:
  free(plan.ranked);
  free(plan.used);
  return status;
}

hgr__exec_device_t* hgr__exec_device(hgr_executor_t* executor, size_t device_index) {
  for (size_t d = 0; d < executor->device_count; ++d)
    if (executor->devices[d].device_index == device_index) return &executor->devices[d];
  return NULL;
}

/* Per device, compute_queues in-order compute queues and a transfer queue. A
 * host-driven device gets one queue for everything, whatever compute_queues says: it
 * runs commands only while the host waits on them, so a command on a second queue
 * that waits on one of the first could wait on work that nothing runs. */
static hgr_status_t create_queues(hgr_executor_t* executor, uint32_t compute_queues) {
  executor->queues = calloc(executor->device_count * (compute_queues + 1), sizeof(*executor->queues));
  if (!executor->queues) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  for (size_t d = 0; d < executor->device_count; ++d) {
    hgr__exec_device_t* device = &executor->devices[d];
    bool host_driven = executor->instance->devices[device->device_index].host_driven;
    uint32_t count = host_driven ? 1 : compute_queues + 1; /* the last is the transfer queue */
    device->compute_queue = executor->queue_count;
    device->compute_queue_count = host_driven ? 1 : compute_queues;
    device->transfer_queue = executor->queue_count + count - 1;
    for (uint32_t k = 0; k < count; ++k) {
      hgr__queue_t* queue = &executor->queues[executor->queue_count];
      queue->device_index = device->device_index;
      queue->context_group = executor->instance->devices[device->device_index].context_group;
      queue->host_driven = host_driven;
      queue->fragile_failed_user_events =
          executor->instance->devices[device->device_index].fragile_failed_user_events;
      if (!executor->plan_only) {
        HGR_RETURN_IF_ERROR(hgr__instance_context(executor->instance, device->device_index, &queue->context));
        HGR_RETURN_IF_ERROR(hgr__instance_create_queue(executor->instance, device->device_index,
                                                       executor->profiling, &queue->queue));
      }
      executor->queue_count++;
    }
  }
  return HGR_OK;
}

/* Binds every step to a queue. A copy goes to its destination device's transfer
 * queue. Kernel nodes are spread over their device's compute queues by dependency
 * level (1 + the highest level of the nodes producing their inputs; graph inputs
 * are level 0), so that the nodes of one level on one device, which never depend
 * on each other, go to different queues where there are enough: a node takes the
 * queue of its first producer on the same compute queues (a chain stays on one
 * queue and needs no events) unless a node of its level on its device already took
 * that queue; otherwise the next queue in round-robin order that its level has not
 * taken. A __nop runs nothing and takes no queue; it passes its producer's queue
 * (or the first) on to its consumers. Whatever the assignment, ordering between
 * queues comes from the storages' events at run time (hgr__order_storage). */
static hgr_status_t assign_queues(hgr_executor_t* executor) {
  const hgr_graph_t* graph = executor->graph;
  hgr_status_t status = HGR_OK;
  uint32_t* level = calloc(graph->node_count + 1, sizeof(uint32_t));
  uint32_t* step_of = calloc(graph->node_count + 1, sizeof(uint32_t)); /* node id -> step */
  uint32_t* next = calloc(executor->device_count + 1, sizeof(uint32_t)); /* round-robin, per device */
  uint32_t* taken = NULL; /* per device and level: a bit per compute queue taken */
  if (!level || !step_of || !next) {
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    goto cleanup;
  }
  uint32_t levels = 1;
  for (uint32_t s = 0; s < executor->step_count; ++s) {
    uint32_t node_id = executor->steps[s].node_id;
    const hgr__node_t* node = &graph->nodes[node_id];
    step_of[node_id] = s;
    for (uint32_t i = 0; i < node->input_count; ++i)
      if (level[node->inputs[i].node_id] + 1 > level[node_id]) level[node_id] = level[node->inputs[i].node_id] + 1;
    if (level[node_id] == 0) level[node_id] = 1;
    if (level[node_id] + 1 > levels) levels = level[node_id] + 1;
  }
  taken = calloc((size_t)executor->device_count * levels, sizeof(uint32_t));
  if (!taken) {
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    goto cleanup;
  }
  for (uint32_t s = 0; s < executor->step_count; ++s) {
    hgr__step_t* step = &executor->steps[s];
    const hgr__node_t* node = &graph->nodes[step->node_id];
    hgr__exec_device_t* device = hgr__exec_device(executor, step->device_index);
    size_t slot = (size_t)(device - executor->devices);
    /* With several compute queues, copies overlap kernels from the transfer queue;
     * with one, a copy stays on the compute queue its consumer uses, which saves a
     * cross-queue event per copy on a chain (hgr_bench_chain across pocl:0/pocl:1:
     * hgr/raw 1.30-1.64 there against 1.77-1.78 from the transfer queue). */
    if (step->kind == HGR__STEP_COPY) {
      step->queue = device->compute_queue_count > 1 ? device->transfer_queue : device->compute_queue;
      continue;
    }
    uint32_t count = device->compute_queue_count, chosen = UINT32_MAX;
    for (uint32_t i = 0; i < node->input_count && chosen == UINT32_MAX; ++i) {
      const hgr__node_t* producer = &graph->nodes[node->inputs[i].node_id];
      if (!producer->is_op) continue;
      const hgr__step_t* from = &executor->steps[step_of[node->inputs[i].node_id]];
      if (from->kind != HGR__STEP_COPY && from->device_index == step->device_index)
        chosen = from->queue - device->compute_queue;
    }
    if (step->kind == HGR__STEP_NOP) {
      step->queue = device->compute_queue + (chosen == UINT32_MAX ? 0 : chosen);
      continue;
    }
    uint32_t* level_taken = &taken[slot * levels + level[step->node_id]];
    if (chosen == UINT32_MAX || ((*level_taken >> chosen) & 1u)) {
      chosen = next[slot];
      for (uint32_t k = 0; k < count; ++k)
        if (!((*level_taken >> ((next[slot] + k) % count)) & 1u)) {
          chosen = (next[slot] + k) % count;
          break;
        }
      next[slot] = (chosen + 1) % count;
    }
    *level_taken |= 1u << chosen;
    step->queue = device->compute_queue + chosen;
  }

cleanup:
  free(level);
  free(step_of);
  free(next);
  free(taken);
  return status;
}

static void device_limits(const hgr__device_t* device, hgr__limits_t* limits) {
  limits->max_work_group = device->info.max_work_group_size ? device->info.max_work_group_size : 1;
  for (int d = 0; d < 3; ++d)
    limits->max_work_item[d] = device->info.max_work_item_sizes[d] ? device->info.max_work_item_sizes[d] : 1;
  limits->local_mem_bytes = device->info.local_mem_bytes;
}

static const char* key_spec(const hgr_executor_t* executor, size_t entry_id, char* buffer, size_t capacity) {
  int32_t key = executor->graph->entries[entry_id].device_key;
  const char* spec = hgr_instance_device(executor->instance, executor->entry_device[entry_id])->spec;
  if (key < 0) snprintf(buffer, capacity, "%s", spec);
  else snprintf(buffer, capacity, "key %d (%s)", key, spec);
  return buffer;
}

/* Fills one step from its node: kind, device, storages; checks placement and op. */
static hgr_status_t plan_step(hgr_executor_t* executor, uint32_t node_id, hgr__step_t* step) {
  const hgr_graph_t* graph = executor->graph;
  const hgr__node_t* node = &graph->nodes[node_id];
  char label[160], where_a[128], where_b[128];
  hgr__node_label(graph, node_id, label, sizeof(label));
  step->node_id = node_id;
  uint32_t first_out = graph->node_row_ptr[node_id];
  step->device_index = executor->entry_device[first_out];
  step->in_count = node->input_count;
  step->out_count = node->num_outputs;
  step->in_storages = calloc(step->in_count + 1, sizeof(uint32_t));
  step->out_storages = calloc(step->out_count + 1, sizeof(uint32_t));
  if (!step->in_storages || !step->out_storages)
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  for (uint32_t k = 0; k < node->num_outputs; ++k) {
    step->out_storages[k] = graph->entries[first_out + k].storage_id;
    if (executor->entry_device[first_out + k] != step->device_index)
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s: output 0 is on %s but output %u (entry %u) on %s",
                        label, key_spec(executor, first_out, where_a, sizeof(where_a)), k, first_out + k,
                        key_spec(executor, first_out + k, where_b, sizeof(where_b)));
  }
  for (uint32_t i = 0; i < node->input_count; ++i)
    step->in_storages[i] = graph->entries[hgr__graph_entry_id(graph, node->inputs[i])].storage_id;

  bool is_copy = !strcmp(node->func_name, "__copy");
  step->kind = is_copy ? HGR__STEP_COPY : !strcmp(node->func_name, "__nop") ? HGR__STEP_NOP : HGR__STEP_KERNEL;
  if (is_copy) {
    uint32_t in_entry = hgr__graph_entry_id(graph, node->inputs[0]);
    step->copy_bytes = graph->entries[in_entry].bytes;
    if (graph->entries[first_out].bytes != step->copy_bytes)
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT,
                        "%s: __copy moves %llu bytes (entry %u) into %llu bytes (entry %u); sizes must match",
                        label, (unsigned long long)step->copy_bytes, in_entry,
                        (unsigned long long)graph->entries[first_out].bytes, first_out);
    return HGR_OK;
  }
  for (uint32_t i = 0; i < node->input_count; ++i) {
    uint32_t in_entry = hgr__graph_entry_id(graph, node->inputs[i]);
    if (executor->entry_device[in_entry] != step->device_index)
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT,
                        "%s runs on %s, but its input %u (entry %u) is on %s; a __copy node must move it",
                        label, key_spec(executor, first_out, where_a, sizeof(where_a)), i, in_entry,
                        key_spec(executor, in_entry, where_b, sizeof(where_b)));
  }
  if (step->kind == HGR__STEP_NOP) return HGR_OK;
  hgr__limits_t limits;
  device_limits(&executor->instance->devices[step->device_index], &limits);
  HGR_RETURN_IF_ERROR(hgr__op_plan(graph, node_id, executor->kernels, &limits, &step->plan));
  /* A reshape-like op whose output aliases its input runs nothing. */
  if (step->plan.launch_count == 0) step->kind = HGR__STEP_NOP;
  else hgr__exec_device(executor, step->device_index)->usage.kernel_nodes++;
  return HGR_OK;
}

/* Creates a launch's kernel; *out_work_group is its CL_KERNEL_WORK_GROUP_SIZE and
 * *out_local_bytes the local memory it needs (its own, CL_KERNEL_LOCAL_MEM_SIZE,
 * plus the __local arguments the plan gives it). */
static hgr_status_t create_kernel(hgr_executor_t* executor, const hgr__step_t* step,
                                  const hgr__launch_plan_t* plan, cl_kernel* out_kernel, size_t* out_work_group,
                                  uint64_t* out_local_bytes) {
  *out_kernel = NULL;
  size_t slot = (size_t)(hgr__exec_device(executor, step->device_index) - executor->devices);
  const hgr__device_t* device = &executor->instance->devices[step->device_index];
  cl_program program;
  HGR_RETURN_IF_ERROR(hgr__program_get(executor, slot, plan->source ? plan->source : step->plan.op->source, &program));
  cl_int error = CL_SUCCESS;
  cl_kernel kernel = clCreateKernel(program, plan->kernel, &error);
  if (error != CL_SUCCESS || !kernel)
    return HGR_CL_STATUS(error, "clCreateKernel(%s) for %s on %s", plan->kernel, step->plan.label, device->info.spec);
  cl_ulong local_bytes = 0;
  error = clGetKernelWorkGroupInfo(kernel, device->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof(*out_work_group),
                                   out_work_group, NULL);
  if (error == CL_SUCCESS)
    error = clGetKernelWorkGroupInfo(kernel, device->device, CL_KERNEL_LOCAL_MEM_SIZE, sizeof(local_bytes),
                                     &local_bytes, NULL);
  *out_local_bytes = local_bytes;
  for (uint32_t a = 0; a < plan->arg_count; ++a)
    if (plan->args[a].kind == HGR__ARG_LOCAL) *out_local_bytes += plan->args[a].local_bytes;
  if (error != CL_SUCCESS) {
    clReleaseKernel(kernel);
    return HGR_CL_STATUS(error, "clGetKernelWorkGroupInfo(%s) for %s on %s", plan->kernel, step->plan.label,
                         device->info.spec);
  }
  *out_kernel = kernel;
  return HGR_OK;
}

static size_t work_group_of(const hgr__launch_t* launch) {
  if (!launch->use_local) return 1;
  size_t items = 1;
  for (cl_uint d = 0; d < launch->work_dim; ++d) items *= launch->local[d];
  return items;
}

static hgr_status_t set_args(hgr_executor_t* executor, const hgr__step_t* step, const hgr__launch_plan_t* plan,
                             hgr__kernel_launch_t* bound) {
  const char* spec = hgr_instance_device(executor->instance, step->device_index)->spec;
  cl_int error = CL_SUCCESS;
  if (plan->meta_count) {
    cl_context context = executor->queues[step->queue].context;
    bound->meta = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, plan->meta_count * sizeof(int32_t),
                                 plan->meta, &error);
    if (error != CL_SUCCESS || !bound->meta) {
      bound->meta = NULL;
      return HGR_CL_STATUS(error, "clCreateBuffer(%u shape values) for %s on %s", plan->meta_count, step->plan.label,
                           spec);
    }
  }
  bound->storage_args = calloc(2 * (size_t)plan->arg_count + 1, sizeof(uint32_t));
  if (!bound->storage_args) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  for (cl_uint a = 0; a < plan->arg_count && error == CL_SUCCESS; ++a) {
    const hgr__arg_t* arg = &plan->args[a];
    const cl_mem* mem = NULL;
    uint32_t storage_id = UINT32_MAX;
    switch (arg->kind) {
      case HGR__ARG_INPUT: storage_id = step->in_storages[arg->index]; break;
      case HGR__ARG_OUTPUT: storage_id = step->out_storages[arg->index]; break;
      case HGR__ARG_META: mem = &bound->meta; break;
      case HGR__ARG_INT: error = clSetKernelArg(bound->kernel, a, sizeof(cl_int), &arg->i); break;
      case HGR__ARG_UINT: error = clSetKernelArg(bound->kernel, a, sizeof(cl_uint), &arg->u); break;
      case HGR__ARG_FLOAT: error = clSetKernelArg(bound->kernel, a, sizeof(cl_float), &arg->f); break;
      case HGR__ARG_LOCAL: error = clSetKernelArg(bound->kernel, a, arg->local_bytes, NULL); break;
    }
    if (storage_id != UINT32_MAX) {
      mem = &executor->storages[storage_id].mem;
      bound->storage_args[2 * bound->storage_arg_count] = a;
      bound->storage_args[2 * bound->storage_arg_count++ + 1] = storage_id;
    }
    if (mem) error = clSetKernelArg(bound->kernel, a, sizeof(cl_mem), mem);
    if (error != CL_SUCCESS)
      return HGR_CL_STATUS(error, "clSetKernelArg(%s, arg %u) for %s on %s", plan->kernel, a, step->plan.label, spec);
  }
  bound->launch = plan->launch;
  return HGR_OK;
}

void hgr__step_release_kernels(hgr__step_t* step) {
  for (uint32_t k = 0; k < step->launch_count; ++k) {
    if (step->launches[k].kernel) clReleaseKernel(step->launches[k].kernel);
    if (step->launches[k].meta) clReleaseMemObject(step->launches[k].meta);
    free(step->launches[k].storage_args);
  }
  free(step->launches);
  step->launches = NULL;
  step->launch_count = 0;
  hgr__op_ctx_free(&step->plan);
}

hgr_status_t hgr__storage_rebind(hgr_executor_t* executor, uint32_t storage_id) {
  for (uint32_t s = 0; s < executor->step_count; ++s) {
    const hgr__step_t* step = &executor->steps[s];
    for (uint32_t k = 0; step->kind == HGR__STEP_KERNEL && k < step->launch_count; ++k) {
      const hgr__kernel_launch_t* launch = &step->launches[k];
      for (uint32_t a = 0; a < launch->storage_arg_count; ++a) {
        if (launch->storage_args[2 * a + 1] != storage_id) continue;
        cl_int error = clSetKernelArg(launch->kernel, launch->storage_args[2 * a], sizeof(cl_mem),
                                      &executor->storages[storage_id].mem);
        if (error != CL_SUCCESS)
          return HGR_CL_STATUS(error, "clSetKernelArg(arg %u) for node %u, binding storage %u", launch->storage_args[2 * a],
                               step->node_id, hgr__graph_storage_id(executor->graph, storage_id));
      }
    }
  }
  return HGR_OK;
}

/* Creates the step's kernels and sets their arguments. When a kernel allows smaller
 * work-groups than its device (CL_KERNEL_WORK_GROUP_SIZE), the op is planned again
 * within that limit. */
static hgr_status_t bind_kernels(hgr_executor_t* executor, hgr__step_t* step) {
  for (int attempt = 0;; ++attempt) {
    uint32_t count = step->plan.launch_count;
    step->launches = calloc(count, sizeof(*step->launches));
    if (!step->launches) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    step->launch_count = count;
    size_t smallest = SIZE_MAX;
    uint64_t most_local = 0;
    bool fits = true;
    for (uint32_t k = 0; k < count; ++k) {
      size_t work_group = 0;
      uint64_t local_bytes = 0;
      HGR_RETURN_IF_ERROR(create_kernel(executor, step, &step->plan.launches[k], &step->launches[k].kernel, &work_group,
                                        &local_bytes));
      if (work_group < smallest) smallest = work_group;
      if (local_bytes > most_local) most_local = local_bytes;
      if (work_group_of(&step->plan.launches[k].launch) > work_group) fits = false;
    }
    /* Some drivers count a kernel's local memory differently from what the plan
     * assumed (rusticl 22.3 reports twice the static size): plan again within
     * what is left. */
    hgr__limits_t limits = step->plan.limits;
    bool local_fits = most_local <= limits.local_mem_bytes;
    if (!fits || !local_fits) {
      if (attempt == 3 || (!fits && smallest >= limits.max_work_group) || (!local_fits && !limits.local_mem_bytes))
        return HGR_STATUS(HGR_STATUS_INTERNAL,
                          "%s: the op plans work-groups or local memory larger than its kernels allow (%zu work-items, "
                          "%llu of %llu bytes)",
                          step->plan.label, smallest, (unsigned long long)most_local,
                          (unsigned long long)limits.local_mem_bytes);
      if (!fits) limits.max_work_group = smallest;
      if (!local_fits) limits.local_mem_bytes = limits.local_mem_bytes * limits.local_mem_bytes / most_local;
      hgr__step_release_kernels(step);
      HGR_RETURN_IF_ERROR(hgr__op_plan(executor->graph, step->node_id, executor->kernels, &limits, &step->plan));
      continue;
    }
    for (uint32_t k = 0; k < count; ++k)
      HGR_RETURN_IF_ERROR(set_args(executor, step, &step->plan.launches[k], &step->launches[k]));
    hgr__op_ctx_free(&step->plan);
    return HGR_OK;
  }
}

hgr_status_t hgr_executor_create(hgr_instance_t* instance, hgr_graph_t* graph,
                                 const hgr_executor_options_t* options, hgr_executor_t** out_executor) {
  *out_executor = NULL;
  if (!instance || !graph)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "hgr_executor_create needs an instance and a graph");
  hgr_executor_options_t defaults;
  if (!options) {
    hgr_executor_options_init(&defaults);
    options = &defaults;
  }
  uint32_t compute_queues = options->compute_queues ? options->compute_queues : 1;
  if (compute_queues > HGR_MAX_COMPUTE_QUEUES)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "compute_queues is %u; give 1 to %d (0 means 1)",
                      options->compute_queues, HGR_MAX_COMPUTE_QUEUES);
  hgr_executor_t* executor = calloc(1, sizeof(*executor));
  if (!executor) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  executor->instance = instance;
  executor->graph = hgr_graph_retain(graph);
  executor->plan_only = options->plan_only;
  executor->profiling = options->profiling;
  executor->fail_node = UINT32_MAX;
  executor->enqueue_step = UINT32_MAX;
  executor->program_cache = options->program_cache;
  executor->kernels = hgr_kernel_library_retain(options->kernels);
  executor->log = options->log;
  executor->log_user = options->log_user;
  hgr_status_t status = HGR_OK;

  executor->entry_device = calloc(graph->entry_count + 1, sizeof(size_t));
  executor->input_set = calloc(graph->arg_count + 1, sizeof(bool));
  executor->output_staging = calloc(graph->head_count + 1, sizeof(void*));
  executor->storages = calloc(graph->storage_count + 1, sizeof(hgr__storage_t));
  executor->output_holder = calloc(graph->head_count + 1, sizeof(hgr_fence_t*));
  executor->snapshot_pool = calloc(graph->head_count + 1, sizeof(cl_mem*));
  executor->snapshot_pool_count = calloc(graph->head_count + 1, sizeof(uint32_t));
  executor->input_bindings = calloc(graph->arg_count + 1, sizeof(hgr__io_binding_t));
  executor->output_bindings = calloc(graph->head_count + 1, sizeof(hgr__io_binding_t));
  for (uint32_t n = 0; n < graph->node_count; ++n) executor->step_count += graph->nodes[n].is_op;
  executor->steps = calloc(executor->step_count + 1, sizeof(hgr__step_t));
  if (executor->profiling) executor->step_host_ns = calloc(2 * (size_t)executor->step_count + 1, sizeof(uint64_t));
  if (!executor->entry_device || !executor->input_set || !executor->output_staging || !executor->storages ||
      !executor->steps || !executor->output_holder || !executor->snapshot_pool || !executor->snapshot_pool_count ||
      !executor->input_bindings || !executor->output_bindings ||
      (executor->profiling && !executor->step_host_ns)) {
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    goto cleanup;
  }
  if ((status = bind_keys(executor, options)) || (status = create_queues(executor, compute_queues))) goto cleanup;

  uint32_t s = 0;
  for (uint32_t n = 0; n < graph->node_count; ++n) {
    if (!graph->nodes[n].is_op) continue;
    hgr__step_t* step = &executor->steps[s];
    if ((status = plan_step(executor, n, step))) goto cleanup;
    step->done_count = 1;
    ++s;
  }
  if ((status = assign_queues(executor))) goto cleanup;
  if ((status = hgr__storage_plan(executor, options->share_params_from))) goto cleanup;
  for (s = 0; s < executor->step_count; ++s)
    if (executor->steps[s].kind == HGR__STEP_COPY &&
        (status = hgr__transfer_plan(executor, &executor->steps[s])))
      goto cleanup;
  for (size_t d = 0; d < executor->device_count && options->memory_budget_bytes; ++d) {
    const hgr_device_usage_t* usage = &executor->devices[d].usage;
    if (usage->storage_bytes + usage->staging_bytes > options->memory_budget_bytes) {
      status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED,
                          "%s needs %llu bytes (%u storages: %llu bytes, host staging: %llu bytes), more than the "
                          "memory budget of %llu bytes per device",
                          hgr_instance_device(instance, usage->device_index)->spec,
                          (unsigned long long)(usage->storage_bytes + usage->staging_bytes), usage->storage_count,
                          (unsigned long long)usage->storage_bytes, (unsigned long long)usage->staging_bytes,
                          (unsigned long long)options->memory_budget_bytes);
      goto cleanup;
    }
  }
  if (executor->plan_only) goto cleanup;

  uint32_t most_storages = 1;
  for (s = 0; s < executor->step_count; ++s) {
    uint32_t touched = executor->steps[s].in_count + executor->steps[s].out_count;
    if (touched > most_storages) most_storages = touched;
  }
  executor->wait_capacity = most_storages * (executor->queue_count + 1) + 2;
  executor->wait = calloc(executor->wait_capacity, sizeof(cl_event));
  if (!executor->wait) {
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    goto cleanup;
  }
  if ((status = hgr__storage_allocate(executor, options->share_params_from))) goto cleanup;
  for (uint32_t id = 0; id < graph->storage_count; ++id) {
    executor->storages[id].readers = calloc(executor->queue_count, sizeof(hgr__tracked_event_t));
    if (!executor->storages[id].readers) {
      status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
      goto cleanup;
    }
  }
  if ((status = hgr__programs_build(executor))) goto cleanup;
  for (s = 0; s < executor->step_count; ++s) {
    hgr__step_t* step = &executor->steps[s];
    if (step->kind == HGR__STEP_KERNEL) {
      if ((status = bind_kernels(executor, step))) goto cleanup;
      /* Profiling times every launch of a step; otherwise the last one completes it. */
      if (executor->profiling) step->done_count = step->launch_count;
    }
    step->done = calloc(step->done_count, sizeof(cl_event));
    if (!step->done) {
      status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
      goto cleanup;
    }
  }
  /* Shared inputs hold the source's params already. */
  if (options->params) status = hgr__executor_load_params(executor, options->params, true, NULL);
  if (!status) hgr__storage_lend(executor, options->share_params_from);

cleanup:
  if (status) {
    hgr_executor_release(executor);
    return status;
  }
  *out_executor = executor;
  return HGR_OK;
}
