/* Kernel warm-up at creation (hgr_warm_up_t): each distinct kernel launch runs once
 * while the executor is created, the programs compiled there are stored in the
 * program cache then (not after the first run), results are unchanged, loaded
 * programs are not warmed unless asked, and a kernel failing while warming fails
 * creation naming its node. The program cache lives in the test's memory, so every
 * executor starts from a known cache state. Every OpenCL object is released again
 * (the fault shim counts them).
 *
 *   test_warm_up SPEC    the device to run on (pocl:0, rusticl:0, oclgrind:0) */
#include <math.h>
#include <string.h>

#include "testlib.h"
/* After testlib.h: its assertion macro needs cmocka. */
#include "fault_shim.h"

#define ELEMENTS 33

static const char* spec;
static bool host_driven; /* Oclgrind: never warmed */
static hgr_instance_t* instance;

/* y = exp(relu(relu(relu(x)))) + w, w a param: the three relus launch one kernel
 * with one geometry, so the warm-up runs two of the five steps' kernels (relu, exp)
 * plus add: three. */
static const char graph_json[] =
    "{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []},"
    " {\"op\": \"tvm_op\", \"name\": \"r1\", \"attrs\": {\"func_name\": \"relu\", \"num_inputs\": \"1\", \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[0, 0, 0]]},"
    " {\"op\": \"tvm_op\", \"name\": \"r2\", \"attrs\": {\"func_name\": \"relu\", \"num_inputs\": \"1\", \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[1, 0, 0]]},"
    " {\"op\": \"tvm_op\", \"name\": \"r3\", \"attrs\": {\"func_name\": \"relu\", \"num_inputs\": \"1\", \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[2, 0, 0]]},"
    " {\"op\": \"tvm_op\", \"name\": \"e\", \"attrs\": {\"func_name\": \"exp\", \"num_inputs\": \"1\", \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[3, 0, 0]]},"
    " {\"op\": \"null\", \"name\": \"w\", \"inputs\": []},"
    " {\"op\": \"tvm_op\", \"name\": \"plus_w\", \"attrs\": {\"func_name\": \"add\", \"num_inputs\": \"2\", \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[4, 0, 0], [5, 0, 0]]}],"
    " \"arg_nodes\": [0, 5], \"node_row_ptr\": [0, 1, 2, 3, 4, 5, 6, 7], \"heads\": [[6, 0, 0]],"
    " \"attrs\": {\"storage_id\": [\"list_int\", [0, 1, 2, 1, 2, 3, 4]],"
    " \"shape\": [\"list_shape\", [[33], [33], [33], [33], [33], [33], [33]]],"
    " \"dltype\": [\"list_str\", [\"float32\", \"float32\", \"float32\", \"float32\", \"float32\", \"float32\", \"float32\"]]}}";
#define DISTINCT_LAUNCHES 3

/* The same y as one fused_elementwise node: a generated program, which the warm-up
 * launches and stores like the library's. */
static const char fused_json[] =
    "{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []},"
    " {\"op\": \"null\", \"name\": \"w\", \"inputs\": []},"
    " {\"op\": \"tvm_op\", \"name\": \"y\", \"attrs\": {\"func_name\": \"fused_elementwise\", \"num_inputs\": \"2\", \"num_outputs\": \"1\", \"flatten_data\": \"0\", \"expr\": \"relu i0; exp v0; add v1 i1\"}, \"inputs\": [[0, 0, 0], [1, 0, 0]]}],"
    " \"arg_nodes\": [0, 1], \"node_row_ptr\": [0, 1, 2, 3], \"heads\": [[2, 0, 0]],"
    " \"attrs\": {\"storage_id\": [\"list_int\", [0, 1, 2]],"
    " \"shape\": [\"list_shape\", [[33], [33], [33]]],"
    " \"dltype\": [\"list_str\", [\"float32\", \"float32\", \"float32\"]]}}";

typedef struct memory_cache_t {
  char* keys[8];
  unsigned char* blobs[8];
  size_t sizes[8];
  size_t count;
  uint32_t stores;
} memory_cache_t;

static bool memory_load(void* user, const char* key, void** out_blob, size_t* out_size) {
  memory_cache_t* cache = user;
  for (size_t i = 0; i < cache->count; ++i)
    if (!strcmp(cache->keys[i], key)) {
      *out_blob = malloc(cache->sizes[i]);
      memcpy(*out_blob, cache->blobs[i], cache->sizes[i]);
      *out_size = cache->sizes[i];
      return true;
    }
  return false;
}

static void memory_store(void* user, const char* key, const void* blob, size_t size) {
  memory_cache_t* cache = user;
  cache->stores++;
  assert_true(cache->count < 8);
  cache->keys[cache->count] = strdup(key);
  cache->blobs[cache->count] = malloc(size);
  memcpy(cache->blobs[cache->count], blob, size);
  cache->sizes[cache->count++] = size;
}

static void memory_free(memory_cache_t* cache) {
  for (size_t i = 0; i < cache->count; ++i) {
    free(cache->keys[i]);
    free(cache->blobs[i]);
  }
  memset(cache, 0, sizeof(*cache));
}

static float w_values[ELEMENTS];

/* An executor of graph json (x and w, y = exp(relu(x)) + w) on spec, w given as a
 * param at creation. */
static hgr_status_t create(const char* json, memory_cache_t* cache, hgr_warm_up_t mode, hgr_graph_t** out_graph,
                           hgr_executor_t** out_executor) {
  ASSERT_OK(hgr_graph_load_json(json, strlen(json), out_graph));
  hgr_params_t* params = NULL;
  ASSERT_OK(hgr_params_create(&params));
  int64_t shape[1] = {ELEMENTS};
  for (int i = 0; i < ELEMENTS; ++i) w_values[i] = 0.25f * (float)(i % 5) - 0.5f;
  hgr_dtype_t f32 = {HGR_DTYPE_FLOAT, 32, 1};
  ASSERT_OK(hgr_params_add(params, "w", f32, 1, shape, w_values, sizeof(w_values)));
  hgr_device_binding_t binding = {-1, spec};
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  options.bindings = &binding;
  options.binding_count = 1;
  options.params = params;
  options.warm_up = mode;
  options.program_cache = (hgr_program_cache_t){
      .mode = HGR_PROGRAM_CACHE_CALLBACKS, .load = memory_load, .store = memory_store, .user = cache};
  hgr_status_t status = hgr_executor_create(instance, *out_graph, &options, out_executor);
  hgr_params_release(params);
  return status;
}

/* Runs once and checks y against the host's values. */
static void run_and_check(hgr_executor_t* executor) {
  float x[ELEMENTS], y[ELEMENTS];
  for (int i = 0; i < ELEMENTS; ++i) x[i] = (float)(i - 16) / 8.0f;
  ASSERT_OK(hgr_executor_set_input(executor, 0, x, sizeof(x)));
  ASSERT_OK(hgr_executor_run(executor));
  ASSERT_OK(hgr_executor_wait(executor));
  ASSERT_OK(hgr_executor_get_output(executor, 0, y, sizeof(y)));
  for (int i = 0; i < ELEMENTS; ++i) {
    float want = expf(fmaxf(x[i], 0.0f)) + w_values[i];
    if (!(fabsf(y[i] - want) <= 1e-5f + 1e-5f * fabsf(want)))
      fail_msg("y[%d] = %g, want %g (exp(relu(%g)) + %g)", i, (double)y[i], (double)want, (double)x[i],
               (double)w_values[i]);
  }
}

static void warm_up_launches_each_distinct_kernel_once_and_stores_at_creation(void** state) {
  (void)state;
  memory_cache_t cache = {0};
  hgr_fault_shim_mark_t before = hgr_fault_shim_mark();
  hgr_graph_t* graph = NULL;
  hgr_executor_t* executor = NULL;
  ASSERT_OK(create(graph_json, &cache, HGR_WARM_UP_AUTO, &graph, &executor));
  hgr_program_stats_t stats = hgr_executor_program_stats(executor);
  assert_true(stats.from_source > 0);
  if (host_driven) { /* Oclgrind interprets: nothing is warmed, the first run stores */
    assert_int_equal(stats.warm_launches, 0);
    assert_int_equal(cache.stores, 0);
  } else {
    assert_int_equal(stats.warm_launches, DISTINCT_LAUNCHES);
    assert_int_equal(stats.stored, stats.from_source);
    assert_int_equal(cache.stores, stats.from_source);
  }
  /* The warm-up's values never reach the results, and w (loaded at creation) is
   * intact; the first run stores nothing more. */
  run_and_check(executor);
  run_and_check(executor);
  assert_int_equal(cache.stores, hgr_executor_program_stats(executor).from_source);
  hgr_executor_release(executor);
  hgr_graph_release(graph);
  ASSERT_OPENCL_BALANCED(&before);
  memory_free(&cache);
}

static void generated_programs_are_warmed_and_stored_at_creation(void** state) {
  (void)state;
  memory_cache_t cache = {0};
  hgr_fault_shim_mark_t before = hgr_fault_shim_mark();
  hgr_graph_t* graph = NULL;
  hgr_executor_t* executor = NULL;
  ASSERT_OK(create(fused_json, &cache, HGR_WARM_UP_AUTO, &graph, &executor));
  hgr_program_stats_t stats = hgr_executor_program_stats(executor);
  assert_int_equal(stats.from_source, 1);
  assert_int_equal(stats.warm_launches, host_driven ? 0 : 1);
  assert_int_equal(cache.stores, host_driven ? 0 : 1);
  run_and_check(executor);
  assert_int_equal(cache.stores, 1);
  hgr_executor_release(executor);
  hgr_graph_release(graph);
  ASSERT_OPENCL_BALANCED(&before);
  memory_free(&cache);
}

static void warm_up_off_leaves_compiling_and_storing_to_the_first_run(void** state) {
  (void)state;
  memory_cache_t cache = {0};
  hgr_fault_shim_mark_t before = hgr_fault_shim_mark();
  hgr_graph_t* graph = NULL;
  hgr_executor_t* executor = NULL;
  ASSERT_OK(create(graph_json, &cache, HGR_WARM_UP_OFF, &graph, &executor));
  hgr_program_stats_t stats = hgr_executor_program_stats(executor);
  assert_int_equal(stats.warm_launches, 0);
  assert_int_equal(stats.stored, 0);
  assert_int_equal(cache.stores, 0);
  run_and_check(executor);
  stats = hgr_executor_program_stats(executor);
  assert_int_equal(stats.stored, stats.from_source);
  assert_int_equal(cache.stores, stats.from_source);
  hgr_executor_release(executor);
  hgr_graph_release(graph);
  ASSERT_OPENCL_BALANCED(&before);
  memory_free(&cache);
}

static void auto_warms_nothing_loaded_from_the_cache_and_all_warms_it_anyway(void** state) {
  (void)state;
  memory_cache_t cache = {0};
  hgr_fault_shim_mark_t before = hgr_fault_shim_mark();
  hgr_graph_t* graph = NULL;
  hgr_executor_t* executor = NULL;
  ASSERT_OK(create(graph_json, &cache, HGR_WARM_UP_OFF, &graph, &executor));
  run_and_check(executor); /* fills the cache */
  hgr_executor_release(executor);
  hgr_graph_release(graph);
  uint32_t stores = cache.stores;
  assert_true(stores > 0);

  ASSERT_OK(create(graph_json, &cache, HGR_WARM_UP_AUTO, &graph, &executor));
  hgr_program_stats_t stats = hgr_executor_program_stats(executor);
  assert_int_equal(stats.from_source, 0);
  assert_int_equal(stats.from_cache, stats.programs);
  assert_int_equal(stats.warm_launches, 0);
  run_and_check(executor);
  hgr_executor_release(executor);
  hgr_graph_release(graph);

  ASSERT_OK(create(graph_json, &cache, HGR_WARM_UP_ALL, &graph, &executor));
  stats = hgr_executor_program_stats(executor);
  assert_int_equal(stats.from_cache, stats.programs);
  assert_int_equal(stats.warm_launches, host_driven ? 0 : DISTINCT_LAUNCHES);
  assert_int_equal(stats.stored, 0); /* nothing was compiled here */
  run_and_check(executor);
  hgr_executor_release(executor);
  hgr_graph_release(graph);
  assert_int_equal(cache.stores, stores);
  ASSERT_OPENCL_BALANCED(&before);
  memory_free(&cache);
}

static void a_kernel_failing_while_warming_fails_creation_naming_its_node(void** state) {
  (void)state;
  if (host_driven) {
    print_message("not warmed on %s: nothing to fail\n", spec);
    skip();
  }
  memory_cache_t cache = {0};
  hgr_fault_shim_mark_t before = hgr_fault_shim_mark();
  hgr_graph_t* graph = NULL;
  hgr_executor_t* executor = NULL;
  unsigned long failed = hgr_fault_shim_failed_kernel_count();
  hgr_fault_shim_fail_kernel("hgr_exp_f32", CL_OUT_OF_RESOURCES);
  hgr_status_t status = create(graph_json, &cache, HGR_WARM_UP_AUTO, &graph, &executor);
  hgr_fault_shim_fail_kernel(NULL, 0);
  assert_int_equal(hgr_fault_shim_failed_kernel_count(), failed + 1);
  assert_null(executor);
  ASSERT_STATUS(status, HGR_STATUS_DEVICE_FAILURE, "warming the kernels up at creation", "node 4 'e'", "exp on ",
                spec, "failed on the device");
  assert_int_equal(cache.stores, 0); /* a failed warm-up stores nothing */
  hgr_graph_release(graph);
  hgr_fault_shim_release_failed_events();
  ASSERT_OPENCL_BALANCED_AFTER_FAILURE(&before);

  /* The next creation on the same instance works. */
  ASSERT_OK(create(graph_json, &cache, HGR_WARM_UP_AUTO, &graph, &executor));
  run_and_check(executor);
  hgr_executor_release(executor);
  hgr_graph_release(graph);
  memory_free(&cache);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: test_warm_up SPEC\n");
    return 2;
  }
  spec = argv[1];
  host_driven = !strncmp(spec, "oclgrind", 8);
  if (hgr_instance_create(NULL, &instance)) return 1;
  hgr_test_require_devices(instance, &spec, 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(warm_up_launches_each_distinct_kernel_once_and_stores_at_creation),
      cmocka_unit_test(generated_programs_are_warmed_and_stored_at_creation),
      cmocka_unit_test(warm_up_off_leaves_compiling_and_storing_to_the_first_run),
      cmocka_unit_test(auto_warms_nothing_loaded_from_the_cache_and_all_warms_it_anyway),
      cmocka_unit_test(a_kernel_failing_while_warming_fails_creation_naming_its_node),
  };
  int failed = cmocka_run_group_tests_name("warm_up", tests, NULL, NULL);
  hgr_instance_release(instance);
  return failed ? failed : hgr_fault_shim_exit_status("test_warm_up");
}
