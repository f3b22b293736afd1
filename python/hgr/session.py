"""hgr.InferenceSession: onnxruntime.InferenceSession's shape over hgr's Executor.

Trying hgr where ONNX Runtime runs is a one-line change::

    sess = onnxruntime.InferenceSession("model.onnx", providers=["CPUExecutionProvider"])
    sess = hgr.InferenceSession("model.onnx", providers=["pocl:0", "CPUExecutionProvider"])

Inputs are used where they lie (bound to the executor: zero copy where the
device shares host memory and the data is aligned); outputs are fresh NumPy
arrays that each run writes directly on such devices (bound outputs).
"""
from __future__ import annotations

import json
import os
import stat
import threading
import time
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from . import _hgr

# ORT's provider names that hgr maps to a device spec; any other "...ExecutionProvider"
# is refused with hgr.InvalidArgumentError.
_PROVIDER_SPECS = {"CPUExecutionProvider": "cpu:0"}

# ONNX Runtime's type strings, by hgr dtype.
_ORT_TYPES = {
    "float32": "tensor(float)",
    "float64": "tensor(double)",
    "float16": "tensor(float16)",
    "bfloat16": "tensor(bfloat16)",
    "int8": "tensor(int8)",
    "int16": "tensor(int16)",
    "int32": "tensor(int32)",
    "int64": "tensor(int64)",
    "uint8": "tensor(uint8)",
    "uint16": "tensor(uint16)",
    "uint32": "tensor(uint32)",
    "uint64": "tensor(uint64)",
    "bool": "tensor(bool)",
}


class NodeArg:
    """An input or output of a session, as onnxruntime.NodeArg: ``name``,
    ``shape`` (a list of ints) and ``type`` ('tensor(float)'), plus hgr's
    ``dtype`` ('float32')."""

    __slots__ = ("name", "shape", "type", "dtype")

    def __init__(self, name: str, shape: List[int], type: str, dtype: str) -> None:
        self.name = name
        self.shape = shape
        self.type = type
        self.dtype = dtype

    def __repr__(self) -> str:
        return f"NodeArg(name={self.name!r}, type={self.type!r}, shape={self.shape!r})"


def provider_devices(providers: Optional[Sequence[Any]]) -> Optional[List[str]]:
    """Device specs for a providers list in priority order: hgr device specs
    ('pocl:0', 'gpu:0', 'cpu:0') pass through, ORT's 'CPUExecutionProvider' (or a
    (name, options) pair of it) becomes 'cpu:0'. An unknown ORT provider is
    hgr.InvalidArgumentError; a spec that names no device, hgr.NotFoundError."""
    if providers is None:
        return None
    if isinstance(providers, str):
        providers = [providers]
    specs: List[str] = []
    for provider in providers:
        if isinstance(provider, (tuple, list)):
            provider = provider[0]
        if not isinstance(provider, str):
            raise _hgr.InvalidArgumentError(f"providers: {provider!r} is not a provider name or a device spec")
        if provider in _PROVIDER_SPECS:
            spec = _PROVIDER_SPECS[provider]
        elif provider.endswith("ExecutionProvider"):
            raise _hgr.InvalidArgumentError(
                f"providers: unknown provider '{provider}': hgr takes device specs ('pocl:0', 'gpu:0', 'cpu:0', "
                f"see hgr.devices()) and {', '.join(sorted(_PROVIDER_SPECS))}"
            )
        else:
            spec = provider
        _hgr.find_device(spec)  # hgr.NotFoundError listing the devices when none matches
        if spec not in specs:
            specs.append(spec)
    return specs


def _fields(data: memoryview):
    """(field number, wire type, value) of a protobuf message: ints for varints,
    memoryviews for length-delimited fields, None for fixed-size ones."""
    position, end = 0, len(data)

    def varint() -> int:
        nonlocal position
        result, shift = 0, 0
        while True:
            byte = data[position]
            position += 1
            result |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                return result

    while position < end:
        key = varint()
        field, wire = key >> 3, key & 7
        if wire == 0:
            yield field, wire, varint()
        elif wire == 2:
            length = varint()
            yield field, wire, data[position:position + length]
            position += length
        elif wire in (1, 5):
            position += 8 if wire == 1 else 4
            yield field, wire, None
        else:
            raise ValueError(f"protobuf wire type {wire}")


def onnx_output_names(model: bytes) -> List[str]:
    """The names of an ONNX model's graph outputs (ModelProto.graph.output[i].name),
    read from its protobuf bytes: hgr's graph outputs are the model's outputs in
    their order, and this is how they are called in the model."""
    names: List[str] = []
    for field, wire, graph in _fields(memoryview(model)):
        if field == 7 and wire == 2:  # ModelProto.graph
            for g_field, g_wire, value_info in _fields(graph):
                if g_field == 12 and g_wire == 2:  # GraphProto.output
                    name = next((bytes(v).decode() for f, w, v in _fields(value_info) if f == 1 and w == 2), "")
                    names.append(name)
    return names


def onnx_input_dims(model: bytes) -> Dict[str, List[Any]]:
    """Each ONNX graph input's declared dims (ModelProto.graph.input[i]: its
    TypeProto's tensor shape), read from the model's protobuf bytes: an int for a
    fixed dim, the dim_param (a str, '' when unnamed) for a symbolic one. An input
    declared without a shape is left out: nothing about its rank is known."""
    dims: Dict[str, List[Any]] = {}
    for field, wire, graph in _fields(memoryview(model)):
        if field != 7 or wire != 2:  # ModelProto.graph
            continue
        for g_field, g_wire, value_info in _fields(graph):
            if g_field != 11 or g_wire != 2:  # GraphProto.input
                continue
            name, shape = "", None
            for f, w, v in _fields(value_info):
                if f == 1 and w == 2:  # ValueInfoProto.name
                    name = bytes(v).decode()
                elif f == 2 and w == 2:  # ValueInfoProto.type -> TypeProto.tensor_type -> .shape
                    for t_field, t_wire, tensor in _fields(v):
                        if t_field == 1 and t_wire == 2:
                            for s_field, s_wire, shape_proto in _fields(tensor):
                                if s_field == 2 and s_wire == 2:
                                    shape = [_dim(d) for f2, w2, d in _fields(shape_proto) if f2 == 1 and w2 == 2]
            if name and shape is not None:
                dims[name] = shape
    return dims


def _dim(dimension: memoryview) -> Any:
    """TensorShapeProto.Dimension: dim_value (field 1) or dim_param (field 2)."""
    for field, wire, value in _fields(dimension):
        if field == 1 and wire == 0:
            return int(value)
        if field == 2 and wire == 2:
            return bytes(value).decode()
    return ""


def _fed_shape(value: Any) -> Optional[tuple]:
    """The shape of a value fed as an input, or None when it cannot be told without
    converting it (bind_input then checks its size)."""
    shape = getattr(value, "shape", None)
    if isinstance(shape, tuple):
        return shape
    try:
        return memoryview(value).shape
    except TypeError:
        pass
    if hasattr(value, "__dlpack__"):
        try:
            return np.from_dlpack(value).shape
        except (TypeError, ValueError, RuntimeError, BufferError, AttributeError):
            return None
    return None


# The most bytes a model file may have: protobuf's limit, as in the C loader.
MAX_MODEL_BYTES = 2**31 - 1


def read_model_file(path: str) -> bytes:
    """The bytes of the model file at path, read once: a regular file up to its size
    as fstat gives it, anything else (a pipe, a FIFO, a device) until more than
    MAX_MODEL_BYTES arrived. Errors are hgr's: NotFoundError, InvalidArgumentError
    for a directory, ResourceExhaustedError past the cap, UnavailableError else."""
    try:
        with open(path, "rb", buffering=0) as f:
            info = os.fstat(f.fileno())
            if stat.S_ISREG(info.st_mode) and info.st_size > MAX_MODEL_BYTES:
                raise _hgr.ResourceExhaustedError(
                    f"'{path}' is {info.st_size} bytes, more than {MAX_MODEL_BYTES} bytes, protobuf's limit for a model"
                )
            chunks, length = [], 0
            while length <= MAX_MODEL_BYTES:
                chunk = f.read(min(1 << 24, MAX_MODEL_BYTES + 1 - length))
                if not chunk:
                    break
                chunks.append(chunk)
                length += len(chunk)
    except FileNotFoundError as error:
        raise _hgr.NotFoundError(f"cannot open '{path}': {error.strerror}") from None
    except IsADirectoryError:
        raise _hgr.InvalidArgumentError(f"'{path}' is a directory, not a model file") from None
    except OSError as error:
        raise _hgr.UnavailableError(f"cannot read '{path}': {error.strerror}") from None
    if length > MAX_MODEL_BYTES:
        raise _hgr.ResourceExhaustedError(f"'{path}' holds more than {MAX_MODEL_BYTES} bytes, protobuf's limit for a model")
    return b"".join(chunks)


def check_input_shape(name: str, shape: Sequence[int], declared: Sequence[Any], loaded: Sequence[int]) -> None:
    """Refuses a fed input whose rank differs from the model's, or whose extent
    differs at a dim the model fixes, with ONNX Runtime's messages (as
    hgr.InvalidArgumentError). A symbolic dim is not the model's to fix: there the
    extent must be the one the session was loaded with (input_shapes), since hgr
    specializes the graph at load. Each message ends with hgr's line naming the
    input and both shapes."""
    both = f"\n input '{name}': the session's shape is {tuple(loaded)}, the array's {tuple(shape)}"
    if len(shape) != len(declared):
        raise _hgr.InvalidArgumentError(
            f"Invalid rank for input: {name} Got: {len(shape)} Expected: {len(declared)} "
            "Please fix either the inputs/outputs or the model." + both
        )
    wrong = [
        f" index: {i} Got: {got} Expected: {want}"
        for i, (got, want) in enumerate(zip(shape, declared))
        if isinstance(want, int) and want >= 0 and got != want
    ]
    if wrong:
        raise _hgr.InvalidArgumentError(
            f"Got invalid dimensions for input: {name} for the following indices\n"
            + "\n".join(wrong)
            + "\n Please fix either the inputs/outputs or the model." + both
        )
    wrong = [
        f" index: {i} Got: {got} Expected: {want} (symbolic dim '{param}', fixed when the session was made; "
        "input_shapes sets it)"
        for i, (got, want, param) in enumerate(zip(shape, loaded, declared))
        if not isinstance(param, int) and got != want
    ]
    if wrong:
        raise _hgr.InvalidArgumentError(
            f"Got invalid dimensions for input: {name} for the following indices\n"
            + "\n".join(wrong)
            + "\n Please fix either the inputs or the session's input_shapes." + both
        )


def _profiling_requested(sess_options: Any) -> bool:
    if sess_options is None:
        return False
    if isinstance(sess_options, dict):
        return bool(sess_options.get("enable_profiling", False))
    return bool(getattr(sess_options, "enable_profiling", False))


def _alignment() -> int:
    """The largest base-address alignment of the devices (bytes): outputs aligned
    to it can be the device's own memory on every device that shares host memory."""
    return max([d["base_address_align_bytes"] for d in _hgr.devices()] + [64])


def _as_buffer(value: Any) -> Any:
    """What bind_input takes: buffers and __dlpack__ objects as they are, a
    non-contiguous array as a contiguous copy, anything else through numpy."""
    if isinstance(value, np.ndarray):
        return value if value.flags.c_contiguous else np.ascontiguousarray(value)
    if hasattr(value, "__dlpack__"):
        return value
    try:
        memoryview(value)
        return value
    except TypeError:
        return np.asarray(value)


class Future:
    """The result of InferenceSession.run_async: ``result()`` waits and returns
    the outputs (a list of NumPy arrays), ``done()`` says whether the run
    completed without waiting. Several may be in flight."""

    def __init__(self, fence: _hgr.Fence, outputs: List[np.ndarray]) -> None:
        self._fence = fence
        self._outputs = outputs

    def done(self) -> bool:
        """Whether the run completed (hgr.Error if it failed)."""
        return self._fence.done()

    def result(self) -> List[np.ndarray]:
        """Waits for the run (the GIL released) and returns its outputs."""
        self._fence.wait()
        return self._outputs

    @property
    def fence(self) -> _hgr.Fence:
        """The run's hgr Fence (fence.output_buffer(i): this run's output on the device)."""
        return self._fence


class InferenceSession:
    """An ONNX model loaded by hgr and bound to OpenCL devices, used like
    onnxruntime.InferenceSession.

    model: a path or the model's bytes. sess_options: an object with
    ``enable_profiling`` (onnxruntime.SessionOptions) or a dict; with it on,
    ``profile()`` and ``write_trace(path)`` describe the last run. providers:
    device specs in priority order (``["gpu:0", "cpu:0"]``; ORT's
    'CPUExecutionProvider' means 'cpu:0'): nodes go to the first listed device
    that can run them. place: placement rules and policy, a str or a list of
    them (`hgr run --place` syntax: 'auto', 'stages:2', 'op:conv2d=pocl:1').
    input_shapes: name -> shape for inputs with symbolic dimensions.

    The positional order is ONNX Runtime's (model, sess_options, providers); a
    list given as the second argument is taken as providers. Errors are
    hgr.Error subclasses naming what failed (a bad model: InvalidArgumentError;
    an op hgr lacks: UnimplementedError; an unknown device: NotFoundError).
    close() (or a with block, or garbage collection) frees the device memory.
    Thread safety: run() and run_async() may be called from several threads;
    they take turns on the session (other sessions run meanwhile: the GIL is
    released while hgr runs).
    """

    def __init__(
        self,
        model: Any,
        sess_options: Any = None,
        providers: Optional[Sequence[Any]] = None,
        provider_options: Any = None,
        *,
        place: Any = None,
        input_shapes: Optional[Dict[str, Sequence[int]]] = None,
        **kwargs: Any,
    ) -> None:
        if isinstance(sess_options, (list, tuple)) and providers is None:
            sess_options, providers = None, sess_options
        self._executor: Optional[_hgr.Executor] = None
        # run() binds, runs and waits as one step: threads sharing a session take turns.
        self._run_lock = threading.Lock()
        self._profile_prefix = str(getattr(sess_options, "profile_file_prefix", "") or "") if sess_options else ""
        if isinstance(sess_options, dict):
            self._profile_prefix = str(sess_options.get("profile_file_prefix", "") or "")
        devices = provider_devices(providers)
        if isinstance(model, os.PathLike):
            model = os.fspath(model)
        # A path is read once, here: the loader and the name and dim readers below
        # share the bytes (a FIFO has no second reading), and external data is found
        # beside the file.
        base_directory = None
        if isinstance(model, str):
            path, model = model, read_model_file(model)
            base_directory = os.path.dirname(os.path.abspath(path))
        try:
            graph, params, self._load_report = _hgr.load_onnx(
                model, devices=devices, place=place, input_shapes=input_shapes, base_directory=base_directory
            )
        except _hgr.Error as error:
            if base_directory is None:
                raise
            raise type(error)(f"{path}: {error}") from None
        self._executor = _hgr.Executor(graph, params=params, profiling=_profiling_requested(sess_options))
        ex = self._executor
        self._inputs = [self._node_arg(ex.input_info(i)) for i in range(ex.input_count)]
        self._outputs = [self._node_arg(ex.output_info(i)) for i in range(ex.output_count)]
        # hgr names a graph output after its node ("y:0"); sessions speak the model's names.
        try:
            model_bytes = bytes(model)
            model_names = onnx_output_names(model_bytes)
        except (ValueError, IndexError, UnicodeDecodeError, OSError):
            model_bytes, model_names = b"", []
        # The model's declared dims of each input, for run()'s rank and shape checks;
        # where they cannot be read, the loaded graph's shape stands for them.
        try:
            declared = onnx_input_dims(model_bytes)
        except (ValueError, IndexError, UnicodeDecodeError, TypeError):
            declared = {}
        if len(model_names) == len(self._outputs):
            for arg, name in zip(self._outputs, model_names):
                arg.name = name
        # Inputs set from params are constants: only the others are the model's inputs.
        param_names = set(params.names())
        self._inputs = [arg for arg in self._inputs if arg.name not in param_names]
        self._input_dims = {
            arg.name: (declared[arg.name] if len(declared.get(arg.name, ())) == len(arg.shape) else list(arg.shape),
                       list(arg.shape))
            for arg in self._inputs
        }
        self._output_index = {arg.name: i for i, arg in enumerate(self._outputs)}
        self._alignment = _alignment()
        self._providers = list(dict.fromkeys(ex.devices.values()))

    @staticmethod
    def _node_arg(info: Dict[str, Any]) -> NodeArg:
        return NodeArg(info["name"], list(info["shape"]), _ORT_TYPES.get(info["dtype"], info["dtype"]), info["dtype"])

    def _live(self) -> _hgr.Executor:
        if self._executor is None or self._executor.closed:
            raise _hgr.FailedPreconditionError("the session was closed")
        return self._executor

    # ---- ONNX Runtime's introspection ----
    def get_inputs(self) -> List[NodeArg]:
        """The model's inputs (initializers excluded), in order."""
        return list(self._inputs)

    def get_outputs(self) -> List[NodeArg]:
        """The model's outputs, in order."""
        return list(self._outputs)

    def get_providers(self) -> List[str]:
        """The device specs the session runs on."""
        return list(self._providers)

    @property
    def load_report(self) -> Dict[str, int]:
        """What hgr's ONNX loader did (nodes folded, fused, ...)."""
        return dict(self._load_report)

    @property
    def executor(self) -> _hgr.Executor:
        """The hgr Executor underneath (binding kinds, output buffers)."""
        return self._live()

    # ---- runs ----
    def _start(self, output_names: Optional[Sequence[str]], input_feed: Dict[str, Any]):
        ex = self._live()
        if not isinstance(input_feed, dict):
            raise _hgr.InvalidArgumentError("input_feed must be a dict of input name -> array")
        if output_names is None:
            wanted = list(range(len(self._outputs)))
        else:
            wanted = []
            for name in output_names:
                if name not in self._output_index:
                    raise _hgr.NotFoundError(
                        f"output '{name}': the model's outputs are {', '.join(a.name for a in self._outputs)}"
                    )
                wanted.append(self._output_index[name])
        missing = [arg.name for arg in self._inputs if arg.name not in input_feed]
        if missing:
            raise _hgr.InvalidArgumentError(f"input_feed lacks input(s) {', '.join(missing)}")
        for name, value in input_feed.items():
            buffer = _as_buffer(value)
            if name in self._input_dims:
                shape = _fed_shape(buffer)
                if shape is not None:
                    check_input_shape(name, shape, *self._input_dims[name])
            ex.bind_input(name, buffer)
        # Every output gets a fresh array: an array handed out earlier is never written again.
        outputs = []
        for i, arg in enumerate(self._outputs):
            array = _hgr.empty(arg.dtype, arg.shape, self._alignment)
            ex.bind_output(i, array)
            outputs.append(array)
        return ex, [outputs[i] for i in wanted]

    def run(self, output_names: Optional[Sequence[str]], input_feed: Dict[str, Any], run_options: Any = None) -> List[np.ndarray]:
        """Runs the model: output_names (None: all) as a list of NumPy arrays,
        input_feed a dict of input name -> array (any C-contiguous buffer or
        __dlpack__ object of the input's dtype and shape). The GIL is released
        while hgr runs."""
        with self._run_lock:
            ex, outputs = self._start(output_names, input_feed)
            ex.run()
            ex.wait()
        return outputs

    def run_async(self, output_names: Optional[Sequence[str]], input_feed: Dict[str, Any], run_options: Any = None) -> Future:
        """Starts a run and returns a Future (result(), done()) without waiting;
        several may be in flight. The inputs must not change until it is done."""
        with self._run_lock:
            ex, outputs = self._start(output_names, input_feed)
            return Future(ex.run_async(), outputs)

    def output_buffer(self, index: Any):
        """The latest run's output index (or name) as an OpenCL buffer
        (hgr.DeviceBuffer: mem, context, device, bytes, ready; to_pyopencl())."""
        if isinstance(index, str):
            if index not in self._output_index:
                raise _hgr.NotFoundError(
                    f"output '{index}': the model's outputs are {', '.join(a.name for a in self._outputs)}")
            index = self._output_index[index]
        return self._live().output_buffer(index)

    # ---- profiling ----
    def profile(self) -> List[Dict[str, Any]]:
        """The last run, one dict per node in run order (node_id, name, op,
        device, commands, device_ns, host_enqueue_ns, start_ns, end_ns: times in
        ns, start and end from the run's first command), from hgr's profile JSON;
        pandas.DataFrame(session.profile()) makes it a table. Needs sess_options
        with enable_profiling, else hgr.FailedPreconditionError."""
        return json.loads(self._live().profile_json())["nodes"]

    def profile_summary(self) -> str:
        """The last run's profile as text tables (per device, op and node)."""
        return self._live().profile_summary()

    def write_trace(self, path: Any) -> str:
        """Writes the last run as a Chrome trace-event JSON file (open it in
        Perfetto, ui.perfetto.dev) and returns the path."""
        text = self._live().trace_json()
        with open(path, "w", encoding="utf-8") as out:
            out.write(text)
        return os.fspath(path)

    def end_profiling(self) -> str:
        """ONNX Runtime's name for writing the trace: to
        '<profile_file_prefix or hgr_profile>_<time>.json'; returns the path."""
        prefix = self._profile_prefix or "hgr_profile"
        return self.write_trace(f"{prefix}_{time.strftime('%Y-%m-%d_%H-%M-%S')}.json")

    # ---- lifetime ----
    def close(self) -> None:
        """Waits for runs in flight and frees the session's device memory."""
        if self._executor is not None:
            self._executor.close()

    def __enter__(self) -> "InferenceSession":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
