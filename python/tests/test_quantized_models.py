"""Models quantized by ONNX Runtime's own tool (onnxruntime.quantization), run by
hgr and by ONNX Runtime from the same file (issue 38): a small CNN with seeded
random weights, quantize_static in the QDQ and QOperator formats (per tensor and
per channel), and a BERT-like encoder through quantize_dynamic (as written, and as
ONNX Runtime's graph optimizer saves it: DynamicQuantizeMatMul,
MatMulIntegerToFloat, FusedMatMul), compared on a batch of 64 random inputs (the
encoder: 8 sequences): relative L2 error of the outputs at most 1e-2, top-1
agreement at least 98 %. A bidirectional LSTM through quantize_dynamic
(com.microsoft.DynamicQuantizeLSTM) is compared with ONNX Runtime's float LSTM on
the same weights dequantized (hgr's computation, to float32 rounding) and, more
loosely, with ONNX Runtime's own run of the file, which also rounds the input and
the hidden state to uint8 at each step. hgr computes between
QuantizeLinear and DequantizeLinear (and inside QLinearConv and friends) in
float32 on dequantized values; ONNX Runtime in integers, requantized with a float
multiplier, so single quantization steps may differ."""
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import hgr
import transformer_models

quantization = pytest.importorskip("onnxruntime.quantization")

BATCH = 64
CLASSES = 10


def _cnn(path, average_pool=True):
    """1x3x16x16 in, 10 logits out, He-initialized from a fixed seed: Conv-Relu-MaxPool,
    then two branches (Conv-LeakyRelu, Conv-Sigmoid) concatenated, a Conv added to
    the pooled input and multiplied by the sigmoid branch, AveragePool (optional),
    GlobalAveragePool, Flatten, Gemm: in ONNX Runtime's QOperator format every op
    of its list (QLinearConv, QLinearAdd, QLinearMul, QLinearConcat,
    QLinearLeakyRelu, QLinearSigmoid, QLinearAveragePool, QLinearGlobalAveragePool,
    QGemm, MaxPool on uint8)."""
    rng = np.random.default_rng(38)

    def weight(name, *shape):
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
        return numpy_helper.from_array((rng.standard_normal(shape) * np.sqrt(2 / fan_in)).astype(np.float32), name)

    def bias(name, n):
        return numpy_helper.from_array((rng.standard_normal(n) * 0.1).astype(np.float32), name)

    inits = [weight("w1", 8, 3, 3, 3), bias("b1", 8), weight("wa", 4, 8, 3, 3), bias("ba", 4),
             weight("wb", 4, 8, 1, 1), bias("bb", 4), weight("w4", 8, 8, 3, 3), bias("b4", 8),
             weight("w5", CLASSES, 8), bias("b5", CLASSES)]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "wa", "ba"], ["ca"], pads=[1, 1, 1, 1]),
        helper.make_node("LeakyRelu", ["ca"], ["la"], alpha=0.1),
        helper.make_node("Conv", ["p1", "wb", "bb"], ["cb"]),
        helper.make_node("Sigmoid", ["cb"], ["sb"]),
        helper.make_node("Concat", ["la", "sb"], ["cat"], axis=1),
        helper.make_node("Conv", ["cat", "w4", "b4"], ["c4"], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c4", "p1"], ["sum"]),
        helper.make_node("Mul", ["sum", "cat"], ["prod"]),
        helper.make_node("AveragePool", ["prod"], ["ap"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("GlobalAveragePool", ["ap" if average_pool else "prod"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "w5", "b5"], ["y"], transB=1),
    ]
    if not average_pool:
        nodes = [n for n in nodes if n.op_type != "AveragePool"]
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
def float_cnns(tmp_path_factory):
    folder = tmp_path_factory.mktemp("quantized")
    paths = {pool: str(folder / f"cnn_pool{int(pool)}.onnx") for pool in (True, False)}
    for pool, path in paths.items():
        _cnn(path, average_pool=pool)
    return paths


def _compare(path, device):
    x = np.random.default_rng(2).standard_normal((BATCH, 3, 16, 16)).astype(np.float32)
    want = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    session = hgr.InferenceSession(path, providers=[device])
    got = session.run(None, {"x": x})[0]
    pairs = _activation_pairs(onnx.load(path).graph)  # none in the QOperator format
    assert session.load_report["fused"] >= pairs, f"{pairs} QDQ pairs, {session.load_report['fused']} fused"
    error = np.linalg.norm(got - want) / np.linalg.norm(want)
    agreement = np.mean(np.argmax(got, axis=1) == np.argmax(want, axis=1))
    assert error <= 1e-2, f"relative L2 error {error:.3g}"
    assert agreement >= 0.98, f"top-1 agreement {agreement:.3f}"
    return error, agreement


def _activation_pairs(graph):
    """The QuantizeLinear nodes whose output only one DequantizeLinear reads, with the
    same scale and zero point: hgr imports each pair as float arithmetic (fused)."""
    readers = {}
    for node in graph.node:
        for name in node.input:
            readers.setdefault(name, []).append(node)
    pairs = 0
    for node in graph.node:
        after = readers.get(node.output[0], []) if node.op_type == "QuantizeLinear" else []
        pairs += len(after) == 1 and after[0].op_type == "DequantizeLinear" and \
            list(after[0].input[1:]) == list(node.input[1:]) and node.output[0] not in [o.name for o in graph.output]
    return pairs


@pytest.mark.parametrize("device", ["pocl:0", "rusticl:0"])
@pytest.mark.parametrize("per_channel", [False, True], ids=["per_tensor", "per_channel"])
@pytest.mark.parametrize("quant_format", ["QDQ", "QOperator"])
def test_cnn_from_quantize_static_matches_onnx_runtime(float_cnns, tmp_path, device, per_channel, quant_format):
    """In the QDQ format without the AveragePool: its quantize shares the input's
    scale, so a 2x2 average falls halfway between two steps a quarter of the time,
    and ONNX Runtime's fused QLinearAveragePool rounds those ties otherwise than
    QuantizeLinear (half to even), which hgr computes; the next test pins that."""
    path = str(tmp_path / "cnn_quantized.onnx")
    quantization.quantize_static(float_cnns[quant_format == "QOperator"], path, _Calibration(),
                                 quant_format=quantization.QuantFormat[quant_format], per_channel=per_channel,
                                 activation_type=quantization.QuantType.QUInt8,
                                 weight_type=quantization.QuantType.QInt8)
    ops = {n.op_type for n in onnx.load(path).graph.node}
    if quant_format == "QDQ":
        assert {"QuantizeLinear", "DequantizeLinear", "Conv", "Gemm"} <= ops
        assert _activation_pairs(onnx.load(path).graph) > 0
    else:
        assert {"QLinearConv", "QLinearAdd", "QLinearMul", "QLinearConcat", "QLinearLeakyRelu", "QLinearSigmoid",
                "QLinearAveragePool", "QLinearGlobalAveragePool", "QGemm", "MaxPool"} <= ops, ops
    _compare(path, device)


def test_qdq_average_pool_differs_from_onnx_runtime_only_at_ties(float_cnns, tmp_path):
    """The QDQ model with the AveragePool, its pool's quantized output compared:
    where hgr and ONNX Runtime differ, the average of the dequantized window
    divided by the scale lies exactly halfway between two integers (hgr rounds it
    to even, as QuantizeLinear says; ONNX Runtime's fused kernel does not), and
    nowhere else. ONNX Runtime without graph optimizations agrees with hgr there."""
    path = str(tmp_path / "cnn_qdq_pool.onnx")
    quantization.quantize_static(float_cnns[True], path, _Calibration(), quant_format=quantization.QuantFormat.QDQ,
                                 activation_type=quantization.QuantType.QUInt8,
                                 weight_type=quantization.QuantType.QInt8)
    model = onnx.load(path)
    nodes = {n.output[0]: n for n in model.graph.node}
    pooled = next(n for n in model.graph.node if n.op_type == "QuantizeLinear" and n.input[0] == "ap")
    window = nodes[nodes["ap"].input[0]]  # DequantizeLinear of the pool's input
    for name in (pooled.output[0], window.input[0]):
        model.graph.output.append(helper.make_tensor_value_info(name, TensorProto.UINT8, None))
    onnx.save(model, path)
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    scale, zero = (inits[pooled.input[1]], inits[pooled.input[2]].astype(np.float64))
    x = np.random.default_rng(2).standard_normal((BATCH, 3, 16, 16)).astype(np.float32)
    _, want, source = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"x": x})
    _, got, same_source = hgr.InferenceSession(path, providers=["pocl:0"]).run(None, {"x": x})
    np.testing.assert_array_equal(same_source, source)
    values = (source.astype(np.float64) - zero) * scale
    n, c, h, w = values.shape
    average = values.reshape(n, c, h // 2, 2, w // 2, 2).mean(axis=(3, 5)) / scale
    ties = np.abs(average - np.floor(average) - 0.5) < 1e-4
    differ = got != want
    assert differ.any() and ties.any()
    assert not (differ & ~ties).any(), "hgr and ONNX Runtime differ away from a tie"
    assert np.all(np.abs(got.astype(int) - want.astype(int)) <= 1)
    plain = ort.SessionOptions()
    plain.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    _, unfused, _ = ort.InferenceSession(path, plain, providers=["CPUExecutionProvider"]).run(None, {"x": x})
    assert np.mean(got != unfused) < 0.02  # float32 sums in another order


@pytest.mark.parametrize("device", ["pocl:0", "rusticl:0"])
@pytest.mark.parametrize("optimized", ["no", "after", "before"], ids=["as_quantized", "ort_optimized",
                                                                       "transformer_optimizer_first"])
def test_encoder_from_quantize_dynamic_matches_onnx_runtime(tmp_path, device, optimized):
    """quantize_dynamic writes DynamicQuantizeLinear and MatMulInteger for every
    MatMul with constant weights: the encoder's projections and feed-forward. ONNX
    Runtime's optimizer (optimized_model_filepath) fuses them to its contrib ops;
    quantizing what its transformer optimizer wrote quantizes the embedding tables
    too (QEmbedLayerNormalization)."""
    source, path = str(tmp_path / "bert.onnx"), str(tmp_path / "bert_dynamic.onnx")
    onnx.save(transformer_models.bert(layers=2, width=64, heads=4, vocab=100), source)
    expected = {"DynamicQuantizeLinear", "MatMulInteger"}
    options = {}
    if optimized == "before":
        transformer_models.ort_optimize(source, str(tmp_path / "bert_fused.onnx"), num_heads=4, hidden_size=64)
        source = str(tmp_path / "bert_fused.onnx")
        options = {"DefaultTensorType": TensorProto.FLOAT}  # the fused model's types are not inferred
        expected |= {"QEmbedLayerNormalization", "SkipLayerNormalization"}
    quantization.quantize_dynamic(source, path, weight_type=quantization.QuantType.QInt8, extra_options=options)
    if optimized == "after":
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
        options.optimized_model_filepath = path = str(tmp_path / "bert_dynamic_optimized.onnx")
        ort.InferenceSession(str(tmp_path / "bert_dynamic.onnx"), options, providers=["CPUExecutionProvider"])
        expected = {"DynamicQuantizeMatMul", "MatMulIntegerToFloat", "FusedMatMul"}
    ops = {n.op_type for n in onnx.load(path).graph.node}
    assert expected <= ops, ops
    rng = np.random.default_rng(4)
    feeds = {"input_ids": rng.integers(0, 100, (8, 16)), "attention_mask": np.ones((8, 16), np.int64),
             "token_type_ids": rng.integers(0, 2, (8, 16))}
    want = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, feeds)
    got = hgr.InferenceSession(path, providers=[device]).run(None, feeds)
    for g, w in zip(got, want):
        error = np.linalg.norm(g - w) / np.linalg.norm(w)
        assert error <= 1e-2, f"relative L2 error {error:.3g}"



def _lstm_model(path, hidden=32, inputs=16, classes=5):
    """A bidirectional LSTM over [T, B, inputs] and a MatMul of its steps to classes."""
    rng = np.random.default_rng(8)
    weights = [("W", (2, 4 * hidden, inputs), 0.3), ("R", (2, 4 * hidden, hidden), 0.3), ("B", (2, 8 * hidden), 0.1),
               ("Wo", (2 * hidden, classes), 0.3)]
    initializers = [numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)
                    for name, shape, scale in weights]
    initializers.append(numpy_helper.from_array(np.array([0, 0, -1], np.int64), "shape"))
    nodes = [helper.make_node("LSTM", ["x", "W", "R", "B"], ["y", "y_h", "y_c"], hidden_size=hidden,
                              direction="bidirectional"),
             helper.make_node("Transpose", ["y"], ["y_t"], perm=[0, 2, 1, 3]),
             helper.make_node("Reshape", ["y_t", "shape"], ["steps"]),
             helper.make_node("MatMul", ["steps", "Wo"], ["logits"])]
    graph = helper.make_graph(nodes, "lstm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["T", "B", inputs])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, None),
                               helper.make_tensor_value_info("y_h", TensorProto.FLOAT, None)], initializers)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]), path)


def _float_lstms(path, out_path):
    """The model with each DynamicQuantizeLSTM an LSTM on its weights dequantized
    (and transposed to the LSTM's [D, 4H, rows])."""
    model = onnx.load(path)
    constants = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    for index, node in enumerate(list(model.graph.node)):
        if node.op_type != "DynamicQuantizeLSTM":
            continue
        names = list(node.input) + [""] * (12 - len(node.input))
        for k, (w, scale, zero) in enumerate([(1, 8, 9), (2, 10, 11)]):
            s = constants[names[scale]].reshape(-1, 1, 1) if constants[names[scale]].ndim == 1 \
                else constants[names[scale]][:, None, :]
            z = constants[names[zero]].astype(np.float32) if names[zero] else np.zeros_like(s)
            z = z.reshape(s.shape)
            value = ((constants[names[w]].astype(np.float32) - z) * s).transpose(0, 2, 1)
            model.graph.initializer.append(numpy_helper.from_array(value.astype(np.float32), f"{node.name}_w{k}"))
            names[w] = f"{node.name}_w{k}"
        lstm = helper.make_node("LSTM", names[:8], list(node.output), name=node.name + "_float")
        lstm.attribute.extend(node.attribute)
        model.graph.node.remove(node)
        model.graph.node.insert(index, lstm)
    onnx.save(model, out_path)


@pytest.mark.parametrize("device", ["pocl:0", "rusticl:0"])
def test_lstm_from_quantize_dynamic_matches_onnx_runtime(tmp_path, device):
    source, path, reference = (str(tmp_path / n) for n in ("lstm.onnx", "lstm_dynamic.onnx", "lstm_float.onnx"))
    _lstm_model(source)
    quantization.quantize_dynamic(source, path, weight_type=quantization.QuantType.QInt8)
    assert {"DynamicQuantizeLSTM", "MatMulInteger"} <= {n.op_type for n in onnx.load(path).graph.node}
    _float_lstms(path, reference)
    x = np.random.default_rng(9).standard_normal((10, 3, 16)).astype(np.float32)
    session = hgr.InferenceSession(path, providers=[device])
    for steps in (10, 4):  # the time axis is symbolic
        feeds = {"x": x[:steps]}
        got = session.run(None, feeds)
        floats = ort.InferenceSession(reference, providers=["CPUExecutionProvider"]).run(None, feeds)
        theirs = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, feeds)
        for g, f, t in zip(got, floats, theirs):
            np.testing.assert_allclose(g, f, rtol=1e-4, atol=1e-5)
            error = np.linalg.norm(g - t) / np.linalg.norm(t)
            assert error <= 3e-2, f"relative L2 error {error:.3g} from ONNX Runtime's quantized run"


def _dynamic_lstm(path, scales=("ws", "rs"), scale_count=2):
    """A DynamicQuantizeLSTM node as quantize_dynamic writes it (hidden 2, 3 inputs)."""
    rng = np.random.default_rng(10)
    initializers = [numpy_helper.from_array(rng.integers(-127, 128, (2, 3, 8)).astype(np.int8), "w"),
                    numpy_helper.from_array(rng.integers(-127, 128, (2, 2, 8)).astype(np.int8), "r"),
                    numpy_helper.from_array(np.full(scale_count, 0.02, np.float32), "ws"),
                    numpy_helper.from_array(np.zeros(scale_count, np.int8), "wz"),
                    numpy_helper.from_array(np.full(scale_count, 0.03, np.float32), "rs"),
                    numpy_helper.from_array(np.zeros(scale_count, np.int8), "rz")]
    node = helper.make_node("DynamicQuantizeLSTM", ["x", "w", "r", "", "", "", "", "", scales[0], "wz", scales[1], "rz"],
                            ["y"], domain="com.microsoft", hidden_size=2, direction="bidirectional")
    graph = helper.make_graph([node], "lstm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 1, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializers)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14),
                                                      helper.make_opsetid("com.microsoft", 1)]), path)


@pytest.mark.parametrize("case,match", [
    ("no_scale", "input 10 \\(R's scale\\) is required, but the node omits it"),
    ("scale_count", "input 8 \\(W's or R's scale\\) holds 3 elements; it must hold 2 or 16")])
def test_dynamic_quantize_lstm_names_what_it_refuses(tmp_path, case, match):
    path = str(tmp_path / "lstm.onnx")
    _dynamic_lstm(path, scales=("ws", "") if case == "no_scale" else ("ws", "rs"),
                  scale_count=3 if case == "scale_count" else 2)
    with pytest.raises(hgr.InvalidArgumentError, match=match):
        hgr.InferenceSession(path, providers=["pocl:0"]).run(None, {"x": np.zeros((4, 1, 3), np.float32)})


def test_an_int32_dequantize_folds_at_load_to_what_the_device_computes(tmp_path):
    """A QDQ model's int32 biases are dequantized at load (the load report counts the
    fold); the same node with its input given at run time is the device's kernel:
    both give (x - zero point) * scale per channel, rounded as the kernel rounds."""
    rng = np.random.default_rng(13)
    q = rng.integers(-2**31, 2**31 - 1, (3, 5), dtype=np.int64).astype(np.int32)
    scale = rng.uniform(1e-6, 1e-3, 3).astype(np.float32)
    zero = rng.integers(-1000, 1000, 3).astype(np.int32)
    paths = {}
    for constant in (True, False):
        node = helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], axis=0)
        initializers = [numpy_helper.from_array(scale, "s"), numpy_helper.from_array(zero, "z")]
        inputs = []
        if constant:
            initializers.append(numpy_helper.from_array(q, "q"))
        else:
            inputs.append(helper.make_tensor_value_info("q", TensorProto.INT32, [3, 5]))
        graph = helper.make_graph([node], "dq", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                                  initializers)
        paths[constant] = str(tmp_path / f"dq_{constant}.onnx")
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), paths[constant])
    folded = hgr.InferenceSession(paths[True], providers=["pocl:0"])
    got = folded.run(None, {})[0]
    assert folded.load_report["folded"] == 1
    computed = hgr.InferenceSession(paths[False], providers=["pocl:0"]).run(None, {"q": q})[0]
    want = ((q.astype(np.int64) - zero[:, None]).astype(np.float32) * scale[:, None]).astype(np.float32)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(computed, want)


@pytest.mark.parametrize("device", ["pocl:0", "rusticl:0"])
@pytest.mark.parametrize("op", ["MatMulInteger", "QLinearMatMul", "DynamicQuantizeMatMul", "MatMulIntegerToFloat"])
@pytest.mark.parametrize("weight_type", [np.int8, np.uint8])
@pytest.mark.parametrize("per_column", [False, True], ids=["per_tensor", "per_column"])
def test_quantized_matmuls_of_constant_weights_match_onnx_runtime(tmp_path, device, op, weight_type, per_column):
    """Each quantized matmul whose weights are a constant matrix (hgr keeps them in
    their width on the device and dequantizes them in the product's loads:
    dequantize_matmul) against ONNX Runtime, with zero points off zero, per tensor
    and per column, biases where the op takes one; 40 columns: a strip of the
    kernel's 32 and a shifted one. Integer outputs exactly (MatMulInteger's sums
    stay exact in float32 at this depth), quantized ones within a step."""
    rng = np.random.default_rng(17)
    m, k, n = 6, 48, 40
    info = np.iinfo(weight_type)
    w = rng.integers(info.min, info.max + 1, (k, n)).astype(weight_type)
    columns = n if per_column else 1
    wz = rng.integers(info.min // 4 + info.max // 4, info.max // 2 + 1, columns).astype(weight_type)
    ws = rng.uniform(1e-3, 2e-2, columns).astype(np.float32)
    if not per_column:
        wz, ws = wz.reshape(()), ws.reshape(())
    a = rng.integers(0, 256, (2, m, k)).astype(np.uint8)
    x = rng.standard_normal((2, m, k)).astype(np.float32)
    consts = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(wz, "wz"), numpy_helper.from_array(ws, "ws"),
              numpy_helper.from_array(np.array(131, np.uint8), "az"),
              numpy_helper.from_array(np.array(0.02, np.float32), "as"),
              numpy_helper.from_array(np.array(0.5, np.float32), "ys"),
              numpy_helper.from_array(np.array(120, np.uint8), "yz"),
              numpy_helper.from_array(rng.standard_normal(n).astype(np.float32), "bias")]
    ms = "com.microsoft"
    node, feed, out_type = {
        "MatMulInteger": (helper.make_node("MatMulInteger", ["a", "w", "az", "wz"], ["y"]), {"a": a},
                          TensorProto.INT32),
        "QLinearMatMul": (helper.make_node("QLinearMatMul", ["a", "as", "az", "w", "ws", "wz", "ys", "yz"], ["y"]),
                          {"a": a}, TensorProto.UINT8),
        "DynamicQuantizeMatMul": (helper.make_node("DynamicQuantizeMatMul", ["x", "w", "ws", "wz", "bias"], ["y"],
                                                   domain=ms), {"x": x}, TensorProto.FLOAT),
        "MatMulIntegerToFloat": (helper.make_node("MatMulIntegerToFloat", ["a", "w", "as", "ws", "az", "wz", "bias"],
                                                  ["y"], domain=ms), {"a": a}, TensorProto.FLOAT),
    }[op]
    (name, value), = feed.items()
    in_type = TensorProto.FLOAT if value.dtype == np.float32 else TensorProto.UINT8
    graph = helper.make_graph([node], "qmatmul", [helper.make_tensor_value_info(name, in_type, list(value.shape))],
                              [helper.make_tensor_value_info("y", out_type, None)], consts)
    path = str(tmp_path / "qmatmul.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid(ms, 1)]), path)
    want = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, feed)[0]
    got = hgr.InferenceSession(path, providers=[device]).run(None, feed)[0]
    assert got.dtype == want.dtype and got.shape == want.shape
    if out_type == TensorProto.INT32:
        np.testing.assert_array_equal(got, want)
    elif out_type == TensorProto.UINT8:
        assert np.abs(got.astype(np.int32) - want.astype(np.int32)).max() <= 1
    else:
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())


@pytest.mark.parametrize("device", ["pocl:0", "rusticl:0"])
@pytest.mark.parametrize("values", ["mixed", "positive", "negative", "zeros"])
def test_dynamic_quantize_linear_matches_onnx_runtime(tmp_path, device, values):
    """DynamicQuantizeLinear's three outputs equal ONNX Runtime's, all-zero input
    included (ONNX Runtime's scale of 1 there, not 0 / 255)."""
    rng = np.random.default_rng(19)
    x = {"mixed": rng.uniform(-3, 5, (7, 300)), "positive": rng.uniform(0.5, 9, (7, 300)),
         "negative": rng.uniform(-7, -0.25, (7, 300)), "zeros": np.zeros((7, 300))}[values].astype(np.float32)
    node = helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"])
    graph = helper.make_graph([node], "dql", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [7, 300])],
                              [helper.make_tensor_value_info(n, t, None) for n, t in
                               (("y", TensorProto.UINT8), ("s", TensorProto.FLOAT), ("z", TensorProto.UINT8))])
    path = str(tmp_path / "dql.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    want = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"x": x})
    got = hgr.InferenceSession(path, providers=[device]).run(None, {"x": x})
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


def _mlp(path):
    """x [8, 64] -> MatMul (64 x 96) -> Relu -> Gemm (transB, 96 -> 40, bias): seeded
    random weights."""
    rng = np.random.default_rng(23)
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node("Relu", ["h"], ["r"]),
             helper.make_node("Gemm", ["r", "w2", "b2"], ["y"], transB=1)]
    weights = [numpy_helper.from_array(rng.standard_normal((64, 96)).astype(np.float32), "w1"),
               numpy_helper.from_array(rng.standard_normal((40, 96)).astype(np.float32), "w2"),
               numpy_helper.from_array(rng.standard_normal(40).astype(np.float32), "b2")]
    graph = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 64])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [8, 40])], weights)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)


@pytest.mark.parametrize("device", ["pocl:0", "rusticl:0"])
@pytest.mark.parametrize("per_channel", [False, True], ids=["per_tensor", "per_channel"])
def test_qdq_matmul_and_gemm_read_their_weights_in_8_bits(tmp_path, device, per_channel):
    """quantize_static's QDQ MatMul and Gemm (transB, bias): their DequantizeLinear of
    int8 weights folds at load, and the product reads the int8 weights (the device
    holds a quarter of the float model's weight bytes); outputs against ONNX
    Runtime's on the same file."""
    source, target = str(tmp_path / "mlp.onnx"), str(tmp_path / "mlp_qdq.onnx")
    _mlp(source)

    class Images:
        def __init__(self):
            rng = np.random.default_rng(29)
            self.feeds = iter([{"x": rng.standard_normal((8, 64)).astype(np.float32)} for _ in range(4)])

        def get_next(self):
            return next(self.feeds, None)

    quantization.quantize_static(source, target, Images(), quant_format=quantization.QuantFormat.QDQ,
                                 per_channel=per_channel, weight_type=quantization.QuantType.QInt8,
                                 activation_type=quantization.QuantType.QUInt8)
    x = np.random.default_rng(31).standard_normal((8, 64)).astype(np.float32)
    want = ort.InferenceSession(target, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    session = hgr.InferenceSession(target, providers=[device])
    got = session.run(None, {"x": x})[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
    float_bytes = hgr.InferenceSession(source, providers=[device]).load_report["device_bytes"]
    weight_bytes = 4 * (64 * 96 + 40 * 96)
    assert session.load_report["device_bytes"] < float_bytes - weight_bytes // 2
