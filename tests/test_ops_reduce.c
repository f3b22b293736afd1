/* sum, mean, max and min against the references in tests/ref_norm.c on random data
 * (argument: a device spec).
 *
 * Tolerances: max and min are exact (they pick an input). int32 sums are exact
 * (modulo 2^32). For a float32 sum of n elements, |got - expected| <= 1e-6 * n *
 * max|x|: each work-item's compensated (Kahan) sum is within 2u * sum|x| + O(n u^2)
 * of exact, and at most 8 tree levels add 8u * sum|x| more (u = 2^-24), so the
 * error stays under 1e-6 * sum|x| <= 1e-6 * n * max|x|; the expected value itself is
 * a double sum rounded once. A mean divides that by n and adds one rounding: atol
 * 1e-6 * max|x| plus rtol 1e-6. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "optest.h"
#include "ref_norm.h"

static const char* const op_names[] = {"sum", "mean", "max", "min"};

#define ABSENT (-1) /* axis_count: no axis attr */

typedef struct reduce_case_t {
  int32_t ndim;
  int64_t shape[4];
  int32_t axis_count; /* ABSENT: no attr; 0: "[]" */
  int64_t axes[4];
  bool exclude;
  bool large;
} reduce_case_t;

static const reduce_case_t cases[] = {
    {1, {7}, 1, {0}, false, false},
    {1, {1}, 1, {0}, false, false},
    {0, {0}, ABSENT, {0}, false, false},          /* a scalar */
    {2, {3, 1}, 1, {1}, false, false},            /* reduces an extent of 1: a copy */
    {3, {2, 3, 4}, 1, {0}, false, false},         /* first axis */
    {3, {2, 3, 4}, 1, {1}, false, false},         /* middle axis */
    {3, {2, 3, 4}, 1, {-1}, false, false},        /* last axis, negative */
    {3, {2, 3, 4}, 2, {0, 2}, false, false},      /* separated axes: the general kernel */
    {3, {2, 3, 4}, 2, {-1, 0}, false, false},
    {4, {2, 3, 4, 5}, 2, {2, 1}, false, false},   /* adjacent axes merge */
    {4, {2, 3, 4, 5}, 2, {1, 3}, false, false},
    {4, {2, 3, 4, 5}, 2, {0, 2}, true, false},    /* exclude: reduces 1 and 3 */
    {4, {2, 3, 4, 5}, 1, {3}, true, false},       /* exclude: reduces 0, 1, 2 */
    {3, {2, 3, 4}, 3, {0, 1, 2}, true, false},    /* exclude everything: reduces nothing */
    {3, {2, 3, 4}, ABSENT, {0}, false, false},    /* all axes */
    {3, {2, 3, 4}, 0, {0}, true, false},          /* "[]": all axes, exclude or not */
    {3, {3, 1, 5}, 2, {0, 2}, false, false},      /* merge across a dropped extent of 1 */
    {2, {3, 37}, 1, {-1}, false, false},          /* a work-group per row (32) */
    {2, {5, 70}, 1, {1}, false, false},           /* a work-group per row (64) */
    {3, {1, 40, 1}, 1, {1}, false, false},        /* rows once extents of 1 are dropped */
    {3, {2, 40, 3}, 1, {1}, false, false},        /* a work-item per column */
    {2, {3, 0}, 1, {1}, false, false},            /* over zero elements */
    {2, {0, 4}, 1, {1}, false, false},            /* no output */
    {2, {4099, 3}, 1, {0}, false, true},
    {2, {3, 4099}, 1, {1}, false, true},
    {2, {1000, 1000}, 1, {-1}, false, true},
    {3, {2, 1000, 3}, 1, {1}, false, true},
    {1, {1000003}, ABSENT, {0}, false, true},
    {3, {64, 513, 9}, 2, {0, 2}, false, true},
    {4, {8, 16, 33, 20}, 2, {1, 2}, true, true},  /* reduces 0 and 3 */
};
#define CASE_COUNT (sizeof(cases) / sizeof(cases[0]))

static void axis_attrs(const reduce_case_t* c, bool keepdims, char* buffer, size_t capacity) {
  int used = snprintf(buffer, capacity, "\"keepdims\": \"%s\", \"exclude\": \"%s\"", keepdims ? "True" : "False",
                      c->exclude ? "1" : "0");
  if (c->axis_count == ABSENT) return;
  used += snprintf(buffer + used, capacity - (size_t)used, ", \"axis\": \"[");
  for (int32_t k = 0; k < c->axis_count; ++k)
    used += snprintf(buffer + used, capacity - (size_t)used, "%s%lld", k ? ", " : "", (long long)c->axes[k]);
  snprintf(buffer + used, capacity - (size_t)used, "]\"");
}

static void check_reduce(const reduce_case_t* c, hgr_ref_reduce_op_t op, bool is_int, bool keepdims,
                         hgr_test_rng_t* rng) {
  char attrs[256];
  axis_attrs(c, keepdims, attrs, sizeof(attrs));
  bool reduced[4];
  assert_true(hgr_ref_reduce_axes(c->ndim, c->axis_count == ABSENT ? NULL : c->axes,
                                  c->axis_count == ABSENT ? 0 : c->axis_count, c->exclude, reduced));
  int64_t out_shape[4];
  int32_t out_ndim = hgr_ref_reduce_shape(c->ndim, c->shape, reduced, keepdims, out_shape);
  const char* dtype = is_int ? "int32" : "float32";
  hgr_optest_t t;
  hgr_optest_init(&t, op_names[op], attrs);
  void* x = hgr_optest_input(&t, dtype, c->ndim, c->shape);
  void* y = hgr_optest_output(&t, dtype, out_ndim, out_shape);
  hgr_optest_fill(&t.inputs[0], rng, -3, 5);
  if (is_int) {
    hgr_ref_reduce_i32(op, x, c->ndim, c->shape, reduced, y);
  } else {
    hgr_ref_reduce_f32(op, x, c->ndim, c->shape, reduced, y);
    double n = 1;
    for (int32_t d = 0; d < c->ndim; ++d)
      if (reduced[d]) n *= (double)c->shape[d];
    double max_abs = 5; /* the fill's bound */
    if (op == HGR_REF_SUM) hgr_optest_tolerance(&t, 0, 1e-6 * n * max_abs);
    else if (op == HGR_REF_MEAN) hgr_optest_tolerance(&t, 1e-6, 1e-6 * max_abs);
  }
  hgr_optest_check(hgr_optest_instance, hgr_optest_device, &t);
  hgr_optest_free(&t);
}

static void float_reductions_match_reference(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 51);
  bool simulator = hgr_optest_is_simulator(hgr_optest_device);
  /* Executors are slow to create on Oclgrind and rusticl (programs built each time,
   * a quarter second on Oclgrind): there, sum and max run on half the cases, mean
   * and min on the other half (the ops share one kernel body). */
  bool every_op = !simulator && !strstr(hgr_optest_device, "rusticl");
  for (size_t k = 0; k < CASE_COUNT; ++k) {
    if (cases[k].large && simulator) continue;
    for (int op = HGR_REF_SUM; op <= HGR_REF_MIN; ++op) {
      if (!every_op && (op % 2 != 0) != (k % 2 != 0)) continue;
      check_reduce(&cases[k], (hgr_ref_reduce_op_t)op, false, (k + (size_t)op / 2) % 2 == 1, &rng);
    }
  }
}

static void int_reductions_match_reference(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 52);
  static const hgr_ref_reduce_op_t ops[] = {HGR_REF_SUM, HGR_REF_MAX, HGR_REF_MIN};
  for (size_t k = 0; k < CASE_COUNT; ++k) {
    if (cases[k].large && hgr_optest_is_simulator(hgr_optest_device)) continue;
    /* One op per case keeps the executor count down; all three on each kernel kind. */
    check_reduce(&cases[k], ops[k % 3], true, k % 2 == 0, &rng);
  }
}

/* int32 sums wrap modulo 2^32, like Relay's int32 arithmetic. */
static void int_sums_wrap(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 53);
  int64_t shapes[2][2] = {{2, 9}, {2, 70}}; /* a work-item per row; a work-group per row */
  for (int s = 0; s < 2; ++s) {
    hgr_optest_t t;
    hgr_optest_init(&t, "sum", "\"axis\": \"1\"");
    int32_t* x = hgr_optest_input(&t, "int32", 2, shapes[s]);
    int32_t* y = hgr_optest_output(&t, "int32", 1, shapes[s]);
    /* In [2^29, 2^30): nine of them already pass 2^31. */
    for (uint64_t i = 0; i < t.inputs[0].count; ++i)
      x[i] = (int32_t)((hgr_test_rng_next(&rng) >> 35) + (1u << 29));
    bool reduced[2] = {false, true};
    hgr_ref_reduce_i32(HGR_REF_SUM, x, 2, shapes[s], reduced, y);
    hgr_optest_check(hgr_optest_instance, hgr_optest_device, &t);
    hgr_optest_free(&t);
  }
}

/* NaN propagates through every op; an infinity survives the compensated sum. */
static void nan_and_inf_propagate(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 54);
  int64_t shapes[2][2] = {{3, 9}, {3, 70}};
  for (int s = 0; s < 2; ++s)
    for (int op = HGR_REF_SUM; op <= HGR_REF_MIN; ++op) {
      hgr_optest_t t;
      hgr_optest_init(&t, op_names[op], "\"axis\": \"-1\"");
      float* x = hgr_optest_input(&t, "float32", 2, shapes[s]);
      float* y = hgr_optest_output(&t, "float32", 1, shapes[s]);
      hgr_optest_fill(&t.inputs[0], &rng, -3, 5);
      int64_t len = shapes[s][1];
      x[len / 2] = NAN;            /* row 0 */
      x[len + 1] = INFINITY;       /* row 1 */
      x[2 * len + len - 1] = -INFINITY; /* row 2 */
      bool reduced[2] = {false, true};
      hgr_ref_reduce_f32((hgr_ref_reduce_op_t)op, x, 2, shapes[s], reduced, y);
      /* max and min exact; sums as in float_reductions_match_reference */
      if (op == HGR_REF_SUM) hgr_optest_tolerance(&t, 0, 1e-6 * (double)len * 5);
      else if (op == HGR_REF_MEAN) hgr_optest_tolerance(&t, 1e-6, 1e-6 * 5);
      hgr_optest_check(hgr_optest_instance, hgr_optest_device, &t);
      hgr_optest_free(&t);
    }
}

/* The row kernel on a device that allows work-groups of only 1, 2 (through the
 * work-item limit) and 3 work-items: the test rewrites the limits the instance
 * reports for its device, which the executor plans from. */
static void rows_work_with_tiny_work_groups(void** state) {
  (void)state;
  hgr_device_info_t* info = hgr_optest_device_info();
  const hgr_device_info_t saved = *info;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 55);
  static const size_t groups[] = {1, 0, 3}, items[] = {0, 2, 0};
  const reduce_case_t c = {2, {3, 37}, 1, {1}, false, false};
  for (size_t k = 0; k < 3; ++k) {
    info->max_work_group_size = groups[k] ? groups[k] : saved.max_work_group_size;
    info->max_work_item_sizes[0] = items[k] ? items[k] : saved.max_work_item_sizes[0];
    check_reduce(&c, (hgr_ref_reduce_op_t)k, false, false, &rng);
    check_reduce(&c, HGR_REF_MIN, true, true, &rng);
  }
  *info = saved;
}

/* ---- errors ------------------------------------------------------------------------- */

static void expect_error(const char* op, const char* attrs, const char* in_dtype, int32_t out_ndim,
                         const int64_t* out_shape, const char* out_dtype, const char* message) {
  int64_t shape[3] = {2, 3, 4};
  hgr_optest_t t;
  hgr_optest_init(&t, op, attrs);
  hgr_optest_input(&t, in_dtype, 3, shape);
  hgr_optest_output(&t, out_dtype, out_ndim, out_shape);
  char prefix[64];
  snprintf(prefix, sizeof(prefix), "node 1 '%s_node' (%s): ", op, op);
  ASSERT_STATUS(hgr_optest_create(hgr_optest_instance, hgr_optest_device, &t), HGR_STATUS_INVALID_ARGUMENT, prefix,
                message);
  hgr_optest_free(&t);
}

static void reductions_reject_bad_attrs_and_shapes(void** state) {
  (void)state;
  const int64_t s24[2] = {2, 4}, s214[3] = {2, 1, 4}, s23[2] = {2, 3};
  expect_error("sum", "\"axis\": \"3\"", "float32", 2, s24, "float32",
               "attr 'axis' = 3 is out of range for 3 dimensions");
  expect_error("mean", "\"axis\": \"[0, -4]\"", "float32", 1, s24 + 1, "float32",
               "attr 'axis' = -4 is out of range for 3 dimensions");
  expect_error("max", "\"axis\": \"[1, -2]\"", "float32", 2, s24, "float32",
               "attr 'axis' = \"[1, -2]\" names axis 1 twice");
  expect_error("min", "\"axis\": \"[2, 0, 2]\", \"exclude\": \"1\"", "float32", 1, s24 + 1, "float32",
               "attr 'axis' = \"[2, 0, 2]\" names axis 2 twice");
  expect_error("sum", "\"axis\": \"[1.5]\"", "float32", 2, s24, "float32",
               "attr 'axis' = \"[1.5]\" is not an int or a list of ints");
  expect_error("sum", "\"axis\": \"1\", \"keepdims\": \"yes\"", "float32", 3, s214, "float32",
               "attr 'keepdims' = \"yes\" is not a bool");
  expect_error("sum", "\"axis\": \"1\", \"exclude\": \"2\"", "float32", 2, s24, "float32",
               "attr 'exclude' = \"2\" is not a bool");
  expect_error("max", "\"axes\": \"1\"", "float32", 2, s24, "float32", "unknown attr 'axes'");
  /* keepdims keeps the reduced axis as 1 */
  expect_error("min", "\"axis\": \"1\", \"keepdims\": \"1\"", "float32", 2, s24, "float32",
               "output 0 (entry 1) should be shaped [2, 1, 4], the graph says [2, 4]");
  expect_error("sum", "\"axis\": \"1\"", "float32", 2, s23, "float32",
               "output 0 (entry 1) should be shaped [2, 4], the graph says [2, 3]");
  expect_error("mean", "\"axis\": \"1\"", "int32", 2, s24, "int32", "input 0 (entry 0) is int32");
  expect_error("sum", "\"axis\": \"1\"", "int32", 2, s24, "float32",
               "output 0 (entry 1) should be int32 [2, 4], the graph says float32 [2, 4]");
}

int main(int argc, char** argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(float_reductions_match_reference),
      cmocka_unit_test(int_reductions_match_reference),
      cmocka_unit_test(int_sums_wrap),
      cmocka_unit_test(nan_and_inf_propagate),
      cmocka_unit_test(rows_work_with_tiny_work_groups),
      cmocka_unit_test(reductions_reject_bad_attrs_and_shapes),
  };
  return hgr_optest_main(argc, argv, "ops_reduce", tests, sizeof(tests) / sizeof(tests[0]));
}
