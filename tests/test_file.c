/* Reading whole files under a cap (runtime/base/file.c): a regular file's size is
 * checked before anything is read, a FIFO or device is cut off once more than the
 * cap arrived (so /dev/zero fails at once), a directory is refused, and every
 * refusal names the path and the cap. hgr__file_map maps a regular file instead of
 * copying it, and reads everything else as hgr__file_read does. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "file.h"
#include "testlib.h"

/* Writes length bytes (byte i is i % 251) to path; returns the path. */
static const char* write_file(const char* name, size_t length) {
  const char* path = hgr_test_tmp_path(name);
  FILE* file = fopen(path, "wb");
  assert_non_null(file);
  for (size_t i = 0; i < length; ++i) fputc((int)(i % 251), file);
  assert_int_equal(fclose(file), 0);
  return path;
}

/* A FIFO with a child process that writes length bytes (byte i is i % 251) into it
 * and exits; *out_child is its pid, for wait_writer. */
static const char* fifo_with_writer(const char* name, size_t length, pid_t* out_child) {
  static char path[4096];
  snprintf(path, sizeof(path), "%s", hgr_test_tmp_path(name));
  unlink(path);
  assert_int_equal(mkfifo(path, 0600), 0);
  pid_t child = fork();
  assert_true(child >= 0);
  if (child == 0) {
    signal(SIGPIPE, SIG_IGN); /* a reader that stops early closes its end */
    FILE* file = fopen(path, "wb");
    for (size_t i = 0; file && i < length; ++i)
      if (fputc((int)(i % 251), file) == EOF) break;
    if (file) fclose(file);
    _exit(0);
  }
  *out_child = child;
  return path;
}

static void wait_writer(pid_t child, const char* path) {
  int status = 0;
  assert_int_equal(waitpid(child, &status, 0), child);
  unlink(path);
}

static void file_read_takes_a_regular_file_at_its_cap(void** state) {
  (void)state;
  const char* path = write_file("at_cap.bin", 100000);
  void* data = NULL;
  size_t length = 0;
  ASSERT_OK(hgr__file_read(hgr_allocator_system(), path, 100000, &data, &length));
  assert_int_equal(length, 100000);
  for (size_t i = 0; i < length; ++i) assert_int_equal(((uint8_t*)data)[i], i % 251);
  free(data);
  unlink(path);
}

static void file_read_refuses_a_regular_file_over_its_cap_naming_size_and_cap(void** state) {
  (void)state;
  const char* path = write_file("over_cap.bin", 100);
  void* data = (void*)1;
  size_t length = 7;
  ASSERT_STATUS(hgr__file_read(hgr_allocator_system(), path, 99, &data, &length), HGR_STATUS_RESOURCE_EXHAUSTED, "over_cap.bin'",
                "is 100 bytes", "more than 99 bytes");
  assert_null(data);
  assert_int_equal(length, 0);
  unlink(path);
}

static void file_read_gives_a_buffer_for_an_empty_file(void** state) {
  (void)state;
  const char* path = write_file("empty.bin", 0);
  void* data = NULL;
  size_t length = 1;
  ASSERT_OK(hgr__file_read(hgr_allocator_system(), path, 0, &data, &length));
  assert_non_null(data);
  assert_int_equal(length, 0);
  free(data);
  unlink(path);
}

static void file_read_reads_a_fifo_once_up_to_its_cap(void** state) {
  (void)state;
  pid_t writer;
  const char* path = fifo_with_writer("whole.fifo", 300000, &writer); /* more than the first 64 KiB chunk */
  void* data = NULL;
  size_t length = 0;
  ASSERT_OK(hgr__file_read(hgr_allocator_system(), path, 300000, &data, &length));
  wait_writer(writer, path);
  assert_int_equal(length, 300000);
  for (size_t i = 0; i < length; ++i) assert_int_equal(((uint8_t*)data)[i], i % 251);
  free(data);
}

static void file_read_stops_a_fifo_once_more_than_its_cap_arrived(void** state) {
  (void)state;
  pid_t writer;
  const char* path = fifo_with_writer("over_cap.fifo", 300000, &writer);
  void* data = NULL;
  size_t length = 0;
  ASSERT_STATUS(hgr__file_read(hgr_allocator_system(), path, 200000, &data, &length), HGR_STATUS_RESOURCE_EXHAUSTED, "over_cap.fifo'",
                "holds more than 200000 bytes");
  wait_writer(writer, path);
  assert_null(data);
}

static void file_read_fails_on_dev_zero_after_its_cap(void** state) {
  (void)state;
  void* data = NULL;
  size_t length = 0;
  ASSERT_STATUS(hgr__file_read(hgr_allocator_system(), "/dev/zero", 1 << 20, &data, &length), HGR_STATUS_RESOURCE_EXHAUSTED,
                "'/dev/zero' holds more than 1048576 bytes");
  assert_null(data);
}

static void file_read_refuses_a_directory(void** state) {
  (void)state;
  void* data = NULL;
  size_t length = 0;
  ASSERT_STATUS(hgr__file_read(hgr_allocator_system(), "/", 1 << 20, &data, &length), HGR_STATUS_INVALID_ARGUMENT,
                "'/' is a directory, not a file");
}

static void file_read_names_a_missing_file(void** state) {
  (void)state;
  void* data = NULL;
  size_t length = 0;
  ASSERT_STATUS(hgr__file_read(hgr_allocator_system(), hgr_test_tmp_path("missing.bin"), 1, &data, &length), HGR_STATUS_NOT_FOUND,
                "cannot open '", "missing.bin': No such file");
}

static void file_map_maps_a_regular_file_and_reads_a_fifo(void** state) {
  (void)state;
  const char* path = write_file("mapped.bin", 100000);
  hgr__file_bytes_t bytes;
  ASSERT_OK(hgr__file_map(hgr_allocator_system(), path, 100000, &bytes));
  assert_int_equal(bytes.length, 100000);
  assert_int_equal(bytes.mapped, 100000); /* no copy of a regular file */
  for (size_t i = 0; i < bytes.length; ++i) assert_int_equal(((const uint8_t*)bytes.data)[i], i % 251);
  hgr__file_unmap(hgr_allocator_system(), &bytes);
  assert_null(bytes.data);
  unlink(path);
  pid_t writer;
  path = fifo_with_writer("mapped.fifo", 300000, &writer); /* opened once: read as hgr__file_read reads it */
  ASSERT_OK(hgr__file_map(hgr_allocator_system(), path, 300000, &bytes));
  wait_writer(writer, path);
  assert_int_equal(bytes.length, 300000);
  assert_int_equal(bytes.mapped, 0);
  for (size_t i = 0; i < bytes.length; ++i) assert_int_equal(((const uint8_t*)bytes.data)[i], i % 251);
  hgr__file_unmap(hgr_allocator_system(), &bytes);
}

static void file_map_refuses_as_file_read_does(void** state) {
  (void)state;
  const char* path = write_file("map_over_cap.bin", 100);
  hgr__file_bytes_t bytes;
  ASSERT_STATUS(hgr__file_map(hgr_allocator_system(), path, 99, &bytes), HGR_STATUS_RESOURCE_EXHAUSTED,
                "map_over_cap.bin'", "is 100 bytes", "more than 99 bytes");
  assert_null(bytes.data);
  unlink(path);
  path = write_file("map_empty.bin", 0);
  ASSERT_OK(hgr__file_map(hgr_allocator_system(), path, 10, &bytes));
  assert_non_null(bytes.data);
  assert_int_equal(bytes.length, 0);
  hgr__file_unmap(hgr_allocator_system(), &bytes);
  unlink(path);
  ASSERT_STATUS(hgr__file_map(hgr_allocator_system(), "/", 1 << 20, &bytes), HGR_STATUS_INVALID_ARGUMENT,
                "'/' is a directory");
  ASSERT_STATUS(hgr__file_map(hgr_allocator_system(), hgr_test_tmp_path("map_missing.bin"), 1, &bytes),
                HGR_STATUS_NOT_FOUND, "map_missing.bin': No such file");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(file_read_takes_a_regular_file_at_its_cap),
      cmocka_unit_test(file_read_refuses_a_regular_file_over_its_cap_naming_size_and_cap),
      cmocka_unit_test(file_read_gives_a_buffer_for_an_empty_file),
      cmocka_unit_test(file_read_reads_a_fifo_once_up_to_its_cap),
      cmocka_unit_test(file_read_stops_a_fifo_once_more_than_its_cap_arrived),
      cmocka_unit_test(file_read_fails_on_dev_zero_after_its_cap),
      cmocka_unit_test(file_read_refuses_a_directory),
      cmocka_unit_test(file_read_names_a_missing_file),
      cmocka_unit_test(file_map_maps_a_regular_file_and_reads_a_fifo),
      cmocka_unit_test(file_map_refuses_as_file_read_does),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
