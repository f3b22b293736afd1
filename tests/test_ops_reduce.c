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

static const char* const op_names[] = {"sum", "mean", "max", "min", "prod"};

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

/* prod over the small cases (every kernel kind, zero elements giving 1). float32:
 * values of magnitude in [0.5, 1.5) with random signs, so that no product of these
 * lengths (at most 120) leaves the normal range; each of the n multiplications
 * rounds by at most 2^-24 relative, so rtol 1e-5 bounds n * 2^-24 = 7.2e-6. int32
 * products wrap and are exact. */
static void products_match_reference(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 56);
  for (size_t k = 0; k < CASE_COUNT; ++k) {
    if (cases[k].large) continue;
    for (int is_int = 0; is_int < 2; ++is_int) {
      const reduce_case_t* c = &cases[k];
      bool keepdims = k % 2 == 1;
      char attrs[256];
      axis_attrs(c, keepdims, attrs, sizeof(attrs));
      bool reduced[4];
      assert_true(hgr_ref_reduce_axes(c->ndim, c->axis_count == ABSENT ? NULL : c->axes,
                                      c->axis_count == ABSENT ? 0 : c->axis_count, c->exclude, reduced));
      int64_t out_shape[4];
      int32_t out_ndim = hgr_ref_reduce_shape(c->ndim, c->shape, reduced, keepdims, out_shape);
      const char* dtype = is_int ? "int32" : "float32";
      hgr_optest_t t;
      hgr_optest_init(&t, "prod", attrs);
      void* x = hgr_optest_input(&t, dtype, c->ndim, c->shape);
      void* y = hgr_optest_output(&t, dtype, out_ndim, out_shape);
      if (is_int) {
        hgr_optest_fill(&t.inputs[0], &rng, -3, 5);
        hgr_ref_reduce_i32(HGR_REF_PROD, x, c->ndim, c->shape, reduced, y);
      } else {
        hgr_optest_fill(&t.inputs[0], &rng, 0.5f, 1.5f);
        float* xf = x;
        for (uint64_t i = 0; i < t.inputs[0].count; ++i)
          if (hgr_test_rng_next(&rng) & 1) xf[i] = -xf[i];
        hgr_ref_reduce_f32(HGR_REF_PROD, x, c->ndim, c->shape, reduced, y);
        hgr_optest_tolerance(&t, 1e-5, 1e-30);
      }
      hgr_optest_check(hgr_optest_instance, hgr_optest_device, &t);
      hgr_optest_free(&t);
    }
  }
}

/* ---- argmax, argmin, topk ----------------------------------------------------------- */

#define NO_AXIS 99

typedef struct axis_case_t {
  int32_t ndim;
  int64_t shape[4];
  int64_t axis; /* NO_AXIS: no attr (argmax/argmin: every element) */
} axis_case_t;

static const axis_case_t axis_cases[] = {
    {1, {1}, 0},          {1, {9}, 0},           {2, {3, 7}, -1},      {2, {6, 5}, 0},
    {3, {2, 5, 3}, 1},    {3, {2, 4, 6}, 2},     {4, {2, 3, 4, 5}, 1}, {3, {2, 5, 3}, NO_AXIS},
    {2, {4, 40}, 1},      {3, {1, 33, 2}, -2},
};
#define AXIS_CASE_COUNT (sizeof(axis_cases) / sizeof(axis_cases[0]))

static void view_of(const axis_case_t* c, int64_t* outer, int64_t* len, int64_t* inner) {
  int32_t axis = c->axis == NO_AXIS ? -1 : (int32_t)(c->axis < 0 ? c->axis + c->ndim : c->axis);
  *outer = *inner = 1;
  *len = 1;
  for (int32_t d = 0; d < c->ndim; ++d) {
    if (axis < 0) *len *= c->shape[d];
    else if (d < axis) *outer *= c->shape[d];
    else if (d > axis) *inner *= c->shape[d];
    else *len = c->shape[d];
  }
}

/* Values from a small set, so that rows hold ties: integers in [0, 4) (as floats
 * for float32), and with nan_every > 0 a NaN at every nan_every-th element. */
static void fill_with_ties(hgr_optest_tensor_t* tensor, hgr_test_rng_t* rng, bool is_int, uint64_t nan_every) {
  for (uint64_t i = 0; i < tensor->count; ++i) {
    int32_t v = (int32_t)(hgr_test_rng_next(rng) >> 62);
    if (is_int) ((int32_t*)tensor->data)[i] = v;
    else ((float*)tensor->data)[i] = nan_every && i % nan_every == nan_every - 1 ? NAN : (float)v;
  }
}

static void check_arg_reduce(const axis_case_t* c, bool is_max, bool is_int, bool keepdims, bool select_last,
                             uint64_t nan_every, hgr_test_rng_t* rng) {
  char attrs[256];
  int used = snprintf(attrs, sizeof(attrs), "\"keepdims\": \"%d\", \"select_last_index\": \"%s\"", keepdims,
                      select_last ? "True" : "False");
  if (c->axis != NO_AXIS)
    snprintf(attrs + used, sizeof(attrs) - (size_t)used, ", \"axis\": \"[%lld]\"", (long long)c->axis);
  int64_t out_shape[4];
  int32_t out_ndim = 0;
  int32_t axis = c->axis == NO_AXIS ? -1 : (int32_t)(c->axis < 0 ? c->axis + c->ndim : c->axis);
  for (int32_t d = 0; d < c->ndim; ++d)
    if (axis >= 0 && d != axis) out_shape[out_ndim++] = c->shape[d];
    else if (keepdims) out_shape[out_ndim++] = 1;
  hgr_optest_t t;
  hgr_optest_init(&t, is_max ? "argmax" : "argmin", attrs);
  void* x = hgr_optest_input(&t, is_int ? "int32" : "float32", c->ndim, c->shape);
  int32_t* y = hgr_optest_output(&t, "int32", out_ndim, out_shape);
  fill_with_ties(&t.inputs[0], rng, is_int, nan_every);
  int64_t outer, len, inner;
  view_of(c, &outer, &len, &inner);
  hgr_ref_arg_reduce(x, is_int, outer, len, inner, is_max, select_last, y);
  hgr_optest_check(hgr_optest_instance, hgr_optest_device, &t);
  hgr_optest_free(&t);
}

/* Exact (indices). Rows of values from {0, 1, 2, 3} tie on every extreme, so the
 * first-or-last index rule decides every output. */
static void argmax_and_argmin_match_reference_with_ties(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 57);
  for (size_t k = 0; k < AXIS_CASE_COUNT; ++k) {
    check_arg_reduce(&axis_cases[k], k % 2 == 0, k % 3 == 2, k % 4 == 1, k % 2 == 1, 0, &rng);
    check_arg_reduce(&axis_cases[k], k % 2 == 1, k % 3 == 0, k % 4 == 3, k % 2 == 0, 0, &rng);
  }
}

/* A NaN is the extreme of argmax and argmin, the first one or the last. */
static void argmax_and_argmin_pick_nan(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 58);
  const axis_case_t c = {2, {6, 11}, 1};
  for (int k = 0; k < 4; ++k) check_arg_reduce(&c, k < 2, false, false, k % 2 == 1, 4, &rng);
}

static void check_topk(const axis_case_t* c, int64_t k, bool ascend, bool is_int, uint64_t nan_every,
                       bool axis_attr, hgr_test_rng_t* rng) {
  char attrs[256];
  int used = snprintf(attrs, sizeof(attrs), "\"k\": \"%lld\", \"is_ascend\": \"%s\", \"ret_type\": \"both\"",
                      (long long)k, ascend ? "1" : "0");
  if (axis_attr) snprintf(attrs + used, sizeof(attrs) - (size_t)used, ", \"axis\": \"%lld\"", (long long)c->axis);
  int32_t axis = (int32_t)(c->axis < 0 ? c->axis + c->ndim : c->axis);
  int64_t out_shape[4];
  memcpy(out_shape, c->shape, sizeof(out_shape));
  out_shape[axis] = k;
  const char* dtype = is_int ? "int32" : "float32";
  hgr_optest_t t;
  hgr_optest_init(&t, "topk", attrs);
  void* x = hgr_optest_input(&t, dtype, c->ndim, c->shape);
  void* values = hgr_optest_output(&t, dtype, c->ndim, out_shape);
  int32_t* indices = hgr_optest_output(&t, "int32", c->ndim, out_shape);
  fill_with_ties(&t.inputs[0], rng, is_int, nan_every);
  int64_t outer, len, inner;
  view_of(c, &outer, &len, &inner);
  hgr_ref_topk(x, is_int, outer, len, inner, k, ascend, values, indices);
  hgr_optest_check(hgr_optest_instance, hgr_optest_device, &t);
  hgr_optest_free(&t);
}

/* Exact. Ties everywhere (values from {0, 1, 2, 3}): equal values must come in index
 * order; k from 1 to the whole axis; the default axis -1 and others. */
static void topk_matches_reference_with_ties(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 59);
  for (size_t n = 0; n < AXIS_CASE_COUNT; ++n) {
    const axis_case_t* c = &axis_cases[n];
    if (c->axis == NO_AXIS) continue;
    int32_t axis = (int32_t)(c->axis < 0 ? c->axis + c->ndim : c->axis);
    int64_t len = c->shape[axis];
    bool last = axis == c->ndim - 1;
    check_topk(c, 1 + (int64_t)n % len, n % 2 == 0, n % 3 == 1, 0, !last || n % 2, &rng);
    check_topk(c, len, n % 2 == 1, n % 3 == 0, 0, true, &rng);
  }
  /* k = 0: empty outputs */
  const axis_case_t c = {2, {3, 7}, 1};
  check_topk(&c, 0, false, false, 0, true, &rng);
}

/* NaN sorts above every number: first among the largest, last among the smallest. */
static void topk_sorts_nan_above_numbers(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 60);
  const axis_case_t c = {2, {5, 9}, -1};
  check_topk(&c, 4, false, false, 3, false, &rng);
  check_topk(&c, 9, true, false, 3, false, &rng);
}

static void expect_op_error(const char* op, const char* attrs, const char* in_dtype, int32_t in_ndim,
                            const int64_t* in_shape, uint32_t outputs, const char* out_dtype, int32_t out_ndim,
                            const int64_t* out_shape, const char* message) {
  hgr_optest_t t;
  hgr_optest_init(&t, op, attrs);
  hgr_optest_input(&t, in_dtype, in_ndim, in_shape);
  for (uint32_t k = 0; k < outputs; ++k) hgr_optest_output(&t, k ? "int32" : out_dtype, out_ndim, out_shape);
  char prefix[64];
  snprintf(prefix, sizeof(prefix), "node 1 '%s_node' (%s): ", op, op);
  ASSERT_STATUS(hgr_optest_create(hgr_optest_instance, hgr_optest_device, &t), HGR_STATUS_INVALID_ARGUMENT, prefix,
                message);
  hgr_optest_free(&t);
}

static void arg_reduce_and_topk_reject_bad_attrs_and_shapes(void** state) {
  (void)state;
  const int64_t s234[3] = {2, 3, 4}, s24[2] = {2, 4}, s204[3] = {2, 0, 4}, s232[3] = {2, 3, 2};
  expect_op_error("argmax", "\"axis\": \"[0, 1]\"", "float32", 3, s234, 1, "int32", 1, s24 + 1,
                  "attr 'axis' = \"[0, 1]\" names 2 axes; argmax takes one");
  expect_op_error("argmin", "\"axis\": \"3\"", "float32", 3, s234, 1, "int32", 2, s24,
                  "attr 'axis' = 3 is out of range for 3 dimensions");
  expect_op_error("argmax", "\"axis\": \"1\", \"exclude\": \"1\"", "float32", 3, s234, 1, "int32", 2, s24,
                  "attr 'exclude' = \"1\" is not supported; hgr takes False");
  expect_op_error("argmax", "\"axis\": \"1\", \"select_last_index\": \"2\"", "float32", 3, s234, 1, "int32", 2,
                  s24, "attr 'select_last_index' = \"2\" is not a bool");
  expect_op_error("argmin", "\"axis\": \"1\"", "float32", 3, s204, 1, "int32", 2, s24,
                  "the data [2, 0, 4] is empty along the reduced axis; argmin needs at least one element");
  expect_op_error("argmax", "\"axis\": \"1\"", "float32", 3, s234, 1, "float32", 2, s24,
                  "output 0 (entry 1) should be int32 [2, 4], the graph says float32 [2, 4]");
  expect_op_error("argmax", "\"axis\": \"1\", \"keepdims\": \"1\"", "int32", 3, s234, 1, "int32", 2, s24,
                  "output 0 (entry 1) should be shaped [2, 1, 4], the graph says [2, 4]");
  expect_op_error("topk", "\"axis\": \"2\"", "float32", 3, s234, 2, "float32", 3, s232, "attr 'k' is required");
  expect_op_error("topk", "\"k\": \"5\"", "float32", 3, s234, 2, "float32", 3, s232,
                  "attr 'k' = 5 is out of range: axis 2 has 4 elements");
  expect_op_error("topk", "\"k\": \"-1\"", "float32", 3, s234, 2, "float32", 3, s232,
                  "attr 'k' = -1 is out of range: axis 2 has 4 elements");
  expect_op_error("topk", "\"k\": \"2\", \"ret_type\": \"values\"", "float32", 3, s234, 2, "float32", 3, s232,
                  "attr 'ret_type' = \"values\"");
  expect_op_error("topk", "\"k\": \"2\", \"dtype\": \"int64\"", "float32", 3, s234, 2, "float32", 3, s232,
                  "attr 'dtype' = \"int64\"");
  expect_op_error("topk", "\"k\": \"2\"", "float32", 3, s234, 1, "float32", 3, s232,
                  "has 2 outputs (values and indices, ret_type \"both\"), the node has 1");
  expect_op_error("topk", "\"k\": \"2\", \"axis\": \"-4\"", "float32", 3, s234, 2, "float32", 3, s232,
                  "attr 'axis' = -4 is out of range for 3 dimensions");
  expect_op_error("topk", "\"k\": \"3\"", "float32", 3, s234, 2, "float32", 3, s232,
                  "output 0 (entry 1) should be shaped [2, 3, 3], the graph says [2, 3, 2]");
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
      cmocka_unit_test(products_match_reference),
      cmocka_unit_test(argmax_and_argmin_match_reference_with_ties),
      cmocka_unit_test(argmax_and_argmin_pick_nan),
      cmocka_unit_test(topk_matches_reference_with_ties),
      cmocka_unit_test(topk_sorts_nan_above_numbers),
      cmocka_unit_test(arg_reduce_and_topk_reject_bad_attrs_and_shapes),
  };
  return hgr_optest_main(argc, argv, "ops_reduce", tests, sizeof(tests) / sizeof(tests[0]));
}
