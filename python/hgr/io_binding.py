"""ONNX Runtime's IOBinding and OrtValue over hgr's device values.

A streaming loop written for ONNX Runtime runs on hgr with only the import
changed, and the state it feeds back stays on the device::

    binding = sess.io_binding()
    binding.bind_output("y")
    binding.bind_output("state_out")
    state = rt.OrtValue.ortvalue_from_numpy(np.zeros((1, 64), np.float32))
    for chunk in chunks:
        binding.bind_cpu_input("x", chunk)
        binding.bind_ortvalue_input("state", state)
        sess.run_with_iobinding(binding)
        y, state = binding.get_outputs()       # OrtValues; the state never left the device
        use(y.numpy())                         # only what is read crosses to the host

``sess.run_with_iobinding`` starts the run and returns without waiting (an
hgr run is a future); an output OrtValue holds that run's value on its device
(a buffer nothing of the session writes again) and waits only when it is read
(``numpy()``, ``copy_outputs_to_cpu()``). Bound as an input of the next run
(``bind_ortvalue_input``), the next run waits for it on the device, not on the
host (hgr_executor_bind_device_buffer).
"""
from __future__ import annotations

import ctypes
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from . import _hgr

# onnx.TensorProto's element types, by NumPy dtype name (OrtValue.element_type).
_ONNX_TYPES = {
    "float32": 1, "uint8": 2, "int8": 3, "uint16": 4, "int16": 5, "int32": 6, "int64": 7, "bool": 9,
    "float16": 10, "float64": 11, "uint32": 12, "uint64": 13,
}
_NUMPY_TYPES = {code: name for name, code in _ONNX_TYPES.items()}


def _numpy_dtype(element_type: Any) -> np.dtype:
    """A NumPy dtype from ONNX Runtime's element_type: a NumPy type or an onnx.TensorProto code."""
    if isinstance(element_type, (int, np.integer)) and not isinstance(element_type, bool):
        if int(element_type) not in _NUMPY_TYPES:
            raise _hgr.UnimplementedError(f"element type {int(element_type)} (onnx.TensorProto) has no NumPy type "
                                          "hgr takes")
        return np.dtype(_NUMPY_TYPES[int(element_type)])
    try:
        return np.dtype(element_type)
    except TypeError:
        raise _hgr.InvalidArgumentError(f"element_type {element_type!r} is neither a NumPy type nor an "
                                        "onnx.TensorProto code") from None


def _ort_type(dtype: str) -> str:
    from .session import _ORT_TYPES
    return _ORT_TYPES.get(dtype, dtype)


class OrtValue:
    """A tensor on the host or on a device, as onnxruntime.OrtValue.

    Made from a NumPy array (``ortvalue_from_numpy``, ``ortvalue_from_shape_and_type``)
    it holds that array in host memory, whatever device_type says; the run that
    takes it copies it to its device. Returned by ``IOBinding.get_outputs()`` it
    holds a run's output on the device the run left it on, and ``numpy()`` reads
    it (waiting for that run only). ``device_name()`` says where the values are:
    'cpu', or the hgr device spec ('pocl:0')."""

    __slots__ = ("_array", "_fence", "_index", "_dtype", "_shape", "_buffer", "_session")

    def __init__(self, array: Optional[np.ndarray] = None, *, fence: Any = None, index: int = 0,
                 dtype: Optional[str] = None, shape: Optional[Sequence[int]] = None, session: Any = None) -> None:
        self._array = array
        self._fence = fence
        self._index = index
        self._dtype = str(array.dtype) if array is not None else dtype
        self._shape = list(array.shape) if array is not None else list(shape or [])
        self._buffer = None
        self._session = session  # a device value's: keeps its executor's model alive

    # ---- ONNX Runtime's factories ----
    @staticmethod
    def ortvalue_from_numpy(numpy_obj: np.ndarray, device_type: str = "cpu", device_id: int = 0,
                            vendor_id: int = -1) -> "OrtValue":
        """An OrtValue over numpy_obj (no copy for a C-contiguous array, as ONNX Runtime
        on the CPU). The values stay in host memory until a run takes them, which
        copies them to its device once; device_type and device_id are accepted for
        ONNX Runtime's signature."""
        if not isinstance(numpy_obj, np.ndarray):
            numpy_obj = np.asarray(numpy_obj)
        if not numpy_obj.flags.c_contiguous:
            numpy_obj = np.ascontiguousarray(numpy_obj)
        return OrtValue(numpy_obj)

    @staticmethod
    def ortvalue_from_shape_and_type(shape: Sequence[int], element_type: Any, device_type: str = "cpu",
                                     device_id: int = 0, vendor_id: int = -1, memory_info: Any = None) -> "OrtValue":
        """An OrtValue of zeros of shape and element_type (a NumPy type or an onnx.TensorProto code)."""
        return OrtValue(np.zeros(tuple(shape), dtype=_numpy_dtype(element_type)))

    # ---- what it holds ----
    def is_tensor(self) -> bool:
        return True

    def has_value(self) -> bool:
        return True

    def is_sparse_tensor(self) -> bool:
        return False

    def is_tensor_sequence(self) -> bool:
        return False

    def shape(self) -> List[int]:
        """The tensor's shape, as a list of ints."""
        return list(self._shape)

    def data_type(self) -> str:
        """ONNX Runtime's type string: 'tensor(float)'."""
        return _ort_type(self._dtype)

    def element_type(self) -> int:
        """The onnx.TensorProto element type (1 for float)."""
        return _ONNX_TYPES.get(self._dtype, 0)

    def tensor_size_in_bytes(self) -> int:
        return int(np.prod(self._shape, dtype=np.int64)) * np.dtype(self._dtype).itemsize

    def device_name(self) -> str:
        """'cpu' for host memory; else the hgr device spec of the device holding the values."""
        if self._fence is None:
            return "cpu"
        return self.device_buffer().spec

    def numpy(self) -> np.ndarray:
        """The values as a NumPy array: a host value's array; a device value read once
        (waiting for its run only) and kept."""
        if self._array is None:
            self._array = self._fence.get_output(self._index)
        return self._array

    def data_ptr(self) -> int:
        """The host address of a host value; the cl_mem handle (an int) of a device value."""
        if self._fence is not None:
            return self.device_buffer().mem
        return int(self._array.ctypes.data)

    def update_inplace(self, data: Any) -> None:
        """Copies data (an array or an OrtValue of the same shape and type) into a host value."""
        if self._fence is not None:
            raise _hgr.UnimplementedError("update_inplace: a run's output on a device is read-only in hgr; bind a "
                                          "new value instead")
        source = data.numpy() if isinstance(data, OrtValue) else np.asarray(data)
        if list(source.shape) != self._shape or str(source.dtype) != self._dtype:
            raise _hgr.InvalidArgumentError(f"update_inplace: the value is {self._dtype} {self._shape}; "
                                            f"{source.dtype} {list(source.shape)} was given")
        self._array[...] = source

    # ---- hgr's ----
    @property
    def on_device(self) -> bool:
        """Whether the values are a run's output on a device (not yet read or not)."""
        return self._fence is not None

    def device_buffer(self) -> "_hgr.DeviceBuffer":
        """A device value's buffer (hgr.DeviceBuffer: cl_mem and ready event), a copy of the
        run's output made on the device once, which nothing of the session writes again.
        FailedPreconditionError for a host value."""
        if self._fence is None:
            raise _hgr.FailedPreconditionError("the OrtValue holds host memory, not a device buffer")
        if self._buffer is None:
            self._buffer = self._fence.output_buffer(self._index)
        return self._buffer

    def __repr__(self) -> str:
        where = "cpu" if self._fence is None else "device"
        return f"OrtValue({self.data_type()}, shape={self._shape}, {where})"


class IOBinding:
    """onnxruntime.IOBinding: inputs and outputs bound by name for
    ``InferenceSession.run_with_iobinding``. Made by ``InferenceSession.io_binding()``."""

    def __init__(self, session: Any) -> None:
        self._session = session
        self._inputs: Dict[str, Any] = {}          # name -> np.ndarray (host) or OrtValue
        self._outputs: List[Tuple[str, Optional[np.ndarray]]] = []  # in binding order; an array to write into
        self._results: List[OrtValue] = []
        self._fence: Any = None

    # ---- inputs ----
    def bind_cpu_input(self, name: str, arr_on_cpu: Any) -> None:
        """Binds input name to an array in host memory, read when the run starts."""
        self._inputs[self._session._input_arg(name).name] = arr_on_cpu

    def bind_input(self, name: str, device_type: str, device_id: int, element_type: Any, shape: Sequence[int],
                   buffer_ptr: int) -> None:
        """Binds input name to element_type values of shape at buffer_ptr. hgr takes host
        memory here (device_type 'cpu'), read when the run starts; a device value is
        given as an OrtValue (bind_ortvalue_input)."""
        self._session._input_arg(name)
        self._inputs[name] = _host_array(device_type, element_type, shape, buffer_ptr, f"input '{name}'")

    def bind_ortvalue_input(self, name: str, ortvalue: OrtValue) -> None:
        """Binds input name to an OrtValue: a device value (an earlier run's output) is
        taken on the device, the run waiting for it there; a host one is copied in."""
        if not isinstance(ortvalue, OrtValue):
            raise _hgr.InvalidArgumentError(f"input '{name}': an hgr.OrtValue is needed, not "
                                            f"{type(ortvalue).__name__}")
        self._inputs[self._session._input_arg(name).name] = ortvalue

    def clear_binding_inputs(self) -> None:
        self._inputs.clear()

    # ---- outputs ----
    def bind_output(self, name: str, device_type: str = "cpu", device_id: int = 0, element_type: Any = None,
                    shape: Optional[Sequence[int]] = None, buffer_ptr: Optional[int] = None) -> None:
        """Binds output name. Without buffer_ptr, each run's value is an OrtValue that stays
        on its device until read (whatever device_type says: reading it is what brings it
        to the host). With buffer_ptr (host memory, device_type 'cpu'), the run writes the
        values there."""
        self._session._output_index_of(name)
        target = None
        if buffer_ptr is not None:
            if element_type is None or shape is None:
                raise _hgr.InvalidArgumentError(f"output '{name}': buffer_ptr needs element_type and shape")
            target = _host_array(device_type, element_type, shape, buffer_ptr, f"output '{name}'")
        self._bind_output(name, target)

    def bind_ortvalue_output(self, name: str, ortvalue: OrtValue) -> None:
        """Binds output name to a host OrtValue, which each run writes."""
        self._session._output_index_of(name)
        if not isinstance(ortvalue, OrtValue) or ortvalue.on_device:
            raise _hgr.UnimplementedError(f"output '{name}': hgr writes outputs into host OrtValues "
                                          "(ortvalue_from_numpy); bind_output keeps one on its device")
        self._bind_output(name, ortvalue.numpy())

    def _bind_output(self, name: str, target: Optional[np.ndarray]) -> None:
        for i, (bound, _) in enumerate(self._outputs):
            if bound == name:
                self._outputs[i] = (name, target)
                return
        self._outputs.append((name, target))

    def clear_binding_outputs(self) -> None:
        self._outputs.clear()

    # ---- results ----
    def get_outputs(self) -> List[OrtValue]:
        """The outputs of the last run_with_iobinding, in binding order (OrtValues that
        may live on a device)."""
        return list(self._results)

    def get_outputs_as_ortvaluevector(self) -> List[OrtValue]:
        return self.get_outputs()

    def copy_outputs_to_cpu(self) -> List[np.ndarray]:
        """The outputs of the last run as NumPy arrays (read from their devices)."""
        return [value.numpy() for value in self._results]

    def synchronize_inputs(self) -> None:
        """Nothing to do: inputs are read when a run starts, or waited for on the device."""

    def synchronize_outputs(self) -> None:
        """Waits until the last run_with_iobinding's run completed."""
        if self._fence is not None:
            self._fence.wait()


def _host_array(device_type: str, element_type: Any, shape: Sequence[int], buffer_ptr: int, what: str) -> np.ndarray:
    """A NumPy array over host memory at buffer_ptr (not copied)."""
    if str(device_type).lower() != "cpu":
        raise _hgr.UnimplementedError(
            f"{what}: hgr binds raw pointers of host memory only (device_type 'cpu', not '{device_type}'); give a "
            "device value as an OrtValue (bind_ortvalue_input, or bind_output to keep an output on its device)")
    dtype = _numpy_dtype(element_type)
    count = int(np.prod(tuple(shape), dtype=np.int64))
    raw = (ctypes.c_char * (count * dtype.itemsize)).from_address(int(buffer_ptr))
    return np.frombuffer(raw, dtype=dtype, count=count).reshape(tuple(shape))
