/* A command that fails on the producer's device reaches the consumer across contexts
 * as an error, never as a hang, and the executor runs correctly afterwards.
 * Argument: the producer and consumer specs and the context policy, e.g.
 * "pocl:0 rusticl:0 shared". The failure is a real one on the device, made from the
 * test side: the fault shim (fault_shim.h) puts a user event with a negative status
 * in the wait list of the producer's kernel, hgr_add_f32. Every OpenCL object is
 * released again after each executor and at the end (the shim counts them). */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"
/* After testlib.h: its assertion macro needs cmocka. */
#include "fault_shim.h"

/* The producer node's kernel (kernels/elementwise.cl): node 2 'elemwise_add'. */
#define PRODUCER_KERNEL "hgr_add_f32"

static const char* producer_spec;
static const char* consumer_spec;
static bool per_device;

/* TVM's simplex graph: A + B on key 4, copied to key 1, minus C there. */
static char* simplex_json(size_t elements) {
  static const char format[] =
      "{\"nodes\": [{\"op\": \"null\", \"name\": \"A\", \"inputs\": []},"
      "{\"op\": \"null\", \"name\": \"B\", \"inputs\": []},"
      "{\"op\": \"tvm_op\", \"name\": \"elemwise_add\", \"attrs\": {\"func_name\": \"add\", \"num_inputs\": \"2\","
      " \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[0, 0, 0], [1, 0, 0]]},"
      "{\"op\": \"tvm_op\", \"name\": \"copy\", \"attrs\": {\"func_name\": \"__copy\", \"num_inputs\": \"1\","
      " \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[2, 0, 0]]},"
      "{\"op\": \"null\", \"name\": \"C\", \"inputs\": []},"
      "{\"op\": \"tvm_op\", \"name\": \"elemwise_sub\", \"attrs\": {\"func_name\": \"subtract\", \"num_inputs\": \"2\","
      " \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[3, 0, 0], [4, 0, 0]]}],"
      "\"arg_nodes\": [0, 1, 4], \"node_row_ptr\": [0, 1, 2, 3, 4, 5, 6], \"heads\": [[5, 0, 0]],"
      "\"attrs\": {\"storage_id\": [\"list_int\", [3, 4, 0, 1, 5, 2]],"
      "\"shape\": [\"list_shape\", [[%zu], [%zu], [%zu], [%zu], [%zu], [%zu]]],"
      "\"dltype\": [\"list_str\", [\"float32\", \"float32\", \"float32\", \"float32\", \"float32\", \"float32\"]],"
      "\"device_index\": [\"list_int\", [4, 4, 4, 1, 1, 1]]}}";
  size_t size = sizeof(format) + 6 * 24;
  char* json = malloc(size);
  snprintf(json, size, format, elements, elements, elements, elements, elements, elements);
  return json;
}

typedef struct fixture_t {
  hgr_instance_t* instance;
  hgr_graph_t* graph;
  size_t elements;
  float *a, *b, *c, *out;
} fixture_t;

static hgr_executor_t* make_executor(fixture_t* f) {
  hgr_device_binding_t bindings[] = {{4, producer_spec}, {1, consumer_spec}};
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  options.bindings = bindings;
  options.binding_count = 2;
  hgr_executor_t* executor = NULL;
  ASSERT_OK(hgr_executor_create(f->instance, f->graph, &options, &executor));
  ASSERT_OK(hgr_executor_set_input_by_name(executor, "A", f->a, f->elements * 4));
  ASSERT_OK(hgr_executor_set_input_by_name(executor, "B", f->b, f->elements * 4));
  ASSERT_OK(hgr_executor_set_input_by_name(executor, "C", f->c, f->elements * 4));
  return executor;
}

static void check_correct_run(fixture_t* f, hgr_executor_t* executor) {
  ASSERT_OK(hgr_executor_run(executor));
  ASSERT_OK(hgr_executor_wait(executor));
  ASSERT_OK(hgr_executor_get_output(executor, 0, f->out, f->elements * 4));
  for (size_t i = 0; i < f->elements; ++i) assert_float_equal(f->out[i], (float)i + 1.0f, 0.0f);
}

static void run_with_failure(size_t elements) {
  fixture_t f = {NULL, NULL, elements, NULL, NULL, NULL, NULL};
  hgr_instance_options_t instance_options;
  hgr_instance_options_init(&instance_options);
  instance_options.context_per_device = per_device;
  ASSERT_OK(hgr_instance_create(&instance_options, &f.instance));
  const char* needed[] = {producer_spec, consumer_spec};
  hgr_test_require_devices(f.instance, needed, 2);
  char* json = simplex_json(elements);
  ASSERT_OK(hgr_graph_load_json(json, strlen(json), &f.graph));
  free(json);
  f.a = malloc(elements * 4);
  f.b = malloc(elements * 4);
  f.c = malloc(elements * 4);
  f.out = malloc(elements * 4);
  for (size_t i = 0; i < elements; ++i) {
    f.a[i] = (float)i;
    f.b[i] = 2.0f;
    f.c[i] = 1.0f;
  }

  hgr_fault_shim_mark_t before = hgr_fault_shim_mark();
  hgr_executor_t* executor = make_executor(&f);
  hgr_copy_summary_t copies = hgr_executor_copy_summary(executor);
  print_message("%zu elements: %u cross-context, %u cross-platform copies; paths: %u staged, %u mapped\n", elements,
                copies.count[HGR_PAIR_CROSS_CONTEXT], copies.count[HGR_PAIR_CROSS_PLATFORM], copies.staged_small,
                copies.staged_mapped);
  assert_int_equal(copies.count[HGR_PAIR_CROSS_CONTEXT] + copies.count[HGR_PAIR_CROSS_PLATFORM], 1);
  check_correct_run(&f, executor);

  /* A failing producer: the wait names it instead of hanging. */
  unsigned long failed = hgr_fault_shim_failed_kernel_count();
  hgr_fault_shim_fail_kernel(PRODUCER_KERNEL, CL_OUT_OF_RESOURCES);
  ASSERT_OK(hgr_executor_run(executor));
  hgr_fault_shim_fail_kernel(NULL, 0);
  assert_int_equal(hgr_fault_shim_failed_kernel_count(), failed + 1);
  ASSERT_STATUS(hgr_executor_wait(executor), HGR_STATUS_DEVICE_FAILURE, "node 2 'elemwise_add'", "add on ",
                producer_spec, "failed on the device");
  /* Later calls give a clear error rather than touching undefined queues. */
  ASSERT_STATUS(hgr_executor_run(executor), HGR_STATUS_FAILED_PRECONDITION, "an earlier run failed",
                "node 2 'elemwise_add'", "create a new one");
  ASSERT_STATUS(hgr_executor_get_output(executor, 0, f.out, elements * 4), HGR_STATUS_FAILED_PRECONDITION,
                "an earlier run failed");
  hgr_executor_release(executor);
  hgr_fault_shim_release_failed_events();
  ASSERT_OPENCL_BALANCED_AFTER_FAILURE(&before);

  /* A new executor on the same instance works. */
  executor = make_executor(&f);
  check_correct_run(&f, executor);

  /* Reading an output without waiting surfaces the failure too. */
  hgr_fault_shim_fail_kernel(PRODUCER_KERNEL, CL_INVALID_OPERATION);
  ASSERT_OK(hgr_executor_run(executor));
  hgr_fault_shim_fail_kernel(NULL, 0);
  assert_int_equal(hgr_fault_shim_failed_kernel_count(), failed + 2);
  ASSERT_STATUS(hgr_executor_get_output(executor, 0, f.out, elements * 4), HGR_STATUS_DEVICE_FAILURE,
                "node 2 'elemwise_add'", "failed on the device");
  hgr_executor_release(executor);
  hgr_fault_shim_release_failed_events();
  ASSERT_OPENCL_BALANCED_AFTER_FAILURE(&before);

  free(f.a);
  free(f.b);
  free(f.c);
  free(f.out);
  hgr_graph_release(f.graph);
  hgr_instance_release(f.instance);
}

static void small_copy_after_a_failed_producer_reports_the_producer(void** state) {
  (void)state;
  run_with_failure(1000); /* read-then-write staging */
}

static void large_copy_after_a_failed_producer_reports_the_producer(void** state) {
  (void)state;
  run_with_failure(300 * 1000); /* 1.2 MB: a mapped copy */
}

/* A chain on the producer's device alone: node k + 2 is 'opK', value - B (k = 1),
 * value + B (other even k) or value * B (odd k), its output in storage 2 + k % 2, so the storages alternate and
 * most nodes are neither the last writer nor the last reader of anything. */
static char* chain_json(size_t elements, int nodes) {
  size_t size = 1024 + (size_t)nodes * 400;
  char* json = malloc(size);
  size_t used = (size_t)snprintf(json, size,
                                 "{\"nodes\": [{\"op\": \"null\", \"name\": \"A\", \"inputs\": []},"
                                 "{\"op\": \"null\", \"name\": \"B\", \"inputs\": []}");
  for (int k = 0; k < nodes; ++k)
    used += (size_t)snprintf(json + used, size - used,
                             ",{\"op\": \"tvm_op\", \"name\": \"op%d\", \"attrs\": {\"func_name\": \"%s\", "
                             "\"num_inputs\": \"2\", \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, "
                             "\"inputs\": [[%d, 0, 0], [1, 0, 0]]}",
                             k, k == 1 ? "subtract" : k % 2 ? "multiply" : "add", k ? k + 1 : 0);
  used += (size_t)snprintf(json + used, size - used, "], \"arg_nodes\": [0, 1], \"node_row_ptr\": [0");
  for (int n = 1; n <= nodes + 2; ++n) used += (size_t)snprintf(json + used, size - used, ", %d", n);
  used += (size_t)snprintf(json + used, size - used,
                           "], \"heads\": [[%d, 0, 0]], \"attrs\": {\"storage_id\": [\"list_int\", [0, 1", nodes + 1);
  for (int k = 0; k < nodes; ++k) used += (size_t)snprintf(json + used, size - used, ", %d", 2 + k % 2);
  used += (size_t)snprintf(json + used, size - used, "]], \"shape\": [\"list_shape\", [");
  for (int n = 0; n < nodes + 2; ++n) used += (size_t)snprintf(json + used, size - used, "%s[%zu]", n ? ", " : "", elements);
  used += (size_t)snprintf(json + used, size - used, "]], \"dltype\": [\"list_str\", [");
  for (int n = 0; n < nodes + 2; ++n) used += (size_t)snprintf(json + used, size - used, "%s\"float32\"", n ? ", " : "");
  used += (size_t)snprintf(json + used, size - used, "]], \"device_index\": [\"list_int\", [");
  for (int n = 0; n < nodes + 2; ++n) used += (size_t)snprintf(json + used, size - used, "%s4", n ? ", " : "");
  snprintf(json + used, size - used, "]]}}");
  return json;
}

static hgr_executor_t* make_chain_executor(hgr_instance_t* instance, hgr_graph_t* graph, bool profiling,
                                           const float* a, const float* b, size_t elements) {
  hgr_device_binding_t bindings[] = {{4, producer_spec}};
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  options.bindings = bindings;
  options.binding_count = 1;
  options.profiling = profiling;
  hgr_executor_t* executor = NULL;
  ASSERT_OK(hgr_executor_create(instance, graph, &options, &executor));
  ASSERT_OK(hgr_executor_set_input_by_name(executor, "A", a, elements * 4));
  ASSERT_OK(hgr_executor_set_input_by_name(executor, "B", b, elements * 4));
  return executor;
}

/* A node in the middle of a chain on one queue fails: the wait names that node, with
 * and without profiling. Neither PoCL 3.1 nor rusticl fails the commands after it on
 * the queue when it failed before they were enqueued, as here, so a run that kept
 * events only at the chain's end (the executor's schedule records only op0, op18
 * and op19 in its trackers) would miss the failure. */
static void chain_failure_in_the_middle_names_its_node(void** state) {
  (void)state;
  enum { NODES = 20 };
  const size_t elements = 1000;
  hgr_instance_t* instance = NULL;
  ASSERT_OK(hgr_instance_create(NULL, &instance));
  const char* needed[] = {producer_spec};
  hgr_test_require_devices(instance, needed, 1);
  char* json = chain_json(elements, NODES);
  hgr_graph_t* graph = NULL;
  ASSERT_OK(hgr_graph_load_json(json, strlen(json), &graph));
  free(json);
  float* a = malloc(elements * 4);
  float* b = malloc(elements * 4);
  float* out = malloc(elements * 4);
  for (size_t i = 0; i < elements; ++i) {
    a[i] = (float)(i % 7) - 3.0f;
    b[i] = 0.5f;
  }

  hgr_fault_shim_mark_t before = hgr_fault_shim_mark();
  hgr_executor_t* executor = make_chain_executor(instance, graph, false, a, b, elements);
  ASSERT_OK(hgr_executor_run(executor));
  ASSERT_OK(hgr_executor_wait(executor));
  ASSERT_OK(hgr_executor_get_output(executor, 0, out, elements * 4));
  for (size_t i = 0; i < elements; ++i) {
    float expected = a[i];
    for (int k = 0; k < NODES; ++k)
      expected = k == 1 ? expected - b[i] : k % 2 ? expected * b[i] : expected + b[i];
    assert_float_equal(out[i], expected, 1e-5f);
  }
  /* op1, the only subtract, fails. */
  hgr_fault_shim_fail_kernel("hgr_subtract_f32", CL_OUT_OF_RESOURCES);
  ASSERT_OK(hgr_executor_run(executor));
  hgr_fault_shim_fail_kernel(NULL, 0);
  ASSERT_STATUS(hgr_executor_wait(executor), HGR_STATUS_DEVICE_FAILURE, "node 3 'op1' (subtract on ",
                "failed on the device");
  hgr_executor_release(executor);
  hgr_fault_shim_release_failed_events();
  ASSERT_OPENCL_BALANCED_AFTER_FAILURE(&before);

  executor = make_chain_executor(instance, graph, true, a, b, elements);
  hgr_fault_shim_fail_kernel("hgr_subtract_f32", CL_OUT_OF_RESOURCES);
  ASSERT_OK(hgr_executor_run(executor));
  hgr_fault_shim_fail_kernel(NULL, 0);
  ASSERT_STATUS(hgr_executor_wait(executor), HGR_STATUS_DEVICE_FAILURE, "node 3 'op1' (subtract on ",
                "failed on the device");
  hgr_executor_release(executor);
  hgr_fault_shim_release_failed_events();
  ASSERT_OPENCL_BALANCED_AFTER_FAILURE(&before);

  free(a);
  free(b);
  free(out);
  hgr_graph_release(graph);
  hgr_instance_release(instance);
}

static void on_alarm(int signal_number) {
  (void)signal_number;
  static const char message[] = "test_failures: a run hung for 250 s\n";
  if (write(2, message, sizeof(message) - 1) < 0) _exit(3);
  _exit(2);
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: test_failures PRODUCER CONSUMER shared|per-device\n");
    return 2;
  }
  producer_spec = argv[1];
  consumer_spec = argv[2];
  per_device = !strcmp(argv[3], "per-device");
  signal(SIGALRM, on_alarm);
  alarm(250);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(small_copy_after_a_failed_producer_reports_the_producer),
      cmocka_unit_test(large_copy_after_a_failed_producer_reports_the_producer),
      cmocka_unit_test(chain_failure_in_the_middle_names_its_node),
  };
  int failed = cmocka_run_group_tests_name("failures", tests, NULL, NULL);
  return failed ? failed : hgr_fault_shim_exit_status("test_failures");
}
