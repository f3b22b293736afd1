/* The cost-based policies on hand-made problems and cost models (no devices): the
 * simulation of one run, AUTO (small nodes stay off a device with a large launch
 * cost, heavy branches spread over equal devices, never predicted worse than the
 * best single device on random DAGs, rules respected) and STAGES (contiguous,
 * balanced as well as the best split, rules respected, nodes a stage's device
 * cannot run left to the caller's fallback). */
#include <math.h>
#include <string.h>

#include "graph_internal.h"
#include "place_internal.h"
#include "testlib.h"

/* cmocka 1.1 has no assert_double_equal */
#define assert_double_equal(a, b, epsilon)                                                     \
  do {                                                                                         \
    double a_ = (a), b_ = (b);                                                                 \
    if (!(fabs(a_ - b_) <= (epsilon))) fail_msg("%s = %.9g, expected %.9g", #a, a_, b_);      \
  } while (0)

/* ---- graphs: float32 vectors, each node's output its own storage ----------------- */

static uint32_t add_node(hgr_graph_t* graph, const char* func_name, const uint32_t* inputs, uint32_t count,
                         int64_t elements) {
  hgr__entry_ref_t refs[8];
  assert_true(count <= 8);
  for (uint32_t k = 0; k < count; ++k) refs[k] = (hgr__entry_ref_t){inputs[k], 0};
  hgr__entry_t output;
  memset(&output, 0, sizeof(output));
  ASSERT_OK(hgr_dtype_parse("float32", &output.dtype));
  output.ndim = 1;
  output.shape[0] = elements;
  output.storage_id = graph->node_count;
  output.device_key = -1;
  char name[32];
  snprintf(name, sizeof(name), "n%u", graph->node_count);
  uint32_t node_id = 0;
  ASSERT_OK(hgr__graph_edit_append(graph, name, func_name, func_name ? refs : NULL, count, NULL, 0, &output, 1,
                                   &node_id));
  return node_id;
}

static uint32_t add_input(hgr_graph_t* graph, int64_t elements) { return add_node(graph, NULL, NULL, 0, elements); }

static hgr_graph_t* new_graph(void) {
  hgr_graph_t* graph = NULL;
  ASSERT_OK(hgr__graph_edit_new(hgr_allocator_system(), &graph));
  return graph;
}

static void finish(hgr_graph_t* graph, uint32_t head) {
  ASSERT_OK(hgr__graph_edit_add_head(graph, (hgr__entry_ref_t){head, 0}));
  ASSERT_OK(hgr__graph_edit_finish(graph));
}

/* ---- problems and models -------------------------------------------------------------- */

typedef struct fixture_t {
  hgr_graph_t* graph;
  hgr__place_problem_t problem;
  hgr__cost_model_t model;
  uint32_t* slots;
  uint32_t* own_timeline; /* model.timeline when a test gives one */
} fixture_t;

/* Every device can run every node; costs 0, copies free until set. */
static void fixture_init(fixture_t* f, hgr_graph_t* graph, size_t devices) {
  memset(f, 0, sizeof(*f));
  f->graph = graph;
  uint32_t nodes = graph->node_count;
  f->problem.graph = graph;
  f->problem.device_count = devices;
  f->problem.devices = calloc(devices, sizeof(size_t));
  for (size_t d = 0; d < devices; ++d) f->problem.devices[d] = d;
  f->problem.can_run = calloc((size_t)nodes * devices, sizeof(bool));
  f->problem.cannot_reason = calloc((size_t)nodes * devices, sizeof(char*));
  f->problem.fixed = calloc(nodes, sizeof(uint32_t));
  for (size_t i = 0; i < (size_t)nodes * devices; ++i) f->problem.can_run[i] = true;
  for (uint32_t n = 0; n < nodes; ++n) f->problem.fixed[n] = HGR__NO_DEVICE;
  f->model.device_count = devices;
  f->model.node_count = nodes;
  f->model.node_ms = calloc((size_t)nodes * devices, sizeof(double));
  f->model.copy_latency_ms = calloc(devices * devices, sizeof(double));
  f->model.copy_ms_per_byte = calloc(devices * devices, sizeof(double));
  f->slots = calloc(nodes, sizeof(uint32_t));
  for (uint32_t n = 0; n < nodes; ++n) f->slots[n] = HGR__NO_DEVICE;
}

static void fixture_free(fixture_t* f) {
  free(f->problem.devices);
  free(f->problem.can_run);
  free(f->problem.cannot_reason);
  free(f->problem.fixed);
  free(f->model.node_ms);
  free(f->model.copy_latency_ms);
  free(f->model.copy_ms_per_byte);
  free(f->own_timeline);
  free(f->slots);
  hgr_graph_release(f->graph);
}

static void set_cost(fixture_t* f, uint32_t node, size_t slot, double ms) {
  f->model.node_ms[(size_t)node * f->problem.device_count + slot] = ms;
}

/* Every op node on slot: ms each; inputs stay free. */
static void set_device_cost(fixture_t* f, size_t slot, double ms) {
  for (uint32_t n = 0; n < f->graph->node_count; ++n)
    if (f->graph->nodes[n].is_op) set_cost(f, n, slot, ms);
}

static void set_copy(fixture_t* f, size_t from, size_t to, double latency_ms, double ms_per_byte) {
  f->model.copy_latency_ms[from * f->problem.device_count + to] = latency_ms;
  f->model.copy_ms_per_byte[from * f->problem.device_count + to] = ms_per_byte;
}

static void cannot_run(fixture_t* f, uint32_t node, size_t slot) {
  f->problem.can_run[(size_t)node * f->problem.device_count + slot] = false;
  set_cost(f, node, slot, INFINITY);
}

static uint32_t nodes_on(const fixture_t* f, uint32_t slot) {
  uint32_t count = 0;
  for (uint32_t n = 0; n < f->graph->node_count; ++n) count += f->graph->nodes[n].is_op && f->slots[n] == slot;
  return count;
}

/* The assignment with every unfixed op node on slot (fixed ones where fixed). */
static void single_device(const fixture_t* f, uint32_t slot, const uint32_t* fixed, uint32_t* out) {
  for (uint32_t n = 0; n < f->graph->node_count; ++n)
    out[n] = !f->graph->nodes[n].is_op ? HGR__NO_DEVICE : fixed && fixed[n] != HGR__NO_DEVICE ? fixed[n] : slot;
}

/* ---- the simulation -------------------------------------------------------------------------- */

/* x -> a (slot 0, 1 ms) -> b, c (slot 1, 2 ms each) -> d = add(b, c) (slot 1, 1 ms):
 * a's value crosses once, though two nodes read it there. */
static void predict_counts_one_copy_per_value_and_device(void** state) {
  (void)state;
  hgr_graph_t* graph = new_graph();
  uint32_t x = add_input(graph, 1000);
  uint32_t a = add_node(graph, "relu", &x, 1, 1000);
  uint32_t b = add_node(graph, "exp", &a, 1, 1000);
  uint32_t c = add_node(graph, "tanh", &a, 1, 1000);
  uint32_t bc[2] = {b, c};
  uint32_t d = add_node(graph, "add", bc, 2, 1000);
  finish(graph, d);
  fixture_t f;
  fixture_init(&f, graph, 2);
  set_cost(&f, a, 0, 1.0);
  set_cost(&f, b, 1, 2.0);
  set_cost(&f, c, 1, 2.0);
  set_cost(&f, d, 1, 1.0);
  set_copy(&f, 0, 1, 0.5, 0.001); /* 4000 bytes: 4.5 ms */
  f.slots[a] = 0;
  f.slots[b] = f.slots[c] = f.slots[d] = 1;
  double busy[2], node_ms[5];
  double ms = hgr__schedule_predict(&f.problem, &f.model, f.slots, busy, node_ms);
  assert_double_equal(ms, 1.0 + 4.5 + 2.0 + 2.0 + 1.0, 1e-9);
  assert_double_equal(busy[0], 1.0, 1e-9);
  assert_double_equal(busy[1], 4.5 + 5.0, 1e-9);
  assert_double_equal(node_ms[x], 0.0, 1e-12);
  assert_double_equal(node_ms[b], 2.0, 1e-12);
  /* an unassigned op node has no predicted time */
  f.slots[c] = HGR__NO_DEVICE;
  assert_true(isinf(hgr__schedule_predict(&f.problem, &f.model, f.slots, NULL, NULL)));
  fixture_free(&f);
}

/* x on slot 0 and 1: the input is written where its first consumer runs, and
 * copied to the other device once. */
static void predict_writes_inputs_where_their_first_consumer_runs(void** state) {
  (void)state;
  hgr_graph_t* graph = new_graph();
  uint32_t x = add_input(graph, 250);
  uint32_t a = add_node(graph, "relu", &x, 1, 250);
  uint32_t b = add_node(graph, "exp", &x, 1, 250);
  uint32_t ab[2] = {a, b};
  uint32_t c = add_node(graph, "add", ab, 2, 250);
  finish(graph, c);
  fixture_t f;
  fixture_init(&f, graph, 2);
  set_device_cost(&f, 0, 1.0);
  set_device_cost(&f, 1, 1.0);
  set_copy(&f, 0, 1, 3.0, 0.0);
  set_copy(&f, 1, 0, 3.0, 0.0);
  f.slots[a] = 1;
  f.slots[b] = 0;
  f.slots[c] = 1;
  /* x lives on 1 (a's device); b waits for x's copy to 0 (3), runs (1); c waits
   * for b's copy to 1 (3) and runs (1) */
  assert_double_equal(hgr__schedule_predict(&f.problem, &f.model, f.slots, NULL, NULL), 8.0, 1e-9);
  fixture_free(&f);
}

/* ---- AUTO --------------------------------------------------------------------------------------- */

/* 40 steps of prev -> relu, exp -> add: small nodes (10 us on pocl, 0.35 ms a launch
 * on rusticl, 30 us a copy between them). */
static void small_nodes_stay_off_a_device_with_a_large_launch_cost(void** state) {
  (void)state;
  hgr_graph_t* graph = new_graph();
  uint32_t prev = add_input(graph, 256);
  for (int step = 0; step < 40; ++step) {
    uint32_t a = add_node(graph, "relu", &prev, 1, 256);
    uint32_t b = add_node(graph, "exp", &prev, 1, 256);
    uint32_t ab[2] = {a, b};
    prev = add_node(graph, "add", ab, 2, 256);
  }
  finish(graph, prev);
  fixture_t f;
  fixture_init(&f, graph, 3); /* pocl:0, pocl:1, rusticl:0 */
  set_device_cost(&f, 0, 0.010);
  set_device_cost(&f, 1, 0.010);
  set_device_cost(&f, 2, 0.350);
  for (size_t a = 0; a < 3; ++a)
    for (size_t b = 0; b < 3; ++b)
      if (a != b) set_copy(&f, a, b, a < 2 && b < 2 ? 0.005 : 0.030, 1e-7);
  uint32_t best_slot = 0;
  double best_ms = 0.0;
  ASSERT_OK(hgr__schedule_auto(&f.problem, &f.model, f.slots, &best_slot, &best_ms, NULL));
  assert_int_equal(nodes_on(&f, 2), 0);
  assert_int_equal(best_slot, 0);
  assert_double_equal(best_ms, 120 * 0.010, 1e-9);
  double ms = hgr__schedule_predict(&f.problem, &f.model, f.slots, NULL, NULL);
  assert_true(ms <= best_ms);
  print_message("small nodes: predicted %.3f ms, best single device %.3f ms, %u on pocl:0, %u on pocl:1\n", ms,
                best_ms, nodes_on(&f, 0), nodes_on(&f, 1));
  /* inputs are left for the caller to put where their first consumer runs */
  assert_int_equal(f.slots[0], HGR__NO_DEVICE);
  fixture_free(&f);
}

/* x -> two chains of 5 heavy nodes (10 ms each) -> add: on two equal devices both
 * are used, and the prediction is about half the single device's. */
static void heavy_independent_branches_use_both_equal_devices(void** state) {
  (void)state;
  hgr_graph_t* graph = new_graph();
  uint32_t x = add_input(graph, 1 << 16);
  uint32_t left = x, right = x;
  for (int i = 0; i < 5; ++i) {
    left = add_node(graph, "conv", &left, 1, 1 << 16);
    right = add_node(graph, "conv", &right, 1, 1 << 16);
  }
  uint32_t both[2] = {left, right};
  uint32_t sum = add_node(graph, "add", both, 2, 1 << 16);
  finish(graph, sum);
  fixture_t f;
  fixture_init(&f, graph, 2);
  set_device_cost(&f, 0, 10.0);
  set_device_cost(&f, 1, 10.0);
  set_cost(&f, sum, 0, 0.1);
  set_cost(&f, sum, 1, 0.1);
  set_copy(&f, 0, 1, 0.01, 1e-7);
  set_copy(&f, 1, 0, 0.01, 1e-7);
  uint32_t best_slot = 0;
  double best_ms = 0.0;
  ASSERT_OK(hgr__schedule_auto(&f.problem, &f.model, f.slots, &best_slot, &best_ms, NULL));
  assert_true(nodes_on(&f, 0) > 0);
  assert_true(nodes_on(&f, 1) > 0);
  double ms = hgr__schedule_predict(&f.problem, &f.model, f.slots, NULL, NULL);
  print_message("heavy branches: predicted %.3f ms, best single device %.3f ms\n", ms, best_ms);
  assert_double_equal(best_ms, 100.1, 1e-9);
  assert_true(ms < 0.6 * best_ms);
  fixture_free(&f);
}

/* x -> a (10 ms) and b (0.3 ms) -> add: moving b to the second device would save
 * 3%, less than AUTO's margin for a split, so everything stays on one device; at
 * 3 ms, b moves. */
static void auto_splits_only_for_a_clear_gain(void** state) {
  (void)state;
  for (int heavy_b = 0; heavy_b < 2; ++heavy_b) {
    hgr_graph_t* graph = new_graph();
    uint32_t x = add_input(graph, 64);
    uint32_t a = add_node(graph, "conv", &x, 1, 64);
    uint32_t b = add_node(graph, "relu", &x, 1, 64);
    uint32_t ab[2] = {a, b};
    uint32_t sum = add_node(graph, "add", ab, 2, 64);
    finish(graph, sum);
    fixture_t f;
    fixture_init(&f, graph, 2);
    for (size_t d = 0; d < 2; ++d) {
      set_cost(&f, a, d, 10.0);
      set_cost(&f, b, d, heavy_b ? 3.0 : 0.3);
      set_cost(&f, sum, d, 0.1);
    }
    set_copy(&f, 0, 1, 0.01, 0.0);
    set_copy(&f, 1, 0, 0.01, 0.0);
    ASSERT_OK(hgr__schedule_auto(&f.problem, &f.model, f.slots, NULL, NULL, NULL));
    assert_int_equal(nodes_on(&f, 1), heavy_b ? 1 : 0);
    fixture_free(&f);
  }
}

/* The heavy branches on two devices that share one processor (two CPU devices):
 * split, they run one after the other, so AUTO keeps one device. */
static void devices_sharing_a_processor_do_not_overlap(void** state) {
  (void)state;
  hgr_graph_t* graph = new_graph();
  uint32_t x = add_input(graph, 1024);
  uint32_t left = add_node(graph, "conv", &x, 1, 1024);
  uint32_t right = add_node(graph, "conv", &x, 1, 1024);
  uint32_t both[2] = {left, right};
  uint32_t sum = add_node(graph, "add", both, 2, 1024);
  finish(graph, sum);
  fixture_t f;
  fixture_init(&f, graph, 2);
  set_device_cost(&f, 0, 10.0);
  set_device_cost(&f, 1, 10.0);
  uint32_t timeline[2] = {0, 0};
  f.model.timeline = timeline;
  f.slots[left] = 0;
  f.slots[right] = 1;
  f.slots[sum] = 0;
  assert_double_equal(hgr__schedule_predict(&f.problem, &f.model, f.slots, NULL, NULL), 30.0, 1e-9);
  f.slots[left] = f.slots[right] = f.slots[sum] = HGR__NO_DEVICE;
  ASSERT_OK(hgr__schedule_auto(&f.problem, &f.model, f.slots, NULL, NULL, NULL));
  assert_int_equal(nodes_on(&f, 1), 0);
  /* on two timelines the branches overlap */
  f.model.timeline = NULL;
  f.slots[left] = 0;
  f.slots[right] = 1;
  f.slots[sum] = 0;
  assert_double_equal(hgr__schedule_predict(&f.problem, &f.model, f.slots, NULL, NULL), 20.0, 1e-9);
  fixture_free(&f);
}

/* A random DAG: inputs, then op nodes reading 1 to 3 earlier values (fan-out and
 * several heads included); sizes from 4 bytes to 4 MiB. */
static hgr_graph_t* random_dag(hgr_test_rng_t* rng) {
  hgr_graph_t* graph = new_graph();
  uint32_t inputs = 1 + hgr_test_rng_below(rng, 3);
  uint32_t ops = 2 + hgr_test_rng_below(rng, 30);
  for (uint32_t i = 0; i < inputs; ++i) add_input(graph, 1 + hgr_test_rng_below(rng, 1 << 20));
  for (uint32_t o = 0; o < ops; ++o) {
    uint32_t count = 1 + hgr_test_rng_below(rng, 3), reads[3];
    for (uint32_t k = 0; k < count; ++k) reads[k] = hgr_test_rng_below(rng, graph->node_count);
    add_node(graph, "op", reads, count, 1 + hgr_test_rng_below(rng, 1 << 20));
  }
  /* the last node and a random other op node are outputs */
  ASSERT_OK(hgr__graph_edit_add_head(graph, (hgr__entry_ref_t){inputs + hgr_test_rng_below(rng, ops - 1), 0}));
  finish(graph, graph->node_count - 1);
  return graph;
}

/* Random costs per device (some devices much slower, some unable to run a node),
 * random copy costs; with fixed_rules, some nodes fixed by rules. */
static void random_problem(fixture_t* f, hgr_test_rng_t* rng, bool fixed_rules) {
  hgr_graph_t* graph = random_dag(rng);
  size_t devices = 2 + hgr_test_rng_below(rng, 3);
  fixture_init(f, graph, devices);
  for (size_t d = 0; d < devices; ++d) {
    double speed = hgr_test_rng_below(rng, 4) == 0 ? 20.0 : 1.0;
    double launch = hgr_test_rng_float(rng, 0.0f, 0.4f);
    for (uint32_t n = 0; n < graph->node_count; ++n) {
      if (!graph->nodes[n].is_op) continue;
      if (d > 0 && hgr_test_rng_below(rng, 10) == 0) cannot_run(f, n, d);
      else set_cost(f, n, d, launch + speed * hgr_test_rng_float(rng, 0.001f, 5.0f));
    }
    for (size_t e = 0; e < devices; ++e)
      if (d != e) set_copy(f, d, e, hgr_test_rng_float(rng, 0.0f, 0.2f), hgr_test_rng_float(rng, 0.0f, 1e-5f));
  }
  /* a third of the problems: devices 0 and 1 share a processor */
  if (hgr_test_rng_below(rng, 3) == 0) {
    f->own_timeline = malloc(devices * sizeof(uint32_t));
    for (size_t d = 0; d < devices; ++d) f->own_timeline[d] = d == 1 ? 0 : (uint32_t)d;
    f->model.timeline = f->own_timeline;
  }
  if (fixed_rules)
    for (uint32_t n = 0; n < graph->node_count; ++n)
      if (graph->nodes[n].is_op && hgr_test_rng_below(rng, 5) == 0) {
        uint32_t slot = hgr_test_rng_below(rng, (uint32_t)devices);
        if (hgr__place_can_run(&f->problem, n, slot)) f->slots[n] = f->problem.fixed[n] = slot;
      }
}

static void check_auto_on_random_dags(bool fixed_rules) {
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, fixed_rules ? 1414 : 14);
  double worst_ratio = 0.0, total_gain = 0.0;
  for (int trial = 0; trial < 300; ++trial) {
    fixture_t f;
    random_problem(&f, &rng, fixed_rules);
    uint32_t nodes = f.graph->node_count;
    uint32_t* fixed = malloc(nodes * sizeof(uint32_t));
    uint32_t* single = malloc(nodes * sizeof(uint32_t));
    memcpy(fixed, f.slots, nodes * sizeof(uint32_t));
    uint32_t best_slot = 0;
    double best_ms = 0.0;
    ASSERT_OK(hgr__schedule_auto(&f.problem, &f.model, f.slots, &best_slot, &best_ms, NULL));
    double ms = hgr__schedule_predict(&f.problem, &f.model, f.slots, NULL, NULL);
    assert_true(isfinite(ms));
    double least_single = INFINITY;
    for (uint32_t s = 0; s < f.problem.device_count; ++s) {
      single_device(&f, s, fixed, single);
      double single_ms = hgr__schedule_predict(&f.problem, &f.model, single, NULL, NULL);
      assert_true(ms <= single_ms + 1e-9);
      if (single_ms < least_single) least_single = single_ms;
    }
    assert_double_equal(best_ms, least_single, 1e-9);
    if (isfinite(least_single)) {
      assert_true(best_slot < f.problem.device_count);
      total_gain += least_single / ms;
      if (ms / least_single > worst_ratio) worst_ratio = ms / least_single;
    } else {
      assert_int_equal(best_slot, HGR__NO_DEVICE);
    }
    for (uint32_t n = 0; n < nodes; ++n) {
      if (!f.graph->nodes[n].is_op) {
        assert_int_equal(f.slots[n], HGR__NO_DEVICE);
        continue;
      }
      assert_true(f.slots[n] < f.problem.device_count);
      assert_true(hgr__place_can_run(&f.problem, n, f.slots[n]));
      if (fixed[n] != HGR__NO_DEVICE) assert_int_equal(f.slots[n], fixed[n]);
    }
    free(fixed);
    free(single);
    fixture_free(&f);
  }
  print_message("300 random DAGs%s: auto / best single device at worst %.3f, mean speed-up %.2f\n",
                fixed_rules ? " with rules" : "", worst_ratio, total_gain / 300);
}

static void auto_is_never_predicted_worse_than_the_best_single_device(void** state) {
  (void)state;
  check_auto_on_random_dags(false);
}

static void auto_keeps_the_nodes_rules_fixed(void** state) {
  (void)state;
  check_auto_on_random_dags(true);
}

static void auto_names_a_node_no_device_can_run(void** state) {
  (void)state;
  hgr_graph_t* graph = new_graph();
  uint32_t x = add_input(graph, 4);
  uint32_t a = add_node(graph, "relu", &x, 1, 4);
  finish(graph, a);
  fixture_t f;
  fixture_init(&f, graph, 2);
  cannot_run(&f, a, 0);
  cannot_run(&f, a, 1);
  ASSERT_STATUS(hgr__schedule_auto(&f.problem, &f.model, f.slots, NULL, NULL, NULL), HGR_STATUS_INVALID_ARGUMENT,
                "node 1 'n1'", "none of the 2 listed devices");
  fixture_free(&f);
}

/* ---- STAGES --------------------------------------------------------------------------------------- */

/* The largest stage cost of the chain's assignment (stage s on slot s). */
static double bottleneck(const fixture_t* f, const uint32_t* slots) {
  double stage[4] = {0};
  for (uint32_t n = 0; n < f->graph->node_count; ++n)
    if (f->graph->nodes[n].is_op && slots[n] != HGR__NO_DEVICE)
      stage[slots[n]] += f->model.node_ms[(size_t)n * f->problem.device_count + slots[n]];
  double most = 0.0;
  for (int s = 0; s < 4; ++s) most = stage[s] > most ? stage[s] : most;
  return most;
}

static void stages_split_a_chain_as_evenly_as_the_best_split(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 2);
  for (int trial = 0; trial < 100; ++trial) {
    hgr_graph_t* graph = new_graph();
    uint32_t prev = add_input(graph, 64);
    uint32_t length = 1 + hgr_test_rng_below(&rng, 24);
    for (uint32_t i = 0; i < length; ++i) prev = add_node(graph, "op", &prev, 1, 64);
    finish(graph, prev);
    uint32_t stages = 2 + hgr_test_rng_below(&rng, 2);
    fixture_t f;
    fixture_init(&f, graph, 3);
    double largest = 0.0;
    for (uint32_t n = 1; n <= length; ++n)
      for (size_t d = 0; d < 3; ++d) {
        /* devices differ in speed: stage costs are per device */
        double ms = (d + 1) * hgr_test_rng_float(&rng, 0.01f, 10.0f);
        set_cost(&f, n, d, ms);
        if (ms > largest) largest = ms;
      }
    ASSERT_OK(hgr__schedule_stages(&f.problem, &f.model, stages, f.slots));
    /* contiguous: slots never go down along the chain; no stage empty */
    for (uint32_t n = 2; n <= length; ++n) assert_true(f.slots[n] >= f.slots[n - 1]);
    if (length >= stages) assert_int_equal(f.slots[length], stages - 1);
    for (uint32_t n = 2; length >= stages && n <= length; ++n) assert_true(f.slots[n] <= f.slots[n - 1] + 1);
    if (length >= stages) assert_int_equal(f.slots[1], 0);
    for (uint32_t n = 1; n <= length; ++n) assert_true(f.slots[n] < stages);
    /* the best split, by trying every cut */
    uint32_t* split = calloc(graph->node_count, sizeof(uint32_t));
    double optimum = INFINITY;
    for (uint32_t c1 = 1; c1 <= length + 1; ++c1)
      for (uint32_t c2 = c1; c2 <= (stages == 3 ? length + 1 : c1); ++c2) {
        /* stage 0: nodes 1 to c1 - 1, stage 1: c1 to c2 - 1 (stages:2: to the end) */
        bool empty = c1 == 1 || (stages == 2 ? c1 > length : c2 == c1 || c2 > length);
        if (empty && length >= stages) continue; /* every stage gets a node when there are enough */
        for (uint32_t n = 1; n <= length; ++n) split[n] = n < c1 ? 0 : n < c2 || stages == 2 ? 1 : 2;
        double most = bottleneck(&f, split);
        if (most < optimum) optimum = most;
      }
    double found = bottleneck(&f, f.slots);
    assert_true(found <= optimum + largest);
    assert_true(found <= optimum + 1e-9); /* a DP: exactly the best */
    free(split);
    fixture_free(&f);
  }
}

/* pocl:0 fast, rusticl:0 slow (as on the test bed): stages:2 still gives rusticl
 * the tail of the chain, as little of it as balances best. */
static void stages_give_every_stage_a_node_even_on_a_slow_device(void** state) {
  (void)state;
  hgr_graph_t* graph = new_graph();
  uint32_t prev = add_input(graph, 64);
  for (int i = 0; i < 8; ++i) prev = add_node(graph, "op", &prev, 1, 64);
  finish(graph, prev);
  fixture_t f;
  fixture_init(&f, graph, 2);
  set_device_cost(&f, 0, 0.01);
  set_device_cost(&f, 1, 0.4);
  ASSERT_OK(hgr__schedule_stages(&f.problem, &f.model, 2, f.slots));
  assert_int_equal(nodes_on(&f, 0), 7);
  assert_int_equal(nodes_on(&f, 1), 1);
  assert_int_equal(f.slots[8], 1);
  fixture_free(&f);
}

static void stages_keep_rules_and_leave_what_a_stage_cannot_run(void** state) {
  (void)state;
  hgr_graph_t* graph = new_graph();
  uint32_t prev = add_input(graph, 64);
  for (int i = 0; i < 10; ++i) prev = add_node(graph, "op", &prev, 1, 64);
  finish(graph, prev);
  fixture_t f;
  fixture_init(&f, graph, 3);
  set_device_cost(&f, 0, 1.0);
  set_device_cost(&f, 1, 1.0);
  set_device_cost(&f, 2, 1.0);
  f.slots[1] = 2; /* a rule put node 1 on slot 2 */
  cannot_run(&f, 9, 1);
  ASSERT_OK(hgr__schedule_stages(&f.problem, &f.model, 2, f.slots));
  assert_int_equal(f.slots[1], 2);
  assert_int_equal(f.slots[0], HGR__NO_DEVICE);
  /* nodes 2..10 (9 nodes; node 9 costs nothing on stage 1's device): 5 and 4 */
  uint32_t first = 0, second = 0;
  for (uint32_t n = 2; n <= 10; ++n) {
    if (f.slots[n] == 0) ++first;
    else if (f.slots[n] == 1) ++second;
  }
  assert_int_equal(f.slots[9], HGR__NO_DEVICE);
  assert_int_equal(first, 4);
  assert_int_equal(second, 4);
  ASSERT_STATUS(hgr__schedule_stages(&f.problem, &f.model, 4, f.slots), HGR_STATUS_INVALID_ARGUMENT, "stages:4",
                "3 are listed");
  ASSERT_STATUS(hgr__schedule_stages(&f.problem, &f.model, 0, f.slots), HGR_STATUS_INVALID_ARGUMENT, "stages:0");
  fixture_free(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(predict_counts_one_copy_per_value_and_device),
      cmocka_unit_test(predict_writes_inputs_where_their_first_consumer_runs),
      cmocka_unit_test(small_nodes_stay_off_a_device_with_a_large_launch_cost),
      cmocka_unit_test(heavy_independent_branches_use_both_equal_devices),
      cmocka_unit_test(auto_splits_only_for_a_clear_gain),
      cmocka_unit_test(devices_sharing_a_processor_do_not_overlap),
      cmocka_unit_test(auto_is_never_predicted_worse_than_the_best_single_device),
      cmocka_unit_test(auto_keeps_the_nodes_rules_fixed),
      cmocka_unit_test(auto_names_a_node_no_device_can_run),
      cmocka_unit_test(stages_split_a_chain_as_evenly_as_the_best_split),
      cmocka_unit_test(stages_give_every_stage_a_node_even_on_a_slow_device),
      cmocka_unit_test(stages_keep_rules_and_leave_what_a_stage_cannot_run),
  };
  return cmocka_run_group_tests_name("schedule", tests, NULL, NULL);
}
