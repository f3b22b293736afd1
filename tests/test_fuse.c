/* Elementwise fusion (runtime/passes/fuse_elementwise.c) and the fused_elementwise op
 * (runtime/ops/ops_fused.c): which groups form and which must not (a value used
 * outside, a graph output, int32 nodes, an op it cannot write), the expressions
 * the groups become, the op's refusals (a non-broadcastable input, a bad
 * expression), and fused graphs against their unfused originals on random data on
 * each platform given, and the program cache: identical expressions share one
 * program, and a second executor loads it from the cache.
 *
 *   test_fuse unit          the pass and the op's inference, no device
 *   test_fuse run SPEC...   fused against unfused on each device, and the cache on the first */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "passes.h"
#include "graph_internal.h"
#include "testlib.h"

static const hgr_dtype_t F32 = {HGR_DTYPE_FLOAT, 32, 1};
static const hgr_dtype_t I32 = {HGR_DTYPE_INT, 32, 1};

static hgr_value_t input(hgr_builder_t* builder, const char* name, hgr_dtype_t dtype, int32_t ndim, const int64_t* shape) {
  hgr_value_t value;
  ASSERT_OK(hgr_builder_add_input(builder, name, dtype, shape, ndim, &value));
  return value;
}

static hgr_value_t op(hgr_builder_t* builder, const char* name, const char* func, hgr_value_t a, const hgr_value_t* b,
                      const hgr_attrs_t* attrs) {
  hgr_value_t inputs[2] = {a, b ? *b : a};
  hgr_value_t out;
  ASSERT_OK(hgr_builder_add_op(builder, name, func, inputs, b ? 2 : 1, attrs, 1, &out));
  return out;
}

static hgr_attrs_t* clip_attrs(double lo, double hi) {
  hgr_attrs_t* attrs = NULL;
  ASSERT_OK(hgr_attrs_create(&attrs));
  ASSERT_OK(hgr_attrs_set_float(attrs, "a_min", lo));
  ASSERT_OK(hgr_attrs_set_float(attrs, "a_max", hi));
  return attrs;
}

/* Finishes the builder, fuses, and returns the fused graph (the unfused one in
 * *out_original when asked, else released). */
static hgr_graph_t* finish_and_fuse(hgr_builder_t* builder, hgr__fuse_report_t* report, hgr_graph_t** out_original,
                                    hgr_params_t** out_params) {
  hgr_graph_t* graph = NULL;
  hgr_params_t* params = NULL;
  ASSERT_OK(hgr_builder_finish(builder, &graph, &params));
  hgr_builder_release(builder);
  hgr_graph_t* fused = NULL;
  ASSERT_OK(hgr__fuse_elementwise(graph, NULL, &fused, report));
  if (out_original) *out_original = graph;
  else hgr_graph_release(graph);
  if (out_params) *out_params = params;
  else hgr_params_release(params);
  return fused;
}

static uint32_t count_ops(const hgr_graph_t* graph, const char* func_name) {
  uint32_t count = 0;
  for (uint32_t n = 0; n < graph->node_count; ++n)
    count += graph->nodes[n].is_op && (!func_name || !strcmp(graph->nodes[n].func_name, func_name));
  return count;
}

/* The fused node called name. */
static const hgr__node_t* node_named(const hgr_graph_t* graph, const char* name) {
  for (uint32_t n = 0; n < graph->node_count; ++n)
    if (!strcmp(graph->nodes[n].name, name)) return &graph->nodes[n];
  fail_msg("no node '%s'", name);
  return NULL;
}

/* ---- the pass ------------------------------------------------------------------------ */

static const int64_t NCHW[4] = {2, 3, 4, 5};
static const int64_t CHANNEL[3] = {3, 1, 1};

static void chain_with_per_channel_constants_becomes_one_node(void** state) {
  (void)state;
  hgr_builder_t* builder = NULL;
  ASSERT_OK(hgr_builder_create(NULL, &builder));
  hgr_value_t x = input(builder, "x", F32, 4, NCHW);
  hgr_value_t scale = input(builder, "scale", F32, 3, CHANNEL);
  hgr_value_t shift = input(builder, "shift", F32, 3, CHANNEL);
  hgr_value_t scaled = op(builder, "scaled", "multiply", x, &scale, NULL);
  hgr_value_t shifted = op(builder, "shifted", "add", scaled, &shift, NULL);
  hgr_value_t out = op(builder, "out", "relu", shifted, NULL, NULL);
  ASSERT_OK(hgr_builder_mark_output(builder, out));
  hgr__fuse_report_t report;
  hgr_graph_t* fused = finish_and_fuse(builder, &report, NULL, NULL);
  assert_int_equal(report.groups, 1);
  assert_int_equal(report.fused_nodes, 3);
  assert_int_equal(count_ops(fused, NULL), 1);
  const hgr__node_t* node = node_named(fused, "out");
  assert_string_equal(node->func_name, "fused_elementwise");
  assert_string_equal(hgr__node_attr(node, "expr"), "multiply i0 i1; add v0 i2; relu v1");
  assert_int_equal(node->input_count, 3);
  /* Inputs keep their names and order; the output its shape. */
  assert_int_equal(fused->arg_count, 3);
  assert_string_equal(fused->nodes[fused->arg_nodes[1]].name, "scale");
  hgr_tensor_info_t info;
  ASSERT_OK(hgr_graph_output_info(fused, 0, &info));
  assert_int_equal(info.ndim, 4);
  assert_int_equal(info.shape[3], 5);
  hgr_graph_release(fused);
}

/* HardSwish as exporters write it: x * clip(x + 3, 0, 6) / 6, with x used twice. */
static void hard_swish_written_out_becomes_one_node_with_literals(void** state) {
  (void)state;
  hgr_builder_t* builder = NULL;
  ASSERT_OK(hgr_builder_create(NULL, &builder));
  hgr_value_t x = input(builder, "x", F32, 4, NCHW);
  float three = 3, six = 6;
  hgr_value_t c3, c6;
  ASSERT_OK(hgr_builder_add_constant(builder, "three", F32, NULL, 0, &three, sizeof(three), &c3));
  ASSERT_OK(hgr_builder_add_constant(builder, "six", F32, NULL, 0, &six, sizeof(six), &c6));
  hgr_attrs_t* attrs = clip_attrs(0, 6);
  hgr_value_t plus = op(builder, "plus", "add", x, &c3, NULL);
  hgr_value_t clipped = op(builder, "clipped", "clip", plus, NULL, attrs);
  hgr_value_t product = op(builder, "product", "multiply", x, &clipped, NULL);
  hgr_value_t out = op(builder, "hswish", "divide", product, &c6, NULL);
  hgr_attrs_release(attrs);
  ASSERT_OK(hgr_builder_mark_output(builder, out));
  hgr__fuse_report_t report;
  hgr_graph_t* fused = finish_and_fuse(builder, &report, NULL, NULL);
  assert_int_equal(report.fused_nodes, 4);
  assert_int_equal(count_ops(fused, NULL), 1);
  assert_string_equal(hgr__node_attr(node_named(fused, "hswish"), "expr"),
                      "add i0 i1; clip v0 0 6; multiply i0 v1; divide v2 i2");
  hgr_graph_release(fused);
}

/* a = x + y feeds relu (fusable) and softmax (not): a stays its own node; relu
 * and the sigmoid after it fuse. */
static void value_used_outside_the_group_stays_a_node(void** state) {
  (void)state;
  hgr_builder_t* builder = NULL;
  ASSERT_OK(hgr_builder_create(NULL, &builder));
  hgr_value_t x = input(builder, "x", F32, 4, NCHW);
  hgr_value_t y = input(builder, "y", F32, 4, NCHW);
  hgr_value_t a = op(builder, "a", "add", x, &y, NULL);
  hgr_value_t r = op(builder, "r", "relu", a, NULL, NULL);
  hgr_value_t s = op(builder, "s", "sigmoid", r, NULL, NULL);
  hgr_value_t soft = op(builder, "soft", "softmax", a, NULL, NULL);
  ASSERT_OK(hgr_builder_mark_output(builder, s));
  ASSERT_OK(hgr_builder_mark_output(builder, soft));
  hgr__fuse_report_t report;
  hgr_graph_t* fused = finish_and_fuse(builder, &report, NULL, NULL);
  assert_int_equal(report.groups, 1);
  assert_int_equal(report.fused_nodes, 2);
  assert_string_equal(node_named(fused, "a")->func_name, "add");
  assert_string_equal(hgr__node_attr(node_named(fused, "s"), "expr"), "relu i0; sigmoid v0");
  assert_int_equal(count_ops(fused, NULL), 3);
  hgr_graph_release(fused);
}

/* A graph output inside a chain ends the group before it: both values stay
 * computable. */
static void graph_output_is_not_fused_away(void** state) {
  (void)state;
  hgr_builder_t* builder = NULL;
  ASSERT_OK(hgr_builder_create(NULL, &builder));
  hgr_value_t x = input(builder, "x", F32, 4, NCHW);
  hgr_value_t y = input(builder, "y", F32, 4, NCHW);
  hgr_value_t a = op(builder, "a", "add", x, &y, NULL);
  hgr_value_t r = op(builder, "r", "relu", a, NULL, NULL);
  ASSERT_OK(hgr_builder_mark_output(builder, a));
  ASSERT_OK(hgr_builder_mark_output(builder, r));
  hgr__fuse_report_t report;
  hgr_graph_t* fused = finish_and_fuse(builder, &report, NULL, NULL);
  assert_int_equal(report.groups, 0);
  assert_int_equal(count_ops(fused, "add"), 1);
  assert_int_equal(count_ops(fused, "relu"), 1);
  hgr_graph_release(fused);
}

static void int32_and_unfusable_ops_are_left_alone(void** state) {
  (void)state;
  hgr_builder_t* builder = NULL;
  ASSERT_OK(hgr_builder_create(NULL, &builder));
  hgr_value_t k = input(builder, "k", I32, 4, NCHW);
  hgr_value_t j = input(builder, "j", I32, 4, NCHW);
  hgr_value_t sum = op(builder, "sum", "add", k, &j, NULL);
  hgr_value_t product = op(builder, "product", "multiply", sum, &j, NULL);
  hgr_value_t x = input(builder, "x", F32, 4, NCHW);
  hgr_value_t slope = input(builder, "slope", F32, 3, CHANNEL);
  hgr_value_t p = op(builder, "p", "prelu", x, &slope, NULL); /* not one fused_elementwise computes */
  hgr_value_t e = op(builder, "e", "exp", p, NULL, NULL);
  ASSERT_OK(hgr_builder_mark_output(builder, product));
  ASSERT_OK(hgr_builder_mark_output(builder, e));
  hgr__fuse_report_t report;
  hgr_graph_t* fused = finish_and_fuse(builder, &report, NULL, NULL);
  assert_int_equal(report.groups, 0);
  assert_int_equal(count_ops(fused, NULL), 4);
  hgr_graph_release(fused);
}

/* Two chains joined by a diamond (a value used twice inside) become one node. */
static void diamond_inside_a_group_reuses_the_value(void** state) {
  (void)state;
  hgr_builder_t* builder = NULL;
  ASSERT_OK(hgr_builder_create(NULL, &builder));
  hgr_value_t x = input(builder, "x", F32, 4, NCHW);
  hgr_value_t y = input(builder, "y", F32, 4, NCHW);
  hgr_value_t a = op(builder, "a", "multiply", x, &y, NULL);
  hgr_value_t s = op(builder, "s", "sigmoid", a, NULL, NULL);
  hgr_value_t out = op(builder, "swish", "multiply", a, &s, NULL);
  ASSERT_OK(hgr_builder_mark_output(builder, out));
  hgr__fuse_report_t report;
  hgr_graph_t* fused = finish_and_fuse(builder, &report, NULL, NULL);
  assert_int_equal(report.fused_nodes, 3);
  assert_string_equal(hgr__node_attr(node_named(fused, "swish"), "expr"),
                      "multiply i0 i1; sigmoid v0; multiply v0 v1");
  hgr_graph_release(fused);
}

/* batch_norm (inference, one output) followed by relu: its [C] parameters enter
 * along its axis ("axes"). A batch_norm with three outputs stays a node. */
static hgr_builder_t* batch_norm_relu(int outputs, hgr_value_t* out) {
  hgr_builder_t* builder = NULL;
  ASSERT_OK(hgr_builder_create(NULL, &builder));
  const int64_t c[1] = {3};
  hgr_value_t in[5] = {input(builder, "x", F32, 4, NCHW), input(builder, "gamma", F32, 1, c),
                       input(builder, "beta", F32, 1, c), input(builder, "mean", F32, 1, c),
                       input(builder, "var", F32, 1, c)};
  hgr_attrs_t* attrs = NULL;
  ASSERT_OK(hgr_attrs_create(&attrs));
  ASSERT_OK(hgr_attrs_set_float(attrs, "epsilon", 0.001));
  hgr_value_t bn[3];
  ASSERT_OK(hgr_builder_add_op(builder, "bn", "batch_norm", in, 5, attrs, (uint32_t)outputs, bn));
  hgr_attrs_release(attrs);
  *out = op(builder, "act", "relu", bn[0], NULL, NULL);
  return builder;
}

static void batch_norm_fuses_with_its_parameters_along_its_axis(void** state) {
  (void)state;
  hgr_value_t out;
  hgr_builder_t* builder = batch_norm_relu(1, &out);
  ASSERT_OK(hgr_builder_mark_output(builder, out));
  hgr__fuse_report_t report;
  hgr_graph_t* fused = finish_and_fuse(builder, &report, NULL, NULL);
  assert_int_equal(report.fused_nodes, 2);
  const hgr__node_t* node = node_named(fused, "act");
  assert_string_equal(hgr__node_attr(node, "expr"),
                      "subtract i0 i1; add i2 0.00100000005; sqrt v1; divide v0 v2; multiply v3 i3; add v4 i4; "
                      "relu v5");
  assert_string_equal(hgr__node_attr(node, "axes"), "[-1, 1, 1, 1, 1]");
  hgr_graph_release(fused);

  builder = batch_norm_relu(3, &out);
  ASSERT_OK(hgr_builder_mark_output(builder, out));
  fused = finish_and_fuse(builder, &report, NULL, NULL);
  assert_int_equal(report.groups, 0);
  hgr_graph_release(fused);
}

static void placed_graph_is_refused(void** state) {
  (void)state;
  hgr_builder_t* builder = NULL;
  ASSERT_OK(hgr_builder_create(NULL, &builder));
  hgr_value_t x = input(builder, "x", F32, 4, NCHW);
  ASSERT_OK(hgr_builder_mark_output(builder, op(builder, "r", "relu", x, NULL, NULL)));
  hgr_graph_t* graph = NULL;
  ASSERT_OK(hgr_builder_finish(builder, &graph, NULL));
  hgr_builder_release(builder);
  graph->has_device_index = true; /* as a placed graph has */
  hgr_graph_t* fused = NULL;
  ASSERT_STATUS(hgr__fuse_elementwise(graph, NULL, &fused, NULL), HGR_STATUS_FAILED_PRECONDITION, "placed",
                "fuse before placement");
  assert_null(fused);
  hgr_graph_release(graph);
}

/* ---- the op's refusals ------------------------------------------------------------------- */

static hgr_status_t add_fused(hgr_builder_t* builder, const char* expr, const hgr_value_t* inputs, uint32_t count) {
  hgr_attrs_t* attrs = NULL;
  ASSERT_OK(hgr_attrs_create(&attrs));
  ASSERT_OK(hgr_attrs_set_string(attrs, "expr", expr));
  hgr_value_t out;
  hgr_status_t status = hgr_builder_add_op(builder, NULL, "fused_elementwise", inputs, count, attrs, 1, &out);
  hgr_attrs_release(attrs);
  return status;
}

static void fused_op_refuses_inputs_that_do_not_broadcast_and_bad_expressions(void** state) {
  (void)state;
  hgr_builder_t* builder = NULL;
  ASSERT_OK(hgr_builder_create(NULL, &builder));
  const int64_t a_shape[2] = {2, 3}, b_shape[1] = {4};
  hgr_value_t inputs[3] = {input(builder, "a", F32, 2, a_shape), input(builder, "b", F32, 1, b_shape),
                           input(builder, "k", I32, 1, b_shape)};
  ASSERT_STATUS(add_fused(builder, "add i0 i1", inputs, 2), HGR_STATUS_INVALID_ARGUMENT, "fused_elementwise",
                "input 1 shaped [4] does not broadcast");
  ASSERT_STATUS(add_fused(builder, "add i0 i1", (hgr_value_t[]){inputs[0], inputs[2]}, 2),
                HGR_STATUS_INVALID_ARGUMENT, "input 1", "int32");
  ASSERT_STATUS(add_fused(builder, "relu i0; frobnicate v0", inputs, 1), HGR_STATUS_INVALID_ARGUMENT,
                "statement 1", "'frobnicate' is not an op");
  ASSERT_STATUS(add_fused(builder, "relu v0", inputs, 1), HGR_STATUS_INVALID_ARGUMENT, "statement 0",
                "not an earlier one");
  ASSERT_STATUS(add_fused(builder, "add i0 i1", inputs, 1), HGR_STATUS_INVALID_ARGUMENT, "names input 1",
                "the node has 1");
  ASSERT_STATUS(add_fused(builder, "clip i0 0", inputs, 1), HGR_STATUS_INVALID_ARGUMENT, "clip", "has 2 operands",
                "it takes 3");
  ASSERT_STATUS(add_fused(builder, "leaky_relu i0 i0", inputs, 1), HGR_STATUS_INVALID_ARGUMENT, "alpha",
                "must be a number");
  ASSERT_STATUS(add_fused(builder, "", inputs, 1), HGR_STATUS_INVALID_ARGUMENT, "'expr'", "required");
  hgr_attrs_t* attrs = NULL;
  ASSERT_OK(hgr_attrs_create(&attrs));
  ASSERT_OK(hgr_attrs_set_string(attrs, "expr", "add i0 i1"));
  ASSERT_OK(hgr_attrs_set_ints(attrs, "axes", (int64_t[]){-1}, 1));
  hgr_value_t out;
  ASSERT_STATUS(hgr_builder_add_op(builder, "f", "fused_elementwise", inputs, 2, attrs, 1, &out),
                HGR_STATUS_INVALID_ARGUMENT, "attr 'axes' has 1 values", "one per input (2)");
  /* [4] at axis 0 of [2, 3] does not fit; [2] at axis 0 does (as if [2, 1]). */
  ASSERT_OK(hgr_attrs_set_ints(attrs, "axes", (int64_t[]){-1, 0}, 2));
  ASSERT_STATUS(hgr_builder_add_op(builder, "f", "fused_elementwise", inputs, 2, attrs, 1, &out),
                HGR_STATUS_INVALID_ARGUMENT, "input 1 shaped [4] (axis 0) does not broadcast");
  const int64_t two[1] = {2};
  hgr_value_t pair[2] = {inputs[0], input(builder, "p", F32, 1, two)};
  ASSERT_OK(hgr_builder_add_op(builder, "f", "fused_elementwise", pair, 2, attrs, 1, &out));
  hgr_tensor_info_t info;
  ASSERT_OK(hgr_builder_value_info(builder, out, &info));
  assert_int_equal(info.ndim, 2);
  assert_int_equal(info.shape[0], 2);
  assert_int_equal(info.shape[1], 3);
  /* An input placed at an axis counts from the left of the final output, also when
   * it comes before the input that sets the rank: [3] at axis 1 of [2, 3, 4, 5]. */
  hgr_value_t channel_first[2] = {input(builder, "per_channel", F32, 1, (int64_t[]){3}),
                                  input(builder, "data", F32, 4, NCHW)};
  ASSERT_OK(hgr_attrs_set_ints(attrs, "axes", (int64_t[]){1, -1}, 2));
  ASSERT_OK(hgr_builder_add_op(builder, NULL, "fused_elementwise", channel_first, 2, attrs, 1, &out));
  ASSERT_OK(hgr_builder_value_info(builder, out, &info));
  assert_int_equal(info.ndim, 4);
  assert_int_equal(info.shape[1], 3);
  assert_int_equal(info.shape[3], 5);
  hgr_attrs_release(attrs);
  /* A valid one still adds. */
  ASSERT_OK(add_fused(builder, "leaky_relu i0 0.1; add v0 i0", (hgr_value_t[]){inputs[0]}, 1));
  hgr_builder_release(builder);
}

/* ---- fused against unfused on devices ------------------------------------------------ */

static hgr_instance_t* instance;
static const char* const* specs;
static int spec_count;

/* Runs graph once on spec with params and the inputs that are not params (in
 * input order); returns output `output` (malloc'd); *out_stats the program stats. */
static float* run(const char* spec, hgr_graph_t* graph, const hgr_params_t* params, float* const* inputs,
                  size_t output, hgr_program_cache_t cache, hgr_program_stats_t* out_stats) {
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  const hgr_device_binding_t binding = {0, spec};
  options.bindings = &binding;
  options.binding_count = 1;
  options.params = params;
  options.program_cache = cache;
  hgr_executor_t* executor = NULL;
  ASSERT_OK(hgr_executor_create(instance, graph, &options, &executor));
  size_t given = 0;
  for (size_t i = 0; i < hgr_graph_input_count(graph); ++i) {
    hgr_tensor_info_t info;
    ASSERT_OK(hgr_graph_input_info(graph, i, &info));
    size_t found;
    hgr_status_t missing = params ? hgr_params_find(params, info.name, &found) : NULL;
    bool is_param = params && !missing;
    hgr_status_free(missing);
    if (!is_param) ASSERT_OK(hgr_executor_set_input(executor, i, inputs[given++], info.bytes));
  }
  ASSERT_OK(hgr_executor_run(executor));
  ASSERT_OK(hgr_executor_wait(executor));
  hgr_tensor_info_t info;
  ASSERT_OK(hgr_graph_output_info(graph, output, &info));
  float* result = malloc(info.bytes + 1);
  ASSERT_OK(hgr_executor_get_output(executor, output, result, info.bytes));
  if (out_stats) *out_stats = hgr_executor_program_stats(executor);
  hgr_executor_release(executor);
  return result;
}

static float* random_floats(hgr_test_rng_t* rng, size_t count, float lo, float hi) {
  float* values = malloc(count * sizeof(float) + 1);
  for (size_t i = 0; i < count; ++i) values[i] = hgr_test_rng_float(rng, lo, hi);
  return values;
}

static const hgr_program_cache_t no_cache = {.mode = HGR_PROGRAM_CACHE_OFF};

/* Chains over every input kind the kernel knows (full, scalar, per-channel, a
 * general broadcast) and most fusable ops; each output fused vs unfused on every
 * device. The tolerance allows the compiler to contract a * b + c into an fma in
 * the fused kernel (separate kernels round in between). */
static void fused_graph_matches_the_unfused_one_on_random_data(void** state) {
  (void)state;
  hgr_builder_t* builder = NULL;
  ASSERT_OK(hgr_builder_create(NULL, &builder));
  const int64_t rows[2] = {4, 1}, wide[4] = {2, 3, 4, 5};
  hgr_value_t x = input(builder, "x", F32, 4, wide);
  hgr_value_t y = input(builder, "y", F32, 4, wide);
  hgr_value_t c = input(builder, "c", F32, 3, CHANNEL);
  hgr_value_t r = input(builder, "r", F32, 2, rows);
  float two = 2;
  hgr_value_t s;
  ASSERT_OK(hgr_builder_add_constant(builder, "two", F32, NULL, 0, &two, sizeof(two), &s));
  hgr_attrs_t* clip = clip_attrs(-0.5, 0.75);
  hgr_attrs_t* leaky = NULL;
  ASSERT_OK(hgr_attrs_create(&leaky));
  ASSERT_OK(hgr_attrs_set_float(leaky, "alpha", 0.125));
  hgr_attrs_t* hard = NULL;
  ASSERT_OK(hgr_attrs_create(&hard));
  ASSERT_OK(hgr_attrs_set_float(hard, "alpha", 0.3));
  /* out0 = tanh(gelu(leaky(x * c + r)) - sigmoid(y) / s): gelu calls a helper
   * function the generated source defines */
  hgr_value_t v = op(builder, "m", "multiply", x, &c, NULL);
  v = op(builder, "a", "add", v, &r, NULL);
  v = op(builder, "l", "leaky_relu", v, NULL, leaky);
  v = op(builder, "ge", "gelu", v, NULL, NULL);
  hgr_value_t g = op(builder, "g", "sigmoid", y, NULL, NULL);
  g = op(builder, "d", "divide", g, &s, NULL);
  v = op(builder, "sub", "subtract", v, &g, NULL);
  hgr_value_t out0 = op(builder, "out0", "tanh", v, NULL, NULL);
  /* out1 = hard_sigmoid(max(clip(y), min(x, r))) * gelu_tanh(exp(-|x|)) + relu(c) */
  hgr_value_t k = op(builder, "k", "clip", y, NULL, clip);
  hgr_value_t mn = op(builder, "mn", "minimum", x, &r, NULL);
  k = op(builder, "mx", "maximum", k, &mn, NULL);
  k = op(builder, "hs", "hard_sigmoid", k, NULL, hard);
  hgr_value_t e = op(builder, "ab", "abs", x, NULL, NULL);
  e = op(builder, "ng", "negative", e, NULL, NULL);
  e = op(builder, "ex", "exp", e, NULL, NULL);
  e = op(builder, "gt", "gelu_tanh", e, NULL, NULL);
  k = op(builder, "kk", "multiply", k, &e, NULL);
  hgr_value_t rc = op(builder, "rc", "relu", c, NULL, NULL);
  hgr_value_t out1 = op(builder, "out1", "add", k, &rc, NULL);
  hgr_attrs_release(clip);
  hgr_attrs_release(leaky);
  hgr_attrs_release(hard);
  ASSERT_OK(hgr_builder_mark_output(builder, out0));
  ASSERT_OK(hgr_builder_mark_output(builder, out1));
  hgr_graph_t* original = NULL;
  hgr_params_t* params = NULL;
  hgr__fuse_report_t report;
  hgr_graph_t* fused = finish_and_fuse(builder, &report, &original, &params);
  assert_int_equal(report.groups, 2);
  assert_int_equal(report.fused_nodes, count_ops(original, NULL));
  assert_int_equal(count_ops(fused, NULL), 2);

  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 16);
  float* inputs[4] = {random_floats(&rng, 120, -3, 3), random_floats(&rng, 120, -3, 3), random_floats(&rng, 3, -2, 2),
                      random_floats(&rng, 4, -1, 1)};
  for (int d = 0; d < spec_count; ++d)
    for (size_t o = 0; o < 2; ++o) {
      float* want = run(specs[d], original, params, inputs, o, no_cache, NULL);
      float* got = run(specs[d], fused, params, inputs, o, no_cache, NULL);
      for (size_t i = 0; i < 120; ++i)
        if (!(fabsf(got[i] - want[i]) <= 1e-5f * fabsf(want[i]) + 1e-6f))
          fail_msg("%s: output %zu element %zu: fused %.9g, unfused %.9g", specs[d], o, i, got[i], want[i]);
      free(want);
      free(got);
    }
  for (int i = 0; i < 4; ++i) free(inputs[i]);
  hgr_params_release(params);
  hgr_graph_release(original);
  hgr_graph_release(fused);
}

/* Full inputs only (one work-item per 8 elements, the last one's 5 elements one by
 * one) through the ops whose code selects per lane or takes a literal parameter:
 * 37 elements, fused against unfused on every device. */
static void fused_full_inputs_match_the_unfused_ones_in_every_lane(void** state) {
  (void)state;
  hgr_builder_t* builder = NULL;
  ASSERT_OK(hgr_builder_create(NULL, &builder));
  const int64_t shape[1] = {37};
  hgr_value_t x = input(builder, "x", F32, 1, shape);
  hgr_value_t y = input(builder, "y", F32, 1, shape);
  hgr_attrs_t* clip = clip_attrs(-0.5, 0.75);
  hgr_attrs_t* alpha = NULL;
  ASSERT_OK(hgr_attrs_create(&alpha));
  ASSERT_OK(hgr_attrs_set_float(alpha, "alpha", 0.3));
  hgr_value_t v = op(builder, "a", "add", x, &y, NULL);
  v = op(builder, "hs", "hard_swish", v, NULL, NULL);
  v = op(builder, "e", "elu", v, NULL, alpha);
  v = op(builder, "l", "leaky_relu", v, NULL, alpha);
  v = op(builder, "m", "multiply", v, &y, NULL);
  v = op(builder, "c", "clip", v, NULL, clip);
  hgr_value_t out = op(builder, "out", "hard_sigmoid", v, NULL, alpha);
  hgr_attrs_release(clip);
  hgr_attrs_release(alpha);
  ASSERT_OK(hgr_builder_mark_output(builder, out));
  hgr_graph_t* original = NULL;
  hgr__fuse_report_t report;
  hgr_graph_t* fused = finish_and_fuse(builder, &report, &original, NULL);
  assert_int_equal(report.groups, 1);
  assert_int_equal(count_ops(fused, NULL), 1);
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 37);
  float* inputs[2] = {random_floats(&rng, 37, -6, 6), random_floats(&rng, 37, -2, 2)};
  for (int d = 0; d < spec_count; ++d) {
    float* want = run(specs[d], original, NULL, inputs, 0, no_cache, NULL);
    float* got = run(specs[d], fused, NULL, inputs, 0, no_cache, NULL);
    for (size_t i = 0; i < 37; ++i)
      if (!(fabsf(got[i] - want[i]) <= 1e-5f * fabsf(want[i]) + 1e-6f))
        fail_msg("%s: element %zu: fused %.9g, unfused %.9g", specs[d], i, got[i], want[i]);
    free(want);
    free(got);
  }
  for (int i = 0; i < 2; ++i) free(inputs[i]);
  hgr_graph_release(original);
  hgr_graph_release(fused);
}

/* batch_norm + relu fused against the two nodes, on every device. */
static void fused_batch_norm_matches_the_unfused_one(void** state) {
  (void)state;
  hgr_value_t out;
  hgr_builder_t* builder = batch_norm_relu(1, &out);
  ASSERT_OK(hgr_builder_mark_output(builder, out));
  hgr_graph_t* original = NULL;
  hgr__fuse_report_t report;
  hgr_graph_t* fused = finish_and_fuse(builder, &report, &original, NULL);
  assert_int_equal(report.groups, 1);
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 5);
  float* inputs[5] = {random_floats(&rng, 120, -3, 3), random_floats(&rng, 3, -2, 2), random_floats(&rng, 3, -1, 1),
                      random_floats(&rng, 3, -1, 1), random_floats(&rng, 3, 0.25f, 2)};
  for (int d = 0; d < spec_count; ++d) {
    float* want = run(specs[d], original, NULL, inputs, 0, no_cache, NULL);
    float* got = run(specs[d], fused, NULL, inputs, 0, no_cache, NULL);
    for (size_t i = 0; i < 120; ++i)
      if (!(fabsf(got[i] - want[i]) <= 1e-5f * fabsf(want[i]) + 1e-6f))
        fail_msg("%s: element %zu: fused %.9g, unfused %.9g", specs[d], i, got[i], want[i]);
    free(want);
    free(got);
  }
  for (int i = 0; i < 5; ++i) free(inputs[i]);
  hgr_graph_release(original);
  hgr_graph_release(fused);
}

/* Two chains of one expression on different shapes that broadcast alike: one
 * program, compiled once;
 * a second executor loads it from the program cache. */
static void identical_expressions_share_a_program_that_the_cache_keeps(void** state) {
  (void)state;
  hgr_builder_t* builder = NULL;
  ASSERT_OK(hgr_builder_create(NULL, &builder));
  const int64_t small[4] = {2, 3, 2, 2}; /* broadcast along the same dimensions as NCHW's */
  hgr_value_t outs[2];
  for (int k = 0; k < 2; ++k) {
    char name[16];
    snprintf(name, sizeof(name), "x%d", k);
    hgr_value_t x = input(builder, name, F32, 4, k ? small : NCHW);
    snprintf(name, sizeof(name), "c%d", k);
    hgr_value_t c = input(builder, name, F32, 3, CHANNEL);
    snprintf(name, sizeof(name), "m%d", k);
    hgr_value_t m = op(builder, name, "multiply", x, &c, NULL);
    snprintf(name, sizeof(name), "out%d", k);
    outs[k] = op(builder, name, "relu", m, NULL, NULL);
  }
  ASSERT_OK(hgr_builder_mark_output(builder, outs[0]));
  ASSERT_OK(hgr_builder_mark_output(builder, outs[1]));
  hgr__fuse_report_t report;
  hgr_graph_t* fused = finish_and_fuse(builder, &report, NULL, NULL);
  assert_int_equal(report.groups, 2);

  char directory[512];
  snprintf(directory, sizeof(directory), "%s", hgr_test_tmp_path("fuse-cache"));
  hgr_program_cache_t cache = {.mode = HGR_PROGRAM_CACHE_FILES, .directory = directory, .store_always = true};
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 7);
  float* inputs[4] = {random_floats(&rng, 120, -1, 1), random_floats(&rng, 3, -1, 1), random_floats(&rng, 24, -1, 1),
                      random_floats(&rng, 3, -1, 1)};
  hgr_program_stats_t first, second;
  float* a = run(specs[0], fused, NULL, inputs, 1, cache, &first);
  float* b = run(specs[0], fused, NULL, inputs, 1, cache, &second);
  assert_int_equal(first.programs, 1);
  assert_int_equal(first.from_source, 1);
  assert_int_equal(second.programs, 1);
  assert_int_equal(second.from_cache, 1);
  assert_int_equal(second.from_source, 0);
  for (size_t i = 0; i < 24; ++i) {
    float want = inputs[2][i] * inputs[3][i / 4 % 3];
    want = want > 0 ? want : 0;
    assert_true(a[i] == want && b[i] == want);
  }
  free(a);
  free(b);
  for (int i = 0; i < 4; ++i) free(inputs[i]);
  hgr_graph_release(fused);
}

static int set_up_instance(void** state) {
  (void)state;
  hgr_status_t status = hgr_instance_create(NULL, &instance);
  if (status) {
    char* text = hgr_status_to_string(status);
    fprintf(stderr, "instance: %s\n", text);
    free(text);
    hgr_status_free(status);
    return -1;
  }
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
      cmocka_unit_test(chain_with_per_channel_constants_becomes_one_node),
      cmocka_unit_test(hard_swish_written_out_becomes_one_node_with_literals),
      cmocka_unit_test(value_used_outside_the_group_stays_a_node),
      cmocka_unit_test(graph_output_is_not_fused_away),
      cmocka_unit_test(int32_and_unfusable_ops_are_left_alone),
      cmocka_unit_test(diamond_inside_a_group_reuses_the_value),
      cmocka_unit_test(batch_norm_fuses_with_its_parameters_along_its_axis),
      cmocka_unit_test(placed_graph_is_refused),
      cmocka_unit_test(fused_op_refuses_inputs_that_do_not_broadcast_and_bad_expressions),
  };
  const struct CMUnitTest run_tests[] = {
      cmocka_unit_test(fused_graph_matches_the_unfused_one_on_random_data),
      cmocka_unit_test(fused_full_inputs_match_the_unfused_ones_in_every_lane),
      cmocka_unit_test(fused_batch_norm_matches_the_unfused_one),
      cmocka_unit_test(identical_expressions_share_a_program_that_the_cache_keeps),
  };
  if (argc == 2 && !strcmp(argv[1], "unit")) return cmocka_run_group_tests_name("fuse", unit, NULL, NULL);
  if (argc >= 3 && !strcmp(argv[1], "run")) {
    specs = (const char* const*)argv + 2;
    spec_count = argc - 2;
    return cmocka_run_group_tests_name("fuse_run", run_tests, set_up_instance, tear_down_instance);
  }
  fprintf(stderr, "usage: %s unit | run SPEC...\n", argv[0]);
  return 2;
}
