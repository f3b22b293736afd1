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

enum { OP_ADD, OP_SUBTRACT, OP_MULTIPLY, OP_DIVIDE, OP_MAXIMUM, OP_MINIMUM, OP_POWER, OP_UNKNOWN };

static int binary_op(const char* op) {
  static const char* const names[] = {"add", "subtract", "multiply", "divide", "maximum", "minimum", "power"};
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
  }
  job->out[out_index] = z;
}

bool hgr_ref_binary_f32(const char* op, const float* a, const int64_t* a_shape, int32_t a_ndim, const float* b,
                        const int64_t* b_shape, int32_t b_ndim, float* out) {
  f32_job_t job = {binary_op(op), a, b, out};
  if (job.op == OP_UNKNOWN) return false;
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
  }
  job->out[out_index] = z;
}

bool hgr_ref_binary_i32(const char* op, const int32_t* a, const int64_t* a_shape, int32_t a_ndim,
                        const int32_t* b, const int64_t* b_shape, int32_t b_ndim, int32_t* out) {
  i32_job_t job = {binary_op(op), a, b, out};
  if (job.op == OP_UNKNOWN || job.op == OP_DIVIDE || job.op == OP_POWER) return false;
  return walk(a_shape, a_ndim, b_shape, b_ndim, visit_i32, &job);
}

bool hgr_ref_unary_f32(const char* op, const float* x, float* y, uint64_t n, double p0, double p1) {
  static const char* const names[] = {"relu", "leaky_relu", "clip", "sigmoid", "tanh", "exp",      "log",
                                      "sqrt", "rsqrt",      "abs",  "negative", "erf", "gelu"};
  int which = -1;
  for (int i = 0; i < (int)(sizeof(names) / sizeof(names[0])); ++i)
    if (!strcmp(op, names[i])) which = i;
  if (which < 0) return false;
  float alpha = to_float(p0), a_min = to_float(p0), a_max = to_float(p1);
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
    }
  }
  return true;
}

/* float32 -> int32 toward zero, saturating; NaN gives 0. */
static int32_t truncate_saturate(float v) {
  if (isnan(v)) return 0;
  if (v >= 2147483648.0f) return INT32_MAX;
  if (v <= -2147483648.0f) return INT32_MIN;
  return (int32_t)v;
}

bool hgr_ref_cast(const char* from_dtype, const void* x, const char* to_dtype, void* y, uint64_t n) {
  bool from_f32 = !strcmp(from_dtype, "float32"), to_f32 = !strcmp(to_dtype, "float32");
  if ((!from_f32 && strcmp(from_dtype, "int32")) || (!to_f32 && strcmp(to_dtype, "int32"))) return false;
  if (from_f32 == to_f32) {
    memcpy(y, x, n * 4);
  } else if (from_f32) {
    for (uint64_t i = 0; i < n; ++i) ((int32_t*)y)[i] = truncate_saturate(((const float*)x)[i]);
  } else {
    for (uint64_t i = 0; i < n; ++i) ((float*)y)[i] = (float)((const int32_t*)x)[i];
  }
  return true;
}
