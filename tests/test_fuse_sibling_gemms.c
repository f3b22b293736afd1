/* The sibling GEMM pass (runtime/passes/fuse_sibling_gemms.c) on builder graphs: an
 * attention layer's q, k and v projections (matmuls of one A, constant weights and
 * biases, each split into heads by a reshape and a transpose: k's transposed further,
 * as attention reads keys) become one matmul of three outputs after the weight
 * packing and the output layouts; each member may read A through its own reshape (as
 * ONNX MatMul of a 3-D input is imported); a product split by strided_slices (ONNX
 * Runtime's fused projection) gives the slices' values; near misses stay (another width, another
 * epilogue, a fourth sibling beyond the three a matmul splits into); the pass is
 * switched, counted and logged, and the params only the members read leave; and fused
 * graphs against unfused ones on random data on each device given, every output.
 *
 *   test_fuse_sibling_gemms unit          the pass, no device
 *   test_fuse_sibling_gemms run SPEC...   fused against unfused on each device */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"
#include "passes.h"
#include "pass_check.h"
#include "testlib.h"

static const hgr_dtype_t F32 = {HGR_DTYPE_FLOAT, 32, 1};

enum { ROWS = 6, DEPTH = 40, HEAD = 16 };

typedef struct siblings_form_t {
  uint32_t count;        /* projections (a fourth stays alone) */
  bool own_reshapes;     /* x is [1, ROWS, DEPTH], each projection reads its own reshape to rows */
  int64_t other_width;   /* non-zero: the last projection's columns (a near miss unless equal) */
  bool other_epilogue;   /* the last projection with a relu after its bias (a near miss) */
  /* one projection of count * 64 columns split by strided_slices (the other form) */
  bool split;
  bool split_reshape;    /* the product reshaped to [1, ROWS, columns] before the slices */
  bool split_plain;      /* the slices the graph's outputs as they are, no heads */
  bool split_overlap;    /* the last slice one column further back (a near miss) */
} siblings_form_t;

typedef struct siblings_graph_t {
  hgr_graph_t* graph;
  hgr_params_t* params;
} siblings_graph_t;

static hgr_value_t op(hgr_builder_t* builder, const char* name, const char* func, const hgr_value_t* inputs,
                      uint32_t count, const char* key, const int64_t* values, size_t value_count) {
  hgr_attrs_t* attrs = NULL;
  if (key) {
    ASSERT_OK(hgr_attrs_create(&attrs));
    ASSERT_OK(hgr_attrs_set_ints(attrs, key, values, value_count));
  }
  hgr_value_t out;
  ASSERT_OK(hgr_builder_add_op(builder, name, func, inputs, count, attrs, 1, &out));
  hgr_attrs_release(attrs);
  return out;
}

/* Heads of `value` ([ROWS, 64] or [1, ROWS, 64]) for part p: reshape [ROWS, 4, HEAD]
 * and transpose to [4, ROWS, HEAD] (part 1, the keys: [4, HEAD, ROWS]). */
static hgr_value_t heads_of(hgr_builder_t* builder, hgr_value_t value, uint32_t p, int64_t width) {
  char name[32];
  snprintf(name, sizeof(name), "split%u", p);
  hgr_value_t split = op(builder, name, "reshape", &value, 1, "newshape", (const int64_t[]){ROWS, width / HEAD, HEAD}, 3);
  snprintf(name, sizeof(name), "heads%u", p);
  return op(builder, name, "transpose", &split, 1, "axes",
            p == 1 ? (const int64_t[]){1, 2, 0} : (const int64_t[]){1, 0, 2}, 3);
}

/* The other form: "proj" = matmul(a, w [DEPTH, count * 64]) + b, optionally reshaped
 * to [1, ROWS, count * 64] ("rows"), then "part<p>" = its columns [64 p, 64 (p + 1)),
 * each split into heads, or (split_plain) the graph's outputs as they are. */
static void add_split(hgr_builder_t* builder, const siblings_form_t* form, hgr_value_t a, hgr_test_rng_t* rng) {
  int64_t columns = 64 * form->count;
  hgr_value_t inputs[2] = {a, hgr_test_random_constant(builder, "w", (const int64_t[]){DEPTH, columns}, 2, rng)};
  hgr_value_t proj = op(builder, "proj", "matmul", inputs, 2, NULL, NULL, 0);
  hgr_value_t bias_in[2] = {proj, hgr_test_random_constant(builder, "b", (const int64_t[]){columns}, 1, rng)};
  hgr_value_t product = op(builder, "bias", "add", bias_in, 2, NULL, NULL, 0);
  int32_t rank = form->split_reshape ? 3 : 2;
  if (form->split_reshape)
    product = op(builder, "rows", "reshape", &product, 1, "newshape", (const int64_t[]){1, ROWS, columns}, 3);
  for (uint32_t p = 0; p < form->count; ++p) {
    int64_t first = 64 * p - (form->split_overlap && p + 1 == form->count ? 1 : 0);
    int64_t begin[3] = {0, 0, 0}, end[3] = {1, ROWS, 0}, strides[3] = {1, 1, 1};
    if (rank == 2) end[0] = ROWS;
    begin[rank - 1] = first;
    end[rank - 1] = first + 64;
    hgr_attrs_t* attrs = NULL;
    ASSERT_OK(hgr_attrs_create(&attrs));
    ASSERT_OK(hgr_attrs_set_ints(attrs, "begin", begin, (size_t)rank));
    ASSERT_OK(hgr_attrs_set_ints(attrs, "end", end, (size_t)rank));
    ASSERT_OK(hgr_attrs_set_ints(attrs, "strides", strides, (size_t)rank));
    char name[32];
    snprintf(name, sizeof(name), "part%u", p);
    hgr_value_t part;
    ASSERT_OK(hgr_builder_add_op(builder, name, "strided_slice", &product, 1, attrs, 1, &part));
    hgr_attrs_release(attrs);
    ASSERT_OK(hgr_builder_mark_output(builder, form->split_plain ? part : heads_of(builder, part, p, 64)));
  }
}

/* x; "a" = tanh(x); projection p: "proj<p>" = matmul(a, w<p> [DEPTH, 64]) + b<p>
 * ("bias<p>"), then its heads (heads_of), graph output p; or (split) add_split's. */
static siblings_graph_t siblings_graph(const siblings_form_t* form, uint64_t seed) {
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, seed);
  hgr_builder_t* builder = NULL;
  ASSERT_OK(hgr_builder_create(NULL, &builder));
  hgr_value_t x;
  if (form->own_reshapes)
    ASSERT_OK(hgr_builder_add_input(builder, "x", F32, (const int64_t[]){1, ROWS, DEPTH}, 3, &x));
  else
    ASSERT_OK(hgr_builder_add_input(builder, "x", F32, (const int64_t[]){ROWS, DEPTH}, 2, &x));
  hgr_value_t a = op(builder, "a", "tanh", &x, 1, NULL, NULL, 0);
  if (form->split) add_split(builder, form, a, &rng);
  for (uint32_t p = 0; !form->split && p < form->count; ++p) {
    bool last = p + 1 == form->count;
    int64_t width = last && form->other_width ? form->other_width : 64;
    char name[32];
    hgr_value_t rows = a;
    if (form->own_reshapes) {
      snprintf(name, sizeof(name), "rows%u", p);
      rows = op(builder, name, "reshape", &a, 1, "newshape", (const int64_t[]){ROWS, DEPTH}, 2);
    }
    snprintf(name, sizeof(name), "w%u", p);
    hgr_value_t inputs[2] = {rows, hgr_test_random_constant(builder, name, (const int64_t[]){DEPTH, width}, 2, &rng)};
    snprintf(name, sizeof(name), "proj%u", p);
    hgr_value_t proj = op(builder, name, "matmul", inputs, 2, NULL, NULL, 0);
    snprintf(name, sizeof(name), "b%u", p);
    hgr_value_t bias_in[2] = {proj, hgr_test_random_constant(builder, name, (const int64_t[]){width}, 1, &rng)};
    snprintf(name, sizeof(name), "bias%u", p);
    hgr_value_t biased = op(builder, name, "add", bias_in, 2, NULL, NULL, 0);
    if (last && form->other_epilogue) biased = op(builder, "relu", "relu", &biased, 1, NULL, NULL, 0);
    ASSERT_OK(hgr_builder_mark_output(builder, heads_of(builder, biased, p, width)));
  }
  siblings_graph_t g;
  ASSERT_OK(hgr_builder_finish(builder, &g.graph, &g.params));
  hgr_builder_release(builder);
  return g;
}

static void siblings_graph_release(siblings_graph_t* g) {
  hgr_graph_release(g->graph);
  hgr_params_release(g->params);
}

static const hgr__node_t* node_named(const hgr_graph_t* graph, const char* name) {
  for (uint32_t n = 0; n < graph->node_count; ++n)
    if (!strcmp(graph->nodes[n].name, name)) return &graph->nodes[n];
  return NULL;
}

static uint32_t count_ops(const hgr_graph_t* graph, const char* func) {
  uint32_t count = 0;
  for (uint32_t n = 0; n < graph->node_count; ++n)
    count += graph->nodes[n].is_op && !strcmp(graph->nodes[n].func_name, func);
  return count;
}

static void collect_line(void* user, const char* line) {
  char* lines = user;
  size_t used = strlen(lines);
  snprintf(lines + used, 4096 - used, "%s\n", line);
}

/* q, k and v become one matmul of three outputs, at the first one's place and name,
 * each output a graph output through its own layout; with A read directly and through
 * a reshape of its own per projection. */
static void projections_become_one_matmul(void** state) {
  (void)state;
  for (int reshapes = 0; reshapes < 2; ++reshapes) {
    siblings_graph_t g = siblings_graph(&(siblings_form_t){.count = 3, .own_reshapes = reshapes}, 10 + (uint64_t)reshapes);
    hgr_params_t* params = hgr_test_params_copy(g.params);
    hgr_passes_options_t options;
    hgr_passes_options_init(&options);
    assert_true(options.sibling_gemms);
    char lines[4096] = "";
    options.log = collect_line;
    options.log_user = lines;
    hgr_passes_report_t report;
    hgr_graph_t* fused = NULL;
    ASSERT_OK(hgr_passes_apply(g.graph, params, &options, &fused, &report));
    assert_int_equal(report.packed_weights, 3);
    assert_int_equal(report.out_layouts, 3);
    assert_int_equal(report.sibling_gemms, 1);
    assert_int_equal(report.sibling_gemm_fused, 3);
    assert_int_equal(count_ops(fused, "matmul"), 1);
    assert_int_equal(count_ops(fused, "reshape"), reshapes ? 1 : 0); /* the first one's reshape of A */
    const hgr__node_t* matmul = node_named(fused, "heads0");
    assert_non_null(matmul);
    assert_string_equal(matmul->func_name, "matmul");
    assert_int_equal(matmul->num_outputs, 3);
    assert_int_equal(matmul->input_count, 3);
    assert_string_equal(hgr__node_attr(matmul, "units"), "192");
    assert_string_equal(hgr__node_attr(matmul, "out_axes"), "[1, 0, 2, 1, 2, 0, 1, 0, 2]");
    uint32_t id = (uint32_t)(matmul - fused->nodes);
    for (uint32_t k = 0; k < 3; ++k) {
      assert_int_equal(fused->heads[k].node_id, id);
      assert_int_equal(fused->heads[k].index, k);
    }
    assert_string_equal(fused->nodes[matmul->inputs[1].node_id].name, "w0.panels.siblings");
    assert_string_equal(fused->nodes[matmul->inputs[2].node_id].name, "b0.siblings");
    /* the members' weights, packed or not, and biases left the params */
    assert_true(hgr_test_has_param(params, "w0.panels.siblings"));
    assert_true(hgr_test_has_param(params, "b0.siblings"));
    static const char* const gone[] = {"w0", "w1", "w2", "w0.panels", "w1.panels", "w2.panels", "b0", "b1", "b2"};
    for (size_t i = 0; i < sizeof(gone) / sizeof(gone[0]); ++i)
      if (hgr_test_has_param(params, gone[i])) fail_msg("param '%s' kept", gone[i]);
    assert_int_equal(hgr_params_count(params), 2);
    assert_non_null(strstr(lines, "matmul 'heads0' <- 3 nodes: 'heads0', 'heads1', 'heads2'\n"));
    hgr_passes_count_t counts[HGR_PASSES_COUNT_MAX];
    size_t count = hgr_passes_report_counts(&report, counts);
    assert_int_equal(count, 10);
    assert_string_equal(counts[7].key, "sibling_gemms");
    assert_string_equal(counts[7].label, "sibling GEMMs");
    assert_int_equal(counts[7].made, 1);
    assert_int_equal(counts[7].replaced, 3);
    hgr_graph_release(fused);
    hgr_params_release(params);
    /* switched off: three matmuls */
    params = hgr_test_params_copy(g.params);
    options.log = NULL;
    options.sibling_gemms = false;
    ASSERT_OK(hgr_passes_apply(g.graph, params, &options, &fused, &report));
    assert_int_equal(report.sibling_gemms, 0);
    assert_int_equal(count_ops(fused, "matmul"), 3);
    hgr_graph_release(fused);
    hgr_params_release(params);
    siblings_graph_release(&g);
  }
}

/* A product split by slices: the matmul gives the slices' values, through their
 * layouts (the heads) or its own shape, directly or after a reshape; no params made. */
static void split_products_give_their_slices(void** state) {
  (void)state;
  static const struct {
    siblings_form_t form;
    const char* out_shape;
    const char* out_axes;
  } cases[] = {
      {{.count = 3, .split = true}, "[6, 4, 16]", "[1, 0, 2, 1, 2, 0, 1, 0, 2]"},
      {{.count = 3, .split = true, .split_reshape = true}, "[6, 4, 16]", "[1, 0, 2, 1, 2, 0, 1, 0, 2]"},
      {{.count = 2, .split = true, .split_reshape = true, .split_plain = true}, "[1, 6, 64]", "[0, 1, 2, 0, 1, 2]"},
  };
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); ++c) {
    siblings_graph_t g = siblings_graph(&cases[c].form, 50 + c);
    hgr_params_t* params = hgr_test_params_copy(g.params);
    hgr_passes_report_t report;
    hgr_graph_t* fused = NULL;
    ASSERT_OK(hgr_passes_apply(g.graph, params, NULL, &fused, &report));
    assert_int_equal(report.sibling_gemms, 1);
    assert_int_equal(report.sibling_gemm_fused, cases[c].form.count);
    assert_int_equal(count_ops(fused, "strided_slice"), 0);
    assert_int_equal(count_ops(fused, "reshape"), 0);
    const hgr__node_t* matmul = node_named(fused, "bias");
    assert_non_null(matmul);
    assert_int_equal(matmul->num_outputs, cases[c].form.count);
    assert_string_equal(hgr__node_attr(matmul, "out_shape"), cases[c].out_shape);
    assert_string_equal(hgr__node_attr(matmul, "out_axes"), cases[c].out_axes);
    assert_string_equal(hgr__node_attr(matmul, "units"), cases[c].form.count == 3 ? "192" : "128");
    assert_true(hgr_test_has_param(params, "w.panels"));
    assert_int_equal(hgr_params_count(params), 2);
    for (uint32_t k = 0; k < cases[c].form.count; ++k) {
      assert_int_equal(fused->heads[k].node_id, (uint32_t)(matmul - fused->nodes));
      assert_int_equal(fused->heads[k].index, k);
    }
    hgr_graph_release(fused);
    hgr_params_release(params);
    siblings_graph_release(&g);
  }
  /* slices that overlap stay */
  siblings_graph_t g = siblings_graph(&(siblings_form_t){.count = 3, .split = true, .split_overlap = true}, 59);
  hgr_params_t* params = hgr_test_params_copy(g.params);
  hgr_passes_report_t report;
  hgr_graph_t* fused = NULL;
  ASSERT_OK(hgr_passes_apply(g.graph, params, NULL, &fused, &report));
  assert_int_equal(report.sibling_gemms, 0);
  assert_int_equal(count_ops(fused, "strided_slice"), 3);
  hgr_graph_release(fused);
  hgr_params_release(params);
  siblings_graph_release(&g);
}

/* Near misses: another width, another epilogue, a fourth projection (three join, the
 * fourth stays), two siblings (a matmul of two outputs), and a placed graph. */
static void near_misses_and_groups(void** state) {
  (void)state;
  static const struct {
    siblings_form_t form;
    uint32_t groups, members, matmuls;
  } cases[] = {
      {{.count = 3, .other_width = 96}, 1, 2, 2},
      {{.count = 3, .other_epilogue = true}, 1, 2, 2},
      {{.count = 4}, 1, 3, 2},
      {{.count = 2}, 1, 2, 1},
      {{.count = 1}, 0, 0, 1},
  };
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); ++c) {
    siblings_graph_t g = siblings_graph(&cases[c].form, 30 + c);
    hgr_params_t* params = hgr_test_params_copy(g.params);
    hgr_passes_report_t report;
    hgr_graph_t* fused = NULL;
    ASSERT_OK(hgr_passes_apply(g.graph, params, NULL, &fused, &report));
    if (report.sibling_gemms != cases[c].groups || report.sibling_gemm_fused != cases[c].members ||
        count_ops(fused, "matmul") != cases[c].matmuls)
      fail_msg("case %zu: %u groups of %u members, %u matmuls; expected %u, %u, %u", c, report.sibling_gemms,
               report.sibling_gemm_fused, count_ops(fused, "matmul"), cases[c].groups, cases[c].members,
               cases[c].matmuls);
    hgr_graph_release(fused);
    hgr_params_release(params);
    siblings_graph_release(&g);
  }
  siblings_graph_t g = siblings_graph(&(siblings_form_t){.count = 3}, 40);
  g.graph->has_device_index = true;
  hgr_graph_t* fused = NULL;
  hgr_params_t* made = NULL;
  ASSERT_STATUS(hgr__fuse_sibling_gemms(g.graph, g.params, NULL, NULL, &fused, &made, NULL),
                HGR_STATUS_FAILED_PRECONDITION, "placed");
  assert_null(fused);
  g.graph->has_device_index = false;
  /* unpacked weights are no members: the pass alone on the graph finds nothing */
  hgr__fuse_report_t report;
  ASSERT_OK(hgr__fuse_sibling_gemms(g.graph, g.params, NULL, NULL, &fused, &made, &report));
  assert_int_equal(report.groups, 0);
  assert_ptr_equal(fused, g.graph);
  assert_null(made);
  hgr_graph_release(fused);
  siblings_graph_release(&g);
}

/* ---- fused against unfused on devices ------------------------------------------------ */

static hgr_instance_t* instance;
static const char* const* specs;
static int spec_count;

/* Three projections (A direct and through reshapes) and two, and products split by
 * slices (into heads after a reshape, and as they are), fused and with the pass off,
 * on every device, every output: one GEMM computes each column as the three did,
 * so the results agree to the products' rounding. */
static void fused_graphs_match_the_unfused_ones(void** state) {
  (void)state;
  static const siblings_form_t forms[] = {{.count = 3},
                                          {.count = 3, .own_reshapes = true},
                                          {.count = 2},
                                          {.count = 3, .split = true, .split_reshape = true},
                                          {.count = 2, .split = true, .split_plain = true}};
  for (size_t f = 0; f < sizeof(forms) / sizeof(forms[0]); ++f) {
    siblings_graph_t g = siblings_graph(&forms[f], 70 + f);
    hgr_params_t* fused_params = hgr_test_params_copy(g.params);
    hgr_params_t* plain_params = hgr_test_params_copy(g.params);
    hgr_passes_options_t options;
    hgr_passes_options_init(&options);
    hgr_graph_t *fused = NULL, *plain = NULL;
    hgr_passes_report_t report;
    ASSERT_OK(hgr_passes_apply(g.graph, fused_params, &options, &fused, &report));
    assert_int_equal(report.sibling_gemms, 1);
    options.sibling_gemms = false;
    ASSERT_OK(hgr_passes_apply(g.graph, plain_params, &options, &plain, NULL));
    float x[ROWS * DEPTH];
    hgr_test_rng_t rng;
    hgr_test_rng_seed(&rng, 99);
    for (size_t i = 0; i < ROWS * DEPTH; ++i) x[i] = hgr_test_rng_float(&rng, -3, 3);
    for (int d = 0; d < spec_count; ++d)
      for (uint32_t k = 0; k < forms[f].count; ++k) {
        float* want = hgr_test_run_graph_output(instance, specs[d], plain, plain_params, x, k);
        float* got = hgr_test_run_graph_output(instance, specs[d], fused, fused_params, x, k);
        for (size_t i = 0; i < ROWS * 64; ++i)
          if (!(fabsf(got[i] - want[i]) <= 1e-5f * fabsf(want[i]) + 1e-5f))
            fail_msg("form %zu on %s: output %u, element %zu: fused %.9g, unfused %.9g", f, specs[d], k, i, got[i],
                     want[i]);
        free(want);
        free(got);
      }
    hgr_graph_release(plain);
    hgr_graph_release(fused);
    hgr_params_release(fused_params);
    hgr_params_release(plain_params);
    siblings_graph_release(&g);
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
      cmocka_unit_test(projections_become_one_matmul),
      cmocka_unit_test(split_products_give_their_slices),
      cmocka_unit_test(near_misses_and_groups),
  };
  const struct CMUnitTest run_tests[] = {
      cmocka_unit_test(fused_graphs_match_the_unfused_ones),
  };
  if (argc == 2 && !strcmp(argv[1], "unit")) return cmocka_run_group_tests_name("sibling GEMMs", unit, NULL, NULL);
  if (argc >= 3 && !strcmp(argv[1], "run")) {
    specs = (const char* const*)argv + 2;
    spec_count = argc - 2;
    return cmocka_run_group_tests_name("sibling GEMMs on devices", run_tests, set_up_instance, tear_down_instance);
  }
  fprintf(stderr, "usage: test_fuse_sibling_gemms unit | run SPEC...\n");
  return 2;
}
