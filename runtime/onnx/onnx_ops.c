/* The ONNX ops hgr imports: the families' tables (onnx_import_<family>.c), by
 * domain: the default one (ai.onnx) and ONNX Runtime's contrib ops (com.microsoft),
 * of which hgr reads those in onnx_import_contrib.c and onnx_import_attention.c. */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "onnx_internal.h"
#include "text.h"

static const hgr__onnx_op_t* const families[] = {
    hgr__onnx_ops_elementwise,
    hgr__onnx_ops_nn,
    hgr__onnx_ops_matmul,
    hgr__onnx_ops_shape,
    hgr__onnx_ops_reduce,
    hgr__onnx_ops_layout,
    hgr__onnx_ops_index,
    hgr__onnx_ops_scatter,
    hgr__onnx_ops_einsum,
    hgr__onnx_ops_control,
    hgr__onnx_ops_rnn,
    hgr__onnx_ops_dynamic,
    hgr__onnx_ops_quant,
    hgr__onnx_ops_qlinear,
};
#define FAMILY_COUNT (sizeof(families) / sizeof(families[0]))

static const hgr__onnx_op_t* const contrib_families[] = {hgr__onnx_ops_contrib, hgr__onnx_ops_attention,
                                                         hgr__onnx_ops_matmul_contrib, hgr__onnx_ops_qlinear_contrib};
#define CONTRIB_FAMILY_COUNT (sizeof(contrib_families) / sizeof(contrib_families[0]))

/* The families of domain (NULL for a domain hgr does not read) and their count. */
static const hgr__onnx_op_t* const* domain_families(const char* domain, size_t* out_count) {
  if (hgr__onnx_domain_is_default(domain)) {
    *out_count = FAMILY_COUNT;
    return families;
  }
  if (hgr__onnx_domain_is_contrib(domain)) {
    *out_count = CONTRIB_FAMILY_COUNT;
    return contrib_families;
  }
  *out_count = 0;
  return NULL;
}

const hgr__onnx_op_t* hgr__onnx_op_find(const char* domain, const char* name) {
  size_t count;
  const hgr__onnx_op_t* const* of_domain = domain_families(domain, &count);
  for (size_t f = 0; f < count; ++f)
    for (const hgr__onnx_op_t* op = of_domain[f]; op->name; ++op)
      if (!strcmp(op->name, name)) return op;
  return NULL;
}

static int compare_names(const void* a, const void* b) {
  return strcmp(*(const char* const*)a, *(const char* const*)b);
}

char* hgr__onnx_op_list(const char* domain) {
  hgr_allocator_t system = hgr_allocator_system(); /* for a status message (onnx_internal.h) */
  size_t family_count, count = 0;
  const hgr__onnx_op_t* const* of_domain = domain_families(domain, &family_count);
  for (size_t f = 0; f < family_count; ++f)
    for (const hgr__onnx_op_t* op = of_domain[f]; op->name; ++op) ++count;
  const char** names = hgr__alloc(system, (count ? count : 1) * sizeof(*names));
  if (!names) return NULL;
  count = 0;
  for (size_t f = 0; f < family_count; ++f)
    for (const hgr__onnx_op_t* op = of_domain[f]; op->name; ++op) names[count++] = op->name;
  qsort(names, count, sizeof(*names), compare_names);
  hgr__text_t text = {0};
  for (size_t i = 0; i < count; ++i) hgr__text_appendf(&text, "%s%s", i ? ", " : "", names[i]);
  hgr__free(system, names);
  return hgr__text_take(&text);
}

hgr_status_t hgr__onnx_import_as_outputs(hgr__onnx_node_t* node, const char* op_type, const char* dropped_attrs,
                                         hgr__onnx_value_t** inputs, uint32_t input_count, hgr__onnx_value_t* outs,
                                         uint32_t out_count) {
  const hgr__onnx_op_t* op = hgr__onnx_op_find("", op_type);
  if (!op) op = hgr__onnx_op_find(HGR__ONNX_CONTRIB_DOMAIN, op_type);
  if (!op) return HGR_STATUS(HGR_STATUS_INTERNAL, "%s: no importer of %s", node->label, op_type);
  if (out_count > 8)
    return HGR_STATUS(HGR_STATUS_INTERNAL, "%s: %u outputs asked of %s", node->label, out_count, op_type);
  Onnx__NodeProto proto = *node->proto;
  proto.op_type = (char*)op_type;
  proto.domain = NULL;
  Onnx__AttributeProto** kept = hgr__alloc(node->loader->allocator, (proto.n_attribute + 1) * sizeof(*kept));
  if (!kept) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "%s: out of host memory", node->label);
  proto.n_attribute = 0;
  for (size_t i = 0; i < node->proto->n_attribute; ++i) {
    Onnx__AttributeProto* a = node->proto->attribute[i];
    if (!hgr__onnx_listed(dropped_attrs, a && a->name ? a->name : "")) kept[proto.n_attribute++] = a;
  }
  proto.attribute = kept;
  hgr__onnx_value_t* outputs[8];
  for (uint32_t k = 0; k < out_count; ++k) {
    outs[k] = (hgr__onnx_value_t){.name = node->output_count && node->outputs[0] ? node->outputs[0]->name : op_type,
                                  .ndim = -1, .producer = (int32_t)node->index, .consumer = -1, .scoped = true};
    outputs[k] = &outs[k];
  }
  hgr__onnx_node_t as = *node;
  as.proto = &proto;
  as.inputs = inputs;
  as.input_count = input_count;
  as.outputs = outs ? outputs : node->outputs;
  as.output_count = outs ? out_count : node->output_count;
  hgr_status_t status = op->import(&as);
  hgr__free(node->loader->allocator, kept);
  for (uint32_t k = 0; !status && k < out_count; ++k)
    if (!outs[k].has_value)
      status = HGR_STATUS(HGR_STATUS_INTERNAL, "%s: the %s it is imported as gave no run-time value %u", node->label,
                          op_type, k);
  for (uint32_t k = 0; status && k < out_count; ++k) { /* a constant the op folded to is not for here */
    hgr__onnx_tensor_free(outs[k].constant);
    outs[k].constant = NULL;
  }
  return status;
}

hgr_status_t hgr__onnx_import_as(hgr__onnx_node_t* node, const char* op_type, const char* dropped_attrs,
                                 hgr__onnx_value_t** inputs, uint32_t input_count, hgr__onnx_value_t* out) {
  return hgr__onnx_import_as_outputs(node, op_type, dropped_attrs, inputs, input_count, out, 1);
}
