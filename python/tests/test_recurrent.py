"""LSTM, GRU and RNN through the ONNX importer against ONNX Runtime, at hidden sizes
whose constant R the importer hands on transposed and padded (R^T, `r_transposed`:
H % 16 == 0) and at one it keeps as it is: the op tests (tests/test_ops_rnn.c) give
both forms to the kernels, these check that the importer writes R^T right."""
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import hgr


@pytest.mark.parametrize("op,gates,hidden,direction", [
    ("LSTM", 4, 16, "bidirectional"), ("LSTM", 4, 64, "forward"), ("GRU", 3, 32, "reverse"),
    ("RNN", 1, 16, "forward"), ("LSTM", 4, 12, "forward")])
def test_recurrence_matches_onnx_runtime(tmp_path, device, op, gates, hidden, direction):
    rng = np.random.default_rng(hidden)
    steps, batch, inputs = 7, 2, 5
    directions = 2 if direction == "bidirectional" else 1
    weights = [numpy_helper.from_array((rng.standard_normal(shape) * 0.3).astype(np.float32), name) for name, shape in [
        ("w", (directions, gates * hidden, inputs)), ("r", (directions, gates * hidden, hidden)),
        ("b", (directions, 2 * gates * hidden))]]
    lens = numpy_helper.from_array(np.array([steps, 4], np.int32), "lens")
    outputs = ["y", "y_h"] + (["y_c"] if op == "LSTM" else [])
    node = h.make_node(op, ["x", "w", "r", "b", "lens"], outputs, hidden_size=hidden, direction=direction)
    graph = h.make_graph([node], "recurrence", [h.make_tensor_value_info("x", T.FLOAT, [steps, batch, inputs])],
                         [h.make_tensor_value_info(name, T.FLOAT, None) for name in outputs], weights + [lens])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 14)])
    model.ir_version = 8
    path = str(tmp_path / "recurrence.onnx")
    onnx.save(model, path)
    x = rng.standard_normal((steps, batch, inputs)).astype(np.float32)
    got = hgr.InferenceSession(path, providers=[device]).run(None, {"x": x})
    want = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"x": x})
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
