/* Elementwise ops (kernels/elementwise.cl): binary ops with NumPy broadcasting,
 * comparisons and logical ops on bool (uint1, one byte per element), where, unary
 * ops and cast, with Relay's names and attrs (ONNX's where Relay has no such op). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ops.h"

/* What a binary op takes and gives: its inputs' dtypes (one for both), its output's
 * dtype and shape. */
enum {
  BINARY_F32 = 0,  /* float32 -> float32 */
  BINARY_F32_I32,  /* float32 or int32 -> the same */
  BINARY_I32,      /* int32 -> int32 */
  BINARY_COMPARE,  /* float32, int32 or int64 -> bool */
  BINARY_LOGICAL,  /* bool -> bool */
  BINARY_PRELU,    /* float32 -> float32, shaped like input 0 (the slope broadcasts to it) */
};
/* Unary ops: which scalar arguments the kernel takes, and its dtypes. */
enum {
  UNARY_PLAIN = 0,
  UNARY_LEAKY_RELU,
  UNARY_CLIP,
  UNARY_ELU,
  UNARY_SELU,
  UNARY_HARD_SIGMOID,
  UNARY_ISNAN,       /* float32 -> bool */
  UNARY_ISINF,       /* float32 -> bool */
  UNARY_LOGICAL_NOT, /* bool -> bool */
};

/* The dtypes the elementwise kernels know, with their kernel-name suffixes. */
#define DTYPE_BOOL ((hgr_dtype_t){HGR_DTYPE_UINT, 1, 1})
enum { F32 = 1, I32 = 2, I64 = 4, U8 = 8, I8 = 16, BOOL = 32, U16 = 64, I16 = 128, F16 = 256, BF16 = 512 };
static const struct {
  const char* name;
  hgr_dtype_t dtype;
  const char* suffix;
  unsigned flag;
} known_dtypes[] = {
    {"float32", {HGR_DTYPE_FLOAT, 32, 1}, "f32", F32}, {"int32", {HGR_DTYPE_INT, 32, 1}, "i32", I32},
    {"int64", {HGR_DTYPE_INT, 64, 1}, "i64", I64},     {"uint8", {HGR_DTYPE_UINT, 8, 1}, "u8", U8},
    {"int8", {HGR_DTYPE_INT, 8, 1}, "i8", I8},         {"bool", {HGR_DTYPE_UINT, 1, 1}, "bool", BOOL},
    {"uint16", {HGR_DTYPE_UINT, 16, 1}, "u16", U16},   {"int16", {HGR_DTYPE_INT, 16, 1}, "i16", I16},
    {"float16", {HGR_DTYPE_FLOAT, 16, 1}, "f16", F16}, {"bfloat16", {HGR_DTYPE_BFLOAT, 16, 1}, "bf16", BF16},
};
#define KNOWN_DTYPE_COUNT (sizeof(known_dtypes) / sizeof(known_dtypes[0]))

/* The index of dtype in known_dtypes, or -1. */
static int known_dtype(hgr_dtype_t dtype) {
  for (size_t k = 0; k < KNOWN_DTYPE_COUNT; ++k)
    if (hgr__dtype_same(dtype, known_dtypes[k].dtype)) return (int)k;
  return -1;
}

static const char* dtype_suffix(hgr_dtype_t dtype) {
  int k = known_dtype(dtype);
  return k < 0 ? "?" : known_dtypes[k].suffix;
}

/* The names of the dtypes in allowed (F32 | I32 ...), "float32, int32 and bool". */
static void allowed_names(unsigned allowed, const char* last_join, char* buffer, size_t capacity) {
  size_t count = 0, total = 0, length = 0;
  for (size_t k = 0; k < KNOWN_DTYPE_COUNT; ++k) total += (allowed & known_dtypes[k].flag) != 0;
  buffer[0] = '\0';
  for (size_t k = 0; k < KNOWN_DTYPE_COUNT && length < capacity; ++k) {
    if (!(allowed & known_dtypes[k].flag)) continue;
    const char* join = count == 0 ? "" : count + 1 == total ? last_join : ", ";
    int n = snprintf(buffer + length, capacity - length, "%s%s", join, known_dtypes[k].name);
    length += n > 0 ? (size_t)n : 0;
    ++count;
  }
}

/* Checks that input index's dtype is one of allowed. */
static hgr_status_t check_input_dtype(const hgr__op_ctx_t* ctx, uint32_t index, unsigned allowed) {
  const hgr__entry_t* entry = hgr__op_input(ctx, index);
  int k = known_dtype(entry->dtype);
  if (k >= 0 && (allowed & known_dtypes[k].flag)) return HGR_OK;
  char got[32], names[160];
  allowed_names(allowed, " and ", names, sizeof(names));
  return HGR__OP_ERROR(ctx, "input %u (entry %u) is %s; the op supports %s", index,
                       (uint32_t)(entry - ctx->graph->entries), hgr_dtype_format(entry->dtype, got, sizeof(got)),
                       names);
}

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

/* The NumPy broadcast of a's and b's shapes (named a_name and b_name in the error)
 * into *out (ndim and shape only; out may be a). */
static hgr_status_t broadcast_shape(const hgr__op_ctx_t* ctx, const hgr__entry_t* a, const char* a_name,
                                    const hgr__entry_t* b, const char* b_name, hgr__entry_t* out) {
  hgr__entry_t result;
  memset(&result, 0, sizeof(result));
  result.ndim = a->ndim > b->ndim ? a->ndim : b->ndim;
  for (int32_t d = 0; d < result.ndim; ++d) {
    int64_t ea = hgr__broadcast_extent(a, -1, result.ndim, d), eb = hgr__broadcast_extent(b, -1, result.ndim, d);
    if (ea != eb && ea != 1 && eb != 1) {
      char a_text[160], b_text[160];
      return HGR__OP_ERROR(ctx,
                           "%s shaped %s and %s shaped %s do not broadcast: %lld against %lld in "
                           "dimension %d from the right",
                           a_name, hgr__entry_shape(a, a_text, sizeof(a_text)), b_name,
                           hgr__entry_shape(b, b_text, sizeof(b_text)), (long long)ea, (long long)eb,
                           result.ndim - d);
    }
    result.shape[d] = ea == 1 ? eb : ea;
  }
  *out = result;
  return HGR_OK;
}

/* The broadcast kernels' meta buffer, of the collapsed output (hgr__collapse_broadcast):
 * {ndim, extent[ndim], stride[ndim] of each input}. */
#define MAX_BROADCAST_INPUTS 3

/* Appends the broadcast meta of c (count inputs) to launch l. */
static void broadcast_meta(hgr__op_ctx_t* ctx, hgr__launch_plan_t* l, const hgr__collapsed_t* c, uint32_t count) {
  int32_t extents[HGR_MAX_DIMS], strides[MAX_BROADCAST_INPUTS][HGR_MAX_DIMS];
  int64_t step[MAX_BROADCAST_INPUTS] = {1, 1, 1};
  for (int32_t k = c->ndim - 1; k >= 0; --k) {
    extents[k] = (int32_t)c->extent[k];
    for (uint32_t j = 0; j < count; ++j) {
      strides[j][k] = c->full[j][k] ? (int32_t)step[j] : 0;
      if (c->full[j][k]) step[j] *= c->extent[k];
    }
  }
  hgr__launch_meta_arg(ctx, l);
  hgr__launch_meta1(ctx, l, c->ndim);
  hgr__launch_meta(ctx, l, extents, (uint32_t)c->ndim);
  for (uint32_t j = 0; j < count; ++j) hgr__launch_meta(ctx, l, strides[j], (uint32_t)c->ndim);
}

/* Inputs: a dtype the op takes, shared by both; the output: their broadcast. */
static hgr_status_t infer_binary(hgr__op_ctx_t* ctx, hgr__entry_t* outputs) {
  static const unsigned allowed[] = {
      [BINARY_F32] = F32, [BINARY_F32_I32] = F32 | I32, [BINARY_I32] = I32,
      [BINARY_COMPARE] = F32 | I32 | I64, [BINARY_LOGICAL] = BOOL, [BINARY_PRELU] = F32,
  };
  int kind = ctx->op->variant;
  const hgr__entry_t* a = hgr__op_input(ctx, 0);
  const hgr__entry_t* b = hgr__op_input(ctx, 1);
  HGR_RETURN_IF_ERROR(check_input_dtype(ctx, 0, allowed[kind]));
  HGR_RETURN_IF_ERROR(check_same_dtype(ctx, b, "input 1", a, "input 0"));
  HGR_RETURN_IF_ERROR(broadcast_shape(ctx, a, "input 0", b, "input 1", &outputs[0]));
  bool slope_fits = outputs[0].ndim == a->ndim; /* prelu: the broadcast is the data's shape */
  for (int32_t d = 0; slope_fits && d < a->ndim; ++d) slope_fits = outputs[0].shape[d] == a->shape[d];
  if (kind == BINARY_PRELU && !slope_fits) {
    char a_text[160], b_text[160];
    return HGR__OP_ERROR(ctx, "the slope (input 1) shaped %s does not broadcast to the data (input 0) shaped %s",
                         hgr__entry_shape(b, b_text, sizeof(b_text)), hgr__entry_shape(a, a_text, sizeof(a_text)));
  }
  outputs[0].dtype = kind == BINARY_COMPARE || kind == BINARY_LOGICAL ? DTYPE_BOOL : a->dtype;
  return HGR_OK;
}

static hgr_status_t plan_binary(hgr__op_ctx_t* ctx) {
  const hgr__entry_t* inputs[2] = {hgr__op_input(ctx, 0), hgr__op_input(ctx, 1)};
  const hgr__entry_t* out = hgr__op_output(ctx, 0); /* the broadcast (infer_binary) */
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "the output's element count", out->element_count, INT32_MAX));

  hgr__collapsed_t c;
  hgr__collapse_broadcast(inputs, NULL, 2, out, &c);
  const char* variant = "_broadcast";
  if (out->element_count == 0 || c.ndim == 0 || (c.ndim == 1 && c.full[0][0] && c.full[1][0])) variant = "";
  else if (c.ndim == 1 && c.full[1][0]) variant = "_scalar_a";
  else if (c.ndim == 1 && c.full[0][0]) variant = "_scalar_b";

  char kernel[64];
  snprintf(kernel, sizeof(kernel), "hgr_%s_%s%s", ctx->op->name, dtype_suffix(inputs[0]->dtype), variant);
  hgr__launch_plan_t* l = hgr__op_launch(ctx, kernel);
  hgr__launch_input(ctx, l, 0);
  hgr__launch_input(ctx, l, 1);
  hgr__launch_output(ctx, l, 0);
  hgr__launch_int(ctx, l, (int32_t)out->element_count);
  if (!strcmp(variant, "_broadcast")) broadcast_meta(ctx, l, &c, 2);
  hgr__launch_1d(ctx, l, out->element_count);
  return HGR_OK;
}

/* where(condition, x, y): condition bool, x and y of one dtype (any the family
 * knows); the output is the three-way broadcast, of x's dtype. */
static hgr_status_t infer_where(hgr__op_ctx_t* ctx, hgr__entry_t* outputs) {
  const hgr__entry_t* condition = hgr__op_input(ctx, 0);
  const hgr__entry_t* x = hgr__op_input(ctx, 1);
  const hgr__entry_t* y = hgr__op_input(ctx, 2);
  HGR_RETURN_IF_ERROR(check_input_dtype(ctx, 0, BOOL));
  HGR_RETURN_IF_ERROR(check_input_dtype(ctx, 1, F32 | I32 | I64 | U8 | I8 | BOOL));
  HGR_RETURN_IF_ERROR(check_same_dtype(ctx, y, "input 2", x, "input 1"));
  HGR_RETURN_IF_ERROR(broadcast_shape(ctx, condition, "input 0", x, "input 1", &outputs[0]));
  HGR_RETURN_IF_ERROR(broadcast_shape(ctx, &outputs[0], "the broadcast of inputs 0 and 1", y, "input 2", &outputs[0]));
  outputs[0].dtype = x->dtype;
  return HGR_OK;
}

static hgr_status_t plan_where(hgr__op_ctx_t* ctx) {
  const hgr__entry_t* inputs[3] = {hgr__op_input(ctx, 0), hgr__op_input(ctx, 1), hgr__op_input(ctx, 2)};
  const hgr__entry_t* out = hgr__op_output(ctx, 0); /* the broadcast (infer_where) */
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "the output's element count", out->element_count, INT32_MAX));
  hgr__collapsed_t c;
  hgr__collapse_broadcast(inputs, NULL, 3, out, &c);
  bool equal_shapes =
      out->element_count == 0 || c.ndim == 0 || (c.ndim == 1 && c.full[0][0] && c.full[1][0] && c.full[2][0]);
  char kernel[64];
  snprintf(kernel, sizeof(kernel), "hgr_where_%u%s", (unsigned)(8 * hgr_dtype_element_bytes(out->dtype)),
           equal_shapes ? "" : "_broadcast");
  hgr__launch_plan_t* l = hgr__op_launch(ctx, kernel);
  for (uint32_t j = 0; j < 3; ++j) hgr__launch_input(ctx, l, j);
  hgr__launch_output(ctx, l, 0);
  hgr__launch_int(ctx, l, (int32_t)out->element_count);
  if (!equal_shapes) broadcast_meta(ctx, l, &c, 3);
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

/* The scalar arguments of a unary kernel after x, y and n, from the node's attrs. */
typedef struct unary_args_t {
  float floats[2];
  uint32_t float_count;
  int32_t ints[2];
  uint32_t int_count;
} unary_args_t;

static hgr_status_t float_arg(const hgr__op_ctx_t* ctx, const char* key, double fallback, unary_args_t* args) {
  double value;
  HGR_RETURN_IF_ERROR(hgr__attr_float(ctx, key, fallback, &value));
  args->floats[args->float_count++] = to_float(value);
  return HGR_OK;
}

static hgr_status_t bool_arg(const hgr__op_ctx_t* ctx, const char* key, bool fallback, unary_args_t* args) {
  bool value;
  HGR_RETURN_IF_ERROR(hgr__attr_bool(ctx, key, fallback, &value));
  args->ints[args->int_count++] = value;
  return HGR_OK;
}

/* leaky_relu (alpha), clip (a_min, a_max), elu (alpha), selu (alpha, gamma),
 * hard_sigmoid (alpha, beta), isinf (detect_positive, detect_negative). */
static hgr_status_t unary_args(const hgr__op_ctx_t* ctx, unary_args_t* args) {
  memset(args, 0, sizeof(*args));
  switch (ctx->op->variant) {
    case UNARY_LEAKY_RELU: return float_arg(ctx, "alpha", 0.01, args);
    case UNARY_CLIP: {
      double a_min, a_max;
      HGR_RETURN_IF_ERROR(required_float(ctx, "a_min", "the lower bound", &a_min));
      HGR_RETURN_IF_ERROR(required_float(ctx, "a_max", "the upper bound", &a_max));
      if (a_min > a_max) return HGR__OP_ERROR(ctx, "attr 'a_min' = %g is above attr 'a_max' = %g", a_min, a_max);
      args->floats[0] = to_float(a_min);
      args->floats[1] = to_float(a_max);
      args->float_count = 2;
      return HGR_OK;
    }
    case UNARY_ELU: return float_arg(ctx, "alpha", 1.0, args);
    case UNARY_SELU:
      HGR_RETURN_IF_ERROR(float_arg(ctx, "alpha", 1.67326319217681884765625, args));
      return float_arg(ctx, "gamma", 1.05070102214813232421875, args);
    case UNARY_HARD_SIGMOID:
      HGR_RETURN_IF_ERROR(float_arg(ctx, "alpha", 0.2, args));
      return float_arg(ctx, "beta", 0.5, args);
    case UNARY_ISINF:
      HGR_RETURN_IF_ERROR(bool_arg(ctx, "detect_positive", true, args));
      return bool_arg(ctx, "detect_negative", true, args);
    default: return HGR_OK;
  }
}

static hgr_status_t infer_unary(hgr__op_ctx_t* ctx, hgr__entry_t* outputs) {
  int kind = ctx->op->variant;
  const hgr__entry_t* in = hgr__op_input(ctx, 0);
  HGR_RETURN_IF_ERROR(check_input_dtype(ctx, 0, kind == UNARY_LOGICAL_NOT ? BOOL : F32));
  unary_args_t args;
  HGR_RETURN_IF_ERROR(unary_args(ctx, &args));
  bool to_bool = kind == UNARY_ISNAN || kind == UNARY_ISINF || kind == UNARY_LOGICAL_NOT;
  hgr__op_set_output(&outputs[0], to_bool ? DTYPE_BOOL : in->dtype, in->shape, in->ndim);
  return HGR_OK;
}

static hgr_status_t plan_unary(hgr__op_ctx_t* ctx) {
  const hgr__entry_t* out = hgr__op_output(ctx, 0);
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "the output's element count", out->element_count, INT32_MAX));
  unary_args_t args;
  HGR_RETURN_IF_ERROR(unary_args(ctx, &args));
  char kernel[64];
  snprintf(kernel, sizeof(kernel), "hgr_%s_%s", ctx->op->name, dtype_suffix(hgr__op_input(ctx, 0)->dtype));
  hgr__launch_plan_t* l = hgr__op_launch(ctx, kernel);
  hgr__launch_input(ctx, l, 0);
  hgr__launch_output(ctx, l, 0);
  hgr__launch_int(ctx, l, (int32_t)out->element_count);
  for (uint32_t k = 0; k < args.float_count; ++k) hgr__launch_float(ctx, l, args.floats[k]);
  for (uint32_t k = 0; k < args.int_count; ++k) hgr__launch_int(ctx, l, args.ints[k]);
  hgr__launch_1d(ctx, l, out->element_count);
  return HGR_OK;
}

/* What cast converts between: every dtype here. */
enum { CASTABLE = F32 | I32 | I64 | U8 | I8 | BOOL | U16 | I16 | F16 | BF16 };

/* The output's dtype, from attr 'dtype'. */
static hgr_status_t cast_dtype(const hgr__op_ctx_t* ctx, hgr_dtype_t* out_dtype) {
  char names[160];
  const char* dtype = hgr__attr_string(ctx, "dtype", NULL);
  if (!dtype) {
    allowed_names(CASTABLE, " or ", names, sizeof(names));
    return HGR__OP_ERROR(ctx, "attr 'dtype' (the output's dtype: %s) is required", names);
  }
  for (size_t k = 0; k < KNOWN_DTYPE_COUNT; ++k)
    if (!strcmp(dtype, known_dtypes[k].name)) {
      *out_dtype = known_dtypes[k].dtype;
      return HGR_OK;
    }
  allowed_names(CASTABLE, " and ", names, sizeof(names));
  return HGR__OP_ERROR(ctx, "attr 'dtype' = \"%s\" is not supported; cast converts between %s", dtype, names);
}

static hgr_status_t infer_cast(hgr__op_ctx_t* ctx, hgr__entry_t* outputs) {
  const hgr__entry_t* in = hgr__op_input(ctx, 0);
  hgr_dtype_t dtype;
  HGR_RETURN_IF_ERROR(cast_dtype(ctx, &dtype));
  HGR_RETURN_IF_ERROR(check_input_dtype(ctx, 0, CASTABLE));
  hgr__op_set_output(&outputs[0], dtype, in->shape, in->ndim);
  return HGR_OK;
}

static hgr_status_t plan_cast(hgr__op_ctx_t* ctx) {
  const hgr__entry_t* in = hgr__op_input(ctx, 0);
  const hgr__entry_t* out = hgr__op_output(ctx, 0); /* the attr's dtype (infer_cast) */
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "the output's element count", out->element_count, INT32_MAX));
  char kernel[64];
  snprintf(kernel, sizeof(kernel), "hgr_cast_%s_%s", dtype_suffix(in->dtype), dtype_suffix(out->dtype));
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
    BINARY(mod, BINARY_F32_I32),
    BINARY(floor_mod, BINARY_I32),
    BINARY(prelu, BINARY_PRELU),
    BINARY(equal, BINARY_COMPARE),
    BINARY(not_equal, BINARY_COMPARE),
    BINARY(less, BINARY_COMPARE),
    BINARY(less_equal, BINARY_COMPARE),
    BINARY(greater, BINARY_COMPARE),
    BINARY(greater_equal, BINARY_COMPARE),
    BINARY(logical_and, BINARY_LOGICAL),
    BINARY(logical_or, BINARY_LOGICAL),
    BINARY(logical_xor, BINARY_LOGICAL),
    {"where", "elementwise", 3, 3, 1, 1, "", plan_where, 0, HGR__IN_PLACE_ELEMENTWISE, infer_where},
    UNARY(relu, "", UNARY_PLAIN),
    UNARY(leaky_relu, "alpha", UNARY_LEAKY_RELU),
    UNARY(clip, "a_min a_max", UNARY_CLIP),
    UNARY(elu, "alpha", UNARY_ELU),
    UNARY(selu, "alpha gamma", UNARY_SELU),
    UNARY(hard_sigmoid, "alpha beta", UNARY_HARD_SIGMOID),
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
    UNARY(gelu_tanh, "", UNARY_PLAIN),
    UNARY(softplus, "", UNARY_PLAIN),
    UNARY(softsign, "", UNARY_PLAIN),
    UNARY(hard_swish, "", UNARY_PLAIN),
    UNARY(reciprocal, "", UNARY_PLAIN),
    UNARY(floor, "", UNARY_PLAIN),
    UNARY(ceil, "", UNARY_PLAIN),
    UNARY(round, "", UNARY_PLAIN),
    UNARY(sign, "", UNARY_PLAIN),
    UNARY(sin, "", UNARY_PLAIN),
    UNARY(cos, "", UNARY_PLAIN),
    UNARY(tan, "", UNARY_PLAIN),
    UNARY(asin, "", UNARY_PLAIN),
    UNARY(acos, "", UNARY_PLAIN),
    UNARY(atan, "", UNARY_PLAIN),
    UNARY(sinh, "", UNARY_PLAIN),
    UNARY(cosh, "", UNARY_PLAIN),
    UNARY(asinh, "", UNARY_PLAIN),
    UNARY(acosh, "", UNARY_PLAIN),
    UNARY(atanh, "", UNARY_PLAIN),
    UNARY(isnan, "", UNARY_ISNAN),
    UNARY(isinf, "detect_positive detect_negative", UNARY_ISINF),
    UNARY(logical_not, "", UNARY_LOGICAL_NOT),
    {"cast", "elementwise", 1, 1, 1, 1, "dtype", plan_cast, 0, HGR__IN_PLACE_ELEMENTWISE, infer_cast},
    {.name = NULL},
};
