/* non_max_suppression (runtime/ops/ops_nms.c, kernels/nms.cl) against the reference
 * in tests/ref_nms.c on random data (argument: a device spec). The whole of both
 * outputs is compared exactly: the first n rows (batch, class, box) in ONNX
 * Runtime's order, the zero rows after them up to the capacity, and the count n.
 *
 * Cases: both box formats (corners given in any order, boxes of zero width or
 * height), scores with many ties, with and without a score threshold, IoU
 * thresholds of 0, 0.5 and 1, max_output_boxes_per_class 0, 1, a few and more than
 * the boxes; several batches and classes; boxes beyond one work-group and beyond
 * a small device's work-groups; every box suppressed by the first, every score
 * below the threshold; and the attrs and shapes the op refuses.
 *
 * Tolerance: none. The kernels compute ONNX Runtime's float expressions in its
 * order with contraction off, as the reference does; only the IoU's division may
 * differ on a device whose float division is not correctly rounded, which the
 * random boxes here (a few thousand IoUs, none within an ulp of a threshold in
 * practice) do not meet. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "optest.h"
#include "ref_nms.h"

typedef struct nms_case_t {
  int64_t batch, classes, boxes;
  bool center_point_box;
  int64_t max_output; /* max_output_boxes_per_class */
  float iou_threshold;
  bool has_score_threshold;
  float score_threshold;
  int score_levels;   /* > 0: scores are multiples of 1 / score_levels (ties); 0: uniform */
  bool identical;     /* every box the same: the first of each class suppresses the rest */
} nms_case_t;

static bool coin(hgr_test_rng_t* rng) { return hgr_test_rng_below(rng, 2) != 0; }

/* Boxes around a few centers, so that many overlap; one in eight has zero width or
 * height; [y1, x1, y2, x2] with each pair in either order, or centers and extents. */
static void random_boxes(const nms_case_t* k, hgr_test_rng_t* rng, float* boxes) {
  float centers[4][2];
  for (int i = 0; i < 4; ++i) {
    centers[i][0] = hgr_test_rng_float(rng, 0, 10);
    centers[i][1] = hgr_test_rng_float(rng, 0, 10);
  }
  float first[4] = {0};
  for (int64_t i = 0; i < k->batch * k->boxes; ++i) {
    float* box = boxes + 4 * i;
    if (k->identical && i % k->boxes) {
      memcpy(box, first, sizeof(first));
      continue;
    }
    const float* center = centers[hgr_test_rng_below(rng, 4)];
    float x = center[0] + hgr_test_rng_float(rng, -1.5f, 1.5f), y = center[1] + hgr_test_rng_float(rng, -1.5f, 1.5f);
    float width = hgr_test_rng_float(rng, 0.2f, 3), height = hgr_test_rng_float(rng, 0.2f, 3);
    uint32_t degenerate = hgr_test_rng_below(rng, 16);
    if (degenerate == 0) width = 0;
    if (degenerate == 1) height = 0;
    if (k->center_point_box) {
      box[0] = x, box[1] = y, box[2] = width, box[3] = height;
    } else {
      bool flip_y = coin(rng), flip_x = coin(rng);
      box[flip_y ? 2 : 0] = y - height / 2, box[flip_y ? 0 : 2] = y + height / 2;
      box[flip_x ? 3 : 1] = x - width / 2, box[flip_x ? 1 : 3] = x + width / 2;
    }
    if (k->identical) memcpy(first, box, sizeof(first));
  }
}

static void node_attrs(const nms_case_t* k, char* attrs, size_t capacity) {
  int written = snprintf(attrs, capacity,
                         "\"center_point_box\": \"%d\", \"max_output_boxes_per_class\": \"%lld\", "
                         "\"iou_threshold\": \"%.9g\", \"has_score_threshold\": \"%d\"",
                         k->center_point_box, (long long)k->max_output, k->iou_threshold, k->has_score_threshold);
  if (k->has_score_threshold && written > 0 && (size_t)written < capacity)
    snprintf(attrs + written, capacity - (size_t)written, ", \"score_threshold\": \"%.9g\"", k->score_threshold);
}

static void check_case(const nms_case_t* k, hgr_test_rng_t* rng) {
  char attrs[512];
  node_attrs(k, attrs, sizeof(attrs));
  hgr_optest_t t;
  hgr_optest_init(&t, "non_max_suppression", attrs);
  int64_t box_shape[3] = {k->batch, k->boxes, 4}, score_shape[3] = {k->batch, k->classes, k->boxes};
  float* boxes = hgr_optest_input(&t, "float32", 3, box_shape);
  float* scores = hgr_optest_input(&t, "float32", 3, score_shape);
  random_boxes(k, rng, boxes);
  for (int64_t i = 0; i < k->batch * k->classes * k->boxes; ++i)
    scores[i] = k->score_levels
                    ? (float)hgr_test_rng_below(rng, (uint32_t)k->score_levels + 1) / (float)k->score_levels
                    : hgr_test_rng_float(rng, 0, 1);
  hgr_ref_nms_t c = {.batch = k->batch, .classes = k->classes, .boxes = k->boxes, .box_data = boxes,
                     .score_data = scores, .center_point_box = k->center_point_box,
                     .max_output_boxes_per_class = k->max_output, .iou_threshold = k->iou_threshold,
                     .has_score_threshold = k->has_score_threshold, .score_threshold = k->score_threshold};
  int64_t selected_shape[2] = {hgr_ref_nms_capacity(&c), 3};
  int32_t* selected = hgr_optest_output(&t, "int32", 2, selected_shape);
  int32_t* count = hgr_optest_output(&t, "int32", 0, NULL);
  *count = (int32_t)hgr_ref_nms(&c, selected);
  print_message("B %lld C %lld N %lld center_point_box %d max_output %lld iou %g score %s%g levels %d%s: %d of "
                "%lld rows\n",
                (long long)k->batch, (long long)k->classes, (long long)k->boxes, k->center_point_box,
                (long long)k->max_output, k->iou_threshold, k->has_score_threshold ? "> " : "none ",
                k->has_score_threshold ? k->score_threshold : 0.0f, k->score_levels, k->identical ? " identical" : "", *count,
                (long long)selected_shape[0]);
  hgr_optest_check(hgr_optest_instance, hgr_optest_device, &t);
  hgr_optest_free(&t);
}

/* Both formats x with and without a score threshold x the thresholds and limits,
 * the sizes smaller on the simulator. */
static void matches_reference_over_attribute_combinations(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 11);
  bool simulator = hgr_optest_is_simulator(hgr_optest_device);
  static const float ious[3] = {0.5f, 0.0f, 1.0f};
  static const int64_t limits[4] = {3, 1, 0, 1000};
  for (int format = 0; format < 2; ++format)
    for (int thresholded = 0; thresholded < 2; ++thresholded)
      for (int i = 0; i < (simulator ? 2 : 4); ++i) {
        nms_case_t k = {.batch = 1 + hgr_test_rng_below(&rng, 2), .classes = 1 + hgr_test_rng_below(&rng, 3),
                        .boxes = simulator ? 5 + hgr_test_rng_below(&rng, 20) : 10 + hgr_test_rng_below(&rng, 90),
                        .center_point_box = format, .max_output = limits[(i + format) % 4],
                        .iou_threshold = ious[(i + thresholded) % 3], .has_score_threshold = thresholded,
                        .score_threshold = thresholded ? hgr_test_rng_float(&rng, 0, 0.7f) : 0,
                        .score_levels = coin(&rng) ? 8 : 0};
        check_case(&k, &rng);
      }
}

/* Scores of few distinct values: equal scores are taken by ascending box index. */
static void equal_scores_take_the_lower_box_first(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 21);
  nms_case_t k = {.batch = 2, .classes = 2, .boxes = 40, .max_output = 40, .iou_threshold = 0.3f, .score_levels = 2};
  check_case(&k, &rng);
  k.center_point_box = true, k.has_score_threshold = true, k.score_threshold = 0.5f, k.score_levels = 1;
  check_case(&k, &rng); /* every candidate scores 1 */
}

/* The same box everywhere: each class takes its best; and a threshold above every
 * score: nothing is selected, the output is all zeros and the count 0. */
static void everything_suppressed_or_below_the_threshold(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 31);
  nms_case_t k = {.batch = 2, .classes = 3, .boxes = 17, .max_output = 5, .iou_threshold = 0.5f, .identical = true};
  check_case(&k, &rng);
  k.center_point_box = true;
  check_case(&k, &rng);
  k = (nms_case_t){.batch = 2, .classes = 2, .boxes = 9, .max_output = 4, .iou_threshold = 0.5f,
                   .has_score_threshold = true, .score_threshold = 1.0f};
  check_case(&k, &rng);
  k.max_output = 0, k.has_score_threshold = false; /* max_output 0: one zero row */
  check_case(&k, &rng);
}

/* More candidates than a work-group's items, with the device's limits made small
 * (blocks of 4; few candidates sorted as one run, more over merge rounds whose
 * slices span several runs), then larger ones on the device as it is. */
static void boxes_beyond_the_work_group(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 41);
  hgr_device_info_t* info = hgr_optest_device_info();
  hgr_device_info_t saved = *info;
  info->max_work_group_size = 4;
  for (int d = 0; d < 3; ++d) info->max_work_item_sizes[d] = 4;
  nms_case_t k = {.batch = 2, .classes = 2, .boxes = 37, .max_output = 20, .iou_threshold = 0.4f};
  check_case(&k, &rng);
  k.center_point_box = true, k.has_score_threshold = true, k.score_threshold = 0.2f, k.score_levels = 4;
  check_case(&k, &rng);
  k = (nms_case_t){.batch = 1, .classes = 2, .boxes = 150, .max_output = 40, .iou_threshold = 0.6f};
  check_case(&k, &rng);
  *info = saved;
  bool simulator = hgr_optest_is_simulator(hgr_optest_device);
  k = (nms_case_t){.batch = 1, .classes = simulator ? 2 : 5, .boxes = simulator ? 300 : 3000, .max_output = 100,
                   .iou_threshold = 0.45f, .has_score_threshold = true, .score_threshold = 0.25f};
  check_case(&k, &rng);
  k.has_score_threshold = false, k.max_output = simulator ? 300 : 3000, k.iou_threshold = 0.7f;
  k.boxes = simulator ? 150 : 1500;
  check_case(&k, &rng);
}

static void expect_refusal(const char* attrs, int64_t boxes_dim2, int64_t score_classes, const char* message) {
  hgr_optest_t t;
  hgr_optest_init(&t, "non_max_suppression", attrs);
  int64_t box_shape[3] = {1, 3, boxes_dim2}, score_shape[3] = {1, score_classes, 3};
  hgr_optest_input(&t, "float32", 3, box_shape);
  hgr_optest_input(&t, "float32", 3, score_shape);
  int64_t selected_shape[2] = {3, 3};
  hgr_optest_output(&t, "int32", 2, selected_shape);
  hgr_optest_output(&t, "int32", 0, NULL);
  ASSERT_STATUS(hgr_optest_create(hgr_optest_instance, hgr_optest_device, &t), HGR_STATUS_INVALID_ARGUMENT, message);
  hgr_optest_free(&t);
}

static void bad_attrs_and_shapes_are_named(void** state) {
  (void)state;
  expect_refusal("\"max_output_boxes_per_class\": \"3\", \"center_point_box\": \"2\"", 4, 1,
                 "(non_max_suppression): attr 'center_point_box' = 2 must be 0 ([y1, x1, y2, x2]) or 1");
  expect_refusal("\"max_output_boxes_per_class\": \"-1\"", 4, 1,
                 "attr 'max_output_boxes_per_class' = -1 must be at least 0");
  expect_refusal("\"max_output_boxes_per_class\": \"3\", \"iou_threshold\": \"1.5\"", 4, 1,
                 "attr 'iou_threshold' = 1.5 must be in [0, 1]");
  expect_refusal("\"max_output_boxes_per_class\": \"3\", \"score_threshold\": \"0.5\"", 4, 1,
                 "attr 'score_threshold' is given but 'has_score_threshold' is not set");
  expect_refusal("\"max_output_boxes_per_class\": \"3\", \"has_score_threshold\": \"1\", \"score_threshold\": \"inf\"",
                 4, 1, "attr 'score_threshold' = inf must be a finite float32 value");
  expect_refusal("\"max_output_boxes_per_class\": \"3\"", 5, 1,
                 "input 0 'boxes' is shaped [1, 3, 5]; it must be [batch, boxes, 4]");
  /* the capacity follows the classes: [2 x 3, 3] with 2 classes */
  expect_refusal("\"max_output_boxes_per_class\": \"3\"", 4, 2, "output 0 (entry 2) should be shaped [6, 3]");
  expect_refusal("\"max_output_boxes_per_class\": \"3\", \"soft_nms\": \"1\"", 4, 1,
                 "(non_max_suppression): unknown attr 'soft_nms'");
}

int main(int argc, char** argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(matches_reference_over_attribute_combinations),
      cmocka_unit_test(equal_scores_take_the_lower_box_first),
      cmocka_unit_test(everything_suppressed_or_below_the_threshold),
      cmocka_unit_test(boxes_beyond_the_work_group),
      cmocka_unit_test(bad_attrs_and_shapes_are_named),
  };
  return hgr_optest_main(argc, argv, "ops_nms", tests, sizeof(tests) / sizeof(tests[0]));
}
