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
};
#define FAMILY_COUNT (sizeof(families) / sizeof(families[0]))

static const hgr__onnx_op_t* const contrib_families[] = {hgr__onnx_ops_contrib, hgr__onnx_ops_attention};
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
