/* Several compute queues per device (executor option compute_queues): results do
 * not depend on the number of queues, nodes are put on queues by the documented
 * rule, and independent branches can overlap.
 *
 * The argument names the scenario:
 *   pocl-pair       random graphs over keys {1,4} -> pocl:0, pocl:1 (one context) with
 *                   1, 2 and 4 compute queues; out-of-range counts are refused
 *   pocl-rusticl    the same over pocl:0, rusticl:0 (two platforms)
 *   oclgrind-pocl   a random graph over oclgrind:0, pocl:0 with 4 queues: Oclgrind
 *                   keeps its single queue
 *   two-branches    two independent chains of dense layers on pocl:0 with 2 queues
 *                   and profiling: the chains go to different queues; how much their
 *                   execution overlapped is printed, never asserted (timings belong
 *                   in benchmarks)
 *
 * The fault shim counts OpenCL objects (fault_shim.h): each executor, and each failed
 * create, leaves as many as it found, and the program ends with none. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"
#include "graph_check.h"
#include "graphgen.h"
#include "ref_linalg.h"
#include "reference.h"
#include "testlib.h"
/* After testlib.h: its assertion macro needs cmocka. */
#include "fault_shim.h"

typedef struct scenario_t {
  const char* name;
  const char* specs[2]; /* for keys 1 and 4 */
  uint64_t sizes[4];    /* tensor sizes of the random graphs, in elements */
  size_t size_count;
  uint32_t graphs;      /* random graphs (seeds 1..graphs) per queue count */
  uint32_t op_count;
} scenario_t;

static const scenario_t scenarios[] = {
    {"pocl-pair", {"pocl:0", "pocl:1"}, {1, 13, 4096, 300000}, 4, 5, 30},
    {"pocl-rusticl", {"pocl:0", "rusticl:0"}, {1, 1000, 300000}, 3, 3, 14},
    {"oclgrind-pocl", {"oclgrind:0", "pocl:0"}, {1, 64, 1000}, 3, 1, 16},
    {"two-branches", {"pocl:0", "pocl:0"}, {0}, 0, 0, 0},
};

static const scenario_t* scenario;
static hgr_instance_t* instance;
static const int32_t keys[] = {1, 4};

/* ---- executors ------------------------------------------------------------------------ */

static hgr_graph_t* load(const char* json) {
  hgr_graph_t* graph = NULL;
  ASSERT_OK(hgr_graph_load_json(json, strlen(json), &graph));
  return graph;
}

static hgr_status_t create_executor(hgr_graph_t* graph, uint32_t compute_queues, bool profiling,
                                    bool plan_only, hgr_executor_t** out_executor) {
  hgr_device_binding_t bindings[2] = {{1, scenario->specs[0]}, {4, scenario->specs[1]}};
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  options.bindings = bindings;
  options.binding_count = graph->entries[0].device_key < 0 ? 1 : 2;
  options.compute_queues = compute_queues;
  options.profiling = profiling;
  options.plan_only = plan_only;
  return hgr_executor_create(instance, graph, &options, out_executor);
}

/* The compute queues of instance device `device`: 1 on a host-driven one. */
static uint32_t compute_queues_of(const hgr_executor_t* executor, size_t device) {
  uint32_t count = 0;
  for (size_t q = 0; q < hgr_executor_queue_count(executor); ++q) {
    hgr_queue_info_t info = hgr_executor_queue_info(executor, q);
    if (info.device_index == device && strcmp(info.role, "transfer") != 0) count++;
  }
  return count;
}

static bool is_transfer_queue(const hgr_executor_t* executor, uint32_t queue) {
  return strstr(hgr_executor_queue_info(executor, queue).role, "transfer") != NULL;
}

/* The instance device that runs node_id (that of its output). */
static size_t device_of_node(const hgr_executor_t* executor, const hgr_graph_t* graph, uint32_t node_id) {
  int32_t key = graph->entries[graph->node_row_ptr[node_id]].device_key;
  for (size_t k = 0; k < hgr_executor_key_count(executor); ++k)
    if (hgr_executor_key_binding(executor, k).key == key) return hgr_executor_key_binding(executor, k).device_index;
  fail_msg("node %u: key %d is not bound", node_id, key);
  return SIZE_MAX;
}

/* ---- the queue of every node, from the last run's profile ------------------------------ */

typedef struct placement_t {
  uint32_t* queue_of;   /* per node: the queue of its kernel commands; UINT32_MAX: none */
  uint32_t* level;      /* per node: 1 + the highest level of its inputs' producers */
  uint32_t spread;      /* levels on a device whose kernel nodes used more than one queue */
} placement_t;

static bool is_kernel_node(const hgr_graph_t* graph, uint32_t n) {
  const hgr__node_t* node = &graph->nodes[n];
  return node->is_op && strcmp(node->func_name, "__copy") != 0 && strcmp(node->func_name, "__nop") != 0;
}

/* Checks the queue rule on the last (profiled, waited-for) run: every command of a
 * kernel node on one compute queue of its device; every command of a copy node on a
 * transfer queue (on the destination: with several compute queues; with one, on
 * the compute queue), at least one on the destination device; and the kernel nodes of one
 * level on one device on min(nodes, compute queues) different queues. */
static void check_placement(const hgr_executor_t* executor, const hgr_graph_t* graph, const char* label,
                            placement_t* out) {
  uint32_t nodes = graph->node_count;
  out->queue_of = malloc(nodes * sizeof(uint32_t));
  out->level = calloc(nodes, sizeof(uint32_t));
  bool* on_destination = calloc(nodes, sizeof(bool));
  out->spread = 0;
  for (uint32_t n = 0; n < nodes; ++n) {
    out->queue_of[n] = UINT32_MAX;
    for (uint32_t i = 0; graph->nodes[n].is_op && i < graph->nodes[n].input_count; ++i) {
      uint32_t from = graph->nodes[n].inputs[i].node_id;
      if (out->level[from] + 1 > out->level[n]) out->level[n] = out->level[from] + 1;
    }
    if (graph->nodes[n].is_op && out->level[n] == 0) out->level[n] = 1;
  }
  for (size_t c = 0; c < hgr_executor_command_count(executor); ++c) {
    hgr_command_profile_t command;
    ASSERT_OK(hgr_executor_command_profile(executor, c, &command));
    uint32_t n = command.node_id;
    hgr_queue_info_t queue = hgr_executor_queue_info(executor, command.queue);
    if (!is_kernel_node(graph, n)) {
      /* The source side of a copy works on its device's transfer queue; the
       * destination side too with several compute queues, else on the compute queue. */
      size_t destination = device_of_node(executor, graph, n);
      bool on_destination_device = queue.device_index == destination;
      bool transfer = !on_destination_device || compute_queues_of(executor, destination) > 1;
      if (transfer ? !is_transfer_queue(executor, command.queue) : !strstr(queue.role, "compute"))
        fail_msg("%s: copy node %u '%s' has a command on queue %u (%s)", label, n, graph->nodes[n].name,
                 command.queue, queue.role);
      on_destination[n] |= on_destination_device;
      continue;
    }
    if (queue.device_index != device_of_node(executor, graph, n) || !strstr(queue.role, "compute"))
      fail_msg("%s: node %u '%s' has a kernel on queue %u (%s)", label, n, graph->nodes[n].name, command.queue,
               queue.role);
    if (out->queue_of[n] != UINT32_MAX && out->queue_of[n] != command.queue)
      fail_msg("%s: node %u '%s' has kernels on queues %u and %u", label, n, graph->nodes[n].name,
               out->queue_of[n], command.queue);
    out->queue_of[n] = command.queue;
  }
  for (uint32_t n = 0; n < nodes; ++n)
    if (graph->nodes[n].is_op && !strcmp(graph->nodes[n].func_name, "__copy") && !on_destination[n])
      fail_msg("%s: copy node %u '%s' has no command on its destination device", label, n,
               graph->nodes[n].name);
  /* Per device and level: how many kernel nodes, on how many distinct queues. */
  for (size_t d = 0; d < hgr_executor_device_count(executor); ++d) {
    size_t device = hgr_executor_device_usage(executor, d).device_index;
    uint32_t queues = compute_queues_of(executor, device);
    for (uint32_t level = 1; level <= nodes; ++level) {
      uint32_t count = 0, distinct = 0;
      for (uint32_t n = 0; n < nodes; ++n) {
        if (!is_kernel_node(graph, n) || out->level[n] != level || device_of_node(executor, graph, n) != device)
          continue;
        count++;
        bool seen = false;
        for (uint32_t m = 0; m < n && !seen; ++m)
          seen = is_kernel_node(graph, m) && out->level[m] == level && out->queue_of[m] == out->queue_of[n];
        distinct += !seen;
      }
      uint32_t expected = count < queues ? count : queues;
      if (distinct != expected)
        fail_msg("%s: %u kernel nodes of level %u on %s took %u queues, expected %u of its %u", label, count,
                 level, hgr_instance_device(instance, device)->spec, distinct, expected, queues);
      if (distinct > 1) out->spread++;
    }
  }
  free(on_destination);
}

static void placement_free(placement_t* placement) {
  free(placement->queue_of);
  free(placement->level);
}

/* ---- random graphs -------------------------------------------------------------------- */

typedef struct harness_t {
  char label[96];
  hgr_graph_t* graph;
  hgr_executor_t* executor;
  float** inputs;
  hgr_test_reference_t reference;
} harness_t;

static void set_inputs(harness_t* h, uint64_t seed) {
  ASSERT_OK(hgr_test_set_random_inputs(h->graph, h->executor, seed, h->inputs, &h->reference));
}

static void check_outputs(const harness_t* h, const hgr_test_reference_t* reference, uint32_t run,
                          bool skip_input_aliases) {
  char message[400];
  if (!hgr_test_check_outputs(h->executor, h->graph, reference, skip_input_aliases, message, sizeof(message)))
    fail_msg("%s, run %u: %s", h->label, run, message);
}

/* Three runs with new inputs (the profiled ones waited for, the others read while
 * in flight), then new inputs set while a run is in flight: both runs must give
 * their own inputs' results. Returns how many levels spread over several queues. */
static uint32_t run_random_graph(uint64_t seed, uint32_t compute_queues) {
  bool profiling = seed % 2 == 1 || compute_queues > 1;
  hgr_test_graph_options_t options = {.seed = seed, .op_count = scenario->op_count, .sizes = scenario->sizes,
                                      .size_count = scenario->size_count, .device_keys = keys,
                                      .device_key_count = 2};
  char* json = hgr_test_graph_generate(&options);
  assert_non_null(json);
  harness_t h = {0};
  snprintf(h.label, sizeof(h.label), "%s, seed %llu, %u compute queues", scenario->name,
           (unsigned long long)seed, compute_queues);
  h.graph = load(json);
  free(json);
  hgr_fault_shim_mark_t before = hgr_fault_shim_mark();
  ASSERT_OK(create_executor(h.graph, compute_queues, profiling, false, &h.executor));
  h.inputs = calloc(h.graph->arg_count + 1, sizeof(float*));
  uint32_t spread = 0;
  for (uint32_t run = 0; run < 3; ++run) {
    set_inputs(&h, seed * 1000 + run);
    ASSERT_OK(hgr_executor_run(h.executor));
    if (profiling) {
      ASSERT_OK(hgr_executor_wait(h.executor));
      placement_t placement;
      check_placement(h.executor, h.graph, h.label, &placement);
      spread = placement.spread;
      placement_free(&placement);
    }
    check_outputs(&h, &h.reference, run, false);
  }
  set_inputs(&h, seed * 1000 + 3);
  ASSERT_OK(hgr_executor_run(h.executor));
  hgr_test_reference_t in_flight = h.reference;
  memset(&h.reference, 0, sizeof(h.reference));
  set_inputs(&h, seed * 1000 + 4);
  check_outputs(&h, &in_flight, 3, true);
  hgr_test_reference_free(&in_flight);
  ASSERT_OK(hgr_executor_run(h.executor));
  check_outputs(&h, &h.reference, 4, false);
  ASSERT_OK(hgr_executor_wait(h.executor));
  hgr_test_reference_free(&h.reference);
  for (uint32_t i = 0; i < h.graph->arg_count; ++i) free(h.inputs[i]);
  free(h.inputs);
  hgr_executor_release(h.executor);
  ASSERT_OPENCL_BALANCED(&before);
  hgr_graph_release(h.graph);
  return spread;
}

static void random_graphs_match_the_reference_with_1_2_and_4_queues(void** state) {
  (void)state;
  static const uint32_t counts[] = {1, 2, 4};
  for (size_t c = 0; c < 3; ++c) {
    uint32_t spread = 0;
    for (uint64_t seed = 1; seed <= scenario->graphs; ++seed) spread += run_random_graph(seed, counts[c]);
    print_message("%s: %u graphs with %u compute queues match the reference; %u levels spread over several "
                  "queues\n", scenario->name, scenario->graphs, counts[c], spread);
    if (counts[c] == 1) assert_int_equal(spread, 0);
    else assert_true(spread > 0);
  }
}

static void compute_queue_counts_outside_1_to_16_are_refused(void** state) {
  (void)state;
  hgr_test_graph_options_t options = {.seed = 5, .op_count = 8, .sizes = scenario->sizes, .size_count = 1,
                                      .device_keys = keys, .device_key_count = 2};
  char* json = hgr_test_graph_generate(&options);
  hgr_graph_t* graph = load(json);
  free(json);
  hgr_fault_shim_mark_t before = hgr_fault_shim_mark();
  hgr_executor_t* executor = NULL;
  ASSERT_STATUS(create_executor(graph, 17, false, false, &executor), HGR_STATUS_INVALID_ARGUMENT,
                "compute_queues is 17", "1 to 16");
  assert_null(executor);
  ASSERT_STATUS(create_executor(graph, UINT32_MAX, false, true, &executor), HGR_STATUS_INVALID_ARGUMENT,
                "compute_queues is 4294967295");
  assert_null(executor);
  /* 0 means 1; 16 is the most: per device that many compute queues and a transfer queue. */
  ASSERT_OK(create_executor(graph, 0, false, true, &executor));
  assert_int_equal(hgr_executor_queue_count(executor), 2 * hgr_executor_device_count(executor));
  hgr_executor_release(executor);
  ASSERT_OK(create_executor(graph, 16, false, true, &executor));
  assert_int_equal(hgr_executor_queue_count(executor), 17 * hgr_executor_device_count(executor));
  hgr_executor_release(executor);
  ASSERT_OPENCL_BALANCED(&before);
  hgr_graph_release(graph);
}

/* ---- Oclgrind ------------------------------------------------------------------------- */

static void oclgrind_keeps_one_queue_whatever_the_count(void** state) {
  (void)state;
  uint32_t spread = run_random_graph(3, 4);
  hgr_test_graph_options_t options = {.seed = 3, .op_count = scenario->op_count, .sizes = scenario->sizes,
                                      .size_count = scenario->size_count, .device_keys = keys,
                                      .device_key_count = 2};
  char* json = hgr_test_graph_generate(&options);
  hgr_graph_t* graph = load(json);
  free(json);
  hgr_fault_shim_mark_t before = hgr_fault_shim_mark();
  hgr_executor_t* executor = NULL;
  ASSERT_OK(create_executor(graph, 4, false, true, &executor));
  size_t oclgrind = SIZE_MAX, pocl = SIZE_MAX;
  ASSERT_OK(hgr_instance_find_device(instance, "oclgrind:0", &oclgrind));
  ASSERT_OK(hgr_instance_find_device(instance, "pocl:0", &pocl));
  uint32_t oclgrind_queues = 0, pocl_compute = 0, pocl_transfer = 0;
  for (size_t q = 0; q < hgr_executor_queue_count(executor); ++q) {
    hgr_queue_info_t info = hgr_executor_queue_info(executor, q);
    if (info.device_index == oclgrind) {
      oclgrind_queues++;
      assert_string_equal(info.role, "compute+transfer");
    } else if (info.device_index == pocl) {
      pocl_compute += !strcmp(info.role, "compute");
      pocl_transfer += !strcmp(info.role, "transfer");
    }
  }
  print_message("oclgrind:0 has %u queue, pocl:0 %u compute + %u transfer; %u levels spread\n", oclgrind_queues,
                pocl_compute, pocl_transfer, spread);
  assert_int_equal(oclgrind_queues, 1);
  assert_int_equal(pocl_compute, 4);
  assert_int_equal(pocl_transfer, 1);
  hgr_executor_release(executor);
  ASSERT_OPENCL_BALANCED(&before);
  hgr_graph_release(graph);
}

/* ---- two branches --------------------------------------------------------------------- */

#define BRANCH_LAYERS 4
#define DIM 256 /* rows, in and units of every dense layer */

/* Inputs x, y [DIM, DIM] and w [DIM, DIM]; branch a: a1 = dense(x, w), a2 =
 * dense(a1, w), ...; branch b the same from y; the nodes of the two branches
 * interleaved; out = a4 + b4. Every entry has its own storage. */
static char* two_branch_json(void) {
  size_t capacity = 16384, used = 0;
  char* json = malloc(capacity);
  uint32_t node_count = 3 + 2 * BRANCH_LAYERS + 1;
#define APPEND(...) used += (size_t)snprintf(json + used, capacity - used, __VA_ARGS__)
  APPEND("{\"nodes\":[{\"op\":\"null\",\"name\":\"x\",\"inputs\":[]},{\"op\":\"null\",\"name\":\"w\",\"inputs\":[]},"
         "{\"op\":\"null\",\"name\":\"y\",\"inputs\":[]}");
  for (uint32_t layer = 1; layer <= BRANCH_LAYERS; ++layer)
    for (uint32_t branch = 0; branch < 2; ++branch) {
      /* node of branch b, layer l: 3 + 2 (l - 1) + b; its input: the layer before, or x / y */
      uint32_t from = layer == 1 ? (branch ? 2 : 0) : 3 + 2 * (layer - 2) + branch;
      APPEND(",{\"op\":\"tvm_op\",\"name\":\"%c%u\",\"attrs\":{\"func_name\":\"dense\",\"num_inputs\":\"2\","
             "\"num_outputs\":\"1\",\"flatten_data\":\"0\",\"units\":\"%d\"},\"inputs\":[[%u,0,0],[1,0,0]]}",
             branch ? 'b' : 'a', layer, DIM, from);
    }
  APPEND(",{\"op\":\"tvm_op\",\"name\":\"out\",\"attrs\":{\"func_name\":\"add\",\"num_inputs\":\"2\","
         "\"num_outputs\":\"1\",\"flatten_data\":\"0\"},\"inputs\":[[%u,0,0],[%u,0,0]]}],",
         node_count - 3, node_count - 2);
  APPEND("\"arg_nodes\":[0,1,2],\"node_row_ptr\":[");
  for (uint32_t n = 0; n <= node_count; ++n) APPEND("%s%u", n ? "," : "", n);
  APPEND("],\"heads\":[[%u,0,0]],\"attrs\":{\"storage_id\":[\"list_int\",[", node_count - 1);
  for (uint32_t n = 0; n < node_count; ++n) APPEND("%s%u", n ? "," : "", n);
  APPEND("]],\"shape\":[\"list_shape\",[");
  for (uint32_t n = 0; n < node_count; ++n) APPEND("%s[%d,%d]", n ? "," : "", DIM, DIM);
  APPEND("]],\"dltype\":[\"list_str\",[");
  for (uint32_t n = 0; n < node_count; ++n) APPEND("%s\"float32\"", n ? "," : "");
  APPEND("]]}}");
#undef APPEND
  assert_true(used < capacity);
  return json;
}

/* out and a bound on its float32 error: per layer, DIM * FLT_EPSILON times the sum
 * of |terms| (carried through the chain on absolute values), over 4 layers and the add. */
static void two_branch_reference(const float* x, const float* w, const float* y, float* out, float* bound) {
  size_t n = (size_t)DIM * DIM;
  float *a = malloc(n * 4), *b = malloc(n * 4), *t = malloc(n * 4), *abs_a = malloc(n * 4), *abs_b = malloc(n * 4),
        *abs_w = malloc(n * 4);
  for (size_t i = 0; i < n; ++i) {
    a[i] = x[i];
    b[i] = y[i];
    abs_a[i] = fabsf(x[i]);
    abs_b[i] = fabsf(y[i]);
    abs_w[i] = fabsf(w[i]);
  }
  for (int layer = 0; layer < BRANCH_LAYERS; ++layer) {
    hgr_ref_dense(a, w, NULL, t, DIM, DIM, DIM);
    memcpy(a, t, n * 4);
    hgr_ref_dense(b, w, NULL, t, DIM, DIM, DIM);
    memcpy(b, t, n * 4);
    hgr_ref_dense(abs_a, abs_w, NULL, t, DIM, DIM, DIM);
    memcpy(abs_a, t, n * 4);
    hgr_ref_dense(abs_b, abs_w, NULL, t, DIM, DIM, DIM);
    memcpy(abs_b, t, n * 4);
  }
  for (size_t i = 0; i < n; ++i) {
    out[i] = a[i] + b[i];
    bound[i] = 2.0f * BRANCH_LAYERS * DIM * FLT_EPSILON * (abs_a[i] + abs_b[i]) + FLT_MIN;
  }
  free(a);
  free(b);
  free(t);
  free(abs_a);
  free(abs_b);
  free(abs_w);
}

typedef struct window_t {
  uint64_t start, end; /* device clock, ns */
  uint64_t busy;       /* sum of the kernels' durations */
} window_t;

/* Runs the two-branch graph with compute_queues queues and profiling; checks the
 * output, and returns each branch's queue (the same for all its layers) and kernel
 * windows, and the device time during which kernels of both branches ran at once. */
static void run_two_branches(uint32_t compute_queues, const float* const* inputs, const float* expected,
                             const float* bound, uint32_t out_queue[2], window_t out_window[2],
                             uint64_t* out_concurrent_ns) {
  char* json = two_branch_json();
  hgr_graph_t* graph = load(json);
  free(json);
  hgr_fault_shim_mark_t before = hgr_fault_shim_mark();
  hgr_executor_t* executor = NULL;
  ASSERT_OK(create_executor(graph, compute_queues, true, false, &executor));
  size_t bytes = (size_t)DIM * DIM * sizeof(float);
  for (size_t i = 0; i < 3; ++i) ASSERT_OK(hgr_executor_set_input(executor, i, inputs[i], bytes));
  /* The first run compiles PoCL's kernels at their first launch; the second is profiled. */
  for (int run = 0; run < 2; ++run) {
    ASSERT_OK(hgr_executor_run(executor));
    ASSERT_OK(hgr_executor_wait(executor));
  }
  float* got = malloc(bytes);
  ASSERT_OK(hgr_executor_get_output(executor, 0, got, bytes));
  char message[200];
  if (!hgr_test_compare(got, expected, bound, (uint64_t)DIM * DIM, message, sizeof(message)))
    fail_msg("two branches, %u compute queues: %s", compute_queues, message);
  free(got);

  size_t count = hgr_executor_command_count(executor);
  hgr_command_profile_t* kernels = calloc(count + 1, sizeof(*kernels));
  uint32_t* branch_of = calloc(count + 1, sizeof(uint32_t));
  size_t kernel_count = 0;
  for (int b = 0; b < 2; ++b) {
    out_queue[b] = UINT32_MAX;
    out_window[b] = (window_t){UINT64_MAX, 0, 0};
  }
  for (size_t c = 0; c < count; ++c) {
    hgr_command_profile_t command;
    ASSERT_OK(hgr_executor_command_profile(executor, c, &command));
    const char* name = graph->nodes[command.node_id].name;
    if (command.kind != HGR_COMMAND_KERNEL || (name[0] != 'a' && name[0] != 'b')) continue;
    uint32_t b = name[0] == 'b';
    if (out_queue[b] != UINT32_MAX && out_queue[b] != command.queue)
      fail_msg("branch %c is on queues %u and %u", 'a' + (int)b, out_queue[b], command.queue);
    out_queue[b] = command.queue;
    window_t* window = &out_window[b];
    if (command.start_ns < window->start) window->start = command.start_ns;
    if (command.end_ns > window->end) window->end = command.end_ns;
    window->busy += command.end_ns - command.start_ns;
    branch_of[kernel_count] = b;
    kernels[kernel_count++] = command;
  }
  /* Kernels on one in-order queue never overlap each other, so summing the pairwise
   * intersections of a's and b's kernels counts each instant once. */
  *out_concurrent_ns = 0;
  for (size_t i = 0; i < kernel_count; ++i)
    for (size_t j = 0; j < kernel_count; ++j) {
      if (branch_of[i] != 0 || branch_of[j] != 1) continue;
      uint64_t from = kernels[i].start_ns > kernels[j].start_ns ? kernels[i].start_ns : kernels[j].start_ns;
      uint64_t to = kernels[i].end_ns < kernels[j].end_ns ? kernels[i].end_ns : kernels[j].end_ns;
      if (to > from) *out_concurrent_ns += to - from;
    }
  free(kernels);
  free(branch_of);
  hgr_executor_release(executor);
  ASSERT_OPENCL_BALANCED(&before);
  hgr_graph_release(graph);
}

static void two_independent_branches_go_to_different_queues(void** state) {
  (void)state;
  size_t n = (size_t)DIM * DIM;
  float* inputs[3];
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 42);
  for (int i = 0; i < 3; ++i) {
    inputs[i] = malloc(n * sizeof(float));
    /* Weights of 1/sqrt(DIM) keep the values near 1 through the layers. */
    float scale = i == 1 ? 1.0f / 16.0f : 1.0f;
    for (size_t e = 0; e < n; ++e) inputs[i][e] = hgr_test_rng_float(&rng, -scale, scale);
  }
  float* expected = malloc(n * sizeof(float));
  float* bound = malloc(n * sizeof(float));
  two_branch_reference(inputs[0], inputs[1], inputs[2], expected, bound);
  for (uint32_t queues = 1; queues <= 2; ++queues) {
    uint32_t queue[2];
    window_t window[2];
    uint64_t concurrent = 0;
    run_two_branches(queues, (const float* const*)inputs, expected, bound, queue, window, &concurrent);
    uint64_t from = window[0].start > window[1].start ? window[0].start : window[1].start;
    uint64_t to = window[0].end < window[1].end ? window[0].end : window[1].end;
    uint64_t first = window[0].start < window[1].start ? window[0].start : window[1].start;
    uint64_t last = window[0].end > window[1].end ? window[0].end : window[1].end;
    print_message("%u compute queue%s: branch a on queue %u, %.2f ms of kernels in a window of %.2f ms; branch b on "
                  "queue %u, %.2f ms in %.2f ms; the windows overlap by %.2f ms; kernels of both ran at once for "
                  "%.2f ms; both branches took %.2f ms\n",
                  queues, queues > 1 ? "s" : "", queue[0], window[0].busy / 1e6,
                  (window[0].end - window[0].start) / 1e6, queue[1], window[1].busy / 1e6,
                  (window[1].end - window[1].start) / 1e6, to > from ? (to - from) / 1e6 : 0.0, concurrent / 1e6,
                  (last - first) / 1e6);
    if (queues == 1) assert_int_equal(queue[0], queue[1]);
    else assert_int_not_equal(queue[0], queue[1]);
  }
  for (int i = 0; i < 3; ++i) free(inputs[i]);
  free(expected);
  free(bound);
}

/* ---- main ----------------------------------------------------------------------------- */

int main(int argc, char** argv) {
  const char* name = argc > 1 ? argv[1] : "";
  for (size_t s = 0; s < sizeof(scenarios) / sizeof(scenarios[0]); ++s)
    if (!strcmp(scenarios[s].name, name)) scenario = &scenarios[s];
  if (!scenario) {
    fprintf(stderr, "usage: %s pocl-pair|pocl-rusticl|oclgrind-pocl|two-branches\n", argv[0]);
    return 2;
  }
  hgr_status_t status = hgr_instance_create(NULL, &instance);
  if (status) {
    char* text = hgr_status_to_string(status);
    fprintf(stderr, "hgr_instance_create: %s\n", text);
    free(text);
    hgr_status_free(status);
    return 1;
  }
  hgr_test_require_devices(instance, scenario->specs, 2);
  int failed;
  if (!strcmp(name, "two-branches")) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(two_independent_branches_go_to_different_queues)};
    failed = cmocka_run_group_tests_name("multiqueue two-branches", tests, NULL, NULL);
  } else if (!strcmp(name, "oclgrind-pocl")) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(oclgrind_keeps_one_queue_whatever_the_count)};
    failed = cmocka_run_group_tests_name("multiqueue oclgrind-pocl", tests, NULL, NULL);
  } else {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(random_graphs_match_the_reference_with_1_2_and_4_queues),
        cmocka_unit_test(compute_queue_counts_outside_1_to_16_are_refused),
    };
    failed = _cmocka_run_group_tests(scenario->name, tests, 2, NULL, NULL);
  }
  hgr_instance_release(instance);
  return failed ? failed : hgr_fault_shim_exit_status(argv[0]);
}
