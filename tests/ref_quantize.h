/* Plain-C references of quantize, dequantize and quantize_params
 * (runtime/ops/ops_quantize.c), and of matmul_integer and dequantize_matmul
 * (runtime/ops/ops_matmul_integer.c) below. quantize and dequantize have ONNX's
 * QuantizeLinear and DequantizeLinear semantics: the scale and zero point of
 * element x[c] (c its coordinates) are theirs at no coordinates (per tensor: one
 * element), at c[axis] (per axis: a vector), or at c with c[axis] / block (in
 * blocks: x's rank). Integers are given and returned as int64_t, shapes row-major. */
#ifndef HGR_TEST_REF_QUANTIZE_H_
#define HGR_TEST_REF_QUANTIZE_H_

#include <stdint.h>

/* How the parameters (shaped param_shape, param_ndim dims) apply to x. */
typedef struct ref_quant_params_t {
  const float* scale;
  const int64_t* zero;
  const int64_t* shape;
  int32_t ndim;
  int32_t axis;  /* non-negative */
  int64_t block; /* 0: per tensor or per axis */
} ref_quant_params_t;

/* y = (x - zero) * scale, the difference exact and the product a float32 one. */
void ref_dequantize(const int64_t* x, const int64_t* shape, int32_t ndim, const ref_quant_params_t* p, float* y);

/* y = clamp(round_half_even(x / scale) + zero, lowest, highest). */
void ref_quantize(const float* x, const int64_t* shape, int32_t ndim, const ref_quant_params_t* p, int64_t lowest,
                  int64_t highest, int64_t* y);

/* ONNX DynamicQuantizeLinear's scale and zero point of x's count elements:
 * [min(x, 0), max(x, 0)] / 255 (1 where x is all zeros, as ONNX Runtime) and
 * round_half_even(-min / scale) in [0, 255], in float32. */
void ref_quantize_params(const float* x, uint64_t count, float* scale, int64_t* zero);

/* out[i, j] = sum_l (a[i, l] - a_zero) (b[j, l] - b_zero[j * zb_step]), exactly:
 * a [m, k], b [n, k] (matmul_integer's b, stored transposed), zb_step 0 (one zero
 * point) or 1 (one per column). */
void ref_matmul_integer(const int64_t* a, const int64_t* b, int64_t a_zero, const int64_t* b_zero, int32_t zb_step,
                        int64_t m, int64_t n, int64_t k, int64_t* out);

/* out[i, j] = sum_l a[i, l] (b[l, j] - b_zero[j * zb_step]) scale[j * scale_step]
 * (+ bias[j]; bias may be NULL), in double: a [m, k], b [k, n]. */
void ref_dequantize_matmul(const float* a, const int64_t* b, const int64_t* b_zero, int32_t zb_step,
                           const float* scale, int32_t scale_step, const float* bias, int64_t m, int64_t n, int64_t k,
                           float* out);

#endif /* HGR_TEST_REF_QUANTIZE_H_ */
