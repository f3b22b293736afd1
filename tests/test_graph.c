/* Graph loading: the variants TVM's graph executor accepts, and one rejection per
 * rule, each checking that the message names the node, entry or column at fault.
 *
 * Graphs are written with single quotes (turned into double quotes before loading)
 * and most rejections patch one fragment of BASE. BASE has a two-output node, so
 * node ids and entry ids differ after node 3:
 *   node 0 x, 1 w (null) -> 2 add -> 3 split (entries 3, 4) -> 4 cast (entry 5). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"
#include "testlib.h"

static const char BASE[] =
    "{'nodes': ["
    "{'op': 'null', 'name': 'x', 'inputs': []}, "
    "{'op': 'null', 'name': 'w', 'inputs': []}, "
    "{'op': 'tvm_op', 'name': 'add', 'inputs': [[0, 0, 0], [1, 0, 0]], "
    "'attrs': {'func_name': 'add', 'num_inputs': '2', 'num_outputs': '1', 'flatten_data': '0', "
    "'hash': 'h1'}}, "
    "{'op': 'tvm_op', 'name': 'split', 'inputs': [[2, 0, 0]], "
    "'attrs': {'func_name': 'split', 'num_inputs': '1', 'num_outputs': '2', 'flatten_data': '0', "
    "'data_layout': 'NC'}}, "
    "{'op': 'tvm_op', 'name': 'cast', 'inputs': [[3, 1, 0]], "
    "'attrs': {'func_name': 'cast', 'num_inputs': '1', 'num_outputs': '1', 'flatten_data': '0'}}], "
    "'arg_nodes': [0, 1], "
    "'node_row_ptr': [0, 1, 2, 3, 5, 6], "
    "'heads': [[4, 0, 0], [3, 1, 0]], "
    "'attrs': {"
    "'storage_id': ['list_int', [0, 1, 2, 3, 4, 5]], "
    "'shape': ['list_shape', [[2, 4], [2, 4], [2, 4], [2, 1], [2, 3], [2, 3]]], "
    "'dltype': ['list_str', ['float32', 'float32', 'float32', 'float32', 'float32', 'float16']]}}";

/* text with every (from, to) pair applied once, single quotes turned into double
 * quotes; each `from` must occur exactly once. The list ends with NULL. */
static char* patch(const char* text, ...) {
  char* json = strdup(text);
  va_list args;
  va_start(args, text);
  for (const char* from; (from = va_arg(args, const char*));) {
    const char* to = va_arg(args, const char*);
    char* at = strstr(json, from);
    if (!at || strstr(at + 1, from)) {
      print_error("patch: '%s' occurs %s\n", from, at ? "more than once" : "nowhere");
      fail();
    }
    size_t head = (size_t)(at - json), from_length = strlen(from), to_length = strlen(to);
    char* patched = malloc(strlen(json) - from_length + to_length + 1);
    memcpy(patched, json, head);
    memcpy(patched + head, to, to_length);
    strcpy(patched + head + to_length, at + from_length);
    free(json);
    json = patched;
  }
  va_end(args);
  for (char* p = json; *p; ++p)
    if (*p == '\'') *p = '"';
  return json;
}

/* Loads BASE with one change and releases the graph if it loaded. */
static hgr_status_t load_patched(const char* from, const char* to) {
  char* json = patch(BASE, from, to, (const char*)NULL);
  hgr_graph_t* graph = NULL;
  hgr_status_t status = hgr_graph_load_json(json, strlen(json), &graph);
  if (!status) assert_non_null(graph);
  if (status) assert_null(graph);
  hgr_graph_release(graph);
  free(json);
  return status;
}

static hgr_graph_t* load_ok(const char* text) {
  char* json = patch(text, (const char*)NULL);
  hgr_graph_t* graph = NULL;
  ASSERT_OK(hgr_graph_load_json(json, strlen(json), &graph));
  free(json);
  return graph;
}

static hgr_graph_t* load_patched_ok(const char* from, const char* to) {
  char* json = patch(BASE, from, to, (const char*)NULL);
  hgr_graph_t* graph = NULL;
  ASSERT_OK(hgr_graph_load_json(json, strlen(json), &graph));
  free(json);
  return graph;
}

static void assert_shape(const hgr_tensor_info_t* info, int32_t ndim, int64_t d0, int64_t d1) {
  assert_int_equal(info->ndim, ndim);
  if (ndim > 0) assert_int_equal(info->shape[0], d0);
  if (ndim > 1) assert_int_equal(info->shape[1], d1);
}

/* ---- accepted ------------------------------------------------------------------ */

static void graph_loads_and_indexes_columns_by_entry_id(void** state) {
  (void)state;
  hgr_graph_t* graph = load_ok(BASE);
  assert_int_equal(hgr_graph_node_count(graph), 5);
  assert_int_equal(hgr_graph_entry_count(graph), 6);
  assert_int_equal(hgr_graph_input_count(graph), 2);
  assert_int_equal(hgr_graph_output_count(graph), 2);
  assert_int_equal(graph->storage_count, 6);
  assert_false(graph->has_device_index);
  for (uint32_t e = 0; e < graph->entry_count; ++e)
    assert_int_equal(graph->entries[e].device_key, -1);
  assert_int_equal(graph->entries[4].node_id, 3);
  assert_int_equal(graph->entries[5].node_id, 4);

  hgr_tensor_info_t info;
  ASSERT_OK(hgr_graph_input_info(graph, 1, &info));
  assert_string_equal(info.name, "w");
  assert_shape(&info, 2, 2, 4);
  assert_int_equal(info.bytes, 32);
  /* Output 0 is node 4, entry 5 (float16 [2, 3]); indexing by node id would give
   * entry 4 (float32). Output 1 is node 3 output 1, entry 4 ([2, 3], not [2, 1]). */
  ASSERT_OK(hgr_graph_output_info(graph, 0, &info));
  assert_string_equal(info.name, "cast:0");
  assert_true(hgr_dtype_equal(info.dtype, (hgr_dtype_t){HGR_DTYPE_FLOAT, 16, 1}));
  assert_shape(&info, 2, 2, 3);
  assert_int_equal(info.bytes, 12);
  ASSERT_OK(hgr_graph_output_info(graph, 1, &info));
  assert_string_equal(info.name, "split:1");
  assert_shape(&info, 2, 2, 3);
  assert_int_equal(info.bytes, 24);

  size_t index = 99;
  ASSERT_OK(hgr_graph_input_index(graph, "w", &index));
  assert_int_equal(index, 1);
  const hgr__node_t* add = &graph->nodes[2];
  assert_true(add->is_op);
  assert_string_equal(add->func_name, "add");
  assert_int_equal(add->declared_num_inputs, 2);
  assert_int_equal(add->input_count, 2);
  assert_false(add->flatten_data);
  hgr_graph_release(graph);
}

static void graph_accepts_entries_with_two_or_three_fields(void** state) {
  (void)state;
  char* json =
      patch(BASE, "[[0, 0, 0], [1, 0, 0]]", "[[0, 0], [1, 0, 7]]",
            "'heads': [[4, 0, 0], [3, 1, 0]]", "'heads': [[4, 0], [3, 1]]", (const char*)NULL);
  hgr_graph_t* graph = NULL;
  ASSERT_OK(hgr_graph_load_json(json, strlen(json), &graph));
  assert_int_equal(graph->nodes[2].inputs[1].node_id, 1);
  assert_int_equal(graph->heads[1].index, 1);
  hgr_graph_release(graph);
  free(json);
}

static void graph_skips_legacy_dtype_and_size_t_columns(void** state) {
  (void)state;
  hgr_graph_t* graph = load_patched_ok(
      "'attrs': {'storage_id'",
      "'attrs': {'dtype': ['list_int', [0, 0, 0, 0, 0, 0]], 'version': ['size_t', 3], "
      "'storage_id'");
  hgr_graph_release(graph);
}

static void graph_keeps_extra_node_attrs(void** state) {
  (void)state;
  hgr_graph_t* graph = load_ok(BASE);
  assert_string_equal(hgr__node_attr(&graph->nodes[2], "hash"), "h1");
  assert_string_equal(hgr__node_attr(&graph->nodes[3], "data_layout"), "NC");
  assert_null(hgr__node_attr(&graph->nodes[3], "hash"));
  assert_null(hgr__node_attr(&graph->nodes[2], "func_name")); /* standard keys are fields */
  assert_int_equal(graph->nodes[4].attr_count, 0);
  hgr_graph_release(graph);
}

static void graph_ignores_everything_after_metadata(void** state) {
  (void)state;
  char* text = patch(BASE, (const char*)NULL);
  text[strlen(text) - 1] = 0; /* drop the closing brace */
  char json[4096];
  snprintf(json, sizeof(json),
           "%s, \"metadata\": {\"v\": 1}, \"junk\": [1, 2], \"nodes\": 5, \"heads\": {}}", text);
  hgr_graph_t* graph = NULL;
  ASSERT_OK(hgr_graph_load_json(json, strlen(json), &graph));
  assert_int_equal(hgr_graph_node_count(graph), 5);
  hgr_graph_release(graph);
  free(text);
}

static void graph_reads_the_attr_spelling(void** state) {
  (void)state;
  hgr_graph_t* graph =
      load_patched_ok("'attrs': {'func_name': 'add'", "'attr': {'func_name': 'add'");
  assert_string_equal(graph->nodes[2].func_name, "add");
  hgr_graph_release(graph);
}

static void graph_ignores_control_deps(void** state) {
  (void)state;
  hgr_graph_t* graph = load_patched_ok("'name': 'split',", "'name': 'split', 'control_deps': [2],");
  hgr_graph_release(graph);
}

static void graph_accepts_global_storage_scopes(void** state) {
  (void)state;
  hgr_graph_t* graph = load_patched_ok("'attrs': {'storage_id'",
                                       "'attrs': {'storage_scope': ['list_str', ['global', '', "
                                       "'global', '', '', '']], 'storage_id'");
  hgr_graph_release(graph);
}

static void graph_loads_tvm_simplex_graph_with_device_index(void** state) {
  (void)state;
  hgr_graph_t* graph = NULL;
  ASSERT_OK(hgr_graph_load_file(hgr_test_data_path("graphs/simplex.json"), &graph));
  assert_true(graph->has_device_index);
  const int32_t keys[6] = {4, 4, 4, 1, 1, 1};
  for (uint32_t e = 0; e < 6; ++e) assert_int_equal(graph->entries[e].device_key, keys[e]);
  assert_int_equal(graph->storage_count, 6);
  assert_string_equal(graph->nodes[3].func_name, "__copy");
  assert_true(graph->nodes[2].flatten_data);
  hgr_tensor_info_t info;
  ASSERT_OK(hgr_graph_output_info(graph, 0, &info));
  assert_string_equal(info.name, "elemwise_sub:0");
  assert_shape(&info, 1, 4, 0);
  assert_int_equal(info.bytes, 16);
  size_t index = 0;
  ASSERT_OK(hgr_graph_input_index(graph, "C", &index));
  assert_int_equal(index, 2);
  ASSERT_OK(hgr_graph_input_info(graph, 2, &info));
  assert_string_equal(info.name, "C");
  hgr_graph_release(graph);

  /* The duplex variant shares storage 0 between two device entries. */
  ASSERT_OK(hgr_graph_load_file(hgr_test_data_path("graphs/duplex.json"), &graph));
  assert_int_equal(graph->storage_count, 8);
  assert_int_equal(hgr_graph_input_count(graph), 4);
  hgr_graph_release(graph);
}

static void graph_loads_json_that_is_not_nul_terminated(void** state) {
  (void)state;
  char* json = patch(BASE, (const char*)NULL);
  size_t length = strlen(json);
  char* unterminated = malloc(length + 16);
  memcpy(unterminated, json, length);
  memset(unterminated + length, '}', 16); /* junk past length that must not be read */
  hgr_graph_t* graph = NULL;
  ASSERT_OK(hgr_graph_load_json(unterminated, length, &graph));
  hgr_graph_release(graph);
  /* Exactly length bytes, nothing after them: ASan reports any over-read. */
  char* exact = malloc(length);
  memcpy(exact, json, length);
  ASSERT_OK(hgr_graph_load_json(exact, length, &graph));
  hgr_graph_release(graph);
  ASSERT_STATUS(hgr_graph_load_json(exact, length - 1, &graph), HGR_STATUS_INVALID_ARGUMENT,
                "malformed graph JSON");
  assert_null(graph);
  free(exact);
  free(unterminated);
  free(json);
}

static void graph_computes_bytes_for_vector_bool_and_narrow_dtypes(void** state) {
  (void)state;
  hgr_graph_t* graph =
      load_patched_ok("['float32', 'float32', 'float32', 'float32', 'float32', 'float16']",
                      "['float16x4', 'bool', 'int4', 'float32', 'float32', 'float16']");
  assert_int_equal(graph->entries[0].element_count, 8);
  assert_int_equal(graph->entries[0].bytes, 64); /* 8 elements x 4 lanes x 2 bytes */
  assert_int_equal(graph->entries[1].bytes, 8);  /* bool: a byte each */
  assert_int_equal(graph->entries[2].bytes, 8);  /* int4: ceil(4 / 8) bytes each, as TVM */
  hgr_graph_release(graph);
}

static void graph_accepts_scalars_and_empty_tensors(void** state) {
  (void)state;
  hgr_graph_t* graph =
      load_patched_ok("[[2, 4], [2, 4], [2, 4], [2, 1]", "[[], [0, 4], [2, 4], [2, 1]");
  assert_int_equal(graph->entries[0].ndim, 0);
  assert_int_equal(graph->entries[0].element_count, 1);
  assert_int_equal(graph->entries[0].bytes, 4);
  assert_int_equal(graph->entries[1].bytes, 0);
  hgr_graph_release(graph);
}

static void graph_accepts_nop_that_aliases_its_input(void** state) {
  (void)state;
  char* json = patch(BASE, "'func_name': 'cast'", "'func_name': '__nop'", "[0, 1, 2, 3, 4, 5]",
                     "[0, 1, 2, 3, 4, 4]", (const char*)NULL);
  hgr_graph_t* graph = NULL;
  ASSERT_OK(hgr_graph_load_json(json, strlen(json), &graph));
  assert_int_equal(graph->storage_count, 5);
  hgr_graph_release(graph);
  free(json);
}

/* TVM allows any non-negative storage id. The graph numbers the distinct ids densely
 * in ascending order (slots), keeps each slot's id, and a graph whose ids are 0 to
 * n - 1 keeps slot == id. */
static void graph_maps_sparse_storage_ids_to_dense_slots(void** state) {
  (void)state;
  hgr_graph_t* graph = load_patched_ok("[0, 1, 2, 3, 4, 5]",
                                       "[2147483000, 2147483647, 0, 2000000000, 7, 2000000000]");
  assert_int_equal(graph->storage_count, 5);
  const uint32_t ids[5] = {0, 7, 2000000000u, 2147483000u, 2147483647u};
  for (uint32_t slot = 0; slot < 5; ++slot) assert_int_equal(hgr__graph_storage_id(graph, slot), ids[slot]);
  const uint32_t slots[6] = {3, 4, 0, 2, 1, 2};
  const uint32_t entry_ids[6] = {2147483000u, 2147483647u, 0, 2000000000u, 7, 2000000000u};
  for (uint32_t e = 0; e < 6; ++e) {
    assert_int_equal(graph->entries[e].storage_slot, slots[e]);
    assert_int_equal(hgr__graph_storage_id(graph, graph->entries[e].storage_slot), entry_ids[e]);
  }
  hgr_graph_release(graph);

  graph = load_ok(BASE);
  for (uint32_t e = 0; e < 6; ++e) {
    assert_int_equal(graph->entries[e].storage_slot, e);
    assert_int_equal(hgr__graph_storage_id(graph, e), e);
  }
  hgr_graph_release(graph);

  /* An unused id (4 here, 13 in examples/cnn.json) takes no slot. */
  graph = load_patched_ok("[0, 1, 2, 3, 4, 5]", "[0, 1, 2, 3, 5, 6]");
  assert_int_equal(graph->storage_count, 6);
  assert_int_equal(graph->entries[4].storage_slot, 4);
  assert_int_equal(hgr__graph_storage_id(graph, 4), 5);
  hgr_graph_release(graph);
}

/* Graphs are compared by the storage ids their JSON gave, and the difference names
 * them. */
static void graph_comparison_names_the_storage_ids_that_differ(void** state) {
  (void)state;
  hgr_graph_t* a = load_patched_ok("[0, 1, 2, 3, 4, 5]", "[0, 1, 2, 3, 4, 2000000000]");
  hgr_graph_t* same = load_patched_ok("[0, 1, 2, 3, 4, 5]", "[0, 1, 2, 3, 4, 2000000000]");
  hgr_graph_t* other = load_patched_ok("[0, 1, 2, 3, 4, 5]", "[0, 1, 2, 3, 4, 2147483000]");
  char difference[256] = "";
  assert_true(hgr__graph_same(a, same, difference, sizeof(difference)));
  /* Both give entry 5 slot 5, so comparing slots would call these the same. */
  assert_int_equal(a->entries[5].storage_slot, other->entries[5].storage_slot);
  assert_false(hgr__graph_same(a, other, difference, sizeof(difference)));
  assert_string_equal(difference,
                      "entry 5 (node 4 'cast', output 0) differs (storage id 2000000000 against 2147483000)");
  hgr_graph_release(a);
  hgr_graph_release(same);
  hgr_graph_release(other);
}

static void graph_is_reference_counted(void** state) {
  (void)state;
  hgr_graph_t* graph = load_ok(BASE);
  assert_ptr_equal(hgr_graph_retain(graph), graph);
  hgr_graph_release(graph);
  assert_int_equal(hgr_graph_node_count(graph), 5); /* still alive */
  hgr_graph_release(graph);
  hgr_graph_release(NULL);
}

static void graph_names_the_inputs_when_an_input_is_not_found(void** state) {
  (void)state;
  hgr_graph_t* graph = load_ok(BASE);
  size_t index = 0;
  ASSERT_STATUS(hgr_graph_input_index(graph, "y", &index), HGR_STATUS_NOT_FOUND, "'y'", "'x', 'w'");
  hgr_tensor_info_t info;
  ASSERT_STATUS(hgr_graph_input_info(graph, 2, &info), HGR_STATUS_OUT_OF_RANGE, "input 2",
                "2 inputs");
  ASSERT_STATUS(hgr_graph_output_info(graph, 5, &info), HGR_STATUS_OUT_OF_RANGE, "output 5");
  hgr_graph_release(graph);
}

/* ---- rejected: the document and its keys -------------------------------------- */

static void graph_rejects_malformed_json_naming_the_byte_offset(void** state) {
  (void)state;
  hgr_graph_t* graph = (hgr_graph_t*)1;
  const char* json = "{\"nodes\": [}";
  ASSERT_STATUS(hgr_graph_load_json(json, strlen(json), &graph), HGR_STATUS_INVALID_ARGUMENT,
                "malformed graph JSON at byte 11");
  assert_null(graph);
  ASSERT_STATUS(hgr_graph_load_json("", 0, &graph), HGR_STATUS_INVALID_ARGUMENT, "empty");
}

static void graph_rejects_content_after_the_top_level_value(void** state) {
  (void)state;
  char* json = patch(BASE, (const char*)NULL);
  size_t length = strlen(json);
  char text[4096];
  snprintf(text, sizeof(text), "%s \n{}", json);
  hgr_graph_t* graph = NULL;
  char where[64];
  snprintf(where, sizeof(where), "unexpected content at byte %zu", length + 2);
  ASSERT_STATUS(hgr_graph_load_json(text, strlen(text), &graph), HGR_STATUS_INVALID_ARGUMENT,
                where);
  free(json);
}

static void graph_rejects_a_top_level_value_that_is_not_an_object(void** state) {
  (void)state;
  hgr_graph_t* graph = NULL;
  ASSERT_STATUS(hgr_graph_load_json("[1]", 3, &graph), HGR_STATUS_INVALID_ARGUMENT,
                "must be an object, found an array");
}

static void graph_rejects_a_missing_required_key(void** state) {
  (void)state;
  ASSERT_STATUS(load_patched("'arg_nodes': [0, 1], ", ""), HGR_STATUS_INVALID_ARGUMENT,
                "lacks the required key 'arg_nodes'");
}

static void graph_rejects_required_keys_that_follow_metadata(void** state) {
  (void)state;
  ASSERT_STATUS(load_patched("'heads':", "'metadata':"), HGR_STATUS_INVALID_ARGUMENT,
                "lacks the required key 'heads'", "after 'metadata' are ignored");
}

static void graph_rejects_an_unknown_top_level_key(void** state) {
  (void)state;
  ASSERT_STATUS(load_patched("'arg_nodes':", "'extra': 1, 'arg_nodes':"),
                HGR_STATUS_INVALID_ARGUMENT, "unknown top-level key 'extra'");
}

static void graph_rejects_a_repeated_top_level_key(void** state) {
  (void)state;
  ASSERT_STATUS(load_patched("'arg_nodes': [0, 1],", "'arg_nodes': [0, 1], 'arg_nodes': [0, 1],"),
                HGR_STATUS_INVALID_ARGUMENT, "'arg_nodes' appears twice");
}

/* ---- rejected: nodes ------------------------------------------------------------ */

static void graph_rejects_a_node_without_inputs(void** state) {
  (void)state;
  ASSERT_STATUS(load_patched("'name': 'w', 'inputs': []", "'name': 'w'"),
                HGR_STATUS_INVALID_ARGUMENT, "node 1 'w': lacks the required key 'inputs'");
}

static void graph_rejects_an_unknown_op(void** state) {
  (void)state;
  ASSERT_STATUS(load_patched("'op': 'tvm_op', 'name': 'add'", "'op': 'relay_op', 'name': 'add'"),
                HGR_STATUS_INVALID_ARGUMENT, "node 2 'add': op \"relay_op\" is not supported");
}

static void graph_rejects_an_unknown_node_key(void** state) {
  (void)state;
  ASSERT_STATUS(load_patched("'name': 'add',", "'device': 1, 'name': 'add',"),
                HGR_STATUS_INVALID_ARGUMENT, "node 2 'add': unknown key 'device'");
}

static void graph_rejects_input_entries_with_four_fields(void** state) {
  (void)state;
  ASSERT_STATUS(load_patched("[[0, 0, 0], [1, 0, 0]]", "[[0, 0, 0], [1, 0, 0, 0]]"),
                HGR_STATUS_INVALID_ARGUMENT, "node 2 'add': input 1 has more than 3 fields");
}

static void graph_rejects_input_entries_with_one_field(void** state) {
  (void)state;
  ASSERT_STATUS(load_patched("[[0, 0, 0], [1, 0, 0]]", "[[0], [1, 0, 0]]"),
                HGR_STATUS_INVALID_ARGUMENT, "node 2 'add': input 0 has fewer than 2 fields");
}

static void graph_rejects_inputs_on_a_null_node(void** state) {
  (void)state;
  ASSERT_STATUS(load_patched("'name': 'w', 'inputs': []", "'name': 'w', 'inputs': [[0, 0]]"),
                HGR_STATUS_INVALID_ARGUMENT, "node 1 'w': a null node takes no inputs");
}

static void graph_rejects_a_node_attr_that_is_not_a_string(void** state) {
  (void)state;
  ASSERT_STATUS(load_patched("'num_inputs': '2'", "'num_inputs': 2"), HGR_STATUS_INVALID_ARGUMENT,
                "node 2 'add': attr 'num_inputs' must be a string", "found 2");
}

static void graph_rejects_a_tvm_op_missing_a_standard_attr(void** state) {
  (void)state;
  ASSERT_STATUS(
      load_patched("'num_outputs': '1', 'flatten_data': '0', 'hash'", "'num_outputs': '1', 'hash'"),
      HGR_STATUS_INVALID_ARGUMENT, "node 2 'add': attrs lack 'flatten_data'");
}

static void graph_rejects_a_tvm_op_without_attrs(void** state) {
  (void)state;
  ASSERT_STATUS(load_patched(", 'attrs': {'func_name': 'cast', 'num_inputs': '1', 'num_outputs': "
                             "'1', 'flatten_data': '0'}",
                             ""),
                HGR_STATUS_INVALID_ARGUMENT, "node 4 'cast': a tvm_op node needs attrs");
}

static void graph_rejects_a_repeated_node_attr(void** state) {
  (void)state;
  ASSERT_STATUS(load_patched("'hash': 'h1'", "'hash': 'h1', 'hash': 'h2'"),
                HGR_STATUS_INVALID_ARGUMENT, "node 2 'add': attr 'hash' appears twice");
}

static void graph_rejects_num_outputs_that_is_not_a_decimal_count(void** state) {
  (void)state;
  ASSERT_STATUS(load_patched("'num_outputs': '2'", "'num_outputs': '2x'"),
                HGR_STATUS_INVALID_ARGUMENT, "node 3 'split': attr num_outputs is \"2x\"");
  ASSERT_STATUS(load_patched("'num_outputs': '2'", "'num_outputs': '4294967296'"),
                HGR_STATUS_INVALID_ARGUMENT, "node 3 'split': attr num_outputs", "below 2^32");
}

static void graph_rejects_an_op_with_no_outputs(void** state) {
  (void)state;
  ASSERT_STATUS(load_patched("'num_outputs': '2'", "'num_outputs': '0'"),
                HGR_STATUS_INVALID_ARGUMENT, "node 3 'split': num_outputs is 0");
}

/* ---- rejected: node_row_ptr, arg_nodes, heads ---------------------------------- */

static void graph_rejects_node_row_ptr_of_the_wrong_length(void** state) {
  (void)state;
  ASSERT_STATUS(load_patched("[0, 1, 2, 3, 5, 6]", "[0, 1, 2, 3, 5]"), HGR_STATUS_INVALID_ARGUMENT,
                "node_row_ptr has 5 values, but the graph has 5 nodes, so it needs 6");
}

static void graph_rejects_node_row_ptr_that_does_not_start_at_zero(void** state) {
  (void)state;
  ASSERT_STATUS(load_patched("[0, 1, 2, 3, 5, 6]", "[1, 2, 3, 4, 6, 7]"),
                HGR_STATUS_INVALID_ARGUMENT, "node_row_ptr[0] is 1");
}

static void graph_rejects_node_row_ptr_that_disagrees_with_num_outputs(void** state) {
  (void)state;
  ASSERT_STATUS(
      load_patched("[0, 1, 2, 3, 5, 6]", "[0, 1, 2, 3, 4, 5]"), HGR_STATUS_INVALID_ARGUMENT,
      "node_row_ptr[4] is 4, but node 3 'split' has 2 outputs from entry 3, so it must be 5");
}

static void graph_rejects_arg_nodes_that_name_an_op(void** state) {
  (void)state;
  ASSERT_STATUS(load_patched("'arg_nodes': [0, 1]", "'arg_nodes': [0, 1, 2]"),
                HGR_STATUS_INVALID_ARGUMENT, "arg_nodes[2] is node 2 'add', a tvm_op");
}

static void graph_rejects_arg_nodes_out_of_range(void** state) {
  (void)state;
  ASSERT_STATUS(load_patched("'arg_nodes': [0, 1]", "'arg_nodes': [0, 1, 9]"),
                HGR_STATUS_INVALID_ARGUMENT, "arg_nodes[2] is 9, but the graph has 5 nodes");
}

static void graph_rejects_arg_nodes_that_list_a_node_twice(void** state) {
  (void)state;
  ASSERT_STATUS(load_patched("'arg_nodes': [0, 1]", "'arg_nodes': [0, 1, 1]"),
                HGR_STATUS_INVALID_ARGUMENT, "arg_nodes[2] lists node 1 'w' again");
}

static void graph_rejects_a_null_node_missing_from_arg_nodes(void** state) {
  (void)state;
  ASSERT_STATUS(load_patched("'arg_nodes': [0, 1]", "'arg_nodes': [0]"),
                HGR_STATUS_INVALID_ARGUMENT,
                "node 1 'w' is a null node, but arg_nodes does not list it");
}

static void graph_rejects_an_input_from_a_later_node(void** state) {
  (void)state;
  ASSERT_STATUS(load_patched("[[0, 0, 0], [1, 0, 0]]", "[[0, 0, 0], [4, 0, 0]]"),
                HGR_STATUS_INVALID_ARGUMENT,
                "node 2 'add': input 1 refers to node 4 'cast', which does not come before it");
}

static void graph_rejects_an_input_from_a_missing_node(void** state) {
  (void)state;
  ASSERT_STATUS(load_patched("[[0, 0, 0], [1, 0, 0]]", "[[0, 0, 0], [9, 0, 0]]"),
                HGR_STATUS_INVALID_ARGUMENT,
                "node 2 'add': input 1 refers to node 9, but the graph has 5 nodes");
}

static void graph_rejects_an_input_index_beyond_the_outputs(void** state) {
  (void)state;
  ASSERT_STATUS(load_patched("[[3, 1, 0]]", "[[3, 2, 0]]"), HGR_STATUS_INVALID_ARGUMENT,
                "node 4 'cast': input 0 refers to output 2 of node 3 'split', which has 2 outputs "
                "(entries 3 to 4)");
}

static void graph_rejects_heads_out_of_range(void** state) {
  (void)state;
  ASSERT_STATUS(load_patched("[[4, 0, 0], [3, 1, 0]]", "[[4, 0, 0], [7, 0, 0]]"),
                HGR_STATUS_INVALID_ARGUMENT, "head 1 refers to node 7, but the graph has 5 nodes");
  ASSERT_STATUS(load_patched("[[4, 0, 0], [3, 1, 0]]", "[[4, 0, 0], [3, 2, 0]]"),
                HGR_STATUS_INVALID_ARGUMENT, "head 1 refers to output 2 of node 3 'split'");
  ASSERT_STATUS(load_patched("[[4, 0, 0], [3, 1, 0]]", "[[4, 0, 0], [3, 1, 0, 0]]"),
                HGR_STATUS_INVALID_ARGUMENT, "head 1 has more than 3 fields");
}

/* ---- rejected: attrs columns ---------------------------------------------------- */

static void graph_rejects_a_column_of_the_wrong_length(void** state) {
  (void)state;
  ASSERT_STATUS(load_patched("[0, 1, 2, 3, 4, 5]", "[0, 1, 2, 3, 4]"), HGR_STATUS_INVALID_ARGUMENT,
                "attrs column 'storage_id' has 5 values, but the graph has 6 entries");
}

static void graph_rejects_a_column_with_the_wrong_tag(void** state) {
  (void)state;
  ASSERT_STATUS(
      load_patched("['list_int', [0, 1, 2, 3, 4, 5]]", "['list_str', [0, 1, 2, 3, 4, 5]]"),
      HGR_STATUS_INVALID_ARGUMENT, "attrs column 'storage_id' must be tagged 'list_int'");
}

static void graph_rejects_a_missing_required_column(void** state) {
  (void)state;
  char* json = patch(BASE,
                     ", 'dltype': ['list_str', ['float32', 'float32', 'float32', 'float32', "
                     "'float32', 'float16']]",
                     "", (const char*)NULL);
  hgr_graph_t* graph = NULL;
  ASSERT_STATUS(hgr_graph_load_json(json, strlen(json), &graph), HGR_STATUS_INVALID_ARGUMENT,
                "attrs lack the required column 'dltype'");
  free(json);
}

static void graph_rejects_an_unknown_column_that_cannot_be_skipped(void** state) {
  (void)state;
  ASSERT_STATUS(load_patched("'attrs': {'storage_id'",
                             "'attrs': {'layouts': ['list_str', ['NC']], 'storage_id'"),
                HGR_STATUS_INVALID_ARGUMENT,
                "attrs column 'layouts' is unknown and tagged 'list_str'");
}

static void graph_rejects_a_texture_storage_scope_naming_the_entry(void** state) {
  (void)state;
  ASSERT_STATUS(
      load_patched(
          "'attrs': {'storage_id'",
          "'attrs': {'storage_scope': ['list_str', ['global', '', '', '', 'global.texture', "
          "'']], 'storage_id'"),
      HGR_STATUS_INVALID_ARGUMENT, "entry 4 (node 3 'split', output 1)",
      "texture scopes not supported yet");
  ASSERT_STATUS(load_patched("'attrs': {'storage_id'",
                             "'attrs': {'storage_scope': ['list_str', ['', '', '', '', '', "
                             "'shared']], 'storage_id'"),
                HGR_STATUS_INVALID_ARGUMENT, "entry 5 (node 4 'cast', output 0)",
                "unknown scope 'shared'");
}

static void graph_rejects_a_negative_dimension(void** state) {
  (void)state;
  ASSERT_STATUS(load_patched("[[2, 4], [2, 4], [2, 4], [2, 1]", "[[2, 4], [2, -4], [2, 4], [2, 1]"),
                HGR_STATUS_INVALID_ARGUMENT, "attrs column 'shape': entry 1 (node 1 'w', output 0)",
                "dimension 1 is -4");
}

static void graph_rejects_more_dimensions_than_supported(void** state) {
  (void)state;
  ASSERT_STATUS(
      load_patched("[2, 1], [2, 3], [2, 3]]",
                   "[2, 1], [2, 3], [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 6]]"),
      HGR_STATUS_INVALID_ARGUMENT, "entry 5 (node 4 'cast', output 0): 17 dimensions");
}

static void graph_rejects_shapes_whose_byte_size_overflows(void** state) {
  (void)state;
  ASSERT_STATUS(load_patched("[[2, 4], [2, 4], [2, 4], [2, 1]",
                             "[[2, 4], [9007199254740992, 4096], [2, 4], [2, 1]"),
                HGR_STATUS_INVALID_ARGUMENT, "entry 1 (node 1 'w', output 0)",
                "is more elements or bytes than 2^63 - 1");
}

static void graph_rejects_an_unsupported_dtype(void** state) {
  (void)state;
  ASSERT_STATUS(load_patched("['float32', 'float32', 'float32'", "['float32', 'float32', 'handle'"),
                HGR_STATUS_INVALID_ARGUMENT,
                "attrs column 'dltype': entry 2 (node 2 'add', output 0)",
                "dtype 'handle' is not supported");
}

static void graph_rejects_a_negative_storage_id(void** state) {
  (void)state;
  ASSERT_STATUS(
      load_patched("[0, 1, 2, 3, 4, 5]", "[0, -1, 2, 3, 4, 5]"), HGR_STATUS_INVALID_ARGUMENT,
      "attrs column 'storage_id': entry 1 (node 1 'w', output 0): -1 is not a storage id");
}

static void graph_rejects_an_absurdly_large_storage_id(void** state) {
  (void)state;
  ASSERT_STATUS(load_patched("[0, 1, 2, 3, 4, 5]", "[0, 1, 2, 3, 4, 2147483648]"),
                HGR_STATUS_INVALID_ARGUMENT, "entry 5 (node 4 'cast', output 0): 2147483648");
}

/* TVM reads storage ids into a vector<int>: 0 to 2^31 - 1, integers only. */
static void graph_rejects_storage_ids_that_are_not_32_bit_integers_naming_the_entry(void** state) {
  (void)state;
  static const struct {
    const char* value;
    const char* shown;
  } cases[] = {{"4294967296", "4294967296"}, {"4294967295", "4294967295"}, {"1e300", "1.0000000000000001e+300"},
               {"2.5", "2.5"}, {"-2147483648", "-2147483648"}, {"'3'", "\"3\""}, {"null", "null"},
               {"[3]", "an array"}};
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    char to[64], expected[160];
    snprintf(to, sizeof(to), "[0, 1, 2, %s, 4, 5]", cases[i].value);
    snprintf(expected, sizeof(expected),
             "attrs column 'storage_id': entry 3 (node 3 'split', output 0): %s is not a storage id "
             "(0 to 2147483647)",
             cases[i].shown);
    ASSERT_STATUS(load_patched("[0, 1, 2, 3, 4, 5]", to), HGR_STATUS_INVALID_ARGUMENT, expected);
  }
  hgr_graph_release(load_patched_ok("[0, 1, 2, 3, 4, 5]", "[0, 1, 2, 2147483647, 4, 5]"));
}

static void graph_rejects_storage_id_on_two_devices(void** state) {
  (void)state;
  ASSERT_STATUS(load_patched("'storage_id': ['list_int', [0, 1, 2, 3, 4, 5]]",
                             "'storage_id': ['list_int', [0, 1, 2, 3, 4, 2]], "
                             "'device_index': ['list_int', [1, 1, 1, 4, 4, 4]]"),
                HGR_STATUS_INVALID_ARGUMENT,
                "storage 2 is used on device 1 by entry 2 (node 2 'add', output 0) and on device 4 "
                "by entry 5 (node 4 'cast', output 0)");
}

static void graph_rejects_a_sparse_storage_id_on_two_devices_naming_the_id(void** state) {
  (void)state;
  ASSERT_STATUS(load_patched("'storage_id': ['list_int', [0, 1, 2, 3, 4, 5]]",
                             "'storage_id': ['list_int', [7, 2000000000, 2147483000, 0, 5, 2147483000]], "
                             "'device_index': ['list_int', [1, 1, 1, 4, 4, 4]]"),
                HGR_STATUS_INVALID_ARGUMENT,
                "storage 2147483000 is used on device 1 by entry 2 (node 2 'add', output 0) and on "
                "device 4 by entry 5 (node 4 'cast', output 0)");
}

/* ---- recorded device bindings ("metadata": {"hgr": {"device_bindings": ...}}) ---- */

/* BASE with device keys 1 and 4 and the given metadata value. */
static hgr_status_t load_with_metadata(const char* metadata, hgr_graph_t** out_graph) {
  char tail[512];
  snprintf(tail, sizeof(tail), "'float16']]}, 'metadata': %s}", metadata);
  char* json = patch(BASE, "'attrs': {'storage_id'",
                     "'attrs': {'device_index': ['list_int', [1, 1, 1, 4, 4, 4]], 'storage_id'",
                     "'float16']]}}", tail, (const char*)NULL);
  hgr_status_t status = hgr_graph_load_json(json, strlen(json), out_graph);
  free(json);
  return status;
}

static void graph_reads_the_device_bindings_it_records(void** state) {
  (void)state;
  hgr_graph_t* graph = NULL;
  ASSERT_OK(load_with_metadata(
      "{'other': [1, 2], 'hgr': {'device_bindings': {'4': 'pocl:1', '1': 'rusticl:0'}, 'later': 3}}", &graph));
  assert_int_equal(hgr_graph_binding_count(graph), 2);
  int32_t key = 0;
  const char* spec = NULL;
  ASSERT_OK(hgr_graph_binding(graph, 0, &key, &spec));
  assert_int_equal(key, 1);
  assert_string_equal(spec, "rusticl:0");
  ASSERT_OK(hgr_graph_binding(graph, 1, &key, &spec));
  assert_int_equal(key, 4);
  assert_string_equal(spec, "pocl:1");
  ASSERT_STATUS(hgr_graph_binding(graph, 2, &key, &spec), HGR_STATUS_OUT_OF_RANGE, "device binding 2",
                "records 2");
  assert_null(spec);

  /* Bindings are part of what makes two graphs the same. */
  hgr_graph_t* other = NULL;
  ASSERT_OK(load_with_metadata("{'hgr': {'device_bindings': {'4': 'pocl:1', '1': 'pocl:0'}}}", &other));
  char difference[256];
  assert_false(hgr__graph_same(graph, other, difference, sizeof(difference)));
  assert_non_null(strstr(difference, "device bindings differ"));
  hgr_graph_release(other);
  hgr_graph_release(graph);
}

static void graph_ignores_metadata_that_is_not_hgr_s(void** state) {
  (void)state;
  const char* const ignored[] = {"'a string'", "[1, 2]", "{'tvm': {'device_bindings': 7}}", "{'hgr': {}}"};
  for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); ++i) {
    hgr_graph_t* graph = NULL;
    ASSERT_OK(load_with_metadata(ignored[i], &graph));
    assert_int_equal(hgr_graph_binding_count(graph), 0);
    hgr_graph_release(graph);
  }
}

static void graph_rejects_malformed_recorded_bindings(void** state) {
  (void)state;
  hgr_graph_t* graph = NULL;
  ASSERT_STATUS(load_with_metadata("{'hgr': 3}", &graph), HGR_STATUS_INVALID_ARGUMENT,
                "metadata 'hgr' must be an object, found a number");
  ASSERT_STATUS(load_with_metadata("{'hgr': {'device_bindings': ['pocl:0']}}", &graph),
                HGR_STATUS_INVALID_ARGUMENT, "'device_bindings' must be an object", "found an array");
  ASSERT_STATUS(load_with_metadata("{'hgr': {'device_bindings': {'gpu': 'pocl:0'}}}", &graph),
                HGR_STATUS_INVALID_ARGUMENT, "key \"gpu\" is not a device key");
  ASSERT_STATUS(load_with_metadata("{'hgr': {'device_bindings': {'-1': 'pocl:0'}}}", &graph),
                HGR_STATUS_INVALID_ARGUMENT, "key \"-1\" is not a device key");
  ASSERT_STATUS(load_with_metadata("{'hgr': {'device_bindings': {'1': 0}}}", &graph), HGR_STATUS_INVALID_ARGUMENT,
                "key 1 must be bound to a device spec string, found 0");
  ASSERT_STATUS(load_with_metadata("{'hgr': {'device_bindings': {'1': ''}}}", &graph), HGR_STATUS_INVALID_ARGUMENT,
                "metadata 'hgr' 'device_bindings'", "device key 1: the device spec is empty");
  ASSERT_STATUS(load_with_metadata("{'hgr': {'device_bindings': {'1': 'pocl:0', '1': 'pocl:1'}}}", &graph),
                HGR_STATUS_INVALID_ARGUMENT, "device key 1 is bound twice");
  ASSERT_STATUS(load_with_metadata("{'hgr': {'device_bindings': {'1': 'pocl:0', '7': 'pocl:1'}}}", &graph),
                HGR_STATUS_INVALID_ARGUMENT, "binding of device key 7 to 'pocl:1'", "no entry has device key 7",
                "keys are 1, 4");
  assert_null(graph);
  /* Without a device_index column the graph has no keys to bind. */
  char* json = patch(BASE, "'float16']]}}", "'float16']]}, 'metadata': {'hgr': {'device_bindings': {'1': 'pocl:0'}}}}",
                     (const char*)NULL);
  ASSERT_STATUS(hgr_graph_load_json(json, strlen(json), &graph), HGR_STATUS_INVALID_ARGUMENT,
                "binding of device key 1 to 'pocl:0'", "no device_index column");
  free(json);
}

static void graph_rejects_a_negative_device_index(void** state) {
  (void)state;
  ASSERT_STATUS(
      load_patched("'storage_id': ['list_int'",
                   "'device_index': ['list_int', [1, 1, 1, -4, 4, 4]], 'storage_id': ['list_int'"),
      HGR_STATUS_INVALID_ARGUMENT,
      "attrs column 'device_index': entry 3 (node 3 'split', output 0): -4");
}

/* ---- rejected: runtime ops ------------------------------------------------------ */

static void graph_rejects_copy_with_two_inputs(void** state) {
  (void)state;
  ASSERT_STATUS(
      load_patched("'func_name': 'add'", "'func_name': '__copy'"), HGR_STATUS_INVALID_ARGUMENT,
      "node 2 'add': __copy needs exactly 1 input and 1 output, but it has 2 inputs and 1 output");
}

static void graph_rejects_copy_with_two_outputs(void** state) {
  (void)state;
  ASSERT_STATUS(load_patched("'func_name': 'split'", "'func_name': '__copy'"),
                HGR_STATUS_INVALID_ARGUMENT,
                "node 3 'split': __copy needs exactly 1 input and 1 output, but it has 1 input and "
                "2 outputs");
}

static void graph_rejects_copy_between_entries_of_different_sizes(void** state) {
  (void)state;
  ASSERT_STATUS(load_patched("'func_name': 'cast'", "'func_name': '__copy'"),
                HGR_STATUS_INVALID_ARGUMENT,
                "node 4 'cast': __copy reads 24 bytes from entry 4 (node 3 'split', output 1) but "
                "writes 12 bytes to entry 5 (node 4 'cast', output 0)");
}

static void graph_rejects_nop_whose_output_does_not_alias_its_input(void** state) {
  (void)state;
  ASSERT_STATUS(
      load_patched("'func_name': 'cast'", "'func_name': '__nop'"), HGR_STATUS_INVALID_ARGUMENT,
      "node 4 'cast': __nop output entry 5 (node 4 'cast', output 0) has storage id 5, but "
      "its input entry 4 (node 3 'split', output 1) has storage id 4");
  char* json = patch(BASE, "'func_name': 'cast'", "'func_name': '__nop'", "[0, 1, 2, 3, 4, 5]",
                     "[0, 1, 2, 3, 2147483000, 2000000000]", (const char*)NULL);
  hgr_graph_t* graph = NULL;
  ASSERT_STATUS(hgr_graph_load_json(json, strlen(json), &graph), HGR_STATUS_INVALID_ARGUMENT,
                "has storage id 2000000000, but its input entry 4 (node 3 'split', output 1) has "
                "storage id 2147483000");
  assert_null(graph);
  free(json);
}

/* ---- files ---------------------------------------------------------------------- */

static void graph_load_file_names_a_missing_path(void** state) {
  (void)state;
  hgr_graph_t* graph = (hgr_graph_t*)1;
  ASSERT_STATUS(hgr_graph_load_file("/nonexistent/dir/graph.json", &graph), HGR_STATUS_NOT_FOUND,
                "'/nonexistent/dir/graph.json'", "No such file");
  assert_null(graph);
}

static void graph_load_file_names_the_path_of_a_bad_graph(void** state) {
  (void)state;
  const char* path = hgr_test_tmp_path("bad-graph.json");
  FILE* file = fopen(path, "wb");
  assert_non_null(file);
  const char* text = "{\"nodes\": [],\n \"heads\": [}";
  fputs(text, file);
  fclose(file);
  char where[64];
  snprintf(where, sizeof(where), "at byte %zu", strlen(text) - 1);
  hgr_graph_t* graph = NULL;
  ASSERT_STATUS(hgr_graph_load_file(path, &graph), HGR_STATUS_INVALID_ARGUMENT, path, where);
  remove(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(graph_loads_and_indexes_columns_by_entry_id),
      cmocka_unit_test(graph_accepts_entries_with_two_or_three_fields),
      cmocka_unit_test(graph_skips_legacy_dtype_and_size_t_columns),
      cmocka_unit_test(graph_keeps_extra_node_attrs),
      cmocka_unit_test(graph_ignores_everything_after_metadata),
      cmocka_unit_test(graph_reads_the_attr_spelling),
      cmocka_unit_test(graph_ignores_control_deps),
      cmocka_unit_test(graph_accepts_global_storage_scopes),
      cmocka_unit_test(graph_loads_tvm_simplex_graph_with_device_index),
      cmocka_unit_test(graph_loads_json_that_is_not_nul_terminated),
      cmocka_unit_test(graph_computes_bytes_for_vector_bool_and_narrow_dtypes),
      cmocka_unit_test(graph_accepts_scalars_and_empty_tensors),
      cmocka_unit_test(graph_accepts_nop_that_aliases_its_input),
      cmocka_unit_test(graph_maps_sparse_storage_ids_to_dense_slots),
      cmocka_unit_test(graph_comparison_names_the_storage_ids_that_differ),
      cmocka_unit_test(graph_is_reference_counted),
      cmocka_unit_test(graph_names_the_inputs_when_an_input_is_not_found),
      cmocka_unit_test(graph_rejects_malformed_json_naming_the_byte_offset),
      cmocka_unit_test(graph_rejects_content_after_the_top_level_value),
      cmocka_unit_test(graph_rejects_a_top_level_value_that_is_not_an_object),
      cmocka_unit_test(graph_rejects_a_missing_required_key),
      cmocka_unit_test(graph_rejects_required_keys_that_follow_metadata),
      cmocka_unit_test(graph_rejects_an_unknown_top_level_key),
      cmocka_unit_test(graph_rejects_a_repeated_top_level_key),
      cmocka_unit_test(graph_rejects_a_node_without_inputs),
      cmocka_unit_test(graph_rejects_an_unknown_op),
      cmocka_unit_test(graph_rejects_an_unknown_node_key),
      cmocka_unit_test(graph_rejects_input_entries_with_four_fields),
      cmocka_unit_test(graph_rejects_input_entries_with_one_field),
      cmocka_unit_test(graph_rejects_inputs_on_a_null_node),
      cmocka_unit_test(graph_rejects_a_node_attr_that_is_not_a_string),
      cmocka_unit_test(graph_rejects_a_tvm_op_missing_a_standard_attr),
      cmocka_unit_test(graph_rejects_a_tvm_op_without_attrs),
      cmocka_unit_test(graph_rejects_a_repeated_node_attr),
      cmocka_unit_test(graph_rejects_num_outputs_that_is_not_a_decimal_count),
      cmocka_unit_test(graph_rejects_an_op_with_no_outputs),
      cmocka_unit_test(graph_rejects_node_row_ptr_of_the_wrong_length),
      cmocka_unit_test(graph_rejects_node_row_ptr_that_does_not_start_at_zero),
      cmocka_unit_test(graph_rejects_node_row_ptr_that_disagrees_with_num_outputs),
      cmocka_unit_test(graph_rejects_arg_nodes_that_name_an_op),
      cmocka_unit_test(graph_rejects_arg_nodes_out_of_range),
      cmocka_unit_test(graph_rejects_arg_nodes_that_list_a_node_twice),
      cmocka_unit_test(graph_rejects_a_null_node_missing_from_arg_nodes),
      cmocka_unit_test(graph_rejects_an_input_from_a_later_node),
      cmocka_unit_test(graph_rejects_an_input_from_a_missing_node),
      cmocka_unit_test(graph_rejects_an_input_index_beyond_the_outputs),
      cmocka_unit_test(graph_rejects_heads_out_of_range),
      cmocka_unit_test(graph_rejects_a_column_of_the_wrong_length),
      cmocka_unit_test(graph_rejects_a_column_with_the_wrong_tag),
      cmocka_unit_test(graph_rejects_a_missing_required_column),
      cmocka_unit_test(graph_rejects_an_unknown_column_that_cannot_be_skipped),
      cmocka_unit_test(graph_rejects_a_texture_storage_scope_naming_the_entry),
      cmocka_unit_test(graph_rejects_a_negative_dimension),
      cmocka_unit_test(graph_rejects_more_dimensions_than_supported),
      cmocka_unit_test(graph_rejects_shapes_whose_byte_size_overflows),
      cmocka_unit_test(graph_rejects_an_unsupported_dtype),
      cmocka_unit_test(graph_rejects_a_negative_storage_id),
      cmocka_unit_test(graph_rejects_an_absurdly_large_storage_id),
      cmocka_unit_test(graph_rejects_storage_ids_that_are_not_32_bit_integers_naming_the_entry),
      cmocka_unit_test(graph_rejects_storage_id_on_two_devices),
      cmocka_unit_test(graph_rejects_a_sparse_storage_id_on_two_devices_naming_the_id),
      cmocka_unit_test(graph_reads_the_device_bindings_it_records),
      cmocka_unit_test(graph_ignores_metadata_that_is_not_hgr_s),
      cmocka_unit_test(graph_rejects_malformed_recorded_bindings),
      cmocka_unit_test(graph_rejects_a_negative_device_index),
      cmocka_unit_test(graph_rejects_copy_with_two_inputs),
      cmocka_unit_test(graph_rejects_copy_with_two_outputs),
      cmocka_unit_test(graph_rejects_copy_between_entries_of_different_sizes),
      cmocka_unit_test(graph_rejects_nop_whose_output_does_not_alias_its_input),
      cmocka_unit_test(graph_load_file_names_a_missing_path),
      cmocka_unit_test(graph_load_file_names_the_path_of_a_bad_graph),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
