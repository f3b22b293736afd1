/* conv2d against the plain-C reference (tests/ref_conv.c) on random data (argument:
 * a device spec): strides, the three padding forms, dilation, groups and depthwise,
 * kernel shapes, the fused bias and relu, shapes that are 1, odd or no multiple of
 * any tile, the tile variants and work-group shapes the device's limits lead to,
 * and the attrs and shapes the op rejects.
 *
 * Tolerance, per output element: |got - ref| <= 1e-5 * S + 1e-7, with S = sum of
 * |x * w| over the element's taps plus |bias|. The reference sums exactly (in
 * double); the kernels round each of their n multiply-adds in float32 in their own
 * order, each rounding off by at most 2^-24 times a partial sum bounded by S. These
 * errors have random signs, so they grow like sqrt(n) * 2^-24 * S, about 2e-6 * S for
 * the largest n here (576); 1e-5 * S leaves a margin of five. A wrong kernel is far
 * outside it: missing or repeating a single tap changes an output by about S / n,
 * at least 1.7e-3 * S here. relu never increases an error. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "ops.h"
#include "optest.h"
#include "ref_conv.h"

/* One conv2d test case. padding_attr is the attr text (1, 2 or 4 values, or NULL
 * for no attr) and must agree with p.padding. */
typedef struct conv_case_t {
  int64_t x[4], w[4];
  hgr_ref_conv2d_t p;
  const char* padding_attr;
  bool bias;
} conv_case_t;

/* A fused leaky_relu or clip (HGR_REF_ACT_*) after a case's bias. */
typedef struct epilogue_t {
  int act;
  float alpha, a_min, a_max;
} epilogue_t;

/* The max pool (conv2d's attr pool_size: window = stride, no padding) that
 * conv_setup gives its cases; {0, 0}: none. */
static int64_t conv_pool[2] = {0, 0};

static void conv_attrs(const conv_case_t* c, const epilogue_t* e, char* attrs, size_t capacity) {
  int used = snprintf(attrs, capacity,
                      "\"strides\": \"[%lld, %lld]\", \"dilation\": \"[%lld, %lld]\", \"groups\": \"%lld\"",
                      (long long)c->p.strides[0], (long long)c->p.strides[1], (long long)c->p.dilation[0],
                      (long long)c->p.dilation[1], (long long)c->p.groups);
  if (c->padding_attr)
    used += snprintf(attrs + used, capacity - (size_t)used, ", \"padding\": \"%s\"", c->padding_attr);
  if (conv_pool[0])
    used += snprintf(attrs + used, capacity - (size_t)used, ", \"pool_size\": \"[%lld, %lld]\"",
                     (long long)conv_pool[0], (long long)conv_pool[1]);
  if (c->p.relu) snprintf(attrs + used, capacity - (size_t)used, ", \"activation\": \"relu\"");
  if (e && e->act == HGR_REF_ACT_LEAKY_RELU)
    snprintf(attrs + used, capacity - (size_t)used, ", \"activation\": \"leaky_relu\", \"alpha\": \"%.9g\"",
             (double)e->alpha);
  if (e && e->act == HGR_REF_ACT_CLIP)
    snprintf(attrs + used, capacity - (size_t)used,
             ", \"activation\": \"clip\", \"a_min\": \"%.9g\", \"a_max\": \"%.9g\"", (double)e->a_min,
             (double)e->a_max);
  if (e && e->act == HGR_REF_ACT_SIGMOID) snprintf(attrs + used, capacity - (size_t)used, ", \"activation\": \"sigmoid\"");
  if (e && e->act == HGR_REF_ACT_SILU) snprintf(attrs + used, capacity - (size_t)used, ", \"activation\": \"silu\"");
  if (e && e->act == HGR_REF_ACT_HARD_SWISH)
    snprintf(attrs + used, capacity - (size_t)used, ", \"activation\": \"hard_swish\"");
  if (e && e->act == HGR_REF_ACT_LEAKY_RELU_CLIP)
    snprintf(attrs + used, capacity - (size_t)used,
             ", \"activation\": \"leaky_relu_clip\", \"alpha\": \"%.9g\", \"a_min\": \"%.9g\", \"a_max\": \"%.9g\"",
             (double)e->alpha, (double)e->a_min, (double)e->a_max);
}

/* The max over conv_pool's windows of conv [shape] into y, and of their bounds
 * into bound (in place: the pooled bound of an output is written after the last
 * read of the bounds before it). */
static void pool_reference(const float* conv, const int64_t shape[4], float* y, double* bound) {
  int64_t ph = conv_pool[0], pw = conv_pool[1], oh = shape[2] / ph, ow = shape[3] / pw;
  uint64_t o = 0;
  for (int64_t plane = 0; plane < shape[0] * shape[1]; ++plane)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j, ++o) {
        float m = -FLT_MAX;
        double b = 0;
        for (int64_t dh = 0; dh < ph; ++dh)
          for (int64_t dw = 0; dw < pw; ++dw) {
            uint64_t at = (uint64_t)((plane * shape[2] + i * ph + dh) * shape[3] + j * pw + dw);
            m = fmaxf(m, conv[at]);
            b = fmax(b, bound[at]);
          }
        y[o] = m;
        bound[o] = b;
      }
}

/* Sets up t with random inputs and the reference output (pooled by conv_pool);
 * *out_bound gets the per-element tolerance (malloc'd). */
static void conv_setup(hgr_optest_t* t, const conv_case_t* c, const epilogue_t* e, hgr_test_rng_t* rng,
                       double** out_bound) {
  char attrs[512];
  conv_attrs(c, e, attrs, sizeof(attrs));
  hgr_optest_init(t, "conv2d", attrs);
  int64_t yshape[4], pooled[4];
  hgr_ref_conv2d_shape(c->x, c->w, &c->p, yshape);
  memcpy(pooled, yshape, sizeof(pooled));
  if (conv_pool[0]) pooled[2] /= conv_pool[0], pooled[3] /= conv_pool[1];
  float* x = hgr_optest_input(t, "float32", 4, c->x);
  float* w = hgr_optest_input(t, "float32", 4, c->w);
  float* bias = c->bias ? hgr_optest_input(t, "float32", 1, &c->w[0]) : NULL;
  float* out = hgr_optest_output(t, "float32", 4, pooled);
  uint64_t ny = (uint64_t)(yshape[0] * yshape[1] * yshape[2] * yshape[3]);
  float* y = conv_pool[0] ? malloc(ny * sizeof(float) + 1) : out;
  assert_non_null(y);
  for (uint32_t i = 0; i < t->input_count; ++i) hgr_optest_fill(&t->inputs[i], rng, -1, 1);
  hgr_ref_conv2d(x, c->x, w, c->w, bias, y, yshape, &c->p);
  if (e) hgr_ref_conv2d_activate(y, ny, e->act, e->alpha, e->a_min, e->a_max);

  /* S per element: the reference on |x|, |w|, |bias| without relu. */
  uint64_t nx = t->inputs[0].count, nw = t->inputs[1].count;
  float* ax = malloc(nx * sizeof(float));
  float* aw = malloc(nw * sizeof(float));
  float* ab = malloc((size_t)c->w[0] * sizeof(float) + 1);
  float* s = malloc(ny * sizeof(float) + 1);
  double* bound = malloc(ny * sizeof(double) + 1);
  assert_true(ax && aw && ab && s && bound);
  for (uint64_t i = 0; i < nx; ++i) ax[i] = fabsf(x[i]);
  for (uint64_t i = 0; i < nw; ++i) aw[i] = fabsf(w[i]);
  for (int64_t i = 0; bias && i < c->w[0]; ++i) ab[i] = fabsf(bias[i]);
  hgr_ref_conv2d_t plain = c->p;
  plain.relu = false;
  hgr_ref_conv2d(ax, c->x, aw, c->w, bias ? ab : NULL, s, yshape, &plain);
  for (uint64_t i = 0; i < ny; ++i) bound[i] = 1e-5 * s[i] + 1e-7;
  if (conv_pool[0]) {
    pool_reference(y, yshape, out, bound);
    free(y);
  }
  free(ax);
  free(aw);
  free(ab);
  free(s);
  *out_bound = bound;
}

/* Plans node 2 or 3 (the conv2d of t's graph) for the given limits, with the tile
 * choices tuning gives (NULL: the rule's). */
/* The tile candidate conv_run_check's executors take (HGR_TUNING_CANDIDATE) when
 * not UINT32_MAX, and the prefix of the kernel its node's last launch must run
 * then (NULL: any). */
static uint32_t conv_candidate = UINT32_MAX;
static const char* conv_candidate_kernel = NULL;
static uint32_t conv_candidate_launches = 0; /* the launches it must plan */

/* That the node of t, planned with candidate conv_candidate on a roomy device, runs
 * conv_candidate_kernel in its last launch. */
static void expect_candidate_kernel(const hgr_optest_t* t) {
  if (conv_candidate == UINT32_MAX || !conv_candidate_kernel) return;
  hgr__limits_t roomy = {1024, {1024, 1024, 1024}, 64 * 1024, 0};
  hgr__tuning_t tuning = {NULL, NULL, HGR_TUNING_CANDIDATE, conv_candidate};
  hgr__op_ctx_t ctx;
  hgr_optest_plan(t, &roomy, &tuning, &ctx);
  const char* kernel = ctx.launches[ctx.launch_count - 1].kernel;
  if (strncmp(kernel, conv_candidate_kernel, strlen(conv_candidate_kernel)) ||
      ctx.launch_count != conv_candidate_launches)
    fail_msg("conv2d {%s} with candidate %u planned %u launches, the last %s, not %u, the last %s*", t->attrs,
             conv_candidate, ctx.launch_count, kernel, conv_candidate_launches, conv_candidate_kernel);
  hgr__op_ctx_free(&ctx);
}

/* Runs t's graph on device_spec and compares output 0 element by element. */
static void conv_run_check(const char* device_spec, const hgr_optest_t* t, const double* bound) {
  char* json = hgr_optest_graph_json(t);
  hgr_graph_t* graph = NULL;
  hgr_executor_t* executor = NULL;
  ASSERT_OK(hgr_graph_load_json(json, strlen(json), &graph));
  free(json);
  hgr_device_binding_t binding = {0, device_spec};
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  options.bindings = &binding;
  options.binding_count = 1;
  if (conv_candidate != UINT32_MAX) {
    expect_candidate_kernel(t);
    options.tuning = HGR_TUNING_CANDIDATE;
    options.tuning_candidate = conv_candidate;
  }
  ASSERT_OK(hgr_executor_create(hgr_optest_instance, graph, &options, &executor));
  for (uint32_t i = 0; i < t->input_count; ++i)
    ASSERT_OK(hgr_executor_set_input(executor, i, t->inputs[i].data, t->inputs[i].count * sizeof(float)));
  ASSERT_OK(hgr_executor_run(executor));
  ASSERT_OK(hgr_executor_wait(executor));
  const hgr_optest_tensor_t* want = &t->outputs[0];
  float* got = malloc(want->count * sizeof(float) + 1);
  assert_non_null(got);
  ASSERT_OK(hgr_executor_get_output(executor, 0, got, want->count * sizeof(float)));
  const float* expected = want->data;
  uint64_t bad = 0, first = 0;
  for (uint64_t i = 0; i < want->count; ++i)
    if (!(fabs((double)got[i] - expected[i]) <= bound[i]) && bad++ == 0) first = i;
  if (bad) {
    int64_t ow = want->shape[3], oh = want->shape[2], k = want->shape[1];
    print_error("conv2d {%s} on %s, x [%lld, %lld, %lld, %lld], w [%lld, %lld, %lld, %lld]%s: %llu of %llu outputs "
                "off; first at [%llu, %llu, %llu, %llu]: got %.9g, expected %.9g (bound %.3g)\n",
                t->attrs, device_spec, (long long)t->inputs[0].shape[0], (long long)t->inputs[0].shape[1],
                (long long)t->inputs[0].shape[2], (long long)t->inputs[0].shape[3], (long long)t->inputs[1].shape[0],
                (long long)t->inputs[1].shape[1], (long long)t->inputs[1].shape[2], (long long)t->inputs[1].shape[3],
                t->input_count == 3 ? " + bias" : "", (unsigned long long)bad, (unsigned long long)want->count,
                (unsigned long long)(first / ow / oh / k), (unsigned long long)(first / ow / oh % k),
                (unsigned long long)(first / ow % oh), (unsigned long long)(first % ow), got[first], expected[first],
                bound[first]);
  }
  free(got);
  hgr_executor_release(executor);
  hgr_graph_release(graph);
  if (bad) fail();
}

/* epilogues: NULL, or one per case. */
static void check_cases_with(const conv_case_t* cases, const epilogue_t* epilogues, size_t count, uint64_t seed) {
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, seed);
  for (size_t i = 0; i < count; ++i) {
    hgr_optest_t t;
    double* bound;
    conv_setup(&t, &cases[i], epilogues ? &epilogues[i] : NULL, &rng, &bound);
    conv_run_check(hgr_optest_device, &t, bound);
    free(bound);
    hgr_optest_free(&t);
  }
}

static void check_cases(const conv_case_t* cases, size_t count, uint64_t seed) {
  check_cases_with(cases, NULL, count, seed);
}

#define P(sh, sw, pt, pl, pb, pr, dh, dw, g, relu) {{sh, sw}, {pt, pl, pb, pr}, {dh, dw}, g, relu}
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static void padding_forms_match_reference(void** state) {
  (void)state;
  static const conv_case_t cases[] = {
      {{1, 3, 7, 9}, {5, 3, 3, 3}, P(1, 1, 0, 0, 0, 0, 1, 1, 1, false), NULL, false},
      {{1, 3, 7, 9}, {5, 3, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 1, false), "1", false},
      {{2, 4, 6, 11}, {6, 4, 3, 3}, P(1, 1, 2, 1, 2, 1, 1, 1, 1, false), "[2, 1]", false},
      {{1, 5, 9, 10}, {7, 5, 3, 3}, P(1, 1, 0, 2, 1, 3, 1, 1, 1, false), "[0, 2, 1, 3]", false},
      {{1, 2, 5, 5}, {3, 2, 3, 3}, P(1, 1, 3, 0, 0, 2, 1, 1, 1, false), "(3, 0, 0, 2)", false},
  };
  check_cases(cases, COUNT(cases), 11);
}

static void strides_match_reference(void** state) {
  (void)state;
  static const conv_case_t cases[] = {
      {{1, 3, 9, 13}, {10, 3, 3, 3}, P(2, 2, 1, 1, 1, 1, 1, 1, 1, false), "1", false},
      {{1, 4, 8, 8}, {9, 4, 3, 3}, P(2, 1, 1, 1, 1, 1, 1, 1, 1, false), "1", false},
      {{2, 3, 7, 19}, {5, 3, 3, 3}, P(1, 2, 0, 1, 0, 1, 1, 1, 1, false), "[0, 1]", false},
      {{1, 6, 10, 10}, {12, 6, 1, 1}, P(2, 2, 0, 0, 0, 0, 1, 1, 1, false), NULL, false},
      {{1, 3, 11, 11}, {4, 3, 3, 3}, P(3, 3, 1, 2, 0, 1, 1, 1, 1, false), "[1, 2, 0, 1]", false},
  };
  check_cases(cases, COUNT(cases), 12);
}

static void dilation_matches_reference(void** state) {
  (void)state;
  static const conv_case_t cases[] = {
      {{1, 3, 9, 11}, {5, 3, 3, 3}, P(1, 1, 2, 2, 2, 2, 2, 2, 1, false), "2", false},
      {{1, 4, 9, 10}, {6, 4, 3, 3}, P(1, 1, 0, 1, 0, 1, 2, 1, 1, false), "[0, 1]", false},
      {{1, 2, 12, 12}, {3, 2, 3, 3}, P(2, 2, 1, 1, 1, 1, 3, 2, 1, false), "1", false},
  };
  check_cases(cases, COUNT(cases), 13);
}

static void groups_and_depthwise_match_reference(void** state) {
  (void)state;
  static const conv_case_t cases[] = {
      {{1, 4, 7, 9}, {6, 2, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 2, false), "1", true},
      {{2, 6, 8, 5}, {9, 2, 3, 3}, P(2, 1, 1, 1, 1, 1, 1, 1, 3, true), "1", false},
      /* depthwise, multiplier 1 and 2, stride 2, dilation */
      {{1, 5, 9, 9}, {5, 1, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 5, false), "1", true},
      {{1, 3, 10, 7}, {6, 1, 3, 3}, P(2, 2, 1, 1, 1, 1, 1, 1, 3, true), "1", true},
      {{1, 4, 9, 9}, {4, 1, 5, 3}, P(1, 1, 2, 2, 2, 2, 2, 1, 4, false), "2", false},
  };
  check_cases(cases, COUNT(cases), 14);
}

/* The depthwise kernels (groups == C_in; 3x3 and any size): rows wide enough for
 * work-items whose 4 columns lie inside the row (vload4 with stride 1, strided
 * loads with stride 2) beside ones at the edges, widths no multiple of 4, the
 * multiplier 1, 2 and 3, dilation and asymmetric padding, every epilogue with and
 * without a bias. */
static void depthwise_kernels_match_reference(void** state) {
  (void)state;
  static const conv_case_t cases[] = {
      {{1, 4, 6, 18}, {4, 1, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 4, false), "1", false},
      {{1, 4, 6, 19}, {4, 1, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 4, true), "1", true},
      {{2, 3, 7, 21}, {6, 1, 3, 3}, P(2, 2, 1, 1, 1, 1, 1, 1, 3, false), "1", true},
      {{1, 5, 8, 23}, {5, 1, 3, 3}, P(2, 2, 0, 1, 1, 0, 1, 1, 5, false), "[0, 1, 1, 0]", false},
      {{1, 3, 9, 22}, {9, 1, 3, 3}, P(1, 1, 2, 2, 2, 2, 2, 2, 3, false), "2", true},
      {{1, 4, 9, 25}, {8, 1, 5, 5}, P(1, 1, 2, 2, 2, 2, 1, 1, 4, false), "2", false},
      {{1, 4, 9, 26}, {4, 1, 5, 3}, P(2, 3, 1, 0, 2, 1, 1, 2, 4, false), "[1, 0, 2, 1]", true},
      {{1, 2, 5, 17}, {2, 1, 1, 7}, P(1, 2, 0, 3, 0, 3, 1, 1, 2, false), "[0, 3, 0, 3]", true},
      {{1, 6, 3, 3}, {6, 1, 3, 3}, P(1, 1, 0, 0, 0, 0, 1, 1, 6, false), NULL, false},
  };
  static const epilogue_t epilogues[] = {
      {0, 0, 0, 0},
      {0, 0, 0, 0},
      {HGR_REF_ACT_LEAKY_RELU, 0.1f, 0, 0},
      {HGR_REF_ACT_LEAKY_RELU, 0.2f, 0, 0},
      {HGR_REF_ACT_CLIP, 0, 0, 6},
      {HGR_REF_ACT_CLIP, 0, -0.25f, 0.25f},
      {HGR_REF_ACT_LEAKY_RELU, 0.01f, 0, 0},
      {HGR_REF_ACT_CLIP, 0, -0.5f, 0.5f},
      {0, 0, 0, 0},
  };
  check_cases_with(cases, epilogues, COUNT(cases), 23);
}

/* kernels/conv_depthwise.cl's 3x3 kernels (stride 1 or 2 across, any down):
 * rows of 16 and more (blocks of 16) and fewer (blocks of 8), widths no multiple of
 * either (the last block shifted left) and narrower than a block, tiny planes (1x1,
 * 2x3, one output), padding 0, 1 and asymmetric (2 above: the stride-1 rows'
 * rolling accumulators start above the image), multipliers 1 and 2, two images,
 * every epilogue with and without a bias. The first and last channels' edge rows
 * take the lane-by-lane loads at x's ends; Oclgrind checks that no load leaves x. */
static void depthwise3x3_kernels_match_reference(void** state) {
  (void)state;
  static const conv_case_t cases[] = {
      {{1, 5, 28, 28}, {5, 1, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 5, false), "1", true},
      {{1, 3, 14, 14}, {3, 1, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 3, true), "1", true},
      {{2, 4, 9, 33}, {4, 1, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 4, false), "1", false},
      {{1, 3, 7, 7}, {6, 1, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 3, false), "1", true},
      {{1, 4, 8, 19}, {4, 1, 3, 3}, P(1, 1, 0, 0, 0, 0, 1, 1, 4, false), NULL, true},
      {{1, 4, 6, 10}, {4, 1, 3, 3}, P(1, 1, 0, 0, 0, 0, 1, 1, 4, false), "0", false},
      {{1, 3, 1, 1}, {3, 1, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 3, false), "1", true},
      {{1, 2, 2, 3}, {4, 1, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 2, false), "1", false},
      {{1, 3, 3, 3}, {3, 1, 3, 3}, P(1, 1, 0, 0, 0, 0, 1, 1, 3, false), NULL, true},
      {{1, 5, 28, 28}, {5, 1, 3, 3}, P(2, 2, 1, 1, 1, 1, 1, 1, 5, false), "1", true},
      {{1, 4, 14, 14}, {4, 1, 3, 3}, P(2, 2, 1, 1, 1, 1, 1, 1, 4, true), "1", false},
      {{2, 3, 11, 37}, {6, 1, 3, 3}, P(2, 2, 1, 1, 1, 1, 1, 1, 3, false), "1", true},
      {{1, 3, 9, 21}, {3, 1, 3, 3}, P(2, 2, 0, 0, 0, 0, 1, 1, 3, false), NULL, false},
      {{1, 2, 1, 1}, {2, 1, 3, 3}, P(2, 2, 1, 1, 1, 1, 1, 1, 2, false), "1", true},
      {{1, 2, 2, 3}, {2, 1, 3, 3}, P(2, 2, 1, 1, 1, 1, 1, 1, 2, false), "1", false},
      {{1, 4, 10, 17}, {4, 1, 3, 3}, P(1, 2, 0, 1, 1, 0, 1, 1, 4, false), "[0, 1, 1, 0]", true},
      {{1, 4, 10, 17}, {8, 1, 3, 3}, P(2, 1, 2, 0, 1, 2, 1, 1, 4, false), "[2, 0, 1, 2]", true},
      {{1, 3, 5, 40}, {3, 1, 3, 3}, P(3, 1, 1, 1, 1, 1, 1, 1, 3, false), "1", false},
      {{1, 3, 9, 18}, {6, 1, 3, 3}, P(1, 1, 2, 1, 0, 2, 1, 1, 3, false), "[2, 1, 0, 2]", true},
  };
  static const epilogue_t epilogues[] = {
      {0, 0, 0, 0},
      {0, 0, 0, 0},
      {HGR_REF_ACT_LEAKY_RELU, 0.1f, 0, 0},
      {HGR_REF_ACT_CLIP, 0, 0, 6},
      {0, 0, 0, 0},
      {HGR_REF_ACT_CLIP, 0, -0.25f, 0.25f},
      {0, 0, 0, 0},
      {HGR_REF_ACT_LEAKY_RELU, 0.2f, 0, 0},
      {0, 0, 0, 0},
      {0, 0, 0, 0},
      {0, 0, 0, 0},
      {HGR_REF_ACT_CLIP, 0, -0.5f, 0.5f},
      {HGR_REF_ACT_LEAKY_RELU, 0.01f, 0, 0},
      {0, 0, 0, 0},
      {HGR_REF_ACT_CLIP, 0, 0, 6},
      {0, 0, 0, 0},
      {HGR_REF_ACT_LEAKY_RELU, 0.1f, 0, 0},
      {0, 0, 0, 0},
      {HGR_REF_ACT_CLIP, 0, -1, 1},
  };
  check_cases_with(cases, epilogues, COUNT(cases), 24);
}

static void kernel_shapes_match_reference(void** state) {
  (void)state;
  static const conv_case_t cases[] = {
      {{1, 7, 5, 13}, {9, 7, 1, 1}, P(1, 1, 0, 0, 0, 0, 1, 1, 1, false), NULL, true},
      {{1, 3, 8, 9}, {4, 3, 5, 3}, P(1, 1, 2, 1, 2, 1, 1, 1, 1, false), "[2, 1]", false},
      {{1, 2, 6, 7}, {3, 2, 3, 5}, P(1, 1, 0, 0, 0, 0, 1, 1, 1, false), "0", true},
      /* the kernel is the whole (padded) input: one output */
      {{1, 3, 4, 5}, {2, 3, 4, 5}, P(1, 1, 0, 0, 0, 0, 1, 1, 1, true), NULL, true},
  };
  check_cases(cases, COUNT(cases), 15);
}

static void bias_and_relu_match_reference(void** state) {
  (void)state;
  static const conv_case_t cases[] = {
      {{1, 3, 6, 7}, {5, 3, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 1, false), "1", true},
      {{1, 3, 6, 7}, {5, 3, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 1, true), "1", true},
      {{1, 3, 6, 7}, {5, 3, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 1, true), "1", false},
      {{2, 2, 5, 3}, {4, 1, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 2, true), "1", true},
  };
  check_cases(cases, COUNT(cases), 16);
}


/* The epilogues the ONNX loader fuses (Conv + Add + LeakyRelu / Clip(0, 6)) in the
 * tiled, strided-tiled, grouped and depthwise (direct) kernels, with asymmetric
 * padding and dilation. */
static void leaky_relu_and_clip_epilogues_match_reference(void** state) {
  (void)state;
  static const conv_case_t cases[] = {
      {{1, 3, 6, 7}, {5, 3, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 1, false), "1", true},
      {{1, 3, 9, 11}, {5, 3, 3, 3}, P(2, 2, 0, 1, 2, 0, 1, 2, 1, false), "[0, 1, 2, 0]", false},
      {{1, 4, 7, 9}, {6, 2, 3, 3}, P(1, 1, 1, 0, 0, 2, 2, 1, 2, false), "[1, 0, 0, 2]", true},
      {{1, 3, 6, 7}, {5, 3, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 1, false), "1", true},
      {{1, 5, 9, 9}, {5, 1, 3, 3}, P(2, 1, 2, 1, 0, 1, 1, 2, 5, false), "[2, 1, 0, 1]", true},
      {{2, 6, 8, 5}, {9, 2, 3, 3}, P(1, 2, 0, 1, 1, 0, 2, 1, 3, false), "[0, 1, 1, 0]", false},
      {{1, 21, 3, 9}, {13, 21, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 1, false), "1", true},
  };
  static const epilogue_t epilogues[] = {
      {HGR_REF_ACT_LEAKY_RELU, 0.1f, 0, 0},  {HGR_REF_ACT_LEAKY_RELU, 0.25f, 0, 0},
      {HGR_REF_ACT_LEAKY_RELU, 0.01f, 0, 0}, {HGR_REF_ACT_CLIP, 0, 0, 0.5f},
      {HGR_REF_ACT_CLIP, 0, -0.25f, 0.25f},  {HGR_REF_ACT_CLIP, 0, 0, 6},
      {HGR_REF_ACT_CLIP, 0, -0.5f, 0.5f},
  };
  check_cases_with(cases, epilogues, COUNT(cases), 21);
}

/* Asymmetric padding with dilation in every kernel: tiled (groups 1, strides 1 and
 * 2), grouped and depthwise (direct), as ONNX's Conv tests use them. */
static void asymmetric_padding_with_dilation_matches_reference(void** state) {
  (void)state;
  static const conv_case_t cases[] = {
      {{1, 3, 10, 12}, {4, 3, 3, 3}, P(1, 1, 0, 2, 1, 0, 2, 3, 1, false), "[0, 2, 1, 0]", true},
      {{1, 3, 11, 12}, {4, 3, 3, 2}, P(2, 3, 2, 0, 0, 1, 2, 2, 1, false), "[2, 0, 0, 1]", false},
      {{1, 6, 10, 9}, {4, 3, 2, 3}, P(1, 2, 1, 2, 0, 1, 3, 2, 2, true), "[1, 2, 0, 1]", true},
      {{1, 4, 9, 10}, {8, 1, 3, 3}, P(2, 1, 0, 1, 2, 1, 2, 2, 4, false), "[0, 1, 2, 1]", true},
  };
  check_cases(cases, COUNT(cases), 22);
}

static void sizes_of_one_and_odd_match_reference(void** state) {
  (void)state;
  static const conv_case_t cases[] = {
      {{1, 1, 1, 1}, {1, 1, 1, 1}, P(1, 1, 0, 0, 0, 0, 1, 1, 1, false), NULL, false},
      {{1, 1, 1, 1}, {3, 1, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 1, false), "1", true},
      {{3, 1, 5, 1}, {1, 1, 3, 1}, P(1, 1, 1, 0, 1, 0, 1, 1, 1, false), "[1, 0]", false},
      {{1, 1, 1, 17}, {2, 1, 1, 3}, P(1, 1, 0, 1, 0, 1, 1, 1, 1, false), "[0, 1]", false},
      /* channels and columns past every tile: 9 columns, 13 and 21 channels */
      {{1, 21, 3, 9}, {13, 21, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 1, true), "1", true},
  };
  check_cases(cases, COUNT(cases), 17);
}

/* Larger layers (not on Oclgrind, which simulates every work-item): the benchmark's
 * 64 -> 64 channel 3x3 layer at 56x56, a strided one, and chunked input channels. */
static void large_layers_match_reference(void** state) {
  (void)state;
  if (hgr_optest_is_simulator(hgr_optest_device)) return; /* not on Oclgrind, by design (above) */
  static const conv_case_t cases[] = {
      {{1, 64, 56, 56}, {64, 64, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 1, true), "1", true},
      {{1, 32, 29, 29}, {48, 32, 3, 3}, P(2, 2, 1, 1, 1, 1, 1, 1, 1, false), "1", false},
      {{2, 37, 17, 23}, {70, 37, 1, 1}, P(1, 1, 0, 0, 0, 0, 1, 1, 1, false), NULL, true},
      {{1, 32, 28, 28}, {32, 1, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 32, true), "1", true},
  };
  check_cases(cases, COUNT(cases), 18);
}

/* ---- conv2d_transpose ------------------------------------------------------------------ */

typedef struct transpose_case_t {
  int64_t x[4], w[4]; /* w: [C_in, C_out / groups, kh, kw] */
  hgr_ref_conv2d_t p;
  const char* padding_attr;
  int64_t output_padding[2];
  bool bias;
} transpose_case_t;

/* Tolerance as conv2d's (the same sums, per element): 1e-5 * S + 1e-7, S the
 * element's sum of |x * w| plus |bias| from the reference on magnitudes. */
static void check_transpose(const transpose_case_t* c, hgr_test_rng_t* rng) {
  char attrs[512];
  int used = snprintf(attrs, sizeof(attrs),
                      "\"strides\": \"[%lld, %lld]\", \"dilation\": \"[%lld, %lld]\", \"groups\": \"%lld\", "
                      "\"output_padding\": \"[%lld, %lld]\", \"kernel_layout\": \"IOHW\"",
                      (long long)c->p.strides[0], (long long)c->p.strides[1], (long long)c->p.dilation[0],
                      (long long)c->p.dilation[1], (long long)c->p.groups, (long long)c->output_padding[0],
                      (long long)c->output_padding[1]);
  if (c->padding_attr)
    used += snprintf(attrs + used, sizeof(attrs) - (size_t)used, ", \"padding\": \"%s\"", c->padding_attr);
  if (c->p.relu) snprintf(attrs + used, sizeof(attrs) - (size_t)used, ", \"activation\": \"relu\"");
  int64_t yshape[4];
  hgr_ref_conv2d_transpose_shape(c->x, c->w, &c->p, c->output_padding, yshape);
  hgr_optest_t t;
  hgr_optest_init(&t, "conv2d_transpose", attrs);
  float* x = hgr_optest_input(&t, "float32", 4, c->x);
  float* w = hgr_optest_input(&t, "float32", 4, c->w);
  float* bias = c->bias ? hgr_optest_input(&t, "float32", 1, &yshape[1]) : NULL;
  float* y = hgr_optest_output(&t, "float32", 4, yshape);
  for (uint32_t i = 0; i < t.input_count; ++i) hgr_optest_fill(&t.inputs[i], rng, -1, 1);
  hgr_ref_conv2d_transpose(x, c->x, w, c->w, bias, y, yshape, &c->p);
  uint64_t nx = t.inputs[0].count, nw = t.inputs[1].count, ny = t.outputs[0].count;
  float* ax = malloc(nx * sizeof(float) + 1);
  float* aw = malloc(nw * sizeof(float) + 1);
  float* ab = malloc((size_t)yshape[1] * sizeof(float) + 1);
  float* s = malloc(ny * sizeof(float) + 1);
  double* bound = malloc(ny * sizeof(double) + 1);
  assert_true(ax && aw && ab && s && bound);
  for (uint64_t i = 0; i < nx; ++i) ax[i] = fabsf(x[i]);
  for (uint64_t i = 0; i < nw; ++i) aw[i] = fabsf(w[i]);
  for (int64_t i = 0; bias && i < yshape[1]; ++i) ab[i] = fabsf(bias[i]);
  hgr_ref_conv2d_t plain = c->p;
  plain.relu = false;
  hgr_ref_conv2d_transpose(ax, c->x, aw, c->w, bias ? ab : NULL, s, yshape, &plain);
  for (uint64_t i = 0; i < ny; ++i) bound[i] = 1e-5 * s[i] + 1e-7;
  conv_run_check(hgr_optest_device, &t, bound);
  free(ax);
  free(aw);
  free(ab);
  free(s);
  free(bound);
  hgr_optest_free(&t);
}

/* ONNX ConvTranspose's cases: strides, asymmetric padding, dilation, groups,
 * output_padding, bias and relu, kernels larger than the input, kernels the size of
 * the stride (one group: the GEMM and the gather; groups: the direct kernel). */
static void conv2d_transpose_matches_reference(void** state) {
  (void)state;
  static const transpose_case_t cases[] = {
      {{1, 1, 3, 3}, {1, 2, 3, 3}, P(1, 1, 0, 0, 0, 0, 1, 1, 1, false), NULL, {0, 0}, false},
      {{1, 3, 4, 5}, {3, 4, 3, 3}, P(2, 2, 1, 1, 1, 1, 1, 1, 1, false), "1", {1, 1}, true},
      {{2, 2, 3, 3}, {2, 3, 3, 3}, P(3, 2, 0, 0, 0, 0, 1, 1, 1, false), NULL, {1, 1}, false},
      {{1, 4, 5, 4}, {4, 2, 3, 2}, P(2, 1, 1, 0, 2, 1, 1, 1, 2, true), "[1, 0, 2, 1]", {0, 0}, true},
      {{1, 2, 4, 4}, {2, 1, 3, 3}, P(1, 1, 0, 1, 1, 0, 2, 2, 1, false), "[0, 1, 1, 0]", {0, 1}, false},
      {{1, 6, 3, 4}, {6, 1, 4, 4}, P(2, 2, 1, 1, 1, 1, 1, 1, 6, false), "1", {0, 0}, true},
      {{1, 3, 2, 2}, {3, 5, 5, 5}, P(1, 1, 0, 0, 0, 0, 1, 1, 1, true), "0", {0, 0}, true},
      {{1, 5, 7, 6}, {5, 4, 3, 3}, P(2, 3, 2, 1, 0, 1, 2, 1, 1, false), "[2, 1, 0, 1]", {1, 2}, true},
      /* the kernel the stride (a detector's 2 x 2 upsampling: one tap per output), two
       * images, and 3 x 2 with output_padding past the last taps (bias alone there) */
      {{2, 6, 5, 7}, {6, 3, 2, 2}, P(2, 2, 0, 0, 0, 0, 1, 1, 1, true), NULL, {0, 0}, true},
      {{1, 3, 4, 3}, {3, 2, 3, 2}, P(3, 2, 0, 0, 0, 0, 1, 1, 1, false), NULL, {2, 1}, true},
  };
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 23);
  for (size_t i = 0; i < COUNT(cases); ++i) check_transpose(&cases[i], &rng);
  if (hgr_optest_is_simulator(hgr_optest_device)) return;
  const transpose_case_t large = {
      {1, 32, 14, 14}, {32, 16, 4, 4}, P(2, 2, 1, 1, 1, 1, 1, 1, 1, false), "1", {0, 0}, true};
  check_transpose(&large, &rng);
  const transpose_case_t upsampling = {
      {1, 96, 20, 20}, {96, 24, 2, 2}, P(2, 2, 0, 0, 0, 0, 1, 1, 1, true), NULL, {0, 0}, true};
  check_transpose(&upsampling, &rng);
}

/* One group: the GEMM into the node's scratch (every tap of every input pixel), then
 * the gather; groups: the direct kernel. */
static void transposed_convs_plan_the_gemm_and_the_gather(void** state) {
  (void)state;
  for (int groups = 1; groups <= 2; ++groups) {
    char attrs[128];
    snprintf(attrs, sizeof(attrs), "\"strides\": \"[2, 2]\", \"groups\": \"%d\", \"kernel_layout\": \"IOHW\"",
             groups);
    hgr_optest_t t;
    hgr_optest_init(&t, "conv2d_transpose", attrs);
    hgr_optest_input(&t, "float32", 4, (int64_t[]){2, 8, 10, 12});
    hgr_optest_input(&t, "float32", 4, (int64_t[]){8, 16 / groups, 2, 2});
    hgr_optest_output(&t, "float32", 4, (int64_t[]){2, 16, 20, 24});
    hgr__op_ctx_t ctx;
    hgr__limits_t roomy = {1024, {1024, 1024, 1024}, 64 * 1024, 0};
    hgr_optest_plan(&t, &roomy, NULL, &ctx);
    if (groups == 1) {
      assert_int_equal(ctx.launch_count, 2);
      assert_true(!strncmp(ctx.launches[0].kernel, "hgr_gemm_", 9));
      assert_int_equal(ctx.launches[0].launch.global[2], 2); /* one GEMM per image */
      assert_string_equal(ctx.launches[1].kernel, "hgr_conv2d_transpose_gather");
      assert_int_equal(ctx.scratch_bytes, 2 * 16 * 4 * 10 * 12 * sizeof(float));
    } else {
      assert_int_equal(ctx.launch_count, 1);
      assert_string_equal(ctx.launches[0].kernel, "hgr_conv2d_transpose_direct");
    }
    hgr__op_ctx_free(&ctx);
    hgr_optest_free(&t);
  }
}

static void expect_transpose_error(const char* attrs, const int64_t* xshape, const int64_t* wshape,
                                   const int64_t* yshape, const char* message) {
  hgr_optest_t t;
  hgr_optest_init(&t, "conv2d_transpose", attrs);
  hgr_optest_input(&t, "float32", 4, xshape);
  hgr_optest_input(&t, "float32", 4, wshape);
  hgr_optest_output(&t, "float32", 4, yshape);
  ASSERT_STATUS(hgr_optest_create(hgr_optest_instance, hgr_optest_device, &t), HGR_STATUS_INVALID_ARGUMENT,
                "node 2 'conv2d_transpose_node' (conv2d_transpose): ", message);
  hgr_optest_free(&t);
}

static void conv2d_transpose_rejects_bad_attrs_and_shapes(void** state) {
  (void)state;
  const int64_t x[4] = {1, 4, 3, 3}, w[4] = {4, 2, 3, 3}, y[4] = {1, 2, 5, 5};
  expect_transpose_error("\"kernel_layout\": \"OIHW\"", x, w, y, "attr 'kernel_layout' = \"OIHW\"");
  expect_transpose_error("\"groups\": \"3\"", x, w, y, "with groups = 3");
  expect_transpose_error("", x, (const int64_t[]){3, 2, 3, 3}, y, "with groups = 1");
  expect_transpose_error("\"output_padding\": \"[1, 0]\"", x, w, y,
                         "attr 'output_padding' = \"[1, 0]\" has 1; it must be below the stride (1) or the "
                         "dilation (1)");
  expect_transpose_error("\"channels\": \"4\"", x, w, y,
                         "attr 'channels' = \"4\" does not match the output channels (weight's dim 1 x groups), 2");
  expect_transpose_error("\"padding\": \"3\"", x, w, y, "leaves an output of -1 x -1; it must be at least 1 x 1");
  expect_transpose_error("\"strides\": \"2\"", x, w, y,
                         "output 0 (entry 2) should be shaped [1, 2, 7, 7], the graph says [1, 2, 5, 5]");
  expect_transpose_error("\"output_padding\": \"[1, 2, 3]\"", x, w, y, "attr 'output_padding'");
}

/* The device's limits decide the tile: the benchmark's layer, dilated (the
 * register-blocked kernel takes it undilated), takes the largest variant on a roomy
 * device, a work-group of one on a device that allows no more, and the direct
 * kernel where not even one tile fits local memory. */
static void tiles_follow_device_limits(void** state) {
  (void)state;
  conv_case_t c = {{1, 64, 56, 56}, {64, 64, 3, 3}, P(1, 1, 2, 2, 2, 2, 2, 2, 1, false), "2", false};
  hgr_optest_t t;
  hgr_optest_init(&t, "conv2d", "\"padding\": \"2\", \"dilation\": \"[2, 2]\"");
  hgr_optest_input(&t, "float32", 4, c.x);
  hgr_optest_input(&t, "float32", 4, c.w);
  hgr_optest_output(&t, "float32", 4, (int64_t[]){1, 64, 56, 56});

  hgr__op_ctx_t ctx;
  hgr__limits_t roomy = {1024, {1024, 1024, 1024}, 64 * 1024, 0};
  hgr_optest_plan(&t, &roomy, NULL, &ctx);
  assert_int_equal(ctx.launch_count, 1);
  assert_string_equal(ctx.launches[0].kernel, "hgr_conv2d_tiled_o8p8");
  const hgr__launch_t* launch = &ctx.launches[0].launch;
  assert_true(launch->use_local && launch->work_dim == 3);
  assert_true(launch->local[0] * launch->local[1] * launch->local[2] <= 256);
  assert_true(launch->local[2] * 8 <= 64); /* at most 64 output channels per work-group */
  hgr__op_ctx_free(&ctx);

  hgr__limits_t single = {1, {1, 1, 1}, 64 * 1024, 0};
  hgr_optest_plan(&t, &single, NULL, &ctx);
  assert_string_equal(ctx.launches[0].kernel, "hgr_conv2d_tiled_o8p8");
  launch = &ctx.launches[0].launch;
  assert_true(launch->local[0] == 1 && launch->local[1] == 1 && launch->local[2] == 1);
  hgr__op_ctx_free(&ctx);

  hgr__limits_t no_local = {256, {256, 256, 256}, 0, 0};
  hgr_optest_plan(&t, &no_local, NULL, &ctx);
  assert_string_equal(ctx.launches[0].kernel, "hgr_conv2d_direct");
  hgr__op_ctx_free(&ctx);
  hgr_optest_free(&t);
}

/* Groups of at least 8 output channels tile (one block of channels per group, so
 * the NDRange's z counts the groups); depthwise 3x3 convolutions of stride 1 or 2
 * run kernels/conv_depthwise.cl's, other depthwise ones the general depthwise
 * kernel (3x3 or any size). */
static void groups_tile_when_wide_enough(void** state) {
  (void)state;
  hgr__limits_t roomy = {1024, {1024, 1024, 1024}, 64 * 1024, 0};
  hgr__op_ctx_t ctx;
  hgr_optest_t t;
  hgr_optest_init(&t, "conv2d", "\"padding\": \"2\", \"groups\": \"2\"");
  hgr_optest_input(&t, "float32", 4, (int64_t[]){1, 96, 27, 27});
  hgr_optest_input(&t, "float32", 4, (int64_t[]){256, 48, 5, 5});
  hgr_optest_output(&t, "float32", 4, (int64_t[]){1, 256, 27, 27});
  hgr_optest_plan(&t, &roomy, NULL, &ctx);
  assert_string_equal(ctx.launches[0].kernel, "hgr_conv2d_tiled_o8p8");
  const hgr__launch_t* launch = &ctx.launches[0].launch;
  /* 128 channels per group in blocks of local[2] * 8, for 2 groups */
  assert_int_equal(launch->global[2], launch->local[2] * (128 / (launch->local[2] * 8)) * 2);
  hgr__op_ctx_free(&ctx);
  hgr_optest_free(&t);
  hgr_optest_init(&t, "conv2d", "\"padding\": \"1\", \"groups\": \"32\"");
  hgr_optest_input(&t, "float32", 4, (int64_t[]){1, 32, 28, 28});
  hgr_optest_input(&t, "float32", 4, (int64_t[]){32, 1, 3, 3});
  hgr_optest_output(&t, "float32", 4, (int64_t[]){1, 32, 28, 28});
  hgr_optest_plan(&t, &roomy, NULL, &ctx);
  assert_string_equal(ctx.launches[0].kernel, "hgr_conv2d_dw3x3_s1_v16");
  assert_string_equal(ctx.launches[0].source, "conv_depthwise");
  /* a work-item per run of rows: 32 channels in 7 runs of 4 rows (about 256 items,
   * 16 work-groups of 16), in work-groups of 16 whatever the shape */
  assert_int_equal(ctx.launches[0].launch.global[0], 224);
  assert_int_equal(ctx.launches[0].meta[ctx.launches[0].meta_count - 1], 4);
  assert_int_equal(ctx.launches[0].launch.local[0], 16);
  hgr__op_ctx_free(&ctx);
  hgr_optest_free(&t);
  /* stride 2, and rows narrower than 16: blocks of 8 */
  hgr_optest_init(&t, "conv2d", "\"padding\": \"1\", \"strides\": \"[1, 2]\", \"groups\": \"32\"");
  hgr_optest_input(&t, "float32", 4, (int64_t[]){1, 32, 28, 28});
  hgr_optest_input(&t, "float32", 4, (int64_t[]){32, 1, 3, 3});
  hgr_optest_output(&t, "float32", 4, (int64_t[]){1, 32, 28, 14});
  hgr_optest_plan(&t, &roomy, NULL, &ctx);
  assert_string_equal(ctx.launches[0].kernel, "hgr_conv2d_dw3x3_s2_v8");
  hgr__op_ctx_free(&ctx);
  hgr_optest_free(&t);
  /* a dilated 3x3 runs the general kernel's 3x3 variant */
  hgr_optest_init(&t, "conv2d", "\"padding\": \"2\", \"dilation\": \"2\", \"groups\": \"32\"");
  hgr_optest_input(&t, "float32", 4, (int64_t[]){1, 32, 28, 28});
  hgr_optest_input(&t, "float32", 4, (int64_t[]){32, 1, 3, 3});
  hgr_optest_output(&t, "float32", 4, (int64_t[]){1, 32, 28, 28});
  hgr_optest_plan(&t, &roomy, NULL, &ctx);
  assert_string_equal(ctx.launches[0].kernel, "hgr_conv2d_depthwise3x3");
  /* a work-item per output row: 32 channels x 28 rows */
  assert_true(ctx.launches[0].launch.global[0] >= 32 * 28);
  hgr__op_ctx_free(&ctx);
  hgr_optest_free(&t);
  hgr_optest_init(&t, "conv2d", "\"padding\": \"2\", \"groups\": \"16\"");
  hgr_optest_input(&t, "float32", 4, (int64_t[]){1, 16, 28, 28});
  hgr_optest_input(&t, "float32", 4, (int64_t[]){32, 1, 5, 5});
  hgr_optest_output(&t, "float32", 4, (int64_t[]){1, 32, 28, 28});
  hgr_optest_plan(&t, &roomy, NULL, &ctx);
  assert_string_equal(ctx.launches[0].kernel, "hgr_conv2d_depthwise");
  hgr__op_ctx_free(&ctx);
  hgr_optest_free(&t);
}

/* Runs cases on the test's device as if it had other limits (the instance's record
 * of the device, which the executor plans from, is changed for the duration). */
static void check_with_limits(const conv_case_t* cases, size_t count, size_t max_work_group, size_t max_item,
                              uint64_t local_mem_bytes) {
  hgr_device_info_t* info = hgr_optest_device_info();
  hgr_device_info_t saved = *info;
  info->max_work_group_size = max_work_group;
  for (int d = 0; d < 3; ++d) info->max_work_item_sizes[d] = max_item;
  info->local_mem_bytes = local_mem_bytes;
  check_cases(cases, count, 19 + max_work_group);
  *info = saved;
}

static void small_device_limits_still_work(void** state) {
  (void)state;
  static const conv_case_t cases[] = {
      {{1, 5, 6, 11}, {9, 5, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 1, true), "1", true},
      {{1, 3, 7, 7}, {4, 3, 3, 3}, P(2, 2, 1, 0, 1, 0, 1, 1, 1, false), "[1, 0]", false},
      {{1, 7, 5, 6}, {9, 7, 1, 1}, P(1, 1, 0, 0, 0, 0, 1, 1, 1, true), NULL, true}, /* the GEMM */
      {{1, 4, 9, 20}, {4, 1, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 4, false), "1", true}, /* depthwise 3x3 */
  };
  /* a work-group of one work-item */
  check_with_limits(cases, COUNT(cases), 1, 1, 32 * 1024);
  /* odd work-group limits and local memory for a few channels at a time */
  check_with_limits(cases, COUNT(cases), 7, 3, 1536);
  /* no local memory: the direct kernel */
  check_with_limits(cases, COUNT(cases), 64, 64, 0);
}

/* Groups of at least 8 output channels run the tiled kernels, a block of channels
 * per group: contiguous and strided variants, partial blocks (9 and 13 channels
 * per group), padding, dilation and the epilogues. */
static void tiled_groups_match_reference(void** state) {
  (void)state;
  static const conv_case_t cases[] = {
      {{1, 12, 9, 11}, {24, 4, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 3, true), "1", true},
      {{2, 16, 7, 6}, {18, 8, 3, 3}, P(2, 2, 1, 0, 1, 0, 1, 1, 2, false), "[1, 0]", false},
      {{1, 6, 10, 9}, {26, 3, 2, 3}, P(1, 2, 1, 2, 0, 1, 2, 1, 2, false), "[1, 2, 0, 1]", true},
      {{1, 8, 5, 5}, {32, 2, 3, 3}, P(1, 1, 0, 0, 0, 0, 1, 1, 4, false), "0", true},
  };
  static const epilogue_t epilogues[] = {
      {0, 0, 0, 0}, {HGR_REF_ACT_LEAKY_RELU, 0.1f, 0, 0}, {HGR_REF_ACT_CLIP, 0, -0.5f, 0.5f}, {0, 0, 0, 0}};
  check_cases_with(cases, epilogues, COUNT(cases), 25);
  if (hgr_optest_is_simulator(hgr_optest_device)) return;
  /* bvlc_alexnet's second layer */
  static const conv_case_t large[] = {
      {{1, 96, 27, 27}, {256, 48, 5, 5}, P(1, 1, 2, 2, 2, 2, 1, 1, 2, true), "2", true},
  };
  check_cases(large, COUNT(large), 26);
}

/* 1x1 convolutions with no padding and one group run as the GEMM of
 * kernels/linalg.cl (bias per output channel = per row; strides read the input as
 * an image): with and without the bias, every epilogue, batches of 1 and 2, strides
 * 1, 2 and 3, and channel and pixel counts no multiple of any GEMM tile. */
static void pointwise_convs_match_reference(void** state) {
  (void)state;
  static const conv_case_t cases[] = {
      {{1, 21, 5, 7}, {13, 21, 1, 1}, P(1, 1, 0, 0, 0, 0, 1, 1, 1, false), NULL, false},
      {{1, 21, 5, 7}, {13, 21, 1, 1}, P(1, 1, 0, 0, 0, 0, 1, 1, 1, false), NULL, true},
      {{2, 8, 3, 9}, {5, 8, 1, 1}, P(1, 1, 0, 0, 0, 0, 1, 1, 1, true), "0", false},
      {{2, 8, 3, 9}, {5, 8, 1, 1}, P(1, 1, 0, 0, 0, 0, 1, 1, 1, true), "0", true},
      {{1, 3, 4, 4}, {17, 3, 1, 1}, P(1, 1, 0, 0, 0, 0, 1, 1, 1, false), NULL, true},
      {{2, 33, 1, 1}, {9, 33, 1, 1}, P(1, 1, 0, 0, 0, 0, 1, 1, 1, false), NULL, false},
      {{1, 16, 6, 6}, {32, 16, 1, 1}, P(1, 1, 0, 0, 0, 0, 1, 1, 1, false), NULL, true},
      {{2, 5, 7, 3}, {6, 5, 1, 1}, P(1, 1, 0, 0, 0, 0, 1, 1, 1, false), NULL, false},
      /* one output channel of one pixel, no bias: the GEMM's matrix-vector kernel */
      {{1, 19, 1, 1}, {1, 19, 1, 1}, P(1, 1, 0, 0, 0, 0, 1, 1, 1, false), NULL, false},
      /* dilated (no matter for 1x1) and strided: the GEMM reads B as an image */
      {{1, 6, 7, 7}, {4, 6, 1, 1}, P(1, 1, 0, 0, 0, 0, 2, 2, 1, false), NULL, true},
      {{1, 6, 7, 7}, {4, 6, 1, 1}, P(2, 2, 0, 0, 0, 0, 1, 1, 1, false), NULL, true},
      {{2, 5, 9, 8}, {7, 5, 1, 1}, P(2, 3, 0, 0, 0, 0, 1, 1, 1, true), NULL, true},
      {{2, 5, 10, 1}, {3, 5, 1, 1}, P(3, 1, 0, 0, 0, 0, 1, 1, 1, false), NULL, false},
      /* grouped, one image: a GEMM per group (bias per group's rows); two images: tiled */
      {{1, 12, 5, 7}, {18, 4, 1, 1}, P(1, 1, 0, 0, 0, 0, 1, 1, 3, false), NULL, true},
      {{1, 8, 9, 6}, {4, 2, 1, 1}, P(2, 2, 0, 0, 0, 0, 1, 1, 4, true), NULL, true},
      {{2, 12, 5, 7}, {18, 4, 1, 1}, P(1, 1, 0, 0, 0, 0, 1, 1, 3, false), NULL, true},
      /* padded: not a GEMM (the tiled kernel) */
      {{1, 6, 5, 5}, {4, 6, 1, 1}, P(1, 1, 1, 1, 1, 1, 1, 1, 1, false), "1", false},
  };
  static const epilogue_t epilogues[] = {
      {0, 0, 0, 0},
      {0, 0, 0, 0},
      {0, 0, 0, 0}, /* relu */
      {0, 0, 0, 0}, /* relu */
      {HGR_REF_ACT_LEAKY_RELU, 0.1f, 0, 0},
      {HGR_REF_ACT_LEAKY_RELU, 0.01f, 0, 0},
      {HGR_REF_ACT_CLIP, 0, 0, 0.5f},
      {HGR_REF_ACT_CLIP, 0, -0.25f, 0.25f},
      {HGR_REF_ACT_CLIP, 0, -0.5f, 0.5f},
      {HGR_REF_ACT_CLIP, 0, 0, 6},
      {HGR_REF_ACT_LEAKY_RELU, 0.25f, 0, 0},
      {0, 0, 0, 0}, /* relu */
      {HGR_REF_ACT_CLIP, 0, -0.5f, 0.5f},
      {HGR_REF_ACT_LEAKY_RELU, 0.2f, 0, 0},
      {0, 0, 0, 0}, /* relu */
      {0, 0, 0, 0},
      {0, 0, 0, 0},
  };
  check_cases_with(cases, epilogues, COUNT(cases), 23);
  if (hgr_optest_is_simulator(hgr_optest_device)) return;
  /* resnet-like sizes: every tile of the 128 x 128 GEMM, partial ones at the edges */
  static const conv_case_t large[] = {
      {{1, 256, 14, 14}, {136, 256, 1, 1}, P(1, 1, 0, 0, 0, 0, 1, 1, 1, true), NULL, true},
      {{2, 70, 17, 23}, {130, 70, 1, 1}, P(1, 1, 0, 0, 0, 0, 1, 1, 1, false), NULL, true},
      {{2, 64, 29, 27}, {136, 64, 1, 1}, P(2, 2, 0, 0, 0, 0, 1, 1, 1, true), NULL, true},
  };
  static const epilogue_t large_epilogues[] = {{0, 0, 0, 0}, {HGR_REF_ACT_CLIP, 0, -1, 1}, {0, 0, 0, 0}};
  check_cases_with(large, large_epilogues, COUNT(large), 24);
}

/* One case per kernel family for the activations of one formula each: tiled,
 * register-blocked rows (stride 1 and 2), depthwise, pointwise and one-channel-row
 * GEMMs, and the implicit GEMM of narrow groups; with and without a bias. */
static const conv_case_t activation_cases[] = {
    {{1, 3, 6, 7}, {5, 3, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 1, false), "1", true},
    {{1, 4, 9, 40}, {7, 4, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 1, false), "1", false},
    {{1, 4, 12, 40}, {7, 4, 3, 3}, P(2, 2, 1, 1, 1, 1, 1, 1, 1, false), "1", true},
    {{1, 4, 6, 18}, {4, 1, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 4, false), "1", true},
    {{2, 8, 3, 9}, {5, 8, 1, 1}, P(1, 1, 0, 0, 0, 0, 1, 1, 1, false), NULL, true},
    {{1, 1, 1, 40}, {5, 1, 1, 7}, P(1, 3, 0, 0, 0, 0, 1, 1, 1, false), NULL, false},
    {{1, 8, 9, 11}, {8, 2, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 4, false), "1", true},
};

/* activation_cases with activation act (HGR_REF_ACT_*) after each. */
static void check_activation(int act, uint64_t seed) {
  epilogue_t epilogues[COUNT(activation_cases)];
  for (size_t i = 0; i < COUNT(activation_cases); ++i) epilogues[i] = (epilogue_t){act, 0, 0, 0};
  check_cases_with(activation_cases, epilogues, COUNT(activation_cases), seed);
}

/* The sigmoid epilogue (the conv epilogue pass makes it of a Sigmoid after a Conv:
 * Silero VAD's last layer, segmentation heads) in every kernel family. */
static void sigmoid_epilogues_match_reference(void** state) {
  (void)state;
  check_activation(HGR_REF_ACT_SIGMOID, 31);
}

/* The SiLU and HardSwish epilogues (YOLO's and MobileNetV3's convolutions: the conv
 * epilogue pass makes them of a Sigmoid and the Mul of its input by it, and of a
 * HardSwish) in every kernel family. */
static void silu_and_hard_swish_epilogues_match_reference(void** state) {
  (void)state;
  check_activation(HGR_REF_ACT_SILU, 37);
  check_activation(HGR_REF_ACT_HARD_SWISH, 38);
}

/* The leaky relu then a clip (the conv epilogue pass makes it of a LeakyRelu and a Max
 * or Min with a constant: openWakeWord's speech embedding) in the same kernel
 * families; a bound may be infinite. */
static void leaky_relu_clip_epilogues_match_reference(void** state) {
  (void)state;
  static const conv_case_t cases[] = {
      {{1, 3, 6, 7}, {5, 3, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 1, false), "1", true},
      {{1, 24, 12, 32}, {24, 24, 1, 3}, P(1, 1, 0, 1, 0, 1, 1, 1, 1, false), "[0, 1, 0, 1]", true},
      {{1, 8, 12, 16}, {8, 8, 3, 1}, P(1, 1, 0, 0, 0, 0, 1, 1, 1, false), NULL, false},
      {{1, 4, 6, 18}, {4, 1, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 4, false), "1", true},
      {{2, 8, 3, 9}, {5, 8, 1, 1}, P(1, 1, 0, 0, 0, 0, 1, 1, 1, false), NULL, true},
      {{1, 8, 9, 11}, {8, 2, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 4, false), "1", true},
  };
  static const epilogue_t epilogues[] = {
      {HGR_REF_ACT_LEAKY_RELU_CLIP, 0.2f, -0.4f, INFINITY}, {HGR_REF_ACT_LEAKY_RELU_CLIP, 0.2f, -0.4f, INFINITY},
      {HGR_REF_ACT_LEAKY_RELU_CLIP, 0.1f, -INFINITY, 0.5f}, {HGR_REF_ACT_LEAKY_RELU_CLIP, 0.3f, -0.2f, 0.6f},
      {HGR_REF_ACT_LEAKY_RELU_CLIP, 0.2f, -0.4f, INFINITY}, {HGR_REF_ACT_LEAKY_RELU_CLIP, 0.05f, -0.1f, 1.0f},
  };
  check_cases_with(cases, epilogues, COUNT(cases), 32);
}

/* Convolutions of one input channel along one row (no padding, one output row, a
 * kernel of more than one column) run as the GEMM of kernels/linalg.cl over a
 * strided view of the input (is_windows): strides below, at and above the kernel's
 * width, dilation, a batch of two, one output column, an input of three rows of which
 * the one output row reads the first, every epilogue with and without a bias; and the
 * STFT of openWakeWord's melspectrogram (a 512-tap window every 160 samples). */
static void windows_convs_match_reference(void** state) {
  (void)state;
  static const conv_case_t cases[] = {
      {{1, 1, 1, 40}, {5, 1, 1, 7}, P(1, 3, 0, 0, 0, 0, 1, 1, 1, false), NULL, true},
      {{1, 1, 1, 33}, {7, 1, 1, 4}, P(1, 4, 0, 0, 0, 0, 1, 1, 1, false), NULL, false},
      {{2, 1, 1, 37}, {9, 1, 1, 4}, P(1, 5, 0, 0, 0, 0, 1, 2, 1, true), NULL, true},
      {{1, 1, 1, 20}, {3, 1, 1, 20}, P(1, 1, 0, 0, 0, 0, 1, 1, 1, false), NULL, true},
      {{1, 1, 3, 30}, {4, 1, 1, 5}, P(3, 2, 0, 0, 0, 0, 1, 1, 1, false), NULL, false},
      {{2, 1, 1, 64}, {33, 1, 1, 16}, P(1, 1, 0, 0, 0, 0, 1, 1, 1, true), NULL, true},
  };
  static const epilogue_t epilogues[] = {
      {0, 0, 0, 0},
      {HGR_REF_ACT_LEAKY_RELU, 0.1f, 0, 0},
      {0, 0, 0, 0}, /* relu */
      {HGR_REF_ACT_CLIP, 0, -0.5f, 0.5f},
      {0, 0, 0, 0},
      {0, 0, 0, 0}, /* relu */
  };
  check_cases_with(cases, epilogues, COUNT(cases), 29);
  hgr_optest_t t;
  hgr_optest_init(&t, "conv2d", "\"strides\": \"[1, 160]\"");
  hgr_optest_input(&t, "float32", 4, (int64_t[]){1, 1, 1, 1760});
  hgr_optest_input(&t, "float32", 4, (int64_t[]){257, 1, 1, 512});
  hgr_optest_output(&t, "float32", 4, (int64_t[]){1, 257, 1, 8});
  hgr__op_ctx_t ctx;
  hgr__limits_t roomy = {1024, {1024, 1024, 1024}, 64 * 1024, 0};
  hgr_optest_plan(&t, &roomy, NULL, &ctx);
  assert_int_equal(ctx.launch_count, 1);
  assert_true(!strncmp(ctx.launches[0].kernel, "hgr_gemm_", 9));
  hgr__op_ctx_free(&ctx);
  hgr_optest_free(&t);
  if (hgr_optest_is_simulator(hgr_optest_device)) return;
  static const conv_case_t stft[] = {
      {{1, 1, 1, 1760}, {257, 1, 1, 512}, P(1, 160, 0, 0, 0, 0, 1, 1, 1, false), NULL, false},
  };
  check_cases(stft, COUNT(stft), 30);
}

/* The plan of a pointwise conv2d: one GEMM launch of kernels/linalg.cl on a device
 * with local memory, the register-blocked kernel (no local memory) on one without. */
static void pointwise_convs_plan_the_gemm(void** state) {
  (void)state;
  hgr_optest_t t;
  hgr_optest_init(&t, "conv2d", "\"activation\": \"relu\"");
  hgr_optest_input(&t, "float32", 4, (int64_t[]){2, 64, 14, 14});
  hgr_optest_input(&t, "float32", 4, (int64_t[]){128, 64, 1, 1});
  hgr_optest_input(&t, "float32", 1, (int64_t[]){128});
  hgr_optest_output(&t, "float32", 4, (int64_t[]){2, 128, 14, 14});
  hgr__op_ctx_t ctx;
  hgr__limits_t roomy = {1024, {1024, 1024, 1024}, 64 * 1024, 0};
  hgr_optest_plan(&t, &roomy, NULL, &ctx);
  assert_int_equal(ctx.launch_count, 1);
  assert_true(!strncmp(ctx.launches[0].kernel, "hgr_gemm_", 9));
  assert_non_null(ctx.launches[0].source);
  assert_string_equal(ctx.launches[0].source, "linalg");
  assert_int_equal(ctx.launches[0].launch.global[2], 2); /* one GEMM per image */
  hgr__op_ctx_free(&ctx);
  hgr__limits_t no_local = {256, {256, 256, 256}, 0, 0};
  hgr_optest_plan(&t, &no_local, NULL, &ctx);
  assert_string_equal(ctx.launches[0].kernel, "hgr_conv2d_rows_6x16");
  assert_null(ctx.launches[0].source);
  hgr__op_ctx_free(&ctx);
  hgr_optest_free(&t);
}

/* Groups of fewer than 8 output channels (one image, not depthwise) run the
 * implicit GEMM (hgr_conv_gemm_* of kernels/linalg.cl, im2col on the fly): strides
 * 1, 2 and 3, symmetric and asymmetric padding, dilation, kernels 1x1 (padded) to
 * 5x3, every epilogue with and without a bias, pixel and channel counts no multiple
 * of any tile. */
static void implicit_gemm_matches_reference(void** state) {
  (void)state;
  static const conv_case_t cases[] = {
      {{1, 8, 9, 11}, {8, 2, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 4, false), "1", false},
      {{1, 8, 9, 11}, {8, 2, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 4, true), "1", true},
      {{1, 6, 13, 10}, {9, 2, 3, 3}, P(2, 2, 1, 1, 1, 1, 1, 1, 3, false), "1", true},
      {{1, 6, 12, 14}, {6, 3, 3, 3}, P(2, 1, 0, 1, 2, 0, 1, 1, 2, false), "[0, 1, 2, 0]", false},
      {{1, 4, 11, 12}, {6, 2, 3, 3}, P(1, 1, 2, 2, 2, 2, 2, 2, 2, false), "2", true},
      {{1, 10, 9, 10}, {10, 2, 5, 3}, P(3, 2, 2, 1, 2, 1, 1, 2, 5, false), "[2, 1]", true},
      {{1, 8, 6, 7}, {4, 4, 1, 1}, P(1, 1, 1, 1, 1, 1, 1, 1, 2, false), "1", true},
      {{1, 12, 3, 3}, {12, 3, 3, 3}, P(1, 1, 0, 0, 0, 0, 1, 1, 4, false), NULL, false},
      {{1, 6, 1, 17}, {6, 2, 1, 3}, P(1, 2, 0, 1, 0, 1, 1, 1, 3, false), "[0, 1]", true},
  };
  static const epilogue_t epilogues[] = {
      {0, 0, 0, 0},
      {0, 0, 0, 0}, /* relu */
      {HGR_REF_ACT_LEAKY_RELU, 0.1f, 0, 0},
      {HGR_REF_ACT_CLIP, 0, -0.5f, 0.5f},
      {HGR_REF_ACT_CLIP, 0, 0, 6},
      {HGR_REF_ACT_LEAKY_RELU, 0.2f, 0, 0},
      {0, 0, 0, 0},
      {HGR_REF_ACT_CLIP, 0, -0.25f, 0.25f},
      {0, 0, 0, 0},
  };
  check_cases_with(cases, epilogues, COUNT(cases), 27);
  if (hgr_optest_is_simulator(hgr_optest_device)) return;
  /* larger: the wider GEMM tiles, partial at the edges */
  static const conv_case_t large[] = {
      {{1, 64, 30, 29}, {48, 4, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 16, true), "1", true},
      {{1, 96, 28, 27}, {96, 2, 3, 3}, P(2, 2, 1, 1, 1, 1, 1, 1, 48, false), "1", true},
  };
  check_cases(large, COUNT(large), 28);
}

/* Patch convolutions (stride = kernel size of at least 3 x 3, no padding, one group)
 * run two launches: hgr_conv2d_patches into the scratch, then the GEMM over it.
 * Square and oblong patches, inputs whose last rows and columns no patch takes, a
 * batch of two, fewer patches than a GEMM strip, every epilogue; and a ViT-S/16's. */
static void patch_convs_match_reference(void** state) {
  (void)state;
  static const conv_case_t cases[] = {
      {{1, 3, 32, 32}, {8, 3, 16, 16}, P(16, 16, 0, 0, 0, 0, 1, 1, 1, false), NULL, true},
      {{2, 3, 30, 29}, {10, 3, 4, 4}, P(4, 4, 0, 0, 0, 0, 1, 1, 1, true), NULL, true},
      {{1, 5, 9, 13}, {7, 5, 3, 3}, P(3, 3, 0, 0, 0, 0, 1, 1, 1, false), NULL, false},
      {{1, 2, 12, 16}, {6, 2, 3, 5}, P(3, 5, 0, 0, 0, 0, 1, 1, 1, false), NULL, true},
  };
  static const epilogue_t epilogues[] = {
      {0, 0, 0, 0},
      {0, 0, 0, 0}, /* relu */
      {HGR_REF_ACT_LEAKY_RELU, 0.1f, 0, 0},
      {HGR_REF_ACT_CLIP, 0, -0.5f, 0.5f},
  };
  check_cases_with(cases, epilogues, COUNT(cases), 31);
  if (hgr_optest_is_simulator(hgr_optest_device)) return;
  static const conv_case_t vit[] = {
      {{1, 3, 224, 224}, {384, 3, 16, 16}, P(16, 16, 0, 0, 0, 0, 1, 1, 1, false), NULL, true},
  };
  check_cases(vit, COUNT(vit), 32);
}

static void patch_convs_plan_two_launches(void** state) {
  (void)state;
  hgr_optest_t t;
  hgr_optest_init(&t, "conv2d", "\"strides\": \"[16, 16]\"");
  hgr_optest_input(&t, "float32", 4, (int64_t[]){1, 3, 224, 224});
  hgr_optest_input(&t, "float32", 4, (int64_t[]){384, 3, 16, 16});
  hgr_optest_input(&t, "float32", 1, (int64_t[]){384});
  hgr_optest_output(&t, "float32", 4, (int64_t[]){1, 384, 14, 14});
  hgr__op_ctx_t ctx;
  hgr__limits_t roomy = {1024, {1024, 1024, 1024}, 64 * 1024, 0};
  hgr_optest_plan(&t, &roomy, NULL, &ctx);
  assert_int_equal(ctx.launch_count, 2);
  assert_string_equal(ctx.launches[0].kernel, "hgr_conv2d_patches");
  assert_true(!strncmp(ctx.launches[1].kernel, "hgr_gemm_", 9));
  hgr__op_ctx_free(&ctx);
  hgr_optest_free(&t);
}

/* Stride-2 convolutions of one group with at least 196 outputs and 64 taps that the
 * strided rows kernels do not take (kernels wider than 11 columns, dilation, 1x1) run
 * the implicit GEMM too, its copies the even half of a vload8 inside the image and
 * scalar loads at the edges: 3 x 13, 1x1 and 3 x 12 kernels, padding, asymmetric
 * padding with dilation, widths odd and even, a batch of two, every epilogue. */
static void strided_implicit_gemm_matches_reference(void** state) {
  (void)state;
  static const conv_case_t cases[] = {
      {{1, 8, 33, 35}, {12, 8, 3, 13}, P(2, 2, 1, 1, 1, 1, 1, 1, 1, true), "1", true},
      {{2, 64, 30, 31}, {20, 64, 1, 1}, P(2, 2, 0, 0, 0, 0, 1, 1, 1, false), NULL, true},
      {{1, 8, 36, 33}, {6, 8, 3, 3}, P(2, 2, 1, 0, 2, 1, 2, 2, 1, false), "[1, 0, 2, 1]", false},
      {{1, 16, 28, 40}, {9, 16, 3, 12}, P(2, 2, 1, 1, 1, 1, 1, 1, 1, false), "1", true},
  };
  static const epilogue_t epilogues[] = {
      {0, 0, 0, 0}, /* relu */
      {HGR_REF_ACT_LEAKY_RELU, 0.1f, 0, 0},
      {HGR_REF_ACT_CLIP, 0, -0.5f, 0.5f},
      {0, 0, 0, 0},
  };
  check_cases_with(cases, epilogues, COUNT(cases), 29);
}

/* A 3x3 stride-2 layer with 18 x 18 outputs (blocks wasting 6 of 24 lanes of a row,
 * once the implicit GEMM's) and one with 5 x 5 outputs (3 of 8 wasted, once the
 * tiled kernel's) run the split strided rows kernels; a stride-2 layer whose kernel
 * is wider than theirs (13 columns), with 280 outputs and 312 taps, plans the
 * implicit GEMM. */
static void strided_layers_plan_the_implicit_gemm_where_large(void** state) {
  (void)state;
  hgr__limits_t roomy = {1024, {1024, 1024, 1024}, 64 * 1024, 0};
  static const struct {
    int64_t x[4], w[4], y[4];
    const char* padding;
    const char* kernel; /* a prefix of the last launch's */
  } layers[] = {
      {{1, 128, 35, 35}, {128, 128, 3, 3}, {1, 128, 18, 18}, "1", "hgr_conv2d_rows_6x8x2_s2s_k3"},
      {{1, 512, 10, 10}, {512, 512, 3, 3}, {1, 512, 5, 5}, "1", "hgr_conv2d_rows_6x8x2_s2s_k3"},
      {{1, 8, 40, 40}, {16, 8, 3, 13}, {1, 16, 20, 14}, "[1, 0, 1, 0]", "hgr_conv_gemm_"},
  };
  for (size_t i = 0; i < COUNT(layers); ++i) {
    char attrs[96];
    snprintf(attrs, sizeof(attrs), "\"padding\": \"%s\", \"strides\": \"[2, 2]\"", layers[i].padding);
    hgr__op_ctx_t ctx;
    hgr_optest_t t;
    hgr_optest_init(&t, "conv2d", attrs);
    hgr_optest_input(&t, "float32", 4, layers[i].x);
    hgr_optest_input(&t, "float32", 4, layers[i].w);
    hgr_optest_output(&t, "float32", 4, layers[i].y);
    hgr_optest_plan(&t, &roomy, NULL, &ctx);
    const char* last = ctx.launches[ctx.launch_count - 1].kernel;
    if (strncmp(last, layers[i].kernel, strlen(layers[i].kernel)))
      fail_msg("layer %zu planned %s, not %s", i, last, layers[i].kernel);
    hgr__op_ctx_free(&ctx);
    hgr_optest_free(&t);
  }
}

/* The plan of a conv2d with narrow groups: one implicit-GEMM launch of
 * kernels/linalg.cl (its im2col table the meta buffer, the last argument) on a
 * device with local memory; the direct kernel for two images or without local
 * memory. */
static void narrow_groups_plan_the_implicit_gemm(void** state) {
  (void)state;
  hgr_optest_t t;
  hgr_optest_init(&t, "conv2d", "\"padding\": \"1\", \"groups\": \"16\", \"activation\": \"relu\"");
  hgr_optest_input(&t, "float32", 4, (int64_t[]){1, 64, 14, 14});
  hgr_optest_input(&t, "float32", 4, (int64_t[]){64, 4, 3, 3});
  hgr_optest_input(&t, "float32", 1, (int64_t[]){64});
  hgr_optest_output(&t, "float32", 4, (int64_t[]){1, 64, 14, 14});
  hgr__op_ctx_t ctx;
  hgr__limits_t roomy = {1024, {1024, 1024, 1024}, 64 * 1024, 0};
  hgr_optest_plan(&t, &roomy, NULL, &ctx);
  assert_int_equal(ctx.launch_count, 1);
  assert_true(!strncmp(ctx.launches[0].kernel, "hgr_conv_gemm_", 14));
  assert_non_null(ctx.launches[0].source);
  assert_string_equal(ctx.launches[0].source, "linalg");
  assert_int_equal(ctx.launches[0].launch.global[2], 16); /* one GEMM per group */
  /* the table: 8 geometry values, then 3 per tap (4 channels x 9 taps) */
  assert_int_equal(ctx.launches[0].meta_count, 8 + 3 * 4 * 9);
  hgr__op_ctx_free(&ctx);
  hgr__limits_t no_local = {256, {256, 256, 256}, 0, 0};
  hgr_optest_plan(&t, &no_local, NULL, &ctx);
  assert_string_equal(ctx.launches[0].kernel, "hgr_conv2d_direct");
  hgr__op_ctx_free(&ctx);
  hgr_optest_free(&t);

  hgr_optest_init(&t, "conv2d", "\"padding\": \"1\", \"groups\": \"16\"");
  hgr_optest_input(&t, "float32", 4, (int64_t[]){2, 64, 14, 14});
  hgr_optest_input(&t, "float32", 4, (int64_t[]){64, 4, 3, 3});
  hgr_optest_output(&t, "float32", 4, (int64_t[]){2, 64, 14, 14});
  hgr_optest_plan(&t, &roomy, NULL, &ctx);
  assert_string_equal(ctx.launches[0].kernel, "hgr_conv2d_direct");
  hgr__op_ctx_free(&ctx);
  hgr_optest_free(&t);
}

/* The stride-1 rows kernels' two forms as tuning candidates of conv_run_check: 6
 * output channels x 16 pixels reading x (form 0: candidate 0, one launch), 8 x 32
 * reading the zero-padded copy in scratch (form 1: candidate 2, two launches), or
 * the plan's own choice (form -1). */
static void set_rows_candidate(int form) {
  conv_candidate = form < 0 ? UINT32_MAX : form ? 2 : 0;
  conv_candidate_kernel = form < 0 ? NULL : form ? "hgr_conv2d_rows_8x32p" : "hgr_conv2d_rows_6x16";
  conv_candidate_launches = form ? 2 : 1;
}

/* One group, stride 1, dilation 1 and an output no wider than the input run the
 * register-blocked kernels on a grid as wide as the input (each form run as a
 * tuning candidate): hgr_conv2d_rows_6x16* (6 output channels x 16 pixels per
 * work-item, reading x), or hgr_conv2d_pad, then hgr_conv2d_rows_8x32p* (8 x 32,
 * reading the zero-padded copy): 3x3 (_k3), 5x5 (_k5) and other kernels (runtime
 * KH, KW); padding 0, 1 and 2, symmetric and not; widths and grids no multiple of
 * 16 or 32 (the shifted or partial last block), channel counts no multiple of 6 or
 * 8; blocks that cross row ends (masked) and blocks inside the image; planes so
 * small that a tap's run leaves x (H = 1, the first and last planes of two
 * images), grids of fewer than 32 pixels; the bias on and off and every epilogue. */
static void rows_kernel_matches_reference(void** state) {
  (void)state;
  static const conv_case_t cases[] = {
      {{1, 5, 9, 20}, {13, 5, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 1, false), "1", true},
      {{2, 7, 6, 17}, {6, 7, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 1, true), "1", false},
      {{1, 4, 8, 21}, {7, 4, 3, 3}, P(1, 1, 0, 0, 0, 0, 1, 1, 1, false), "0", true},
      {{2, 3, 7, 11}, {5, 3, 3, 3}, P(1, 1, 0, 2, 2, 0, 1, 1, 1, false), "[0, 2, 2, 0]", true},
      {{1, 3, 1, 18}, {8, 3, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 1, false), "1", true},
      {{2, 2, 2, 9}, {4, 2, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 1, false), "1", false},
      {{1, 6, 11, 19}, {11, 6, 5, 5}, P(1, 1, 2, 2, 2, 2, 1, 1, 1, false), "2", true},
      {{2, 3, 9, 12}, {4, 3, 5, 5}, P(1, 1, 0, 0, 0, 0, 1, 1, 1, false), "0", false},
      {{1, 5, 8, 10}, {9, 5, 5, 5}, P(1, 1, 1, 1, 1, 1, 1, 1, 1, false), "1", true},
      {{1, 4, 7, 23}, {7, 4, 3, 5}, P(1, 1, 1, 2, 1, 2, 1, 1, 1, false), "[1, 2]", true},
      {{2, 3, 10, 8}, {5, 3, 1, 3}, P(1, 1, 0, 1, 0, 1, 1, 1, 1, false), "[0, 1]", false},
      {{1, 21, 3, 9}, {13, 21, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 1, true), "1", true},
  };
  static const epilogue_t epilogues[] = {
      {0, 0, 0, 0},
      {0, 0, 0, 0}, /* relu */
      {HGR_REF_ACT_LEAKY_RELU, 0.1f, 0, 0},
      {HGR_REF_ACT_CLIP, 0, -0.5f, 0.5f},
      {0, 0, 0, 0},
      {HGR_REF_ACT_CLIP, 0, 0, 6},
      {0, 0, 0, 0},
      {HGR_REF_ACT_LEAKY_RELU, 0.25f, 0, 0},
      {HGR_REF_ACT_CLIP, 0, -0.25f, 0.25f},
      {0, 0, 0, 0},
      {HGR_REF_ACT_LEAKY_RELU, 0.01f, 0, 0},
      {0, 0, 0, 0}, /* relu */
  };
  /* resnet50's 3x3 layers at 7 x 7 (every block masked) and vgg-like 28 x 28 */
  static const conv_case_t large[] = {
      {{1, 64, 7, 7}, {70, 64, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 1, true), "1", true},
      {{2, 32, 28, 28}, {40, 32, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 1, false), "1", true},
  };
  for (int form = 0; form < 2; ++form) {
    set_rows_candidate(form);
    check_cases_with(cases, epilogues, COUNT(cases), 31);
    if (!hgr_optest_is_simulator(hgr_optest_device)) check_cases(large, COUNT(large), 32);
  }
  set_rows_candidate(-1);
}

/* Plans a conv2d {attrs} of data x and weight w to output y for the limits: t holds
 * the graph, ctx the plan (the caller frees both). */
static void plan_layer(const char* attrs, const int64_t x[4], const int64_t w[4], const int64_t y[4],
                       const hgr__limits_t* limits, hgr_optest_t* t, hgr__op_ctx_t* ctx) {
  hgr_optest_init(t, "conv2d", attrs);
  hgr_optest_input(t, "float32", 4, x);
  hgr_optest_input(t, "float32", 4, w);
  hgr_optest_output(t, "float32", 4, y);
  hgr_optest_plan(t, limits, NULL, ctx);
}

/* Which layers plan the register-blocked kernel, and its NDRange: a block of 16
 * grid pixels x 6 output channels per work-item, images in z. */
static void rows_kernel_plans_where_it_fits(void** state) {
  (void)state;
  hgr__limits_t roomy = {1024, {1024, 1024, 1024}, 64 * 1024, 0};
  static const struct {
    int64_t x[4], w[4], y[4];
    const char* attrs;
    const char* kernel; /* a prefix */
  } layers[] = {
      {{2, 64, 14, 14}, {64, 64, 3, 3}, {2, 64, 14, 14}, "\"padding\": \"1\"", "hgr_conv2d_rows_6x16_k3"},
      {{1, 8, 12, 12}, {16, 8, 5, 5}, {1, 16, 12, 12}, "\"padding\": \"2\"", "hgr_conv2d_rows_6x16_k5"},
      {{1, 8, 12, 12}, {16, 8, 3, 5}, {1, 16, 10, 8}, "\"padding\": \"0\"", "hgr_conv2d_rows_6x16"},
      /* wider than the input (padding 2 for a 3x3 kernel): the tiled kernel */
      {{1, 8, 12, 12}, {16, 8, 3, 3}, {1, 16, 14, 14}, "\"padding\": \"2\"", "hgr_conv2d_tiled_"},
      /* dilated, grouped, or a grid of fewer than 16 pixels: the tiled kernel */
      {{1, 8, 12, 12}, {16, 8, 3, 3}, {1, 16, 12, 12}, "\"padding\": \"2\", \"dilation\": \"[2, 2]\"",
       "hgr_conv2d_tiled_"},
      {{1, 16, 12, 12}, {16, 8, 3, 3}, {1, 16, 12, 12}, "\"padding\": \"1\", \"groups\": \"2\"",
       "hgr_conv2d_tiled_"},
      {{1, 8, 3, 4}, {16, 8, 3, 3}, {1, 16, 3, 4}, "\"padding\": \"1\"", "hgr_conv2d_tiled_"},
  };
  for (size_t i = 0; i < COUNT(layers); ++i) {
    hgr_optest_t t;
    hgr__op_ctx_t ctx;
    plan_layer(layers[i].attrs, layers[i].x, layers[i].w, layers[i].y, &roomy, &t, &ctx);
    assert_int_equal(ctx.launch_count, 1);
    if (strncmp(ctx.launches[0].kernel, layers[i].kernel, strlen(layers[i].kernel)))
      fail_msg("layer %zu planned %s, not %s", i, ctx.launches[0].kernel, layers[i].kernel);
    if (i == 0) {
      const hgr__launch_t* launch = &ctx.launches[0].launch;
      assert_int_equal(launch->work_dim, 3);
      assert_int_equal(launch->global[0], (13 * 14 + 14 + 15) / 16);
      assert_int_equal(launch->global[1], 16); /* 11 blocks of 6 channels, rounded up to local 8 */
      assert_int_equal(launch->local[1], 8);
      assert_int_equal(launch->global[2], 2);
    }
    hgr__op_ctx_free(&ctx);
    hgr_optest_free(&t);
  }
}

/* The register-blocked kernels and the tiled one are tuning candidates of the
 * layers the first takes (rows_6x16 by the rule on a device of narrower registers,
 * tiled or rows_8x32p when asked), under keys of their own. */
static void rows_kernel_is_a_tuning_candidate(void** state) {
  (void)state;
  hgr__limits_t roomy = {1024, {1024, 1024, 1024}, 64 * 1024, 0};
  hgr_optest_t t;
  hgr_optest_init(&t, "conv2d", "\"padding\": \"1\"");
  hgr_optest_input(&t, "float32", 4, (int64_t[]){1, 64, 14, 14});
  hgr_optest_input(&t, "float32", 4, (int64_t[]){64, 64, 3, 3});
  hgr_optest_output(&t, "float32", 4, (int64_t[]){1, 64, 14, 14});
  char* json = hgr_optest_graph_json(&t);
  hgr_graph_t* graph = NULL;
  ASSERT_OK(hgr_graph_load_json(json, strlen(json), &graph));
  free(json);
  static const char* const kernels[] = {"hgr_conv2d_rows_6x16_k3", "hgr_conv2d_tiled_o8p8", "hgr_conv2d_pad"};
  static const char* const tiles[] = {"rows_6x16", "tiled", "rows_8x32p"};
  for (uint32_t candidate = 0; candidate < 3; ++candidate) {
    hgr__tuning_t tuning = {NULL, NULL, HGR_TUNING_CANDIDATE, candidate};
    hgr__op_ctx_t ctx;
    ASSERT_OK(hgr__op_plan_tuned(hgr_allocator_system(), graph, t.input_count, NULL, &roomy, &tuning, &ctx));
    assert_string_equal(ctx.launches[0].kernel, kernels[candidate]);
    assert_int_equal(ctx.tile.candidate_count, 3);
    assert_string_equal(ctx.tile.tile, tiles[candidate]);
    assert_string_equal(ctx.tile.key, "conv_rows:1x64x14x14:k64x3x3:p1,1,1,1");
    hgr__op_ctx_free(&ctx);
  }
  hgr_graph_release(graph);
  hgr_optest_free(&t);
}

/* The strided rows kernels' three forms as tuning candidates of conv_run_check: the
 * even/odd loads of x (form 0: candidate 0, one launch), the copy into scratch
 * split by column parity with 6 x 16 blocks (form 1: candidate 2, two launches) or
 * with 8 x 32 ones (form 2: candidate 3, two launches), or the plan's own choice
 * (form -1). */
#define STRIDED_ROWS_FORMS 3
static void set_strided_rows_candidate(int form) {
  static const uint32_t candidates[STRIDED_ROWS_FORMS] = {0, 2, 3};
  conv_candidate = form < 0 ? UINT32_MAX : candidates[form];
  conv_candidate_kernel = form < 0 ? NULL : form == 2 ? "hgr_conv2d_rows_8x" : "hgr_conv2d_rows_6x";
  conv_candidate_launches = form ? 2 : 1;
}

/* A horizontal stride of 2 runs the strided register-blocked kernels, reading x
 * (hgr_conv2d_rows_6x16_s2*) or the parity-split copy of it in scratch
 * (hgr_conv2d_s2_split, then hgr_conv2d_rows_6x16_s2s* or the 8 x 32 blocks of
 * hgr_conv2d_rows_8x*_s2s*; each form run as a tuning candidate), 6 output
 * channels x 16 pixels of one output row per work-item (8 x 32 of one, two or four
 * rows), where they fit:
 * 3x3 (_k3), 7x7 (_k7) and other kernels (runtime KH, KW);
 * padding 0 to 3, symmetric and not, rows all padding; vertical strides 1 and 2;
 * widths odd and even and no multiple of 16 (the partial last block of a row);
 * channel counts no multiple of 6; blocks inside the image and masked ones; taps
 * whose 31 floats would leave x (the last row of the last plane of two images,
 * the first of the first); the bias on and off and every epilogue. */
static void rows_s2_kernel_matches_reference(void** state) {
  (void)state;
  static const conv_case_t cases[] = {
      {{1, 5, 9, 60}, {13, 5, 3, 3}, P(2, 2, 1, 1, 1, 1, 1, 1, 1, false), "1", true},
      {{2, 7, 10, 57}, {6, 7, 3, 3}, P(2, 2, 0, 0, 0, 0, 1, 1, 1, true), "0", false},
      {{1, 4, 8, 29}, {7, 4, 3, 3}, P(2, 2, 0, 1, 2, 1, 1, 1, 1, false), "[0, 1, 2, 1]", true},
      {{1, 3, 30, 64}, {8, 3, 7, 7}, P(2, 2, 3, 3, 3, 3, 1, 1, 1, false), "3", true},
      {{2, 3, 11, 33}, {5, 3, 7, 7}, P(2, 2, 2, 2, 2, 2, 1, 1, 1, false), "2", false},
      {{1, 6, 12, 31}, {11, 6, 5, 5}, P(2, 2, 2, 2, 2, 2, 1, 1, 1, false), "2", true},
      {{1, 4, 9, 28}, {7, 4, 3, 3}, P(1, 2, 1, 1, 1, 1, 1, 1, 1, false), "1", true},
      {{1, 21, 5, 28}, {13, 21, 3, 3}, P(2, 2, 1, 1, 1, 1, 1, 1, 1, true), "1", true},
      {{2, 3, 5, 32}, {4, 3, 3, 3}, P(2, 2, 0, 0, 0, 0, 1, 1, 1, false), "0", true},
      {{1, 2, 6, 50}, {6, 2, 3, 3}, P(2, 2, 3, 3, 3, 3, 1, 1, 1, false), "3", true},
      {{1, 4, 7, 27}, {9, 4, 3, 2}, P(2, 2, 1, 0, 1, 1, 1, 1, 1, false), "[1, 0, 1, 1]", false},
  };
  static const epilogue_t epilogues[] = {
      {0, 0, 0, 0},
      {0, 0, 0, 0}, /* relu */
      {HGR_REF_ACT_LEAKY_RELU, 0.1f, 0, 0},
      {HGR_REF_ACT_CLIP, 0, -0.5f, 0.5f},
      {0, 0, 0, 0},
      {HGR_REF_ACT_CLIP, 0, 0, 6},
      {HGR_REF_ACT_LEAKY_RELU, 0.25f, 0, 0},
      {0, 0, 0, 0}, /* relu */
      {0, 0, 0, 0},
      {HGR_REF_ACT_CLIP, 0, -0.25f, 0.25f},
      {HGR_REF_ACT_LEAKY_RELU, 0.01f, 0, 0},
  };
  /* resnet50's 3x3 stride-2 layers at 14 x 14 outputs, and a stem at 28 x 28 */
  static const conv_case_t large[] = {
      {{1, 64, 28, 28}, {70, 64, 3, 3}, P(2, 2, 1, 1, 1, 1, 1, 1, 1, true), "1", true},
      {{1, 3, 56, 56}, {64, 3, 7, 7}, P(2, 2, 3, 3, 3, 3, 1, 1, 1, false), "3", true},
  };
  for (int form = 0; form < STRIDED_ROWS_FORMS; ++form) {
    set_strided_rows_candidate(form);
    check_cases_with(cases, epilogues, COUNT(cases), 33);
    if (!hgr_optest_is_simulator(hgr_optest_device)) check_cases(large, COUNT(large), 34);
  }
  set_strided_rows_candidate(-1);
}

/* Rows of at most 8 outputs (and 17-24) run the two-row variants
 * (hgr_conv2d_rows_6x8x2_s2*, or hgr_conv2d_s2_split then hgr_conv2d_rows_6x8x2_s2s*;
 * each form run as a tuning candidate; 6 output channels x 8 pixels of each of two
 * output rows per work-item): 3x3 (_k3) and other kernels (runtime KH, KW: 5x5, 7x7, 3x2);
 * an odd number of output rows (the last block's second row past OH), two blocks
 * per row (OW 20, the second partial); vertical strides 1 and 2; padding 0 to 3,
 * symmetric and not, rows all padding; blocks inside the image and masked ones;
 * the last plane of two images; the bias on and off and every epilogue. */
static void rows_s2_two_row_kernel_matches_reference(void** state) {
  (void)state;
  static const conv_case_t cases[] = {
      {{1, 5, 14, 14}, {13, 5, 3, 3}, P(2, 2, 1, 1, 1, 1, 1, 1, 1, true), "1", true},
      {{2, 7, 13, 15}, {6, 7, 3, 3}, P(2, 2, 1, 1, 1, 1, 1, 1, 1, false), "1", false},
      {{1, 4, 11, 13}, {7, 4, 5, 5}, P(2, 2, 2, 2, 2, 2, 1, 1, 1, false), "2", true},
      {{1, 3, 7, 14}, {5, 3, 3, 3}, P(1, 2, 1, 1, 1, 1, 1, 1, 1, false), "1", true},
      {{1, 5, 9, 40}, {8, 5, 3, 3}, P(2, 2, 1, 1, 1, 1, 1, 1, 1, true), "1", true},
      {{2, 3, 8, 15}, {7, 3, 3, 2}, P(2, 2, 1, 0, 1, 1, 1, 1, 1, false), "[1, 0, 1, 1]", false},
      {{1, 2, 3, 12}, {6, 2, 3, 3}, P(2, 2, 3, 3, 3, 3, 1, 1, 1, false), "3", true},
      {{1, 3, 20, 19}, {5, 3, 7, 7}, P(2, 2, 0, 0, 0, 0, 1, 1, 1, true), "0", true},
      {{2, 4, 21, 30}, {9, 4, 3, 3}, P(2, 2, 0, 1, 2, 1, 1, 1, 1, false), "[0, 1, 2, 1]", true},
  };
  static const epilogue_t epilogues[] = {
      {0, 0, 0, 0}, /* relu */
      {HGR_REF_ACT_CLIP, 0, -0.5f, 0.5f},
      {HGR_REF_ACT_LEAKY_RELU, 0.1f, 0, 0},
      {0, 0, 0, 0},
      {HGR_REF_ACT_CLIP, 0, 0, 6},
      {HGR_REF_ACT_LEAKY_RELU, 0.25f, 0, 0},
      {0, 0, 0, 0},
      {0, 0, 0, 0}, /* relu */
      {HGR_REF_ACT_LEAKY_RELU, 0.01f, 0, 0},
  };
  /* resnet50's 512-channel layer with 7 x 7 outputs, narrower */
  static const conv_case_t large[] = {
      {{1, 64, 14, 14}, {70, 64, 3, 3}, P(2, 2, 1, 1, 1, 1, 1, 1, 1, true), "1", true},
  };
  for (int form = 0; form < STRIDED_ROWS_FORMS; ++form) {
    set_strided_rows_candidate(form);
    check_cases_with(cases, epilogues, COUNT(cases), 35);
    if (!hgr_optest_is_simulator(hgr_optest_device)) check_cases(large, COUNT(large), 36);
  }
  set_strided_rows_candidate(-1);
}

/* Which stride-2 layers plan the strided register-blocked kernels (by the rule, in
 * their split form: hgr_conv2d_s2_split into scratch, then hgr_conv2d_rows_*_s2s*),
 * and their NDRange: a padded row per split work-item; a block of 16 pixels of one
 * output row (or 8 of two, for rows of 7) x 6 output channels per work-item. */
static void rows_s2_kernel_plans_where_it_fits(void** state) {
  (void)state;
  hgr__limits_t roomy = {1024, {1024, 1024, 1024}, 64 * 1024, 0};
  static const struct {
    int64_t x[4], w[4], y[4];
    const char* attrs;
    const char* kernel; /* a prefix */
    int64_t pad;        /* on every side */
  } layers[] = {
      {{1, 128, 56, 56}, {128, 128, 3, 3}, {1, 128, 28, 28}, "\"padding\": \"1\", \"strides\": \"[2, 2]\"",
       "hgr_conv2d_rows_6x16_s2s_k3", 1},
      {{1, 3, 224, 224}, {64, 3, 7, 7}, {1, 64, 112, 112}, "\"padding\": \"3\", \"strides\": \"[2, 2]\"",
       "hgr_conv2d_rows_6x16_s2s_k7", 3},
      {{1, 8, 31, 31}, {16, 8, 5, 5}, {1, 16, 14, 14}, "\"padding\": \"0\", \"strides\": \"[2, 2]\"",
       "hgr_conv2d_rows_6x16_s2s", 0},
      /* 7 x 7 outputs: blocks of 8 pixels of two rows (1 of 8 lanes wasted) */
      {{1, 512, 14, 14}, {512, 512, 3, 3}, {1, 512, 7, 7}, "\"padding\": \"1\", \"strides\": \"[2, 2]\"",
       "hgr_conv2d_rows_6x8x2_s2s_k3", 1},
      {{1, 8, 19, 19}, {16, 8, 5, 5}, {1, 16, 8, 8}, "\"padding\": \"0\", \"strides\": \"[2, 2]\"",
       "hgr_conv2d_rows_6x8x2_s2s", 0},
      /* 5 x 5 outputs (3 of 8 lanes wasted; once left to the tiled kernel) */
      {{1, 512, 10, 10}, {512, 512, 3, 3}, {1, 512, 5, 5}, "\"padding\": \"1\", \"strides\": \"[2, 2]\"",
       "hgr_conv2d_rows_6x8x2_s2s_k3", 1},
      /* dilated (the implicit GEMM, as before), or 1x1 (the GEMM): not this kernel */
      {{1, 8, 60, 60},
       {16, 8, 3, 3},
       {1, 16, 29, 29},
       "\"padding\": \"1\", \"strides\": \"[2, 2]\", \"dilation\": \"[2, 2]\"",
       "hgr_conv_gemm_", 1},
      {{1, 8, 60, 60}, {16, 8, 1, 1}, {1, 16, 30, 30}, "\"strides\": \"[2, 2]\"", "hgr_gemm_", 0},
  };
  for (size_t i = 0; i < COUNT(layers); ++i) {
    hgr_optest_t t;
    hgr__op_ctx_t ctx;
    plan_layer(layers[i].attrs, layers[i].x, layers[i].w, layers[i].y, &roomy, &t, &ctx);
    bool split = strstr(layers[i].kernel, "_s2s") != NULL;
    assert_int_equal(ctx.launch_count, split ? 2 : 1);
    const hgr__launch_plan_t* last = &ctx.launches[ctx.launch_count - 1];
    if (strncmp(last->kernel, layers[i].kernel, strlen(layers[i].kernel)))
      fail_msg("layer %zu planned %s, not %s", i, last->kernel, layers[i].kernel);
    if (split) {
      /* the split: a work-item per padded row of each plane; the node's scratch
       * holds the padded planes, their columns split by parity, and the tail */
      const hgr__launch_plan_t* first = &ctx.launches[0];
      assert_string_equal(first->kernel, "hgr_conv2d_s2_split");
      int64_t hp = layers[i].x[2] + 2 * layers[i].pad, wh = (layers[i].x[3] + 2 * layers[i].pad + 1) / 2;
      assert_int_equal(first->launch.work_dim, 2);
      assert_int_equal(first->launch.global[0], hp);
      assert_int_equal(first->launch.local[1], 8); /* 8 planes a group, whatever the batch and channels */
      assert_int_equal(first->launch.global[1], (uint64_t)(layers[i].x[0] * layers[i].x[1] + 7) / 8 * 8);
      assert_int_equal(ctx.scratch_bytes, (uint64_t)(layers[i].x[1] * hp * 2 * wh + 64) * sizeof(float));
    }
    if (i == 0) {
      const hgr__launch_t* launch = &last->launch;
      assert_int_equal(launch->work_dim, 3);
      assert_int_equal(launch->global[0], 28 * 2); /* 28 rows of 2 blocks */
      assert_int_equal(launch->global[1], 24);     /* 22 blocks of 6 channels, rounded up to local 8 */
      assert_int_equal(launch->local[1], 8);
      assert_int_equal(launch->global[2], 1);
    }
    if (i == 3) {
      const hgr__launch_t* launch = &last->launch;
      assert_int_equal(launch->global[0], 4);  /* 4 pairs of rows of 1 block */
      assert_int_equal(launch->global[1], 88); /* 86 blocks of 6 channels, rounded up to local 8 */
    }
    hgr__op_ctx_free(&ctx);
    hgr_optest_free(&t);
  }
}

/* The strided register-blocked kernel, the tiled one and the register-blocked ones
 * on the split copy are tuning candidates, under a key of their own, of every layer
 * they fit, which the rule takes to the split one with 6 x 16 blocks on a device of
 * narrower registers: resnet50's with 28 x 28 outputs
 * (which ran the implicit GEMM before), with 7 x 7 outputs (in blocks of two rows)
 * and with 5 x 5 (blocks wasting 3 of 8 lanes, once left to the tiled kernel). */
static void rows_s2_kernel_is_a_tuning_candidate(void** state) {
  (void)state;
  hgr__limits_t roomy = {1024, {1024, 1024, 1024}, 64 * 1024, 0};
  static const struct {
    int64_t x[4], w[4], y[4];
    const char* kernels[4]; /* prefixes, of the last launch */
    const char* key;
  } layers[] = {
      {{1, 128, 56, 56},
       {128, 128, 3, 3},
       {1, 128, 28, 28},
       {"hgr_conv2d_rows_6x16_s2_k3", "hgr_conv2d_tiled_", "hgr_conv2d_rows_6x16_s2s_k3",
        "hgr_conv2d_rows_8x32_s2s_k3"},
       "conv_rows_s2:1x128x56x56:k128x3x3:s2:p1,1,1,1"},
      {{1, 512, 14, 14},
       {512, 512, 3, 3},
       {1, 512, 7, 7},
       {"hgr_conv2d_rows_6x8x2_s2_k3", "hgr_conv2d_tiled_", "hgr_conv2d_rows_6x8x2_s2s_k3",
        "hgr_conv2d_rows_8x8x4_s2s_k3"},
       "conv_rows_s2:1x512x14x14:k512x3x3:s2:p1,1,1,1"},
      {{1, 512, 10, 10},
       {512, 512, 3, 3},
       {1, 512, 5, 5},
       {"hgr_conv2d_rows_6x8x2_s2_k3", "hgr_conv2d_tiled_", "hgr_conv2d_rows_6x8x2_s2s_k3",
        "hgr_conv2d_rows_8x8x4_s2s_k3"},
       "conv_rows_s2:1x512x10x10:k512x3x3:s2:p1,1,1,1"},
  };
  static const char* const tiles[] = {"rows_6x16_s2", "tiled", "rows_6x16_s2s", "rows_8x32_s2s"};
  for (size_t i = 0; i < COUNT(layers); ++i) {
    hgr_optest_t t;
    hgr_optest_init(&t, "conv2d", "\"padding\": \"1\", \"strides\": \"[2, 2]\"");
    hgr_optest_input(&t, "float32", 4, layers[i].x);
    hgr_optest_input(&t, "float32", 4, layers[i].w);
    hgr_optest_output(&t, "float32", 4, layers[i].y);
    char* json = hgr_optest_graph_json(&t);
    hgr_graph_t* graph = NULL;
    ASSERT_OK(hgr_graph_load_json(json, strlen(json), &graph));
    free(json);
    hgr__op_ctx_t ctx;
    ASSERT_OK(hgr__op_plan_tuned(hgr_allocator_system(), graph, t.input_count, NULL, &roomy, NULL, &ctx));
    assert_string_equal(ctx.tile.tile, tiles[2]); /* the rule's: the split copy */
    hgr__op_ctx_free(&ctx);
    for (uint32_t candidate = 0; candidate < 4; ++candidate) {
      hgr__tuning_t tuning = {NULL, NULL, HGR_TUNING_CANDIDATE, candidate};
      ASSERT_OK(hgr__op_plan_tuned(hgr_allocator_system(), graph, t.input_count, NULL, &roomy, &tuning, &ctx));
      const char* kernel = layers[i].kernels[candidate];
      const char* last = ctx.launches[ctx.launch_count - 1].kernel;
      if (strncmp(last, kernel, strlen(kernel)))
        fail_msg("layer %zu, candidate %u planned %s, not %s", i, candidate, last, kernel);
      assert_int_equal(ctx.launch_count, candidate >= 2 ? 2 : 1);
      assert_int_equal(ctx.tile.candidate_count, 4);
      assert_string_equal(ctx.tile.tile, tiles[candidate]);
      assert_string_equal(ctx.tile.key, layers[i].key);
      hgr__op_ctx_free(&ctx);
    }
    hgr_graph_release(graph);
    hgr_optest_free(&t);
  }
}

/* On a device whose registers hold 16 floats the rule takes the 8 x 32 blocks:
 * stride 1 (layers of 8 M multiply-adds and more) through the zero-padded copy (hgr_conv2d_pad: a work-item per padded row;
 * the scratch the padded planes and a tail of 32 floats; then a block of 32 grid
 * pixels x 8 output channels per work-item), stride 2 through the parity-split copy
 * in blocks of one, two or four output rows, whichever wastes the fewest lanes. */
static void wide_rows_kernels_plan_where_registers_hold_16_floats(void** state) {
  (void)state;
  hgr__limits_t wide = {1024, {1024, 1024, 1024}, 64 * 1024, 16};
  static const struct {
    int64_t x[4], w[4], y[4];
    const char* attrs;
    const char* kernel; /* of the last launch */
    int64_t pad;        /* on every side */
    size_t blocks;      /* NDRange dimension 0 */
  } layers[] = {
      /* grids of 13 x 16 + 14 and 23 x 28 + 24 pixels (padded rows of 16 and 28): 7 and
       * 21 blocks of 32 */
      {{2, 64, 14, 14}, {64, 64, 3, 3}, {2, 64, 14, 14}, "\"padding\": \"1\"", "hgr_conv2d_rows_8x32p_k3", 1, 7},
      {{1, 32, 24, 24}, {32, 32, 5, 5}, {1, 32, 24, 24}, "\"padding\": \"2\"", "hgr_conv2d_rows_8x32p", 2, 21},
      /* below 8 M multiply-adds a stride-1 layer keeps the 6 x 16 blocks (one launch) */
      {{1, 8, 12, 12}, {16, 8, 5, 5}, {1, 16, 12, 12}, "\"padding\": \"2\"", "hgr_conv2d_rows_6x16_k5", 2, 9},
      /* 28 x 28 outputs: rows of one block of 32 */
      {{1, 128, 56, 56}, {128, 128, 3, 3}, {1, 128, 28, 28}, "\"padding\": \"1\", \"strides\": \"[2, 2]\"",
       "hgr_conv2d_rows_8x32_s2s_k3", 1, 28},
      /* 14 x 14 and 112 x 112: two rows of 16 (blocks of 32 would waste 16 lanes of 128
       * at 112); 7 x 7: four rows of 8 */
      {{1, 256, 28, 28}, {256, 256, 3, 3}, {1, 256, 14, 14}, "\"padding\": \"1\", \"strides\": \"[2, 2]\"",
       "hgr_conv2d_rows_8x16x2_s2s_k3", 1, 7},
      {{1, 512, 14, 14}, {512, 512, 3, 3}, {1, 512, 7, 7}, "\"padding\": \"1\", \"strides\": \"[2, 2]\"",
       "hgr_conv2d_rows_8x8x4_s2s_k3", 1, 2},
      {{1, 3, 224, 224}, {64, 3, 7, 7}, {1, 64, 112, 112}, "\"padding\": \"3\", \"strides\": \"[2, 2]\"",
       "hgr_conv2d_rows_8x16x2_s2s", 3, 56 * 7},
  };
  for (size_t i = 0; i < COUNT(layers); ++i) {
    hgr_optest_t t;
    hgr__op_ctx_t ctx;
    plan_layer(layers[i].attrs, layers[i].x, layers[i].w, layers[i].y, &wide, &t, &ctx);
    if (!strncmp(layers[i].kernel, "hgr_conv2d_rows_6x16", 20)) {
      assert_int_equal(ctx.launch_count, 1);
      assert_string_equal(ctx.launches[0].kernel, layers[i].kernel);
      assert_int_equal(ctx.launches[0].launch.global[0], layers[i].blocks);
      hgr__op_ctx_free(&ctx);
      hgr_optest_free(&t);
      continue;
    }
    assert_int_equal(ctx.launch_count, 2);
    const hgr__launch_plan_t* first = &ctx.launches[0];
    const hgr__launch_plan_t* last = &ctx.launches[1];
    assert_string_equal(last->kernel, layers[i].kernel);
    bool strided = strstr(layers[i].kernel, "_s2s") != NULL;
    assert_string_equal(first->kernel, strided ? "hgr_conv2d_s2_split" : "hgr_conv2d_pad");
    int64_t hp = layers[i].x[2] + 2 * layers[i].pad, wp = layers[i].x[3] + 2 * layers[i].pad;
    int64_t planes = layers[i].x[0] * layers[i].x[1];
    assert_int_equal(first->launch.global[0], hp);
    assert_int_equal(first->launch.global[1], (uint64_t)(planes + 7) / 8 * 8);
    if (!strided) assert_int_equal(ctx.scratch_bytes, (uint64_t)(planes * hp * wp + 32) * sizeof(float));
    assert_int_equal(last->launch.work_dim, 3);
    assert_int_equal(last->launch.global[0], layers[i].blocks);
    /* blocks of 8 channels in groups of up to 8 */
    uint64_t blocks_k = (uint64_t)(layers[i].w[0] + 7) / 8, group = blocks_k < 8 ? blocks_k : 8;
    assert_int_equal(last->launch.local[1], group);
    assert_int_equal(last->launch.global[1], (blocks_k + group - 1) / group * group);
    assert_int_equal(last->launch.global[2], layers[i].x[0]);
    hgr__op_ctx_free(&ctx);
    hgr_optest_free(&t);
  }
}

/* ---- the fused max pool ------------------------------------------------------------------ */

/* conv2d with attr pool_size (a max pool of that window at that stride after the
 * epilogue), against the reference convolution and pool: the register-blocked
 * hgr_conv2d_rows_pool_6x16x2* for windows of [2, 2] and [2, 1] (3x3, 5x5 and other
 * kernels; pooled rows of 16 columns of the convolution and more, no multiple of 16
 * (the shifted last block), and fewer (one block, lanes unused); heights and widths of which the pool drops a row or a
 * column; padding on every side and none; blocks that read before x's start and past
 * its end; the bias on and off and every epilogue, leaky_relu's negative slope
 * included, whose max is not the slope of the max; rows narrower than 16), and
 * hgr_conv2d_direct_pool for the rest (stride 2, windows of [3, 3] and [1, 2]). */
static void pooled_convs_match_reference(void** state) {
  (void)state;
  static const struct {
    conv_case_t c;
    int64_t pool[2];
    epilogue_t e;
    const char* kernel;
  } cases[] = {
      {{{1, 3, 8, 32}, {7, 3, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 1, true), "1", true}, {2, 2}, {0, 0, 0, 0},
       "hgr_conv2d_rows_pool_6x16x2_k3"},
      {{{2, 4, 9, 21}, {6, 4, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 1, false), "1", false}, {2, 2},
       {HGR_REF_ACT_LEAKY_RELU, -0.5f, 0, 0}, "hgr_conv2d_rows_pool_6x16x2_k3"},
      {{{1, 5, 8, 17}, {9, 5, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 1, false), "1", true}, {2, 1},
       {HGR_REF_ACT_CLIP, 0, -0.5f, 0.5f}, "hgr_conv2d_rows_pool_6x16x2_k3"},
      {{{2, 3, 6, 20}, {5, 3, 5, 5}, P(1, 1, 2, 2, 2, 2, 1, 1, 1, false), "2", true}, {2, 2}, {0, 0, 0, 0},
       "hgr_conv2d_rows_pool_6x16x2_k5"},
      {{{1, 4, 7, 19}, {6, 4, 3, 5}, P(1, 1, 1, 2, 1, 2, 1, 1, 1, true), "[1, 2]", false}, {2, 1}, {0, 0, 0, 0},
       "hgr_conv2d_rows_pool_6x16x2"},
      {{{1, 2, 5, 18}, {3, 2, 3, 3}, P(1, 1, 0, 0, 0, 0, 1, 1, 1, false), "0", true}, {2, 2}, {0, 0, 0, 0},
       "hgr_conv2d_rows_pool_6x16x2_k3"},
      {{{2, 2, 2, 16}, {4, 2, 1, 3}, P(1, 1, 0, 1, 0, 1, 1, 1, 1, true), "[0, 1]", true}, {2, 2}, {0, 0, 0, 0},
       "hgr_conv2d_rows_pool_6x16x2"},
      {{{1, 3, 6, 24}, {8, 3, 3, 3}, P(1, 1, 2, 0, 1, 3, 1, 1, 1, false), "[2, 0, 1, 3]", true}, {2, 2},
       {HGR_REF_ACT_LEAKY_RELU, 0.1f, 0, 0}, "hgr_conv2d_rows_pool_6x16x2_k3"},
      {{{1, 3, 9, 13}, {5, 3, 3, 3}, P(2, 2, 1, 1, 1, 1, 1, 1, 1, true), "1", true}, {2, 2}, {0, 0, 0, 0},
       "hgr_conv2d_direct_pool"},
      {{{1, 4, 9, 20}, {6, 4, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 1, false), "1", true}, {3, 3},
       {HGR_REF_ACT_CLIP, 0, 0, 6}, "hgr_conv2d_direct_pool"},
      {{{1, 4, 6, 20}, {6, 4, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 1, true), "1", false}, {1, 2}, {0, 0, 0, 0},
       "hgr_conv2d_direct_pool"},
      {{{1, 3, 8, 10}, {5, 3, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 1, true), "1", true}, {2, 2}, {0, 0, 0, 0},
       "hgr_conv2d_rows_pool_6x16x2_k3"},
      {{{2, 7, 7, 7}, {8, 7, 3, 3}, P(1, 1, 1, 1, 1, 1, 1, 1, 1, false), "1", true}, {2, 1},
       {HGR_REF_ACT_LEAKY_RELU, 0.2f, 0, 0}, "hgr_conv2d_rows_pool_6x16x2_k3"},
  };
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 41);
  hgr__limits_t roomy = {1024, {1024, 1024, 1024}, 64 * 1024, 0};
  for (size_t i = 0; i < COUNT(cases); ++i) {
    memcpy(conv_pool, cases[i].pool, sizeof(conv_pool));
    hgr_optest_t t;
    double* bound;
    conv_setup(&t, &cases[i].c, &cases[i].e, &rng, &bound);
    hgr__op_ctx_t ctx;
    hgr_optest_plan(&t, &roomy, NULL, &ctx);
    if (ctx.launch_count != 1 || strcmp(ctx.launches[0].kernel, cases[i].kernel))
      fail_msg("case %zu planned %u launches, the first %s, not %s", i, ctx.launch_count, ctx.launches[0].kernel,
               cases[i].kernel);
    hgr__op_ctx_free(&ctx);
    conv_run_check(hgr_optest_device, &t, bound);
    free(bound);
    hgr_optest_free(&t);
  }
  conv_pool[0] = conv_pool[1] = 0;
}

/* ---- what the op rejects -------------------------------------------------------------- */

static void expect_error(const char* attrs, const int64_t* xshape, const int64_t* wshape, const int64_t* bshape,
                         const int64_t* yshape, const char* message) {
  hgr_optest_t t;
  hgr_optest_init(&t, "conv2d", attrs);
  hgr_optest_input(&t, "float32", 4, xshape);
  hgr_optest_input(&t, "float32", 4, wshape);
  if (bshape) hgr_optest_input(&t, "float32", 1, bshape);
  hgr_optest_output(&t, "float32", 4, yshape);
  uint32_t node = t.input_count;
  char prefix[64];
  snprintf(prefix, sizeof(prefix), "node %u 'conv2d_node' (conv2d): ", node);
  ASSERT_STATUS(hgr_optest_create(hgr_optest_instance, hgr_optest_device, &t), HGR_STATUS_INVALID_ARGUMENT, prefix,
                message);
  hgr_optest_free(&t);
}

static void bad_attrs_and_shapes_are_rejected(void** state) {
  (void)state;
  const int64_t x[4] = {1, 4, 8, 8}, w[4] = {6, 4, 3, 3}, y[4] = {1, 6, 8, 8};
  expect_error("\"padding\": \"1\", \"data_layout\": \"NHWC\"", x, w, NULL, y,
               "attr 'data_layout' = \"NHWC\" is not supported; hgr takes \"NCHW\"");
  expect_error("\"padding\": \"1\", \"kernel_layout\": \"HWIO\"", x, w, NULL, y, "attr 'kernel_layout' = \"HWIO\"");
  expect_error("\"padding\": \"1\", \"out_layout\": \"NHWC\"", x, w, NULL, y, "attr 'out_layout' = \"NHWC\"");
  expect_error("\"padding\": \"1\", \"out_dtype\": \"float16\"", x, w, NULL, y, "attr 'out_dtype' = \"float16\"");
  expect_error("\"padding\": \"1\", \"activation\": \"tanh\"", x, w, NULL, y, "attr 'activation' = \"tanh\"");
  expect_error("\"padding\": \"1\", \"activation\": \"clip\", \"a_min\": \"0\"", x, w, NULL, y,
               "attr 'a_max' is required with attr 'activation' = \"clip\"");
  expect_error("\"padding\": \"1\", \"activation\": \"clip\", \"a_min\": \"6\", \"a_max\": \"0\"", x, w, NULL, y,
               "attr 'a_min' = \"6\" and attr 'a_max' = \"0\" must satisfy a_min <= a_max");
  expect_error("\"padding\": \"1\", \"activation\": \"relu\", \"alpha\": \"0.1\"", x, w, NULL, y,
               "attr 'alpha' = \"0.1\" is given, but attr 'activation' = \"relu\" does not take it");
  expect_error("\"padding\": \"1\", \"activation\": \"leaky_relu\", \"alpha\": \"x\"", x, w, NULL, y,
               "attr 'alpha' = \"x\"");
  expect_error("\"padding\": \"1\", \"channels\": \"8\"", x, w, NULL, y,
               "attr 'channels' = \"8\" does not match the weight's output channels, 6");
  expect_error("\"padding\": \"1\", \"kernel_size\": \"[3, 5]\"", x, w, NULL, y,
               "attr 'kernel_size' = \"[3, 5]\" does not match the weight's kernel size, [3, 3]");
  expect_error("\"padding\": \"1\", \"groups\": \"3\"", x, w, NULL, y, "with groups = 3");
  expect_error("\"padding\": \"1\", \"groups\": \"2\"", x, w, NULL, y, "with groups = 2");
  expect_error("\"padding\": \"1\", \"groups\": \"0\"", x, w, NULL, y, "attr 'groups' = 0");
  expect_error("\"padding\": \"[1, 1, 1]\"", x, w, NULL, y,
               "attr 'padding' = \"[1, 1, 1]\" has 3 values; it takes 1, 2 or 4");
  expect_error("\"padding\": \"-1\"", x, w, NULL, y, "attr 'padding' = \"-1\" has -1");
  expect_error("\"padding\": \"1\", \"strides\": \"[0, 1]\"", x, w, NULL, y, "attr 'strides' = \"[0, 1]\" has 0");
  expect_error("\"padding\": \"1\", \"dilation\": \"[1, 2, 3]\"", x, w, NULL, y, "attr 'dilation'");
  expect_error("\"padding\": \"1\", \"strides\": \"2\"", x, w, NULL, y,
               "output 0 (entry 2) should be shaped [1, 6, 4, 4], the graph says [1, 6, 8, 8]");
  expect_error("", x, w, NULL, y, "output 0 (entry 2) should be shaped [1, 6, 6, 6], the graph says [1, 6, 8, 8]");
  expect_error("\"padding\": \"1\", \"bogus\": \"1\"", x, w, NULL, y, "unknown attr 'bogus'");
  expect_error("\"padding\": \"1\"", x, w, (const int64_t[]){5}, y, "input 2 (bias) (entry 2) should be shaped [6]");
  expect_error("", (const int64_t[]){1, 4, 2, 2}, w, NULL, (const int64_t[]){1, 6, 1, 1},
               "is smaller than the dilated kernel");
  expect_error("\"padding\": \"1\"", x, (const int64_t[]){6, 5, 3, 3}, NULL, y, "with groups = 1");
  expect_error("\"padding\": \"1\", \"pool_size\": \"[9, 2]\"", x, w, NULL, (const int64_t[]){1, 6, 0, 4},
               "attr 'pool_size' = \"[9, 2]\" is larger than the convolution's output [8, 8]");
  expect_error("\"padding\": \"1\", \"pool_size\": \"0\"", x, w, NULL, y, "attr 'pool_size' = \"0\" has 0");
  expect_error("\"padding\": \"1\", \"pool_size\": \"2\"", x, w, NULL, y,
               "output 0 (entry 2) should be shaped [1, 6, 4, 4], the graph says [1, 6, 8, 8]");
}

static void bad_ranks_are_rejected(void** state) {
  (void)state;
  hgr_optest_t t;
  hgr_optest_init(&t, "conv2d", NULL);
  hgr_optest_input(&t, "float32", 3, (int64_t[]){4, 8, 8});
  hgr_optest_input(&t, "float32", 4, (int64_t[]){6, 4, 3, 3});
  hgr_optest_output(&t, "float32", 4, (int64_t[]){1, 6, 6, 6});
  ASSERT_STATUS(hgr_optest_create(hgr_optest_instance, hgr_optest_device, &t), HGR_STATUS_INVALID_ARGUMENT,
                "node 2 'conv2d_node' (conv2d): input 0 (data, entry 0) is shaped [4, 8, 8]; it must have 4 "
                "dimensions");
  hgr_optest_free(&t);
}

int main(int argc, char** argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(padding_forms_match_reference),
      cmocka_unit_test(strides_match_reference),
      cmocka_unit_test(dilation_matches_reference),
      cmocka_unit_test(groups_and_depthwise_match_reference),
      cmocka_unit_test(depthwise_kernels_match_reference),
      cmocka_unit_test(depthwise3x3_kernels_match_reference),
      cmocka_unit_test(kernel_shapes_match_reference),
      cmocka_unit_test(bias_and_relu_match_reference),
      cmocka_unit_test(leaky_relu_and_clip_epilogues_match_reference),
      cmocka_unit_test(asymmetric_padding_with_dilation_matches_reference),
      cmocka_unit_test(sizes_of_one_and_odd_match_reference),
      cmocka_unit_test(large_layers_match_reference),
      cmocka_unit_test(pointwise_convs_match_reference),
      cmocka_unit_test(tiled_groups_match_reference),
      cmocka_unit_test(pointwise_convs_plan_the_gemm),
      cmocka_unit_test(windows_convs_match_reference),
      cmocka_unit_test(sigmoid_epilogues_match_reference),
      cmocka_unit_test(silu_and_hard_swish_epilogues_match_reference),
      cmocka_unit_test(leaky_relu_clip_epilogues_match_reference),
      cmocka_unit_test(implicit_gemm_matches_reference),
      cmocka_unit_test(narrow_groups_plan_the_implicit_gemm),
      cmocka_unit_test(strided_implicit_gemm_matches_reference),
      cmocka_unit_test(patch_convs_match_reference),
      cmocka_unit_test(patch_convs_plan_two_launches),
      cmocka_unit_test(strided_layers_plan_the_implicit_gemm_where_large),
      cmocka_unit_test(rows_kernel_matches_reference),
      cmocka_unit_test(pooled_convs_match_reference),
      cmocka_unit_test(rows_kernel_plans_where_it_fits),
      cmocka_unit_test(rows_kernel_is_a_tuning_candidate),
      cmocka_unit_test(rows_s2_kernel_matches_reference),
      cmocka_unit_test(rows_s2_two_row_kernel_matches_reference),
      cmocka_unit_test(rows_s2_kernel_plans_where_it_fits),
      cmocka_unit_test(rows_s2_kernel_is_a_tuning_candidate),
      cmocka_unit_test(wide_rows_kernels_plan_where_registers_hold_16_floats),
      cmocka_unit_test(tiles_follow_device_limits),
      cmocka_unit_test(groups_tile_when_wide_enough),
      cmocka_unit_test(small_device_limits_still_work),
      cmocka_unit_test(bad_attrs_and_shapes_are_rejected),
      cmocka_unit_test(bad_ranks_are_rejected),
      cmocka_unit_test(conv2d_transpose_matches_reference),
      cmocka_unit_test(transposed_convs_plan_the_gemm_and_the_gather),
      cmocka_unit_test(conv2d_transpose_rejects_bad_attrs_and_shapes),
  };
  return hgr_optest_main(argc, argv, "ops_conv", tests, sizeof(tests) / sizeof(tests[0]));
}
