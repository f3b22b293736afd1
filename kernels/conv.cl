/* conv2d, float32, NCHW data, OIHW weights (runtime/ops_conv.c plans them).
 *
 * Every kernel takes the same arguments:
 *   (__global const float* x, __global const float* w, __global const float* bias,
 *    __global float* y, __global const int* meta [, __local float* xs, __local float* ws])
 * The epilogue (CONV_ACTIVATE) adds the bias, then applies relu, leaky_relu or
 * clip as meta[CONV_FLAGS] says, with their float parameters' bits in meta.
 * bias is read only when meta[CONV_FLAGS] has CONV_HAS_BIAS (the plan passes w
 * again otherwise); meta is the int32 array laid out by the CONV_* indices below.
 *
 * hgr_conv2d_direct: any groups, strides, dilations and padding. One work-item per
 *   output element; NDRange 1-D over N*K*OH*OW, rounded up (items past the end
 *   return).
 *
 * hgr_conv2d_direct_pool, hgr_conv2d_rows_pool_6x16x2[_k3|_k5]: conv2d with a max
 *   pool after its epilogue (conv2d's attr pool_size; meta[CONV_POOL_H],
 *   meta[CONV_POOL_W] appended), the output pooled: the direct kernel per pooled
 *   output, the register-blocked one for stride 1 and windows of 2 rows (below).
 *
 * hgr_conv2d_transpose_direct: conv2d_transpose (below), the same arguments and meta.
 *
 * hgr_conv2d_rows_6x16[_k3|_k5]: groups == 1, stride 1, dilation 1 (below): 6 output
 *   channels x 16 pixels per work-item in registers, no local memory; NDRange 3-D.
 *
 * hgr_conv2d_rows_6x16_s2[_k3|_k7], hgr_conv2d_rows_6x8x2_s2[_k3]: groups == 1,
 *   horizontal stride 2, dilation 1 (below): the same blocks, 16 pixels of one
 *   output row or 8 of two; NDRange 3-D.
 *
 * hgr_conv2d_s2_split, then hgr_conv2d_rows_6x16_s2s[_k3|_k7],
 *   hgr_conv2d_rows_6x8x2_s2s[_k3] or hgr_conv2d_rows_8x{32,16x2,8x4}_s2s[_k3]: the
 *   same convolutions in two launches through the node's scratch buffer (below;
 *   other arguments), the last with 8 output channels x 32 pixels per work-item.
 *
 * hgr_conv2d_pad, then hgr_conv2d_rows_8x32p[_k3]: the stride-1 convolutions of
 *   hgr_conv2d_rows_6x16 in two launches through the node's scratch buffer, 8
 *   output channels x 32 pixels per work-item (below; other arguments).
 *
 * hgr_conv2d_tiled_o<OCB>p<PXB>[s]: any groups (the plan takes it for groups == 1 and
 *   groups of at least 8 output channels). A work-group computes a block of
 *   TOC = OCB*LZ output channels x LY output rows x TOW = PXB*LX output columns of one
 *   image; each work-item a register block of OCB channels x PXB consecutive
 *   columns of one row (a floatPXB accumulator per channel). The input channels go
 *   by in chunks of CIT: the work-group copies the chunk's input tile (TIH x TIW,
 *   halo included, zeros for padding and anything out of range) into xs and the
 *   weights of its TOC channels into ws, then every work-item runs its block out of
 *   local memory, with no bounds checks in the inner loop. The variants with the
 *   "s" suffix (a horizontal stride SW > 1) store each input row as its SW phases
 *   (column col at (col % SW) * TIW / SW + col / SW, TIW a multiple of SW), so the
 *   SW-apart columns of a work-item's PXB outputs are consecutive there too and
 *   every variant loads them as one floatPXB (the phases replace a gather of PXB
 *   scalars: strided layers ran at half the speed of the others on PoCL).
 *   NDRange 3-D: local (LX, LY, LZ); global (LX * ceil(OW / TOW), LY * ceil(OH / LY),
 *   LZ * TILES_K * G * N) with TILES_K = ceil((K / G) / TOC): a block of channels never spans
 *   two groups; the input channels of a block are those of its group.
 *   xs holds CIT * TIH * TIW floats, ws TOC * CIT * KH * KW floats, with
 *   TIH = (LY - 1) * SH + (KH - 1) * DH + 1 and TIW = (TOW - 1) * SW + (KW - 1) * DW + 1
 *   (rounded up to a multiple of SW in the "s" variants).
 *   Work-items past the output's edge load and compute like the others (the tiles
 *   hold zeros there) and store nothing.
 *
 * CPU drivers run a work-group as loops over its work-items between barriers, so
 * the tiled kernels keep each chunk's accumulation in registers local to the region
 * between two barriers, and hide from PoCL's uniformity analysis that every
 * work-item runs the tap loops (see the comments inside): on PoCL 3.1 both together
 * make the kernel about 4x faster.
 */

#include "select.h"

#include "conv.h"

/* The unroll pragmas below are for the variants whose kernel size is a constant
 * (_k3, _k5, _k7); where it comes from meta, or a loop runs over a row range, the
 * compiler cannot unroll and LLVM says so ("loop not unrolled") for each such loop,
 * which PoCL prints on every build. The code is the same either way. */
#if defined(__clang__)
#pragma clang diagnostic ignored "-Wpass-failed"
#endif

/* Output (n, k, oh, ow) of the convolution as hgr_conv2d_direct computes it: the
 * taps, the bias, CONV_ACTIVATE. */
inline float conv_direct_at(__global const float* x, __global const float* w, __global const float* bias,
                            __global const int* meta, int n, int k, int oh, int ow) {
  const int C = meta[CONV_C], H = meta[CONV_H], W = meta[CONV_W], K = meta[CONV_K];
  const int KH = meta[CONV_KH], KW = meta[CONV_KW];
  const int SH = meta[CONV_SH], SW = meta[CONV_SW], DH = meta[CONV_DH], DW = meta[CONV_DW];
  const int PT = meta[CONV_PT], PL = meta[CONV_PL], G = meta[CONV_GROUPS], flags = meta[CONV_FLAGS];
  const int CG = C / G, KG = K / G, c_first = (k / KG) * CG;
  const int ih0 = oh * SH - PT, iw0 = ow * SW - PL;
  float acc = 0.0f;
  for (int c = 0; c < CG; ++c) {
    __global const float* xc = x + ((size_t)n * C + c_first + c) * H * W;
    __global const float* wc = w + ((size_t)k * CG + c) * KH * KW;
    for (int kh = 0; kh < KH; ++kh) {
      const int ih = ih0 + kh * DH;
      if (ih < 0 || ih >= H) continue;
      for (int kw = 0; kw < KW; ++kw) {
        const int iw = iw0 + kw * DW;
        if (iw >= 0 && iw < W) acc = mad(xc[ih * W + iw], wc[kh * KW + kw], acc);
      }
    }
  }
  if (flags & CONV_HAS_BIAS) acc += bias[k];
  CONV_ACTIVATE(float, acc, flags, meta);
  return acc;
}

#if HGR_WANTED(hgr_conv2d_direct)
__kernel void hgr_conv2d_direct(__global const float* x, __global const float* w, __global const float* bias,
                                __global float* y, __global const int* meta) {
  const int N = meta[CONV_N], K = meta[CONV_K], OH = meta[CONV_OH], OW = meta[CONV_OW];
  const size_t i = get_global_id(0);
  if (i >= (size_t)N * K * OH * OW) return;
  /* x - (x / e) * e, not x % e: beside x / e, LLVM rewrites a remainder with a
   * `freeze`, which Oclgrind 21.10's uninitialized-value checker cannot run. */
  const int row = (int)i / OW, ow = (int)i - row * OW;
  const int plane = row / OH, oh = row - plane * OH;
  const int n = plane / K, k = plane - n * K;
  y[i] = conv_direct_at(x, w, bias, meta, n, k, oh, ow);
}
#endif

/* hgr_conv2d_direct_pool: hgr_conv2d_direct followed by a max pool whose window is
 * its stride (meta[CONV_POOL_H] x meta[CONV_POOL_W]), without padding: one
 * work-item per pooled output (n, k, ph, pw), the max of the PH x PW outputs of its
 * window, each computed as hgr_conv2d_direct does. y is [N, K, OH / PH, OW / PW];
 * NDRange 1-D over its elements, rounded up. */
#if HGR_WANTED(hgr_conv2d_direct_pool)
__kernel void hgr_conv2d_direct_pool(__global const float* x, __global const float* w, __global const float* bias,
                                     __global float* y, __global const int* meta) {
  const int N = meta[CONV_N], K = meta[CONV_K], PH = meta[CONV_POOL_H], PW = meta[CONV_POOL_W];
  const int POH = meta[CONV_OH] / PH, POW = meta[CONV_OW] / PW;
  const size_t i = get_global_id(0);
  if (i >= (size_t)N * K * POH * POW) return;
  const int row = (int)i / POW, pw = (int)i - row * POW;
  const int plane = row / POH, ph = row - plane * POH;
  const int n = plane / K, k = plane - n * K;
  float m = -FLT_MAX;
  for (int dh = 0; dh < PH; ++dh)
    for (int dw = 0; dw < PW; ++dw) m = fmax(m, conv_direct_at(x, w, bias, meta, n, k, ph * PH + dh, pw * PW + dw));
  y[i] = m;
}
#endif

/* conv2d_transpose, weight [C, K / G, KH, KW]: output (n, k, oh, ow) gathers x(n, c,
 * ih, iw) * w(c, k - g * K / G, kh, kw) over the input channels c of k's group g
 * and the taps with oh = ih * SH - PT + kh * DH (likewise ow). Meta as conv2d's, K
 * the output channels; NDRange 1-D over N*K*OH*OW, rounded up. */
#if HGR_WANTED(hgr_conv2d_transpose_direct)
__kernel void hgr_conv2d_transpose_direct(__global const float* x, __global const float* w,
                                          __global const float* bias, __global float* y,
                                          __global const int* meta) {
  const int N = meta[CONV_N], C = meta[CONV_C], H = meta[CONV_H], W = meta[CONV_W], K = meta[CONV_K];
  const int OH = meta[CONV_OH], OW = meta[CONV_OW], KH = meta[CONV_KH], KW = meta[CONV_KW];
  const int SH = meta[CONV_SH], SW = meta[CONV_SW], DH = meta[CONV_DH], DW = meta[CONV_DW];
  const int PT = meta[CONV_PT], PL = meta[CONV_PL], G = meta[CONV_GROUPS], flags = meta[CONV_FLAGS];
  const size_t i = get_global_id(0);
  if (i >= (size_t)N * K * OH * OW) return;
  const int row = (int)i / OW, ow = (int)i - row * OW;
  const int plane = row / OH, oh = row - plane * OH;
  const int n = plane / K, k = plane - n * K;
  const int CG = C / G, KG = K / G, g = k / KG, kk = k - g * KG;
  float acc = 0.0f;
  for (int c = g * CG; c < (g + 1) * CG; ++c) {
    __global const float* xc = x + ((size_t)n * C + c) * H * W;
    __global const float* wc = w + ((size_t)c * KG + kk) * KH * KW;
    for (int kh = 0; kh < KH; ++kh) {
      const int th = oh + PT - kh * DH;
      if (th < 0) continue;
      const int ih = th / SH;
      if (ih * SH != th || ih >= H) continue;
      for (int kw = 0; kw < KW; ++kw) {
        const int tw = ow + PL - kw * DW;
        if (tw < 0) continue;
        const int iw = tw / SW;
        if (iw * SW == tw && iw < W) acc = mad(xc[ih * W + iw], wc[kh * KW + kw], acc);
      }
    }
  }
  if (flags & CONV_HAS_BIAS) acc += bias[k];
  CONV_ACTIVATE(float, acc, flags, meta);
  y[i] = acc;
}
#endif

/* conv2d_transpose, one group, after its GEMM (runtime/ops/ops_conv.c): cols [N, K *
 * KH * KW, H * W] holds every input pixel's contribution to every tap, cols[n, (k *
 * KH + kh) * KW + kw, ih * W + iw] = sum over c of w(c, k, kh, kw) * x(n, c, ih, iw);
 * output (n, k, oh, ow) sums the taps that land on it (oh = ih * SH - PT + kh * DH,
 * likewise ow: one where the kernel is the stride), then the bias and the epilogue.
 * One work-item per output row (n, k, oh), NDRange 1-D over N*K*OH rounded up: the
 * row's taps kh (one division each) and, per kw and block of CONV_GATHER_COLUMNS
 * output columns summed in private memory, the run of input columns that lands in
 * the block, with no division per element (a division per element and tap took 35
 * ms for a detector's 24 x 320 x 320 output on PoCL). Meta as conv2d's. */
#define CONV_GATHER_COLUMNS 64
#if HGR_WANTED(hgr_conv2d_transpose_gather)
__kernel void hgr_conv2d_transpose_gather(__global const float* cols, __global const float* bias, __global float* y,
                                          __global const int* meta) {
  const int N = meta[CONV_N], H = meta[CONV_H], W = meta[CONV_W], K = meta[CONV_K];
  const int OH = meta[CONV_OH], OW = meta[CONV_OW], KH = meta[CONV_KH], KW = meta[CONV_KW];
  const int SH = meta[CONV_SH], SW = meta[CONV_SW], DH = meta[CONV_DH], DW = meta[CONV_DW];
  const int PT = meta[CONV_PT], PL = meta[CONV_PL], flags = meta[CONV_FLAGS];
  const size_t r = get_global_id(0);
  if (r >= (size_t)N * K * OH) return;
  const int plane = (int)r / OH, oh = (int)r - plane * OH; /* plane = n * K + k */
  const int k = plane - plane / K * K;
  const float b = flags & CONV_HAS_BIAS ? bias[k] : 0.0f;
  __global const float* taps = cols + (size_t)plane * KH * KW * H * W;
  __global float* out = y + r * OW;
  for (int c0 = 0; c0 < OW; c0 += CONV_GATHER_COLUMNS) {
    const int count = min(CONV_GATHER_COLUMNS, OW - c0);
    float acc[CONV_GATHER_COLUMNS];
    for (int j = 0; j < count; ++j) acc[j] = b;
    for (int kh = 0; kh < KH; ++kh) {
      const int th = oh + PT - kh * DH;
      if (th < 0) continue;
      const int ih = th / SH;
      if (ih * SH != th || ih >= H) continue;
      for (int kw = 0; kw < KW; ++kw) {
        /* ow = iw * SW + shift in [c0, c0 + count) for iw in [first, last) */
        const int shift = kw * DW - PL, low = c0 - shift, high = c0 + count - 1 - shift;
        if (high < 0) continue;
        const int first = low <= 0 ? 0 : (low + SW - 1) / SW;
        const int last = min(W, high / SW + 1);
        __global const float* row = taps + ((size_t)kh * KW + kw) * H * W + (size_t)ih * W;
        for (int iw = first; iw < last; ++iw) acc[iw * SW + shift - c0] += row[iw];
      }
    }
    for (int j = 0; j < count; ++j) {
      float v = acc[j];
      CONV_ACTIVATE(float, v, flags, meta);
      out[c0 + j] = v;
    }
  }
}
#endif

#define CONV_TILED(NAME, OCB, PXB, DEINT)                                                                      \
  HGR_KERNEL_IF(NAME, \
  __kernel void NAME(__global const float* x, __global const float* w, __global const float* bias,            \
                     __global float* y, __global const int* meta, __local float* xs, __local float* ws) {     \
    const int C = meta[CONV_C], H = meta[CONV_H], W = meta[CONV_W], K = meta[CONV_K];                         \
    const int OH = meta[CONV_OH], OW = meta[CONV_OW], KH = meta[CONV_KH], KW = meta[CONV_KW];                 \
    const int SH = meta[CONV_SH], SW = meta[CONV_SW], DH = meta[CONV_DH], DW = meta[CONV_DW];                 \
    const int flags = meta[CONV_FLAGS], CIT = meta[CONV_CIT], TIH = meta[CONV_TIH], TIW = meta[CONV_TIW];     \
    const int tiles_k = meta[CONV_TILES_K];                                                                   \
    /* a row's phase: TIW / SW columns when DEINT (TIW is a multiple of SW) */                                \
    const int PART = DEINT ? TIW / SW : TIW;                                                                  \
    const int lx = (int)get_local_id(0), ly = (int)get_local_id(1), lz = (int)get_local_id(2);                \
    const int LX = (int)get_local_size(0), LY = (int)get_local_size(1), LZ = (int)get_local_size(2);          \
    const int tid = (lz * LY + ly) * LX + lx, threads = LX * LY * LZ;                                         \
    const int TOC = OCB * LZ, KHW = KH * KW, CHUNK = CIT * KHW;                                               \
    /* z: image n, group g, block of TOC channels within the group */                                         \
    const int G = meta[CONV_GROUPS], CG = C / G, KG = K / G;                                                  \
    const int gz = (int)get_group_id(2), ng = gz / tiles_k, n = ng / G, g = ng - n * G;                       \
    const int k0 = g * KG + (gz - ng * tiles_k) * TOC, k_end = k0 - (gz - ng * tiles_k) * TOC + KG;           \
    const int c_first = g * CG;                                                                               \
    const int oh0 = (int)get_group_id(1) * LY, ow0 = (int)get_group_id(0) * LX * PXB;                         \
    const int ih0 = oh0 * SH - meta[CONV_PT], iw0 = ow0 * SW - meta[CONV_PL];                                 \
    float##PXB acc[OCB];                                                                                      \
    for (int o = 0; o < OCB; ++o) acc[o] = (float##PXB)(0.0f);                                                \
    for (int c0 = 0; c0 < CG; c0 += CIT) {                                                                    \
      /* The input tile, one row of TIW per step; zeros outside the image. */                                \
      for (int row = tid; row < CIT * TIH; row += threads) {                                                  \
        const int c = row / TIH, ih = ih0 + row - c * TIH;                                                    \
        __local float* dst = xs + row * TIW;                                                                  \
        if (c0 + c < CG && ih >= 0 && ih < H) {                                                               \
          __global const float* src = x + (((size_t)n * C + c_first + c0 + c) * H + ih) * W;                  \
          /* DEINT: column col goes to (col % SW) * PART + col / SW */                                        \
          for (int phase = 0; phase < (DEINT ? SW : 1); ++phase) {                                            \
            __local float* out = dst + phase * PART;                                                          \
            for (int col = phase, q = 0; col < TIW; col += (DEINT ? SW : 1), ++q) {                           \
              const int iw = iw0 + col;                                                                       \
              float v = 0.0f;                                                                                 \
              if (iw >= 0 && iw < W) v = src[iw];                                                             \
              out[q] = v;                                                                                     \
            }                                                                                                 \
          }                                                                                                   \
        } else {                                                                                              \
          for (int col = 0; col < TIW; ++col) dst[col] = 0.0f;                                                \
        }                                                                                                     \
      }                                                                                                       \
      /* The weights of the TOC channels for this chunk: contiguous in OIHW. */                              \
      for (int row = tid; row < TOC; row += threads) {                                                        \
        const int k = k0 + row;                                                                               \
        const int valid = k < k_end ? min(CIT, CG - c0) * KHW : 0;                                            \
        __global const float* src = w + ((size_t)k * CG + c0) * KHW;                                          \
        __local float* dst = ws + row * CHUNK;                                                                \
        for (int j = 0; j < CHUNK; ++j) {                                                                     \
          float v = 0.0f;                                                                                     \
          if (j < valid) v = src[j];                                                                          \
          dst[j] = v;                                                                                         \
        }                                                                                                     \
      }                                                                                                       \
      barrier(CLK_LOCAL_MEM_FENCE);                                                                           \
      /* Always true; it hides from PoCL that every work-item runs these loops, or  \
       * PoCL would add implicit barriers to the innermost one and switch work-items \
       * around every tap, reloading the accumulators each time. */                 \
      if (tid < threads) {                                                                                    \
        /* The chunk accumulates in registers: acc lives across barriers, which a \
         * CPU driver keeps in memory per work-item. */                            \
        float##PXB r[OCB];                                                                                    \
        _Pragma("unroll") for (int o = 0; o < OCB; ++o) r[o] = acc[o];                                        \
        const __local float* wb = ws + lz * OCB * CHUNK;                                                      \
        const __local float* xb = xs + ly * SH * TIW + lx * PXB * (DEINT ? 1 : SW);                           \
        for (int c = 0; c < CIT; ++c) {                                                                       \
          for (int kh = 0; kh < KH; ++kh) {                                                                   \
            const __local float* xr = xb + (c * TIH + kh * DH) * TIW;                                         \
            const __local float* wr = wb + c * KHW + kh * KW;                                                 \
            for (int kw = 0; kw < KW; ++kw) {                                                                 \
              /* tap kw's columns: SW apart, consecutive in phase (kw DW) % SW */                             \
              const int tap = kw * DW, shift = DEINT ? tap / SW : tap;                                        \
              const int off = DEINT ? (tap - shift * SW) * PART + shift : tap;                                \
              const float##PXB xv = vload##PXB(0, xr + off);                                                  \
              /* a * b + c contracts to a fused multiply-add where the device has \
               * one (mad() did not, on PoCL) */                                   \
              _Pragma("unroll") for (int o = 0; o < OCB; ++o) r[o] += wr[o * CHUNK + kw] * xv;                \
            }                                                                                                 \
          }                                                                                                   \
        }                                                                                                     \
        _Pragma("unroll") for (int o = 0; o < OCB; ++o) acc[o] = r[o];                                        \
      }                                                                                                       \
      barrier(CLK_LOCAL_MEM_FENCE);                                                                           \
    }                                                                                                         \
    const int oh = oh0 + ly, ow = ow0 + lx * PXB;                                                             \
    if (oh < OH && ow < OW) {                                                                                 \
      for (int o = 0; o < OCB; ++o) {                                                                         \
        const int k = k0 + lz * OCB + o;                                                                      \
        if (k >= k_end) break;                                                                                \
        float##PXB v = acc[o];                                                                                \
        if (flags & CONV_HAS_BIAS) v += (float##PXB)(bias[k]);                                                \
        CONV_ACTIVATE(float##PXB, v, flags, meta);                                                            \
        __global float* dst = y + (((size_t)n * K + k) * OH + oh) * OW + ow;                                  \
        if (ow + PXB <= OW) {                                                                                 \
          vstore##PXB(v, 0, dst);                                                                             \
        } else {                                                                                              \
          float part[PXB];                                                                                    \
          vstore##PXB(v, 0, part);                                                                            \
          for (int j = 0; j < OW - ow; ++j) dst[j] = part[j];                                                 \
        }                                                                                                     \
      }                                                                                                       \
    }                                                                                                         \
  })

CONV_TILED(hgr_conv2d_tiled_o8p8, 8, 8, 0)
CONV_TILED(hgr_conv2d_tiled_o4p8, 4, 8, 0)
CONV_TILED(hgr_conv2d_tiled_o4p4, 4, 4, 0)
CONV_TILED(hgr_conv2d_tiled_o8p8s, 8, 8, 1)
CONV_TILED(hgr_conv2d_tiled_o4p4s, 4, 4, 1)

/* hgr_conv2d_depthwise: groups == C (one input channel per group), any multiplier
 * K / C, strides, dilations and padding. A work-item computes one output row of one
 * channel k (input channel k / (K / C)), 4 consecutive columns at a time as a
 * float4: per tap, 4 input values SW apart (one vload4 with SW == 1) times the tap's
 * weight. Blocks of 4 whose window lies inside the row skip the column checks.
 * NDRange 1-D over N * K * OH, rounded up (items past the end return). The variant
 * with the "3x3" suffix has KH = KW = 3 fixed and keeps the channel's 9 weights in
 * registers. (A work-item per block of 4 ran at half this speed on PoCL: the
 * per-item index math and meta loads cost more than the taps.) */
#define CONV_DEPTHWISE(NAME, KHC, KWC)                                                                         \
  HGR_KERNEL_IF(NAME, \
  __kernel void NAME(__global const float* x, __global const float* w, __global const float* bias,            \
                     __global float* y, __global const int* meta) {                                            \
    const int N = meta[CONV_N], C = meta[CONV_C], H = meta[CONV_H], W = meta[CONV_W], K = meta[CONV_K];       \
    const int OH = meta[CONV_OH], OW = meta[CONV_OW];                                                         \
    const int KH = KHC ? KHC : meta[CONV_KH], KW = KWC ? KWC : meta[CONV_KW];                                 \
    const int SH = meta[CONV_SH], SW = meta[CONV_SW], DH = meta[CONV_DH], DW = meta[CONV_DW];                 \
    const int flags = meta[CONV_FLAGS];                                                                       \
    const size_t i = get_global_id(0);                                                                        \
    if (i >= (size_t)N * K * OH) return;                                                                      \
    const int plane = (int)i / OH, oh = (int)i - plane * OH;                                                  \
    const int n = plane / K, k = plane - n * K, c = k / (K / C);                                              \
    const int ih0 = oh * SH - meta[CONV_PT];                                                                  \
    __global const float* xc = x + ((size_t)n * C + c) * H * W;                                               \
    __global const float* wk = w + (size_t)k * KH * KW;                                                       \
    float wr[KHC ? KHC * KWC : 1];                                                                            \
    for (int t = 0; t < (KHC ? KHC * KWC : 0); ++t) wr[t] = wk[t];                                            \
    const float b = (flags & CONV_HAS_BIAS) ? bias[k] : 0.0f;                                                 \
    __global float* yr = y + ((size_t)plane * OH + oh) * OW;                                                  \
    for (int ow0 = 0; ow0 < OW; ow0 += 4) {                                                                   \
      const int iw0 = ow0 * SW - meta[CONV_PL];                                                               \
      const bool inside = iw0 >= 0 && iw0 + 3 * SW + (KW - 1) * DW < W;                                       \
      float4 acc = (float4)(b);                                                                               \
      for (int kh = 0; kh < KH; ++kh) {                                                                       \
        const int ih = ih0 + kh * DH;                                                                         \
        if (ih < 0 || ih >= H) continue;                                                                      \
        __global const float* xr = xc + ih * W;                                                               \
        if (inside && SW == 1) {                                                                              \
          for (int kw = 0; kw < KW; ++kw)                                                                     \
            acc = mad(vload4(0, xr + iw0 + kw * DW), (float4)(KHC ? wr[kh * KW + kw] : wk[kh * KW + kw]), acc); \
        } else if (inside) {                                                                                  \
          for (int kw = 0; kw < KW; ++kw) {                                                                   \
            __global const float* p = xr + iw0 + kw * DW;                                                     \
            acc = mad((float4)(p[0], p[SW], p[2 * SW], p[3 * SW]),                                            \
                      (float4)(KHC ? wr[kh * KW + kw] : wk[kh * KW + kw]), acc);                              \
          }                                                                                                   \
        } else {                                                                                              \
          for (int kw = 0; kw < KW; ++kw) {                                                                   \
            const int iw = iw0 + kw * DW;                                                                     \
            float4 v;                                                                                         \
            v.s0 = iw >= 0 && iw < W ? xr[iw] : 0.0f;                                                         \
            v.s1 = iw + SW >= 0 && iw + SW < W ? xr[iw + SW] : 0.0f;                                          \
            v.s2 = iw + 2 * SW >= 0 && iw + 2 * SW < W ? xr[iw + 2 * SW] : 0.0f;                              \
            v.s3 = iw + 3 * SW >= 0 && iw + 3 * SW < W ? xr[iw + 3 * SW] : 0.0f;                              \
            acc = mad(v, (float4)(KHC ? wr[kh * KW + kw] : wk[kh * KW + kw]), acc);                           \
          }                                                                                                   \
        }                                                                                                     \
      }                                                                                                       \
      CONV_ACTIVATE(float4, acc, flags, meta);                                                                \
      if (ow0 + 4 <= OW) {                                                                                    \
        vstore4(acc, 0, yr + ow0);                                                                            \
      } else {                                                                                                \
        yr[ow0] = acc.s0;                                                                                     \
        if (ow0 + 1 < OW) yr[ow0 + 1] = acc.s1;                                                               \
        if (ow0 + 2 < OW) yr[ow0 + 2] = acc.s2;                                                               \
      }                                                                                                       \
    }                                                                                                         \
  })

CONV_DEPTHWISE(hgr_conv2d_depthwise, 0, 0)
CONV_DEPTHWISE(hgr_conv2d_depthwise3x3, 3, 3)

/* hgr_conv2d_rows_6x16[_k3|_k5]: groups == 1, stride 1, dilation 1, OW <= W (left
 * plus right padding at most KW - 1), at most CONV_ROWS_MAX_TAPS taps (KH * KW;
 * the _k3 and _k5 variants fix KH = KW = 3 or 5). Output pixels are taken on a grid
 * as wide as the input: grid pixel g = oh * W + ow (ow < W; those with ow >= OW
 * are computed and never stored), so tap (kh, kw) of every grid pixel is the input
 * at the same flat offset (kh - PT) * W + kw - PL from g in each input plane, and
 * 16 consecutive grid pixels read one contiguous run of 16 inputs per tap, across
 * row ends too (what the tap reads there, or above and below the image, is
 * padding: masked to zero). A work-item computes 6 output channels x 16 grid pixels
 * with the accumulators in registers across the whole C * KH * KW loop, as the
 * direct GEMM (kernels/linalg.cl, hgr_gemm_1x8_6x16_k1): per tap one vload16 of the
 * input, 6 broadcast weights (OIHW rows are contiguous along c, kh, kw), 6 float16
 * multiply-adds. Blocks whose 16 pixels read only inside the image run without
 * masks; the others AND each tap's input with a lane mask (computed once per
 * work-item; the mask zeroes without arithmetic, so infinities in the padding's
 * place cannot leak as NaN), and load lane by lane where the run would leave x.
 * The grid's last block is shifted left to end at the grid's end ((OH - 1) * W +
 * OW >= 16, which the plan checks), and stores only its own pixels.
 * NDRange 3-D: global (ceil(((OH - 1) * W + OW) / 16), ceil(K / 6) rounded up to
 * local[1], N); any local size (the plan takes (1, up to 8, 1): the work-items of a
 * group share their block of input pixels in cache). Items past K return. */
/* The register-blocked kernels' epilogue of output channel k on its block v: the
 * bias (when meta's flags have one), then CONV_ACTIVATE. */
inline float16 conv_rows_epilogue(float16 v, int k, __global const float* bias, int flags,
                                  __global const int* meta) {
  if (flags & CONV_HAS_BIAS) v += (float16)(bias[k]);
  CONV_ACTIVATE(float16, v, flags, meta);
  return v;
}
#define CONV_ROWS_MAX_TAPS 25
#define CONV_R6(X) X(0) X(1) X(2) X(3) X(4) X(5)
#define CONV_ROWS_W(r) __global const float* w##r = w + (size_t)min(k0 + r, K - 1) * C * KHW;
#define CONV_ROWS_ZERO(r) float16 acc##r = (float16)(0.0f);
#define CONV_ROWS_MAD(r) acc##r = (float16)(w##r[wt]) * v + acc##r;
#define CONV_ROWS_SAVE(r) acc[r] = acc##r;
/* One input channel c of a masked block, inside CONV_ROWS: CHECKED 1 loads lane by
 * lane the runs that would leave x. */
#define CONV_ROWS_MASKED_CHANNEL(CHECKED)                                                                      \
  {                                                                                                           \
    const int xc = base + c * HW;                                                                             \
    for (int kh = 0; kh < KH; ++kh) {                                                                         \
      _Pragma("unroll") for (int kw = 0; kw < KW; ++kw) {                                                     \
        const int t = kh * KW + kw, at = xc + kh * W + kw;                                                    \
        float16 v;                                                                                            \
        if (!CHECKED || (at >= 0 && at <= total - 16)) {                                                      \
          v = vload16(0, x + at);                                                                             \
        } else {                                                                                              \
          /* only the lanes that read the image load */                                                       \
          float part[16];                                                                                     \
          int lanes[16];                                                                                      \
          vstore16(mask[t], 0, lanes);                                                                        \
          for (int j = 0; j < 16; ++j) part[j] = lanes[j] ? x[at + j] : 0.0f;                                 \
          v = vload16(0, part);                                                                               \
        }                                                                                                     \
        v = as_float16(as_int16(v) & mask[t]);                                                                \
        const int wt = c * KHW + t;                                                                           \
        CONV_R6(CONV_ROWS_MAD)                                                                                \
      }                                                                                                       \
    }                                                                                                         \
  }
#define CONV_ROWS(NAME, KHC, KWC)                                                                              \
  HGR_KERNEL_IF(NAME, \
  __kernel void NAME(__global const float* restrict x, __global const float* restrict w,                      \
                     __global const float* restrict bias, __global float* restrict y,                         \
                     __global const int* restrict meta) {                                                      \
    const int N = meta[CONV_N], C = meta[CONV_C], H = meta[CONV_H], W = meta[CONV_W], K = meta[CONV_K];       \
    const int OH = meta[CONV_OH], OW = meta[CONV_OW];                                                         \
    const int KH = KHC ? KHC : meta[CONV_KH], KW = KWC ? KWC : meta[CONV_KW], KHW = KH * KW;                  \
    const int PT = meta[CONV_PT], PL = meta[CONV_PL], flags = meta[CONV_FLAGS];                               \
    const int grid = (OH - 1) * W + OW, HW = H * W;                                                           \
    const int g0 = (int)get_global_id(0) * 16, k0 = (int)get_global_id(1) * 6, n = (int)get_global_id(2);     \
    if (g0 >= grid || k0 >= K || n >= N) return;                                                              \
    /* the last block ends at the grid's end */                                                               \
    const int gb = g0 + 16 > grid ? grid - 16 : g0;                                                           \
    /* flat offset in x of tap (0, 0) of the block's first pixel, in channel 0 */                             \
    const int base = n * C * HW + gb - PT * W - PL, total = N * C * HW;                                       \
    CONV_R6(CONV_ROWS_W)                                                                                      \
    CONV_R6(CONV_ROWS_ZERO)                                                                                   \
    /* inside: the block lies in one row whose every tap reads the image */                                   \
    const int oh_first = gb / W, ow_first = gb - oh_first * W;                                                \
    const bool inside = ow_first + 15 < W && oh_first >= PT && oh_first - PT + KH <= H && ow_first >= PL &&  \
                        ow_first + 15 - PL + KW <= W;                                                         \
    if (inside) {                                                                                             \
      for (int c = 0; c < C; ++c) {                                                                           \
        __global const float* xc = x + base + c * HW;                                                         \
        for (int kh = 0; kh < KH; ++kh) {                                                                     \
          _Pragma("unroll") for (int kw = 0; kw < KW; ++kw) {                                                 \
            const float16 v = vload16(0, xc + kh * W + kw);                                                   \
            const int wt = c * KHW + kh * KW + kw;                                                            \
            CONV_R6(CONV_ROWS_MAD)                                                                            \
          }                                                                                                   \
        }                                                                                                     \
      }                                                                                                       \
    } else {                                                                                                  \
      /* mask[t] lane j: tap t of pixel gb + j reads the image; the lanes' rows and   \
       * columns walk on from the first one's (no division per lane) */              \
      int lane_oh[16], lane_ow[16];                                                                           \
      for (int j = 0, oh = oh_first, ow = ow_first; j < 16; ++j) {                                            \
        lane_oh[j] = oh;                                                                                      \
        lane_ow[j] = ow;                                                                                      \
        if (++ow == W) {                                                                                      \
          ow = 0;                                                                                             \
          ++oh;                                                                                               \
        }                                                                                                     \
      }                                                                                                       \
      int16 mask[KHC ? KHC * KWC : CONV_ROWS_MAX_TAPS];                                                       \
      for (int kh = 0; kh < KH; ++kh) {                                                                       \
        for (int kw = 0; kw < KW; ++kw) {                                                                     \
          int lanes[16];                                                                                      \
          for (int j = 0; j < 16; ++j) {                                                                      \
            const int ih = lane_oh[j] + kh - PT, iw = lane_ow[j] + kw - PL;                                   \
            lanes[j] = ih >= 0 && ih < H && iw >= 0 && iw < W ? -1 : 0;                                       \
          }                                                                                                   \
          mask[kh * KW + kw] = vload16(0, lanes);                                                             \
        }                                                                                                     \
      }                                                                                                       \
      /* channels [c_lo, c_hi) read whole runs inside x; the few others (the first    \
       * and last planes of x) check */                                               \
      const int c_lo = base >= 0 ? 0 : min(C, (HW - 1 - base) / HW);                                          \
      const int last = total - 16 - base - (KH - 1) * W - (KW - 1);                                           \
      const int c_hi = last < 0 ? c_lo : clamp(last / HW + 1, c_lo, C);                                       \
      for (int c = 0; c < c_lo; ++c) CONV_ROWS_MASKED_CHANNEL(1)                                              \
      for (int c = c_lo; c < c_hi; ++c) CONV_ROWS_MASKED_CHANNEL(0)                                           \
      for (int c = c_hi; c < C; ++c) CONV_ROWS_MASKED_CHANNEL(1)                                              \
    }                                                                                                         \
    /* the epilogue (bias, CONV_ACTIVATE), stored at the block's own pixels with ow < OW */                  \
    float16 acc[6];                                                                                           \
    CONV_R6(CONV_ROWS_SAVE)                                                                                   \
    int dst[16];                                                                                              \
    for (int j = 0, oh = oh_first, ow = ow_first; j < 16; ++j) {                                              \
      dst[j] = gb + j >= g0 && ow < OW ? oh * OW + ow : -1;                                                   \
      if (++ow == W) {                                                                                        \
        ow = 0;                                                                                               \
        ++oh;                                                                                                 \
      }                                                                                                       \
    }                                                                                                         \
    const bool whole = gb == g0 && OW == W; /* the block's pixels are 16 consecutive outputs */               \
    for (int r = 0; r < 6; ++r) {                                                                             \
      const int k = k0 + r;                                                                                   \
      if (k >= K) break;                                                                                      \
      const float16 v = conv_rows_epilogue(acc[r], k, bias, flags, meta);                                     \
      __global float* yk = y + ((size_t)n * K + k) * OH * OW;                                                 \
      if (whole) {                                                                                            \
        vstore16(v, 0, yk + g0);                                                                              \
      } else {                                                                                                \
        float part[16];                                                                                       \
        vstore16(v, 0, part);                                                                                 \
        for (int j = 0; j < 16; ++j)                                                                          \
          if (dst[j] >= 0) yk[dst[j]] = part[j];                                                              \
      }                                                                                                       \
    }                                                                                                         \
  })

CONV_ROWS(hgr_conv2d_rows_6x16_k3, 3, 3)
CONV_ROWS(hgr_conv2d_rows_6x16_k5, 5, 5)
CONV_ROWS(hgr_conv2d_rows_6x16, 0, 0)

/* hgr_conv2d_rows_pool_6x16x2[_k3|_k5]: conv2d followed by a max pool of 2 rows x PW
 * columns (meta[CONV_POOL_W], 1 or 2), its window its stride, without padding (the
 * attr pool_size; runtime/ops/ops_conv.c plans it where is_rows_pool takes it):
 * groups == 1, stride 1, dilation 1, at most CONV_ROWS_MAX_TAPS taps (the _k3 and
 * _k5 variants fix KH = KW = 3 or 5). The convolution's outputs are never stored. A
 * work-item computes 6 output channels x 16 consecutive columns (ow0 .. ow0 + 15) of
 * both output rows that pooled row ph reads (2 * ph and 2 * ph + 1), with the 12
 * float16 accumulators in registers across the whole loop over the channels and
 * the KH + 1 input rows those two rows read: tap column kw of each input row is
 * one vload16 that feeds both rows' accumulators (6 broadcast weights each, as in
 * hgr_conv2d_rows_6x16). The epilogue (bias, CONV_ACTIVATE) goes on every output
 * of the convolution, then the max over the window: of the two rows, then with
 * PW == 2 of even and odd lanes; 16 / PW pooled outputs are stored. A pooled row
 * has POW = OW / PW outputs (the columns past POW * PW, which the pool drops, are
 * never computed) and is taken in blocks of 16 columns of the convolution, the last
 * shifted left to end at column POW * PW, storing only the outputs the block before
 * it did not; a row narrower than 16 is one block whose lanes past it are computed
 * (their taps masked) and never stored. Blocks whose taps all read
 * inside the image run without masks; the others AND each tap's inputs with a lane
 * mask per kw, skip input rows above and below the image, and load lane by lane
 * where a run would leave x. NDRange 3-D: global (POH * ceil(POW * PW / 16),
 * ceil(K / 6) rounded up to local[1], N) with POH = OH / 2; items past K return. */
#define CONV_POOL_ZERO(r) float16 top##r = (float16)(0.0f), bottom##r = (float16)(0.0f);
#define CONV_POOL_TOP(r) top##r = (float16)(w##r[wt]) * v + top##r;
#define CONV_POOL_BOTTOM(r) bottom##r = (float16)(w##r[wt]) * v + bottom##r;
#define CONV_POOL_SAVE(r) tops[r] = top##r, bottoms[r] = bottom##r;
/* Input row i (0 .. KH) of channel c, tap column kw, loaded in v: weight row i of
 * the top output row, weight row i - 1 of the bottom one. */
#define CONV_POOL_TAPS                                           \
  if (i < KH) {                                                  \
    const int wt = c * KHW + i * KW + kw;                        \
    CONV_R6(CONV_POOL_TOP)                                       \
  }                                                              \
  if (i > 0) {                                                   \
    const int wt = c * KHW + (i - 1) * KW + kw;                  \
    CONV_R6(CONV_POOL_BOTTOM)                                    \
  }
#define CONV_ROWS_POOL(NAME, KHC, KWC)                                                                         \
  HGR_KERNEL_IF(NAME, \
  __kernel void NAME(__global const float* restrict x, __global const float* restrict w,                      \
                     __global const float* restrict bias, __global float* restrict y,                         \
                     __global const int* restrict meta) {                                                      \
    const int N = meta[CONV_N], C = meta[CONV_C], H = meta[CONV_H], W = meta[CONV_W], K = meta[CONV_K];       \
    const int KH = KHC ? KHC : meta[CONV_KH], KW = KWC ? KWC : meta[CONV_KW], KHW = KH * KW;                  \
    const int PT = meta[CONV_PT], PL = meta[CONV_PL], flags = meta[CONV_FLAGS], PW = meta[CONV_POOL_W];       \
    const int POH = meta[CONV_OH] / 2, POW = meta[CONV_OW] / PW, CW = POW * PW, HW = H * W;                  \
    const int blocks = (CW + 15) / 16;                                                                        \
    const int item = (int)get_global_id(0), k0 = (int)get_global_id(1) * 6, n = (int)get_global_id(2);       \
    if (item >= POH * blocks || k0 >= K || n >= N) return;                                                    \
    const int ph = item / blocks, block = item - ph * blocks;                                                 \
    /* the last block ends at column CW (a row narrower than 16 is one block from 0); */                      \
    /* its lanes skip .. end - 1 are its own (the block before stored those below skip) */                    \
    const int ow0 = max(min(block * 16, CW - 16), 0), skip = block * 16 - ow0, end = min(16, CW - ow0);       \
    /* flat offset in x of input row 0 (of KH + 1), tap column 0, the block's first column, channel 0 */      \
    const int ih0 = 2 * ph - PT, base = n * C * HW + ih0 * W + ow0 - PL, total = N * C * HW;                  \
    CONV_R6(CONV_ROWS_W)                                                                                      \
    CONV_R6(CONV_POOL_ZERO)                                                                                   \
    const bool inside = ih0 >= 0 && ih0 + KH + 1 <= H && ow0 >= PL && ow0 + 15 - PL + KW <= W;                \
    if (inside) {                                                                                             \
      for (int c = 0; c < C; ++c) {                                                                           \
        __global const float* xc = x + base + c * HW;                                                         \
        _Pragma("unroll") for (int i = 0; i <= KH; ++i) {                                                     \
          _Pragma("unroll") for (int kw = 0; kw < KW; ++kw) {                                                 \
            const float16 v = vload16(0, xc + i * W + kw);                                                    \
            CONV_POOL_TAPS                                                                                    \
          }                                                                                                   \
        }                                                                                                     \
      }                                                                                                       \
    } else {                                                                                                  \
      /* mask[kw] lane j: column ow0 + j + kw - PL lies in the image */                                       \
      int16 mask[KWC ? KWC : CONV_ROWS_MAX_TAPS];                                                             \
      for (int kw = 0; kw < KW; ++kw) {                                                                       \
        int lanes[16];                                                                                        \
        for (int j = 0; j < 16; ++j) {                                                                        \
          const int iw = ow0 + j + kw - PL;                                                                   \
          lanes[j] = iw >= 0 && iw < W ? -1 : 0;                                                              \
        }                                                                                                     \
        mask[kw] = vload16(0, lanes);                                                                         \
      }                                                                                                       \
      for (int c = 0; c < C; ++c) {                                                                           \
        for (int i = 0; i <= KH; ++i) {                                                                       \
          if (ih0 + i < 0 || ih0 + i >= H) continue; /* padding rows add nothing */                          \
          _Pragma("unroll") for (int kw = 0; kw < KW; ++kw) {                                                 \
            const int at = base + c * HW + i * W + kw;                                                        \
            float16 v;                                                                                        \
            if (at >= 0 && at <= total - 16) {                                                                \
              v = vload16(0, x + at);                                                                         \
            } else {                                                                                          \
              /* only the lanes that read the image load */                                                   \
              float part[16];                                                                                 \
              int lanes[16];                                                                                  \
              vstore16(mask[kw], 0, lanes);                                                                   \
              for (int j = 0; j < 16; ++j) part[j] = lanes[j] ? x[at + j] : 0.0f;                             \
              v = vload16(0, part);                                                                           \
            }                                                                                                 \
            v = as_float16(as_int16(v) & mask[kw]);                                                           \
            CONV_POOL_TAPS                                                                                    \
          }                                                                                                   \
        }                                                                                                     \
      }                                                                                                       \
    }                                                                                                         \
    /* the epilogue on each output of the convolution, then the window's max */                              \
    float16 tops[6], bottoms[6];                                                                              \
    CONV_R6(CONV_POOL_SAVE)                                                                                   \
    for (int r = 0; r < 6; ++r) {                                                                             \
      const int k = k0 + r;                                                                                   \
      if (k >= K) break;                                                                                      \
      const float16 v = fmax(conv_rows_epilogue(tops[r], k, bias, flags, meta),                              \
                             conv_rows_epilogue(bottoms[r], k, bias, flags, meta));                           \
      __global float* yk = y + ((size_t)n * K + k) * POH * POW + (size_t)ph * POW;                          \
      if (PW == 2) {                                                                                          \
        /* lane by lane: .even and .odd made Oclgrind 21.10 report uninitialized values */                   \
        float part[16];                                                                                       \
        vstore16(v, 0, part);                                                                                 \
        for (int j = skip / 2; j < end / 2; ++j) yk[ow0 / 2 + j] = fmax(part[2 * j], part[2 * j + 1]);        \
      } else if (!skip && end == 16) {                                                                        \
        vstore16(v, 0, yk + ow0);                                                                             \
      } else {                                                                                                \
        float part[16];                                                                                       \
        vstore16(v, 0, part);                                                                                 \
        for (int j = skip; j < end; ++j) yk[ow0 + j] = part[j];                                               \
      }                                                                                                       \
    }                                                                                                         \
  })

CONV_ROWS_POOL(hgr_conv2d_rows_pool_6x16x2_k3, 3, 3)
CONV_ROWS_POOL(hgr_conv2d_rows_pool_6x16x2_k5, 5, 5)
CONV_ROWS_POOL(hgr_conv2d_rows_pool_6x16x2, 0, 0)

/* hgr_conv2d_rows_6x16_s2[_k3|_k7] and hgr_conv2d_rows_6x8x2_s2[_k3]: groups == 1,
 * horizontal stride 2, any vertical stride, dilation 1, KW <= CONV_ROWS_S2_MAX_KW
 * (the _k3 and _k7 variants fix KH = KW = 3 or 7). A work-item computes 6 output
 * channels x 16 pixels, with the accumulators in registers across the whole
 * C * KH * KW loop as hgr_conv2d_rows_6x16: in the 6x16 kernels 16 consecutive
 * pixels of one output row (ow0 .. ow0 + 15), in the 6x8x2 ones 8 consecutive
 * pixels (ow0 .. ow0 + 7) of two output rows (oh0 and oh0 + 1, lanes 0-7 and
 * 8-15), for rows of at most 8 outputs; lanes past OW or OH are computed and never
 * stored. Tap (kh, kw) of a row's 16 (8) pixels reads 16 (8) inputs 2 apart in input
 * row oh * SH + kh - PT, from column ow0 * 2 + kw - PL: 16 pixels, the even lanes of
 * 31 consecutive floats, loaded as the even half of one vload16 and the odd half of
 * the vload16 15 floats on (so nothing past the 31st float is read); 8 pixels, the
 * even half of one vload16 (16 floats, the last unused). Blocks whose taps all read
 * the image run without masks, rows of taps outside it skipped; the others AND each
 * tap's input with a lane mask (it zeroes without arithmetic): in the _k3
 * kernels one per tap, for columns and rows, over every tap unrolled; in the others
 * one per kw, skipping the rows outside the image for all 16 pixels (6x16) or
 * masking them per row (6x8x2). Where the floats would leave x (taps of the first
 * and last planes of x only) they gather lane by lane.
 * NDRange 3-D: global (ceil(OH / R) * ceil(OW / PX), ceil(K / 6) rounded up to
 * local[1], N), R = 1 and PX = 16 (6x16), R = 2 and PX = 8 (6x8x2); any local size
 * (the plan takes (1, up to 8, 1)). Items past K return. */
#define CONV_ROWS_S2_MAX_KW 11
#define CONV_ROWS_S2_TAP16(p) (float16)(vload16(0, (p)).even, vload16(0, (p) + 15).odd)
/* A tap's 16 inputs from p: one row's, or (R == 2) the even floats of 16 from p and
 * of 16 from the row RS floats further on. (Loads of 8 floats put together, with
 * .even/.odd, shuffle2 or components, made Oclgrind 21.10's uninitialized-value
 * checker report the outputs or stop.) */
#define CONV_ROWS_S2_TAP(R, p) \
  ((R) == 1 ? CONV_ROWS_S2_TAP16(p) : (float16)(vload16(0, (p)).even, vload16(0, (p) + RS).even))
/* Only the loops of the channels that run unchecked unroll: the checked ones are a
 * plane or two, and unrolled they took PoCL 3.1 longer to compile than the rest. */
#define CONV_ROWS_S2_UNROLL_0 _Pragma("unroll")
#define CONV_ROWS_S2_UNROLL_1 _Pragma("unroll 1")
/* One input channel c of a masked block, inside CONV_ROWS_S2: CHECKED 1 gathers lane
 * by lane the taps whose floats would leave x. TAPS (the _k3 kernels): every tap
 * runs, unrolled, under its own mask (zero for rows outside the image); else the
 * rows [kh_lo, kh_hi), each tap under its column's mask and (R == 2) its rows'. In
 * the kh-range loop PoCL 3.1 copied the 12 accumulator registers around twice per
 * kh (4.7 instructions per FMA, against 2.5 unrolled); on the 7x7 stem the per-tap
 * masks measured slower (1.13x, bench/notes.md), so _k7 keeps the loop. */
#define CONV_ROWS_S2_MASKED_CHANNEL(TAPS, R, CHECKED)                                                         \
  {                                                                                                           \
    const int xc = base + c * HW;                                                                             \
    CONV_ROWS_S2_UNROLL_##CHECKED for (int kh = TAPS ? 0 : kh_lo; kh < (TAPS ? KH : kh_hi); ++kh) {           \
      /* R == 2: lanes 0-7 read row ih0 + kh, lanes 8-15 row ih0 + SH + kh */                                 \
      const int16 ih = (int16)(ih0 + kh) + (int16)(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1) * SH;      \
      const int16 rows = TAPS || (R) == 1 ? (int16)(-1) : ih >= (int16)(0) & ih < (int16)(H);                 \
      CONV_ROWS_S2_UNROLL_##CHECKED for (int kw = 0; kw < KW; ++kw) {                                         \
        const int at = xc + kh * W + kw;                                                                      \
        const int16 m = TAPS ? mask[kh * KW + kw] : mask[kw] & rows;                                          \
        float16 v;                                                                                            \
        if (!CHECKED || (at >= 0 && at <= total - SPAN)) {                                                    \
          v = CONV_ROWS_S2_TAP(R, x + at);                                                                    \
        } else {                                                                                              \
          /* only the lanes that read the image load */                                                       \
          float part[16];                                                                                     \
          int lanes[16];                                                                                      \
          vstore16(m, 0, lanes);                                                                              \
          for (int j = 0; j < 16; ++j) {                                                                      \
            part[j] = lanes[j] ? x[at + (j / PX) * RS + 2 * (j % PX)] : 0.0f;                                 \
          }                                                                                                   \
          v = vload16(0, part);                                                                               \
        }                                                                                                     \
        v = as_float16(as_int16(v) & m);                                                                      \
        const int wt = c * KHW + kh * KW + kw;                                                                \
        CONV_R6(CONV_ROWS_MAD)                                                                                \
      }                                                                                                       \
    }                                                                                                         \
  }
/* The epilogue of the strided rows kernels (bias, CONV_ACTIVATE) on acc0..acc5,
 * stored at the block's pixels with ow < OW and oh < OH: R rows of PX pixels from
 * (oh0, ow0), output channels k0 .. k0 + 5 of image n. */
#define CONV_ROWS_S2_EPILOGUE(R, PX)                                                                          \
  float16 acc[6];                                                                                             \
  CONV_R6(CONV_ROWS_SAVE)                                                                                     \
  const int count = min((PX), OW - ow0), out_rows = min((R), OH - oh0);                                       \
  for (int r = 0; r < 6; ++r) {                                                                               \
    const int k = k0 + r;                                                                                     \
    if (k >= K) break;                                                                                        \
    const float16 v = conv_rows_epilogue(acc[r], k, bias, flags, meta);                                       \
    __global float* yr = y + (((size_t)n * K + k) * OH + oh0) * OW + ow0;                                     \
    if ((R) == 1 && count == 16) {                                                                            \
      /* back in pixel order */                                                                               \
      vstore16(v, 0, yr);                                                                                     \
    } else {                                                                                                  \
      float part[16];                                                                                         \
      vstore16(v, 0, part);                                                                                   \
      for (int i = 0; i < out_rows; ++i)                                                                      \
        for (int j = 0; j < count; ++j) yr[i * OW + j] = part[i * (PX) + j];                                  \
    }                                                                                                         \
  }
#define CONV_ROWS_S2(NAME, KHC, KWC, R, TAPS)                                                                 \
  HGR_KERNEL_IF(NAME, \
  __kernel void NAME(__global const float* restrict x, __global const float* restrict w,                      \
                     __global const float* restrict bias, __global float* restrict y,                         \
                     __global const int* restrict meta) {                                                     \
    const int N = meta[CONV_N], C = meta[CONV_C], H = meta[CONV_H], W = meta[CONV_W], K = meta[CONV_K];       \
    const int OH = meta[CONV_OH], OW = meta[CONV_OW], SH = meta[CONV_SH];                                     \
    const int KH = KHC ? KHC : meta[CONV_KH], KW = KWC ? KWC : meta[CONV_KW], KHW = KH * KW;                  \
    const int PT = meta[CONV_PT], PL = meta[CONV_PL], flags = meta[CONV_FLAGS];                               \
    /* PX pixels per row; the second row's inputs RS floats after the first's; a                              \
     * tap reads SPAN floats */                                                                               \
    const int PX = 16 / (R), RS = SH * W, SPAN = (R) == 1 ? 31 : RS + 16;                                     \
    const int blocks_w = (OW + PX - 1) / PX, HW = H * W, total = N * C * HW;                                  \
    const int b = (int)get_global_id(0), k0 = (int)get_global_id(1) * 6, n = (int)get_global_id(2);           \
    if (b >= (OH + (R) - 1) / (R) * blocks_w || k0 >= K || n >= N) return;                                    \
    const int rb = b / blocks_w, oh0 = rb * (R), ow0 = (b - rb * blocks_w) * PX;                              \
    const int ih0 = oh0 * SH - PT, iw0 = ow0 * 2 - PL;                                                        \
    /* flat offset in x of tap (0, 0) of the block's first pixel, in channel 0 */                             \
    const int base = n * C * HW + ih0 * W + iw0;                                                              \
    /* the taps' rows inside the image for some row of the block (kh_lo: for its last                         \
     * row, kh_hi: for its first); inside: for every row */                                                   \
    const int kh_lo = max(0, -(ih0 + ((R) - 1) * SH)), kh_hi = min(KH, H - ih0);                              \
    const bool rows_inside = (R) == 1 || (ih0 >= 0 && ih0 + ((R) - 1) * SH + KH <= H);                        \
    CONV_R6(CONV_ROWS_W)                                                                                      \
    CONV_R6(CONV_ROWS_ZERO)                                                                                   \
    /* inside: every tap's floats lie in its row */                                                           \
    if (rows_inside && iw0 >= 0 && iw0 + (PX - 1) * 2 + KW - 1 + (R) - 1 < W) {                               \
      for (int c = 0; c < C; ++c) {                                                                           \
        __global const float* xc = x + base + c * HW;                                                         \
        for (int kh = kh_lo; kh < kh_hi; ++kh) {                                                              \
          _Pragma("unroll") for (int kw = 0; kw < KW; ++kw) {                                                 \
            const float16 v = CONV_ROWS_S2_TAP(R, xc + kh * W + kw);                                          \
            const int wt = c * KHW + kh * KW + kw;                                                            \
            CONV_R6(CONV_ROWS_MAD)                                                                            \
          }                                                                                                   \
        }                                                                                                     \
      }                                                                                                       \
    } else {                                                                                                  \
      /* TAPS: mask[kh * KW + kw] lane j: tap (kh, kw) of the lane's pixel reads the                          \
       * image; else mask[kw] lane j: column iw0 + 2 * (j % PX) + kw is inside it */                          \
      int16 mask[TAPS ? KHC * KWC : KWC ? KWC : CONV_ROWS_S2_MAX_KW];                                         \
      for (int kh = 0; kh < (TAPS ? KH : 1); ++kh) {                                                          \
        for (int kw = 0; kw < KW; ++kw) {                                                                     \
          int lanes[16];                                                                                      \
          for (int j = 0; j < 16; ++j) {                                                                      \
            const int ih = ih0 + (j / PX) * SH + kh, iw = iw0 + 2 * (j % PX) + kw;                            \
            lanes[j] = (!TAPS || (ih >= 0 && ih < H)) && iw >= 0 && iw < W ? -1 : 0;                          \
          }                                                                                                   \
          mask[kh * KW + kw] = vload16(0, lanes);                                                             \
        }                                                                                                     \
      }                                                                                                       \
      /* channels [c_lo, c_hi) read their floats inside x; the few others (the first                          \
       * plane of x, the last) check */                                                                       \
      const int kh_first = TAPS ? 0 : kh_lo, kh_last = TAPS ? KH - 1 : kh_hi - 1;                             \
      const int lo = base + kh_first * W, hi = base + kh_last * W + KW - 1 + SPAN - 1;                        \
      const int c_lo = lo >= 0 ? 0 : min(C, (HW - 1 - lo) / HW);                                              \
      const int last = total - 1 - hi;                                                                        \
      const int c_hi = last < 0 ? c_lo : clamp(last / HW + 1, c_lo, C);                                       \
      for (int c = 0; c < c_lo; ++c) CONV_ROWS_S2_MASKED_CHANNEL(TAPS, R, 1)                                  \
      for (int c = c_lo; c < c_hi; ++c) CONV_ROWS_S2_MASKED_CHANNEL(TAPS, R, 0)                               \
      for (int c = c_hi; c < C; ++c) CONV_ROWS_S2_MASKED_CHANNEL(TAPS, R, 1)                                  \
    }                                                                                                         \
    CONV_ROWS_S2_EPILOGUE(R, PX)                                                                              \
  })

CONV_ROWS_S2(hgr_conv2d_rows_6x16_s2_k3, 3, 3, 1, 1)
CONV_ROWS_S2(hgr_conv2d_rows_6x16_s2_k7, 7, 7, 1, 0)
CONV_ROWS_S2(hgr_conv2d_rows_6x16_s2, 0, 0, 1, 0)
CONV_ROWS_S2(hgr_conv2d_rows_6x8x2_s2_k3, 3, 3, 2, 1)
CONV_ROWS_S2(hgr_conv2d_rows_6x8x2_s2, 0, 0, 2, 0)

/* hgr_conv2d_s2_split, then hgr_conv2d_rows_6x16_s2s[_k3|_k7] or
 * hgr_conv2d_rows_6x8x2_s2s[_k3]: one node's two launches
 * (runtime/ops/ops_conv.c, plan_rows_s2_split): groups == 1, horizontal stride 2,
 * any vertical stride, dilation 1. The first copies x, zero-padded, into the node's
 * scratch buffer xs with each padded row's columns split by parity: padded row hp
 * (input row hp - PT) of plane (n, c) at xs + ((n * C + c) * HP + hp) * 2 * WH, its
 * even padded columns (2j, input column 2j - PL) in floats 0 .. WH - 1 and its odd
 * ones in WH .. 2 WH - 1, with HP = H + PT + PB and WH = ceil((W + PL + PR) / 2)
 * (meta[CONV_SPLIT_HP], meta[CONV_SPLIT_WH]); then CONV_SPLIT_TAIL floats of zeros.
 * Arguments (x, xs, meta); NDRange 2-D: (HP, N * C), a work-item per padded row
 * (work-item (0, 0) also writes the tail).
 * The second is hgr_conv2d_rows_6x16_s2's blocks (6 output channels x 16 pixels
 * of one output row, in registers across the C * KH * KW loop) reading xs: tap
 * (kh, kw) of pixels ow0 .. ow0 + 15 is padded column 2 * ow + kw, that is the
 * 16 consecutive floats from column ow0 + kw / 2 of the parity kw % 2, one
 * vload16, with no masks and no bounds checks (lanes past OW read on into the
 * next row or the tail and are never stored). Arguments (xs, w, bias, y, meta);
 * NDRange 3-D: (OH * ceil(OW / 16), ceil(K / 6) rounded up to local[1], N); the
 * 6x8x2 variant, for rows of at most 8, 8 pixels of each of two rows (lanes 8-15
 * the second row's; past OH the first row's again, never stored) over
 * (ceil(OH / 2) * ceil(OW / 8), ...). On PoCL the two launches ran the stride-2
 * layers of resnet50, inception_v2 and squeezenet 1.3-2x faster than the even/odd
 * loads of hgr_conv2d_rows_6x16_s2 and hgr_conv2d_rows_6x8x2_s2 (bench/notes.md). */
#if HGR_WANTED(hgr_conv2d_s2_split)
__kernel void hgr_conv2d_s2_split(__global const float* restrict x, __global float* restrict xs,
                                  __global const int* restrict meta) {
  const int N = meta[CONV_N], C = meta[CONV_C], H = meta[CONV_H], W = meta[CONV_W];
  const int PT = meta[CONV_PT], PL = meta[CONV_PL], HP = meta[CONV_SPLIT_HP], WH = meta[CONV_SPLIT_WH];
  const int hp = (int)get_global_id(0), nc = (int)get_global_id(1);
  if (hp >= HP || nc >= N * C) return;
  if (hp == 0 && nc == 0)
    for (int j = 0; j < CONV_SPLIT_TAIL; ++j) xs[(size_t)N * C * HP * 2 * WH + j] = 0.0f;
  __global float* row = xs + ((size_t)nc * HP + hp) * 2 * WH;
  const int ih = hp - PT;
  if (ih < 0 || ih >= H) {
    for (int j = 0; j < 2 * WH; ++j) row[j] = 0.0f;
    return;
  }
  __global const float* src = x + ((size_t)nc * H + ih) * W;
  /* [lo, hi): the half columns whose even and odd inputs both lie in the row, copied
   * without checks (with them the compiler left the loop scalar: a YOLO-style stem's
   * 3 x 320 x 320 input took 0.4 ms on PoCL) */
  const int lo = (PL + 1) / 2, hi = max(lo, (W + PL) / 2);
  int j = 0;
  for (; j < lo; ++j) {
    const int even = 2 * j - PL, odd = even + 1;
    row[j] = even >= 0 && even < W ? src[even] : 0.0f;
    row[WH + j] = odd >= 0 && odd < W ? src[odd] : 0.0f;
  }
  for (; j < hi; ++j) {
    row[j] = src[2 * j - PL];
    row[WH + j] = src[2 * j + 1 - PL];
  }
  for (; j < WH; ++j) {
    const int even = 2 * j - PL, odd = even + 1;
    row[j] = even >= 0 && even < W ? src[even] : 0.0f;
    row[WH + j] = odd >= 0 && odd < W ? src[odd] : 0.0f;
  }
}
#endif

/* hgr_conv2d_patches: the first of a patch convolution's two launches
 * (runtime/ops/ops_conv.c, plan_patches: one group, stride = kernel size, no padding,
 * dilation 1, so each input pixel lies in at most one patch, as a vision
 * transformer's patch embedding): x's patches as the columns of a matrix in the
 * node's scratch, cols[n][(c * KH + ky) * KW + kx][oy * OW + ox] =
 * x[n][c][oy * KH + ky][ox * KW + kx], which the GEMM (kernels/linalg.cl) then
 * multiplies by the weights [K, C * KH * KW]. Arguments (x, cols, meta); NDRange 3-D
 * (OH, KH, N * C): a work-item per input row a patch takes (patch row oy, its row
 * ky, plane n * C + c), its OW * KW floats to KW rows of cols. */
#if HGR_WANTED(hgr_conv2d_patches)
__kernel void hgr_conv2d_patches(__global const float* restrict x, __global float* restrict cols,
                                 __global const int* restrict meta) {
  const int N = meta[CONV_N], C = meta[CONV_C], H = meta[CONV_H], W = meta[CONV_W];
  const int OH = meta[CONV_OH], OW = meta[CONV_OW], KH = meta[CONV_KH], KW = meta[CONV_KW];
  const int oy = (int)get_global_id(0), ky = (int)get_global_id(1), nc = (int)get_global_id(2);
  if (oy >= OH || ky >= KH || nc >= N * C) return;
  __global const float* src = x + ((size_t)nc * H + (size_t)oy * KH + ky) * W;
  __global float* dst = cols + ((size_t)nc * KH + ky) * KW * OH * OW + (size_t)oy * OW;
  for (int ox = 0; ox < OW; ++ox)
    for (int kx = 0; kx < KW; ++kx) dst[(size_t)kx * OH * OW + ox] = src[ox * KW + kx];
}
#endif

/* hgr_conv2d_pad, then hgr_conv2d_rows_8x32p[_k3]: one node's two launches
 * (runtime/ops/ops_conv.c, plan_rows_padded): groups == 1, stride 1, dilation 1.
 * The first copies x, zero-padded, into the node's scratch buffer xp: padded row
 * hp (input row hp - PT) of plane (n, c) at xp + ((n * C + c) * HP + hp) * WP, its
 * column j input column j - PL, with HP = H + PT + PB and WP = W + PL + PR
 * (meta[CONV_PAD_HP], meta[CONV_PAD_WP]); then CONV_PAD_TAIL floats of zeros.
 * Arguments (x, xp, meta); NDRange 2-D: (HP, N * C), a work-item per padded row
 * (the last plane's last row's item also writes the tail).
 * The second keeps 8 output channels x 32 grid pixels in registers (16 float16
 * accumulators, as the GEMM's 8 x 32 block) across the C * KH * KW loop: grid pixel
 * g = oh * WP + ow of a plane (those with ow >= OW computed and never stored), tap
 * (kh, kw) of 32 consecutive grid pixels the 32 floats at g + kh * WP + kw of the
 * padded plane, two vload16 with no masks and no bounds checks (a block's lanes
 * past the grid read on into the next plane or the tail). Per tap 2 loads, 8
 * broadcast weights and 16 multiply-adds, where the 6 x 16 block has 1, 6 and 6.
 * Arguments (xp, w, bias, y, meta); NDRange 3-D: (ceil(((OH - 1) * WP + OW) / 32),
 * ceil(K / 8) rounded up to local[1], N). */
#if HGR_WANTED(hgr_conv2d_pad)
__kernel void hgr_conv2d_pad(__global const float* restrict x, __global float* restrict xp,
                             __global const int* restrict meta) {
  const int N = meta[CONV_N], C = meta[CONV_C], H = meta[CONV_H], W = meta[CONV_W];
  const int PT = meta[CONV_PT], PL = meta[CONV_PL], HP = meta[CONV_PAD_HP], WP = meta[CONV_PAD_WP];
  const int hp = (int)get_global_id(0), nc = (int)get_global_id(1);
  if (hp >= HP || nc >= N * C) return;
  __global float* row = xp + ((size_t)nc * HP + hp) * WP;
  if (nc == N * C - 1 && hp == HP - 1)
    for (int j = 0; j < CONV_PAD_TAIL; ++j) row[WP + j] = 0.0f;
  const int ih = hp - PT;
  if (ih < 0 || ih >= H) {
    for (int j = 0; j < WP; ++j) row[j] = 0.0f;
    return;
  }
  __global const float* src = x + ((size_t)nc * H + ih) * W;
  const int right = min(WP, PL + W);
  for (int j = 0; j < PL; ++j) row[j] = 0.0f;
  int j = PL;
  for (; j + 16 <= right; j += 16) vstore16(vload16(0, src + j - PL), 0, row + j);
  for (; j < right; ++j) row[j] = src[j - PL];
  for (j = right; j < WP; ++j) row[j] = 0.0f;
}
#endif

/* The tap loop of the kernels that read a copy of the input (the padded one, the
 * split one): xb the block's first input in image n's copy, plane floats a channel,
 * ROW floats a kernel row, AT the floats from a kernel row's start to tap kw; LOAD
 * loads the tap's inputs from p, MADS multiplies them into the accumulators by
 * weight wt. */
#define CONV_COPY_TAP_LOOP(ROW, AT, LOAD, MADS)                                                               \
  for (int c = 0; c < C; ++c) {                                                                               \
    __global const float* xc = xb + c * plane;                                                                \
    for (int kh = 0; kh < KH; ++kh) {                                                                         \
      __global const float* xr = xc + kh * (ROW);                                                             \
      _Pragma("unroll") for (int kw = 0; kw < KW; ++kw) {                                                     \
        __global const float* p = xr + (AT);                                                                  \
        LOAD                                                                                                  \
        const int wt = c * KHW + kh * KW + kw;                                                                \
        MADS                                                                                                  \
      }                                                                                                       \
    }                                                                                                         \
  }

#define CONV_R8(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define CONV_ROWS8_W(r) __global const float* w##r = w + (size_t)min(k0 + r, K - 1) * C * KHW;
#define CONV_ROWS8_ZERO(r) float16 lo##r = (float16)(0.0f), hi##r = (float16)(0.0f);
#define CONV_ROWS8_MAD(r)                 \
  {                                       \
    const float16 b = (float16)(w##r[wt]); \
    lo##r = b * v0 + lo##r;               \
    hi##r = b * v1 + hi##r;               \
  }
#define CONV_ROWS8_SAVE(r) \
  acc[2 * r] = lo##r;      \
  acc[2 * r + 1] = hi##r;
#define CONV_ROWS8P(NAME, KHC, KWC)                                                                            \
  HGR_KERNEL_IF(NAME, \
  __kernel void NAME(__global const float* restrict xp, __global const float* restrict w,                     \
                     __global const float* restrict bias, __global float* restrict y,                         \
                     __global const int* restrict meta) {                                                     \
    const int N = meta[CONV_N], C = meta[CONV_C], K = meta[CONV_K], OH = meta[CONV_OH], OW = meta[CONV_OW];   \
    const int KH = KHC ? KHC : meta[CONV_KH], KW = KWC ? KWC : meta[CONV_KW], KHW = KH * KW;                  \
    const int HP = meta[CONV_PAD_HP], WP = meta[CONV_PAD_WP], flags = meta[CONV_FLAGS], plane = HP * WP;      \
    const int grid = (OH - 1) * WP + OW;                                                                      \
    const int g0 = (int)get_global_id(0) * 32, k0 = (int)get_global_id(1) * 8, n = (int)get_global_id(2);     \
    if (g0 >= grid || k0 >= K || n >= N) return;                                                              \
    __global const float* xb = xp + (size_t)n * C * plane + g0;                                               \
    CONV_R8(CONV_ROWS8_W)                                                                                     \
    CONV_R8(CONV_ROWS8_ZERO)                                                                                  \
    float16 v0, v1;                                                                                           \
    CONV_COPY_TAP_LOOP(WP, kw, v0 = vload16(0, p); v1 = vload16(0, p + 16);, CONV_R8(CONV_ROWS8_MAD))         \
    float16 acc[16];                                                                                          \
    CONV_R8(CONV_ROWS8_SAVE)                                                                                  \
    /* the block's pixels: output (oh, ow) of grid pixel g0 + j where ow < OW and g0 + j < grid */           \
    int dst[32];                                                                                              \
    const int oh_first = g0 / WP, ow_first = g0 - oh_first * WP;                                              \
    /* the block's 32 pixels are 32 consecutive outputs of one row */                                         \
    const bool whole = ow_first + 32 <= OW;                                                                   \
    for (int j = 0, oh = oh_first, ow = ow_first; j < 32; ++j) {                                              \
      dst[j] = g0 + j < grid && ow < OW ? oh * OW + ow : -1;                                                  \
      if (++ow == WP) {                                                                                       \
        ow = 0;                                                                                               \
        ++oh;                                                                                                 \
      }                                                                                                       \
    }                                                                                                         \
    for (int r = 0; r < 8; ++r) {                                                                             \
      const int k = k0 + r;                                                                                   \
      if (k >= K) break;                                                                                      \
      __global float* yk = y + ((size_t)n * K + k) * OH * OW;                                                 \
      const float16 e0 = conv_rows_epilogue(acc[2 * r], k, bias, flags, meta);                                \
      const float16 e1 = conv_rows_epilogue(acc[2 * r + 1], k, bias, flags, meta);                            \
      if (whole) {                                                                                            \
        vstore16(e0, 0, yk + dst[0]);                                                                         \
        vstore16(e1, 0, yk + dst[0] + 16);                                                                    \
      } else {                                                                                                \
        float part[32];                                                                                       \
        vstore16(e0, 0, part);                                                                                \
        vstore16(e1, 0, part + 16);                                                                           \
        for (int j = 0; j < 32; ++j)                                                                          \
          if (dst[j] >= 0) yk[dst[j]] = part[j];                                                              \
      }                                                                                                       \
    }                                                                                                         \
  })

CONV_ROWS8P(hgr_conv2d_rows_8x32p_k3, 3, 3)
CONV_ROWS8P(hgr_conv2d_rows_8x32p, 0, 0)

/* The split-form kernels' geometry: the meta's sizes, the block b of R output rows of
 * LANES / R pixels (oh0, ow0) and the CH output channels from k0 of image n this
 * work-item computes (returning past the range), the split copy's rows and planes;
 * KHC and KWC the kernel's size where fixed (0: the meta's). */
#define CONV_S2S_BLOCK(LANES, CH, R, KHC, KWC)                                                               \
  const int N = meta[CONV_N], C = meta[CONV_C], K = meta[CONV_K], OH = meta[CONV_OH], OW = meta[CONV_OW];     \
  const int SH = meta[CONV_SH], flags = meta[CONV_FLAGS], HP = meta[CONV_SPLIT_HP], WH = meta[CONV_SPLIT_WH]; \
  const int KH = KHC ? KHC : meta[CONV_KH], KW = KWC ? KWC : meta[CONV_KW], KHW = KH * KW;                    \
  const int PX = (LANES) / (R), blocks_w = (OW + PX - 1) / PX, row = 2 * WH, plane = HP * row;                \
  const int b = (int)get_global_id(0), k0 = (int)get_global_id(1) * (CH), n = (int)get_global_id(2);          \
  if (b >= (OH + (R) - 1) / (R) * blocks_w || k0 >= K || n >= N) return;                                      \
  const int rb = b / blocks_w, oh0 = rb * (R), ow0 = (b - rb * blocks_w) * PX;

/* hgr_conv2d_rows_8x32_s2s[_k3], hgr_conv2d_rows_8x16x2_s2s[_k3],
 * hgr_conv2d_rows_8x8x4_s2s[_k3]: hgr_conv2d_s2_split's second launch with the
 * 8 x 32 block of hgr_conv2d_rows_8x32p (8 output channels x 32 pixels, 16 float16
 * accumulators): the 32 pixels of one output row, 16 of each of two rows, or 8 of
 * each of four (R rows of 32 / R; rows past OH read the last row again and are
 * never stored), each tap's inputs R runs of the split rows (two vload16, or the
 * low halves of four). Arguments and meta as hgr_conv2d_rows_6x16_s2s; NDRange 3-D:
 * (ceil(OH / R) * ceil(OW / (32 / R)), ceil(K / 8) rounded up to local[1], N). */
#define CONV_ROWS8_S2S_TAPS(R, p)                                                                             \
  if ((R) == 1) {                                                                                             \
    v0 = vload16(0, (p));                                                                                     \
    v1 = vload16(0, (p) + 16);                                                                                \
  } else if ((R) == 2) {                                                                                      \
    v0 = vload16(0, (p));                                                                                     \
    v1 = vload16(0, (p) + D1);                                                                                \
  } else {                                                                                                    \
    v0 = (float16)(vload16(0, (p)).lo, vload16(0, (p) + D1).lo);                                              \
    v1 = (float16)(vload16(0, (p) + D2).lo, vload16(0, (p) + D3).lo);                                         \
  }
#define CONV_ROWS8_S2S(NAME, KHC, KWC, R)                                                                     \
  HGR_KERNEL_IF(NAME, \
  __kernel void NAME(__global const float* restrict xs, __global const float* restrict w,                     \
                     __global const float* restrict bias, __global float* restrict y,                         \
                     __global const int* restrict meta) {                                                     \
    CONV_S2S_BLOCK(32, 8, R, KHC, KWC)                                                                        \
    /* the block's rows 1 to 3, as floats on from its first (the last row's again past OH) */                 \
    const int D1 = (min(oh0 + 1, OH - 1) - oh0) * SH * row, D2 = (min(oh0 + 2, OH - 1) - oh0) * SH * row;     \
    const int D3 = (min(oh0 + 3, OH - 1) - oh0) * SH * row;                                                   \
    __global const float* xb = xs + (size_t)n * C * plane + oh0 * SH * row + ow0;                             \
    CONV_R8(CONV_ROWS8_W)                                                                                     \
    CONV_R8(CONV_ROWS8_ZERO)                                                                                  \
    float16 v0, v1;                                                                                           \
    CONV_COPY_TAP_LOOP(row, (kw & 1) * WH + (kw >> 1), CONV_ROWS8_S2S_TAPS(R, p), CONV_R8(CONV_ROWS8_MAD))    \
    float16 acc[16];                                                                                          \
    CONV_R8(CONV_ROWS8_SAVE)                                                                                  \
    const int count = min(PX, OW - ow0), out_rows = min((R), OH - oh0);                                       \
    for (int r = 0; r < 8; ++r) {                                                                             \
      const int k = k0 + r;                                                                                   \
      if (k >= K) break;                                                                                      \
      __global float* yr = y + (((size_t)n * K + k) * OH + oh0) * OW + ow0;                                   \
      const float16 e0 = conv_rows_epilogue(acc[2 * r], k, bias, flags, meta);                                \
      const float16 e1 = conv_rows_epilogue(acc[2 * r + 1], k, bias, flags, meta);                            \
      if ((R) == 1 && count == 32) {                                                                          \
        vstore16(e0, 0, yr);                                                                                  \
        vstore16(e1, 0, yr + 16);                                                                             \
      } else if ((R) == 2 && count == 16 && out_rows == 2) {                                                  \
        vstore16(e0, 0, yr);                                                                                  \
        vstore16(e1, 0, yr + OW);                                                                             \
      } else {                                                                                                \
        float part[32];                                                                                       \
        vstore16(e0, 0, part);                                                                                \
        vstore16(e1, 0, part + 16);                                                                           \
        for (int i = 0; i < out_rows; ++i)                                                                    \
          for (int j = 0; j < count; ++j) yr[i * OW + j] = part[i * PX + j];                                  \
      }                                                                                                       \
    }                                                                                                         \
  })

CONV_ROWS8_S2S(hgr_conv2d_rows_8x32_s2s_k3, 3, 3, 1)
CONV_ROWS8_S2S(hgr_conv2d_rows_8x32_s2s, 0, 0, 1)
CONV_ROWS8_S2S(hgr_conv2d_rows_8x16x2_s2s_k3, 3, 3, 2)
CONV_ROWS8_S2S(hgr_conv2d_rows_8x16x2_s2s, 0, 0, 2)
CONV_ROWS8_S2S(hgr_conv2d_rows_8x8x4_s2s_k3, 3, 3, 4)
CONV_ROWS8_S2S(hgr_conv2d_rows_8x8x4_s2s, 0, 0, 4)

/* A tap's 16 floats from p: one row's, or (R == 2) 8 of it and 8 from D floats on
 * (the low halves of two vload16: two vload8 put together made Oclgrind 21.10's
 * uninitialized-value checker report the outputs, as in CONV_ROWS_S2_TAP) */
#define CONV_ROWS_S2S_TAP(R, p, D) \
  ((R) == 1 ? vload16(0, (p)) : (float16)(vload16(0, (p)).lo, vload16(0, (p) + (D)).lo))
#define CONV_ROWS_S2S(NAME, KHC, KWC, R)                                                                      \
  HGR_KERNEL_IF(NAME, \
  __kernel void NAME(__global const float* restrict xs, __global const float* restrict w,                     \
                     __global const float* restrict bias, __global float* restrict y,                         \
                     __global const int* restrict meta) {                                                     \
    CONV_S2S_BLOCK(16, 6, R, KHC, KWC)                                                                        \
    /* R == 2: the second row's floats D on (the first row's again past OH: never stored) */                  \
    const int D = (min(oh0 + 1, OH - 1) - oh0) * SH * row;                                                    \
    __global const float* xb = xs + (size_t)n * C * plane + oh0 * SH * row + ow0;                             \
    CONV_R6(CONV_ROWS_W)                                                                                      \
    CONV_R6(CONV_ROWS_ZERO)                                                                                   \
    float16 v;                                                                                                \
    CONV_COPY_TAP_LOOP(row, (kw & 1) * WH + (kw >> 1), v = CONV_ROWS_S2S_TAP(R, p, D);, CONV_R6(CONV_ROWS_MAD)) \
    CONV_ROWS_S2_EPILOGUE(R, PX)                                                                              \
  })

CONV_ROWS_S2S(hgr_conv2d_rows_6x16_s2s_k3, 3, 3, 1)
CONV_ROWS_S2S(hgr_conv2d_rows_6x16_s2s_k7, 7, 7, 1)
CONV_ROWS_S2S(hgr_conv2d_rows_6x16_s2s, 0, 0, 1)
CONV_ROWS_S2S(hgr_conv2d_rows_6x8x2_s2s_k3, 3, 3, 2)
CONV_ROWS_S2S(hgr_conv2d_rows_6x8x2_s2s, 0, 0, 2)
