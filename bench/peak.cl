/* hgr_peak_fma4, hgr_peak_fma8, hgr_peak_fma16: FMA-bound kernels for
 * bench/bench_peak.c, the device's float32 peak. Each work-item runs PEAK_CHAINS (8)
 * independent chains of fma on floatW vectors (enough to hide a CPU's FMA latency on
 * its two FMA pipes), `iterations` times, and stores their sum so nothing is
 * optimized away: 2 * W * PEAK_CHAINS FLOP per iteration per work-item. NDRange 1-D,
 * any size; out has one float per work-item. The multiplier stays just below 1 and
 * the addend small, so the values neither overflow nor turn denormal. The bench
 * runs every width and takes the fastest: the widest vector a CPU driver computes in
 * one instruction is the device's, which the width of the code alone decides on PoCL
 * (float8 ran at 101-105 GFLOP per CPU-second on the project's AVX-512 Xeon, half of
 * float16's 239-245: PoCL's code kept float8 in 256-bit registers), and on AVX2 (16
 * vector registers) float16's 8 chains take 16 registers twice over and spill (16
 * chains of float8 plus the two constants ran at half float8's rate there). 8
 * chains, not more, for the same reason. */
#define PEAK_CHAINS 8
#define PEAK_STEP(v) v = fma(v, m, a)
#define PEAK_KERNEL(W)                                                                        \
  __kernel void hgr_peak_fma##W(__global float* out, int iterations, float seed) {            \
    const float##W m = (float##W)(0.999999f), a = (float##W)(1e-6f);                          \
    float##W v0 = (float##W)(seed + (float)get_global_id(0)), v1 = v0 + 1.0f, v2 = v0 + 2.0f; \
    float##W v3 = v0 + 3.0f, v4 = v0 + 4.0f, v5 = v0 + 5.0f, v6 = v0 + 6.0f, v7 = v0 + 7.0f;  \
    for (int i = 0; i < iterations; ++i) {                                                    \
      PEAK_STEP(v0); PEAK_STEP(v1); PEAK_STEP(v2); PEAK_STEP(v3);                             \
      PEAK_STEP(v4); PEAK_STEP(v5); PEAK_STEP(v6); PEAK_STEP(v7);                             \
    }                                                                                         \
    const float##W s = ((v0 + v1) + (v2 + v3)) + ((v4 + v5) + (v6 + v7)), one = (float##W)(1.0f); \
    /* the lanes' sum, a quarter of them at a time (dot takes up to float4) */                 \
    out[get_global_id(0)] = dot(s.lo.lo, one.lo.lo) + dot(s.lo.hi, one.lo.hi) +                 \
                            dot(s.hi.lo, one.hi.lo) + dot(s.hi.hi, one.hi.hi);                  \
  }
PEAK_KERNEL(4)
PEAK_KERNEL(8)
PEAK_KERNEL(16)

/* hgr_peak_imad4, hgr_peak_imad8, hgr_peak_imad16: the device's rate of 8-bit
 * products accumulated in 32 bits, as an integer GEMM's inner loop makes them
 * (hgr_bench_peak -i; issue 38: what int8 can gain on a device). Each work-item holds
 * PEAK_CHAINS (8) rows of a as intW (8-bit values, converted once), and per iteration
 * loads one charW of b from a 64-vector table (a cache hit after the first pass) and
 * adds a_k * b to each of the 8 int accumulators: W * PEAK_CHAINS products per
 * iteration per work-item, whatever instructions the driver's compiler makes of the
 * widening multiply (the float kernels above have no loads; a GEMM's have). NDRange
 * 1-D, any size; table holds 64 * W chars; out has one int per work-item. */
#define IPEAK_STEP(W, s, a) s += as_uint##W(a * b)
#define IPEAK_A(W, k) convert_int##W((char##W)(seed + 8 * (int)get_global_id(0) + k))
#define IPEAK_KERNEL(W)                                                                                      \
  __kernel void hgr_peak_imad##W(__global uint* out, __global const char* table, int iterations, int seed) { \
    const int##W a0 = IPEAK_A(W, 0), a1 = IPEAK_A(W, 1), a2 = IPEAK_A(W, 2), a3 = IPEAK_A(W, 3);             \
    const int##W a4 = IPEAK_A(W, 4), a5 = IPEAK_A(W, 5), a6 = IPEAK_A(W, 6), a7 = IPEAK_A(W, 7);             \
    uint##W s0 = (uint##W)(0), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0, s7 = s0;                \
    for (int i = 0; i < iterations; ++i) {                                                                   \
      const int##W b = convert_int##W(vload##W(i & 63, table));                                              \
      IPEAK_STEP(W, s0, a0); IPEAK_STEP(W, s1, a1); IPEAK_STEP(W, s2, a2); IPEAK_STEP(W, s3, a3);            \
      IPEAK_STEP(W, s4, a4); IPEAK_STEP(W, s5, a5); IPEAK_STEP(W, s6, a6); IPEAK_STEP(W, s7, a7);            \
    }                                                                                                        \
    const uint##W s = ((s0 ^ s1) + (s2 ^ s3)) + ((s4 ^ s5) + (s6 ^ s7));                                     \
    uint total = 0;                                                                                          \
    for (int l = 0; l < W; ++l) total += ((const uint*)&s)[l];                                               \
    out[get_global_id(0)] = total;                                                                           \
  }
IPEAK_KERNEL(4)
IPEAK_KERNEL(8)
IPEAK_KERNEL(16)
