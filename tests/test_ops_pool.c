/* 2-D pooling against the plain-C reference (tests/ref_conv.c) on random data
 * (argument: a device spec): every attr of max_pool2d and avg_pool2d, including
 * ceil_mode with and without count_include_pad, windows that lie wholly in padding,
 * the row-blocked kernels on chosen and random shapes, the global pools, and what
 * the ops reject.
 *
 * Tolerances: max pooling is exact (it picks one of its inputs, or -FLT_MAX).
 * Average pooling sums at most 25 values in [-1, 1] in float32 and divides once:
 * the error is a few roundings of partial sums bounded by 25, divided by the count,
 * well under 2e-6 absolute; rtol 1e-6 covers the division. The global average sums
 * up to 3136 values (8 interleaved partial sums, then those): atol 2e-5 (the
 * worst case, 3136 * 2^-24 times a sum bounded by 3136 over 3136, is 1.9e-4;
 * random signs make it about 3e-6). */
#include <float.h>
#include <stdio.h>
#include <string.h>

#include "optest.h"
#include "ref_conv.h"

typedef struct pool_case_t {
  int64_t x[4];
  hgr_ref_pool2d_t p;
  const char* padding_attr; /* NULL: no attr */
  const char* pool_attr;    /* pool_size as written */
} pool_case_t;

static void pool_attrs(const pool_case_t* c, char* attrs, size_t capacity) {
  int used = snprintf(attrs, capacity,
                      "\"pool_size\": \"%s\", \"strides\": \"[%lld, %lld]\", \"dilation\": \"[%lld, %lld]\", "
                      "\"ceil_mode\": \"%s\"",
                      c->pool_attr, (long long)c->p.strides[0], (long long)c->p.strides[1],
                      (long long)c->p.dilation[0], (long long)c->p.dilation[1], c->p.ceil_mode ? "True" : "False");
  if (c->padding_attr)
    used += snprintf(attrs + used, capacity - (size_t)used, ", \"padding\": \"%s\"", c->padding_attr);
  if (!c->p.max)
    snprintf(attrs + used, capacity - (size_t)used, ", \"count_include_pad\": \"%s\"",
             c->p.count_include_pad ? "1" : "0");
}

/* drop_padded: with the attr drop_padded_windows, the output loses a last window
 * that would start in the end padding (ONNX); the reference then simply computes
 * fewer windows. *out_dropped (may be NULL) counts the axes that lost one. */
static void check_cases_onnx(const pool_case_t* cases, size_t count, uint64_t seed, bool drop_padded,
                             int* out_dropped) {
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, seed);
  for (size_t i = 0; i < count; ++i) {
    const pool_case_t* c = &cases[i];
    char attrs[512];
    pool_attrs(c, attrs, sizeof(attrs));
    if (drop_padded) strcat(attrs, ", \"drop_padded_windows\": \"True\"");
    hgr_optest_t t;
    hgr_optest_init(&t, c->p.max ? "max_pool2d" : "avg_pool2d", attrs);
    int64_t yshape[4];
    hgr_ref_pool2d_shape(c->x, &c->p, yshape);
    for (int axis = 0; drop_padded && c->p.ceil_mode && axis < 2; ++axis)
      if (yshape[2 + axis] > 1 && (yshape[2 + axis] - 1) * c->p.strides[axis] >= c->x[2 + axis] + c->p.padding[axis]) {
        --yshape[2 + axis];
        if (out_dropped) ++*out_dropped;
      }
    float* x = hgr_optest_input(&t, "float32", 4, c->x);
    float* y = hgr_optest_output(&t, "float32", 4, yshape);
    hgr_optest_fill(&t.inputs[0], &rng, -1, 1);
    hgr_ref_pool2d(x, c->x, y, yshape, &c->p);
    if (!c->p.max) hgr_optest_tolerance(&t, 1e-6, 2e-6);
    hgr_optest_check(hgr_optest_instance, hgr_optest_device, &t);
    hgr_optest_free(&t);
  }
}

static void check_cases(const pool_case_t* cases, size_t count, uint64_t seed) {
  check_cases_onnx(cases, count, seed, false, NULL);
}

/* max, pool, strides, padding (top, left, bottom, right), dilation, ceil_mode, count_include_pad */
#define Q(max, ph, pw, sh, sw, pt, pl, pb, pr, dh, dw, ceil, include) \
  {max, {ph, pw}, {sh, sw}, {dh, dw}, {pt, pl, pb, pr}, ceil, include}
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static void max_pool_matches_reference(void** state) {
  (void)state;
  static const pool_case_t cases[] = {
      /* ResNet's stem pool, on an odd size */
      {{1, 3, 11, 13}, Q(true, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, false, false), "1", "[3, 3]"},
      {{2, 2, 8, 6}, Q(true, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, false, false), NULL, "2"},
      {{1, 1, 1, 1}, Q(true, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, false, false), NULL, "[1, 1]"},
      {{1, 4, 7, 9}, Q(true, 3, 2, 1, 2, 1, 0, 1, 0, 1, 1, false, false), "[1, 0]", "[3, 2]"},
      {{1, 2, 9, 10}, Q(true, 2, 3, 2, 1, 0, 1, 2, 0, 1, 1, false, false), "[0, 1, 2, 0]", "(2, 3)"},
      /* dilation */
      {{1, 3, 10, 11}, Q(true, 3, 3, 1, 2, 2, 2, 2, 2, 2, 2, false, false), "2", "3"},
      {{1, 2, 9, 8}, Q(true, 2, 2, 2, 1, 0, 1, 0, 1, 3, 1, false, false), "[0, 1]", "[2, 2]"},
      /* ceil_mode, where it adds a row and a column, and where it does not */
      {{1, 3, 8, 7}, Q(true, 3, 3, 2, 2, 0, 0, 0, 0, 1, 1, true, false), NULL, "3"},
      {{1, 3, 9, 9}, Q(true, 3, 3, 2, 2, 0, 0, 0, 0, 1, 1, true, false), NULL, "3"},
      {{1, 2, 10, 11}, Q(true, 2, 3, 3, 2, 1, 0, 0, 1, 1, 2, true, false), "[1, 0, 0, 1]", "[2, 3]"},
      /* a window past the input, wholly in ceil_mode's padding (stride > window) */
      {{1, 2, 5, 5}, Q(true, 1, 1, 3, 3, 0, 0, 0, 0, 1, 1, true, false), NULL, "1"},
      /* windows wholly in declared padding give -FLT_MAX */
      {{1, 2, 4, 5}, Q(true, 2, 2, 1, 1, 2, 2, 2, 2, 1, 1, false, false), "2", "2"},
  };
  check_cases(cases, COUNT(cases), 21);
}

static void avg_pool_matches_reference(void** state) {
  (void)state;
  static const pool_case_t cases[] = {
      {{1, 3, 11, 13}, Q(false, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, false, false), "1", "[3, 3]"},
      {{1, 3, 11, 13}, Q(false, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, false, true), "1", "[3, 3]"},
      {{2, 2, 8, 6}, Q(false, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, false, false), NULL, "2"},
      {{1, 4, 7, 9}, Q(false, 3, 2, 1, 2, 1, 0, 1, 0, 1, 1, false, true), "[1, 0]", "[3, 2]"},
      {{1, 2, 9, 10}, Q(false, 2, 3, 2, 1, 0, 1, 2, 0, 1, 1, false, true), "[0, 1, 2, 0]", "(2, 3)"},
      {{1, 2, 9, 10}, Q(false, 2, 3, 2, 1, 0, 1, 2, 0, 1, 1, false, false), "[0, 1, 2, 0]", "(2, 3)"},
      /* dilation, with and without counting padding */
      {{1, 3, 10, 11}, Q(false, 3, 3, 1, 2, 2, 2, 2, 2, 2, 2, false, false), "2", "3"},
      {{1, 3, 10, 11}, Q(false, 3, 3, 1, 2, 2, 3, 1, 2, 2, 2, false, true), "[2, 3, 1, 2]", "3"},
      /* ceil_mode x count_include_pad: the extra padding is never counted */
      {{1, 3, 8, 7}, Q(false, 3, 3, 2, 2, 0, 0, 0, 0, 1, 1, true, false), NULL, "3"},
      {{1, 3, 8, 7}, Q(false, 3, 3, 2, 2, 0, 0, 0, 0, 1, 1, true, true), NULL, "3"},
      {{1, 3, 8, 7}, Q(false, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, true, true), "1", "3"},
      {{1, 2, 10, 11}, Q(false, 2, 3, 3, 2, 1, 0, 0, 1, 1, 2, true, true), "[1, 0, 0, 1]", "[2, 3]"},
      {{1, 2, 10, 11}, Q(false, 2, 3, 3, 2, 1, 0, 0, 1, 1, 2, true, false), "[1, 0, 0, 1]", "[2, 3]"},
      /* windows past the input (stride > window): topi's divisor formula, 0 / 1 and 0 / +-1 or NaN */
      {{1, 2, 5, 5}, Q(false, 1, 1, 3, 3, 0, 0, 0, 0, 1, 1, true, false), NULL, "1"},
      {{1, 2, 5, 5}, Q(false, 1, 1, 3, 3, 0, 0, 0, 0, 1, 1, true, true), NULL, "1"},
      /* windows wholly in declared padding */
      {{1, 2, 4, 5}, Q(false, 2, 2, 1, 1, 2, 2, 2, 2, 1, 1, false, true), "2", "2"},
      {{1, 2, 4, 5}, Q(false, 2, 2, 1, 1, 2, 2, 2, 2, 1, 1, false, false), "2", "2"},
  };
  check_cases(cases, COUNT(cases), 22);
}

/* ONNX's MaxPool / AveragePool with ceil_mode (drop_padded_windows True): a last
 * window that would start in the end padding is dropped; the others, and every
 * divisor, are as without the attr (count_include_pad counts the declared padding,
 * never ceil_mode's). These shapes were checked against onnxruntime 1.x (opset 19)
 * with the same rule; most of them drop a window, some do not. */
/* The kernels run a work-item per output row: rows long enough that most windows
 * lie inside (no column checks) with edge windows on both sides, inception's 3x3
 * stride-2 ceil_mode pool, stride 1 with padding, dilation, both averages. */
static void long_rows_match_reference(void** state) {
  (void)state;
  static const pool_case_t cases[] = {
      {{1, 3, 5, 37}, Q(true, 3, 3, 2, 2, 0, 0, 0, 0, 1, 1, true, false), NULL, "3"},
      {{1, 2, 6, 30}, Q(true, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, false, false), "1", "3"},
      {{1, 2, 7, 29}, Q(true, 3, 2, 1, 2, 2, 1, 2, 1, 2, 2, false, false), "[2, 1]", "[3, 2]"},
      {{1, 3, 5, 37}, Q(false, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, true, true), "1", "3"},
      {{1, 3, 5, 37}, Q(false, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, true, false), "1", "3"},
      {{2, 2, 6, 33}, Q(false, 2, 5, 1, 3, 0, 2, 1, 2, 1, 2, false, false), "[0, 2, 1, 2]", "[2, 5]"},
  };
  check_cases(cases, COUNT(cases), 29);
}

static void onnx_ceil_mode_drops_windows_starting_in_end_padding(void** state) {
  (void)state;
  static const pool_case_t cases[] = {
      {{1, 2, 3, 1}, Q(true, 2, 1, 3, 2, 0, 0, 0, 0, 1, 1, true, false), NULL, "[2, 1]"},
      {{1, 2, 3, 5}, Q(true, 1, 2, 3, 3, 0, 1, 0, 1, 2, 1, true, false), "[0, 1, 0, 1]", "[1, 2]"},
      {{1, 2, 5, 5}, Q(true, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, true, false), "1", "2"},
      {{1, 2, 5, 5}, Q(true, 1, 1, 3, 3, 0, 0, 0, 0, 1, 1, true, false), NULL, "1"},
      {{1, 2, 7, 6}, Q(false, 4, 2, 3, 2, 0, 0, 2, 1, 2, 1, true, true), "[0, 0, 2, 1]", "[4, 2]"},
      {{1, 2, 3, 7}, Q(false, 2, 3, 2, 3, 0, 2, 1, 1, 1, 1, true, false), "[0, 2, 1, 1]", "[2, 3]"},
      {{1, 2, 1, 2}, Q(false, 3, 1, 2, 1, 1, 0, 2, 0, 1, 2, true, false), "[1, 0, 2, 0]", "[3, 1]"},
      {{1, 2, 5, 5}, Q(false, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, true, true), "1", "2"},
      {{1, 3, 8, 7}, Q(false, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, true, true), "1", "3"},
  };
  int dropped = 0;
  check_cases_onnx(cases, COUNT(cases), 24, true, &dropped);
  assert_true(dropped >= 8);
}

/* The row-blocked kernels (windows 3 wide at stride 1 or 2, 2 wide at stride 2, 1 and
 * 5 wide at stride 1, no dilation; kernels/pool.cl's hgr_*_pool2d_k<K>_s<S>_v<V>): rows of 16 columns and
 * more at stride 1 (v16) and fewer (v8), rows narrower than a block and rows whose
 * last block overlaps the one before, the model zoo's shapes (inception's
 * end-only padding), padding as wide as the window (lanes and rows wholly in
 * padding), ceil_mode, both averages, vertical windows 1 to 5 high at strides 1
 * to 3 (the rolled rows of 3 at stride 1, the kept row of 3 at stride 2), and few
 * planes, whose rows are split over work-items. */
static void row_blocked_pools_match_reference(void** state) {
  (void)state;
  static const pool_case_t cases[] = {
      {{1, 3, 19, 17}, Q(true, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, false, false), "1", "3"},
      {{1, 3, 19, 17}, Q(false, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, false, false), "1", "3"},
      {{1, 3, 19, 17}, Q(false, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, false, true), "1", "3"},
      {{2, 5, 9, 9}, Q(true, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, false, false), "1", "3"},
      {{2, 5, 9, 9}, Q(false, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, false, true), "1", "3"},
      {{1, 2, 5, 5}, Q(true, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, false, false), "1", "3"},
      {{1, 2, 5, 5}, Q(false, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, false, false), "1", "3"},
      {{1, 4, 16, 16}, Q(true, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, false, false), NULL, "3"},
      {{1, 3, 23, 23}, Q(true, 3, 3, 2, 2, 0, 0, 1, 1, 1, 1, false, false), "[0, 0, 1, 1]", "3"},
      {{1, 3, 23, 23}, Q(false, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, true, false), "1", "3"},
      {{1, 3, 23, 23}, Q(false, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, true, true), "1", "3"},
      {{1, 3, 21, 21}, Q(true, 3, 3, 2, 2, 0, 0, 0, 0, 1, 1, true, false), NULL, "3"},
      {{1, 4, 15, 17}, Q(true, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, true, false), NULL, "2"},
      {{1, 4, 15, 17}, Q(false, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, true, false), NULL, "2"},
      {{1, 2, 3, 3}, Q(false, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, false, true), "1", "2"},
      {{2, 3, 34, 34}, Q(true, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, false, false), NULL, "2"},
      /* padding as wide as the window */
      {{1, 2, 6, 7}, Q(true, 3, 3, 1, 1, 3, 3, 3, 3, 1, 1, false, false), "3", "3"},
      {{1, 2, 6, 7}, Q(false, 3, 3, 1, 2, 3, 3, 3, 3, 1, 1, false, true), "3", "3"},
      {{1, 2, 6, 7}, Q(false, 3, 3, 2, 1, 3, 3, 3, 3, 1, 1, true, false), "3", "3"},
      {{1, 2, 6, 20}, Q(false, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, false, true), "2", "2"},
      {{1, 2, 6, 18}, Q(false, 3, 3, 1, 1, 3, 3, 3, 3, 1, 1, false, false), "3", "3"},
      {{1, 2, 6, 18}, Q(false, 3, 3, 1, 1, 3, 3, 3, 3, 1, 1, true, true), "3", "3"},
      /* window heights and vertical strides */
      {{1, 3, 13, 18}, Q(true, 1, 3, 1, 1, 0, 1, 0, 1, 1, 1, false, false), "[0, 1]", "[1, 3]"},
      {{1, 3, 13, 18}, Q(false, 2, 3, 1, 1, 1, 1, 0, 1, 1, 1, false, true), "[1, 1, 0, 1]", "[2, 3]"},
      {{1, 3, 13, 18}, Q(true, 5, 3, 1, 2, 2, 1, 2, 1, 1, 1, false, false), "[2, 1]", "[5, 3]"},
      {{1, 3, 13, 18}, Q(false, 4, 3, 3, 2, 1, 1, 2, 1, 1, 1, true, false), "[1, 1, 2, 1]", "[4, 3]"},
      {{1, 3, 13, 18}, Q(true, 3, 2, 3, 2, 1, 0, 1, 0, 1, 1, true, false), "[1, 0]", "[3, 2]"},
      {{1, 3, 13, 18}, Q(false, 3, 3, 3, 1, 0, 0, 0, 0, 1, 1, false, false), NULL, "3"},
      /* 64 planes and more: a work-item per plane, running down all its rows */
      {{2, 33, 11, 19}, Q(true, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, false, false), "1", "3"},
      {{2, 33, 11, 19}, Q(false, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, false, true), "1", "3"},
      {{1, 64, 12, 9}, Q(false, 3, 3, 1, 1, 0, 1, 2, 1, 1, 1, false, false), "[0, 1, 2, 1]", "3"},
      {{1, 64, 13, 13}, Q(true, 3, 3, 2, 2, 0, 0, 1, 1, 1, 1, false, false), "[0, 0, 1, 1]", "3"},
      {{1, 64, 13, 13}, Q(false, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, true, true), "1", "3"},
      {{1, 70, 11, 18}, Q(true, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, true, false), NULL, "2"},
      {{1, 70, 11, 18}, Q(false, 2, 3, 1, 1, 1, 0, 1, 1, 1, 1, false, true), "[1, 0, 1, 1]", "[2, 3]"},
      {{1, 70, 11, 18}, Q(false, 4, 3, 2, 2, 2, 1, 2, 1, 1, 1, false, false), "[2, 1]", "[4, 3]"},
      /* one plane, or a few: its rows spread over work-items */
      {{1, 1, 40, 37}, Q(true, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, false, false), "1", "3"},
      {{1, 1, 40, 37}, Q(false, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, true, true), "1", "3"},
      {{1, 3, 40, 40}, Q(false, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, false, false), "1", "3"},
      {{1, 3, 41, 41}, Q(true, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, true, false), NULL, "2"},
      /* five wide at stride 1: YOLO's SPPF (5 x 5, padding 2, over 10 x 10 and 20 x 20),
       * rows in blocks of 8 and of 16, the average both ways, a row narrower than a
       * block, more padding on one side */
      {{1, 64, 10, 10}, Q(true, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, false, false), "2", "5"},
      {{1, 3, 20, 20}, Q(true, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, false, false), "2", "5"},
      {{1, 3, 9, 21}, Q(false, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, false, true), "2", "5"},
      {{1, 3, 9, 21}, Q(false, 3, 5, 2, 1, 1, 0, 1, 3, 1, 1, true, false), "[1, 0, 1, 3]", "[3, 5]"},
      {{1, 2, 6, 5}, Q(true, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, false, false), "2", "5"},
      /* one column wide: a CRNN's pools down the height, in blocks of 16 and of 8 */
      {{1, 70, 16, 64}, Q(true, 2, 1, 2, 1, 0, 0, 0, 0, 1, 1, false, false), NULL, "[2, 1]"},
      {{1, 3, 9, 13}, Q(false, 3, 1, 2, 1, 1, 0, 1, 0, 1, 1, false, true), "[1, 0]", "[3, 1]"},
      {{1, 3, 9, 13}, Q(false, 3, 1, 1, 1, 1, 0, 1, 0, 1, 1, true, false), "[1, 0]", "[3, 1]"},
  };
  check_cases(cases, COUNT(cases), 31);
}

/* Random shapes for the row-blocked kernels (fewer and smaller on the simulator):
 * any window height and vertical stride, padding up to the window's width,
 * ceil_mode and count_include_pad, the five horizontal windows. */
static void row_blocked_pools_match_reference_on_random_shapes(void** state) {
  (void)state;
  static const int64_t widths[5][2] = {{3, 1}, {3, 2}, {2, 2}, {1, 1}, {5, 1}}; /* window width, stride */
  const bool simulated = hgr_optest_is_simulator(hgr_optest_device);
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 32);
  for (int made = 0; made < (simulated ? 24 : 120);) {
    /* drawn one by one, in this order (an initializer list's order is unspecified) */
    const int64_t* wide = widths[hgr_test_rng_below(&rng, 5)];
    pool_case_t c = {{0}, {0}, NULL, NULL};
    c.x[0] = 1 + hgr_test_rng_below(&rng, 2);
    /* a few planes (rows spread over work-items) or 64 and more (whole planes) */
    c.x[1] = hgr_test_rng_below(&rng, 2) ? 1 + hgr_test_rng_below(&rng, 5) : 64 + hgr_test_rng_below(&rng, 8);
    c.x[2] = 1 + hgr_test_rng_below(&rng, simulated ? 12 : 40);
    c.x[3] = 1 + hgr_test_rng_below(&rng, simulated ? 24 : 50);
    c.p.max = hgr_test_rng_below(&rng, 2) == 0;
    c.p.pool_size[0] = 1 + hgr_test_rng_below(&rng, 4);
    c.p.pool_size[1] = wide[0];
    c.p.strides[0] = 1 + hgr_test_rng_below(&rng, 3);
    c.p.strides[1] = wide[1];
    c.p.dilation[0] = c.p.dilation[1] = 1;
    for (int side = 0; side < 4; ++side) c.p.padding[side] = hgr_test_rng_below(&rng, side % 2 ? 4 : 3);
    c.p.ceil_mode = hgr_test_rng_below(&rng, 2) == 0;
    c.p.count_include_pad = hgr_test_rng_below(&rng, 2) == 0;
    if (c.p.max) c.p.count_include_pad = false;
    bool fits = true;
    for (int axis = 0; axis < 2; ++axis) {
      if (c.p.padding[axis] > c.p.pool_size[axis]) c.p.padding[axis] = c.p.pool_size[axis];
      if (c.p.padding[axis + 2] > c.p.pool_size[axis]) c.p.padding[axis + 2] = c.p.pool_size[axis];
      fits = fits && c.x[2 + axis] + c.p.padding[axis] + c.p.padding[axis + 2] >= c.p.pool_size[axis];
    }
    if (!fits) continue;
    char padding[64], pool[32];
    snprintf(padding, sizeof(padding), "[%lld, %lld, %lld, %lld]", (long long)c.p.padding[0], (long long)c.p.padding[1],
             (long long)c.p.padding[2], (long long)c.p.padding[3]);
    snprintf(pool, sizeof(pool), "[%lld, %lld]", (long long)c.p.pool_size[0], (long long)c.p.pool_size[1]);
    c.padding_attr = padding;
    c.pool_attr = pool;
    check_cases(&c, 1, 100 + (uint64_t)made);
    ++made;
  }
}

/* A window that is the whole unpadded plane runs the global pool's kernel
 * (ResNet's final 7x7 average, also with ceil_mode at stride 2); with padding
 * (inception_v1's 7x7 over 6x6, padded at the end) it does not. */
static void whole_plane_windows_match_reference(void** state) {
  (void)state;
  static const pool_case_t cases[] = {
      {{1, 5, 7, 7}, Q(false, 7, 7, 1, 1, 0, 0, 0, 0, 1, 1, false, false), NULL, "7"},
      {{1, 5, 7, 7}, Q(false, 7, 7, 1, 1, 0, 0, 0, 0, 1, 1, false, true), NULL, "7"},
      {{1, 5, 7, 7}, Q(true, 7, 7, 1, 1, 0, 0, 0, 0, 1, 1, false, false), NULL, "7"},
      {{2, 3, 6, 9}, Q(false, 6, 9, 2, 2, 0, 0, 0, 0, 1, 1, true, true), NULL, "[6, 9]"},
      {{2, 3, 6, 9}, Q(true, 6, 9, 2, 2, 0, 0, 0, 0, 1, 1, true, false), NULL, "[6, 9]"},
      {{1, 4, 6, 6}, Q(false, 7, 7, 1, 1, 0, 0, 1, 1, 1, 1, false, false), "[0, 0, 1, 1]", "7"},
      {{1, 4, 6, 6}, Q(false, 7, 7, 1, 1, 0, 0, 1, 1, 1, 1, false, true), "[0, 0, 1, 1]", "7"},
  };
  check_cases(cases, COUNT(cases), 33);
}

/* Big inputs: a ResNet-sized stem pool, and long 1-D rows (22 000 columns: each
 * spread over work-items; rusticl computed wrong maxima when one work-item ran a
 * whole such row). Oclgrind, which simulates every work-item, gets smaller ones of
 * the same kinds. */
static void large_pools_match_reference(void** state) {
  (void)state;
  static const pool_case_t cases[] = {
      {{1, 64, 112, 112}, Q(true, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, false, false), "1", "[3, 3]"},
      {{2, 32, 57, 57}, Q(false, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, true, true), "1", "[3, 3]"},
      {{1, 1, 1, 22000}, Q(true, 1, 20, 1, 1, 0, 10, 0, 10, 1, 1, false, false), "[0, 10, 0, 10]", "[1, 20]"},
      {{1, 2, 1, 22000}, Q(false, 1, 200, 1, 10, 0, 100, 0, 100, 1, 10, false, true), "[0, 100, 0, 100]",
       "[1, 200]"},
  };
  static const pool_case_t simulated[] = {
      {{1, 4, 23, 23}, Q(true, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, false, false), "1", "[3, 3]"},
      {{2, 3, 13, 13}, Q(false, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, true, true), "1", "[3, 3]"},
      {{1, 1, 1, 700}, Q(true, 1, 20, 1, 1, 0, 10, 0, 10, 1, 1, false, false), "[0, 10, 0, 10]", "[1, 20]"},
  };
  if (hgr_optest_is_simulator(hgr_optest_device))
    check_cases(simulated, COUNT(simulated), 23);
  else
    check_cases(cases, COUNT(cases), 23);
}

static void global_pools_match_reference(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 24);
  static const int64_t shapes[][4] = {{1, 1, 1, 1}, {2, 3, 5, 7}, {1, 13, 1, 9}, {3, 5, 7, 1}, {1, 64, 56, 56}};
  for (size_t s = 0; s < COUNT(shapes); ++s) {
    if (shapes[s][1] * shapes[s][2] * shapes[s][3] > 10000 && hgr_optest_is_simulator(hgr_optest_device)) continue;
    for (int max = 0; max < 2; ++max) {
      hgr_optest_t t;
      hgr_optest_init(&t, max ? "global_max_pool2d" : "global_avg_pool2d", "\"layout\": \"NCHW\"");
      const int64_t* xshape = shapes[s];
      int64_t yshape[4] = {xshape[0], xshape[1], 1, 1};
      float* x = hgr_optest_input(&t, "float32", 4, xshape);
      float* y = hgr_optest_output(&t, "float32", 4, yshape);
      hgr_optest_fill(&t.inputs[0], &rng, -1, 1);
      /* the whole plane as one window */
      hgr_ref_pool2d_t p = {max != 0, {xshape[2], xshape[3]}, {1, 1}, {1, 1}, {0, 0, 0, 0}, false, false};
      hgr_ref_pool2d(x, xshape, y, yshape, &p);
      if (!max) hgr_optest_tolerance(&t, 1e-6, 2e-5);
      hgr_optest_check(hgr_optest_instance, hgr_optest_device, &t);
      hgr_optest_free(&t);
    }
  }
}

/* ---- what the ops reject -------------------------------------------------------------- */

static void expect_error(const char* op, const char* attrs, const int64_t* yshape, const char* message) {
  hgr_optest_t t;
  hgr_optest_init(&t, op, attrs);
  hgr_optest_input(&t, "float32", 4, (int64_t[]){1, 3, 8, 8});
  hgr_optest_output(&t, "float32", 4, yshape);
  char prefix[96];
  snprintf(prefix, sizeof(prefix), "node 1 '%s_node' (%s): ", op, op);
  ASSERT_STATUS(hgr_optest_create(hgr_optest_instance, hgr_optest_device, &t), HGR_STATUS_INVALID_ARGUMENT, prefix,
                message);
  hgr_optest_free(&t);
}

static void bad_attrs_and_shapes_are_rejected(void** state) {
  (void)state;
  const int64_t y4[4] = {1, 3, 4, 4}, y3[4] = {1, 3, 3, 3}, y1[4] = {1, 3, 1, 1};
  expect_error("max_pool2d", "\"pool_size\": \"2\", \"strides\": \"2\", \"layout\": \"NHWC\"", y4,
               "attr 'layout' = \"NHWC\" is not supported; hgr takes \"NCHW\"");
  expect_error("avg_pool2d", "\"pool_size\": \"2\", \"strides\": \"2\", \"out_layout\": \"NCHW4c\"", y4,
               "attr 'out_layout' = \"NCHW4c\"");
  expect_error("max_pool2d", "\"strides\": \"2\"", y4, "attr 'pool_size' is required");
  expect_error("max_pool2d", "\"pool_size\": \"[2, 2, 2]\", \"strides\": \"2\"", y4, "attr 'pool_size'");
  expect_error("avg_pool2d", "\"pool_size\": \"2\", \"strides\": \"2\", \"padding\": \"[0, 0, 0]\"", y4,
               "attr 'padding' = \"[0, 0, 0]\" has 3 values; it takes 1, 2 or 4");
  expect_error("max_pool2d", "\"pool_size\": \"2\", \"strides\": \"2\", \"ceil_mode\": \"maybe\"", y4,
               "attr 'ceil_mode' = \"maybe\" is not a bool");
  expect_error("max_pool2d", "\"pool_size\": \"2\", \"strides\": \"2\", \"count_include_pad\": \"1\"", y4,
               "unknown attr 'count_include_pad'");
  expect_error("max_pool2d", "\"pool_size\": \"2\"", y4,
               "output 0 (entry 1) should be shaped [1, 3, 7, 7], the graph says [1, 3, 4, 4]");
  expect_error("avg_pool2d", "\"pool_size\": \"3\", \"strides\": \"2\", \"ceil_mode\": \"1\"", y3,
               "output 0 (entry 1) should be shaped [1, 3, 4, 4], the graph says [1, 3, 3, 3]");
  expect_error("avg_pool2d", "\"pool_size\": \"3\", \"strides\": \"2\"", y4,
               "output 0 (entry 1) should be shaped [1, 3, 3, 3], the graph says [1, 3, 4, 4]");
  expect_error("max_pool2d", "\"pool_size\": \"9\"", y1, "is smaller than the pooling window");
  expect_error("global_avg_pool2d", "\"layout\": \"NHWC\"", y1, "attr 'layout' = \"NHWC\"");
  expect_error("global_max_pool2d", "\"axis\": \"1\"", y1, "unknown attr 'axis'");
  expect_error("global_max_pool2d", "", y4,
               "output 0 (entry 1) should be shaped [1, 3, 1, 1], the graph says [1, 3, 4, 4]");
}

int main(int argc, char** argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(max_pool_matches_reference),
      cmocka_unit_test(avg_pool_matches_reference),
      cmocka_unit_test(long_rows_match_reference),
      cmocka_unit_test(onnx_ceil_mode_drops_windows_starting_in_end_padding),
      cmocka_unit_test(row_blocked_pools_match_reference),
      cmocka_unit_test(row_blocked_pools_match_reference_on_random_shapes),
      cmocka_unit_test(whole_plane_windows_match_reference),
      cmocka_unit_test(large_pools_match_reference),
      cmocka_unit_test(global_pools_match_reference),
      cmocka_unit_test(bad_attrs_and_shapes_are_rejected),
  };
  return hgr_optest_main(argc, argv, "ops_pool", tests, sizeof(tests) / sizeof(tests[0]));
}
