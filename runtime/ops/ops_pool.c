/* 2-D pooling (kernels/pool.cl): Relay's nn.max_pool2d, nn.avg_pool2d,
 * nn.global_max_pool2d and nn.global_avg_pool2d on float32 NCHW data, with TVM
 * topi's semantics.
 *
 * max_pool2d / avg_pool2d attrs: pool_size (required, 1 or 2 values); strides
 * [1, 1]; dilation [1, 1]; padding 0, as 1, 2 or 4 values like conv2d's ([top,
 * left, bottom, right] for 4); layout "NCHW"; out_layout "" or "NCHW"; ceil_mode
 * false; avg_pool2d's count_include_pad false.
 *
 * Output size per axis: (in + pad_before + pad_after - ((pool - 1) * dilation + 1)
 * [+ stride - 1 with ceil_mode]) / stride + 1. As in topi, ceil_mode's rounding is
 * extra padding at the bottom and right: max pooling sees it as -FLT_MAX like any
 * padding, average pooling never counts it, not even with count_include_pad.
 * Windows lying wholly in padding give -FLT_MAX (max) and follow topi's divisor
 * formula (average).
 *
 * hgr extension for ONNX's MaxPool / AveragePool: attr drop_padded_windows (False).
 * True drops, with ceil_mode, a last window that would start in the bottom or right
 * padding ((out - 1) * stride >= in + pad_before), as ONNX's spec ("sliding windows
 * that would start in the right padded region are ignored"), onnxruntime and
 * PyTorch do; topi keeps it. Everything else already is ONNX's: ceil_mode's extra
 * padding is never counted by count_include_pad, the declared padding is (checked
 * against onnxruntime on random shapes, strides, dilations and pads).
 *
 * global_max_pool2d / global_avg_pool2d attrs: layout, out_layout; output [N, C, 1, 1]. */
#include <stdio.h>
#include <string.h>

#include "ops.h"

/* Meta layout shared with kernels/pool.cl (POOL_* there). */
enum {
  META_N, META_C, META_H, META_W, META_OH, META_OW, META_KH, META_KW, META_SH, META_SW, META_DH, META_DW,
  META_PT, META_PL, META_PB, META_PR, META_COUNT_INCLUDE_PAD, META_COUNT
};

enum { VARIANT_MAX, VARIANT_AVG };

static hgr_status_t check_layouts(const hgr__op_ctx_t* ctx) {
  static const char* const layouts[] = {"NCHW", "", NULL}; /* "": the default, as TVM writes unset layouts */
  static const char* const out_layouts[] = {"", "NCHW", NULL};
  const char* choice;
  HGR_RETURN_IF_ERROR(hgr__attr_choice(ctx, "layout", "NCHW", layouts, &choice));
  return hgr__attr_choice(ctx, "out_layout", "", out_layouts, &choice);
}

static hgr_status_t check_input(const hgr__op_ctx_t* ctx, const hgr__entry_t** out_x) {
  *out_x = NULL;
  HGR_RETURN_IF_ERROR(hgr__op_check_dtype(ctx, 0, -1, false));
  const hgr__entry_t* x = hgr__op_input(ctx, 0);
  if (x->ndim != 4) {
    char shape[160];
    return HGR__OP_ERROR(ctx, "input 0 (entry %u) is shaped %s; it must have 4 dimensions (NCHW)",
                         (uint32_t)(x - ctx->graph->entries), hgr__entry_shape(x, shape, sizeof(shape)));
  }
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "the input's element count", x->element_count, INT32_MAX));
  *out_x = x;
  return HGR_OK;
}

/* A pooling window's attrs and the output's spatial size. */
typedef struct pool_t {
  int64_t pool[2], strides[2], dilation[2], padding[4], out[2];
  bool count_include_pad;
} pool_t;

static hgr_status_t parse_pool(const hgr__op_ctx_t* ctx, const hgr__entry_t** out_x, pool_t* p) {
  HGR_RETURN_IF_ERROR(check_layouts(ctx));
  const hgr__entry_t* x;
  HGR_RETURN_IF_ERROR(check_input(ctx, &x));
  *out_x = x;
  int64_t *pool = p->pool, *strides = p->strides, *dilation = p->dilation, *padding = p->padding, *out = p->out;
  uint32_t count = 0;
  bool present = false;
  HGR_RETURN_IF_ERROR(hgr__attr_ints(ctx, "pool_size", pool, 2, &count, &present));
  if (!present) return HGR__OP_ERROR(ctx, "attr 'pool_size' is required");
  HGR_RETURN_IF_ERROR(hgr__attr_pair(ctx, "pool_size", 1, 1, pool));
  HGR_RETURN_IF_ERROR(hgr__attr_pair(ctx, "strides", 1, 1, strides));
  HGR_RETURN_IF_ERROR(hgr__attr_pair(ctx, "dilation", 1, 1, dilation));
  HGR_RETURN_IF_ERROR(hgr__attr_padding(ctx, "padding", padding));
  bool ceil_mode = false, count_include_pad = false, drop_padded = false;
  HGR_RETURN_IF_ERROR(hgr__attr_bool(ctx, "ceil_mode", false, &ceil_mode));
  HGR_RETURN_IF_ERROR(hgr__attr_bool(ctx, "drop_padded_windows", false, &drop_padded));
  if (ctx->op->variant == VARIANT_AVG)
    HGR_RETURN_IF_ERROR(hgr__attr_bool(ctx, "count_include_pad", false, &count_include_pad));
  p->count_include_pad = count_include_pad;

  /* The kernels index the padded input and count taps with int. */
  if (x->shape[2] + padding[0] + padding[2] > INT32_MAX / 2 || x->shape[3] + padding[1] + padding[3] > INT32_MAX / 2 ||
      pool[0] * pool[1] > INT32_MAX)
    return HGR__OP_ERROR(ctx, "the padding or pool_size is too large for the kernels' 32-bit indices");
  for (int axis = 0; axis < 2; ++axis) {
    int64_t span = (pool[axis] - 1) * dilation[axis] + 1;
    int64_t room = x->shape[2 + axis] + padding[axis] + padding[axis + 2] - span + (ceil_mode ? strides[axis] - 1 : 0);
    if (room < 0) {
      char shape[160];
      return HGR__OP_ERROR(ctx,
                           "the padded input %s is smaller than the pooling window (pool_size [%lld, %lld], "
                           "dilation [%lld, %lld])",
                           hgr__entry_shape(x, shape, sizeof(shape)), (long long)pool[0], (long long)pool[1],
                           (long long)dilation[0], (long long)dilation[1]);
    }
    out[axis] = room / strides[axis] + 1;
    /* ONNX's rule: a window of ceil_mode that would start in the end padding is
     * dropped (room >= 0 keeps the first, which starts before it). */
    if (ceil_mode && drop_padded && out[axis] > 1 &&
        (out[axis] - 1) * strides[axis] >= x->shape[2 + axis] + padding[axis])
      --out[axis];
  }
  return HGR_OK;
}

static hgr_status_t infer_pool2d(hgr__op_ctx_t* ctx, hgr__entry_t* outputs) {
  const hgr__entry_t* x;
  pool_t p;
  HGR_RETURN_IF_ERROR(parse_pool(ctx, &x, &p));
  int64_t yshape[4] = {x->shape[0], x->shape[1], p.out[0], p.out[1]};
  hgr__op_set_output(&outputs[0], HGR__DTYPE_F32, yshape, 4);
  return HGR_OK;
}

/* The global pool kernel over `planes` planes of `size` values each. */
static void launch_global(hgr__op_ctx_t* ctx, uint64_t planes, uint64_t size) {
  hgr__launch_plan_t* l =
      hgr__op_launch(ctx, ctx->op->variant == VARIANT_MAX ? "hgr_global_max_pool2d" : "hgr_global_avg_pool2d");
  hgr__launch_input(ctx, l, 0);
  hgr__launch_output(ctx, l, 0);
  hgr__launch_uint(ctx, l, (uint32_t)planes);
  hgr__launch_uint(ctx, l, (uint32_t)size);
  hgr__launch_1d(ctx, l, planes);
}

/* A window that is the whole unpadded plane, one output per plane (ResNet's and
 * inception_v2's final 7x7 average pool): the global pool's result, which divides
 * by H * W as the average does there, and runs a plane per work-item in float8s
 * instead of hgr_avg_pool2d's one scalar window. */
static bool is_whole_plane(const pool_t* p, const hgr__entry_t* x) {
  return p->out[0] == 1 && p->out[1] == 1 && p->pool[0] == x->shape[2] && p->pool[1] == x->shape[3] &&
         p->dilation[0] == 1 && p->dilation[1] == 1 && p->padding[0] == 0 && p->padding[1] == 0 &&
         p->padding[2] == 0 && p->padding[3] == 0;
}

/* Windows 3 columns wide at horizontal stride 1 or 2, or 2 wide at stride 2 (the
 * model zoo's pools), or 1 wide at stride 1 (a CRNN's [2, 1] pools down its height,
 * [1, 128, 16, 64]: 90 -> 38-54 us on PoCL), or 5 wide at stride 1 (YOLOv5's and
 * v8's SPPF, 5 x 5 at padding 2: a YOLOv8n-style detector's three over 128 planes of
 * 10 x 10, 0.41 -> 0.11-0.13 ms of device time on PoCL),
 * without dilation, run kernels/pool.cl's
 * row-blocked hgr_*_pool2d_k<K>_s<S>_v<V>: a work-item per run of output rows of one plane,
 * each row in floatV blocks, each input row loaded once per block. On PoCL
 * (issue 16) they ran the zoo's stride-1 pools in 0.12-0.21x the CPU time of
 * hgr_max_pool2d / hgr_avg_pool2d, the stride-2 ones in 0.4-1.0x (those reading
 * 4.5 MB and more at the same rate as relu either way; bench/notes.md "Pooling"). */
static bool is_row_blocked(const pool_t* p) {
  return p->dilation[0] == 1 && p->dilation[1] == 1 &&
         ((p->pool[1] == 3 && (p->strides[1] == 1 || p->strides[1] == 2)) || (p->pool[1] == 2 && p->strides[1] == 2) ||
          (p->pool[1] == 1 && p->strides[1] == 1) || (p->pool[1] == 5 && p->strides[1] == 1));
}

/* The row-blocked kernels' work-groups: ROWS_LOCAL items each, whatever the shape
 * (hgr__launch_1d_groups: a local size that followed the output's size made PoCL
 * compile a work-group function at a new shape), and at least ROWS_MIN_ITEMS items,
 * a plane's rows split into runs below that (one work-group of 64 items left a core
 * idle on PoCL). 32: inception_v1's pools as fast as with the sizes that followed
 * the shape (up to 64), where 16 was 6-20 % slower, on PoCL (bench/notes.md). */
#define ROWS_LOCAL 32
#define ROWS_MIN_ITEMS 64

bool hgr__max_pool2d_tiles(const hgr__op_ctx_t* ctx, int64_t out_window[2]) {
  if (strcmp(ctx->op->name, "max_pool2d")) return false;
  const hgr__entry_t* x = NULL;
  pool_t p;
  hgr_status_t status = parse_pool(ctx, &x, &p);
  bool tiles = !status;
  hgr_status_free(status);
  for (int axis = 0; tiles && axis < 2; ++axis)
    tiles = p.strides[axis] == p.pool[axis] && p.dilation[axis] == 1 && p.padding[axis] == 0 &&
            p.padding[axis + 2] == 0 && p.out[axis] * p.pool[axis] <= x->shape[2 + axis];
  if (tiles) memcpy(out_window, p.pool, sizeof(p.pool));
  return tiles;
}

static hgr_status_t plan_pool2d(hgr__op_ctx_t* ctx) {
  const hgr__entry_t* x;
  pool_t p;
  HGR_RETURN_IF_ERROR(parse_pool(ctx, &x, &p));
  const int64_t *pool = p.pool, *strides = p.strides, *dilation = p.dilation, *padding = p.padding, *out = p.out;
  bool count_include_pad = p.count_include_pad;
  if (is_whole_plane(&p, x)) {
    launch_global(ctx, (uint64_t)x->shape[0] * (uint64_t)x->shape[1], (uint64_t)(x->shape[2] * x->shape[3]));
    return HGR_OK;
  }

  int32_t meta[META_COUNT];
  meta[META_N] = (int32_t)x->shape[0];
  meta[META_C] = (int32_t)x->shape[1];
  meta[META_H] = (int32_t)x->shape[2];
  meta[META_W] = (int32_t)x->shape[3];
  meta[META_OH] = (int32_t)out[0];
  meta[META_OW] = (int32_t)out[1];
  meta[META_KH] = (int32_t)pool[0];
  meta[META_KW] = (int32_t)pool[1];
  meta[META_SH] = (int32_t)strides[0];
  meta[META_SW] = (int32_t)strides[1];
  meta[META_DH] = (int32_t)dilation[0];
  meta[META_DW] = (int32_t)dilation[1];
  meta[META_PT] = (int32_t)padding[0];
  meta[META_PL] = (int32_t)padding[1];
  meta[META_PB] = (int32_t)padding[2];
  meta[META_PR] = (int32_t)padding[3];
  meta[META_COUNT_INCLUDE_PAD] = count_include_pad;
  const char* variant = ctx->op->variant == VARIANT_MAX ? "max" : "avg";
  if (!is_row_blocked(&p)) {
    char kernel[32];
    snprintf(kernel, sizeof(kernel), "hgr_%s_pool2d", variant);
    hgr__launch_plan_t* l = hgr__op_launch(ctx, kernel);
    hgr__launch_input(ctx, l, 0);
    hgr__launch_output(ctx, l, 0);
    hgr__launch_meta_arg(ctx, l);
    hgr__launch_meta(ctx, l, meta, META_COUNT);
    /* one work-item per POOL_CHUNK (64) columns of an output row (kernels/pool.cl) */
    uint64_t chunks = ((uint64_t)out[1] + 63) / 64;
    hgr__launch_1d(ctx, l, (uint64_t)x->shape[0] * (uint64_t)x->shape[1] * (uint64_t)out[0] * chunks);
    return HGR_OK;
  }
  /* floatV blocks: 16 columns for stride-1 rows of at least 16, else 8 (a stride-2
   * block of 8 loads 16 or 18 inputs per input row) */
  int v = strides[1] == 1 && out[1] >= 16 ? 16 : 8;
  char kernel[48];
  snprintf(kernel, sizeof(kernel), "hgr_%s_pool2d_k%d_s%d_v%d", variant, (int)pool[1], (int)strides[1], v);
  hgr__launch_plan_t* l = hgr__op_launch(ctx, kernel);
  if (strides[1] == 1) { /* v follows the output's width */
    snprintf(kernel, sizeof(kernel), "hgr_%s_pool2d_k%d_s1_v%d", variant, (int)pool[1], v == 16 ? 8 : 16);
    hgr__launch_sibling(ctx, l, kernel);
  }
  hgr__launch_input(ctx, l, 0);
  hgr__launch_output(ctx, l, 0);
  hgr__launch_meta_arg(ctx, l);
  hgr__launch_meta(ctx, l, meta, META_COUNT);
  /* whole planes, unless there are fewer than ROWS_MIN_ITEMS of them */
  uint64_t planes = (uint64_t)x->shape[0] * (uint64_t)x->shape[1], oh = (uint64_t)out[0];
  uint64_t chunks = planes >= ROWS_MIN_ITEMS ? 1 : (ROWS_MIN_ITEMS + planes - 1) / planes;
  if (chunks > oh) chunks = oh;
  uint64_t rows = (oh + chunks - 1) / chunks;
  hgr__launch_meta1(ctx, l, (int32_t)rows); /* POOL_ROWS */
  uint64_t items = planes * ((oh + rows - 1) / rows);
  hgr__launch_1d_groups(ctx, l, items, ROWS_LOCAL);
  return HGR_OK;
}

static hgr_status_t infer_global_pool2d(hgr__op_ctx_t* ctx, hgr__entry_t* outputs) {
  HGR_RETURN_IF_ERROR(check_layouts(ctx));
  const hgr__entry_t* x;
  HGR_RETURN_IF_ERROR(check_input(ctx, &x));
  int64_t yshape[4] = {x->shape[0], x->shape[1], 1, 1};
  hgr__op_set_output(&outputs[0], HGR__DTYPE_F32, yshape, 4);
  return HGR_OK;
}

static hgr_status_t plan_global_pool2d(hgr__op_ctx_t* ctx) {
  const hgr__entry_t* x = hgr__op_input(ctx, 0); /* checked by infer_global_pool2d */
  launch_global(ctx, (uint64_t)x->shape[0] * (uint64_t)x->shape[1], (uint64_t)(x->shape[2] * x->shape[3]));
  return HGR_OK;
}

const hgr__op_t hgr__ops_pool[] = {
    {"max_pool2d", "pool", 1, 1, 1, 1, "pool_size strides dilation padding layout out_layout ceil_mode drop_padded_windows",
     plan_pool2d,
     VARIANT_MAX, HGR__IN_PLACE_REFUSED, infer_pool2d},
    {"avg_pool2d", "pool", 1, 1, 1, 1,
     "pool_size strides dilation padding layout out_layout ceil_mode count_include_pad drop_padded_windows",
     plan_pool2d, VARIANT_AVG,
     HGR__IN_PLACE_REFUSED, infer_pool2d},
    {"global_max_pool2d", "pool", 1, 1, 1, 1, "layout out_layout", plan_global_pool2d, VARIANT_MAX,
     HGR__IN_PLACE_REFUSED, infer_global_pool2d},
    {"global_avg_pool2d", "pool", 1, 1, 1, 1, "layout out_layout", plan_global_pool2d, VARIANT_AVG,
     HGR__IN_PLACE_REFUSED, infer_global_pool2d},
    {.name = NULL},
};
