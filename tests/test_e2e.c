/* End-to-end graph tests through the public API: load graph JSON, create an
 * executor with explicit key -> device bindings, set random inputs, run, read the
 * outputs and compare them with the reference evaluator (reference.h).
 *
 * The argument names the scenario:
 *   one-device          keys {1} on pocl:0 (and a graph without a device_index column)
 *   pocl-pair           {1,4} -> pocl:0, pocl:1 (one context)
 *   pocl-rusticl        {1,4} -> pocl:0, rusticl:0 (two platforms)
 *   three-platforms     {1,4,5} -> pocl:0, rusticl:0, oclgrind:0
 *   context-per-device  {1,4} -> pocl:0, pocl:1, one context each
 *   many-runs           10,000 runs of a small graph; memory must not grow
 *   api-errors          misuse of the API is refused with statuses that say why (pocl:0,
 *                       and pocl:1 for a node reading from another device)
 *
 * The fault shim counts OpenCL objects (fault_shim.h): each executor, and each failed
 * create, leaves as many as it found, and the program ends with none. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define HGR_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HGR_TEST_ASAN 1
#endif
#endif
#ifdef HGR_TEST_ASAN
size_t __sanitizer_get_current_allocated_bytes(void); /* sanitizer/allocator_interface.h */
#endif

#include "graph_internal.h"
#include "graph_check.h"
#include "graphgen.h"
#include "reference.h"
#include "testlib.h"
/* After testlib.h: its assertion macro needs cmocka. */
#include "fault_shim.h"

typedef struct scenario_t {
  const char* name;
  bool context_per_device;
  size_t key_count;
  int32_t keys[3];
  const char* specs[3];
  uint64_t sizes[5]; /* tensor sizes of the random graphs, in elements */
  size_t size_count;
  uint32_t graphs;   /* random graphs (seeds 1..graphs) */
  uint32_t op_count; /* op nodes per random graph */
  uint64_t huge;     /* elements of a tensor >= 16 MiB (chunked across contexts); 0: none */
} scenario_t;

static const scenario_t scenarios[] = {
    {"one-device", false, 1, {1}, {"pocl:0"}, {1, 7, 1000, 65536, 300000}, 5, 8, 30, 0},
    {"pocl-pair", false, 2, {1, 4}, {"pocl:0", "pocl:1"}, {1, 13, 4096, 300000}, 4, 8, 30,
     4500000},
    {"pocl-rusticl", false, 2, {1, 4}, {"pocl:0", "rusticl:0"}, {1, 1000, 300000}, 3, 5, 14, 0},
    {"three-platforms", false, 3, {1, 4, 5}, {"pocl:0", "rusticl:0", "oclgrind:0"},
     {1, 64, 1000}, 3, 4, 16, 0},
    {"context-per-device", true, 2, {1, 4}, {"pocl:0", "pocl:1"}, {1, 13, 4096, 300000}, 4, 8,
     30, 4500000},
};

static const scenario_t* scenario;
static hgr_instance_t* instance;

/* ---- graphs ------------------------------------------------------------------------ */

#define TVM_OP(name, func, inputs)                                                        \
  "{\"op\":\"tvm_op\",\"name\":\"" name "\",\"attrs\":{\"func_name\":\"" func            \
  "\",\"num_inputs\":\"%s\",\"num_outputs\":\"1\",\"flatten_data\":\"0\"},\"inputs\":" \
  inputs "}"
#define INPUT(name) "{\"op\":\"null\",\"name\":\"" name "\",\"inputs\":[]}"

/* TVM's get_simplex_graph (reference §1.5): (A + B) on key 4, copied to key 1, minus C. */
static char* simplex_json(const char* shape) {
  static const char format[] =
      "{\"nodes\":[" INPUT("A") "," INPUT("B") ","
      TVM_OP("elemwise_add", "add", "[[0,0,0],[1,0,0]]") ","
      TVM_OP("__copy_add_to_sub", "__copy", "[[2,0,0]]") "," INPUT("C") ","
      TVM_OP("elemwise_sub", "subtract", "[[3,0,0],[4,0,0]]") "],"
      "\"arg_nodes\":[0,1,4],\"node_row_ptr\":[0,1,2,3,4,5,6],\"heads\":[[5,0,0]],"
      "\"attrs\":{\"storage_id\":[\"list_int\",[3,4,0,1,5,2]],"
      "\"shape\":[\"list_shape\",[%s,%s,%s,%s,%s,%s]],"
      "\"device_index\":[\"list_int\",[4,4,4,1,1,1]],"
      "\"dltype\":[\"list_str\",[\"float32\",\"float32\",\"float32\",\"float32\",\"float32\","
      "\"float32\"]]}}";
  char* json = malloc(sizeof(format) + 6 * strlen(shape) + 16);
  sprintf(json, format, "2", "1", "2", shape, shape, shape, shape, shape, shape);
  return json;
}

/* The duplex variant: back and forth twice, ((A + B) - C + D) - E, with storage reuse
 * on both keys. */
static char* duplex_json(const char* shape) {
  static const char format[] =
      "{\"nodes\":[" INPUT("A") "," INPUT("B") "," TVM_OP("add0", "add", "[[0,0,0],[1,0,0]]") ","
      TVM_OP("copy0", "__copy", "[[2,0,0]]") "," INPUT("C") ","
      TVM_OP("sub0", "subtract", "[[3,0,0],[4,0,0]]") "," TVM_OP("copy1", "__copy", "[[5,0,0]]")
      "," INPUT("D") "," TVM_OP("add1", "add", "[[6,0,0],[7,0,0]]") ","
      TVM_OP("copy2", "__copy", "[[8,0,0]]") "," INPUT("E") ","
      TVM_OP("sub1", "subtract", "[[9,0,0],[10,0,0]]") "],"
      "\"arg_nodes\":[0,1,4,7,10],\"node_row_ptr\":[0,1,2,3,4,5,6,7,8,9,10,11,12],"
      "\"heads\":[[11,0,0]],\"attrs\":{\"storage_id\":[\"list_int\",[0,1,2,3,4,5,6,7,2,3,8,9]],"
      "\"shape\":[\"list_shape\",[%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s]],"
      "\"device_index\":[\"list_int\",[4,4,4,1,1,1,4,4,4,1,1,1]],"
      "\"dltype\":[\"list_str\",[\"float32\",\"float32\",\"float32\",\"float32\",\"float32\","
      "\"float32\",\"float32\",\"float32\",\"float32\",\"float32\",\"float32\",\"float32\"]]}}";
  char* json = malloc(sizeof(format) + 12 * strlen(shape) + 16);
  sprintf(json, format, "2", "1", "2", "1", "2", "1", "2", shape, shape, shape, shape, shape, shape,
          shape, shape, shape, shape, shape, shape);
  return json;
}

/* alpha (key_a) <func> beta (key_b) -> "sum" on key_out; 16 elements each. */
static char* tiny_json(const char* func_name, int key_a, int key_b, int key_out) {
  static const char format[] =
      "{\"nodes\":[" INPUT("alpha") "," INPUT("beta") ","
      "{\"op\":\"tvm_op\",\"name\":\"sum\",\"attrs\":{\"func_name\":\"%s\",\"num_inputs\":\"2\","
      "\"num_outputs\":\"1\",\"flatten_data\":\"0\"},\"inputs\":[[0,0,0],[1,0,0]]}],"
      "\"arg_nodes\":[0,1],\"node_row_ptr\":[0,1,2,3],\"heads\":[[2,0,0]],"
      "\"attrs\":{\"storage_id\":[\"list_int\",[0,1,2]],"
      "\"shape\":[\"list_shape\",[[16],[16],[16]]],\"device_index\":[\"list_int\",[%d,%d,%d]],"
      "\"dltype\":[\"list_str\",[\"float32\",\"float32\",\"float32\"]]}}";
  char* json = malloc(sizeof(format) + strlen(func_name) + 48);
  sprintf(json, format, func_name, key_a, key_b, key_out);
  return json;
}

static char* random_json(uint64_t seed, uint32_t op_count, const uint64_t* sizes,
                         size_t size_count, size_t key_count) {
  hgr_test_graph_options_t options = {.seed = seed, .op_count = op_count, .sizes = sizes,
                                      .size_count = size_count, .device_keys = scenario->keys,
                                      .device_key_count = key_count};
  char* json = hgr_test_graph_generate(&options);
  assert_non_null(json);
  return json;
}

/* ---- running a graph --------------------------------------------------------------- */

static hgr_graph_t* load(const char* json) {
  hgr_graph_t* graph = NULL;
  ASSERT_OK(hgr_graph_load_json(json, strlen(json), &graph));
  return graph;
}

/* Creates an executor binding every key of the graph to the scenario's device for
 * that key, or to its first device when the scenario has no such key. */
static hgr_status_t create_executor(hgr_graph_t* graph, hgr_executor_t** out_executor) {
  hgr_device_binding_t bindings[8];
  size_t count = 0;
  for (uint32_t e = 0; e < graph->entry_count; ++e) {
    int32_t key = graph->entries[e].device_key;
    bool seen = false;
    for (size_t b = 0; b < count; ++b) seen |= bindings[b].key == key;
    if (seen || count == 8) continue;
    bindings[count] = (hgr_device_binding_t){key, scenario->specs[0]};
    for (size_t k = 0; k < scenario->key_count; ++k)
      if (scenario->keys[k] == key) bindings[count].spec = scenario->specs[k];
    count++;
  }
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  options.bindings = bindings;
  options.binding_count = count;
  return hgr_executor_create(instance, graph, &options, out_executor);
}

/* ASSERT_OK that also names the scenario, graph and run. */
#define ASSERT_RUN_OK(h, run, expr)                                                      \
  do {                                                                                   \
    hgr_status_t s_ = (expr);                                                            \
    if (s_) {                                                                            \
      char* text_ = hgr_status_to_string(s_);                                            \
      fail_msg("%s, %s, run %u: %s returned %s", scenario->name, (h)->label,             \
               (unsigned)(run), #expr, text_);                                           \
    }                                                                                    \
  } while (0)

typedef struct harness_t {
  const char* label;
  hgr_graph_t* graph;
  hgr_executor_t* executor;
  float** inputs;
  hgr_test_reference_t reference;
  uint32_t run; /* the run the inputs are set for, for messages */
  hgr_fault_shim_mark_t before; /* the OpenCL objects before the executor */
} harness_t;

static void harness_open(harness_t* h, const char* label, const char* json) {
  memset(h, 0, sizeof(*h));
  h->label = label;
  h->graph = load(json);
  h->before = hgr_fault_shim_mark();
  ASSERT_OK(create_executor(h->graph, &h->executor));
  assert_int_equal(hgr_executor_input_count(h->executor), h->graph->arg_count);
  assert_int_equal(hgr_executor_output_count(h->executor), h->graph->head_count);
  h->inputs = calloc(h->graph->arg_count, sizeof(float*));
}

static void harness_close(harness_t* h) {
  hgr_test_reference_free(&h->reference);
  for (uint32_t i = 0; h->inputs && i < h->graph->arg_count; ++i) free(h->inputs[i]);
  free(h->inputs);
  hgr_executor_release(h->executor);
  ASSERT_OPENCL_BALANCED(&h->before);
  hgr_graph_release(h->graph);
}

static uint64_t input_elements(const hgr_graph_t* graph, uint32_t input) {
  return graph->entries[graph->node_row_ptr[graph->arg_nodes[input]]].element_count;
}

/* New random inputs in [-2, 2): set on the executor, and the reference recomputed. */
static void set_inputs(harness_t* h, uint64_t seed) {
  ASSERT_RUN_OK(h, h->run, hgr_test_set_random_inputs(h->graph, h->executor, seed, h->inputs, &h->reference));
}

/* Reads every output (all, or only those that do not alias an input) and compares
 * it with reference; a mismatch names the scenario, graph, run, output and node. */
static void check_outputs(const harness_t* h, const hgr_test_reference_t* reference, uint32_t run,
                          bool skip_input_aliases) {
  char message[400];
  if (!hgr_test_check_outputs(h->executor, h->graph, reference, skip_input_aliases, message, sizeof(message)))
    fail_msg("%s, %s, run %u: %s", scenario->name, h->label, run, message);
}

static void move_reference(hgr_test_reference_t* to, hgr_test_reference_t* from) {
  *to = *from;
  memset(from, 0, sizeof(*from));
}

/* Runs the graph `runs` times with new inputs each time (waiting for the whole run
 * every other time, otherwise letting get_output wait), then sets new inputs while
 * a run is in flight and checks both that run and the next. Returns the executor's
 * copy summary. */
static hgr_copy_summary_t run_graph(const char* label, const char* json, uint32_t runs,
                                    uint64_t seed) {
  harness_t h;
  harness_open(&h, label, json);
  for (uint32_t run = 0; run < runs; ++run) {
    h.run = run;
    set_inputs(&h, seed * 1000 + run);
    ASSERT_RUN_OK(&h, run, hgr_executor_run(h.executor));
    if (run % 2) ASSERT_RUN_OK(&h, run, hgr_executor_wait(h.executor));
    check_outputs(&h, &h.reference, run, false);
  }
  h.run = runs;
  set_inputs(&h, seed * 1000 + runs);
  ASSERT_RUN_OK(&h, runs, hgr_executor_run(h.executor));
  hgr_test_reference_t in_flight;
  move_reference(&in_flight, &h.reference);
  h.run = runs + 1;
  set_inputs(&h, seed * 1000 + runs + 1);
  check_outputs(&h, &in_flight, runs, true);
  hgr_test_reference_free(&in_flight);
  ASSERT_RUN_OK(&h, runs + 1, hgr_executor_run(h.executor));
  check_outputs(&h, &h.reference, runs + 1, false);
  hgr_copy_summary_t summary = hgr_executor_copy_summary(h.executor);
  harness_close(&h);
  return summary;
}

/* Whether the scenario's first two devices are in different contexts. */
static bool cross_context(void) {
  size_t a = 0, b = 0;
  if (scenario->key_count < 2) return false;
  ASSERT_OK(hgr_instance_find_device(instance, scenario->specs[0], &a));
  ASSERT_OK(hgr_instance_find_device(instance, scenario->specs[1], &b));
  return hgr_instance_pair_class(instance, a, b) >= HGR_PAIR_CROSS_CONTEXT;
}

/* ---- scenario tests ---------------------------------------------------------------- */

static void simplex_graph_matches_the_reference(void** state) {
  (void)state;
  const char* shapes[] = {"[10,5]", "[]", "[600,500]"};
  for (size_t s = 0; s < 3; ++s) {
    char* json = simplex_json(shapes[s]);
    char label[64];
    snprintf(label, sizeof(label), "simplex %s", shapes[s]);
    hgr_copy_summary_t summary = run_graph(label, json, 3, 100 + s);
    uint32_t copies = 0;
    for (int c = 0; c < HGR_PAIR_CLASS_COUNT; ++c) copies += summary.count[c];
    assert_int_equal(copies, 1);
    free(json);
  }
}

static void duplex_graph_matches_the_reference(void** state) {
  (void)state;
  const char* shapes[] = {"[3,4,5]", "[1]", "[300000]"};
  for (size_t s = 0; s < 3; ++s) {
    char* json = duplex_json(shapes[s]);
    char label[64];
    snprintf(label, sizeof(label), "duplex %s", shapes[s]);
    hgr_copy_summary_t summary = run_graph(label, json, 3, 200 + s);
    if (cross_context()) {
      assert_int_equal(summary.staged_small + summary.staged_mapped, 3);
      assert_int_equal(summary.staged_mapped, s == 2 ? 3 : 0); /* 1.2 MB >= 1 MiB */
    }
    free(json);
  }
}

static void random_graphs_match_the_reference_run_after_run(void** state) {
  (void)state;
  uint32_t small = 0, mapped = 0, copies = 0;
  for (uint64_t seed = 1; seed <= scenario->graphs; ++seed) {
    char* json = random_json(seed, scenario->op_count, scenario->sizes, scenario->size_count,
                             scenario->key_count);
    char label[64];
    snprintf(label, sizeof(label), "random graph seed %llu", (unsigned long long)seed);
    hgr_copy_summary_t summary = run_graph(label, json, 3, seed);
    small += summary.staged_small;
    mapped += summary.staged_mapped;
    for (int c = 0; c < HGR_PAIR_CLASS_COUNT; ++c) copies += summary.count[c];
    free(json);
  }
  print_message("%s: %u graphs, %u copies: %u staged small, %u staged mapped\n", scenario->name,
                scenario->graphs, copies, small, mapped);
  uint64_t largest = 0; /* copies of 1 MiB and more take the mapped path */
  for (size_t s = 0; s < scenario->size_count; ++s)
    if (scenario->sizes[s] > largest) largest = scenario->sizes[s];
  if (scenario->key_count > 1) assert_true(copies > 0);
  if (cross_context()) assert_true(small > 0 && (mapped > 0) == (largest * 4 >= 1048576));
  else assert_int_equal(small + mapped, 0);
}

static void graph_without_device_index_runs_on_one_device(void** state) {
  (void)state;
  char* json = random_json(77, 20, scenario->sizes, scenario->size_count, 0);
  harness_t h;
  harness_open(&h, "graph without device_index", json);
  assert_int_equal(hgr_executor_key_count(h.executor), 1);
  hgr_key_binding_t binding = hgr_executor_key_binding(h.executor, 0);
  assert_int_equal(binding.key, -1);
  size_t pocl0 = SIZE_MAX;
  ASSERT_OK(hgr_instance_find_device(instance, "pocl:0", &pocl0));
  assert_int_equal(binding.device_index, pocl0);
  harness_close(&h);
  run_graph("graph without device_index", json, 3, 77);
  free(json);
}

static void tensors_of_16_mib_and_more_cross_devices_in_chunks(void** state) {
  (void)state;
  char shape[32];
  snprintf(shape, sizeof(shape), "[%llu]", (unsigned long long)scenario->huge);
  char* json = duplex_json(shape);
  hgr_copy_summary_t summary = run_graph("duplex with tensors of 16 MiB and more", json, 2, 300);
  print_message("%s: %s floats: %u staged small, %u mapped, %u chunks\n", scenario->name, shape,
                summary.staged_small, summary.staged_mapped, summary.staged_chunks);
  if (cross_context()) {
    assert_int_equal(summary.staged_mapped, 3);
    /* PoCL sources are mapped and written in one command each (transfer.c); the
     * chunked reads into a mapped destination are checked by test_transfer.c. */
    assert_true(summary.staged_chunks >= 3);
  }
  free(json);
}

/* ---- many runs --------------------------------------------------------------------- */

/* The process's resident memory (RSS). Under AddressSanitizer RSS includes the
 * quarantine of freed blocks, which grows by design, so the live heap is measured
 * instead (it includes what drivers allocate for events). */
static uint64_t memory_in_use(const char** out_what) {
#ifdef HGR_TEST_ASAN
  *out_what = "live heap";
  return __sanitizer_get_current_allocated_bytes();
#else
  *out_what = "RSS";
  FILE* statm = fopen("/proc/self/statm", "r");
  unsigned long long size = 0, resident = 0;
  assert_non_null(statm);
  assert_int_equal(fscanf(statm, "%llu %llu", &size, &resident), 2);
  fclose(statm);
  return resident * (uint64_t)sysconf(_SC_PAGESIZE);
#endif
}

/* 10,000 runs with new inputs every run, each read back (the usual inference loop);
 * every 1,000th is compared with the reference. Memory in use after run 10,000 may
 * exceed that after run 1,000 by 4 MiB at most: more would be leaked events or
 * staging. */
static void ten_thousand_runs(hgr_instance_t* runs_instance, const char* label) {
  static const uint64_t sizes[] = {256};
  static const int32_t keys[] = {1, 4};
  hgr_test_graph_options_t options = {.seed = 9, .op_count = 10, .sizes = sizes, .size_count = 1,
                                      .device_keys = keys, .device_key_count = 2};
  char* json = hgr_test_graph_generate(&options);
  hgr_instance_t* saved = instance; /* create_executor binds on the global instance */
  instance = runs_instance;
  harness_t h;
  harness_open(&h, label, json);
  hgr_test_reference_t references[2];
  float** inputs[2];
  for (int i = 0; i < 2; ++i) { /* two input sets, alternating */
    set_inputs(&h, 900 + (uint64_t)i);
    move_reference(&references[i], &h.reference);
    inputs[i] = h.inputs;
    h.inputs = calloc(h.graph->arg_count, sizeof(float*));
  }
  float first_output[256];
  uint64_t in_use_at_1000 = 0;
  const char* what = "";
  for (uint32_t run = 1; run <= 10000; ++run) {
    float* const* set = inputs[run % 2];
    for (uint32_t a = 0; a < h.graph->arg_count; ++a) {
      uint64_t count = input_elements(h.graph, a);
      ASSERT_RUN_OK(&h, run, hgr_executor_set_input(h.executor, a, set[a], count * sizeof(float)));
    }
    ASSERT_RUN_OK(&h, run, hgr_executor_run(h.executor));
    if (run % 1000 == 0) {
      check_outputs(&h, &references[run % 2], run, false);
      ASSERT_RUN_OK(&h, run, hgr_executor_wait(h.executor));
      if (run == 1000) in_use_at_1000 = memory_in_use(&what);
    } else {
      uint64_t bytes = references[0].element_counts[0] * sizeof(float);
      ASSERT_RUN_OK(&h, run, hgr_executor_get_output(h.executor, 0, first_output, bytes));
    }
  }
  uint64_t in_use_at_10000 = memory_in_use(&what);
  print_message("%s: %s %.1f MiB after run 1,000, %.1f MiB after run 10,000\n", label, what,
                in_use_at_1000 / 1048576.0, in_use_at_10000 / 1048576.0);
  if (in_use_at_10000 > in_use_at_1000 + 4 * 1048576)
    fail_msg("%s: %s grew by %.1f MiB between run 1,000 and run 10,000", label, what,
             (in_use_at_10000 - in_use_at_1000) / 1048576.0);
  for (int i = 0; i < 2; ++i) {
    for (uint32_t a = 0; a < h.graph->arg_count; ++a) free(inputs[i][a]);
    free(inputs[i]);
    hgr_test_reference_free(&references[i]);
  }
  harness_close(&h);
  instance = saved;
  free(json);
}

static void ten_thousand_runs_on_two_pocl_devices_keep_memory_flat(void** state) {
  (void)state;
  ten_thousand_runs(instance, "pocl:0 + pocl:1, one context");
}

static void ten_thousand_cross_context_runs_keep_memory_flat(void** state) {
  (void)state;
  hgr_instance_options_t options;
  hgr_instance_options_init(&options);
  options.context_per_device = true;
  hgr_instance_t* split = NULL;
  ASSERT_OK(hgr_instance_create(&options, &split));
  ten_thousand_runs(split, "pocl:0 + pocl:1, a context each");
  hgr_instance_release(split);
}

/* ---- API errors (pocl:0; pocl:1 for key 4) ----------------------------------------- */

static void api_error_setup(harness_t* h) {
  char* json = tiny_json("add", 1, 1, 1);
  harness_open(h, "tiny", json);
  free(json);
}

static void unknown_input_name_is_not_found_and_named(void** state) {
  (void)state;
  harness_t h;
  api_error_setup(&h);
  float data[16] = {0};
  ASSERT_STATUS(hgr_executor_set_input_by_name(h.executor, "gamma_input", data, sizeof(data)),
                HGR_STATUS_NOT_FOUND, "gamma_input");
  size_t index = 0;
  ASSERT_STATUS(hgr_executor_input_index(h.executor, "gamma_input", &index), HGR_STATUS_NOT_FOUND,
                "gamma_input", "alpha", "beta");
  ASSERT_OK(hgr_executor_input_index(h.executor, "beta", &index));
  assert_int_equal(index, 1);
  harness_close(&h);
}

static void wrong_byte_sizes_are_invalid_arguments(void** state) {
  (void)state;
  harness_t h;
  api_error_setup(&h);
  float data[17] = {0};
  ASSERT_STATUS(hgr_executor_set_input(h.executor, 0, data, 15 * sizeof(float)),
                HGR_STATUS_INVALID_ARGUMENT, "64");
  ASSERT_STATUS(hgr_executor_set_input_by_name(h.executor, "beta", data, 17 * sizeof(float)),
                HGR_STATUS_INVALID_ARGUMENT, "64");
  set_inputs(&h, 1);
  ASSERT_OK(hgr_executor_run(h.executor));
  ASSERT_STATUS(hgr_executor_get_output(h.executor, 0, data, 17 * sizeof(float)),
                HGR_STATUS_INVALID_ARGUMENT, "64");
  check_outputs(&h, &h.reference, 0, false);
  harness_close(&h);
}

static void running_before_every_input_is_set_names_the_missing_input(void** state) {
  (void)state;
  harness_t h;
  api_error_setup(&h);
  float data[16] = {0};
  ASSERT_OK(hgr_executor_set_input_by_name(h.executor, "alpha", data, sizeof(data)));
  ASSERT_STATUS(hgr_executor_run(h.executor), HGR_STATUS_FAILED_PRECONDITION, "beta");
  ASSERT_OK(hgr_executor_set_input_by_name(h.executor, "beta", data, sizeof(data)));
  ASSERT_OK(hgr_executor_run(h.executor));
  ASSERT_OK(hgr_executor_wait(h.executor));
  harness_close(&h);
}

static void unknown_func_name_names_the_node_and_lists_known_ops(void** state) {
  (void)state;
  char* json = tiny_json("fused_conv9d", 1, 1, 1);
  hgr_graph_t* graph = load(json);
  hgr_fault_shim_mark_t before = hgr_fault_shim_mark();
  hgr_executor_t* executor = NULL;
  ASSERT_STATUS(create_executor(graph, &executor), HGR_STATUS_INVALID_ARGUMENT, "node 2 'sum'",
                "fused_conv9d", "add", "subtract", "tanh");
  assert_null(executor);
  ASSERT_OPENCL_BALANCED(&before);
  hgr_graph_release(graph);
  free(json);
}

static void binding_to_a_missing_device_is_not_found(void** state) {
  (void)state;
  char* json = tiny_json("add", 1, 1, 1);
  hgr_graph_t* graph = load(json);
  hgr_device_binding_t binding = {1, "pocl:9"};
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  options.bindings = &binding;
  options.binding_count = 1;
  hgr_fault_shim_mark_t before = hgr_fault_shim_mark();
  hgr_executor_t* executor = NULL;
  ASSERT_STATUS(hgr_executor_create(instance, graph, &options, &executor), HGR_STATUS_NOT_FOUND,
                "pocl:9");
  assert_null(executor);
  ASSERT_OPENCL_BALANCED(&before);
  hgr_graph_release(graph);
  free(json);
}

/* Keys 1 and 4 on pocl:0 and pocl:1. Refused when the graph is loaded or, at the
 * latest, when an executor is created. (With both keys on one device the runtime
 * accepts the graph: no copy is needed there.) */
static void input_on_another_key_without_a_copy_names_the_node(void** state) {
  (void)state;
  char* json = tiny_json("add", 1, 4, 1);
  hgr_graph_t* graph = NULL;
  hgr_fault_shim_mark_t before = hgr_fault_shim_mark();
  hgr_status_t status = hgr_graph_load_json(json, strlen(json), &graph);
  if (!status) {
    hgr_executor_t* executor = NULL;
    status = create_executor(graph, &executor);
    assert_null(executor);
  }
  ASSERT_OPENCL_BALANCED(&before);
  ASSERT_STATUS(status, HGR_STATUS_INVALID_ARGUMENT, "'sum'");
  hgr_graph_release(graph);
  free(json);
}

/* ---- main -------------------------------------------------------------------------- */

int main(int argc, char** argv) {
  static const scenario_t many_runs = {.name = "many-runs", .key_count = 2, .keys = {1, 4},
                                       .specs = {"pocl:0", "pocl:1"}};
  static const scenario_t api_errors = {.name = "api-errors", .key_count = 2, .keys = {1, 4},
                                        .specs = {"pocl:0", "pocl:1"}};
  const char* name = argc > 1 ? argv[1] : "";
  for (size_t s = 0; s < sizeof(scenarios) / sizeof(scenarios[0]); ++s)
    if (!strcmp(scenarios[s].name, name)) scenario = &scenarios[s];
  if (!strcmp(name, many_runs.name)) scenario = &many_runs;
  if (!strcmp(name, api_errors.name)) scenario = &api_errors;
  if (!scenario) {
    fprintf(stderr, "usage: %s one-device|pocl-pair|pocl-rusticl|three-platforms|"
                    "context-per-device|many-runs|api-errors\n", argv[0]);
    return 2;
  }
  hgr_instance_options_t options;
  hgr_instance_options_init(&options);
  options.context_per_device = scenario->context_per_device;
  hgr_status_t status = hgr_instance_create(&options, &instance);
  if (status) {
    char* text = hgr_status_to_string(status);
    fprintf(stderr, "hgr_instance_create: %s\n", text);
    free(text);
    hgr_status_free(status);
    return 1;
  }
  hgr_test_require_devices(instance, scenario->specs, scenario->key_count);
  const struct CMUnitTest graph_tests[] = {
      cmocka_unit_test(simplex_graph_matches_the_reference),
      cmocka_unit_test(duplex_graph_matches_the_reference),
      cmocka_unit_test(random_graphs_match_the_reference_run_after_run),
      cmocka_unit_test(graph_without_device_index_runs_on_one_device),
      cmocka_unit_test(tensors_of_16_mib_and_more_cross_devices_in_chunks),
  };
  const struct CMUnitTest many_run_tests[] = {
      cmocka_unit_test(ten_thousand_runs_on_two_pocl_devices_keep_memory_flat),
      cmocka_unit_test(ten_thousand_cross_context_runs_keep_memory_flat),
  };
  const struct CMUnitTest api_error_tests[] = {
      cmocka_unit_test(unknown_input_name_is_not_found_and_named),
      cmocka_unit_test(wrong_byte_sizes_are_invalid_arguments),
      cmocka_unit_test(running_before_every_input_is_set_names_the_missing_input),
      cmocka_unit_test(unknown_func_name_names_the_node_and_lists_known_ops),
      cmocka_unit_test(binding_to_a_missing_device_is_not_found),
      cmocka_unit_test(input_on_another_key_without_a_copy_names_the_node),
  };
  int failed;
  if (scenario == &many_runs) {
    failed = cmocka_run_group_tests_name("e2e many-runs", many_run_tests, NULL, NULL);
  } else if (scenario == &api_errors) {
    failed = cmocka_run_group_tests_name("e2e api-errors", api_error_tests, NULL, NULL);
  } else {
    /* The one-device graph without a device_index column and the >= 16 MiB graphs
     * belong to the scenarios named for them. */
    size_t count = 3;
    struct CMUnitTest tests[5] = {graph_tests[0], graph_tests[1], graph_tests[2]};
    if (!strcmp(scenario->name, "one-device")) tests[count++] = graph_tests[3];
    if (scenario->huge) tests[count++] = graph_tests[4];
    failed = _cmocka_run_group_tests(scenario->name, tests, count, NULL, NULL);
  }
  hgr_instance_release(instance);
  return failed ? failed : hgr_fault_shim_exit_status(argv[0]);
}
