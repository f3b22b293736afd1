/* hgr_peak_fma: an FMA-bound kernel for bench/bench_peak.c, the device's float32
 * peak. Each work-item runs 16 independent chains of fma on float8s (enough chains
 * to hide the FMA latency of a CPU's SIMD units, 128 lanes in flight), `iterations`
 * times, and stores their sum so nothing is optimized away: 2 * 8 * 16 FLOP per
 * iteration per work-item. NDRange 1-D, any size; out has one float per work-item.
 * The multiplier stays just below 1 and the addend small, so the values neither
 * overflow nor turn denormal. */
#define PEAK_STEP(v) v = fma(v, m, a)
__kernel void hgr_peak_fma(__global float* out, int iterations, float seed) {
  const float8 m = (float8)(0.999999f), a = (float8)(1e-6f);
  float8 v0 = (float8)(seed + (float)get_global_id(0)), v1 = v0 + 1.0f, v2 = v0 + 2.0f, v3 = v0 + 3.0f;
  float8 v4 = v0 + 4.0f, v5 = v0 + 5.0f, v6 = v0 + 6.0f, v7 = v0 + 7.0f;
  float8 v8 = v0 + 8.0f, v9 = v0 + 9.0f, v10 = v0 + 10.0f, v11 = v0 + 11.0f;
  float8 v12 = v0 + 12.0f, v13 = v0 + 13.0f, v14 = v0 + 14.0f, v15 = v0 + 15.0f;
  for (int i = 0; i < iterations; ++i) {
    PEAK_STEP(v0); PEAK_STEP(v1); PEAK_STEP(v2); PEAK_STEP(v3);
    PEAK_STEP(v4); PEAK_STEP(v5); PEAK_STEP(v6); PEAK_STEP(v7);
    PEAK_STEP(v8); PEAK_STEP(v9); PEAK_STEP(v10); PEAK_STEP(v11);
    PEAK_STEP(v12); PEAK_STEP(v13); PEAK_STEP(v14); PEAK_STEP(v15);
  }
  float8 s = ((v0 + v1) + (v2 + v3)) + ((v4 + v5) + (v6 + v7)) + ((v8 + v9) + (v10 + v11)) +
             ((v12 + v13) + (v14 + v15));
  out[get_global_id(0)] = s.s0 + s.s1 + s.s2 + s.s3 + s.s4 + s.s5 + s.s6 + s.s7;
}
