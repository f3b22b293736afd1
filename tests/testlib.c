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

hgr_instance_t* hgr_test_instance_or_exit(void) {
  hgr_instance_t* instance = NULL;
  hgr_status_t status = hgr_instance_create(NULL, &instance);
  if (status) {
    char* text = hgr_status_to_string(status);
    fprintf(stderr, "cannot create an instance: %s\n", text);
    free(text);
    hgr_status_free(status);
    exit(1);
  }
  return instance;
}

hgr_node_placement_t hgr_test_placed_node(const hgr_placement_t* placement, uint32_t source_node, uint32_t* out_id) {
  const hgr_graph_t* graph = hgr_placement_graph(placement);
  for (uint32_t n = 0; n < hgr_graph_node_count(graph); ++n) {
    hgr_node_placement_t node;
    ASSERT_OK(hgr_placement_node(placement, n, &node));
    if (node.source_node == source_node) {
      if (out_id) *out_id = n;
      return node;
    }
  }
  fail_msg("no placed node comes from node %u", source_node);
  hgr_node_placement_t none = {0};
  return none;
}
