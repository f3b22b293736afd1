"""hgr.save_param_dict / hgr.load_param_dict: TVM's params format, bit for bit.

The reference writer below follows TVM's SaveParams (src/runtime/file_utils.cc)
and NDArray::Save by hand, so these tests check the format itself, not just that
hgr reads what hgr wrote."""
import os
import struct

import numpy as np
import pytest

import hgr

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")

_LIST_MAGIC = 0xF7E58D4F05049CB7
_TENSOR_MAGIC = 0xDD5E40F096B4A13F
# DLDataType codes by NumPy kind: 0 int, 1 uint, 2 float.
_DL_KIND = {"i": 0, "u": 1, "f": 2}


def tvm_params_bytes(params):
    """TVM's save_param_dict, written out by hand (little-endian)."""
    out = [struct.pack("<QQ", _LIST_MAGIC, 0), struct.pack("<Q", len(params))]
    for name in params:
        encoded = name.encode()
        out.append(struct.pack("<Q", len(encoded)) + encoded)
    out.append(struct.pack("<Q", len(params)))
    for array in params.values():
        array = np.asarray(array, order="C")  # (ascontiguousarray would make a scalar 1-d)
        if array.dtype == np.bool_:
            code, bits = _DL_KIND["u"], 1
        else:
            code, bits = _DL_KIND[array.dtype.kind], array.dtype.itemsize * 8
        out.append(struct.pack("<QQiii", _TENSOR_MAGIC, 0, 1, 0, array.ndim))
        out.append(struct.pack("<BBH", code, bits, 1))
        out.append(struct.pack(f"<{array.ndim}q", *array.shape))
        out.append(struct.pack("<q", array.nbytes) + array.tobytes())
    return b"".join(out)


def _mixed():
    rng = np.random.default_rng(17)
    return {
        "weight": rng.standard_normal((3, 4, 5)).astype(np.float32),
        "half": rng.standard_normal(7).astype(np.float16),
        "double": rng.standard_normal((2, 2)),
        "ids": rng.integers(-100, 100, (6,), dtype=np.int64),
        "small": rng.integers(-100, 100, (2, 3), dtype=np.int8),
        "bytes": rng.integers(0, 255, (4,), dtype=np.uint8),
        "mask": rng.standard_normal(5) > 0,
        "scalar": np.array(3.5, dtype=np.float32),
        "empty": np.zeros((0, 3), dtype=np.float32),
    }


def test_a_dict_survives_save_and_load_with_dtypes_shapes_and_order():
    params = _mixed()
    loaded = hgr.load_param_dict(hgr.save_param_dict(params))
    assert list(loaded) == list(params)
    for name, array in params.items():
        assert loaded[name].dtype == array.dtype, name
        assert loaded[name].shape == array.shape, name
        np.testing.assert_array_equal(loaded[name], array)


def test_saved_bytes_are_tvms_format_byte_for_byte():
    params = _mixed()
    assert hgr.save_param_dict(params) == tvm_params_bytes(params)
    # and TVM-format bytes written elsewhere load as the same arrays
    loaded = hgr.load_param_dict(tvm_params_bytes(params))
    for name, array in params.items():
        np.testing.assert_array_equal(loaded[name], array)


def test_the_c_librarys_params_file_is_read_and_written_again_identically():
    with open(os.path.join(EXAMPLES, "cnn.params"), "rb") as f:
        data = f.read()
    params = hgr.load_param_dict(data)
    assert list(params) == ["conv1_weight", "conv1_bias", "conv2_weight", "conv2_bias", "fc_weight", "fc_bias"]
    assert params["conv1_weight"].shape == (8, 3, 3, 3)
    assert hgr.save_param_dict(params) == data
    assert hgr.save_param_dict(hgr._hgr.params_load(data)) == data  # an hgr Params too


def test_non_contiguous_arrays_and_array_likes_are_saved_as_their_values():
    matrix = np.arange(12, dtype=np.float32).reshape(3, 4)
    loaded = hgr.load_param_dict(hgr.save_param_dict({"t": matrix.T, "listed": np.asarray([1, 2, 3], np.int32)}))
    np.testing.assert_array_equal(loaded["t"], matrix.T)
    assert loaded["t"].flags.c_contiguous
    np.testing.assert_array_equal(loaded["listed"], [1, 2, 3])


def test_truncated_bytes_are_data_loss_naming_where():
    data = hgr.save_param_dict({"w": np.ones((4, 4), np.float32)})
    with pytest.raises(hgr.DataLossError) as error:
        hgr.load_param_dict(data[:-5])
    assert "w" in str(error.value)
    with pytest.raises(hgr.DataLossError):
        hgr.load_param_dict(b"\x00" * 8)


def test_values_the_format_cannot_hold_are_refused_naming_the_param():
    with pytest.raises(hgr.InvalidArgumentError, match="weird"):
        hgr.save_param_dict({"weird": np.zeros(3, np.complex64)})
    with pytest.raises(hgr.InvalidArgumentError, match="dict"):
        hgr.save_param_dict([("w", np.zeros(3))])
    with pytest.raises(hgr.InvalidArgumentError, match="str"):
        hgr.save_param_dict({1: np.zeros(3, np.float32)})
    with pytest.raises(hgr.InvalidArgumentError):
        hgr.load_param_dict("not bytes")
