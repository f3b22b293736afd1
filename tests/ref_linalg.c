#include "ref_linalg.h"

#include <math.h>
#include <string.h>

void hgr_ref_dense(const float* x, const float* w, const float* bias, float* y, int64_t rows, int64_t in,
                   int64_t units) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t u = 0; u < units; ++u) {
      double sum = bias ? (double)bias[u] : 0.0;
      for (int64_t l = 0; l < in; ++l) sum += (double)x[r * in + l] * (double)w[u * in + l];
      y[r * units + u] = (float)sum;
    }
}

void hgr_ref_batch_matmul(const float* a, const float* b, float* c, int64_t batch_a, int64_t batch_b, int64_t m,
                          int64_t n, int64_t k, bool transpose_a, bool transpose_b) {
  int64_t batch = batch_a > batch_b ? batch_a : batch_b;
  for (int64_t p = 0; p < batch; ++p) {
    const float* ap = a + (batch_a == 1 ? 0 : p) * m * k;
    const float* bp = b + (batch_b == 1 ? 0 : p) * k * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0.0;
        for (int64_t l = 0; l < k; ++l) {
          double x = transpose_a ? ap[l * m + i] : ap[i * k + l];
          double y = transpose_b ? bp[j * k + l] : bp[l * n + j];
          sum += x * y;
        }
        c[(p * m + i) * n + j] = (float)sum;
      }
  }
}

void hgr_ref_gemm_epilogue(float* c, uint64_t count, int64_t n, const float* bias, const char* activation,
                           double alpha, double a_min, double a_max) {
  for (uint64_t e = 0; e < count; ++e) {
    double v = (double)c[e] + (bias ? (double)bias[e % (uint64_t)n] : 0.0);
    if (!strcmp(activation, "relu")) v = v > 0 ? v : 0;
    else if (!strcmp(activation, "leaky_relu")) v = v < 0 ? v * alpha : v;
    else if (!strcmp(activation, "clip")) v = fmin(fmax(v, a_min), a_max);
    else if (!strcmp(activation, "gelu")) v = 0.5 * v * (1.0 + erf(v / sqrt(2.0)));
    else if (!strcmp(activation, "gelu_tanh"))
      v = 0.5 * v * (1.0 + tanh(sqrt(2.0 / 3.14159265358979323846) * (v + 0.044715 * v * v * v)));
    else if (!strcmp(activation, "sigmoid")) v = 1.0 / (1.0 + exp(-v));
    else if (!strcmp(activation, "silu")) v = v / (1.0 + exp(-v));
    else if (!strcmp(activation, "hard_swish")) v = v * fmin(fmax(v / 6.0 + 0.5, 0.0), 1.0);
    else if (!strcmp(activation, "leaky_relu_clip")) v = fmin(fmax(v < 0 ? v * alpha : v, a_min), a_max);
    c[e] = (float)v;
  }
}
