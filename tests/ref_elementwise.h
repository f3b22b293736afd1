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
 * - cast float32 -> int32 truncates toward zero, saturating out-of-range values
 *   (NaN gives 0); int32 -> float32 rounds to nearest even; same dtype copies. */
#ifndef HGR_TEST_REF_ELEMENTWISE_H_
#define HGR_TEST_REF_ELEMENTWISE_H_

#include <stdbool.h>
#include <stdint.h>

/* The broadcast shape of a and b into out_shape (room for max(a_ndim, b_ndim)
 * values) and *out_ndim. False when the shapes do not broadcast. */
bool hgr_ref_broadcast_shape(const int64_t* a_shape, int32_t a_ndim, const int64_t* b_shape, int32_t b_ndim,
                             int64_t* out_shape, int32_t* out_ndim);

/* out = a <op> b with broadcasting; out has the broadcast shape's element count.
 * op: add, subtract, multiply, divide, maximum, minimum, power. False (out
 * untouched) for an unknown op or shapes that do not broadcast. */
bool hgr_ref_binary_f32(const char* op, const float* a, const int64_t* a_shape, int32_t a_ndim, const float* b,
                        const int64_t* b_shape, int32_t b_ndim, float* out);

/* The int32 ops: add, subtract, multiply, maximum, minimum. */
bool hgr_ref_binary_i32(const char* op, const int32_t* a, const int64_t* a_shape, int32_t a_ndim,
                        const int32_t* b, const int64_t* b_shape, int32_t b_ndim, int32_t* out);

/* y[i] = op(x[i]) for n elements. p0, p1: leaky_relu's alpha; clip's a_min and a_max;
 * ignored by the others. False for an unknown op. */
bool hgr_ref_unary_f32(const char* op, const float* x, float* y, uint64_t n, double p0, double p1);

/* n elements of dtype from_dtype at x to to_dtype at y ("float32" or "int32").
 * False for another dtype. */
bool hgr_ref_cast(const char* from_dtype, const void* x, const char* to_dtype, void* y, uint64_t n);

#endif /* HGR_TEST_REF_ELEMENTWISE_H_ */
