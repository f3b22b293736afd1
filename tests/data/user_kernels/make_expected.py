#!/usr/bin/env python3
"""Writes expected_0.npy for cli_user_kernels (tests/tests.cmake) from the kernels'
definitions, without NumPy: graph.json runs scale.cl's `scale` (y = alpha * x, alpha
2.5 from the node's attrs) on examples/simplex_A.npy, copies it to key 4 and applies
relu (fmax(x, 0)). The float32 product is rounded once, as the kernel rounds it.

    python3 tests/data/user_kernels/make_expected.py   (from the source tree's root)
"""
import ast
import struct
import sys
from array import array
from pathlib import Path

here = Path(__file__).resolve().parent
source = here.parents[2] / "examples" / "simplex_A.npy"


def load_npy(path):
    data = path.read_bytes()
    assert data[:6] == b"\x93NUMPY", f"{path} is not a .npy file"
    major = data[6]
    header_len = struct.unpack("<H" if major == 1 else "<I", data[8:10] if major == 1 else data[8:12])[0]
    start = 10 if major == 1 else 12
    header = ast.literal_eval(data[start:start + header_len].decode("latin1"))
    assert header["descr"] == "<f4" and not header["fortran_order"], f"{path}: want C-order float32"
    values = array("f")
    values.frombytes(data[start + header_len:])
    if sys.byteorder != "little":
        values.byteswap()
    return header["shape"], values


def save_npy(path, shape, values):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % (
        ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else ""))
    header += " " * (63 - (10 + len(header)) % 64) + "\n"  # total header a multiple of 64
    out = array("f", values)
    if sys.byteorder != "little":
        out.byteswap()
    path.write_bytes(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1") + out.tobytes())


shape, x = load_npy(source)
alpha = array("f", [2.5])[0]
scaled = array("f", (alpha * v for v in x))  # the double product rounds once to float32
save_npy(here / "expected_0.npy", shape, [v if v > 0 else 0.0 for v in scaled])
print(f"wrote {here / 'expected_0.npy'}: relu(2.5 * simplex_A), shape {tuple(shape)}")
