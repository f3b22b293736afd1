#include "ref_layout.h"

#include <string.h>

#define REF_MAX_DIMS 16

static uint64_t count_of(const int64_t* shape, int32_t ndim) {
  uint64_t count = 1;
  for (int32_t d = 0; d < ndim; ++d) count *= (uint64_t)shape[d];
  return count;
}

/* Row-major position of coords in shape. */
static uint64_t position(const int64_t* coords, const int64_t* shape, int32_t ndim) {
  uint64_t at = 0;
  for (int32_t d = 0; d < ndim; ++d) at = at * (uint64_t)shape[d] + (uint64_t)coords[d];
  return at;
}

/* Steps coords to the next element of shape in row-major order; false past the
 * last one. */
static bool next_coords(int64_t* coords, const int64_t* shape, int32_t ndim) {
  for (int32_t d = ndim - 1; d >= 0; --d) {
    if (++coords[d] < shape[d]) return true;
    coords[d] = 0;
  }
  return false;
}

void ref_concatenate(const void* const* inputs, const int64_t* const* shapes, uint32_t count, int32_t ndim,
                     int32_t axis, void* out) {
  int64_t out_shape[REF_MAX_DIMS];
  memcpy(out_shape, shapes[0], sizeof(int64_t) * (size_t)ndim);
  out_shape[axis] = 0;
  for (uint32_t k = 0; k < count; ++k) out_shape[axis] += shapes[k][axis];
  int64_t offset = 0;
  for (uint32_t k = 0; k < count; ++k) {
    const uint32_t* in = inputs[k];
    if (count_of(shapes[k], ndim) > 0) {
      int64_t coords[REF_MAX_DIMS] = {0};
      uint64_t i = 0;
      do {
        int64_t target[REF_MAX_DIMS];
        memcpy(target, coords, sizeof(int64_t) * (size_t)ndim);
        target[axis] += offset;
        ((uint32_t*)out)[position(target, out_shape, ndim)] = in[i++];
      } while (next_coords(coords, shapes[k], ndim));
    }
    offset += shapes[k][axis];
  }
}

void ref_transpose(const void* in, const int64_t* shape, int32_t ndim, const int32_t* axes, void* out) {
  int64_t out_shape[REF_MAX_DIMS];
  for (int32_t d = 0; d < ndim; ++d) out_shape[d] = shape[axes[d]];
  if (count_of(shape, ndim) == 0) return;
  int64_t coords[REF_MAX_DIMS] = {0};
  uint64_t i = 0;
  do {
    int64_t source[REF_MAX_DIMS];
    for (int32_t d = 0; d < ndim; ++d) source[axes[d]] = coords[d];
    ((uint32_t*)out)[i++] = ((const uint32_t*)in)[position(source, shape, ndim)];
  } while (next_coords(coords, out_shape, ndim));
}

void ref_pad(const void* in, const int64_t* shape, int32_t ndim, const int64_t* pad_width, const void* pad_value,
             void* out) {
  int64_t out_shape[REF_MAX_DIMS];
  for (int32_t d = 0; d < ndim; ++d) out_shape[d] = pad_width[2 * d] + shape[d] + pad_width[2 * d + 1];
  if (count_of(out_shape, ndim) == 0) return;
  uint32_t value;
  memcpy(&value, pad_value, sizeof(value));
  int64_t coords[REF_MAX_DIMS] = {0};
  uint64_t i = 0;
  do {
    int64_t source[REF_MAX_DIMS];
    bool inside = true;
    for (int32_t d = 0; d < ndim; ++d) {
      source[d] = coords[d] - pad_width[2 * d];
      inside = inside && source[d] >= 0 && source[d] < shape[d];
    }
    ((uint32_t*)out)[i++] = inside ? ((const uint32_t*)in)[position(source, shape, ndim)] : value;
  } while (next_coords(coords, out_shape, ndim));
}

static int64_t fix_index(int64_t index, int64_t extent, bool wrap) {
  if (wrap) {
    int64_t k = index % extent;
    return k < 0 ? k + extent : k;
  }
  return index < 0 ? 0 : index >= extent ? extent - 1 : index;
}

void ref_take(const void* data, const int64_t* shape, int32_t ndim, const int32_t* indices, uint64_t index_count,
              int32_t axis, bool wrap, void* out) {
  const uint32_t* source = data;
  uint32_t* target = out;
  if (axis < 0) {
    int64_t extent = (int64_t)count_of(shape, ndim);
    for (uint64_t j = 0; j < index_count; ++j) target[j] = source[fix_index(indices[j], extent, wrap)];
    return;
  }
  uint64_t outer = count_of(shape, axis), inner = count_of(shape + axis + 1, ndim - axis - 1);
  int64_t extent = shape[axis];
  uint64_t i = 0;
  for (uint64_t o = 0; o < outer; ++o)
    for (uint64_t j = 0; j < index_count; ++j) {
      if (inner == 0) continue;
      uint64_t row = o * (uint64_t)extent + (uint64_t)fix_index(indices[j], extent, wrap);
      for (uint64_t r = 0; r < inner; ++r) target[i++] = source[row * inner + r];
    }
}

void ref_strided_slice(const void* in, const int64_t* shape, int32_t ndim, const int64_t* begin,
                       const int64_t* strides, const int64_t* out_shape, void* out) {
  if (count_of(out_shape, ndim) == 0) return;
  int64_t coords[REF_MAX_DIMS] = {0};
  uint64_t i = 0;
  do {
    int64_t source[REF_MAX_DIMS];
    for (int32_t d = 0; d < ndim; ++d) source[d] = begin[d] + coords[d] * strides[d];
    ((uint32_t*)out)[i++] = ((const uint32_t*)in)[position(source, shape, ndim)];
  } while (next_coords(coords, out_shape, ndim));
}

/* Negative indices count from the end; then the index is clamped to where a slice
 * going this way can start or stop: [0, extent] forwards, [-1, extent - 1]
 * backwards. */
static int64_t clamp_index(int64_t index, int64_t extent, int64_t stride) {
  if (index < 0) index += extent;
  int64_t low = stride > 0 ? 0 : -1, high = stride > 0 ? extent : extent - 1;
  return index < low ? low : index > high ? high : index;
}

bool ref_strided_slice_canonical(const int64_t* shape, int32_t ndim, const int64_t* begin, uint32_t begin_count,
                                 const int64_t* end, uint32_t end_count, const int64_t* strides,
                                 uint32_t stride_count, const int32_t* axes, uint32_t axis_count, bool size_mode,
                                 int64_t* out_begin, int64_t* out_strides, int64_t* out_shape) {
  for (int32_t d = 0; d < ndim; ++d) {
    out_begin[d] = 0;
    out_strides[d] = 1;
    out_shape[d] = shape[d];
  }
  uint32_t n = axes ? axis_count : (uint32_t)ndim;
  if (axes ? begin_count != n || end_count != n || (stride_count && stride_count != n)
           : begin_count > n || end_count > n || stride_count > n)
    return false;
  for (uint32_t i = 0; i < n; ++i) {
    int32_t d = axes ? axes[i] : (int32_t)i;
    int64_t stride = i < stride_count ? strides[i] : 1;
    int64_t first = i < begin_count ? begin[i] : stride > 0 ? 0 : INT64_MAX;
    int64_t last = i < end_count ? end[i] : stride < 0 ? 0 : INT64_MAX;
    if (size_mode) {
      stride = 1;
      last = i < end_count && end[i] >= 0 ? first + end[i] : INT64_MAX;
    }
    if (stride == 0) return false;
    first = clamp_index(first, shape[d], stride);
    last = clamp_index(last, shape[d], stride);
    if (stride > 0 ? first > last : first < last) return false;
    int64_t span = stride > 0 ? last - first : first - last;
    int64_t step = stride > 0 ? stride : -stride;
    out_begin[d] = first;
    out_strides[d] = stride;
    out_shape[d] = (span + step - 1) / step;
  }
  return true;
}

void ref_reshape(const void* in, uint64_t bytes, void* out) { memcpy(out, in, bytes); }

void ref_pad_edge_reflect(const void* in, const int64_t* shape, int32_t ndim, const int64_t* pad_width,
                          bool reflect, void* out) {
  int64_t out_shape[REF_MAX_DIMS];
  for (int32_t d = 0; d < ndim; ++d) out_shape[d] = pad_width[2 * d] + shape[d] + pad_width[2 * d + 1];
  if (count_of(out_shape, ndim) == 0) return;
  int64_t coords[REF_MAX_DIMS] = {0};
  uint64_t i = 0;
  do {
    int64_t source[REF_MAX_DIMS];
    for (int32_t d = 0; d < ndim; ++d) {
      int64_t at = coords[d] - pad_width[2 * d], last = shape[d] - 1;
      if (reflect) /* numpy's 'reflect': mirror across the edge element, as often as it takes */
        while (at < 0 || at > last) at = at < 0 ? -at : 2 * last - at;
      else
        at = at < 0 ? 0 : at > last ? last : at;
      source[d] = at;
    }
    ((uint32_t*)out)[i++] = ((const uint32_t*)in)[position(source, shape, ndim)];
  } while (next_coords(coords, out_shape, ndim));
}

void ref_broadcast_to(const void* in, const int64_t* shape, int32_t ndim, const int64_t* out_shape,
                      int32_t out_ndim, void* out) {
  if (count_of(out_shape, out_ndim) == 0) return;
  int64_t coords[REF_MAX_DIMS] = {0};
  uint64_t i = 0;
  do {
    int64_t source[REF_MAX_DIMS];
    for (int32_t d = 0; d < ndim; ++d) source[d] = shape[d] == 1 ? 0 : coords[d + out_ndim - ndim];
    ((uint32_t*)out)[i++] = ((const uint32_t*)in)[position(source, shape, ndim)];
  } while (next_coords(coords, out_shape, out_ndim));
}

void ref_tile(const void* in, const int64_t* shape, int32_t ndim, const int64_t* reps, int32_t rep_count,
              void* out) {
  int32_t out_ndim = rep_count > ndim ? rep_count : ndim;
  int64_t in_shape[REF_MAX_DIMS], out_shape[REF_MAX_DIMS];
  for (int32_t d = 0; d < out_ndim; ++d) {
    int32_t source = d - (out_ndim - ndim), rep = d - (out_ndim - rep_count);
    in_shape[d] = source < 0 ? 1 : shape[source];
    out_shape[d] = in_shape[d] * (rep < 0 ? 1 : reps[rep]);
  }
  if (count_of(out_shape, out_ndim) == 0) return;
  int64_t coords[REF_MAX_DIMS] = {0};
  uint64_t i = 0;
  do {
    int64_t source[REF_MAX_DIMS];
    for (int32_t d = 0; d < out_ndim; ++d) source[d] = coords[d] % in_shape[d];
    ((uint32_t*)out)[i++] = ((const uint32_t*)in)[position(source, in_shape, out_ndim)];
  } while (next_coords(coords, out_shape, out_ndim));
}

void ref_depth_to_space(const void* in, const int64_t* shape, int64_t block, bool crd, void* out) {
  int64_t n = shape[0], c = shape[1], h = shape[2], w = shape[3], oc = c / (block * block);
  const uint32_t* source = in;
  uint32_t* target = out;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t k = 0; k < oc; ++k)
      for (int64_t y = 0; y < h * block; ++y)
        for (int64_t x = 0; x < w * block; ++x) {
          int64_t i = y % block, j = x % block;
          int64_t channel = crd ? k * block * block + i * block + j : (i * block + j) * oc + k;
          target[((b * oc + k) * h * block + y) * w * block + x] =
              source[((b * c + channel) * h + y / block) * w + x / block];
        }
}

void ref_space_to_depth(const void* in, const int64_t* shape, int64_t block, void* out) {
  int64_t n = shape[0], c = shape[1], h = shape[2], w = shape[3], oh = h / block, ow = w / block;
  const uint32_t* source = in;
  uint32_t* target = out;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t k = 0; k < c; ++k)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x) {
          int64_t channel = ((y % block) * block + x % block) * c + k;
          target[((b * c * block * block + channel) * oh + y / block) * ow + x / block] =
              source[((b * c + k) * h + y) * w + x];
        }
}

void ref_gather_elements(const void* data, const int64_t* shape, int32_t ndim, const int32_t* indices,
                         const int64_t* index_shape, int32_t axis, void* out) {
  if (count_of(index_shape, ndim) == 0) return;
  int64_t coords[REF_MAX_DIMS] = {0};
  uint64_t i = 0;
  do {
    int64_t source[REF_MAX_DIMS];
    memcpy(source, coords, sizeof(int64_t) * (size_t)ndim);
    int64_t k = indices[i];
    if (k < 0) k += shape[axis];
    source[axis] = k < 0 ? 0 : k >= shape[axis] ? shape[axis] - 1 : k;
    ((uint32_t*)out)[i++] = ((const uint32_t*)data)[position(source, shape, ndim)];
  } while (next_coords(coords, index_shape, ndim));
}

void ref_cumsum(const void* in, const int64_t* shape, int32_t ndim, int32_t axis, bool is_int, bool exclusive,
                bool reverse, void* out) {
  uint64_t outer = axis < 0 ? 1 : count_of(shape, axis);
  uint64_t length = axis < 0 ? count_of(shape, ndim) : (uint64_t)shape[axis];
  uint64_t inner = axis < 0 ? 1 : count_of(shape + axis + 1, ndim - axis - 1);
  for (uint64_t o = 0; o < outer; ++o)
    for (uint64_t r = 0; r < inner; ++r) {
      float real = 0.0f;
      uint32_t integer = 0; /* int32 wraps */
      for (uint64_t step = 0; step < length; ++step) {
        uint64_t k = reverse ? length - 1 - step : step;
        uint64_t at = (o * length + k) * inner + r;
        if (is_int) {
          uint32_t value = ((const uint32_t*)in)[at];
          if (!exclusive) integer += value;
          ((uint32_t*)out)[at] = integer;
          if (exclusive) integer += value;
        } else {
          float value = ((const float*)in)[at];
          if (!exclusive) real += value;
          ((float*)out)[at] = real;
          if (exclusive) real += value;
        }
      }
    }
}
