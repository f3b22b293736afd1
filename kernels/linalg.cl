/* Dense, matmul and batch_matmul: one strided float32 GEMM with local-memory tiles.
 *
 * For every batch index p (get_group_id(2)) the kernels compute
 *   C[p, i, j] = act(sum_l A[p, i, l] * B[p, l, j] + bias)
 * where the bias is none (bias_mode 0), bias[j] per column (1: dense's), bias[i]
 * per row (2: conv2d's per output channel, when runtime/ops_conv.c runs a 1x1
 * convolution as C[n] = W [K, C] x X[n] [C, H * W]) or bias[p * m + i] per row of
 * the whole batch (3: a grouped 1x1 conv2d, a GEMM per group), and act is, by its code: 0
 * none, 1 relu max(v, 0), 2 leaky_relu (v < 0 ? v * alpha : v), 3 clip
 * min(max(v, a_min), a_max) -- conv2d's fused epilogue (kernels/conv.cl's) -- 4 gelu
 * 0.5 v (1 + erf(v / sqrt 2)) and 5 gelu_tanh, a matmul's (runtime/passes'
 * fuse_gemm_epilogue.c), computed as kernels/elementwise.cl's gelu and gelu_tanh, 6
 * sigmoid, 7 leaky_relu then clip, 8 silu v * sigmoid(v) and 9 hard_swish (both the
 * conv epilogue's too), as the ops they replace compute them.
 * where C [batch, m, n] is stored through the output layout of out_layout.h (with
 * out_d3 0 contiguous; otherwise as a transpose after the GEMM would lay it out),
 * and A and B are read through strides, so
 * transposed operands and broadcast batches (stride 0) need no copy:
 *   A[p, i, l] = a[p * a_batch + i * a_row + l * a_depth]
 *   B[p, l, j] = b[p * b_batch + l * b_depth + (j / b_wrap) * b_wrap_stride + (j % b_wrap) * b_col]
 * (b_wrap >= n: plainly j * b_col; a smaller b_wrap walks B's columns as the pixels
 * of a 2-D image, b_wrap per row: a strided 1x1 convolution's input)
 *
 * Kernels, one per tile variant, named hgr_gemm_<TX>x<TY>_<RM>x<RN>_k<BK> (BK 1: the
 * direct variant below, without local memory; hgr_gemm_1x<TY>_<RM>x<RN>_k1_pack, the
 * direct variant with B's strip packed into local memory, takes one more, last
 * argument: __local float* pack, k * RN floats; hgr_gemm_1x<TY>_<RM>x4_k1_dot, the
 * direct variant for B stored transposed, dot products along K; hgr_gemm_1x<TY>_<RM>x32_k1,
 * the direct variant two float16 wide):
 *   (__global const float* a, __global const float* b, __global const float* bias,
 *    __global float* c, int m, int n, int k,
 *    int a_batch, int a_row, int a_depth, int b_batch, int b_depth, int b_col, int bias_mode,
 *    int act, float alpha, float a_min, float a_max, int b_wrap, int b_wrap_stride,
 *    HGR_OUT_LAYOUT_PARAMS, HGR_GEMM_SEG_PARAMS)
 * bias is read only when bias_mode is non-zero (any buffer may be passed otherwise).
 * Every index fits an int (the plan checks the element counts).
 *
 * hgr_conv_gemm_<TX>x<TY>_<RM>x<RN>_k<BK>: conv2d's implicit GEMM, the same
 * arguments plus a last one, __global const int* im2col (the launch's meta buffer):
 * B[p, l, j] is not read through b_depth/b_col/b_wrap but as im2col of an NCHW input
 * (b + p * b_batch): im2col[0..7] = in_h, in_w, out_w, sh, sw, pt, pl, 0, then per
 * reduction index l the triple (channel offset ci * in_h * in_w, row offset ky * dh,
 * column offset kx * dw) at im2col[8 + 3 * l], so
 *   B[p, l, j] = x[off_l + (oy * sh - pt + dy_l) * in_w + ox * sw - pl + dx_l]
 * for output pixel j = oy * out_w + ox, 0 outside the image (the padding). The
 * tile copy takes 4 output pixels at a time: one vload4 where they are consecutive
 * input pixels inside the image (stride 1), the even half of a vload8 (stride 2),
 * scalar loads otherwise. A is the
 * weight [C_out, C_in / groups * kh * kw] (rows contiguous), the epilogue the GEMM's.
 *
 * NDRange: 3-D, local (TX, TY, 1) exactly (reqd_work_group_size), global
 * (ceil(n / (TX * RN)) * TX, ceil(m / (TY * RM)) * TY, batch).
 *
 * A work-group computes a (TY * RM) x (TX * RN) block of C, walking K in steps of
 * BK. In each step the work-items copy a BK-deep slice of the block's rows of A
 * and columns of B into local memory (zeros outside the matrices, so partial
 * tiles need no other checks; float4 copies when the tile is inside and one of
 * the operand's strides is 1), then each work-item accumulates an RM x RN register
 * block, RN columns at a time in one floatRN. On a CPU driver such as PoCL the
 * vector is SIMD and the block gives RM * RN multiply-adds per RM + RN local
 * loads. The depth loop is unrolled completely: PoCL moves a uniform innermost
 * loop of a kernel with barriers outside its work-item loop, which would store
 * every accumulator at every step.
 *
 * Two buffers of each tile are used in turn, so one barrier per step is enough: a
 * work-item can only overwrite a buffer two steps later, after every work-item
 * has passed the barrier of the step in between, i.e. has finished reading it.
 * (The second buffer also keeps the local addresses step-dependent, which stops
 * PoCL from hoisting every one of them out of the loop into per-work-item arrays.)
 *
 * The product is written a * b + c, which OpenCL C may contract: drivers fuse it
 * where the hardware has FMA and keep a multiply and an add where it does not.
 *
 * Tile sizes are powers of two and the copy loops split indices as unsigned ints,
 * into shifts and masks: LLVM 14 puts a `freeze` on a signed (or non-power-of-two)
 * div/rem pair, which Oclgrind 21.10's uninitialized-value check cannot run. */

#include "select.h"
#include "gelu.h"
#include "out_layout.h"

#define HGR_CAT2(a, b) a##b
#define HGR_CAT(a, b) HGR_CAT2(a, b)
#define HGR_VEC(w) HGR_CAT(float, w)
#define HGR_VLOAD(w) HGR_CAT(vload, w)
#define HGR_VSTORE(w) HGR_CAT(vstore, w)

/* vload16/vstore16 take or return a float16, which clang flags (-Wpsabi) on x86
 * hosts without AVX-512: the calling convention of such functions differs with
 * AVX-512. The built-ins are compiled for the same target as the kernels (and
 * inlined), so it does not matter here; quiet the warning that PoCL would print.
 * (A float16 made of two float8s instead needs shuffles whose operands and result
 * differ in width, whose shadow Oclgrind 21.10 gets wrong: it reports the values
 * as uninitialized. Two float8 accumulators run at half the speed on PoCL.) */
#if defined(__clang__)
#pragma clang diagnostic ignored "-Wpsabi"
/* "unroll 4" over k, a run-time depth: where LLVM cannot, it says so ("loop not
 * unrolled") on every build; the code is the same either way. */
#pragma clang diagnostic ignored "-Wpass-failed"
#endif

/* X(0, t, u) ... X(n - 1, t, u): the register block as separate variables, not an
 * array, which a CPU driver keeps in memory across the barriers. */
#define HGR_REP_1(X, t, u) X(0, t, u)
#define HGR_REP_2(X, t, u) X(0, t, u) X(1, t, u)
#define HGR_REP_4(X, t, u) HGR_REP_2(X, t, u) X(2, t, u) X(3, t, u)
#define HGR_REP_6(X, t, u) HGR_REP_4(X, t, u) X(4, t, u) X(5, t, u)
#define HGR_REP_8(X, t, u) HGR_REP_6(X, t, u) X(6, t, u) X(7, t, u)
#define HGR_REP(n, X, t, u) HGR_CAT(HGR_REP_, n)(X, t, u)
#define HGR_ACC_ZERO(r, t, u) t acc##r = (t)(0.0f);
/* acc_r += A[row r of the work-item's block, l] * B[l, its RN columns] */
/* acc_r += A[row r of the work-item's block, l] * B[l, its RN columns] */
#define HGR_ACC_MAD(r, t, a_rows) acc##r = (t)((a_rows)[r * tile_depth]) * b_vec + acc##r;
#define HGR_ACC_SAVE(r, t, out) out[r] = acc##r;

#define HGR_COMMA ,

/* out = act(out) for out of vector type T (see the act codes above). The GELUs are
 * kernels/elementwise.cl's formulas, so that a fused GEMM matches the unfused ops:
 * gelu by kernels/gelu.h, and the tanh form x / (1 + e^(-2z)), which neither cancels
 * nor overflows. */
#define HGR_GEMM_ACT(T, out)                                                                    \
  if (act == 1) out = fmax(out, (T)(0.0f));                                                     \
  else if (act == 2) out = out < (T)(0.0f) ? out * alpha : out;                                 \
  else if (act == 3) out = fmin(fmax(out, (T)(a_min)), (T)(a_max));                             \
  else if (act == 4) {                                                                          \
    HGR_GELU(T, out)                                                                            \
  } else if (act == 5)                                                                          \
    out = out / ((T)(1.0f) + exp((T)(-1.5957691216057308f) * (out + (T)(0.044715f) * out * out * out))); \
  else if (act == 6)                                                                            \
    out = (T)(1.0f) / ((T)(1.0f) + exp(-out));                                                  \
  else if (act == 7)                                                                            \
    out = fmin(fmax(out < (T)(0.0f) ? out * alpha : out, (T)(a_min)), (T)(a_max));               \
  else if (act == 8)                                                                            \
    out = out * ((T)(1.0f) / ((T)(1.0f) + exp(-out)));                                          \
  else if (act == 9)                                                                            \
    out = out * fmax(fmin(out / (T)(6.0f) + (T)(0.5f), (T)(1.0f)), (T)(0.0f));
/* The plain GEMM, hgr_gemm_<variant>, and the convolution's, hgr_conv_gemm_<variant>
 * (IM2COL 1: B read through the im2col table, the extra last argument). */
/* The GEMM's outputs: with seg_n 0, C is output c alone; with seg_n > 0, C's columns
 * are split into segments of seg_n (n / seg_n of them, at most 3; seg_n a multiple of
 * 32, so that no work-item's strip of columns crosses two), segment s stored as the
 * result [batch, m, seg_n] of its own output (c, c1, c2), through the output layout
 * of out_layout.h with the dims out_d1 ... out_d3 and the strides out_s0 ... out_s3
 * (segment 0), seg1_s0 ... seg1_s3 (1) or seg2_s0 ... seg2_s3 (2): one GEMM for the
 * q, k and v projections of attention, each written in its heads' layout
 * (passes/fuse_sibling_gemms.c). c1 and c2 are never touched without their segment
 * (any buffer may be passed). */
#define HGR_GEMM_SEG_PARAMS                                                                     \
  __global float* restrict c1, __global float* restrict c2, int seg_n, int seg1_s0, int seg1_s1, \
      int seg1_s2, int seg1_s3, int seg2_s0, int seg2_s1, int seg2_s2, int seg2_s3

/* The GEMM's epilogue and store, for a block of RM rows from first_row and RN columns
 * of the strip that starts at column jb, of which the columns from j0 (>= jb) up to n
 * are the block's own: the accumulators acc0..acc(RM-1), plus the bias (bias_mode 1:
 * per column, 2: per row, 3: per row of batch p), then the activation (act 1 relu,
 * 2 leaky relu, 3 clip, 4 gelu, 5 gelu_tanh, 6 sigmoid, 7 leaky relu then clip:
 * HGR_GEMM_ACT), stored into C [m, n]
 * (into the segment's output with seg_n: HGR_GEMM_SEG_PARAMS). */
#define HGR_GEMM_STORE(RM, RN, first_row, jb, j0)\
  {                                                                                             \
    HGR_VEC(RN) acc[RM];                                                                        \
    HGR_REP(RM, HGR_ACC_SAVE, _, acc)                                                           \
    HGR_VEC(RN) bias_vec = (HGR_VEC(RN))(0.0f);                                                 \
    if (bias_mode == 1) {                                                                       \
      if ((jb) + RN <= n) {                                                                     \
        bias_vec = HGR_VLOAD(RN)(0, bias + (jb));                                               \
      } else {                                                                                  \
        float part[RN];                                                                         \
        for (int j = 0; j < RN; ++j) part[j] = (jb) + j < n ? bias[(jb) + j] : 0.0f;            \
        bias_vec = HGR_VLOAD(RN)(0, part);                                                      \
      }                                                                                         \
    }                                                                                           \
    /* the segment's output, width, first column and strides */                                \
    __global float* out_c = c;                                                                  \
    int out_n = n, out_j = 0, s0 = out_s0, s1 = out_s1, s2 = out_s2, s3 = out_s3;               \
    if (seg_n) {                                                                                \
      const uint seg = (uint)(j0) / (uint)seg_n;                                                \
      out_n = seg_n;                                                                            \
      out_j = (int)seg * seg_n;                                                                 \
      if (seg == 1) {                                                                           \
        out_c = c1;                                                                             \
        s0 = seg1_s0, s1 = seg1_s1, s2 = seg1_s2, s3 = seg1_s3;                                 \
      } else if (seg == 2) {                                                                    \
        out_c = c2;                                                                             \
        s0 = seg2_s0, s1 = seg2_s1, s2 = seg2_s2, s3 = seg2_s3;                                 \
      }                                                                                         \
    }                                                                                           \
    for (int r = 0; r < RM; ++r) {                                                              \
      const int i = (first_row) + r;                                                            \
      if (i >= m) break;                                                                        \
      HGR_VEC(RN) out = acc[r] + bias_vec;                                                      \
      if (bias_mode >= 2) out += (HGR_VEC(RN))(bias[(bias_mode == 3 ? p * m : 0) + i]);         \
      HGR_GEMM_ACT(HGR_VEC(RN), out)                                                            \
      /* the output's element */                                                               \
      const uint e = ((uint)p * (uint)m + (uint)i) * (uint)out_n + (uint)((j0) - out_j);        \
      const int count = min(RN - ((j0) - (jb)), n - (j0)); /* the block's own columns */       \
      uint x3 = 0, offset = e;                                                                  \
      if (out_d3) offset = hgr_out_offset(e, out_d1, out_d2, out_d3, s0, s1, s2, s3, &x3);      \
      if ((jb) == (j0) && count == RN && (!out_d3 || (s3 == 1 && x3 + RN <= (uint)out_d3))) {   \
        HGR_VSTORE(RN)(out, 0, out_c + offset);                                                 \
      } else {                                                                                  \
        /* from j0 (a shifted strip starts before it) to n, or across the output's runs */     \
        float part[RN];                                                                         \
        HGR_VSTORE(RN)(out, 0, part);                                                           \
        if (!out_d3)                                                                            \
          for (int j = 0; j < count; ++j) out_c[offset + j] = part[(j0) - (jb) + j];            \
        else                                                                                    \
          hgr_out_store(out_c, part + ((j0) - (jb)), count, e, out_d1, out_d2, out_d3, s0, s1, s2, s3); \
      }                                                                                         \
    }                                                                                           \
  }

#define HGR_GEMM(TX, TY, RM, RN, BK)                                                                \
  HGR_GEMM_KERNEL(hgr_gemm_##TX##x##TY##_##RM##x##RN##_k##BK, 0, ,                                  \
                  __global const int* im2col = 0;, TX, TY, RM, RN, BK)
#define HGR_CONV_GEMM(TX, TY, RM, RN, BK)                                                           \
  HGR_GEMM_KERNEL(hgr_conv_gemm_##TX##x##TY##_##RM##x##RN##_k##BK, 1,                               \
                  HGR_COMMA __global const int* restrict im2col, , TX, TY, RM, RN, BK)
#define HGR_GEMM_KERNEL(NAME, IM2COL, EXTRA_PARAM, EXTRA_DECL, TX, TY, RM, RN, BK)                  \
  /* the copy loops split the tiles evenly among the work-items, in float4s; the                    \
   * tile sizes are powers of two, so their index splits are shifts and masks */                    \
  typedef char HGR_CAT(NAME, _fits)[                                                                \
      (RM * BK) % (4 * TX) == 0 && (RN * BK) % (4 * TY) == 0 && (TY * RM) % 4 == 0 &&               \
      (TX * RN) % 4 == 0 && BK % 4 == 0 && ((TY * RM) & (TY * RM - 1)) == 0 &&                      \
      ((TX * RN) & (TX * RN - 1)) == 0 && (BK & (BK - 1)) == 0 ? 1 : -1];                           \
  HGR_KERNEL_IF(NAME, \
  __kernel __attribute__((reqd_work_group_size(TX, TY, 1))) void NAME(                              \
      __global const float* restrict a, __global const float* restrict b,                           \
      __global const float* restrict bias, __global float* restrict c, int m, int n, int k,         \
      int a_batch, int a_row, int a_depth, int b_batch, int b_depth, int b_col, int bias_mode,      \
      int act, float alpha, float a_min, float a_max, int b_wrap, int b_wrap_stride,               \
      HGR_OUT_LAYOUT_PARAMS, HGR_GEMM_SEG_PARAMS EXTRA_PARAM) {                                     \
    EXTRA_DECL                                                                                      \
    /* a_tile[buffer][i][l]: the block's TY * RM rows of A, BK values of each */                    \
    __local float a_tile[2 * TY * RM * BK];                                                         \
    /* b_tile[buffer][l][j]: BK rows of the block's TX * RN columns of B */                         \
    __local float b_tile[2 * BK * TX * RN];                                                         \
    const int tx = (int)get_local_id(0), ty = (int)get_local_id(1);                                 \
    const uint item = ty * TX + tx;                                                                 \
    const int row0 = (int)get_group_id(1) * (TY * RM);                                              \
    const int col0 = (int)get_group_id(0) * (TX * RN);                                              \
    const int p = (int)get_group_id(2);                                                             \
    a += p * a_batch;                                                                               \
    b += p * b_batch;                                                                               \
    const bool rows_inside = row0 + TY * RM <= m;                                                   \
    const bool cols_inside = col0 + TX * RN <= n && b_wrap >= n; /* and B's columns plain */        \
    const int tile_depth = BK; /* for HGR_ACC_MAD */                                                \
    HGR_REP(RM, HGR_ACC_ZERO, HGR_VEC(RN), _)                                                       \
    for (int k0 = 0; k0 < k; k0 += BK) {                                                            \
      const int buffer = (uint)k0 / BK & 1;                                                         \
      __local float* a_buf = a_tile + buffer * (TY * RM * BK);                                      \
      __local float* b_buf = b_tile + buffer * (BK * TX * RN);                                      \
      const bool depth_inside = k0 + BK <= k;                                                       \
      if (rows_inside && depth_inside && a_depth == 1) {                                            \
        /* rows of A are contiguous */                                                              \
        for (uint s = 0; s < (TY * RM * BK / 4) / (TX * TY); ++s) {                                 \
          const uint e = s * (TX * TY) + item;                                                      \
          const int i = e / (BK / 4), l = e % (BK / 4) * 4;                                         \
          vstore4(vload4(0, a + (row0 + i) * a_row + k0 + l), 0, a_buf + i * BK + l);               \
        }                                                                                           \
      } else if (rows_inside && depth_inside && a_row == 1) {                                       \
        /* A is stored transposed: read down its columns */                                         \
        for (uint s = 0; s < (TY * RM * BK / 4) / (TX * TY); ++s) {                                 \
          const uint e = s * (TX * TY) + item;                                                      \
          const int l = e / (TY * RM / 4), i = e % (TY * RM / 4) * 4;                               \
          const float4 v = vload4(0, a + (k0 + l) * a_depth + row0 + i);                            \
          a_buf[i * BK + l] = v.s0;                                                                 \
          a_buf[(i + 1) * BK + l] = v.s1;                                                           \
          a_buf[(i + 2) * BK + l] = v.s2;                                                           \
          a_buf[(i + 3) * BK + l] = v.s3;                                                           \
        }                                                                                           \
      } else {                                                                                      \
        for (uint s = 0; s < (TY * RM * BK) / (TX * TY); ++s) {                                     \
          const uint e = s * (TX * TY) + item;                                                      \
          const int i = e / BK, l = e % BK;                                                         \
          float v = 0.0f;                                                                           \
          if (row0 + i < m && k0 + l < k) v = a[(row0 + i) * a_row + (k0 + l) * a_depth];           \
          a_buf[i * BK + l] = v;                                                                    \
        }                                                                                           \
      }                                                                                             \
      if (IM2COL) {                                                                                 \
        /* B[l, j] is the input pixel that output pixel j reads at tap l (im2col on the             \
         * fly): 4 consecutive output pixels per copy, one float4 where they are                    \
         * consecutive input pixels inside the image */                                             \
        const int in_h = im2col[0], in_w = im2col[1], out_w = im2col[2];                            \
        const int sh = im2col[3], sw = im2col[4], pt = im2col[5], pl = im2col[6];                   \
        for (uint s = 0; s < (BK * TX * RN / 4) / (TX * TY); ++s) {                                 \
          const uint e = s * (TX * TY) + item;                                                      \
          const int l = e / (TX * RN / 4), j = e % (TX * RN / 4) * 4;                               \
          const uint jj = (uint)(col0 + j);                                                         \
          uint q = jj / (uint)out_w, r = jj - q * (uint)out_w;                                      \
          float4 v = (float4)(0.0f);                                                                \
          if (k0 + l < k) {                                                                         \
            __global const int* tap = im2col + 8 + 3 * (k0 + l);                                    \
            const int off = tap[0], dy = tap[1], dx = tap[2];                                       \
            const int iy = (int)q * sh - pt + dy, ix = (int)r * sw - pl + dx;                       \
            if (sw == 1 && r + 3 < (uint)out_w && jj + 3 < (uint)n && (uint)iy < (uint)in_h &&      \
                ix >= 0 && ix + 3 < in_w) {                                                         \
              v = vload4(0, b + off + iy * in_w + ix);                                              \
            } else if (sw == 2 && r + 3 < (uint)out_w && jj + 3 < (uint)n && (uint)iy < (uint)in_h && \
                       ix >= 0 && ix + 7 < in_w) {                                                  \
              /* stride 2: the even half of 8 consecutive input pixels */                           \
              v = vload8(0, b + off + iy * in_w + ix).even;                                         \
            } else {                                                                                \
              float part[4];                                                                        \
              for (int t = 0; t < 4; ++t) {                                                         \
                const int py = (int)q * sh - pt + dy, px = (int)r * sw - pl + dx;                   \
                part[t] = jj + t < (uint)n && (uint)py < (uint)in_h && (uint)px < (uint)in_w        \
                              ? b[off + py * in_w + px]                                             \
                              : 0.0f;                                                               \
                if (++r == (uint)out_w) {                                                           \
                  r = 0;                                                                            \
                  ++q;                                                                              \
                }                                                                                   \
              }                                                                                     \
              v = vload4(0, part);                                                                  \
            }                                                                                       \
          }                                                                                         \
          vstore4(v, 0, b_buf + l * (TX * RN) + j);                                                 \
        }                                                                                           \
      } else if (depth_inside && b_col == 1 && b_wrap >= n) {                                       \
        /* rows of B are contiguous; zeros past column n (a partial tile) */                        \
        for (uint s = 0; s < (BK * TX * RN / 4) / (TX * TY); ++s) {                                 \
          const uint e = s * (TX * TY) + item;                                                      \
          const int l = e / (TX * RN / 4), j = e % (TX * RN / 4) * 4;                               \
          __global const float* src = b + (k0 + l) * b_depth + col0 + j;                            \
          float4 v = (float4)(0.0f);                                                                \
          if (col0 + j + 4 <= n) {                                                                  \
            v = vload4(0, src);                                                                     \
          } else {                                                                                  \
            if (col0 + j < n) v.s0 = src[0];                                                        \
            if (col0 + j + 1 < n) v.s1 = src[1];                                                    \
            if (col0 + j + 2 < n) v.s2 = src[2];                                                    \
          }                                                                                         \
          vstore4(v, 0, b_buf + l * (TX * RN) + j);                                                 \
        }                                                                                           \
      } else if (cols_inside && depth_inside && b_depth == 1) {                                     \
        /* B is stored transposed (dense weights [units, in]): read along its rows */               \
        for (uint s = 0; s < (BK * TX * RN / 4) / (TX * TY); ++s) {                                 \
          const uint e = s * (TX * TY) + item;                                                      \
          const int j = e / (BK / 4), l = e % (BK / 4) * 4;                                         \
          const float4 v = vload4(0, b + (col0 + j) * b_col + k0 + l);                              \
          b_buf[l * (TX * RN) + j] = v.s0;                                                          \
          b_buf[(l + 1) * (TX * RN) + j] = v.s1;                                                    \
          b_buf[(l + 2) * (TX * RN) + j] = v.s2;                                                    \
          b_buf[(l + 3) * (TX * RN) + j] = v.s3;                                                    \
        }                                                                                           \
      } else if (depth_inside && b_col == 1 && b_wrap < n && b_wrap % 4 == 0) {                     \
        /* B in panels of b_wrap columns (HGR_GEMM_PANEL): 4 columns of one panel per copy */      \
        for (uint s = 0; s < (BK * TX * RN / 4) / (TX * TY); ++s) {                                 \
          const uint e = s * (TX * TY) + item;                                                      \
          const int l = e / (TX * RN / 4), j = e % (TX * RN / 4) * 4;                               \
          const uint jj = (uint)(col0 + j), q = jj / (uint)b_wrap;                                  \
          float4 v = (float4)(0.0f);                                                                \
          const int r = (int)(jj - q * (uint)b_wrap);                                               \
          if (jj < (uint)n) v = vload4(0, b + (k0 + l) * b_depth + (int)q * b_wrap_stride + r);     \
          vstore4(v, 0, b_buf + l * (TX * RN) + j);                                                 \
        }                                                                                           \
      } else if (b_wrap < n) {                                                                      \
        /* B's columns are an image's pixels: one division per 4 columns */                         \
        for (uint s = 0; s < (BK * TX * RN / 4) / (TX * TY); ++s) {                                 \
          const uint e = s * (TX * TY) + item;                                                      \
          const int l = e / (TX * RN / 4), j = e % (TX * RN / 4) * 4;                               \
          const uint jj = (uint)(col0 + j);                                                         \
          uint q = jj / (uint)b_wrap, r = jj - q * (uint)b_wrap;                                    \
          __global const float* src = b + (k0 + l) * b_depth;                                       \
          for (int t = 0; t < 4; ++t) {                                                             \
            float v = 0.0f;                                                                         \
            if (k0 + l < k && col0 + j + t < n) v = src[(int)q * b_wrap_stride + (int)r * b_col];   \
            b_buf[l * (TX * RN) + j + t] = v;                                                       \
            if (++r == (uint)b_wrap) {                                                              \
              r = 0;                                                                                \
              ++q;                                                                                  \
            }                                                                                       \
          }                                                                                         \
        }                                                                                           \
      } else {                                                                                      \
        for (uint s = 0; s < (BK * TX * RN) / (TX * TY); ++s) {                                     \
          const uint e = s * (TX * TY) + item;                                                      \
          const int l = e / (TX * RN), j = e % (TX * RN);                                           \
          float v = 0.0f;                                                                           \
          if (k0 + l < k && col0 + j < n) v = b[(k0 + l) * b_depth + (col0 + j) * b_col];           \
          b_buf[l * (TX * RN) + j] = v;                                                             \
        }                                                                                           \
      }                                                                                             \
      barrier(CLK_LOCAL_MEM_FENCE);                                                                 \
      const __local float* a_rows = a_buf + ty * RM * BK;                                           \
      const __local float* b_row = b_buf + tx * RN;                                                 \
      _Pragma("unroll") for (int l = 0; l < BK; ++l) {                                              \
        const HGR_VEC(RN) b_vec = HGR_VLOAD(RN)(0, b_row + l * (TX * RN));                          \
        HGR_REP(RM, HGR_ACC_MAD, HGR_VEC(RN), a_rows + l)                                           \
      }                                                                                             \
    }                                                                                               \
    const int j0 = col0 + tx * RN;                                                                  \
    HGR_GEMM_STORE(RM, RN, row0 + ty * RM, j0, j0)                                                  \
  })

/* hgr_gemm_<TX>x<TY>_<RM>x<RN>_k1, the direct variant: the GEMM's arguments, NDRange
 * and meaning, without local memory or barriers. Each work-item computes RM rows x
 * RN columns of C (rows past m return at once; the group's TY * RM x TX * RN block
 * only sets the NDRange), walking K one step at a time: RN values of B's row l in
 * one vload (B's rows contiguous: b_col 1 and no b_wrap) times RM values of A, one
 * broadcast each, into RM floatRN accumulators. On PoCL's CPU driver local memory
 * is ordinary cached memory, so the tiled kernels' copies buy nothing, and their
 * barriers make PoCL keep the accumulators in memory between the steps; here the
 * loop over K runs inside one work-item and its 6 x 16 block (12 AVX2 registers,
 * plus 2 for B's row and one broadcast) stays in registers: 12 FMAs per 2 vector
 * loads and 6 broadcasts, 1.5-2x the tiled kernels in CPU time on PoCL (see
 * runtime/ops/ops_linalg.c). The items of a work-group share the group's columns
 * of B in cache. Two orders of the work-groups, the same work: _k1 has the strips of
 * columns along dimension 0 and the row blocks along 1 (work-groups TX x TY), so on
 * PoCL, which runs work-groups in order of dimension 0, a band of rows walks across
 * B; _k1_rows (the wide variant's too) has the row blocks along dimension 0 (work-
 * groups TY x TX), so consecutive groups walk down one strip and B streams from
 * memory once (ops_linalg.c's rows_first says which).
 * The last strip of columns (n not a multiple of RN, n >= RN) is read shifted left
 * to end at column n, so the loop always takes whole vloads, and stores only its
 * own columns. Other strides (A's columns, B transposed or wrapped, n < RN) take a
 * gathered loop: correct, not fast (the plan picks the tiled kernels for them). */
/* Whether B is in panels a direct variant reads whole (ops_gemm.h): b_wrap columns
 * each, b_col 1, every panel readable to its b_wrap-th column (the last one padded,
 * or n a multiple of b_wrap), so a strip of RN columns from j0 (a multiple of RN)
 * lies in one panel when RN divides b_wrap; and where that strip starts in b. */
#define HGR_GEMM_PANEL(RN) (b_col == 1 && b_wrap < n && b_wrap % (RN) == 0)
#define HGR_GEMM_PANEL_START (j0 / b_wrap * (b_wrap_stride - b_wrap) + j0) /* no %: DivRemPairs' freeze */
/* The offsets in B's rows of a work-item's RN columns from j0 (columns past n repeat
 * the last one: read, never stored); unsigned splits as the tiled copy's. */
#define HGR_GEMM_COL_OFFSETS(RN, col_offset)                                                      \
  for (int j = 0; j < RN; ++j) {                                                                  \
    const uint jj = (uint)min(j0 + j, n - 1);                                                     \
    const uint q = jj / (uint)b_wrap, r = jj - q * (uint)b_wrap;                                  \
    col_offset[j] = (int)q * b_wrap_stride + (int)r * b_col;                                      \
  }

#define HGR_DIRECT_AROW(r, t, u) __global const float* a##r = a + min(row0 + r, m - 1) * a_row;
#define HGR_DIRECT_MAD(r, t, la) acc##r = (t)(a##r[la]) * b_vec + acc##r;
#define HGR_GEMM_DIRECT(TX, TY, RM, RN)                                                           \
  HGR_GEMM_DIRECT_ORDER(hgr_gemm_##TX##x##TY##_##RM##x##RN##_k1, TX, TY, 0, 1, RM, RN)             \
  HGR_GEMM_DIRECT_ORDER(hgr_gemm_##TX##x##TY##_##RM##x##RN##_k1_rows, TY, TX, 1, 0, RM, RN)
#define HGR_GEMM_DIRECT_ORDER(NAME, WX, WY, COL_DIM, ROW_DIM, RM, RN)                               \
  HGR_KERNEL_IF(NAME, \
  __kernel __attribute__((reqd_work_group_size(WX, WY, 1))) void                                  \
      NAME(                                                                                       \
          __global const float* restrict a, __global const float* restrict b,                     \
          __global const float* restrict bias, __global float* restrict c, int m, int n, int k,   \
          int a_batch, int a_row, int a_depth, int b_batch, int b_depth, int b_col, int bias_mode, \
          int act, float alpha, float a_min, float a_max, int b_wrap, int b_wrap_stride,          \
          HGR_OUT_LAYOUT_PARAMS, HGR_GEMM_SEG_PARAMS) {                                         \
    const int p = (int)get_group_id(2);                                                           \
    const int row0 = (int)get_global_id(ROW_DIM) * RM;                                            \
    const int j0 = (int)get_global_id(COL_DIM) * RN;                                              \
    if (row0 >= m || j0 >= n) return;                                                             \
    a += p * a_batch;                                                                             \
    b += p * b_batch;                                                                             \
    HGR_REP(RM, HGR_DIRECT_AROW, _, _)                                                            \
    HGR_REP(RM, HGR_ACC_ZERO, HGR_VEC(RN), _)                                                     \
    /* the strip's first column: j0, or n - RN for a last, partial strip */                       \
    const bool plain = b_col == 1 && b_wrap >= n && n >= RN;                                      \
    const bool panel = HGR_GEMM_PANEL(RN);                                                        \
    const int jb = plain && j0 + RN > n ? n - RN : j0;                                            \
    __global const float* b_row = b + (panel ? HGR_GEMM_PANEL_START : jb);                        \
    if ((plain || panel) && a_depth == 1) {                                                       \
      _Pragma("unroll 4") for (int l = 0; l < k; ++l) {                                           \
        const HGR_VEC(RN) b_vec = HGR_VLOAD(RN)(0, b_row + l * b_depth);                          \
        HGR_REP(RM, HGR_DIRECT_MAD, HGR_VEC(RN), l)                                               \
      }                                                                                           \
    } else if (plain || panel) {                                                                  \
      for (int l = 0; l < k; ++l) {                                                               \
        const HGR_VEC(RN) b_vec = HGR_VLOAD(RN)(0, b_row + l * b_depth);                          \
        const int la = l * a_depth;                                                               \
        HGR_REP(RM, HGR_DIRECT_MAD, HGR_VEC(RN), la)                                              \
      }                                                                                           \
    } else {                                                                                      \
      int col_offset[RN];                                                                         \
      HGR_GEMM_COL_OFFSETS(RN, col_offset)                                                        \
      for (int l = 0; l < k; ++l) {                                                               \
        float part[RN];                                                                           \
        for (int j = 0; j < RN; ++j) part[j] = b[l * b_depth + col_offset[j]];                    \
        const HGR_VEC(RN) b_vec = HGR_VLOAD(RN)(0, part);                                         \
        const int la = l * a_depth;                                                               \
        HGR_REP(RM, HGR_DIRECT_MAD, HGR_VEC(RN), la)                                              \
      }                                                                                           \
    }                                                                                             \
    HGR_GEMM_STORE(RM, RN, row0, jb, j0)                                                          \
  })

/* hgr_gemm_1x<TY>_<RM>x32_k1, the direct variant two vectors wide: the GEMM's
 * arguments, NDRange and meaning, as hgr_gemm_<TX>x<TY>_<RM>x<RN>_k1 with RN 32 held
 * as two float16 accumulators per row (OpenCL has no float32). Each step of K loads
 * two float16 of B's row and broadcasts RM values of A into 2 * RM FMAs: on AVX-512
 * (32 zmm registers) an 8 x 32 block keeps 16 accumulators in registers, against the
 * 6 x 16 block's 6, which hides the FMAs' latency and halves A's broadcasts per FMA
 * (runtime/ops/ops_linalg.c). The last strip (n not a multiple of 32, n >= 32) is read
 * shifted left as the direct variant's; other strides take a gathered loop. */
#define HGR_WIDE_ZERO(r, t, u) t acc##r##_lo = (t)(0.0f), acc##r##_hi = (t)(0.0f);
#define HGR_WIDE_MAD(r, t, la)                                                                    \
  acc##r##_lo = (t)(a##r[la]) * b_lo + acc##r##_lo;                                               \
  acc##r##_hi = (t)(a##r[la]) * b_hi + acc##r##_hi;
#define HGR_WIDE_LO(r, t, u) const t acc##r = acc##r##_lo;
#define HGR_WIDE_HI(r, t, u) const t acc##r = acc##r##_hi;
#define HGR_GEMM_DIRECT_WIDE(TY, RM)                                                              \
  HGR_GEMM_DIRECT_WIDE_ORDER(hgr_gemm_1x##TY##_##RM##x32_k1, 1, TY, 0, 1, RM)                      \
  HGR_GEMM_DIRECT_WIDE_ORDER(hgr_gemm_1x##TY##_##RM##x32_k1_rows, TY, 1, 1, 0, RM)
#define HGR_GEMM_DIRECT_WIDE_ORDER(NAME, WX, WY, COL_DIM, ROW_DIM, RM)                              \
  HGR_KERNEL_IF(NAME, \
  __kernel __attribute__((reqd_work_group_size(WX, WY, 1))) void                                  \
      NAME(                                                                                       \
          __global const float* restrict a, __global const float* restrict b,                     \
          __global const float* restrict bias, __global float* restrict c, int m, int n, int k,   \
          int a_batch, int a_row, int a_depth, int b_batch, int b_depth, int b_col, int bias_mode, \
          int act, float alpha, float a_min, float a_max, int b_wrap, int b_wrap_stride,          \
          HGR_OUT_LAYOUT_PARAMS, HGR_GEMM_SEG_PARAMS) {                                         \
    const int p = (int)get_group_id(2);                                                           \
    const int row0 = (int)get_global_id(ROW_DIM) * RM;                                            \
    const int j0 = (int)get_global_id(COL_DIM) * 32;                                              \
    if (row0 >= m || j0 >= n) return;                                                             \
    a += p * a_batch;                                                                             \
    b += p * b_batch;                                                                             \
    HGR_REP(RM, HGR_DIRECT_AROW, _, _)                                                            \
    HGR_REP(RM, HGR_WIDE_ZERO, float16, _)                                                        \
    const bool plain = b_col == 1 && b_wrap >= n && n >= 32;                                      \
    const bool panel = HGR_GEMM_PANEL(32);                                                        \
    const int jb = plain && j0 + 32 > n ? n - 32 : j0;                                            \
    __global const float* b_row = b + (panel ? HGR_GEMM_PANEL_START : jb);                        \
    if ((plain || panel) && a_depth == 1) {                                                       \
      _Pragma("unroll 2") for (int l = 0; l < k; ++l) {                                           \
        const float16 b_lo = vload16(0, b_row + l * b_depth);                                     \
        const float16 b_hi = vload16(1, b_row + l * b_depth);                                     \
        HGR_REP(RM, HGR_WIDE_MAD, float16, l)                                                     \
      }                                                                                           \
    } else if (plain || panel) {                                                                  \
      for (int l = 0; l < k; ++l) {                                                               \
        const float16 b_lo = vload16(0, b_row + l * b_depth);                                     \
        const float16 b_hi = vload16(1, b_row + l * b_depth);                                     \
        const int la = l * a_depth;                                                               \
        HGR_REP(RM, HGR_WIDE_MAD, float16, la)                                                    \
      }                                                                                           \
    } else {                                                                                      \
      int col_offset[32];                                                                         \
      HGR_GEMM_COL_OFFSETS(32, col_offset)                                                        \
      for (int l = 0; l < k; ++l) {                                                               \
        float part[32];                                                                           \
        for (int j = 0; j < 32; ++j) part[j] = b[l * b_depth + col_offset[j]];                    \
        const float16 b_lo = vload16(0, part);                                                    \
        const float16 b_hi = vload16(1, part);                                                    \
        const int la = l * a_depth;                                                               \
        HGR_REP(RM, HGR_WIDE_MAD, float16, la)                                                    \
      }                                                                                           \
    }                                                                                             \
    {                                                                                             \
      HGR_REP(RM, HGR_WIDE_LO, float16, _)                                                        \
      HGR_GEMM_STORE(RM, 16, row0, jb, j0)                                                        \
    }                                                                                             \
    {                                                                                             \
      HGR_REP(RM, HGR_WIDE_HI, float16, _)                                                        \
      HGR_GEMM_STORE(RM, 16, row0, jb + 16, max(j0, jb + 16))                                     \
    }                                                                                             \
  })

/* hgr_gemm_<TX>x<TY>_<RM>x<RN>_k1_pack, the direct variant with B's strip packed:
 * the GEMM's arguments, NDRange and meaning plus a last one, __local float* pack of
 * k * RN floats (k >= 1). TX is 1: the work-items of a group share one strip of RN
 * columns of B (the last strip shifted, as the direct variant's), which they first
 * copy into pack, the k rows RN floats apart, one barrier, then each computes RM rows
 * x RN columns of C as the direct variant does, reading B's rows from pack. The
 * direct variant's vloads of B's rows straddle cache lines when a row is not 64
 * bytes aligned (14 x 14 and 7 x 7 images: rows of 196 and 49 floats); PoCL on the
 * project's AVX2 machine ran such shapes 1.2-1.9x slower per FLOP than aligned ones,
 * and the copy, made once per group of TY work-items, takes most of that back
 * (runtime/ops/ops_linalg.c). The one barrier is before the accumulators exist, so
 * PoCL keeps them in registers (the tiled kernels' barriers do not let it). Other
 * strides (A's columns, B transposed or wrapped, n < RN) are read as the direct
 * variant reads them: correct, not fast. */
#define HGR_GEMM_DIRECT_PACK(TY, RM, RN)                                                          \
  HGR_KERNEL_IF(hgr_gemm_1x##TY##_##RM##x##RN##_k1_pack, \
  __kernel __attribute__((reqd_work_group_size(1, TY, 1))) void                                   \
      hgr_gemm_1x##TY##_##RM##x##RN##_k1_pack(                                                    \
          __global const float* restrict a, __global const float* restrict b,                     \
          __global const float* restrict bias, __global float* restrict c, int m, int n, int k,   \
          int a_batch, int a_row, int a_depth, int b_batch, int b_depth, int b_col, int bias_mode, \
          int act, float alpha, float a_min, float a_max, int b_wrap, int b_wrap_stride,          \
          HGR_OUT_LAYOUT_PARAMS, HGR_GEMM_SEG_PARAMS, __local float* restrict pack) {                                                         \
    const int p = (int)get_group_id(2);                                                           \
    const int ty = (int)get_local_id(1);                                                          \
    const int row0 = (int)get_global_id(1) * RM;                                                  \
    const int j0 = (int)get_global_id(0) * RN;                                                    \
    /* the same for every work-item of the group: none reaches the barrier */                     \
    if (j0 >= n || m <= 0) return;                                                                \
    a += p * a_batch;                                                                             \
    b += p * b_batch;                                                                             \
    const bool plain = b_col == 1 && b_wrap >= n && n >= RN;                                      \
    const int jb = plain && j0 + RN > n ? n - RN : j0;                                            \
    if (plain) {                                                                                  \
      for (int l = ty; l < k; l += TY)                                                            \
        HGR_VSTORE(RN)(HGR_VLOAD(RN)(0, b + l * b_depth + jb), 0, pack + l * RN);                  \
    } else {                                                                                      \
      int col_offset[RN];                                                                         \
      HGR_GEMM_COL_OFFSETS(RN, col_offset)                                                        \
      for (int l = ty; l < k; l += TY)                                                            \
        for (int j = 0; j < RN; ++j) pack[l * RN + j] = b[l * b_depth + col_offset[j]];           \
    }                                                                                             \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                 \
    if (row0 >= m) return;                                                                        \
    HGR_REP(RM, HGR_DIRECT_AROW, _, _)                                                            \
    HGR_REP(RM, HGR_ACC_ZERO, HGR_VEC(RN), _)                                                     \
    if (a_depth == 1) {                                                                           \
      _Pragma("unroll 4") for (int l = 0; l < k; ++l) {                                           \
        const HGR_VEC(RN) b_vec = HGR_VLOAD(RN)(0, pack + l * RN);                                \
        HGR_REP(RM, HGR_DIRECT_MAD, HGR_VEC(RN), l)                                               \
      }                                                                                           \
    } else {                                                                                      \
      for (int l = 0; l < k; ++l) {                                                               \
        const HGR_VEC(RN) b_vec = HGR_VLOAD(RN)(0, pack + l * RN);                                \
        const int la = l * a_depth;                                                               \
        HGR_REP(RM, HGR_DIRECT_MAD, HGR_VEC(RN), la)                                              \
      }                                                                                           \
    }                                                                                             \
    HGR_GEMM_STORE(RM, RN, row0, jb, j0)                                                          \
  })

/* hgr_gemm_1x<TY>_<RM>x4_k1_dot, the direct variant for B stored transposed (B's
 * columns contiguous: b_depth 1, dense's weights [units, in]) and A's rows
 * contiguous (a_depth 1): the GEMM's arguments, NDRange and meaning, without local
 * memory or barriers. Each work-item computes RM rows x 4 columns of C as RM x 4 dot
 * products along K, 8 at a time: each step loads a float8 of each of its RM rows of A
 * and of its 4 columns of B (RM + 4 vloads) into RM x 4 float8 accumulators (RM * 4
 * FMAs), which it reduces once at the end (hgr_dot_sum4). The direct 6 x 16 variant
 * needs B's rows contiguous, and the tiled ones transpose B's tile through local
 * memory with scalar stores; on PoCL's CPU driver this one ran dense's 64 x 2048 x
 * 1024 at 1.7x the best tiled variant's speed (runtime/ops/ops_linalg.c). The work-items
 * of a group share the group's 4 columns of B in cache and walk TY * RM rows of A.
 * Rows past m and columns past n repeat the last one (read, never stored). The last
 * k % 8 of the depth, and every step with other strides (A's columns, B's rows,
 * B wrapped), are gathered into zero-padded float8s: correct, not fast (the plan
 * picks this variant only for the contiguous layout). */

/* 8 values of a row from l, stride apart, zeros from k on. */
static inline float8 hgr_dot_gather(__global const float* row, int stride, int l, int k) {
  float part[8];
  for (int e = 0; e < 8; ++e) part[e] = l + e < k ? row[(l + e) * stride] : 0.0f;
  return vload8(0, part);
}

/* The sums of the 8 lanes of d0, d1, d2 and d3: two rounds of shuffle2 that fold two
 * vectors into one, then one swap of neighbours. (A swizzle such as d.s45670123, or
 * .lo and .hi, crashes Oclgrind 21.10's uninitialized-value check; shuffle and
 * shuffle2 run there.) */
static inline float4 hgr_dot_sum4(float8 d0, float8 d1, float8 d2, float8 d3) {
  const uint8 low = (uint8)(0, 1, 2, 3, 8, 9, 10, 11), high = (uint8)(4, 5, 6, 7, 12, 13, 14, 15);
  /* d01: d0's lanes 0-3 + 4-7, then d1's; d23 the same */
  const float8 d01 = shuffle2(d0, d1, low) + shuffle2(d0, d1, high);
  const float8 d23 = shuffle2(d2, d3, low) + shuffle2(d2, d3, high);
  /* pairs: d0's two, d2's, d1's, d3's */
  float8 pairs = shuffle2(d01, d23, (uint8)(0, 1, 8, 9, 4, 5, 12, 13)) +
                 shuffle2(d01, d23, (uint8)(2, 3, 10, 11, 6, 7, 14, 15));
  pairs += shuffle(pairs, (uint8)(1, 0, 3, 2, 5, 4, 7, 6));
  return (float4)(pairs.s0, pairs.s4, pairs.s2, pairs.s6);
}

/* The offset in b of column j's first value (j past n: the last column's). */
static inline int hgr_dot_column(int j, int n, int b_col, int b_wrap, int b_wrap_stride) {
  const uint jj = (uint)min(j, n - 1);
  if (b_wrap >= n) return (int)jj * b_col;
  const uint q = jj / (uint)b_wrap, r = jj - q * (uint)b_wrap;
  return (int)q * b_wrap_stride + (int)r * b_col;
}

#define HGR_DOT_AROW(r, t, u) __global const float* a##r = a + min(row0 + r, m - 1) * a_row;
#define HGR_DOT_ZERO(r, t, u)                                                                     \
  float8 dot##r##_0 = (float8)(0.0f), dot##r##_1 = (float8)(0.0f), dot##r##_2 = (float8)(0.0f), \
         dot##r##_3 = (float8)(0.0f);
#define HGR_DOT_VLOAD_A(r, t, l) const float8 av##r = vload8(0, a##r + (l));
#define HGR_DOT_GATHER_A(r, t, l) const float8 av##r = hgr_dot_gather(a##r, a_depth, (l), k);
#define HGR_DOT_MAD(r, t, u)                                                                      \
  dot##r##_0 = av##r * bv0 + dot##r##_0;                                                          \
  dot##r##_1 = av##r * bv1 + dot##r##_1;                                                          \
  dot##r##_2 = av##r * bv2 + dot##r##_2;                                                          \
  dot##r##_3 = av##r * bv3 + dot##r##_3;
#define HGR_DOT_SUM(r, t, u) const float4 acc##r = hgr_dot_sum4(dot##r##_0, dot##r##_1, dot##r##_2, dot##r##_3);
#define HGR_GEMM_DOT(TY, RM)                                                                      \
  HGR_KERNEL_IF(hgr_gemm_1x##TY##_##RM##x4_k1_dot, \
  __kernel __attribute__((reqd_work_group_size(1, TY, 1))) void hgr_gemm_1x##TY##_##RM##x4_k1_dot( \
      __global const float* restrict a, __global const float* restrict b,                         \
      __global const float* restrict bias, __global float* restrict c, int m, int n, int k,       \
      int a_batch, int a_row, int a_depth, int b_batch, int b_depth, int b_col, int bias_mode,    \
      int act, float alpha, float a_min, float a_max, int b_wrap, int b_wrap_stride,              \
      HGR_OUT_LAYOUT_PARAMS, HGR_GEMM_SEG_PARAMS) {                                             \
    const int p = (int)get_group_id(2);                                                           \
    const int row0 = (int)get_global_id(1) * RM;                                                  \
    const int j0 = (int)get_global_id(0) * 4;                                                     \
    if (row0 >= m || j0 >= n) return;                                                             \
    a += p * a_batch;                                                                             \
    b += p * b_batch;                                                                             \
    HGR_REP(RM, HGR_DOT_AROW, _, _)                                                               \
    __global const float* b0 = b + hgr_dot_column(j0, n, b_col, b_wrap, b_wrap_stride);           \
    __global const float* b1 = b + hgr_dot_column(j0 + 1, n, b_col, b_wrap, b_wrap_stride);       \
    __global const float* b2 = b + hgr_dot_column(j0 + 2, n, b_col, b_wrap, b_wrap_stride);       \
    __global const float* b3 = b + hgr_dot_column(j0 + 3, n, b_col, b_wrap, b_wrap_stride);       \
    HGR_REP(RM, HGR_DOT_ZERO, _, _)                                                               \
    int l = 0;                                                                                    \
    if (a_depth == 1 && b_depth == 1) {                                                           \
      for (; l + 8 <= k; l += 8) {                                                                \
        HGR_REP(RM, HGR_DOT_VLOAD_A, _, l)                                                        \
        const float8 bv0 = vload8(0, b0 + l), bv1 = vload8(0, b1 + l);                            \
        const float8 bv2 = vload8(0, b2 + l), bv3 = vload8(0, b3 + l);                            \
        HGR_REP(RM, HGR_DOT_MAD, _, _)                                                            \
      }                                                                                           \
    }                                                                                             \
    for (; l < k; l += 8) {                                                                       \
      HGR_REP(RM, HGR_DOT_GATHER_A, _, l)                                                         \
      const float8 bv0 = hgr_dot_gather(b0, b_depth, l, k), bv1 = hgr_dot_gather(b1, b_depth, l, k); \
      const float8 bv2 = hgr_dot_gather(b2, b_depth, l, k), bv3 = hgr_dot_gather(b3, b_depth, l, k); \
      HGR_REP(RM, HGR_DOT_MAD, _, _)                                                              \
    }                                                                                             \
    HGR_REP(RM, HGR_DOT_SUM, _, _)                                                                \
    HGR_GEMM_STORE(RM, 4, row0, j0, j0)                                                           \
  })

/* The variants, largest first, then the direct ones; runtime/ops_linalg.c lists the
 * same ones (keep them in step; the direct ones first there) with their relative
 * speeds. Local memory: 2 * (TY * RM + TX * RN) * BK floats (none for the direct
 * and dot ones, k * RN for the packed one). */
HGR_GEMM(8, 32, 4, 16, 32) /* 128 x 128 tiles, 256 items, 64 KiB */
HGR_GEMM(8, 16, 4, 16, 32) /* 64 x 128, 128 items, 48 KiB */
HGR_GEMM(4, 16, 4, 16, 32) /* 64 x 64, 64 items, 32 KiB */
HGR_GEMM(4, 4, 8, 8, 16)   /* 32 x 32, 16 items, 8 KiB */
HGR_GEMM(2, 2, 8, 8, 16)   /* 16 x 16, 4 items, 4 KiB */
HGR_GEMM(1, 1, 8, 8, 16)   /* 8 x 8, 1 item, 2 KiB */
HGR_GEMM(1, 1, 4, 4, 8)    /* 4 x 4, 1 item, 512 bytes */
HGR_GEMM_DIRECT(1, 8, 6, 16) /* 48 x 16, 8 items, no local memory */
HGR_GEMM_DIRECT_WIDE(8, 8)   /* 64 x 32, 8 items, no local memory */
HGR_GEMM_DIRECT_PACK(16, 6, 16) /* 96 x 16, 16 items, k * 64 bytes of local memory */
HGR_GEMM_DOT(16, 4) /* 64 x 4, 16 items, no local memory */

/* The same tiles for conv2d (runtime/ops/ops_conv.c) */
HGR_CONV_GEMM(8, 32, 4, 16, 32)
HGR_CONV_GEMM(8, 16, 4, 16, 32)
HGR_CONV_GEMM(4, 16, 4, 16, 32)
HGR_CONV_GEMM(4, 4, 8, 8, 16)
HGR_CONV_GEMM(2, 2, 8, 8, 16)
HGR_CONV_GEMM(1, 1, 8, 8, 16)
HGR_CONV_GEMM(1, 1, 4, 4, 8)

/* hgr_gemv_t4: the GEMM's arguments and meaning for one row of A (m == 1) and B
 * stored transposed with contiguous rows (b_depth == 1, no b_wrap): dense on a
 * single row of data, whose weights [units, in] are B's rows. A GEMM tile would
 * spend most of its time on the one-row A tile; this is a matrix-vector product,
 * bound by reading B once: each work-item (a work-group of one) takes 4 columns of
 * C and streams their 4 rows of B in float8s, so a CPU driver runs it as plain
 * vector code. NDRange (ceil(n / 4), 1, batch), local (1, 1, 1). A is read through
 * a_depth (any stride); bias_mode 1 (per column) or 0; act as the GEMM's; one
 * output (seg_n 0: the plan gives segments to the GEMM kernels only). */
#if HGR_WANTED(hgr_gemv_t4)
__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void hgr_gemv_t4(
    __global const float* restrict a, __global const float* restrict b, __global const float* restrict bias,
    __global float* restrict c, int m, int n, int k, int a_batch, int a_row, int a_depth, int b_batch, int b_depth,
    int b_col, int bias_mode, int act, float alpha, float a_min, float a_max, int b_wrap, int b_wrap_stride,
    HGR_OUT_LAYOUT_PARAMS, HGR_GEMM_SEG_PARAMS) {
  const int j0 = (int)get_group_id(0) * 4, p = (int)get_group_id(2);
  if (m < 1 || j0 >= n) return;
  a += p * a_batch;
  b += p * b_batch;
  /* rows past n repeat the last one (read, never stored) */
  __global const float* b0 = b + min(j0, n - 1) * b_col;
  __global const float* b1 = b + min(j0 + 1, n - 1) * b_col;
  __global const float* b2 = b + min(j0 + 2, n - 1) * b_col;
  __global const float* b3 = b + min(j0 + 3, n - 1) * b_col;
  float8 s0 = (float8)(0.0f), s1 = (float8)(0.0f), s2 = (float8)(0.0f), s3 = (float8)(0.0f);
  int l = 0;
  if (a_depth == 1) {
    for (; l + 8 <= k; l += 8) {
      const float8 x = vload8(0, a + l);
      s0 = x * vload8(0, b0 + l) + s0;
      s1 = x * vload8(0, b1 + l) + s1;
      s2 = x * vload8(0, b2 + l) + s2;
      s3 = x * vload8(0, b3 + l) + s3;
    }
  }
  float t0 = 0.0f, t1 = 0.0f, t2 = 0.0f, t3 = 0.0f;
  for (; l < k; ++l) {
    const float x = a[l * a_depth];
    t0 = x * b0[l] + t0;
    t1 = x * b1[l] + t1;
    t2 = x * b2[l] + t2;
    t3 = x * b3[l] + t3;
  }
  /* the horizontal sums through private memory: Oclgrind 21.10 mistakes the shadow
   * of the narrowing shuffles a direct sum compiles to (values "uninitialized") */
  float part[32];
  vstore8(s0, 0, part);
  vstore8(s1, 1, part);
  vstore8(s2, 2, part);
  vstore8(s3, 3, part);
  float sum[4] = {t0, t1, t2, t3};
  for (int r = 0; r < 4; ++r)
    for (int e = 0; e < 8; ++e) sum[r] += part[r * 8 + e];
  float4 out = vload4(0, sum);
  if (bias_mode == 1)
    out += (float4)(bias[min(j0, n - 1)], bias[min(j0 + 1, n - 1)], bias[min(j0 + 2, n - 1)],
                    bias[min(j0 + 3, n - 1)]);
  HGR_GEMM_ACT(float4, out)
  const uint e = (uint)p * (uint)m * (uint)n + (uint)j0; /* C's element (p, 0, j0) */
  if (out_d3) {
    vstore4(out, 0, sum);
    hgr_out_store(c, sum, min(4, n - j0), e, HGR_OUT_LAYOUT_ARGS);
  } else if (j0 + 4 <= n) {
    vstore4(out, 0, c + e);
  } else {
    c[e] = out.s0;
    if (j0 + 1 < n) c[e + 1] = out.s1;
    if (j0 + 2 < n) c[e + 2] = out.s2;
  }
}
#endif
