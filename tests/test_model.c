/* The model object (hgr/model.h) on the symbolic models of tests/data/symbolic/:
 * inputs listed with their symbolic dims, runs at many shapes in one model checked
 * against plain C, inputs that decide shapes found and keyed by value, the errors
 * naming input, dim and both values, weights shared between specializations, and
 * eviction under the count bound never freeing a specialization a run holds, and
 * outputs that no op writes (constants, an input) read back, bound or not.
 *
 * usage: test_model DATA_DIR DEVICE_SPEC */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "testlib.h"

static const char* data_dir;
static const char* device_spec;
static hgr_instance_t* instance;

static const hgr_dtype_t f32 = {HGR_DTYPE_FLOAT, 32, 1};
static const hgr_dtype_t i64 = {HGR_DTYPE_INT, 64, 1};

static hgr_model_t* open_model(const char* name, uint32_t max_specializations) {
  char path[1024];
  snprintf(path, sizeof(path), "%s/%s", data_dir, name);
  hgr_model_options_t options;
  hgr_model_options_init(&options);
  static hgr_device_binding_t binding;
  binding = (hgr_device_binding_t){0, device_spec};
  options.executor.bindings = &binding;
  options.executor.binding_count = 1;
  options.max_specializations = max_specializations;
  hgr_model_t* model = NULL;
  ASSERT_OK(hgr_model_create_onnx_file(instance, path, &options, &model));
  return model;
}

static hgr_model_input_t input_of(hgr_dtype_t dtype, int32_t ndim, const int64_t* shape, const void* data) {
  uint64_t count = 1;
  for (int32_t d = 0; d < ndim; ++d) count *= (uint64_t)shape[d];
  return (hgr_model_input_t){dtype, ndim, shape, data, (size_t)(count * hgr_dtype_element_bytes(dtype))};
}

static void fill(float* data, size_t count, uint64_t seed) {
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, seed);
  for (size_t i = 0; i < count; ++i) data[i] = hgr_test_rng_float(&rng, -2, 2);
}

/* Output index of run as floats (malloc'd), checking its shape. */
static float* output_of(hgr_model_run_t* run, size_t index, int32_t ndim, const int64_t* shape) {
  hgr_tensor_info_t info;
  ASSERT_OK(hgr_model_run_output_info(run, index, &info));
  assert_int_equal(info.ndim, ndim);
  for (int32_t d = 0; d < ndim; ++d) assert_int_equal(info.shape[d], shape[d]);
  float* data = malloc(info.bytes ? info.bytes : 1);
  assert_non_null(data);
  ASSERT_OK(hgr_model_run_get_output(run, index, data, info.bytes));
  return data;
}

static void inputs_keep_their_symbolic_dims(void** state) {
  (void)state;
  hgr_model_t* model = open_model("dims.onnx", 0);
  assert_int_equal(hgr_model_input_count(model), 4);
  hgr_model_io_t io;
  ASSERT_OK(hgr_model_input(model, 0, &io)); /* a [batch, 3] */
  assert_string_equal(io.name, "a");
  assert_int_equal(io.ndim, 2);
  assert_int_equal(io.dims[0], -1);
  assert_string_equal(io.dim_names[0], "batch");
  assert_int_equal(io.dims[1], 3);
  assert_null(io.dim_names[1]);
  ASSERT_OK(hgr_model_input(model, 1, &io)); /* b [-1, 3]: unknown, no name */
  assert_int_equal(io.dims[0], -1);
  assert_null(io.dim_names[0]);
  ASSERT_OK(hgr_model_input(model, 2, &io)); /* c [0, 3]: exporters' unknown */
  assert_int_equal(io.dims[0], -1);
  ASSERT_OK(hgr_model_input(model, 3, &io)); /* d: no shape at all */
  assert_int_equal(io.ndim, -1);
  ASSERT_OK(hgr_model_output(model, 0, &io));
  assert_string_equal(io.name, "ya");
  assert_string_equal(io.dim_names[0], "batch");
  ASSERT_STATUS(hgr_model_input(model, 4, &io), HGR_STATUS_OUT_OF_RANGE, "the model has 4 inputs");
  size_t index = 0;
  ASSERT_STATUS(hgr_model_input_index(model, "e", &index), HGR_STATUS_NOT_FOUND, "'a', 'b', 'c', 'd'");
  hgr_model_release(model);
}

static void every_kind_of_unknown_dim_runs_at_many_shapes(void** state) {
  (void)state;
  hgr_model_t* model = open_model("dims.onnx", 0);
  static const int64_t rows[] = {1, 4, 2, 7};
  for (size_t k = 0; k < 2 * sizeof(rows) / sizeof(rows[0]); ++k) { /* each shape twice: the second is a hit */
    int64_t n = rows[k % 4];
    int64_t shape[2] = {n, 3}, d_shape[3] = {2, n, 2};
    float a[21], b[21], c[21], d[28];
    fill(a, (size_t)(3 * n), k);
    fill(b, (size_t)(3 * n), k + 10);
    fill(c, (size_t)(3 * n), k + 20);
    fill(d, (size_t)(4 * n), k + 30);
    hgr_model_input_t inputs[4] = {input_of(f32, 2, shape, a), input_of(f32, 2, shape, b),
                                   input_of(f32, 2, shape, c), input_of(f32, 3, d_shape, d)};
    hgr_model_run_t* run = NULL;
    ASSERT_OK(hgr_model_run(model, inputs, 4, &run));
    ASSERT_OK(hgr_model_run_wait(run));
    float* ya = output_of(run, 0, 2, shape);
    float* yb = output_of(run, 1, 2, shape);
    float* yc = output_of(run, 2, 2, shape);
    float* yd = output_of(run, 3, 3, d_shape);
    for (int64_t i = 0; i < 3 * n; ++i) {
      assert_float_equal(ya[i], a[i] > 0 ? a[i] : 0, 0);
      assert_float_equal(yb[i], b[i] * 2, 0);
      assert_float_equal(yc[i], c[i] + 1, 0);
    }
    for (int64_t i = 0; i < 4 * n; ++i) assert_float_equal(yd[i], -d[i], 0);
    free(ya);
    free(yb);
    free(yc);
    free(yd);
    hgr_model_run_release(run);
  }
  hgr_model_report_t report;
  hgr_model_report(model, &report);
  assert_int_equal(report.created, 4);
  assert_int_equal(report.hits, 4);
  assert_int_equal(report.kept, 4);
  hgr_model_release(model);
}

static void wrong_inputs_are_named_with_both_values(void** state) {
  (void)state;
  hgr_model_t* model = open_model("encoder.onnx", 0);
  float x[2 * 3 * 8] = {0}, mask[2 * 3] = {0};
  int64_t x_shape[3] = {2, 3, 8}, mask_shape[2] = {2, 3};
  int64_t bad_width[3] = {2, 3, 9}, bad_seq[2] = {2, 4}, flat[1] = {6};
  hgr_model_input_t inputs[2] = {input_of(f32, 3, bad_width, x), input_of(f32, 2, mask_shape, mask)};
  hgr_model_run_t* run = NULL;
  ASSERT_STATUS(hgr_model_run(model, inputs, 2, &run), HGR_STATUS_INVALID_ARGUMENT,
                "input 'x': dimension 2 is 8 in the model; the input given has 9");
  inputs[0] = input_of(f32, 3, x_shape, x);
  inputs[1] = input_of(f32, 2, bad_seq, mask);
  ASSERT_STATUS(hgr_model_run(model, inputs, 2, &run), HGR_STATUS_INVALID_ARGUMENT,
                "input 'mask': dimension 1 ('seq') is 4, but input 'x' dimension 1, of the same name, is 3");
  inputs[1] = input_of(f32, 1, flat, mask);
  ASSERT_STATUS(hgr_model_run(model, inputs, 2, &run), HGR_STATUS_INVALID_ARGUMENT,
                "input 'mask' has rank 2 in the model; the input given has rank 1");
  inputs[1] = input_of(i64, 2, mask_shape, mask);
  ASSERT_STATUS(hgr_model_run(model, inputs, 2, &run), HGR_STATUS_INVALID_ARGUMENT,
                "input 'mask' is float32; int64 was given");
  ASSERT_STATUS(hgr_model_run(model, inputs, 1, &run), HGR_STATUS_INVALID_ARGUMENT, "1 inputs given; the model takes 2");
  hgr_model_report_t report;
  hgr_model_report(model, &report);
  assert_int_equal(report.created, 0);
  hgr_model_release(model);
}

/* hgr computes int64 as int32: an int64 input from host memory with a value past
 * int32 is refused on entry, naming the input and the element; the range's ends
 * are values. */
static void an_int64_value_past_int32_is_refused(void** state) {
  (void)state;
  hgr_model_t* model = open_model("ids.onnx", 0);
  int64_t ids[3] = {1, (int64_t)INT32_MAX + 1, 2}, shape[1] = {3};
  hgr_model_input_t input = input_of(i64, 1, shape, ids);
  hgr_model_run_t* run = NULL;
  ASSERT_STATUS(hgr_model_run(model, &input, 1, &run), HGR_STATUS_INVALID_ARGUMENT,
                "input 'ids': element 1 is 2147483648, outside int32: hgr computes int64 values as int32");
  ids[1] = (int64_t)INT32_MIN - 1;
  ASSERT_STATUS(hgr_model_run(model, &input, 1, &run), HGR_STATUS_INVALID_ARGUMENT, "element 1 is -2147483649");
  ids[1] = 9;
  ASSERT_OK(hgr_model_run(model, &input, 1, &run));
  float* y = output_of(run, 0, 2, (const int64_t[]){3, 2});
  static const float want[6] = {2, 3, 18, 19, 4, 5};
  for (int i = 0; i < 6; ++i) assert_float_equal(y[i], want[i], 0);
  free(y);
  hgr_model_run_release(run);
  hgr_model_release(model);
}

/* y[b, s, :] = (Relu(x[b, s, :] @ w1 + b1) @ w2) * mask[b, s] is the same for a
 * position whatever the batch and sequence length around it: the first s positions
 * of each sequence, run alone at every length, equal the batched run's, each run
 * sharing the weights the first one uploaded; masked positions are 0. */
static void encoder_rows_agree_across_batch_and_sequence_lengths(void** state) {
  (void)state;
  hgr_model_t* model = open_model("encoder.onnx", 0);
  enum { B = 3, S = 9 };
  static float x[B * S * 8], mask[B * S];
  fill(x, B * S * 8, 7);
  for (size_t i = 0; i < B * S; ++i) mask[i] = (float)(i % 3 != 1);
  int64_t x_shape[3] = {B, S, 8}, mask_shape[2] = {B, S}, y_shape[3] = {B, S, 4};
  hgr_model_input_t inputs[2] = {input_of(f32, 3, x_shape, x), input_of(f32, 2, mask_shape, mask)};
  hgr_model_run_t* run = NULL;
  ASSERT_OK(hgr_model_run(model, inputs, 2, &run));
  float* whole = output_of(run, 0, 3, y_shape);
  hgr_model_run_release(run);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 1; s <= S; s += 4) { /* the first s positions of sequence b, alone */
      int64_t xs[3] = {1, s, 8}, ms[2] = {1, s}, ys[3] = {1, s, 4};
      inputs[0] = input_of(f32, 3, xs, x + b * S * 8);
      inputs[1] = input_of(f32, 2, ms, mask + b * S);
      ASSERT_OK(hgr_model_run(model, inputs, 2, &run));
      float* part = output_of(run, 0, 3, ys);
      for (int64_t i = 0; i < s * 4; ++i) assert_float_equal(part[i], whole[b * S * 4 + i], 1e-4);
      free(part);
      hgr_model_run_release(run);
      hgr_model_report_t report;
      hgr_model_report(model, &report);
      assert_true(report.shared_weight_bytes >= (8 * 16 + 16 + 16 * 4) * 4); /* w1, b1, w2 not uploaded again */
    }
  for (int64_t i = 0; i < B * S * 4; ++i)
    if (mask[i / 4] == 0) assert_float_equal(whole[i], 0, 0);
  free(whole);
  hgr_model_release(model);
}

static void an_input_that_decides_shapes_is_keyed_by_value(void** state) {
  (void)state;
  hgr_model_t* model = open_model("reshape_input.onnx", 0);
  hgr_model_io_t io;
  ASSERT_OK(hgr_model_input(model, 1, &io));
  assert_false(io.decides_shapes); /* not known before a specialization needs it */
  float x[4 * 6];
  for (int i = 0; i < 24; ++i) x[i] = (float)i;
  int64_t x_shape[2] = {4, 6}, shape_shape[1] = {2};
  static const int64_t targets[][2] = {{3, 8}, {12, 2}, {3, 8}, {24, 1}};
  for (size_t k = 0; k < 4; ++k) {
    hgr_model_input_t inputs[2] = {input_of(f32, 2, x_shape, x), input_of(i64, 1, shape_shape, targets[k])};
    hgr_model_run_t* run = NULL;
    ASSERT_OK(hgr_model_run(model, inputs, 2, &run));
    float* y = output_of(run, 0, 2, targets[k]);
    for (int i = 0; i < 24; ++i) assert_float_equal(y[i], (float)i, 0);
    free(y);
    hgr_model_run_release(run);
  }
  ASSERT_OK(hgr_model_input(model, 1, &io));
  assert_true(io.decides_shapes);
  hgr_model_report_t report;
  hgr_model_report(model, &report);
  assert_int_equal(report.created, 3);
  assert_int_equal(report.hits, 1);
  /* Specializing without its data cannot key it. */
  hgr_model_input_t inputs[2] = {input_of(f32, 2, x_shape, x), input_of(i64, 1, shape_shape, NULL)};
  hgr_specialization_t* s = NULL;
  ASSERT_STATUS(hgr_model_specialize(model, inputs, 2, &s), HGR_STATUS_INVALID_ARGUMENT,
                "input 'shape' decides shapes: its data is needed");
  hgr_model_release(model);
}

/* With room for two specializations, a third shape evicts the least recently used
 * one, except one a run still holds, which stays valid and readable. */
static void eviction_spares_what_a_run_holds(void** state) {
  (void)state;
  hgr_model_t* model = open_model("cnn.onnx", 2);
  static float x[1 * 3 * 24 * 24];
  fill(x, sizeof(x) / sizeof(x[0]), 3);
  int64_t shapes[4][4] = {{1, 3, 8, 8}, {1, 3, 12, 12}, {1, 3, 16, 16}, {1, 3, 24, 24}};
  int64_t y_shape[2] = {1, 5};
  hgr_model_input_t first = input_of(f32, 4, shapes[0], x);
  hgr_model_run_t* held = NULL;
  ASSERT_OK(hgr_model_run(model, &first, 1, &held)); /* not released until the end */
  float* expected = output_of(held, 0, 2, y_shape);
  for (size_t k = 1; k < 4; ++k) {
    hgr_model_input_t in = input_of(f32, 4, shapes[k], x);
    hgr_model_run_t* run = NULL;
    ASSERT_OK(hgr_model_run(model, &in, 1, &run));
    float* y = output_of(run, 0, 2, y_shape);
    for (int i = 0; i < 5; ++i) assert_true(isfinite(y[i]));
    free(y);
    hgr_model_run_release(run);
  }
  hgr_model_report_t report;
  hgr_model_report(model, &report);
  assert_int_equal(report.created, 4);
  assert_true(report.evicted >= 1);
  assert_true(report.kept <= 3); /* two, plus the held one that could not go */
  float* again = output_of(held, 0, 2, y_shape); /* still readable */
  for (int i = 0; i < 5; ++i) assert_float_equal(again[i], expected[i], 0);
  free(again);
  free(expected);
  hgr_model_release(model);   /* before the run: the run keeps its specialization */
  hgr_model_run_release(held);
}

/* A new shape takes every kernel from the programs earlier shapes built (the model's
 * pool): images of other sizes through the CNN, then other batches, and other batch
 * and sequence lengths through the encoder. The first shape of each builds (or
 * loads) one program, which holds the kernels its ops pick at other shapes too (the
 * launches' siblings): the CNN's Gemm runs the GEMV of one row at batch 1 and a
 * GEMM tile from batch 2, and the first program has both. No other shape builds or
 * loads any. */
static void a_new_shape_compiles_nothing(void** state) {
  (void)state;
  static float x[4 * 3 * 24 * 24];
  fill(x, sizeof(x) / sizeof(x[0]), 5);
  hgr_model_t* cnn = open_model("cnn.onnx", 0);
  int64_t images[5][4] = {{1, 3, 8, 8}, {1, 3, 16, 16}, {1, 3, 24, 20}, {2, 3, 12, 12}, {4, 3, 16, 16}};
  uint32_t cnn_built[5] = {1, 0, 0, 0, 0};
  hgr_model_t* encoder = open_model("encoder.onnx", 0);
  int64_t sequences[5][2] = {{1, 5}, {2, 9}, {3, 1}, {1, 64}, {4, 7}};
  uint32_t encoder_built[5] = {1, 0, 0, 0, 0};
  for (size_t k = 0; k < 5; ++k) {
    hgr_model_report_t report;
    hgr_model_input_t image = input_of(f32, 4, images[k], x);
    hgr_model_run_t* run = NULL;
    ASSERT_OK(hgr_model_run(cnn, &image, 1, &run));
    ASSERT_OK(hgr_model_run_wait(run));
    hgr_model_run_release(run);
    hgr_model_report(cnn, &report);
    int64_t x_shape[3] = {sequences[k][0], sequences[k][1], 8};
    hgr_model_input_t tokens[2] = {input_of(f32, 3, x_shape, x), input_of(f32, 2, sequences[k], x)};
    ASSERT_OK(hgr_model_run(encoder, tokens, 2, &run));
    ASSERT_OK(hgr_model_run_wait(run));
    hgr_model_run_release(run);
    hgr_model_report_t encoder_report;
    hgr_model_report(encoder, &encoder_report);
    const hgr_program_stats_t* stats[2] = {&report.programs, &encoder_report.programs};
    const uint32_t expected[2] = {cnn_built[k], encoder_built[k]};
    for (size_t m = 0; m < 2; ++m) {
      uint32_t built = stats[m]->from_source + stats[m]->from_cache;
      print_message("%s, shape %zu: %u programs, %u built or loaded, %u from the model's pool\n",
                    m ? "encoder.onnx" : "cnn.onnx", k, stats[m]->programs, built, stats[m]->from_pool);
      assert_int_equal(built, expected[m]);
      assert_int_equal(stats[m]->from_pool, stats[m]->programs - built);
      if (k > 0) assert_true(stats[m]->from_pool >= 1);
    }
  }
  hgr_model_release(cnn);
  hgr_model_release(encoder);
}

/* A constant that depends on an input's value (the window of table that offset
 * picks) has the same name and bytes at every offset: offsets 0, 1 and then 3 (whose
 * window equals offset 0's) must each add their own window, whichever specialization
 * the weights are shared from. */
static void a_constant_of_the_same_name_but_other_values_is_not_shared(void** state) {
  (void)state;
  hgr_model_t* model = open_model("window.onnx", 0);
  static const float table[8] = {0, 1, 2, 0, 1, 2, 0, 1};
  const float x[2] = {10, 20};
  const int64_t x_shape[1] = {2}, offset_shape[1] = {1};
  static const int64_t offsets[] = {0, 1, 3, 1, 4};
  for (size_t k = 0; k < sizeof(offsets) / sizeof(offsets[0]); ++k) {
    hgr_model_input_t inputs[2] = {input_of(f32, 1, x_shape, x), input_of(i64, 1, offset_shape, &offsets[k])};
    hgr_model_run_t* run = NULL;
    ASSERT_OK(hgr_model_run(model, inputs, 2, &run));
    float* y = output_of(run, 0, 1, x_shape);
    for (int i = 0; i < 2; ++i) assert_float_equal(y[i], x[i] + table[offsets[k] + i], 0);
    free(y);
    hgr_model_run_release(run);
  }
  hgr_model_report_t report;
  hgr_model_report(model, &report);
  assert_int_equal(report.created, 4);
  hgr_model_release(model);
}

/* A graph model (a TVM graph with its params): the params are weights, not inputs;
 * it runs at its own shapes only, after the graph passes (its conv takes the relu as
 * an epilogue), with the outputs of a plain executor of the unpassed graph. */
static void a_graph_model_runs_at_its_shapes_after_the_passes(void** state) {
  (void)state;
  char path[1024];
  snprintf(path, sizeof(path), "%s/../graphs/conv_relu.json", data_dir);
  hgr_graph_t* graph = NULL;
  ASSERT_OK(hgr_graph_load_file(path, &graph));
  static float w[4 * 3 * 3 * 3], b[4], x[3 * 8 * 8], want[4 * 8 * 8], got[4 * 8 * 8];
  fill(w, 108, 1);
  fill(b, 4, 2);
  fill(x, 192, 3);
  hgr_params_t* params = NULL;
  ASSERT_OK(hgr_params_create(&params));
  const int64_t w_shape[4] = {4, 3, 3, 3}, b_shape[1] = {4}, x_shape[4] = {1, 3, 8, 8}, y_shape[4] = {1, 4, 8, 8};
  ASSERT_OK(hgr_params_add(params, "w", f32, 4, w_shape, w, sizeof(w)));
  ASSERT_OK(hgr_params_add(params, "b", f32, 1, b_shape, b, sizeof(b)));
  hgr_executor_options_t plain;
  hgr_executor_options_init(&plain);
  hgr_device_binding_t binding = {0, device_spec};
  plain.bindings = &binding;
  plain.binding_count = 1;
  plain.params = params;
  hgr_executor_t* executor = NULL;
  ASSERT_OK(hgr_executor_create(instance, graph, &plain, &executor));
  ASSERT_OK(hgr_executor_set_input_by_name(executor, "x", x, sizeof(x)));
  ASSERT_OK(hgr_executor_run(executor));
  ASSERT_OK(hgr_executor_wait(executor));
  ASSERT_OK(hgr_executor_get_output(executor, 0, want, sizeof(want)));
  hgr_executor_release(executor);

  hgr_model_options_t options;
  hgr_model_options_init(&options);
  options.executor.bindings = &binding;
  options.executor.binding_count = 1;
  hgr_model_t* model = NULL;
  ASSERT_OK(hgr_model_create_graph(instance, graph, params, &options, &model));
  hgr_params_release(params); /* the model copied them */
  hgr_graph_release(graph);   /* and holds its own graph */
  assert_int_equal(hgr_model_input_count(model), 1);
  hgr_model_input_t in = input_of(f32, 4, x_shape, x);
  hgr_model_run_t* run = NULL;
  ASSERT_OK(hgr_model_run(model, &in, 1, &run));
  float* y = output_of(run, 0, 4, y_shape);
  memcpy(got, y, sizeof(got));
  free(y);
  hgr_model_run_release(run);
  for (size_t i = 0; i < 4 * 8 * 8; ++i) assert_float_equal(got[i], want[i], 1e-5);
  hgr_specialization_t* s = NULL;
  ASSERT_OK(hgr_model_specialize(model, &in, 1, &s));
  hgr_graph_t* specialized = hgr_executor_graph(hgr_specialization_executor(s));
  size_t ops = 0;
  for (size_t n = 0; n < hgr_graph_node_count(specialized); ++n) {
    hgr_node_info_t info;
    ASSERT_OK(hgr_graph_node_info(specialized, n, &info));
    ops += info.func_name != NULL;
  }
  assert_int_equal(ops, 1); /* conv2d with its relu */
  hgr_specialization_release(s);
  const int64_t other[4] = {1, 3, 9, 9};
  static float x9[3 * 9 * 9];
  in = input_of(f32, 4, other, x9);
  ASSERT_STATUS(hgr_model_run(model, &in, 1, &run), HGR_STATUS_INVALID_ARGUMENT,
                "dimension 2 is 8 in the model; the input given has 9");
  hgr_model_release(model);
}

/* Outputs that no op writes (constant_outputs.onnx): c a Constant (float), k an
 * int32 initializer, x a graph input that is also an output, beside y = Relu(x); at
 * two shapes, each twice. Read through the model's runs, then through each
 * specialization's executor with every output bound to aligned host memory, as the
 * Python session binds them: on PoCL such memory became the storage (zero copy), so
 * c, k and x read whatever it held, since no run writes their storages; and the
 * second shape's c and k, params shared with the first, could not be bound. */
static void constant_and_input_outputs_read_back_at_two_shapes(void** state) {
  (void)state;
  hgr_model_t* model = open_model("constant_outputs.onnx", 0);
  assert_int_equal(hgr_model_output_count(model), 4);
  static const float c_want[6] = {1.5f, -2, 3, 4, 5, -6};
  static const int32_t k_want[4] = {7, -8, 9, 2147483647};
  static const int64_t rows[] = {2, 5, 2, 5};
  const int64_t c_shape[2] = {2, 3}, k_shape[1] = {4};
  for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); ++r) {
    int64_t n = rows[r];
    const int64_t shape[2] = {n, 3};
    float x[15];
    fill(x, (size_t)(3 * n), r);
    hgr_model_input_t in = input_of(f32, 2, shape, x);
    hgr_model_run_t* run = NULL;
    ASSERT_OK(hgr_model_run(model, &in, 1, &run));
    float* y = output_of(run, 0, 2, shape);
    float* c = output_of(run, 1, 2, c_shape);
    float* x_out = output_of(run, 3, 2, shape);
    int32_t k[4];
    hgr_tensor_info_t info;
    ASSERT_OK(hgr_model_run_output_info(run, 2, &info));
    assert_int_equal(info.dtype.code, HGR_DTYPE_INT);
    assert_int_equal(info.dtype.bits, 32);
    assert_int_equal(info.ndim, 1);
    assert_int_equal(info.shape[0], k_shape[0]);
    ASSERT_OK(hgr_model_run_get_output(run, 2, k, sizeof(k)));
    for (int64_t i = 0; i < 3 * n; ++i) {
      assert_float_equal(y[i], x[i] > 0 ? x[i] : 0, 0);
      assert_float_equal(x_out[i], x[i], 0);
    }
    assert_memory_equal(c, c_want, sizeof(c_want));
    assert_memory_equal(k, k_want, sizeof(k_want));
    free(y);
    free(c);
    free(x_out);
    hgr_model_run_release(run);

    hgr_specialization_t* s = NULL;
    ASSERT_OK(hgr_model_specialize(model, &in, 1, &s));
    hgr_executor_t* executor = hgr_specialization_executor(s);
    size_t bytes[4] = {(size_t)(12 * n), sizeof(c_want), sizeof(k_want), (size_t)(12 * n)};
    void* bound[4];
    for (size_t o = 0; o < 4; ++o) {
      bound[o] = aligned_alloc(4096, 4096); /* aligned past any device's base address alignment */
      assert_non_null(bound[o]);
      memset(bound[o], 0x5a, 4096);
      ASSERT_OK(hgr_executor_bind_host(executor, HGR_OUTPUT, o, bound[o], bytes[o]));
    }
    for (int repeat = 0; repeat < 2; ++repeat) {
      fill(x, (size_t)(3 * n), 100 + r * 2 + (size_t)repeat);
      ASSERT_OK(hgr_executor_set_input(executor, 0, x, (size_t)(12 * n)));
      ASSERT_OK(hgr_executor_run(executor));
      ASSERT_OK(hgr_executor_wait(executor));
      const float* y_bound = bound[0];
      const float* x_bound = bound[3];
      for (int64_t i = 0; i < 3 * n; ++i) {
        assert_float_equal(y_bound[i], x[i] > 0 ? x[i] : 0, 0);
        assert_float_equal(x_bound[i], x[i], 0);
      }
      assert_memory_equal(bound[1], c_want, sizeof(c_want));
      assert_memory_equal(bound[2], k_want, sizeof(k_want));
    }
    for (size_t o = 1; o < 4; ++o) /* their storages are the params' and the input's */
      assert_int_equal(hgr_executor_binding_kind(executor, HGR_OUTPUT, o), HGR_BINDING_HOST_COPY);
    for (size_t o = 0; o < 4; ++o) {
      ASSERT_OK(hgr_executor_unbind(executor, HGR_OUTPUT, o));
      free(bound[o]);
    }
    hgr_specialization_release(s);
  }
  hgr_model_report_t report;
  hgr_model_report(model, &report);
  assert_int_equal(report.created, 2);
  hgr_model_release(model);
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s DATA_DIR DEVICE_SPEC\n", argv[0]);
    return 2;
  }
  data_dir = argv[1];
  device_spec = argv[2];
  instance = hgr_test_instance_or_exit();
  hgr_test_require_devices(instance, &device_spec, 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(inputs_keep_their_symbolic_dims),
      cmocka_unit_test(every_kind_of_unknown_dim_runs_at_many_shapes),
      cmocka_unit_test(wrong_inputs_are_named_with_both_values),
      cmocka_unit_test(an_int64_value_past_int32_is_refused),
      cmocka_unit_test(encoder_rows_agree_across_batch_and_sequence_lengths),
      cmocka_unit_test(an_input_that_decides_shapes_is_keyed_by_value),
      cmocka_unit_test(eviction_spares_what_a_run_holds),
      cmocka_unit_test(a_new_shape_compiles_nothing),
      cmocka_unit_test(a_graph_model_runs_at_its_shapes_after_the_passes),
      cmocka_unit_test(a_constant_of_the_same_name_but_other_values_is_not_shared),
      cmocka_unit_test(constant_and_input_outputs_read_back_at_two_shapes),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  hgr_instance_release(instance);
  return failed;
}
