/* The cost model on the test bed: calibration measures every (node signature,
 * device identity) once and every device pair at two sizes, with profiling events
 * or, where the driver gives no timestamps (rusticl 22.3), host timing; the cost
 * cache is written, read back by the next build (which calibrates nothing), survives
 * a corrupt line (skipped with a log line), and can be switched off; a device's
 * launch overhead replicates a node of its own; a copy across platforms costs more
 * latency than one within PoCL's context.
 *
 *   test_cost_model SPEC SPEC SPEC   two devices of one context, then another
 *                                    platform's (pocl:0 pocl:1 rusticl:0) */
#include <dirent.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "place_internal.h"
#include "testlib.h"

static const char* specs[3];
static hgr_instance_t* instance;
static char directory[256];

/* x -> e1 = exp(x) -> e2 = exp(e1) -> t = tanh(e2) -> a = add(t, e1): e1 and e2 share
 * a signature. */
static const char graph_json[] =
    "{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []},"
    " {\"op\": \"tvm_op\", \"name\": \"e1\", \"attrs\": {\"func_name\": \"exp\", \"num_inputs\": \"1\", \"num_outputs\": \"1\", \"flatten_data\": \"0\", \"hash\": \"1\"}, \"inputs\": [[0, 0, 0]]},"
    " {\"op\": \"tvm_op\", \"name\": \"e2\", \"attrs\": {\"func_name\": \"exp\", \"num_inputs\": \"1\", \"num_outputs\": \"1\", \"flatten_data\": \"0\", \"hash\": \"2\"}, \"inputs\": [[1, 0, 0]]},"
    " {\"op\": \"tvm_op\", \"name\": \"t\", \"attrs\": {\"func_name\": \"tanh\", \"num_inputs\": \"1\", \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[2, 0, 0]]},"
    " {\"op\": \"tvm_op\", \"name\": \"a\", \"attrs\": {\"func_name\": \"add\", \"num_inputs\": \"2\", \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[3, 0, 0], [1, 0, 0]]}],"
    " \"arg_nodes\": [0], \"node_row_ptr\": [0, 1, 2, 3, 4, 5], \"heads\": [[4, 0, 0]],"
    " \"attrs\": {\"storage_id\": [\"list_int\", [0, 1, 2, 3, 4]],"
    " \"shape\": [\"list_shape\", [[64, 64], [64, 64], [64, 64], [64, 64], [64, 64]]],"
    " \"dltype\": [\"list_str\", [\"float32\", \"float32\", \"float32\", \"float32\", \"float32\"]]}}";
#define NODES 5
#define DEVICES 3

typedef struct log_t {
  char text[32768];
  int calibrated; /* progress lines */
} log_t;

static void collect_log(void* user, const char* message) {
  log_t* log = user;
  size_t used = strlen(log->text);
  snprintf(log->text + used, sizeof(log->text) - used, "%s\n", message);
  if (!strncmp(message, "calibrating ", 12)) log->calibrated++;
}

typedef struct problem_t {
  hgr_graph_t* graph;
  size_t devices[DEVICES];
  bool can_run[NODES * DEVICES];
  char* cannot_reason[NODES * DEVICES];
  uint32_t fixed[NODES];
  const hgr_device_info_t* infos[DEVICES];
  hgr__place_problem_t problem;
} problem_t;

static void problem_init(problem_t* p) {
  memset(p, 0, sizeof(*p));
  ASSERT_OK(hgr_graph_load_json(graph_json, strlen(graph_json), &p->graph));
  for (size_t d = 0; d < DEVICES; ++d) ASSERT_OK(hgr_instance_find_device(instance, specs[d], &p->devices[d]));
  for (size_t i = 0; i < NODES * DEVICES; ++i) p->can_run[i] = true;
  for (uint32_t n = 0; n < NODES; ++n) p->fixed[n] = HGR__NO_DEVICE;
  for (size_t d = 0; d < DEVICES; ++d) p->infos[d] = hgr_instance_device(instance, p->devices[d]);
  p->problem = (hgr__place_problem_t){.instance = instance, .graph = p->graph, .kernels = NULL,
                                      .device_count = DEVICES, .devices = p->devices, .infos = p->infos,
                                      .can_run = p->can_run, .cannot_reason = p->cannot_reason, .fixed = p->fixed};
}

static hgr_place_options_t options_for(log_t* log, bool cache_off) {
  hgr_place_options_t options;
  memset(&options, 0, sizeof(options));
  options.cost_cache_directory = directory;
  options.cost_cache_off = cache_off;
  options.log = collect_log;
  options.log_user = log;
  memset(log, 0, sizeof(*log));
  return options;
}

/* The cost cache's files (at most 8), full paths. */
static size_t cache_files(char paths[8][600]) {
  DIR* dir = opendir(directory);
  size_t count = 0;
  if (!dir) return 0;
  for (struct dirent* entry; (entry = readdir(dir)) && count < 8;)
    if (!strncmp(entry->d_name, "cost", 4)) snprintf(paths[count++], 600, "%s/%s", directory, entry->d_name);
  closedir(dir);
  return count;
}

static void remove_cache(void) {
  char paths[8][600];
  size_t count = cache_files(paths);
  for (size_t i = 0; i < count; ++i) unlink(paths[i]);
  rmdir(directory);
}

/* Whether the driver of spec gives usable profiling timestamps: its clock can be put
 * on the host's and the kernels of a profiled run last more than 1 ns (rusticl 22.3
 * stamps them with zeros or end = start + 1 ns; profile_report.c's rule). */
static bool gives_timestamps(const char* spec) {
  hgr_graph_t* graph = NULL;
  ASSERT_OK(hgr_graph_load_json(graph_json, strlen(graph_json), &graph));
  hgr_device_binding_t binding = {1, spec};
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  options.bindings = &binding;
  options.binding_count = 1;
  options.profiling = true;
  hgr_executor_t* executor = NULL;
  ASSERT_OK(hgr_executor_create(instance, graph, &options, &executor));
  float x[64 * 64] = {0};
  ASSERT_OK(hgr_executor_set_input(executor, 0, x, sizeof(x)));
  ASSERT_OK(hgr_executor_run(executor));
  ASSERT_OK(hgr_executor_wait(executor));
  size_t device = 0;
  ASSERT_OK(hgr_instance_find_device(instance, spec, &device));
  hgr_clock_offset_t offset;
  hgr_status_t status = hgr_executor_clock_offset(executor, device, &offset);
  bool timed = status == HGR_OK;
  hgr_status_free(status);
  for (size_t c = 0; c < hgr_executor_command_count(executor); ++c) {
    hgr_command_profile_t profile;
    ASSERT_OK(hgr_executor_command_profile(executor, c, &profile));
    if (profile.kind == HGR_COMMAND_KERNEL && (!profile.start_ns || profile.end_ns <= profile.start_ns + 1))
      timed = false;
  }
  hgr_executor_release(executor);
  hgr_graph_release(graph);
  return timed;
}

/* The log lines that mention text, counted. */
static int lines_with(const log_t* log, const char* first, const char* second) {
  int count = 0;
  for (const char* line = log->text; *line;) {
    const char* end = strchr(line, '\n');
    size_t length = end ? (size_t)(end - line) : strlen(line);
    char copy[1024];
    snprintf(copy, sizeof(copy), "%.*s", (int)length, line);
    if (strstr(copy, first) && (!second || strstr(copy, second))) ++count;
    line += length + (end ? 1 : 0);
  }
  return count;
}

/* The log, a line at a time (print_message truncates long text). */
static void print_log(const log_t* log) {
  for (const char* line = log->text; *line;) {
    const char* end = strchr(line, '\n');
    size_t length = end ? (size_t)(end - line) : strlen(line);
    print_message("%.*s\n", (int)length, line);
    line += length + (end ? 1 : 0);
  }
}

static void check_model(const hgr__cost_model_t* model) {
  assert_int_equal(model->device_count, DEVICES);
  assert_int_equal(model->node_count, NODES);
  /* CPU devices share the host's cores: one timeline, the first CPU device's */
  assert_non_null(model->timeline);
  for (size_t d = 0; d < DEVICES; ++d) {
    size_t device = 0, other = 0;
    ASSERT_OK(hgr_instance_find_device(instance, specs[d], &device));
    uint32_t expected = (uint32_t)d;
    for (size_t e = 0; e < d && expected == d; ++e) {
      ASSERT_OK(hgr_instance_find_device(instance, specs[e], &other));
      if (hgr_instance_device(instance, device)->type == HGR_DEVICE_TYPE_CPU &&
          hgr_instance_device(instance, other)->type == HGR_DEVICE_TYPE_CPU)
        expected = (uint32_t)e;
    }
    assert_int_equal(model->timeline[d], expected);
  }
  for (size_t d = 0; d < DEVICES; ++d) {
    assert_true(model->node_ms[d] == 0.0); /* the input */
    for (uint32_t n = 1; n < NODES; ++n) {
      double ms = model->node_ms[n * DEVICES + d];
      assert_true(isfinite(ms) && ms > 0.0);
    }
    for (size_t e = 0; e < DEVICES; ++e) {
      double latency = model->copy_latency_ms[d * DEVICES + e], per_byte = model->copy_ms_per_byte[d * DEVICES + e];
      assert_true(isfinite(latency) && latency >= 0.0 && isfinite(per_byte) && per_byte >= 0.0);
      if (d == e) assert_true(latency == 0.0 && per_byte == 0.0);
      else assert_true(hgr__cost_copy_ms(model, d, e, 4096) > 0.0);
    }
  }
}

/* 3 signatures x 2 identities (pocl:0 and pocl:1 are one) + 3 device-pair keys
 * (pocl<->pocl in one context, pocl->rusticl, rusticl->pocl) x 2 sizes + a launch
 * overhead per identity. */
#define ITEMS 14

static void calibration_fills_every_entry_and_the_cache(void** state) {
  (void)state;
  problem_t p;
  problem_init(&p);
  log_t log;
  hgr_place_options_t options = options_for(&log, false);
  hgr__cost_model_t model;
  ASSERT_OK(hgr__cost_model_build(&p.problem, &options, &model));
  print_log(&log);
  check_model(&model);
  assert_int_equal(log.calibrated, ITEMS);
  /* e1 and e2 (equal signatures) have one time per device */
  for (size_t d = 0; d < DEVICES; ++d) assert_true(model.node_ms[1 * DEVICES + d] == model.node_ms[2 * DEVICES + d]);
  /* pocl:0 and pocl:1 (one identity) share their times */
  for (uint32_t n = 1; n < NODES; ++n) assert_true(model.node_ms[n * DEVICES + 0] == model.node_ms[n * DEVICES + 1]);
  /* profiling where the driver has timestamps, else the host's clock */
  for (size_t d = 0; d < DEVICES; d += 2) {
    char where[64];
    snprintf(where, sizeof(where), " on %s: ", specs[d]);
    bool timed = gives_timestamps(specs[d]);
    print_message("%s gives profiling timestamps: %s\n", specs[d], timed ? "yes" : "no");
    assert_int_equal(lines_with(&log, where, timed ? "(profiling)" : "(host timing"), 4); /* 3 nodes, launch */
    assert_int_equal(lines_with(&log, where, "launch overhead: 16 x "), 1);
  }
  /* a copy across contexts has commands on both devices: the host's clock */
  assert_int_equal(lines_with(&log, "copy", "(host timing: its commands run on two devices"), 4);
  assert_int_equal(lines_with(&log, "copy", "(profiling)"), 2);
  char paths[8][600];
  assert_int_equal(cache_files(paths), 5); /* 2 identities, 3 distinct pairs */

  /* the next build reads every time from the cache */
  hgr__cost_model_t again;
  options = options_for(&log, false);
  ASSERT_OK(hgr__cost_model_build(&p.problem, &options, &again));
  assert_int_equal(log.calibrated, 0);
  for (size_t i = 0; i < NODES * DEVICES; ++i)
    assert_true(fabs(again.node_ms[i] - model.node_ms[i]) <= 1e-6 * model.node_ms[i]);
  for (size_t i = 0; i < DEVICES * DEVICES; ++i)
    assert_true(fabs(hgr__cost_copy_ms(&again, i / DEVICES, i % DEVICES, 1 << 20) -
                     hgr__cost_copy_ms(&model, i / DEVICES, i % DEVICES, 1 << 20)) <=
                1e-6 * hgr__cost_copy_ms(&model, i / DEVICES, i % DEVICES, 1 << 20) + 1e-12);
  hgr__cost_model_release(&again);
  hgr__cost_model_release(&model);
  hgr_graph_release(p.graph);
}

/* Prints the cache's files' names (for the log) and returns how many lines they hold. */
static size_t cache_lines(void) {
  char paths[8][600];
  size_t count = cache_files(paths), lines = 0;
  for (size_t i = 0; i < count; ++i) {
    FILE* file = fopen(paths[i], "r");
    assert_non_null(file);
    for (int c; (c = fgetc(file)) != EOF;) lines += c == '\n';
    fclose(file);
  }
  return lines;
}

/* A line that is not "key<TAB>ms" and one whose time is not a number are skipped,
 * each with a log line; a line taken out is calibrated again, nothing else. */
static void corrupt_cache_lines_are_skipped_with_a_log_line(void** state) {
  (void)state;
  problem_t p;
  problem_init(&p);
  log_t log;
  hgr_place_options_t options = options_for(&log, false);
  hgr__cost_model_t model;
  ASSERT_OK(hgr__cost_model_build(&p.problem, &options, &model)); /* filled by the test before, or now */
  hgr__cost_model_release(&model);
  assert_int_equal(cache_lines(), ITEMS);
  char paths[8][600];
  size_t count = cache_files(paths);
  assert_true(count > 0);
  /* the first file: its first line dropped, two bad lines added */
  void* data = NULL;
  size_t length = 0;
  FILE* file = fopen(paths[0], "rb");
  assert_non_null(file);
  data = malloc(1 << 16);
  length = fread(data, 1, 1 << 16, file);
  fclose(file);
  const char* rest = memchr(data, '\n', length);
  assert_non_null(rest);
  ++rest;
  file = fopen(paths[0], "wb");
  assert_non_null(file);
  fprintf(file, "no tab on this line\n");
  fwrite(rest, 1, length - (size_t)(rest - (const char*)data), file);
  fprintf(file, "hgr-cost-1|some|key\tfast\n");
  fclose(file);
  free(data);

  options = options_for(&log, false);
  ASSERT_OK(hgr__cost_model_build(&p.problem, &options, &model));
  print_log(&log);
  check_model(&model);
  assert_int_equal(lines_with(&log, "line 1 skipped", "not \"key<TAB>ms\""), 1);
  assert_int_equal(lines_with(&log, "skipped", "not a finite number"), 1);
  assert_int_equal(log.calibrated, 1);
  hgr__cost_model_release(&model);
  /* the rewritten file holds the good lines again, and no bad ones */
  assert_int_equal(cache_lines(), ITEMS);
  options = options_for(&log, false);
  ASSERT_OK(hgr__cost_model_build(&p.problem, &options, &model));
  assert_int_equal(log.calibrated, 0);
  assert_int_equal(lines_with(&log, "skipped", NULL), 0);
  hgr__cost_model_release(&model);
  hgr_graph_release(p.graph);
}

/* A device that cannot run a node gets no time for it (INFINITY) and calibrates
 * nothing for it; with the cache off, everything is measured and nothing stored. */
static void the_cache_can_be_switched_off(void** state) {
  (void)state;
  remove_cache();
  problem_t p;
  problem_init(&p);
  p.can_run[3 * DEVICES + 2] = false; /* tanh on rusticl:0 */
  log_t log;
  hgr_place_options_t options = options_for(&log, true);
  hgr__cost_model_t model;
  ASSERT_OK(hgr__cost_model_build(&p.problem, &options, &model));
  assert_true(isinf(model.node_ms[3 * DEVICES + 2]));
  assert_int_equal(log.calibrated, ITEMS - 1);
  assert_int_equal(lines_with(&log, "tanh", specs[2]), 0);
  char paths[8][600];
  assert_int_equal(cache_files(paths), 0);
  hgr__cost_model_release(&model);
  hgr_graph_release(p.graph);
}

/* A device's launch overhead replicates the cheapest node measured on its own
 * identity, with the cache off too (where no file tells the identities apart): here
 * rusticl:0 runs only exp and the PoCL devices everything but exp, so the cheaper
 * PoCL nodes must not be replicated on rusticl:0. */
static void launch_overhead_replicates_a_node_of_its_own_device(void** state) {
  (void)state;
  problem_t p;
  problem_init(&p);
  for (size_t d = 0; d < 2; ++d) p.can_run[1 * DEVICES + d] = p.can_run[2 * DEVICES + d] = false;
  p.can_run[3 * DEVICES + 2] = p.can_run[4 * DEVICES + 2] = false;
  log_t log;
  hgr_place_options_t options = options_for(&log, true);
  hgr__cost_model_t model;
  ASSERT_OK(hgr__cost_model_build(&p.problem, &options, &model));
  if (lines_with(&log, "launch overhead: 16 x exp", specs[2]) != 1) print_log(&log);
  assert_int_equal(lines_with(&log, "launch overhead", specs[2]), 1);
  assert_int_equal(lines_with(&log, "launch overhead: 16 x exp", specs[2]), 1);
  assert_int_equal(lines_with(&log, "launch overhead", specs[0]), 1);
  assert_int_equal(lines_with(&log, "launch overhead: 16 x exp", specs[0]), 0);
  hgr__cost_model_release(&model);
  hgr_graph_release(p.graph);
}

/* pocl -> rusticl is a staged copy through the host; pocl:0 -> pocl:1 one
 * clEnqueueCopyBuffer in one context. */
static void copies_across_platforms_cost_more_latency_than_within_a_context(void** state) {
  (void)state;
  problem_t p;
  problem_init(&p);
  log_t log;
  hgr_place_options_t options = options_for(&log, false);
  hgr__cost_model_t model;
  ASSERT_OK(hgr__cost_model_build(&p.problem, &options, &model));
  assert_int_equal(hgr_instance_pair_class(instance, p.devices[0], p.devices[1]), HGR_PAIR_SAME_CONTEXT);
  double within = model.copy_latency_ms[0 * DEVICES + 1], across = model.copy_latency_ms[0 * DEVICES + 2];
  print_message("copy latency: %s -> %s %.4f ms (%.3f GB/s), %s -> %s %.4f ms (%.3f GB/s), %s -> %s %.4f ms\n",
                specs[0], specs[1], within, 1e-6 / model.copy_ms_per_byte[1], specs[0], specs[2], across,
                1e-6 / model.copy_ms_per_byte[2], specs[2], specs[0], model.copy_latency_ms[2 * DEVICES + 0]);
  assert_true(across > within);
  hgr__cost_model_release(&model);
  hgr_graph_release(p.graph);
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: test_cost_model SPEC SPEC SPEC\n");
    return 2;
  }
  for (int i = 0; i < 3; ++i) specs[i] = argv[i + 1];
  snprintf(directory, sizeof(directory), "%s", hgr_test_tmp_path("cost-cache"));
  hgr_status_t status = hgr_instance_create(NULL, &instance);
  if (status) {
    hgr_status_free(status);
    return 1;
  }
  hgr_test_require_devices(instance, specs, 3);
  remove_cache();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(calibration_fills_every_entry_and_the_cache),
      cmocka_unit_test(corrupt_cache_lines_are_skipped_with_a_log_line),
      cmocka_unit_test(copies_across_platforms_cost_more_latency_than_within_a_context),
      cmocka_unit_test(the_cache_can_be_switched_off),
      cmocka_unit_test(launch_overhead_replicates_a_node_of_its_own_device),
  };
  int failed = cmocka_run_group_tests_name("cost_model", tests, NULL, NULL);
  remove_cache();
  hgr_instance_release(instance);
  return failed;
}
