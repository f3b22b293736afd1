"""float16, bfloat16, int8, uint8, int16 and uint16 at run time (issue 38, part 1):
held in their own width as graph inputs, outputs and values between ops, computed
widened, and Cast between them; each compared with ONNX Runtime's CPU provider
bit for bit, on the three platforms of the test bed."""
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import hgr

DEVICES = ["pocl:0", "rusticl:0", "oclgrind:0"]
SHAPE = [3, 5]
INTEGERS = [(TensorProto.UINT8, np.uint8), (TensorProto.INT8, np.int8), (TensorProto.INT16, np.int16),
            (TensorProto.UINT16, np.uint16)]


def _model(nodes, inputs, output, opset=17):
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(n, t, SHAPE) for n, t in inputs],
                              [helper.make_tensor_value_info("y", output, SHAPE)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]).SerializeToString()


def _feed(dtype, rng):
    if dtype == np.float16:
        return (rng.standard_normal(SHAPE) * 300).astype(np.float16)  # past float16's steps of 0.25 and more
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, SHAPE, dtype=dtype, endpoint=True)


def _same(model, feeds, device, rtol=0):
    want = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    got = hgr.InferenceSession(model, providers=[device]).run(None, feeds)[0]
    assert got.dtype == want.dtype
    if rtol:
        np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=rtol)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("onnx_type,dtype", INTEGERS, ids=lambda v: getattr(v, "__name__", ""))
def test_integer_arithmetic_wraps_as_onnx_runtime(device, onnx_type, dtype):
    """Add, Sub and Mul of full-range values overflow: the result keeps the low bits,
    as ONNX Runtime's; a chain of two keeps the narrow value between them."""
    rng = np.random.default_rng(int(onnx_type))
    feeds = {"a": _feed(dtype, rng), "b": _feed(dtype, rng)}
    for op in ["Add", "Sub", "Mul"]:
        nodes = [helper.make_node(op, ["a", "b"], ["t"]), helper.make_node("Add", ["t", "b"], ["y"])]
        _same(_model(nodes, [("a", onnx_type), ("b", onnx_type)], onnx_type), feeds, device)


@pytest.mark.parametrize("device", DEVICES)
def test_float16_ops_round_each_result(device):
    """One op's float16 result is ONNX Runtime's, bit for bit. A chain of two holds
    the value between them in float16, rounded; ONNX Runtime's CPU provider keeps
    it in float32 (it casts around ops that have no float16 kernel), so the chain
    agrees within float16's step (2^-10 of the value)."""
    rng = np.random.default_rng(16)
    feeds = {"a": _feed(np.float16, rng), "b": _feed(np.float16, rng)}
    f16 = TensorProto.FLOAT16
    for op in ["Add", "Mul", "Max"]:
        _same(_model([helper.make_node(op, ["a", "b"], ["y"])], [("a", f16), ("b", f16)], f16), feeds, device)
        nodes = [helper.make_node(op, ["a", "b"], ["t"]), helper.make_node("Sub", ["t", "b"], ["y"])]
        _same(_model(nodes, [("a", f16), ("b", f16)], f16), feeds, device, rtol=2e-3)
    relu = [helper.make_node("Relu", ["a"], ["y"])]
    _same(_model(relu, [("a", f16)], f16), {"a": feeds["a"]}, device)


TYPES = INTEGERS + [(TensorProto.FLOAT16, np.float16), (TensorProto.FLOAT, np.float32),
                    (TensorProto.INT32, np.int32), (TensorProto.INT64, np.int64), (TensorProto.BOOL, np.bool_)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("onnx_type,dtype", TYPES, ids=lambda v: getattr(v, "__name__", ""))
def test_cast_from_each_type_to_every_other(device, onnx_type, dtype):
    """Cast from dtype to each type, and through bfloat16 (which NumPy cannot hold)
    back to float: integers narrowed keep their low bits, floats round to nearest
    even, as ONNX Runtime does. Floats out of an integer's range are left out (ONNX
    leaves them undefined)."""
    rng = np.random.default_rng(100 + int(onnx_type))
    if dtype == np.bool_:
        x = rng.integers(0, 2, SHAPE).astype(np.bool_)
    elif dtype in (np.float16, np.float32):
        x = (rng.standard_normal(SHAPE) * 50).astype(dtype)
    else:
        x = _feed(dtype, rng) if dtype != np.int64 else rng.integers(-(2**31), 2**31 - 1, SHAPE, dtype=np.int64)
    for to, _ in TYPES:
        if dtype in (np.float16, np.float32) and to in (TensorProto.UINT8, TensorProto.UINT16):
            continue  # negative floats to unsigned: undefined in ONNX
        if dtype in (np.float16, np.float32) and to == TensorProto.INT8:
            continue  # |x| up to ~150: beyond int8, undefined
        _same(_model([helper.make_node("Cast", ["x"], ["y"], to=to)], [("x", onnx_type)], to), {"x": x}, device)
    through = [helper.make_node("Cast", ["x"], ["b"], to=TensorProto.BFLOAT16),
               helper.make_node("Cast", ["b"], ["y"], to=TensorProto.FLOAT)]
    _same(_model(through, [("x", onnx_type)], TensorProto.FLOAT), {"x": x}, device)


@pytest.fixture(scope="module")
def float16_models(tmp_path_factory):
    """The quantization tests' CNN and a BERT-like encoder, converted by ONNX
    Runtime's own tool (onnxruntime.transformers.float16) to float16 weights,
    activations, inputs and outputs, as exporters write them for GPUs."""
    import onnx
    from onnxruntime.transformers import float16

    import test_quantized_models
    import transformer_models

    folder = tmp_path_factory.mktemp("float16")
    cnn = str(folder / "cnn.onnx")
    test_quantized_models._cnn(cnn)
    models = {"cnn": onnx.load(cnn), "encoder": transformer_models.bert(layers=2, width=64, heads=4, vocab=100)}
    paths = {}
    for name, model in models.items():
        paths[name] = str(folder / f"{name}_float16.onnx")
        onnx.save(float16.convert_float_to_float16(model, keep_io_types=False), paths[name])
    return paths


@pytest.mark.parametrize("device", ["pocl:0", "rusticl:0"])
def test_float16_models_match_onnx_runtime(float16_models, device):
    """Every float op computes in float32 between float16 values (casts around it):
    relative L2 error at most 1e-2 against ONNX Runtime on the same file, top-1
    agreement at least 98 % on a batch of 64 (the encoder: 8 sequences of 16)."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((64, 3, 16, 16)).astype(np.float16)
    ids = {"input_ids": rng.integers(0, 100, (8, 16)), "attention_mask": np.ones((8, 16), np.int64),
           "token_type_ids": np.zeros((8, 16), np.int64)}
    for name, feeds in (("cnn", {"x": x}), ("encoder", ids)):
        path = float16_models[name]
        want = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, feeds)
        got = hgr.InferenceSession(path, providers=[device]).run(None, feeds)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype == np.float16
            g, w = g.astype(np.float32), w.astype(np.float32)
            error = np.linalg.norm(g - w) / np.linalg.norm(w)
            assert error <= 1e-2, f"{name}: relative L2 error {error:.3g}"
        if name == "cnn":
            assert np.mean(got[0].argmax(1) == want[0].argmax(1)) >= 0.98
