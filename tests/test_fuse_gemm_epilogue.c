/* The GEMM epilogue pass (runtime/passes/fuse_gemm_epilogue.c) on builder graphs:
 * matmul, dense and batch_matmul followed by a bias add (either input order) and an
 * activation become one GEMM with the bias as input 2 and attr activation; an ONNX
 * MatMul's reshape between stays after the fused GEMM; near misses stay as they are
 * (an add of a value that is no param, a bias of the wrong length or rank, a value
 * read twice or a graph output inside the chain, a dense that has a bias already);
 * the pass runs before elementwise fusion, is switched and counted, and logs what it
 * fused; and fused graphs against unfused ones on random data on each device given.
 *
 *   test_fuse_gemm_epilogue unit          the pass, no device
 *   test_fuse_gemm_epilogue run SPEC...   fused against unfused on each device */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"
#include "passes.h"
#include "pass_check.h"
#include "testlib.h"

static const hgr_dtype_t F32 = {HGR_DTYPE_FLOAT, 32, 1};

/* x [BATCH, ROWS, DEPTH] (ONNX MatMul's 3-D input) or [BATCH * ROWS, DEPTH]; the
 * GEMM gives COLUMNS. */
enum { BATCH = 2, ROWS = 5, DEPTH = 24, COLUMNS = 20 };

/* What the bias add adds to the GEMM's value. */
enum {
  BIAS_NONE,        /* no add */
  BIAS_PARAM,       /* a param [COLUMNS], the add's second input */
  BIAS_PARAM_FIRST, /* the same, the add's first input */
  /* near misses */
  BIAS_INPUT,       /* a graph input [COLUMNS], not a param */
  BIAS_SHORT,       /* a param [1]: broadcasts, but is no bias per column */
  BIAS_RANK2,       /* a param [1, COLUMNS] */
};

typedef struct chain_form_t {
  const char* op;         /* "matmul", "dense" or "batch_matmul" */
  bool onnx_reshape;      /* x [BATCH, ROWS, DEPTH] reshaped to 2-D, the product back to 3-D */
  int bias;               /* BIAS_* */
  const char* activation; /* an activation op after the add (or the GEMM), or NULL; "silu": a sigmoid and the multiply by it */
  bool dense_bias;        /* the dense has a bias of its own */
  /* near misses */
  bool gemm_read_twice;   /* the GEMM's value is read by a sigmoid too (a second output) */
  bool gemm_output;       /* the GEMM's value is a graph output too */
  bool add_read_twice;    /* the add's value is read by a sigmoid too: the activation stays */
} chain_form_t;

typedef struct chain_graph_t {
  hgr_graph_t* graph;
  hgr_params_t* params;
} chain_graph_t;

static hgr_value_t op(hgr_builder_t* builder, const char* name, const char* func, const hgr_value_t* inputs,
                      uint32_t count, hgr_attrs_t* attrs) {
  hgr_value_t out;
  ASSERT_OK(hgr_builder_add_op(builder, name, func, inputs, count, attrs, 1, &out));
  return out;
}

static hgr_value_t reshape(hgr_builder_t* builder, const char* name, hgr_value_t x, const int64_t* shape,
                           int32_t ndim) {
  hgr_attrs_t* attrs = NULL;
  ASSERT_OK(hgr_attrs_create(&attrs));
  ASSERT_OK(hgr_attrs_set_ints(attrs, "newshape", shape, (size_t)ndim));
  hgr_value_t out = op(builder, name, "reshape", &x, 1, attrs);
  hgr_attrs_release(attrs);
  return out;
}

/* The form's graph: input x (and "bias_in" for BIAS_INPUT), the GEMM "gemm" of x and
 * the param "w" (and "b0" for a dense's own bias), the add "bias_add" of the param
 * "b", the activation "act"; the chain's last value is output 0. The constants
 * come after the GEMM in node order, as an ONNX load makes them. */
static chain_graph_t chain_graph(const chain_form_t* form, uint64_t seed) {
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, seed);
  hgr_builder_t* builder = NULL;
  ASSERT_OK(hgr_builder_create(NULL, &builder));
  bool batched = !strcmp(form->op, "batch_matmul"), dense = !strcmp(form->op, "dense");
  hgr_value_t x, bias_in = {0, 0}, v;
  if (form->onnx_reshape || batched)
    ASSERT_OK(hgr_builder_add_input(builder, "x", F32, (const int64_t[]){BATCH, ROWS, DEPTH}, 3, &x));
  else
    ASSERT_OK(hgr_builder_add_input(builder, "x", F32, (const int64_t[]){BATCH * ROWS, DEPTH}, 2, &x));
  if (form->bias == BIAS_INPUT)
    ASSERT_OK(hgr_builder_add_input(builder, "bias_in", F32, (const int64_t[]){COLUMNS}, 1, &bias_in));
  if (form->onnx_reshape) x = reshape(builder, "flatten", x, (const int64_t[]){BATCH * ROWS, DEPTH}, 2);
  hgr_value_t inputs[3] = {x};
  if (batched) inputs[1] = hgr_test_random_constant(builder, "w", (const int64_t[]){1, DEPTH, COLUMNS}, 3, &rng);
  else if (dense) inputs[1] = hgr_test_random_constant(builder, "w", (const int64_t[]){COLUMNS, DEPTH}, 2, &rng);
  else inputs[1] = hgr_test_random_constant(builder, "w", (const int64_t[]){DEPTH, COLUMNS}, 2, &rng);
  if (form->dense_bias) inputs[2] = hgr_test_random_constant(builder, "b0", (const int64_t[]){COLUMNS}, 1, &rng);
  hgr_attrs_t* attrs = NULL;
  ASSERT_OK(hgr_attrs_create(&attrs));
  if (batched) ASSERT_OK(hgr_attrs_set_int(attrs, "transpose_b", 0));
  v = op(builder, "gemm", form->op, inputs, form->dense_bias ? 3 : 2, attrs);
  hgr_attrs_release(attrs);
  hgr_value_t gemm = v, extra = v;
  if (form->gemm_read_twice) extra = op(builder, "other", "sigmoid", &v, 1, NULL);
  if (form->onnx_reshape) v = reshape(builder, "unflatten", v, (const int64_t[]){BATCH, ROWS, COLUMNS}, 3);
  if (form->bias != BIAS_NONE) {
    hgr_value_t b = bias_in;
    if (form->bias == BIAS_PARAM || form->bias == BIAS_PARAM_FIRST)
      b = hgr_test_random_constant(builder, "b", (const int64_t[]){COLUMNS}, 1, &rng);
    else if (form->bias == BIAS_SHORT)
      b = hgr_test_random_constant(builder, "b", (const int64_t[]){1}, 1, &rng);
    else if (form->bias == BIAS_RANK2)
      b = hgr_test_random_constant(builder, "b", (const int64_t[]){1, COLUMNS}, 2, &rng);
    hgr_value_t pair[2] = {v, b};
    if (form->bias == BIAS_PARAM_FIRST) pair[0] = b, pair[1] = v;
    v = op(builder, "bias_add", "add", pair, 2, NULL);
    if (form->add_read_twice) extra = op(builder, "other", "sigmoid", &v, 1, NULL);
  }
  if (form->activation && !strcmp(form->activation, "silu")) { /* torch.onnx's nn.SiLU */
    hgr_value_t s = op(builder, "act_s", "sigmoid", &v, 1, NULL);
    v = op(builder, "act", "multiply", (hgr_value_t[]){s, v}, 2, NULL);
  } else if (form->activation) {
    ASSERT_OK(hgr_attrs_create(&attrs));
    if (!strcmp(form->activation, "leaky_relu")) ASSERT_OK(hgr_attrs_set_float(attrs, "alpha", 0.125));
    if (!strcmp(form->activation, "clip")) {
      ASSERT_OK(hgr_attrs_set_float(attrs, "a_min", -0.5));
      ASSERT_OK(hgr_attrs_set_float(attrs, "a_max", 0.75));
    }
    v = op(builder, "act", form->activation, &v, 1, attrs);
    hgr_attrs_release(attrs);
  }
  ASSERT_OK(hgr_builder_mark_output(builder, v));
  if (form->gemm_read_twice || form->add_read_twice) ASSERT_OK(hgr_builder_mark_output(builder, extra));
  if (form->gemm_output) ASSERT_OK(hgr_builder_mark_output(builder, gemm));
  chain_graph_t g;
  ASSERT_OK(hgr_builder_finish(builder, &g.graph, &g.params));
  hgr_builder_release(builder);
  return g;
}

static void chain_graph_release(chain_graph_t* g) {
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

static const char* input_name(const hgr_graph_t* graph, const hgr__node_t* node, uint32_t i) {
  return graph->nodes[node->inputs[i].node_id].name;
}

/* Runs the GEMM epilogue pass alone (and the patterns, which change nothing here). */
static hgr_graph_t* fuse(chain_graph_t* g, const hgr_params_t* params, hgr_passes_report_t* report) {
  hgr_passes_options_t options;
  hgr_passes_options_init(&options);
  options.conv_epilogue = false;
  options.elementwise = false;
  hgr_graph_t* fused = NULL;
  ASSERT_OK(hgr_passes_apply(g->graph, (hgr_params_t*)params, &options, &fused, report));
  return fused;
}

#define FORM(op_, reshape_, bias_, activation_, ...) \
  ((chain_form_t){.op = op_, .onnx_reshape = reshape_, .bias = bias_, .activation = activation_, __VA_ARGS__})

static void bias_add_and_activation_fold_into_the_gemm(void** state) {
  (void)state;
  static const struct {
    chain_form_t form;
    const char* activation; /* the attr it gets */
    const char* name;       /* the fused GEMM's */
  } cases[] = {
      {FORM("matmul", false, BIAS_PARAM, "gelu"), "gelu", "act"},
      {FORM("matmul", false, BIAS_PARAM_FIRST, "gelu_tanh"), "gelu_tanh", "act"},
      {FORM("matmul", false, BIAS_PARAM, NULL), NULL, "bias_add"},
      {FORM("matmul", false, BIAS_NONE, "gelu"), "gelu", "act"},
      {FORM("dense", false, BIAS_PARAM, "relu"), "relu", "act"},
      {FORM("dense", false, BIAS_NONE, "leaky_relu", .dense_bias = true), "leaky_relu", "act"},
      {FORM("batch_matmul", false, BIAS_PARAM, "clip"), "clip", "act"},
      {FORM("dense", false, BIAS_PARAM, "sigmoid"), "sigmoid", "act"},
      {FORM("dense", false, BIAS_PARAM, "hard_swish"), "hard_swish", "act"},
      {FORM("matmul", false, BIAS_PARAM, "silu"), "silu", "act"},
      {FORM("matmul", true, BIAS_NONE, "silu"), "silu", "gemm"},
      /* ONNX MatMul of a 3-D input: the GEMM keeps its name, the reshape after it
       * takes the chain's */
      {FORM("matmul", true, BIAS_PARAM_FIRST, "gelu"), "gelu", "gemm"},
      {FORM("matmul", true, BIAS_NONE, "relu"), "relu", "gemm"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    const chain_form_t* form = &cases[i].form;
    chain_graph_t g = chain_graph(form, 10 + i);
    size_t param_count = hgr_params_count(g.params);
    hgr_passes_report_t report;
    hgr_graph_t* fused = fuse(&g, g.params, &report);
    bool add = form->bias != BIAS_NONE;
    assert_int_equal(report.gemm_epilogues, 1);
    bool silu = form->activation && !strcmp(form->activation, "silu"); /* two nodes */
    assert_int_equal(report.gemm_epilogue_fused, add + (form->activation != NULL) + silu);
    assert_int_equal(count_ops(fused), 1 + 2 * form->onnx_reshape);
    const hgr__node_t* node = node_named(fused, cases[i].name);
    if (!node) fail_msg("case %zu: no node '%s'", i, cases[i].name);
    assert_string_equal(node->func_name, form->op);
    assert_int_equal(node->input_count, add || form->dense_bias ? 3 : 2);
    assert_string_equal(input_name(fused, node, 1), "w");
    if (add || form->dense_bias) assert_string_equal(input_name(fused, node, 2), add ? "b" : "b0");
    if (cases[i].activation) assert_string_equal(hgr__node_attr(node, "activation"), cases[i].activation);
    else assert_null(hgr__node_attr(node, "activation"));
    if (form->activation && !strcmp(form->activation, "leaky_relu"))
      assert_string_equal(hgr__node_attr(node, "alpha"), "0.125");
    if (form->activation && !strcmp(form->activation, "clip")) {
      assert_string_equal(hgr__node_attr(node, "a_min"), "-0.5");
      assert_string_equal(hgr__node_attr(node, "a_max"), "0.75");
    }
    if (!strcmp(form->op, "batch_matmul")) assert_string_equal(hgr__node_attr(node, "transpose_b"), "0");
    /* the output keeps its name; with a reshape the reshape gives it */
    hgr_tensor_info_t info;
    ASSERT_OK(hgr_graph_output_info(fused, 0, &info));
    char want[32];
    snprintf(want, sizeof(want), "%s:0", form->activation ? "act" : "bias_add");
    assert_string_equal(info.name, want);
    if (form->onnx_reshape) {
      const hgr__node_t* last = node_named(fused, want[0] == 'a' ? "act" : "bias_add");
      assert_non_null(last);
      assert_string_equal(last->func_name, "reshape");
      assert_string_equal(input_name(fused, last, 0), "gemm");
    }
    /* the bias stays a param, which the fused GEMM reads */
    assert_int_equal(hgr_params_count(g.params), param_count);
    hgr_graph_release(fused);
    chain_graph_release(&g);
  }
}

static void near_misses_stay_as_they_are(void** state) {
  (void)state;
  static const chain_form_t misses[] = {
      FORM("matmul", false, BIAS_INPUT, NULL),
      FORM("matmul", false, BIAS_SHORT, NULL),
      FORM("matmul", false, BIAS_RANK2, NULL),
      FORM("matmul", true, BIAS_SHORT, NULL),
      FORM("matmul", false, BIAS_PARAM, "gelu", .gemm_read_twice = true),
      FORM("matmul", false, BIAS_PARAM, "gelu", .gemm_output = true),
      FORM("matmul", true, BIAS_PARAM, "gelu", .gemm_read_twice = true),
      FORM("dense", false, BIAS_PARAM, NULL, .dense_bias = true),
      FORM("matmul", false, BIAS_NONE, "tanh"),
  };
  for (size_t i = 0; i < sizeof(misses) / sizeof(misses[0]); ++i) {
    chain_graph_t g = chain_graph(&misses[i], 30 + i);
    hgr_passes_report_t report;
    hgr_graph_t* fused = fuse(&g, g.params, &report);
    if (report.gemm_epilogues) fail_msg("near miss %zu fused", i);
    assert_ptr_equal(fused, g.graph);
    hgr_graph_release(fused);
    chain_graph_release(&g);
  }
  /* a bias given at run time stops the chain, but the activation after a plain
   * GEMM still joins */
  chain_graph_t g = chain_graph(&FORM("matmul", false, BIAS_INPUT, "gelu"), 40);
  hgr_passes_report_t report;
  hgr_graph_t* fused = fuse(&g, g.params, &report);
  assert_int_equal(report.gemm_epilogues, 0);
  hgr_graph_release(fused);
  chain_graph_release(&g);
  /* the add read twice: the add joins, the activation after it stays */
  g = chain_graph(&FORM("matmul", false, BIAS_PARAM, "gelu", .add_read_twice = true), 41);
  fused = fuse(&g, g.params, &report);
  assert_int_equal(report.gemm_epilogues, 1);
  assert_int_equal(report.gemm_epilogue_fused, 1);
  const hgr__node_t* node = node_named(fused, "bias_add");
  assert_string_equal(node->func_name, "matmul");
  assert_null(hgr__node_attr(node, "activation"));
  assert_string_equal(node_named(fused, "act")->func_name, "gelu");
  assert_string_equal(input_name(fused, node_named(fused, "act"), 0), "bias_add");
  hgr_graph_release(fused);
  chain_graph_release(&g);
  /* without params no add joins (nothing says the bias is constant); the activation
   * of a GEMM without an add does */
  g = chain_graph(&FORM("matmul", false, BIAS_PARAM, "gelu"), 42);
  fused = fuse(&g, NULL, &report);
  assert_int_equal(report.gemm_epilogues, 0);
  hgr_graph_release(fused);
  chain_graph_release(&g);
  g = chain_graph(&FORM("matmul", false, BIAS_NONE, "gelu"), 43);
  fused = fuse(&g, NULL, &report);
  assert_int_equal(report.gemm_epilogues, 1);
  hgr_graph_release(fused);
  chain_graph_release(&g);
}

static void collect_line(void* user, const char* line) {
  char* lines = user;
  size_t used = strlen(lines);
  snprintf(lines + used, 1024 - used, "%s\n", line);
}

/* Before elementwise fusion: the add and the GELU go into the GEMM, not into a
 * fused_elementwise node; switched off, elementwise fusion takes them. */
static void the_pass_runs_before_elementwise_fusion_and_is_switched_and_counted(void** state) {
  (void)state;
  chain_graph_t g = chain_graph(&FORM("matmul", true, BIAS_PARAM, "gelu"), 50);
  hgr_passes_options_t options;
  hgr_passes_options_init(&options);
  char lines[1024] = "";
  options.log = collect_line;
  options.log_user = lines;
  hgr_passes_report_t report;
  hgr_graph_t* fused = NULL;
  ASSERT_OK(hgr_passes_apply(g.graph, g.params, &options, &fused, &report));
  assert_int_equal(report.gemm_epilogues, 1);
  assert_int_equal(report.gemm_epilogue_fused, 2);
  assert_int_equal(report.elementwise_groups, 0);
  assert_string_equal(lines, "matmul 'gemm' <- 3 nodes: 'gemm', 'bias_add', 'act'\n");
  hgr_passes_count_t counts[HGR_PASSES_COUNT_MAX];
  size_t count = hgr_passes_report_counts(&report, counts);
  assert_int_equal(count, 10);
  assert_string_equal(counts[4].key, "gemm_epilogues");
  assert_string_equal(counts[4].label, "GEMM epilogues");
  assert_int_equal(counts[4].made, 1);
  assert_int_equal(counts[4].replaced, 2);
  assert_string_equal(counts[9].key, "elementwise_groups");
  hgr_graph_release(fused);
  options.log = NULL;
  options.gemm_epilogue = false;
  ASSERT_OK(hgr_passes_apply(g.graph, g.params, &options, &fused, &report));
  assert_int_equal(report.gemm_epilogues, 0);
  assert_int_equal(report.elementwise_groups, 1);
  assert_string_equal(node_named(fused, "act")->func_name, "fused_elementwise");
  hgr_graph_release(fused);
  /* without the reshape the fused GEMM takes the chain's name in the log too */
  chain_graph_release(&g);
  g = chain_graph(&FORM("dense", false, BIAS_PARAM_FIRST, "relu"), 51);
  lines[0] = '\0';
  options.log = collect_line;
  options.gemm_epilogue = true;
  ASSERT_OK(hgr_passes_apply(g.graph, g.params, &options, &fused, &report));
  assert_string_equal(lines, "dense 'act' <- 3 nodes: 'gemm', 'bias_add', 'act'\n");
  hgr_graph_release(fused);
  chain_graph_release(&g);
}

static void a_placed_graph_is_refused(void** state) {
  (void)state;
  chain_graph_t g = chain_graph(&FORM("matmul", false, BIAS_PARAM, "gelu"), 60);
  g.graph->has_device_index = true;
  hgr_graph_t* fused = NULL;
  ASSERT_STATUS(hgr__fuse_gemm_epilogue(g.graph, g.params, NULL, &fused, NULL), HGR_STATUS_FAILED_PRECONDITION,
                "placed", "fuse before placement");
  assert_null(fused);
  g.graph->has_device_index = false;
  chain_graph_release(&g);
}

/* ---- fused against unfused on devices ------------------------------------------------ */

static hgr_instance_t* instance;
static const char* const* specs;
static int spec_count;

/* Each form unfused and fused (all passes) on every device, output 0 compared. The
 * fused GEMM adds the bias to its accumulators and the GELU is the same formula, so
 * they differ by the rounding of the sum's order (fma, tiles): 1e-5 relative and
 * absolute, on values of a few units. */
static void fused_graphs_match_the_unfused_ones(void** state) {
  (void)state;
  static const chain_form_t forms[] = {
      FORM("matmul", false, BIAS_PARAM, "gelu"),
      FORM("matmul", true, BIAS_PARAM_FIRST, "gelu_tanh"),
      FORM("matmul", true, BIAS_PARAM, NULL),
      FORM("dense", false, BIAS_PARAM, "relu"),
      FORM("dense", false, BIAS_NONE, "gelu", .dense_bias = true),
      FORM("batch_matmul", false, BIAS_PARAM_FIRST, "clip"),
      FORM("matmul", false, BIAS_PARAM, "leaky_relu"),
      FORM("dense", false, BIAS_PARAM, "sigmoid"),
      FORM("matmul", true, BIAS_PARAM, "silu"),
      FORM("dense", false, BIAS_NONE, "hard_swish", .dense_bias = true),
  };
  for (size_t k = 0; k < sizeof(forms) / sizeof(forms[0]); ++k) {
    chain_graph_t g = chain_graph(&forms[k], 70 + k);
    hgr_params_t* params = hgr_test_params_copy(g.params);
    hgr_passes_report_t report;
    hgr_graph_t* fused = NULL;
    ASSERT_OK(hgr_passes_apply(g.graph, params, NULL, &fused, &report));
    assert_int_equal(report.gemm_epilogues, 1);
    assert_int_equal(report.elementwise_groups, 0);
    hgr_tensor_info_t in, out;
    ASSERT_OK(hgr_graph_input_info(g.graph, 0, &in));
    ASSERT_OK(hgr_graph_output_info(g.graph, 0, &out));
    size_t count = (size_t)in.bytes / sizeof(float), outputs = (size_t)out.bytes / sizeof(float);
    float* x = malloc(in.bytes);
    hgr_test_rng_t rng;
    hgr_test_rng_seed(&rng, 99);
    for (size_t i = 0; i < count; ++i) x[i] = hgr_test_rng_float(&rng, -2, 2);
    for (int d = 0; d < spec_count; ++d) {
      float* want = hgr_test_run_graph(instance, specs[d], g.graph, g.params, x);
      float* got = hgr_test_run_graph(instance, specs[d], fused, params, x);
      for (size_t i = 0; i < outputs; ++i)
        if (!(fabsf(got[i] - want[i]) <= 1e-5f * fabsf(want[i]) + 1e-5f))
          fail_msg("form %zu on %s: element %zu: fused %.9g, unfused %.9g", k, specs[d], i, got[i], want[i]);
      free(want);
      free(got);
    }
    free(x);
    hgr_graph_release(fused);
    hgr_params_release(params);
    chain_graph_release(&g);
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
      cmocka_unit_test(bias_add_and_activation_fold_into_the_gemm),
      cmocka_unit_test(near_misses_stay_as_they_are),
      cmocka_unit_test(the_pass_runs_before_elementwise_fusion_and_is_switched_and_counted),
      cmocka_unit_test(a_placed_graph_is_refused),
  };
  const struct CMUnitTest run_tests[] = {
      cmocka_unit_test(fused_graphs_match_the_unfused_ones),
  };
  if (argc == 2 && !strcmp(argv[1], "unit")) return cmocka_run_group_tests_name("gemm epilogue", unit, NULL, NULL);
  if (argc >= 3 && !strcmp(argv[1], "run")) {
    specs = (const char* const*)argv + 2;
    spec_count = argc - 2;
    return cmocka_run_group_tests_name("gemm epilogue on devices", run_tests, set_up_instance, tear_down_instance);
  }
  fprintf(stderr, "usage: test_fuse_gemm_epilogue unit | run SPEC...\n");
  return 2;
}
