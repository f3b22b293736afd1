"""A model-zoo model against its expected output, and the drop-in promise: ONNX
Runtime's and hgr's sessions, driven by the same function, give the same outputs."""
import glob
import os

import numpy as np
import pytest

import hgr
from conftest import require_device


def _light_model(name):
    onnx = pytest.importorskip("onnx", reason="onnx is not installed (pip install onnx)")
    folder = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
    path = os.path.join(folder, f"light_{name}.onnx")
    if not os.path.exists(path):
        pytest.skip(f"the onnx package has no {path}")
    from onnx import numpy_helper

    expected = onnx.TensorProto()
    with open(os.path.join(folder, f"light_{name}_output_0.pb"), "rb") as f:
        expected.ParseFromString(f.read())
    return path, numpy_helper.to_array(expected)


@pytest.mark.parametrize("spec", ["pocl:0", "rusticl:0"])
def test_light_squeezenet_gives_its_expected_output(spec):
    require_device(spec)
    path, expected = _light_model("squeezenet")
    with hgr.InferenceSession(path, providers=[spec]) as sess:
        (arg,) = sess.get_inputs()
        n = int(np.prod(arg.shape))
        x = (np.arange(n).reshape(arg.shape) / n).astype(np.float32)  # ONNX's input for the expected output
        (y,) = sess.run(None, {arg.name: x})
        assert y.shape == expected.shape
        np.testing.assert_allclose(y, expected, rtol=1e-3, atol=1e-7)


def run_model(session_class, model, x, **session_kwargs):
    """What a user writes for ONNX Runtime, unchanged for hgr: one function,
    either session class."""
    sess = session_class(model, **session_kwargs)
    name = sess.get_inputs()[0].name
    outputs = sess.run(None, {name: x})
    first = sess.run([sess.get_outputs()[0].name], {name: x})[0]
    return [(o.name, o.type, list(o.shape)) for o in sess.get_outputs()], outputs, first


def test_onnx_runtime_and_hgr_agree_through_the_same_calls(tiny_model):
    ort = pytest.importorskip("onnxruntime", reason="onnxruntime is not installed (pip install onnxruntime)")
    model = tiny_model[0]
    x = np.random.default_rng(5).standard_normal((2, 4)).astype(np.float32)
    want = run_model(ort.InferenceSession, model, x, providers=["CPUExecutionProvider"])
    got = run_model(hgr.InferenceSession, model, x, providers=["CPUExecutionProvider"])
    assert got[0] == want[0]
    for g, w in zip(got[1], want[1]):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[2], want[2], rtol=1e-5, atol=1e-6)


def test_onnx_runtime_and_hgr_agree_on_a_zoo_model():
    ort = pytest.importorskip("onnxruntime", reason="onnxruntime is not installed (pip install onnxruntime)")
    require_device("pocl:0")
    path, _ = _light_model("squeezenet")
    x = np.random.default_rng(7).random((1, 3, 224, 224), dtype=np.float32)
    want = run_model(ort.InferenceSession, path, x, providers=["CPUExecutionProvider"])
    got = run_model(hgr.InferenceSession, path, x, providers=["pocl:0"])
    assert got[0] == want[0]
    np.testing.assert_allclose(got[1][0], want[1][0], rtol=1e-3, atol=1e-6)
