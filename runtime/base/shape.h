/* Sizes of shapes from untrusted input (model files, graph JSON, op attrs): the
 * one checked computation of a shape's element count and byte size that the
 * loaders, the constant folders, the graph layer and the op plans use.
 *
 * A shape that passes has every partial product of its extents, with each zero
 * extent counted as one, at most INT64_MAX, in elements and in bytes. So any
 * stride, row length or offset computed from it afterwards, in int64_t or
 * uint64_t, cannot overflow, and an empty tensor's other extents are bounded as
 * well (a [0, 2^62] tensor is as refused as a [1, 2^62] one of 8-byte
 * elements). */
#ifndef HGR_SHAPE_H_
#define HGR_SHAPE_H_

#include <stdbool.h>
#include <stdint.h>

/* The most elements (and bytes) a shape may describe. */
#define HGR__SHAPE_MAX ((uint64_t)INT64_MAX)

/* Whether shape (ndim extents, ndim >= 0; shape may be NULL when ndim is 0) is
 * countable as said above with element_bytes per element (0 or 1: elements
 * only). On true, *out_count (may be NULL) is the element count and *out_bytes
 * (may be NULL) count * element_bytes. False for a negative extent or a product
 * beyond HGR__SHAPE_MAX; the outputs are then left alone. */
bool hgr__shape_size(const int64_t* shape, int32_t ndim, uint64_t element_bytes, uint64_t* out_count,
                     uint64_t* out_bytes);

/* a * b, or UINT64_MAX when it overflows: for counts over a selection of a
 * shape's dimensions, which a shape that passed hgr__shape_size keeps below
 * 2^63 anyway. */
static inline uint64_t hgr__mul_saturating(uint64_t a, uint64_t b) {
  uint64_t product;
  return __builtin_mul_overflow(a, b, &product) ? UINT64_MAX : product;
}

#endif /* HGR_SHAPE_H_ */
