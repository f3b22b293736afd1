/* Every built-in op against the plain-C reference on random data, one device at a
 * time (argument: a device spec). Shapes include 1, odd sizes and sizes that are no
 * multiple of the work-group size; Oclgrind gets the small ones, since it simulates
 * every work-item (its kernel checks fail the test through CTest). */
#include <stdlib.h>
#include <string.h>

#include "reference.h"
#include "testlib.h"

static const char* device_spec;
static hgr_instance_t* instance;

static const struct {
  const char* name;
  int inputs;
} ops[] = {{"add", 2},      {"subtract", 2}, {"multiply", 2}, {"divide", 2}, {"maximum", 2}, {"minimum", 2},
           {"negative", 1}, {"relu", 1},     {"exp", 1},      {"sigmoid", 1}, {"tanh", 1}};

/* A graph with the op's inputs and one op node, on one device (no device_index). */
static char* op_graph(const char* op, int inputs, const char* shape) {
  char* json = malloc(2048);
  snprintf(json, 2048,
           "{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []},%s"
           "{\"op\": \"tvm_op\", \"name\": \"%s_node\", \"attrs\": {\"func_name\": \"%s\", \"num_inputs\": \"%d\","
           " \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[0, 0]%s]}],"
           " \"arg_nodes\": [%s], \"node_row_ptr\": [%s], \"heads\": [[%d, 0]],"
           " \"attrs\": {\"storage_id\": [\"list_int\", [%s]], \"shape\": [\"list_shape\", [%s, %s%s%s]],"
           " \"dltype\": [\"list_str\", [\"float32\", \"float32\"%s]]}}",
           inputs == 2 ? " {\"op\": \"null\", \"name\": \"y\", \"inputs\": []}," : "", op, op, inputs,
           inputs == 2 ? ", [1, 0]" : "", inputs == 2 ? "0, 1" : "0", inputs == 2 ? "0, 1, 2, 3" : "0, 1, 2",
           inputs, inputs == 2 ? "0, 1, 2" : "0, 1", shape, shape, inputs == 2 ? ", " : "",
           inputs == 2 ? shape : "", inputs == 2 ? ", \"float32\"" : "");
  return json;
}

static void fill(hgr_test_rng_t* rng, const char* op, int which, float* data, uint64_t count) {
  for (uint64_t i = 0; i < count; ++i) {
    float value = hgr_test_rng_float(rng, -4.0f, 4.0f);
    /* Keep denominators away from zero, where the quotient's tolerance explodes. */
    if (!strcmp(op, "divide") && which == 1) value = (value < 0 ? -1.0f : 1.0f) * (0.5f + (float)(i % 7) * 0.25f);
    /* Equal operands now and then, where maximum/minimum must pick either. */
    if (which == 1 && i % 5 == 0 && (!strcmp(op, "maximum") || !strcmp(op, "minimum"))) value = data[-(int64_t)count + (int64_t)i];
    data[i] = value;
  }
}

static void run_op(const char* op, int inputs, const char* shape, uint64_t count, uint64_t seed) {
  char* json = op_graph(op, inputs, shape);
  hgr_graph_t* graph = NULL;
  ASSERT_OK(hgr_graph_load_json(json, strlen(json), &graph));
  free(json);
  hgr_device_binding_t binding = {0, device_spec};
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  options.bindings = &binding;
  options.binding_count = 1;
  hgr_executor_t* executor = NULL;
  ASSERT_OK(hgr_executor_create(instance, graph, &options, &executor));

  float* data = malloc(2 * count * sizeof(float));
  float* got = malloc(count * sizeof(float));
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, seed);
  fill(&rng, op, 0, data, count);
  if (inputs == 2) fill(&rng, op, 1, data + count, count);
  const float* in[2] = {data, data + count};
  for (int i = 0; i < inputs; ++i) ASSERT_OK(hgr_executor_set_input(executor, (size_t)i, in[i], count * 4));
  ASSERT_OK(hgr_executor_run(executor));
  ASSERT_OK(hgr_executor_wait(executor));
  ASSERT_OK(hgr_executor_get_output(executor, 0, got, count * 4));

  hgr_test_reference_t reference;
  ASSERT_OK(hgr_test_reference_run(graph, in, &reference));
  char message[256];
  if (!hgr_test_reference_check(&reference, 0, got, message, sizeof(message))) {
    print_error("%s on %s, shape %s: %s\n", op, device_spec, shape, message);
    fail();
  }
  hgr_test_reference_free(&reference);
  free(data);
  free(got);
  hgr_executor_release(executor);
  hgr_graph_release(graph);
}

static void every_op_matches_the_reference_on_random_data(void** state) {
  (void)state;
  bool simulator = strstr(device_spec, "oclgrind") != NULL;
  static const struct {
    const char* shape;
    uint64_t count;
  } shapes[] = {{"[1]", 1}, {"[7]", 7}, {"[3, 5]", 15}, {"[65]", 65}, {"[2, 3, 167]", 1002}, {"[65537]", 65537}};
  size_t shape_count = simulator ? 5 : sizeof(shapes) / sizeof(shapes[0]);
  for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); ++o)
    for (size_t s = 0; s < shape_count; ++s) run_op(ops[o].name, ops[o].inputs, shapes[s].shape, shapes[s].count, o * 31 + s + 1);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: test_ops DEVICE_SPEC\n");
    return 2;
  }
  device_spec = argv[1];
  hgr_status_t status = hgr_instance_create(NULL, &instance);
  if (status) {
    char* text = hgr_status_to_string(status);
    fprintf(stderr, "%s\n", text);
    free(text);
    hgr_status_free(status);
    return 1;
  }
  hgr_test_require_devices(instance, &device_spec, 1);
  const struct CMUnitTest tests[] = {cmocka_unit_test(every_op_matches_the_reference_on_random_data)};
  int failed = cmocka_run_group_tests_name("ops", tests, NULL, NULL);
  hgr_instance_release(instance);
  return failed;
}
