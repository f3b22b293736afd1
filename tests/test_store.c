/* The on-disk store (runtime/base/store.c) that the program cache, the tuning records
 * and the cost cache share: the directory rule, keys -> file names, a missing entry
 * as a miss, capped reads, directories that cannot be created, atomic replacement
 * (also under concurrent writers), and checked entries whose every damage is
 * refused with its reason, never taken and never a crash. No device needed. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "byte_order.h"
#include "file.h"
#include "store.h"
#include "testlib.h"

static char root[512]; /* this process's directory for the tests */

/* A store on "<root>/<name>" (a configured directory wins over the environment). */
static hgr__store_t store_at(const char* name) {
  char directory[600];
  snprintf(directory, sizeof(directory), "%s/%s", root, name);
  hgr__store_t store;
  ASSERT_OK(hgr__store_open(hgr_allocator_system(), directory, "test store", "device or source", &store));
  return store;
}

static void remove_tree(const char* path) {
  DIR* dir = opendir(path);
  if (!dir) {
    unlink(path);
    return;
  }
  for (struct dirent* entry; (entry = readdir(dir));) {
    if (!strcmp(entry->d_name, ".") || !strcmp(entry->d_name, "..")) continue;
    char child[1024];
    snprintf(child, sizeof(child), "%s/%s", path, entry->d_name);
    remove_tree(child);
  }
  closedir(dir);
  rmdir(path);
}

/* The number of files in directory whose name contains part. */
static size_t files_with(const char* directory, const char* part) {
  DIR* dir = opendir(directory);
  size_t count = 0;
  if (!dir) return 0;
  for (struct dirent* entry; (entry = readdir(dir));)
    if (entry->d_name[0] != '.' && strstr(entry->d_name, part)) ++count;
  closedir(dir);
  return count;
}

static void write_bytes(const char* path, const void* data, size_t length) {
  FILE* file = fopen(path, "wb");
  assert_non_null(file);
  assert_int_equal(fwrite(data, 1, length, file), length);
  assert_int_equal(fclose(file), 0);
}

/* Entry name of store holds exactly the length bytes of expected. */
static void expect_entry(const hgr__store_t* store, const char* name, const char* expected, size_t length) {
  void* data = NULL;
  size_t got = 0;
  ASSERT_OK(hgr__store_read(store, name, 100, &data, &got));
  assert_non_null(data);
  assert_int_equal(got, length);
  assert_memory_equal(data, expected, length);
  free(data);
}

/* ---- the directory ---------------------------------------------------------------- */

static void the_directory_is_configured_else_hgr_cache_dir_else_xdg_else_home(void** state) {
  (void)state;
  char* saved[3] = {NULL, NULL, NULL};
  const char* names[3] = {"HGR_CACHE_DIR", "XDG_CACHE_HOME", "HOME"};
  for (int i = 0; i < 3; ++i)
    if (getenv(names[i])) saved[i] = strdup(getenv(names[i]));
  setenv("HGR_CACHE_DIR", "/env/hgr", 1);
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  setenv("HOME", "/home/someone", 1);
  hgr__store_t store;
  ASSERT_OK(hgr__store_open(hgr_allocator_system(), "/configured", "test store", NULL, &store));
  assert_string_equal(store.directory, "/configured");
  hgr__store_close(&store);
  ASSERT_OK(hgr__store_open(hgr_allocator_system(), "", "test store", NULL, &store)); /* empty means not configured */
  assert_string_equal(store.directory, "/env/hgr");
  hgr__store_close(&store);
  setenv("HGR_CACHE_DIR", "", 1);
  ASSERT_OK(hgr__store_open(hgr_allocator_system(), NULL, "test store", NULL, &store));
  assert_string_equal(store.directory, "/xdg/hgr");
  hgr__store_close(&store);
  unsetenv("XDG_CACHE_HOME");
  ASSERT_OK(hgr__store_open(hgr_allocator_system(), NULL, "test store", NULL, &store));
  assert_string_equal(store.directory, "/home/someone/.cache/hgr");
  hgr__store_close(&store);
  unsetenv("HGR_CACHE_DIR");
  unsetenv("HOME");
  ASSERT_STATUS(hgr__store_open(hgr_allocator_system(), NULL, "test store", NULL, &store), HGR_STATUS_UNAVAILABLE,
                "no directory for the test store (set HGR_CACHE_DIR or HOME)");
  assert_null(store.directory);
  hgr__store_close(&store); /* safe after a failed open */
  char* path = (char*)1;
  ASSERT_STATUS(hgr__store_path(&store, "entry", &path), HGR_STATUS_UNAVAILABLE, "has no directory");
  assert_null(path);
  for (int i = 0; i < 3; ++i)
    if (saved[i]) {
      setenv(names[i], saved[i], 1);
      free(saved[i]);
    }
}

static void a_directory_that_cannot_be_created_is_an_error_naming_it(void** state) {
  (void)state;
  char blocker[600];
  snprintf(blocker, sizeof(blocker), "%s/blocker", root);
  write_bytes(blocker, "x", 1);
  /* a regular file where a parent directory should be (root may write anywhere,
   * so permissions would not do) */
  hgr__store_t store = store_at("blocker/sub");
  ASSERT_STATUS(hgr__store_make_directory(&store), HGR_STATUS_UNAVAILABLE, "cannot create '", "blocker",
                "for the test store", "Not a directory");
  ASSERT_STATUS(hgr__store_write(&store, "entry", "x", 1, NULL, 0), HGR_STATUS_UNAVAILABLE, "blocker",
                "Not a directory");
  hgr__store_close(&store);
  /* the directory itself is a regular file: mkdir's EEXIST is not taken for success */
  store = store_at("blocker");
  ASSERT_STATUS(hgr__store_make_directory(&store), HGR_STATUS_UNAVAILABLE, "blocker'", "Not a directory");
  hgr__store_close(&store);
  char path[700];
  snprintf(path, sizeof(path), "%s/entry", blocker);
  ASSERT_STATUS(hgr__store_write_file(hgr_allocator_system(), path, "x", 1, NULL, 0), HGR_STATUS_UNAVAILABLE, "blocker'",
                "Not a directory");
  unlink(blocker);
}

static void writing_creates_the_directory_and_its_parents(void** state) {
  (void)state;
  hgr__store_t store = store_at("deep/er/still");
  ASSERT_OK(hgr__store_write(&store, "entry.tsv", "head\n", 5, "body\n", 5));
  expect_entry(&store, "entry.tsv", "head\nbody\n", 10);
  hgr__store_close(&store);
  void* data = NULL;
  size_t length = 0;
  char path[700];
  snprintf(path, sizeof(path), "%s/by-path/a/b/tuning.tsv", root);
  ASSERT_OK(hgr__store_write_file(hgr_allocator_system(), path, "t", 1, NULL, 0));
  ASSERT_OK(hgr__store_read_file(hgr_allocator_system(), path, 1, &data, &length));
  assert_int_equal(length, 1);
  free(data);
}

/* ---- keys and names --------------------------------------------------------------- */

static void keys_map_to_plain_names_of_their_hash(void** state) {
  (void)state;
  char a[HGR__STORE_NAME_MAX], b[HGR__STORE_NAME_MAX], c[HGR__STORE_NAME_MAX];
  hgr__store_key_name("program-", "pocl|cpu|3.1|options=|kernels/exp.cl|1234", ".bin", a);
  hgr__store_key_name("program-", "pocl|cpu|3.1|options=|kernels/exp.cl|1234", ".bin", b);
  hgr__store_key_name("program-", "pocl|cpu|3.1|options=|kernels/exp.cl|1235", ".bin", c);
  assert_string_equal(a, b);
  assert_string_not_equal(a, c);
  assert_int_equal(strlen(a), strlen("program-") + 16 + strlen(".bin"));
  assert_int_equal(strncmp(a, "program-", 8), 0);
  assert_string_equal(a + strlen(a) - 4, ".bin");
  /* a key with slashes, dots and a very long tail still gives one plain name */
  char key[5000];
  memset(key, '/', sizeof(key) - 1);
  key[sizeof(key) - 1] = 0;
  memcpy(key, "../..", 5);
  hgr__store_key_name("cost-copy-", key, ".tsv", c);
  assert_null(strchr(c, '/'));
  assert_int_equal(strlen(c), 10 + 16 + 4);
  hgr__store_t store = store_at("names");
  char* path = NULL;
  ASSERT_OK(hgr__store_path(&store, c, &path));
  assert_non_null(strstr(path, "/names/cost-copy-"));
  free(path);
  const char* bad[] = {"", ".", "..", "a/b", "/etc/passwd"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); ++i) {
    path = (char*)1;
    ASSERT_STATUS(hgr__store_path(&store, bad[i], &path), HGR_STATUS_INVALID_ARGUMENT, "test store entry '",
                  "not a plain file name");
    assert_null(path);
  }
  hgr__store_close(&store);
}

/* ---- reading ------------------------------------------------------------------------ */

static void a_missing_entry_is_a_miss_not_an_error(void** state) {
  (void)state;
  hgr__store_t store = store_at("never-created");
  void* data = (void*)1;
  size_t length = 7;
  ASSERT_OK(hgr__store_read(&store, "absent.bin", 100, &data, &length));
  assert_null(data);
  assert_int_equal(length, 0);
  hgr__store_close(&store);
  ASSERT_OK(hgr__store_read_file(hgr_allocator_system(), hgr_test_tmp_path("no-such-dir/tuning.tsv"), 100, &data, &length));
  assert_null(data);
}

static void an_entry_over_its_cap_or_a_directory_in_its_place_is_an_error(void** state) {
  (void)state;
  hgr__store_t store = store_at("caps");
  ASSERT_OK(hgr__store_write(&store, "big", "0123456789", 10, NULL, 0));
  void* data = NULL;
  size_t length = 0;
  ASSERT_STATUS(hgr__store_read(&store, "big", 9, &data, &length), HGR_STATUS_RESOURCE_EXHAUSTED, "/caps/big'",
                "is 10 bytes, more than 9 bytes");
  assert_null(data);
  ASSERT_OK(hgr__store_read(&store, "big", 10, &data, &length)); /* at the cap */
  assert_int_equal(length, 10);
  free(data);
  /* an empty entry reads as an empty buffer, not as a miss */
  ASSERT_OK(hgr__store_write(&store, "empty", "", 0, NULL, 0));
  ASSERT_OK(hgr__store_read(&store, "empty", 10, &data, &length));
  assert_non_null(data);
  assert_int_equal(length, 0);
  free(data);
  char path[700];
  snprintf(path, sizeof(path), "%s/a-directory", store.directory);
  assert_int_equal(mkdir(path, 0700), 0);
  ASSERT_STATUS(hgr__store_read(&store, "a-directory", 10, &data, &length), HGR_STATUS_INVALID_ARGUMENT,
                "a-directory' is a directory, not a file");
  hgr__store_close(&store);
}

/* ---- atomic replacement --------------------------------------------------------------- */

static void writing_replaces_an_entry_whole_and_leaves_no_temporary(void** state) {
  (void)state;
  hgr__store_t store = store_at("replace");
  ASSERT_OK(hgr__store_write(&store, "entry", "old contents", 12, NULL, 0));
  char path[700];
  snprintf(path, sizeof(path), "%s/entry", store.directory);
  int reader = open(path, O_RDONLY);
  assert_true(reader >= 0);
  ASSERT_OK(hgr__store_write(&store, "entry", "new", 3, " contents!", 10));
  /* a reader that opened the old entry still reads all of it; a new one, the new */
  char old[32] = {0};
  assert_int_equal(read(reader, old, sizeof(old)), 12);
  assert_string_equal(old, "old contents");
  close(reader);
  expect_entry(&store, "entry", "new contents!", 13);
  assert_int_equal(files_with(store.directory, ".tmp."), 0);
  /* a write that cannot rename (a directory holds the name) fails naming it and
   * removes its temporary */
  snprintf(path, sizeof(path), "%s/held", store.directory);
  assert_int_equal(mkdir(path, 0700), 0);
  ASSERT_STATUS(hgr__store_write(&store, "held", "x", 1, NULL, 0), HGR_STATUS_UNAVAILABLE, "cannot rename '",
                "/replace/held'");
  assert_int_equal(files_with(store.directory, ".tmp."), 0);
  hgr__store_close(&store);
}

/* Four processes replace one entry 40 times each, with 64 KiB of their own byte,
 * while this one reads it: every read is one writer's whole entry. */
static void concurrent_writers_leave_one_whole_entry(void** state) {
  (void)state;
  enum { WRITERS = 4, WRITES = 40, BYTES = 64 << 10 };
  hgr__store_t store = store_at("concurrent");
  ASSERT_OK(hgr__store_make_directory(&store));
  pid_t children[WRITERS];
  for (int w = 0; w < WRITERS; ++w) {
    children[w] = fork();
    assert_true(children[w] >= 0);
    if (children[w] == 0) {
      static unsigned char value[BYTES];
      memset(value, 'a' + w, sizeof(value));
      int failed = 0;
      for (int i = 0; i < WRITES; ++i) {
        hgr_status_t status = hgr__store_write(&store, "shared", value, sizeof(value), NULL, 0);
        failed |= status != HGR_OK;
        hgr_status_free(status);
      }
      _exit(failed);
    }
  }
  /* read until every writer is done, and once more after */
  int reads = 0, running = WRITERS;
  bool reaped[WRITERS] = {false};
  for (bool last = false; !last;) {
    last = running == 0;
    void* data = NULL;
    size_t length = 0;
    ASSERT_OK(hgr__store_read(&store, "shared", BYTES, &data, &length));
    if (data) {
      assert_int_equal(length, BYTES);
      const unsigned char* bytes = data;
      assert_true(bytes[0] >= 'a' && bytes[0] < 'a' + WRITERS);
      for (size_t b = 1; b < length; ++b) assert_int_equal(bytes[b], bytes[0]);
      free(data);
      ++reads;
    }
    for (int w = 0; w < WRITERS; ++w) {
      int status = 0;
      if (reaped[w] || waitpid(children[w], &status, WNOHANG) != children[w]) continue;
      reaped[w] = true;
      --running;
      assert_true(WIFEXITED(status));
      assert_int_equal(WEXITSTATUS(status), 0);
    }
  }
  assert_true(reads > 0);
  assert_int_equal(files_with(store.directory, ".tmp."), 0);
  hgr__store_close(&store);
}

/* ---- checked entries ------------------------------------------------------------------ */

static const char entry_key[] = "hgr-program-2|pocl|cpu|3.1|5.0|options=|kernels/exp.cl|00112233";

/* A sealed entry of entry_key and value (malloc'd, *out_size bytes). */
static unsigned char* sealed(const void* value, size_t length, size_t* out_size) {
  size_t size = hgr__store_entry_size(entry_key, length);
  assert_int_equal(size, HGR__STORE_ENTRY_HEADER + strlen(entry_key) + length);
  unsigned char* entry = malloc(size);
  assert_non_null(entry);
  memcpy(entry + HGR__STORE_ENTRY_HEADER + strlen(entry_key), value, length);
  hgr__store_entry_seal(entry, entry_key, length);
  *out_size = size;
  return entry;
}

static void checked_entries_round_trip_through_a_file(void** state) {
  (void)state;
  hgr__store_t store = store_at("checked");
  size_t size = 0;
  unsigned char* entry = sealed("binary\0bytes", 12, &size);
  char name[HGR__STORE_NAME_MAX];
  hgr__store_key_name("program-", entry_key, ".bin", name);
  ASSERT_OK(hgr__store_write(&store, name, entry, size, NULL, 0));
  free(entry);
  void* data = NULL;
  size_t length = 0;
  ASSERT_OK(hgr__store_read(&store, name, 1 << 20, &data, &length));
  const void* value = NULL;
  size_t value_length = 0;
  ASSERT_OK(hgr__store_entry_check(&store, data, length, entry_key, &value, &value_length));
  assert_int_equal(value_length, 12);
  assert_memory_equal(value, "binary\0bytes", 12);
  free(data);
  /* an empty value is an entry too */
  entry = sealed("", 0, &size);
  ASSERT_OK(hgr__store_entry_check(&store, entry, size, entry_key, &value, &value_length));
  assert_int_equal(value_length, 0);
  free(entry);
  hgr__store_close(&store);
}

static void truncated_padded_and_corrupt_entries_are_refused_with_the_reason(void** state) {
  (void)state;
  hgr__store_t store = {.what = "test store", .key_names = "device or source"};
  size_t size = 0;
  unsigned char* entry = sealed("0123456789abcdef", 16, &size);
  const void* value = (void*)1;
  size_t value_length = 9;
  /* every truncation: too short for a header, or sizes that do not add up */
  for (size_t cut = 0; cut < size; ++cut) {
    hgr_status_t status = hgr__store_entry_check(&store, entry, cut, entry_key, &value, &value_length);
    assert_int_equal(hgr_status_code(status), HGR_STATUS_DATA_LOSS);
    assert_non_null(strstr(hgr_status_message(status), cut < HGR__STORE_ENTRY_HEADER ? "not a test store entry"
                                                                                       : "truncated or padded"));
    hgr_status_free(status);
    assert_null(value);
    assert_int_equal(value_length, 0);
  }
  unsigned char* padded = malloc(size + 1);
  memcpy(padded, entry, size);
  padded[size] = 0;
  ASSERT_STATUS(hgr__store_entry_check(&store, padded, size + 1, entry_key, &value, &value_length),
                HGR_STATUS_DATA_LOSS, "truncated or padded (its sizes do not add up)");
  free(padded);
  /* one flipped bit anywhere in the value */
  entry[size - 3] ^= 0x10;
  ASSERT_STATUS(hgr__store_entry_check(&store, entry, size, entry_key, &value, &value_length),
                HGR_STATUS_DATA_LOSS, "corrupt (checksum mismatch)");
  entry[size - 3] ^= 0x10;
  /* another key, of the same length or not */
  char other[sizeof(entry_key)];
  memcpy(other, entry_key, sizeof(entry_key));
  other[20] ^= 1;
  ASSERT_STATUS(hgr__store_entry_check(&store, entry, size, other, &value, &value_length),
                HGR_STATUS_FAILED_PRECONDITION, "written for another device or source (its key differs)");
  ASSERT_STATUS(hgr__store_entry_check(&store, entry, size, "short key", &value, &value_length),
                HGR_STATUS_FAILED_PRECONDITION, "its key differs");
  /* another magic, as an entry of the program cache's format before the store */
  memcpy(entry, "HGRPROG1", 8);
  ASSERT_STATUS(hgr__store_entry_check(&store, entry, size, entry_key, &value, &value_length),
                HGR_STATUS_DATA_LOSS, "not a test store entry (bad magic or too short)");
  memcpy(entry, "HGRSTOR1", 8);
  hgr__le_store(entry + 12, 1, 4); /* the reserved word */
  ASSERT_STATUS(hgr__store_entry_check(&store, entry, size, entry_key, &value, &value_length),
                HGR_STATUS_DATA_LOSS, "not a test store entry");
  hgr__le_store(entry + 12, 0, 4);
  ASSERT_OK(hgr__store_entry_check(&store, entry, size, entry_key, &value, &value_length));
  free(entry);
}

/* Lengths a stranger forged so that their sum wraps around to the entry's size:
 * refused before the checksum reads past the entry. */
static void forged_lengths_do_not_wrap_around(void** state) {
  (void)state;
  hgr__store_t store = {.what = "test store"};
  size_t size = 0;
  unsigned char* entry = sealed("value", 5, &size);
  const void* value = NULL;
  size_t value_length = 0;
  uint64_t key_length = strlen(entry_key);
  /* key length 2^32 - 1 and a value length near 2^64 whose sum with the header
   * is size + 2^64 */
  hgr__le_store(entry + 8, UINT32_MAX, 4);
  hgr__le_store(entry + 16, UINT64_MAX - (HGR__STORE_ENTRY_HEADER + (uint64_t)UINT32_MAX - size) + 1, 8);
  ASSERT_STATUS(hgr__store_entry_check(&store, entry, size, entry_key, &value, &value_length), HGR_STATUS_DATA_LOSS,
                "truncated or padded");
  /* a value length alone past the entry */
  hgr__le_store(entry + 8, key_length, 4);
  hgr__le_store(entry + 16, UINT64_MAX, 8);
  ASSERT_STATUS(hgr__store_entry_check(&store, entry, size, entry_key, &value, &value_length), HGR_STATUS_DATA_LOSS,
                "truncated or padded");
  assert_null(value);
  assert_int_equal(hgr__store_entry_size(entry_key, SIZE_MAX), 0);
  assert_int_equal(hgr__store_entry_size(entry_key, SIZE_MAX - HGR__STORE_ENTRY_HEADER - key_length + 1), 0);
  free(entry);
}

/* A corrupt entry on disk, as a stranger leaves it: read back, refused, then
 * replaced by a good one. */
static void a_corrupt_file_is_refused_then_replaced(void** state) {
  (void)state;
  hgr__store_t store = store_at("corrupt");
  char name[HGR__STORE_NAME_MAX];
  hgr__store_key_name("program-", entry_key, ".bin", name);
  ASSERT_OK(hgr__store_write(&store, name, "garbage that is long enough to hold a header", 44, NULL, 0));
  void* data = NULL;
  size_t length = 0;
  const void* value = NULL;
  size_t value_length = 0;
  ASSERT_OK(hgr__store_read(&store, name, 1 << 20, &data, &length));
  ASSERT_STATUS(hgr__store_entry_check(&store, data, length, entry_key, &value, &value_length),
                HGR_STATUS_DATA_LOSS, "not a test store entry");
  free(data);
  size_t size = 0;
  unsigned char* entry = sealed("good", 4, &size);
  ASSERT_OK(hgr__store_write(&store, name, entry, size, NULL, 0));
  free(entry);
  ASSERT_OK(hgr__store_read(&store, name, 1 << 20, &data, &length));
  ASSERT_OK(hgr__store_entry_check(&store, data, length, entry_key, &value, &value_length));
  assert_memory_equal(value, "good", 4);
  free(data);
  hgr__store_close(&store);
}

int main(void) {
  snprintf(root, sizeof(root), "%s", hgr_test_tmp_path("store"));
  remove_tree(root);
  if (mkdir(root, 0700) != 0) {
    fprintf(stderr, "cannot create %s: %s\n", root, strerror(errno));
    return 1;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(the_directory_is_configured_else_hgr_cache_dir_else_xdg_else_home),
      cmocka_unit_test(a_directory_that_cannot_be_created_is_an_error_naming_it),
      cmocka_unit_test(writing_creates_the_directory_and_its_parents),
      cmocka_unit_test(keys_map_to_plain_names_of_their_hash),
      cmocka_unit_test(a_missing_entry_is_a_miss_not_an_error),
      cmocka_unit_test(an_entry_over_its_cap_or_a_directory_in_its_place_is_an_error),
      cmocka_unit_test(writing_replaces_an_entry_whole_and_leaves_no_temporary),
      cmocka_unit_test(concurrent_writers_leave_one_whole_entry),
      cmocka_unit_test(checked_entries_round_trip_through_a_file),
      cmocka_unit_test(truncated_padded_and_corrupt_entries_are_refused_with_the_reason),
      cmocka_unit_test(forged_lengths_do_not_wrap_around),
      cmocka_unit_test(a_corrupt_file_is_refused_then_replaced),
  };
  int failed = cmocka_run_group_tests_name("store", tests, NULL, NULL);
  remove_tree(root);
  return failed;
}
