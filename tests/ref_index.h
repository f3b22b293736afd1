/* Plain-C references of the index-tensor ops (runtime/ops/ops_index.c) and trilu
 * (runtime/ops/ops_trilu.c), with ONNX's GatherND, ScatterND, ScatterElements and
 * Trilu semantics and hgr's choices where ONNX leaves a result open: an index
 * outside [-dim, dim) is clamped into its dim by gather_nd and drops its update in
 * the scatters; the scatters apply updates in row-major order (later writes win).
 *
 * Elements are `element` bytes (4: float32, int32; 1: bool) where the op only moves
 * them; the reductions read is_float to tell float32 from int32 (int32 wraps).
 * Shapes are int64_t[ndim], indices int32, everything row-major. Each writes every
 * element of out, whose shape the caller computed. */
#ifndef HGR_TEST_REF_INDEX_H_
#define HGR_TEST_REF_INDEX_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { REF_REDUCE_NONE, REF_REDUCE_ADD, REF_REDUCE_MUL, REF_REDUCE_MAX, REF_REDUCE_MIN };

/* GatherND: indices' last dim k is the tuple length; out is shaped
 * indices.shape[:-1] + data.shape[batch_dims + k:]. */
void ref_gather_nd(const void* data, const int64_t* shape, int32_t ndim, const int32_t* indices,
                   const int64_t* index_shape, int32_t index_ndim, int32_t batch_dims, size_t element, void* out);

/* ScatterND: out = data, then updates (shaped indices.shape[:-1] + data.shape[k:])
 * written or reduced at each tuple in order. */
void ref_scatter_nd(const void* data, const int64_t* shape, int32_t ndim, const int32_t* indices,
                    const int64_t* index_shape, int32_t index_ndim, const void* updates, int reduction, bool is_float,
                    size_t element, void* out);

/* ScatterElements: out = data, then update c (indices and updates shaped alike)
 * written or reduced at c with c[axis] = indices[c], in row-major order. */
void ref_scatter_elements(const void* data, const int64_t* shape, int32_t ndim, const int32_t* indices,
                          const int64_t* index_shape, const void* updates, int32_t axis, int reduction, bool is_float,
                          size_t element, void* out);

/* Trilu over the last two dims: (r, c) kept where c - r >= k (upper) or <= k. */
void ref_trilu(const void* in, const int64_t* shape, int32_t ndim, int64_t k, bool upper, size_t element, void* out);

#endif /* HGR_TEST_REF_INDEX_H_ */
