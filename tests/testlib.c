#include "testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void hgr_test_assert_status(hgr_status_t status, hgr_status_code_t code, const char* expr,
                            const char* file, int line, ...) {
  if (!status) {
    print_error("%s:%d: %s succeeded, expected %s\n", file, line, expr, hgr_status_code_name(code));
    fail();
  }
  char* text = hgr_status_to_string(status);
  int ok = hgr_status_code(status) == code;
  if (!ok)
    print_error("%s:%d: %s returned %s, expected code %s\n", file, line, expr, text,
                hgr_status_code_name(code));
  va_list args;
  va_start(args, line);
  for (const char* needle; (needle = va_arg(args, const char*));) {
    if (!strstr(text, needle)) {
      print_error("%s:%d: %s: message lacks '%s': %s\n", file, line, expr, needle, text);
      ok = 0;
    }
  }
  va_end(args);
  free(text);
  hgr_status_free(status);
  if (!ok) fail();
}

void hgr_test_require_devices(const hgr_instance_t* instance, const char* const* specs,
                              size_t count) {
  for (size_t i = 0; i < count; ++i) {
    size_t index;
    hgr_status_t status = hgr_instance_find_device(instance, specs[i], &index);
    if (status) {
      char* text = hgr_status_to_string(status);
      printf("skipped: this test needs device %s: %s\n", specs[i], text);
      free(text);
      hgr_status_free(status);
      exit(HGR_TEST_SKIP);
    }
  }
}

static char path_buffer[4096];

const char* hgr_test_tmp_path(const char* name) {
  const char* dir = getenv("HGR_TEST_TMP_DIR");
  snprintf(path_buffer, sizeof(path_buffer), "%s/%ld-%s", dir && *dir ? dir : "/tmp",
           (long)getpid(), name);
  return path_buffer;
}

const char* hgr_test_data_path(const char* name) {
  const char* dir = getenv("HGR_TEST_DATA_DIR");
  snprintf(path_buffer, sizeof(path_buffer), "%s/%s", dir && *dir ? dir : "tests/data", name);
  return path_buffer;
}

void hgr_test_rng_seed(hgr_test_rng_t* rng, uint64_t seed) {
  rng->state = seed ? seed : 0x9E3779B97F4A7C15ull;
}

uint64_t hgr_test_rng_next(hgr_test_rng_t* rng) {
  uint64_t x = rng->state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  rng->state = x;
  return x * 0x2545F4914F6CDD1Dull;
}

float hgr_test_rng_float(hgr_test_rng_t* rng, float lo, float hi) {
  float unit = (float)(hgr_test_rng_next(rng) >> 40) / (float)(1ull << 24);
  return lo + (hi - lo) * unit;
}

uint32_t hgr_test_rng_below(hgr_test_rng_t* rng, uint32_t n) {
  return n ? (uint32_t)(hgr_test_rng_next(rng) % n) : 0;
}

