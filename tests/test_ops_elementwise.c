/* Elementwise ops (binary with broadcasting, unary, cast) against the plain-C
 * references of tests/ref_elementwise.c on random data (argument: a device spec).
 *
 * Tolerances. An ulp of a float32 value v is at most ULP * |v| (ULP = 2^-23), so an
 * op that OpenCL 1.2 (full profile, section 7.4) allows N ulp from the exact result
 * is compared with rtol = (N + 1) * ULP: N for the device, 1/2 for rounding the
 * reference (computed in double, or exactly in float) and 1/2 for measuring ulps at
 * the exact value rather than the rounded one.
 *   exact: add, subtract, multiply, maximum, minimum (float32 and int32), relu,
 *          leaky_relu and clip (the reference rounds x * alpha in float32 too),
 *          abs, negative, cast
 *   divide 2.5 ulp; exp, log, sqrt 3 ulp; rsqrt 2 ulp; tanh 5 ulp; erf, power 16 ulp
 *   sigmoid = 1 / (1 + exp(-x)): exp's 3 ulp, 1/2 for the sum and 2.5 for the
 *          division, so 6 ulp; compared at 7 + 1 ulp
 *   gelu = 0.5 x erfc(-x / sqrt 2): erfc's 16 ulp plus the argument's rounding
 *          (1 ulp) amplified by erfc's condition number, 2 z^2 + 1 <= 37 for
 *          |x| <= 6 (z = x / sqrt 2), plus 1/2 for the product: 54 ulp; compared
 *          at 64 ulp on x in [-6, 6]
 * Input domains keep the ops defined: log, sqrt, rsqrt take positive inputs;
 * power takes a positive base, or integral exponents with any base.
 *
 * In place (TVM's in-place ops): every op again with its output over an input, and
 * the refusals of outputs over inputs that a work-item reads at other indices.
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
  } table[] = {{"divide", 2.5}, {"exp", 3},  {"log", 3},   {"sqrt", 3},     {"rsqrt", 2},
               {"tanh", 5},     {"erf", 16}, {"power", 16}, {"sigmoid", 7}, {"gelu", 63}};
  for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); ++i)
    if (!strcmp(op, table[i].op)) return (table[i].ulps + 1) * ULP;
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

static const char* const float_binary_ops[] = {"add", "subtract", "multiply", "divide", "maximum", "minimum", "power"};
static const char* const int_binary_ops[] = {"add", "subtract", "multiply", "maximum", "minimum"};
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
  hgr_optest_tolerance(&t, op_rtol(op), 0);
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
  if (!strcmp(from, "int32")) {
    fill_ints(&t.inputs[0], &rng, 0); /* the whole range: above 2^24 int32 -> float32 rounds */
  } else {
    hgr_optest_fill(&t.inputs[0], &rng, -1000.0f, 1000.0f);
    /* integers, halves and values out of int32's range, which saturate */
    float* v = x;
    for (uint64_t i = 0; i < t.inputs[0].count; i += 5) v[i] = roundf(v[i]) + (i % 10 ? 0.5f : 0.0f);
    static const float edges[] = {-0.75f, 0.75f, 2147483520.0f, -2147483648.0f, 3e9f, -3e9f, INFINITY, NAN};
    for (uint64_t i = 0; i < t.inputs[0].count && i < COUNT(edges); ++i) v[7 * i % t.inputs[0].count] = edges[i];
  }
  assert_true(hgr_ref_cast(from, x, to, y, t.inputs[0].count));
  hgr_optest_check(hgr_optest_instance, hgr_optest_device, &t);
  hgr_optest_free(&t);
}

static void check_cast_case(const char* from, const char* to, shape_t shape, uint64_t seed) {
  check_cast(from, to, shape, seed, false);
}

static void cast_matches_reference(void** state) {
  (void)state;
  static const char* const pairs[][2] = {
      {"float32", "int32"}, {"int32", "float32"}, {"float32", "float32"}, {"int32", "int32"}};
  const shape_t small[] = {SHAPE0, SHAPE1(7)};
  for (size_t p = 0; p < COUNT(pairs); ++p) {
    check_cast_case(pairs[p][0], pairs[p][1], SHAPE2(3, 67), 600 + 10 * p);
    check_cast_case(pairs[p][0], pairs[p][1], small[p % 2], 601 + 10 * p);
    if (!simulator()) check_cast_case(pairs[p][0], pairs[p][1], SHAPE1(65537), 602 + 10 * p);
  }
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
  static const char* const pairs[][2] = {
      {"float32", "int32"}, {"int32", "float32"}, {"float32", "float32"}, {"int32", "int32"}};
  for (size_t p = 0; p < COUNT(pairs); ++p) check_cast(pairs[p][0], pairs[p][1], SHAPE2(3, 67), 1100 + p, true);
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
                   "node 1 'cast_node' (cast): attr 'dtype' (the output's dtype: float32 or int32) is required");
  expect_rejection("cast", "\"dtype\": \"float16\"", "float32", SHAPE1(4), NULL, SHAPE0, "float16", SHAPE1(4),
                   "node 1 'cast_node' (cast): attr 'dtype' = \"float16\" is not supported");
  expect_rejection("cast", "\"dtype\": \"int32\"", "float32", SHAPE1(4), NULL, SHAPE0, "float32", SHAPE1(4),
                   "node 1 'cast_node' (cast): output 0 (entry 1) should be int32 [4], the graph says float32 [4]");
  expect_rejection("cast", "\"dtype\": \"float32\"", "int64", SHAPE1(4), NULL, SHAPE0, "float32", SHAPE1(4),
                   "node 1 'cast_node' (cast): input 0 (entry 0) is int64; the op supports float32 and int32");
  expect_rejection("cast", "\"dtype\": \"float32\"", "int32", SHAPE1(4), NULL, SHAPE0, "float32", SHAPE2(2, 2),
                   "node 1 'cast_node' (cast): output 0 (entry 1) should be shaped [4], the graph says [2, 2]");
  expect_rejection("cast", "\"dtype\": \"int32\", \"to\": \"int32\"", "float32", SHAPE1(4), NULL, SHAPE0, "int32",
                   SHAPE1(4), "node 1 'cast_node' (cast): unknown attr 'to'");
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
      cmocka_unit_test(binary_ops_reject_bad_shapes_dtypes_and_attrs),
      cmocka_unit_test(unary_ops_reject_bad_shapes_dtypes_and_attrs),
      cmocka_unit_test(cast_rejects_bad_dtypes_shapes_and_attrs),
      cmocka_unit_test(elementwise_ops_run_in_place),
      cmocka_unit_test(in_place_is_refused_where_the_op_would_read_what_it_overwrote),
  };
  return hgr_optest_main(argc, argv, "ops_elementwise", tests, COUNT(tests));
}
