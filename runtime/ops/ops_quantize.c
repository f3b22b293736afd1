/* quantize, dequantize and quantize_params (kernels/quantize.cl): ONNX
 * QuantizeLinear and DequantizeLinear, with the zero point always given (the ONNX loader gives zeros
 * where a model omits it).
 *
 *   dequantize(x, scale, zero_point) -> float32 shaped like x
 *       x int8, uint8, int16, uint16 or int32; zero_point x's dtype
 *   quantize(x, scale, zero_point) -> zero_point's dtype, shaped like x
 *       x float32; zero_point int8, uint8, int16 or uint16
 *
 * scale (float32) and zero_point share a shape, which says how they apply: one
 * element (rank 0 or 1) for the whole tensor; a vector of x's extent along attr
 * 'axis' (default 1, negative from the end) per index of it; with attr
 * 'block_size' B > 0, x's shape with ceil(D / B) for the axis' D, each element for B
 * consecutive indices along it. At most INT32_MAX elements.
 *
 *   quantize_params(x) -> scale (float32, []), zero_point (uint8, [])
 *       ONNX DynamicQuantizeLinear's parameters of float32 x (every element, at
 *       most INT32_MAX): the range of x widened to hold 0, its 255th as the scale
 *       (1 for an all-zero x, as ONNX Runtime gives it), the zero point
 *       round(-min / scale) held in [0, 255]; one work-group. */
#include <stdio.h>

#include "ops.h"

static const struct {
  hgr_dtype_t dtype;
  const char* suffix;
  bool quantized; /* quantize writes it (int32 is only read) */
} integer_types[] = {
    {{HGR_DTYPE_INT, 8, 1}, "i8", true},    {{HGR_DTYPE_UINT, 8, 1}, "u8", true},
    {{HGR_DTYPE_INT, 16, 1}, "i16", true},  {{HGR_DTYPE_UINT, 16, 1}, "u16", true},
    {{HGR_DTYPE_INT, 32, 1}, "i32", false},
};
#define INTEGER_TYPE_COUNT (sizeof(integer_types) / sizeof(integer_types[0]))

#define QUANT_WIDTH 16 /* elements per work-item: kernels/quantize.cl's HGR_QUANT_WIDTH */

/* How the scale applies to x viewed as [outer, extent, inner] around the axis: the
 * per-axis kernels' arguments and launch (kernels/quantize.cl). */
typedef struct quant_layout_t {
  int32_t inner, extent, block, so_outer, so_d, so_in;
} quant_layout_t;

/* The kernel suffix of integer dtype (quantize: one it writes), or NULL. */
static const char* integer_suffix(hgr_dtype_t dtype, bool quantize) {
  for (size_t k = 0; k < INTEGER_TYPE_COUNT; ++k)
    if (hgr__dtype_same(dtype, integer_types[k].dtype) && (integer_types[k].quantized || !quantize))
      return integer_types[k].suffix;
  return NULL;
}

/* Checks the node (quantize or not) and works out how scale applies to x. */
static hgr_status_t quant_check(const hgr__op_ctx_t* ctx, bool quantize, const char** out_suffix,
                                quant_layout_t* out) {
  const hgr__entry_t *x = hgr__op_input(ctx, 0), *scale = hgr__op_input(ctx, 1), *zero = hgr__op_input(ctx, 2);
  char have[160], other[160];
  const char* suffix = integer_suffix(zero->dtype, quantize);
  if (!suffix)
    return HGR__OP_ERROR(ctx, "input 2 (the zero point, entry %u) is %s; %s", hgr__op_entry_id(ctx, zero),
                         hgr_dtype_format(zero->dtype, have, sizeof(have)),
                         quantize ? "quantize writes int8, uint8, int16 and uint16"
                                  : "dequantize reads int8, uint8, int16, uint16 and int32");
  if (quantize ? !hgr__dtype_is_f32(x->dtype) : !hgr__dtype_same(x->dtype, zero->dtype))
    return HGR__OP_ERROR(ctx, "input 0 (entry %u) is %s; %s", hgr__op_entry_id(ctx, x),
                         hgr_dtype_format(x->dtype, have, sizeof(have)),
                         quantize ? "quantize takes float32" : "dequantize takes the zero point's dtype");
  if (!hgr__dtype_is_f32(scale->dtype))
    return HGR__OP_ERROR(ctx, "input 1 (the scale, entry %u) is %s; the op takes float32", hgr__op_entry_id(ctx, scale),
                         hgr_dtype_format(scale->dtype, have, sizeof(have)));
  bool same = scale->ndim == zero->ndim;
  for (int32_t d = 0; same && d < scale->ndim; ++d) same = scale->shape[d] == zero->shape[d];
  if (!same)
    return HGR__OP_ERROR(ctx, "the scale (entry %u) is shaped %s and the zero point (entry %u) %s; they must share "
                         "a shape", hgr__op_entry_id(ctx, scale), hgr__entry_shape(scale, have, sizeof(have)),
                         hgr__op_entry_id(ctx, zero), hgr__entry_shape(zero, other, sizeof(other)));
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "input 0's element count", x->element_count, INT32_MAX));
  int64_t axis, block;
  HGR_RETURN_IF_ERROR(hgr__attr_int(ctx, "axis", 1, &axis));
  HGR_RETURN_IF_ERROR(hgr__attr_int(ctx, "block_size", 0, &block));
  *out_suffix = suffix;
  *out = (quant_layout_t){1, 1, 1, 0, 0, 0};
  if (block < 0 || block > INT32_MAX)
    return HGR__OP_ERROR(ctx, "attr 'block_size' = %lld; it is 0 (per tensor or per axis) or a block's length",
                         (long long)block);
  if (scale->element_count == 1 && scale->ndim <= 1 && !block) return HGR_OK; /* per tensor */
  if (axis < -x->ndim || axis >= x->ndim)
    return HGR__OP_ERROR(ctx, "attr 'axis' = %lld is outside [-%d, %d) for input 0 (entry %u) shaped %s",
                         (long long)axis, (int)x->ndim, (int)x->ndim, hgr__op_entry_id(ctx, x),
                         hgr__entry_shape(x, have, sizeof(have)));
  if (axis < 0) axis += x->ndim;
  int64_t extent = x->shape[axis], inner = 1;
  for (int32_t d = (int32_t)axis + 1; d < x->ndim; ++d) inner *= x->shape[d];
  out->inner = inner ? (int32_t)inner : 1;
  out->extent = extent ? (int32_t)extent : 1;
  if (!block) {
    if (scale->ndim != 1 || scale->shape[0] != extent)
      return HGR__OP_ERROR(ctx, "the scale (entry %u) is shaped %s; per axis it holds input 0's %lld along axis "
                           "%lld (one element: per tensor)", hgr__op_entry_id(ctx, scale),
                           hgr__entry_shape(scale, have, sizeof(have)), (long long)extent, (long long)axis);
    out->so_d = 1;
    return HGR_OK;
  }
  same = scale->ndim == x->ndim;
  for (int32_t d = 0; same && d < x->ndim; ++d)
    same = scale->shape[d] == (d == axis ? (x->shape[d] + block - 1) / block : x->shape[d]);
  if (!same)
    return HGR__OP_ERROR(ctx, "the scale (entry %u) is shaped %s; in blocks of %lld along axis %lld it has input "
                         "0's shape %s with ceil(%lld / %lld) along the axis", hgr__op_entry_id(ctx, scale),
                         hgr__entry_shape(scale, have, sizeof(have)), (long long)block, (long long)axis,
                         hgr__entry_shape(x, other, sizeof(other)), (long long)extent, (long long)block);
  out->block = (int32_t)block;
  out->so_d = out->inner;
  out->so_in = 1;
  out->so_outer = (int32_t)((extent + block - 1) / block) * out->inner;
  return HGR_OK;
}

static hgr_status_t infer_quant(hgr__op_ctx_t* ctx, hgr__entry_t* outputs) {
  bool quantize = ctx->op->variant;
  const char* suffix;
  quant_layout_t layout;
  HGR_RETURN_IF_ERROR(quant_check(ctx, quantize, &suffix, &layout));
  const hgr__entry_t* x = hgr__op_input(ctx, 0);
  hgr_dtype_t f32 = {HGR_DTYPE_FLOAT, 32, 1};
  hgr__op_set_output(&outputs[0], quantize ? hgr__op_input(ctx, 2)->dtype : f32, x->shape, x->ndim);
  return HGR_OK;
}

static hgr_status_t plan_quant(hgr__op_ctx_t* ctx) {
  bool quantize = ctx->op->variant;
  const char* suffix;
  quant_layout_t q;
  HGR_RETURN_IF_ERROR(quant_check(ctx, quantize, &suffix, &q));
  /* One scale and zero point (every stride 0): the kernel without index arithmetic. */
  bool per_tensor = !q.so_outer && !q.so_d && !q.so_in;
  char kernel[40];
  snprintf(kernel, sizeof(kernel), "hgr_%s_%s%s", quantize ? "quantize" : "dequantize", suffix,
           per_tensor ? "_tensor" : "");
  const hgr__entry_t* x = hgr__op_input(ctx, 0);
  hgr__launch_plan_t* l = hgr__op_launch(ctx, kernel);
  for (uint32_t i = 0; i < 3; ++i) hgr__launch_input(ctx, l, i);
  hgr__launch_output(ctx, l, 0);
  if (per_tensor) {
    hgr__launch_int(ctx, l, (int32_t)x->element_count);
    hgr__launch_1d(ctx, l, (x->element_count + QUANT_WIDTH - 1) / QUANT_WIDTH);
    return HGR_OK;
  }
  /* [outer, extent, inner] as (inner / 16, extent, outer); an empty x: one group of items past inner 0 */
  bool empty = !x->element_count;
  size_t outer = empty ? 1 : (size_t)(x->element_count / ((uint64_t)q.inner * (uint64_t)q.extent));
  if (q.inner == 1 && q.block == 1) { /* per the last axis: [outer, 1, extent], a scale per element of a row */
    q.inner = q.extent;
    q.extent = 1;
    q.so_in = q.so_d;
    q.so_d = 0;
  }
  const int32_t args[] = {empty ? 0 : q.inner, q.block, q.so_outer, q.so_d, q.so_in};
  for (size_t k = 0; k < sizeof(args) / sizeof(args[0]); ++k) hgr__launch_int(ctx, l, args[k]);
  size_t global[3] = {empty ? 0 : ((size_t)q.inner + QUANT_WIDTH - 1) / QUANT_WIDTH, empty ? 1 : (size_t)q.extent,
                       outer},
         local[3] = {1, 1, 1};
  /* a group of up to 64 along the row, no wider than the row needs */
  size_t most = hgr__launch_local_at_most(ctx, 64);
  while (local[0] * 2 <= most && local[0] < global[0]) local[0] *= 2;
  hgr__launch_nd(l, 3, global, local);
  return HGR_OK;
}

/* ---- quantize_params ---------------------------------------------------------------- */

static hgr_status_t params_check(const hgr__op_ctx_t* ctx) {
  const hgr__entry_t* x = hgr__op_input(ctx, 0);
  char have[160];
  if (!hgr__dtype_is_f32(x->dtype))
    return HGR__OP_ERROR(ctx, "input 0 (entry %u) is %s; the op takes float32", hgr__op_entry_id(ctx, x),
                         hgr_dtype_format(x->dtype, have, sizeof(have)));
  return hgr__op_check_range(ctx, "input 0's element count", x->element_count, INT32_MAX);
}

static hgr_status_t infer_params(hgr__op_ctx_t* ctx, hgr__entry_t* outputs) {
  HGR_RETURN_IF_ERROR(params_check(ctx));
  hgr__op_set_output(&outputs[0], (hgr_dtype_t){HGR_DTYPE_FLOAT, 32, 1}, NULL, 0);
  hgr__op_set_output(&outputs[1], (hgr_dtype_t){HGR_DTYPE_UINT, 8, 1}, NULL, 0);
  return HGR_OK;
}

static hgr_status_t plan_params(hgr__op_ctx_t* ctx) {
  HGR_RETURN_IF_ERROR(params_check(ctx));
  const hgr__entry_t* x = hgr__op_input(ctx, 0);
  hgr__launch_plan_t* l = hgr__op_launch(ctx, "hgr_quantize_params");
  hgr__launch_input(ctx, l, 0);
  hgr__launch_output(ctx, l, 0);
  hgr__launch_output(ctx, l, 1);
  hgr__launch_int(ctx, l, (int32_t)x->element_count);
  /* one group, a power of two of up to 64 items (the kernel halves it) */
  size_t items = 1, most = hgr__launch_local_at_most(ctx, 64);
  while (items * 2 <= most) items *= 2;
  hgr__launch_local(ctx, l, items * sizeof(float));
  hgr__launch_local(ctx, l, items * sizeof(float));
  size_t global[1] = {items}, local[1] = {items};
  hgr__launch_nd(l, 1, global, local);
  return HGR_OK;
}

const hgr__op_t hgr__ops_quantize[] = {
    {"dequantize", "quantize", 3, 3, 1, 1, "axis block_size", plan_quant, 0, HGR__IN_PLACE_REFUSED, infer_quant},
    {"quantize", "quantize", 3, 3, 1, 1, "axis block_size", plan_quant, 1, HGR__IN_PLACE_REFUSED, infer_quant},
    {"quantize_params", "quantize", 1, 1, 2, 2, "", plan_params, 0, HGR__IN_PLACE_REFUSED, infer_params},
    {.name = NULL},
};
