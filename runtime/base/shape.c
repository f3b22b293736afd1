/* Checked sizes of shapes (shape.h). */
#include "shape.h"

#include <stddef.h>

bool hgr__shape_size(const int64_t* shape, int32_t ndim, uint64_t element_bytes, uint64_t* out_count,
                     uint64_t* out_bytes) {
  if (ndim < 0) return false;
  uint64_t span = element_bytes ? element_bytes : 1, count = 1;
  if (span > HGR__SHAPE_MAX) return false;
  for (int32_t d = 0; d < ndim; ++d) {
    if (shape[d] < 0) return false;
    uint64_t extent = (uint64_t)shape[d];
    /* span bounds every partial product, zeros counted as one; count <= span */
    if (extent > 1 && (__builtin_mul_overflow(span, extent, &span) || span > HGR__SHAPE_MAX)) return false;
    count *= extent;
  }
  if (out_count) *out_count = count;
  if (out_bytes) *out_bytes = count * (element_bytes ? element_bytes : 1);
  return true;
}
