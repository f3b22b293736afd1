"""TVM params bytes from Python: ``hgr.save_param_dict`` and ``hgr.load_param_dict``
in the shape of ``tvm.runtime.save_param_dict`` / ``load_param_dict``.

The bytes are read and written by the C library (hgr/params.h), so a dict saved
here is byte for byte what ``hgr_params_save_memory`` writes, and what TVM's
``load_param_dict`` reads.
"""
from __future__ import annotations

from typing import Any, Dict, Mapping, Optional

import numpy as np

from . import _hgr


def _array(name: str, value: Any) -> Any:
    """A C-contiguous array (or buffer) for a param value: NumPy arrays made
    contiguous, objects with only ``numpy()`` (a TVM NDArray) converted, other
    buffer or ``__dlpack__`` objects passed through, anything else through
    ``numpy.asarray``."""
    if isinstance(value, np.ndarray):
        return value if value.flags.c_contiguous else value.copy(order="C")
    if hasattr(value, "__dlpack__") or isinstance(value, (bytes, bytearray, memoryview)):
        return value
    if hasattr(value, "numpy") and callable(value.numpy):
        return _array(name, value.numpy())
    return np.asarray(value)


def to_params(params: Any) -> Optional[_hgr.Params]:
    """An hgr Params from what the TVM-shaped calls accept: None, an hgr Params,
    TVM params bytes (bytes, bytearray, memoryview) or a dict name -> array.
    hgr.DataLossError for corrupt bytes, hgr.InvalidArgumentError naming the param
    for a value hgr cannot hold."""
    if params is None or isinstance(params, _hgr.Params):
        return params
    if isinstance(params, (bytes, bytearray, memoryview)):
        return _hgr.params_load(params)
    if isinstance(params, Mapping):
        return _hgr.params_from_dict({name: _array(name, value) for name, value in params.items()})
    raise _hgr.InvalidArgumentError(
        f"params must be a dict of name -> array, TVM params bytes, an hgr Params or None, not {type(params).__name__}"
    )


def save_param_dict(params: Mapping[str, Any]) -> bytes:
    """Serializes a dict name -> array (NumPy arrays, or anything with the buffer
    protocol, ``__dlpack__`` or ``numpy()``) in TVM's params format, in the dict's
    order, as ``tvm.runtime.save_param_dict`` does. An hgr Params is accepted too.
    hgr.InvalidArgumentError naming the param for a dtype the format cannot hold."""
    if isinstance(params, _hgr.Params):
        return _hgr.params_save(params)
    if not isinstance(params, Mapping):
        raise _hgr.InvalidArgumentError(f"params must be a dict of name -> array, not {type(params).__name__}")
    return _hgr.params_save(to_params(params))


def load_param_dict(data: Any) -> Dict[str, np.ndarray]:
    """Parses TVM params bytes into a dict name -> NumPy array (new arrays, in the
    file's order), as ``tvm.runtime.load_param_dict`` does (which gives NDArrays).
    hgr.DataLossError naming the byte offset and the param for truncated or
    corrupt bytes."""
    return _hgr.params_to_dict(_hgr.params_load(data))
