/* The ONNX stages under the model object, without a device (onnx/onnx_model.h): a
 * model parsed once describes its inputs and outputs with symbolic dims, checks its
 * ops without shapes, imports at any shape, notes the inputs whose values decide
 * shapes, and keeps the folds that depend on no input for later imports.
 *
 * usage: test_onnx_model DATA_DIR (tests/data/symbolic) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "onnx_model.h"
#include "testlib.h"

static const char* data_dir;

static hgr__onnx_model_t* parse(const char* name) {
  char path[1024];
  snprintf(path, sizeof(path), "%s/%s", data_dir, name);
  FILE* f = fopen(path, "rb");
  assert_non_null(f);
  static char bytes[1 << 16];
  size_t size = fread(bytes, 1, sizeof(bytes), f);
  fclose(f);
  hgr__onnx_model_t* model = NULL;
  ASSERT_OK(hgr__onnx_model_parse(hgr_allocator_system(), bytes, size, NULL, NULL, &model));
  return model;
}

/* An import at shape (ndim dims) of input name, with value (NULL: the shape only). */
static hgr_status_t import_at(hgr__onnx_model_t* model, const char* name, const int64_t* shape, int32_t ndim,
                              const char* value_name, const int64_t* value, int64_t value_count, bool* deciding) {
  hgr_onnx_options_t* options = NULL;
  ASSERT_OK(hgr_onnx_options_create(&options));
  ASSERT_OK(hgr_onnx_options_set_input_shape(options, name, shape, ndim));
  const hgr_dtype_t i64 = {HGR_DTYPE_INT, 64, 1};
  if (value_name)
    ASSERT_OK(hgr_onnx_options_set_input_value(options, value_name, i64, &value_count, 1, value,
                                               (size_t)value_count * sizeof(int64_t)));
  hgr_graph_t* graph = NULL;
  hgr_params_t* params = NULL;
  hgr_status_t status = hgr__onnx_model_import(model, options, &graph, &params, NULL, deciding);
  hgr_graph_release(graph);
  hgr_params_release(params);
  hgr_onnx_options_release(options);
  return status;
}

static void inputs_and_outputs_are_described_with_their_symbolic_dims(void** state) {
  (void)state;
  hgr__onnx_model_t* model = parse("dims.onnx");
  assert_int_equal(hgr__onnx_model_input_count(model), 4);
  assert_int_equal(hgr__onnx_model_output_count(model), 4);
  hgr__onnx_io_t io;
  ASSERT_OK(hgr__onnx_model_input(model, 1, &io)); /* b [-1, 3] */
  assert_string_equal(io.name, "b");
  assert_int_equal(io.ndim, 2);
  assert_int_equal(io.dims[0], -1);
  assert_null(io.dim_names[0]);
  assert_int_equal(io.dims[1], 3);
  assert_int_equal(io.dtype.code, HGR_DTYPE_FLOAT);
  ASSERT_OK(hgr__onnx_model_input(model, 3, &io)); /* d: no shape */
  assert_int_equal(io.ndim, -1);
  ASSERT_OK(hgr__onnx_model_output(model, 0, &io));
  assert_string_equal(io.dim_names[0], "batch");
  ASSERT_STATUS(hgr__onnx_model_input(model, 4, &io), HGR_STATUS_INVALID_ARGUMENT, "the model has 4 inputs");
  ASSERT_OK(hgr__onnx_model_check_ops(model));
  hgr__onnx_model_free(model);
}

static void an_input_a_node_needs_at_load_is_noted_as_deciding(void** state) {
  (void)state;
  hgr__onnx_model_t* model = parse("reshape_input.onnx");
  bool deciding[2] = {false, false};
  const int64_t x_shape[2] = {4, 6};
  ASSERT_STATUS(import_at(model, "x", x_shape, 2, NULL, NULL, 0, deciding), HGR_STATUS_UNIMPLEMENTED,
                "input 1 ('shape') must be known at load");
  assert_false(deciding[0]);
  assert_true(deciding[1]);
  const int64_t target[2] = {3, 8};
  deciding[1] = false;
  ASSERT_OK(import_at(model, "x", x_shape, 2, "shape", target, 2, deciding));
  assert_false(deciding[1]);
  hgr__onnx_model_free(model);
}

static void folds_of_no_input_are_kept_and_borrowed(void** state) {
  (void)state;
  hgr__onnx_model_t* model = parse("folded_weights.onnx");
  uint64_t parsed = hgr__onnx_model_held_bytes(model);
  const int64_t first[2] = {2, 4}, second[2] = {7, 4};
  ASSERT_OK(import_at(model, "x", first, 2, NULL, NULL, 0, NULL));
  uint64_t after_first = hgr__onnx_model_held_bytes(model);
  assert_true(after_first >= parsed + 2 * 12 * sizeof(float)); /* ones and w, [4, 3] floats each */
  ASSERT_OK(import_at(model, "x", second, 2, NULL, NULL, 0, NULL));
  assert_int_equal(hgr__onnx_model_held_bytes(model), after_first); /* borrowed, not folded again */
  hgr__onnx_model_free(model);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s DATA_DIR\n", argv[0]);
    return 2;
  }
  data_dir = argv[1];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(inputs_and_outputs_are_described_with_their_symbolic_dims),
      cmocka_unit_test(an_input_a_node_needs_at_load_is_noted_as_deciding),
      cmocka_unit_test(folds_of_no_input_are_kept_and_borrowed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
