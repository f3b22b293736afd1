/* Steps: every op node checked against its op and bound, once, at executor creation,
 * to a device, a queue and kernels with their arguments set; the queues they use,
 * the storage plan and the copies' paths. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "executor_internal.h"
#include "tune_store.h"

/* Per device, compute_queues in-order compute queues and a transfer queue. A
 * host-driven device gets one queue for everything, whatever compute_queues says: it
 * runs commands only while the host waits on them, so a command on a second queue
 * that waits on one of the first could wait on work that nothing runs. */
static hgr_status_t create_queues(hgr_executor_t* executor, uint32_t compute_queues) {
  hgr__device_keys_t* device_keys = &executor->device_keys;
  hgr__queue_set_t* queues = &executor->order.queues;
  for (size_t d = 0; d < device_keys->device_count; ++d) {
    hgr__exec_device_t* device = &device_keys->devices[d];
    bool host_driven = executor->instance->devices[device->device_index].host_driven;
    uint32_t count = host_driven ? 1 : compute_queues + 1; /* the last is the transfer queue */
    device->compute_queue = queues->count;
    device->compute_queue_count = host_driven ? 1 : compute_queues;
    device->transfer_queue = queues->count + count - 1;
    for (uint32_t k = 0; k < count; ++k) {
      uint32_t queue = 0;
      HGR_RETURN_IF_ERROR(hgr__queue_set_add(queues, executor->instance, device->device_index,
                                             executor->profile.enabled, !executor->plan_only, &queue));
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
  uint32_t* level = hgr__calloc(executor->allocator, graph->node_count + 1, sizeof(uint32_t));
  uint32_t* step_of = hgr__calloc(executor->allocator, graph->node_count + 1, sizeof(uint32_t)); /* node id -> step */
  /* round-robin, per device */
  uint32_t* next = hgr__calloc(executor->allocator, executor->device_keys.device_count + 1, sizeof(uint32_t));
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
  taken = hgr__calloc(executor->allocator, (size_t)executor->device_keys.device_count * levels, sizeof(uint32_t));
  if (!taken) {
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    goto cleanup;
  }
  for (uint32_t s = 0; s < executor->step_count; ++s) {
    hgr__step_t* step = &executor->steps[s];
    const hgr__node_t* node = &graph->nodes[step->node_id];
    if (step->kind == HGR__STEP_NOP && step->device_index == HGR__REMOTE_DEVICE) continue; /* another rank's */
    hgr__exec_device_t* device = hgr__device_keys_device(&executor->device_keys, step->device_index);
    size_t slot = (size_t)(device - executor->device_keys.devices);
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
  hgr__free(executor->allocator, level);
  hgr__free(executor->allocator, step_of);
  hgr__free(executor->allocator, next);
  hgr__free(executor->allocator, taken);
  return status;
}

static void device_limits(const hgr__device_t* device, hgr__limits_t* limits) {
  limits->max_work_group = device->info.max_work_group_size ? device->info.max_work_group_size : 1;
  for (int d = 0; d < 3; ++d)
    limits->max_work_item[d] = device->info.max_work_item_sizes[d] ? device->info.max_work_item_sizes[d] : 1;
  limits->local_mem_bytes = device->info.local_mem_bytes;
  limits->native_float_width = device->info.native_float_width;
}

static const char* key_spec(const hgr_executor_t* executor, uint32_t entry_id, char* buffer, size_t capacity) {
  return hgr__device_keys_describe_entry(&executor->device_keys, executor->instance, executor->graph, entry_id, buffer,
                                         capacity);
}

/* What the step's plan consults to choose its tiles; device is its storage. */
static void step_tuning(const hgr_executor_t* executor, const hgr__step_t* step, char* device, size_t capacity,
                        hgr__tuning_t* out_tuning) {
  hgr__tune_device_id(&executor->instance->devices[step->device_index].info, device, capacity);
  *out_tuning = (hgr__tuning_t){&executor->tuning, device, executor->tuning_mode, executor->tuning_candidate};
}

/* Plans the step's op within limits, with its tile choices. */
static hgr_status_t plan_op(hgr_executor_t* executor, hgr__step_t* step, const hgr__limits_t* limits) {
  char device[1024];
  hgr__tuning_t tuning;
  step_tuning(executor, step, device, sizeof(device), &tuning);
  HGR_RETURN_IF_ERROR(hgr__op_plan_tuned(executor->allocator, executor->graph, step->node_id,
                                         executor->programs.kernels, limits, &tuning, &step->plan));
  step->plan.tuning = NULL; /* tuning lives on this stack */
  step->tile = step->plan.tile;
  step->tile.device_index = step->device_index;
  return HGR_OK;
}

/* Reads the tuning file when the options ask for it. One that does not parse is
 * logged and ignored: every tile then comes from the limits. */
static void load_tuning(hgr_executor_t* executor, const hgr_executor_options_t* options) {
  executor->tuning_mode = options->tuning;
  executor->tuning_candidate = options->tuning_candidate;
  if (options->tuning != HGR_TUNING_FILE) return;
  char* path = hgr__tune_path(executor->allocator, options->program_cache.directory);
  if (!path) return;
  hgr_status_t status = hgr__tune_table_load(executor->allocator, path, &executor->tuning);
  if (status) {
    hgr__tune_table_free(executor->allocator, &executor->tuning);
    if (executor->log) {
      char line[1024];
      snprintf(line, sizeof(line), "tuning file ignored (tiles from the device limits): %s",
               hgr_status_message(status));
      executor->log(executor->log_user, line);
    }
    hgr_status_free(status);
  }
  hgr__free(executor->allocator, path);
}

/* Fills one step from its node: kind, device, storages; checks the device binding and op. */
static hgr_status_t plan_step(hgr_executor_t* executor, uint32_t node_id, hgr__step_t* step) {
  const hgr_graph_t* graph = executor->graph;
  const hgr__node_t* node = &graph->nodes[node_id];
  char label[160], where_a[128], where_b[128];
  hgr__graph_node_label(graph, node_id, label, sizeof(label));
  step->node_id = node_id;
  uint32_t first_out = graph->node_row_ptr[node_id];
  step->device_index = executor->device_keys.entry_device[first_out];
  step->in_count = node->input_count;
  step->out_count = node->num_outputs;
  step->in_storages = hgr__calloc(executor->allocator, step->in_count + 1, sizeof(uint32_t));
  step->out_storages = hgr__calloc(executor->allocator, step->out_count + 1, sizeof(uint32_t));
  if (!step->in_storages || !step->out_storages)
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  for (uint32_t k = 0; k < node->num_outputs; ++k) {
    step->out_storages[k] = graph->entries[first_out + k].storage_slot;
    if (executor->device_keys.entry_device[first_out + k] != step->device_index)
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s: output 0 is on %s but output %u (entry %u) on %s",
                        label, key_spec(executor, first_out, where_a, sizeof(where_a)), k, first_out + k,
                        key_spec(executor, first_out + k, where_b, sizeof(where_b)));
  }
  for (uint32_t i = 0; i < node->input_count; ++i)
    step->in_storages[i] = graph->entries[hgr__graph_entry_id(graph, node->inputs[i])].storage_slot;

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
    /* Between ranks, this rank's half: sending runs on the source's device. */
    const hgr__device_keys_t* device_keys = &executor->device_keys;
    bool source_here = device_keys->entry_rank[in_entry] == device_keys->rank;
    bool destination_here = device_keys->entry_rank[first_out] == device_keys->rank;
    if (!source_here && !destination_here) step->kind = HGR__STEP_NOP; /* another rank's copy */
    else if (!destination_here) step->device_index = device_keys->entry_device[in_entry];
    return HGR_OK;
  }
  if (step->device_index == HGR__REMOTE_DEVICE) { /* another rank runs it */
    step->kind = HGR__STEP_NOP;
    return HGR_OK;
  }
  for (uint32_t i = 0; i < node->input_count; ++i) {
    uint32_t in_entry = hgr__graph_entry_id(graph, node->inputs[i]);
    if (executor->device_keys.entry_device[in_entry] != step->device_index)
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT,
                        "%s runs on %s, but its input %u (entry %u) is on %s; a __copy node must move it",
                        label, key_spec(executor, first_out, where_a, sizeof(where_a)), i, in_entry,
                        key_spec(executor, in_entry, where_b, sizeof(where_b)));
  }
  if (step->kind == HGR__STEP_NOP) return HGR_OK;
  hgr__limits_t limits;
  device_limits(&executor->instance->devices[step->device_index], &limits);
  HGR_RETURN_IF_ERROR(plan_op(executor, step, &limits));
  /* A reshape-like op whose output aliases its input runs nothing. */
  if (step->plan.launch_count == 0) {
    step->kind = HGR__STEP_NOP;
    return HGR_OK;
  }
  hgr_device_usage_t* usage = &hgr__device_keys_device(&executor->device_keys, step->device_index)->usage;
  usage->kernel_nodes++;
  usage->scratch_bytes += step->plan.scratch_bytes;
  return HGR_OK;
}

/* Creates a launch's kernel; *out_work_group is its CL_KERNEL_WORK_GROUP_SIZE and
 * *out_local_bytes the local memory it needs (its own, CL_KERNEL_LOCAL_MEM_SIZE,
 * plus the __local arguments the plan gives it). */
static hgr_status_t create_kernel(hgr_executor_t* executor, const hgr__step_t* step,
                                  const hgr__launch_plan_t* plan, cl_kernel* out_kernel, size_t* out_work_group,
                                  uint64_t* out_local_bytes) {
  *out_kernel = NULL;
  size_t slot = hgr__device_keys_slot(&executor->device_keys, step->device_index);
  const hgr__device_t* device = &executor->instance->devices[step->device_index];
  cl_program program;
  HGR_RETURN_IF_ERROR(hgr__program_get(executor, slot, step->plan.op, plan, &program));
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

static hgr_status_t set_args(hgr_executor_t* executor, hgr__step_t* step, const hgr__launch_plan_t* plan,
                             hgr__kernel_launch_t* bound) {
  const char* spec = hgr__device_spec(executor->instance, step->device_index);
  cl_int error = CL_SUCCESS;
  if (plan->meta_count) {
    cl_context context = executor->order.queues.queues[step->queue].context;
    bound->meta = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, plan->meta_count * sizeof(int32_t),
                                 plan->meta, &error);
    if (error != CL_SUCCESS || !bound->meta) {
      bound->meta = NULL;
      return HGR_CL_STATUS(error, "clCreateBuffer(%u shape values) for %s on %s", plan->meta_count, step->plan.label,
                           spec);
    }
  }
  for (cl_uint a = 0; a < plan->arg_count && error == CL_SUCCESS; ++a) {
    const hgr__arg_t* arg = &plan->args[a];
    const cl_mem* mem = NULL;
    uint32_t storage_slot = UINT32_MAX;
    switch (arg->kind) {
      case HGR__ARG_INPUT: storage_slot = step->in_storages[arg->index]; break;
      case HGR__ARG_OUTPUT: storage_slot = step->out_storages[arg->index]; break;
      case HGR__ARG_META: mem = &bound->meta; break;
      case HGR__ARG_INT: error = clSetKernelArg(bound->kernel, a, sizeof(cl_int), &arg->i); break;
      case HGR__ARG_UINT: error = clSetKernelArg(bound->kernel, a, sizeof(cl_uint), &arg->u); break;
      case HGR__ARG_FLOAT: error = clSetKernelArg(bound->kernel, a, sizeof(cl_float), &arg->f); break;
      case HGR__ARG_LOCAL: error = clSetKernelArg(bound->kernel, a, arg->local_bytes, NULL); break;
      case HGR__ARG_SCRATCH: mem = &step->scratch; break;
    }
    if (storage_slot != UINT32_MAX) {
      /* Set again when a caller's buffer is bound in the storage's place. */
      HGR_RETURN_IF_ERROR(hgr__storage_add_arg(&executor->pool, storage_slot, bound->kernel, a));
      mem = &executor->pool.storages[storage_slot].mem;
    }
    if (mem) error = clSetKernelArg(bound->kernel, a, sizeof(cl_mem), mem);
    if (error != CL_SUCCESS)
      return HGR_CL_STATUS(error, "clSetKernelArg(%s, arg %u) for %s on %s", plan->kernel, a, step->plan.label, spec);
  }
  bound->launch = plan->launch;
  return HGR_OK;
}

/* The node's scratch buffer, where its plan asks for one (HGR__ARG_SCRATCH), zeroed
 * at creation. The launches write what they read there, but Oclgrind 21.10 took
 * the bytes a first launch wrote into a buffer created uninitialized as still
 * uninitialized when the next launch of hgr's run read them (every output of the
 * split stride-2 convolution, all of them right; a program of its own running the
 * same two kernels on the same shapes was clean). */
static hgr_status_t create_scratch(hgr_executor_t* executor, hgr__step_t* step) {
  if (!step->plan.scratch_bytes) return HGR_OK;
  void* zeros = hgr__calloc(executor->allocator, 1, (size_t)step->plan.scratch_bytes);
  if (!zeros) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  cl_int error = CL_SUCCESS;
  cl_context context = executor->order.queues.queues[step->queue].context;
  step->scratch = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, (size_t)step->plan.scratch_bytes,
                                 zeros, &error);
  hgr__free(executor->allocator, zeros);
  if (error == CL_SUCCESS && step->scratch) return HGR_OK;
  step->scratch = NULL;
  return HGR_CL_STATUS(error, "clCreateBuffer(%llu bytes of scratch) for %s on %s",
                       (unsigned long long)step->plan.scratch_bytes, step->plan.label,
                       hgr__device_spec(executor->instance, step->device_index));
}

static void release_kernels(const hgr_executor_t* executor, hgr__step_t* step) {
  for (uint32_t k = 0; k < step->launch_count; ++k) {
    if (step->launches[k].kernel) clReleaseKernel(step->launches[k].kernel);
    if (step->launches[k].meta) clReleaseMemObject(step->launches[k].meta);
  }
  hgr__free(executor->allocator, step->launches);
  step->launches = NULL;
  step->launch_count = 0;
  if (step->scratch) clReleaseMemObject(step->scratch);
  step->scratch = NULL;
  hgr__op_ctx_free(&step->plan);
}

/* Creates the step's kernels and sets their arguments. When a kernel allows smaller
 * work-groups than its device (CL_KERNEL_WORK_GROUP_SIZE), the op is planned again
 * within that limit. */
static hgr_status_t bind_kernels(hgr_executor_t* executor, hgr__step_t* step) {
  for (int attempt = 0;; ++attempt) {
    uint32_t count = step->plan.launch_count;
    step->launches = hgr__calloc(executor->allocator, count, sizeof(*step->launches));
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
      release_kernels(executor, step);
      HGR_RETURN_IF_ERROR(plan_op(executor, step, &limits));
      continue;
    }
    HGR_RETURN_IF_ERROR(create_scratch(executor, step));
    for (uint32_t k = 0; k < count; ++k)
      HGR_RETURN_IF_ERROR(set_args(executor, step, &step->plan.launches[k], &step->launches[k]));
    hgr__op_ctx_free(&step->plan);
    return HGR_OK;
  }
}

hgr_status_t hgr__steps_plan(hgr_executor_t* executor, const hgr_executor_options_t* options) {
  const hgr_graph_t* graph = executor->graph;
  uint32_t compute_queues = options->compute_queues ? options->compute_queues : 1;
  if (compute_queues > HGR_MAX_COMPUTE_QUEUES)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "compute_queues is %u; give 1 to %d (0 means 1)",
                      options->compute_queues, HGR_MAX_COMPUTE_QUEUES);
  HGR_RETURN_IF_ERROR(create_queues(executor, compute_queues));
  load_tuning(executor, options);
  uint32_t s = 0;
  for (uint32_t n = 0; n < graph->node_count; ++n) {
    if (!graph->nodes[n].is_op) continue;
    hgr__step_t* step = &executor->steps[s++];
    step->done_count = 1;
    HGR_RETURN_IF_ERROR(plan_step(executor, n, step));
  }
  HGR_RETURN_IF_ERROR(assign_queues(executor));
  const hgr_executor_t* source = options->share_params_from;
  hgr__storage_source_t share = {source ? &source->pool : NULL, source ? source->graph : NULL,
                                 source ? source->instance : NULL, options->share_param_names,
                                 options->share_param_name_count};
  HGR_RETURN_IF_ERROR(hgr__storage_plan(&executor->pool, executor->instance, graph, &executor->device_keys,
                                        source ? &share : NULL, executor->log, executor->log_user));
  for (s = 0; s < executor->step_count; ++s)
    if (executor->steps[s].kind == HGR__STEP_COPY)
      HGR_RETURN_IF_ERROR(hgr__transfer_plan(executor, &executor->steps[s]));
  for (size_t d = 0; d < executor->device_keys.device_count && options->memory_budget_bytes; ++d) {
    const hgr_device_usage_t* usage = &executor->device_keys.devices[d].usage;
    uint64_t needed = usage->storage_bytes + usage->staging_bytes + usage->scratch_bytes;
    if (needed > options->memory_budget_bytes)
      return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED,
                        "%s needs %llu bytes (%u storages: %llu bytes, host staging: %llu bytes, kernel scratch: "
                        "%llu bytes), more than the memory budget of %llu bytes per device",
                        hgr__device_spec(executor->instance, usage->device_index), (unsigned long long)needed,
                        usage->storage_count, (unsigned long long)usage->storage_bytes,
                        (unsigned long long)usage->staging_bytes, (unsigned long long)usage->scratch_bytes,
                        (unsigned long long)options->memory_budget_bytes);
  }
  return HGR_OK;
}

hgr_status_t hgr__steps_bind(hgr_executor_t* executor) {
  for (uint32_t s = 0; s < executor->step_count; ++s) {
    hgr__step_t* step = &executor->steps[s];
    if (step->kind == HGR__STEP_KERNEL) {
      HGR_RETURN_IF_ERROR(bind_kernels(executor, step));
      /* Profiling times every launch of a step; otherwise the last one completes it. */
      if (executor->profile.enabled) step->done_count = step->launch_count;
    }
    step->done = hgr__calloc(executor->allocator, step->done_count, sizeof(cl_event));
    if (!step->done) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  }
  return HGR_OK;
}

/* ---- the schedule ------------------------------------------------------------------ */

#define SCHEDULE_NONE UINT32_MAX /* no step: before the run */

/* One run's accesses replayed at creation, per storage: its last writer in the run
 * and its readers since, per queue (as order.c tracks them at run time, by step),
 * and per queue whether that queue has already been ordered after what the storage's
 * trackers held when the run started (bit 0: its writer, bit 1: its readers too). */
typedef struct schedule_t {
  hgr_allocator_t allocator; /* the executor's: the tables here and the steps' checks */
  uint32_t queues;   /* executor queues, plus one for copies (any queue) */
  uint32_t* writer;  /* per storage */
  uint32_t* readers; /* per storage and queue */
  uint8_t* synced;   /* per storage and queue */
  uint32_t* checks;  /* scratch: one step's accesses to check */
} schedule_t;

static uint32_t schedule_queue(const schedule_t* schedule, const hgr__step_t* step) {
  return step->kind == HGR__STEP_KERNEL ? step->queue : schedule->queues - 1;
}

/* One access of step s: marks the steps of the run that it waits for off its queue
 * as tracked, and returns whether it must look at the trackers at run time (for
 * those, or for what the storage's trackers held before the run). A copy (queue
 * `queues - 1`) looks at them itself: it waits for every step it touches. */
static bool schedule_access(const schedule_t* schedule, hgr__step_t* steps, uint32_t s, uint32_t storage,
                            bool writing) {
  uint32_t q = schedule_queue(schedule, &steps[s]);
  bool copy = q == schedule->queues - 1;
  bool check = copy;
  uint32_t writer = schedule->writer[storage];
  uint8_t* synced = &schedule->synced[(size_t)storage * schedule->queues + q];
  if (writer == SCHEDULE_NONE) {
    if (!(*synced & (writing ? 2 : 1))) check = true;
    *synced |= writing ? 3 : 1;
  } else if (copy || schedule_queue(schedule, &steps[writer]) != q) {
    steps[writer].tracked = true;
    check = true;
  }
  if (writing) {
    const uint32_t* readers = &schedule->readers[(size_t)storage * schedule->queues];
    for (uint32_t r = 0; r < schedule->queues; ++r)
      if (readers[r] != SCHEDULE_NONE && (copy || r != q)) {
        steps[readers[r]].tracked = true;
        check = true;
      }
  }
  return check;
}

/* Notes step s's access of storage, as order.c records it at run time. */
static void schedule_record(schedule_t* schedule, const hgr__step_t* steps, uint32_t s, uint32_t storage,
                            bool writing) {
  uint32_t* readers = &schedule->readers[(size_t)storage * schedule->queues];
  if (!writing) {
    readers[schedule_queue(schedule, &steps[s])] = s;
    return;
  }
  schedule->writer[storage] = s;
  for (uint32_t r = 0; r < schedule->queues; ++r) readers[r] = SCHEDULE_NONE;
}

/* Replays step s's accesses: what it waits for and the checks it keeps. */
static hgr_status_t schedule_step(schedule_t* schedule, hgr__step_t* steps, uint32_t s) {
  hgr__step_t* step = &steps[s];
  uint32_t count = 0;
  for (uint32_t i = 0; i < step->in_count + step->out_count; ++i) {
    bool writing = i >= step->in_count;
    uint32_t storage = writing ? step->out_storages[i - step->in_count] : step->in_storages[i];
    if (schedule_access(schedule, steps, s, storage, writing)) schedule->checks[count++] = storage << 1 | writing;
  }
  for (uint32_t i = 0; i < step->in_count + step->out_count; ++i) {
    bool writing = i >= step->in_count;
    schedule_record(schedule, steps, s, writing ? step->out_storages[i - step->in_count] : step->in_storages[i],
                    writing);
  }
  if (step->kind != HGR__STEP_KERNEL || !count) return HGR_OK;
  step->checks = hgr__alloc(schedule->allocator, count * sizeof(uint32_t));
  if (!step->checks) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  memcpy(step->checks, schedule->checks, count * sizeof(uint32_t));
  step->check_count = count;
  return HGR_OK;
}

/* Every command of a run keeps its event (launch.c says why), but most need neither
 * a look at the trackers before they are enqueued nor a record in them after: on a
 * chain every access meets only its own queue. Only the accesses that may meet
 * another queue's command look at the trackers at run time: those whose writer or
 * readers in the run are off the step's queue (or a copy), and the first on each
 * queue after the run started, when the trackers may hold anything. Only the steps
 * that those look for, and whatever comes after the run looks for (the last writer
 * and readers of every storage: the next run, host transfers, readbacks, fences),
 * are recorded in the trackers. Copies always look and record (transfer.c). */
hgr_status_t hgr__steps_schedule(hgr_executor_t* executor) {
  hgr__step_t* steps = executor->steps;
  uint32_t storages = executor->graph->storage_count;
  uint32_t most = 1;
  for (uint32_t s = 0; s < executor->step_count; ++s)
    if (steps[s].in_count + steps[s].out_count > most) most = steps[s].in_count + steps[s].out_count;
  schedule_t schedule = {executor->allocator, executor->order.queues.count + 1, NULL, NULL, NULL, NULL};
  size_t cells = (size_t)storages * schedule.queues + 1;
  schedule.writer = hgr__alloc(executor->allocator, ((size_t)storages + 1) * sizeof(uint32_t));
  schedule.readers = hgr__alloc(executor->allocator, cells * sizeof(uint32_t));
  schedule.synced = hgr__calloc(executor->allocator, cells, 1);
  schedule.checks = hgr__alloc(executor->allocator, most * sizeof(uint32_t));
  hgr_status_t status = HGR_OK;
  if (!schedule.writer || !schedule.readers || !schedule.synced || !schedule.checks) {
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    goto cleanup;
  }
  for (uint32_t st = 0; st < storages; ++st) schedule.writer[st] = SCHEDULE_NONE;
  for (size_t c = 0; c < cells; ++c) schedule.readers[c] = SCHEDULE_NONE;
  for (uint32_t s = 0; s < executor->step_count && !status; ++s)
    if (steps[s].kind != HGR__STEP_NOP) status = schedule_step(&schedule, steps, s);
  /* What comes after the run looks at the trackers' last entries. */
  for (uint32_t st = 0; st < storages && !status; ++st) {
    if (schedule.writer[st] != SCHEDULE_NONE) steps[schedule.writer[st]].tracked = true;
    for (uint32_t r = 0; r < schedule.queues; ++r)
      if (schedule.readers[(size_t)st * schedule.queues + r] != SCHEDULE_NONE)
        steps[schedule.readers[(size_t)st * schedule.queues + r]].tracked = true;
  }
cleanup:
  hgr__free(executor->allocator, schedule.writer);
  hgr__free(executor->allocator, schedule.readers);
  hgr__free(executor->allocator, schedule.synced);
  hgr__free(executor->allocator, schedule.checks);
  return status;
}

void hgr__steps_release(hgr_executor_t* executor) {
  hgr__storage_clear_args(&executor->pool);
  for (uint32_t s = 0; executor->steps && s < executor->step_count; ++s) {
    hgr__step_t* step = &executor->steps[s];
    release_kernels(executor, step);
    for (uint32_t k = 0; step->done && k < step->done_count; ++k)
      if (step->done[k]) clReleaseEvent(step->done[k]);
    hgr__free(executor->allocator, step->done);
    hgr__transfer_release(executor, step);
    hgr__free(executor->allocator, step->in_storages);
    hgr__free(executor->allocator, step->out_storages);
    hgr__free(executor->allocator, step->checks);
  }
  hgr__free(executor->allocator, executor->steps);
  executor->steps = NULL;
  hgr__tune_table_free(executor->allocator, &executor->tuning);
}
