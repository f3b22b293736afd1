/* Plain-C references of quantize and dequantize (runtime/ops/ops_quantize.c), with
 * ONNX's QuantizeLinear and DequantizeLinear semantics: the scale and zero point of
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

#endif /* HGR_TEST_REF_QUANTIZE_H_ */
