/* Plain-C reference of the attention op (runtime/ops/ops_attention.c), computed in
 * double and rounded once to float32. */
#ifndef HGR_TEST_REF_ATTENTION_H_
#define HGR_TEST_REF_ATTENTION_H_

#include <stdbool.h>
#include <stdint.h>

/* out[g] = softmax(scale * q[g] k[g]ᵀ + mask) v[g] over the keys, for g < G: q
 * [G, M, dk], k [G, N, dk] (transpose_k) or [G, dk, N], v [G, N, dv], out
 * [G, M, dv]. mask (NULL: none) is read at element b * ms[0] + h * ms[1] + m * ms[2]
 * + n * ms[3] for g = b * heads + h; causal leaves out the keys n > m + N - M. */
void hgr_ref_attention(const float* q, const float* k, const float* v, const float* mask, const int64_t ms[4],
                       float* out, int64_t g_count, int64_t m_rows, int64_t n_keys, int64_t dk, int64_t dv,
                       int64_t heads, double scale, bool transpose_k, bool causal);

#endif /* HGR_TEST_REF_ATTENTION_H_ */
