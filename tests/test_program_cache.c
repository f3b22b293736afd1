/* The program binary cache: stored after the first run, loaded next time; corrupt,
 * truncated and foreign entries are rejected and rebuilt; blobs can live in the
 * embedder's memory; concurrent processes share a directory safely.
 *
 *   test_program_cache SPEC...   the devices to build for (each gets the graph's
 *                                nodes in turn through keys 1, 4, 5) */
#include <dirent.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"

static const char* specs[3];
static size_t spec_count;
static hgr_instance_t* instance;
static char directory[256];

/* x -> exp on key 1 -> __copy to key 4 -> tanh -> __copy to key 5 -> relu */
static const char graph_json[] =
    "{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []},"
    " {\"op\": \"tvm_op\", \"name\": \"e\", \"attrs\": {\"func_name\": \"exp\", \"num_inputs\": \"1\", \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[0, 0, 0]]},"
    " {\"op\": \"tvm_op\", \"name\": \"c1\", \"attrs\": {\"func_name\": \"__copy\", \"num_inputs\": \"1\", \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[1, 0, 0]]},"
    " {\"op\": \"tvm_op\", \"name\": \"t\", \"attrs\": {\"func_name\": \"tanh\", \"num_inputs\": \"1\", \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[2, 0, 0]]},"
    " {\"op\": \"tvm_op\", \"name\": \"c2\", \"attrs\": {\"func_name\": \"__copy\", \"num_inputs\": \"1\", \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[3, 0, 0]]},"
    " {\"op\": \"tvm_op\", \"name\": \"r\", \"attrs\": {\"func_name\": \"relu\", \"num_inputs\": \"1\", \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[4, 0, 0]]}],"
    " \"arg_nodes\": [0], \"node_row_ptr\": [0, 1, 2, 3, 4, 5, 6], \"heads\": [[5, 0, 0]],"
    " \"attrs\": {\"storage_id\": [\"list_int\", [0, 1, 2, 3, 4, 5]], \"device_index\": [\"list_int\", [1, 1, 4, 4, 5, 5]],"
    " \"shape\": [\"list_shape\", [[33], [33], [33], [33], [33], [33]]],"
    " \"dltype\": [\"list_str\", [\"float32\", \"float32\", \"float32\", \"float32\", \"float32\", \"float32\"]]}}";

typedef struct memory_cache_t {
  char* keys[8];
  unsigned char* blobs[8];
  size_t sizes[8];
  size_t count;
  uint32_t loads, stores;
  bool corrupt_next_load;
} memory_cache_t;

static bool memory_load(void* user, const char* key, void** out_blob, size_t* out_size) {
  memory_cache_t* cache = user;
  cache->loads++;
  for (size_t i = 0; i < cache->count; ++i)
    if (!strcmp(cache->keys[i], key)) {
      *out_blob = malloc(cache->sizes[i]);
      memcpy(*out_blob, cache->blobs[i], cache->sizes[i]);
      if (cache->corrupt_next_load) ((unsigned char*)*out_blob)[cache->sizes[i] - 1] ^= 0x5a;
      *out_size = cache->sizes[i];
      return true;
    }
  return false;
}

static void memory_store(void* user, const char* key, const void* blob, size_t size) {
  memory_cache_t* cache = user;
  cache->stores++;
  for (size_t i = 0; i < cache->count; ++i)
    if (!strcmp(cache->keys[i], key)) {
      free(cache->blobs[i]);
      cache->blobs[i] = malloc(size);
      memcpy(cache->blobs[i], blob, size);
      cache->sizes[i] = size;
      return;
    }
  assert_true(cache->count < 8);
  cache->keys[cache->count] = strdup(key);
  cache->blobs[cache->count] = malloc(size);
  memcpy(cache->blobs[cache->count], blob, size);
  cache->sizes[cache->count++] = size;
}

typedef struct log_t {
  char text[8192];
} log_t;

static void collect_log(void* user, const char* message) {
  log_t* log = user;
  size_t used = strlen(log->text);
  snprintf(log->text + used, sizeof(log->text) - used, "%s\n", message);
}

/* The program pool run_once's executors share (NULL: none). */
static hgr_program_pool_t* pool_for_runs;

/* Creates an executor with the given cache settings, runs it once, checks the
 * output and returns its program stats. */
static hgr_program_stats_t run_once(hgr_program_cache_t cache, log_t* log) {
  hgr_graph_t* graph = NULL;
  ASSERT_OK(hgr_graph_load_json(graph_json, strlen(graph_json), &graph));
  hgr_device_binding_t bindings[3];
  int32_t keys[3] = {1, 4, 5};
  for (size_t k = 0; k < 3; ++k) bindings[k] = (hgr_device_binding_t){keys[k], specs[k % spec_count]};
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  options.bindings = bindings;
  options.binding_count = 3;
  options.program_cache = cache;
  options.program_pool = pool_for_runs;
  if (log) {
    log->text[0] = 0;
    options.log = collect_log;
    options.log_user = log;
  }
  hgr_executor_t* executor = NULL;
  ASSERT_OK(hgr_executor_create(instance, graph, &options, &executor));
  float x[33], y[33];
  for (int i = 0; i < 33; ++i) x[i] = (float)(i - 16) / 8.0f;
  ASSERT_OK(hgr_executor_set_input(executor, 0, x, sizeof(x)));
  ASSERT_OK(hgr_executor_run(executor));
  ASSERT_OK(hgr_executor_wait(executor));
  ASSERT_OK(hgr_executor_get_output(executor, 0, y, sizeof(y)));
  for (int i = 0; i < 33; ++i) assert_true(fabsf(y[i] - tanhf(expf(x[i]))) < 1e-5f);
  /* A second run stores nothing more. */
  ASSERT_OK(hgr_executor_run(executor));
  ASSERT_OK(hgr_executor_wait(executor));
  hgr_program_stats_t stats = hgr_executor_program_stats(executor);
  hgr_executor_release(executor);
  hgr_graph_release(graph);
  return stats;
}

/* Files in the test's directory, stored on every driver (PoCL's too: its binaries
 * are what the tests here check). */
static hgr_program_cache_t files(void) {
  hgr_program_cache_t cache = {.mode = HGR_PROGRAM_CACHE_FILES, .directory = directory, .store_always = true};
  return cache;
}

/* The paths of the cache's files (at most 8), sorted. */
static size_t cache_files(char paths[8][600]) {
  DIR* dir = opendir(directory);
  size_t count = 0;
  if (!dir) return 0;
  for (struct dirent* entry; (entry = readdir(dir));) {
    if (entry->d_name[0] == '.') continue;
    assert_true(count < 8);
    assert_null(strstr(entry->d_name, ".tmp.")); /* no temporary left behind */
    snprintf(paths[count++], 600, "%.255s/%.255s", directory, entry->d_name);
  }
  closedir(dir);
  return count;
}

static void remove_cache(void) {
  char paths[8][600];
  size_t count = cache_files(paths);
  for (size_t i = 0; i < count; ++i) remove(paths[i]);
  rmdir(directory);
}

static void distinct_programs(size_t* out) {
  /* one program per distinct device */
  size_t distinct = 0;
  for (size_t i = 0; i < spec_count; ++i) {
    bool seen = false;
    for (size_t j = 0; j < i; ++j) seen |= !strcmp(specs[i], specs[j]);
    distinct += !seen;
  }
  *out = distinct;
}

static void binaries_are_stored_after_the_first_run_and_loaded_next_time(void** state) {
  (void)state;
  remove_cache();
  size_t programs;
  distinct_programs(&programs);
  log_t log;
  hgr_program_stats_t cold = run_once(files(), &log);
  assert_int_equal(cold.programs, programs);
  assert_int_equal(cold.from_source, programs);
  assert_int_equal(cold.from_cache, 0);
  assert_int_equal(cold.stored, programs);
  assert_non_null(strstr(log.text, "program cache: miss"));
  char paths[8][600];
  assert_int_equal(cache_files(paths), programs);
  hgr_program_stats_t warm = run_once(files(), &log);
  assert_int_equal(warm.from_cache, programs);
  assert_int_equal(warm.from_source, 0);
  assert_int_equal(warm.stored, 0);
  assert_non_null(strstr(log.text, "program cache: hit"));
}

/* Executors sharing a program pool build each program once: the next one takes
 * them from the pool, neither from the cache nor from source; without the pool it
 * builds again. */
static void a_pool_shares_programs_between_executors(void** state) {
  (void)state;
  size_t programs;
  distinct_programs(&programs);
  hgr_program_cache_t off = {.mode = HGR_PROGRAM_CACHE_OFF};
  ASSERT_OK(hgr_program_pool_create(&pool_for_runs));
  hgr_program_stats_t first = run_once(off, NULL);
  assert_int_equal(first.from_source, programs);
  assert_int_equal(first.from_pool, 0);
  hgr_program_stats_t second = run_once(off, NULL);
  assert_int_equal(second.programs, programs);
  assert_int_equal(second.from_pool, programs);
  assert_int_equal(second.from_source, 0);
  assert_int_equal(second.from_cache, 0);
  hgr_program_pool_release(pool_for_runs);
  pool_for_runs = NULL;
  hgr_program_stats_t third = run_once(off, NULL);
  assert_int_equal(third.from_source, programs);
  assert_int_equal(third.from_pool, 0);
}

/* Rewrites one cache file with `damage` applied, then checks it is rejected with a
 * message containing why, rebuilt, and stored again so the next run hits. */
static void check_rejected(void (*damage)(unsigned char* data, size_t* size), const char* why) {
  size_t programs;
  distinct_programs(&programs);
  remove_cache();
  run_once(files(), NULL);
  char paths[8][600];
  assert_int_equal(cache_files(paths), programs);
  FILE* file = fopen(paths[0], "rb");
  assert_non_null(file);
  /* the whole file: the elementwise family's binary is over 8 MB on PoCL */
  fseek(file, 0, SEEK_END);
  long length = ftell(file);
  fseek(file, 0, SEEK_SET);
  assert_true(length > 0);
  unsigned char* data = malloc((size_t)length + 64); /* damage may pad */
  assert_non_null(data);
  size_t size = fread(data, 1, (size_t)length, file);
  assert_int_equal(size, (size_t)length);
  fclose(file);
  damage(data, &size);
  file = fopen(paths[0], "wb");
  assert_int_equal(fwrite(data, 1, size, file), size);
  fclose(file);
  free(data);
  log_t log;
  hgr_program_stats_t stats = run_once(files(), &log);
  if (!strstr(log.text, why)) print_error("log lacks '%s':\n%s", why, log.text);
  assert_non_null(strstr(log.text, why));
  assert_non_null(strstr(log.text, "rebuilding from source"));
  assert_int_equal(stats.rejected, 1);
  assert_int_equal(stats.from_source, 1);
  assert_int_equal(stats.from_cache, programs - 1);
  assert_int_equal(stats.stored, 1);
  stats = run_once(files(), NULL);
  assert_int_equal(stats.from_cache, programs);
}

static void flip_last_byte(unsigned char* data, size_t* size) { data[*size - 1] ^= 0x5a; }
static void truncate_half(unsigned char* data, size_t* size) {
  (void)data;
  *size /= 2;
}
static void other_driver(unsigned char* data, size_t* size) {
  /* the key's driver field: "|<driver version>|options=" -> change one character
   * before "|options=" (the file name still matches the real key) */
  char* options = NULL;
  for (size_t i = 0; i + 9 <= *size && !options; ++i)
    if (!memcmp(data + i, "|options=", 9)) options = (char*)data + i;
  assert_non_null(options);
  options[-1] = options[-1] == 'X' ? 'Y' : 'X';
}
static void garbage(unsigned char* data, size_t* size) {
  memset(data, 0x42, *size > 64 ? 64 : *size);
}

static void corrupt_entries_are_rejected_and_rebuilt(void** state) {
  (void)state;
  check_rejected(flip_last_byte, "corrupt (checksum mismatch)");
  check_rejected(truncate_half, "truncated");
}

static void entries_of_another_driver_version_are_rejected(void** state) {
  (void)state;
  check_rejected(other_driver, "written for another platform, device, driver");
  check_rejected(garbage, "not a program cache entry");
}

static void blobs_can_live_in_the_embedders_memory(void** state) {
  (void)state;
  size_t programs;
  distinct_programs(&programs);
  memory_cache_t memory = {0};
  hgr_program_cache_t cache = {.mode = HGR_PROGRAM_CACHE_CALLBACKS, .load = memory_load, .store = memory_store, .user = &memory};
  hgr_program_stats_t stats = run_once(cache, NULL);
  assert_int_equal(stats.from_source, programs);
  assert_int_equal(memory.stores, programs);
  assert_int_equal(memory.count, programs);
  stats = run_once(cache, NULL);
  assert_int_equal(stats.from_cache, programs);
  assert_int_equal(memory.stores, programs);
  memory.corrupt_next_load = true;
  log_t log;
  stats = run_once(cache, &log);
  assert_int_equal(stats.rejected, programs);
  assert_non_null(strstr(log.text, "corrupt"));
  for (size_t i = 0; i < memory.count; ++i) {
    free(memory.keys[i]);
    free(memory.blobs[i]);
  }
}

static void the_cache_can_be_switched_off(void** state) {
  (void)state;
  remove_cache();
  hgr_program_cache_t cache = {.mode = HGR_PROGRAM_CACHE_OFF, .directory = directory};
  hgr_program_stats_t stats = run_once(cache, NULL);
  assert_int_equal(stats.from_cache, 0);
  assert_int_equal(stats.stored, 0);
  char paths[8][600];
  assert_int_equal(cache_files(paths), 0);
}

/* Several processes at once on an empty directory: all succeed, every file is whole. */
static void concurrent_processes_share_a_directory(void** state) {
  (void)state;
  remove_cache();
  pid_t children[4];
  for (int c = 0; c < 4; ++c) {
    children[c] = fork();
    assert_true(children[c] >= 0);
    if (children[c] == 0) {
      /* A fresh instance in the child: the parent's OpenCL state is not forked. */
      hgr_instance_t* own = NULL;
      if (hgr_instance_create(NULL, &own)) _exit(3);
      for (size_t i = 0; i < spec_count; ++i) {
        size_t index;
        hgr_status_t missing = hgr_instance_find_device(own, specs[i], &index);
        if (missing) _exit(HGR_TEST_SKIP); /* main then skips the whole test */
      }
      instance = own;
      hgr_program_stats_t stats = run_once(files(), NULL);
      hgr_instance_release(own);
      _exit(stats.programs ? 0 : 4);
    }
  }
  for (int c = 0; c < 4; ++c) {
    int status = 0;
    assert_int_equal(waitpid(children[c], &status, 0), children[c]);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) == HGR_TEST_SKIP) return;
    assert_int_equal(WEXITSTATUS(status), 0);
  }
  size_t programs;
  distinct_programs(&programs);
  ASSERT_OK(hgr_instance_create(NULL, &instance)); /* the forks are done: kept for the other tests */
  hgr_test_require_devices(instance, specs, spec_count);
  hgr_program_stats_t stats = run_once(files(), NULL);
  assert_int_equal(stats.from_cache, programs);
  assert_int_equal(stats.rejected, 0);
}

/* PoCL with its kernel cache on (the default; run without POCL_KERNEL_CACHE=0):
 * hgr leaves the programs to it instead of taking binaries, which would compile
 * every kernel of each program; the next executor builds from source (PoCL's cache
 * makes that quick) and runs right. */
static void pocl_keeps_its_programs_itself(void** state) {
  (void)state;
  remove_cache();
  size_t programs;
  distinct_programs(&programs);
  hgr_program_cache_t by_default = files();
  by_default.store_always = false;
  log_t log;
  hgr_program_stats_t cold = run_once(by_default, &log);
  assert_int_equal(cold.from_source, programs);
  assert_int_equal(cold.stored, 0);
  assert_int_equal(cold.left_to_driver, programs);
  char paths[8][600];
  assert_int_equal(cache_files(paths), 0);
  hgr_program_stats_t warm = run_once(by_default, &log);
  assert_int_equal(warm.from_source, programs);
  assert_int_equal(warm.left_to_driver, programs);
  /* through callbacks the embedder asked for the blobs: they are taken */
  memory_cache_t memory = {0};
  hgr_program_cache_t cache = {.mode = HGR_PROGRAM_CACHE_CALLBACKS, .load = memory_load, .store = memory_store, .user = &memory};
  hgr_program_stats_t kept = run_once(cache, NULL);
  assert_int_equal(kept.stored, programs);
  assert_int_equal(kept.left_to_driver, 0);
  for (size_t i = 0; i < memory.count; ++i) {
    free(memory.keys[i]);
    free(memory.blobs[i]);
  }
}

int main(int argc, char** argv) {
  if (argc >= 3 && !strcmp(argv[1], "left-to-pocl")) {
    /* usage: test_program_cache left-to-pocl pocl:0 */
    const char* cache = getenv("POCL_KERNEL_CACHE");
    if (cache && !strcmp(cache, "0")) {
      fprintf(stderr, "POCL_KERNEL_CACHE=0: PoCL keeps nothing, so this test has nothing to check\n");
      return HGR_TEST_SKIP;
    }
    spec_count = 1;
    specs[0] = argv[2];
    snprintf(directory, sizeof(directory), "%s", hgr_test_tmp_path("program-cache"));
    ASSERT_OK(hgr_instance_create(NULL, &instance));
    hgr_test_require_devices(instance, specs, spec_count);
    const struct CMUnitTest tests[] = {cmocka_unit_test(pocl_keeps_its_programs_itself)};
    int failed = cmocka_run_group_tests_name("program_cache_left_to_pocl", tests, NULL, NULL);
    remove_cache();
    hgr_instance_release(instance);
    return failed;
  }
  if (argc < 2 || argc > 4) {
    fprintf(stderr, "usage: test_program_cache SPEC... | left-to-pocl SPEC\n");
    return 2;
  }
  spec_count = (size_t)argc - 1;
  for (size_t i = 0; i < spec_count; ++i) specs[i] = argv[i + 1];
  snprintf(directory, sizeof(directory), "%s", hgr_test_tmp_path("program-cache"));
  /* Children are forked before this process touches OpenCL (drivers' threads do not
   * survive a fork). */
  const struct CMUnitTest forked[] = {cmocka_unit_test(concurrent_processes_share_a_directory)};
  int failed = cmocka_run_group_tests_name("program_cache_processes", forked, NULL, NULL);
  hgr_status_t status = instance ? HGR_OK : hgr_instance_create(NULL, &instance);
  if (status) {
    hgr_status_free(status);
    return 1;
  }
  hgr_test_require_devices(instance, specs, spec_count);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(binaries_are_stored_after_the_first_run_and_loaded_next_time),
      cmocka_unit_test(corrupt_entries_are_rejected_and_rebuilt),
      cmocka_unit_test(entries_of_another_driver_version_are_rejected),
      cmocka_unit_test(blobs_can_live_in_the_embedders_memory),
      cmocka_unit_test(the_cache_can_be_switched_off),
      cmocka_unit_test(a_pool_shares_programs_between_executors),
  };
  failed += cmocka_run_group_tests_name("program_cache", tests, NULL, NULL);
  remove_cache();
  hgr_instance_release(instance);
  return failed;
}
