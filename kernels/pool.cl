/* 2-D pooling, float32, NCHW (runtime/ops/ops_pool.c plans them), with TVM topi's
 * semantics: padding is -FLT_MAX for max pooling and 0 for average pooling; with
 * ceil_mode the output is rounded up by extra padding at the bottom and right that
 * average pooling never counts.
 *
 * hgr_max_pool2d(__global const float* x, __global float* y, __global const int* meta)
 * hgr_avg_pool2d(__global const float* x, __global float* y, __global const int* meta)
 *   Any window, stride, dilation and padding. One work-item per POOL_CHUNK columns
 *   of an output row, in a loop (those whose window lies inside the row without
 *   column checks); NDRange 1-D over N*C*OH*ceil(OW / POOL_CHUNK), rounded up (items
 *   past the end return). meta: the POOL_* indices below. Where the windows of 4
 *   consecutive outputs lie inside the row they go as a float4, each tap's 4
 *   values one vload4 (stride 1) or vload8's even half (stride 2). (One work-item
 *   per output element ran 2-3x slower on PoCL: the per-item index math and meta
 *   loads cost more than a 3x3 window.)
 * hgr_{max,avg}_pool2d_k<K>_s<S>_v<V>(__global const float* x, __global float* y,
 *                                    __global const int* meta)
 *   A window K columns wide (1, 2, 3 or 5; 5 and 1 at stride 1 only) at horizontal
 *   stride S (1 or 2), any height KH and
 *   vertical stride SH, any padding, ceil_mode, no dilation. A work-item computes
 *   meta[POOL_ROWS] consecutive output rows of one (n, c) plane, each row in blocks of
 *   V columns as a floatV: per block and input row, the K taps are K vector loads (S ==
 *   1) or 2 (K == 2) or 4 (K == 3) loads of 8 and shuffle2 for their even and odd
 *   columns (S == 2, V == 8), and each tap's lanes that read left or right of the row
 *   (padding, or the neighbouring rows that the load reaches) are replaced by the
 *   padding value through an int lane mask; the K taps reduce to one floatV per input
 *   row, and input rows above and below the image are skipped. Output rows share input
 *   rows within a block: with KH == 3 and SH == 1 each input row is reduced once and
 *   goes to the three output rows it belongs to (accumulators rolled down the rows);
 *   otherwise an output row's last input row is kept for the next output row when that
 *   starts there (3 rows at stride 2), and the others are reduced again. A load that
 *   would leave x loads lane by lane. The last block of a row is shifted left to end at
 *   the row's end (when OW >= V: its first lanes are computed and stored twice, the
 *   same values); rows narrower than V store their OW lanes. Average divisors are
 *   hgr_avg_pool2d's (count_include_pad both ways), per lane.
 *   NDRange 1-D over N*C*ceil(OH / meta[POOL_ROWS]), any local size, rounded up
 *   (items past the end return); item i takes plane i / ceil(OH / POOL_ROWS) and
 *   that plane's (i % ceil(OH / POOL_ROWS))-th run of rows. (hgr_max_pool2d ran
 *   a 3x3 stride-1 pool over [1, 256, 56, 56] in 2.2x relu's CPU time on PoCL,
 *   loading each input 9 times as part of float4s; this kernel in 0.4x:
 *   bench/notes.md "Pooling".)
 * hgr_global_max_pool2d(__global const float* x, __global float* y, uint planes, uint size)
 * hgr_global_avg_pool2d(__global const float* x, __global float* y, uint planes, uint size)
 *   One work-item per (n, c) plane of `size` = H*W values, read as float8s and the
 *   last size % 8 one by one; NDRange 1-D over planes, rounded up.
 */

#include "select.h"

#define POOL_N 0
#define POOL_C 1
#define POOL_H 2
#define POOL_W 3
#define POOL_OH 4
#define POOL_OW 5
#define POOL_KH 6
#define POOL_KW 7
#define POOL_SH 8
#define POOL_SW 9
#define POOL_DH 10
#define POOL_DW 11
#define POOL_PT 12
#define POOL_PL 13
#define POOL_PB 14
#define POOL_PR 15
#define POOL_COUNT_INCLUDE_PAD 16
#define POOL_ROWS 17 /* output rows per work-item of the hgr_*_pool2d_k* kernels */

/* Output columns per work-item (a multiple of 4; runtime/ops/ops_pool.c plans
 * ceil(OW / POOL_CHUNK) items per row). Bounded, so that a long 1-D row is spread
 * over work-items: rusticl on llvmpipe returned wrong maxima from a single
 * work-item running some 400 000 taps (1-D MaxPool over 22 000 columns). */
#define POOL_CHUNK 64

/* Decomposes work-item i into (plane, oh) and its columns [*begin, *end); false past
 * the end. */
inline bool pool_row(__global const int* meta, size_t i, int* plane, int* oh, int* begin, int* end) {
  const int OH = meta[POOL_OH], OW = meta[POOL_OW];
  const int chunks = (OW + POOL_CHUNK - 1) / POOL_CHUNK;
  if (i >= (size_t)meta[POOL_N] * meta[POOL_C] * OH * chunks) return false;
  /* x - (x / e) * e, not x % e: beside x / e, LLVM rewrites a remainder with a
   * `freeze`, which Oclgrind 21.10's uninitialized-value checker cannot run. */
  const int row = (int)i / chunks, chunk = (int)i - row * chunks;
  *plane = row / OH;
  *oh = row - *plane * OH;
  *begin = chunk * POOL_CHUNK;
  *end = min(*begin + POOL_CHUNK, OW);
  return true;
}

/* Four window taps SW apart from p (p[0], p[SW], p[2 SW], p[3 SW]): one vector load
 * for strides 1 and 2. */
inline float4 pool_load4(__global const float* p, int SW) {
  if (SW == 1) return vload4(0, p);
  if (SW == 2) return vload8(0, p).even;
  return (float4)(p[0], p[SW], p[2 * SW], p[3 * SW]);
}

#if HGR_WANTED(hgr_max_pool2d)
__kernel void hgr_max_pool2d(__global const float* x, __global float* y, __global const int* meta) {
  int plane, oh, begin, end;
  if (!pool_row(meta, get_global_id(0), &plane, &oh, &begin, &end)) return;
  const int H = meta[POOL_H], W = meta[POOL_W], KH = meta[POOL_KH], KW = meta[POOL_KW];
  const int DH = meta[POOL_DH], DW = meta[POOL_DW], SW = meta[POOL_SW], PL = meta[POOL_PL];
  const int OW = meta[POOL_OW];
  const int ih0 = oh * meta[POOL_SH] - meta[POOL_PT];
  __global const float* xp = x + (size_t)plane * H * W;
  __global float* yr = y + ((size_t)plane * meta[POOL_OH] + oh) * OW;
  /* Padding holds -FLT_MAX, so skipping it gives the same maximum. */
  for (int ow = begin; ow < end; ++ow) {
    const int iw0 = ow * SW - PL;
    /* 4 outputs at once where their windows lie inside the row (with SW == 2 the
     * vload8 reads one column past the last tap, hence the + 1) */
    if (ow + 4 <= end && iw0 >= 0 && iw0 + 3 * SW + (KW - 1) * DW + (SW == 2) < W) {
      float4 m4 = (float4)(-FLT_MAX);
      for (int kh = 0; kh < KH; ++kh) {
        const int ih = ih0 + kh * DH;
        if (ih < 0 || ih >= H) continue;
        __global const float* xr = xp + ih * W + iw0;
        for (int kw = 0; kw < KW; ++kw) m4 = fmax(m4, pool_load4(xr + kw * DW, SW));
      }
      vstore4(m4, 0, yr + ow);
      ow += 3;
      continue;
    }
    const bool inside = iw0 >= 0 && iw0 + (KW - 1) * DW < W;
    float m = -FLT_MAX;
    for (int kh = 0; kh < KH; ++kh) {
      const int ih = ih0 + kh * DH;
      if (ih < 0 || ih >= H) continue;
      __global const float* xr = xp + ih * W;
      if (inside) {
        for (int kw = 0; kw < KW; ++kw) m = fmax(m, xr[iw0 + kw * DW]);
      } else {
        for (int kw = 0; kw < KW; ++kw) {
          const int iw = iw0 + kw * DW;
          if (iw >= 0 && iw < W) m = fmax(m, xr[iw]);
        }
      }
    }
    yr[ow] = m;
  }
}
#endif

/* How many window taps of one axis the average divides by (topi's pool_impl_nd,
 * C integer division): with count_include_pad, the taps up to the end of the
 * declared padding (never ceil_mode's extra); without, the taps inside the input. */
inline int pool_taps(int start, int window, int dilation, int size, int pad_end, bool include_pad) {
  int end = start + (window - 1) * dilation;
  if (include_pad) return (min(end, size + pad_end - 1) - start) / dilation + 1;
  const int jumps = max((dilation - 1 - start) / dilation, 0);
  return (min(end, size - 1) - (start + dilation * jumps)) / dilation + 1;
}

#if HGR_WANTED(hgr_avg_pool2d)
__kernel void hgr_avg_pool2d(__global const float* x, __global float* y, __global const int* meta) {
  int plane, oh, begin, end;
  if (!pool_row(meta, get_global_id(0), &plane, &oh, &begin, &end)) return;
  const int H = meta[POOL_H], W = meta[POOL_W], KH = meta[POOL_KH], KW = meta[POOL_KW];
  const int DH = meta[POOL_DH], DW = meta[POOL_DW], SW = meta[POOL_SW], PL = meta[POOL_PL];
  const int OW = meta[POOL_OW];
  const int ih0 = oh * meta[POOL_SH] - meta[POOL_PT];
  __global const float* xp = x + (size_t)plane * H * W;
  __global float* yr = y + ((size_t)plane * meta[POOL_OH] + oh) * OW;
  const bool include_pad = meta[POOL_COUNT_INCLUDE_PAD] != 0;
  const int rows = pool_taps(ih0, KH, DH, H, meta[POOL_PB], include_pad);
  for (int ow = begin; ow < end; ++ow) {
    const int iw0 = ow * SW - PL;
    /* 4 outputs at once where their windows lie inside the row (as max's) */
    if (ow + 4 <= end && iw0 >= 0 && iw0 + 3 * SW + (KW - 1) * DW + (SW == 2) < W) {
      float4 sum4 = (float4)(0.0f);
      for (int kh = 0; kh < KH; ++kh) {
        const int ih = ih0 + kh * DH;
        if (ih < 0 || ih >= H) continue;
        __global const float* xr = xp + ih * W + iw0;
        for (int kw = 0; kw < KW; ++kw) sum4 += pool_load4(xr + kw * DW, SW);
      }
      const int4 cols = (int4)(pool_taps(iw0, KW, DW, W, meta[POOL_PR], include_pad),
                               pool_taps(iw0 + SW, KW, DW, W, meta[POOL_PR], include_pad),
                               pool_taps(iw0 + 2 * SW, KW, DW, W, meta[POOL_PR], include_pad),
                               pool_taps(iw0 + 3 * SW, KW, DW, W, meta[POOL_PR], include_pad));
      int4 count = rows * cols;
      if (!include_pad) count = max(count, (int4)(1));
      vstore4(sum4 / convert_float4(count), 0, yr + ow);
      ow += 3;
      continue;
    }
    const bool inside = iw0 >= 0 && iw0 + (KW - 1) * DW < W;
    float sum = 0.0f;
    for (int kh = 0; kh < KH; ++kh) {
      const int ih = ih0 + kh * DH;
      if (ih < 0 || ih >= H) continue;
      __global const float* xr = xp + ih * W;
      if (inside) {
        for (int kw = 0; kw < KW; ++kw) sum += xr[iw0 + kw * DW];
      } else {
        for (int kw = 0; kw < KW; ++kw) {
          const int iw = iw0 + kw * DW;
          if (iw >= 0 && iw < W) sum += xr[iw];
        }
      }
    }
    int count = rows * pool_taps(iw0, KW, DW, W, meta[POOL_PR], include_pad);
    if (!include_pad) count = max(count, 1);
    yr[ow] = sum / (float)count;
  }
}
#endif

/* ---- hgr_{max,avg}_pool2d_k<K>_s<S>_v<V> ---------------------------------------- */

#include "row_blocks.h"

/* The inputs a block's taps read from input row start `at` (flat index in x of lane
 * 0's tap 0), per (K, S): (V - 1) * S + K, and 18 for K == 3, S == 2 (its third tap
 * is 2 vector loads of 8 from at + 2). */
#define POOL_SPAN_K1_S1(V) (V)
#define POOL_SPAN_K3_S1(V) (V + 2)
#define POOL_SPAN_K5_S1(V) (V + 4)
#define POOL_SPAN_K3_S2(V) 18
#define POOL_SPAN_K2_S2(V) 16

/* The taps' inputs t0..t<K-1> (declared by the caller) from the SPAN inputs at `at`,
 * which src points to: x + at, or a private copy where the span leaves x. Stride
 * 2: shuffle2, not .even and .odd, which Oclgrind 21.10 reported as uninitialized
 * (kernels/conv_depthwise.cl). */
#define POOL_TAPS_K1_S1(V, src) t0 = vload##V(0, src);
#define POOL_TAPS_K3_S1(V, src)                                                                                \
  t0 = vload##V(0, src);                                                                                      \
  t1 = vload##V(0, src + 1);                                                                                  \
  t2 = vload##V(0, src + 2);
#define POOL_TAPS_K5_S1(V, src)                                                                                \
  POOL_TAPS_K3_S1(V, src)                                                                                     \
  t3 = vload##V(0, src + 3);                                                                                  \
  t4 = vload##V(0, src + 4);
#define POOL_TAPS_K3_S2(V, src)                                                                                \
  {                                                                                                           \
    const float8 a0 = vload8(0, src), a1 = vload8(0, src + 8);                                               \
    const float8 b0 = vload8(0, src + 2), b1 = vload8(0, src + 10);                                          \
    t0 = shuffle2(a0, a1, (uint8)(0, 2, 4, 6, 8, 10, 12, 14));                                                \
    t1 = shuffle2(a0, a1, (uint8)(1, 3, 5, 7, 9, 11, 13, 15));                                                \
    t2 = shuffle2(b0, b1, (uint8)(0, 2, 4, 6, 8, 10, 12, 14));                                                \
  }
#define POOL_TAPS_K2_S2(V, src)                                                                                \
  {                                                                                                           \
    const float8 a0 = vload8(0, src), a1 = vload8(0, src + 8);                                               \
    t0 = shuffle2(a0, a1, (uint8)(0, 2, 4, 6, 8, 10, 12, 14));                                                \
    t1 = shuffle2(a0, a1, (uint8)(1, 3, 5, 7, 9, 11, 13, 15));                                                \
  }

/* The reduction op, its identity (also the padding value) per variant. */
#define POOL_MAX_FILL (-FLT_MAX)
#define POOL_MAX_ADD(a, b) fmax(a, b)
#define POOL_AVG_FILL 0.0f
#define POOL_AVG_ADD(a, b) ((a) + (b))

/* Tap k's lanes where its column lies outside the row take the padding value. */
#define POOL_MASK(OP, V, t, m) select((float##V)(POOL_##OP##_FILL), t, m)
#define POOL_REDUCE_K1(OP, V) POOL_MASK(OP, V, t0, m0)
#define POOL_REDUCE_K2(OP, V) POOL_##OP##_ADD(POOL_MASK(OP, V, t0, m0), POOL_MASK(OP, V, t1, m1))
#define POOL_REDUCE_K3(OP, V) POOL_##OP##_ADD(POOL_REDUCE_K2(OP, V), POOL_MASK(OP, V, t2, m2))
#define POOL_REDUCE_K5(OP, V) \
  POOL_##OP##_ADD(POOL_##OP##_ADD(POOL_REDUCE_K3(OP, V), POOL_MASK(OP, V, t3, m3)), POOL_MASK(OP, V, t4, m4))
#define POOL_DECLARE_K1(V) float##V t0;
#define POOL_DECLARE_K2(V) float##V t0, t1;
#define POOL_DECLARE_K3(V) float##V t0, t1, t2;
#define POOL_DECLARE_K5(V) float##V t0, t1, t2, t3, t4;

/* h = input row ih's K taps for the block, masked and reduced (ih inside the image) */
#define POOL_ROW(OP, K, S, V, h, ih)                                                                           \
  {                                                                                                           \
    const int at = xc + (ih) * W + iw;                                                                        \
    POOL_DECLARE_K##K(V)                                                                                      \
    if (at >= 0 && at <= total - POOL_SPAN_K##K##_S##S(V)) {                                                  \
      POOL_TAPS_K##K##_S##S(V, (x + at))                                                                      \
    } else {                                                                                                  \
      float part[POOL_SPAN_K##K##_S##S(V)];                                                                   \
      for (int j = 0; j < POOL_SPAN_K##K##_S##S(V); ++j) part[j] = at + j >= 0 && at + j < total ? x[at + j] : 0.0f; \
      POOL_TAPS_K##K##_S##S(V, part)                                                                          \
    }                                                                                                         \
    h = POOL_REDUCE_K##K(OP, V);                                                                              \
  }

/* Per-block setup beside the masks: the average's divisor columns per lane, as
 * pool_taps with dilation 1 (include: up to the declared right padding; exclude:
 * inside the row; <= 0 for windows wholly in padding, as there). select on sign
 * bits, not min and max of int vectors: with those, Oclgrind 21.10 computed wrong
 * counts where PoCL and rusticl were right. */
#define POOL_MAX_BLOCK(K, V)
#define POOL_AVG_BLOCK(K, V)                                                                                   \
  const int##V cols_end = col + (K - 1), cols_lim = (int##V)(include_pad ? W + PR - 1 : W - 1);              \
  const int##V cols_start = include_pad ? col : select(col, (int##V)(0), col >> 31);                          \
  const int##V cols = select(cols_end, cols_lim, (cols_lim - cols_end) >> 31) - cols_start + 1;

/* The value of output row oh of a block from its accumulator. */
#define POOL_MAX_RESULT(V, acc, oh) (acc)
#define POOL_AVG_RESULT(V, acc, oh) ((acc) / pool_divisor##V(oh * SH - PT, KH, H, PB, include_pad, cols))

inline float8 pool_divisor8(int ih0, int KH, int H, int PB, bool include_pad, int8 cols) {
  const int8 count = pool_taps(ih0, KH, 1, H, PB, include_pad) * cols;
  return convert_float8(include_pad ? count : select(count, (int8)(1), (count - 1) >> 31));
}
inline float16 pool_divisor16(int ih0, int KH, int H, int PB, bool include_pad, int16 cols) {
  const int16 count = pool_taps(ih0, KH, 1, H, PB, include_pad) * cols;
  return convert_float16(include_pad ? count : select(count, (int16)(1), (count - 1) >> 31));
}

/* Stores output row oh of a block. */
#define POOL_STORE(OP, V, acc, oh)                                                                             \
  {                                                                                                           \
    const float##V v = POOL_##OP##_RESULT(V, acc, oh);                                                        \
    __global float* yr = yc + (oh) * OW + ob;                                                                 \
    ROW_STORE(V, v, yr, OW)                                                                                   \
  }

#define POOL_KERNEL(NAME, OP, K, S, V)                                                                         \
  HGR_KERNEL_IF(NAME, \
  __kernel void NAME(__global const float* restrict x, __global float* restrict y,                            \
                     __global const int* restrict meta) {                                                     \
    const int N = meta[POOL_N], C = meta[POOL_C], H = meta[POOL_H], W = meta[POOL_W];                         \
    const int OH = meta[POOL_OH], OW = meta[POOL_OW], KH = meta[POOL_KH], SH = meta[POOL_SH];                 \
    const int PT = meta[POOL_PT], PL = meta[POOL_PL], PB = meta[POOL_PB], PR = meta[POOL_PR];                 \
    const bool include_pad = meta[POOL_COUNT_INCLUDE_PAD] != 0;                                              \
    const int rows = meta[POOL_ROWS];                                                                         \
    const int chunks = (OH + rows - 1) / rows;                                                                \
    const int i = (int)get_global_id(0);                                                                      \
    if (i >= N * C * chunks) return;                                                                          \
    const int plane = i / chunks, oh_first = (i - plane * chunks) * rows;                                     \
    const int oh_end = min(OH, oh_first + rows);                                                              \
    const int xc = plane * H * W, total = N * C * H * W; /* flat index of the plane in x, x's size */         \
    __global float* yc = y + (size_t)plane * OH * OW;                                                         \
    (void)PB;                                                                                                 \
    (void)PR;                                                                                                 \
    (void)include_pad;                                                                                        \
    for (int ow0 = 0; ow0 < OW; ow0 += V) {                                                                   \
      /* the last block ends at the row's end (rows of at least V columns) */                                 \
      const int ob = OW >= V ? min(ow0, OW - V) : 0;                                                          \
      const int iw = ob * S - PL; /* input column of lane 0's tap 0 */                                        \
      /* lane masks of taps 0..K-1 (row_blocks.h) */                                                          \
      const int##V col = iw + ROW_LANES##V * S;                                                               \
      const int##V m0 = ROW_TAP_MASK(col, 0, W), m1 = ROW_TAP_MASK(col, 1, W), m2 = ROW_TAP_MASK(col, 2, W);    \
      const int##V m3 = ROW_TAP_MASK(col, 3, W), m4 = ROW_TAP_MASK(col, 4, W);                                \
      (void)m2;                                                                                               \
      (void)m3;                                                                                               \
      (void)m4;                                                                                               \
      POOL_##OP##_BLOCK(K, V)                                                                                 \
      float##V h;                                                                                             \
      if (SH == 1 && KH == 3) {                                                                               \
        /* each input row reduced once: row oh - PT + 2 completes output row oh (a0) \
         * and adds to the next two (a1, a2) */                                      \
        float##V a0 = (float##V)(POOL_##OP##_FILL), a1 = a0;                                                  \
        const int ih = oh_first - PT;                                                                         \
        if (ih >= 0 && ih < H) {                                                                              \
          POOL_ROW(OP, K, S, V, h, ih)                                                                        \
          a0 = POOL_##OP##_ADD(a0, h);                                                                        \
        }                                                                                                     \
        if (ih + 1 >= 0 && ih + 1 < H) {                                                                      \
          POOL_ROW(OP, K, S, V, h, ih + 1)                                                                    \
          a0 = POOL_##OP##_ADD(a0, h);                                                                        \
          a1 = POOL_##OP##_ADD(a1, h);                                                                        \
        }                                                                                                     \
        for (int oh = oh_first; oh < oh_end; ++oh) {                                                          \
          float##V a2 = (float##V)(POOL_##OP##_FILL);                                                         \
          const int last = oh - PT + 2;                                                                       \
          if (last >= 0 && last < H) {                                                                        \
            POOL_ROW(OP, K, S, V, h, last)                                                                    \
            a0 = POOL_##OP##_ADD(a0, h);                                                                      \
            a1 = POOL_##OP##_ADD(a1, h);                                                                      \
            a2 = h;                                                                                           \
          }                                                                                                   \
          POOL_STORE(OP, V, a0, oh)                                                                           \
          a0 = a1;                                                                                            \
          a1 = a2;                                                                                            \
        }                                                                                                     \
      } else {                                                                                                \
        /* the last input row of the previous output row, reduced (kept, in case \
         * this output row starts there) */                                          \
        int kept_ih = -1;                                                                                     \
        float##V kept = (float##V)(POOL_##OP##_FILL);                                                         \
        for (int oh = oh_first; oh < oh_end; ++oh) {                                                          \
          float##V acc = (float##V)(POOL_##OP##_FILL);                                                        \
          const int ih0 = oh * SH - PT;                                                                       \
          for (int kh = 0; kh < KH; ++kh) {                                                                   \
            const int ih = ih0 + kh;                                                                          \
            if (ih < 0 || ih >= H) continue;                                                                  \
            if (ih == kept_ih) {                                                                              \
              h = kept;                                                                                       \
            } else {                                                                                          \
              POOL_ROW(OP, K, S, V, h, ih)                                                                    \
            }                                                                                                 \
            acc = POOL_##OP##_ADD(acc, h);                                                                    \
            if (kh == KH - 1) {                                                                               \
              kept_ih = ih;                                                                                   \
              kept = h;                                                                                       \
            }                                                                                                 \
          }                                                                                                   \
          POOL_STORE(OP, V, acc, oh)                                                                          \
        }                                                                                                     \
      }                                                                                                       \
    }                                                                                                         \
  })

POOL_KERNEL(hgr_max_pool2d_k1_s1_v8, MAX, 1, 1, 8)
POOL_KERNEL(hgr_max_pool2d_k1_s1_v16, MAX, 1, 1, 16)
POOL_KERNEL(hgr_max_pool2d_k3_s1_v8, MAX, 3, 1, 8)
POOL_KERNEL(hgr_max_pool2d_k3_s1_v16, MAX, 3, 1, 16)
POOL_KERNEL(hgr_max_pool2d_k5_s1_v8, MAX, 5, 1, 8)
POOL_KERNEL(hgr_max_pool2d_k5_s1_v16, MAX, 5, 1, 16)
POOL_KERNEL(hgr_max_pool2d_k3_s2_v8, MAX, 3, 2, 8)
POOL_KERNEL(hgr_max_pool2d_k2_s2_v8, MAX, 2, 2, 8)
POOL_KERNEL(hgr_avg_pool2d_k1_s1_v8, AVG, 1, 1, 8)
POOL_KERNEL(hgr_avg_pool2d_k1_s1_v16, AVG, 1, 1, 16)
POOL_KERNEL(hgr_avg_pool2d_k3_s1_v8, AVG, 3, 1, 8)
POOL_KERNEL(hgr_avg_pool2d_k3_s1_v16, AVG, 3, 1, 16)
POOL_KERNEL(hgr_avg_pool2d_k5_s1_v8, AVG, 5, 1, 8)
POOL_KERNEL(hgr_avg_pool2d_k5_s1_v16, AVG, 5, 1, 16)
POOL_KERNEL(hgr_avg_pool2d_k3_s2_v8, AVG, 3, 2, 8)
POOL_KERNEL(hgr_avg_pool2d_k2_s2_v8, AVG, 2, 2, 8)

/* ---- global pools ------------------------------------------------------------------ */

#if HGR_WANTED(hgr_global_max_pool2d)
__kernel void hgr_global_max_pool2d(__global const float* x, __global float* y, uint planes, uint size) {
  const size_t plane = get_global_id(0);
  if (plane >= planes) return;
  __global const float* xp = x + plane * size;
  float8 m8 = (float8)(-FLT_MAX);
  uint i = 0;
  for (; i + 8 <= size; i += 8) m8 = fmax(m8, vload8(0, xp + i));
  /* the lanes through private memory, not .lo and .hi nor .s0 ... .s7: Oclgrind
   * 21.10's uninitialized-value checker crashed on those */
  float lanes[8];
  vstore8(m8, 0, lanes);
  float m = lanes[0];
  for (int j = 1; j < 8; ++j) m = fmax(m, lanes[j]);
  for (; i < size; ++i) m = fmax(m, xp[i]);
  y[plane] = m;
}
#endif

#if HGR_WANTED(hgr_global_avg_pool2d)
__kernel void hgr_global_avg_pool2d(__global const float* x, __global float* y, uint planes, uint size) {
  const size_t plane = get_global_id(0);
  if (plane >= planes) return;
  __global const float* xp = x + plane * size;
  float8 s8 = (float8)(0.0f);
  uint i = 0;
  for (; i + 8 <= size; i += 8) s8 += vload8(0, xp + i);
  float lanes[8]; /* as max's */
  vstore8(s8, 0, lanes);
  float sum = lanes[0];
  for (int j = 1; j < 8; ++j) sum += lanes[j];
  for (; i < size; ++i) sum += xp[i];
  y[plane] = sum / (float)size;
}
#endif
