/* Tile choices and tuning (hgr/tune.h): the tuning file's format and its rejection
 * of files that do not parse (tune_store.h); and, on a device, every GEMM tile
 * candidate against the plain-C references (dense, matmul, batch_matmul, 1x1
 * conv2d), a stored winner taken by a later executor and ignored for another
 * device, with tuning off, or when the file does not parse, and hgr_tune_graph
 * writing records that a later executor takes. What an executor chose is read
 * through hgr_executor_node_tile, the report `hgr run --verbose` prints.
 *
 *   test_tune              the tuning file alone (no device)
 *   test_tune DEVICE_SPEC  that, and the executor tests on the device */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "device_internal.h"
#include "optest.h"
#include "ref_conv.h"
#include "ref_linalg.h"
#include "tune_store.h"

/* ---- the tuning file ------------------------------------------------------------------ */

static void parses(const char* text, hgr__tune_table_t* table) {
  ASSERT_OK(hgr__tune_table_parse(hgr_allocator_system(), text, strlen(text), "tuning.tsv", table));
}

static void store_reads_what_it_writes(void** state) {
  (void)state;
  hgr__tune_table_t table = {0};
  ASSERT_OK(hgr__tune_table_put(hgr_allocator_system(), &table, "pocl|cpu|OpenCL 3.0|3.1", "gemm:1x64x3136x64", "8x16_4x16_k32", 667.5));
  ASSERT_OK(hgr__tune_table_put(hgr_allocator_system(), &table, "pocl|cpu|OpenCL 3.0|3.1", "gemm:1x2x3x4", "1x1_4x4_k8", 1));
  ASSERT_OK(hgr__tune_table_put(hgr_allocator_system(), &table, "other|gpu|OpenCL 1.2|9", "gemm:1x64x3136x64", "4x4_8x8_k16", 0));
  /* the same device and key: replaced, not added */
  ASSERT_OK(hgr__tune_table_put(hgr_allocator_system(), &table, "pocl|cpu|OpenCL 3.0|3.1", "gemm:1x2x3x4", "2x2_8x8_k16", 2.25));
  assert_int_equal(table.count, 3);
  char* text = NULL;
  size_t length = 0;
  ASSERT_OK(hgr__tune_table_format(hgr_allocator_system(), &table, &text, &length));
  assert_int_equal(strlen(text), length);
  hgr__tune_table_t read = {0};
  ASSERT_OK(hgr__tune_table_parse(hgr_allocator_system(), text, length, "tuning.tsv", &read));
  assert_int_equal(read.count, 3);
  assert_string_equal(hgr__tune_lookup(&read, "pocl|cpu|OpenCL 3.0|3.1", "gemm:1x2x3x4"), "2x2_8x8_k16");
  assert_string_equal(hgr__tune_lookup(&read, "pocl|cpu|OpenCL 3.0|3.1", "gemm:1x64x3136x64"), "8x16_4x16_k32");
  assert_string_equal(hgr__tune_lookup(&read, "other|gpu|OpenCL 1.2|9", "gemm:1x64x3136x64"), "4x4_8x8_k16");
  assert_true(fabs(read.records[1].time_us - 2.25) < 1e-9);
  free(text);
  hgr__tune_table_free(hgr_allocator_system(), &read);
  hgr__tune_table_free(hgr_allocator_system(), &table);
}

static void store_looks_up_only_its_device_and_key(void** state) {
  (void)state;
  hgr__tune_table_t table = {0};
  parses("hgr-tune 1\n# a comment\n\nA|B|C|D\tgemm:k\t4x4_8x8_k16\t10\n", &table);
  assert_int_equal(table.count, 1);
  assert_string_equal(hgr__tune_lookup(&table, "A|B|C|D", "gemm:k"), "4x4_8x8_k16");
  assert_null(hgr__tune_lookup(&table, "A|B|C|E", "gemm:k")); /* another driver version */
  assert_null(hgr__tune_lookup(&table, "A|B|C|D", "gemm:l"));
  assert_null(hgr__tune_lookup(NULL, "A|B|C|D", "gemm:k"));
  hgr__tune_table_free(hgr_allocator_system(), &table);
}

static void store_rejects_files_that_do_not_parse(void** state) {
  (void)state;
  static const struct {
    const char* text;
    const char* message;
  } cases[] = {
      {"", "line 1: not a tuning file of this version"},
      {"hgr-tune 2\n", "line 1: not a tuning file of this version"},
      {"hgr-tune 1 \n", "line 1: not a tuning file"},
      {"\x89PNG\r\n", "line 1: not a tuning file"},
      {"hgr-tune 1\nd\tk\tt\n", "line 2: 3 tab-separated fields"},
      {"hgr-tune 1\nd\tk\tt\t1\textra\n", "line 2: more than 4 tab-separated fields"},
      {"hgr-tune 1\n\nd\t\tt\t1\n", "line 3: the key is empty"},
      {"hgr-tune 1\nd\tk\tt\tfast\n", "line 2: the time \"fast\" is not a number from 0 to 1e12"},
      {"hgr-tune 1\nd\tk\tt\t-1\n", "the time \"-1\" is not"},
      {"hgr-tune 1\nd\tk\tt\tnan\n", "the time \"nan\" is not"},
      {"hgr-tune 1\nd\tk\tt\tinf\n", "the time \"inf\" is not"},
      {"hgr-tune 1\nd\tk\tt\t1e999\n", "the time \"1e999\" is not"},
      {"hgr-tune 1\nd\tk\tt\t1e13\n", "the time \"1e13\" is not"},
      {"hgr-tune 1\nd\tk\tt\t1 \n", "the time \"1 \" is not"},
      {"hgr-tune 1\nd\tk\tt\t1\r\n", "line 2: the time has a byte that is not printable ASCII"},
      {"hgr-tune 1\nd\tk\xff\tt\t1\n", "line 2: the key has a byte that is not printable ASCII"},
      {"hgr-tune 1\nd\tk\tt\t1\nd\tk\tu\t2\n", "line 3: a second record for key 'k' on device 'd'"},
      {"hgr-tune 1\nd\tk\tt\t1234567890123456789012345678901234\n", "the time is longer than 32 bytes"},
  };
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); ++c) {
    hgr__tune_table_t table = {0};
    ASSERT_STATUS(hgr__tune_table_parse(hgr_allocator_system(), cases[c].text, strlen(cases[c].text), "cache/tuning.tsv", &table),
                  HGR_STATUS_INVALID_ARGUMENT, "cache/tuning.tsv", cases[c].message);
    hgr__tune_table_free(hgr_allocator_system(), &table);
  }
  /* an overlong field, and one record without its final LF (still a record) */
  char text[1200] = "hgr-tune 1\nd\t";
  memset(text + strlen(text), 'k', 600);
  strcat(text, "\tt\t1\n");
  hgr__tune_table_t table = {0};
  ASSERT_STATUS(hgr__tune_table_parse(hgr_allocator_system(), text, strlen(text), "tuning.tsv", &table), HGR_STATUS_INVALID_ARGUMENT,
                "line 2: the key is longer than 511 bytes");
  hgr__tune_table_free(hgr_allocator_system(), &table);
  parses("hgr-tune 1\nd\tk\tt\t1", &table);
  assert_int_equal(table.count, 1);
  hgr__tune_table_free(hgr_allocator_system(), &table);
  /* what put refuses, the format could not hold */
  ASSERT_STATUS(hgr__tune_table_put(hgr_allocator_system(), &table, "d", "a\tb", "t", 1), HGR_STATUS_INVALID_ARGUMENT, "the key has a byte");
  ASSERT_STATUS(hgr__tune_table_put(hgr_allocator_system(), &table, "d", "k", "", 1), HGR_STATUS_INVALID_ARGUMENT, "the tile is empty");
  ASSERT_STATUS(hgr__tune_table_put(hgr_allocator_system(), &table, "d", "k", "t", NAN), HGR_STATUS_INVALID_ARGUMENT, "not a number from 0");
  assert_int_equal(table.count, 0);
}

static void store_loads_a_missing_file_as_empty_and_names_a_bad_one(void** state) {
  (void)state;
  hgr__tune_table_t table = {0};
  const char* missing = hgr_test_tmp_path("no-such-dir/tuning.tsv");
  ASSERT_OK(hgr__tune_table_load(hgr_allocator_system(), missing, &table));
  assert_int_equal(table.count, 0);
  char path[512];
  snprintf(path, sizeof(path), "%s", hgr_test_tmp_path("tune-store/sub/tuning.tsv"));
  ASSERT_OK(hgr__tune_table_put(hgr_allocator_system(), &table, "d", "k", "t", 5));
  ASSERT_OK(hgr__tune_table_save(hgr_allocator_system(), path, &table)); /* creates the directories */
  hgr__tune_table_free(hgr_allocator_system(), &table);
  ASSERT_OK(hgr__tune_table_load(hgr_allocator_system(), path, &table));
  assert_int_equal(table.count, 1);
  hgr__tune_table_free(hgr_allocator_system(), &table);
  FILE* file = fopen(path, "w");
  assert_non_null(file);
  fputs("hgr-tune 1\nd\tk\n", file);
  fclose(file);
  ASSERT_STATUS(hgr__tune_table_load(hgr_allocator_system(), path, &table), HGR_STATUS_INVALID_ARGUMENT, path, "line 2: 2 tab-separated");
  hgr__tune_table_free(hgr_allocator_system(), &table);
  unlink(path);
}

/* ---- on a device ---------------------------------------------------------------------- */

/* The GEMM ops and a 1x1 conv2d on random data, with their expected outputs. */
typedef enum layer_kind_t { LAYER_DENSE, LAYER_MATMUL, LAYER_BATCH_MATMUL, LAYER_CONV1X1, LAYER_COUNT } layer_kind_t;

static void make_layer(layer_kind_t kind, hgr_optest_t* t) {
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 1000 + (uint64_t)kind);
  switch (kind) {
    case LAYER_DENSE: {
      hgr_optest_init(t, "dense", NULL);
      float* x = hgr_optest_input(t, "float32", 2, (int64_t[]){37, 70});
      float* w = hgr_optest_input(t, "float32", 2, (int64_t[]){45, 70});
      float* b = hgr_optest_input(t, "float32", 1, (int64_t[]){45});
      float* y = hgr_optest_output(t, "float32", 2, (int64_t[]){37, 45});
      for (uint32_t i = 0; i < 3; ++i) hgr_optest_fill(&t->inputs[i], &rng, -1, 1);
      hgr_ref_dense(x, w, b, y, 37, 70, 45);
      break;
    }
    case LAYER_MATMUL: {
      hgr_optest_init(t, "matmul", "\"transpose_b\": \"1\"");
      float* a = hgr_optest_input(t, "float32", 2, (int64_t[]){50, 40});
      float* b = hgr_optest_input(t, "float32", 2, (int64_t[]){30, 40});
      float* c = hgr_optest_output(t, "float32", 2, (int64_t[]){50, 30});
      for (uint32_t i = 0; i < 2; ++i) hgr_optest_fill(&t->inputs[i], &rng, -1, 1);
      hgr_ref_batch_matmul(a, b, c, 1, 1, 50, 30, 40, false, true);
      break;
    }
    case LAYER_BATCH_MATMUL: {
      hgr_optest_init(t, "batch_matmul", NULL);
      float* x = hgr_optest_input(t, "float32", 3, (int64_t[]){3, 21, 17});
      float* y = hgr_optest_input(t, "float32", 3, (int64_t[]){3, 26, 17});
      float* c = hgr_optest_output(t, "float32", 3, (int64_t[]){3, 21, 26});
      for (uint32_t i = 0; i < 2; ++i) hgr_optest_fill(&t->inputs[i], &rng, -1, 1);
      hgr_ref_batch_matmul(x, y, c, 3, 3, 21, 26, 17, false, true);
      break;
    }
    default: {
      hgr_optest_init(t, "conv2d", "\"padding\": \"0\"");
      int64_t xshape[4] = {1, 24, 9, 11}, wshape[4] = {20, 24, 1, 1}, yshape[4];
      hgr_ref_conv2d_t p = {{1, 1}, {0, 0, 0, 0}, {1, 1}, 1, false};
      hgr_ref_conv2d_shape(xshape, wshape, &p, yshape);
      float* x = hgr_optest_input(t, "float32", 4, xshape);
      float* w = hgr_optest_input(t, "float32", 4, wshape);
      float* y = hgr_optest_output(t, "float32", 4, yshape);
      for (uint32_t i = 0; i < 2; ++i) hgr_optest_fill(&t->inputs[i], &rng, -1, 1);
      hgr_ref_conv2d(x, xshape, w, wshape, NULL, y, yshape, &p);
      break;
    }
  }
  /* K <= 70 products of values in [-1, 1] summed in float32 */
  hgr_optest_tolerance(t, 1e-5, 1e-5);
}

typedef struct log_lines_t {
  char text[4096];
} log_lines_t;

static void keep_log(void* user, const char* message) {
  log_lines_t* log = user;
  size_t used = strlen(log->text);
  snprintf(log->text + used, sizeof(log->text) - used, "%s\n", message);
}

/* An executor of t's graph on the test device with the given tile choices; the
 * tuning file lives in cache_dir. */
static hgr_status_t create(const hgr_optest_t* t, hgr_tuning_mode_t mode, uint32_t candidate, const char* cache_dir,
                           log_lines_t* log, hgr_graph_t** out_graph, hgr_executor_t** out_executor) {
  *out_executor = NULL;
  char* json = hgr_optest_graph_json(t);
  hgr_status_t status = hgr_graph_load_json(json, strlen(json), out_graph);
  free(json);
  if (status) return status;
  hgr_device_binding_t binding = {0, hgr_optest_device};
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  options.bindings = &binding;
  options.binding_count = 1;
  options.tuning = mode;
  options.tuning_candidate = candidate;
  options.program_cache.directory = cache_dir;
  if (log) {
    options.log = keep_log;
    options.log_user = log;
  }
  return hgr_executor_create(hgr_optest_instance, *out_graph, &options, out_executor);
}

/* The tile of the graph's op node (the last). */
static hgr_tile_choice_t op_tile(const hgr_executor_t* executor) {
  hgr_tile_choice_t choice;
  ASSERT_OK(hgr_executor_node_tile(executor, (uint32_t)hgr_graph_node_count(hgr_executor_graph(executor)) - 1, &choice));
  return choice;
}

/* Runs the executor and compares its output with t's expected values. */
static void check_output(hgr_executor_t* executor, const hgr_optest_t* t, const char* what) {
  for (uint32_t i = 0; i < t->input_count; ++i)
    ASSERT_OK(hgr_executor_set_input(executor, i, t->inputs[i].data, t->inputs[i].count * sizeof(float)));
  ASSERT_OK(hgr_executor_run(executor));
  ASSERT_OK(hgr_executor_wait(executor));
  const hgr_optest_tensor_t* want = &t->outputs[0];
  float* got = calloc(want->count, sizeof(float));
  assert_non_null(got);
  ASSERT_OK(hgr_executor_get_output(executor, 0, got, want->count * sizeof(float)));
  const float* expected = want->data;
  for (uint64_t e = 0; e < want->count; ++e)
    if (!(fabs((double)got[e] - expected[e]) <= t->atol + t->rtol * fabs((double)expected[e]))) {
      print_error("%s: element %llu is %g, expected %g\n", what, (unsigned long long)e, got[e], expected[e]);
      fail();
    }
  free(got);
}

static void every_candidate_matches_the_reference(void** state) {
  (void)state;
  for (int kind = 0; kind < LAYER_COUNT; ++kind) {
    hgr_optest_t t;
    make_layer((layer_kind_t)kind, &t);
    uint32_t count = 0, taken = 0;
    for (uint32_t c = 0; c == 0 || c < count; ++c) {
      hgr_graph_t* graph = NULL;
      hgr_executor_t* executor = NULL;
      ASSERT_OK(create(&t, HGR_TUNING_CANDIDATE, c, NULL, NULL, &graph, &executor));
      hgr_tile_choice_t choice = op_tile(executor);
      count = choice.candidate_count;
      assert_int_equal(count, 11); /* the GEMM variants of runtime/ops/ops_linalg.c */
      /* a candidate that does not fit the device falls back to the limits */
      if (choice.source == HGR_TILE_CANDIDATE) {
        assert_int_equal(choice.candidate, c);
        taken++;
      } else {
        assert_int_equal(choice.source, HGR_TILE_LIMITS);
      }
      assert_non_null(strstr(choice.key, "gemm:"));
      char what[128];
      snprintf(what, sizeof(what), "%s with tile %s (candidate %u)", t.op, choice.tile, c);
      check_output(executor, &t, what);
      hgr_executor_release(executor);
      hgr_graph_release(graph);
    }
    assert_true(taken >= 1); /* the smallest tiles fit every device this runs on */
    hgr_optest_free(&t);
  }
}

/* The tuning file in a fresh directory of its own. */
static const char* fresh_cache(const char* name, char* buffer, size_t capacity) {
  snprintf(buffer, capacity, "%s", hgr_test_tmp_path(name));
  mkdir(buffer, 0777);
  char file[600];
  snprintf(file, sizeof(file), "%s/tuning.tsv", buffer);
  unlink(file);
  return buffer;
}

static void write_file(const char* directory, const char* text) {
  char path[600];
  snprintf(path, sizeof(path), "%s/tuning.tsv", directory);
  FILE* file = fopen(path, "w");
  assert_non_null(file);
  fputs(text, file);
  fclose(file);
}

static const char* device_id(char* buffer, size_t capacity) {
  return hgr__tune_device_id(hgr_optest_device_info(), buffer, capacity);
}

/* Creates an executor of t with the file in directory and returns its op's tile. */
static hgr_tile_choice_t tile_with_file(const hgr_optest_t* t, hgr_tuning_mode_t mode, const char* directory,
                                        log_lines_t* log, bool check) {
  hgr_graph_t* graph = NULL;
  hgr_executor_t* executor = NULL;
  ASSERT_OK(create(t, mode, 0, directory, log, &graph, &executor));
  hgr_tile_choice_t choice = op_tile(executor);
  if (check) check_output(executor, t, choice.tile);
  hgr_executor_release(executor);
  hgr_graph_release(graph);
  return choice;
}

static void executor_takes_a_stored_winner_for_its_device_only(void** state) {
  (void)state;
  hgr_optest_t t;
  make_layer(LAYER_CONV1X1, &t);
  char directory[512], device[1024], text[4096];
  fresh_cache("tune-winner", directory, sizeof(directory));
  hgr_tile_choice_t limits = tile_with_file(&t, HGR_TUNING_FILE, directory, NULL, false);
  assert_int_equal(limits.source, HGR_TILE_LIMITS);
  /* another tile that fits (the smallest fits everywhere) */
  const char* other = limits.candidate == 6 ? "1x1_8x8_k16" : "1x1_4x4_k8";
  device_id(device, sizeof(device));

  snprintf(text, sizeof(text), "hgr-tune 1\n%s\t%s\t%s\t12.5\n", device, limits.key, other);
  write_file(directory, text);
  hgr_tile_choice_t tuned = tile_with_file(&t, HGR_TUNING_FILE, directory, NULL, true);
  assert_int_equal(tuned.source, HGR_TILE_TUNED);
  assert_string_equal(tuned.tile, other);
  assert_string_equal(tuned.key, limits.key);
  /* options.tuning off: the file is not read */
  hgr_tile_choice_t off = tile_with_file(&t, HGR_TUNING_OFF, directory, NULL, false);
  assert_int_equal(off.source, HGR_TILE_LIMITS);
  assert_string_equal(off.tile, limits.tile);

  /* a record of another driver version, and one naming a tile the op lacks */
  snprintf(text, sizeof(text), "hgr-tune 1\n%s.1\t%s\t%s\t12.5\n%s\tgemm:other\t%s\t1\n", device, limits.key, other,
           device, other);
  write_file(directory, text);
  hgr_tile_choice_t foreign = tile_with_file(&t, HGR_TUNING_FILE, directory, NULL, false);
  assert_int_equal(foreign.source, HGR_TILE_LIMITS);
  assert_string_equal(foreign.tile, limits.tile);
  snprintf(text, sizeof(text), "hgr-tune 1\n%s\t%s\t9x9_9x9_k9\t1\n", device, limits.key);
  write_file(directory, text);
  assert_int_equal(tile_with_file(&t, HGR_TUNING_FILE, directory, NULL, false).source, HGR_TILE_LIMITS);

  /* a file that does not parse: logged, ignored, the executor works */
  snprintf(text, sizeof(text), "hgr-tune 1\n%s\t%s\t%s\n", device, limits.key, other);
  write_file(directory, text);
  log_lines_t log = {""};
  hgr_tile_choice_t bad = tile_with_file(&t, HGR_TUNING_FILE, directory, &log, true);
  assert_int_equal(bad.source, HGR_TILE_LIMITS);
  assert_non_null(strstr(log.text, "tuning file ignored"));
  assert_non_null(strstr(log.text, "tuning.tsv line 2: 3 tab-separated fields"));
  hgr_optest_free(&t);
}

static void progress_lines(void* user, const char* line) {
  uint32_t* count = user;
  (*count)++;
  print_message("  %s\n", line);
}

static void tune_graph_writes_winners_that_later_executors_take(void** state) {
  (void)state;
  hgr_optest_t t;
  make_layer(LAYER_MATMUL, &t);
  char directory[512];
  fresh_cache("tune-pass", directory, sizeof(directory));
  char* json = hgr_optest_graph_json(&t);
  hgr_graph_t* graph = NULL;
  ASSERT_OK(hgr_graph_load_json(json, strlen(json), &graph));
  free(json);
  hgr_device_binding_t binding = {0, hgr_optest_device};
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  options.bindings = &binding;
  options.binding_count = 1;
  options.program_cache.directory = directory;
  hgr_tune_options_t tune;
  hgr_tune_options_init(&tune);
  tune.runs = 2;
  uint32_t lines = 0;
  tune.progress = progress_lines;
  tune.progress_user = &lines;
  hgr_tune_summary_t summary;
  ASSERT_OK(hgr_tune_graph(hgr_optest_instance, graph, &options, &tune, &summary));
  hgr_graph_release(graph);
  assert_int_equal(summary.layers, 1);
  assert_int_equal(summary.nodes, 1);
  assert_true(summary.tuned_ms > 0 && summary.tuned_ms <= summary.limits_ms);
  assert_non_null(strstr(summary.path, directory));
  assert_true(lines >= 8); /* a line per candidate and one for the layer */

  hgr__tune_table_t table = {0};
  ASSERT_OK(hgr__tune_table_load(hgr_allocator_system(), summary.path, &table));
  assert_int_equal(table.count, 1);
  char device[1024];
  assert_string_equal(table.records[0].device, device_id(device, sizeof(device)));
  hgr_tile_choice_t later = tile_with_file(&t, HGR_TUNING_FILE, directory, NULL, true);
  assert_int_equal(later.source, HGR_TILE_TUNED);
  assert_string_equal(later.key, table.records[0].key);
  assert_string_equal(later.tile, table.records[0].tile);
  hgr__tune_table_free(hgr_allocator_system(), &table);
  hgr_optest_free(&t);
}

static void node_tile_reports_none_for_inputs_and_range_errors(void** state) {
  (void)state;
  hgr_optest_t t;
  make_layer(LAYER_DENSE, &t);
  hgr_graph_t* graph = NULL;
  hgr_executor_t* executor = NULL;
  ASSERT_OK(create(&t, HGR_TUNING_OFF, 0, NULL, NULL, &graph, &executor));
  hgr_tile_choice_t choice;
  ASSERT_OK(hgr_executor_node_tile(executor, 0, &choice)); /* an input */
  assert_int_equal(choice.source, HGR_TILE_NONE);
  assert_string_equal(choice.tile, "");
  ASSERT_STATUS(hgr_executor_node_tile(executor, 99, &choice), HGR_STATUS_OUT_OF_RANGE, "node 99");
  ASSERT_STATUS(hgr_executor_node_tile(executor, 0, NULL), HGR_STATUS_INVALID_ARGUMENT, "out_choice");
  assert_string_equal(hgr_tile_source_name(HGR_TILE_TUNED), "tuned");
  hgr_executor_release(executor);
  hgr_graph_release(graph);
  hgr_optest_free(&t);
}

int main(int argc, char** argv) {
  const struct CMUnitTest store_tests[] = {
      cmocka_unit_test(store_reads_what_it_writes),
      cmocka_unit_test(store_looks_up_only_its_device_and_key),
      cmocka_unit_test(store_rejects_files_that_do_not_parse),
      cmocka_unit_test(store_loads_a_missing_file_as_empty_and_names_a_bad_one),
  };
  if (argc < 2) return cmocka_run_group_tests_name("tune_store", store_tests, NULL, NULL);
  const struct CMUnitTest device_tests[] = {
      cmocka_unit_test(every_candidate_matches_the_reference),
      cmocka_unit_test(executor_takes_a_stored_winner_for_its_device_only),
      cmocka_unit_test(tune_graph_writes_winners_that_later_executors_take),
      cmocka_unit_test(node_tile_reports_none_for_inputs_and_range_errors),
  };
  return hgr_optest_main(argc, argv, "tune", device_tests, sizeof(device_tests) / sizeof(device_tests[0]));
}
