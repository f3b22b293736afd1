/* The attention pass (runtime/passes/fuse_attention.c) on builder graphs: the block
 * in its forms (the heads' 4-D view or none, a scale by multiply, divide or none, a
 * mask or none, keys as rows or transposed, a GPT-2 export's causal where or none) becomes one attention node with the
 * right attrs and inputs, and its scale param leaves; near misses stay as they are
 * (a value read twice or a graph output inside, softmax over another axis, a scale
 * given at run time, a mask that widens the scores, values given transposed, a
 * where whose condition is not the causal triangle or whose fill would weigh); and
 * fused graphs against unfused ones on random data on each device given.
 *
 *   test_fuse_attention unit          the pass, no device
 *   test_fuse_attention run SPEC...   fused against unfused on each device */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"
#include "passes.h"
#include "pass_check.h"
#include "testlib.h"

static const hgr_dtype_t F32 = {HGR_DTYPE_FLOAT, 32, 1};

enum { B = 2, H = 3, G = B * H, M = 5, N = 7, D = 16 };

enum { SCALE_MULTIPLY, SCALE_DIVIDE, SCALE_NONE, SCALE_INPUT };

/* A GPT-2 export's causal mask: none, its lower triangle [1, 1, M, N] (kept where
 * n <= m + N - M) with finfo.min as the fill; near misses: one element off the
 * triangle, a fill of -1 (masked scores would still weigh). */
enum { CAUSAL_NONE, CAUSAL_TRIANGLE, CAUSAL_OFF_BY_ONE, CAUSAL_WEAK_FILL };

typedef struct block_form_t {
  bool view4d;        /* the scores reshaped to [B, H, M, N] around the softmax */
  int scale;          /* SCALE_* (SCALE_INPUT: a scale given at run time) */
  bool mask;          /* an additive mask [B, 1, 1, N] (view4d) or [G, 1, N] */
  bool keys_transposed; /* kᵀ [G, D, N] and transpose_b false */
  int causal;           /* CAUSAL_*: where(a bool param, scores, a fill param) after the scale */
  bool constant_mask;   /* the mask a param (a contrib Attention's causal mask) */
  /* near misses */
  bool scores_output;   /* the scores are a graph output too */
  bool softmax_axis2;   /* softmax over the queries */
  bool wide_mask;       /* a mask [2, G, M, N] that widens 3-D scores */
  bool values_transposed; /* vᵀ and transpose_b true on the second batch_matmul */
} block_form_t;

#define FORM(view4d_, scale_, mask_, keys_transposed_, ...) \
  {.view4d = (view4d_), .scale = (scale_), .mask = (mask_), .keys_transposed = (keys_transposed_), __VA_ARGS__}

static hgr_value_t op(hgr_builder_t* b, const char* name, const char* func, const hgr_value_t* in, uint32_t count,
                      hgr_attrs_t* attrs) {
  hgr_value_t out;
  ASSERT_OK(hgr_builder_add_op(b, name, func, in, count, attrs, 1, &out));
  hgr_attrs_release(attrs);
  return out;
}

static hgr_attrs_t* int_attr(const char* key, int64_t value) {
  hgr_attrs_t* attrs = NULL;
  ASSERT_OK(hgr_attrs_create(&attrs));
  ASSERT_OK(hgr_attrs_set_int(attrs, key, value));
  return attrs;
}

static hgr_attrs_t* shape_attr(const int64_t* shape, size_t ndim) {
  hgr_attrs_t* attrs = NULL;
  ASSERT_OK(hgr_attrs_create(&attrs));
  ASSERT_OK(hgr_attrs_set_ints(attrs, "newshape", shape, ndim));
  return attrs;
}

typedef struct block_graph_t {
  hgr_graph_t* graph;
  hgr_params_t* params;
} block_graph_t;

/* Inputs q, k, v [, mask] [, scale]; the block; its output. */
static block_graph_t block_graph(const block_form_t* form) {
  hgr_builder_t* b = NULL;
  ASSERT_OK(hgr_builder_create(NULL, &b));
  hgr_value_t q, k, v, mask, scale;
  ASSERT_OK(hgr_builder_add_input(b, "q", F32, (const int64_t[]){G, M, D}, 3, &q));
  ASSERT_OK(hgr_builder_add_input(b, "k", F32, form->keys_transposed ? (const int64_t[]){G, D, N}
                                                                      : (const int64_t[]){G, N, D}, 3, &k));
  ASSERT_OK(hgr_builder_add_input(b, "v", F32, form->values_transposed ? (const int64_t[]){G, D, N}
                                                                        : (const int64_t[]){G, N, D}, 3, &v));
  if (form->mask && form->constant_mask) { /* [1, 1, M, N] of 0 and -10000 */
    float values[M * N];
    for (int i = 0; i < M * N; ++i) values[i] = i % 3 ? 0.0f : -10000.0f;
    ASSERT_OK(hgr_builder_add_constant(b, "mask", F32, (const int64_t[]){1, 1, M, N}, 4, values, sizeof(values), &mask));
  } else if (form->mask) {
    if (form->wide_mask)
      ASSERT_OK(hgr_builder_add_input(b, "mask", F32, (const int64_t[]){2, G, M, N}, 4, &mask));
    else if (form->view4d)
      ASSERT_OK(hgr_builder_add_input(b, "mask", F32, (const int64_t[]){B, 1, 1, N}, 4, &mask));
    else
      ASSERT_OK(hgr_builder_add_input(b, "mask", F32, (const int64_t[]){G, 1, N}, 3, &mask));
  }
  if (form->scale == SCALE_INPUT) {
    ASSERT_OK(hgr_builder_add_input(b, "scale", F32, (const int64_t[]){1}, 1, &scale));
  } else if (form->scale != SCALE_NONE) {
    float value = form->scale == SCALE_DIVIDE ? 4.0f : 0.25f;
    ASSERT_OK(hgr_builder_add_constant(b, "scale", F32, NULL, 0, &value, sizeof(value), &scale));
  }
  hgr_value_t s = op(b, "scores", "batch_matmul", (hgr_value_t[]){q, k}, 2,
                     int_attr("transpose_b", !form->keys_transposed));
  if (form->scores_output) ASSERT_OK(hgr_builder_mark_output(b, s));
  if (form->view4d) s = op(b, "heads", "reshape", &s, 1, shape_attr((const int64_t[]){B, H, M, N}, 4));
  if (form->scale != SCALE_NONE)
    s = op(b, "scaled", form->scale == SCALE_DIVIDE ? "divide" : "multiply", (hgr_value_t[]){s, scale}, 2, NULL);
  if (form->causal != CAUSAL_NONE) {
    uint8_t keep[M * N];
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) keep[m * N + n] = n <= m + N - M;
    if (form->causal == CAUSAL_OFF_BY_ONE) keep[2 * N + 1] = 0;
    float fill = form->causal == CAUSAL_WEAK_FILL ? -1.0f : -3.40282347e38f;
    hgr_value_t cond, fill_value;
    /* [1, 1, M, N] for the heads' view, [1, M, N] for 3-D scores */
    ASSERT_OK(hgr_builder_add_constant(b, "causal", (hgr_dtype_t){HGR_DTYPE_UINT, 1, 1},
                                       (const int64_t[]){1, 1, M, N} + !form->view4d, form->view4d ? 4 : 3, keep,
                                       sizeof(keep), &cond));
    ASSERT_OK(hgr_builder_add_constant(b, "fill", F32, NULL, 0, &fill, sizeof(fill), &fill_value));
    s = op(b, "kept", "where", (hgr_value_t[]){cond, s, fill_value}, 3, NULL);
  }
  if (form->mask) s = op(b, "masked", "add", (hgr_value_t[]){mask, s}, 2, NULL);
  s = op(b, "probabilities", "softmax", &s, 1, int_attr("axis", form->softmax_axis2 ? 2 : -1));
  if (form->view4d || form->wide_mask)
    s = op(b, "matrices", "reshape", &s, 1, shape_attr((const int64_t[]){G * (form->wide_mask ? 2 : 1), M, N}, 3));
  if (form->wide_mask) { /* only the first half, to keep the second batch_matmul's G */
    hgr_attrs_t* attrs = NULL;
    ASSERT_OK(hgr_attrs_create(&attrs));
    ASSERT_OK(hgr_attrs_set_ints(attrs, "begin", (const int64_t[]){0, 0, 0}, 3));
    ASSERT_OK(hgr_attrs_set_ints(attrs, "end", (const int64_t[]){G, M, N}, 3));
    s = op(b, "half", "strided_slice", &s, 1, attrs);
  }
  hgr_value_t out = op(b, "context", "batch_matmul", (hgr_value_t[]){s, v}, 2,
                       int_attr("transpose_b", form->values_transposed));
  ASSERT_OK(hgr_builder_mark_output(b, out));
  block_graph_t g;
  ASSERT_OK(hgr_builder_finish(b, &g.graph, &g.params));
  hgr_builder_release(b);
  return g;
}

static void block_graph_release(block_graph_t* g) {
  hgr_graph_release(g->graph);
  hgr_params_release(g->params);
}

static const hgr__node_t* node_named(const hgr_graph_t* graph, const char* name) {
  for (uint32_t n = 0; n < graph->node_count; ++n)
    if (!strcmp(graph->nodes[n].name, name)) return &graph->nodes[n];
  return NULL;
}

static uint32_t count_ops(const hgr_graph_t* graph) {
  uint32_t count = 0;
  for (uint32_t n = 0; n < graph->node_count; ++n) count += graph->nodes[n].is_op;
  return count;
}

/* Runs the attention pass alone over the form's graph: the fused graph (the
 * caller's graph, retained, when nothing fused) and the report. */
static hgr_graph_t* fuse(block_graph_t* g, hgr_passes_report_t* report) {
  hgr_passes_options_t options;
  hgr_passes_options_init(&options);
  options.conv_epilogue = false;
  options.elementwise = false;
  hgr_graph_t* fused = NULL;
  ASSERT_OK(hgr_passes_apply(g->graph, g->params, &options, &fused, report));
  return fused;
}

static void each_form_of_the_block_becomes_one_node(void** state) {
  (void)state;
  static const block_form_t forms[] = {
      FORM(true, SCALE_MULTIPLY, true, false),  FORM(true, SCALE_DIVIDE, true, true), FORM(false, SCALE_MULTIPLY, true, true),
      FORM(false, SCALE_NONE, false, false),    FORM(true, SCALE_NONE, true, false),  FORM(false, SCALE_DIVIDE, false, true),
      FORM(true, SCALE_DIVIDE, true, false, .causal = CAUSAL_TRIANGLE),
      FORM(true, SCALE_NONE, false, true, .causal = CAUSAL_TRIANGLE),
      FORM(true, SCALE_MULTIPLY, true, false, .constant_mask = true),
  };
  for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); ++i) {
    const block_form_t* form = &forms[i];
    block_graph_t g = block_graph(form);
    hgr_passes_report_t report;
    hgr_graph_t* fused = fuse(&g, &report);
    assert_int_equal(report.attentions, 1);
    assert_int_equal(report.attention_fused, count_ops(g.graph));
    assert_int_equal(count_ops(fused), 1);
    const hgr__node_t* node = node_named(fused, "context");
    assert_non_null(node);
    assert_string_equal(node->func_name, "attention");
    assert_int_equal(node->input_count, form->mask ? 4 : 3);
    if (form->constant_mask) { /* the fused node's own input stays, param and all */
      size_t index;
      ASSERT_OK(hgr_params_find(g.params, "mask", &index));
    }
    static const char* const names[] = {"q", "k", "v", "mask"};
    for (uint32_t k = 0; k < node->input_count; ++k)
      assert_string_equal(fused->nodes[node->inputs[k].node_id].name, names[k]);
    assert_string_equal(hgr__node_attr(node, "scale"), form->scale == SCALE_NONE ? "1" : "0.25");
    assert_string_equal(hgr__node_attr(node, "transpose_k"), form->keys_transposed ? "0" : "1");
    assert_string_equal(hgr__node_attr(node, "heads"), form->view4d ? "3" : "6");
    if (form->causal) assert_string_equal(hgr__node_attr(node, "causal"), "1");
    else assert_null(hgr__node_attr(node, "causal"));
    /* the params only the block read (the scale, the causal mask and its fill) left */
    static const char* const gone[] = {"scale", "causal", "fill"};
    for (int p = 0; p < 3; ++p) {
      size_t index;
      hgr_status_t missing = hgr_params_find(g.params, gone[p], &index);
      assert_non_null(missing);
      hgr_status_free(missing);
      assert_null(node_named(fused, gone[p]));
    }
    hgr_graph_release(fused);
    block_graph_release(&g);
  }
}

static void near_misses_stay_as_they_are(void** state) {
  (void)state;
  static const block_form_t misses[] = {
      FORM(true, SCALE_MULTIPLY, true, false, .scores_output = true),
      FORM(true, SCALE_MULTIPLY, true, false, .softmax_axis2 = true),
      FORM(true, SCALE_INPUT, true, false),
      FORM(false, SCALE_NONE, true, false, .wide_mask = true),
      FORM(true, SCALE_MULTIPLY, true, false, .values_transposed = true),
      FORM(true, SCALE_DIVIDE, true, false, .causal = CAUSAL_OFF_BY_ONE),
      FORM(true, SCALE_DIVIDE, true, false, .causal = CAUSAL_WEAK_FILL),
  };
  for (size_t i = 0; i < sizeof(misses) / sizeof(misses[0]); ++i) {
    block_graph_t g = block_graph(&misses[i]);
    hgr_passes_report_t report;
    hgr_graph_t* fused = fuse(&g, &report);
    if (report.attentions) fail_msg("near miss %zu fused", i);
    assert_ptr_equal(fused, g.graph);
    hgr_graph_release(fused);
    block_graph_release(&g);
  }
  /* without params nothing tells the scale: the block with one stays */
  hgr_graph_t* fused = NULL;
  hgr_passes_report_t report;
  block_graph_t plain = block_graph(&(block_form_t)FORM(true, SCALE_MULTIPLY, true, false, .softmax_axis2 = false));
  ASSERT_OK(hgr_passes_apply(plain.graph, NULL, NULL, &fused, &report));
  assert_int_equal(report.attentions, 0);
  hgr_graph_release(fused);
  block_graph_release(&plain);
}

/* ---- fused against unfused on devices ------------------------------------------------ */

static hgr_instance_t* instance;
static const char* const* specs;
static int spec_count;

/* Runs graph once on spec with params and its inputs from `inputs` (one array per
 * graph input, in order); returns output 0 (malloc'd). */
static float* run(const char* spec, const hgr_graph_t* graph, const hgr_params_t* params, float* const* inputs) {
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  const hgr_device_binding_t binding = {0, spec};
  options.bindings = &binding;
  options.binding_count = 1;
  options.params = params;
  options.program_cache.mode = HGR_PROGRAM_CACHE_OFF;
  hgr_executor_t* executor = NULL;
  ASSERT_OK(hgr_executor_create(instance, (hgr_graph_t*)graph, &options, &executor));
  hgr_tensor_info_t info;
  static const char* const names[4] = {"q", "k", "v", "mask"};
  for (uint32_t i = 0;; ++i) {
    hgr_status_t status = hgr_graph_input_info(graph, i, &info);
    if (status) { /* no more inputs */
      hgr_status_free(status);
      break;
    }
    for (int k = 0; k < 4; ++k)
      if (!strcmp(info.name, names[k])) ASSERT_OK(hgr_executor_set_input(executor, i, inputs[k], info.bytes));
  }
  ASSERT_OK(hgr_executor_run(executor));
  ASSERT_OK(hgr_executor_wait(executor));
  ASSERT_OK(hgr_graph_output_info(graph, 0, &info));
  float* result = malloc(info.bytes + 1);
  ASSERT_OK(hgr_executor_get_output(executor, 0, result, info.bytes));
  hgr_executor_release(executor);
  return result;
}

static void fused_blocks_match_the_unfused_ones(void** state) {
  (void)state;
  static const block_form_t forms[] = {
      FORM(true, SCALE_MULTIPLY, true, false), FORM(true, SCALE_DIVIDE, true, true), FORM(false, SCALE_MULTIPLY, true, true),
      FORM(false, SCALE_NONE, false, false), FORM(true, SCALE_DIVIDE, true, false, .causal = CAUSAL_TRIANGLE),
      FORM(false, SCALE_MULTIPLY, false, true, .causal = CAUSAL_TRIANGLE),
      FORM(true, SCALE_DIVIDE, true, true, .constant_mask = true),
  };
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 47);
  float* inputs[4];
  const size_t counts[4] = {G * M * D, G * N * D, G * N * D, G * N};
  for (int i = 0; i < 4; ++i) {
    inputs[i] = malloc(counts[i] * sizeof(float));
    for (size_t e = 0; e < counts[i]; ++e) inputs[i][e] = hgr_test_rng_float(&rng, -2, 2);
  }
  for (size_t e = 0; e < counts[3]; e += 3) inputs[3][e] = -10000.0f; /* padded keys */
  for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); ++i) {
    block_graph_t g = block_graph(&forms[i]);
    hgr_params_t* params = hgr_test_params_copy(g.params); /* the pass edits the params: fuse a copy */
    hgr_graph_t* fused = NULL;
    hgr_passes_report_t report;
    ASSERT_OK(hgr_passes_apply(g.graph, params, NULL, &fused, &report));
    assert_int_equal(report.attentions, 1);
    for (int d = 0; d < spec_count; ++d) {
      float* want = run(specs[d], g.graph, g.params, inputs);
      float* got = run(specs[d], fused, params, inputs);
      for (size_t e = 0; e < (size_t)G * M * D; ++e)
        if (!(fabsf(got[e] - want[e]) <= 1e-5f * fabsf(want[e]) + 1e-5f))
          fail_msg("%s: form %zu: element %zu: fused %.9g, unfused %.9g", specs[d], i, e, got[e], want[e]);
      free(want);
      free(got);
    }
    hgr_graph_release(fused);
    hgr_params_release(params);
    block_graph_release(&g);
  }
  for (int i = 0; i < 4; ++i) free(inputs[i]);
}

static int set_up_instance(void** state) {
  (void)state;
  instance = hgr_test_instance_or_exit();
  hgr_test_require_devices(instance, specs, (size_t)spec_count);
  return 0;
}

static int tear_down_instance(void** state) {
  (void)state;
  hgr_instance_release(instance);
  return 0;
}

int main(int argc, char** argv) {
  const struct CMUnitTest unit[] = {
      cmocka_unit_test(each_form_of_the_block_becomes_one_node),
      cmocka_unit_test(near_misses_stay_as_they_are),
  };
  const struct CMUnitTest run_tests[] = {
      cmocka_unit_test(fused_blocks_match_the_unfused_ones),
  };
  if (argc == 2 && !strcmp(argv[1], "unit")) return cmocka_run_group_tests_name("attention pass", unit, NULL, NULL);
  if (argc >= 3 && !strcmp(argv[1], "run")) {
    specs = (const char* const*)argv + 2;
    spec_count = argc - 2;
    return cmocka_run_group_tests_name("attention pass on devices", run_tests, set_up_instance, tear_down_instance);
  }
  fprintf(stderr, "usage: test_fuse_attention unit | run SPEC...\n");
  return 2;
}
