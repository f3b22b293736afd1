/* attention (runtime/ops/ops_attention.c): softmax(scale * Q Kᵀ + mask) V for each
 * of G matrices, the scores never stored: one work-item per query row keeps its
 * row of Q (scaled) and of the output in private memory and walks the keys in
 * blocks of HGR_ATTN_BLOCK, rescaling its running sum and output row once per block
 * by exp(old max - new max) (the online softmax of flash attention).
 *
 *   hgr_attention_<k|kt>_<D>(__global const float* q, __global const float* k,
 *       __global const float* v, __global const float* mask, __global float* out,
 *       int m_rows, int n_keys, int dk, int dv, int heads, float scale, int has_mask,
 *       int ms_batch, int ms_head, int ms_row, int ms_col, int causal)
 *
 *   q [G, M, dk], k [G, N, dk] (_k) or [G, dk, N] (_kt), v [G, N, dv], out [G, M, dv];
 *   mask (read only when has_mask) is added to the scores of matrix g = b * heads + h
 *   at (row, col) from mask[b * ms_batch + h * ms_head + row * ms_row + col *
 *   ms_col] (a stride 0 broadcasts). causal: key col of row `row` takes part only
 *   where col <= row + N - M (the queries are the last M of the N positions).
 *   <D> is the head size both dk and dv equal, unrolled (16, 32, 64, 128), or `any`:
 *   dk and dv up to HGR_ATTN_ANY (loops over the arguments).
 *
 * With no keys (N 0) every output is 0 / 0; with no rows (m_rows 0) the kernel
 * returns at once.
 * Global size (M rounded up to the work-group, G); a work-item past M computes row
 * M - 1 and stores nothing, so that a work-group's work-items stay uniform. The
 * keys a work-group walks end at the last key its last row takes (causal), so the
 * loop bound is uniform too; later keys of earlier rows are masked to -inf.
 * A row whose scores are all -inf gives 0 / 0 (NaN), as softmax of such a row.
 */

#include "select.h"

#define HGR_ATTN_BLOCK 16
#define HGR_ATTN_ANY 128

/* K's element d of key n: K [N, dk] or Kᵀ [dk, N] */
#define HGR_ATTN_K_k(kg, n, d, DK, N) kg[(size_t)(n) * (DK) + (d)]
#define HGR_ATTN_K_kt(kg, n, d, DK, N) kg[(size_t)(d) * (N) + (n)]

#define HGR_ATTENTION(LAYOUT, NAME, DK, DV, CAP_K, CAP_V)                                                   \
  HGR_KERNEL_IF(hgr_attention_##LAYOUT##_##NAME,                                                            \
  __kernel void hgr_attention_##LAYOUT##_##NAME(                                                            \
      __global const float* q, __global const float* k, __global const float* v, __global const float* mask, \
      __global float* out, int m_rows, int n_keys, int dk, int dv, int heads, float scale, int has_mask,    \
      int ms_batch, int ms_head, int ms_row, int ms_col, int causal) {                                      \
    if (m_rows == 0) return; /* an empty output */                                                          \
    int row = (int)get_global_id(0);                                                                        \
    int g = (int)get_global_id(1);                                                                          \
    int r = min(row, m_rows - 1);                                                                           \
    int b = g / heads;                                                                                      \
    int h = g - b * heads;                                                                                  \
    __global const float* qg = q + ((size_t)g * m_rows + r) * (DK);                                          \
    __global const float* kg = k + (size_t)g * n_keys * (DK);                                               \
    __global const float* vg = v + (size_t)g * n_keys * (DV);                                               \
    __global const float* mrow = mask + (size_t)(b * ms_batch + h * ms_head + r * ms_row);                  \
    float qv[CAP_K], acc[CAP_V];                                                                            \
    for (int d = 0; d < (DK); ++d) qv[d] = qg[d] * scale;                                                   \
    for (int d = 0; d < (DV); ++d) acc[d] = 0.0f;                                                           \
    int shift = n_keys - m_rows;                                                                            \
    int last_row = min(m_rows - 1, (int)((get_group_id(0) + 1) * get_local_size(0)) - 1);                  \
    int end = causal ? min(n_keys, last_row + shift + 1) : n_keys; /* uniform in the work-group */         \
    int mine = causal ? min(n_keys, r + shift + 1) : n_keys;       /* this row's keys */                   \
    float top = -INFINITY, sum = 0.0f;                                                                      \
    for (int n0 = 0; n0 < end; n0 += HGR_ATTN_BLOCK) {                                                      \
      float s[HGR_ATTN_BLOCK];                                                                              \
      float block_top = -INFINITY;                                                                          \
      for (int j = 0; j < HGR_ATTN_BLOCK; ++j) {                                                            \
        int n = min(n0 + j, n_keys - 1);                                                                    \
        float x = 0.0f;                                                                                     \
        for (int d = 0; d < (DK); ++d) x = fma(qv[d], HGR_ATTN_K_##LAYOUT(kg, n, d, DK, n_keys), x);        \
        if (has_mask) x += mrow[(size_t)n * ms_col];                                                        \
        x = n0 + j < mine ? x : -INFINITY;                                                                  \
        s[j] = x;                                                                                           \
        block_top = fmax(block_top, x);                                                                     \
      }                                                                                                     \
      float new_top = fmax(top, block_top);                                                                 \
      float base = new_top == -INFINITY ? 0.0f : new_top; /* nothing yet: keep zeros, not NaN */           \
      float keep = exp(top - base);                                                                         \
      sum *= keep;                                                                                          \
      for (int d = 0; d < (DV); ++d) acc[d] *= keep;                                                        \
      for (int j = 0; j < HGR_ATTN_BLOCK; ++j) {                                                            \
        float p = exp(s[j] - base);                                                                         \
        sum += p;                                                                                           \
        __global const float* vn = vg + (size_t)min(n0 + j, n_keys - 1) * (DV);                             \
        for (int d = 0; d < (DV); ++d) acc[d] = fma(p, vn[d], acc[d]);                                      \
      }                                                                                                     \
      top = new_top;                                                                                        \
    }                                                                                                       \
    if (row >= m_rows) return;                                                                              \
    float inv = 1.0f / sum;                                                                                 \
    __global float* o = out + ((size_t)g * m_rows + row) * (DV);                                            \
    for (int d = 0; d < (DV); ++d) o[d] = acc[d] * inv;                                                     \
  })

#define HGR_ATTENTION_SIZES(LAYOUT)                       \
  HGR_ATTENTION(LAYOUT, 16, 16, 16, 16, 16)               \
  HGR_ATTENTION(LAYOUT, 32, 32, 32, 32, 32)               \
  HGR_ATTENTION(LAYOUT, 64, 64, 64, 64, 64)               \
  HGR_ATTENTION(LAYOUT, 128, 128, 128, 128, 128)          \
  HGR_ATTENTION(LAYOUT, any, dk, dv, HGR_ATTN_ANY, HGR_ATTN_ANY)

HGR_ATTENTION_SIZES(k)
HGR_ATTENTION_SIZES(kt)
