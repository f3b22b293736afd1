/* The graph builder (hgr/builder.h): one test per error, each checking that the
 * message names the node, the op and the input or attr at fault and that the
 * builder stays usable; attrs as TVM strings; constants as params; and graphs
 * built with it (an MLP, a conv + pool net, broadcast and reshape) run on pocl:0
 * and match the plain-C references, and load back the same after
 * hgr_graph_write_json; a kernel library op with declared shapes builds and runs.
 * Also: an executor given no bindings uses the ones a graph
 * records (pocl:0 and pocl:1).
 *
 *   test_builder unit     the builder alone, no device
 *   test_builder run      graphs on pocl:0, bindings on pocl:0 and pocl:1 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"
#include "ref_conv.h"
#include "ref_elementwise.h"
#include "ref_linalg.h"
#include "ref_norm.h"
#include "reference.h"
#include "testlib.h"

static const hgr_dtype_t F32 = {HGR_DTYPE_FLOAT, 32, 1};
static const hgr_dtype_t I32 = {HGR_DTYPE_INT, 32, 1};

static hgr_builder_t* new_builder(void) {
  hgr_builder_t* builder = NULL;
  ASSERT_OK(hgr_builder_create(NULL, &builder));
  return builder;
}

static hgr_value_t input(hgr_builder_t* builder, const char* name, hgr_dtype_t dtype, int32_t ndim, int64_t d0,
                         int64_t d1, int64_t d2, int64_t d3) {
  const int64_t shape[4] = {d0, d1, d2, d3};
  hgr_value_t value;
  ASSERT_OK(hgr_builder_add_input(builder, name, dtype, shape, ndim, &value));
  return value;
}

static hgr_value_t op1(hgr_builder_t* builder, const char* name, const char* op, const hgr_value_t* inputs,
                       uint32_t input_count, const hgr_attrs_t* attrs) {
  hgr_value_t out;
  ASSERT_OK(hgr_builder_add_op(builder, name, op, inputs, input_count, attrs, 1, &out));
  return out;
}

static void assert_shape(const hgr_builder_t* builder, hgr_value_t value, int32_t ndim, const int64_t* shape) {
  hgr_tensor_info_t info;
  ASSERT_OK(hgr_builder_value_info(builder, value, &info));
  assert_int_equal(info.ndim, ndim);
  for (int32_t d = 0; d < ndim; ++d) assert_int_equal(info.shape[d], shape[d]);
}

/* The builder's graph so far: node count, to check that a failed add left none. */
static uint32_t node_count_of(const hgr_builder_t* builder) {
  uint32_t count = 0;
  hgr_tensor_info_t info;
  hgr_status_t status;
  while (!(status = hgr_builder_value_info(builder, (hgr_value_t){count, 0}, &info))) ++count;
  hgr_status_free(status);
  return count;
}

/* x [2, 3] float32, y [2, 3] float32, k [2, 3] int32: what the error tests add to. */
static hgr_builder_t* two_inputs(hgr_value_t* x, hgr_value_t* y, hgr_value_t* k) {
  hgr_builder_t* builder = new_builder();
  *x = input(builder, "x", F32, 2, 2, 3, 0, 0);
  *y = input(builder, "y", F32, 2, 2, 3, 0, 0);
  *k = input(builder, "k", I32, 2, 2, 3, 0, 0);
  return builder;
}

/* After a refused add, the builder takes the next node as node 3 and finishes. */
static void assert_still_usable(hgr_builder_t* builder, hgr_value_t x, hgr_value_t y) {
  assert_int_equal(node_count_of(builder), 3);
  hgr_value_t sum = op1(builder, "ok", "add", (hgr_value_t[]){x, y}, 2, NULL);
  assert_int_equal(sum.node, 3);
  ASSERT_OK(hgr_builder_mark_output(builder, sum));
  hgr_graph_t* graph = NULL;
  ASSERT_OK(hgr_builder_finish(builder, &graph, NULL));
  assert_int_equal(hgr_graph_node_count(graph), 4);
  hgr_graph_release(graph);
}

/* ---- one test per error ------------------------------------------------------------ */

static void builder_refuses_an_unknown_op(void** state) {
  (void)state;
  hgr_value_t x, y, k;
  hgr_builder_t* builder = two_inputs(&x, &y, &k);
  ASSERT_STATUS(hgr_builder_add_op(builder, "mystery", "no_such_op", &x, 1, NULL, 0, NULL),
                HGR_STATUS_INVALID_ARGUMENT, "node 3 'mystery'", "unknown func_name 'no_such_op'", "known: add");
  ASSERT_STATUS(hgr_builder_add_op(builder, "copy", "__copy", &x, 1, NULL, 0, NULL), HGR_STATUS_INVALID_ARGUMENT,
                "node 3 'copy' (__copy)", "placement inserts");
  assert_still_usable(builder, x, y);
  hgr_builder_release(builder);
}

static void builder_refuses_an_attr_the_op_does_not_know(void** state) {
  (void)state;
  hgr_value_t x, y, k;
  hgr_builder_t* builder = two_inputs(&x, &y, &k);
  hgr_attrs_t* attrs = NULL;
  ASSERT_OK(hgr_attrs_create(&attrs));
  ASSERT_OK(hgr_attrs_set_int(attrs, "axis", 1));
  ASSERT_STATUS(hgr_builder_add_op(builder, "r", "relu", &x, 1, attrs, 0, NULL), HGR_STATUS_INVALID_ARGUMENT,
                "node 3 'r' (relu)", "unknown attr 'axis'");
  hgr_attrs_release(attrs);
  assert_still_usable(builder, x, y);
  hgr_builder_release(builder);
}

static void builder_refuses_a_bad_attr_value(void** state) {
  (void)state;
  hgr_value_t x, y, k;
  hgr_builder_t* builder = two_inputs(&x, &y, &k);
  hgr_attrs_t* attrs = NULL;
  ASSERT_OK(hgr_attrs_create(&attrs));
  ASSERT_OK(hgr_attrs_set_string(attrs, "axis", "last"));
  ASSERT_STATUS(hgr_builder_add_op(builder, "s", "softmax", &x, 1, attrs, 0, NULL), HGR_STATUS_INVALID_ARGUMENT,
                "node 3 's' (softmax)", "axis", "last");
  ASSERT_OK(hgr_attrs_set_int(attrs, "axis", 5));
  ASSERT_STATUS(hgr_builder_add_op(builder, "s", "softmax", &x, 1, attrs, 0, NULL), HGR_STATUS_INVALID_ARGUMENT,
                "node 3 's' (softmax)", "axis", "5");
  hgr_attrs_release(attrs);
  assert_still_usable(builder, x, y);
  hgr_builder_release(builder);
}

static void builder_refuses_a_wrong_input_count(void** state) {
  (void)state;
  hgr_value_t x, y, k;
  hgr_builder_t* builder = two_inputs(&x, &y, &k);
  ASSERT_STATUS(hgr_builder_add_op(builder, "sum", "add", &x, 1, NULL, 0, NULL), HGR_STATUS_INVALID_ARGUMENT,
                "node 3 'sum' (add)", "takes 2 input(s), the node has 1");
  ASSERT_STATUS(hgr_builder_add_op(builder, "r", "relu", (hgr_value_t[]){x, y}, 2, NULL, 0, NULL),
                HGR_STATUS_INVALID_ARGUMENT, "node 3 'r' (relu)", "takes 1 input(s), the node has 2");
  ASSERT_STATUS(hgr_builder_add_op(builder, "r", "relu", &x, 1, NULL, 2, NULL), HGR_STATUS_INVALID_ARGUMENT,
                "node 3 'r' (relu)", "takes 1 output(s), the node has 2");
  assert_still_usable(builder, x, y);
  hgr_builder_release(builder);
}

static void builder_refuses_a_dtype_mismatch(void** state) {
  (void)state;
  hgr_value_t x, y, k;
  hgr_builder_t* builder = two_inputs(&x, &y, &k);
  ASSERT_STATUS(hgr_builder_add_op(builder, "mixed", "add", (hgr_value_t[]){x, k}, 2, NULL, 0, NULL),
                HGR_STATUS_INVALID_ARGUMENT, "node 3 'mixed' (add)", "input 1", "int32");
  ASSERT_STATUS(hgr_builder_add_op(builder, "sm", "softmax", &k, 1, NULL, 0, NULL), HGR_STATUS_INVALID_ARGUMENT,
                "node 3 'sm' (softmax)", "input 0", "int32");
  assert_still_usable(builder, x, y);
  hgr_builder_release(builder);
}

static void builder_refuses_a_shape_mismatch(void** state) {
  (void)state;
  hgr_value_t x, y, k;
  hgr_builder_t* builder = two_inputs(&x, &y, &k);
  hgr_value_t z = input(builder, "z", F32, 2, 4, 5, 0, 0);
  ASSERT_STATUS(hgr_builder_add_op(builder, "sum", "add", (hgr_value_t[]){x, z}, 2, NULL, 0, NULL),
                HGR_STATUS_INVALID_ARGUMENT, "node 4 'sum' (add)", "input 0 shaped [2, 3] and input 1 shaped [4, 5]",
                "do not broadcast");
  /* dense: x [2, 3] against a weight [4, 5] (3 in features against 5). */
  ASSERT_STATUS(hgr_builder_add_op(builder, "fc", "dense", (hgr_value_t[]){x, z}, 2, NULL, 0, NULL),
                HGR_STATUS_INVALID_ARGUMENT, "node 4 'fc' (dense)", "input 1");
  assert_int_equal(node_count_of(builder), 4);
  hgr_builder_release(builder);
}

static void builder_refuses_a_bad_reference(void** state) {
  (void)state;
  hgr_value_t x, y, k;
  hgr_builder_t* builder = two_inputs(&x, &y, &k);
  ASSERT_STATUS(hgr_builder_add_op(builder, "x2", "add", (hgr_value_t[]){x, {9, 0}}, 2, NULL, 0, NULL),
                HGR_STATUS_INVALID_ARGUMENT,
                "node 3 'x2' (add): input 1 refers to node 9, which does not exist yet");
  /* Itself: node 3 does not exist while it is being added, so no cycle can form. */
  ASSERT_STATUS(hgr_builder_add_op(builder, "self", "relu", (hgr_value_t[]){{3, 0}}, 1, NULL, 0, NULL),
                HGR_STATUS_INVALID_ARGUMENT,
                "node 3 'self' (relu): input 0 refers to node 3, which does not exist yet");
  ASSERT_STATUS(hgr_builder_add_op(builder, "x3", "relu", (hgr_value_t[]){{1, 1}}, 1, NULL, 0, NULL),
                HGR_STATUS_INVALID_ARGUMENT,
                "node 3 'x3' (relu): input 0 refers to output 1 of node 1 'y' (an input), which has 1 output");
  ASSERT_STATUS(hgr_builder_mark_output(builder, (hgr_value_t){7, 0}), HGR_STATUS_INVALID_ARGUMENT,
                "output 0: node 7 does not exist");
  assert_still_usable(builder, x, y);
  hgr_builder_release(builder);
}

static void builder_refuses_a_duplicate_name_naming_both(void** state) {
  (void)state;
  hgr_value_t x, y, k;
  hgr_builder_t* builder = two_inputs(&x, &y, &k);
  ASSERT_STATUS(hgr_builder_add_op(builder, "y", "relu", &x, 1, NULL, 0, NULL), HGR_STATUS_INVALID_ARGUMENT,
                "node 3 'y' (relu): the name 'y' is taken by node 1 'y' (an input)");
  ASSERT_STATUS(hgr_builder_add_input(builder, "x", F32, NULL, 0, NULL), HGR_STATUS_INVALID_ARGUMENT,
                "node 3 'x' (an input): the name 'x' is taken by node 0 'x' (an input)");
  ASSERT_STATUS(hgr_builder_add_constant(builder, "k", F32, NULL, 0, &(float){1}, 4, NULL),
                HGR_STATUS_INVALID_ARGUMENT, "node 3 'k' (a constant): the name 'k' is taken by node 2 'k'");
  hgr_value_t r = op1(builder, "r", "relu", &x, 1, NULL);
  ASSERT_STATUS(hgr_builder_add_op(builder, "r", "relu", &r, 1, NULL, 0, NULL), HGR_STATUS_INVALID_ARGUMENT,
                "node 4 'r' (relu): the name 'r' is taken by node 3 'r' (relu)");
  /* Generated names: "<op>_<node id>". */
  hgr_value_t unnamed;
  ASSERT_OK(hgr_builder_add_op(builder, NULL, "relu", &r, 1, NULL, 0, &unnamed));
  hgr_tensor_info_t info;
  ASSERT_OK(hgr_builder_value_info(builder, unnamed, &info));
  assert_string_equal(info.name, "relu_4");
  hgr_builder_release(builder);
}

static void builder_refuses_to_finish_without_outputs(void** state) {
  (void)state;
  hgr_value_t x, y, k;
  hgr_builder_t* builder = two_inputs(&x, &y, &k);
  hgr_graph_t* graph = NULL;
  hgr_params_t* params = NULL;
  ASSERT_STATUS(hgr_builder_finish(builder, &graph, &params), HGR_STATUS_INVALID_ARGUMENT, "no outputs",
                "hgr_builder_mark_output");
  assert_null(graph);
  assert_null(params);
  assert_still_usable(builder, x, y);
  /* Finished: everything but value info is refused. */
  ASSERT_STATUS(hgr_builder_finish(builder, &graph, NULL), HGR_STATUS_FAILED_PRECONDITION, "finished");
  ASSERT_STATUS(hgr_builder_add_input(builder, "late", F32, NULL, 0, NULL), HGR_STATUS_FAILED_PRECONDITION,
                "finished");
  ASSERT_STATUS(hgr_builder_add_op(builder, "late", "relu", &x, 1, NULL, 0, NULL), HGR_STATUS_FAILED_PRECONDITION,
                "finished");
  ASSERT_STATUS(hgr_builder_mark_output(builder, x), HGR_STATUS_FAILED_PRECONDITION, "finished");
  assert_shape(builder, (hgr_value_t){3, 0}, 2, (int64_t[]){2, 3});
  hgr_builder_release(builder);
}

static void builder_refuses_bad_inputs_and_constants(void** state) {
  (void)state;
  hgr_builder_t* builder = new_builder();
  ASSERT_STATUS(hgr_builder_add_input(builder, "neg", F32, (int64_t[]){2, -1}, 2, NULL), HGR_STATUS_INVALID_ARGUMENT,
                "node 0 'neg' (an input): dimension 1 is -1");
  ASSERT_STATUS(hgr_builder_add_input(builder, "deep", F32, (int64_t[HGR_MAX_DIMS + 1]){0}, HGR_MAX_DIMS + 1, NULL),
                HGR_STATUS_INVALID_ARGUMENT, "node 0 'deep' (an input)", "dimensions");
  ASSERT_STATUS(hgr_builder_add_input(builder, "", F32, NULL, 0, NULL), HGR_STATUS_INVALID_ARGUMENT, "non-empty name");
  ASSERT_STATUS(hgr_builder_add_input(builder, "odd", (hgr_dtype_t){HGR_DTYPE_FLOAT, 3, 1}, NULL, 0, NULL),
                HGR_STATUS_INVALID_ARGUMENT, "node 0 'odd' (an input)");
  ASSERT_STATUS(hgr_builder_add_input(builder, "huge", F32, (int64_t[]){1LL << 40, 1LL << 40}, 2, NULL),
                HGR_STATUS_INVALID_ARGUMENT,
                "node 0 'huge' (an input): shape [1099511627776, 1099511627776] of float32",
                "more elements or bytes than 2^63 - 1");
  float data[6] = {0};
  ASSERT_STATUS(hgr_builder_add_constant(builder, "w", F32, (int64_t[]){2, 3}, 2, data, 20, NULL),
                HGR_STATUS_INVALID_ARGUMENT,
                "node 0 'w' (a constant): 20 bytes of data, but its dtype and shape make 24");
  ASSERT_STATUS(hgr_builder_add_constant(builder, "v", (hgr_dtype_t){HGR_DTYPE_FLOAT, 32, 2}, (int64_t[]){3}, 1,
                                         data, 24, NULL),
                HGR_STATUS_INVALID_ARGUMENT, "node 0 'v' (a constant): a constant cannot have 2 lanes");
  assert_int_equal(node_count_of(builder), 0);
  hgr_builder_release(builder);
}

/* ---- attrs ---------------------------------------------------------------------------- */

static void attrs_are_written_as_tvm_strings(void** state) {
  (void)state;
  hgr_attrs_t* attrs = NULL;
  ASSERT_OK(hgr_attrs_create(&attrs));
  ASSERT_OK(hgr_attrs_set_int(attrs, "units", -3));
  ASSERT_OK(hgr_attrs_set_float(attrs, "alpha", 0.1f));
  ASSERT_OK(hgr_attrs_set_float(attrs, "epsilon", 1e-5));
  ASSERT_OK(hgr_attrs_set_float(attrs, "a_max", INFINITY));
  ASSERT_OK(hgr_attrs_set_string(attrs, "data_layout", "NCHW"));
  ASSERT_OK(hgr_attrs_set_ints(attrs, "padding", (int64_t[]){1, 2, 3, 4}, 4));
  ASSERT_OK(hgr_attrs_set_floats(attrs, "scales", (double[]){0.5, 2, -1.25}, 3));
  ASSERT_OK(hgr_attrs_set_ints(attrs, "axes", NULL, 0));
  ASSERT_OK(hgr_attrs_set_int(attrs, "units", 10)); /* replaces, keeps its place */
  static const char* const expected[][2] = {
      {"units", "10"},        {"alpha", "0.100000001"}, {"epsilon", "1e-05"},
      {"a_max", "inf"},       {"data_layout", "NCHW"},  {"padding", "[1, 2, 3, 4]"},
      {"scales", "[0.5, 2, -1.25]"}, {"axes", "[]"},
  };
  assert_int_equal(hgr_attrs_count(attrs), 8);
  for (size_t i = 0; i < 8; ++i) {
    const char *key, *value;
    ASSERT_OK(hgr_attrs_get(attrs, i, &key, &value));
    assert_string_equal(key, expected[i][0]);
    assert_string_equal(value, expected[i][1]);
  }
  /* A float32 survives the string. */
  const char *key, *value;
  ASSERT_OK(hgr_attrs_get(attrs, 1, &key, &value));
  assert_true((float)strtod(value, NULL) == 0.1f);
  ASSERT_STATUS(hgr_attrs_get(attrs, 8, &key, &value), HGR_STATUS_OUT_OF_RANGE, "attr 8");
  ASSERT_STATUS(hgr_attrs_set_int(attrs, "num_outputs", 2), HGR_STATUS_INVALID_ARGUMENT, "num_outputs",
                "set by the builder");
  ASSERT_STATUS(hgr_attrs_set_int(attrs, "", 2), HGR_STATUS_INVALID_ARGUMENT, "non-empty");
  ASSERT_STATUS(hgr_attrs_set_float(attrs, "alpha", NAN), HGR_STATUS_INVALID_ARGUMENT, "'alpha'", "NaN");
  ASSERT_STATUS(hgr_attrs_set_floats(attrs, "s", (double[]){1, NAN}, 2), HGR_STATUS_INVALID_ARGUMENT, "'s'", "NaN");
  ASSERT_STATUS(hgr_attrs_set_ints(attrs, "p", NULL, 2), HGR_STATUS_INVALID_ARGUMENT, "'p'", "no array");
  ASSERT_STATUS(hgr_attrs_set_string(attrs, "p", NULL), HGR_STATUS_INVALID_ARGUMENT, "'p'");
  assert_int_equal(hgr_attrs_count(attrs), 8);
  hgr_attrs_release(attrs);
}

/* ---- results: the graph, the params, JSON --------------------------------------------------- */

static void assert_writes_and_loads_back_the_same(const hgr_graph_t* graph) {
  char* text = NULL;
  size_t length = 0;
  FILE* out = open_memstream(&text, &length);
  assert_non_null(out);
  hgr_status_t status = hgr_graph_write_json(graph, out);
  fclose(out);
  ASSERT_OK(status);
  hgr_graph_t* again = NULL;
  ASSERT_OK(hgr_graph_load_json(text, length, &again));
  char difference[256] = "";
  if (!hgr__graph_same(graph, again, difference, sizeof(difference))) {
    print_error("the written graph loads as another graph: %s\n%s\n", difference, text);
    fail();
  }
  hgr_graph_release(again);
  free(text);
}

static void built_graph_has_own_storages_no_device_keys_and_its_constants_as_params(void** state) {
  (void)state;
  hgr_builder_t* builder = new_builder();
  hgr_value_t x = input(builder, "x", F32, 2, 2, 3, 0, 0);
  const float bias[3] = {1, 2, 3};
  hgr_value_t b;
  ASSERT_OK(hgr_builder_add_constant(builder, "b", F32, (int64_t[]){3}, 1, bias, sizeof(bias), &b));
  hgr_value_t sum = op1(builder, "sum", "add", (hgr_value_t[]){x, b}, 2, NULL);
  hgr_value_t r = op1(builder, "r", "relu", &sum, 1, NULL);
  hgr_value_t twice = op1(builder, "twice", "add", (hgr_value_t[]){r, r}, 2, NULL); /* fan-out */
  assert_shape(builder, twice, 2, (int64_t[]){2, 3});
  ASSERT_OK(hgr_builder_mark_output(builder, twice));
  ASSERT_OK(hgr_builder_mark_output(builder, sum));
  ASSERT_OK(hgr_builder_mark_output(builder, x)); /* an input may be an output, as in TVM */
  hgr_graph_t* graph = NULL;
  hgr_params_t* params = NULL;
  ASSERT_OK(hgr_builder_finish(builder, &graph, &params));
  hgr_builder_release(builder); /* the graph outlives its builder */
  assert_false(graph->has_device_index);
  assert_int_equal(graph->storage_count, graph->entry_count);
  for (uint32_t e = 0; e < graph->entry_count; ++e) assert_int_equal(graph->entries[e].storage_id, e);
  assert_int_equal(hgr_graph_input_count(graph), 2);
  hgr_tensor_info_t info;
  ASSERT_OK(hgr_graph_output_info(graph, 1, &info));
  assert_string_equal(info.name, "sum:1");
  assert_int_equal(hgr_params_count(params), 1);
  const void* data = NULL;
  ASSERT_OK(hgr_params_get(params, 0, &info, &data));
  assert_string_equal(info.name, "b");
  assert_memory_equal(data, bias, sizeof(bias));
  assert_writes_and_loads_back_the_same(graph);
  hgr_params_release(params);
  hgr_graph_release(graph);
}

/* ---- running built graphs on pocl:0 -------------------------------------------------------- */

static hgr_instance_t* instance;

static float* random_floats(hgr_test_rng_t* rng, size_t count, float lo, float hi) {
  float* values = malloc(count * sizeof(float) + 1);
  for (size_t i = 0; i < count; ++i) values[i] = hgr_test_rng_float(rng, lo, hi);
  return values;
}

/* Runs graph once on pocl:0 with params and inputs[i] for the graph inputs that are
 * not params (in input order); returns output `output` (malloc'd). */
static float* run_on_pocl(hgr_graph_t* graph, const hgr_params_t* params, const float* const* inputs,
                          size_t output) {
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  const hgr_device_binding_t binding = {0, "pocl:0"}; /* no device_index: it places everything */
  options.bindings = &binding;
  options.binding_count = 1;
  options.params = params;
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
    if (is_param) continue;
    ASSERT_OK(hgr_executor_set_input(executor, i, inputs[given++], info.bytes));
  }
  ASSERT_OK(hgr_executor_run(executor));
  hgr_tensor_info_t info;
  ASSERT_OK(hgr_graph_output_info(graph, output, &info));
  float* result = malloc(info.bytes + 1);
  ASSERT_OK(hgr_executor_get_output(executor, output, result, info.bytes));
  hgr_executor_release(executor);
  return result;
}

static void assert_close(const float* got, const float* expected, size_t count, double relative, double absolute,
                         const char* what) {
  for (size_t i = 0; i < count; ++i) {
    double allowed = relative * fabs(expected[i]) + absolute;
    if (!(fabs((double)got[i] - expected[i]) <= allowed)) {
      print_error("%s: element %zu: got %.9g, expected %.9g (allowed error %.3g)\n", what, i, got[i], expected[i],
                  allowed);
      fail();
    }
  }
}

static hgr_value_t constant(hgr_builder_t* builder, const char* name, const float* data, int32_t ndim,
                            const int64_t* shape) {
  uint64_t count = 1;
  for (int32_t d = 0; d < ndim; ++d) count *= (uint64_t)shape[d];
  hgr_value_t value;
  ASSERT_OK(hgr_builder_add_constant(builder, name, F32, shape, ndim, data, count * sizeof(float), &value));
  return value;
}

/* x [4, 16] -> dense 32 + b1 -> relu -> dense 10 + b2 -> softmax. */
static void built_mlp_runs_and_matches_the_reference(void** state) {
  (void)state;
  enum { ROWS = 4, IN = 16, HIDDEN = 32, CLASSES = 10 };
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 14);
  float* x = random_floats(&rng, ROWS * IN, -1, 1);
  float* w1 = random_floats(&rng, HIDDEN * IN, -0.5f, 0.5f);
  float* b1 = random_floats(&rng, HIDDEN, -0.5f, 0.5f);
  float* w2 = random_floats(&rng, CLASSES * HIDDEN, -0.5f, 0.5f);
  float* b2 = random_floats(&rng, CLASSES, -0.5f, 0.5f);

  hgr_builder_t* builder = new_builder();
  hgr_value_t vx = input(builder, "x", F32, 2, ROWS, IN, 0, 0);
  hgr_value_t vw1 = constant(builder, "w1", w1, 2, (int64_t[]){HIDDEN, IN});
  hgr_value_t vb1 = constant(builder, "b1", b1, 1, (int64_t[]){HIDDEN});
  hgr_value_t vw2 = constant(builder, "w2", w2, 2, (int64_t[]){CLASSES, HIDDEN});
  hgr_value_t vb2 = constant(builder, "b2", b2, 1, (int64_t[]){CLASSES});
  hgr_attrs_t* attrs = NULL;
  ASSERT_OK(hgr_attrs_create(&attrs));
  ASSERT_OK(hgr_attrs_set_int(attrs, "units", HIDDEN));
  hgr_value_t h = op1(builder, "fc1", "dense", (hgr_value_t[]){vx, vw1}, 2, attrs);
  hgr_attrs_release(attrs);
  assert_shape(builder, h, 2, (int64_t[]){ROWS, HIDDEN});
  h = op1(builder, "bias1", "add", (hgr_value_t[]){h, vb1}, 2, NULL);
  h = op1(builder, "relu1", "relu", &h, 1, NULL);
  hgr_value_t logits = op1(builder, "fc2", "dense", (hgr_value_t[]){h, vw2}, 2, NULL);
  logits = op1(builder, "bias2", "add", (hgr_value_t[]){logits, vb2}, 2, NULL);
  ASSERT_OK(hgr_attrs_create(&attrs));
  ASSERT_OK(hgr_attrs_set_int(attrs, "axis", -1));
  hgr_value_t probabilities = op1(builder, "softmax", "softmax", &logits, 1, attrs);
  hgr_attrs_release(attrs);
  assert_shape(builder, probabilities, 2, (int64_t[]){ROWS, CLASSES});
  ASSERT_OK(hgr_builder_mark_output(builder, probabilities));
  hgr_graph_t* graph = NULL;
  hgr_params_t* params = NULL;
  ASSERT_OK(hgr_builder_finish(builder, &graph, &params));
  hgr_builder_release(builder);
  assert_writes_and_loads_back_the_same(graph);

  float* got = run_on_pocl(graph, params, (const float* const[]){x}, 0);
  float hidden[ROWS * HIDDEN], out[ROWS * CLASSES], expected[ROWS * CLASSES];
  hgr_ref_dense(x, w1, b1, hidden, ROWS, IN, HIDDEN);
  hgr_ref_unary_f32("relu", hidden, hidden, ROWS * HIDDEN, 0, 0);
  hgr_ref_dense(hidden, w2, b2, out, ROWS, HIDDEN, CLASSES);
  hgr_ref_softmax(out, expected, ROWS, CLASSES, 1, false);
  /* float32 sums of 16 and 32 products against double: a few ulp per term. */
  assert_close(got, expected, ROWS * CLASSES, 1e-4, 1e-6, "mlp");
  free(got);
  hgr_params_release(params);
  hgr_graph_release(graph);
  free(x), free(w1), free(b1), free(w2), free(b2);
}

/* x [1, 3, 10, 10] -> conv2d 4x3x3x3 pad 1 + bias -> relu -> max_pool 2x2 -> batch_flatten -> dense 5. */
static void built_conv_pool_net_runs_and_matches_the_reference(void** state) {
  (void)state;
  const int64_t xshape[4] = {1, 3, 10, 10}, wshape[4] = {4, 3, 3, 3};
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 1414);
  float* x = random_floats(&rng, 300, -1, 1);
  float* w = random_floats(&rng, 108, -0.5f, 0.5f);
  float* bias = random_floats(&rng, 4, -0.5f, 0.5f);
  float* fc = random_floats(&rng, 5 * 100, -0.2f, 0.2f);

  hgr_builder_t* builder = new_builder();
  hgr_value_t vx = input(builder, "x", F32, 4, 1, 3, 10, 10);
  hgr_value_t vw = constant(builder, "w", w, 4, wshape);
  hgr_value_t vb = constant(builder, "bias", bias, 1, (int64_t[]){4});
  hgr_value_t vfc = constant(builder, "fc_w", fc, 2, (int64_t[]){5, 100});
  hgr_attrs_t* attrs = NULL;
  ASSERT_OK(hgr_attrs_create(&attrs));
  ASSERT_OK(hgr_attrs_set_ints(attrs, "padding", (int64_t[]){1, 1}, 2));
  ASSERT_OK(hgr_attrs_set_ints(attrs, "kernel_size", (int64_t[]){3, 3}, 2));
  ASSERT_OK(hgr_attrs_set_int(attrs, "channels", 4));
  hgr_value_t y = op1(builder, "conv", "conv2d", (hgr_value_t[]){vx, vw, vb}, 3, attrs);
  hgr_attrs_release(attrs);
  assert_shape(builder, y, 4, (int64_t[]){1, 4, 10, 10});
  y = op1(builder, "relu", "relu", &y, 1, NULL);
  ASSERT_OK(hgr_attrs_create(&attrs));
  ASSERT_OK(hgr_attrs_set_ints(attrs, "pool_size", (int64_t[]){2, 2}, 2));
  ASSERT_OK(hgr_attrs_set_ints(attrs, "strides", (int64_t[]){2, 2}, 2));
  y = op1(builder, "pool", "max_pool2d", &y, 1, attrs);
  hgr_attrs_release(attrs);
  assert_shape(builder, y, 4, (int64_t[]){1, 4, 5, 5});
  y = op1(builder, "flatten", "batch_flatten", &y, 1, NULL);
  assert_shape(builder, y, 2, (int64_t[]){1, 100});
  y = op1(builder, "fc", "dense", (hgr_value_t[]){y, vfc}, 2, NULL);
  ASSERT_OK(hgr_builder_mark_output(builder, y));
  hgr_graph_t* graph = NULL;
  hgr_params_t* params = NULL;
  ASSERT_OK(hgr_builder_finish(builder, &graph, &params));
  hgr_builder_release(builder);
  assert_writes_and_loads_back_the_same(graph);

  float* got = run_on_pocl(graph, params, (const float* const[]){x}, 0);
  hgr_ref_conv2d_t conv = {{1, 1}, {1, 1, 1, 1}, {1, 1}, 1, true};
  int64_t yshape[4], pshape[4];
  hgr_ref_conv2d_shape(xshape, wshape, &conv, yshape);
  float conv_out[400], pooled[100], expected[5];
  hgr_ref_conv2d(x, xshape, w, wshape, bias, conv_out, yshape, &conv);
  hgr_ref_pool2d_t pool = {true, {2, 2}, {2, 2}, {1, 1}, {0, 0, 0, 0}, false, false};
  hgr_ref_pool2d_shape(yshape, &pool, pshape);
  assert_int_equal(pshape[2], 5);
  hgr_ref_pool2d(conv_out, yshape, pooled, pshape, &pool);
  hgr_ref_dense(pooled, fc, NULL, expected, 1, 100, 5);
  assert_close(got, expected, 5, 1e-4, 1e-5, "conv net");
  free(got);
  hgr_params_release(params);
  hgr_graph_release(graph);
  free(x), free(w), free(bias), free(fc);
}

/* a [2, 3, 4] + b [4] -> * c [3, 1] -> reshape [6, 4] -> - a reshaped [6, 4]; a used
 * twice, two outputs. Exact ops: compared bit for bit. */
static void built_broadcast_and_reshape_graph_runs_exactly(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 140);
  float* a = random_floats(&rng, 24, -4, 4);
  float* b = random_floats(&rng, 4, -4, 4);
  float* c = random_floats(&rng, 3, -4, 4);
  hgr_builder_t* builder = new_builder();
  hgr_value_t va = input(builder, "a", F32, 3, 2, 3, 4, 0);
  hgr_value_t vb = input(builder, "b", F32, 1, 4, 0, 0, 0);
  hgr_value_t vc = input(builder, "c", F32, 2, 3, 1, 0, 0);
  hgr_value_t sum = op1(builder, "sum", "add", (hgr_value_t[]){va, vb}, 2, NULL);
  hgr_value_t product = op1(builder, "product", "multiply", (hgr_value_t[]){sum, vc}, 2, NULL);
  assert_shape(builder, product, 3, (int64_t[]){2, 3, 4});
  hgr_attrs_t* attrs = NULL;
  ASSERT_OK(hgr_attrs_create(&attrs));
  ASSERT_OK(hgr_attrs_set_ints(attrs, "newshape", (int64_t[]){-1, 4}, 2));
  hgr_value_t flat = op1(builder, "flat", "reshape", &product, 1, attrs);
  hgr_value_t flat_a = op1(builder, "flat_a", "reshape", &va, 1, attrs);
  hgr_attrs_release(attrs);
  assert_shape(builder, flat, 2, (int64_t[]){6, 4});
  hgr_value_t difference = op1(builder, "difference", "subtract", (hgr_value_t[]){flat, flat_a}, 2, NULL);
  ASSERT_OK(hgr_builder_mark_output(builder, difference));
  ASSERT_OK(hgr_builder_mark_output(builder, product));
  hgr_graph_t* graph = NULL;
  ASSERT_OK(hgr_builder_finish(builder, &graph, NULL));
  hgr_builder_release(builder);
  assert_writes_and_loads_back_the_same(graph);

  float expected_sum[24], expected_product[24], expected_difference[24];
  assert_true(hgr_ref_binary_f32("add", a, (int64_t[]){2, 3, 4}, 3, b, (int64_t[]){4}, 1, expected_sum));
  assert_true(hgr_ref_binary_f32("multiply", expected_sum, (int64_t[]){2, 3, 4}, 3, c, (int64_t[]){3, 1}, 2,
                                 expected_product));
  assert_true(hgr_ref_binary_f32("subtract", expected_product, (int64_t[]){6, 4}, 2, a, (int64_t[]){6, 4}, 2,
                                 expected_difference));
  const float* const inputs[] = {a, b, c};
  float* got = run_on_pocl(graph, NULL, inputs, 0);
  assert_close(got, expected_difference, 24, 0, 0, "difference");
  free(got);
  got = run_on_pocl(graph, NULL, inputs, 1);
  assert_close(got, expected_product, 24, 0, 0, "product");
  free(got);
  hgr_graph_release(graph);
  free(a), free(b), free(c);
}

/* Random elementwise DAGs (fan-out, several outputs, inputs used late), built, run
 * and compared with the test oracle (tests/reference.h), which evaluates the built
 * graph node by node on the host with its own tolerance per op. */
static void built_random_dags_match_the_oracle(void** state) {
  (void)state;
  static const char* const binary[] = {"add", "subtract", "multiply", "maximum", "minimum", "divide"};
  static const char* const unary[] = {"negative", "relu", "sigmoid", "tanh"};
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    hgr_test_rng_t rng;
    hgr_test_rng_seed(&rng, 1400 + seed);
    int64_t elements = 1 + hgr_test_rng_below(&rng, 300);
    uint32_t input_count = 1 + hgr_test_rng_below(&rng, 3), op_count = 2 + hgr_test_rng_below(&rng, 30);
    hgr_builder_t* builder = new_builder();
    hgr_value_t values[64];
    uint32_t value_count = 0;
    float* inputs[3];
    for (uint32_t i = 0; i < input_count; ++i) {
      char name[16];
      snprintf(name, sizeof(name), "in%u", i);
      values[value_count++] = input(builder, name, F32, 1, elements, 0, 0, 0);
      inputs[i] = random_floats(&rng, (size_t)elements, 0.5f, 2);
    }
    for (uint32_t n = 0; n < op_count; ++n) {
      /* Mostly recent values, sometimes any earlier one: long edges and fan-out. */
      hgr_value_t a = values[value_count - 1 - hgr_test_rng_below(&rng, value_count < 3 ? value_count : 3)];
      hgr_value_t b = values[hgr_test_rng_below(&rng, value_count)];
      if (hgr_test_rng_below(&rng, 3) == 0)
        values[value_count++] = op1(builder, NULL, unary[hgr_test_rng_below(&rng, 4)], &a, 1, NULL);
      else
        values[value_count++] = op1(builder, NULL, binary[hgr_test_rng_below(&rng, 6)], (hgr_value_t[]){a, b}, 2, NULL);
    }
    ASSERT_OK(hgr_builder_mark_output(builder, values[value_count - 1]));
    uint32_t extra = hgr_test_rng_below(&rng, 3);
    for (uint32_t o = 0; o < extra; ++o)
      ASSERT_OK(hgr_builder_mark_output(builder, values[hgr_test_rng_below(&rng, value_count)]));
    hgr_graph_t* graph = NULL;
    ASSERT_OK(hgr_builder_finish(builder, &graph, NULL));
    hgr_builder_release(builder);
    assert_writes_and_loads_back_the_same(graph);

    hgr_test_reference_t reference;
    ASSERT_OK(hgr_test_reference_run(graph, (const float* const*)inputs, &reference));
    for (size_t o = 0; o < hgr_graph_output_count(graph); ++o) {
      float* got = run_on_pocl(graph, NULL, (const float* const*)inputs, o);
      char message[256];
      if (!hgr_test_reference_check(&reference, o, got, message, sizeof(message))) {
        print_error("random DAG %llu, output %zu: %s\n", (unsigned long long)seed, o, message);
        fail();
      }
      free(got);
    }
    hgr_test_reference_free(&reference);
    hgr_graph_release(graph);
    for (uint32_t i = 0; i < input_count; ++i) free(inputs[i]);
  }
}

/* A kernel library's op: usable in the builder when its manifest declares
 * "shapes", refused naming the key when it does not. */
static hgr_kernel_library_t* write_library(const char* name, const char* shapes) {
  char path[4096];
  snprintf(path, sizeof(path), "%s", hgr_test_tmp_path("scale.cl"));
  FILE* source = fopen(path, "w");
  assert_non_null(source);
  fputs("__kernel void scale(__global const float* x, __global float* y, uint n, float alpha) {\n"
        "  size_t i = get_global_id(0);\n  if (i < n) y[i] = alpha * x[i];\n}\n",
        source);
  fclose(source);
  snprintf(path, sizeof(path), "%s", hgr_test_tmp_path(name));
  FILE* manifest = fopen(path, "w");
  assert_non_null(manifest);
  fprintf(manifest,
          "{\"ops\": [{\"func_name\": \"scale\", \"kernel\": \"scale\", \"source\": \"%s\", \"inputs\": 1, "
          "\"outputs\": 1, \"args\": [\"input 0\", \"output 0\", \"elements output 0\", \"attr alpha float\"], "
          "\"ndrange\": \"elements\"%s}]}",
          hgr_test_tmp_path("scale.cl"), shapes);
  fclose(manifest);
  hgr_kernel_library_t* library = NULL;
  ASSERT_OK(hgr_kernel_library_load_file(path, &library));
  return library;
}

static void builder_uses_a_kernel_library_op_that_declares_its_shapes(void** state) {
  (void)state;
  hgr_kernel_library_t* library = write_library("shapes.json", ", \"shapes\": [\"input 0\"]");
  hgr_builder_t* builder = NULL;
  ASSERT_OK(hgr_builder_create(library, &builder));
  hgr_kernel_library_release(library); /* the builder retains it */
  hgr_value_t x = input(builder, "x", F32, 2, 3, 5, 0, 0);
  hgr_attrs_t* attrs = NULL;
  ASSERT_OK(hgr_attrs_create(&attrs));
  ASSERT_OK(hgr_attrs_set_float(attrs, "alpha", -2.5));
  hgr_value_t y;
  ASSERT_OK(hgr_builder_add_op(builder, "scaled", "scale", &x, 1, attrs, 0, &y));
  hgr_attrs_release(attrs);
  assert_shape(builder, y, 2, (int64_t[]){3, 5});
  hgr_value_t z = op1(builder, "relu", "relu", &y, 1, NULL);
  ASSERT_OK(hgr_builder_mark_output(builder, z));
  hgr_graph_t* graph = NULL;
  ASSERT_OK(hgr_builder_finish(builder, &graph, NULL));
  hgr_builder_release(builder);

  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  const hgr_device_binding_t binding = {0, "pocl:0"};
  options.bindings = &binding;
  options.binding_count = 1;
  ASSERT_OK(hgr_kernel_library_load_file(hgr_test_tmp_path("shapes.json"), &options.kernels));
  hgr_executor_t* executor = NULL;
  ASSERT_OK(hgr_executor_create(instance, graph, &options, &executor));
  hgr_kernel_library_release(options.kernels);
  float x_values[15], got[15];
  for (int i = 0; i < 15; ++i) x_values[i] = (float)(i - 7);
  ASSERT_OK(hgr_executor_set_input(executor, 0, x_values, sizeof(x_values)));
  ASSERT_OK(hgr_executor_run(executor));
  ASSERT_OK(hgr_executor_get_output(executor, 0, got, sizeof(got)));
  for (int i = 0; i < 15; ++i) assert_true(got[i] == fmaxf(-2.5f * x_values[i], 0.0f));
  hgr_executor_release(executor);
  hgr_graph_release(graph);

  /* Without "shapes" the builder cannot know the output, and says so. */
  library = write_library("no_shapes.json", "");
  ASSERT_OK(hgr_builder_create(library, &builder));
  hgr_kernel_library_release(library);
  x = input(builder, "x", F32, 1, 4, 0, 0, 0);
  ASSERT_OK(hgr_attrs_create(&attrs));
  ASSERT_OK(hgr_attrs_set_float(attrs, "alpha", 2));
  ASSERT_STATUS(hgr_builder_add_op(builder, "scaled", "scale", &x, 1, attrs, 0, NULL), HGR_STATUS_INVALID_ARGUMENT,
                "node 1 'scaled' (scale)", "\"shapes\"");
  hgr_attrs_release(attrs);
  hgr_builder_release(builder);
  /* And without the library the op is unknown. */
  builder = new_builder();
  x = input(builder, "x", F32, 1, 4, 0, 0, 0);
  ASSERT_STATUS(hgr_builder_add_op(builder, "scaled", "scale", &x, 1, NULL, 0, NULL), HGR_STATUS_INVALID_ARGUMENT,
                "unknown func_name 'scale'");
  hgr_builder_release(builder);
}

/* ---- recorded bindings: an executor given none uses the graph's ------------------------------- */

static void executor_uses_the_bindings_the_graph_records(void** state) {
  (void)state;
  static const char json[] =
      "{\"nodes\": [{\"op\": \"null\", \"name\": \"a\", \"inputs\": []}, "
      "{\"op\": \"tvm_op\", \"name\": \"copy\", \"attrs\": {\"func_name\": \"__copy\", \"num_inputs\": \"1\", "
      "\"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[0, 0, 0]]}, "
      "{\"op\": \"tvm_op\", \"name\": \"r\", \"attrs\": {\"func_name\": \"relu\", \"num_inputs\": \"1\", "
      "\"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[1, 0, 0]]}], "
      "\"arg_nodes\": [0], \"node_row_ptr\": [0, 1, 2, 3], \"heads\": [[2, 0, 0]], "
      "\"attrs\": {\"storage_id\": [\"list_int\", [0, 1, 2]], \"shape\": [\"list_shape\", [[8], [8], [8]]], "
      "\"dltype\": [\"list_str\", [\"float32\", \"float32\", \"float32\"]], "
      "\"device_index\": [\"list_int\", [1, 5, 5]]}, "
      "\"metadata\": {\"hgr\": {\"device_bindings\": {\"1\": \"pocl:1\", \"5\": \"pocl:0\"}}}}";
  static const char* const specs[] = {"pocl:0", "pocl:1"};
  hgr_test_require_devices(instance, specs, 2);
  size_t pocl0, pocl1;
  ASSERT_OK(hgr_instance_find_device(instance, "pocl:0", &pocl0));
  ASSERT_OK(hgr_instance_find_device(instance, "pocl:1", &pocl1));
  hgr_graph_t* graph = NULL;
  ASSERT_OK(hgr_graph_load_json(json, strlen(json), &graph));
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  hgr_executor_t* executor = NULL;
  ASSERT_OK(hgr_executor_create(instance, graph, &options, &executor));
  assert_int_equal(hgr_executor_key_count(executor), 2);
  hgr_key_binding_t key1 = hgr_executor_key_binding(executor, 0), key5 = hgr_executor_key_binding(executor, 1);
  assert_int_equal(key1.key, 1);
  assert_int_equal(key1.device_index, pocl1); /* TVM's default for key 1 would be the first CPU, pocl:0 */
  assert_int_equal(key5.key, 5);
  assert_int_equal(key5.device_index, pocl0);
  const float a[8] = {-1, 2, -3, 4, -5, 6, -7, 8}, expected[8] = {0, 2, 0, 4, 0, 6, 0, 8};
  float got[8];
  ASSERT_OK(hgr_executor_set_input(executor, 0, a, sizeof(a)));
  ASSERT_OK(hgr_executor_run(executor));
  ASSERT_OK(hgr_executor_get_output(executor, 0, got, sizeof(got)));
  assert_memory_equal(got, expected, sizeof(got));
  hgr_executor_release(executor);

  /* Any explicit binding replaces the recorded ones. */
  const hgr_device_binding_t mine = {1, "pocl:0"};
  options.bindings = &mine;
  options.binding_count = 1;
  options.plan_only = true;
  ASSERT_OK(hgr_executor_create(instance, graph, &options, &executor));
  assert_int_equal(hgr_executor_key_binding(executor, 0).device_index, pocl0);
  hgr_executor_release(executor);

  /* A recorded spec that names no device says where it came from. */
  hgr_graph_t* stale = NULL;
  char* edited = strdup(json);
  memcpy(strstr(edited, "\"pocl:1\""), "\"pocl:7\"", 8);
  ASSERT_OK(hgr_graph_load_json(edited, strlen(edited), &stale));
  hgr_executor_options_init(&options);
  ASSERT_STATUS(hgr_executor_create(instance, stale, &options, &executor), HGR_STATUS_NOT_FOUND,
                "device binding 1=pocl:7 (recorded in the graph's metadata");
  assert_null(executor);
  free(edited);
  hgr_graph_release(stale);
  hgr_graph_release(graph);
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
  static const char* const specs[] = {"pocl:0"};
  hgr_test_require_devices(instance, specs, 1);
  return 0;
}

static int tear_down_instance(void** state) {
  (void)state;
  hgr_instance_release(instance);
  return 0;
}

int main(int argc, char** argv) {
  const struct CMUnitTest unit[] = {
      cmocka_unit_test(builder_refuses_an_unknown_op),
      cmocka_unit_test(builder_refuses_an_attr_the_op_does_not_know),
      cmocka_unit_test(builder_refuses_a_bad_attr_value),
      cmocka_unit_test(builder_refuses_a_wrong_input_count),
      cmocka_unit_test(builder_refuses_a_dtype_mismatch),
      cmocka_unit_test(builder_refuses_a_shape_mismatch),
      cmocka_unit_test(builder_refuses_a_bad_reference),
      cmocka_unit_test(builder_refuses_a_duplicate_name_naming_both),
      cmocka_unit_test(builder_refuses_to_finish_without_outputs),
      cmocka_unit_test(builder_refuses_bad_inputs_and_constants),
      cmocka_unit_test(attrs_are_written_as_tvm_strings),
      cmocka_unit_test(built_graph_has_own_storages_no_device_keys_and_its_constants_as_params),
  };
  const struct CMUnitTest run[] = {
      cmocka_unit_test(built_mlp_runs_and_matches_the_reference),
      cmocka_unit_test(built_conv_pool_net_runs_and_matches_the_reference),
      cmocka_unit_test(built_broadcast_and_reshape_graph_runs_exactly),
      cmocka_unit_test(built_random_dags_match_the_oracle),
      cmocka_unit_test(builder_uses_a_kernel_library_op_that_declares_its_shapes),
      cmocka_unit_test(executor_uses_the_bindings_the_graph_records),
  };
  if (argc == 2 && !strcmp(argv[1], "unit")) return cmocka_run_group_tests_name("builder", unit, NULL, NULL);
  if (argc == 2 && !strcmp(argv[1], "run"))
    return cmocka_run_group_tests_name("builder_run", run, set_up_instance, tear_down_instance);
  fprintf(stderr, "usage: %s unit|run\n", argv[0]);
  return 2;
}
