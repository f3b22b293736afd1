/* Plain-C references for conv2d and 2-D pooling (NCHW data, OIHW weights), the
 * oracle the op tests and the examples generator compare hgr's kernels with. They
 * accumulate in double and follow Relay / TVM topi semantics exactly (see
 * runtime/ops/ops_conv.c and runtime/ops/ops_pool.c). Shapes are [N, C, H, W]; the caller
 * computes the output shape with the *_shape function and allocates y. */
#ifndef HGR_TEST_REF_CONV_H_
#define HGR_TEST_REF_CONV_H_

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* conv2d: strides and dilation [h, w]; padding top, left, bottom, right; weight
 * [C_out, C_in / groups, kh, kw]; relu after the optional bias (hgr's fused epilogue). */
typedef struct hgr_ref_conv2d_t {
  int64_t strides[2];
  int64_t padding[4]; /* top, left, bottom, right */
  int64_t dilation[2];
  int64_t groups;
  bool relu;
} hgr_ref_conv2d_t;

/* yshape = [N, C_out, OH, OW] with OH = (H + top + bottom - ((kh - 1) * dh + 1)) / sh + 1. */
void hgr_ref_conv2d_shape(const int64_t xshape[4], const int64_t wshape[4], const hgr_ref_conv2d_t* p,
                          int64_t yshape[4]);
void hgr_ref_conv2d(const float* x, const int64_t xshape[4], const float* w, const int64_t wshape[4],
                    const float* bias /* [C_out] or NULL */, float* y, const int64_t yshape[4],
                    const hgr_ref_conv2d_t* p);

/* conv2d's other fused activations, applied to the n outputs after
 * hgr_ref_conv2d: HGR_REF_ACT_LEAKY_RELU (y < 0: alpha * y, in float32) or
 * HGR_REF_ACT_CLIP (min(max(y, a_min), a_max)) or HGR_REF_ACT_SIGMOID. */
#define HGR_REF_ACT_LEAKY_RELU 1
#define HGR_REF_ACT_CLIP 2
#define HGR_REF_ACT_SIGMOID 3 /* 1 / (1 + exp(-y)), in double, rounded once to float32 */
#define HGR_REF_ACT_LEAKY_RELU_CLIP 4 /* the leaky relu (alpha), then the clip (a_min, a_max) */
#define HGR_REF_ACT_SILU 5       /* y / (1 + exp(-y)), in double, rounded once to float32 */
#define HGR_REF_ACT_HARD_SWISH 6 /* y min(max(y / 6 + 0.5, 0), 1), in double, rounded once */
void hgr_ref_conv2d_activate(float* y, uint64_t n, int act, float alpha, float a_min, float a_max);

/* conv2d_transpose: weight [C_in, C_out / groups, kh, kw] (IOHW); strides,
 * padding and dilation as conv2d's; output_padding [h, w]. Computed as a scatter
 * (each input tap adds into the outputs it reaches), the other way round from the
 * kernel's gather. yshape = [N, C_out, OH, OW] with OH = (H - 1) * sh - top - bottom
 * + dh * (kh - 1) + output_padding + 1. */
void hgr_ref_conv2d_transpose_shape(const int64_t xshape[4], const int64_t wshape[4], const hgr_ref_conv2d_t* p,
                                    const int64_t output_padding[2], int64_t yshape[4]);
void hgr_ref_conv2d_transpose(const float* x, const int64_t xshape[4], const float* w, const int64_t wshape[4],
                              const float* bias /* [C_out] or NULL */, float* y, const int64_t yshape[4],
                              const hgr_ref_conv2d_t* p);

/* max or average pooling, as topi's pool_impl_nd: -FLT_MAX (max) or 0 (average)
 * padding; ceil_mode rounds the output up with extra bottom/right padding that the
 * average never counts; count_include_pad counts the declared padding. */
typedef struct hgr_ref_pool2d_t {
  bool max;
  int64_t pool_size[2];
  int64_t strides[2];
  int64_t dilation[2];
  int64_t padding[4]; /* top, left, bottom, right */
  bool ceil_mode;
  bool count_include_pad;
} hgr_ref_pool2d_t;

void hgr_ref_pool2d_shape(const int64_t xshape[4], const hgr_ref_pool2d_t* p, int64_t yshape[4]);
void hgr_ref_pool2d(const float* x, const int64_t xshape[4], float* y, const int64_t yshape[4],
                    const hgr_ref_pool2d_t* p);

#ifdef __cplusplus
}
#endif

#endif /* HGR_TEST_REF_CONV_H_ */
