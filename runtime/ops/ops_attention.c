/* attention (kernels/attention.cl): scaled dot-product attention of G matrices in
 * one launch, the scores never stored,
 *
 *   out[g] = softmax(scale * q[g] k[g]ᵀ + mask[g]) v[g]   (softmax over the keys)
 *
 * inputs q [G, M, dk], k [G, N, dk] (or kᵀ [G, dk, N] with transpose_k false),
 * v [G, N, dv], and an optional additive float32 mask; output [G, M, dv], all
 * float32. Attrs:
 *   scale        (1.0)  the factor of the scores, before the mask is added
 *   transpose_k  (true) k is [G, N, dk], each key a row; false: kᵀ [G, dk, N]
 *   heads        (1)    the scores are viewed as [G / heads, heads, M, N] for the
 *                       mask, which broadcasts to that view by NumPy's rules (rank
 *                       up to 4, aligned to the right): a padding mask [B, 1, 1, N],
 *                       a causal one [1, 1, M, N], one per matrix [G, M, N] with
 *                       heads = G. heads must divide G.
 *   causal       (false) key n of query row m takes part only where n <= m + N - M
 *   out_shape, out_axes  the output as transpose(reshape([G, M, dv], out_shape),
 *                       out_axes) (ops.h, hgr__out_layout_t), the last axis kept last
 *                       and a multiple of dv: [B, M, H, dv] for the heads' transpose
 *                       that follows attention in exports
 * The graph pass that fuses the attention block (passes/fuse_attention.c) makes
 * these nodes. Its tile candidates: flash attention's online softmax on one
 * work-item per query row or on float16 vectors (kernels/attention.cl), or staged
 * through the node's scratch: the GEMM's scores, a softmax in place, the GEMM again.
 * The vectors' and private kernels read keys given as rows from a Kᵀ copied into the
 * scratch first (plan_keys_columns). */
#include <stdio.h>
#include <string.h>

#include "ops.h"
#include "ops_gemm.h"

/* Query rows per work-group: with PoCL's CPU drivers the work-items of a group run
 * as vector lanes over the same keys (one load of a key feeds every lane). */
#define ATTENTION_GROUP 16

typedef struct attention_t {
  int64_t g, m, n, dk, dv;
  int64_t heads;
  bool transpose_k, causal, has_mask;
  double scale;
  int32_t mask_strides[4]; /* batch, head, row, col; 0 where the mask broadcasts */
  hgr__out_layout_t out;   /* how [G, M, dv] is stored (attrs out_shape, out_axes) */
  int64_t out_shape[4];    /* the output's shape */
  int32_t out_ndim;
} attention_t;

static hgr_status_t check_rank3(const hgr__op_ctx_t* ctx, uint32_t i, const char* name) {
  const hgr__entry_t* e = hgr__op_input(ctx, i);
  HGR_RETURN_IF_ERROR(hgr__op_check_dtype(ctx, (int)i, -1, false));
  if (e->ndim == 3) return HGR_OK;
  char have[160];
  return HGR__OP_ERROR(ctx, "input %u '%s' is shaped %s; attention takes rank 3 ([G, rows, columns])", i, name,
                       hgr__entry_shape(e, have, sizeof(have)));
}

/* The mask's strides over the scores' view [G / heads, heads, M, N]. */
static hgr_status_t mask_strides(const hgr__op_ctx_t* ctx, attention_t* a) {
  const hgr__entry_t* mask = hgr__op_input(ctx, 3);
  HGR_RETURN_IF_ERROR(hgr__op_check_dtype(ctx, 3, -1, false));
  const int64_t view[4] = {a->g / a->heads, a->heads, a->m, a->n};
  char have[160];
  if (mask->ndim > 4)
    return HGR__OP_ERROR(ctx, "input 3 'mask' is shaped %s; it must broadcast to the scores [%lld, %lld, %lld, %lld]",
                         hgr__entry_shape(mask, have, sizeof(have)), (long long)view[0], (long long)view[1],
                         (long long)view[2], (long long)view[3]);
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "the mask's element count", mask->element_count, INT32_MAX));
  int64_t stride = 1;
  for (int32_t d = 3; d >= 0; --d) {
    int32_t md = d - (4 - mask->ndim);
    int64_t extent = md >= 0 ? mask->shape[md] : 1;
    if (extent != 1 && extent != view[d])
      return HGR__OP_ERROR(ctx, "input 3 'mask' is shaped %s; it must broadcast to the scores [%lld, %lld, %lld, %lld]",
                           hgr__entry_shape(mask, have, sizeof(have)), (long long)view[0], (long long)view[1],
                           (long long)view[2], (long long)view[3]);
    a->mask_strides[d] = extent == 1 ? 0 : (int32_t)stride;
    stride *= extent;
  }
  return HGR_OK;
}

static hgr_status_t attention_check(const hgr__op_ctx_t* ctx, attention_t* a) {
  HGR_RETURN_IF_ERROR(check_rank3(ctx, 0, "q"));
  HGR_RETURN_IF_ERROR(check_rank3(ctx, 1, "k"));
  HGR_RETURN_IF_ERROR(check_rank3(ctx, 2, "v"));
  HGR_RETURN_IF_ERROR(hgr__attr_bool(ctx, "transpose_k", true, &a->transpose_k));
  HGR_RETURN_IF_ERROR(hgr__attr_bool(ctx, "causal", false, &a->causal));
  HGR_RETURN_IF_ERROR(hgr__attr_float(ctx, "scale", 1.0, &a->scale));
  HGR_RETURN_IF_ERROR(hgr__attr_int(ctx, "heads", 1, &a->heads));
  const hgr__entry_t *q = hgr__op_input(ctx, 0), *k = hgr__op_input(ctx, 1), *v = hgr__op_input(ctx, 2);
  a->g = q->shape[0];
  a->m = q->shape[1];
  a->dk = q->shape[2];
  a->n = a->transpose_k ? k->shape[1] : k->shape[2];
  a->dv = v->shape[2];
  int64_t k_dk = a->transpose_k ? k->shape[2] : k->shape[1];
  char qs[160], ks[160], vs[160];
  if (k->shape[0] != a->g || k_dk != a->dk || v->shape[0] != a->g || v->shape[1] != a->n)
    return HGR__OP_ERROR(ctx, "q %s, k %s (%s) and v %s do not agree: q [G, M, dk], k %s, v [G, N, dv]",
                         hgr__entry_shape(q, qs, sizeof(qs)), hgr__entry_shape(k, ks, sizeof(ks)),
                         a->transpose_k ? "transpose_k" : "not transpose_k", hgr__entry_shape(v, vs, sizeof(vs)),
                         a->transpose_k ? "[G, N, dk]" : "[G, dk, N]");
  if (!(a->scale == a->scale) || a->scale > 3.4e38 || a->scale < -3.4e38)
    return HGR__OP_ERROR(ctx, "attr 'scale' = \"%s\" must be a finite number", hgr__attr_string(ctx, "scale", ""));
  if (a->heads < 1 || (a->g % a->heads && a->g))
    return HGR__OP_ERROR(ctx, "attr 'heads' = %lld must be at least 1 and divide the %lld matrices", (long long)a->heads,
                         (long long)a->g);
  if (a->dk > 128 || a->dv > 128)
    return HGR__OP_ERROR(ctx, "head sizes dk %lld and dv %lld: attention takes up to 128", (long long)a->dk,
                         (long long)a->dv);
  for (uint32_t i = 0; i < 3; ++i)
    HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "an input's element count", hgr__op_input(ctx, i)->element_count,
                                            INT32_MAX));
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "the output's element count", (uint64_t)(a->g * a->m * a->dv), INT32_MAX));
  a->has_mask = hgr__op_input_count(ctx) > 3;
  if (a->has_mask) HGR_RETURN_IF_ERROR(mask_strides(ctx, a));
  a->out_shape[0] = a->g;
  a->out_shape[1] = a->m;
  a->out_shape[2] = a->dv;
  a->out_ndim = 3;
  HGR_RETURN_IF_ERROR(hgr__out_layout_parse(ctx, a->out_shape, &a->out_ndim, &a->out));
  /* the kernels store each output row of dv floats as one run */
  if (a->out.mapped && (a->out.strides[3] != 1 || (a->dv && a->out.dims[3] % a->dv)))
    return HGR__OP_ERROR(ctx,
                         "attrs 'out_shape' = \"%s\" and 'out_axes' = \"%s\" must keep the last axis last and make it a "
                         "multiple of dv %lld (each output row one run)",
                         hgr__attr_string(ctx, "out_shape", ""), hgr__attr_string(ctx, "out_axes", ""),
                         (long long)a->dv);
  return HGR_OK;
}

static hgr_status_t infer_attention(hgr__op_ctx_t* ctx, hgr__entry_t* outputs) {
  attention_t a;
  HGR_RETURN_IF_ERROR(attention_check(ctx, &a));
  hgr__op_set_output(&outputs[0], HGR__DTYPE_F32, a.out_shape, a.out_ndim);
  return HGR_OK;
}

/* The op's tile candidates (hgr__op_choose_tile): a work-item per query row (any
 * device, any head sizes), vectors across the keys (dk = dv, unrolled sizes), staged
 * (the scores within STAGED_MAX_SCORES), or private (unrolled sizes, at most
 * PRIVATE_MAX_KEYS keys). On devices that loop over work-items (PoCL's CPU drivers)
 * the rule takes private, then staged, then vectors; elsewhere rows. Measured on PoCL
 * (2 cores, loaded): 12 heads of 32 over 128 positions ran in 4.5 ms with a row per
 * work-item (PoCL ran it scalar), 0.9-1.0 ms with vectors; over 512 positions
 * (quiet) 7.1-8.2 ms, 29-34 % of the machine's float peak (138 GFLOP/s,
 * hgr_bench_peak). Staged took 33-41 % less than vectors in the 6-layer encoder at
 * 128 and 512 positions, private less than staged (docs/ops.md). */
static const char* const attention_variants[] = {"rows", "vectors", "staged", "private"};
enum { ROWS, VECTORS, STAGED, PRIVATE, VARIANTS };

/* The private candidate's keys at most: kernels/attention.cl's HGR_ATTN_PRIV_KEYS. */
#define PRIVATE_MAX_KEYS 512

/* The loop iterations a work-item of candidate `variant` runs at most, summed over
 * all its kernels' loops, each loop counted as if not unrolled and one more for its
 * entry (llvmpipe ended the rows kernel's loops at 480 keys of head size 64, where the
 * iterations alone sum to 64542: the count is at least that), against
 * hgr__op_loop_iteration_limit; rows_per_item: the vectors' and private kernels'
 * query rows per work-item. The staged GEMMs and softmax are bounded loosely by 16
 * per key. */
#define LOOP(count, body) ((count) + 1 + (count) * (body))
static uint64_t loop_iterations(const attention_t* a, uint32_t variant, uint64_t rows_per_item) {
  uint64_t n = (uint64_t)a->n, dk = (uint64_t)a->dk, dv = (uint64_t)a->dv, r = rows_per_item;
  uint64_t blocks = (n + 15) / 16, pairs = (n + 31) / 32, vectors = (dv + 15) / 16;
  uint64_t partial_keys = 2 * LOOP(16, 0) * dk; /* a last block's keys, gathered */
  switch (variant) {
    case ROWS:
      return LOOP(dk, 0) + 2 * LOOP(dv, 0) +
             LOOP(blocks, LOOP(16, LOOP(dk, 0)) + LOOP(dv, 0) + LOOP(16, LOOP(dv, 0)));
    case VECTORS:
      return LOOP(r, LOOP(dk, 0) + LOOP(vectors, 0)) + partial_keys +
             LOOP(blocks, LOOP(r, 0) + LOOP(dk, LOOP(r, 0)) + LOOP(r, LOOP(vectors, 0) + LOOP(16, 0)) +
                              LOOP(16, LOOP(vectors, LOOP(r, 0)))) +
             LOOP(r, LOOP(vectors, 0));
    case PRIVATE:
      return LOOP(r, LOOP(dk, 0)) + partial_keys + LOOP(pairs, 2 * LOOP(r, 0) + LOOP(dk, LOOP(r, 0))) +
             LOOP(r, LOOP(blocks, LOOP(16, 0)) + LOOP(blocks, 0)) + 2 * LOOP(r, LOOP(vectors, 0)) +
             LOOP(n, LOOP(vectors, LOOP(r, 0)));
    default:
      return 16 * n + 64;
  }
}
#undef LOOP

/* The staged candidate's scores in the node's scratch: at most this many bytes. */
#define STAGED_MAX_SCORES (64ull << 20)

/* The staged candidate's two GEMMs: S = Q Kᵀ into the scratch, O = P V from it. */
static void staged_gemms(const attention_t* a, hgr__gemm_t* scores, hgr__gemm_t* out) {
  uint64_t scratch = (uint64_t)a->g * (uint64_t)a->m * (uint64_t)a->n * sizeof(float);
  *scores = (hgr__gemm_t){.batch = a->g, .m = a->m, .n = a->n, .k = a->dk, .a_batch = a->m * a->dk,
                          .a_row = a->dk, .a_depth = 1, .b_batch = a->n * a->dk,
                          .b_depth = a->transpose_k ? 1 : a->n, .b_col = a->transpose_k ? a->dk : 1,
                          .c_scratch = true, .scratch_bytes = scratch};
  *out = (hgr__gemm_t){.batch = a->g, .m = a->m, .n = a->dv, .k = a->n, .a_batch = a->m * a->n, .a_row = a->n,
                       .a_depth = 1, .b_batch = a->n * a->dv, .b_depth = a->dv, .b_col = 1, .a_scratch = true,
                       .b_input = 2, .scratch_bytes = scratch, .out = a->out};
}

/* S's rows in place into softmax(scale * S + mask) (kernels/attention.cl). */
static void plan_staged_softmax(hgr__op_ctx_t* ctx, const attention_t* a, uint64_t scratch) {
  hgr__launch_plan_t* l = hgr__op_launch(ctx, "hgr_attention_softmax");
  hgr__launch_scratch(ctx, l, scratch);
  hgr__launch_input(ctx, l, a->has_mask ? 3 : 0); /* without a mask, q stands in and is never read */
  hgr__launch_int(ctx, l, (int32_t)a->m);
  hgr__launch_int(ctx, l, (int32_t)a->n);
  hgr__launch_int(ctx, l, (int32_t)a->heads);
  hgr__launch_float(ctx, l, (float)a->scale);
  hgr__launch_int(ctx, l, a->has_mask);
  for (int d = 0; d < 4; ++d) hgr__launch_int(ctx, l, a->has_mask ? a->mask_strides[d] : 0);
  hgr__launch_int(ctx, l, a->causal);
  hgr__launch_int(ctx, l, (int32_t)(a->g * a->m));
  hgr__launch_1d_groups(ctx, l, (uint64_t)(a->g * a->m), ATTENTION_GROUP);
}

/* Kᵀ [G, dk, N] of k [G, N, dk] into the node's scratch (kernels/attention.cl's
 * hgr_attention_keys_t), where the vectors' and private kernels read it: their _k
 * forms gather each block of keys anew for every block of query rows. On PoCL (2-core
 * Xeon), a 6-layer encoder of 12 heads of 32 over 512 tokens, its keys as rows: 20.1-20.8
 * ms of attention with the copy against 24.5-28.8 with the gathers (hgr run --profile,
 * builds in turn; bench/notes.md, "Denormals, keys as rows, ..."). */
static void plan_keys_columns(hgr__op_ctx_t* ctx, const attention_t* a, uint64_t bytes) {
  hgr__launch_plan_t* l = hgr__op_launch(ctx, "hgr_attention_keys_t");
  hgr__launch_input(ctx, l, 1);
  hgr__launch_scratch(ctx, l, bytes);
  hgr__launch_int(ctx, l, (int32_t)a->n);
  hgr__launch_int(ctx, l, (int32_t)a->dk);
  hgr__launch_int(ctx, l, (int32_t)(a->g * a->n));
  hgr__launch_1d_groups(ctx, l, (uint64_t)(a->g * a->n), ATTENTION_GROUP);
}

static hgr_status_t plan_attention(hgr__op_ctx_t* ctx) {
  attention_t a;
  HGR_RETURN_IF_ERROR(attention_check(ctx, &a));
  const char* size = "any";
  static const char* const unrolled[] = {"16", "32", "64", "128"};
  for (int i = 0; i < 4; ++i)
    if (a.dk == a.dv && a.dk == (16 << i)) size = unrolled[i];
  hgr__gemm_t scores, product;
  staged_gemms(&a, &scores, &product);
  /* staged: not without rows or keys (the fused kernels' 0 / 0 for no keys), and its
   * scores within STAGED_MAX_SCORES and the GEMM's element counts */
  bool unrolled_size = strcmp(size, "any") != 0;
  bool staged_fits = a.g && a.m && a.n && scores.scratch_bytes <= STAGED_MAX_SCORES &&
                     scores.scratch_bytes / sizeof(float) < INT32_MAX && hgr__gemm_fits(&ctx->limits, &scores) &&
                     hgr__gemm_fits(&ctx->limits, &product);
  bool fits[VARIANTS] = {true, unrolled_size, staged_fits, unrolled_size && a.n <= PRIVATE_MAX_KEYS};
  char key[96];
  snprintf(key, sizeof(key), "attention dk %lld dv %lld %s", (long long)a.dk, (long long)a.dv,
           a.transpose_k ? "k" : "kt");
  /* rows per work-item of the vectors' and private kernels (attention.cl's ROWS): the
   * vectors' 8 took 12 heads of 32 over 128 positions in 0.65-0.76 ms against
   * 0.78-1.5 with 4 (loaded machine); the private kernel's output rows take 16 float16 */
  const uint64_t per_item[VARIANTS] = {1, a.dk <= 32 ? 8 : 4, 1, a.dk <= 32 ? 8 : a.dk <= 64 ? 4 : 2};
  uint64_t limit = hgr__op_loop_iteration_limit(ctx);
  for (uint32_t v = 0; limit && v < VARIANTS; ++v) fits[v] = fits[v] && loop_iterations(&a, v, per_item[v]) <= limit;
  if (limit && !fits[ROWS] && !fits[VECTORS] && !fits[STAGED] && !fits[PRIVATE])
    return HGR__OP_ERROR(ctx,
                         "%lld keys of head sizes %lld and %lld take more loop iterations per work-item than the "
                         "device runs before it ends them early (%llu, llvmpipe's loop limit)",
                         (long long)a.n, (long long)a.dk, (long long)a.dv, (unsigned long long)limit);
  bool loops = hgr__op_loops_work_items(ctx);
  /* PoCL's CPU drivers: private, staged, vectors; others rows, then staged where a
   * loop limit leaves rows out */
  static const uint32_t looping_order[] = {PRIVATE, STAGED, VECTORS, ROWS, ROWS};
  static const uint32_t other_order[] = {ROWS, STAGED, VECTORS, PRIVATE, ROWS};
  const uint32_t* order = loops ? looping_order : other_order;
  uint32_t first = 0;
  while (first < VARIANTS && !fits[order[first]]) ++first;
  uint32_t by_limits = order[first];
  uint32_t chosen = hgr__op_choose_tile(ctx, key, attention_variants, fits, VARIANTS, by_limits);
  if (chosen == STAGED) {
    HGR_RETURN_IF_ERROR(hgr__gemm_plan_by_rule(ctx, &scores));
    plan_staged_softmax(ctx, &a, scores.scratch_bytes);
    return hgr__gemm_plan_by_rule(ctx, &product);
  }
  static const char* const prefixes[] = {"", "vec_", "", "priv_"};
  bool row_blocks = chosen == VECTORS || chosen == PRIVATE; /* several query rows per work-item */
  /* keys as rows into Kᵀ in the scratch first for the kernels of several rows (see
   * plan_keys_columns) */
  bool keys_columns = row_blocks && a.transpose_k && a.g && a.m && a.n;
  uint64_t keys_bytes = (uint64_t)a.g * (uint64_t)a.n * (uint64_t)a.dk * sizeof(float);
  if (keys_columns) plan_keys_columns(ctx, &a, keys_bytes);
  char kernel[48];
  snprintf(kernel, sizeof(kernel), "hgr_attention_%s%s_%s", prefixes[chosen],
           a.transpose_k && !keys_columns ? "k" : "kt", size);
  hgr__launch_plan_t* l = hgr__op_launch(ctx, kernel);
  hgr__launch_input(ctx, l, 0);
  if (keys_columns) hgr__launch_scratch(ctx, l, keys_bytes);
  else hgr__launch_input(ctx, l, 1);
  hgr__launch_input(ctx, l, 2);
  hgr__launch_input(ctx, l, a.has_mask ? 3 : 0); /* without a mask, q stands in and is never read */
  hgr__launch_output(ctx, l, 0);
  /* an empty output: rows 0, and the kernel returns at once */
  bool empty = !a.g || !a.m;
  hgr__launch_int(ctx, l, empty ? 0 : (int32_t)a.m);
  hgr__launch_int(ctx, l, (int32_t)a.n);
  hgr__launch_int(ctx, l, (int32_t)a.dk);
  hgr__launch_int(ctx, l, (int32_t)a.dv);
  hgr__launch_int(ctx, l, (int32_t)a.heads);
  hgr__launch_float(ctx, l, (float)a.scale);
  hgr__launch_int(ctx, l, a.has_mask);
  for (int d = 0; d < 4; ++d) hgr__launch_int(ctx, l, a.has_mask ? a.mask_strides[d] : 0);
  hgr__launch_int(ctx, l, a.causal);
  hgr__out_layout_args(ctx, l, &a.out);
  size_t group = row_blocks ? 1 : ATTENTION_GROUP;
  if (ctx->limits.max_work_group < group) group = ctx->limits.max_work_group;
  if (ctx->limits.max_work_item[0] < group) group = ctx->limits.max_work_item[0];
  uint64_t rows_per_item = per_item[chosen];
  size_t rows = empty ? 0 : (size_t)(((uint64_t)a.m + rows_per_item - 1) / rows_per_item);
  size_t global[2] = {rows, empty ? 0 : (size_t)a.g}, local[2] = {group, 1};
  hgr__launch_nd(l, 2, global, local);
  return HGR_OK;
}

const hgr__op_t hgr__ops_attention[] = {
    {"attention", "attention", 3, 4, 1, 1, "scale transpose_k heads causal out_shape out_axes", plan_attention, 0, HGR__IN_PLACE_REFUSED,
     infer_attention},
    {.name = NULL},
};
