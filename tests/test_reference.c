/* The test oracle (reference.c) on hand-computed graphs, and the random graph
 * generator (graphgen.c): its graphs load, validate, and exercise storage reuse,
 * copies in every direction and __nop aliases. No OpenCL device is used. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"
#include "graphgen.h"
#include "reference.h"
#include "testlib.h"

/* Nodes 0 A, 1 B (key 1), then one node per op on key 1, a __copy of A to key 4 and
 * a __nop of that copy (sharing its storage); every op node is a head. */
static const char every_op_graph[] =
    "{\"nodes\":[{\"op\":\"null\",\"name\":\"A\",\"inputs\":[]},"
    "{\"op\":\"null\",\"name\":\"B\",\"inputs\":[]}"
#define OP(name, n, inputs)                                                                 \
  ",{\"op\":\"tvm_op\",\"name\":\"" name "\",\"attrs\":{\"func_name\":\"" name              \
  "\",\"num_inputs\":\"" n "\",\"num_outputs\":\"1\",\"flatten_data\":\"0\"},\"inputs\":" inputs \
  "}"
    OP("add", "2", "[[0,0,0],[1,0,0]]") OP("subtract", "2", "[[0,0,0],[1,0,0]]")
    OP("multiply", "2", "[[0,0,0],[1,0,0]]") OP("divide", "2", "[[0,0,0],[1,0,0]]")
    OP("maximum", "2", "[[0,0,0],[1,0,0]]") OP("minimum", "2", "[[0,0,0],[1,0,0]]")
    OP("negative", "1", "[[0,0,0]]") OP("relu", "1", "[[0,0,0]]") OP("exp", "1", "[[0,0,0]]")
    OP("sigmoid", "1", "[[0,0,0]]") OP("tanh", "1", "[[0,0,0]]") OP("__copy", "1", "[[0,0,0]]")
    OP("__nop", "1", "[[13,0,0]]")
#undef OP
    "],\"arg_nodes\":[0,1],\"node_row_ptr\":[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15],"
    "\"heads\":[[2,0,0],[3,0,0],[4,0,0],[5,0,0],[6,0,0],[7,0,0],[8,0,0],[9,0,0],[10,0,0],"
    "[11,0,0],[12,0,0],[13,0,0],[14,0,0]],"
    "\"attrs\":{\"storage_id\":[\"list_int\",[0,1,2,3,4,5,6,7,8,9,10,11,12,13,13]],"
    "\"shape\":[\"list_shape\",[[4],[4],[4],[4],[4],[4],[4],[4],[4],[4],[4],[4],[4],[4],[4]]],"
    "\"dltype\":[\"list_str\",[\"float32\",\"float32\",\"float32\",\"float32\",\"float32\","
    "\"float32\",\"float32\",\"float32\",\"float32\",\"float32\",\"float32\",\"float32\","
    "\"float32\",\"float32\",\"float32\"]],"
    "\"device_index\":[\"list_int\",[1,1,1,1,1,1,1,1,1,1,1,1,1,4,4]]}}";

static hgr_graph_t* load(const char* json) {
  hgr_graph_t* graph = NULL;
  ASSERT_OK(hgr_graph_load_json(json, strlen(json), &graph));
  return graph;
}

static void reference_computes_every_op_by_hand(void** state) {
  (void)state;
  static const float a[4] = {1, -2, 3, 0.5f}, b[4] = {2, 4, -1, 0.25f};
  static const double expected[13][4] = {
      {3, 2, 2, 0.75},          {-1, -6, 4, 0.25},       {2, -8, -3, 0.125},
      {0.5, -0.5, -3, 2},       {2, 4, 3, 0.5},          {1, -2, -1, 0.25},
      {-1, 2, -3, -0.5},        {1, 0, 3, 0.5},
      {2.718281828, 0.1353352832, 20.08553692, 1.648721271},
      {0.7310585786, 0.1192029220, 0.9525741268, 0.6224593312},
      {0.7615941560, -0.9640275801, 0.9950547537, 0.4621171573},
      {1, -2, 3, 0.5},          {1, -2, 3, 0.5}};
  hgr_graph_t* graph = load(every_op_graph);
  const float* inputs[2] = {a, b};
  hgr_test_reference_t reference;
  ASSERT_OK(hgr_test_reference_run(graph, inputs, &reference));
  assert_int_equal(reference.output_count, 13);
  for (size_t h = 0; h < 13; ++h) {
    const char* op = graph->nodes[graph->heads[h].node_id].func_name;
    bool known = false;
    hgr_test_tolerance_t tolerance = hgr_test_op_tolerance(op, &known);
    assert_true(known);
    /* Exact ops have no error bound at all; the others state one. */
    assert_int_equal(reference.error_bounds[h] != NULL, tolerance.relative > 0);
    for (size_t i = 0; i < 4; ++i) {
      double allowed = tolerance.relative > 0 ? 1e-6 * fabs(expected[h][i]) : 0;
      if (fabs(reference.values[h][i] - expected[h][i]) > allowed)
        fail_msg("%s element %zu: %.9g, expected %.9g", op, i, reference.values[h][i],
                 expected[h][i]);
    }
  }
  hgr_test_reference_free(&reference);
  hgr_graph_release(graph);
}

static void tolerances_are_exact_for_exact_ops_and_relative_for_others(void** state) {
  (void)state;
  const char* exact[] = {"add", "subtract", "multiply", "maximum", "minimum", "negative",
                         "relu", "__copy", "__nop"};
  const char* inexact[] = {"divide", "exp", "sigmoid", "tanh"};
  bool known = false;
  for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); ++i) {
    hgr_test_tolerance_t t = hgr_test_op_tolerance(exact[i], &known);
    assert_true(known);
    assert_true(t.relative == 0 && t.absolute == 0);
  }
  for (size_t i = 0; i < sizeof(inexact) / sizeof(inexact[0]); ++i) {
    hgr_test_tolerance_t t = hgr_test_op_tolerance(inexact[i], &known);
    assert_true(known);
    assert_true(t.relative >= 1e-6 && t.relative <= 1e-4 && t.absolute > 0);
  }
  hgr_test_op_tolerance("conv2d", &known);
  assert_false(known);
}

static void error_bounds_follow_an_inexact_value_through_exact_ops(void** state) {
  (void)state;
  /* exp(A) * B - B: the bound grows with |B| (multiply) and survives subtract. */
  static const char json[] =
      "{\"nodes\":[{\"op\":\"null\",\"name\":\"A\",\"inputs\":[]},"
      "{\"op\":\"null\",\"name\":\"B\",\"inputs\":[]},"
      "{\"op\":\"tvm_op\",\"name\":\"e\",\"attrs\":{\"func_name\":\"exp\",\"num_inputs\":\"1\","
      "\"num_outputs\":\"1\",\"flatten_data\":\"0\"},\"inputs\":[[0,0,0]]},"
      "{\"op\":\"tvm_op\",\"name\":\"m\",\"attrs\":{\"func_name\":\"multiply\","
      "\"num_inputs\":\"2\",\"num_outputs\":\"1\",\"flatten_data\":\"0\"},"
      "\"inputs\":[[2,0,0],[1,0,0]]},"
      "{\"op\":\"tvm_op\",\"name\":\"s\",\"attrs\":{\"func_name\":\"subtract\","
      "\"num_inputs\":\"2\",\"num_outputs\":\"1\",\"flatten_data\":\"0\"},"
      "\"inputs\":[[3,0,0],[1,0,0]]},"
      "{\"op\":\"tvm_op\",\"name\":\"z\",\"attrs\":{\"func_name\":\"subtract\","
      "\"num_inputs\":\"2\",\"num_outputs\":\"1\",\"flatten_data\":\"0\"},"
      "\"inputs\":[[1,0,0],[1,0,0]]}],"
      "\"arg_nodes\":[0,1],\"node_row_ptr\":[0,1,2,3,4,5,6],\"heads\":[[4,0,0],[5,0,0]],"
      "\"attrs\":{\"storage_id\":[\"list_int\",[0,1,2,3,4,5]],"
      "\"shape\":[\"list_shape\",[[2],[2],[2],[2],[2],[2]]],"
      "\"dltype\":[\"list_str\",[\"float32\",\"float32\",\"float32\",\"float32\",\"float32\","
      "\"float32\"]]}}";
  static const float a[2] = {1, 2}, b[2] = {1000, 0.001f};
  hgr_graph_t* graph = load(json);
  const float* inputs[2] = {a, b};
  hgr_test_reference_t reference;
  ASSERT_OK(hgr_test_reference_run(graph, inputs, &reference));
  assert_null(reference.error_bounds[1]); /* B - B is exact */
  const float* bound = reference.error_bounds[0];
  assert_non_null(bound);
  assert_true(bound[0] > 1e-5 * 2.718 * 1000 && bound[0] < 1e-4 * 2.718 * 1000);
  assert_true(bound[1] > 0 && bound[1] < bound[0]);
  float got[2] = {reference.values[0][0] + 0.5f * bound[0], reference.values[0][1]};
  char message[160];
  assert_true(hgr_test_reference_check(&reference, 0, got, message, sizeof(message)));
  got[0] = reference.values[0][0] + 2 * bound[0];
  assert_false(hgr_test_reference_check(&reference, 0, got, message, sizeof(message)));
  assert_non_null(strstr(message, "element 0: got"));
  hgr_test_reference_free(&reference);
  hgr_graph_release(graph);
}

static void compare_reports_the_first_mismatch_and_accepts_nan_and_infinity(void** state) {
  (void)state;
  const float expected[4] = {1, NAN, INFINITY, 4};
  float got[4] = {1, NAN, INFINITY, 4};
  char message[160] = "";
  assert_true(hgr_test_compare(got, expected, NULL, 4, message, sizeof(message)));
  got[3] = nextafterf(4, 5);
  assert_false(hgr_test_compare(got, expected, NULL, 4, message, sizeof(message)));
  assert_string_equal(message, "element 3: got 4.00000048, expected 4 (allowed error 0)");
  got[2] = -INFINITY;
  assert_false(hgr_test_compare(got, expected, NULL, 4, message, sizeof(message)));
  assert_non_null(strstr(message, "element 2: got -inf, expected inf"));
}

static void reference_rejects_an_unknown_op_naming_the_node(void** state) {
  (void)state;
  static const char json[] =
      "{\"nodes\":[{\"op\":\"null\",\"name\":\"A\",\"inputs\":[]},"
      "{\"op\":\"tvm_op\",\"name\":\"conv\",\"attrs\":{\"func_name\":\"conv2d\",\"num_inputs\":"
      "\"1\",\"num_outputs\":\"1\",\"flatten_data\":\"0\"},\"inputs\":[[0,0,0]]}],"
      "\"arg_nodes\":[0],\"node_row_ptr\":[0,1,2],\"heads\":[[1,0,0]],"
      "\"attrs\":{\"storage_id\":[\"list_int\",[0,1]],\"shape\":[\"list_shape\",[[3],[3]]],"
      "\"dltype\":[\"list_str\",[\"float32\",\"float32\"]]}}";
  static const float a[3] = {1, 2, 3};
  const float* inputs[1] = {a};
  hgr_graph_t* graph = load(json);
  hgr_test_reference_t reference;
  ASSERT_STATUS(hgr_test_reference_run(graph, inputs, &reference), HGR_STATUS_INVALID_ARGUMENT,
                "node 1 'conv'", "conv2d");
  hgr_test_reference_free(&reference);
  hgr_graph_release(graph);
}

/* ---- the generator ---------------------------------------------------------------- */

static const uint64_t sizes[] = {1, 7, 1000, 4096};
static const int32_t keys3[] = {1, 4, 5};

static hgr_test_graph_options_t options_for(uint64_t seed, size_t key_count) {
  return (hgr_test_graph_options_t){.seed = seed, .op_count = 10 + (uint32_t)(seed % 30),
                                    .sizes = sizes, .size_count = 1 + seed % 4,
                                    .device_keys = key_count ? keys3 : NULL,
                                    .device_key_count = key_count};
}

static uint32_t entry_of(const hgr_graph_t* graph, uint32_t node_id) {
  return graph->node_row_ptr[node_id];
}

/* What a generated graph exercises, counted from the loaded graph itself. */
typedef struct features_t {
  uint32_t reused; /* op outputs (not __nop) writing a storage an earlier entry used */
  uint32_t nops, nops_of_inputs, copies;
  bool copied[3][3];
} features_t;

static void check_generated_graph(const hgr_graph_t* graph, size_t key_count, features_t* f) {
  bool* pinned = calloc(graph->storage_count, sizeof(bool));
  bool* used = calloc(graph->storage_count, sizeof(bool));
  for (uint32_t i = 0; i < graph->arg_count; ++i)
    pinned[graph->entries[entry_of(graph, graph->arg_nodes[i])].storage_slot] = true;
  for (uint32_t h = 0; h < graph->head_count; ++h)
    pinned[graph->entries[hgr__graph_entry_id(graph, graph->heads[h])].storage_slot] = true;
  assert_int_equal(graph->has_device_index, key_count > 0);
  assert_true(graph->head_count >= 1 && graph->head_count <= 3);
  assert_int_equal(graph->heads[0].node_id, graph->node_count - 1);
  for (uint32_t n = 0; n < graph->node_count; ++n) {
    const hgr__node_t* node = &graph->nodes[n];
    const hgr__entry_t* out = &graph->entries[entry_of(graph, n)];
    if (!node->is_op) {
      assert_false(used[out->storage_slot]); /* inputs keep their own storage */
      used[out->storage_slot] = true;
      continue;
    }
    const hgr__entry_t* in = &graph->entries[hgr__graph_entry_id(graph, node->inputs[0])];
    if (!strcmp(node->func_name, "__nop")) {
      assert_int_equal(out->storage_slot, in->storage_slot);
      assert_int_equal(out->device_key, in->device_key);
      f->nops++;
      f->nops_of_inputs += !graph->nodes[node->inputs[0].node_id].is_op;
      continue;
    }
    for (uint32_t k = 0; k < node->input_count; ++k) {
      const hgr__entry_t* input = &graph->entries[hgr__graph_entry_id(graph, node->inputs[k])];
      assert_int_equal(input->element_count, out->element_count);
      if (strcmp(node->func_name, "__copy")) assert_int_equal(input->device_key, out->device_key);
    }
    if (!strcmp(node->func_name, "__copy")) {
      assert_int_not_equal(in->device_key, out->device_key);
      size_t from = 0, to = 0;
      for (size_t k = 0; k < key_count; ++k) {
        if (keys3[k] == in->device_key) from = k;
        if (keys3[k] == out->device_key) to = k;
      }
      f->copied[from][to] = true;
      f->copies++;
    }
    if (used[out->storage_slot]) {
      assert_false(pinned[out->storage_slot]); /* never reuse an input's or a head's storage */
      f->reused++;
    }
    used[out->storage_slot] = true;
  }
  free(pinned);
  free(used);
}

static void generated_graphs_load_and_exercise_reuse_copies_and_nops(void** state) {
  (void)state;
  features_t total = {0};
  for (size_t key_count = 0; key_count <= 3; ++key_count) {
    for (uint64_t seed = 1; seed <= 40; ++seed) {
      hgr_test_graph_options_t options = options_for(seed, key_count);
      char* json = hgr_test_graph_generate(&options);
      assert_non_null(json);
      hgr_graph_t* graph = NULL;
      hgr_status_t status = hgr_graph_load_json(json, strlen(json), &graph);
      if (status) {
        char* text = hgr_status_to_string(status);
        fail_msg("seed %llu, %zu keys: %s\n%s", (unsigned long long)seed, key_count, text, json);
      }
      features_t f = {0};
      check_generated_graph(graph, key_count, &f);
      for (size_t from = 0; from < key_count; ++from)
        for (size_t to = 0; to < key_count; ++to)
          if (from != to && !f.copied[from][to])
            fail_msg("seed %llu, %zu keys: no copy from key %d to key %d",
                     (unsigned long long)seed, key_count, keys3[from], keys3[to]);
      total.reused += f.reused;
      total.nops += f.nops;
      total.nops_of_inputs += f.nops_of_inputs;
      total.copies += f.copies;
      hgr_graph_release(graph);
      free(json);
    }
  }
  print_message("160 graphs: %u storage reuses, %u nops (%u of inputs), %u copies\n",
                total.reused, total.nops, total.nops_of_inputs, total.copies);
  assert_true(total.reused > 200);
  assert_true(total.nops > 40 && total.nops_of_inputs > 0);
  assert_true(total.copies > 100);
}

static void generated_graphs_are_deterministic_per_seed(void** state) {
  (void)state;
  hgr_test_graph_options_t options = options_for(7, 2);
  char* first = hgr_test_graph_generate(&options);
  char* again = hgr_test_graph_generate(&options);
  options.seed = 8;
  char* other = hgr_test_graph_generate(&options);
  assert_string_equal(first, again);
  assert_string_not_equal(first, other);
  free(first);
  free(again);
  free(other);
}

static void reference_runs_generated_graphs_with_large_tensors(void** state) {
  (void)state;
  static const uint64_t large[] = {1, 300000};
  hgr_test_graph_options_t options = {.seed = 3, .op_count = 40, .sizes = large, .size_count = 2,
                                      .device_keys = keys3, .device_key_count = 2};
  char* json = hgr_test_graph_generate(&options);
  hgr_graph_t* graph = load(json);
  float** inputs = calloc(graph->arg_count, sizeof(float*));
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 11);
  for (uint32_t i = 0; i < graph->arg_count; ++i) {
    uint64_t count = graph->entries[entry_of(graph, graph->arg_nodes[i])].element_count;
    inputs[i] = malloc(count * sizeof(float));
    for (uint64_t e = 0; e < count; ++e) inputs[i][e] = hgr_test_rng_float(&rng, -2, 2);
  }
  hgr_test_reference_t reference;
  ASSERT_OK(hgr_test_reference_run(graph, (const float* const*)inputs, &reference));
  assert_int_equal(reference.output_count, graph->head_count);
  char message[160];
  for (size_t h = 0; h < reference.output_count; ++h) /* the oracle agrees with itself */
    assert_true(hgr_test_reference_check(&reference, h, reference.values[h], message,
                                         sizeof(message)));
  hgr_test_reference_free(&reference);
  for (uint32_t i = 0; i < graph->arg_count; ++i) free(inputs[i]);
  free(inputs);
  hgr_graph_release(graph);
  free(json);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(reference_computes_every_op_by_hand),
      cmocka_unit_test(tolerances_are_exact_for_exact_ops_and_relative_for_others),
      cmocka_unit_test(error_bounds_follow_an_inexact_value_through_exact_ops),
      cmocka_unit_test(compare_reports_the_first_mismatch_and_accepts_nan_and_infinity),
      cmocka_unit_test(reference_rejects_an_unknown_op_naming_the_node),
      cmocka_unit_test(generated_graphs_load_and_exercise_reuse_copies_and_nops),
      cmocka_unit_test(generated_graphs_are_deterministic_per_seed),
      cmocka_unit_test(reference_runs_generated_graphs_with_large_tensors),
  };
  return cmocka_run_group_tests_name("reference", tests, NULL, NULL);
}
