/* Elementwise ops (kernels/elementwise.cl): binary ops with NumPy broadcasting,
 * unary float32 ops and cast, with Relay's names and attrs. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ops.h"

/* Binary ops: float32 only, or float32 and int32. */
enum { BINARY_F32 = 0, BINARY_F32_I32 = 1 };
/* Unary ops: which scalar arguments the kernel takes. */
enum { UNARY_PLAIN = 0, UNARY_LEAKY_RELU, UNARY_CLIP };

static const char* dtype_suffix(hgr_dtype_t dtype) { return hgr__dtype_is_i32(dtype) ? "i32" : "f32"; }

/* Checks that entry `name` has the dtype of `reference` (named reference_name). */
static hgr_status_t check_same_dtype(const hgr__op_ctx_t* ctx, const hgr__entry_t* entry, const char* name,
                                     const hgr__entry_t* reference, const char* reference_name) {
  if (entry->dtype.code == reference->dtype.code && entry->dtype.bits == reference->dtype.bits &&
      entry->dtype.lanes == reference->dtype.lanes)
    return HGR_OK;
  char got[32], want[32];
  return HGR__OP_ERROR(ctx, "%s (entry %u) is %s but %s (entry %u) is %s; the inputs must share one dtype", name, (uint32_t)(entry - ctx->graph->entries), hgr_dtype_format(entry->dtype, got, sizeof(got)),
                       reference_name, (uint32_t)(reference - ctx->graph->entries),
                       hgr_dtype_format(reference->dtype, want, sizeof(want)));
}

/* Extent of dimension d of an ndim-dimensional broadcast for entry, whose shape is
 * aligned to the right (missing leading dimensions are 1). */
static int64_t aligned_extent(const hgr__entry_t* entry, int32_t ndim, int32_t d) {
  int32_t k = d - (ndim - entry->ndim);
  return k < 0 ? 1 : entry->shape[k];
}

/* The NumPy broadcast of a's and b's shapes into *out (ndim and shape only). */
static hgr_status_t broadcast_shape(const hgr__op_ctx_t* ctx, const hgr__entry_t* a, const hgr__entry_t* b,
                                    hgr__entry_t* out) {
  memset(out, 0, sizeof(*out));
  out->ndim = a->ndim > b->ndim ? a->ndim : b->ndim;
  for (int32_t d = 0; d < out->ndim; ++d) {
    int64_t ea = aligned_extent(a, out->ndim, d), eb = aligned_extent(b, out->ndim, d);
    if (ea != eb && ea != 1 && eb != 1) {
      char a_text[160], b_text[160];
      return HGR__OP_ERROR(ctx,
                           "input 0 shaped %s and input 1 shaped %s do not broadcast: %lld against %lld in "
                           "dimension %d from the right",
                           hgr__entry_shape(a, a_text, sizeof(a_text)), hgr__entry_shape(b, b_text, sizeof(b_text)),
                           (long long)ea, (long long)eb, out->ndim - d);
    }
    out->shape[d] = ea == 1 ? eb : ea;
  }
  return HGR_OK;
}

/* The broadcast kernel's meta buffer after dropping extent-1 dimensions and merging
 * neighbours along which each input is either broadcast in both or in neither:
 * {ndim, extent[ndim], a_stride[ndim], b_stride[ndim]}. Fewer dimensions means
 * fewer divisions per element; one dimension left means a fast path applies. */
typedef struct collapsed_t {
  int32_t ndim;
  int64_t extent[HGR_MAX_DIMS];
  bool a_full[HGR_MAX_DIMS], b_full[HGR_MAX_DIMS]; /* false: broadcast (stride 0) */
} collapsed_t;

static void collapse(const hgr__entry_t* a, const hgr__entry_t* b, const hgr__entry_t* out, collapsed_t* c) {
  c->ndim = 0;
  for (int32_t d = 0; d < out->ndim; ++d) {
    int64_t extent = out->shape[d];
    if (extent == 1) continue;
    bool a_full = aligned_extent(a, out->ndim, d) != 1, b_full = aligned_extent(b, out->ndim, d) != 1;
    int32_t k = c->ndim;
    if (k > 0 && c->a_full[k - 1] == a_full && c->b_full[k - 1] == b_full) {
      c->extent[k - 1] *= extent; /* <= the output's element count, checked to fit int */
      continue;
    }
    c->extent[k] = extent;
    c->a_full[k] = a_full;
    c->b_full[k] = b_full;
    ++c->ndim;
  }
}

/* Inputs: a dtype the op takes, shared by both; the output: their broadcast. */
static hgr_status_t infer_binary(hgr__op_ctx_t* ctx, hgr__entry_t* outputs) {
  const hgr__entry_t* a = hgr__op_input(ctx, 0);
  const hgr__entry_t* b = hgr__op_input(ctx, 1);
  HGR_RETURN_IF_ERROR(hgr__op_check_dtype(ctx, 0, -1, ctx->op->variant == BINARY_F32_I32));
  HGR_RETURN_IF_ERROR(check_same_dtype(ctx, b, "input 1", a, "input 0"));
  HGR_RETURN_IF_ERROR(broadcast_shape(ctx, a, b, &outputs[0]));
  outputs[0].dtype = a->dtype;
  return HGR_OK;
}

static hgr_status_t plan_binary(hgr__op_ctx_t* ctx) {
  const hgr__entry_t* a = hgr__op_input(ctx, 0);
  const hgr__entry_t* b = hgr__op_input(ctx, 1);
  const hgr__entry_t* out = hgr__op_output(ctx, 0); /* the broadcast (infer_binary) */
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "the output's element count", out->element_count, INT32_MAX));

  collapsed_t c;
  collapse(a, b, out, &c);
  const char* variant = "_broadcast";
  if (out->element_count == 0 || c.ndim == 0 || (c.ndim == 1 && c.a_full[0] && c.b_full[0])) variant = "";
  else if (c.ndim == 1 && c.b_full[0]) variant = "_scalar_a";
  else if (c.ndim == 1 && c.a_full[0]) variant = "_scalar_b";

  char kernel[64];
  snprintf(kernel, sizeof(kernel), "hgr_%s_%s%s", ctx->op->name, dtype_suffix(a->dtype), variant);
  hgr__launch_plan_t* l = hgr__op_launch(ctx, kernel);
  hgr__launch_input(ctx, l, 0);
  hgr__launch_input(ctx, l, 1);
  hgr__launch_output(ctx, l, 0);
  hgr__launch_int(ctx, l, (int32_t)out->element_count);
  if (!strcmp(variant, "_broadcast")) {
    int32_t extents[HGR_MAX_DIMS], a_strides[HGR_MAX_DIMS], b_strides[HGR_MAX_DIMS];
    int64_t a_stride = 1, b_stride = 1;
    for (int32_t k = c.ndim - 1; k >= 0; --k) {
      extents[k] = (int32_t)c.extent[k];
      a_strides[k] = c.a_full[k] ? (int32_t)a_stride : 0;
      b_strides[k] = c.b_full[k] ? (int32_t)b_stride : 0;
      if (c.a_full[k]) a_stride *= c.extent[k];
      if (c.b_full[k]) b_stride *= c.extent[k];
    }
    hgr__launch_meta_arg(ctx, l);
    hgr__launch_meta1(ctx, l, c.ndim);
    hgr__launch_meta(ctx, l, extents, (uint32_t)c.ndim);
    hgr__launch_meta(ctx, l, a_strides, (uint32_t)c.ndim);
    hgr__launch_meta(ctx, l, b_strides, (uint32_t)c.ndim);
  }
  hgr__launch_1d(ctx, l, out->element_count);
  return HGR_OK;
}

/* A float attr as the kernel's float argument, rounded to nearest; beyond float's
 * range it is an infinity (the C conversion is undefined out of range). */
static float to_float(double value) {
  if (value >= 0x1.ffffffp+127) return INFINITY;
  if (value <= -0x1.ffffffp+127) return -INFINITY;
  if (value > FLT_MAX) return FLT_MAX;
  if (value < -FLT_MAX) return -FLT_MAX;
  return (float)value;
}

static hgr_status_t required_float(const hgr__op_ctx_t* ctx, const char* key, const char* meaning, double* out) {
  if (!hgr__attr_string(ctx, key, NULL))
    return HGR__OP_ERROR(ctx, "attr '%s' (%s) is required", key, meaning);
  return hgr__attr_float(ctx, key, 0, out);
}

/* The scalar attrs of leaky_relu (alpha) and clip (a_min, a_max). */
static hgr_status_t unary_attrs(const hgr__op_ctx_t* ctx, double* alpha, double* a_min, double* a_max) {
  *alpha = *a_min = *a_max = 0;
  if (ctx->op->variant == UNARY_LEAKY_RELU) HGR_RETURN_IF_ERROR(hgr__attr_float(ctx, "alpha", 0.01, alpha));
  if (ctx->op->variant == UNARY_CLIP) {
    HGR_RETURN_IF_ERROR(required_float(ctx, "a_min", "the lower bound", a_min));
    HGR_RETURN_IF_ERROR(required_float(ctx, "a_max", "the upper bound", a_max));
    if (*a_min > *a_max)
      return HGR__OP_ERROR(ctx, "attr 'a_min' = %g is above attr 'a_max' = %g", *a_min, *a_max);
  }
  return HGR_OK;
}

static hgr_status_t infer_unary(hgr__op_ctx_t* ctx, hgr__entry_t* outputs) {
  const hgr__entry_t* in = hgr__op_input(ctx, 0);
  HGR_RETURN_IF_ERROR(hgr__op_check_dtype(ctx, 0, -1, false));
  double alpha, a_min, a_max;
  HGR_RETURN_IF_ERROR(unary_attrs(ctx, &alpha, &a_min, &a_max));
  hgr__op_set_output(&outputs[0], in->dtype, in->shape, in->ndim);
  return HGR_OK;
}

static hgr_status_t plan_unary(hgr__op_ctx_t* ctx) {
  const hgr__entry_t* out = hgr__op_output(ctx, 0);
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "the output's element count", out->element_count, INT32_MAX));
  double alpha, a_min, a_max;
  HGR_RETURN_IF_ERROR(unary_attrs(ctx, &alpha, &a_min, &a_max));
  char kernel[64];
  snprintf(kernel, sizeof(kernel), "hgr_%s_f32", ctx->op->name);
  hgr__launch_plan_t* l = hgr__op_launch(ctx, kernel);
  hgr__launch_input(ctx, l, 0);
  hgr__launch_output(ctx, l, 0);
  hgr__launch_int(ctx, l, (int32_t)out->element_count);
  if (ctx->op->variant == UNARY_LEAKY_RELU) hgr__launch_float(ctx, l, to_float(alpha));
  if (ctx->op->variant == UNARY_CLIP) {
    hgr__launch_float(ctx, l, to_float(a_min));
    hgr__launch_float(ctx, l, to_float(a_max));
  }
  hgr__launch_1d(ctx, l, out->element_count);
  return HGR_OK;
}

/* The output's dtype, from attr 'dtype'. */
static hgr_status_t cast_dtype(const hgr__op_ctx_t* ctx, hgr_dtype_t* out_dtype) {
  const char* dtype = hgr__attr_string(ctx, "dtype", NULL);
  if (!dtype) return HGR__OP_ERROR(ctx, "attr 'dtype' (the output's dtype: float32 or int32) is required");
  bool to_i32 = !strcmp(dtype, "int32");
  if (!to_i32 && strcmp(dtype, "float32"))
    return HGR__OP_ERROR(ctx, "attr 'dtype' = \"%s\" is not supported; cast converts between float32 and int32",
                         dtype);
  *out_dtype = to_i32 ? HGR__DTYPE_I32 : HGR__DTYPE_F32;
  return HGR_OK;
}

static hgr_status_t infer_cast(hgr__op_ctx_t* ctx, hgr__entry_t* outputs) {
  const hgr__entry_t* in = hgr__op_input(ctx, 0);
  hgr_dtype_t dtype;
  HGR_RETURN_IF_ERROR(cast_dtype(ctx, &dtype));
  HGR_RETURN_IF_ERROR(hgr__op_check_dtype(ctx, 0, -1, true));
  hgr__op_set_output(&outputs[0], dtype, in->shape, in->ndim);
  return HGR_OK;
}

static hgr_status_t plan_cast(hgr__op_ctx_t* ctx) {
  const hgr__entry_t* in = hgr__op_input(ctx, 0);
  const hgr__entry_t* out = hgr__op_output(ctx, 0); /* the attr's dtype (infer_cast) */
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "the output's element count", out->element_count, INT32_MAX));
  bool to_i32 = hgr__dtype_is_i32(out->dtype);
  bool from_i32 = hgr__dtype_is_i32(in->dtype);
  const char* kernel = from_i32 == to_i32 ? "hgr_cast_copy_32" : to_i32 ? "hgr_cast_f32_i32" : "hgr_cast_i32_f32";
  hgr__launch_plan_t* l = hgr__op_launch(ctx, kernel);
  hgr__launch_input(ctx, l, 0);
  hgr__launch_output(ctx, l, 0);
  hgr__launch_int(ctx, l, (int32_t)out->element_count);
  hgr__launch_1d(ctx, l, out->element_count);
  return HGR_OK;
}

/* Every kernel here is one launch in which work-item i reads a[i], b[i] (or x[i]) of
 * each input of the output's element count, and writes out[i]: they may run in
 * place. A broadcast input is read at other indices and may not share the output. */
#define BINARY(name, variant) \
  {#name, "elementwise", 2, 2, 1, 1, "", plan_binary, variant, HGR__IN_PLACE_ELEMENTWISE, infer_binary}
#define UNARY(name, attrs, variant) \
  {#name, "elementwise", 1, 1, 1, 1, attrs, plan_unary, variant, HGR__IN_PLACE_ELEMENTWISE, infer_unary}

const hgr__op_t hgr__ops_elementwise[] = {
    BINARY(add, BINARY_F32_I32),
    BINARY(subtract, BINARY_F32_I32),
    BINARY(multiply, BINARY_F32_I32),
    BINARY(divide, BINARY_F32),
    BINARY(maximum, BINARY_F32_I32),
    BINARY(minimum, BINARY_F32_I32),
    BINARY(power, BINARY_F32),
    UNARY(relu, "", UNARY_PLAIN),
    UNARY(leaky_relu, "alpha", UNARY_LEAKY_RELU),
    UNARY(clip, "a_min a_max", UNARY_CLIP),
    UNARY(sigmoid, "", UNARY_PLAIN),
    UNARY(tanh, "", UNARY_PLAIN),
    UNARY(exp, "", UNARY_PLAIN),
    UNARY(log, "", UNARY_PLAIN),
    UNARY(sqrt, "", UNARY_PLAIN),
    UNARY(rsqrt, "", UNARY_PLAIN),
    UNARY(abs, "", UNARY_PLAIN),
    UNARY(negative, "", UNARY_PLAIN),
    UNARY(erf, "", UNARY_PLAIN),
    UNARY(gelu, "", UNARY_PLAIN),
    {"cast", "elementwise", 1, 1, 1, 1, "dtype", plan_cast, 0, HGR__IN_PLACE_ELEMENTWISE, infer_cast},
    {.name = NULL},
};
