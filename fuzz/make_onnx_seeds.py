"""Writes seeds of hgr_fuzz_onnx (fuzz_onnx.c) into corpus/onnx/ for what ONNX's node
tests do not hold: ONNX Runtime's contrib ops (domain com.microsoft) and small
transformer blocks whose patterns the passes fuse (layer norm and GELU written out,
the attention block, GPT-2's causal Where, a MatMul whose weights are packed), and
quantization in the QDQ form ONNX Runtime's tool writes. Each is small, with tiny weights, so the
10-second CTest runs execute it many times. The seeds are committed; run this (with
the `onnx` package) only to remake them:

    build/onnx-venv/bin/python fuzz/make_onnx_seeds.py
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper as h, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus", "onnx")
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python", "tests"))
import transformer_models  # noqa: E402  (the test models, at their smallest)

MS = "com.microsoft"
rng = np.random.default_rng(47)


def weight(name, shape, dtype=np.float32):
    return numpy_helper.from_array((rng.standard_normal(shape) * 0.3).astype(dtype), name)


def ints(name, values, dtype=np.int64):
    return numpy_helper.from_array(np.array(values, dtype=dtype), name)


def tensor(name, elem, shape):
    return h.make_tensor_value_info(name, elem, shape)


def save(name, nodes, inputs, outputs, inits=(), contrib=True, opset=17):
    opsets = [h.make_opsetid("", opset)] + ([h.make_opsetid(MS, 1)] if contrib else [])
    graph = h.make_graph(nodes, name, inputs, outputs, list(inits))
    model = h.make_model(graph, opset_imports=opsets, ir_version=8)
    with open(os.path.join(OUT, name + ".onnx"), "wb") as f:
        f.write(model.SerializeToString())


F = TensorProto.FLOAT
x = tensor("x", F, [2, 3, 8])
y = tensor("y", F, None)

save("contrib-attention-mask-index", [h.make_node("Attention", ["x", "w", "b", "mask"], ["y"], domain=MS,
                                                  num_heads=2)],
     [x, tensor("mask", TensorProto.INT32, [2, 3])], [y], [weight("w", [8, 24]), weight("b", [24])])
save("contrib-attention-causal", [h.make_node("Attention", ["x", "w", "b"], ["y"], domain=MS, num_heads=2,
                                              unidirectional=1)], [x], [y], [weight("w", [8, 24]), weight("b", [24])])
save("contrib-multi-head-attention", [h.make_node("MultiHeadAttention", ["q", "k", "v", "bias", "pad"], ["y"],
                                                  domain=MS, num_heads=2)],
     [tensor("q", F, [2, 3, 8]), tensor("k", F, [2, 5, 8]), tensor("v", F, [2, 5, 8]),
      tensor("pad", TensorProto.INT32, [2, 5])], [y], [weight("bias", [24])])
save("contrib-embed-layer-normalization",
     [h.make_node("EmbedLayerNormalization", ["ids", "seg", "words", "positions", "segments", "gamma", "beta", "mask"],
                  ["y", "mask_index"], domain=MS, epsilon=1e-5)],
     [tensor("ids", TensorProto.INT32, [2, 3]), tensor("seg", TensorProto.INT32, [2, 3]),
      tensor("mask", TensorProto.INT32, [2, 3])], [y, tensor("mask_index", TensorProto.INT32, None)],
     [weight("words", [10, 8]), weight("positions", [6, 8]), weight("segments", [2, 8]), weight("gamma", [8]),
      weight("beta", [8])])
save("contrib-rotary-embedding", [h.make_node("RotaryEmbedding", ["x", "pos", "cos", "sin"], ["y"], domain=MS,
                                              num_heads=2)],
     [x, tensor("pos", TensorProto.INT64, [2, 3])], [y], [weight("cos", [8, 2]), weight("sin", [8, 2])])
save("contrib-skip-layer-normalization", [h.make_node("SkipLayerNormalization", ["x", "skip", "gamma", "beta", "bias"],
                                                      ["y"], domain=MS)],
     [x, tensor("skip", F, [2, 3, 8])], [y], [weight("gamma", [8]), weight("beta", [8]), weight("bias", [8])])
save("contrib-bias-gelu", [h.make_node("BiasGelu", ["x", "b"], ["g"], domain=MS),
                           h.make_node("FastGelu", ["g", "b"], ["f"], domain=MS),
                           h.make_node("QuickGelu", ["f"], ["y"], domain=MS, alpha=1.702)], [x], [y], [weight("b", [8])])

# QDQ (ONNX Runtime's quantize_static writes it): an int8 weight per output channel
# dequantized into a Conv, its output quantized to uint8 and back; a weight in
# blocks of 2 along its input channels; DynamicQuantizeLinear
x4 = tensor("x", F, [1, 4, 5, 5])
save("quant-qdq-conv-per-channel",
     [h.make_node("DequantizeLinear", ["wq", "ws", "wz"], ["w"], axis=0),
      h.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
      h.make_node("QuantizeLinear", ["c", "s", "z"], ["q"]),
      h.make_node("DequantizeLinear", ["q", "s", "z"], ["y"])],
     [x4], [y], [ints("wq", rng.integers(-127, 128, (3, 4, 3, 3)), np.int8), weight("ws", [3]),
                 ints("wz", [0, 0, 0], np.int8), ints("s", 0.05, np.float32), ints("z", 128, np.uint8)], contrib=False)
save("quant-blocked-and-dynamic",
     [h.make_node("DequantizeLinear", ["wq", "ws"], ["w"], axis=1, block_size=2),
      h.make_node("MatMul", ["x", "w"], ["m"]),
      h.make_node("DynamicQuantizeLinear", ["m"], ["q", "qs", "qz"]),
      h.make_node("DequantizeLinear", ["q", "qs", "qz"], ["y"])],
     [tensor("x", F, [2, 6])], [y], [ints("wq", rng.integers(-8, 8, (6, 4)), np.int8), weight("ws", [6, 2])],
     contrib=False, opset=21)

# QOperator (the same tool's other format): QLinearConv with an int32 bias per
# output channel, QLinearAdd of com.microsoft, MaxPool on uint8, MatMulInteger
u8 = TensorProto.UINT8
save("quant-qoperator-conv-add-pool",
     [h.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], ["c"], pads=[1, 1, 1, 1]),
      h.make_node("QLinearAdd", ["c", "ys", "yz", "x", "xs", "xz", "ys", "yz"], ["a"], domain=MS),
      h.make_node("MaxPool", ["a"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
      h.make_node("Flatten", ["p"], ["f"]),
      h.make_node("MatMulInteger", ["f", "m", "yz"], ["y"])],
     [tensor("x", u8, [1, 3, 4, 4])], [tensor("y", TensorProto.INT32, None)],
     [ints("xs", 0.02, np.float32), ints("xz", 128, np.uint8), ints("w", rng.integers(-127, 128, (3, 3, 3, 3)), np.int8),
      ints("ws", [0.01, 0.02, 0.03], np.float32), ints("wz", [0, 0, 0], np.int8), ints("ys", 0.05, np.float32),
      ints("yz", 120, np.uint8), ints("b", [5, -5, 0], np.int32), ints("m", rng.integers(0, 255, (12, 2)), np.uint8)])

tiny = dict(layers=1, width=8, heads=2, vocab=10, max_positions=8)
# width 16: the FFN's first MatMul has 64 columns, which the weight packing pass
# repacks into panels (passes/pack_gemm_weights.c)
packed = dict(tiny, width=16)
for name, made in (("transformer-bert-opset14", transformer_models.bert(opset=14, **tiny)),
                   ("transformer-bert-packed-ffn", transformer_models.bert(opset=17, **packed)),
                   ("transformer-gpt2-trilu", transformer_models.gpt2(causal="trilu", **tiny)),
                   ("transformer-vit", transformer_models.vit(layers=1, width=8, heads=2, patch=4, grid=2,
                                                              classes=3))):
    # fixed dims: hgr_onnx_load_memory loads a model at the shapes it declares
    for value in made.graph.input:
        for dim in value.type.tensor_type.shape.dim:
            if dim.HasField("dim_param"):
                dim.dim_value = {"batch": 2, "sequence": 5}.get(dim.dim_param, 8)
    with open(os.path.join(OUT, name + ".onnx"), "wb") as f:
        f.write(made.SerializeToString())

# What ONNX Runtime's quantize_dynamic and its graph optimizer write: DynamicQuantizeLSTM
# (int8 weights [D, rows, 4H], a scale per direction), DynamicQuantizeMatMul,
# MatMulIntegerToFloat and FusedMatMul (transposed B, alpha).
i8 = TensorProto.INT8
save("quant-dynamic-lstm-and-fused-matmuls",
     [h.make_node("DynamicQuantizeLSTM", ["s", "lw", "lr", "", "", "", "", "", "lws", "lwz", "lrs", "lrz"],
                  ["ly"], domain=MS, hidden_size=2, direction="bidirectional"),
      h.make_node("Reshape", ["ly", "flat"], ["f"]),
      h.make_node("DynamicQuantizeMatMul", ["f", "mq", "ms", "mz", "mb"], ["m"], domain=MS),
      h.make_node("DynamicQuantizeLinear", ["m"], ["q", "qs", "qz"]),
      h.make_node("MatMulIntegerToFloat", ["q", "mq", "qs", "ms", "qz", "mz"], ["g"], domain=MS),
      h.make_node("FusedMatMul", ["g", "g"], ["y"], domain=MS, transB=1, alpha=0.5)],
     [tensor("s", F, [3, 1, 4])], [y],
     [ints("lw", rng.integers(-127, 128, (2, 4, 8)), np.int8), ints("lr", rng.integers(-127, 128, (2, 2, 8)), np.int8),
      ints("lws", [0.01, 0.02], np.float32), ints("lwz", [0, 0], np.int8), ints("lrs", [0.03, 0.01], np.float32),
      ints("lrz", [0, 0], np.int8), ints("flat", [3, 4]), ints("mq", rng.integers(-127, 128, (4, 4)), np.int8),
      ints("ms", 0.02, np.float32), ints("mz", 0, np.int8), weight("mb", [4])])

# quantize_static's QDQ MatMul and Gemm on int8 weights (folded at load; the products
# read the int8 weights through dequantize_matmul): per column into a MatMul, per
# tensor into a Gemm with transB and a bias; and a MatMulInteger of constant weights
# with a zero point per column
save("quant-qdq-matmul-gemm-constant-weights",
     [h.make_node("DequantizeLinear", ["w1q", "w1s", "w1z"], ["w1"], axis=1),
      h.make_node("DequantizeLinear", ["w2q", "w2s"], ["w2"]),
      h.make_node("MatMul", ["x", "w1"], ["m"]),
      h.make_node("Gemm", ["m", "w2", "b2"], ["y"], transB=1),
      h.make_node("MatMulInteger", ["a", "w3", "az", "w3z"], ["yi"])],
     [tensor("x", F, [2, 6]), tensor("a", u8, [2, 6])],
     [tensor("y", F, [2, 4]), tensor("yi", TensorProto.INT32, [2, 3])],
     [ints("w1q", rng.integers(-127, 128, (6, 5)), np.int8), ints("w1s", [0.01, 0.02, 0.03, 0.04, 0.05], np.float32),
      ints("w1z", [0] * 5, np.int8), ints("w2q", rng.integers(-127, 128, (4, 5)), np.int8),
      ints("w2s", 0.05, np.float32),
      weight("b2", [4]), ints("w3", rng.integers(-127, 128, (6, 3)), np.int8), ints("az", 3, np.uint8),
      ints("w3z", [1, -2, 0], np.int8)], contrib=False, opset=13)
