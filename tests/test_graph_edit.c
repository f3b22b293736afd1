/* Building graphs in memory (runtime/graph/graph_edit.c): a graph appended node by
 * node equals the same graph loaded from JSON, references go only backwards, a
 * failed append or a removed node leaves the graph as it was, and bindings stay
 * sorted and unique. */
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"
#include "testlib.h"

/* test_graph.c's BASE: node 0 x, 1 w (null) -> 2 add -> 3 split (entries 3, 4) ->
 * 4 cast (entry 5); with device keys when `keyed`. */
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
    "%s"
    "'shape': ['list_shape', [[2, 4], [2, 4], [2, 4], [2, 1], [2, 3], [2, 3]]], "
    "'dltype': ['list_str', ['float32', 'float32', 'float32', 'float32', 'float32', 'float16']]}}";

static hgr_graph_t* load_base(bool keyed) {
  char json[sizeof(BASE) + 128];
  snprintf(json, sizeof(json), BASE, keyed ? "'device_index': ['list_int', [1, 1, 1, 4, 4, 4]], " : "");
  for (char* p = json; *p; ++p)
    if (*p == '\'') *p = '"';
  hgr_graph_t* graph = NULL;
  ASSERT_OK(hgr_graph_load_json(json, strlen(json), &graph));
  return graph;
}

static hgr__entry_t entry(const char* dtype, int64_t d0, int64_t d1, uint32_t storage_id, int32_t device_key) {
  hgr__entry_t value;
  memset(&value, 0, sizeof(value));
  ASSERT_OK(hgr_dtype_parse(dtype, &value.dtype));
  value.ndim = 2;
  value.shape[0] = d0;
  value.shape[1] = d1;
  value.storage_id = storage_id;
  value.device_key = device_key;
  return value;
}

/* BASE, appended node by node (not finished). */
static hgr_graph_t* build_base(bool keyed) {
  int32_t cpu = keyed ? 1 : -1, gpu = keyed ? 4 : -1;
  hgr_graph_t* graph = NULL;
  uint32_t node_id;
  ASSERT_OK(hgr__graph_edit_new(hgr_allocator_system(), &graph));
  hgr__entry_t out[2];
  out[0] = entry("float32", 2, 4, 0, cpu);
  ASSERT_OK(hgr__graph_edit_append(graph, "x", NULL, NULL, 0, NULL, 0, out, 1, &node_id));
  assert_int_equal(node_id, 0);
  out[0] = entry("float32", 2, 4, 1, cpu);
  ASSERT_OK(hgr__graph_edit_append(graph, "w", NULL, NULL, 0, NULL, 0, out, 1, &node_id));
  hgr__entry_ref_t add_inputs[] = {{0, 0}, {1, 0}};
  hgr__attr_t add_attrs[] = {{"hash", "h1"}};
  out[0] = entry("float32", 2, 4, 2, cpu);
  ASSERT_OK(hgr__graph_edit_append(graph, "add", "add", add_inputs, 2, add_attrs, 1, out, 1, &node_id));
  assert_int_equal(node_id, 2);
  hgr__entry_ref_t split_input = {2, 0};
  hgr__attr_t split_attrs[] = {{"data_layout", "NC"}};
  out[0] = entry("float32", 2, 1, 3, gpu);
  out[1] = entry("float32", 2, 3, 4, gpu);
  ASSERT_OK(hgr__graph_edit_append(graph, "split", "split", &split_input, 1, split_attrs, 1, out, 2, &node_id));
  hgr__entry_ref_t cast_input = {3, 1};
  out[0] = entry("float16", 2, 3, 5, gpu);
  ASSERT_OK(hgr__graph_edit_append(graph, "cast", "cast", &cast_input, 1, NULL, 0, out, 1, &node_id));
  assert_int_equal(node_id, 4);
  ASSERT_OK(hgr__graph_edit_add_head(graph, (hgr__entry_ref_t){4, 0}));
  ASSERT_OK(hgr__graph_edit_add_head(graph, (hgr__entry_ref_t){3, 1}));
  return graph;
}

static void assert_same(const hgr_graph_t* a, const hgr_graph_t* b) {
  char difference[256] = "";
  if (!hgr__graph_same(a, b, difference, sizeof(difference))) {
    print_error("graphs differ: %s\n", difference);
    fail();
  }
}

/* A TVM graph's arg_nodes need not follow node order; a rebuilt graph takes its
 * source's input order (placement rebuilds graphs). */
static void inputs_take_the_order_of_another_graph(void** state) {
  (void)state;
  hgr_graph_t* like = NULL;
  ASSERT_OK(hgr__graph_edit_new(hgr_allocator_system(), &like));
  hgr__entry_t out = entry("float32", 2, 4, 0, -1);
  uint32_t node_id;
  for (int i = 0; i < 3; ++i) {
    static const char* const names[] = {"c", "a", "b"};
    out.storage_id = (uint32_t)i;
    ASSERT_OK(hgr__graph_edit_append(like, names[i], NULL, NULL, 0, NULL, 0, &out, 1, &node_id));
  }
  hgr_graph_t* graph = build_base(false); /* inputs x, w */
  out.storage_id = 9;
  ASSERT_OK(hgr__graph_edit_append(graph, "b", NULL, NULL, 0, NULL, 0, &out, 1, &node_id));
  ASSERT_OK(hgr__graph_edit_order_inputs(graph, like)); /* b is like's input 2; x and w are not there */
  assert_int_equal(graph->arg_count, 3);
  assert_string_equal(graph->nodes[graph->arg_nodes[0]].name, "b");
  assert_string_equal(graph->nodes[graph->arg_nodes[1]].name, "x");
  assert_string_equal(graph->nodes[graph->arg_nodes[2]].name, "w");
  hgr_graph_release(graph);
  hgr_graph_release(like);
}

static void edited_graph_equals_the_same_graph_loaded_from_json(void** state) {
  (void)state;
  for (int keyed = 0; keyed < 2; ++keyed) {
    hgr_graph_t* built = build_base(keyed);
    /* Before finish, enough for inference: entries, their sizes and arg_nodes. */
    assert_int_equal(built->entry_count, 6);
    assert_int_equal(built->entries[4].node_id, 3);
    assert_int_equal(built->entries[4].bytes, 24);
    assert_int_equal(built->arg_count, 2);
    ASSERT_OK(hgr__graph_edit_finish(built));
    assert_int_equal(built->has_device_index, keyed);
    assert_int_equal(built->storage_count, 6);
    hgr_graph_t* loaded = load_base(keyed);
    assert_same(built, loaded);
    hgr_tensor_info_t info;
    ASSERT_OK(hgr_graph_output_info(built, 0, &info));
    assert_string_equal(info.name, "cast:0");
    assert_int_equal(info.bytes, 12);
    hgr_graph_release(loaded);
    hgr_graph_release(built);
  }
}

static void edited_graph_refuses_a_reference_to_a_later_node(void** state) {
  (void)state;
  hgr_graph_t* graph = NULL;
  ASSERT_OK(hgr__graph_edit_new(hgr_allocator_system(), &graph));
  ASSERT_OK(hgr__graph_edit_append(graph, "x", NULL, NULL, 0, NULL, 0, NULL, 1, NULL));
  hgr__entry_ref_t forward[] = {{0, 0}, {1, 0}};
  uint32_t node_id = 0;
  ASSERT_STATUS(hgr__graph_edit_append(graph, "relu", "nn.relu", forward, 2, NULL, 0, NULL, 1, &node_id),
                HGR_STATUS_INVALID_ARGUMENT, "node 1 'relu'", "input 1 refers to node 1", "does not exist yet");
  assert_int_equal(node_id, UINT32_MAX);
  /* Also a missing output of an existing node, and a self reference. */
  hgr__entry_ref_t bad_index = {0, 1};
  ASSERT_STATUS(hgr__graph_edit_append(graph, "relu", "nn.relu", &bad_index, 1, NULL, 0, NULL, 1, NULL),
                HGR_STATUS_INVALID_ARGUMENT, "input 0 refers to output 1 of node 0 'x', which has 1 output");
  /* The graph is as it was. */
  assert_int_equal(graph->node_count, 1);
  assert_int_equal(graph->entry_count, 1);
  ASSERT_STATUS(hgr__graph_edit_add_head(graph, (hgr__entry_ref_t){1, 0}), HGR_STATUS_INVALID_ARGUMENT,
                "refers to output 0 of node 1");
  hgr_graph_release(graph);
}

static void edited_graph_refuses_an_input_with_inputs(void** state) {
  (void)state;
  hgr_graph_t* graph = NULL;
  ASSERT_OK(hgr__graph_edit_new(hgr_allocator_system(), &graph));
  ASSERT_OK(hgr__graph_edit_append(graph, "x", NULL, NULL, 0, NULL, 0, NULL, 1, NULL));
  hgr__entry_ref_t input = {0, 0};
  ASSERT_STATUS(hgr__graph_edit_append(graph, "y", NULL, &input, 1, NULL, 0, NULL, 1, NULL),
                HGR_STATUS_INVALID_ARGUMENT, "node 1 'y'", "an input takes no inputs");
  ASSERT_STATUS(hgr__graph_edit_append(graph, "r", "nn.relu", &input, 1, NULL, 0, NULL, 0, NULL),
                HGR_STATUS_INVALID_ARGUMENT, "node 1 'r' (nn.relu): an op needs an output");
  hgr_graph_release(graph);
}

static void removing_the_last_node_restores_the_graph(void** state) {
  (void)state;
  hgr_graph_t* graph = build_base(false);
  /* Append an input and an op, remove both: the graph finishes as BASE. */
  ASSERT_OK(hgr__graph_edit_append(graph, "z", NULL, NULL, 0, NULL, 0, NULL, 1, NULL));
  hgr__entry_ref_t inputs[] = {{5, 0}, {4, 0}};
  hgr__attr_t attrs[] = {{"axis", "1"}};
  ASSERT_OK(hgr__graph_edit_append(graph, "more", "add", inputs, 2, attrs, 1, NULL, 3, NULL));
  assert_int_equal(graph->entry_count, 10);
  ASSERT_OK(hgr__graph_edit_remove_last(graph));
  ASSERT_OK(hgr__graph_edit_remove_last(graph));
  assert_int_equal(graph->arg_count, 2);
  /* A head's node cannot be removed. */
  ASSERT_STATUS(hgr__graph_edit_remove_last(graph), HGR_STATUS_FAILED_PRECONDITION, "node 4 'cast'", "output 0");
  ASSERT_OK(hgr__graph_edit_finish(graph));
  hgr_graph_t* loaded = load_base(false);
  assert_same(graph, loaded);
  hgr_graph_release(loaded);
  hgr_graph_release(graph);
}

static void edited_graph_refuses_device_keys_on_some_entries_only(void** state) {
  (void)state;
  hgr_graph_t* graph = build_base(false);
  graph->entries[3].device_key = 4;
  ASSERT_STATUS(hgr__graph_edit_finish(graph), HGR_STATUS_INVALID_ARGUMENT, "entry 0 (node 0 'x', output 0)",
                "has no device key", "entry 3 (node 3 'split', output 0) has key 4");
  hgr_graph_release(graph);
}

static void edited_graph_finishes_with_validation(void** state) {
  (void)state;
  hgr_graph_t* graph = build_base(true);
  graph->entries[4].storage_id = 0; /* storage 0 on keys 1 and 4 */
  ASSERT_STATUS(hgr__graph_edit_finish(graph), HGR_STATUS_INVALID_ARGUMENT, "storage 0 is used on device 1",
                "cannot span two devices");
  hgr_graph_release(graph);
}

static void bindings_are_kept_sorted_and_unique(void** state) {
  (void)state;
  hgr_graph_t* graph = build_base(true);
  ASSERT_OK(hgr__graph_edit_add_binding(graph, 4, "pocl:1"));
  ASSERT_OK(hgr__graph_edit_add_binding(graph, 1, "pocl:0"));
  ASSERT_STATUS(hgr__graph_edit_add_binding(graph, 4, "rusticl:0"), HGR_STATUS_INVALID_ARGUMENT,
                "device key 4 is bound twice, to 'pocl:1' and to 'rusticl:0'");
  ASSERT_STATUS(hgr__graph_edit_add_binding(graph, -1, "pocl:0"), HGR_STATUS_INVALID_ARGUMENT, "device key -1");
  ASSERT_STATUS(hgr__graph_edit_add_binding(graph, 2, ""), HGR_STATUS_INVALID_ARGUMENT, "device key 2",
                "spec is empty");
  ASSERT_OK(hgr__graph_edit_finish(graph));
  assert_int_equal(graph->binding_count, 2);
  assert_int_equal(graph->binding_keys[0], 1);
  assert_string_equal(graph->binding_specs[0], "pocl:0");
  assert_int_equal(graph->binding_keys[1], 4);
  assert_string_equal(graph->binding_specs[1], "pocl:1");
  hgr_graph_release(graph);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(edited_graph_equals_the_same_graph_loaded_from_json),
      cmocka_unit_test(edited_graph_refuses_a_reference_to_a_later_node),
      cmocka_unit_test(edited_graph_refuses_an_input_with_inputs),
      cmocka_unit_test(removing_the_last_node_restores_the_graph),
      cmocka_unit_test(edited_graph_refuses_device_keys_on_some_entries_only),
      cmocka_unit_test(edited_graph_finishes_with_validation),
      cmocka_unit_test(bindings_are_kept_sorted_and_unique),
      cmocka_unit_test(inputs_take_the_order_of_another_graph),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
