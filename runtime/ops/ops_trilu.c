/* trilu (kernels/trilu.cl): ONNX Trilu. The upper (attr 'upper' true, the default)
 * or lower triangle of each matrix in the last two dims is kept, shifted by attr
 * 'k' (0: the main diagonal; positive: above it), and the rest set to zero. Relay's
 * trilu takes k as a second input; hgr takes it as an attr, which the ONNX loader
 * reads from Trilu's constant (or decided) input, so a graph giving two inputs is
 * refused by the input count. The op only moves elements: 4-byte (float32, int32)
 * and 1-byte (bool, uint8, int8) dtypes, at most INT32_MAX elements. */
#include <stdint.h>

#include "ops.h"

static hgr_status_t trilu_check(const hgr__op_ctx_t* ctx, const char** out_suffix) {
  const hgr__entry_t* in = hgr__op_input(ctx, 0);
  uint32_t id = (uint32_t)(in - ctx->graph->entries);
  char have[160];
  uint64_t bytes = hgr_dtype_element_bytes(in->dtype);
  if (in->dtype.lanes != 1 || in->dtype.code == HGR_DTYPE_BFLOAT || (bytes != 4 && bytes != 1))
    return HGR__OP_ERROR(ctx, "input 0 (entry %u) is %s; trilu moves 4-byte (float32, int32) and 1-byte (bool, "
                         "uint8, int8) elements", id, hgr_dtype_format(in->dtype, have, sizeof(have)));
  if (in->ndim < 2)
    return HGR__OP_ERROR(ctx, "input 0 (entry %u) is shaped %s; trilu needs rank 2 or more", id,
                         hgr__entry_shape(in, have, sizeof(have)));
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "input 0's element count", in->element_count, INT32_MAX));
  int64_t k;
  bool upper;
  HGR_RETURN_IF_ERROR(hgr__attr_int(ctx, "k", 0, &k));
  HGR_RETURN_IF_ERROR(hgr__attr_bool(ctx, "upper", true, &upper));
  *out_suffix = bytes == 4 ? "u32" : "u8";
  return HGR_OK;
}

static hgr_status_t infer_trilu(hgr__op_ctx_t* ctx, hgr__entry_t* outputs) {
  const char* suffix;
  HGR_RETURN_IF_ERROR(trilu_check(ctx, &suffix));
  const hgr__entry_t* in = hgr__op_input(ctx, 0);
  hgr__op_set_output(&outputs[0], in->dtype, in->shape, in->ndim);
  return HGR_OK;
}

static hgr_status_t plan_trilu(hgr__op_ctx_t* ctx) {
  const char* suffix;
  HGR_RETURN_IF_ERROR(trilu_check(ctx, &suffix));
  const hgr__entry_t* in = hgr__op_input(ctx, 0);
  int64_t k;
  bool upper;
  HGR_RETURN_IF_ERROR(hgr__attr_int(ctx, "k", 0, &k));
  HGR_RETURN_IF_ERROR(hgr__attr_bool(ctx, "upper", true, &upper));
  int64_t rows = in->shape[in->ndim - 2], cols = in->shape[in->ndim - 1];
  /* c - r lies in [-(rows - 1), cols - 1]: a k beyond decides as these do */
  if (k < -rows) k = -rows;
  if (k > cols) k = cols;
  hgr__launch_plan_t* l = hgr__op_launch(ctx, suffix[1] == '3' ? "hgr_trilu_u32" : "hgr_trilu_u8");
  hgr__launch_input(ctx, l, 0);
  hgr__launch_output(ctx, l, 0);
  /* with elements, rows and cols are at least 1 and within the count; without, nothing runs */
  hgr__launch_int(ctx, l, in->element_count ? (int32_t)rows : 1);
  hgr__launch_int(ctx, l, in->element_count ? (int32_t)cols : 1);
  hgr__launch_int(ctx, l, in->element_count ? (int32_t)k : 0);
  hgr__launch_int(ctx, l, upper);
  hgr__launch_uint(ctx, l, (uint32_t)in->element_count);
  hgr__launch_1d(ctx, l, in->element_count);
  return HGR_OK;
}

const hgr__op_t hgr__ops_trilu[] = {
    {"trilu", "trilu", 1, 1, 1, 1, "k upper", plan_trilu, 0, HGR__IN_PLACE_ELEMENTWISE, infer_trilu},
    {.name = NULL},
};
