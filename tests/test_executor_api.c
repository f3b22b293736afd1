/* Executor API paths that the end-to-end tests do not reach: params loading, TVM's
 * default device-key bindings, binding errors, storage limits, plan-only executors. */
#include <stdlib.h>
#include <string.h>

#include "device_internal.h"
#include "testlib.h"

static hgr_instance_t* instance;

/* A graph of one add per device key, each followed by a copy to the first key:
 * keys[0] <- keys[i]. Shapes are [elements]. */
static hgr_graph_t* chain_graph(const int* keys, size_t key_count, unsigned long long elements) {
  char json[8192];
  size_t used = 0;
  used += (size_t)snprintf(json + used, sizeof(json) - used,
                           "{\"nodes\": [{\"op\": \"null\", \"name\": \"A\", \"inputs\": []},"
                           "{\"op\": \"null\", \"name\": \"B\", \"inputs\": []},"
                           "{\"op\": \"tvm_op\", \"name\": \"add\", \"attrs\": {\"func_name\": \"add\","
                           " \"num_inputs\": \"2\", \"num_outputs\": \"1\", \"flatten_data\": \"0\"},"
                           " \"inputs\": [[0, 0], [1, 0]]}");
  /* node 3..: copies of node 2's output to each other key */
  for (size_t k = 1; k < key_count; ++k)
    used += (size_t)snprintf(json + used, sizeof(json) - used,
                             ",{\"op\": \"tvm_op\", \"name\": \"copy%zu\", \"attrs\": {\"func_name\": \"__copy\","
                             " \"num_inputs\": \"1\", \"num_outputs\": \"1\", \"flatten_data\": \"0\"},"
                             " \"inputs\": [[2, 0]]}",
                             k);
  size_t nodes = 3 + key_count - 1;
  used += (size_t)snprintf(json + used, sizeof(json) - used, "], \"arg_nodes\": [0, 1], \"node_row_ptr\": [");
  for (size_t n = 0; n <= nodes; ++n) used += (size_t)snprintf(json + used, sizeof(json) - used, "%s%zu", n ? ", " : "", n);
  used += (size_t)snprintf(json + used, sizeof(json) - used, "], \"heads\": [[%zu, 0]], \"attrs\": {\"storage_id\": [\"list_int\", [",
                           nodes - 1);
  for (size_t n = 0; n < nodes; ++n) used += (size_t)snprintf(json + used, sizeof(json) - used, "%s%zu", n ? ", " : "", n);
  used += (size_t)snprintf(json + used, sizeof(json) - used, "]], \"shape\": [\"list_shape\", [");
  for (size_t n = 0; n < nodes; ++n)
    used += (size_t)snprintf(json + used, sizeof(json) - used, "%s[%llu]", n ? ", " : "", elements);
  used += (size_t)snprintf(json + used, sizeof(json) - used, "]], \"dltype\": [\"list_str\", [");
  for (size_t n = 0; n < nodes; ++n) used += (size_t)snprintf(json + used, sizeof(json) - used, "%s\"float32\"", n ? ", " : "");
  used += (size_t)snprintf(json + used, sizeof(json) - used, "]], \"device_index\": [\"list_int\", [%d, %d, %d", keys[0],
                           keys[0], keys[0]);
  for (size_t k = 1; k < key_count; ++k) used += (size_t)snprintf(json + used, sizeof(json) - used, ", %d", keys[k]);
  snprintf(json + used, sizeof(json) - used, "]]}}");
  hgr_graph_t* graph = NULL;
  ASSERT_OK(hgr_graph_load_json(json, strlen(json), &graph));
  return graph;
}

static hgr_executor_t* plan(hgr_graph_t* graph, const hgr_device_binding_t* bindings, size_t count) {
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  options.bindings = bindings;
  options.binding_count = count;
  options.plan_only = true;
  hgr_executor_t* executor = NULL;
  ASSERT_OK(hgr_executor_create(instance, graph, &options, &executor));
  return executor;
}

static const char* bound_spec(const hgr_executor_t* executor, int key) {
  for (size_t k = 0; k < hgr_executor_key_count(executor); ++k) {
    hgr_key_binding_t b = hgr_executor_key_binding(executor, k);
    if (b.key == key) return hgr_instance_device(instance, b.device_index)->spec;
  }
  return "(unbound)";
}

static void default_bindings_follow_tvm_and_leave_oclgrind_last(void** state) {
  (void)state;
  int keys[] = {1, 4, 5};
  hgr_graph_t* graph = chain_graph(keys, 3, 16);
  hgr_executor_t* executor = plan(graph, NULL, 0);
  /* The test bed has no GPU or accelerator: key 1 is the first CPU device that is
   * not the simulator, key 4 another device, key 5 the next unused one. */
  assert_string_equal(bound_spec(executor, 1), "pocl:0");
  assert_string_equal(bound_spec(executor, 4), "pocl:1");
  assert_string_equal(bound_spec(executor, 5), "rusticl:0");
  hgr_copy_summary_t copies = hgr_executor_copy_summary(executor);
  assert_int_equal(copies.count[HGR_PAIR_SAME_CONTEXT], 1);
  assert_int_equal(copies.count[HGR_PAIR_CROSS_PLATFORM], 1);
  hgr_executor_release(executor);

  /* An explicit binding wins and the rest still follow the defaults. */
  hgr_device_binding_t bindings[] = {{1, "oclgrind:0"}};
  executor = plan(graph, bindings, 1);
  assert_string_equal(bound_spec(executor, 1), "oclgrind:0");
  assert_string_equal(bound_spec(executor, 4), "pocl:0");
  assert_string_equal(bound_spec(executor, 5), "pocl:1");
  assert_true(hgr_executor_key_binding(executor, 0).explicit_binding);
  hgr_executor_release(executor);
  hgr_graph_release(graph);
}

static void bindings_must_name_graph_keys_once(void** state) {
  (void)state;
  int keys[] = {1, 4};
  hgr_graph_t* graph = chain_graph(keys, 2, 16);
  hgr_executor_t* executor = NULL;
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  hgr_device_binding_t unknown_key[] = {{7, "pocl:0"}};
  options.bindings = unknown_key;
  options.binding_count = 1;
  ASSERT_STATUS(hgr_executor_create(instance, graph, &options, &executor), HGR_STATUS_INVALID_ARGUMENT,
                "device binding for key 7", "device keys are 1, 4");
  hgr_device_binding_t twice[] = {{4, "pocl:0"}, {4, "pocl:1"}};
  options.bindings = twice;
  options.binding_count = 2;
  ASSERT_STATUS(hgr_executor_create(instance, graph, &options, &executor), HGR_STATUS_INVALID_ARGUMENT,
                "device key 4 is bound twice");
  assert_null(executor);
  hgr_graph_release(graph);
}

static void storage_beyond_the_largest_allocation_names_storage_and_device(void** state) {
  (void)state;
  int keys[] = {1};
  /* 8 GiB per tensor, just within what the kernels can index (INT32_MAX elements) */
  hgr_graph_t* graph = chain_graph(keys, 1, (1ull << 31) - 1);
  hgr_executor_t* executor = NULL;
  hgr_device_binding_t bindings[] = {{1, "pocl:0"}};
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  options.bindings = bindings;
  options.binding_count = 1;
  options.plan_only = true;
  /* PoCL derives both limits from the memory free when it starts (its largest
   * allocation was over 8 GiB on an idle 24 GiB machine): pin them for the test. */
  size_t device = 0;
  ASSERT_OK(hgr_instance_find_device(instance, "pocl:0", &device));
  hgr_device_info_t saved = instance->devices[device].info;
  instance->devices[device].info.max_alloc_bytes = 4ull << 30;
  instance->devices[device].info.global_mem_bytes = 64ull << 30;
  hgr_status_t status = hgr_executor_create(instance, graph, &options, &executor);
  instance->devices[device].info = saved;
  ASSERT_STATUS(status, HGR_STATUS_RESOURCE_EXHAUSTED, "storage 0 needs 8589934588 bytes",
                "largest allocation pocl:0 allows (4294967296 bytes)");
  hgr_graph_release(graph);
}

/* Creation with options passes with a budget of needed bytes per device and fails
 * with one byte less, the refusal naming what. */
static void expect_budget_of(hgr_graph_t* graph, hgr_executor_options_t* options, uint64_t needed,
                             const char* what) {
  hgr_executor_t* executor = NULL;
  options->memory_budget_bytes = needed;
  ASSERT_OK(hgr_executor_create(instance, graph, options, &executor));
  hgr_executor_release(executor);
  options->memory_budget_bytes = needed - 1;
  executor = NULL;
  ASSERT_STATUS(hgr_executor_create(instance, graph, options, &executor), HGR_STATUS_RESOURCE_EXHAUSTED, what,
                "more than the memory budget of");
  assert_null(executor);
}

/* Storage and the host staging of copies into a device count against the budget. */
static void a_memory_budget_counts_storage_and_staging(void** state) {
  (void)state;
  int keys[] = {1, 4};
  hgr_graph_t* graph = chain_graph(keys, 2, 1000); /* 4,000-byte tensors, a copy 4 -> 1 */
  hgr_device_binding_t bindings[] = {{1, "pocl:0"}, {4, "rusticl:0"}};
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  options.bindings = bindings;
  options.binding_count = 2;
  options.plan_only = true;
  hgr_executor_t* executor = NULL;
  ASSERT_OK(hgr_executor_create(instance, graph, &options, &executor));
  uint64_t most = 0;
  for (size_t d = 0; d < hgr_executor_device_count(executor); ++d) {
    hgr_device_usage_t usage = hgr_executor_device_usage(executor, d);
    if (usage.storage_bytes + usage.staging_bytes > most) most = usage.storage_bytes + usage.staging_bytes;
  }
  hgr_executor_release(executor);
  assert_true(most > 0);
  expect_budget_of(graph, &options, most, "host staging");
  hgr_graph_release(graph);
}

/* A node's scratch buffer (the split stride-2 convolution's copy of its padded
 * input, its columns split by parity, plus a tail of 64 floats) counts against the
 * budget too, and the refusal says so. */
static void a_memory_budget_counts_kernel_scratch(void** state) {
  (void)state;
  static const char json[] =
      "{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []},"
      "{\"op\": \"null\", \"name\": \"w\", \"inputs\": []},"
      "{\"op\": \"tvm_op\", \"name\": \"conv\", \"attrs\": {\"func_name\": \"conv2d\", \"num_inputs\": \"2\","
      " \"num_outputs\": \"1\", \"flatten_data\": \"0\", \"strides\": \"[2, 2]\", \"padding\": \"1\"},"
      " \"inputs\": [[0, 0], [1, 0]]}],"
      " \"arg_nodes\": [0, 1], \"node_row_ptr\": [0, 1, 2, 3], \"heads\": [[2, 0]],"
      " \"attrs\": {\"storage_id\": [\"list_int\", [0, 1, 2]],"
      " \"shape\": [\"list_shape\", [[1, 4, 32, 32], [8, 4, 3, 3], [1, 8, 16, 16]]],"
      " \"dltype\": [\"list_str\", [\"float32\", \"float32\", \"float32\"]]}}";
  hgr_graph_t* graph = NULL;
  ASSERT_OK(hgr_graph_load_json(json, strlen(json), &graph));
  hgr_device_binding_t binding = {0, "pocl:0"};
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  options.bindings = &binding;
  options.binding_count = 1;
  options.plan_only = true;
  hgr_executor_t* executor = NULL;
  ASSERT_OK(hgr_executor_create(instance, graph, &options, &executor));
  assert_int_equal(hgr_executor_device_count(executor), 1);
  hgr_device_usage_t usage = hgr_executor_device_usage(executor, 0);
  /* 4 planes of 34 padded rows of 2 x 17 floats, and the tail */
  assert_int_equal(usage.scratch_bytes, (4 * 34 * 2 * 17 + 64) * sizeof(float));
  hgr_executor_release(executor);
  expect_budget_of(graph, &options, usage.storage_bytes + usage.staging_bytes + usage.scratch_bytes,
                   "kernel scratch: 18752 bytes");
  hgr_graph_release(graph);
}

static void plan_only_executors_summarize_but_cannot_run(void** state) {
  (void)state;
  int keys[] = {1, 4};
  hgr_graph_t* graph = chain_graph(keys, 2, 256);
  hgr_executor_t* executor = plan(graph, NULL, 0);
  assert_int_equal(hgr_executor_device_count(executor), 2);
  hgr_device_usage_t usage = hgr_executor_device_usage(executor, 0);
  assert_int_equal(usage.storage_bytes + hgr_executor_device_usage(executor, 1).storage_bytes, 4 * 256 * 4);
  ASSERT_STATUS(hgr_executor_run(executor), HGR_STATUS_FAILED_PRECONDITION, "plan-only");
  float data[256] = {0};
  ASSERT_STATUS(hgr_executor_set_input(executor, 0, data, sizeof(data)), HGR_STATUS_FAILED_PRECONDITION,
                "plan-only");
  hgr_executor_release(executor);
  hgr_graph_release(graph);
}

/* Every getter that takes an index answers an index past the end with an empty
 * record, never with memory past its arrays (ASan checks the second half). */
static void getters_answer_indices_out_of_range_with_empty_records(void** state) {
  (void)state;
  int keys[] = {1, 4};
  hgr_graph_t* graph = chain_graph(keys, 2, 16);
  hgr_executor_t* executor = plan(graph, NULL, 0);
  size_t key_count = hgr_executor_key_count(executor), device_count = hgr_executor_device_count(executor);
  assert_int_equal(key_count, 2);
  assert_int_not_equal(hgr_executor_key_binding(executor, key_count - 1).device_index, SIZE_MAX);
  hgr_key_binding_t past_key = hgr_executor_key_binding(executor, key_count);
  assert_int_equal(past_key.device_index, SIZE_MAX);
  assert_false(past_key.explicit_binding);
  assert_int_equal(hgr_executor_key_binding(executor, SIZE_MAX).device_index, SIZE_MAX);
  hgr_device_usage_t past_device = hgr_executor_device_usage(executor, device_count);
  assert_int_equal(past_device.device_index, SIZE_MAX);
  assert_int_equal(past_device.storage_bytes, 0);
  assert_int_equal(hgr_executor_device_usage(executor, SIZE_MAX).device_index, SIZE_MAX);
  assert_null(hgr_executor_unused_param(executor, 0));
  hgr_device_time_t time;
  ASSERT_STATUS(hgr_executor_device_time(executor, device_count, &time), HGR_STATUS_OUT_OF_RANGE, "device");
  hgr_executor_release(executor);
  hgr_graph_release(graph);
}

static void params_fill_inputs_by_name_and_report_the_rest(void** state) {
  (void)state;
  int keys[] = {1, 4};
  hgr_graph_t* graph = chain_graph(keys, 2, 8);
  hgr_device_binding_t bindings[] = {{1, "pocl:0"}, {4, "pocl:1"}};
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  options.bindings = bindings;
  options.binding_count = 2;
  hgr_executor_t* executor = NULL;
  ASSERT_OK(hgr_executor_create(instance, graph, &options, &executor));

  hgr_params_t* params = NULL;
  ASSERT_OK(hgr_params_create(&params));
  hgr_dtype_t f32 = {HGR_DTYPE_FLOAT, 32, 1};
  int64_t shape[] = {8};
  float a[8] = {1, 2, 3, 4, 5, 6, 7, 8}, b[8] = {10, 10, 10, 10, 10, 10, 10, 10};
  ASSERT_OK(hgr_params_add(params, "A", f32, 1, shape, a, sizeof(a)));
  ASSERT_OK(hgr_params_add(params, "B", f32, 1, shape, b, sizeof(b)));
  ASSERT_OK(hgr_params_add(params, "not_an_input", f32, 1, shape, b, sizeof(b)));
  size_t unused = 0;
  ASSERT_OK(hgr_executor_load_params(executor, params, &unused));
  assert_int_equal(unused, 1);
  assert_string_equal(hgr_executor_unused_param(executor, 0), "not_an_input");
  assert_null(hgr_executor_unused_param(executor, 1));
  ASSERT_OK(hgr_executor_run(executor));
  ASSERT_OK(hgr_executor_wait(executor));
  float out[8];
  ASSERT_OK(hgr_executor_get_output(executor, 0, out, sizeof(out)));
  for (int i = 0; i < 8; ++i) assert_float_equal(out[i], a[i] + 10.0f, 0.0f);
  hgr_params_release(params);

  /* A param whose shape or dtype differs from its input is refused, naming both. */
  ASSERT_OK(hgr_params_create(&params));
  int64_t wrong_shape[] = {2, 4};
  ASSERT_OK(hgr_params_add(params, "A", f32, 2, wrong_shape, a, sizeof(a)));
  ASSERT_STATUS(hgr_executor_load_params(executor, params, NULL), HGR_STATUS_INVALID_ARGUMENT, "param 'A'",
                "input 0 'A'", "shapes differ");
  hgr_params_release(params);
  ASSERT_OK(hgr_params_create(&params));
  hgr_dtype_t i32 = {HGR_DTYPE_INT, 32, 1};
  int32_t ints[8] = {0};
  ASSERT_OK(hgr_params_add(params, "B", i32, 1, shape, ints, sizeof(ints)));
  ASSERT_STATUS(hgr_executor_load_params(executor, params, NULL), HGR_STATUS_INVALID_ARGUMENT, "param 'B' is int32",
                "input 1 'B' is float32");
  hgr_params_release(params);
  hgr_executor_release(executor);
  hgr_graph_release(graph);
}

int main(void) {
  ASSERT_OK(hgr_instance_create(NULL, &instance));
  const char* needed[] = {"pocl:0", "pocl:1", "rusticl:0", "oclgrind:0"};
  hgr_test_require_devices(instance, needed, 4);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(default_bindings_follow_tvm_and_leave_oclgrind_last),
      cmocka_unit_test(bindings_must_name_graph_keys_once),
      cmocka_unit_test(storage_beyond_the_largest_allocation_names_storage_and_device),
      cmocka_unit_test(a_memory_budget_counts_storage_and_staging),
      cmocka_unit_test(a_memory_budget_counts_kernel_scratch),
      cmocka_unit_test(plan_only_executors_summarize_but_cannot_run),
      cmocka_unit_test(getters_answer_indices_out_of_range_with_empty_records),
      cmocka_unit_test(params_fill_inputs_by_name_and_report_the_rest),
  };
  int failed = cmocka_run_group_tests_name("executor_api", tests, NULL, NULL);
  hgr_instance_release(instance);
  return failed;
}
