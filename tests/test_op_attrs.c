/* Node attr parsing shared by every op (runtime/ops/op_context.c): ints, floats, bools,
 * int lists (flat and nested), float lists, and the errors that name node, attr and
 * value. */
#include <string.h>

#include "ops.h"
#include "testlib.h"

static hgr_graph_t* graph;
static hgr__op_ctx_t ctx;

static int setup(void** state) {
  (void)state;
  static const char json[] =
      "{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []},"
      " {\"op\": \"tvm_op\", \"name\": \"n\", \"attrs\": {\"func_name\": \"relu\", \"num_inputs\": \"1\","
      " \"num_outputs\": \"1\", \"flatten_data\": \"0\", \"i\": \" -3 \", \"f\": \"1e-5\", \"ninf\": \"-inf\","
      " \"b1\": \"True\", \"b0\": \"0\", \"flat\": \"[2, 3]\", \"tuple\": \"(4,)\", \"bare\": \"7\","
      " \"empty\": \"[]\", \"none\": \"None\", \"nested\": \"[[0, 0], [1, 2], (3, 4)]\","
      " \"badint\": \"2.5\", \"badlist\": \"[1, [2]\", \"badsep\": \"[1 2]\", \"badbool\": \"yes\","
      " \"long\": \"[1, 2, 3, 4, 5]\", \"nan\": \"nan\"}, \"inputs\": [[0, 0, 0]]}],"
      " \"arg_nodes\": [0], \"node_row_ptr\": [0, 1, 2], \"heads\": [[1, 0, 0]],"
      " \"attrs\": {\"storage_id\": [\"list_int\", [0, 1]], \"shape\": [\"list_shape\", [[4], [4]]],"
      " \"dltype\": [\"list_str\", [\"float32\", \"float32\"]]}}";
  hgr_status_t status = hgr_graph_load_json(json, strlen(json), &graph);
  if (status) {
    hgr_status_free(status);
    return -1;
  }
  memset(&ctx, 0, sizeof(ctx));
  ctx.graph = graph;
  ctx.node_id = 1;
  ctx.node = &graph->nodes[1];
  snprintf(ctx.label, sizeof(ctx.label), "node 1 'n'");
  return 0;
}

static int teardown(void** state) {
  (void)state;
  hgr_graph_release(graph);
  return 0;
}

static void scalars_parse_with_defaults(void** state) {
  (void)state;
  int64_t i;
  double f;
  bool b;
  ASSERT_OK(hgr__attr_int(&ctx, "i", 0, &i));
  assert_int_equal(i, -3);
  ASSERT_OK(hgr__attr_int(&ctx, "absent", 42, &i));
  assert_int_equal(i, 42);
  ASSERT_OK(hgr__attr_float(&ctx, "f", 0, &f));
  assert_true(f == 1e-5);
  ASSERT_OK(hgr__attr_float(&ctx, "ninf", 0, &f));
  assert_true(f < -1e308);
  ASSERT_OK(hgr__attr_bool(&ctx, "b1", false, &b));
  assert_true(b);
  ASSERT_OK(hgr__attr_bool(&ctx, "b0", true, &b));
  assert_false(b);
  ASSERT_OK(hgr__attr_bool(&ctx, "absent", true, &b));
  assert_true(b);
  assert_string_equal(hgr__attr_string(&ctx, "absent", "NCHW"), "NCHW");
}

static void lists_parse_flat_and_nested(void** state) {
  (void)state;
  int64_t v[8];
  uint32_t n;
  bool present;
  ASSERT_OK(hgr__attr_ints(&ctx, "flat", v, 8, &n, &present));
  assert_true(present);
  assert_int_equal(n, 2);
  assert_int_equal(v[0], 2);
  assert_int_equal(v[1], 3);
  ASSERT_OK(hgr__attr_ints(&ctx, "tuple", v, 8, &n, NULL));
  assert_int_equal(n, 1);
  assert_int_equal(v[0], 4);
  ASSERT_OK(hgr__attr_ints(&ctx, "bare", v, 8, &n, NULL));
  assert_int_equal(n, 1);
  assert_int_equal(v[0], 7);
  ASSERT_OK(hgr__attr_ints(&ctx, "empty", v, 8, &n, &present));
  assert_true(present);
  assert_int_equal(n, 0);
  ASSERT_OK(hgr__attr_ints(&ctx, "none", v, 8, &n, &present));
  assert_false(present);
  ASSERT_OK(hgr__attr_ints(&ctx, "absent", v, 8, &n, &present));
  assert_false(present);
  ASSERT_OK(hgr__attr_ints(&ctx, "nested", v, 8, &n, NULL));
  assert_int_equal(n, 6);
  static const int64_t want[6] = {0, 0, 1, 2, 3, 4};
  for (int k = 0; k < 6; ++k) assert_int_equal(v[k], want[k]);
}

/* Lists of numbers (hgr__attr_floats, activation_alpha and the like): flat only. */
static void float_lists_parse_flat(void** state) {
  (void)state;
  double v[4];
  uint32_t n;
  bool present;
  ASSERT_OK(hgr__attr_floats(&ctx, "flat", v, 4, &n, &present));
  assert_true(present);
  assert_int_equal(n, 2);
  assert_true(v[0] == 2 && v[1] == 3);
  ASSERT_OK(hgr__attr_floats(&ctx, "tuple", v, 4, &n, NULL));
  assert_true(n == 1 && v[0] == 4);
  ASSERT_OK(hgr__attr_floats(&ctx, "f", v, 4, &n, NULL));
  assert_true(n == 1 && v[0] == 1e-5);
  ASSERT_OK(hgr__attr_floats(&ctx, "empty", v, 4, &n, &present));
  assert_true(present && n == 0);
  ASSERT_OK(hgr__attr_floats(&ctx, "none", v, 4, &n, &present));
  assert_false(present);
  ASSERT_STATUS(hgr__attr_floats(&ctx, "nested", v, 4, &n, NULL), HGR_STATUS_INVALID_ARGUMENT,
                "node 1 'n' (relu): attr 'nested' = \"[[0, 0], [1, 2], (3, 4)]\" is not a number or a list of numbers");
  ASSERT_STATUS(hgr__attr_floats(&ctx, "badsep", v, 4, &n, NULL), HGR_STATUS_INVALID_ARGUMENT, "attr 'badsep'");
  ASSERT_STATUS(hgr__attr_floats(&ctx, "long", v, 4, &n, NULL), HGR_STATUS_INVALID_ARGUMENT,
                "has more than 4 values");
  ASSERT_STATUS(hgr__attr_floats(&ctx, "nan", v, 4, &n, NULL), HGR_STATUS_INVALID_ARGUMENT, "attr 'nan'");
}

static void bad_values_name_node_attr_and_value(void** state) {
  (void)state;
  int64_t v[4];
  uint32_t n;
  double f;
  bool b;
  ASSERT_STATUS(hgr__attr_int(&ctx, "badint", 0, v), HGR_STATUS_INVALID_ARGUMENT,
                "node 1 'n' (relu): attr 'badint' = \"2.5\" is not an integer");
  ASSERT_STATUS(hgr__attr_ints(&ctx, "badlist", v, 4, &n, NULL), HGR_STATUS_INVALID_ARGUMENT, "attr 'badlist'");
  ASSERT_STATUS(hgr__attr_ints(&ctx, "badsep", v, 4, &n, NULL), HGR_STATUS_INVALID_ARGUMENT, "attr 'badsep'");
  ASSERT_STATUS(hgr__attr_ints(&ctx, "long", v, 4, &n, NULL), HGR_STATUS_INVALID_ARGUMENT,
                "has more than 4 values");
  ASSERT_STATUS(hgr__attr_bool(&ctx, "badbool", false, &b), HGR_STATUS_INVALID_ARGUMENT, "'badbool' = \"yes\"");
  ASSERT_STATUS(hgr__attr_float(&ctx, "nan", 0, &f), HGR_STATUS_INVALID_ARGUMENT, "is not a number");
  ASSERT_STATUS(hgr__attr_float(&ctx, "flat", 0, &f), HGR_STATUS_INVALID_ARGUMENT, "'flat'");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(scalars_parse_with_defaults),
      cmocka_unit_test(lists_parse_flat_and_nested),
      cmocka_unit_test(float_lists_parse_flat),
      cmocka_unit_test(bad_values_name_node_attr_and_value),
  };
  return cmocka_run_group_tests_name("op_attrs", tests, setup, teardown);
}
