/* Layout ops against plain-C references (tests/ref_layout.c) on random float32 and
 * int32 data (argument: a device spec).
 *
 * Tolerance: every op here only moves elements, so every output is compared
 * exactly (bit for bit on float32: no arithmetic touches a value).
 * Oclgrind simulates every work-item: its shapes stay tiny, and the large cases run
 * only on the real platforms. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "optest.h"
#include "ref_layout.h"

static const char* const dtypes[2] = {"float32", "int32"};

static bool simulated(void) { return hgr_optest_is_simulator(hgr_optest_device); }

static void fill(hgr_optest_tensor_t* tensor, hgr_test_rng_t* rng) { hgr_optest_fill(tensor, rng, -1000, 1000); }

static void check(hgr_optest_t* t) {
  hgr_optest_check(hgr_optest_instance, hgr_optest_device, t);
  hgr_optest_free(t);
}

/* ---- concatenate ---------------------------------------------------------------------- */

/* Concatenates count inputs shaped like base but with axis_dims[k] along axis. */
static void check_concatenate(hgr_test_rng_t* rng, const char* dtype, uint32_t count, int32_t ndim,
                              const int64_t* base, int32_t axis, int32_t axis_attr, const int64_t* axis_dims) {
  char attrs[64];
  snprintf(attrs, sizeof(attrs), "\"axis\": \"%d\"", axis_attr);
  hgr_optest_t t;
  hgr_optest_init(&t, "concatenate", attrs);
  int64_t shapes[8][8];
  const void* inputs[8];
  const int64_t* shape_of[8];
  int64_t out_shape[8];
  memcpy(out_shape, base, sizeof(int64_t) * (size_t)ndim);
  out_shape[axis] = 0;
  for (uint32_t k = 0; k < count; ++k) {
    memcpy(shapes[k], base, sizeof(int64_t) * (size_t)ndim);
    shapes[k][axis] = axis_dims[k];
    out_shape[axis] += axis_dims[k];
    inputs[k] = hgr_optest_input(&t, dtype, ndim, shapes[k]);
    shape_of[k] = shapes[k];
    fill(&t.inputs[k], rng);
  }
  void* out = hgr_optest_output(&t, dtype, ndim, out_shape);
  ref_concatenate(inputs, shape_of, count, ndim, axis, out);
  check(&t);
}

static void concatenate_matches_reference(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 11);
  static const int64_t base[3] = {3, 5, 7};
  static const int64_t axis_dims[5] = {2, 1, 5, 3, 4};
  static const uint32_t counts[3] = {1, 2, 5};
  int n = 0;
  for (int c = 0; c < 3; ++c)
    for (int32_t axis = 0; axis < 3; ++axis, ++n) /* first, middle, last; the last also as -1 */
      check_concatenate(&rng, dtypes[n % 2], counts[c], 3, base, axis, axis == 2 && c != 1 ? -1 : axis, axis_dims);
  check_concatenate(&rng, "float32", 2, 1, (int64_t[]){9}, 0, 0, (int64_t[]){9, 1});
  check_concatenate(&rng, "int32", 2, 5, (int64_t[]){2, 1, 3, 2, 3}, 3, -2, (int64_t[]){3, 1});
  check_concatenate(&rng, "float32", 5, 4, (int64_t[]){1, 2, 1, 3}, 2, 2, (int64_t[]){1, 1, 1, 1, 1});
  check_concatenate(&rng, "int32", 3, 3, (int64_t[]){3, 5, 7}, 1, 1, (int64_t[]){2, 0, 3}); /* an empty input */
  /* 4 inputs a launch: 8 in two full launches, 6 with empty ones among them, rows
   * of 16 and more per input (whole chunks and tails) */
  check_concatenate(&rng, "float32", 8, 3, (int64_t[]){2, 1, 8}, 1, 1, (int64_t[]){1, 2, 3, 4, 5, 6, 7, 8});
  check_concatenate(&rng, "int32", 6, 3, (int64_t[]){3, 1, 16}, 1, 1, (int64_t[]){0, 2, 0, 3, 1, 0});
  if (!simulated()) {
    check_concatenate(&rng, "float32", 3, 3, (int64_t[]){64, 1, 33}, 1, 1, (int64_t[]){300, 517, 1});
    check_concatenate(&rng, "int32", 2, 2, (int64_t[]){1, 70001}, 0, 0, (int64_t[]){5, 3});
  }
}

/* One launch per 4 inputs (hgr_layout_concat), a work-item per 16 elements of one
 * input's row: 5 inputs of rows of 40, 20, 7, 16 and 33 elements. */
static void concatenate_plans_a_launch_per_four_inputs(void** state) {
  (void)state;
  hgr__limits_t roomy = {1024, {1024, 1024, 1024}, 64 * 1024, 0};
  static const int64_t dims[5] = {40, 20, 7, 16, 33};
  hgr_optest_t t;
  hgr_optest_init(&t, "concatenate", "\"axis\": \"1\"");
  for (int k = 0; k < 5; ++k) hgr_optest_input(&t, "float32", 2, (int64_t[]){3, dims[k]});
  hgr_optest_output(&t, "float32", 2, (int64_t[]){3, 116});
  hgr__op_ctx_t ctx;
  hgr_optest_plan(&t, &roomy, NULL, &ctx);
  assert_int_equal(ctx.launch_count, 2);
  for (uint32_t l = 0; l < 2; ++l) assert_string_equal(ctx.launches[l].kernel, "hgr_layout_concat");
  /* chunks of 16 per row: 3 + 2 + 1 + 1, then 3; 3 rows each */
  assert_true(ctx.launches[0].launch.global[0] >= 7 * 3);
  assert_true(ctx.launches[0].launch.global[0] < 7 * 3 + 64);
  assert_true(ctx.launches[1].launch.global[0] >= 3 * 3);
  hgr__op_ctx_free(&ctx);
  hgr_optest_free(&t);
}

/* ---- transpose ------------------------------------------------------------------------ */

/* axes NULL: no attr (reversed dims); axes_text: the attr as written (may use
 * negative axes) for the permutation axes. */
static void check_transpose(hgr_test_rng_t* rng, const char* dtype, int32_t ndim, const int64_t* shape,
                            const int32_t* axes, const char* axes_text) {
  char attrs[96] = "";
  if (axes_text) snprintf(attrs, sizeof(attrs), "\"axes\": \"%s\"", axes_text);
  int32_t permutation[8];
  int64_t out_shape[8];
  for (int32_t d = 0; d < ndim; ++d) {
    permutation[d] = axes ? axes[d] : ndim - 1 - d;
    out_shape[d] = shape[permutation[d]];
  }
  hgr_optest_t t;
  hgr_optest_init(&t, "transpose", attrs);
  void* in = hgr_optest_input(&t, dtype, ndim, shape);
  void* out = hgr_optest_output(&t, dtype, ndim, out_shape);
  fill(&t.inputs[0], rng);
  ref_transpose(in, shape, ndim, permutation, out);
  check(&t);
}

static void transpose_matches_reference(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 12);
  static const int32_t permutations[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  for (int p = 0; p < 6; ++p) {
    char text[32];
    snprintf(text, sizeof(text), "[%d, %d, %d]", permutations[p][0], permutations[p][1], permutations[p][2]);
    check_transpose(&rng, dtypes[p % 2], 3, (int64_t[]){3, 5, 7}, permutations[p], text);
  }
  check_transpose(&rng, "float32", 3, (int64_t[]){2, 1, 3}, NULL, NULL);
  check_transpose(&rng, "int32", 3, (int64_t[]){4, 1, 3}, (int32_t[]){2, 0, 1}, "[-1, 0, -2]");
  check_transpose(&rng, "float32", 4, (int64_t[]){2, 3, 1, 5}, (int32_t[]){3, 1, 0, 2}, "(3, 1, 0, 2)");
  check_transpose(&rng, "int32", 4, (int64_t[]){3, 1, 1, 2}, (int32_t[]){0, 3, 2, 1}, "[0, 3, 2, 1]");
  check_transpose(&rng, "float32", 5, (int64_t[]){2, 1, 3, 2, 3}, (int32_t[]){4, 2, 0, 1, 3}, "[4, 2, 0, 1, 3]");
  check_transpose(&rng, "int32", 5, (int64_t[]){2, 3, 2, 1, 3}, NULL, NULL);
  check_transpose(&rng, "float32", 1, (int64_t[]){7}, (int32_t[]){0}, "[0]");
  if (!simulated()) {
    check_transpose(&rng, "float32", 2, (int64_t[]){517, 1029}, (int32_t[]){1, 0}, "[1, 0]");
    check_transpose(&rng, "int32", 3, (int64_t[]){64, 65, 67}, (int32_t[]){2, 0, 1}, "[2, 0, 1]");
  }
}

/* ---- pad ------------------------------------------------------------------------------ */

/* pad_value_text NULL: no attr (0); value_input: the value comes as input 1. */
static void check_pad(hgr_test_rng_t* rng, const char* dtype, int32_t ndim, const int64_t* shape,
                      const int64_t* widths, const char* pad_value_text, bool value_input) {
  char attrs[512];
  int used = snprintf(attrs, sizeof(attrs), "\"pad_width\": \"[");
  int64_t out_shape[8];
  for (int32_t d = 0; d < ndim; ++d) {
    used += snprintf(attrs + used, sizeof(attrs) - (size_t)used, "%s[%lld, %lld]", d ? ", " : "",
                     (long long)widths[2 * d], (long long)widths[2 * d + 1]);
    out_shape[d] = widths[2 * d] + shape[d] + widths[2 * d + 1];
  }
  used += snprintf(attrs + used, sizeof(attrs) - (size_t)used, "]\"");
  if (pad_value_text) snprintf(attrs + used, sizeof(attrs) - (size_t)used, ", \"pad_value\": \"%s\"", pad_value_text);
  bool is_int = !strcmp(dtype, "int32");
  hgr_optest_t t;
  hgr_optest_init(&t, "pad", attrs);
  void* in = hgr_optest_input(&t, dtype, ndim, shape);
  fill(&t.inputs[0], rng);
  uint32_t value_bits = 0; /* 0 and 0.0f alike */
  if (value_input) {
    void* value = hgr_optest_input(&t, dtype, 0, NULL);
    fill(&t.inputs[1], rng);
    memcpy(&value_bits, value, 4);
  } else if (pad_value_text) {
    if (is_int) {
      int32_t integer = (int32_t)strtol(pad_value_text, NULL, 10);
      memcpy(&value_bits, &integer, 4);
    } else {
      float real = strtof(pad_value_text, NULL);
      memcpy(&value_bits, &real, 4);
    }
  }
  void* out = hgr_optest_output(&t, dtype, ndim, out_shape);
  ref_pad(in, shape, ndim, widths, &value_bits, out);
  check(&t);
}

static void pad_matches_reference(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 13);
  check_pad(&rng, "float32", 1, (int64_t[]){7}, (int64_t[]){2, 3}, "1.5", false);
  check_pad(&rng, "int32", 1, (int64_t[]){1}, (int64_t[]){0, 4}, "-7", false);
  check_pad(&rng, "int32", 2, (int64_t[]){3, 5}, (int64_t[]){0, 0, 1, 2}, "-7", false);      /* dim 0 unpadded */
  check_pad(&rng, "float32", 3, (int64_t[]){2, 3, 4}, (int64_t[]){1, 0, 0, 2, 3, 1}, "-inf", false);
  check_pad(&rng, "int32", 3, (int64_t[]){2, 3, 4}, (int64_t[]){0, 1, 2, 0, 1, 1}, NULL, false); /* default 0 */
  check_pad(&rng, "float32", 4, (int64_t[]){1, 2, 1, 3}, (int64_t[]){0, 0, 0, 0, 0, 0, 0, 0}, "3", false);
  check_pad(&rng, "int32", 5, (int64_t[]){1, 2, 3, 1, 2}, (int64_t[]){1, 1, 0, 0, 2, 0, 0, 1, 1, 2}, "5", false);
  check_pad(&rng, "float32", 2, (int64_t[]){3, 1}, (int64_t[]){1, 1, 2, 2}, NULL, true); /* Relay's pad_value input */
  check_pad(&rng, "int32", 2, (int64_t[]){2, 3}, (int64_t[]){2, 0, 0, 1}, NULL, true);
  if (!simulated()) {
    check_pad(&rng, "float32", 2, (int64_t[]){300, 301}, (int64_t[]){5, 7, 0, 13}, "0.25", false);
    check_pad(&rng, "int32", 4, (int64_t[]){2, 16, 33, 35}, (int64_t[]){0, 0, 0, 0, 1, 1, 1, 1}, "9", false);
  }
}

/* ---- take ----------------------------------------------------------------------------- */

/* axis < 0: no axis attr (flattened); axis_text: the attr as written. Indices are
 * random in [-2 extent, 2 extent), so many fall outside the axis. */
static void check_take(hgr_test_rng_t* rng, const char* dtype, int32_t ndim, const int64_t* shape, int32_t axis,
                       const char* axis_text, int32_t index_ndim, const int64_t* index_shape, const char* mode) {
  char attrs[128] = "";
  int used = 0;
  if (axis_text) used = snprintf(attrs, sizeof(attrs), "\"axis\": \"%s\"", axis_text);
  if (mode) snprintf(attrs + used, sizeof(attrs) - (size_t)used, "%s\"mode\": \"%s\"", used ? ", " : "", mode);
  hgr_optest_t t;
  hgr_optest_init(&t, "take", attrs);
  void* data = hgr_optest_input(&t, dtype, ndim, shape);
  int32_t* indices = hgr_optest_input(&t, "int32", index_ndim, index_shape);
  fill(&t.inputs[0], rng);
  int64_t extent = 1;
  if (axis >= 0) extent = shape[axis];
  else
    for (int32_t d = 0; d < ndim; ++d) extent *= shape[d];
  hgr_optest_fill(&t.inputs[1], rng, (float)(-2 * extent), (float)(2 * extent));
  int64_t out_shape[12];
  int32_t out_ndim = 0;
  if (axis >= 0)
    for (int32_t d = 0; d < axis; ++d) out_shape[out_ndim++] = shape[d];
  for (int32_t d = 0; d < index_ndim; ++d) out_shape[out_ndim++] = index_shape[d];
  if (axis >= 0)
    for (int32_t d = axis + 1; d < ndim; ++d) out_shape[out_ndim++] = shape[d];
  void* out = hgr_optest_output(&t, dtype, out_ndim, out_shape);
  ref_take(data, shape, ndim, indices, t.inputs[1].count, axis, mode && !strcmp(mode, "wrap"), out);
  check(&t);
}

static void take_matches_reference(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 14);
  check_take(&rng, "float32", 2, (int64_t[]){3, 4}, -1, NULL, 1, (int64_t[]){9}, NULL); /* axis absent, clip */
  check_take(&rng, "int32", 2, (int64_t[]){3, 4}, -1, "None", 2, (int64_t[]){3, 5}, "wrap");
  check_take(&rng, "float32", 2, (int64_t[]){5, 3}, 0, "0", 2, (int64_t[]){2, 3}, "clip");
  check_take(&rng, "int32", 2, (int64_t[]){5, 3}, 0, "0", 2, (int64_t[]){2, 3}, "wrap");
  check_take(&rng, "float32", 2, (int64_t[]){5, 3}, 0, "-2", 1, (int64_t[]){7}, "fast"); /* clipped too */
  check_take(&rng, "int32", 3, (int64_t[]){2, 7, 3}, 1, "-2", 1, (int64_t[]){4}, "wrap");
  check_take(&rng, "float32", 3, (int64_t[]){3, 4, 6}, 2, "2", 2, (int64_t[]){2, 2}, NULL);
  check_take(&rng, "int32", 2, (int64_t[]){5, 3}, 0, "0", 0, NULL, "clip"); /* a scalar index */
  check_take(&rng, "float32", 5, (int64_t[]){2, 1, 3, 2, 2}, 2, "2", 1, (int64_t[]){3}, "wrap");
  check_take(&rng, "int32", 1, (int64_t[]){1}, 0, "0", 1, (int64_t[]){5}, "wrap");
  /* rows of 130: work-groups along the rows, 8 elements a work-item and a tail of 2 */
  check_take(&rng, "float32", 3, (int64_t[]){2, 3, 130}, 1, "1", 1, (int64_t[]){4}, "clip");
  if (!simulated()) {
    check_take(&rng, "float32", 2, (int64_t[]){1000, 64}, 0, "0", 1, (int64_t[]){5001}, "wrap");
    check_take(&rng, "int32", 3, (int64_t[]){20, 300, 7}, 1, "1", 2, (int64_t[]){33, 9}, "clip");
  }
}

/* ---- strided_slice -------------------------------------------------------------------- */

/* Hand-checked slices of arange(n) (int32), as NumPy gives them. */
static void check_literal_slice(int32_t ndim, const int64_t* shape, const char* attrs, int32_t out_ndim,
                                const int64_t* out_shape, const int32_t* expected) {
  hgr_optest_t t;
  hgr_optest_init(&t, "strided_slice", attrs);
  int32_t* in = hgr_optest_input(&t, "int32", ndim, shape);
  for (uint64_t i = 0; i < t.inputs[0].count; ++i) in[i] = (int32_t)i;
  int32_t* out = hgr_optest_output(&t, "int32", out_ndim, out_shape);
  memcpy(out, expected, t.outputs[0].count * 4);
  check(&t);
}

static void strided_slice_matches_hand_checked_values(void** state) {
  (void)state;
  /* x[8:1:-3] */
  check_literal_slice(1, (int64_t[]){10}, "\"begin\": \"[8]\", \"end\": \"[1]\", \"strides\": \"[-3]\"", 1,
                      (int64_t[]){3}, (int32_t[]){8, 5, 2});
  /* x[-1:-11:-1]: the whole axis reversed */
  check_literal_slice(1, (int64_t[]){6}, "\"begin\": \"[-1]\", \"end\": \"[-7]\", \"strides\": \"[-1]\"", 1,
                      (int64_t[]){6}, (int32_t[]){5, 4, 3, 2, 1, 0});
  /* x[-100:100]: clamped */
  check_literal_slice(1, (int64_t[]){4}, "\"begin\": \"[-100]\", \"end\": \"[100]\"", 1, (int64_t[]){4},
                      (int32_t[]){0, 1, 2, 3});
  /* size mode: 3 elements from 2, then a negative size: to the end */
  check_literal_slice(1, (int64_t[]){8}, "\"begin\": \"[2]\", \"end\": \"[3]\", \"slice_mode\": \"size\"", 1,
                      (int64_t[]){3}, (int32_t[]){2, 3, 4});
  check_literal_slice(2, (int64_t[]){2, 4},
                      "\"begin\": \"[1, 1]\", \"end\": \"[1, -1]\", \"strides\": \"[5, 5]\", \"slice_mode\": \"size\"",
                      2, (int64_t[]){1, 3}, (int32_t[]){5, 6, 7});
  /* x[1:3] of a 3x4: the missing trailing dim takes its whole range */
  check_literal_slice(2, (int64_t[]){3, 4}, "\"begin\": \"[1]\", \"end\": \"[3]\"", 2, (int64_t[]){2, 4},
                      (int32_t[]){4, 5, 6, 7, 8, 9, 10, 11});
  /* axes: x[:, -1:0:-2] */
  check_literal_slice(2, (int64_t[]){3, 4},
                      "\"begin\": \"[-1]\", \"end\": \"[0]\", \"strides\": \"[-2]\", \"axes\": \"[1]\"", 2,
                      (int64_t[]){3, 2}, (int32_t[]){3, 1, 7, 5, 11, 9});
  /* an empty slice: begin == end */
  check_literal_slice(2, (int64_t[]){3, 4}, "\"begin\": \"[0, 2]\", \"end\": \"[3, 2]\"", 2, (int64_t[]){3, 0},
                      (int32_t[]){0});
}

typedef struct slice_case_t {
  int32_t ndim;
  int64_t shape[5];
  uint32_t count; /* values in begin, end (and strides unless stride_count says) */
  int64_t begin[5], end[5], strides[5];
  uint32_t stride_count;
  int32_t axes[5]; /* used when axis_count */
  uint32_t axis_count;
  bool size_mode;
} slice_case_t;

static void format_list(char* buffer, size_t capacity, const int64_t* values, uint32_t count) {
  int used = snprintf(buffer, capacity, "[");
  for (uint32_t i = 0; i < count; ++i)
    used += snprintf(buffer + used, capacity - (size_t)used, "%s%lld", i ? ", " : "", (long long)values[i]);
  snprintf(buffer + used, capacity - (size_t)used, "]");
}

static void check_slice(hgr_test_rng_t* rng, const char* dtype, const slice_case_t* c) {
  char attrs[512], begin[96], end[96], strides[96], axes[96];
  format_list(begin, sizeof(begin), c->begin, c->count);
  format_list(end, sizeof(end), c->end, c->count);
  format_list(strides, sizeof(strides), c->strides, c->stride_count);
  int64_t axes64[5];
  for (uint32_t i = 0; i < c->axis_count; ++i) axes64[i] = c->axes[i];
  format_list(axes, sizeof(axes), axes64, c->axis_count);
  int used = snprintf(attrs, sizeof(attrs), "\"begin\": \"%s\", \"end\": \"%s\"", begin, end);
  if (c->stride_count) used += snprintf(attrs + used, sizeof(attrs) - (size_t)used, ", \"strides\": \"%s\"", strides);
  if (c->axis_count) used += snprintf(attrs + used, sizeof(attrs) - (size_t)used, ", \"axes\": \"%s\"", axes);
  if (c->size_mode) snprintf(attrs + used, sizeof(attrs) - (size_t)used, ", \"slice_mode\": \"size\"");
  int32_t canonical_axes[5];
  for (uint32_t i = 0; i < c->axis_count; ++i) canonical_axes[i] = c->axes[i] < 0 ? c->axes[i] + c->ndim : c->axes[i];
  int64_t first[5], step[5], out_shape[5];
  assert_true(ref_strided_slice_canonical(c->shape, c->ndim, c->begin, c->count, c->end, c->count, c->strides,
                                          c->stride_count, c->axis_count ? canonical_axes : NULL, c->axis_count,
                                          c->size_mode, first, step, out_shape));
  hgr_optest_t t;
  hgr_optest_init(&t, "strided_slice", attrs);
  void* in = hgr_optest_input(&t, dtype, c->ndim, c->shape);
  fill(&t.inputs[0], rng);
  void* out = hgr_optest_output(&t, dtype, c->ndim, out_shape);
  ref_strided_slice(in, c->shape, c->ndim, first, step, out_shape, out);
  check(&t);
}

static void strided_slice_matches_reference(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 15);
  static const slice_case_t cases[] = {
      {3, {5, 6, 7}, 3, {1, -1, 0}, {4, -7, 7}, {2, -2, 3}, 3, {0}, 0, false},
      {3, {5, 6, 7}, 2, {-2, 5}, {-100, 0}, {-1, -3}, 2, {0}, 0, false},       /* trailing dim: full */
      {4, {2, 3, 1, 5}, 4, {0, 2, 0, -1}, {2, -4, 1, -6}, {1, -1, 1, -1}, 4, {0}, 0, false},
      {5, {2, 3, 2, 1, 4}, 5, {1, 0, -1, 0, 3}, {-3, 3, -3, 1, 0}, {-1, 2, -1, 1, -2}, 5, {0}, 0, false},
      {3, {4, 5, 6}, 2, {-1, 1}, {0, 100}, {-2, 2}, 2, {2, -2}, 2, false},     /* axes, one negative */
      {4, {3, 4, 5, 2}, 1, {3}, {-1}, {1}, 1, {2}, 1, false},                  /* axes: x[:, :, 3:-1] */
      {3, {5, 6, 7}, 3, {1, -3, 2}, {3, 2, -1}, {0}, 0, {0}, 0, true},          /* size mode */
      {2, {6, 7}, 2, {4, 0}, {2, 7}, {0}, 0, {1, 0}, 2, true},                 /* size mode with axes */
      {2, {1, 1}, 2, {0, 0}, {1, 1}, {1, 1}, 2, {0}, 0, false},
      {1, {9}, 1, {7}, {-10}, {-4}, 1, {0}, 0, false},
      /* whole runs (hgr_layout_gather_runs): a contiguous block from an offset (a
       * detector's scores out of its head), rows of 17 with a tail, rows of 32 */
      {3, {1, 12, 40}, 1, {4}, {12}, {1}, 1, {1}, 1, false},
      {2, {7, 21}, 2, {1, 2}, {6, 19}, {2, 1}, 2, {0}, 0, false},
      {3, {3, 4, 32}, 2, {1, 1}, {3, 4}, {1, 2}, 2, {0, 1}, 2, false},
      /* runs that step along the last dim (hgr_layout_gather_runs with a step): a
       * stride-2 subsampling of an image's rows and columns, as before a strided 1x1
       * convolution (runs of 6, and of 5 from an offset), a step of 3 in runs of 17
       * and a tail; runs of 3 stay element by element */
      {4, {2, 3, 12, 12}, 4, {0, 0, 0, 0}, {2, 3, 12, 12}, {1, 1, 2, 2}, 4, {0}, 0, false},
      {4, {1, 4, 11, 11}, 2, {1, 1}, {11, 11}, {2, 2}, 2, {2, 3}, 2, false},
      {2, {5, 52}, 2, {1, 1}, {4, 52}, {1, 3}, 2, {0}, 0, false},
      {3, {2, 3, 9}, 1, {0}, {9}, {3}, 1, {2}, 1, false},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) check_slice(&rng, dtypes[i % 2], &cases[i]);
  if (!simulated()) {
    static const slice_case_t large[] = {
        {2, {1000, 999}, 2, {1, -2}, {-1, 0}, {3, -2}, 2, {0}, 0, false},
        {3, {64, 130, 70}, 3, {-1, 3, 0}, {-65, 128, 70}, {-1, 1, 1}, 3, {0}, 0, false},
        /* resnet50's first stride-2 projection's input */
        {4, {1, 256, 56, 56}, 2, {0, 0}, {56, 56}, {2, 2}, 2, {2, 3}, 2, false},
    };
    for (size_t i = 0; i < sizeof(large) / sizeof(large[0]); ++i) check_slice(&rng, dtypes[i % 2], &large[i]);
  }
}

/* ---- reshape-likes -------------------------------------------------------------------- */

/* With alias, output 0 shares input 0's storage id: the executor must plan no
 * kernel and one storage (checked plan-only), and the output must still read
 * right. Without, one copy kernel runs into a second storage. */
static void check_reshape_like(hgr_test_rng_t* rng, const char* op, const char* attrs, const char* dtype,
                               int32_t ndim, const int64_t* shape, int32_t out_ndim, const int64_t* out_shape,
                               bool alias) {
  hgr_optest_t t;
  hgr_optest_init(&t, op, attrs);
  void* in = hgr_optest_input(&t, dtype, ndim, shape);
  void* out = hgr_optest_output(&t, dtype, out_ndim, out_shape);
  fill(&t.inputs[0], rng);
  assert_int_equal(t.inputs[0].count, t.outputs[0].count);
  ref_reshape(in, t.inputs[0].count * hgr_optest_element_bytes(dtype), out);
  t.alias_output = alias;

  char* json = hgr_optest_graph_json(&t);
  hgr_graph_t* graph = NULL;
  ASSERT_OK(hgr_graph_load_json(json, strlen(json), &graph));
  free(json);
  hgr_device_binding_t binding = {0, hgr_optest_device};
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  options.bindings = &binding;
  options.binding_count = 1;
  options.plan_only = true;
  hgr_executor_t* executor = NULL;
  ASSERT_OK(hgr_executor_create(hgr_optest_instance, graph, &options, &executor));
  uint32_t kernel_nodes = 0, storages = 0;
  for (size_t i = 0; i < hgr_executor_device_count(executor); ++i) {
    kernel_nodes += hgr_executor_device_usage(executor, i).kernel_nodes;
    storages += hgr_executor_device_usage(executor, i).storage_count;
  }
  hgr_executor_release(executor);
  hgr_graph_release(graph);
  if (kernel_nodes != (alias ? 0u : 1u) || storages != (alias ? 1u : 2u)) {
    print_error("%s {%s} (%s): %u kernel nodes and %u storages planned\n", op, attrs, alias ? "alias" : "copy",
                kernel_nodes, storages);
    fail();
  }
  check(&t);
}

static void reshape_likes_alias_or_copy(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 16);
  for (int mode = 0; mode < 2; ++mode) {
    bool alias = mode == 0;
    const char* dtype = dtypes[mode];
    const char* other = dtypes[1 - mode];
    int64_t s234[3] = {2, 3, 4};
    check_reshape_like(&rng, "reshape", "\"newshape\": \"[4, -1]\"", dtype, 3, s234, 2, (int64_t[]){4, 6}, alias);
    check_reshape_like(&rng, "reshape", "\"newshape\": \"[0, -1]\"", other, 3, s234, 2, (int64_t[]){2, 12}, alias);
    check_reshape_like(&rng, "reshape", "\"newshape\": \"[-3, 4]\"", dtype, 3, s234, 2, (int64_t[]){6, 4}, alias);
    check_reshape_like(&rng, "reshape", "\"newshape\": \"[-4, 1, -1, -2]\"", other, 3, s234, 4,
                       (int64_t[]){1, 2, 3, 4}, alias);
    check_reshape_like(&rng, "reshape", "\"newshape\": \"[3, 1, 3]\"", dtype, 1, (int64_t[]){9}, 3,
                       (int64_t[]){3, 1, 3}, alias);
    check_reshape_like(&rng, "flatten", NULL, other, 3, s234, 2, (int64_t[]){2, 12}, alias);
    check_reshape_like(&rng, "batch_flatten", NULL, dtype, 4, (int64_t[]){5, 1, 3, 1}, 2, (int64_t[]){5, 3}, alias);
    check_reshape_like(&rng, "batch_flatten", NULL, other, 1, (int64_t[]){7}, 2, (int64_t[]){7, 1}, alias);
    check_reshape_like(&rng, "squeeze", NULL, dtype, 4, (int64_t[]){1, 3, 1, 5}, 2, (int64_t[]){3, 5}, alias);
    check_reshape_like(&rng, "squeeze", "\"axis\": \"[2]\"", other, 4, (int64_t[]){1, 3, 1, 5}, 3,
                       (int64_t[]){1, 3, 5}, alias);
    check_reshape_like(&rng, "squeeze", "\"axis\": \"[-5, 2]\"", dtype, 5, (int64_t[]){1, 3, 1, 5, 1}, 3,
                       (int64_t[]){3, 5, 1}, alias);
    check_reshape_like(&rng, "expand_dims", "\"axis\": \"1\", \"num_newaxis\": \"2\"", other, 2, (int64_t[]){3, 5},
                       4, (int64_t[]){3, 1, 1, 5}, alias);
    check_reshape_like(&rng, "expand_dims", "\"axis\": \"-1\"", dtype, 2, (int64_t[]){3, 5}, 3,
                       (int64_t[]){3, 5, 1}, alias);
    check_reshape_like(&rng, "expand_dims", "\"axis\": \"0\", \"num_newaxis\": \"0\"", other, 2, (int64_t[]){3, 5},
                       2, (int64_t[]){3, 5}, alias);
    if (!simulated())
      check_reshape_like(&rng, "reshape", "\"newshape\": \"[-1]\"", dtype, 2, (int64_t[]){1000, 1001}, 1,
                         (int64_t[]){1001000}, alias);
    /* They move bytes: bool (a byte copy) and int64 (words) too. */
    check_reshape_like(&rng, "reshape", "\"newshape\": \"[4, -1]\"", "bool", 3, s234, 2, (int64_t[]){4, 6}, alias);
    check_reshape_like(&rng, "reshape", "\"newshape\": \"[5]\"", "bool", 1, (int64_t[]){5}, 1, (int64_t[]){5}, alias);
    check_reshape_like(&rng, "squeeze", NULL, "int64", 4, (int64_t[]){1, 3, 1, 5}, 2, (int64_t[]){3, 5}, alias);
  }
}

/* ---- pad modes and cropping ----------------------------------------------------------- */

/* Writes "\"pad_width\": \"[[b, a], ...]\"" into attrs and the padded shape into
 * out_shape. */
static int pad_width_attr(char* attrs, size_t size, int32_t ndim, const int64_t* shape, const int64_t* widths,
                          int64_t* out_shape) {
  int used = snprintf(attrs, size, "\"pad_width\": \"[");
  for (int32_t d = 0; d < ndim; ++d) {
    used += snprintf(attrs + used, size - (size_t)used, "%s[%lld, %lld]", d ? ", " : "", (long long)widths[2 * d],
                     (long long)widths[2 * d + 1]);
    out_shape[d] = widths[2 * d] + shape[d] + widths[2 * d + 1];
  }
  used += snprintf(attrs + used, size - (size_t)used, "]\"");
  return used;
}

static void check_pad_mode(hgr_test_rng_t* rng, const char* dtype, int32_t ndim, const int64_t* shape,
                           const int64_t* widths, bool reflect) {
  char attrs[512];
  int64_t out_shape[8];
  int used = pad_width_attr(attrs, sizeof(attrs), ndim, shape, widths, out_shape);
  snprintf(attrs + used, sizeof(attrs) - (size_t)used, ", \"pad_mode\": \"%s\"", reflect ? "reflect" : "edge");
  hgr_optest_t t;
  hgr_optest_init(&t, "pad", attrs);
  void* in = hgr_optest_input(&t, dtype, ndim, shape);
  fill(&t.inputs[0], rng);
  void* out = hgr_optest_output(&t, dtype, ndim, out_shape);
  ref_pad_edge_reflect(in, shape, ndim, widths, reflect, out);
  check(&t);
}

static void pad_edge_and_reflect_match_reference(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 21);
  for (int reflect = 0; reflect < 2; ++reflect) {
    check_pad_mode(&rng, "float32", 1, (int64_t[]){5}, (int64_t[]){4, 3}, reflect); /* reflect's most: extent - 1 */
    check_pad_mode(&rng, "int32", 2, (int64_t[]){3, 4}, (int64_t[]){2, 1, 0, 3}, reflect);
    check_pad_mode(&rng, "float32", 4, (int64_t[]){1, 3, 4, 5}, (int64_t[]){0, 0, 0, 0, 2, 2, 1, 4}, reflect);
    check_pad_mode(&rng, "int32", 3, (int64_t[]){2, 1, 3}, (int64_t[]){1, 0, 0, 0, 2, 2}, reflect);
    check_pad_mode(&rng, "float32", 2, (int64_t[]){3, 3}, (int64_t[]){0, 0, 0, 0}, reflect);
  }
  check_pad_mode(&rng, "float32", 2, (int64_t[]){1, 2}, (int64_t[]){5, 3, 7, 0}, false); /* edge repeats 1 element */
  if (!simulated()) {
    check_pad_mode(&rng, "float32", 4, (int64_t[]){2, 8, 65, 67}, (int64_t[]){0, 0, 0, 0, 3, 2, 1, 5}, true);
    check_pad_mode(&rng, "int32", 2, (int64_t[]){300, 301}, (int64_t[]){17, 40, 9, 0}, false);
  }
}

/* Constant mode with negative widths crops (ONNX Pad), also mixed with padding. */
static void pad_crops_with_negative_widths(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 22);
  static const struct {
    int32_t ndim;
    int64_t shape[4], widths[8];
  } cases[] = {
      {1, {7}, {-2, -3}},
      {2, {4, 5}, {-1, 2, 3, -4}},
      {3, {2, 3, 4}, {0, -1, -2, 0, 1, -1}},
      {2, {3, 3}, {-3, 0, 0, 0}}, /* cropped to nothing */
      {4, {1, 2, 5, 6}, {0, 0, 0, 0, -1, -1, 2, -3}},
  };
  for (int c = 0; c < 5; ++c) {
    char attrs[512];
    int64_t out_shape[8];
    int used = pad_width_attr(attrs, sizeof(attrs), cases[c].ndim, cases[c].shape, cases[c].widths, out_shape);
    snprintf(attrs + used, sizeof(attrs) - (size_t)used, ", \"pad_value\": \"7\"");
    hgr_optest_t t;
    hgr_optest_init(&t, "pad", attrs);
    const char* dtype = dtypes[c % 2];
    void* in = hgr_optest_input(&t, dtype, cases[c].ndim, cases[c].shape);
    fill(&t.inputs[0], &rng);
    void* out = hgr_optest_output(&t, dtype, cases[c].ndim, out_shape);
    uint32_t value_bits;
    if (c % 2) {
      int32_t seven = 7;
      memcpy(&value_bits, &seven, 4);
    } else {
      float seven = 7.0f;
      memcpy(&value_bits, &seven, 4);
    }
    ref_pad(in, cases[c].shape, cases[c].ndim, cases[c].widths, &value_bits, out);
    check(&t);
  }
}

/* ---- broadcast_to, tile --------------------------------------------------------------- */

static void check_broadcast_to(hgr_test_rng_t* rng, const char* dtype, int32_t ndim, const int64_t* shape,
                               int32_t out_ndim, const int64_t* out_shape) {
  char attrs[256];
  int used = snprintf(attrs, sizeof(attrs), "\"shape\": \"[");
  for (int32_t d = 0; d < out_ndim; ++d)
    used += snprintf(attrs + used, sizeof(attrs) - (size_t)used, "%s%lld", d ? ", " : "", (long long)out_shape[d]);
  snprintf(attrs + used, sizeof(attrs) - (size_t)used, "]\"");
  hgr_optest_t t;
  hgr_optest_init(&t, "broadcast_to", attrs);
  void* in = hgr_optest_input(&t, dtype, ndim, shape);
  fill(&t.inputs[0], rng);
  void* out = hgr_optest_output(&t, dtype, out_ndim, out_shape);
  ref_broadcast_to(in, shape, ndim, out_shape, out_ndim, out);
  check(&t);
}

static void broadcast_to_matches_reference(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 23);
  check_broadcast_to(&rng, "float32", 2, (int64_t[]){3, 1}, 3, (int64_t[]){2, 3, 6}); /* ONNX's expand_dim_changed */
  check_broadcast_to(&rng, "int32", 2, (int64_t[]){3, 1}, 2, (int64_t[]){3, 4});
  check_broadcast_to(&rng, "float32", 0, NULL, 2, (int64_t[]){2, 5});                 /* a scalar */
  check_broadcast_to(&rng, "int32", 3, (int64_t[]){1, 4, 1}, 5, (int64_t[]){2, 1, 3, 4, 5});
  check_broadcast_to(&rng, "float32", 3, (int64_t[]){2, 3, 4}, 3, (int64_t[]){2, 3, 4}); /* unchanged */
  check_broadcast_to(&rng, "int32", 1, (int64_t[]){1}, 2, (int64_t[]){0, 3});            /* empty */
  check_broadcast_to(&rng, "float32", 4, (int64_t[]){1, 1, 1, 1}, 4, (int64_t[]){1, 2, 1, 3});
  if (!simulated()) check_broadcast_to(&rng, "float32", 2, (int64_t[]){1, 513}, 3, (int64_t[]){3, 700, 513});
}

static void check_tile(hgr_test_rng_t* rng, const char* dtype, int32_t ndim, const int64_t* shape,
                       int32_t rep_count, const int64_t* reps) {
  char attrs[256];
  int used = snprintf(attrs, sizeof(attrs), "\"reps\": \"[");
  for (int32_t d = 0; d < rep_count; ++d)
    used += snprintf(attrs + used, sizeof(attrs) - (size_t)used, "%s%lld", d ? ", " : "", (long long)reps[d]);
  snprintf(attrs + used, sizeof(attrs) - (size_t)used, "]\"");
  int32_t out_ndim = rep_count > ndim ? rep_count : ndim;
  int64_t out_shape[8];
  for (int32_t d = 0; d < out_ndim; ++d) {
    int32_t source = d - (out_ndim - ndim), rep = d - (out_ndim - rep_count);
    out_shape[d] = (source < 0 ? 1 : shape[source]) * (rep < 0 ? 1 : reps[rep]);
  }
  hgr_optest_t t;
  hgr_optest_init(&t, "tile", attrs);
  void* in = hgr_optest_input(&t, dtype, ndim, shape);
  fill(&t.inputs[0], rng);
  void* out = hgr_optest_output(&t, dtype, out_ndim, out_shape);
  ref_tile(in, shape, ndim, reps, rep_count, out);
  check(&t);
}

static void tile_matches_reference(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 24);
  check_tile(&rng, "float32", 4, (int64_t[]){2, 3, 4, 5}, 4, (int64_t[]){2, 1, 3, 2}); /* ONNX's test_tile shape */
  check_tile(&rng, "int32", 2, (int64_t[]){2, 2}, 2, (int64_t[]){2, 2});
  check_tile(&rng, "float32", 1, (int64_t[]){5}, 1, (int64_t[]){1});
  check_tile(&rng, "int32", 3, (int64_t[]){1, 3, 2}, 3, (int64_t[]){4, 0, 2}); /* empty */
  check_tile(&rng, "float32", 2, (int64_t[]){3, 2}, 3, (int64_t[]){2, 1, 3}); /* more reps than dims (Relay) */
  check_tile(&rng, "int32", 3, (int64_t[]){2, 3, 2}, 1, (int64_t[]){3});       /* fewer */
  if (!simulated()) check_tile(&rng, "float32", 2, (int64_t[]){67, 129}, 2, (int64_t[]){5, 9});
}

/* ---- depth_to_space, space_to_depth --------------------------------------------------- */

static void check_depth_to_space(hgr_test_rng_t* rng, const char* dtype, const int64_t* shape, int64_t block,
                                 const char* mode) {
  char attrs[128];
  int used = snprintf(attrs, sizeof(attrs), "\"block_size\": \"%lld\"", (long long)block);
  if (mode) snprintf(attrs + used, sizeof(attrs) - (size_t)used, ", \"mode\": \"%s\"", mode);
  int64_t out_shape[4] = {shape[0], shape[1] / (block * block), shape[2] * block, shape[3] * block};
  hgr_optest_t t;
  hgr_optest_init(&t, "depth_to_space", attrs);
  void* in = hgr_optest_input(&t, dtype, 4, shape);
  fill(&t.inputs[0], rng);
  void* out = hgr_optest_output(&t, dtype, 4, out_shape);
  ref_depth_to_space(in, shape, block, mode && !strcmp(mode, "CRD"), out);
  check(&t);
}

static void check_space_to_depth(hgr_test_rng_t* rng, const char* dtype, const int64_t* shape, int64_t block) {
  char attrs[128];
  snprintf(attrs, sizeof(attrs), "\"block_size\": \"%lld\", \"layout\": \"NCHW\"", (long long)block);
  int64_t out_shape[4] = {shape[0], shape[1] * block * block, shape[2] / block, shape[3] / block};
  hgr_optest_t t;
  hgr_optest_init(&t, "space_to_depth", attrs);
  void* in = hgr_optest_input(&t, dtype, 4, shape);
  fill(&t.inputs[0], rng);
  void* out = hgr_optest_output(&t, dtype, 4, out_shape);
  ref_space_to_depth(in, shape, block, out);
  check(&t);
}

static void depth_to_space_and_back_match_reference(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 25);
  static const char* const modes[3] = {NULL, "DCR", "CRD"};
  for (int m = 0; m < 3; ++m) {
    check_depth_to_space(&rng, dtypes[m % 2], (int64_t[]){1, 8, 2, 3}, 2, modes[m]); /* ONNX's example shape */
    check_depth_to_space(&rng, dtypes[(m + 1) % 2], (int64_t[]){2, 18, 1, 2}, 3, modes[m]);
    check_depth_to_space(&rng, "float32", (int64_t[]){2, 3, 2, 2}, 1, modes[m]);
  }
  check_space_to_depth(&rng, "float32", (int64_t[]){1, 2, 4, 6}, 2);
  check_space_to_depth(&rng, "int32", (int64_t[]){2, 3, 6, 3}, 3);
  check_space_to_depth(&rng, "float32", (int64_t[]){1, 1, 2, 2}, 1);
  if (!simulated()) {
    check_depth_to_space(&rng, "float32", (int64_t[]){2, 64, 33, 35}, 4, "CRD");
    check_space_to_depth(&rng, "int32", (int64_t[]){2, 5, 64, 66}, 2);
  }
}

/* ---- gather_elements ------------------------------------------------------------------ */

/* Indices random in [-2 extent, 2 extent): beyond the axis either way is clamped. */
static void check_gather_elements(hgr_test_rng_t* rng, const char* op, const char* dtype, int32_t ndim,
                                  const int64_t* shape, const int64_t* index_shape, int32_t axis_attr, bool wide) {
  char attrs[64];
  snprintf(attrs, sizeof(attrs), "\"axis\": \"%d\"", axis_attr);
  int32_t axis = axis_attr < 0 ? axis_attr + ndim : axis_attr;
  hgr_optest_t t;
  hgr_optest_init(&t, op, attrs);
  void* data = hgr_optest_input(&t, dtype, ndim, shape);
  int32_t* indices = hgr_optest_input(&t, "int32", ndim, index_shape);
  fill(&t.inputs[0], rng);
  float extent = (float)shape[axis];
  hgr_optest_fill(&t.inputs[1], rng, wide ? -2 * extent : -extent, wide ? 2 * extent : extent);
  void* out = hgr_optest_output(&t, dtype, ndim, index_shape);
  ref_gather_elements(data, shape, ndim, indices, index_shape, axis, out);
  check(&t);
}

static void gather_elements_matches_reference(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 26);
  for (int wide = 0; wide < 2; ++wide) {
    check_gather_elements(&rng, "gather_elements", "float32", 2, (int64_t[]){2, 2}, (int64_t[]){2, 2}, 1, wide);
    check_gather_elements(&rng, "gather_elements", "int32", 2, (int64_t[]){3, 3}, (int64_t[]){2, 3}, 0, wide);
    check_gather_elements(&rng, "gather_elements", "float32", 3, (int64_t[]){3, 4, 5}, (int64_t[]){2, 7, 3}, -2,
                          wide);
    check_gather_elements(&rng, "gather", "int32", 3, (int64_t[]){3, 4, 5}, (int64_t[]){3, 4, 9}, 2, wide);
    check_gather_elements(&rng, "gather_elements", "float32", 1, (int64_t[]){6}, (int64_t[]){10}, -1, wide);
    check_gather_elements(&rng, "gather_elements", "int32", 2, (int64_t[]){4, 2}, (int64_t[]){0, 2}, 0, wide);
  }
  if (!simulated())
    check_gather_elements(&rng, "gather_elements", "float32", 3, (int64_t[]){30, 64, 65}, (int64_t[]){30, 100, 60}, 1,
                          true);
}

/* ---- cumsum --------------------------------------------------------------------------- */

/* axis_text NULL: no axis (the flattened data, a 1-D output). float32 sums in the
 * reference's order too, so it matches but for the device's rounding of each add:
 * compared to 1e-6 relative (plus 1e-4 absolute for sums that cancel); int32 is
 * exact. */
static void check_cumsum(hgr_test_rng_t* rng, const char* dtype, int32_t ndim, const int64_t* shape,
                         const char* axis_text, bool exclusive, bool reverse) {
  char attrs[128];
  int used = snprintf(attrs, sizeof(attrs), "\"exclusive\": \"%d\", \"reverse\": \"%s\"", exclusive,
                      reverse ? "True" : "0");
  if (axis_text) snprintf(attrs + used, sizeof(attrs) - (size_t)used, ", \"axis\": \"%s\"", axis_text);
  int32_t axis = -1;
  if (axis_text) {
    axis = (int32_t)strtol(axis_text, NULL, 10);
    if (axis < 0) axis += ndim;
  }
  int64_t count = 1;
  for (int32_t d = 0; d < ndim; ++d) count *= shape[d];
  bool is_int = !strcmp(dtype, "int32");
  hgr_optest_t t;
  hgr_optest_init(&t, "cumsum", attrs);
  void* in = hgr_optest_input(&t, dtype, ndim, shape);
  if (is_int) hgr_optest_fill(&t.inputs[0], rng, -1e9f, 1e9f); /* sums wrap */
  else hgr_optest_fill(&t.inputs[0], rng, -10, 10);
  void* out = axis_text ? hgr_optest_output(&t, dtype, ndim, shape) : hgr_optest_output(&t, dtype, 1, &count);
  ref_cumsum(in, shape, ndim, axis, is_int, exclusive, reverse, out);
  if (!is_int) hgr_optest_tolerance(&t, 1e-6, 1e-4);
  check(&t);
}

static void cumsum_matches_reference(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 27);
  for (int flags = 0; flags < 4; ++flags) {
    bool exclusive = flags & 1, reverse = flags & 2;
    check_cumsum(&rng, "float32", 1, (int64_t[]){5}, "0", exclusive, reverse);
    check_cumsum(&rng, "int32", 2, (int64_t[]){2, 3}, "0", exclusive, reverse);
    check_cumsum(&rng, "float32", 2, (int64_t[]){2, 3}, "-1", exclusive, reverse);
    check_cumsum(&rng, "int32", 3, (int64_t[]){3, 4, 5}, "1", exclusive, reverse);
    check_cumsum(&rng, "float32", 3, (int64_t[]){3, 4, 5}, NULL, exclusive, reverse);
  }
  check_cumsum(&rng, "int32", 2, (int64_t[]){0, 3}, "1", false, false);
  if (!simulated()) {
    check_cumsum(&rng, "float32", 3, (int64_t[]){7, 1000, 65}, "1", false, true);
    check_cumsum(&rng, "int32", 2, (int64_t[]){300, 2000}, "-1", true, false);
  }
}

/* ---- errors --------------------------------------------------------------------------- */

/* Creating an executor for t fails with INVALID_ARGUMENT and a message holding
 * each of the NULL-terminated needles. */
#define ASSERT_REJECTED(t, ...)                                                                   \
  ASSERT_STATUS(hgr_optest_create(hgr_optest_instance, hgr_optest_device, (t)), HGR_STATUS_INVALID_ARGUMENT, \
                __VA_ARGS__)

static void one_input(hgr_optest_t* t, const char* op, const char* attrs, const char* dtype, int32_t ndim,
                      const int64_t* shape, const char* out_dtype, int32_t out_ndim, const int64_t* out_shape) {
  hgr_optest_init(t, op, attrs);
  hgr_optest_input(t, dtype, ndim, shape);
  hgr_optest_output(t, out_dtype, out_ndim, out_shape);
}

/* Permutations that keep the last dim (merged with its contiguous neighbours) last
 * and at least 16 long copy whole runs (hgr_layout_gather_runs), 16 elements per
 * work-item: runs of exactly 16 and 64, runs with a tail (17, 21, 33), a merged last
 * dim (3 x 7 stays contiguous), shufflenet's channel shuffle. */
static void transpose_runs_match_reference(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 27);
  check_transpose(&rng, "float32", 5, (int64_t[]){1, 4, 6, 4, 4}, (int32_t[]){0, 2, 1, 3, 4}, "[0, 2, 1, 3, 4]");
  check_transpose(&rng, "int32", 5, (int64_t[]){1, 4, 5, 3, 7}, (int32_t[]){0, 2, 1, 3, 4}, "[0, 2, 1, 3, 4]");
  check_transpose(&rng, "float32", 4, (int64_t[]){2, 3, 4, 64}, (int32_t[]){1, 0, 2, 3}, "[1, 0, 2, 3]");
  check_transpose(&rng, "float32", 4, (int64_t[]){3, 2, 5, 33}, (int32_t[]){2, 1, 0, 3}, "[2, 1, 0, 3]");
  check_transpose(&rng, "int32", 3, (int64_t[]){2, 3, 17}, (int32_t[]){1, 0, 2}, "[1, 0, 2]");
  check_transpose(&rng, "float32", 4, (int64_t[]){3, 2, 2, 21}, (int32_t[]){2, 0, 1, 3}, "[2, 0, 1, 3]");
  if (!simulated())
    check_transpose(&rng, "float32", 5, (int64_t[]){1, 4, 34, 28, 28}, (int32_t[]){0, 2, 1, 3, 4}, "[0, 2, 1, 3, 4]");
}

/* Permutations that move the input's contiguous dim away from the last (which is
 * then strided) copy 4 x 4 tiles (hgr_layout_gather_tiles): whole tiles, tiles cut
 * at either edge, the tiled dim behind batch dims, a detector's boxes and a CRNN's
 * columns. */
static void transpose_tiles_match_reference(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 28);
  check_transpose(&rng, "float32", 2, (int64_t[]){8, 12}, (int32_t[]){1, 0}, "[1, 0]");
  check_transpose(&rng, "int32", 2, (int64_t[]){5, 7}, (int32_t[]){1, 0}, "[1, 0]");
  check_transpose(&rng, "float32", 3, (int64_t[]){3, 9, 6}, (int32_t[]){0, 2, 1}, "[0, 2, 1]");
  check_transpose(&rng, "int32", 4, (int64_t[]){2, 5, 3, 4}, (int32_t[]){3, 1, 0, 2}, "[3, 1, 0, 2]");
  check_transpose(&rng, "float32", 4, (int64_t[]){1, 16, 8, 12}, (int32_t[]){3, 0, 1, 2}, "[3, 0, 1, 2]");
  check_transpose(&rng, "float32", 3, (int64_t[]){1, 4, 37}, (int32_t[]){0, 2, 1}, "[0, 2, 1]");
  if (!simulated())
    check_transpose(&rng, "float32", 3, (int64_t[]){1, 4, 8400}, (int32_t[]){0, 2, 1}, "[0, 2, 1]");
}

static void transpose_rejects_non_permutations(void** state) {
  (void)state;
  hgr_optest_t t;
  one_input(&t, "transpose", "\"axes\": \"[0, -3, 1]\"", "float32", 3, (int64_t[]){2, 3, 4}, "float32", 3,
            (int64_t[]){2, 2, 3});
  ASSERT_REJECTED(&t, "node 1 'transpose_node' (transpose): attr 'axes' = \"[0, -3, 1]\" is not a permutation: axis 0 "
                      "appears twice");
  hgr_optest_free(&t);
  one_input(&t, "transpose", "\"axes\": \"[1, 0]\"", "float32", 3, (int64_t[]){2, 3, 4}, "float32", 3,
            (int64_t[]){3, 2, 4});
  ASSERT_REJECTED(&t, "node 1 'transpose_node' (transpose): attr 'axes' = \"[1, 0]\" has 2 values, but input 0 has 3 "
                      "dimensions");
  hgr_optest_free(&t);
  one_input(&t, "transpose", "\"axes\": \"[0, 3, 1]\"", "int32", 3, (int64_t[]){2, 3, 4}, "int32", 3,
            (int64_t[]){2, 4, 3});
  ASSERT_REJECTED(&t, "node 1 'transpose_node' (transpose): attr 'axes' = 3 is out of range for 3 dimensions");
  hgr_optest_free(&t);
  one_input(&t, "transpose", "\"axes\": \"[1, 0]\"", "int32", 2, (int64_t[]){2, 3}, "int32", 2, (int64_t[]){2, 3});
  ASSERT_REJECTED(&t, "node 1 'transpose_node' (transpose): output 0 (entry 1) should be shaped [3, 2], the graph "
                      "says [2, 3]");
  hgr_optest_free(&t);
  /* Only reshape-likes may alias: a transpose in place would overwrite what it reads. */
  one_input(&t, "transpose", NULL, "int32", 2, (int64_t[]){2, 3}, "int32", 2, (int64_t[]){3, 2});
  t.alias_output = true;
  ASSERT_REJECTED(&t, "node 1 'transpose_node' (transpose): output 0 (entry 1) shares storage 0 with input 0 "
                      "(entry 0); the op cannot run in place");
  hgr_optest_free(&t);
}

static void pad_rejects_bad_attrs(void** state) {
  (void)state;
  hgr_optest_t t;
  one_input(&t, "pad", "\"pad_width\": \"[[1, 1], [1, 1]]\", \"pad_mode\": \"wrap\"", "float32", 2,
            (int64_t[]){2, 3}, "float32", 2, (int64_t[]){4, 5});
  ASSERT_REJECTED(&t, "node 1 'pad_node' (pad): attr 'pad_mode' = \"wrap\" is not supported; hgr takes "
                      "\"constant\" or \"edge\" or \"reflect\"");
  hgr_optest_free(&t);
  one_input(&t, "pad", "\"pad_width\": \"[[0, 0], [1, 3]]\", \"pad_mode\": \"reflect\"", "float32", 2,
            (int64_t[]){2, 3}, "float32", 2, (int64_t[]){2, 7});
  ASSERT_REJECTED(&t, "node 1 'pad_node' (pad): attr 'pad_width' = \"[[0, 0], [1, 3]]\" pads dimension 1 (extent 3) "
                      "by 3; pad_mode \"reflect\" pads by at most the extent - 1");
  hgr_optest_free(&t);
  one_input(&t, "pad", "\"pad_width\": \"[[0, 0], [-1, 2]]\", \"pad_mode\": \"edge\"", "int32", 2,
            (int64_t[]){2, 3}, "int32", 2, (int64_t[]){2, 4});
  ASSERT_REJECTED(&t, "node 1 'pad_node' (pad): attr 'pad_width' = \"[[0, 0], [-1, 2]]\" pads dimension 1 by -1; "
                      "pad_mode \"edge\" takes no negative widths");
  hgr_optest_free(&t);
  one_input(&t, "pad", "\"pad_width\": \"[[1, 0]]\", \"pad_mode\": \"edge\"", "float32", 1, (int64_t[]){0},
            "float32", 1, (int64_t[]){1});
  ASSERT_REJECTED(&t, "node 1 'pad_node' (pad): attr 'pad_width' = \"[[1, 0]]\" pads dimension 0 by 1, but it is "
                      "empty");
  hgr_optest_free(&t);
  one_input(&t, "pad", "\"pad_width\": \"[[1, 0]]\", \"pad_mode\": \"edge\", \"pad_value\": \"1\"", "float32", 1,
            (int64_t[]){2}, "float32", 1, (int64_t[]){3});
  ASSERT_REJECTED(&t, "node 1 'pad_node' (pad): a pad value is given, but pad_mode \"edge\" takes none");
  hgr_optest_free(&t);
  one_input(&t, "pad", "\"pad_width\": \"[[1, 1]]\"", "float32", 2, (int64_t[]){2, 3}, "float32", 2,
            (int64_t[]){4, 3});
  ASSERT_REJECTED(&t, "node 1 'pad_node' (pad): attr 'pad_width' = \"[[1, 1]]\" has 2 values, but input 0 has 2 "
                      "dimensions");
  hgr_optest_free(&t);
  one_input(&t, "pad", "\"pad_width\": \"[[0, 0], [-2, -2]]\"", "float32", 2, (int64_t[]){2, 3}, "float32", 2,
            (int64_t[]){2, 0});
  ASSERT_REJECTED(&t, "node 1 'pad_node' (pad): attr 'pad_width' = \"[[0, 0], [-2, -2]]\" crops dimension 1 (extent "
                      "3) by 4, more than it holds");
  hgr_optest_free(&t);
  one_input(&t, "pad", "\"pad_width\": \"[[0, 0], [1, 1]]\", \"pad_value\": \"0.5\"", "int32", 2, (int64_t[]){2, 3},
            "int32", 2, (int64_t[]){2, 5});
  ASSERT_REJECTED(&t, "node 1 'pad_node' (pad): attr 'pad_value' = \"0.5\" is not an int32 value");
  hgr_optest_free(&t);
  one_input(&t, "pad", NULL, "int32", 2, (int64_t[]){2, 3}, "int32", 2, (int64_t[]){2, 3});
  ASSERT_REJECTED(&t, "node 1 'pad_node' (pad): attr 'pad_width' is required");
  hgr_optest_free(&t);
  hgr_optest_init(&t, "pad", "\"pad_width\": \"[[1, 0]]\", \"pad_value\": \"2\"");
  hgr_optest_input(&t, "float32", 1, (int64_t[]){3});
  hgr_optest_input(&t, "float32", 0, NULL);
  hgr_optest_output(&t, "float32", 1, (int64_t[]){4});
  ASSERT_REJECTED(&t, "node 2 'pad_node' (pad): attr 'pad_value' and input 1 both give the pad value");
  hgr_optest_free(&t);
}

static void concatenate_rejects_mismatched_inputs(void** state) {
  (void)state;
  hgr_optest_t t;
  hgr_optest_init(&t, "concatenate", "\"axis\": \"0\"");
  hgr_optest_input(&t, "float32", 2, (int64_t[]){2, 3});
  hgr_optest_input(&t, "float32", 2, (int64_t[]){2, 4});
  hgr_optest_output(&t, "float32", 2, (int64_t[]){4, 3});
  ASSERT_REJECTED(&t, "node 2 'concatenate_node' (concatenate): input 1 (entry 1) is shaped [2, 4] but input 0 "
                      "(entry 0) is [2, 3]; all dims but axis 0 must match");
  hgr_optest_free(&t);
  hgr_optest_init(&t, "concatenate", "\"axis\": \"1\"");
  hgr_optest_input(&t, "float32", 2, (int64_t[]){2, 3});
  hgr_optest_input(&t, "int32", 2, (int64_t[]){2, 4});
  hgr_optest_output(&t, "float32", 2, (int64_t[]){2, 7});
  ASSERT_REJECTED(&t, "node 2 'concatenate_node' (concatenate): input 1 (entry 1) is int32 but input 0 (entry 0) is "
                      "float32");
  hgr_optest_free(&t);
  hgr_optest_init(&t, "concatenate", "\"axis\": \"2\"");
  hgr_optest_input(&t, "float32", 2, (int64_t[]){2, 3});
  hgr_optest_output(&t, "float32", 2, (int64_t[]){2, 3});
  ASSERT_REJECTED(&t, "node 1 'concatenate_node' (concatenate): attr 'axis' = 2 is out of range for 2 dimensions");
  hgr_optest_free(&t);
  hgr_optest_init(&t, "concatenate", "\"axis\": \"1\"");
  hgr_optest_input(&t, "float32", 2, (int64_t[]){2, 3});
  hgr_optest_input(&t, "float32", 2, (int64_t[]){2, 4});
  hgr_optest_output(&t, "float32", 2, (int64_t[]){2, 6});
  ASSERT_REJECTED(&t, "node 2 'concatenate_node' (concatenate): output 0 (entry 2) should be shaped [2, 7], the "
                      "graph says [2, 6]");
  hgr_optest_free(&t);
}

static void reshape_likes_reject_bad_shapes(void** state) {
  (void)state;
  hgr_optest_t t;
  one_input(&t, "reshape", "\"newshape\": \"[7]\"", "float32", 2, (int64_t[]){2, 3}, "float32", 1, (int64_t[]){7});
  ASSERT_REJECTED(&t, "node 1 'reshape_node' (reshape): attr 'newshape' = \"[7]\" gives shape [7] (7 elements) but "
                      "input 0 (entry 0) is shaped [2, 3] (6 elements); reshape keeps the element count");
  hgr_optest_free(&t);
  one_input(&t, "reshape", "\"newshape\": \"[2, x]\"", "float32", 2, (int64_t[]){2, 3}, "float32", 1, (int64_t[]){6});
  ASSERT_REJECTED(&t, "node 1 'reshape_node' (reshape): attr 'newshape' = \"[2, x]\" is not an int or a list of ints");
  hgr_optest_free(&t);
  one_input(&t, "reshape", "\"newshape\": \"[-1, -1]\"", "float32", 2, (int64_t[]){2, 3}, "float32", 1,
            (int64_t[]){6});
  ASSERT_REJECTED(&t, "node 1 'reshape_node' (reshape): attr 'newshape' = \"[-1, -1]\": more than one -1");
  hgr_optest_free(&t);
  one_input(&t, "reshape", "\"newshape\": \"[3, 2]\"", "int32", 2, (int64_t[]){2, 3}, "int32", 1, (int64_t[]){6});
  ASSERT_REJECTED(&t, "node 1 'reshape_node' (reshape): output 0 (entry 1) should be shaped [3, 2], the graph says "
                      "[6]");
  hgr_optest_free(&t);
  one_input(&t, "reshape", NULL, "int32", 2, (int64_t[]){2, 3}, "int32", 1, (int64_t[]){6});
  ASSERT_REJECTED(&t, "node 1 'reshape_node' (reshape): attr 'newshape' is required");
  hgr_optest_free(&t);
  one_input(&t, "squeeze", "\"axis\": \"[1]\"", "float32", 3, (int64_t[]){1, 3, 1}, "float32", 2, (int64_t[]){1, 3});
  ASSERT_REJECTED(&t, "node 1 'squeeze_node' (squeeze): attr 'axis' = \"[1]\" names dimension 1 of extent 3");
  hgr_optest_free(&t);
  one_input(&t, "expand_dims", "\"axis\": \"0\"", "float32", 1, (int64_t[]){3}, "int32", 2, (int64_t[]){1, 3});
  ASSERT_REJECTED(&t, "node 1 'expand_dims_node' (expand_dims): output 0 (entry 1) should be float32 [1, 3], the "
                      "graph says int32 [1, 3]");
  hgr_optest_free(&t);
  one_input(&t, "expand_dims", "\"axis\": \"3\"", "float32", 1, (int64_t[]){3}, "float32", 2, (int64_t[]){1, 3});
  ASSERT_REJECTED(&t, "node 1 'expand_dims_node' (expand_dims): attr 'axis' = 3 is out of range for 1 dimension");
  hgr_optest_free(&t);
  one_input(&t, "flatten", NULL, "float32", 0, NULL, "float32", 2, (int64_t[]){1, 1});
  ASSERT_REJECTED(&t, "node 1 'flatten_node' (flatten): input 0 (entry 0) is a scalar");
  hgr_optest_free(&t);
}

static void take_and_strided_slice_reject_bad_attrs(void** state) {
  (void)state;
  hgr_optest_t t;
  hgr_optest_init(&t, "take", "\"axis\": \"0\", \"mode\": \"nan\"");
  hgr_optest_input(&t, "float32", 1, (int64_t[]){4});
  hgr_optest_input(&t, "int32", 1, (int64_t[]){2});
  hgr_optest_output(&t, "float32", 1, (int64_t[]){2});
  ASSERT_REJECTED(&t, "node 2 'take_node' (take): attr 'mode' = \"nan\" is not \"clip\", \"wrap\" or \"fast\"");
  hgr_optest_free(&t);
  hgr_optest_init(&t, "take", "\"axis\": \"1\", \"batch_dims\": \"1\"");
  hgr_optest_input(&t, "float32", 2, (int64_t[]){2, 4});
  hgr_optest_input(&t, "int32", 2, (int64_t[]){2, 2});
  hgr_optest_output(&t, "float32", 2, (int64_t[]){2, 2});
  ASSERT_REJECTED(&t, "node 2 'take_node' (take): attr 'batch_dims' = 1 is not supported; only 0 is");
  hgr_optest_free(&t);
  hgr_optest_init(&t, "take", NULL);
  hgr_optest_input(&t, "float32", 1, (int64_t[]){4});
  hgr_optest_input(&t, "float32", 1, (int64_t[]){2});
  hgr_optest_output(&t, "float32", 1, (int64_t[]){2});
  ASSERT_REJECTED(&t, "node 2 'take_node' (take): input 1 (the indices, entry 1) is float32; take needs int32 indices");
  hgr_optest_free(&t);
  one_input(&t, "strided_slice", "\"begin\": \"[0]\", \"end\": \"[2]\", \"strides\": \"[0]\"", "float32", 1,
            (int64_t[]){4}, "float32", 1, (int64_t[]){2});
  ASSERT_REJECTED(&t, "node 1 'strided_slice_node' (strided_slice): attr 'strides' = \"[0]\" has a 0 stride");
  hgr_optest_free(&t);
  one_input(&t, "strided_slice", "\"begin\": \"[0, 0]\", \"end\": \"[2, 2]\"", "float32", 1, (int64_t[]){4},
            "float32", 1, (int64_t[]){2});
  ASSERT_REJECTED(&t, "node 1 'strided_slice_node' (strided_slice): attr 'begin' = \"[0, 0]\" has 2 values, but "
                      "input 0 has 1 dimension");
  hgr_optest_free(&t);
  one_input(&t, "strided_slice", "\"begin\": \"[3]\", \"end\": \"[1]\"", "float32", 1, (int64_t[]){4}, "float32", 1,
            (int64_t[]){0});
  ASSERT_REJECTED(&t, "node 1 'strided_slice_node' (strided_slice): begin 3 and end 1 (stride 1) are invalid for axis "
                      "0");
  hgr_optest_free(&t);
  one_input(&t, "strided_slice", "\"begin\": \"[0]\", \"end\": \"[2]\", \"slice_mode\": \"stride\"", "float32", 1,
            (int64_t[]){4}, "float32", 1, (int64_t[]){2});
  ASSERT_REJECTED(&t, "node 1 'strided_slice_node' (strided_slice): attr 'slice_mode' = \"stride\" is not");
  hgr_optest_free(&t);
}

static void new_layout_ops_reject_bad_attrs_and_shapes(void** state) {
  (void)state;
  hgr_optest_t t;
  one_input(&t, "broadcast_to", "\"shape\": \"[2, 3]\"", "float32", 2, (int64_t[]){2, 2}, "float32", 2,
            (int64_t[]){2, 3});
  ASSERT_REJECTED(&t, "node 1 'broadcast_to_node' (broadcast_to): input 0 (entry 0, shaped [2, 2]) does not broadcast "
                      "to attr 'shape' = \"[2, 3]\": its dim 1 is 2, not 1 or 3");
  hgr_optest_free(&t);
  one_input(&t, "broadcast_to", "\"shape\": \"[3]\"", "float32", 2, (int64_t[]){1, 3}, "float32", 1, (int64_t[]){3});
  ASSERT_REJECTED(&t, "node 1 'broadcast_to_node' (broadcast_to): attr 'shape' = \"[3]\" has 1 dimension, fewer than "
                      "input 0");
  hgr_optest_free(&t);
  one_input(&t, "tile", "\"reps\": \"[2, -1]\"", "int32", 2, (int64_t[]){2, 2}, "int32", 2, (int64_t[]){4, 2});
  ASSERT_REJECTED(&t, "node 1 'tile_node' (tile): attr 'reps' = \"[2, -1]\" repeats a dim -1 times");
  hgr_optest_free(&t);
  one_input(&t, "tile", NULL, "int32", 2, (int64_t[]){2, 2}, "int32", 2, (int64_t[]){2, 2});
  ASSERT_REJECTED(&t, "node 1 'tile_node' (tile): attr 'reps' is required");
  hgr_optest_free(&t);
  one_input(&t, "depth_to_space", "\"block_size\": \"2\"", "float32", 4, (int64_t[]){1, 6, 2, 2}, "float32", 4,
            (int64_t[]){1, 1, 4, 4});
  ASSERT_REJECTED(&t, "node 1 'depth_to_space_node' (depth_to_space): input 0 (entry 0) is shaped [1, 6, 2, 2]: its 6 "
                      "channels do not split into blocks of block_size^2 = 4");
  hgr_optest_free(&t);
  one_input(&t, "depth_to_space", "\"block_size\": \"2\", \"mode\": \"RCD\"", "float32", 4, (int64_t[]){1, 4, 2, 2},
            "float32", 4, (int64_t[]){1, 1, 4, 4});
  ASSERT_REJECTED(&t, "node 1 'depth_to_space_node' (depth_to_space): attr 'mode' = \"RCD\" is not supported; hgr "
                      "takes \"DCR\" or \"CRD\"");
  hgr_optest_free(&t);
  one_input(&t, "depth_to_space", "\"block_size\": \"0\"", "float32", 4, (int64_t[]){1, 4, 2, 2}, "float32", 4,
            (int64_t[]){1, 4, 2, 2});
  ASSERT_REJECTED(&t, "node 1 'depth_to_space_node' (depth_to_space): attr 'block_size' = 0 must be 1 to 65535");
  hgr_optest_free(&t);
  one_input(&t, "space_to_depth", "\"block_size\": \"2\", \"layout\": \"NHWC\"", "float32", 4,
            (int64_t[]){1, 1, 4, 4}, "float32", 4, (int64_t[]){1, 4, 2, 2});
  ASSERT_REJECTED(&t, "node 1 'space_to_depth_node' (space_to_depth): attr 'layout' = \"NHWC\" is not supported");
  hgr_optest_free(&t);
  one_input(&t, "space_to_depth", "\"block_size\": \"2\"", "float32", 4, (int64_t[]){1, 1, 4, 3}, "float32", 4,
            (int64_t[]){1, 4, 2, 1});
  ASSERT_REJECTED(&t, "node 1 'space_to_depth_node' (space_to_depth): input 0 (entry 0) is shaped [1, 1, 4, 3]: height "
                      "and width must be multiples of attr 'block_size' = 2");
  hgr_optest_free(&t);
  one_input(&t, "space_to_depth", "\"block_size\": \"2\"", "float32", 3, (int64_t[]){1, 4, 4}, "float32", 3,
            (int64_t[]){1, 4, 4});
  ASSERT_REJECTED(&t, "node 1 'space_to_depth_node' (space_to_depth): input 0 (entry 0) is shaped [1, 4, 4]; "
                      "space_to_depth takes NCHW data (4 dimensions)");
  hgr_optest_free(&t);
  hgr_optest_init(&t, "gather_elements", "\"axis\": \"1\"");
  hgr_optest_input(&t, "float32", 2, (int64_t[]){2, 3});
  hgr_optest_input(&t, "int32", 2, (int64_t[]){3, 3});
  hgr_optest_output(&t, "float32", 2, (int64_t[]){3, 3});
  ASSERT_REJECTED(&t, "node 2 'gather_elements_node' (gather_elements): input 1 (the indices, entry 1) is shaped [3, 3] "
                      "but input 0 (entry 0) is [2, 3]; the indices need the data's rank and, in every dim but axis 1, "
                      "at most its extent");
  hgr_optest_free(&t);
  hgr_optest_init(&t, "gather_elements", "\"axis\": \"-3\"");
  hgr_optest_input(&t, "float32", 2, (int64_t[]){2, 3});
  hgr_optest_input(&t, "int32", 2, (int64_t[]){2, 3});
  hgr_optest_output(&t, "float32", 2, (int64_t[]){2, 3});
  ASSERT_REJECTED(&t, "node 2 'gather_elements_node' (gather_elements): attr 'axis' = -3 is out of range for 2 "
                      "dimensions");
  hgr_optest_free(&t);
  hgr_optest_init(&t, "gather_elements", NULL);
  hgr_optest_input(&t, "float32", 2, (int64_t[]){2, 3});
  hgr_optest_input(&t, "float32", 2, (int64_t[]){2, 3});
  hgr_optest_output(&t, "float32", 2, (int64_t[]){2, 3});
  ASSERT_REJECTED(&t, "node 2 'gather_elements_node' (gather_elements): input 1 (the indices, entry 1) is float32; "
                      "gather_elements needs int32 indices");
  hgr_optest_free(&t);
  one_input(&t, "cumsum", "\"axis\": \"2\"", "float32", 2, (int64_t[]){2, 3}, "float32", 2, (int64_t[]){2, 3});
  ASSERT_REJECTED(&t, "node 1 'cumsum_node' (cumsum): attr 'axis' = 2 is out of range for 2 dimensions");
  hgr_optest_free(&t);
  one_input(&t, "cumsum", "\"axis\": \"0\", \"reverse\": \"maybe\"", "int32", 1, (int64_t[]){3}, "int32", 1,
            (int64_t[]){3});
  ASSERT_REJECTED(&t, "node 1 'cumsum_node' (cumsum): attr 'reverse'");
  hgr_optest_free(&t);
}

static void unknown_attrs_are_rejected(void** state) {
  (void)state;
  hgr_optest_t t;
  one_input(&t, "transpose", "\"axis\": \"[1, 0]\"", "float32", 2, (int64_t[]){2, 3}, "float32", 2,
            (int64_t[]){3, 2});
  ASSERT_REJECTED(&t, "node 1 'transpose_node' (transpose): unknown attr 'axis'", "the op knows: axes");
  hgr_optest_free(&t);
  one_input(&t, "batch_flatten", "\"newshape\": \"[6]\"", "float32", 2, (int64_t[]){2, 3}, "float32", 2,
            (int64_t[]){2, 3});
  ASSERT_REJECTED(&t, "node 1 'batch_flatten_node' (batch_flatten): unknown attr 'newshape'", "takes no attrs");
  hgr_optest_free(&t);
}

int main(int argc, char** argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(concatenate_matches_reference),
      cmocka_unit_test(concatenate_plans_a_launch_per_four_inputs),
      cmocka_unit_test(transpose_matches_reference),
      cmocka_unit_test(transpose_runs_match_reference),
      cmocka_unit_test(transpose_tiles_match_reference),
      cmocka_unit_test(pad_matches_reference),
      cmocka_unit_test(take_matches_reference),
      cmocka_unit_test(strided_slice_matches_hand_checked_values),
      cmocka_unit_test(strided_slice_matches_reference),
      cmocka_unit_test(reshape_likes_alias_or_copy),
      cmocka_unit_test(pad_edge_and_reflect_match_reference),
      cmocka_unit_test(pad_crops_with_negative_widths),
      cmocka_unit_test(broadcast_to_matches_reference),
      cmocka_unit_test(tile_matches_reference),
      cmocka_unit_test(depth_to_space_and_back_match_reference),
      cmocka_unit_test(gather_elements_matches_reference),
      cmocka_unit_test(cumsum_matches_reference),
      cmocka_unit_test(transpose_rejects_non_permutations),
      cmocka_unit_test(pad_rejects_bad_attrs),
      cmocka_unit_test(concatenate_rejects_mismatched_inputs),
      cmocka_unit_test(reshape_likes_reject_bad_shapes),
      cmocka_unit_test(take_and_strided_slice_reject_bad_attrs),
      cmocka_unit_test(new_layout_ops_reject_bad_attrs_and_shapes),
      cmocka_unit_test(unknown_attrs_are_rejected),
  };
  return hgr_optest_main(argc, argv, "ops_layout", tests, sizeof(tests) / sizeof(tests[0]));
}
