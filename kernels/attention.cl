/* attention (runtime/ops/ops_attention.c): softmax(scale * Q Kᵀ + mask) V for each
 * of G matrices, the scores never stored: one work-item per query row keeps its
 * row of Q (scaled) and of the output in private memory and walks the keys in
 * blocks of HGR_ATTN_BLOCK, rescaling its running sum and output row once per block
 * by exp(old max - new max) (the online softmax of flash attention).
 *
 *   hgr_attention_<k|kt>_<D>(__global const float* q, __global const float* k,
 *       __global const float* v, __global const float* mask, __global float* out,
 *       int m_rows, int n_keys, int dk, int dv, int heads, float scale, int has_mask,
 *       int ms_batch, int ms_head, int ms_row, int ms_col, int causal, HGR_OUT_LAYOUT_PARAMS)
 *
 *   q [G, M, dk], k [G, N, dk] (_k) or [G, dk, N] (_kt), v [G, N, dv], out [G, M, dv]
 *   stored through the output layout of out_layout.h (each row of dv floats one run);
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
#include "out_layout.h"

#define HGR_ATTN_BLOCK 16
#define HGR_ATTN_ANY 128

/* K's element d of key n: K [N, dk] or Kᵀ [dk, N] */
#define HGR_ATTN_K_k(kg, n, d, DK, N) kg[(size_t)(n) * (DK) + (d)]
#define HGR_ATTN_K_kt(kg, n, d, DK, N) kg[(size_t)(d) * (N) + (n)]

/* The attention kernels' arguments (above). */
#define HGR_ATTN_ARGS                                                                                      \
  __global const float* q, __global const float* k, __global const float* v, __global const float* mask, \
      __global float* out, int m_rows, int n_keys, int dk, int dv, int heads, float scale, int has_mask, \
      int ms_batch, int ms_head, int ms_row, int ms_col, int causal, HGR_OUT_LAYOUT_PARAMS
/* The start the vectors' and private kernels share: a work-item's ROWS query rows
 * from row0 of matrix g (none past m_rows), b and h (the mask's batch and head), the
 * keys kg and values vg of D floats each, the lane numbers. */
#define HGR_ATTN_ROW_BLOCK(D, ROWS)                                                  \
  if (m_rows == 0) return; /* an empty output */                                     \
  int row0 = (int)get_global_id(0) * (ROWS);                                         \
  int g = (int)get_global_id(1);                                                     \
  if (row0 >= m_rows) return;                                                        \
  int b = g / heads;                                                                 \
  int h = g - b * heads;                                                             \
  __global const float* kg = k + (size_t)g * n_keys * (D);                           \
  __global const float* vg = v + (size_t)g * n_keys * (D);                           \
  const int16 lane = (int16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);

#define HGR_ATTENTION(LAYOUT, NAME, DK, DV, CAP_K, CAP_V)                                                   \
  HGR_KERNEL_IF(hgr_attention_##LAYOUT##_##NAME,                                                            \
  __kernel void hgr_attention_##LAYOUT##_##NAME(HGR_ATTN_ARGS) {                                                \
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
    __global float* o =                                                                                         \
        out + hgr_out_run((uint)(g * m_rows + row) * (uint)(DV), HGR_OUT_LAYOUT_ARGS);                          \
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

/* ---- vectors across the keys: hgr_attention_vec_<k|kt>_<D> ------------------------------
 * The same arguments and result, for PoCL's CPU drivers, which run a work-group's
 * work-items as a loop and vectorize what a work-item writes in vectors: one
 * work-item takes ROWS query rows (8 for D up to 32, 4 above: the rows' scores and
 * output rows stay in registers), the scores of a row for a block of 16
 * keys are one float16 (sums over d of a query's scalar times the block's keys at
 * d), and a row of the output is D / 16 float16 (sums over the block's keys of a
 * probability times the value row); each block of keys, loaded once, feeds every
 * row. Global size (ceil(M / ROWS), G); D is
 * dk = dv, 16, 32, 64 or 128. */

/* Keys n0..n0+15 at dimension d (a key past the last reads the last key). */
static inline float16 hgr_attn_keys_k(__global const float* kg, int n0, int d, int dk, int n_keys) {
  if (n0 + 16 <= n_keys) {
    __global const float* p = kg + (size_t)n0 * dk + d;
    return (float16)(p[0], p[dk], p[2 * dk], p[3 * dk], p[4 * dk], p[5 * dk], p[6 * dk], p[7 * dk], p[8 * dk],
                     p[9 * dk], p[10 * dk], p[11 * dk], p[12 * dk], p[13 * dk], p[14 * dk], p[15 * dk]);
  }
  float t[16];
  for (int j = 0; j < 16; ++j) t[j] = kg[(size_t)min(n0 + j, n_keys - 1) * dk + d];
  return vload16(0, t);
}

static inline float16 hgr_attn_keys_kt(__global const float* kg, int n0, int d, int dk, int n_keys) {
  (void)dk;
  if (n0 + 16 <= n_keys) return vload16(0, kg + (size_t)d * n_keys + n0);
  float t[16];
  for (int j = 0; j < 16; ++j) t[j] = kg[(size_t)d * n_keys + min(n0 + j, n_keys - 1)];
  return vload16(0, t);
}

/* The mask's values for keys n0..n0+15 of a row (past the last: the last's). */
static inline float16 hgr_attn_mask16(__global const float* mrow, int n0, int ms_col, int n_keys) {
  if (ms_col == 1 && n0 + 16 <= n_keys) return vload16(0, mrow + n0);
  float t[16];
  for (int j = 0; j < 16; ++j) t[j] = mrow[(size_t)min(n0 + j, n_keys - 1) * ms_col];
  return vload16(0, t);
}

/* The max and the sum of a float16's lanes by halving shuffles: every lane ends
 * with the result. (Oclgrind 21.10 takes the .lo/.hi halves of a float16 for
 * uninitialized, so no halves; the shuffles ran the 512-position block 30 % faster
 * than the lanes through a private array.) */
static inline float hgr_attn_max16(float16 v) {
  v = fmax(v, shuffle(v, (uint16)(8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7)));
  v = fmax(v, shuffle(v, (uint16)(4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11)));
  v = fmax(v, shuffle(v, (uint16)(2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13)));
  v = fmax(v, shuffle(v, (uint16)(1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14)));
  return v.s0;
}

static inline float hgr_attn_sum16(float16 v) {
  v += shuffle(v, (uint16)(8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7));
  v += shuffle(v, (uint16)(4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11));
  v += shuffle(v, (uint16)(2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13));
  v += shuffle(v, (uint16)(1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14));
  return v.s0;
}

#define HGR_ATTENTION_VEC(LAYOUT, D, ROWS)                                                                      \
  HGR_KERNEL_IF(hgr_attention_vec_##LAYOUT##_##D,                                                           \
  __kernel void hgr_attention_vec_##LAYOUT##_##D(HGR_ATTN_ARGS) {                                            \
    HGR_ATTN_ROW_BLOCK(D, ROWS)                                                                                 \
    float qv[(ROWS)][D];                                                                             \
    float16 acc[(ROWS)][(D) / 16];                                                                   \
    float top[(ROWS)], sum[(ROWS)];                                                           \
    int mine[(ROWS)];                                                                                \
    int shift = n_keys - m_rows;                                                                            \
    for (int r = 0; r < (ROWS); ++r) {                                                               \
      int rr = min(row0 + r, m_rows - 1);                                                                   \
      __global const float* qg = q + ((size_t)g * m_rows + rr) * (D);                                       \
      for (int d = 0; d < (D); ++d) qv[r][d] = qg[d] * scale;                                               \
      for (int c = 0; c < (D) / 16; ++c) acc[r][c] = (float16)(0.0f);                                      \
      top[r] = -INFINITY;                                                                                   \
      sum[r] = 0.0f;                                                                                        \
      mine[r] = causal ? min(n_keys, rr + shift + 1) : n_keys;                                              \
    }                                                                                                       \
    int end = mine[(ROWS) - 1];                                                                      \
    for (int n0 = 0; n0 < end; n0 += 16) {                                                                  \
      float16 s[(ROWS)];                                                                             \
      for (int r = 0; r < (ROWS); ++r) s[r] = (float16)(0.0f);                                      \
      for (int d = 0; d < (D); ++d) {                                                                       \
        float16 keys = hgr_attn_keys_##LAYOUT(kg, n0, d, D, n_keys);                                        \
        for (int r = 0; r < (ROWS); ++r) s[r] = fma((float16)(qv[r][d]), keys, s[r]);              \
      }                                                                                                     \
      float p[(ROWS)][16];                                                                           \
      for (int r = 0; r < (ROWS); ++r) {                                                             \
        int rr = min(row0 + r, m_rows - 1);                                                                 \
        if (has_mask)                                                                                       \
          s[r] += hgr_attn_mask16(mask + (size_t)(b * ms_batch + h * ms_head + rr * ms_row), n0, ms_col,   \
                                  n_keys);                                                                  \
        s[r] = select((float16)(-INFINITY), s[r], lane + n0 < mine[r]);                                     \
        float new_top = fmax(top[r], hgr_attn_max16(s[r]));                                                 \
        float base = new_top == -INFINITY ? 0.0f : new_top;                                                 \
        float keep = exp(top[r] - base);                                                                    \
        float16 e = exp(s[r] - (float16)(base));                                                            \
        sum[r] = sum[r] * keep + hgr_attn_sum16(e);                                                         \
        for (int c = 0; c < (D) / 16; ++c) acc[r][c] *= keep;                                               \
        vstore16(e, 0, p[r]);                                                                               \
        top[r] = new_top;                                                                                   \
      }                                                                                                     \
      int last = min(16, n_keys - n0);                                                                      \
      for (int j = 0; j < last; ++j) {                                                                      \
        __global const float* vn = vg + (size_t)(n0 + j) * (D);                                             \
        for (int c = 0; c < (D) / 16; ++c) {                                                                \
          float16 vals = vload16(c, vn);                                                                    \
          for (int r = 0; r < (ROWS); ++r) acc[r][c] = fma((float16)(p[r][j]), vals, acc[r][c]);    \
        }                                                                                                   \
      }                                                                                                     \
    }                                                                                                       \
    for (int r = 0; r < (ROWS) && row0 + r < m_rows; ++r) {                                          \
      float inv = 1.0f / sum[r];                                                                            \
      __global float* o =                                                                                       \
          out + hgr_out_run((uint)(g * m_rows + row0 + r) * (D), HGR_OUT_LAYOUT_ARGS);                          \
      for (int c = 0; c < (D) / 16; ++c) vstore16(acc[r][c] * inv, c, o);                                   \
    }                                                                                                       \
  })

#define HGR_ATTENTION_VEC_SIZES(LAYOUT) \
  HGR_ATTENTION_VEC(LAYOUT, 16, 8)      \
  HGR_ATTENTION_VEC(LAYOUT, 32, 8)      \
  HGR_ATTENTION_VEC(LAYOUT, 64, 4)      \
  HGR_ATTENTION_VEC(LAYOUT, 128, 4)

HGR_ATTENTION_VEC_SIZES(k)
HGR_ATTENTION_VEC_SIZES(kt)

/* ---- the scores in private memory: hgr_attention_priv_<k|kt>_<D> -----------------------------
 * The same arguments and result, for the same drivers as the vectors above, where
 * N is at most HGR_ATTN_PRIV_KEYS: one work-item takes ROWS query rows (8 for D up to
 * 32, 4 for 64, 2 for 128: its output rows stay in 16 float16 registers) and keeps
 * their whole rows of scores in private memory (16 KiB at most, which stays in the
 * core's first-level cache), so the softmax is the plain one, no running rescale:
 *   1. the scores of the rows, 32 keys at a time: a key's 32 dimensions feed every row
 *      (two float16 per row, as the GEMM's direct kernels);
 *   2. per row, the mask, the causal cut, the max, exp and the sum along the row;
 *   3. the output rows: each key's value row, loaded once, times every row's
 *      probability.
 * Global size (ceil(M / ROWS), G), a work-group of 1. */
#define HGR_ATTN_PRIV_KEYS 512

#define HGR_ATTENTION_PRIV(LAYOUT, D, ROWS)                                                                     \
  HGR_KERNEL_IF(hgr_attention_priv_##LAYOUT##_##D,                                                              \
  __kernel void hgr_attention_priv_##LAYOUT##_##D(HGR_ATTN_ARGS) {                                              \
    HGR_ATTN_ROW_BLOCK(D, ROWS)                                                                                 \
    float16 s[(ROWS)][HGR_ATTN_PRIV_KEYS / 16]; /* whole vectors: one store each */                             \
    float qv[(ROWS)][D];                                                                                        \
    int mine[(ROWS)];                                                                                           \
    int shift = n_keys - m_rows;                                                                                \
    for (int r = 0; r < (ROWS); ++r) {                                                                          \
      int rr = min(row0 + r, m_rows - 1);                                                                       \
      __global const float* qg = q + ((size_t)g * m_rows + rr) * (D);                                           \
      for (int d = 0; d < (D); ++d) qv[r][d] = qg[d] * scale;                                                   \
      mine[r] = causal ? min(n_keys, rr + shift + 1) : n_keys;                                                  \
    }                                                                                                           \
    int end = mine[(ROWS) - 1]; /* the rows' keys: the last row takes the most */                               \
    for (int n0 = 0; n0 < end; n0 += 32) {                                                                      \
      float16 lo[(ROWS)], hi[(ROWS)];                                                                           \
      _Pragma("unroll") for (int r = 0; r < (ROWS); ++r) lo[r] = hi[r] = (float16)(0.0f);                       \
      for (int d = 0; d < (D); ++d) {                                                                           \
        float16 keys_lo = hgr_attn_keys_##LAYOUT(kg, n0, d, D, n_keys);                                         \
        float16 keys_hi = hgr_attn_keys_##LAYOUT(kg, n0 + 16, d, D, n_keys);                                    \
        _Pragma("unroll") for (int r = 0; r < (ROWS); ++r) {                                                    \
          lo[r] = fma((float16)(qv[r][d]), keys_lo, lo[r]);                                                     \
          hi[r] = fma((float16)(qv[r][d]), keys_hi, hi[r]);                                                     \
        }                                                                                                       \
      }                                                                                                         \
      _Pragma("unroll") for (int r = 0; r < (ROWS); ++r) {                                                      \
        s[r][n0 / 16] = lo[r];                                                                                  \
        s[r][n0 / 16 + 1] = hi[r];                                                                              \
      }                                                                                                         \
    }                                                                                                           \
    float inv[(ROWS)];                                                                                          \
    for (int r = 0; r < (ROWS); ++r) {                                                                          \
      int rr = min(row0 + r, m_rows - 1);                                                                       \
      __global const float* mrow = mask + (size_t)(b * ms_batch + h * ms_head + rr * ms_row);                   \
      float16 top = (float16)(-INFINITY);                                                                       \
      for (int n0 = 0; n0 < end; n0 += 16) {                                                                    \
        float16 x = s[r][n0 / 16];                                                                              \
        if (has_mask) x += hgr_attn_mask16(mrow, n0, ms_col, n_keys);                                           \
        x = select((float16)(-INFINITY), x, lane + n0 < mine[r]);                                               \
        top = fmax(top, x);                                                                                     \
        s[r][n0 / 16] = x;                                                                                      \
      }                                                                                                         \
      float base = hgr_attn_max16(top);                                                                         \
      base = base == -INFINITY ? 0.0f : base; /* no key: 0 / 0 below, as softmax of such a row */               \
      float16 sum = (float16)(0.0f);                                                                            \
      for (int n0 = 0; n0 < end; n0 += 16) {                                                                    \
        float16 e = exp(s[r][n0 / 16] - (float16)(base));                                                       \
        sum += e;                                                                                               \
        s[r][n0 / 16] = e;                                                                                      \
      }                                                                                                         \
      inv[r] = 1.0f / hgr_attn_sum16(sum);                                                                      \
    }                                                                                                           \
    float16 acc[(ROWS)][(D) / 16];                                                                              \
    _Pragma("unroll") for (int r = 0; r < (ROWS); ++r)                                                          \
      _Pragma("unroll") for (int c = 0; c < (D) / 16; ++c) acc[r][c] = (float16)(0.0f);                         \
    for (int j = 0; j < end; ++j) {                                                                             \
      __global const float* vn = vg + (size_t)j * (D);                                                          \
      _Pragma("unroll") for (int c = 0; c < (D) / 16; ++c) {                                                    \
        float16 vals = vload16(c, vn);                                                                          \
        _Pragma("unroll") for (int r = 0; r < (ROWS); ++r)                                                  \
          acc[r][c] = fma((float16)(((const float*)s[r])[j]), vals, acc[r][c]);                               \
      }                                                                                                         \
    }                                                                                                           \
    _Pragma("unroll") for (int r = 0; r < (ROWS); ++r) if (row0 + r < m_rows) {                                 \
      __global float* o =                                                                                       \
          out + hgr_out_run((uint)(g * m_rows + row0 + r) * (D), HGR_OUT_LAYOUT_ARGS);                          \
      _Pragma("unroll") for (int c = 0; c < (D) / 16; ++c) vstore16(acc[r][c] * inv[r], c, o);                  \
    }                                                                                                           \
  })

#define HGR_ATTENTION_PRIV_SIZES(LAYOUT) \
  HGR_ATTENTION_PRIV(LAYOUT, 16, 8)      \
  HGR_ATTENTION_PRIV(LAYOUT, 32, 8)      \
  HGR_ATTENTION_PRIV(LAYOUT, 64, 4)      \
  HGR_ATTENTION_PRIV(LAYOUT, 128, 2)

HGR_ATTENTION_PRIV_SIZES(k)
HGR_ATTENTION_PRIV_SIZES(kt)

/* ---- the keys as columns: hgr_attention_keys_t -------------------------------------------------
 * Kᵀ [G, dk, N] from K [G, N, dk] (keys as rows) in the node's scratch, for the vectors'
 * and private kernels, whose _kt forms load 16 keys of a dimension as one vector where
 * _k gathers them from 16 rows: every block of query rows reads all the keys again,
 * so one copy ahead saves a gather per key, dimension and block of rows.
 *
 *   hgr_attention_keys_t(__global const float* k, __global float* kt, int n_keys,
 *       int dk, int keys)
 *
 * One work-item per key of all G matrices (keys = G * N), its dk values in turn; the
 * work-items of a group write consecutive keys of each dimension side by side. */
HGR_KERNEL_IF(hgr_attention_keys_t,
__kernel void hgr_attention_keys_t(__global const float* k, __global float* kt, int n_keys, int dk, int keys) {
  int key = (int)get_global_id(0);
  if (key >= keys) return;
  int g = key / n_keys;
  int n = key - g * n_keys;
  __global const float* row = k + (size_t)key * dk;
  __global float* column = kt + (size_t)g * dk * n_keys + n;
  for (int d = 0; d < dk; ++d) column[(size_t)d * n_keys] = row[d];
})

/* ---- staged: the scores through the node's scratch -----------------------------------------
 * The op's third candidate computes S = Q Kᵀ into the node's scratch [G, M, N] with
 * the GEMM (kernels/linalg.cl), then this kernel turns each row of S in place into
 * softmax(scale * S + mask) (keys a causal row does not take become 0), then P V with
 * the GEMM again. On PoCL the GEMM's register blocking outruns the fused kernels' key
 * blocks, and the softmax below runs in float16 vectors along the row.
 *
 *   hgr_attention_softmax(__global float* scores, __global const float* mask,
 *       int m_rows, int n_keys, int heads, float scale, int has_mask, int ms_batch,
 *       int ms_head, int ms_row, int ms_col, int causal, int rows)
 *
 * One work-item per row of S (rows = G * M), its matrix g = row / M; the mask's
 * strides and causal as above. */

/* Element n0 + j of a row for j < 16, those past n_keys read as the last. */
static inline float16 hgr_attn_row16(__global const float* row, int n0, int stride, int n_keys) {
  if (stride == 1 && n0 + 16 <= n_keys) return vload16(0, row + n0);
  float t[16];
  for (int j = 0; j < 16; ++j) t[j] = row[(size_t)min(n0 + j, n_keys - 1) * stride];
  return vload16(0, t);
}

/* Stores the lanes of x that lie before n_keys at row + n0. */
static inline void hgr_attn_store16(float16 x, __global float* row, int n0, int n_keys) {
  if (n0 + 16 <= n_keys) {
    vstore16(x, 0, row + n0);
    return;
  }
  float t[16];
  vstore16(x, 0, t);
  for (int j = 0; n0 + j < n_keys; ++j) row[n0 + j] = t[j];
}

HGR_KERNEL_IF(hgr_attention_softmax,
__kernel void hgr_attention_softmax(__global float* scores, __global const float* mask, int m_rows, int n_keys,
                                    int heads, float scale, int has_mask, int ms_batch, int ms_head, int ms_row,
                                    int ms_col, int causal, int rows) {
  int row = (int)get_global_id(0);
  if (row >= rows || n_keys == 0) return;
  int g = row / m_rows;
  int m = row - g * m_rows;
  int b = g / heads;
  int h = g - b * heads;
  __global float* s = scores + (size_t)row * n_keys;
  __global const float* mrow = mask + (size_t)(b * ms_batch + h * ms_head + m * ms_row);
  int mine = causal ? min(n_keys, m + n_keys - m_rows + 1) : n_keys;
  const int16 lane = (int16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  float16 top = (float16)(-INFINITY);
  for (int n0 = 0; n0 < n_keys; n0 += 16) {
    float16 x = hgr_attn_row16(s, n0, 1, n_keys) * scale;
    if (has_mask) x += hgr_attn_row16(mrow, n0, ms_col, n_keys);
    x = select((float16)(-INFINITY), x, lane + n0 < mine);
    top = fmax(top, x);
    hgr_attn_store16(x, s, n0, n_keys);
  }
  float base = hgr_attn_max16(top);
  base = base == -INFINITY ? 0.0f : base;
  float16 sum = (float16)(0.0f);
  for (int n0 = 0; n0 < n_keys; n0 += 16) {
    float16 e = exp(hgr_attn_row16(s, n0, 1, n_keys) - (float16)(base));
    sum += select((float16)(0.0f), e, lane + n0 < n_keys);
    hgr_attn_store16(e, s, n0, n_keys);
  }
  float inv = 1.0f / hgr_attn_sum16(sum);
  for (int n0 = 0; n0 < n_keys; n0 += 16) hgr_attn_store16(hgr_attn_row16(s, n0, 1, n_keys) * inv, s, n0, n_keys);
})
