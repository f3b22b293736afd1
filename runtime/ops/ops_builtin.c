/* The built-in ops: the families' tables (an X-macro list, ops_families.h) and the
 * embedded OpenCL C sources of their kernels. */
#include <string.h>

#include "kernel_sources.h"
#include "ops.h"
#include "ops_families.h"

static const hgr__op_t* const families[] = {
#define HGR__FAMILY(name) hgr__ops_##name,
    HGR__OP_FAMILIES
#undef HGR__FAMILY
};
#define FAMILY_COUNT (sizeof(families) / sizeof(families[0]))

const char* hgr__kernel_source(const char* name, size_t* out_length) {
  for (size_t i = 0; i < hgr__kernel_source_count; ++i)
    if (!strcmp(hgr__kernel_sources[i].name, name)) {
      if (out_length) *out_length = hgr__kernel_sources[i].length;
      return hgr__kernel_sources[i].text;
    }
  return NULL;
}

const hgr__op_t* hgr__op_find(const char* name) {
  for (size_t f = 0; f < FAMILY_COUNT; ++f)
    for (const hgr__op_t* op = families[f]; op->name; ++op)
      if (!strcmp(op->name, name)) return op;
  return NULL;
}

const hgr__op_t* const* hgr__op_families(size_t* out_count) {
  *out_count = FAMILY_COUNT;
  return families;
}
