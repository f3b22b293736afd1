"""A YOLOv8-style detector as torch.onnx exports it (python/tests/detector_models.py:
Conv + written-out SiLU everywhere, C2f blocks with Split and Concat, SPPF's max
pools, nearest upsampling, the detect head's reshapes and concatenations), run by
hgr.InferenceSession against onnxruntime.InferenceSession as Ultralytics calls ONNX
Runtime: one session (exported with dynamic=True: the image's size symbolic), run(None,
{"images": letterboxed RGB}). pocl and rusticl run
YOLOv8n's widths at 320 x 320 and 256 x 416 (a letterboxed landscape frame);
Oclgrind, which simulates every work-item, a quarter-width one at 64 x 64."""
import numpy as np
import onnxruntime as ort
import pytest

import detector_models as dm
import hgr
from conftest import require_device

_models = {}


def _model(scale, classes):
    if (scale, classes) not in _models:
        _models[(scale, classes)] = dm.yolo_like(classes=classes, scale=scale, dynamic=True).SerializeToString()
    return _models[(scale, classes)]


def _compare(device, scale, classes, shapes):
    require_device(device)
    model = _model(scale, classes)
    ours = hgr.InferenceSession(model, providers=[device])
    theirs = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    for height, width in shapes:
        x = dm.image(height, width)
        (got,) = ours.run(None, {"images": x})
        (want,) = theirs.run(None, {"images": x})
        cells = (height // 8) * (width // 8) + (height // 16) * (width // 16) + (height // 32) * (width // 32)
        assert got.shape == want.shape == (1, 64 + classes, cells)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    return ours


@pytest.mark.parametrize("device", ["pocl:0", "rusticl:0"])
def test_yolo_like_detector_matches_onnx_runtime(device):
    ours = _compare(device, 1.0, 80, [(320, 320), (256, 416)])
    # every convolution but the head's last ones (6 of 63) takes its SiLU as its
    # epilogue: the sigmoid and the multiply join it (hgr/passes.h; the load report's
    # counts), and nothing else is left to fuse: 219 ONNX nodes, 114 graph nodes
    report = ours.load_report
    assert report["conv_epilogues"] == 57
    assert report["fused"] == 2 * 57
    assert report["graph_nodes"] == report["onnx_nodes"] - 2 * 57 + 9  # the 9 Split outputs' slices


def test_small_yolo_like_detector_on_oclgrind():
    _compare("oclgrind:0", 0.25, 4, [(64, 64)])
