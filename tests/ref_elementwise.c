#include "ref_elementwise.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "hgr/tensor.h"

bool hgr_ref_broadcast_shape(const int64_t* a_shape, int32_t a_ndim, const int64_t* b_shape, int32_t b_ndim,
                             int64_t* out_shape, int32_t* out_ndim) {
  int32_t ndim = a_ndim > b_ndim ? a_ndim : b_ndim;
  for (int32_t d = 0; d < ndim; ++d) {
    int32_t ka = d - (ndim - a_ndim), kb = d - (ndim - b_ndim);
    int64_t ea = ka < 0 ? 1 : a_shape[ka], eb = kb < 0 ? 1 : b_shape[kb];
    if (ea != eb && ea != 1 && eb != 1) return false;
    out_shape[d] = ea == 1 ? eb : ea;
  }
  *out_ndim = ndim;
  return true;
}

/* Walks the broadcast output in order, handing each element's input offsets to fn. */
typedef void (*visit_fn)(void* self, uint64_t out_index, uint64_t a_index, uint64_t b_index);

static bool walk(const int64_t* a_shape, int32_t a_ndim, const int64_t* b_shape, int32_t b_ndim, visit_fn fn,
                 void* self) {
  int64_t shape[HGR_MAX_DIMS];
  int32_t ndim;
  if (a_ndim > HGR_MAX_DIMS || b_ndim > HGR_MAX_DIMS ||
      !hgr_ref_broadcast_shape(a_shape, a_ndim, b_shape, b_ndim, shape, &ndim))
    return false;
  /* Row-major strides of each input, 0 along the dimensions it is broadcast in. */
  uint64_t a_stride[HGR_MAX_DIMS], b_stride[HGR_MAX_DIMS], a_step = 1, b_step = 1, count = 1;
  for (int32_t d = ndim - 1; d >= 0; --d) {
    int32_t ka = d - (ndim - a_ndim), kb = d - (ndim - b_ndim);
    int64_t ea = ka < 0 ? 1 : a_shape[ka], eb = kb < 0 ? 1 : b_shape[kb];
    a_stride[d] = ea == 1 ? 0 : a_step;
    b_stride[d] = eb == 1 ? 0 : b_step;
    a_step *= (uint64_t)ea;
    b_step *= (uint64_t)eb;
    count *= (uint64_t)shape[d];
  }
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t rest = i, ia = 0, ib = 0;
    for (int32_t d = ndim - 1; d >= 0; --d) {
      uint64_t coord = rest % (uint64_t)shape[d];
      rest /= (uint64_t)shape[d];
      ia += coord * a_stride[d];
      ib += coord * b_stride[d];
    }
    fn(self, i, ia, ib);
  }
  return true;
}

/* float32 of a double, rounding to nearest: beyond FLT_MAX plus half an ulp it is
 * an infinity (the C conversion is undefined out of float's range). */
static float to_float(double value) {
  if (value >= 0x1.ffffffp+127) return INFINITY;
  if (value <= -0x1.ffffffp+127) return -INFINITY;
  if (value > FLT_MAX) return FLT_MAX;
  if (value < -FLT_MAX) return -FLT_MAX;
  return (float)value;
}

enum {
  OP_ADD,
  OP_SUBTRACT,
  OP_MULTIPLY,
  OP_DIVIDE,
  OP_MAXIMUM,
  OP_MINIMUM,
  OP_POWER,
  OP_PRELU,
  OP_MOD,
  OP_FLOOR_MOD,
  OP_UNKNOWN
};

static int binary_op(const char* op) {
  static const char* const names[] = {"add",     "subtract", "multiply", "divide",   "maximum",
                                      "minimum", "power",    "prelu",    "mod",      "floor_mod"};
  for (int i = 0; i < OP_UNKNOWN; ++i)
    if (!strcmp(op, names[i])) return i;
  return OP_UNKNOWN;
}

typedef struct f32_job_t {
  int op;
  const float* a;
  const float* b;
  float* out;
} f32_job_t;

static void visit_f32(void* self, uint64_t out_index, uint64_t a_index, uint64_t b_index) {
  f32_job_t* job = self;
  float x = job->a[a_index], y = job->b[b_index], z = 0;
  switch (job->op) {
    case OP_ADD: z = x + y; break;
    case OP_SUBTRACT: z = x - y; break;
    case OP_MULTIPLY: z = x * y; break;
    case OP_DIVIDE: z = x / y; break;
    case OP_MAXIMUM: z = fmaxf(x, y); break;
    case OP_MINIMUM: z = fminf(x, y); break;
    case OP_POWER: z = to_float(pow((double)x, (double)y)); break;
    case OP_PRELU: z = x < 0.0f ? y * x : x; break;
    case OP_MOD: z = fmodf(x, y); break;
  }
  job->out[out_index] = z;
}

bool hgr_ref_binary_f32(const char* op, const float* a, const int64_t* a_shape, int32_t a_ndim, const float* b,
                        const int64_t* b_shape, int32_t b_ndim, float* out) {
  f32_job_t job = {binary_op(op), a, b, out};
  if (job.op == OP_UNKNOWN || job.op == OP_FLOOR_MOD) return false;
  return walk(a_shape, a_ndim, b_shape, b_ndim, visit_f32, &job);
}

typedef struct i32_job_t {
  int op;
  const int32_t* a;
  const int32_t* b;
  int32_t* out;
} i32_job_t;

/* Two's complement wrap-around of a uint32 (the conversion to int32 is
 * implementation-defined in C above INT32_MAX). */
static int32_t wrap(uint32_t value) {
  return value <= INT32_MAX ? (int32_t)value : (int32_t)(value - 2147483648u) - INT32_MAX - 1;
}

static void visit_i32(void* self, uint64_t out_index, uint64_t a_index, uint64_t b_index) {
  i32_job_t* job = self;
  int32_t x = job->a[a_index], y = job->b[b_index], z = 0;
  switch (job->op) {
    case OP_ADD: z = wrap((uint32_t)x + (uint32_t)y); break;
    case OP_SUBTRACT: z = wrap((uint32_t)x - (uint32_t)y); break;
    case OP_MULTIPLY: z = wrap((uint32_t)x * (uint32_t)y); break;
    case OP_MAXIMUM: z = x > y ? x : y; break;
    case OP_MINIMUM: z = x < y ? x : y; break;
    case OP_MOD: /* C's %, with 0 for y = 0 and for INT32_MIN % -1 */
    case OP_FLOOR_MOD: {
      z = y == 0 || y == -1 ? 0 : x % y;
      if (job->op == OP_FLOOR_MOD && z != 0 && (z < 0) != (y < 0)) z += y;
      break;
    }
  }
  job->out[out_index] = z;
}

bool hgr_ref_binary_i32(const char* op, const int32_t* a, const int64_t* a_shape, int32_t a_ndim,
                        const int32_t* b, const int64_t* b_shape, int32_t b_ndim, int32_t* out) {
  i32_job_t job = {binary_op(op), a, b, out};
  if (job.op == OP_UNKNOWN || job.op == OP_DIVIDE || job.op == OP_POWER || job.op == OP_PRELU) return false;
  return walk(a_shape, a_ndim, b_shape, b_ndim, visit_i32, &job);
}

bool hgr_ref_unary_f32(const char* op, const float* x, float* y, uint64_t n, double p0, double p1) {
  static const char* const names[] = {
      "relu",     "leaky_relu", "clip",    "sigmoid",    "tanh",  "exp",   "log",  "sqrt",         "rsqrt",
      "abs",      "negative",   "erf",     "gelu",       "elu",   "selu",  "hard_sigmoid", "hard_swish",
      "softplus", "softsign",   "reciprocal", "floor",   "ceil",  "round", "sign", "sin",          "cos",
      "tan",      "asin",       "acos",    "atan",       "sinh",  "cosh",  "asinh", "acosh",       "atanh",
      "gelu_tanh"};
  int which = -1;
  for (int i = 0; i < (int)(sizeof(names) / sizeof(names[0])); ++i)
    if (!strcmp(op, names[i])) which = i;
  if (which < 0) return false;
  float alpha = to_float(p0), a_min = to_float(p0), a_max = to_float(p1), beta = to_float(p1);
  for (uint64_t i = 0; i < n; ++i) {
    float v = x[i];
    double d = v;
    switch (which) {
      case 0: y[i] = fmaxf(v, 0.0f); break;
      case 1: y[i] = v > 0.0f ? v : v * alpha; break;
      case 2: y[i] = fmaxf(fminf(v, a_max), a_min); break;
      case 3: y[i] = to_float(1.0 / (1.0 + exp(-d))); break;
      case 4: y[i] = to_float(tanh(d)); break;
      case 5: y[i] = to_float(exp(d)); break;
      case 6: y[i] = to_float(log(d)); break;
      case 7: y[i] = to_float(sqrt(d)); break;
      case 8: y[i] = to_float(1.0 / sqrt(d)); break;
      case 9: y[i] = fabsf(v); break;
      case 10: y[i] = -v; break;
      case 11: y[i] = to_float(erf(d)); break;
      /* erfc(-z) = 1 + erf(z) without the cancellation where erf(z) is near -1. */
      case 12: y[i] = to_float(0.5 * d * erfc(-d / sqrt(2.0))); break;
      case 13: y[i] = v < 0.0f ? to_float(alpha * expm1(d)) : v; break;
      case 14: y[i] = v > 0.0f ? to_float((double)beta * d) : to_float((double)beta * alpha * expm1(d)); break;
      case 15: y[i] = isnan(v) ? v : to_float(fmax(0.0, fmin(1.0, (double)alpha * d + beta))); break;
      case 16: y[i] = to_float(d * fmax(0.0, fmin(1.0, d / 6.0 + 0.5))); break;
      case 17: y[i] = to_float(fmax(d, 0.0) + log1p(exp(-fabs(d)))); break;
      case 18: y[i] = to_float(d / (1.0 + fabs(d))); break;
      case 19: y[i] = to_float(1.0 / d); break;
      case 20: y[i] = floorf(v); break;
      case 21: y[i] = ceilf(v); break;
      case 22: y[i] = rintf(v); break; /* the default rounding mode: half to even */
      case 23: y[i] = v > 0.0f ? 1.0f : v < 0.0f ? -1.0f : v; break;
      case 24: y[i] = to_float(sin(d)); break;
      case 25: y[i] = to_float(cos(d)); break;
      case 26: y[i] = to_float(tan(d)); break;
      case 27: y[i] = to_float(asin(d)); break;
      case 28: y[i] = to_float(acos(d)); break;
      case 29: y[i] = to_float(atan(d)); break;
      case 30: y[i] = to_float(sinh(d)); break;
      case 31: y[i] = to_float(cosh(d)); break;
      case 32: y[i] = to_float(asinh(d)); break;
      case 33: y[i] = to_float(acosh(d)); break;
      case 34: y[i] = to_float(atanh(d)); break;
      /* 0.5 x (1 + tanh(z)) = x sigmoid(2 z), z = sqrt(2 / pi) (x + 0.044715 x^3) */
      case 35: y[i] = to_float(d / (1.0 + exp(-1.5957691216057308 * (d + 0.044715 * d * d * d)))); break;
    }
  }
  return true;
}

/* ---- bool results --------------------------------------------------------------------- */

typedef struct compare_job_t {
  int op;
  bool is_float, is_i64;
  const void* a;
  const void* b;
  uint8_t* out;
} compare_job_t;

enum { CMP_EQUAL, CMP_NOT_EQUAL, CMP_LESS, CMP_LESS_EQUAL, CMP_GREATER, CMP_GREATER_EQUAL, CMP_AND, CMP_OR, CMP_XOR };

static void visit_compare(void* self, uint64_t out_index, uint64_t a_index, uint64_t b_index) {
  compare_job_t* job = self;
  bool r = false;
  if (job->op >= CMP_AND) {
    bool x = ((const uint8_t*)job->a)[a_index] != 0, y = ((const uint8_t*)job->b)[b_index] != 0;
    r = job->op == CMP_AND ? x && y : job->op == CMP_OR ? x || y : x != y;
  } else if (job->is_float) {
    float x = ((const float*)job->a)[a_index], y = ((const float*)job->b)[b_index];
    switch (job->op) {
      case CMP_EQUAL: r = x == y; break;
      case CMP_NOT_EQUAL: r = x != y; break;
      case CMP_LESS: r = x < y; break;
      case CMP_LESS_EQUAL: r = x <= y; break;
      case CMP_GREATER: r = x > y; break;
      case CMP_GREATER_EQUAL: r = x >= y; break;
    }
  } else {
    int64_t x = job->is_i64 ? ((const int64_t*)job->a)[a_index] : ((const int32_t*)job->a)[a_index];
    int64_t y = job->is_i64 ? ((const int64_t*)job->b)[b_index] : ((const int32_t*)job->b)[b_index];
    switch (job->op) {
      case CMP_EQUAL: r = x == y; break;
      case CMP_NOT_EQUAL: r = x != y; break;
      case CMP_LESS: r = x < y; break;
      case CMP_LESS_EQUAL: r = x <= y; break;
      case CMP_GREATER: r = x > y; break;
      case CMP_GREATER_EQUAL: r = x >= y; break;
    }
  }
  job->out[out_index] = r;
}

bool hgr_ref_compare(const char* op, const char* dtype, const void* a, const int64_t* a_shape, int32_t a_ndim,
                     const void* b, const int64_t* b_shape, int32_t b_ndim, uint8_t* out) {
  static const char* const names[] = {"equal",         "not_equal",   "less",       "less_equal", "greater",
                                      "greater_equal", "logical_and", "logical_or", "logical_xor"};
  compare_job_t job = {-1, !strcmp(dtype, "float32"), !strcmp(dtype, "int64"), a, b, out};
  for (int i = 0; i < (int)(sizeof(names) / sizeof(names[0])); ++i)
    if (!strcmp(op, names[i])) job.op = i;
  bool dtype_ok =
      job.op >= CMP_AND ? !strcmp(dtype, "bool") : job.is_float || job.is_i64 || !strcmp(dtype, "int32");
  if (job.op < 0 || !dtype_ok) return false;
  return walk(a_shape, a_ndim, b_shape, b_ndim, visit_compare, &job);
}

bool hgr_ref_unary_bool(const char* op, const void* x, uint8_t* y, uint64_t n, bool detect_positive,
                        bool detect_negative) {
  for (uint64_t i = 0; i < n; ++i) {
    if (!strcmp(op, "logical_not")) {
      y[i] = ((const uint8_t*)x)[i] == 0;
    } else {
      float v = ((const float*)x)[i];
      if (!strcmp(op, "isnan")) y[i] = isnan(v) != 0;
      else if (!strcmp(op, "isinf")) y[i] = (detect_positive && v == INFINITY) || (detect_negative && v == -INFINITY);
      else return false;
    }
  }
  return true;
}

/* Offset in a tensor of shape (ndim) of the element broadcast to output element i. */
static uint64_t broadcast_offset(uint64_t i, const int64_t* out_shape, int32_t out_ndim, const int64_t* shape,
                                 int32_t ndim) {
  uint64_t offset = 0, stride = 1;
  for (int32_t d = out_ndim - 1; d >= 0; --d) {
    uint64_t coord = i % (uint64_t)out_shape[d];
    i /= (uint64_t)out_shape[d];
    int32_t k = d - (out_ndim - ndim);
    if (k < 0) continue;
    if (shape[k] != 1) offset += coord * stride;
    stride *= (uint64_t)shape[k];
  }
  return offset;
}

bool hgr_ref_where(const uint8_t* c, const int64_t* c_shape, int32_t c_ndim, const void* x, const int64_t* x_shape,
                   int32_t x_ndim, const void* y, const int64_t* y_shape, int32_t y_ndim, size_t element_bytes,
                   void* out) {
  int64_t cx_shape[HGR_MAX_DIMS], shape[HGR_MAX_DIMS];
  int32_t cx_ndim, ndim;
  if (c_ndim > HGR_MAX_DIMS || x_ndim > HGR_MAX_DIMS || y_ndim > HGR_MAX_DIMS ||
      !hgr_ref_broadcast_shape(c_shape, c_ndim, x_shape, x_ndim, cx_shape, &cx_ndim) ||
      !hgr_ref_broadcast_shape(cx_shape, cx_ndim, y_shape, y_ndim, shape, &ndim))
    return false;
  uint64_t count = 1;
  for (int32_t d = 0; d < ndim; ++d) count *= (uint64_t)shape[d];
  for (uint64_t i = 0; i < count; ++i) {
    bool pick_x = c[broadcast_offset(i, shape, ndim, c_shape, c_ndim)] != 0;
    const uint8_t* from = pick_x ? x : y;
    uint64_t offset = pick_x ? broadcast_offset(i, shape, ndim, x_shape, x_ndim)
                             : broadcast_offset(i, shape, ndim, y_shape, y_ndim);
    memcpy((uint8_t*)out + element_bytes * i, from + element_bytes * offset, element_bytes);
  }
  return true;
}

/* The cast dtypes, by their index in cast_names; -1 another. */
enum { C_F32, C_I32, C_I64, C_U8, C_I8, C_BOOL, C_U16, C_I16, C_F16, C_BF16 };
static const char* const cast_names[] = {"float32", "int32", "int64",  "uint8",   "int8",
                                         "bool",    "uint16", "int16", "float16", "bfloat16"};
static int cast_dtype(const char* dtype) {
  for (int i = 0; i < (int)(sizeof(cast_names) / sizeof(cast_names[0])); ++i)
    if (!strcmp(dtype, cast_names[i])) return i;
  return -1;
}

/* The bits of f in a binary format of mantissa_bits and exponent_bits, rounding to
 * nearest even (the host's default rounding mode, through nearbyint); NaN is the
 * format's quiet NaN. By arithmetic on the value, not on float32's bits. */
static uint32_t to_binary(float f, int mantissa_bits, int exponent_bits) {
  uint32_t sign = signbit(f) ? 1u << (mantissa_bits + exponent_bits) : 0;
  int bias = (1 << (exponent_bits - 1)) - 1, max_exponent = (1 << exponent_bits) - 1;
  uint32_t infinity = (uint32_t)max_exponent << mantissa_bits;
  if (isnan(f)) return infinity | 1u << (mantissa_bits - 1);
  double a = fabs((double)f);
  if (isinf(a)) return sign | infinity;
  if (a >= ldexp(1.0, 1 - bias)) { /* normal */
    int exponent;
    frexp(a, &exponent); /* a = m * 2^exponent, m in [0.5, 1) */
    --exponent;
    double mantissa = nearbyint((a / ldexp(1.0, exponent) - 1.0) * ldexp(1.0, mantissa_bits));
    if (mantissa == ldexp(1.0, mantissa_bits)) {
      mantissa = 0;
      ++exponent;
    }
    if (exponent + bias >= max_exponent) return sign | infinity;
    return sign | (uint32_t)(exponent + bias) << mantissa_bits | (uint32_t)mantissa;
  }
  /* subnormal: units of 2^(1 - bias - mantissa_bits); rounding up to the smallest normal sets its exponent bit */
  return sign | (uint32_t)nearbyint(a * ldexp(1.0, bias - 1 + mantissa_bits));
}

/* The value of bits in that format. */
static float from_binary(uint32_t bits, int mantissa_bits, int exponent_bits) {
  int bias = (1 << (exponent_bits - 1)) - 1, max_exponent = (1 << exponent_bits) - 1;
  uint32_t mantissa = bits & ((1u << mantissa_bits) - 1);
  int exponent = (int)(bits >> mantissa_bits) & max_exponent;
  bool negative = (bits >> (mantissa_bits + exponent_bits)) & 1;
  double value;
  if (exponent == max_exponent) value = mantissa ? NAN : INFINITY;
  else if (exponent) value = ldexp(1.0 + ldexp((double)mantissa, -mantissa_bits), exponent - bias);
  else value = ldexp((double)mantissa, 1 - bias - mantissa_bits);
  return (float)(negative ? -value : value);
}

uint16_t hgr_ref_float16_bits(float f) { return (uint16_t)to_binary(f, 10, 5); }
float hgr_ref_float16_value(uint16_t bits) { return from_binary(bits, 10, 5); }
uint16_t hgr_ref_bfloat16_bits(float f) { return (uint16_t)to_binary(f, 7, 8); }
float hgr_ref_bfloat16_value(uint16_t bits) { return from_binary(bits, 7, 8); }

bool hgr_ref_cast(const char* from_dtype, const void* x, const char* to_dtype, void* y, uint64_t n) {
  int from = cast_dtype(from_dtype), to = cast_dtype(to_dtype);
  if (from < 0 || to < 0) return false;
  bool from_float = from == C_F32 || from == C_F16 || from == C_BF16;
  for (uint64_t i = 0; i < n; ++i) {
    /* the value: a float, or an integer */
    float f = 0;
    int64_t v = 0;
    switch (from) {
      case C_F32: f = ((const float*)x)[i]; break;
      case C_F16: f = hgr_ref_float16_value(((const uint16_t*)x)[i]); break;
      case C_BF16: f = hgr_ref_bfloat16_value(((const uint16_t*)x)[i]); break;
      case C_I32: v = ((const int32_t*)x)[i]; break;
      case C_I64: v = ((const int64_t*)x)[i]; break;
      case C_U8: v = ((const uint8_t*)x)[i]; break;
      case C_I8: v = ((const int8_t*)x)[i]; break;
      case C_BOOL: v = ((const uint8_t*)x)[i] != 0; break;
      case C_U16: v = ((const uint16_t*)x)[i]; break;
      case C_I16: v = ((const int16_t*)x)[i]; break;
    }
    if (!from_float) f = (float)v; /* to a float: int64 -> float rounds to nearest even */
    if (to == C_F32 || to == C_F16 || to == C_BF16) {
      if (to == C_F32) ((float*)y)[i] = f;
      else ((uint16_t*)y)[i] = to == C_F16 ? hgr_ref_float16_bits(f) : hgr_ref_bfloat16_bits(f);
      continue;
    }
    if (to == C_BOOL) {
      ((uint8_t*)y)[i] = from_float ? f != 0 : v != 0; /* NaN != 0 */
      continue;
    }
    int64_t r;
    if (from_float) {
      /* toward zero, saturating; NaN gives 0. 2^63 is exact in double. */
      static const int64_t lowest[] = {[C_I32] = INT32_MIN, [C_I64] = INT64_MIN, [C_U8] = 0,
                                       [C_I8] = INT8_MIN,   [C_U16] = 0,         [C_I16] = INT16_MIN};
      static const int64_t highest[] = {[C_I32] = INT32_MAX, [C_I64] = INT64_MAX, [C_U8] = UINT8_MAX,
                                        [C_I8] = INT8_MAX,   [C_U16] = UINT16_MAX, [C_I16] = INT16_MAX};
      if (isnan(f)) r = 0;
      else if (f >= 9223372036854775808.0) r = INT64_MAX;
      else if (f <= -9223372036854775808.0) r = INT64_MIN;
      else r = (int64_t)f;
      if (r < lowest[to]) r = lowest[to];
      if (r > highest[to]) r = highest[to];
    } else {
      r = v; /* to int32 saturating (int64 is held as int32); to 8 and 16 bits, the low bits */
      if (to == C_I32) r = r < INT32_MIN ? INT32_MIN : r > INT32_MAX ? INT32_MAX : r;
    }
    switch (to) {
      case C_I32: ((int32_t*)y)[i] = (int32_t)r; break;
      case C_I64: ((int64_t*)y)[i] = r; break;
      case C_U8: ((uint8_t*)y)[i] = (uint8_t)r; break;
      case C_I8: ((int8_t*)y)[i] = (int8_t)(uint8_t)r; break;
      case C_U16: ((uint16_t*)y)[i] = (uint16_t)r; break;
      case C_I16: ((int16_t*)y)[i] = (int16_t)(uint16_t)r; break;
    }
  }
  return true;
}
