/* Dense, matmul and batch_matmul (kernels/linalg.cl): all three are one strided
 * GEMM, C[p] = A[p] x B[p] (+ bias), whose strides express the transposes and the
 * broadcast batch, planned with a tile variant that fits the device.
 *
 *   dense         data [d1, ..., dn, in] (n >= 0), weight [units, in], and hgr's fused
 *                 bias [units] as an optional third input (Relay's nn.dense has no
 *                 bias; TVM fuses the bias_add that follows it into the same node);
 *                 output [d1, ..., dn, units]. Attrs units, out_dtype.
 *   matmul        tensor_a [d1, ..., dn, K] (n >= 0), or [K, M] with transpose_a (2-D
 *                 only), tensor_b [K, N], or [N, K] with transpose_b, and hgr's fused
 *                 bias [N] as an optional third input; output [d1, ..., dn, N] or
 *                 [M, N]. Attrs units, out_dtype, transpose_a, transpose_b (both
 *                 default false).
 *   batch_matmul  x [B, M, K] ([B, K, M] with transpose_a), y [B, N, K] with
 *                 transpose_b (Relay's default, true) or [B, K, N]; either batch may
 *                 be 1 and broadcasts; hgr's fused bias [N] as an optional third
 *                 input; output [max batch, M, N]. Attrs out_dtype, transpose_a
 *                 (false), transpose_b (true).
 * units may be absent or "None"; when given it must equal the weight's. out_dtype
 * may be "" or "float32" (everything is float32). The bias is added to every row
 * (per column of C). All three take hgr's fused activation after the bias
 * (hgr__gemm_parse_activation: attr "activation", relu, leaky_relu, clip,
 * leaky_relu_clip, sigmoid, silu, hard_swish, gelu, gelu_tanh, with alpha, a_min,
 * a_max), which the GEMM epilogue pass
 * (runtime/passes/fuse_gemm_epilogue.c) writes together with the bias.
 *
 * hgr__gemm_plan (ops_gemm.h) plans the same GEMM for other families' ops: conv2d
 * runs its 1x1 convolutions through it, with a bias per row and its activation, and
 * others through hgr__gemm_plan_im2col, the same tiles reading B as im2col(x). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ops_gemm.h"

/* One kernel of kernels/linalg.cl: a work-group of tx x ty work-items computing a
 * (ty * rm) x (tx * rn) block of C, bk deep per step; bk 1 is a direct variant
 * (hgr_gemm_*_k1: no local memory, each work-item rm x rn of C; with pack,
 * hgr_gemm_*_k1_pack, the group's strip of B first copied into k * rn floats of
 * local memory), which only a GEMM whose B rows and A rows are contiguous (b_col 1,
 * no wrap, a_depth 1) with n >= rn takes, never the implicit GEMM; with dot,
 * hgr_gemm_*_k1_dot, dot products along K, which only a GEMM whose B columns and A
 * rows are contiguous (b_depth 1, no wrap, a_depth 1: dense's weights [units, in])
 * takes, on PoCL's CPU drivers (see pick_variant). The plan takes
 * the variant that fits the device and costs least (see pick_variant). relative_speed is each variant's GFLOP/s on
 * 512 x 512 x 512 relative to the first tiled one's, measured on PoCL 3.1 (pthread,
 * this project's 2-vCPU Zen 5 VM, AVX2 code) in CPU time, which the other load on
 * the VM disturbs far less than wall time: 80 (direct 6 x 16), 52, 46, 44, 29, 23,
 * 19 and 10 GFLOP per CPU-second. Wider register blocks (8 x 16) spill there (AVX2;
 * with AVX-512's 32 registers 8 x 32 runs, see below), and tiles
 * beyond 128 x 128 or deeper than 32 gained nothing. The direct variant's 6 x 16
 * block beat 4 x 16 (65), 6 x 8 (49) and 8 x 8 (60); its work-group shape (1-8 x
 * 8-16 items) made no difference beyond the noise. */
typedef struct gemm_variant_t {
  int tx, ty, rm, rn, bk;
  double relative_speed;
  bool pack; /* a direct variant that copies B's strip into local memory first */
  bool dot;  /* a direct variant for B stored transposed: dot products along K, 8 at a time */
  bool wide; /* a direct variant two float16 wide: only on devices with 16-float registers */
} gemm_variant_t;

/* The variants are the GEMM's tile candidates (hgr__op_choose_tile): pick_variant
 * is the rule over the limits, a tuning record may name another. */
static const gemm_variant_t gemm_variants[] = {
    {1, 8, 6, 16, 1, 1.55, false, false, false}, /* direct: 6 x 16 per work-item, no local memory */
    /* direct, 8 x 32 per work-item (two float16 per row, 16 accumulators): only where
     * the device's registers hold 16 floats (see wide_fits). Issue 37 §5: PoCL 3.1
     * (pthread, skylake-avx512 code) on this project's 2-core Xeon (AVX-512), matmul's B
     * [K, N], hgr_bench_gemm -t (CPU time, load 10-11), against the 6 x 16 block:
     * 128 x 384 x 384 78 against 60 GFLOP per CPU-second, 128 x 1536 x 384 69 / 49,
     * 128 x 384 x 1536 77 / 56, 512 x 384 x 384 115 / 84, 512^3 110 / 81, 1024 x 1536
     * x 384 74 / 55, 32 x 384 x 384 70 / 47; 16 x 1536 x 384 38 / 44 (2 of 8 rows
     * used). 12 x 32 ran within 5 % of 8 x 32 (fewer rows per group to share), 8 x 16
     * and 12 x 16 at the 6 x 16's speed (one B vector per row of broadcasts), and
     * packing B's strip (1x16_6x16_k1_pack) at 0.75-1.15x the 6 x 16 on these aligned
     * rows. 1.35x the 6 x 16 block's speed in the rule. In sessions (bench/gemm_transformer.py:
     * hgr.InferenceSession with the 6 x 16 tile forced by a tuning record, with this rule,
     * and ONNX Runtime with 2 threads, in turn, medians, load 8.4), M x K x N 6 x 16 -> 8 x 32
     * (ORT): 128x384x384 0.56 -> 0.39 ms (0.31), 128x1536x384 3.8 -> 2.4 (1.2), 512x384x384
     * 0.99 -> 0.75 (0.54), 1024x384x1536 28 -> 20 (16), 16x384x1536 0.32 -> 0.25 (0.14);
     * bench/notes.md, "GEMM on transformer shapes" */
    {1, 8, 8, 32, 1, 2.1, false, false, true},
    /* direct, B's strip packed: only where B's rows are not 64-byte aligned (see
     * rows_misaligned), where it measured 1.05-1.4x the direct 6 x 16 one (its speed
     * here only has to rank it between that and the wide one) */
    {1, 16, 6, 16, 1, 1.75, true, false, false},
    /* direct, dot products: B's columns contiguous (dense), which no other direct
     * variant takes; its speed is against the first tiled variant on the same layout
     * (dense 512 x 512 x 512 on PoCL, CPU time: 93-97 against 66-67 GFLOP/s). Its
     * 4 x 4 block of float8 accumulators ran 64 x 2048 x 1024 within 3 % of 5 x 4,
     * 6 x 4 and float16 ones, faster than those at K 64-256 (float16 gathers any
     * depth below 16), and 1.3-1.5x narrower blocks (2 x 4, 4 x 2, 2 x 8) */
    {1, 16, 4, 4, 1, 1.4, false, true, false},
    {8, 32, 4, 16, 32, 1.0, false, false, false},  /* 128 x 128 tiles, 64 KiB of local memory */
    {8, 16, 4, 16, 32, 0.88, false, false, false}, /* 64 x 128, 48 KiB */
    {4, 16, 4, 16, 32, 0.84, false, false, false}, /* 64 x 64, 32 KiB */
    {4, 4, 8, 8, 16, 0.55, false, false, false},   /* 32 x 32, 8 KiB */
    {2, 2, 8, 8, 16, 0.44, false, false, false},   /* 16 x 16, 4 KiB */
    {1, 1, 8, 8, 16, 0.36, false, false, false},   /* 8 x 8, one work-item, 2 KiB */
    {1, 1, 4, 4, 8, 0.19, false, false, false},    /* 4 x 4, one work-item, 512 bytes */
};
#define GEMM_VARIANT_COUNT (sizeof(gemm_variants) / sizeof(gemm_variants[0]))

static bool variant_is_direct(const gemm_variant_t* v) { return v->bk == 1; }

/* The local memory v takes for a GEMM of depth k. */
static uint64_t variant_local_bytes(const gemm_variant_t* v, int64_t k) {
  if (v->pack) return (uint64_t)(k > 1 ? k : 1) * (uint64_t)v->rn * sizeof(float);
  if (variant_is_direct(v)) return 0;
  return 2u * (uint64_t)(v->ty * v->rm + v->tx * v->rn) * (uint64_t)v->bk * sizeof(float);
}

/* The candidates' names, in gemm_variants' order: the kernel's name without its
 * "hgr_gemm_" prefix. */
static const char* const gemm_variant_names[] = {
    "1x8_6x16_k1", "1x8_8x32_k1", "1x16_6x16_k1_pack", "1x16_4x4_k1_dot", "8x32_4x16_k32", "8x16_4x16_k32", "4x16_4x16_k32", "4x4_8x8_k16", "2x2_8x8_k16", "1x1_8x8_k16", "1x1_4x4_k8",
};
_Static_assert(sizeof(gemm_variant_names) / sizeof(gemm_variant_names[0]) == GEMM_VARIANT_COUNT,
               "a name per GEMM variant");

typedef hgr__gemm_t gemm_t;

static bool variant_fits(const hgr__limits_t* limits, const gemm_variant_t* v, const gemm_t* g) {
  return (size_t)(v->tx * v->ty) <= limits->max_work_group && (size_t)v->tx <= limits->max_work_item[0] &&
         (size_t)v->ty <= limits->max_work_item[1] && variant_local_bytes(v, g->k) <= limits->local_mem_bytes;
}

static uint64_t ceil_to(uint64_t value, uint64_t step) { return (value + step - 1) / step * step; }

/* Whether the direct variant v can run g at speed: its vector loads need A's rows
 * contiguous (or A stored transposed, a_row 1, and small enough to stay in cache
 * while its columns are read: a transposed convolution's weights, [C, K * KH * KW]),
 * and B's rows with at least one whole strip of columns, or with dot, B's columns
 * (the kernels compute anything else too, but through gathers). A detector's 2 x 2
 * upsampling's GEMM (96 x 25600 x 24, A 9 KiB) ran its direct variant in 2-4 ms of
 * device time where the tiled one took tens (PoCL, bench/notes.md). */
#define DIRECT_MAX_COLUMNS_A ((int64_t)256 << 10)
static bool direct_fits(const gemm_variant_t* v, const gemm_t* g, bool im2col) {
  bool a_columns = g->a_row == 1 && g->m * g->k <= DIRECT_MAX_COLUMNS_A / (int64_t)sizeof(float);
  if (im2col || (g->a_depth != 1 && !a_columns) || (a_columns && g->a_depth != 1 && v->dot)) return false;
  if (g->b_wrap != 0 && g->b_wrap < g->n) return hgr__gemm_panels(g) && !v->dot && !v->pack && g->b_wrap % v->rn == 0;
  return v->dot ? g->b_depth == 1 : g->b_col == 1 && g->n >= v->rn;
}

bool hgr__gemm_panels(const gemm_t* g) {
  return g->b_col == 1 && g->b_wrap > 0 && g->b_wrap < g->n && g->b_wrap % 4 == 0 && g->b_depth % 16 == 0 &&
         g->b_wrap_stride % 16 == 0;
}

/* Whether the direct variant's vloads of B's rows (16 floats) straddle cache lines:
 * rows not a multiple of 64 bytes apart, or a last strip read shifted left (n not a
 * multiple of 16), as a 1x1 convolution's on 14 x 14 or 7 x 7 pixels. On PoCL (CPU
 * time, this project's AVX2 machine) the direct variant ran n = 49 and 196 at
 * 0.5 and 0.8x the speed per FLOP of n = 48 and 192 (and at 0.65x with 48 columns
 * in rows 49 or 52 floats apart, against 64); the packed variant copies the strip
 * once per group into aligned local memory and ran resnet50's 14 x 14 and 7 x 7
 * GEMMs 1.05-1.4x faster than the direct one (bench/notes.md). On aligned rows
 * (28 x 28, 56 x 56) the copy cost 0-10 %: the rule keeps the direct variant there.
 * The wide direct variant (8 x 32, AVX-512) beats the packed one on misaligned rows
 * too: `hgr tune` of resnet50 on PoCL 3.1 (skylake-avx512 code, AMD EPYC) ran its
 * 14 x 14 and 7 x 7 1x1 convolutions 18-35 % faster with it, and squeezenet's,
 * densenet121's and inception_v2's misaligned ones fastest with it too; the rule
 * ranks it first wherever it fits. */
static bool rows_misaligned(const gemm_t* g) {
  return !hgr__gemm_panels(g) && (g->b_depth % 16 != 0 || g->n % 16 != 0);
}

/* Whether the rule may take the wide direct variant v on the device: its 16 float16
 * accumulators, two B vectors and a broadcast fit 32 registers of 16 floats
 * (AVX-512); with 8-float registers (AVX2: 16 of them) the block would spill, as the
 * 8 x 16 one did there (see gemm_variants). Every other variant qualifies. */
static bool wide_fits(const hgr__limits_t* limits, const gemm_variant_t* v) {
  return !v->wide || limits->native_float_width >= 16;
}

/* Whether v's kernel comes in two orders of its work-groups (kernels/linalg.cl's
 * hgr_gemm_*_k1 and *_k1_rows): the plain direct variants. */
static bool variant_has_orders(const gemm_variant_t* v) { return variant_is_direct(v) && !v->pack && !v->dot; }

/* Whether the GEMM runs the rows-first kernel (*_k1_rows: consecutive work-groups
 * walk down one strip of B's columns, so each strip of B is read once and A again
 * for every strip) rather than the columns-first one (a band of rows walks across B:
 * B read once per band of rows, A once). PoCL runs work-groups in order of their
 * first dimension, so the order decides which operand streams from memory. Rows
 * first where B is the larger (n > m, every matrix of a batch alike) and A at most
 * ROWS_FIRST_MAX_A bytes, so that it stays in a core's second-level cache while B
 * streams by. On PoCL (2-core Xeon, 2 MiB of L2 each) a ViT-S/16's 73 GEMMs of 197
 * rows (weights 85 MB, read from memory every run) took 0.5-0.65x the device time
 * rows first (hgr run --profile, in turns with the columns-first build, load 1.5:
 * 82 against 161 ms, 59 against 91). */
#define ROWS_FIRST_MAX_A ((int64_t)2 << 20)
static bool rows_first(const gemm_t* g) {
  return g->n > g->m && g->m * g->k <= ROWS_FIRST_MAX_A / (int64_t)sizeof(float);
}

/* The kernels the GEMM's plan picks at other sizes (m and n follow the inputs'
 * shapes, k mostly the weights): every tile that fits the limits at depth k (the
 * direct ones where the layout takes them at some n, in both orders), and the GEMV
 * where a row of A would take it. */
static void add_siblings(hgr__op_ctx_t* ctx, hgr__launch_plan_t* l, const gemm_t* g, bool im2col) {
  gemm_t wide = *g;
  wide.n = INT64_MAX; /* direct_fits at some n */
  for (size_t i = 0; i < GEMM_VARIANT_COUNT; ++i) {
    const gemm_variant_t* v = &gemm_variants[i];
    if (!variant_fits(&ctx->limits, v, g) || !wide_fits(&ctx->limits, v) ||
        (variant_is_direct(v) && !direct_fits(v, &wide, im2col)))
      continue;
    char kernel[64];
    snprintf(kernel, sizeof(kernel), "hgr_%sgemm_%s", im2col ? "conv_" : "", gemm_variant_names[i]);
    hgr__launch_sibling(ctx, l, kernel);
    if (!variant_has_orders(v)) continue;
    snprintf(kernel, sizeof(kernel), "hgr_gemm_%s_rows", gemm_variant_names[i]);
    hgr__launch_sibling(ctx, l, kernel);
  }
  if (!im2col && g->b_depth == 1 && (g->bias == HGR__GEMM_BIAS_NONE || g->bias == HGR__GEMM_BIAS_COLUMN) &&
      (g->b_wrap == 0 || g->b_wrap >= g->n))
    hgr__launch_sibling(ctx, l, "hgr_gemv_t4");
}

/* The variant that fits the limits and has the least estimated time: the work of
 * its padded tiles over its relative speed (the direct variants pad each work-item's
 * block only: their items past m return at once; the dot variant pads k to its 8).
 * For large matrices that is the largest that fits; for small ones a smaller tile
 * wastes less on padding. NULL when none fits (a device with less than 512 bytes of
 * local memory and a GEMM the direct variant does not take).
 *
 * The dot variant only where dot allows it: devices that run a group's work-items
 * as a loop (hgr__op_loops_work_items, PoCL's CPU drivers), keeping each one's 16
 * float8 accumulators in registers. There (this project's 2-vCPU AMD EPYC VM, PoCL's
 * skylake-avx512 code, CPU time, bench/gemm_dot.sh) it ran every dense shape
 * measured at 1.05-2.9x the best tiled variant (64 x 2048 x 1024: 88 against 53
 * GFLOP per CPU-second, 1.35-1.45 ms against 2.4-2.5 ms; 64 x 37 x 512: 2.1x; 1024 x
 * 256 x 64: 1.05x). rusticl's llvmpipe, also a CPU, runs work-items SIMT-wise: there
 * it ran 64 x 2048 x 1024 and 512 x 512 x 512 at 0.6-0.7x the rule's tiled variant
 * (560 against 393 ms), narrow ones (64 x 37 x 512, 8 x 2048 x 1024) at 2-2.5x; GPUs
 * are unmeasured. So elsewhere the rule keeps the tiled variants (a tuning record
 * may still name this one). */
static const gemm_variant_t* pick_variant(const hgr__limits_t* limits, const gemm_t* g, bool im2col, bool dot) {
  const gemm_variant_t* best = NULL;
  double best_cost = 0;
  for (size_t i = 0; i < GEMM_VARIANT_COUNT; ++i) {
    const gemm_variant_t* v = &gemm_variants[i];
    bool direct = variant_is_direct(v);
    if (!variant_fits(limits, v, g) || (direct && !direct_fits(v, g, im2col)) || (v->pack && !rows_misaligned(g)) ||
        (v->dot && !dot) || !wide_fits(limits, v))
      continue;
    double work = (double)ceil_to((uint64_t)g->m, (uint64_t)(direct ? v->rm : v->ty * v->rm)) *
                  (double)ceil_to((uint64_t)g->n, (uint64_t)(direct ? v->rn : v->tx * v->rn)) *
                  (double)ceil_to((uint64_t)g->k, (uint64_t)(v->dot ? 8 : v->bk));
    double cost = work / v->relative_speed;
    if (!best || cost < best_cost) {
      best = v;
      best_cost = cost;
    }
  }
  return best;
}

/* Tiled variants only (as for the implicit GEMM): the direct one needs no local
 * memory, but it takes only some GEMMs, which the callers do not say. */
bool hgr__gemm_fits(const hgr__limits_t* limits, const gemm_t* g) {
  return pick_variant(limits, g, true, false) != NULL;
}

/* Every input is float32 with an element count the kernels can index. */
static hgr_status_t check_inputs(const hgr__op_ctx_t* ctx) {
  for (uint32_t i = 0; i < hgr__op_input_count(ctx); ++i) {
    HGR_RETURN_IF_ERROR(hgr__op_check_dtype(ctx, (int)i, -1, false));
    char what[64];
    snprintf(what, sizeof(what), "input %u's element count", i);
    HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, what, hgr__op_input(ctx, i)->element_count, INT32_MAX));
  }
  return HGR_OK;
}

/* The im2col table of hgr_conv_gemm_* (kernels/linalg.cl), its last argument: the
 * geometry (in_h, in_w, out_w, sh, sw, pt, pl, 0), then per tap l = (ci * kh + ky) *
 * kw + kx its channel's offset (ci * in_h * in_w) and its row and column offsets
 * (ky * dh, kx * dw), so the kernel divides nothing per tap. The caller has checked that these fit an int. */
static void append_im2col(hgr__op_ctx_t* ctx, hgr__launch_plan_t* l, const gemm_t* g,
                          const hgr__gemm_im2col_t* conv) {
  hgr__launch_meta_arg(ctx, l);
  int32_t geometry[8] = {(int32_t)conv->in_h, (int32_t)conv->in_w, (int32_t)conv->out_w, (int32_t)conv->sh,
                         (int32_t)conv->sw,   (int32_t)conv->pt,   (int32_t)conv->pl,    0};
  hgr__launch_meta(ctx, l, geometry, 8);
  int64_t taps = conv->kh * conv->kw;
  for (int64_t t = 0; t < g->k; ++t) {
    int64_t ci = t / taps, ky = t % taps / conv->kw, kx = t % conv->kw;
    int32_t entry[3] = {(int32_t)(ci * conv->in_h * conv->in_w), (int32_t)(ky * conv->dh), (int32_t)(kx * conv->dw)};
    hgr__launch_meta(ctx, l, entry, 3);
  }
}

/* The GEMM of an op whose inputs, attrs and output its *_gemm function checked;
 * with conv, conv2d's implicit one. */
static hgr_status_t plan_gemm(hgr__op_ctx_t* ctx, const gemm_t* g, const hgr__gemm_im2col_t* conv) {
  HGR_RETURN_IF_ERROR(
      hgr__op_check_range(ctx, "the output's element count", hgr__op_output(ctx, 0)->element_count, INT32_MAX));
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "the row count", (uint64_t)g->m, INT32_MAX));
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "the reduced dimension", (uint64_t)g->k, INT32_MAX));
  const gemm_variant_t* v = pick_variant(&ctx->limits, g, conv != NULL, hgr__op_loops_work_items(ctx));
  if (!v)
    return HGR__OP_ERROR(ctx,
                         "no GEMM tile fits the device (work-groups of %zu, %zu x %zu items, %llu bytes of local "
                         "memory; the smallest tile needs 1 item and %llu bytes)",
                         ctx->limits.max_work_group, ctx->limits.max_work_item[0], ctx->limits.max_work_item[1],
                         (unsigned long long)ctx->limits.local_mem_bytes,
                         (unsigned long long)variant_local_bytes(&gemm_variants[GEMM_VARIANT_COUNT - 1], g->k));
  /* An empty output computes nothing: sizes of 0 make every work-item skip its
   * reads and writes (the NDRange still has one group). */
  bool empty = g->batch == 0 || g->m == 0 || g->n == 0;
  /* one row of A times B's contiguous rows (dense on one row): a matrix-vector
   * product, hgr_gemv_t4 (no local memory) */
  bool gemv = !conv && g->m == 1 && g->b_depth == 1 && g->segments <= 1 && (g->bias == HGR__GEMM_BIAS_NONE || g->bias == HGR__GEMM_BIAS_COLUMN) &&
              (g->b_wrap == 0 || g->b_wrap >= g->n);
  if (!gemv) {
    /* The layer's key in the tuning file: what the tiles' speed depends on (the
     * sizes and the strides, which say how A and B are laid out), not the bias,
     * the activation or which input is A; conv2d's implicit GEMM has keys of its own
     * (conv_gemm:...), since its B tile is gathered through the im2col table. */
    char key[160];
    snprintf(key, sizeof(key), "%s:%lldx%lldx%lldx%lld:a%lld,%lld,%lld:b%lld,%lld,%lld:w%lld,%lld",
             conv ? "conv_gemm" : "gemm", (long long)g->batch, (long long)g->m, (long long)g->n, (long long)g->k,
             (long long)g->a_batch, (long long)g->a_row, (long long)g->a_depth, (long long)g->b_batch,
             (long long)g->b_depth,
             (long long)g->b_col, (long long)(g->b_wrap > 0 && g->b_wrap < g->n ? g->b_wrap : 0),
             (long long)(g->b_wrap > 0 && g->b_wrap < g->n ? g->b_wrap_stride : 0));
    bool fits[GEMM_VARIANT_COUNT];
    /* the direct variants only where they run at speed (they have no implicit-GEMM
     * kernel); the dot one on every device, for `hgr tune` to measure */
    for (size_t i = 0; i < GEMM_VARIANT_COUNT; ++i)
      fits[i] = variant_fits(&ctx->limits, &gemm_variants[i], g) &&
                (!variant_is_direct(&gemm_variants[i]) || direct_fits(&gemm_variants[i], g, conv != NULL));
    v = &gemm_variants[hgr__op_choose_tile(ctx, key, gemm_variant_names, fits, (uint32_t)GEMM_VARIANT_COUNT,
                                           (uint32_t)(v - gemm_variants))];
  }
  char kernel[64];
  bool by_rows = !gemv && variant_has_orders(v) && rows_first(g) && (size_t)v->ty <= ctx->limits.max_work_item[0] &&
                 (size_t)v->tx <= ctx->limits.max_work_item[1];
  if (gemv) snprintf(kernel, sizeof(kernel), "hgr_gemv_t4");
  else
    snprintf(kernel, sizeof(kernel), "hgr_%sgemm_%s%s", conv ? "conv_" : "", gemm_variant_names[v - gemm_variants],
             by_rows ? "_rows" : "");
  hgr__launch_plan_t* l = hgr__op_launch(ctx, kernel);
  l->source = "linalg"; /* the op may be another family's */
  add_siblings(ctx, l, g, conv != NULL);
  if (g->a_scratch) hgr__launch_scratch(ctx, l, g->scratch_bytes);
  else hgr__launch_input(ctx, l, g->swap_inputs ? 1 : 0);
  if (g->b_scratch) hgr__launch_scratch(ctx, l, g->scratch_bytes);
  else hgr__launch_input(ctx, l, g->a_scratch ? g->b_input : g->swap_inputs ? 0 : 1);
  hgr__launch_input(ctx, l, g->bias != HGR__GEMM_BIAS_NONE ? 2 : 0); /* unread without a bias */
  if (g->c_scratch) hgr__launch_scratch(ctx, l, g->scratch_bytes);
  else hgr__launch_output(ctx, l, 0);
  hgr__launch_int(ctx, l, empty ? 0 : (int32_t)g->m);
  hgr__launch_int(ctx, l, empty ? 0 : (int32_t)g->n);
  hgr__launch_int(ctx, l, empty ? 0 : (int32_t)g->k);
  hgr__launch_int(ctx, l, (int32_t)g->a_batch);
  hgr__launch_int(ctx, l, (int32_t)g->a_row);
  hgr__launch_int(ctx, l, (int32_t)g->a_depth);
  hgr__launch_int(ctx, l, (int32_t)g->b_batch);
  hgr__launch_int(ctx, l, (int32_t)g->b_depth);
  hgr__launch_int(ctx, l, (int32_t)g->b_col);
  hgr__launch_int(ctx, l, (int32_t)g->bias);
  hgr__launch_int(ctx, l, (int32_t)g->act);
  hgr__launch_float(ctx, l, g->alpha);
  hgr__launch_float(ctx, l, g->a_min);
  hgr__launch_float(ctx, l, g->a_max);
  /* a wrap of at least n is no wrap */
  hgr__launch_int(ctx, l, g->b_wrap > 0 && g->b_wrap < g->n ? (int32_t)g->b_wrap : (int32_t)(g->n > 0 ? g->n : 1));
  hgr__launch_int(ctx, l, g->b_wrap > 0 && g->b_wrap < g->n ? (int32_t)g->b_wrap_stride : 0);
  hgr__out_layout_args(ctx, l, &g->out);
  /* HGR_GEMM_SEG_PARAMS: the segments' outputs (C's buffer again where there are none) */
  for (uint32_t s = 1; s < HGR__OUT_LAYOUT_OUTPUTS; ++s) {
    if (s < g->segments) hgr__launch_output(ctx, l, s);
    else if (g->c_scratch) hgr__launch_scratch(ctx, l, g->scratch_bytes);
    else hgr__launch_output(ctx, l, 0);
  }
  hgr__launch_int(ctx, l, g->segments > 1 ? (int32_t)(g->n / g->segments) : 0);
  for (uint32_t s = 1; s < HGR__OUT_LAYOUT_OUTPUTS; ++s)
    for (int a = 0; a < 4; ++a)
      hgr__launch_int(ctx, l, s < g->segments && g->segment_out[s - 1].mapped ? g->segment_out[s - 1].strides[a] : 0);
  if (conv) append_im2col(ctx, l, g, conv);
  if (!gemv && v->pack) hgr__launch_local(ctx, l, (size_t)variant_local_bytes(v, g->k));
  size_t global[3] = {(size_t)((g->n + v->tx * v->rn - 1) / (v->tx * v->rn)) * (size_t)v->tx,
                      (size_t)((g->m + v->ty * v->rm - 1) / (v->ty * v->rm)) * (size_t)v->ty,
                      empty ? 1 : (size_t)g->batch};
  size_t local[3] = {(size_t)v->tx, (size_t)v->ty, 1};
  if (by_rows) { /* the rows' blocks along the first dimension */
    size_t columns = global[0];
    global[0] = global[1];
    global[1] = columns;
    local[0] = (size_t)v->ty;
    local[1] = (size_t)v->tx;
  }
  if (gemv) {
    global[0] = (size_t)((g->n + 3) / 4);
    if (global[0] == 0) global[0] = 1;
    global[1] = 1;
    local[0] = local[1] = 1;
  }
  hgr__launch_nd(l, 3, global, local);
  return HGR_OK;
}

hgr_status_t hgr__gemm_plan(hgr__op_ctx_t* ctx, const gemm_t* g) { return plan_gemm(ctx, g, NULL); }

hgr_status_t hgr__gemm_plan_by_rule(hgr__op_ctx_t* ctx, const gemm_t* g) {
  hgr_tile_choice_t op_choice = ctx->tile;
  const hgr__tuning_t* tuning = ctx->tuning;
  ctx->tuning = NULL;
  hgr_status_t status = plan_gemm(ctx, g, NULL);
  ctx->tuning = tuning;
  ctx->tile = op_choice;
  return status;
}

hgr_status_t hgr__gemm_plan_im2col(hgr__op_ctx_t* ctx, const gemm_t* g, const hgr__gemm_im2col_t* conv) {
  return plan_gemm(ctx, g, conv);
}

/* ---- attrs and shapes ---------------------------------------------------------------- */

static hgr_status_t check_out_dtype(const hgr__op_ctx_t* ctx) {
  const char* out_dtype = hgr__attr_string(ctx, "out_dtype", "");
  if (!out_dtype[0] || !strcmp(out_dtype, "float32")) return HGR_OK;
  return HGR__OP_ERROR(ctx, "attr 'out_dtype' = \"%s\" is not supported; the op computes float32 (\"\" or \"float32\")",
                       out_dtype);
}

/* The units attr, when given (not absent, "None" or ""), must equal units. */
static hgr_status_t check_units(const hgr__op_ctx_t* ctx, int64_t units, const char* source) {
  const char* text = hgr__attr_string(ctx, "units", NULL);
  if (!text || !text[0] || !strcmp(text, "None") || !strcmp(text, "null")) return HGR_OK;
  int64_t value;
  HGR_RETURN_IF_ERROR(hgr__attr_int(ctx, "units", 0, &value));
  if (value == units) return HGR_OK;
  return HGR__OP_ERROR(ctx, "attr 'units' = %lld does not match %s, which has %lld units", (long long)value, source,
                       (long long)units);
}

static const char* shape_text(const hgr__entry_t* entry, char* buffer, size_t capacity) {
  return hgr__entry_shape(entry, buffer, capacity);
}

static hgr_status_t check_rank(const hgr__op_ctx_t* ctx, uint32_t input, const char* name, int32_t min_rank,
                               int32_t max_rank) {
  const hgr__entry_t* entry = hgr__op_input(ctx, input);
  if (entry->ndim >= min_rank && entry->ndim <= max_rank) return HGR_OK;
  char shape[160], want[32];
  if (min_rank == max_rank) snprintf(want, sizeof(want), "%d-D", min_rank);
  else snprintf(want, sizeof(want), "at least %d-D", min_rank);
  return HGR__OP_ERROR(ctx, "input %u (%s) is shaped %s; it must be %s", input, name,
                       shape_text(entry, shape, sizeof(shape)), want);
}

/* Product of the dimensions before the last `kept` ones, saturated just above
 * INT32_MAX (the product can overflow when a later dimension is 0; hgr__gemm_plan
 * rejects anything above INT32_MAX). */
static int64_t leading_count(const hgr__entry_t* entry, int32_t kept) {
  int64_t count = 1;
  for (int32_t d = 0; d + kept < entry->ndim; ++d) {
    count *= entry->shape[d];
    if (count > (int64_t)INT32_MAX) return (int64_t)INT32_MAX + 1;
  }
  return count;
}

hgr_status_t hgr__gemm_parse_activation(const hgr__op_ctx_t* ctx, bool gelu, gemm_t* g) {
  static const char* const with_gelu[] = {"none", "relu",       "leaky_relu", "clip",      "leaky_relu_clip",
                                          "sigmoid", "silu", "hard_swish", "gelu", "gelu_tanh", NULL};
  static const char* const without_gelu[] = {"none",    "relu", "leaky_relu", "clip", "leaky_relu_clip",
                                             "sigmoid", "silu", "hard_swish", NULL};
  const char* activation;
  HGR_RETURN_IF_ERROR(hgr__attr_choice(ctx, "activation", "none", gelu ? with_gelu : without_gelu, &activation));
  bool both = !strcmp(activation, "leaky_relu_clip");
  bool leaky = both || !strcmp(activation, "leaky_relu"), clip = both || !strcmp(activation, "clip");
  g->act = !strcmp(activation, "relu")        ? HGR__GEMM_ACT_RELU
           : both                             ? HGR__GEMM_ACT_LEAKY_RELU_CLIP
           : leaky                            ? HGR__GEMM_ACT_LEAKY_RELU
           : clip                             ? HGR__GEMM_ACT_CLIP
           : !strcmp(activation, "gelu")      ? HGR__GEMM_ACT_GELU
           : !strcmp(activation, "gelu_tanh") ? HGR__GEMM_ACT_GELU_TANH
           : !strcmp(activation, "sigmoid")   ? HGR__GEMM_ACT_SIGMOID
           : !strcmp(activation, "silu")      ? HGR__GEMM_ACT_SILU
           : !strcmp(activation, "hard_swish") ? HGR__GEMM_ACT_HARD_SWISH
                                              : HGR__GEMM_ACT_NONE;
  static const char* const keys[] = {"alpha", "a_min", "a_max"};
  for (int k = 0; k < 3; ++k) {
    bool wanted = k == 0 ? leaky : clip;
    if (!wanted && hgr__attr_string(ctx, keys[k], NULL))
      return HGR__OP_ERROR(ctx, "attr '%s' = \"%s\" is given, but attr 'activation' = \"%s\" does not take it",
                           keys[k], hgr__attr_string(ctx, keys[k], ""), activation);
  }
  double alpha = 0.01, a_min = 0, a_max = 0;
  if (leaky) {
    HGR_RETURN_IF_ERROR(hgr__attr_float(ctx, "alpha", 0.01, &alpha));
    if (!isfinite(alpha))
      return HGR__OP_ERROR(ctx, "attr 'alpha' = \"%s\" must be finite", hgr__attr_string(ctx, "alpha", ""));
  }
  if (clip) {
    for (int k = 1; k < 3; ++k)
      if (!hgr__attr_string(ctx, keys[k], NULL))
        return HGR__OP_ERROR(ctx, "attr '%s' is required with attr 'activation' = \"%s\"", keys[k], activation);
    HGR_RETURN_IF_ERROR(hgr__attr_float(ctx, "a_min", 0, &a_min));
    HGR_RETURN_IF_ERROR(hgr__attr_float(ctx, "a_max", 0, &a_max));
    if (isnan(a_min) || isnan(a_max) || a_min > a_max)
      return HGR__OP_ERROR(ctx, "attr 'a_min' = \"%s\" and attr 'a_max' = \"%s\" must satisfy a_min <= a_max",
                           hgr__attr_string(ctx, "a_min", ""), hgr__attr_string(ctx, "a_max", ""));
  }
  g->alpha = (float)alpha;
  g->a_min = (float)a_min;
  g->a_max = (float)a_max;
  return HGR_OK;
}

/* The optional bias, input 2 (dense, matmul and batch_matmul): [n], added per column
 * (what gives n: the weight's units, tensor_b's columns). */
static hgr_status_t check_column_bias(const hgr__op_ctx_t* ctx, int64_t n, const char* what, gemm_t* g) {
  g->bias = HGR__GEMM_BIAS_NONE;
  if (hgr__op_input_count(ctx) < 3) return HGR_OK;
  const hgr__entry_t* bias = hgr__op_input(ctx, 2);
  char shape[160];
  if (bias->ndim != 1 || bias->shape[0] != n)
    return HGR__OP_ERROR(ctx, "input 2 (bias) is shaped %s; it must be [%lld] (%s)", shape_text(bias, shape, sizeof(shape)),
                         (long long)n, what);
  g->bias = HGR__GEMM_BIAS_COLUMN;
  return HGR_OK;
}

/* ---- the ops --------------------------------------------------------------------------- */

/* Each op: its GEMM and its output shape, from its inputs and attrs. */
static hgr_status_t dense_gemm(const hgr__op_ctx_t* ctx, gemm_t* out_gemm, int64_t* shape, int32_t* out_ndim) {
  HGR_RETURN_IF_ERROR(check_out_dtype(ctx));
  HGR_RETURN_IF_ERROR(check_rank(ctx, 0, "data", 1, HGR_MAX_DIMS));
  HGR_RETURN_IF_ERROR(check_rank(ctx, 1, "weight", 2, 2));
  const hgr__entry_t* data = hgr__op_input(ctx, 0);
  const hgr__entry_t* weight = hgr__op_input(ctx, 1);
  int64_t in = data->shape[data->ndim - 1], units = weight->shape[0];
  char a[160], b[160];
  if (weight->shape[1] != in)
    return HGR__OP_ERROR(ctx, "input 1 (weight) is shaped %s and input 0 (data) %s; the weight must be [units, %lld]",
                         shape_text(weight, b, sizeof(b)), shape_text(data, a, sizeof(a)), (long long)in);
  HGR_RETURN_IF_ERROR(check_units(ctx, units, "input 1 (weight)"));
  memcpy(shape, data->shape, sizeof(int64_t) * (size_t)data->ndim);
  shape[data->ndim - 1] = units;
  *out_ndim = data->ndim;
  /* B[l, j] = weight[j, l] */
  *out_gemm = (gemm_t){1, leading_count(data, 1), units, in, 0, in, 1, 0, 1, in,
                       HGR__GEMM_BIAS_NONE, HGR__GEMM_ACT_NONE, 0, 0, 0, false, 0, 0, false, false, false, 0, 0, {0}, 0, {{0}}};
  HGR_RETURN_IF_ERROR(check_column_bias(ctx, units, "the weight's units", out_gemm));
  HGR_RETURN_IF_ERROR(hgr__gemm_parse_activation(ctx, true, out_gemm));
  return check_inputs(ctx);
}

/* The output shape of tensor_a's rows (ndim dims; with transpose_a its columns)
 * times n columns. */
static void matmul_shape(const hgr__entry_t* ta, bool transpose_a, int64_t m, int64_t n, int64_t* shape,
                         int32_t* out_ndim) {
  memcpy(shape, ta->shape, sizeof(int64_t) * (size_t)ta->ndim);
  if (transpose_a) shape[0] = m;
  shape[ta->ndim - 1] = n;
  *out_ndim = ta->ndim;
}

/* matmul with attr b_panel P: tensor_b is B [k, n] in panels of P columns, [ceil(n /
 * P), k, P] (the last one padded with P - n % P columns the op reads and never uses),
 * n given by attr units (passes/pack_gemm_weights.c makes them from constant
 * weights). P is a multiple of 4 up to 4096; transpose_b must be false. */
static hgr_status_t matmul_panels_gemm(const hgr__op_ctx_t* ctx, int64_t panel, bool transpose_a, bool transpose_b,
                                       gemm_t* out_gemm, int64_t* shape, int32_t* out_ndim) {
  if (panel < 4 || panel > 4096 || panel % 4 != 0)
    return HGR__OP_ERROR(ctx, "attr 'b_panel' = %lld must be a multiple of 4 from 4 to 4096 (0: no panels)",
                         (long long)panel);
  if (transpose_b) return HGR__OP_ERROR(ctx, "attr 'transpose_b' must be false with attr 'b_panel' (panels of columns)");
  if (!hgr__attr_string(ctx, "units", NULL))
    return HGR__OP_ERROR(ctx, "attr 'units' is required with attr 'b_panel' (the columns the panels hold)");
  int64_t n;
  HGR_RETURN_IF_ERROR(hgr__attr_int(ctx, "units", 0, &n));
  HGR_RETURN_IF_ERROR(check_rank(ctx, 1, "tensor_b, with b_panel", 3, 3));
  const hgr__entry_t* ta = hgr__op_input(ctx, 0);
  const hgr__entry_t* tb = hgr__op_input(ctx, 1);
  int64_t k = transpose_a ? ta->shape[0] : ta->shape[ta->ndim - 1];
  int64_t m = transpose_a ? ta->shape[1] : leading_count(ta, 1);
  char a[160], b[160];
  if (n < 1 || n > INT32_MAX || tb->shape[0] != (n + panel - 1) / panel || tb->shape[1] != k || tb->shape[2] != panel)
    return HGR__OP_ERROR(ctx,
                         "input 1 (tensor_b) is shaped %s and input 0 (tensor_a) %s: with attr 'b_panel' = %lld and "
                         "attr 'units' = %lld it must be [%lld, %lld, %lld]",
                         shape_text(tb, b, sizeof(b)), shape_text(ta, a, sizeof(a)), (long long)panel, (long long)n,
                         n < 1 || n > INT32_MAX ? 0LL : (long long)((n + panel - 1) / panel), (long long)k,
                         (long long)panel);
  HGR_RETURN_IF_ERROR(check_inputs(ctx)); /* k * panel within tensor_b's element count, below INT32_MAX */
  matmul_shape(ta, transpose_a, m, n, shape, out_ndim);
  *out_gemm = (gemm_t){1, m, n, k, 0, transpose_a ? 1 : k, transpose_a ? m : 1, 0, panel, 1,
                       HGR__GEMM_BIAS_NONE, HGR__GEMM_ACT_NONE, 0, 0, 0, false, panel, k * panel, false, false, false,
                       0, 0, {0}, 0, {{0}}};
  HGR_RETURN_IF_ERROR(check_column_bias(ctx, n, "attr 'units'", out_gemm));
  return hgr__gemm_parse_activation(ctx, true, out_gemm);
}

static hgr_status_t matmul_gemm(const hgr__op_ctx_t* ctx, gemm_t* out_gemm, int64_t* shape, int32_t* out_ndim) {
  HGR_RETURN_IF_ERROR(check_out_dtype(ctx));
  bool transpose_a, transpose_b;
  HGR_RETURN_IF_ERROR(hgr__attr_bool(ctx, "transpose_a", false, &transpose_a));
  HGR_RETURN_IF_ERROR(hgr__attr_bool(ctx, "transpose_b", false, &transpose_b));
  if (transpose_a) HGR_RETURN_IF_ERROR(check_rank(ctx, 0, "tensor_a, with transpose_a", 2, 2));
  else HGR_RETURN_IF_ERROR(check_rank(ctx, 0, "tensor_a", 1, HGR_MAX_DIMS));
  int64_t panel;
  HGR_RETURN_IF_ERROR(hgr__attr_int(ctx, "b_panel", 0, &panel));
  if (panel) return matmul_panels_gemm(ctx, panel, transpose_a, transpose_b, out_gemm, shape, out_ndim);
  HGR_RETURN_IF_ERROR(check_rank(ctx, 1, "tensor_b", 2, 2));
  const hgr__entry_t* ta = hgr__op_input(ctx, 0);
  const hgr__entry_t* tb = hgr__op_input(ctx, 1);
  int64_t k = transpose_a ? ta->shape[0] : ta->shape[ta->ndim - 1];
  int64_t m = transpose_a ? ta->shape[1] : leading_count(ta, 1);
  int64_t b_k = transpose_b ? tb->shape[1] : tb->shape[0], n = transpose_b ? tb->shape[0] : tb->shape[1];
  char a[160], b[160];
  if (b_k != k)
    return HGR__OP_ERROR(ctx,
                         "input 0 (tensor_a) is shaped %s and input 1 (tensor_b) %s: with transpose_a=%s and "
                         "transpose_b=%s their reduced dimensions (%lld and %lld) differ",
                         shape_text(ta, a, sizeof(a)), shape_text(tb, b, sizeof(b)), transpose_a ? "true" : "false",
                         transpose_b ? "true" : "false", (long long)k, (long long)b_k);
  HGR_RETURN_IF_ERROR(check_units(ctx, n, "input 1 (tensor_b)"));
  matmul_shape(ta, transpose_a, m, n, shape, out_ndim);
  *out_gemm = (gemm_t){1, m, n, k, 0, transpose_a ? 1 : k, transpose_a ? m : 1, 0, transpose_b ? 1 : n,
                       transpose_b ? k : 1, HGR__GEMM_BIAS_NONE, HGR__GEMM_ACT_NONE, 0, 0, 0, false, 0, 0, false,
                       false, false, 0, 0, {0}, 0, {{0}}};
  HGR_RETURN_IF_ERROR(check_column_bias(ctx, n, "tensor_b's columns", out_gemm));
  HGR_RETURN_IF_ERROR(hgr__gemm_parse_activation(ctx, true, out_gemm));
  return check_inputs(ctx);
}

static hgr_status_t batch_matmul_gemm(const hgr__op_ctx_t* ctx, gemm_t* out_gemm, int64_t* shape,
                                      int32_t* out_ndim) {
  HGR_RETURN_IF_ERROR(check_out_dtype(ctx));
  bool transpose_a, transpose_b;
  HGR_RETURN_IF_ERROR(hgr__attr_bool(ctx, "transpose_a", false, &transpose_a));
  HGR_RETURN_IF_ERROR(hgr__attr_bool(ctx, "transpose_b", true, &transpose_b));
  HGR_RETURN_IF_ERROR(check_rank(ctx, 0, "x", 3, 3));
  HGR_RETURN_IF_ERROR(check_rank(ctx, 1, "y", 3, 3));
  const hgr__entry_t* x = hgr__op_input(ctx, 0);
  const hgr__entry_t* y = hgr__op_input(ctx, 1);
  int64_t m = transpose_a ? x->shape[2] : x->shape[1], k = transpose_a ? x->shape[1] : x->shape[2];
  int64_t y_k = transpose_b ? y->shape[2] : y->shape[1], n = transpose_b ? y->shape[1] : y->shape[2];
  char a[160], b[160];
  if (y_k != k)
    return HGR__OP_ERROR(ctx,
                         "input 0 (x) is shaped %s and input 1 (y) %s: with transpose_a=%s and transpose_b=%s their "
                         "reduced dimensions (%lld and %lld) differ",
                         shape_text(x, a, sizeof(a)), shape_text(y, b, sizeof(b)), transpose_a ? "true" : "false",
                         transpose_b ? "true" : "false", (long long)k, (long long)y_k);
  int64_t x_batch = x->shape[0], y_batch = y->shape[0];
  if (x_batch != y_batch && x_batch != 1 && y_batch != 1)
    return HGR__OP_ERROR(ctx, "input 0 (x) is shaped %s and input 1 (y) %s: batches %lld and %lld do not broadcast",
                         shape_text(x, a, sizeof(a)), shape_text(y, b, sizeof(b)), (long long)x_batch,
                         (long long)y_batch);
  int64_t batch = x_batch == 1 ? y_batch : x_batch;
  shape[0] = batch;
  shape[1] = m;
  shape[2] = n;
  *out_ndim = 3;
  *out_gemm = (gemm_t){batch, m, n, k,
                       x_batch == 1 ? 0 : m * k, transpose_a ? 1 : k, transpose_a ? m : 1,
                       y_batch == 1 ? 0 : k * n, transpose_b ? 1 : n, transpose_b ? k : 1,
                       HGR__GEMM_BIAS_NONE, HGR__GEMM_ACT_NONE, 0, 0, 0, false, 0, 0, false, false, false, 0, 0, {0}, 0, {{0}}};
  HGR_RETURN_IF_ERROR(check_column_bias(ctx, n, "y's columns", out_gemm));
  HGR_RETURN_IF_ERROR(hgr__gemm_parse_activation(ctx, true, out_gemm));
  return check_inputs(ctx);
}

/* The op's outputs for its GEMM g and C's shape (shape, ndim; the last dim n), into
 * g's layouts and, when outputs is not NULL, outputs: one, C; or (matmul's) 2 or 3,
 * which split C's columns evenly, each segment a multiple of 32 columns (no strip of
 * a GEMM kernel crosses two: kernels/linalg.cl's HGR_GEMM_SEG_PARAMS), each through
 * its own layout (hgr__out_layout_parse_output). */
static hgr_status_t gemm_outputs(const hgr__op_ctx_t* ctx, gemm_t* g, int64_t* shape, int32_t ndim,
                                 hgr__entry_t* outputs) {
  uint32_t count = hgr__op_output_count(ctx);
  if (count > 1) {
    if (g->n % count || g->n / count % 32) /* the registry has checked the count */
      return HGR__OP_ERROR(ctx, "%u outputs split the product's %lld columns: evenly, each a multiple of 32 columns",
                           count, (long long)g->n);
    g->segments = count;
    shape[ndim - 1] = g->n / count;
  }
  for (uint32_t o = 0; o < count; ++o) {
    int64_t out_shape[HGR_MAX_DIMS];
    int32_t out_ndim = ndim;
    memcpy(out_shape, shape, sizeof(int64_t) * (size_t)ndim);
    HGR_RETURN_IF_ERROR(
        hgr__out_layout_parse_output(ctx, o, count, out_shape, &out_ndim, o ? &g->segment_out[o - 1] : &g->out));
    if (outputs) hgr__op_set_output(&outputs[o], HGR__DTYPE_F32, out_shape, out_ndim);
  }
  return HGR_OK;
}

#define GEMM_OP(name)                                                                \
  static hgr_status_t infer_##name(hgr__op_ctx_t* ctx, hgr__entry_t* outputs) {     \
    gemm_t g;                                                                        \
    int64_t shape[HGR_MAX_DIMS];                                                     \
    int32_t ndim;                                                                    \
    HGR_RETURN_IF_ERROR(name##_gemm(ctx, &g, shape, &ndim));                         \
    return gemm_outputs(ctx, &g, shape, ndim, outputs);                              \
  }                                                                                  \
  static hgr_status_t plan_##name(hgr__op_ctx_t* ctx) {                             \
    gemm_t g;                                                                        \
    int64_t shape[HGR_MAX_DIMS];                                                     \
    int32_t ndim;                                                                    \
    HGR_RETURN_IF_ERROR(name##_gemm(ctx, &g, shape, &ndim));                         \
    HGR_RETURN_IF_ERROR(gemm_outputs(ctx, &g, shape, ndim, NULL));                   \
    return hgr__gemm_plan(ctx, &g);                                                  \
  }
GEMM_OP(dense)
GEMM_OP(matmul)
GEMM_OP(batch_matmul)
#undef GEMM_OP

const hgr__op_t hgr__ops_linalg[] = {
    {"dense", "linalg", 2, 3, 1, 1, "units out_dtype activation alpha a_min a_max out_shape out_axes", plan_dense, 0,
     HGR__IN_PLACE_REFUSED, infer_dense},
    {"matmul", "linalg", 2, 3, 1, HGR__OUT_LAYOUT_OUTPUTS, "units out_dtype transpose_a transpose_b b_panel activation alpha a_min a_max out_shape out_axes",
     plan_matmul, 0, HGR__IN_PLACE_REFUSED, infer_matmul},
    {"batch_matmul", "linalg", 2, 3, 1, 1, "out_dtype transpose_a transpose_b activation alpha a_min a_max out_shape out_axes",
     plan_batch_matmul, 0, HGR__IN_PLACE_REFUSED, infer_batch_matmul},
    {.name = NULL},
};
