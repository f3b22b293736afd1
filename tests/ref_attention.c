/* The attention reference (ref_attention.h): the scores of each row first, then
 * the softmax over them, then the weighted sum of v's rows: the textbook order,
 * not the kernel's online one. */
#include "ref_attention.h"

#include <math.h>
#include <stdlib.h>

void hgr_ref_attention(const float* q, const float* k, const float* v, const float* mask, const int64_t ms[4],
                       float* out, int64_t g_count, int64_t m_rows, int64_t n_keys, int64_t dk, int64_t dv,
                       int64_t heads, double scale, bool transpose_k, bool causal) {
  double* p = malloc(((size_t)n_keys + 1) * sizeof(double));
  if (!p) abort();
  for (int64_t g = 0; g < g_count; ++g) {
    int64_t b = g / heads, h = g % heads;
    const float* qg = q + g * m_rows * dk;
    const float* kg = k + g * n_keys * dk;
    const float* vg = v + g * n_keys * dv;
    for (int64_t m = 0; m < m_rows; ++m) {
      double top = -INFINITY;
      for (int64_t n = 0; n < n_keys; ++n) {
        double s = 0;
        for (int64_t d = 0; d < dk; ++d)
          s += (double)qg[m * dk + d] * (transpose_k ? kg[n * dk + d] : kg[d * n_keys + n]);
        s *= scale;
        if (mask) s += mask[b * ms[0] + h * ms[1] + m * ms[2] + n * ms[3]];
        if (causal && n > m + n_keys - m_rows) s = -INFINITY;
        p[n] = s;
        if (s > top) top = s;
      }
      double sum = 0;
      for (int64_t n = 0; n < n_keys; ++n) sum += p[n] = exp(p[n] - top);
      for (int64_t d = 0; d < dv; ++d) {
        double acc = 0;
        for (int64_t n = 0; n < n_keys; ++n) acc += p[n] * vg[n * dv + d];
        out[(g * m_rows + m) * dv + d] = (float)(acc / sum);
      }
    }
  }
  free(p);
}
