/* 2-D pooling, float32, NCHW (runtime/ops_pool.c plans them), with TVM topi's
 * semantics: padding is -FLT_MAX for max pooling and 0 for average pooling; with
 * ceil_mode the output is rounded up by extra padding at the bottom and right that
 * average pooling never counts.
 *
 * hgr_max_pool2d(__global const float* x, __global float* y, __global const int* meta)
 * hgr_avg_pool2d(__global const float* x, __global float* y, __global const int* meta)
 *   One work-item per POOL_CHUNK columns of an output row, in a loop (those whose
 *   window lies inside the row without column checks); NDRange 1-D over
 *   N*C*OH*ceil(OW / POOL_CHUNK), rounded up (items past the end return). meta: the
 *   POOL_* indices below. Where the windows
 *   of 4 consecutive outputs lie inside the row they go as a float4, each tap's 4
 *   values one vload4 (stride 1) or vload8's even half (stride 2). (One work-item
 *   per output element ran 2-3x slower on PoCL: the per-item index math and meta
 *   loads cost more than a 3x3 window.)
 * hgr_global_max_pool2d(__global const float* x, __global float* y, uint planes, uint size)
 * hgr_global_avg_pool2d(__global const float* x, __global float* y, uint planes, uint size)
 *   One work-item per (n, c) plane of `size` = H*W values; NDRange 1-D over planes,
 *   rounded up.
 */

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

/* How many window taps of one axis the average divides by (topi's pool_impl_nd,
 * C integer division): with count_include_pad, the taps up to the end of the
 * declared padding (never ceil_mode's extra); without, the taps inside the input. */
inline int pool_taps(int start, int window, int dilation, int size, int pad_end, bool include_pad) {
  int end = start + (window - 1) * dilation;
  if (include_pad) return (min(end, size + pad_end - 1) - start) / dilation + 1;
  const int jumps = max((dilation - 1 - start) / dilation, 0);
  return (min(end, size - 1) - (start + dilation * jumps)) / dilation + 1;
}

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

__kernel void hgr_global_max_pool2d(__global const float* x, __global float* y, uint planes, uint size) {
  const size_t plane = get_global_id(0);
  if (plane >= planes) return;
  __global const float* xp = x + plane * size;
  float m = -FLT_MAX;
  for (uint i = 0; i < size; ++i) m = fmax(m, xp[i]);
  y[plane] = m;
}

__kernel void hgr_global_avg_pool2d(__global const float* x, __global float* y, uint planes, uint size) {
  const size_t plane = get_global_id(0);
  if (plane >= planes) return;
  __global const float* xp = x + plane * size;
  float sum = 0.0f;
  for (uint i = 0; i < size; ++i) sum += xp[i];
  y[plane] = sum / (float)size;
}
