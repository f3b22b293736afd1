/* Plain-C reference of resize2d (runtime/ops/ops_resize.c): ONNX Resize on the H
 * and W axes of float32 NCHW data, transcribed from ONNX's reference
 * implementation (onnx/reference/ops/op_resize.py) rather than from the plan: per
 * output element, in double, each input row is interpolated along W and the
 * results along H; the taps are the ones nearest the sample in the input padded by
 * its edge (ties to the lower index), weighted by ONNX's coefficient functions. */
#ifndef HGR_TEST_REF_RESIZE_H_
#define HGR_TEST_REF_RESIZE_H_

#include <stdbool.h>
#include <stdint.h>

typedef enum ref_resize_method_t { REF_RESIZE_NEAREST, REF_RESIZE_LINEAR, REF_RESIZE_CUBIC } ref_resize_method_t;

typedef enum ref_resize_transform_t {
  REF_RESIZE_HALF_PIXEL,
  REF_RESIZE_ALIGN_CORNERS,
  REF_RESIZE_ASYMMETRIC,
  REF_RESIZE_PYTORCH_HALF_PIXEL,
  REF_RESIZE_TF_HALF_PIXEL_FOR_NN,
  REF_RESIZE_TF_CROP_AND_RESIZE,
} ref_resize_transform_t;

typedef enum ref_resize_rounding_t {
  REF_RESIZE_ROUND_PREFER_FLOOR,
  REF_RESIZE_ROUND_PREFER_CEIL,
  REF_RESIZE_FLOOR,
  REF_RESIZE_CEIL,
} ref_resize_rounding_t;

typedef struct ref_resize_attrs_t {
  ref_resize_method_t method;
  ref_resize_transform_t transform;
  ref_resize_rounding_t rounding;
  bool has_scales;
  double scales[2];  /* [h, w]; without them, out / in */
  double roi[4];     /* [h_start, w_start, h_end, w_end] (tf_crop_and_resize) */
  double cubic_alpha;
  bool exclude_outside;
  double extrapolation;
} ref_resize_attrs_t;

/* The attrs' names as resize2d takes them (for building a node's attrs). */
extern const char* const ref_resize_method_names[3];
extern const char* const ref_resize_transform_names[6];
extern const char* const ref_resize_rounding_names[4];

/* out [N, C, out_h, out_w] from in [N, C, H, W] (shape). */
void ref_resize2d(const float* in, const int64_t* shape, int64_t out_h, int64_t out_w, const ref_resize_attrs_t* attrs,
                  float* out);

#endif /* HGR_TEST_REF_RESIZE_H_ */
