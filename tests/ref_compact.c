#include "ref_compact.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int hgr_ref_compact_element_bytes(hgr_ref_compact_dtype_t dtype) { return dtype == HGR_REF_COMPACT_BOOL ? 1 : 4; }

static int64_t element_count(int32_t ndim, const int64_t* shape) {
  int64_t count = 1;
  for (int32_t d = 0; d < ndim; ++d) count *= shape[d];
  return count;
}

static bool nonzero_at(const void* x, hgr_ref_compact_dtype_t dtype, int64_t i) {
  switch (dtype) {
    case HGR_REF_COMPACT_F32: return ((const float*)x)[i] != 0.0f; /* NaN != 0 */
    case HGR_REF_COMPACT_I32: return ((const int32_t*)x)[i] != 0;
    default: return ((const uint8_t*)x)[i] != 0;
  }
}

int32_t hgr_ref_nonzero(const void* x, hgr_ref_compact_dtype_t dtype, int32_t ndim, const int64_t* shape,
                        int32_t* out) {
  int64_t count = element_count(ndim, shape), cap = count > 0 ? count : 1;
  memset(out, 0, (size_t)(ndim * cap) * sizeof(int32_t));
  int32_t n = 0;
  for (int64_t i = 0; i < count; ++i) n += nonzero_at(x, dtype, i);
  int32_t j = 0;
  for (int64_t i = 0; i < count; ++i) {
    if (!nonzero_at(x, dtype, i)) continue;
    int64_t rest = i;
    for (int32_t d = ndim - 1; d >= 0; --d) {
      out[d * n + j] = (int32_t)(rest % shape[d]);
      rest /= shape[d];
    }
    ++j;
  }
  return n;
}

/* x viewed as [outer, extent, inner] around axis (< 0: [1, count, 1]). */
static void view(int32_t ndim, const int64_t* shape, int32_t axis, int64_t* outer, int64_t* extent, int64_t* inner) {
  *outer = *inner = 1;
  if (axis < 0) {
    *extent = element_count(ndim, shape);
    return;
  }
  for (int32_t d = 0; d < axis; ++d) *outer *= shape[d];
  for (int32_t d = axis + 1; d < ndim; ++d) *inner *= shape[d];
  *extent = shape[axis];
}

int32_t hgr_ref_compress(const void* x, hgr_ref_compact_dtype_t dtype, int32_t ndim, const int64_t* shape,
                         int32_t axis, const uint8_t* cond, int64_t length, void* out) {
  int64_t outer, extent, inner, cap = length > 0 ? length : 1;
  view(ndim, shape, axis, &outer, &extent, &inner);
  size_t bytes = (size_t)hgr_ref_compact_element_bytes(dtype);
  memset(out, 0, (size_t)(outer * cap * inner) * bytes);
  int32_t n = 0;
  for (int64_t k = 0; k < length; ++k) n += cond[k] != 0;
  const uint8_t* from = x;
  uint8_t* to = out;
  for (int64_t o = 0; o < outer; ++o) {
    int64_t j = 0;
    for (int64_t k = 0; k < length; ++k) {
      if (!cond[k]) continue;
      memcpy(to + (size_t)((o * n + j) * inner) * bytes, from + (size_t)((o * extent + k) * inner) * bytes,
             (size_t)inner * bytes);
      ++j;
    }
  }
  return n;
}

/* -1, 0, 1: value a against b (floats: NaN equal to NaN, above everything). */
static int compare_values(const void* x, hgr_ref_compact_dtype_t dtype, int64_t a, int64_t b) {
  if (dtype == HGR_REF_COMPACT_I32) {
    int32_t va = ((const int32_t*)x)[a], vb = ((const int32_t*)x)[b];
    return va < vb ? -1 : va > vb;
  }
  float va = ((const float*)x)[a], vb = ((const float*)x)[b];
  if (isnan(va) || isnan(vb)) return isnan(va) - isnan(vb);
  return va < vb ? -1 : va > vb;
}

typedef struct items_t {
  const void* x;
  hgr_ref_compact_dtype_t dtype;
  int64_t outer, extent, inner;
} items_t;

/* Item a against item b, slices compared in their row-major order. */
static int compare_items(const items_t* t, int64_t a, int64_t b) {
  for (int64_t o = 0; o < t->outer; ++o)
    for (int64_t r = 0; r < t->inner; ++r) {
      int c = compare_values(t->x, t->dtype, (o * t->extent + a) * t->inner + r, (o * t->extent + b) * t->inner + r);
      if (c) return c;
    }
  return 0;
}

int32_t hgr_ref_unique(const void* x, hgr_ref_compact_dtype_t dtype, int32_t ndim, const int64_t* shape,
                       int32_t axis, bool sorted, void* y, int32_t* indices, int32_t* inverse, int32_t* counts) {
  items_t t = {x, dtype, 0, 0, 0};
  view(ndim, shape, axis, &t.outer, &t.extent, &t.inner);
  if (element_count(ndim, shape) == 0) t.outer = t.inner = 0; /* empty slices: all equal */
  int64_t cap = t.extent > 0 ? t.extent : 1;
  memset(y, 0, (size_t)(t.outer * cap * t.inner) * 4);
  memset(indices, 0, (size_t)cap * sizeof(int32_t));
  memset(counts, 0, (size_t)cap * sizeof(int32_t));
  /* the first occurrences, in order */
  int64_t* firsts = calloc((size_t)cap, sizeof(int64_t));
  if (!firsts) abort();
  int32_t n = 0;
  for (int64_t k = 0; k < t.extent; ++k) {
    bool seen = false;
    for (int32_t j = 0; j < n && !seen; ++j) seen = compare_items(&t, firsts[j], k) == 0;
    if (!seen) firsts[n++] = k;
  }
  /* ascending: an insertion sort (stable, though the firsts are distinct) */
  if (sorted)
    for (int32_t j = 1; j < n; ++j)
      for (int32_t i = j; i > 0 && compare_items(&t, firsts[i - 1], firsts[i]) > 0; --i) {
        int64_t swap = firsts[i];
        firsts[i] = firsts[i - 1];
        firsts[i - 1] = swap;
      }
  for (int64_t k = 0; k < t.extent; ++k)
    for (int32_t j = 0; j < n; ++j)
      if (compare_items(&t, firsts[j], k) == 0) {
        inverse[k] = j;
        ++counts[j];
        break;
      }
  for (int32_t j = 0; j < n; ++j) indices[j] = (int32_t)firsts[j];
  const uint32_t* from = x;
  uint32_t* to = y;
  for (int64_t o = 0; o < t.outer; ++o)
    for (int32_t j = 0; j < n; ++j)
      for (int64_t r = 0; r < t.inner; ++r)
        to[(o * n + j) * t.inner + r] = from[(o * t.extent + firsts[j]) * t.inner + r];
  free(firsts);
  return n;
}
