#include "ref_conv.h"

#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>

static int64_t extent(int64_t in, int64_t pad_sum, int64_t kernel, int64_t stride, int64_t dilation) {
  return (in + pad_sum - ((kernel - 1) * dilation + 1)) / stride + 1;
}

void hgr_ref_conv2d_shape(const int64_t xshape[4], const int64_t wshape[4], const hgr_ref_conv2d_t* p,
                          int64_t yshape[4]) {
  yshape[0] = xshape[0];
  yshape[1] = wshape[0];
  yshape[2] = extent(xshape[2], p->padding[0] + p->padding[2], wshape[2], p->strides[0], p->dilation[0]);
  yshape[3] = extent(xshape[3], p->padding[1] + p->padding[3], wshape[3], p->strides[1], p->dilation[1]);
}

void hgr_ref_conv2d(const float* x, const int64_t xshape[4], const float* w, const int64_t wshape[4],
                    const float* bias, float* y, const int64_t yshape[4], const hgr_ref_conv2d_t* p) {
  const int64_t n_count = xshape[0], c_in = xshape[1], h = xshape[2], wd = xshape[3];
  const int64_t k_out = wshape[0], cg = wshape[1], kh_count = wshape[2], kw_count = wshape[3];
  const int64_t oh_count = yshape[2], ow_count = yshape[3];
  const int64_t kg = k_out / p->groups;
  for (int64_t n = 0; n < n_count; ++n)
    for (int64_t k = 0; k < k_out; ++k) {
      const int64_t c_first = (k / kg) * cg;
      for (int64_t oh = 0; oh < oh_count; ++oh)
        for (int64_t ow = 0; ow < ow_count; ++ow) {
          double acc = bias ? bias[k] : 0.0;
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t kh = 0; kh < kh_count; ++kh) {
              const int64_t ih = oh * p->strides[0] - p->padding[0] + kh * p->dilation[0];
              if (ih < 0 || ih >= h) continue;
              for (int64_t kw = 0; kw < kw_count; ++kw) {
                const int64_t iw = ow * p->strides[1] - p->padding[1] + kw * p->dilation[1];
                if (iw < 0 || iw >= wd) continue;
                acc += (double)x[((n * c_in + c_first + c) * h + ih) * wd + iw] *
                       (double)w[((k * cg + c) * kh_count + kh) * kw_count + kw];
              }
            }
          if (p->relu && acc < 0) acc = 0;
          y[((n * k_out + k) * oh_count + oh) * ow_count + ow] = (float)acc;
        }
    }
}

void hgr_ref_conv2d_transpose_shape(const int64_t xshape[4], const int64_t wshape[4], const hgr_ref_conv2d_t* p,
                                    const int64_t output_padding[2], int64_t yshape[4]) {
  yshape[0] = xshape[0];
  yshape[1] = wshape[1] * p->groups;
  for (int axis = 0; axis < 2; ++axis)
    yshape[2 + axis] = (xshape[2 + axis] - 1) * p->strides[axis] - p->padding[axis] - p->padding[axis + 2] +
                       p->dilation[axis] * (wshape[2 + axis] - 1) + output_padding[axis] + 1;
}

void hgr_ref_conv2d_transpose(const float* x, const int64_t xshape[4], const float* w, const int64_t wshape[4],
                              const float* bias, float* y, const int64_t yshape[4], const hgr_ref_conv2d_t* p) {
  const int64_t n_count = xshape[0], c_in = xshape[1], h = xshape[2], wd = xshape[3];
  const int64_t kg = wshape[1], kh_count = wshape[2], kw_count = wshape[3];
  const int64_t k_out = yshape[1], oh_count = yshape[2], ow_count = yshape[3];
  const int64_t cg = c_in / p->groups;
  const uint64_t count = (uint64_t)(n_count * k_out * oh_count * ow_count);
  double* acc = calloc(count ? count : 1, sizeof(double));
  assert(acc);
  for (int64_t n = 0; n < n_count; ++n)
    for (int64_t c = 0; c < c_in; ++c)
      for (int64_t ih = 0; ih < h; ++ih)
        for (int64_t iw = 0; iw < wd; ++iw) {
          const double v = x[((n * c_in + c) * h + ih) * wd + iw];
          for (int64_t kk = 0; kk < kg; ++kk) {
            const int64_t k = (c / cg) * kg + kk;
            for (int64_t kh = 0; kh < kh_count; ++kh) {
              const int64_t oh = ih * p->strides[0] - p->padding[0] + kh * p->dilation[0];
              if (oh < 0 || oh >= oh_count) continue;
              for (int64_t kw = 0; kw < kw_count; ++kw) {
                const int64_t ow = iw * p->strides[1] - p->padding[1] + kw * p->dilation[1];
                if (ow < 0 || ow >= ow_count) continue;
                acc[((n * k_out + k) * oh_count + oh) * ow_count + ow] +=
                    v * (double)w[((c * kg + kk) * kh_count + kh) * kw_count + kw];
              }
            }
          }
        }
  for (uint64_t i = 0; i < count; ++i) {
    double v = acc[i] + (bias ? bias[(i / (uint64_t)(oh_count * ow_count)) % (uint64_t)k_out] : 0.0);
    if (p->relu && v < 0) v = 0;
    y[i] = (float)v;
  }
  free(acc);
}

void hgr_ref_conv2d_activate(float* y, uint64_t n, int act, float alpha, float a_min, float a_max) {
  for (uint64_t i = 0; i < n; ++i) {
    if ((act == HGR_REF_ACT_LEAKY_RELU || act == HGR_REF_ACT_LEAKY_RELU_CLIP) && y[i] < 0) y[i] *= alpha;
    if (act == HGR_REF_ACT_CLIP || act == HGR_REF_ACT_LEAKY_RELU_CLIP)
      y[i] = y[i] < a_min ? a_min : y[i] > a_max ? a_max : y[i];
    if (act == HGR_REF_ACT_SIGMOID) y[i] = (float)(1.0 / (1.0 + exp(-(double)y[i])));
    if (act == HGR_REF_ACT_SILU) y[i] = (float)((double)y[i] / (1.0 + exp(-(double)y[i])));
    if (act == HGR_REF_ACT_HARD_SWISH) y[i] = (float)((double)y[i] * fmin(fmax((double)y[i] / 6.0 + 0.5, 0.0), 1.0));
  }
}

void hgr_ref_pool2d_shape(const int64_t xshape[4], const hgr_ref_pool2d_t* p, int64_t yshape[4]) {
  yshape[0] = xshape[0];
  yshape[1] = xshape[1];
  for (int axis = 0; axis < 2; ++axis) {
    int64_t extra = p->ceil_mode ? p->strides[axis] - 1 : 0;
    yshape[2 + axis] = extent(xshape[2 + axis], p->padding[axis] + p->padding[axis + 2] + extra, p->pool_size[axis],
                              p->strides[axis], p->dilation[axis]);
  }
}

/* The taps of one axis the average divides by, as topi's pool_impl_nd computes
 * them (C's truncating division, as TVM's on these integers). */
static int64_t taps(int64_t start, int64_t kernel, int64_t dilation, int64_t size, int64_t pad_end,
                    bool include_pad) {
  int64_t end = start + (kernel - 1) * dilation;
  if (include_pad) {
    int64_t last = size + pad_end - 1;
    return ((end < last ? end : last) - start) / dilation + 1;
  }
  int64_t jumps = (dilation - 1 - start) / dilation;
  if (jumps < 0) jumps = 0;
  int64_t last = end < size - 1 ? end : size - 1;
  return (last - (start + dilation * jumps)) / dilation + 1;
}

void hgr_ref_pool2d(const float* x, const int64_t xshape[4], float* y, const int64_t yshape[4],
                    const hgr_ref_pool2d_t* p) {
  const int64_t planes = xshape[0] * xshape[1], h = xshape[2], w = xshape[3];
  const int64_t oh_count = yshape[2], ow_count = yshape[3];
  for (int64_t plane = 0; plane < planes; ++plane)
    for (int64_t oh = 0; oh < oh_count; ++oh)
      for (int64_t ow = 0; ow < ow_count; ++ow) {
        const int64_t ih0 = oh * p->strides[0] - p->padding[0], iw0 = ow * p->strides[1] - p->padding[1];
        double acc = p->max ? -FLT_MAX : 0.0;
        for (int64_t kh = 0; kh < p->pool_size[0]; ++kh)
          for (int64_t kw = 0; kw < p->pool_size[1]; ++kw) {
            const int64_t ih = ih0 + kh * p->dilation[0], iw = iw0 + kw * p->dilation[1];
            /* padding: -FLT_MAX for max (never above acc), 0 for the sum */
            if (ih < 0 || ih >= h || iw < 0 || iw >= w) continue;
            const double v = x[(plane * h + ih) * w + iw];
            if (p->max) acc = v > acc ? v : acc;
            else acc += v;
          }
        if (!p->max) {
          int64_t count = taps(ih0, p->pool_size[0], p->dilation[0], h, p->padding[2], p->count_include_pad) *
                          taps(iw0, p->pool_size[1], p->dilation[1], w, p->padding[3], p->count_include_pad);
          if (!p->count_include_pad && count < 1) count = 1;
          acc /= (double)count;
        }
        y[(plane * oh_count + oh) * ow_count + ow] = (float)acc;
      }
}
