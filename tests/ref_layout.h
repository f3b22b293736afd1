/* Plain-C references of the layout ops (runtime/ops/ops_layout.c): concatenate,
 * transpose, pad, take, strided_slice, broadcast_to, tile, depth_to_space,
 * space_to_depth, gather_elements, cumsum and the reshape-likes.
 *
 * The ops only move elements, so every reference works on 4-byte elements (float32
 * and int32 alike) in row-major order, with shapes as int64_t[ndim]. Each writes
 * every element of out, whose shape the caller computed (Relay's rules; for
 * strided_slice, ref_strided_slice_canonical computes it). The references walk the
 * output's coordinates with an odometer, independently of how the kernels index. */
#ifndef HGR_TEST_REF_LAYOUT_H_
#define HGR_TEST_REF_LAYOUT_H_

#include <stdbool.h>
#include <stdint.h>

/* concatenate: count inputs of rank ndim (>= 1), equal in every dim but axis
 * (0 <= axis < ndim), joined along axis in order. */
void ref_concatenate(const void* const* inputs, const int64_t* const* shapes, uint32_t count, int32_t ndim,
                     int32_t axis, void* out);

/* transpose: dim d of out is dim axes[d] of in (axes a permutation of 0..ndim-1). */
void ref_transpose(const void* in, const int64_t* shape, int32_t ndim, const int32_t* axes, void* out);

/* pad, constant mode: pad_width holds [before, after] for each dim (2 * ndim
 * values; negative ones crop); pad_value points at one element of the data's
 * dtype. */
void ref_pad(const void* in, const int64_t* shape, int32_t ndim, const int64_t* pad_width, const void* pad_value,
             void* out);

/* pad, modes edge (reflect false: the nearest edge element) and reflect (numpy's:
 * mirrored across the edge element); widths >= 0, each dim padded non-empty. */
void ref_pad_edge_reflect(const void* in, const int64_t* shape, int32_t ndim, const int64_t* pad_width,
                          bool reflect, void* out);

/* broadcast_to: in (rank ndim <= out_ndim) repeated along its dims of extent 1 and
 * the leading ones it lacks to out_shape (numpy's rules; the caller checks them). */
void ref_broadcast_to(const void* in, const int64_t* shape, int32_t ndim, const int64_t* out_shape,
                      int32_t out_ndim, void* out);

/* tile: each dim repeated reps times (rank max(ndim, rep_count): the shorter of
 * shape and reps gains leading 1s). */
void ref_tile(const void* in, const int64_t* shape, int32_t ndim, const int64_t* reps, int32_t rep_count,
              void* out);

/* depth_to_space (NCHW): ONNX DepthToSpace, mode DCR (crd false) or CRD. */
void ref_depth_to_space(const void* in, const int64_t* shape, int64_t block, bool crd, void* out);
/* space_to_depth (NCHW): ONNX SpaceToDepth. */
void ref_space_to_depth(const void* in, const int64_t* shape, int64_t block, void* out);

/* gather_elements: out (shaped index_shape, rank ndim) at c = data at c with
 * c[axis] = indices at c; a negative index counts from the end, one still outside
 * the axis is clamped into it. */
void ref_gather_elements(const void* data, const int64_t* shape, int32_t ndim, const int32_t* indices,
                         const int64_t* index_shape, int32_t axis, void* out);

/* cumsum along axis (axis < 0: over the flattened data) in float32 (adding in
 * order) or int32 (wrapping); exclusive leaves out the element itself, reverse
 * sums from the end. */
void ref_cumsum(const void* in, const int64_t* shape, int32_t ndim, int32_t axis, bool is_int, bool exclusive,
                bool reverse, void* out);

/* take: axis >= 0 takes along that axis (out shape: shape[:axis] + indices' shape
 * + shape[axis+1:]); axis < 0 takes from the flattened data (out shaped like the
 * indices). wrap: indices wrap around (mode "wrap"); else they are clipped into the
 * axis (modes "clip" and "fast"). The axis taken from must not be empty unless
 * the output is. */
void ref_take(const void* data, const int64_t* shape, int32_t ndim, const int32_t* indices, uint64_t index_count,
              int32_t axis, bool wrap, void* out);

/* strided_slice in canonical form: out (shaped out_shape, rank ndim) holds
 * in[begin[d] + c[d] * strides[d] for each d] at coordinates c. */
void ref_strided_slice(const void* in, const int64_t* shape, int32_t ndim, const int64_t* begin,
                       const int64_t* strides, const int64_t* out_shape, void* out);

/* Relay's strided_slice attrs made canonical (topi's rules): begin/end/strides
 * (counts as given; strides may be absent: stride_count 0) for the listed axes
 * (axes NULL: dims 0, 1, ... with missing trailing values taking the full range),
 * slice_mode "size" when size_mode. Negative begin/end count from the end and
 * are clamped; in size mode end is a size (negative: to the end) and strides are
 * ignored. Fills out_begin, out_strides and out_shape for every dim of the input;
 * returns false where Relay rejects the attrs (a 0 stride, begin past end, wrong
 * counts). */
bool ref_strided_slice_canonical(const int64_t* shape, int32_t ndim, const int64_t* begin, uint32_t begin_count,
                                 const int64_t* end, uint32_t end_count, const int64_t* strides,
                                 uint32_t stride_count, const int32_t* axes, uint32_t axis_count, bool size_mode,
                                 int64_t* out_begin, int64_t* out_strides, int64_t* out_shape);

/* reshape, flatten, batch_flatten, squeeze, expand_dims: the count elements in
 * order (only the shape changes). */
void ref_reshape(const void* in, uint64_t bytes, void* out);

#endif /* HGR_TEST_REF_LAYOUT_H_ */
