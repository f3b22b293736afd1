/* ONNX's ArgMax, ArgMin, TopK, CumSum. */
#include "onnx_internal.h"

const hgr__onnx_op_t hgr__onnx_ops_index[] = {
    {.name = NULL},
};
