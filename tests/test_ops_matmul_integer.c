/* matmul_integer and dequantize_matmul against the plain-C references
 * (tests/ref_quantize.c) on random data (argument: a device spec).
 * matmul_integer: every pair of 8-bit operand dtypes, int32 and scaled float32
 * outputs, zero points and scales per tensor and per column, depths with and
 * without a tail past the kernel's 8 (and none), float lanes and (past a depth of
 * 2071) int32 lanes, blocks cut by the ends of the rows and columns, leading dims,
 * the extremes of each dtype over a long depth; int32 compared exactly, float32
 * within a rounding. dequantize_matmul, each case with both blocks (6 x 16 and
 * 8 x 32, forced as tile candidates): both weight dtypes, zero points and scales
 * per tensor and per column, with and without a bias, strips of columns whole,
 * cut by n and narrower than the block, junk in the last panel's padding, leading
 * dims, no depth, no rows; within float32 sums' rounding. Then each op's refusals. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optest.h"
#include "ref_quantize.h"

static void range_of(const char* dtype, int64_t* lowest, int64_t* highest) {
  bool is_unsigned = !strcmp(dtype, "uint8");
  *lowest = is_unsigned ? 0 : -128;
  *highest = is_unsigned ? 255 : 127;
}

static int64_t draw(hgr_test_rng_t* rng, const char* dtype) {
  int64_t lowest, highest;
  range_of(dtype, &lowest, &highest);
  return lowest + (int64_t)hgr_test_rng_below(rng, (uint32_t)(highest - lowest + 1));
}

typedef struct case_t {
  const char *ta, *tb;
  int32_t lead;     /* leading dims of a: 0 ([m, k]) or 2 ([2, m / 2, k]) */
  int64_t m, n, k;
  bool per_column;  /* b's zero point and the scale per column */
  bool scaled;      /* float32 output */
  bool extremes;    /* a and b at their dtype's ends, zero points at the other ends */
} case_t;

static void check_case(hgr_test_rng_t* rng, const case_t* c) {
  hgr_optest_t t;
  hgr_optest_init(&t, "matmul_integer", NULL);
  int64_t a_shape[3] = {2, c->m / 2, c->k}, a_flat[2] = {c->m, c->k};
  int64_t out_shape[3] = {2, c->m / 2, c->n}, out_flat[2] = {c->m, c->n};
  int32_t a_ndim = c->lead ? 3 : 2;
  hgr_optest_input(&t, c->ta, a_ndim, c->lead ? a_shape : a_flat);
  hgr_optest_input(&t, c->tb, 2, (int64_t[]){c->n, c->k});
  hgr_optest_input(&t, c->ta, 0, NULL);
  int64_t column[1] = {c->n};
  hgr_optest_input(&t, c->tb, c->per_column ? 1 : 0, column);
  float* scale = c->scaled ? hgr_optest_input(&t, "float32", c->per_column ? 1 : 0, column) : NULL;
  hgr_optest_output(&t, c->scaled ? "float32" : "int32", a_ndim, c->lead ? out_shape : out_flat);
  uint64_t na = (uint64_t)(c->m * c->k), nb = (uint64_t)(c->n * c->k), nz = c->per_column ? (uint64_t)c->n : 1;
  int64_t* a = calloc(na + 1, sizeof(int64_t));
  int64_t* b = calloc(nb + 1, sizeof(int64_t));
  int64_t* zb = calloc(nz, sizeof(int64_t));
  int64_t* out = calloc((uint64_t)(c->m * c->n) + 1, sizeof(int64_t));
  assert_true(a && b && zb && out);
  int64_t lo_a, hi_a, lo_b, hi_b;
  range_of(c->ta, &lo_a, &hi_a);
  range_of(c->tb, &lo_b, &hi_b);
  for (uint64_t i = 0; i < na; ++i) hgr_optest_set_int(&t.inputs[0], i, a[i] = c->extremes ? hi_a : draw(rng, c->ta));
  for (uint64_t i = 0; i < nb; ++i)
    hgr_optest_set_int(&t.inputs[1], i, b[i] = c->extremes ? (i % 2 ? hi_b : lo_b) : draw(rng, c->tb));
  int64_t za = c->extremes ? lo_a : draw(rng, c->ta);
  hgr_optest_set_int(&t.inputs[2], 0, za);
  for (uint64_t j = 0; j < nz; ++j) {
    hgr_optest_set_int(&t.inputs[3], j, zb[j] = c->extremes ? (j % 2 ? lo_b : hi_b) : draw(rng, c->tb));
    if (scale) scale[j] = hgr_test_rng_float(rng, 1e-4f, 0.1f);
  }
  ref_matmul_integer(a, b, za, zb, c->per_column ? 1 : 0, c->m, c->n, c->k, out);
  for (int64_t i = 0; i < c->m; ++i)
    for (int64_t j = 0; j < c->n; ++j) {
      uint64_t e = (uint64_t)(i * c->n + j);
      if (scale) ((float*)t.outputs[0].data)[e] = (float)out[e] * scale[c->per_column ? j : 0];
      else hgr_optest_set_int(&t.outputs[0], e, out[e]);
    }
  if (scale) hgr_optest_tolerance(&t, 1.2e-7, 0);
  hgr_optest_check(hgr_optest_instance, hgr_optest_device, &t);
  hgr_optest_free(&t);
  free(a);
  free(b);
  free(zb);
  free(out);
}

static const char* const byte_types[] = {"uint8", "int8"};

static void matmul_integer_matches_reference(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 80);
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb)
      for (int scaled = 0; scaled < 2; ++scaled) {
        const char *a = byte_types[ta], *b = byte_types[tb];
        const case_t cases[] = {
            {a, b, 0, 1, 1, 1, false, scaled, false},   /* one element */
            {a, b, 0, 5, 7, 37, true, scaled, false},   /* four steps of 8 and a tail of 5; blocks cut */
            {a, b, 0, 8, 8, 32, false, scaled, false},  /* whole blocks, no tail */
            {a, b, 2, 6, 9, 20, true, scaled, false},   /* leading dims */
            {a, b, 0, 3, 5, 0, true, scaled, false},    /* no depth: zeros */
            {a, b, 0, 0, 4, 16, false, scaled, false},  /* no rows */
            {a, b, 0, 4, 6, 333, true, scaled, true},   /* the extremes over a long depth */
            {a, b, 0, 5, 6, 2100, true, scaled, false}, /* past float lanes: int32 lanes */
            {a, b, 0, 5, 6, 2100, true, scaled, true},  /* their extremes */
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) check_case(&rng, &cases[i]);
      }
  if (!hgr_optest_is_simulator(hgr_optest_device)) { /* a transformer's projection */
    const case_t big[] = {{"uint8", "int8", 2, 128, 384, 384, true, true, false},
                          {"uint8", "int8", 0, 64, 96, 1536, false, false, false}};
    for (size_t i = 0; i < sizeof(big) / sizeof(big[0]); ++i) check_case(&rng, &big[i]);
  }
}

typedef struct dq_case_t {
  const char* tb;
  int32_t lead;    /* leading dims of a: 0 ([m, k]) or 2 ([2, m / 2, k]) */
  int64_t m, k, n;
  bool per_column; /* b's zero point and the scale per column */
  bool biased;
} dq_case_t;

/* block: the tile candidate (0: 6 x 16, 1: 8 x 32). b goes in panels of 32 columns
 * [ceil(n / 32), k, 32], the padding filled with junk. */
static void check_dequantize_case(hgr_test_rng_t* rng, const dq_case_t* c, uint32_t block) {
  hgr_optest_t t;
  char attrs[48];
  snprintf(attrs, sizeof(attrs), "\"units\": \"%lld\"", (long long)c->n);
  hgr_optest_init(&t, "dequantize_matmul", attrs);
  t.force_candidate = true;
  t.candidate = block;
  int64_t panel_count = (c->n + 31) / 32;
  int64_t a_shape[3] = {2, c->m / 2, c->k}, a_flat[2] = {c->m, c->k};
  int64_t out_shape[3] = {2, c->m / 2, c->n}, out_flat[2] = {c->m, c->n};
  int32_t a_ndim = c->lead ? 3 : 2;
  float* a = hgr_optest_input(&t, "float32", a_ndim, c->lead ? a_shape : a_flat);
  hgr_optest_input(&t, c->tb, 3, (int64_t[]){panel_count, c->k, 32});
  int64_t column[1] = {c->n};
  hgr_optest_input(&t, c->tb, c->per_column ? 1 : 0, column);
  float* scale = hgr_optest_input(&t, "float32", c->per_column ? 1 : 0, column);
  float* bias = c->biased ? hgr_optest_input(&t, "float32", 1, column) : NULL;
  float* out = hgr_optest_output(&t, "float32", a_ndim, c->lead ? out_shape : out_flat);
  hgr_optest_fill(&t.inputs[0], rng, -1, 1);
  if (bias) hgr_optest_fill(&t.inputs[4], rng, -1, 1);
  uint64_t nb = (uint64_t)(c->k * c->n), nz = c->per_column ? (uint64_t)c->n : 1;
  int64_t* b = calloc(nb + 1, sizeof(int64_t));
  int64_t* zb = calloc(nz, sizeof(int64_t));
  assert_true(b && zb);
  for (uint64_t i = 0; i < nb; ++i) b[i] = draw(rng, c->tb);
  /* b[l, j] at [j / 32, l, j % 32]; the padding's junk is never stored */
  for (uint64_t i = 0; i < (uint64_t)(panel_count * c->k * 32); ++i) {
    uint64_t j = i / (uint64_t)(c->k * 32) * 32 + i % 32, l = i / 32 % (uint64_t)c->k;
    hgr_optest_set_int(&t.inputs[1], i, j < (uint64_t)c->n ? b[l * (uint64_t)c->n + j] : draw(rng, c->tb));
  }
  for (uint64_t j = 0; j < nz; ++j) {
    hgr_optest_set_int(&t.inputs[2], j, zb[j] = draw(rng, c->tb));
    scale[j] = hgr_test_rng_float(rng, 1e-3f, 0.1f);
  }
  ref_dequantize_matmul(a, b, zb, c->per_column ? 1 : 0, scale, c->per_column ? 1 : 0, bias, c->m, c->n, c->k, out);
  /* float32 sums of k products of |a| <= 1 and |b - zb| <= 255, times a scale <= 0.1 */
  hgr_optest_tolerance(&t, 1e-5, 1e-6 * (double)c->k * 255.0 * 0.1 + 1e-6);
  hgr_optest_check(hgr_optest_instance, hgr_optest_device, &t);
  hgr_optest_free(&t);
  free(b);
  free(zb);
}

static void dequantize_matmul_matches_reference(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 81);
  for (int tb = 0; tb < 2; ++tb)
    for (int per_column = 0; per_column < 2; ++per_column) {
      const char* b = byte_types[tb];
      const dq_case_t cases[] = {
          {b, 0, 1, 1, 1, per_column, false},    /* one element: gathered columns */
          {b, 0, 7, 37, 5, per_column, true},    /* fewer columns than a strip; rows past a block of 6 */
          {b, 0, 13, 20, 16, per_column, false}, /* one whole strip */
          {b, 0, 6, 33, 40, per_column, true},   /* a last strip shifted left */
          {b, 2, 10, 9, 17, per_column, true},   /* leading dims; a strip shifted by one */
          {b, 0, 17, 12, 70, per_column, true},  /* whole strips of either width, then a shifted one */
          {b, 0, 3, 0, 18, per_column, true},    /* no depth: the bias */
          {b, 0, 0, 4, 16, per_column, false},   /* no rows */
      };
      for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i)
        for (uint32_t block = 0; block < 2; ++block) check_dequantize_case(&rng, &cases[i], block);
    }
  if (!hgr_optest_is_simulator(hgr_optest_device)) { /* a transformer's projection */
    const dq_case_t big = {"int8", 2, 128, 384, 1536, true, true};
    for (uint32_t block = 0; block < 2; ++block) check_dequantize_case(&rng, &big, block);
  }
}

#define ASSERT_REJECTED(t, ...)                                                                   \
  ASSERT_STATUS(hgr_optest_create(hgr_optest_instance, hgr_optest_device, (t)), HGR_STATUS_INVALID_ARGUMENT, \
                __VA_ARGS__)

typedef struct operand_t {
  const char* dtype;
  int32_t ndim;
  int64_t dims[2];
} operand_t;

/* One refused matmul_integer node of inputs in[0..count) and output out. */
static void expect_rejection(const operand_t* in, uint32_t count, operand_t out, const char* message) {
  hgr_optest_t t;
  hgr_optest_init(&t, "matmul_integer", NULL);
  for (uint32_t i = 0; i < count; ++i) hgr_optest_input(&t, in[i].dtype, in[i].ndim, in[i].dims);
  hgr_optest_output(&t, out.dtype, out.ndim, out.dims);
  ASSERT_REJECTED(&t, message);
  hgr_optest_free(&t);
}

static void bad_dtypes_and_shapes_are_refused(void** state) {
  (void)state;
  const operand_t a = {"uint8", 2, {4, 6}}, b = {"int8", 2, {3, 6}}, za = {"uint8", 0, {0}}, zb = {"int8", 0, {0}};
  const operand_t out = {"int32", 2, {4, 3}}, scale = {"float32", 1, {3}};
  expect_rejection((operand_t[]){{"float32", 2, {4, 6}}, b, za, zb}, 4, out,
                   "node 4 'matmul_integer_node' (matmul_integer): input 0 (entry 0) is float32; the op takes uint8 "
                   "and int8");
  expect_rejection((operand_t[]){a, {"int8", 2, {6, 3}}, za, zb}, 4, out,
                   "input 0 (entry 0) is shaped [4, 6] and input 1 (entry 1) [6, 3]; the op takes [..., K] and [N, K]");
  expect_rejection((operand_t[]){a, b, {"int8", 0, {0}}, zb}, 4, out,
                   "input 2 (a's zero point, entry 2) is int8 []; it is one element of input 0's dtype");
  expect_rejection((operand_t[]){a, b, za, {"int8", 1, {6}}}, 4, out,
                   "input 3 (b's zero point, entry 3) is int8 [6]; it is input 1's dtype, one element or [3]");
  expect_rejection((operand_t[]){a, b, za, zb, {"float32", 1, {4}}}, 5, (operand_t){"float32", 2, {4, 3}},
                   "input 4 (the scale, entry 4) is float32 [4]; it is float32, one element or [3]");
  expect_rejection((operand_t[]){a, b, za, zb, scale}, 5, out,
                   "output 0 (entry 5) should be float32 [4, 3], the graph says int32 [4, 3]");
  expect_rejection((operand_t[]){{"uint8", 2, {1, 40000}}, {"int8", 2, {1, 40000}}, za, zb}, 4,
                   (operand_t){"int32", 2, {1, 1}},
                   "the depth K = 40000 is 33025 or more; the int32 sums of 8-bit products could overflow");
}

static void dequantize_matmul_refuses_bad_inputs(void** state) {
  (void)state;
  const struct {
    const char *a, *b, *zb, *scale, *bias;
    int64_t k, zb_count, scale_count, bias_count; /* counts: 0 a scalar, -1 none (bias) */
    const char* message;
  } cases[] = {
      {"uint8", "int8", "int8", "float32", NULL, 6, 0, 0, -1,
       "node 4 'dequantize_matmul_node' (dequantize_matmul): input 0 (entry 0) is uint8; the op takes float32"},
      {"float32", "int16", "int16", "float32", NULL, 6, 0, 0, -1,
       "input 1 (entry 1) is int16; the op takes uint8 and int8"},
      {"float32", "int8", "int8", "float32", NULL, 5, 0, 0, -1,
       "input 0 (entry 0) is shaped [4, 6] and input 1 (entry 1) [1, 5, 32]; the op takes [..., K] and panels [P, "
       "K, 32]"},
      {"float32", "int8", "uint8", "float32", NULL, 6, 0, 0, -1,
       "input 2 (b's zero point, entry 2) is uint8 []; it is input 1's dtype, one element or [3]"},
      {"float32", "int8", "int8", "float32", NULL, 6, 0, 6, -1,
       "input 3 (the scale, entry 3) is float32 [6]; it is float32, one element or [3]"},
      {"float32", "int8", "int8", "float32", "float32", 6, 0, 3, 4,
       "input 4 (the bias, entry 4) is float32 [4]; it is float32 [3]"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    hgr_optest_t t;
    hgr_optest_init(&t, "dequantize_matmul", "\"units\": \"3\"");
    hgr_optest_input(&t, cases[i].a, 2, (int64_t[]){4, 6});
    hgr_optest_input(&t, cases[i].b, 3, (int64_t[]){1, cases[i].k, 32});
    hgr_optest_input(&t, cases[i].zb, cases[i].zb_count ? 1 : 0, (int64_t[]){cases[i].zb_count});
    hgr_optest_input(&t, cases[i].scale, cases[i].scale_count ? 1 : 0, (int64_t[]){cases[i].scale_count});
    if (cases[i].bias) hgr_optest_input(&t, cases[i].bias, 1, (int64_t[]){cases[i].bias_count});
    hgr_optest_output(&t, "float32", 2, (int64_t[]){4, 3});
    ASSERT_REJECTED(&t, cases[i].message);
    hgr_optest_free(&t);
  }
}

/* b in panels whose attr units does not fit them, and b not in panels */
static void dequantize_matmul_refuses_units_that_do_not_fit(void** state) {
  (void)state;
  const struct {
    int32_t ndim;
    int64_t dims[3];
    const char* units;
    const char* message;
  } cases[] = {
      {3, {1, 6, 32}, "40", "input 1 (entry 1) is shaped [1, 6, 32] with attr 'units' = 40; the op takes panels [P, "
                            "K, 32] with units N, 32 (P - 1) < N <= 32 P"},
      {3, {2, 6, 32}, "32", "input 1 (entry 1) is shaped [2, 6, 32] with attr 'units' = 32"},
      {3, {1, 6, 16}, "3", "input 1 (entry 1) is shaped [1, 6, 16] with attr 'units' = 3"},
      {2, {6, 3}, "3", "input 1 (entry 1) is shaped [6, 3] with attr 'units' = 3"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    char attrs[48];
    snprintf(attrs, sizeof(attrs), "\"units\": \"%s\"", cases[i].units);
    hgr_optest_t t;
    hgr_optest_init(&t, "dequantize_matmul", attrs);
    hgr_optest_input(&t, "float32", 2, (int64_t[]){4, 6});
    hgr_optest_input(&t, "int8", cases[i].ndim, cases[i].dims);
    hgr_optest_input(&t, "int8", 0, NULL);
    hgr_optest_input(&t, "float32", 0, NULL);
    hgr_optest_output(&t, "float32", 2, (int64_t[]){4, 3});
    ASSERT_REJECTED(&t, cases[i].message);
    hgr_optest_free(&t);
  }
}

int main(int argc, char** argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(matmul_integer_matches_reference),
      cmocka_unit_test(bad_dtypes_and_shapes_are_refused),
      cmocka_unit_test(dequantize_matmul_matches_reference),
      cmocka_unit_test(dequantize_matmul_refuses_bad_inputs),
      cmocka_unit_test(dequantize_matmul_refuses_units_that_do_not_fit),
  };
  return hgr_optest_main(argc, argv, "ops_matmul_integer", tests, sizeof(tests) / sizeof(tests[0]));
}
