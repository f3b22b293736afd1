/* Matrix products with 8-bit weights (kernels/matmul_integer.cl): matmul_integer,
 * the integer GEMM of 8-bit operands that ONNX's MatMulInteger and ONNX Runtime's
 * quantized matmuls compute, with the second operand stored transposed; and
 * dequantize_matmul, a float32 GEMM whose 8-bit weights are dequantized in its
 * loads, which the ONNX loader takes for its quantized matmuls with constant
 * weights. (On the test bed's CPUs the integer GEMM runs at 1-2x the time of the
 * float32 one, which is why the loader does not take it: bench/notes.md.)
 *
 *   matmul_integer(a, b, a_zero, b_zero [, scale]) -> [d1, ..., dn, N]
 *       a [d1, ..., dn, K] uint8 or int8 (n >= 0), b [N, K] uint8 or int8;
 *       a_zero a's dtype, one element; b_zero b's dtype, one element or [N] (per
 *       column); out[..., j] = sum_l (a[..., l] - a_zero) (b[j, l] - b_zero[j]),
 *       exact, int32 without scale; with scale (float32, one element or [N]) that
 *       sum converted to float32 times scale[j], float32.
 * K below 33025 (the int32 sums cannot overflow), at most INT32_MAX elements per
 * operand. Float lanes where their sums stay exact (K / 8 * 255^2 <= 2^24), int32
 * lanes beyond (the kernel's header says how).
 *
 *   dequantize_matmul(a, b, b_zero, scale [, bias]) -> [d1, ..., dn, N] float32
 *       a [d1, ..., dn, K] float32, b uint8 or int8 [K, N] in panels of 32 columns,
 *       [ceil(N / 32), K, 32] (the last one padded), with attr units N (the ONNX
 *       loader stores constant weights so); b_zero
 *       b's dtype and scale float32, each one element or [N]; bias float32 [N];
 *       out[..., j] = (sum_l a[..., l] (b[l, j] - b_zero[j])) scale[j] + bias[j],
 *       the sum in float32: matmul(a, dequantize(b)) with the scale taken out of
 *       the sum. At most INT32_MAX elements per operand. */
#include <stdio.h>

#include "ops.h"

/* The kernel suffix of an 8-bit operand's dtype, or NULL. */
static const char* byte_suffix(hgr_dtype_t dtype) {
  if (hgr__dtype_same(dtype, (hgr_dtype_t){HGR_DTYPE_UINT, 8, 1})) return "u8";
  if (hgr__dtype_same(dtype, (hgr_dtype_t){HGR_DTYPE_INT, 8, 1})) return "i8";
  return NULL;
}

/* One element, or a vector of n: the step between columns' parameters (0 or 1), or -1. */
static int32_t column_step(const hgr__entry_t* p, int64_t n) {
  if (p->element_count == 1 && p->ndim <= 1) return 0;
  return p->ndim == 1 && p->shape[0] == n ? 1 : -1;
}

/* The rows of a [d1, ..., dn, K]: d1 x ... x dn. */
static int64_t row_count(const hgr__entry_t* a) {
  int64_t m = 1;
  for (int32_t d = 0; d < a->ndim - 1; ++d) m *= a->shape[d];
  return m;
}

/* outputs[0]: a's shape [..., K] with n for K, of dtype. */
static void set_product(hgr__entry_t* outputs, hgr_dtype_t dtype, const hgr__entry_t* a, int64_t n) {
  int64_t shape[HGR_MAX_DIMS];
  for (int32_t d = 0; d < a->ndim; ++d) shape[d] = a->shape[d];
  shape[a->ndim - 1] = n;
  hgr__op_set_output(&outputs[0], dtype, shape, a->ndim);
}

/* b's zero point (input zero) and the scale (input scale; UINT32_MAX: none, step 0):
 * each one element or [n], the zero point b's dtype, the scale float32. */
static hgr_status_t check_column_params(const hgr__op_ctx_t* ctx, uint32_t zero, uint32_t scale, int64_t n,
                                        int32_t* zb_step, int32_t* scale_step) {
  const hgr__entry_t *b = hgr__op_input(ctx, 1), *zb = hgr__op_input(ctx, zero);
  char have[160], other[160];
  *zb_step = column_step(zb, n);
  if (!hgr__dtype_same(zb->dtype, b->dtype) || *zb_step < 0)
    return HGR__OP_ERROR(ctx, "input %u (b's zero point, entry %u) is %s %s; it is input 1's dtype, one element or "
                         "[%lld]", zero, hgr__op_entry_id(ctx, zb), hgr_dtype_format(zb->dtype, have, sizeof(have)),
                         hgr__entry_shape(zb, other, sizeof(other)), (long long)n);
  *scale_step = 0;
  if (scale == UINT32_MAX) return HGR_OK;
  const hgr__entry_t* s = hgr__op_input(ctx, scale);
  *scale_step = column_step(s, n);
  if (!hgr__dtype_is_f32(s->dtype) || *scale_step < 0)
    return HGR__OP_ERROR(ctx, "input %u (the scale, entry %u) is %s %s; it is float32, one element or [%lld]", scale,
                         hgr__op_entry_id(ctx, s), hgr_dtype_format(s->dtype, have, sizeof(have)),
                         hgr__entry_shape(s, other, sizeof(other)), (long long)n);
  return HGR_OK;
}

/* Every operand and the output [..., n] within an int's indices. */
static hgr_status_t check_counts(const hgr__op_ctx_t* ctx, int64_t n) {
  const hgr__entry_t *a = hgr__op_input(ctx, 0), *b = hgr__op_input(ctx, 1);
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "input 0's element count", a->element_count, INT32_MAX));
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "input 1's element count", b->element_count, INT32_MAX));
  return hgr__op_check_range(ctx, "the output's element count", (uint64_t)row_count(a) * (uint64_t)n, INT32_MAX);
}

/* A 2-D launch of blocks of `columns` x `rows` outputs (columns along dimension 0),
 * in groups of `group` blocks down the rows (PoCL runs a group's items in one loop),
 * or as many as the device allows; items past the rows return at once. One size
 * whatever the shape: PoCL compiles a kernel once per group size. */
static void launch_blocks(const hgr__op_ctx_t* ctx, hgr__launch_plan_t* l, bool empty, int64_t n, int64_t m,
                          int64_t columns, int64_t rows, size_t group) {
  size_t global[2] = {empty ? 1 : (size_t)((n + columns - 1) / columns), empty ? 1 : (size_t)((m + rows - 1) / rows)};
  size_t local[2] = {1, hgr__launch_local_at_most(ctx, group)};
  if (ctx->limits.max_work_item[1] && local[1] > ctx->limits.max_work_item[1]) local[1] = ctx->limits.max_work_item[1];
  hgr__launch_nd(l, 2, global, local); /* global[1] rounded up to a multiple of local[1] */
}

static hgr_status_t check(const hgr__op_ctx_t* ctx, int32_t* zb_step, int32_t* scale_step) {
  const hgr__entry_t *a = hgr__op_input(ctx, 0), *b = hgr__op_input(ctx, 1);
  const hgr__entry_t* za = hgr__op_input(ctx, 2);
  char have[160], other[160];
  for (uint32_t i = 0; i < 2; ++i) {
    const hgr__entry_t* e = hgr__op_input(ctx, i);
    if (!byte_suffix(e->dtype))
      return HGR__OP_ERROR(ctx, "input %u (entry %u) is %s; the op takes uint8 and int8", i, hgr__op_entry_id(ctx, e),
                           hgr_dtype_format(e->dtype, have, sizeof(have)));
  }
  if (a->ndim < 1 || b->ndim != 2 || a->shape[a->ndim - 1] != b->shape[1])
    return HGR__OP_ERROR(ctx, "input 0 (entry %u) is shaped %s and input 1 (entry %u) %s; the op takes [..., K] "
                         "and [N, K]", hgr__op_entry_id(ctx, a), hgr__entry_shape(a, have, sizeof(have)),
                         hgr__op_entry_id(ctx, b),
                         hgr__entry_shape(b, other, sizeof(other)));
  int64_t n = b->shape[0], k = b->shape[1];
  if (!hgr__dtype_same(za->dtype, a->dtype) || za->element_count != 1 || za->ndim > 1)
    return HGR__OP_ERROR(ctx, "input 2 (a's zero point, entry %u) is %s %s; it is one element of input 0's dtype",
                         hgr__op_entry_id(ctx, za), hgr_dtype_format(za->dtype, have, sizeof(have)),
                         hgr__entry_shape(za, other, sizeof(other)));
  HGR_RETURN_IF_ERROR(
      check_column_params(ctx, 3, hgr__op_input_count(ctx) > 4 ? 4 : UINT32_MAX, n, zb_step, scale_step));
  if (k >= 33025)
    return HGR__OP_ERROR(ctx, "the depth K = %lld is 33025 or more; the int32 sums of 8-bit products could overflow",
                         (long long)k);
  return check_counts(ctx, n);
}

static hgr_status_t infer_matmul_integer(hgr__op_ctx_t* ctx, hgr__entry_t* outputs) {
  int32_t zb_step, scale_step;
  HGR_RETURN_IF_ERROR(check(ctx, &zb_step, &scale_step));
  const hgr__entry_t *a = hgr__op_input(ctx, 0), *b = hgr__op_input(ctx, 1);
  hgr_dtype_t out = hgr__op_input_count(ctx) > 4 ? (hgr_dtype_t){HGR_DTYPE_FLOAT, 32, 1}
                                                 : (hgr_dtype_t){HGR_DTYPE_INT, 32, 1};
  set_product(outputs, out, a, b->shape[0]);
  return HGR_OK;
}

static hgr_status_t plan_matmul_integer(hgr__op_ctx_t* ctx) {
  int32_t zb_step, scale_step;
  HGR_RETURN_IF_ERROR(check(ctx, &zb_step, &scale_step));
  const hgr__entry_t *a = hgr__op_input(ctx, 0), *b = hgr__op_input(ctx, 1);
  bool scaled = hgr__op_input_count(ctx) > 4;
  int64_t n = b->shape[0], k = b->shape[1], m = row_count(a);
  /* float lanes while their sums stay exact: each lane adds k / 8 products of at
   * most 255^2 (kernels/matmul_integer.cl) */
  bool fma = k / 8 * 255 * 255 <= (1 << 24);
  char kernel[48];
  snprintf(kernel, sizeof(kernel), "hgr_matmul_integer_%s%s_%s_%s", byte_suffix(a->dtype), byte_suffix(b->dtype),
           scaled ? "f32" : "i32", fma ? "flt" : "int");
  hgr__launch_plan_t* l = hgr__op_launch(ctx, kernel);
  for (uint32_t i = 0; i < 4; ++i) hgr__launch_input(ctx, l, i);
  hgr__launch_input(ctx, l, scaled ? 4 : 0); /* unread without a scale */
  hgr__launch_output(ctx, l, 0);
  bool empty = !m || !n;
  const int32_t args[] = {empty ? 0 : (int32_t)m, empty ? 0 : (int32_t)n, (int32_t)k, zb_step, scale_step};
  for (size_t i = 0; i < sizeof(args) / sizeof(args[0]); ++i) hgr__launch_int(ctx, l, args[i]);
  launch_blocks(ctx, l, empty, n, m, 4, 4, 16);
  return HGR_OK;
}

/* ---- dequantize_matmul ------------------------------------------------------------------ */

#define PANEL 32 /* columns per panel of b's 3-D form (kernels/matmul_integer.cl) */

/* b's K and N: panels [P, K, 32] with attr units N. */
static hgr_status_t weights_shape(const hgr__op_ctx_t* ctx, int64_t* k, int64_t* n) {
  const hgr__entry_t* b = hgr__op_input(ctx, 1);
  char have[160];
  int64_t units;
  HGR_RETURN_IF_ERROR(hgr__attr_int(ctx, "units", 0, &units));
  if (b->ndim == 3 && b->shape[2] == PANEL && units > PANEL * (b->shape[0] - 1) && units <= PANEL * b->shape[0]) {
    *k = b->shape[1];
    *n = units;
    return HGR_OK;
  }
  return HGR__OP_ERROR(ctx, "input 1 (entry %u) is shaped %s with attr 'units' = %lld; the op takes panels [P, K, "
                       "32] with units N, 32 (P - 1) < N <= 32 P", hgr__op_entry_id(ctx, b),
                       hgr__entry_shape(b, have, sizeof(have)), (long long)units);
}

static hgr_status_t check_dequantize(const hgr__op_ctx_t* ctx, int32_t* zb_step, int32_t* scale_step) {
  const hgr__entry_t *a = hgr__op_input(ctx, 0), *b = hgr__op_input(ctx, 1);
  char have[160], other[160];
  if (!hgr__dtype_is_f32(a->dtype))
    return HGR__OP_ERROR(ctx, "input 0 (entry %u) is %s; the op takes float32", hgr__op_entry_id(ctx, a),
                         hgr_dtype_format(a->dtype, have, sizeof(have)));
  if (!byte_suffix(b->dtype))
    return HGR__OP_ERROR(ctx, "input 1 (entry %u) is %s; the op takes uint8 and int8", hgr__op_entry_id(ctx, b),
                         hgr_dtype_format(b->dtype, have, sizeof(have)));
  int64_t k, n;
  HGR_RETURN_IF_ERROR(weights_shape(ctx, &k, &n));
  if (a->ndim < 1 || a->shape[a->ndim - 1] != k)
    return HGR__OP_ERROR(ctx, "input 0 (entry %u) is shaped %s and input 1 (entry %u) %s; the op takes [..., K] "
                         "and panels [P, K, 32]", hgr__op_entry_id(ctx, a), hgr__entry_shape(a, have, sizeof(have)),
                         hgr__op_entry_id(ctx, b), hgr__entry_shape(b, other, sizeof(other)));
  HGR_RETURN_IF_ERROR(check_column_params(ctx, 2, 3, n, zb_step, scale_step));
  if (hgr__op_input_count(ctx) > 4) {
    const hgr__entry_t* bias = hgr__op_input(ctx, 4);
    if (!hgr__dtype_is_f32(bias->dtype) || bias->ndim != 1 || bias->shape[0] != n)
      return HGR__OP_ERROR(ctx, "input 4 (the bias, entry %u) is %s %s; it is float32 [%lld]",
                           hgr__op_entry_id(ctx, bias),
                           hgr_dtype_format(bias->dtype, have, sizeof(have)),
                           hgr__entry_shape(bias, other, sizeof(other)), (long long)n);
  }
  return check_counts(ctx, n);
}

static hgr_status_t infer_dequantize_matmul(hgr__op_ctx_t* ctx, hgr__entry_t* outputs) {
  int32_t zb_step, scale_step;
  HGR_RETURN_IF_ERROR(check_dequantize(ctx, &zb_step, &scale_step));
  const hgr__entry_t* a = hgr__op_input(ctx, 0);
  int64_t k, n;
  HGR_RETURN_IF_ERROR(weights_shape(ctx, &k, &n));
  set_product(outputs, (hgr_dtype_t){HGR_DTYPE_FLOAT, 32, 1}, a, n);
  return HGR_OK;
}

static hgr_status_t plan_dequantize_matmul(hgr__op_ctx_t* ctx) {
  int32_t zb_step, scale_step;
  HGR_RETURN_IF_ERROR(check_dequantize(ctx, &zb_step, &scale_step));
  const hgr__entry_t *a = hgr__op_input(ctx, 0), *b = hgr__op_input(ctx, 1);
  bool biased = hgr__op_input_count(ctx) > 4;
  int64_t k, n, m = row_count(a);
  HGR_RETURN_IF_ERROR(weights_shape(ctx, &k, &n));
  /* The block, a tile choice (`hgr tune` measures both; both run everywhere): by
   * ops_linalg.c's rule for its direct blocks, 8 x 32 where registers hold 16 floats
   * (AVX-512: 16 float16 accumulators in 32 registers), else 6 x 16. */
  static const char* const blocks[] = {"6x16", "8x32"};
  const bool fits[] = {true, true};
  char key[96];
  snprintf(key, sizeof(key), "dequantize_matmul:%lldx%lldx%lld", (long long)m, (long long)n, (long long)k);
  bool wide = hgr__op_choose_tile(ctx, key, blocks, fits, 2, ctx->limits.native_float_width >= 16 ? 1 : 0) == 1;
  char kernel[48];
  snprintf(kernel, sizeof(kernel), "hgr_dequantize_matmul_%s_%s", byte_suffix(b->dtype), wide ? "8x32" : "6x16");
  hgr__launch_plan_t* l = hgr__op_launch(ctx, kernel);
  for (uint32_t i = 0; i < 4; ++i) hgr__launch_input(ctx, l, i);
  hgr__launch_input(ctx, l, biased ? 4 : 3); /* unread without a bias */
  hgr__launch_output(ctx, l, 0);
  bool empty = !m || !n;
  const int32_t args[] = {empty ? 0 : (int32_t)m, empty ? 0 : (int32_t)n, (int32_t)k, zb_step, scale_step, biased};
  for (size_t i = 0; i < sizeof(args) / sizeof(args[0]); ++i) hgr__launch_int(ctx, l, args[i]);
  launch_blocks(ctx, l, empty, n, m, wide ? 32 : 16, wide ? 8 : 6, 8);
  return HGR_OK;
}

const hgr__op_t hgr__ops_matmul_integer[] = {
    {"matmul_integer", "matmul_integer", 4, 5, 1, 1, "", plan_matmul_integer, 0, HGR__IN_PLACE_REFUSED,
     infer_matmul_integer},
    {"dequantize_matmul", "matmul_integer", 4, 5, 1, 1, "units", plan_dequantize_matmul, 0, HGR__IN_PLACE_REFUSED,
     infer_dequantize_matmul},
    {.name = NULL},
};
