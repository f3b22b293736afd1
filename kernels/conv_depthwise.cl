/* Depthwise conv2d (groups == C), float32, NCHW data, OIHW weights [K, 1, 3, 3]
 * (runtime/ops/ops_conv.c plans them). Arguments as kernels/conv.cl's:
 *   (__global const float* x, __global const float* w, __global const float* bias,
 *    __global float* y, __global const int* meta)
 * meta is conv.h's CONV_* layout, CONV_DW_ROWS included.
 *
 * hgr_conv2d_dw3x3_s<S>_v<V>: a 3x3 kernel, horizontal stride S (1 or 2), any
 *   vertical stride SH, padding and multiplier K / C, dilation 1. A work-item computes
 *   CONV_DW_ROWS consecutive output rows of one output channel, each row in blocks of
 *   V columns as a floatV, with the channel's 9 weights in registers: per block and
 *   input row, the three taps' inputs are 3 loads of V consecutive floats (S == 1;
 *   S == 2, V == 8: 4 loads of 8 and shuffle2 for the even and odd ones), ANDed with
 *   an int lane mask per tap column that zeroes the lanes reading left or right of
 *   the row (padding, or the neighbouring rows that the load reaches); rows above
 *   and below the image are skipped. With SH == 1 each input row is loaded once per
 *   block and added to the three output rows it belongs to (accumulators rolled
 *   down the rows); otherwise each output row loads its three. A load that would
 *   leave x loads lane by lane. The last block of a row is shifted left to end at
 *   the row's end (when OW >= V: its first lanes are computed and stored twice, the
 *   same values); rows narrower than V store their OW lanes.
 *   NDRange 1-D over N * K * ceil(OH / CONV_DW_ROWS), any local size, rounded up
 *   (items past the end return); item i takes channel plane i / ceil(OH /
 *   CONV_DW_ROWS) and that plane's (i % ceil(OH / CONV_DW_ROWS))-th run of rows.
 *
 * Why runs of rows of a channel and not a pixel per work-item: PoCL runs a
 * work-group as a loop over its work-items, and the per-item index arithmetic,
 * meta loads and weights cost more than the 9 taps of one pixel (conv.cl's
 * depthwise kernel found a work-item per 4 columns twice as slow as one per row).
 */

#include "select.h"

#include "conv.h"
#include "row_blocks.h"

/* The three taps' inputs of one block and input row, t0..t2, from the flat index at
 * of lane 0's tap 0 in x: whole vectors when the load stays inside x, lane by lane
 * otherwise (lanes outside x read 0; the masks zero them anyway). */
#define CONV_DW_LOAD_S1(V)                                                                                     \
  if (at >= 0 && at <= total - (V + 2)) {                                                                       \
    t0 = vload##V(0, x + at);                                                                                 \
    t1 = vload##V(0, x + at + 1);                                                                             \
    t2 = vload##V(0, x + at + 2);                                                                             \
  } else {                                                                                                    \
    float part[V + 2];                                                                                        \
    for (int j = 0; j < V + 2; ++j) part[j] = at + j >= 0 && at + j < total ? x[at + j] : 0.0f;              \
    t0 = vload##V(0, part);                                                                                   \
    t1 = vload##V(0, part + 1);                                                                               \
    t2 = vload##V(0, part + 2);                                                                               \
  }
/* Stride 2 (V = 8): the 18 inputs from at, whole vectors when they lie inside x;
 * t0, t1 = the even and odd ones of the first 16, t2 = the even ones from 2 on.
 * shuffle2, not .even and .odd of a float16 nor a float8 built from components:
 * Oclgrind 21.10 reported every result of those as uninitialized (PoCL compiles
 * all three to the same shuffles). */
#define CONV_DW_LOAD_S2(V)                                                                                     \
  {                                                                                                           \
    float8 a0, a1, b0, b1;                                                                                      \
    if (at >= 0 && at <= total - 18) {                                                                        \
      a0 = vload8(0, x + at);                                                                                 \
      a1 = vload8(0, x + at + 8);                                                                             \
      b0 = vload8(0, x + at + 2);                                                                             \
      b1 = vload8(0, x + at + 10);                                                                            \
    } else {                                                                                                  \
      float part[18];                                                                                         \
      for (int j = 0; j < 18; ++j) part[j] = at + j >= 0 && at + j < total ? x[at + j] : 0.0f;                \
      a0 = vload8(0, part);                                                                                   \
      a1 = vload8(0, part + 8);                                                                               \
      b0 = vload8(0, part + 2);                                                                               \
      b1 = vload8(0, part + 10);                                                                              \
    }                                                                                                         \
    t0 = shuffle2(a0, a1, (uint8)(0, 2, 4, 6, 8, 10, 12, 14));                                                \
    t1 = shuffle2(a0, a1, (uint8)(1, 3, 5, 7, 9, 11, 13, 15));                                                \
    t2 = shuffle2(b0, b1, (uint8)(0, 2, 4, 6, 8, 10, 12, 14));                                                 \
  }

/* The masked inputs of input row ih's three taps for a block, into t0..t2
 * (declared by the caller; ih inside the image). */
#define CONV_DW_TAPS(V, S, ih)                                                                                 \
  {                                                                                                           \
    const int at = xc + (ih) * W + iw;                                                                        \
    CONV_DW_LOAD_S##S(V)                                                                                      \
    t0 = as_float##V(as_int##V(t0) & m0);                                                                     \
    t1 = as_float##V(as_int##V(t1) & m1);                                                                     \
    t2 = as_float##V(as_int##V(t2) & m2);                                                                     \
  }
/* acc += the taps times one weight row (a * b + c contracts to a fused
 * multiply-add where the device has one) */
#define CONV_DW_MAD(acc, wa, wb, wc)                                                                           \
  acc = t0 * (wa) + acc;                                                                                      \
  acc = t1 * (wb) + acc;                                                                                      \
  acc = t2 * (wc) + acc;
/* The epilogue and the store of output row oh of a block. */
#define CONV_DW_STORE(V, acc, oh)                                                                              \
  {                                                                                                           \
    float##V v = (acc);                                                                                       \
    CONV_ACTIVATE(float##V, v, flags, meta);                                                                  \
    __global float* yr = yc + (oh) * OW + ob;                                                                 \
    ROW_STORE(V, v, yr, OW)                                                                                   \
  }

#define CONV_DW3X3(NAME, S, V)                                                                                 \
  HGR_KERNEL_IF(NAME, \
  __kernel void NAME(__global const float* restrict x, __global const float* restrict w,                      \
                     __global const float* restrict bias, __global float* restrict y,                         \
                     __global const int* restrict meta) {                                                      \
    const int N = meta[CONV_N], C = meta[CONV_C], H = meta[CONV_H], W = meta[CONV_W], K = meta[CONV_K];       \
    const int OH = meta[CONV_OH], OW = meta[CONV_OW], SH = meta[CONV_SH];                                     \
    const int PT = meta[CONV_PT], PL = meta[CONV_PL], flags = meta[CONV_FLAGS], rows = meta[CONV_DW_ROWS];    \
    const int chunks = (OH + rows - 1) / rows;                                                                \
    const int i = (int)get_global_id(0);                                                                      \
    if (i >= N * K * chunks) return;                                                                          \
    const int plane = i / chunks, oh_first = (i - plane * chunks) * rows;                                     \
    const int oh_end = min(OH, oh_first + rows);                                                              \
    const int n = plane / K, k = plane - n * K, c = k / (K / C), total = N * C * H * W;                       \
    const int xc = (n * C + c) * H * W; /* flat index of the channel's plane in x */                          \
    __global const float* wk = w + k * 9;                                                                     \
    const float w0 = wk[0], w1 = wk[1], w2 = wk[2], w3 = wk[3], w4 = wk[4], w5 = wk[5];                       \
    const float w6 = wk[6], w7 = wk[7], w8 = wk[8];                                                           \
    const float b = (flags & CONV_HAS_BIAS) ? bias[k] : 0.0f;                                                 \
    __global float* yc = y + (size_t)plane * OH * OW;                                                         \
    for (int ow0 = 0; ow0 < OW; ow0 += V) {                                                                   \
      /* the last block ends at the row's end (rows of at least V columns) */                                 \
      const int ob = OW >= V ? min(ow0, OW - V) : 0;                                                          \
      const int iw = ob * S - PL; /* input column of lane 0's tap 0 */                                        \
      /* lane masks of taps 0..2 (row_blocks.h) */                                                            \
      const int##V col = iw + ROW_LANES##V * S;                                                               \
      const int##V m0 = ROW_TAP_MASK(col, 0, W), m1 = ROW_TAP_MASK(col, 1, W), m2 = ROW_TAP_MASK(col, 2, W);    \
      float##V t0, t1, t2;                                                                                    \
      if (SH == 1) {                                                                                          \
        /* each input row loaded once: row oh - PT + 2 completes output row oh (a0) \
         * and adds to the next two (a1, a2) */                                     \
        float##V a0 = (float##V)(b), a1 = (float##V)(b);                                                      \
        const int ih = oh_first - PT;                                                                         \
        if (ih >= 0 && ih < H) {                                                                              \
          CONV_DW_TAPS(V, S, ih)                                                                              \
          CONV_DW_MAD(a0, w0, w1, w2)                                                                         \
        }                                                                                                     \
        if (ih + 1 >= 0 && ih + 1 < H) {                                                                      \
          CONV_DW_TAPS(V, S, ih + 1)                                                                          \
          CONV_DW_MAD(a0, w3, w4, w5)                                                                         \
          CONV_DW_MAD(a1, w0, w1, w2)                                                                         \
        }                                                                                                     \
        for (int oh = oh_first; oh < oh_end; ++oh) {                                                          \
          float##V a2 = (float##V)(b);                                                                        \
          const int last = oh - PT + 2;                                                                       \
          if (last >= 0 && last < H) {                                                                        \
            CONV_DW_TAPS(V, S, last)                                                                          \
            CONV_DW_MAD(a0, w6, w7, w8)                                                                       \
            CONV_DW_MAD(a1, w3, w4, w5)                                                                       \
            CONV_DW_MAD(a2, w0, w1, w2)                                                                       \
          }                                                                                                   \
          CONV_DW_STORE(V, a0, oh)                                                                            \
          a0 = a1;                                                                                            \
          a1 = a2;                                                                                            \
        }                                                                                                     \
      } else {                                                                                                \
        for (int oh = oh_first; oh < oh_end; ++oh) {                                                          \
          float##V acc = (float##V)(b);                                                                       \
          const int ih = oh * SH - PT;                                                                        \
          if (ih >= 0 && ih < H) {                                                                            \
            CONV_DW_TAPS(V, S, ih)                                                                            \
            CONV_DW_MAD(acc, w0, w1, w2)                                                                      \
          }                                                                                                   \
          if (ih + 1 >= 0 && ih + 1 < H) {                                                                    \
            CONV_DW_TAPS(V, S, ih + 1)                                                                        \
            CONV_DW_MAD(acc, w3, w4, w5)                                                                      \
          }                                                                                                   \
          if (ih + 2 >= 0 && ih + 2 < H) {                                                                    \
            CONV_DW_TAPS(V, S, ih + 2)                                                                        \
            CONV_DW_MAD(acc, w6, w7, w8)                                                                      \
          }                                                                                                   \
          CONV_DW_STORE(V, acc, oh)                                                                           \
        }                                                                                                     \
      }                                                                                                       \
    }                                                                                                         \
  })

CONV_DW3X3(hgr_conv2d_dw3x3_s1_v8, 1, 8)
CONV_DW3X3(hgr_conv2d_dw3x3_s1_v16, 1, 16)
CONV_DW3X3(hgr_conv2d_dw3x3_s2_v8, 2, 8)
