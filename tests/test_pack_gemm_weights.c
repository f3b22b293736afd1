/* The GEMM weight packing pass (runtime/passes/pack_gemm_weights.c) on builder
 * graphs: a matmul's float32 param weights [K, N] (or [N, K] with transpose_b) with
 * N >= 64 become a param [ceil(N / 32), K, 32] in panels of 32 columns, zero-padded,
 * read with attrs b_panel and units; matmuls reading one param one way share its
 * pack, and the param leaves when nothing else reads it; near misses stay (fewer
 * columns, weights that are no param, batch_matmul, an attr the pass does not know);
 * the pass is switched, counted and logged, and refuses a placed graph; and packed
 * graphs against unpacked ones on random data on each device given (every layout,
 * partial last panels, one row, the GEMM epilogue).
 *
 *   test_pack_gemm_weights unit          the pass, no device
 *   test_pack_gemm_weights run SPEC...   packed against unpacked on each device */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"
#include "pass_check.h"
#include "passes.h"
#include "testlib.h"

static const hgr_dtype_t F32 = {HGR_DTYPE_FLOAT, 32, 1};

/* One matmul of the test graphs: its weights' name, extents and layout. */
typedef struct gemm_form_t {
  const char* weight; /* a param's name; matmuls naming the same one share it */
  int64_t k, n;
  bool transpose_b;
  const char* extra_attr; /* an attr besides the transposes, "key=value", or NULL */
} gemm_form_t;

typedef struct gemm_graph_t {
  hgr_graph_t* graph;
  hgr_params_t* params;
} gemm_graph_t;

static void gemm_graph_release(gemm_graph_t* g) {
  hgr_graph_release(g->graph);
  hgr_params_release(g->params);
}

/* x [rows, forms[0].k], then for each form a matmul "mm<i>" of the value before it
 * (x for the first; each k is the n before it) and its weights, the last one the
 * output. With weight_input the first form's weights are a graph input, not a param;
 * with weight_read_too a sigmoid of the first weights is a second output. */
static gemm_graph_t gemm_graph(const gemm_form_t* forms, size_t count, int64_t rows, bool weight_input,
                               bool weight_read_too, uint64_t seed) {
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, seed);
  hgr_builder_t* builder = NULL;
  ASSERT_OK(hgr_builder_create(NULL, &builder));
  hgr_value_t v, weights[8], w_input = {0, 0};
  ASSERT_OK(hgr_builder_add_input(builder, "x", F32, (const int64_t[]){rows, forms[0].k}, 2, &v));
  if (weight_input) {
    const int64_t* shape = forms[0].transpose_b ? (const int64_t[]){forms[0].n, forms[0].k}
                                                : (const int64_t[]){forms[0].k, forms[0].n};
    ASSERT_OK(hgr_builder_add_input(builder, forms[0].weight, F32, shape, 2, &w_input));
  }
  for (size_t i = 0; i < count; ++i) {
    size_t same = 0;
    while (same < i && strcmp(forms[same].weight, forms[i].weight)) ++same;
    if (i == 0 && weight_input) weights[i] = w_input;
    else if (same < i) weights[i] = weights[same];
    else
      weights[i] = hgr_test_random_constant(builder, forms[i].weight,
                                            forms[i].transpose_b ? (const int64_t[]){forms[i].n, forms[i].k}
                                                                 : (const int64_t[]){forms[i].k, forms[i].n},
                                            2, &rng);
    hgr_attrs_t* attrs = NULL;
    ASSERT_OK(hgr_attrs_create(&attrs));
    ASSERT_OK(hgr_attrs_set_string(attrs, "transpose_b", forms[i].transpose_b ? "1" : "False"));
    if (forms[i].extra_attr) {
      char key[32];
      const char* eq = strchr(forms[i].extra_attr, '=');
      snprintf(key, sizeof(key), "%.*s", (int)(eq - forms[i].extra_attr), forms[i].extra_attr);
      ASSERT_OK(hgr_attrs_set_string(attrs, key, eq + 1));
    }
    char name[32];
    snprintf(name, sizeof(name), "mm%zu", i);
    ASSERT_OK(hgr_builder_add_op(builder, name, "matmul", (hgr_value_t[]){v, weights[i]}, 2, attrs, 1, &v));
    hgr_attrs_release(attrs);
  }
  ASSERT_OK(hgr_builder_mark_output(builder, v));
  if (weight_read_too) {
    hgr_value_t s;
    ASSERT_OK(hgr_builder_add_op(builder, "sig", "sigmoid", &weights[0], 1, NULL, 1, &s));
    ASSERT_OK(hgr_builder_mark_output(builder, s));
  }
  gemm_graph_t g = {NULL, NULL};
  ASSERT_OK(hgr_builder_finish(builder, &g.graph, &g.params));
  hgr_builder_release(builder);
  return g;
}

static const hgr__node_t* node_named(const hgr_graph_t* graph, const char* name) {
  for (uint32_t n = 0; n < graph->node_count; ++n)
    if (!strcmp(graph->nodes[n].name, name)) return &graph->nodes[n];
  fail_msg("no node '%s'", name);
  return NULL;
}

static const float* param_data(const hgr_params_t* params, const char* name, hgr_tensor_info_t* info) {
  size_t index;
  const void* data = NULL;
  ASSERT_OK(hgr_params_find(params, name, &index));
  ASSERT_OK(hgr_params_get(params, index, info, &data));
  return data;
}

/* Packed weights hold B [k, n] in panels: packed[q][l][c] = B[l][q * 32 + c], zeros
 * past n; B[l][j] = w[l * n + j], or w[j * k + l] transposed. */
static void expect_panels(const float* w, bool transposed, int64_t k, int64_t n, const float* packed,
                          const hgr_tensor_info_t* info) {
  int64_t panels = (n + 31) / 32;
  assert_int_equal(info->ndim, 3);
  assert_int_equal(info->shape[0], panels);
  assert_int_equal(info->shape[1], k);
  assert_int_equal(info->shape[2], 32);
  for (int64_t q = 0; q < panels; ++q)
    for (int64_t l = 0; l < k; ++l)
      for (int64_t c = 0; c < 32; ++c) {
        int64_t j = q * 32 + c;
        float want = j >= n ? 0.0f : transposed ? w[j * k + l] : w[l * n + j];
        if (packed[(q * k + l) * 32 + c] != want)
          fail_msg("panel %lld, row %lld, column %lld: %g, expected %g", (long long)q, (long long)l, (long long)c,
                   packed[(q * k + l) * 32 + c], want);
      }
}

static void weights_are_packed_in_panels_and_the_originals_leave(void** state) {
  (void)state;
  /* [48, 100] (4 panels, the last of 4 columns), then [70, 100] transposed (3, the last of 6) */
  static const gemm_form_t forms[] = {{"w", 48, 100, false, NULL}, {"wt", 100, 70, true, NULL}};
  gemm_graph_t g = gemm_graph(forms, 2, 5, false, false, 1);
  hgr_params_t* before = hgr_test_params_copy(g.params);
  hgr_passes_report_t report;
  hgr_graph_t* packed = NULL;
  ASSERT_OK(hgr_passes_apply(g.graph, g.params, NULL, &packed, &report));
  assert_int_equal(report.packed_weights, 2);
  assert_int_equal(report.packed_weight_readers, 2);
  for (int i = 0; i < 2; ++i) {
    const hgr__node_t* mm = node_named(packed, i ? "mm1" : "mm0");
    assert_string_equal(mm->func_name, "matmul");
    assert_string_equal(hgr__node_attr(mm, "b_panel"), "32");
    assert_string_equal(hgr__node_attr(mm, "units"), i ? "70" : "100");
    assert_null(hgr__node_attr(mm, "transpose_b"));
    assert_string_equal(packed->nodes[mm->inputs[1].node_id].name, i ? "wt.panels" : "w.panels");
  }
  /* the originals leave the graph and the params; the packs hold their values */
  assert_false(hgr_test_has_param(g.params, "w"));
  assert_false(hgr_test_has_param(g.params, "wt"));
  hgr_tensor_info_t info, packed_info;
  expect_panels(param_data(before, "w", &info), false, 48, 100, param_data(g.params, "w.panels", &packed_info),
                &packed_info);
  expect_panels(param_data(before, "wt", &info), true, 100, 70, param_data(g.params, "wt.panels", &packed_info),
                &packed_info);
  for (uint32_t n = 0; n < packed->node_count; ++n) {
    assert_string_not_equal(packed->nodes[n].name, "w");
    assert_string_not_equal(packed->nodes[n].name, "wt");
  }
  hgr_graph_release(packed);
  hgr_params_release(before);
  gemm_graph_release(&g);
}

/* Two matmuls reading one param one way share its pack; read a second way they get
 * another; a param something else reads too stays beside its pack. */
static void shared_weights_share_a_pack_and_stay_while_read_elsewhere(void** state) {
  (void)state;
  static const gemm_form_t forms[] = {{"w", 64, 64, false, NULL}, {"w", 64, 64, false, NULL},
                                      {"w", 64, 64, true, NULL}};
  gemm_graph_t g = gemm_graph(forms, 3, 3, false, false, 2);
  hgr_passes_report_t report;
  hgr_graph_t* packed = NULL;
  ASSERT_OK(hgr_passes_apply(g.graph, g.params, NULL, &packed, &report));
  assert_int_equal(report.packed_weights, 2);
  assert_int_equal(report.packed_weight_readers, 3);
  assert_int_equal(node_named(packed, "mm0")->inputs[1].node_id, node_named(packed, "mm1")->inputs[1].node_id);
  assert_string_equal(packed->nodes[node_named(packed, "mm2")->inputs[1].node_id].name, "w.panels#2");
  assert_false(hgr_test_has_param(g.params, "w"));
  hgr_graph_release(packed);
  gemm_graph_release(&g);

  g = gemm_graph(forms, 1, 3, false, true, 3);
  ASSERT_OK(hgr_passes_apply(g.graph, g.params, NULL, &packed, &report));
  assert_int_equal(report.packed_weights, 1);
  assert_true(hgr_test_has_param(g.params, "w"));
  assert_true(hgr_test_has_param(g.params, "w.panels"));
  assert_string_equal(packed->nodes[node_named(packed, "sig")->inputs[0].node_id].name, "w");
  hgr_graph_release(packed);
  gemm_graph_release(&g);
}

static void near_misses_stay_as_they_are(void** state) {
  (void)state;
  /* fewer than 64 columns; weights that are a graph input, not a param */
  static const gemm_form_t narrow[] = {{"w", 40, 63, false, NULL}};
  static const gemm_form_t wide[] = {{"w", 40, 64, false, NULL}};
  struct {
    const gemm_form_t* forms;
    bool weight_input;
  } cases[] = {{narrow, false}, {wide, true}};
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); ++c) {
    gemm_graph_t g = gemm_graph(cases[c].forms, 1, 4, cases[c].weight_input, false, 10 + c);
    hgr_passes_report_t report;
    hgr_graph_t* packed = NULL;
    ASSERT_OK(hgr_passes_apply(g.graph, g.params, NULL, &packed, &report));
    assert_int_equal(report.packed_weights, 0);
    assert_ptr_equal(packed, g.graph);
    hgr_graph_release(packed);
    gemm_graph_release(&g);
  }
  /* a packed matmul (attr b_panel, weights [panels, k, 32]) is packed once */
  static const gemm_form_t forms[] = {{"w", 40, 64, false, NULL}};
  gemm_graph_t g = gemm_graph(forms, 1, 4, false, false, 12);
  hgr_passes_report_t report;
  hgr_graph_t *packed = NULL, *again = NULL;
  ASSERT_OK(hgr_passes_apply(g.graph, g.params, NULL, &packed, &report));
  assert_int_equal(report.packed_weights, 1);
  ASSERT_OK(hgr_passes_apply(packed, g.params, NULL, &again, &report));
  assert_int_equal(report.packed_weights, 0);
  assert_ptr_equal(again, packed);
  hgr_graph_release(again);
  hgr_graph_release(packed);
  gemm_graph_release(&g);
}

static void collect_line(void* user, const char* line) {
  char* lines = user;
  size_t used = strlen(lines);
  snprintf(lines + used, 1024 - used, "%s\n", line);
}

static void the_pass_is_switched_counted_and_logged(void** state) {
  (void)state;
  static const gemm_form_t forms[] = {{"w", 16, 96, false, NULL}};
  gemm_graph_t g = gemm_graph(forms, 1, 2, false, false, 20);
  hgr_passes_options_t options;
  hgr_passes_options_init(&options);
  assert_true(options.gemm_pack);
  char lines[1024] = "";
  options.log = collect_line;
  options.log_user = lines;
  hgr_passes_report_t report;
  hgr_graph_t* packed = NULL;
  hgr_params_t* params = hgr_test_params_copy(g.params);
  ASSERT_OK(hgr_passes_apply(g.graph, params, &options, &packed, &report));
  assert_string_equal(lines, "matmul 'mm0' reads 'w' in panels of 32 columns ('w.panels')\n");
  hgr_passes_count_t counts[HGR_PASSES_COUNT_MAX];
  size_t count = hgr_passes_report_counts(&report, counts);
  assert_int_equal(count, 10);
  assert_string_equal(counts[5].key, "packed_weights");
  assert_string_equal(counts[5].label, "packed GEMM weights");
  assert_int_equal(counts[5].made, 1);
  assert_int_equal(counts[5].replaced, 1);
  hgr_graph_release(packed);
  hgr_params_release(params);
  options.gemm_pack = false;
  ASSERT_OK(hgr_passes_apply(g.graph, g.params, &options, &packed, &report));
  assert_int_equal(report.packed_weights, 0);
  assert_ptr_equal(packed, g.graph);
  assert_true(hgr_test_has_param(g.params, "w"));
  hgr_graph_release(packed);
  gemm_graph_release(&g);
}

static void a_placed_graph_is_refused(void** state) {
  (void)state;
  static const gemm_form_t forms[] = {{"w", 16, 96, false, NULL}};
  gemm_graph_t g = gemm_graph(forms, 1, 2, false, false, 30);
  g.graph->has_device_index = true;
  hgr_graph_t* packed = NULL;
  hgr_params_t* made = NULL;
  ASSERT_STATUS(hgr__pack_gemm_weights(g.graph, g.params, NULL, &packed, &made, NULL),
                HGR_STATUS_FAILED_PRECONDITION, "placed", "before placement");
  assert_null(packed);
  assert_null(made);
  g.graph->has_device_index = false;
  gemm_graph_release(&g);
}

/* ---- packed against unpacked on devices ---------------------------------------------- */

static hgr_instance_t* instance;
static const char* const* specs;
static int spec_count;

/* Each chain packed (all passes) and not (no passes) on every device, output 0
 * compared: the same products, summed in another order where the layout makes the
 * plan pick another tile, within 1e-5 of the largest value. */
static void packed_graphs_match_the_unpacked_ones(void** state) {
  (void)state;
  static const gemm_form_t chain[] = {{"a", 40, 100, false, NULL}, {"b", 100, 129, true, NULL},
                                      {"c", 129, 64, false, NULL}, {"d", 64, 96, true, "activation=gelu"},
                                      {"e", 96, 70, false, "transpose_a=0"}};
  static const int64_t rows[] = {1, 7, 33};
  for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); ++r) {
    gemm_graph_t g = gemm_graph(chain, 5, rows[r], false, false, 40 + r);
    hgr_params_t* params = hgr_test_params_copy(g.params);
    hgr_passes_report_t report;
    hgr_graph_t* packed = NULL;
    ASSERT_OK(hgr_passes_apply(g.graph, params, NULL, &packed, &report));
    assert_int_equal(report.packed_weights, 5);
    hgr_tensor_info_t in, out;
    ASSERT_OK(hgr_graph_input_info(g.graph, 0, &in));
    ASSERT_OK(hgr_graph_output_info(g.graph, 0, &out));
    size_t count = (size_t)in.bytes / sizeof(float), outputs = (size_t)out.bytes / sizeof(float);
    float* x = malloc(in.bytes);
    hgr_test_rng_t rng;
    hgr_test_rng_seed(&rng, 99);
    for (size_t i = 0; i < count; ++i) x[i] = hgr_test_rng_float(&rng, -1, 1);
    for (int d = 0; d < spec_count; ++d) {
      float* want = hgr_test_run_graph(instance, specs[d], g.graph, g.params, x);
      float* got = hgr_test_run_graph(instance, specs[d], packed, params, x);
      float scale = 0; /* of the chain's values (sums of products cancel to small ones) */
      for (size_t i = 0; i < outputs; ++i) scale = fmaxf(scale, fabsf(want[i]));
      for (size_t i = 0; i < outputs; ++i)
        if (!(fabsf(got[i] - want[i]) <= 1e-5f * scale))
          fail_msg("%lld rows on %s: element %zu: packed %.9g, unpacked %.9g", (long long)rows[r], specs[d], i,
                   got[i], want[i]);
      free(want);
      free(got);
    }
    free(x);
    hgr_graph_release(packed);
    hgr_params_release(params);
    gemm_graph_release(&g);
  }
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
      cmocka_unit_test(weights_are_packed_in_panels_and_the_originals_leave),
      cmocka_unit_test(shared_weights_share_a_pack_and_stay_while_read_elsewhere),
      cmocka_unit_test(near_misses_stay_as_they_are),
      cmocka_unit_test(the_pass_is_switched_counted_and_logged),
      cmocka_unit_test(a_placed_graph_is_refused),
  };
  const struct CMUnitTest run_tests[] = {
      cmocka_unit_test(packed_graphs_match_the_unpacked_ones),
  };
  if (argc == 2 && !strcmp(argv[1], "unit"))
    return cmocka_run_group_tests_name("gemm weight packing", unit, NULL, NULL);
  if (argc >= 3 && !strcmp(argv[1], "run")) {
    specs = (const char* const*)argv + 2;
    spec_count = argc - 2;
    return cmocka_run_group_tests_name("gemm weight packing on devices", run_tests, set_up_instance,
                                       tear_down_instance);
  }
  fprintf(stderr, "usage: test_pack_gemm_weights unit | run SPEC...\n");
  return 2;
}
