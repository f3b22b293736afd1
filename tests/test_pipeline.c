/* Runs in flight, fences, lazy outputs and caller-owned memory (issue 5), on the
 * two devices named by the arguments (keys 1 and 4; the same spec twice means one
 * device):
 *   - 200 runs with distinct inputs, 3 in flight, each read through its fence and
 *     compared with its own reference, while later runs have been started;
 *   - a failure in the middle of a pipeline fails that run's fence and the later
 *     ones, never hangs, and leaves the earlier run's result;
 *   - TVM's zero-copy bug classes on one graph: an input that is also an output, a
 *     `__nop` right after an input, a `__nop` right before an output; bound to host
 *     memory and to caller cl_mem buffers, read through the binding and through the
 *     normal API, rebound between runs; refusals; outputs exported as device buffers
 *     and handed to a second executor.
 * The device failure is a real one, made from the test side: the fault shim
 * (fault_shim.h) puts a user event with a negative status in the wait list of relu's
 * kernel. Every OpenCL object hgr or the test makes is released again after each
 * test's last release and at the end (the shim counts them). */
#include <string.h>

#include "graph_internal.h"
#include "graphgen.h"
#include "hgr/opencl.h"
#include "reference.h"
#include "testlib.h"
/* After testlib.h: its assertion macro needs cmocka. */
#include "fault_shim.h"

static hgr_instance_t* instance;
static const char* specs[2];

static hgr_graph_t* load(const char* json) {
  hgr_graph_t* graph = NULL;
  ASSERT_OK(hgr_graph_load_json(json, strlen(json), &graph));
  return graph;
}

static hgr_executor_t* create(hgr_graph_t* graph, const char* spec1, const char* spec4) {
  hgr_device_binding_t bindings[] = {{1, spec1}, {4, spec4}};
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  options.bindings = bindings;
  options.binding_count = 2;
  hgr_executor_t* executor = NULL;
  ASSERT_OK(hgr_executor_create(instance, graph, &options, &executor));
  return executor;
}

static void random_floats(float* values, uint64_t count, uint64_t seed) {
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, seed);
  for (uint64_t e = 0; e < count; ++e) values[e] = hgr_test_rng_float(&rng, -2, 2);
}

/* ---- pipelined runs ------------------------------------------------------------------- */

#define IN_FLIGHT 3
static uint32_t total_runs = 200; /* across the seeds; the third argument changes it */

typedef struct pending_t {
  hgr_fence_t* fence;
  hgr_test_reference_t reference;
  uint32_t run;
} pending_t;

/* Reads every output of the oldest pending run through its fence and compares it
 * with that run's reference. */
static void check_pending(const hgr_graph_t* graph, pending_t* pending, bool wait_first) {
  if (wait_first) ASSERT_OK(hgr_fence_wait(pending->fence));
  for (size_t o = 0; o < pending->reference.output_count; ++o) {
    uint64_t count = pending->reference.element_counts[o];
    float* got = malloc(count * sizeof(float) + 1);
    ASSERT_OK(hgr_fence_get_output(pending->fence, o, got, count * sizeof(float)));
    char message[200];
    if (!hgr_test_reference_check(&pending->reference, o, got, message, sizeof(message)))
      fail_msg("%s + %s, run %u, output %zu (node '%s'): %s", specs[0], specs[1], pending->run, o,
               graph->nodes[graph->heads[o].node_id].name, message);
    free(got);
  }
  bool complete = false;
  ASSERT_OK(hgr_fence_query(pending->fence, &complete));
  if (!wait_first) ASSERT_OK(hgr_fence_wait(pending->fence));
  ASSERT_OK(hgr_fence_query(pending->fence, &complete));
  assert_true(complete);
  assert_int_equal(hgr_fence_run(pending->fence), pending->run + 1);
  hgr_fence_release(pending->fence);
  hgr_test_reference_free(&pending->reference);
  memset(pending, 0, sizeof(*pending));
}

static void pipelined_runs_each_match_their_own_reference(void** state) {
  (void)state;
  static const uint64_t sizes[] = {1, 64, 1000, 4096};
  static const int32_t keys[] = {1, 4};
  const uint32_t seeds = 2;
  for (uint64_t seed = 1; seed <= seeds; ++seed) {
    hgr_test_graph_options_t graph_options = {seed, 16, sizes, 4, keys, 2};
    char* json = hgr_test_graph_generate(&graph_options);
    hgr_graph_t* graph = load(json);
    free(json);
    hgr_fault_shim_mark_t before = hgr_fault_shim_mark();
    hgr_executor_t* executor = create(graph, specs[0], specs[1]);
    float** inputs = calloc(graph->arg_count, sizeof(float*));
    pending_t pending[IN_FLIGHT + 1] = {{0}};
    uint32_t runs = total_runs / seeds;
    for (uint32_t run = 0; run < runs; ++run) {
      for (uint32_t i = 0; i < graph->arg_count; ++i) {
        uint64_t count = graph->entries[graph->node_row_ptr[graph->arg_nodes[i]]].element_count;
        free(inputs[i]);
        inputs[i] = malloc(count * sizeof(float) + 1);
        random_floats(inputs[i], count, seed * 100000 + run * 10 + i);
        /* Set while up to three earlier runs are in flight. */
        ASSERT_OK(hgr_executor_set_input(executor, i, inputs[i], count * sizeof(float)));
      }
      pending_t* slot = &pending[run % (IN_FLIGHT + 1)];
      slot->run = run;
      ASSERT_OK(hgr_test_reference_run(graph, (const float* const*)inputs, &slot->reference));
      ASSERT_OK(hgr_executor_run_async(executor, &slot->fence));
      if (run >= IN_FLIGHT - 1) {
        pending_t* oldest = &pending[(run - (IN_FLIGHT - 1)) % (IN_FLIGHT + 1)];
        check_pending(graph, oldest, run % 2 == 0);
      }
    }
    for (uint32_t run = runs - (IN_FLIGHT - 1); run < runs; ++run)
      check_pending(graph, &pending[run % (IN_FLIGHT + 1)], false);
    /* The normal API reads the latest run: `inputs` still holds its inputs. */
    ASSERT_OK(hgr_executor_wait(executor));
    hgr_test_reference_t latest;
    ASSERT_OK(hgr_test_reference_run(graph, (const float* const*)inputs, &latest));
    for (size_t o = 0; o < latest.output_count; ++o) {
      uint64_t count = latest.element_counts[o];
      float* got = malloc(count * sizeof(float) + 1);
      ASSERT_OK(hgr_executor_get_output(executor, o, got, count * sizeof(float)));
      char message[200];
      if (!hgr_test_reference_check(&latest, o, got, message, sizeof(message)))
        fail_msg("%s + %s, the latest run (%u) through the normal API, output %zu (node '%s'): %s", specs[0],
                 specs[1], runs - 1, o, graph->nodes[graph->heads[o].node_id].name, message);
      free(got);
    }
    hgr_test_reference_free(&latest);
    for (uint32_t i = 0; i < graph->arg_count; ++i) free(inputs[i]);
    free(inputs);
    hgr_executor_release(executor);
    ASSERT_OPENCL_BALANCED(&before);
    hgr_graph_release(graph);
  }
}

/* ---- the zero-copy graph ------------------------------------------------------------ */

#define N 16384 /* 64 KiB of floats: host bindings of that size are zero copy */

/* x (key 1) -> __nop (x's storage) -> __copy to key 4 -> relu -> __nop (relu's
 * storage) = output 0; output 1 is x itself. */
static const char zero_copy_json[] =
    "{\"nodes\":["
    "{\"op\":\"null\",\"name\":\"x\",\"inputs\":[]},"
    "{\"op\":\"tvm_op\",\"name\":\"nop_in\",\"attrs\":{\"func_name\":\"__nop\",\"num_inputs\":\"1\","
    "\"num_outputs\":\"1\",\"flatten_data\":\"0\"},\"inputs\":[[0,0,0]]},"
    "{\"op\":\"tvm_op\",\"name\":\"copy\",\"attrs\":{\"func_name\":\"__copy\",\"num_inputs\":\"1\","
    "\"num_outputs\":\"1\",\"flatten_data\":\"0\"},\"inputs\":[[1,0,0]]},"
    "{\"op\":\"tvm_op\",\"name\":\"relu\",\"attrs\":{\"func_name\":\"relu\",\"num_inputs\":\"1\","
    "\"num_outputs\":\"1\",\"flatten_data\":\"0\"},\"inputs\":[[2,0,0]]},"
    "{\"op\":\"tvm_op\",\"name\":\"nop_out\",\"attrs\":{\"func_name\":\"__nop\",\"num_inputs\":\"1\","
    "\"num_outputs\":\"1\",\"flatten_data\":\"0\"},\"inputs\":[[3,0,0]]}],"
    "\"arg_nodes\":[0],\"node_row_ptr\":[0,1,2,3,4,5],\"heads\":[[4,0,0],[0,0,0]],"
    "\"attrs\":{\"storage_id\":[\"list_int\",[0,0,1,2,2]],"
    "\"shape\":[\"list_shape\",[[16384],[16384],[16384],[16384],[16384]]],"
    "\"device_index\":[\"list_int\",[1,1,4,4,4]],"
    "\"dltype\":[\"list_str\",[\"float32\",\"float32\",\"float32\",\"float32\",\"float32\"]]}}";

typedef struct zero_copy_t {
  hgr_graph_t* graph;
  hgr_executor_t* executor;
  hgr_opencl_device_t device[2]; /* of keys 1 and 4 */
  hgr_fault_shim_mark_t before;  /* the OpenCL objects before the test made any */
} zero_copy_t;

static void open_zero_copy(zero_copy_t* z) {
  memset(z, 0, sizeof(*z));
  z->before = hgr_fault_shim_mark();
  z->graph = load(zero_copy_json);
  z->executor = create(z->graph, specs[0], specs[1]);
  for (int k = 0; k < 2; ++k) {
    size_t index = 0;
    ASSERT_OK(hgr_instance_find_device(instance, specs[k], &index));
    ASSERT_OK(hgr_instance_device_opencl(instance, index, &z->device[k]));
  }
}

static void close_zero_copy(zero_copy_t* z) {
  hgr_executor_release(z->executor);
  hgr_graph_release(z->graph);
}

static void expect_relu(const float* got, const float* x, const char* what) {
  for (int e = 0; e < N; ++e)
    if (got[e] != (x[e] > 0 ? x[e] : 0)) fail_msg("%s: element %d is %g, relu(%g) expected", what, e, got[e], x[e]);
}

static void expect_equal(const float* got, const float* x, const char* what) {
  if (memcmp(got, x, N * sizeof(float)))
    fail_msg("%s: differs from what was expected (first element %g, expected %g)", what, got[0], x[0]);
}

/* Reads both outputs through the normal API and checks them. */
static void expect_outputs(hgr_executor_t* executor, const float* x, const char* what) {
  float got[N];
  ASSERT_OK(hgr_executor_get_output(executor, 0, got, sizeof(got)));
  expect_relu(got, x, what);
  ASSERT_OK(hgr_executor_get_output(executor, 1, got, sizeof(got)));
  expect_equal(got, x, what);
}

static cl_mem create_buffer(cl_context context, size_t bytes) {
  cl_int error = CL_SUCCESS;
  cl_mem mem = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, NULL, &error);
  assert_int_equal(error, CL_SUCCESS);
  return mem;
}

static cl_command_queue create_queue(const hgr_opencl_device_t* device) {
  cl_int error = CL_SUCCESS;
  cl_command_queue queue = clCreateCommandQueue(device->context, device->device, 0, &error);
  assert_int_equal(error, CL_SUCCESS);
  return queue;
}

static void read_buffer(const hgr_opencl_device_t* device, cl_mem mem, cl_event ready, float* data) {
  cl_command_queue queue = create_queue(device);
  assert_int_equal(clEnqueueReadBuffer(queue, mem, CL_TRUE, 0, N * sizeof(float), data, ready ? 1 : 0,
                                       ready ? &ready : NULL, NULL),
                   CL_SUCCESS);
  clReleaseCommandQueue(queue);
}

static void write_buffer(const hgr_opencl_device_t* device, cl_mem mem, const float* data) {
  cl_command_queue queue = create_queue(device);
  assert_int_equal(clEnqueueWriteBuffer(queue, mem, CL_TRUE, 0, N * sizeof(float), data, 0, NULL, NULL), CL_SUCCESS);
  clReleaseCommandQueue(queue);
}

static void host_bindings_follow_aliases_and_agree_with_the_normal_api(void** state) {
  (void)state;
  zero_copy_t z;
  open_zero_copy(&z);
  float* x = aligned_alloc(4096, N * sizeof(float));
  float* out = aligned_alloc(4096, N * sizeof(float));
  float* echo = aligned_alloc(4096, N * sizeof(float));
  random_floats(x, N, 1);
  ASSERT_OK(hgr_executor_bind_host(z.executor, HGR_INPUT, 0, x, N * sizeof(float)));
  ASSERT_OK(hgr_executor_bind_host(z.executor, HGR_OUTPUT, 0, out, N * sizeof(float)));
  ASSERT_OK(hgr_executor_bind_host(z.executor, HGR_OUTPUT, 1, echo, N * sizeof(float)));
  hgr_binding_kind_t kinds[3] = {hgr_executor_binding_kind(z.executor, HGR_INPUT, 0),
                                 hgr_executor_binding_kind(z.executor, HGR_OUTPUT, 0),
                                 hgr_executor_binding_kind(z.executor, HGR_OUTPUT, 1)};
  print_message("%s + %s: bindings x=%d out=%d echo=%d (2: zero copy, 3: copied)\n", specs[0], specs[1], kinds[0],
                kinds[1], kinds[2]);
  /* PoCL shares host memory: the input is used in place. The echo output shares x's
   * storage, which x's memory already is: it is copied out. */
  if (!strncmp(specs[0], "pocl", 4)) assert_int_equal(kinds[0], HGR_BINDING_HOST_ZERO_COPY);
  assert_int_equal(kinds[2], HGR_BINDING_HOST_COPY);
  ASSERT_STATUS(hgr_executor_set_input(z.executor, 0, x, N * sizeof(float)), HGR_STATUS_FAILED_PRECONDITION,
                "bound to the caller's memory", NULL);
  for (int run = 0; run < 3; ++run) {
    random_floats(x, N, 10 + run); /* the caller writes its memory between runs */
    ASSERT_OK(hgr_executor_run(z.executor));
    ASSERT_OK(hgr_executor_wait(z.executor));
    expect_relu(out, x, "output 0 through its host binding");
    expect_equal(echo, x, "output 1 (the input) through its host binding");
    expect_outputs(z.executor, x, "outputs through the normal API");
  }
  /* Rebinding between runs: the earlier memory keeps the earlier run's values. */
  float* out_b = malloc(N * sizeof(float) + 4); /* misaligned on purpose below */
  float* first = malloc(N * sizeof(float));
  memcpy(first, x, N * sizeof(float));
  ASSERT_OK(hgr_executor_bind_host(z.executor, HGR_OUTPUT, 0, (char*)out_b + 4, N * sizeof(float)));
  assert_int_equal(hgr_executor_binding_kind(z.executor, HGR_OUTPUT, 0), HGR_BINDING_HOST_COPY);
  random_floats(x, N, 99);
  ASSERT_OK(hgr_executor_run(z.executor));
  ASSERT_OK(hgr_executor_wait(z.executor));
  expect_relu(out, first, "the first output memory after rebinding");
  float second[N];
  memcpy(second, (char*)out_b + 4, sizeof(second));
  expect_relu(second, x, "the second output memory");
  expect_outputs(z.executor, x, "outputs through the normal API after rebinding");
  /* Unbound, the input must be set again; then the executor's own buffers work. */
  ASSERT_OK(hgr_executor_unbind(z.executor, HGR_INPUT, 0));
  ASSERT_STATUS(hgr_executor_run(z.executor), HGR_STATUS_FAILED_PRECONDITION, "never set", NULL);
  random_floats(x, N, 7);
  ASSERT_OK(hgr_executor_set_input(z.executor, 0, x, N * sizeof(float)));
  ASSERT_OK(hgr_executor_unbind(z.executor, HGR_OUTPUT, 0));
  ASSERT_OK(hgr_executor_run(z.executor));
  expect_outputs(z.executor, x, "outputs after unbinding");
  close_zero_copy(&z);
  ASSERT_OPENCL_BALANCED(&z.before);
  free(x);
  free(out);
  free(echo);
  free(out_b);
  free(first);
}

static void caller_buffers_are_the_storage_and_are_checked(void** state) {
  (void)state;
  zero_copy_t z;
  open_zero_copy(&z);
  float x[N], got[N];
  random_floats(x, N, 2);
  cl_mem in = create_buffer(z.device[0].context, N * sizeof(float));
  cl_mem out = create_buffer(z.device[1].context, N * sizeof(float));
  cl_mem small = create_buffer(z.device[1].context, N * sizeof(float) / 2);
  write_buffer(&z.device[0], in, x);
  ASSERT_OK(hgr_executor_bind_buffer(z.executor, HGR_INPUT, 0, in));
  ASSERT_OK(hgr_executor_bind_buffer(z.executor, HGR_OUTPUT, 0, out));
  assert_int_equal(hgr_executor_binding_kind(z.executor, HGR_OUTPUT, 0), HGR_BINDING_BUFFER);
  ASSERT_OK(hgr_executor_run(z.executor));
  ASSERT_OK(hgr_executor_wait(z.executor));
  read_buffer(&z.device[1], out, NULL, got);
  expect_relu(got, x, "the caller's output buffer");
  expect_outputs(z.executor, x, "outputs through the normal API with caller buffers");
  /* Output 1 is x's storage, bound to `in` already; another buffer of the context is
   * not made the storage (no run writes it) but receives a copy of x every run. */
  ASSERT_OK(hgr_executor_bind_buffer(z.executor, HGR_OUTPUT, 1, in));
  ASSERT_STATUS(hgr_executor_bind_buffer(z.executor, HGR_OUTPUT, 0, small), HGR_STATUS_INVALID_ARGUMENT, "bytes",
                NULL);
  if (z.device[0].context != z.device[1].context) {
    ASSERT_STATUS(hgr_executor_bind_buffer(z.executor, HGR_OUTPUT, 0, in), HGR_STATUS_INVALID_ARGUMENT,
                  "another context", NULL);
    cl_mem other = create_buffer(z.device[1].context, N * sizeof(float));
    clReleaseMemObject(other);
  } else {
    cl_mem other = create_buffer(z.device[0].context, N * sizeof(float));
    ASSERT_OK(hgr_executor_bind_buffer(z.executor, HGR_OUTPUT, 1, other));
    assert_int_equal(hgr_executor_binding_kind(z.executor, HGR_OUTPUT, 1), HGR_BINDING_DEVICE_COPY);
    ASSERT_OK(hgr_executor_run(z.executor));
    ASSERT_OK(hgr_executor_wait(z.executor));
    read_buffer(&z.device[0], other, NULL, got);
    for (int e = 0; e < N; ++e)
      if (got[e] != x[e]) fail_msg("output 1 copied into another buffer: element %d is %g, not %g", e, got[e], x[e]);
    ASSERT_OK(hgr_executor_unbind(z.executor, HGR_OUTPUT, 1));
    clReleaseMemObject(other);
  }
  /* The caller's buffers outlive the executor's use of them. */
  close_zero_copy(&z);
  read_buffer(&z.device[1], out, NULL, got);
  expect_relu(got, x, "the caller's output buffer after the executor's release");
  clReleaseMemObject(in);
  clReleaseMemObject(out);
  clReleaseMemObject(small);
  ASSERT_OPENCL_BALANCED(&z.before);
}

/* An output handed on as a device buffer: read by the caller's OpenCL code, and bound
 * as the input of a second executor whose keys are both on the output's device. */
static void exported_outputs_feed_opencl_and_another_executor(void** state) {
  (void)state;
  zero_copy_t z;
  open_zero_copy(&z);
  float x[N], got[N], relu_x[N];
  random_floats(x, N, 3);
  for (int e = 0; e < N; ++e) relu_x[e] = x[e] > 0 ? x[e] : 0;
  ASSERT_OK(hgr_executor_set_input(z.executor, 0, x, sizeof(x)));
  ASSERT_OK(hgr_executor_run(z.executor));
  hgr_device_buffer_t buffer;
  ASSERT_OK(hgr_executor_output_buffer(z.executor, 0, &buffer));
  assert_int_equal(buffer.bytes, sizeof(x));
  assert_ptr_equal(buffer.context, z.device[1].context);
  read_buffer(&z.device[1], buffer.mem, buffer.ready, got);
  expect_relu(got, x, "the exported output");

  hgr_executor_t* second = create(z.graph, specs[1], specs[1]);
  ASSERT_OK(hgr_executor_bind_buffer(second, HGR_INPUT, 0, buffer.mem));
  ASSERT_OK(hgr_executor_run(second));
  expect_outputs(second, relu_x, "the second executor fed the first's output");
  hgr_executor_release(second);
  hgr_device_buffer_release(&buffer);

  /* A fence's output buffer keeps that run's values while later runs go on. */
  hgr_fence_t* fence = NULL;
  ASSERT_OK(hgr_executor_run_async(z.executor, &fence));
  hgr_device_buffer_t kept;
  ASSERT_OK(hgr_fence_output_buffer(fence, 0, &kept));
  float y[N];
  random_floats(y, N, 4);
  ASSERT_OK(hgr_executor_set_input(z.executor, 0, y, sizeof(y)));
  ASSERT_OK(hgr_executor_run(z.executor));
  ASSERT_OK(hgr_fence_get_output(fence, 0, got, sizeof(got)));
  expect_relu(got, x, "the fence's output after a later run");
  hgr_fence_release(fence);
  ASSERT_OK(hgr_executor_wait(z.executor));
  read_buffer(&z.device[1], kept.mem, kept.ready, got);
  expect_relu(got, x, "the fence's exported output after a later run");
  expect_outputs(z.executor, y, "the latest run through the normal API");
  hgr_device_buffer_release(&kept);
  close_zero_copy(&z);
  ASSERT_OPENCL_BALANCED(&z.before);
}

/* Fences of runs started before the executor's release answer afterwards. */
static void fences_outlive_their_executor(void** state) {
  (void)state;
  zero_copy_t z;
  open_zero_copy(&z);
  float x[N], got[N];
  random_floats(x, N, 5);
  ASSERT_OK(hgr_executor_set_input(z.executor, 0, x, sizeof(x)));
  hgr_fence_t* first = NULL;
  hgr_fence_t* second = NULL;
  ASSERT_OK(hgr_executor_run_async(z.executor, &first));
  ASSERT_OK(hgr_executor_run_async(z.executor, &second));
  ASSERT_OK(hgr_fence_get_output(first, 0, got, sizeof(got)));
  expect_relu(got, x, "the first fence's output");
  close_zero_copy(&z);
  ASSERT_OK(hgr_fence_wait(first));
  ASSERT_OK(hgr_fence_wait(second));
  ASSERT_STATUS(hgr_fence_get_output(second, 0, got, sizeof(got)), HGR_STATUS_FAILED_PRECONDITION, "released", NULL);
  hgr_fence_release(first);
  hgr_fence_release(second);
  ASSERT_OPENCL_BALANCED(&z.before);
}

/* Unbinding ends the executor's use of the caller's memory: a fence holding an
 * output in it (output 1 is x itself) gets its copy before unbind returns, so the
 * caller may overwrite or free the memory at once (hgr_model_run frees its inputs
 * so; a copy still queued read them after free under ASan). */
static void unbinding_ends_the_use_of_the_callers_memory(void** state) {
  (void)state;
  zero_copy_t z;
  open_zero_copy(&z);
  float* x = aligned_alloc(4096, N * sizeof(float));
  float kept[N], got[N];
  random_floats(x, N, 21);
  memcpy(kept, x, sizeof(kept));
  ASSERT_OK(hgr_executor_bind_host(z.executor, HGR_INPUT, 0, x, N * sizeof(float)));
  print_message("%s: input bound as kind %d (2: zero copy)\n", specs[0],
                hgr_executor_binding_kind(z.executor, HGR_INPUT, 0));
  hgr_fence_t* fence = NULL;
  ASSERT_OK(hgr_executor_run_async(z.executor, &fence));
  ASSERT_OK(hgr_fence_wait(fence));
  ASSERT_OK(hgr_executor_unbind(z.executor, HGR_INPUT, 0));
  random_floats(x, N, 22); /* the caller's memory is its own again */
  free(x);
  ASSERT_OK(hgr_fence_get_output(fence, 1, got, sizeof(got)));
  expect_equal(got, kept, "the fence's output 1 (the input), after unbinding");
  ASSERT_OK(hgr_fence_get_output(fence, 0, got, sizeof(got)));
  expect_relu(got, kept, "the fence's output 0, after unbinding");
  hgr_fence_release(fence);
  close_zero_copy(&z);
  ASSERT_OPENCL_BALANCED(&z.before);
}

/* A device failure in run 2 of 3 in flight: run 1 completes, runs 2 and 3 fail. */
static void a_failure_mid_pipeline_fails_its_run_and_later_ones(void** state) {
  (void)state;
  zero_copy_t z;
  open_zero_copy(&z);
  float x[N], got[N];
  random_floats(x, N, 6);
  ASSERT_OK(hgr_executor_set_input(z.executor, 0, x, sizeof(x)));
  hgr_fence_t* fences[3] = {NULL, NULL, NULL};
  ASSERT_OK(hgr_executor_run_async(z.executor, &fences[0]));
  ASSERT_OK(hgr_fence_wait(fences[0]));
  ASSERT_OK(hgr_fence_get_output(fences[0], 0, got, sizeof(got)));
  expect_relu(got, x, "the run before the failure");
  unsigned long failed = hgr_fault_shim_failed_kernel_count();
  hgr_fault_shim_fail_kernel("hgr_relu_f32", CL_OUT_OF_RESOURCES); /* node 3 'relu' */
  ASSERT_OK(hgr_executor_run_async(z.executor, &fences[1]));
  hgr_fault_shim_fail_kernel(NULL, 0);
  assert_int_equal(hgr_fault_shim_failed_kernel_count(), failed + 1);
  ASSERT_OK(hgr_executor_run_async(z.executor, &fences[2]));
  ASSERT_STATUS(hgr_fence_wait(fences[1]), HGR_STATUS_DEVICE_FAILURE, "relu", NULL);
  hgr_status_t third = hgr_fence_wait(fences[2]);
  assert_true(third != HGR_OK);
  hgr_status_free(third);
  /* The completed run keeps its result; the executor refuses further work. */
  ASSERT_OK(hgr_fence_wait(fences[0]));
  ASSERT_STATUS(hgr_fence_get_output(fences[0], 0, got, sizeof(got)), HGR_STATUS_FAILED_PRECONDITION,
                "create a new one", NULL);
  for (int f = 0; f < 3; ++f) hgr_fence_release(fences[f]);
  close_zero_copy(&z);
  hgr_fault_shim_release_failed_events();
  ASSERT_OPENCL_BALANCED_AFTER_FAILURE(&z.before);
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s SPEC_KEY1 SPEC_KEY4 [PIPELINED_RUNS]\n", argv[0]);
    return 2;
  }
  specs[0] = argv[1];
  specs[1] = argv[2];
  if (argc > 3) total_runs = (uint32_t)strtoul(argv[3], NULL, 10);
  hgr_instance_options_t options;
  hgr_instance_options_init(&options);
  ASSERT_OK(hgr_instance_create(&options, &instance));
  hgr_test_require_devices(instance, specs, 2);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(pipelined_runs_each_match_their_own_reference),
      cmocka_unit_test(host_bindings_follow_aliases_and_agree_with_the_normal_api),
      cmocka_unit_test(caller_buffers_are_the_storage_and_are_checked),
      cmocka_unit_test(exported_outputs_feed_opencl_and_another_executor),
      cmocka_unit_test(fences_outlive_their_executor),
      cmocka_unit_test(unbinding_ends_the_use_of_the_callers_memory),
      cmocka_unit_test(a_failure_mid_pipeline_fails_its_run_and_later_ones),
  };
  int failed = cmocka_run_group_tests_name(specs[1], tests, NULL, NULL);
  hgr_instance_release(instance);
  return failed ? failed : hgr_fault_shim_exit_status(argv[0]);
}
