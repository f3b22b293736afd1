/* attention against a plain-C reference (tests/ref_attention.c) on random data
 * (argument: a device spec): every unrolled head size and the general kernel, both
 * layouts of k, masks of every broadcast form, causal, shapes that leave a part of
 * the last work-group or key block, output layouts (attrs out_shape and out_axes).
 * Oclgrind simulates every work-item: small ones. */
#include <stdio.h>
#include <string.h>

#include "ops.h"
#include "optest.h"
#include "ref_attention.h"
#include "ref_layout.h"

typedef struct attention_case_t {
  int64_t g, m, n, dk, dv, heads;
  double scale;
  bool transpose_k, causal;
  int32_t mask_ndim;      /* 0: no mask */
  int64_t mask_shape[4];  /* broadcasting to [G / heads, heads, M, N] */
} attention_case_t;

/* An output layout (attrs out_shape and out_axes): the output [G, M, dv] viewed as
 * shape (ndim dims) and stored as that view transposed by axes. */
typedef struct out_view_t {
  int32_t ndim;
  int64_t shape[4];
  int32_t axes[4];
} out_view_t;

/* Checks case c, its output stored through view when not NULL, with each of the op's
 * kernels (its tile candidates: a row per work-item, vectors across the keys, the
 * staged GEMM + softmax + GEMM through the scratch, the rows' scores in private
 * memory; a candidate that does not fit gives way to the rule's). */
static void check_attention_with(hgr_test_rng_t* rng, const attention_case_t* c, const out_view_t* view,
                                 uint32_t candidate) {
  char attrs[320];
  snprintf(attrs, sizeof(attrs), "\"scale\": \"%.9g\", \"transpose_k\": \"%d\", \"heads\": \"%lld\", \"causal\": \"%d\"",
           c->scale, c->transpose_k, (long long)c->heads, c->causal);
  for (int32_t d = 0; view && d < view->ndim; ++d) {
    size_t length = strlen(attrs);
    snprintf(attrs + length, sizeof(attrs) - length, "%s%lld%s", d ? ", " : ", \"out_shape\": \"[",
             (long long)view->shape[d], d + 1 < view->ndim ? "" : "]\"");
  }
  for (int32_t d = 0; view && d < view->ndim; ++d) {
    size_t length = strlen(attrs);
    snprintf(attrs + length, sizeof(attrs) - length, "%s%d%s", d ? ", " : ", \"out_axes\": \"[", (int)view->axes[d],
             d + 1 < view->ndim ? "" : "]\"");
  }
  hgr_optest_t t;
  hgr_optest_init(&t, "attention", attrs);
  float* q = hgr_optest_input(&t, "float32", 3, (int64_t[]){c->g, c->m, c->dk});
  float* k = hgr_optest_input(&t, "float32", 3,
                              c->transpose_k ? (int64_t[]){c->g, c->n, c->dk} : (int64_t[]){c->g, c->dk, c->n});
  float* v = hgr_optest_input(&t, "float32", 3, (int64_t[]){c->g, c->n, c->dv});
  float* mask = NULL;
  int64_t ms[4] = {0, 0, 0, 0};
  if (c->mask_ndim) {
    mask = hgr_optest_input(&t, "float32", c->mask_ndim, c->mask_shape);
    int64_t stride = 1;
    for (int32_t d = 3; d >= 0; --d) {
      int32_t md = d - (4 - c->mask_ndim);
      int64_t extent = md >= 0 ? c->mask_shape[md] : 1;
      ms[d] = extent == 1 ? 0 : stride;
      stride *= extent;
    }
  }
  for (uint32_t i = 0; i < t.input_count; ++i) hgr_optest_fill(&t.inputs[i], rng, -2, 2);
  if (mask) /* a padding mask's large negatives among small values */
    for (uint64_t i = 0; i < t.inputs[3].count; i += 3) mask[i] = -10000.0f;
  if (!view) {
    float* out = hgr_optest_output(&t, "float32", 3, (int64_t[]){c->g, c->m, c->dv});
    hgr_ref_attention(q, k, v, mask, ms, out, c->g, c->m, c->n, c->dk, c->dv, c->heads, c->scale, c->transpose_k,
                      c->causal);
  } else {
    /* the reference's [G, M, dv], reshaped and transposed on the host */
    uint64_t count = (uint64_t)(c->g * c->m * c->dv);
    float* result = malloc((count ? count : 1) * sizeof(float));
    assert_non_null(result);
    hgr_ref_attention(q, k, v, mask, ms, result, c->g, c->m, c->n, c->dk, c->dv, c->heads, c->scale, c->transpose_k,
                      c->causal);
    int64_t out_shape[4], view_count = 1;
    for (int32_t d = 0; d < view->ndim; ++d) {
      out_shape[d] = view->shape[view->axes[d]];
      view_count *= view->shape[d];
    }
    assert_int_equal(view_count, count);
    float* out = hgr_optest_output(&t, "float32", view->ndim, out_shape);
    ref_transpose(result, view->shape, view->ndim, view->axes, out);
    free(result);
  }
  hgr_optest_tolerance(&t, 2e-5, 2e-6);
  t.force_candidate = true;
  t.candidate = candidate;
  hgr_optest_check(hgr_optest_instance, hgr_optest_device, &t);
  hgr_optest_free(&t);
}

static void check_attention(hgr_test_rng_t* rng, const attention_case_t* c) {
  for (uint32_t candidate = 0; candidate < 4; ++candidate) check_attention_with(rng, c, NULL, candidate);
}

static void check_attention_view(hgr_test_rng_t* rng, const attention_case_t* c, const out_view_t* view) {
  for (uint32_t candidate = 0; candidate < 4; ++candidate) check_attention_with(rng, c, view, candidate);
}

static void attention_matches_reference(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 47);
  bool sim = hgr_optest_is_simulator(hgr_optest_device);
  const attention_case_t cases[] = {
      /* each unrolled head size, keys in whole blocks and not, rows past a group */
      {2, 5, 16, 16, 16, 1, 0.25, true, false, 0, {0}},
      {3, 17, 21, 32, 32, 3, 0.17677669, true, false, 0, {0}},
      {1, 9, 33, 64, 64, 1, 0.125, false, false, 0, {0}},
      {2, 3, 7, 128, 128, 2, 0.088, true, false, 0, {0}},
      /* the general kernel: head sizes that differ or are not unrolled */
      {2, 4, 6, 8, 12, 1, 0.5, true, false, 0, {0}},
      {4, 7, 19, 24, 24, 2, 0.2, false, false, 0, {0}},
      {1, 2, 3, 1, 1, 1, 1.0, true, false, 0, {0}},
      /* masks: padding [B, 1, 1, N], causal-like [1, 1, M, N], per matrix [G, M, N],
       * per head [H, 1, N], a row [N] */
      {6, 11, 11, 16, 16, 3, 0.25, true, false, 4, {2, 1, 1, 11}},
      {4, 8, 12, 32, 32, 2, 0.17677669, false, false, 4, {1, 1, 8, 12}},
      {3, 5, 9, 16, 16, 3, 0.25, true, false, 3, {3, 5, 9}},
      {4, 6, 17, 16, 16, 2, 0.25, true, false, 3, {2, 1, 17}},
      {2, 4, 20, 8, 8, 1, 1.0, true, false, 1, {20}},
      /* causal: as many keys as queries, and the queries the last of more keys */
      {2, 19, 19, 16, 16, 1, 0.25, true, true, 0, {0}},
      {2, 5, 23, 32, 32, 2, 0.17677669, false, true, 4, {1, 1, 1, 23}},
      /* one query row (a decoder's step) */
      {4, 1, 40, 32, 32, 4, 0.17677669, true, false, 4, {1, 1, 1, 40}},
      /* nothing to compute: no matrices, no rows */
      {0, 3, 4, 16, 16, 1, 1.0, true, false, 0, {0}},
      {2, 0, 4, 16, 16, 1, 1.0, true, false, 0, {0}},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) check_attention(&rng, &cases[i]);
  if (!sim) { /* an encoder's size: 12 heads of 32 over 128 and 512 positions, padded */
    check_attention(&rng, &(attention_case_t){24, 128, 128, 32, 32, 12, 0.17677669, true, false, 4, {2, 1, 1, 128}});
    check_attention(&rng, &(attention_case_t){12, 512, 512, 32, 32, 12, 0.17677669, false, false, 4, {1, 1, 1, 512}});
    check_attention(&rng, &(attention_case_t){12, 200, 200, 64, 64, 12, 0.125, true, true, 0, {0}});
    /* past the private kernel's 512 keys (the rule's kernel in its place), and at them;
     * on llvmpipe both take the row kernel past its loop limit (staged in its place) */
    check_attention(&rng, &(attention_case_t){1, 20, 600, 64, 64, 1, 0.125, false, false, 4, {1, 1, 1, 600}});
    check_attention(&rng, &(attention_case_t){2, 19, 512, 128, 128, 1, 0.088, true, true, 0, {0}});
  }
}

/* With attrs out_shape and out_axes, each kernel writes its rows of dv floats through
 * the layout: [G, M, dv] as [B, H, M, dv] transposed to [B, M, H, dv] (the heads
 * joined, as the transpose after attention in exports does), B = G / heads. Unrolled
 * head sizes and the general kernel's, rows past a work-group (16 rows) and a
 * work-item's rows, a mask and causal; also runs of two rows (the view's last dim 2
 * dv), a 3-D view [M, G, dv] and an empty output. */
static void attention_out_layout_matches_reference(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 48);
  check_attention_view(&rng, &(attention_case_t){4, 5, 16, 16, 16, 2, 0.25, true, false, 0, {0}},
                       &(out_view_t){4, {2, 2, 5, 16}, {0, 2, 1, 3}});
  check_attention_view(&rng, &(attention_case_t){6, 19, 21, 32, 32, 3, 0.17677669, false, false, 0, {0}},
                       &(out_view_t){4, {2, 3, 19, 32}, {0, 2, 1, 3}});
  check_attention_view(&rng, &(attention_case_t){4, 17, 9, 24, 24, 2, 0.2, true, false, 4, {2, 1, 1, 9}},
                       &(out_view_t){4, {2, 2, 17, 24}, {0, 2, 1, 3}});
  check_attention_view(&rng, &(attention_case_t){2, 7, 9, 8, 12, 2, 0.5, true, true, 0, {0}},
                       &(out_view_t){4, {1, 2, 7, 12}, {0, 2, 1, 3}});
  check_attention_view(&rng, &(attention_case_t){4, 6, 11, 16, 16, 2, 0.25, true, false, 0, {0}},
                       &(out_view_t){4, {2, 2, 3, 32}, {0, 2, 1, 3}});
  check_attention_view(&rng, &(attention_case_t){3, 9, 33, 64, 64, 1, 0.125, false, false, 0, {0}},
                       &(out_view_t){3, {3, 9, 64}, {1, 0, 2}});
  /* no rows: nothing stored */
  check_attention_view(&rng, &(attention_case_t){2, 0, 4, 16, 16, 1, 1.0, true, false, 0, {0}},
                       &(out_view_t){4, {2, 1, 0, 16}, {0, 2, 1, 3}});
  if (!hgr_optest_is_simulator(hgr_optest_device)) /* an encoder's: 12 heads of 32 over 128 positions */
    check_attention_view(&rng,
                         &(attention_case_t){24, 128, 128, 32, 32, 12, 0.17677669, true, false, 4, {2, 1, 1, 128}},
                         &(out_view_t){4, {2, 12, 128, 32}, {0, 2, 1, 3}});
}

#define ASSERT_REJECTED(t, ...)                                                                   \
  ASSERT_STATUS(hgr_optest_create(hgr_optest_instance, hgr_optest_device, (t)), HGR_STATUS_INVALID_ARGUMENT, \
                __VA_ARGS__)

/* Each candidate, asked for, is what the node's tile choice says it took, the staged
 * one too (its GEMMs plan their tiles by the GEMM's rule, not by the candidate's
 * index among the GEMM's tiles), so that `hgr tune` times all four. */
static void attention_candidates_report_their_tile(void** state) {
  (void)state;
  hgr__limits_t roomy = {1024, {1024, 1024, 1024}, 64 * 1024, 16};
  static const char* const tiles[] = {"rows", "vectors", "staged", "private"};
  hgr_optest_t t;
  hgr_optest_init(&t, "attention", "\"transpose_k\": \"1\"");
  hgr_optest_input(&t, "float32", 3, (int64_t[]){2, 16, 32});
  hgr_optest_input(&t, "float32", 3, (int64_t[]){2, 16, 32});
  hgr_optest_input(&t, "float32", 3, (int64_t[]){2, 16, 32});
  hgr_optest_output(&t, "float32", 3, (int64_t[]){2, 16, 32});
  for (uint32_t candidate = 0; candidate < 4; ++candidate) {
    hgr__tuning_t tuning = {NULL, NULL, HGR_TUNING_CANDIDATE, candidate};
    hgr__op_ctx_t ctx;
    hgr_optest_plan(&t, &roomy, &tuning, &ctx);
    assert_int_equal(ctx.tile.source, HGR_TILE_CANDIDATE);
    assert_string_equal(ctx.tile.tile, tiles[candidate]);
    assert_int_equal(ctx.tile.candidate_count, 4);
    assert_int_equal(ctx.launch_count, candidate == 2 ? 3 : candidate == 0 ? 1 : 2);
    hgr__op_ctx_free(&ctx);
  }
  hgr_optest_free(&t);
}

static void attention_rejects_what_does_not_agree(void** state) {
  (void)state;
  hgr_optest_t t;
  hgr_optest_init(&t, "attention", NULL);
  hgr_optest_input(&t, "float32", 3, (int64_t[]){2, 4, 8});
  hgr_optest_input(&t, "float32", 3, (int64_t[]){2, 5, 6});
  hgr_optest_input(&t, "float32", 3, (int64_t[]){2, 5, 8});
  hgr_optest_output(&t, "float32", 3, (int64_t[]){2, 4, 8});
  ASSERT_REJECTED(&t, "node 3 'attention_node' (attention): q [2, 4, 8], k [2, 5, 6] (transpose_k) and v [2, 5, 8] "
                      "do not agree");
  hgr_optest_free(&t);
  hgr_optest_init(&t, "attention", "\"heads\": \"3\"");
  hgr_optest_input(&t, "float32", 3, (int64_t[]){4, 4, 8});
  hgr_optest_input(&t, "float32", 3, (int64_t[]){4, 5, 8});
  hgr_optest_input(&t, "float32", 3, (int64_t[]){4, 5, 8});
  hgr_optest_output(&t, "float32", 3, (int64_t[]){4, 4, 8});
  ASSERT_REJECTED(&t, "attr 'heads' = 3 must be at least 1 and divide the 4 matrices");
  hgr_optest_free(&t);
  hgr_optest_init(&t, "attention", "\"heads\": \"2\"");
  hgr_optest_input(&t, "float32", 3, (int64_t[]){4, 4, 8});
  hgr_optest_input(&t, "float32", 3, (int64_t[]){4, 5, 8});
  hgr_optest_input(&t, "float32", 3, (int64_t[]){4, 5, 8});
  hgr_optest_input(&t, "float32", 4, (int64_t[]){2, 2, 4, 4});
  hgr_optest_output(&t, "float32", 3, (int64_t[]){4, 4, 8});
  ASSERT_REJECTED(&t, "input 3 'mask' is shaped [2, 2, 4, 4]; it must broadcast to the scores [2, 2, 4, 5]");
  hgr_optest_free(&t);
  hgr_optest_init(&t, "attention", NULL);
  hgr_optest_input(&t, "float32", 3, (int64_t[]){1, 4, 200});
  hgr_optest_input(&t, "float32", 3, (int64_t[]){1, 5, 200});
  hgr_optest_input(&t, "float32", 3, (int64_t[]){1, 5, 8});
  hgr_optest_output(&t, "float32", 3, (int64_t[]){1, 4, 8});
  ASSERT_REJECTED(&t, "head sizes dk 200 and dv 8: attention takes up to 128");
  hgr_optest_free(&t);
  hgr_optest_init(&t, "attention", NULL);
  hgr_optest_input(&t, "float32", 4, (int64_t[]){1, 1, 4, 8});
  hgr_optest_input(&t, "float32", 3, (int64_t[]){1, 5, 8});
  hgr_optest_input(&t, "float32", 3, (int64_t[]){1, 5, 8});
  hgr_optest_output(&t, "float32", 3, (int64_t[]){1, 4, 8});
  ASSERT_REJECTED(&t, "input 0 'q' is shaped [1, 1, 4, 8]; attention takes rank 3");
  hgr_optest_free(&t);
  hgr_optest_init(&t, "attention", "\"scale\": \"nan\"");
  hgr_optest_input(&t, "float32", 3, (int64_t[]){1, 4, 8});
  hgr_optest_input(&t, "float32", 3, (int64_t[]){1, 5, 8});
  hgr_optest_input(&t, "float32", 3, (int64_t[]){1, 5, 8});
  hgr_optest_output(&t, "float32", 3, (int64_t[]){1, 4, 8});
  ASSERT_REJECTED(&t, "attr 'scale'");
  hgr_optest_free(&t);
  /* output layouts the kernels cannot store a row of dv floats into as one run: the
   * last axis moved, a last dim that is not a multiple of dv; and one attr alone */
  static const struct {
    const char* attrs;
    const char* expected;
  } layouts[] = {
      {"\"out_shape\": \"[2, 4, 8]\", \"out_axes\": \"[0, 2, 1]\"",
       "attrs 'out_shape' = \"[2, 4, 8]\" and 'out_axes' = \"[0, 2, 1]\" must keep the last axis last and make it a "
       "multiple of dv 8"},
      {"\"out_shape\": \"[2, 8, 4]\", \"out_axes\": \"[0, 1, 2]\"",
       "attrs 'out_shape' = \"[2, 8, 4]\" and 'out_axes' = \"[0, 1, 2]\" must keep the last axis last"},
      {"\"out_shape\": \"[2, 2, 2, 12]\", \"out_axes\": \"[0, 2, 1, 3]\"",
       "attrs 'out_shape' = \"[2, 2, 2, 12]\" and 'out_axes' = \"[0, 2, 1, 3]\": the shape must hold the result's 64 "
       "elements"},
      {"\"out_axes\": \"[0, 2, 1]\"", "attrs 'out_shape' = \"\" and 'out_axes' = \"[0, 2, 1]\" go together"},
  };
  for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); ++i) {
    hgr_optest_init(&t, "attention", layouts[i].attrs);
    hgr_optest_input(&t, "float32", 3, (int64_t[]){2, 4, 8});
    hgr_optest_input(&t, "float32", 3, (int64_t[]){2, 5, 8});
    hgr_optest_input(&t, "float32", 3, (int64_t[]){2, 5, 8});
    hgr_optest_output(&t, "float32", 3, (int64_t[]){2, 4, 8});
    ASSERT_REJECTED(&t, "node 3 'attention_node' (attention): ", layouts[i].expected);
    hgr_optest_free(&t);
  }
}

int main(int argc, char** argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(attention_matches_reference),
      cmocka_unit_test(attention_out_layout_matches_reference),
      cmocka_unit_test(attention_candidates_report_their_tile),
      cmocka_unit_test(attention_rejects_what_does_not_agree),
  };
  return hgr_optest_main(argc, argv, "ops_attention", tests, sizeof(tests) / sizeof(tests[0]));
}
