/* Seeing inside a run: profiles that add up, and stepping that shows every node's
 * value as the reference computes it.
 *
 *   test_profile SPEC_KEY1 SPEC_KEY4   random graphs over keys 1 and 4 bound to the
 *                                      two devices (copies between them) */
#include <string.h>

#include "graph_internal.h"
#include "graphgen.h"
#include "reference.h"
#include "testlib.h"

static const char* specs[2];
static hgr_instance_t* instance;

static const uint64_t sizes[] = {1, 7, 64, 1000, 70000}; /* Oclgrind: the first 4 */
static const int32_t keys[] = {1, 4};

typedef struct harness_t {
  hgr_graph_t* graph;
  hgr_executor_t* executor;
  float** inputs;
} harness_t;

static void open_graph(harness_t* h, uint64_t seed, bool profiling) {
  bool simulator = strstr(specs[0], "oclgrind") || strstr(specs[1], "oclgrind");
  hgr_test_graph_options_t options = {.seed = seed, .op_count = 24, .sizes = sizes,
                                      .size_count = simulator ? 4 : sizeof(sizes) / sizeof(sizes[0]),
                                      .device_keys = keys, .device_key_count = 2};
  char* json = hgr_test_graph_generate(&options);
  assert_non_null(json);
  ASSERT_OK(hgr_graph_load_json(json, strlen(json), &h->graph));
  free(json);
  hgr_device_binding_t bindings[2] = {{1, specs[0]}, {4, specs[1]}};
  hgr_executor_options_t executor_options;
  hgr_executor_options_init(&executor_options);
  executor_options.bindings = bindings;
  executor_options.binding_count = 2;
  executor_options.profiling = profiling;
  ASSERT_OK(hgr_executor_create(instance, h->graph, &executor_options, &h->executor));
  size_t count = hgr_executor_input_count(h->executor);
  h->inputs = calloc(count + 1, sizeof(float*));
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, seed);
  for (size_t i = 0; i < count; ++i) {
    hgr_tensor_info_t info;
    ASSERT_OK(hgr_executor_input_info(h->executor, i, &info));
    h->inputs[i] = malloc(info.bytes + 4);
    for (uint64_t k = 0; k < info.bytes / 4; ++k) h->inputs[i][k] = hgr_test_rng_float(&rng, -2.0f, 2.0f);
    ASSERT_OK(hgr_executor_set_input(h->executor, i, h->inputs[i], (size_t)info.bytes));
  }
}

static void close_graph(harness_t* h) {
  for (size_t i = 0; i < hgr_executor_input_count(h->executor); ++i) free(h->inputs[i]);
  free(h->inputs);
  hgr_executor_release(h->executor);
  hgr_graph_release(h->graph);
}

/* ---- stepping ------------------------------------------------------------------------- */

typedef struct visit_t {
  const hgr_graph_t* graph;
  hgr_test_reference_t reference; /* every entry */
  uint32_t visited, checked;
  bool failed;
} visit_t;

static bool check_node(hgr_executor_t* executor, uint32_t node_id, void* user) {
  visit_t* v = user;
  v->visited++;
  const hgr__node_t* node = &v->graph->nodes[node_id];
  for (uint32_t k = 0; k < node->num_outputs; ++k) {
    uint32_t entry = v->graph->node_row_ptr[node_id] + k;
    uint64_t count = v->graph->entries[entry].element_count;
    float* got = malloc(count * 4 + 4);
    ASSERT_OK(hgr_executor_read_entry(executor, node_id, k, got, (size_t)count * 4));
    char message[256];
    if (!hgr_test_reference_check(&v->reference, entry, got, message, sizeof(message))) {
      print_error("node %u '%s' (%s): %s\n", node_id, node->name, node->is_op ? node->func_name : "input", message);
      v->failed = true;
    }
    v->checked++;
    free(got);
  }
  return true;
}

static void stepping_shows_every_node_as_the_reference_computes_it(void** state) {
  (void)state;
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    harness_t h;
    open_graph(&h, seed, false);
    visit_t v = {.graph = h.graph};
    ASSERT_OK(hgr_test_reference_run_entries(h.graph, (const float* const*)h.inputs, &v.reference));
    ASSERT_OK(hgr_executor_run_stepwise(h.executor, check_node, &v));
    assert_false(v.failed);
    assert_int_equal(v.visited, h.graph->node_count);
    assert_int_equal(v.checked, h.graph->entry_count);
    /* A normal run afterwards gives the same outputs: each head's entry as the
     * reference computes it. */
    ASSERT_OK(hgr_executor_run(h.executor));
    ASSERT_OK(hgr_executor_wait(h.executor));
    for (uint32_t o = 0; o < h.graph->head_count; ++o) {
      uint32_t entry = h.graph->node_row_ptr[h.graph->heads[o].node_id] + h.graph->heads[o].index;
      uint64_t count = h.graph->entries[entry].element_count;
      float* got = malloc(count * 4 + 4);
      ASSERT_OK(hgr_executor_get_output(h.executor, o, got, (size_t)count * 4));
      char message[256];
      if (!hgr_test_reference_check(&v.reference, entry, got, message, sizeof(message)))
        fail_msg("seed %llu: output %u (entry %u) after stepping, from a normal run: %s", (unsigned long long)seed,
                 o, entry, message);
      free(got);
    }
    hgr_test_reference_free(&v.reference);
    close_graph(&h);
  }
}

static bool stop_after_third(hgr_executor_t* executor, uint32_t node_id, void* user) {
  (void)executor;
  (void)node_id;
  return ++*(uint32_t*)user < 3;
}

static void stepping_stops_when_asked_and_the_executor_stays_usable(void** state) {
  (void)state;
  harness_t h;
  open_graph(&h, 9, false);
  uint32_t calls = 0;
  ASSERT_OK(hgr_executor_run_stepwise(h.executor, stop_after_third, &calls));
  assert_int_equal(calls, 3);
  ASSERT_OK(hgr_executor_run(h.executor));
  ASSERT_OK(hgr_executor_wait(h.executor));
  ASSERT_STATUS(hgr_executor_read_entry(h.executor, (uint32_t)h.graph->node_count, 0, NULL, 0),
                HGR_STATUS_OUT_OF_RANGE, "node");
  close_graph(&h);
}

/* ---- profiles ------------------------------------------------------------------------- */

static void profiles_add_up(void** state) {
  (void)state;
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    harness_t h;
    open_graph(&h, seed, true);
    ASSERT_STATUS(hgr_executor_command_profile(h.executor, 0, &(hgr_command_profile_t){0}),
                  HGR_STATUS_FAILED_PRECONDITION, "waited for");
    ASSERT_OK(hgr_executor_run(h.executor));
    assert_int_equal(hgr_executor_command_count(h.executor), 0); /* in flight */
    ASSERT_OK(hgr_executor_wait(h.executor));
    size_t count = hgr_executor_command_count(h.executor);
    assert_true(count > 0);
    size_t queues = hgr_executor_queue_count(h.executor);
    uint64_t* busy = calloc(queues, sizeof(uint64_t));
    uint64_t* first = calloc(queues, sizeof(uint64_t));
    uint64_t* last = calloc(queues, sizeof(uint64_t));
    bool* timed = calloc(queues, sizeof(bool));
    uint32_t* commands_of = calloc(h.graph->node_count, sizeof(uint32_t));
    /* rusticl 22.3 gives kernels no duration and transfers values that do not line
     * up: its queues are not checked. */
    bool* stamped = calloc(queues, sizeof(bool));
    for (size_t q = 0; q < queues; ++q) stamped[q] = true;
    for (size_t i = 0; i < count; ++i) {
      hgr_command_profile_t c;
      ASSERT_OK(hgr_executor_command_profile(h.executor, i, &c));
      if (c.kind == HGR_COMMAND_KERNEL && !hgr_command_profile_has_duration(&c))
        for (size_t q = 0; q < queues; ++q)
          if (hgr_executor_queue_info(h.executor, q).device_index == hgr_executor_queue_info(h.executor, c.queue).device_index)
            stamped[q] = false;
    }
    for (size_t i = 0; i < count; ++i) {
      hgr_command_profile_t c;
      ASSERT_OK(hgr_executor_command_profile(h.executor, i, &c));
      assert_true(c.node_id < h.graph->node_count);
      assert_true(c.queue < queues);
      assert_true(h.graph->nodes[c.node_id].is_op);
      commands_of[c.node_id]++;
      if (!strcmp(h.graph->nodes[c.node_id].func_name, "__copy")) assert_int_not_equal(c.kind, HGR_COMMAND_KERNEL);
      else assert_int_equal(c.kind, HGR_COMMAND_KERNEL);
      if (!stamped[c.queue]) continue;
      assert_true(c.queued_ns <= c.submit_ns && c.submit_ns <= c.start_ns && c.start_ns <= c.end_ns);
      busy[c.queue] += c.end_ns - c.start_ns;
      if (!timed[c.queue] || c.start_ns < first[c.queue]) first[c.queue] = c.start_ns;
      if (c.end_ns > last[c.queue]) last[c.queue] = c.end_ns;
      timed[c.queue] = true;
    }
    /* On one in-order queue commands do not overlap: their times fit the queue's span. */
    for (size_t q = 0; q < queues; ++q)
      if (timed[q]) assert_true(busy[q] <= last[q] - first[q]);
    for (uint32_t n = 0; n < h.graph->node_count; ++n) {
      const hgr__node_t* node = &h.graph->nodes[n];
      if (!node->is_op) continue;
      uint64_t begin, end;
      ASSERT_OK(hgr_executor_node_enqueue_time(h.executor, n, &begin, &end));
      bool nop = !strcmp(node->func_name, "__nop");
      assert_true(nop ? commands_of[n] == 0 : commands_of[n] > 0);
      if (!nop) assert_true(begin > 0 && begin <= end);
      hgr_copy_info_t copy;
      if (!strcmp(node->func_name, "__copy")) {
        ASSERT_OK(hgr_executor_copy_info(h.executor, n, &copy));
        assert_int_equal(copy.bytes, h.graph->entries[h.graph->node_row_ptr[n]].bytes);
        assert_true(copy.chunks >= 1);
      } else {
        ASSERT_STATUS(hgr_executor_copy_info(h.executor, n, &copy), HGR_STATUS_INVALID_ARGUMENT, "not a __copy");
      }
    }
    for (size_t d = 0; d < hgr_executor_device_count(h.executor); ++d) {
      size_t device = hgr_executor_device_usage(h.executor, d).device_index;
      hgr_clock_offset_t offset;
      hgr_status_t status = hgr_executor_clock_offset(h.executor, device, &offset);
      if (status) { /* only a device without timestamps may refuse */
        assert_int_equal(hgr_status_code(status), HGR_STATUS_UNAVAILABLE);
        hgr_status_free(status);
      } else {
        assert_non_null(offset.method);
      }
    }
    free(busy);
    free(first);
    free(last);
    free(timed);
    free(stamped);
    free(commands_of);
    close_graph(&h);
  }
}

/* A node of several launches (concatenate: one per four inputs, two for six) shows
 * every launch in the profile, as many as the device time counts, in the order they
 * ran. */
static void every_launch_of_a_node_is_profiled(void** state) {
  (void)state;
  static const char json[] =
      "{\"nodes\": [{\"op\": \"null\", \"name\": \"a\", \"inputs\": []},"
      " {\"op\": \"null\", \"name\": \"b\", \"inputs\": []},"
      " {\"op\": \"null\", \"name\": \"c\", \"inputs\": []},"
      " {\"op\": \"null\", \"name\": \"d\", \"inputs\": []},"
      " {\"op\": \"null\", \"name\": \"e\", \"inputs\": []},"
      " {\"op\": \"null\", \"name\": \"f\", \"inputs\": []},"
      " {\"op\": \"tvm_op\", \"name\": \"joined\", \"attrs\": {\"func_name\": \"concatenate\", \"axis\": \"1\","
      " \"num_inputs\": \"6\", \"num_outputs\": \"1\", \"flatten_data\": \"0\"},"
      " \"inputs\": [[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 0], [4, 0, 0], [5, 0, 0]]}],"
      " \"arg_nodes\": [0, 1, 2, 3, 4, 5], \"node_row_ptr\": [0, 1, 2, 3, 4, 5, 6, 7], \"heads\": [[6, 0, 0]],"
      " \"attrs\": {\"storage_id\": [\"list_int\", [0, 1, 2, 3, 4, 5, 6]],"
      " \"device_index\": [\"list_int\", [1, 1, 1, 1, 1, 1, 1]],"
      " \"dltype\": [\"list_str\", [\"float32\", \"float32\", \"float32\", \"float32\", \"float32\", \"float32\","
      " \"float32\"]],"
      " \"shape\": [\"list_shape\", [[2, 3, 5], [2, 4, 5], [2, 1, 5], [2, 2, 5], [2, 1, 5], [2, 1, 5], [2, 12, 5]]]}}";
  hgr_graph_t* graph;
  ASSERT_OK(hgr_graph_load_json(json, strlen(json), &graph));
  hgr_device_binding_t binding = {1, specs[0]};
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  options.bindings = &binding;
  options.binding_count = 1;
  options.profiling = true;
  hgr_executor_t* executor;
  ASSERT_OK(hgr_executor_create(instance, graph, &options, &executor));
  float inputs[6][2 * 4 * 5] = {{0}};
  const size_t floats[6] = {2 * 3 * 5, 2 * 4 * 5, 2 * 1 * 5, 2 * 2 * 5, 2 * 1 * 5, 2 * 1 * 5};
  for (size_t i = 0; i < 6; ++i) ASSERT_OK(hgr_executor_set_input(executor, i, inputs[i], floats[i] * sizeof(float)));
  ASSERT_OK(hgr_executor_run(executor));
  ASSERT_OK(hgr_executor_wait(executor));
  size_t count = hgr_executor_command_count(executor), launches = 0;
  for (size_t i = 0; i < count; ++i) {
    hgr_command_profile_t c;
    ASSERT_OK(hgr_executor_command_profile(executor, i, &c));
    if (c.node_id == 6) {
      assert_int_equal(c.kind, HGR_COMMAND_KERNEL);
      ++launches;
    }
  }
  assert_int_equal(launches, 2);
  hgr_device_time_t time;
  ASSERT_OK(hgr_executor_device_time(executor, 0, &time));
  assert_int_equal(time.commands, 2);
  hgr_executor_release(executor);
  hgr_graph_release(graph);
}

static void a_duration_needs_a_start_an_end_after_it_and_for_a_kernel_more_than_1_ns(void** state) {
  (void)state;
  const struct {
    hgr_command_kind_t kind;
    uint64_t start_ns, end_ns;
    bool has_duration;
  } cases[] = {
      {HGR_COMMAND_KERNEL, 1000, 1002, true},  {HGR_COMMAND_KERNEL, 1000, 1001, false}, /* rusticl 22.3 */
      {HGR_COMMAND_KERNEL, 0, 0, false},       {HGR_COMMAND_KERNEL, 0, 5000, false},
      {HGR_COMMAND_KERNEL, 1000, 999, false},  {HGR_COMMAND_COPY, 1000, 1001, true},
      {HGR_COMMAND_COPY, 1000, 1000, true},    {HGR_COMMAND_READ, 0, 0, false},
      {HGR_COMMAND_WRITE, 1000, 999, false},   {HGR_COMMAND_MARKER, 7, 7, true},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    hgr_command_profile_t profile = {.kind = cases[i].kind, .start_ns = cases[i].start_ns, .end_ns = cases[i].end_ns};
    if (hgr_command_profile_has_duration(&profile) != cases[i].has_duration)
      fail_msg("case %zu: %s from %llu to %llu ns", i, hgr_command_kind_name(cases[i].kind),
               (unsigned long long)cases[i].start_ns, (unsigned long long)cases[i].end_ns);
  }
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: test_profile SPEC_KEY1 SPEC_KEY4\n");
    return 2;
  }
  specs[0] = argv[1];
  specs[1] = argv[2];
  hgr_status_t status = hgr_instance_create(NULL, &instance);
  if (status) {
    hgr_status_free(status);
    return 1;
  }
  hgr_test_require_devices(instance, specs, 2);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(stepping_shows_every_node_as_the_reference_computes_it),
      cmocka_unit_test(stepping_stops_when_asked_and_the_executor_stays_usable),
      cmocka_unit_test(profiles_add_up),
      cmocka_unit_test(every_launch_of_a_node_is_profiled),
      cmocka_unit_test(a_duration_needs_a_start_an_end_after_it_and_for_a_kernel_more_than_1_ns),
  };
  int failed = cmocka_run_group_tests_name("profile", tests, NULL, NULL);
  hgr_instance_release(instance);
  return failed;
}
