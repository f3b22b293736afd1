/* An op's output layout (ops.h, hgr__out_layout_t): attrs out_shape and out_axes,
 * which say that the op writes its result R as transpose(reshape(R, out_shape),
 * out_axes), and the arguments kernels/out_layout.h takes for it. The GEMMs
 * (ops_linalg.c) and attention (ops_attention.c) take them, and strided_slice
 * (ops_layout.c, through hgr__view_splits); the pass that gives them is
 * passes/fuse_out_layout.c. */
#include <stdio.h>
#include <string.h>

#include "ops.h"

hgr_status_t hgr__out_layout_parse(const hgr__op_ctx_t* ctx, int64_t* shape, int32_t* ndim, hgr__out_layout_t* out) {
  return hgr__out_layout_parse_output(ctx, 0, 1, shape, ndim, out);
}

hgr_status_t hgr__out_layout_parse_output(const hgr__op_ctx_t* ctx, uint32_t output, uint32_t outputs,
                                          int64_t* shape, int32_t* ndim, hgr__out_layout_t* out) {
  memset(out, 0, sizeof(*out));
  int64_t view[4], all_axes[4 * HGR__OUT_LAYOUT_OUTPUTS];
  uint32_t view_count = 0, axes_count = 0;
  bool has_view = false, has_axes = false;
  HGR_RETURN_IF_ERROR(hgr__attr_ints(ctx, "out_shape", view, 4, &view_count, &has_view));
  HGR_RETURN_IF_ERROR(hgr__attr_ints(ctx, "out_axes", all_axes, 4 * HGR__OUT_LAYOUT_OUTPUTS, &axes_count, &has_axes));
  if (!has_view && !has_axes) return HGR_OK;
  if (!has_view || !has_axes || view_count == 0 ||
      (axes_count != view_count && (outputs < 2 || axes_count != view_count * outputs)))
    return HGR__OP_ERROR(ctx,
                         "attrs 'out_shape' = \"%s\" and 'out_axes' = \"%s\" go together: a shape of 1 to 4 dims and "
                         "a permutation of as many axes (for an op of %u outputs: one, or one per output in turn)",
                         hgr__attr_string(ctx, "out_shape", ""), hgr__attr_string(ctx, "out_axes", ""), outputs);
  /* output's permutation: the one for all, or its own */
  const int64_t* axes = all_axes + (axes_count == view_count ? 0 : output * view_count);
  uint64_t count = 1, result = 1;
  for (int32_t d = 0; d < *ndim; ++d) result *= (uint64_t)shape[d];
  bool seen[4] = {false, false, false, false}, valid = true;
  for (uint32_t a = 0; a < view_count; ++a) {
    valid = valid && view[a] >= 0 && view[a] <= INT32_MAX && axes[a] >= 0 && axes[a] < (int64_t)view_count &&
            !seen[axes[a]];
    if (!valid) break;
    seen[axes[a]] = true;
    /* held past INT32_MAX (more than any result), so that 4 dims cannot wrap around
     * to R's count: [384773, 49477, 52086, 55810] is 3 * 2^64 + 12 */
    count = count > INT32_MAX && view[a] ? count : count * (uint64_t)view[a];
  }
  if (!valid || count != result || result > INT32_MAX)
    return HGR__OP_ERROR(ctx,
                         "attrs 'out_shape' = \"%s\" and 'out_axes' = \"%s\": the shape must hold the result's %llu "
                         "elements (at most 2^31 - 1) and the axes be a permutation of its dims",
                         hgr__attr_string(ctx, "out_shape", ""), hgr__attr_string(ctx, "out_axes", ""),
                         (unsigned long long)result);
  /* the view padded to 4 dims with leading 1s, each axis's stride in the output */
  uint32_t pad = 4 - view_count;
  int64_t dims[4] = {1, 1, 1, 1}, strides[4] = {0, 0, 0, 0};
  for (uint32_t a = 0; a < view_count; ++a) dims[pad + a] = view[a];
  int64_t stride = 1;
  for (int32_t o = (int32_t)view_count - 1; o >= 0; --o) {
    strides[pad + axes[o]] = stride;
    stride *= view[axes[o]];
  }
  out->mapped = true;
  out->rank = (int32_t)view_count;
  for (uint32_t a = 0; a < view_count; ++a) out->axes[a] = (int32_t)axes[a];
  for (int a = 0; a < 4; ++a) {
    out->dims[a] = (int32_t)dims[a];
    out->strides[a] = (int32_t)strides[a];
  }
  for (uint32_t o = 0; o < view_count; ++o) shape[o] = view[axes[o]];
  *ndim = (int32_t)view_count;
  return HGR_OK;
}

/* A dim of 0 (an empty result, which stores nothing) goes as 1: the kernels divide by
 * the dims. */
void hgr__out_layout_args(hgr__op_ctx_t* ctx, hgr__launch_plan_t* l, const hgr__out_layout_t* layout) {
  for (int a = 1; a < 4; ++a) hgr__launch_int(ctx, l, layout->mapped ? (layout->dims[a] ? layout->dims[a] : 1) : 0);
  for (int a = 0; a < 4; ++a) hgr__launch_int(ctx, l, layout->mapped ? layout->strides[a] : 0);
}

bool hgr__view_splits(const int64_t* shape, int32_t ndim, const int64_t* view, int32_t view_ndim,
                      const int64_t* strides, int64_t* out_strides) {
  uint64_t count = 1, view_count = 1;
  for (int32_t d = 0; d < ndim; ++d) count *= (uint64_t)shape[d];
  for (int32_t k = 0; k < view_ndim; ++k) view_count *= (uint64_t)view[k];
  if (count != view_count) return false;
  if (count == 0) { /* nothing is read */
    for (int32_t k = 0; out_strides && k < view_ndim; ++k) out_strides[k] = 0;
    return true;
  }
  int32_t j = 0;
  for (int32_t d = 0; d < ndim; ++d) {
    if (shape[d] == 1) continue;
    /* the view's dims whose product is this dim (1s before them join them) */
    int32_t first = j;
    int64_t product = 1;
    while (j < view_ndim && product < shape[d]) product *= view[j++];
    if (product != shape[d]) return false;
    int64_t stride = strides ? strides[d] : 0;
    for (int32_t k = j - 1; k >= first; --k) {
      if (out_strides) out_strides[k] = stride;
      stride *= view[k];
    }
  }
  for (; j < view_ndim; ++j) /* 1s, as the counts agree */
    if (out_strides) out_strides[j] = 0;
  return true;
}
