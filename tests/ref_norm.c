#include "ref_norm.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define INDEX(o, j, i) (((o) * axis_len + (j)) * inner + (i))

/* The parameter is `log` in the header (the examples generator's signature); here it
 * would hide log(). */
void hgr_ref_softmax(const float* x, float* y, int64_t outer, int64_t axis_len, int64_t inner, bool log_output) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double max = -INFINITY;
      for (int64_t j = 0; j < axis_len; ++j)
        if (x[INDEX(o, j, i)] > max) max = x[INDEX(o, j, i)];
      double sum = 0;
      for (int64_t j = 0; j < axis_len; ++j) sum += exp((double)x[INDEX(o, j, i)] - max);
      double log_sum = log(sum);
      for (int64_t j = 0; j < axis_len; ++j) {
        double shifted = (double)x[INDEX(o, j, i)] - max;
        y[INDEX(o, j, i)] = (float)(log_output ? shifted - log_sum : exp(shifted) / sum);
      }
    }
}

void hgr_ref_layer_norm(const float* x, const float* gamma, const float* beta, float* y, int64_t outer,
                        int64_t axis_len, int64_t inner, double epsilon, bool center, bool scale) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double mean = 0, var = 0;
      for (int64_t j = 0; j < axis_len; ++j) mean += x[INDEX(o, j, i)];
      mean /= (double)axis_len;
      for (int64_t j = 0; j < axis_len; ++j) {
        double d = x[INDEX(o, j, i)] - mean;
        var += d * d;
      }
      var /= (double)axis_len;
      double inv_std = 1.0 / sqrt(var + epsilon);
      for (int64_t j = 0; j < axis_len; ++j) {
        double v = (x[INDEX(o, j, i)] - mean) * inv_std;
        if (scale) v *= gamma[j];
        if (center) v += beta[j];
        y[INDEX(o, j, i)] = (float)v;
      }
    }
}

void hgr_ref_batch_norm(const float* x, const float* gamma, const float* beta, const float* moving_mean,
                        const float* moving_var, float* y, int64_t outer, int64_t channels, int64_t inner,
                        double epsilon, bool center, bool scale) {
  const int64_t axis_len = channels;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t c = 0; c < channels; ++c) {
      double inv_std = 1.0 / sqrt((double)moving_var[c] + epsilon);
      for (int64_t i = 0; i < inner; ++i) {
        double v = ((double)x[INDEX(o, c, i)] - moving_mean[c]) * inv_std;
        if (scale) v *= gamma[c];
        if (center) v += beta[c];
        y[INDEX(o, c, i)] = (float)v;
      }
    }
}

/* ---- reductions ------------------------------------------------------------------------ */

bool hgr_ref_reduce_axes(int32_t ndim, const int64_t* axes, int32_t count, bool exclude, bool* reduced) {
  if (!axes || count == 0) {
    for (int32_t d = 0; d < ndim; ++d) reduced[d] = true;
    return true;
  }
  for (int32_t d = 0; d < ndim; ++d) reduced[d] = false;
  for (int32_t k = 0; k < count; ++k) {
    int64_t axis = axes[k] < 0 ? axes[k] + ndim : axes[k];
    if (axis < 0 || axis >= ndim || reduced[axis]) return false;
    reduced[axis] = true;
  }
  if (exclude)
    for (int32_t d = 0; d < ndim; ++d) reduced[d] = !reduced[d];
  return true;
}

int32_t hgr_ref_reduce_shape(int32_t ndim, const int64_t* shape, const bool* reduced, bool keepdims,
                             int64_t* out_shape) {
  int32_t out_ndim = 0;
  for (int32_t d = 0; d < ndim; ++d) {
    if (!reduced[d]) out_shape[out_ndim++] = shape[d];
    else if (keepdims) out_shape[out_ndim++] = 1;
  }
  return out_ndim;
}

/* Calls visit(input index, output index) for every input element, in order. */
typedef struct walk_t {
  int32_t ndim;
  const int64_t* shape;
  const bool* reduced;
  uint64_t in_count, out_count, reduced_count;
} walk_t;

static void walk_init(walk_t* w, int32_t ndim, const int64_t* shape, const bool* reduced) {
  w->ndim = ndim;
  w->shape = shape;
  w->reduced = reduced;
  w->in_count = w->out_count = w->reduced_count = 1;
  for (int32_t d = 0; d < ndim; ++d) {
    w->in_count *= (uint64_t)shape[d];
    if (reduced[d]) w->reduced_count *= (uint64_t)shape[d];
    else w->out_count *= (uint64_t)shape[d];
  }
}

/* The output index of input element i: its kept coordinates, row-major. */
static uint64_t walk_out_index(const walk_t* w, uint64_t i) {
  uint64_t out = 0, out_stride = 1;
  for (int32_t d = w->ndim - 1; d >= 0; --d) {
    uint64_t extent = (uint64_t)w->shape[d];
    uint64_t coord = i % extent;
    i /= extent;
    if (!w->reduced[d]) {
      out += coord * out_stride;
      out_stride *= extent;
    }
  }
  return out;
}

void hgr_ref_reduce_f32(hgr_ref_reduce_op_t op, const float* x, int32_t ndim, const int64_t* shape,
                        const bool* reduced, float* y) {
  walk_t w;
  walk_init(&w, ndim, shape, reduced);
  double* acc = malloc((w.out_count ? w.out_count : 1) * sizeof(double));
  assert(acc);
  double init = op == HGR_REF_MAX ? -INFINITY : op == HGR_REF_MIN ? INFINITY : op == HGR_REF_PROD ? 1.0 : 0.0;
  for (uint64_t k = 0; k < w.out_count; ++k) acc[k] = init;
  for (uint64_t i = 0; i < w.in_count; ++i) {
    double v = x[i], *a = &acc[walk_out_index(&w, i)];
    switch (op) {
      case HGR_REF_SUM:
      case HGR_REF_MEAN: *a += v; break;
      case HGR_REF_MAX:
        if (isnan(v) || v > *a) *a = v;
        break;
      case HGR_REF_MIN:
        if (isnan(v) || v < *a) *a = v;
        break;
      case HGR_REF_PROD: *a *= v; break;
    }
  }
  for (uint64_t k = 0; k < w.out_count; ++k) {
    if (op == HGR_REF_MEAN) y[k] = w.reduced_count ? (float)(acc[k] / (double)w.reduced_count) : NAN;
    else y[k] = (float)acc[k];
  }
  free(acc);
}

void hgr_ref_reduce_i32(hgr_ref_reduce_op_t op, const int32_t* x, int32_t ndim, const int64_t* shape,
                        const bool* reduced, int32_t* y) {
  assert(op != HGR_REF_MEAN);
  walk_t w;
  walk_init(&w, ndim, shape, reduced);
  int64_t* acc = malloc((w.out_count ? w.out_count : 1) * sizeof(int64_t));
  assert(acc);
  int64_t init = op == HGR_REF_MAX ? INT32_MIN : op == HGR_REF_MIN ? INT32_MAX : op == HGR_REF_PROD ? 1 : 0;
  for (uint64_t k = 0; k < w.out_count; ++k) acc[k] = init;
  for (uint64_t i = 0; i < w.in_count; ++i) {
    int64_t v = x[i], *a = &acc[walk_out_index(&w, i)];
    if (op == HGR_REF_SUM) *a = (int64_t)((uint64_t)*a + (uint64_t)v); /* wraps; only the low 32 bits count */
    else if (op == HGR_REF_PROD) *a = (int64_t)(uint32_t)((uint32_t)*a * (uint32_t)v);
    else if (op == HGR_REF_MAX ? v > *a : v < *a) *a = v;
  }
  /* The low 32 bits, as two's complement. */
  for (uint64_t k = 0; k < w.out_count; ++k) {
    uint32_t bits = (uint32_t)(uint64_t)acc[k];
    int32_t value;
    memcpy(&value, &bits, sizeof(value));
    y[k] = value;
  }
  free(acc);
}

/* Element j of row (o, i) as a double (int32 values are exact). */
static double row_value(const void* x, bool is_int, int64_t o, int64_t len, int64_t inner, int64_t i, int64_t j) {
  int64_t at = (o * len + j) * inner + i;
  return is_int ? (double)((const int32_t*)x)[at] : (double)((const float*)x)[at];
}

void hgr_ref_arg_reduce(const void* x, bool is_int, int64_t outer, int64_t len, int64_t inner, bool is_max,
                        bool select_last, int32_t* y) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t at = 0;
      double best = row_value(x, is_int, o, len, inner, i, 0);
      for (int64_t j = 1; j < len; ++j) {
        double v = row_value(x, is_int, o, len, inner, i, j);
        if (isnan(best) && !select_last) break;
        bool beyond = is_max ? v > best : v < best;
        bool take = isnan(v) || (!isnan(best) && (beyond || (select_last && v == best)));
        if (take) {
          best = v;
          at = j;
        }
      }
      y[o * inner + i] = (int32_t)at;
    }
}

/* Whether a comes before b in topk's order (NaN above every number). */
static bool topk_before(double a, int64_t ia, double b, int64_t ib, bool ascend) {
  if (isnan(a) || isnan(b)) {
    if (isnan(a) && isnan(b)) return ia < ib;
    return ascend ? isnan(b) : isnan(a);
  }
  if (a != b) return ascend ? a < b : a > b;
  return ia < ib;
}

void hgr_ref_topk(const void* x, bool is_int, int64_t outer, int64_t len, int64_t inner, int64_t k, bool ascend,
                  void* values, int32_t* indices) {
  int64_t* order = malloc((size_t)(len ? len : 1) * sizeof(int64_t));
  assert(order);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      /* insertion sort: stable, rows are short */
      for (int64_t j = 0; j < len; ++j) {
        int64_t m = j;
        double v = row_value(x, is_int, o, len, inner, i, j);
        while (m > 0 && topk_before(v, j, row_value(x, is_int, o, len, inner, i, order[m - 1]), order[m - 1], ascend)) {
          order[m] = order[m - 1];
          --m;
        }
        order[m] = j;
      }
      for (int64_t r = 0; r < k; ++r) {
        int64_t at = (o * k + r) * inner + i, from = (o * len + order[r]) * inner + i;
        if (is_int) ((int32_t*)values)[at] = ((const int32_t*)x)[from];
        else ((float*)values)[at] = ((const float*)x)[from];
        indices[at] = (int32_t)order[r];
      }
    }
  free(order);
}

void hgr_ref_lrn(const float* x, float* y, int64_t outer, int64_t channels, int64_t inner, int64_t size,
                 double alpha, double beta, double bias) {
  int64_t before = (size - 1) / 2, after = size / 2;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t i = 0; i < inner; ++i) {
        double sum = 0;
        for (int64_t k = c - before; k <= c + after; ++k) {
          if (k < 0 || k >= channels) continue;
          double v = x[(o * channels + k) * inner + i];
          sum += v * v;
        }
        int64_t at = (o * channels + c) * inner + i;
        y[at] = (float)((double)x[at] / pow(bias + alpha / (double)size * sum, beta));
      }
}

void hgr_ref_instance_norm(const float* x, const float* gamma, const float* beta, float* y, int64_t batch,
                           int64_t before, int64_t channels, int64_t after, double epsilon, bool center, bool scale) {
  int64_t len = before * after;
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t c = 0; c < channels; ++c) {
      double sum = 0, sq = 0;
      for (int64_t p = 0; p < before; ++p)
        for (int64_t q = 0; q < after; ++q) sum += x[((n * before + p) * channels + c) * after + q];
      double mean = sum / (double)len;
      for (int64_t p = 0; p < before; ++p)
        for (int64_t q = 0; q < after; ++q) {
          double d = x[((n * before + p) * channels + c) * after + q] - mean;
          sq += d * d;
        }
      double inv_std = 1.0 / sqrt(sq / (double)len + epsilon);
      for (int64_t p = 0; p < before; ++p)
        for (int64_t q = 0; q < after; ++q) {
          int64_t at = ((n * before + p) * channels + c) * after + q;
          double v = (x[at] - mean) * inv_std;
          if (scale) v *= gamma[c];
          if (center) v += beta[c];
          y[at] = (float)v;
        }
    }
}
