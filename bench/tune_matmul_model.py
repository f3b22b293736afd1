#!/usr/bin/env python3
"""A matmul-heavy ONNX model for bench/tune.sh: one transformer encoder layer's GEMMs
(BERT-base sizes, 128 tokens): Q, K, V and output projections [128, 768] x [768, 768],
attention scores and context as batched MatMuls over 12 heads ([12, 128, 64] x
[12, 64, 128], [12, 128, 128] x [12, 128, 64]), and the MLP [128, 768] x [768, 3072]
and [128, 3072] x [3072, 768], with Relu for the MLP's activation and no softmax or
norms (what matters here is the GEMMs). Writes DIR/matmul_layer.onnx, its input
DIR/matmul_layer_x.npy and the expected output DIR/matmul_layer_expected.npy (numpy,
float64 accumulation, rounded to float32).

  bench/tune_matmul_model.py DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main(directory):
    rng = np.random.default_rng(16)
    tokens, width, heads, hidden = 128, 768, 12, 3072
    head = width // heads
    weights = {name: (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32)
               for name, shape in [("wq", (width, width)), ("wk", (width, width)), ("wv", (width, width)),
                                   ("wo", (width, width)), ("w1", (width, hidden)), ("w2", (hidden, width))]}
    x = rng.standard_normal((tokens, width)).astype(np.float32)
    shape_heads = np.array([tokens, heads, head], dtype=np.int64)
    shape_back = np.array([tokens, width], dtype=np.int64)
    nodes = [
        helper.make_node("MatMul", ["x", "wq"], ["q"]),
        helper.make_node("MatMul", ["x", "wk"], ["k"]),
        helper.make_node("MatMul", ["x", "wv"], ["v"]),
        helper.make_node("Reshape", ["q", "shape_heads"], ["q3"]),
        helper.make_node("Reshape", ["k", "shape_heads"], ["k3"]),
        helper.make_node("Reshape", ["v", "shape_heads"], ["v3"]),
        helper.make_node("Transpose", ["q3"], ["qh"], perm=[1, 0, 2]),
        helper.make_node("Transpose", ["k3"], ["kt"], perm=[1, 2, 0]),
        helper.make_node("Transpose", ["v3"], ["vh"], perm=[1, 0, 2]),
        helper.make_node("MatMul", ["qh", "kt"], ["scores"]),
        helper.make_node("MatMul", ["scores", "vh"], ["context"]),
        helper.make_node("Transpose", ["context"], ["context_t"], perm=[1, 0, 2]),
        helper.make_node("Reshape", ["context_t", "shape_back"], ["merged"]),
        helper.make_node("MatMul", ["merged", "wo"], ["attended"]),
        helper.make_node("MatMul", ["attended", "w1"], ["up"]),
        helper.make_node("Relu", ["up"], ["up_relu"]),
        helper.make_node("MatMul", ["up_relu", "w2"], ["y"]),
    ]
    initializers = [numpy_helper.from_array(value, name) for name, value in weights.items()]
    initializers += [numpy_helper.from_array(shape_heads, "shape_heads"), numpy_helper.from_array(shape_back, "shape_back")]
    graph = helper.make_graph(nodes, "matmul_layer", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [tokens, width])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [tokens, width])], initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    os.makedirs(directory, exist_ok=True)
    onnx.save(model, os.path.join(directory, "matmul_layer.onnx"))

    w = {name: value.astype(np.float64) for name, value in weights.items()}
    x64 = x.astype(np.float64)
    q = (x64 @ w["wq"]).reshape(tokens, heads, head).transpose(1, 0, 2)
    k = (x64 @ w["wk"]).reshape(tokens, heads, head).transpose(1, 2, 0)
    v = (x64 @ w["wv"]).reshape(tokens, heads, head).transpose(1, 0, 2)
    context = ((q @ k) @ v).transpose(1, 0, 2).reshape(tokens, width)
    y = np.maximum((context @ w["wo"]) @ w["w1"], 0) @ w["w2"]
    np.save(os.path.join(directory, "matmul_layer_x.npy"), x)
    np.save(os.path.join(directory, "matmul_layer_expected.npy"), y.astype(np.float32))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
