"""Models quantized by ONNX Runtime's own tool (onnxruntime.quantization), run by
hgr and by ONNX Runtime from the same file (issue 38): a small CNN with seeded
random weights, quantize_static in the QDQ format (per tensor and per channel),
compared on a batch of 64 random inputs: relative L2 error of the outputs at most
1e-2, top-1 agreement at least 98 %. hgr runs the QuantizeLinear and
DequantizeLinear nodes on the device and the ops between them in float32; ONNX
Runtime fuses them into integer kernels, so single quantization steps may differ."""
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import hgr

quantization = pytest.importorskip("onnxruntime.quantization")

BATCH = 64
CLASSES = 10


def _cnn(path):
    """Conv-Relu-MaxPool, Conv-Relu, GlobalAveragePool, Flatten, Gemm: 1x3x16x16 in,
    10 logits out, He-initialized from a fixed seed."""
    rng = np.random.default_rng(38)

    def weight(name, *shape):
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
        return numpy_helper.from_array((rng.standard_normal(shape) * np.sqrt(2 / fan_in)).astype(np.float32), name)

    inits = [weight("w1", 8, 3, 3, 3), numpy_helper.from_array(rng.standard_normal(8).astype(np.float32) * 0.1, "b1"),
             weight("w2", 16, 8, 3, 3), numpy_helper.from_array(rng.standard_normal(16).astype(np.float32) * 0.1, "b2"),
             weight("w3", CLASSES, 16), numpy_helper.from_array(np.zeros(CLASSES, np.float32), "b3")]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("GlobalAveragePool", ["r2"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "w3", "b3"], ["y"], transB=1),
    ]
    graph = helper.make_graph(nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 16, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", CLASSES])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


class _Calibration(quantization.CalibrationDataReader):
    def __init__(self):
        rng = np.random.default_rng(1)
        self.feeds = iter([{"x": rng.standard_normal((1, 3, 16, 16)).astype(np.float32)} for _ in range(16)])

    def get_next(self):
        return next(self.feeds, None)


@pytest.fixture(scope="module")
def float_cnn(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("quantized") / "cnn.onnx")
    _cnn(path)
    return path


def _compare(path, device):
    x = np.random.default_rng(2).standard_normal((BATCH, 3, 16, 16)).astype(np.float32)
    want = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    got = hgr.InferenceSession(path, providers=[device]).run(None, {"x": x})[0]
    error = np.linalg.norm(got - want) / np.linalg.norm(want)
    agreement = np.mean(np.argmax(got, axis=1) == np.argmax(want, axis=1))
    assert error <= 1e-2, f"relative L2 error {error:.3g}"
    assert agreement >= 0.98, f"top-1 agreement {agreement:.3f}"
    return error, agreement


@pytest.mark.parametrize("device", ["pocl:0", "rusticl:0"])
@pytest.mark.parametrize("per_channel", [False, True], ids=["per_tensor", "per_channel"])
def test_qdq_cnn_from_quantize_static_matches_onnx_runtime(float_cnn, tmp_path, device, per_channel):
    path = str(tmp_path / "cnn_qdq.onnx")
    quantization.quantize_static(float_cnn, path, _Calibration(), quant_format=quantization.QuantFormat.QDQ,
                                 per_channel=per_channel, activation_type=quantization.QuantType.QUInt8,
                                 weight_type=quantization.QuantType.QInt8)
    ops = {n.op_type for n in onnx.load(path).graph.node}
    assert {"QuantizeLinear", "DequantizeLinear"} <= ops
    _compare(path, device)

