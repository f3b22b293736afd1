"""hgr.graph_executor: ``tvm.contrib.graph_executor``'s shape over hgr's Executor.

A TVM deployment runs a graph module like this::

    lib = tvm.runtime.load_module("deploy.so")          # the kernels
    module = graph_executor.create(graph_json, lib, [tvm.cpu(0), tvm.opencl(0)])
    module.load_params(params_bytes)
    module.set_input("x", x)
    module.run()
    y = module.get_output(0).numpy()

and with hgr the kernels come from hgr's op library, so the second argument is the
params instead::

    module = hgr.graph_executor.create(graph_json, params_bytes, ["pocl:0", "rusticl:0"])
    module.set_input("x", x)
    module.run()
    y = module.get_output(0)                            # a NumPy array

``devices`` binds the graph's device keys (its ``device_index`` column) to hgr
device specs, as ``hgr run --device KEY=SPEC`` does: a dict key -> spec; a list of
specs, given to the graph's distinct keys in ascending order (TVM lists the CPU,
device type 1, before the GPU, 4); one spec for every key; or None for the
bindings the graph records (a graph from ``hgr place``) or hgr's TVM-like defaults
(key 1 a CPU, key 4 a GPU or else another device).
"""
from __future__ import annotations

import json
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

import numpy as np

from . import _hgr
from .params import to_params

__all__ = ["GraphModule", "create", "device_bindings"]

DeviceSpec = Union[None, str, Sequence[str], Mapping[int, str]]


def _graph_of(graph_json: Any) -> _hgr.Graph:
    if isinstance(graph_json, _hgr.Graph):
        return graph_json
    if isinstance(graph_json, (bytes, bytearray)):
        graph_json = bytes(graph_json).decode("utf-8")
    if not isinstance(graph_json, str):
        raise _hgr.InvalidArgumentError(
            f"graph_json must be TVM graph JSON text or an hgr Graph, not {type(graph_json).__name__}"
        )
    return _hgr.Graph.from_json(graph_json)


def _device_keys(graph: _hgr.Graph) -> List[int]:
    """The graph's distinct device keys, ascending; [] without a device_index column."""
    column = json.loads(graph.to_json()).get("attrs", {}).get("device_index")
    if not column or len(column) < 2:
        return []
    return sorted(set(int(key) for key in column[1]))


def device_bindings(graph: _hgr.Graph, devices: DeviceSpec) -> Optional[Dict[int, str]]:
    """The key -> spec dict that ``devices`` means for graph (see the module's
    docstring); None for None. hgr.InvalidArgumentError when a list's length is not
    the number of the graph's keys."""
    if devices is None:
        return None
    if isinstance(devices, Mapping):
        return {int(key): spec for key, spec in devices.items()}
    keys = _device_keys(graph)
    if isinstance(devices, str):
        return {key: devices for key in keys} if keys else {1: devices}
    devices = list(devices)
    if len(devices) == 1:
        return device_bindings(graph, devices[0])
    if len(devices) != len(keys):
        keys_text = ", ".join(str(key) for key in keys) if keys else "absent (no device_index column)"
        raise _hgr.InvalidArgumentError(
            f"devices lists {len(devices)} devices, but the graph's device keys are {keys_text}: "
            "give one spec per key, in ascending key order, or a dict key -> spec"
        )
    return dict(zip(keys, devices))


def create(graph_json: Any, params: Any = None, devices: DeviceSpec = None, *, profiling: bool = False) -> "GraphModule":
    """A GraphModule running graph_json (TVM graph-executor JSON text, or an hgr
    Graph) with params (a dict name -> array, TVM params bytes, an hgr Params or
    None; loaded into the inputs they name) on devices (see the module's
    docstring). Errors are hgr.Error subclasses naming what failed: a malformed
    graph, an unknown op, a device spec that names no device, a param whose dtype
    or shape differs from its input."""
    graph = _graph_of(graph_json)
    return GraphModule(
        _hgr.Executor(graph, params=to_params(params), devices=device_bindings(graph, devices), profiling=profiling)
    )


class GraphModule:
    """tvm.contrib.graph_executor.GraphModule's methods over an hgr Executor:
    ``set_input``, ``load_params``, ``run``, ``get_output``, ``get_input``,
    ``get_input_index``, ``get_num_inputs``, ``get_num_outputs``, and
    ``module["set_input"]``-style access to them. Inputs and outputs are NumPy
    arrays. ``close()`` (or a ``with`` block, or garbage collection) frees the
    device memory."""

    _FUNCTIONS = (
        "set_input",
        "run",
        "get_output",
        "get_input",
        "get_input_index",
        "get_input_info",
        "get_num_outputs",
        "get_num_inputs",
        "load_params",
    )

    def __init__(self, executor: _hgr.Executor) -> None:
        if not isinstance(executor, _hgr.Executor):
            raise _hgr.InvalidArgumentError(f"GraphModule takes an hgr Executor, not {type(executor).__name__}")
        self._executor = executor

    @property
    def executor(self) -> _hgr.Executor:
        """The hgr Executor underneath (binding buffers, fences, profiles)."""
        return self._executor

    def close(self) -> None:
        """Waits for runs in flight and frees the executor's device memory."""
        self._executor.close()

    def __enter__(self) -> "GraphModule":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def __getitem__(self, name: str) -> Any:
        """TVM's ``module["set_input"]``: the method of that name."""
        if name not in self._FUNCTIONS:
            raise _hgr.NotFoundError(f"GraphModule has no function '{name}' (it has {', '.join(self._FUNCTIONS)})")
        return getattr(self, name)

    def _value(self, key: Union[int, str], value: Any) -> Any:
        """value as the input's dtype, as TVM's NDArray.copyfrom converts NumPy
        arrays, lists and scalars; other objects with the buffer protocol or
        __dlpack__ are passed as they are (the Executor checks their dtype)."""
        passed = isinstance(value, (bytes, bytearray, memoryview)) or hasattr(value, "__dlpack__")
        if isinstance(value, np.ndarray) or not passed:
            if not isinstance(value, np.ndarray) and callable(getattr(value, "numpy", None)):
                value = value.numpy()  # an NDArray of an older TVM, without __dlpack__
            dtype = _hgr.numpy_dtype(self._executor.input_info(key)["dtype"])
            value = np.asarray(value, dtype=dtype)
            if not value.flags.c_contiguous:
                value = value.copy(order="C")
        return value

    def set_input(self, key: Union[int, str, None] = None, value: Any = None, **params: Any) -> None:
        """Copies value into input key (a name or an index), then each keyword's
        value into the input it names. Values are converted to the input's dtype
        as TVM does; a shape other than the input's is hgr.InvalidArgumentError
        naming the input. Unlike TVM, a name the graph has no input for is
        hgr.NotFoundError listing the inputs (TVM skips it silently)."""
        if key is not None:
            if value is None:
                raise _hgr.InvalidArgumentError(f"set_input({key!r}): no value given")
            self._executor.set_input(key, self._value(key, value))
        for name, item in params.items():
            self._executor.set_input(name, self._value(name, item))

    def load_params(self, params_bytes: Any) -> None:
        """Loads TVM params bytes (or a dict name -> array, or an hgr Params) into
        the inputs they name; params that name no input are skipped, as TVM skips
        them (Executor.load_params returns their names)."""
        self._executor.load_params(to_params(params_bytes))

    def run(self, **input_dict: Any) -> None:
        """Sets the keyword inputs, then enqueues one run and returns without
        waiting; get_output waits for what it reads (a failure on a device is
        raised there, as hgr.DeviceFailureError naming the node)."""
        if input_dict:
            self.set_input(**input_dict)
        self._executor.run()

    def get_output(self, index: int, out: Optional[np.ndarray] = None) -> np.ndarray:
        """Output index of the latest run as a new NumPy array, or copied into out
        (a writable NumPy array of the output's shape and dtype), which is then
        returned, as TVM's get_output(index, out) does."""
        array = self._executor.get_output(index)
        if out is None:
            return array
        return _copy_into(out, array, f"output {index}")

    def get_input(self, key: Union[int, str], out: Optional[np.ndarray] = None) -> np.ndarray:
        """Input key (a name or an index) as the executor holds it now (a copy),
        or copied into out."""
        array = self._executor.get_input(key)
        if out is None:
            return array
        return _copy_into(out, array, f"input {key!r}")

    def get_input_index(self, name: str) -> int:
        """The index of input name; hgr.NotFoundError listing the inputs (TVM
        returns -1)."""
        return self._executor.input_index(name)

    def get_input_info(self) -> "tuple[Dict[str, List[int]], Dict[str, str]]":
        """(shape_dict, dtype_dict) of every input by name, as TVM's get_input_info."""
        shapes: Dict[str, List[int]] = {}
        dtypes: Dict[str, str] = {}
        for index in range(self._executor.input_count):
            info = self._executor.input_info(index)
            shapes[info["name"]] = info["shape"]
            dtypes[info["name"]] = info["dtype"]
        return shapes, dtypes

    def get_num_outputs(self) -> int:
        """The number of graph outputs."""
        return self._executor.output_count

    def get_num_inputs(self) -> int:
        """The number of graph inputs, params included (as TVM counts them)."""
        return self._executor.input_count


def _copy_into(out: Any, array: np.ndarray, what: str) -> Any:
    if not isinstance(out, np.ndarray):
        raise _hgr.InvalidArgumentError(f"{what}: out must be a NumPy array, not {type(out).__name__}")
    if out.shape != array.shape or out.dtype != array.dtype:
        raise _hgr.InvalidArgumentError(
            f"{what} is {array.dtype}{list(array.shape)}; out is {out.dtype}{list(out.shape)}"
        )
    np.copyto(out, array)
    return out
