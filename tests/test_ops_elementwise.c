/* Elementwise ops (binary with broadcasting, comparisons and logical ops with bool
 * results, where, unary, cast) against the plain-C references of
 * tests/ref_elementwise.c on random data (argument: a device spec).
 *
 * Tolerances. An ulp of a float32 value v is at most ULP * |v| (ULP = 2^-23), so an
 * op that OpenCL 1.2 (full profile, section 7.4) allows N ulp from the exact result
 * is compared with rtol = (N + 1) * ULP: N for the device, 1/2 for rounding the
 * reference (computed in double, or exactly in float) and 1/2 for measuring ulps at
 * the exact value rather than the rounded one.
 *   exact: add, subtract, multiply, maximum, minimum (float32 and int32), relu,
 *          leaky_relu and clip (the reference rounds x * alpha in float32 too),
 *          abs, negative, cast, prelu (one product, as the reference's), mod
 *          (fmod is exact; int32 mod and floor_mod), floor, ceil, round, sign,
 *          and everything with an integer or bool result: comparisons, logical
 *          ops, isnan, isinf, where
 *   divide, reciprocal 2.5 ulp; exp, log, sqrt 3 ulp; rsqrt 2 ulp; tanh 5 ulp;
 *          erf, power 16 ulp; sin, cos, asin, acos, sinh, cosh, asinh, acosh,
 *          atanh 4 ulp; tan, atan 5 ulp
 *   elu = alpha expm1(x): expm1's 3 ulp and 1/2 for the product; compared at 4 + 1
 *   selu = gamma (alpha expm1(x)): 3 + 1/2 + 1/2, compared at 4 + 1
 *   softplus = max(x, 0) + log1p(exp(-|x|)), two terms >= 0 (no cancellation):
 *          exp's 3 ulp pass through log1p (condition number <= 1) with its 2 ulp
 *          and 1/2 for the sum: 5.5; compared at 6 + 1 ulp
 *   softsign = x / (1 + |x|): 1/2 for the sum, 2.5 for the division: 3; at 4 + 1
 *   hard_sigmoid = max(0, min(1, alpha x + beta)): alpha x + beta may cancel, so
 *          the error is absolute: 1/2 ulp of alpha x and 1/2 of the sum, each at
 *          most an ulp of 1 here (|alpha x|, |beta| <= 2): atol 4 * 2^-23
 *   hard_swish = x max(0, min(1, x / 6 + 1/2)): the clamp's argument as above
 *          (atol 2^-23 at most, times |x| <= 8) plus 1/2 ulp for the division
 *          and the product: rtol 2 ulp + atol 8 * 2^-23 on x in [-8, 8]
 *   sigmoid = 1 / (1 + exp(-x)): exp's 3 ulp, 1/2 for the sum and 2.5 for the
 *          division, so 6 ulp; compared at 7 + 1 ulp
 *   gelu = 0.5 x erfc(-x / sqrt 2), erfc by Numerical Recipes' erfcc fit (its
 *          fractional error below 1.2e-7, 1 ulp) as t exp(-z^2 + ...): the
 *          rounding of z^2 and the sum (about 1 ulp of z^2 <= 18) through exp's
 *          condition number, plus exp's 3 ulp and the products: about 40 ulp;
 *          33 measured in float32 on a grid of [-6, 6]; compared at 64 ulp
 *   gelu_tanh = x / (1 + exp(-2 z)), z = sqrt(2 / pi) (x + 0.044715 x^3): z's
 *          rounding (about 3 ulp) times exp's condition |2 z| <= 12.5 on x in
 *          [-4, 4], plus exp's 3 ulp and 3 for the sum and the division: 44 ulp;
 *          compared at 64 ulp
 * Input domains keep the ops defined: log, sqrt, rsqrt take positive inputs;
 * power takes a positive base, or integral exponents with any base; asin, acos,
 * atanh take (-1, 1), acosh [1, 100], tan (-1.5, 1.5).
 *
 * In place (TVM's in-place ops): every op again with its output over an input, and
 * the refusals of outputs over inputs that a work-item reads at other indices or
 * of another element size (a comparison's 4-byte input under its bool output).
 *
 * Oclgrind simulates every work-item, so it gets the small shapes only; every
 * kernel variant (equal shapes, one-element operand, general broadcast) of every op
 * still runs there. */
#include <math.h>
#include <string.h>

#include "optest.h"
#include "ref_elementwise.h"

#define ULP 0x1p-23

static bool simulator(void) { return hgr_optest_is_simulator(hgr_optest_device); }

/* rtol of an op by the table above (0: exact). */
static double op_rtol(const char* op) {
  static const struct {
    const char* op;
    double ulps;
  } table[] = {{"divide", 2.5}, {"exp", 3},      {"log", 3},   {"sqrt", 3},    {"rsqrt", 2},   {"tanh", 5},
               {"erf", 16},     {"power", 16},   {"sigmoid", 7}, {"gelu", 63},  {"gelu_tanh", 63}, {"reciprocal", 2.5},
               {"sin", 4},      {"cos", 4},      {"tan", 5},   {"asin", 4},    {"acos", 4},    {"atan", 5},
               {"sinh", 4},     {"cosh", 4},     {"asinh", 4}, {"acosh", 4},   {"atanh", 4},   {"elu", 4},
               {"selu", 4},     {"softplus", 6}, {"softsign", 4}, {"hard_swish", 1}};
  for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); ++i)
    if (!strcmp(op, table[i].op)) return (table[i].ulps + 1) * ULP;
  return 0;
}

/* atol of an op (0: none), where the error is absolute (the table above). */
static double op_atol(const char* op) {
  if (!strcmp(op, "hard_sigmoid")) return 4 * ULP;
  if (!strcmp(op, "hard_swish")) return 8 * ULP;
  return 0;
}

static void fill_ints(hgr_optest_tensor_t* tensor, hgr_test_rng_t* rng, uint32_t span) {
  int32_t* data = tensor->data;
  for (uint64_t i = 0; i < tensor->count; ++i) {
    uint32_t bits = span ? hgr_test_rng_below(rng, span) - span / 2 : (uint32_t)hgr_test_rng_next(rng);
    memcpy(&data[i], &bits, 4);
  }
}

/* ---- binary ---------------------------------------------------------------------------- */

typedef struct shape_t {
  int32_t ndim;
  int64_t dims[4];
} shape_t;

#define SHAPE0 ((shape_t){0, {0}})
#define SHAPE1(a) ((shape_t){1, {a}})
#define SHAPE2(a, b) ((shape_t){2, {a, b}})
#define SHAPE3(a, b, c) ((shape_t){3, {a, b, c}})
#define SHAPE4(a, b, c, d) ((shape_t){4, {a, b, c, d}})

/* Inputs of op in its domain: divisors away from 0 are not needed (the quotient's
 * relative error stays bounded), but power's base must be positive unless its
 * exponents are integers (integral_exponents). */
static void fill_binary(hgr_optest_t* t, const char* op, hgr_test_rng_t* rng, bool integral_exponents) {
  if (!strcmp(t->inputs[0].dtype, "int32")) {
    /* multiply: products up to 2^40 wrap around; add and subtract: the whole range */
    uint32_t span = !strcmp(op, "multiply") ? 1u << 21 : !strcmp(op, "add") || !strcmp(op, "subtract") ? 0 : 2001;
    fill_ints(&t->inputs[0], rng, span);
    fill_ints(&t->inputs[1], rng, span);
  } else if (!strcmp(op, "power")) {
    hgr_optest_fill(&t->inputs[0], rng, integral_exponents ? -4.0f : 0.1f, 4.0f);
    hgr_optest_fill(&t->inputs[1], rng, -3.0f, 3.0f);
    float* y = t->inputs[1].data;
    if (integral_exponents)
      for (uint64_t i = 0; i < t->inputs[1].count; ++i) y[i] = roundf(y[i]);
  } else {
    hgr_optest_fill(&t->inputs[0], rng, -4.0f, 4.0f);
    hgr_optest_fill(&t->inputs[1], rng, -4.0f, 4.0f);
    /* maximum and minimum: equal operands now and then (equal shapes only) */
    if (t->inputs[0].count == t->inputs[1].count && (!strcmp(op, "maximum") || !strcmp(op, "minimum")))
      for (uint64_t i = 0; i < t->inputs[0].count; i += 3)
        ((float*)t->inputs[1].data)[i] = ((float*)t->inputs[0].data)[i];
  }
}

/* in_place: -1, or the input whose storage id the output shares (TVM's in-place ops). */
static void check_binary(const char* op, const char* dtype, shape_t a, shape_t b, uint64_t seed,
                         bool integral_exponents, int in_place) {
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, seed);
  int64_t out_dims[HGR_OPTEST_MAX_DIMS];
  int32_t out_ndim;
  assert_true(hgr_ref_broadcast_shape(a.dims, a.ndim, b.dims, b.ndim, out_dims, &out_ndim));
  hgr_optest_t t;
  hgr_optest_init(&t, op, NULL);
  hgr_optest_input(&t, dtype, a.ndim, a.dims);
  hgr_optest_input(&t, dtype, b.ndim, b.dims);
  void* out = hgr_optest_output(&t, dtype, out_ndim, out_dims);
  t.alias_output = in_place >= 0;
  t.alias_input = in_place >= 0 ? (uint32_t)in_place : 0;
  fill_binary(&t, op, &rng, integral_exponents);
  if (!strcmp(dtype, "int32"))
    assert_true(hgr_ref_binary_i32(op, t.inputs[0].data, a.dims, a.ndim, t.inputs[1].data, b.dims, b.ndim, out));
  else
    assert_true(hgr_ref_binary_f32(op, t.inputs[0].data, a.dims, a.ndim, t.inputs[1].data, b.dims, b.ndim, out));
  hgr_optest_tolerance(&t, op_rtol(op), 0);
  hgr_optest_check(hgr_optest_instance, hgr_optest_device, &t);
  hgr_optest_free(&t);
}

static void check_binary_case(const char* op, const char* dtype, shape_t a, shape_t b, uint64_t seed,
                              bool integral_exponents) {
  check_binary(op, dtype, a, b, seed, integral_exponents, -1);
}

static const char* const float_binary_ops[] = {"add",     "subtract", "multiply", "divide",
                                               "maximum", "minimum",  "power",    "mod"};
static const char* const int_binary_ops[] = {"add", "subtract", "multiply", "maximum", "minimum", "mod", "floor_mod"};
#define COUNT(array) (sizeof(array) / sizeof((array)[0]))

/* Each op through each kernel variant: equal shapes, a one-element operand on
 * either side (also 0-d), and the general broadcast. */
static void float32_binary_ops_match_reference_in_every_kernel_variant(void** state) {
  (void)state;
  for (size_t o = 0; o < COUNT(float_binary_ops); ++o) {
    const char* op = float_binary_ops[o];
    uint64_t seed = 100 + 10 * o;
    check_binary_case(op, "float32", SHAPE2(3, 67), SHAPE2(3, 67), seed, false);
    check_binary_case(op, "float32", SHAPE1(1), SHAPE2(5, 13), seed + 1, false);
    check_binary_case(op, "float32", SHAPE2(5, 13), SHAPE0, seed + 2, false);
    check_binary_case(op, "float32", SHAPE3(3, 1, 5), SHAPE3(1, 4, 1), seed + 3, false);
    if (!simulator()) {
      check_binary_case(op, "float32", SHAPE1(65537), SHAPE1(65537), seed + 4, false);
      check_binary_case(op, "float32", SHAPE2(257, 255), SHAPE1(255), seed + 5, false);
    }
  }
}

static void power_takes_negative_bases_with_integral_exponents(void** state) {
  (void)state;
  check_binary_case("power", "float32", SHAPE2(3, 67), SHAPE2(3, 67), 7, true);
  check_binary_case("power", "float32", SHAPE2(3, 1), SHAPE2(1, 9), 8, true);
}

static void int32_binary_ops_match_reference_with_wraparound(void** state) {
  (void)state;
  for (size_t o = 0; o < COUNT(int_binary_ops); ++o) {
    const char* op = int_binary_ops[o];
    uint64_t seed = 200 + 10 * o;
    check_binary_case(op, "int32", SHAPE2(3, 67), SHAPE2(3, 67), seed, false);
    check_binary_case(op, "int32", SHAPE0, SHAPE2(5, 13), seed + 1, false);
    check_binary_case(op, "int32", SHAPE2(5, 13), SHAPE1(1), seed + 2, false);
    check_binary_case(op, "int32", SHAPE3(3, 1, 5), SHAPE3(1, 4, 1), seed + 3, false);
    if (!simulator()) check_binary_case(op, "int32", SHAPE2(257, 255), SHAPE1(255), seed + 4, false);
  }
}

/* Broadcasting corners on subtract and divide, where swapping operands shows. */
static void broadcasting_corners_match_reference(void** state) {
  (void)state;
  static const struct {
    shape_t a, b;
  } pairs[] = {
      {SHAPE3(3, 1, 5), SHAPE3(1, 4, 1)},       /* both broadcast, alternating */
      {SHAPE1(5), SHAPE3(2, 3, 5)},             /* lower rank on the left */
      {SHAPE3(2, 3, 5), SHAPE1(5)},             /* lower rank on the right */
      {SHAPE1(1), SHAPE3(2, 3, 7)},             /* one element against anything */
      {SHAPE4(2, 1, 3, 1), SHAPE1(1)},          /* ... with extent-1 dims in the output */
      {SHAPE0, SHAPE1(7)},                      /* 0-d */
      {SHAPE0, SHAPE0},                         /* 0-d with 0-d */
      {SHAPE2(1, 1), SHAPE1(1)},                /* one element, ranks differ */
      {SHAPE2(4, 9), SHAPE2(4, 9)},             /* equal shapes */
      {SHAPE2(7, 1), SHAPE2(1, 9)},             /* outer product */
      {SHAPE2(1, 9), SHAPE2(7, 1)},
      {SHAPE3(2, 1, 3), SHAPE3(2, 4, 3)},       /* middle dim */
      {SHAPE4(2, 3, 4, 5), SHAPE3(3, 1, 5)},    /* full dims around a broadcast one */
      {SHAPE4(6, 1, 4, 1), SHAPE3(5, 1, 3)},    /* larger rank, everything alternating */
      {SHAPE3(1, 3, 1), SHAPE4(2, 1, 1, 5)},
      {SHAPE2(5, 1), SHAPE3(2, 5, 3)},
  };
  for (size_t p = 0; p < COUNT(pairs); ++p) {
    check_binary_case(p % 2 ? "divide" : "subtract", "float32", pairs[p].a, pairs[p].b, 300 + p, false);
  }
  if (!simulator()) {
    check_binary_case("subtract", "float32", SHAPE3(64, 1, 1025), SHAPE3(1, 33, 1), 330, false);
    check_binary_case("divide", "float32", SHAPE3(1, 33, 1), SHAPE3(64, 1, 1025), 331, false);
    check_binary_case("subtract", "float32", SHAPE1(1), SHAPE1(65537), 332, false);
    check_binary_case("divide", "float32", SHAPE1(65537), SHAPE0, 333, false);
  }
}

static void empty_tensors_broadcast_without_reading(void** state) {
  (void)state;
  check_binary_case("add", "float32", SHAPE2(0, 3), SHAPE2(1, 3), 400, false);
  check_binary_case("add", "float32", SHAPE1(1), SHAPE1(0), 401, false);
}

/* ---- unary ----------------------------------------------------------------------------- */

/* in_place: the output shares x's storage id. */
static void check_unary(const char* op, const char* attrs, double p0, double p1, shape_t shape, float lo, float hi,
                        uint64_t seed, bool in_place) {
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, seed);
  hgr_optest_t t;
  hgr_optest_init(&t, op, attrs);
  float* x = hgr_optest_input(&t, "float32", shape.ndim, shape.dims);
  float* y = hgr_optest_output(&t, "float32", shape.ndim, shape.dims);
  t.alias_output = in_place;
  hgr_optest_fill(&t.inputs[0], &rng, lo, hi);
  assert_true(hgr_ref_unary_f32(op, x, y, t.inputs[0].count, p0, p1));
  hgr_optest_tolerance(&t, op_rtol(op), op_atol(op));
  hgr_optest_check(hgr_optest_instance, hgr_optest_device, &t);
  hgr_optest_free(&t);
}

static const struct {
  const char* op;
  const char* attrs;
  double p0, p1;
  float lo, hi;
} unary_cases[] = {
    {"relu", NULL, 0, 0, -4, 4},
    {"leaky_relu", NULL, 0.01, 0, -4, 4}, /* Relay's default alpha */
    {"leaky_relu", "\"alpha\": \"0.1\"", 0.1, 0, -4, 4},
    {"leaky_relu", "\"alpha\": \"-1.5\"", -1.5, 0, -4, 4},
    {"clip", "\"a_min\": \"-1.5\", \"a_max\": \"2.3\"", -1.5, 2.3, -4, 4},
    {"clip", "\"a_min\": \"-inf\", \"a_max\": \"0\"", -INFINITY, 0, -4, 4},
    {"clip", "\"a_min\": \"1\", \"a_max\": \"1\"", 1, 1, -4, 4},
    {"sigmoid", NULL, 0, 0, -12, 12},
    {"tanh", NULL, 0, 0, -6, 6},
    {"exp", NULL, 0, 0, -10, 10},
    {"log", NULL, 0, 0, 1e-3f, 100},
    {"sqrt", NULL, 0, 0, 1e-3f, 100},
    {"rsqrt", NULL, 0, 0, 1e-3f, 100},
    {"abs", NULL, 0, 0, -4, 4},
    {"negative", NULL, 0, 0, -4, 4},
    {"erf", NULL, 0, 0, -4, 4},
    {"gelu", NULL, 0, 0, -6, 6},
    {"gelu_tanh", NULL, 0, 0, -4, 4},
    {"elu", NULL, 1, 0, -6, 4}, /* ONNX's default alpha */
    {"elu", "\"alpha\": \"0.5\"", 0.5, 0, -6, 4},
    {"selu", NULL, 1.67326319217681884765625, 1.05070102214813232421875, -6, 4}, /* ONNX's defaults */
    {"selu", "\"alpha\": \"2\", \"gamma\": \"3\"", 2, 3, -6, 4},
    {"hard_sigmoid", NULL, 0.2, 0.5, -4, 4}, /* ONNX's defaults */
    {"hard_sigmoid", "\"alpha\": \"0.5\", \"beta\": \"0.25\"", 0.5, 0.25, -4, 4},
    {"hard_swish", NULL, 0, 0, -8, 8},
    {"softplus", NULL, 0, 0, -30, 30},
    {"softsign", NULL, 0, 0, -10, 10},
    {"reciprocal", NULL, 0, 0, -4, 4},
    {"floor", NULL, 0, 0, -8, 8},
    {"ceil", NULL, 0, 0, -8, 8},
    {"round", NULL, 0, 0, -8, 8},
    {"sign", NULL, 0, 0, -4, 4},
    {"sin", NULL, 0, 0, -6, 6},
    {"cos", NULL, 0, 0, -6, 6},
    {"tan", NULL, 0, 0, -1.5f, 1.5f},
    {"asin", NULL, 0, 0, -1, 1},
    {"acos", NULL, 0, 0, -1, 1},
    {"atan", NULL, 0, 0, -10, 10},
    {"sinh", NULL, 0, 0, -8, 8},
    {"cosh", NULL, 0, 0, -8, 8},
    {"asinh", NULL, 0, 0, -10, 10},
    {"acosh", NULL, 0, 0, 1, 100},
    {"atanh", NULL, 0, 0, -0.99f, 0.99f},
};

/* One unary case on shape (in place: the output shares x's storage id). */
static void check_unary_table_case(size_t c, shape_t shape, uint64_t seed, bool in_place) {
  check_unary(unary_cases[c].op, unary_cases[c].attrs, unary_cases[c].p0, unary_cases[c].p1, shape,
              unary_cases[c].lo, unary_cases[c].hi, seed, in_place);
}

static void unary_ops_match_reference(void** state) {
  (void)state;
  /* Every case on an odd 2-D shape, and in turn a 0-d, a one-element and a short one. */
  const shape_t small[] = {SHAPE0, SHAPE1(1), SHAPE1(7)};
  for (size_t c = 0; c < COUNT(unary_cases); ++c) {
    uint64_t seed = 500 + 10 * c;
    check_unary_table_case(c, SHAPE2(3, 67), seed, false);
    check_unary_table_case(c, small[c % COUNT(small)], seed + 1, false);
    if (!simulator()) check_unary_table_case(c, SHAPE1(65537), seed + 2, false);
  }
}

/* ---- special values -------------------------------------------------------------------- */

static const float specials[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1.0f, -1.0f, 3e38f, -3e38f, 1e-30f};
#define SPECIAL_COUNT ((int64_t)COUNT(specials))

/* fmax/fmin semantics: a NaN operand yields the other operand. */
static void maximum_and_minimum_of_nan_give_the_other_operand(void** state) {
  (void)state;
  const char* const ops[] = {"maximum", "minimum"};
  for (size_t o = 0; o < 2; ++o) {
    hgr_optest_t t;
    hgr_optest_init(&t, ops[o], NULL);
    /* every special against every special */
    float* a = hgr_optest_input(&t, "float32", 2, (int64_t[]){SPECIAL_COUNT, 1});
    float* b = hgr_optest_input(&t, "float32", 1, (int64_t[]){SPECIAL_COUNT});
    float* y = hgr_optest_output(&t, "float32", 2, (int64_t[]){SPECIAL_COUNT, SPECIAL_COUNT});
    memcpy(a, specials, sizeof(specials));
    memcpy(b, specials, sizeof(specials));
    assert_true(hgr_ref_binary_f32(ops[o], a, t.inputs[0].shape, 2, b, t.inputs[1].shape, 1, y));
    assert_true(y[1] == INFINITY && y[SPECIAL_COUNT] == INFINITY && isnan(y[0])); /* NaN, inf pairs */
    hgr_optest_check(hgr_optest_instance, hgr_optest_device, &t);
    hgr_optest_free(&t);
  }
}

static void unary_ops_follow_ieee_on_special_values(void** state) {
  (void)state;
  static const struct {
    const char* op;
    const char* attrs;
    double p0, p1;
  } cases[] = {
      {"relu", NULL, 0, 0},     /* NaN gives 0 */
      {"clip", "\"a_min\": \"-2\", \"a_max\": \"2\"", -2, 2}, /* NaN gives a_max */
      {"leaky_relu", NULL, 0.01, 0},
      {"abs", NULL, 0, 0},
      {"negative", NULL, 0, 0},
      {"exp", NULL, 0, 0},
      {"sigmoid", NULL, 0, 0},
      {"tanh", NULL, 0, 0},
      {"sqrt", NULL, 0, 0},     /* negative gives NaN */
      {"log", NULL, 0, 0},      /* 0 gives -inf */
      {"sign", NULL, 0, 0},     /* NaN gives NaN, zeros keep their sign */
      {"floor", NULL, 0, 0},
      {"ceil", NULL, 0, 0},
      {"round", NULL, 0, 0},
      {"softplus", NULL, 0, 0}, /* 3e38 gives itself, -inf gives 0 */
      {"elu", NULL, 1, 0},
      {"hard_sigmoid", NULL, 0.2, 0.5},
      {"reciprocal", NULL, 0, 0}, /* +-0 give +-inf */
  };
  for (size_t c = 0; c < COUNT(cases); ++c) {
    hgr_optest_t t;
    hgr_optest_init(&t, cases[c].op, cases[c].attrs);
    float* x = hgr_optest_input(&t, "float32", 1, (int64_t[]){SPECIAL_COUNT});
    float* y = hgr_optest_output(&t, "float32", 1, (int64_t[]){SPECIAL_COUNT});
    memcpy(x, specials, sizeof(specials));
    assert_true(hgr_ref_unary_f32(cases[c].op, x, y, SPECIAL_COUNT, cases[c].p0, cases[c].p1));
    hgr_optest_tolerance(&t, op_rtol(cases[c].op), 0);
    hgr_optest_check(hgr_optest_instance, hgr_optest_device, &t);
    hgr_optest_free(&t);
  }
}

/* ---- cast ------------------------------------------------------------------------------ */

/* Inputs of a cast from dtype `from`: the whole range of an integer dtype with small
 * values among them; for float32 integers, halves, values out of every integer
 * dtype's range (which saturate), infinities and NaN. */
static void fill_cast_input(hgr_optest_tensor_t* x, hgr_test_rng_t* rng) {
  const char* from = x->dtype;
  if (!strcmp(from, "float32")) {
    hgr_optest_fill(x, rng, -1000.0f, 1000.0f);
    float* v = x->data;
    for (uint64_t i = 0; i < x->count; i += 5) v[i] = roundf(v[i]) + (i % 10 ? 0.5f : 0.0f);
    for (uint64_t i = 1; i < x->count; i += 3) v[i] /= 8; /* within int8's range */
    static const float edges[] = {-0.75f,    0.75f,   2147483520.0f, -2147483648.0f, 3e9f,     -3e9f,    INFINITY,
                                  NAN,       -INFINITY, 9.2e18f,     -9.3e18f,       1e30f,    255.5f,   -128.5f,
                                  65519.0f,  65520.0f,  1e-7f,       3e-8f,          2.9e-8f,  6e-5f,    1.00048828125f,
                                  1.00390625f, 1.01171875f, 32768.5f, -40000.0f};
    for (uint64_t i = 0; i < x->count && i < COUNT(edges); ++i) v[7 * i % x->count] = edges[i];
  } else if (!strcmp(from, "bool")) {
    hgr_optest_fill(x, rng, 0, 2);
  } else if (!strcmp(from, "float16") || !strcmp(from, "bfloat16")) {
    /* every bit pattern: normals, subnormals, infinities and NaNs of either sign */
    uint16_t* v = x->data;
    for (uint64_t i = 0; i < x->count; ++i) v[i] = (uint16_t)hgr_test_rng_next(rng);
    static const float edges[] = {-0.75f, 0.75f, 255.5f, -128.5f, 65504.0f, 1e30f, -3e9f};
    bool half = !strcmp(from, "float16");
    for (uint64_t i = 0; i < x->count && i < COUNT(edges); ++i)
      v[7 * i % x->count] = half ? hgr_ref_float16_bits(edges[i]) : hgr_ref_bfloat16_bits(edges[i]);
  } else {
    for (uint64_t i = 0; i < x->count; ++i) {
      uint64_t bits = hgr_test_rng_next(rng);
      int64_t value;
      memcpy(&value, &bits, 8);
      if (i % 3 == 1) value = (int64_t)hgr_test_rng_below(rng, 601) - 300;
      hgr_optest_set_int(x, i, value); /* narrowed to the dtype's width */
    }
    static const int64_t edges[] = {INT64_MIN, INT64_MAX, (1 << 24) + 1, INT32_MIN, INT32_MAX, -129, 256, 0};
    if (!strcmp(from, "int64"))
      for (uint64_t i = 0; i < x->count && i < COUNT(edges); ++i) hgr_optest_set_int(x, 7 * i % x->count, edges[i]);
  }
}

/* in_place: the output shares x's storage id. */
static void check_cast(const char* from, const char* to, shape_t shape, uint64_t seed, bool in_place) {
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, seed);
  char attrs[64];
  snprintf(attrs, sizeof(attrs), "\"dtype\": \"%s\"", to);
  hgr_optest_t t;
  hgr_optest_init(&t, "cast", attrs);
  void* x = hgr_optest_input(&t, from, shape.ndim, shape.dims);
  void* y = hgr_optest_output(&t, to, shape.ndim, shape.dims);
  t.alias_output = in_place;
  fill_cast_input(&t.inputs[0], &rng);
  assert_true(hgr_ref_cast(from, x, to, y, t.inputs[0].count));
  hgr_optest_check(hgr_optest_instance, hgr_optest_device, &t);
  hgr_optest_free(&t);
}

static void check_cast_case(const char* from, const char* to, shape_t shape, uint64_t seed) {
  check_cast(from, to, shape, seed, false);
}

static const char* const cast_dtypes[] = {"float32", "int32",  "int64", "uint8",   "int8",
                                          "bool",    "uint16", "int16", "float16", "bfloat16"};

/* Every pair of the cast dtypes, each way and each to itself. */
static void cast_matches_reference(void** state) {
  (void)state;
  const shape_t small[] = {SHAPE0, SHAPE1(7)};
  for (size_t f = 0; f < COUNT(cast_dtypes); ++f)
    for (size_t d = 0; d < COUNT(cast_dtypes); ++d) {
      size_t p = f * COUNT(cast_dtypes) + d;
      check_cast_case(cast_dtypes[f], cast_dtypes[d], SHAPE2(3, 67), 600 + 10 * p);
      check_cast_case(cast_dtypes[f], cast_dtypes[d], small[p % 2], 601 + 10 * p);
      if (!simulator()) check_cast_case(cast_dtypes[f], cast_dtypes[d], SHAPE1(65537), 602 + 10 * p);
    }
}

/* The rules stated in the docs, on values chosen by hand (the random cases above
 * check the kernels against the reference; these check the reference). */
static void cast_reference_saturates_and_truncates(void** state) {
  (void)state;
  const float f[] = {NAN, 3e9f, -3e9f, -2.75f, 2.75f, 1e30f, -1e30f, 300.0f, -0.0f};
  int32_t i32[9];
  int64_t i64[9];
  uint8_t u8[9], b[9];
  int8_t i8[9];
  assert_true(hgr_ref_cast("float32", f, "int32", i32, 9));
  assert_true(hgr_ref_cast("float32", f, "int64", i64, 9));
  assert_true(hgr_ref_cast("float32", f, "uint8", u8, 9));
  assert_true(hgr_ref_cast("float32", f, "int8", i8, 9));
  assert_true(hgr_ref_cast("float32", f, "bool", b, 9));
  assert_true(i32[0] == 0 && i32[1] == INT32_MAX && i32[2] == INT32_MIN && i32[3] == -2 && i32[4] == 2);
  assert_true(i64[0] == 0 && i64[1] == 3000000000 && i64[5] == INT64_MAX && i64[6] == INT64_MIN && i64[3] == -2);
  assert_true(u8[3] == 0 && u8[4] == 2 && u8[7] == 255 && i8[7] == 127 && i8[2] == -128);
  assert_true(b[0] == 1 && b[3] == 1 && b[8] == 0);
  const int64_t big[] = {INT64_MAX, INT64_MIN, -5, 5000000000};
  assert_true(hgr_ref_cast("int64", big, "int32", i32, 4));
  assert_true(i32[0] == INT32_MAX && i32[1] == INT32_MIN && i32[2] == -5 && i32[3] == INT32_MAX);
  /* to 8 and 16 bits, integers keep their low bits (ONNX's own example: 200 -> -56) */
  const int16_t i16_in[] = {200, -200, 127};
  assert_true(hgr_ref_cast("int16", i16_in, "int8", i8, 3));
  assert_true(i8[0] == -56 && i8[1] == 56 && i8[2] == 127);
  const int32_t wide[] = {300, 70000, -1, -32769};
  uint16_t u16[4];
  int16_t i16[4];
  assert_true(hgr_ref_cast("int32", wide, "uint8", u8, 4) && hgr_ref_cast("int32", wide, "uint16", u16, 4) &&
              hgr_ref_cast("int32", wide, "int16", i16, 4));
  assert_true(u8[0] == 44 && u8[2] == 255 && u16[1] == 4464 && u16[2] == 65535 && i16[1] == 4464 &&
              i16[3] == 32767);
  /* float16 and bfloat16 round to nearest even, through subnormals to infinity */
  const float halves[] = {1.0f, 65504.0f, 65520.0f, 1.00048828125f, 1.00146484375f, 0x1p-24f, 0x1p-25f,
                          0x3p-26f, NAN, -2.0f};
  const uint16_t half_bits[] = {0x3c00, 0x7bff, 0x7c00, 0x3c00, 0x3c02, 0x0001, 0x0000, 0x0001, 0x7e00, 0xc000};
  for (size_t i = 0; i < COUNT(halves); ++i) assert_int_equal(hgr_ref_float16_bits(halves[i]), half_bits[i]);
  const float brains[] = {1.0f, 1.00390625f, 1.01171875f, -3e38f, 0x1p-133f, NAN};
  const uint16_t brain_bits[] = {0x3f80, 0x3f80, 0x3f82, 0xff62, 0x0001, 0x7fc0};
  for (size_t i = 0; i < COUNT(brains); ++i) assert_int_equal(hgr_ref_bfloat16_bits(brains[i]), brain_bits[i]);
  assert_true(hgr_ref_float16_value(0x0001) == 0x1p-24f && hgr_ref_bfloat16_value(0xc040) == -3.0f);
}

/* ---- in place ------------------------------------------------------------------------- */

/* TVM's in-place ops: the output shares an input's storage id, so each work-item
 * reads its element and then overwrites it. The shared input has the output's
 * element count; the other one may broadcast. */
static void elementwise_ops_run_in_place(void** state) {
  (void)state;
  for (size_t o = 0; o < COUNT(float_binary_ops); ++o) {
    const char* op = float_binary_ops[o];
    uint64_t seed = 700 + 10 * o;
    check_binary(op, "float32", SHAPE2(3, 67), SHAPE2(3, 67), seed, false, 0);
    check_binary(op, "float32", SHAPE2(3, 67), SHAPE2(3, 67), seed + 1, false, 1);
    check_binary(op, "float32", SHAPE2(5, 13), SHAPE0, seed + 2, false, 0);      /* b one element */
    check_binary(op, "float32", SHAPE1(1), SHAPE2(5, 13), seed + 3, false, 1);   /* a one element */
    check_binary(op, "float32", SHAPE3(2, 3, 5), SHAPE1(5), seed + 4, false, 0); /* general broadcast */
    check_binary(op, "float32", SHAPE2(3, 1), SHAPE2(3, 7), seed + 5, false, 1);
    if (!simulator()) check_binary(op, "float32", SHAPE1(65537), SHAPE1(65537), seed + 6, false, 1);
  }
  for (size_t o = 0; o < COUNT(int_binary_ops); ++o) {
    uint64_t seed = 800 + 10 * o;
    check_binary(int_binary_ops[o], "int32", SHAPE2(3, 67), SHAPE2(3, 67), seed, false, 0);
    check_binary(int_binary_ops[o], "int32", SHAPE1(13), SHAPE2(5, 13), seed + 1, false, 1);
  }
  for (size_t c = 0; c < COUNT(unary_cases); ++c) {
    check_unary_table_case(c, SHAPE2(3, 67), 900 + 10 * c, true);
    if (!simulator()) check_unary_table_case(c, SHAPE1(65537), 901 + 10 * c, true);
  }
  /* casts between dtypes of one element size */
  for (size_t f = 0; f < COUNT(cast_dtypes); ++f)
    for (size_t d = 0; d < COUNT(cast_dtypes); ++d)
      if (hgr_optest_element_bytes(cast_dtypes[f]) == hgr_optest_element_bytes(cast_dtypes[d]))
        check_cast(cast_dtypes[f], cast_dtypes[d], SHAPE2(3, 67), 1100 + f * COUNT(cast_dtypes) + d, true);
}

/* ---- prelu ----------------------------------------------------------------------------- */

/* The slope broadcasts to x (one-way): the output is shaped like x. */
static void prelu_matches_reference_in_every_kernel_variant(void** state) {
  (void)state;
  static const struct {
    shape_t x, slope;
  } cases[] = {
      {SHAPE2(3, 67), SHAPE2(3, 67)},       /* equal shapes */
      {SHAPE2(5, 13), SHAPE0},              /* one slope */
      {SHAPE1(1), SHAPE1(1)},               /* one element each */
      {SHAPE3(2, 3, 5), SHAPE2(3, 1)},      /* per channel, ONNX's [C, 1] slope */
      {SHAPE4(2, 3, 4, 5), SHAPE1(5)},      /* last axis */
  };
  for (size_t c = 0; c < COUNT(cases); ++c)
    check_binary_case("prelu", "float32", cases[c].x, cases[c].slope, 1200 + c, false);
  if (!simulator()) check_binary_case("prelu", "float32", SHAPE3(8, 64, 129), SHAPE2(64, 1), 1210, false);
  check_binary("prelu", "float32", SHAPE3(2, 3, 5), SHAPE2(3, 1), 1211, false, 0); /* in place over x */
}

/* ---- bool results: comparisons, logical ops, isnan, isinf ------------------------------- */

/* a <op> b into a bool output. Floats are small halves so that equal values occur,
 * with NaN, infinities and signed zeros among them. in_place: -1, or the input
 * whose storage id the output shares. */
static void check_compare(const char* op, const char* dtype, shape_t a, shape_t b, uint64_t seed, int in_place) {
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, seed);
  int64_t out_dims[HGR_OPTEST_MAX_DIMS];
  int32_t out_ndim;
  assert_true(hgr_ref_broadcast_shape(a.dims, a.ndim, b.dims, b.ndim, out_dims, &out_ndim));
  hgr_optest_t t;
  hgr_optest_init(&t, op, NULL);
  hgr_optest_input(&t, dtype, a.ndim, a.dims);
  hgr_optest_input(&t, dtype, b.ndim, b.dims);
  uint8_t* out = hgr_optest_output(&t, "bool", out_ndim, out_dims);
  t.alias_output = in_place >= 0;
  t.alias_input = in_place >= 0 ? (uint32_t)in_place : 0;
  for (uint32_t k = 0; k < 2; ++k) {
    hgr_optest_fill(&t.inputs[k], &rng, -3, 3);
    if (!strcmp(dtype, "float32")) {
      float* v = t.inputs[k].data;
      for (uint64_t i = 0; i < t.inputs[k].count; ++i) v[i] = roundf(2 * v[i]) / 2;
      static const float special[] = {NAN, INFINITY, -INFINITY, -0.0f, 0.0f};
      for (uint64_t i = 0; i < t.inputs[k].count; i += 7) v[i] = special[(i / 7 + k) % COUNT(special)];
    }
  }
  assert_true(hgr_ref_compare(op, dtype, t.inputs[0].data, a.dims, a.ndim, t.inputs[1].data, b.dims, b.ndim, out));
  hgr_optest_check(hgr_optest_instance, hgr_optest_device, &t);
  hgr_optest_free(&t);
}

static const char* const compare_ops[] = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"};
static const char* const logical_ops[] = {"logical_and", "logical_or", "logical_xor"};

/* Each through each kernel variant: equal shapes, one-element operand either side
 * (also 0-d), the general broadcast. */
static void compare_variants(const char* op, const char* dtype, uint64_t seed) {
  check_compare(op, dtype, SHAPE2(3, 67), SHAPE2(3, 67), seed, -1);
  check_compare(op, dtype, SHAPE1(1), SHAPE2(5, 13), seed + 1, -1);
  check_compare(op, dtype, SHAPE2(5, 13), SHAPE0, seed + 2, -1);
  check_compare(op, dtype, SHAPE3(3, 1, 5), SHAPE3(1, 4, 1), seed + 3, -1);
  check_compare(op, dtype, SHAPE1(5), SHAPE3(2, 3, 5), seed + 4, -1);
  if (!simulator()) check_compare(op, dtype, SHAPE2(257, 255), SHAPE1(255), seed + 5, -1);
}

static void comparisons_match_reference_with_bool_results(void** state) {
  (void)state;
  for (size_t o = 0; o < COUNT(compare_ops); ++o) {
    compare_variants(compare_ops[o], "float32", 1300 + 10 * o);
    compare_variants(compare_ops[o], "int32", 1400 + 10 * o);
    compare_variants(compare_ops[o], "int64", 1450 + 10 * o);
  }
}

static void logical_ops_match_reference(void** state) {
  (void)state;
  for (size_t o = 0; o < COUNT(logical_ops); ++o) {
    compare_variants(logical_ops[o], "bool", 1500 + 10 * o);
    check_compare(logical_ops[o], "bool", SHAPE2(3, 67), SHAPE2(3, 67), 1509 + 10 * o, 1); /* in place */
  }
}

/* isnan, isinf (with its detect flags) and logical_not; in_place: over x (same size
 * for logical_not only). */
static void check_unary_bool(const char* op, const char* attrs, bool detect_positive, bool detect_negative,
                             shape_t shape, uint64_t seed, bool in_place) {
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, seed);
  const char* dtype = !strcmp(op, "logical_not") ? "bool" : "float32";
  hgr_optest_t t;
  hgr_optest_init(&t, op, attrs);
  void* x = hgr_optest_input(&t, dtype, shape.ndim, shape.dims);
  uint8_t* y = hgr_optest_output(&t, "bool", shape.ndim, shape.dims);
  t.alias_output = in_place;
  hgr_optest_fill(&t.inputs[0], &rng, -4, 4);
  if (!strcmp(dtype, "float32"))
    for (uint64_t i = 0; i < t.inputs[0].count; i += 3) ((float*)x)[i] = specials[(i / 3) % SPECIAL_COUNT];
  assert_true(hgr_ref_unary_bool(op, x, y, t.inputs[0].count, detect_positive, detect_negative));
  hgr_optest_check(hgr_optest_instance, hgr_optest_device, &t);
  hgr_optest_free(&t);
}

static void isnan_isinf_and_logical_not_match_reference(void** state) {
  (void)state;
  static const struct {
    const char* op;
    const char* attrs;
    bool positive, negative;
  } cases[] = {
      {"isnan", NULL, true, true},
      {"isinf", NULL, true, true},
      {"isinf", "\"detect_positive\": \"0\"", false, true},
      {"isinf", "\"detect_negative\": \"0\"", true, false},
      {"logical_not", NULL, true, true},
  };
  for (size_t c = 0; c < COUNT(cases); ++c) {
    check_unary_bool(cases[c].op, cases[c].attrs, cases[c].positive, cases[c].negative, SHAPE2(3, 67), 1600 + c,
                     false);
    check_unary_bool(cases[c].op, cases[c].attrs, cases[c].positive, cases[c].negative, SHAPE0, 1610 + c, false);
    if (!simulator())
      check_unary_bool(cases[c].op, cases[c].attrs, cases[c].positive, cases[c].negative, SHAPE1(65537), 1620 + c,
                       false);
  }
  check_unary_bool("logical_not", NULL, true, true, SHAPE2(3, 67), 1630, true);
}

/* round is half to even, as ONNX and NumPy: every half from -6 to 6. */
static void round_takes_halves_to_even(void** state) {
  (void)state;
  hgr_optest_t t;
  hgr_optest_init(&t, "round", NULL);
  float* x = hgr_optest_input(&t, "float32", 1, (int64_t[]){25});
  float* y = hgr_optest_output(&t, "float32", 1, (int64_t[]){25});
  for (int i = 0; i < 25; ++i) x[i] = (float)(i - 12) / 2;
  assert_true(hgr_ref_unary_f32("round", x, y, 25, 0, 0));
  assert_true(y[13] == 0.0f && y[15] == 2.0f && y[9] == -2.0f && y[11] == -0.0f); /* 0.5, 1.5, -1.5, -0.5 */
  hgr_optest_check(hgr_optest_instance, hgr_optest_device, &t);
  hgr_optest_free(&t);
}

/* ---- where ----------------------------------------------------------------------------- */

static void check_where(const char* dtype, shape_t c, shape_t x, shape_t y, uint64_t seed, int in_place) {
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, seed);
  int64_t cx_dims[HGR_OPTEST_MAX_DIMS], out_dims[HGR_OPTEST_MAX_DIMS];
  int32_t cx_ndim, out_ndim;
  assert_true(hgr_ref_broadcast_shape(c.dims, c.ndim, x.dims, x.ndim, cx_dims, &cx_ndim));
  assert_true(hgr_ref_broadcast_shape(cx_dims, cx_ndim, y.dims, y.ndim, out_dims, &out_ndim));
  hgr_optest_t t;
  hgr_optest_init(&t, "where", NULL);
  hgr_optest_input(&t, "bool", c.ndim, c.dims);
  hgr_optest_input(&t, dtype, x.ndim, x.dims);
  hgr_optest_input(&t, dtype, y.ndim, y.dims);
  void* out = hgr_optest_output(&t, dtype, out_ndim, out_dims);
  t.alias_output = in_place >= 0;
  t.alias_input = in_place >= 0 ? (uint32_t)in_place : 0;
  hgr_optest_fill(&t.inputs[0], &rng, 0, 2);
  if (!strcmp(dtype, "float32")) {
    hgr_optest_fill(&t.inputs[1], &rng, -4, 4);
    hgr_optest_fill(&t.inputs[2], &rng, -4, 4);
    ((float*)t.inputs[1].data)[0] = NAN; /* moved bit for bit */
  } else {
    fill_cast_input(&t.inputs[1], &rng); /* the dtype's whole range */
    fill_cast_input(&t.inputs[2], &rng);
  }
  assert_true(hgr_ref_where(t.inputs[0].data, c.dims, c.ndim, t.inputs[1].data, x.dims, x.ndim, t.inputs[2].data,
                            y.dims, y.ndim, hgr_optest_element_bytes(dtype), out));
  hgr_optest_check(hgr_optest_instance, hgr_optest_device, &t);
  hgr_optest_free(&t);
}

static void where_matches_reference_with_three_way_broadcast(void** state) {
  (void)state;
  static const struct {
    shape_t c, x, y;
  } cases[] = {
      {SHAPE2(3, 67), SHAPE2(3, 67), SHAPE2(3, 67)}, /* equal shapes */
      {SHAPE0, SHAPE0, SHAPE0},                      /* 0-d */
      {SHAPE2(5, 13), SHAPE2(5, 13), SHAPE0},        /* one-element y */
      {SHAPE1(1), SHAPE2(5, 13), SHAPE2(5, 13)},     /* one condition */
      {SHAPE3(3, 1, 5), SHAPE3(1, 4, 1), SHAPE1(5)}, /* each broadcast differently */
      {SHAPE2(4, 1), SHAPE0, SHAPE3(2, 1, 6)},
      {SHAPE1(7), SHAPE2(3, 7), SHAPE2(3, 1)},
  };
  for (size_t k = 0; k < COUNT(cases); ++k) {
    check_where("float32", cases[k].c, cases[k].x, cases[k].y, 1700 + k, -1);
    check_where("int32", cases[k].c, cases[k].x, cases[k].y, 1720 + k, -1);
    check_where(k % 2 ? "int64" : "uint8", cases[k].c, cases[k].x, cases[k].y, 1750 + k, -1); /* 64, 8 bits */
    check_where(k % 2 ? "bool" : "int8", cases[k].c, cases[k].x, cases[k].y, 1760 + k, -1);
  }
  if (!simulator()) check_where("float32", SHAPE3(64, 1, 1025), SHAPE3(1, 33, 1), SHAPE3(64, 33, 1025), 1740, -1);
  check_where("float32", SHAPE2(3, 1), SHAPE2(3, 67), SHAPE2(3, 67), 1741, 1); /* in place over x */
  check_where("int32", SHAPE2(3, 67), SHAPE1(67), SHAPE2(3, 67), 1742, 2);     /* over y */
  check_where("bool", SHAPE2(3, 67), SHAPE2(3, 67), SHAPE1(1), 1743, 0);       /* over the condition */
  check_where("int64", SHAPE2(3, 67), SHAPE2(3, 67), SHAPE2(3, 67), 1744, 1);
}

/* ---- what the ops reject --------------------------------------------------------------- */

/* Creates the executor of a one-op graph and checks the error and its message. */
static void expect_rejection(const char* op, const char* attrs, const char* dtype_a, shape_t a, const char* dtype_b,
                             shape_t b, const char* dtype_out, shape_t out, const char* message) {
  hgr_optest_t t;
  hgr_optest_init(&t, op, attrs);
  hgr_optest_input(&t, dtype_a, a.ndim, a.dims);
  if (dtype_b) hgr_optest_input(&t, dtype_b, b.ndim, b.dims);
  hgr_optest_output(&t, dtype_out, out.ndim, out.dims);
  ASSERT_STATUS(hgr_optest_create(hgr_optest_instance, hgr_optest_device, &t), HGR_STATUS_INVALID_ARGUMENT, message);
  hgr_optest_free(&t);
}

static void binary_ops_reject_bad_shapes_dtypes_and_attrs(void** state) {
  (void)state;
  expect_rejection("add", NULL, "float32", SHAPE2(3, 1), "float32", SHAPE1(4), "float32", SHAPE2(3, 5),
                   "node 2 'add_node' (add): output 0 (entry 2) should be shaped [3, 4], the graph says [3, 5]");
  expect_rejection("subtract", NULL, "float32", SHAPE2(3, 4), "float32", SHAPE1(4), "float32", SHAPE1(4),
                   "node 2 'subtract_node' (subtract): output 0 (entry 2) should be shaped [3, 4], the graph says [4]");
  expect_rejection("multiply", NULL, "float32", SHAPE2(3, 4), "float32", SHAPE1(5), "float32", SHAPE2(3, 4),
                   "node 2 'multiply_node' (multiply): input 0 shaped [3, 4] and input 1 shaped [5] do not "
                   "broadcast: 4 against 5 in dimension 1 from the right");
  expect_rejection("maximum", NULL, "float32", SHAPE1(4), "int32", SHAPE1(4), "float32", SHAPE1(4),
                   "node 2 'maximum_node' (maximum): input 1 (entry 1) is int32 but input 0 (entry 0) is float32");
  expect_rejection("add", NULL, "int32", SHAPE1(4), "int32", SHAPE1(4), "float32", SHAPE1(4),
                   "node 2 'add_node' (add): output 0 (entry 2) should be int32 [4], the graph says float32 [4]");
  expect_rejection("divide", NULL, "int32", SHAPE1(4), "int32", SHAPE1(4), "int32", SHAPE1(4),
                   "node 2 'divide_node' (divide): input 0 (entry 0) is int32; the op supports float32");
  expect_rejection("power", NULL, "int32", SHAPE1(4), "int32", SHAPE1(4), "int32", SHAPE1(4),
                   "node 2 'power_node' (power): input 0 (entry 0) is int32; the op supports float32");
  expect_rejection("minimum", NULL, "float16", SHAPE1(4), "float16", SHAPE1(4), "float16", SHAPE1(4),
                   "node 2 'minimum_node' (minimum): input 0 (entry 0) is float16; the op supports float32 and int32");
  expect_rejection("add", "\"alpha\": \"1\"", "float32", SHAPE1(4), "float32", SHAPE1(4), "float32", SHAPE1(4),
                   "node 2 'add_node' (add): unknown attr 'alpha'");
  expect_rejection("add", NULL, "float32", SHAPE1(4), NULL, SHAPE0, "float32", SHAPE1(4),
                   "node 1 'add_node' (add): takes 2 input(s), the node has 1");
}

static void unary_ops_reject_bad_shapes_dtypes_and_attrs(void** state) {
  (void)state;
  expect_rejection("relu", NULL, "float32", SHAPE1(4), NULL, SHAPE0, "float32", SHAPE1(5),
                   "node 1 'relu_node' (relu): output 0 (entry 1) should be shaped [4], the graph says [5]");
  expect_rejection("exp", NULL, "float32", SHAPE2(2, 3), NULL, SHAPE0, "float32", SHAPE2(3, 2),
                   "node 1 'exp_node' (exp): output 0 (entry 1) should be shaped [2, 3], the graph says [3, 2]");
  expect_rejection("tanh", NULL, "int32", SHAPE1(4), NULL, SHAPE0, "int32", SHAPE1(4),
                   "node 1 'tanh_node' (tanh): input 0 (entry 0) is int32; the op supports float32");
  expect_rejection("sqrt", NULL, "float32", SHAPE1(4), NULL, SHAPE0, "int32", SHAPE1(4),
                   "node 1 'sqrt_node' (sqrt): output 0 (entry 1) should be float32 [4], the graph says int32 [4]");
  expect_rejection("relu", "\"alpha\": \"0.5\"", "float32", SHAPE1(4), NULL, SHAPE0, "float32", SHAPE1(4),
                   "node 1 'relu_node' (relu): unknown attr 'alpha'");
  expect_rejection("leaky_relu", "\"alpha\": \"steep\"", "float32", SHAPE1(4), NULL, SHAPE0, "float32", SHAPE1(4),
                   "node 1 'leaky_relu_node' (leaky_relu): attr 'alpha' = \"steep\" is not a number");
  expect_rejection("leaky_relu", "\"slope\": \"0.2\"", "float32", SHAPE1(4), NULL, SHAPE0, "float32", SHAPE1(4),
                   "node 1 'leaky_relu_node' (leaky_relu): unknown attr 'slope'");
  expect_rejection("clip", "\"a_max\": \"1\"", "float32", SHAPE1(4), NULL, SHAPE0, "float32", SHAPE1(4),
                   "node 1 'clip_node' (clip): attr 'a_min' (the lower bound) is required");
  expect_rejection("clip", "\"a_min\": \"1\"", "float32", SHAPE1(4), NULL, SHAPE0, "float32", SHAPE1(4),
                   "node 1 'clip_node' (clip): attr 'a_max' (the upper bound) is required");
  expect_rejection("clip", "\"a_min\": \"1\", \"a_max\": \"[2]\"", "float32", SHAPE1(4), NULL, SHAPE0, "float32",
                   SHAPE1(4), "node 1 'clip_node' (clip): attr 'a_max' = \"[2]\" is not a number");
  expect_rejection("clip", "\"a_min\": \"3\", \"a_max\": \"2\"", "float32", SHAPE1(4), NULL, SHAPE0, "float32",
                   SHAPE1(4), "node 1 'clip_node' (clip): attr 'a_min' = 3 is above attr 'a_max' = 2");
  expect_rejection("gelu", NULL, "float32", SHAPE1(4), "float32", SHAPE1(4), "float32", SHAPE1(4),
                   "node 2 'gelu_node' (gelu): takes 1 input(s), the node has 2");
}

static void cast_rejects_bad_dtypes_shapes_and_attrs(void** state) {
  (void)state;
  expect_rejection("cast", NULL, "float32", SHAPE1(4), NULL, SHAPE0, "int32", SHAPE1(4),
                   "node 1 'cast_node' (cast): attr 'dtype' (the output's dtype: float32, int32, int64, uint8, int8, "
                   "bool, uint16, int16, float16 or bfloat16) is required");
  expect_rejection("cast", "\"dtype\": \"float64\"", "float32", SHAPE1(4), NULL, SHAPE0, "float64", SHAPE1(4),
                   "node 1 'cast_node' (cast): attr 'dtype' = \"float64\" is not supported; cast converts between "
                   "float32, int32, int64, uint8, int8, bool, uint16, int16, float16 and bfloat16");
  expect_rejection("cast", "\"dtype\": \"int32\"", "float32", SHAPE1(4), NULL, SHAPE0, "float32", SHAPE1(4),
                   "node 1 'cast_node' (cast): output 0 (entry 1) should be int32 [4], the graph says float32 [4]");
  expect_rejection("cast", "\"dtype\": \"float32\"", "float64", SHAPE1(4), NULL, SHAPE0, "float32", SHAPE1(4),
                   "node 1 'cast_node' (cast): input 0 (entry 0) is float64; the op supports float32, int32, int64, "
                   "uint8, int8, bool, uint16, int16, float16 and bfloat16");
  expect_rejection("cast", "\"dtype\": \"bool\"", "int64", SHAPE1(4), NULL, SHAPE0, "uint8", SHAPE1(4),
                   "node 1 'cast_node' (cast): output 0 (entry 1) should be bool [4], the graph says uint8 [4]");
  expect_rejection("cast", "\"dtype\": \"float32\"", "int32", SHAPE1(4), NULL, SHAPE0, "float32", SHAPE2(2, 2),
                   "node 1 'cast_node' (cast): output 0 (entry 1) should be shaped [4], the graph says [2, 2]");
  expect_rejection("cast", "\"dtype\": \"int32\", \"to\": \"int32\"", "float32", SHAPE1(4), NULL, SHAPE0, "int32",
                   SHAPE1(4), "node 1 'cast_node' (cast): unknown attr 'to'");
}

static void comparisons_where_prelu_and_logical_ops_reject_bad_inputs(void** state) {
  (void)state;
  expect_rejection("less", NULL, "bool", SHAPE1(4), "bool", SHAPE1(4), "bool", SHAPE1(4),
                   "node 2 'less_node' (less): input 0 (entry 0) is bool; the op supports float32, int32 and int64");
  expect_rejection("equal", NULL, "float32", SHAPE1(4), "float32", SHAPE1(4), "float32", SHAPE1(4),
                   "node 2 'equal_node' (equal): output 0 (entry 2) should be bool [4], the graph says float32 [4]");
  expect_rejection("greater", NULL, "int32", SHAPE1(4), "float32", SHAPE1(4), "bool", SHAPE1(4),
                   "node 2 'greater_node' (greater): input 1 (entry 1) is float32 but input 0 (entry 0) is int32");
  expect_rejection("logical_and", NULL, "uint8", SHAPE1(4), "uint8", SHAPE1(4), "bool", SHAPE1(4),
                   "node 2 'logical_and_node' (logical_and): input 0 (entry 0) is uint8; the op supports bool");
  expect_rejection("logical_not", NULL, "float32", SHAPE1(4), NULL, SHAPE0, "bool", SHAPE1(4),
                   "node 1 'logical_not_node' (logical_not): input 0 (entry 0) is float32; the op supports bool");
  expect_rejection("floor_mod", NULL, "float32", SHAPE1(4), "float32", SHAPE1(4), "float32", SHAPE1(4),
                   "node 2 'floor_mod_node' (floor_mod): input 0 (entry 0) is float32; the op supports int32");
  expect_rejection("prelu", NULL, "float32", SHAPE1(13), "float32", SHAPE2(5, 13), "float32", SHAPE2(5, 13),
                   "node 2 'prelu_node' (prelu): the slope (input 1) shaped [5, 13] does not broadcast to the data "
                   "(input 0) shaped [13]");
  expect_rejection("prelu", NULL, "float32", SHAPE2(3, 1), "float32", SHAPE1(4), "float32", SHAPE2(3, 4),
                   "node 2 'prelu_node' (prelu): the slope (input 1) shaped [4] does not broadcast to the data "
                   "(input 0) shaped [3, 1]");
  expect_rejection("isinf", "\"detect_positive\": \"maybe\"", "float32", SHAPE1(4), NULL, SHAPE0, "bool", SHAPE1(4),
                   "node 1 'isinf_node' (isinf): attr 'detect_positive' = \"maybe\"");
  expect_rejection("elu", "\"gamma\": \"1\"", "float32", SHAPE1(4), NULL, SHAPE0, "float32", SHAPE1(4),
                   "node 1 'elu_node' (elu): unknown attr 'gamma'");

  hgr_optest_t t;
  hgr_optest_init(&t, "where", NULL);
  hgr_optest_input(&t, "float32", 1, (int64_t[]){4});
  hgr_optest_input(&t, "float32", 1, (int64_t[]){4});
  hgr_optest_input(&t, "float32", 1, (int64_t[]){4});
  hgr_optest_output(&t, "float32", 1, (int64_t[]){4});
  ASSERT_STATUS(hgr_optest_create(hgr_optest_instance, hgr_optest_device, &t), HGR_STATUS_INVALID_ARGUMENT,
                "node 3 'where_node' (where): input 0 (entry 0) is float32; the op supports bool");
  hgr_optest_free(&t);
  hgr_optest_init(&t, "where", NULL);
  hgr_optest_input(&t, "bool", 1, (int64_t[]){4});
  hgr_optest_input(&t, "int32", 1, (int64_t[]){4});
  hgr_optest_input(&t, "float32", 1, (int64_t[]){4});
  hgr_optest_output(&t, "int32", 1, (int64_t[]){4});
  ASSERT_STATUS(hgr_optest_create(hgr_optest_instance, hgr_optest_device, &t), HGR_STATUS_INVALID_ARGUMENT,
                "node 3 'where_node' (where): input 2 (entry 2) is float32 but input 1 (entry 1) is int32");
  hgr_optest_free(&t);
  hgr_optest_init(&t, "where", NULL);
  hgr_optest_input(&t, "bool", 2, (int64_t[]){3, 1});
  hgr_optest_input(&t, "int32", 1, (int64_t[]){4});
  hgr_optest_input(&t, "int32", 1, (int64_t[]){5});
  hgr_optest_output(&t, "int32", 2, (int64_t[]){3, 4});
  ASSERT_STATUS(hgr_optest_create(hgr_optest_instance, hgr_optest_device, &t), HGR_STATUS_INVALID_ARGUMENT,
                "node 3 'where_node' (where): the broadcast of inputs 0 and 1 shaped [3, 4] and input 2 shaped [5] do "
                "not broadcast: 4 against 5 in dimension 1 from the right");
  hgr_optest_free(&t);
}

/* An output over an input that some work-item reads at another index than the one
 * it writes: the ops that are not elementwise, a broadcast input, a cast between
 * element sizes. */
static void in_place_is_refused_where_the_op_would_read_what_it_overwrote(void** state) {
  (void)state;
  hgr_optest_t t;
  hgr_optest_init(&t, "conv2d", NULL);
  hgr_optest_input(&t, "float32", 4, (int64_t[]){1, 3, 6, 6});
  hgr_optest_input(&t, "float32", 4, (int64_t[]){4, 3, 3, 3});
  hgr_optest_output(&t, "float32", 4, (int64_t[]){1, 4, 4, 4});
  t.alias_output = true;
  ASSERT_STATUS(hgr_optest_create(hgr_optest_instance, hgr_optest_device, &t), HGR_STATUS_INVALID_ARGUMENT,
                "node 2 'conv2d_node' (conv2d): output 0 (entry 2) shares storage 0 with input 0 (entry 0); the op "
                "cannot run in place");
  hgr_optest_free(&t);
  /* dense and softmax keep the element count, and still read whole rows */
  hgr_optest_init(&t, "dense", NULL);
  hgr_optest_input(&t, "float32", 2, (int64_t[]){4, 8});
  hgr_optest_input(&t, "float32", 2, (int64_t[]){8, 8});
  hgr_optest_output(&t, "float32", 2, (int64_t[]){4, 8});
  t.alias_output = true;
  t.alias_input = 1;
  ASSERT_STATUS(hgr_optest_create(hgr_optest_instance, hgr_optest_device, &t), HGR_STATUS_INVALID_ARGUMENT,
                "node 2 'dense_node' (dense): output 0 (entry 2) shares storage 1 with input 1 (entry 1); the op "
                "cannot run in place");
  hgr_optest_free(&t);
  hgr_optest_init(&t, "softmax", "\"axis\": \"-1\"");
  hgr_optest_input(&t, "float32", 2, (int64_t[]){3, 5});
  hgr_optest_output(&t, "float32", 2, (int64_t[]){3, 5});
  t.alias_output = true;
  ASSERT_STATUS(hgr_optest_create(hgr_optest_instance, hgr_optest_device, &t), HGR_STATUS_INVALID_ARGUMENT,
                "node 1 'softmax_node' (softmax): output 0 (entry 1) shares storage 0 with input 0 (entry 0); the op "
                "cannot run in place");
  hgr_optest_free(&t);
  /* a broadcast input, on either side */
  hgr_optest_init(&t, "add", NULL);
  hgr_optest_input(&t, "float32", 1, (int64_t[]){4});
  hgr_optest_input(&t, "float32", 2, (int64_t[]){3, 4});
  hgr_optest_output(&t, "float32", 2, (int64_t[]){3, 4});
  t.alias_output = true;
  ASSERT_STATUS(hgr_optest_create(hgr_optest_instance, hgr_optest_device, &t), HGR_STATUS_INVALID_ARGUMENT,
                "node 2 'add_node' (add): output 0 (entry 2) shares storage 0 with input 0 (entry 0); the op cannot "
                "run in place on an input of another element count or element size (input 0: 4 elements of 4 "
                "bytes, output 0: 12 elements of 4 bytes)");
  hgr_optest_free(&t);
  hgr_optest_init(&t, "multiply", NULL);
  hgr_optest_input(&t, "int32", 2, (int64_t[]){3, 4});
  hgr_optest_input(&t, "int32", 0, NULL);
  hgr_optest_output(&t, "int32", 2, (int64_t[]){3, 4});
  t.alias_output = true;
  t.alias_input = 1;
  ASSERT_STATUS(hgr_optest_create(hgr_optest_instance, hgr_optest_device, &t), HGR_STATUS_INVALID_ARGUMENT,
                "node 2 'multiply_node' (multiply): output 0 (entry 2) shares storage 1 with input 1 (entry 1); the "
                "op cannot run in place on an input of another element count or element size (input 1: 1 element "
                "of 4 bytes, output 0: 12 elements of 4 bytes)");
  hgr_optest_free(&t);
  /* a cast that changes the element size */
  hgr_optest_init(&t, "cast", "\"dtype\": \"float32\"");
  hgr_optest_input(&t, "int8", 1, (int64_t[]){4});
  hgr_optest_output(&t, "float32", 1, (int64_t[]){4});
  t.alias_output = true;
  ASSERT_STATUS(hgr_optest_create(hgr_optest_instance, hgr_optest_device, &t), HGR_STATUS_INVALID_ARGUMENT,
                "node 1 'cast_node' (cast): output 0 (entry 1) shares storage 0 with input 0 (entry 0); the op "
                "cannot run in place on an input of another element count or element size (input 0: 4 elements "
                "of 1 byte, output 0: 4 elements of 4 bytes)");
  hgr_optest_free(&t);
  /* a comparison: float32 in, bool out */
  hgr_optest_init(&t, "less", NULL);
  hgr_optest_input(&t, "float32", 1, (int64_t[]){4});
  hgr_optest_input(&t, "float32", 1, (int64_t[]){4});
  hgr_optest_output(&t, "bool", 1, (int64_t[]){4});
  t.alias_output = true;
  ASSERT_STATUS(hgr_optest_create(hgr_optest_instance, hgr_optest_device, &t), HGR_STATUS_INVALID_ARGUMENT,
                "node 2 'less_node' (less): output 0 (entry 2) shares storage 0 with input 0 (entry 0); the op "
                "cannot run in place on an input of another element count or element size (input 0: 4 elements "
                "of 4 bytes, output 0: 4 elements of 1 byte)");
  hgr_optest_free(&t);
}

int main(int argc, char** argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(float32_binary_ops_match_reference_in_every_kernel_variant),
      cmocka_unit_test(power_takes_negative_bases_with_integral_exponents),
      cmocka_unit_test(int32_binary_ops_match_reference_with_wraparound),
      cmocka_unit_test(broadcasting_corners_match_reference),
      cmocka_unit_test(empty_tensors_broadcast_without_reading),
      cmocka_unit_test(unary_ops_match_reference),
      cmocka_unit_test(maximum_and_minimum_of_nan_give_the_other_operand),
      cmocka_unit_test(unary_ops_follow_ieee_on_special_values),
      cmocka_unit_test(cast_matches_reference),
      cmocka_unit_test(cast_reference_saturates_and_truncates),
      cmocka_unit_test(prelu_matches_reference_in_every_kernel_variant),
      cmocka_unit_test(comparisons_match_reference_with_bool_results),
      cmocka_unit_test(logical_ops_match_reference),
      cmocka_unit_test(isnan_isinf_and_logical_not_match_reference),
      cmocka_unit_test(round_takes_halves_to_even),
      cmocka_unit_test(where_matches_reference_with_three_way_broadcast),
      cmocka_unit_test(binary_ops_reject_bad_shapes_dtypes_and_attrs),
      cmocka_unit_test(unary_ops_reject_bad_shapes_dtypes_and_attrs),
      cmocka_unit_test(cast_rejects_bad_dtypes_shapes_and_attrs),
      cmocka_unit_test(comparisons_where_prelu_and_logical_ops_reject_bad_inputs),
      cmocka_unit_test(elementwise_ops_run_in_place),
      cmocka_unit_test(in_place_is_refused_where_the_op_would_read_what_it_overwrote),
  };
  return hgr_optest_main(argc, argv, "ops_elementwise", tests, COUNT(tests));
}
