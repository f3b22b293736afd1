"""hgr.InferenceSession checks each fed input's rank and dims against the model
as ONNX Runtime does: a rank or a fixed dim that differs is refused with ORT's
message (hgr.InvalidArgumentError), even when the element count matches; a
symbolic dim takes any extent."""
import numpy as np
import pytest

import hgr
from conftest import OnlyDlpack, require_device


def _relu_model(dims):
    """A model y = Relu(x) whose input x is declared with dims (ints or names)."""
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "relu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, dims)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model.SerializeToString()


@pytest.fixture(scope="module")
def nhwc_model(onnx_module):
    return _relu_model([1, 6, 6, 3])


@pytest.fixture(scope="module")
def pocl():
    require_device("pocl:0")
    return "pocl:0"


def _feed(shape):
    return np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) - 20


def test_an_input_of_another_rank_is_refused_with_onnx_runtimes_message(nhwc_model, pocl):
    with hgr.InferenceSession(nhwc_model, providers=[pocl]) as sess:
        with pytest.raises(hgr.InvalidArgumentError,
                           match="Invalid rank for input: x Got: 3 Expected: 4 Please fix either the inputs/outputs "
                                 "or the model."):
            sess.run(None, {"x": _feed((6, 6, 3))})


def test_an_input_with_another_fixed_dim_is_refused_naming_each_index(nhwc_model, pocl):
    with hgr.InferenceSession(nhwc_model, providers=[pocl]) as sess:
        with pytest.raises(hgr.InvalidArgumentError) as refused:
            sess.run(None, {"x": _feed((1, 3, 6, 6))})  # NCHW for an NHWC input: the same element count
        assert (
            "Got invalid dimensions for input: x for the following indices\n"
            " index: 1 Got: 3 Expected: 6\n index: 3 Got: 6 Expected: 3\n"
            " Please fix either the inputs/outputs or the model.\n"
            " input 'x': the model's dims are (1, 6, 6, 3), the array's (1, 3, 6, 6)") in str(refused.value)


def test_an_input_of_the_declared_shape_still_runs(nhwc_model, pocl):
    x = _feed((1, 6, 6, 3))
    with hgr.InferenceSession(nhwc_model, providers=[pocl]) as sess:
        (y,) = sess.run(None, {"x": x})
        np.testing.assert_array_equal(y, np.maximum(x, 0))


def test_onnx_runtime_refuses_the_same_inputs_with_the_same_words(nhwc_model):
    ort = pytest.importorskip("onnxruntime")
    sess = ort.InferenceSession(nhwc_model, providers=["CPUExecutionProvider"])
    with pytest.raises(Exception, match="Invalid rank for input: x Got: 3 Expected: 4 Please fix either the inputs/outputs "
                                        "or the model."):
        sess.run(None, {"x": _feed((6, 6, 3))})
    with pytest.raises(Exception, match="Got invalid dimensions for input: x for the following indices\n"
                                        " index: 1 Got: 3 Expected: 6\n index: 3 Got: 6 Expected: 3\n"
                                        " Please fix either the inputs/outputs or the model."):
        sess.run(None, {"x": _feed((1, 3, 6, 6))})


def test_a_symbolic_dim_takes_any_extent_in_one_session(onnx_module, pocl):
    model = _relu_model(["N", 4])
    # input_shapes only prepares a first shape; every other one runs too, at its own
    # first call, while the fixed dim's check stays ORT's.
    with hgr.InferenceSession(model, providers=[pocl], input_shapes={"x": [3, 4]}) as sess:
        assert sess.get_inputs()[0].shape == ["N", 4]
        assert sess.load_report["created"] == 1
        for n in (3, 5, 1, 3, 8):
            x = _feed((n, 4))
            (y,) = sess.run(None, {"x": x})
            np.testing.assert_array_equal(y, np.maximum(x, 0))
        report = sess.load_report
        assert (report["created"], report["hits"]) == (4, 2)  # 3 was made at creation
        with pytest.raises(hgr.InvalidArgumentError, match=r"index: 1 Got: 2 Expected: 4\n Please fix either the "
                                                           r"inputs/outputs or the model\."):
            sess.run(None, {"x": _feed((6, 2))})


def test_a_dlpack_input_of_another_rank_is_refused_too(nhwc_model, pocl):
    with hgr.InferenceSession(nhwc_model, providers=[pocl]) as sess:
        with pytest.raises(hgr.InvalidArgumentError, match="Invalid rank for input: x Got: 2 Expected: 4"):
            sess.run(None, {"x": OnlyDlpack(_feed((36, 3)))})
