"""Zero copy where the device shares host memory (PoCL: CL_DEVICE_HOST_UNIFIED_MEMORY):
an aligned input is bound as the device's buffer, and each output array is the
buffer the run's kernels write (the OpenCL buffer's CL_MEM_HOST_PTR is the
array's data pointer)."""
import numpy as np
import pytest

import hgr
from conftest import OnlyDlpack, require_device, tiny_reference


def test_aligned_inputs_and_the_outputs_are_the_devices_memory_on_pocl(tiny_model):
    info = require_device("pocl:0")
    assert info["unified_memory"], "PoCL's CPU device shares host memory"
    model, w, b = tiny_model
    with hgr.InferenceSession(model, providers=["pocl:0"]) as sess:
        x = hgr.empty("float32", [2, 4], info["base_address_align_bytes"])
        x[...] = np.arange(8, dtype=np.float32).reshape(2, 4)
        y, z = sess.run(None, {"x": x})
        assert sess.executor.binding_kind("input", "x") == "host_zero_copy"
        assert sess.executor.binding_kind("output", 0) == "host_zero_copy"
        assert sess.executor.binding_kind("output", 1) == "host_zero_copy"
        for index, array in enumerate((y, z)):
            with sess.output_buffer(index) as buffer:
                assert buffer.host_ptr == array.ctypes.data
        np.testing.assert_allclose(y, tiny_reference(x, w, b)[0], rtol=1e-5, atol=1e-6)


def test_an_unaligned_input_is_copied_and_still_right(tiny_model):
    require_device("pocl:0")
    model, w, b = tiny_model
    with hgr.InferenceSession(model, providers=["pocl:0"]) as sess:
        raw = hgr.empty("float32", [2 * 4 + 1], 128)
        x = raw[1:].reshape(2, 4)  # 4 bytes past an aligned address
        x[...] = 1
        (z,) = sess.run(["z"], {"x": x})
        assert sess.executor.binding_kind("input", "x") == "host_copy"
        np.testing.assert_array_equal(z, -x)


def test_dlpack_input_is_not_copied(tiny_model):
    info = require_device("pocl:0")
    model, _, _ = tiny_model
    with hgr.InferenceSession(model, providers=["pocl:0"]) as sess:
        x = hgr.empty("float32", [2, 4], info["base_address_align_bytes"])
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
