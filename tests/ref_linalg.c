#include "ref_linalg.h"

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
