/* Plain-C references of the elementwise ops (runtime/ops/ops_elementwise.c), for the op
 * tests and the examples generator.
 *
 * Shapes are int64 extents in row-major order; a 0-d tensor (ndim 0) has one
 * element. Binary ops broadcast like NumPy: shapes are aligned to the right and an
 * extent of 1 (or a missing leading dimension) stretches to the other's extent.
 *
 * What they compute, per op (the kernels' semantics, not NumPy's where they differ):
 * - add, subtract, multiply, divide: IEEE float32 arithmetic (correctly rounded);
 *   int32 add, subtract, multiply wrap around (two's complement).
 * - maximum, minimum: fmaxf/fminf on float32 (a NaN operand yields the other one).
 * - power: pow in double, rounded to float32.
 * - relu: fmaxf(x, 0); leaky_relu: x > 0 ? x : x * (float)alpha, in float32;
 *   clip: fmaxf(fminf(x, (float)a_max), (float)a_min).
 * - sigmoid, tanh, exp, log, sqrt, rsqrt, erf, gelu: in double, rounded to float32;
 *   gelu is 0.5 x (1 + erf(x / sqrt 2)).
 * - abs, negative: exact.
 * - prelu: x < 0 ? slope * x : x; mod: fmodf on float32, C's % on int32;
 *   floor_mod (int32): the remainder with the divisor's sign; int32 mod and
 *   floor_mod give 0 for a divisor of 0 (and for INT32_MIN by -1).
 * - elu: x < 0 ? alpha (e^x - 1) : x; selu: x > 0 ? gamma x : gamma alpha (e^x - 1);
 *   hard_sigmoid: max(0, min(1, alpha x + beta)) (NaN stays NaN); hard_swish:
 *   x max(0, min(1, x / 6 + 1/2)); softplus: log(1 + e^x); softsign:
 *   x / (1 + |x|); reciprocal; sin ... atanh: in double (with float32 alpha, beta, gamma), rounded to float32.
 *   floor, ceil, round (half to even), sign (NaN gives NaN): exact.
 * - comparisons (float32, int32 or int64) and logical_and/or/xor, logical_not (bool, any
 *   nonzero byte is true), isnan, isinf: bool results, one byte 0 or 1.
 * - cast between float32, int32, int64, uint8, int8 and bool: float to integer
 *   truncates toward zero and saturates (NaN gives 0); integer to integer
 *   saturates; integer to float32 rounds to nearest even; to bool is != 0 (NaN
 *   gives 1); same dtype copies. */
#ifndef HGR_TEST_REF_ELEMENTWISE_H_
#define HGR_TEST_REF_ELEMENTWISE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The broadcast shape of a and b into out_shape (room for max(a_ndim, b_ndim)
 * values) and *out_ndim. False when the shapes do not broadcast. */
bool hgr_ref_broadcast_shape(const int64_t* a_shape, int32_t a_ndim, const int64_t* b_shape, int32_t b_ndim,
                             int64_t* out_shape, int32_t* out_ndim);

/* out = a <op> b with broadcasting; out has the broadcast shape's element count.
 * op: add, subtract, multiply, divide, maximum, minimum, power, prelu, mod. False (out
 * untouched) for an unknown op or shapes that do not broadcast. */
bool hgr_ref_binary_f32(const char* op, const float* a, const int64_t* a_shape, int32_t a_ndim, const float* b,
                        const int64_t* b_shape, int32_t b_ndim, float* out);

/* The int32 ops: add, subtract, multiply, maximum, minimum, mod, floor_mod. */
bool hgr_ref_binary_i32(const char* op, const int32_t* a, const int64_t* a_shape, int32_t a_ndim,
                        const int32_t* b, const int64_t* b_shape, int32_t b_ndim, int32_t* out);

/* y[i] = op(x[i]) for n elements. p0, p1: leaky_relu's and elu's alpha; clip's a_min
 * and a_max; selu's alpha and gamma; hard_sigmoid's alpha and beta; ignored by the
 * others. False for an unknown op. */
bool hgr_ref_unary_f32(const char* op, const float* x, float* y, uint64_t n, double p0, double p1);

/* out = a <op> b, one byte 0 or 1, with broadcasting: op equal, not_equal, less,
 * less_equal, greater, greater_equal on dtype "float32", "int32" or "int64"; logical_and,
 * logical_or, logical_xor on "bool". False for another op or dtype, or shapes that
 * do not broadcast. */
bool hgr_ref_compare(const char* op, const char* dtype, const void* a, const int64_t* a_shape, int32_t a_ndim,
                     const void* b, const int64_t* b_shape, int32_t b_ndim, uint8_t* out);

/* y[i] = op(x[i]), one byte 0 or 1: isnan, isinf (x float32; the detect flags are
 * isinf's), logical_not (x bool). False for another op. */
bool hgr_ref_unary_bool(const char* op, const void* x, uint8_t* y, uint64_t n, bool detect_positive,
                        bool detect_negative);

/* out = c ? x : y with three-way broadcasting, x, y and out of element_bytes per
 * element (moved bit for bit). False when the shapes do not broadcast. */
bool hgr_ref_where(const uint8_t* c, const int64_t* c_shape, int32_t c_ndim, const void* x, const int64_t* x_shape,
                   int32_t x_ndim, const void* y, const int64_t* y_shape, int32_t y_ndim, size_t element_bytes,
                   void* out);

/* n elements of dtype from_dtype at x to to_dtype at y ("float32", "int32",
 * "int64", "uint8", "int8", "bool", "uint16", "int16", "float16" or "bfloat16",
 * the last two as their bits). False for another dtype. */
bool hgr_ref_cast(const char* from_dtype, const void* x, const char* to_dtype, void* y, uint64_t n);

/* float16 and bfloat16: the bits of f, rounded to nearest even, and the value of bits. */
uint16_t hgr_ref_float16_bits(float f);
float hgr_ref_float16_value(uint16_t bits);
uint16_t hgr_ref_bfloat16_bits(float f);
float hgr_ref_bfloat16_value(uint16_t bits);

#endif /* HGR_TEST_REF_ELEMENTWISE_H_ */
