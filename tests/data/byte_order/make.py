"""Writes the byte-order test files (tests/test_npy.c, tests/test_params.c) with
numpy and struct, independently of hgr: the same values big- and little-endian.
Run from this folder: python3 make.py (numpy needed)."""
import struct

import numpy as np

values = np.array([[1.5, -2.25, 1e-3], [65504.0, 3.0, -0.0]])
np.save("big_endian_f4.npy", values.astype(">f4"))
np.save("little_endian_f4.npy", values.astype("<f4"))
np.save("big_endian_i8.npy", np.array([1, -2, 0x0102030405060708], dtype=">i8"))

# TVM params: list magic, reserved, names, then per tensor its record; little-endian.
LIST_MAGIC = 0xF7E58D4F05049CB7
TENSOR_MAGIC = 0xDD5E40F096B4A13F


def tensor(code, bits, shape, data):
    record = struct.pack("<QQiiiBBH", TENSOR_MAGIC, 0, 1, 0, len(shape), code, bits, 1)
    record += b"".join(struct.pack("<q", d) for d in shape)
    return record + struct.pack("<Q", len(data)) + data


items = [
    ("w", tensor(2, 32, [2, 2], np.array([1.5, -2.25, 1e-3, 65504.0], "<f4").tobytes())),
    ("b", tensor(0, 16, [3], np.array([1, -2, 0x1234], "<i2").tobytes())),
    ("s", tensor(0, 64, [], np.array([0x0102030405060708], "<i8").tobytes())),
]
blob = struct.pack("<QQQ", LIST_MAGIC, 0, len(items))
for name, _ in items:
    blob += struct.pack("<Q", len(name)) + name.encode()
blob += struct.pack("<Q", len(items))
for _, record in items:
    blob += record
with open("little_endian.params", "wb") as out:
    out.write(blob)

# ONNX TensorProtos with raw_data (little-endian by ONNX's definition), as ONNX's
# test data sets store them: float32 [2, 3] and int64 [3]. Needs the onnx package.
from onnx import numpy_helper  # noqa: E402

for name, array in [("raw_data_f4", values.astype("<f4")),
                    ("raw_data_i8", np.array([1, -2, 0x0102030405060708], dtype="<i8"))]:
    with open(name + ".pb", "wb") as out:
        out.write(numpy_helper.from_array(array, name).SerializeToString())
