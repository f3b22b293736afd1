/* Host evaluation of the layout ops whose every output element is a copy of one
 * input element (Slice, Split, Pad, Expand, Tile: onnx_internal.h's
 * hgr__onnx_source_map_t says which element). Every source index is checked
 * against the input's extents before its bytes are copied: a fold reads inside
 * its input or fails. */
#include <string.h>

#include "onnx_internal.h"

/* The most elements a map folds (larger results are left to the device). */
#define MAX_MAPPED_ELEMENTS (UINT64_C(1) << 26)

/* The input coords of output coords c (false: the fill value). */
static bool map_source(const hgr__onnx_source_map_t* map, const int64_t* c, int32_t out_ndim, int64_t* from) {
  const hgr__onnx_tensor_t* in = map->in;
  int32_t lead = out_ndim - in->ndim;
  if (map->kind == HGR__ONNX_MAP_TRILU) { /* the same coords, or the fill */
    int64_t diff = c[out_ndim - 1] - c[out_ndim - 2];
    if (map->step[0] ? diff < map->start[0] : diff > map->start[0]) return false;
    memcpy(from, c, sizeof(*c) * (size_t)out_ndim);
    return true;
  }
  for (int32_t d = 0; d < in->ndim; ++d) {
    int64_t extent = in->shape[d], j;
    switch (map->kind) {
      case HGR__ONNX_MAP_SLICE:
        j = map->start[d] + c[d] * map->step[d];
        break;
      case HGR__ONNX_MAP_BROADCAST:
        j = extent == 1 ? 0 : c[d + lead];
        break;
      case HGR__ONNX_MAP_TILE:
        j = c[d] % extent;
        break;
      default:
        j = c[d] - map->start[d];
        if (j >= 0 && j < extent) break;
        if (map->kind == HGR__ONNX_MAP_PAD_CONSTANT) return false;
        if (map->kind == HGR__ONNX_MAP_PAD_EDGE || extent == 1) {
          j = j < 0 ? 0 : extent - 1;
        } else { /* numpy's reflect, repeated while the pad is wider than the
                    input */
          int64_t period = 2 * (extent - 1);
          j %= period;
          if (j < 0) j += period;
          if (j >= extent) j = period - j;
        }
    }
    from[d] = j;
  }
  return true;
}

hgr_status_t hgr__onnx_map_tensor(const hgr__onnx_node_t* node, const hgr__onnx_source_map_t* map, const int64_t* shape,
                                  int32_t ndim, hgr__onnx_tensor_t** out_tensor) {
  const hgr__onnx_tensor_t* in = map->in;
  uint64_t count = 0;
  if (!hgr__shape_size(shape, ndim, 0, &count, NULL) || count > MAX_MAPPED_ELEMENTS)
    return HGR__ONNX_UNSUPPORTED(node, "a result too large to compute at load");
  hgr__onnx_tensor_t* out = NULL;
  HGR_RETURN_IF_ERROR(hgr__onnx_tensor_new(node->loader->allocator, in->onnx_type, shape, ndim, node->label, &out));
  size_t element = hgr__onnx_type_bytes(in->onnx_type);
  uint64_t in_stride[HGR_MAX_DIMS];
  hgr__onnx_tensor_strides(in, in_stride);
  int64_t c[HGR_MAX_DIMS], from[HGR_MAX_DIMS];
  for (uint64_t i = 0; i < out->count; ++i) {
    uint64_t rest = i;
    for (int32_t d = ndim - 1; d >= 0; --d) {
      c[d] = (int64_t)(rest % (uint64_t)shape[d]);
      rest /= (uint64_t)shape[d];
    }
    char* to = (char*)out->data + i * element;
    if (!map_source(map, c, ndim, from)) {
      memcpy(to, map->fill, element);
      continue;
    }
    uint64_t offset = 0;
    for (int32_t d = 0; d < in->ndim; ++d) {
      /* the fold reads inside its input or not at all, whatever the map
       * computed */
      if (from[d] < 0 || from[d] >= in->shape[d]) {
        hgr__onnx_tensor_free(out);
        return HGR__ONNX_INVALID(node,
                                 "folding it would read index %lld of "
                                 "dimension %d of an input of extent %lld",
                                 (long long)from[d], (int)d, (long long)in->shape[d]);
      }
      offset += (uint64_t)from[d] * in_stride[d];
    }
    memcpy(to, (const char*)in->data + offset * element, element);
  }
  *out_tensor = out;
  return HGR_OK;
}

hgr_status_t hgr__onnx_fold_map(hgr__onnx_node_t* node, const hgr__onnx_source_map_t* map, const int64_t* shape,
                                int32_t ndim, uint32_t k) {
  hgr__onnx_tensor_t* out = NULL;
  HGR_RETURN_IF_ERROR(hgr__onnx_map_tensor(node, map, shape, ndim, &out));
  return hgr__onnx_set_constant(node, k, out);
}
