/* nonzero, compress and unique (runtime/ops/ops_compact.c, kernels/compact.cl)
 * against the references in tests/ref_compact.c on random data (argument: a device
 * spec). Every output is compared whole: the result up to the count and the zero
 * tail after it over the capacity, and the count itself; integer and bool outputs
 * exactly, float32 ones with tolerance 0 (values are only moved: equal as values,
 * NaN matching NaN; -0.0 and 0.0 are not told apart by the comparison).
 *
 * Cases: float32, int32 and bool data (unique: float32 and int32) of ranks 1 to 4,
 * random with zeros and duplicates (floats with -0.0, NaN and infinities), all
 * zero and all nonzero; compress over every axis (negative ones too) and flattened,
 * conditions shorter than the axis, all false (count 0) and all true; unique
 * flattened and along every axis, sorted and not, with repeated slices; empty
 * inputs (capacity 1, count 0); the single-group scans over several chunks (the
 * device's limits made small, and inputs longer than 256); the refusals, named. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optest.h"
#include "ref_compact.h"

static const char* const dtype_names[3] = {"float32", "int32", "bool"};

/* Data patterns. */
enum { RANDOM, ALL_ZERO, ALL_NONZERO };

/* A float from a small set with repeats: zeros of both signs, NaN, infinities. */
static float special_float(hgr_test_rng_t* rng) {
  static const float values[] = {-2.0f, -1.0f, -0.0f, 0.0f, 0.5f, 1.0f, 3.0f, INFINITY, -INFINITY};
  uint32_t pick = hgr_test_rng_below(rng, 10);
  return pick == 9 ? NAN : values[pick];
}

/* Element i of data (dtype) made random (zero with probability 1/2), zero, or nonzero. */
static void fill(void* data, hgr_ref_compact_dtype_t dtype, int64_t count, int pattern, hgr_test_rng_t* rng) {
  for (int64_t i = 0; i < count; ++i) {
    bool zero = pattern == ALL_ZERO || (pattern == RANDOM && hgr_test_rng_below(rng, 2) == 0);
    if (dtype == HGR_REF_COMPACT_F32) {
      float value = special_float(rng);
      if (!zero && value == 0.0f) value = 2.0f;
      if (zero) value = hgr_test_rng_below(rng, 2) ? -0.0f : 0.0f;
      ((float*)data)[i] = value;
    } else if (dtype == HGR_REF_COMPACT_I32) {
      int32_t value = (int32_t)hgr_test_rng_below(rng, 7) - 3;
      if (!zero && value == 0) value = INT32_MIN;
      ((int32_t*)data)[i] = zero ? 0 : value;
    } else {
      ((uint8_t*)data)[i] = zero ? 0 : 1;
    }
  }
}

static int64_t product(int32_t ndim, const int64_t* shape) {
  int64_t count = 1;
  for (int32_t d = 0; d < ndim; ++d) count *= shape[d];
  return count;
}

static void random_shape(hgr_test_rng_t* rng, int32_t ndim, int64_t max_extent, int64_t* shape) {
  for (int32_t d = 0; d < ndim; ++d) shape[d] = 1 + hgr_test_rng_below(rng, (uint32_t)max_extent);
}

static void print_case(const char* op, const char* dtype, int32_t ndim, const int64_t* shape, const char* rest) {
  char text[256];
  int used = snprintf(text, sizeof(text), "%s %s [", op, dtype);
  for (int32_t d = 0; d < ndim; ++d)
    used += snprintf(text + used, sizeof(text) - (size_t)used, "%s%lld", d ? ", " : "", (long long)shape[d]);
  print_message("%s] %s\n", text, rest);
}

/* ---- nonzero --------------------------------------------------------------------------- */

static void check_nonzero(hgr_ref_compact_dtype_t dtype, int32_t ndim, const int64_t* shape, int pattern,
                          hgr_test_rng_t* rng) {
  hgr_optest_t t;
  hgr_optest_init(&t, "nonzero", NULL);
  void* x = hgr_optest_input(&t, dtype_names[dtype], ndim, shape);
  int64_t count = product(ndim, shape);
  fill(x, dtype, count, pattern, rng);
  int64_t out_shape[2] = {ndim, count > 0 ? count : 1};
  int32_t* out = hgr_optest_output(&t, "int32", 2, out_shape);
  int32_t* n = hgr_optest_output(&t, "int32", 0, NULL);
  *n = hgr_ref_nonzero(x, dtype, ndim, shape, out);
  char rest[64];
  snprintf(rest, sizeof(rest), "pattern %d: n %d", pattern, *n);
  print_case("nonzero", dtype_names[dtype], ndim, shape, rest);
  if (pattern == ALL_ZERO) assert_int_equal(*n, 0);
  if (pattern == ALL_NONZERO) assert_int_equal(*n, count);
  hgr_optest_check(hgr_optest_instance, hgr_optest_device, &t);
  hgr_optest_free(&t);
}

static void nonzero_matches_reference_over_dtypes_ranks_and_patterns(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 71);
  bool simulator = hgr_optest_is_simulator(hgr_optest_device);
  for (int dtype = 0; dtype < 3; ++dtype)
    for (int32_t ndim = 1; ndim <= 4; ++ndim)
      for (int pattern = RANDOM; pattern <= ALL_NONZERO; ++pattern) {
        int64_t shape[4];
        random_shape(&rng, ndim, ndim == 1 ? (simulator ? 40 : 300) : (simulator ? 4 : 7), shape);
        check_nonzero((hgr_ref_compact_dtype_t)dtype, ndim, shape, pattern, &rng);
      }
  /* the largest rank the test graphs take */
  int64_t shape[HGR_OPTEST_MAX_DIMS];
  for (int32_t d = 0; d < HGR_OPTEST_MAX_DIMS; ++d) shape[d] = 1 + d % 2;
  check_nonzero(HGR_REF_COMPACT_F32, HGR_OPTEST_MAX_DIMS, shape, RANDOM, &rng);
}

/* ---- compress -------------------------------------------------------------------------- */

/* axis: the attr's value (may be negative); flattened: no attr. length: cond's. */
static void check_compress(hgr_ref_compact_dtype_t dtype, int32_t ndim, const int64_t* shape, bool flattened,
                           int32_t axis, int64_t length, int pattern, hgr_test_rng_t* rng) {
  char attrs[64] = "";
  if (!flattened) snprintf(attrs, sizeof(attrs), "\"axis\": \"%d\"", axis);
  int32_t positive = flattened ? -1 : axis < 0 ? axis + ndim : axis;
  hgr_optest_t t;
  hgr_optest_init(&t, "compress", attrs);
  void* x = hgr_optest_input(&t, dtype_names[dtype], ndim, shape);
  fill(x, dtype, product(ndim, shape), RANDOM, rng);
  uint8_t* cond = hgr_optest_input(&t, "bool", 1, &length);
  fill(cond, HGR_REF_COMPACT_BOOL, length, pattern, rng);
  int64_t out_shape[HGR_OPTEST_MAX_DIMS];
  int32_t out_ndim = flattened ? 1 : ndim;
  if (flattened) out_shape[0] = length > 0 ? length : 1;
  else memcpy(out_shape, shape, sizeof(int64_t) * (size_t)ndim), out_shape[positive] = length > 0 ? length : 1;
  void* out = hgr_optest_output(&t, dtype_names[dtype], out_ndim, out_shape);
  int32_t* n = hgr_optest_output(&t, "int32", 0, NULL);
  *n = hgr_ref_compress(x, dtype, ndim, shape, positive, cond, length, out);
  char rest[96];
  snprintf(rest, sizeof(rest), "axis %s%d, length %lld, pattern %d: n %d", flattened ? "none " : "", axis,
           (long long)length, pattern, *n);
  print_case("compress", dtype_names[dtype], ndim, shape, rest);
  hgr_optest_check(hgr_optest_instance, hgr_optest_device, &t);
  hgr_optest_free(&t);
}

static void compress_matches_reference_over_axes_and_conditions(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 72);
  bool simulator = hgr_optest_is_simulator(hgr_optest_device);
  for (int dtype = 0; dtype < 3; ++dtype)
    for (int32_t ndim = 1; ndim <= 3; ++ndim) {
      int64_t shape[3];
      random_shape(&rng, ndim, simulator ? 5 : 9, shape);
      int64_t count = product(ndim, shape);
      /* flattened: every pattern, the condition as long as the data or shorter */
      for (int pattern = RANDOM; pattern <= ALL_NONZERO; ++pattern) {
        int64_t length = pattern == RANDOM ? 1 + hgr_test_rng_below(&rng, (uint32_t)count) : count;
        check_compress((hgr_ref_compact_dtype_t)dtype, ndim, shape, true, 0, length, pattern, &rng);
      }
      /* every axis, as a positive and a negative attr */
      for (int32_t axis = 0; axis < ndim; ++axis) {
        int64_t length = 1 + hgr_test_rng_below(&rng, (uint32_t)shape[axis]);
        int pattern = (int)hgr_test_rng_below(&rng, 3);
        check_compress((hgr_ref_compact_dtype_t)dtype, ndim, shape, false, axis, length, pattern, &rng);
        check_compress((hgr_ref_compact_dtype_t)dtype, ndim, shape, false, axis - ndim, shape[axis], RANDOM, &rng);
      }
    }
}

/* ---- unique ---------------------------------------------------------------------------- */

/* Data with repeats: floats from a small set (with -0.0, NaN and infinities) or
 * ints in [-span, span] (span 0: one value, floats 0.0 and -0.0); along an axis,
 * about half the slices copies of earlier ones. */
static void fill_unique(void* x, hgr_ref_compact_dtype_t dtype, int32_t ndim, const int64_t* shape, int32_t axis,
                        int span, hgr_test_rng_t* rng) {
  int64_t count = product(ndim, shape);
  for (int64_t i = 0; i < count; ++i) {
    if (dtype == HGR_REF_COMPACT_F32 && span == 0) ((float*)x)[i] = i % 2 ? -0.0f : 0.0f; /* one value */
    else if (dtype == HGR_REF_COMPACT_F32) ((float*)x)[i] = special_float(rng);
    else ((int32_t*)x)[i] = (int32_t)hgr_test_rng_below(rng, (uint32_t)(2 * span + 1)) - span;
  }
  if (axis < 0) return;
  int64_t outer = 1, inner = 1, extent = shape[axis];
  for (int32_t d = 0; d < axis; ++d) outer *= shape[d];
  for (int32_t d = axis + 1; d < ndim; ++d) inner *= shape[d];
  uint32_t* bits = x;
  for (int64_t k = 1; k < extent; ++k) {
    if (hgr_test_rng_below(rng, 2)) continue;
    int64_t from = hgr_test_rng_below(rng, (uint32_t)k);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t r = 0; r < inner; ++r) bits[(o * extent + k) * inner + r] = bits[(o * extent + from) * inner + r];
  }
}

static void check_unique(hgr_ref_compact_dtype_t dtype, int32_t ndim, const int64_t* shape, bool flattened,
                         int32_t axis, bool sorted, int span, hgr_test_rng_t* rng) {
  char attrs[96];
  snprintf(attrs, sizeof(attrs), "\"sorted\": \"%d\"", sorted);
  if (!flattened) snprintf(attrs + strlen(attrs), sizeof(attrs) - strlen(attrs), ", \"axis\": \"%d\"", axis);
  int32_t positive = flattened ? -1 : axis < 0 ? axis + ndim : axis;
  hgr_optest_t t;
  hgr_optest_init(&t, "unique", attrs);
  void* x = hgr_optest_input(&t, dtype_names[dtype], ndim, shape);
  fill_unique(x, dtype, ndim, shape, positive, span, rng);
  int64_t count = product(ndim, shape), extent = flattened ? count : shape[positive], cap = extent > 0 ? extent : 1;
  int64_t y_shape[HGR_OPTEST_MAX_DIMS];
  int32_t y_ndim = flattened ? 1 : ndim;
  if (flattened) y_shape[0] = cap;
  else memcpy(y_shape, shape, sizeof(int64_t) * (size_t)ndim), y_shape[positive] = cap;
  void* y = hgr_optest_output(&t, dtype_names[dtype], y_ndim, y_shape);
  int32_t* indices = hgr_optest_output(&t, "int32", 1, &cap);
  int32_t* inverse = hgr_optest_output(&t, "int32", 1, &extent);
  int32_t* counts = hgr_optest_output(&t, "int32", 1, &cap);
  int32_t* n = hgr_optest_output(&t, "int32", 0, NULL);
  *n = hgr_ref_unique(x, dtype, ndim, shape, positive, sorted, y, indices, inverse, counts);
  char rest[96];
  snprintf(rest, sizeof(rest), "axis %s%d, sorted %d, span %d: n %d", flattened ? "none " : "", axis, sorted, span,
           *n);
  print_case("unique", dtype_names[dtype], ndim, shape, rest);
  hgr_optest_check(hgr_optest_instance, hgr_optest_device, &t);
  hgr_optest_free(&t);
}

static void unique_matches_reference_over_axes_and_orders(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 73);
  bool simulator = hgr_optest_is_simulator(hgr_optest_device);
  for (int dtype = 0; dtype < 2; ++dtype)
    for (int32_t ndim = 1; ndim <= 3; ++ndim)
      for (int sorted = 0; sorted < 2; ++sorted) {
        int64_t shape[3];
        random_shape(&rng, ndim, ndim == 1 ? (simulator ? 24 : 100) : (simulator ? 4 : 6), shape);
        check_unique((hgr_ref_compact_dtype_t)dtype, ndim, shape, true, 0, sorted, 3, &rng);
        /* mostly distinct values */
        check_unique((hgr_ref_compact_dtype_t)dtype, ndim, shape, true, 0, sorted, 1000, &rng);
        for (int32_t axis = 0; axis < ndim; ++axis)
          check_unique((hgr_ref_compact_dtype_t)dtype, ndim, shape, false, sorted ? axis : axis - ndim, sorted, 1,
                       &rng);
      }
  /* one value throughout: n 1; one element */
  int64_t shape[2] = {3, 4};
  check_unique(HGR_REF_COMPACT_I32, 2, shape, true, 0, true, 0, &rng);
  check_unique(HGR_REF_COMPACT_F32, 2, shape, false, 1, false, 0, &rng);
  int64_t one = 1;
  check_unique(HGR_REF_COMPACT_F32, 1, &one, true, 0, true, 3, &rng);
}

/* Empty inputs: the capacities are 1, the counts 0 (or 1 for unique's empty slices). */
static void empty_inputs_give_zero_counts(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 75);
  int64_t zero = 0, shape[2] = {0, 3}, wide[2] = {3, 0};
  check_nonzero(HGR_REF_COMPACT_F32, 2, shape, RANDOM, &rng);
  check_compress(HGR_REF_COMPACT_I32, 2, wide, false, 0, 0, RANDOM, &rng);
  check_compress(HGR_REF_COMPACT_F32, 1, &zero, true, 0, 0, RANDOM, &rng);
  check_unique(HGR_REF_COMPACT_I32, 1, &zero, true, 0, true, 3, &rng);
  check_unique(HGR_REF_COMPACT_F32, 2, wide, false, 0, false, 3, &rng);
}

/* ---- the scans over several chunks ------------------------------------------------------ */

/* Work-groups of 2 and 4 (the device's limits made small) walk inputs of many
 * chunks; then inputs longer than the 256 a group takes on the device as it is. */
static void scans_cross_chunks(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 74);
  hgr_device_info_t* info = hgr_optest_device_info();
  hgr_device_info_t saved = *info;
  for (size_t size = 2; size <= 4; size += 2) {
    info->max_work_group_size = size + 1; /* the plan takes a power of two */
    for (int d = 0; d < 3; ++d) info->max_work_item_sizes[d] = size + 1;
    int64_t shape[2] = {3, 7};
    check_nonzero(HGR_REF_COMPACT_I32, 2, shape, RANDOM, &rng);
    check_compress(HGR_REF_COMPACT_BOOL, 2, shape, false, 1, 6, RANDOM, &rng);
    check_compress(HGR_REF_COMPACT_F32, 2, shape, true, 0, 19, RANDOM, &rng);
    check_unique(HGR_REF_COMPACT_F32, 2, shape, true, 0, size == 2, 3, &rng);
    check_unique(HGR_REF_COMPACT_I32, 2, shape, false, 1, size == 4, 1, &rng);
  }
  *info = saved;
  bool simulator = hgr_optest_is_simulator(hgr_optest_device);
  int64_t length = simulator ? 300 : 1500;
  check_nonzero(HGR_REF_COMPACT_F32, 1, &length, RANDOM, &rng);
  check_compress(HGR_REF_COMPACT_I32, 1, &length, false, 0, length - 5, RANDOM, &rng);
  check_unique(HGR_REF_COMPACT_I32, 1, &length, true, 0, true, 200, &rng);
  check_unique(HGR_REF_COMPACT_F32, 1, &length, true, 0, false, 3, &rng);
}

/* ---- refusals ---------------------------------------------------------------------------- */

static void expect_refusal(hgr_optest_t* t, const char* message) {
  ASSERT_STATUS(hgr_optest_create(hgr_optest_instance, hgr_optest_device, t), HGR_STATUS_INVALID_ARGUMENT, message);
  hgr_optest_free(t);
}

static void bad_inputs_and_attrs_are_named(void** state) {
  (void)state;
  hgr_optest_t t;
  int64_t shape[2] = {3, 4}, five = 5, thirteen = 13, cap = 4, twelve = 12;
  /* a condition longer than the axis, and than the flattened data */
  hgr_optest_init(&t, "compress", "\"axis\": \"1\"");
  hgr_optest_input(&t, "float32", 2, shape);
  hgr_optest_input(&t, "bool", 1, &five);
  hgr_optest_output(&t, "float32", 2, (int64_t[]){3, 5});
  hgr_optest_output(&t, "int32", 0, NULL);
  expect_refusal(&t, "(compress): input 1 'condition' has 5 elements, more than the 4 of axis 1 of input 0 'x'");
  hgr_optest_init(&t, "compress", NULL);
  hgr_optest_input(&t, "int32", 2, shape);
  hgr_optest_input(&t, "bool", 1, &thirteen);
  hgr_optest_output(&t, "int32", 1, &thirteen);
  hgr_optest_output(&t, "int32", 0, NULL);
  expect_refusal(&t, "input 1 'condition' has 13 elements, more than the 12 of input 0 'x' flattened");
  /* a condition that is not bool */
  hgr_optest_init(&t, "compress", NULL);
  hgr_optest_input(&t, "int32", 2, shape);
  hgr_optest_input(&t, "int32", 1, &cap);
  hgr_optest_output(&t, "int32", 1, &cap);
  hgr_optest_output(&t, "int32", 0, NULL);
  expect_refusal(&t, "input 1 'condition' (entry 1) is int32 [4]; the op takes a 1-D bool tensor");
  /* nonzero of a scalar */
  hgr_optest_init(&t, "nonzero", NULL);
  hgr_optest_input(&t, "float32", 0, NULL);
  hgr_optest_output(&t, "int32", 2, (int64_t[]){0, 1});
  hgr_optest_output(&t, "int32", 0, NULL);
  expect_refusal(&t, "(nonzero): input 0 'x' (entry 0) is shaped []; the op takes rank 1 or more");
  /* unique of bools, a bad sorted, an axis out of range, a count that is not a scalar */
  hgr_optest_init(&t, "unique", NULL);
  hgr_optest_input(&t, "bool", 2, shape);
  for (int k = 0; k < 4; ++k) hgr_optest_output(&t, "int32", 1, &twelve);
  hgr_optest_output(&t, "int32", 0, NULL);
  expect_refusal(&t, "(unique): input 0 'x' (entry 0) is bool; the op supports float32, int32");
  hgr_optest_init(&t, "unique", "\"sorted\": \"2\"");
  hgr_optest_input(&t, "int32", 2, shape);
  for (int k = 0; k < 4; ++k) hgr_optest_output(&t, "int32", 1, &twelve);
  hgr_optest_output(&t, "int32", 0, NULL);
  expect_refusal(&t, "attr 'sorted' = 2 must be 0 (order of first occurrence) or 1 (ascending)");
  hgr_optest_init(&t, "unique", "\"axis\": \"2\"");
  hgr_optest_input(&t, "int32", 2, shape);
  for (int k = 0; k < 4; ++k) hgr_optest_output(&t, "int32", 1, &twelve);
  hgr_optest_output(&t, "int32", 0, NULL);
  expect_refusal(&t, "attr 'axis' = 2 is out of range for 2 dimensions");
  hgr_optest_init(&t, "unique", NULL);
  hgr_optest_input(&t, "int32", 2, shape);
  for (int k = 0; k < 5; ++k) hgr_optest_output(&t, "int32", 1, &twelve);
  expect_refusal(&t, "(unique): output 4 (entry 5) should be shaped []");
}

int main(int argc, char** argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(nonzero_matches_reference_over_dtypes_ranks_and_patterns),
      cmocka_unit_test(compress_matches_reference_over_axes_and_conditions),
      cmocka_unit_test(unique_matches_reference_over_axes_and_orders),
      cmocka_unit_test(empty_inputs_give_zero_counts),
      cmocka_unit_test(scans_cross_chunks),
      cmocka_unit_test(bad_inputs_and_attrs_are_named),
  };
  return hgr_optest_main(argc, argv, "ops_compact", tests, sizeof(tests) / sizeof(tests[0]));
}
