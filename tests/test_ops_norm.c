/* softmax, log_softmax, layer_norm and batch_norm against the references in
 * tests/ref_norm.c on random data (argument: a device spec).
 *
 * Tolerances, |got - expected| <= atol + rtol * |expected|, with u = 2^-24:
 * - softmax: rtol 1e-5, atol 1e-8. Relative error of exp(x - max) / sum: the
 *   rounding of x - max (|x - max| <= 8 here, 8u relative through exp), exp (3 ulp),
 *   the compensated sum plus at most 8 tree levels (~10u), the division (2.5 ulp):
 *   about 2e-6 in all.
 * - log_softmax: rtol 1e-5, atol 1e-5. Absolute error of (x - max) - log(sum): the
 *   rounding of x - max (8u), log (3 ulp of log(sum) <= 8.4), the sum's relative
 *   error carried through log (~10u): under 5e-6.
 * - layer_norm: rtol 1e-5, atol 1e-5. (x - mean) and the variance carry a few u
 *   relative (compensated sums), sqrt and the division 5.5 ulp, gamma and beta one
 *   rounding each: ~1e-6 of |(x - mean) * inv_std * gamma| + |beta| <= 8 here.
 * - batch_norm: rtol 1e-5, atol 1e-6. One subtraction, sqrt (3 ulp), a division
 *   (2.5 ulp), a product and a sum per element: ~8u relative to the terms, and the
 *   terms exceed |beta| <= 1 only where the result does too. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "optest.h"
#include "ref_norm.h"

/* A tensor and an axis; large cases are skipped on Oclgrind. */
typedef struct axis_case_t {
  int32_t ndim;
  int64_t shape[4];
  int64_t axis;
  bool large;
} axis_case_t;

static const axis_case_t axis_cases[] = {
    {1, {1}, -1, false},
    {1, {7}, 0, false},
    {2, {3, 1}, -1, false},      /* axis length 1 */
    {2, {5, 3}, 1, false},       /* axis length 3 */
    {2, {4, 3}, 0, false},       /* first axis */
    {3, {2, 7, 5}, 1, false},    /* middle axis */
    {3, {2, 7, 5}, -3, false},   /* first axis, negative */
    {3, {2, 7, 5}, -1, false},   /* last axis, short rows: a work-item per row */
    {2, {3, 37}, -1, false},     /* a work-group per row (32 work-items, 5 take two) */
    {2, {2, 100}, 1, false},     /* a work-group per row (64 work-items) */
    {3, {1, 33, 2}, 1, false},   /* a long axis with inner 2: a work-item per column */
    {2, {3, 1000}, -1, true},
    {2, {2, 4099}, -1, true},
    {3, {2, 4099, 3}, 1, true},
    {2, {4099, 3}, 0, true},
    {2, {1000, 257}, 1, true},   /* many rows, 256 work-items each */
    {4, {2, 3, 1000, 1}, 2, true}, /* trailing extent 1: still rows */
};
#define AXIS_CASE_COUNT (sizeof(axis_cases) / sizeof(axis_cases[0]))

static void view(const axis_case_t* c, int64_t* outer, int64_t* len, int64_t* inner) {
  int32_t axis = (int32_t)(c->axis < 0 ? c->axis + c->ndim : c->axis);
  *outer = *inner = 1;
  for (int32_t d = 0; d < axis; ++d) *outer *= c->shape[d];
  for (int32_t d = axis + 1; d < c->ndim; ++d) *inner *= c->shape[d];
  *len = c->shape[axis];
}

static bool skip_case(const axis_case_t* c) { return c->large && hgr_optest_is_simulator(hgr_optest_device); }

/* Rows (inner 1) run in the row or column kernels or in the vector kernels (the
 * ops' two tile candidates; the rule takes the vectors on PoCL): each on every
 * device. */
static void check_each_candidate(hgr_optest_t* t) {
  for (uint32_t candidate = 0; candidate < 2; ++candidate) {
    t->force_candidate = true;
    t->candidate = candidate;
    hgr_optest_check(hgr_optest_instance, hgr_optest_device, t);
  }
}

static void check_softmax(const axis_case_t* c, bool log, hgr_test_rng_t* rng) {
  char attrs[64];
  snprintf(attrs, sizeof(attrs), "\"axis\": \"%lld\"", (long long)c->axis);
  hgr_optest_t t;
  hgr_optest_init(&t, log ? "log_softmax" : "softmax", attrs);
  float* x = hgr_optest_input(&t, "float32", c->ndim, c->shape);
  float* y = hgr_optest_output(&t, "float32", c->ndim, c->shape);
  hgr_optest_fill(&t.inputs[0], rng, -4, 4);
  int64_t outer, len, inner;
  view(c, &outer, &len, &inner);
  hgr_ref_softmax(x, y, outer, len, inner, log);
  if (log) hgr_optest_tolerance(&t, 1e-5, 1e-5);
  else hgr_optest_tolerance(&t, 1e-5, 1e-8);
  check_each_candidate(&t);
  hgr_optest_free(&t);
}

static void softmax_matches_reference(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 11);
  for (size_t k = 0; k < AXIS_CASE_COUNT; ++k) {
    if (skip_case(&axis_cases[k])) continue;
    check_softmax(&axis_cases[k], false, &rng);
    check_softmax(&axis_cases[k], true, &rng);
  }
}

/* Large magnitudes: without subtracting the max, exp overflows. */
static void softmax_is_stable_for_large_inputs(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 12);
  for (int log = 0; log < 2; ++log) {
    hgr_optest_t t;
    hgr_optest_init(&t, log ? "log_softmax" : "softmax", NULL);
    int64_t shape[2] = {3, 40};
    float* x = hgr_optest_input(&t, "float32", 2, shape);
    float* y = hgr_optest_output(&t, "float32", 2, shape);
    hgr_optest_fill(&t.inputs[0], &rng, 500, 520);
    hgr_ref_softmax(x, y, 3, 40, 1, log);
    /* x - max is exact here (Sterbenz), so the usual tolerances hold. */
    if (log) hgr_optest_tolerance(&t, 1e-5, 1e-5);
    else hgr_optest_tolerance(&t, 1e-5, 1e-8);
    hgr_optest_check(hgr_optest_instance, hgr_optest_device, &t);
    hgr_optest_free(&t);
  }
}

/* layer_norm of the case; with skip (1), of x + skip (input 3, a residual the kernel
 * adds); with skip 2 also x + skip as output 1 (the residual stream a pre-norm
 * transformer keeps adding to). */
static void check_layer_norm_skip(const axis_case_t* c, bool center, bool scale, double epsilon, int skip,
                                  hgr_test_rng_t* rng) {
  char attrs[160];
  snprintf(attrs, sizeof(attrs), "\"axis\": \"%lld\", \"epsilon\": \"%g\", \"center\": \"%s\", \"scale\": \"%s\"",
           (long long)c->axis, epsilon, center ? "True" : "False", scale ? "1" : "0");
  int64_t outer, len, inner;
  view(c, &outer, &len, &inner);
  hgr_optest_t t;
  hgr_optest_init(&t, "layer_norm", attrs);
  float* x = hgr_optest_input(&t, "float32", c->ndim, c->shape);
  float* gamma = hgr_optest_input(&t, "float32", 1, &len);
  float* beta = hgr_optest_input(&t, "float32", 1, &len);
  float* residual = skip ? hgr_optest_input(&t, "float32", c->ndim, c->shape) : NULL;
  float* y = hgr_optest_output(&t, "float32", c->ndim, c->shape);
  float* stream = skip == 2 ? hgr_optest_output(&t, "float32", c->ndim, c->shape) : NULL;
  /* Not centred on 0, so the mean matters. */
  hgr_optest_fill(&t.inputs[0], rng, -1, 7);
  hgr_optest_fill(&t.inputs[1], rng, -2, 2);
  hgr_optest_fill(&t.inputs[2], rng, -1, 1);
  float* sum = x;
  if (skip) { /* the reference normalizes the sum, as the unfused add and layer_norm do */
    hgr_optest_fill(&t.inputs[3], rng, -3, 3);
    sum = stream ? stream : malloc(t.inputs[0].count * sizeof(float));
    assert_non_null(sum);
    for (uint64_t i = 0; i < t.inputs[0].count; ++i) sum[i] = x[i] + residual[i];
  }
  hgr_ref_layer_norm(sum, gamma, beta, y, outer, len, inner, (float)epsilon, center, scale);
  if (skip == 1) free(sum);
  hgr_optest_tolerance(&t, 1e-5, 1e-5);
  check_each_candidate(&t);
  hgr_optest_free(&t);
}

static void check_layer_norm(const axis_case_t* c, bool center, bool scale, double epsilon, hgr_test_rng_t* rng) {
  check_layer_norm_skip(c, center, scale, epsilon, 0, rng);
}

static void layer_norm_matches_reference(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 21);
  for (size_t k = 0; k < AXIS_CASE_COUNT; ++k) {
    if (skip_case(&axis_cases[k])) continue;
    /* Every combination of center and scale over the cases, two epsilons. */
    check_layer_norm(&axis_cases[k], (k & 1) == 0, (k & 2) == 0, k % 3 ? 1e-5 : 1e-2, &rng);
    /* with a skip input on every kernel (rows in vectors, row groups, columns), and
     * with the sum as output 1 too */
    check_layer_norm_skip(&axis_cases[k], (k & 2) == 0, (k & 1) == 0, 1e-5, 1, &rng);
    check_layer_norm_skip(&axis_cases[k], (k & 1) == 0, (k & 2) == 0, 1e-5, 2, &rng);
  }
}

typedef struct batch_case_t {
  int32_t ndim;
  int64_t shape[4];
  int64_t axis; /* INT64_MIN: the default, 1 */
  uint32_t outputs;
  bool center, scale, large;
} batch_case_t;

static void batch_norm_matches_reference(void** state) {
  (void)state;
  static const batch_case_t cases[] = {
      {4, {2, 3, 4, 5}, INT64_MIN, 1, true, true, false},
      {4, {2, 3, 4, 5}, 1, 3, true, true, false},
      {4, {2, 4, 5, 3}, 3, 3, true, true, false},   /* NHWC */
      {4, {2, 4, 5, 3}, -1, 1, false, true, false},
      {2, {1, 1}, 1, 3, true, false, false},
      {2, {7, 5}, 0, 1, false, false, false},
      {3, {1, 9, 1}, 1, 3, true, true, false},
      {4, {4, 64, 28, 28}, 1, 3, true, true, true},
      {2, {10000, 33}, -1, 1, true, true, true},
  };
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 31);
  for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); ++k) {
    const batch_case_t* c = &cases[k];
    if (c->large && hgr_optest_is_simulator(hgr_optest_device)) continue;
    axis_case_t as_axis = {c->ndim, {c->shape[0], c->shape[1], c->shape[2], c->shape[3]},
                           c->axis == INT64_MIN ? 1 : c->axis, false};
    int64_t outer, channels, inner;
    view(&as_axis, &outer, &channels, &inner);
    char attrs[160] = "";
    if (c->axis != INT64_MIN)
      snprintf(attrs, sizeof(attrs), "\"axis\": \"%lld\", \"center\": \"%d\", \"scale\": \"%d\"",
               (long long)c->axis, c->center, c->scale);
    hgr_optest_t t;
    hgr_optest_init(&t, "batch_norm", attrs);
    float* x = hgr_optest_input(&t, "float32", c->ndim, c->shape);
    float* params[4];
    for (int p = 0; p < 4; ++p) params[p] = hgr_optest_input(&t, "float32", 1, &channels);
    float* y = hgr_optest_output(&t, "float32", c->ndim, c->shape);
    hgr_optest_fill(&t.inputs[0], &rng, -3, 3);
    hgr_optest_fill(&t.inputs[1], &rng, -2, 2);   /* gamma */
    hgr_optest_fill(&t.inputs[2], &rng, -1, 1);   /* beta */
    hgr_optest_fill(&t.inputs[3], &rng, -1, 1);   /* moving_mean */
    hgr_optest_fill(&t.inputs[4], &rng, 0.1f, 2); /* moving_var */
    hgr_ref_batch_norm(x, params[0], params[1], params[2], params[3], y, outer, channels, inner, 1e-5, c->center,
                       c->scale);
    if (c->outputs == 3) {
      memcpy(hgr_optest_output(&t, "float32", 1, &channels), params[2], (size_t)channels * sizeof(float));
      memcpy(hgr_optest_output(&t, "float32", 1, &channels), params[3], (size_t)channels * sizeof(float));
    }
    hgr_optest_tolerance(&t, 1e-5, 1e-6);
    hgr_optest_check(hgr_optest_instance, hgr_optest_device, &t);
    hgr_optest_free(&t);
  }
}

/* The row kernels on a device that allows work-groups of only `limit` work-items
 * (1: no tree at all; 2; 3: not a power of two, so groups of 2). The test rewrites
 * the limits the instance reports for its device, which the executor plans from. */
static void rows_work_with_tiny_work_groups(void** state) {
  (void)state;
  hgr_device_info_t* info = hgr_optest_device_info();
  const hgr_device_info_t saved = *info;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 41);
  /* Work-group size 1, then 2 through the work-item limit, then 3. */
  static const size_t groups[] = {1, 0, 3}, items[] = {0, 2, 0};
  const axis_case_t c = {2, {3, 37}, -1, false};
  for (size_t k = 0; k < 3; ++k) {
    info->max_work_group_size = groups[k] ? groups[k] : saved.max_work_group_size;
    info->max_work_item_sizes[0] = items[k] ? items[k] : saved.max_work_item_sizes[0];
    check_softmax(&c, k == 1, &rng);
    check_layer_norm(&c, true, true, 1e-5, &rng);
  }
  *info = saved;
}

/* ---- errors ------------------------------------------------------------------------- */

static void expect_error(const hgr_optest_t* t, const char* first, const char* second) {
  ASSERT_STATUS(hgr_optest_create(hgr_optest_instance, hgr_optest_device, t), HGR_STATUS_INVALID_ARGUMENT, first,
                second);
}

/* ---- lrn and instance_norm ------------------------------------------------------------ */

typedef struct lrn_case_t {
  int32_t ndim;
  int64_t shape[4];
  int64_t axis, size;
  double alpha, beta, bias;
} lrn_case_t;

/* lrn: rtol 2e-5, atol 1e-6. The sum of at most `size` squares rounds a few times
 * (u = 6e-8 each), the base's relative error times beta <= 0.75 carries into the
 * power, computed as x * exp2(-beta log2 base): log2 (3 ulp) and the product give
 * the exponent a relative error of ~4u, i.e. |beta log2 base| ln 2 * 4u relative in
 * the result (< 1e-6 for the bases here), exp2 3 ulp more: about 3e-6 in all (beta
 * 0.75 is rsqrt(base) * sqrt(rsqrt(base)) instead: 2 + 3 ulp and two products). Sizes
 * odd and even (ONNX's window is lopsided for even sizes), larger than the channels,
 * and other axes; the last two cases have enough columns (outer x inner >= 1024) for
 * the kernel that walks each column's channels. */
static void lrn_matches_reference(void** state) {
  (void)state;
  static const lrn_case_t cases[] = {
      {4, {1, 5, 3, 4}, 1, 3, 1e-4, 0.75, 1.0},  {4, {2, 7, 2, 3}, 1, 2, 0.02, 0.5, 2.0},
      {4, {1, 6, 3, 3}, 1, 4, 0.5, 0.75, 1.0},   {4, {1, 3, 2, 5}, 1, 5, 0.1, 1.0, 0.5},
      {2, {3, 9}, 1, 1, 1.0, 0.75, 1.0},         {3, {2, 4, 6}, 2, 3, 0.3, 0.6, 1.5},
      {4, {2, 3, 4, 5}, -3, 6, 0.2, 0.9, 1.0},
      {4, {1, 6, 32, 40}, 1, 5, 1e-3, 0.75, 2.0}, {3, {2, 5, 700}, 1, 4, 0.3, 0.6, 1.5},
  };
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 31);
  for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); ++k) {
    const lrn_case_t* c = &cases[k];
    char attrs[192];
    snprintf(attrs, sizeof(attrs),
             "\"size\": \"%lld\", \"axis\": \"%lld\", \"alpha\": \"%.9g\", \"beta\": \"%.9g\", \"bias\": \"%.9g\"",
             (long long)c->size, (long long)c->axis, c->alpha, c->beta, c->bias);
    int32_t axis = (int32_t)(c->axis < 0 ? c->axis + c->ndim : c->axis);
    int64_t outer = 1, inner = 1;
    for (int32_t d = 0; d < axis; ++d) outer *= c->shape[d];
    for (int32_t d = axis + 1; d < c->ndim; ++d) inner *= c->shape[d];
    hgr_optest_t t;
    hgr_optest_init(&t, "lrn", attrs);
    float* x = hgr_optest_input(&t, "float32", c->ndim, c->shape);
    float* y = hgr_optest_output(&t, "float32", c->ndim, c->shape);
    hgr_optest_fill(&t.inputs[0], &rng, -3, 3);
    /* the kernel gets alpha and beta as float32 */
    hgr_ref_lrn(x, y, outer, c->shape[axis], inner, c->size, (float)c->alpha, (float)c->beta, (float)c->bias);
    hgr_optest_tolerance(&t, 2e-5, 1e-6);
    hgr_optest_check(hgr_optest_instance, hgr_optest_device, &t);
    hgr_optest_free(&t);
  }
}

typedef struct instance_case_t {
  int32_t ndim;
  int64_t shape[5];
  int64_t axis;
  bool large;
} instance_case_t;

/* instance_norm: rtol 1e-5, atol 1e-5, as layer_norm's (the same two compensated
 * passes). Rows short (a work-item each) and long (a work-group), channels on axis 1
 * and last (NHWC-like, strided rows), 3-D to 5-D. */
static void instance_norm_matches_reference(void** state) {
  (void)state;
  static const instance_case_t cases[] = {
      {4, {2, 3, 4, 5}, 1, false}, {3, {1, 4, 7}, 1, false},     {4, {1, 2, 6, 7}, 1, false},
      {4, {2, 3, 5, 4}, -1, false}, {5, {1, 2, 3, 2, 4}, 2, false}, {3, {2, 3, 1}, 1, false},
      {4, {2, 8, 32, 32}, 1, true}, {4, {1, 40, 41, 16}, 3, true},
  };
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 32);
  for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); ++k) {
    const instance_case_t* c = &cases[k];
    if (c->large && hgr_optest_is_simulator(hgr_optest_device)) continue;
    bool center = (k & 1) == 0, scale = (k & 2) == 0;
    double epsilon = k % 3 ? 1e-5 : 1e-2;
    char attrs[192];
    snprintf(attrs, sizeof(attrs), "\"axis\": \"%lld\", \"epsilon\": \"%g\", \"center\": \"%s\", \"scale\": \"%s\"",
             (long long)c->axis, epsilon, center ? "True" : "False", scale ? "1" : "0");
    int32_t axis = (int32_t)(c->axis < 0 ? c->axis + c->ndim : c->axis);
    int64_t before = 1, after = 1, channels = c->shape[axis];
    for (int32_t d = 1; d < axis; ++d) before *= c->shape[d];
    for (int32_t d = axis + 1; d < c->ndim; ++d) after *= c->shape[d];
    hgr_optest_t t;
    hgr_optest_init(&t, "instance_norm", attrs);
    float* x = hgr_optest_input(&t, "float32", c->ndim, c->shape);
    float* gamma = hgr_optest_input(&t, "float32", 1, &channels);
    float* beta = hgr_optest_input(&t, "float32", 1, &channels);
    float* y = hgr_optest_output(&t, "float32", c->ndim, c->shape);
    hgr_optest_fill(&t.inputs[0], &rng, -1, 7);
    hgr_optest_fill(&t.inputs[1], &rng, -2, 2);
    hgr_optest_fill(&t.inputs[2], &rng, -1, 1);
    hgr_ref_instance_norm(x, gamma, beta, y, c->shape[0], before, channels, after, (float)epsilon, center, scale);
    hgr_optest_tolerance(&t, 1e-5, 1e-5);
    hgr_optest_check(hgr_optest_instance, hgr_optest_device, &t);
    hgr_optest_free(&t);
  }
}

static void expect_norm_error(const char* op, const char* attrs, int32_t ndim, const int64_t* shape,
                              int64_t param_len, const char* message) {
  hgr_optest_t t;
  hgr_optest_init(&t, op, attrs);
  hgr_optest_input(&t, "float32", ndim, shape);
  if (param_len >= 0) {
    hgr_optest_input(&t, "float32", 1, &param_len);
    hgr_optest_input(&t, "float32", 1, &param_len);
  }
  hgr_optest_output(&t, "float32", ndim, shape);
  char prefix[64];
  snprintf(prefix, sizeof(prefix), "node %u '%s_node' (%s): ", t.input_count, op, op);
  ASSERT_STATUS(hgr_optest_create(hgr_optest_instance, hgr_optest_device, &t), HGR_STATUS_INVALID_ARGUMENT, prefix,
                message);
  hgr_optest_free(&t);
}

static void lrn_and_instance_norm_reject_bad_attrs_and_shapes(void** state) {
  (void)state;
  const int64_t s4[4] = {1, 3, 4, 4}, s1[1] = {5};
  expect_norm_error("lrn", NULL, 4, s4, -1, "attr 'size' is required");
  expect_norm_error("lrn", "\"size\": \"0\"", 4, s4, -1, "attr 'size' = 0 must be at least 1");
  expect_norm_error("lrn", "\"size\": \"3\", \"axis\": \"4\"", 4, s4, -1,
                    "attr 'axis' = 4 is out of range for 4 dimensions");
  expect_norm_error("lrn", "\"size\": \"3\", \"beta\": \"inf\"", 4, s4, -1,
                    "attr 'beta' = \"inf\" must be a finite number");
  expect_norm_error("lrn", "\"size\": \"3\", \"bias\": \"x\"", 4, s4, -1, "attr 'bias' = \"x\"");
  expect_norm_error("instance_norm", NULL, 4, s4, 4,
                    "input 1 'gamma' (one value per channel, along axis 1) (entry 1) should be shaped [3]");
  expect_norm_error("instance_norm", "\"axis\": \"0\"", 4, s4, 1,
                    "attr 'axis' = \"0\" names the batch axis; the channel axis must be another");
  expect_norm_error("instance_norm", NULL, 1, s1, 5,
                    "input 0 'data' is shaped [5]; it must have at least 2 dimensions ([N, C, ...])");
  expect_norm_error("instance_norm", "\"epsilon\": \"-1\"", 4, s4, 3,
                    "attr 'epsilon' = \"-1\" must be a finite number >= 0");
}

static void softmax_rejects_bad_attrs_and_shapes(void** state) {
  (void)state;
  int64_t shape[2] = {3, 4}, other[2] = {4, 3};
  hgr_optest_t t;
  hgr_optest_init(&t, "softmax", "\"axis\": \"2\"");
  hgr_optest_input(&t, "float32", 2, shape);
  hgr_optest_output(&t, "float32", 2, shape);
  expect_error(&t, "node 1 'softmax_node' (softmax): ", "attr 'axis' = 2 is out of range for 2 dimensions");
  hgr_optest_free(&t);

  hgr_optest_init(&t, "log_softmax", "\"axis\": \"-3\"");
  hgr_optest_input(&t, "float32", 2, shape);
  hgr_optest_output(&t, "float32", 2, shape);
  expect_error(&t, "node 1 'log_softmax_node' (log_softmax): ", "attr 'axis' = -3 is out of range");
  hgr_optest_free(&t);

  hgr_optest_init(&t, "softmax", "\"axis\": \"last\"");
  hgr_optest_input(&t, "float32", 2, shape);
  hgr_optest_output(&t, "float32", 2, shape);
  expect_error(&t, "node 1 'softmax_node' (softmax): ", "attr 'axis' = \"last\" is not an integer");
  hgr_optest_free(&t);

  hgr_optest_init(&t, "log_softmax", "\"axes\": \"1\"");
  hgr_optest_input(&t, "float32", 2, shape);
  hgr_optest_output(&t, "float32", 2, shape);
  expect_error(&t, "node 1 'log_softmax_node' (log_softmax): ", "unknown attr 'axes'");
  hgr_optest_free(&t);

  hgr_optest_init(&t, "softmax", NULL);
  hgr_optest_input(&t, "float32", 2, shape);
  hgr_optest_output(&t, "float32", 2, other);
  expect_error(&t, "node 1 'softmax_node' (softmax): ", "output 0 (entry 1) should be shaped [3, 4]");
  hgr_optest_free(&t);

  hgr_optest_init(&t, "softmax", NULL);
  hgr_optest_input(&t, "int32", 2, shape);
  hgr_optest_output(&t, "int32", 2, shape);
  expect_error(&t, "node 1 'softmax_node' (softmax): ", "input 0 (entry 0) is int32");
  hgr_optest_free(&t);
}

/* A layer_norm node over [2, 5] with the given attrs and gamma of gamma_len values. */
static void layer_norm_node(hgr_optest_t* t, const char* attrs, int64_t gamma_len) {
  int64_t shape[2] = {2, 5}, len = 5;
  hgr_optest_init(t, "layer_norm", attrs);
  hgr_optest_input(t, "float32", 2, shape);
  hgr_optest_input(t, "float32", 1, &gamma_len);
  hgr_optest_input(t, "float32", 1, &len);
  hgr_optest_output(t, "float32", 2, shape);
}

static void layer_norm_rejects_bad_attrs_and_shapes(void** state) {
  (void)state;
  static const char prefix[] = "node 3 'layer_norm_node' (layer_norm): ";
  hgr_optest_t t;
  layer_norm_node(&t, NULL, 4);
  expect_error(&t, prefix, "input 1 'gamma' (one value per position along axis 1) (entry 1) should be shaped [5]");
  hgr_optest_free(&t);

  /* Checked even when scale leaves gamma unused, as Relay types it. */
  layer_norm_node(&t, "\"scale\": \"False\", \"axis\": \"0\"", 5);
  expect_error(&t, prefix, "input 1 'gamma' (one value per position along axis 0) (entry 1) should be shaped [2]");
  hgr_optest_free(&t);

  layer_norm_node(&t, "\"epsilon\": \"-1e-5\"", 5);
  expect_error(&t, prefix, "attr 'epsilon' = \"-1e-5\" must be a finite number >= 0");
  hgr_optest_free(&t);

  layer_norm_node(&t, "\"epsilon\": \"inf\"", 5);
  expect_error(&t, prefix, "attr 'epsilon' = \"inf\" must be a finite number >= 0");
  hgr_optest_free(&t);

  layer_norm_node(&t, "\"epsilon\": \"small\"", 5);
  expect_error(&t, prefix, "attr 'epsilon' = \"small\" is not a number");
  hgr_optest_free(&t);

  layer_norm_node(&t, "\"center\": \"maybe\"", 5);
  expect_error(&t, prefix, "attr 'center' = \"maybe\" is not a bool");
  hgr_optest_free(&t);

  layer_norm_node(&t, "\"axis\": \"[1]\"", 5);
  expect_error(&t, prefix, "attr 'axis' = \"[1]\" is not an integer");
  hgr_optest_free(&t);

  layer_norm_node(&t, "\"momentum\": \"0.9\"", 5);
  expect_error(&t, prefix, "unknown attr 'momentum'");
  hgr_optest_free(&t);

  /* a skip input shaped otherwise than the data */
  layer_norm_node(&t, NULL, 5);
  hgr_optest_input(&t, "float32", 2, (int64_t[]){1, 5});
  expect_error(&t, "node 4 'layer_norm_node' (layer_norm): ", "input 3 (skip)");
  hgr_optest_free(&t);

  /* the sum as output 1 without a skip to add */
  layer_norm_node(&t, NULL, 5);
  hgr_optest_output(&t, "float32", 2, (int64_t[]){2, 5});
  expect_error(&t, prefix, "has 2 outputs, but output 1 (the sum of data and skip) needs input 3 (skip)");
  hgr_optest_free(&t);
}

/* A batch_norm node over [2, 3, 4] with `outputs` outputs and moving_var of var_len values. */
static void batch_norm_node(hgr_optest_t* t, const char* attrs, uint32_t outputs, int64_t var_len) {
  int64_t shape[3] = {2, 3, 4}, channels = 3;
  hgr_optest_init(t, "batch_norm", attrs);
  hgr_optest_input(t, "float32", 3, shape);
  for (int p = 0; p < 3; ++p) hgr_optest_input(t, "float32", 1, &channels);
  hgr_optest_input(t, "float32", 1, &var_len);
  hgr_optest_output(t, "float32", 3, shape);
  for (uint32_t k = 1; k < outputs; ++k) hgr_optest_output(t, "float32", 1, &channels);
}

static void batch_norm_rejects_bad_attrs_and_shapes(void** state) {
  (void)state;
  static const char prefix[] = "node 5 'batch_norm_node' (batch_norm): ";
  hgr_optest_t t;
  batch_norm_node(&t, NULL, 1, 4);
  expect_error(&t, prefix, "input 4 'moving_var' (one value per channel, along axis 1) (entry 4) should be shaped [3]");
  hgr_optest_free(&t);

  batch_norm_node(&t, "\"axis\": \"3\"", 1, 3);
  expect_error(&t, prefix, "attr 'axis' = 3 is out of range for 3 dimensions");
  hgr_optest_free(&t);

  batch_norm_node(&t, NULL, 2, 3);
  expect_error(&t, prefix, "has 1 output (the normalized data) or 3");
  hgr_optest_free(&t);

  batch_norm_node(&t, "\"epsilon\": \"-0.001\"", 3, 3);
  expect_error(&t, prefix, "attr 'epsilon' = \"-0.001\" must be a finite number >= 0");
  hgr_optest_free(&t);

  batch_norm_node(&t, "\"scale\": \"2\"", 3, 3);
  expect_error(&t, prefix, "attr 'scale' = \"2\" is not a bool");
  hgr_optest_free(&t);

  batch_norm_node(&t, "\"training\": \"1\"", 1, 3);
  expect_error(&t, prefix, "unknown attr 'training'");
  hgr_optest_free(&t);

  batch_norm_node(&t, "\"axis\": \"2\"", 1, 3);
  expect_error(&t, prefix, "input 1 'gamma' (one value per channel, along axis 2) (entry 1) should be shaped [4]");
  hgr_optest_free(&t);

  /* Outputs 1 and 2 are [C], like moving_mean and moving_var. */
  batch_norm_node(&t, NULL, 3, 3);
  t.outputs[1].shape[0] = 4;
  expect_error(&t, prefix, "output 1 (entry 6) should be shaped [3]");
  hgr_optest_free(&t);
}

int main(int argc, char** argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(softmax_matches_reference),
      cmocka_unit_test(softmax_is_stable_for_large_inputs),
      cmocka_unit_test(layer_norm_matches_reference),
      cmocka_unit_test(batch_norm_matches_reference),
      cmocka_unit_test(rows_work_with_tiny_work_groups),
      cmocka_unit_test(softmax_rejects_bad_attrs_and_shapes),
      cmocka_unit_test(layer_norm_rejects_bad_attrs_and_shapes),
      cmocka_unit_test(batch_norm_rejects_bad_attrs_and_shapes),
      cmocka_unit_test(lrn_matches_reference),
      cmocka_unit_test(instance_norm_matches_reference),
      cmocka_unit_test(lrn_and_instance_norm_reject_bad_attrs_and_shapes),
  };
  return hgr_optest_main(argc, argv, "ops_norm", tests, sizeof(tests) / sizeof(tests[0]));
}
