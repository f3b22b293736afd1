/* ONNX's Split, Slice, Pad, Resize/Upsample, Expand, Tile, DepthToSpace, SpaceToDepth, GatherElements. */
#include "onnx_internal.h"

const hgr__onnx_op_t hgr__onnx_ops_layout[] = {
    {.name = NULL},
};
