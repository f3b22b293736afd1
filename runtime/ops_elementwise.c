/* Elementwise float32 ops on tensors of one shape (kernels/elementwise.cl). */
#include <stdio.h>
#include <string.h>

#include "ops.h"

static hgr_status_t plan_elementwise(hgr__op_ctx_t* ctx) {
  const hgr__entry_t* out = hgr__op_output(ctx, 0);
  HGR_RETURN_IF_ERROR(hgr__op_check_dtype(ctx, -1, 0, false));
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "the output's element count", out->element_count, UINT32_MAX));
  for (uint32_t i = 0; i < hgr__op_input_count(ctx); ++i) {
    HGR_RETURN_IF_ERROR(hgr__op_check_dtype(ctx, (int)i, -1, false));
    char name[32];
    snprintf(name, sizeof(name), "input %u", i);
    HGR_RETURN_IF_ERROR(hgr__op_check_shape(ctx, hgr__op_input(ctx, i), name, out->shape, out->ndim));
  }
  char kernel[64];
  snprintf(kernel, sizeof(kernel), "hgr_%s_f32", ctx->op->name);
  hgr__launch_plan_t* l = hgr__op_launch(ctx, kernel);
  for (uint32_t i = 0; i < hgr__op_input_count(ctx); ++i) hgr__launch_input(ctx, l, i);
  hgr__launch_output(ctx, l, 0);
  hgr__launch_uint(ctx, l, (uint32_t)out->element_count);
  hgr__launch_1d(ctx, l, out->element_count);
  return HGR_OK;
}

#define ELEMENTWISE(name, arity) {#name, "elementwise", arity, arity, 1, 1, "", plan_elementwise, 0, false}

const hgr__op_t hgr__ops_elementwise[] = {
    ELEMENTWISE(add, 2),      ELEMENTWISE(subtract, 2), ELEMENTWISE(multiply, 2),
    ELEMENTWISE(divide, 2),   ELEMENTWISE(maximum, 2),  ELEMENTWISE(minimum, 2),
    ELEMENTWISE(negative, 1), ELEMENTWISE(relu, 1),     ELEMENTWISE(exp, 1),
    ELEMENTWISE(sigmoid, 1),  ELEMENTWISE(tanh, 1),     {NULL},
};
