"""Writes the seeds of hgr_fuzz_model (fuzz_model.c) into corpus/model/: request
sequences for the symbolic models of tests/data/symbolic/ (by number), and models of
ONNX's node tests whose inputs decide shapes (Reshape's shape, Expand's shape, Slice's
starts, TopK's k ...), carried whole in the input, each asked for at its declared
shapes with its test's own input values, then at shapes and values that break them.
The seeds are committed; run this (with the `onnx` package, as
tests/data/symbolic/make_models.py) only to remake them:

    build/onnx-venv/bin/python fuzz/make_model_seeds.py
"""
import os

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(HERE, "corpus", "model")
NODE_TESTS = "/usr/share/libonnx-testdata/data/node"
SYMBOLIC = ["dims.onnx", "reshape_input.onnx", "encoder.onnx", "cnn.onnx"]  # fuzz_model.c's models[]

# fuzz_model.c's tables.
DIM_SPECIAL = [-1, -2, 64, 255, 256, 1024, 65535, 65536, 1 << 20, 2**31 - 1, 1 << 31, (1 << 32) + 1, 1 << 40,
               1 << 62, 2**63 - 1, -2**63]
INT_SPECIAL = [0, 1, -1, -2**63, 2**63 - 1, -2**31, 2**31 - 1, 1 << 31, -(1 << 31) - 1, 1 << 32, 1 << 40, 1 << 53,
               1 << 62, -(1 << 62), 64, 100, 1000, 65536, -65536, 255, 256, -2**63 + 1, 2**63 - 2, 16, 17, 24, 32,
               -9, -16, -100, 3, 6]
INT_TYPES = (onnx.TensorProto.INT64, onnx.TensorProto.INT32)


def dim_byte(v):
    if 0 <= v < 8:
        return v
    if 8 <= v < 56:
        return 0xC0 + v - 8
    return 0xF0 + DIM_SPECIAL.index(v)


def int_byte(v):
    v = int(v)
    if -8 <= v <= 8:
        return v + 8
    if v in INT_SPECIAL:
        return 0xE0 + INT_SPECIAL.index(v)
    return 0xE0 + min(range(len(INT_SPECIAL)), key=lambda i: abs(INT_SPECIAL[i] - v))


def declared(value_info, initializers):
    """(name, element type, dims or None) of the inputs no initializer gives; a dim is
    an int, a dim_param, or None (unknown: no value, a negative one, or 0)."""
    inputs = []
    for vi in value_info:
        if vi.name in initializers:
            continue
        t = vi.type.tensor_type
        dims = None
        if t.HasField("shape"):
            dims = [d.dim_param if d.HasField("dim_param") else d.dim_value if d.dim_value > 0 else None
                    for d in t.shape.dim]
        inputs.append((vi.name, t.elem_type, dims))
    return inputs


def request(inputs, sizes, values=None, perturb=None):
    """The bytes of an op-0 request: each input at its declared shape (mode 0), named
    dims from sizes (a name's value at its first use), unknown dims sizes[None];
    values[name]: the input's values (data mode 1). perturb: (input, dim, size)."""
    out = [0]
    named = {}
    for index, (name, elem, dims) in enumerate(inputs):
        data = values is not None and name in values and not (perturb and perturb[0] == index)
        mode = (1 << 5 if data else 0) | (1 << 3 if perturb and perturb[0] == index else 0)
        out.append(mode)
        if dims is None:  # no declared shape: a rank byte (b % 5 with b % 6 != 5), then dims
            shape = list(values[name].shape) if data else [sizes[None]] * 2
            out.append(next(b for b in range(256) if b % 6 != 5 and b % 5 == len(shape)))
            out += [dim_byte(d) for d in shape]
        else:
            shape = []
            for d in dims:
                if isinstance(d, int):
                    shape.append(d)
                elif isinstance(d, str) and d in named:
                    shape.append(named[d])
                else:
                    v = sizes.get(d, sizes[None])
                    if isinstance(d, str):
                        named[d] = v
                    shape.append(v)
                    out.append(dim_byte(v))
            if perturb and perturb[0] == index and dims:
                out += [perturb[1] % len(dims), dim_byte(perturb[2])]
                shape[perturb[1] % len(dims)] = perturb[2]
        if data:
            count = 1
            for d in shape:
                count *= d
            flat = values[name].flatten()
            out += [int_byte(flat[i % len(flat)]) if len(flat) else 8 for i in range(min(count, 32))]
    return out


def sequence(inputs, sizes, values):
    """A valid request, the accessors, the same again, one dim broken, a graph model
    of the last graph, specialize (no instance), other sizes, wrong values."""
    out = request(inputs, sizes, values)
    out += [10, 0, 1, 1, 0x41]  # input 0, output 1, input 0's name with a byte more
    out += [14]
    if inputs:
        out += request(inputs, sizes, values, perturb=(0, 0, 2**31 - 1))
    out += request(inputs, sizes, values)
    out += [12] + [0] * len(inputs) * 2 + [13]
    bigger = {k: v + 1 for k, v in sizes.items()}
    out += request(inputs, bigger, values)
    if values:
        out += request(inputs, sizes, {k: -v - 1 for k, v in values.items()})
    return bytes(out)


def write(name, data):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)


def main():
    os.makedirs(OUT, exist_ok=True)
    # The symbolic models: byte 0 their number, options 0, then a sequence.
    symbolic_values = {"reshape_input.onnx": {"shape": np.array([3, -1], np.int64)}}
    for number, file in enumerate(SYMBOLIC):
        model = onnx.load(os.path.join(ROOT, "tests", "data", "symbolic", file))
        inputs = declared(model.graph.input, {t.name for t in model.graph.initializer})
        values = symbolic_values.get(file, {})
        write("symbolic-" + file.replace(".onnx", ""), bytes([number, 0]) + sequence(inputs, {None: 2}, values))
        # Fusion off, the small loader budget, and (bit 2) input 0 fixed to a value.
        name, _, dims = inputs[0]
        first = {name: np.ones([d if isinstance(d, int) else 2 for d in dims or [2, 2]], np.int64)}
        fixed = bytes([number, 7, 0]) + bytes(request(inputs[:1], {None: 2}, first)[1:])
        write("symbolic-fixed-" + file.replace(".onnx", ""), fixed + sequence(inputs[1:], {None: 2}, values))
    # Node tests whose inputs decide shapes: byte 4, the model's length and bytes,
    # options 0, then a sequence with the test's own int inputs as values.
    for test in ["reshape_negative_dim", "reshape_zero_and_negative_dim", "expand_dim_changed", "slice",
                 "slice_neg_steps", "tile", "constantofshape_int_zeros", "range_int32_type_negative_delta", "top_k",
                 "resize_upsample_sizes_nearest", "squeeze", "unsqueeze_axis_0", "gather_0",
                 "range_float_type_positive_delta",
                 "reduce_sum_default_axes_keepdims_example", "constant_pad", "split_variable_parts_1d"]:
        folder = os.path.join(NODE_TESTS, "test_" + test)
        if not os.path.exists(os.path.join(folder, "model.onnx")):
            continue
        raw = open(os.path.join(folder, "model.onnx"), "rb").read()
        model = onnx.load_from_string(raw)
        inputs = declared(model.graph.input, {t.name for t in model.graph.initializer})
        values = {}
        for i, (name, elem, dims) in enumerate(inputs):
            pb = os.path.join(folder, "test_data_set_0", "input_%d.pb" % i)
            if os.path.exists(pb):  # int inputs, and scalars (Range's float start, limit, delta)
                array = numpy_helper.to_array(onnx.load_tensor(pb))
                if elem in INT_TYPES or array.size == 1:
                    values[name] = array
        header = bytes([len(SYMBOLIC), len(raw) & 0xFF, len(raw) >> 8 & 0xFF, len(raw) >> 16])
        write("node-" + test, header + raw + bytes([0]) + sequence(inputs, {None: 2}, values))


if __name__ == "__main__":
    main()
