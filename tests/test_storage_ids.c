/* Sparse storage ids (TVM allows any id from 0 to 2^31 - 1): a graph whose ids are
 * near 2^31 runs like its dense twin, owns what its twin owns, shares params like
 * it, and every message about a storage names the id the JSON gave, not the dense
 * slot the graph maps it to (graph_internal.h). The loader's side is in
 * test_graph.c. Arguments: the specs of device keys 4 and 1, e.g. "pocl:1 pocl:0". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"
#include "device_internal.h"
#include "testlib.h"

static const char* specs[2];
static hgr_instance_t* instance;

#define ROWS 10
#define COLS 5
#define ELEMENTS (ROWS * COLS)

/* TVM's simplex graph grown by a storage reuse and a __nop alias, on two device
 * keys: A + B on key 4, copied to key 1, (copy - C) * C there into the copy's
 * storage, then a __nop of that. Outputs: the __nop, and A + B. storage_ids gives
 * the id of each of the 8 entries (A, B, add, copy, C, sub, mul, nop); the dense
 * twin's are {3, 4, 0, 1, 5, 2, 1, 1}. */
static hgr_graph_t* reuse_graph(const uint32_t storage_ids[8]) {
  static const char format[] =
      "{\"nodes\": [{\"op\": \"null\", \"name\": \"A\", \"inputs\": []},"
      "{\"op\": \"null\", \"name\": \"B\", \"inputs\": []},"
      "{\"op\": \"tvm_op\", \"name\": \"add\", \"attrs\": {\"func_name\": \"add\", \"num_inputs\": \"2\","
      " \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[0, 0, 0], [1, 0, 0]]},"
      "{\"op\": \"tvm_op\", \"name\": \"copy\", \"attrs\": {\"func_name\": \"__copy\", \"num_inputs\": \"1\","
      " \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[2, 0, 0]]},"
      "{\"op\": \"null\", \"name\": \"C\", \"inputs\": []},"
      "{\"op\": \"tvm_op\", \"name\": \"sub\", \"attrs\": {\"func_name\": \"subtract\", \"num_inputs\": \"2\","
      " \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[3, 0, 0], [4, 0, 0]]},"
      "{\"op\": \"tvm_op\", \"name\": \"mul\", \"attrs\": {\"func_name\": \"multiply\", \"num_inputs\": \"2\","
      " \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[5, 0, 0], [4, 0, 0]]},"
      "{\"op\": \"tvm_op\", \"name\": \"nop\", \"attrs\": {\"func_name\": \"__nop\", \"num_inputs\": \"1\","
      " \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[6, 0, 0]]}],"
      "\"arg_nodes\": [0, 1, 4], \"node_row_ptr\": [0, 1, 2, 3, 4, 5, 6, 7, 8], \"heads\": [[7, 0, 0], [2, 0, 0]],"
      "\"attrs\": {\"storage_id\": [\"list_int\", [%u, %u, %u, %u, %u, %u, %u, %u]],"
      "\"shape\": [\"list_shape\", [[10, 5], [10, 5], [10, 5], [10, 5], [10, 5], [10, 5], [10, 5], [10, 5]]],"
      "\"dltype\": [\"list_str\", [\"float32\", \"float32\", \"float32\", \"float32\", \"float32\", \"float32\","
      " \"float32\", \"float32\"]],"
      "\"device_index\": [\"list_int\", [4, 4, 4, 1, 1, 1, 1, 1]]}}";
  char json[sizeof(format) + 8 * 10];
  snprintf(json, sizeof(json), format, storage_ids[0], storage_ids[1], storage_ids[2], storage_ids[3],
           storage_ids[4], storage_ids[5], storage_ids[6], storage_ids[7]);
  hgr_graph_t* graph = NULL;
  ASSERT_OK(hgr_graph_load_json(json, strlen(json), &graph));
  return graph;
}

static const uint32_t dense_ids[8] = {3, 4, 0, 1, 5, 2, 1, 1};
/* The same plan with ids near 2^31: 0 -> 2147483000, 1 -> 2000000000,
 * 2 -> 0, 3 -> 2147483647, 4 -> 7, 5 -> 1234567. */
static const uint32_t sparse_ids[8] = {2147483647u, 7, 2147483000u, 2000000000u, 1234567, 0, 2000000000u,
                                       2000000000u};

static hgr_executor_t* make_executor(hgr_graph_t* graph, hgr_executor_t* share_params_from) {
  hgr_device_binding_t bindings[] = {{4, specs[0]}, {1, specs[1]}};
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  options.bindings = bindings;
  options.binding_count = 2;
  options.share_params_from = share_params_from;
  hgr_executor_t* executor = NULL;
  ASSERT_OK(hgr_executor_create(instance, graph, &options, &executor));
  return executor;
}

typedef struct outputs_t {
  float nop[ELEMENTS], add[ELEMENTS];
} outputs_t;

static void run_and_read(hgr_executor_t* executor, outputs_t* out) {
  ASSERT_OK(hgr_executor_run(executor));
  ASSERT_OK(hgr_executor_wait(executor));
  ASSERT_OK(hgr_executor_get_output(executor, 0, out->nop, sizeof(out->nop)));
  ASSERT_OK(hgr_executor_get_output(executor, 1, out->add, sizeof(out->add)));
}

static void random_inputs(uint64_t seed, float a[ELEMENTS], float b[ELEMENTS], float c[ELEMENTS]) {
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, seed);
  for (size_t i = 0; i < ELEMENTS; ++i) {
    a[i] = hgr_test_rng_float(&rng, -2.0f, 2.0f);
    b[i] = hgr_test_rng_float(&rng, -2.0f, 2.0f);
    c[i] = hgr_test_rng_float(&rng, -2.0f, 2.0f);
  }
}

/* The outputs, bit for bit, from plain C in the graph's order of operations. */
static void check_outputs(const float* a, const float* b, const float* c, const outputs_t* out) {
  for (size_t i = 0; i < ELEMENTS; ++i) {
    float add = a[i] + b[i];
    float mul = (add - c[i]) * c[i];
    assert_memory_equal(&out->add[i], &add, sizeof(float));
    assert_memory_equal(&out->nop[i], &mul, sizeof(float));
  }
}

static void sparse_ids_run_like_their_dense_twin(void** state) {
  (void)state;
  hgr_graph_t* dense = reuse_graph(dense_ids);
  hgr_graph_t* sparse = reuse_graph(sparse_ids);
  assert_int_equal(dense->storage_count, 6);
  assert_int_equal(sparse->storage_count, 6);
  hgr_executor_t* dense_executor = make_executor(dense, NULL);
  hgr_executor_t* sparse_executor = make_executor(sparse, NULL);
  float a[ELEMENTS], b[ELEMENTS], c[ELEMENTS];
  outputs_t from_dense, from_sparse;
  for (uint64_t seed = 1; seed <= 2; ++seed) { /* a second run over the first's storages */
    random_inputs(seed, a, b, c);
    hgr_executor_t* executors[2] = {dense_executor, sparse_executor};
    for (int i = 0; i < 2; ++i) {
      ASSERT_OK(hgr_executor_set_input_by_name(executors[i], "A", a, sizeof(a)));
      ASSERT_OK(hgr_executor_set_input_by_name(executors[i], "B", b, sizeof(b)));
      ASSERT_OK(hgr_executor_set_input_by_name(executors[i], "C", c, sizeof(c)));
    }
    run_and_read(dense_executor, &from_dense);
    run_and_read(sparse_executor, &from_sparse);
    check_outputs(a, b, c, &from_dense);
    assert_memory_equal(&from_sparse, &from_dense, sizeof(from_dense));
  }

  /* Runs in flight through fences, and an output bound to host memory: both
   * follow the output's storage (the mul's, shared with the copy and the __nop). */
  float bound[ELEMENTS];
  ASSERT_OK(hgr_executor_bind_host(sparse_executor, HGR_OUTPUT, 0, bound, sizeof(bound)));
  hgr_fence_t* fences[2] = {NULL, NULL};
  ASSERT_OK(hgr_executor_run_async(sparse_executor, &fences[0]));
  ASSERT_OK(hgr_executor_run_async(sparse_executor, &fences[1]));
  for (int i = 0; i < 2; ++i) {
    outputs_t out;
    ASSERT_OK(hgr_fence_wait(fences[i]));
    ASSERT_OK(hgr_fence_get_output(fences[i], 0, out.nop, sizeof(out.nop)));
    ASSERT_OK(hgr_fence_get_output(fences[i], 1, out.add, sizeof(out.add)));
    check_outputs(a, b, c, &out);
    hgr_fence_release(fences[i]);
  }
  assert_memory_equal(bound, from_dense.nop, sizeof(bound));
  ASSERT_OK(hgr_executor_unbind(sparse_executor, HGR_OUTPUT, 0));

  hgr_executor_release(dense_executor);
  hgr_executor_release(sparse_executor);
  hgr_graph_release(dense);
  hgr_graph_release(sparse);
}

/* Before slots, a single id of 2,000,000,000 sized the pool and its per-storage
 * arrays at 2^31 entries, and creation failed with "out of host memory". Now the
 * executor owns, per device, what its dense twin owns. */
static void an_executor_with_ids_near_2_31_owns_what_its_dense_twin_owns(void** state) {
  (void)state;
  hgr_graph_t* dense = reuse_graph(dense_ids);
  hgr_graph_t* sparse = reuse_graph(sparse_ids);
  hgr_executor_t* dense_executor = make_executor(dense, NULL);
  hgr_executor_t* sparse_executor = make_executor(sparse, NULL);
  size_t devices = hgr_executor_device_count(dense_executor);
  assert_int_equal(hgr_executor_device_count(sparse_executor), devices);
  uint32_t storages = 0;
  for (size_t d = 0; d < devices; ++d) {
    hgr_device_usage_t want = hgr_executor_device_usage(dense_executor, d);
    hgr_device_usage_t got = hgr_executor_device_usage(sparse_executor, d);
    assert_int_equal(got.device_index, want.device_index);
    assert_int_equal(got.kernel_nodes, want.kernel_nodes);
    assert_int_equal(got.storage_count, want.storage_count);
    assert_int_equal(got.storage_bytes, want.storage_bytes);
    assert_int_equal(got.staging_bytes, want.staging_bytes);
    storages += got.storage_count;
  }
  assert_int_equal(storages, 6);
  hgr_executor_release(dense_executor);
  hgr_executor_release(sparse_executor);
  hgr_graph_release(dense);
  hgr_graph_release(sparse);
}

/* share_params_from compares graphs and counts the users of each storage per slot;
 * a shared input's refusal names its storage id. */
static void executors_of_sparse_ids_share_params_and_name_the_storage_id(void** state) {
  (void)state;
  hgr_graph_t* sparse = reuse_graph(sparse_ids);
  float a[ELEMENTS], b[ELEMENTS], c[ELEMENTS];
  random_inputs(3, a, b, c);
  hgr_params_t* params = NULL;
  ASSERT_OK(hgr_params_create(&params));
  ASSERT_OK(hgr_params_add(params, "B", (hgr_dtype_t){HGR_DTYPE_FLOAT, 32, 1}, 2, (int64_t[]){ROWS, COLS}, b,
                           sizeof(b)));
  hgr_executor_t* source = make_executor(sparse, NULL);
  ASSERT_OK(hgr_executor_load_params(source, params, NULL));
  hgr_executor_t* sharer = make_executor(sparse, source);
  hgr_device_usage_t usage = hgr_executor_device_usage(sharer, 0);
  uint32_t shared = usage.shared_count;
  if (hgr_executor_device_count(sharer) > 1) shared += hgr_executor_device_usage(sharer, 1).shared_count;
  assert_int_equal(shared, 1);
  ASSERT_STATUS(hgr_executor_set_input_by_name(sharer, "B", b, sizeof(b)), HGR_STATUS_FAILED_PRECONDITION,
                "input 1 'B' (storage 7) is a parameter buffer shared between executors");
  hgr_executor_t* executors[2] = {source, sharer};
  for (int i = 0; i < 2; ++i) {
    outputs_t out;
    ASSERT_OK(hgr_executor_set_input_by_name(executors[i], "A", a, sizeof(a)));
    ASSERT_OK(hgr_executor_set_input_by_name(executors[i], "C", c, sizeof(c)));
    run_and_read(executors[i], &out);
    check_outputs(a, b, c, &out);
  }
  hgr_executor_release(sharer);
  hgr_executor_release(source);
  hgr_params_release(params);
  hgr_graph_release(sparse);
}

/* An executor's errors about a storage name the JSON's id: the storage checks
 * (storage.c) and the in-place check of the ops (the op registry). */
static void executor_errors_name_the_storage_id_not_the_slot(void** state) {
  (void)state;
  /* A + B, each id near 2^31; slot 0 (the lowest id) is the add's, and is the
   * first storage checked against the device's limits. */
  static const char add_json[] =
      "{\"nodes\": [{\"op\": \"null\", \"name\": \"A\", \"inputs\": []},"
      "{\"op\": \"null\", \"name\": \"B\", \"inputs\": []},"
      "{\"op\": \"tvm_op\", \"name\": \"add\", \"attrs\": {\"func_name\": \"add\", \"num_inputs\": \"2\","
      " \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[0, 0, 0], [1, 0, 0]]}],"
      "\"arg_nodes\": [0, 1], \"node_row_ptr\": [0, 1, 2, 3], \"heads\": [[2, 0, 0]],"
      "\"attrs\": {\"storage_id\": [\"list_int\", [2147483000, 2147483647, 2000000000]],"
      "\"shape\": [\"list_shape\", [[10, 5], [10, 5], [10, 5]]],"
      "\"dltype\": [\"list_str\", [\"float32\", \"float32\", \"float32\"]]}}";
  hgr_graph_t* graph = NULL;
  ASSERT_OK(hgr_graph_load_json(add_json, strlen(add_json), &graph));
  size_t device = 0;
  ASSERT_OK(hgr_instance_find_device(instance, specs[1], &device));
  hgr_device_binding_t binding = {-1, specs[1]};
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  options.bindings = &binding;
  options.binding_count = 1;
  options.plan_only = true;
  hgr_device_info_t saved = instance->devices[device].info;
  instance->devices[device].info.max_alloc_bytes = 64; /* each storage holds 200 bytes */
  hgr_executor_t* executor = NULL;
  hgr_status_t status = hgr_executor_create(instance, graph, &options, &executor);
  instance->devices[device].info = saved;
  char expected[160];
  snprintf(expected, sizeof(expected),
           "storage 2000000000 needs 200 bytes, more than the largest allocation %s allows (64 bytes)", specs[1]);
  ASSERT_STATUS(status, HGR_STATUS_RESOURCE_EXHAUSTED, expected);
  assert_null(executor);
  hgr_graph_release(graph);

  /* softmax cannot run in place: its output shares the input's storage id. */
  static const char softmax_json[] =
      "{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []},"
      "{\"op\": \"tvm_op\", \"name\": \"softmax\", \"attrs\": {\"func_name\": \"softmax\", \"num_inputs\": \"1\","
      " \"num_outputs\": \"1\", \"flatten_data\": \"0\", \"axis\": \"-1\"}, \"inputs\": [[0, 0, 0]]}],"
      "\"arg_nodes\": [0], \"node_row_ptr\": [0, 1, 2], \"heads\": [[1, 0, 0]],"
      "\"attrs\": {\"storage_id\": [\"list_int\", [2147483000, 2147483000]],"
      "\"shape\": [\"list_shape\", [[3, 5], [3, 5]]], \"dltype\": [\"list_str\", [\"float32\", \"float32\"]]}}";
  ASSERT_OK(hgr_graph_load_json(softmax_json, strlen(softmax_json), &graph));
  assert_int_equal(graph->entries[1].storage_slot, 0); /* the slot */
  ASSERT_STATUS(hgr_executor_create(instance, graph, &options, &executor), HGR_STATUS_INVALID_ARGUMENT,
                "output 0 (entry 1) shares storage 2147483000 with input 0 (entry 0); the op cannot run in place");
  assert_null(executor);
  hgr_graph_release(graph);
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: test_storage_ids SPEC_OF_KEY_4 SPEC_OF_KEY_1\n");
    return 2;
  }
  specs[0] = argv[1];
  specs[1] = argv[2];
  hgr_status_t status = hgr_instance_create(NULL, &instance);
  if (status) {
    char* text = hgr_status_to_string(status);
    fprintf(stderr, "%s\n", text);
    free(text);
    hgr_status_free(status);
    return 1;
  }
  hgr_test_require_devices(instance, specs, 2);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(sparse_ids_run_like_their_dense_twin),
      cmocka_unit_test(an_executor_with_ids_near_2_31_owns_what_its_dense_twin_owns),
      cmocka_unit_test(executors_of_sparse_ids_share_params_and_name_the_storage_id),
      cmocka_unit_test(executor_errors_name_the_storage_id_not_the_slot),
  };
  int failed = cmocka_run_group_tests_name("storage_ids", tests, NULL, NULL);
  hgr_instance_release(instance);
  return failed;
}
