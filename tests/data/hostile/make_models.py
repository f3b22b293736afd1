"""Writes the hostile ONNX models of issue 33 into this folder, one per finding of the
hostile-file probe. Each is a small file that once crashed, leaked heap bytes or
exhausted hgr's loader; tests/test_onnx_hostile.c, the CLI tests and the Python tests
load them and expect a clear refusal. The files are committed; run this (with the
`onnx` package) only to remake them:

    build/onnx-venv/bin/python tests/data/hostile/make_models.py
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def save(model, name):
    path = os.path.join(HERE, name)
    with open(path, "wb") as f:
        f.write(model.SerializeToString())  # no checker: these models are invalid on purpose


def model(nodes, inputs, outputs, initializers=(), opset=13):
    graph = helper.make_graph(nodes, "hostile", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def out(name, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, None)


def i64(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


# Finding 1: four floats reshaped to [2^62 + 1, 4], whose element count wraps to 4 in
# 64 bits; a Gather (or a Slice) on the folded constant then read past its 16 bytes.
huge_shape = [2**62 + 1, 4]
four = numpy_helper.from_array(np.arange(4, dtype=np.float32), "four")
for op in ("Gather", "Slice"):
    nodes = [helper.make_node("Reshape", ["four", "huge_shape"], ["wide"])]
    inits = [four, i64("huge_shape", huge_shape)]
    if op == "Gather":
        nodes.append(helper.make_node("Gather", ["wide", "index"], ["y"], axis=0))
        inits.append(i64("index", [1, 1000]))
    else:
        nodes.append(helper.make_node("Slice", ["wide", "starts", "ends"], ["y"]))
        inits += [i64("starts", [1, 0]), i64("ends", [3, 4])]
    save(model(nodes, [], [out("y")], inits), "reshape_overflow_%s.onnx" % op.lower())

# Finding 2: a variadic op whose only input is omitted ("").
for op in ("Sum", "Mean", "Max", "Min"):
    save(model([helper.make_node(op, [""], ["y"])], [], [out("y")]), "omitted_input_%s.onnx" % op.lower())


# Finding 3: messages nested thousands deep, which protobuf-c's recursion overflowed
# the stack on: a TypeProto of sequences 5,000 deep, and If nested 3,000 deep.
def varint(n):
    b = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        b.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(b)


def field(number, payload):  # length-delimited
    return varint(number << 3 | 2) + varint(len(payload)) + payload


tensor_type = field(1, varint(1 << 3 | 0) + varint(1))  # TypeProto.tensor_type {elem_type: FLOAT}
nested = tensor_type
for _ in range(5000):
    nested = field(4, field(1, nested))  # TypeProto.sequence_type {elem_type: ...}
value_info = field(1, b"x") + field(2, nested)  # ValueInfoProto {name, type}
graph = field(11, value_info) + field(12, field(1, b"x"))  # GraphProto {input, output}
header = varint(1 << 3) + varint(8) + field(8, varint(2 << 3) + varint(13))  # ir_version, opset_import
with open(os.path.join(HERE, "nested_type_5000.onnx"), "wb") as f:
    f.write(header + field(7, graph))

body = field(12, field(1, b"y"))  # the innermost graph: an output y
for _ in range(3000):
    attribute = field(1, b"then_branch") + varint(20 << 3) + varint(5) + field(6, body)  # AttributeProto g
    node = field(2, b"y") + field(4, b"If") + field(5, attribute)  # NodeProto {output, op_type, attribute}
    body = field(1, node) + field(12, field(1, b"y"))  # GraphProto {node, output}
with open(os.path.join(HERE, "nested_if_3000.onnx"), "wb") as f:
    f.write(header + field(7, body))

# Finding 5: twenty ConstantOfShape nodes of 1 GiB each, in a file of under 2 KB.
gib_floats = i64("gib", [1 << 28])
nodes = [helper.make_node("ConstantOfShape", ["gib"], ["c%d" % k]) for k in range(20)]
nodes.append(helper.make_node("Sum", ["c%d" % k for k in range(20)], ["y"]))
save(model(nodes, [], [out("y")], [gib_floats]), "constant_of_shape_20_gib.onnx")

# The same through Gather: one 256 MiB ConstantOfShape, gathered twenty times into
# 1 GiB results (four copies of its one row each).
nodes = [helper.make_node("ConstantOfShape", ["row_shape"], ["row"])]
nodes += [helper.make_node("Gather", ["row", "rows"], ["g%d" % k], axis=0) for k in range(20)]
nodes.append(helper.make_node("Sum", ["g%d" % k for k in range(20)], ["y"]))
save(model(nodes, [], [out("y")], [i64("row_shape", [1, 1 << 26]), i64("rows", [0, 0, 0, 0])]),
     "gather_20_gib.onnx")

# A benign model for the budget's measure: y = x + w, w an initializer of 1,000 floats.
w = numpy_helper.from_array(np.arange(1000, dtype=np.float32), "w")
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1000])
save(model([helper.make_node("Add", ["x", "w"], ["y"])], [x], [out("y")], [w]), "benign_add_1000.onnx")

# Finding 6: a float Range whose element count is infinite as a double.
range_inits = [numpy_helper.from_array(np.array(v, dtype=np.float32), n)
               for n, v in (("start", 0.0), ("limit", 3e38), ("delta", 1e-38))]
save(model([helper.make_node("Range", ["start", "limit", "delta"], ["y"])], [], [out("y")], range_inits),
     "range_float_overflow.onnx")

# The same mechanism as finding 6 in the elementwise folds: Sum of int64 constants
# folds in double, and 2 * (2^63 - 1) was converted back to int64 unchecked; now it
# saturates.
save(model([helper.make_node("Sum", ["big", "big2"], ["y"])], [], [out("y", TensorProto.INT64)],
           [i64("big", [2**63 - 1, -2**63]), i64("big2", [2**63 - 1, -2**63])]), "int_sum_beyond_int64.onnx")

# Found by hgr_fuzz_onnx's structure-aware mutator (fuzz/corpus/onnx/slice-of-empty-
# shape-step-int64-min.onnx): Slice of an empty tensor with a negative step took one
# element (its start clamped to 0 of an empty axis), and the fold read 8 bytes of a
# 1-byte buffer. Here the same Slice on the Shape of a scalar: it takes nothing.
scalar = numpy_helper.from_array(np.array(1.0, dtype=np.float32), "scalar")
nodes = [helper.make_node("Shape", ["scalar"], ["empty"]),
         helper.make_node("Slice", ["empty", "starts", "ends", "axes", "steps"], ["y"])]
save(model(nodes, [], [out("y", TensorProto.INT64)],
           [scalar, i64("starts", [-1]), i64("ends", [3]), i64("axes", [0]), i64("steps", [-2**63])]),
     "slice_of_empty_negative_step.onnx")

# Found by hgr_fuzz_onnx (fuzz/corpus/onnx/conv-weight-input-2g-channels.onnx): a Conv
# whose weight is a graph input of 2^31 output channels; the loader's Conv epilogue
# fusion allocated two arrays of 16 GiB for them, outside any limit.
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 3, 3])
weight = helper.make_tensor_value_info("w", TensorProto.FLOAT, [2**31, 1, 3, 3])
save(model([helper.make_node("Conv", ["x", "w"], ["y"])], [x, weight], [out("y")]), "conv_weight_input_2g_channels.onnx")

# Found by hgr_fuzz_onnx (UBSan): the elementwise fold computed integer ops other than
# Add, Sub, Mul and Neg in double and converted the result to int64 unchecked; the
# int64 Abs of -2^63 is 2^63.
save(model([helper.make_node("Abs", ["lowest"], ["y"])], [], [out("y", TensorProto.INT64)], [i64("lowest", [-2**63])]),
     "int_abs_beyond_int64.onnx")

# Found by hgr_fuzz_model (UBSan): a string attr with no bytes at all (Pad's 'mode' of
# type STRING, s unset) reached memchr as a NULL pointer.
pad = helper.make_node("Pad", ["x", "pads"], ["y"])
pad.attribute.append(onnx.AttributeProto(name="mode", type=onnx.AttributeProto.STRING))
save(model([pad], [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])], [out("y")], [i64("pads", [1, 1])]),
     "pad_mode_without_bytes.onnx")

# Found by hgr_fuzz_onnx (UBSan): an LSTM's hidden_size of -2^63 was multiplied by its
# 4 gates before anything compared it with R's shape.
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 2])
lstm_w = numpy_helper.from_array(np.zeros((1, 4, 2), np.float32), "w")
lstm_r = numpy_helper.from_array(np.zeros((1, 4, 1), np.float32), "r")
save(model([helper.make_node("LSTM", ["x", "w", "r"], ["y"], hidden_size=-2**63)], [x], [out("y")], [lstm_w, lstm_r]),
     "lstm_hidden_size_int64_min.onnx")

# Its twin, found reading the importers for attrs multiplied unchecked: a ConvTranspose of
# no input channels took any group (0 % group is 0), and its output channels, the
# weight's 2^40 per group times a group of 2^40, overflowed.
# (Empty initializers: a graph input's dim 0 reads as unknown.)
empty_x = helper.make_tensor("x", TensorProto.FLOAT, [1, 0, 3, 3], [])
empty_w = helper.make_tensor("w", TensorProto.FLOAT, [0, 2**40, 1, 1], [])
save(model([helper.make_node("ConvTranspose", ["x", "w"], ["y"], group=2**40)], [], [out("y")], [empty_x, empty_w]),
     "conv_transpose_group_2e40_of_no_channels.onnx")

# Found by a sweep of ONNX's node tests with each int attr set to extremes (the
# Conv/ConvTranspose/pool window): a SAME-padded pool's kernel_shape of 2^63 - 1, and
# a ConvTranspose's strides of 2^63 - 1 with an output_shape, overflowed the window
# geometry. Window numbers are now bounded as they are read.
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 5, 5])
save(model([helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2**63 - 1, 2], auto_pad="SAME_UPPER")], [x],
           [out("y")]), "maxpool_same_kernel_int64_max.onnx")
weight = numpy_helper.from_array(np.ones((1, 1, 3, 3), np.float32), "w")
save(model([helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[2**63 - 1, 2], output_shape=[10, 10])],
           [x], [out("y")], [weight]), "conv_transpose_strides_int64_max.onnx")

# Its twin in ONNX Runtime's Attention, found by the same sweep over the contrib-op seeds
# of fuzz/corpus/onnx: qkv_hidden_sizes [8, 8, 2^63 - 1] overflowed their sum.
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 8])
attention = helper.make_node("Attention", ["x", "w", "b"], ["y"], domain="com.microsoft", num_heads=2,
                             qkv_hidden_sizes=[8, 8, 2**63 - 1])
graph = helper.make_graph([attention], "hostile", [x], [out("y")],
                          [numpy_helper.from_array(np.zeros((8, 24), np.float32), "w"),
                           numpy_helper.from_array(np.zeros(24, np.float32), "b")])
save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)],
                       ir_version=8), "attention_qkv_hidden_sizes_int64_max.onnx")
