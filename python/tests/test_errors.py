"""Errors raise the hgr.Error subclass of their status code, with a message that
names what is wrong."""
import numpy as np
import pytest

import hgr


def test_bad_model_bytes_are_an_invalid_argument():
    with pytest.raises(hgr.InvalidArgumentError) as caught:
        hgr.InferenceSession(b"\x08\x07this is not a model")
    assert "INVALID_ARGUMENT" in str(caught.value)


def test_a_missing_model_file_is_not_found(tmp_path):
    path = tmp_path / "missing.onnx"
    with pytest.raises(hgr.NotFoundError, match="missing.onnx"):
        hgr.InferenceSession(str(path))


def test_a_model_that_is_neither_path_nor_bytes_is_refused():
    with pytest.raises(hgr.InvalidArgumentError, match="path or the model's bytes"):
        hgr.InferenceSession(12345)


def test_an_unknown_provider_is_named(tiny_model):
    with pytest.raises(hgr.InvalidArgumentError, match="CUDAExecutionProvider"):
        hgr.InferenceSession(tiny_model[0], providers=["CUDAExecutionProvider"])


def test_a_provider_spec_naming_no_device_is_not_found(tiny_model):
    with pytest.raises(hgr.NotFoundError, match="gpu:7"):
        hgr.InferenceSession(tiny_model[0], providers=["gpu:7"])


def test_a_bad_place_rule_is_quoted(tiny_model):
    with pytest.raises(hgr.InvalidArgumentError, match="sideways"):
        hgr.InferenceSession(tiny_model[0], providers=["cpu:0"], place="sideways")


@pytest.fixture
def session(tiny_model):
    with hgr.InferenceSession(tiny_model[0]) as sess:
        yield sess


def test_a_wrong_input_name_is_not_found_and_lists_the_inputs(session):
    with pytest.raises(hgr.NotFoundError) as caught:
        session.run(None, {"x": np.ones((2, 4), np.float32), "nope": np.ones(1, np.float32)})
    assert "nope" in str(caught.value) and "x" in str(caught.value)


def test_a_missing_input_is_named(session):
    with pytest.raises(hgr.InvalidArgumentError, match="lacks input.*x"):
        session.run(None, {})


def test_a_wrong_output_name_is_not_found(session):
    with pytest.raises(hgr.NotFoundError, match="'w'"):
        session.run(["w"], {"x": np.ones((2, 4), np.float32)})


def test_a_wrong_shape_names_the_input_and_both_shapes(session):
    with pytest.raises(hgr.InvalidArgumentError) as caught:
        session.run(None, {"x": np.ones((3, 4), np.float32)})
    assert "'x'" in str(caught.value) and "(2, 4)" in str(caught.value) and "(3, 4)" in str(caught.value)


def test_a_wrong_dtype_names_the_input_and_both_dtypes(session):
    with pytest.raises(hgr.InvalidArgumentError) as caught:
        session.run(None, {"x": np.ones((2, 4), np.float64)})
    assert "'x'" in str(caught.value) and "float32" in str(caught.value) and "float64" in str(caught.value)


def test_an_input_without_a_buffer_is_named(session):
    with pytest.raises(hgr.InvalidArgumentError, match="x"):
        session.run(None, {"x": "not an array"})


def test_a_read_only_output_array_is_refused(session):
    out = np.zeros((2, 3), np.float32)
    out.flags.writeable = False
    with pytest.raises(hgr.InvalidArgumentError, match="read-only"):
        session.executor.bind_output(0, out)
