/* resize2d against the plain-C reference (tests/ref_resize.c, itself checked
 * against ONNX's expected outputs) on random float32 NCHW data (argument: a device
 * spec).
 *
 * Tolerance: the plan computes the taps in double and the kernel sums at most 16
 * float32 products, the reference in double: 1e-5 relative plus 1e-5 absolute.
 * Every method meets every coordinate transformation mode (and nearest every
 * rounding method), upscaling and downscaling, with sizes alone and with scales
 * that differ from the size ratios. Oclgrind gets only tiny shapes. */
#include <stdio.h>
#include <string.h>

#include "ops.h"
#include "optest.h"
#include "ref_resize.h"

static bool simulated(void) { return hgr_optest_is_simulator(hgr_optest_device); }

/* One resize2d of a random [shape] input to [out_h, out_w]. */
static void check_resize(hgr_test_rng_t* rng, const int64_t* shape, int64_t out_h, int64_t out_w,
                         const ref_resize_attrs_t* a) {
  char attrs[640];
  int used = snprintf(attrs, sizeof(attrs),
                      "\"size\": \"[%lld, %lld]\", \"method\": \"%s\", \"coordinate_transformation_mode\": \"%s\", "
                      "\"rounding_method\": \"%s\", \"cubic_alpha\": \"%.9g\", \"cubic_exclude\": \"%d\", "
                      "\"extrapolation_value\": \"%.9g\"",
                      (long long)out_h, (long long)out_w, ref_resize_method_names[a->method],
                      ref_resize_transform_names[a->transform], ref_resize_rounding_names[a->rounding], a->cubic_alpha,
                      a->exclude_outside, a->extrapolation);
  if (a->has_scales)
    used += snprintf(attrs + used, sizeof(attrs) - (size_t)used, ", \"scales\": \"[%.9g, %.9g]\"", a->scales[0],
                     a->scales[1]);
  if (a->transform == REF_RESIZE_TF_CROP_AND_RESIZE)
    snprintf(attrs + used, sizeof(attrs) - (size_t)used, ", \"roi\": \"[%.9g, %.9g, %.9g, %.9g]\"", a->roi[0],
             a->roi[1], a->roi[2], a->roi[3]);
  hgr_optest_t t;
  hgr_optest_init(&t, "resize2d", attrs);
  float* in = hgr_optest_input(&t, "float32", 4, shape);
  hgr_optest_fill(&t.inputs[0], rng, -1, 1);
  float* out = hgr_optest_output(&t, "float32", 4, (int64_t[]){shape[0], shape[1], out_h, out_w});
  ref_resize2d(in, shape, out_h, out_w, a, out);
  hgr_optest_tolerance(&t, 1e-5, 1e-5);
  hgr_optest_check(hgr_optest_instance, hgr_optest_device, &t);
  hgr_optest_free(&t);
}

static ref_resize_attrs_t attrs_of(ref_resize_method_t method, ref_resize_transform_t transform,
                                   ref_resize_rounding_t rounding) {
  ref_resize_attrs_t a = {.method = method, .transform = transform, .rounding = rounding, .cubic_alpha = -0.75,
                          .roi = {0.1f, 0.2f, 0.9f, 0.7f}, .extrapolation = 3.5};
  return a;
}

/* Sizes alone: up, down, mixed, to 1 x 1 and from a single row. */
static void resize_matches_reference_with_sizes(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 31);
  static const struct {
    int64_t shape[4], out_h, out_w;
  } cases[] = {
      {{1, 2, 3, 4}, 5, 7}, {{2, 1, 5, 6}, 2, 3}, {{1, 2, 4, 3}, 7, 2}, {{1, 1, 3, 5}, 1, 1}, {{1, 2, 1, 3}, 2, 5},
  };
  for (int m = 0; m < 3; ++m)
    for (int c = 0; c < 6; ++c)
      for (int r = 0; r < (m == REF_RESIZE_NEAREST ? 4 : 1); ++r)
        for (int k = 0; k < 5; ++k) {
          ref_resize_attrs_t a = attrs_of((ref_resize_method_t)m, (ref_resize_transform_t)c, (ref_resize_rounding_t)r);
          a.exclude_outside = m == REF_RESIZE_CUBIC && k % 2;
          if (k % 2) { /* a crop reaching outside the input: the extrapolation value there */
            const double outside[4] = {-0.3f, 0.4f, 1.2f, 1.1f};
            memcpy(a.roi, outside, sizeof(outside));
          }
          check_resize(&rng, cases[k].shape, cases[k].out_h, cases[k].out_w, &a);
        }
  if (!simulated()) {
    ref_resize_attrs_t a = attrs_of(REF_RESIZE_LINEAR, REF_RESIZE_HALF_PIXEL, REF_RESIZE_ROUND_PREFER_FLOOR);
    check_resize(&rng, (int64_t[]){2, 3, 64, 65}, 128, 97, &a);
    a = attrs_of(REF_RESIZE_CUBIC, REF_RESIZE_ALIGN_CORNERS, REF_RESIZE_ROUND_PREFER_FLOOR);
    check_resize(&rng, (int64_t[]){1, 4, 50, 40}, 21, 100, &a);
    a = attrs_of(REF_RESIZE_NEAREST, REF_RESIZE_ASYMMETRIC, REF_RESIZE_FLOOR);
    check_resize(&rng, (int64_t[]){1, 8, 33, 35}, 99, 70, &a);
  }
}

/* Scales given (ONNX Resize's scales input): the output is floor(in * scale), and
 * the transforms divide by the scale, not by the size ratio. */
static void resize_matches_reference_with_scales(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 32);
  static const struct {
    int64_t shape[4];
    double scales[2];
  } cases[] = {
      {{1, 1, 2, 4}, {0.6, 0.6}}, /* ONNX's downsample_scales */
      {{1, 1, 2, 2}, {2, 3}},     /* upsample_scales */
      {{1, 2, 4, 4}, {1.7, 0.8}},
      {{1, 1, 5, 3}, {0.3, 2.5}},
  };
  for (int m = 0; m < 3; ++m)
    for (int c = 0; c < 6; ++c)
      for (int r = 0; r < (m == REF_RESIZE_NEAREST ? 4 : 1); ++r)
        for (int k = 0; k < 4; ++k) {
          ref_resize_attrs_t a = attrs_of((ref_resize_method_t)m, (ref_resize_transform_t)c, (ref_resize_rounding_t)r);
          a.has_scales = true;
          a.scales[0] = (float)cases[k].scales[0];
          a.scales[1] = (float)cases[k].scales[1];
          a.exclude_outside = m == REF_RESIZE_CUBIC && k % 2;
          if (k == 3) a.cubic_alpha = -0.5;
          if (k == 1) { /* a crop reaching outside the input */
            const double outside[4] = {-0.3f, 0.4f, 1.2f, 1.1f};
            memcpy(a.roi, outside, sizeof(outside));
          }
          int64_t out_h = (int64_t)((double)cases[k].shape[2] * a.scales[0]);
          int64_t out_w = (int64_t)((double)cases[k].shape[3] * a.scales[1]);
          check_resize(&rng, cases[k].shape, out_h, out_w, &a);
        }
}

/* The input's own size, every method, transform and rounding, with and without
 * scales of 1: where each sample falls on its own pixel the plan copies (taps 0, a
 * meta table of one value); the crop and the shifted transforms interpolate. */
static void same_size_resizes_match_reference(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 33);
  const int64_t shape[4] = {1, 2, 5, 6};
  for (int m = 0; m < 3; ++m)
    for (int c = 0; c < 6; ++c)
      for (int r = 0; r < (m == REF_RESIZE_NEAREST ? 4 : 1); ++r)
        for (int scales = 0; scales < 2; ++scales) {
          ref_resize_attrs_t a = attrs_of((ref_resize_method_t)m, (ref_resize_transform_t)c, (ref_resize_rounding_t)r);
          a.has_scales = scales;
          a.scales[0] = a.scales[1] = 1.0f;
          a.exclude_outside = m == REF_RESIZE_CUBIC && scales;
          check_resize(&rng, shape, 5, 6, &a);
        }
  if (!simulated()) { /* a ViT's position embeddings at the grid they were learned for */
    ref_resize_attrs_t a = attrs_of(REF_RESIZE_CUBIC, REF_RESIZE_HALF_PIXEL, REF_RESIZE_ROUND_PREFER_FLOOR);
    check_resize(&rng, (int64_t[]){1, 384, 14, 14}, 14, 14, &a);
  }
  /* the plans: a copy for half_pixel cubic, the table for the crop and for a size
   * that changes */
  static const struct {
    const char* attrs;
    int64_t out_h;
    uint32_t meta_count;
  } plans[] = {
      {"\"method\": \"cubic\", \"size\": \"[5, 6]\"", 5, 1},
      {"\"method\": \"linear\", \"coordinate_transformation_mode\": \"align_corners\", \"size\": \"[5, 6]\"", 5, 1},
      {"\"method\": \"linear\", \"coordinate_transformation_mode\": \"tf_crop_and_resize\", "
       "\"roi\": \"[0.1, 0.2, 0.9, 0.7]\", \"size\": \"[5, 6]\"", 5, 11 * 5},
      {"\"method\": \"cubic\", \"size\": \"[4, 6]\"", 4, 9 * 10},
  };
  for (size_t i = 0; i < sizeof(plans) / sizeof(plans[0]); ++i) {
    hgr_optest_t t;
    hgr_optest_init(&t, "resize2d", plans[i].attrs);
    hgr_optest_input(&t, "float32", 4, shape);
    hgr_optest_output(&t, "float32", 4, (int64_t[]){1, 2, plans[i].out_h, 6});
    hgr__limits_t limits = {256, {256, 256, 256}, 32 * 1024, 0};
    hgr__op_ctx_t ctx;
    hgr_optest_plan(&t, &limits, NULL, &ctx);
    assert_int_equal(ctx.launch_count, 1);
    if (ctx.launches[0].meta_count != plans[i].meta_count)
      fail_msg("resize2d {%s}: a meta table of %u values, expected %u", plans[i].attrs, ctx.launches[0].meta_count,
               plans[i].meta_count);
    hgr__op_ctx_free(&ctx);
    hgr_optest_free(&t);
  }
}

/* Twice the input's size, every transform and (nearest) rounding: where every output
 * pixel takes input pixel (y / 2, x / 2) whole (nearest with asymmetric and floor, as
 * torch.onnx writes nn.Upsample; and the other modes that map the same way) the plan
 * repeats each pixel (hgr_resize2d_repeat2, a work-item per input row, 8 pixels at a
 * time), else the table; rows of 8 pixels and more, with a tail, and narrower. */
static void doubling_resizes_match_reference(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 34);
  static const int64_t shapes[][4] = {{1, 3, 4, 5}, {2, 2, 3, 8}, {1, 3, 5, 13}, {1, 2, 6, 40}};
  for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); ++s)
    for (int m = 0; m < 2; ++m)
      for (int c = 0; c < 6; ++c)
        for (int r = 0; r < (m == REF_RESIZE_NEAREST ? 4 : 1); ++r) {
          if (simulated() && (s > 1 || (c != REF_RESIZE_ASYMMETRIC && c != 0))) continue;
          ref_resize_attrs_t a = attrs_of((ref_resize_method_t)m, (ref_resize_transform_t)c, (ref_resize_rounding_t)r);
          check_resize(&rng, shapes[s], 2 * shapes[s][2], 2 * shapes[s][3], &a);
        }
  /* the plans: nearest, asymmetric, floor repeats; linear does not */
  static const struct {
    const char* attrs;
    const char* kernel;
  } plans[] = {
      {"\"method\": \"nearest_neighbor\", \"coordinate_transformation_mode\": \"asymmetric\", "
       "\"rounding_method\": \"floor\", \"size\": \"[10, 26]\"",
       "hgr_resize2d_repeat2"},
      {"\"method\": \"linear\", \"size\": \"[10, 26]\"", "hgr_resize2d"},
  };
  for (size_t i = 0; i < sizeof(plans) / sizeof(plans[0]); ++i) {
    hgr_optest_t t;
    hgr_optest_init(&t, "resize2d", plans[i].attrs);
    hgr_optest_input(&t, "float32", 4, (int64_t[]){1, 3, 5, 13});
    hgr_optest_output(&t, "float32", 4, (int64_t[]){1, 3, 10, 26});
    hgr__limits_t limits = {256, {256, 256, 256}, 32 * 1024, 0};
    hgr__op_ctx_t ctx;
    hgr_optest_plan(&t, &limits, NULL, &ctx);
    assert_int_equal(ctx.launch_count, 1);
    assert_string_equal(ctx.launches[0].kernel, plans[i].kernel);
    hgr__op_ctx_free(&ctx);
    hgr_optest_free(&t);
  }
}

#define ASSERT_REJECTED(t, ...)                                                                                  \
  ASSERT_STATUS(hgr_optest_create(hgr_optest_instance, hgr_optest_device, (t)), HGR_STATUS_INVALID_ARGUMENT, \
                __VA_ARGS__)

static void expect_rejected(const char* attrs, int32_t ndim, const int64_t* shape, const int64_t* out_shape,
                            const char* message) {
  hgr_optest_t t;
  hgr_optest_init(&t, "resize2d", attrs);
  hgr_optest_input(&t, "float32", ndim, shape);
  hgr_optest_output(&t, "float32", ndim, out_shape);
  ASSERT_REJECTED(&t, message);
  hgr_optest_free(&t);
}

static void resize_rejects_bad_attrs(void** state) {
  (void)state;
  const int64_t shape[4] = {1, 2, 3, 4}, out[4] = {1, 2, 6, 8};
  expect_rejected("\"method\": \"linear\"", 4, shape, out,
                  "node 1 'resize2d_node' (resize2d): attr 'size' ([out_height, out_width]) is required");
  expect_rejected("\"size\": \"[6, 8, 1]\"", 4, shape, out,
                  "node 1 'resize2d_node' (resize2d): attr 'size' = \"[6, 8, 1]\" has more than 2 values");
  expect_rejected("\"size\": \"[6, 8]\", \"method\": \"bilinear\"", 4, shape, out,
                  "node 1 'resize2d_node' (resize2d): attr 'method' = \"bilinear\" is not supported; hgr takes "
                  "\"nearest_neighbor\" or \"linear\" or \"cubic\"");
  expect_rejected("\"size\": \"[6, 8]\", \"coordinate_transformation_mode\": \"half_pixel_symmetric\"", 4, shape,
                  out, "node 1 'resize2d_node' (resize2d): attr 'coordinate_transformation_mode' = "
                       "\"half_pixel_symmetric\" is not supported");
  expect_rejected("\"size\": \"[6, 8]\", \"rounding_method\": \"round\"", 4, shape, out,
                  "node 1 'resize2d_node' (resize2d): attr 'rounding_method' = \"round\" is not supported");
  expect_rejected("\"size\": \"[6, 8]\", \"coordinate_transformation_mode\": \"tf_crop_and_resize\"", 4, shape, out,
                  "node 1 'resize2d_node' (resize2d): attr 'roi' is required with coordinate_transformation_mode "
                  "\"tf_crop_and_resize\"");
  expect_rejected("\"size\": \"[6, 8]\", \"roi\": \"[0, 0, 1]\"", 4, shape, out,
                  "node 1 'resize2d_node' (resize2d): attr 'roi' = \"[0, 0, 1]\" has 3 values; it takes 4");
  expect_rejected("\"size\": \"[6, 8]\", \"scales\": \"[2, 0]\"", 4, shape, out,
                  "node 1 'resize2d_node' (resize2d): attr 'scales' = \"[2, 0]\" has 0; scales must be positive");
  expect_rejected("\"size\": \"[6, 8]\", \"scales\": \"[2, x]\"", 4, shape, out,
                  "node 1 'resize2d_node' (resize2d): attr 'scales' = \"[2, x]\" is not a list of at most 2 finite "
                  "numbers");
  expect_rejected("\"size\": \"[6, 8]\", \"layout\": \"NHWC\"", 4, shape, out,
                  "node 1 'resize2d_node' (resize2d): attr 'layout' = \"NHWC\" is not supported");
  expect_rejected("\"size\": \"[6, 8]\"", 3, (int64_t[]){2, 3, 4}, (int64_t[]){2, 6, 8},
                  "node 1 'resize2d_node' (resize2d): input 0 (entry 0) is shaped [2, 3, 4]; resize2d takes NCHW "
                  "data (4 dimensions)");
  expect_rejected("\"size\": \"[6, 7]\"", 4, shape, out,
                  "node 1 'resize2d_node' (resize2d): output 0 (entry 1) should be shaped [1, 2, 6, 7], the graph "
                  "says [1, 2, 6, 8]");
  hgr_optest_t t;
  hgr_optest_init(&t, "resize2d", "\"size\": \"[6, 8]\"");
  hgr_optest_input(&t, "int32", 4, shape);
  hgr_optest_output(&t, "int32", 4, out);
  ASSERT_REJECTED(&t, "node 1 'resize2d_node' (resize2d): input 0 (entry 0) is int32");
  hgr_optest_free(&t);
}

int main(int argc, char** argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(resize_matches_reference_with_sizes),
      cmocka_unit_test(resize_matches_reference_with_scales),
      cmocka_unit_test(same_size_resizes_match_reference),
      cmocka_unit_test(doubling_resizes_match_reference),
      cmocka_unit_test(resize_rejects_bad_attrs),
  };
  return hgr_optest_main(argc, argv, "ops_resize", tests, sizeof(tests) / sizeof(tests[0]));
}
