/* Copies between two devices in different contexts (runtime/exec/transfer.c): a
 * graph x -> __copy -> output with x on one device and the output on the other, at
 * a size of each path: staged (below 1 MiB), mapped (1 MiB and more), and large
 * enough that a read into a mapped destination takes several chunks. Every copy
 * runs twice with different data (the second run reuses the staging and the
 * mappings of the first), in both directions, and must arrive byte for byte; the
 * plan must say one command for a write from a mapped source and 16 MiB chunks for
 * a read into a mapped destination (why: transfer.c's opening comment).
 * Arguments: the two device specs, then "context-per-device" to give each device
 * its own context (two PoCL devices are otherwise one context, and copy directly). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

static const char* specs[2];
static hgr_instance_t* instance;

#define READ_CHUNK_BYTES (16u << 20)

static char* copy_graph_json(size_t bytes) {
  static const char format[] =
      "{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []},"
      "{\"op\": \"tvm_op\", \"name\": \"copy\", \"attrs\": {\"func_name\": \"__copy\", \"num_inputs\": \"1\","
      " \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[0, 0, 0]]}],"
      " \"arg_nodes\": [0], \"node_row_ptr\": [0, 1, 2], \"heads\": [[1, 0, 0]],"
      " \"attrs\": {\"storage_id\": [\"list_int\", [0, 1]], \"device_index\": [\"list_int\", [1, 4]],"
      " \"dltype\": [\"list_str\", [\"float32\", \"float32\"]],"
      " \"shape\": [\"list_shape\", [[%zu], [%zu]]]}}";
  size_t capacity = sizeof(format) + 64;
  char* json = malloc(capacity);
  assert_non_null(json);
  snprintf(json, capacity, format, bytes / 4, bytes / 4);
  return json;
}

/* Copies bytes from device spec `from` to `to` twice, each time with new data, and
 * checks the result and the planned path. */
static void copy_and_check(const char* from, const char* to, size_t bytes) {
  char* json = copy_graph_json(bytes);
  hgr_graph_t* graph = NULL;
  ASSERT_OK(hgr_graph_load_json(json, strlen(json), &graph));
  free(json);
  hgr_device_binding_t bindings[2] = {{1, from}, {4, to}};
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  options.bindings = bindings;
  options.binding_count = 2;
  hgr_executor_t* executor = NULL;
  ASSERT_OK(hgr_executor_create(instance, graph, &options, &executor));

  hgr_copy_info_t info;
  ASSERT_OK(hgr_executor_copy_info(executor, 1, &info));
  print_message("%s -> %s, %zu bytes: %s, %u chunk(s)\n", from, to, bytes, info.path, info.chunks);
  assert_int_equal(info.bytes, bytes);
  if (bytes < (1u << 20)) {
    assert_string_equal(info.path, "staged");
  } else if (!strcmp(info.path, "mapped source")) {
    assert_int_equal(info.chunks, 1);
  } else {
    assert_string_equal(info.path, "mapped destination");
    assert_int_equal(info.chunks, (bytes + READ_CHUNK_BYTES - 1) / READ_CHUNK_BYTES);
  }
  /* rusticl 22.3 cannot map asynchronously: out of it, the destination is mapped. */
  if (bytes >= (1u << 20) && !strncmp(from, "rusticl", 7)) assert_string_equal(info.path, "mapped destination");

  unsigned char* data = malloc(bytes);
  unsigned char* result = malloc(bytes);
  assert_non_null(data);
  assert_non_null(result);
  for (unsigned run = 0; run < 2; ++run) {
    for (size_t i = 0; i < bytes; ++i) data[i] = (unsigned char)(i * 7 + (i >> 12) + run * 101);
    memset(result, 0, bytes);
    ASSERT_OK(hgr_executor_set_input(executor, 0, data, bytes));
    ASSERT_OK(hgr_executor_run(executor));
    ASSERT_OK(hgr_executor_wait(executor));
    ASSERT_OK(hgr_executor_get_output(executor, 0, result, bytes));
    if (memcmp(result, data, bytes)) {
      size_t first = 0;
      while (result[first] == data[first]) ++first;
      fail_msg("%s -> %s, %zu bytes, run %u: byte %zu is %u, not %u", from, to, bytes, run, first, result[first],
               data[first]);
    }
  }
  free(data);
  free(result);
  hgr_executor_release(executor);
  hgr_graph_release(graph);
}

static void small_copies_are_staged_and_arrive_both_ways(void** state) {
  (void)state;
  copy_and_check(specs[0], specs[1], 4096);
  copy_and_check(specs[1], specs[0], 4096);
  copy_and_check(specs[0], specs[1], 260 * 1024);
  copy_and_check(specs[1], specs[0], 260 * 1024);
}

static void copies_of_a_few_mib_are_mapped_and_arrive_both_ways(void** state) {
  (void)state;
  copy_and_check(specs[0], specs[1], 1u << 20);
  copy_and_check(specs[1], specs[0], 1u << 20);
  copy_and_check(specs[0], specs[1], 3u << 20);
  copy_and_check(specs[1], specs[0], 3u << 20);
}

/* 40 MiB and 4 bytes: a mapped destination takes three chunks, the last of 4 bytes. */
static void copies_larger_than_a_chunk_arrive_both_ways(void** state) {
  (void)state;
  size_t bytes = (40u << 20) + 4;
  copy_and_check(specs[0], specs[1], bytes);
  copy_and_check(specs[1], specs[0], bytes);
}

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4 || (argc == 4 && strcmp(argv[3], "context-per-device"))) {
    fprintf(stderr, "usage: test_transfer SPEC SPEC [context-per-device]\n");
    return 2;
  }
  specs[0] = argv[1];
  specs[1] = argv[2];
  hgr_instance_options_t options;
  hgr_instance_options_init(&options);
  options.context_per_device = argc == 4;
  hgr_status_t status = hgr_instance_create(&options, &instance);
  if (status) {
    char* text = hgr_status_to_string(status);
    fprintf(stderr, "%s\n", text);
    free(text);
    hgr_status_free(status);
    return 1;
  }
  hgr_test_require_devices(instance, specs, 2);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(small_copies_are_staged_and_arrive_both_ways),
      cmocka_unit_test(copies_of_a_few_mib_are_mapped_and_arrive_both_ways),
      cmocka_unit_test(copies_larger_than_a_chunk_arrive_both_ways),
  };
  int failed = cmocka_run_group_tests_name("transfer", tests, NULL, NULL);
  hgr_instance_release(instance);
  return failed;
}
