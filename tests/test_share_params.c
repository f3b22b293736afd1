/* Executors sharing parameter buffers (options.share_params_from, TVM's
 * share_params): two executors of examples/mlp.json on one instance, fed different
 * inputs and run interleaved, against a plain-C forward pass; memory reported once;
 * shared inputs read-only in both; either release order; executors bound to other
 * devices sharing nothing (or part); graphs that differ refused.
 *
 *   test_share_params SPEC_A SPEC_B   key 1 (fc1, relu) on SPEC_A, key 4 (fc2,
 *                                     softmax) on SPEC_B; two platforms in CTest */
#include <math.h>
#include <string.h>

#include "ref_linalg.h"
#include "ref_norm.h"
#include "testlib.h"

#define ROWS 4
#define IN 64
#define HIDDEN 128
#define OUT 10

static const char* specs[2];
static size_t device_of[2]; /* instance device index of specs[i] */
static hgr_instance_t* instance;
static hgr_graph_t* graph;
static hgr_params_t* params;

static char log_text[8192];

static void keep_log(void* user, const char* message) {
  (void)user;
  size_t used = strlen(log_text);
  snprintf(log_text + used, sizeof(log_text) - used, "%s\n", message);
}

static const char* example_path(const char* name) {
  static char path[1024];
  const char* root = getenv("HGR_SOURCE_DIR");
  snprintf(path, sizeof(path), "%s/examples/%s", root ? root : ".", name);
  return path;
}

static const float* param(const char* name) {
  hgr_tensor_info_t info;
  const void* data = NULL;
  for (size_t i = 0; i < hgr_params_count(params); ++i) {
    ASSERT_OK(hgr_params_get(params, i, &info, &data));
    if (!strcmp(info.name, name)) return data;
  }
  fail_msg("mlp.params has no '%s'", name);
  return NULL;
}

static uint64_t param_bytes(const char* name) {
  hgr_tensor_info_t info;
  const void* data = NULL;
  for (size_t i = 0; i < hgr_params_count(params); ++i) {
    ASSERT_OK(hgr_params_get(params, i, &info, &data));
    if (!strcmp(info.name, name)) return info.bytes;
  }
  return 0;
}

/* softmax(dense(relu(dense(x, fc1)), fc2)), accumulating in double. */
static void forward(const float* x, float* y) {
  float hidden[ROWS * HIDDEN], logits[ROWS * OUT];
  hgr_ref_dense(x, param("fc1_weight"), param("fc1_bias"), hidden, ROWS, IN, HIDDEN);
  for (int i = 0; i < ROWS * HIDDEN; ++i) hidden[i] = fmaxf(hidden[i], 0.0f);
  hgr_ref_dense(hidden, param("fc2_weight"), param("fc2_bias"), logits, ROWS, HIDDEN, OUT);
  hgr_ref_softmax(logits, y, ROWS, OUT, 1, false);
}

static void random_input(uint64_t seed, float* x) {
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, seed);
  for (int i = 0; i < ROWS * IN; ++i) x[i] = hgr_test_rng_float(&rng, -2.0f, 2.0f);
}

static void check_output(hgr_executor_t* executor, const float* x) {
  float want[ROWS * OUT], got[ROWS * OUT];
  forward(x, want);
  ASSERT_OK(hgr_executor_get_output(executor, 0, got, sizeof(got)));
  for (int i = 0; i < ROWS * OUT; ++i)
    if (!(fabsf(got[i] - want[i]) <= 1e-5f + 1e-5f * fabsf(want[i])))
      fail_msg("output element %d: got %.9g, expected %.9g", i, got[i], want[i]);
}

/* An executor of graph with key 1 on key1 and key 4 on key4, params (may be NULL)
 * and a source to share with (may be NULL). */
static hgr_status_t create(hgr_graph_t* on, const char* key1, const char* key4, const hgr_params_t* with_params,
                           hgr_executor_t* source, hgr_executor_t** out_executor) {
  hgr_device_binding_t bindings[2] = {{1, key1}, {4, key4}};
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  options.bindings = bindings;
  options.binding_count = 2;
  options.params = with_params;
  options.share_params_from = source;
  options.log = keep_log;
  log_text[0] = 0;
  return hgr_executor_create(instance, on, &options, out_executor);
}

static hgr_device_usage_t usage_on(const hgr_executor_t* executor, size_t device_index) {
  for (size_t i = 0; i < hgr_executor_device_count(executor); ++i)
    if (hgr_executor_device_usage(executor, i).device_index == device_index)
      return hgr_executor_device_usage(executor, i);
  fail_msg("the executor does not use device %zu", device_index);
  return (hgr_device_usage_t){0};
}

static void expect_read_only(hgr_executor_t* executor, size_t index, const char* name) {
  size_t bytes = (size_t)param_bytes(name);
  void* zeros = calloc(1, bytes);
  assert_non_null(zeros);
  char expected[128];
  snprintf(expected, sizeof(expected), "input %zu '%s' (storage %zu) is a parameter buffer shared between executors",
           index, name, index);
  ASSERT_STATUS(hgr_executor_set_input(executor, index, zeros, bytes), HGR_STATUS_FAILED_PRECONDITION, expected,
                "read-only");
  free(zeros);
}

/* Two executors on one instance, the weights on both platforms shared. */
static void two_executors_share_the_weights_and_compute_their_own_inputs(void** state) {
  (void)state;
  float x1[ROWS * IN], x2[ROWS * IN];
  random_input(1, x1);
  random_input(2, x2);
  hgr_executor_t *a = NULL, *b = NULL;
  ASSERT_OK(create(graph, specs[0], specs[1], params, NULL, &a));
  /* a run in flight when b is created: b's creation waits for it */
  ASSERT_OK(hgr_executor_set_input(a, 0, x1, sizeof(x1)));
  ASSERT_OK(hgr_executor_run(a));
  ASSERT_OK(create(graph, specs[0], specs[1], NULL, a, &b));
  assert_non_null(strstr(log_text, "share_params_from: 4 parameter buffers (38440 bytes) shared\n"));
  check_output(a, x1);

  /* memory: b owns everything but the weights, which it reports as shared */
  uint64_t weights[2] = {param_bytes("fc1_weight") + param_bytes("fc1_bias"),
                         param_bytes("fc2_weight") + param_bytes("fc2_bias")};
  for (int d = 0; d < 2; ++d) {
    hgr_device_usage_t ua = usage_on(a, device_of[d]), ub = usage_on(b, device_of[d]);
    print_message("%s: source %llu bytes in %u storages; sharer %llu bytes in %u storages + %llu bytes in %u "
                  "shared\n",
                  specs[d], (unsigned long long)ua.storage_bytes, ua.storage_count,
                  (unsigned long long)ub.storage_bytes, ub.storage_count, (unsigned long long)ub.shared_bytes,
                  ub.shared_count);
    assert_int_equal(ua.shared_bytes, 0);
    assert_int_equal(ub.shared_bytes, weights[d]);
    assert_int_equal(ub.shared_count, 2);
    assert_int_equal(ub.storage_bytes, ua.storage_bytes - weights[d]);
    assert_int_equal(ub.storage_count, ua.storage_count - 2);
  }

  /* different inputs, interleaved both ways */
  ASSERT_OK(hgr_executor_set_input(a, 0, x1, sizeof(x1)));
  ASSERT_OK(hgr_executor_set_input(b, 0, x2, sizeof(x2)));
  ASSERT_OK(hgr_executor_run(a));
  ASSERT_OK(hgr_executor_run(b));
  check_output(b, x2);
  check_output(a, x1);
  ASSERT_OK(hgr_executor_set_input(b, 0, x1, sizeof(x1)));
  ASSERT_OK(hgr_executor_run(b));
  ASSERT_OK(hgr_executor_set_input(a, 0, x2, sizeof(x2)));
  ASSERT_OK(hgr_executor_run(a));
  check_output(a, x2);
  check_output(b, x1);

  /* the shared weights are read-only in both */
  expect_read_only(a, 1, "fc1_weight");
  expect_read_only(b, 1, "fc1_weight");
  expect_read_only(a, 4, "fc2_bias");
  expect_read_only(b, 4, "fc2_bias");
  ASSERT_STATUS(hgr_executor_load_params(b, params, NULL), HGR_STATUS_FAILED_PRECONDITION, "param 'fc1_weight'",
                "shared between executors");
  ASSERT_STATUS(hgr_executor_load_params(a, params, NULL), HGR_STATUS_FAILED_PRECONDITION, "param 'fc1_weight'",
                "shared between executors");

  /* the source goes first; the sharer still has the weights */
  hgr_executor_release(a);
  ASSERT_OK(hgr_executor_set_input(b, 0, x2, sizeof(x2)));
  ASSERT_OK(hgr_executor_run(b));
  check_output(b, x2);
  hgr_executor_release(b);
}

/* The sharer goes first; a third executor shares through the second (whose weights
 * are borrowed), from an equal graph loaded again. */
static void either_executor_may_be_released_first(void** state) {
  (void)state;
  float x[ROWS * IN];
  random_input(3, x);
  hgr_graph_t* again = NULL;
  ASSERT_OK(hgr_graph_load_file(example_path("mlp.json"), &again));
  hgr_executor_t *a = NULL, *b = NULL, *c = NULL;
  ASSERT_OK(create(graph, specs[0], specs[1], params, NULL, &a));
  ASSERT_OK(create(graph, specs[0], specs[1], NULL, a, &b));
  ASSERT_OK(create(again, specs[0], specs[1], NULL, b, &c));
  assert_non_null(strstr(log_text, "4 parameter buffers (38440 bytes) shared\n"));
  hgr_graph_release(again); /* c keeps it */
  hgr_executor_release(b);
  ASSERT_OK(hgr_executor_set_input(a, 0, x, sizeof(x)));
  ASSERT_OK(hgr_executor_set_input(c, 0, x, sizeof(x)));
  ASSERT_OK(hgr_executor_run(c));
  ASSERT_OK(hgr_executor_run(a));
  check_output(a, x);
  check_output(c, x);
  /* read-only for the source's lifetime, whether or not a sharer remains */
  expect_read_only(a, 3, "fc2_weight");
  hgr_executor_release(c);
  expect_read_only(a, 3, "fc2_weight");
  ASSERT_OK(hgr_executor_run(a));
  check_output(a, x);
  hgr_executor_release(a);
}

/* Weights on other devices are not shared: the sharer allocates and loads them
 * (options.params fills what is not shared) and the log says why. */
static void executors_bound_to_other_devices_share_nothing_or_part(void** state) {
  (void)state;
  float x[ROWS * IN];
  random_input(4, x);
  hgr_executor_t *a = NULL, *b = NULL;
  ASSERT_OK(create(graph, specs[1], specs[0], params, NULL, &a));
  ASSERT_OK(create(graph, specs[0], specs[1], params, a, &b));
  char expected[256];
  snprintf(expected, sizeof(expected),
           "share_params_from: 0 parameter buffers (0 bytes) shared, 4 not: input 1 'fc1_weight' is on %s here but on "
           "%s in the source; input 2 'fc1_bias'",
           hgr_instance_device(instance, device_of[0])->spec, hgr_instance_device(instance, device_of[1])->spec);
  if (!strstr(log_text, expected)) fail_msg("log: %s\nexpected: %s", log_text, expected);
  for (int d = 0; d < 2; ++d) assert_int_equal(usage_on(b, device_of[d]).shared_count, 0);
  ASSERT_OK(hgr_executor_set_input(a, 0, x, sizeof(x)));
  ASSERT_OK(hgr_executor_set_input(b, 0, x, sizeof(x)));
  ASSERT_OK(hgr_executor_run(a));
  ASSERT_OK(hgr_executor_run(b));
  check_output(b, x);
  check_output(a, x);
  ASSERT_OK(hgr_executor_load_params(b, params, NULL)); /* nothing shared: all writable */
  hgr_executor_release(b);
  hgr_executor_release(a);

  /* key 1 on the same device, key 4 not: fc1's weights shared, fc2's loaded */
  ASSERT_OK(create(graph, specs[0], specs[0], params, NULL, &a));
  ASSERT_OK(create(graph, specs[0], specs[1], params, a, &b));
  assert_non_null(strstr(log_text, "2 parameter buffers (33280 bytes) shared, 2 not: input 3 'fc2_weight' is on"));
  assert_int_equal(usage_on(b, device_of[0]).shared_bytes, 33280);
  assert_int_equal(usage_on(b, device_of[1]).shared_bytes, 0);
  expect_read_only(b, 2, "fc1_bias");
  ASSERT_OK(hgr_executor_set_input(b, 4, param("fc2_bias"), (size_t)param_bytes("fc2_bias")));
  ASSERT_OK(hgr_executor_set_input(b, 0, x, sizeof(x)));
  ASSERT_OK(hgr_executor_run(b));
  check_output(b, x);
  hgr_executor_release(b);
  hgr_executor_release(a);
}

/* Only what the source holds from params, and only read-only storage, is shared. */
static void only_params_in_read_only_storage_are_shared(void** state) {
  (void)state;
  float x[ROWS * IN];
  random_input(5, x);
  hgr_executor_t *a = NULL, *b = NULL;
  /* fc2_bias overwritten by set_input since the params: not a param any more */
  ASSERT_OK(create(graph, specs[0], specs[1], params, NULL, &a));
  ASSERT_OK(hgr_executor_set_input(a, 4, param("fc2_bias"), (size_t)param_bytes("fc2_bias")));
  ASSERT_OK(create(graph, specs[0], specs[1], params, a, &b));
  assert_non_null(strstr(log_text, "3 parameter buffers (38400 bytes) shared\n"));
  ASSERT_OK(hgr_executor_set_input(b, 4, param("fc2_bias"), (size_t)param_bytes("fc2_bias")));
  ASSERT_OK(hgr_executor_set_input(b, 0, x, sizeof(x)));
  ASSERT_OK(hgr_executor_run(b));
  check_output(b, x);
  hgr_executor_release(b);
  hgr_executor_release(a);

  /* a weight that a node writes in place (relu over w) is not read-only */
  static const char json[] =
      "{\"nodes\": [{\"op\": \"null\", \"name\": \"w\", \"inputs\": []}, {\"op\": \"null\", \"name\": \"v\", \"inputs\": []},"
      " {\"op\": \"tvm_op\", \"name\": \"r\", \"attrs\": {\"func_name\": \"relu\", \"num_inputs\": \"1\", \"num_outputs\": \"1\","
      " \"flatten_data\": \"0\"}, \"inputs\": [[0, 0, 0]]},"
      " {\"op\": \"tvm_op\", \"name\": \"s\", \"attrs\": {\"func_name\": \"add\", \"num_inputs\": \"2\", \"num_outputs\": \"1\","
      " \"flatten_data\": \"0\"}, \"inputs\": [[2, 0, 0], [1, 0, 0]]}],"
      " \"arg_nodes\": [0, 1], \"node_row_ptr\": [0, 1, 2, 3, 4], \"heads\": [[3, 0, 0]],"
      " \"attrs\": {\"storage_id\": [\"list_int\", [0, 1, 0, 2]], \"shape\": [\"list_shape\", [[8], [8], [8], [8]]],"
      " \"dltype\": [\"list_str\", [\"float32\", \"float32\", \"float32\", \"float32\"]]}}";
  hgr_graph_t* in_place = NULL;
  ASSERT_OK(hgr_graph_load_json(json, strlen(json), &in_place));
  hgr_params_t* wv = NULL;
  ASSERT_OK(hgr_params_create(&wv));
  float w[8] = {-1, 2, -3, 4, -5, 6, -7, 8}, v[8] = {1, 1, 1, 1, 2, 2, 2, 2}, s[8];
  int64_t shape[1] = {8};
  hgr_dtype_t f32 = {HGR_DTYPE_FLOAT, 32, 1};
  ASSERT_OK(hgr_params_add(wv, "w", f32, 1, shape, w, sizeof(w)));
  ASSERT_OK(hgr_params_add(wv, "v", f32, 1, shape, v, sizeof(v)));
  hgr_device_binding_t binding = {0, specs[0]};
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  options.bindings = &binding;
  options.binding_count = 1;
  options.params = wv;
  options.log = keep_log;
  ASSERT_OK(hgr_executor_create(instance, in_place, &options, &a));
  options.share_params_from = a;
  log_text[0] = 0;
  ASSERT_OK(hgr_executor_create(instance, in_place, &options, &b));
  assert_non_null(strstr(log_text, "1 parameter buffer (32 bytes) shared, 1 not: input 0 'w': storage 0 is used by 2 "
                                   "entries, so it is not read-only\n"));
  ASSERT_OK(hgr_executor_run(b));
  ASSERT_OK(hgr_executor_get_output(b, 0, s, sizeof(s)));
  for (int i = 0; i < 8; ++i) assert_true(s[i] == fmaxf(w[i], 0.0f) + v[i]);
  hgr_executor_release(b);
  hgr_executor_release(a);
  hgr_params_release(wv);
  hgr_graph_release(in_place);
}

static void another_graph_is_refused(void** state) {
  (void)state;
  hgr_graph_t* cnn = NULL;
  ASSERT_OK(hgr_graph_load_file(example_path("cnn.json"), &cnn));
  hgr_executor_t *a = NULL, *b = NULL;
  ASSERT_OK(create(graph, specs[0], specs[1], params, NULL, &a));
  ASSERT_STATUS(create(cnn, specs[0], specs[1], NULL, a, &b), HGR_STATUS_INVALID_ARGUMENT,
                "share_params_from: the source executor runs another graph (", "only executors of the same graph");
  assert_null(b);
  hgr_executor_release(a);
  hgr_graph_release(cnn);
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: test_share_params SPEC_A SPEC_B\n");
    return 2;
  }
  specs[0] = argv[1];
  specs[1] = argv[2];
  hgr_status_t status = hgr_instance_create(NULL, &instance);
  if (!status) status = hgr_graph_load_file(example_path("mlp.json"), &graph);
  if (!status) status = hgr_params_load_file(example_path("mlp.params"), &params);
  if (status) {
    char* text = hgr_status_to_string(status);
    fprintf(stderr, "%s\n", text);
    free(text);
    hgr_status_free(status);
    return 1;
  }
  hgr_test_require_devices(instance, specs, 2);
  for (int d = 0; d < 2; ++d) {
    status = hgr_instance_find_device(instance, specs[d], &device_of[d]);
    if (status) return 1;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(two_executors_share_the_weights_and_compute_their_own_inputs),
      cmocka_unit_test(either_executor_may_be_released_first),
      cmocka_unit_test(executors_bound_to_other_devices_share_nothing_or_part),
      cmocka_unit_test(only_params_in_read_only_storage_are_shared),
      cmocka_unit_test(another_graph_is_refused),
  };
  int failed = cmocka_run_group_tests_name("share_params", tests, NULL, NULL);
  hgr_params_release(params);
  hgr_graph_release(graph);
  hgr_instance_release(instance);
  return failed;
}
