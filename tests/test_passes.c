/* The graph passes (runtime/passes/, hgr/passes.h): the conv epilogue pass on small
 * builder graphs (what joins a conv2d and what stops the chain, the params folded,
 * made and removed, a 1-D convolution's reshape), the pattern pass (layer norm and
 * GELU written out: the forms that fuse and the near misses that must not), the
 * pipeline's switches, counts and log, a placed graph left alone; and fused graphs
 * (from the builder and from TVM graph JSON) against their unfused originals on
 * random data on each device given.
 *
 *   test_passes unit          the passes, no device
 *   test_passes run SPEC...   fused against unfused on each device */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"
#include "passes.h"
#include "pass_check.h"
#include "testlib.h"

static const hgr_dtype_t F32 = {HGR_DTYPE_FLOAT, 32, 1};

/* A conv2d graph: x [1, C, H, W] -> conv2d (3x3, padding 1, K channels; bias when
 * asked) -> the ops of `chain` in order, each "add" and "multiply" with a per-channel
 * constant [K, 1, 1] ("scale4d": a multiply by [1, K, 1, 1]), "relu", "sigmoid", "clip" (-0.5,
 * 0.75), "leaky" (alpha 0.125), "floor" and "ceiling" (a maximum and a minimum with a
 * random constant [1, 1, 1, 1]), "hswish" (hard_swish), "silu" (a sigmoid "silu<n>_s",
 * then the multiply "silu<n>" of its input by it, torch.onnx's nn.SiLU; "silu_rev" the
 * multiply's inputs the other way round); the last is the output. The ops of a graph are named
 * after their token and place in it ("add1", "relu2"), each constant after its op
 * ("add1_c"). Constants come from rng. */
enum { C = 3, K = 4, H = 5, W = 6 };

static int op_counter; /* the last op's place in the graph being built */

typedef struct conv_graph_t {
  hgr_graph_t* graph;
  hgr_params_t* params;
} conv_graph_t;

static hgr_value_t conv(hgr_builder_t* builder, const char* name, hgr_value_t x, hgr_value_t w, const hgr_value_t* b) {
  hgr_attrs_t* attrs = NULL;
  ASSERT_OK(hgr_attrs_create(&attrs));
  ASSERT_OK(hgr_attrs_set_ints(attrs, "padding", (const int64_t[]){1, 1}, 2));
  hgr_value_t inputs[3] = {x, w, b ? *b : w};
  hgr_value_t out;
  ASSERT_OK(hgr_builder_add_op(builder, name, "conv2d", inputs, b ? 3 : 2, attrs, 1, &out));
  hgr_attrs_release(attrs);
  return out;
}

/* Appends one op of a chain (see conv_graph) after value. */
static hgr_value_t chain_op(hgr_builder_t* builder, const char* op, hgr_value_t value, hgr_test_rng_t* rng,
                            int32_t rank) {
  static const int64_t channel[4] = {K, 1, 1, 1}, leading[4] = {1, K, 1, 1};
  char name[32];
  snprintf(name, sizeof(name), "%s%d", op, ++op_counter);
  hgr_attrs_t* attrs = NULL;
  ASSERT_OK(hgr_attrs_create(&attrs));
  hgr_value_t inputs[2] = {value, value};
  uint32_t count = 1;
  const char* func = op;
  if (!strcmp(op, "add") || !strcmp(op, "multiply") || !strcmp(op, "scale4d")) {
    char constant_name[40];
    snprintf(constant_name, sizeof(constant_name), "%s_c", name);
    bool lead = !strcmp(op, "scale4d");
    inputs[1] = hgr_test_random_constant(builder, constant_name, lead ? leading : channel, lead ? rank : rank - 1, rng);
    count = 2;
    func = lead ? "multiply" : op;
  } else if (!strcmp(op, "clip")) {
    ASSERT_OK(hgr_attrs_set_float(attrs, "a_min", -0.5));
    ASSERT_OK(hgr_attrs_set_float(attrs, "a_max", 0.75));
  } else if (!strcmp(op, "leaky")) {
    ASSERT_OK(hgr_attrs_set_float(attrs, "alpha", 0.125));
    func = "leaky_relu";
  } else if (!strcmp(op, "floor") || !strcmp(op, "ceiling")) { /* max(x, c) or min(x, c), c [1, 1, 1, 1] */
    static const int64_t one[4] = {1, 1, 1, 1};
    char constant_name[40];
    snprintf(constant_name, sizeof(constant_name), "%s_c", name);
    inputs[0] = hgr_test_random_constant(builder, constant_name, one, rank, rng);
    inputs[1] = value; /* the constant first: either order joins */
    count = 2;
    func = !strcmp(op, "floor") ? "maximum" : "minimum";
  } else if (!strcmp(op, "hswish")) {
    func = "hard_swish";
  } else if (!strcmp(op, "silu") || !strcmp(op, "silu_rev")) {
    char sigmoid_name[40];
    snprintf(sigmoid_name, sizeof(sigmoid_name), "%s_s", name);
    hgr_value_t s;
    ASSERT_OK(hgr_builder_add_op(builder, sigmoid_name, "sigmoid", &value, 1, NULL, 1, &s));
    inputs[strcmp(op, "silu") ? 0 : 1] = s;
    count = 2;
    func = "multiply";
  }
  hgr_value_t out;
  ASSERT_OK(hgr_builder_add_op(builder, name, func, inputs, count, attrs, 1, &out));
  hgr_attrs_release(attrs);
  return out;
}

/* A builder with input x [1, C, H, width] and, unless w is NULL, the constant
 * weights w [K, C, 3, 3]; rng seeded with seed. */
static hgr_builder_t* begin_width(hgr_test_rng_t* rng, uint64_t seed, int64_t width, hgr_value_t* x, hgr_value_t* w) {
  hgr_test_rng_seed(rng, seed);
  hgr_builder_t* builder = NULL;
  ASSERT_OK(hgr_builder_create(NULL, &builder));
  op_counter = 0;
  ASSERT_OK(hgr_builder_add_input(builder, "x", F32, (const int64_t[]){1, C, H, width}, 4, x));
  if (w) *w = hgr_test_random_constant(builder, "w", (const int64_t[]){K, C, 3, 3}, 4, rng);
  return builder;
}

static hgr_builder_t* begin(hgr_test_rng_t* rng, uint64_t seed, hgr_value_t* x, hgr_value_t* w) {
  return begin_width(rng, seed, W, x, w);
}

static conv_graph_t finish(hgr_builder_t* builder) {
  conv_graph_t g;
  ASSERT_OK(hgr_builder_finish(builder, &g.graph, &g.params));
  hgr_builder_release(builder);
  return g;
}

static conv_graph_t conv_graph(bool bias, const char* const* chain, size_t length, uint64_t seed) {
  hgr_test_rng_t rng;
  hgr_value_t x, w;
  hgr_builder_t* builder = begin(&rng, seed, &x, &w);
  hgr_value_t b = bias ? hgr_test_random_constant(builder, "b", (const int64_t[]){K}, 1, &rng) : x;
  hgr_value_t v = conv(builder, "conv", x, w, bias ? &b : NULL);
  for (size_t i = 0; i < length; ++i) v = chain_op(builder, chain[i], v, &rng, 4);
  ASSERT_OK(hgr_builder_mark_output(builder, v));
  return finish(builder);
}

static void conv_graph_release(conv_graph_t* g) {
  hgr_graph_release(g->graph);
  hgr_params_release(g->params);
}

static const float* param_data(const hgr_params_t* params, const char* name) {
  size_t index;
  ASSERT_OK(hgr_params_find(params, name, &index));
  hgr_tensor_info_t info;
  const void* data;
  ASSERT_OK(hgr_params_get(params, index, &info, &data));
  return data;
}

static uint32_t count_ops(const hgr_graph_t* graph) {
  uint32_t count = 0;
  for (uint32_t n = 0; n < graph->node_count; ++n) count += graph->nodes[n].is_op;
  return count;
}

static const hgr__node_t* node_named(const hgr_graph_t* graph, const char* name) {
  for (uint32_t n = 0; n < graph->node_count; ++n)
    if (!strcmp(graph->nodes[n].name, name)) return &graph->nodes[n];
  fail_msg("no node '%s'", name);
  return NULL;
}

static const char* input_name(const hgr_graph_t* graph, const hgr__node_t* node, uint32_t i) {
  return graph->nodes[node->inputs[i].node_id].name;
}

static hgr_passes_options_t only(bool conv_epilogue, bool elementwise) {
  hgr_passes_options_t options;
  hgr_passes_options_init(&options);
  options.conv_epilogue = conv_epilogue;
  options.elementwise = elementwise;
  return options;
}

/* ---- the conv epilogue pass ----------------------------------------------------------- */

static void bias_add_and_relu_fold_into_one_conv2d(void** state) {
  (void)state;
  static const char* const chain[] = {"add", "relu"};
  conv_graph_t g = conv_graph(true, chain, 2, 1);
  const float* b = param_data(g.params, "b");
  const float* c = param_data(g.params, "add1_c");
  float want[K];
  for (int k = 0; k < K; ++k) want[k] = b[k] + c[k];
  hgr_passes_options_t options = only(true, false);
  hgr_passes_report_t report;
  hgr_graph_t* fused = NULL;
  ASSERT_OK(hgr_passes_apply(g.graph, g.params, &options, &fused, &report));
  assert_int_equal(report.conv_epilogues, 1);
  assert_int_equal(report.conv_epilogue_fused, 2);
  assert_false(report.placed);
  assert_int_equal(count_ops(fused), 1);
  /* named like the chain's last node, so the output keeps its name */
  const hgr__node_t* node = node_named(fused, "relu2");
  assert_string_equal(node->func_name, "conv2d");
  assert_string_equal(hgr__node_attr(node, "activation"), "relu");
  assert_string_equal(hgr__node_attr(node, "padding"), "[1, 1]");
  assert_int_equal(node->input_count, 3);
  assert_string_equal(input_name(fused, node, 1), "w");
  assert_string_equal(input_name(fused, node, 2), "conv.bias");
  /* the old bias and the added constant leave the graph and the params */
  assert_int_equal(fused->arg_count, 3);
  assert_false(hgr_test_has_param(g.params, "b"));
  assert_false(hgr_test_has_param(g.params, "add1_c"));
  assert_int_equal(hgr_params_count(g.params), 2);
  const float* bias = param_data(g.params, "conv.bias");
  for (int k = 0; k < K; ++k) assert_true(bias[k] == want[k]);
  hgr_tensor_info_t info;
  ASSERT_OK(hgr_graph_output_info(fused, 0, &info));
  assert_string_equal(info.name, "relu2:0");
  hgr_graph_release(fused);
  conv_graph_release(&g);
}

static void multiply_scales_the_weights_and_add_makes_a_bias(void** state) {
  (void)state;
  static const char* const chain[] = {"scale4d", "add", "clip"};
  conv_graph_t g = conv_graph(false, chain, 3, 2);
  float w[K * C * 9], s[K], c[K];
  memcpy(w, param_data(g.params, "w"), sizeof(w));
  memcpy(s, param_data(g.params, "scale4d1_c"), sizeof(s));
  memcpy(c, param_data(g.params, "add2_c"), sizeof(c));
  hgr_passes_report_t report;
  hgr_graph_t* fused = NULL;
  ASSERT_OK(hgr_passes_apply(g.graph, g.params, NULL, &fused, &report));
  assert_int_equal(report.conv_epilogues, 1);
  assert_int_equal(report.conv_epilogue_fused, 3);
  assert_int_equal(report.elementwise_groups, 0);
  const hgr__node_t* node = node_named(fused, "clip3");
  assert_string_equal(hgr__node_attr(node, "activation"), "clip");
  assert_string_equal(hgr__node_attr(node, "a_min"), "-0.5");
  assert_string_equal(hgr__node_attr(node, "a_max"), "0.75");
  assert_string_equal(input_name(fused, node, 1), "conv.weight");
  assert_string_equal(input_name(fused, node, 2), "conv.bias");
  assert_int_equal(hgr_params_count(g.params), 2);
  assert_false(hgr_test_has_param(g.params, "w"));
  const float* weight = param_data(g.params, "conv.weight");
  const float* bias = param_data(g.params, "conv.bias");
  for (int i = 0; i < K * C * 9; ++i) assert_true(weight[i] == (float)((double)w[i] * s[i / (C * 9)]));
  for (int k = 0; k < K; ++k) assert_true(bias[k] == c[k]);
  hgr_graph_release(fused);
  conv_graph_release(&g);
}

/* A clamp after a leaky relu joins it as activation leaky_relu_clip: a maximum with a
 * constant of one value (a lower bound), a minimum (an upper one) or a clip, the
 * maximum's constant leaving the params; after a relu it stays a node. */
static void a_clamp_after_a_leaky_relu_joins_it(void** state) {
  (void)state;
  static const char* const floor_chain[] = {"leaky", "floor"};
  conv_graph_t g = conv_graph(true, floor_chain, 2, 5);
  float c = param_data(g.params, "floor2_c")[0];
  hgr_passes_report_t report;
  hgr_graph_t* fused = NULL;
  ASSERT_OK(hgr_passes_apply(g.graph, g.params, NULL, &fused, &report));
  assert_int_equal(report.conv_epilogue_fused, 2);
  const hgr__node_t* node = node_named(fused, "floor2");
  assert_string_equal(hgr__node_attr(node, "activation"), "leaky_relu_clip");
  assert_string_equal(hgr__node_attr(node, "alpha"), "0.125");
  char want[32];
  snprintf(want, sizeof(want), "%.9g", (double)c);
  assert_string_equal(hgr__node_attr(node, "a_min"), want);
  assert_string_equal(hgr__node_attr(node, "a_max"), "inf");
  assert_false(hgr_test_has_param(g.params, "floor2_c"));
  assert_int_equal(count_ops(fused), 1);
  hgr_graph_release(fused);
  conv_graph_release(&g);

  static const char* const ceiling_chain[] = {"leaky", "ceiling"};
  g = conv_graph(false, ceiling_chain, 2, 6);
  ASSERT_OK(hgr_passes_apply(g.graph, g.params, NULL, &fused, &report));
  node = node_named(fused, "ceiling2");
  assert_string_equal(hgr__node_attr(node, "activation"), "leaky_relu_clip");
  assert_string_equal(hgr__node_attr(node, "a_min"), "-inf");
  hgr_graph_release(fused);
  conv_graph_release(&g);

  static const char* const relu_chain[] = {"relu", "floor"};
  g = conv_graph(false, relu_chain, 2, 7);
  ASSERT_OK(hgr_passes_apply(g.graph, g.params, NULL, &fused, &report));
  assert_int_equal(report.conv_epilogue_fused, 1);
  assert_string_equal(hgr__node_attr(node_named(fused, "relu1"), "activation"), "relu");
  hgr_graph_release(fused);
  conv_graph_release(&g);
}

/* Without params nothing is known constant: the activation alone joins, and an add
 * before it keeps it out. */
static void without_params_only_an_activation_joins(void** state) {
  (void)state;
  static const char* const leaky[] = {"leaky"};
  conv_graph_t g = conv_graph(true, leaky, 1, 3);
  hgr_passes_report_t report;
  hgr_graph_t* fused = NULL;
  ASSERT_OK(hgr_passes_apply(g.graph, NULL, NULL, &fused, &report));
  assert_int_equal(report.conv_epilogue_fused, 1);
  const hgr__node_t* node = node_named(fused, "leaky1");
  assert_string_equal(hgr__node_attr(node, "activation"), "leaky_relu");
  assert_string_equal(hgr__node_attr(node, "alpha"), "0.125");
  assert_string_equal(input_name(fused, node, 2), "b");
  hgr_graph_release(fused);
  conv_graph_release(&g);

  static const char* const add_relu[] = {"add", "relu"};
  g = conv_graph(true, add_relu, 2, 4);
  ASSERT_OK(hgr_passes_apply(g.graph, NULL, NULL, &fused, &report));
  assert_int_equal(report.conv_epilogues, 0);
  /* elementwise fusion takes the add and relu instead */
  assert_int_equal(report.elementwise_fused, 2);
  assert_int_equal(count_ops(fused), 2);
  hgr_graph_release(fused);
  conv_graph_release(&g);
}

/* A value read twice or that is a graph output ends the chain before the reader. */
static void a_value_read_twice_or_an_output_ends_the_chain(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_value_t x, w;
  hgr_builder_t* builder = begin(&rng, 5, &x, &w);
  /* conv1 -> add -> (relu, sigmoid): the add joins, the two readers stay */
  hgr_value_t v = chain_op(builder, "add", conv(builder, "conv1", x, w, NULL), &rng, 4);
  hgr_value_t r, s;
  ASSERT_OK(hgr_builder_add_op(builder, "r", "relu", &v, 1, NULL, 1, &r));
  ASSERT_OK(hgr_builder_add_op(builder, "s", "sigmoid", &v, 1, NULL, 1, &s));
  /* conv2 (an output) -> relu: nothing joins */
  hgr_value_t c2 = conv(builder, "conv2", x, w, NULL), r2;
  ASSERT_OK(hgr_builder_add_op(builder, "r2", "relu", &c2, 1, NULL, 1, &r2));
  ASSERT_OK(hgr_builder_mark_output(builder, r));
  ASSERT_OK(hgr_builder_mark_output(builder, s));
  ASSERT_OK(hgr_builder_mark_output(builder, c2));
  ASSERT_OK(hgr_builder_mark_output(builder, r2));
  conv_graph_t g = finish(builder);
  hgr_passes_options_t options = only(true, false);
  hgr_passes_report_t report;
  hgr_graph_t* fused = NULL;
  ASSERT_OK(hgr_passes_apply(g.graph, g.params, &options, &fused, &report));
  assert_int_equal(report.conv_epilogues, 1);
  assert_int_equal(report.conv_epilogue_fused, 1);
  const hgr__node_t* node = node_named(fused, "add1");
  assert_string_equal(node->func_name, "conv2d");
  assert_null(hgr__node_attr(node, "activation"));
  assert_string_equal(node_named(fused, "r")->func_name, "relu");
  assert_string_equal(node_named(fused, "conv2")->func_name, "conv2d");
  assert_string_equal(node_named(fused, "r2")->func_name, "relu");
  /* w stays: conv2 reads it */
  assert_true(hgr_test_has_param(g.params, "w"));
  assert_true(hgr_test_has_param(g.params, "conv1.bias"));
  hgr_graph_release(fused);
  conv_graph_release(&g);
}

/* A SiLU written out (a sigmoid and the multiply of its input by it) joins as
 * activation "silu", in either order of the multiply's inputs; hard_swish joins as
 * itself. The sigmoid's value read by anything else, or the multiply of the value by
 * another sigmoid's, leaves the chain at the conv. */
static void a_written_out_silu_and_hard_swish_join(void** state) {
  (void)state;
  static const char* const chains[][2] = {{"add", "silu"}, {"silu_rev"}, {"hswish"}};
  static const size_t lengths[] = {2, 1, 1};
  static const char* const last[] = {"silu2", "silu_rev1", "hswish1"};
  static const char* const activation[] = {"silu", "silu", "hard_swish"};
  static const uint32_t fused_nodes[] = {3, 2, 1};
  for (size_t k = 0; k < 3; ++k) {
    conv_graph_t g = conv_graph(k == 0, chains[k], lengths[k], 40 + k);
    hgr_passes_options_t options = only(true, false);
    hgr_passes_report_t report;
    hgr_graph_t* fused = NULL;
    ASSERT_OK(hgr_passes_apply(g.graph, g.params, &options, &fused, &report));
    assert_int_equal(report.conv_epilogues, 1);
    assert_int_equal(report.conv_epilogue_fused, fused_nodes[k]);
    assert_int_equal(count_ops(fused), 1);
    const hgr__node_t* node = node_named(fused, last[k]);
    assert_string_equal(node->func_name, "conv2d");
    assert_string_equal(hgr__node_attr(node, "activation"), activation[k]);
    hgr_graph_release(fused);
    conv_graph_release(&g);
  }
  /* the sigmoid's value also an output; the multiply of the conv by the sigmoid of
   * another value */
  for (int variant = 0; variant < 2; ++variant) {
    hgr_test_rng_t rng;
    hgr_value_t x, w;
    hgr_builder_t* builder = begin(&rng, 50 + (uint64_t)variant, &x, &w);
    hgr_value_t c = conv(builder, "conv", x, w, NULL), s, m;
    hgr_value_t other = variant ? conv(builder, "conv_b", x, w, NULL) : c;
    ASSERT_OK(hgr_builder_add_op(builder, "s", "sigmoid", &other, 1, NULL, 1, &s));
    ASSERT_OK(hgr_builder_add_op(builder, "m", "multiply", (hgr_value_t[]){c, s}, 2, NULL, 1, &m));
    ASSERT_OK(hgr_builder_mark_output(builder, m));
    if (!variant) ASSERT_OK(hgr_builder_mark_output(builder, s));
    conv_graph_t g = finish(builder);
    hgr_passes_options_t options = only(true, false);
    hgr_passes_report_t report;
    hgr_graph_t* fused = NULL;
    ASSERT_OK(hgr_passes_apply(g.graph, g.params, &options, &fused, &report));
    /* the second conv's own chain is the sigmoid alone (its value's one reader) */
    assert_int_equal(report.conv_epilogues, (uint32_t)variant);
    assert_string_equal(node_named(fused, "m")->func_name, "multiply");
    assert_null(hgr__node_attr(node_named(fused, "conv"), "activation"));
    hgr_graph_release(fused);
    conv_graph_release(&g);
  }
}

/* Weights that are a graph input take no multiply (nothing to scale at load). */
static void weights_given_at_run_time_take_no_multiply(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_value_t x, w;
  hgr_builder_t* builder = begin(&rng, 6, &x, NULL);
  ASSERT_OK(hgr_builder_add_input(builder, "w", F32, (const int64_t[]){K, C, 3, 3}, 4, &w));
  hgr_value_t v = chain_op(builder, "multiply", conv(builder, "conv", x, w, NULL), &rng, 4);
  v = chain_op(builder, "relu", v, &rng, 4);
  ASSERT_OK(hgr_builder_mark_output(builder, v));
  conv_graph_t g = finish(builder);
  hgr_passes_options_t options = only(true, false);
  hgr_passes_report_t report;
  hgr_graph_t* fused = NULL;
  ASSERT_OK(hgr_passes_apply(g.graph, g.params, &options, &fused, &report));
  assert_int_equal(report.conv_epilogues, 0);
  assert_ptr_equal(fused, g.graph); /* nothing changed: the same graph, retained */
  assert_int_equal(hgr_params_count(g.params), 1);
  hgr_graph_release(fused);
  conv_graph_release(&g);
}

/* A 1-D convolution as the ONNX loader writes it: conv2d of height 1, then a
 * reshape to [N, K, W]; the chain after the reshape moves before it. */
static conv_graph_t one_dimensional_conv(uint64_t seed) {
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, seed);
  hgr_builder_t* builder = NULL;
  ASSERT_OK(hgr_builder_create(NULL, &builder));
  op_counter = 0;
  hgr_value_t x;
  ASSERT_OK(hgr_builder_add_input(builder, "x", F32, (const int64_t[]){2, C, 1, W}, 4, &x));
  hgr_value_t w = hgr_test_random_constant(builder, "w", (const int64_t[]){K, C, 1, 3}, 4, &rng);
  hgr_value_t b = hgr_test_random_constant(builder, "b", (const int64_t[]){K}, 1, &rng);
  hgr_attrs_t* attrs = NULL;
  ASSERT_OK(hgr_attrs_create(&attrs));
  ASSERT_OK(hgr_attrs_set_ints(attrs, "padding", (const int64_t[]){0, 1}, 2));
  hgr_value_t v;
  ASSERT_OK(hgr_builder_add_op(builder, "conv", "conv2d", (hgr_value_t[]){x, w, b}, 3, attrs, 1, &v));
  hgr_attrs_release(attrs);
  ASSERT_OK(hgr_attrs_create(&attrs));
  ASSERT_OK(hgr_attrs_set_ints(attrs, "newshape", (const int64_t[]){2, K, W}, 3));
  ASSERT_OK(hgr_builder_add_op(builder, "flat", "reshape", &v, 1, attrs, 1, &v));
  hgr_attrs_release(attrs);
  v = chain_op(builder, "multiply", v, &rng, 3);
  v = chain_op(builder, "add", v, &rng, 3);
  v = chain_op(builder, "leaky", v, &rng, 3);
  ASSERT_OK(hgr_builder_mark_output(builder, v));
  return finish(builder);
}

static void a_one_dimensional_conv_takes_the_chain_after_its_reshape(void** state) {
  (void)state;
  conv_graph_t g = one_dimensional_conv(7);
  hgr_passes_report_t report;
  hgr_graph_t* fused = NULL;
  ASSERT_OK(hgr_passes_apply(g.graph, g.params, NULL, &fused, &report));
  assert_int_equal(report.conv_epilogues, 1);
  assert_int_equal(report.conv_epilogue_fused, 3);
  assert_int_equal(count_ops(fused), 2);
  const hgr__node_t* node = node_named(fused, "conv");
  assert_string_equal(hgr__node_attr(node, "activation"), "leaky_relu");
  /* the reshape reads the fused conv2d and gives the chain's value, by its name */
  const hgr__node_t* reshape = node_named(fused, "leaky3");
  assert_string_equal(reshape->func_name, "reshape");
  assert_ptr_equal(&fused->nodes[reshape->inputs[0].node_id], node);
  hgr_graph_release(fused);
  conv_graph_release(&g);
}

/* Two convs read one weight param: the one that scales it gets its own copy. */
static void a_shared_weight_stays_for_the_conv_that_does_not_scale_it(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_value_t x, w;
  hgr_builder_t* builder = begin(&rng, 8, &x, &w);
  hgr_value_t a = chain_op(builder, "multiply", conv(builder, "conv_a", x, w, NULL), &rng, 4);
  hgr_value_t b = conv(builder, "conv_b", x, w, NULL);
  ASSERT_OK(hgr_builder_mark_output(builder, a));
  ASSERT_OK(hgr_builder_mark_output(builder, b));
  conv_graph_t g = finish(builder);
  hgr_graph_t* fused = NULL;
  ASSERT_OK(hgr_passes_apply(g.graph, g.params, NULL, &fused, NULL));
  assert_true(hgr_test_has_param(g.params, "w"));
  assert_true(hgr_test_has_param(g.params, "conv_a.weight"));
  assert_string_equal(input_name(fused, node_named(fused, "conv_b"), 1), "w");
  hgr_graph_release(fused);
  conv_graph_release(&g);
}

/* A name the pass would give is taken: the next free "#k". */
static void new_param_names_do_not_collide(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_value_t x, w;
  hgr_builder_t* builder = begin(&rng, 9, &x, &w);
  hgr_value_t taken = hgr_test_random_constant(builder, "conv.bias", (const int64_t[]){1}, 1, &rng);
  hgr_value_t v = chain_op(builder, "add", conv(builder, "conv", x, w, NULL), &rng, 4);
  ASSERT_OK(hgr_builder_mark_output(builder, v));
  ASSERT_OK(hgr_builder_mark_output(builder, taken));
  conv_graph_t g = finish(builder);
  hgr_graph_t* fused = NULL;
  ASSERT_OK(hgr_passes_apply(g.graph, g.params, NULL, &fused, NULL));
  assert_true(hgr_test_has_param(g.params, "conv.bias"));
  assert_true(hgr_test_has_param(g.params, "conv.bias#2"));
  hgr_graph_release(fused);
  conv_graph_release(&g);
}

/* x [1, C, H, width] -> conv2d (3x3, padding 1, a bias) -> relu -> max_pool2d
 * (pool_size window, strides `strides`, padding `padding` on every side), named
 * "pool". */
static conv_graph_t pool_graph(int64_t width, const int64_t window[2], const int64_t strides[2], int64_t padding,
                               uint64_t seed) {
  hgr_test_rng_t rng;
  hgr_value_t x, w;
  hgr_builder_t* builder = begin_width(&rng, seed, width, &x, &w);
  hgr_value_t b = hgr_test_random_constant(builder, "b", (const int64_t[]){K}, 1, &rng);
  hgr_value_t v = chain_op(builder, "relu", conv(builder, "conv", x, w, &b), &rng, 4);
  hgr_attrs_t* attrs = NULL;
  ASSERT_OK(hgr_attrs_create(&attrs));
  ASSERT_OK(hgr_attrs_set_ints(attrs, "pool_size", window, 2));
  ASSERT_OK(hgr_attrs_set_ints(attrs, "strides", strides, 2));
  ASSERT_OK(hgr_attrs_set_ints(attrs, "padding", &padding, 1));
  ASSERT_OK(hgr_builder_add_op(builder, "pool", "max_pool2d", &v, 1, attrs, 1, &v));
  hgr_attrs_release(attrs);
  ASSERT_OK(hgr_builder_mark_output(builder, v));
  return finish(builder);
}

/* A max pool whose windows tile the value (window = stride, no padding) joins the
 * chain where one kernel runs both (ops_conv.c's is_rows_pool: stride 1, windows of
 * [2, 2] or [2, 1], at any width): the conv2d takes attr pool_size and the pool's
 * name and output. */
static void a_tiling_max_pool_joins_the_conv(void** state) {
  (void)state;
  static const int64_t two[2] = {2, 2}, tall[2] = {2, 1};
  struct {
    int64_t width;
    const int64_t *window, *strides;
    int64_t padding;
    const char* pool_size; /* NULL: the pool stays */
  } cases[] = {
      {32, two, two, 0, "[2, 2]"},
      {17, tall, tall, 0, "[2, 1]"},
      {32, two, tall, 0, NULL},                              /* windows overlap */
      {32, two, two, 1, NULL},                               /* padding */
      {32, (const int64_t[]){3, 3}, (const int64_t[]){3, 3}, 0, NULL}, /* no register kernel */
      {W, two, two, 0, "[2, 2]"},                            /* rows of 6: at every shape */
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    conv_graph_t g = pool_graph(cases[i].width, cases[i].window, cases[i].strides, cases[i].padding, 40 + i);
    hgr_passes_options_t options = only(true, false);
    hgr_passes_report_t report;
    hgr_graph_t* fused = NULL;
    ASSERT_OK(hgr_passes_apply(g.graph, g.params, &options, &fused, &report));
    assert_int_equal(report.conv_epilogues, 1);
    assert_int_equal(report.conv_epilogue_fused, cases[i].pool_size ? 2 : 1);
    assert_int_equal(count_ops(fused), cases[i].pool_size ? 1 : 2);
    const hgr__node_t* node = node_named(fused, cases[i].pool_size ? "pool" : "relu1");
    assert_string_equal(node->func_name, "conv2d");
    assert_string_equal(hgr__node_attr(node, "activation"), "relu");
    if (cases[i].pool_size) {
      assert_string_equal(hgr__node_attr(node, "pool_size"), cases[i].pool_size);
      hgr_tensor_info_t info;
      ASSERT_OK(hgr_graph_output_info(fused, 0, &info));
      assert_string_equal(info.name, "pool:0");
      assert_int_equal(info.shape[2], H / cases[i].window[0]);
      assert_int_equal(info.shape[3], cases[i].width / cases[i].window[1]);
    } else {
      assert_null(hgr__node_attr(node, "pool_size"));
    }
    hgr_graph_release(fused);
    conv_graph_release(&g);
  }
}

/* ---- layer norm and GELU written out ----------------------------------------------- */

/* A builder with input x [rows, 8] (rank 2) or [2, rows, 8] (rank 3). */
enum { LEN = 8 };

static hgr_builder_t* begin_rows(int64_t rows, int32_t rank, hgr_value_t* x) {
  hgr_builder_t* builder = NULL;
  ASSERT_OK(hgr_builder_create(NULL, &builder));
  const int64_t shape[3] = {2, rows, LEN};
  ASSERT_OK(hgr_builder_add_input(builder, "x", F32, rank == 3 ? shape : shape + 1, rank, x));
  return builder;
}

static hgr_value_t scalar(hgr_builder_t* builder, const char* name, float value) {
  hgr_value_t out;
  ASSERT_OK(hgr_builder_add_constant(builder, name, F32, NULL, 0, &value, sizeof(value), &out));
  return out;
}

static hgr_value_t op1(hgr_builder_t* builder, const char* name, const char* func, hgr_value_t a) {
  hgr_value_t out;
  ASSERT_OK(hgr_builder_add_op(builder, name, func, &a, 1, NULL, 1, &out));
  return out;
}

static hgr_value_t op2(hgr_builder_t* builder, const char* name, const char* func, hgr_value_t a, hgr_value_t b) {
  hgr_value_t out, inputs[2] = {a, b};
  ASSERT_OK(hgr_builder_add_op(builder, name, func, inputs, 2, NULL, 1, &out));
  return out;
}

/* mean over axis `axis`, keeping it, as the ONNX loader writes ReduceMean. */
static hgr_value_t mean_over(hgr_builder_t* builder, const char* name, hgr_value_t a, int64_t axis) {
  hgr_attrs_t* attrs = NULL;
  ASSERT_OK(hgr_attrs_create(&attrs));
  ASSERT_OK(hgr_attrs_set_ints(attrs, "axis", &axis, 1));
  ASSERT_OK(hgr_attrs_set_int(attrs, "keepdims", 1));
  hgr_value_t out;
  ASSERT_OK(hgr_builder_add_op(builder, name, "mean", &a, 1, attrs, 1, &out));
  hgr_attrs_release(attrs);
  return out;
}

/* How a layer norm graph is written, and what spoils it. */
typedef struct ln_form_t {
  const char* square;  /* "power" (torch) or "multiply" (tf2onnx) */
  const char* divide;  /* "divide", "reciprocal" (then multiply) or "rsqrt" (then multiply, no sqrt) */
  bool gamma, beta;
  float epsilon;
  /* near misses */
  int64_t axis;        /* of the second mean; LEN axis: the last */
  float exponent;      /* 2 fuses */
  bool d_read_twice;   /* the centered value also read by a node outside */
  bool var_output;     /* the variance is a graph output too */
} ln_form_t;

static const ln_form_t torch_ln = {"power", "divide", true, true, 1e-5f, -1, 2, false, false};

/* x -> the layer norm of form f over the last axis -> output "ln"; gamma and beta
 * from rng (seed). rows and rank as begin_rows. */
static conv_graph_t ln_graph(const ln_form_t* f, int64_t rows, int32_t rank, uint64_t seed) {
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, seed);
  hgr_value_t x;
  hgr_builder_t* b = begin_rows(rows, rank, &x);
  int64_t axis = f->axis == -1 ? rank - 1 : f->axis;
  hgr_value_t mean = mean_over(b, "mean", x, rank - 1);
  hgr_value_t d = op2(b, "centered", "subtract", x, mean);
  hgr_value_t sq = !strcmp(f->square, "power") ? op2(b, "square", "power", d, scalar(b, "two", f->exponent))
                                               : op2(b, "square", "multiply", d, d);
  hgr_value_t var = mean_over(b, "var", sq, axis);
  hgr_value_t shifted = op2(b, "shifted", "add", var, scalar(b, "eps", f->epsilon));
  hgr_value_t n;
  if (!strcmp(f->divide, "divide")) {
    n = op2(b, "normalized", "divide", d, op1(b, "sd", "sqrt", shifted));
  } else if (!strcmp(f->divide, "reciprocal")) {
    n = op2(b, "normalized", "multiply", op1(b, "inverse", "reciprocal", op1(b, "sd", "sqrt", shifted)), d);
  } else {
    n = op2(b, "normalized", "multiply", d, op1(b, "inverse", "rsqrt", shifted));
  }
  const char* last = f->beta ? "scaled" : "ln";
  if (f->gamma) n = op2(b, last, "multiply", n, hgr_test_random_constant(b, "gamma", (const int64_t[]){LEN}, 1, &rng));
  if (f->beta) n = op2(b, "ln", "add", hgr_test_random_constant(b, "beta", (const int64_t[]){LEN}, 1, &rng), n);
  ASSERT_OK(hgr_builder_mark_output(b, n));
  if (f->d_read_twice) ASSERT_OK(hgr_builder_mark_output(b, op1(b, "outside", "relu", d)));
  if (f->var_output) ASSERT_OK(hgr_builder_mark_output(b, var));
  return finish(b);
}

/* How a GELU is written: which factor the 0.5 multiplies first, and how. */
typedef enum gelu_order_t {
  HALF_LAST,   /* (x * (1 + erf)) * 0.5: torch */
  HALF_FIRST,  /* (x * 0.5) * (1 + erf) */
  HALF_INSIDE, /* x * (0.5 * (1 + erf)) */
} gelu_order_t;

typedef struct gelu_form_t {
  bool tanh_form;    /* else erf */
  bool multiply;     /* erf: x * 0.7071 (else x / 1.4142); tanh: x^3 as x * (x * x) (else power) */
  gelu_order_t order;
  float half, scale; /* 0.5; erf: sqrt(2) (a divide) or sqrt(1/2); tanh: sqrt(2 / pi) */
  bool term_output;  /* near miss: the erf or tanh value is a graph output too */
} gelu_form_t;

/* x [2, rows, 8] -> add a [8] bias (so that elementwise fusion has a neighbour) ->
 * the GELU of form f -> output "gelu". */
static conv_graph_t gelu_graph(const gelu_form_t* f, int64_t rows, uint64_t seed) {
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, seed);
  hgr_value_t x;
  hgr_builder_t* b = begin_rows(rows, 3, &x);
  x = op2(b, "bias_add", "add", x, hgr_test_random_constant(b, "bias", (const int64_t[]){LEN}, 1, &rng));
  hgr_value_t term;
  if (f->tanh_form) {
    hgr_value_t cube = f->multiply ? op2(b, "cube", "multiply", x, op2(b, "x2", "multiply", x, x))
                                   : op2(b, "cube", "power", x, scalar(b, "three", 3));
    hgr_value_t inner = op2(b, "inner", "add", x, op2(b, "cubic", "multiply", scalar(b, "k", 0.044715f), cube));
    term = op1(b, "term", "tanh", op2(b, "scaled", "multiply", inner, scalar(b, "scale", f->scale)));
  } else {
    hgr_value_t scaled = op2(b, "scaled", f->multiply ? "multiply" : "divide", x, scalar(b, "scale", f->scale));
    term = op1(b, "term", "erf", scaled);
  }
  hgr_value_t one_plus = op2(b, "one_plus", "add", scalar(b, "one", 1), term);
  hgr_value_t half = scalar(b, "half", f->half), y;
  if (f->order == HALF_LAST) y = op2(b, "gelu", "multiply", op2(b, "product", "multiply", x, one_plus), half);
  else if (f->order == HALF_FIRST) y = op2(b, "gelu", "multiply", op2(b, "product", "multiply", half, x), one_plus);
  else y = op2(b, "gelu", "multiply", x, op2(b, "product", "multiply", one_plus, half));
  ASSERT_OK(hgr_builder_mark_output(b, y));
  if (f->term_output) ASSERT_OK(hgr_builder_mark_output(b, term));
  return finish(b);
}

static const gelu_form_t torch_gelu = {false, false, HALF_LAST, 0.5f, 1.4142135f, false};
static const gelu_form_t tanh_gelu = {true, false, HALF_FIRST, 0.5f, 0.7978846f, false};

static hgr_passes_options_t patterns_only(void) {
  hgr_passes_options_t options = only(false, false);
  options.layer_norm = options.gelu = true;
  return options;
}

/* The pattern pass alone over g: its report; *out_fused (may be NULL) the graph. */
static hgr_passes_report_t apply_patterns(conv_graph_t* g, hgr_graph_t** out_fused) {
  hgr_passes_options_t options = patterns_only();
  hgr_passes_report_t report;
  hgr_graph_t* fused = NULL;
  ASSERT_OK(hgr_passes_apply(g->graph, g->params, &options, &fused, &report));
  if (out_fused) *out_fused = fused;
  else hgr_graph_release(fused);
  return report;
}

static void written_out_layer_norms_become_one_node(void** state) {
  (void)state;
  ln_form_t forms[] = {torch_ln, torch_ln, torch_ln, torch_ln, torch_ln};
  forms[1].square = "multiply", forms[1].divide = "reciprocal"; /* tf2onnx */
  forms[2].divide = "rsqrt", forms[2].beta = false;
  forms[3].gamma = false, forms[3].epsilon = 1e-3f;
  forms[4].axis = 2; /* the last axis by its number */
  const uint32_t members[] = {9, 10, 8, 8, 9};
  for (size_t k = 0; k < sizeof(forms) / sizeof(forms[0]); ++k) {
    conv_graph_t g = ln_graph(&forms[k], 3, 3, 50 + k);
    hgr_graph_t* fused = NULL;
    hgr_passes_report_t report = apply_patterns(&g, &fused);
    assert_int_equal(report.layer_norms, 1);
    assert_int_equal(report.layer_norm_fused, members[k]);
    assert_int_equal(count_ops(fused), 1);
    const hgr__node_t* node = node_named(fused, "ln");
    assert_string_equal(node->func_name, "layer_norm");
    assert_string_equal(input_name(fused, node, 0), "x");
    assert_string_equal(input_name(fused, node, 1), forms[k].gamma ? "gamma" : "beta");
    assert_string_equal(input_name(fused, node, 2), forms[k].beta ? "beta" : "gamma");
    assert_string_equal(hgr__node_attr(node, "axis"), "-1");
    assert_float_equal(strtod(hgr__node_attr(node, "epsilon"), NULL), forms[k].epsilon, 1e-9);
    assert_string_equal(hgr__node_attr(node, "center"), forms[k].beta ? "1" : "0");
    assert_string_equal(hgr__node_attr(node, "scale"), forms[k].gamma ? "1" : "0");
    /* the constants only the pattern read left the graph and the params */
    assert_false(hgr_test_has_param(g.params, "eps"));
    assert_int_equal(hgr_params_count(g.params), forms[k].gamma + forms[k].beta);
    hgr_graph_release(fused);
    conv_graph_release(&g);
  }
}

static void layer_norm_near_misses_stay_as_they_are(void** state) {
  (void)state;
  ln_form_t forms[] = {torch_ln, torch_ln, torch_ln, torch_ln, torch_ln};
  forms[0].axis = 1;           /* the variance over another axis */
  forms[1].exponent = 3;       /* a cube, not a square */
  forms[2].d_read_twice = true; /* the centered value read outside */
  forms[3].var_output = true;  /* the variance a graph output */
  forms[4].gamma = forms[4].beta = false; /* no [len] vector: nothing to hand layer_norm */
  for (size_t k = 0; k < sizeof(forms) / sizeof(forms[0]); ++k) {
    conv_graph_t g = ln_graph(&forms[k], 3, 3, 60 + k);
    hgr_graph_t* fused = NULL;
    hgr_passes_report_t report = apply_patterns(&g, &fused);
    if (report.layer_norms) fail_msg("form %zu fused", k);
    assert_ptr_equal(fused, g.graph);
    hgr_graph_release(fused);
    conv_graph_release(&g);
  }
  /* the same graph without params: no constant is known */
  conv_graph_t g = ln_graph(&torch_ln, 3, 3, 66);
  hgr_passes_options_t options = patterns_only();
  hgr_passes_report_t report;
  hgr_graph_t* fused = NULL;
  ASSERT_OK(hgr_passes_apply(g.graph, NULL, &options, &fused, &report));
  assert_int_equal(report.layer_norms, 0);
  hgr_graph_release(fused);
  conv_graph_release(&g);
}

static void written_out_gelus_become_one_node(void** state) {
  (void)state;
  const gelu_form_t forms[] = {
      torch_gelu,
      {false, true, HALF_FIRST, 0.5f, 0.70710678f, false},
      {false, false, HALF_INSIDE, 0.50001f, 1.41421f, false}, /* within the tolerance */
      tanh_gelu,
      {true, true, HALF_LAST, 0.5f, 0.7978845608f, false},
      {true, false, HALF_INSIDE, 0.5f, 0.79788f, false},
  };
  const uint32_t members[] = {5, 5, 5, 8, 9, 8};
  for (size_t k = 0; k < sizeof(forms) / sizeof(forms[0]); ++k) {
    conv_graph_t g = gelu_graph(&forms[k], 3, 70 + k);
    hgr_graph_t* fused = NULL;
    hgr_passes_report_t report = apply_patterns(&g, &fused);
    if (report.gelus != 1) fail_msg("form %zu: %u GELUs", k, report.gelus);
    assert_int_equal(report.gelu_fused, members[k]);
    assert_int_equal(count_ops(fused), 2); /* the bias add and the GELU */
    const hgr__node_t* node = node_named(fused, "gelu");
    assert_string_equal(node->func_name, forms[k].tanh_form ? "gelu_tanh" : "gelu");
    assert_string_equal(input_name(fused, node, 0), "bias_add");
    hgr_graph_release(fused);
    conv_graph_release(&g);
  }
}

static void gelu_near_misses_stay_as_they_are(void** state) {
  (void)state;
  const gelu_form_t forms[] = {
      {false, false, HALF_LAST, 0.6f, 1.4142135f, false},  /* not a half */
      {false, false, HALF_LAST, 0.5f, 1.5f, false},        /* not sqrt(2) */
      {false, true, HALF_LAST, 0.5f, 1.4142135f, false},   /* multiplies by sqrt(2) */
      {true, false, HALF_LAST, 0.5f, 0.9f, false},         /* not sqrt(2 / pi) */
      {false, false, HALF_LAST, 0.5f, 1.4142135f, true},   /* the erf a graph output */
      {false, false, HALF_LAST, 0.5f, 1.4145f, false},     /* 2e-4 off: beyond the tolerance */
  };
  for (size_t k = 0; k < sizeof(forms) / sizeof(forms[0]); ++k) {
    conv_graph_t g = gelu_graph(&forms[k], 3, 80 + k);
    if (apply_patterns(&g, NULL).gelus) fail_msg("form %zu fused", k);
    conv_graph_release(&g);
  }
}

/* A model re-imported at new shapes must fuse the same nodes (and so compile nothing new). */
static void every_shape_fuses_the_same_nodes(void** state) {
  (void)state;
  const int64_t rows[] = {1, 3, 17};
  for (size_t k = 0; k < 3; ++k) {
    conv_graph_t g = ln_graph(&torch_ln, rows[k], 3, 90);
    assert_int_equal(apply_patterns(&g, NULL).layer_norm_fused, 9);
    conv_graph_release(&g);
    g = ln_graph(&torch_ln, rows[k], 2, 90);
    assert_int_equal(apply_patterns(&g, NULL).layer_norm_fused, 9);
    conv_graph_release(&g);
    g = gelu_graph(&tanh_gelu, rows[k], 91);
    assert_int_equal(apply_patterns(&g, NULL).gelu_fused, 8);
    conv_graph_release(&g);
  }
}

static void collect_line(void* user, const char* message) {
  char* lines = user;
  strncat(lines, message, 1023 - strlen(lines));
  strncat(lines, "\n", 1023 - strlen(lines));
}

/* The whole pipeline: the GELU becomes gelu first, which elementwise fusion then
 * joins with the bias add; the log names each fused node and what it replaced. */
static void a_fused_gelu_joins_its_neighbours_and_the_log_names_them(void** state) {
  (void)state;
  conv_graph_t g = gelu_graph(&torch_gelu, 3, 95);
  hgr_passes_options_t options;
  hgr_passes_options_init(&options);
  char lines[1024] = "";
  options.log = collect_line;
  options.log_user = lines;
  hgr_passes_report_t report;
  hgr_graph_t* fused = NULL;
  ASSERT_OK(hgr_passes_apply(g.graph, g.params, &options, &fused, &report));
  assert_int_equal(report.gelus, 1);
  assert_int_equal(report.elementwise_groups, 1);
  assert_int_equal(count_ops(fused), 1);
  const hgr__node_t* node = node_named(fused, "gelu");
  assert_string_equal(node->func_name, "fused_elementwise");
  assert_non_null(strstr(hgr__node_attr(node, "expr"), "gelu"));
  assert_string_equal(lines,
                      "gelu 'gelu' <- 5 nodes: 'scaled', 'term', 'one_plus', 'product', 'gelu'\n"
                      "fused_elementwise 'gelu' <- 2 nodes: 'bias_add', 'gelu'\n");
  hgr_passes_count_t counts[HGR_PASSES_COUNT_MAX];
  size_t count = hgr_passes_report_counts(&report, counts);
  assert_int_equal(count, 10);
  assert_string_equal(counts[1].key, "gelus");
  assert_int_equal(counts[1].made, 1);
  assert_int_equal(counts[1].replaced, 5);
  hgr_graph_release(fused);
  /* switched off, each alone */
  options = patterns_only();
  options.gelu = false;
  ASSERT_OK(hgr_passes_apply(g.graph, g.params, &options, &fused, &report));
  assert_int_equal(report.gelus, 0);
  assert_ptr_equal(fused, g.graph);
  hgr_graph_release(fused);
  conv_graph_release(&g);
  g = ln_graph(&torch_ln, 3, 3, 96);
  options = patterns_only();
  options.layer_norm = false;
  ASSERT_OK(hgr_passes_apply(g.graph, g.params, &options, &fused, &report));
  assert_int_equal(report.layer_norms, 0);
  hgr_graph_release(fused);
  conv_graph_release(&g);
}

/* ---- the pipeline ---------------------------------------------------------------------- */

static void each_pass_is_switched_and_counted(void** state) {
  (void)state;
  static const char* const chain[] = {"add", "relu"};
  conv_graph_t g = conv_graph(true, chain, 2, 10);
  hgr_passes_options_t options = only(false, false);
  hgr_passes_report_t report;
  hgr_graph_t* fused = NULL;
  ASSERT_OK(hgr_passes_apply(g.graph, g.params, &options, &fused, &report));
  assert_ptr_equal(fused, g.graph);
  assert_int_equal(report.conv_epilogues + report.elementwise_groups, 0);
  hgr_graph_release(fused);
  options = only(false, true);
  ASSERT_OK(hgr_passes_apply(g.graph, g.params, &options, &fused, &report));
  assert_int_equal(report.conv_epilogues, 0);
  assert_int_equal(report.elementwise_groups, 1);
  assert_int_equal(report.elementwise_fused, 2);
  assert_string_equal(node_named(fused, "relu2")->func_name, "fused_elementwise");
  assert_int_equal(hgr_params_count(g.params), 3); /* nothing folded */
  hgr_graph_release(fused);
  conv_graph_release(&g);
}

static void a_placed_graph_is_left_as_it_is(void** state) {
  (void)state;
  static const char* const chain[] = {"relu"};
  conv_graph_t g = conv_graph(true, chain, 1, 11);
  g.graph->has_device_index = true; /* as a placed graph has */
  hgr_passes_report_t report;
  hgr_graph_t* fused = NULL;
  ASSERT_OK(hgr_passes_apply(g.graph, g.params, NULL, &fused, &report));
  assert_ptr_equal(fused, g.graph);
  assert_true(report.placed);
  hgr_graph_release(fused);
  hgr_params_t* made = NULL;
  ASSERT_STATUS(hgr__fuse_conv_epilogue(g.graph, g.params, NULL, &fused, &made, NULL), HGR_STATUS_FAILED_PRECONDITION,
                "placed", "fuse before placement");
  assert_null(fused);
  g.graph->has_device_index = false;
  conv_graph_release(&g);
  ASSERT_STATUS(hgr_passes_apply(NULL, NULL, NULL, &fused, NULL), HGR_STATUS_INVALID_ARGUMENT, "NULL");
}

/* ---- fused against unfused on devices ------------------------------------------------ */

static hgr_instance_t* instance;
static const char* const* specs;
static int spec_count;

/* Runs g unfused and through the passes on every device and compares output 0.
 * The tolerance allows the fused kernel's fma and its other order of summation. */
static hgr_passes_report_t compare_fused_on(conv_graph_t* g, const float* rows_x) {
  hgr_params_t* params = hgr_test_params_copy(g->params);
  hgr_passes_report_t report;
  hgr_graph_t* fused = NULL;
  ASSERT_OK(hgr_passes_apply(g->graph, params, NULL, &fused, &report));
  hgr_tensor_info_t in, out;
  ASSERT_OK(hgr_graph_input_info(g->graph, 0, &in));
  ASSERT_OK(hgr_graph_output_info(g->graph, 0, &out));
  size_t count = (size_t)in.bytes / sizeof(float), outputs = (size_t)out.bytes / sizeof(float);
  float* x = malloc(in.bytes);
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 99);
  for (size_t i = 0; i < count; ++i) x[i] = rows_x ? rows_x[i] : hgr_test_rng_float(&rng, -2, 2);
  for (int d = 0; d < spec_count; ++d) {
    float* want = hgr_test_run_graph(instance, specs[d], g->graph, g->params, x);
    float* got = hgr_test_run_graph(instance, specs[d], fused, params, x);
    for (size_t i = 0; i < outputs; ++i)
      if (!(fabsf(got[i] - want[i]) <= 1e-5f * fabsf(want[i]) + 1e-5f))
        fail_msg("%s: element %zu: fused %.9g, unfused %.9g", specs[d], i, got[i], want[i]);
    free(want);
    free(got);
  }
  free(x);
  hgr_graph_release(fused);
  hgr_params_release(params);
  return report;
}

/* On random input in [-2, 2). */
static void compare_fused(conv_graph_t* g, uint32_t want_epilogues) {
  assert_int_equal(compare_fused_on(g, NULL).conv_epilogues, want_epilogues);
}

static void fused_builder_graphs_match_the_unfused_ones(void** state) {
  (void)state;
  static const char* const chains[][4] = {{"add", "relu"},
                                          {"scale4d", "add", "leaky"},
                                          {"multiply", "scale4d", "add", "clip"},
                                          {"relu"},
                                          {"add", "sigmoid"},
                                          {"leaky", "floor"},
                                          {"add", "leaky", "ceiling"},
                                          {"leaky", "clip"},
                                          {"add", "silu"},
                                          {"scale4d", "silu_rev"},
                                          {"hswish"}};
  static const size_t lengths[] = {2, 3, 4, 1, 2, 2, 3, 2, 2, 2, 1};
  for (size_t k = 0; k < sizeof(lengths) / sizeof(lengths[0]); ++k) {
    conv_graph_t g = conv_graph(k % 2 == 0, chains[k], lengths[k], 20 + k);
    compare_fused(&g, 1);
    conv_graph_release(&g);
  }
  conv_graph_t g = one_dimensional_conv(30);
  compare_fused(&g, 1);
  conv_graph_release(&g);
  /* with the max pool: [2, 2] over rows of 32 (H = 5: the last row dropped), [2, 1]
   * over 21 */
  g = pool_graph(32, (const int64_t[]){2, 2}, (const int64_t[]){2, 2}, 0, 31);
  compare_fused(&g, 1);
  conv_graph_release(&g);
  g = pool_graph(21, (const int64_t[]){2, 1}, (const int64_t[]){2, 1}, 0, 32);
  compare_fused(&g, 1);
  conv_graph_release(&g);
}

/* Layer norms and GELUs fused against written out, on random rows and on rows of
 * one value (variance 0: the output is beta), epsilon large and small. */
static void fused_patterns_match_the_written_out_ones(void** state) {
  (void)state;
  ln_form_t forms[] = {torch_ln, torch_ln, torch_ln};
  forms[1].square = "multiply", forms[1].divide = "reciprocal", forms[1].epsilon = 0.5f;
  forms[2].divide = "rsqrt", forms[2].gamma = false, forms[2].epsilon = 1e-12f;
  for (size_t k = 0; k < sizeof(forms) / sizeof(forms[0]); ++k) {
    conv_graph_t g = ln_graph(&forms[k], 3, 3, 100 + k);
    float x[2 * 3 * LEN];
    hgr_test_rng_t rng;
    hgr_test_rng_seed(&rng, 7);
    for (size_t i = 0; i < 2 * 3 * LEN; ++i) x[i] = i / LEN == 1 ? 3.0f : hgr_test_rng_float(&rng, -4, 4);
    assert_int_equal(compare_fused_on(&g, x).layer_norms, 1);
    conv_graph_release(&g);
  }
  const gelu_form_t gelus[] = {torch_gelu, tanh_gelu, {true, true, HALF_INSIDE, 0.5f, 0.7978845608f, false}};
  for (size_t k = 0; k < sizeof(gelus) / sizeof(gelus[0]); ++k) {
    conv_graph_t g = gelu_graph(&gelus[k], 3, 110 + k);
    assert_int_equal(compare_fused_on(&g, NULL).gelus, 1);
    conv_graph_release(&g);
  }
}

/* A TVM graph as JSON (conv2d -> add of a [4, 1, 1] bias -> relu, no placement)
 * with its params: the pass gives it the epilogue, with the same results. */
static const char tvm_json[] =
    "{\"nodes\": ["
    "{\"op\": \"null\", \"name\": \"data\", \"inputs\": []},"
    "{\"op\": \"null\", \"name\": \"weight\", \"inputs\": []},"
    "{\"op\": \"null\", \"name\": \"bias\", \"inputs\": []},"
    "{\"op\": \"tvm_op\", \"name\": \"conv\", \"attrs\": {\"func_name\": \"conv2d\", \"num_inputs\": \"2\", "
    "\"num_outputs\": \"1\", \"flatten_data\": \"0\", \"padding\": \"[1, 1]\", \"kernel_size\": \"[3, 3]\"}, "
    "\"inputs\": [[0, 0, 0], [1, 0, 0]]},"
    "{\"op\": \"tvm_op\", \"name\": \"bias_add\", \"attrs\": {\"func_name\": \"add\", \"num_inputs\": \"2\", "
    "\"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[3, 0, 0], [2, 0, 0]]},"
    "{\"op\": \"tvm_op\", \"name\": \"relu\", \"attrs\": {\"func_name\": \"relu\", \"num_inputs\": \"1\", "
    "\"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[4, 0, 0]]}],"
    "\"arg_nodes\": [0, 1, 2], \"heads\": [[5, 0, 0]], \"node_row_ptr\": [0, 1, 2, 3, 4, 5, 6],"
    "\"attrs\": {\"dltype\": [\"list_str\", [\"float32\", \"float32\", \"float32\", \"float32\", \"float32\", "
    "\"float32\"]], \"storage_id\": [\"list_int\", [0, 1, 2, 3, 4, 5]], \"shape\": [\"list_shape\", "
    "[[1, 3, 5, 6], [4, 3, 3, 3], [4, 1, 1], [1, 4, 5, 6], [1, 4, 5, 6], [1, 4, 5, 6]]]}}";

static void a_tvm_graph_gets_the_conv_epilogue(void** state) {
  (void)state;
  conv_graph_t g;
  ASSERT_OK(hgr_graph_load_json(tvm_json, sizeof(tvm_json) - 1, &g.graph));
  ASSERT_OK(hgr_params_create(&g.params));
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 40);
  float weight[4 * 3 * 9], bias[4];
  for (size_t i = 0; i < 4 * 3 * 9; ++i) weight[i] = hgr_test_rng_float(&rng, -1, 1);
  for (size_t i = 0; i < 4; ++i) bias[i] = hgr_test_rng_float(&rng, -1, 1);
  ASSERT_OK(hgr_params_add(g.params, "weight", F32, 4, (const int64_t[]){4, 3, 3, 3}, weight, sizeof(weight)));
  ASSERT_OK(hgr_params_add(g.params, "bias", F32, 3, (const int64_t[]){4, 1, 1}, bias, sizeof(bias)));
  compare_fused(&g, 1);
  conv_graph_release(&g);
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
      cmocka_unit_test(bias_add_and_relu_fold_into_one_conv2d),
      cmocka_unit_test(multiply_scales_the_weights_and_add_makes_a_bias),
      cmocka_unit_test(a_clamp_after_a_leaky_relu_joins_it),
      cmocka_unit_test(without_params_only_an_activation_joins),
      cmocka_unit_test(a_value_read_twice_or_an_output_ends_the_chain),
      cmocka_unit_test(a_written_out_silu_and_hard_swish_join),
      cmocka_unit_test(weights_given_at_run_time_take_no_multiply),
      cmocka_unit_test(a_one_dimensional_conv_takes_the_chain_after_its_reshape),
      cmocka_unit_test(a_shared_weight_stays_for_the_conv_that_does_not_scale_it),
      cmocka_unit_test(new_param_names_do_not_collide),
      cmocka_unit_test(a_tiling_max_pool_joins_the_conv),
      cmocka_unit_test(written_out_layer_norms_become_one_node),
      cmocka_unit_test(layer_norm_near_misses_stay_as_they_are),
      cmocka_unit_test(written_out_gelus_become_one_node),
      cmocka_unit_test(gelu_near_misses_stay_as_they_are),
      cmocka_unit_test(every_shape_fuses_the_same_nodes),
      cmocka_unit_test(a_fused_gelu_joins_its_neighbours_and_the_log_names_them),
      cmocka_unit_test(each_pass_is_switched_and_counted),
      cmocka_unit_test(a_placed_graph_is_left_as_it_is),
  };
  const struct CMUnitTest run_tests[] = {
      cmocka_unit_test(fused_builder_graphs_match_the_unfused_ones),
      cmocka_unit_test(a_tvm_graph_gets_the_conv_epilogue),
      cmocka_unit_test(fused_patterns_match_the_written_out_ones),
  };
  if (argc == 2 && !strcmp(argv[1], "unit")) return cmocka_run_group_tests_name("passes", unit, NULL, NULL);
  if (argc >= 3 && !strcmp(argv[1], "run")) {
    specs = (const char* const*)argv + 2;
    spec_count = argc - 2;
    return cmocka_run_group_tests_name("passes on devices", run_tests, set_up_instance, tear_down_instance);
  }
  fprintf(stderr, "usage: test_passes unit | run SPEC...\n");
  return 2;
}
