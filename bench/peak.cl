/* hgr_peak_fma: an FMA-bound kernel for bench/bench_peak.c, the device's float32
 * peak. Each work-item runs PEAK_CHAINS (8) independent chains of fma on float8s
 * (enough to hide a CPU's FMA latency on its two FMA pipes), `iterations` times,
 * and stores their sum so nothing is optimized away: 2 * 8 * PEAK_CHAINS FLOP per
 * iteration per work-item. NDRange 1-D, any size; out has one float per work-item.
 * The multiplier stays just below 1 and the addend small, so the values neither
 * overflow nor turn denormal. 8 chains, not more: on AVX2 (16 vector registers)
 * 16 chains plus the two constants spilled, and PoCL ran at half the rate (54
 * instead of 101 GFLOP per CPU-second here; 12 chains also gave 101). */
#define PEAK_CHAINS 8
#define PEAK_STEP(v) v = fma(v, m, a)
__kernel void hgr_peak_fma(__global float* out, int iterations, float seed) {
  const float8 m = (float8)(0.999999f), a = (float8)(1e-6f);
  float8 v0 = (float8)(seed + (float)get_global_id(0)), v1 = v0 + 1.0f, v2 = v0 + 2.0f, v3 = v0 + 3.0f;
  float8 v4 = v0 + 4.0f, v5 = v0 + 5.0f, v6 = v0 + 6.0f, v7 = v0 + 7.0f;
  for (int i = 0; i < iterations; ++i) {
    PEAK_STEP(v0); PEAK_STEP(v1); PEAK_STEP(v2); PEAK_STEP(v3);
    PEAK_STEP(v4); PEAK_STEP(v5); PEAK_STEP(v6); PEAK_STEP(v7);
  }
  float8 s = ((v0 + v1) + (v2 + v3)) + ((v4 + v5) + (v6 + v7));
  out[get_global_id(0)] = s.s0 + s.s1 + s.s2 + s.s3 + s.s4 + s.s5 + s.s6 + s.s7;
}
