#include "ref_index.h"

#include <math.h>
#include <string.h>

static int64_t product(const int64_t* shape, int32_t from, int32_t to) {
  int64_t p = 1;
  for (int32_t d = from; d < to; ++d) p *= shape[d];
  return p;
}

/* An index into a dim of extent: negative counts from the end; still outside,
 * clamped (clamp) or -1. */
static int64_t fix_index(int64_t v, int64_t extent, bool clamp) {
  if (v < 0) v += extent;
  if (v >= 0 && v < extent) return v;
  if (!clamp) return -1;
  return v < 0 ? 0 : extent - 1;
}

/* Element offset of tuple t's k indices into dims from `first` on, or -1. */
static int64_t tuple_offset(const int64_t* shape, int32_t ndim, int32_t first, const int32_t* tuple, int64_t k,
                            bool clamp) {
  int64_t offset = 0;
  for (int64_t c = 0; c < k; ++c) {
    int32_t d = first + (int32_t)c;
    int64_t v = fix_index(tuple[c], shape[d], clamp);
    if (v < 0) return -1;
    offset += v * product(shape, d + 1, ndim);
  }
  return offset;
}

void ref_gather_nd(const void* data, const int64_t* shape, int32_t ndim, const int32_t* indices,
                   const int64_t* index_shape, int32_t index_ndim, int32_t batch_dims, size_t element, void* out) {
  int64_t k = index_shape[index_ndim - 1];
  int64_t batches = product(shape, 0, batch_dims);
  int64_t tuples = product(index_shape, batch_dims, index_ndim - 1);
  int64_t slice = product(shape, batch_dims + (int32_t)k, ndim);
  int64_t batch_size = product(shape, batch_dims, ndim);
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t n = 0; n < tuples; ++n) {
      int64_t t = b * tuples + n;
      int64_t offset = tuple_offset(shape, ndim, batch_dims, indices + t * k, k, true);
      memcpy((char*)out + (size_t)(t * slice) * element,
             (const char*)data + (size_t)(b * batch_size + offset) * element, (size_t)slice * element);
    }
}

/* Applies the update at u to the element at x (both element bytes). */
static void reduce(void* x, const void* u, int reduction, bool is_float, size_t element) {
  if (reduction == REF_REDUCE_NONE) {
    memcpy(x, u, element);
    return;
  }
  if (is_float) {
    float a, b, r;
    memcpy(&a, x, 4);
    memcpy(&b, u, 4);
    switch (reduction) {
      case REF_REDUCE_ADD: r = a + b; break;
      case REF_REDUCE_MUL: r = a * b; break;
      case REF_REDUCE_MAX: r = isnan(a) || a >= b ? a : b; break; /* NaN wins, as NumPy's maximum */
      default: r = isnan(a) || a <= b ? a : b; break;
    }
    memcpy(x, &r, 4);
  } else {
    int32_t a, b, r;
    memcpy(&a, x, 4);
    memcpy(&b, u, 4);
    switch (reduction) {
      case REF_REDUCE_ADD: r = (int32_t)((uint32_t)a + (uint32_t)b); break;
      case REF_REDUCE_MUL: r = (int32_t)((uint32_t)a * (uint32_t)b); break;
      case REF_REDUCE_MAX: r = a > b ? a : b; break;
      default: r = a < b ? a : b; break;
    }
    memcpy(x, &r, 4);
  }
}

void ref_scatter_nd(const void* data, const int64_t* shape, int32_t ndim, const int32_t* indices,
                    const int64_t* index_shape, int32_t index_ndim, const void* updates, int reduction, bool is_float,
                    size_t element, void* out) {
  memcpy(out, data, (size_t)product(shape, 0, ndim) * element);
  int64_t k = index_shape[index_ndim - 1];
  int64_t tuples = product(index_shape, 0, index_ndim - 1);
  int64_t slice = product(shape, (int32_t)k, ndim);
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t offset = tuple_offset(shape, ndim, 0, indices + t * k, k, false);
    if (offset < 0) continue;
    for (int64_t j = 0; j < slice; ++j)
      reduce((char*)out + (size_t)(offset + j) * element, (const char*)updates + (size_t)(t * slice + j) * element,
             reduction, is_float, element);
  }
}

void ref_scatter_elements(const void* data, const int64_t* shape, int32_t ndim, const int32_t* indices,
                          const int64_t* index_shape, const void* updates, int32_t axis, int reduction, bool is_float,
                          size_t element, void* out) {
  memcpy(out, data, (size_t)product(shape, 0, ndim) * element);
  int64_t count = product(index_shape, 0, ndim);
  int64_t coords[16] = {0};
  for (int64_t i = 0; i < count; ++i) {
    int64_t target = 0;
    bool inside = true;
    for (int32_t d = 0; d < ndim; ++d) {
      int64_t c = coords[d];
      if (d == axis) {
        c = fix_index(indices[i], shape[d], false);
        inside = inside && c >= 0;
      }
      target = target * shape[d] + c;
    }
    if (inside)
      reduce((char*)out + (size_t)target * element, (const char*)updates + (size_t)i * element, reduction, is_float,
             element);
    for (int32_t d = ndim - 1; d >= 0; --d) { /* the odometer */
      if (++coords[d] < index_shape[d]) break;
      coords[d] = 0;
    }
  }
}

void ref_trilu(const void* in, const int64_t* shape, int32_t ndim, int64_t k, bool upper, size_t element, void* out) {
  int64_t rows = shape[ndim - 2], cols = shape[ndim - 1];
  int64_t count = product(shape, 0, ndim);
  for (int64_t i = 0; i < count; ++i) {
    int64_t c = i % cols, r = (i / cols) % rows;
    bool keep = upper ? c - r >= k : c - r <= k;
    if (keep) memcpy((char*)out + (size_t)i * element, (const char*)in + (size_t)i * element, element);
    else memset((char*)out + (size_t)i * element, 0, element);
  }
}
