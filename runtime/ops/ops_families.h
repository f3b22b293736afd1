/* The op families: each runtime/ops_<name>.c defines hgr__ops_<name>[], a table of
 * hgr__op_t ending with an entry whose name is NULL. Add a family here. */
#ifndef HGR_OPS_FAMILIES_H_
#define HGR_OPS_FAMILIES_H_

#include "ops.h"

#define HGR__OP_FAMILIES \
  HGR__FAMILY(elementwise) \
  HGR__FAMILY(layout)      \
  HGR__FAMILY(norm)        \
  HGR__FAMILY(reduce)      \
  HGR__FAMILY(conv)        \
  HGR__FAMILY(pool)        \
  HGR__FAMILY(linalg)      \
  HGR__FAMILY(resize)      \
  HGR__FAMILY(rnn)         \
  HGR__FAMILY(compact)     \
  HGR__FAMILY(nms)         \
  HGR__FAMILY(index)       \
  HGR__FAMILY(trilu)       \
  HGR__FAMILY(attention)   \
  HGR__FAMILY(quantize)    \
  HGR__FAMILY(matmul_integer) \
  HGR__FAMILY(fused)

#define HGR__FAMILY(name) extern const hgr__op_t hgr__ops_##name[];
HGR__OP_FAMILIES
#undef HGR__FAMILY

#endif /* HGR_OPS_FAMILIES_H_ */
