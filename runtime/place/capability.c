/* What each candidate device can run (place_internal.h): the op exists there, its
 * dtypes are supported and it plans within the device's limits. This is the only
 * step of placement that reads device records; everything after it works on the
 * problem's can_run table alone. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "ops.h"
#include "place_internal.h"

static void device_limits(const hgr_device_info_t* device, hgr__limits_t* limits) {
  limits->max_work_group = device->max_work_group_size ? device->max_work_group_size : 1;
  for (int d = 0; d < 3; ++d)
    limits->max_work_item[d] = device->max_work_item_sizes[d] ? device->max_work_item_sizes[d] : 1;
  limits->local_mem_bytes = device->local_mem_bytes;
  limits->native_float_width = device->native_float_width;
}

/* The first dtype of the node's entries the device lacks ("float16", "float64"),
 * or NULL. hgr's own kernels (built_in) hold float16 as storage, through vload_half
 * and vstore_half, which need no cl_khr_fp16. */
static const char* missing_dtype(const hgr_graph_t* graph, uint32_t node_id, const hgr_device_info_t* device,
                                 bool built_in) {
  const hgr__node_t* node = &graph->nodes[node_id];
  for (uint32_t i = 0; i < node->input_count + node->num_outputs; ++i) {
    uint32_t entry_id = i < node->input_count ? hgr__graph_entry_id(graph, node->inputs[i])
                                              : graph->node_row_ptr[node_id] + (i - node->input_count);
    hgr_dtype_t dtype = graph->entries[entry_id].dtype;
    if (dtype.code != HGR_DTYPE_FLOAT) continue;
    if (dtype.bits == 16 && !device->fp16 && !built_in) return "float16 (cl_khr_fp16)";
    if (dtype.bits == 64 && !device->fp64) return "float64 (cl_khr_fp64)";
  }
  return NULL;
}

hgr_status_t hgr__place_device_can_run(const hgr_graph_t* graph, uint32_t node_id, const hgr_kernel_library_t* kernels,
                                       const hgr_device_info_t* device, char** out_reason) {
  *out_reason = NULL;
  const hgr__node_t* node = &graph->nodes[node_id];
  if (!node->is_op || !strcmp(node->func_name, "__nop") || !strcmp(node->func_name, "__copy")) return HGR_OK;
  const char* spec = device->spec ? device->spec : "(device)";
  hgr_allocator_t allocator = hgr__graph_allocator(graph);
  char* reason = NULL;
  const hgr__op_t* op = hgr__op_lookup(node->func_name, kernels);
  const char* dtype = NULL;
  if (!op) {
    reason = hgr__format_in(allocator, "%s: op '%s' is unknown", spec, node->func_name);
  } else if (hgr__op_find(node->func_name)) {
    if (!device->compiler_available)
      reason = hgr__format_in(allocator,
                              "%s: op '%s' is built in (compiled from source), and the device has no compiler", spec,
                              node->func_name);
  } else {
    hgr__user_program_t program;
    if (!hgr__library_program(kernels, op->source, device, &program) || (!program.binary && !program.text))
      reason = hgr__format_in(allocator,
                              "%s: op '%s' has no kernel for this device (the kernel library has no binary "
                              "for it and no source)",
                              spec, node->func_name);
    else if (!program.binary && !device->compiler_available)
      reason = hgr__format_in(allocator,
                              "%s: op '%s' has only a source for this device, and the device has no compiler", spec,
                              node->func_name);
  }
  if (!reason && op && (dtype = missing_dtype(graph, node_id, device, hgr__op_find(node->func_name) != NULL)))
    reason = hgr__format_in(allocator, "%s: op '%s' uses %s, which the device does not support", spec,
                            node->func_name, dtype);
  else if (!reason && op) {
    hgr__limits_t limits;
    device_limits(device, &limits);
    hgr__op_ctx_t ctx;
    hgr_status_t status = hgr__op_plan(hgr__graph_allocator(graph), graph, node_id, kernels, &limits, &ctx);
    if (!status) {
      hgr__op_ctx_free(&ctx);
      return HGR_OK;
    }
    if (hgr_status_code(status) == HGR_STATUS_RESOURCE_EXHAUSTED) return status;
    reason = hgr__format_in(allocator, "%s: %s", spec, hgr_status_message(status));
    hgr_status_free(status);
  } else if (!reason) {
    return HGR_OK;
  }
  if (!reason) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  *out_reason = reason;
  return HGR_OK;
}

hgr_status_t hgr__place_problem_fill(hgr__place_problem_t* problem) {
  const hgr_graph_t* graph = problem->graph;
  size_t cells = (size_t)graph->node_count * problem->device_count;
  problem->can_run = hgr__calloc(problem->allocator, cells + 1, sizeof(*problem->can_run));
  problem->cannot_reason = hgr__calloc(problem->allocator, cells + 1, sizeof(*problem->cannot_reason));
  problem->fixed = hgr__alloc(problem->allocator, ((size_t)graph->node_count + 1) * sizeof(*problem->fixed));
  if (!problem->can_run || !problem->cannot_reason || !problem->fixed)
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for %u nodes x %zu devices",
                      graph->node_count, problem->device_count);
  for (uint32_t node_id = 0; node_id < graph->node_count; ++node_id) {
    problem->fixed[node_id] = HGR__NO_DEVICE;
    const hgr__node_t* node = &graph->nodes[node_id];
    /* An op nobody has is the graph's error, not a device's. */
    if (node->is_op && strcmp(node->func_name, "__nop") && strcmp(node->func_name, "__copy") &&
        !hgr__op_lookup(node->func_name, problem->kernels)) {
      hgr__limits_t limits = {SIZE_MAX, {SIZE_MAX, SIZE_MAX, SIZE_MAX}, UINT64_MAX, 0};
      hgr__op_ctx_t ctx;
      hgr_status_t status = hgr__op_plan(hgr__graph_allocator(graph), graph, node_id, problem->kernels, &limits, &ctx);
      if (!status) hgr__op_ctx_free(&ctx);
      return status ? status : HGR_STATUS(HGR_STATUS_INTERNAL, "op '%s' is unknown", node->func_name);
    }
    for (size_t slot = 0; slot < problem->device_count; ++slot) {
      size_t at = (size_t)node_id * problem->device_count + slot;
      HGR_RETURN_IF_ERROR(hgr__place_device_can_run(graph, node_id, problem->kernels, problem->infos[slot],
                                                    &problem->cannot_reason[at]));
      problem->can_run[at] = problem->cannot_reason[at] == NULL;
    }
  }
  return HGR_OK;
}

void hgr__place_problem_free(hgr__place_problem_t* problem) {
  if (problem->cannot_reason && problem->graph)
    for (size_t at = 0; at < (size_t)problem->graph->node_count * problem->device_count; ++at)
      hgr__free(problem->allocator, problem->cannot_reason[at]);
  hgr__free(problem->allocator, problem->cannot_reason);
  hgr__free(problem->allocator, problem->can_run);
  hgr__free(problem->allocator, problem->fixed);
  problem->cannot_reason = NULL;
  problem->can_run = NULL;
  problem->fixed = NULL;
}
