/* ONNX's elementwise ops: unary, binary with NumPy broadcasting, variadic
 * (Sum/Mean/Max/Min), comparisons and logic, Gelu, Where, Clip, Cast, Identity, Dropout;
 * each folds on the host when its inputs are constants. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_internal.h"

/* ---- host evaluation -------------------------------------------------------------- */

typedef double (*unary_fn)(double x, double alpha, double beta);
typedef double (*binary_fn)(double a, double b);

/* The element of a (shape a_shape, broadcast into out_shape) at output index i. */
static uint64_t broadcast_index(const int64_t* out_shape, int32_t ndim, const int64_t* shape, int32_t shape_ndim,
                                uint64_t i) {
  uint64_t index = 0, stride = 1;
  for (int32_t d = ndim - 1; d >= 0; --d) {
    uint64_t coordinate = i % (uint64_t)out_shape[d];
    i /= (uint64_t)out_shape[d];
    int32_t sd = d - (ndim - shape_ndim);
    if (sd < 0) continue;
    if (shape[sd] != 1) index += coordinate * stride;
    stride *= (uint64_t)shape[sd];
  }
  return index;
}

/* Folds an n-ary elementwise op over constant inputs: out_type elements computed
 * in double (floats) or int64 (ints) by fn over broadcast operands. */
static hgr_status_t fold_nary(hgr__onnx_node_t* node, uint32_t count, int32_t out_type,
                              double (*fn)(const double* x, uint32_t n, const hgr__onnx_node_t* node)) {
  int64_t shape[HGR_MAX_DIMS];
  int32_t ndim = 0;
  const hgr__onnx_tensor_t* t[8];
  if (count > 8) return HGR__ONNX_UNSUPPORTED(node, "folding more than 8 inputs");
  for (uint32_t i = 0; i < count; ++i) {
    t[i] = node->inputs[i] ? node->inputs[i]->constant : NULL;
    if (!t[i]) return HGR__ONNX_UNSUPPORTED(node, "input %u is omitted", i);
    if (i == 0) {
      ndim = t[0]->ndim;
      memcpy(shape, t[0]->shape, sizeof(shape));
    } else {
      HGR_RETURN_IF_ERROR(hgr__onnx_broadcast(node, shape, ndim, t[i]->shape, t[i]->ndim, shape, &ndim));
    }
  }
  hgr__onnx_tensor_t* out = NULL;
  HGR_RETURN_IF_ERROR(hgr__onnx_tensor_new(node->loader->allocator, out_type, shape, ndim, node->label, &out));
  double x[8];
  for (uint64_t i = 0; i < out->count; ++i) {
    for (uint32_t k = 0; k < count; ++k)
      x[k] = hgr__onnx_tensor_f64(t[k], broadcast_index(shape, ndim, t[k]->shape, t[k]->ndim, i));
    /* set_f64 converts to an integer type with NaN and range handled: an integer
     * result beyond int64 (a Div by 0, a Pow) is no undefined conversion */
    hgr__onnx_tensor_set_f64(out, i, fn(x, count, node));
  }
  return hgr__onnx_set_constant(node, 0, out);
}

/* ---- the table ------------------------------------------------------------------- */

enum kind { UNARY, BINARY, COMPARE, LOGIC };

typedef struct elementwise_t {
  const char* onnx;
  const char* op;      /* hgr's op */
  enum kind kind;
  const char* attrs;   /* ONNX attrs read: "alpha" / "alpha gamma" / "alpha beta" */
  double alpha, beta;  /* their defaults */
  double (*eval)(double a, double b, double alpha, double beta); /* host: unary ignore b */
  bool float_only;     /* refuses integer inputs */
} elementwise_t;

static double e_relu(double a, double b, double al, double be) { (void)b, (void)al, (void)be; return a > 0 ? a : 0; }
static double e_neg(double a, double b, double al, double be) { (void)b, (void)al, (void)be; return -a; }
static double e_abs(double a, double b, double al, double be) { (void)b, (void)al, (void)be; return fabs(a); }
static double e_exp(double a, double b, double al, double be) { (void)b, (void)al, (void)be; return exp(a); }
static double e_log(double a, double b, double al, double be) { (void)b, (void)al, (void)be; return log(a); }
static double e_sqrt(double a, double b, double al, double be) { (void)b, (void)al, (void)be; return sqrt(a); }
static double e_tanh(double a, double b, double al, double be) { (void)b, (void)al, (void)be; return tanh(a); }
static double e_sigmoid(double a, double b, double al, double be) { (void)b, (void)al, (void)be; return 1 / (1 + exp(-a)); }
static double e_erf(double a, double b, double al, double be) { (void)b, (void)al, (void)be; return erf(a); }
static double e_floor(double a, double b, double al, double be) { (void)b, (void)al, (void)be; return floor(a); }
static double e_ceil(double a, double b, double al, double be) { (void)b, (void)al, (void)be; return ceil(a); }
static double e_round(double a, double b, double al, double be) { (void)b, (void)al, (void)be; return nearbyint(a); }
static double e_sign(double a, double b, double al, double be) { (void)b, (void)al, (void)be; return (a > 0) - (a < 0); }
static double e_reciprocal(double a, double b, double al, double be) { (void)b, (void)al, (void)be; return 1 / a; }
static double e_sin(double a, double b, double al, double be) { (void)b, (void)al, (void)be; return sin(a); }
static double e_cos(double a, double b, double al, double be) { (void)b, (void)al, (void)be; return cos(a); }
static double e_tan(double a, double b, double al, double be) { (void)b, (void)al, (void)be; return tan(a); }
static double e_asin(double a, double b, double al, double be) { (void)b, (void)al, (void)be; return asin(a); }
static double e_acos(double a, double b, double al, double be) { (void)b, (void)al, (void)be; return acos(a); }
static double e_atan(double a, double b, double al, double be) { (void)b, (void)al, (void)be; return atan(a); }
static double e_sinh(double a, double b, double al, double be) { (void)b, (void)al, (void)be; return sinh(a); }
static double e_cosh(double a, double b, double al, double be) { (void)b, (void)al, (void)be; return cosh(a); }
static double e_asinh(double a, double b, double al, double be) { (void)b, (void)al, (void)be; return asinh(a); }
static double e_acosh(double a, double b, double al, double be) { (void)b, (void)al, (void)be; return acosh(a); }
static double e_atanh(double a, double b, double al, double be) { (void)b, (void)al, (void)be; return atanh(a); }
static double e_isnan(double a, double b, double al, double be) { (void)b, (void)al, (void)be; return isnan(a); }
static double e_not(double a, double b, double al, double be) { (void)b, (void)al, (void)be; return a == 0; }
static double e_leaky(double a, double b, double al, double be) { (void)b, (void)be; return a < 0 ? al * a : a; }
static double e_elu(double a, double b, double al, double be) { (void)b, (void)be; return a < 0 ? al * (exp(a) - 1) : a; }
static double e_selu(double a, double b, double al, double ga) { (void)b; return a <= 0 ? ga * (al * exp(a) - al) : ga * a; }
static double e_hsig(double a, double b, double al, double be) { (void)b; return fmax(0, fmin(1, al * a + be)); }
static double e_hswish(double a, double b, double al, double be) { (void)b, (void)al, (void)be; return a * fmax(0, fmin(1, a / 6 + 0.5)); }
static double e_softplus(double a, double b, double al, double be) { (void)b, (void)al, (void)be; return log1p(exp(a)); }
static double e_softsign(double a, double b, double al, double be) { (void)b, (void)al, (void)be; return a / (1 + fabs(a)); }
static double e_add(double a, double b, double al, double be) { (void)al, (void)be; return a + b; }
static double e_sub(double a, double b, double al, double be) { (void)al, (void)be; return a - b; }
static double e_mul(double a, double b, double al, double be) { (void)al, (void)be; return a * b; }
static double e_div(double a, double b, double al, double be) { (void)al, (void)be; return a / b; }
static double e_pow(double a, double b, double al, double be) { (void)al, (void)be; return pow(a, b); }
static double e_prelu(double a, double b, double al, double be) { (void)al, (void)be; return a < 0 ? a * b : a; }
static double e_eq(double a, double b, double al, double be) { (void)al, (void)be; return a == b; }
static double e_lt(double a, double b, double al, double be) { (void)al, (void)be; return a < b; }
static double e_le(double a, double b, double al, double be) { (void)al, (void)be; return a <= b; }
static double e_gt(double a, double b, double al, double be) { (void)al, (void)be; return a > b; }
static double e_ge(double a, double b, double al, double be) { (void)al, (void)be; return a >= b; }
static double e_and(double a, double b, double al, double be) { (void)al, (void)be; return a != 0 && b != 0; }
static double e_or(double a, double b, double al, double be) { (void)al, (void)be; return a != 0 || b != 0; }
static double e_xor(double a, double b, double al, double be) { (void)al, (void)be; return (a != 0) != (b != 0); }

static const elementwise_t table[] = {
    {"Relu", "relu", UNARY, "", 0, 0, e_relu, false},
    {"Neg", "negative", UNARY, "", 0, 0, e_neg, false},
    {"Abs", "abs", UNARY, "", 0, 0, e_abs, false},
    {"Exp", "exp", UNARY, "", 0, 0, e_exp, true},
    {"Log", "log", UNARY, "", 0, 0, e_log, true},
    {"Sqrt", "sqrt", UNARY, "", 0, 0, e_sqrt, true},
    {"Tanh", "tanh", UNARY, "", 0, 0, e_tanh, true},
    {"Sigmoid", "sigmoid", UNARY, "", 0, 0, e_sigmoid, true},
    {"Erf", "erf", UNARY, "", 0, 0, e_erf, true},
    {"Floor", "floor", UNARY, "", 0, 0, e_floor, true},
    {"Ceil", "ceil", UNARY, "", 0, 0, e_ceil, true},
    {"Round", "round", UNARY, "", 0, 0, e_round, true},
    {"Sign", "sign", UNARY, "", 0, 0, e_sign, false},
    {"Reciprocal", "reciprocal", UNARY, "", 0, 0, e_reciprocal, true},
    {"Sin", "sin", UNARY, "", 0, 0, e_sin, true},
    {"Cos", "cos", UNARY, "", 0, 0, e_cos, true},
    {"Tan", "tan", UNARY, "", 0, 0, e_tan, true},
    {"Asin", "asin", UNARY, "", 0, 0, e_asin, true},
    {"Acos", "acos", UNARY, "", 0, 0, e_acos, true},
    {"Atan", "atan", UNARY, "", 0, 0, e_atan, true},
    {"Sinh", "sinh", UNARY, "", 0, 0, e_sinh, true},
    {"Cosh", "cosh", UNARY, "", 0, 0, e_cosh, true},
    {"Asinh", "asinh", UNARY, "", 0, 0, e_asinh, true},
    {"Acosh", "acosh", UNARY, "", 0, 0, e_acosh, true},
    {"Atanh", "atanh", UNARY, "", 0, 0, e_atanh, true},
    {"IsNaN", "isnan", COMPARE, "", 0, 0, e_isnan, true},
    {"Softplus", "softplus", UNARY, "", 0, 0, e_softplus, true},
    {"Softsign", "softsign", UNARY, "", 0, 0, e_softsign, true},
    {"HardSwish", "hard_swish", UNARY, "", 0, 0, e_hswish, true},
    {"LeakyRelu", "leaky_relu", UNARY, "alpha", 0.01, 0, e_leaky, true},
    {"Elu", "elu", UNARY, "alpha", 1.0, 0, e_elu, true},
    {"Selu", "selu", UNARY, "alpha gamma", 1.67326319217681884765625, 1.05070102214813232421875, e_selu, true},
    {"HardSigmoid", "hard_sigmoid", UNARY, "alpha beta", 0.2, 0.5, e_hsig, true},
    {"Not", "logical_not", LOGIC, "", 0, 0, e_not, false},
    {"Add", "add", BINARY, "", 0, 0, e_add, false},
    {"Sub", "subtract", BINARY, "", 0, 0, e_sub, false},
    {"Mul", "multiply", BINARY, "", 0, 0, e_mul, false},
    {"Div", "divide", BINARY, "", 0, 0, e_div, true},
    {"Pow", "power", BINARY, "", 0, 0, e_pow, true},
    {"PRelu", "prelu", BINARY, "", 0, 0, e_prelu, true},
    {"Equal", "equal", COMPARE, "", 0, 0, e_eq, false},
    {"Less", "less", COMPARE, "", 0, 0, e_lt, false},
    {"LessOrEqual", "less_equal", COMPARE, "", 0, 0, e_le, false},
    {"Greater", "greater", COMPARE, "", 0, 0, e_gt, false},
    {"GreaterOrEqual", "greater_equal", COMPARE, "", 0, 0, e_ge, false},
    {"And", "logical_and", LOGIC, "", 0, 0, e_and, false},
    {"Or", "logical_or", LOGIC, "", 0, 0, e_or, false},
    {"Xor", "logical_xor", LOGIC, "", 0, 0, e_xor, false},
};

static const elementwise_t* find(const hgr__onnx_node_t* node) {
  for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); ++i)
    if (!strcmp(table[i].onnx, node->proto->op_type)) return &table[i];
  return NULL;
}

static bool is_unary(const elementwise_t* e) {
  return e->kind == UNARY || (e->kind == LOGIC && e->eval == e_not) || (e->kind == COMPARE && e->eval == e_isnan);
}

static hgr_status_t read_params(const hgr__onnx_node_t* node, const elementwise_t* e, double* alpha, double* beta) {
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, e->attrs));
  *alpha = e->alpha;
  *beta = e->beta;
  if (strstr(e->attrs, "alpha")) HGR_RETURN_IF_ERROR(hgr__onnx_attr_float(node, "alpha", e->alpha, alpha));
  if (strstr(e->attrs, "beta")) HGR_RETURN_IF_ERROR(hgr__onnx_attr_float(node, "beta", e->beta, beta));
  if (strstr(e->attrs, "gamma")) HGR_RETURN_IF_ERROR(hgr__onnx_attr_float(node, "gamma", e->beta, beta));
  return HGR_OK;
}

/* Output type: bool for comparisons and logic, else the first input's. */
static int32_t output_type(const elementwise_t* e, const hgr__onnx_node_t* node) {
  return e->kind == COMPARE || e->kind == LOGIC ? HGR__ONNX_BOOL : node->inputs[0]->onnx_type;
}

static hgr_status_t check_inputs(const hgr__onnx_node_t* node, const elementwise_t* e, uint32_t count) {
  if (node->input_count != count)
    return HGR__ONNX_INVALID(node, "takes %u input%s, the node has %u", count, count == 1 ? "" : "s",
                             node->input_count);
  for (uint32_t i = 0; i < count; ++i) {
    if (!node->inputs[i]) return HGR__ONNX_INVALID(node, "input %u is omitted", i);
    int32_t type = node->inputs[i]->onnx_type;
    /* Pow's exponent may be an integer (T2); a constant one is converted at load */
    bool constant_exponent = e->eval == e_pow && i == 1 && node->inputs[1]->constant;
    if (e->float_only && !hgr__onnx_type_is_float(type) && !constant_exponent)
      return HGR__ONNX_UNSUPPORTED(node, "input %u is %s; hgr computes %s on float", i, hgr__onnx_type_name(type),
                                   e->onnx);
  }
  return HGR_OK;
}

static hgr_status_t fold_elementwise(hgr__onnx_node_t* node) {
  const elementwise_t* e = find(node);
  uint32_t count = is_unary(e) ? 1 : 2;
  HGR_RETURN_IF_ERROR(check_inputs(node, e, count));
  double alpha, beta;
  HGR_RETURN_IF_ERROR(read_params(node, e, &alpha, &beta));
  if (alpha != e->alpha || beta != e->beta) return HGR__ONNX_UNSUPPORTED(node, "folding with attrs");
  int32_t type = node->inputs[0]->onnx_type;
  if (e->eval == e_div && !hgr__onnx_type_is_float(type)) return HGR__ONNX_UNSUPPORTED(node, "integer division");
  const hgr__onnx_tensor_t* a = node->inputs[0]->constant;
  const hgr__onnx_tensor_t* b = count == 2 ? node->inputs[1]->constant : a;
  int64_t shape[HGR_MAX_DIMS];
  int32_t ndim = a->ndim;
  memcpy(shape, a->shape, sizeof(shape));
  if (count == 2) HGR_RETURN_IF_ERROR(hgr__onnx_broadcast(node, a->shape, a->ndim, b->shape, b->ndim, shape, &ndim));
  int32_t out_type = output_type(e, node);
  hgr__onnx_tensor_t* out = NULL;
  HGR_RETURN_IF_ERROR(hgr__onnx_tensor_new(node->loader->allocator, out_type, shape, ndim, node->label, &out));
  bool integral = !hgr__onnx_type_is_float(type) && out_type != HGR__ONNX_BOOL;
  for (uint64_t i = 0; i < out->count; ++i) {
    uint64_t ia = broadcast_index(shape, ndim, a->shape, a->ndim, i);
    uint64_t ib = broadcast_index(shape, ndim, b->shape, b->ndim, i);
    bool exact = e->eval == e_add || e->eval == e_sub || e->eval == e_mul || e->eval == e_neg;
    if (integral && exact) { /* exact int64 arithmetic for the shape computations exporters emit */
      int64_t x = hgr__onnx_tensor_i64(a, ia), y = hgr__onnx_tensor_i64(b, ib), r;
      if (e->eval == e_add) r = (int64_t)((uint64_t)x + (uint64_t)y);
      else if (e->eval == e_sub) r = (int64_t)((uint64_t)x - (uint64_t)y);
      else if (e->eval == e_mul) r = (int64_t)((uint64_t)x * (uint64_t)y);
      else r = (int64_t)(0 - (uint64_t)x);
      hgr__onnx_tensor_set_i64(out, i, r);
    } else { /* set_f64 converts to an integer type with NaN and range handled */
      hgr__onnx_tensor_set_f64(out, i, e->eval(hgr__onnx_tensor_f64(a, ia), hgr__onnx_tensor_f64(b, ib), alpha, beta));
    }
  }
  return hgr__onnx_set_constant(node, 0, out);
}

/* The small integer exponent (2 or 3) of a Pow whose exponent is one constant element
 * that broadcasts nothing onto x; 0 otherwise. */
static int small_power(const elementwise_t* e, const hgr__onnx_node_t* node) {
  const hgr__onnx_tensor_t* y = node->inputs[1]->constant;
  if (e->eval != e_pow || !y || y->count != 1 || y->ndim > node->inputs[0]->ndim) return 0;
  double exponent = hgr__onnx_tensor_f64(y, 0);
  return exponent == 2.0 || exponent == 3.0 ? (int)exponent : 0;
}

/* Pow(x, 2) and Pow(x, 3), the squares of written-out LayerNorm and variance and the
 * cube of tanh GELU, as x * x and x * (x * x): OpenCL's pow() is a general routine
 * (on PoCL some 35 times a multiply's time: 60 % of a 6-layer encoder's run), and the
 * products are what ONNX Runtime computes for these exponents. x * x is the correctly
 * rounded square, as exact as pow's 16 ulp allow; the cube rounds twice. */
static hgr_status_t import_small_power(hgr__onnx_node_t* node, int exponent) {
  hgr_value_t x, square, in[2];
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, node->inputs[0], &x));
  in[0] = in[1] = x;
  if (exponent == 3) {
    HGR_RETURN_IF_ERROR(hgr__onnx_add_binary(node, "multiply", x, x, &square));
    in[1] = square;
  }
  return hgr__onnx_finish_op(node, HGR_OK, NULL, "multiply", in, 2, 0, output_type(find(node), node));
}

static hgr_status_t import_elementwise(hgr__onnx_node_t* node) {
  const elementwise_t* e = find(node);
  uint32_t count = is_unary(e) ? 1 : 2;
  HGR_RETURN_IF_ERROR(check_inputs(node, e, count));
  double alpha, beta;
  HGR_RETURN_IF_ERROR(read_params(node, e, &alpha, &beta));
  int exponent = count == 2 ? small_power(e, node) : 0;
  if (exponent) return import_small_power(node, exponent);
  hgr_value_t in[2];
  for (uint32_t i = 0; i < count; ++i) {
    const hgr__onnx_tensor_t* constant = node->inputs[i]->constant;
    if (constant && i == 1 && e->eval == e_pow && !hgr__onnx_type_is_float(constant->onnx_type))
      HGR_RETURN_IF_ERROR(hgr__onnx_add_float_constant(node, NULL, constant, &in[i]));
    else
      HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, node->inputs[i], &in[i]));
  }
  const hgr__onnx_value_t *x = node->inputs[0], *slope = count == 2 ? node->inputs[1] : NULL;
  if (e->eval == e_prelu && node->opset < 7 && slope->ndim == 1 && x->ndim > 2 && slope->shape[0] == x->shape[1]) {
    /* before opset 7 a 1-D slope runs along the channels: [C] is [C, 1, ..., 1] */
    int64_t shape[HGR_MAX_DIMS];
    shape[0] = slope->shape[0];
    for (int32_t d = 1; d < x->ndim - 1; ++d) shape[d] = 1;
    HGR_RETURN_IF_ERROR(hgr__onnx_add_reshape(node, in[1], shape, x->ndim - 1, &in[1]));
  }
  hgr_attrs_t* attrs = NULL;
  hgr_status_t status = HGR_OK;
  if (e->attrs[0]) {
    HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
    if (strstr(e->attrs, "alpha")) status = hgr_attrs_set_float(attrs, "alpha", alpha);
    if (!status && strstr(e->attrs, "beta")) status = hgr_attrs_set_float(attrs, "beta", beta);
    if (!status && strstr(e->attrs, "gamma")) status = hgr_attrs_set_float(attrs, "gamma", beta);
  }
  return hgr__onnx_finish_op(node, status, attrs, e->op, in, count, 0, output_type(e, node));
}

/* ---- variadic: Sum, Mean, Max, Min -------------------------------------------------- */

static double v_sum(const double* x, uint32_t n, const hgr__onnx_node_t* node) {
  double s = 0;
  for (uint32_t i = 0; i < n; ++i) s += x[i];
  return strcmp(node->proto->op_type, "Mean") ? s : s / n;
}

static double v_max(const double* x, uint32_t n, const hgr__onnx_node_t* node) {
  bool max = !strcmp(node->proto->op_type, "Max");
  double m = x[0];
  for (uint32_t i = 1; i < n; ++i) {
    if (isnan(x[i]) || isnan(m)) return NAN;
    m = max ? (x[i] > m ? x[i] : m) : (x[i] < m ? x[i] : m);
  }
  return m;
}

static hgr_status_t fold_variadic(hgr__onnx_node_t* node) {
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, ""));
  if (!node->input_count) return HGR__ONNX_INVALID(node, "takes at least one input");
  bool sum = !strcmp(node->proto->op_type, "Sum") || !strcmp(node->proto->op_type, "Mean");
  if (sum && !hgr__onnx_type_is_float(node->inputs[0]->onnx_type) && !strcmp(node->proto->op_type, "Mean"))
    return HGR__ONNX_UNSUPPORTED(node, "integer Mean");
  return fold_nary(node, node->input_count, node->inputs[0]->onnx_type, sum ? v_sum : v_max);
}

static hgr_status_t import_variadic(hgr__onnx_node_t* node) {
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, ""));
  const char* type = node->proto->op_type;
  const char* op = !strcmp(type, "Max") ? "maximum" : !strcmp(type, "Min") ? "minimum" : "add";
  if (!node->input_count) return HGR__ONNX_INVALID(node, "takes at least one input");
  hgr_value_t acc;
  for (uint32_t i = 0; i < node->input_count; ++i) {
    hgr__onnx_value_t* v;
    HGR_RETURN_IF_ERROR(hgr__onnx_required(node, i, &v));
    if (!strcmp(type, "Mean") && !hgr__onnx_type_is_float(v->onnx_type))
      return HGR__ONNX_UNSUPPORTED(node, "input %u is %s; hgr computes Mean on float", i,
                                   hgr__onnx_type_name(v->onnx_type));
    hgr_value_t x;
    HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, v, &x));
    if (i == 0) {
      acc = x;
    } else {
      hgr_value_t pair[2] = {acc, x};
      HGR_RETURN_IF_ERROR(hgr__onnx_add_op(node, op, pair, 2, NULL, 1, &acc));
    }
  }
  if (!strcmp(type, "Mean") && node->input_count > 1) {
    hgr_value_t scale;
    HGR_RETURN_IF_ERROR(hgr__onnx_add_scalar(node, 1.0 / node->input_count, &scale));
    HGR_RETURN_IF_ERROR(hgr__onnx_add_binary(node, "multiply", acc, scale, &acc));
  }
  if (node->input_count == 1) return hgr__onnx_set_alias(node, 0, node->inputs[0]);
  return hgr__onnx_set_runtime(node, 0, acc, node->inputs[0]->onnx_type);
}

/* ---- Mod, IsInf ------------------------------------------------------------------ */

static hgr_status_t import_mod(hgr__onnx_node_t* node) {
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, "fmod"));
  int64_t fmod_attr;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "fmod", 0, &fmod_attr));
  hgr__onnx_value_t *a, *b;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &a));
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 1, &b));
  bool is_float = hgr__onnx_type_is_float(a->onnx_type);
  if (!fmod_attr && is_float)
    return HGR__ONNX_UNSUPPORTED(node, "fmod = 0 on float (Python's modulo); hgr has it for integers");
  if (fmod_attr && !is_float && a->onnx_type != HGR__ONNX_INT32)
    return HGR__ONNX_UNSUPPORTED(node, "fmod = 1 on %s", hgr__onnx_type_name(a->onnx_type));
  if (!fmod_attr && a->onnx_type != HGR__ONNX_INT32)
    return HGR__ONNX_UNSUPPORTED(node, "input 0 is %s; hgr's floor_mod takes int32", hgr__onnx_type_name(a->onnx_type));
  hgr_value_t in[2], out;
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, a, &in[0]));
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, b, &in[1]));
  HGR_RETURN_IF_ERROR(hgr__onnx_add_op(node, fmod_attr ? "mod" : "floor_mod", in, 2, NULL, 1, &out));
  return hgr__onnx_set_runtime(node, 0, out, a->onnx_type);
}

static hgr_status_t import_isinf(hgr__onnx_node_t* node) {
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, "detect_positive detect_negative"));
  int64_t positive, negative;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "detect_positive", 1, &positive));
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "detect_negative", 1, &negative));
  hgr__onnx_value_t* x;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  if (x->onnx_type != HGR__ONNX_FLOAT)
    return HGR__ONNX_UNSUPPORTED(node, "input 0 is %s; hgr's isinf takes float", hgr__onnx_type_name(x->onnx_type));
  hgr_value_t in;
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, x, &in));
  hgr_attrs_t* attrs = NULL;
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  hgr_status_t status = hgr_attrs_set_int(attrs, "detect_positive", positive != 0);
  if (!status) status = hgr_attrs_set_int(attrs, "detect_negative", negative != 0);
  return hgr__onnx_finish_op(node, status, attrs, "isinf", &in, 1, 0, HGR__ONNX_BOOL);
}

/* ---- Gelu ------------------------------------------------------------------------ */

/* Gelu (opset 20): approximate "none" (the erf form) becomes gelu, "tanh" gelu_tanh;
 * both fold on constants. */
static double gelu_eval(double x, bool tanh_form) {
  if (!tanh_form) return 0.5 * x * erfc(-x / sqrt(2.0));
  return x / (1.0 + exp(-1.5957691216057308 * (x + 0.044715 * x * x * x))); /* 2 sqrt(2 / pi); as the kernel */
}

static hgr_status_t read_gelu(const hgr__onnx_node_t* node, bool* out_tanh) {
  if (node->opset < 20) return HGR__ONNX_INVALID(node, "Gelu does not exist before opset 20");
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, "approximate"));
  char approximate[8];
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_string(node, "approximate", "none", approximate, sizeof(approximate)));
  if (strcmp(approximate, "none") && strcmp(approximate, "tanh"))
    return HGR__ONNX_INVALID(node, "attr 'approximate' = \"%s\" is not \"none\" or \"tanh\"", approximate);
  *out_tanh = !strcmp(approximate, "tanh");
  if (node->input_count != 1) return HGR__ONNX_INVALID(node, "takes 1 input, the node has %u", node->input_count);
  if (!hgr__onnx_type_is_float(node->inputs[0]->onnx_type))
    return HGR__ONNX_UNSUPPORTED(node, "input 0 is %s; hgr computes Gelu on float",
                                 hgr__onnx_type_name(node->inputs[0]->onnx_type));
  return HGR_OK;
}

static hgr_status_t fold_gelu(hgr__onnx_node_t* node) {
  bool tanh_form;
  HGR_RETURN_IF_ERROR(read_gelu(node, &tanh_form));
  const hgr__onnx_tensor_t* x = node->inputs[0]->constant;
  hgr__onnx_tensor_t* out = NULL;
  HGR_RETURN_IF_ERROR(hgr__onnx_tensor_new(node->loader->allocator, x->onnx_type, x->shape, x->ndim, node->label, &out));
  for (uint64_t i = 0; i < x->count; ++i) hgr__onnx_tensor_set_f64(out, i, gelu_eval(hgr__onnx_tensor_f64(x, i), tanh_form));
  return hgr__onnx_set_constant(node, 0, out);
}

static hgr_status_t import_gelu(hgr__onnx_node_t* node) {
  bool tanh_form;
  HGR_RETURN_IF_ERROR(read_gelu(node, &tanh_form));
  hgr_value_t in;
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, node->inputs[0], &in));
  return hgr__onnx_finish_op(node, HGR_OK, NULL, tanh_form ? "gelu_tanh" : "gelu", &in, 1, 0,
                             node->inputs[0]->onnx_type);
}

/* ---- Where ---------------------------------------------------------------------- */

static double where_eval(const double* x, uint32_t n, const hgr__onnx_node_t* node) {
  (void)n, (void)node;
  return x[0] != 0 ? x[1] : x[2];
}

static hgr_status_t fold_where(hgr__onnx_node_t* node) {
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, ""));
  if (node->input_count != 3) return HGR__ONNX_INVALID(node, "takes 3 inputs");
  return fold_nary(node, 3, node->inputs[1]->onnx_type, where_eval);
}

static hgr_status_t import_where(hgr__onnx_node_t* node) {
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, ""));
  if (node->input_count != 3) return HGR__ONNX_INVALID(node, "takes 3 inputs, the node has %u", node->input_count);
  hgr_value_t in[3];
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime_inputs(node, 0, 3, in));
  return hgr__onnx_finish_op(node, HGR_OK, NULL, "where", in, 3, 0, node->inputs[1]->onnx_type);
}

/* ---- Clip ---------------------------------------------------------------------- */

/* min and max: attrs before opset 11, optional inputs (constants) from 11. */
static hgr_status_t clip_bounds(const hgr__onnx_node_t* node, double* lo, double* hi) {
  *lo = -INFINITY;
  *hi = INFINITY;
  if (node->opset < 11) {
    HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, "min max"));
    HGR_RETURN_IF_ERROR(hgr__onnx_attr_float(node, "min", -FLT_MAX, lo));
    return hgr__onnx_attr_float(node, "max", FLT_MAX, hi);
  }
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, ""));
  for (uint32_t i = 1; i <= 2; ++i) {
    hgr__onnx_tensor_t* t = NULL;
    HGR_RETURN_IF_ERROR(hgr__onnx_constant_input(node, i, &t));
    if (!t) continue;
    if (t->count != 1) return HGR__ONNX_INVALID(node, "input %u (the %s) must be a scalar", i, i == 1 ? "min" : "max");
    *(i == 1 ? lo : hi) = hgr__onnx_tensor_f64(t, 0);
  }
  return HGR_OK;
}

static hgr_status_t fold_clip(hgr__onnx_node_t* node) {
  double lo, hi;
  HGR_RETURN_IF_ERROR(clip_bounds(node, &lo, &hi));
  const hgr__onnx_tensor_t* x = node->inputs[0] ? node->inputs[0]->constant : NULL;
  if (!x) return HGR__ONNX_INVALID(node, "input 0 is omitted");
  hgr__onnx_tensor_t* out = NULL;
  HGR_RETURN_IF_ERROR(hgr__onnx_tensor_copy(node->loader->allocator, x, &out));
  for (uint64_t i = 0; i < out->count; ++i) {
    double v = hgr__onnx_tensor_f64(x, i);
    hgr__onnx_tensor_set_f64(out, i, v < lo ? lo : v > hi ? hi : v);
  }
  return hgr__onnx_set_constant(node, 0, out);
}

/* Clip with bounds computed at run time (opset 11's inputs), or of integers:
 * maximum, then minimum. */
static hgr_status_t import_clip_runtime(hgr__onnx_node_t* node, hgr__onnx_value_t* x) {
  hgr_value_t value;
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, x, &value));
  for (uint32_t i = 1; i <= 2; ++i) {
    hgr__onnx_value_t* bound = hgr__onnx_input(node, i);
    if (!bound) continue;
    if (bound->ndim != 0 && !(bound->ndim == 1 && bound->shape[0] == 1))
      return HGR__ONNX_INVALID(node, "input %u (the %s) must be a scalar", i, i == 1 ? "min" : "max");
    hgr_value_t pair[2] = {value};
    HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, bound, &pair[1]));
    HGR_RETURN_IF_ERROR(hgr__onnx_add_op(node, i == 1 ? "maximum" : "minimum", pair, 2, NULL, 1, &value));
  }
  return hgr__onnx_set_runtime(node, 0, value, x->onnx_type);
}

static hgr_status_t import_clip(hgr__onnx_node_t* node) {
  hgr__onnx_value_t* x;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  if (!hgr__onnx_type_is_float(x->onnx_type) && (node->opset < 12 || x->onnx_type == HGR__ONNX_BOOL))
    return HGR__ONNX_UNSUPPORTED(node, "input 0 is %s; hgr clips float, and integers from opset 12",
                                 hgr__onnx_type_name(x->onnx_type));
  if (!hgr__onnx_type_is_float(x->onnx_type)) { /* int32 maximum and minimum: exact */
    HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, ""));
    return import_clip_runtime(node, x);
  }
  if (node->opset >= 11) {
    HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, ""));
    for (uint32_t i = 1; i <= 2; ++i) {
      hgr__onnx_value_t* bound = hgr__onnx_input(node, i);
      if (bound && !bound->constant) return import_clip_runtime(node, x);
    }
  }
  double lo, hi;
  HGR_RETURN_IF_ERROR(clip_bounds(node, &lo, &hi));
  hgr_value_t in;
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, x, &in));
  hgr_attrs_t* attrs = NULL;
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  hgr_status_t status = hgr_attrs_set_float(attrs, "a_min", lo);
  if (!status) status = hgr_attrs_set_float(attrs, "a_max", hi);
  return hgr__onnx_finish_op(node, status, attrs, "clip", &in, 1, 0, x->onnx_type);
}

/* ---- Cast, CastLike, Identity, Dropout ------------------------------------------------ */

/* Cast's attr 'to', or the type of CastLike's input 1. */
static hgr_status_t cast_target(const hgr__onnx_node_t* node, int64_t* to) {
  if (!strcmp(node->proto->op_type, "CastLike")) {
    HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, "saturate"));
    hgr__onnx_value_t* like;
    HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 1, &like));
    *to = like->onnx_type;
  } else {
    HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, "to saturate"));
    HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "to", HGR__ONNX_UNDEFINED, to));
  }
  if (*to == HGR__ONNX_UNDEFINED) return HGR__ONNX_INVALID(node, "attr 'to' is required");
  if (!hgr__onnx_type_bytes((int32_t)*to))
    return HGR__ONNX_UNSUPPORTED(node, "attr 'to' = %s (%lld) is not supported", hgr__onnx_type_name((int32_t)*to),
                                 (long long)*to);
  return HGR_OK;
}

static hgr_status_t fold_cast(hgr__onnx_node_t* node) {
  int64_t to;
  HGR_RETURN_IF_ERROR(cast_target(node, &to));
  hgr__onnx_value_t* x;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  hgr__onnx_tensor_t* out = NULL;
  HGR_RETURN_IF_ERROR(hgr__onnx_tensor_cast(node->loader->allocator, x->constant, (int32_t)to, node->label, &out));
  return hgr__onnx_set_constant(node, 0, out);
}

static hgr_status_t import_cast(hgr__onnx_node_t* node) {
  int64_t to;
  HGR_RETURN_IF_ERROR(cast_target(node, &to));
  hgr__onnx_value_t* x;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  hgr_dtype_t dtype;
  if (!hgr__onnx_held_dtype((int32_t)to, &dtype))
    return HGR__ONNX_UNSUPPORTED(node, "Cast to %s at run time; hgr holds float, float16, bfloat16, int8, uint8, "
                                 "int16, uint16, int32, int64 and bool", hgr__onnx_type_name((int32_t)to));
  hgr_value_t in;
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime_held(node, x, &in));
  hgr_tensor_info_t info;
  HGR_RETURN_IF_ERROR(hgr__onnx_value_info(node, in, &info));
  if (hgr_dtype_equal(info.dtype, dtype)) {
    HGR_RETURN_IF_ERROR(hgr__onnx_set_alias(node, 0, x));
    node->outputs[0]->onnx_type = (int32_t)to;
    return HGR_OK;
  }
  hgr_value_t out;
  HGR_RETURN_IF_ERROR(hgr__onnx_add_cast(node, in, dtype, &out));
  return hgr__onnx_set_runtime(node, 0, out, (int32_t)to);
}

static hgr_status_t import_identity(hgr__onnx_node_t* node) {
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, ""));
  hgr__onnx_value_t* x;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  ++node->loader->report.removed;
  return hgr__onnx_set_alias(node, 0, x);
}

/* Dropout in inference: the identity; its mask (output 1), where used, all true. */
static hgr_status_t import_dropout(hgr__onnx_node_t* node) {
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, "ratio seed is_test"));
  hgr__onnx_value_t* x;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  hgr__onnx_tensor_t* training = NULL;
  HGR_RETURN_IF_ERROR(hgr__onnx_constant_input(node, 2, &training));
  if (training && training->count && hgr__onnx_tensor_i64(training, 0))
    return HGR__ONNX_UNSUPPORTED(node, "training_mode = true; hgr runs inference");
  if (node->output_count > 1 && node->outputs[1] && node->outputs[1]->uses) {
    hgr__onnx_tensor_t* mask = NULL;
    HGR_RETURN_IF_ERROR(
        hgr__onnx_tensor_new(node->loader->allocator, HGR__ONNX_BOOL, x->shape, x->ndim, node->label, &mask));
    memset(mask->data, 1, (size_t)mask->count);
    HGR_RETURN_IF_ERROR(hgr__onnx_set_constant(node, 1, mask));
  }
  ++node->loader->report.removed;
  return hgr__onnx_set_alias(node, 0, x);
}

#define EW(name) {name, import_elementwise, fold_elementwise, HGR__ONNX_EVERY_INPUT}
const hgr__onnx_op_t hgr__onnx_ops_elementwise[] = {
    EW("Relu"), EW("Neg"), EW("Abs"), EW("Exp"), EW("Log"), EW("Sqrt"), EW("Tanh"), EW("Sigmoid"), EW("Erf"),
    EW("Floor"), EW("Ceil"), EW("Round"), EW("Sign"), EW("Reciprocal"), EW("Sin"), EW("Cos"), EW("Softplus"),
    EW("Softsign"), EW("HardSwish"), EW("LeakyRelu"), EW("Elu"), EW("Selu"), EW("HardSigmoid"), EW("Not"),
    EW("Add"), EW("Sub"), EW("Mul"), EW("Div"), EW("Pow"), EW("PRelu"), EW("Equal"), EW("Less"), EW("LessOrEqual"),
    EW("Greater"), EW("GreaterOrEqual"), EW("And"), EW("Or"), EW("Xor"), EW("Tan"), EW("Asin"), EW("Acos"),
    EW("Atan"), EW("Sinh"), EW("Cosh"), EW("Asinh"), EW("Acosh"), EW("Atanh"), EW("IsNaN"),
    {"Mod", import_mod, NULL, 2},
    {"IsInf", import_isinf, NULL, 1},
    {"Gelu", import_gelu, fold_gelu, 1},
    {"Sum", import_variadic, fold_variadic, HGR__ONNX_EVERY_INPUT},
    {"Mean", import_variadic, fold_variadic, HGR__ONNX_EVERY_INPUT},
    {"Max", import_variadic, fold_variadic, HGR__ONNX_EVERY_INPUT},
    {"Min", import_variadic, fold_variadic, HGR__ONNX_EVERY_INPUT},
    {"Where", import_where, fold_where, 3},
    {"Clip", import_clip, fold_clip, 1},
    {"Cast", import_cast, fold_cast, 1},
    {"CastLike", import_cast, fold_cast, 2},
    {"Identity", import_identity, NULL, 1},
    {"Dropout", import_dropout, NULL, 1},
    {.name = NULL},
};
