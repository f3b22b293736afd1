/* The skip layer norm pass (runtime/passes/fuse_skip_norm.c) on builder graphs: the
 * residual add before a layer_norm becomes its skip input (either operand order);
 * where the sum is read again after the layer_norm or is a graph output, the fused
 * layer_norm gives it as output 1 and those read that; near misses stay (an operand
 * that broadcasts, the sum read before the layer_norm, a layer_norm that has a skip
 * already); the pass is switched, counted and logged; and fused graphs against
 * unfused ones on random data on each device given, every output.
 *
 *   test_fuse_skip_norm unit          the pass, no device
 *   test_fuse_skip_norm run SPEC...   fused against unfused on each device */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"
#include "passes.h"
#include "pass_check.h"
#include "testlib.h"

static const hgr_dtype_t F32 = {HGR_DTYPE_FLOAT, 32, 1};

enum { ROWS = 6, WIDTH = 40 };

typedef struct residual_form_t {
  bool sublayer_first;  /* add(sublayer, x) rather than add(x, sublayer) */
  bool sum_read_twice;  /* the sum read by a sigmoid too, after the layer_norm */
  bool sum_output;      /* the sum a graph output too */
  /* near misses */
  bool broadcast;       /* the residual a param [WIDTH], not x */
  bool sum_read_first;  /* the sum read by a sigmoid before the layer_norm */
} residual_form_t;

typedef struct residual_graph_t {
  hgr_graph_t* graph;
  hgr_params_t* params;
} residual_graph_t;

static hgr_value_t op(hgr_builder_t* builder, const char* name, const char* func, const hgr_value_t* inputs,
                      uint32_t count) {
  hgr_value_t out;
  ASSERT_OK(hgr_builder_add_op(builder, name, func, inputs, count, NULL, 1, &out));
  return out;
}

/* x [ROWS, WIDTH]; "sublayer" = tanh(x); "sum" = x + sublayer; "norm" = layer_norm(sum,
 * gamma, beta), output 0; "other" = sigmoid(sum), output 1 (sum_read_twice: made after
 * norm; sum_read_first: before), or sum as output 1 (sum_output). */
static residual_graph_t residual_graph(const residual_form_t* form, uint64_t seed) {
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, seed);
  hgr_builder_t* builder = NULL;
  ASSERT_OK(hgr_builder_create(NULL, &builder));
  hgr_value_t x;
  ASSERT_OK(hgr_builder_add_input(builder, "x", F32, (const int64_t[]){ROWS, WIDTH}, 2, &x));
  hgr_value_t sublayer = op(builder, "sublayer", "tanh", &x, 1);
  hgr_value_t residual = form->broadcast ? hgr_test_random_constant(builder, "r", (const int64_t[]){WIDTH}, 1, &rng) : x;
  hgr_value_t pair[2] = {residual, sublayer};
  if (form->sublayer_first) pair[0] = sublayer, pair[1] = residual;
  hgr_value_t sum = op(builder, "sum", "add", pair, 2);
  hgr_value_t other = {0};
  if (form->sum_read_first) other = op(builder, "other", "sigmoid", &sum, 1);
  hgr_value_t norm_in[3] = {sum, hgr_test_random_constant(builder, "gamma", (const int64_t[]){WIDTH}, 1, &rng),
                            hgr_test_random_constant(builder, "beta", (const int64_t[]){WIDTH}, 1, &rng)};
  hgr_value_t norm = op(builder, "norm", "layer_norm", norm_in, 3);
  ASSERT_OK(hgr_builder_mark_output(builder, norm));
  if (form->sum_read_twice) other = op(builder, "other", "sigmoid", &sum, 1);
  if (form->sum_read_twice || form->sum_read_first) ASSERT_OK(hgr_builder_mark_output(builder, other));
  if (form->sum_output) ASSERT_OK(hgr_builder_mark_output(builder, sum));
  residual_graph_t g;
  ASSERT_OK(hgr_builder_finish(builder, &g.graph, &g.params));
  hgr_builder_release(builder);
  return g;
}

static void residual_graph_release(residual_graph_t* g) {
  hgr_graph_release(g->graph);
  hgr_params_release(g->params);
}

static const hgr__node_t* node_named(const hgr_graph_t* graph, const char* name) {
  for (uint32_t n = 0; n < graph->node_count; ++n)
    if (!strcmp(graph->nodes[n].name, name)) return &graph->nodes[n];
  return NULL;
}

static void collect_line(void* user, const char* line) {
  char* lines = user;
  size_t used = strlen(lines);
  snprintf(lines + used, 1024 - used, "%s\n", line);
}

static void residual_adds_become_skip_inputs(void** state) {
  (void)state;
  for (int order = 0; order < 2; ++order) {
    residual_graph_t g = residual_graph(&(residual_form_t){.sublayer_first = order == 1}, 10 + (uint64_t)order);
    hgr_passes_options_t options;
    hgr_passes_options_init(&options);
    assert_true(options.skip_layer_norm);
    char lines[1024] = "";
    options.log = collect_line;
    options.log_user = lines;
    hgr_passes_report_t report;
    hgr_graph_t* fused = NULL;
    ASSERT_OK(hgr_passes_apply(g.graph, g.params, &options, &fused, &report));
    assert_int_equal(report.skip_layer_norms, 1);
    assert_int_equal(report.skip_layer_norm_fused, 1);
    assert_int_equal(report.elementwise_groups, 0); /* the add is gone before elementwise fusion */
    assert_null(node_named(fused, "sum"));
    const hgr__node_t* norm = node_named(fused, "norm");
    assert_non_null(norm);
    assert_string_equal(norm->func_name, "layer_norm");
    assert_int_equal(norm->input_count, 4);
    assert_string_equal(fused->nodes[norm->inputs[0].node_id].name, order ? "sublayer" : "x");
    assert_string_equal(fused->nodes[norm->inputs[3].node_id].name, order ? "x" : "sublayer");
    assert_string_equal(lines, "layer_norm 'norm' <- 2 nodes: 'sum', 'norm'\n");
    hgr_passes_count_t counts[HGR_PASSES_COUNT_MAX];
    size_t count = hgr_passes_report_counts(&report, counts);
    assert_int_equal(count, 10);
    assert_string_equal(counts[8].key, "skip_layer_norms");
    assert_string_equal(counts[8].label, "skip layer norms");
    assert_int_equal(counts[8].made, 1);
    assert_string_equal(counts[9].key, "elementwise_groups");
    /* a second run finds nothing: the layer_norm has its skip */
    hgr_graph_t* twice = NULL;
    ASSERT_OK(hgr__fuse_skip_norm(fused, NULL, &twice, NULL));
    assert_ptr_equal(twice, fused);
    hgr_graph_release(twice);
    hgr_graph_release(fused);
    /* switched off, elementwise fusion takes the add with the tanh */
    options.log = NULL;
    options.skip_layer_norm = false;
    ASSERT_OK(hgr_passes_apply(g.graph, g.params, &options, &fused, &report));
    assert_int_equal(report.skip_layer_norms, 0);
    assert_string_equal(node_named(fused, "sum")->func_name, "fused_elementwise");
    hgr_graph_release(fused);
    residual_graph_release(&g);
  }
}

/* The sum read again after the layer_norm, or a graph output: the fused layer_norm
 * gives it as output 1, and the sigmoid, or the graph's output 1, reads that. */
static void residual_streams_become_output_1(void** state) {
  (void)state;
  for (int form = 0; form < 2; ++form) {
    residual_graph_t g =
        residual_graph(&(residual_form_t){.sum_read_twice = form == 0, .sum_output = form == 1}, 20 + (uint64_t)form);
    hgr_graph_t* fused = NULL;
    hgr__fuse_report_t report;
    ASSERT_OK(hgr__fuse_skip_norm(g.graph, NULL, &fused, &report));
    assert_int_equal(report.groups, 1);
    assert_null(node_named(fused, "sum"));
    const hgr__node_t* norm = node_named(fused, "norm");
    assert_non_null(norm);
    assert_int_equal(norm->input_count, 4);
    assert_int_equal(norm->num_outputs, 2);
    uint32_t norm_id = (uint32_t)(norm - fused->nodes);
    hgr__entry_ref_t second = fused->heads[1];
    if (form == 0) { /* the sigmoid reads output 1 */
      const hgr__node_t* other = node_named(fused, "other");
      assert_non_null(other);
      assert_int_equal(other->inputs[0].node_id, norm_id);
      assert_int_equal(other->inputs[0].index, 1);
      assert_int_equal(second.node_id, (uint32_t)(other - fused->nodes));
    } else { /* the graph's output 1 is the layer_norm's output 1 */
      assert_int_equal(second.node_id, norm_id);
      assert_int_equal(second.index, 1);
    }
    assert_int_equal(fused->heads[0].node_id, norm_id);
    assert_int_equal(fused->heads[0].index, 0);
    hgr_graph_release(fused);
    residual_graph_release(&g);
  }
}

static void near_misses_stay_as_they_are(void** state) {
  (void)state;
  static const residual_form_t misses[] = {
      {.broadcast = true},
      {.sum_read_first = true},
  };
  for (size_t i = 0; i < sizeof(misses) / sizeof(misses[0]); ++i) {
    residual_graph_t g = residual_graph(&misses[i], 30 + i);
    hgr_graph_t* fused = NULL;
    hgr__fuse_report_t report;
    ASSERT_OK(hgr__fuse_skip_norm(g.graph, NULL, &fused, &report));
    if (report.groups) fail_msg("near miss %zu fused", i);
    assert_ptr_equal(fused, g.graph);
    hgr_graph_release(fused);
    residual_graph_release(&g);
  }
  residual_graph_t g = residual_graph(&(residual_form_t){0}, 40);
  g.graph->has_device_index = true;
  hgr_graph_t* fused = NULL;
  ASSERT_STATUS(hgr__fuse_skip_norm(g.graph, NULL, &fused, NULL), HGR_STATUS_FAILED_PRECONDITION, "placed");
  assert_null(fused);
  g.graph->has_device_index = false;
  residual_graph_release(&g);
}

/* ---- fused against unfused on devices ------------------------------------------------ */

static hgr_instance_t* instance;
static const char* const* specs;
static int spec_count;

/* Both operand orders, and the sum read again or a graph output, fused and with the
 * pass off, on every device, every output: the kernel adds the skip as the add did,
 * so the results agree to the normalization's rounding. */
static void fused_graphs_match_the_unfused_ones(void** state) {
  (void)state;
  static const residual_form_t forms[] = {
      {0}, {.sublayer_first = true}, {.sum_read_twice = true}, {.sublayer_first = true, .sum_output = true}};
  for (int order = 0; order < 4; ++order) {
    const residual_form_t* form = &forms[order];
    uint32_t outputs = form->sum_read_twice || form->sum_output ? 2 : 1;
    residual_graph_t g = residual_graph(form, 70 + (uint64_t)order);
    hgr_passes_options_t options;
    hgr_passes_options_init(&options);
    hgr_graph_t *fused = NULL, *plain = NULL;
    ASSERT_OK(hgr_passes_apply(g.graph, g.params, &options, &fused, NULL));
    options.skip_layer_norm = false;
    ASSERT_OK(hgr_passes_apply(g.graph, g.params, &options, &plain, NULL));
    float x[ROWS * WIDTH];
    hgr_test_rng_t rng;
    hgr_test_rng_seed(&rng, 99);
    for (size_t i = 0; i < ROWS * WIDTH; ++i) x[i] = hgr_test_rng_float(&rng, -3, 3);
    for (int d = 0; d < spec_count; ++d)
      for (uint32_t k = 0; k < outputs; ++k) {
        float* want = hgr_test_run_graph_output(instance, specs[d], plain, g.params, x, k);
        float* got = hgr_test_run_graph_output(instance, specs[d], fused, g.params, x, k);
        for (size_t i = 0; i < ROWS * WIDTH; ++i)
          if (!(fabsf(got[i] - want[i]) <= 1e-5f * fabsf(want[i]) + 1e-5f))
            fail_msg("form %d on %s: output %u, element %zu: fused %.9g, unfused %.9g", order, specs[d], k, i,
                     got[i], want[i]);
        free(want);
        free(got);
      }
    hgr_graph_release(plain);
    hgr_graph_release(fused);
    residual_graph_release(&g);
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
      cmocka_unit_test(residual_adds_become_skip_inputs),
      cmocka_unit_test(residual_streams_become_output_1),
      cmocka_unit_test(near_misses_stay_as_they_are),
  };
  const struct CMUnitTest run_tests[] = {
      cmocka_unit_test(fused_graphs_match_the_unfused_ones),
  };
  if (argc == 2 && !strcmp(argv[1], "unit")) return cmocka_run_group_tests_name("skip layer norms", unit, NULL, NULL);
  if (argc >= 3 && !strcmp(argv[1], "run")) {
    specs = (const char* const*)argv + 2;
    spec_count = argc - 2;
    return cmocka_run_group_tests_name("skip layer norms on devices", run_tests, set_up_instance, tear_down_instance);
  }
  fprintf(stderr, "usage: test_fuse_skip_norm unit | run SPEC...\n");
  return 2;
}
