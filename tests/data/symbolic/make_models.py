"""Writes the symbolic-shape ONNX models of issue 34 into this folder: each declares
its dims the ways real exporters do (dim_param, dim_value -1, dim_value 0, no shape)
or takes an input that decides shapes. tests/test_model.c runs them through the model
object at many shapes; the Python tests compare them with ONNX Runtime. The files are
committed; run this (with the `onnx` package) only to remake them:

    build/onnx-venv/bin/python tests/data/symbolic/make_models.py
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def save(model, name, check=True):
    if check:  # ONNX's checker wants a shape on every value; ONNX Runtime runs models without
        onnx.checker.check_model(model)
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(model.SerializeToString())


def model(nodes, inputs, outputs, initializers=(), opset=13):
    graph = helper.make_graph(nodes, name_of(outputs), inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def name_of(outputs):
    return "symbolic_" + outputs[0].name


def shaped(name, dims, elem=TensorProto.FLOAT):
    """dims: ints, strings (dim_param) or None (a dim with neither)."""
    info = helper.make_tensor_value_info(name, elem, None)
    shape = info.type.tensor_type.shape
    for d in dims:
        dim = shape.dim.add()
        if isinstance(d, str):
            dim.dim_param = d
        elif d is not None:
            dim.dim_value = d
    return info


def unshaped(name, elem=TensorProto.FLOAT):
    info = helper.make_tensor_value_info(name, elem, None)
    info.type.tensor_type.ClearField("shape")
    return info


# dims.onnx: one input per way of writing an unknown dim; each output an elementwise
# function of its input, so the shapes follow the inputs'.
save(model(
    [helper.make_node("Relu", ["a"], ["ya"]),
     helper.make_node("Mul", ["b", "two"], ["yb"]),
     helper.make_node("Add", ["c", "one"], ["yc"]),
     helper.make_node("Neg", ["d"], ["yd"])],
    [shaped("a", ["batch", 3]), shaped("b", [-1, 3]), shaped("c", [0, 3]), unshaped("d")],
    [shaped("ya", ["batch", 3]), shaped("yb", [None, 3]), shaped("yc", [None, 3]), unshaped("yd")],
    [numpy_helper.from_array(np.array(2, np.float32), "two"), numpy_helper.from_array(np.array(1, np.float32), "one")],
), "dims.onnx", check=False)

# reshape_input.onnx: a Reshape whose shape is an input (int64): it decides shapes.
save(model(
    [helper.make_node("Reshape", ["x", "shape"], ["y"])],
    [shaped("x", ["n", 6]), shaped("shape", [2], TensorProto.INT64)],
    [shaped("y", [None, None])],
), "reshape_input.onnx")

# encoder.onnx: a transformer-like block at any batch and sequence length: x [batch,
# seq, 8] and mask [batch, seq]; y = Relu(x @ W1 + b1) @ W2 * mask[..., None]. The
# weights are the same at every shape (the model object shares them).
rng = np.random.default_rng(34)
w1 = rng.standard_normal((8, 16)).astype(np.float32)
b1 = rng.standard_normal(16).astype(np.float32)
w2 = rng.standard_normal((16, 4)).astype(np.float32)
save(model(
    [helper.make_node("MatMul", ["x", "w1"], ["h0"]),
     helper.make_node("Add", ["h0", "b1"], ["h1"]),
     helper.make_node("Relu", ["h1"], ["h2"]),
     helper.make_node("MatMul", ["h2", "w2"], ["h3"]),
     helper.make_node("Unsqueeze", ["mask", "axes"], ["m"]),
     helper.make_node("Mul", ["h3", "m"], ["y"])],
    [shaped("x", ["batch", "seq", 8]), shaped("mask", ["batch", "seq"])],
    [shaped("y", ["batch", "seq", 4])],
    [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b1, "b1"), numpy_helper.from_array(w2, "w2"),
     numpy_helper.from_array(np.array([2], np.int64), "axes")],
), "encoder.onnx")

# cnn.onnx: a small CNN at any image size: Conv 3x3 (pad 1) + Relu, MaxPool 2x2, Conv
# 3x3 + Relu, GlobalAveragePool, Flatten, Gemm: [N, 3, H, W] -> [N, 5].
c1 = rng.standard_normal((8, 3, 3, 3)).astype(np.float32) * 0.3
c1b = rng.standard_normal(8).astype(np.float32) * 0.1
c2 = rng.standard_normal((8, 8, 3, 3)).astype(np.float32) * 0.2
c2b = rng.standard_normal(8).astype(np.float32) * 0.1
fc = rng.standard_normal((5, 8)).astype(np.float32)
fcb = rng.standard_normal(5).astype(np.float32)
save(model(
    [helper.make_node("Conv", ["x", "c1", "c1b"], ["h1"], pads=[1, 1, 1, 1]),
     helper.make_node("Relu", ["h1"], ["h2"]),
     helper.make_node("MaxPool", ["h2"], ["h3"], kernel_shape=[2, 2], strides=[2, 2]),
     helper.make_node("Conv", ["h3", "c2", "c2b"], ["h4"], pads=[1, 1, 1, 1]),
     helper.make_node("Relu", ["h4"], ["h5"]),
     helper.make_node("GlobalAveragePool", ["h5"], ["h6"]),
     helper.make_node("Flatten", ["h6"], ["h7"]),
     helper.make_node("Gemm", ["h7", "fc", "fcb"], ["y"], transB=1)],
    [shaped("x", ["N", 3, "H", "W"])],
    [shaped("y", ["N", 5])],
    [numpy_helper.from_array(a, n) for a, n in [(c1, "c1"), (c1b, "c1b"), (c2, "c2"), (c2b, "c2b"), (fc, "fc"),
                                                (fcb, "fcb")]],
), "cnn.onnx")

# folded_weights.onnx: a weight computed at load (ConstantOfShape, then Mul by an
# initializer), depending on no input, used by a MatMul with x [n, 4]: the parsed
# model keeps the fold, and every import after the first borrows it.
save(model(
    [helper.make_node("ConstantOfShape", ["w_shape"], ["ones"],
                      value=numpy_helper.from_array(np.array([1.0], np.float32))),
     helper.make_node("Mul", ["ones", "scale"], ["w"]),
     helper.make_node("MatMul", ["x", "w"], ["y"])],
    [shaped("x", ["n", 4])],
    [shaped("y", ["n", 3])],
    [numpy_helper.from_array(np.array([4, 3], np.int64), "w_shape"),
     numpy_helper.from_array(np.array(0.5, np.float32), "scale")],
), "folded_weights.onnx")

# window.onnx: y = x + table[offset : offset + 2], the window a constant of each
# specialization (offset decides shapes: Slice's starts); windows of different offsets
# have the same name and bytes but not the same values, so a specialization may share
# only buffers that hold the first one's values.
save(model(
    [helper.make_node("Add", ["offset", "two"], ["end"]),
     helper.make_node("Slice", ["table", "offset", "end"], ["window"]),
     helper.make_node("Add", ["x", "window"], ["y"])],
    [shaped("x", [2]), shaped("offset", [1], TensorProto.INT64)],
    [shaped("y", [2])],
    [numpy_helper.from_array(np.array([0, 1, 2, 0, 1, 2, 0, 1], np.float32), "table"),
     numpy_helper.from_array(np.array([2], np.int64), "two")],
), "window.onnx")

# ids.onnx: y = table[ids], ids int64 [n] as token ids come: hgr computes int64 as
# int32, so an id past int32 is refused on entry, naming the input and element.
save(model(
    [helper.make_node("Gather", ["table", "ids"], ["y"])],
    [shaped("ids", ["n"], TensorProto.INT64)],
    [shaped("y", ["n", 2])],
    [numpy_helper.from_array(np.arange(20, dtype=np.float32).reshape(10, 2), "table")],
), "ids.onnx")

# constant_outputs.onnx: outputs y = Relu(x) [n, 3] beside three that no op writes:
# c (a Constant node, float [2, 3]), k (an int32 initializer [4]) and x itself (a
# graph input that is also an output). Their values are what the params or the input
# put into their storage; an output bound to the caller's memory must still read them.
save(model(
    [helper.make_node("Relu", ["x"], ["y"]),
     helper.make_node("Constant", [], ["c"],
                      value=numpy_helper.from_array(np.array([[1.5, -2, 3], [4, 5, -6]], np.float32)))],
    [shaped("x", ["n", 3])],
    [shaped("y", ["n", 3]), shaped("c", [2, 3]), shaped("k", [4], TensorProto.INT32), shaped("x", ["n", 3])],
    [numpy_helper.from_array(np.array([7, -8, 9, 2147483647], np.int32), "k")],
), "constant_outputs.onnx")
