/* The strided float32 GEMM of kernels/linalg.cl, planned by runtime/ops/ops_linalg.c
 * for dense, matmul and batch_matmul and, through hgr__gemm_plan, for other families'
 * ops that are a GEMM (conv2d with a 1x1 kernel, runtime/ops/ops_conv.c), and
 * through hgr__gemm_plan_im2col for conv2d's implicit GEMM (B = im2col(x), read on
 * the fly). */
#ifndef HGR_OPS_GEMM_H
#define HGR_OPS_GEMM_H

#include "ops.h"

/* A GEMM in the kernel's terms: element (p, i, l) of A is
 * a[p * a_batch + i * a_row + l * a_depth], (p, l, j) of B is
 * b[p * b_batch + l * b_depth + j * b_col], or with b_wrap > 0
 * b[p * b_batch + l * b_depth + (j / b_wrap) * b_wrap_stride + (j % b_wrap) * b_col]
 * (B's columns as the pixels of a 2-D image, b_wrap per row); C is contiguous
 * [batch, m, n]. With b_col 1 and b_wrap < n, each of B's wrap rows must be
 * readable up to its b_wrap-th column (the kernels may read a whole row's strip and
 * store only the columns below n): n a multiple of b_wrap, or the last row padded.
 * That makes B's panels (hgr__gemm_panels): matmul's tensor_b packed as
 * [ceil(n / P), k, P] (attr b_panel P, made from constant weights by
 * passes/pack_gemm_weights.c) is b_depth P, b_col 1, b_wrap P, b_wrap_stride k * P,
 * every strip of a direct variant's columns one contiguous run per step of k. A is
 * the op's input 0 and B its input 1 (the other way round with swap_inputs), the
 * bias its input 2, C its output 0. */
typedef enum hgr__gemm_bias_t {
  HGR__GEMM_BIAS_NONE = 0,
  HGR__GEMM_BIAS_COLUMN = 1, /* bias[j]: dense */
  HGR__GEMM_BIAS_ROW = 2,    /* bias[i]: a 1x1 conv2d's per output channel */
  HGR__GEMM_BIAS_BATCH_ROW = 3, /* bias[p * m + i]: a grouped one's, a GEMM per group */
} hgr__gemm_bias_t;

typedef enum hgr__gemm_act_t {
  HGR__GEMM_ACT_NONE = 0,
  HGR__GEMM_ACT_RELU = 1,       /* max(v, 0) */
  HGR__GEMM_ACT_LEAKY_RELU = 2, /* v < 0 ? v * alpha : v */
  HGR__GEMM_ACT_CLIP = 3,       /* min(max(v, a_min), a_max) */
  HGR__GEMM_ACT_GELU = 4,       /* 0.5 v (1 + erf(v / sqrt 2)), as the gelu op computes it */
  HGR__GEMM_ACT_GELU_TANH = 5,  /* 0.5 v (1 + tanh(sqrt(2 / pi) (v + 0.044715 v^3))), as gelu_tanh */
  HGR__GEMM_ACT_SIGMOID = 6,    /* 1 / (1 + exp(-v)), as the sigmoid op computes it */
  HGR__GEMM_ACT_LEAKY_RELU_CLIP = 7, /* leaky relu, then clip: min(max(leaky(v), a_min), a_max) */
  HGR__GEMM_ACT_SILU = 8,       /* v * (1 / (1 + exp(-v))): sigmoid, then a multiply by v, as the two ops compute it */
  HGR__GEMM_ACT_HARD_SWISH = 9, /* v * min(max(v / 6 + 0.5, 0), 1), as the hard_swish op computes it */
} hgr__gemm_act_t;

typedef struct hgr__gemm_t {
  int64_t batch, m, n, k;
  int64_t a_batch, a_row, a_depth;
  int64_t b_batch, b_depth, b_col;
  hgr__gemm_bias_t bias;
  hgr__gemm_act_t act;
  float alpha, a_min, a_max; /* act's parameters */
  bool swap_inputs;          /* A is input 1, B input 0 */
  int64_t b_wrap, b_wrap_stride; /* 0, 0: B's columns plain */
  /* An op that runs GEMMs through its node's scratch (attention's staged candidate,
   * conv2d's patches): A is the scratch, B then input b_input (a_scratch), B is the
   * scratch (b_scratch; A input 1 with swap_inputs, else 0), or C is the scratch
   * (c_scratch); scratch_bytes, the scratch's size, as hgr__launch_scratch takes it */
  bool a_scratch, b_scratch, c_scratch;
  uint32_t b_input;
  uint64_t scratch_bytes;
  hgr__out_layout_t out; /* how C [batch, m, n] is stored (zeros: contiguous) */
  /* 2 or 3: C's columns split evenly into segments, segment s stored as output s
   * ([batch, m, n / segments] through out for s = 0, segment_out[s - 1] after);
   * 0 or 1: C is output 0 whole */
  uint32_t segments;
  hgr__out_layout_t segment_out[HGR__OUT_LAYOUT_OUTPUTS - 1];
} hgr__gemm_t;

/* conv2d's implicit GEMM (im2col on the fly, kernels/linalg.cl's hgr_conv_gemm_*):
 * B[p, l, j] is input pixel (oy * sh - pt + ky * dh, ox * sw - pl + kx * dw) of
 * channel ci of image or group p (b_batch floats apart), zero outside the in_h x
 * in_w image, for output pixel j = oy * out_w + ox and tap l = (ci * kh + ky) * kw +
 * kx; the GEMM's k is C_in / groups * kh * kw and its other B fields are unused. */
typedef struct hgr__gemm_im2col_t {
  int64_t in_h, in_w, out_w, kh, kw, sh, sw, dh, dw, pt, pl;
} hgr__gemm_im2col_t;

/* The fused epilogue's attrs, as conv2d, dense, matmul and batch_matmul take them,
 * into g's act, alpha, a_min and a_max: "activation" = "none" (default), "relu",
 * "leaky_relu" (attr "alpha", default 0.01, finite), "clip" (attrs "a_min" and
 * "a_max", both required, a_min <= a_max), "leaky_relu_clip" (the leaky relu, then the
 * clip: alpha, a_min and a_max as theirs), "sigmoid" and, with gelu, "gelu" and "gelu_tanh"
 * (conv2d's direct kernels have no GELU); alpha, a_min and a_max are errors with any
 * other activation. The errors name the node and the attr. */
hgr_status_t hgr__gemm_parse_activation(const hgr__op_ctx_t* ctx, bool gelu, hgr__gemm_t* g);

/* Whether g's B is in panels the kernels read as float4s and the direct variants
 * whole (b_col 1, b_wrap < n a multiple of 4, panels and rows 16 floats aligned),
 * as matmul's attr b_panel makes it. */
bool hgr__gemm_panels(const hgr__gemm_t* g);
/* Whether some GEMM tile variant fits the device's limits (it needs local memory). */
bool hgr__gemm_fits(const hgr__limits_t* limits, const hgr__gemm_t* g);

/* Appends the GEMM's launch (kernel of kernels/linalg.cl) to the op's plan: the
 * tile variant that fits ctx's device limits with the least estimated time. The
 * caller has checked the inputs' dtypes and element counts (below INT32_MAX). */
hgr_status_t hgr__gemm_plan(hgr__op_ctx_t* ctx, const hgr__gemm_t* g);
/* hgr__gemm_plan for a launch of an op that chose a tile candidate of its own (conv2d's
 * im2col, attention's staged GEMMs): the tile by the GEMM's rule, whatever the
 * tuning, and ctx->tile left saying what the op chose (`hgr tune` times the op's
 * candidate, not a GEMM tile picked by the candidate's index). */
hgr_status_t hgr__gemm_plan_by_rule(hgr__op_ctx_t* ctx, const hgr__gemm_t* g);

/* hgr__gemm_plan for a GEMM whose B is conv's im2col (its tile variants are the
 * GEMM's; the table of taps goes to the launch's meta buffer, 3 ints per tap: the
 * caller keeps g->k at most a few million and every input offset below INT32_MAX). */
hgr_status_t hgr__gemm_plan_im2col(hgr__op_ctx_t* ctx, const hgr__gemm_t* g, const hgr__gemm_im2col_t* conv);

#endif
