/* float16 and bfloat16 nodes imported as float nodes (onnx_internal.h,
 * hgr__onnx_import): the op's importer sees float inputs (run-time values cast up
 * on the device, constants converted at load) and its float outputs are cast back
 * down to the narrow type, so that every float op takes half-precision models with
 * float16 storage between ops and float32 arithmetic, as ONNX Runtime's CPU
 * provider casts around ops that have no float16 kernel. Ops that read those types
 * as they are (Cast, the quantization ops) and control flow import themselves. */
#include <string.h>

#include "alloc.h"
#include "onnx_internal.h"

static bool is_half(int32_t onnx_type) { return onnx_type == HGR__ONNX_FLOAT16 || onnx_type == HGR__ONNX_BFLOAT16; }

/* The narrow float type of node's inputs (the first found), or UNDEFINED. */
static int32_t half_input_type(const hgr__onnx_node_t* node) {
  for (uint32_t i = 0; i < node->input_count; ++i)
    if (node->inputs[i] && is_half(node->inputs[i]->onnx_type)) return node->inputs[i]->onnx_type;
  return HGR__ONNX_UNDEFINED;
}

/* Ops that take float16 and bfloat16 as they are, or whose output types do not
 * follow their inputs'. */
static bool imports_itself(const hgr__onnx_node_t* node) {
  static const char* const names = "Cast CastLike QuantizeLinear DequantizeLinear DynamicQuantizeLinear If Loop Scan "
                                   "Shape Size Identity";
  return !hgr__onnx_domain_is_default(node->proto->domain) ||
         hgr__onnx_listed(names, node->proto->op_type ? node->proto->op_type : "");
}

/* v as float: a constant converted, a run-time value cast up. A run-time value with
 * no builder value stays without one: a node that a stage resumes after (onnx_stage.c)
 * reads only its inputs' types and shapes, its outputs being the stage's payloads,
 * and the value was not carried into the stage for it. */
static hgr_status_t widen(hgr__onnx_node_t* node, hgr__onnx_value_t* v, hgr__onnx_value_t* out) {
  *out = *v;
  out->onnx_type = HGR__ONNX_FLOAT;
  out->borrowed = false;
  if (v->constant) {
    out->has_value = false;
    out->constant = NULL; /* the converted copy, freed by the caller */
    return hgr__onnx_tensor_cast(node->loader->allocator, v->constant, HGR__ONNX_FLOAT, node->label, &out->constant);
  }
  if (!v->has_value) return HGR_OK;
  return hgr__onnx_runtime(node, v, &out->value);
}

/* Output k, computed as float, back to narrow. */
static hgr_status_t narrow(hgr__onnx_node_t* node, uint32_t k, int32_t type) {
  hgr__onnx_value_t* v = node->outputs[k];
  if (!v || !v->defined || v->onnx_type != HGR__ONNX_FLOAT) return HGR_OK;
  if (v->constant) {
    hgr__onnx_tensor_t* t = NULL;
    HGR_RETURN_IF_ERROR(hgr__onnx_tensor_cast(node->loader->allocator, v->constant, type, node->label, &t));
    return hgr__onnx_set_constant(node, k, t);
  }
  return hgr__onnx_set_runtime(node, k, v->value, type);
}

hgr_status_t hgr__onnx_import(hgr__onnx_node_t* node, const hgr__onnx_op_t* op) {
  int32_t type = half_input_type(node);
  if (type == HGR__ONNX_UNDEFINED || imports_itself(node)) return op->import(node);
  hgr_allocator_t allocator = node->loader->allocator;
  hgr__onnx_value_t* wide = hgr__calloc(allocator, node->input_count + 1, sizeof(*wide));
  hgr__onnx_value_t** inputs = hgr__calloc(allocator, node->input_count + 1, sizeof(*inputs));
  hgr__onnx_value_t** given = node->inputs;
  hgr_status_t status = wide && inputs ? HGR_OK : HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  for (uint32_t i = 0; !status && i < node->input_count; ++i) {
    inputs[i] = given[i];
    if (given[i] && is_half(given[i]->onnx_type)) {
      status = widen(node, given[i], &wide[i]);
      inputs[i] = &wide[i];
    }
  }
  if (!status) {
    node->inputs = inputs;
    status = op->import(node);
    node->inputs = given;
  }
  for (uint32_t k = 0; !status && k < node->output_count; ++k) status = narrow(node, k, type);
  for (uint32_t i = 0; wide && i < node->input_count; ++i)
    if (given[i] && is_half(given[i]->onnx_type)) hgr__onnx_tensor_free(wide[i].constant);
  hgr__free(allocator, wide);
  hgr__free(allocator, inputs);
  return status;
}
