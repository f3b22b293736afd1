/* GELU, 0.5 x (1 + erf(x / sqrt 2)), for the kernels that apply it: elementwise.cl's
 * gelu op and linalg.cl's GEMM epilogue (runtime/ops/ops_fused.c's HELPER_GELU writes
 * the same for the generated kernels, which include no header). Written with
 * erfc(-z) = 1 + erf(z), which keeps its relative accuracy where erf(z) is near -1 (x
 * well below 0) instead of cancelling; erfc by the Chebyshev fit of Numerical Recipes'
 * erfcc (fractional error below 1.2e-7): t = 1 / (1 + |z| / 2), erfc(|z|) = t exp(-z^2
 * - 1.26551223 + t P(t)), erfc(-|z|) = 2 - erfc(|z|). One exp and one division,
 * vectorized, where PoCL's erfc runs scalar per lane (4-6 ns an element).
 *
 * HGR_GELU(T, x): x = gelu(x) for x of type T (float or floatN). */
#define HGR_GELU(T, x)                                                                         \
  {                                                                                            \
    const T z_ = M_SQRT1_2_F * fabs(x);                                                        \
    const T t_ = 1.0f / (1.0f + 0.5f * z_);                                                    \
    const T p_ = 1.00002368f + t_ * (0.37409196f + t_ * (0.09678418f + t_ * (-0.18628806f +    \
                 t_ * (0.27886807f + t_ * (-1.13520398f + t_ * (1.48851587f +                  \
                 t_ * (-0.82215223f + t_ * 0.17087277f)))))));                                 \
    const T h_ = 0.5f * (x) * t_ * exp(-z_ * z_ - 1.26551223f + t_ * p_); /* 0.5 x erfc(|z|) */ \
    x = select((x) - h_, h_, (x) <= (T)(0.0f));                                                \
  }
