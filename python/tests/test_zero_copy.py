"""Zero copy where the device shares host memory (PoCL: CL_DEVICE_HOST_UNIFIED_MEMORY):
an aligned input of at least 64 KiB is bound as the device's buffer, and each output
array of at least 64 KiB is the buffer the run's kernels write (the OpenCL buffer's
CL_MEM_HOST_PTR is the array's data pointer); smaller ones are copied, which costs
less than mapping them (executor.h, "caller-owned memory")."""
import numpy as np
import pytest

import hgr
from conftest import OnlyDlpack, require_device, tiny_reference

ROWS = 128  # x [ROWS, 128] float32: 64 KiB


@pytest.fixture(scope="module")
def wide_model(onnx_module):
    """tiny_model's graph at 64 KiB a tensor: y = Relu(x @ w + b), z = Neg(x); x, y, z
    [ROWS, 128] float32."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(19)
    w = rng.standard_normal((128, 128)).astype(np.float32)
    b = rng.standard_normal(128).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["xw"]), helper.make_node("Add", ["xw", "b"], ["xwb"]),
         helper.make_node("Relu", ["xwb"], ["y"]), helper.make_node("Neg", ["x"], ["z"])],
        "wide", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [ROWS, 128])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [ROWS, 128]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, [ROWS, 128])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model.SerializeToString(), w, b


def test_aligned_inputs_and_the_outputs_are_the_devices_memory_on_pocl(wide_model):
    info = require_device("pocl:0")
    assert info["unified_memory"], "PoCL's CPU device shares host memory"
    model, w, b = wide_model
    with hgr.InferenceSession(model, providers=["pocl:0"]) as sess:
        x = hgr.empty("float32", [ROWS, 128], info["base_address_align_bytes"])
        x[...] = np.random.default_rng(1).standard_normal((ROWS, 128))
        y, z = sess.run(None, {"x": x})
        assert sess.executor.binding_kind("input", "x") == "host_zero_copy"
        assert sess.executor.binding_kind("output", 0) == "host_zero_copy"
        assert sess.executor.binding_kind("output", 1) == "host_zero_copy"
        for index, array in enumerate((y, z)):
            with sess.output_buffer(index) as buffer:
                assert buffer.host_ptr == array.ctypes.data
        np.testing.assert_allclose(y, tiny_reference(x, w, b)[0], rtol=1e-4, atol=1e-4)


def test_tensors_under_64_kib_are_copied(tiny_model):
    info = require_device("pocl:0")
    model, w, b = tiny_model
    with hgr.InferenceSession(model, providers=["pocl:0"]) as sess:
        x = hgr.empty("float32", [2, 4], info["base_address_align_bytes"])
        x[...] = np.arange(8, dtype=np.float32).reshape(2, 4)
        y, z = sess.run(None, {"x": x})
        assert sess.executor.binding_kind("input", "x") == "host_copy"
        assert sess.executor.binding_kind("output", 0) == "host_copy"
        assert sess.executor.binding_kind("output", 1) == "host_copy"
        np.testing.assert_allclose(y, tiny_reference(x, w, b)[0], rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(z, -x)


def test_an_unaligned_input_is_copied_and_still_right(wide_model):
    require_device("pocl:0")
    model, w, b = wide_model
    with hgr.InferenceSession(model, providers=["pocl:0"]) as sess:
        raw = hgr.empty("float32", [ROWS * 128 + 1], 128)
        x = raw[1:].reshape(ROWS, 128)  # 4 bytes past an aligned address
        x[...] = 1
        (z,) = sess.run(["z"], {"x": x})
        assert sess.executor.binding_kind("input", "x") == "host_copy"
        np.testing.assert_array_equal(z, -x)


def test_dlpack_input_is_not_copied(wide_model):
    info = require_device("pocl:0")
    model, _, _ = wide_model
    with hgr.InferenceSession(model, providers=["pocl:0"]) as sess:
        x = hgr.empty("float32", [ROWS, 128], info["base_address_align_bytes"])
        x[...] = 3
        (z,) = sess.run(["z"], {"x": OnlyDlpack(x)})
        assert sess.executor.binding_kind("input", "x") == "host_zero_copy"
        np.testing.assert_array_equal(z, -x)


def test_pyopencl_takes_the_output_buffer(tiny_model):
    cl = pytest.importorskip("pyopencl", reason="pyopencl is not installed (it is optional)")
    require_device("pocl:0")
    with hgr.InferenceSession(tiny_model[0], providers=["pocl:0"]) as sess:
        (z,) = sess.run(["z"], {"x": np.ones((2, 4), np.float32)})
        with sess.output_buffer("z") as buffer:
            buf = buffer.to_pyopencl()
            assert isinstance(buf, cl.Buffer)
            assert buf.int_ptr == buffer.mem
            assert buf.size >= buffer.bytes
