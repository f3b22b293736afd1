/* ONNX's Einsum for the matmul-like equations. */
#include "onnx_internal.h"

const hgr__onnx_op_t hgr__onnx_ops_einsum[] = {
    {.name = NULL},
};
