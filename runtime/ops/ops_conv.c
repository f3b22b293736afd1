/* conv2d (kernels/conv.cl): Relay's nn.conv2d on float32, NCHW data, OIHW weights;
 * conv2d_transpose: Relay's nn.conv2d_transpose (ONNX ConvTranspose), further below.
 *
 * Attrs (Relay's names and defaults): strides [1, 1]; padding 0, given as 1 value
 * (all sides), 2 ([top and bottom, left and right]) or 4 ([top, left, bottom,
 * right]); dilation [1, 1]; groups 1 (C_in and C_out divisible by it, weight
 * [C_out, C_in / groups, kh, kw]; groups == C_in is depthwise); channels and
 * kernel_size, optional, must match the weight; data_layout "NCHW", kernel_layout
 * "OIHW", out_layout "" or "NCHW" ("" is the default for each), out_dtype "" or
 * "float32". Any other layout or dtype is an error (hgr runs NCHW only).
 *
 * hgr extension, a fused epilogue (what Relay writes as conv2d -> bias_add -> relu):
 *   - an optional third input, bias, shaped [C_out], is added to every output of its
 *     channel;
 *   - attr "activation" after the bias: "none" (default), "relu" (max(x, 0)),
 *     "leaky_relu" (x >= 0 ? x : alpha * x; attr "alpha", default 0.01), "clip"
 *     (min(max(x, a_min), a_max); attrs "a_min" and "a_max", both required, as
 *     ONNX's Clip with both bounds), "leaky_relu_clip" (the leaky relu, then the clip;
 *     attrs as theirs: what the conv epilogue pass makes of a LeakyRelu followed by
 *     a Max or Min with a constant), "sigmoid" (1 / (1 + exp(-x))), "silu" (x sigmoid(x):
 *     what the pass makes of a Sigmoid and the Mul of its input by it) or "hard_swish"
 *     (x min(max(x / 6 + 0.5, 0), 1)). alpha, a_min
 *     and a_max are errors with any other activation;
 *   - attr "pool_size" [ph, pw] (1 value: both), conv2d only: after the
 *     activation, a max pool of ph x pw windows at that stride, without padding
 *     (what the conv epilogue pass makes of a max_pool2d that tiles the value):
 *     output [N, C_out, OH / ph, OW / pw], rounded down, each window inside the
 *     convolution's output.
 *
 * conv2d_transpose: data [N, C_in, H, W], weight [C_in, C_out / groups, kh, kw]
 * (kernel_layout "IOHW", ONNX ConvTranspose's), optional bias [C_out]; the attrs of
 * conv2d (kernel_layout "IOHW" or "", activation included) plus output_padding ([0,
 * 0], 1 or 2 values, each below the stride or the dilation). Output [N, C_out, OH,
 * OW] with OH = (H - 1) * stride - pad_top - pad_bottom + dilation * (kh - 1) +
 * output_padding + 1 (likewise OW), at least 1. With one group it runs the GEMM of
 * kernels/linalg.cl into the node's scratch and hgr_conv2d_transpose_gather
 * (is_transpose_gemm below); otherwise hgr_conv2d_transpose_direct, one work-item per
 * output gathering its taps.
 *
 * Kernels: a 1x1 kernel with no padding and groups == 1 runs the GEMM of
 * kernels/linalg.cl (runtime/ops/ops_gemm.h; see is_pointwise below); stride-1
 * convolutions of one group run the register-blocked hgr_conv2d_rows_6x16* where
 * they fit it (is_rows), and those with a horizontal stride of 2 its strided
 * variants, on a parity-split copy of the input in the node's scratch buffer
 * (hgr_conv2d_s2_split, then hgr_conv2d_rows_*_s2s*; is_rows_s2, plan_rows_s2_split)
 * or reading it directly (hgr_conv2d_rows_*_s2*); other
 * convolutions with groups == 1 or groups of at least 8 output channels run a kernel
 * tiled in local memory (hgr_conv2d_tiled_*), with the tile variant and work-group
 * shape chosen here from the device's limits; depthwise 3x3 convolutions of
 * horizontal stride 1 or 2 run kernels/conv_depthwise.cl's hgr_conv2d_dw3x3_*
 * (is_depthwise3x3), other depthwise ones hgr_conv2d_depthwise*; groups of fewer
 * channels (one image) and shapes no tile fits run as an implicit GEMM
 * (kernels/linalg.cl's hgr_conv_gemm_*, see is_implicit_gemm); anything else runs
 * hgr_conv2d_direct (one work-item per output, reading global memory). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ops_gemm.h"

/* Meta layout shared with the conv programs (kernels/conv.h's CONV_*; the depthwise
 * kernels read one more value, CONV_DW_ROWS, appended by plan_depthwise3x3). */
enum {
  META_N, META_C, META_H, META_W, META_K, META_OH, META_OW, META_KH, META_KW, META_SH, META_SW, META_DH, META_DW,
  META_PT, META_PL, META_GROUPS, META_FLAGS, META_CIT, META_TIH, META_TIW, META_TILES_K,
  META_ALPHA, META_A_MIN, META_A_MAX, /* float bits */
  META_COUNT
};
#define FLAG_HAS_BIAS 1
#define FLAG_RELU 2
#define FLAG_LEAKY_RELU 4
#define FLAG_CLIP 8
#define FLAG_SIGMOID 16
#define FLAG_SILU 32
#define FLAG_HARD_SWISH 64

typedef struct conv_t {
  int64_t n, c, h, w;       /* input */
  int64_t k, kh, kw;        /* weight [k, c / groups, kh, kw] */
  int64_t oh, ow;           /* output [n, k, oh, ow] */
  int64_t strides[2], dilation[2], padding[4], groups;
  bool bias;
  hgr__gemm_act_t act; /* the fused epilogue (hgr__gemm_parse_activation; no GELUs) */
  float alpha, a_min, a_max;
  int64_t pool[2]; /* conv2d's attr pool_size: the max pool after the epilogue; {0, 0}: none */
} conv_t;

/* A compile-time tile of kernels/conv.cl: each work-item computes ocb output
 * channels x pxb consecutive output columns; "strided" variants gather columns of
 * a horizontal stride > 1. Largest first. */
typedef struct tile_variant_t {
  const char* kernel;
  int ocb, pxb;
  bool strided;
} tile_variant_t;

static const tile_variant_t tile_variants[] = {
    {"hgr_conv2d_tiled_o8p8", 8, 8, false},  {"hgr_conv2d_tiled_o4p8", 4, 8, false},
    {"hgr_conv2d_tiled_o4p4", 4, 4, false},  {"hgr_conv2d_tiled_o8p8s", 8, 8, true},
    {"hgr_conv2d_tiled_o4p4s", 4, 4, true},
};
#define TILE_VARIANT_COUNT (sizeof(tile_variants) / sizeof(tile_variants[0]))

/* Work-items per work-group the tiled kernels aim for, and the most output channels
 * of a work-group. A work-group reads the weights of its channels once per block of
 * pixels, and the input tile once per block of channels: with at most 64 channels
 * the rest of the work-group goes to rows, so the weights are read a few times per
 * layer instead of once per output row (resnet50's and vgg19's 3x3 layers at 14x14
 * and 7x7 took 2-4x longer per FLOP than at 56x56 with 64 items and up to 512
 * channels per work-group; on PoCL, 256 items and 64 channels run them 1.3-1.6x
 * faster, and the large layers no slower). */
#define TILE_TARGET_WORK_GROUP 256
#define TILE_MAX_TOC 64
/* The fewest output channels per group that the tiled kernels take a grouped
 * convolution with (bvlc_alexnet's groups of 2 ran 10x slower in the direct kernel). */
#define TILE_MIN_GROUP_CHANNELS 8
/* The most input channels per chunk (a chunk's tiles are reloaded per chunk). */
#define TILE_MAX_CHUNK 16

typedef struct tile_plan_t {
  const tile_variant_t* variant;
  int64_t lx, ly, lz;       /* work-group */
  int64_t cit, tih, tiw;    /* input channels per chunk; input tile rows, columns */
  int64_t xs_floats, ws_floats;
} tile_plan_t;

/* ---- attrs ------------------------------------------------------------------------- */

/* An optional attr of `count` ints that, when present, must equal `want`. */
static hgr_status_t check_optional_ints(const hgr__op_ctx_t* ctx, const char* key, const int64_t* want,
                                        uint32_t count, const char* what) {
  int64_t values[2];
  uint32_t got = 0;
  bool present = false;
  HGR_RETURN_IF_ERROR(hgr__attr_ints(ctx, key, values, count, &got, &present));
  if (!present) return HGR_OK;
  bool same = got == count;
  for (uint32_t i = 0; same && i < count; ++i) same = values[i] == want[i];
  if (same) return HGR_OK;
  char text[64];
  if (count == 1) snprintf(text, sizeof(text), "%lld", (long long)want[0]);
  else snprintf(text, sizeof(text), "[%lld, %lld]", (long long)want[0], (long long)want[1]);
  return HGR__OP_ERROR(ctx, "attr '%s' = \"%s\" does not match %s, %s", key, hgr__attr_string(ctx, key, ""), what,
                       text);
}

/* ---- checks ------------------------------------------------------------------------ */

static hgr_status_t check_4d(const hgr__op_ctx_t* ctx, uint32_t input, const char* name, const char* layout) {
  HGR_RETURN_IF_ERROR(hgr__op_check_dtype(ctx, (int)input, -1, false));
  const hgr__entry_t* entry = hgr__op_input(ctx, input);
  if (entry->ndim != 4) {
    char shape[160];
    return HGR__OP_ERROR(ctx, "input %u (%s, entry %u) is shaped %s; it must have 4 dimensions (%s)", input, name,
                         (uint32_t)(entry - ctx->graph->entries), hgr__entry_shape(entry, shape, sizeof(shape)),
                         layout);
  }
  return HGR_OK;
}

/* Output size of one spatial axis; -1 when the dilated kernel does not fit. */
static int64_t out_extent(int64_t in, int64_t pad_sum, int64_t kernel, int64_t stride, int64_t dilation) {
  int64_t span = (kernel - 1) * dilation + 1;
  if (in + pad_sum < span) return -1;
  return (in + pad_sum - span) / stride + 1;
}

/* The fused epilogue's attrs (hgr__gemm_parse_activation, without the GELUs:
 * kernels/conv.cl's epilogue has none) into conv_t's act and its parameters. */
static hgr_status_t parse_activation(const hgr__op_ctx_t* ctx, conv_t* p) {
  hgr__gemm_t g = {0};
  HGR_RETURN_IF_ERROR(hgr__gemm_parse_activation(ctx, false, &g));
  p->act = g.act;
  p->alpha = g.alpha;
  p->a_min = g.a_min;
  p->a_max = g.a_max;
  return HGR_OK;
}

/* The attrs conv2d and conv2d_transpose share: layouts (the kernel's is
 * kernel_layouts[0]), out_dtype, the epilogue, strides, dilation, padding, groups. */
static hgr_status_t parse_window_attrs(const hgr__op_ctx_t* ctx, const char* const* kernel_layouts, conv_t* p) {
  /* "" is the default, as TVM writes unset layouts */
  static const char* const data_layouts[] = {"NCHW", "", NULL};
  static const char* const out_layouts[] = {"", "NCHW", NULL};
  static const char* const out_dtypes[] = {"", "float32", NULL};
  memset(p, 0, sizeof(*p));
  const char* choice;
  HGR_RETURN_IF_ERROR(hgr__attr_choice(ctx, "data_layout", "NCHW", data_layouts, &choice));
  HGR_RETURN_IF_ERROR(hgr__attr_choice(ctx, "kernel_layout", kernel_layouts[0], kernel_layouts, &choice));
  HGR_RETURN_IF_ERROR(hgr__attr_choice(ctx, "out_layout", "", out_layouts, &choice));
  HGR_RETURN_IF_ERROR(hgr__attr_choice(ctx, "out_dtype", "", out_dtypes, &choice));
  HGR_RETURN_IF_ERROR(parse_activation(ctx, p));
  HGR_RETURN_IF_ERROR(hgr__attr_pair(ctx, "strides", 1, 1, p->strides));
  HGR_RETURN_IF_ERROR(hgr__attr_pair(ctx, "dilation", 1, 1, p->dilation));
  HGR_RETURN_IF_ERROR(hgr__attr_padding(ctx, "padding", p->padding));
  HGR_RETURN_IF_ERROR(hgr__attr_int(ctx, "groups", 1, &p->groups));
  if (p->groups < 1 || p->groups > INT32_MAX)
    return HGR__OP_ERROR(ctx, "attr 'groups' = %lld must be at least 1", (long long)p->groups);
  return HGR_OK;
}

/* conv2d's and conv2d_transpose's optional bias [K] (input 2), and element counts
 * the kernels' int indices reach. */
static hgr_status_t check_bias_and_counts(const hgr__op_ctx_t* ctx, conv_t* p, const hgr__entry_t* x,
                                          const hgr__entry_t* w) {
  p->bias = hgr__op_input_count(ctx) == 3;
  if (p->bias) {
    HGR_RETURN_IF_ERROR(hgr__op_check_dtype(ctx, 2, -1, false));
    HGR_RETURN_IF_ERROR(hgr__op_check_shape(ctx, hgr__op_input(ctx, 2), "input 2 (bias)", &p->k, 1));
  }
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "the data's element count", x->element_count, INT32_MAX));
  return hgr__op_check_range(ctx, "the weight's element count", w->element_count, INT32_MAX);
}

static hgr_status_t parse_conv(const hgr__op_ctx_t* ctx, conv_t* p) {
  static const char* const kernel_layouts[] = {"OIHW", "", NULL};
  HGR_RETURN_IF_ERROR(parse_window_attrs(ctx, kernel_layouts, p));

  HGR_RETURN_IF_ERROR(check_4d(ctx, 0, "data", "NCHW"));
  HGR_RETURN_IF_ERROR(check_4d(ctx, 1, "weight", "OIHW"));
  const hgr__entry_t* x = hgr__op_input(ctx, 0);
  const hgr__entry_t* w = hgr__op_input(ctx, 1);
  p->n = x->shape[0];
  p->c = x->shape[1];
  p->h = x->shape[2];
  p->w = x->shape[3];
  p->k = w->shape[0];
  p->kh = w->shape[2];
  p->kw = w->shape[3];
  char xs[160], ws[160];
  if (p->c % p->groups || p->k % p->groups || w->shape[1] * p->groups != p->c)
    return HGR__OP_ERROR(ctx,
                         "with groups = %lld, data %s and weight %s do not fit: the weight must be [C_out, "
                         "C_in / groups, kh, kw] with C_in and C_out divisible by groups",
                         (long long)p->groups, hgr__entry_shape(x, xs, sizeof(xs)),
                         hgr__entry_shape(w, ws, sizeof(ws)));
  if (p->kh < 1 || p->kw < 1)
    return HGR__OP_ERROR(ctx, "the weight %s has an empty kernel", hgr__entry_shape(w, ws, sizeof(ws)));
  HGR_RETURN_IF_ERROR(check_optional_ints(ctx, "channels", &p->k, 1, "the weight's output channels"));
  int64_t kernel_size[2] = {p->kh, p->kw};
  HGR_RETURN_IF_ERROR(check_optional_ints(ctx, "kernel_size", kernel_size, 2, "the weight's kernel size"));

  /* The kernels index the padded input with int. */
  if (p->h + p->padding[0] + p->padding[2] > INT32_MAX / 2 || p->w + p->padding[1] + p->padding[3] > INT32_MAX / 2)
    return HGR__OP_ERROR(ctx, "the padded input %s is too large for the kernels' 32-bit indices",
                         hgr__entry_shape(x, xs, sizeof(xs)));
  p->oh = out_extent(p->h, p->padding[0] + p->padding[2], p->kh, p->strides[0], p->dilation[0]);
  p->ow = out_extent(p->w, p->padding[1] + p->padding[3], p->kw, p->strides[1], p->dilation[1]);
  if (p->oh < 1 || p->ow < 1)
    return HGR__OP_ERROR(ctx, "the padded input %s is smaller than the dilated kernel %s (dilation [%lld, %lld])",
                         hgr__entry_shape(x, xs, sizeof(xs)), hgr__entry_shape(w, ws, sizeof(ws)),
                         (long long)p->dilation[0], (long long)p->dilation[1]);
  bool pooled = false;
  uint32_t count = 0;
  HGR_RETURN_IF_ERROR(hgr__attr_ints(ctx, "pool_size", p->pool, 2, &count, &pooled));
  if (pooled) {
    HGR_RETURN_IF_ERROR(hgr__attr_pair(ctx, "pool_size", 1, 1, p->pool));
    if (p->oh < p->pool[0] || p->ow < p->pool[1])
      return HGR__OP_ERROR(ctx, "attr 'pool_size' = \"%s\" is larger than the convolution's output [%lld, %lld]",
                           hgr__attr_string(ctx, "pool_size", ""), (long long)p->oh, (long long)p->ow);
  } else {
    p->pool[0] = p->pool[1] = 0;
  }
  return check_bias_and_counts(ctx, p, x, w);
}

static hgr_status_t infer_conv2d(hgr__op_ctx_t* ctx, hgr__entry_t* outputs) {
  conv_t p;
  HGR_RETURN_IF_ERROR(parse_conv(ctx, &p));
  int64_t yshape[4] = {p.n, p.k, p.pool[0] ? p.oh / p.pool[0] : p.oh, p.pool[1] ? p.ow / p.pool[1] : p.ow};
  hgr__op_set_output(&outputs[0], HGR__DTYPE_F32, yshape, 4);
  return HGR_OK;
}

/* ---- tiles ------------------------------------------------------------------------- */

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* Input channels per chunk that fit local memory for a work-group shape, spread
 * evenly over the chunks (so the last one is not mostly zeros); false if not even one
 * channel fits. */
static bool fit_chunk(const conv_t* p, const hgr__limits_t* limits, tile_plan_t* t) {
  int64_t toc = t->variant->ocb * t->lz, tow = t->variant->pxb * t->lx;
  t->tih = (t->ly - 1) * p->strides[0] + (p->kh - 1) * p->dilation[0] + 1;
  t->tiw = (tow - 1) * p->strides[1] + (p->kw - 1) * p->dilation[1] + 1;
  /* the strided kernels store each row as its SW phases, TIW / SW columns each */
  if (t->variant->strided) t->tiw = ceil_div(t->tiw, p->strides[1]) * p->strides[1];
  if (t->tih > INT32_MAX / 4 || t->tiw > INT32_MAX / 4) return false;
  int64_t cg = p->c / p->groups; /* a work-group's input channels: its group's */
  for (int64_t cap = min64(TILE_MAX_CHUNK, cg); cap >= 1; cap /= 2) {
    int64_t chunks = ceil_div(cg, cap);
    int64_t cit = ceil_div(cg, chunks);
    int64_t xs = cit * t->tih * t->tiw, ws = toc * cit * p->kh * p->kw;
    /* Both tiles are indexed with int in the kernel; the test against local memory
     * keeps them far below that. */
    if (xs > INT32_MAX / 8 || ws > INT32_MAX / 8) continue;
    if ((uint64_t)(xs + ws) * sizeof(float) <= limits->local_mem_bytes) {
      t->cit = cit;
      t->xs_floats = xs;
      t->ws_floats = ws;
      return true;
    }
  }
  return false;
}

/* How many of `total` blocks one work-group takes along an axis, at most `most`:
 * spread evenly over the work-groups (9 blocks at most 8: 5 and 4, not 8 and 1). */
static int64_t balanced(int64_t total, int64_t most) {
  if (most < 1) most = 1;
  if (total < 1) total = 1;
  return ceil_div(total, ceil_div(total, most));
}

/* The work-group shape and chunk of one variant within the limits: an aim of
 * TILE_TARGET_WORK_GROUP work-items, spent first on the row's columns, then on
 * output channels (TILE_MAX_TOC at most), then on rows, shrunk (rows, channels, columns) until the tiles fit
 * local memory. */
static bool fit_variant(const conv_t* p, const hgr__limits_t* limits, const tile_variant_t* variant,
                        tile_plan_t* t) {
  memset(t, 0, sizeof(*t));
  t->variant = variant;
  int64_t budget = (int64_t)min64((int64_t)limits->max_work_group, TILE_TARGET_WORK_GROUP);
  if (budget < 1) budget = 1;
  int64_t item[3];
  for (int d = 0; d < 3; ++d) item[d] = max64(1, (int64_t)min64((int64_t)limits->max_work_item[d], budget));
  t->lx = balanced(ceil_div(p->ow, variant->pxb), item[0]);
  t->lz = balanced(ceil_div(p->k / p->groups, variant->ocb), min64(min64(item[2], budget / t->lx), TILE_MAX_TOC / variant->ocb));
  t->ly = balanced(p->oh, min64(item[1], budget / (t->lx * t->lz)));
  for (;;) {
    if (fit_chunk(p, limits, t)) return true;
    if (t->ly > 1) t->ly /= 2;
    else if (t->lz > 1) t->lz /= 2;
    else if (t->lx > 1) t->lx /= 2;
    else return false;
  }
}

/* The largest variant that suits the shape and fits the device; false: none does. */
static bool choose_tile(const conv_t* p, const hgr__limits_t* limits, tile_plan_t* out) {
  bool strided = p->strides[1] != 1;
  for (size_t v = 0; v < TILE_VARIANT_COUNT; ++v) {
    const tile_variant_t* variant = &tile_variants[v];
    if (variant->strided != strided) continue;
    /* A block much wider or deeper than the output is mostly wasted work. */
    if (variant->pxb > 4 && p->ow <= 4) continue;
    if (variant->ocb > 4 && p->k / p->groups <= 4) continue;
    if (fit_variant(p, limits, variant, out)) return true;
  }
  return false;
}

/* ---- plan -------------------------------------------------------------------------- */

/* The conv kernels' epilogue flags (kernels/conv.h, CONV_ACTIVATE, applied in flag
 * order) of activation act; the GEMM path takes act itself. */
static int32_t activation_flags(hgr__gemm_act_t act) {
  switch (act) {
    case HGR__GEMM_ACT_RELU: return FLAG_RELU;
    case HGR__GEMM_ACT_LEAKY_RELU: return FLAG_LEAKY_RELU;
    case HGR__GEMM_ACT_CLIP: return FLAG_CLIP;
    case HGR__GEMM_ACT_LEAKY_RELU_CLIP: return FLAG_LEAKY_RELU | FLAG_CLIP;
    case HGR__GEMM_ACT_SIGMOID: return FLAG_SIGMOID;
    case HGR__GEMM_ACT_SILU: return FLAG_SILU;
    case HGR__GEMM_ACT_HARD_SWISH: return FLAG_HARD_SWISH;
    default: return 0; /* none (parse_activation refuses the GELUs) */
  }
}

static void meta_common(hgr__op_ctx_t* ctx, hgr__launch_plan_t* l, const conv_t* p, const tile_plan_t* t) {
  int32_t meta[META_COUNT] = {0};
  meta[META_N] = (int32_t)p->n;
  meta[META_C] = (int32_t)p->c;
  meta[META_H] = (int32_t)p->h;
  meta[META_W] = (int32_t)p->w;
  meta[META_K] = (int32_t)p->k;
  meta[META_OH] = (int32_t)p->oh;
  meta[META_OW] = (int32_t)p->ow;
  meta[META_KH] = (int32_t)p->kh;
  meta[META_KW] = (int32_t)p->kw;
  meta[META_SH] = (int32_t)p->strides[0];
  meta[META_SW] = (int32_t)p->strides[1];
  meta[META_DH] = (int32_t)p->dilation[0];
  meta[META_DW] = (int32_t)p->dilation[1];
  meta[META_PT] = (int32_t)p->padding[0];
  meta[META_PL] = (int32_t)p->padding[1];
  meta[META_GROUPS] = (int32_t)p->groups;
  meta[META_FLAGS] = (p->bias ? FLAG_HAS_BIAS : 0) | activation_flags(p->act);
  memcpy(&meta[META_ALPHA], &p->alpha, sizeof(float));
  memcpy(&meta[META_A_MIN], &p->a_min, sizeof(float));
  memcpy(&meta[META_A_MAX], &p->a_max, sizeof(float));
  if (t) {
    meta[META_CIT] = (int32_t)t->cit;
    meta[META_TIH] = (int32_t)t->tih;
    meta[META_TIW] = (int32_t)t->tiw;
    meta[META_TILES_K] = (int32_t)ceil_div(p->k / p->groups, t->variant->ocb * t->lz);
  }
  hgr__launch_meta(ctx, l, meta, META_COUNT);
}

/* A launch of kernel with the arguments every conv kernel takes (kernels/conv.h):
 * x, w, the bias (w again without one: read only with a bias), y and the meta
 * buffer laid out by meta_common (t: the tiled kernels' tile, else NULL). NULL
 * when the launch cannot be made (ctx's error says why; the launch_* calls
 * accept it). */
static hgr__launch_plan_t* conv_launch(hgr__op_ctx_t* ctx, const char* kernel, const conv_t* p,
                                       const tile_plan_t* t) {
  hgr__launch_plan_t* l = hgr__op_launch(ctx, kernel);
  hgr__launch_input(ctx, l, 0);
  hgr__launch_input(ctx, l, 1);
  hgr__launch_input(ctx, l, p->bias ? 2 : 1);
  hgr__launch_output(ctx, l, 0);
  hgr__launch_meta_arg(ctx, l);
  meta_common(ctx, l, p, t);
  return l;
}

/* A 1x1 convolution without padding and with one group is a GEMM per image (with
 * groups, of one image: a GEMM per group):
 * y[n] [K, OH * OW] = w [K, C] x x[n] [C, OH * OW], the bias per row and the
 * epilogue in the GEMM's; with strides the GEMM reads x's columns as the pixels of
 * the subsampled image (b_wrap OW per row, SH * W apart, SW between columns). The
 * dilation of a 1x1 kernel changes nothing. kernels/linalg.cl runs it 2-4x faster
 * than the tiled kernel (whose tile reloads the weights for every 8 pixels). */
static bool is_pointwise(const conv_t* p) {
  return p->kh == 1 && p->kw == 1 && p->padding[0] == 0 && p->padding[1] == 0 && p->padding[2] == 0 &&
         p->padding[3] == 0 && (p->groups == 1 || p->n == 1);
}

static hgr__gemm_t pointwise_gemm(const conv_t* p) {
  /* groups (one image): a batch of GEMMs, one per group, y[g] [K / G, OH * OW] =
   * w[g] [K / G, C / G] x x[g] [C / G, OH * OW] */
  int64_t kg = p->k / p->groups, cg = p->c / p->groups;
  hgr__gemm_t g = {
      .batch = p->groups == 1 ? p->n : p->groups, .m = kg, .n = p->oh * p->ow, .k = cg,
      .a_batch = p->groups == 1 ? 0 : kg * cg, .a_row = cg, .a_depth = 1,
      .b_batch = cg * p->h * p->w, .b_depth = p->h * p->w, .b_col = p->strides[1],
      .bias = !p->bias ? HGR__GEMM_BIAS_NONE : p->groups == 1 ? HGR__GEMM_BIAS_ROW : HGR__GEMM_BIAS_BATCH_ROW,
      .act = p->act,
      .alpha = p->alpha, .a_min = p->a_min, .a_max = p->a_max,
      .swap_inputs = true,
      .b_wrap = p->ow, .b_wrap_stride = p->strides[0] * p->w,
  };
  /* stride 1: the rows follow each other, no wrap */
  if (p->strides[0] == 1 && p->strides[1] == 1) g.b_wrap = g.b_wrap_stride = 0;
  return g;
}

/* A convolution of one input channel along one row (c 1, one group, kh 1, one output
 * row, no padding), whose kernel spans more than one column: the STFT front ends of
 * audio models (a 512-tap window every 160 samples) and other 1-D filter banks. Its
 * im2col matrix is a strided view of the input, B [kw, ow] with element (t, j) at
 * t * dilation + j * stride, so it is a plain GEMM per image, y [K, OW] = w [K, kw] x
 * B; the tiled kernel ran one at 7 GFLOP/s (openWakeWord's melspectrogram). */
static bool is_windows(const conv_t* p) {
  return p->groups == 1 && p->c == 1 && p->kh == 1 && p->kw > 1 && p->oh == 1 && p->padding[0] == 0 &&
         p->padding[1] == 0 && p->padding[2] == 0 && p->padding[3] == 0 && p->n > 0 && p->k > 0 && p->ow > 0;
}

static hgr__gemm_t windows_gemm(const conv_t* p) {
  hgr__gemm_t g = pointwise_gemm(p);
  g.k = p->kw;
  g.a_row = p->kw;
  g.b_batch = p->h * p->w;
  g.b_depth = p->dilation[1];
  g.b_col = p->strides[1];
  g.b_wrap = g.b_wrap_stride = 0;
  return g;
}

/* Any other convolution of one group, or of one image (depthwise ones excluded), is
 * an implicit GEMM per image, or per group: y[p] [K / G, OH * OW] = w[g] [K / G,
 * C / G * KH * KW] x im2col(x[p]), the columns of im2col(x) read from the input
 * through the stride, padding and dilation as the GEMM copies its tiles
 * (ops_gemm.h), so nothing is materialized. It runs what the tiled kernel does not
 * take, and the stride-2 shapes of prefers_implicit_gemm: on PoCL (CPU time, issue
 * 16) it measured 0.6-0.9x the tiled kernel's speed on resnet50's and vgg19's
 * stride-1 3x3 and 7x7 layers, but it replaces the direct kernel (one work-item per
 * output, no reuse) for groups of fewer than TILE_MIN_GROUP_CHANNELS channels (3-9x)
 * and shapes no tile fits. */
static bool is_implicit_gemm(const conv_t* p) {
  return p->groups == 1 || (p->n == 1 && p->groups < p->c);
}

/* The most taps (C_in / groups * KH * KW) the implicit GEMM takes: its table holds
 * 3 ints per tap in the launch's meta buffer. */
#define IMPLICIT_GEMM_MAX_TAPS (1 << 20)

/* Stride-2 convolutions of one group with at least 196 output pixels (14 x 14) and
 * 64 taps that the strided rows kernel does not take (is_rows_s2) run the
 * implicit GEMM before the tiled kernel and the pointwise GEMM: its
 * tile copy takes 4 outputs' inputs as the even half of one vload8. On PoCL (CPU
 * time, issue 16) it measured 1.25-1.4x the tiled kernel on resnet50's 3x3
 * stride-2 layer with 28 x 28 outputs, even with 14 x 14, and 1.1x the pointwise
 * GEMM on its 1x1 stride-2 layers with 28 x 28 and 14 x 14 outputs; with 7 x 7
 * outputs (most of a 128-pixel tile wasted) and with 3 input channels (conv1: 147
 * taps, 0.8x) it lost. */
static bool prefers_implicit_gemm(const conv_t* p) {
  return p->groups == 1 && p->strides[0] == 2 && p->strides[1] == 2 && p->oh * p->ow >= 196 &&
         p->c * p->kh * p->kw >= 64 && p->c * p->kh * p->kw <= IMPLICIT_GEMM_MAX_TAPS && p->n > 0;
}

static hgr__gemm_t implicit_gemm(const conv_t* p, hgr__gemm_im2col_t* out_im2col) {
  hgr__gemm_t g = pointwise_gemm(p);
  int64_t cg = p->c / p->groups;
  g.k = cg * p->kh * p->kw;
  g.a_batch = p->groups == 1 ? 0 : (p->k / p->groups) * g.k;
  g.a_row = g.k;
  g.a_depth = 1;
  g.b_depth = g.b_col = 0;
  g.b_wrap = g.b_wrap_stride = 0;
  *out_im2col = (hgr__gemm_im2col_t){
      .in_h = p->h, .in_w = p->w, .out_w = p->ow, .kh = p->kh, .kw = p->kw,
      .sh = p->strides[0], .sw = p->strides[1], .dh = p->dilation[0], .dw = p->dilation[1],
      .pt = p->padding[0], .pl = p->padding[1],
  };
  return g;
}

/* The register-blocked kernel of kernels/conv.cl (hgr_conv2d_rows_6x16*): one group,
 * stride 1, dilation 1, at most ROWS_MAX_TAPS taps, the output no wider than the
 * input (left plus right padding at most KW - 1: its grid of pixels has the input's
 * width) and a grid ((OH - 1) * W + OW pixels) of at least one block of 16 pixels.
 * Each work-item keeps 6 output channels x 16 pixels in registers across the whole
 * C * KH * KW loop, as the direct GEMM does; on PoCL (CPU time, issue 16) it ran
 * resnet50's and vgg19's stride-1 3x3 layers at 1.3-2x the speed of the tiled
 * kernel (1.2x on vgg19's first, 3 input channels), whose accumulators PoCL keeps
 * in memory across its barriers (bench/notes.md). */
#define ROWS_MAX_TAPS 25 /* CONV_ROWS_MAX_TAPS */
#define ROWS_BLOCK_K 6
#define ROWS_BLOCK_PIXELS 16
#define ROWS_WORK_GROUP 8
static bool is_rows(const conv_t* p) {
  return p->groups == 1 && p->strides[0] == 1 && p->strides[1] == 1 && p->dilation[0] == 1 &&
         p->dilation[1] == 1 && p->kh * p->kw <= ROWS_MAX_TAPS && p->padding[1] + p->padding[3] <= p->kw - 1 &&
         p->padding[0] < p->kh && p->padding[2] < p->kh && (p->oh - 1) * p->w + p->ow >= ROWS_BLOCK_PIXELS &&
         p->oh * p->w <= INT32_MAX / 2 && p->n > 0 && p->c > 0 && p->k > 0;
}

/* The rows kernels' range: pixel_blocks blocks of pixels per image (dimension 0),
 * blocks of block_k output channels (dimension 1; the work-items of a group share
 * their block of pixels), images (dimension 2). */
static void rows_range_of(const hgr__op_ctx_t* ctx, hgr__launch_plan_t* l, const conv_t* p, int64_t pixel_blocks,
                          int64_t block_k) {
  int64_t blocks_k = ceil_div(p->k, block_k);
  int64_t ly = min64(min64(ROWS_WORK_GROUP, (int64_t)ctx->limits.max_work_group),
                     (int64_t)ctx->limits.max_work_item[1]);
  ly = max64(1, min64(ly, blocks_k));
  size_t local[3] = {1, (size_t)ly, 1};
  size_t global[3] = {(size_t)pixel_blocks, (size_t)blocks_k, (size_t)p->n};
  hgr__launch_nd(l, 3, global, local);
}

/* The 6 x 16 blocks' range (ROWS_BLOCK_PIXELS pixels, ROWS_BLOCK_K channels). */
static void rows_range(const hgr__op_ctx_t* ctx, hgr__launch_plan_t* l, const conv_t* p, int64_t pixel_blocks) {
  rows_range_of(ctx, l, p, pixel_blocks, ROWS_BLOCK_K);
}

/* The layer's key among the tuning records: "conv_rows:" (stride 1) or
 * "conv_rows_s2:" with the vertical stride, then the data and weight shapes and
 * the padding. */
static void rows_key(const conv_t* p, bool strided, char* key, size_t size) {
  char stride[32] = "";
  if (strided) snprintf(stride, sizeof(stride), ":s%lld", (long long)p->strides[0]);
  snprintf(key, size, "conv_rows%s:%lldx%lldx%lldx%lld:k%lldx%lldx%lld%s:p%lld,%lld,%lld,%lld", strided ? "_s2" : "",
           (long long)p->n, (long long)p->c, (long long)p->h, (long long)p->w, (long long)p->k, (long long)p->kh,
           (long long)p->kw, stride, (long long)p->padding[0], (long long)p->padding[1], (long long)p->padding[2],
           (long long)p->padding[3]);
}

static hgr_status_t plan_rows(hgr__op_ctx_t* ctx, const conv_t* p) {
  const char* kernel = p->kh == 3 && p->kw == 3   ? "hgr_conv2d_rows_6x16_k3"
                       : p->kh == 5 && p->kw == 5 ? "hgr_conv2d_rows_6x16_k5"
                                                  : "hgr_conv2d_rows_6x16";
  rows_range(ctx, conv_launch(ctx, kernel, p, NULL), p, ceil_div((p->oh - 1) * p->w + p->ow, ROWS_BLOCK_PIXELS));
  return HGR_OK;
}

/* A conv2d with attr pool_size (a max pool of that window at that stride, without
 * padding, after the epilogue: the conv epilogue pass fuses such a pool,
 * runtime/passes/conv_epilogue.c) runs kernels/conv.cl's
 * hgr_conv2d_rows_pool_6x16x2* where is_rows_pool takes it: one group, stride 1,
 * dilation 1, at most ROWS_MAX_TAPS taps, a window of 2 rows and 1 or 2 columns,
 * whatever the shape (but for the kernel's int offsets), so that the pass fuses the
 * same nodes at every shape of a model and the first shape's program has the
 * kernel. Each work-item keeps 6 output channels x 16 columns of the two rows of a
 * pooled row in registers (rows narrower than 16 leave lanes unused), and only the
 * pooled outputs are stored. Anything else runs hgr_conv2d_direct_pool (a work-item
 * per pooled output). On PoCL the CRNN's three conv + relu + max pool blocks took
 * 1.61-1.65 ms against 1.99 for the conv and pool kernels (bench/notes.md). */
static bool is_rows_pool(const conv_t* p) {
  return p->groups == 1 && p->strides[0] == 1 && p->strides[1] == 1 && p->dilation[0] == 1 &&
         p->dilation[1] == 1 && p->kh * p->kw <= ROWS_MAX_TAPS && p->pool[0] == 2 &&
         (p->pool[1] == 1 || p->pool[1] == 2) && p->oh >= 2 && p->ow >= p->pool[1] && p->n > 0 && p->c > 0 &&
         p->k > 0 &&
         /* the kernel's int offsets reach KH + 1 rows and a block past the last plane's */
         p->n * p->c * p->h * p->w + (p->kh + 2) * p->w + p->kw + 2 * ROWS_BLOCK_PIXELS <= INT32_MAX;
}

/* The pooling kernels' meta after meta_common's: CONV_POOL_H, CONV_POOL_W. */
static void pool_meta(hgr__op_ctx_t* ctx, hgr__launch_plan_t* l, const conv_t* p) {
  int32_t meta[2] = {(int32_t)p->pool[0], (int32_t)p->pool[1]};
  hgr__launch_meta(ctx, l, meta, 2);
}

/* Patch convolutions (one group, stride = kernel size, at least 9 taps (3 x 3, 2 x 5), no padding,
 * dilation 1: a vision transformer's patch embedding, a ConvNeXt's stem) run as two
 * launches through the node's scratch: kernels/conv.cl's hgr_conv2d_patches lays
 * out the patches as the columns of cols [N, C * KH * KW, OH * OW] (each input pixel
 * copied at most once), then the GEMM (kernels/linalg.cl) computes y[n] = w [K, C *
 * KH * KW] x cols[n], with the bias per row and the epilogue, as a 1x1 convolution's.
 * The GEMM's direct kernels read cols' rows contiguously where the implicit GEMM
 * gathers B through its tap table: on PoCL a ViT-S/16's 16 x 16 patches of a 224 x
 * 224 image (3 -> 384 channels, 196 patches, 115 MFLOP) took 1.2-2.3 ms of device
 * time, against 6.0-9.5 ms as the implicit GEMM (hgr run --profile, load 1.5-2). */
/* The most scratch a convolution's two-launch plan takes: the patches' columns here,
 * a transposed convolution's taps (is_transpose_gemm). */
#define SCRATCH_MAX_BYTES ((int64_t)256 << 20)
static bool is_patches(const conv_t* p) {
  return p->groups == 1 && p->kh == p->strides[0] && p->kw == p->strides[1] && p->kh * p->kw >= 9 &&
         p->dilation[0] == 1 && p->dilation[1] == 1 && !p->padding[0] && !p->padding[1] && !p->padding[2] &&
         !p->padding[3] && p->n > 0 && p->c > 0 && p->k > 0 && p->oh > 0 && p->ow > 0 &&
         /* at most the input's elements, each copied once (oh * kh <= h, ow * kw <= w) */
         p->n * p->c * p->h * p->w <= SCRATCH_MAX_BYTES / (int64_t)sizeof(float);
}

/* The GEMM of a patch convolution: A the weights [K, C * KH * KW] (input 1), B the
 * scratch's cols[n] (contiguous rows of OH * OW), C the output. */
static hgr__gemm_t patches_gemm(const conv_t* p) {
  hgr__gemm_t g = pointwise_gemm(p);
  g.k = p->c * p->kh * p->kw;
  g.a_row = g.k;
  g.b_batch = g.k * g.n;
  g.b_depth = g.n;
  g.b_col = 1;
  g.b_wrap = g.b_wrap_stride = 0;
  g.b_scratch = true;
  g.scratch_bytes = (uint64_t)(p->n * g.k * g.n) * sizeof(float);
  return g;
}

static hgr_status_t plan_patches(hgr__op_ctx_t* ctx, const conv_t* p, const hgr__gemm_t* g) {
  hgr__launch_plan_t* l = hgr__op_launch(ctx, "hgr_conv2d_patches");
  hgr__launch_input(ctx, l, 0);
  hgr__launch_scratch(ctx, l, g->scratch_bytes);
  hgr__launch_meta_arg(ctx, l);
  meta_common(ctx, l, p, NULL);
  size_t global[3] = {(size_t)p->oh, (size_t)p->kh, (size_t)(p->n * p->c)}, local[3] = {1, 1, 1};
  hgr__launch_nd(l, 3, global, local);
  return hgr__gemm_plan(ctx, g);
}

static hgr_status_t plan_conv2d_pool(hgr__op_ctx_t* ctx, const conv_t* p, uint64_t outputs) {
  if (!is_rows_pool(p)) {
    hgr__launch_plan_t* l = conv_launch(ctx, "hgr_conv2d_direct_pool", p, NULL);
    pool_meta(ctx, l, p);
    hgr__launch_1d(ctx, l, outputs);
    return HGR_OK;
  }
  const char* kernel = p->kh == 3 && p->kw == 3   ? "hgr_conv2d_rows_pool_6x16x2_k3"
                       : p->kh == 5 && p->kw == 5 ? "hgr_conv2d_rows_pool_6x16x2_k5"
                                                  : "hgr_conv2d_rows_pool_6x16x2";
  hgr__launch_plan_t* l = conv_launch(ctx, kernel, p, NULL);
  pool_meta(ctx, l, p);
  int64_t columns = p->ow / p->pool[1] * p->pool[1];
  rows_range(ctx, l, p, p->oh / 2 * ceil_div(columns, ROWS_BLOCK_PIXELS));
  return HGR_OK;
}

bool hgr__conv2d_pools_in_registers(const hgr__op_ctx_t* ctx, const int64_t window[2]) {
  if (strcmp(ctx->op->name, "conv2d")) return false;
  conv_t p;
  hgr_status_t status = parse_conv(ctx, &p);
  bool fits = !status && !p.pool[0];
  hgr_status_free(status);
  if (!fits) return false;
  p.pool[0] = window[0];
  p.pool[1] = window[1];
  return is_rows_pool(&p); /* which checks that the window fits the output */
}

/* The register-blocked kernels for a horizontal stride of 2 (kernels/conv.cl's
 * hgr_conv2d_rows_6x16_s2* and hgr_conv2d_rows_6x8x2_s2*): one group, any vertical
 * stride, dilation 1, KW at most ROWS_S2_MAX_KW (their lane masks, one per kw) and
 * more than one tap. Each work-item keeps 6 output channels x 16 pixels in
 * registers, each tap's inputs the even lanes of two vector loads: 16 pixels of one
 * output row, or, where blocks of 8 waste fewer lanes of a row (OW 7, 8, 17-24, ...),
 * 8 pixels of each of two rows (rows_s2_pixels). The rule takes them wherever they
 * fit, the tiled kernel a tuning candidate beside them (plan_conv2d), under the
 * candidate name "rows_6x16_s2" for either block shape (so tuning records stay
 * valid). The 6x8x2 blocks ran resnet50's 512-channel layer with 7 x 7 outputs in
 * 0.6-0.7x the tiled kernel's CPU time on PoCL (bench/notes.md). The rule once left
 * the tiled kernel (or the implicit GEMM) the widths where the blocks waste more than
 * a quarter of a row's lanes; on PoCL 3.1 with skylake-avx512 code the split form ran
 * such layers in 0.27-0.33x the tiled kernel's device time (`hgr tune`, OW 3, 5, 9 and
 * 10: 512 -> 512 channels on 5 x 5 outputs 1.12 against 4.13 ms). */
#define ROWS_S2_MAX_KW 11 /* CONV_ROWS_S2_MAX_KW */
static bool is_rows_s2(const conv_t* p) {
  return p->groups == 1 && p->strides[1] == 2 && p->dilation[0] == 1 && p->dilation[1] == 1 &&
         p->kw <= ROWS_S2_MAX_KW && p->kh * p->kw > 1 && p->n > 0 && p->c > 0 && p->k > 0 && p->oh > 0 &&
         p->ow > 0 && p->strides[0] * p->w <= INT32_MAX / 4 &&
         /* the kernel's int offsets reach KH + SH rows past the last plane's */
         p->n * p->c * p->h * p->w + (p->kh + p->strides[0] + 1) * p->w <= INT32_MAX - 64 &&
         p->oh * ceil_div(p->ow, ROWS_BLOCK_PIXELS) <= INT32_MAX &&
         ceil_div(p->oh, 2) * ceil_div(p->ow, 8) <= INT32_MAX;
}

/* The pixels of one output row in a block: 16 (one row per block), or 8 (two rows)
 * where that leaves fewer lanes of a row unused. */
static int64_t rows_s2_pixels(const conv_t* p) {
  return ceil_div(p->ow, 8) * 8 < ceil_div(p->ow, 16) * 16 ? 8 : 16;
}

/* The strided rows kernel for p's kernel size, of two rows of 8 pixels or one of
 * 16 (rows_s2_pixels, which follows the output's width), reading the input (s2) or
 * its split copy (s2s). */
static const char* rows_s2_kernel(const conv_t* p, bool two_rows, bool split) {
  bool k3 = p->kh == 3 && p->kw == 3, k7 = p->kh == 7 && p->kw == 7;
  if (two_rows)
    return k3 ? (split ? "hgr_conv2d_rows_6x8x2_s2s_k3" : "hgr_conv2d_rows_6x8x2_s2_k3")
              : (split ? "hgr_conv2d_rows_6x8x2_s2s" : "hgr_conv2d_rows_6x8x2_s2");
  if (k3) return split ? "hgr_conv2d_rows_6x16_s2s_k3" : "hgr_conv2d_rows_6x16_s2_k3";
  if (k7) return split ? "hgr_conv2d_rows_6x16_s2s_k7" : "hgr_conv2d_rows_6x16_s2_k7";
  return split ? "hgr_conv2d_rows_6x16_s2s" : "hgr_conv2d_rows_6x16_s2";
}

/* Launches the strided rows kernel, naming the other block shape as its sibling. */
static hgr__launch_plan_t* rows_s2_launch(hgr__op_ctx_t* ctx, const conv_t* p, bool split) {
  bool two_rows = rows_s2_pixels(p) == 8;
  hgr__launch_plan_t* l = split ? hgr__op_launch(ctx, rows_s2_kernel(p, two_rows, true))
                                : conv_launch(ctx, rows_s2_kernel(p, two_rows, false), p, NULL);
  hgr__launch_sibling(ctx, l, rows_s2_kernel(p, !two_rows, split));
  return l;
}

static int64_t rows_s2_blocks(const conv_t* p) {
  return rows_s2_pixels(p) == 8 ? ceil_div(p->oh, 2) * ceil_div(p->ow, 8) : p->oh * ceil_div(p->ow, ROWS_BLOCK_PIXELS);
}

static hgr_status_t plan_rows_s2(hgr__op_ctx_t* ctx, const conv_t* p) {
  rows_range(ctx, rows_s2_launch(ctx, p, false), p, rows_s2_blocks(p));
  return HGR_OK;
}

/* The split form of the strided rows kernels (kernels/conv.cl's
 * hgr_conv2d_s2_split, then hgr_conv2d_rows_6x16_s2s* or hgr_conv2d_rows_6x8x2_s2s*):
 * the first launch copies the input, zero-padded and each row's columns split by
 * parity, into the node's scratch buffer, where every tap of a block is one vector
 * load and no tap needs a mask; the second runs the same blocks (rows_s2_pixels)
 * over it. It takes what is_rows_s2 takes, with scratch of at most
 * SPLIT_MAX_SCRATCH_BYTES; the rule takes it wherever it fits: on PoCL it ran the
 * stride-2 layers of resnet50, inception_v2 and squeezenet 1.3-2x faster than their
 * even/odd loads (device time, bench/notes.md). Otherwise it is a tuning candidate ("rows_6x16_s2s"). */
#define SPLIT_MAX_SCRATCH_BYTES ((int64_t)256 << 20)
#define SPLIT_TAIL 64 /* CONV_SPLIT_TAIL */

/* The scratch copy's padded rows (*hp) and half rows (*wh), and its bytes (0 where
 * it would exceed SPLIT_MAX_SCRATCH_BYTES). */
static int64_t split_scratch_bytes(const conv_t* p, int64_t* hp, int64_t* wh) {
  *hp = p->h + p->padding[0] + p->padding[2];
  *wh = ceil_div(p->w + p->padding[1] + p->padding[3], 2);
  int64_t plane = *hp * 2 * *wh; /* below 2^62: parse_conv bounds the padded extents */
  if (p->n * p->c > (SPLIT_MAX_SCRATCH_BYTES / (int64_t)sizeof(float) - SPLIT_TAIL) / plane) return 0;
  return (p->n * p->c * plane + SPLIT_TAIL) * (int64_t)sizeof(float);
}

/* The first launch of the forms that read a copy of the input (kernel
 * hgr_conv2d_s2_split or hgr_conv2d_pad): the input into the node's scratch (bytes
 * in all), hp padded rows per plane, a work-item each; the meta's two last values
 * hp and the copy's row (CONV_SPLIT_HP and _WH, or CONV_PAD_HP and _WP). */
static void plan_input_copy(hgr__op_ctx_t* ctx, const conv_t* p, const char* kernel, int64_t hp, int64_t row,
                            int64_t bytes) {
  int32_t copy_meta[2] = {(int32_t)hp, (int32_t)row};
  hgr__launch_plan_t* copy = hgr__op_launch(ctx, kernel);
  hgr__launch_input(ctx, copy, 0);
  hgr__launch_scratch(ctx, copy, (uint64_t)bytes);
  hgr__launch_meta_arg(ctx, copy);
  meta_common(ctx, copy, p, NULL);
  hgr__launch_meta(ctx, copy, copy_meta, 2);
  /* a work-item per padded row; work-groups of 8 planes' rows (fewer only where the
   * limits say so, never by the batch: a local size per shape is a compile per shape) */
  int64_t planes = min64(8, min64((int64_t)ctx->limits.max_work_group, (int64_t)ctx->limits.max_work_item[1]));
  size_t copy_global[2] = {(size_t)hp, (size_t)(p->n * p->c)}, copy_local[2] = {1, (size_t)max64(1, planes)};
  hgr__launch_nd(copy, 2, copy_global, copy_local);
}

/* The second launch's arguments, on the copy: the scratch, the weights, the bias,
 * the output and the meta, as plan_input_copy's. */
static void copy_block_args(hgr__op_ctx_t* ctx, hgr__launch_plan_t* l, const conv_t* p, int64_t hp, int64_t row,
                            int64_t bytes) {
  int32_t copy_meta[2] = {(int32_t)hp, (int32_t)row};
  hgr__launch_scratch(ctx, l, (uint64_t)bytes);
  hgr__launch_input(ctx, l, 1);
  hgr__launch_input(ctx, l, p->bias ? 2 : 1);
  hgr__launch_output(ctx, l, 0);
  hgr__launch_meta_arg(ctx, l);
  meta_common(ctx, l, p, NULL);
  hgr__launch_meta(ctx, l, copy_meta, 2);
}

static hgr_status_t plan_rows_s2_split(hgr__op_ctx_t* ctx, const conv_t* p) {
  int64_t hp, wh, bytes = split_scratch_bytes(p, &hp, &wh);
  plan_input_copy(ctx, p, "hgr_conv2d_s2_split", hp, wh, bytes);
  hgr__launch_plan_t* l = rows_s2_launch(ctx, p, true);
  copy_block_args(ctx, l, p, hp, wh, bytes);
  rows_range(ctx, l, p, rows_s2_blocks(p));
  return HGR_OK;
}

/* Whether the rule takes the rows kernels' 8 x 32 blocks (hgr_conv2d_rows_8x32p*,
 * hgr_conv2d_rows_8x*_s2s*): their 16 float16 accumulators, two input vectors and a
 * broadcast weight fit 32 registers of 16 floats (AVX-512), as the GEMM's wide block
 * (ops_linalg.c, wide_fits); elsewhere they stay tuning candidates. Per tap they load
 * 2 input vectors and 8 weights for 16 multiply-adds where the 6 x 16 blocks load 1
 * and 6 for 6. On PoCL 3.1 (skylake-avx512 code, a 2-core AMD EPYC) `hgr tune` ran
 * resnet50's 3x3 layers 14-39 % faster with them (stride 1 and 2; its conv layers
 * -13 %, inception_v2's -14 %); re-tuning resnet50 and squeezenet under this rule
 * changed no layer, and the layers of densenet121 and a YOLOv8n-style detector that
 * another candidate won, it won by 3-13 % (bench/notes.md). */
static bool wide_registers(const hgr__op_ctx_t* ctx) { return ctx->limits.native_float_width >= 16; }

/* The fewest multiply-adds of a stride-1 layer the rule gives the 8 x 32 blocks: their
 * copy of the input is a launch of its own, which small layers do not earn back. On
 * PoCL (`hgr tune`) openWakeWord's speech embedding's 1x3 and 3x1 layers (0.6-4 M
 * multiply-adds, 72-288 taps) ran 0-38 % faster with the 6 x 16 blocks, and a
 * detector's 10 x 10 layers of 80 channels (6 M) 11 %; from 10 M up (inception_v2's
 * 14 x 14 layers, the detector's 20 x 20 and 40 x 40 ones) the 8 x 32 blocks won. */
#define ROWS8_MIN_MACS ((int64_t)8 << 20)
static bool rows8_pays(const conv_t* p) {
  /* each factor below INT32_MAX and the output's elements too (plan_conv2d) */
  double macs = (double)p->n * (double)p->k * (double)p->oh * (double)p->ow * (double)p->c * (double)(p->kh * p->kw);
  return macs >= (double)ROWS8_MIN_MACS;
}
#define ROWS8_BLOCK_K 8
#define ROWS8_BLOCK_PIXELS 32

/* The split form with the 8 x 32 block (kernels/conv.cl's hgr_conv2d_rows_8x32_s2s*,
 * 8x16x2, 8x8x4): R output rows of 32 / R pixels, R the one of 1, 2 and 4 whose
 * blocks leave the fewest lanes unused (the fewest rows on a tie). */
static int64_t rows8_s2_rows(const conv_t* p) {
  int64_t best = 1, best_lanes = INT64_MAX;
  for (int64_t r = 1; r <= 4; r *= 2) {
    int64_t lanes = ceil_div(p->oh, r) * r * ceil_div(p->ow, ROWS8_BLOCK_PIXELS / r) * (ROWS8_BLOCK_PIXELS / r);
    if (lanes < best_lanes) {
      best = r;
      best_lanes = lanes;
    }
  }
  return best;
}

static hgr_status_t plan_rows8_s2_split(hgr__op_ctx_t* ctx, const conv_t* p) {
  static const char* const kernels[3][2] = {{"hgr_conv2d_rows_8x32_s2s", "hgr_conv2d_rows_8x32_s2s_k3"},
                                            {"hgr_conv2d_rows_8x16x2_s2s", "hgr_conv2d_rows_8x16x2_s2s_k3"},
                                            {"hgr_conv2d_rows_8x8x4_s2s", "hgr_conv2d_rows_8x8x4_s2s_k3"}};
  int64_t rows = rows8_s2_rows(p), hp, wh, bytes = split_scratch_bytes(p, &hp, &wh);
  bool k3 = p->kh == 3 && p->kw == 3;
  plan_input_copy(ctx, p, "hgr_conv2d_s2_split", hp, wh, bytes);
  hgr__launch_plan_t* l = hgr__op_launch(ctx, kernels[rows == 1 ? 0 : rows == 2 ? 1 : 2][k3]);
  for (int r = 0; r < 3; ++r) hgr__launch_sibling(ctx, l, kernels[r][k3]);
  copy_block_args(ctx, l, p, hp, wh, bytes);
  rows_range_of(ctx, l, p, ceil_div(p->oh, rows) * ceil_div(p->ow, ROWS8_BLOCK_PIXELS / rows), ROWS8_BLOCK_K);
  return HGR_OK;
}

/* The padded form of the stride-1 rows kernels (kernels/conv.cl's hgr_conv2d_pad,
 * then hgr_conv2d_rows_8x32p[_k3]): the first launch copies the input, zero-padded,
 * into the node's scratch buffer, where every tap of a block of 32 grid pixels is
 * two vector loads without masks; the second keeps 8 output channels x 32 pixels in
 * registers (see wide_registers). It takes what is_rows takes, with scratch of at
 * most SPLIT_MAX_SCRATCH_BYTES. */
#define PAD_TAIL 32 /* CONV_PAD_TAIL */
static int64_t pad_scratch_bytes(const conv_t* p, int64_t* hp, int64_t* wp) {
  *hp = p->h + p->padding[0] + p->padding[2];
  *wp = p->w + p->padding[1] + p->padding[3];
  int64_t plane = *hp * *wp; /* below 2^62: parse_conv bounds the padded extents */
  if (plane < 1 || p->n * p->c > (INT32_MAX - PAD_TAIL - 64) / plane) return 0;
  if (p->n * p->c > (SPLIT_MAX_SCRATCH_BYTES / (int64_t)sizeof(float) - PAD_TAIL) / plane) return 0;
  return (p->n * p->c * plane + PAD_TAIL) * (int64_t)sizeof(float);
}

static hgr_status_t plan_rows_padded(hgr__op_ctx_t* ctx, const conv_t* p) {
  int64_t hp, wp, bytes = pad_scratch_bytes(p, &hp, &wp);
  plan_input_copy(ctx, p, "hgr_conv2d_pad", hp, wp, bytes);
  hgr__launch_plan_t* l =
      hgr__op_launch(ctx, p->kh == 3 && p->kw == 3 ? "hgr_conv2d_rows_8x32p_k3" : "hgr_conv2d_rows_8x32p");
  copy_block_args(ctx, l, p, hp, wp, bytes);
  rows_range_of(ctx, l, p, ceil_div((p->oh - 1) * wp + p->ow, ROWS8_BLOCK_PIXELS), ROWS8_BLOCK_K);
  return HGR_OK;
}

/* Depthwise 3x3 convolutions with a horizontal stride of 1 or 2 and no dilation
 * (shufflenet's, mobilenet's) run hgr_conv2d_dw3x3_* of kernels/conv_depthwise.cl:
 * a work-item per run of output rows of one channel (CONV_DW_ROWS, the last meta
 * value), each row in floatV blocks. On PoCL (issue 16) it ran shufflenet's
 * depthwise layers in 0.16-0.6x the CPU time of hgr_conv2d_depthwise3x3 (a
 * work-item per row, 4 columns at a time, lane-by-lane loads at the row's edges;
 * bench/notes.md). */
static bool is_depthwise3x3(const conv_t* p) {
  return p->groups == p->c && p->kh == 3 && p->kw == 3 && p->dilation[0] == 1 && p->dilation[1] == 1 &&
         (p->strides[1] == 1 || p->strides[1] == 2) && p->n > 0 && p->k > 0;
}

/* The depthwise kernel's work-groups: DW_LOCAL items each, whatever the shape
 * (hgr__launch_1d_groups), and at least DW_MIN_GROUPS of them (one work-group of 64
 * items of 136 left a core idle on PoCL), so a plane's rows are split into chunks
 * until there are DW_MIN_ITEMS items. */
#define DW_LOCAL 16
#define DW_MIN_GROUPS 16
#define DW_MIN_ITEMS (DW_LOCAL * DW_MIN_GROUPS)

static hgr_status_t plan_depthwise3x3(hgr__op_ctx_t* ctx, const conv_t* p) {
  /* floatV blocks: 16 columns for stride-1 rows of at least 16, else 8 (a stride-2
   * block of 8 loads 16 inputs per tap row) */
  int v = p->strides[1] == 1 && p->ow >= 16 ? 16 : 8;
  char kernel[64];
  snprintf(kernel, sizeof(kernel), "hgr_conv2d_dw3x3_s%d_v%d", (int)p->strides[1], v);
  hgr__launch_plan_t* l = conv_launch(ctx, kernel, p, NULL);
  if (l) l->source = "conv_depthwise";
  if (p->strides[1] == 1) hgr__launch_sibling(ctx, l, v == 16 ? "hgr_conv2d_dw3x3_s1_v8" : "hgr_conv2d_dw3x3_s1_v16");
  /* whole planes, unless there are fewer than DW_MIN_ITEMS of them */
  int64_t planes = p->n * p->k;
  int64_t chunks = min64(p->oh, ceil_div(DW_MIN_ITEMS, planes));
  int64_t rows = ceil_div(p->oh, chunks);
  hgr__launch_meta1(ctx, l, (int32_t)rows); /* CONV_DW_ROWS */
  int64_t items = planes * ceil_div(p->oh, rows);
  hgr__launch_1d_groups(ctx, l, (uint64_t)items, DW_LOCAL);
  return HGR_OK;
}

static hgr_status_t plan_conv2d(hgr__op_ctx_t* ctx) {
  conv_t p;
  HGR_RETURN_IF_ERROR(parse_conv(ctx, &p));
  uint64_t outputs = hgr__op_output(ctx, 0)->element_count; /* [n, k, oh, ow] (infer_conv2d) */
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "the output's element count", outputs, INT32_MAX));
  if (p.pool[0]) return plan_conv2d_pool(ctx, &p, outputs);
  if (is_patches(&p)) {
    hgr__gemm_t g = patches_gemm(&p);
    if (hgr__gemm_fits(&ctx->limits, &g) && g.scratch_bytes / sizeof(float) < INT32_MAX)
      return plan_patches(ctx, &p, &g);
  }
  /* stride 2: candidates the strided register-blocked kernel and the tiled one,
   * where the first's rule takes the layer or the tiled kernel would run it anyway
   * (not the implicit GEMM: that has tile candidates of its own) */
  bool tiled_asked = false;
  if (is_rows_s2(&p) && outputs > 0) {
    tile_plan_t s2_tile;
    static const char* const names[] = {"rows_6x16_s2", "tiled", "rows_6x16_s2s", "rows_8x32_s2s"};
    int64_t hp, wh;
    bool split_fits = split_scratch_bytes(&p, &hp, &wh) > 0;
    bool fits[4] = {true, choose_tile(&p, &ctx->limits, &s2_tile), split_fits, split_fits};
    char key[320]; /* room for every value; the tile choice keeps its first 159 characters */
    rows_key(&p, true, key, sizeof(key));
    uint32_t by_limits = !split_fits ? 0 : wide_registers(ctx) ? 3 : 2;
    uint32_t chosen = hgr__op_choose_tile(ctx, key, names, fits, 4, by_limits);
    if (chosen == 0) return plan_rows_s2(ctx, &p);
    if (chosen == 2) return plan_rows_s2_split(ctx, &p);
    if (chosen == 3) return plan_rows8_s2_split(ctx, &p);
    tiled_asked = true;
  }
  if (prefers_implicit_gemm(&p) && !tiled_asked) {
    hgr__gemm_im2col_t im2col;
    hgr__gemm_t g = implicit_gemm(&p, &im2col);
    if (hgr__gemm_fits(&ctx->limits, &g)) return hgr__gemm_plan_im2col(ctx, &g, &im2col);
  }
  if (is_pointwise(&p) && p.c > 0) {
    hgr__gemm_t g = pointwise_gemm(&p);
    /* without local memory the register-blocked or the direct kernel below runs it */
    if (hgr__gemm_fits(&ctx->limits, &g)) return hgr__gemm_plan(ctx, &g);
  }
  if (is_windows(&p)) {
    hgr__gemm_t g = windows_gemm(&p);
    if (hgr__gemm_fits(&ctx->limits, &g)) return hgr__gemm_plan(ctx, &g);
  }
  if (is_depthwise3x3(&p) && outputs > 0) return plan_depthwise3x3(ctx, &p);
  /* other depthwise ones (one input channel per group): a work-item per output
   * row, 4 columns at a time, the 3x3 variant with its weights in registers */
  if (p.groups == p.c && outputs > 0) {
    bool k3x3 = p.kh == 3 && p.kw == 3;
    hgr__launch_plan_t* d = conv_launch(ctx, k3x3 ? "hgr_conv2d_depthwise3x3" : "hgr_conv2d_depthwise", &p, NULL);
    hgr__launch_1d(ctx, d, (uint64_t)(p.n * p.k * p.oh));
    return HGR_OK;
  }
  tile_plan_t tile;
  if (is_rows(&p) && outputs > 0) {
    /* tuning candidates: the register-blocked kernels (the rule's: 8 x 32 on the
     * padded copy where registers hold 16 floats and the layer is large enough, else
     * 6 x 16), or the tiled one */
    static const char* const names[] = {"rows_6x16", "tiled", "rows_8x32p"};
    int64_t hp, wp;
    bool fits[3] = {true, choose_tile(&p, &ctx->limits, &tile), pad_scratch_bytes(&p, &hp, &wp) > 0};
    char key[320]; /* room for every value; the tile choice keeps its first 159 characters */
    rows_key(&p, false, key, sizeof(key));
    uint32_t chosen =
        hgr__op_choose_tile(ctx, key, names, fits, 3, fits[2] && wide_registers(ctx) && rows8_pays(&p) ? 2 : 0);
    if (chosen == 0) return plan_rows(ctx, &p);
    if (chosen == 2) return plan_rows_padded(ctx, &p);
  }
  /* grouped convolutions tile by group, where a group has channels enough to fill
   * a block (depthwise ones run the direct kernel) */
  bool tiled = (p.groups == 1 || p.k / p.groups >= TILE_MIN_GROUP_CHANNELS) && outputs > 0 && p.c > 0 &&
               choose_tile(&p, &ctx->limits, &tile);
  /* what the tiled kernel does not take (narrow groups, tiles that do not fit) runs
   * as the implicit GEMM where that fits, the direct kernel otherwise */
  if (!tiled && is_implicit_gemm(&p) && p.c > 0 && outputs > 0 &&
      p.c / p.groups * p.kh * p.kw <= IMPLICIT_GEMM_MAX_TAPS) {
    hgr__gemm_im2col_t im2col;
    hgr__gemm_t g = implicit_gemm(&p, &im2col);
    if (hgr__gemm_fits(&ctx->limits, &g)) return hgr__gemm_plan_im2col(ctx, &g, &im2col);
  }
  hgr__launch_plan_t* l =
      conv_launch(ctx, tiled ? tile.variant->kernel : "hgr_conv2d_direct", &p, tiled ? &tile : NULL);
  if (!tiled) {
    hgr__launch_1d(ctx, l, outputs);
    return HGR_OK;
  }
  hgr__launch_local(ctx, l, (size_t)tile.xs_floats * sizeof(float));
  hgr__launch_local(ctx, l, (size_t)tile.ws_floats * sizeof(float));
  int64_t tiles_k = ceil_div(p.k / p.groups, tile.variant->ocb * tile.lz);
  size_t local[3] = {(size_t)tile.lx, (size_t)tile.ly, (size_t)tile.lz};
  size_t global[3] = {(size_t)(tile.lx * ceil_div(p.ow, tile.variant->pxb * tile.lx)),
                      (size_t)(tile.ly * ceil_div(p.oh, tile.ly)), (size_t)(tile.lz * tiles_k * p.groups * p.n)};
  hgr__launch_nd(l, 3, global, local);
  return HGR_OK;
}

/* ---- conv2d_transpose ------------------------------------------------------------------ */

static hgr_status_t parse_conv_transpose(const hgr__op_ctx_t* ctx, conv_t* p) {
  static const char* const kernel_layouts[] = {"IOHW", "", NULL};
  HGR_RETURN_IF_ERROR(parse_window_attrs(ctx, kernel_layouts, p));
  int64_t output_padding[2];
  HGR_RETURN_IF_ERROR(hgr__attr_pair(ctx, "output_padding", 0, 0, output_padding));
  HGR_RETURN_IF_ERROR(check_4d(ctx, 0, "data", "NCHW"));
  HGR_RETURN_IF_ERROR(check_4d(ctx, 1, "weight", "IOHW"));
  const hgr__entry_t* x = hgr__op_input(ctx, 0);
  const hgr__entry_t* w = hgr__op_input(ctx, 1);
  p->n = x->shape[0];
  p->c = x->shape[1];
  p->h = x->shape[2];
  p->w = x->shape[3];
  p->kh = w->shape[2];
  p->kw = w->shape[3];
  char xs[160], ws[160];
  if (w->shape[0] != p->c || p->c % p->groups || w->shape[1] > INT32_MAX / p->groups)
    return HGR__OP_ERROR(ctx,
                         "with groups = %lld, data %s and weight %s do not fit: the weight must be [C_in, "
                         "C_out / groups, kh, kw] with C_in divisible by groups",
                         (long long)p->groups, hgr__entry_shape(x, xs, sizeof(xs)),
                         hgr__entry_shape(w, ws, sizeof(ws)));
  p->k = w->shape[1] * p->groups;
  if (p->kh < 1 || p->kw < 1)
    return HGR__OP_ERROR(ctx, "the weight %s has an empty kernel", hgr__entry_shape(w, ws, sizeof(ws)));
  HGR_RETURN_IF_ERROR(check_optional_ints(ctx, "channels", &p->k, 1, "the output channels (weight's dim 1 x groups)"));
  int64_t kernel_size[2] = {p->kh, p->kw};
  HGR_RETURN_IF_ERROR(check_optional_ints(ctx, "kernel_size", kernel_size, 2, "the weight's kernel size"));
  for (int axis = 0; axis < 2; ++axis)
    if (output_padding[axis] >= p->strides[axis] && output_padding[axis] >= p->dilation[axis])
      return HGR__OP_ERROR(ctx, "attr 'output_padding' = \"%s\" has %lld; it must be below the stride (%lld) or "
                           "the dilation (%lld)", hgr__attr_string(ctx, "output_padding", ""),
                           (long long)output_padding[axis], (long long)p->strides[axis], (long long)p->dilation[axis]);
  /* Every term is below INT32_MAX: the product below fits int64. */
  int64_t out[2];
  for (int axis = 0; axis < 2; ++axis) {
    int64_t in = axis ? p->w : p->h, kernel = axis ? p->kw : p->kh;
    out[axis] = (in - 1) * p->strides[axis] - p->padding[axis] - p->padding[axis + 2] +
                p->dilation[axis] * (kernel - 1) + output_padding[axis] + 1;
  }
  p->oh = out[0];
  p->ow = out[1];
  if (p->h < 1 || p->w < 1 || p->oh < 1 || p->ow < 1)
    return HGR__OP_ERROR(ctx, "data %s with weight %s, strides [%lld, %lld] and padding [%lld, %lld, %lld, %lld] "
                         "leaves an output of %lld x %lld; it must be at least 1 x 1",
                         hgr__entry_shape(x, xs, sizeof(xs)), hgr__entry_shape(w, ws, sizeof(ws)),
                         (long long)p->strides[0], (long long)p->strides[1], (long long)p->padding[0],
                         (long long)p->padding[1], (long long)p->padding[2], (long long)p->padding[3],
                         (long long)p->oh, (long long)p->ow);
  if (p->oh > INT32_MAX / 2 || p->ow > INT32_MAX / 2 || p->h > INT32_MAX / 2 || p->w > INT32_MAX / 2)
    return HGR__OP_ERROR(ctx, "the output %lld x %lld is too large for the kernel's 32-bit indices",
                         (long long)p->oh, (long long)p->ow);
  return check_bias_and_counts(ctx, p, x, w);
}

static hgr_status_t infer_conv2d_transpose(hgr__op_ctx_t* ctx, hgr__entry_t* outputs) {
  conv_t p;
  HGR_RETURN_IF_ERROR(parse_conv_transpose(ctx, &p));
  int64_t yshape[4] = {p.n, p.k, p.oh, p.ow};
  hgr__op_set_output(&outputs[0], HGR__DTYPE_F32, yshape, 4);
  return HGR_OK;
}

/* A transposed convolution of one group as a GEMM and a gather, through the node's
 * scratch: cols[n] [K * KH * KW, H * W] = wᵀ x x[n] [C, H * W] (the weight [C, K *
 * KH * KW] read transposed), every input pixel's contribution to every tap, at the
 * GEMM's speed; then kernels/conv.cl's hgr_conv2d_transpose_gather sums the taps
 * that land on each output (one where the kernel is the stride, as a detector's 2 x 2
 * upsampling) with the bias and the epilogue. hgr_conv2d_transpose_direct, which
 * walks C x KH x KW per output, runs the rest (groups, or cols past the bound). */
static bool is_transpose_gemm(const conv_t* p) {
  if (p->groups != 1 || p->c < 1) return false;
  /* cols' floats, each factor at least 1, within the scratch's bound (below INT32_MAX) */
  const int64_t factors[6] = {p->n, p->k, p->kh, p->kw, p->h, p->w};
  int64_t cols = 1;
  for (int f = 0; f < 6; ++f) {
    if (factors[f] < 1 || cols > SCRATCH_MAX_BYTES / (int64_t)sizeof(float) / factors[f]) return false;
    cols *= factors[f];
  }
  return true;
}

static hgr__gemm_t transpose_gemm(const conv_t* p) {
  int64_t taps = p->k * p->kh * p->kw, pixels = p->h * p->w;
  return (hgr__gemm_t){.batch = p->n, .m = taps, .n = pixels, .k = p->c,
                       .a_batch = 0, .a_row = 1, .a_depth = taps,
                       .b_batch = p->c * pixels, .b_depth = pixels, .b_col = 1,
                       .swap_inputs = true, .c_scratch = true,
                       .scratch_bytes = (uint64_t)(p->n * taps * pixels) * sizeof(float)};
}

static hgr_status_t plan_conv2d_transpose(hgr__op_ctx_t* ctx) {
  conv_t p;
  HGR_RETURN_IF_ERROR(parse_conv_transpose(ctx, &p));
  uint64_t outputs = hgr__op_output(ctx, 0)->element_count;
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "the output's element count", outputs, INT32_MAX));
  if (!is_transpose_gemm(&p)) {
    hgr__launch_1d(ctx, conv_launch(ctx, "hgr_conv2d_transpose_direct", &p, NULL), outputs);
    return HGR_OK;
  }
  hgr__gemm_t g = transpose_gemm(&p);
  HGR_RETURN_IF_ERROR(hgr__gemm_plan(ctx, &g));
  hgr__launch_plan_t* l = hgr__op_launch(ctx, "hgr_conv2d_transpose_gather");
  hgr__launch_scratch(ctx, l, g.scratch_bytes);
  hgr__launch_input(ctx, l, p.bias ? 2 : 1); /* unread without a bias */
  hgr__launch_output(ctx, l, 0);
  hgr__launch_meta_arg(ctx, l);
  meta_common(ctx, l, &p, NULL);
  hgr__launch_1d(ctx, l, (uint64_t)(p.n * p.k * p.oh)); /* a work-item per output row */
  return HGR_OK;
}

#define CONV_ATTRS                                                                                         \
  "strides padding dilation groups channels kernel_size data_layout kernel_layout out_layout out_dtype " \
  "activation alpha a_min a_max"

const hgr__op_t hgr__ops_conv[] = {
    {"conv2d", "conv", 2, 3, 1, 1, CONV_ATTRS " pool_size", plan_conv2d, 0, HGR__IN_PLACE_REFUSED, infer_conv2d},
    {"conv2d_transpose", "conv", 2, 3, 1, 1, CONV_ATTRS " output_padding", plan_conv2d_transpose, 0,
     HGR__IN_PLACE_REFUSED, infer_conv2d_transpose},
    {.name = NULL},
};
