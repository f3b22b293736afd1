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
  };
  int failed = cmocka_run_group_tests_name("failures", tests, NULL, NULL);
  return failed ? failed : hgr_fault_shim_exit_status("test_failures");
}
