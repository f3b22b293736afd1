/* The output layout pass (runtime/passes/fuse_out_layout.c) on builder graphs: a
 * matmul, dense, batch_matmul or attention followed by reshapes and a transpose (or
 * two) becomes the producer with attrs out_shape and out_axes, at the last
 * transpose's place and name: the heads of a transformer split after their
 * projection ([B, S, H, D] -> [B, H, S, D]), the keys once more ([B, H, D, S]: two
 * transposes composed), the heads joined after attention; near misses stay (a value
 * read twice or a graph output inside the chain, attention's rows moved, a view of
 * rank 5, a producer with a layout already); the pass is switched, counted and
 * logged; and fused graphs against unfused ones on random data on each device given.
 *
 *   test_fuse_out_layout unit          the pass, no device
 *   test_fuse_out_layout run SPEC...   fused against unfused on each device */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"
#include "passes.h"
#include "pass_check.h"
#include "testlib.h"

static const hgr_dtype_t F32 = {HGR_DTYPE_FLOAT, 32, 1};

/* x [B * S, K] (or [B, S, K] for batch_matmul); the heads H of D values each. */
enum { B = 2, S = 5, K = 12, H = 3, D = 4 };

typedef enum producer_t { MATMUL, DENSE, BATCH_MATMUL, ATTENTION } producer_t;

typedef struct chain_form_t {
  producer_t producer;
  bool flat_reshape;          /* a reshape to [B, S, H * D] before the heads' one (ONNX MatMul's) */
  int64_t axes[4];            /* the first transpose's */
  bool second;                /* a second transpose [0, 1, 3, 2] after it (the keys') */
  /* near misses */
  bool view_read_twice;       /* the heads' view is read by a sigmoid too */
  bool view_output;           /* the heads' view is a graph output too */
  bool rank5;                 /* the view [B, S, H, D / 2, 2], axes [0, 2, 1, 3, 4] */
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

static hgr_value_t transpose(hgr_builder_t* builder, const char* name, hgr_value_t x, const int64_t* axes,
                             int32_t ndim) {
  hgr_attrs_t* attrs = NULL;
  ASSERT_OK(hgr_attrs_create(&attrs));
  ASSERT_OK(hgr_attrs_set_ints(attrs, "axes", axes, (size_t)ndim));
  hgr_value_t out = op(builder, name, "transpose", &x, 1, attrs);
  hgr_attrs_release(attrs);
  return out;
}

/* The GEMM "proj" of x with the param w, giving [B * S, H * D] ([B, S, H * D] for
 * batch_matmul). */
static hgr_value_t projection(hgr_builder_t* builder, const char* name, producer_t producer, hgr_value_t x,
                              hgr_test_rng_t* rng) {
  char weight[32];
  snprintf(weight, sizeof(weight), "%s_w", name);
  hgr_value_t inputs[2] = {x};
  hgr_attrs_t* attrs = NULL;
  ASSERT_OK(hgr_attrs_create(&attrs));
  if (producer == BATCH_MATMUL) {
    inputs[1] = hgr_test_random_constant(builder, weight, (const int64_t[]){1, K, H * D}, 3, rng);
    ASSERT_OK(hgr_attrs_set_int(attrs, "transpose_b", 0));
  } else if (producer == DENSE) {
    inputs[1] = hgr_test_random_constant(builder, weight, (const int64_t[]){H * D, K}, 2, rng);
  } else {
    inputs[1] = hgr_test_random_constant(builder, weight, (const int64_t[]){K, H * D}, 2, rng);
  }
  const char* func = producer == BATCH_MATMUL ? "batch_matmul" : producer == DENSE ? "dense" : "matmul";
  hgr_value_t out = op(builder, name, func, inputs, 2, attrs);
  hgr_attrs_release(attrs);
  return out;
}

/* q, k and v [B * H, S, D] projected from x, through the heads' usual split */
static hgr_value_t heads_of(hgr_builder_t* builder, const char* name, hgr_value_t x, hgr_test_rng_t* rng) {
  char label[32];
  hgr_value_t v = projection(builder, name, MATMUL, x, rng);
  snprintf(label, sizeof(label), "%s_view", name);
  v = reshape(builder, label, v, (const int64_t[]){B, S, H, D}, 4);
  snprintf(label, sizeof(label), "%s_heads", name);
  v = transpose(builder, label, v, (const int64_t[]){0, 2, 1, 3}, 4);
  snprintf(label, sizeof(label), "%s_3d", name);
  return reshape(builder, label, v, (const int64_t[]){B * H, S, D}, 3);
}

/* The form's graph: input x, the producer "proj" (attention: "attn" of the heads of
 * three projections, which the pass fuses too), its chain ending in "heads" (or
 * "keys", the second transpose); the chain's last value is output 0. */
static chain_graph_t chain_graph(const chain_form_t* form, uint64_t seed) {
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, seed);
  hgr_builder_t* builder = NULL;
  ASSERT_OK(hgr_builder_create(NULL, &builder));
  hgr_value_t x, v;
  if (form->producer == BATCH_MATMUL)
    ASSERT_OK(hgr_builder_add_input(builder, "x", F32, (const int64_t[]){B, S, K}, 3, &x));
  else
    ASSERT_OK(hgr_builder_add_input(builder, "x", F32, (const int64_t[]){B * S, K}, 2, &x));
  int64_t view[5] = {B, S, H, D, 0};
  int32_t rank = 4;
  if (form->producer == ATTENTION) {
    hgr_value_t qkv[3] = {heads_of(builder, "q", x, &rng), heads_of(builder, "k", x, &rng),
                          heads_of(builder, "v", x, &rng)};
    hgr_attrs_t* attrs = NULL;
    ASSERT_OK(hgr_attrs_create(&attrs));
    ASSERT_OK(hgr_attrs_set_float(attrs, "scale", 0.5));
    ASSERT_OK(hgr_attrs_set_int(attrs, "heads", H));
    v = op(builder, "attn", "attention", qkv, 3, attrs);
    hgr_attrs_release(attrs);
    view[1] = H, view[2] = S; /* [B, H, S, D] */
  } else {
    v = projection(builder, "proj", form->producer, x, &rng);
  }
  if (form->flat_reshape) v = reshape(builder, "flat", v, (const int64_t[]){B, S, H * D}, 3);
  if (form->rank5) view[3] = D / 2, view[4] = 2, rank = 5;
  v = reshape(builder, "view", v, view, rank);
  hgr_value_t extra = v;
  if (form->view_read_twice) extra = op(builder, "other", "sigmoid", &v, 1, NULL);
  int64_t axes[5] = {form->axes[0], form->axes[1], form->axes[2], form->axes[3], 4};
  v = transpose(builder, "heads", v, axes, rank);
  if (form->second) v = transpose(builder, "keys", v, (const int64_t[]){0, 1, 3, 2}, 4);
  ASSERT_OK(hgr_builder_mark_output(builder, v));
  if (form->view_read_twice || form->view_output) ASSERT_OK(hgr_builder_mark_output(builder, extra));
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

static uint32_t count_op(const hgr_graph_t* graph, const char* func) {
  uint32_t count = 0;
  for (uint32_t n = 0; n < graph->node_count; ++n) count += graph->nodes[n].is_op && !strcmp(graph->nodes[n].func_name, func);
  return count;
}

static void collect_line(void* user, const char* line) {
  char* lines = user;
  size_t used = strlen(lines);
  snprintf(lines + used, 2048 - used, "%s\n", line);
}

/* Runs the passes but elementwise fusion; log_lines (may be NULL) collects the log. */
static hgr_graph_t* fuse(chain_graph_t* g, hgr_passes_report_t* report, char* log_lines) {
  hgr_passes_options_t options;
  hgr_passes_options_init(&options);
  options.elementwise = false;
  if (log_lines) {
    options.log = collect_line;
    options.log_user = log_lines;
  }
  hgr_graph_t* fused = NULL;
  ASSERT_OK(hgr_passes_apply(g->graph, g->params, &options, &fused, report));
  return fused;
}

#define FORM(producer_, ...) ((chain_form_t){.producer = producer_, __VA_ARGS__})
#define HEADS .axes = {0, 2, 1, 3}

static void transposes_fold_into_the_producers_layout(void** state) {
  (void)state;
  static const struct {
    chain_form_t form;
    const char* producer; /* the fused node's op */
    const char* name;     /* its name: the chain's last node's */
    const char* out_shape, *out_axes;
    uint32_t replaced;    /* reshapes and transposes of the chain */
    int64_t shape[4];     /* the output's */
  } cases[] = {
      {FORM(MATMUL, HEADS), "matmul", "heads", "[2, 5, 3, 4]", "[0, 2, 1, 3]", 2, {B, H, S, D}},
      {FORM(MATMUL, HEADS, .flat_reshape = true), "matmul", "heads", "[2, 5, 3, 4]", "[0, 2, 1, 3]", 3, {B, H, S, D}},
      /* the keys: the second transpose composes with the first */
      {FORM(MATMUL, HEADS, .second = true), "matmul", "keys", "[2, 5, 3, 4]", "[0, 2, 3, 1]", 3, {B, H, D, S}},
      {FORM(DENSE, .axes = {2, 0, 3, 1}), "dense", "heads", "[2, 5, 3, 4]", "[2, 0, 3, 1]", 2, {H, B, D, S}},
      {FORM(BATCH_MATMUL, HEADS), "batch_matmul", "heads", "[2, 5, 3, 4]", "[0, 2, 1, 3]", 2, {B, H, S, D}},
      /* attention's heads joined: [B, H, S, D] -> [B, S, H, D] */
      {FORM(ATTENTION, HEADS), "attention", "heads", "[2, 3, 5, 4]", "[0, 2, 1, 3]", 2, {B, S, H, D}},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    chain_graph_t g = chain_graph(&cases[i].form, 10 + i);
    hgr_passes_report_t report;
    char lines[2048] = "";
    hgr_graph_t* fused = fuse(&g, &report, lines);
    bool attention = cases[i].form.producer == ATTENTION;
    /* attention's q, k and v: each projection's split into heads fuses too */
    assert_int_equal(report.out_layouts, attention ? 4 : 1);
    assert_int_equal(report.out_layout_fused, cases[i].replaced + (attention ? 3 * 2 : 0));
    assert_int_equal(count_op(fused, "transpose"), 0);
    const hgr__node_t* node = node_named(fused, cases[i].name);
    if (!node) fail_msg("case %zu: no node '%s'", i, cases[i].name);
    assert_string_equal(node->func_name, cases[i].producer);
    assert_string_equal(hgr__node_attr(node, "out_shape"), cases[i].out_shape);
    assert_string_equal(hgr__node_attr(node, "out_axes"), cases[i].out_axes);
    const hgr__entry_t* out = &fused->entries[fused->node_row_ptr[node - fused->nodes]];
    assert_int_equal(out->ndim, 4);
    for (int a = 0; a < 4; ++a) assert_int_equal(out->shape[a], cases[i].shape[a]);
    hgr_tensor_info_t info;
    ASSERT_OK(hgr_graph_output_info(fused, 0, &info));
    char want[32];
    snprintf(want, sizeof(want), "%s:0", cases[i].name);
    assert_string_equal(info.name, want);
    if (!attention) {
      char line[256];
      snprintf(line, sizeof(line), "%s '%s' <- %u nodes: %s'view', 'heads'%s\n", cases[i].producer, cases[i].name,
               cases[i].replaced, cases[i].form.flat_reshape ? "'flat', " : "", cases[i].form.second ? ", 'keys'" : "");
      assert_string_equal(lines, line);
    }
    /* a second run finds nothing: a producer with a layout is left alone */
    hgr_passes_report_t again;
    chain_graph_t refused = {fused, g.params};
    hgr_graph_t* twice = fuse(&refused, &again, NULL);
    assert_int_equal(again.out_layouts, 0);
    assert_ptr_equal(twice, fused);
    hgr_graph_release(twice);
    hgr_graph_release(fused);
    chain_graph_release(&g);
  }
}

static void near_misses_stay_as_they_are(void** state) {
  (void)state;
  static const chain_form_t misses[] = {
      FORM(MATMUL, HEADS, .view_read_twice = true),
      FORM(MATMUL, HEADS, .view_output = true),
      FORM(MATMUL, HEADS, .rank5 = true),
  };
  for (size_t i = 0; i < sizeof(misses) / sizeof(misses[0]); ++i) {
    chain_graph_t g = chain_graph(&misses[i], 30 + i);
    hgr_passes_report_t report;
    hgr_graph_t* fused = fuse(&g, &report, NULL);
    if (report.out_layouts) fail_msg("near miss %zu fused", i);
    assert_int_equal(count_op(fused, "transpose"), 1);
    hgr_graph_release(fused);
    chain_graph_release(&g);
  }
  /* attention with its last axis moved ([B, H, S, D] -> [B, H, D, S]): its rows would
   * not stay runs, so that transpose stays; q, k and v still fuse */
  chain_graph_t g = chain_graph(&FORM(ATTENTION, .axes = {0, 1, 3, 2}), 40);
  hgr_passes_report_t report;
  hgr_graph_t* fused = fuse(&g, &report, NULL);
  assert_int_equal(report.out_layouts, 3);
  assert_int_equal(count_op(fused, "transpose"), 1);
  assert_null(hgr__node_attr(node_named(fused, "attn"), "out_shape"));
  hgr_graph_release(fused);
  chain_graph_release(&g);
}

/* Switched off it changes nothing; its counts come between the packed weights and
 * the elementwise groups. */
static void the_pass_is_switched_and_counted(void** state) {
  (void)state;
  chain_graph_t g = chain_graph(&FORM(MATMUL, HEADS, .second = true), 50);
  hgr_passes_options_t options;
  hgr_passes_options_init(&options);
  assert_true(options.out_layout);
  hgr_passes_report_t report;
  hgr_graph_t* fused = NULL;
  ASSERT_OK(hgr_passes_apply(g.graph, g.params, &options, &fused, &report));
  hgr_passes_count_t counts[HGR_PASSES_COUNT_MAX];
  size_t count = hgr_passes_report_counts(&report, counts);
  assert_int_equal(count, 10);
  assert_string_equal(counts[6].key, "out_layouts");
  assert_string_equal(counts[6].label, "output layouts");
  assert_int_equal(counts[6].made, 1);
  assert_int_equal(counts[6].replaced, 3);
  assert_string_equal(counts[9].key, "elementwise_groups");
  hgr_graph_release(fused);
  options.out_layout = false;
  ASSERT_OK(hgr_passes_apply(g.graph, g.params, &options, &fused, &report));
  assert_int_equal(report.out_layouts, 0);
  assert_int_equal(count_op(fused, "transpose"), 2);
  hgr_graph_release(fused);
  /* before placement only */
  g.graph->has_device_index = true;
  ASSERT_STATUS(hgr__fuse_out_layout(g.graph, NULL, &fused, NULL), HGR_STATUS_FAILED_PRECONDITION, "placed");
  assert_null(fused);
  g.graph->has_device_index = false;
  chain_graph_release(&g);
}

/* ---- fused against unfused on devices ------------------------------------------------ */

static hgr_instance_t* instance;
static const char* const* specs;
static int spec_count;

/* Each form unfused and fused (all passes) on every device, output 0 compared: the
 * same kernels store the same values elsewhere, so the results are equal but for
 * the GEMM tiles a different output shape may choose (1e-5). */
static void fused_graphs_match_the_unfused_ones(void** state) {
  (void)state;
  static const chain_form_t forms[] = {
      FORM(MATMUL, HEADS, .flat_reshape = true),
      FORM(MATMUL, HEADS, .second = true),
      FORM(DENSE, .axes = {2, 0, 3, 1}),
      FORM(BATCH_MATMUL, HEADS),
      FORM(ATTENTION, HEADS),
  };
  for (size_t k = 0; k < sizeof(forms) / sizeof(forms[0]); ++k) {
    chain_graph_t g = chain_graph(&forms[k], 70 + k);
    hgr_params_t* params = hgr_test_params_copy(g.params);
    hgr_passes_report_t report;
    hgr_graph_t* fused = NULL;
    ASSERT_OK(hgr_passes_apply(g.graph, params, NULL, &fused, &report));
    assert_true(report.out_layouts >= 1);
    hgr_passes_options_t none;
    hgr_passes_options_init(&none);
    none.out_layout = false;
    hgr_graph_t* plain = NULL;
    ASSERT_OK(hgr_passes_apply(g.graph, g.params, &none, &plain, NULL));
    hgr_tensor_info_t in, out;
    ASSERT_OK(hgr_graph_input_info(g.graph, 0, &in));
    ASSERT_OK(hgr_graph_output_info(g.graph, 0, &out));
    size_t count = (size_t)in.bytes / sizeof(float), outputs = (size_t)out.bytes / sizeof(float);
    float* x = malloc(in.bytes);
    hgr_test_rng_t rng;
    hgr_test_rng_seed(&rng, 99);
    for (size_t i = 0; i < count; ++i) x[i] = hgr_test_rng_float(&rng, -2, 2);
    for (int d = 0; d < spec_count; ++d) {
      float* want = hgr_test_run_graph(instance, specs[d], plain, g.params, x);
      float* got = hgr_test_run_graph(instance, specs[d], fused, params, x);
      for (size_t i = 0; i < outputs; ++i)
        if (!(fabsf(got[i] - want[i]) <= 1e-5f * fabsf(want[i]) + 1e-5f))
          fail_msg("form %zu on %s: element %zu: fused %.9g, unfused %.9g", k, specs[d], i, got[i], want[i]);
      free(want);
      free(got);
    }
    free(x);
    hgr_graph_release(plain);
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
      cmocka_unit_test(transposes_fold_into_the_producers_layout),
      cmocka_unit_test(near_misses_stay_as_they_are),
      cmocka_unit_test(the_pass_is_switched_and_counted),
  };
  const struct CMUnitTest run_tests[] = {
      cmocka_unit_test(fused_graphs_match_the_unfused_ones),
  };
  if (argc == 2 && !strcmp(argv[1], "unit")) return cmocka_run_group_tests_name("output layouts", unit, NULL, NULL);
  if (argc >= 3 && !strcmp(argv[1], "run")) {
    specs = (const char* const*)argv + 2;
    spec_count = argc - 2;
    return cmocka_run_group_tests_name("output layouts on devices", run_tests, set_up_instance, tear_down_instance);
  }
  fprintf(stderr, "usage: test_fuse_out_layout unit | run SPEC...\n");
  return 2;
}
