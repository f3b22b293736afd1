/* Plain-C references for dense, matmul and batch_matmul (runtime/ops/ops_linalg.c).
 * They accumulate in double and round once to float32, so they are at least as
 * accurate as any float32 device; tests compare with a bound on the device's
 * float32 accumulation error (tests/test_ops_linalg.c). The examples generator
 * calls them too. */
#ifndef HGR_TEST_REF_LINALG_H_
#define HGR_TEST_REF_LINALG_H_

#include <stdbool.h>
#include <stdint.h>

/* y[r, u] = bias[u] + sum_l x[r, l] * w[u, l] for x [rows, in], w [units, in], bias
 * [units] or NULL (no bias); y [rows, units]. Accumulates in double. */
void hgr_ref_dense(const float* x, const float* w, const float* bias, float* y, int64_t rows, int64_t in,
                   int64_t units);

/* c[p, i, j] = sum_l A[p, i, l] * B[p, l, j] with a [batch_a, m, k], or [batch_a, k, m]
 * when transpose_a; b [batch_b, k, n], or [batch_b, n, k] when transpose_b; c
 * [max(batch_a, batch_b), m, n]. A batch of 1 broadcasts; other differing batches
 * are the caller's error. Accumulates in double. matmul is the case batch 1. */
void hgr_ref_batch_matmul(const float* a, const float* b, float* c, int64_t batch_a, int64_t batch_b, int64_t m,
                          int64_t n, int64_t k, bool transpose_a, bool transpose_b);

/* The fused epilogue of dense, matmul and batch_matmul (ops_linalg.c) on c [rows, n]
 * in place: c[r, j] = act(c[r, j] + bias[j]), bias NULL: none; activation "none",
 * "relu", "leaky_relu" (alpha), "clip" (a_min, a_max), "gelu" (0.5 x (1 + erf(x /
 * sqrt 2))), "gelu_tanh" (0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))) or
 * "sigmoid" (1 / (1 + exp(-x))), "silu" (x / (1 + exp(-x))), "hard_swish" (x min(max(x
 * / 6 + 0.5, 0), 1)), "leaky_relu_clip" (leaky_relu's, then clip's),
 * in double, rounded once to float32. */
void hgr_ref_gemm_epilogue(float* c, uint64_t count, int64_t n, const float* bias, const char* activation,
                           double alpha, double a_min, double a_max);

#endif /* HGR_TEST_REF_LINALG_H_ */
