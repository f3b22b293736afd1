/* Plain-C references of the compact ops (runtime/ops/ops_compact.c): ONNX's NonZero,
 * Compress and Unique, writing what the ops write: each data-dependent output at its
 * capacity, the result compact in its first elements (as the tensor of the actual
 * shape lies row-major) and zeros after, and the count n.
 *
 * Tensors are row-major; x holds float32, int32 or bool (one byte) values as its
 * dtype says. Brute force, by other means than the kernels' scans and sort: O(n^2)
 * comparisons, for test sizes. Floats compare as values: -0.0 == 0.0, every NaN
 * equal to every other, above +inf (numpy.unique's equal_nan). */
#ifndef HGR_TEST_REF_COMPACT_H_
#define HGR_TEST_REF_COMPACT_H_

#include <stdbool.h>
#include <stdint.h>

typedef enum hgr_ref_compact_dtype_t {
  HGR_REF_COMPACT_F32,
  HGR_REF_COMPACT_I32,
  HGR_REF_COMPACT_BOOL
} hgr_ref_compact_dtype_t;

/* Bytes per element (4, 4, 1). */
int hgr_ref_compact_element_bytes(hgr_ref_compact_dtype_t dtype);

/* out [ndim, cap] (cap = the element count, at least 1, zeroed by the caller or
 * not): the [ndim, n] indices of x's nonzero elements; returns n. */
int32_t hgr_ref_nonzero(const void* x, hgr_ref_compact_dtype_t dtype, int32_t ndim, const int64_t* shape,
                        int32_t* out);

/* out: x's shape with axis' extent as cap = max(length, 1) (axis < 0: x flattened,
 * [cap]); x's slices along the axis where cond[k] (length of them) is nonzero;
 * returns n. */
int32_t hgr_ref_compress(const void* x, hgr_ref_compact_dtype_t dtype, int32_t ndim, const int64_t* shape,
                         int32_t axis, const uint8_t* cond, int64_t length, void* out);

/* y: x's shape with the axis' extent as cap = max(extent, 1) (axis < 0: [cap], cap =
 * max(element count, 1)); indices and counts [cap]; inverse [extent] (flattened:
 * [element count]). sorted: ascending, slices lexicographically; else by first
 * occurrence. Returns n. dtype: float32 or int32. */
int32_t hgr_ref_unique(const void* x, hgr_ref_compact_dtype_t dtype, int32_t ndim, const int64_t* shape,
                       int32_t axis, bool sorted, void* y, int32_t* indices, int32_t* inverse, int32_t* counts);

#endif /* HGR_TEST_REF_COMPACT_H_ */
