/* The profile reports of hgr/profile.h, written through the library API alone (no
 * CLI): the summary table, the JSON profile and the Chrome trace of a random graph's
 * last run name every node that ran, parse as JSON, and have no negative times; and
 * the writers refuse what they cannot report on.
 *
 *   test_profile_report SPEC_KEY1 SPEC_KEY4   graphs over keys 1 and 4 bound to the
 *                                             two devices (copies between them) */
#include <stdbool.h>
#include <string.h>

#include "json.h"

#include "graphgen.h"
#include "testlib.h"

static const char* specs[2];
static hgr_instance_t* instance;

static const uint64_t sizes[] = {1, 7, 64, 1000};
static const int32_t keys[] = {1, 4};

typedef struct harness_t {
  hgr_graph_t* graph;
  hgr_executor_t* executor;
} harness_t;

/* A random graph over both devices, with every input set; run and waited for
 * twice when run is true (the reports read the last run). */
static void open_graph(harness_t* h, uint64_t seed, bool profiling, bool run) {
  hgr_test_graph_options_t options = {.seed = seed, .op_count = 16, .sizes = sizes,
                                      .size_count = sizeof(sizes) / sizeof(sizes[0]), .device_keys = keys,
                                      .device_key_count = 2};
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
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, seed);
  for (size_t i = 0; i < hgr_executor_input_count(h->executor); ++i) {
    hgr_tensor_info_t info;
    ASSERT_OK(hgr_executor_input_info(h->executor, i, &info));
    float* data = malloc(info.bytes + 4);
    for (uint64_t k = 0; k < info.bytes / 4; ++k) data[k] = hgr_test_rng_float(&rng, -2.0f, 2.0f);
    ASSERT_OK(hgr_executor_set_input(h->executor, i, data, (size_t)info.bytes));
    free(data);
  }
  for (int r = 0; run && r < 2; ++r) {
    ASSERT_OK(hgr_executor_run(h->executor));
    ASSERT_OK(hgr_executor_wait(h->executor));
  }
}

static void close_graph(harness_t* h) {
  hgr_executor_release(h->executor);
  hgr_graph_release(h->graph);
}

/* Whether node runs commands: an op node other than __nop. */
static bool runs_commands(const hgr_graph_t* graph, uint32_t node_id, hgr_node_info_t* out_info) {
  ASSERT_OK(hgr_graph_node_info(graph, node_id, out_info));
  return out_info->func_name && strcmp(out_info->func_name, "__nop") != 0;
}

/* Calls write into memory and returns the text (malloc'd, NUL-terminated). */
typedef hgr_status_t (*writer_fn)(harness_t* h, FILE* out);

static char* write_to_memory(harness_t* h, writer_fn write) {
  char* text = NULL;
  size_t length = 0;
  FILE* out = open_memstream(&text, &length);
  assert_non_null(out);
  ASSERT_OK(write(h, out));
  assert_int_equal(fclose(out), 0);
  assert_non_null(text);
  return text;
}

static hgr_status_t write_summary_all(harness_t* h, FILE* out) {
  hgr_profile_summary_options_t options;
  hgr_profile_summary_options_init(&options);
  options.top_nodes = 0;
  return hgr_profile_write_summary(h->executor, &options, out);
}

static hgr_status_t write_json(harness_t* h, FILE* out) {
  return hgr_profile_write_json(h->executor, out);
}

/* ---- summary -------------------------------------------------------------------------- */

/* The lines of the section that starts with a line beginning with heading, up to
 * the next line that does not start with two spaces (the table header included). */
static const char* section(const char* text, const char* heading) {
  const char* at = strstr(text, heading);
  while (at && at != text && at[-1] != '\n') at = strstr(at + 1, heading);
  return at;
}

/* Whether the table after heading has a row whose first column (after two spaces,
 * width 28, names truncated to it) is name. */
static bool table_has_row(const char* text, const char* heading, const char* name) {
  const char* line = section(text, heading);
  if (!line) return false;
  line = strchr(line, '\n') + 1; /* the column header */
  for (line = strchr(line, '\n') + 1; line[0] == ' ' && line[1] == ' '; line = strchr(line, '\n') + 1) {
    size_t n = strlen(name) < 28 ? strlen(name) : 28;
    if (!strncmp(line + 2, name, n) && (line[2 + n] == ' ' || n == 28)) return true;
  }
  return false;
}

static void summary_names_every_node_that_ran_and_every_device(void** state) {
  (void)state;
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    harness_t h;
    open_graph(&h, seed, true, true);
    char* text = write_to_memory(&h, write_summary_all);
    assert_non_null(strstr(text, "profile of the last run"));
    size_t ran = 0;
    bool any_copy = false;
    for (uint32_t n = 0; n < hgr_graph_node_count(h.graph); ++n) {
      hgr_node_info_t info;
      if (!runs_commands(h.graph, n, &info)) continue;
      ++ran;
      if (!table_has_row(text, "by node", info.name))
        fail_msg("node %u '%s' is not in the summary:\n%s", n, info.name, text);
      if (!strcmp(info.func_name, "__copy")) {
        any_copy = true;
        if (!table_has_row(text, "copies:", info.name))
          fail_msg("copy node '%s' is not in the copies:\n%s", info.name, text);
      }
      if (!table_has_row(text, "by op:", info.func_name))
        fail_msg("op '%s' is not in the summary:\n%s", info.func_name, text);
    }
    char expected[64];
    snprintf(expected, sizeof(expected), "by node (%zu of %zu,", ran, ran);
    assert_non_null(strstr(text, expected));
    assert_int_equal(any_copy, section(text, "copies:") != NULL);
    for (size_t d = 0; d < hgr_executor_device_count(h.executor); ++d) {
      const char* spec = hgr_instance_device(instance, hgr_executor_device_usage(h.executor, d).device_index)->spec;
      assert_true(table_has_row(text, "by device:", spec));
    }
    assert_null(strstr(text, "-nan"));
    free(text);

    /* top_nodes limits the node table and only it. */
    hgr_profile_summary_options_t options;
    hgr_profile_summary_options_init(&options);
    assert_int_equal(options.top_nodes, 20);
    options.top_nodes = 2;
    char* top = NULL;
    size_t length = 0;
    FILE* out = open_memstream(&top, &length);
    ASSERT_OK(hgr_profile_write_summary(h.executor, &options, out));
    fclose(out);
    snprintf(expected, sizeof(expected), "by node (2 of %zu,", ran);
    assert_non_null(strstr(top, expected));
    free(top);
    close_graph(&h);
  }
}

/* ---- JSON profile ----------------------------------------------------------------------- */

static double number(const cJSON* object, const char* key) {
  const cJSON* item = cJSON_GetObjectItemCaseSensitive(object, key);
  if (!cJSON_IsNumber(item)) fail_msg("no number \"%s\" in %s", key, cJSON_PrintUnformatted(object));
  return item->valuedouble;
}

static void json_profile_parses_and_holds_every_node_that_ran(void** state) {
  (void)state;
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    harness_t h;
    open_graph(&h, seed, true, true);
    char* text = write_to_memory(&h, write_json);
    cJSON* root = cJSON_Parse(text);
    if (!root) fail_msg("the JSON profile does not parse:\n%s", text);
    const cJSON* run = cJSON_GetObjectItemCaseSensitive(root, "run");
    const cJSON* devices = cJSON_GetObjectItemCaseSensitive(root, "devices");
    const cJSON* nodes = cJSON_GetObjectItemCaseSensitive(root, "nodes");
    assert_true(cJSON_IsObject(run) && cJSON_IsArray(devices) && cJSON_IsArray(nodes));
    assert_int_equal((size_t)number(run, "commands"), hgr_executor_command_count(h.executor));
    assert_int_equal((size_t)cJSON_GetArraySize(devices), hgr_executor_device_count(h.executor));
    assert_true(number(run, "device_span_ns") >= 0 && number(run, "device_ns") >= 0 &&
                number(run, "host_enqueue_ns") >= 0);
    uint32_t node_count = (uint32_t)hgr_graph_node_count(h.graph);
    uint32_t* seen = calloc(node_count, sizeof(uint32_t));
    double commands = 0;
    const cJSON* node = NULL;
    cJSON_ArrayForEach(node, nodes) {
      double id = number(node, "node_id");
      assert_true(id >= 0 && id < node_count);
      hgr_node_info_t info;
      assert_true(runs_commands(h.graph, (uint32_t)id, &info));
      seen[(uint32_t)id]++;
      assert_string_equal(cJSON_GetObjectItemCaseSensitive(node, "name")->valuestring, info.name);
      assert_string_equal(cJSON_GetObjectItemCaseSensitive(node, "op")->valuestring, info.func_name);
      assert_true(number(node, "commands") >= 1);
      assert_true(number(node, "timed_commands") <= number(node, "commands"));
      assert_true(number(node, "device_ns") >= 0 && number(node, "host_enqueue_ns") >= 0);
      if (cJSON_GetObjectItemCaseSensitive(node, "start_ns"))
        assert_true(number(node, "start_ns") >= 0 && number(node, "end_ns") >= number(node, "start_ns"));
      assert_int_equal(cJSON_GetObjectItemCaseSensitive(node, "copy") != NULL, !strcmp(info.func_name, "__copy"));
      commands += number(node, "commands");
    }
    assert_int_equal((size_t)commands, hgr_executor_command_count(h.executor));
    for (uint32_t n = 0; n < node_count; ++n) {
      hgr_node_info_t info;
      if (runs_commands(h.graph, n, &info) && seen[n] != 1)
        fail_msg("node %u '%s' appears %u times in the JSON profile", n, info.name, seen[n]);
    }
    free(seen);
    cJSON_Delete(root);
    free(text);
    close_graph(&h);
  }
}

/* ---- trace ---------------------------------------------------------------------------- */

static char* read_file(const char* path) {
  FILE* in = fopen(path, "rb");
  assert_non_null(in);
  fseek(in, 0, SEEK_END);
  long size = ftell(in);
  rewind(in);
  char* text = malloc((size_t)size + 1);
  assert_int_equal(fread(text, 1, (size_t)size, in), (size_t)size);
  text[size] = '\0';
  fclose(in);
  return text;
}

static void trace_is_json_with_every_node_on_a_queue_and_the_host(void** state) {
  (void)state;
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    harness_t h;
    open_graph(&h, seed, true, true);
    const char* path = hgr_test_tmp_path("profile_report_trace.json");
    FILE* out = fopen(path, "w");
    assert_non_null(out);
    ASSERT_OK(hgr_profile_write_trace(h.executor, out));
    assert_int_equal(fclose(out), 0);
    char* text = read_file(path);
    cJSON* root = cJSON_Parse(text);
    if (!root) fail_msg("%s does not parse as JSON", path);
    const cJSON* events = cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
    assert_true(cJSON_IsArray(events));
    assert_true(cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(root, "otherData")));
    size_t queues = hgr_executor_queue_count(h.executor);
    bool* track = calloc(queues + 2, sizeof(bool)); /* per pid: a process_name */
    bool* busy = calloc(queues + 2, sizeof(bool));  /* per pid: slices */
    uint32_t node_count = (uint32_t)hgr_graph_node_count(h.graph);
    bool* on_host = calloc(node_count, sizeof(bool));
    bool* on_queue = calloc(node_count, sizeof(bool));
    int flows = 0;
    const cJSON* event = NULL;
    cJSON_ArrayForEach(event, events) {
      const char* ph = cJSON_GetObjectItemCaseSensitive(event, "ph")->valuestring;
      double pid = number(event, "pid");
      assert_true(pid >= 0 && pid <= (double)queues);
      const char* name = cJSON_GetObjectItemCaseSensitive(event, "name")->valuestring;
      if (!strcmp(ph, "M")) {
        if (!strcmp(name, "process_name")) track[(size_t)pid] = true;
      } else if (!strcmp(ph, "X")) {
        assert_true(number(event, "ts") >= 0);
        assert_true(number(event, "dur") >= 0);
        busy[(size_t)pid] = true;
        double node_id = number(cJSON_GetObjectItemCaseSensitive(event, "args"), "node");
        assert_true(node_id >= 0 && node_id < node_count);
        hgr_node_info_t info;
        assert_true(runs_commands(h.graph, (uint32_t)node_id, &info));
        assert_string_equal(name, info.name);
        if (pid == 0) on_host[(uint32_t)node_id] = true;
        else on_queue[(uint32_t)node_id] = true;
      } else if (!strcmp(ph, "s") || !strcmp(ph, "f")) {
        assert_true(number(event, "ts") >= 0);
        flows += !strcmp(ph, "s") ? 1 : -1;
      } else {
        fail_msg("unexpected event phase '%s'", ph);
      }
    }
    assert_int_equal(flows, 0); /* every arrow has both ends */
    assert_true(track[0] && busy[0]);
    for (size_t pid = 1; pid <= queues; ++pid)
      if (track[pid] != busy[pid]) fail_msg("queue track %zu: named %d, slices %d", pid, track[pid], busy[pid]);
    for (uint32_t n = 0; n < node_count; ++n) {
      hgr_node_info_t info;
      bool ran = runs_commands(h.graph, n, &info);
      if (ran != on_host[n] || ran != on_queue[n])
        fail_msg("node %u '%s' (%s): on the host track %d, on a queue track %d", n, info.name,
                 info.func_name ? info.func_name : "input", on_host[n], on_queue[n]);
    }
    free(track);
    free(busy);
    free(on_host);
    free(on_queue);
    cJSON_Delete(root);
    free(text);
    remove(path);
    close_graph(&h);
  }
}

/* ---- what the writers refuse ------------------------------------------------------------- */

static void reports_need_a_profiled_run_that_was_waited_for(void** state) {
  (void)state;
  FILE* sink = fopen("/dev/null", "w");
  assert_non_null(sink);
  harness_t h;
  open_graph(&h, 5, false, true);
  ASSERT_STATUS(hgr_profile_write_summary(h.executor, NULL, sink), HGR_STATUS_FAILED_PRECONDITION,
                "profiling");
  ASSERT_STATUS(hgr_profile_write_json(h.executor, sink), HGR_STATUS_FAILED_PRECONDITION,
                "profiling");
  ASSERT_STATUS(hgr_profile_write_trace(h.executor, sink), HGR_STATUS_FAILED_PRECONDITION,
                "profiling");
  close_graph(&h);

  open_graph(&h, 5, true, false);
  ASSERT_STATUS(hgr_profile_write_trace(h.executor, sink), HGR_STATUS_FAILED_PRECONDITION,
                "waited for");
  ASSERT_OK(hgr_executor_run(h.executor));
  ASSERT_STATUS(hgr_profile_write_summary(h.executor, NULL, sink), HGR_STATUS_FAILED_PRECONDITION,
                "waited for");
  ASSERT_OK(hgr_executor_wait(h.executor));
  ASSERT_OK(hgr_profile_write_summary(h.executor, NULL, sink));
  close_graph(&h);
  fclose(sink);
}

static void reports_refuse_missing_arguments(void** state) {
  (void)state;
  harness_t h;
  open_graph(&h, 6, true, true);
  FILE* sink = fopen("/dev/null", "w");
  assert_non_null(sink);
  ASSERT_STATUS(hgr_profile_write_summary(NULL, NULL, sink), HGR_STATUS_INVALID_ARGUMENT, "executor is NULL");
  ASSERT_STATUS(hgr_profile_write_json(NULL, sink), HGR_STATUS_INVALID_ARGUMENT, "executor is NULL");
  ASSERT_STATUS(hgr_profile_write_trace(h.executor, NULL), HGR_STATUS_INVALID_ARGUMENT, "out is NULL");
  fclose(sink);
  close_graph(&h);
}

static void a_failed_write_is_unavailable(void** state) {
  (void)state;
  /* Linux always has /dev/full; a missing one fails the test rather than skipping
   * it, since cmocka's skip() reads as passed in CTest. */
  FILE* full = fopen("/dev/full", "w");
  if (!full) fail_msg("cannot open /dev/full, so a failed write cannot be checked");
  harness_t h;
  open_graph(&h, 7, true, true);
  ASSERT_STATUS(hgr_profile_write_trace(h.executor, full), HGR_STATUS_UNAVAILABLE,
                "writing the trace failed");
  clearerr(full);
  ASSERT_STATUS(hgr_profile_write_summary(h.executor, NULL, full), HGR_STATUS_UNAVAILABLE,
                "writing the profile summary failed");
  fclose(full);
  close_graph(&h);
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: test_profile_report SPEC_KEY1 SPEC_KEY4\n");
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
      cmocka_unit_test(summary_names_every_node_that_ran_and_every_device),
      cmocka_unit_test(json_profile_parses_and_holds_every_node_that_ran),
      cmocka_unit_test(trace_is_json_with_every_node_on_a_queue_and_the_host),
      cmocka_unit_test(reports_need_a_profiled_run_that_was_waited_for),
      cmocka_unit_test(reports_refuse_missing_arguments),
      cmocka_unit_test(a_failed_write_is_unavailable),
  };
  int failed = cmocka_run_group_tests_name("profile_report", tests, NULL, NULL);
  hgr_instance_release(instance);
  return failed;
}
