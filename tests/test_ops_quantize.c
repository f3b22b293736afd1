/* quantize and dequantize against plain-C references (tests/ref_quantize.c) on
 * random data (argument: a device spec): per tensor, per axis (every axis,
 * negative ones too) and in blocks (blocks that divide the axis and a last one
 * that does not), for every integer dtype the ops take; values at the ties of
 * rounding and past the integer's range. dequantize is compared within one float32
 * rounding, quantize exactly. quantize_params (DynamicQuantizeLinear's scale and
 * zero point) exactly, on ranges of either sign and all zeros. Oclgrind simulates
 * every work-item: small shapes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optest.h"
#include "ref_quantize.h"

typedef struct shape_t {
  int32_t ndim;
  int64_t dims[4];
} shape_t;

static uint64_t count_of(const int64_t* dims, int32_t ndim) {
  uint64_t count = 1;
  for (int32_t d = 0; d < ndim; ++d) count *= (uint64_t)dims[d];
  return count;
}

/* The scale's shape for x shaped x per the mode: per tensor (axis < 0), per axis,
 * or in blocks. */
static shape_t param_shape(shape_t x, int32_t axis, int64_t block) {
  if (axis < 0) return (shape_t){0, {0}};
  if (!block) return (shape_t){1, {x.dims[axis]}};
  shape_t p = x;
  p.dims[axis] = (x.dims[axis] + block - 1) / block;
  return p;
}

static void integer_range(const char* dtype, int64_t* lowest, int64_t* highest) {
  static const struct {
    const char* name;
    int64_t lowest, highest;
  } ranges[] = {{"int8", -128, 127}, {"uint8", 0, 255}, {"int16", -32768, 32767}, {"uint16", 0, 65535},
                {"int32", INT32_MIN, INT32_MAX}};
  for (size_t k = 0; k < sizeof(ranges) / sizeof(ranges[0]); ++k)
    if (!strcmp(dtype, ranges[k].name)) {
      *lowest = ranges[k].lowest;
      *highest = ranges[k].highest;
    }
}

/* One case: quantize (or dequantize) of x shaped x with parameters per the mode
 * (axis -1: per tensor; written in the attr as axis_attr, which may be negative);
 * ties: every x / scale halfway between two integers (quantize). */
static void check_case(hgr_test_rng_t* rng, bool quantize, const char* dtype, shape_t x, int32_t axis,
                       int64_t axis_attr, int64_t block, bool ties) {
  char attrs[96];
  snprintf(attrs, sizeof(attrs), "\"axis\": \"%lld\", \"block_size\": \"%lld\"", (long long)axis_attr,
           (long long)block);
  hgr_optest_t t;
  hgr_optest_init(&t, quantize ? "quantize" : "dequantize", attrs);
  shape_t p = param_shape(x, axis, block);
  hgr_optest_input(&t, quantize ? "float32" : dtype, x.ndim, x.dims);
  float* scale = hgr_optest_input(&t, "float32", p.ndim, p.dims);
  hgr_optest_input(&t, dtype, p.ndim, p.dims);
  hgr_optest_output(&t, quantize ? dtype : "float32", x.ndim, x.dims);
  int64_t lowest = 0, highest = 0;
  integer_range(dtype, &lowest, &highest);
  uint64_t n = count_of(x.dims, x.ndim), pn = count_of(p.dims, p.ndim);
  int64_t* zero = calloc(pn ? pn : 1, sizeof(int64_t));
  int64_t* ints = calloc(n ? n : 1, sizeof(int64_t));
  assert_true(zero && ints);
  bool wide = !strcmp(dtype, "int32");
  for (uint64_t k = 0; k < pn; ++k) {
    scale[k] = hgr_test_rng_float(rng, 0.01f, 2.0f);
    /* a zero point inside the range (int32: ONNX requires 0) */
    zero[k] = wide ? 0 : lowest + (int64_t)hgr_test_rng_below(rng, (uint32_t)(highest - lowest + 1));
    hgr_optest_set_int(&t.inputs[2], k, zero[k]);
  }
  ref_quant_params_t params = {scale, zero, p.dims, p.ndim, axis < 0 ? 0 : axis, block};
  if (quantize) {
    float* v = t.inputs[0].data;
    float reach = (float)(highest - lowest); /* x / scale spans past the range at either end */
    for (uint64_t i = 0; i < n; ++i) v[i] = hgr_test_rng_float(rng, -reach, reach);
    if (ties) /* x / scale exactly halfway between integers: to even */
      for (uint64_t i = 0; i < n; ++i) {
        v[i] = ((float)((int)(i % 601) - 300) + 0.5f) * 0.25f;
        for (uint64_t k = 0; k < pn; ++k) scale[k] = 0.25f;
      }
    int64_t* q = calloc(n ? n : 1, sizeof(int64_t));
    assert_non_null(q);
    ref_quantize(v, x.dims, x.ndim, &params, lowest, highest, q);
    for (uint64_t i = 0; i < n; ++i) hgr_optest_set_int(&t.outputs[0], i, q[i]);
    free(q);
  } else {
    for (uint64_t i = 0; i < n; ++i) {
      ints[i] = wide ? (int64_t)hgr_test_rng_below(rng, 2000001) - 1000000
                     : lowest + (int64_t)hgr_test_rng_below(rng, (uint32_t)(highest - lowest + 1));
      hgr_optest_set_int(&t.inputs[0], i, ints[i]);
    }
    ref_dequantize(ints, x.dims, x.ndim, &params, t.outputs[0].data);
    hgr_optest_tolerance(&t, 1.2e-7, 0);
  }
  hgr_optest_check(hgr_optest_instance, hgr_optest_device, &t);
  hgr_optest_free(&t);
  free(zero);
  free(ints);
}

static const char* const quantized_types[] = {"int8", "uint8", "int16", "uint16"};

/* Every dtype, per tensor (rank 0 and 1 scales), per axis on every axis (and
 * counted from the end), in blocks of 1, 2 and 3 along axes of 6 and 7. */
static void check_op(bool quantize) {
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, quantize ? 70 : 71);
  size_t types = quantize ? 4 : 5;
  const shape_t x = {3, {2, 6, 7}};
  for (size_t k = 0; k < types; ++k) {
    const char* dtype = k < 4 ? quantized_types[k] : "int32";
    check_case(&rng, quantize, dtype, x, -1, 1, 0, false);
    if (quantize) check_case(&rng, quantize, dtype, (shape_t){1, {1202}}, -1, 1, 0, true);
    check_case(&rng, quantize, dtype, (shape_t){0, {0}}, -1, 1, 0, false); /* a scalar x */
    for (int32_t axis = 0; axis < x.ndim; ++axis) {
      check_case(&rng, quantize, dtype, x, axis, axis, 0, false);
      check_case(&rng, quantize, dtype, x, axis, axis - x.ndim, 0, false);
    }
    for (int64_t block = 1; block <= 3; ++block) {
      check_case(&rng, quantize, dtype, x, 1, 1, block, false);
      check_case(&rng, quantize, dtype, x, 2, -1, block, false);
    }
    check_case(&rng, quantize, dtype, (shape_t){2, {0, 5}}, 1, 1, 0, false); /* empty */
    /* rows of 37 per axis: two items of 16 (vload16 and vstore16) and one of 5 */
    check_case(&rng, quantize, dtype, (shape_t){3, {2, 3, 37}}, 1, 1, 0, false);
    check_case(&rng, quantize, dtype, (shape_t){3, {2, 3, 37}}, 0, 0, 0, false);
    check_case(&rng, quantize, dtype, (shape_t){2, {3, 37}}, -1, 1, 0, false); /* per tensor: 111 elements */
    check_case(&rng, quantize, dtype, (shape_t){2, {3, 37}}, 1, -1, 0, false); /* per column: a scale each */
  }
  if (!hgr_optest_is_simulator(hgr_optest_device)) /* a convolution's weights, per output channel */
    check_case(&rng, quantize, "int8", (shape_t){4, {64, 32, 3, 3}}, 0, 0, 0, false);
}

static void dequantize_matches_reference(void** state) {
  (void)state;
  check_op(false);
}

static void quantize_matches_reference(void** state) {
  (void)state;
  check_op(true);
}

/* quantize_params of count values drawn from [lo, hi] (all zeros when lo == hi == 0) */
static void check_params(hgr_test_rng_t* rng, int64_t count, float lo, float hi) {
  hgr_optest_t t;
  hgr_optest_init(&t, "quantize_params", NULL);
  float* x = hgr_optest_input(&t, "float32", 1, &count);
  float* scale = hgr_optest_output(&t, "float32", 0, NULL);
  hgr_optest_output(&t, "uint8", 0, NULL);
  if (lo == hi) memset(x, 0, (size_t)count * sizeof(float));
  else hgr_optest_fill(&t.inputs[0], rng, lo, hi);
  int64_t zero;
  ref_quantize_params(x, (uint64_t)count, scale, &zero);
  hgr_optest_set_int(&t.outputs[1], 0, zero);
  hgr_optest_check(hgr_optest_instance, hgr_optest_device, &t); /* exactly */
  hgr_optest_free(&t);
}

/* Ranges on both sides of 0 and on one, all zeros; counts below, at and past one
 * item's 16 and a group's 64 x 16, and a large one off the simulator. */
static void quantize_params_match_reference(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 72);
  const int64_t counts[] = {1, 15, 16, 17, 1000, 1024, 1041};
  const float ranges[][2] = {{-3.0f, 5.0f}, {0.5f, 9.0f}, {-7.0f, -0.25f}, {-1e-3f, 2e-3f}, {0.0f, 0.0f}};
  for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); ++c)
    for (size_t r = 0; r < sizeof(ranges) / sizeof(ranges[0]); ++r)
      check_params(&rng, counts[c], ranges[r][0], ranges[r][1]);
  if (!hgr_optest_is_simulator(hgr_optest_device)) check_params(&rng, 128 * 1536 + 3, -11.0f, 4.0f);
}

#define ASSERT_REJECTED(t, ...)                                                                   \
  ASSERT_STATUS(hgr_optest_create(hgr_optest_instance, hgr_optest_device, (t)), HGR_STATUS_INVALID_ARGUMENT, \
                __VA_ARGS__)

/* One refused node: op on x (x_dtype, shaped x) with scale and zero point shaped p. */
static void expect_rejection(const char* op, const char* attrs, const char* x_dtype, shape_t x, const char* scale_dtype,
                             shape_t p, const char* zero_dtype, shape_t zp, const char* out_dtype,
                             const char* message) {
  hgr_optest_t t;
  hgr_optest_init(&t, op, attrs);
  hgr_optest_input(&t, x_dtype, x.ndim, x.dims);
  hgr_optest_input(&t, scale_dtype, p.ndim, p.dims);
  hgr_optest_input(&t, zero_dtype, zp.ndim, zp.dims);
  hgr_optest_output(&t, out_dtype, x.ndim, x.dims);
  ASSERT_REJECTED(&t, message);
  hgr_optest_free(&t);
}

static void bad_dtypes_shapes_and_attrs_are_refused(void** state) {
  (void)state;
  const shape_t x = {2, {4, 6}}, one = {0, {0}}, axis1 = {1, {6}};
  expect_rejection("dequantize", NULL, "float32", x, "float32", one, "float32", one, "float32",
                   "node 3 'dequantize_node' (dequantize): input 2 (the zero point, entry 2) is float32; dequantize "
                   "reads int8, uint8, int16, uint16 and int32");
  expect_rejection("dequantize", NULL, "int8", x, "float32", one, "uint8", one, "float32",
                   "input 0 (entry 0) is int8; dequantize takes the zero point's dtype");
  expect_rejection("quantize", NULL, "float32", x, "float32", one, "int32", one, "int32",
                   "input 2 (the zero point, entry 2) is int32; quantize writes int8, uint8, int16 and uint16");
  expect_rejection("quantize", NULL, "int8", x, "float32", one, "int8", one, "int8",
                   "input 0 (entry 0) is int8; quantize takes float32");
  expect_rejection("quantize", NULL, "float32", x, "int32", one, "int8", one, "int8",
                   "input 1 (the scale, entry 1) is int32; the op takes float32");
  expect_rejection("quantize", NULL, "float32", x, "float32", axis1, "int8", one, "int8",
                   "the scale (entry 1) is shaped [6] and the zero point (entry 2) []; they must share a shape");
  expect_rejection("quantize", "\"axis\": \"0\"", "float32", x, "float32", axis1, "int8", axis1, "int8",
                   "the scale (entry 1) is shaped [6]; per axis it holds input 0's 4 along axis 0");
  expect_rejection("quantize", "\"axis\": \"2\"", "float32", x, "float32", axis1, "int8", axis1, "int8",
                   "attr 'axis' = 2 is outside [-2, 2) for input 0 (entry 0) shaped [4, 6]");
  expect_rejection("quantize", "\"block_size\": \"-1\"", "float32", x, "float32", one, "int8", one, "int8",
                   "attr 'block_size' = -1; it is 0 (per tensor or per axis) or a block's length");
  const shape_t blocks = {2, {4, 3}};
  expect_rejection("dequantize", "\"block_size\": \"4\"", "int8", x, "float32", blocks, "int8", blocks, "float32",
                   "the scale (entry 1) is shaped [4, 3]; in blocks of 4 along axis 1 it has input 0's shape [4, 6] "
                   "with ceil(6 / 4) along the axis");
  expect_rejection("dequantize", NULL, "int8", x, "float32", one, "int8", one, "int8",
                   "output 0 (entry 3) should be float32 [4, 6], the graph says int8 [4, 6]");
}

int main(int argc, char** argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(dequantize_matches_reference),
      cmocka_unit_test(quantize_matches_reference),
      cmocka_unit_test(bad_dtypes_shapes_and_attrs_are_refused),
      cmocka_unit_test(quantize_params_match_reference),
  };
  return hgr_optest_main(argc, argv, "ops_quantize", tests, sizeof(tests) / sizeof(tests[0]));
}
