/* An op's output layout (runtime/ops/out_layout.c): the kernels that take one
 * (linalg.cl's GEMMs, attention.cl's kernels) write their result R, contiguous as
 * they compute it, as transpose(reshape(R, [d0, d1, d2, d3]), axes): element e of R
 * (linear index) is view element (x0, x1, x2, x3) = unravel(e, [d0, d1, d2, d3]),
 * stored at x0 * s0 + x1 * s1 + x2 * s2 + x3 * s3 of the output, where s_a is view
 * axis a's stride in the output. A transpose that follows the op costs neither a
 * launch nor a pass over memory then (passes/fuse_out_layout.c).
 *
 * The arguments (HGR_OUT_LAYOUT_PARAMS): out_d1, out_d2, out_d3 (d0 needs none) and
 * out_s0 ... out_s3; out_d3 0 is the plain layout, element e at e.
 *
 * The indices are split as unsigned ints, the remainders written x - q * d: LLVM
 * pairs a % with the / next to it through a `freeze`, which Oclgrind 21.10's
 * uninitialized-value checker cannot run.
 *
 * Guarded: a program may hold several sources that include it. */
#ifndef HGR_OUT_LAYOUT_H
#define HGR_OUT_LAYOUT_H

#define HGR_OUT_LAYOUT_PARAMS int out_d1, int out_d2, int out_d3, int out_s0, int out_s1, int out_s2, int out_s3
#define HGR_OUT_LAYOUT_ARGS out_d1, out_d2, out_d3, out_s0, out_s1, out_s2, out_s3

/* The output offset of element e (out_d3 > 0); *x3 gets its index along d3. */
inline uint hgr_out_offset(uint e, HGR_OUT_LAYOUT_PARAMS, uint* x3) {
  const uint q3 = e / (uint)out_d3, q2 = q3 / (uint)out_d2, x0 = q2 / (uint)out_d1;
  *x3 = e - q3 * (uint)out_d3;
  const uint x2 = q3 - q2 * (uint)out_d2, x1 = q2 - x0 * (uint)out_d1;
  return x0 * (uint)out_s0 + x1 * (uint)out_s1 + x2 * (uint)out_s2 + *x3 * (uint)out_s3;
}

/* The output offset of element e (any layout), for a caller that knows the run of
 * elements from e it writes to stay contiguous there. */
inline uint hgr_out_run(uint e, HGR_OUT_LAYOUT_PARAMS) {
  uint x3;
  return out_d3 ? hgr_out_offset(e, HGR_OUT_LAYOUT_ARGS, &x3) : e;
}

/* Stores count values of part, elements e ... e + count - 1 of the result, into out;
 * one offset computed per run along d3 (the next element is s3 further on). */
inline void hgr_out_store(__global float* out, const float* part, int count, uint e, HGR_OUT_LAYOUT_PARAMS) {
  uint x3;
  uint offset = hgr_out_offset(e, HGR_OUT_LAYOUT_ARGS, &x3);
  for (int j = 0; j < count; ++j) {
    out[offset] = part[j];
    if (++x3 == (uint)out_d3) offset = hgr_out_offset(e + (uint)j + 1, HGR_OUT_LAYOUT_ARGS, &x3);
    else offset += (uint)out_s3;
  }
}

#endif
