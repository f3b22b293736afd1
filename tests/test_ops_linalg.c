/* dense, matmul and batch_matmul against tests/ref_linalg.c on random data
 * (argument: a device spec), through the executor; every GEMM tile variant of
 * kernels/linalg.cl launched directly; both also with output layouts (attrs
 * out_shape and out_axes, against the reference reshaped and transposed); plans for
 * devices with tiny limits; and the errors the ops report.
 *
 * Tolerance. The reference sums in double; the device sums K float32 products in
 * its own order (fused or not). That error is at most about K * 2^-24 * S, where
 * S = sum_l |a_il * b_lj| (+ |bias_j|), and about sqrt(K) * 2^-24 * S for random
 * signs, i.e. under 1e-6 * S for the K <= 300 used here. Every element is compared
 * with atol = 1e-5 * max S over the output (rtol 0): S barely varies between
 * elements of uniform random data, and a product lost or counted twice moves an
 * element by about S / K >= 3e-3 * S, far outside the bound. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "device_internal.h"
#include "ops.h"
#include "optest.h"
#include "ref_layout.h"
#include "ref_linalg.h"

/* Shapes this large run everywhere but on the simulator. */
static bool large_ok(void) { return !hgr_optest_is_simulator(hgr_optest_device); }

static float* abs_copy(const float* values, uint64_t count) {
  float* copy = malloc((count ? count : 1) * sizeof(float));
  assert_non_null(copy);
  for (uint64_t i = 0; i < count; ++i) copy[i] = fabsf(values[i]);
  return copy;
}

static double max_of(const float* values, uint64_t count) {
  double max = 0;
  for (uint64_t i = 0; i < count; ++i)
    if (values[i] > max) max = values[i];
  return max;
}

/* 1e-5 * max_ij (sum_l |a_il b_lj| + |bias_j|): the reference run on |a|, |b|, |bias|. */
static double dense_atol(const float* x, const float* w, const float* bias, int64_t rows, int64_t in,
                         int64_t units) {
  float* ax = abs_copy(x, (uint64_t)(rows * in));
  float* aw = abs_copy(w, (uint64_t)(units * in));
  float* ab = bias ? abs_copy(bias, (uint64_t)units) : NULL;
  float* bound = malloc((size_t)(rows * units + 1) * sizeof(float));
  assert_non_null(bound);
  hgr_ref_dense(ax, aw, ab, bound, rows, in, units);
  double atol = 1e-5 * max_of(bound, (uint64_t)(rows * units)) + 1e-30;
  free(ax);
  free(aw);
  free(ab);
  free(bound);
  return atol;
}

static double batch_matmul_atol(const float* a, const float* b, int64_t batch_a, int64_t batch_b, int64_t m,
                                int64_t n, int64_t k, bool transpose_a, bool transpose_b) {
  int64_t batch = batch_a > batch_b ? batch_a : batch_b;
  float* aa = abs_copy(a, (uint64_t)(batch_a * m * k));
  float* ab = abs_copy(b, (uint64_t)(batch_b * k * n));
  float* bound = malloc((size_t)(batch * m * n + 1) * sizeof(float));
  assert_non_null(bound);
  hgr_ref_batch_matmul(aa, ab, bound, batch_a, batch_b, m, n, k, transpose_a, transpose_b);
  double atol = 1e-5 * max_of(bound, (uint64_t)(batch * m * n)) + 1e-30;
  free(aa);
  free(ab);
  free(bound);
  return atol;
}

/* An output layout as the ops' attrs out_shape and out_axes give it: the result R
 * viewed as shape (ndim dims, 1 to 4), stored as that view transposed by axes. */
typedef struct out_view_t {
  int32_t ndim;
  int64_t shape[4];
  int32_t axes[4];
} out_view_t;

/* The count values of R as the layout stores them, numpy's transpose(reshape(R,
 * shape), axes), computed from the plain reference (malloc'd). */
static float* view_of(const float* result, uint64_t count, const out_view_t* view) {
  uint64_t view_count = 1;
  for (int32_t d = 0; d < view->ndim; ++d) view_count *= (uint64_t)view->shape[d];
  assert_int_equal(view_count, count);
  float* stored = malloc((count ? count : 1) * sizeof(float));
  assert_non_null(stored);
  ref_transpose(result, view->shape, view->ndim, view->axes, stored);
  return stored;
}

/* The output's shape: the view's dims in the order of its axes. */
static void view_output_shape(const out_view_t* view, int64_t* out_shape) {
  for (int32_t d = 0; d < view->ndim; ++d) out_shape[d] = view->shape[view->axes[d]];
}

/* The attrs out_shape and out_axes of view, as JSON members. */
static void view_attrs(const out_view_t* view, char* text, size_t size) {
  char shape[96] = "", axes[64] = "";
  for (int32_t d = 0; d < view->ndim; ++d) {
    size_t length = strlen(shape), axes_length = strlen(axes);
    snprintf(shape + length, sizeof(shape) - length, "%s%lld", d ? ", " : "", (long long)view->shape[d]);
    snprintf(axes + axes_length, sizeof(axes) - axes_length, "%s%d", d ? ", " : "", (int)view->axes[d]);
  }
  snprintf(text, size, "\"out_shape\": \"[%s]\", \"out_axes\": \"[%s]\"", shape, axes);
}

/* ---- through the executor --------------------------------------------------------------- */

/* dense of data shaped data_shape ([rows..., in]) with units outputs; bias when asked;
 * the units attr given when units_attr. */
static void check_dense(hgr_test_rng_t* rng, int32_t ndim, const int64_t* data_shape, int64_t units, bool bias,
                        bool units_attr) {
  char attrs[64] = "";
  if (units_attr) snprintf(attrs, sizeof(attrs), "\"units\": \"%lld\"", (long long)units);
  hgr_optest_t t;
  hgr_optest_init(&t, "dense", attrs);
  int64_t in = data_shape[ndim - 1], rows = 1;
  for (int32_t d = 0; d + 1 < ndim; ++d) rows *= data_shape[d];
  float* x = hgr_optest_input(&t, "float32", ndim, data_shape);
  float* w = hgr_optest_input(&t, "float32", 2, (int64_t[]){units, in});
  float* b = bias ? hgr_optest_input(&t, "float32", 1, (int64_t[]){units}) : NULL;
  int64_t out_shape[HGR_OPTEST_MAX_DIMS];
  memcpy(out_shape, data_shape, sizeof(int64_t) * (size_t)ndim);
  out_shape[ndim - 1] = units;
  float* y = hgr_optest_output(&t, "float32", ndim, out_shape);
  for (uint32_t i = 0; i < t.input_count; ++i) hgr_optest_fill(&t.inputs[i], rng, -1, 1);
  hgr_ref_dense(x, w, b, y, rows, in, units);
  hgr_optest_tolerance(&t, 0, dense_atol(x, w, b, rows, in, units));
  hgr_optest_check(hgr_optest_instance, hgr_optest_device, &t);
  hgr_optest_free(&t);
}

static void dense_matches_reference(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 11);
  check_dense(&rng, 1, (int64_t[]){1}, 1, false, false);          /* rank-1 data, all sizes 1 */
  check_dense(&rng, 1, (int64_t[]){17}, 3, true, true);           /* rank-1 data with bias */
  check_dense(&rng, 2, (int64_t[]){3, 5}, 7, false, true);
  check_dense(&rng, 2, (int64_t[]){1, 33}, 17, true, false);      /* one row */
  check_dense(&rng, 3, (int64_t[]){2, 3, 33}, 17, true, false);   /* rank-3 data */
  check_dense(&rng, 3, (int64_t[]){2, 1, 9}, 1, false, false);
  check_dense(&rng, 2, (int64_t[]){3, 0}, 4, true, false); /* in = 0: the bias alone */
  check_dense(&rng, 2, (int64_t[]){0, 5}, 4, true, false); /* no rows */
  /* one row: the matrix-vector kernel, float8 steps and a tail, partial column blocks */
  check_dense(&rng, 2, (int64_t[]){1, 8}, 4, true, false);
  check_dense(&rng, 2, (int64_t[]){1, 45}, 10, false, false);
  check_dense(&rng, 3, (int64_t[]){1, 1, 23}, 7, true, false);
  if (large_ok()) check_dense(&rng, 2, (int64_t[]){1, 1001}, 301, true, false);
  if (large_ok()) {
    check_dense(&rng, 2, (int64_t[]){65, 127}, 33, true, false);
    check_dense(&rng, 3, (int64_t[]){4, 64, 190}, 300, true, true);
    check_dense(&rng, 2, (int64_t[]){256, 190}, 300, false, false);
  } else {
    /* still more than one tile of the largest variants, with partial ones */
    check_dense(&rng, 2, (int64_t[]){67, 37}, 69, true, false);
  }
}

/* matmul of tensor_a shaped a_shape with a tensor_b giving n columns. */
static void check_matmul(hgr_test_rng_t* rng, int32_t ndim, const int64_t* a_shape, int64_t n, bool transpose_a,
                         bool transpose_b) {
  char attrs[128];
  /* the bools in each spelling the graphs use */
  snprintf(attrs, sizeof(attrs), "\"transpose_a\": \"%s\", \"transpose_b\": \"%s\"", transpose_a ? "True" : "0",
           transpose_b ? "1" : "False");
  hgr_optest_t t;
  hgr_optest_init(&t, "matmul", attrs);
  int64_t k = transpose_a ? a_shape[0] : a_shape[ndim - 1], m = transpose_a ? a_shape[1] : 1;
  for (int32_t d = 0; !transpose_a && d + 1 < ndim; ++d) m *= a_shape[d];
  float* a = hgr_optest_input(&t, "float32", ndim, a_shape);
  float* b = hgr_optest_input(&t, "float32", 2, transpose_b ? (int64_t[]){n, k} : (int64_t[]){k, n});
  int64_t out_shape[HGR_OPTEST_MAX_DIMS];
  memcpy(out_shape, a_shape, sizeof(int64_t) * (size_t)ndim);
  if (transpose_a) out_shape[0] = m;
  out_shape[ndim - 1] = n;
  float* c = hgr_optest_output(&t, "float32", ndim, out_shape);
  hgr_optest_fill(&t.inputs[0], rng, -1, 1);
  hgr_optest_fill(&t.inputs[1], rng, -1, 1);
  hgr_ref_batch_matmul(a, b, c, 1, 1, m, n, k, transpose_a, transpose_b);
  hgr_optest_tolerance(&t, 0, batch_matmul_atol(a, b, 1, 1, m, n, k, transpose_a, transpose_b));
  hgr_optest_check(hgr_optest_instance, hgr_optest_device, &t);
  hgr_optest_free(&t);
}

static void matmul_matches_reference_for_every_transpose(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 12);
  for (int transposes = 0; transposes < 4; ++transposes) {
    bool ta = transposes & 1, tb = transposes & 2;
    /* (m, k) as tensor_a [m, k] or, transposed, [k, m]; then n */
    static const int64_t small[][3] = {{1, 1, 1}, {3, 17, 1}, {1, 5, 9}, {13, 3, 21}};
    static const int64_t large[][3] = {{33, 65, 127}, {127, 1, 3}, {256, 190, 300}};
    for (size_t s = 0; s < 4; ++s) {
      int64_t m = small[s][0], k = small[s][1];
      check_matmul(&rng, 2, ta ? (int64_t[]){k, m} : (int64_t[]){m, k}, small[s][2], ta, tb);
    }
    for (size_t s = 0; large_ok() && s < 3; ++s) {
      int64_t m = large[s][0], k = large[s][1];
      check_matmul(&rng, 2, ta ? (int64_t[]){k, m} : (int64_t[]){m, k}, large[s][2], ta, tb);
    }
  }
  /* tensor_a of rank 1 and 3 (without transpose_a) */
  check_matmul(&rng, 1, (int64_t[]){17}, 5, false, false);
  check_matmul(&rng, 3, (int64_t[]){2, 3, 7}, 5, false, true);
  if (large_ok()) check_matmul(&rng, 3, (int64_t[]){3, 65, 33}, 127, false, false);
}

/* The fused epilogues the ops take (attr "activation" and its params), each checked
 * with and without a bias. */
typedef struct activation_case_t {
  const char* name;
  const char* attrs; /* the activation's attrs, JSON members after a comma */
  double alpha, a_min, a_max;
} activation_case_t;

static const activation_case_t activation_cases[] = {
    {"none", "", 0, 0, 0},
    {"relu", ", \"activation\": \"relu\"", 0, 0, 0},
    {"leaky_relu", ", \"activation\": \"leaky_relu\", \"alpha\": \"0.2\"", 0.2, 0, 0},
    {"clip", ", \"activation\": \"clip\", \"a_min\": \"-0.3\", \"a_max\": \"0.4\"", 0, -0.3, 0.4},
    {"gelu", ", \"activation\": \"gelu\"", 0, 0, 0},
    {"gelu_tanh", ", \"activation\": \"gelu_tanh\"", 0, 0, 0},
    {"sigmoid", ", \"activation\": \"sigmoid\"", 0, 0, 0},
    {"silu", ", \"activation\": \"silu\"", 0, 0, 0},
    {"hard_swish", ", \"activation\": \"hard_swish\"", 0, 0, 0},
    {"leaky_relu_clip", ", \"activation\": \"leaky_relu_clip\", \"alpha\": \"0.2\", \"a_min\": \"-0.3\", \"a_max\": \"inf\"",
     0.2, -0.3, INFINITY},
};
#define ACTIVATION_CASE_COUNT (sizeof(activation_cases) / sizeof(activation_cases[0]))

/* op ("dense", "matmul" or "batch_matmul") of a [batch, m, k] (without the batch
 * below rank 3; a [m, k] x w [n, k] for dense) and b [k, n] (or [n, k] with
 * transpose_b; [batch, ...] for batch_matmul), then the bias [n] (when bias) and
 * epilogue, against the reference GEMM followed by hgr_ref_gemm_epilogue. The
 * bound: the GEMM's, with the bias, times 1.2 (GELU's slope is at most 1.13) plus
 * 1e-6 for the activation's own float32 error. */
static void check_epilogue(hgr_test_rng_t* rng, const char* op, int64_t batch, int64_t m, int64_t n, int64_t k,
                           bool transpose_b, bool bias, const activation_case_t* act) {
  bool dense = !strcmp(op, "dense"), batched = !strcmp(op, "batch_matmul");
  if (dense) transpose_b = true;
  char attrs[256];
  snprintf(attrs, sizeof(attrs), "\"transpose_b\": \"%d\"%s", transpose_b, act->attrs);
  hgr_optest_t t;
  hgr_optest_init(&t, op, dense ? act->attrs + (act->attrs[0] ? 2 : 0) : attrs);
  int64_t a_shape[3] = {batch, m, k}, b_shape[3] = {batch, transpose_b ? n : k, transpose_b ? k : n};
  int32_t a_rank = batched || batch > 1 ? 3 : 2;
  float* a = hgr_optest_input(&t, "float32", a_rank, a_rank == 3 ? a_shape : a_shape + 1);
  float* b = hgr_optest_input(&t, "float32", batched ? 3 : 2, batched ? b_shape : b_shape + 1);
  float* bias_values = bias ? hgr_optest_input(&t, "float32", 1, (int64_t[]){n}) : NULL;
  int64_t c_shape[3] = {batch, m, n};
  float* c = hgr_optest_output(&t, "float32", a_rank, a_rank == 3 ? c_shape : c_shape + 1);
  for (uint32_t i = 0; i < t.input_count; ++i) hgr_optest_fill(&t.inputs[i], rng, -1, 1);
  /* matmul's rows of a rank-3 tensor_a are one GEMM of batch * m rows */
  int64_t rows = batched ? m : batch * m, gemms = batched ? batch : 1;
  hgr_ref_batch_matmul(a, b, c, gemms, gemms, rows, n, k, false, transpose_b);
  uint64_t count = (uint64_t)(batch * m * n);
  hgr_ref_gemm_epilogue(c, count, n, bias_values, act->name, act->alpha, act->a_min, act->a_max);
  double atol = batch_matmul_atol(a, b, gemms, gemms, rows, n, k, false, transpose_b);
  double largest_bias = 0;
  for (int64_t j = 0; bias && j < n; ++j) largest_bias = fmax(largest_bias, fabs(bias_values[j]));
  atol += 1e-5 * largest_bias;
  hgr_optest_tolerance(&t, 0, 1.2 * atol + 1e-6);
  hgr_optest_check(hgr_optest_instance, hgr_optest_device, &t);
  hgr_optest_free(&t);
}

/* Each activation with and without a bias on the GEMM's kernels: the tiled ones
 * (transposed B, partial tiles), the direct ones (contiguous rows, n past a strip),
 * the dot one (dense on PoCL), the matrix-vector one (one row, B transposed), and a
 * batch_matmul whose bias every batch shares. */
static void gemm_epilogue_matches_reference(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 15);
  for (size_t a = 0; a < ACTIVATION_CASE_COUNT; ++a) {
    for (int bias = 0; bias < 2; ++bias) {
      const activation_case_t* act = &activation_cases[a];
      check_epilogue(&rng, "matmul", 1, 13, 21, 17, true, bias, act);
      check_epilogue(&rng, "matmul", 2, 5, 40, 33, false, bias, act);
      check_epilogue(&rng, "matmul", 1, 1, 45, 23, true, bias, act);
      check_epilogue(&rng, "dense", 1, 9, 37, 19, true, bias, act);
      check_epilogue(&rng, "batch_matmul", 3, 7, 18, 5, false, bias, act);
      if (large_ok()) check_epilogue(&rng, "matmul", 1, 65, 130, 127, false, bias, act);
    }
  }
}

/* batch_matmul; attrs NULL: Relay's defaults (transpose_a false, transpose_b true). */
static void check_batch_matmul(hgr_test_rng_t* rng, int64_t batch_x, int64_t batch_y, int64_t m, int64_t n,
                               int64_t k, bool transpose_a, bool transpose_b, bool default_attrs) {
  char attrs[128] = "";
  if (!default_attrs)
    snprintf(attrs, sizeof(attrs), "\"transpose_a\": \"%s\", \"transpose_b\": \"%s\", \"out_dtype\": \"float32\"",
             transpose_a ? "true" : "false", transpose_b ? "true" : "false");
  hgr_optest_t t;
  hgr_optest_init(&t, "batch_matmul", attrs);
  float* x = hgr_optest_input(&t, "float32", 3, transpose_a ? (int64_t[]){batch_x, k, m} : (int64_t[]){batch_x, m, k});
  float* y = hgr_optest_input(&t, "float32", 3, transpose_b ? (int64_t[]){batch_y, n, k} : (int64_t[]){batch_y, k, n});
  int64_t batch = batch_x > batch_y ? batch_x : batch_y;
  float* c = hgr_optest_output(&t, "float32", 3, (int64_t[]){batch, m, n});
  hgr_optest_fill(&t.inputs[0], rng, -1, 1);
  hgr_optest_fill(&t.inputs[1], rng, -1, 1);
  hgr_ref_batch_matmul(x, y, c, batch_x, batch_y, m, n, k, transpose_a, transpose_b);
  hgr_optest_tolerance(&t, 0, batch_matmul_atol(x, y, batch_x, batch_y, m, n, k, transpose_a, transpose_b));
  hgr_optest_check(hgr_optest_instance, hgr_optest_device, &t);
  hgr_optest_free(&t);
}

static void batch_matmul_matches_reference_with_broadcast_batches(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 13);
  static const int64_t batches[][2] = {{1, 1}, {3, 3}, {1, 3}, {3, 1}};
  for (int transposes = 0; transposes < 4; ++transposes) {
    bool ta = transposes & 1, tb = transposes & 2;
    for (size_t s = 0; s < 4; ++s) {
      check_batch_matmul(&rng, batches[s][0], batches[s][1], 5, 3, 9, ta, tb, false);
      if (large_ok()) check_batch_matmul(&rng, batches[s][0], batches[s][1], 65, 33, 127, ta, tb, false);
    }
    check_batch_matmul(&rng, 2, 2, 1, 1, 1, ta, tb, false);
    check_batch_matmul(&rng, 1, 2, 3, 17, 1, ta, tb, false);
  }
  check_batch_matmul(&rng, 2, 1, 7, 5, 3, false, true, true); /* the defaults: y is [B, N, K] */
  if (large_ok()) check_batch_matmul(&rng, 2, 2, 256, 300, 190, false, true, true);
}

/* ---- tile variants and limits, launched directly -------------------------------------- */

typedef struct raw_t {
  const hgr_device_info_t* info;
  cl_device_id device;
  cl_context context;
  cl_command_queue queue;
  cl_program program;
} raw_t;

#define CL_CHECK(call)                                                        \
  do {                                                                        \
    cl_int error_ = (call);                                                   \
    if (error_ != CL_SUCCESS) fail_msg("%s failed: %d", #call, (int)error_); \
  } while (0)

/* A context of its own on the test's device, with kernels/linalg.cl built. */
static void raw_open(raw_t* raw) {
  size_t index;
  ASSERT_OK(hgr_instance_find_device(hgr_optest_instance, hgr_optest_device, &index));
  raw->device = hgr_optest_instance->devices[index].device;
  raw->info = hgr_instance_device(hgr_optest_instance, index);
  cl_int error;
  raw->context = clCreateContext(NULL, 1, &raw->device, NULL, NULL, &error);
  CL_CHECK(error);
  raw->queue = clCreateCommandQueue(raw->context, raw->device, 0, &error);
  CL_CHECK(error);
  size_t length;
  const char* source = hgr__kernel_source("linalg", &length);
  assert_non_null(source);
  raw->program = clCreateProgramWithSource(raw->context, 1, &source, &length, &error);
  CL_CHECK(error);
  CL_CHECK(clBuildProgram(raw->program, 1, &raw->device, "", NULL, NULL));
}

static void raw_close(raw_t* raw) {
  clReleaseProgram(raw->program);
  clReleaseCommandQueue(raw->queue);
  clReleaseContext(raw->context);
}

static cl_mem raw_buffer(const raw_t* raw, const float* values, uint64_t count) {
  cl_int error;
  /* an empty tensor gets one uninitialized float: nothing to copy from values */
  bool copy = values && count;
  cl_mem mem = clCreateBuffer(raw->context, CL_MEM_READ_WRITE | (copy ? CL_MEM_COPY_HOST_PTR : 0),
                              (count ? count : 1) * sizeof(float), copy ? (void*)values : NULL, &error);
  CL_CHECK(error);
  return mem;
}

/* The GEMM kernels' epilogue after the bias: act 0 none, 1 relu, 2 leaky_relu
 * (alpha), 3 clip (a_min, a_max), 4 gelu, 5 gelu_tanh, 6 sigmoid, 7 leaky_relu then clip,
 * 8 silu, 9 hard_swish, the kernels' last four arguments. */
typedef struct epilogue_t {
  int32_t act;
  float alpha, a_min, a_max;
} epilogue_t;

static const epilogue_t no_epilogue = {0, 0, 0, 0};

/* v after the epilogue, in float32 as the kernels compute it. */
static float apply_epilogue(const epilogue_t* e, float v) {
  if (e->act == 1) return v > 0.0f ? v : 0.0f;
  if (e->act == 2) return v < 0.0f ? v * e->alpha : v;
  if (e->act == 3) return fminf(fmaxf(v, e->a_min), e->a_max);
  if (e->act == 4) return (float)(0.5 * v * (1.0 + erf(v / sqrt(2.0))));
  if (e->act == 5)
    return (float)(0.5 * v * (1.0 + tanh(sqrt(2.0 / 3.14159265358979323846) * (v + 0.044715 * v * v * v))));
  if (e->act == 6) return (float)(1.0 / (1.0 + exp(-(double)v)));
  if (e->act == 7) return fminf(fmaxf(v < 0.0f ? v * e->alpha : v, e->a_min), e->a_max);
  if (e->act == 8) return (float)((double)v / (1.0 + exp(-(double)v)));
  if (e->act == 9) return (float)((double)v * fmin(fmax((double)v / 6.0 + 0.5, 0.0), 1.0));
  return v;
}

/* Segments of C's columns (kernels/linalg.cl's HGR_GEMM_SEG_PARAMS): count outputs
 * (2 or 3) of width columns each, segment s > 0 through strides[s - 1] (the layout's
 * out_s0 ... out_s3; the dims are segment 0's). */
typedef struct raw_segments_t {
  int32_t count, width;
  int32_t strides[2][4];
} raw_segments_t;

/* Launches kernel on (a, b, bias) into c, the ints then the epilogue, B's wrap and
 * the output layout (kernels/out_layout.h's 7 ints; NULL: plain, all 0) as its scalar
 * arguments, then the segments' (HGR_GEMM_SEG_PARAMS; segments NULL: none, C's
 * buffer twice and 9 zeros), then local_bytes of local memory when non-zero (the
 * packed direct variant's last argument), and returns c's count values (malloc'd);
 * with segments, each output holds c_count values, segment s's into out_segments[s -
 * 1] (malloc'd). */
static float* raw_run_segments(const raw_t* raw, cl_kernel kernel, const float* a, uint64_t a_count, const float* b,
                               uint64_t b_count, const float* bias, uint64_t bias_count, uint64_t c_count,
                               const int32_t* ints, uint32_t int_count, const epilogue_t* epilogue,
                               const int32_t* wrap, const int32_t* layout, const raw_segments_t* segments,
                               float** out_segments, size_t local_bytes, const hgr__launch_t* launch) {
  cl_mem mems[4] = {raw_buffer(raw, a, a_count), raw_buffer(raw, b, b_count),
                    bias ? raw_buffer(raw, bias, bias_count) : NULL, raw_buffer(raw, NULL, c_count)};
  if (!mems[2]) mems[2] = mems[0];
  cl_mem outputs[2] = {mems[3], mems[3]};
  for (int32_t s = 1; segments && s < segments->count; ++s) outputs[s - 1] = raw_buffer(raw, NULL, c_count);
  for (cl_uint i = 0; i < 4; ++i) CL_CHECK(clSetKernelArg(kernel, i, sizeof(cl_mem), &mems[i]));
  for (cl_uint i = 0; i < int_count; ++i) CL_CHECK(clSetKernelArg(kernel, 4 + i, sizeof(cl_int), &ints[i]));
  CL_CHECK(clSetKernelArg(kernel, 4 + int_count, sizeof(cl_int), &epilogue->act));
  CL_CHECK(clSetKernelArg(kernel, 5 + int_count, sizeof(cl_float), &epilogue->alpha));
  CL_CHECK(clSetKernelArg(kernel, 6 + int_count, sizeof(cl_float), &epilogue->a_min));
  CL_CHECK(clSetKernelArg(kernel, 7 + int_count, sizeof(cl_float), &epilogue->a_max));
  CL_CHECK(clSetKernelArg(kernel, 8 + int_count, sizeof(cl_int), &wrap[0]));
  CL_CHECK(clSetKernelArg(kernel, 9 + int_count, sizeof(cl_int), &wrap[1]));
  static const int32_t plain[7] = {0, 0, 0, 0, 0, 0, 0};
  for (cl_uint i = 0; i < 7; ++i)
    CL_CHECK(clSetKernelArg(kernel, 10 + int_count + i, sizeof(cl_int), layout ? &layout[i] : &plain[i]));
  int32_t seg_ints[9] = {segments ? segments->width : 0};
  for (int i = 0; segments && i < 8; ++i) seg_ints[1 + i] = segments->strides[i / 4][i % 4];
  for (cl_uint i = 0; i < 2; ++i) CL_CHECK(clSetKernelArg(kernel, 17 + int_count + i, sizeof(cl_mem), &outputs[i]));
  for (cl_uint i = 0; i < 9; ++i) CL_CHECK(clSetKernelArg(kernel, 19 + int_count + i, sizeof(cl_int), &seg_ints[i]));
  if (local_bytes) CL_CHECK(clSetKernelArg(kernel, 28 + int_count, local_bytes, NULL));
  CL_CHECK(clEnqueueNDRangeKernel(raw->queue, kernel, launch->work_dim, NULL, launch->global, launch->local, 0, NULL,
                                  NULL));
  float* c = malloc((c_count ? c_count : 1) * sizeof(float));
  assert_non_null(c);
  CL_CHECK(clEnqueueReadBuffer(raw->queue, mems[3], CL_TRUE, 0, c_count * sizeof(float), c, 0, NULL, NULL));
  for (int32_t s = 1; segments && s < segments->count; ++s) {
    out_segments[s - 1] = malloc((c_count ? c_count : 1) * sizeof(float));
    assert_non_null(out_segments[s - 1]);
    CL_CHECK(clEnqueueReadBuffer(raw->queue, outputs[s - 1], CL_TRUE, 0, c_count * sizeof(float),
                                 out_segments[s - 1], 0, NULL, NULL));
    clReleaseMemObject(outputs[s - 1]);
  }
  clReleaseMemObject(mems[0]);
  clReleaseMemObject(mems[1]);
  if (bias) clReleaseMemObject(mems[2]);
  clReleaseMemObject(mems[3]);
  return c;
}

static float* raw_run(const raw_t* raw, cl_kernel kernel, const float* a, uint64_t a_count, const float* b,
                      uint64_t b_count, const float* bias, uint64_t bias_count, uint64_t c_count,
                      const int32_t* ints, uint32_t int_count, const epilogue_t* epilogue, const int32_t* wrap,
                      const int32_t* layout, size_t local_bytes, const hgr__launch_t* launch) {
  return raw_run_segments(raw, kernel, a, a_count, b, b_count, bias, bias_count, c_count, ints, int_count, epilogue,
                          wrap, layout, NULL, NULL, local_bytes, launch);
}

static void expect_close(const float* got, const float* want, uint64_t count, double atol, const char* what) {
  for (uint64_t i = 0; i < count; ++i)
    if (!(fabs((double)got[i] - (double)want[i]) <= atol))
      fail_msg("%s on %s: element %llu is %.9g, expected %.9g (atol %g)", what, hgr_optest_device,
               (unsigned long long)i, got[i], want[i], atol);
}

/* The epilogues check_kernel runs, by act. */
static const epilogue_t epilogues[10] = {{0, 0, 0, 0},       {1, 0, 0, 0}, {2, 0.1f, 0, 0},
                                         {3, 0, -0.3f, 0.4f}, {4, 0, 0, 0}, {5, 0, 0, 0},
                                         {6, 0, 0, 0},        {7, 0.2f, -0.15f, 0.5f}, {8, 0, 0, 0},
                                         {9, 0, 0, 0}};

/* One GEMM through kernel: batch_a x [m, k] (or [k, m]) times batch_b x [k, n] (or
 * [n, k]), with no bias (bias_mode 0), bias [n] per column (1, dense's), bias [m]
 * per row (2, a 1x1 conv2d's) or bias [batch, m] (3, a grouped one's), then
 * epilogues[act], in the work-group size of the kernel's name; B in panels when
 * panel > 0 (then tb false and batch_b 1); C [batch, m, n] stored through view when
 * not NULL. */
static void check_kernel_layout(const raw_t* raw, cl_kernel kernel, const char* name, hgr_test_rng_t* rng,
                                int64_t batch_a, int64_t batch_b, int64_t m, int64_t n, int64_t k, bool ta, bool tb,
                                int bias_mode, int act, int64_t panel, const out_view_t* view);

static void check_kernel(const raw_t* raw, cl_kernel kernel, const char* name, hgr_test_rng_t* rng,
                         int64_t batch_a, int64_t batch_b, int64_t m, int64_t n, int64_t k, bool ta, bool tb,
                         int bias_mode, int act) {
  check_kernel_layout(raw, kernel, name, rng, batch_a, batch_b, m, n, k, ta, tb, bias_mode, act, 0, NULL);
}

static void check_kernel_panels(const raw_t* raw, cl_kernel kernel, const char* name, hgr_test_rng_t* rng,
                                int64_t batch_a, int64_t batch_b, int64_t m, int64_t n, int64_t k, bool ta, bool tb,
                                int bias_mode, int act, int64_t panel) {
  check_kernel_layout(raw, kernel, name, rng, batch_a, batch_b, m, n, k, ta, tb, bias_mode, act, panel, NULL);
}

/* B [k, n] in panels of `panel` columns, [ceil(n / panel), k, panel] (matmul's attr
 * b_panel), the last one padded with NaNs, which reach no stored column. */
static float* pack_panels(const float* b, int64_t k, int64_t n, int64_t panel, uint64_t* out_count) {
  int64_t panels = (n + panel - 1) / panel;
  *out_count = (uint64_t)(panels * k * panel);
  float* packed = malloc(*out_count * sizeof(float));
  assert_non_null(packed);
  for (int64_t p = 0; p < panels; ++p)
    for (int64_t l = 0; l < k; ++l)
      for (int64_t c = 0; c < panel; ++c)
        packed[(p * k + l) * panel + c] = p * panel + c < n ? b[l * n + p * panel + c] : NAN;
  return packed;
}

/* kernels/out_layout.h's arguments for view, from its definition: out_d1 ... out_d3,
 * the view's dims padded to 4 with leading 1s, then out_s0 ... out_s3, each padded
 * view axis's stride in the output (the output's axes are the view's in the order
 * of axes, contiguous). */
static void view_args(const out_view_t* view, int32_t* args) {
  int32_t pad = 4 - view->ndim;
  int64_t dims[4] = {1, 1, 1, 1}, strides[4] = {0, 0, 0, 0};
  for (int32_t d = 0; d < view->ndim; ++d) dims[pad + d] = view->shape[d];
  int64_t stride = 1;
  for (int32_t o = view->ndim - 1; o >= 0; --o) { /* the output's axes, innermost first */
    strides[pad + view->axes[o]] = stride;
    stride *= view->shape[view->axes[o]];
  }
  for (int a = 1; a < 4; ++a) args[a - 1] = (int32_t)dims[a];
  for (int a = 0; a < 4; ++a) args[3 + a] = (int32_t)strides[a];
}

static void check_kernel_layout(const raw_t* raw, cl_kernel kernel, const char* name, hgr_test_rng_t* rng,
                                int64_t batch_a, int64_t batch_b, int64_t m, int64_t n, int64_t k, bool ta, bool tb,
                                int bias_mode, int act, int64_t panel, const out_view_t* view) {
  int tx, ty, rm, rn, bk;
  assert_int_equal(sscanf(name, "hgr_gemm_%dx%d_%dx%d_k%d", &tx, &ty, &rm, &rn, &bk), 5);
  int64_t batch = batch_a > batch_b ? batch_a : batch_b;
  uint64_t a_count = (uint64_t)(batch_a * m * k), b_count = (uint64_t)(batch_b * k * n);
  uint64_t c_count = (uint64_t)(batch * m * n);
  float* a = malloc(a_count * sizeof(float));
  float* b = malloc(b_count * sizeof(float));
  int64_t bias_count = bias_mode == 3 ? (batch_a > batch_b ? batch_a : batch_b) * m : bias_mode == 2 ? m : n;
  float* bias = malloc((size_t)bias_count * sizeof(float));
  float* want = malloc(c_count * sizeof(float));
  assert_true(a && b && bias && want);
  for (uint64_t i = 0; i < a_count; ++i) a[i] = hgr_test_rng_float(rng, -1, 1);
  for (uint64_t i = 0; i < b_count; ++i) b[i] = hgr_test_rng_float(rng, -1, 1);
  for (int64_t j = 0; j < bias_count; ++j) bias[j] = bias_mode ? hgr_test_rng_float(rng, -1, 1) : 0.0f;
  hgr_ref_batch_matmul(a, b, want, batch_a, batch_b, m, n, k, ta, tb);
  for (uint64_t e = 0; e < c_count; ++e)
    want[e] = apply_epilogue(&epilogues[act],
                             want[e] + bias[bias_mode == 3   ? e / (uint64_t)n
                                            : bias_mode == 2 ? e / (uint64_t)n % (uint64_t)m
                                                             : e % (uint64_t)n]);
  /* the bias and GELU's slope (at most 1.13) within the 1e-5 added */
  double atol = 1.2 * batch_matmul_atol(a, b, batch_a, batch_b, m, n, k, ta, tb) + 1e-5;
  int32_t ints[10] = {(int32_t)m, (int32_t)n, (int32_t)k,
                      batch_a == 1 ? 0 : (int32_t)(m * k), ta ? 1 : (int32_t)k, ta ? (int32_t)m : 1,
                      batch_b == 1 ? 0 : (int32_t)(k * n), tb ? 1 : (int32_t)n, tb ? (int32_t)k : 1,
                      bias_mode};
  int32_t wrap[2] = {(int32_t)n, 0};
  if (panel) {
    assert_true(!tb && batch_b == 1);
    float* packed = pack_panels(b, k, n, panel, &b_count);
    free(b);
    b = packed;
    ints[7] = (int32_t)panel; /* b_depth; b_col stays 1 */
    wrap[0] = panel < n ? (int32_t)panel : (int32_t)n;
    wrap[1] = panel < n ? (int32_t)(k * panel) : 0;
  }
  hgr__launch_t launch = {3, {0}, {(size_t)tx, (size_t)ty, 1}, true};
  launch.global[0] = (size_t)((n + tx * rn - 1) / (tx * rn) * tx);
  launch.global[1] = (size_t)((m + ty * rm - 1) / (ty * rm) * ty);
  launch.global[2] = (size_t)batch;
  if (strstr(name, "_rows")) { /* the rows-first order: row blocks along the first dimension */
    size_t columns = launch.global[0];
    launch.global[0] = launch.global[1];
    launch.global[1] = columns;
    launch.local[0] = (size_t)ty;
    launch.local[1] = (size_t)tx;
  }
  int32_t layout[7];
  if (view) {
    view_args(view, layout);
    float* stored = view_of(want, c_count, view);
    free(want);
    want = stored;
  }
  float* got = raw_run(raw, kernel, a, a_count, b, b_count, bias_mode ? bias : NULL, (uint64_t)bias_count, c_count,
                       ints, 10, &epilogues[act], wrap, view ? layout : NULL,
                       /* the packed direct variant: k rows of its strip */
                       strstr(name, "_pack") ? (size_t)(k > 1 ? k : 1) * (size_t)rn * sizeof(float) : 0, &launch);
  char attrs[192] = "plain";
  if (view) view_attrs(view, attrs, sizeof(attrs));
  char what[384];
  snprintf(what, sizeof(what),
           "%s, batches %lld/%lld, m %lld, n %lld, k %lld, transpose_a %d, transpose_b %d, bias mode %d, act %d, "
           "panels of %lld, output %s",
           name, (long long)batch_a, (long long)batch_b, (long long)m, (long long)n, (long long)k, ta, tb, bias_mode,
           act, (long long)panel, attrs);
  expect_close(got, want, c_count, atol, what);
  free(got);
  free(a);
  free(b);
  free(bias);
  free(want);
}

/* kernel with C's columns split into `count` segments of `width` (HGR_GEMM_SEG_PARAMS,
 * a matmul of several outputs): A [m, k] times B [k, count * width] (in panels of
 * `panel` columns when non-zero) plus a bias per column, then relu; segment s stored
 * through view with axes[s] (view NULL: each segment contiguous [m, width]). The
 * expected values: the plain reference's columns of each segment, transposed on the
 * host. */
static void check_kernel_segments(const raw_t* raw, cl_kernel kernel, const char* name, hgr_test_rng_t* rng,
                                  int64_t m, int64_t width, int64_t k, int32_t count, int64_t panel,
                                  const out_view_t* view, const int32_t (*axes)[4]) {
  int tx, ty, rm, rn, bk;
  assert_int_equal(sscanf(name, "hgr_gemm_%dx%d_%dx%d_k%d", &tx, &ty, &rm, &rn, &bk), 5);
  int64_t n = count * width;
  uint64_t a_count = (uint64_t)(m * k), b_count = (uint64_t)(k * n), c_count = (uint64_t)(m * width);
  float* a = malloc(a_count * sizeof(float));
  float* b = malloc(b_count * sizeof(float));
  float* bias = malloc((size_t)n * sizeof(float));
  float* full = malloc((size_t)(m * n) * sizeof(float));
  float* segment = malloc(c_count * sizeof(float));
  assert_true(a && b && bias && full && segment);
  for (uint64_t i = 0; i < a_count; ++i) a[i] = hgr_test_rng_float(rng, -1, 1);
  for (uint64_t i = 0; i < b_count; ++i) b[i] = hgr_test_rng_float(rng, -1, 1);
  for (int64_t j = 0; j < n; ++j) bias[j] = hgr_test_rng_float(rng, -1, 1);
  hgr_ref_batch_matmul(a, b, full, 1, 1, m, n, k, false, false);
  for (int64_t e = 0; e < m * n; ++e) full[e] = apply_epilogue(&epilogues[1], full[e] + bias[e % n]);
  double atol = 1.2 * batch_matmul_atol(a, b, 1, 1, m, n, k, false, false) + 1e-5;
  int32_t ints[10] = {(int32_t)m, (int32_t)n, (int32_t)k, 0, (int32_t)k, 1, 0, (int32_t)n, 1, 1};
  int32_t wrap[2] = {(int32_t)n, 0};
  if (panel) {
    float* packed = pack_panels(b, k, n, panel, &b_count);
    free(b);
    b = packed;
    ints[7] = (int32_t)panel;
    wrap[0] = panel < n ? (int32_t)panel : (int32_t)n;
    wrap[1] = panel < n ? (int32_t)(k * panel) : 0;
  }
  hgr__launch_t launch = {3, {0}, {(size_t)tx, (size_t)ty, 1}, true};
  launch.global[0] = (size_t)((n + tx * rn - 1) / (tx * rn) * tx);
  launch.global[1] = (size_t)((m + ty * rm - 1) / (ty * rm) * ty);
  launch.global[2] = 1;
  if (strstr(name, "_rows")) {
    size_t columns = launch.global[0];
    launch.global[0] = launch.global[1];
    launch.global[1] = columns;
    launch.local[0] = (size_t)ty;
    launch.local[1] = (size_t)tx;
  }
  raw_segments_t segments = {count, (int32_t)width, {{0}}};
  int32_t layouts[3][7];
  out_view_t views[3];
  for (int32_t sg = 0; view && sg < count; ++sg) {
    views[sg] = *view;
    memcpy(views[sg].axes, axes[sg], sizeof(views[sg].axes));
    view_args(&views[sg], layouts[sg]);
    if (sg) memcpy(segments.strides[sg - 1], layouts[sg] + 3, sizeof(segments.strides[0]));
  }
  float* got[3] = {NULL, NULL, NULL};
  got[0] = raw_run_segments(raw, kernel, a, a_count, b, b_count, bias, (uint64_t)n, c_count, ints, 10, &epilogues[1],
                            wrap, view ? layouts[0] : NULL, &segments, got + 1,
                            strstr(name, "_pack") ? (size_t)k * (size_t)rn * sizeof(float) : 0, &launch);
  for (int32_t sg = 0; sg < count; ++sg) {
    for (int64_t i = 0; i < m; ++i)
      memcpy(segment + i * width, full + i * n + sg * width, (size_t)width * sizeof(float));
    float* want = view ? view_of(segment, c_count, &views[sg]) : segment;
    char what[256];
    snprintf(what, sizeof(what), "%s, m %lld, %d segments of %lld, k %lld, panels of %lld, segment %d%s", name,
             (long long)m, count, (long long)width, (long long)k, (long long)panel, sg, view ? " through its layout" : "");
    expect_close(got[sg], want, c_count, atol, what);
    if (want != segment) free(want);
    free(got[sg]);
  }
  free(a);
  free(b);
  free(bias);
  free(full);
  free(segment);
}

/* kernel (a block of bm x bn of C per work-group, bk deep; rm rows per work-item) with
 * the output layouts of attrs out_shape and out_axes, each on partial tiles: runs of
 * the output that are not multiples of the kernel's vectors (4, 16, 32), so a block's
 * row is stored partly as one vector and partly element by element, and layouts that
 * store every element alone. The expected values: the plain reference, reshaped and
 * transposed on the host. */
static void check_kernel_layouts(const raw_t* raw, cl_kernel kernel, const char* name, hgr_test_rng_t* rng,
                                 int64_t bm, int64_t bn, int64_t bk, int64_t rm) {
  /* the heads split: matmul's [B * S, H * D] as [B, S, H, D] transposed to [B, H, S,
   * D] (a transformer's projection into heads); runs of D = 12, past the tile's rows
   * and columns */
  int64_t s = bm / 2 + 2, h = bn / 12 + 2;
  check_kernel_layout(raw, kernel, name, rng, 1, 1, 2 * s, h * 12, bk + 3, false, false, 1, 0, 0,
                      &(out_view_t){4, {2, s, h, 12}, {0, 2, 1, 3}});
  /* the keys transposed: [B, S, H, D] to [B, H, D, S], whose innermost axis is S, so
   * every element is stored alone; D = 20, B transposed, a bias per row */
  h = bn / 20 + 2;
  check_kernel_layout(raw, kernel, name, rng, 1, 1, bm + 1, h * 20, bk + 1, false, true, 2, 1, 0,
                      &(out_view_t){4, {1, bm + 1, h, 20}, {0, 2, 3, 1}});
  /* a 2-D transpose, [m, n] to [n, m], A transposed, GELU */
  check_kernel_layout(raw, kernel, name, rng, 1, 1, bm + 3, bn + 5, bk, true, false, 1, 4, 0,
                      &(out_view_t){2, {bm + 3, bn + 5}, {1, 0}});
  /* the batch index in the view: batch_matmul's [G, M, D] for G = B * H heads as [B,
   * H, M, D] transposed to [B, M, H, D] (attention's P V joining its heads), with a
   * bias row per matrix, D = 20; then B shared by the batch and D = bn + 4, past a
   * tile, a last vector of 4 */
  check_kernel_layout(raw, kernel, name, rng, 6, 6, bm + 1, 20, bk + 2, false, false, 3, 2, 0,
                      &(out_view_t){4, {2, 3, bm + 1, 20}, {0, 2, 1, 3}});
  check_kernel_layout(raw, kernel, name, rng, 4, 1, rm + 2, bn + 4, bk, false, false, 0, 3, 0,
                      &(out_view_t){4, {2, 2, rm + 2, bn + 4}, {0, 2, 1, 3}});
  /* odd runs of 5, which each vector's stores cross, in a 3-D view (padded with a
   * leading 1): [S, H, 5] to [H, S, 5] */
  h = bn / 5 + 2;
  check_kernel_layout(raw, kernel, name, rng, 1, 1, bm - 1, h * 5, bk + 1, false, true, 0, 5, 0,
                      &(out_view_t){3, {bm - 1, h, 5}, {1, 0, 2}});
  /* B in panels of 32 columns (matmul's b_panel), the heads split: 9 runs of 12 over
   * 4 panels, the last partial */
  check_kernel_layout(raw, kernel, name, rng, 1, 1, 2 * rm + 3, 9 * 12, 19, false, false, 1, 1, 32,
                      &(out_view_t){3, {2 * rm + 3, 9, 12}, {1, 0, 2}});
  /* a 1-D view: mapped, yet the output is C as it is (one run of every element) */
  check_kernel_layout(raw, kernel, name, rng, 2, 2, bm + 1, bn + 3, bk, false, false, 1, 0, 0,
                      &(out_view_t){1, {2 * (bm + 1) * (bn + 3)}, {0}});
  /* C's columns in segments, one output each: q, k and v of one projection, [S, H, D]
   * to [H, S, D], [H, D, S] (every element stored alone) and [H, S, D], over partial
   * row blocks, a tile's strip crossing segments (width 32), in panels; then two
   * plain segments */
  static const int32_t heads[3][4] = {{1, 0, 2}, {1, 2, 0}, {1, 0, 2}};
  for (int64_t width = 32; width <= 64; width += 32) {
    int64_t rows = width == 32 ? bm + 3 : rm + 1;
    check_kernel_segments(raw, kernel, name, rng, rows, width, bk + 5, 3, 0,
                          &(out_view_t){3, {rows, width / 16, 16}, {0}}, heads);
    check_kernel_segments(raw, kernel, name, rng, rows, width, bk + 2, 3, 32,
                          &(out_view_t){3, {rows, width / 8, 8}, {0}}, heads);
  }
  check_kernel_segments(raw, kernel, name, rng, bm + 1, 32, bk + 1, 2, 0, NULL, NULL);
}

/* Every hgr_gemm_* kernel of the file (found by name, so a new variant is tested
 * without touching this test; the direct ones' rows-first twins *_rows launched with
 * their dimensions swapped), on one full tile and partial ones in each dimension
 * (m, n, k not multiples of its tile), for every transpose, each bias mode and each
 * epilogue, and with the output layouts (on the simulator too). */
static void every_gemm_kernel_matches_reference(void** state) {
  (void)state;
  raw_t raw;
  raw_open(&raw);
  char names[4096];
  CL_CHECK(clGetProgramInfo(raw.program, CL_PROGRAM_KERNEL_NAMES, sizeof(names), names, NULL));
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 14);
  int variants = 0;
  for (char* name = strtok(names, ";"); name; name = strtok(NULL, ";")) {
    if (strncmp(name, "hgr_gemm_", 9)) continue;
    int tx, ty, rm, rn, bk;
    assert_int_equal(sscanf(name, "hgr_gemm_%dx%d_%dx%d_k%d", &tx, &ty, &rm, &rn, &bk), 5);
    cl_int error;
    cl_kernel kernel = clCreateKernel(raw.program, name, &error);
    CL_CHECK(error);
    /* the large variants need more local memory or larger work-groups than
     * rusticl and Oclgrind have (the plan never picks them there) */
    size_t work_group;
    cl_ulong local_bytes;
    CL_CHECK(clGetKernelWorkGroupInfo(kernel, raw.device, CL_KERNEL_WORK_GROUP_SIZE, sizeof(work_group), &work_group,
                                      NULL));
    CL_CHECK(clGetKernelWorkGroupInfo(kernel, raw.device, CL_KERNEL_LOCAL_MEM_SIZE, sizeof(local_bytes), &local_bytes,
                                      NULL));
    bool rows_first = strstr(name, "_rows") != NULL; /* work-groups ty x tx */
    if ((size_t)(tx * ty) > work_group || (size_t)(rows_first ? ty : tx) > raw.info->max_work_item_sizes[0] ||
        (size_t)(rows_first ? tx : ty) > raw.info->max_work_item_sizes[1] || local_bytes > raw.info->local_mem_bytes) {
      print_message("%s does not fit %s (%zu items, %llu bytes of local memory): not run\n", name, hgr_optest_device,
                    work_group, (unsigned long long)local_bytes);
      clReleaseKernel(kernel);
      continue;
    }
    int64_t bm = ty * rm, bn = tx * rn;
    for (int transposes = 0; transposes < 4; ++transposes) {
      bool ta = transposes & 1, tb = transposes & 2;
      /* The simulator gets the partial tiles with two transposes that take all four
       * copy paths (rows of A, columns of A, rows of B, columns of B) between them. */
      if (large_ok() || transposes == 0 || transposes == 3)
        check_kernel(&raw, kernel, name, &rng, 1, 1, bm + 3, bn + 5, (large_ok() ? 2 : 1) * bk + 3, ta, tb,
                     transposes % 3, transposes);
      if (large_ok() || transposes == 1 || transposes == 2)
        check_kernel(&raw, kernel, name, &rng, 1, 2, bm, bn, bk, ta, tb, (transposes + 1) % 3, transposes);
      check_kernel(&raw, kernel, name, &rng, 2, 1, 1, 1, 1, ta, tb, (transposes + 2) % 3, transposes);
      /* the GELUs of a matmul's fused epilogue, with its bias per column, on partial
       * tiles (and two of the transposes on the simulator) */
      if (large_ok() || transposes == 0 || transposes == 3)
        check_kernel(&raw, kernel, name, &rng, 1, 1, bm + 1, bn + 3, bk + 5, ta, tb, 1, 4 + transposes % 2);
      /* a dense head's sigmoid, its bias per column, on partial tiles */
      if (large_ok() || transposes == 1)
        check_kernel(&raw, kernel, name, &rng, 1, 1, bm + 2, bn + 1, bk + 3, ta, tb, 1, 6);
      /* a conv's leaky relu with a clip after it (a 1x1 conv2d's GEMM: bias per row) */
      if (large_ok() || transposes == 2)
        check_kernel(&raw, kernel, name, &rng, 1, 2, bm + 1, bn + 2, bk + 1, false, false, 2, 7);
      /* a conv's SiLU and HardSwish (YOLO's, MobileNetV3's 1x1 convolutions) */
      if (large_ok() || transposes == 1 || transposes == 2)
        check_kernel(&raw, kernel, name, &rng, 1, 2, bm + 2, bn + 1, bk + 2, false, false, 2, 8 + (transposes & 1));
      /* a 1x1 conv2d's GEMM: A shared by the batch, B's rows contiguous */
      check_kernel(&raw, kernel, name, &rng, 1, 2, bm - 1, bn + 3, bk + 1, false, false, 2, transposes);
      /* a grouped one's: a batch of As, one bias row per row of the whole batch */
      check_kernel(&raw, kernel, name, &rng, 3, 3, bm + 1, bn - 3, bk - 1, false, false, 3, 3 - transposes);
      /* the direct variant (k1, each work-item rm x rn of C): a depth past its unrolled
       * steps, rows past a work-item's block, and columns past a whole strip, whose last
       * strip it reads shifted left (and with the transposes, its gathered loops) */
      if (bk == 1 && (large_ok() || transposes == 0 || transposes == 3))
        check_kernel(&raw, kernel, name, &rng, 1, 1, 2 * rm + 1, 3 * rn + 7, 67, ta, tb, transposes % 4,
                     transposes);
      /* B in panels of 32 columns (matmul's b_panel): several panels, the last partial, a
       * strip of columns past the tile's; a single partial panel (no wrap); rows of A
       * past a block, both layouts of A */
      if (transposes < 2 && (large_ok() || transposes == 0)) {
        check_kernel_panels(&raw, kernel, name, &rng, 1, 1, 2 * rm + 3, 3 * 32 + 7, 37, ta, false, 1, transposes, 32);
        check_kernel_panels(&raw, kernel, name, &rng, 2, 1, rm + 1, 4 * 32, bk + 2, ta, false, 3, 4, 32);
        check_kernel_panels(&raw, kernel, name, &rng, 1, 1, 3, 20, 9, ta, false, 0, 0, 32);
      }
      /* the packed direct variant: a 7 x 7 image's rows (49 floats, not 64-byte aligned)
       * over several groups of rows and images, the last group mostly past m */
      if (strstr(name, "_pack") && transposes == 0 && large_ok())
        check_kernel(&raw, kernel, name, &rng, 1, 2, 2 * bm + 5, 49, 300, false, false, 2, 1);
      /* the dot variant (dot products along K, 8 at a time) on its own layout, B
       * transposed: a depth below 8, a last partial step after whole ones, fewer
       * columns than a work-item's rn, a partial last strip and rows past m */
      if (strstr(name, "_dot") && transposes == 2) {
        check_kernel(&raw, kernel, name, &rng, 1, 1, bm + 3, 7, 5, false, true, 1, 0);
        check_kernel(&raw, kernel, name, &rng, 1, 1, bm + 3, 2 * rn + 1, 19, false, true, 1, 4);
        check_kernel(&raw, kernel, name, &rng, 1, 1, rm + 1, 2 * rn + 1, 19, false, true, 1, 5);
        check_kernel(&raw, kernel, name, &rng, 1, 1, rm - 1, rn - 1, 8 * 5 + 3, false, true, 1, 2);
        check_kernel(&raw, kernel, name, &rng, 2, 2, 2 * bm + 1, 3 * rn + 2, large_ok() ? 8 * 40 + 7 : 8 * 3 + 7,
                     false, true, 3, 3);
      }
    }
    check_kernel_layouts(&raw, kernel, name, &rng, bm, bn, bk, rm);
    clReleaseKernel(kernel);
    ++variants;
  }
  assert_true(variants >= 3);
  raw_close(&raw);
}

/* The plan of a node for a device with the given limits (the executor always uses
 * the device's own). */
static hgr_status_t plan_for(const hgr_optest_t* t, const hgr__limits_t* limits, hgr_graph_t** out_graph,
                             hgr__op_ctx_t* ctx) {
  char* json = hgr_optest_graph_json(t);
  hgr_status_t status = hgr_graph_load_json(json, strlen(json), out_graph);
  free(json);
  if (!status) status = hgr__op_plan(hgr_allocator_system(), *out_graph, t->input_count, NULL, limits, ctx);
  return status;
}

/* Devices with small work-groups or little local memory still get a GEMM: the plan
 * takes a variant within the limits, and it computes the right values. */
static void tiny_device_limits_get_a_variant_that_fits(void** state) {
  (void)state;
  raw_t raw;
  raw_open(&raw);
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 15);
  static const hgr__limits_t limits[] = {
      {1, {1, 1, 1}, 32768, 0},    {4, {4, 4, 4}, 32768, 0},       {1024, {1, 1024, 64}, 32768, 0},
      {16, {16, 16, 16}, 8192, 0}, {256, {256, 256, 256}, 600, 0}, {64, {64, 64, 64}, 16384, 0},
      {4096, {4096, 4096, 4096}, 1 << 20, 0},
  };
  for (size_t s = 0; s < sizeof(limits) / sizeof(limits[0]); ++s) {
    int64_t m = 37, n = 21, k = 19;
    hgr_optest_t t;
    hgr_optest_init(&t, "dense", NULL);
    float* x = hgr_optest_input(&t, "float32", 2, (int64_t[]){m, k});
    float* w = hgr_optest_input(&t, "float32", 2, (int64_t[]){n, k});
    float* bias = hgr_optest_input(&t, "float32", 1, (int64_t[]){n});
    float* y = hgr_optest_output(&t, "float32", 2, (int64_t[]){m, n});
    for (uint32_t i = 0; i < 3; ++i) hgr_optest_fill(&t.inputs[i], &rng, -1, 1);
    hgr_ref_dense(x, w, bias, y, m, k, n);
    hgr_graph_t* graph = NULL;
    hgr__op_ctx_t ctx;
    ASSERT_OK(plan_for(&t, &limits[s], &graph, &ctx));
    assert_int_equal(ctx.launch_count, 1);
    const hgr__launch_plan_t* plan = &ctx.launches[0];
    int tx, ty, rm, rn, bk;
    assert_int_equal(sscanf(plan->kernel, "hgr_gemm_%dx%d_%dx%d_k%d", &tx, &ty, &rm, &rn, &bk), 5);
    size_t items = plan->launch.local[0] * plan->launch.local[1] * plan->launch.local[2];
    assert_true(items <= limits[s].max_work_group);
    for (int d = 0; d < 3; ++d) assert_true(plan->launch.local[d] <= limits[s].max_work_item[d]);
    assert_true((uint64_t)(2 * (ty * rm + tx * rn) * bk * 4) <= limits[s].local_mem_bytes);
    assert_int_equal(plan->launch.local[0], tx);
    assert_int_equal(plan->launch.local[1], ty);
    cl_int error;
    cl_kernel kernel = clCreateKernel(raw.program, plan->kernel, &error);
    CL_CHECK(error);
    int32_t ints[10];
    assert_int_equal(plan->arg_count, 38);
    assert_int_equal(plan->args[18].i, n); /* no wrap */
    assert_int_equal(plan->args[19].i, 0);
    for (uint32_t i = 20; i < 38; ++i) { /* the plain output layout, no segments (C's output twice more) */
      bool output = i == 27 || i == 28;
      assert_int_equal(plan->args[i].kind, output ? HGR__ARG_OUTPUT : HGR__ARG_INT);
      assert_int_equal(output ? plan->args[i].index : (uint32_t)plan->args[i].i, 0);
    }
    assert_int_equal(plan->args[9 + 4].i, 1); /* bias per column */
    assert_int_equal(plan->args[14].kind, HGR__ARG_INT);
    assert_int_equal(plan->args[14].i, 0); /* no activation */
    assert_true(plan->args[2].kind == HGR__ARG_INPUT && plan->args[2].index == 2);
    for (uint32_t i = 0; i < 10; ++i) {
      assert_int_equal(plan->args[4 + i].kind, HGR__ARG_INT);
      ints[i] = plan->args[4 + i].i;
    }
    float* got = raw_run(&raw, kernel, x, (uint64_t)(m * k), w, (uint64_t)(n * k), bias, (uint64_t)n,
                         (uint64_t)(m * n), ints, 10, &no_epilogue, (int32_t[]){plan->args[18].i, plan->args[19].i},
                         NULL, 0, &plan->launch);
    char what[128];
    snprintf(what, sizeof(what), "dense with %s for max_work_group %zu", plan->kernel, limits[s].max_work_group);
    expect_close(got, y, (uint64_t)(m * n), dense_atol(x, w, bias, m, k, n), what);
    free(got);
    clReleaseKernel(kernel);
    hgr__op_ctx_free(&ctx);
    hgr_graph_release(graph);
    hgr_optest_free(&t);
  }
  /* less local memory than the smallest tile needs */
  hgr_optest_t t;
  hgr_optest_init(&t, "matmul", NULL);
  hgr_optest_input(&t, "float32", 2, (int64_t[]){2, 3});
  hgr_optest_input(&t, "float32", 2, (int64_t[]){3, 4});
  hgr_optest_output(&t, "float32", 2, (int64_t[]){2, 4});
  hgr__limits_t none = {64, {64, 64, 64}, 256, 0};
  hgr_graph_t* graph = NULL;
  hgr__op_ctx_t ctx;
  ASSERT_STATUS(plan_for(&t, &none, &graph, &ctx), HGR_STATUS_INVALID_ARGUMENT,
                "node 2 'matmul_node' (matmul): no GEMM tile fits the device", "256 bytes of local memory");
  hgr_graph_release(graph);
  hgr_optest_free(&t);
  raw_close(&raw);
}

/* ---- output layouts through the executor ------------------------------------------------- */

/* The GEMM tile candidates (ops_linalg.c's gemm_variants). */
#define GEMM_CANDIDATE_COUNT 11

/* A GEMM op: op ("dense", "matmul" or "batch_matmul") of a [batch, m, k] (rank 2
 * without a batch; a matmul's rows of a rank-3 a are one GEMM of batch * m rows) and
 * B [k, n] ([n, k] with transpose_b, always for dense's weight; [batch, ...] for
 * batch_matmul), with matmul's B in panels of `panel` columns (attr b_panel) when
 * panel > 0. */
typedef struct gemm_case_t {
  const char* op;
  int64_t batch, m, n, k;
  bool transpose_b;
  int64_t panel;
} gemm_case_t;

/* Case c with a bias [n] when bias and the epilogue act, its result R stored through
 * view (attrs out_shape and out_axes), the output shaped as the transposed view; on
 * tile candidate `candidate` when force (one that does not fit gives way to the
 * rule's). The expected values: the plain reference, reshaped and transposed on the
 * host; the tolerance check_epilogue's. When kernel is not NULL, the plan for a
 * roomy device must launch it. */
static void check_out_layout(hgr_test_rng_t* rng, const gemm_case_t* c, bool bias, const activation_case_t* act,
                             const out_view_t* view, bool force, uint32_t candidate, const char* kernel) {
  bool dense = !strcmp(c->op, "dense"), batched = !strcmp(c->op, "batch_matmul");
  bool tb = dense || c->transpose_b;
  char attrs[512];
  view_attrs(view, attrs, sizeof(attrs));
  size_t length = strlen(attrs);
  if (!dense) snprintf(attrs + length, sizeof(attrs) - length, ", \"transpose_b\": \"%d\"", tb);
  length = strlen(attrs);
  if (c->panel)
    snprintf(attrs + length, sizeof(attrs) - length, ", \"b_panel\": \"%lld\", \"units\": \"%lld\"",
             (long long)c->panel, (long long)c->n);
  length = strlen(attrs);
  snprintf(attrs + length, sizeof(attrs) - length, "%s", act->attrs);
  hgr_optest_t t;
  hgr_optest_init(&t, c->op, attrs);
  int64_t a_shape[3] = {c->batch, c->m, c->k};
  int32_t a_rank = batched || c->batch > 1 ? 3 : 2;
  float* a = hgr_optest_input(&t, "float32", a_rank, a_rank == 3 ? a_shape : a_shape + 1);
  hgr_optest_fill(&t.inputs[0], rng, -1, 1);
  int64_t rows = batched ? c->m : c->batch * c->m, gemms = batched ? c->batch : 1;
  uint64_t b_count = (uint64_t)(gemms * c->k * c->n);
  float* b = malloc((b_count ? b_count : 1) * sizeof(float));
  assert_non_null(b);
  for (uint64_t i = 0; i < b_count; ++i) b[i] = hgr_test_rng_float(rng, -1, 1);
  if (c->panel) {
    assert_true(!tb && gemms == 1);
    uint64_t packed_count;
    float* packed = pack_panels(b, c->k, c->n, c->panel, &packed_count);
    float* input =
        hgr_optest_input(&t, "float32", 3, (int64_t[]){(c->n + c->panel - 1) / c->panel, c->k, c->panel});
    memcpy(input, packed, packed_count * sizeof(float));
    free(packed);
  } else {
    int64_t b_shape[3] = {gemms, tb ? c->n : c->k, tb ? c->k : c->n};
    float* input = hgr_optest_input(&t, "float32", batched ? 3 : 2, batched ? b_shape : b_shape + 1);
    memcpy(input, b, b_count * sizeof(float));
  }
  float* bias_values = bias ? hgr_optest_input(&t, "float32", 1, (int64_t[]){c->n}) : NULL;
  if (bias) hgr_optest_fill(&t.inputs[2], rng, -1, 1);
  uint64_t count = (uint64_t)(c->batch * c->m * c->n);
  float* result = malloc((count ? count : 1) * sizeof(float));
  assert_non_null(result);
  hgr_ref_batch_matmul(a, b, result, gemms, gemms, rows, c->n, c->k, false, tb);
  hgr_ref_gemm_epilogue(result, count, c->n, bias_values, act->name, act->alpha, act->a_min, act->a_max);
  float* stored = view_of(result, count, view);
  int64_t out_shape[4];
  view_output_shape(view, out_shape);
  float* out = hgr_optest_output(&t, "float32", view->ndim, out_shape);
  memcpy(out, stored, count * sizeof(float));
  double atol = batch_matmul_atol(a, b, gemms, gemms, rows, c->n, c->k, false, tb);
  double largest_bias = 0;
  for (int64_t j = 0; bias && j < c->n; ++j) largest_bias = fmax(largest_bias, fabs(bias_values[j]));
  hgr_optest_tolerance(&t, 0, 1.2 * (atol + 1e-5 * largest_bias) + 1e-6);
  t.force_candidate = force;
  t.candidate = candidate;
  if (kernel) {
    hgr__limits_t roomy = {1024, {1024, 1024, 1024}, 64 * 1024, 0};
    hgr_graph_t* graph = NULL;
    hgr__op_ctx_t ctx;
    ASSERT_OK(plan_for(&t, &roomy, &graph, &ctx));
    assert_int_equal(ctx.launch_count, 1);
    assert_string_equal(ctx.launches[0].kernel, kernel);
    hgr__op_ctx_free(&ctx);
    hgr_graph_release(graph);
  }
  hgr_optest_check(hgr_optest_instance, hgr_optest_device, &t);
  free(b);
  free(result);
  free(stored);
  hgr_optest_free(&t);
}

/* dense, matmul and batch_matmul with attrs out_shape and out_axes write their result
 * R as transpose(reshape(R, out_shape), out_axes): the heads split ([B * S, H * D] as
 * [B, H, S, D]), the keys transposed ([B, H, D, S]: every element stored alone), a 2-D
 * transpose, batch_matmul's heads joined ([B * H, M, D] as [B, M, H, D]: the batch
 * index in the view), B in panels; matmul and batch_matmul on every tile candidate,
 * each epilogue with a bias on the rule's; an empty result. */
static void gemm_out_layout_matches_reference(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 16);
  const activation_case_t* none = &activation_cases[0];
  for (uint32_t candidate = 0; candidate < GEMM_CANDIDATE_COUNT; ++candidate) {
    check_out_layout(&rng, &(gemm_case_t){"matmul", 1, 10, 36, 7, false, 0}, false, none,
                     &(out_view_t){4, {2, 5, 3, 12}, {0, 2, 1, 3}}, true, candidate, NULL);
    check_out_layout(&rng, &(gemm_case_t){"matmul", 1, 10, 36, 7, true, 0}, false, none,
                     &(out_view_t){4, {2, 5, 3, 12}, {0, 2, 3, 1}}, true, candidate, NULL);
    check_out_layout(&rng, &(gemm_case_t){"matmul", 1, 13, 21, 17, false, 0}, true, &activation_cases[1],
                     &(out_view_t){2, {13, 21}, {1, 0}}, true, candidate, NULL);
    check_out_layout(&rng, &(gemm_case_t){"batch_matmul", 6, 5, 20, 9, false, 0}, false, none,
                     &(out_view_t){4, {2, 3, 5, 20}, {0, 2, 1, 3}}, true, candidate, NULL);
    /* 9 heads of 12 in panels of 32 columns, the last panel partial (its padding NaNs
     * reach no stored element) */
    check_out_layout(&rng, &(gemm_case_t){"matmul", 1, 7, 108, 19, false, 32}, true, &activation_cases[4],
                     &(out_view_t){3, {7, 9, 12}, {1, 0, 2}}, true, candidate, NULL);
    if (large_ok()) { /* more than one tile of every candidate, with partial ones */
      check_out_layout(&rng, &(gemm_case_t){"matmul", 2, 65, 80, 127, false, 0}, true, none,
                       &(out_view_t){4, {2, 65, 4, 20}, {0, 2, 1, 3}}, true, candidate, NULL);
      check_out_layout(&rng, &(gemm_case_t){"batch_matmul", 12, 65, 64, 33, true, 0}, false, none,
                       &(out_view_t){4, {2, 6, 65, 64}, {0, 2, 1, 3}}, true, candidate, NULL);
      check_out_layout(&rng, &(gemm_case_t){"matmul", 1, 130, 200, 64, false, 0}, false, none,
                       &(out_view_t){4, {2, 65, 10, 20}, {0, 2, 3, 1}}, true, candidate, NULL);
    }
  }
  /* no rows: an empty output, its layout's dim of 0 (the kernels divide by the dims) */
  check_out_layout(&rng, &(gemm_case_t){"matmul", 1, 0, 12, 5, false, 0}, false, none,
                   &(out_view_t){3, {0, 3, 4}, {1, 0, 2}}, false, 0, NULL);
  for (size_t a = 0; a < ACTIVATION_CASE_COUNT; ++a) {
    check_out_layout(&rng, &(gemm_case_t){"dense", 2, 5, 36, 17, true, 0}, true, &activation_cases[a],
                     &(out_view_t){4, {2, 5, 3, 12}, {0, 2, 1, 3}}, false, 0, NULL);
    check_out_layout(&rng, &(gemm_case_t){"batch_matmul", 6, 7, 18, 5, false, 0}, true, &activation_cases[a],
                     &(out_view_t){4, {2, 3, 7, 18}, {0, 2, 1, 3}}, false, 0, NULL);
  }
}

/* A matmul of `count` outputs: A [m, k] times B [k, count * width] ([n, k] with
 * transpose_b; in panels of `panel` columns when non-zero) plus a bias, output s the
 * columns of segment s, stored through view with out_axes axes[s] (view NULL: plain);
 * on tile candidate `candidate` when force. The expected values: the reference's
 * columns of each segment, transposed on the host. */
static void check_segments_op(hgr_test_rng_t* rng, int64_t m, int64_t k, int64_t width, int32_t count, bool tb,
                              int64_t panel, const out_view_t* view, const int32_t (*axes)[4], bool force,
                              uint32_t candidate) {
  int64_t n = count * width;
  char attrs[512];
  size_t length = (size_t)snprintf(attrs, sizeof(attrs), "\"transpose_b\": \"%d\"", tb);
  if (panel)
    length += (size_t)snprintf(attrs + length, sizeof(attrs) - length, ", \"b_panel\": \"%lld\", \"units\": \"%lld\"",
                               (long long)panel, (long long)n);
  out_view_t views[3];
  if (view) {
    length += (size_t)snprintf(attrs + length, sizeof(attrs) - length, ", \"out_shape\": \"[");
    for (int32_t d = 0; d < view->ndim; ++d)
      length += (size_t)snprintf(attrs + length, sizeof(attrs) - length, "%s%lld", d ? ", " : "", (long long)view->shape[d]);
    length += (size_t)snprintf(attrs + length, sizeof(attrs) - length, "]\", \"out_axes\": \"[");
    for (int32_t sg = 0; sg < count; ++sg) {
      views[sg] = *view;
      memcpy(views[sg].axes, axes[sg], sizeof(views[sg].axes));
      for (int32_t d = 0; d < view->ndim; ++d)
        length += (size_t)snprintf(attrs + length, sizeof(attrs) - length, "%s%d", sg || d ? ", " : "", axes[sg][d]);
    }
    snprintf(attrs + length, sizeof(attrs) - length, "]\"");
  }
  hgr_optest_t t;
  hgr_optest_init(&t, "matmul", attrs);
  float* a = hgr_optest_input(&t, "float32", 2, (int64_t[]){m, k});
  hgr_optest_fill(&t.inputs[0], rng, -1, 1);
  float* b = malloc((size_t)(k * n) * sizeof(float));
  assert_non_null(b);
  for (int64_t i = 0; i < k * n; ++i) b[i] = hgr_test_rng_float(rng, -1, 1);
  if (panel) {
    uint64_t packed_count;
    float* packed = pack_panels(b, k, n, panel, &packed_count);
    memcpy(hgr_optest_input(&t, "float32", 3, (int64_t[]){(n + panel - 1) / panel, k, panel}), packed,
           packed_count * sizeof(float));
    free(packed);
  } else {
    memcpy(hgr_optest_input(&t, "float32", 2, tb ? (int64_t[]){n, k} : (int64_t[]){k, n}), b,
           (size_t)(k * n) * sizeof(float));
  }
  float* bias = hgr_optest_input(&t, "float32", 1, (int64_t[]){n});
  hgr_optest_fill(&t.inputs[2], rng, -1, 1);
  float* full = malloc((size_t)(m * n) * sizeof(float));
  float* segment = malloc((size_t)(m * width) * sizeof(float));
  assert_true(full && segment);
  hgr_ref_batch_matmul(a, b, full, 1, 1, m, n, k, false, tb);
  for (int64_t e = 0; e < m * n; ++e) full[e] += bias[e % n];
  for (int32_t sg = 0; sg < count; ++sg) {
    for (int64_t i = 0; i < m; ++i) memcpy(segment + i * width, full + i * n + sg * width, (size_t)width * sizeof(float));
    uint64_t c_count = (uint64_t)(m * width);
    float* want = view ? view_of(segment, c_count, &views[sg]) : segment;
    int64_t out_shape[4] = {m, width};
    if (view) view_output_shape(&views[sg], out_shape);
    memcpy(hgr_optest_output(&t, "float32", view ? view->ndim : 2, out_shape), want, c_count * sizeof(float));
    hgr_optest_tolerance(&t, 0, 1.2 * batch_matmul_atol(a, b, 1, 1, m, n, k, false, tb) + 1e-5);
    if (want != segment) free(want);
  }
  t.force_candidate = force;
  t.candidate = candidate;
  hgr_optest_check(hgr_optest_instance, hgr_optest_device, &t);
  free(b);
  free(full);
  free(segment);
  hgr_optest_free(&t);
}

/* A matmul of 2 or 3 outputs splits its columns evenly, each output a segment through
 * its own layout (one GEMM for attention's q, k and v, passes/fuse_sibling_gemms.c):
 * the heads split for q and v and transposed for k, in panels, on every tile
 * candidate; B transposed and one row of A (where one output plans the gemv, which
 * takes no segments); two plain segments; then the errors: segments not multiples of
 * 32 columns, more than 3 outputs (the registry's), a wrong count of axes. */
static void matmul_outputs_split_columns(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 29);
  static const int32_t heads[3][4] = {{1, 0, 2}, {1, 2, 0}, {1, 0, 2}};
  for (uint32_t candidate = 0; candidate < GEMM_CANDIDATE_COUNT; ++candidate) {
    check_segments_op(&rng, 7, 19, 64, 3, false, 32, &(out_view_t){3, {7, 4, 16}, {0}}, heads, true, candidate);
    check_segments_op(&rng, 10, 9, 32, 3, false, 0, &(out_view_t){3, {10, 2, 16}, {0}}, heads, true, candidate);
    if (large_ok())
      check_segments_op(&rng, 130, 40, 96, 3, false, 32, &(out_view_t){3, {130, 8, 12}, {0}}, heads, true,
                        candidate);
  }
  check_segments_op(&rng, 1, 24, 32, 3, true, 0, &(out_view_t){3, {1, 4, 8}, {0}}, heads, false, 0);
  check_segments_op(&rng, 5, 12, 32, 2, false, 0, NULL, NULL, false, 0);
  static const struct {
    const char* attrs;
    uint32_t outputs;
    int64_t columns, width;
    const char* expected;
  } bad[] = {
      {"", 2, 96, 48, "2 outputs split the product's 96 columns: evenly, each a multiple of 32 columns"},
      {"", 4, 128, 32, "takes 1 to 3 output(s), the node has 4"},
      {"\"out_shape\": \"[3, 2, 16]\", \"out_axes\": \"[1, 0, 2, 1, 0, 2]\"", 3, 96, 32,
       "for an op of 3 outputs: one, or one per output in turn"},
  };
  for (size_t c = 0; c < sizeof(bad) / sizeof(bad[0]); ++c) {
    hgr_optest_t t;
    hgr_optest_init(&t, "matmul", bad[c].attrs);
    hgr_optest_input(&t, "float32", 2, (int64_t[]){3, 5});
    hgr_optest_input(&t, "float32", 2, (int64_t[]){5, bad[c].columns});
    for (uint32_t o = 0; o < bad[c].outputs; ++o) hgr_optest_output(&t, "float32", 2, (int64_t[]){3, bad[c].width});
    ASSERT_STATUS(hgr_optest_create(hgr_optest_instance, hgr_optest_device, &t), HGR_STATUS_INVALID_ARGUMENT,
                  "node 2 'matmul_node' (matmul)", bad[c].expected);
    hgr_optest_free(&t);
  }
}

/* One row of A (dense on one row of data, batch_matmul's decoder step with y [G, N,
 * K]) plans the matrix-vector kernel, hgr_gemv_t4, which stores its 4 columns through
 * the layout: runs of 5 that its 4 columns cross, every element alone (the
 * innermost axis not the view's last), the batch index in the view. */
static void one_row_out_layout_matches_reference(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 17);
  check_out_layout(&rng, &(gemm_case_t){"dense", 1, 1, 15, 23, true, 0}, true, &activation_cases[1],
                   &(out_view_t){3, {1, 3, 5}, {0, 2, 1}}, false, 0, "hgr_gemv_t4");
  check_out_layout(&rng, &(gemm_case_t){"dense", 1, 1, 10, 45, true, 0}, false, &activation_cases[0],
                   &(out_view_t){3, {1, 2, 5}, {2, 1, 0}}, false, 0, "hgr_gemv_t4");
  check_out_layout(&rng, &(gemm_case_t){"batch_matmul", 6, 1, 10, 9, true, 0}, true, &activation_cases[5],
                   &(out_view_t){4, {2, 3, 1, 10}, {1, 0, 2, 3}}, false, 0, "hgr_gemv_t4");
  check_out_layout(&rng, &(gemm_case_t){"matmul", 1, 1, 36, 40, true, 0}, false, &activation_cases[0],
                   &(out_view_t){4, {1, 1, 3, 12}, {0, 2, 3, 1}}, false, 0, "hgr_gemv_t4");
}

/* ---- errors ------------------------------------------------------------------------------ */

/* Creating an executor for op with the given inputs and output fails naming each of
 * the expected substrings. */
static void expect_rejected(const char* op, const char* attrs, uint32_t input_count, const int32_t* ndims,
                            const int64_t (*shapes)[4], int32_t out_ndim, const int64_t* out_shape,
                            const char* expected1, const char* expected2) {
  hgr_optest_t t;
  hgr_optest_init(&t, op, attrs);
  for (uint32_t i = 0; i < input_count; ++i) hgr_optest_input(&t, "float32", ndims[i], shapes[i]);
  hgr_optest_output(&t, "float32", out_ndim, out_shape);
  ASSERT_STATUS(hgr_optest_create(hgr_optest_instance, hgr_optest_device, &t), HGR_STATUS_INVALID_ARGUMENT,
                expected1, expected2);
  hgr_optest_free(&t);
}

/* A GEMM whose A and B rows are contiguous plans the direct variant (no local memory)
 * where at least one strip of its columns fits, its packed form where B's rows are
 * not 64-byte aligned and the strip fits the device's local memory (64 KiB here: k
 * up to 1024); transposed operands (but an A of at most 256 KiB stored transposed),
 * narrow outputs and devices without room for its work-group plan a tiled one. The
 * direct variant runs rows first (*_k1_rows) where B is the larger operand and A at
 * most 2 MiB. */
static void contiguous_matmul_plans_the_direct_gemm(void** state) {
  (void)state;
  static const struct {
    int64_t m, n, k;
    bool transpose_a, transpose_b;
    size_t max_work_group;
    bool direct, pack, rows;
  } cases[] = {
      {512, 512, 512, false, false, 1024, true, false, false}, {64, 49, 2048, false, false, 1024, true, false, false},
      {64, 49, 1024, false, false, 1024, true, true, false},   {256, 196, 256, false, false, 1024, true, true, false},
      {64, 200, 64, false, false, 1024, true, true, false},    {64, 784, 64, false, false, 1024, true, false, true},
      {64, 49, 64, false, false, 8, true, false, false},       {512, 512, 512, true, false, 1024, false, false, false},
      {512, 512, 512, false, true, 1024, false, false, false}, {64, 15, 64, false, false, 1024, false, false, false},
      {64, 64, 64, false, false, 4, false, false, false},      {197, 1536, 384, false, false, 1024, true, false, true},
      {600, 1024, 1024, false, false, 1024, true, false, false},
      /* A transposed and small (a transposed convolution's weights): direct, rows first */
      {96, 2560, 24, true, false, 1024, true, false, true},
  };
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); ++c) {
    char attrs[96];
    snprintf(attrs, sizeof(attrs), "\"transpose_a\": \"%s\", \"transpose_b\": \"%s\"",
             cases[c].transpose_a ? "True" : "0", cases[c].transpose_b ? "True" : "0");
    hgr_optest_t t;
    hgr_optest_init(&t, "matmul", attrs);
    int64_t m = cases[c].m, n = cases[c].n, k = cases[c].k;
    hgr_optest_input(&t, "float32", 2, cases[c].transpose_a ? (int64_t[]){k, m} : (int64_t[]){m, k});
    hgr_optest_input(&t, "float32", 2, cases[c].transpose_b ? (int64_t[]){n, k} : (int64_t[]){k, n});
    hgr_optest_output(&t, "float32", 2, (int64_t[]){m, n});
    hgr__limits_t limits = {cases[c].max_work_group, {1024, 1024, 1024}, 64 * 1024, 0};
    for (int d = 0; d < 3; ++d)
      if (limits.max_work_item[d] > limits.max_work_group) limits.max_work_item[d] = limits.max_work_group;
    hgr_graph_t* graph = NULL;
    hgr__op_ctx_t ctx;
    ASSERT_OK(plan_for(&t, &limits, &graph, &ctx));
    assert_int_equal(ctx.launch_count, 1);
    const char* kernel = ctx.launches[0].kernel;
    size_t length = strlen(kernel);
    bool pack = length > 8 && !strcmp(kernel + length - 8, "_k1_pack");
    bool rows = length > 8 && !strcmp(kernel + length - 8, "_k1_rows");
    bool direct = pack || rows || (length > 3 && !strcmp(kernel + length - 3, "_k1"));
    if (direct != cases[c].direct || pack != cases[c].pack || rows != cases[c].rows)
      fail_msg("matmul %lldx%lldx%lld (transpose_a %d, transpose_b %d, work-groups of %zu) planned %s",
               (long long)m, (long long)n, (long long)k, cases[c].transpose_a, cases[c].transpose_b,
               cases[c].max_work_group, kernel);
    hgr__op_ctx_free(&ctx);
    hgr_graph_release(graph);
    hgr_optest_free(&t);
  }
}

/* dense (B stored transposed) plans the dot variant on PoCL's CPU drivers, from the
 * tuning id's platform and device name, at the shapes it was measured on (a CRNN's
 * LSTM input projection and classifier, a streaming LSTM's projection) and at
 * shapes not multiples of its block; rusticl and PoCL's other drivers, and matmul
 * with B's rows contiguous (the direct 6 x 16 variant's layout), plan another. */
static void dense_plans_the_dot_gemm_on_pocl_cpu_drivers(void** state) {
  (void)state;
  static const struct {
    const char* device;
    bool dot;
  } devices[] = {
      {"Portable Computing Language|pthread-skylake-avx512-AMD EPYC|OpenCL 3.0 PoCL 3.1|3.1", true},
      {"Portable Computing Language|cpu-x86-64|OpenCL 3.0 PoCL 6.0|6.0", true},
      {"Portable Computing Language|NVIDIA H200|OpenCL 3.0 PoCL 3.1|3.1", false},
      {"rusticl|llvmpipe (LLVM 15.0.6, 256 bits)|OpenCL 3.0|23.2.1", false},
  };
  static const struct {
    const char* op;
    int64_t m, n, k;
  } shapes[] = {{"dense", 64, 2048, 1024}, {"dense", 64, 37, 512}, {"dense", 63, 256, 64},
                {"dense", 5, 3, 7},        {"matmul", 64, 256, 64}};
  hgr__limits_t roomy = {1024, {1024, 1024, 1024}, 64 * 1024, 0};
  for (size_t d = 0; d < sizeof(devices) / sizeof(devices[0]); ++d)
    for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); ++s) {
      bool dense = !strcmp(shapes[s].op, "dense");
      int64_t m = shapes[s].m, n = shapes[s].n, k = shapes[s].k;
      hgr_optest_t t;
      hgr_optest_init(&t, shapes[s].op, NULL);
      hgr_optest_input(&t, "float32", 2, (int64_t[]){m, k});
      hgr_optest_input(&t, "float32", 2, dense ? (int64_t[]){n, k} : (int64_t[]){k, n});
      hgr_optest_output(&t, "float32", 2, (int64_t[]){m, n});
      char* json = hgr_optest_graph_json(&t);
      hgr_graph_t* graph = NULL;
      ASSERT_OK(hgr_graph_load_json(json, strlen(json), &graph));
      free(json);
      hgr__tuning_t tuning = {NULL, devices[d].device, HGR_TUNING_OFF, 0};
      hgr__op_ctx_t ctx;
      ASSERT_OK(hgr__op_plan_tuned(hgr_allocator_system(), graph, t.input_count, NULL, &roomy, &tuning, &ctx));
      assert_int_equal(ctx.launch_count, 1);
      const hgr__launch_plan_t* plan = &ctx.launches[0];
      bool dot = !strcmp(plan->kernel, "hgr_gemm_1x16_4x4_k1_dot");
      if (dot != (devices[d].dot && dense))
        fail_msg("%s %lldx%lldx%lld on %s planned %s", shapes[s].op, (long long)m, (long long)n, (long long)k,
                 devices[d].device, plan->kernel);
      if (dot) {
        /* a work-item per 4 x 4 block of C, 16 of them a group */
        assert_int_equal(plan->launch.global[0], (size_t)((n + 3) / 4));
        assert_int_equal(plan->launch.global[1], (size_t)((m + 63) / 64 * 16));
        assert_int_equal(plan->launch.local[0], 1);
        assert_int_equal(plan->launch.local[1], 16);
      }
      hgr__op_ctx_free(&ctx);
      hgr_graph_release(graph);
      hgr_optest_free(&t);
    }
}

/* dense on one row of data plans the matrix-vector kernel, several rows the GEMM. */
static void one_row_dense_plans_the_gemv(void** state) {
  (void)state;
  hgr__limits_t roomy = {1024, {1024, 1024, 1024}, 64 * 1024, 0};
  for (int64_t rows = 1; rows <= 2; ++rows) {
    hgr_optest_t t;
    hgr_optest_init(&t, "dense", NULL);
    hgr_optest_input(&t, "float32", 2, (int64_t[]){rows, 9216});
    hgr_optest_input(&t, "float32", 2, (int64_t[]){4096, 9216});
    hgr_optest_output(&t, "float32", 2, (int64_t[]){rows, 4096});
    hgr_graph_t* graph = NULL;
    hgr__op_ctx_t ctx;
    ASSERT_OK(plan_for(&t, &roomy, &graph, &ctx));
    assert_int_equal(ctx.launch_count, 1);
    if (rows == 1) {
      assert_string_equal(ctx.launches[0].kernel, "hgr_gemv_t4");
      assert_int_equal(ctx.launches[0].launch.global[0], 1024);
      assert_int_equal(ctx.launches[0].launch.local[0], 1);
    } else {
      assert_true(!strncmp(ctx.launches[0].kernel, "hgr_gemm_", 9));
    }
    hgr__op_ctx_free(&ctx);
    hgr_graph_release(graph);
    hgr_optest_free(&t);
  }
}

static void bad_shapes_and_attrs_are_rejected(void** state) {
  (void)state;
  /* dense: mismatched K, wrong units attr, wrong bias shape, unknown attr, bad out_dtype */
  expect_rejected("dense", NULL, 2, (int32_t[]){2, 2}, (const int64_t[][4]){{3, 5}, {4, 6}}, 2, (int64_t[]){3, 4},
                  "node 2 'dense_node' (dense): input 1 (weight) is shaped [4, 6]", "must be [units, 5]");
  expect_rejected("dense", "\"units\": \"5\"", 2, (int32_t[]){2, 2}, (const int64_t[][4]){{3, 5}, {4, 5}}, 2,
                  (int64_t[]){3, 4}, "node 2 'dense_node' (dense): attr 'units' = 5", "has 4 units");
  expect_rejected("dense", "\"units\": \"four\"", 2, (int32_t[]){2, 2}, (const int64_t[][4]){{3, 5}, {4, 5}}, 2,
                  (int64_t[]){3, 4}, "node 2 'dense_node' (dense): attr 'units' = \"four\" is not an integer", "");
  expect_rejected("dense", NULL, 3, (int32_t[]){2, 2, 1}, (const int64_t[][4]){{3, 5}, {4, 5}, {5}}, 2,
                  (int64_t[]){3, 4}, "node 3 'dense_node' (dense): input 2 (bias) is shaped [5]", "must be [4]");
  expect_rejected("dense", NULL, 3, (int32_t[]){2, 2, 2}, (const int64_t[][4]){{3, 5}, {4, 5}, {1, 4}}, 2,
                  (int64_t[]){3, 4}, "node 3 'dense_node' (dense): input 2 (bias) is shaped [1, 4]", "");
  expect_rejected("dense", "\"transpose_b\": \"1\"", 2, (int32_t[]){2, 2}, (const int64_t[][4]){{3, 5}, {4, 5}}, 2,
                  (int64_t[]){3, 4}, "node 2 'dense_node' (dense): unknown attr 'transpose_b'", "units out_dtype");
  expect_rejected("dense", "\"out_dtype\": \"int32\"", 2, (int32_t[]){2, 2}, (const int64_t[][4]){{3, 5}, {4, 5}},
                  2, (int64_t[]){3, 4}, "node 2 'dense_node' (dense): attr 'out_dtype' = \"int32\"", "float32");
  expect_rejected("dense", NULL, 2, (int32_t[]){2, 2}, (const int64_t[][4]){{3, 5}, {4, 5}}, 2, (int64_t[]){4, 3},
                  "node 2 'dense_node' (dense): output 0", "should be shaped [3, 4]");
  expect_rejected("dense", NULL, 2, (int32_t[]){0, 2}, (const int64_t[][4]){{0}, {4, 5}}, 1, (int64_t[]){4},
                  "node 2 'dense_node' (dense): input 0 (data) is shaped []", "at least 1-D");
  /* matmul: mismatched K for each transpose_b, a bad transpose value, units, rank */
  expect_rejected("matmul", NULL, 2, (int32_t[]){2, 2}, (const int64_t[][4]){{3, 5}, {6, 4}}, 2, (int64_t[]){3, 4},
                  "node 2 'matmul_node' (matmul): input 0 (tensor_a) is shaped [3, 5] and input 1 (tensor_b) [6, 4]",
                  "reduced dimensions (5 and 6) differ");
  expect_rejected("matmul", "\"transpose_b\": \"True\"", 2, (int32_t[]){2, 2}, (const int64_t[][4]){{3, 5}, {5, 4}},
                  2, (int64_t[]){3, 5}, "node 2 'matmul_node' (matmul)", "reduced dimensions (5 and 4) differ");
  expect_rejected("matmul", "\"transpose_a\": \"maybe\"", 2, (int32_t[]){2, 2}, (const int64_t[][4]){{3, 5}, {5, 4}},
                  2, (int64_t[]){3, 4}, "node 2 'matmul_node' (matmul): attr 'transpose_a' = \"maybe\"", "not a bool");
  expect_rejected("matmul", "\"units\": \"3\"", 2, (int32_t[]){2, 2}, (const int64_t[][4]){{3, 5}, {5, 4}}, 2,
                  (int64_t[]){3, 4}, "node 2 'matmul_node' (matmul): attr 'units' = 3", "has 4 units");
  expect_rejected("matmul", "\"transpose_a\": \"1\"", 2, (int32_t[]){3, 2},
                  (const int64_t[][4]){{2, 3, 5}, {3, 4}}, 3, (int64_t[]){2, 5, 4},
                  "node 2 'matmul_node' (matmul): input 0 (tensor_a, with transpose_a) is shaped [2, 3, 5]",
                  "must be 2-D");
  expect_rejected("matmul", "\"beta\": \"1\"", 2, (int32_t[]){2, 2}, (const int64_t[][4]){{3, 5}, {5, 4}}, 2,
                  (int64_t[]){3, 4}, "node 2 'matmul_node' (matmul): unknown attr 'beta'", "");
  /* batch_matmul: mismatched K under the default transpose_b, batches, bad value */
  expect_rejected("batch_matmul", NULL, 2, (int32_t[]){3, 3}, (const int64_t[][4]){{2, 3, 5}, {2, 5, 4}}, 3,
                  (int64_t[]){2, 3, 5},
                  "node 2 'batch_matmul_node' (batch_matmul): input 0 (x) is shaped [2, 3, 5] and input 1 (y) "
                  "[2, 5, 4]",
                  "transpose_b=true their reduced dimensions (5 and 4) differ");
  expect_rejected("batch_matmul", NULL, 2, (int32_t[]){3, 3}, (const int64_t[][4]){{2, 3, 5}, {3, 4, 5}}, 3,
                  (int64_t[]){3, 3, 4}, "node 2 'batch_matmul_node' (batch_matmul)",
                  "batches 2 and 3 do not broadcast");
  expect_rejected("batch_matmul", "\"transpose_b\": \"2\"", 2, (int32_t[]){3, 3},
                  (const int64_t[][4]){{2, 3, 5}, {2, 4, 5}}, 3, (int64_t[]){2, 3, 4},
                  "node 2 'batch_matmul_node' (batch_matmul): attr 'transpose_b' = \"2\"", "not a bool");
  expect_rejected("batch_matmul", "\"units\": \"4\"", 2, (int32_t[]){3, 3},
                  (const int64_t[][4]){{2, 3, 5}, {2, 4, 5}}, 3, (int64_t[]){2, 3, 4},
                  "node 2 'batch_matmul_node' (batch_matmul): unknown attr 'units'", "");
  expect_rejected("batch_matmul", NULL, 2, (int32_t[]){2, 3}, (const int64_t[][4]){{3, 5}, {2, 4, 5}}, 3,
                  (int64_t[]){2, 3, 4}, "node 2 'batch_matmul_node' (batch_matmul): input 0 (x) is shaped [3, 5]",
                  "must be 3-D");
  /* the fused epilogue: a bias of the wrong length or rank, an unknown activation,
   * an activation's attr with another one, clip without its bounds */
  expect_rejected("matmul", NULL, 3, (int32_t[]){2, 2, 1}, (const int64_t[][4]){{3, 5}, {5, 4}, {5}}, 2,
                  (int64_t[]){3, 4}, "node 3 'matmul_node' (matmul): input 2 (bias) is shaped [5]",
                  "it must be [4] (tensor_b's columns)");
  expect_rejected("matmul", NULL, 3, (int32_t[]){2, 2, 2}, (const int64_t[][4]){{3, 5}, {5, 4}, {1, 4}}, 2,
                  (int64_t[]){3, 4}, "node 3 'matmul_node' (matmul): input 2 (bias) is shaped [1, 4]", "must be [4]");
  expect_rejected("batch_matmul", NULL, 3, (int32_t[]){3, 3, 1},
                  (const int64_t[][4]){{2, 3, 5}, {2, 4, 5}, {3}}, 3, (int64_t[]){2, 3, 4},
                  "node 3 'batch_matmul_node' (batch_matmul): input 2 (bias) is shaped [3]", "must be [4] (y's columns)");
  expect_rejected("matmul", "\"activation\": \"swish\"", 2, (int32_t[]){2, 2},
                  (const int64_t[][4]){{3, 5}, {5, 4}}, 2, (int64_t[]){3, 4},
                  "node 2 'matmul_node' (matmul): attr 'activation' = \"swish\"", "gelu_tanh");
  expect_rejected("dense", "\"activation\": \"gelu\", \"alpha\": \"0.1\"", 2, (int32_t[]){2, 2},
                  (const int64_t[][4]){{3, 5}, {4, 5}}, 2, (int64_t[]){3, 4},
                  "node 2 'dense_node' (dense): attr 'alpha' = \"0.1\" is given", "'activation' = \"gelu\"");
  expect_rejected("matmul", "\"activation\": \"clip\", \"a_min\": \"0\"", 2, (int32_t[]){2, 2},
                  (const int64_t[][4]){{3, 5}, {5, 4}}, 2, (int64_t[]){3, 4},
                  "node 2 'matmul_node' (matmul): attr 'a_max' is required", "");
}

/* The output layout's attrs: both or neither, a shape that holds the result's
 * elements (no negative dims), axes that are a permutation of its dims; each error
 * names both attrs and their values. */
static void bad_out_layouts_are_rejected(void** state) {
  (void)state;
  static const struct {
    const char* attrs;
    const char* expected1;
    const char* expected2;
  } cases[] = {
      /* one without the other, or as many axes as dims */
      {"\"out_shape\": \"[12]\"", "attrs 'out_shape' = \"[12]\" and 'out_axes' = \"\" go together", ""},
      {"\"out_axes\": \"[1, 0]\"", "attrs 'out_shape' = \"\" and 'out_axes' = \"[1, 0]\" go together", ""},
      {"\"out_shape\": \"[3, 4]\", \"out_axes\": \"[0]\"",
       "attrs 'out_shape' = \"[3, 4]\" and 'out_axes' = \"[0]\" go together", "a shape of 1 to 4 dims"},
      {"\"out_shape\": \"[]\", \"out_axes\": \"[]\"", "attrs 'out_shape' = \"[]\" and 'out_axes' = \"[]\" go together",
       ""},
      {"\"out_shape\": \"[1, 1, 1, 3, 4]\", \"out_axes\": \"[0, 1, 2, 3, 4]\"",
       "attr 'out_shape' = \"[1, 1, 1, 3, 4]\" has more than 4 values", ""},
      /* a shape that does not hold R's 12 elements, or only with negative dims */
      {"\"out_shape\": \"[2, 5]\", \"out_axes\": \"[1, 0]\"",
       "attrs 'out_shape' = \"[2, 5]\" and 'out_axes' = \"[1, 0]\": the shape must hold the result's 12 elements",
       "a permutation of its dims"},
      {"\"out_shape\": \"[-3, -4]\", \"out_axes\": \"[0, 1]\"", "attrs 'out_shape' = \"[-3, -4]\" and 'out_axes'",
       "the result's 12 elements"},
      /* dims whose product is 12 modulo 2^64 (3 * 2^64 + 12) */
      {"\"out_shape\": \"[384773, 49477, 52086, 55810]\", \"out_axes\": \"[0, 1, 2, 3]\"",
       "attrs 'out_shape' = \"[384773, 49477, 52086, 55810]\" and 'out_axes'", "the result's 12 elements"},
      /* axes repeated, past the dims, negative */
      {"\"out_shape\": \"[3, 4]\", \"out_axes\": \"[0, 0]\"",
       "attrs 'out_shape' = \"[3, 4]\" and 'out_axes' = \"[0, 0]\"", "a permutation of its dims"},
      {"\"out_shape\": \"[3, 4]\", \"out_axes\": \"[0, 2]\"", "'out_axes' = \"[0, 2]\"", "a permutation of its dims"},
      {"\"out_shape\": \"[3, 4]\", \"out_axes\": \"[-1, 0]\"", "'out_axes' = \"[-1, 0]\"", "a permutation of its dims"},
  };
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); ++c)
    expect_rejected("matmul", cases[c].attrs, 2, (int32_t[]){2, 2}, (const int64_t[][4]){{3, 5}, {5, 4}}, 2,
                    (int64_t[]){3, 4}, cases[c].expected1, cases[c].expected2);
  /* the node named, on the other two ops */
  expect_rejected("dense", "\"out_shape\": \"[4, 4]\", \"out_axes\": \"[1, 0]\"", 2, (int32_t[]){2, 2},
                  (const int64_t[][4]){{3, 5}, {4, 5}}, 2, (int64_t[]){3, 4},
                  "node 2 'dense_node' (dense): attrs 'out_shape' = \"[4, 4]\" and 'out_axes' = \"[1, 0]\"",
                  "the result's 12 elements");
  expect_rejected("batch_matmul", "\"out_shape\": \"[2, 3, 4]\", \"out_axes\": \"[0, 1, 1]\"", 2, (int32_t[]){3, 3},
                  (const int64_t[][4]){{2, 3, 5}, {2, 4, 5}}, 3, (int64_t[]){2, 3, 4},
                  "node 2 'batch_matmul_node' (batch_matmul): attrs 'out_shape' = \"[2, 3, 4]\" and 'out_axes' = "
                  "\"[0, 1, 1]\"",
                  "the result's 24 elements");
  /* a valid layout whose output is declared in R's shape */
  expect_rejected("matmul", "\"out_shape\": \"[3, 4]\", \"out_axes\": \"[1, 0]\"", 2, (int32_t[]){2, 2},
                  (const int64_t[][4]){{3, 5}, {5, 4}}, 2, (int64_t[]){3, 4}, "node 2 'matmul_node' (matmul): output 0",
                  "should be shaped [4, 3]");
}

int main(int argc, char** argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(dense_matches_reference),
      cmocka_unit_test(matmul_matches_reference_for_every_transpose),
      cmocka_unit_test(batch_matmul_matches_reference_with_broadcast_batches),
      cmocka_unit_test(gemm_epilogue_matches_reference),
      cmocka_unit_test(every_gemm_kernel_matches_reference),
      cmocka_unit_test(gemm_out_layout_matches_reference),
      cmocka_unit_test(one_row_out_layout_matches_reference),
      cmocka_unit_test(matmul_outputs_split_columns),
      cmocka_unit_test(tiny_device_limits_get_a_variant_that_fits),
      cmocka_unit_test(one_row_dense_plans_the_gemv),
      cmocka_unit_test(contiguous_matmul_plans_the_direct_gemm),
      cmocka_unit_test(dense_plans_the_dot_gemm_on_pocl_cpu_drivers),
      cmocka_unit_test(bad_shapes_and_attrs_are_rejected),
      cmocka_unit_test(bad_out_layouts_are_rejected),
  };
  return hgr_optest_main(argc, argv, "ops_linalg", tests, sizeof(tests) / sizeof(tests[0]));
}
