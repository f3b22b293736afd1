/* Writing graphs as TVM graph JSON (hgr_graph_write_json): every example graph,
 * random graphs from graphgen.c and graphs built in memory load back as the same
 * graph; the text keeps TVM's rules (string attrs, the four standard attrs on tvm_op
 * nodes only, device_index only with device keys, metadata last); names that need
 * escaping survive; a failed write is an error.
 *
 *   test_graph_write EXAMPLES_DIR TEST_DATA_GRAPHS_DIR */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

#include "graph_internal.h"
#include "graphgen.h"
#include "testlib.h"

static const char* graph_dirs[2];

/* graph written to memory; free() the result. */
static char* write_text(const hgr_graph_t* graph) {
  char* text = NULL;
  size_t length = 0;
  FILE* out = open_memstream(&text, &length);
  assert_non_null(out);
  hgr_status_t status = hgr_graph_write_json(graph, out);
  assert_int_equal(fclose(out), 0);
  ASSERT_OK(status);
  return text;
}

/* What TVM's loaders require of the text, checked on the parsed document. */
static void assert_tvm_form(const char* text, const hgr_graph_t* graph) {
  cJSON* root = cJSON_Parse(text);
  assert_non_null(root);
  const cJSON* last = root->child;
  while (last->next) last = last->next;
  if (graph->binding_count)
    assert_string_equal(last->string, "metadata");
  else
    assert_null(cJSON_GetObjectItemCaseSensitive(root, "metadata"));
  const cJSON* node;
  cJSON_ArrayForEach(node, cJSON_GetObjectItemCaseSensitive(root, "nodes")) {
    const char* op = cJSON_GetObjectItemCaseSensitive(node, "op")->valuestring;
    const cJSON* attrs = cJSON_GetObjectItemCaseSensitive(node, "attrs");
    if (strcmp(op, "null") == 0) continue; /* a loaded null node may keep its attrs */
    assert_non_null(attrs);
    static const char* const standard[] = {"func_name", "num_inputs", "num_outputs", "flatten_data"};
    for (int k = 0; k < 4; ++k) assert_non_null(cJSON_GetObjectItemCaseSensitive(attrs, standard[k]));
    const cJSON* attr;
    cJSON_ArrayForEach(attr, attrs) assert_true(cJSON_IsString(attr));
  }
  const cJSON* columns = cJSON_GetObjectItemCaseSensitive(root, "attrs");
  assert_int_equal(cJSON_GetObjectItemCaseSensitive(columns, "device_index") != NULL, graph->has_device_index);
  assert_null(cJSON_GetObjectItemCaseSensitive(columns, "storage_scope"));
  cJSON_Delete(root);
}

/* Writes graph, reloads it and checks that it is the same graph, that the text has
 * TVM's form and that writing the reloaded graph gives the same text. */
static void assert_round_trip(const hgr_graph_t* graph, const char* what) {
  char* text = write_text(graph);
  hgr_graph_t* again = NULL;
  hgr_status_t status = hgr_graph_load_json(text, strlen(text), &again);
  if (status) {
    char* message = hgr_status_to_string(status);
    print_error("%s: the written graph does not load: %s\n%s\n", what, message, text);
    free(message);
    hgr_status_free(status);
    fail();
  }
  char difference[256] = "";
  if (!hgr__graph_same(graph, again, difference, sizeof(difference))) {
    print_error("%s: the written graph loads as another graph: %s\n", what, difference);
    fail();
  }
  assert_tvm_form(text, graph);
  char* text_again = write_text(again);
  assert_string_equal(text, text_again);
  free(text_again);
  hgr_graph_release(again);
  free(text);
}

static void example_graphs_load_back_the_same(void** state) {
  (void)state;
  size_t count = 0;
  for (int d = 0; d < 2; ++d) {
    DIR* dir = opendir(graph_dirs[d]);
    if (!dir) {
      print_error("cannot open %s\n", graph_dirs[d]);
      fail();
    }
    for (struct dirent* item; (item = readdir(dir));) {
      size_t length = strlen(item->d_name);
      if (length < 5 || strcmp(item->d_name + length - 5, ".json") != 0) continue;
      char path[4096];
      snprintf(path, sizeof(path), "%s/%s", graph_dirs[d], item->d_name);
      hgr_graph_t* graph = NULL;
      ASSERT_OK(hgr_graph_load_file(path, &graph));
      assert_round_trip(graph, path);
      hgr_graph_release(graph);
      ++count;
    }
    closedir(dir);
  }
  print_message("%zu example graphs written and reloaded\n", count);
  assert_true(count >= 5);
}

static void random_graphs_load_back_the_same(void** state) {
  (void)state;
  static const uint64_t sizes[] = {1, 7, 64, 1000};
  static const int32_t keys[] = {1, 4, 9};
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    hgr_test_graph_options_t options = {.seed = seed,
                                        .op_count = 1 + (uint32_t)(seed * 7 % 60),
                                        .sizes = sizes,
                                        .size_count = 4,
                                        .device_keys = seed % 2 ? keys : NULL,
                                        .device_key_count = seed % 2 ? 1 + seed % 3 : 0};
    char* json = hgr_test_graph_generate(&options);
    assert_non_null(json);
    hgr_graph_t* graph = NULL;
    ASSERT_OK(hgr_graph_load_json(json, strlen(json), &graph));
    char what[64];
    snprintf(what, sizeof(what), "random graph %llu", (unsigned long long)seed);
    assert_round_trip(graph, what);
    hgr_graph_release(graph);
    free(json);
  }
}

/* A graph built in memory with names and attrs that JSON must escape, device keys
 * and recorded bindings. */
static void built_graph_with_escapes_and_bindings_loads_back_the_same(void** state) {
  (void)state;
  hgr_graph_t* graph = NULL;
  ASSERT_OK(hgr__graph_edit_new(hgr_allocator_system(), &graph));
  hgr__entry_t entry;
  memset(&entry, 0, sizeof(entry));
  ASSERT_OK(hgr_dtype_parse("float32", &entry.dtype));
  entry.ndim = 3;
  entry.shape[0] = 2;
  entry.shape[1] = 1;
  entry.shape[2] = 9007199254740992LL / (1LL << 40); /* a large dimension, still small in bytes */
  entry.device_key = 3;
  ASSERT_OK(hgr__graph_edit_append(graph, "in \"quoted\" \\ path\n\t\x01 caf\xc3\xa9", NULL, NULL, 0, NULL, 0,
                                   &entry, 1, NULL));
  hgr__entry_ref_t input = {0, 0};
  hgr__attr_t attrs[] = {{"axis", "[1, -2]"}, {"note", "\"}\\"}};
  entry.storage_id = 1;
  entry.device_key = 7;
  ASSERT_OK(hgr__graph_edit_append(graph, "op/1", "relu", &input, 1, attrs, 2, &entry, 1, NULL));
  ASSERT_OK(hgr__graph_edit_add_head(graph, (hgr__entry_ref_t){1, 0}));
  ASSERT_OK(hgr__graph_edit_add_head(graph, (hgr__entry_ref_t){0, 0}));
  ASSERT_OK(hgr__graph_edit_add_binding(graph, 7, "pocl:1"));
  ASSERT_OK(hgr__graph_edit_add_binding(graph, 3, "name:\"odd\" spec"));
  ASSERT_OK(hgr__graph_edit_finish(graph));
  assert_round_trip(graph, "built graph");
  char* text = write_text(graph);
  assert_non_null(strstr(text, "\"metadata\": {\"hgr\":{\"device_bindings\":{\"3\":\"name:\\\"odd\\\" spec\",\"7\":"));
  free(text);
  hgr_graph_release(graph);
}

/* Metadata other than hgr's is not kept: hgr writes only what it read. */
static void foreign_metadata_is_not_written(void** state) {
  (void)state;
  static const char json[] =
      "{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []}], \"arg_nodes\": [0], "
      "\"node_row_ptr\": [0, 1], \"heads\": [[0, 0, 0]], \"attrs\": {\"storage_id\": [\"list_int\", [0]], "
      "\"shape\": [\"list_shape\", [[]]], \"dltype\": [\"list_str\", [\"int8\"]]}, "
      "\"metadata\": {\"tvm\": 1}}";
  hgr_graph_t* graph = NULL;
  ASSERT_OK(hgr_graph_load_json(json, strlen(json), &graph));
  assert_round_trip(graph, "scalar graph");
  char* text = write_text(graph);
  assert_null(strstr(text, "metadata"));
  assert_non_null(strstr(text, "\"shape\": [\"list_shape\", [[]]]"));
  free(text);
  hgr_graph_release(graph);
}

static void a_failed_write_is_an_error(void** state) {
  (void)state;
  FILE* full = fopen("/dev/full", "w");
  assert_non_null(full); /* a test bed without /dev/full fails here rather than passing */
  hgr_graph_t* graph = NULL;
  char path[4096];
  snprintf(path, sizeof(path), "%s/simplex.json", graph_dirs[0]);
  ASSERT_OK(hgr_graph_load_file(path, &graph));
  ASSERT_STATUS(hgr_graph_write_json(graph, full), HGR_STATUS_UNAVAILABLE, "writing graph JSON failed");
  fclose(full);
  ASSERT_STATUS(hgr_graph_write_json(NULL, stdout), HGR_STATUS_INVALID_ARGUMENT, "needs a graph");
  hgr_graph_release(graph);
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s EXAMPLES_DIR TEST_DATA_GRAPHS_DIR\n", argv[0]);
    return 2;
  }
  graph_dirs[0] = argv[1];
  graph_dirs[1] = argv[2];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(example_graphs_load_back_the_same),
      cmocka_unit_test(random_graphs_load_back_the_same),
      cmocka_unit_test(built_graph_with_escapes_and_bindings_loads_back_the_same),
      cmocka_unit_test(foreign_metadata_is_not_written),
      cmocka_unit_test(a_failed_write_is_an_error),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
