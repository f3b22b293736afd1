"""The test bed for the Python tests, as tests/testbed.cmake and CTest set it up:
an OCL_ICD_VENDORS folder with the system's ICD files plus Oclgrind's (which
Debian does not register), Mesa's rusticl on llvmpipe, two PoCL devices in one
context, and a program cache of the tests' own. Set before hgr is imported: the
OpenCL ICD loader reads them once."""
import glob
import os
import shutil
import tempfile

import pytest

_OCLGRIND_ICD = "/usr/lib/oclgrind/liboclgrind-rt-icd.so"


def _make_vendors_dir() -> str:
    folder = os.path.join(tempfile.gettempdir(), f"hgr-pytest-{os.getuid()}", "vendors")
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    for icd in glob.glob("/etc/OpenCL/vendors/*.icd"):
        shutil.copy(icd, folder)
    if os.path.exists(_OCLGRIND_ICD):
        with open(os.path.join(folder, "oclgrind.icd"), "w") as f:
            f.write(_OCLGRIND_ICD + "\n")
    return folder


if not os.environ.get("OCL_ICD_VENDORS"):
    os.environ["OCL_ICD_VENDORS"] = _make_vendors_dir()
os.environ.setdefault("RUSTICL_ENABLE", "llvmpipe")
os.environ.setdefault("POCL_DEVICES", "pthread pthread")
os.environ.setdefault("HGR_CACHE_DIR", os.path.join(tempfile.gettempdir(), f"hgr-pytest-{os.getuid()}", "cache"))

import hgr  # noqa: E402  (after the environment)

PLATFORMS = ["pocl:0", "rusticl:0", "oclgrind:0"]


def require_device(spec: str) -> dict:
    """The device spec names, or pytest.skip saying which platform is missing."""
    try:
        return hgr.find_device(spec)
    except hgr.NotFoundError as error:
        pytest.skip(f"no device {spec} on this machine: {error}")


@pytest.fixture(params=PLATFORMS)
def device(request) -> str:
    """Each test-bed platform in turn, skipped where it is absent."""
    require_device(request.param)
    return request.param


@pytest.fixture(scope="session")
def onnx_module():
    return pytest.importorskip("onnx", reason="onnx is not installed (pip install onnx)")


@pytest.fixture(scope="session")
def tiny_model(onnx_module):
    """A tiny ONNX model's bytes: y = Relu(x @ w + b), z = Neg(x); x [2, 4] float32."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(17)
    w = rng.standard_normal((4, 3)).astype(np.float32)
    b = rng.standard_normal(3).astype(np.float32)
    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "w"], ["xw"]),
            helper.make_node("Add", ["xw", "b"], ["xwb"]),
            helper.make_node("Relu", ["xwb"], ["y"]),
            helper.make_node("Neg", ["x"], ["z"]),
        ],
        "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3]),
            helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 4]),
        ],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model.SerializeToString(), w, b


class OnlyDlpack:
    """An object with nothing but DLPack (as torch and jax tensors offer)."""

    def __init__(self, array):
        self._array = array

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


def tiny_reference(x, w, b):
    import numpy as np

    return [np.maximum(x @ w + b, 0), -x]
