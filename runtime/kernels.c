/* The built-in op registry: which kernel each func_name runs, how its arguments and
 * NDRange are bound, and which shapes and dtypes it accepts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_sources.h"
#include "ops.h"

const char* hgr__node_label(const hgr_graph_t* graph, uint32_t node_id, char* buffer,
                            size_t capacity) {
  snprintf(buffer, capacity, "node %u '%s'", node_id, graph->nodes[node_id].name);
  return buffer;
}

const char* hgr__kernel_source(const char* name, size_t* out_length) {
  for (size_t i = 0; i < hgr__kernel_source_count; ++i)
    if (!strcmp(hgr__kernel_sources[i].name, name)) {
      if (out_length) *out_length = hgr__kernel_sources[i].length;
      return hgr__kernel_sources[i].text;
    }
  return NULL;
}

static bool is_float32(hgr_dtype_t dtype) {
  return dtype.code == HGR_DTYPE_FLOAT && dtype.bits == 32 && dtype.lanes == 1;
}

static bool same_shape(const hgr__entry_t* a, const hgr__entry_t* b) {
  if (a->ndim != b->ndim) return false;
  for (int32_t d = 0; d < a->ndim; ++d)
    if (a->shape[d] != b->shape[d]) return false;
  return true;
}

/* Same-shape float32 elementwise ops: every input and the one output share a shape. */
static hgr_status_t validate_elementwise(const hgr__op_t* op, const hgr_graph_t* graph,
                                         uint32_t node_id) {
  const hgr__node_t* node = &graph->nodes[node_id];
  char label[160];
  hgr__node_label(graph, node_id, label, sizeof(label));
  if (node->num_outputs != 1)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s: op '%s' has 1 output, the node declares %u",
                      label, op->name, node->num_outputs);
  const hgr__entry_t* out = &graph->entries[graph->node_row_ptr[node_id]];
  char dtype_text[24], shape_a[128], shape_b[128];
  if (!is_float32(out->dtype))
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT,
                      "%s: op '%s' supports float32, but output 0 (entry %u) is %s", label,
                      op->name, graph->node_row_ptr[node_id],
                      hgr_dtype_format(out->dtype, dtype_text, sizeof(dtype_text)));
  if (out->element_count > UINT32_MAX)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT,
                      "%s: op '%s' supports at most %u elements, output 0 has %llu", label,
                      op->name, UINT32_MAX, (unsigned long long)out->element_count);
  for (uint32_t i = 0; i < node->input_count; ++i) {
    uint32_t entry_id = hgr__graph_entry_id(graph, node->inputs[i]);
    const hgr__entry_t* in = &graph->entries[entry_id];
    if (!is_float32(in->dtype))
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT,
                        "%s: op '%s' supports float32, but input %u (entry %u) is %s", label,
                        op->name, i, entry_id,
                        hgr_dtype_format(in->dtype, dtype_text, sizeof(dtype_text)));
    if (!same_shape(in, out)) {
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT,
                        "%s: op '%s' needs inputs shaped like its output %s, but input %u "
                        "(entry %u) is %s",
                        label, op->name, hgr__entry_shape(out, shape_b, sizeof(shape_b)), i, entry_id,
                        hgr__entry_shape(in, shape_a, sizeof(shape_a)));
    }
  }
  return HGR_OK;
}

/* One work-item per element, in work-groups of up to 64. */
static hgr_status_t bind_elementwise(const hgr__op_t* op, const hgr_graph_t* graph,
                                     uint32_t node_id, cl_kernel kernel, const cl_mem* inputs,
                                     const cl_mem* outputs, size_t max_work_group,
                                     hgr__launch_t* out_launch) {
  const hgr__entry_t* out = &graph->entries[graph->node_row_ptr[node_id]];
  cl_uint n = (cl_uint)out->element_count;
  cl_uint arg = 0;
  cl_int error = CL_SUCCESS;
  for (uint32_t i = 0; i < op->inputs && error == CL_SUCCESS; ++i)
    error = clSetKernelArg(kernel, arg++, sizeof(cl_mem), &inputs[i]);
  if (error == CL_SUCCESS) error = clSetKernelArg(kernel, arg++, sizeof(cl_mem), &outputs[0]);
  if (error == CL_SUCCESS) error = clSetKernelArg(kernel, arg++, sizeof(n), &n);
  if (error != CL_SUCCESS) {
    char label[160];
    return HGR_CL_STATUS(error, "clSetKernelArg(%s, arg %u) for %s", op->kernel, arg - 1,
                         hgr__node_label(graph, node_id, label, sizeof(label)));
  }
  size_t local = max_work_group < 64 ? max_work_group : 64;
  if (local == 0) local = 1;
  size_t global = ((size_t)n + local - 1) / local * local;
  if (global == 0) global = local; /* an empty tensor still launches one guarded group */
  memset(out_launch, 0, sizeof(*out_launch));
  out_launch->work_dim = 1;
  out_launch->global[0] = global;
  out_launch->local[0] = local;
  out_launch->use_local = true;
  return HGR_OK;
}

#define ELEMENTWISE(name, arity) \
  {#name, "elementwise", "hgr_" #name "_f32", arity, validate_elementwise, bind_elementwise}

static const hgr__op_t builtin_ops[] = {
    ELEMENTWISE(add, 2),      ELEMENTWISE(subtract, 2), ELEMENTWISE(multiply, 2),
    ELEMENTWISE(divide, 2),   ELEMENTWISE(maximum, 2),  ELEMENTWISE(minimum, 2),
    ELEMENTWISE(negative, 1), ELEMENTWISE(relu, 1),     ELEMENTWISE(exp, 1),
    ELEMENTWISE(sigmoid, 1),  ELEMENTWISE(tanh, 1),
};

const hgr__op_t* hgr__op_find(const char* name) {
  for (size_t i = 0; i < sizeof(builtin_ops) / sizeof(builtin_ops[0]); ++i)
    if (!strcmp(builtin_ops[i].name, name)) return &builtin_ops[i];
  return NULL;
}

hgr_status_t hgr__op_resolve(const hgr_graph_t* graph, uint32_t node_id, const hgr__op_t** out_op) {
  *out_op = NULL;
  const hgr__node_t* node = &graph->nodes[node_id];
  const hgr__op_t* op = hgr__op_find(node->func_name);
  char label[160];
  hgr__node_label(graph, node_id, label, sizeof(label));
  if (!op) {
    char known[1024] = "";
    size_t used = 0;
    for (size_t i = 0; i < sizeof(builtin_ops) / sizeof(builtin_ops[0]) && used < sizeof(known); ++i)
      used += (size_t)snprintf(known + used, sizeof(known) - used, "%s, ", builtin_ops[i].name);
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT,
                      "%s: unknown func_name '%s'; known: %s__nop, __copy", label,
                      node->func_name, known);
  }
  if (node->input_count != op->inputs)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s: op '%s' takes %u input(s), the node has %u",
                      label, op->name, op->inputs, node->input_count);
  *out_op = op;
  return HGR_OK;
}
