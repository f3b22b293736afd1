#include "ref_quantize.h"

#include <math.h>

#include "hgr/tensor.h"

/* The parameters' element for element i of x shaped shape (ndim dims). */
static int64_t param_index(uint64_t i, const int64_t* shape, int32_t ndim, const ref_quant_params_t* p) {
  int64_t count = 1;
  for (int32_t d = 0; d < p->ndim; ++d) count *= p->shape[d];
  if (count == 1 && p->ndim <= 1 && !p->block) return 0;
  int64_t coords[HGR_MAX_DIMS];
  for (int32_t d = ndim - 1; d >= 0; --d) {
    coords[d] = (int64_t)(i % (uint64_t)shape[d]);
    i /= (uint64_t)shape[d];
  }
  if (!p->block) return coords[p->axis];
  int64_t index = 0;
  for (int32_t d = 0; d < ndim; ++d) index = index * p->shape[d] + (d == p->axis ? coords[d] / p->block : coords[d]);
  return index;
}

static uint64_t element_count(const int64_t* shape, int32_t ndim) {
  uint64_t count = 1;
  for (int32_t d = 0; d < ndim; ++d) count *= (uint64_t)shape[d];
  return count;
}

void ref_dequantize(const int64_t* x, const int64_t* shape, int32_t ndim, const ref_quant_params_t* p, float* y) {
  uint64_t count = element_count(shape, ndim);
  for (uint64_t i = 0; i < count; ++i) {
    int64_t k = param_index(i, shape, ndim, p);
    y[i] = (float)(x[i] - p->zero[k]) * p->scale[k];
  }
}

void ref_quantize(const float* x, const int64_t* shape, int32_t ndim, const ref_quant_params_t* p, int64_t lowest,
                  int64_t highest, int64_t* y) {
  uint64_t count = element_count(shape, ndim);
  for (uint64_t i = 0; i < count; ++i) {
    int64_t k = param_index(i, shape, ndim, p);
    double q = (double)nearbyintf(x[i] / p->scale[k]) + (double)p->zero[k];
    y[i] = q < (double)lowest ? lowest : q > (double)highest ? highest : (int64_t)q;
  }
}

void ref_matmul_integer(const int64_t* a, const int64_t* b, int64_t a_zero, const int64_t* b_zero, int32_t zb_step,
                        int64_t m, int64_t n, int64_t k, int64_t* out) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      int64_t sum = 0;
      for (int64_t l = 0; l < k; ++l) sum += (a[i * k + l] - a_zero) * (b[j * k + l] - b_zero[j * zb_step]);
      out[i * n + j] = sum;
    }
}

void ref_dequantize_matmul(const float* a, const int64_t* b, const int64_t* b_zero, int32_t zb_step,
                           const float* scale, int32_t scale_step, const float* bias, int64_t m, int64_t n, int64_t k,
                           float* out) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0.0;
      for (int64_t l = 0; l < k; ++l) sum += (double)a[i * k + l] * (double)(b[l * n + j] - b_zero[j * zb_step]);
      out[i * n + j] = (float)(sum * (double)scale[j * scale_step] + (bias ? (double)bias[j] : 0.0));
    }
}

void ref_quantize_params(const float* x, uint64_t count, float* scale, int64_t* zero) {
  float low = 0.0f, high = 0.0f;
  for (uint64_t i = 0; i < count; ++i) {
    low = fminf(low, x[i]);
    high = fmaxf(high, x[i]);
  }
  *scale = high == low ? 1.0f : (high - low) / 255.0f; /* all zeros: ONNX Runtime's 1 */
  float z = nearbyintf(-low / *scale);
  *zero = z >= 0.0f ? (z <= 255.0f ? (int64_t)z : 255) : 0;
}
