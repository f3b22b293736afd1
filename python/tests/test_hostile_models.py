"""The hostile files of issue 33 (tests/data/hostile/, written by make_models.py
there) through hgr.InferenceSession, as a library would open a model it was
handed: each is refused with the error class and message of the C loader, from a
path and from bytes alike, and nothing crashes."""
import os

import pytest

import hgr

HOSTILE = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data", "hostile")

CASES = [
    ("reshape_overflow_gather", hgr.InvalidArgumentError, "element count exceeds 2^63 - 1 at shape[1] = 4"),
    ("reshape_overflow_slice", hgr.InvalidArgumentError, "element count exceeds 2^63 - 1"),
    ("omitted_input_sum", hgr.InvalidArgumentError, "input 0 is required, but the node omits it"),
    ("omitted_input_max", hgr.InvalidArgumentError, "input 0 is required, but the node omits it"),
    ("nested_type_5000", hgr.InvalidArgumentError, "nests protobuf messages more than 64 deep"),
    ("nested_if_3000", hgr.InvalidArgumentError, "nests graphs (If, Loop and Scan bodies) more than 16 deep"),
    ("constant_of_shape_20_gib", hgr.ResourceExhaustedError, "beyond its budget"),
    ("gather_20_gib", hgr.ResourceExhaustedError, "beyond its budget"),
    ("range_float_overflow", hgr.UnimplementedError, "a range of 3e+76 elements"),
]


@pytest.mark.parametrize("name,error,message", CASES, ids=[case[0] for case in CASES])
def test_a_hostile_model_is_refused_with_the_loaders_message(name, error, message):
    path = os.path.join(HOSTILE, name + ".onnx")
    with pytest.raises(error) as refused:
        hgr.InferenceSession(path, providers=["pocl:0"])
    assert message in str(refused.value)
    with open(path, "rb") as f:
        data = f.read()
    with pytest.raises(error) as refused:
        hgr.InferenceSession(data, providers=["pocl:0"])
    assert message in str(refused.value)
